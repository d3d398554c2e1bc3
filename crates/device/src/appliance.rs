//! The appliance's game: one GTP engine holding the game, fed by board snapshots, MQTT
//! commands and serial GTP, with every change journalled before it is acknowledged.
//!
//! It does no I/O besides the journal: callers hand it inputs and send the messages it
//! leaves in its outbox. All of it runs on one thread (the engine loop).

use std::path::Path;
use std::time::{Duration, Instant};

use tengen_protocol::gtp::{parse_line, AnalyzeArgs, Engine, Reply};
use tengen_rules::{BoardSize, Move, Player};

pub use crate::game_settings::GameSettings;
use crate::history::{History, MAX_RECORDS};
use crate::journal::{Journal, JournalError};
use crate::payload::{
    decode_command, decode_snapshot, Alert, AnalysisMsg, Command, EngineSide, FixMsg, GtpReply,
    MoveMsg, State,
};
use crate::{Cell, Reconciler, Verdict};

/// GTP commands a `gtp` command over MQTT may run unless configured otherwise: questions,
/// and the moves a player at the board could make anyway. Searches, parameters and
/// clocks stay with the serial controller and the configuration.
pub const DEFAULT_REMOTE_GTP: &[&str] = &[
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "showboard",
    "printsgf",
    "final_score",
    "final_status_list",
    "kata-get-rules",
    "kata-get-param",
    "kata-list-params",
    "play",
    "undo",
];

/// Which GTP commands the MQTT pass-through runs.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoteGtp {
    /// None: every `gtp` command is refused.
    Off,
    /// Only these commands.
    Only(Vec<String>),
    /// Every command the engine knows (a trusted broker).
    All,
}

impl Default for RemoteGtp {
    fn default() -> Self {
        RemoteGtp::Only(DEFAULT_REMOTE_GTP.iter().map(|s| s.to_string()).collect())
    }
}

impl RemoteGtp {
    /// Whether command `name` may run.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            RemoteGtp::Off => false,
            RemoteGtp::Only(names) => names.iter().any(|n| n == name),
            RemoteGtp::All => true,
        }
    }
}

/// The appliance's behaviour.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The game started when there is none to resume.
    pub game: GameSettings,
    /// Identical snapshots needed before one is trusted.
    pub window: usize,
    /// Whether analysis is published from the start.
    pub analysis: bool,
    /// Whether analysis carries ownership.
    pub ownership: bool,
    /// Least time between two analysis messages.
    pub analysis_interval: Duration,
    /// Candidates per analysis message.
    pub analysis_top: usize,
    /// Visits after which analysis of a position stops (0: never).
    pub analysis_max_visits: u64,
    /// What the MQTT `gtp` pass-through may run.
    pub remote_gtp: RemoteGtp,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            game: GameSettings::default(),
            // The appliance's one default (the configuration's `board.stability` reads it).
            window: 3,
            analysis: false,
            ownership: false,
            analysis_interval: Duration::from_millis(500),
            analysis_top: 5,
            analysis_max_visits: 20_000,
            remote_gtp: RemoteGtp::default(),
        }
    }
}

/// One message to publish, under `tengen/<id>/`.
#[derive(Clone, Debug, PartialEq)]
pub struct Out {
    /// The topic under the device's prefix, e.g. `state`.
    pub topic: &'static str,
    /// JSON.
    pub payload: String,
    /// Whether the broker keeps it for late subscribers.
    pub retain: bool,
}

