//! KataGo networks for Tengen: input features, model import, ONNX graphs,
//! backends, post-processing and the batching evaluator.

pub mod backend;
pub mod features;
pub mod model;
pub mod onnx;
