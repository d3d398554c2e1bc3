//! Loading a `.onnx` or `.onnx.gz` file that follows KataGo's ONNX contract: decoding the
//! protobuf (gzip detected by its magic bytes), parsing the `katago.*` metadata and checking
//! the graph's declared inputs and outputs against it.
//!
//! Nothing here trusts the file: sizes are bounded before anything is allocated for them,
//! decoding errors are typed, and no value from the file reaches an `unwrap`.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use prost::Message;
use tract_onnx::pb::{
    tensor_proto, tensor_shape_proto::dimension, type_proto, ModelProto, ValueInfoProto,
};

use crate::contract::meta::{MetaError, ModelMetadata};

/// The largest model (after gunzip) accepted by default: 1 GiB, several times KataGo's
/// largest published nets in fp32.
pub const DEFAULT_MAX_MODEL_BYTES: u64 = 1 << 30;

/// The two bytes every gzip stream starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Name of the spatial input.
pub const INPUT_SPATIAL: &str = "InputSpatial";
/// Name of the global input.
pub const INPUT_GLOBAL: &str = "InputGlobal";
/// Name of the SGF-metadata input (only when `metaEncoderVersion > 0`).
pub const INPUT_META: &str = "InputMeta";
/// Name of the board mask input.
pub const INPUT_MASK: &str = "InputMask";
/// Name of the pass policy output.
pub const OUTPUT_POLICY_PASS: &str = "OutputPolicyPass";
/// Name of the per-point policy output.
pub const OUTPUT_POLICY: &str = "OutputPolicy";
/// Name of the win/loss/no-result output.
pub const OUTPUT_VALUE: &str = "OutputValue";
/// Name of the score-value output.
pub const OUTPUT_SCORE_VALUE: &str = "OutputScoreValue";
/// Name of the ownership output.
pub const OUTPUT_OWNERSHIP: &str = "OutputOwnership";

/// A decoded model whose metadata and graph interface satisfy the contract.
#[derive(Clone, Debug)]
pub struct LoadedModel {
    /// The parsed and validated `katago.*` metadata.
    pub metadata: ModelMetadata,
    /// The whole ONNX model, ready for a backend.
    pub proto: ModelProto,
}