/// Why the appliance could not start.
#[derive(Debug, thiserror::Error)]
pub enum ApplianceError {
    /// The journal could not be opened or written.
    #[error("journal: {0}")]
    Journal(#[from] JournalError),
    /// The default game could not be set up.
    #[error("setting up the game: {0}")]
    Setup(String),
}

/// A running analysis.
struct Pondering {
    args: AnalyzeArgs,
    last: Option<Instant>,
    visits: u64,
}

/// The game, its journal, and what the board last showed.
pub struct Appliance {
    engine: Engine,
    /// `None` after a write failed: reopened (and checked) before the next change, and
    /// until that works every change is refused.
    journal: Option<Journal>,
    /// The journal's records as a replay needs them: what the engine is rebuilt from
    /// when a change could not be recorded.
    history: History,
    state_dir: std::path::PathBuf,
    reconciler: Reconciler,
    settings: Settings,
    /// The game on the board, as its records set it up.
    game: GameSettings,
    level: Option<u8>,
    pondering: Option<Pondering>,
    last_alert: Option<Alert>,
    /// The game on show is safe in the archive (or has no moves to keep).
    archived: bool,
    outbox: Vec<Out>,
}

impl Appliance {
    /// Opens the journal in `state_dir` and resumes its game, or starts the default one.
    /// A journal damaged before its last line is kept aside and its valid prefix resumed,
    /// with an alert: the daemon must come back up without anyone editing files.
    pub fn open(
        engine: Engine,
        state_dir: &Path,
        settings: Settings,
    ) -> Result<Appliance, ApplianceError> {
        settings.game.check().map_err(ApplianceError::Setup)?;
        let opened = Journal::open_or_recover(state_dir)?;
        let mut app = Appliance {
            engine,
            journal: Some(opened.journal),
            history: History::default(),
            state_dir: state_dir.to_path_buf(),
            reconciler: Reconciler::new(settings.window),
            game: settings.game.clone(),
            settings,
            level: None,
            pondering: None,
            last_alert: None,
            archived: false,
            outbox: Vec::new(),
        };
        if let Some(q) = &opened.quarantined {
            app.alert_error(
                "journal",
                format!(
                    "the journal was damaged at line {} ({}); kept aside as {}; \
                     the game resumes from the {} records before it",
                    q.line,
                    q.reason,
                    q.kept_as.display(),
                    opened.records.len()
                ),
            );
        }
        if opened.records.is_empty() {
            let game = app.game.clone();
            app.start_game(&game).map_err(ApplianceError::Setup)?;
        } else {
            log::info!(
                "resuming the game from {} journal records",
                opened.records.len()
            );
            app.replay(&opened.records);
            app.compact();
        }
        app.after_change();
        Ok(app)
    }

    /// The engine (for reading the game).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Takes the messages to publish.
    pub fn take_outbox(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.outbox)
    }

    /// Publishes the state again (after a reconnect).
    pub fn republish(&mut self) {
        self.push_state();
    }

    /// A command that will never be carried out (the daemon is stopping): its sender is
    /// told so on `alert`, naming the command.
    pub fn drop_command(&mut self, payload: &[u8], reason: &str) {
        self.push("alert", &Alert::dropped("command", reason, payload), false);
    }

    /// True while analysis runs and wants frequent ticks.
    pub fn is_pondering(&self) -> bool {
        self.pondering.is_some()
    }

    /// A snapshot payload arrived.
    pub fn on_snapshot(&mut self, payload: &[u8]) {
        let size = self.engine.game().board().size();
        let snap = match decode_snapshot(payload, size) {
            Ok(s) => s,
            Err(e) => return self.alert_error("board/snapshot", e.to_string()),
        };
        if self.engine.game().is_over() {
            // Players clearing the board after a game start the next one.
            if size.points().all(|l| snap.at(l) == Cell::Empty) {
                let game = self.game.clone();
                if let Err(e) = self.new_game(&game) {
                    self.alert_error("board/snapshot", e);
                }
            }
            return;
        }
        let verdict = match self.reconciler.observe(self.engine.game(), snap) {
            Ok(Some(v)) => v,
            Ok(None) => return,
            Err(e) => return self.alert_error("board/snapshot", e.to_string()),
        };
        log::debug!("board: {verdict:?}");
        match verdict {
            Verdict::InSync { .. } => self.set_alert(None),
            Verdict::Waiting => {}
            Verdict::Moves { moves, .. } => {
                for (p, l) in moves {
                    if self.game.engine.plays(p) {
                        let fix = FixMsg::of(
                            &crate::Fix {
                                loc: l,
                                want: None,
                                seen: Cell::Stone(p),
                            },
                            size,
                        );
                        return self.set_alert(Some(Alert::Fix {
                            fixes: vec![fix],
                            assuming: Vec::new(),
                        }));
                    }
                    let line = format!("play {} {}", p.letter(), size.gtp(Move::Play(l)));
                    if let Err(e) = self.change(&line) {
                        return self.alert_error("board/snapshot", e);
                    }
                }
                self.set_alert(None);
            }
            Verdict::Setup { stones } => {
                if stones.iter().any(|&(p, _)| p == Player::White) {
                    return self.alert_error(
                        "board/snapshot",
                        "white stones before the first move: only a black handicap can be set \
                         up on the board"
                            .into(),
                    );
                }
                let points: Vec<String> = stones
                    .iter()
                    .map(|&(_, l)| size.gtp(Move::Play(l)))
                    .collect();
                if let Err(e) = self.change(&format!("set_free_handicap {}", points.join(" "))) {
                    return self.alert_error("board/snapshot", e);
                }
                self.set_alert(None);
            }
            Verdict::Ambiguous { options } => {
                let options = options
                    .iter()
                    .map(|seq| {
                        seq.iter()
                            .map(|&(p, l)| format!("{} {}", p.letter(), size.gtp(Move::Play(l))))
                            .collect()
                    })
                    .collect();
                self.set_alert(Some(Alert::Ambiguous { options }));
            }
            Verdict::Mismatch { fixes, assuming } => {
                let fixes = fixes.iter().map(|f| FixMsg::of(f, size)).collect();
                let assuming = assuming
                    .iter()
                    .map(|&(p, l)| format!("{} {}", p.letter(), size.gtp(Move::Play(l))))
                    .collect();
                self.set_alert(Some(Alert::Fix { fixes, assuming }));
            }
        }
    }

