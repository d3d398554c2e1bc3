//! Residual and transformer blocks of a KataGo trunk.

use super::layers::{ActivationLayer, BatchNormLayer, ConvLayer, MatMulLayer, TransformerRmsNorm};

/// The kinds of block the model format names (KataGo's `*_BLOCK_KIND`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `ordinary_block`: BN-act-conv, BN-act-conv, residual add.
    Ordinary,
    /// `gpool_block`: an ordinary block whose middle gets a bias from global pooling.
    GlobalPooling,
    /// `nested_bottleneck_block`: conv down, a stack of blocks, conv up, residual add.
    NestedBottleneck,
    /// `transformer_attention_block`: RMSNorm, multi-head self-attention, residual add.
    TransformerAttention,
    /// `transformer_ffn_block`: RMSNorm, feed-forward (SwiGLU), residual add.
    TransformerFfn,
}

impl BlockKind {
    /// Every kind, in KataGo's numbering order.
    pub const ALL: [BlockKind; 5] = [
        BlockKind::Ordinary,
        BlockKind::GlobalPooling,
        BlockKind::NestedBottleneck,
        BlockKind::TransformerAttention,
        BlockKind::TransformerFfn,
    ];

    /// The token that introduces a block of this kind in the model file.
    pub fn file_name(self) -> &'static str {
        match self {
            BlockKind::Ordinary => "ordinary_block",
            BlockKind::GlobalPooling => "gpool_block",
            BlockKind::NestedBottleneck => "nested_bottleneck_block",
            BlockKind::TransformerAttention => "transformer_attention_block",
            BlockKind::TransformerFfn => "transformer_ffn_block",
        }
    }

    /// KataGo's integer id for this kind (`desc.h`).
    pub fn id(self) -> u32 {
        match self {
            BlockKind::Ordinary => 0,
            BlockKind::GlobalPooling => 2,
            BlockKind::NestedBottleneck => 3,
            BlockKind::TransformerAttention => 4,
            BlockKind::TransformerFfn => 5,
        }
    }

    /// The kind a model-file token names, if any.
    pub fn from_file_name(token: &[u8]) -> Option<BlockKind> {
        BlockKind::ALL
            .into_iter()
            .find(|k| k.file_name().as_bytes() == token)
    }
}

/// An ordinary residual block (KataGo `ResidualBlockDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct ResidualBlock {
    /// Block name.
    pub name: String,
    /// Normalization of the block input.
    pub pre_bn: BatchNormLayer,
    /// Activation after `pre_bn`.
    pub pre_activation: ActivationLayer,
    /// First convolution.
    pub regular_conv: ConvLayer,
    /// Normalization after the first convolution.
    pub mid_bn: BatchNormLayer,
    /// Activation after `mid_bn`.
    pub mid_activation: ActivationLayer,
    /// Second convolution, added to the block input.
    pub final_conv: ConvLayer,
}

/// A residual block with a global-pooling bias (KataGo `GlobalPoolingResidualBlockDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalPoolingBlock {
    /// Block name.
    pub name: String,
    /// Normalization of the block input.
    pub pre_bn: BatchNormLayer,
    /// Activation after `pre_bn`.
    pub pre_activation: ActivationLayer,
    /// The regular path's convolution.
    pub regular_conv: ConvLayer,
    /// The pooled path's convolution.
    pub gpool_conv: ConvLayer,
    /// Normalization of the pooled path.
    pub gpool_bn: BatchNormLayer,
    /// Activation of the pooled path.
    pub gpool_activation: ActivationLayer,
    /// Pooled features (3 per pooled channel) to a bias on the regular path.
    pub gpool_to_bias_mul: MatMulLayer,
    /// Normalization after the biased regular path.
    pub mid_bn: BatchNormLayer,
    /// Activation after `mid_bn`.
    pub mid_activation: ActivationLayer,
    /// Final convolution, added to the block input.
    pub final_conv: ConvLayer,
}

/// A nested-bottleneck block (KataGo `NestedBottleneckResidualBlockDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct NestedBottleneckBlock {
    /// Block name.
    pub name: String,
    /// Normalization of the block input.
    pub pre_bn: BatchNormLayer,
    /// Activation after `pre_bn`.
    pub pre_activation: ActivationLayer,
    /// Convolution into the inner width.
    pub pre_conv: ConvLayer,
    /// The inner block stack.
    pub blocks: Vec<Block>,
    /// Normalization after the inner stack.
    pub post_bn: BatchNormLayer,
    /// Activation after `post_bn`.
    pub post_activation: ActivationLayer,
    /// Convolution back to the outer width, added to the block input.
    pub post_conv: ConvLayer,
}

