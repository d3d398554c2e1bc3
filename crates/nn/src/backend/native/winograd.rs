//! 3x3 convolutions (stride 1, "same" padding) by Winograd's F(4x4, 3x3): each 4x4 output
//! tile costs 36 multiplications per channel pair instead of 144, so a 19x19 board of 96
//! channels needs about a quarter of a direct convolution's arithmetic.
//!
//! Activations are HWC (`[y][x][c]`). The transformed weights are packed once, per tile
//! position `p` (36) and block of 16 output channels, as `[c][16]`, so the inner GEMM reads
//! them with unit stride. An x86-64 CPU with AVX2 and FMA runs a SIMD path; every other CPU
//! runs the same arithmetic in portable code.

// The transforms are products of small fixed matrices; indices read closer to the maths.
#![allow(clippy::needless_range_loop)]

/// Rows of `B^T`, the input transform.
const BT: [[f32; 6]; 6] = [
    [4.0, 0.0, -5.0, 0.0, 1.0, 0.0],
    [0.0, -4.0, -4.0, 1.0, 1.0, 0.0],
    [0.0, 4.0, -4.0, -1.0, 1.0, 0.0],
    [0.0, -2.0, -1.0, 2.0, 1.0, 0.0],
    [0.0, 2.0, -1.0, -2.0, 1.0, 0.0],
    [0.0, 4.0, 0.0, -5.0, 0.0, 1.0],
];
/// `G`, the kernel transform.
const G: [[f32; 3]; 6] = [
    [1.0 / 4.0, 0.0, 0.0],
    [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
    [-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
    [1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
    [1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
    [0.0, 0.0, 1.0],
];
/// Rows of `A^T`, the output transform.
const AT: [[f32; 6]; 4] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.0],
    [0.0, 1.0, -1.0, 2.0, -2.0, 0.0],
    [0.0, 1.0, 1.0, 4.0, 4.0, 0.0],
    [0.0, 1.0, -1.0, 8.0, -8.0, 1.0],
];

/// Output channels per packed weight block (two AVX registers).
const KB: usize = 16;
/// Input channels per transform step (one AVX register).
const CB: usize = 8;

/// A 3x3 convolution prepared for Winograd F(4x4, 3x3).
#[derive(Clone, Debug)]
pub struct Winograd {
    c: usize,
    k: usize,
    /// `[36][k / 16][c][16]`.
    u: Vec<f32>,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    simd: bool,
}

/// Whether a convolution of `c` inputs to `k` outputs fits the packing.
pub fn fits(c: usize, k: usize) -> bool {
    c > 0 && k > 0 && c % CB == 0 && k % KB == 0
}

/// The 4x4 tiles covering an `h` x `w` board.
fn tiles(h: usize, w: usize) -> (usize, usize) {
    (h.div_ceil(4), w.div_ceil(4))
}

impl Winograd {
    /// Packs `weights` (`[k][c][3][3]`); `c` and `k` must satisfy [`fits`].
    pub fn new(weights: &[f32], c: usize, k: usize) -> Winograd {
        assert!(fits(c, k) && weights.len() == k * c * 9);
        let mut u = vec![0.0; 36 * k * c];
        for ko in 0..k {
            for ci in 0..c {
                let g = &weights[(ko * c + ci) * 9..][..9];
                // G g G^T, in f64 so the packed weights round once.
                let mut t = [[0.0f64; 3]; 6];
                for (a, row) in t.iter_mut().enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = (0..3)
                            .map(|i| f64::from(G[a][i]) * f64::from(g[i * 3 + j]))
                            .sum();
                    }
                }
                for (a, row) in t.iter().enumerate() {
                    for b in 0..6 {
                        let v: f64 = (0..3).map(|j| row[j] * f64::from(G[b][j])).sum();
                        let p = a * 6 + b;
                        u[((p * (k / KB) + ko / KB) * c + ci) * KB + ko % KB] = v as f32;
                    }
                }
            }
        }
        Winograd {
            c,
            k,
            u,
            simd: simd_available(),
        }
    }

    /// Input channels.
    pub fn in_channels(&self) -> usize {
        self.c
    }

    /// Output channels.
    pub fn out_channels(&self) -> usize {
        self.k
    }

    /// Scratch floats [`Winograd::run`] needs for an `h` x `w` board.
    pub fn scratch_len(&self, h: usize, w: usize) -> usize {
        let (th, tw) = tiles(h, w);
        36 * th * tw * (self.c + self.k)
    }

    /// `y = conv(x)` for one `h` x `w` board: `x` is `[h][w][c]`, `y` is `[h][w][k]`.
    pub fn run(&self, x: &[f32], h: usize, w: usize, scratch: &mut [f32], y: &mut [f32]) {
        assert!(x.len() >= h * w * self.c && y.len() >= h * w * self.k);
        let (th, tw) = tiles(h, w);
        let t = th * tw;
        let (v, rest) = scratch.split_at_mut(36 * t * self.c);
        let m = &mut rest[..36 * t * self.k];
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // SAFETY: `simd` is set only when the CPU reports AVX2 and FMA; the slices were
            // checked to hold every index the kernels touch.
            unsafe {
                avx2::input(x, h, w, self.c, v);
                avx2::gemm(v, &self.u, t, self.c, self.k, m);
                avx2::output(m, h, w, self.k, y);
            }
            return;
        }
        portable::input(x, h, w, self.c, v);
        portable::gemm(v, &self.u, t, self.c, self.k, m);
        portable::output(m, h, w, self.k, y);
    }
}

