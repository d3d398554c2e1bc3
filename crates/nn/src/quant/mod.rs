//! Reduced precision on the CPU: a built fp32 graph becomes a statically quantized int8
//! graph in ONNX's QDQ form, which ONNX Runtime fuses into integer convolutions (VNNI on
//! x86, dot-product instructions on ARM).
//!
//! Two steps: [`calibrate`] plays short games with the fp32 network, sampling its own
//! policy, and records the range of every tensor that enters or leaves a quantized
//! convolution; [`qdq`] rewrites those convolutions with per-channel int8 weights, int32
//! biases and uint8 activations. The trunk's tip, the heads, the input layer and the
//! dense layers on pooled features stay in fp32: they are cheap and carry the outputs'
//! precision.

pub mod calibrate;
pub mod qdq;

use tract_onnx::pb::ModelProto;

pub use calibrate::{calibrate, CalibrationOptions, Ranges};
pub use qdq::{quantizable_convs, quantize};

/// Why a graph could not be quantized.
#[derive(Debug, thiserror::Error)]
pub enum QuantizeError {
    /// The graph is not one this module knows how to rewrite (or to calibrate).
    #[error("cannot quantize this graph: {0}")]
    Unsupported(String),
    /// A tensor to quantize has no calibrated range.
    #[error("no calibrated range for tensor {0}")]
    MissingRange(String),
    /// tract failed while running the calibration graph.
    #[error("calibration: {0}")]
    Calibration(String),
}

/// Numeric precision of the network.
///
/// On KataGo's golden positions the native backend's int16 GEMMs keep g170-b6c96's best
/// move on 42 of 42 and move the value by up to 0.0021, inside the 99% and 0.02 a default
/// needs, and int16 scored 50.75% of 200 equal-visit games against fp32, so [`Auto`] picks
/// it where the CPU runs it. The int8 graph keeps the best move on 36 of 42 and moves the
/// value by up to 0.057 (on positions of real 19x19 games, 89.6% and 0.23), so int8 is
/// asked for by name.
///
/// [`Auto`]: Precision::Auto
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// int16 on the native backend where the CPU has AVX-512 VNNI, fp32 everywhere else.
    #[default]
    Auto,
    /// Single precision everywhere.
    Fp32,
    /// Statically quantized int8 convolutions in the trunk (ONNX Runtime).
    Int8,
    /// The trunk's Winograd GEMMs in 16-bit integers (the native backend, AVX-512 VNNI).
    Int16,
}

impl Precision {
    /// Its name on the command line and in the configuration.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::Fp32 => "fp32",
            Precision::Int8 => "int8",
            Precision::Int16 => "int16",
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

impl std::str::FromStr for Precision {
    type Err = String;

    /// `auto`, `fp32`, `int8` or `int16` (any case); the error names the accepted values.
    fn from_str(s: &str) -> Result<Precision, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(Precision::Auto),
            "fp32" | "float" | "float32" => Ok(Precision::Fp32),
            "int8" => Ok(Precision::Int8),
            "int16" => Ok(Precision::Int16),
            _ => Err(format!("unknown precision {s:?} (auto, fp32, int8, int16)")),
        }
    }
}

/// Whether this CPU has integer dot-product instructions that make int8 convolutions
/// faster than fp32 ones without saturating (AVX-512 VNNI or AVX-VNNI on x86, the
/// dot-product extension on ARM).
pub fn cpu_has_fast_int8() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512vnni")
            || std::arch::is_x86_feature_detected!("avxvnni")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("dotprod")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// Calibrates `fp32` on positions of its own play and returns the int8 graph.
pub fn quantize_int8(
    fp32: &ModelProto,
    opts: &CalibrationOptions,
) -> Result<ModelProto, QuantizeError> {
    let convs = quantizable_convs(fp32)?;
    let ranges = calibrate(fp32, &convs, opts)?;
    quantize(fp32, &convs, &ranges)
}
