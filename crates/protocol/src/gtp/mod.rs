//! GTP v2: [`line`] splits input lines as the specification's preprocessing says,
//! [`command`] reads them as typed commands, [`time_control`] reads the time-setting
//! commands' values into a clock, [`engine`] carries them out on a game and a search, and
//! [`Reply`] formats answers; [`chat`] is the search summary for bot bridges and [`models`]
//! what `kata-get-models` reports.

pub mod analyze;
pub mod analyze_request;
pub mod chat;
pub mod command;
pub mod engine;
pub mod level;
pub mod line;
pub mod models;
pub mod search_factor;
pub mod time_control;
pub mod vertex;

pub use analyze::{AnalyzeArgs, Format};
pub use analyze_request::AnalyzeRequest;
pub use chat::SearchChat;
pub use command::{
    Analyze, Command, CommandError, RuleOption, RulesText, StoneStatus, COMMANDS, UNLISTED,
};
pub use engine::{
    analyze_command, Decider, Engine, EngineConfig, PendingSearch, SgfAccess, MAX_SGF_BYTES,
};
pub use level::{Level, LevelError};
pub use line::{parse_line, Line, LineError, MAX_LINE_BYTES};
pub use models::ModelInfo;
pub use vertex::Vertex;

/// The answer to one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `= text`.
    Success(String),
    /// `? text`.
    Failure(String),
}

impl Reply {
    /// The reply as GTP sends it: `=id text` or `?id text`, ended by an empty line.
    pub fn format(&self, id: Option<u64>) -> String {
        let (mark, text) = match self {
            Reply::Success(t) => ('=', t),
            Reply::Failure(t) => ('?', t),
        };
        let id = id.map(|i| i.to_string()).unwrap_or_default();
        // A reply must not contain an empty line, which would end it early.
        let mut body = text.trim_end().replace("\n\n", "\n");
        while body.contains("\n\n") {
            body = body.replace("\n\n", "\n");
        }
        if body.is_empty() {
            format!("{mark}{id}\n\n")
        } else if body.starts_with('\n') {
            format!("{mark}{id}{body}\n\n")
        } else {
            format!("{mark}{id} {body}\n\n")
        }
    }
}
