//! The network backend the appliance settles on at start-up. `engine.backend = "ort"`
//! tries ONNX Runtime down `engine.providers` (TensorRT, then CUDA on a Jetson); when no
//! provider builds a session, or ONNX Runtime is missing, tract runs the network on the
//! CPU. `engine.backend = "native"` runs Tengen's own CPU code, or tract when the model is
//! one it does not run (an ONNX file). Each step is logged and the outcome goes into the
//! MQTT status, so a board that silently lost its GPU shows it.

use std::sync::Arc;

use anyhow::Result;
use serde::Serialize;
use tengen_nn::backend::Backend;
use tengen_nn::onnx::load::LoadedModel;

use crate::backend::{make_backend, BackendGraph, BackendKind, OrtArgs};
use crate::network::ModelSource;

/// Which backend runs the network, and what was passed over on the way.
#[derive(Clone, Debug, Serialize)]
pub struct Choice {
    /// `ort`, `native` or `tract`.
    pub backend: BackendKind,
    /// What runs it, e.g. `ort TensorRT:0` or `tract (4 threads)`.
    pub runs_on: String,
    /// Each option tried first, with why it did not start.
    pub passed_over: Vec<String>,
    /// ONNX Runtime settings for the other board sizes: the chain cut to the provider
    /// that worked, so a size change never tries (and waits for) the failed ones again.
    #[serde(skip)]
    pub ort: OrtArgs,
}

/// Builds the `preferred` backend for `model` (built from `source`), falling back to tract.
pub fn settle(
    preferred: BackendKind,
    source: &ModelSource,
    model: &LoadedModel,
    threads: usize,
    max_batch: usize,
    ort: &OrtArgs,
) -> Result<(Arc<dyn Backend>, Choice)> {
    let mut passed_over = Vec::new();
    if preferred == BackendKind::Ort {
        match try_ort(source, model, threads, max_batch, ort) {
            Ok((backend, skipped, narrowed)) => {
                let choice = Choice {
                    backend: BackendKind::Ort,
                    runs_on: backend.name().to_string(),
                    passed_over: skipped,
                    ort: narrowed,
                };
                log::info!("network backend: {}", choice.runs_on);
                return Ok((backend, choice));
            }
            Err(e) => {
                log::warn!("ONNX Runtime cannot run the network, falling back to tract: {e:#}");
                passed_over.push(format!("ONNX Runtime: {e:#}"));
            }
        }
    }
    if preferred == BackendKind::Native {
        let native = BackendGraph::new(BackendKind::Native, source, model, ort)
            .and_then(|g| make_backend(&g, threads, max_batch, ort));
        match native {
            Ok(backend) => {
                let choice = Choice {
                    backend: BackendKind::Native,
                    runs_on: backend.name().to_string(),
                    passed_over,
                    ort: ort.clone(),
                };
                log::info!("network backend: {}", choice.runs_on);
                return Ok((backend, choice));
            }
            Err(e) => {
                log::warn!(
                    "the native backend cannot run the network, falling back to tract: {e:#}"
                );
                passed_over.push(format!("native: {e:#}"));
            }
        }
    }
    let graph = BackendGraph::new(BackendKind::Tract, source, model, ort)?;
    let backend = make_backend(&graph, threads, max_batch, ort)?;
    let choice = Choice {
        backend: BackendKind::Tract,
        runs_on: backend.name().to_string(),
        passed_over,
        ort: ort.clone(),
    };
    log::info!("network backend: {} on the CPU", choice.runs_on);
    Ok((backend, choice))
}

/// ONNX Runtime down the configured chain, without its own CPU provider unless listed.
#[cfg(feature = "ort")]
fn try_ort(
    source: &ModelSource,
    model: &LoadedModel,
    threads: usize,
    max_batch: usize,
    ort: &OrtArgs,
) -> Result<(Arc<dyn Backend>, Vec<String>, OrtArgs)> {
    use tengen_nn::backend::ort::{OrtBackend, OrtOptions};
    let graph = BackendGraph::new(BackendKind::Ort, source, model, ort)?;
    let backend = OrtBackend::new(
        graph.model(),
        OrtOptions {
            intra_threads: threads,
            max_batch,
            providers: ort.providers()?,
            cpu_last: false,
            ..Default::default()
        },
    )?;
    let skipped = backend
        .passed_over()
        .iter()
        .map(|(p, e)| format!("{p}: {e}"))
        .collect();
    let narrowed = ort.only(backend.provider());
    Ok((Arc::new(backend), skipped, narrowed))
}

#[cfg(not(feature = "ort"))]
fn try_ort(
    _source: &ModelSource,
    _model: &LoadedModel,
    _threads: usize,
    _max_batch: usize,
    _ort: &OrtArgs,
) -> Result<(Arc<dyn Backend>, Vec<String>, OrtArgs)> {
    anyhow::bail!("this tengen was built without the `ort` feature")
}
