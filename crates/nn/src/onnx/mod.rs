//! ONNX graphs that follow KataGo's ONNX contract: building them from a KataGo model
//! ([`build`]), the `katago.*` metadata ([`meta`]) and loading any conforming file ([`load`]).

pub mod build;
pub mod load;
pub mod meta;
