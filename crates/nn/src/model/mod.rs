//! Reading KataGo model files (`.bin.gz`, `.bin`, `.txt.gz`, `.txt`) into a [`ModelDesc`].
//!
//! The reader mirrors KataGo v1.17.2's `desc.cpp`: model versions 3 to 17, every block kind
//! (ordinary, global pooling, nested bottleneck, transformer attention and FFN), RMS-norm trunk
//! tips and the SGF-metadata encoder. It treats its input as hostile: every count is bounded and
//! checked against the bytes that remain before anything is allocated, nesting is limited, weights
//! must be finite, and decompression stops at [`ReadLimits::max_model_bytes`].

mod blocks;
mod cost;
mod desc;
mod error;
mod layers;
mod parse;
mod tokens;

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

pub use blocks::{
    Block, BlockKind, GlobalPoolingBlock, NestedBottleneckBlock, ResidualBlock, Rope,
    TransformerAttentionBlock, TransformerFfnBlock,
};
pub use desc::{ModelDesc, PassMlp, PolicyHead, SgfMetadataEncoder, Trunk, TrunkTip, ValueHead};
pub use error::ModelError;
pub use layers::{
    Activation, ActivationLayer, BatchNormLayer, ConvLayer, MatBiasLayer, MatMulLayer,
    RmsNormLayer, TransformerRmsNorm,
};
pub use parse::{
    MAX_BLOCKS, MAX_CHANNELS, MAX_DILATION, MAX_KERNEL, MAX_NAME_LEN, MAX_NESTING_DEPTH,
};

/// Size limits applied while reading a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Largest file, and largest decompressed model, accepted (bytes).
    pub max_model_bytes: u64,
}

impl Default for ReadLimits {
    /// 1 GiB: several times KataGo's largest published nets.
    fn default() -> Self {
        ReadLimits {
            max_model_bytes: 1 << 30,
        }
    }
}

/// The gzip magic number.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads and parses a model file (gzip detected by its magic number, not its name).
pub fn load_model(path: &Path) -> Result<ModelDesc, ModelError> {
    load_model_with_limits(path, &ReadLimits::default())
}

/// [`load_model`] with explicit size limits.
pub fn load_model_with_limits(path: &Path, limits: &ReadLimits) -> Result<ModelDesc, ModelError> {
    let io_err = |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if len > limits.max_model_bytes {
        return Err(ModelError::TooLarge {
            limit: limits.max_model_bytes,
        });
    }
    let mut bytes = Vec::new();
    // `take` guards against a file that grows while being read.
    file.take(limits.max_model_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_err)?;
    if bytes.len() as u64 > limits.max_model_bytes {
        return Err(ModelError::TooLarge {
            limit: limits.max_model_bytes,
        });
    }
    log::debug!(
        "read {} bytes of model file {}",
        bytes.len(),
        path.display()
    );
    parse_model_with_limits(&bytes, limits)
}

/// Parses a model from the bytes of a model file (gzip-compressed or not; binary or text floats).
///
/// The SHA-256 stored in the result is that of `bytes` as given, which is what KataGo hashes
/// (the compressed bytes for a `.gz` file).
pub fn parse_model(bytes: &[u8]) -> Result<ModelDesc, ModelError> {
    parse_model_with_limits(bytes, &ReadLimits::default())
}

/// [`parse_model`] with explicit size limits.
pub fn parse_model_with_limits(bytes: &[u8], limits: &ReadLimits) -> Result<ModelDesc, ModelError> {
    if bytes.len() as u64 > limits.max_model_bytes {
        return Err(ModelError::TooLarge {
            limit: limits.max_model_bytes,
        });
    }
    let sha256 = hex_sha256(bytes);
    let desc = if bytes.starts_with(&GZIP_MAGIC) {
        let data = gunzip(bytes, limits.max_model_bytes)?;
        parse::parse_desc(&data, sha256)?
    } else {
        parse::parse_desc(bytes, sha256)?
    };
    log::info!(
        "loaded model {} (version {}, {})",
        desc.name,
        desc.model_version,
        desc.short_info()
    );
    Ok(desc)
}

/// Lower-case hex SHA-256 of `bytes`.
fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Decompresses one gzip member, refusing output beyond `limit` bytes.
fn gunzip(bytes: &[u8], limit: u64) -> Result<Vec<u8>, ModelError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(ModelError::Gzip)?;
    if out.len() as u64 > limit {
        return Err(ModelError::TooLarge { limit });
    }
    Ok(out)
}