/// Why a file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The file (or its gunzipped content) is larger than the limit.
    #[error("model is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The content starts like gzip but does not decompress.
    #[error("corrupt gzip stream: {0}")]
    Gzip(io::Error),
    /// The bytes are not an ONNX `ModelProto`.
    #[error("could not be parsed as an ONNX ModelProto: {0}")]
    Decode(#[from] prost::DecodeError),
    /// The `katago.*` metadata breaks the contract.
    #[error("invalid KataGo metadata: {0}")]
    Meta(#[from] MetaError),
    /// The graph's inputs or outputs do not match the metadata.
    #[error("graph does not follow KataGo's ONNX contract: {0}")]
    Contract(#[from] ContractError),
}

/// Why a graph's declared interface breaks the contract.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ContractError {
    /// The model has no graph at all.
    #[error("the model has no graph")]
    NoGraph,
    /// A required graph input is absent.
    #[error("no input named '{name}'")]
    MissingInput {
        /// The input's name.
        name: &'static str,
    },
    /// A graph input the contract does not define.
    #[error("unexpected input '{name}'")]
    UnexpectedInput {
        /// The name found.
        name: String,
    },
    /// A required graph output is absent.
    #[error("no output named '{name}'")]
    MissingOutput {
        /// The output's name.
        name: &'static str,
    },
    /// A graph output the contract does not define.
    #[error("unexpected output '{name}'")]
    UnexpectedOutput {
        /// The name found.
        name: String,
    },
    /// The same input or output declared twice.
    #[error("'{name}' is declared more than once")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// Inputs declared in another order than spatial, global, (meta,) mask.
    #[error("inputs are declared as {found:?}, expected {expected:?}")]
    InputOrder {
        /// The required order.
        expected: Vec<&'static str>,
        /// The order found.
        found: Vec<String>,
    },
    /// An input or output without a tensor type or shape.
    #[error("'{name}' has no tensor type with a shape")]
    NoShape {
        /// The tensor's name.
        name: String,
    },
    /// An input or output that is not float32.
    #[error("'{name}' has element type {elem_type}, but KataGo binds float32")]
    NotFloat {
        /// The tensor's name.
        name: String,
        /// The ONNX element type code found.
        elem_type: i32,
    },
    /// An input or output that is not rank 4.
    #[error("'{name}' has rank {rank}, expected rank 4 (NCHW)")]
    Rank {
        /// The tensor's name.
        name: String,
        /// The rank found.
        rank: usize,
    },
    /// A batch dimension fixed to a number instead of being symbolic.
    #[error("'{name}' has a fixed batch dimension {value}, the batch must be symbolic")]
    FixedBatch {
        /// The tensor's name.
        name: String,
        /// The fixed value.
        value: i64,
    },
    /// A channel, height or width dimension that is symbolic or missing.
    #[error("'{name}' has a symbolic {axis} dimension")]
    SymbolicDim {
        /// The tensor's name.
        name: String,
        /// "channel", "height" or "width".
        axis: &'static str,
    },
    /// A channel, height or width dimension that disagrees with the metadata.
    #[error("'{name}' has {axis} dimension {found}, expected {expected}")]
    WrongDim {
        /// The tensor's name.
        name: String,
        /// "channel", "height" or "width".
        axis: &'static str,
        /// The size found.
        found: i64,
        /// The size the metadata implies.
        expected: u32,
    },
    /// A weight stored outside the file, which a single-file model cannot resolve.
    #[error("initializer '{name}' keeps its data in an external file, which is not supported")]
    ExternalData {
        /// The initializer's name.
        name: String,
    },
}

impl LoadedModel {
    /// Loads a `.onnx` or `.onnx.gz` file with the default size limit.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        load_path(path.as_ref(), DEFAULT_MAX_MODEL_BYTES)
    }

    /// Loads ONNX (or gzipped ONNX) bytes with the default size limit.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, LoadError> {
        load_bytes(bytes, DEFAULT_MAX_MODEL_BYTES)
    }

    /// Validates a decoded model: its metadata and its declared interface.
    pub fn from_proto(proto: ModelProto) -> Result<Self, LoadError> {
        let metadata = ModelMetadata::from_props(&props_of(&proto))?;
        check_interface(&proto, &metadata)?;
        log::debug!(
            "loaded ONNX model {} (model version {}, {}x{} buffer, {} nodes)",
            metadata.name,
            metadata.model_version,
            metadata.nn_x_len,
            metadata.nn_y_len,
            proto.graph.as_ref().map_or(0, |g| g.node.len())
        );
        Ok(LoadedModel { metadata, proto })
    }

    /// The serialized ONNX bytes of the model (uncompressed).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.proto.encode_to_vec()
    }
}

/// Loads a `.onnx` or `.onnx.gz` file, refusing content larger than `max_bytes`.
pub fn load_path(path: &Path, max_bytes: u64) -> Result<LoadedModel, LoadError> {
    let io_err = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if len > max_bytes {
        return Err(LoadError::TooLarge { limit: max_bytes });
    }
    let bytes = read_bounded(file, max_bytes).map_err(io_err)?;
    log::info!("reading ONNX model {} ({} bytes)", path.display(), len);
    load_bytes(&bytes, max_bytes)
}

/// Decodes ONNX bytes (gunzipping them first if they start with the gzip magic), refusing
/// content larger than `max_bytes`, and validates the result.
pub fn load_bytes(bytes: &[u8], max_bytes: u64) -> Result<LoadedModel, LoadError> {
    let proto = decode_bytes(bytes, max_bytes)?;
    LoadedModel::from_proto(proto)
}

