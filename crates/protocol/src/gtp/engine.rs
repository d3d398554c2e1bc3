//! The GTP engine: a game, a search over it, clocks for both players, and the standard
//! command set. Every command either succeeds or fails with a message; nothing a
//! controller sends can stop the engine except `quit`.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use tengen_rules::handicap::{check_free_handicap, fixed_handicap, max_fixed_handicap};
use tengen_rules::{
    sgf, sgf::SgfError, BoardSize, Game, GameOptions, Loc, Move, Outcome, Player, Rules,
};
use tengen_search::{
    limits_for_move, strength, Clock, Evaluator, Limits, ResignTracker, Search, SearchParams,
    SnapshotOptions, Strength,
};

use std::fmt::Write as _;

use tengen_search::evaluator::{InputParams, PolicyOptions, Symmetry};
use tengen_search::EvalRequest;

use super::analyze::{format_line, AnalyzeArgs, Format};
use super::analyze_request::AnalyzeRequest;
use super::chat::SearchChat;
use super::command::{Analyze, StoneStatus};
use super::level::Level;
use super::models::{models_json, ModelInfo};
use super::search_factor::{self, SearchFactors};
use super::vertex::Vertex;
use super::{parse_line, time_control, Command, Line, Reply};
use crate::params::{self, Setting};
use crate::perspective::Perspective;

/// How the engine plays.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// What `name` answers.
    pub name: String,
    /// What `version` answers.
    pub version: String,
    /// Search parameters.
    pub params: SearchParams,
    /// Visits per move when the clock does not decide (None: only the clock limits).
    pub visits: Option<u64>,
    /// New playouts per move (KataGo's `maxPlayouts`: the reused tree's visits not counted).
    pub playouts: Option<u64>,
    /// How much shorter a move's search gets after passes and when winning.
    pub search_factors: SearchFactors,
    /// Seconds per move when no clock is set; overrides `visits`.
    pub move_time: Option<f64>,
    /// Rules of a new game.
    pub rules: Rules,
    /// Seconds kept in hand for network and controller delays.
    pub lag_buffer: f64,
    /// Resign below this winrate for `resign_turns` turns in a row; `None` never resigns.
    pub resign_below: Option<f64>,
    /// Turns in a row below `resign_below` before resigning.
    pub resign_turns: u32,
    /// Who chooses `genmove`'s move.
    pub moves: Decider,
    /// Who judges dead and seki stones.
    pub status: Decider,
    /// No move's search goes past this many visits, whatever a client set
    /// (`kata-set-param maxVisits`): the tree's memory grows with visits.
    pub visits_cap: Option<u64>,
    /// No move's search takes longer than this many seconds, whatever the clocks say.
    pub time_cap: Option<f64>,
    /// Raised from outside to end any search at once (a stopping daemon).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Which files `loadsgf` may read.
    pub sgf_access: SgfAccess,
    /// The loaded networks, as `kata-get-models` reports them (the program that loaded
    /// them fills this in; empty: no network).
    pub models: Vec<ModelInfo>,
    /// KataGo's `ogsChatToStderr`: after each move a search chooses, keep a
    /// [`SearchChat`] summary for [`Engine::take_chat`] (the binary writes it to stderr).
    pub ogs_chat_to_stderr: bool,
    /// Whose view analysis lines and the search chat report values from (KataGo's
    /// `reportAnalysisWinratesAs`).
    pub report_as: Perspective,
    /// Moves of a reported variation after its first (KataGo's `analysisPVLen`).
    pub analysis_pv_len: usize,
    /// KataGo's pondering: after a move is generated or played, search on within these
    /// limits until the next command, so that the next move's search starts with a tree
    /// (see [`Engine::start_pondering`]); `None`: no pondering.
    pub pondering: Option<Limits>,
    /// How strongly the search plays (a rank fixes its visits and weakens its choice;
    /// `max`: as the configuration says).
    pub strength: Strength,
}

impl EngineConfig {
    /// The parameters of a search for a move to play: genmove's, shaped by the strength.
    pub fn genmove_params(&self) -> SearchParams {
        let p = self.params.for_genmove();
        match self.strength.settings() {
            Some(rank) => rank.search_params(&p),
            None => p,
        }
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            name: "Tengen".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            params: SearchParams::default(),
            visits: Some(800),
            playouts: None,
            search_factors: SearchFactors::default(),
            move_time: None,
            rules: Rules::chinese(),
            lag_buffer: 1.0,
            resign_below: Some(0.02),
            resign_turns: 3,
            moves: Decider::Search,
            status: Decider::Search,
            visits_cap: None,
            time_cap: None,
            interrupt: None,
            sgf_access: SgfAccess::Any,
            models: Vec::new(),
            ogs_chat_to_stderr: false,
            report_as: Perspective::SideToMove,
            // Tengen's GTP has always shown 15 moves (KataGo's default shows 14).
            analysis_pv_len: 14,
            pondering: None,
            strength: Strength::Max,
        }
    }
}

/// Who decides for the engine: its search, or the classical engine.
#[derive(Clone, Debug, Default)]
pub enum Decider {
    /// A search over the engine's evaluator.
    #[default]
    Search,
    /// The classical engine, by its own reading.
    Classic(Arc<tengen_classic::Classic>),
}

/// Which files `loadsgf` may read: a remote client must not read the host's files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SgfAccess {
    /// Any file the process can read (a local controller, the user's own process).
    #[default]
    Any,
    /// Only files whose real path (symbolic links resolved) lies inside this directory,
    /// named relative to it or absolutely; the directory should be given canonical.
    Within(PathBuf),
    /// None: `loadsgf` fails.
    Refused,
}

/// Largest SGF file `loadsgf` reads: a game record is a few kilobytes, a long one with
/// comments and variations well under a megabyte.
pub const MAX_SGF_BYTES: u64 = 4 << 20;

pub use super::command::COMMANDS;

/// The analysis format of a streaming command, and whether it ends with a move.
pub fn analyze_command(name: &str) -> Option<(Format, bool)> {
    Analyze::from_name(name).map(|a| (a.format(), a.genmove()))
}

/// Ownership (from the stone owner's view) below minus this marks a stone dead; between
/// minus and plus this, in seki (nobody expects to own the point).
const DEAD_OWNERSHIP: f32 = 0.25;

/// Dead stones, then seki stones.
type DeadAndSeki = (Vec<Loc>, Vec<Loc>);

/// A `kata-search` under way (see [`Engine::start_search`]): whose move, and since when.
#[derive(Debug)]
pub struct PendingSearch {
    mover: Player,
    started: std::time::Instant,
    /// The classical engine's move, chosen at once (it does not search in the background).
    decided: Option<Move>,
}

