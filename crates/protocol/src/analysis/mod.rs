//! KataGo's JSON analysis engine (../shared/seeds/003): one query per input line, one or
//! more response lines per analysed turn, out of order, plus the special actions.

pub mod engine;
pub mod query;
pub mod response;

pub use engine::AnalysisEngine;
pub use query::{parse, Action, Defaults, Request, Task};
pub use response::Perspective;
