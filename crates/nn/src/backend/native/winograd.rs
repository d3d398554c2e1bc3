//! 3x3 convolutions (stride 1, "same" padding) by Winograd's F(4x4, 3x3): each 4x4 output
//! tile costs 36 multiplications per channel pair instead of 144, so a 19x19 board of 96
//! channels needs about a quarter of a direct convolution's arithmetic.
//!
//! Activations are HWC (`[y][x][c]`). The transformed weights are packed once, per tile
//! position `p` (36) and block of 16 output channels, as `[c][16]`, so the inner GEMM reads
//! them with unit stride. An x86-64 CPU with AVX2 and FMA runs a SIMD path; every other CPU
//! runs the same arithmetic in portable code.
//!
//! With [`Gemm::Int16`] the 36 GEMMs (most of a convolution's arithmetic) run in
//! 16-bit integers on CPUs with AVX-512 VNNI, whose `vpdpwssd` does four times the
//! multiply-adds of an AVX2 FMA per instruction: the weights are quantized once per tile
//! position and output channel, each transformed input row (one tile position, one tile,
//! every channel) at run time on its own scale, and the int32 sums scaled back to f32
//! before the output transform. Both grids are as fine as int32 sums over `c` channels
//! allow without overflow (about 13 bits each for 96 channels), some four times finer than
//! bfloat16's mantissa, whose rounding of the weights failed the fidelity gates.

// The transforms are products of small fixed matrices; indices read closer to the maths.
#![allow(clippy::needless_range_loop)]

#[cfg(target_arch = "x86_64")]
use super::int16::avx512;
use super::int16::{QuantWeights, INT_CB};

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
pub const KB: usize = 16;
/// Input channels per transform step (one AVX register).
const CB: usize = 8;

/// How a convolution's 36 GEMMs multiply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gemm {
    /// In f32.
    #[default]
    F32,
    /// In 16-bit integers with int32 sums, where [`int16_available`]; f32 elsewhere.
    Int16,
}

/// A 3x3 convolution prepared for Winograd F(4x4, 3x3).
#[derive(Clone, Debug)]
pub struct Winograd {
    c: usize,
    k: usize,
    /// `[36][k / 16][c][16]` (empty when `q` holds them).
    u: Vec<f32>,
    /// The weights quantized, for [`Gemm::Int16`] on a CPU that runs it.
    q: Option<QuantWeights>,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    simd: bool,
}

/// Whether a convolution of `c` inputs to `k` outputs fits the packing.
pub fn fits(c: usize, k: usize) -> bool {
    c > 0 && k > 0 && c.is_multiple_of(CB) && k.is_multiple_of(KB)
}

/// The 4x4 tiles covering an `h` x `w` board.
fn tiles(h: usize, w: usize) -> (usize, usize) {
    (h.div_ceil(4), w.div_ceil(4))
}

impl Winograd {
    /// Packs `weights` (`[k][c][3][3]`) for GEMMs of `gemm`; `c` and `k` must satisfy
    /// [`fits`].
    pub fn new(weights: &[f32], c: usize, k: usize, gemm: Gemm) -> Winograd {
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
        let q = (gemm == Gemm::Int16 && int16_available() && c.is_multiple_of(INT_CB))
            .then(|| QuantWeights::new(&u, 36, c, k));
        // The f32 weights are not read once quantized.
        let u = if q.is_some() { Vec::new() } else { u };
        Winograd {
            c,
            k,
            u,
            q,
            simd: simd_available(),
        }
    }

    /// Whether the GEMMs run in 16-bit integers.
    pub fn is_int16(&self) -> bool {
        self.q.is_some()
    }

    /// Input channels.
    pub fn in_channels(&self) -> usize {
        self.c
    }

    /// Output channels.
    pub fn out_channels(&self) -> usize {
        self.k
    }

    /// Scratch floats [`Winograd::run`] needs for an `h` x `w` board (the transformed
    /// inputs, the products, and for [`Gemm::Int16`] each input row's step).
    pub fn scratch_len(&self, h: usize, w: usize) -> usize {
        let (th, tw) = tiles(h, w);
        let rows = if self.q.is_some() { 36 * th * tw } else { 0 };
        36 * th * tw * (self.c + self.k) + rows
    }