/// Gives the evaluator for a board size (a network graph is built per size).
pub type EvaluatorSource = Box<dyn FnMut(BoardSize) -> Result<Arc<dyn Evaluator>> + Send>;

/// A GTP engine.
pub struct Engine {
    config: EngineConfig,
    source: EvaluatorSource,
    /// The size the search's evaluator was made for.
    search_size: BoardSize,
    game: Game,
    search: Search,
    clocks: [Clock; 2],
    resign: ResignTracker,
    rng: fastrand::Rng,
    /// What the rank has aimed at and given away in this game.
    ledger: strength::Ledger,
    evaluator: Arc<dyn Evaluator>,
    status_cache: Option<(u128, DeadAndSeki)>,
    analysis_started: Option<std::time::Instant>,
    /// Whose move a `kata-search_analyze` form searches (it plays nothing).
    analysis_mover: Option<Player>,
    /// The last chosen move's summary, when `ogs_chat_to_stderr` asks for them.
    chat: Option<SearchChat>,
    /// Root win-loss values (White's view) of this game's `genmove` searches, oldest
    /// first, for the winning search factor.
    recent_white_win_loss: Vec<f64>,
    quit: bool,
}

type Result<T> = std::result::Result<T, String>;

impl Engine {
    /// An engine with a 19x19 game under the configured rules; fails if `source` cannot
    /// give an evaluator for 19x19.
    pub fn new(mut source: EvaluatorSource, config: EngineConfig) -> Result<Engine> {
        let size = BoardSize::square(19).expect("19x19 is a valid size");
        let game = Game::new(size, config.rules);
        let evaluator = source(size)?;
        let mut search = Search::new(evaluator.clone(), config.genmove_params());
        search.set_interrupt(config.interrupt.clone());
        let resign = ResignTracker::new(
            config.resign_below.unwrap_or(-1.0),
            config.resign_turns,
            0.0,
        );
        let seed = config.params.seed;
        Ok(Engine {
            config,
            source,
            search_size: size,
            game,
            search,
            clocks: [Clock::unlimited(), Clock::unlimited()],
            resign,
            rng: fastrand::Rng::with_seed(seed),
            ledger: strength::Ledger::default(),
            evaluator,
            status_cache: None,
            analysis_started: None,
            analysis_mover: None,
            chat: None,
            recent_white_win_loss: Vec::new(),
            quit: false,
        })
    }

    /// The game as it stands.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Stops any search (end of a session).
    pub fn stop(&mut self) {
        self.search.stop();
    }

    /// Accepts commands again after `quit` (a new client of a server).
    pub fn resume(&mut self) {
        self.quit = false;
    }

    /// The configuration as it stands, with the rules, komi, parameters and level set by
    /// commands since start-up.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// The level moves are chosen at: the classical engine's, or the search's strength.
    pub fn level(&self) -> Level {
        match &self.config.moves {
            Decider::Classic(c) => Level::Classic(c.level()),
            Decider::Search => Level::Strength(self.config.strength),
        }
    }

    /// Starts over under `config`: a new 19x19 game, no clocks, a fresh search tree, so
    /// that nothing of an earlier game or client remains (a server's next client).
    pub fn reset(&mut self, config: EngineConfig) -> Result<()> {
        self.search.stop();
        let size = BoardSize::square(19).expect("19x19 is a valid size");
        if size != self.search_size {
            self.evaluator = (self.source)(size)?;
            self.search_size = size;
        }
        self.search = Search::new(self.evaluator.clone(), config.genmove_params());
        self.search.set_interrupt(config.interrupt.clone());
        self.game = Game::new(size, config.rules);
        self.clocks = [Clock::unlimited(), Clock::unlimited()];
        self.resign = ResignTracker::new(
            config.resign_below.unwrap_or(-1.0),
            config.resign_turns,
            0.0,
        );
        self.rng = fastrand::Rng::with_seed(config.params.seed);
        self.status_cache = None;
        self.analysis_started = None;
        self.analysis_mover = None;
        self.chat = None;
        self.recent_white_win_loss.clear();
        self.ledger.clear();
        self.quit = false;
        self.config = config;
        Ok(())
    }

    /// True once `quit` was received.
    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// Carries out one command line: reads it as a command, then runs it.
    pub fn handle(&mut self, line: &Line) -> Reply {
        match Command::parse(&line.name, &line.args) {
            Ok(cmd) => self.execute(&cmd),
            Err(e) => Reply::Failure(e.to_string()),
        }
    }

    /// Carries out one raw line (no reply for a line GTP ignores: a comment, blanks).
    pub fn handle_line(&mut self, raw: &str) -> Option<Reply> {
        Some(match parse_line(raw)? {
            Ok(line) => self.handle(&line),
            Err(e) => Reply::Failure(e.to_string()),
        })
    }

    /// Carries out one command.
    pub fn execute(&mut self, cmd: &Command) -> Reply {
        match self.dispatch(cmd) {
            Ok(text) => Reply::Success(text),
            Err(e) => Reply::Failure(e),
        }
    }

