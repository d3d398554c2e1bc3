//! `tengen bench search`: visits and network evaluations per second of the full search,
//! per backend and thread count, on a fixed set of game positions; also the backend's raw
//! rate at the same batch size, so the search's own overhead shows.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tengen_nn::backend::{Backend, BatchInput, BatchOutput};
use tengen_nn::eval::EvaluatorConfig;
use tengen_nn::features::{InputParams, Symmetry};
use tengen_rules::sgf;
use tengen_rules::{BoardSize, Game, Rules};
use tengen_search::filter::index_move;
use tengen_search::{EvalRequest, Evaluator, Limits, Search};

use crate::backend::{BackendGraph, BackendKind, OrtArgs};
use crate::evaluators::NetworkSpec;
use crate::inputs::encode_inputs;
use crate::network::{self, ModelSource};
use crate::setup::{EngineSpec, Evaluation};

/// Options of `tengen bench search`.
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The network: a KataGo `.bin.gz`, an `.onnx`/`.onnx.gz`, or `bundled` (the default
    /// when the build carries one).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Board size.
    #[arg(long, default_value_t = 19)]
    board: usize,
    /// Visits per position.
    #[arg(long, default_value_t = 800)]
    visits: u64,
    /// Search threads, e.g. `1,2`; the backend gets as many cores and batches up to as many rows.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    threads: Vec<usize>,
    /// Backends: `tract`, `native`, and `ort` when built with the `ort` feature.
    #[arg(long, value_delimiter = ',', default_value = "tract")]
    backend: Vec<BackendKind>,
    /// Positions to search, taken along a game.
    #[arg(long, default_value_t = 6)]
    positions: usize,
    /// Take the positions from these SGF games instead of a game the network plays itself.
    #[arg(long)]
    sgf: Vec<PathBuf>,
    #[command(flatten)]
    ort: OrtArgs,
}

/// Turn at which the `i`-th of `n` positions is taken from a game of `len` turns.
fn sample_turn(i: usize, n: usize, len: usize) -> usize {
    // Spread from the early opening to the late middle game.
    let first = len / 10;
    let last = len * 8 / 10;
    first + (last - first) * i / n.saturating_sub(1).max(1)
}

/// Positions from SGF files: `n` spread along each game.
fn sgf_positions(files: &[PathBuf], n: usize, size: BoardSize) -> Result<Vec<Game>> {
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let rec = sgf::load(&text).with_context(|| format!("parsing {}", f.display()))?;
        let game = rec.game;
        ensure!(
            game.board().size() == size,
            "{} is a {} game, not {size}",
            f.display(),
            game.board().size()
        );
        let turns = game.turns().len();
        for i in 0..n {
            let mut g = Game::from_position(
                game.initial_board().clone(),
                game.initial_player(),
                *game.rules(),
                *game.options(),
            );
            for t in &game.turns()[..sample_turn(i, n, turns)] {
                g.play_tolerant(t.player, t.mv)?;
            }
            out.push(g);
        }
    }
    Ok(out)
}