/// Rotary position embedding of an attention block.
#[derive(Clone, Debug, PartialEq)]
pub enum Rope {
    /// No position embedding.
    None,
    /// Fixed frequencies `theta^(-2p/(head_dim/2))`; the first half of the pairs rotate with the
    /// row, the second half with the column.
    Fixed {
        /// The base.
        theta: f32,
    },
    /// Learned per-KV-head frequencies: `[kv_head][pair][x_freq, y_freq]`, angle `x*fx + y*fy`.
    Learnable {
        /// The frequencies, `num_kv_heads * q_head_dim / 2 * 2` values.
        freqs: Vec<f32>,
    },
}

/// A transformer self-attention block (KataGo `TransformerAttentionDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct TransformerAttentionBlock {
    /// Block name.
    pub name: String,
    /// Query heads.
    pub num_heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `num_heads`).
    pub num_kv_heads: usize,
    /// Query/key width per head.
    pub q_head_dim: usize,
    /// Value width per head.
    pub v_head_dim: usize,
    /// Position embedding.
    pub rope: Rope,
    /// Normalization of the block input.
    pub pre_norm: TransformerRmsNorm,
    /// Query projection, `num_heads * q_head_dim` outputs (head-major).
    pub q_proj: MatMulLayer,
    /// Key projection, `num_kv_heads * q_head_dim` outputs.
    pub k_proj: MatMulLayer,
    /// Value projection, `num_kv_heads * v_head_dim` outputs.
    pub v_proj: MatMulLayer,
    /// Output projection back to the trunk width.
    pub out_proj: MatMulLayer,
}

impl TransformerAttentionBlock {
    /// Rotation pairs per head (`q_head_dim / 2`).
    pub fn rope_num_pairs(&self) -> usize {
        self.q_head_dim / 2
    }

    /// RoPE cosine and sine tables for a `x_len` x `y_len` board buffer, or `None` without RoPE.
    ///
    /// Layout: learnable `[kv_head][pair][y * x_len + x]`, fixed `[pair][y * x_len + x]`.
    /// Computed in `f32` as KataGo does.
    pub fn rope_cos_sin(&self, x_len: usize, y_len: usize) -> Option<(Vec<f32>, Vec<f32>)> {
        let pairs = self.rope_num_pairs();
        let area = x_len * y_len;
        match &self.rope {
            Rope::None => None,
            Rope::Learnable { freqs } => {
                let mut cos = Vec::with_capacity(freqs.len() / 2 * area);
                let mut sin = Vec::with_capacity(freqs.len() / 2 * area);
                for f in freqs.chunks_exact(2) {
                    let (fx, fy) = (
                        f.first().copied().unwrap_or(0.0),
                        f.get(1).copied().unwrap_or(0.0),
                    );
                    for y in 0..y_len {
                        for x in 0..x_len {
                            let angle = x as f32 * fx + y as f32 * fy;
                            cos.push(angle.cos());
                            sin.push(angle.sin());
                        }
                    }
                }
                Some((cos, sin))
            }
            Rope::Fixed { theta } => {
                let per_axis = pairs / 2;
                let dim_half = (self.q_head_dim / 2) as f32;
                let mut cos = Vec::with_capacity(pairs * area);
                let mut sin = Vec::with_capacity(pairs * area);
                for p in 0..pairs {
                    // The first `per_axis` pairs follow the row, the rest the column.
                    let (k, along_y) = if p < per_axis {
                        (p, true)
                    } else {
                        (p - per_axis, false)
                    };
                    let freq = 1.0 / theta.powf((2 * k) as f32 / dim_half);
                    for y in 0..y_len {
                        for x in 0..x_len {
                            let angle = if along_y {
                                y as f32 * freq
                            } else {
                                x as f32 * freq
                            };
                            cos.push(angle.cos());
                            sin.push(angle.sin());
                        }
                    }
                }
                Some((cos, sin))
            }
        }
    }

    /// Number of learnable parameters (including learned RoPE frequencies).
    pub fn num_parameters(&self) -> u64 {
        let rope = match &self.rope {
            Rope::Learnable { freqs } => freqs.len() as u64,
            _ => 0,
        };
        self.pre_norm.num_parameters()
            + self.q_proj.num_parameters()
            + self.k_proj.num_parameters()
            + self.v_proj.num_parameters()
            + self.out_proj.num_parameters()
            + rope
    }
}

/// A transformer feed-forward block (KataGo `TransformerFFNDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct TransformerFfnBlock {
    /// Block name.
    pub name: String,
    /// Trunk width.
    pub num_channels: usize,
    /// Hidden width.
    pub ffn_channels: usize,
    /// Normalization of the block input.
    pub pre_norm: TransformerRmsNorm,
    /// First projection.
    pub linear1: MatMulLayer,
    /// SwiGLU gate projection (`silu(linear1) * gate`); `None` for a plain FFN.
    pub linear_gate: Option<MatMulLayer>,
    /// Projection back to the trunk width.
    pub linear2: MatMulLayer,
}