    fn dispatch(&mut self, cmd: &Command) -> Result<String> {
        use Command as C;
        let done = |()| String::new();
        match cmd {
            C::ProtocolVersion => Ok("2".into()),
            C::Name => Ok(self.config.name.clone()),
            C::Version => Ok(self.config.version.clone()),
            // Only the listed commands: see `UNLISTED` for why `analyze` is not "known".
            C::KnownCommand(c) => Ok(COMMANDS.contains(&c.as_str()).to_string()),
            C::ListCommands => Ok(COMMANDS.join("\n")),
            C::Quit => {
                self.quit = true;
                self.search.stop();
                Ok(String::new())
            }
            C::Boardsize(size) | C::RectangularBoardsize(size) => self.new_game(*size).map(done),
            C::ClearBoard => self.new_game(self.game.board().size()).map(done),
            C::SetPosition(stones) => self.set_position(stones).map(done),
            C::Komi(k) => {
                self.game.set_komi(*k as f32);
                self.config.rules.komi = *k as f32;
                Ok(String::new())
            }
            C::Play(pla, v) => self.play(*pla, *v).map(done),
            C::Genmove(pla) => self.genmove(*pla),
            C::KgsGenmoveCleanup(pla) => self.genmove_cleanup(*pla),
            // Without a reader of the next line, the cancellable form runs to its end.
            C::KataSearch(pla) | C::KataSearchCancellable(pla) => {
                let pending = self.search_for(*pla, false)?;
                self.search_result(pending, false)
            }
            C::Undo => {
                self.search.stop();
                if self.game.undo() {
                    self.resign.reset();
                    Ok(String::new())
                } else {
                    Err("cannot undo".into())
                }
            }
            C::Showboard => Ok(self.showboard()),
            C::FixedHandicap(n) | C::PlaceFreeHandicap(n) => self.fixed_handicap(*n),
            C::SetFreeHandicap(vs) => self.set_free_handicap(vs).map(done),
            C::FinalScore => self.final_score(),
            C::FinalStatusList(which) => {
                let (dead, seki) = self.stone_status()?;
                let board = self.game.board();
                let size = board.size();
                let pick: Vec<Loc> = match which {
                    StoneStatus::Dead => dead,
                    StoneStatus::Seki => seki,
                    StoneStatus::Alive => size
                        .points()
                        .filter(|l| board.stone(*l).is_some())
                        .filter(|l| !dead.contains(l) && !seki.contains(l))
                        .collect(),
                };
                Ok(pick
                    .iter()
                    .map(|&l| size.gtp(Move::Play(l)))
                    .collect::<Vec<_>>()
                    .join(" "))
            }
            C::TimeSettings {
                main,
                byo_time,
                byo_stones,
            } => {
                let c = time_control::time_settings(*main, *byo_time, *byo_stones)
                    .map_err(|e| e.to_string())?;
                self.clocks = [c.clone(), c];
                Ok(String::new())
            }
            C::KgsTimeSettings(words) => {
                let args: Vec<&str> = words.iter().map(String::as_str).collect();
                let c = time_control::kgs_time_settings(&args).map_err(|e| e.to_string())?;
                self.clocks = [c.clone(), c];
                Ok(String::new())
            }
            C::KataTimeSettings(words) => {
                let args: Vec<&str> = words.iter().map(String::as_str).collect();
                let c = time_control::kata_time_settings(&args).map_err(|e| e.to_string())?;
                self.clocks = [c.clone(), c];
                Ok(String::new())
            }
            C::KataListTimeSettings => Ok(time_control::kata_time_systems()
                .collect::<Vec<_>>()
                .join(" ")),
            C::TimeLeft {
                player,
                seconds,
                stones,
            } => {
                self.clocks[player.index()]
                    .set_time_left(*seconds, *stones)
                    .map_err(|e| e.to_string())?;
                Ok(String::new())
            }
            C::KgsRules(r) | C::KataSetRules(r) => self.set_rules(r.rules).map(done),
            C::KataSetRule(option) => {
                let rules = option.apply(self.game.rules())?;
                self.set_rules(rules).map(done)
            }
            C::KataGetModels => Ok(models_json(&self.config.models)),
            C::KataGetRules => Ok(self.game.rules().to_json_no_komi().to_string()),
            C::Loadsgf { file, upto } => self.loadsgf(file, *upto).map(done),
            C::Printsgf => Ok(sgf::save(&self.game)),
            C::Cputime | C::GomillCpuTime => Ok(format!("{:.3}", cpu_seconds())),
            C::GetKomi => Ok(self.game.rules().komi.to_string()),
            // KataGo's clears the search tree too, so that a search starts afresh.
            C::ClearCache => {
                self.search.clear_tree();
                self.evaluator.clear_cache();
                Ok(String::new())
            }
            C::Stop => {
                self.search.stop();
                Ok(String::new())
            }
            C::KataRawNn {
                player,
                symmetry,
                optimism,
            } => self.raw_nn(*player, *symmetry, *optimism),
            C::GoguiAnalyzeCommands => Ok("gfx/Tengen ownership/tengen-ownership\n\
                 gfx/Tengen policy/tengen-policy"
                .into()),
            C::TengenOwnership => self.gogui_board(true),
            C::TengenPolicy => self.gogui_board(false),
            C::KataListParams => Ok(params::TABLE
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(" ")),
            C::KataGetParam(p) => Ok(p.get(&self.config.params, self.config.visits)),
            C::KataSetParam(setting) => {
                self.apply_param(setting);
                Ok(String::new())
            }
            C::TengenLevel(Level::Strength(s)) => {
                let Decider::Search = self.config.moves else {
                    return Err("ranks apply to the search; the classical engine takes \
                                levels 1 to 10"
                        .into());
                };
                self.config.strength = *s;
                // A new rank's aim starts afresh rather than paying the old one's debt.
                self.ledger.clear();
                self.search.set_params(self.config.genmove_params());
                Ok(String::new())
            }
            C::TengenLevel(Level::Classic(level)) => {
                let Decider::Classic(_) = self.config.moves else {
                    return Err("levels apply to the classical engine; \
                                use kata-set-param maxVisits with a search"
                        .into());
                };
                let seed = self.rng.u64(..);
                let classic = Arc::new(tengen_classic::Classic::new(*level, seed));
                // A classical status judge is the same engine, and takes the level too.
                if let Decider::Classic(judge) = &mut self.config.status {
                    *judge = classic.clone();
                }
                self.config.moves = Decider::Classic(classic);
                Ok(String::new())
            }
            C::Analyze(..) => {
                Err("analysis commands stream; this transport cannot run them".into())
            }
        }
    }

    /// Starts `kata-search_cancellable` for `pla` in the background: a transport that reads
    /// ahead ends it with [`Engine::finish_search`], cancelled if the next line came first
    /// (`= cancelled`, as KataGo replies), else once [`Engine::is_searching`] turns false.
    pub fn start_search(&mut self, pla: Player) -> Result<PendingSearch> {
        self.search_for(pla, true)
    }

    /// Ends a search begun by [`Engine::start_search`]: the reply `kata-search` gives (the
    /// move, `resign`, or `cancelled`). Plays nothing.
    pub fn finish_search(&mut self, pending: PendingSearch, cancelled: bool) -> Reply {
        match self.search_result(pending, cancelled) {
            Ok(text) => Reply::Success(text),
            Err(e) => Reply::Failure(e),
        }
    }

