//! Network inputs: KataGo's version-7 features ([`v7`]) with the ladder reading they need
//! ([`ladder`]), the SGF-metadata input of human-SL nets ([`meta`]), Pgx's 17-plane
//! observation ([`pgx`]), and the 8 board symmetries ([`symmetry`]) applied to inputs and
//! undone on outputs.

pub mod ladder;
pub mod pgx;
pub mod v7;

// The metadata input and the symmetries belong to the evaluation contract
// (`tengen-eval`); here under their old names too.
pub(crate) use tengen_eval::point_index;
pub use tengen_eval::profile as meta;
pub use tengen_eval::symmetry;

pub use ladder::LadderSearch;
pub use meta::{HumanProfile, ProfileError, NUM_META};
pub use pgx::{pgx_observation, Layout, PGX_PLANES};
pub use symmetry::{Symmetry, SymmetryError};
pub use v7::{fill_row_v7, InputParams, V7Encoder, NUM_GLOBAL, NUM_SPATIAL};

use tengen_rules::BoardSize;

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
