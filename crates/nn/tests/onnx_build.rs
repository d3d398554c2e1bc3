//! Builds ONNX graphs from the shared KataGo models, runs them with tract on KataGo's own input
//! features, and compares with KataGo's outputs (`/work/shared/golden`).

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;
use tengen_nn::model::{load_model, ModelDesc};
use tengen_nn::onnx::build::{
    build_graph, write_onnx, BuildError, BuildOptions, BATCH_DIM, IR_VERSION, OPSET_VERSION,
};
use tengen_nn::onnx::meta::ModelMetadata;
use tract_onnx::pb::{
    tensor_shape_proto::dimension::Value as Dim, type_proto, ModelProto, ValueInfoProto,
};
use tract_onnx::prelude::*;

const B6: &str = "g170-b6c96.bin.gz";
const B10: &str = "b10c384h6nbttflrs.bin.gz";

/// The shared directory with its models and golden records, or `None` after saying so.
fn shared_dir() -> Option<PathBuf> {
    tengen_test_support::shared_dir("onnx graph tests", &["models", "golden"])
}

fn load(shared: &std::path::Path, file: &str) -> ModelDesc {
    load_model(&shared.join("models").join(file)).unwrap_or_else(|e| panic!("loading {file}: {e}"))
}

fn jsonl(path: PathBuf) -> Vec<Value> {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

fn usize_of(v: &Value) -> usize {
    v.as_u64().expect("integer") as usize
}

/// One golden position: KataGo's input features and its post-processed outputs.
struct Position {
    id: String,
    x: usize,
    y: usize,
    spatial: Vec<f32>,
    global: Vec<f32>,
    white_to_move: bool,
    no_result_allowed: bool,
    expected: Value,
}

fn positions(shared: &std::path::Path, golden_file: &str) -> Vec<Position> {
    let features: HashMap<String, Value> = jsonl(shared.join("golden/katago-features-v7.jsonl"))
        .into_iter()
        .map(|v| (v["id"].as_str().expect("id").to_string(), v))
        .collect();
    jsonl(shared.join("golden").join(golden_file))
        .into_iter()
        .map(|g| {
            let id = g["id"].as_str().expect("id").to_string();
            let f = features
                .get(&id)
                .unwrap_or_else(|| panic!("no features for {id}"));
            let rules = &g["rulesJson"];
            Position {
                x: usize_of(&g["boardXSize"]),
                y: usize_of(&g["boardYSize"]),
                spatial: floats(&f["spatial"]),
                global: floats(&f["global"]),
                white_to_move: g["nextPlayer"] == "W",
                no_result_allowed: rules["ko"] == "SIMPLE" || rules["scoring"] == "TERRITORY",
                expected: g["outputFullPrecision"].clone(),
                id,
            }
        })
        .collect()
}

/// The raw outputs of one position, channel 0 of the policy.
struct Raw {
    policy: Vec<f32>,
    pass: f32,
    value: [f32; 3],
    score: Vec<f32>,
    ownership: Vec<f32>,
}

/// A built graph made runnable by tract at a fixed batch size.
struct Net {
    plan: std::sync::Arc<TypedSimplePlan>,
    batch: usize,
    x: usize,
    y: usize,
    c: usize,
    gc: usize,
    policy_c: usize,
    score_c: usize,
}

fn runnable(model: &ModelDesc, opts: &BuildOptions<'_>, batch: usize) -> Net {
    let proto = build_graph(model, opts).expect("build graph");
    let bytes = write_onnx(&proto);
    let mut net = tract_onnx::onnx()
        .model_for_read(&mut bytes.as_slice())
        .expect("tract reads the graph");
    let (x, y, c, gc) = (
        opts.x_len,
        opts.y_len,
        model.num_input_channels,
        model.num_input_global_channels,
    );
    let shapes = [[batch, c, y, x], [batch, gc, 1, 1], [batch, 1, y, x]];
    for (i, shape) in shapes.iter().enumerate() {
        net = net
            .with_input_fact(i, f32::fact(shape).into())
            .expect("input fact");
    }
    let plan = net
        .into_optimized()
        .expect("optimize")
        .into_runnable()
        .expect("runnable");
    Net {
        plan,
        batch,
        x,
        y,
        c,
        gc,
        policy_c: model.num_policy_channels,
        score_c: model.num_score_value_channels,
    }
}

impl Net {
    /// Runs positions (each placed in the top-left corner of the buffer), `batch` at a time.
    fn run(&self, ps: &[&Position]) -> Vec<Raw> {
        let mut out = Vec::new();
        for chunk in ps.chunks(self.batch) {
            let (b, area) = (self.batch, self.x * self.y);
            let mut spatial = vec![0f32; b * self.c * area];
            let mut global = vec![0f32; b * self.gc];
            let mut mask = vec![0f32; b * area];
            for n in 0..b {
                // Partial batches repeat the last position rather than feed an empty board.
                let p = chunk[n.min(chunk.len() - 1)];
                assert!(p.x <= self.x && p.y <= self.y, "{} does not fit", p.id);
                for ch in 0..self.c {
                    for yy in 0..p.y {
                        for xx in 0..p.x {
                            let v = p.spatial[(ch * p.y + yy) * p.x + xx];
                            spatial[((n * self.c + ch) * self.y + yy) * self.x + xx] = v;
                            if ch == 0 {
                                mask[(n * self.y + yy) * self.x + xx] = v;
                            }
                        }
                    }
                }
                global[n * self.gc..(n + 1) * self.gc].copy_from_slice(&p.global);
            }
            let inputs = tvec![
                Tensor::from_shape(&[b, self.c, self.y, self.x], &spatial)
                    .unwrap()
                    .into_tvalue(),
                Tensor::from_shape(&[b, self.gc, 1, 1], &global)
                    .unwrap()
                    .into_tvalue(),
                Tensor::from_shape(&[b, 1, self.y, self.x], &mask)
                    .unwrap()
                    .into_tvalue(),
            ];
            let outputs = self.plan.run(inputs).expect("run");
            let slice = |k: usize| -> Vec<f32> {
                outputs[k]
                    .try_as_plain_ram()
                    .unwrap()
                    .as_slice::<f32>()
                    .unwrap()
                    .to_vec()
            };
            let (pass, policy, value, score, own) =
                (slice(0), slice(1), slice(2), slice(3), slice(4));
            for n in 0..chunk.len() {
                let pc = self.policy_c;
                out.push(Raw {
                    policy: policy[n * pc * area..n * pc * area + area].to_vec(),
                    pass: pass[n * pc],
                    value: [value[n * 3], value[n * 3 + 1], value[n * 3 + 2]],
                    score: score[n * self.score_c..(n + 1) * self.score_c].to_vec(),
                    ownership: own[n * area..(n + 1) * area].to_vec(),
                });
            }
        }
        out
    }
}

fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// Worst absolute error per output kind.
#[derive(Default)]
struct Worst {
    policy: f64,
    value: f64,
    score: f64,
    lead: f64,
    ownership: f64,
}

impl Worst {
    fn merge(&mut self, o: &Worst) {
        self.policy = self.policy.max(o.policy);
        self.value = self.value.max(o.value);
        self.score = self.score.max(o.score);
        self.lead = self.lead.max(o.lead);
        self.ownership = self.ownership.max(o.ownership);
    }

    fn within_tolerance(&self) -> bool {
        self.policy <= 1e-4
            && self.value <= 1e-4
            && self.score <= 1e-2
            && self.lead <= 1e-2
            && self.ownership <= 1e-3
    }
}

/// Post-processes raw outputs as KataGo's `NNEvaluator` does (model version >= 4, policy optimism 0)
/// and returns the errors against the golden `outputFullPrecision`.
fn compare(p: &Position, raw: &Raw, model: &ModelDesc, buf_x: usize) -> Worst {
    let e = &p.expected;
    let pp = &model.post_process;
    let mut w = Worst::default();

    // Policy: softmax over the legal moves (non-null golden entries) and pass.
    let golden_policy = e["policy"].as_array().expect("policy");
    let legal: Vec<(usize, f64)> = golden_policy
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.as_f64().map(|g| (i, g)))
        .collect();
    let logit = |i: usize| f64::from(raw.policy[(i / p.x) * buf_x + i % p.x]);
    let max = legal
        .iter()
        .map(|&(i, _)| logit(i))
        .fold(f64::from(raw.pass), f64::max);
    let sum: f64 = legal
        .iter()
        .map(|&(i, _)| (logit(i) - max).exp())
        .sum::<f64>()
        + (f64::from(raw.pass) - max).exp();
    for &(i, g) in &legal {
        w.policy = w.policy.max(((logit(i) - max).exp() / sum - g).abs());
    }
    let pass = (f64::from(raw.pass) - max).exp() / sum;
    w.policy = w
        .policy
        .max((pass - e["policyPass"].as_f64().expect("pass")).abs());

    // Value: softmax, no-result only under simple ko or territory scoring; White's view.
    let v: Vec<f64> = raw.value.iter().map(|&x| f64::from(x)).collect();
    let vmax = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut probs: Vec<f64> = v.iter().map(|x| (x - vmax).exp()).collect();
    if !p.no_result_allowed {
        probs[2] = 0.0;
    }
    let total: f64 = probs.iter().sum();
    let (win, loss, no_result) = (probs[0] / total, probs[1] / total, probs[2] / total);
    let (white_win, white_loss) = if p.white_to_move {
        (win, loss)
    } else {
        (loss, win)
    };
    let sign = if p.white_to_move { 1.0 } else { -1.0 };
    for (got, key) in [
        (white_win, "whiteWin"),
        (white_loss, "whiteLoss"),
        (no_result, "noResult"),
    ] {
        w.value = w.value.max((got - e[key].as_f64().expect(key)).abs());
    }

    // Score mean and lead, scaled by the model's multipliers and (1 - no result).
    let s: Vec<f64> = raw.score.iter().map(|&x| f64::from(x)).collect();
    let score_mean = s[0] * pp.score_mean_multiplier * (1.0 - no_result) * sign;
    let lead = s[2] * pp.lead_multiplier * (1.0 - no_result) * sign;
    w.score = (score_mean - e["whiteScoreSelfplay"].as_f64().expect("score")).abs();
    w.lead = (lead - e["whiteLead"].as_f64().expect("lead")).abs();
    let stdev = softplus(s[1]) * pp.score_stdev_multiplier;
    let mean_unsigned = s[0] * pp.score_mean_multiplier;
    let score_sq = (mean_unsigned * mean_unsigned + stdev * stdev) * (1.0 - no_result);
    let sq_expected = e["whiteScoreSelfplaySq"].as_f64().expect("scoreSq");
    // Reported through `score`, relative to its magnitude (it is a square of points).
    w.score = w
        .score
        .max((score_sq - sq_expected).abs() / sq_expected.abs().max(100.0));

    // Ownership: tanh, White's view.
    let own = floats(&e["whiteOwnership"]);
    for (i, &g) in own.iter().enumerate() {
        let got = f64::from(raw.ownership[(i / p.x) * buf_x + i % p.x]).tanh() * sign;
        w.ownership = w.ownership.max((got - f64::from(g)).abs());
    }
    w
}

