//! Per-channel affine, activation and mask over HWC rows (`[point][channel]`), eight
//! channels at a time with AVX2 and FMA where the CPU has them.
//!
//! Scalar `exp` made SiLU and Mish a fifth of a nested-bottleneck net's time (b18c384nbt:
//! 8.7 million activations an evaluation); the vector path evaluates `exp` with a Cephes
//! polynomial (relative error about 2e-7) and rewrites Mish as `x * n / (n + 2)`, `n = e^x (e^x
//! + 2)`, which is `x * tanh(softplus(x))` with one `exp`. Channels past the last multiple of
//! eight, and CPUs without AVX2, take [`Activation::apply`].

use crate::model::Activation;

#[cfg(target_arch = "x86_64")]
use super::winograd::simd_available;

/// `y[p][c] = act(x[p][c] * scale[c] + bias[c]) * mask[p]` for every point `p`; `scale`
/// and `bias` have one value a channel.
pub fn norm_act_rows(
    x: &[f32],
    scale: &[f32],
    bias: &[f32],
    act: Activation,
    mask: &[f32],
    y: &mut [f32],
) {
    let c = scale.len();
    assert!(bias.len() == c && c > 0);
    let points = mask.len().min(x.len() / c).min(y.len() / c);
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: the CPU has AVX2 and FMA (checked above); every slice holds `points` rows
        // of `c` channels (`points` is the least of the three counts).
        unsafe { avx2::rows(Some(x), Some((scale, bias)), act, &mask[..points], c, y) };
        return;
    }
    for ((xr, yr), &m) in x
        .chunks_exact(c)
        .zip(y.chunks_exact_mut(c))
        .zip(&mask[..points])
    {
        for (((o, &v), s), b) in yr.iter_mut().zip(xr).zip(scale).zip(bias) {
            *o = act.apply(v * s + b) * m;
        }
    }
}

/// `x[p][c] = act(x[p][c]) * mask[p]` in place, `c` channels a point.
pub fn act_rows(x: &mut [f32], c: usize, act: Activation, mask: &[f32]) {
    assert!(c > 0);
    let points = mask.len().min(x.len() / c);
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: as in `norm_act_rows`; `x` holds `points` rows of `c`.
        unsafe { avx2::rows(None, None, act, &mask[..points], c, x) };
        return;
    }
    for (row, &m) in x.chunks_exact_mut(c).zip(&mask[..points]) {
        row.iter_mut().for_each(|v| *v = act.apply(*v) * m);
    }
}

