//! The GTP commands this engine knows, typed: parsed once from a line's name and
//! arguments, printed back as canonical GTP text, and classified by whether they change
//! the game (what a journal must keep).

use std::fmt;

use tengen_rules::{komi_is_valid, BoardSize, Player, Rules};

use super::analyze::Format;
use super::analyze_request::AnalyzeRequest;
use super::level::Level;
use super::vertex::Vertex;
use crate::params::{self, Setting};

/// The commands `list_commands` advertises, in its order: KataGo's own list (its
/// `knownCommands`, those of them Tengen has) in KataGo's order, so that a client written
/// for KataGo sees what it expects, then Tengen's extensions.
pub const COMMANDS: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "quit",
    "boardsize",
    "rectangular_boardsize",
    "clear_board",
    "set_position",
    "komi",
    "get_komi",
    "play",
    "undo",
    "kata-get-rules",
    "kata-set-rule",
    "kata-set-rules",
    "kata-get-models",
    "kata-get-param",
    "kata-set-param",
    "kata-list-params",
    "kgs-rules",
    "genmove",
    "kata-search",
    "kata-search_cancellable",
    "clear_cache",
    "showboard",
    "fixed_handicap",
    "place_free_handicap",
    "set_free_handicap",
    "time_settings",
    "kgs-time_settings",
    "time_left",
    "kata-list_time_settings",
    "kata-time_settings",
    "final_score",
    "final_status_list",
    "loadsgf",
    "printsgf",
    "lz-genmove_analyze",
    "kata-genmove_analyze",
    "kata-search_analyze",
    "kata-search_analyze_cancellable",
    "lz-analyze",
    "kata-analyze",
    "kata-raw-nn",
    "cputime",
    "gomill-cpu_time",
    "stop",
    // Tengen's own, after KataGo's.
    "kgs-genmove_cleanup",
    "tengen-level",
    "gogui-analyze_commands",
    "tengen-ownership",
    "tengen-policy",
];

/// Commands accepted but neither listed nor `known_command`: Sabaki's names for the
/// analysis commands. KataGo runs them but does not advertise them, and Sabaki takes the
/// first of `analyze`, `kata-analyze`, `lz-analyze` an engine advertises; advertising
/// `analyze` would get Tengen the Leela Zero format (no score lead). `known_command` says
/// false for them too, as KataGo's does: it answers from the same list, so a client that
/// probes names one by one decides as one that reads `list_commands`.
pub const UNLISTED: &[&str] = &["analyze", "genmove_analyze"];

