//! A game under KataGo's full rules: turn order, superko, passes and the button,
//! the two cleanup phases of territory scoring, handicap bonus, game end and score.
//!
//! [`Game`] follows the behaviour of KataGo's `BoardHistory` so that every legal-move
//! set, game end and score agrees with KataGo (see the golden tests).

use crate::area::AreaMap;
use crate::board::{Board, IllegalMove, SetupError};
use crate::geometry::{BoardSize, Loc, Move, MAX_ARR};
use crate::phase::Phase;
use crate::player::Player;
use crate::rules::{HandicapBonus, KoRule, Rules, ScoringRule, TaxRule};
use crate::zobrist::{self, Hash};

/// How many recent boards [`Game::recent_board`] can return (the current one included).
pub const RECENT_BOARDS: usize = 3;

/// How a finished game ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Counted: White's score minus Black's, komi and bonuses included.
    Scored {
        /// White minus Black.
        white_minus_black: f32,
    },
    /// Ended without a result (a long cycle under simple ko or in cleanup).
    NoResult,
    /// A player resigned; the other won.
    Resigned {
        /// The winner.
        winner: Player,
    },
}

impl Outcome {
    /// The winner, or `None` for a draw or no result.
    pub fn winner(&self) -> Option<Player> {
        match *self {
            Outcome::Scored { white_minus_black } if white_minus_black > 0.0 => Some(Player::White),
            Outcome::Scored { white_minus_black } if white_minus_black < 0.0 => Some(Player::Black),
            Outcome::Resigned { winner } => Some(winner),
            _ => None,
        }
    }

    /// The result in SGF `RE` form: `B+3.5`, `W+R`, `0` (draw), `Void` (no result).
    pub fn sgf_result(&self) -> String {
        match *self {
            Outcome::Scored {
                white_minus_black: s,
            } => match s.partial_cmp(&0.0) {
                Some(std::cmp::Ordering::Greater) => format!("W+{s}"),
                Some(std::cmp::Ordering::Less) => format!("B+{}", -s),
                _ => "0".to_string(),
            },
            Outcome::NoResult => "Void".to_string(),
            Outcome::Resigned { winner } => format!("{}+R", winner.letter()),
        }
    }
}

/// Game-wide switches that are not part of the rules text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameOptions {
    /// Under territory scoring, play the two cleanup phases when the main phase ends
    /// (KataGo self-play); when false the game stops there, as KataGo's GTP does by default.
    pub cleanup_phases: bool,
    /// End and score the game as soon as every point is pass-alive (KataGo's self-play option).
    pub end_when_all_pass_alive: bool,
    /// Compute pass-alive area as if multi-stone suicide were legal, whatever the rules say.
    pub pass_alive_as_if_suicide_legal: bool,
    /// Count a run of Black moves at the start as handicap stones (GTP's behaviour).
    pub black_opening_run_is_handicap: bool,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            cleanup_phases: false,
            end_when_all_pass_alive: false,
            pass_alive_as_if_suicide_legal: false,
            black_opening_run_is_handicap: true,
        }
    }
}

/// One turn of the game record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// Who moved.
    pub player: Player,
    /// What was played.
    pub mv: Move,
    /// Whether the main phase was to stop, not enter cleanup, when this move ended it.
    stop_at_phase_end: bool,
}

/// A game in progress or finished: the board plus all the history the rules need.
pub struct Game {
    rules: Rules,
    options: GameOptions,
    board: Board,
    to_move: Player,
    /// The boards after the last few turns (ring, newest at `recent_at`), for history features.
    recent: Box<[Board; RECENT_BOARDS]>,
    recent_at: usize,

    initial_board: Board,
    initial_player: Player,
    initial_phase: Phase,
    initial_turn_number: u32,
    override_handicap: Option<u32>,

    turns: Vec<Turn>,
    /// Hashes deciding "the same state" for ko purposes, since the last reset
    /// (a pass under Spight-like rules, the button, a phase change).
    ko_hashes: Vec<Hash>,
    ever_occupied: [bool; MAX_ARR],
    superko_banned: [bool; MAX_ARR],
    consecutive_ending_passes: u32,
    /// Ko hashes each player has passed from (index [`Player::index`]).
    pass_hashes: [Vec<Hash>; 2],

    phase: Phase,
    turns_this_phase: u32,
    approx_valid_turns_this_phase: u32,
    consec_valid_turns_this_game: u32,
    ko_recap_blocked: [bool; MAX_ARR],
    ko_recap_hash: Hash,
    cleanup_ko_captures: Vec<(Hash, Loc, Player)>,
    second_cleanup_start: [u8; MAX_ARR],

    white_bonus: f32,
    white_handicap_bonus: f32,
    button_available: bool,
    white_has_moved: bool,
    past_normal_phase_end: bool,
    outcome: Option<Outcome>,
}

