//! The MQTT payloads: what comes in (snapshots, commands) decoded with errors a maker can
//! act on, and what goes out (state, moves, analysis, alerts) as JSON.

use serde::{Deserialize, Serialize};
use tengen_protocol::gtp::Level;
use tengen_rules::{BoardSize, Game, Move, Player};
use tengen_search::Analysis;

use crate::game_settings::GameSettings;
use crate::snapshot::{Snapshot, SnapshotError};
use crate::Fix;

/// Largest payload read; anything longer is refused before parsing.
pub const MAX_PAYLOAD: usize = 16 * 1024;

/// Why a payload was refused.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The payload is over [`MAX_PAYLOAD`].
    #[error("payload of {0} bytes is over the {MAX_PAYLOAD}-byte limit")]
    TooLarge(usize),
    /// Not UTF-8 text.
    #[error("payload is not UTF-8 text")]
    NotText,
    /// JSON that does not parse or does not have the documented fields.
    #[error("bad JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A snapshot that does not fit the game's board.
    #[error("{0}")]
    Snapshot(#[from] SnapshotError),
    /// A value out of range (named).
    #[error("{0}")]
    Invalid(String),
}

/// A snapshot as JSON: `{"rows": ["..X..", ...]}` or `{"board": "..X..\n..."}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SnapshotJson {
    rows: Option<Vec<String>>,
    board: Option<String>,
}

/// Reads a snapshot for a `size` board: plain rows of `. X O ?` or the JSON forms above.
pub fn decode_snapshot(payload: &[u8], size: BoardSize) -> Result<Snapshot, PayloadError> {
    let text = text_of(payload)?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let j: SnapshotJson = serde_json::from_str(trimmed)?;
        let text = match (j.rows, j.board) {
            (Some(rows), None) => {
                if rows.len() != size.height() {
                    return Err(PayloadError::Invalid(format!(
                        "snapshot has {} rows, the board has {}",
                        rows.len(),
                        size.height()
                    )));
                }
                rows.join("\n")
            }
            (None, Some(b)) => b,
            _ => {
                return Err(PayloadError::Invalid(
                    "a snapshot has either \"rows\" or \"board\"".into(),
                ))
            }
        };
        Ok(Snapshot::parse(size, &text)?)
    } else {
        Ok(Snapshot::parse(size, text)?)
    }
}

fn text_of(payload: &[u8]) -> Result<&str, PayloadError> {
    if payload.len() > MAX_PAYLOAD {
        return Err(PayloadError::TooLarge(payload.len()));
    }
    std::str::from_utf8(payload).map_err(|_| PayloadError::NotText)
}

/// Who the engine plays for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EngineSide {
    /// The engine plays Black.
    Black,
    /// The engine plays White.
    #[default]
    White,
    /// Both sides are human; the engine only analyses.
    None,
}

impl EngineSide {
    /// The side named `black`, `white` or `none`.
    pub fn parse(name: &str) -> Option<EngineSide> {
        match name {
            "black" => Some(EngineSide::Black),
            "white" => Some(EngineSide::White),
            "none" => Some(EngineSide::None),
            _ => None,
        }
    }

    /// Its name, as [`EngineSide::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            EngineSide::Black => "black",
            EngineSide::White => "white",
            EngineSide::None => "none",
        }
    }

    /// Whether the engine plays `p`.
    pub fn plays(self, p: Player) -> bool {
        matches!(
            (self, p),
            (EngineSide::Black, Player::Black) | (EngineSide::White, Player::White)
        )
    }
}

/// A command on `tengen/<id>/command`, as it arrives.
#[derive(Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
enum CommandJson {
    NewGame {
        #[serde(default = "default_size")]
        size: usize,
        #[serde(default = "default_komi")]
        komi: f64,
        #[serde(default = "default_rules")]
        rules: String,
        #[serde(default)]
        handicap: usize,
        #[serde(default)]
        engine: EngineSide,
    },
    Undo,
    Pass,
    Resign,
    Level {
        level: LevelJson,
    },
    Analysis {
        on: bool,
        #[serde(default)]
        ownership: bool,
    },
    Gtp {
        line: String,
        #[serde(default)]
        id: Option<String>,
    },
}