/// Whether this CPU runs the AVX2 + FMA path.
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The same arithmetic in plain Rust (any CPU).
mod portable {
    use super::{AT, BT, KB};

    /// `V[p][tile][c]` from `x` (`[h][w][c]`).
    pub fn input(x: &[f32], h: usize, w: usize, c: usize, v: &mut [f32]) {
        let (th, tw) = super::tiles(h, w);
        let t = th * tw;
        for ty in 0..th {
            for tx in 0..tw {
                let tile = ty * tw + tx;
                for ci in 0..c {
                    let mut d = [[0.0f32; 6]; 6];
                    for (a, row) in d.iter_mut().enumerate() {
                        let Some(yy) = (ty * 4 + a).checked_sub(1).filter(|&yy| yy < h) else {
                            continue;
                        };
                        for (b, val) in row.iter_mut().enumerate() {
                            if let Some(xx) = (tx * 4 + b).checked_sub(1).filter(|&xx| xx < w) {
                                *val = x[(yy * w + xx) * c + ci];
                            }
                        }
                    }
                    let mut tmp = [[0.0f32; 6]; 6];
                    for a in 0..6 {
                        for b in 0..6 {
                            tmp[a][b] = (0..6).map(|i| BT[a][i] * d[i][b]).sum();
                        }
                    }
                    for a in 0..6 {
                        for b in 0..6 {
                            let s: f32 = (0..6).map(|i| tmp[a][i] * BT[b][i]).sum();
                            v[((a * 6 + b) * t + tile) * c + ci] = s;
                        }
                    }
                }
            }
        }
    }

    /// `M[p][tile][k] = V[p][tile][:] · U[p][:][k]`.
    pub fn gemm(v: &[f32], u: &[f32], t: usize, c: usize, k: usize, m: &mut [f32]) {
        for p in 0..36 {
            for tile in 0..t {
                let vrow = &v[(p * t + tile) * c..][..c];
                for kb in 0..k / KB {
                    let up = &u[(p * (k / KB) + kb) * c * KB..][..c * KB];
                    let mut acc = [0.0f32; KB];
                    for (ci, &a) in vrow.iter().enumerate() {
                        for (s, &b) in acc.iter_mut().zip(&up[ci * KB..][..KB]) {
                            *s += a * b;
                        }
                    }
                    m[(p * t + tile) * k + kb * KB..][..KB].copy_from_slice(&acc);
                }
            }
        }
    }

    /// `y` (`[h][w][k]`) from `M`.
    pub fn output(m: &[f32], h: usize, w: usize, k: usize, y: &mut [f32]) {
        let (th, tw) = super::tiles(h, w);
        let t = th * tw;
        for ty in 0..th {
            for tx in 0..tw {
                let tile = ty * tw + tx;
                for ko in 0..k {
                    let mut mm = [[0.0f32; 6]; 6];
                    for (a, row) in mm.iter_mut().enumerate() {
                        for (b, val) in row.iter_mut().enumerate() {
                            *val = m[((a * 6 + b) * t + tile) * k + ko];
                        }
                    }
                    let mut tmp = [[0.0f32; 6]; 4];
                    for a in 0..4 {
                        for b in 0..6 {
                            tmp[a][b] = (0..6).map(|i| AT[a][i] * mm[i][b]).sum();
                        }
                    }
                    for (a, row) in tmp.iter().enumerate() {
                        let yy = ty * 4 + a;
                        if yy >= h {
                            break;
                        }
                        for b in 0..4 {
                            let xx = tx * 4 + b;
                            if xx >= w {
                                break;
                            }
                            y[(yy * w + xx) * k + ko] = (0..6).map(|i| row[i] * AT[b][i]).sum();
                        }
                    }
                }
            }
        }
    }
}