/// One command with its arguments checked.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `protocol_version`.
    ProtocolVersion,
    /// `name`.
    Name,
    /// `version`.
    Version,
    /// `known_command NAME`.
    KnownCommand(String),
    /// `list_commands`.
    ListCommands,
    /// `quit`.
    Quit,
    /// `boardsize N`: a new square game.
    Boardsize(BoardSize),
    /// `rectangular_boardsize X Y`: a new game.
    RectangularBoardsize(BoardSize),
    /// `clear_board`.
    ClearBoard,
    /// `set_position COLOR VERTEX ...`: these stones on an empty board of the same size,
    /// Black to move, no history (no ko ban, no captures).
    SetPosition(Vec<(Player, Vertex)>),
    /// `komi K`, a komi the rules allow.
    Komi(f64),
    /// `play COLOR VERTEX`.
    Play(Player, Vertex),
    /// `genmove COLOR`.
    Genmove(Player),
    /// `kgs-genmove_cleanup COLOR`.
    KgsGenmoveCleanup(Player),
    /// `kata-search COLOR`: the move `genmove` would play, not played.
    KataSearch(Player),
    /// `kata-search_cancellable COLOR`: `kata-search` that the next input line cancels
    /// (where the transport reads ahead; see [`super::Engine::start_search`]).
    KataSearchCancellable(Player),
    /// `undo`.
    Undo,
    /// `showboard`.
    Showboard,
    /// `fixed_handicap N`.
    FixedHandicap(usize),
    /// `place_free_handicap N` (the engine places them where it places fixed ones).
    PlaceFreeHandicap(usize),
    /// `set_free_handicap VERTEX...`.
    SetFreeHandicap(Vec<Vertex>),
    /// `final_score`.
    FinalScore,
    /// `final_status_list alive|dead|seki`.
    FinalStatusList(StoneStatus),
    /// `time_settings MAIN BYO_TIME BYO_STONES`.
    TimeSettings {
        /// Main time, seconds.
        main: f64,
        /// Byo-yomi period, seconds.
        byo_time: f64,
        /// Stones per period.
        byo_stones: i64,
    },
    /// `kgs-time_settings SYSTEM ...`; the words are read by [`super::time_control`].
    KgsTimeSettings(Vec<String>),
    /// `kata-time_settings SYSTEM ...`; the words are read by [`super::time_control`].
    KataTimeSettings(Vec<String>),
    /// `kata-list_time_settings`: the systems `kata-time_settings` takes.
    KataListTimeSettings,
    /// `time_left COLOR SECONDS STONES`.
    TimeLeft {
        /// Whose clock.
        player: Player,
        /// Seconds left.
        seconds: f64,
        /// Stones left in the period (0 in main time).
        stones: i64,
    },
    /// `kgs-rules RULES`.
    KgsRules(RulesText),
    /// `kata-get-rules`.
    KataGetRules,
    /// `kata-set-rules RULES`.
    KataSetRules(RulesText),
    /// `kata-set-rule OPTION VALUE`: one option of the rules, the others kept.
    KataSetRule(RuleOption),
    /// `kata-get-models`: the loaded networks, as JSON.
    KataGetModels,
    /// `loadsgf FILE [MOVE_NUMBER]`.
    Loadsgf {
        /// The file.
        file: String,
        /// Play up to, not including, this move (1-based).
        upto: Option<usize>,
    },
    /// `printsgf`.
    Printsgf,
    /// `cputime`.
    Cputime,
    /// `gomill-cpu_time`: gomill's name for `cputime`.
    GomillCpuTime,
    /// `get_komi`.
    GetKomi,
    /// `clear_cache`: forget cached network evaluations.
    ClearCache,
    /// `stop`: end a running search (sent by Lizzie-family clients).
    Stop,
    /// `kata-raw-nn [COLOR] all|SYMMETRY [OPTIMISM]`.
    KataRawNn {
        /// Whose view (default: the player to move).
        player: Option<Player>,
        /// One symmetry (0 to 7), or `None` for all eight.
        symmetry: Option<u8>,
        /// Policy optimism, 0 to 1 (default: the root's).
        optimism: Option<f32>,
    },
    /// `kata-list-params`.
    KataListParams,
    /// `kata-get-param NAME`.
    KataGetParam(&'static params::Param),
    /// `kata-set-param NAME VALUE`.
    KataSetParam(Setting),
    /// `tengen-level L`: the classical engine's level (1 to 10) or the search's rank
    /// (25k to 5d, or max).
    TengenLevel(Level),
    /// `gogui-analyze_commands`.
    GoguiAnalyzeCommands,
    /// `tengen-ownership`: GoGui's ownership board.
    TengenOwnership,
    /// `tengen-policy`: GoGui's policy board.
    TengenPolicy,
    /// A streaming analysis command and its arguments
    /// ([`super::Engine::start_analysis`] runs it).
    Analyze(Analyze, AnalyzeRequest),
}

/// Which stones `final_status_list` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoneStatus {
    /// Stones that stay.
    Alive,
    /// Stones to be removed.
    Dead,
    /// Stones in seki.
    Seki,
}

/// The streaming analysis commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Analyze {
    /// `kata-analyze`.
    Kata,
    /// `lz-analyze`.
    Lz,
    /// `analyze` (Sabaki's name for `lz-analyze`).
    Plain,
    /// `kata-genmove_analyze`.
    KataGenmove,
    /// `lz-genmove_analyze`.
    LzGenmove,
    /// `genmove_analyze`.
    PlainGenmove,
    /// `kata-search_analyze`: `kata-genmove_analyze` that plays nothing.
    KataSearch,
    /// `kata-search_analyze_cancellable`: `kata-search_analyze` that the next input line
    /// cancels (its closing line is then `play cancelled`).
    KataSearchCancellable,
}

/// Rules as given, and what they mean.
#[derive(Clone, Debug, PartialEq)]
pub struct RulesText {
    /// The words as given (a name or KataGo's JSON), joined by single spaces.
    pub text: String,
    /// The rules they name (the komi is the game's, not these).
    pub rules: Rules,
}

/// One rules option as `kata-set-rule` names it, checked against KataGo's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleOption {
    /// The option (`ko`, `scoring`, `tax`, `suicide`, `hasButton`, ...).
    pub key: String,
    /// Its value as given.
    pub value: String,
}

impl RuleOption {
    /// `rules` with this option set.
    pub fn apply(&self, rules: &Rules) -> Result<Rules, String> {
        rules
            .update(&self.key, &self.value)
            .map_err(|e| e.to_string())
    }
}

/// Why a line is not a command this engine can run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// No command has this name.
    #[error("unknown command")]
    Unknown,
    /// The arguments are wrong; the message is the GTP error reply.
    #[error("{0}")]
    Arguments(String),
}