/// Positions from one game the network plays against itself, each move drawn from its
/// policy's best few at a low temperature with a fixed seed: game-like and reproducible.
fn net_positions(ev: &dyn Evaluator, n: usize, size: BoardSize) -> Result<Vec<Game>> {
    let len = size.area() * 2 / 3;
    let wanted: Vec<usize> = (0..n).map(|i| sample_turn(i, n, len)).collect();
    let mut rng = fastrand::Rng::with_seed(2026);
    let mut g = Game::new(size, Rules::chinese());
    let req = EvalRequest {
        symmetry: Symmetry::IDENTITY,
        policy: Default::default(),
        inputs: InputParams::default(),
        ownership: false,
    };
    let mut out = Vec::new();
    for turn in 0..=len {
        if wanted.contains(&turn) {
            out.push(g.clone());
        }
        if g.is_over() {
            break;
        }
        let o = ev.evaluate(&g, &req)?;
        let mut moves: Vec<(usize, f32)> = o
            .policy
            .iter()
            .copied()
            .enumerate()
            .filter(|p| p.1 > 0.0)
            .collect();
        moves.sort_by(|a, b| b.1.total_cmp(&a.1));
        moves.truncate(4);
        let Some(&(mut pick, _)) = moves.first() else {
            break;
        };
        let weights: Vec<f32> = moves.iter().map(|m| m.1 * m.1).collect();
        let mut r = rng.f32() * weights.iter().sum::<f32>();
        for (m, w) in moves.iter().zip(&weights) {
            if r < *w {
                pick = m.0;
                break;
            }
            r -= w;
        }
        g.play(index_move(size, pick))?;
    }
    ensure!(
        !out.is_empty(),
        "the benchmark game ended before any position was taken"
    );
    Ok(out)
}

/// One configuration's figures.
#[derive(Debug)]
struct Row {
    kind: BackendKind,
    threads: usize,
    visits_per_s: f64,
    evals_per_s: f64,
    /// The backend's own rate at batch = threads.
    raw: f64,
    /// Share of the search's time the backend was running a batch.
    busy: f64,
    nodes: usize,
    tree_mb: f64,
    rss_mb: f64,
    evals_per_visit: f64,
    /// Share of evaluation requests answered from the NN cache.
    hit_rate: f64,
    /// The backend's own name for itself.
    backend: String,
}

/// Resident memory of this process in MB (Linux), if known.
fn rss_mb() -> Option<f64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: f64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096.0 / 1e6)
}

/// The backend's own rate at batch `rows` on these positions' inputs.
fn raw_rate(backend: &dyn Backend, games: &[Game], rows: usize, seconds: f64) -> Result<f64> {
    let shape = *backend.shape();
    let games: Vec<Game> = games.iter().cycle().take(rows).cloned().collect();
    let (spatial, global, mask) = encode_inputs(&games, shape.x_len, shape.y_len)?;
    let input = BatchInput {
        rows,
        spatial: &spatial,
        global: &global,
        meta: None,
        mask: &mask,
    };
    let mut out = BatchOutput::new();
    backend.evaluate(&input, &mut out)?;
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed().as_secs_f64() < seconds {
        backend.evaluate(&input, &mut out)?;
        n += rows;
    }
    Ok(n as f64 / start.elapsed().as_secs_f64())
}

