//! Transformer blocks in NCHW: RMS norm, multi-head self-attention with RoPE and grouped KV
//! heads, and the SwiGLU feed-forward block.
//!
//! Constant factors are folded into projection weights where the algebra allows it: the RMS norm
//! gain into every projection that reads the normalized input, and attention's `1/sqrt(d)` into
//! the query projection (RoPE is linear, so it commutes with the scale).

use super::graph::{Fold, Graph};
use crate::model::{TransformerAttentionBlock, TransformerFfnBlock, TransformerRmsNorm};

/// `x / rms(x)` per point over channels, zeroed off-board (the gain is left to the caller's
/// projections). The mask is applied to the small `[N,1,H,W]` factor, not the full map.
fn rms_normalize(g: &mut Graph, x: &str, norm: &TransformerRmsNorm) -> String {
    let base = norm.name.as_str();
    let first = g.nodes.len();
    let sq = g.op("Mul", &[x, x], &format!("{base}/square"), vec![]);
    let mean_sq = g.reduce("ReduceMean", &sq, &[1], &format!("{base}/mean_square"));
    let eps = g.scalar(norm.epsilon);
    let var = g.op(
        "Add",
        &[&mean_sq, &eps],
        &format!("{base}/mean_square_eps"),
        vec![],
    );
    let rms = g.op("Sqrt", &[&var], &format!("{base}/rms"), vec![]);
    let names: Vec<String> = g.nodes.iter().skip(first).map(|n| n.name.clone()).collect();
    g.rms_norm_nodes.extend(names);
    let inv = g.op("Reciprocal", &[&rms], &format!("{base}/inv_rms"), vec![]);
    let inv = g.mask(&inv, base);
    g.op("Mul", &[x, &inv], &format!("{base}/normed"), vec![])
}