    /// Starts pondering after `after` if the configuration asks for it and `after` is a
    /// command KataGo ponders after (a move generated or played; `komi` or `time_left`
    /// once the game has moves, as controllers send them every move): searches the
    /// current position in the background within the pondering limits. The transport
    /// ends it with [`Engine::stop_pondering`] when the next command arrives. Returns
    /// whether pondering started.
    pub fn start_pondering(&mut self, after: &Command) -> bool {
        let Some(limits) = self.config.pondering else {
            return false;
        };
        // A generated move was played unless the engine resigned (then KataGo does not
        // ponder).
        let played = |pla: Option<Player>| {
            let last = self.game.turns().last().map(|t| t.player);
            pla.is_some() && last == pla
        };
        let ponders_after = match after {
            Command::Genmove(pla) | Command::KgsGenmoveCleanup(pla) => played(Some(*pla)),
            Command::Analyze(kind, request) => kind.plays() && played(request.player),
            Command::Play(..) => true,
            Command::Komi(_) | Command::TimeLeft { .. } => !self.game.turns().is_empty(),
            _ => false,
        };
        if !ponders_after
            || !matches!(self.config.moves, Decider::Search)
            || self.game.is_over()
            || self.search.is_running()
        {
            return false;
        }
        // The tree's memory grows with visits, whatever the pondering limits say.
        let limits = Limits {
            visits: match (limits.visits, self.config.visits_cap) {
                (Some(v), Some(cap)) => Some(v.min(cap)),
                (v, cap) => v.or(cap),
            },
            ..limits
        };
        self.search.set_position(&self.game);
        match self.search.start(limits) {
            Ok(()) => true,
            Err(e) => {
                log::warn!("cannot ponder: {e}");
                false
            }
        }
    }

    /// Ends pondering (if it still runs); returns the root visits the tree now holds.
    pub fn stop_pondering(&mut self) -> u64 {
        self.search.stop();
        self.search.stats().root_visits
    }

    /// The summary of the last move a search chose, once, if `ogs_chat_to_stderr` is on.
    pub fn take_chat(&mut self) -> Option<SearchChat> {
        self.chat.take()
    }

    /// Searches for `pla`'s move in a copy of the game with `pla` to move, as `genmove`
    /// would (its limits, its clock), in the background or to the end.
    fn search_for(&mut self, pla: Player, background: bool) -> Result<PendingSearch> {
        let mut game = self.game.clone();
        game.set_player_to_move(pla);
        let started = std::time::Instant::now();
        if let Decider::Classic(classic) = &self.config.moves {
            let mv = classic.genmove(&game);
            self.clocks[pla.index()].charge(started.elapsed().as_secs_f64());
            return Ok(PendingSearch {
                mover: pla,
                started,
                decided: Some(mv),
            });
        }
        let limits = self.move_limits_in(&game);
        self.search.set_position(&game);
        if background {
            self.search.start(limits).map_err(|e| e.to_string())?;
        } else {
            self.search.run(limits).map_err(|e| e.to_string())?;
        }
        Ok(PendingSearch {
            mover: pla,
            started,
            decided: None,
        })
    }

    fn search_result(&mut self, pending: PendingSearch, cancelled: bool) -> Result<String> {
        let size = self.game.board().size();
        if let Some(mv) = pending.decided {
            return Ok(size.gtp(mv));
        }
        self.search.stop();
        if cancelled {
            return Ok("cancelled".into());
        }
        Ok(match self.choose(pending.mover, pending.started)? {
            Some(mv) => size.gtp(mv),
            None => "resign".into(),
        })
    }

    /// Starts a streaming analysis command (see [`analyze_command`]): the search runs in
    /// the background until [`Engine::finish_analyze`]; `genmove` forms stop by themselves
    /// at the move's limits.
    pub fn start_analyze(&mut self, name: &str, args: &[&str]) -> Result<AnalyzeArgs> {
        let kind = Analyze::from_name(name).ok_or("unknown command")?;
        let request = AnalyzeRequest::parse(kind.format(), args)?;
        self.start_analysis(kind, &request)
    }

    /// Starts analysis command `kind` with `request`, as [`Engine::start_analyze`] does.
    pub fn start_analysis(
        &mut self,
        kind: Analyze,
        request: &AnalyzeRequest,
    ) -> Result<AnalyzeArgs> {
        let genmove = kind.genmove();
        let size = self.game.board().size();
        let a = request.place(kind.format(), genmove, size)?;
        if genmove && a.player.is_none() {
            return Err(format!("{} takes a color first", kind.name()));
        }
        // The search-only forms search a copy with their player to move; the others set
        // the game's player to move.
        let mut copy = None;
        if let Some(p) = a.player {
            if !kind.plays() && genmove {
                let mut g = self.game.clone();
                g.set_player_to_move(p);
                copy = Some(g);
            } else if p != self.game.to_move() {
                self.game.set_player_to_move(p);
            }
        }
        let game = copy.as_ref().unwrap_or(&self.game);
        // As KataGo: analysis has its own wide root noise and anti-mirror setting, the
        // genmove forms keep genmove's.
        let params = if genmove {
            self.config.genmove_params()
        } else {
            SearchParams {
                wide_root_noise: self.config.params.analysis_wide_root_noise,
                ..self.config.params.clone()
            }
        };
        let params = SearchParams {
            ownership: a.ownership || a.moves_ownership,
            ..params
        };
        self.search.set_params(params);
        self.search.set_filter(a.filters.clone());
        self.search.set_position(game);
        let limits = if genmove {
            self.move_limits_in(game)
        } else {
            Limits::default()
        };
        self.analysis_mover = copy.map(|g| g.to_move());
        self.analysis_started = Some(std::time::Instant::now());
        self.search.start(limits).map_err(|e| e.to_string())?;
        Ok(a)
    }

    /// The current report line of a running analysis, if there is anything to report.
    pub fn analyze_line(&self, a: &AnalyzeArgs) -> Option<String> {
        let opts = SnapshotOptions {
            ownership: a.ownership,
            moves_ownership: a.moves_ownership,
            pv_len: self.config.analysis_pv_len + 1,
        };
        format_line(&self.search.analysis(&opts)?, a, self.config.report_as)
    }

    /// A snapshot of the running analysis (root values, candidates, optional ownership).
    pub fn analysis(&self, ownership: bool) -> Option<tengen_search::Analysis> {
        let opts = SnapshotOptions {
            ownership,
            pv_len: 10,
            ..SnapshotOptions::default()
        };
        self.search.analysis(&opts)
    }

    /// Ends the game by `loser`'s resignation (a player at the board gave up).
    pub fn resign(&mut self, loser: Player) {
        self.search.stop();
        if !self.game.is_over() {
            self.game.resign(loser);
        }
    }

    /// True while the analysis search runs (a `genmove` form stops at its limits).
    pub fn is_searching(&self) -> bool {
        self.search.is_running()
    }

    /// Ends a search-only form (`kata-search_analyze_cancellable`) early, as the next
    /// input line does: its closing line is `play cancelled`, as KataGo's. Any other
    /// analysis ends as [`Engine::finish_analyze`] ends it.
    pub fn cancel_analyze(&mut self, a: &AnalyzeArgs) -> Option<String> {
        if self.analysis_mover.take().is_none() {
            return self.finish_analyze(a);
        }
        self.search.stop();
        self.analysis_started = None;
        self.search.set_filter(Vec::new());
        self.search.set_params(self.config.genmove_params());
        Some("play cancelled".into())
    }