    /// Scratch integers [`Winograd::run`] needs for an `h` x `w` board (the quantized
    /// inputs of [`Gemm::Int16`]).
    pub fn int_scratch_len(&self, h: usize, w: usize) -> usize {
        let (th, tw) = tiles(h, w);
        if self.q.is_some() {
            36 * th * tw * self.c
        } else {
            0
        }
    }

    /// `y = conv(x)` for one `h` x `w` board: `x` is `[h][w][c]`, `y` is `[h][w][k]`.
    pub fn run(
        &self,
        x: &[f32],
        h: usize,
        w: usize,
        scratch: &mut [f32],
        ints: &mut [i16],
        y: &mut [f32],
    ) {
        assert!(x.len() >= h * w * self.c && y.len() >= h * w * self.k);
        let (th, tw) = tiles(h, w);
        let t = th * tw;
        let (v, rest) = scratch.split_at_mut(36 * t * self.c);
        let (m, rest) = rest.split_at_mut(36 * t * self.k);
        #[cfg(target_arch = "x86_64")]
        if let Some(q) = &self.q {
            let (vq, steps) = (&mut ints[..36 * t * self.c], &mut rest[..36 * t]);
            // SAFETY: `q` exists only when the CPU reports AVX-512 F, BW and VNNI (and so
            // AVX2 and FMA); the slices were checked to hold every index the kernels touch.
            unsafe {
                avx2::input(x, h, w, self.c, v);
                avx512::quantize(v, 36 * t, self.c, q.input_max, vq, steps);
                avx512::gemm(vq, steps, q, 36, t, self.c, self.k, m);
                avx2::output(m, h, w, self.k, y);
            }
            return;
        }
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
        let _ = (ints, rest);
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

/// Whether this CPU runs [`Gemm::Int16`] (AVX-512 F, BW and VNNI, with AVX2 and FMA for the
/// transforms).
pub fn int16_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        simd_available()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
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
                    // Built from the loads (no zeroed array first: that was a memset call
                    // per tile and channel block).
                    let mm: [[V; 6]; 6] = std::array::from_fn(|a| {
                        std::array::from_fn(|b| {
                            _mm256_loadu_ps(m.as_ptr().add(((a * 6 + b) * t + tile) * k + kb))
                        })
                    });
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
    use super::super::int16::grid_max;
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

    fn run(conv: &Winograd, x: &[f32], h: usize, w: usize) -> Vec<f32> {
        let mut scratch = vec![f32::NAN; conv.scratch_len(h, w)];
        let mut ints = vec![i16::MIN; conv.int_scratch_len(h, w)];
        let mut y = vec![f32::NAN; h * w * conv.k];
        conv.run(x, h, w, &mut scratch, &mut ints, &mut y);
        y
    }

    fn check(h: usize, w: usize, c: usize, k: usize, simd: bool) {
        let mut rng = fastrand::Rng::with_seed((h * 1000 + w * 10 + c + k) as u64);
        let x: Vec<f32> = (0..h * w * c).map(|_| rng.f32() * 2.0 - 1.0).collect();
        let wts: Vec<f32> = (0..k * c * 9).map(|_| (rng.f32() - 0.5) * 0.2).collect();
        let mut conv = Winograd::new(&wts, c, k, Gemm::F32);
        if !simd {
            conv.simd = false;
        }
        let y = run(&conv, &x, h, w);
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

    /// The int16 path's arithmetic in plain Rust: `M` from the transformed inputs `v`.
    #[cfg(target_arch = "x86_64")]
    fn int16_products(q: &QuantWeights, v: &[f32], t: usize, c: usize, k: usize) -> Vec<f32> {
        let mut m = vec![0.0f32; 36 * t * k];
        for row in 0..36 * t {
            let x = &v[row * c..][..c];
            let top = x.iter().map(|v| v.abs()).fold(0.0, f32::max);
            let (step, inv) = if top > 0.0 {
                (top / q.input_max, q.input_max / top)
            } else {
                (0.0, 0.0)
            };
            let g: Vec<i32> = x
                .iter()
                .map(|v| (v * inv).round_ties_even() as i32)
                .collect();
            let p = row / t;
            for o in 0..k {
                let (kb, lane) = (o / KB, o % KB);
                let block = &q.u[(p * (k / KB) + kb) * c * KB..][..c * KB];
                let sum: i32 = (0..c)
                    .map(|ci| g[ci] * i32::from(block[((ci / 2) * KB + lane) * 2 + ci % 2]))
                    .sum();
                m[row * k + o] = sum as f32 * (q.step[p * k + o] * step);
            }
        }
        m
    }

    #[test]
    fn int16_sums_stay_inside_an_int32() {
        for c in [8, 16, 96, 128, 256, 384, 1024] {
            let m = i64::from(grid_max(c));
            assert!(c as i64 * m * m <= i64::from(i32::MAX), "c {c}: grid {m}");
            assert!(c as i64 * (m + 1) * (m + 1) > i64::from(i32::MAX) || m == 32767);
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn int16_kernels_equal_their_portable_arithmetic_and_a_direct_convolution() {
        if !int16_available() {
            println!("skipped: this CPU has no AVX-512 VNNI");
            return;
        }
        for (h, w, c, k) in [
            (19, 19, 96, 96),
            (9, 9, 96, 64),
            (13, 13, 32, 48),
            (5, 7, 16, 16),
        ] {
            let mut rng = fastrand::Rng::with_seed((h * 100 + c + k) as u64);
            let x: Vec<f32> = (0..h * w * c).map(|_| rng.f32() * 2.0 - 1.0).collect();
            let wts: Vec<f32> = (0..k * c * 9).map(|_| (rng.f32() - 0.5) * 0.2).collect();
            let conv = Winograd::new(&wts, c, k, Gemm::Int16);
            assert!(conv.is_int16());
            let got = run(&conv, &x, h, w);
            // The kernels' own input transform (a different rounding could move an input
            // across a grid step), the reference's integer products, a portable output
            // transform.
            let (th, tw) = tiles(h, w);
            let t = th * tw;
            let mut v = vec![0.0; 36 * t * c];
            // SAFETY: `int16_available` implies AVX2 and FMA.
            unsafe { avx2::input(&x, h, w, c, &mut v) };
            let m = int16_products(conv.q.as_ref().expect("quantized"), &v, t, c, k);
            let mut want = vec![0.0; h * w * k];
            portable::output(&m, h, w, k, &mut want);
            let direct = direct(&x, &wts, h, w, c, k);
            let (mut to_ref, mut to_direct, mut top) = (0.0f32, 0.0f32, 0.0f32);
            for ((g, r), d) in got.iter().zip(&want).zip(&direct) {
                to_ref = to_ref.max((g - r).abs());
                to_direct = to_direct.max((g - d).abs());
                top = top.max(d.abs());
            }
            // The integer sums are exact; only the output transform's f32 rounding (AVX2
            // against portable order) separates the kernels from the reference.
            assert!(
                to_ref < 1e-4,
                "{h}x{w} c{c} k{k}: {to_ref} from the reference"
            );
            // A 13-bit grid on both operands, its errors amplified by the output transform
            // (up to 8 x 8): about half a percent of the largest output at worst, as a
            // simulation of the same arithmetic in f64 gives (bfloat16 operands: 5%); a
            // misplaced pair or lane is off by the outputs' own size.
            assert!(
                to_direct < 1.5e-2 * top,
                "{h}x{w} c{c} k{k}: {to_direct} from the direct convolution (outputs up to {top})"
            );
        }
    }

    #[test]
    fn int16_falls_back_to_f32_where_the_cpu_lacks_it() {
        let wts = vec![0.1; 16 * 24 * 9];
        let conv = Winograd::new(&wts, 24, 16, Gemm::Int16);
        // 24 channels are not whole AVX-512 registers: f32 even on a CPU with VNNI.
        assert!(!conv.is_int16());
        let conv = Winograd::new(&wts[..16 * 16 * 9], 16, 16, Gemm::Int16);
        assert_eq!(conv.is_int16(), int16_available());
    }

    #[test]
    fn channel_counts_must_fit_the_packing() {
        assert!(fits(96, 96) && fits(8, 16) && fits(32, 32));
        assert!(!fits(22, 96) && !fits(96, 8) && !fits(0, 16));
    }
}
