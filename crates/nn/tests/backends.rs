//! The backends on small random-weight graphs that follow the contract: batches equal single
//! runs, threads do not change results, bad inputs are typed errors, and (with the `ort`
//! feature and ORT_DYLIB_PATH set) ONNX Runtime agrees with tract.

use std::sync::Arc;

use tengen_nn::backend::synthetic::SyntheticNet;
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::{Backend, BackendError, BatchInput, BatchOutput, IoShape};
use tengen_nn::onnx::load::LoadedModel;
use tengen_nn::onnx::meta::ModelMetadata;

/// Owned inputs for `rows` positions; even rows use a smaller board inside the buffer.
struct Inputs {
    rows: usize,
    spatial: Vec<f32>,
    global: Vec<f32>,
    meta: Option<Vec<f32>>,
    mask: Vec<f32>,
}

impl Inputs {
    fn random(shape: &IoShape, rows: usize, seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut mask = vec![0.0; rows * shape.mask_len()];
        for r in 0..rows {
            let board = if r % 2 == 0 {
                shape.x_len.min(shape.y_len) - 2
            } else {
                shape.x_len.max(shape.y_len)
            };
            for y in 0..shape.y_len {
                for x in 0..shape.x_len {
                    if x < board && y < board {
                        mask[r * shape.mask_len() + y * shape.x_len + x] = 1.0;
                    }
                }
            }
        }
        let mut spatial: Vec<f32> = (0..rows * shape.spatial_len())
            .map(|_| f32::from(rng.bool()))
            .collect();
        // Channel 0 is the mask, as in KataGo's features.
        for r in 0..rows {
            let dst = r * shape.spatial_len();
            spatial[dst..dst + shape.area()]
                .copy_from_slice(&mask[r * shape.area()..(r + 1) * shape.area()]);
        }
        Inputs {
            rows,
            spatial,
            global: (0..rows * shape.global_channels)
                .map(|_| rng.f32() - 0.5)
                .collect(),
            meta: (shape.meta_channels > 0)
                .then(|| (0..rows * shape.meta_channels).map(|_| rng.f32()).collect()),
            mask,
        }
    }

    fn batch(&self) -> BatchInput<'_> {
        BatchInput {
            rows: self.rows,
            spatial: &self.spatial,
            global: &self.global,
            meta: self.meta.as_deref(),
            mask: &self.mask,
        }
    }
}

fn loaded(meta: &ModelMetadata, net: &SyntheticNet) -> LoadedModel {
    LoadedModel::from_proto(net.build(meta)).unwrap()
}

fn meta(x: u32, y: u32) -> ModelMetadata {
    ModelMetadata::for_version("backend-test", 15, x, y).unwrap()
}

fn tract(model: &LoadedModel, threads: usize, sub_batch: usize) -> TractBackend {
    TractBackend::new(
        model,
        TractOptions {
            threads,
            sub_batch,
            max_batch: 64,
        },
    )
    .unwrap()
}

/// Largest absolute difference between two outputs, over every buffer.
fn max_diff(a: &BatchOutput, b: &BatchOutput) -> f32 {
    let pairs = [
        (&a.policy_pass, &b.policy_pass),
        (&a.policy, &b.policy),
        (&a.value, &b.value),
        (&a.score_value, &b.score_value),
        (&a.ownership, &b.ownership),
    ];
    let mut worst = 0.0f32;
    for (x, y) in pairs {
        assert_eq!(x.len(), y.len());
        for (p, q) in x.iter().zip(y) {
            assert!(p.is_finite() && q.is_finite());
            worst = worst.max((p - q).abs());
        }
    }
    worst
}

/// Evaluates each row alone and stitches the results into one batch output.
fn row_by_row(backend: &dyn Backend, inputs: &Inputs) -> BatchOutput {
    let shape = *backend.shape();
    let mut all = BatchOutput::new();
    all.prepare(&shape, inputs.rows);
    let mut one = BatchOutput::new();
    for r in 0..inputs.rows {
        let row = inputs.batch().slice(&shape, r, 1);
        backend.evaluate(&row, &mut one).unwrap();
        let src = one.row(&shape, 0);
        let lens = [
            shape.policy_channels,
            shape.policy_len(),
            shape.value_channels,
            shape.score_value_channels,
            shape.ownership_len(),
        ];
        let dsts = [
            &mut all.policy_pass,
            &mut all.policy,
            &mut all.value,
            &mut all.score_value,
            &mut all.ownership,
        ];
        let srcs = [
            src.policy_pass,
            src.policy,
            src.value,
            src.score_value,
            src.ownership,
        ];
        for ((dst, src), len) in dsts.into_iter().zip(srcs).zip(lens) {
            dst[r * len..(r + 1) * len].copy_from_slice(src);
        }
    }
    all
}