    /// Ends an analysis; for the `genmove` forms, plays the chosen move (the search-only
    /// forms play nothing) and returns the closing `play VERTEX` line.
    pub fn finish_analyze(&mut self, a: &AnalyzeArgs) -> Option<String> {
        self.search.stop();
        let started = self.analysis_started.take();
        let line = match (a.genmove, started, self.analysis_mover.take()) {
            (true, Some(t), Some(mover)) => Some(match self.choose(mover, t) {
                Ok(Some(mv)) => format!("play {}", self.game.board().size().gtp(mv)),
                Ok(None) => "play resign".into(),
                Err(e) => {
                    log::warn!("kata-search_analyze: {e}; passing");
                    "play pass".into()
                }
            }),
            (true, Some(t), None) => Some(match self.conclude_move(t) {
                Ok(v) => format!("play {v}"),
                Err(e) => {
                    // The search found nothing playable: pass rather than stall the client.
                    log::warn!("genmove_analyze: {e}; passing");
                    let _ = self.game.play(Move::Pass);
                    "play pass".to_string()
                }
            }),
            _ => None,
        };
        self.search.set_filter(Vec::new());
        self.search.set_params(self.config.genmove_params());
        line
    }

    /// Rules for the game (komi kept), if the game so far is legal under them.
    fn set_rules(&mut self, mut rules: Rules) -> Result<()> {
        rules.komi = self.game.rules().komi;
        self.search.stop();
        self.game
            .set_rules(rules)
            .map_err(|e| format!("the game so far is illegal under these rules: {e}"))?;
        self.config.rules = rules;
        Ok(())
    }

    /// `set_position`: the stones on an empty board of this size, Black to move, no
    /// history; the game is unchanged if a vertex is off the board or given twice, or a
    /// chain would have no liberties (KataGo's rules). No stones: `clear_board`.
    fn set_position(&mut self, stones: &[(Player, Vertex)]) -> Result<()> {
        let size = self.game.board().size();
        let mut placements: Vec<(Loc, Option<Player>)> = Vec::with_capacity(stones.len());
        for (p, v) in stones {
            let Some(Move::Play(l)) = v.on(size) else {
                let given: Vec<String> = stones
                    .iter()
                    .map(|(p, v)| format!("{} {v}", p.letter()))
                    .collect();
                return Err(format!(
                    "Expected a space-separated sequence of <COLOR> <VERTEX> pairs but got \
                     '{}': could not parse vertex: '{v}'",
                    given.join(" ")
                ));
            };
            placements.push((l, Some(*p)));
        }
        let illegal = "Illegal stone placements - overlapping stones or stones with no liberties?";
        let mut seen = std::collections::HashSet::new();
        if !placements.iter().all(|(l, _)| seen.insert(*l)) {
            return Err(illegal.into());
        }
        let mut board = tengen_rules::Board::new(size);
        board.set_stones(&placements).map_err(|_| illegal)?;
        self.search.stop();
        self.game = Game::from_position(
            board,
            Player::Black,
            self.config.rules,
            GameOptions::default(),
        );
        self.forget_game();
        Ok(())
    }

    /// Forgets what was learnt over the game just replaced: the resignation count, the
    /// searches' values and the rank's ledger.
    fn forget_game(&mut self) {
        self.resign.reset();
        self.recent_white_win_loss.clear();
        self.ledger.clear();
    }

    fn new_game(&mut self, size: BoardSize) -> Result<()> {
        self.search.stop();
        self.ensure_evaluator(size)?;
        self.game = Game::new(size, self.config.rules);
        self.forget_game();
        Ok(())
    }

    /// Gets an evaluator for `size` if the search's is for another size.
    fn ensure_evaluator(&mut self, size: BoardSize) -> Result<()> {
        if size != self.search_size {
            let ev = (self.source)(size)?;
            self.search = Search::new(ev.clone(), self.config.genmove_params());
            self.search.set_interrupt(self.config.interrupt.clone());
            self.evaluator = ev;
            self.search_size = size;
        }
        Ok(())
    }

    fn play(&mut self, pla: Player, v: Vertex) -> Result<()> {
        let mv = v.on(self.game.board().size()).ok_or("invalid vertex")?;
        // A move after the end reopens the game, as in KataGo and GNU Go (KGS's cleanup).
        self.game
            .play_tolerant(pla, mv)
            .map_err(|e| format!("illegal move: {e}"))?;
        Ok(())
    }

    /// KGS's cleanup phase: like `genmove`, but no passing while the opponent still has
    /// dead stones on the board, so that they get captured before scoring.
    fn genmove_cleanup(&mut self, pla: Player) -> Result<String> {
        let (dead, _) = self.stone_status()?;
        let board = self.game.board();
        if dead.iter().any(|&l| board.stone(l) == Some(pla.opp())) {
            self.search.set_filter(vec![tengen_search::FilterRule {
                player: pla,
                moves: vec![Move::Pass],
                until_depth: 1,
                allow: false,
            }]);
        }
        let result = self.genmove(pla);
        self.search.set_filter(Vec::new());
        result
    }

    fn genmove(&mut self, pla: Player) -> Result<String> {
        if self.game.to_move() != pla {
            self.game.set_player_to_move(pla);
        }
        let started = std::time::Instant::now();
        if let Decider::Classic(classic) = &self.config.moves {
            let mv = classic.genmove(&self.game);
            self.clocks[pla.index()].charge(started.elapsed().as_secs_f64());
            self.game
                .play(mv)
                .map_err(|e| format!("internal error: the classical move is illegal: {e}"))?;
            return Ok(self.game.board().size().gtp(mv));
        }
        let limits = self.move_limits();
        self.search.set_position(&self.game);
        self.search.run(limits).map_err(|e| e.to_string())?;
        self.conclude_move(started)
    }

    /// Limits for our next move: the configured visits, within the mover's clock.
    fn move_limits(&self) -> Limits {
        self.move_limits_in(&self.game)
    }

