//! Typed errors of the model reader.

use std::path::PathBuf;

/// Everything that can go wrong while reading a KataGo model file.
///
/// `context` fields name the layer being read as a `/`-separated path of layer names
/// (for example `trunk/rconv3/conv1`), `offset` is a byte offset into the decompressed
/// model text.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The file could not be read.
    #[error("cannot read model file {path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The gzip stream is corrupt.
    #[error("corrupt gzip stream: {0}")]
    Gzip(#[source] std::io::Error),
    /// The (decompressed) model is larger than the reader's limit.
    #[error("model is larger than the {limit}-byte limit")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The input ended in the middle of a field.
    #[error("{context}: unexpected end of model data at byte {offset} while reading {what}")]
    UnexpectedEof {
        /// Layer path.
        context: String,
        /// What was being read.
        what: &'static str,
        /// Byte offset.
        offset: usize,
    },
    /// A token could not be parsed as what the format requires there.
    #[error("{context}: expected {expected} at byte {offset}, found {found:?}")]
    Syntax {
        /// Layer path.
        context: String,
        /// What the format requires.
        expected: &'static str,
        /// What was found (shortened).
        found: String,
        /// Byte offset.
        offset: usize,
    },
    /// A count or size is outside what the format allows or the reader's sanity limits.
    #[error("{context}: {field} = {value} at byte {offset} is out of range ({reason})")]
    OutOfRange {
        /// Layer path.
        context: String,
        /// Field name.
        field: &'static str,
        /// The value found.
        value: String,
        /// The allowed range or the reason it is rejected.
        reason: String,
        /// Byte offset.
        offset: usize,
    },
    /// A float block claims more values than the remaining data can hold.
    #[error(
        "{context}: float block of {count} values at byte {offset} needs more data than the {remaining} bytes left"
    )]
    TruncatedWeights {
        /// Layer path.
        context: String,
        /// Number of floats claimed.
        count: u64,
        /// Bytes left in the input.
        remaining: usize,
        /// Byte offset.
        offset: usize,
    },
    /// A weight or parameter is NaN or infinite.
    #[error("{context}: NaN or infinite weight at byte {offset}")]
    NonFiniteWeight {
        /// Layer path.
        context: String,
        /// Byte offset of the offending value.
        offset: usize,
    },
    /// Two layers disagree on a channel count (or a count disagrees with the model version).
    #[error("{context}: {detail}")]
    ShapeMismatch {
        /// Layer path.
        context: String,
        /// What disagrees with what.
        detail: String,
    },
    /// The model version is not one this reader implements.
    #[error("unsupported model version {version} (supported: {oldest} to {latest})")]
    UnsupportedModelVersion {
        /// The version in the file.
        version: i64,
        /// Oldest supported version.
        oldest: u32,
        /// Newest supported version.
        latest: u32,
    },
    /// A residual block kind this reader does not know.
    #[error("{context}: unsupported block kind {kind:?} at byte {offset}")]
    UnsupportedBlockKind {
        /// Layer path.
        context: String,
        /// The block kind token (shortened).
        kind: String,
        /// Byte offset.
        offset: usize,
    },
    /// An activation name this reader does not know.
    #[error("{context}: unsupported activation {name:?} at byte {offset}")]
    UnsupportedActivation {
        /// Layer path.
        context: String,
        /// The activation token (shortened).
        name: String,
        /// Byte offset.
        offset: usize,
    },
    /// A format option (reserved field, norm kind, encoder version...) this reader does not implement.
    #[error("{context}: unsupported {what} at byte {offset}: {detail}")]
    Unsupported {
        /// Layer path.
        context: String,
        /// Which option.
        what: &'static str,
        /// The value and why it is rejected.
        detail: String,
        /// Byte offset.
        offset: usize,
    },
    /// Nested-bottleneck blocks are nested deeper than the reader allows.
    #[error("{context}: blocks nested deeper than {limit} levels")]
    TooDeep {
        /// Layer path.
        context: String,
        /// The nesting limit.
        limit: usize,
    },
    /// The model name breaks KataGo's naming rule (1 to 96 characters of `[A-Za-z0-9_-]`).
    #[error("invalid model name {name:?}: must be 1 to 96 characters of [A-Za-z0-9_-]")]
    InvalidName {
        /// The name (shortened).
        name: String,
    },
}