/// A level as it arrives: a classical number (1..10) or a rank's text ("12k", "max").
#[derive(Deserialize)]
#[serde(untagged)]
enum LevelJson {
    Number(i64),
    Text(String),
}

/// A command on `tengen/<id>/command`, checked whole: a [`Command::NewGame`] applies.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Starts a new game (the old one is archived):
    /// `{"cmd":"new_game","size":19,"komi":7.5,"rules":"chinese","handicap":0,"engine":"white"}`.
    NewGame(GameSettings),
    /// Takes back the last move.
    Undo,
    /// The player to move passes.
    Pass,
    /// The player to move resigns.
    Resign,
    /// The engine's strength: `{"cmd":"level","level":4}` (the classical engine's 1 to
    /// 10) or `{"cmd":"level","level":"12k"}` (the search's rank, 25k to 5d, or max).
    Level {
        /// The level.
        level: Level,
    },
    /// Analysis on or off.
    Analysis {
        /// Publish analysis while the game goes on.
        on: bool,
        /// Include ownership (one value per point, White = +1).
        ownership: bool,
    },
    /// One GTP command, answered on `gtp/reply`.
    Gtp {
        /// The command line.
        line: String,
        /// Echoed in the reply.
        id: Option<String>,
    },
}

fn default_size() -> usize {
    19
}
fn default_komi() -> f64 {
    7.5
}
fn default_rules() -> String {
    "chinese".into()
}

/// Reads a command payload; a new game's settings are checked as a whole.
pub fn decode_command(payload: &[u8]) -> Result<Command, PayloadError> {
    let cmd: CommandJson = serde_json::from_str(text_of(payload)?)?;
    Ok(match cmd {
        CommandJson::NewGame {
            size,
            komi,
            rules,
            handicap,
            engine,
        } => {
            let size =
                BoardSize::square(size).map_err(|e| PayloadError::Invalid(format!("size: {e}")))?;
            let g = GameSettings {
                size,
                komi,
                rules,
                handicap,
                engine,
            };
            g.check().map_err(PayloadError::Invalid)?;
            Command::NewGame(g)
        }
        CommandJson::Level { level } => {
            let text = match level {
                LevelJson::Number(n) => n.to_string(),
                LevelJson::Text(t) => t,
            };
            let level = text.parse().map_err(|_| {
                PayloadError::Invalid(format!(
                    "level: {text} (use 1 to 10, or a rank from 25k to 5d, or max)"
                ))
            })?;
            Command::Level { level }
        }
        CommandJson::Undo => Command::Undo,
        CommandJson::Pass => Command::Pass,
        CommandJson::Resign => Command::Resign,
        CommandJson::Analysis { on, ownership } => Command::Analysis { on, ownership },
        CommandJson::Gtp { line, id } => Command::Gtp { line, id },
    })
}

/// The retained game state on `tengen/<id>/state`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct State {
    /// Board width and height.
    pub size: [usize; 2],
    /// Komi.
    pub komi: f32,
    /// Rules as KataGo names them (JSON).
    pub rules: serde_json::Value,
    /// Moves so far, e.g. `["B D4", "W Q16", "B pass"]` (setup stones not included).
    pub moves: Vec<String>,
    /// Setup stones (handicap or free placement) as `"B D4"`.
    pub setup: Vec<String>,
    /// `B` or `W`.
    pub to_move: String,
    /// The board, top row first, `. X O`.
    pub rows: Vec<String>,
    /// The engine's side.
    pub engine: EngineSide,
    /// The engine's level as shown to players, e.g. `7` (a string, so that a level's
    /// name is free to change).
    pub level: String,
    /// Whether the engine is thinking.
    pub thinking: bool,
    /// The result once the game is over, e.g. `W+R`, `B+3.5`.
    pub result: Option<String>,
}

