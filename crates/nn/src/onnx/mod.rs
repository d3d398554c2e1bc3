//! ONNX graphs that follow KataGo's ONNX contract: building them from a KataGo model
//! ([`build`]) and loading any conforming file ([`load`]); the contract's `katago.*`
//! metadata and version table are in [`crate::contract`].

pub mod build;
pub mod load;
