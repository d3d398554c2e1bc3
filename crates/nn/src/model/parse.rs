//! Parsing the decompressed model text into a [`ModelDesc`], with every count checked.
//!
//! The field order follows KataGo's `desc.cpp`; the checks are KataGo's plus a few stricter
//! ones that keep later stages (graph building) from ever seeing inconsistent shapes.

use super::blocks::{
    Block, BlockKind, GlobalPoolingBlock, NestedBottleneckBlock, ResidualBlock, Rope,
    TransformerAttentionBlock, TransformerFfnBlock,
};
use super::desc::{ModelDesc, PassMlp, PolicyHead, SgfMetadataEncoder, Trunk, TrunkTip, ValueHead};
use super::error::ModelError;
use super::layers::{
    Activation, ActivationLayer, BatchNormLayer, ConvLayer, MatBiasLayer, MatMulLayer,
    RmsNormLayer, TransformerRmsNorm,
};
use super::tokens::{shorten, Cursor};
use crate::contract::meta::PostProcessParams;
use crate::contract::version;

/// Largest channel count of any layer (real nets use at most a few thousand).
pub const MAX_CHANNELS: usize = 1 << 16;
/// Largest convolution kernel edge (real nets use 1, 3 and 5).
pub const MAX_KERNEL: usize = 63;
/// Largest convolution dilation.
pub const MAX_DILATION: usize = 64;
/// Most blocks in one block stack.
pub const MAX_BLOCKS: usize = 4096;
/// Deepest nesting of nested-bottleneck blocks (KataGo's nets nest one level).
pub const MAX_NESTING_DEPTH: usize = 8;
/// Longest model name KataGo accepts.
pub const MAX_NAME_LEN: usize = 96;

/// Parses decompressed model bytes; `sha256` is stored in the result.
pub(crate) fn parse_desc(data: &[u8], sha256: String) -> Result<ModelDesc, ModelError> {
    let mut p = Parser {
        cur: Cursor::new(data),
        version: 0,
    };
    p.model(sha256)
}

struct Parser<'a> {
    cur: Cursor<'a>,
    version: u32,
}

fn child(ctx: &str, name: &str) -> String {
    if ctx.is_empty() {
        name.to_string()
    } else {
        format!("{ctx}/{name}")
    }
}

/// `Err(ShapeMismatch)` unless `a == b`.
fn same(ctx: &str, a_name: &str, a: usize, b_name: &str, b: usize) -> Result<(), ModelError> {
    if a == b {
        Ok(())
    } else {
        Err(ModelError::ShapeMismatch {
            context: ctx.to_string(),
            detail: format!("{a_name} ({a}) != {b_name} ({b})"),
        })
    }
}

/// Product of counts as a float-block length (cannot overflow: every factor is bounded).
fn product(factors: &[usize]) -> u64 {
    factors
        .iter()
        .fold(1u64, |acc, &f| acc.saturating_mul(f as u64))
}

