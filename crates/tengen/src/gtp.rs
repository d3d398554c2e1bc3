//! `tengen gtp`: the GTP engine on standard input and output.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use tengen_nn::eval::{Evaluator as NnEvaluator, EvaluatorConfig};
use tengen_protocol::gtp::{parse_line, Engine, EngineConfig, LineError, Reply, MAX_LINE_BYTES};
use tengen_rules::{BoardSize, Rules};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

use crate::bench::{make_backend, OrtArgs};
use crate::network;

/// Options of `tengen gtp`.
#[derive(Args, Debug)]
pub struct GtpArgs {
    /// The network (`.bin.gz` or `.onnx`). Without one, a uniform-policy evaluator with an
    /// area-count value stands in (weak: the classical engine will replace it).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Network backend: `tract`, or `ort` when built with the `ort` feature.
    #[arg(long, default_value = "tract")]
    backend: String,
    /// Search threads (the backend gets as many cores).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Visits per move when no clock is set.
    #[arg(long, default_value_t = 800)]
    visits: u64,
    /// Rules of a new game (any name `tengen rules` accepts).
    #[arg(long, default_value = "chinese")]
    rules: String,
    /// Never resign.
    #[arg(long)]
    no_resign: bool,
    #[command(flatten)]
    ort: OrtArgs,
}

/// Reads one line of at most [`MAX_LINE_BYTES`], consuming the rest of an over-long line
/// without storing it. `None` at end of input; invalid UTF-8 is replaced, not refused.
fn read_bounded(input: &mut impl BufRead) -> std::io::Result<Option<Result<String, LineError>>> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            if buf.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE_BYTES + 2 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(LineError::TooLong)));
    }
    let text = String::from_utf8_lossy(&buf);
    Ok(Some(Ok(text.trim_end_matches(['\n', '\r']).to_string())))
}

/// Runs `tengen gtp`.
pub fn run(a: GtpArgs) -> Result<()> {
    let rules = Rules::parse(&a.rules).with_context(|| format!("--rules {}", a.rules))?;
    let threads = a.threads.max(1);
    let source: tengen_protocol::gtp::engine::EvaluatorSource = match a.model.clone() {
        None => {
            log::warn!("no --model: playing with a uniform-policy evaluator (weak)");
            Box::new(|_size: BoardSize| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>))
        }
        Some(path) => {
            let backend = a.backend.clone();
            let ort = a.ort.clone();
            Box::new(move |size: BoardSize| {
                let make = || -> Result<Arc<dyn Evaluator>> {
                    let model = network::load_for_board(&path, size)?;
                    let b = make_backend(&backend, &model, threads, threads, &ort)?;
                    log::info!("network for {size}: {}", b.name());
                    let config = EvaluatorConfig {
                        max_batch: threads,
                        ..EvaluatorConfig::default()
                    };
                    Ok(Arc::new(NnEvaluator::new(b, model.metadata, config)?))
                };
                make().map_err(|e| format!("cannot load the network for {size}: {e:#}"))
            })
        }
    };
    let config = EngineConfig {
        params: SearchParams {
            threads,
            ..SearchParams::default()
        },
        visits: Some(a.visits),
        rules,
        resign_below: (!a.no_resign).then_some(0.02),
        ..EngineConfig::default()
    };
    let mut engine = Engine::new(source, config).map_err(anyhow::Error::msg)?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    while let Some(line) = read_bounded(&mut input)? {
        let (id, reply) = match line.map(|l| parse_line(&l)) {
            Ok(None) => continue,
            Ok(Some(Ok(cmd))) => (cmd.id, engine.handle(&cmd)),
            Ok(Some(Err(LineError::MissingCommand { id }))) => {
                (id, Reply::Failure("missing command".into()))
            }
            Ok(Some(Err(e))) | Err(e) => (None, Reply::Failure(e.to_string())),
        };
        out.write_all(reply.format(id).as_bytes())?;
        out.flush()?;
        if engine.quit_requested() {
            break;
        }
    }
    Ok(())
}
