//! The trunk: input layers, the block stack (convolutional blocks here, transformer blocks in
//! `transformer.rs`) and the trunk tip.
//!
//! Every batch norm that directly follows a convolution is folded into that convolution's
//! weights and bias, so tract sees one `Conv` instead of `Conv`, `Mul`, `Add`.

use super::graph::{Fold, Graph, PoolKind, INPUT_MASK};
use super::transformer;
use super::BuildError;
use crate::model::{
    ActivationLayer, Block, BlockKind, GlobalPoolingBlock, ModelDesc, NestedBottleneckBlock,
    ResidualBlock, RmsNormLayer, TrunkTip,
};

/// Reports progress after each top-level block: `(blocks done, total blocks)`.
pub(super) type Progress<'a> = Option<&'a dyn Fn(usize, usize)>;

/// BN, activation, mask: the pre-activation in front of every convolution that cannot absorb the BN.
fn norm_act_mask(
    g: &mut Graph,
    x: &str,
    bn: &crate::model::BatchNormLayer,
    act: &ActivationLayer,
) -> String {
    let (scale, bias) = bn.merged_scale_bias();
    let y = g.affine(x, &scale, &bias, &bn.name);
    let y = g.activation(&y, act.activation, &act.name);
    g.mask(&y, &act.name)
}

fn ordinary(g: &mut Graph, x: &str, b: &ResidualBlock) -> String {
    let pre = norm_act_mask(g, x, &b.pre_bn, &b.pre_activation);
    let (ms, mb) = b.mid_bn.merged_scale_bias();
    let fold = Fold {
        out_scale: Some(&ms),
        bias: Some(mb.clone()),
        ..Fold::none()
    };
    let mid = g.conv(&pre, &b.regular_conv, fold, &b.regular_conv.name);
    let mid = g.activation(&mid, b.mid_activation.activation, &b.mid_activation.name);
    let mid = g.mask(&mid, &b.mid_activation.name);
    let out = g.conv(&mid, &b.final_conv, Fold::none(), &b.final_conv.name);
    g.op("Add", &[x, &out], &b.name, vec![])
}

fn global_pooling(g: &mut Graph, x: &str, b: &GlobalPoolingBlock) -> String {
    let pre = norm_act_mask(g, x, &b.pre_bn, &b.pre_activation);
    let (ms, mb) = b.mid_bn.merged_scale_bias();
    let (gs, gb) = b.gpool_bn.merged_scale_bias();
    // midBN(regular + bias) = regular*ms + (bias*ms + mb): fold ms into both paths, mb into the bias path.
    let regular = g.conv(
        &pre,
        &b.regular_conv,
        Fold {
            out_scale: Some(&ms),
            ..Fold::none()
        },
        &b.regular_conv.name,
    );
    let gp_fold = Fold {
        out_scale: Some(&gs),
        bias: Some(gb),
        ..Fold::none()
    };
    let gp = g.conv(&pre, &b.gpool_conv, gp_fold, &b.gpool_conv.name);
    let gp = g.activation(&gp, b.gpool_activation.activation, &b.gpool_activation.name);
    let gp = g.mask(&gp, &b.gpool_activation.name);
    let pooled = g.global_pool(&gp, PoolKind::Max, &format!("{}/gpool", b.name));
    let bias_fold = Fold {
        out_scale: Some(&ms),
        bias: Some(mb),
        ..Fold::none()
    };
    let bias = g.dense(
        &pooled,
        &b.gpool_to_bias_mul,
        bias_fold,
        &b.gpool_to_bias_mul.name,
    );
    let mid = g.op(
        "Add",
        &[&regular, &bias],
        &format!("{}/biased", b.name),
        vec![],
    );
    let mid = g.activation(&mid, b.mid_activation.activation, &b.mid_activation.name);
    let mid = g.mask(&mid, &b.mid_activation.name);
    let out = g.conv(&mid, &b.final_conv, Fold::none(), &b.final_conv.name);
    g.op("Add", &[x, &out], &b.name, vec![])
}

fn nested(g: &mut Graph, x: &str, b: &NestedBottleneckBlock) -> Result<String, BuildError> {
    let pre = norm_act_mask(g, x, &b.pre_bn, &b.pre_activation);
    let inner = g.conv(&pre, &b.pre_conv, Fold::none(), &b.pre_conv.name);
    let inner = block_stack(g, &inner, &b.blocks, None)?;
    let post = norm_act_mask(g, &inner, &b.post_bn, &b.post_activation);
    let out = g.conv(&post, &b.post_conv, Fold::none(), &b.post_conv.name);
    Ok(g.op("Add", &[x, &out], &b.name, vec![]))
}

/// Builds a block stack on `x` (NCHW throughout).
pub(super) fn block_stack(
    g: &mut Graph,
    x: &str,
    blocks: &[Block],
    progress: Progress<'_>,
) -> Result<String, BuildError> {
    let mut cur = x.to_string();
    for (i, block) in blocks.iter().enumerate() {
        cur = match block {
            Block::Ordinary(b) => ordinary(g, &cur, b),
            Block::GlobalPooling(b) => global_pooling(g, &cur, b),
            Block::NestedBottleneck(b) => nested(g, &cur, b)?,
            Block::TransformerAttention(b) => transformer::attention(g, &cur, b),
            Block::TransformerFfn(b) => {
                if !b.uses_swiglu() {
                    return Err(BuildError::Unsupported(format!(
                        "{} {:?}: only SwiGLU feed-forward blocks are implemented (KataGo has no other kind either)",
                        BlockKind::TransformerFfn.file_name(),
                        b.name
                    )));
                }
                transformer::ffn(g, &cur, b)
            }
        };
        if let Some(report) = progress {
            report(i + 1, blocks.len());
        }
    }
    Ok(cur)
}

