//! Monte-Carlo tree search for Tengen, as in the KataGo paper (§5): PUCT with a
//! log-growing exploration constant scaled by the parent's utility stdev, first-play
//! urgency with separate root and tree reductions, a utility mixing win/loss with static
//! and dynamic score parts, LCB move choice, virtual losses for multi-threaded batching,
//! root noise, forced playouts, tree reuse and GTP time management.
//!
//! Data flows one way: a [`Search`] holds the root [`tengen_rules::Game`] and a
//! [`tree::Tree`], a graph in which transpositions share nodes (KataGo's graph search);
//! threads descend it under a lock ([`select`]), evaluate leaves through an [`Evaluator`]
//! outside it, and back the values up ([`backup`]: KataGo's recomputation of each node
//! from its children, with noise pruning, value weighting and the subtree value-bias
//! correction); [`Analysis`] snapshots read the graph at any moment.

pub mod analysis;
pub mod backup;
pub mod clock;
pub mod ending;
pub mod evaluator;
pub mod filter;
pub mod keys;
pub mod mirror;
pub mod params;
pub mod search;
pub mod select;
pub mod strength;
pub mod timing;
pub mod tree;
pub mod utility;

pub use analysis::{Analysis, MoveInfo, ResignTracker, RootInfo, SnapshotOptions};
pub use clock::{Clock, ClockError, TimeBudget, MAX_INPUT_TIME};
pub use evaluator::{EvalRequest, Evaluator, UniformEvaluator};
pub use filter::{FilterRule, MoveFilter};
pub use mirror::Mirror;
pub use params::{Limits, SearchParams};
pub use search::{RunStats, Search, SearchError};
pub use strength::{Rank, Strength, StrengthError};
pub use timing::limits_for_move;
