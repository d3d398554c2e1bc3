//! Transformer blocks on HWC activations (`[point][channel]`, the points being the tokens):
//! RMS normalization, rotary position embedding, multi-head self-attention with grouped
//! key/value heads, the SwiGLU feed-forward block's gate, and the RMS-norm trunk tip. The
//! arithmetic is the ONNX graph's (`onnx::build::transformer`), which agrees with KataGo:
//! the norm's gain and attention's `1/sqrt(d)` are folded into the projections, and keys off
//! the board get no weight.

use crate::model::{MatMulLayer, Rope, TransformerAttentionBlock};

use super::activation::softmax_masked;
use super::layers::Conv;
use super::winograd::Gemm;

/// A dense layer over channels as a 1x1 convolution, input channel `i` scaled by
/// `in_scale[i]` and every weight by `factor`.
pub fn projection(layer: &MatMulLayer, in_scale: &[f32], factor: f32, gemm: Gemm) -> Conv {
    let mut conv = layer.to_conv();
    let c = conv.in_channels.max(1);
    for (j, w) in conv.weights.iter_mut().enumerate() {
        *w *= in_scale.get(j % c).copied().unwrap_or(1.0) * factor;
    }
    Conv::new(&conv, None, None, gemm)
}

/// `y = x / sqrt(mean(x^2) + eps) * mask` per point over its `c` channels.
pub fn rms_normalize(x: &[f32], c: usize, eps: f32, mask: &[f32], y: &mut [f32]) {
    for ((xr, yr), &m) in x.chunks_exact(c).zip(y.chunks_exact_mut(c)).zip(mask) {
        let mean_sq = xr.iter().map(|v| v * v).sum::<f32>() / c as f32;
        let inv = m / (mean_sq + eps).sqrt();
        yr.iter_mut().zip(xr).for_each(|(o, v)| *o = v * inv);
    }
}

/// Rotation tables of one attention block for one board buffer.
#[derive(Clone, Debug)]
pub struct RopeTables {
    /// `[table][pair][point]` cosines; the table is the KV head for learned frequencies,
    /// one shared table for fixed ones.
    cos: Vec<f32>,
    sin: Vec<f32>,
    pairs: usize,
    learned: bool,
}

impl RopeTables {
    /// The tables of `b` on an `h` x `w` buffer, or `None` without RoPE.
    pub fn new(b: &TransformerAttentionBlock, h: usize, w: usize) -> Option<RopeTables> {
        let (cos, sin) = b.rope_cos_sin(w, h)?;
        Some(RopeTables {
            cos,
            sin,
            pairs: b.rope_num_pairs(),
            learned: matches!(b.rope, Rope::Learnable { .. }),
        })
    }

    /// Rotates the channel pairs `(2p, 2p + 1)` of every head of `x` (`[point][heads * d]`):
    /// head `j` uses KV head `j * kv_heads / heads`'s table.
    pub fn rotate(&self, x: &mut [f32], heads: usize, kv_heads: usize, d: usize, points: usize) {
        let width = heads * d;
        for j in 0..heads {
            let table = if self.learned {
                j * kv_heads / heads.max(1)
            } else {
                0
            };
            for p in 0..self.pairs.min(d / 2) {
                let row = (table * self.pairs + p) * points;
                let (cos, sin) = (&self.cos[row..row + points], &self.sin[row..row + points]);
                for (pt, (&c, &s)) in cos.iter().zip(sin).enumerate() {
                    let i = pt * width + j * d + 2 * p;
                    let (a, b) = (x[i], x[i + 1]);
                    x[i] = a * c - b * s;
                    x[i + 1] = a * s + b * c;
                }
            }
        }
    }
}

/// The shapes of one attention: query heads, KV heads, query/key and value widths.
#[derive(Clone, Copy, Debug)]
pub struct Heads {
    /// Query heads.
    pub heads: usize,
    /// Key/value heads.
    pub kv_heads: usize,
    /// Query and key width per head.
    pub d: usize,
    /// Value width per head.
    pub dv: usize,
}