/// The trunk-tip RMS norm: gain, bias, activation and mask.
fn rms_tip(g: &mut Graph, x: &str, rms: &RmsNormLayer, act: &ActivationLayer) -> String {
    let base = rms.name.as_str();
    let first = g.nodes.len();
    let sq = g.op("Mul", &[x, x], &format!("{base}/square"), vec![]);
    let mean_sq = if !rms.spatial {
        g.reduce("ReduceMean", &sq, &[1], &format!("{base}/mean_square"))
    } else if g.exact {
        g.reduce(
            "ReduceMean",
            &sq,
            &[1, 2, 3],
            &format!("{base}/mean_square"),
        )
    } else {
        // Off-board trunk values are not zero (convolutions spill into them), so mask before summing.
        let sq_masked = g.op(
            "Mul",
            &[&sq, INPUT_MASK],
            &format!("{base}/square_masked"),
            vec![],
        );
        let sum = g.reduce(
            "ReduceSum",
            &sq_masked,
            &[1, 2, 3],
            &format!("{base}/sum_square"),
        );
        let points = g.mask_sum();
        let channels = g.scalar(rms.num_channels as f32);
        let count = g.op(
            "Mul",
            &[&points, &channels],
            &format!("{base}/count"),
            vec![],
        );
        g.op(
            "Div",
            &[&sum, &count],
            &format!("{base}/mean_square"),
            vec![],
        )
    };
    let eps = g.scalar(rms.epsilon);
    let var = g.op(
        "Add",
        &[&mean_sq, &eps],
        &format!("{base}/mean_square_eps"),
        vec![],
    );
    let rms_value = g.op("Sqrt", &[&var], &format!("{base}/rms"), vec![]);
    let names: Vec<String> = g.nodes.iter().skip(first).map(|n| n.name.clone()).collect();
    g.rms_norm_nodes.extend(names);
    let inv = g.op(
        "Reciprocal",
        &[&rms_value],
        &format!("{base}/inv_rms"),
        vec![],
    );
    let c = rms.num_channels;
    let gamma = g.init(&format!("{base}/gamma"), &[1, c, 1, 1], &rms.gamma);
    let beta = g.init(&format!("{base}/beta"), &[1, c, 1, 1], &rms.beta);
    let normed = if rms.spatial {
        // One factor per position: scale the small [N,C,1,1] gain instead of the whole map.
        let s = g.op("Mul", &[&inv, &gamma], &format!("{base}/scale"), vec![]);
        g.op("Mul", &[x, &s], &format!("{base}/scaled"), vec![])
    } else {
        let n = g.op("Mul", &[x, &inv], &format!("{base}/normed"), vec![]);
        g.op("Mul", &[&n, &gamma], &format!("{base}/scaled"), vec![])
    };
    let y = g.op("Add", &[&normed, &beta], &format!("{base}/shifted"), vec![]);
    let y = g.activation(&y, act.activation, &act.name);
    g.mask(&y, &act.name)
}

/// Builds the trunk body (input layers and block stack) from the graph inputs; returns the
/// un-normalized trunk `[N,C,H,W]`.
pub(super) fn body(
    g: &mut Graph,
    model: &ModelDesc,
    progress: Progress<'_>,
) -> Result<String, BuildError> {
    let t = &model.trunk;
    let spatial = g.conv(
        "InputSpatial",
        &t.initial_conv,
        Fold::none(),
        &t.initial_conv.name,
    );
    let global = g.dense(
        "InputGlobal",
        &t.initial_matmul,
        Fold::none(),
        &t.initial_matmul.name,
    );
    let mut x = g.op(
        "Add",
        &[&spatial, &global],
        &format!("{}/input", t.name),
        vec![],
    );
    if let Some(enc) = &t.sgf_metadata_encoder {
        let fold = Fold {
            bias: Some(enc.bias1.weights.clone()),
            ..Fold::none()
        };
        let h = g.dense("InputMeta", &enc.mul1, fold, &enc.mul1.name);
        let h = g.activation(&h, enc.act1.activation, &enc.act1.name);
        let fold = Fold {
            bias: Some(enc.bias2.weights.clone()),
            ..Fold::none()
        };
        let h = g.dense(&h, &enc.mul2, fold, &enc.mul2.name);
        let h = g.activation(&h, enc.act2.activation, &enc.act2.name);
        let meta = g.dense(&h, &enc.mul3, Fold::none(), &enc.mul3.name);
        x = g.op(
            "Add",
            &[&x, &meta],
            &format!("{}/input_meta", t.name),
            vec![],
        );
    }
    block_stack(g, &x, &t.blocks, progress)
}

/// The trunk tip (final normalization, activation, mask) on the trunk body's output.
pub(super) fn tip(g: &mut Graph, x: &str, model: &ModelDesc) -> String {
    let t = &model.trunk;
    match &t.tip {
        TrunkTip::BatchNorm(bn) => norm_act_mask(g, x, bn, &t.tip_activation),
        TrunkTip::RmsNorm(rms) => rms_tip(g, x, rms, &t.tip_activation),
    }
}