impl From<String> for CommandError {
    fn from(s: String) -> CommandError {
        CommandError::Arguments(s)
    }
}

impl From<&str> for CommandError {
    fn from(s: &str) -> CommandError {
        CommandError::Arguments(s.into())
    }
}

impl Analyze {
    /// The analysis command named `name`.
    pub fn from_name(name: &str) -> Option<Analyze> {
        Some(match name {
            "kata-analyze" => Analyze::Kata,
            "lz-analyze" => Analyze::Lz,
            "analyze" => Analyze::Plain,
            "kata-genmove_analyze" => Analyze::KataGenmove,
            "lz-genmove_analyze" => Analyze::LzGenmove,
            "genmove_analyze" => Analyze::PlainGenmove,
            "kata-search_analyze" => Analyze::KataSearch,
            "kata-search_analyze_cancellable" => Analyze::KataSearchCancellable,
            _ => return None,
        })
    }

    /// Its GTP name.
    pub fn name(self) -> &'static str {
        match self {
            Analyze::Kata => "kata-analyze",
            Analyze::Lz => "lz-analyze",
            Analyze::Plain => "analyze",
            Analyze::KataGenmove => "kata-genmove_analyze",
            Analyze::LzGenmove => "lz-genmove_analyze",
            Analyze::PlainGenmove => "genmove_analyze",
            Analyze::KataSearch => "kata-search_analyze",
            Analyze::KataSearchCancellable => "kata-search_analyze_cancellable",
        }
    }

    /// Its output format.
    pub fn format(self) -> Format {
        match self {
            Analyze::Kata
            | Analyze::KataGenmove
            | Analyze::KataSearch
            | Analyze::KataSearchCancellable => Format::Kata,
            Analyze::Lz | Analyze::Plain | Analyze::LzGenmove | Analyze::PlainGenmove => Format::Lz,
        }
    }

    /// Whether it searches as `genmove` does, to a move's limits, and ends with a
    /// `play MOVE` line.
    pub fn genmove(self) -> bool {
        self.plays() || matches!(self, Analyze::KataSearch | Analyze::KataSearchCancellable)
    }

    /// Whether it plays the move it ends with.
    pub fn plays(self) -> bool {
        matches!(
            self,
            Analyze::KataGenmove | Analyze::LzGenmove | Analyze::PlainGenmove
        )
    }

    /// Whether the next input line cancels it before its move is chosen.
    pub fn cancellable(self) -> bool {
        self == Analyze::KataSearchCancellable
    }
}

impl RulesText {
    /// Reads rules as `kata-set-rules` takes them.
    pub fn parse(text: &str) -> Result<RulesText, String> {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let rules = Rules::parse(&text).map_err(|e| e.to_string())?;
        Ok(RulesText { text, rules })
    }
}

impl StoneStatus {
    fn name(self) -> &'static str {
        match self {
            StoneStatus::Alive => "alive",
            StoneStatus::Dead => "dead",
            StoneStatus::Seki => "seki",
        }
    }
}

fn player(text: &str) -> Result<Player, CommandError> {
    text.parse().map_err(|_| "invalid color".into())
}

