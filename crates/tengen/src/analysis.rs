//! `tengen analysis`: KataGo's JSON analysis engine on standard input and output.

use std::io::BufReader;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use tengen_protocol::analysis::{parse, AnalysisEngine, Defaults, Perspective, Request};
use tengen_search::SearchParams;

use crate::bench::OrtArgs;
use crate::gtp::{evaluator_source, read_bounded};

/// Options of `tengen analysis`.
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    /// The network (`.bin.gz` or `.onnx`); without one, the uniform stand-in evaluator.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Network backend: `tract`, or `ort` when built with the `ort` feature.
    #[arg(long, default_value = "tract")]
    backend: String,
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
    #[command(flatten)]
    ort: OrtArgs,
}

/// Runs `tengen analysis`.
pub fn run(a: AnalysisArgs) -> Result<()> {
    let perspective: Perspective = a
        .report_analysis_winrates_as
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--report-analysis-winrates-as")?;
    let threads = a.search_threads.max(1);
    let models = match &a.model {
        Some(p) => {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let internal = name
                .trim_end_matches(".gz")
                .trim_end_matches(".bin")
                .trim_end_matches(".onnx");
            json!([{"name": name, "internalName": internal, "maxBatchSize": threads,
                    "usesHumanSLProfile": false}])
        }
        None => json!([]),
    };
    let source = evaluator_source(a.model.clone(), &a.backend, threads, &a.ort);
    let defaults = Defaults {
        params: SearchParams {
            threads,
            wide_root_noise: 0.04,
            ..SearchParams::default()
        },
        max_visits: a.max_visits.max(1),
        pv_len: a.pv_len,
    };
    let engine = AnalysisEngine::new(
        source,
        a.analysis_threads,
        perspective,
        Box::new(std::io::stdout()),
    );
    let mut input = BufReader::new(std::io::stdin());
    while let Some(line) = read_bounded(&mut input)? {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                engine.emit(&json!({"error": e.to_string()}));
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match parse(&line, &defaults) {
            Err(v) => engine.emit(&v),
            Ok(Request::Action(action, query)) => engine.action(&action, query, &models),
            Ok(Request::Query(tasks, warnings)) => {
                for w in &warnings {
                    engine.emit(w);
                }
                engine.submit(tasks);
            }
        }
    }
    engine.finish(!a.quit_without_waiting);
    Ok(())
}