/// Evaluates `positions` on a graph and checks every one against KataGo; prints the summary line.
fn check_golden(
    model: &ModelDesc,
    opts: BuildOptions<'_>,
    golden_file: &str,
    ps: &[&Position],
    batch: usize,
) {
    let ps: Vec<&Position> = ps
        .iter()
        .copied()
        .step_by(tengen_test_support::stride())
        .collect();
    let ps = &ps[..];
    let net = runnable(model, &opts, batch);
    let raws = net.run(ps);
    let mut worst = Worst::default();
    let mut agreed = 0;
    for (p, raw) in ps.iter().zip(&raws) {
        let w = compare(p, raw, model, opts.x_len);
        if w.within_tolerance() {
            agreed += 1;
        } else {
            eprintln!(
                "{}: policy {:.2e} value {:.2e} score {:.2e} lead {:.2e} ownership {:.2e}",
                p.id, w.policy, w.value, w.score, w.lead, w.ownership
            );
        }
        worst.merge(&w);
    }
    let mode = if opts.exact { "exact" } else { "masked" };
    // The graph alone (KataGo's own input features), so the file's line is labelled apart
    // from the end-to-end test's.
    println!(
        "golden {golden_file} (graph on KataGo's features, {}x{} {mode}): {agreed}/{} agree{}",
        opts.x_len,
        opts.y_len,
        ps.len(),
        tengen_test_support::stride_note()
    );
    println!(
        "  worst errors: policy {:.2e}, value {:.2e}, score {:.2e}, lead {:.2e}, ownership {:.2e}",
        worst.policy, worst.value, worst.score, worst.lead, worst.ownership
    );
    assert_eq!(agreed, ps.len(), "positions outside tolerance");
}