impl Command {
    /// Reads command `name` with `args`; the error's text is GTP's error reply.
    pub fn parse<S: AsRef<str>>(name: &str, args: &[S]) -> Result<Command, CommandError> {
        use Command as C;
        if !COMMANDS.contains(&name) && !UNLISTED.contains(&name) {
            return Err(CommandError::Unknown);
        }
        let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
        let args = args.as_slice();
        let one = |what: &str| match args {
            [a] => Ok(*a),
            _ => Err(CommandError::Arguments(what.to_string())),
        };
        Ok(match name {
            "protocol_version" => C::ProtocolVersion,
            "name" => C::Name,
            "version" => C::Version,
            "known_command" => C::KnownCommand(one("known_command takes one argument")?.into()),
            "list_commands" => C::ListCommands,
            "quit" => C::Quit,
            "boardsize" => {
                let n = one("boardsize takes one argument")?
                    .parse::<usize>()
                    .map_err(|_| "boardsize not an integer")?;
                C::Boardsize(BoardSize::square(n).map_err(|_| "unacceptable size")?)
            }
            "rectangular_boardsize" => {
                let [x, y] = args else {
                    return Err("rectangular_boardsize takes two arguments".into());
                };
                let (x, y) = match (x.parse::<usize>(), y.parse::<usize>()) {
                    (Ok(x), Ok(y)) => (x, y),
                    _ => return Err("rectangular_boardsize not integers".into()),
                };
                C::RectangularBoardsize(BoardSize::new(x, y).map_err(|_| "unacceptable size")?)
            }
            "clear_board" => C::ClearBoard,
            "set_position" => set_position(args)?,
            "komi" => {
                let k: f64 = one("komi takes one argument")?
                    .parse()
                    .map_err(|_| "komi not a float")?;
                if !komi_is_valid(k) {
                    return Err(format!("komi must be {}", tengen_rules::komi_rule()).into());
                }
                C::Komi(k)
            }
            "play" => {
                let [p, v] = args else {
                    return Err("play takes a color and a vertex".into());
                };
                C::Play(player(p)?, Vertex::parse(v).ok_or("invalid vertex")?)
            }
            "genmove" => C::Genmove(player(one("genmove takes a color")?)?),
            "kata-search" | "kata-search_cancellable" => {
                let [p] = args else {
                    return Err(format!(
                        "Expected one argument for {name} but got '{}'",
                        args.join(" ")
                    )
                    .into());
                };
                let p = p
                    .parse()
                    .map_err(|_| format!("Could not parse color: '{p}'"))?;
                if name == "kata-search" {
                    C::KataSearch(p)
                } else {
                    C::KataSearchCancellable(p)
                }
            }
            "kgs-genmove_cleanup" => {
                C::KgsGenmoveCleanup(player(one("kgs-genmove_cleanup takes a color")?)?)
            }
            "undo" => C::Undo,
            "showboard" => C::Showboard,
            "fixed_handicap" | "place_free_handicap" => {
                let n: usize = one(&format!("{name} takes a number of stones"))?
                    .parse()
                    .map_err(|_| "number of stones not an integer")?;
                if name == "fixed_handicap" {
                    C::FixedHandicap(n)
                } else {
                    C::PlaceFreeHandicap(n)
                }
            }
            "set_free_handicap" => C::SetFreeHandicap(
                args.iter()
                    .map(|v| match Vertex::parse(v) {
                        Some(x) if !x.is_pass() => Ok(x),
                        _ => Err(format!("invalid vertex {v}")),
                    })
                    .collect::<Result<_, _>>()?,
            ),
            "final_score" => C::FinalScore,
            "final_status_list" => {
                let usage = "final_status_list takes alive, dead or seki";
                C::FinalStatusList(match one(usage)?.to_ascii_lowercase().as_str() {
                    "alive" => StoneStatus::Alive,
                    "dead" => StoneStatus::Dead,
                    "seki" => StoneStatus::Seki,
                    _ => return Err(usage.into()),
                })
            }
            "time_settings" => {
                let [m, b, s] = args else {
                    return Err("time_settings takes three arguments".into());
                };
                match (m.parse(), b.parse(), s.parse()) {
                    (Ok(main), Ok(byo_time), Ok(byo_stones)) => C::TimeSettings {
                        main,
                        byo_time,
                        byo_stones,
                    },
                    _ => return Err("time_settings: expected numbers".into()),
                }
            }
            "kgs-time_settings" => C::KgsTimeSettings(words(args)),
            "kata-time_settings" => C::KataTimeSettings(words(args)),
            "kata-list_time_settings" => C::KataListTimeSettings,
            "time_left" => {
                let [p, t, s] = args else {
                    return Err("time_left takes three arguments".into());
                };
                let player = player(p)?;
                match (t.parse(), s.parse()) {
                    (Ok(seconds), Ok(stones)) => C::TimeLeft {
                        player,
                        seconds,
                        stones,
                    },
                    _ => return Err("time_left: expected numbers".into()),
                }
            }
            "kgs-rules" | "kata-set-rules" => {
                if args.is_empty() {
                    return Err(format!("{name} takes a rules name").into());
                }
                let rules = RulesText::parse(&args.join(" "))?;
                if name == "kgs-rules" {
                    C::KgsRules(rules)
                } else {
                    C::KataSetRules(rules)
                }
            }
            "kata-get-rules" => C::KataGetRules,
            "kata-set-rule" => {
                let [key, value] = args else {
                    return Err(format!(
                        "Expected two arguments for kata-set-rule but got '{}'",
                        args.join(" ")
                    )
                    .into());
                };
                let option = RuleOption {
                    key: key.to_string(),
                    value: value.to_string(),
                };
                // Checked here against any rules: an unknown option or value fails at once.
                option.apply(&Rules::chinese())?;
                C::KataSetRule(option)
            }
            "kata-get-models" => C::KataGetModels,
            "loadsgf" => {
                let usage = "loadsgf takes a file name and an optional move number";
                match args {
                    [f] => C::Loadsgf {
                        file: f.to_string(),
                        upto: None,
                    },
                    [f, n] => C::Loadsgf {
                        file: f.to_string(),
                        upto: Some(n.parse().map_err(|_| "move number not an integer")?),
                    },
                    _ => return Err(usage.into()),
                }
            }
            "printsgf" => C::Printsgf,
            "cputime" => C::Cputime,
            "gomill-cpu_time" => C::GomillCpuTime,
            "get_komi" => C::GetKomi,
            "clear_cache" => C::ClearCache,
            "stop" => C::Stop,
            "kata-raw-nn" => raw_nn(args)?,
            "kata-list-params" => C::KataListParams,
            "kata-get-param" => {
                let key = one("kata-get-param takes a parameter name")?;
                C::KataGetParam(params::find(key).map_err(|e| e.to_string())?)
            }
            "kata-set-param" => {
                let [key, value] = args else {
                    return Err("kata-set-param takes a parameter name and a value".into());
                };
                let p = params::find(key).map_err(|e| e.to_string())?;
                C::KataSetParam(p.parse(value).map_err(|e| e.to_string())?)
            }
            "tengen-level" => {
                // The classical engine's message, kept as it was; a search's refusal of a
                // level and the command's documentation name the ranks.
                let usage = "tengen-level takes a level from 1 to 10";
                C::TengenLevel(one(usage)?.parse().map_err(|_| usage)?)
            }
            "gogui-analyze_commands" => C::GoguiAnalyzeCommands,
            "tengen-ownership" => C::TengenOwnership,
            "tengen-policy" => C::TengenPolicy,
            other => match Analyze::from_name(other) {
                Some(a) => C::Analyze(a, AnalyzeRequest::parse(a.format(), args)?),
                None => return Err(CommandError::Unknown),
            },
        })
    }

