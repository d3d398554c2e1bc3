//! The layers of a convolutional KataGo network on HWC activations (`[point][channel]`),
//! with every batch norm that follows a convolution or dense layer folded into it.

use crate::model::{Activation, BatchNormLayer, ConvLayer, MatMulLayer};

use super::winograd::{self, Winograd};

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
    /// Any other shape, as a GEMM over gathered patches: weights `[ky][kx][c][k]`.
    Patches {
        ky: usize,
        kx: usize,
        dy: usize,
        dx: usize,
        weights: Vec<f32>,
    },
}

impl Conv {
    /// `layer` with output channel `o` scaled by `out_scale[o]` and `bias` added.
    pub fn new(layer: &ConvLayer, out_scale: Option<&[f32]>, bias: Option<Vec<f32>>) -> Conv {
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
        let kind = if square3 && plain && winograd::fits(c, k) {
            ConvKind::Winograd(Winograd::new(&w, c, k))
        } else {
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
            ConvKind::Patches {
                ky,
                kx,
                dy: layer.dilation_y,
                dx: layer.dilation_x,
                weights,
            }
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
            ConvKind::Patches { ky: 1, kx: 1, .. } => 0,
            ConvKind::Patches { ky, kx, .. } => h * w * ky * kx * self.c,
        }
    }

    /// `y = conv(x) + bias` on an `h` x `w` board (`x` `[h*w][c]`, `y` `[h*w][k]`).
    pub fn run(&self, x: &[f32], h: usize, w: usize, scratch: &mut Vec<f32>, y: &mut [f32]) {
        let need = self.scratch_len(h, w);
        if scratch.len() < need {
            scratch.resize(need, 0.0);
        }
        let (c, k, area) = (self.c, self.k, h * w);
        match &self.kind {
            ConvKind::Winograd(wg) => wg.run(x, h, w, scratch, y),
            ConvKind::Patches {
                ky: 1,
                kx: 1,
                weights,
                ..
            } => matmul(x, weights, area, c, k, y),
            ConvKind::Patches {
                ky,
                kx,
                dy,
                dx,
                weights,
            } => {
                let (ky, kx) = (*ky, *kx);
                let patch = ky * kx * c;
                let cols = &mut scratch[..area * patch];
                let (oy, ox) = (dy * (ky - 1) / 2, dx * (kx - 1) / 2);
                for i in 0..h {
                    for j in 0..w {
                        let row = &mut cols[(i * w + j) * patch..][..patch];
                        for a in 0..ky {
                            for b in 0..kx {
                                let dst = &mut row[(a * kx + b) * c..][..c];
                                let yy = (i + a * dy).checked_sub(oy).filter(|&v| v < h);
                                let xx = (j + b * dx).checked_sub(ox).filter(|&v| v < w);
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
                matmul(cols, weights, area, patch, k, y);
            }
        }
        if let Some(b) = &self.bias {
            add_channel_bias(&mut y[..area * k], b);
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
        let c = self.scale.len();
        for ((xr, yr), &m) in x
            .chunks_exact(c)
            .zip(y.chunks_exact_mut(c))
            .zip(&mask.values)
        {
            for (((o, &v), s), b) in yr.iter_mut().zip(xr).zip(&self.scale).zip(&self.bias) {
                *o = self.act.apply(v * s + b) * m;
            }
        }
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
    for (row, &m) in x.chunks_exact_mut(c).zip(&mask.values) {
        row.iter_mut().for_each(|v| *v = act.apply(*v) * m);
    }
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