const B6_GOLDEN: &str = "katago-rawnn-g170-b6c96.jsonl";
const B10_GOLDEN: &str = "katago-rawnn-b10c384h6nbttflrs.jsonl";

#[test]
fn b6c96_19x19_masked_matches_katago() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B6);
    let all = positions(&shared, B6_GOLDEN);
    let ps: Vec<&Position> = all.iter().collect();
    check_golden(&model, BuildOptions::new(19, 19), B6_GOLDEN, &ps, 8);
}

#[test]
fn b6c96_9x9_exact_matches_katago() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B6);
    let all = positions(&shared, B6_GOLDEN);
    let ps: Vec<&Position> = all.iter().filter(|p| p.x == 9 && p.y == 9).collect();
    assert!(!ps.is_empty());
    check_golden(
        &model,
        BuildOptions::new(9, 9).exact(true),
        B6_GOLDEN,
        &ps,
        4,
    );
}

#[test]
fn b6c96_9x13_masked_matches_katago() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B6);
    let all = positions(&shared, B6_GOLDEN);
    let ps: Vec<&Position> = all.iter().filter(|p| p.x <= 9 && p.y <= 13).collect();
    assert!(ps.iter().any(|p| p.y == 13) && ps.iter().any(|p| p.y == 9));
    check_golden(&model, BuildOptions::new(9, 13), B6_GOLDEN, &ps, 4);
}

