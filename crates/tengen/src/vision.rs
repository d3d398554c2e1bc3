//! `tengen vision`: the camera board reader from the command line.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tengen_vision::source::v4l::FormatChoice;
use tengen_vision::track::{default_reader, SettleConfig, Settled, Stone, Watcher};
use tengen_vision::{
    find_board, overlay, read_image, CameraSettings, FoundBoard, Frame, FrameLimits, SourceSpec,
};

/// `tengen vision` subcommands.
#[derive(Subcommand, Debug)]
pub enum VisionCommand {
    /// Find the board in an image (JPEG or PNG): print its size, corners and score.
    Find(FindArgs),
    /// Read the board from an image, a folder of frames, an MJPEG URL or a V4L2 camera,
    /// printing each board as it settles.
    Read(ReadArgs),
}

/// Options of `tengen vision find`.
#[derive(Args, Debug)]
pub struct FindArgs {
    /// The image file.
    image: PathBuf,
    /// Also write the image with the found grid drawn over it, as PNG.
    #[arg(long, value_name = "OUT.png")]
    overlay: Option<PathBuf>,
}

/// Options of `tengen vision read`.
#[derive(Args, Debug)]
pub struct ReadArgs {
    /// IMAGE, DIR (frames in natural order), http://… (MJPEG stream), /dev/videoN, csi or
    /// gst:PIPELINE (the last two with the gstreamer feature).
    source: String,
    /// Write the last frame with the grid and the settled stones drawn over it, as PNG.
    #[arg(long, value_name = "OUT.png")]
    overlay: Option<PathBuf>,
    /// How long a point must be still before a change is reported, milliseconds
    /// (a single image is read at once).
    #[arg(long, default_value_t = tengen_vision::DEFAULT_SETTLE_MS)]
    settle_ms: u64,
    /// Frames per second a folder's frames stand for.
    #[arg(long, default_value_t = 10.0)]
    folder_fps: f64,
    /// Stop after this many frames (live sources run until interrupted otherwise).
    #[arg(long)]
    frames: Option<u64>,
    /// Camera width and height asked for.
    #[arg(long, default_value_t = 1280)]
    width: u32,
    /// Camera height asked for.
    #[arg(long, default_value_t = 720)]
    height: u32,
    /// Camera frame rate asked for.
    #[arg(long, default_value_t = 15)]
    fps: u32,
    /// Camera pixel format: auto, mjpeg or yuyv.
    #[arg(long, default_value = "auto")]
    format: String,
    /// A live source silent this long is reported stalled, milliseconds.
    #[arg(long, default_value_t = 5000)]
    stall_ms: u64,
    /// The largest encoded frame read (a file, an MJPEG part), in bytes.
    #[arg(long, default_value_t = FrameLimits::default().bytes)]
    max_frame_bytes: u64,
    /// The most pixels a frame may have; checked before it is decoded.
    #[arg(long, default_value_t = FrameLimits::default().pixels)]
    max_frame_pixels: u64,
}

/// Runs a `tengen vision` subcommand.
pub fn run(cmd: VisionCommand) -> Result<()> {
    match cmd {
        VisionCommand::Find(a) => find(a),
        VisionCommand::Read(a) => read(a),
    }
}

fn find(args: FindArgs) -> Result<()> {
    let frame = read_image(&args.image)?;
    let found = find_board(&frame);
    match &found {
        Ok(b) => {
            let n = b.size.width();
            println!("board {n}x{n} score {:.3}", b.score);
            for (name, [x, y]) in ["top-left", "top-right", "bottom-right", "bottom-left"]
                .iter()
                .zip(b.corners)
            {
                println!("{name} {x:.1} {y:.1}");
            }
        }
        Err(why) => println!("no board: {why}"),
    }
    if let Some(out) = args.overlay {
        let mut image = frame.into_rgb();
        if let Ok(b) = &found {
            overlay::draw_board(&mut image, b);
        }
        write_png(&image, &out)?;
    }
    Ok(())
}