#[test]
fn tract_batch_rows_equal_single_runs() {
    for (x, y) in [(9, 9), (19, 19), (13, 9)] {
        let model = loaded(&meta(x, y), &SyntheticNet::tiny(3));
        let backend = tract(&model, 2, 1);
        let inputs = Inputs::random(backend.shape(), 4, 11);
        let mut batched = BatchOutput::new();
        backend.evaluate(&inputs.batch(), &mut batched).unwrap();
        assert_eq!(batched.rows, 4);
        let single = row_by_row(&backend, &inputs);
        let diff = max_diff(&batched, &single);
        assert!(
            diff <= 1e-6,
            "{x}x{y}: batch 4 differs from batch 1 by {diff}"
        );
        // Rows differ from each other (the net is not constant).
        let shape = *backend.shape();
        assert_ne!(batched.row(&shape, 0).value, batched.row(&shape, 1).value);
    }
}

#[test]
fn tract_whole_batch_plans_agree_with_batch_one() {
    let model = loaded(&meta(9, 9), &SyntheticNet::tiny(5));
    let split = tract(&model, 1, 1);
    let whole = tract(&model, 1, 4);
    let mixed = tract(&model, 2, 3);
    let inputs = Inputs::random(split.shape(), 7, 12);
    let mut a = BatchOutput::new();
    let mut b = BatchOutput::new();
    let mut c = BatchOutput::new();
    split.evaluate(&inputs.batch(), &mut a).unwrap();
    whole.evaluate(&inputs.batch(), &mut b).unwrap();
    mixed.evaluate(&inputs.batch(), &mut c).unwrap();
    assert!(max_diff(&a, &b) <= 1e-5, "{}", max_diff(&a, &b));
    assert!(max_diff(&a, &c) <= 1e-5, "{}", max_diff(&a, &c));
}

