//! KataGo networks for Tengen: input features, model import, ONNX graphs,
//! backends, post-processing and the batching evaluator.
//!
//! Data flows one way: a [`tengen_rules::Game`] becomes input planes ([`features`]);
//! a KataGo `.bin.gz` file becomes a [`model::ModelDesc`] and then an ONNX graph
//! ([`onnx`]), both following KataGo's contract for model versions and metadata
//! ([`contract`]); a [`backend`] runs the graph on batches of inputs; [`postprocess`] turns raw outputs into probabilities, scores
//! and ownership as KataGo's `nneval.cpp` does; [`eval`] batches requests from many
//! search threads onto a backend and caches the results.

pub mod backend;
pub mod contract;
pub mod eval;
pub mod features;
pub mod model;
pub mod onnx;
pub mod postprocess;
pub mod quant;
