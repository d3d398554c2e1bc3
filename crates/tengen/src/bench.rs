//! `tengen bench`: speed measurements of the engine's parts on the device.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::{Args, Subcommand};
use tengen_rules::playout::random_playout;
use tengen_rules::{Board, BoardSize, Player};

/// What to measure.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Uniformly random legal playouts (no filling of one's own eyes) from an empty board.
    Playouts(PlayoutArgs),
}

/// Options of `tengen bench playouts`.
#[derive(Args, Debug)]
pub struct PlayoutArgs {
    /// Board sizes to measure, e.g. `9,19`.
    #[arg(long, value_delimiter = ',', default_value = "9,19")]
    board: Vec<usize>,
    /// Seconds to measure each size for.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Threads playing at once (each on its own board).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs a bench subcommand.
pub fn run(cmd: BenchCommand) -> Result<()> {
    match cmd {
        BenchCommand::Playouts(a) => playouts(a),
    }
}

fn playouts(a: PlayoutArgs) -> Result<()> {
    ensure!(a.threads >= 1, "--threads must be at least 1");
    ensure!(
        a.seconds > 0.0 && a.seconds.is_finite(),
        "--seconds must be positive"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "random playouts, {} thread(s), {cores} core(s) available",
        a.threads
    );
    for n in a.board {
        let size = BoardSize::square(n).with_context(|| format!("--board {n}"))?;
        let budget = Duration::from_secs_f64(a.seconds);
        let start = Instant::now();
        let results: Vec<(u64, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..a.threads)
                .map(|t| {
                    s.spawn(move || {
                        let empty = Board::new(size);
                        let mut rng = fastrand::Rng::with_seed(a.seed.wrapping_add(t as u64));
                        let (mut count, mut moves) = (0u64, 0u64);
                        while start.elapsed() < budget {
                            for _ in 0..64 {
                                let mut b = empty.clone();
                                moves += random_playout(
                                    &mut b,
                                    Player::Black,
                                    &mut rng,
                                    3 * size.area(),
                                )
                                .moves as u64;
                                count += 1;
                            }
                        }
                        (count, moves)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or((0, 0)))
                .collect()
        });
        let secs = start.elapsed().as_secs_f64();
        let count: u64 = results.iter().map(|r| r.0).sum();
        let moves: u64 = results.iter().map(|r| r.1).sum();
        println!(
            "{n}x{n}: {:.0} playouts/s ({:.1} moves per playout, {:.0} ns per move per thread)",
            count as f64 / secs,
            moves as f64 / count.max(1) as f64,
            secs * 1e9 * a.threads as f64 / moves.max(1) as f64
        );
    }
    Ok(())
}