impl State {
    /// The state of `game`, the engine playing `engine` at `level`.
    pub fn of(game: &Game, engine: EngineSide, level: String, thinking: bool) -> State {
        let board = game.board();
        let size = board.size();
        let show = |b: &tengen_rules::Board| -> Vec<String> {
            (0..size.height())
                .map(|y| {
                    (0..size.width())
                        .map(|x| match size.loc(x, y).and_then(|l| b.stone(l)) {
                            None => '.',
                            Some(Player::Black) => 'X',
                            Some(Player::White) => 'O',
                        })
                        .collect()
                })
                .collect()
        };
        let rows = show(board);
        let moves = game
            .turns()
            .iter()
            .map(|t| format!("{} {}", t.player.letter(), size.gtp(t.mv)))
            .collect();
        let initial = game.initial_board();
        let setup = size
            .points()
            .filter_map(|l| {
                initial
                    .stone(l)
                    .map(|p| format!("{} {}", p.letter(), size.gtp(Move::Play(l))))
            })
            .collect();
        State {
            size: [size.width(), size.height()],
            komi: game.rules().komi,
            rules: game.rules().to_json_no_komi(),
            moves,
            setup,
            to_move: game.to_move().letter().to_string(),
            rows,
            engine,
            level,
            thinking,
            result: game.outcome().map(|o| o.sgf_result()),
        }
    }
}

/// Where a move on `move` came from.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum MoveBy {
    /// The engine chose it (its side's turn, or a GTP `genmove`).
    Engine,
    /// It was read off the physical board (a camera or `board/snapshot`).
    Board,
    /// A command said so: `pass` or `resign` on `command`, GTP `play` over MQTT or serial.
    Command,
}

/// A move that entered the game, whoever made it, on `tengen/<id>/move`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MoveMsg {
    /// `B` or `W`.
    pub color: String,
    /// The vertex (`D4`, `pass`, `resign`).
    pub vertex: String,
    /// Its move number (1 = the first move of the game).
    pub number: usize,
    /// Where it came from.
    pub by: MoveBy,
}

/// One candidate in an analysis message.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Candidate {
    /// The vertex.
    pub vertex: String,
    /// Visits.
    pub visits: u64,
    /// Win probability for the player to move.
    pub winrate: f64,
    /// Lead of the player to move, in points.
    #[serde(rename = "scoreLead")]
    pub score_lead: f64,
    /// The expected continuation.
    pub pv: Vec<String>,
}

/// Throttled analysis on `tengen/<id>/analysis`, from the side to move's point of view.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AnalysisMsg {
    /// Number of moves the analysed position has.
    pub number: usize,
    /// `B` or `W`: whose view the numbers take.
    pub to_move: String,
    /// Root visits.
    pub visits: u64,
    /// Win probability of the player to move.
    pub winrate: f64,
    /// Lead of the player to move.
    #[serde(rename = "scoreLead")]
    pub score_lead: f64,
    /// The best moves, best first.
    pub moves: Vec<Candidate>,
    /// Ownership per point, top row first, +1 = the player to move owns it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ownership: Option<Vec<f32>>,
    /// Analysed by the cluster's pool (`[analysis] remote`), not this device's engine.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pool: bool,
}