/// `out[:, j dv..] = softmax(q_j k_kv^T) v_kv` for each query head `j` (`q` is
/// `[point][heads d]`, already scaled; `k` `[point][kv_heads d]`; `v` `[point][kv_heads
/// dv]`); keys whose `mask` is 0 get no weight. `scores` holds `points * points` floats.
pub fn attend(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    shape: Heads,
    mask: &[f32],
    scores: &mut [f32],
    out: &mut [f32],
) {
    let n = mask.len();
    let Heads {
        heads,
        kv_heads,
        d,
        dv,
    } = shape;
    let group = (heads / kv_heads.max(1)).max(1);
    assert!(q.len() >= n * heads * d && k.len() >= n * kv_heads * d);
    assert!(v.len() >= n * kv_heads * dv && out.len() >= n * heads * dv);
    assert!(scores.len() >= n * n);
    for j in 0..heads {
        let kv = (j / group).min(kv_heads.saturating_sub(1));
        // SAFETY: the asserts above bound every index the strides reach: query rows of
        // `heads * d` from column `j d`, key rows of `kv_heads * d` from `kv d` (read as
        // the transposed `d x n`), `n x n` scores, value rows of `kv_heads * dv` from `kv dv`,
        // output rows of `heads * dv` from `j dv`.
        unsafe {
            matrixmultiply::sgemm(
                n,
                d,
                n,
                1.0,
                q.as_ptr().add(j * d),
                (heads * d) as isize,
                1,
                k.as_ptr().add(kv * d),
                1,
                (kv_heads * d) as isize,
                0.0,
                scores.as_mut_ptr(),
                n as isize,
                1,
            );
        }
        for row in scores[..n * n].chunks_exact_mut(n) {
            softmax_masked(row, mask);
        }
        // SAFETY: as above.
        unsafe {
            matrixmultiply::sgemm(
                n,
                n,
                dv,
                1.0,
                scores.as_ptr(),
                n as isize,
                1,
                v.as_ptr().add(kv * dv),
                (kv_heads * dv) as isize,
                1,
                0.0,
                out.as_mut_ptr().add(j * dv),
                (heads * dv) as isize,
                1,
            );
        }
    }
}

/// The RMS-norm trunk tip: `x / rms * gamma + beta`, the RMS per point over its channels,
/// or (`spatial`) one over every channel of every on-board point.
#[derive(Clone, Debug)]
pub struct RmsTip {
    /// Per-channel gain.
    pub gamma: Vec<f32>,
    /// Per-channel bias.
    pub beta: Vec<f32>,
    /// Added to the mean square.
    pub eps: f32,
    /// One RMS for the whole board.
    pub spatial: bool,
}

