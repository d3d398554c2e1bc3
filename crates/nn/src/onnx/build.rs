//! Building an ONNX graph from a KataGo model, following KataGo's ONNX contract
//! (docs/ONNX_Model_Files.md): inputs `InputSpatial`, `InputGlobal`, `InputMeta` (only with a
//! metadata encoder) and `InputMask` (always, and last), raw outputs `OutputPolicyPass`,
//! `OutputPolicy`, `OutputValue`, `OutputScoreValue`, `OutputOwnership`, all float32 NCHW with a
//! symbolic batch dimension `N`, and the `katago.*` metadata.
//!
//! The graph computes what KataGo's Eigen backend computes. With masking (the default) off-board
//! points never influence on-board results, so one graph serves every board that fits the
//! buffer (boards placed in the top-left corner); an exact graph skips the masking and is only
//! valid for positions that fill the buffer.
//!
//! Only standard ONNX operators (opset [`OPSET_VERSION`]) are used, weights are initializers,
//! and the form is chosen for CPU inference with tract: batch norms are folded into adjacent
//! convolutions, RMS-norm gains and the attention scale into projection weights, and the trunk
//! stays NCHW with no layout changes.

mod graph;
mod heads;
mod transformer;
mod trunk;

use prost::Message;
use tract_onnx::pb::{
    tensor_proto, tensor_shape_proto, type_proto, GraphProto, ModelProto, OperatorSetIdProto,
    StringStringEntryProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

use crate::contract::meta::{self, MetaError, ModelMetadata};
use crate::model::ModelDesc;
use graph::{Graph, INPUT_MASK};

/// ONNX opset the graphs use (18: reduction axes as inputs, `Mish`).
pub const OPSET_VERSION: i64 = 18;
/// ONNX IR version written (8 is the one that goes with opset 18).
pub const IR_VERSION: i64 = 8;
/// Name of the symbolic batch dimension.
pub const BATCH_DIM: &str = "N";

/// What to build.
#[derive(Clone, Copy)]
pub struct BuildOptions<'a> {
    /// Board buffer width (`katago.build.nnXLen`).
    pub x_len: usize,
    /// Board buffer height (`katago.build.nnYLen`).
    pub y_len: usize,
    /// No board masking (`katago.build.requireExactNNLen`): only valid when positions fill the buffer.
    pub exact: bool,
    /// Overrides `katago.name` (default: the model's own name).
    pub name: Option<&'a str>,
    /// Called after each top-level trunk block with `(blocks built, total blocks)`.
    pub progress: Option<&'a dyn Fn(usize, usize)>,
}

impl<'a> BuildOptions<'a> {
    /// A masked graph for an `x_len` x `y_len` buffer, with the model's name and no progress reports.
    pub fn new(x_len: usize, y_len: usize) -> Self {
        BuildOptions {
            x_len,
            y_len,
            exact: false,
            name: None,
            progress: None,
        }
    }

    /// The same options without masking.
    pub fn exact(self, exact: bool) -> Self {
        BuildOptions { exact, ..self }
    }
}

impl std::fmt::Debug for BuildOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("x_len", &self.x_len)
            .field("y_len", &self.y_len)
            .field("exact", &self.exact)
            .field("name", &self.name)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Why a graph could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The buffer size is outside what the contract (and Tengen) supports.
    #[error("board buffer {x_len}x{y_len} is not supported (each side must be {min} to {max})")]
    BoardSize {
        /// Requested width.
        x_len: usize,
        /// Requested height.
        y_len: usize,
        /// Smallest side.
        min: u32,
        /// Largest side.
        max: u32,
    },
    /// The model uses something the builder cannot express.
    #[error("unsupported model feature: {0}")]
    Unsupported(String),
    /// The metadata would break the contract (e.g. an invalid name override).
    #[error("invalid graph metadata: {0}")]
    Metadata(#[from] MetaError),
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// The `katago.*` metadata of the graph [`build_graph`] makes for `model` and `opts`.
pub fn model_metadata(
    model: &ModelDesc,
    opts: &BuildOptions<'_>,
) -> Result<ModelMetadata, BuildError> {
    let info = vec![
        (
            "katago.info.arch.trunkSpatialConvDepth".to_string(),
            format!("{}", model.trunk_spatial_conv_depth()),
        ),
        (
            "katago.info.arch.numParameters".to_string(),
            model.num_parameters().to_string(),
        ),
        (
            "katago.info.arch.hasAnyTransformerBlocks".to_string(),
            model.has_any_transformer_blocks().to_string(),
        ),
        (
            "katago.info.arch.hasAnyNestedBottleneckBlocks".to_string(),
            model.has_any_nested_bottleneck_blocks().to_string(),
        ),
        ("katago.info.sourceSha256".to_string(), model.sha256.clone()),
    ];
    let meta = ModelMetadata {
        metadata_version: meta::METADATA_VERSION,
        name: opts.name.unwrap_or(&model.name).to_string(),
        model_version: model.model_version,
        num_input_channels: to_u32(model.num_input_channels),
        num_input_global_channels: to_u32(model.num_input_global_channels),
        num_input_meta_channels: to_u32(model.num_input_meta_channels),
        num_policy_channels: to_u32(model.num_policy_channels),
        num_value_channels: to_u32(model.num_value_channels),
        num_score_value_channels: to_u32(model.num_score_value_channels),
        num_ownership_channels: to_u32(model.num_ownership_channels),
        nn_x_len: to_u32(opts.x_len),
        nn_y_len: to_u32(opts.y_len),
        require_exact_nn_len: opts.exact,
        meta_encoder_version: model.meta_encoder_version,
        prefer_pass_alive_under_suicide_rules: model.prefer_pass_alive_under_suicide_rules,
        prefer_exclude_territory_adjacent_to_atari: model
            .prefer_exclude_territory_adjacent_to_atari,
        post_process: model.post_process,
        scale8_applied: false,
        transformer_nhwc: false,
        fp32_nodes_trunk_tip_and_head: Vec::new(),
        fp32_nodes_rms_norm: Vec::new(),
        info,
    };
    meta.validate()?;
    Ok(meta)
}

/// A float32 tensor value-info with a symbolic batch dimension and fixed `[c, h, w]`.
fn value_info(name: &str, c: usize, h: usize, w: usize) -> ValueInfoProto {
    use tensor_shape_proto::{dimension::Value, Dimension};
    let fixed = |v: usize| Dimension {
        value: Some(Value::DimValue(i64::try_from(v).unwrap_or(i64::MAX))),
        ..Dimension::default()
    };
    let dims = vec![
        Dimension {
            value: Some(Value::DimParam(BATCH_DIM.to_string())),
            ..Dimension::default()
        },
        fixed(c),
        fixed(h),
        fixed(w),
    ];
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: tensor_proto::DataType::Float as i32,
                shape: Some(TensorShapeProto { dim: dims }),
            })),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

