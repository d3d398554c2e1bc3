//! The int16 GEMM of the native backend: weights quantized once per position and output
//! channel, each input row quantized at run time on its own scale, both on grids as fine
//! as an int32 sum over the input channels allows, multiplied by AVX-512 VNNI's
//! `vpdpwssd` (16-bit pairs into int32 lanes) and scaled back to f32. The Winograd 3x3
//! convolutions run their 36 tile-position GEMMs here, the 1x1 convolutions their one.

// Row and lane indices read closer to the packing's layout than iterators would.
#![allow(clippy::needless_range_loop)]

use super::winograd::KB;

/// Input channels per quantization step of the int16 path (one AVX-512 register).
pub const INT_CB: usize = 16;

/// Weights on a 16-bit grid per position (a Winograd tile position, or the one position of a
/// 1x1 convolution) and output channel.
#[derive(Clone, Debug)]
// Read by the VNNI kernels only, which other architectures do not build.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub struct QuantWeights {
    /// `[positions][k / 16][c / 2][16][2]`: a 32-bit lane holds two input channels'
    /// weights for one output channel, as `vpdpwssd` pairs them.
    pub u: Vec<i16>,
    /// `[positions][k]`: what one step of an output channel's grid is worth.
    pub step: Vec<f32>,
    /// The largest grid value of an input.
    pub input_max: f32,
}

/// The largest value either grid may reach so that a sum over `c` products of two grid
/// values stays inside an int32: `c * m * m < 2^31`.
pub fn grid_max(c: usize) -> i32 {
    let m = ((i32::MAX as f64) / c as f64).sqrt().floor() as i32;
    m.min(i16::MAX as i32)
}

impl QuantWeights {
    /// `u` (`[positions][k / 16][c][16]`) on the grid.
    pub fn new(u: &[f32], positions: usize, c: usize, k: usize) -> QuantWeights {
        let kbs = k / KB;
        let m = grid_max(c) as f32;
        let mut step = vec![0.0f32; positions * k];
        for p in 0..positions {
            for kb in 0..kbs {
                let block = &u[(p * kbs + kb) * c * KB..][..c * KB];
                for o in 0..KB {
                    let top = (0..c)
                        .map(|ci| block[ci * KB + o].abs())
                        .fold(0.0, f32::max);
                    step[p * k + kb * KB + o] = top / m;
                }
            }
        }
        let mut q = vec![0i16; positions * k * c];
        for p in 0..positions {
            for kb in 0..kbs {
                let block = &u[(p * kbs + kb) * c * KB..][..c * KB];
                let out = &mut q[(p * kbs + kb) * c * KB..][..c * KB];
                for ci in 0..c {
                    for o in 0..KB {
                        let s = step[p * k + kb * KB + o];
                        let v = if s > 0.0 { block[ci * KB + o] / s } else { 0.0 };
                        out[((ci / 2) * KB + o) * 2 + ci % 2] = v.round_ties_even() as i16;
                    }
                }
            }
        }
        QuantWeights {
            u: q,
            step,
            input_max: m,
        }
    }
}

/// AVX-512 VNNI: the int16 path's quantization and GEMM.
#[cfg(target_arch = "x86_64")]
pub mod avx512 {
    use std::arch::x86_64::*;

    use super::{QuantWeights, INT_CB, KB};

