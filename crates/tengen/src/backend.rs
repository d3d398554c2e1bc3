//! The network backends the binary can run: which one (tract, Tengen's native code or ONNX
//! Runtime), ONNX Runtime's provider chain, and the factory that builds one for a loaded
//! model.

use std::borrow::Cow;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use tengen_nn::backend::native::{Gemm, NativeBackend, NativeOptions};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::Backend;
use tengen_nn::model::ModelDesc;
use tengen_nn::onnx::load::LoadedModel;
use tengen_nn::quant::Precision;

use crate::network::ModelSource;

/// Which library runs the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// tract, on the CPU.
    Tract,
    /// ONNX Runtime down its provider chain (needs the `ort` feature).
    Ort,
    /// Tengen's own CPU code (convolutional KataGo models from a `.bin.gz`).
    Native,
}

impl BackendKind {
    /// The CPU backend a network runs on unless one is named: the native backend where
    /// its SIMD kernels run (x86-64 with AVX2 and FMA: about twice tract's evaluations a
    /// second, docs/results.md), tract elsewhere (the native backend's portable code is
    /// unmeasured on ARM). A model the native backend does not run falls back to tract.
    pub fn cpu_default() -> BackendKind {
        if tengen_nn::backend::native::winograd::simd_available() {
            BackendKind::Native
        } else {
            BackendKind::Tract
        }
    }

    /// Its name on the command line and in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Tract => "tract",
            BackendKind::Ort => "ort",
            BackendKind::Native => "native",
        }
    }
}

impl FromStr for BackendKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tract" => Ok(BackendKind::Tract),
            "ort" => Ok(BackendKind::Ort),
            "native" => Ok(BackendKind::Native),
            other => Err(format!("unknown backend {other:?} (tract, ort, native)")),
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// ONNX Runtime settings, used by `--backend ort`.
#[derive(Args, Debug, Clone)]
pub struct OrtArgs {
    /// Execution providers to try in order: `tensorrt`, `cuda`, `cpu` (CPU is always the last resort).
    #[arg(long, value_delimiter = ',', default_value = "cpu")]
    ort_providers: Vec<String>,
    /// The GPU CUDA and TensorRT run on.
    #[arg(long, default_value_t = 0)]
    ort_device: i32,
    /// Let TensorRT run layers in FP16.
    #[arg(long)]
    ort_fp16: bool,
    /// Directory for TensorRT's engine and timing caches (a restart then skips the engine build).
    #[arg(long)]
    ort_trt_cache: Option<PathBuf>,
    /// Network precision: `auto` (int16 on the native backend where the CPU has AVX-512
    /// VNNI, fp32 elsewhere); `fp32`; `int8` on ONNX Runtime (a graph calibrated at
    /// start-up and quantized; fastest on CPUs with VNNI or ARM dot products); `int16` on
    /// the native backend (its GEMMs in 16-bit integers; fp32 on CPUs without VNNI).
    #[arg(long, default_value = "auto", value_parser = str::parse::<Precision>)]
    precision: Precision,
}

impl Default for OrtArgs {
    fn default() -> Self {
        OrtArgs {
            ort_providers: vec!["cpu".into()],
            ort_device: 0,
            ort_fp16: false,
            ort_trt_cache: None,
            precision: Precision::default(),
        }
    }
}

impl OrtArgs {
    /// Settings from the appliance's configuration.
    pub(crate) fn new(
        providers: Vec<String>,
        device: i32,
        fp16: bool,
        trt_cache: Option<PathBuf>,
        precision: Precision,
    ) -> Self {
        OrtArgs {
            ort_providers: providers,
            ort_device: device,
            ort_fp16: fp16,
            ort_trt_cache: trt_cache,
            precision,
        }
    }
}

#[cfg(feature = "ort")]
impl OrtArgs {
    /// These settings with the chain cut to `provider` alone.
    pub(crate) fn only(&self, provider: &tengen_nn::backend::ort::ExecutionProvider) -> OrtArgs {
        use tengen_nn::backend::ort::ExecutionProvider as Ep;
        let name = match provider {
            Ep::Cpu => "cpu",
            Ep::Cuda { .. } => "cuda",
            Ep::TensorRt { .. } => "tensorrt",
        };
        OrtArgs {
            ort_providers: vec![name.into()],
            ..self.clone()
        }
    }

    /// The provider chain these settings name.
    pub(crate) fn providers(&self) -> Result<Vec<tengen_nn::backend::ort::ExecutionProvider>> {
        use tengen_nn::backend::ort::ExecutionProvider as Ep;
        self.ort_providers
            .iter()
            .map(|p| {
                Ok(match p.trim().to_ascii_lowercase().as_str() {
                    "cpu" => Ep::Cpu,
                    "cuda" => Ep::Cuda {
                        device_id: self.ort_device,
                    },
                    "tensorrt" | "trt" => Ep::TensorRt {
                        device_id: self.ort_device,
                        fp16: self.ort_fp16,
                        engine_cache_dir: self.ort_trt_cache.clone(),
                    },
                    other => bail!("unknown ONNX Runtime provider {other:?} (tensorrt, cuda, cpu)"),
                })
            })
            .collect()
    }
}

