//! The appliance's game: one GTP engine holding the game, fed by board snapshots, MQTT
//! commands and serial GTP, with every change journalled before it is acknowledged.
//!
//! It does no I/O besides the journal: callers hand it inputs and send the messages it
//! leaves in its outbox. All of it runs on one thread (the engine loop).

use std::path::Path;
use std::time::{Duration, Instant};

use tengen_protocol::gtp::{
    parse_line, Analyze, AnalyzeArgs, AnalyzeRequest, Command as GtpCommand, Engine, Level, Reply,
    Vertex,
};
use tengen_rules::{BoardSize, Move, Player};

pub use crate::game_settings::GameSettings;
use crate::history::{History, MAX_RECORDS};
use crate::journal::{self, Journal, JournalError};
use crate::payload::{
    decode_command, decode_snapshot, Alert, AnalysisMsg, CameraStatus, Command, EngineSide, FixMsg,
    GtpReply, MoveBy, MoveMsg, State,
};
use crate::record::Record;
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
    /// Analysis is done by the cluster's pool, not by the engine (see
    /// [`Appliance::remote_query`]).
    pub remote_analysis: bool,
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
            remote_analysis: false,
        }
    }
}

/// One message to publish, under `tengen/<id>/`.
#[derive(Clone, Debug, PartialEq)]
pub struct Out {
    /// The topic under the device's prefix, e.g. `state`.
    pub topic: &'static str,
    /// JSON text, or for a picture (the camera's thumbnail) its JPEG bytes.
    pub payload: Vec<u8>,
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
    level: Option<Level>,
    pondering: Option<Pondering>,
    /// With remote analysis, the pool left a job unanswered: the engine analyses.
    pool_silent: bool,
    last_alert: Option<Alert>,
    /// The camera reader's last status, if a camera is in use.
    camera: Option<CameraStatus>,
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
        // A journal that cannot be written (a full disk, a read-only card) must not keep
        // the board down: the game is shown from what can be read, and changes are
        // refused, with an alert, until the journal can be written again.
        let (journal, records, quarantined, unwritable) = match Journal::open_or_recover(state_dir)
        {
            Ok(o) => (Some(o.journal), o.records, o.quarantined, None),
            Err(e @ JournalError::Corrupt { .. }) => return Err(e.into()),
            Err(e) => (None, journal::read_only(state_dir), None, Some(e)),
        };
        let mut app = Appliance {
            engine,
            journal,
            history: History::default(),
            state_dir: state_dir.to_path_buf(),
            reconciler: Reconciler::new(settings.window),
            game: settings.game.clone(),
            settings,
            level: None,
            pondering: None,
            pool_silent: false,
            last_alert: None,
            camera: None,
            archived: false,
            outbox: Vec::new(),
        };
        let mut unwritable = unwritable.map(|e| e.to_string());
        if records.is_empty() && unwritable.is_none() {
            let game = app.game.clone();
            if let Err(e) = app.start_game(&game) {
                if app.journal.is_some() {
                    return Err(ApplianceError::Setup(e));
                }
                unwritable = Some(e);
            }
        }
        if let Some(e) = &unwritable {
            if records.is_empty() {
                // Shown, not recorded: the setup goes in first once the journal can be
                // written (see `writable`).
                app.show_unrecorded();
            }
            app.alert_error(
                "journal",
                format!(
                    "the journal cannot be written ({e}); the game is shown from the {} \
                     records read, and changes are refused until it can be written \
                     (free space in the state directory)",
                    records.len()
                ),
            );
        }
        if let Some(q) = &quarantined {
            app.alert_error(
                "journal",
                format!(
                    "the journal was damaged at line {} ({}); kept aside as {}; \
                     the game resumes from the {} records before it",
                    q.line,
                    q.reason,
                    q.kept_as.display(),
                    records.len()
                ),
            );
        }
        if !records.is_empty() {
            log::info!("resuming the game from {} journal records", records.len());
            app.replay(&read_records(&records));
            app.compact();
        }
        app.after_change();
        Ok(app)
    }

    /// The engine (for reading the game).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine's level, once a `tengen-level` or `level` command set one.
    pub fn level(&self) -> Option<Level> {
        self.level
    }

    /// Takes the messages to publish.
    pub fn take_outbox(&mut self) -> Vec<Out> {
        std::mem::take(&mut self.outbox)
    }

    /// Publishes the state again (after a reconnect).
    pub fn republish(&mut self) {
        self.push_state();
        if let Some(c) = self.camera.clone() {
            self.push("camera", &c, true);
        }
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
        match decode_snapshot(payload, size) {
            Ok(snap) => self.on_board(snap),
            Err(e) => self.alert_error("board/snapshot", e.to_string()),
        }
    }

    /// A camera reader's status and, once it has settled on one, the board it sees: the
    /// status is retained on `camera` (published when it changes), and the board goes
    /// through the reconciler exactly as a snapshot payload does.
    pub fn on_camera(&mut self, mut status: CameraStatus, snap: Option<crate::Snapshot>) {
        let size = self.engine.game().board().size();
        let snap = snap.filter(|s| {
            if s.size() == size {
                return true;
            }
            status.message = Some(format!(
                "the camera sees a {} board, the game is {}",
                s.size(),
                size
            ));
            false
        });
        if self.camera.as_ref() != Some(&status) {
            self.push("camera", &status, true);
            self.camera = Some(status);
        }
        if let Some(snap) = snap {
            self.on_board(snap);
        }
    }

    /// A board as seen, from a snapshot payload or a camera.
    fn on_board(&mut self, snap: crate::Snapshot) {
        let size = self.engine.game().board().size();
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
                    let play = GtpCommand::Play(p, Vertex::of(size, Move::Play(l)));
                    if let Err(e) = self.change_by(play.into(), MoveBy::Board) {
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
                let points = stones
                    .iter()
                    .map(|&(_, l)| Vertex::of(size, Move::Play(l)))
                    .collect();
                if let Err(e) = self.change(GtpCommand::SetFreeHandicap(points).into()) {
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
            Command::Gtp { line, id } => {
                self.remote_gtp(&line, id);
                Ok(String::new())
            }
            cmd => self.control(cmd),
        };
        if let Err(e) = result {
            self.alert_error("command", e);
        }
    }

    /// Carries out a decoded command, journalled as one from MQTT would be, and says how
    /// it went (an MQTT command's failure goes to `alert`; this caller answers its own).
    /// A `gtp` command is refused: it has its own allow-list and reply topic.
    pub fn control(&mut self, cmd: Command) -> Result<String, String> {
        match cmd {
            Command::NewGame(g) => self.new_game(&g),
            Command::Undo => self.undo(),
            Command::Pass => {
                let p = self.human_to_move();
                self.change(GtpCommand::Play(p, Vertex::PASS).into())
            }
            Command::Resign => {
                let p = self.human_to_move();
                self.change(Record::Resign(p))
            }
            Command::Level { level } => self.change(GtpCommand::TengenLevel(level).into()),
            Command::Analysis { on, ownership } => self.change(Record::Analysis { on, ownership }),
            Command::Gtp { .. } => Err("gtp commands go over MQTT or the serial line".into()),
        }
    }

    /// An MQTT `gtp` command: run if `mqtt.gtp_commands` allows it, answered on `gtp/reply`.
    fn remote_gtp(&mut self, line: &str, id: Option<String>) {
        let name = parse_line(line).and_then(|c| c.ok()).map(|c| c.name);
        let reply = match name {
            Some(n) if !self.settings.remote_gtp.allows(&n) => Reply::Failure(format!(
                "{n} is not allowed over MQTT (see mqtt.gtp_commands)"
            )),
            _ => self.gtp(line),
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
    }

    /// Carries out one GTP line (the serial controller, or an allowed MQTT pass-through);
    /// state changes are journalled before the reply is given.
    pub fn gtp(&mut self, line: &str) -> Reply {
        let line = match parse_line(line) {
            None => return Reply::Success(String::new()),
            Some(Err(e)) => return Reply::Failure(e.to_string()),
            Some(Ok(l)) => l,
        };
        let cmd = match GtpCommand::parse(&line.name, &line.args) {
            Ok(c) => c,
            Err(e) => return Reply::Failure(e.to_string()),
        };
        let result = match cmd {
            GtpCommand::Loadsgf { .. } => {
                Err("loadsgf is not available on the appliance; use new_game".into())
            }
            GtpCommand::Genmove(p) => self.genmove_as(p, false),
            GtpCommand::KgsGenmoveCleanup(p) => self.genmove_as(p, true),
            GtpCommand::PlaceFreeHandicap(_) => self.place_free_handicap(&cmd),
            GtpCommand::Boardsize(size) | GtpCommand::RectangularBoardsize(size) => {
                self.new_board(size)
            }
            GtpCommand::ClearBoard => self.new_board(self.engine.game().board().size()),
            c if c.changes_game() => self.change(c.into()),
            c => self.stateless(&c),
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
            let p = game.to_move();
            if let Err(e) = self.genmove_as(p, false) {
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
    fn stateless(&mut self, cmd: &GtpCommand) -> Result<String, String> {
        self.stop_pondering();
        let reply = self.run(cmd);
        self.start_pondering();
        reply
    }

    /// The engine chooses handicap stones; they are journalled as the stones chosen, so
    /// that a replay puts the same ones.
    fn place_free_handicap(&mut self, cmd: &GtpCommand) -> Result<String, String> {
        self.writable()?;
        let reply = self.stateless(cmd)?;
        let board = self.engine.game().board();
        let size = board.size();
        let stones = size
            .points()
            .filter(|&l| board.stone(l).is_some())
            .map(|l| Vertex::of(size, Move::Play(l)))
            .collect();
        self.record(&GtpCommand::SetFreeHandicap(stones).into())?;
        self.after_change();
        Ok(reply)
    }

    /// GTP's `boardsize`, `rectangular_boardsize` and `clear_board`: a new game with the
    /// current komi, rules and side, the old one archived as `new_game` would.
    fn new_board(&mut self, size: BoardSize) -> Result<String, String> {
        let g = GameSettings {
            size,
            handicap: 0,
            ..self.game.clone()
        };
        self.new_game(&g)
    }

    /// The engine moves for `pla` (KGS's cleanup rules if `cleanup`); the move is
    /// journalled, then published.
    fn genmove_as(&mut self, pla: Player, cleanup: bool) -> Result<String, String> {
        self.refuse_after_end()?;
        self.stop_pondering();
        // No search whose move could not be recorded.
        self.writable()?;
        self.push_state_thinking(true);
        let cmd = if cleanup {
            GtpCommand::KgsGenmoveCleanup(pla)
        } else {
            GtpCommand::Genmove(pla)
        };
        let vertex = match self.run(&cmd) {
            Ok(v) => v,
            Err(e) => {
                self.push_state();
                return Err(e);
            }
        };
        let game = self.engine.game();
        let played = game
            .turns()
            .last()
            .filter(|t| t.player == pla)
            .map(|t| t.mv);
        let size = game.board().size();
        let record = match played {
            _ if vertex.eq_ignore_ascii_case("resign") => {
                self.engine.resign(pla);
                Record::Resign(pla)
            }
            Some(mv) => GtpCommand::Play(pla, Vertex::of(size, mv)).into(),
            None => {
                // Nothing to record, so nothing may stay applied.
                self.rebuild();
                self.push_state();
                return Err(format!("{cmd} answered {vertex} but played nothing"));
            }
        };
        self.record(&record)?;
        self.announce(&record, MoveBy::Engine);
        self.after_change();
        Ok(vertex)
    }

    /// Applies a state change that came by command (see [`Appliance::change_by`]).
    fn change(&mut self, record: Record) -> Result<String, String> {
        self.change_by(record, MoveBy::Command)
    }

    /// Applies a state change, journals it, and publishes the new state (and, if it is a
    /// move, the move as coming `by`); if it cannot be journalled the engine goes back to
    /// what the journal holds and the change is refused.
    fn change_by(&mut self, record: Record, by: MoveBy) -> Result<String, String> {
        self.stop_pondering();
        self.writable()?;
        if self.history.len() >= MAX_RECORDS {
            return Err(format!(
                "the game has {MAX_RECORDS} records, the most one game may have; \
                 start a new game"
            ));
        }
        let reply = self.apply(&record)?;
        self.record(&record)?;
        self.announce(&record, by);
        self.after_change();
        Ok(reply)
    }

    /// Publishes a journalled move or resignation on `move`: the one place every move
    /// entering the game, from the board, a command or the engine, is told.
    fn announce(&mut self, record: &Record, by: MoveBy) {
        let game = self.engine.game();
        let (color, vertex) = match record {
            Record::Gtp(GtpCommand::Play(..)) => match game.turns().last() {
                Some(t) => (t.player, game.board().size().gtp(t.mv)),
                None => return,
            },
            Record::Resign(p) => (*p, "resign".to_string()),
            _ => return,
        };
        let msg = MoveMsg {
            color: color.letter().to_string(),
            vertex,
            number: game.turns().len(),
            by,
        };
        self.push("move", &msg, false);
    }

    /// Journals an applied change; if the disk fails, the game goes back to what the
    /// journal holds, so that nothing unrecorded is ever acknowledged.
    fn record(&mut self, record: &Record) -> Result<(), String> {
        let written = match self.journal.as_mut() {
            Some(j) => j
                .append(&record.to_string())
                .map(|_| ())
                .map_err(|e| e.to_string()),
            None => Err("the journal is not open".into()),
        };
        match written {
            Ok(()) => {
                self.history.push(record.clone());
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
                let on_disk = History::of(&read_records(&records));
                self.journal = Some(journal);
                if records.is_empty() && self.history == History::default() {
                    // Started without a journal and nothing recorded yet: the game's
                    // setup goes in first.
                    let game = self.game.clone();
                    self.start_game(&game)?;
                    self.after_change();
                } else if on_disk != self.history {
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
        if let Err(e) = j.reset(&lines_of(self.history.records())) {
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
    fn replay(&mut self, records: &[Record]) {
        self.stop_pondering();
        self.history = History::default();
        let starts_board = matches!(
            records.first(),
            Some(Record::Gtp(
                GtpCommand::Boardsize(_) | GtpCommand::RectangularBoardsize(_)
            ))
        );
        if !starts_board {
            // Nothing of the engine's present game may survive into the replay.
            match self.settings.game.setup_records(&[]) {
                Ok(setup) => {
                    for r in &setup {
                        if let Err(e) = self.apply(r) {
                            log::error!("cannot set up the default game ({r}): {e}");
                        }
                    }
                }
                Err(e) => log::error!("cannot set up the default game: {e}"),
            }
        }
        for r in records {
            match self.apply(r) {
                Ok(_) => self.history.push(r.clone()),
                // Records are written after success, so this means a changed engine.
                Err(e) => log::warn!("journal record \"{r}\" no longer applies: {e}"),
            }
        }
    }

    /// Applies one record, the appliance's own settings included, and keeps the game's
    /// settings in step with it.
    fn apply(&mut self, record: &Record) -> Result<String, String> {
        let cmd = match record {
            Record::EngineSide(side) => {
                self.game.engine = *side;
                return Ok(String::new());
            }
            Record::Resign(p) => {
                self.refuse_after_end()?;
                self.engine.resign(*p);
                return Ok(String::new());
            }
            Record::Analysis { on, ownership } => {
                self.settings.analysis = *on;
                self.settings.ownership = *ownership;
                return Ok(String::new());
            }
            Record::Gtp(cmd) => cmd,
        };
        match cmd {
            GtpCommand::Play(..) | GtpCommand::Undo => {
                self.refuse_after_end()?;
                self.run(cmd)
            }
            GtpCommand::TengenLevel(level) => {
                self.run(cmd)?;
                self.level = Some(*level);
                Ok(String::new())
            }
            GtpCommand::Boardsize(_) | GtpCommand::RectangularBoardsize(_) => {
                let reply = self.run(cmd)?;
                self.game.size = self.engine.game().board().size();
                self.game.handicap = 0;
                self.archived = false;
                Ok(reply)
            }
            GtpCommand::Komi(k) => {
                let reply = self.run(cmd)?;
                self.game.komi = *k;
                Ok(reply)
            }
            GtpCommand::KataSetRules(r) | GtpCommand::KgsRules(r) => {
                let reply = self.run(cmd)?;
                self.game.rules = r.text.clone();
                Ok(reply)
            }
            GtpCommand::FixedHandicap(n) => {
                let reply = self.run(cmd)?;
                self.game.handicap = *n;
                Ok(reply)
            }
            _ => self.run(cmd),
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

    fn run(&mut self, cmd: &GtpCommand) -> Result<String, String> {
        match self.engine.execute(cmd) {
            Reply::Success(t) => Ok(t),
            Reply::Failure(e) => Err(e),
        }
    }

    fn undo(&mut self) -> Result<String, String> {
        self.change(GtpCommand::Undo.into())?;
        // Back to the player's own turn, past the engine's reply.
        let game = self.engine.game();
        if self.game.engine.plays(game.to_move()) && !game.turns().is_empty() {
            self.change(GtpCommand::Undo.into())?;
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

    /// Sets up the configured game in the engine without recording it (the journal
    /// cannot be written): the board shows the right size and rules meanwhile.
    fn show_unrecorded(&mut self) {
        let records = match self.game.setup_records(&self.setting_records()) {
            Ok(r) => r,
            Err(e) => return log::warn!("cannot set up the game: {e}"),
        };
        for r in &records {
            if let Err(e) = self.apply(r) {
                log::warn!("cannot set up the game: {r}: {e}");
            }
        }
    }

    /// Sets up `g` in the engine and makes its setup the whole journal; on any failure
    /// the engine goes back to the journal's game.
    fn start_game(&mut self, g: &GameSettings) -> Result<(), String> {
        let records = g.setup_records(&self.setting_records())?;
        for r in &records {
            if let Err(e) = self.apply(r) {
                self.rebuild();
                return Err(format!("{r}: {e}"));
            }
        }
        if let Err(e) = self.reset_journal(&records) {
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

    /// Makes `records` (a new game's setup) the whole journal and its history; after a
    /// failure the journal is closed, to be reopened before the next change.
    fn reset_journal(&mut self, records: &[Record]) -> Result<(), String> {
        let reset = match self.journal.as_mut() {
            Some(j) => j.reset(&lines_of(records)).map_err(|e| e.to_string()),
            None => Err("the journal is not open".into()),
        };
        match reset {
            Ok(()) => {
                self.history = History::of(records);
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
        let sgf = self.run(&GtpCommand::Printsgf)?;
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
            let setup = self.game.setup_records(&self.setting_records());
            if let Err(e) = setup.and_then(|records| self.reset_journal(&records)) {
                log::error!("could not record the next game's setup: {e}");
            }
        }
        self.push_state();
        self.start_pondering();
    }

    /// The appliance's own settings as records, carried into each new game.
    fn setting_records(&self) -> Vec<Record> {
        let mut records = vec![Record::Analysis {
            on: self.settings.analysis,
            ownership: self.settings.ownership,
        }];
        if let Some(level) = self.level {
            records.push(GtpCommand::TengenLevel(level).into());
        }
        records
    }

    /// Whether the position on the board wants analysis (by the engine or the pool).
    fn wants_analysis(&self) -> bool {
        let game = self.engine.game();
        self.settings.analysis && !game.is_over() && !self.game.engine.plays(game.to_move())
    }

    /// With remote analysis, the pool's query for the position on the board, or `None`
    /// when it wants no analysis; always `None` without.
    pub fn remote_query(&self) -> Option<String> {
        if !self.settings.remote_analysis || !self.wants_analysis() {
            return None;
        }
        let ask = crate::cluster::remote::Ask {
            max_visits: self.settings.analysis_max_visits,
            every: self.settings.analysis_interval,
            ownership: self.settings.ownership,
        };
        Some(crate::cluster::remote::query(self.engine.game(), &ask))
    }

    /// With remote analysis: the pool went silent (the engine analyses in its place) or
    /// answers again (the engine stops).
    pub fn set_pool_silent(&mut self, silent: bool) {
        if !self.settings.remote_analysis || self.pool_silent == silent {
            return;
        }
        self.pool_silent = silent;
        if silent {
            self.start_pondering();
        } else {
            self.stop_pondering();
        }
    }

    fn start_pondering(&mut self) {
        let pool = self.settings.remote_analysis && !self.pool_silent;
        if pool || self.pondering.is_some() || !self.wants_analysis() {
            return;
        }
        let request = AnalyzeRequest {
            // Reports are taken by tick, not streamed.
            interval: Some(1e6),
            ownership: self.settings.ownership.then_some(true),
            ..AnalyzeRequest::default()
        };
        match self.engine.start_analysis(Analyze::Kata, &request) {
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
        // The engine's own level: what it plays at, configured or set by a command.
        let level = self.engine.level().to_string();
        let state = State::of(self.engine.game(), self.game.engine, level, thinking);
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

    /// Raises an error alert from `source` (a topic, `journal`, or from outside the game
    /// such as the daemon's `engine`), logged too.
    pub fn alert_error(&mut self, source: &str, message: String) {
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
                payload: payload.into_bytes(),
                retain,
            }),
            Err(e) => log::error!("cannot encode a {topic} message: {e}"),
        }
    }
}

/// The journal's lines as records; a line that no longer reads is left out, with a
/// warning, as one that no longer applies is.
fn read_records(lines: &[String]) -> Vec<Record> {
    lines
        .iter()
        .filter_map(|l| match Record::parse(l) {
            Ok(r) => Some(r),
            Err(e) => {
                log::warn!("journal record {l:?} no longer reads: {e}");
                None
            }
        })
        .collect()
}

/// Records as journal lines.
fn lines_of(records: &[Record]) -> Vec<String> {
    records.iter().map(Record::to_string).collect()
}