fn write_png(image: &Frame, out: &PathBuf) -> Result<()> {
    let png = image.to_png().context("encoding the overlay")?;
    std::fs::write(out, png).with_context(|| format!("writing {}", out.display()))
}

/// Reads boards as they settle. Bad input of any kind (a black frame, no board, a broken
/// file, a stalled stream, an unplugged camera) is a status line and an unseen board.
fn read(a: ReadArgs) -> Result<()> {
    let spec = SourceSpec::parse(&a.source)?;
    let format: FormatChoice = a.format.parse().map_err(anyhow::Error::msg)?;
    let camera = CameraSettings {
        width: a.width,
        height: a.height,
        fps: a.fps,
        format,
        frame_limits: FrameLimits {
            bytes: a.max_frame_bytes,
            pixels: a.max_frame_pixels,
        },
    };
    let single = matches!(spec, SourceSpec::Image(_));
    let settle = if single {
        Duration::ZERO
    } else {
        Duration::from_millis(a.settle_ms)
    };
    let live = spec.is_live();
    let step = Duration::from_secs_f64(1.0 / a.folder_fps.max(0.01));
    let mut source = spec.open(&camera, Duration::from_millis(a.stall_ms.max(1)))?;
    let mut watcher = Watcher::new(
        default_reader(),
        SettleConfig {
            settle,
            ..SettleConfig::default()
        },
    );
    let start = Instant::now();
    let mut last_line = String::new();
    let mut last_frame: Option<(Frame, Option<FoundBoard>)> = None;
    let mut count = 0u64;
    loop {
        if a.frames.is_some_and(|n| count >= n) {
            break;
        }
        let t = if live {
            start.elapsed()
        } else {
            step * count as u32
        };
        count += 1;
        let update = match source.next_frame() {
            Ok(Some(frame)) => {
                let u = watcher.frame(&frame, t);
                last_frame = Some((frame, u.board.clone()));
                u
            }
            Ok(None) => break,
            Err(e) => watcher.no_frame(t, e.status()),
        };
        let mut text = String::new();
        let line = update.status.line();
        if line != last_line {
            text = format!("status: {line}\n");
            last_line = line;
        }
        if let Some(s) = &update.settled {
            text.push_str(&board_text(count, t, s));
        }
        // A closed pipe (`| head`) ends the reading quietly.
        if !text.is_empty() && std::io::stdout().write_all(text.as_bytes()).is_err() {
            break;
        }
    }
    if let (Some(out), Some((frame, board))) = (&a.overlay, last_frame) {
        let mut image = frame.into_rgb();
        if let Some(b) = &board {
            overlay::draw_board(&mut image, b);
            if let Some(s) = watcher.current() {
                draw_stones(&mut image, b, s);
            }
        }
        write_png(&image, out)?;
    }
    Ok(())
}

fn board_text(frame: u64, t: Duration, s: &Settled) -> String {
    let n = s.size.width();
    format!(
        "board {n}x{n} at frame {frame} ({:.2} s), {} unseen\n{}",
        t.as_secs_f64(),
        s.unseen(),
        s.to_text()
    )
}

/// Marks each settled stone: a red square on black, a blue one on white.
fn draw_stones(image: &mut Frame, b: &FoundBoard, s: &Settled) {
    let w = s.size.width();
    let r = 0.25 * b.mean_spacing();
    for (i, p) in s.points.iter().enumerate() {
        let rgb = match p.stone {
            Some(Stone::Black) => [255, 0, 0],
            Some(Stone::White) => [0, 90, 255],
            _ => continue,
        };
        let Some([x, y]) = b.point((i % w) as f64, (i / w) as f64) else {
            continue;
        };
        let corners = [
            [x - r, y - r],
            [x + r, y - r],
            [x + r, y + r],
            [x - r, y + r],
        ];
        for k in 0..4 {
            overlay::draw_line(image, corners[k], corners[(k + 1) % 4], rgb);
        }
    }
}
