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
use crate::network::ModelSource;
use crate::setup::{EngineSpec, Evaluation};

/// Options of `tengen analysis`.
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    /// A KataGo-style analysis config (`key = value` lines, `#` comments): numAnalysisThreads,
    /// numSearchThreads, maxVisits, analysisPVLen, reportAnalysisWinratesAs, wideRootNoise,
    /// nnMaxBatchSize, nnCacheSizePowerOfTwo.
    /// Command-line flags given explicitly win over the file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The network (`.bin.gz` or `.onnx`), `bundled` (the default when the build has one)
    /// or `none` (the classical engine judges positions).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Network backend: `tract`, or `ort` when built with the `ort` feature.
    #[arg(long, default_value = "tract")]
    backend: BackendKind,
    /// Positions searched at once.
    #[arg(long, default_value_t = 1)]
    analysis_threads: usize,
    /// Search threads per position (the backend gets as many cores).
    #[arg(long, default_value_t = 1)]
    search_threads: usize,
    /// Visits when a query gives no maxVisits.
    #[arg(long, default_value_t = 500)]
    max_visits: u64,
    /// PV length when a query gives no analysisPVLen.
    #[arg(long, default_value_t = 15)]
    pv_len: usize,
    /// Whose view values are reported from: BLACK, WHITE or SIDETOMOVE.
    #[arg(long, default_value = "BLACK")]
    report_analysis_winrates_as: String,
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
}

impl AnalysisArgs {
    /// The command-line defaults (threads, search threads, visits, PV length, perspective).
    fn defaults() -> (usize, usize, u64, usize, String) {
        (1, 1, 500, 15, "BLACK".to_string())
    }
}

/// Settings read from a KataGo-style config file.
#[derive(Debug, Default, PartialEq)]
struct FileConfig {
    analysis_threads: Option<usize>,
    search_threads: Option<usize>,
    max_visits: Option<u64>,
    pv_len: Option<usize>,
    report_as: Option<String>,
    wide_root_noise: Option<f64>,
    max_batch: Option<usize>,
    cache_power: Option<u32>,
}

/// Reads `key = value` lines; unknown keys are logged and ignored, bad values are errors
/// naming the key and line.
fn read_config(text: &str) -> Result<FileConfig> {
    let mut c = FileConfig::default();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .with_context(|| format!("line {}: expected key = value", n + 1))?;
        let bad = || anyhow::anyhow!("line {}: bad value {value:?} for {key}", n + 1);
        match key {
            "numAnalysisThreads" => c.analysis_threads = Some(value.parse().map_err(|_| bad())?),
            "numSearchThreads" => c.search_threads = Some(value.parse().map_err(|_| bad())?),
            "maxVisits" => c.max_visits = Some(value.parse().map_err(|_| bad())?),
            "analysisPVLen" => c.pv_len = Some(value.parse().map_err(|_| bad())?),
            "reportAnalysisWinratesAs" => c.report_as = Some(value.to_string()),
            "wideRootNoise" => c.wide_root_noise = Some(value.parse().map_err(|_| bad())?),
            "nnMaxBatchSize" => c.max_batch = Some(value.parse().map_err(|_| bad())?),
            "nnCacheSizePowerOfTwo" => {
                let p: u32 = value.parse().map_err(|_| bad())?;
                if p > 30 {
                    return Err(bad());
                }
                c.cache_power = Some(p);
            }
            _ => log::warn!(
                "config line {}: {key} is not used by tengen analysis",
                n + 1
            ),
        }
    }
    Ok(c)
}

/// Runs `tengen analysis`.
pub fn run(mut a: AnalysisArgs) -> Result<()> {
    let mut wide_root_noise = 0.04;
    let mut batching = EvaluatorConfig::default();
    let mut batch_from_file = false;
    if let Some(path) = &a.config {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let c = read_config(&text).with_context(|| format!("in {}", path.display()))?;
        // The file fills in what the command line left at its default.
        let d = AnalysisArgs::defaults();
        if a.analysis_threads == d.0 {
            a.analysis_threads = c.analysis_threads.unwrap_or(a.analysis_threads);
        }
        if a.search_threads == d.1 {
            a.search_threads = c.search_threads.unwrap_or(a.search_threads);
        }
        if a.max_visits == d.2 {
            a.max_visits = c.max_visits.unwrap_or(a.max_visits);
        }
        if a.pv_len == d.3 {
            a.pv_len = c.pv_len.unwrap_or(a.pv_len);
        }
        if a.report_analysis_winrates_as == d.4 {
            a.report_analysis_winrates_as = c.report_as.unwrap_or(a.report_analysis_winrates_as);
        }
        wide_root_noise = c.wide_root_noise.unwrap_or(wide_root_noise);
        if let Some(b) = c.max_batch {
            batching.max_batch = b.max(1);
            batch_from_file = true;
        }
        if let Some(p) = c.cache_power {
            batching.cache_entries = 1 << p;
        }
    }
    let perspective: Perspective = a
        .report_analysis_winrates_as
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--report-analysis-winrates-as")?;
    let threads = a.search_threads.max(1);
    let model = ModelSource::choose(a.model.as_deref(), false).context("--model")?;
    let models = match &model {
        Some(m) => {
            let (name, internal) = m.names();
            json!([{"name": name, "internalName": internal, "maxBatchSize": threads,
                    "usesHumanSLProfile": false}])
        }
        None => json!([]),
    };
    if !batch_from_file {
        // Every search thread of every analysis thread may wait on the network at once.
        batching.max_batch = threads * a.analysis_threads.max(1);
    }
    let evaluation = Evaluation::new(model, a.backend, &a.ort, None);
    let spec = EngineSpec {
        batching,
        ..EngineSpec::new(evaluation).with_threads(threads)
    };
    if let Evaluation::Network(n) = &spec.evaluation {
        log::info!("network: {}", n.model);
    }
    let (source, _) = spec.evaluator_source();
    let defaults = Defaults {
        params: SearchParams {
            wide_root_noise,
            ..spec.search_params()
        },
        max_visits: a.max_visits.max(1),
        pv_len: a.pv_len,
    };
    let engine = AnalysisEngine::new(
        source,
        a.analysis_threads,
        perspective,
        Box::new(std::io::stdout()),
        usize::try_from(a.max_queue_mb << 20).unwrap_or(usize::MAX),
    );
    let mut input = BufReader::new(std::io::stdin());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_are_read_and_bad_ones_named() {
        let c = read_config("# KataGo analysis config\nnumAnalysisThreads = 2\nmaxVisits=100 # per query\nreportAnalysisWinratesAs = SIDETOMOVE\nnnCacheSizePowerOfTwo = 20\nnnMaxBatchSize = 8\n").unwrap();
        assert_eq!(c.cache_power, Some(20));
        assert_eq!(c.max_batch, Some(8));
        assert_eq!(c.analysis_threads, Some(2));
        assert_eq!(c.max_visits, Some(100));
        assert_eq!(c.report_as.as_deref(), Some("SIDETOMOVE"));
        let e = read_config("maxVisits = lots\n").unwrap_err().to_string();
        assert!(e.contains("maxVisits") && e.contains("line 1"), "{e}");
        assert!(read_config("just words\n").is_err());
    }
}