    /// Each of the `rows` rows of `v` (`c` floats) on its own grid: `q` gets the grid
    /// values (`[rows][c]`), `steps` what one step is worth (0 for a row of zeros).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW; `c` must be a multiple of 16.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn quantize(
        v: &[f32],
        rows: usize,
        c: usize,
        input_max: f32,
        q: &mut [i16],
        steps: &mut [f32],
    ) {
        assert!(v.len() >= rows * c && q.len() >= rows * c && steps.len() >= rows);
        for r in 0..rows {
            let row = v.as_ptr().add(r * c);
            let mut top = _mm512_setzero_ps();
            for i in (0..c).step_by(INT_CB) {
                top = _mm512_max_ps(top, _mm512_abs_ps(_mm512_loadu_ps(row.add(i))));
            }
            let top = _mm512_reduce_max_ps(top);
            let (step, inv) = if top > 0.0 {
                (top / input_max, input_max / top)
            } else {
                (0.0, 0.0)
            };
            steps[r] = step;
            let inv = _mm512_set1_ps(inv);
            let out = q.as_mut_ptr().add(r * c);
            for i in (0..c).step_by(INT_CB) {
                // Rounded to nearest even, as the portable reference rounds.
                let g = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row.add(i)), inv));
                _mm256_storeu_si256(out.add(i).cast(), _mm512_cvtepi32_epi16(g));
            }
        }
    }

    /// `M[p][row][k] = steps[p][row] * step[p][k] * (Vq[p][row][:] · Uq[p][:][k])` for each
    /// of the `positions` positions and `t` rows.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F, BW and VNNI; `c` a multiple of 2 and `k` of 16.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub unsafe fn gemm(
        vq: &[i16],
        steps: &[f32],
        q: &QuantWeights,
        positions: usize,
        t: usize,
        c: usize,
        k: usize,
        m: &mut [f32],
    ) {
        let n = positions * t;
        assert!(vq.len() >= n * c && steps.len() >= n && m.len() >= n * k);
        assert!(q.u.len() >= positions * k * c && q.step.len() >= positions * k);
        let kbs = k / KB;
        for p in 0..positions {
            let vp = vq.as_ptr().add(p * t * c);
            let sp = steps.as_ptr().add(p * t);
            let mp = m.as_mut_ptr().add(p * t * k);
            let mut j = 0;
            while j < kbs {
                let pair = j + 1 < kbs;
                let up = q.u.as_ptr().add((p * kbs + j) * c * KB);
                let wp = q.step.as_ptr().add(p * k + j * KB);
                let mut r = 0;
                while r < t {
                    let rows = (t - r).min(ROWS);
                    let (a, s, out) = (vp.add(r * c), sp.add(r), mp.add(r * k + j * KB));
                    if pair {
                        rows_block::<2>(rows, a, s, c, up, wp, out, k);
                    } else {
                        rows_block::<1>(rows, a, s, c, up, wp, out, k);
                    }
                    r += rows;
                }
                j += if pair { 2 } else { 1 };
            }
        }
    }

    /// `acc + a · b` by pairs of 16-bit lanes, as one `vpdpwssd`: LLVM otherwise splits
    /// the intrinsic into `vpmaddwd` and `vpaddd` (two instructions for one), which ran
    /// the GEMM at about half its speed.
    #[target_feature(enable = "avx512f,avx512vnni")]
    #[inline]
    unsafe fn dpwssd(acc: __m512i, a: __m512i, b: __m512i) -> __m512i {
        let mut acc = acc;
        // SAFETY: register operands only; callers are compiled with AVX-512 VNNI.
        std::arch::asm!(
            "vpdpwssd {acc}, {a}, {b}",
            acc = inout(zmm_reg) acc,
            a = in(zmm_reg) a,
            b = in(zmm_reg) b,
            options(pure, nomem, nostack, preserves_flags),
        );
        acc
    }

    /// Most tile rows a block keeps accumulators for (24 of the 32 registers with two
    /// channel blocks).
    const ROWS: usize = 12;

    /// [`block`] for `rows` rows (1 to [`ROWS`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn rows_block<const NB: usize>(
        rows: usize,
        a: *const i16,
        s: *const f32,
        c: usize,
        b: *const i16,
        w: *const f32,
        out: *mut f32,
        ldo: usize,
    ) {
        match rows {
            1 => block::<1, NB>(a, s, c, b, w, out, ldo),
            2 => block::<2, NB>(a, s, c, b, w, out, ldo),
            3 => block::<3, NB>(a, s, c, b, w, out, ldo),
            4 => block::<4, NB>(a, s, c, b, w, out, ldo),
            5 => block::<5, NB>(a, s, c, b, w, out, ldo),
            6 => block::<6, NB>(a, s, c, b, w, out, ldo),
            7 => block::<7, NB>(a, s, c, b, w, out, ldo),
            8 => block::<8, NB>(a, s, c, b, w, out, ldo),
            9 => block::<9, NB>(a, s, c, b, w, out, ldo),
            10 => block::<10, NB>(a, s, c, b, w, out, ldo),
            11 => block::<11, NB>(a, s, c, b, w, out, ldo),
            _ => block::<12, NB>(a, s, c, b, w, out, ldo),
        }
    }

    /// `out[R x 16 NB] = s[r] * w[o] * (a[R x c] (row stride c) · b[c x 16 NB])`, `b` being
    /// `NB` consecutive packed blocks of 16 output channels.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn block<const R: usize, const NB: usize>(
        a: *const i16,
        s: *const f32,
        c: usize,
        b: *const i16,
        w: *const f32,
        out: *mut f32,
        ldo: usize,
    ) {
        let mut acc = [[_mm512_setzero_si512(); NB]; R];
        for i in (0..c).step_by(2) {
            let mut bv = [_mm512_setzero_si512(); NB];
            for (n, v) in bv.iter_mut().enumerate() {
                *v = _mm512_loadu_si512(b.add(n * c * KB + i * KB).cast());
            }
            for (r, row) in acc.iter_mut().enumerate() {
                // Two adjacent input channels of the row, as one 32-bit lane.
                let pair = a.add(r * c + i).cast::<i32>().read_unaligned();
                let av = _mm512_set1_epi32(pair);
                for (n, v) in row.iter_mut().enumerate() {
                    *v = dpwssd(*v, av, bv[n]);
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let sr = _mm512_set1_ps(*s.add(r));
            for (n, v) in row.iter().enumerate() {
                let scale = _mm512_mul_ps(_mm512_loadu_ps(w.add(n * KB)), sr);
                let y = _mm512_mul_ps(_mm512_cvtepi32_ps(*v), scale);
                _mm512_storeu_ps(out.add(r * ldo + n * KB), y);
            }
        }
    }
}
