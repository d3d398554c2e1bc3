//! Every KataGo architecture family against KataGo: the test networks in `tests/nets` (seeded
//! random weights, made by KataGo's own exporter with `tests/katago/make_test_nets.py`) and
//! KataGo's `kata-raw-nn 0 0` outputs on them (`<net>.rawnn.jsonl`, recorded by
//! `tests/katago/record_rawnn.py` on the shared golden positions, joined here by `id`).
//!
//! Each net runs on tract, on the native backend (in fp32, and in int16 against fp32 where
//! the CPU has AVX-512 VNNI) and on ONNX Runtime with the `ort` feature and a library. `TENGEN_TEST_NETS` (a `:`-separated list of folders) adds
//! more nets laid out the same way.

mod common;

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::rawnn::{compare, Precision, Worst};
use serde_json::Value;
use tengen_nn::backend::native::{winograd, Gemm, NativeBackend, NativeOptions};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::Backend;
use tengen_nn::eval::{EvalOptions, Evaluator, EvaluatorConfig};
use tengen_nn::model::{load_model, ModelDesc};
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::LoadedModel;

/// The shared positions the outputs were recorded on.
const POSITIONS: &str = "katago-rawnn-g170-b6c96.jsonl";

/// One test net and KataGo's outputs on it.
struct TestNet {
    name: String,
    desc: ModelDesc,
    outputs: Vec<Value>,
}

/// Every `<name>.bin.gz` with a `<name>.rawnn.jsonl` beside it, in the committed folder and
/// in `TENGEN_TEST_NETS`.
fn nets() -> Vec<TestNet> {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nets")];
    if let Some(extra) = std::env::var_os("TENGEN_TEST_NETS") {
        dirs.extend(std::env::split_paths(&extra));
    }
    let mut found = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("test nets folder {}: {e}", dir.display()));
        let mut paths: Vec<PathBuf> = entries.map(|e| e.expect("dir entry").path()).collect();
        paths.sort();
        for path in paths {
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
            let Some(name) = file.strip_suffix(".bin.gz") else {
                continue;
            };
            let golden = dir.join(format!("{name}.rawnn.jsonl"));
            let text = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (every test net needs its outputs)",
                    golden.display()
                )
            });
            let outputs = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).expect("output line is JSON"))
                .collect();
            let desc = load_model(&path).unwrap_or_else(|e| panic!("loading {name}: {e}"));
            found.push(TestNet {
                name: name.to_string(),
                desc,
                outputs,
            });
        }
    }
    assert!(!found.is_empty(), "no test nets found");
    found
}

/// The shared positions by id, or `None` after saying why they are missing.
fn positions() -> Option<HashMap<String, Value>> {
    let records = tengen_test_support::golden_records(POSITIONS)?;
    Some(
        records
            .into_iter()
            .map(|r| (r["id"].as_str().expect("id").to_string(), r))
            .collect(),
    )
}

type MakeBackend<'a> = &'a dyn Fn(&ModelDesc, &LoadedModel) -> Arc<dyn Backend>;

/// Runs every recorded position of `net` through `make`'s backends, one per board size
/// (exact graphs, as KataGo's GTP sizes its net); returns (agreed, total).
fn run_net(
    net: &TestNet,
    positions: &HashMap<String, Value>,
    label: &str,
    make: MakeBackend<'_>,
) -> (usize, usize) {
    let mut evaluators: BTreeMap<(usize, usize), Evaluator> = BTreeMap::new();
    let mut worst = Worst::default();
    let mut agreed = 0;
    let stride = tengen_test_support::stride();
    let outputs: Vec<&Value> = net.outputs.iter().step_by(stride).collect();
    for rec in &outputs {
        let id = rec["id"].as_str().expect("id");
        let position = positions
            .get(id)
            .unwrap_or_else(|| panic!("{}: position {id} is not in {POSITIONS}", net.name));
        let (game, next) = common::replay(position);
        assert_eq!(game.to_move(), next, "{id}: side to move");
        let size = game.board().size();
        let key = (size.width(), size.height());
        let ev = match evaluators.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(slot) => {
                let proto = build_graph(&net.desc, &BuildOptions::new(key.0, key.1).exact(true))
                    .expect("graph builds");
                let model = LoadedModel::from_proto(proto).expect("graph honours the contract");
                let backend = make(&net.desc, &model);
                let config = EvaluatorConfig {
                    cache_entries: 0,
                    ..EvaluatorConfig::default()
                };
                slot.insert(Evaluator::new(backend, model.metadata, config).expect("evaluator"))
            }
        };
        let out = ev
            .evaluate(&game, &options(rec))
            .unwrap_or_else(|e| panic!("{}{label} {id}: {e}", net.name));
        let bad = compare(
            &out,
            &rec["output"],
            net.desc.model_version,
            Precision::Printed,
            &mut worst,
        );
        if bad.is_empty() {
            agreed += 1;
        } else {
            println!("  {id}: {}", bad.join("; "));
        }
    }
    println!(
        "{}{}\n  worst errors: {}",
        tengen_test_support::golden_line(&format!("{}{label}", net.name), agreed, outputs.len()),
        tengen_test_support::stride_note(),
        worst.line()
    );
    (agreed, outputs.len())
}