fn to_i64(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Rotates the interleaved channel pairs of `x` `[N, heads, head_dim, S]`:
/// `y[2p] = x[2p] cos - x[2p+1] sin`, `y[2p+1] = x[2p] sin + x[2p+1] cos`, written as
/// `x * cos + swap(x) * signed_sin` with `swap` a constant `Gather`.
fn rope(
    g: &mut Graph,
    x: &str,
    heads: usize,
    b: &TransformerAttentionBlock,
    tables: &(Vec<f32>, Vec<f32>),
    base: &str,
) -> String {
    let d = b.q_head_dim;
    let pairs = b.rope_num_pairs();
    let s = g.area();
    let learnable = matches!(b.rope, crate::model::Rope::Learnable { .. });
    // Fixed tables are shared by every head, so one broadcast row suffices.
    let table_heads = if learnable { heads } else { 1 };
    let mut cos = vec![0.0f32; table_heads * d * s];
    let mut sin = vec![0.0f32; table_heads * d * s];
    for h in 0..table_heads {
        // Query head h uses KV head h * kv / heads (the identity when `heads` is the KV count).
        let kv = h * b.num_kv_heads / heads.max(1);
        for p in 0..pairs {
            let row = if learnable { kv * pairs + p } else { p };
            for pos in 0..s {
                let t = row * s + pos;
                let (c, sn) = (
                    tables.0.get(t).copied().unwrap_or(1.0),
                    tables.1.get(t).copied().unwrap_or(0.0),
                );
                let i0 = (h * d + 2 * p) * s + pos;
                let i1 = i0 + s;
                for (i, signed_sin) in [(i0, -sn), (i1, sn)] {
                    if let (Some(cv), Some(sv)) = (cos.get_mut(i), sin.get_mut(i)) {
                        *cv = c;
                        *sv = signed_sin;
                    }
                }
            }
        }
    }
    let cos_name = g.init(&format!("{base}/rope_cos"), &[1, table_heads, d, s], &cos);
    let sin_name = g.init(&format!("{base}/rope_sin"), &[1, table_heads, d, s], &sin);
    let swap: Vec<i64> = (0..d).map(|c| to_i64(c ^ 1)).collect();
    let swapped = g.gather(x, &swap, 2, &format!("{base}/rope_swap"));
    let a = g.op(
        "Mul",
        &[x, &cos_name],
        &format!("{base}/rope_cos_term"),
        vec![],
    );
    let bterm = g.op(
        "Mul",
        &[&swapped, &sin_name],
        &format!("{base}/rope_sin_term"),
        vec![],
    );
    g.op("Add", &[&a, &bterm], &format!("{base}/rope"), vec![])
}

/// A self-attention block: `x + mask * out_proj(attention(rms_norm(x)))`.
pub(super) fn attention(g: &mut Graph, x: &str, b: &TransformerAttentionBlock) -> String {
    let base = b.name.as_str();
    let (h, kvh, d, dv) = (b.num_heads, b.num_kv_heads, b.q_head_dim, b.v_head_dim);
    let s = to_i64(g.area());
    let xn = rms_normalize(g, x, &b.pre_norm);
    let w = b.pre_norm.weight.as_slice();
    let q_fold = Fold {
        in_scale: Some(w),
        factor: 1.0 / (d as f32).sqrt(),
        ..Fold::none()
    };
    let q = g.dense(&xn, &b.q_proj, q_fold, &b.q_proj.name);
    let k = g.dense(
        &xn,
        &b.k_proj,
        Fold {
            in_scale: Some(w),
            ..Fold::none()
        },
        &b.k_proj.name,
    );
    let v = g.dense(
        &xn,
        &b.v_proj,
        Fold {
            in_scale: Some(w),
            ..Fold::none()
        },
        &b.v_proj.name,
    );
    // Channels are head-major, so [N, heads*dim, H, W] -> [N, heads, dim, S] is a free reshape.
    let mut q = g.reshape(
        &q,
        &[0, to_i64(h), to_i64(d), s],
        &format!("{base}/q_heads"),
    );
    let mut k = g.reshape(
        &k,
        &[0, to_i64(kvh), to_i64(d), s],
        &format!("{base}/k_heads"),
    );
    let mut v = g.reshape(
        &v,
        &[0, to_i64(kvh), to_i64(dv), s],
        &format!("{base}/v_heads"),
    );
    if let Some(tables) = b.rope_cos_sin(g.x_len, g.y_len) {
        q = rope(g, &q, h, b, &tables, &format!("{base}/q"));
        k = rope(g, &k, kvh, b, &tables, &format!("{base}/k"));
    }
    if kvh < h {
        // Grouped-query attention: query head j reads KV head j / (h / kvh).
        let group = h / kvh.max(1);
        let idx: Vec<i64> = (0..h).map(|j| to_i64(j / group.max(1))).collect();
        k = g.gather(&k, &idx, 1, &format!("{base}/k_grouped"));
        v = g.gather(&v, &idx, 1, &format!("{base}/v_grouped"));
    }
    // Softmax runs over the last axis (keys), the layout tract handles fast; the transposes
    // are absorbed into the matrix products.
    let q_t = g.transpose(&q, &[0, 1, 3, 2], &format!("{base}/q_t"));
    let mut scores = g.op("MatMul", &[&q_t, &k], &format!("{base}/scores"), vec![]);
    if let Some(bias) = g.attention_key_bias() {
        scores = g.op(
            "Add",
            &[&scores, &bias],
            &format!("{base}/scores_masked"),
            vec![],
        );
    }
    let probs = g.softmax(&scores, 3, &format!("{base}/probs"));
    // Transpose the small value and result tensors rather than the S x S probabilities.
    let v_t = g.transpose(&v, &[0, 1, 3, 2], &format!("{base}/v_t"));
    let out = g.op(
        "MatMul",
        &[&probs, &v_t],
        &format!("{base}/attended"),
        vec![],
    );
    let out = g.transpose(&out, &[0, 1, 3, 2], &format!("{base}/attended_t"));
    let shape = [0, to_i64(h * dv), to_i64(g.y_len), to_i64(g.x_len)];
    let out = g.reshape(&out, &shape, &format!("{base}/attended_nchw"));
    let out = g.dense(&out, &b.out_proj, Fold::none(), &b.out_proj.name);
    let out = g.mask(&out, &format!("{base}/out"));
    g.op("Add", &[x, &out], base, vec![])
}

/// A SwiGLU feed-forward block: `x + mask * linear2(silu(linear1(n)) * gate(n))`, `n = rms_norm(x)`.
pub(super) fn ffn(g: &mut Graph, x: &str, b: &TransformerFfnBlock) -> String {
    let base = b.name.as_str();
    let xn = rms_normalize(g, x, &b.pre_norm);
    let w = b.pre_norm.weight.as_slice();
    let a = g.dense(
        &xn,
        &b.linear1,
        Fold {
            in_scale: Some(w),
            ..Fold::none()
        },
        &b.linear1.name,
    );
    let sig = g.op("Sigmoid", &[&a], &format!("{base}/sigmoid"), vec![]);
    let silu = g.op("Mul", &[&a, &sig], &format!("{base}/silu"), vec![]);
    let hidden = match &b.linear_gate {
        Some(gate) => {
            let gv = g.dense(
                &xn,
                gate,
                Fold {
                    in_scale: Some(w),
                    ..Fold::none()
                },
                &gate.name,
            );
            g.op("Mul", &[&silu, &gv], &format!("{base}/swiglu"), vec![])
        }
        None => silu,
    };
    let out = g.dense(&hidden, &b.linear2, Fold::none(), &b.linear2.name);
    let out = g.mask(&out, &format!("{base}/out"));
    g.op("Add", &[x, &out], base, vec![])
}
