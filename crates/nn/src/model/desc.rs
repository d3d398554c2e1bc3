//! The whole network: trunk, heads and the model header (KataGo `ModelDesc`).

use super::blocks::Block;
use super::layers::{
    ActivationLayer, BatchNormLayer, ConvLayer, MatBiasLayer, MatMulLayer, RmsNormLayer,
};
use crate::contract::meta::PostProcessParams;

/// The SGF-metadata encoder of human-style models (KataGo `SGFMetadataEncoderDesc`):
/// a 3-layer MLP from the metadata input to a trunk bias.
#[derive(Clone, Debug, PartialEq)]
pub struct SgfMetadataEncoder {
    /// Encoder name.
    pub name: String,
    /// `metaEncoderVersion` (1).
    pub meta_encoder_version: u32,
    /// Width of the metadata input.
    pub num_input_meta_channels: usize,
    /// First dense layer.
    pub mul1: MatMulLayer,
    /// First bias.
    pub bias1: MatBiasLayer,
    /// First activation.
    pub act1: ActivationLayer,
    /// Second dense layer.
    pub mul2: MatMulLayer,
    /// Second bias.
    pub bias2: MatBiasLayer,
    /// Second activation.
    pub act2: ActivationLayer,
    /// Output layer, trunk width.
    pub mul3: MatMulLayer,
}

impl SgfMetadataEncoder {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.mul1.num_parameters()
            + self.bias1.num_parameters()
            + self.mul2.num_parameters()
            + self.bias2.num_parameters()
            + self.mul3.num_parameters()
    }
}

/// The final normalization of the trunk (`trunkNormKind` in the v15+ trunk header).
#[derive(Clone, Debug, PartialEq)]
pub enum TrunkTip {
    /// Batch norm (kind 0, the only kind before model version 15).
    BatchNorm(BatchNormLayer),
    /// RMS norm with gain and bias (kind 1).
    RmsNorm(RmsNormLayer),
}

impl TrunkTip {
    /// KataGo's `TRUNK_NORM_KIND_*` value.
    pub fn kind_id(&self) -> u32 {
        match self {
            TrunkTip::BatchNorm(_) => 0,
            TrunkTip::RmsNorm(_) => 1,
        }
    }

    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        match self {
            TrunkTip::BatchNorm(bn) => bn.num_parameters(),
            TrunkTip::RmsNorm(rms) => rms.num_parameters(),
        }
    }
}

/// The trunk (KataGo `TrunkDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct Trunk {
    /// Trunk name.
    pub name: String,
    /// Trunk width.
    pub trunk_num_channels: usize,
    /// Header field `midNumChannels` (informational).
    pub mid_num_channels: usize,
    /// Header field `regularNumChannels` (informational).
    pub regular_num_channels: usize,
    /// Header field `gpoolNumChannels` (informational).
    pub gpool_num_channels: usize,
    /// Convolution of the spatial input.
    pub initial_conv: ConvLayer,
    /// Dense layer of the global input, added as a bias.
    pub initial_matmul: MatMulLayer,
    /// Metadata encoder, present iff `metaEncoderVersion > 0`.
    pub sgf_metadata_encoder: Option<SgfMetadataEncoder>,
    /// The block stack.
    pub blocks: Vec<Block>,
    /// Final normalization.
    pub tip: TrunkTip,
    /// Final activation.
    pub tip_activation: ActivationLayer,
}

impl Trunk {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.initial_conv.num_parameters()
            + self.initial_matmul.num_parameters()
            + self
                .sgf_metadata_encoder
                .as_ref()
                .map_or(0, SgfMetadataEncoder::num_parameters)
            + self.blocks.iter().map(Block::num_parameters).sum::<u64>()
            + self.tip.num_parameters()
    }
}

/// The extra pass-move MLP of model version 15+ policy heads.
#[derive(Clone, Debug, PartialEq)]
pub struct PassMlp {
    /// Bias after `gpool_to_pass_mul`.
    pub bias: MatBiasLayer,
    /// Activation after the bias.
    pub activation: ActivationLayer,
    /// Output layer, one value per policy channel.
    pub mul2: MatMulLayer,
}

/// The policy head (KataGo `PolicyHeadDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyHead {
    /// Head name.
    pub name: String,
    /// Output channels (1, 2 or 4 depending on the version).
    pub policy_out_channels: usize,
    /// Spatial path convolution.
    pub p1_conv: ConvLayer,
    /// Pooled path convolution.
    pub g1_conv: ConvLayer,
    /// Pooled path normalization.
    pub g1_bn: BatchNormLayer,
    /// Pooled path activation.
    pub g1_activation: ActivationLayer,
    /// Pooled features to a bias on the spatial path.
    pub gpool_to_bias_mul: MatMulLayer,
    /// Spatial path normalization.
    pub p1_bn: BatchNormLayer,
    /// Spatial path activation.
    pub p1_activation: ActivationLayer,
    /// Convolution to the policy logits.
    pub p2_conv: ConvLayer,
    /// Pooled features to the pass logit (v < 15) or to the pass MLP's hidden layer (v15+).
    pub gpool_to_pass_mul: MatMulLayer,
    /// The rest of the pass MLP (model version 15+).
    pub pass_mlp: Option<PassMlp>,
}