impl AnalysisMsg {
    /// The message for a search snapshot `a` of the position after `number` moves, with
    /// at most `top` candidates.
    pub fn of(a: &Analysis, number: usize, top: usize) -> AnalysisMsg {
        let pla = a.root.current_player;
        // The search reports White's view; a panel wants the mover's.
        let flip = |w: f64| if pla == Player::White { w } else { 1.0 - w };
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        AnalysisMsg {
            number,
            to_move: pla.letter().to_string(),
            visits: a.root.visits,
            winrate: round3(flip(a.root.winrate)),
            score_lead: round3(sign * a.root.score_lead),
            moves: a
                .moves
                .iter()
                .take(top)
                .map(|m| Candidate {
                    vertex: a.size.gtp(m.mv),
                    visits: m.visits,
                    winrate: round3(flip(m.winrate)),
                    score_lead: round3(sign * m.score_lead),
                    pv: m.pv.iter().map(|&mv| a.size.gtp(mv)).collect(),
                })
                .collect(),
            ownership: a
                .ownership
                .as_ref()
                .map(|o| o.iter().map(|&v| round3(sign * v as f64) as f32).collect()),
            pool: false,
        }
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// How a camera board reader follows the board, in its status.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CameraTracking {
    /// The board was just found from scratch.
    Found,
    /// The board is followed from frame to frame.
    Tracking,
    /// The board is followed but much of it is hidden (a hand).
    Hidden,
    /// The board is placed by configured corners.
    Manual,
    /// No board in the frames.
    Lost,
    /// No frames (the camera is unplugged, the stream stalled).
    NoFrame,
}

/// The camera reader's status, retained on `tengen/<id>/camera`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CameraStatus {
    /// A board is placed in the frames.
    pub board_found: bool,
    /// How it is followed, or why there is none.
    pub tracking: CameraTracking,
    /// Points not seen on the board (`null` before any board was seen).
    pub unseen: Option<usize>,
    /// The problem, if any, for people (a stalled stream, a size unlike the game's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Something the players or the maker must know, on `tengen/<id>/alert`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Alert {
    /// The physical board disagrees with the game: these points need fixing.
    Fix {
        /// What to change, e.g. `{"point":"D4","want":"empty","seen":"B"}`.
        fixes: Vec<FixMsg>,
        /// The moves assumed when reading the board, if any.
        assuming: Vec<String>,
    },
    /// Several readings fit: the players must say which (e.g. via `play` on `gtp`).
    Ambiguous {
        /// The readings, each a list of moves.
        options: Vec<Vec<String>>,
    },
    /// The board is back in agreement with the game.
    Resolved,
    /// An input was refused.
    Error {
        /// Where it came from (topic name or `serial`).
        source: String,
        /// What was wrong.
        message: String,
    },
    /// An input was not handled at all (the engine was busy and its queue full): the
    /// sender should send it again.
    Dropped {
        /// Where it came from (`command` or `board/snapshot`).
        source: String,
        /// Why, e.g. `queue full`.
        reason: String,
        /// The command's `cmd`, when it could be read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cmd: Option<String>,
        /// The command's `id` (a `gtp` command's), when it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
}

impl Alert {
    /// The alert for a payload on `source` dropped for `reason`, naming the command
    /// (and its id) when the payload says what it was.
    pub fn dropped(source: &str, reason: &str, payload: &[u8]) -> Alert {
        #[derive(Deserialize)]
        struct Named {
            cmd: Option<String>,
            id: Option<String>,
        }
        let named = std::str::from_utf8(payload)
            .ok()
            .filter(|t| t.len() <= MAX_PAYLOAD)
            .and_then(|t| serde_json::from_str::<Named>(t).ok());
        let (cmd, id) = named.map_or((None, None), |n| (n.cmd, n.id));
        Alert::Dropped {
            source: source.into(),
            reason: reason.into(),
            cmd,
            id,
        }
    }
}

/// One point to fix.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FixMsg {
    /// The point.
    pub point: String,
    /// What should be there: `empty`, `B` or `W`.
    pub want: String,
    /// What the board shows.
    pub seen: String,
}

impl FixMsg {
    /// The message for `fix` on a `size` board.
    pub fn of(fix: &Fix, size: BoardSize) -> FixMsg {
        let name = |s: Option<Player>| s.map_or("empty".to_string(), |p| p.letter().to_string());
        FixMsg {
            point: size.gtp(Move::Play(fix.loc)),
            want: name(fix.want),
            seen: match fix.seen {
                crate::Cell::Empty => "empty".into(),
                crate::Cell::Stone(p) => p.letter().to_string(),
                crate::Cell::Unknown => "unseen".into(),
            },
        }
    }
}