    /// A command payload arrived.
    pub fn on_command(&mut self, payload: &[u8]) {
        let cmd = match decode_command(payload) {
            Ok(c) => c,
            Err(e) => return self.alert_error("command", e.to_string()),
        };
        let result = match cmd {
            Command::NewGame(g) => self.new_game(&g),
            Command::Undo => self.undo(),
            Command::Pass => {
                let p = self.human_to_move();
                self.change(&format!("play {} pass", p.letter()))
            }
            Command::Resign => {
                let p = self.human_to_move();
                self.change(&format!("tengen-resign {}", p.letter()))
            }
            Command::Level { level } => self.change(&format!("tengen-level {level}")),
            Command::Analysis { on, ownership } => {
                let line = format!("tengen-analysis {} {}", on_off(on), on_off(ownership));
                self.change(&line)
            }
            Command::Gtp { line, id } => {
                let name = parse_line(&line).and_then(|c| c.ok()).map(|c| c.name);
                let reply = match name {
                    Some(n) if !self.settings.remote_gtp.allows(&n) => Reply::Failure(format!(
                        "{n} is not allowed over MQTT (see mqtt.gtp_commands)"
                    )),
                    _ => self.gtp(&line),
                };
                let (ok, text) = match reply {
                    Reply::Success(t) => (true, t),
                    Reply::Failure(t) => (false, t),
                };
                self.push(
                    "gtp/reply",
                    &GtpReply {
                        id,
                        ok,
                        text: text.trim_end().to_string(),
                    },
                    false,
                );
                Ok(String::new())
            }
        };
        if let Err(e) = result {
            self.alert_error("command", e);
        }
    }

    /// Carries out one GTP line (the serial controller, or an allowed MQTT pass-through);
    /// state changes are journalled before the reply is given.
    pub fn gtp(&mut self, line: &str) -> Reply {
        let cmd = match parse_line(line) {
            None => return Reply::Success(String::new()),
            Some(Err(e)) => return Reply::Failure(e.to_string()),
            Some(Ok(c)) => c,
        };
        let name = cmd.name.as_str();
        let args = cmd.args.join(" ");
        let result = match name {
            "loadsgf" => Err("loadsgf is not available on the appliance; use new_game".into()),
            "genmove" | "kgs-genmove_cleanup" => self.genmove_as(name, &args),
            "place_free_handicap" => self.place_free_handicap(line),
            "boardsize" | "rectangular_boardsize" | "clear_board" => {
                self.new_board(name, &cmd.args)
            }
            n if changes_state(n) => self.change(&format!("{name} {args}")),
            _ => self.stateless(line),
        };
        match result {
            Ok(t) => Reply::Success(t),
            Err(e) => Reply::Failure(e),
        }
    }