impl TransformerFfnBlock {
    /// Whether the block is a SwiGLU FFN.
    pub fn uses_swiglu(&self) -> bool {
        self.linear_gate.is_some()
    }
}

/// One block of a block stack.
// Blocks are built once per model load and never moved on a hot path, so boxing the
// larger variants would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// See [`ResidualBlock`].
    Ordinary(ResidualBlock),
    /// See [`GlobalPoolingBlock`].
    GlobalPooling(GlobalPoolingBlock),
    /// See [`NestedBottleneckBlock`].
    NestedBottleneck(NestedBottleneckBlock),
    /// See [`TransformerAttentionBlock`].
    TransformerAttention(TransformerAttentionBlock),
    /// See [`TransformerFfnBlock`].
    TransformerFfn(TransformerFfnBlock),
}

impl Block {
    /// The block's kind.
    pub fn kind(&self) -> BlockKind {
        match self {
            Block::Ordinary(_) => BlockKind::Ordinary,
            Block::GlobalPooling(_) => BlockKind::GlobalPooling,
            Block::NestedBottleneck(_) => BlockKind::NestedBottleneck,
            Block::TransformerAttention(_) => BlockKind::TransformerAttention,
            Block::TransformerFfn(_) => BlockKind::TransformerFfn,
        }
    }

    /// The block's name.
    pub fn name(&self) -> &str {
        match self {
            Block::Ordinary(b) => &b.name,
            Block::GlobalPooling(b) => &b.name,
            Block::NestedBottleneck(b) => &b.name,
            Block::TransformerAttention(b) => &b.name,
            Block::TransformerFfn(b) => &b.name,
        }
    }

    /// Number of learnable parameters, including nested blocks.
    pub fn num_parameters(&self) -> u64 {
        match self {
            Block::Ordinary(b) => {
                b.pre_bn.num_parameters()
                    + b.regular_conv.num_parameters()
                    + b.mid_bn.num_parameters()
                    + b.final_conv.num_parameters()
            }
            Block::GlobalPooling(b) => {
                b.pre_bn.num_parameters()
                    + b.regular_conv.num_parameters()
                    + b.gpool_conv.num_parameters()
                    + b.gpool_bn.num_parameters()
                    + b.gpool_to_bias_mul.num_parameters()
                    + b.mid_bn.num_parameters()
                    + b.final_conv.num_parameters()
            }
            Block::NestedBottleneck(b) => {
                b.pre_bn.num_parameters()
                    + b.pre_conv.num_parameters()
                    + b.blocks.iter().map(Block::num_parameters).sum::<u64>()
                    + b.post_bn.num_parameters()
                    + b.post_conv.num_parameters()
            }
            Block::TransformerAttention(b) => b.num_parameters(),
            Block::TransformerFfn(b) => {
                b.pre_norm.num_parameters()
                    + b.linear1.num_parameters()
                    + b.linear_gate
                        .as_ref()
                        .map_or(0, MatMulLayer::num_parameters)
                    + b.linear2.num_parameters()
            }
        }
    }

    /// KataGo's crude spatial depth (transformer blocks count 2 each, as KataGo does).
    pub fn spatial_conv_depth(&self) -> f64 {
        match self {
            Block::Ordinary(b) => {
                b.regular_conv.spatial_conv_depth() + b.final_conv.spatial_conv_depth()
            }
            Block::GlobalPooling(b) => {
                b.regular_conv.spatial_conv_depth() + b.final_conv.spatial_conv_depth()
            }
            Block::NestedBottleneck(b) => {
                b.pre_conv.spatial_conv_depth()
                    + b.blocks.iter().map(Block::spatial_conv_depth).sum::<f64>()
                    + b.post_conv.spatial_conv_depth()
            }
            Block::TransformerAttention(_) | Block::TransformerFfn(_) => 2.0,
        }
    }

    /// Whether this block is, or contains, a transformer block.
    pub fn has_any_transformer_blocks(&self) -> bool {
        match self {
            Block::TransformerAttention(_) | Block::TransformerFfn(_) => true,
            Block::NestedBottleneck(b) => b.blocks.iter().any(Block::has_any_transformer_blocks),
            Block::Ordinary(_) | Block::GlobalPooling(_) => false,
        }
    }

    /// Whether this block is, or contains, a nested-bottleneck block.
    pub fn has_any_nested_bottleneck_blocks(&self) -> bool {
        matches!(self, Block::NestedBottleneck(_))
    }
}
