//! The ONNX Runtime backend (cargo feature `ort`), through the `ort` crate with `load-dynamic`:
//! the library is opened at run time from [`OrtOptions::library`] or `ORT_DYLIB_PATH`, so no
//! build downloads or links a binary.
//!
//! Execution providers are tried in the configured order when the backend starts (typically
//! TensorRT, then CUDA, then CPU); the first whose session builds is used for the whole run,
//! and the choice is logged.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::{Session, SessionInputValue};
use ort::value::TensorRef;

use super::io::{output_lens, output_slices, split_outputs, OUTPUT_NAMES};
use super::{panic_message, Backend, BackendError, BatchInput, BatchOutput, IoShape};
use crate::onnx::load::LoadedModel;

/// The environment variable naming the ONNX Runtime library when no path is configured.
pub const ORT_DYLIB_PATH: &str = "ORT_DYLIB_PATH";

/// Where ONNX Runtime runs the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecutionProvider {
    /// ONNX Runtime's own CPU kernels.
    Cpu,
    /// NVIDIA CUDA (needs the `cuda` feature and a GPU build of ONNX Runtime).
    Cuda {
        /// The GPU to use.
        device_id: i32,
    },
    /// NVIDIA TensorRT (needs the `tensorrt` feature and a GPU build of ONNX Runtime).
    TensorRt {
        /// The GPU to use.
        device_id: i32,
        /// Let TensorRT run layers in FP16.
        fp16: bool,
        /// Where TensorRT keeps built engines so that a restart does not rebuild them.
        engine_cache_dir: Option<PathBuf>,
    },
}

impl std::fmt::Display for ExecutionProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecutionProvider::Cpu => write!(f, "CPU"),
            ExecutionProvider::Cuda { device_id } => write!(f, "CUDA:{device_id}"),
            ExecutionProvider::TensorRt {
                device_id, fp16, ..
            } => write!(
                f,
                "TensorRT:{device_id}{}",
                if *fp16 { " FP16" } else { "" }
            ),
        }
    }
}

/// How the ONNX Runtime backend is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrtOptions {
    /// The `libonnxruntime` to open; `None` reads `ORT_DYLIB_PATH`.
    pub library: Option<PathBuf>,
    /// Providers to try in order; the first that builds a session wins.
    pub providers: Vec<ExecutionProvider>,
    /// Try ONNX Runtime's CPU provider after the listed ones (false: fail instead, e.g. so
    /// that the caller can fall back to another CPU backend).
    pub cpu_last: bool,
    /// Intra-op threads of each session (CPU provider).
    pub intra_threads: usize,
    /// Independent sessions, so that this many callers can evaluate at once.
    pub sessions: usize,
    /// The largest batch accepted by [`Backend::evaluate`].
    pub max_batch: usize,
    /// Rows per ONNX Runtime run (a batch is cut into runs of at most this many rows);
    /// `None` picks: 1 for the CPU provider with one intra-op thread, else the whole batch.
    pub sub_batch: Option<usize>,
}

impl Default for OrtOptions {
    /// CPU, one session using every core, batches up to 256, sub-batch picked by provider.
    fn default() -> Self {
        OrtOptions {
            library: None,
            providers: vec![ExecutionProvider::Cpu],
            cpu_last: true,
            intra_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            sessions: 1,
            max_batch: 256,
            sub_batch: None,
        }
    }
}

/// Rows per run for a provider: single-threaded CPU runs gain nothing from batching in
/// ONNX Runtime 1.31 (measured on b6c96: equal per eval on 19x19, 8% slower at batch 8 on
/// 9x9), while multi-threaded CPU and GPU runs gain from whole batches.
fn pick_sub_batch(options: &OrtOptions, provider: &ExecutionProvider) -> usize {
    match options.sub_batch {
        Some(n) => n.max(1),
        None if *provider == ExecutionProvider::Cpu && options.intra_threads <= 1 => 1,
        None => usize::MAX,
    }
}

impl OrtOptions {
    /// The GPU chain TensorRT → CUDA → CPU on one device.
    pub fn gpu_chain(device_id: i32, fp16: bool, engine_cache_dir: Option<PathBuf>) -> Self {
        OrtOptions {
            providers: vec![
                ExecutionProvider::TensorRt {
                    device_id,
                    fp16,
                    engine_cache_dir,
                },
                ExecutionProvider::Cuda { device_id },
                ExecutionProvider::Cpu,
            ],
            ..OrtOptions::default()
        }
    }
}

/// An ONNX Runtime backend; see the module documentation.
pub struct OrtBackend {
    name: String,
    shape: IoShape,
    provider: ExecutionProvider,
    sessions: Vec<Mutex<Session>>,
    next: AtomicUsize,
    max_batch: usize,
    preferred_batch: usize,
    /// Rows per ONNX Runtime run.
    sub_batch: usize,
    /// The providers tried before `provider`, each with why its session did not build.
    passed_over: Vec<(ExecutionProvider, String)>,
}

