//! One network evaluation (g170-b6c96, batch 1, one thread) on each CPU backend, side by
//! side in one run: tract, the native backend, and ONNX Runtime when built with the `ort`
//! feature and ORT_DYLIB_PATH names a library. Criterion prints evaluations per second as
//! "elem/s". Needs the shared models (`TENGEN_SHARED`).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tengen_nn::backend::native::{Gemm, NativeBackend, NativeOptions};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::{Backend, BatchInput, BatchOutput};
use tengen_nn::model::load_model;
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::LoadedModel;

fn backends(
    model: &LoadedModel,
    desc: &tengen_nn::model::ModelDesc,
) -> Vec<(&'static str, Arc<dyn Backend>)> {
    let tract = TractOptions {
        threads: 1,
        max_batch: 1,
        ..TractOptions::default()
    };
    let native = NativeOptions {
        threads: 1,
        max_batch: 1,
        ..NativeOptions::default()
    };
    let native_int16 = NativeOptions {
        gemm: Gemm::Int16,
        ..native
    };
    let mut v: Vec<(&'static str, Arc<dyn Backend>)> = vec![
        (
            "tract",
            Arc::new(TractBackend::new(model, tract).expect("tract")),
        ),
        (
            "native",
            Arc::new(NativeBackend::new(desc, &model.metadata, native).expect("native")),
        ),
    ];
    if tengen_nn::backend::native::winograd::int16_available() {
        v.push((
            "native-int16",
            Arc::new(NativeBackend::new(desc, &model.metadata, native_int16).expect("native")),
        ));
    }
    v.extend(ort(model));
    v
}

/// ONNX Runtime's CPU provider, when built with it and its library is named.
#[cfg(feature = "ort")]
fn ort(model: &LoadedModel) -> Option<(&'static str, Arc<dyn Backend>)> {
    use tengen_nn::backend::ort::{OrtBackend, OrtOptions, ORT_DYLIB_PATH};
    std::env::var_os(ORT_DYLIB_PATH).filter(|p| !p.is_empty())?;
    let options = OrtOptions {
        intra_threads: 1,
        max_batch: 1,
        ..Default::default()
    };
    Some((
        "ort",
        Arc::new(OrtBackend::new(model, options).expect("ort")),
    ))
}

#[cfg(not(feature = "ort"))]
fn ort(_: &LoadedModel) -> Option<(&'static str, Arc<dyn Backend>)> {
    None
}

fn evaluations(c: &mut Criterion) {
    let Some(path) = tengen_test_support::shared_path("nn bench", "models/g170-b6c96.bin.gz")
    else {
        return;
    };
    let desc = load_model(&path).expect("model loads");
    let mut group = c.benchmark_group("b6c96_eval");
    group.throughput(Throughput::Elements(1));
    for n in [19, 9] {
        let proto = build_graph(&desc, &BuildOptions::new(n, n).exact(true)).expect("graph");
        let model = LoadedModel::from_proto(proto).expect("contract");
        let all = backends(&model, &desc);
        let shape = *all[0].1.shape();
        let mut rng = fastrand::Rng::with_seed(n as u64);
        let mut spatial: Vec<f32> = (0..shape.spatial_len())
            .map(|_| f32::from(rng.u8(..) < 40))
            .collect();
        spatial[..shape.area()].fill(1.0);
        let global = vec![0.0; shape.global_channels];
        let mask = vec![1.0; shape.area()];
        let input = BatchInput {
            rows: 1,
            spatial: &spatial,
            global: &global,
            meta: None,
            mask: &mask,
        };
        for (name, backend) in &all {
            let mut out = BatchOutput::new();
            group.bench_function(format!("{n}x{n}/{name}"), |b| {
                b.iter(|| backend.evaluate(&input, &mut out).expect("evaluates"))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, evaluations);
criterion_main!(benches);
