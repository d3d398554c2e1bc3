//! Evaluators per board size, as the GTP and analysis engines ask for them: a network run
//! by a backend, or the classical engine's judgement.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Result;
use tengen_nn::backend::Backend;
use tengen_nn::eval::{Evaluator as NnEvaluator, EvaluatorConfig};
use tengen_protocol::gtp::engine::EvaluatorSource;
use tengen_rules::BoardSize;
use tengen_search::Evaluator;

use crate::accel::{self, Choice};
use crate::backend::{make_backend, BackendGraph, BackendKind, OrtArgs};
use crate::classic_eval::ClassicArgs;
use crate::network::{self, ModelSource};

/// A network and the backend that runs it.
#[derive(Clone, Debug)]
pub struct NetworkSpec {
    /// The network (`.bin.gz`, `.onnx`, or the bundled one).
    pub model: ModelSource,
    /// The backend asked for.
    pub backend: BackendKind,
    /// ONNX Runtime's settings, for `BackendKind::Ort`.
    pub ort: OrtArgs,
    /// Where the appliance keeps the graphs built from the model (and TensorRT's engines).
    /// With it the backend is settled once, falling back to tract, and its plans are built
    /// before an evaluator is handed over; without it the backend asked for runs the
    /// network, or the network fails to load (except that a model the native backend
    /// does not run goes to tract, as the appliance's does).
    pub cache: Option<PathBuf>,
}

/// The backend a network source settled on (none until it built its first network, and
/// always none without a network cache).
pub type Settled = Arc<Mutex<Option<Choice>>>;

/// The classical engine's judgement, for every board size.
pub fn classic_source(classic: ClassicArgs) -> EvaluatorSource {
    log::info!("no network: the classical engine judges positions");
    Box::new(move |_size: BoardSize| Ok(Arc::new(classic.evaluator()) as Arc<dyn Evaluator>))
}

/// The network, per board size, on `threads` cores with this batching; the backend it
/// settled on goes into the returned record.
pub fn network_source(
    spec: NetworkSpec,
    threads: usize,
    batching: EvaluatorConfig,
) -> (EvaluatorSource, Settled) {
    let settled = Settled::default();
    let source = match spec.cache.clone() {
        None => Box::new(move |size: BoardSize| {
            let make = || -> Result<Arc<dyn Evaluator>> {
                let model = network::load_for_board(&spec.model, size)?;
                let max_batch = batching.max_batch;
                let backend = match spec.backend {
                    // The default on x86-64: a model it does not run goes to tract.
                    BackendKind::Native => {
                        let (b, _) = accel::settle(
                            BackendKind::Native,
                            &spec.model,
                            &model,
                            threads,
                            max_batch,
                            &spec.ort,
                        )?;
                        b
                    }
                    kind => {
                        let graph = BackendGraph::new(kind, &spec.model, &model, &spec.ort)?;
                        make_backend(&graph, threads, max_batch, &spec.ort)?
                    }
                };
                log::info!("network for {size}: {}", backend.name());
                let nn = NnEvaluator::new(backend, model.metadata.clone(), batching.clone())?;
                Ok(Arc::new(nn) as Arc<dyn Evaluator>)
            };
            make().map_err(|e| format!("cannot load the network for {size}: {e:#}"))
        }) as EvaluatorSource,
        Some(cache) => appliance_source(spec, cache, threads, batching, settled.clone()),
    };
    (source, settled)
}

/// A network evaluator over a backend for `graph`, and that backend.
pub(crate) fn nn_evaluator(
    graph: &BackendGraph<'_>,
    threads: usize,
    batching: EvaluatorConfig,
    ort: &OrtArgs,
) -> Result<(Arc<NnEvaluator>, Arc<dyn Backend>)> {
    let backend = make_backend(graph, threads, batching.max_batch, ort)?;
    let nn = NnEvaluator::new(backend.clone(), graph.model().metadata.clone(), batching)?;
    Ok((Arc::new(nn), backend))
}

/// The appliance's evaluators per board size: the backend is settled on the first size
/// (at start-up, before READY) and kept for the others; graphs come from the cache; the
/// backend's plans are built before the evaluator is handed over, so the first move
/// after READY does not pay for them.
fn appliance_source(
    spec: NetworkSpec,
    cache: PathBuf,
    threads: usize,
    batching: EvaluatorConfig,
    settled: Settled,
) -> EvaluatorSource {
    Box::new(move |size: BoardSize| {
        let make = || -> Result<Arc<dyn Evaluator>> {
            let loaded = network::load_cached(&spec.model, size, &cache)?;
            let max_batch = batching.max_batch;
            let backend = {
                let mut settled = settled.lock().unwrap_or_else(PoisonError::into_inner);
                match &*settled {
                    Some(c) => {
                        let graph = BackendGraph::new(c.backend, &spec.model, &loaded, &c.ort)?;
                        make_backend(&graph, threads, max_batch, &c.ort)?
                    }
                    None => {
                        let (b, choice) = accel::settle(
                            spec.backend,
                            &spec.model,
                            &loaded,
                            threads,
                            max_batch,
                            &spec.ort,
                        )?;
                        *settled = Some(choice);
                        b
                    }
                }
            };
            backend.warm_up(&[max_batch])?;
            log::info!("network for {size}: {}", backend.name());
            let e = NnEvaluator::new(backend, loaded.metadata, batching.clone())?;
            Ok(Arc::new(e))
        };
        make().map_err(|e| format!("cannot load the network for {size}: {e:#}"))
    })
}