impl RmsTip {
    /// `y = x / rms * gamma + beta` (the activation and mask are the caller's).
    pub fn run(&self, x: &[f32], mask: &[f32], y: &mut [f32]) {
        let c = self.gamma.len();
        if self.spatial {
            let (mut sum, mut count) = (0.0f64, 0.0f64);
            for (xr, &m) in x.chunks_exact(c).zip(mask) {
                sum += f64::from(m) * xr.iter().map(|v| f64::from(v * v)).sum::<f64>();
                count += f64::from(m);
            }
            let mean_sq = (sum / (count * c as f64).max(1.0)) as f32;
            let inv = 1.0 / (mean_sq + self.eps).sqrt();
            for (xr, yr) in x
                .chunks_exact(c)
                .zip(y.chunks_exact_mut(c))
                .take(mask.len())
            {
                for (((o, &v), g), b) in yr.iter_mut().zip(xr).zip(&self.gamma).zip(&self.beta) {
                    *o = v * inv * g + b;
                }
            }
        } else {
            for (xr, yr) in x
                .chunks_exact(c)
                .zip(y.chunks_exact_mut(c))
                .take(mask.len())
            {
                let mean_sq = xr.iter().map(|v| v * v).sum::<f32>() / c as f32;
                let inv = 1.0 / (mean_sq + self.eps).sqrt();
                for (((o, &v), g), b) in yr.iter_mut().zip(xr).zip(&self.gamma).zip(&self.beta) {
                    *o = v * inv * g + b;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Attention in f64, one head at a time, from the definition.
    fn reference(q: &[f32], k: &[f32], v: &[f32], s: Heads, mask: &[f32]) -> Vec<f64> {
        let n = mask.len();
        let mut out = vec![0.0f64; n * s.heads * s.dv];
        for j in 0..s.heads {
            let kv = j / (s.heads / s.kv_heads);
            for a in 0..n {
                let logits: Vec<f64> = (0..n)
                    .map(|b| {
                        (0..s.d)
                            .map(|t| {
                                f64::from(q[a * s.heads * s.d + j * s.d + t])
                                    * f64::from(k[b * s.kv_heads * s.d + kv * s.d + t])
                            })
                            .sum()
                    })
                    .collect();
                let top = (0..n)
                    .filter(|&b| mask[b] > 0.0)
                    .map(|b| logits[b])
                    .fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = (0..n)
                    .map(|b| {
                        if mask[b] > 0.0 {
                            (logits[b] - top).exp()
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let total: f64 = w.iter().sum();
                for t in 0..s.dv {
                    out[a * s.heads * s.dv + j * s.dv + t] = (0..n)
                        .map(|b| w[b] / total * f64::from(v[b * s.kv_heads * s.dv + kv * s.dv + t]))
                        .sum();
                }
            }
        }
        out
    }

    #[test]
    fn attention_with_grouped_heads_and_masked_keys_matches_its_definition() {
        let s = Heads {
            heads: 4,
            kv_heads: 2,
            d: 6,
            dv: 5,
        };
        let n = 11;
        let mut rng = fastrand::Rng::with_seed(3);
        let mut vals =
            |len: usize| -> Vec<f32> { (0..len).map(|_| rng.f32() * 4.0 - 2.0).collect() };
        let (q, k, v) = (vals(n * 24), vals(n * 12), vals(n * 10));
        let mask: Vec<f32> = (0..n).map(|i| if i % 4 == 3 { 0.0 } else { 1.0 }).collect();
        let mut scores = vec![0.0; n * n];
        let mut out = vec![0.0; n * 20];
        attend(&q, &k, &v, s, &mask, &mut scores, &mut out);
        let want = reference(&q, &k, &v, s, &mask);
        for (i, (&o, &w)) in out.iter().zip(&want).enumerate() {
            assert!((f64::from(o) - w).abs() < 1e-5, "{i}: {o} vs {w}");
        }
    }

    #[test]
    fn rotation_turns_each_pair_by_its_angle() {
        // Two heads of width 4 sharing one fixed table of two pairs, three points.
        let tables = RopeTables {
            cos: vec![1.0, 0.0, -1.0, 0.6, 0.8, 0.0],
            sin: vec![0.0, 1.0, 0.0, 0.8, -0.6, 1.0],
            pairs: 2,
            learned: false,
        };
        let mut x: Vec<f32> = (0..3 * 8).map(|i| i as f32).collect();
        let before = x.clone();
        tables.rotate(&mut x, 2, 2, 4, 3);
        for pt in 0..3 {
            for j in 0..2 {
                for p in 0..2 {
                    let i = pt * 8 + j * 4 + 2 * p;
                    let (c, s) = (tables.cos[p * 3 + pt], tables.sin[p * 3 + pt]);
                    let (a, b) = (before[i], before[i + 1]);
                    assert_eq!((x[i], x[i + 1]), (a * c - b * s, a * s + b * c));
                }
            }
        }
    }
}