// By hand so that `clone_from` reuses the history vectors: search threads copy the
// root game once per playout and must not allocate doing so.
impl Clone for Game {
    fn clone(&self) -> Game {
        Game {
            rules: self.rules,
            options: self.options,
            board: self.board.clone(),
            to_move: self.to_move,
            recent: self.recent.clone(),
            recent_at: self.recent_at,
            initial_board: self.initial_board.clone(),
            initial_player: self.initial_player,
            initial_phase: self.initial_phase,
            initial_turn_number: self.initial_turn_number,
            override_handicap: self.override_handicap,
            turns: self.turns.clone(),
            ko_hashes: self.ko_hashes.clone(),
            ever_occupied: self.ever_occupied,
            superko_banned: self.superko_banned,
            consecutive_ending_passes: self.consecutive_ending_passes,
            pass_hashes: self.pass_hashes.clone(),
            phase: self.phase,
            turns_this_phase: self.turns_this_phase,
            approx_valid_turns_this_phase: self.approx_valid_turns_this_phase,
            consec_valid_turns_this_game: self.consec_valid_turns_this_game,
            ko_recap_blocked: self.ko_recap_blocked,
            ko_recap_hash: self.ko_recap_hash,
            cleanup_ko_captures: self.cleanup_ko_captures.clone(),
            second_cleanup_start: self.second_cleanup_start,
            white_bonus: self.white_bonus,
            white_handicap_bonus: self.white_handicap_bonus,
            button_available: self.button_available,
            white_has_moved: self.white_has_moved,
            past_normal_phase_end: self.past_normal_phase_end,
            outcome: self.outcome,
        }
    }

    fn clone_from(&mut self, source: &Game) {
        self.rules.clone_from(&source.rules);
        self.options.clone_from(&source.options);
        self.board.clone_from(&source.board);
        self.to_move.clone_from(&source.to_move);
        self.recent.clone_from(&source.recent);
        self.recent_at.clone_from(&source.recent_at);
        self.initial_board.clone_from(&source.initial_board);
        self.initial_player.clone_from(&source.initial_player);
        self.initial_phase.clone_from(&source.initial_phase);
        self.initial_turn_number
            .clone_from(&source.initial_turn_number);
        self.override_handicap.clone_from(&source.override_handicap);
        self.turns.clone_from(&source.turns);
        self.ko_hashes.clone_from(&source.ko_hashes);
        self.ever_occupied.clone_from(&source.ever_occupied);
        self.superko_banned.clone_from(&source.superko_banned);
        self.consecutive_ending_passes
            .clone_from(&source.consecutive_ending_passes);
        self.pass_hashes.clone_from(&source.pass_hashes);
        self.phase.clone_from(&source.phase);
        self.turns_this_phase.clone_from(&source.turns_this_phase);
        self.approx_valid_turns_this_phase
            .clone_from(&source.approx_valid_turns_this_phase);
        self.consec_valid_turns_this_game
            .clone_from(&source.consec_valid_turns_this_game);
        self.ko_recap_blocked.clone_from(&source.ko_recap_blocked);
        self.ko_recap_hash.clone_from(&source.ko_recap_hash);
        self.cleanup_ko_captures
            .clone_from(&source.cleanup_ko_captures);
        self.second_cleanup_start
            .clone_from(&source.second_cleanup_start);
        self.white_bonus.clone_from(&source.white_bonus);
        self.white_handicap_bonus
            .clone_from(&source.white_handicap_bonus);
        self.button_available.clone_from(&source.button_available);
        self.white_has_moved.clone_from(&source.white_has_moved);
        self.past_normal_phase_end
            .clone_from(&source.past_normal_phase_end);
        self.outcome.clone_from(&source.outcome);
    }
}

impl Game {
    /// A new game on an empty board, Black to move.
    pub fn new(size: BoardSize, rules: Rules) -> Game {
        Game::from_position(
            Board::new(size),
            Player::Black,
            rules,
            GameOptions::default(),
        )
    }

    /// A game starting from any position in the main phase.
    pub fn from_position(
        board: Board,
        to_move: Player,
        rules: Rules,
        options: GameOptions,
    ) -> Game {
        let mut g = Game {
            rules,
            options,
            board: board.clone(),
            to_move,
            recent: Box::new([board.clone(), board.clone(), board.clone()]),
            recent_at: 0,
            initial_board: board,
            initial_player: to_move,
            initial_phase: Phase::Main,
            initial_turn_number: 0,
            override_handicap: None,
            turns: Vec::new(),
            ko_hashes: Vec::new(),
            ever_occupied: [false; MAX_ARR],
            superko_banned: [false; MAX_ARR],
            consecutive_ending_passes: 0,
            pass_hashes: [Vec::new(), Vec::new()],
            phase: Phase::Main,
            turns_this_phase: 0,
            approx_valid_turns_this_phase: 0,
            consec_valid_turns_this_game: 0,
            ko_recap_blocked: [false; MAX_ARR],
            ko_recap_hash: 0,
            cleanup_ko_captures: Vec::new(),
            second_cleanup_start: [0; MAX_ARR],
            white_bonus: 0.0,
            white_handicap_bonus: 0.0,
            button_available: false,
            white_has_moved: false,
            past_normal_phase_end: false,
            outcome: None,
        };
        g.reset_to_initial();
        g
    }

