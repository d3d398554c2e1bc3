//! Evaluators per board size, as the GTP and analysis engines ask for them: a network run
//! by a backend, or the classical engine's judgement.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};

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

/// One evaluator per board size for several users: the appliance's game engine and its
/// pool worker share one network's weights, batching server and cache instead of
/// building two (two weight copies and two caches of 16,384 outputs grew the daemon's
/// memory for half an hour in the soak). An evaluator lives while a user holds it.
pub(crate) struct SharedSource(Arc<Mutex<SharedInner>>);

/// The maker of evaluators and what it made, by board size.
struct SharedInner {
    make: EvaluatorSource,
    made: HashMap<BoardSize, Weak<dyn Evaluator>>,
}

impl SharedSource {
    /// Shares what `make` builds.
    pub(crate) fn new(make: EvaluatorSource) -> SharedSource {
        SharedSource(Arc::new(Mutex::new(SharedInner {
            make,
            made: HashMap::new(),
        })))
    }

    /// A source for one more user: the evaluator of a size another user holds, or a new
    /// one (built under the lock, so two users never build the same network twice).
    pub(crate) fn source(&self) -> EvaluatorSource {
        let shared = self.0.clone();
        Box::new(move |size: BoardSize| {
            let mut inner = shared.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(e) = inner.made.get(&size).and_then(Weak::upgrade) {
                return Ok(e);
            }
            let e = (inner.make)(size)?;
            inner.made.insert(size, Arc::downgrade(&e));
            Ok(e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tengen_search::UniformEvaluator;

    #[test]
    fn users_of_a_shared_source_get_one_evaluator_per_size_while_they_hold_it() {
        let built = Arc::new(AtomicUsize::new(0));
        let count = built.clone();
        let shared = SharedSource::new(Box::new(move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>)
        }));
        let (mut game, mut pool) = (shared.source(), shared.source());
        let nine = BoardSize::square(9).unwrap();
        let a = game(nine).unwrap();
        let b = pool(nine).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(built.load(Ordering::SeqCst), 1);
        let _c = pool(BoardSize::square(19).unwrap()).unwrap();
        assert_eq!(built.load(Ordering::SeqCst), 2);
        // Dropped by both users, it is gone: the next user builds it again.
        drop((a, b));
        let _d = game(nine).unwrap();
        assert_eq!(built.load(Ordering::SeqCst), 3);
    }
}