/// Runs `tengen bench search`.
pub fn run(a: SearchArgs) -> Result<()> {
    ensure!(a.visits >= 1, "--visits must be at least 1");
    ensure!(a.positions >= 1, "--positions must be at least 1");
    ensure!(
        a.threads.iter().all(|&t| t >= 1),
        "thread counts must be at least 1"
    );
    let size = BoardSize::square(a.board).with_context(|| format!("--board {}", a.board))?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let source = ModelSource::choose(a.model.as_deref(), false)?
        .context("this build has no bundled network: name one with --model")?;
    let model = network::load_for_board(&source, size)?;

    let mut games: Option<Vec<Game>> = if a.sgf.is_empty() {
        None
    } else {
        Some(sgf_positions(&a.sgf, a.positions, size)?)
    };
    let configs: Vec<(BackendKind, usize)> = a
        .backend
        .iter()
        .flat_map(|&b| a.threads.iter().map(move |&t| (b, t)))
        .collect();
    let bar = ProgressBar::new((configs.len() * a.positions.max(1)) as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // Each backend's graph once (int8 is calibrated here, not once per thread count).
    let graphs = a
        .backend
        .iter()
        .map(|&kind| BackendGraph::new(kind, &source, &model, &a.ort))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    for &(kind, threads) in &configs {
        let graph = graphs
            .iter()
            .find(|g| g.kind() == kind)
            .context("a graph for every backend")?;
        // The engine set-up over this backend, with a short batching wait: the search's
        // own threads are all the evaluator serves.
        let network = NetworkSpec {
            model: source.clone(),
            backend: kind,
            ort: a.ort.clone(),
            cache: None,
        };
        let mut spec = EngineSpec::new(Evaluation::Network(network)).with_threads(threads);
        spec.batching = EvaluatorConfig {
            max_wait: Duration::from_millis(1),
            server_threads: 1,
            ..spec.batching
        };
        let (nn, backend) = spec.nn_evaluator(graph)?;
        let ev: Arc<dyn Evaluator> = nn.clone();
        let positions = match &games {
            Some(g) => g.clone(),
            None => {
                bar.set_message("playing the benchmark game");
                let g = net_positions(ev.as_ref(), a.positions, size)?;
                games = Some(g.clone());
                g
            }
        };
        let params = spec.search_params();
        let (mut nodes, mut tree_mb, mut rss) = (0usize, 0f64, 0f64);
        let (mut visits, mut evals, mut hits, mut time, mut busy) = (0u64, 0u64, 0u64, 0f64, 0f64);
        for (i, g) in positions.iter().enumerate() {
            bar.set_message(format!("{kind} {threads} thread(s), position {}", i + 1));
            ev.clear_cache();
            let mut s = Search::new(ev.clone(), params.clone());
            s.set_position(g);
            let before = nn.stats();
            let start = Instant::now();
            let stats = s.run(Limits::visits(a.visits))?;
            time += start.elapsed().as_secs_f64();
            let after = nn.stats();
            visits += stats.playouts;
            evals += after.evaluated - before.evaluated;
            hits += after.cache_hits - before.cache_hits;
            busy += (after.backend_time - before.backend_time).as_secs_f64();
            nodes = nodes.max(stats.nodes);
            tree_mb = f64::max(tree_mb, s.tree_bytes() as f64 / 1e6);
            rss = rss.max(rss_mb().unwrap_or(0.0));
            bar.inc(1);
        }
        bar.set_message(format!("{kind} {threads} thread(s), raw backend rate"));
        rows.push(Row {
            kind,
            threads,
            visits_per_s: visits as f64 / time,
            evals_per_s: evals as f64 / time,
            raw: raw_rate(backend.as_ref(), &positions, threads, 3.0)?,
            busy: busy / time,
            nodes,
            tree_mb,
            rss_mb: rss,
            evals_per_visit: evals as f64 / visits.max(1) as f64,
            hit_rate: hits as f64 / (hits + evals).max(1) as f64,
            backend: backend.name().to_string(),
        });
    }
    bar.finish_and_clear();
    println!(
        "search on {} ({size}, {} positions, {} visits each) on {cores} core(s)",
        source, a.positions, a.visits
    );
    println!(
        "{:<6} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>7} {:>11} {:>9}",
        "backend",
        "threads",
        "visits/s",
        "evals/s",
        "raw/s",
        "overhead",
        "nodes",
        "tree MB",
        "RSS MB",
        "evals/visit",
        "cache hit"
    );
    for r in &rows {
        println!(
            "{:<6} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>8.1}% {:>8} {:>8.1} {:>7.0} {:>11.3} {:>8.1}%",
            r.kind,
            r.threads,
            r.visits_per_s,
            r.evals_per_s,
            r.raw,
            100.0 * (1.0 - r.busy),
            r.nodes,
            r.tree_mb,
            r.rss_mb,
            r.evals_per_visit,
            100.0 * r.hit_rate
        );
    }
    println!(
        "raw/s: the backend alone at batch = threads, measured after the searches; overhead: \
         share of the search's time the backend was not running a batch; evals/visit: network \
         evaluations per visit; cache hit: share of the search's requests the NN cache answered \
         (cleared before each position)"
    );
    let mut names: Vec<&str> = rows.iter().map(|r| r.backend.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    println!("backends: {}", names.join(", "));
    Ok(())
}
