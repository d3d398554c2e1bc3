//! Tengen's rules engine: the Go board, KataGo's full rules, the Pgx variant of
//! Tromp-Taylor, scoring, handicap placement, Zobrist hashing and SGF.
//!
//! No I/O and no async: everything here is plain computation on values.
//!
//! - [`Board`]: stones, chains, captures, simple ko, hash; play and undo (the hot path).
//! - [`Game`]: a game under [`Rules`] — superko, passes, button, cleanup phases, scoring.
//! - [`PgxGame`]: Pgx 2.6's Go environment, for its reference games and agents trained on it.
//! - [`sgf`]: reading and writing SGF FF\[4\] game records.

mod area;
mod board;
mod game;
mod geometry;
pub mod handicap;
mod pgx;
mod phase;
mod player;
pub mod playout;
mod rules;
pub mod sgf;
mod zobrist;

pub use area::{AreaMap, AreaOptions};
pub use board::{Board, IllegalMove, SetupError, Undo};
pub use game::{Game, GameOptions, Outcome, Turn, RECENT_BOARDS};
pub use geometry::{BoardSize, CoordError, Loc, Move, SizeError, MAX_AREA, MAX_SIZE, MIN_SIZE};
pub use pgx::{PgxGame, PgxTermination, PGX_HISTORY};
pub use phase::Phase;
pub use player::{Player, PlayerParseError};
pub use rules::{
    komi_is_valid, komi_rule, HandicapBonus, KoRule, Rules, RulesError, ScoringRule, TaxRule,
    MAX_KOMI, MIN_KOMI,
};
pub use zobrist::Hash;