    /// Limits for the next move of `game`: the configured visits, within the mover's clock.
    fn move_limits_in(&self, game: &Game) -> Limits {
        let base = match self.config.move_time {
            // A rank's visits are part of its strength.
            _ if self.config.strength.settings().is_some() => Limits {
                visits: self.config.strength.settings().map(|r| r.visits),
                ..Limits::default()
            },
            // All of it, as KataGo searches its maxTime: with no clock to bank the time in,
            // stopping once the move is decided would only lose the subtree the next move
            // reuses. Under a clock, `limits_for_move` stops early and keeps the time.
            Some(t) if t.is_finite() && t > 0.0 => Limits {
                time: Some(std::time::Duration::from_secs_f64(t)),
                playouts: self.config.playouts,
                ..Limits::default()
            },
            _ => Limits {
                visits: self.config.visits,
                playouts: self.config.playouts,
                ..Limits::default()
            },
        };
        let clock = &self.clocks[game.to_move().index()];
        let factor = (self.config.search_factors).factor(game, &self.recent_white_win_loss);
        let limits = limits_for_move(clock, game, self.config.lag_buffer, base);
        let mut limits = search_factor::scale(limits, factor);
        if limits.is_unbounded() {
            return self.capped(Limits::visits(800));
        }
        // One visit evaluates only the root and leaves no move to choose; the second goes to
        // the move the policy likes best, which is what a one-visit engine should play.
        // Likewise a first playout on a fresh tree (KataGo's `maxPlayouts` counts it).
        for n in [&mut limits.visits, &mut limits.playouts]
            .into_iter()
            .flatten()
        {
            *n = (*n).max(2);
        }
        self.capped(limits)
    }

    /// `limits` within the configured caps.
    fn capped(&self, mut limits: Limits) -> Limits {
        if let Some(cap) = self.config.visits_cap {
            limits.visits = Some(limits.visits.map_or(cap, |v| v.min(cap)));
        }
        if let Some(cap) = self.config.time_cap.filter(|t| t.is_finite() && *t > 0.0) {
            let cap = std::time::Duration::from_secs_f64(cap);
            limits.time = Some(limits.time.map_or(cap, |t| t.min(cap)));
            limits.min_time = limits.min_time.map(|m| m.min(cap));
        }
        limits
    }

    /// After a move's search begun at `started`: charges the mover's clock, resigns when
    /// the tracker says so, else chooses and plays the move. Returns the GTP vertex.
    fn conclude_move(&mut self, started: std::time::Instant) -> Result<String> {
        let Some(mv) = self.choose(self.game.to_move(), started)? else {
            return Ok("resign".into());
        };
        self.game
            .play(mv)
            .map_err(|e| format!("internal error: the chosen move is illegal: {e}"))?;
        Ok(self.game.board().size().gtp(mv))
    }

    /// After `pla`'s search begun at `started`: charges `pla`'s clock, then `None` to
    /// resign when the tracker says so, else the move to play; keeps the chat summary
    /// when asked for (KataGo writes it, resigning or not, for the search's move).
    fn choose(&mut self, pla: Player, started: std::time::Instant) -> Result<Option<Move>> {
        self.clocks[pla.index()].charge(started.elapsed().as_secs_f64());
        let rank = self.config.strength.settings();
        let opts = SnapshotOptions {
            pv_len: self.config.analysis_pv_len + 1,
            // A rank looks for dead stones before it passes.
            ownership: rank.is_some(),
            ..SnapshotOptions::default()
        };
        let analysis = self
            .search
            .analysis(&opts)
            .ok_or("the search produced no analysis")?;
        self.recent_white_win_loss
            .push(2.0 * analysis.root.winrate - 1.0);
        let resigns = self.config.resign_below.is_some() && self.resign.observe(&analysis);
        let choice = if resigns && rank.is_none_or(|_| strength::clearly_lost(&analysis)) {
            None
        } else if let Some(rank) = rank {
            let mut game = self.search.game().unwrap_or(&self.game).clone();
            game.set_player_to_move(pla);
            Some(
                strength::choose(&analysis, &game, rank, &mut self.ledger, &mut self.rng)
                    .ok_or("no move to play")?,
            )
        } else {
            let temperature = self.config.params.chosen_move_temperature;
            Some(
                analysis
                    .choose_move(temperature, &mut self.rng)
                    .ok_or("no move to play")?,
            )
        };
        if self.config.ogs_chat_to_stderr {
            if let Some(mv) = choice.or_else(|| analysis.best_move()) {
                let (params, view) = (&self.config.params, self.config.report_as);
                self.chat = Some(SearchChat::new(&analysis, params, pla, mv, view));
            }
        }
        Ok(choice)
    }

    fn fixed_handicap(&mut self, n: usize) -> Result<String> {
        let size = self.game.board().size();
        if !self.game.board().is_board_empty() || !self.game.turns().is_empty() {
            return Err("board not empty".into());
        }
        if n < 2 || n > max_fixed_handicap(size) {
            return Err("invalid number of stones".into());
        }
        let stones = fixed_handicap(size, n).map_err(|e| e.to_string())?;
        self.set_handicap(&stones)?;
        Ok(stones
            .iter()
            .map(|&l| size.gtp(Move::Play(l)))
            .collect::<Vec<_>>()
            .join(" "))
    }

    fn set_free_handicap(&mut self, vertices: &[Vertex]) -> Result<()> {
        let size = self.game.board().size();
        if !self.game.board().is_board_empty() || !self.game.turns().is_empty() {
            return Err("board not empty".into());
        }
        let stones = vertices
            .iter()
            .map(|v| match v.on(size) {
                Some(Move::Play(l)) => Ok(l),
                _ => Err(format!("invalid vertex {v}")),
            })
            .collect::<Result<Vec<Loc>>>()?;
        if stones.len() < 2 {
            return Err("invalid number of stones".into());
        }
        check_free_handicap(self.game.board(), &stones).map_err(|e| e.to_string())?;
        self.set_handicap(&stones)
    }