/// KataGo's settings for a record: its human-SL profile, if it names one.
fn options(rec: &Value) -> EvalOptions {
    let mut opts = EvalOptions::default();
    if let Some(name) = rec["humanSLProfile"].as_str() {
        opts.inputs.human_profile = Some(name.parse().expect("a KataGo profile"));
    }
    opts
}

fn tract(_: &ModelDesc, model: &LoadedModel) -> Arc<dyn Backend> {
    let options = TractOptions {
        threads: 1,
        ..TractOptions::default()
    };
    Arc::new(TractBackend::new(model, options).expect("tract backend"))
}

fn native(desc: &ModelDesc, model: &LoadedModel) -> Result<NativeBackend, String> {
    native_with(desc, model, Gemm::F32)
}

fn native_with(desc: &ModelDesc, model: &LoadedModel, gemm: Gemm) -> Result<NativeBackend, String> {
    let options = NativeOptions {
        threads: 1,
        max_batch: 8,
        gemm,
    };
    NativeBackend::new(desc, &model.metadata, options).map_err(|e| e.to_string())
}

/// Whether the net reads SGF metadata (a human-SL net).
fn needs_metadata(net: &TestNet) -> bool {
    net.desc.trunk.sgf_metadata_encoder.is_some()
}

#[test]
fn every_family_agrees_with_katago_through_tract() {
    let Some(positions) = positions() else { return };
    let mut failed = Vec::new();
    for net in nets().iter() {
        let (agreed, total) = run_net(net, &positions, " (tract)", &tract);
        if agreed != total {
            failed.push(format!("{}: {agreed}/{total}", net.name));
        }
    }
    assert!(failed.is_empty(), "disagree with KataGo: {failed:?}");
}

#[test]
fn every_family_agrees_with_katago_through_the_native_backend() {
    let Some(positions) = positions() else { return };
    let make = |d: &ModelDesc, m: &LoadedModel| -> Arc<dyn Backend> {
        Arc::new(native(d, m).expect("native backend"))
    };
    let mut failed = Vec::new();
    for net in nets().iter() {
        let (agreed, total) = run_net(net, &positions, " (native)", &make);
        if agreed != total {
            failed.push(format!("{}: {agreed}/{total}", net.name));
        }
    }
    assert!(failed.is_empty(), "native backend: {failed:?}");
}

/// The int16 gate: the value moves by at most this much...
const GATE_VALUE: f64 = 0.02;
/// ...and the move int16 ranks first has an fp32 policy within this of fp32's best, so a
/// near-tie that swaps is no failure.
const GATE_POLICY_GAP: f64 = 0.01;

