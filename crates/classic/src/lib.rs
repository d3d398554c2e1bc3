//! Tengen's classical engine, after GNU Go's design: it plays real Go with no network.
//!
//! Data flows one way, each module one step:
//! - [`reading`]: tactical reading of worms (ladders, nets, snapbacks, races; ko-aware, cached);
//! - [`worms`]: strings of stones with their liberties and tactical status;
//! - [`dragons`]: worms joined by safe connections, eye spaces, life and death, seki and races;
//! - [`influence`]: territory and moyo from the living stones' influence;
//! - [`analysis`]: all of the above for one position, open fights settled with the side to move;
//! - [`valuation`]: move reasons found by trying each candidate, valued in points;
//! - [`prior`]: a cheap move prior from local features with learned weights;
//! - [`engine`]: `genmove`, a quick judgement for the search, dead stones, strength levels.

pub mod analysis;
pub mod dragons;
pub mod engine;
pub mod evaluator;
pub mod influence;
pub mod points;
pub mod prior;
mod prior_weights;
mod prior_weights_bare;
pub mod reading;
pub mod valuation;
pub mod worms;

pub use analysis::Analysis;
pub use dragons::Status;
pub use engine::{Classic, Judgement, LevelSettings, LEVELS};
pub use evaluator::ClassicEvaluator;
pub use reading::{Outcome, Reader, ReadingLimits, Tactic};
pub use valuation::{MoveValue, Reason};