    fn set_handicap(&mut self, stones: &[Loc]) -> Result<()> {
        self.search.stop();
        let size = self.game.board().size();
        self.game =
            Game::with_handicap(size, self.config.rules, stones).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The inputs of a raw evaluation: KataGo's defaults, with the human-SL profile set.
    fn raw_inputs(&self) -> InputParams {
        InputParams {
            human_profile: self.config.params.human_profile,
            ..InputParams::default()
        }
    }

    /// `kata-raw-nn [color] symmetry|all [optimism]`: the evaluator's raw outputs in
    /// KataGo's layout, one block per symmetry.
    fn raw_nn(
        &self,
        player: Option<Player>,
        symmetry: Option<u8>,
        optimism: Option<f32>,
    ) -> Result<String> {
        let pla = player.unwrap_or(self.game.to_move());
        let syms: Vec<u8> = symmetry.map_or((0..8).collect(), |k| vec![k]);
        let optimism = optimism.unwrap_or(self.config.params.root_policy_optimism);
        let mut game = self.game.clone();
        game.set_player_to_move(pla);
        let size = game.board().size();
        if size.width() != size.height() && syms.iter().any(|&k| k >= 4) {
            return Err("transposing symmetries need a square board".into());
        }
        let mut out = String::new();
        for k in syms {
            let symmetry = Symmetry::new(k).map_err(|e| e.to_string())?;
            let req = EvalRequest {
                symmetry,
                policy: PolicyOptions {
                    temperature: 1.0,
                    optimism,
                    passing_hacks: false,
                },
                inputs: self.raw_inputs(),
                ownership: true,
            };
            let o = self
                .evaluator
                .evaluate(&game, &req)
                .map_err(|e| e.to_string())?;
            let _ = writeln!(out, "symmetry {k}");
            let _ = writeln!(out, "whiteWin {:.6}", o.white_win);
            let _ = writeln!(out, "whiteLoss {:.6}", o.white_loss);
            let _ = writeln!(out, "noResult {:.6}", o.no_result);
            let _ = writeln!(out, "whiteLead {:.3}", o.white_lead);
            let _ = writeln!(out, "whiteScoreSelfplay {:.3}", o.white_score_mean);
            let _ = writeln!(out, "whiteScoreSelfplaySq {:.3}", o.white_score_mean_sq);
            let _ = writeln!(out, "varTimeLeft {:.3}", o.var_time_left);
            let _ = writeln!(
                out,
                "shorttermWinlossError {:.3}",
                o.shortterm_winloss_error
            );
            let _ = writeln!(out, "shorttermScoreError {:.3}", o.shortterm_score_error);
            let cell = |p: f32| {
                if p < 0.0 {
                    "    NAN ".to_string()
                } else {
                    format!("{p:8.6} ")
                }
            };
            let (Some(board_policy), Some(&pass)) =
                (o.policy.get(..size.area()), o.policy.get(size.area()))
            else {
                return Err("the evaluator's policy does not cover this board".into());
            };
            out.push_str("policy\n");
            for row in board_policy.chunks(size.width()) {
                row.iter().for_each(|&p| out.push_str(&cell(p)));
                out.push('\n');
            }
            let _ = writeln!(out, "policyPass {}", cell(pass));
            out.push_str("whiteOwnership\n");
            if let Some(own) = &o.white_ownership {
                for row in own.chunks(size.width()) {
                    row.iter().for_each(|&x| {
                        let _ = write!(out, "{x:9.7} ");
                    });
                    out.push('\n');
                }
            }
        }
        Ok(format!("\n{}", out.trim_end_matches('\n')))
    }

    /// GoGui boards from the network's raw outputs: ownership as `INFLUENCE` (Black
    /// positive, as GoGui draws it) or the policy's likely moves as percent `LABEL`s.
    fn gogui_board(&self, ownership: bool) -> Result<String> {
        let req = EvalRequest {
            symmetry: Symmetry::default(),
            policy: PolicyOptions::default(),
            inputs: self.raw_inputs(),
            ownership: true,
        };
        let o = self
            .evaluator
            .evaluate(&self.game, &req)
            .map_err(|e| e.to_string())?;
        let size = self.game.board().size();
        let mut out = String::new();
        if ownership {
            out.push_str("INFLUENCE");
            for (l, &w) in size.points().zip(o.white_ownership.iter().flatten()) {
                // Black's view; what rounds to zero prints as 0.00, never -0.00.
                let black = if w.abs() < 0.005 { 0.0 } else { -w };
                let _ = write!(out, " {} {:.2}", size.gtp(Move::Play(l)), black);
            }
        } else {
            out.push_str("LABEL");
            for (l, &p) in size.points().zip(&o.policy) {
                if p >= 0.01 {
                    let _ = write!(out, " {} {}", size.gtp(Move::Play(l)), (p * 100.0).round());
                }
            }
        }
        Ok(out)
    }

    /// Sets a search parameter by KataGo's name (as `kata-set-param` does).
    pub fn set_param(&mut self, key: &str, value: &str) -> Result<()> {
        let setting = params::find(key)
            .and_then(|p| p.parse(value))
            .map_err(|e| e.to_string())?;
        self.apply_param(&setting);
        Ok(())
    }

    fn apply_param(&mut self, setting: &Setting) {
        let mut p = self.config.params.clone();
        setting.apply(&mut p, &mut self.config.visits);
        self.config.params = p;
        self.search.set_params(self.config.genmove_params());
    }

    /// The result with dead stones removed: the game's own score (bonuses included) plus
    /// what removing them changes on the board.
    fn final_score(&mut self) -> Result<String> {
        let (dead, _) = self.stone_status()?;
        let mut g = self.game.clone();
        if !g.is_over() {
            g.end_and_score_now();
        }
        let base = match g.outcome() {
            Some(Outcome::Scored { white_minus_black }) => white_minus_black,
            Some(o @ Outcome::Resigned { .. }) => return Ok(o.sgf_result()),
            Some(Outcome::NoResult) | None => return Ok("0".into()),
        };
        let board = self.game.board();
        let mut cleared = board.clone();
        let removals: Vec<(Loc, Option<Player>)> = dead.iter().map(|&l| (l, None)).collect();
        cleared
            .set_stones(&removals)
            .map_err(|e| format!("cannot remove dead stones: {e}"))?;
        let score_of = |b: &tengen_rules::Board| {
            let mut g = Game::from_position(
                b.clone(),
                self.game.to_move(),
                *self.game.rules(),
                GameOptions::default(),
            );
            g.end_and_score_now();
            match g.outcome() {
                Some(Outcome::Scored { white_minus_black }) => white_minus_black,
                _ => 0.0,
            }
        };
        let s = base + score_of(&cleared) - score_of(board);
        Ok(Outcome::Scored {
            white_minus_black: s,
        }
        .sgf_result())
    }

    /// Dead and seki stones, judged by ownership after a short search of the position
    /// (continued as if nobody had passed): a stone its owner is expected to lose is dead,
    /// one nobody owns is in seki. Cached per position.
    fn stone_status(&mut self) -> Result<DeadAndSeki> {
        let key = self.game.situation_hash();
        if let Some((k, v)) = &self.status_cache {
            if *k == key {
                return Ok(v.clone());
            }
        }
        let board = self.game.board();
        let size = board.size();
        if board.num_stones(Player::Black) + board.num_stones(Player::White) == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        if let Decider::Classic(classic) = &self.config.status {
            let status = classic.final_status(&self.game);
            self.status_cache = Some((key, status.clone()));
            return Ok(status);
        }
        let g = Game::from_position(
            board.clone(),
            self.game.to_move(),
            *self.game.rules(),
            GameOptions::default(),
        );
        // As KataGo's score estimate: no playout doubling advantage or anti-mirror bias.
        let params = SearchParams {
            ownership: true,
            playout_doubling_advantage: 0.0,
            anti_mirror: false,
            ..self.config.params.clone()
        };
        let mut search = Search::new(self.evaluator.clone(), params);
        search.set_position(&g);
        let visits = self.config.visits.unwrap_or(200).clamp(1, 200);
        search
            .run(Limits::visits(visits))
            .map_err(|e| e.to_string())?;
        let own = search
            .analysis(&SnapshotOptions {
                ownership: true,
                ..SnapshotOptions::default()
            })
            .and_then(|a| a.ownership)
            .ok_or("no ownership estimate")?;
        let (mut dead, mut seki) = (Vec::new(), Vec::new());
        for (i, l) in size.points().enumerate() {
            let Some(p) = board.stone(l) else { continue };
            // Ownership is White's (+1); turn it to the stone owner's view.
            let mine = if p == Player::White { own[i] } else { -own[i] };
            if mine < -DEAD_OWNERSHIP {
                dead.push(l);
            } else if mine < DEAD_OWNERSHIP {
                seki.push(l);
            }
        }
        self.status_cache = Some((key, (dead.clone(), seki.clone())));
        Ok((dead, seki))
    }

    fn showboard(&self) -> String {
        let board = self.game.board();
        let size = board.size();
        let letters: String = (0..size.width())
            .map(|x| {
                let m = size.loc(x, 0).map(Move::Play).unwrap_or(Move::Pass);
                size.gtp(m).chars().next().unwrap_or('?')
            })
            .flat_map(|c| [' ', c])
            .collect();
        let mut out = format!("\n   {letters}\n");
        for (i, row) in board.rows().iter().enumerate() {
            let y = size.height() - i;
            let cells: String = row.chars().flat_map(|c| [' ', c]).collect();
            out.push_str(&format!("{y:>2}{cells}  {y}\n"));
        }
        out.push_str(&format!("   {letters}\n"));
        out.push_str(&format!(
            "Next player: {}  Komi: {}  B stones captured: {}  W stones captured: {}",
            match self.game.to_move() {
                Player::Black => "Black",
                Player::White => "White",
            },
            self.game.rules().komi,
            board.captures(Player::Black),
            board.captures(Player::White),
        ));
        out
    }

    fn loadsgf(&mut self, file: &str, upto: Option<usize>) -> Result<()> {
        let bytes = read_sgf_file(file, &self.config.sgf_access)?;
        let text = String::from_utf8_lossy(&bytes);
        let rec =
            sgf::load(&text).map_err(|e| format!("cannot load file: {}", sgf_error_text(&e)))?;
        let mut game = rec.game;
        if let Some(n) = upto {
            // GTP: play up to, not including, move number n (1-based).
            let keep = n.saturating_sub(1);
            while game.turns().len() > keep {
                if !game.undo() {
                    break;
                }
            }
        }
        self.search.stop();
        self.ensure_evaluator(game.board().size())?;
        self.config.rules = *game.rules();
        self.game = game;
        self.forget_game();
        Ok(())
    }
}

/// Reads the file `loadsgf` names, if `access` allows it: a regular file of at most
/// [`MAX_SGF_BYTES`], never more read than that.
fn read_sgf_file(name: &str, access: &SgfAccess) -> Result<Vec<u8>> {
    let path = match access {
        SgfAccess::Any => PathBuf::from(name),
        SgfAccess::Within(dir) => path_within(dir, name)?,
        SgfAccess::Refused => {
            return Err("loadsgf is not available over this connection".into());
        }
    };
    let cannot = |e: std::io::Error| format!("cannot load file: {e}");
    let too_large = || format!("cannot load file: larger than {MAX_SGF_BYTES} bytes");
    // Checked before opening: opening a FIFO waits for a writer, a device never ends.
    let meta = std::fs::metadata(&path).map_err(cannot)?;
    if !meta.is_file() {
        return Err("cannot load file: not a regular file".into());
    }
    if meta.len() > MAX_SGF_BYTES {
        return Err(too_large());
    }
    let file = std::fs::File::open(&path).map_err(cannot)?;
    // Again on what was opened, in case the name changed in between.
    if !file.metadata().map_err(cannot)?.is_file() {
        return Err("cannot load file: not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_SGF_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_SGF_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The real path of `name` (relative to `dir`, or absolute) if it lies inside `dir`.
/// Whatever is outside gets the same answer, found or not, so that a client learns
/// nothing about the rest of the file system.
fn path_within(dir: &Path, name: &str) -> Result<PathBuf> {
    let dir = dir
        .canonicalize()
        .map_err(|e| format!("cannot load file: the SGF directory: {e}"))?;
    let joined = dir.join(name);
    let outside = || format!("cannot load file: {name} is outside the SGF directory");
    match joined.canonicalize() {
        Ok(real) if real.starts_with(&dir) => Ok(real),
        Ok(_) => Err(outside()),
        Err(e) if lexically_within(&joined, &dir) => Err(format!("cannot load file: {e}")),
        Err(_) => Err(outside()),
    }
}

/// Whether `path`, with `.` and `..` resolved by name alone, lies inside `dir`.
fn lexically_within(path: &Path, dir: &Path) -> bool {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out.starts_with(dir)
}

/// An SGF error without the file's own text: `loadsgf` may be pointed at any file, and its
/// reply must not show what that file holds, only where reading it failed.
fn sgf_error_text(e: &SgfError) -> String {
    use tengen_rules::sgf::SgfErrorKind as K;
    match &e.kind {
        K::NoGameTree => "not an SGF file (no game tree)".into(),
        K::NotGo(_) => "not a game of Go (GM is not 1)".into(),
        K::BadSize(_) => "unsupported board size (SZ)".into(),
        K::BadPoint { node, .. } => format!("node {node}: a point that is not on the board"),
        K::BadMove { node, values, .. } => {
            format!("node {node}: a move with {values} values, expected 1")
        }
        K::IllegalMove {
            node,
            player,
            reason,
            ..
        } => format!("node {node}: illegal move by {}: {reason}", player.letter()),
        K::BadSetup { node, .. } => format!("node {node}: setup stones without liberties"),
        _ => format!("not a valid SGF file (syntax error at byte {})", e.offset),
    }
}

/// CPU seconds this process has used (Linux `/proc`; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

#[cfg(test)]
#[path = "engine_limits_tests.rs"]
mod limits_tests;