    /// A game starting in a cleanup phase (territory scoring only), as KataGo allows.
    pub fn from_cleanup_position(
        board: Board,
        to_move: Player,
        rules: Rules,
        options: GameOptions,
        phase: Phase,
    ) -> Result<Game, SetupError> {
        if phase.is_cleanup() && rules.scoring != ScoringRule::Territory {
            return Err(SetupError::Diagram(format!(
                "the {phase} phase needs territory scoring"
            )));
        }
        let mut g = Game::from_position(board, to_move, rules, options);
        g.initial_phase = phase;
        g.reset_to_initial();
        Ok(g)
    }

    /// A new game with Black's handicap stones placed (GTP `set_free_handicap`); White moves first.
    pub fn with_handicap(
        size: BoardSize,
        rules: Rules,
        stones: &[Loc],
    ) -> Result<Game, SetupError> {
        let mut board = Board::new(size);
        let placements: Vec<_> = stones.iter().map(|&l| (l, Some(Player::Black))).collect();
        board.set_stones(&placements)?;
        let mut g = Game::from_position(board, Player::White, rules, GameOptions::default());
        g.initial_turn_number = stones.len() as u32;
        Ok(g)
    }

    // ---- state ----

    /// The current board.
    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The rules in force.
    #[inline]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The game options.
    pub fn options(&self) -> &GameOptions {
        &self.options
    }

    /// Makes `pla` the player to move without recording a turn (GTP `genmove` or `play`
    /// out of turn); undo, which replays the record, forgets it.
    pub fn set_player_to_move(&mut self, pla: Player) {
        self.to_move = pla;
    }

    /// The player to move.
    #[inline]
    pub fn to_move(&self) -> Player {
        self.to_move
    }

    /// The moves played since the initial position.
    pub fn turns(&self) -> &[Turn] {
        &self.turns
    }

    /// The board `turns_ago` turns ago (0 is the current board), for `turns_ago` below
    /// [`RECENT_BOARDS`]; before the first turn this is the initial board.
    /// Passes count as turns (the board after a pass equals the one before, ko aside).
    pub fn recent_board(&self, turns_ago: usize) -> Option<&Board> {
        (turns_ago < RECENT_BOARDS)
            .then(|| &self.recent[(self.recent_at + RECENT_BOARDS - turns_ago) % RECENT_BOARDS])
    }

    /// The position the game started from.
    pub fn initial_board(&self) -> &Board {
        &self.initial_board
    }

    /// The player who moved first.
    pub fn initial_player(&self) -> Player {
        self.initial_player
    }

    /// Turn number of the initial position (e.g. the number of handicap stones).
    pub fn initial_turn_number(&self) -> u32 {
        self.initial_turn_number
    }

    /// Sets the turn number of the initial position; affects nothing else.
    pub fn set_initial_turn_number(&mut self, n: u32) {
        self.initial_turn_number = n;
    }

    /// Current turn number: initial turn number plus moves played.
    pub fn turn_number(&self) -> u32 {
        self.initial_turn_number + self.turns.len() as u32
    }

    /// The current phase: main, or one of territory scoring's cleanup phases.
    #[inline]
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Turns played in the current phase.
    pub fn turns_this_phase(&self) -> u32 {
        self.turns_this_phase
    }

    /// How many recent turns of this phase plausibly obey the rules (net history length).
    pub fn approx_valid_turns_this_phase(&self) -> u32 {
        self.approx_valid_turns_this_phase
    }

    /// Like [`Game::approx_valid_turns_this_phase`], but reset only by illegal moves.
    pub fn consec_valid_turns_this_game(&self) -> u32 {
        self.consec_valid_turns_this_game
    }

    /// Passes in a row that count towards ending the game (or the phase).
    pub fn consecutive_ending_passes(&self) -> u32 {
        self.consecutive_ending_passes
    }

    /// The simple-ko banned point (main phase).
    pub fn ko_point(&self) -> Option<Loc> {
        self.board.ko()
    }

    /// True if a superko rule (main phase) or a cleanup ko ban forbids the player to move from playing here.
    pub fn superko_banned(&self, loc: Loc) -> bool {
        self.superko_banned[loc.index()]
    }

    /// True if the stone on this point is ko-recapture-blocked (cleanup phases).
    pub fn ko_recapture_blocked(&self, loc: Loc) -> bool {
        self.ko_recap_blocked[loc.index()]
    }

    /// The colour of a point when the second cleanup phase began.
    pub fn second_cleanup_start(&self, loc: Loc) -> Option<Player> {
        Player::from_cell(self.second_cleanup_start[loc.index()])
    }

    /// Points White gets beyond komi and the board: territory-scoring stone adjustments and the button.
    pub fn white_bonus(&self) -> f32 {
        self.white_bonus
    }

    /// Points White gets for Black's handicap stones.
    pub fn white_handicap_bonus(&self) -> f32 {
        self.white_handicap_bonus
    }

    /// True if the button (first pass half point) can still be taken.
    pub fn button_available(&self) -> bool {
        self.button_available
    }

    /// Komi from `player`'s side with all bonuses; the draw adjustment moves an
    /// integer result by `draw_value_for_white - 0.5`.
    pub fn self_komi(&self, player: Player, draw_value_for_white: f64) -> f32 {
        let draw = if self.rules.result_is_integer() {
            (draw_value_for_white - 0.5) as f32
        } else {
            0.0
        };
        let white = self.white_bonus + self.white_handicap_bonus + self.rules.komi + draw;
        match player {
            Player::White => white,
            Player::Black => -white,
        }
    }