#[test]
fn b10c384_masked_matches_katago_on_a_few_positions() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B10);
    let all = positions(&shared, B10_GOLDEN);
    let ps: Vec<&Position> = all.iter().take(3).collect();
    check_golden(&model, BuildOptions::new(19, 19), B10_GOLDEN, &ps, 3);
}

#[test]
#[ignore = "slow: the transformer net on every golden position"]
fn b10c384_matches_katago_on_all_positions() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B10);
    let all = positions(&shared, B10_GOLDEN);
    let ps: Vec<&Position> = all.iter().collect();
    check_golden(&model, BuildOptions::new(19, 19), B10_GOLDEN, &ps, 6);
    check_golden(
        &model,
        BuildOptions::new(19, 19).exact(true),
        B10_GOLDEN,
        &ps,
        6,
    );
}

fn dims(vi: &ValueInfoProto) -> Vec<String> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        panic!("{} is not a tensor", vi.name)
    };
    t.shape
        .as_ref()
        .expect("shape")
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(Dim::DimValue(v)) => v.to_string(),
            Some(Dim::DimParam(p)) => p.clone(),
            None => "?".to_string(),
        })
        .collect()
}

fn props(proto: &ModelProto) -> Vec<(String, String)> {
    proto
        .metadata_props
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect()
}