impl PolicyHead {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        let pass = self
            .pass_mlp
            .as_ref()
            .map_or(0, |m| m.bias.num_parameters() + m.mul2.num_parameters());
        self.p1_conv.num_parameters()
            + self.g1_conv.num_parameters()
            + self.g1_bn.num_parameters()
            + self.gpool_to_bias_mul.num_parameters()
            + self.p1_bn.num_parameters()
            + self.p2_conv.num_parameters()
            + self.gpool_to_pass_mul.num_parameters()
            + pass
    }
}

/// The value head (KataGo `ValueHeadDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ValueHead {
    /// Head name.
    pub name: String,
    /// Convolution from the trunk.
    pub v1_conv: ConvLayer,
    /// Its normalization.
    pub v1_bn: BatchNormLayer,
    /// Its activation.
    pub v1_activation: ActivationLayer,
    /// Pooled features to the hidden layer.
    pub v2_mul: MatMulLayer,
    /// Hidden bias.
    pub v2_bias: MatBiasLayer,
    /// Hidden activation.
    pub v2_activation: ActivationLayer,
    /// Hidden to win/loss/no-result logits.
    pub v3_mul: MatMulLayer,
    /// Their bias.
    pub v3_bias: MatBiasLayer,
    /// Hidden to the score-value outputs.
    pub sv3_mul: MatMulLayer,
    /// Their bias.
    pub sv3_bias: MatBiasLayer,
    /// Ownership convolution (from the `v1` features).
    pub ownership_conv: ConvLayer,
}

impl ValueHead {
    /// Number of learnable parameters.
    pub fn num_parameters(&self) -> u64 {
        self.v1_conv.num_parameters()
            + self.v1_bn.num_parameters()
            + self.v2_mul.num_parameters()
            + self.v2_bias.num_parameters()
            + self.v3_mul.num_parameters()
            + self.v3_bias.num_parameters()
            + self.sv3_mul.num_parameters()
            + self.sv3_bias.num_parameters()
            + self.ownership_conv.num_parameters()
    }
}

/// A parsed KataGo model (KataGo `ModelDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelDesc {
    /// Model name (1 to 96 characters of `[A-Za-z0-9_-]`).
    pub name: String,
    /// Lower-case hex SHA-256 of the file bytes as read (the compressed bytes for `.gz`), as KataGo hashes it.
    pub sha256: String,
    /// Model version (3 to 17).
    pub model_version: u32,
    /// Spatial input channels.
    pub num_input_channels: usize,
    /// Global input channels.
    pub num_input_global_channels: usize,
    /// Metadata input channels (0 without an encoder).
    pub num_input_meta_channels: usize,
    /// Policy output channels.
    pub num_policy_channels: usize,
    /// Value output channels (3).
    pub num_value_channels: usize,
    /// Score-value output channels.
    pub num_score_value_channels: usize,
    /// Ownership output channels (1).
    pub num_ownership_channels: usize,
    /// `metaEncoderVersion` (0 for a normal model).
    pub meta_encoder_version: u32,
    /// Whether pass-alive input features should be computed as if multi-stone suicide were legal.
    pub prefer_pass_alive_under_suicide_rules: bool,
    /// Territory scoring excludes points next to chains in atari (newer format option; always
    /// `false` for files KataGo v1.17.2 accepts).
    pub prefer_exclude_territory_adjacent_to_atari: bool,
    /// Output post-processing multipliers (defaults before model version 13).
    pub post_process: PostProcessParams,
    /// The trunk.
    pub trunk: Trunk,
    /// The policy head.
    pub policy_head: PolicyHead,
    /// The value head.
    pub value_head: ValueHead,
}

impl ModelDesc {
    /// Total learnable parameters, counted as KataGo counts them.
    pub fn num_parameters(&self) -> u64 {
        self.trunk.num_parameters()
            + self.policy_head.num_parameters()
            + self.value_head.num_parameters()
    }

    /// Whether the trunk contains any transformer block (at any nesting level).
    pub fn has_any_transformer_blocks(&self) -> bool {
        self.trunk
            .blocks
            .iter()
            .any(Block::has_any_transformer_blocks)
    }

    /// Whether the trunk has nested-bottleneck blocks.
    pub fn has_any_nested_bottleneck_blocks(&self) -> bool {
        self.trunk
            .blocks
            .iter()
            .any(Block::has_any_nested_bottleneck_blocks)
    }

    /// KataGo's crude trunk depth in 3x3-convolution equivalents.
    pub fn trunk_spatial_conv_depth(&self) -> f64 {
        self.trunk.initial_conv.spatial_conv_depth()
            + self
                .trunk
                .blocks
                .iter()
                .map(Block::spatial_conv_depth)
                .sum::<f64>()
    }

    /// KataGo's short architecture summary, e.g. `nbt transformer, 10545753 params`.
    pub fn short_info(&self) -> String {
        let transformer = self.has_any_transformer_blocks();
        let kind = match (self.has_any_nested_bottleneck_blocks(), transformer) {
            (true, true) => "nbt transformer",
            (true, false) => "nbt convnet",
            (false, true) => "transformer",
            (false, false) => "convnet",
        };
        format!("{kind}, {} params", self.num_parameters())
    }
}