    /// Lets time pass: the engine moves when it is its turn, analysis is published.
    pub fn tick(&mut self, now: Instant) {
        let game = self.engine.game();
        if !game.is_over() && self.game.engine.plays(game.to_move()) {
            let c = game.to_move().letter().to_string();
            if let Err(e) = self.genmove_as("genmove", &c) {
                self.alert_error("engine", e);
                // Not again at once: the players can undo or start anew.
                self.game.engine = EngineSide::None;
            }
            return;
        }
        let Some(p) = &mut self.pondering else {
            return;
        };
        let due = p
            .last
            .is_none_or(|t| now.duration_since(t) >= self.settings.analysis_interval);
        let searching = self.engine.is_searching();
        if !due && searching {
            return;
        }
        let Some(a) = self.engine.analysis(self.settings.ownership) else {
            return;
        };
        if a.moves.is_empty() || a.root.visits == p.visits {
            if !searching {
                self.stop_pondering();
            }
            return;
        }
        p.last = Some(now);
        p.visits = a.root.visits;
        let number = self.engine.game().turns().len();
        let msg = AnalysisMsg::of(&a, number, self.settings.analysis_top);
        self.push("analysis", &msg, false);
        let max = self.settings.analysis_max_visits;
        if !searching || (max > 0 && a.root.visits >= max) {
            self.stop_pondering();
        }
    }

    fn human_to_move(&self) -> Player {
        let p = self.engine.game().to_move();
        if self.game.engine.plays(p) {
            p.opp()
        } else {
            p
        }
    }

    /// Runs a command that changes nothing to journal.
    fn stateless(&mut self, line: &str) -> Result<String, String> {
        self.stop_pondering();
        let reply = self.run(line);
        self.start_pondering();
        reply
    }

    /// The engine chooses handicap stones; they are journalled as the stones chosen, so
    /// that a replay puts the same ones.
    fn place_free_handicap(&mut self, line: &str) -> Result<String, String> {
        self.writable()?;
        let stones = self.stateless(line)?;
        self.record(&format!("set_free_handicap {stones}"))?;
        self.after_change();
        Ok(stones)
    }

    /// GTP's `boardsize`, `rectangular_boardsize` and `clear_board`: a new game with the
    /// current komi, rules and side, the old one archived as `new_game` would.
    fn new_board(&mut self, name: &str, args: &[String]) -> Result<String, String> {
        let number = |a: &String| {
            a.parse::<usize>()
                .map_err(|_| format!("{name}: not an integer"))
        };
        let size = match (name, args) {
            ("clear_board", []) => Ok(self.engine.game().board().size()),
            ("boardsize", [n]) => BoardSize::square(number(n)?),
            ("rectangular_boardsize", [x, y]) => BoardSize::new(number(x)?, number(y)?),
            ("clear_board", _) => return Err("clear_board takes no arguments".into()),
            _ => return Err(format!("{name}: wrong number of arguments")),
        }
        .map_err(|_| "unacceptable size")?;
        let g = GameSettings {
            size,
            handicap: 0,
            ..self.game.clone()
        };
        self.new_game(&g)
    }

    /// The engine moves for the colour in `args`; the move is journalled, then published.
    fn genmove_as(&mut self, name: &str, args: &str) -> Result<String, String> {
        self.refuse_after_end()?;
        self.stop_pondering();
        let pla: Player = args.trim().parse().map_err(|_| "invalid color")?;
        // No search whose move could not be recorded.
        self.writable()?;
        self.push_state_thinking(true);
        let vertex = match self.run(&format!("{name} {args}")) {
            Ok(v) => v,
            Err(e) => {
                self.push_state();
                return Err(e);
            }
        };
        let record = if vertex.eq_ignore_ascii_case("resign") {
            self.engine.resign(pla);
            format!("tengen-resign {}", pla.letter())
        } else {
            format!("play {} {vertex}", pla.letter())
        };
        self.record(&record)?;
        self.push(
            "move",
            &MoveMsg {
                color: pla.letter().to_string(),
                vertex: vertex.clone(),
                number: self.engine.game().turns().len(),
            },
            false,
        );
        self.after_change();
        Ok(vertex)
    }