#[test]
fn graphs_follow_the_onnx_contract() {
    let Some(shared) = shared_dir() else { return };
    for (file, x, y, exact) in [(B6, 19, 19, false), (B6, 9, 13, true), (B10, 19, 19, false)] {
        let model = load(&shared, file);
        let proto = build_graph(&model, &BuildOptions::new(x, y).exact(exact)).expect("build");
        assert!(proto.ir_version >= 8);
        assert!(proto
            .opset_import
            .iter()
            .any(|o| o.domain.is_empty() && o.version == OPSET_VERSION));
        assert_eq!(proto.ir_version, IR_VERSION);
        let graph = proto.graph.as_ref().expect("graph");
        let (xs, ys) = (x.to_string(), y.to_string());
        let c = model.num_input_channels.to_string();
        let gc = model.num_input_global_channels.to_string();
        let inputs: Vec<(String, Vec<String>)> = graph
            .input
            .iter()
            .map(|i| (i.name.clone(), dims(i)))
            .collect();
        let expect = |name: &str, d: [&str; 4]| {
            (
                name.to_string(),
                d.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(
            inputs,
            vec![
                expect("InputSpatial", [BATCH_DIM, &c, &ys, &xs]),
                expect("InputGlobal", [BATCH_DIM, &gc, "1", "1"]),
                expect("InputMask", [BATCH_DIM, "1", &ys, &xs]),
            ]
        );
        let pc = model.num_policy_channels.to_string();
        let sc = model.num_score_value_channels.to_string();
        let outputs: Vec<(String, Vec<String>)> = graph
            .output
            .iter()
            .map(|o| (o.name.clone(), dims(o)))
            .collect();
        assert_eq!(
            outputs,
            vec![
                expect("OutputPolicyPass", [BATCH_DIM, &pc, "1", "1"]),
                expect("OutputPolicy", [BATCH_DIM, &pc, &ys, &xs]),
                expect("OutputValue", [BATCH_DIM, "3", "1", "1"]),
                expect("OutputScoreValue", [BATCH_DIM, &sc, "1", "1"]),
                expect("OutputOwnership", [BATCH_DIM, "1", &ys, &xs]),
            ]
        );
        // Every tensor a node reads exists, and every output is produced exactly once.
        let mut known: std::collections::HashSet<&str> = graph
            .input
            .iter()
            .map(|i| i.name.as_str())
            .chain(graph.initializer.iter().map(|t| t.name.as_str()))
            .collect();
        for node in &graph.node {
            for i in &node.input {
                assert!(
                    known.contains(i.as_str()),
                    "{} reads unknown {i}",
                    node.name
                );
            }
            for o in &node.output {
                assert!(known.insert(o.as_str()), "{o} written twice");
            }
        }
        let uses_mask = graph
            .node
            .iter()
            .any(|n| n.input.iter().any(|i| i == "InputMask"));
        assert_eq!(uses_mask, !exact, "only masked graphs read InputMask");

        let p = props(&proto);
        let meta = ModelMetadata::from_props(&p).expect("metadata parses");
        assert_eq!(meta.name, model.name);
        assert_eq!(meta.model_version, model.model_version);
        assert_eq!(
            (meta.nn_x_len, meta.nn_y_len, meta.require_exact_nn_len),
            (x as u32, y as u32, exact)
        );
        assert_eq!(meta.post_process, model.post_process);
        let get = |k: &str| p.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        assert_eq!(get("katago.metadataVersion"), Some("1"));
        assert_eq!(get("katago.info.sourceSha256"), Some(model.sha256.as_str()));
        assert_eq!(
            get("katago.info.arch.numParameters"),
            Some(model.num_parameters().to_string().as_str())
        );
        let transformer = model.has_any_transformer_blocks().to_string();
        assert_eq!(
            get("katago.info.arch.hasAnyTransformerBlocks"),
            Some(transformer.as_str())
        );
        for key in [
            "katago.numInputChannels",
            "katago.numInputGlobalChannels",
            "katago.numInputMetaChannels",
            "katago.numPolicyChannels",
            "katago.numValueChannels",
            "katago.numScoreValueChannels",
            "katago.numOwnershipChannels",
            "katago.metaEncoderVersion",
            "katago.preferPassAliveUnderSuicideRules",
            "katago.preferExcludeTerritoryAdjacentToAtari",
            "katago.postProcess.shorttermScoreErrorMultiplier",
            "katago.build.requireExactNNLen",
        ] {
            assert!(get(key).is_some(), "missing {key}");
        }
    }
}

#[test]
fn build_rejects_bad_buffers_and_names() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B6);
    for (x, y) in [(1, 19), (19, 26), (0, 0)] {
        assert!(matches!(
            build_graph(&model, &BuildOptions::new(x, y)),
            Err(BuildError::BoardSize { .. })
        ));
    }
    let bad = BuildOptions {
        name: Some("bad name!"),
        ..BuildOptions::new(19, 19)
    };
    assert!(matches!(
        build_graph(&model, &bad),
        Err(BuildError::Metadata(_))
    ));
    let renamed = BuildOptions {
        name: Some("my-net_1"),
        ..BuildOptions::new(19, 19)
    };
    let proto = build_graph(&model, &renamed).expect("build");
    assert!(props(&proto)
        .iter()
        .any(|(k, v)| k == "katago.name" && v == "my-net_1"));
}

#[test]
fn progress_reports_every_trunk_block() {
    let Some(shared) = shared_dir() else { return };
    let model = load(&shared, B6);
    let seen = std::cell::RefCell::new(Vec::new());
    let report = |done: usize, total: usize| seen.borrow_mut().push((done, total));
    let opts = BuildOptions {
        progress: Some(&report),
        ..BuildOptions::new(9, 9)
    };
    build_graph(&model, &opts).expect("build");
    let n = model.trunk.blocks.len();
    assert_eq!(*seen.borrow(), (1..=n).map(|i| (i, n)).collect::<Vec<_>>());
}