#[test]
fn tract_is_usable_from_many_threads() {
    let model = loaded(&meta(9, 9), &SyntheticNet::tiny(6));
    let backend: Arc<dyn Backend> = Arc::new(tract(&model, 2, 1));
    let inputs = Arc::new(Inputs::random(backend.shape(), 5, 13));
    let mut expected = BatchOutput::new();
    backend.evaluate(&inputs.batch(), &mut expected).unwrap();
    let expected = Arc::new(expected);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (backend, inputs, expected) = (
                Arc::clone(&backend),
                Arc::clone(&inputs),
                Arc::clone(&expected),
            );
            std::thread::spawn(move || {
                let mut out = BatchOutput::new();
                for _ in 0..5 {
                    backend.evaluate(&inputs.batch(), &mut out).unwrap();
                    assert_eq!(max_diff(&out, &expected), 0.0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn meta_input_and_unmasked_graphs_run() {
    let mut m = meta(9, 9);
    m.meta_encoder_version = 1;
    m.num_input_meta_channels = 192;
    let model = loaded(&m, &SyntheticNet::tiny(7));
    let backend = tract(&model, 1, 1);
    assert_eq!(backend.shape().meta_channels, 192);
    let inputs = Inputs::random(backend.shape(), 2, 14);
    let mut out = BatchOutput::new();
    backend.evaluate(&inputs.batch(), &mut out).unwrap();

    // requireExactNNLen: InputMask is declared (last) but nothing reads it.
    let mut m = meta(9, 9);
    m.require_exact_nn_len = true;
    let model = loaded(&m, &SyntheticNet::tiny(8));
    let backend = tract(&model, 1, 1);
    let inputs = Inputs::random(backend.shape(), 2, 15);
    backend.evaluate(&inputs.batch(), &mut out).unwrap();
    assert_eq!(out.rows, 2);
}

#[test]
fn bad_inputs_are_typed_errors() {
    let model = loaded(&meta(9, 9), &SyntheticNet::tiny(9));
    let backend = tract(&model, 1, 1);
    let inputs = Inputs::random(backend.shape(), 2, 16);
    let mut out = BatchOutput::new();
    let mut bad = inputs.batch();
    bad.spatial = &inputs.spatial[1..];
    assert!(matches!(
        backend.evaluate(&bad, &mut out),
        Err(BackendError::InputLength {
            name: "InputSpatial",
            ..
        })
    ));
    let mut bad = inputs.batch();
    bad.rows = 0;
    assert!(matches!(
        backend.evaluate(&bad, &mut out),
        Err(BackendError::BatchSize { .. })
    ));
    let mut bad = inputs.batch();
    bad.rows = 65;
    assert!(matches!(
        backend.evaluate(&bad, &mut out),
        Err(BackendError::BatchSize { .. })
    ));
    let mut bad = inputs.batch();
    bad.meta = Some(&inputs.global);
    assert!(matches!(
        backend.evaluate(&bad, &mut out),
        Err(BackendError::MetaInput { .. })
    ));
}

#[test]
fn unsupported_graph_is_an_error_not_a_panic() {
    let mut proto = SyntheticNet::tiny(10).build(&meta(9, 9));
    proto.graph.as_mut().unwrap().node[0].op_type = "NoSuchOperator".into();
    let model = LoadedModel::from_proto(proto).unwrap();
    assert!(TractBackend::new(&model, TractOptions::default()).is_err());
}

#[cfg(feature = "ort")]
mod ort {
    use super::*;
    use tengen_nn::backend::ort::{ExecutionProvider, OrtBackend, OrtOptions, ORT_DYLIB_PATH};

    fn library_configured() -> bool {
        std::env::var_os(ORT_DYLIB_PATH).is_some_and(|p| !p.is_empty())
    }

    #[test]
    fn ort_agrees_with_tract() {
        if !library_configured() {
            eprintln!("ort_agrees_with_tract: skipped ({ORT_DYLIB_PATH} is not set)");
            return;
        }
        for (x, y) in [(9, 9), (19, 19)] {
            let model = loaded(&meta(x, y), &SyntheticNet::b6c96(21));
            let tract = tract(&model, 2, 1);
            let ort = OrtBackend::new(&model, OrtOptions::default()).unwrap();
            assert_eq!(ort.provider(), &ExecutionProvider::Cpu);
            for rows in [1, 4] {
                let inputs = Inputs::random(tract.shape(), rows, 22);
                let mut a = BatchOutput::new();
                let mut b = BatchOutput::new();
                tract.evaluate(&inputs.batch(), &mut a).unwrap();
                ort.evaluate(&inputs.batch(), &mut b).unwrap();
                let diff = max_diff(&a, &b);
                assert!(
                    diff <= 1e-5,
                    "{x}x{y} batch {rows}: ort and tract differ by {diff}"
                );
            }
        }
    }

    #[test]
    fn ort_sub_batches_give_the_whole_batch_answers() {
        if !library_configured() {
            eprintln!("ort_sub_batches_give_the_whole_batch_answers: skipped ({ORT_DYLIB_PATH} is not set)");
            return;
        }
        let model = loaded(&meta(9, 9), &SyntheticNet::tiny(26));
        let whole = OrtBackend::new(
            &model,
            OrtOptions {
                sub_batch: Some(usize::MAX),
                ..OrtOptions::default()
            },
        )
        .unwrap();
        let inputs = Inputs::random(whole.shape(), 7, 27);
        let mut expected = BatchOutput::new();
        whole.evaluate(&inputs.batch(), &mut expected).unwrap();
        for sub in [1, 3, 7] {
            let ort = OrtBackend::new(
                &model,
                OrtOptions {
                    sub_batch: Some(sub),
                    intra_threads: 1,
                    ..OrtOptions::default()
                },
            )
            .unwrap();
            let mut out = BatchOutput::new();
            ort.evaluate(&inputs.batch(), &mut out).unwrap();
            let diff = max_diff(&out, &expected);
            assert!(diff <= 1e-5, "sub-batch {sub}: differs by {diff}");
        }
    }

    #[test]
    fn gpu_chain_falls_back_to_cpu() {
        if !library_configured() {
            eprintln!("gpu_chain_falls_back_to_cpu: skipped ({ORT_DYLIB_PATH} is not set)");
            return;
        }
        let model = loaded(&meta(9, 9), &SyntheticNet::tiny(23));
        let options = OrtOptions {
            intra_threads: 1,
            sessions: 2,
            ..OrtOptions::gpu_chain(0, true, None)
        };
        let ort = OrtBackend::new(&model, options).unwrap();
        // This machine has no GPU (and the PyPI library no GPU providers).
        assert_eq!(ort.provider(), &ExecutionProvider::Cpu);
        let passed: Vec<String> = ort
            .passed_over()
            .iter()
            .map(|(p, _)| p.to_string())
            .collect();
        assert_eq!(passed, ["TensorRT:0 FP16", "CUDA:0"]);
        let inputs = Inputs::random(ort.shape(), 3, 24);
        let mut out = BatchOutput::new();
        ort.evaluate(&inputs.batch(), &mut out).unwrap();
        let single = row_by_row(&ort, &inputs);
        assert!(max_diff(&out, &single) <= 1e-5);
    }

    #[test]
    fn chain_without_cpu_fails_naming_every_provider() {
        if !library_configured() {
            eprintln!("chain_without_cpu_fails_naming_every_provider: skipped ({ORT_DYLIB_PATH} is not set)");
            return;
        }
        let model = loaded(&meta(9, 9), &SyntheticNet::tiny(29));
        let options = OrtOptions {
            cpu_last: false,
            ..OrtOptions::gpu_chain(1, false, None)
        };
        let options = OrtOptions {
            providers: options.providers[..2].to_vec(),
            ..options
        };
        match OrtBackend::new(&model, options) {
            Err(BackendError::Unavailable(msg)) => {
                assert!(
                    msg.contains("TensorRT:1") && msg.contains("CUDA:1"),
                    "{msg}"
                )
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(b) => panic!("settled on {} without a GPU", b.provider()),
        }
    }

    #[test]
    fn missing_library_is_a_clear_error() {
        let model = loaded(&meta(9, 9), &SyntheticNet::tiny(25));
        let options = OrtOptions {
            library: Some("/nonexistent/libonnxruntime.so".into()),
            ..OrtOptions::default()
        };
        if library_configured() {
            // Once a library is loaded the process keeps it; only check the error path
            // when this test runs first.
            let _ = OrtBackend::new(&model, options);
            return;
        }
        match OrtBackend::new(&model, options) {
            Err(BackendError::Unavailable(msg)) => assert!(msg.contains("does not exist"), "{msg}"),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("loaded a library that does not exist"),
        }
        match OrtBackend::new(&model, OrtOptions::default()) {
            Err(BackendError::Unavailable(msg)) => assert!(msg.contains(ORT_DYLIB_PATH), "{msg}"),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("loaded ONNX Runtime without a library path"),
        }
    }
}

#[cfg(not(feature = "ort"))]
#[test]
fn ort_agrees_with_tract() {
    eprintln!("ort_agrees_with_tract: skipped (built without the `ort` feature)");
}

/// Throughput of the backends on a b6c96 net (the real g170 net from `../shared/models` when the
/// model importer can read it, else a random-weight net of the same shape). Run with
/// `cargo test --release -p tengen-nn [--features ort] --test backends -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark: run explicitly"]
fn bench_backends() {
    use std::time::{Duration, Instant};
    use tengen_nn::backend::bench::measure;

    let seconds: f64 = std::env::var("TENGEN_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let time = Duration::from_secs_f64(seconds);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("cores: {cores}, {seconds} s per measurement");
    for (x, y) in [(19, 19), (9, 9)] {
        let started = Instant::now();
        let (model, source) = bench_model(x, y);
        println!(
            "\n== {x}x{y} {source}: model ready in {:.2}s",
            started.elapsed().as_secs_f64()
        );
        let bytes = model.to_bytes();
        let started = Instant::now();
        LoadedModel::from_bytes(&bytes).unwrap();
        println!(
            "ONNX decode + contract check ({} bytes): {:.3}s",
            bytes.len(),
            started.elapsed().as_secs_f64()
        );
        let t = tract(&model, 1, 1);
        println!(
            "tract analysis (translate + declutter, once): {:.3}s",
            t.timings().analyse_seconds
        );
        nnef_experiment(&t);
        for rows in [1, 8, 16] {
            println!(
                "tract plan build for batch {rows}: {:.3}s",
                t.measure_plan_build(rows).unwrap()
            );
        }
        let report = |label: &str, backend: &dyn Backend, rows: usize, callers: usize| {
            let r = measure(backend, rows, callers, time).unwrap();
            println!(
                "{label:<48} batch {rows:>2} callers {callers}: {:>7.1} evals/s",
                r.evals_per_second
            );
        };
        for (threads, sub) in [(1, 1), (2, 1), (1, 8), (2, 8)] {
            let b = tract(&model, threads, sub);
            let label = format!("tract threads={threads} sub_batch={sub}");
            for rows in [1, 8, 16] {
                report(&label, &b, rows, 1);
            }
        }
        report("tract threads=1 sub_batch=1", &tract(&model, 1, 1), 1, 2);
        bench_ort(&model, &report);
    }
}

/// Would an NNEF copy of the decluttered model make a restart faster? Times writing it,
/// reading it back, and optimizing a batch-1 plan from the copy.
fn nnef_experiment(backend: &TractBackend) {
    use std::collections::HashMap;
    use std::time::Instant;
    use tract_onnx::prelude::{Framework, IntoRunnable, TDim};
    use tract_onnx::WithOnnx;

    let nnef = tract_nnef::nnef().with_onnx();
    let mut buf = Vec::new();
    let started = Instant::now();
    if let Err(e) = nnef.write_to_tar(backend.base_model(), &mut buf) {
        println!("NNEF export failed: {e:#}");
        return;
    }
    let write = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let reloaded = match nnef.model_for_read(&mut &buf[..]) {
        Ok(m) => m,
        Err(e) => {
            println!("NNEF import failed: {e:#}");
            return;
        }
    };
    let read = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let batch = reloaded.symbols.sym("tengen_batch");
    let subs: HashMap<_, _> = [(batch, TDim::Val(1))].into();
    let plan = reloaded
        .set_symbols(&subs)
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable());
    println!(
        "NNEF cache: {} bytes, write {write:.3}s, read {read:.3}s, batch-1 plan from it {:.3}s ({})",
        buf.len(),
        started.elapsed().as_secs_f64(),
        if plan.is_ok() { "ok" } else { "failed" }
    );
}

fn bench_model(x: u32, y: u32) -> (LoadedModel, String) {
    // Without the real net the figures are for random weights of its shape: not a skip.
    let path = tengen_test_support::shared_root().join("models/g170-b6c96.bin.gz");
    if let Some(model) = real_model(&path, x as usize, y as usize) {
        return (model, format!("real net {}", path.display()));
    }
    let m = ModelMetadata::for_version("synthetic-b6c96", 8, x, y).unwrap();
    (
        loaded(&m, &SyntheticNet::b6c96(1)),
        "random-weight b6c96".into(),
    )
}

fn real_model(path: &std::path::Path, x: usize, y: usize) -> Option<LoadedModel> {
    use tengen_nn::onnx::build::{build_graph, BuildOptions};
    let desc = match tengen_nn::model::load_model(path) {
        Ok(d) => d,
        Err(e) => {
            println!("(real net unavailable: {e})");
            return None;
        }
    };
    let proto = match build_graph(&desc, &BuildOptions::new(x, y)) {
        Ok(p) => p,
        Err(e) => {
            println!("(graph build failed: {e})");
            return None;
        }
    };
    match LoadedModel::from_proto(proto) {
        Ok(m) => Some(m),
        Err(e) => {
            println!("(built graph breaks the contract: {e})");
            None
        }
    }
}

#[cfg(feature = "ort")]
fn bench_ort(model: &LoadedModel, report: &dyn Fn(&str, &dyn Backend, usize, usize)) {
    use tengen_nn::backend::ort::{OrtBackend, OrtOptions};
    if std::env::var_os("ORT_DYLIB_PATH").is_none() {
        println!("ort: skipped (ORT_DYLIB_PATH is not set)");
        return;
    }
    for (intra, sessions) in [(1, 1), (2, 1), (1, 2)] {
        let options = OrtOptions {
            intra_threads: intra,
            sessions,
            ..OrtOptions::default()
        };
        let b = OrtBackend::new(model, options).unwrap();
        let label = format!("ort intra_threads={intra} sessions={sessions}");
        for rows in [1, 8, 16] {
            report(&label, &b, rows, sessions);
        }
    }
}

#[cfg(not(feature = "ort"))]
fn bench_ort(_: &LoadedModel, _: &dyn Fn(&str, &dyn Backend, usize, usize)) {
    println!("ort: skipped (built without the `ort` feature)");
}