    /// Its GTP name.
    pub fn name(&self) -> &'static str {
        use Command as C;
        match self {
            C::ProtocolVersion => "protocol_version",
            C::Name => "name",
            C::Version => "version",
            C::KnownCommand(_) => "known_command",
            C::ListCommands => "list_commands",
            C::Quit => "quit",
            C::Boardsize(_) => "boardsize",
            C::RectangularBoardsize(_) => "rectangular_boardsize",
            C::ClearBoard => "clear_board",
            C::SetPosition(_) => "set_position",
            C::Komi(_) => "komi",
            C::Play(..) => "play",
            C::Genmove(_) => "genmove",
            C::KgsGenmoveCleanup(_) => "kgs-genmove_cleanup",
            C::KataSearch(_) => "kata-search",
            C::KataSearchCancellable(_) => "kata-search_cancellable",
            C::Undo => "undo",
            C::Showboard => "showboard",
            C::FixedHandicap(_) => "fixed_handicap",
            C::PlaceFreeHandicap(_) => "place_free_handicap",
            C::SetFreeHandicap(_) => "set_free_handicap",
            C::FinalScore => "final_score",
            C::FinalStatusList(_) => "final_status_list",
            C::TimeSettings { .. } => "time_settings",
            C::KgsTimeSettings(_) => "kgs-time_settings",
            C::KataTimeSettings(_) => "kata-time_settings",
            C::KataListTimeSettings => "kata-list_time_settings",
            C::TimeLeft { .. } => "time_left",
            C::KgsRules(_) => "kgs-rules",
            C::KataGetRules => "kata-get-rules",
            C::KataSetRules(_) => "kata-set-rules",
            C::KataSetRule(_) => "kata-set-rule",
            C::KataGetModels => "kata-get-models",
            C::Loadsgf { .. } => "loadsgf",
            C::Printsgf => "printsgf",
            C::Cputime => "cputime",
            C::GomillCpuTime => "gomill-cpu_time",
            C::GetKomi => "get_komi",
            C::ClearCache => "clear_cache",
            C::Stop => "stop",
            C::KataRawNn { .. } => "kata-raw-nn",
            C::KataListParams => "kata-list-params",
            C::KataGetParam(_) => "kata-get-param",
            C::KataSetParam(_) => "kata-set-param",
            C::TengenLevel(_) => "tengen-level",
            C::GoguiAnalyzeCommands => "gogui-analyze_commands",
            C::TengenOwnership => "tengen-ownership",
            C::TengenPolicy => "tengen-policy",
            C::Analyze(a, _) => a.name(),
        }
    }

    /// Whether carrying it out may change the game: the board, the moves, whose turn it
    /// is, komi, rules, or the strength the engine plays this game at (`tengen-level`).
    /// What a journal of the game must keep. Clocks and search parameters are the
    /// session's and the configuration's, not the game's.
    pub fn changes_game(&self) -> bool {
        use Command as C;
        match self {
            C::Boardsize(_)
            | C::RectangularBoardsize(_)
            | C::ClearBoard
            | C::SetPosition(_)
            | C::Komi(_)
            | C::Play(..)
            | C::Genmove(_)
            | C::KgsGenmoveCleanup(_)
            | C::Undo
            | C::FixedHandicap(_)
            | C::PlaceFreeHandicap(_)
            | C::SetFreeHandicap(_)
            | C::KgsRules(_)
            | C::KataSetRules(_)
            | C::KataSetRule(_)
            | C::Loadsgf { .. }
            | C::TengenLevel(_) => true,
            // They may set the player to move, and the genmove forms play; the search-only
            // forms search a copy.
            C::Analyze(a, _) => a.plays() || !a.genmove(),
            C::ProtocolVersion
            | C::Name
            | C::Version
            | C::KnownCommand(_)
            | C::ListCommands
            | C::Quit
            | C::Showboard
            | C::FinalScore
            | C::FinalStatusList(_)
            | C::TimeSettings { .. }
            | C::KgsTimeSettings(_)
            | C::KataTimeSettings(_)
            | C::KataListTimeSettings
            | C::TimeLeft { .. }
            | C::KataGetRules
            | C::KataGetModels
            // A search that plays nothing; the position it searches is a copy.
            | C::KataSearch(_)
            | C::KataSearchCancellable(_)
            | C::Printsgf
            | C::Cputime
            | C::GomillCpuTime
            | C::GetKomi
            | C::ClearCache
            | C::Stop
            | C::KataRawNn { .. }
            | C::KataListParams
            | C::KataGetParam(_)
            | C::KataSetParam(_)
            | C::GoguiAnalyzeCommands
            | C::TengenOwnership
            | C::TengenPolicy => false,
        }
    }

    /// One command of every name in [`COMMANDS`], with arguments: for tests that must
    /// cover the whole vocabulary (a round trip, a journal).
    pub fn examples() -> Vec<Command> {
        let v = |t: &str| Vertex::parse(t).expect("a vertex");
        let rules = |t: &str| RulesText::parse(t).expect("rules");
        let param = |n: &str, x: &str| {
            params::find(n)
                .and_then(|p| p.parse(x))
                .expect("a parameter")
        };
        let size = |x, y| BoardSize::new(x, y).expect("a size");
        let analyze = |a: Analyze| {
            let words: &[&str] = match (a.genmove(), a.format()) {
                (true, _) => &["b", "50"],
                (false, Format::Kata) => &["50", "ownership", "true", "avoid", "w", "D4,C3", "2"],
                (false, Format::Lz) => &[],
            };
            let request = AnalyzeRequest::parse(a.format(), words).expect("analysis words");
            Command::Analyze(a, request)
        };
        use Command as C;
        let all = vec![
            C::ProtocolVersion,
            C::Name,
            C::Version,
            C::KnownCommand("play".into()),
            C::ListCommands,
            C::Quit,
            C::Boardsize(size(9, 9)),
            C::RectangularBoardsize(size(9, 7)),
            C::ClearBoard,
            C::SetPosition(vec![(Player::Black, v("D4")), (Player::White, v("E5"))]),
            C::SetPosition(Vec::new()),
            C::Komi(-3.5),
            C::GetKomi,
            C::Play(Player::Black, v("D4")),
            C::Play(Player::White, v("pass")),
            C::Play(Player::White, v("(2,3)")),
            C::Undo,
            C::KataGetRules,
            C::KataSetRule(RuleOption {
                key: "scoring".into(),
                value: "TERRITORY".into(),
            }),
            C::KataSetRules(rules("tromp-taylor")),
            C::KataGetModels,
            C::KataGetParam(params::find("cpuctExploration").expect("a parameter")),
            C::KataSetParam(param("maxVisits", "50")),
            C::KataSetParam(param("useLcbForSelection", "false")),
            C::KataListParams,
            C::KgsRules(rules("japanese")),
            C::Genmove(Player::White),
            C::KataSearch(Player::Black),
            C::KataSearchCancellable(Player::White),
            C::ClearCache,
            C::Showboard,
            C::FixedHandicap(2),
            C::PlaceFreeHandicap(3),
            C::SetFreeHandicap(vec![v("C3"), v("G7"), v("E5")]),
            C::TimeSettings {
                main: 300.0,
                byo_time: 30.5,
                byo_stones: 5,
            },
            C::KgsTimeSettings(vec!["byoyomi".into(), "60".into(), "10".into(), "3".into()]),
            C::TimeLeft {
                player: Player::White,
                seconds: 12.25,
                stones: 0,
            },
            C::KataListTimeSettings,
            C::KataTimeSettings(vec!["fischer".into(), "60".into(), "5".into()]),
            C::FinalScore,
            C::FinalStatusList(StoneStatus::Dead),
            C::Loadsgf {
                file: "game.sgf".into(),
                upto: Some(12),
            },
            C::Printsgf,
            analyze(Analyze::LzGenmove),
            analyze(Analyze::KataGenmove),
            analyze(Analyze::KataSearch),
            analyze(Analyze::KataSearchCancellable),
            analyze(Analyze::Lz),
            analyze(Analyze::Kata),
            C::KataRawNn {
                player: Some(Player::White),
                symmetry: Some(3),
                optimism: Some(0.25),
            },
            C::KataRawNn {
                player: None,
                symmetry: None,
                optimism: None,
            },
            C::Cputime,
            C::GomillCpuTime,
            C::Stop,
            C::KgsGenmoveCleanup(Player::Black),
            C::TengenLevel(Level::Classic(4)),
            C::GoguiAnalyzeCommands,
            C::TengenOwnership,
            C::TengenPolicy,
            // The unlisted ones, last.
            analyze(Analyze::Plain),
            analyze(Analyze::PlainGenmove),
        ];
        all
    }
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `set_position COLOR VERTEX ...`, with KataGo's messages; where stones lie is checked
/// on the board when it runs.
fn set_position(args: &[&str]) -> Result<Command, CommandError> {
    let fail = |detail: String| {
        let given = args.join(" ");
        let pairs = "Expected a space-separated sequence of <COLOR> <VERTEX> pairs";
        if detail.is_empty() {
            CommandError::Arguments(format!("{pairs} but got '{given}'"))
        } else {
            CommandError::Arguments(format!("{pairs} but got '{given}': {detail}"))
        }
    };
    if !args.len().is_multiple_of(2) {
        return Err(fail(String::new()));
    }
    args.chunks(2)
        .map(|pair| {
            let p = pair[0]
                .parse::<Player>()
                .map_err(|_| fail(format!("could not parse color: '{}'", pair[0])))?;
            match Vertex::parse(pair[1]) {
                Some(v) if !v.is_pass() => Ok((p, v)),
                _ => Err(fail(format!("could not parse vertex: '{}'", pair[1]))),
            }
        })
        .collect::<Result<_, _>>()
        .map(Command::SetPosition)
}