/// A network graph in the form one kind of backend runs it: the model as loaded for
/// tract, for ONNX Runtime the model in the precision its settings ask for (int8 is
/// calibrated and quantized here, once, however many backends are then built on it), and
/// for the native backend the KataGo model's layers beside the graph's metadata.
pub(crate) struct BackendGraph<'a> {
    kind: BackendKind,
    graph: Cow<'a, LoadedModel>,
    desc: Option<ModelDesc>,
}

impl<'a> BackendGraph<'a> {
    /// `model` (built from `source`) prepared for a backend of `kind` with these ONNX
    /// Runtime settings.
    pub(crate) fn new(
        kind: BackendKind,
        source: &ModelSource,
        model: &'a LoadedModel,
        ort: &OrtArgs,
    ) -> Result<Self> {
        let graph = match (kind, ort.precision) {
            (BackendKind::Ort, Precision::Int8) => Cow::Owned(quantized(model)?),
            (_, Precision::Auto | Precision::Fp32) | (BackendKind::Native, Precision::Int16) => {
                Cow::Borrowed(model)
            }
            (kind, precision) => {
                log::warn!(
                    "the {kind} backend does not run {precision} (int8 runs on ort, int16 on \
                     native): the network runs in fp32"
                );
                Cow::Borrowed(model)
            }
        };
        let desc = match kind {
            BackendKind::Native => Some(source.desc()?),
            _ => None,
        };
        Ok(BackendGraph { kind, graph, desc })
    }

    /// The kind of backend this graph is for.
    pub(crate) fn kind(&self) -> BackendKind {
        self.kind
    }

    /// The graph.
    pub(crate) fn model(&self) -> &LoadedModel {
        &self.graph
    }
}

/// `model` calibrated on its own play and quantized to int8.
fn quantized(model: &LoadedModel) -> Result<LoadedModel> {
    if !tengen_nn::quant::cpu_has_fast_int8() {
        // Without VNNI, x86 multiplies uint8 by int8 through 16-bit sums that can saturate.
        log::warn!(
            "this CPU has no fast int8 dot product: the int8 network may be slower and less exact"
        );
    }
    let started = std::time::Instant::now();
    let proto = tengen_nn::quant::quantize_int8(&model.proto, &Default::default())
        .context("quantizing the network to int8")?;
    log::info!(
        "network {} quantized to int8 in {:.1} s",
        model.metadata.name,
        started.elapsed().as_secs_f64()
    );
    LoadedModel::from_proto(proto).context("checking the int8 graph")
}

/// How the native backend's GEMMs multiply at `precision`: int16 where asked for (or
/// left to choose) and the CPU runs it.
fn native_gemm(precision: Precision) -> Gemm {
    let available = tengen_nn::backend::native::winograd::int16_available();
    match precision {
        Precision::Int16 if !available => {
            log::warn!("this CPU has no AVX-512 VNNI: the native backend runs in fp32");
            Gemm::F32
        }
        Precision::Int16 => Gemm::Int16,
        Precision::Auto if available => Gemm::Int16,
        _ => Gemm::F32,
    }
}

/// A backend for `graph`, on `threads` cores, taking batches up to `max_batch`.
pub(crate) fn make_backend(
    graph: &BackendGraph<'_>,
    threads: usize,
    max_batch: usize,
    ort: &OrtArgs,
) -> Result<Arc<dyn Backend>> {
    let model = graph.model();
    Ok(match graph.kind {
        BackendKind::Tract => Arc::new(TractBackend::new(
            model,
            TractOptions {
                threads,
                max_batch,
                ..TractOptions::default()
            },
        )?),
        #[cfg(feature = "ort")]
        BackendKind::Ort => Arc::new(tengen_nn::backend::ort::OrtBackend::new(
            model,
            tengen_nn::backend::ort::OrtOptions {
                intra_threads: threads,
                max_batch,
                providers: ort.providers()?,
                ..Default::default()
            },
        )?),
        #[cfg(not(feature = "ort"))]
        BackendKind::Ort => bail!("this tengen was built without the `ort` feature"),
        BackendKind::Native => {
            let desc = graph
                .desc
                .as_ref()
                .context("the native backend needs the model's layers")?;
            Arc::new(NativeBackend::new(
                desc,
                &model.metadata,
                NativeOptions {
                    threads,
                    max_batch,
                    gemm: native_gemm(ort.precision),
                },
            )?)
        }
    })
}
