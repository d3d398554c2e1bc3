//! The layers of a convolutional KataGo network on HWC activations (`[point][channel]`),
//! with every batch norm that follows a convolution or dense layer folded into it.

use crate::model::{Activation, BatchNormLayer, ConvLayer, MatMulLayer};

use super::activation::{act_rows, norm_act_rows};
use super::pointwise::Pointwise;
use super::winograd::{self, Gemm, Winograd};

/// `out[rows x n] = a[rows x k] · b[k x n]` (all row-major), overwriting `out`.
pub fn matmul(a: &[f32], b: &[f32], rows: usize, k: usize, n: usize, out: &mut [f32]) {
    assert!(a.len() >= rows * k && b.len() >= k * n && out.len() >= rows * n);
    if rows == 0 || n == 0 {
        return;
    }
    // SAFETY: the asserts above bound every index the row-major strides reach.
    unsafe {
        matrixmultiply::sgemm(
            rows,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// A convolution with its output scale folded in and an optional bias.
#[derive(Clone, Debug)]
pub struct Conv {
    kind: ConvKind,
    c: usize,
    k: usize,
    bias: Option<Vec<f32>>,
}

#[derive(Clone, Debug)]
enum ConvKind {
    /// 3x3 without dilation, channel counts that fit the packing.
    Winograd(Winograd),
    /// 1x1 in 16-bit integers.
    Pointwise(Pointwise),
    /// Any other shape.
    Patches(Patches),
}

/// Scratch the convolutions share: floats, and the int16 path's quantized inputs.
#[derive(Debug, Default)]
pub struct Scratch {
    floats: Vec<f32>,
    ints: Vec<i16>,
}

impl Conv {
    /// `layer` with output channel `o` scaled by `out_scale[o]` and `bias` added; a 3x3
    /// convolution runs its Winograd GEMMs by `gemm`.
    pub fn new(
        layer: &ConvLayer,
        out_scale: Option<&[f32]>,
        bias: Option<Vec<f32>>,
        gemm: Gemm,
    ) -> Conv {
        let (c, k) = (layer.in_channels, layer.out_channels);
        let per_out = c * layer.kernel_y * layer.kernel_x;
        let mut w = layer.weights.clone();
        if let Some(s) = out_scale {
            for (chunk, &s) in w.chunks_mut(per_out.max(1)).zip(s) {
                chunk.iter_mut().for_each(|v| *v *= s);
            }
        }
        let square3 = layer.kernel_y == 3 && layer.kernel_x == 3;
        let plain = layer.dilation_y == 1 && layer.dilation_x == 1;
        let one = layer.kernel_y == 1 && layer.kernel_x == 1;
        let pointwise = (one && gemm == Gemm::Int16)
            .then(|| Pointwise::new(&w, c, k))
            .flatten();
        let kind = if let Some(p) = pointwise {
            ConvKind::Pointwise(p)
        } else if square3 && plain && winograd::fits(c, k) {
            ConvKind::Winograd(Winograd::new(&w, c, k, gemm))
        } else {
            ConvKind::Patches(Patches::new(layer, &w))
        };
        Conv { kind, c, k, bias }
    }

    /// Output channels.
    pub fn out_channels(&self) -> usize {
        self.k
    }

    /// Scratch floats [`Conv::run`] needs on an `h` x `w` board.
    pub fn scratch_len(&self, h: usize, w: usize) -> usize {
        match &self.kind {
            ConvKind::Winograd(wg) => wg.scratch_len(h, w),
            ConvKind::Pointwise(p) => p.scratch_len(h * w),
            ConvKind::Patches(p) if p.ky * p.kx == 1 => 0,
            ConvKind::Patches(p) => h * w * p.ky * p.kx * self.c,
        }
    }

    /// Whether its GEMMs run in 16-bit integers.
    pub fn is_int16(&self) -> bool {
        match &self.kind {
            ConvKind::Winograd(wg) => wg.is_int16(),
            ConvKind::Pointwise(_) => true,
            ConvKind::Patches(_) => false,
        }
    }

    /// `y = conv(x) + bias` on an `h` x `w` board (`x` `[h*w][c]`, `y` `[h*w][k]`).
    pub fn run(&self, x: &[f32], h: usize, w: usize, scratch: &mut Scratch, y: &mut [f32]) {
        let need = self.scratch_len(h, w);
        if scratch.floats.len() < need {
            scratch.floats.resize(need, 0.0);
        }
        let area = h * w;
        match &self.kind {
            ConvKind::Winograd(wg) => {
                let ints = wg.int_scratch_len(h, w);
                if scratch.ints.len() < ints {
                    scratch.ints.resize(ints, 0);
                }
                wg.run(x, h, w, &mut scratch.floats, &mut scratch.ints, y)
            }
            ConvKind::Pointwise(p) => {
                let ints = p.int_scratch_len(area);
                if scratch.ints.len() < ints {
                    scratch.ints.resize(ints, 0);
                }
                p.run(x, area, &mut scratch.floats, &mut scratch.ints, y)
            }
            ConvKind::Patches(p) => p.run(x, h, w, &mut scratch.floats, y),
        }
        if let Some(b) = &self.bias {
            add_channel_bias(&mut y[..area * self.k], b);
        }
    }
}

/// A convolution's input is spread over its taps point by point, skipping zeros, when at
/// most a third of it is non-zero: the trunk's 5x5 input convolution reads 0/1 features
/// of which about a tenth are set, so this costs about a tenth of the dense product.
const SPARSE_FRACTION: usize = 3;

/// A convolution of any shape: a GEMM over gathered patches, or for a sparse input each
/// non-zero input spread over the outputs its taps reach.
#[derive(Clone, Debug)]
struct Patches {
    ky: usize,
    kx: usize,
    dy: usize,
    dx: usize,
    c: usize,
    k: usize,
    /// `[ky][kx][c][k]`.
    weights: Vec<f32>,
}

impl Patches {
    /// `layer`'s geometry with its weights `w` (`[k][c][ky][kx]`) reordered.
    fn new(layer: &ConvLayer, w: &[f32]) -> Patches {
        let (c, k) = (layer.in_channels, layer.out_channels);
        let (ky, kx) = (layer.kernel_y, layer.kernel_x);
        let mut weights = vec![0.0; ky * kx * c * k];
        for o in 0..k {
            for i in 0..c {
                for y in 0..ky {
                    for x in 0..kx {
                        weights[((y * kx + x) * c + i) * k + o] =
                            w[((o * c + i) * ky + y) * kx + x];
                    }
                }
            }
        }
        Patches {
            ky,
            kx,
            dy: layer.dilation_y,
            dx: layer.dilation_x,
            c,
            k,
            weights,
        }
    }

    /// How far the kernel's centre lies from its first tap, in rows and columns.
    fn centre(&self) -> (usize, usize) {
        (self.dy * (self.ky - 1) / 2, self.dx * (self.kx - 1) / 2)
    }

    /// `y = conv(x)`; `scratch` holds `h * w * ky * kx * c` floats.
    fn run(&self, x: &[f32], h: usize, w: usize, scratch: &mut [f32], y: &mut [f32]) {
        let (c, k, area) = (self.c, self.k, h * w);
        let patch = self.ky * self.kx * c;
        if patch == c {
            return matmul(x, &self.weights, area, c, k, y);
        }
        let nonzero = x[..area * c].iter().filter(|&&v| v != 0.0).count();
        if nonzero * SPARSE_FRACTION <= area * c {
            return self.scatter(x, h, w, &mut y[..area * k]);
        }
        let cols = &mut scratch[..area * patch];
        self.gather(x, h, w, cols);
        matmul(cols, &self.weights, area, patch, k, y);
    }

    /// Each row of `cols` (`ky * kx * c` floats a point) the inputs the point's taps read.
    fn gather(&self, x: &[f32], h: usize, w: usize, cols: &mut [f32]) {
        let (c, patch) = (self.c, self.ky * self.kx * self.c);
        let (oy, ox) = self.centre();
        for i in 0..h {
            for j in 0..w {
                let row = &mut cols[(i * w + j) * patch..][..patch];
                for a in 0..self.ky {
                    for b in 0..self.kx {
                        let dst = &mut row[(a * self.kx + b) * c..][..c];
                        let yy = (i + a * self.dy).checked_sub(oy).filter(|&v| v < h);
                        let xx = (j + b * self.dx).checked_sub(ox).filter(|&v| v < w);
                        match (yy, xx) {
                            (Some(yy), Some(xx)) => {
                                dst.copy_from_slice(&x[(yy * w + xx) * c..][..c])
                            }
                            _ => dst.fill(0.0),
                        }
                    }
                }
            }
        }
    }

    /// `y = conv(x)` from the non-zero inputs alone: each adds its value times a tap's
    /// weights to the output point that tap reads it from.
    fn scatter(&self, x: &[f32], h: usize, w: usize, y: &mut [f32]) {
        y.fill(0.0);
        #[cfg(target_arch = "x86_64")]
        if winograd::simd_available() {
            // SAFETY: the CPU reports AVX2 and FMA, all the function is compiled for.
            unsafe { self.scatter_avx2(x, h, w, y) };
            return;
        }
        self.scatter_any(x, h, w, y);
    }

    /// [`Patches::scatter`] compiled for AVX2, so the row update runs eight lanes wide.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn scatter_avx2(&self, x: &[f32], h: usize, w: usize, y: &mut [f32]) {
        self.scatter_any(x, h, w, y);
    }

    #[inline(always)]
    fn scatter_any(&self, x: &[f32], h: usize, w: usize, y: &mut [f32]) {
        let (c, k) = (self.c, self.k);
        let (oy, ox) = self.centre();
        for qi in 0..h {
            for qj in 0..w {
                for (ci, &v) in x[(qi * w + qj) * c..][..c].iter().enumerate() {
                    if v == 0.0 {
                        continue;
                    }
                    for a in 0..self.ky {
                        // The output row whose tap `a` reads row `qi`.
                        let Some(pi) = (qi + oy).checked_sub(a * self.dy).filter(|&p| p < h) else {
                            continue;
                        };
                        for b in 0..self.kx {
                            let Some(pj) = (qj + ox).checked_sub(b * self.dx).filter(|&p| p < w)
                            else {
                                continue;
                            };
                            let taps = &self.weights[((a * self.kx + b) * c + ci) * k..][..k];
                            let out = &mut y[(pi * w + pj) * k..][..k];
                            for (o, &t) in out.iter_mut().zip(taps) {
                                *o += v * t;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A dense layer over channels with its output scale folded in and an optional bias.
#[derive(Clone, Debug)]
pub struct Dense {
    c: usize,
    k: usize,
    /// `[c][k]`.
    weights: Vec<f32>,
    bias: Option<Vec<f32>>,
}

impl Dense {
    /// `layer` with output `o` scaled by `out_scale[o]` and `bias` added.
    pub fn new(layer: &MatMulLayer, out_scale: Option<&[f32]>, bias: Option<Vec<f32>>) -> Dense {
        let (c, k) = (layer.in_channels, layer.out_channels);
        let mut weights = layer.weights.clone();
        if let Some(s) = out_scale {
            for row in weights.chunks_mut(k.max(1)) {
                row.iter_mut().zip(s).for_each(|(v, s)| *v *= s);
            }
        }
        Dense {
            c,
            k,
            weights,
            bias,
        }
    }

    /// Output channels.
    pub fn out_channels(&self) -> usize {
        self.k
    }

    /// `y = x · W + bias` for one vector.
    pub fn run(&self, x: &[f32], y: &mut [f32]) {
        let y = &mut y[..self.k];
        match &self.bias {
            Some(b) => y.copy_from_slice(b),
            None => y.fill(0.0),
        }
        for (&xi, row) in x[..self.c].iter().zip(self.weights.chunks_exact(self.k)) {
            y.iter_mut().zip(row).for_each(|(v, w)| *v += xi * w);
        }
    }
}

/// A batch norm as `x * scale + bias`, then an activation: the pre-activation of a block.
#[derive(Clone, Debug)]
pub struct NormAct {
    scale: Vec<f32>,
    bias: Vec<f32>,
    act: Activation,
}

impl NormAct {
    /// The folded norm `bn` followed by `act`.
    pub fn new(bn: &BatchNormLayer, act: Activation) -> NormAct {
        let (scale, bias) = bn.merged_scale_bias();
        NormAct { scale, bias, act }
    }

    /// `y = mask(act(x * scale + bias))`.
    pub fn run(&self, x: &[f32], mask: &Mask, y: &mut [f32]) {
        norm_act_rows(x, &self.scale, &self.bias, self.act, &mask.values, y);
    }
}

/// Adds `bias` (one value a channel) to every point of `x` (`[points][bias.len()]`).
pub fn add_channel_bias(x: &mut [f32], bias: &[f32]) {
    for row in x.chunks_exact_mut(bias.len()) {
        row.iter_mut().zip(bias).for_each(|(v, b)| *v += b);
    }
}

/// `x = mask(act(x))` in place.
pub fn activate(x: &mut [f32], c: usize, act: Activation, mask: &Mask) {
    act_rows(x, c, act, &mask.values);
}

/// Which points are on the board, and KataGo's pooling factors derived from their count.
#[derive(Clone, Debug, Default)]
pub struct Mask {
    /// 1 on the board, 0 off it, one value a point.
    pub values: Vec<f32>,
    /// On-board points.
    count: f32,
    /// `(sqrt(count) - 14) / 10`.
    scale: f32,
    /// `(sqrt(count) - 14)^2 / 100 - 0.1`.
    quad: f32,
}

impl Mask {
    /// Takes the mask of one row.
    pub fn set(&mut self, values: &[f32]) {
        self.values.clear();
        self.values.extend_from_slice(values);
        self.count = values.iter().sum();
        let shifted = self.count.sqrt() - 14.0;
        self.scale = shifted * 0.1;
        self.quad = shifted * shifted * 0.01 - 0.1;
    }
}

/// The third feature of global pooling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// The on-board maximum, floored at -1 (trunk blocks and the policy head).
    Max,
    /// The mean times the quadratic size factor (the value head).
    Quad,
}

/// KataGo's global pooling of masked `x` (`[points][c]`) into `out` (`[3c]`): the mean, the
/// mean times the size factor, and the [`Pool`] feature.
pub fn global_pool(x: &[f32], c: usize, mask: &Mask, kind: Pool, out: &mut [f32]) {
    let (mean, rest) = out[..3 * c].split_at_mut(c);
    let (scaled, third) = rest.split_at_mut(c);
    mean.fill(0.0);
    third.fill(f32::NEG_INFINITY);
    for (row, &m) in x.chunks_exact(c).zip(&mask.values) {
        mean.iter_mut().zip(row).for_each(|(s, v)| *s += v);
        if kind == Pool::Max {
            // Off-board points are 0 after masking; shifted to -1 they stay out of the max.
            third
                .iter_mut()
                .zip(row)
                .for_each(|(s, v)| *s = s.max(v + (m - 1.0)));
        }
    }
    for i in 0..c {
        mean[i] /= mask.count;
        scaled[i] = mean[i] * mask.scale;
        third[i] = match kind {
            Pool::Max => third[i].max(-1.0),
            Pool::Quad => mean[i] * mask.quad,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y[p][o]` of a "same" convolution straight from the definition, in f64.
    fn direct(p: &Patches, x: &[f32], h: usize, w: usize) -> Vec<f64> {
        let (c, k) = (p.c, p.k);
        let (oy, ox) = p.centre();
        let mut y = vec![0.0f64; h * w * k];
        for i in 0..h {
            for j in 0..w {
                for a in 0..p.ky {
                    for b in 0..p.kx {
                        let (Some(yy), Some(xx)) = (
                            (i + a * p.dy).checked_sub(oy).filter(|&v| v < h),
                            (j + b * p.dx).checked_sub(ox).filter(|&v| v < w),
                        ) else {
                            continue;
                        };
                        for ci in 0..c {
                            let v = f64::from(x[(yy * w + xx) * c + ci]);
                            for o in 0..k {
                                let t = p.weights[((a * p.kx + b) * c + ci) * k + o];
                                y[(i * w + j) * k + o] += v * f64::from(t);
                            }
                        }
                    }
                }
            }
        }
        y
    }

    fn layer(
        ky: usize,
        kx: usize,
        dil: usize,
        c: usize,
        k: usize,
        rng: &mut fastrand::Rng,
    ) -> ConvLayer {
        ConvLayer {
            name: "test".into(),
            kernel_y: ky,
            kernel_x: kx,
            in_channels: c,
            out_channels: k,
            dilation_y: dil,
            dilation_x: dil,
            weights: (0..ky * kx * c * k).map(|_| rng.f32() - 0.5).collect(),
        }
    }

    #[test]
    fn spreading_sparse_inputs_and_gathering_patches_both_equal_a_direct_convolution() {
        let mut rng = fastrand::Rng::with_seed(7);
        // The trunk's 5x5 input convolution's shape, a dilated 3x3, and a non-square kernel.
        for (ky, kx, dil, c, k, h, w) in [
            (5, 5, 1, 22, 16, 9, 9),
            (5, 5, 1, 6, 8, 7, 5),
            (3, 3, 2, 4, 8, 6, 7),
            (1, 3, 1, 3, 5, 4, 4),
        ] {
            let l = layer(ky, kx, dil, c, k, &mut rng);
            let conv = Conv::new(&l, None, None, Gemm::F32);
            let ConvKind::Patches(p) = &conv.kind else {
                panic!("{ky}x{kx} is not a patch convolution")
            };
            for density in [0.1f32, 0.9] {
                let x: Vec<f32> = (0..h * w * c)
                    .map(|_| {
                        if rng.f32() < density {
                            rng.f32() * 2.0
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let want = direct(p, &x, h, w);
                let mut sparse = vec![f32::NAN; h * w * k];
                p.scatter(&x, h, w, &mut sparse);
                let mut dense = vec![f32::NAN; h * w * k];
                let mut cols = vec![0.0; h * w * ky * kx * c];
                p.gather(&x, h, w, &mut cols);
                matmul(&cols, &p.weights, h * w, ky * kx * c, k, &mut dense);
                let mut through_run = vec![f32::NAN; h * w * k];
                conv.run(&x, h, w, &mut Scratch::default(), &mut through_run);
                for (name, got) in [
                    ("sparse", &sparse),
                    ("dense", &dense),
                    ("run", &through_run),
                ] {
                    for (i, (&g, &e)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (f64::from(g) - e).abs() < 1e-4,
                            "{name} {ky}x{kx} dilation {dil} density {density}: [{i}] {g} vs {e}"
                        );
                    }
                }
            }
        }
    }
}