/// The environment every session is built in; kept once ONNX Runtime has loaded.
static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();

/// Opens ONNX Runtime (once per process) and returns its environment, or a clear error when
/// the library is not configured, missing, or too old for this build.
pub fn environment(library: Option<&Path>) -> Result<&'static Environment, BackendError> {
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env);
    }
    let path = match library {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os(ORT_DYLIB_PATH) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            // ort itself would panic on first use here; say what to do instead.
            _ => {
                return Err(BackendError::Unavailable(format!(
                    "ONNX Runtime library not configured: set {ORT_DYLIB_PATH} to the path of \
                     libonnxruntime (e.g. from crates/nn/scripts/fetch-onnxruntime.sh)"
                )))
            }
        },
    };
    if !path.is_file() {
        return Err(BackendError::Unavailable(format!(
            "ONNX Runtime library {} does not exist",
            path.display()
        )));
    }
    let env = ort_call("ONNX Runtime loading", || {
        let builder = ort::init_from(&path).map_err(|e| e.to_string())?;
        builder
            .with_name("tengen")
            .build()
            .map_err(|e| e.to_string())
    })
    .map_err(|e| BackendError::Unavailable(format!("{}: {e}", path.display())))?;
    log::info!("ONNX Runtime loaded from {}", path.display());
    Ok(ENVIRONMENT.get_or_init(|| env))
}

impl OrtBackend {
    /// Builds sessions for a model that passed the contract checks, trying the providers in order.
    pub fn new(model: &LoadedModel, options: OrtOptions) -> Result<Self, BackendError> {
        let env = environment(options.library.as_deref())?;
        let bytes = model.to_bytes();
        let mut chain = options.providers.clone();
        if options.cpu_last && !chain.contains(&ExecutionProvider::Cpu) {
            chain.push(ExecutionProvider::Cpu);
        }
        let sessions_wanted = options.sessions.max(1);
        let mut passed_over = Vec::new();
        for provider in chain {
            match build_session(env, &bytes, &provider, &options) {
                Ok(first) => {
                    let mut sessions = vec![Mutex::new(first)];
                    for _ in 1..sessions_wanted {
                        let s = build_session(env, &bytes, &provider, &options)?;
                        sessions.push(Mutex::new(s));
                    }
                    let sub_batch = pick_sub_batch(&options, &provider);
                    log::info!(
                        "ONNX Runtime backend for {}: provider {provider}, {} session(s) × {} intra-op threads, {}",
                        model.metadata.name,
                        sessions.len(),
                        options.intra_threads.max(1),
                        if sub_batch == usize::MAX {
                            "whole batches".to_string()
                        } else {
                            format!("runs of {sub_batch} rows")
                        }
                    );
                    let preferred_batch = match provider {
                        ExecutionProvider::Cpu => 16,
                        _ => 64,
                    };
                    return Ok(OrtBackend {
                        name: format!("ort {provider}"),
                        shape: IoShape::from_metadata(&model.metadata),
                        provider,
                        sessions,
                        next: AtomicUsize::new(0),
                        max_batch: options.max_batch.max(1),
                        preferred_batch,
                        sub_batch,
                        passed_over,
                    });
                }
                Err(e) => {
                    log::warn!("ONNX Runtime provider {provider} unavailable, falling back: {e}");
                    passed_over.push((provider, e.to_string()));
                }
            }
        }
        let tried: Vec<String> = passed_over
            .iter()
            .map(|(p, e)| format!("{p}: {e}"))
            .collect();
        Err(BackendError::Unavailable(if tried.is_empty() {
            "no execution provider configured".into()
        } else {
            format!(
                "no execution provider built a session ({})",
                tried.join("; ")
            )
        }))
    }

    /// The providers the fallback chain tried before settling, each with its error.
    pub fn passed_over(&self) -> &[(ExecutionProvider, String)] {
        &self.passed_over
    }

    /// The provider the fallback chain settled on.
    pub fn provider(&self) -> &ExecutionProvider {
        &self.provider
    }

    /// Runs `input` in pieces of at most `sub_batch` rows, writing each piece's rows in place.
    fn run_pieces(
        &self,
        session: &mut Session,
        input: &BatchInput<'_>,
        output: &mut BatchOutput,
    ) -> Result<(), BackendError> {
        let lens = output_lens(&self.shape);
        let mut rest = output_slices(output, &self.shape);
        let mut start = 0;
        while start < input.rows {
            let rows = self.sub_batch.min(input.rows - start);
            let (head, tail) = split_outputs(rest, &lens, rows);
            self.run(session, &input.slice(&self.shape, start, rows), head)?;
            rest = tail;
            start += rows;
        }
        Ok(())
    }

