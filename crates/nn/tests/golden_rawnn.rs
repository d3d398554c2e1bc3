//! End to end against KataGo: each golden position is replayed with the rules engine, encoded
//! by our features, evaluated by a graph built from the shared model file, decoded by our
//! post-processing, and compared with KataGo's own numbers (`katago-rawnn-*.jsonl`,
//! `outputFullPrecision`). Runs on tract and the native backend, and on ONNX Runtime too when
//! built with the `ort` feature and `ORT_DYLIB_PATH` names a library.

mod common;

use common::rawnn::{compare, Precision, Worst, GTP_OPTIMISM, PROB_TOL};

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tengen_nn::backend::native::{NativeBackend, NativeOptions};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::Backend;
use tengen_nn::eval::{EvalOptions, Evaluator, EvaluatorConfig};
use tengen_nn::model::{load_model, ModelDesc};
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::LoadedModel;
use tengen_nn::postprocess::PolicyOptions;
use tengen_rules::Game;

/// The golden records and the model, or `None` after saying why the file is skipped.
fn golden(file: &str, model: &str) -> Option<(Vec<Value>, ModelDesc)> {
    let model_path =
        tengen_test_support::shared_path(&format!("golden {file}"), &format!("models/{model}"))?;
    let records = tengen_test_support::golden_records(file)?;
    let desc = load_model(&model_path).unwrap_or_else(|e| panic!("loading {model}: {e}"));
    Some((records, desc))
}

/// Replays a record; the game's side to move must be the one KataGo evaluated for.
fn replay(r: &Value) -> Game {
    let (g, next) = common::replay(r);
    assert_eq!(g.to_move(), next, "{}: side to move", r["id"]);
    g
}

/// One backend per board size, built from the model as KataGo's GTP does (exact size).
type MakeBackend<'a> = &'a dyn Fn(&ModelDesc, &LoadedModel) -> Option<Arc<dyn Backend>>;

/// Runs every record of `file` through `make`'s backends; returns (agreed, total).
fn run_file(
    label: &str,
    file: &str,
    records: &[Value],
    desc: &ModelDesc,
    make: MakeBackend<'_>,
) -> Option<(usize, usize)> {
    let mut evaluators: BTreeMap<(usize, usize), Evaluator> = BTreeMap::new();
    let mut worst = Worst::default();
    let mut agreed = 0;
    for r in records {
        let game = replay(r);
        let size = game.board().size();
        let key = (size.width(), size.height());
        let ev = match evaluators.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(slot) => {
                let proto = build_graph(desc, &BuildOptions::new(key.0, key.1).exact(true))
                    .expect("graph builds");
                let model = LoadedModel::from_proto(proto).expect("graph honours the contract");
                let backend = make(desc, &model)?;
                let config = EvaluatorConfig {
                    cache_entries: 0,
                    ..EvaluatorConfig::default()
                };
                slot.insert(Evaluator::new(backend, model.metadata, config).expect("evaluator"))
            }
        };
        let out = ev
            .evaluate(&game, &EvalOptions::default())
            .expect("evaluates");
        let mut bad = compare(
            &out,
            &r["outputFullPrecision"],
            desc.model_version,
            Precision::Full,
            &mut worst,
        );
        if let Some(expected) = r.get("outputDefaultOptimism") {
            let opts = EvalOptions {
                policy: PolicyOptions {
                    optimism: GTP_OPTIMISM,
                    ..PolicyOptions::default()
                },
                ..EvalOptions::default()
            };
            let opt = ev.evaluate(&game, &opts).expect("evaluates");
            // Printed output: 6 decimals, so allow the rounding on top of the tolerance.
            let policy = expected["policy"].as_array().expect("policy");
            for (p, w) in opt.policy.iter().zip(policy) {
                if let Some(w) = w.as_f64() {
                    let err = (*p as f64 - w).abs();
                    worst.add("policy (optimism 0.2)", err);
                    if err > PROB_TOL + 5e-7 {
                        bad.push(format!("optimistic policy {p} vs {w}"));
                    }
                }
            }
        }
        if bad.is_empty() {
            agreed += 1;
        } else {
            println!("  {}: {}", r["id"], bad.join("; "));
        }
    }
    println!(
        "{}{}\n  worst errors: {}",
        tengen_test_support::golden_line(&format!("{file}{label}"), agreed, records.len()),
        tengen_test_support::stride_note(),
        worst.line()
    );
    Some((agreed, records.len()))
}