/// A softmax over `row` in place, the entries whose `mask` is 0 getting no weight (all zero
/// when every entry is masked out); `mask` holds 0 or 1 per entry.
pub fn softmax_masked(row: &mut [f32], mask: &[f32]) {
    let n = row.len().min(mask.len());
    let (row, mask) = (&mut row[..n], &mask[..n]);
    #[cfg(target_arch = "x86_64")]
    if simd_available() {
        // SAFETY: the CPU has AVX2 and FMA (checked here); `row` and `mask` hold `n`.
        unsafe { avx2::softmax_masked(row, mask) };
        return;
    }
    let top = row
        .iter()
        .zip(mask)
        .filter(|&(_, &m)| m > 0.0)
        .fold(f32::NEG_INFINITY, |t, (&v, _)| t.max(v));
    if !top.is_finite() {
        row.fill(0.0);
        return;
    }
    for (v, &m) in row.iter_mut().zip(mask) {
        *v = (*v - top).exp() * m;
    }
    let inv = 1.0 / row.iter().sum::<f32>();
    row.iter_mut().for_each(|v| *v *= inv);
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use crate::model::Activation;

    /// `e^x` for eight lanes (Cephes' `expf`: `x = n ln 2 + r`, a degree-6 polynomial in
    /// `r`, then `2^n` built in the exponent bits); inputs are clamped to where `e^x` is a
    /// finite normal float.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn exp(x: __m256) -> __m256 {
        let x = _mm256_min_ps(
            _mm256_max_ps(x, _mm256_set1_ps(-87.3)),
            _mm256_set1_ps(88.3),
        );
        let n = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
            _mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::LOG2_E)),
        );
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693_359_4), x);
        let r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.121_944_4e-4), r);
        let mut p = _mm256_set1_ps(1.987_569_1e-4);
        for c in [1.398_2e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
            p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
        }
        let r2 = _mm256_mul_ps(r, r);
        let p = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0));
        let bits = _mm256_slli_epi32::<23>(_mm256_add_epi32(
            _mm256_cvtps_epi32(n),
            _mm256_set1_epi32(127),
        ));
        _mm256_mul_ps(p, _mm256_castsi256_ps(bits))
    }

    /// The activation of eight lanes.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    fn apply(act: Activation, x: __m256) -> __m256 {
        let one = _mm256_set1_ps(1.0);
        match act {
            Activation::Identity => x,
            Activation::Relu => _mm256_max_ps(x, _mm256_setzero_ps()),
            Activation::Silu => {
                let e = exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
                _mm256_div_ps(x, _mm256_add_ps(one, e))
            }
            Activation::Mish => {
                // Above 20, tanh(softplus(x)) is 1 in f32 (and KataGo's softplus is x there).
                let e = exp(_mm256_min_ps(x, _mm256_set1_ps(20.0)));
                let n = _mm256_mul_ps(e, _mm256_add_ps(e, _mm256_set1_ps(2.0)));
                let t = _mm256_div_ps(n, _mm256_add_ps(n, _mm256_set1_ps(2.0)));
                _mm256_mul_ps(x, t)
            }
        }
    }

    /// [`super::softmax_masked`], eight entries at a time.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; `mask` must be as long as `row`.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn softmax_masked(row: &mut [f32], mask: &[f32]) {
        let n = row.len();
        let vec_n = n - n % 8;
        let (p, mp) = (row.as_mut_ptr(), mask.as_ptr());
        let zero = _mm256_setzero_ps();
        let neg = _mm256_set1_ps(f32::NEG_INFINITY);
        // SAFETY (every block below): `i + 8 <= vec_n <= n`, inside `row` and `mask`.
        let mut top_v = neg;
        for i in (0..vec_n).step_by(8) {
            let (v, m) = unsafe { (_mm256_loadu_ps(p.add(i)), _mm256_loadu_ps(mp.add(i))) };
            let on = _mm256_cmp_ps::<_CMP_GT_OQ>(m, zero);
            top_v = _mm256_max_ps(top_v, _mm256_blendv_ps(neg, v, on));
        }
        let mut lanes = [0.0f32; 8];
        // SAFETY: `lanes` holds eight floats.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), top_v) };
        let mut top = lanes.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for i in vec_n..n {
            if mask[i] > 0.0 {
                top = top.max(row[i]);
            }
        }
        if !top.is_finite() {
            row.fill(0.0);
            return;
        }
        let t = _mm256_set1_ps(top);
        let mut sum_v = zero;
        for i in (0..vec_n).step_by(8) {
            unsafe {
                let v = _mm256_sub_ps(_mm256_loadu_ps(p.add(i)), t);
                let e = _mm256_mul_ps(exp(v), _mm256_loadu_ps(mp.add(i)));
                _mm256_storeu_ps(p.add(i), e);
                sum_v = _mm256_add_ps(sum_v, e);
            }
        }
        // SAFETY: `lanes` holds eight floats.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum_v) };
        let mut sum: f32 = lanes.iter().sum();
        for i in vec_n..n {
            row[i] = (row[i] - top).exp() * mask[i];
            sum += row[i];
        }
        let inv = _mm256_set1_ps(1.0 / sum);
        for i in (0..vec_n).step_by(8) {
            unsafe { _mm256_storeu_ps(p.add(i), _mm256_mul_ps(_mm256_loadu_ps(p.add(i)), inv)) };
        }
        for v in &mut row[vec_n..] {
            *v /= sum;
        }
    }

    /// `y = act(x * scale + bias) * mask` row by row (no affine step when `affine` is
    /// none; `y` itself is the input when `x` is none).
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; `x` and `y` must hold `mask.len()` rows of `c`
    /// floats, and `affine`'s slices `c` floats each.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn rows(
        x: Option<&[f32]>,
        affine: Option<(&[f32], &[f32])>,
        act: Activation,
        mask: &[f32],
        c: usize,
        y: &mut [f32],
    ) {
        let vec_c = c - c % 8;
        for (p, &m) in mask.iter().enumerate() {
            let yr = &mut y[p * c..(p + 1) * c];
            let xr: *const f32 = match x {
                Some(x) => x[p * c..(p + 1) * c].as_ptr(),
                None => yr.as_ptr(),
            };
            let mv = _mm256_set1_ps(m);
            for j in (0..vec_c).step_by(8) {
                // SAFETY: `j + 8 <= vec_c <= c`, inside the rows (`xr` is a row of `c`) and
                // the affine slices; a lane is read before it is written.
                unsafe {
                    let mut v = _mm256_loadu_ps(xr.add(j));
                    if let Some((s, b)) = affine {
                        v = _mm256_fmadd_ps(
                            v,
                            _mm256_loadu_ps(s.as_ptr().add(j)),
                            _mm256_loadu_ps(b.as_ptr().add(j)),
                        );
                    }
                    _mm256_storeu_ps(yr.as_mut_ptr().add(j), _mm256_mul_ps(apply(act, v), mv));
                }
            }
            for j in vec_c..c {
                // SAFETY: `j < c`, inside the row `xr` points at.
                let v = unsafe { *xr.add(j) };
                let v = match affine {
                    Some((s, b)) => v * s[j] + b[j],
                    None => v,
                };
                yr[j] = act.apply(v) * m;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<f32> {
        // -30 to 30 and a few extremes, every channel different.
        let mut v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 30.0).collect();
        v[..6].copy_from_slice(&[-120.0, -88.0, -20.5, 19.9, 20.1, 95.0]);
        v
    }

    #[test]
    fn a_masked_softmax_gives_masked_entries_nothing() {
        let mut row: Vec<f32> = (0..19).map(|i| (i as f32 * 1.3).sin() * 9.0).collect();
        let mask: Vec<f32> = (0..19)
            .map(|i| if i % 5 == 0 { 0.0 } else { 1.0 })
            .collect();
        let logits = row.clone();
        softmax_masked(&mut row, &mask);
        let top = logits
            .iter()
            .zip(&mask)
            .filter(|(_, &m)| m > 0.0)
            .fold(f64::NEG_INFINITY, |t, (&v, _)| t.max(f64::from(v)));
        let w: Vec<f64> = logits
            .iter()
            .zip(&mask)
            .map(|(&v, &m)| {
                if m > 0.0 {
                    (f64::from(v) - top).exp()
                } else {
                    0.0
                }
            })
            .collect();
        let total: f64 = w.iter().sum();
        for (i, (&p, &w)) in row.iter().zip(&w).enumerate() {
            assert!(
                (f64::from(p) - w / total).abs() < 1e-6,
                "{i}: {p} vs {}",
                w / total
            );
        }
        let mut none = vec![1.0; 4];
        softmax_masked(&mut none, &[0.0; 4]);
        assert_eq!(none, vec![0.0; 4]);
    }

    #[test]
    fn rows_match_the_scalar_activations() {
        let c = 27; // three vectors and a tail
        let mask = [1.0, 0.0, 1.0, 1.0, 0.5];
        let x = values(c * mask.len());
        let scale: Vec<f32> = (0..c).map(|i| 0.5 + i as f32 * 0.05).collect();
        let bias: Vec<f32> = (0..c).map(|i| i as f32 * 0.1 - 1.0).collect();
        for act in [
            Activation::Identity,
            Activation::Relu,
            Activation::Silu,
            Activation::Mish,
        ] {
            let mut y = vec![f32::NAN; x.len()];
            norm_act_rows(&x, &scale, &bias, act, &mask, &mut y);
            let mut z = x.clone();
            act_rows(&mut z, c, act, &mask);
            for (p, &m) in mask.iter().enumerate() {
                for j in 0..c {
                    let i = p * c + j;
                    let want = act.apply(x[i] * scale[j] + bias[j]) * m;
                    let tol = 1e-6 * want.abs().max(1.0);
                    assert!(
                        (y[i] - want).abs() <= tol,
                        "{act:?} {i}: {} vs {want}",
                        y[i]
                    );
                    let want = act.apply(x[i]) * m;
                    let tol = 1e-6 * want.abs().max(1.0);
                    assert!(
                        (z[i] - want).abs() <= tol,
                        "{act:?} {i}: {} vs {want}",
                        z[i]
                    );
                }
            }
        }
    }
}