/// AVX2 + FMA: eight channels a register; the GEMM keeps a 6-tile x 16-channel block of
/// accumulators in twelve registers.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{CB, KB};

    type V = __m256;

    #[inline(always)]
    unsafe fn mul(a: V, s: f32) -> V {
        _mm256_mul_ps(a, _mm256_set1_ps(s))
    }

    /// `B^T d` for one column of six registers, with its constant factors written out.
    #[inline(always)]
    unsafe fn bt(d: [V; 6]) -> [V; 6] {
        let (add, sub) = (|a, b| _mm256_add_ps(a, b), |a, b| _mm256_sub_ps(a, b));
        [
            sub(add(mul(d[0], 4.0), d[4]), mul(d[2], 5.0)),
            sub(add(d[3], d[4]), mul(add(d[1], d[2]), 4.0)),
            add(sub(d[4], d[3]), mul(sub(d[1], d[2]), 4.0)),
            add(sub(d[4], d[2]), mul(sub(d[3], d[1]), 2.0)),
            sub(sub(d[4], d[2]), mul(sub(d[3], d[1]), 2.0)),
            sub(add(mul(d[1], 4.0), d[5]), mul(d[3], 5.0)),
        ]
    }

    /// `A^T m` for one column of six registers.
    #[inline(always)]
    unsafe fn at(m: [V; 6]) -> [V; 4] {
        let s12 = _mm256_add_ps(m[1], m[2]);
        let d12 = _mm256_sub_ps(m[1], m[2]);
        let s34 = _mm256_add_ps(m[3], m[4]);
        let d34 = _mm256_sub_ps(m[3], m[4]);
        [
            _mm256_add_ps(_mm256_add_ps(m[0], s12), s34),
            _mm256_fmadd_ps(d34, _mm256_set1_ps(2.0), d12),
            _mm256_fmadd_ps(s34, _mm256_set1_ps(4.0), s12),
            _mm256_add_ps(_mm256_fmadd_ps(d34, _mm256_set1_ps(8.0), d12), m[5]),
        ]
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn input(x: &[f32], h: usize, w: usize, c: usize, v: &mut [f32]) {
        let (th, tw) = super::tiles(h, w);
        let t = th * tw;
        let zero = _mm256_setzero_ps();
        for ty in 0..th {
            for tx in 0..tw {
                let tile = ty * tw + tx;
                for cb in (0..c).step_by(CB) {
                    let mut d = [[zero; 6]; 6];
                    for (a, row) in d.iter_mut().enumerate() {
                        let Some(yy) = (ty * 4 + a).checked_sub(1).filter(|&yy| yy < h) else {
                            continue;
                        };
                        for (b, val) in row.iter_mut().enumerate() {
                            if let Some(xx) = (tx * 4 + b).checked_sub(1).filter(|&xx| xx < w) {
                                *val = _mm256_loadu_ps(x.as_ptr().add((yy * w + xx) * c + cb));
                            }
                        }
                    }
                    let mut tmp = [[zero; 6]; 6];
                    for b in 0..6 {
                        let col = bt([d[0][b], d[1][b], d[2][b], d[3][b], d[4][b], d[5][b]]);
                        for a in 0..6 {
                            tmp[a][b] = col[a];
                        }
                    }
                    for (a, row) in tmp.iter().enumerate() {
                        let out = bt(*row);
                        for (b, val) in out.iter().enumerate() {
                            let p = a * 6 + b;
                            _mm256_storeu_ps(v.as_mut_ptr().add((p * t + tile) * c + cb), *val);
                        }
                    }
                }
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn gemm(v: &[f32], u: &[f32], t: usize, c: usize, k: usize, m: &mut [f32]) {
        let kbs = k / KB;
        for p in 0..36 {
            let vp = v.as_ptr().add(p * t * c);
            let mp = m.as_mut_ptr().add(p * t * k);
            for j in 0..kbs {
                let up = u.as_ptr().add((p * kbs + j) * c * KB);
                let mut r = 0;
                while r + 6 <= t {
                    block::<6>(vp.add(r * c), c, up, mp.add(r * k + j * KB), k);
                    r += 6;
                }
                let (a, out) = (vp.add(r * c), mp.add(r * k + j * KB));
                match t - r {
                    0 => {}
                    1 => block::<1>(a, c, up, out, k),
                    2 => block::<2>(a, c, up, out, k),
                    3 => block::<3>(a, c, up, out, k),
                    4 => block::<4>(a, c, up, out, k),
                    _ => block::<5>(a, c, up, out, k),
                }
            }
        }
    }

    /// `out[R x 16] = a[R x c] (row stride c) · b[c x 16] (packed)`.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block<const R: usize>(
        a: *const f32,
        c: usize,
        b: *const f32,
        out: *mut f32,
        ldo: usize,
    ) {
        let mut acc = [[_mm256_setzero_ps(); 2]; R];
        for i in 0..c {
            let b0 = _mm256_loadu_ps(b.add(i * KB));
            let b1 = _mm256_loadu_ps(b.add(i * KB + 8));
            for (r, row) in acc.iter_mut().enumerate() {
                let av = _mm256_broadcast_ss(&*a.add(r * c + i));
                row[0] = _mm256_fmadd_ps(av, b0, row[0]);
                row[1] = _mm256_fmadd_ps(av, b1, row[1]);
            }
        }
        for (r, row) in acc.iter().enumerate() {
            _mm256_storeu_ps(out.add(r * ldo), row[0]);
            _mm256_storeu_ps(out.add(r * ldo + 8), row[1]);
        }
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn output(m: &[f32], h: usize, w: usize, k: usize, y: &mut [f32]) {
        let (th, tw) = super::tiles(h, w);
        let t = th * tw;
        let zero = _mm256_setzero_ps();
        for ty in 0..th {
            for tx in 0..tw {
                let tile = ty * tw + tx;
                for kb in (0..k).step_by(CB) {
                    let mut mm = [[zero; 6]; 6];
                    for (a, row) in mm.iter_mut().enumerate() {
                        for (b, val) in row.iter_mut().enumerate() {
                            let p = a * 6 + b;
                            *val = _mm256_loadu_ps(m.as_ptr().add((p * t + tile) * k + kb));
                        }
                    }
                    let mut tmp = [[zero; 6]; 4];
                    for b in 0..6 {
                        let col = at([mm[0][b], mm[1][b], mm[2][b], mm[3][b], mm[4][b], mm[5][b]]);
                        for a in 0..4 {
                            tmp[a][b] = col[a];
                        }
                    }
                    for (a, row) in tmp.iter().enumerate() {
                        let yy = ty * 4 + a;
                        if yy >= h {
                            break;
                        }
                        let out = at(*row);
                        for (b, val) in out.iter().enumerate() {
                            let xx = tx * 4 + b;
                            if xx >= w {
                                break;
                            }
                            _mm256_storeu_ps(y.as_mut_ptr().add((yy * w + xx) * k + kb), *val);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct convolution in f64, the reference.
    fn direct(x: &[f32], wts: &[f32], h: usize, w: usize, c: usize, k: usize) -> Vec<f32> {
        let mut y = vec![0.0; h * w * k];
        for i in 0..h {
            for j in 0..w {
                for ko in 0..k {
                    let mut s = 0.0f64;
                    for dy in 0..3 {
                        for dx in 0..3 {
                            let (Some(yy), Some(xx)) =
                                ((i + dy).checked_sub(1), (j + dx).checked_sub(1))
                            else {
                                continue;
                            };
                            if yy >= h || xx >= w {
                                continue;
                            }
                            for ci in 0..c {
                                s += f64::from(x[(yy * w + xx) * c + ci])
                                    * f64::from(wts[((ko * c + ci) * 3 + dy) * 3 + dx]);
                            }
                        }
                    }
                    y[(i * w + j) * k + ko] = s as f32;
                }
            }
        }
        y
    }

    fn check(h: usize, w: usize, c: usize, k: usize, simd: bool) {
        let mut rng = fastrand::Rng::with_seed((h * 1000 + w * 10 + c + k) as u64);
        let x: Vec<f32> = (0..h * w * c).map(|_| rng.f32() * 2.0 - 1.0).collect();
        let wts: Vec<f32> = (0..k * c * 9).map(|_| (rng.f32() - 0.5) * 0.2).collect();
        let mut conv = Winograd::new(&wts, c, k);
        if !simd {
            conv.simd = false;
        }
        let mut scratch = vec![f32::NAN; conv.scratch_len(h, w)];
        let mut y = vec![f32::NAN; h * w * k];
        conv.run(&x, h, w, &mut scratch, &mut y);
        let want = direct(&x, &wts, h, w, c, k);
        let worst = y
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        // F(4x4, 3x3) rounds a few times more than a direct sum (outputs here are up to
        // about 2); a wrong transform or a misplaced tile is off by tenths.
        assert!(
            worst < 1e-4,
            "{h}x{w} c{c} k{k} simd {simd}: off by {worst}"
        );
    }

    #[test]
    fn equals_a_direct_convolution_on_every_board_size() {
        for (h, w) in [(19, 19), (9, 9), (13, 13), (7, 5), (1, 1), (4, 8)] {
            for simd in [true, false] {
                check(h, w, 16, 32, simd);
            }
        }
        check(19, 19, 96, 96, true);
    }

    #[test]
    fn channel_counts_must_fit_the_packing() {
        assert!(fits(96, 96) && fits(8, 16) && fits(32, 32));
        assert!(!fits(22, 96) && !fits(96, 8) && !fits(0, 16));
    }
}
