//! KataGo's model contract, shared by the model reader ([`crate::model`]) and the ONNX
//! graphs ([`crate::onnx`]): which model versions exist and what each implies for a
//! network's inputs and outputs ([`version`]), and the `katago.*` metadata that
//! describes a graph ([`meta`]).

pub mod meta;
pub mod version;
