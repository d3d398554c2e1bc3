//! SGF FF\[4\] game records.
//!
//! Two layers:
//! - Syntax: [`parse`] reads a whole collection into [`GameTree`]s of nodes whose
//!   properties keep their order and their unescaped values; [`write()`] writes them back.
//!   Every node and variation is kept; the main line is the first child at every node.
//! - Go: [`load`] replays a game tree's main line as a [`Game`] ([`SgfGame`]), and
//!   [`save`] writes a [`Game`] as a game record that [`load`] reads back unchanged.
//!
//! Error offsets are byte offsets into the text given to [`parse`] or [`load`]. Nothing
//! here recurses over the tree (it is stored flat), so arbitrarily deep variations or
//! long games cannot overflow the stack.
//!
//! How [`load`] reads a record:
//! - `GM` must be absent or 1; `SZ` is `19` or `columns:rows` (default 19x19).
//! - `RU` goes through [`rules_from_name`]; when it is absent, or not understood (a
//!   [`SgfWarning::UnknownRules`]), the rules are KataGo's default, Tromp-Taylor.
//!   `KM`, when present and valid, replaces the rules' komi.
//! - The root's `AB`/`AW`/`AE` (point lists may be compressed, `aa:cc`) form the
//!   initial position. The first player is `PL`, else the colour of the first move,
//!   else White when the setup is Black stones only and `HA` is at least 2, else Black.
//! - `B`/`W` along the main line are played with [`Game::play_tolerant`], since records
//!   come from many rule sets. Setup in a later main-line node restarts the game from
//!   the position reached with those stones added: the turns before it are dropped
//!   (a [`SgfWarning::SetupRestart`]). `PL` outside setup nodes is ignored.
//! - `RE` is kept as text; a resignation (`B+R`, `W+Resign`) is also recorded in the
//!   game when the moves did not end it. Scores are recomputed by the replay.

mod record;
#[cfg(test)]
mod tests;
mod text;
mod tree;

use std::fmt;

use crate::board::{IllegalMove, SetupError};
use crate::geometry::CoordError;
use crate::player::Player;

pub use record::{load, rules_from_name, save, NodeComment, SgfGame};
pub use text::{parse, write};
pub use tree::{GameTree, MainLine, Node, NodeId, Property};

// ---------------------------------------------------------------------------
// Errors

/// A malformed SGF text, or a Go record that cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct SgfError {
    /// Byte offset into the input where the problem was found (for Go errors, the failing node's `;`).
    pub offset: usize,
    /// What went wrong.
    pub kind: SgfErrorKind,
}

/// The kinds of [`SgfError`]; node numbers count along the main line, the root being 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfErrorKind {
    /// The input holds no game tree at all.
    #[error("no game tree in the input")]
    NoGameTree,
    /// Something other than `(` where a game tree should start.
    #[error("expected `(` to start a game tree, found {0:?}")]
    ExpectedGameTree(char),
    /// A game tree that does not start with a node.
    #[error("expected `;` to start a node, found {0:?}")]
    ExpectedNode(char),
    /// A game tree (opened at the offset) that is never closed.
    #[error("game tree opened here is never closed with `)`")]
    UnclosedGameTree,
    /// A property value (opened at the offset) that is never closed.
    #[error("unclosed property value")]
    UnclosedValue,
    /// A property value with no identifier before it.
    #[error("property value without an identifier")]
    MissingIdentifier,
    /// An identifier with no uppercase letter, hence empty once lowercase letters are dropped.
    #[error("empty property identifier {0:?}")]
    EmptyIdentifier(String),
    /// A property identifier not followed by a value.
    #[error("property {0} has no value (expected `[`)")]
    ExpectedValue(String),
    /// A character that is not part of the SGF syntax where it stands.
    #[error("unexpected {0:?} between nodes")]
    UnexpectedChar(char),
    /// A node after a sequence's variations.
    #[error("node after a variation (a sequence's nodes must come before its variations)")]
    NodeAfterVariation,
    /// The record is not a game of Go.
    #[error("GM[{0}] is not Go (GM[1])")]
    NotGo(String),
    /// `SZ` is not a supported board size.
    #[error("SZ[{0}] is not a board size of 2 to 25 per side")]
    BadSize(String),
    /// A point that cannot be read or is off the board.
    #[error("node {node}: {property}[{value}]: {reason}")]
    BadPoint {
        /// Main-line node number.
        node: usize,
        /// The property identifier.
        property: String,
        /// The value as written.
        value: String,
        /// Why the point was refused.
        reason: CoordError,
    },
    /// A move property without exactly one value.
    #[error("node {node}: move {property} has {values} values, expected 1")]
    BadMove {
        /// Main-line node number.
        node: usize,
        /// `B` or `W`.
        property: String,
        /// How many values it had.
        values: usize,
    },
    /// A move the board cannot carry out (occupied point, one-stone suicide).
    #[error("node {node}: illegal move {player} {property}[{value}]: {reason}")]
    IllegalMove {
        /// Main-line node number.
        node: usize,
        /// Who played it.
        player: Player,
        /// `B` or `W`.
        property: String,
        /// The point as written.
        value: String,
        /// Why the board refused it.
        reason: IllegalMove,
    },
    /// Setup stones that leave a chain without liberties.
    #[error("node {node}: bad setup: {reason}")]
    BadSetup {
        /// Main-line node number.
        node: usize,
        /// Why the setup was refused.
        reason: SetupError,
    },
}

/// Why a [`Property`] could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PropertyError {
    /// The identifier is not one or more uppercase letters `A`-`Z`.
    #[error("property identifier {0:?} is not one or more uppercase letters A-Z")]
    BadIdentifier(String),
    /// SGF needs at least one value per property.
    #[error("property {0} has no value")]
    NoValues(String),
}

/// Something in a record that [`load`] tolerated or worked around.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SgfWarning {
    /// `RU` was not understood; KataGo's default rules (Tromp-Taylor) were used.
    #[error("unknown rules RU[{0}], using Tromp-Taylor")]
    UnknownRules(String),
    /// `KM` is not a half-integer within ±400; the rules' komi was kept.
    #[error("ignored komi KM[{0}]")]
    BadKomi(String),
    /// `HA` is not a number.
    #[error("ignored handicap HA[{0}]")]
    BadHandicap(String),
    /// `PL` is not a colour.
    #[error("node {node}: ignored PL[{value}]")]
    BadPlayer {
        /// Main-line node number.
        node: usize,
        /// The value as written.
        value: String,
    },
    /// Setup in a later node restarted the game from the position reached there.
    #[error("node {node}: setup restarts the game, dropping {dropped_turns} earlier turns")]
    SetupRestart {
        /// Main-line node number.
        node: usize,
        /// Turns of history dropped.
        dropped_turns: usize,
    },
}