/// The answer to a `gtp` command, on `tengen/<id>/gtp/reply`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GtpReply {
    /// The request's id.
    pub id: Option<String>,
    /// Whether it succeeded (`=`) or failed (`?`).
    pub ok: bool,
    /// The reply text.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nine() -> BoardSize {
        BoardSize::square(9).unwrap()
    }

    #[test]
    fn snapshots_in_three_forms() {
        let rows: Vec<String> = (0..9)
            .map(|y| if y == 2 { "..X...O.?" } else { "........." }.to_string())
            .collect();
        let plain = decode_snapshot(rows.join("\n").as_bytes(), nine()).unwrap();
        let json = serde_json::json!({ "rows": rows }).to_string();
        assert_eq!(decode_snapshot(json.as_bytes(), nine()).unwrap(), plain);
        let board = serde_json::json!({ "board": rows.join("\n") }).to_string();
        assert_eq!(decode_snapshot(board.as_bytes(), nine()).unwrap(), plain);
    }

    #[test]
    fn bad_snapshots_are_refused_with_a_reason() {
        let err = |p: &[u8]| decode_snapshot(p, nine()).unwrap_err().to_string();
        assert!(err(&vec![b'.'; MAX_PAYLOAD + 1]).contains("limit"));
        assert!(err(&[0xff, 0xfe]).contains("UTF-8"));
        assert!(err(b"{\"rows\": 3}").contains("bad JSON"));
        assert!(err(b"{\"rows\": [\".........\"]}").contains("1 rows"));
        assert!(err(b"{}").contains("either"));
        assert!(err(b".........").contains("81"));
        assert!(err(&[b'Z'; 81]).contains("'Z'"));
    }

    #[test]
    fn commands_decode_and_check_ranges() {
        let c = decode_command(br#"{"cmd":"new_game","size":9,"komi":7,"engine":"black"}"#);
        assert_eq!(
            c.unwrap(),
            Command::NewGame(GameSettings {
                size: nine(),
                komi: 7.0,
                rules: "chinese".into(),
                handicap: 0,
                engine: EngineSide::Black
            })
        );
        assert_eq!(decode_command(br#"{"cmd":"undo"}"#).unwrap(), Command::Undo);
        let err = |p: &[u8]| decode_command(p).unwrap_err().to_string();
        assert!(err(br#"{"cmd":"new_game","size":99}"#).contains("size"));
        assert!(err(br#"{"cmd":"new_game","size":9,"handicap":1}"#).contains("handicap"));
        assert!(err(br#"{"cmd":"new_game","size":7,"handicap":9}"#).contains("2 to 4"));
        assert!(err(br#"{"cmd":"new_game","size":13,"komi":0.3}"#).contains("komi"));
        assert!(err(br#"{"cmd":"new_game","rules":"chinse"}"#).contains("rules"));
        assert!(err(br#"{"cmd":"level","level":11}"#).contains("level"));
        assert!(err(br#"{"cmd":"level","level":"30k"}"#).contains("level"));
        assert!(err(br#"{"cmd":"level","level":-3}"#).contains("level"));
        assert!(err(br#"{"cmd":"level","level":[1]}"#).contains("bad JSON"));
        let level = |p: &[u8]| match decode_command(p).unwrap() {
            Command::Level { level } => level.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(level(br#"{"cmd":"level","level":4}"#), "4");
        assert_eq!(level(br#"{"cmd":"level","level":"12k"}"#), "12k");
        assert_eq!(level(br#"{"cmd":"level","level":"Max"}"#), "max");
        assert!(err(br#"{"cmd":"fly"}"#).contains("bad JSON"));
        assert!(err(b"not json").contains("bad JSON"));
    }
}