    /// Applies a state change, journals it, and publishes the new state; if it cannot be
    /// journalled the engine goes back to what the journal holds and the change is refused.
    fn change(&mut self, line: &str) -> Result<String, String> {
        self.stop_pondering();
        self.writable()?;
        if self.history.len() >= MAX_RECORDS {
            return Err(format!(
                "the game has {MAX_RECORDS} records, the most one game may have; \
                 start a new game"
            ));
        }
        let reply = self.apply(line)?;
        self.record(line)?;
        self.after_change();
        Ok(reply)
    }

    /// Journals an applied change; if the disk fails, the game goes back to what the
    /// journal holds, so that nothing unrecorded is ever acknowledged.
    fn record(&mut self, line: &str) -> Result<(), String> {
        let written = match self.journal.as_mut() {
            Some(j) => j.append(line).map(|_| ()).map_err(|e| e.to_string()),
            None => Err("the journal is not open".into()),
        };
        match written {
            Ok(()) => {
                self.history.push(line);
                self.compact();
                Ok(())
            }
            Err(e) => {
                log::error!("journal append failed: {e}; the game goes back to what is recorded");
                self.journal = None;
                self.rebuild();
                self.push_state();
                Err(format!(
                    "could not record the change, so it was undone: {e}"
                ))
            }
        }
    }

    /// Makes sure the journal can take a change: after a failure it is reopened, and the
    /// engine rebuilt from what the disk really holds if that differs from memory.
    fn writable(&mut self) -> Result<(), String> {
        if self.journal.is_some() {
            return Ok(());
        }
        match Journal::open(&self.state_dir) {
            Ok((journal, records)) => {
                let on_disk = History::of(&records);
                self.journal = Some(journal);
                if on_disk != self.history {
                    log::warn!("the journal on disk differs from memory; replaying the disk");
                    self.history = on_disk;
                    self.rebuild();
                }
                log::info!("the journal is writable again");
                Ok(())
            }
            Err(e) => Err(format!(
                "the journal cannot be opened ({e}); changes are refused until it can"
            )),
        }
    }

    /// Rewrites the journal as its history when undos and repeated settings have made it
    /// much longer, so that it stays bounded by the game.
    fn compact(&mut self) {
        let Some(j) = self.journal.as_mut() else {
            return;
        };
        if (j.len() as usize) <= 2 * self.history.len() + 64 {
            return;
        }
        if let Err(e) = j.reset(self.history.records()) {
            // The old journal or the new one is in place, and they replay alike.
            log::warn!("could not compact the journal: {e}");
            self.journal = None;
        }
    }

    /// Puts the engine back to the history's game.
    fn rebuild(&mut self) {
        let records = std::mem::take(&mut self.history).records().to_vec();
        self.replay(&records);
        self.reconciler = Reconciler::new(self.settings.window);
    }

    /// Applies `records` from a fresh board; those that apply become the history.
    fn replay(&mut self, records: &[String]) {
        self.stop_pondering();
        self.history = History::default();
        let starts_board = records.first().is_some_and(|r| {
            matches!(
                r.split_whitespace().next(),
                Some("boardsize" | "rectangular_boardsize")
            )
        });
        if !starts_board {
            // Nothing of the engine's present game may survive into the replay.
            for l in &self.settings.game.setup_lines(&[]) {
                if let Err(e) = self.apply(l) {
                    log::error!("cannot set up the default game ({l}): {e}");
                }
            }
        }
        for r in records {
            match self.apply(r) {
                Ok(_) => self.history.push(r),
                // Records are written after success, so this means a changed engine.
                Err(e) => log::warn!("journal record {r:?} no longer applies: {e}"),
            }
        }
    }