    /// The result, once the game has ended.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// True once the game has ended.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// True if the main phase has ended but the cleanup phases were not played
    /// (territory scoring without cleanup); [`Game::end_and_score_now`] then scores it.
    pub fn past_normal_phase_end(&self) -> bool {
        self.past_normal_phase_end
    }

    /// True if ending the current phase ends the game.
    pub fn is_final_phase(&self) -> bool {
        self.rules.scoring == ScoringRule::Area || self.phase == Phase::Cleanup2
    }

    // ---- settings ----

    /// Changes komi; a scored result is recomputed.
    pub fn set_komi(&mut self, komi: f32) {
        let old = self.rules.komi;
        self.rules.komi = komi;
        if let Some(Outcome::Scored { white_minus_black }) = self.outcome {
            self.outcome = Some(Outcome::Scored {
                white_minus_black: white_minus_black - old + komi,
            });
        }
    }

    /// Changes the rules and replays the game under them.
    pub fn set_rules(&mut self, rules: Rules) -> Result<(), IllegalMove> {
        self.rules = rules;
        self.replay(self.turns.len())
    }

    /// Changes the options and replays the game under them.
    pub fn set_options(&mut self, options: GameOptions) -> Result<(), IllegalMove> {
        self.options = options;
        self.replay(self.turns.len())
    }

    /// Fixes the number of handicap stones instead of inferring it from the position.
    pub fn set_handicap_override(&mut self, n: Option<u32>) {
        self.override_handicap = n;
        self.white_handicap_bonus = self.compute_white_handicap_bonus();
    }

    // ---- legality ----

    /// Why `pla` may not play `mv` now, or `Ok`.
    pub fn check_move(&self, pla: Player, mv: Move) -> Result<(), IllegalMove> {
        if pla != self.to_move {
            return Err(IllegalMove::WrongPlayer);
        }
        let Move::Play(loc) = mv else {
            return Ok(());
        };
        if self.phase.is_cleanup() {
            if self.is_pass_for_ko(pla, loc) {
                return Ok(());
            }
        } else if self.board.ko() == Some(loc) {
            return Err(IllegalMove::Ko);
        }
        self.board
            .check_move_ignoring_ko(mv, pla, self.rules.multi_stone_suicide)?;
        if self.superko_banned[loc.index()] {
            return Err(if self.phase.is_cleanup() {
                IllegalMove::CleanupKo
            } else {
                IllegalMove::Superko
            });
        }
        Ok(())
    }

    /// True if the player to move may play `mv`.
    #[inline]
    pub fn is_legal(&self, mv: Move) -> bool {
        self.check_move(self.to_move, mv).is_ok()
    }

