//! `tengen bench`: speed measurements of the engine's parts on the device.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use tengen_nn::backend::native::{peak_multiply_adds, Gemm};
use tengen_nn::backend::{Backend, BatchInput, BatchOutput};
use tengen_nn::features::HumanProfile;
use tengen_rules::playout::PlayoutPolicy;
use tengen_rules::{Board, BoardSize, Player};

use crate::backend::{make_backend, BackendGraph, BackendKind, OrtArgs};
use crate::inputs::bench_inputs;
use crate::network;

/// What to measure.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Uniformly random legal playouts (no filling of one's own eyes) from an empty board.
    Playouts(PlayoutArgs),
    /// Network evaluations per second, per backend, thread count and batch size.
    Nn(NnArgs),
    /// Search visits and network evaluations per second, per backend and thread count.
    Search(crate::bench_search::SearchArgs),
    /// The camera reader's stages (board finding, tracking, stone reading) on one 1280x720 frame.
    Vision(crate::bench_vision::VisionArgs),
}

/// Options of `tengen bench nn`.
#[derive(Args, Debug)]
pub struct NnArgs {
    /// The network: a KataGo `.bin.gz` (a graph is built per board size) or an `.onnx`/`.onnx.gz`.
    #[arg(long)]
    model: PathBuf,
    /// Board sizes, e.g. `19,9`.
    #[arg(long, value_delimiter = ',', default_value = "19")]
    board: Vec<usize>,
    /// Batch sizes, e.g. `1,8,16`.
    #[arg(long, value_delimiter = ',', default_value = "1,8,16")]
    batch: Vec<usize>,
    /// Cores each backend may use, e.g. `1,2`.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    threads: Vec<usize>,
    /// Backends: `tract`, `native`, and `ort` when built with the `ort` feature.
    #[arg(long, value_delimiter = ',', default_value = "tract")]
    backend: Vec<BackendKind>,
    /// Seconds to measure each configuration for, in all rounds together.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Rounds over all configurations; the median round is reported. Interleaving the
    /// configurations keeps a shared or throttled machine's drift out of the comparison.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[command(flatten)]
    ort: OrtArgs,
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
        BenchCommand::Nn(a) => nn(a),
        BenchCommand::Search(a) => crate::bench_search::run(a),
        BenchCommand::Vision(a) => crate::bench_vision::run(a),
    }
}

/// One measured configuration of `tengen bench nn`.
struct NnCase {
    label: String,
    backend: Arc<dyn Backend>,
    batch: usize,
    threads: usize,
    /// Direct multiply-adds of one evaluation, for a KataGo model file.
    multiply_adds: Option<u64>,
    /// Index into the per-board inputs.
    board: usize,
    rates: Vec<f64>,
}