/// Decodes ONNX bytes (gzip or not) into a `ModelProto` without checking the contract.
pub fn decode_bytes(bytes: &[u8], max_bytes: u64) -> Result<ModelProto, LoadError> {
    if bytes.len() as u64 > max_bytes {
        return Err(LoadError::TooLarge { limit: max_bytes });
    }
    if bytes.starts_with(&GZIP_MAGIC) {
        let decoder = flate2::read::MultiGzDecoder::new(bytes);
        let raw = read_bounded(decoder, max_bytes).map_err(|e| match e.kind() {
            io::ErrorKind::FileTooLarge => LoadError::TooLarge { limit: max_bytes },
            _ => LoadError::Gzip(e),
        })?;
        Ok(ModelProto::decode(raw.as_slice())?)
    } else {
        Ok(ModelProto::decode(bytes)?)
    }
}

/// Reads everything from `r`, failing with `FileTooLarge` past `max_bytes` instead of
/// allocating without bound (a gzip bomb expands 1000-fold).
fn read_bounded(r: impl Read, max_bytes: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let read = r.take(max_bytes.saturating_add(1)).read_to_end(&mut out)?;
    if read as u64 > max_bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("more than {max_bytes} bytes"),
        ));
    }
    Ok(out)
}

/// The model's `metadata_props` as key/value pairs, in file order.
pub fn props_of(proto: &ModelProto) -> Vec<(String, String)> {
    proto
        .metadata_props
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect()
}

/// Replaces the model's `metadata_props` with `meta`'s, keeping entries outside `katago.`.
pub fn set_props(proto: &mut ModelProto, meta: &ModelMetadata) {
    proto
        .metadata_props
        .retain(|p| !p.key.starts_with(crate::contract::meta::keys::NAMESPACE));
    for (key, value) in meta.to_props() {
        proto
            .metadata_props
            .push(tract_onnx::pb::StringStringEntryProto { key, value });
    }
}

/// One tensor of the interface: its name and its expected `[C, H, W]` after the batch.
struct Expected {
    name: &'static str,
    dims: [u32; 3],
}

/// The graph inputs the metadata requires, in the required order.
pub fn expected_inputs(meta: &ModelMetadata) -> Vec<&'static str> {
    input_specs(meta).iter().map(|e| e.name).collect()
}

fn input_specs(meta: &ModelMetadata) -> Vec<Expected> {
    let (x, y) = (meta.nn_x_len, meta.nn_y_len);
    let mut v = vec![
        Expected {
            name: INPUT_SPATIAL,
            dims: [meta.num_input_channels, y, x],
        },
        Expected {
            name: INPUT_GLOBAL,
            dims: [meta.num_input_global_channels, 1, 1],
        },
    ];
    if meta.has_meta_input() {
        v.push(Expected {
            name: INPUT_META,
            dims: [meta.num_input_meta_channels, 1, 1],
        });
    }
    v.push(Expected {
        name: INPUT_MASK,
        dims: [1, y, x],
    });
    v
}

fn output_specs(meta: &ModelMetadata) -> [Expected; 5] {
    let (x, y) = (meta.nn_x_len, meta.nn_y_len);
    [
        Expected {
            name: OUTPUT_POLICY_PASS,
            dims: [meta.num_policy_channels, 1, 1],
        },
        Expected {
            name: OUTPUT_POLICY,
            dims: [meta.num_policy_channels, y, x],
        },
        Expected {
            name: OUTPUT_VALUE,
            dims: [meta.num_value_channels, 1, 1],
        },
        Expected {
            name: OUTPUT_SCORE_VALUE,
            dims: [meta.num_score_value_channels, 1, 1],
        },
        Expected {
            name: OUTPUT_OWNERSHIP,
            dims: [meta.num_ownership_channels, y, x],
        },
    ]
}

