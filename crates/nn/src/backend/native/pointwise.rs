//! 1x1 convolutions in 16-bit integers (a nested-bottleneck block opens and closes with
//! one: a fifth of b18c384nbt's multiply-adds), by the int16 GEMM: each point's input row
//! on its own grid, the weights on one grid per output channel.

use super::int16::{QuantWeights, INT_CB};
use super::winograd::{int16_available, KB};

/// A 1x1 convolution packed for the int16 GEMM.
#[derive(Clone, Debug)]
pub struct Pointwise {
    c: usize,
    k: usize,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    q: QuantWeights,
}

impl Pointwise {
    /// `weights` (`[k][c]`) quantized, where this CPU runs the int16 GEMM and the channel
    /// counts fill its registers; `None` otherwise.
    pub fn new(weights: &[f32], c: usize, k: usize) -> Option<Pointwise> {
        let fits = c > 0 && c.is_multiple_of(INT_CB) && k > 0 && k.is_multiple_of(KB);
        if !(fits && int16_available()) || weights.len() != k * c {
            return None;
        }
        // `[k / 16][c][16]`, the layout the quantizer packs.
        let mut u = vec![0.0f32; k * c];
        for o in 0..k {
            for i in 0..c {
                u[((o / KB) * c + i) * KB + o % KB] = weights[o * c + i];
            }
        }
        Some(Pointwise {
            c,
            k,
            q: QuantWeights::new(&u, 1, c, k),
        })
    }

    /// Scratch floats [`Pointwise::run`] needs for `points` points (each row's step).
    pub fn scratch_len(&self, points: usize) -> usize {
        points
    }

    /// Scratch integers [`Pointwise::run`] needs for `points` points (the quantized rows).
    pub fn int_scratch_len(&self, points: usize) -> usize {
        points * self.c
    }

    /// `y[p][k] = x[p][:] · w[k][:]` for `points` points.
    pub fn run(
        &self,
        x: &[f32],
        points: usize,
        steps: &mut [f32],
        ints: &mut [i16],
        y: &mut [f32],
    ) {
        assert!(x.len() >= points * self.c && y.len() >= points * self.k);
        assert!(steps.len() >= points && ints.len() >= points * self.c);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a `Pointwise` exists only where `int16_available` said the CPU has AVX-512
        // F, BW and VNNI, with `c` a multiple of 16 and `k` of 16; the slices were checked
        // to hold every row.
        unsafe {
            use super::int16::avx512;
            avx512::quantize(x, points, self.c, self.q.input_max, ints, steps);
            avx512::gemm(ints, steps, &self.q, 1, points, self.c, self.k, y);
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("no int16 GEMM on this CPU");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_a_float_product_to_the_grids_precision() {
        let (points, c, k) = (37, 48, 32);
        let mut rng = fastrand::Rng::with_seed(7);
        let x: Vec<f32> = (0..points * c).map(|_| rng.f32() * 4.0 - 2.0).collect();
        let w: Vec<f32> = (0..k * c).map(|_| rng.f32() - 0.5).collect();
        let Some(conv) = Pointwise::new(&w, c, k) else {
            assert!(!int16_available(), "a CPU with VNNI runs 48 -> 32 channels");
            println!("skipped: this CPU has no AVX-512 VNNI");
            return;
        };
        let mut steps = vec![0.0; conv.scratch_len(points)];
        let mut ints = vec![0; conv.int_scratch_len(points)];
        let mut y = vec![0.0; points * k];
        conv.run(&x, points, &mut steps, &mut ints, &mut y);
        let mut worst = 0.0f64;
        for p in 0..points {
            for o in 0..k {
                let want: f64 = (0..c)
                    .map(|i| f64::from(x[p * c + i]) * f64::from(w[o * c + i]))
                    .sum();
                worst = worst.max((f64::from(y[p * k + o]) - want).abs());
            }
        }
        // Grids of about 12 bits on both operands over 48 products: errors of a few
        // thousandths, where a misplaced channel pair would be off by the whole product.
        assert!(worst < 5e-3, "worst error {worst}");
        assert!(
            Pointwise::new(&w[..k * 24], 24, k).is_none(),
            "24 channels do not fill registers"
        );
    }
}
