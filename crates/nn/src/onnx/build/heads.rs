//! The policy and value heads, writing the graph outputs of KataGo's ONNX contract (all raw).

use super::graph::{Fold, Graph, PoolKind};
use crate::model::{PolicyHead, ValueHead};

/// `OutputPolicyPass` `[N, policy channels, 1, 1]`.
pub(super) const OUTPUT_POLICY_PASS: &str = "OutputPolicyPass";
/// `OutputPolicy` `[N, policy channels, Y, X]`.
pub(super) const OUTPUT_POLICY: &str = "OutputPolicy";
/// `OutputValue` `[N, 3, 1, 1]`.
pub(super) const OUTPUT_VALUE: &str = "OutputValue";
/// `OutputScoreValue` `[N, score value channels, 1, 1]`.
pub(super) const OUTPUT_SCORE_VALUE: &str = "OutputScoreValue";
/// `OutputOwnership` `[N, 1, Y, X]`.
pub(super) const OUTPUT_OWNERSHIP: &str = "OutputOwnership";

/// Builds the policy head on the trunk tip `tip`.
pub(super) fn policy(g: &mut Graph, tip: &str, ph: &PolicyHead) {
    let (ps, pb) = ph.p1_bn.merged_scale_bias();
    let (gs, gb) = ph.g1_bn.merged_scale_bias();
    // p1BN(p1 + bias) = p1*ps + (bias*ps + pb): the scale goes into both paths, pb into the bias path.
    let p1 = g.conv(
        tip,
        &ph.p1_conv,
        Fold {
            out_scale: Some(&ps),
            ..Fold::none()
        },
        &ph.p1_conv.name,
    );
    let g1 = g.conv(
        tip,
        &ph.g1_conv,
        Fold {
            out_scale: Some(&gs),
            bias: Some(gb),
            ..Fold::none()
        },
        &ph.g1_conv.name,
    );
    let g1 = g.activation(&g1, ph.g1_activation.activation, &ph.g1_activation.name);
    let g1 = g.mask(&g1, &ph.g1_activation.name);
    let pooled = g.global_pool(&g1, PoolKind::Max, &format!("{}/gpool", ph.name));
    let bias_fold = Fold {
        out_scale: Some(&ps),
        bias: Some(pb),
        ..Fold::none()
    };
    let bias = g.dense(
        &pooled,
        &ph.gpool_to_bias_mul,
        bias_fold,
        &ph.gpool_to_bias_mul.name,
    );
    let p1 = g.op("Add", &[&p1, &bias], &format!("{}/biased", ph.name), vec![]);
    let p1 = g.activation(&p1, ph.p1_activation.activation, &ph.p1_activation.name);
    let p1 = g.mask(&p1, &ph.p1_activation.name);
    g.reserve(OUTPUT_POLICY);
    g.conv_into(&p1, &ph.p2_conv, Fold::none(), OUTPUT_POLICY);

    g.reserve(OUTPUT_POLICY_PASS);
    match &ph.pass_mlp {
        None => g.dense_into(
            &pooled,
            &ph.gpool_to_pass_mul,
            Fold::none(),
            OUTPUT_POLICY_PASS,
        ),
        Some(mlp) => {
            let fold = Fold {
                bias: Some(mlp.bias.weights.clone()),
                ..Fold::none()
            };
            let h = g.dense(
                &pooled,
                &ph.gpool_to_pass_mul,
                fold,
                &ph.gpool_to_pass_mul.name,
            );
            let h = g.activation(&h, mlp.activation.activation, &mlp.activation.name);
            g.dense_into(&h, &mlp.mul2, Fold::none(), OUTPUT_POLICY_PASS);
        }
    }
}

/// Builds the value head (value, score value and ownership) on the trunk tip `tip`.
pub(super) fn value(g: &mut Graph, tip: &str, vh: &ValueHead) {
    let (vs, vb) = vh.v1_bn.merged_scale_bias();
    let v1 = g.conv(
        tip,
        &vh.v1_conv,
        Fold {
            out_scale: Some(&vs),
            bias: Some(vb),
            ..Fold::none()
        },
        &vh.v1_conv.name,
    );
    let v1 = g.activation(&v1, vh.v1_activation.activation, &vh.v1_activation.name);
    let v1 = g.mask(&v1, &vh.v1_activation.name);
    let pooled = g.global_pool(&v1, PoolKind::ValueQuad, &format!("{}/gpool", vh.name));
    let fold = Fold {
        bias: Some(vh.v2_bias.weights.clone()),
        ..Fold::none()
    };
    let v2 = g.dense(&pooled, &vh.v2_mul, fold, &vh.v2_mul.name);
    let v2 = g.activation(&v2, vh.v2_activation.activation, &vh.v2_activation.name);
    g.reserve(OUTPUT_VALUE);
    g.dense_into(
        &v2,
        &vh.v3_mul,
        Fold {
            bias: Some(vh.v3_bias.weights.clone()),
            ..Fold::none()
        },
        OUTPUT_VALUE,
    );
    g.reserve(OUTPUT_SCORE_VALUE);
    g.dense_into(
        &v2,
        &vh.sv3_mul,
        Fold {
            bias: Some(vh.sv3_bias.weights.clone()),
            ..Fold::none()
        },
        OUTPUT_SCORE_VALUE,
    );
    g.reserve(OUTPUT_OWNERSHIP);
    g.conv_into(&v1, &vh.ownership_conv, Fold::none(), OUTPUT_OWNERSHIP);
}
