//! KataGo's JSON analysis engine (../shared/seeds/003): one query per input line, one or
//! more response lines per analysed turn, out of order, plus the special actions.

pub mod engine;
pub mod query;
pub mod response;

pub use engine::{AnalysisEngine, SubmitError, DEFAULT_QUEUE_BYTES};
pub use query::{
    parse, Action, Defaults, Query, Record, Request, Task, MAX_QUERY_LINE_BYTES, MAX_QUERY_MOVES,
};
pub use response::Perspective;