fn tract_backend(_: &ModelDesc, model: &LoadedModel) -> Option<Arc<dyn Backend>> {
    let options = TractOptions {
        threads: 2,
        ..TractOptions::default()
    };
    Some(Arc::new(
        TractBackend::new(model, options).expect("tract backend"),
    ))
}

fn check_file(file: &str, model: &str, label: &str, make: MakeBackend<'_>) {
    let Some((records, desc)) = golden(file, model) else {
        return;
    };
    let records: Vec<Value> = records
        .into_iter()
        .step_by(tengen_test_support::stride())
        .collect();
    if let Some((agreed, total)) = run_file(label, file, &records, &desc, make) {
        assert_eq!(
            agreed, total,
            "{file}{label}: positions disagree with KataGo"
        );
    }
}

#[test]
fn b6c96_agrees_with_katago_through_tract() {
    check_file(
        "katago-rawnn-g170-b6c96.jsonl",
        "g170-b6c96.bin.gz",
        "",
        &tract_backend,
    );
}

#[test]
fn b10c384_transformer_agrees_with_katago_through_tract() {
    check_file(
        "katago-rawnn-b10c384h6nbttflrs.jsonl",
        "b10c384h6nbttflrs.bin.gz",
        "",
        &tract_backend,
    );
}

fn native_backend(desc: &ModelDesc, model: &LoadedModel) -> Option<Arc<dyn Backend>> {
    let backend = NativeBackend::new(
        desc,
        &model.metadata,
        NativeOptions {
            threads: 1,
            max_batch: 8,
            ..NativeOptions::default()
        },
    )
    .expect("native backend");
    Some(Arc::new(backend))
}

#[test]
fn b6c96_agrees_with_katago_through_the_native_backend() {
    check_file(
        "katago-rawnn-g170-b6c96.jsonl",
        "g170-b6c96.bin.gz",
        " (native)",
        &native_backend,
    );
}

#[test]
fn b10c384_transformer_agrees_with_katago_through_the_native_backend() {
    check_file(
        "katago-rawnn-b10c384h6nbttflrs.jsonl",
        "b10c384h6nbttflrs.bin.gz",
        " (native)",
        &native_backend,
    );
}

#[cfg(feature = "ort")]
mod ort {
    use super::*;
    use tengen_nn::backend::ort::{OrtBackend, OrtOptions, ORT_DYLIB_PATH};

    fn ort_backend(_: &ModelDesc, model: &LoadedModel) -> Option<Arc<dyn Backend>> {
        if std::env::var_os(ORT_DYLIB_PATH).is_none_or(|p| p.is_empty()) {
            println!("golden (ort): skipped ({ORT_DYLIB_PATH} is not set)");
            return None;
        }
        let options = OrtOptions {
            intra_threads: 2,
            ..OrtOptions::default()
        };
        Some(Arc::new(
            OrtBackend::new(model, options).expect("ort backend"),
        ))
    }

    #[test]
    fn b6c96_agrees_with_katago_through_ort() {
        check_file(
            "katago-rawnn-g170-b6c96.jsonl",
            "g170-b6c96.bin.gz",
            " (ort)",
            &ort_backend,
        );
    }

    #[test]
    fn b10c384_transformer_agrees_with_katago_through_ort() {
        check_file(
            "katago-rawnn-b10c384h6nbttflrs.jsonl",
            "b10c384h6nbttflrs.bin.gz",
            " (ort)",
            &ort_backend,
        );
    }
}