    /// Every legal move of the player to move: points row-major from the top-left, then pass.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v: Vec<Move> = self
            .board
            .size()
            .points()
            .map(Move::Play)
            .filter(|&m| self.is_legal(m))
            .collect();
        v.push(Move::Pass);
        v
    }

    /// In a cleanup phase: is this move the "unblock ko recapture" action (a pass for ko)?
    pub fn is_pass_for_ko(&self, pla: Player, loc: Loc) -> bool {
        if self.phase == Phase::Main {
            return false;
        }
        let opp = Some(pla.opp());
        if self.board.stone(loc) == opp
            && self.ko_recap_blocked[loc.index()]
            && self.board.chain_len(loc) == 1
            && self.board.liberties(loc) == 1
        {
            return true;
        }
        matches!(self.board.ko_capture_point(loc, pla),
            Some(v) if self.ko_recap_blocked[v.index()] && self.board.stone(v) == opp)
    }

    /// True if a pass by the player to move would end the current phase.
    pub fn pass_would_end_phase(&self) -> bool {
        self.pass_would_end_phase_for(self.to_move)
    }

    /// True if a pass by `pla` would end the current phase; `pla` need not be the
    /// player to move (KataGo's `passWouldEndPhase(board, pla)`, used by NN features).
    pub fn pass_would_end_phase_for(&self, pla: Player) -> bool {
        let kh = self.ko_hash(pla);
        self.passes_after_pass() >= 2 || self.is_spight_ending_pass(pla, kh)
    }

    /// True if a pass by the player to move would end the game.
    pub fn pass_would_end_game(&self) -> bool {
        self.pass_would_end_phase() && self.is_final_phase()
    }

    /// True if a pass would end the game only as a second pass that friendly-pass rules
    /// should not accept (search wants a third pass unless the Spight rule ends it).
    pub fn should_suppress_friendly_pass_end(&self) -> bool {
        self.should_suppress_friendly_pass_end_for(self.to_move)
    }

    /// [`Game::should_suppress_friendly_pass_end`] for a pass by `pla`, who need not be
    /// the player to move (KataGo's `shouldSuppressEndGameFromFriendlyPass(board, pla)`).
    pub fn should_suppress_friendly_pass_end_for(&self, pla: Player) -> bool {
        self.rules.friendly_pass_ok
            && self.rules.scoring == ScoringRule::Area
            && self.passes_after_pass() == 2
            && !self.is_spight_ending_pass(pla, self.ko_hash(pla))
    }

    // ---- playing ----

    /// Plays a legal move for the player to move.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        self.check_move(self.to_move, mv)?;
        self.apply(self.to_move, mv);
        Ok(())
    }

    /// Plays a move that the board can carry out, for either player, tolerating
    /// superko, ko, turn order and multi-stone suicide (records from other rule sets,
    /// GTP `play` out of turn). Refuses occupied points and one-stone suicide.
    pub fn play_tolerant(&mut self, pla: Player, mv: Move) -> Result<(), IllegalMove> {
        if let Move::Play(loc) = mv {
            if !self.is_pass_for_ko(pla, loc) {
                self.board.check_move_ignoring_ko(mv, pla, true)?;
            }
        }
        self.apply(pla, mv);
        Ok(())
    }

    /// Takes back the last move (by replaying the game); false if there was none.
    pub fn undo(&mut self) -> bool {
        if self.turns.is_empty() {
            return false;
        }
        self.replay(self.turns.len() - 1).is_ok()
    }

    /// Records a resignation.
    pub fn resign(&mut self, loser: Player) {
        self.outcome = Some(Outcome::Resigned {
            winner: loser.opp(),
        });
        self.past_normal_phase_end = false;
    }

    // ---- scoring ----

    /// The area map scoring would use now (KataGo's `getAreaNow`).
    pub fn area_now(&self) -> AreaMap {
        self.board_score().0
    }

    /// White's board points minus Black's (before komi and bonuses), with the area map.
    fn board_score(&self) -> (AreaMap, i32) {
        let sui = self.suicide_for_pass_alive();
        match self.rules.scoring {
            ScoringRule::Area => {
                if self.rules.tax == TaxRule::None {
                    let area = self.board.area(crate::area::AreaOptions::full(sui));
                    let s = area.white_minus_black();
                    (area, s)
                } else {
                    let (area, regions) = self.board.independent_life_area(false, true, sui);
                    let tax = if self.rules.tax == TaxRule::All {
                        2 * regions
                    } else {
                        0
                    };
                    let s = area.white_minus_black() - tax;
                    (area, s)
                }
            }
            ScoringRule::Territory => {
                let keep_territories = self.rules.tax == TaxRule::None;
                let (mut area, regions) =
                    self.board
                        .independent_life_area(keep_territories, false, sui);
                for l in self.board.size().points() {
                    if area.get(l).is_some() {
                        continue;
                    }
                    if let Some(p) = self.board.stone(l) {
                        if self.phase != Phase::Cleanup2 || self.second_cleanup_start(l) == Some(p)
                        {
                            area.set(l, Some(p));
                        }
                    }
                }
                let tax = if self.rules.tax == TaxRule::All {
                    2 * regions
                } else {
                    0
                };
                let s = area.white_minus_black() - tax;
                (area, s)
            }
        }
    }

    /// White minus Black independent-life regions, with the flags scoring uses.
    pub fn independent_life_region_balance(&self) -> i32 {
        let sui = self.suicide_for_pass_alive();
        let (keep_t, keep_s) = match self.rules.scoring {
            ScoringRule::Area => (false, true),
            ScoringRule::Territory => (self.rules.tax == TaxRule::None, false),
        };
        self.board.independent_life_area(keep_t, keep_s, sui).1
    }

    /// Ends the game now and scores the board as it stands (takes an untaken button
    /// for the player to move). Returns the area map used.
    pub fn end_and_score_now(&mut self) -> AreaMap {
        let (area, board_score) = self.board_score();
        self.take_button(self.to_move);
        self.set_scored(board_score as f32);
        area
    }

    /// Scores the game again with `dead` (stones both players agree are dead, as in a
    /// counting phase) taken off the board first; the board itself keeps them. Points
    /// without a stone are ignored.
    pub fn rescore_with_dead(&mut self, dead: &[Loc]) -> Result<(), SetupError> {
        let mut counted = self.board.clone();
        let removals: Vec<(Loc, Option<Player>)> = dead
            .iter()
            .filter(|&&l| counted.stone(l).is_some())
            .map(|&l| (l, None))
            .collect();
        counted.set_stones(&removals)?;
        let kept = std::mem::replace(&mut self.board, counted);
        let (_, board_score) = self.board_score();
        self.board = kept;
        self.set_scored(board_score as f32);
        Ok(())
    }

    /// If every point is pass-alive stone or territory, ends and scores the game (true).
    pub fn end_if_all_pass_alive(&mut self) -> bool {
        let area = self.board.area(crate::area::AreaOptions::pass_alive(
            self.suicide_for_pass_alive(),
        ));
        if self.board.size().points().any(|l| area.get(l).is_none()) {
            return false;
        }
        if self.rules.tax == TaxRule::All {
            self.end_and_score_now();
        } else {
            self.take_button(self.to_move);
            self.set_scored(area.white_minus_black() as f32);
        }
        true
    }

    // ---- hashes ----

    /// Hash of the whole situation the rules care about: stones, player to move, phase,
    /// ko and superko bans, cleanup marks, komi with bonuses and the rules themselves.
    pub fn situation_hash(&self) -> Hash {
        let size = self.board.size();
        let mut h = self.board.position_hash()
            ^ zobrist::PLAYER[self.to_move.index()]
            ^ zobrist::PHASE[self.phase.index()];
        let ko = self.board.ko();
        if self.phase == Phase::Main {
            if let Some(k) = ko {
                h ^= zobrist::KO_BAN[k.index()];
            }
        }
        for l in size.points() {
            let i = l.index();
            if self.superko_banned[i] && (self.phase.is_cleanup() || Some(l) != ko) {
                h ^= zobrist::KO_BAN[i];
            }
            if self.ko_recap_blocked[i] {
                h ^= zobrist::KO_MARK[i];
            }
            if self.phase == Phase::Cleanup2 {
                if let Some(p) = self.second_cleanup_start(l) {
                    h ^= zobrist::SECOND_CLEANUP_START[i * 2 + p.index()];
                }
            }
        }
        let komi = (self.self_komi(self.to_move, 0.5) * 256.0) as i64 as u64;
        h ^= (mix64(komi) as u128) << 64 | mix64(!komi) as u128;
        let rules_text = self.rules.compact_no_komi();
        let mut rh = 0xcbf2_9ce4_8422_2325u64;
        for b in rules_text.bytes().chain([
            self.button_available as u8,
            self.options.pass_alive_as_if_suicide_legal as u8,
        ]) {
            rh = (rh ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h ^ (mix64(rh) as u128)
    }

    // ---- internals ----

    fn suicide_for_pass_alive(&self) -> bool {
        self.rules.multi_stone_suicide || self.options.pass_alive_as_if_suicide_legal
    }

    /// The hash that decides "the same state" for ko purposes, with `pla` to move.
    fn ko_hash(&self, pla: Player) -> Hash {
        let with_player = matches!(self.rules.ko, KoRule::Simple | KoRule::Situational)
            || self.phase.is_cleanup();
        let mut h = self.board.position_hash() ^ self.ko_recap_hash;
        if with_player {
            h ^= zobrist::PLAYER[pla.index()];
        }
        h
    }

    fn phase_has_spight_ending(&self) -> bool {
        self.phase.is_cleanup() || matches!(self.rules.ko, KoRule::Simple | KoRule::Spight)
    }

    fn is_spight_ending_pass(&self, pla: Player, ko_hash_before: Hash) -> bool {
        self.phase_has_spight_ending() && self.pass_hashes[pla.index()].contains(&ko_hash_before)
    }

    fn passes_after_pass(&self) -> u32 {
        if self.phase == Phase::Main && self.rules.ko == KoRule::Spight {
            0
        } else {
            self.consecutive_ending_passes + 1
        }
    }

    fn set_blocked(&mut self, i: usize, b: bool) {
        if self.ko_recap_blocked[i] != b {
            self.ko_recap_blocked[i] = b;
            self.ko_recap_hash ^= zobrist::KO_MARK[i];
        }
    }

    fn take_button(&mut self, pla: Player) {
        if self.button_available {
            self.button_available = false;
            self.white_bonus += if pla == Player::White { 0.5 } else { -0.5 };
        }
    }

    fn set_scored(&mut self, board_score: f32) {
        let s = board_score + self.white_bonus + self.white_handicap_bonus + self.rules.komi;
        self.outcome = Some(Outcome::Scored {
            white_minus_black: s,
        });
        self.past_normal_phase_end = false;
    }

    fn ko_hash_occurrences(&self, h: Hash) -> usize {
        self.ko_hashes.iter().filter(|&&k| k == h).count()
    }

    fn num_handicap_stones(&self) -> u32 {
        if let Some(n) = self.override_handicap {
            return n;
        }
        let mut black_turns = 0;
        if self.options.black_opening_run_is_handicap {
            for (i, t) in self.turns.iter().enumerate() {
                if t.player != Player::Black {
                    // Two White moves in a row: a set-up, not a handicap.
                    if self
                        .turns
                        .get(i + 1)
                        .is_some_and(|n| n.player != Player::Black)
                    {
                        black_turns = 0;
                        break;
                    }
                    // A lone White pass between Black's placements: still handicap.
                    if t.mv == Move::Pass {
                        continue;
                    }
                    break;
                }
                if t.mv != Move::Pass {
                    black_turns += 1;
                }
            }
        }
        let b = &self.initial_board;
        if b.num_stones(Player::White) != 0 {
            return 0;
        }
        let advantage = b.num_stones(Player::Black) as u32 + black_turns;
        if advantage <= 1 {
            0
        } else {
            advantage
        }
    }

    fn compute_white_handicap_bonus(&self) -> f32 {
        let n = match self.rules.white_handicap_bonus {
            HandicapBonus::Zero => return 0.0,
            _ => self.num_handicap_stones(),
        };
        match self.rules.white_handicap_bonus {
            HandicapBonus::N => n as f32,
            _ => n.saturating_sub(1) as f32,
        }
    }

    /// Resets every field to the initial position (KataGo's `clear`).
    fn reset_to_initial(&mut self) {
        self.board.clone_from(&self.initial_board);
        for b in self.recent.iter_mut() {
            b.clone_from(&self.initial_board);
        }
        self.recent_at = 0;
        self.to_move = self.initial_player;
        self.turns.clear();
        self.ko_hashes.clear();
        self.white_has_moved = false;
        self.ever_occupied = [false; MAX_ARR];
        for l in self.board.size().points() {
            self.ever_occupied[l.index()] = self.board.stone(l).is_some();
        }
        self.superko_banned = [false; MAX_ARR];
        self.consecutive_ending_passes = 0;
        self.pass_hashes = [Vec::new(), Vec::new()];
        self.phase = self.initial_phase;
        self.turns_this_phase = 0;
        self.approx_valid_turns_this_phase = 0;
        self.consec_valid_turns_this_game = 0;
        self.ko_recap_blocked = [false; MAX_ARR];
        self.ko_recap_hash = 0;
        self.cleanup_ko_captures.clear();
        self.second_cleanup_start = [0; MAX_ARR];
        if self.phase == Phase::Cleanup2 {
            self.snapshot_second_cleanup_start();
        }
        self.white_bonus = 0.0;
        self.button_available = self.rules.button && self.phase == Phase::Main;
        self.past_normal_phase_end = false;
        self.outcome = None;
        self.ko_hashes.push(self.ko_hash(self.to_move));
        if self.rules.scoring == ScoringRule::Territory {
            // Territory is scored as area minus stones played: charge the stones already there,
            // and any captured ones.
            let b = &self.board;
            self.white_bonus +=
                b.num_stones(Player::Black) as f32 - b.num_stones(Player::White) as f32;
            self.white_bonus -= b.captures(Player::White) as f32 - b.captures(Player::Black) as f32;
        }
        self.white_handicap_bonus = self.compute_white_handicap_bonus();
    }

    fn snapshot_second_cleanup_start(&mut self) {
        for l in self.board.size().points() {
            self.second_cleanup_start[l.index()] = self.board.stone(l).map_or(0, Player::cell);
        }
    }

    /// Replays the first `n` recorded turns from the initial position.
    fn replay(&mut self, n: usize) -> Result<(), IllegalMove> {
        let turns = std::mem::take(&mut self.turns);
        self.reset_to_initial();
        for t in &turns[..n] {
            if let Move::Play(loc) = t.mv {
                if !self.is_pass_for_ko(t.player, loc) {
                    self.board.check_move_ignoring_ko(t.mv, t.player, true)?;
                }
            }
            self.apply_with(t.player, t.mv, t.stop_at_phase_end);
        }
        Ok(())
    }

    /// Carries out a pseudo-legal move (KataGo's `makeBoardMoveAssumeLegal`).
    fn apply(&mut self, pla: Player, mv: Move) {
        self.apply_with(pla, mv, !self.options.cleanup_phases);
    }

    fn apply_with(&mut self, pla: Player, mv: Move, stop_at_phase_end: bool) {
        let pos_hash_before = self.board.position_hash();
        if self.outcome.is_some() || self.past_normal_phase_end {
            // Moves after the end: only the latest stays plausible history.
            self.approx_valid_turns_this_phase = self.approx_valid_turns_this_phase.min(1);
            self.consec_valid_turns_this_game = self.consec_valid_turns_this_game.min(1);
        }
        let was_illegal = self.check_move(pla, mv).is_err();
        self.outcome = None;
        self.past_normal_phase_end = false;

        // Passes, the button and the pass-ending rules.
        let mut spight_end = false;
        match mv {
            Move::Play(_) => self.consecutive_ending_passes = 0,
            Move::Pass if self.button_available => {
                self.take_button(pla);
                self.consecutive_ending_passes = 0;
                // Taking the button is a change of state: earlier positions no longer repeat.
                self.pass_hashes = [Vec::new(), Vec::new()];
                self.ko_hashes.clear();
            }
            Move::Pass => {
                if self.phase_has_spight_ending() {
                    // Passes lift bans and restart cycle detection.
                    self.ko_hashes.clear();
                }
                let kh = self.ko_hash(pla);
                self.consecutive_ending_passes = self.passes_after_pass();
                spight_end = self.is_spight_ending_pass(pla, kh);
                self.pass_hashes[pla.index()].push(kh);
            }
        }

        // In cleanup, a move on a blocked ko is the unblock action and nothing else.
        let mut pass_for_ko = false;
        if let (true, Move::Play(loc)) = (self.phase.is_cleanup(), mv) {
            let opp = Some(pla.opp());
            if self.board.stone(loc) == opp && self.ko_recap_blocked[loc.index()] {
                self.set_blocked(loc.index(), false);
                pass_for_ko = true;
            } else if let Some(v) = self.board.ko_capture_point(loc, pla) {
                if self.ko_recap_blocked[v.index()] && self.board.stone(v) == opp {
                    self.set_blocked(v.index(), false);
                    pass_for_ko = true;
                }
            }
            if pass_for_ko {
                self.board.clear_ko();
            }
        }
        if !pass_for_ko {
            self.board.play(mv, pla);
            if self.phase.is_cleanup() {
                if let (Some(_), Move::Play(loc)) = (self.board.ko(), mv) {
                    self.set_blocked(loc.index(), true);
                    self.cleanup_ko_captures.push((pos_hash_before, loc, pla));
                    self.board.clear_ko();
                }
                for l in self.board.size().points() {
                    if self.ko_recap_blocked[l.index()] && self.board.is_empty_at(l) {
                        self.set_blocked(l.index(), false);
                    }
                }
            }
        }

        self.recent_at = (self.recent_at + 1) % RECENT_BOARDS;
        self.recent[self.recent_at].clone_from(&self.board);
        self.ko_hashes.push(self.ko_hash(pla.opp()));
        self.turns.push(Turn {
            player: pla,
            mv,
            stop_at_phase_end,
        });
        self.turns_this_phase += 1;
        self.approx_valid_turns_this_phase += 1;
        self.consec_valid_turns_this_game += 1;
        self.to_move = pla.opp();
        if was_illegal {
            self.consec_valid_turns_this_game = 0;
        }
        if let Move::Play(l) = mv {
            self.ever_occupied[l.index()] = true;
        }

        self.update_superko_bans(pla.opp());

        if self.rules.scoring == ScoringRule::Territory
            && self.phase != Phase::Cleanup2
            && mv != Move::Pass
            && !pass_for_ko
        {
            self.white_bonus += if pla == Player::Black { 1.0 } else { -1.0 };
        }

        if pla == Player::White && mv != Move::Pass {
            self.white_has_moved = true;
        }
        if self.options.black_opening_run_is_handicap
            && !self.white_has_moved
            && pla == Player::Black
            && self.rules.white_handicap_bonus != HandicapBonus::Zero
        {
            self.white_handicap_bonus = self.compute_white_handicap_bonus();
        }

        if self.consecutive_ending_passes >= 2 || spight_end {
            self.end_phase(pla, stop_at_phase_end);
        }

        // Long cycles without passes end the game with no result.
        if mv != Move::Pass
            && (self.phase.is_cleanup() || self.rules.ko == KoRule::Simple)
            && self.ko_hash_occurrences(*self.ko_hashes.last().expect("pushed above")) >= 3
        {
            self.outcome = Some(Outcome::NoResult);
        }

        if self.options.end_when_all_pass_alive && self.outcome.is_none() {
            self.end_if_all_pass_alive();
        }
    }

    fn end_phase(&mut self, last_mover: Player, stop_at_phase_end: bool) {
        let next = self.phase.next().filter(|_| !self.is_final_phase());
        let Some(next) = next else {
            self.end_and_score_now();
            return;
        };
        if stop_at_phase_end {
            self.past_normal_phase_end = true;
            self.approx_valid_turns_this_phase = self.approx_valid_turns_this_phase.min(1);
            self.consec_valid_turns_this_game = self.consec_valid_turns_this_game.min(1);
        } else {
            self.phase = next;
            self.turns_this_phase = 0;
            self.approx_valid_turns_this_phase = 0;
            if self.phase == Phase::Cleanup2 {
                self.snapshot_second_cleanup_start();
            }
            self.superko_banned = [false; MAX_ARR];
            self.consecutive_ending_passes = 0;
            self.pass_hashes = [Vec::new(), Vec::new()];
            self.ko_recap_blocked = [false; MAX_ARR];
            self.ko_recap_hash = 0;
            self.cleanup_ko_captures.clear();
            self.ko_hashes.clear();
            self.ko_hashes.push(self.ko_hash(last_mover.opp()));
        }
    }

    /// Marks the points where `next` may not play because of superko (main phase)
    /// or because it already captured that ko from this position (cleanup).
    fn update_superko_bans(&mut self, next: Player) {
        if self.phase == Phase::Main && self.rules.ko != KoRule::Simple {
            let situational = self.rules.ko == KoRule::Situational;
            let sui = self.rules.multi_stone_suicide;
            for l in self.board.size().points() {
                let i = l.index();
                let b = &self.board;
                self.superko_banned[i] = if !b.is_empty_at(l) {
                    false
                } else if !self.ever_occupied[i] && !b.is_suicide(Move::Play(l), next) {
                    // A stone where none ever stood makes a new position.
                    false
                } else if b.is_illegal_suicide(l, next, sui) || b.ko() == Some(l) {
                    false
                } else {
                    let mut h = b.hash_after(l, next);
                    if situational {
                        h ^= zobrist::PLAYER[next.opp().index()];
                    }
                    self.ko_hashes.contains(&h)
                };
            }
        } else if self.phase.is_cleanup() {
            self.superko_banned = [false; MAX_ARR];
            let pos = self.board.position_hash();
            for &(h, loc, p) in &self.cleanup_ko_captures {
                if h == pos && p == next {
                    self.superko_banned[loc.index()] = true;
                }
            }
        }
    }
}

/// A 64-bit finaliser (splitmix's) to spread komi and rules into the situation hash.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl std::fmt::Debug for Game {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}to move: {}, phase {}, rules {}, outcome {:?}",
            self.board,
            self.to_move,
            self.phase.index(),
            self.rules,
            self.outcome
        )
    }
}