impl Parser<'_> {
    fn unsupported_option(&mut self, ctx: &str, what: &'static str) -> Result<(), ModelError> {
        let (v, offset) = self.cur.int(ctx, what)?;
        if v != 0 {
            return Err(ModelError::Unsupported {
                context: ctx.to_string(),
                what,
                detail: format!("value {v}, this reader only implements 0"),
                offset,
            });
        }
        Ok(())
    }

    fn epsilon(&mut self, ctx: &str, max: Option<f32>) -> Result<f32, ModelError> {
        let (v, offset) = self.cur.number(ctx, "epsilon")?;
        let eps = v as f32;
        let too_big = max.is_some_and(|m| eps > m);
        if !(eps.is_finite() && eps > 0.0) || too_big {
            return Err(ModelError::OutOfRange {
                context: ctx.to_string(),
                field: "epsilon",
                value: v.to_string(),
                reason: match max {
                    Some(m) => format!("must be positive and at most {m}"),
                    None => "must be positive and finite".to_string(),
                },
                offset,
            });
        }
        Ok(eps)
    }

    fn conv(&mut self, parent: &str) -> Result<ConvLayer, ModelError> {
        let name = self.cur.name(parent, "conv layer name")?;
        let ctx = child(parent, &name);
        let ky = self.cur.count(&ctx, "convYSize", MAX_KERNEL)?;
        let kx = self.cur.count(&ctx, "convXSize", MAX_KERNEL)?;
        let in_c = self.cur.count(&ctx, "inChannels", MAX_CHANNELS)?;
        let out_c = self.cur.count(&ctx, "outChannels", MAX_CHANNELS)?;
        let dy = self.cur.count(&ctx, "dilationY", MAX_DILATION)?;
        let dx = self.cur.count(&ctx, "dilationX", MAX_DILATION)?;
        if ky % 2 == 0 || kx % 2 == 0 {
            return Err(ModelError::OutOfRange {
                context: ctx,
                field: "convolution size",
                value: format!("{ky}x{kx}"),
                reason: "kernel sizes must be odd".to_string(),
                offset: self.cur.offset(),
            });
        }
        let file = self.cur.floats(&ctx, product(&[ky, kx, in_c, out_c]))?;
        // The file stores y, x, in, out (out fastest); ONNX wants out, in, y, x.
        let mut weights = vec![0.0f32; file.len()];
        let mut src = file.iter();
        for y in 0..ky {
            for x in 0..kx {
                for ic in 0..in_c {
                    for oc in 0..out_c {
                        let dst = ((oc * in_c + ic) * ky + y) * kx + x;
                        if let (Some(w), Some(d)) = (src.next(), weights.get_mut(dst)) {
                            *d = *w;
                        }
                    }
                }
            }
        }
        Ok(ConvLayer {
            name,
            kernel_y: ky,
            kernel_x: kx,
            in_channels: in_c,
            out_channels: out_c,
            dilation_y: dy,
            dilation_x: dx,
            weights,
        })
    }

    fn batch_norm(&mut self, parent: &str) -> Result<BatchNormLayer, ModelError> {
        let name = self.cur.name(parent, "batch norm name")?;
        let ctx = child(parent, &name);
        let n = self.cur.count(&ctx, "numChannels", MAX_CHANNELS)?;
        let epsilon = self.epsilon(&ctx, None)?;
        let has_scale = self.cur.flag(&ctx, "hasScale")?;
        let has_bias = self.cur.flag(&ctx, "hasBias")?;
        let mean = self.cur.floats(&ctx, n as u64)?;
        let variance = self.cur.floats(&ctx, n as u64)?;
        let scale = if has_scale {
            self.cur.floats(&ctx, n as u64)?
        } else {
            vec![1.0; n]
        };
        let bias = if has_bias {
            self.cur.floats(&ctx, n as u64)?
        } else {
            vec![0.0; n]
        };
        let bn = BatchNormLayer {
            name,
            num_channels: n,
            epsilon,
            has_scale,
            has_bias,
            mean,
            variance,
            scale,
            bias,
        };
        // A negative variance (or an overflowing ratio) would make every output NaN or infinite.
        let (ms, mb) = bn.merged_scale_bias();
        if ms.iter().chain(&mb).any(|v| !v.is_finite()) {
            return Err(ModelError::NonFiniteWeight {
                context: ctx,
                offset: self.cur.offset(),
            });
        }
        Ok(bn)
    }

    fn activation(&mut self, parent: &str) -> Result<ActivationLayer, ModelError> {
        let name = self.cur.name(parent, "activation name")?;
        let ctx = child(parent, &name);
        let activation = if self.version >= 11 {
            let (tok, offset) = self.cur.token(&ctx, "activation kind")?;
            Activation::from_file_name(tok).ok_or_else(|| ModelError::UnsupportedActivation {
                context: ctx.clone(),
                name: shorten(tok),
                offset,
            })?
        } else {
            Activation::Relu
        };
        Ok(ActivationLayer { name, activation })
    }

    fn matmul(&mut self, parent: &str) -> Result<MatMulLayer, ModelError> {
        let name = self.cur.name(parent, "matmul layer name")?;
        let ctx = child(parent, &name);
        let in_c = self.cur.count(&ctx, "inChannels", MAX_CHANNELS)?;
        let out_c = self.cur.count(&ctx, "outChannels", MAX_CHANNELS)?;
        let weights = self.cur.floats(&ctx, product(&[in_c, out_c]))?;
        Ok(MatMulLayer {
            name,
            in_channels: in_c,
            out_channels: out_c,
            weights,
        })
    }

    fn matbias(&mut self, parent: &str) -> Result<MatBiasLayer, ModelError> {
        let name = self.cur.name(parent, "matbias layer name")?;
        let ctx = child(parent, &name);
        let n = self.cur.count(&ctx, "numChannels", MAX_CHANNELS)?;
        let weights = self.cur.floats(&ctx, n as u64)?;
        Ok(MatBiasLayer {
            name,
            num_channels: n,
            weights,
        })
    }

    fn rms_norm(&mut self, parent: &str) -> Result<RmsNormLayer, ModelError> {
        let name = self.cur.name(parent, "rms norm name")?;
        let ctx = child(parent, &name);
        let n = self.cur.count(&ctx, "numChannels", MAX_CHANNELS)?;
        let epsilon = self.epsilon(&ctx, Some(1.0))?;
        let (spatial, _) = self.cur.int(&ctx, "spatial")?;
        let (cgroup, offset) = self.cur.int(&ctx, "cgroupSize")?;
        if cgroup != 0 {
            return Err(ModelError::Unsupported {
                context: ctx,
                what: "grouped RMS norm",
                detail: format!("cgroupSize {cgroup}, only 0 is implemented"),
                offset,
            });
        }
        let gamma = self.cur.floats(&ctx, n as u64)?;
        let beta = self.cur.floats(&ctx, n as u64)?;
        Ok(RmsNormLayer {
            name,
            num_channels: n,
            epsilon,
            spatial: spatial != 0,
            gamma,
            beta,
        })
    }

    fn transformer_rms_norm(&mut self, parent: &str) -> Result<TransformerRmsNorm, ModelError> {
        let name = self.cur.name(parent, "transformer rms norm name")?;
        let ctx = child(parent, &name);
        let n = self.cur.count(&ctx, "numChannels", MAX_CHANNELS)?;
        let epsilon = self.epsilon(&ctx, Some(1.0))?;
        let weight = self.cur.floats(&ctx, n as u64)?;
        Ok(TransformerRmsNorm {
            name,
            num_channels: n,
            epsilon,
            weight,
        })
    }

    fn residual_block(&mut self, parent: &str) -> Result<ResidualBlock, ModelError> {
        let name = self.cur.name(parent, "block name")?;
        let ctx = child(parent, &name);
        let pre_bn = self.batch_norm(&ctx)?;
        let pre_activation = self.activation(&ctx)?;
        let regular_conv = self.conv(&ctx)?;
        let mid_bn = self.batch_norm(&ctx)?;
        let mid_activation = self.activation(&ctx)?;
        let final_conv = self.conv(&ctx)?;
        same(
            &ctx,
            "preBN.numChannels",
            pre_bn.num_channels,
            "regularConv.inChannels",
            regular_conv.in_channels,
        )?;
        same(
            &ctx,
            "midBN.numChannels",
            mid_bn.num_channels,
            "regularConv.outChannels",
            regular_conv.out_channels,
        )?;
        same(
            &ctx,
            "midBN.numChannels",
            mid_bn.num_channels,
            "finalConv.inChannels",
            final_conv.in_channels,
        )?;
        Ok(ResidualBlock {
            name,
            pre_bn,
            pre_activation,
            regular_conv,
            mid_bn,
            mid_activation,
            final_conv,
        })
    }

    fn gpool_block(&mut self, parent: &str) -> Result<GlobalPoolingBlock, ModelError> {
        let name = self.cur.name(parent, "block name")?;
        let ctx = child(parent, &name);
        let pre_bn = self.batch_norm(&ctx)?;
        let pre_activation = self.activation(&ctx)?;
        let regular_conv = self.conv(&ctx)?;
        let gpool_conv = self.conv(&ctx)?;
        let gpool_bn = self.batch_norm(&ctx)?;
        let gpool_activation = self.activation(&ctx)?;
        let gpool_to_bias_mul = self.matmul(&ctx)?;
        let mid_bn = self.batch_norm(&ctx)?;
        let mid_activation = self.activation(&ctx)?;
        let final_conv = self.conv(&ctx)?;
        same(
            &ctx,
            "preBN.numChannels",
            pre_bn.num_channels,
            "regularConv.inChannels",
            regular_conv.in_channels,
        )?;
        same(
            &ctx,
            "preBN.numChannels",
            pre_bn.num_channels,
            "gpoolConv.inChannels",
            gpool_conv.in_channels,
        )?;
        same(
            &ctx,
            "gpoolBN.numChannels",
            gpool_bn.num_channels,
            "gpoolConv.outChannels",
            gpool_conv.out_channels,
        )?;
        same(
            &ctx,
            "gpoolBN.numChannels*3",
            gpool_bn.num_channels * 3,
            "gpoolToBiasMul.inChannels",
            gpool_to_bias_mul.in_channels,
        )?;
        same(
            &ctx,
            "midBN.numChannels",
            mid_bn.num_channels,
            "regularConv.outChannels",
            regular_conv.out_channels,
        )?;
        same(
            &ctx,
            "midBN.numChannels",
            mid_bn.num_channels,
            "gpoolToBiasMul.outChannels",
            gpool_to_bias_mul.out_channels,
        )?;
        same(
            &ctx,
            "midBN.numChannels",
            mid_bn.num_channels,
            "finalConv.inChannels",
            final_conv.in_channels,
        )?;
        Ok(GlobalPoolingBlock {
            name,
            pre_bn,
            pre_activation,
            regular_conv,
            gpool_conv,
            gpool_bn,
            gpool_activation,
            gpool_to_bias_mul,
            mid_bn,
            mid_activation,
            final_conv,
        })
    }

    fn nested_block(
        &mut self,
        parent: &str,
        depth: usize,
    ) -> Result<NestedBottleneckBlock, ModelError> {
        let name = self.cur.name(parent, "block name")?;
        let ctx = child(parent, &name);
        let num_blocks = self.cur.count(&ctx, "numBlocks", MAX_BLOCKS)?;
        let pre_bn = self.batch_norm(&ctx)?;
        let pre_activation = self.activation(&ctx)?;
        let pre_conv = self.conv(&ctx)?;
        let blocks = self.block_stack(&ctx, num_blocks, pre_conv.out_channels, depth + 1)?;
        let post_bn = self.batch_norm(&ctx)?;
        let post_activation = self.activation(&ctx)?;
        let post_conv = self.conv(&ctx)?;
        same(
            &ctx,
            "preBN.numChannels",
            pre_bn.num_channels,
            "preConv.inChannels",
            pre_conv.in_channels,
        )?;
        same(
            &ctx,
            "postBN.numChannels",
            post_bn.num_channels,
            "preConv.outChannels",
            pre_conv.out_channels,
        )?;
        same(
            &ctx,
            "postBN.numChannels",
            post_bn.num_channels,
            "postConv.inChannels",
            post_conv.in_channels,
        )?;
        Ok(NestedBottleneckBlock {
            name,
            pre_bn,
            pre_activation,
            pre_conv,
            blocks,
            post_bn,
            post_activation,
            post_conv,
        })
    }

    fn attention_block(
        &mut self,
        parent: &str,
        channels: usize,
    ) -> Result<TransformerAttentionBlock, ModelError> {
        let name = self.cur.name(parent, "block name")?;
        let ctx = child(parent, &name);
        let num_heads = self.cur.count(&ctx, "numHeads", MAX_CHANNELS)?;
        let (kv, kv_offset) = self.cur.int(&ctx, "numKVHeads")?;
        let q_head_dim = self.cur.count(&ctx, "qHeadDim", MAX_CHANNELS)?;
        let v_head_dim = self.cur.count(&ctx, "vHeadDim", MAX_CHANNELS)?;
        let (use_rope, _) = self.cur.int(&ctx, "useRope")?;
        let (learnable_rope, _) = self.cur.int(&ctx, "learnableRope")?;
        let num_kv_heads = usize::try_from(kv)
            .ok()
            .filter(|&k| k >= 1 && k <= num_heads && num_heads % k == 0);
        let Some(num_kv_heads) = num_kv_heads else {
            return Err(ModelError::OutOfRange {
                context: ctx,
                field: "numKVHeads",
                value: kv.to_string(),
                reason: format!("must be positive and divide numHeads ({num_heads})"),
                offset: kv_offset,
            });
        };
        let (use_rope, learnable_rope) = (use_rope != 0, learnable_rope != 0);
        if use_rope && q_head_dim % 2 != 0 {
            return Err(ModelError::OutOfRange {
                context: ctx,
                field: "qHeadDim",
                value: q_head_dim.to_string(),
                reason: "must be even when RoPE is used".to_string(),
                offset: self.cur.offset(),
            });
        }
        let pre_norm = self.transformer_rms_norm(&ctx)?;
        let q_proj = self.matmul(&ctx)?;
        let k_proj = self.matmul(&ctx)?;
        let v_proj = self.matmul(&ctx)?;
        let out_proj = self.matmul(&ctx)?;
        same(
            &ctx,
            "qProj.outChannels",
            q_proj.out_channels,
            "numHeads*qHeadDim",
            num_heads * q_head_dim,
        )?;
        same(
            &ctx,
            "kProj.outChannels",
            k_proj.out_channels,
            "numKVHeads*qHeadDim",
            num_kv_heads * q_head_dim,
        )?;
        same(
            &ctx,
            "vProj.outChannels",
            v_proj.out_channels,
            "numKVHeads*vHeadDim",
            num_kv_heads * v_head_dim,
        )?;
        same(
            &ctx,
            "outProj.inChannels",
            out_proj.in_channels,
            "numHeads*vHeadDim",
            num_heads * v_head_dim,
        )?;
        for (what, c) in [
            ("preLN.numChannels", pre_norm.num_channels),
            ("qProj.inChannels", q_proj.in_channels),
            ("kProj.inChannels", k_proj.in_channels),
            ("vProj.inChannels", v_proj.in_channels),
            ("outProj.outChannels", out_proj.out_channels),
        ] {
            same(&ctx, what, c, "trunk channels", channels)?;
        }
        let rope = if !use_rope {
            Rope::None
        } else if learnable_rope {
            self.cur.name(&ctx, "rope frequency name")?;
            let heads = self.cur.count(&ctx, "ropeNumKVHeads", MAX_CHANNELS)?;
            let pairs = self.cur.count(&ctx, "ropeNumPairs", MAX_CHANNELS)?;
            let dim2 = self.cur.count(&ctx, "ropeDim2", MAX_CHANNELS)?;
            same(&ctx, "ropeNumKVHeads", heads, "numKVHeads", num_kv_heads)?;
            same(&ctx, "ropeNumPairs", pairs, "qHeadDim/2", q_head_dim / 2)?;
            same(&ctx, "rope frequency dim2", dim2, "2", 2)?;
            Rope::Learnable {
                freqs: self.cur.floats(&ctx, product(&[heads, pairs, 2]))?,
            }
        } else {
            self.cur.name(&ctx, "rope theta name")?;
            let (theta, offset) = self.cur.number(&ctx, "ropeTheta")?;
            let theta_f = theta as f32;
            if !(theta_f.is_finite() && theta_f > 0.0) {
                return Err(ModelError::OutOfRange {
                    context: ctx,
                    field: "ropeTheta",
                    value: theta.to_string(),
                    reason: "must be positive and finite".to_string(),
                    offset,
                });
            }
            Rope::Fixed { theta: theta_f }
        };
        Ok(TransformerAttentionBlock {
            name,
            num_heads,
            num_kv_heads,
            q_head_dim,
            v_head_dim,
            rope,
            pre_norm,
            q_proj,
            k_proj,
            v_proj,
            out_proj,
        })
    }

    fn ffn_block(
        &mut self,
        parent: &str,
        channels: usize,
    ) -> Result<TransformerFfnBlock, ModelError> {
        let name = self.cur.name(parent, "block name")?;
        let ctx = child(parent, &name);
        let num_channels = self.cur.count(&ctx, "numChannels", MAX_CHANNELS)?;
        let ffn_channels = self.cur.count(&ctx, "ffnChannels", MAX_CHANNELS)?;
        let (swiglu, _) = self.cur.int(&ctx, "useSwiGLU")?;
        let pre_norm = self.transformer_rms_norm(&ctx)?;
        let linear1 = self.matmul(&ctx)?;
        let linear_gate = if swiglu != 0 {
            Some(self.matmul(&ctx)?)
        } else {
            None
        };
        let linear2 = self.matmul(&ctx)?;
        same(
            &ctx,
            "numChannels",
            num_channels,
            "trunk channels",
            channels,
        )?;
        same(
            &ctx,
            "preLN.numChannels",
            pre_norm.num_channels,
            "numChannels",
            num_channels,
        )?;
        same(
            &ctx,
            "linear1.inChannels",
            linear1.in_channels,
            "numChannels",
            num_channels,
        )?;
        same(
            &ctx,
            "linear1.outChannels",
            linear1.out_channels,
            "ffnChannels",
            ffn_channels,
        )?;
        if let Some(gate) = &linear_gate {
            same(
                &ctx,
                "linearGate.inChannels",
                gate.in_channels,
                "numChannels",
                num_channels,
            )?;
            same(
                &ctx,
                "linearGate.outChannels",
                gate.out_channels,
                "ffnChannels",
                ffn_channels,
            )?;
        }
        same(
            &ctx,
            "linear2.inChannels",
            linear2.in_channels,
            "ffnChannels",
            ffn_channels,
        )?;
        same(
            &ctx,
            "linear2.outChannels",
            linear2.out_channels,
            "numChannels",
            num_channels,
        )?;
        Ok(TransformerFfnBlock {
            name,
            num_channels,
            ffn_channels,
            pre_norm,
            linear1,
            linear_gate,
            linear2,
        })
    }

    fn block_stack(
        &mut self,
        ctx: &str,
        num_blocks: usize,
        channels: usize,
        depth: usize,
    ) -> Result<Vec<Block>, ModelError> {
        if depth > MAX_NESTING_DEPTH {
            return Err(ModelError::TooDeep {
                context: ctx.to_string(),
                limit: MAX_NESTING_DEPTH,
            });
        }
        let mut blocks = Vec::new();
        for _ in 0..num_blocks {
            let (tok, offset) = self.cur.token(ctx, "block kind")?;
            let kind =
                BlockKind::from_file_name(tok).ok_or_else(|| ModelError::UnsupportedBlockKind {
                    context: ctx.to_string(),
                    kind: shorten(tok),
                    offset,
                })?;
            let block = match kind {
                BlockKind::Ordinary => {
                    let b = self.residual_block(ctx)?;
                    let bctx = child(ctx, &b.name);
                    same(
                        &bctx,
                        "preBN.numChannels",
                        b.pre_bn.num_channels,
                        "trunk channels",
                        channels,
                    )?;
                    same(
                        &bctx,
                        "finalConv.outChannels",
                        b.final_conv.out_channels,
                        "trunk channels",
                        channels,
                    )?;
                    Block::Ordinary(b)
                }
                BlockKind::GlobalPooling => {
                    let b = self.gpool_block(ctx)?;
                    let bctx = child(ctx, &b.name);
                    same(
                        &bctx,
                        "preBN.numChannels",
                        b.pre_bn.num_channels,
                        "trunk channels",
                        channels,
                    )?;
                    same(
                        &bctx,
                        "finalConv.outChannels",
                        b.final_conv.out_channels,
                        "trunk channels",
                        channels,
                    )?;
                    Block::GlobalPooling(b)
                }
                BlockKind::NestedBottleneck => {
                    let b = self.nested_block(ctx, depth)?;
                    let bctx = child(ctx, &b.name);
                    same(
                        &bctx,
                        "preBN.numChannels",
                        b.pre_bn.num_channels,
                        "trunk channels",
                        channels,
                    )?;
                    same(
                        &bctx,
                        "postConv.outChannels",
                        b.post_conv.out_channels,
                        "trunk channels",
                        channels,
                    )?;
                    Block::NestedBottleneck(b)
                }
                BlockKind::TransformerAttention => {
                    Block::TransformerAttention(self.attention_block(ctx, channels)?)
                }
                BlockKind::TransformerFfn => Block::TransformerFfn(self.ffn_block(ctx, channels)?),
            };
            blocks.push(block);
        }
        Ok(blocks)
    }

    fn sgf_encoder(
        &mut self,
        parent: &str,
        meta_version: u32,
        channels: usize,
    ) -> Result<SgfMetadataEncoder, ModelError> {
        let name = self.cur.name(parent, "metadata encoder name")?;
        let ctx = child(parent, &name);
        let expected = version::meta_channels(meta_version).unwrap_or(0) as usize;
        let (n, offset) = self.cur.int(&ctx, "numInputMetaChannels")?;
        if usize::try_from(n).ok() != Some(expected) {
            return Err(ModelError::OutOfRange {
                context: ctx,
                field: "numInputMetaChannels",
                value: n.to_string(),
                reason: format!("metaEncoderVersion {meta_version} has {expected}"),
                offset,
            });
        }
        let mul1 = self.matmul(&ctx)?;
        let bias1 = self.matbias(&ctx)?;
        let act1 = self.activation(&ctx)?;
        let mul2 = self.matmul(&ctx)?;
        let bias2 = self.matbias(&ctx)?;
        let act2 = self.activation(&ctx)?;
        let mul3 = self.matmul(&ctx)?;
        same(
            &ctx,
            "mul1.inChannels",
            mul1.in_channels,
            "numInputMetaChannels",
            expected,
        )?;
        same(
            &ctx,
            "mul1.outChannels",
            mul1.out_channels,
            "bias1.numChannels",
            bias1.num_channels,
        )?;
        same(
            &ctx,
            "mul2.inChannels",
            mul2.in_channels,
            "mul1.outChannels",
            mul1.out_channels,
        )?;
        same(
            &ctx,
            "mul2.outChannels",
            mul2.out_channels,
            "bias2.numChannels",
            bias2.num_channels,
        )?;
        same(
            &ctx,
            "mul3.inChannels",
            mul3.in_channels,
            "mul2.outChannels",
            mul2.out_channels,
        )?;
        same(
            &ctx,
            "mul3.outChannels",
            mul3.out_channels,
            "trunk channels",
            channels,
        )?;
        Ok(SgfMetadataEncoder {
            name,
            meta_encoder_version: meta_version,
            num_input_meta_channels: expected,
            mul1,
            bias1,
            act1,
            mul2,
            bias2,
            act2,
            mul3,
        })
    }

    fn trunk(&mut self, meta_version: u32) -> Result<Trunk, ModelError> {
        let name = self.cur.name("", "trunk name")?;
        let ctx = name.clone();
        let num_blocks = self.cur.count(&ctx, "numBlocks", MAX_BLOCKS)?;
        let trunk_c = self.cur.count(&ctx, "trunkNumChannels", MAX_CHANNELS)?;
        let mid_c = self.cur.count(&ctx, "midNumChannels", MAX_CHANNELS)?;
        let regular_c = self.cur.count(&ctx, "regularNumChannels", MAX_CHANNELS)?;
        self.cur.int(&ctx, "dilatedNumChannels")?;
        let gpool_c = self.cur.count(&ctx, "gpoolNumChannels", MAX_CHANNELS)?;
        let mut norm_kind = 0;
        if self.version >= 15 {
            let (kind, offset) = self.cur.int(&ctx, "trunkNormKind")?;
            if kind != 0 && kind != 1 {
                return Err(ModelError::Unsupported {
                    context: ctx,
                    what: "trunk norm kind",
                    detail: format!(
                        "kind {kind}, only 0 (batch norm) and 1 (RMS norm) are implemented"
                    ),
                    offset,
                });
            }
            norm_kind = kind;
            for what in [
                "trunk option B",
                "trunk option C",
                "trunk option D",
                "trunk option E",
                "trunk option F",
            ] {
                self.unsupported_option(&ctx, what)?;
            }
        }
        let initial_conv = self.conv(&ctx)?;
        same(
            &ctx,
            "initialConv.outChannels",
            initial_conv.out_channels,
            "trunkNumChannels",
            trunk_c,
        )?;
        let initial_matmul = self.matmul(&ctx)?;
        same(
            &ctx,
            "initialMatMul.outChannels",
            initial_matmul.out_channels,
            "trunkNumChannels",
            trunk_c,
        )?;
        let sgf_metadata_encoder = if meta_version > 0 {
            Some(self.sgf_encoder(&ctx, meta_version, trunk_c)?)
        } else {
            None
        };
        let blocks = self.block_stack(&ctx, num_blocks, trunk_c, 0)?;
        let tip = if norm_kind == 0 {
            let bn = self.batch_norm(&ctx)?;
            same(
                &ctx,
                "trunkTipBN.numChannels",
                bn.num_channels,
                "trunkNumChannels",
                trunk_c,
            )?;
            TrunkTip::BatchNorm(bn)
        } else {
            let rms = self.rms_norm(&ctx)?;
            same(
                &ctx,
                "trunkTipRMSNorm.numChannels",
                rms.num_channels,
                "trunkNumChannels",
                trunk_c,
            )?;
            TrunkTip::RmsNorm(rms)
        };
        let tip_activation = self.activation(&ctx)?;
        Ok(Trunk {
            name,
            trunk_num_channels: trunk_c,
            mid_num_channels: mid_c,
            regular_num_channels: regular_c,
            gpool_num_channels: gpool_c,
            initial_conv,
            initial_matmul,
            sgf_metadata_encoder,
            blocks,
            tip,
            tip_activation,
        })
    }

    fn policy_head(&mut self) -> Result<PolicyHead, ModelError> {
        let name = self.cur.name("", "policy head name")?;
        let ctx = name.clone();
        // One legal count is implied by the version; with a choice, the file states it.
        let legal = version::policy_channels(self.version);
        let policy_out_channels = match legal {
            [c] => *c as usize,
            _ => {
                let (c, offset) = self.cur.int(&ctx, "policyOutChannels")?;
                match u32::try_from(c).ok().filter(|c| legal.contains(c)) {
                    Some(c) => c as usize,
                    None => {
                        let legal: Vec<String> = legal.iter().map(u32::to_string).collect();
                        return Err(ModelError::OutOfRange {
                            context: ctx,
                            field: "policyOutChannels",
                            value: c.to_string(),
                            reason: format!("must be {}", legal.join(" or ")),
                            offset,
                        });
                    }
                }
            }
        };
        if self.version >= 17 {
            for what in ["policy option A", "policy option B", "policy option C"] {
                self.unsupported_option(&ctx, what)?;
            }
        }
        let p1_conv = self.conv(&ctx)?;
        let g1_conv = self.conv(&ctx)?;
        let g1_bn = self.batch_norm(&ctx)?;
        let g1_activation = self.activation(&ctx)?;
        let gpool_to_bias_mul = self.matmul(&ctx)?;
        let p1_bn = self.batch_norm(&ctx)?;
        let p1_activation = self.activation(&ctx)?;
        let p2_conv = self.conv(&ctx)?;
        let gpool_to_pass_mul = self.matmul(&ctx)?;
        let pass_mlp = if self.version >= 15 {
            let bias = self.matbias(&ctx)?;
            let activation = self.activation(&ctx)?;
            let mul2 = self.matmul(&ctx)?;
            Some(PassMlp {
                bias,
                activation,
                mul2,
            })
        } else {
            None
        };
        same(
            &ctx,
            "p1Conv.outChannels",
            p1_conv.out_channels,
            "p1BN.numChannels",
            p1_bn.num_channels,
        )?;
        same(
            &ctx,
            "g1Conv.outChannels",
            g1_conv.out_channels,
            "g1BN.numChannels",
            g1_bn.num_channels,
        )?;
        same(
            &ctx,
            "gpoolToBiasMul.inChannels",
            gpool_to_bias_mul.in_channels,
            "g1BN.numChannels*3",
            g1_bn.num_channels * 3,
        )?;
        same(
            &ctx,
            "gpoolToBiasMul.outChannels",
            gpool_to_bias_mul.out_channels,
            "p1BN.numChannels",
            p1_bn.num_channels,
        )?;
        same(
            &ctx,
            "p2Conv.inChannels",
            p2_conv.in_channels,
            "p1BN.numChannels",
            p1_bn.num_channels,
        )?;
        same(
            &ctx,
            "p2Conv.outChannels",
            p2_conv.out_channels,
            "policy channels",
            policy_out_channels,
        )?;
        same(
            &ctx,
            "gpoolToPassMul.inChannels",
            gpool_to_pass_mul.in_channels,
            "g1BN.numChannels*3",
            g1_bn.num_channels * 3,
        )?;
        match &pass_mlp {
            Some(m) => {
                same(
                    &ctx,
                    "gpoolToPassMul.outChannels",
                    gpool_to_pass_mul.out_channels,
                    "gpoolToPassBias.numChannels",
                    m.bias.num_channels,
                )?;
                same(
                    &ctx,
                    "gpoolToPassMul.outChannels",
                    gpool_to_pass_mul.out_channels,
                    "gpoolToPassMul2.inChannels",
                    m.mul2.in_channels,
                )?;
                same(
                    &ctx,
                    "gpoolToPassMul.outChannels",
                    gpool_to_pass_mul.out_channels,
                    "p1Conv.outChannels",
                    p1_conv.out_channels,
                )?;
                same(
                    &ctx,
                    "gpoolToPassMul2.outChannels",
                    m.mul2.out_channels,
                    "policy channels",
                    policy_out_channels,
                )?;
            }
            None => {
                same(
                    &ctx,
                    "gpoolToPassMul.outChannels",
                    gpool_to_pass_mul.out_channels,
                    "policy channels",
                    policy_out_channels,
                )?;
            }
        }
        Ok(PolicyHead {
            name,
            policy_out_channels,
            p1_conv,
            g1_conv,
            g1_bn,
            g1_activation,
            gpool_to_bias_mul,
            p1_bn,
            p1_activation,
            p2_conv,
            gpool_to_pass_mul,
            pass_mlp,
        })
    }

    fn value_head(&mut self) -> Result<ValueHead, ModelError> {
        let name = self.cur.name("", "value head name")?;
        let ctx = name.clone();
        if self.version >= 17 {
            for what in ["value option A", "value option B", "value option C"] {
                self.unsupported_option(&ctx, what)?;
            }
        }
        let v1_conv = self.conv(&ctx)?;
        let v1_bn = self.batch_norm(&ctx)?;
        let v1_activation = self.activation(&ctx)?;
        let v2_mul = self.matmul(&ctx)?;
        let v2_bias = self.matbias(&ctx)?;
        let v2_activation = self.activation(&ctx)?;
        let v3_mul = self.matmul(&ctx)?;
        let v3_bias = self.matbias(&ctx)?;
        let sv3_mul = self.matmul(&ctx)?;
        let sv3_bias = self.matbias(&ctx)?;
        let ownership_conv = self.conv(&ctx)?;
        let score_c = version::score_value_channels(self.version).unwrap_or(0) as usize;
        same(
            &ctx,
            "v1Conv.outChannels",
            v1_conv.out_channels,
            "v1BN.numChannels",
            v1_bn.num_channels,
        )?;
        same(
            &ctx,
            "v2Mul.inChannels",
            v2_mul.in_channels,
            "v1BN.numChannels*3",
            v1_bn.num_channels * 3,
        )?;
        same(
            &ctx,
            "v2Mul.outChannels",
            v2_mul.out_channels,
            "v2Bias.numChannels",
            v2_bias.num_channels,
        )?;
        same(
            &ctx,
            "v3Mul.inChannels",
            v3_mul.in_channels,
            "v2Mul.outChannels",
            v2_mul.out_channels,
        )?;
        same(
            &ctx,
            "v3Mul.outChannels",
            v3_mul.out_channels,
            "value channels",
            version::VALUE_CHANNELS as usize,
        )?;
        same(
            &ctx,
            "v3Bias.numChannels",
            v3_bias.num_channels,
            "value channels",
            version::VALUE_CHANNELS as usize,
        )?;
        same(
            &ctx,
            "sv3Mul.inChannels",
            sv3_mul.in_channels,
            "v2Mul.outChannels",
            v2_mul.out_channels,
        )?;
        same(
            &ctx,
            "sv3Mul.outChannels",
            sv3_mul.out_channels,
            "score value channels",
            score_c,
        )?;
        same(
            &ctx,
            "sv3Bias.numChannels",
            sv3_bias.num_channels,
            "score value channels",
            score_c,
        )?;
        same(
            &ctx,
            "vOwnershipConv.inChannels",
            ownership_conv.in_channels,
            "v1Conv.outChannels",
            v1_conv.out_channels,
        )?;
        same(
            &ctx,
            "vOwnershipConv.outChannels",
            ownership_conv.out_channels,
            "ownership channels",
            version::OWNERSHIP_CHANNELS as usize,
        )?;
        Ok(ValueHead {
            name,
            v1_conv,
            v1_bn,
            v1_activation,
            v2_mul,
            v2_bias,
            v2_activation,
            v3_mul,
            v3_bias,
            sv3_mul,
            sv3_bias,
            ownership_conv,
        })
    }

    fn multiplier(&mut self, field: &'static str) -> Result<f64, ModelError> {
        let (v, offset) = self.cur.number("header", field)?;
        if !(v.is_finite() && v > 0.0) {
            return Err(ModelError::OutOfRange {
                context: "header".to_string(),
                field,
                value: v.to_string(),
                reason: "must be positive".to_string(),
                offset,
            });
        }
        Ok(v)
    }

    fn model(&mut self, sha256: String) -> Result<ModelDesc, ModelError> {
        let (name_tok, _) = self.cur.token("header", "model name")?;
        let name_ok = name_tok.len() <= MAX_NAME_LEN
            && name_tok
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-');
        if !name_ok {
            return Err(ModelError::InvalidName {
                name: shorten(name_tok),
            });
        }
        let name = String::from_utf8_lossy(name_tok).into_owned();
        let (v, _) = self.cur.int("header", "model version")?;
        let model_version = u32::try_from(v)
            .ok()
            .filter(|&v| version::is_supported(v))
            .ok_or(ModelError::UnsupportedModelVersion {
                version: v,
                oldest: version::OLDEST_MODEL_VERSION,
                latest: version::LATEST_MODEL_VERSION,
            })?;
        self.version = model_version;
        let num_input_channels = self.cur.count("header", "numInputChannels", MAX_CHANNELS)?;
        let num_input_global_channels =
            self.cur
                .count("header", "numInputGlobalChannels", MAX_CHANNELS)?;
        let mut post_process = PostProcessParams::default();
        if model_version >= 13 {
            post_process.td_score_multiplier = self.multiplier("tdScoreMultiplier")?;
            post_process.score_mean_multiplier = self.multiplier("scoreMeanMultiplier")?;
            post_process.score_stdev_multiplier = self.multiplier("scoreStdevMultiplier")?;
            post_process.lead_multiplier = self.multiplier("leadMultiplier")?;
            post_process.variance_time_multiplier = self.multiplier("varianceTimeMultiplier")?;
            post_process.shortterm_value_error_multiplier =
                self.multiplier("shorttermValueErrorMultiplier")?;
            post_process.shortterm_score_error_multiplier =
                self.multiplier("shorttermScoreErrorMultiplier")?;
        }
        let mut meta_encoder_version = 0;
        let mut prefer_pass_alive = false;
        if model_version >= 15 {
            let (mv, offset) = self.cur.int("header", "metaEncoderVersion")?;
            meta_encoder_version = u32::try_from(mv)
                .ok()
                .filter(|&m| version::meta_channels(m).is_some())
                .ok_or_else(|| ModelError::Unsupported {
                    context: "header".to_string(),
                    what: "metaEncoderVersion",
                    detail: format!("value {mv}, only 0 and 1 are implemented"),
                    offset,
                })?;
            prefer_pass_alive = self
                .cur
                .flag("header", "preferPassAliveUnderSuicideRules")?;
            for what in [
                "model option C",
                "model option D",
                "model option E",
                "model option F",
                "model option G",
                "model option H",
            ] {
                self.unsupported_option("header", what)?;
            }
        }
        let num_input_meta_channels =
            version::meta_channels(meta_encoder_version).unwrap_or(0) as usize;

        let trunk = self.trunk(meta_encoder_version)?;
        let policy_head = self.policy_head()?;
        let value_head = self.value_head()?;

        let c = trunk.trunk_num_channels;
        same(
            "header",
            "numInputChannels",
            num_input_channels,
            "initialConv.inChannels",
            trunk.initial_conv.in_channels,
        )?;
        same(
            "header",
            "numInputGlobalChannels",
            num_input_global_channels,
            "initialMatMul.inChannels",
            trunk.initial_matmul.in_channels,
        )?;
        same(
            "header",
            "trunkNumChannels",
            c,
            "policy p1Conv.inChannels",
            policy_head.p1_conv.in_channels,
        )?;
        same(
            "header",
            "trunkNumChannels",
            c,
            "policy g1Conv.inChannels",
            policy_head.g1_conv.in_channels,
        )?;
        same(
            "header",
            "trunkNumChannels",
            c,
            "value v1Conv.inChannels",
            value_head.v1_conv.in_channels,
        )?;
        // KataGo's backends assert these; the ONNX contract fixes them per version.
        let spatial = version::spatial_channels(model_version).unwrap_or(0) as usize;
        let global = version::global_channels(model_version).unwrap_or(0) as usize;
        same(
            "header",
            "numInputChannels",
            num_input_channels,
            "the model version's spatial features",
            spatial,
        )?;
        same(
            "header",
            "numInputGlobalChannels",
            num_input_global_channels,
            "the model version's global features",
            global,
        )?;

        Ok(ModelDesc {
            name,
            sha256,
            model_version,
            num_input_channels,
            num_input_global_channels,
            num_input_meta_channels,
            num_policy_channels: policy_head.policy_out_channels,
            num_value_channels: value_head.v3_mul.out_channels,
            num_score_value_channels: value_head.sv3_mul.out_channels,
            num_ownership_channels: value_head.ownership_conv.out_channels,
            meta_encoder_version,
            prefer_pass_alive_under_suicide_rules: prefer_pass_alive,
            prefer_exclude_territory_adjacent_to_atari: false,
            post_process,
            trunk,
            policy_head,
            value_head,
        })
    }
}
