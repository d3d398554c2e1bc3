//! The g170-b6c96 network from ../shared as a search evaluator, for the search's tests.

use std::sync::Arc;

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

/// ONNX Runtime's CPU provider when `tengen-nn` is built with `ort` (as under CI's
/// `--features tengen/ort`) and `ORT_DYLIB_PATH` names its library, else tract: the same
/// network either way, ONNX Runtime the faster.
fn backend(model: &LoadedModel) -> Arc<dyn Backend> {
    let ort = tengen_nn::backend::ort_cpu_from_env(model, 1, 1);
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        let name = if ort.is_some() {
            "ONNX Runtime"
        } else {
            "tract"
        };
        println!("b6c96 evaluates on {name}");
    });
    if let Some(b) = ort {
        return b.expect("ONNX Runtime backend");
    }
    let options = TractOptions {
        threads: 1,
        ..TractOptions::default()
    };
    Arc::new(TractBackend::new(model, options).expect("tract backend"))
}
