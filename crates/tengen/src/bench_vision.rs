//! `tengen bench vision`: the camera reader's stages timed on one frame, median of many.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use clap::Args;
use tengen_rules::BoardSize;
use tengen_vision::render::{random_stones, render, Scene, Variation};
use tengen_vision::track::{TrackStatus, Tracker};
use tengen_vision::{find_board, read_image, Frame, StoneReader};

/// Options of `tengen bench vision`.
#[derive(Args, Debug)]
pub struct VisionArgs {
    /// A photograph to measure on; without it a 1280x720 board is rendered (seeded).
    #[arg(long)]
    image: Option<PathBuf>,
    /// Board size of the rendered frame.
    #[arg(long, default_value_t = 19)]
    size: usize,
    /// Seed of the rendered frame.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Timed runs of each stage (after one warm-up run).
    #[arg(long, default_value_t = 15)]
    runs: usize,
}

/// Runs the bench and prints one line per stage.
pub fn run(a: VisionArgs) -> Result<()> {
    ensure!(a.runs >= 1, "--runs must be at least 1");
    let frame = match &a.image {
        Some(path) => read_image(path).with_context(|| format!("reading {}", path.display()))?,
        None => rendered(a.size, a.seed)?,
    };
    println!(
        "frame {}x{} ({}), {} on {} cores",
        frame.width(),
        frame.height(),
        a.image.as_ref().map_or_else(
            || format!("rendered {0}x{0}", a.size),
            |p| p.display().to_string()
        ),
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let board = match find_board(&frame) {
        Ok(b) => b,
        Err(why) => bail!("no board in the frame: {why}"),
    };
    let find = time(a.runs, || {
        let _ = find_board(&frame);
    });
    report("board finding", &find);
    // The live path: the board followed from where it was in the previous frame.
    let mut tracker = Tracker::new();
    tracker.update(&frame);
    let mut lost = 0;
    let track = time(a.runs, || {
        if tracker.update(&frame).status != TrackStatus::Tracking {
            lost += 1;
        }
    });
    report("tracking", &track);
    ensure!(lost == 0, "the tracker lost the board in {lost} runs");
    let mut reader = StoneReader::new().context("loading the stone classifier")?;
    let read = time(a.runs, || {
        reader.read(&frame, &board);
    });
    report(
        &format!("stone reading ({} points)", board.size.area()),
        &read,
    );
    Ok(())
}

/// A rendered frame with a middle-game density of stones.
fn rendered(n: usize, seed: u64) -> Result<Frame> {
    let size = BoardSize::square(n).with_context(|| format!("board size {n}"))?;
    let stones = random_stones(size, seed);
    let variation = Variation {
        max_tilt_degrees: 25.0,
        ..Variation::default()
    };
    Ok(render(&Scene::random(size, stones, seed, &variation)).frame)
}

/// Milliseconds of `runs` timed calls after one warm-up, sorted.
fn time(runs: usize, mut f: impl FnMut()) -> Vec<f64> {
    f();
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms
}

fn report(stage: &str, sorted_ms: &[f64]) {
    let at = |q: f64| sorted_ms[((sorted_ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{stage}: median {:.1} ms, p90 {:.1} ms, min {:.1} ms ({} runs)",
        at(0.5),
        at(0.9),
        sorted_ms[0],
        sorted_ms.len()
    );
}

/// The CPU's model name as Linux reports it, for the figures' context.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "an unknown CPU".into())
}