fn nn(a: NnArgs) -> Result<()> {
    ensure!(
        a.seconds > 0.0 && a.seconds.is_finite(),
        "--seconds must be positive"
    );
    ensure!(a.rounds >= 1, "--rounds must be at least 1");
    ensure!(
        a.batch.iter().all(|&b| b >= 1),
        "batch sizes must be at least 1"
    );
    ensure!(
        a.threads.iter().all(|&t| t >= 1),
        "thread counts must be at least 1"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max_batch = a.batch.iter().copied().max().unwrap_or(1);
    let mut inputs = Vec::new();
    let mut cases = Vec::new();
    for &n in &a.board {
        let size = BoardSize::square(n).with_context(|| format!("--board {n}"))?;
        let source = network::ModelSource::File(a.model.clone());
        let model = network::load_for_board(&source, size)?;
        let multiply_adds = source.desc().ok().map(|d| d.multiply_adds(size.area()));
        let (spatial, global, mask) = bench_inputs(size, &model, max_batch)?;
        // A human-SL net reads its metadata: a 5k player's, as KataGo's rank_5k profile.
        let meta = if model.metadata.has_meta_input() {
            let row = "rank_5k"
                .parse::<HumanProfile>()?
                .row(Player::Black, size.area());
            row.repeat(max_batch)
        } else {
            Vec::new()
        };
        inputs.push((spatial, global, mask, meta));
        for kind in &a.backend {
            let graph = BackendGraph::new(*kind, &source, &model, &a.ort)?;
            for &threads in &a.threads {
                let backend = make_backend(&graph, threads, max_batch, &a.ort)?;
                for &batch in &a.batch {
                    cases.push(NnCase {
                        label: format!(
                            "{:<7} {:<6} {:>7} {:>5}",
                            format!("{n}x{n}"),
                            kind,
                            threads,
                            batch
                        ),
                        backend: backend.clone(),
                        batch,
                        threads,
                        multiply_adds,
                        board: inputs.len() - 1,
                        rates: Vec::new(),
                    });
                }
            }
        }
    }
    let bar = ProgressBar::new((cases.len() * a.rounds) as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let budget = Duration::from_secs_f64(a.seconds / a.rounds as f64);
    let mut out = BatchOutput::new();
    for round in 0..a.rounds {
        for case in &mut cases {
            bar.set_message(format!("round {} {}", round + 1, case.label.trim()));
            let (spatial, global, mask, meta) = &inputs[case.board];
            let shape = *case.backend.shape();
            let input = BatchInput {
                rows: case.batch,
                spatial: &spatial[..case.batch * shape.spatial_len()],
                global: &global[..case.batch * shape.global_channels],
                meta: (shape.meta_channels > 0).then(|| &meta[..case.batch * shape.meta_channels]),
                mask: &mask[..case.batch * shape.mask_len()],
            };
            if round == 0 {
                case.backend.evaluate(&input, &mut out)?; // warm-up: builds the plan
            }
            let start = Instant::now();
            let mut evals = 0usize;
            while start.elapsed() < budget {
                case.backend.evaluate(&input, &mut out)?;
                evals += case.batch;
            }
            case.rates
                .push(evals as f64 / start.elapsed().as_secs_f64());
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    println!(
        "network {} on {cores} core(s), median of {} rounds",
        a.model.display(),
        a.rounds
    );
    // The core's peak rates, for each path's share of them (direct multiply-adds: Winograd
    // and the like do fewer, so a share can pass 100%).
    let peak_f32 = peak_multiply_adds(Gemm::F32);
    let peak_int16 = peak_multiply_adds(Gemm::Int16);
    println!(
        "{:<7} {:<6} {:>7} {:>5} {:>10} {:>8}",
        "board", "backend", "threads", "batch", "evals/s", "of peak"
    );
    for case in &mut cases {
        case.rates.sort_by(f64::total_cmp);
        let rate = case.rates[case.rates.len() / 2];
        let int16 = case.backend.name().contains("int16");
        let peak = if int16 { peak_int16 } else { peak_f32 };
        let share = match (case.multiply_adds, peak) {
            (Some(macs), Some(peak)) => format!(
                "{:>7.0}%",
                100.0 * rate * macs as f64 / (peak * case.threads as f64)
            ),
            _ => format!("{:>8}", "-"),
        };
        println!("{} {:>10.1} {share}", case.label, rate);
    }
    if let (Some(f), Some(i)) = (peak_f32, peak_int16) {
        println!(
            "peak of one core: {:.1} G f32 multiply-adds/s, {:.1} G int16 (direct multiply-adds of \
             the net at the rate measured, against the peak of the path's arithmetic)",
            f / 1e9,
            i / 1e9
        );
    }
    // Which device each backend settled on (ONNX Runtime may have fallen back to the CPU).
    let mut names: Vec<&str> = cases.iter().map(|c| c.backend.name()).collect();
    names.sort_unstable();
    names.dedup();
    println!("backends: {}", names.join(", "));
    Ok(())
}

fn playouts(a: PlayoutArgs) -> Result<()> {
    ensure!(a.threads >= 1, "--threads must be at least 1");
    ensure!(
        a.seconds > 0.0 && a.seconds.is_finite(),
        "--seconds must be positive"
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "playouts, {} thread(s), {cores} core(s) available",
        a.threads
    );
    for n in a.board {
        let size = BoardSize::square(n).with_context(|| format!("--board {n}"))?;
        for (name, policy) in [
            ("random", PlayoutPolicy::Random),
            ("guided", PlayoutPolicy::Guided),
        ] {
            let budget = Duration::from_secs_f64(a.seconds);
            let start = Instant::now();
            let results: Vec<(u64, u64)> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..a.threads)
                    .map(|t| {
                        s.spawn(move || {
                            let empty = Board::new(size);
                            let mut rng = fastrand::Rng::with_seed(a.seed.wrapping_add(t as u64));
                            let (mut count, mut moves) = (0u64, 0u64);
                            let mut b = empty.clone();
                            while start.elapsed() < budget {
                                for _ in 0..64 {
                                    b.clone_from(&empty);
                                    let r = policy.play(
                                        &mut b,
                                        Player::Black,
                                        None,
                                        &mut rng,
                                        3 * size.area(),
                                    );
                                    moves += r.moves as u64;
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
                "{n}x{n} {name}: {:.0} playouts/s ({:.1} moves per playout, {:.0} ns per move per thread)",
                count as f64 / secs,
                moves as f64 / count.max(1) as f64,
                secs * 1e9 * a.threads as f64 / moves.max(1) as f64
            );
        }
    }
    Ok(())
}