    /// One ONNX Runtime run of all of `input`'s rows into `out` (the contract's output order).
    fn run(
        &self,
        session: &mut Session,
        input: &BatchInput<'_>,
        out: [&mut [f32]; 5],
    ) -> Result<(), BackendError> {
        let err = |e: ort::Error| BackendError::Ort(e.to_string());
        let dims = self.shape.input_dims(input.rows);
        fn view(dims: [usize; 4], data: &[f32]) -> Result<SessionInputValue<'_>, BackendError> {
            let tensor = TensorRef::from_array_view((dims, data))
                .map_err(|e| BackendError::Ort(e.to_string()))?;
            Ok(tensor.into())
        }
        let outputs = match input.meta {
            Some(meta) => session.run([
                view(dims[0], input.spatial)?,
                view(dims[1], input.global)?,
                view(dims[2], meta)?,
                view(dims[3], input.mask)?,
            ]),
            None => session.run([
                view(dims[0], input.spatial)?,
                view(dims[1], input.global)?,
                view(dims[2], input.mask)?,
            ]),
        }
        .map_err(err)?;
        let lens = output_lens(&self.shape);
        for (k, buf) in out.into_iter().enumerate() {
            let value = outputs.get(OUTPUT_NAMES[k]).ok_or_else(|| {
                BackendError::Ort(format!("session has no output {}", OUTPUT_NAMES[k]))
            })?;
            let (_, data) = value.try_extract_tensor::<f32>().map_err(err)?;
            let expected = lens[k] * input.rows;
            if data.len() != expected {
                return Err(BackendError::OutputLength {
                    name: OUTPUT_NAMES[k],
                    found: data.len(),
                    expected,
                });
            }
            buf.copy_from_slice(data);
        }
        Ok(())
    }
}

impl Backend for OrtBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn shape(&self) -> &IoShape {
        &self.shape
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn preferred_batch(&self) -> usize {
        self.preferred_batch
    }

    fn evaluate(
        &self,
        input: &BatchInput<'_>,
        output: &mut BatchOutput,
    ) -> Result<(), BackendError> {
        input.check(&self.shape, self.max_batch)?;
        output.prepare(&self.shape, input.rows);
        // Take an idle session if there is one, else wait for this caller's turn on one.
        let n = self.sessions.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let mut guard = None;
        for i in 0..n {
            if let Ok(g) = self.sessions[(start + i) % n].try_lock() {
                guard = Some(g);
                break;
            }
        }
        let mut session = match guard {
            Some(g) => g,
            None => self.sessions[start]
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        };
        match catch_unwind(AssertUnwindSafe(|| {
            self.run_pieces(&mut session, input, output)
        })) {
            Ok(result) => result,
            Err(payload) => Err(BackendError::Panicked(
                "ONNX Runtime run",
                panic_message(&*payload),
            )),
        }
    }
}

/// Builds one session on one provider, failing (instead of silently falling back) when the
/// provider cannot be registered.
fn build_session(
    env: &Environment,
    bytes: &[u8],
    provider: &ExecutionProvider,
    options: &OrtOptions,
) -> Result<Session, BackendError> {
    let provider = provider.clone();
    let intra = options.intra_threads.max(1);
    ort_call("ONNX Runtime session", move || {
        let s = |e: ort::Error<ort::session::builder::SessionBuilder>| e.to_string();
        let mut builder = Session::builder(env)
            .map_err(|e| e.to_string())?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(s)?
            .with_intra_threads(intra)
            .map_err(s)?
            .with_inter_threads(1)
            .map_err(s)?;
        builder = match &provider {
            ExecutionProvider::Cpu => builder,
            other => builder
                .with_execution_providers([dispatch(other)?])
                .map_err(s)?,
        };
        builder.commit_from_memory(bytes).map_err(|e| e.to_string())
    })
    .map_err(BackendError::Ort)
}

/// The `ort` dispatch for a GPU provider, or an error when this build lacks its feature.
fn dispatch(provider: &ExecutionProvider) -> Result<ort::ep::ExecutionProviderDispatch, String> {
    match provider {
        #[cfg(feature = "cuda")]
        ExecutionProvider::Cuda { device_id } => Ok(ort::ep::CUDA::default()
            .with_device_id(*device_id)
            .build()
            .error_on_failure()),
        #[cfg(feature = "tensorrt")]
        ExecutionProvider::TensorRt {
            device_id,
            fp16,
            engine_cache_dir,
        } => {
            let mut trt = ort::ep::TensorRT::default()
                .with_device_id(*device_id)
                .with_fp16(*fp16);
            if let Some(dir) = engine_cache_dir {
                // TensorRT writes its files there but does not make the folder.
                if let Err(e) = std::fs::create_dir_all(dir) {
                    log::warn!("TensorRT engine cache {}: {e}", dir.display());
                }
                trt = trt
                    .with_engine_cache(true)
                    .with_engine_cache_path(dir.display())
                    .with_timing_cache(true)
                    .with_timing_cache_path(dir.display());
            }
            Ok(trt.build().error_on_failure())
        }
        other => Err(format!(
            "provider {other} is not compiled into this build (enable the tengen-nn feature for it)"
        )),
    }
}

/// Runs an `ort` call, containing its panics (it panics rather than erring in some load paths).
fn ort_call<T>(what: &'static str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(format!("{what} panicked: {}", panic_message(&*payload))),
    }
}