/// Builds the ONNX graph of `model` for the buffer and masking mode in `opts`.
pub fn build_graph(
    model: &ModelDesc,
    opts: &BuildOptions<'_>,
) -> Result<tract_onnx::pb::ModelProto, BuildError> {
    let (min, max) = (meta::MIN_NN_LEN, meta::MAX_NN_LEN);
    let in_range = |v: usize| (min as usize..=max as usize).contains(&v);
    if !in_range(opts.x_len) || !in_range(opts.y_len) {
        return Err(BuildError::BoardSize {
            x_len: opts.x_len,
            y_len: opts.y_len,
            min,
            max,
        });
    }
    let mut metadata = model_metadata(model, opts)?;
    log::info!(
        "building ONNX graph for {} ({}), {}x{} {}",
        model.name,
        model.short_info(),
        opts.x_len,
        opts.y_len,
        if opts.exact { "exact" } else { "masked" }
    );

    let (x_len, y_len) = (opts.x_len, opts.y_len);
    let mut g = Graph::new(x_len, y_len, opts.exact);
    let body = trunk::body(&mut g, model, opts.progress)?;
    let tip_start = g.nodes.len();
    let tip = trunk::tip(&mut g, &body, model);
    heads::policy(&mut g, &tip, &model.policy_head);
    heads::value(&mut g, &tip, &model.value_head);
    metadata.fp32_nodes_trunk_tip_and_head = g
        .nodes
        .iter()
        .skip(tip_start)
        .map(|n| n.name.clone())
        .collect();
    metadata.fp32_nodes_rms_norm = std::mem::take(&mut g.rms_norm_nodes);

    let mut inputs = vec![
        value_info("InputSpatial", model.num_input_channels, y_len, x_len),
        value_info("InputGlobal", model.num_input_global_channels, 1, 1),
    ];
    if model.meta_encoder_version > 0 {
        inputs.push(value_info("InputMeta", model.num_input_meta_channels, 1, 1));
    }
    // Declared even when unused (exact graphs), and last: see the contract's note on ORT/OpenVINO.
    inputs.push(value_info(INPUT_MASK, 1, y_len, x_len));
    let outputs = vec![
        value_info(heads::OUTPUT_POLICY_PASS, model.num_policy_channels, 1, 1),
        value_info(
            heads::OUTPUT_POLICY,
            model.num_policy_channels,
            y_len,
            x_len,
        ),
        value_info(heads::OUTPUT_VALUE, model.num_value_channels, 1, 1),
        value_info(
            heads::OUTPUT_SCORE_VALUE,
            model.num_score_value_channels,
            1,
            1,
        ),
        value_info(
            heads::OUTPUT_OWNERSHIP,
            model.num_ownership_channels,
            y_len,
            x_len,
        ),
    ];
    let metadata_props = metadata
        .to_props()
        .into_iter()
        .map(|(key, value)| StringStringEntryProto { key, value })
        .collect();
    log::debug!(
        "graph has {} nodes and {} initializers",
        g.nodes.len(),
        g.initializers.len()
    );
    Ok(ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: OPSET_VERSION,
        }],
        producer_name: "tengen".to_string(),
        producer_version: env!("CARGO_PKG_VERSION").to_string(),
        graph: Some(GraphProto {
            node: g.nodes,
            name: metadata.name.clone(),
            initializer: g.initializers,
            input: inputs,
            output: outputs,
            ..GraphProto::default()
        }),
        metadata_props,
        ..ModelProto::default()
    })
}

/// Serializes a graph to the bytes of an `.onnx` file.
pub fn write_onnx(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}
