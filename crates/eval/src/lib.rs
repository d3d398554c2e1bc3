//! The contract between Tengen's search and whatever judges its positions: the
//! [`Evaluator`] trait, what a request asks ([`EvalRequest`]: a [`Symmetry`], policy and
//! input options, ownership) and what comes back ([`NnOutput`]). The network crate and
//! the classical engine implement it; the search depends on this crate alone, so neither
//! the search nor anything above it compiles a network backend.

pub mod evaluator;
pub mod inputs;
pub mod output;
pub mod profile;
pub mod symmetry;

pub use evaluator::{policy_index, EvalError, EvalRequest, Evaluator, UniformEvaluator};
pub use inputs::InputParams;
pub use output::{NnOutput, PolicyOptions};
pub use profile::{HumanProfile, ProfileError, NUM_META};
pub use symmetry::{Symmetry, SymmetryError};

use tengen_rules::{BoardSize, Loc};

/// Row-major index of a point of a board of size `size`, or `None` if `loc` is not one of
/// its points (a `Loc` is a padded index `(x+1) + (y+1)*(w+1)`, decoded here without
/// trusting it).
pub fn point_index(size: BoardSize, loc: Loc) -> Option<usize> {
    let stride = size.width() + 1;
    let (col, row) = (loc.index() % stride, loc.index() / stride);
    if col == 0 || row == 0 || col > size.width() || row > size.height() {
        return None;
    }
    Some((row - 1) * size.width() + (col - 1))
}
