//! Writes rendered frames and their labels:
//! `cargo run -p tengen-vision --example render -- --size 19 --seed 1 --count 10 OUTDIR`.
//! Each frame is `NNNN.jpg` (the renderer's own JPEG bytes) or `NNNN.png` when the scene is
//! lossless (`--png` writes a PNG as well), with `NNNN.json` beside it: the stones, the corners, the grid homography and the occluded points.

use std::path::{Path, PathBuf};

use tengen_rules::{BoardSize, Player};
use tengen_vision::render::video::{Video, VideoOptions};
use tengen_vision::render::{render, Scene, Variation};

fn main() {
    if let Err(e) = run() {
        eprintln!("render: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut size = 19;
    let mut seed = 1u64;
    let mut count = 10usize;
    let mut hands = 0.0;
    let mut png = false;
    let mut sgf: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--size" => {
                size = value("--size")?
                    .parse()
                    .map_err(|e| format!("--size: {e}"))?
            }
            "--seed" => {
                seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--count" => {
                count = value("--count")?
                    .parse()
                    .map_err(|e| format!("--count: {e}"))?
            }
            "--hands" => {
                hands = value("--hands")?
                    .parse()
                    .map_err(|e| format!("--hands: {e}"))?
            }
            "--png" => png = true,
            "--sgf" => sgf = Some(PathBuf::from(value("--sgf")?)),
            _ if a.starts_with("--") => return Err(format!("unknown option {a}")),
            _ => out = Some(PathBuf::from(a)),
        }
    }
    let out =
        out.ok_or("usage: render [--size N] [--seed S] [--count C] [--hands P] [--png] [--sgf GAME.sgf] OUTDIR")?;
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    if let Some(path) = sgf {
        return video(&path, seed, count, png, &out);
    }
    let board = BoardSize::square(size).map_err(|e| e.to_string())?;
    let variation = Variation {
        hand_probability: hands,
        ..Variation::default()
    };
    for k in 0..count {
        let frame_seed = seed.wrapping_mul(1_000_003).wrapping_add(k as u64);
        let stones = random_position(board.area(), frame_seed);
        let scene = Scene::random(board, stones, frame_seed, &variation);
        let started = std::time::Instant::now();
        let r = render(&scene);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let (name, bytes) = match &r.jpeg {
            Some(bytes) => (format!("{k:04}.jpg"), bytes.clone()),
            None => (
                format!("{k:04}.png"),
                r.frame.to_png().map_err(|e| e.to_string())?,
            ),
        };
        if png {
            let bytes = r.frame.to_png().map_err(|e| e.to_string())?;
            std::fs::write(out.join(format!("{k:04}.png")), bytes).map_err(|e| e.to_string())?;
        }
        std::fs::write(out.join(&name), bytes).map_err(|e| e.to_string())?;
        let occluded: Vec<usize> = (0..r.occluded.len()).filter(|&i| r.occluded[i]).collect();
        let label = serde_json::json!({
            "image": name,
            "size": size,
            "seed": frame_seed,
            "stones": rows(&scene.stones, size),
            "corners": r.corners,
            "grid": r.grid.0,
            "occluded": occluded,
            "tilt_degrees": scene.camera.tilt_degrees,
            "k1": scene.camera.k1,
        });
        let text = serde_json::to_string_pretty(&label).map_err(|e| e.to_string())?;
        std::fs::write(out.join(format!("{k:04}.json")), text).map_err(|e| e.to_string())?;
        println!("{name}: {ms:.0} ms");
    }
    Ok(())
}

/// Writes the first `count` frames of a game video (0 for all) with their labels.
fn video(path: &Path, seed: u64, count: usize, png: bool, out: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let video =
        Video::from_sgf(&text, seed, &VideoOptions::default()).map_err(|e| e.to_string())?;
    let size = video.scene().size.width();
    let total = if count == 0 {
        video.len()
    } else {
        count.min(video.len())
    };
    for f in video.take(total) {
        let k = f.index;
        let r = &f.rendered;
        let name = format!("{k:04}.jpg");
        if let Some(bytes) = &r.jpeg {
            std::fs::write(out.join(&name), bytes).map_err(|e| e.to_string())?;
        }
        if png || r.jpeg.is_none() {
            let bytes = r.frame.to_png().map_err(|e| e.to_string())?;
            std::fs::write(out.join(format!("{k:04}.png")), bytes).map_err(|e| e.to_string())?;
        }
        let occluded: Vec<usize> = (0..r.occluded.len()).filter(|&i| r.occluded[i]).collect();
        let label = serde_json::json!({
            "image": name,
            "size": size,
            "stones": rows(&f.stones, size),
            "moves_done": f.moves_done,
            "hand": f.hand,
            "knocked": f.knocked.map(|k| [k.from, k.to]),
            "corners": r.corners,
            "grid": r.grid.0,
            "occluded": occluded,
        });
        let text = serde_json::to_string_pretty(&label).map_err(|e| e.to_string())?;
        std::fs::write(out.join(format!("{k:04}.json")), text).map_err(|e| e.to_string())?;
    }
    println!("{total} frames of {}", video_len(&text, seed)?);
    Ok(())
}

fn video_len(text: &str, seed: u64) -> Result<usize, String> {
    Video::from_sgf(text, seed, &VideoOptions::default())
        .map(|v| v.len())
        .map_err(|e| e.to_string())
}

/// Board rows as text, `X` Black, `O` White, `.` empty.
fn rows(stones: &[Option<Player>], size: usize) -> Vec<String> {
    stones
        .chunks(size.max(1))
        .map(|row| {
            row.iter()
                .map(|s| match s {
                    Some(Player::Black) => 'X',
                    Some(Player::White) => 'O',
                    None => '.',
                })
                .collect()
        })
        .collect()
}

/// A plausible mix: about 40% of points with stones, Black and White alike.
fn random_position(area: usize, seed: u64) -> Vec<Option<Player>> {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x5EED);
    let fill = 0.1 + 0.5 * rng.f64();
    (0..area)
        .map(|_| {
            if rng.f64() < fill {
                Some(if rng.bool() {
                    Player::Black
                } else {
                    Player::White
                })
            } else {
                None
            }
        })
        .collect()
}