/// `kata-raw-nn [color] symmetry|all [optimism]`.
fn raw_nn(args: &[&str]) -> Result<Command, CommandError> {
    let mut rest = args;
    let mut player = None;
    if let Some(p) = rest.first().and_then(|a| a.parse::<Player>().ok()) {
        player = Some(p);
        rest = &rest[1..];
    }
    let usage = "expected an optional color, a symmetry 'all' or index [0-7], and an optional optimism [0-1]";
    let symmetry = match rest.first() {
        Some(&"all") => None,
        Some(n) => match n.parse::<u8>() {
            Ok(k) if k < 8 => Some(k),
            _ => return Err(format!("bad symmetry {n:?}: {usage}").into()),
        },
        None => return Err(usage.into()),
    };
    let optimism = match rest.get(1) {
        None => None,
        Some(o) => match o.parse::<f32>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Some(x),
            _ => return Err(format!("bad optimism {o:?}: {usage}").into()),
        },
    };
    if rest.len() > 2 {
        return Err(usage.into());
    }
    Ok(Command::KataRawNn {
        player,
        symmetry,
        optimism,
    })
}

/// Canonical GTP text: the name and the arguments, which [`Command::parse`] reads back
/// as the same command.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Command as C;
        f.write_str(self.name())?;
        match self {
            C::ProtocolVersion
            | C::Name
            | C::Version
            | C::ListCommands
            | C::Quit
            | C::ClearBoard
            | C::Undo
            | C::Showboard
            | C::FinalScore
            | C::KataGetRules
            | C::KataGetModels
            | C::KataListTimeSettings
            | C::Printsgf
            | C::Cputime
            | C::GomillCpuTime
            | C::GetKomi
            | C::ClearCache
            | C::Stop
            | C::KataListParams
            | C::GoguiAnalyzeCommands
            | C::TengenOwnership
            | C::TengenPolicy => Ok(()),
            C::KnownCommand(n) => write!(f, " {n}"),
            C::Boardsize(s) => write!(f, " {}", s.width()),
            C::RectangularBoardsize(s) => write!(f, " {} {}", s.width(), s.height()),
            C::Komi(k) => write!(f, " {k}"),
            C::Play(p, v) => write!(f, " {} {v}", p.letter()),
            C::Genmove(p)
            | C::KgsGenmoveCleanup(p)
            | C::KataSearch(p)
            | C::KataSearchCancellable(p) => write!(f, " {}", p.letter()),
            C::SetPosition(stones) => stones
                .iter()
                .try_for_each(|(p, v)| write!(f, " {} {v}", p.letter())),
            C::KataSetRule(o) => write!(f, " {} {}", o.key, o.value),
            C::FixedHandicap(n) | C::PlaceFreeHandicap(n) => write!(f, " {n}"),
            C::SetFreeHandicap(vs) => vs.iter().try_for_each(|v| write!(f, " {v}")),
            C::FinalStatusList(s) => write!(f, " {}", s.name()),
            C::TimeSettings {
                main,
                byo_time,
                byo_stones,
            } => write!(f, " {main} {byo_time} {byo_stones}"),
            C::KgsTimeSettings(w) | C::KataTimeSettings(w) => {
                w.iter().try_for_each(|x| write!(f, " {x}"))
            }
            C::Analyze(_, r) => {
                let words = r.to_string();
                if words.is_empty() {
                    Ok(())
                } else {
                    write!(f, " {words}")
                }
            }
            C::TimeLeft {
                player,
                seconds,
                stones,
            } => write!(f, " {} {seconds} {stones}", player.letter()),
            C::KgsRules(r) | C::KataSetRules(r) => write!(f, " {}", r.text),
            C::Loadsgf { file, upto } => {
                write!(f, " {file}")?;
                upto.map_or(Ok(()), |n| write!(f, " {n}"))
            }
            C::KataRawNn {
                player,
                symmetry,
                optimism,
            } => {
                if let Some(p) = player {
                    write!(f, " {}", p.letter())?;
                }
                match symmetry {
                    Some(k) => write!(f, " {k}")?,
                    None => f.write_str(" all")?,
                }
                optimism.map_or(Ok(()), |o| write!(f, " {o}"))
            }
            C::KataGetParam(p) => write!(f, " {}", p.name),
            C::KataSetParam(s) => write!(f, " {s}"),
            C::TengenLevel(l) => write!(f, " {l}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reparse(text: &str) -> Result<Command, CommandError> {
        let words: Vec<&str> = text.split_whitespace().collect();
        Command::parse(words[0], &words[1..])
    }

    #[test]
    fn every_command_reads_back_from_its_own_text() {
        for c in Command::examples() {
            let text = c.to_string();
            assert_eq!(reparse(&text), Ok(c.clone()), "{text}");
            assert!(text.starts_with(c.name()), "{text}");
        }
    }

    #[test]
    fn the_examples_cover_every_name_and_only_known_names_parse() {
        let mut names: Vec<&str> = Command::examples().iter().map(Command::name).collect();
        names.dedup();
        let listed_then_unlisted: Vec<&str> = COMMANDS.iter().chain(UNLISTED).copied().collect();
        assert_eq!(
            names, listed_then_unlisted,
            "one example (at least) per name, in list order, then the unlisted ones"
        );
        assert_eq!(reparse("frobnicate 1"), Err(CommandError::Unknown));
        assert_eq!(reparse("PLAY b D4"), Err(CommandError::Unknown));
    }

    #[test]
    fn arguments_are_checked_with_gtp_messages() {
        let err = |t: &str| reparse(t).unwrap_err().to_string();
        assert_eq!(err("play b Z99"), "invalid vertex");
        assert_eq!(err("play x D4"), "invalid color");
        assert_eq!(err("play b"), "play takes a color and a vertex");
        assert_eq!(err("boardsize 100"), "unacceptable size");
        assert_eq!(err("boardsize nine"), "boardsize not an integer");
        assert_eq!(err("komi lots"), "komi not a float");
        assert!(err("komi 0.3").starts_with("komi must be"));
        assert_eq!(err("set_free_handicap D4 pass"), "invalid vertex pass");
        assert_eq!(
            err("kata-set-param lcbStdevs 99"),
            "lcbStdevs must be a number from 1 to 12, not \"99\""
        );
        assert_eq!(
            err("kata-get-param nope"),
            "unknown parameter \"nope\" (kata-list-params lists them)"
        );
        assert_eq!(
            err("tengen-level 11"),
            "tengen-level takes a level from 1 to 10"
        );
        assert!(err("kata-raw-nn b 9").starts_with("bad symmetry \"9\""));
        assert!(err("kata-set-rules chinse").contains("chinse"));
        // Commands without arguments ignore extra words, as they always have.
        assert_eq!(reparse("clear_board now"), Ok(Command::ClearBoard));
        // Case and spacing of vertices and colours are made canonical.
        assert_eq!(reparse("play white d4").unwrap().to_string(), "play W D4");
    }
}