/// Checks the graph's declared inputs and outputs (names, input order, float32, shapes)
/// against the metadata, and that no weight lives in an external file.
pub fn check_interface(proto: &ModelProto, meta: &ModelMetadata) -> Result<(), ContractError> {
    let graph = proto.graph.as_ref().ok_or(ContractError::NoGraph)?;
    if let Some(t) = graph.initializer.iter().find(|t| {
        t.data_location == Some(tensor_proto::DataLocation::External as i32)
            || !t.external_data.is_empty()
    }) {
        return Err(ContractError::ExternalData {
            name: t.name.clone(),
        });
    }
    // Initializers redundantly declared as graph inputs (an old ONNX convention) are weights.
    let is_weight = |name: &str| graph.initializer.iter().any(|t| t.name == name);
    let inputs: Vec<&ValueInfoProto> = graph.input.iter().filter(|i| !is_weight(&i.name)).collect();
    let specs = input_specs(meta);
    check_names(
        inputs.iter().map(|i| i.name.as_str()),
        &specs,
        |name| ContractError::UnexpectedInput { name },
        |name| ContractError::MissingInput { name },
    )?;
    let found: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
    if found.iter().zip(&specs).any(|(f, e)| *f != e.name) {
        return Err(ContractError::InputOrder {
            expected: specs.iter().map(|e| e.name).collect(),
            found: found.iter().map(|s| s.to_string()).collect(),
        });
    }
    for (info, spec) in inputs.iter().zip(&specs) {
        check_tensor(info, spec)?;
    }
    let outputs = output_specs(meta);
    check_names(
        graph.output.iter().map(|o| o.name.as_str()),
        &outputs,
        |name| ContractError::UnexpectedOutput { name },
        |name| ContractError::MissingOutput { name },
    )?;
    for spec in &outputs {
        if let Some(info) = graph.output.iter().find(|o| o.name == spec.name) {
            check_tensor(info, spec)?;
        }
    }
    Ok(())
}

/// Every name expected exactly once, nothing else.
fn check_names<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
    specs: &[Expected],
    unexpected: impl Fn(String) -> ContractError,
    missing: impl Fn(&'static str) -> ContractError,
) -> Result<(), ContractError> {
    for (i, name) in names.clone().enumerate() {
        if !specs.iter().any(|s| s.name == name) {
            return Err(unexpected(truncate(name)));
        }
        if names.clone().take(i).any(|n| n == name) {
            return Err(ContractError::Duplicate {
                name: name.to_string(),
            });
        }
    }
    for spec in specs {
        if !names.clone().any(|n| n == spec.name) {
            return Err(missing(spec.name));
        }
    }
    Ok(())
}

fn check_tensor(info: &ValueInfoProto, spec: &Expected) -> Result<(), ContractError> {
    let name = || spec.name.to_string();
    let tensor = match info.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => t,
        None => return Err(ContractError::NoShape { name: name() }),
    };
    if tensor.elem_type != tensor_proto::DataType::Float as i32 {
        return Err(ContractError::NotFloat {
            name: name(),
            elem_type: tensor.elem_type,
        });
    }
    let shape = tensor
        .shape
        .as_ref()
        .ok_or_else(|| ContractError::NoShape { name: name() })?;
    if shape.dim.len() != 4 {
        return Err(ContractError::Rank {
            name: name(),
            rank: shape.dim.len(),
        });
    }
    if let Some(dimension::Value::DimValue(value)) = shape.dim[0].value {
        return Err(ContractError::FixedBatch {
            name: name(),
            value,
        });
    }
    for ((dim, expected), axis) in shape.dim[1..]
        .iter()
        .zip(spec.dims)
        .zip(["channel", "height", "width"])
    {
        match dim.value {
            Some(dimension::Value::DimValue(found)) if found == i64::from(expected) => {}
            Some(dimension::Value::DimValue(found)) => {
                return Err(ContractError::WrongDim {
                    name: name(),
                    axis,
                    found,
                    expected,
                })
            }
            _ => return Err(ContractError::SymbolicDim { name: name(), axis }),
        }
    }
    Ok(())
}

/// Keeps error messages short when a hostile file uses huge names.
fn truncate(s: &str) -> String {
    s.chars().take(128).collect()
}