    /// Applies one record, the appliance's own pseudo-commands included, and keeps the
    /// game's settings in step with it.
    fn apply(&mut self, line: &str) -> Result<String, String> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        match (name, args.as_slice()) {
            ("tengen-engine-side", [side]) => {
                self.game.engine =
                    EngineSide::parse(side).ok_or_else(|| format!("unknown side {side}"))?;
                Ok(String::new())
            }
            ("tengen-resign", [p]) => {
                let p: Player = p.parse().map_err(|_| "invalid color")?;
                self.refuse_after_end()?;
                self.engine.resign(p);
                Ok(String::new())
            }
            ("play" | "undo", _) => {
                self.refuse_after_end()?;
                self.run(line)
            }
            ("tengen-analysis", [on, own]) => {
                self.settings.analysis = *on == "on";
                self.settings.ownership = *own == "on";
                Ok(String::new())
            }
            ("tengen-level", [level]) => {
                self.run(line)?;
                self.level = level.parse().ok();
                Ok(String::new())
            }
            ("boardsize" | "rectangular_boardsize", _) => {
                let reply = self.run(line)?;
                self.game.size = self.engine.game().board().size();
                self.game.handicap = 0;
                self.archived = false;
                Ok(reply)
            }
            ("komi", [k]) => {
                let reply = self.run(line)?;
                self.game.komi = k.parse().map_err(|_| "komi not a float")?;
                Ok(reply)
            }
            ("kata-set-rules" | "kgs-rules", [_, ..]) => {
                let reply = self.run(line)?;
                self.game.rules = args.join(" ");
                Ok(reply)
            }
            ("fixed_handicap", [n]) => {
                let reply = self.run(line)?;
                self.game.handicap = n.parse().unwrap_or(0);
                Ok(reply)
            }
            _ => self.run(line),
        }
    }

    /// The engine would reopen a finished game (KGS's cleanup), but here the game is
    /// archived and the journal holds the next one's setup: a move or an undo journalled
    /// there would be replayed on the wrong game after a restart, so both wait.
    fn refuse_after_end(&self) -> Result<(), String> {
        if self.engine.game().is_over() {
            return Err("the game is over; clear the board or start a new game".into());
        }
        Ok(())
    }

    fn run(&mut self, line: &str) -> Result<String, String> {
        match parse_line(line) {
            Some(Ok(cmd)) => match self.engine.handle(&cmd) {
                Reply::Success(t) => Ok(t),
                Reply::Failure(e) => Err(e),
            },
            Some(Err(e)) => Err(e.to_string()),
            None => Ok(String::new()),
        }
    }

    fn undo(&mut self) -> Result<String, String> {
        self.change("undo")?;
        // Back to the player's own turn, past the engine's reply.
        let game = self.engine.game();
        if self.game.engine.plays(game.to_move()) && !game.turns().is_empty() {
            self.change("undo")?;
        }
        Ok(String::new())
    }

    /// Archives the game so far (if it has moves) and starts `g`; checked whole first, and
    /// refused, with the old game kept, when the old game cannot be archived.
    fn new_game(&mut self, g: &GameSettings) -> Result<String, String> {
        g.check()?;
        self.stop_pondering();
        self.writable()?;
        self.archive()?;
        self.start_game(g)?;
        self.after_change();
        Ok(String::new())
    }

    /// Sets up `g` in the engine and makes its setup the whole journal; on any failure
    /// the engine goes back to the journal's game.
    fn start_game(&mut self, g: &GameSettings) -> Result<(), String> {
        let lines = g.setup_lines(&self.setting_lines());
        for l in &lines {
            if let Err(e) = self.apply(l) {
                self.rebuild();
                return Err(format!("{l}: {e}"));
            }
        }
        if let Err(e) = self.reset_journal(&lines) {
            self.rebuild();
            return Err(format!(
                "could not record the new game, so it was not started: {e}"
            ));
        }
        self.reconciler = Reconciler::new(self.settings.window);
        self.last_alert = None;
        self.archived = false;
        Ok(())
    }

    /// Makes `lines` (a new game's setup) the whole journal and its history; after a
    /// failure the journal is closed, to be reopened before the next change.
    fn reset_journal(&mut self, lines: &[String]) -> Result<(), String> {
        let reset = match self.journal.as_mut() {
            Some(j) => j.reset(lines).map_err(|e| e.to_string()),
            None => Err("the journal is not open".into()),
        };
        match reset {
            Ok(()) => {
                self.history = History::of(lines);
                Ok(())
            }
            Err(e) => {
                self.journal = None;
                Err(e)
            }
        }
    }

    /// Keeps the game on show as SGF, in `games/` or else beside the journal; an error
    /// (with an alert) when it could be kept nowhere.
    fn archive(&mut self) -> Result<(), String> {
        if self.archived || self.engine.game().turns().is_empty() {
            return Ok(());
        }
        let sgf = self.run("printsgf")?;
        let name = format!(
            "{}-{}moves",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            self.engine.game().turns().len()
        );
        let Some(j) = self.journal.as_mut() else {
            return Err("the journal is not open; the game stays in it".into());
        };
        match j.archive(&name, &sgf) {
            Ok(path) => log::info!("game archived as {}", path.display()),
            Err(e) => match j.archive_beside(&name, &sgf) {
                Ok(path) => self.alert_error(
                    "archive",
                    format!(
                        "could not archive the game in games/ ({e}); it was saved as {}",
                        path.display()
                    ),
                ),
                Err(e2) => {
                    let msg = format!(
                        "could not archive the game ({e}; {e2}); it stays in the journal \
                         until it can be archived"
                    );
                    self.alert_error("archive", msg.clone());
                    return Err(msg);
                }
            },
        }
        self.archived = true;
        Ok(())
    }

    /// After any change: archive a finished game, publish the state, analyse anew.
    fn after_change(&mut self) {
        if self.engine.game().is_over() && !self.archived && self.archive().is_ok() {
            // The journal now holds the next game's setup; the finished board stays on
            // show until a new game starts or the board is cleared. If that cannot be
            // recorded the finished game stays in the journal: nothing is lost, and the
            // next game's start records its own setup anyway.
            let lines = self.game.setup_lines(&self.setting_lines());
            if let Err(e) = self.reset_journal(&lines) {
                log::error!("could not record the next game's setup: {e}");
            }
        }
        self.push_state();
        self.start_pondering();
    }

    /// The appliance's own settings as records, carried into each new game.
    fn setting_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "tengen-analysis {} {}",
            on_off(self.settings.analysis),
            on_off(self.settings.ownership)
        )];
        if let Some(level) = self.level {
            lines.push(format!("tengen-level {level}"));
        }
        lines
    }

    fn start_pondering(&mut self) {
        let game = self.engine.game();
        if !self.settings.analysis
            || self.pondering.is_some()
            || game.is_over()
            || self.game.engine.plays(game.to_move())
        {
            return;
        }
        let mut args = vec!["interval", "1000000"];
        if self.settings.ownership {
            args.extend(["ownership", "true"]);
        }
        match self.engine.start_analyze("kata-analyze", &args) {
            Ok(a) => {
                self.pondering = Some(Pondering {
                    args: a,
                    last: None,
                    visits: 0,
                })
            }
            Err(e) => log::warn!("analysis could not start: {e}"),
        }
    }

    fn stop_pondering(&mut self) {
        if let Some(p) = self.pondering.take() {
            self.engine.finish_analyze(&p.args);
        }
    }

    fn push_state(&mut self) {
        self.push_state_thinking(false);
    }

    fn push_state_thinking(&mut self, thinking: bool) {
        let state = State::of(self.engine.game(), self.game.engine, thinking);
        self.push("state", &state, true);
    }

    fn set_alert(&mut self, alert: Option<Alert>) {
        if alert == self.last_alert {
            return;
        }
        let resolved = alert.is_none();
        let was = std::mem::replace(&mut self.last_alert, alert.clone());
        match alert {
            Some(a) => self.push("alert", &a, false),
            None if was.is_some() && resolved => self.push("alert", &Alert::Resolved, false),
            None => {}
        }
    }

    fn alert_error(&mut self, source: &str, message: String) {
        log::warn!("{source}: {message}");
        let alert = Alert::Error {
            source: source.to_string(),
            message,
        };
        self.push("alert", &alert, false);
    }

    fn push<T: serde::Serialize>(&mut self, topic: &'static str, msg: &T, retain: bool) {
        match serde_json::to_string(msg) {
            Ok(payload) => self.outbox.push(Out {
                topic,
                payload,
                retain,
            }),
            Err(e) => log::error!("cannot encode a {topic} message: {e}"),
        }
    }
}

/// GTP commands whose success changes the game (and so must be journalled); the board
/// size commands start a new game and are handled before this is asked.
fn changes_state(name: &str) -> bool {
    matches!(
        name,
        "komi"
            | "play"
            | "undo"
            | "fixed_handicap"
            | "set_free_handicap"
            | "kgs-rules"
            | "kata-set-rules"
            | "tengen-level"
    )
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}
