//! The g170-b6c96 network from ../shared as a search evaluator, for the search's tests.

use std::sync::Arc;

#[cfg(feature = "ort")]
use tengen_nn::backend::ort::{OrtBackend, OrtOptions, ORT_DYLIB_PATH};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::Backend;
use tengen_nn::eval::{Evaluator as NnEvaluator, EvaluatorConfig};
use tengen_nn::model::load_model;
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::LoadedModel;
use tengen_search::Evaluator;

/// b6c96 on one thread with batches of one for an `n`x`n` board; `None` (with a note
/// naming `what`) without the shared data.
pub fn b6c96(what: &str, n: usize) -> Option<Arc<dyn Evaluator>> {
    let path = tengen_test_support::shared_path(what, "models/g170-b6c96.bin.gz")?;
    let desc = load_model(&path).expect("model");
    let opts = BuildOptions {
        x_len: n,
        y_len: n,
        exact: true,
        name: None,
        progress: None,
    };
    let model = LoadedModel::from_proto(build_graph(&desc, &opts).expect("graph")).expect("load");
    let backend = backend(&model);
    let config = EvaluatorConfig {
        max_batch: 1,
        ..EvaluatorConfig::default()
    };
    let ev = NnEvaluator::new(backend, model.metadata, config).expect("evaluator");
    Some(Arc::new(ev))
}

/// ONNX Runtime's CPU provider when built with `ort` and `ORT_DYLIB_PATH` names its
/// library, else tract: the same network either way, ONNX Runtime the faster.
fn backend(model: &LoadedModel) -> Arc<dyn Backend> {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let name = if on_ort() { "ONNX Runtime" } else { "tract" };
        println!("b6c96 evaluates on {name}");
    });
    #[cfg(feature = "ort")]
    if on_ort() {
        let options = OrtOptions {
            intra_threads: 1,
            max_batch: 1,
            ..OrtOptions::default()
        };
        return Arc::new(OrtBackend::new(model, options).expect("ONNX Runtime backend"));
    }
    let options = TractOptions {
        threads: 1,
        ..TractOptions::default()
    };
    Arc::new(TractBackend::new(model, options).expect("tract backend"))
}

/// Whether [`b6c96`] evaluates on ONNX Runtime (else on tract).
fn on_ort() -> bool {
    #[cfg(feature = "ort")]
    return std::env::var_os(ORT_DYLIB_PATH).is_some_and(|p| !p.is_empty());
    #[cfg(not(feature = "ort"))]
    false
}
