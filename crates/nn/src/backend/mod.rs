//! Backends evaluate batches of network inputs: [`tract`] on the CPU (always built),
//! [`native`] (Tengen's own CPU code for convolutional networks) and [`ort`] (ONNX Runtime,
//! with the `ort` cargo feature).
//!
//! Every backend implements [`Backend`]: flat NCHW `f32` inputs for `rows` positions in,
//! raw outputs for the same rows out, into caller-owned [`BatchOutput`] buffers that are
//! reused from call to call. Backends are `Send + Sync`; many search threads may call
//! [`Backend::evaluate`] at once.

pub mod bench;
mod io;
pub mod native;
#[cfg(feature = "ort")]
pub mod ort;
mod spread;
pub mod synthetic;
pub mod tract;

pub use io::{BatchInput, BatchOutput, IoShape, OutputRow};

/// ONNX Runtime's CPU provider for `model` (`threads` intra-op threads, batches up to
/// `max_batch`) when this build has the `ort` feature and `ORT_DYLIB_PATH` names the
/// library; `None` otherwise. Lets crates that use the network only in their tests pick
/// the faster backend without a cargo feature of their own.
pub fn ort_cpu_from_env(
    model: &crate::onnx::load::LoadedModel,
    threads: usize,
    max_batch: usize,
) -> Option<Result<std::sync::Arc<dyn Backend>, BackendError>> {
    #[cfg(feature = "ort")]
    if std::env::var_os(ort::ORT_DYLIB_PATH).is_some_and(|p| !p.is_empty()) {
        let options = ort::OrtOptions {
            intra_threads: threads,
            max_batch,
            ..ort::OrtOptions::default()
        };
        return Some(
            ort::OrtBackend::new(model, options)
                .map(|b| std::sync::Arc::new(b) as std::sync::Arc<dyn Backend>),
        );
    }
    let _ = (model, threads, max_batch);
    None
}

/// Why a backend could not be built or could not evaluate a batch.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// An input slice whose length does not fit the batch.
    #[error("input {name} has {found} values, expected {expected} ({rows} rows)")]
    InputLength {
        /// Which input.
        name: &'static str,
        /// Values given.
        found: usize,
        /// Values expected.
        expected: usize,
        /// Rows in the batch.
        rows: usize,
    },
    /// `InputMeta` given to a model without it, or missing for a model with it.
    #[error("the model {needs} an InputMeta input")]
    MetaInput {
        /// "needs" or "has no".
        needs: &'static str,
    },
    /// A batch of zero rows or more rows than the backend accepts.
    #[error("batch of {rows} rows is outside 1..={max}")]
    BatchSize {
        /// Rows asked for.
        rows: usize,
        /// Largest batch accepted.
        max: usize,
    },
    /// The model does not follow the ONNX contract.
    #[error(transparent)]
    Load(#[from] crate::onnx::load::LoadError),
    /// tract failed to build a plan or to run it.
    #[error("tract: {0}")]
    Tract(String),
    /// ONNX Runtime failed to load, build a session or run it.
    #[error("ONNX Runtime: {0}")]
    Ort(String),
    /// The library or device a backend needs is not available here.
    #[error("backend unavailable: {0}")]
    Unavailable(String),
    /// An output of unexpected size (a graph that computes something other than it declares).
    #[error("output {name} has {found} values, expected {expected}")]
    OutputLength {
        /// Which output.
        name: &'static str,
        /// Values produced.
        found: usize,
        /// Values expected.
        expected: usize,
    },
    /// A third-party library panicked; the panic was contained.
    #[error("{0} panicked: {1}")]
    Panicked(&'static str, String),
}

/// Evaluates batches of positions with one network at one board buffer size.
pub trait Backend: Send + Sync {
    /// A short description for logs, e.g. `tract (2 threads)` or `ort CUDA:0`.
    fn name(&self) -> &str;

    /// The tensor shapes of one row (channel counts and the board buffer size).
    fn shape(&self) -> &IoShape;

    /// The largest batch [`Backend::evaluate`] accepts.
    fn max_batch(&self) -> usize;

    /// The batch size at which this backend is most efficient per evaluation (a hint for batchers).
    fn preferred_batch(&self) -> usize;

    /// Prepares whatever a batch size needs (plans, sessions) so the first evaluation is not slow.
    fn warm_up(&self, _batch_sizes: &[usize]) -> Result<(), BackendError> {
        Ok(())
    }

    /// Evaluates `input.rows` positions, resizing `output`'s buffers to fit (no allocation when
    /// they are already large enough).
    fn evaluate(
        &self,
        input: &BatchInput<'_>,
        output: &mut BatchOutput,
    ) -> Result<(), BackendError>;
}

/// Turns a panic payload into text for [`BackendError::Panicked`].
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
