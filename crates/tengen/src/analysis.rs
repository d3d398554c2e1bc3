//! `tengen analysis`: KataGo's JSON analysis engine on standard input and output.

use std::io::BufReader;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use tengen_nn::eval::EvaluatorConfig;
use tengen_protocol::analysis::{
    AnalysisEngine, Defaults, Perspective, DEFAULT_QUEUE_BYTES, MAX_QUERY_LINE_BYTES,
};
use tengen_search::SearchParams;

use crate::backend::{BackendKind, OrtArgs};
use crate::gtp::read_bounded;
use crate::katago_args::KataArgs;
use crate::katago_keys::Tool;
use crate::logging::{self, Logged};
use crate::network::ModelSource;
use crate::setup::{EngineSpec, Evaluation};

/// Options of `tengen analysis`.
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    /// The network (`.bin.gz` or `.onnx`), `bundled` (the default when the build has one)
    /// or `none` (the classical engine judges positions).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Network backend: `tract`, or `ort` when built with the `ort` feature.
    #[arg(long, default_value = "tract")]
    backend: BackendKind,
    /// Positions searched at once. Default: the config's numAnalysisThreads, else 1.
    #[arg(long)]
    analysis_threads: Option<usize>,
    /// Search threads per position (the backend gets as many cores). Default: the config's
    /// numSearchThreads, else 1.
    #[arg(long)]
    search_threads: Option<usize>,
    /// Visits when a query gives no maxVisits. Default: the config's maxVisits, else 500.
    #[arg(long)]
    max_visits: Option<u64>,
    /// PV length when a query gives no analysisPVLen. Default: the config's analysisPVLen,
    /// else 15.
    #[arg(long)]
    pv_len: Option<usize>,
    /// Whose view values are reported from: BLACK, WHITE or SIDETOMOVE. Default: the
    /// config's reportAnalysisWinratesAs, else BLACK.
    #[arg(long)]
    report_analysis_winrates_as: Option<Perspective>,
    /// At end of input, drop queued and running queries instead of finishing them.
    #[arg(long)]
    quit_without_waiting: bool,
    /// Megabytes that queued and running queries may hold; a query past it is answered
    /// `queue full` (one of 10,000 moves with every turn analysed holds about 10).
    #[arg(long, default_value_t = (DEFAULT_QUEUE_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_queue_mb: u64,
    #[command(flatten)]
    ort: OrtArgs,
    #[command(flatten)]
    katago: KataArgs,
}

/// Runs `tengen analysis`.
pub fn run(a: AnalysisArgs) -> Result<()> {
    let (settings, report) = a.katago.settings(Tool::Analysis)?;
    if let Some(file) = logging::init(&settings.log, "analysis")? {
        log::info!("logging to {}", file.display());
    }
    report.log(Tool::Analysis);
    // Command-line flags win over the config, which wins over the defaults.
    let analysis_threads = a
        .analysis_threads
        .or(settings.analysis_threads)
        .unwrap_or(1);
    let threads = a.search_threads.or(settings.threads).unwrap_or(1).max(1);
    let max_visits = a.max_visits.or(settings.max_visits).unwrap_or(500);
    let pv_len = a.pv_len.or(settings.pv_len).unwrap_or(15);
    let perspective = a
        .report_analysis_winrates_as
        .or(settings.report_as)
        .unwrap_or(Perspective::Black);
    let mut batching = EvaluatorConfig {
        // Every search thread of every analysis thread may wait on the network at once.
        max_batch: settings
            .max_batch
            .unwrap_or(threads * analysis_threads.max(1)),
        ..EvaluatorConfig::default()
    };
    if let Some(c) = settings.cache_entries {
        batching.cache_entries = c;
    }
    let model = ModelSource::choose(a.model.as_deref(), false).context("--model")?;
    let models = match &model {
        Some(m) => {
            let (name, internal) = m.names();
            json!([{"name": name, "internalName": internal, "maxBatchSize": threads,
                    "usesHumanSLProfile": false}])
        }
        None => json!([]),
    };
    let evaluation = Evaluation::new(model, a.backend, &a.ort, None);
    let spec = EngineSpec {
        batching,
        ..EngineSpec::new(evaluation).with_threads(threads)
    };
    if let Evaluation::Network(n) = &spec.evaluation {
        log::info!("network: {}", n.model);
    }
    let (source, _) = spec.evaluator_source();
    let mut params = SearchParams {
        // KataGo's analysis engine looks at more moves than its GTP engine.
        wide_root_noise: 0.04,
        ..spec.search_params()
    };
    for setting in &settings.search {
        setting.apply(&mut params);
    }
    let defaults = Defaults {
        params,
        max_visits: max_visits.max(1),
        max_playouts: settings.max_playouts,
        pv_len,
        // Beyond what a Duration holds is no limit.
        max_time: settings
            .max_time
            .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok()),
    };
    let out = Logged::new(std::io::stdout(), "response:", settings.log.responses);
    let engine = AnalysisEngine::new(
        source,
        analysis_threads,
        perspective,
        Box::new(out),
        usize::try_from(a.max_queue_mb << 20).unwrap_or(usize::MAX),
    );
    let input = Logged::new(std::io::stdin(), "request:", settings.log.requests);
    let mut input = BufReader::new(input);
    while let Some(line) = read_bounded(&mut input, MAX_QUERY_LINE_BYTES)? {
        let Ok(line) = line else {
            // Only an over-long line is refused; it was skipped without being stored.
            engine.emit(&json!({
                "error": format!("line too long (more than {MAX_QUERY_LINE_BYTES} bytes)")
            }));
            continue;
        };
        engine.handle_line(&line, &defaults, &models);
    }
    engine.finish(!a.quit_without_waiting);
    Ok(())
}
