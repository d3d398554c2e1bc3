//! Network inputs: KataGo's version-7 features ([`v7`]) with the ladder reading they need
//! ([`ladder`]), the SGF-metadata input of human-SL nets ([`meta`]), Pgx's 17-plane
//! observation ([`pgx`]), and the 8 board symmetries ([`symmetry`]) applied to inputs and
//! undone on outputs.

pub mod ladder;
pub mod meta;
pub mod pgx;
pub mod symmetry;
pub mod v7;

pub use ladder::LadderSearch;
pub use meta::{HumanProfile, ProfileError, NUM_META};
pub use pgx::{pgx_observation, Layout, PGX_PLANES};
pub use symmetry::{Symmetry, SymmetryError};
pub use v7::{fill_row_v7, InputParams, V7Encoder, NUM_GLOBAL, NUM_SPATIAL};

use tengen_rules::{BoardSize, Loc};

/// Why inputs could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// The board does not fit the requested input size.
    #[error("a {board} board does not fit a {x_len}x{y_len} input")]
    BoardTooLarge {
        /// The board's size.
        board: BoardSize,
        /// Input width.
        x_len: usize,
        /// Input height.
        y_len: usize,
    },
    /// A buffer does not have the length the input size needs.
    #[error("{what} buffer has {got} values, expected {expected}")]
    BufferLength {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: usize,
        /// Length given.
        got: usize,
    },
}

/// Row-major index of a point of a board of size `size`, or `None` if `loc` is not one of
/// its points (a `Loc` is a padded index `(x+1) + (y+1)*(w+1)`, decoded here without
/// trusting it).
pub(crate) fn point_index(size: BoardSize, loc: Loc) -> Option<usize> {
    let stride = size.width() + 1;
    let (col, row) = (loc.index() % stride, loc.index() / stride);
    if col == 0 || row == 0 || col > size.width() || row > size.height() {
        return None;
    }
    Some((row - 1) * size.width() + (col - 1))
}