#[test]
fn int16_keeps_every_convolutional_family_within_its_gates() {
    if !winograd::int16_available() {
        println!("int16 test nets: skipped (this CPU has no AVX-512 VNNI)");
        return;
    }
    let Some(positions) = positions() else { return };
    let mut failed = Vec::new();
    for net in nets().iter() {
        let mut pairs: BTreeMap<(usize, usize), (Evaluator, Evaluator)> = BTreeMap::new();
        let (mut worst_value, mut worst_gap, mut same_best) = (0.0f64, 0.0f64, 0);
        for rec in &net.outputs {
            let (game, _) = common::replay(&positions[rec["id"].as_str().expect("id")]);
            let size = game.board().size();
            let (ev32, ev16) = pairs
                .entry((size.width(), size.height()))
                .or_insert_with(|| {
                    let opts = BuildOptions::new(size.width(), size.height()).exact(true);
                    let model =
                        LoadedModel::from_proto(build_graph(&net.desc, &opts).expect("graph"))
                            .expect("contract");
                    let config = EvaluatorConfig {
                        cache_entries: 0,
                        ..EvaluatorConfig::default()
                    };
                    let make = |gemm| {
                        let backend =
                            Arc::new(native_with(&net.desc, &model, gemm).expect("native"));
                        Evaluator::new(backend, model.metadata.clone(), config.clone()).expect("ev")
                    };
                    (make(Gemm::F32), make(Gemm::Int16))
                });
            let a = ev32.evaluate(&game, &options(rec)).expect("fp32");
            let b = ev16.evaluate(&game, &options(rec)).expect("int16");
            let value = |o: &tengen_nn::postprocess::NnOutput| {
                f64::from(o.white_win) - f64::from(o.white_loss)
            };
            worst_value = worst_value.max((value(&a) - value(&b)).abs());
            let best = |o: &tengen_nn::postprocess::NnOutput| {
                (0..o.policy.len())
                    .max_by(|&i, &j| o.policy[i].total_cmp(&o.policy[j]))
                    .expect("a policy")
            };
            let (ba, bb) = (best(&a), best(&b));
            same_best += usize::from(ba == bb);
            worst_gap = worst_gap.max(f64::from(a.policy[ba] - a.policy[bb]));
        }
        let total = net.outputs.len();
        println!(
            "{}\n  worst |value change| {worst_value:.2e}, worst fp32 policy gap of int16's first move {worst_gap:.2e}",
            tengen_test_support::golden_line(&format!("{} (int16 against fp32, same first move)", net.name), same_best, total)
        );
        if worst_value > GATE_VALUE || worst_gap > GATE_POLICY_GAP {
            failed.push(net.name.clone());
        }
    }
    assert!(failed.is_empty(), "int16 outside its gates: {failed:?}");
}

#[test]
fn a_human_sl_net_without_a_profile_is_refused_with_a_clear_error() {
    let Some(_) = positions() else { return };
    let game = tengen_rules::Game::new(
        tengen_rules::BoardSize::new(9, 9).expect("size"),
        tengen_rules::Rules::parse_with_komi("chinese", 7.0).expect("rules"),
    );
    let mut seen = 0;
    for net in nets().iter().filter(|n| needs_metadata(n)) {
        let proto = build_graph(&net.desc, &BuildOptions::new(9, 9).exact(true)).expect("graph");
        let model = LoadedModel::from_proto(proto).expect("contract");
        let native: Arc<dyn Backend> = Arc::new(native(&net.desc, &model).expect("native"));
        for backend in [tract(&net.desc, &model), native] {
            let name = backend.name().to_string();
            let config = EvaluatorConfig::default();
            let ev = Evaluator::new(backend, model.metadata.clone(), config).expect("evaluator");
            let err = ev
                .evaluate(&game, &EvalOptions::default())
                .expect_err("a metadata net needs its metadata");
            assert!(
                err.to_string().contains("InputMeta"),
                "{} on {name}: {err}",
                net.name
            );
        }
        seen += 1;
    }
    assert!(seen > 0, "no human-SL test net");
}

#[cfg(feature = "ort")]
#[test]
fn every_family_agrees_with_katago_through_ort() {
    use tengen_nn::backend::ort::{OrtBackend, OrtOptions, ORT_DYLIB_PATH};
    // As the other ONNX Runtime golden tests: tests/run.sh sets it where a library could
    // be fetched; under qemu (aarch64) ONNX Runtime does not run.
    if std::env::var_os(ORT_DYLIB_PATH).is_none_or(|p| p.is_empty()) {
        println!("golden test nets (ort): skipped ({ORT_DYLIB_PATH} is not set)");
        return;
    }
    let Some(positions) = positions() else { return };
    let make = |_: &ModelDesc, m: &LoadedModel| -> Arc<dyn Backend> {
        let options = OrtOptions {
            intra_threads: 1,
            ..OrtOptions::default()
        };
        Arc::new(OrtBackend::new(m, options).expect("ort backend"))
    };
    let mut failed = Vec::new();
    for net in nets().iter() {
        let (agreed, total) = run_net(net, &positions, " (ort)", &make);
        if agreed != total {
            failed.push(format!("{}: {agreed}/{total}", net.name));
        }
    }
    assert!(failed.is_empty(), "disagree with KataGo: {failed:?}");
}
