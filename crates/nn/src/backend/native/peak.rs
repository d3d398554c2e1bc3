//! The core's peak multiply-add rate, measured: twelve independent chains of the widest
//! fused multiply-add this CPU has (`vfmadd` on 16 or 8 floats; `vpdpwssd` on 32 pairs of
//! 16-bit integers), long enough that the loop's own cost vanishes. A backend's rate of
//! direct multiply-adds (`ModelDesc::multiply_adds`) against it says how much of the core
//! the backend uses.

#[cfg(target_arch = "x86_64")]
use std::time::Instant;

use super::winograd::Gemm;
#[cfg(target_arch = "x86_64")]
use super::winograd::{int16_available, simd_available};

/// Iterations of the twelve chains per timing.
#[cfg(target_arch = "x86_64")]
const ROUNDS: u64 = 4_000_000;

/// Multiply-adds a second one core can do in `gemm`'s arithmetic (int16 where the CPU has
/// AVX-512 VNNI, else f32), or `None` on a CPU without AVX2 and FMA.
pub fn peak_multiply_adds(gemm: Gemm) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if gemm == Gemm::Int16 && int16_available() {
            // SAFETY: AVX-512 F and VNNI were checked just above.
            return Some(best_of(|| unsafe { x86::vnni(ROUNDS) }) * 12.0 * 32.0);
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512 F was checked just above.
            return Some(best_of(|| unsafe { x86::fma512(ROUNDS) }) * 12.0 * 16.0);
        }
        if simd_available() {
            // SAFETY: AVX2 and FMA were checked just above.
            return Some(best_of(|| unsafe { x86::fma256(ROUNDS) }) * 12.0 * 8.0);
        }
    }
    let _ = gemm;
    None
}

/// The best of three timings of `run`, as rounds a second.
#[cfg(target_arch = "x86_64")]
fn best_of(run: impl Fn() -> f32) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(run());
            ROUNDS as f64 / start.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::asm;
    use std::arch::x86_64::*;

    // Each kernel issues its instructions through `asm!` without `pure`, so the compiler
    // can neither fold nor drop the chains it times.

    /// `rounds` x 12 `vpdpwssd` on zmm registers; returns something of the sums.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and VNNI.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub unsafe fn vnni(rounds: u64) -> f32 {
        let ones = _mm512_set1_epi16(1);
        let mut acc = [_mm512_setzero_si512(); 12];
        for _ in 0..std::hint::black_box(rounds) {
            for a in &mut acc {
                // SAFETY: register operands only; the function requires VNNI.
                unsafe {
                    asm!(
                        "vpdpwssd {acc}, {a}, {b}",
                        acc = inout(zmm_reg) *a,
                        a = in(zmm_reg) ones,
                        b = in(zmm_reg) ones,
                        options(nomem, nostack, preserves_flags),
                    );
                }
            }
        }
        let total = acc
            .iter()
            .fold(_mm512_setzero_si512(), |s, a| _mm512_add_epi32(s, *a));
        _mm512_reduce_add_epi32(total) as f32
    }

    /// `rounds` x 12 `vfmadd231ps` on 16 floats; returns something of the sums.
    ///
    /// # Safety
    /// The CPU must have AVX-512 F.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(rounds: u64) -> f32 {
        let (x, y) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_setzero_ps(); 12];
        for _ in 0..std::hint::black_box(rounds) {
            for a in &mut acc {
                // SAFETY: register operands only; the function requires AVX-512 F.
                unsafe {
                    asm!(
                        "vfmadd231ps {acc}, {a}, {b}",
                        acc = inout(zmm_reg) *a,
                        a = in(zmm_reg) x,
                        b = in(zmm_reg) y,
                        options(nomem, nostack, preserves_flags),
                    );
                }
            }
        }
        let total = acc
            .iter()
            .fold(_mm512_setzero_ps(), |s, a| _mm512_add_ps(s, *a));
        _mm512_reduce_add_ps(total)
    }

    /// `rounds` x 12 `vfmadd231ps` on 8 floats; returns something of the sums.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(rounds: u64) -> f32 {
        let (x, y) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_setzero_ps(); 12];
        for _ in 0..std::hint::black_box(rounds) {
            for a in &mut acc {
                // SAFETY: register operands only; the function requires AVX2 and FMA.
                unsafe {
                    asm!(
                        "vfmadd231ps {acc}, {a}, {b}",
                        acc = inout(ymm_reg) *a,
                        a = in(ymm_reg) x,
                        b = in(ymm_reg) y,
                        options(nomem, nostack, preserves_flags),
                    );
                }
            }
        }
        let mut lanes = [0.0f32; 8];
        let total = acc
            .iter()
            .fold(_mm256_setzero_ps(), |s, a| _mm256_add_ps(s, *a));
        // SAFETY: `lanes` holds eight floats.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), total) };
        lanes.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_is_a_rate_a_core_can_have() {
        for gemm in [Gemm::F32, Gemm::Int16] {
            let Some(peak) = peak_multiply_adds(gemm) else {
                #[cfg(target_arch = "x86_64")]
                assert!(!simd_available(), "a CPU with AVX2 has a peak");
                continue;
            };
            // A billion to ten trillion a second: a folded or dropped loop would time
            // nothing and claim far more.
            assert!((1e9..1e13).contains(&peak), "{gemm:?}: {peak:e}");
        }
    }
}
