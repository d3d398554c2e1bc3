//! Playing strength with the network: the one table from rank to search visits, policy
//! temperature and aimed point loss, and the move choice that plays at a rank.
//!
//! A rank keeps the network's judgement intact and weakens only the choice: a shorter
//! search, a flatter root policy (so more moves get evaluated), and a move drawn among the
//! moves searched enough to know their loss, the one whose estimated loss is nearest a loss
//! drawn around the rank's aim for the game's phase, so its mistakes are of an even size
//! rather than rare and large. Safety rules a human at any rank keeps hold over the draw:
//! no illegal move, no filling of a real one-point eye, no pass while the opponent has
//! dead stones on the board.

use std::fmt;
use std::str::FromStr;

use tengen_rules::{Game, Move, Player};

use crate::analysis::{Analysis, MoveInfo};
use crate::params::SearchParams;

/// Ownership (from the mover's view) above which an opponent stone counts as dead.
const DEAD_OWNERSHIP: f32 = 0.5;

/// Weakest kyu rank.
pub const MAX_KYU: u8 = 25;
/// Strongest dan rank.
pub const MAX_DAN: u8 = 5;

/// An amateur rank, 25 kyu to 5 dan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rank(u8);

impl Rank {
    /// `n` kyu (1 to 25).
    pub fn kyu(n: u8) -> Option<Rank> {
        (1..=MAX_KYU).contains(&n).then(|| Rank(MAX_KYU - n))
    }

    /// `n` dan (1 to 5).
    pub fn dan(n: u8) -> Option<Rank> {
        (1..=MAX_DAN).contains(&n).then(|| Rank(MAX_KYU - 1 + n))
    }

    /// Every rank, weakest first.
    pub fn all() -> impl Iterator<Item = Rank> {
        (0..TABLE.len() as u8).map(Rank)
    }

    /// This rank's row of the table.
    pub fn settings(self) -> &'static RankSettings {
        &TABLE[usize::from(self.0)]
    }
}

impl fmt::Display for Rank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < MAX_KYU {
            write!(f, "{}k", MAX_KYU - self.0)
        } else {
            write!(f, "{}d", self.0 - MAX_KYU + 1)
        }
    }
}

/// How strongly the engine plays: at a rank, or at full strength.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strength {
    /// An amateur rank.
    Rank(Rank),
    /// Full strength: the search's own choice, unchanged.
    #[default]
    Max,
}

impl Strength {
    /// The rank's settings; `None` at full strength.
    pub fn settings(self) -> Option<&'static RankSettings> {
        match self {
            Strength::Rank(r) => Some(r.settings()),
            Strength::Max => None,
        }
    }
}

/// Why a text is not a strength.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("strength must be 25k to 1k, 1d to 5d, or max; got {0:?}")]
pub struct StrengthError(pub String);

impl FromStr for Strength {
    type Err = StrengthError;

    fn from_str(s: &str) -> Result<Strength, StrengthError> {
        let t = s.trim().to_ascii_lowercase();
        if t == "max" {
            return Ok(Strength::Max);
        }
        let err = || StrengthError(s.to_string());
        let split = t.len().checked_sub(1).filter(|&i| t.is_char_boundary(i));
        let (num, unit) = t.split_at(split.ok_or_else(err)?);
        let n: u8 = num.parse().map_err(|_| err())?;
        let rank = match unit {
            "k" => Rank::kyu(n),
            "d" => Rank::dan(n),
            _ => None,
        };
        rank.map(Strength::Rank).ok_or_else(err)
    }
}

impl fmt::Display for Strength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strength::Rank(r) => r.fmt(f),
            Strength::Max => f.write_str("max"),
        }
    }
}

/// The part of a game a move is in, for the aimed loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GamePhase {
    /// The first tenth of the board's points played.
    Opening,
    /// Until half the board is occupied.
    Middle,
    /// The rest.
    Endgame,
}

impl GamePhase {
    /// The phase of `game`'s position.
    pub fn of(game: &Game) -> GamePhase {
        let board = game.board();
        let area = board.size().area();
        if game.turns().len() * 10 < area {
            GamePhase::Opening
        } else if board.num_empty() * 2 > area {
            GamePhase::Middle
        } else {
            GamePhase::Endgame
        }
    }
}

/// What a rank does: one row of [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RankSettings {
    /// Root visits of the rank's search.
    pub visits: u64,
    /// Root policy temperature: above 1 spreads the search (and the draw) over more moves.
    pub temperature: f64,
    /// Aimed point loss of a move (the centre of its drawn target) in the opening, middle
    /// game and endgame, on any board (a stone's worth spread over a game's moves is about
    /// the same per move on every board).
    pub aim: [f64; 3],
}

impl RankSettings {
    /// The aimed loss, in points, for a move in `phase`.
    pub fn aim_for(&self, phase: GamePhase) -> f64 {
        let i = match phase {
            GamePhase::Opening => 0,
            GamePhase::Middle => 1,
            GamePhase::Endgame => 2,
        };
        self.aim[i]
    }

    /// `base` as this rank's search uses it (a flatter root policy).
    pub fn search_params(&self, base: &SearchParams) -> SearchParams {
        SearchParams {
            root_policy_temperature: self.temperature,
            ..base.clone()
        }
    }
}

const fn row(visits: u64, temperature: f64, aim: [f64; 3]) -> RankSettings {
    RankSettings {
        visits,
        temperature,
        aim,
    }
}

/// The rank table, weakest first (25k .. 1k, 1d .. 5d).
///
/// Principle: neighbouring ranks should win against each other at about the same rate. A
/// game's result varies more the more a side loses per move, so a step between ranks
/// counts in proportion to the loss itself: the table aims at a constant ratio of average
/// loss per move from rank to rank, 1.11 from 1d (0.52 points a move in the middle game)
/// down to 25k (7.06), and 1.36 among the dan ranks (0.15 at 5d; `max` loses about 0.1 by
/// the same measure). The opening's aim is 70% and the endgame's 50% of the middle game's.
/// [`choose`] aims each move's loss at the row's aim, so the mistakes are of an even size.
/// Visits grow 1.05 times a rank from 64 at 25k to 131 at 10k, then 1.10 times a rank to
/// 497 at 5d: at the strong ranks the aimed steps are a tenth of a point a move, and the
/// rank's own misreadings (which its visits cut) should not drown them, as they likely did
/// between 5k and 6k on 19x19 at 1.05 a rank (docs/strength.md). Temperature falls
/// geometrically from 8 to 1 (weak ranks need a flat policy for enough evaluated moves to
/// aim at).
pub const TABLE: [RankSettings; 30] = [
    row(64, 8.00, [4.95, 7.06, 3.53]),  // 25k
    row(67, 7.45, [4.46, 6.36, 3.18]),  // 24k
    row(70, 6.93, [4.01, 5.73, 2.87]),  // 23k
    row(74, 6.45, [3.62, 5.17, 2.58]),  // 22k
    row(77, 6.01, [3.26, 4.65, 2.33]),  // 21k
    row(81, 5.59, [2.93, 4.19, 2.10]),  // 20k
    row(85, 5.20, [2.64, 3.78, 1.89]),  // 19k
    row(89, 4.84, [2.38, 3.40, 1.70]),  // 18k
    row(94, 4.51, [2.15, 3.07, 1.53]),  // 17k
    row(98, 4.20, [1.93, 2.76, 1.38]),  // 16k
    row(103, 3.91, [1.74, 2.49, 1.24]), // 15k
    row(108, 3.64, [1.57, 2.24, 1.12]), // 14k
    row(114, 3.38, [1.41, 2.02, 1.01]), // 13k
    row(119, 3.15, [1.27, 1.82, 0.91]), // 12k
    row(125, 2.93, [1.15, 1.64, 0.82]), // 11k
    row(131, 2.73, [1.03, 1.48, 0.74]), // 10k
    row(144, 2.54, [0.93, 1.33, 0.67]), // 9k
    row(159, 2.36, [0.84, 1.20, 0.60]), // 8k
    row(174, 2.20, [0.76, 1.08, 0.54]), // 7k
    row(192, 2.05, [0.68, 0.97, 0.49]), // 6k
    row(211, 1.91, [0.61, 0.88, 0.44]), // 5k
    row(232, 1.77, [0.55, 0.79, 0.39]), // 4k
    row(255, 1.65, [0.50, 0.71, 0.36]), // 3k
    row(281, 1.54, [0.45, 0.64, 0.32]), // 2k
    row(309, 1.43, [0.40, 0.58, 0.29]), // 1k
    row(340, 1.33, [0.36, 0.52, 0.26]), // 1d
    row(374, 1.24, [0.27, 0.38, 0.19]), // 2d
    row(411, 1.15, [0.20, 0.28, 0.14]), // 3d
    row(452, 1.07, [0.14, 0.20, 0.10]), // 4d
    row(497, 1.00, [0.10, 0.15, 0.07]), // 5d
];

/// Half-width of the band the target loss is drawn from, as a fraction of the phase's aim:
/// targets spread evenly over 50% to 150% of the aim, so a rank's moves lose about the
/// same, not mostly nothing and sometimes a lot.
pub const TARGET_SPREAD: f64 = 0.5;
/// How many evenly spaced targets the draw picks among (a discrete draw, so that
/// [`candidates`] can give each move's exact probability).
pub const TARGET_STEPS: usize = 8;
/// Moves within this fraction of the aim beyond the nearest one to a target share that
/// target's draw by policy: a few near-equal mistakes, the more natural first.
pub const NEAR_WINDOW: f64 = 0.2;

/// How far one playout's score lead typically is from a move's true lead, in points: a
/// move searched `n` times has its lead known to about this over the square root of `n`
/// (on 9x9 with b6c96, drawn moves searched once were 1.2 points off a deeper search's
/// judgement, root mean square; docs/strength.md). A mistake is drawn only among moves
/// whose lead is known to within the aim (the best move always counts): a rarely searched
/// move's lead is little more than the network's first guess, and the draw would
/// otherwise prefer exactly the moves whose guess was too kind (a 1d's "half-point"
/// mistake that a deeper search finds loses seven points). At 1.2 the ranks from 10k
/// down keep every move in the middle game; 1d wants 6 visits there.
pub const LEAD_NOISE: f64 = 1.2;

/// Whether a move searched `visits` times has a lead known well enough to be drawn as a
/// mistake of `aim` points: [`LEAD_NOISE`] over the square root of its visits within `aim`.
pub fn known_within(visits: u64, aim: f64) -> bool {
    LEAD_NOISE <= aim * (visits as f64).sqrt()
}

/// One candidate of a rank's draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The move.
    pub mv: Move,
    /// Its estimated point loss against the search's best move (0 or more).
    pub loss: f64,
    /// Its probability in the draw (the candidates' weights sum to 1).
    pub weight: f64,
}

/// The moves a player may play after `analysis` of `game` (the mover to play) when aiming
/// at a loss of `aim` points this move, each with its probability. When the search's best
/// move is a pass the game is decided and there is no mistake to make: the pass alone, or
/// nothing (for [`choose`] to take dead stones off) while the opponent has dead stones.
/// Otherwise the legal moves that fill no own real eye and (but for the best move) were
/// searched enough for their loss to be [`known_within`] `aim`, drawn so: a target loss,
/// one of [`TARGET_STEPS`] evenly spaced over `aim` ± [`TARGET_SPREAD`], with equal
/// chances; for that target the moves whose estimated loss is nearest to it (within
/// [`NEAR_WINDOW`] of `aim` of the nearest), weighted by their (tempered) policy. Moves no
/// target picks are left out.
pub fn candidates(analysis: &Analysis, game: &Game, aim: f64) -> Vec<Candidate> {
    let Some(best) = analysis.moves.first() else {
        return Vec::new();
    };
    if best.mv == Move::Pass {
        return if opponent_has_dead_stones(analysis, game) {
            Vec::new()
        } else {
            vec![Candidate {
                mv: Move::Pass,
                loss: 0.0,
                weight: 1.0,
            }]
        };
    }
    let mover = game.to_move();
    let board = game.board();
    // Each allowed move with its loss and its policy prior.
    let allowed: Vec<(Candidate, f64)> = analysis
        .moves
        .iter()
        .enumerate()
        .filter(|&(i, m)| i == 0 || known_within(m.visits, aim))
        .map(|(_, m)| m)
        .filter(|m| match m.mv {
            Move::Pass => false,
            Move::Play(l) => game.is_legal(m.mv) && !board.is_simple_eye(l, mover),
        })
        .map(|m| {
            let c = Candidate {
                mv: m.mv,
                loss: loss_against(best, m, mover),
                weight: 0.0,
            };
            (c, m.prior.max(1e-6))
        })
        .collect();
    let window = NEAR_WINDOW * aim;
    let steps = TARGET_STEPS as f64;
    let mut weights = vec![0.0; allowed.len()];
    for k in 0..TARGET_STEPS {
        let target = aim * (1.0 - TARGET_SPREAD + 2.0 * TARGET_SPREAD * (k as f64 + 0.5) / steps);
        let nearest = allowed
            .iter()
            .map(|(c, _)| (c.loss - target).abs())
            .fold(f64::INFINITY, f64::min);
        let near = |c: &Candidate| (c.loss - target).abs() <= nearest + window;
        let total: f64 = allowed
            .iter()
            .filter(|(c, _)| near(c))
            .map(|(_, p)| p)
            .sum();
        for ((c, p), w) in allowed.iter().zip(&mut weights) {
            if near(c) {
                *w += p / total / steps;
            }
        }
    }
    allowed
        .into_iter()
        .zip(weights)
        .filter(|&(_, w)| w > 0.0)
        .map(|((c, _), weight)| Candidate { weight, ..c })
        .collect()
}

/// The most a move aims at when it makes up for loss the game still owes, as a multiple
/// of the phase's aim: a debt is paid over a few moves, not by one giant blunder.
pub const MAX_AIM_MULTIPLE: f64 = 3.0;

/// What a rank has aimed at and given away in the current game, move by move, so that
/// each move's aim makes up for the game so far: a game's deliberate loss then stays near
/// the rank's total instead of varying with the luck of each move's draw.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    entries: Vec<Entry>,
}

/// One chosen move's account.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Its index among the game's turns.
    turn: usize,
    player: Player,
    mv: Move,
    /// The loss it aimed at.
    aimed: f64,
    /// Its estimated loss.
    given: f64,
}

impl Ledger {
    /// Forgets every move (a new game, or a new rank).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The loss `game`'s mover aims at this move at `settings`: the phase's aim plus what
    /// its earlier moves in this game fell short of their aims (less what they overshot),
    /// between 0 and [`MAX_AIM_MULTIPLE`] times the phase's aim.
    pub fn aim(&self, game: &Game, settings: &RankSettings) -> f64 {
        let mover = game.to_move();
        let owed: f64 = self
            .entries
            .iter()
            .filter(|e| e.player == mover && Self::in_game(e, game))
            .map(|e| e.aimed - e.given)
            .sum();
        let phase_aim = settings.aim_for(GamePhase::of(game));
        (phase_aim + owed).clamp(0.0, MAX_AIM_MULTIPLE * phase_aim)
    }

    /// Notes that `game`'s mover plays `mv` where the rank aims at `aimed` (the phase's
    /// aim, or 0 for a move that is no mistake) and loses an estimated `given`; forgets
    /// moves no longer in `game` (undone, or of another game).
    pub fn record(&mut self, game: &Game, mv: Move, aimed: f64, given: f64) {
        self.entries.retain(|e| Self::in_game(e, game));
        self.entries.push(Entry {
            turn: game.turns().len(),
            player: game.to_move(),
            mv,
            aimed,
            given,
        });
    }

    /// Whether `e`'s move is still the one played at its turn in `game`.
    fn in_game(e: &Entry, game: &Game) -> bool {
        game.turns()
            .get(e.turn)
            .is_some_and(|t| t.player == e.player && t.mv == e.mv)
    }
}

/// The move a player at `settings` plays after `analysis` of `game`: drawn among the
/// [`candidates`] for the aim the `ledger` gives, by their probability; when none is left
/// (the search saw only a forbidden pass or eye-filling moves), a move taking dead
/// opponent stones off, else the playable evaluated move of least loss, else the search's
/// own choice (the position is finished). The move goes into the `ledger`. `None` only
/// when the search evaluated no move.
pub fn choose(
    analysis: &Analysis,
    game: &Game,
    settings: &RankSettings,
    ledger: &mut Ledger,
    rng: &mut fastrand::Rng,
) -> Option<Move> {
    let cands = candidates(analysis, game, ledger.aim(game, settings));
    // The ledger counts the rank's own aim, not this move's (which includes the debt, and
    // would count it twice).
    let (mv, aimed) = match draw(&cands, rng) {
        // A pass is no mistake and so no part of the aim.
        Some(Move::Pass) => (Move::Pass, 0.0),
        Some(mv) => (mv, settings.aim_for(GamePhase::of(game))),
        None => (fallback(analysis, game)?, 0.0),
    };
    ledger.record(game, mv, aimed, estimated_loss(analysis, game, mv));
    Some(mv)
}

/// A move drawn from `cands` by weight; `None` when there is nothing to draw.
fn draw(cands: &[Candidate], rng: &mut fastrand::Rng) -> Option<Move> {
    let total: f64 = cands.iter().map(|c| c.weight).sum();
    if total <= 0.0 {
        return None;
    }
    let mut r = rng.f64() * total;
    for c in cands {
        if r < c.weight {
            return Some(c.mv);
        }
        r -= c.weight;
    }
    cands.last().map(|c| c.mv)
}

/// [`choose`]'s move when the draw has no candidate.
fn fallback(analysis: &Analysis, game: &Game) -> Option<Move> {
    if opponent_has_dead_stones(analysis, game) {
        if let Some(mv) = cleanup_move(analysis, game) {
            return Some(mv);
        }
    }
    let mover = game.to_move();
    analysis
        .moves
        .iter()
        .filter(|m| match m.mv {
            Move::Play(l) => game.is_legal(m.mv) && !game.board().is_simple_eye(l, mover),
            Move::Pass => false,
        })
        .max_by(|a, b| mover_view(mover, a.score_lead).total_cmp(&mover_view(mover, b.score_lead)))
        .map(|m| m.mv)
        .or_else(|| analysis.best_move())
}

/// `mv`'s [`loss_against`] the search's best move (0 for a move the search did not
/// evaluate).
fn estimated_loss(analysis: &Analysis, game: &Game, mv: Move) -> f64 {
    let best = analysis.moves.first();
    let this = analysis.moves.iter().find(|m| m.mv == mv);
    match (best, this) {
        (Some(best), Some(this)) => loss_against(best, this, game.to_move()),
        _ => 0.0,
    }
}

/// `m`'s estimated loss against `best` for `mover`: the difference of their score leads,
/// never below 0.
fn loss_against(best: &MoveInfo, m: &MoveInfo, mover: Player) -> f64 {
    (mover_view(mover, best.score_lead) - mover_view(mover, m.score_lead)).max(0.0)
}

/// A move taking the opponent's dead stones off the board when the search saw only a
/// pass (it passes happily with them on the board): on a liberty of a dead stone, legal,
/// no own eye filled, capturing if it can, else keeping two liberties.
fn cleanup_move(analysis: &Analysis, game: &Game) -> Option<Move> {
    let own = analysis.ownership.as_ref()?;
    let mover = game.to_move();
    let board = game.board();
    let size = board.size();
    let dead: Vec<_> = size
        .points()
        .zip(own)
        .filter(|&(l, &o)| board.stone(l) == Some(mover.opp()) && is_mine(mover, o))
        .map(|(l, _)| l)
        .collect();
    let liberties = dead.iter().flat_map(|&d| board.neighbours(d)).filter(|&l| {
        board.is_empty_at(l) && game.is_legal(Move::Play(l)) && !board.is_simple_eye(l, mover)
    });
    let (capturing, other): (Vec<_>, Vec<_>) =
        liberties.partition(|&l| board.would_capture(l, mover));
    capturing
        .first()
        .or_else(|| {
            other
                .iter()
                .find(|&&l| board.self_atari_stones(l, mover) == 0)
        })
        .map(|&l| Move::Play(l))
}

/// Whether White-view ownership `o` gives the point to `mover`.
fn is_mine(mover: Player, o: f32) -> bool {
    mover_view(mover, f64::from(o)) > f64::from(DEAD_OWNERSHIP)
}

/// Whether the game is clearly lost for the player to move: a weak rank resigns only then
/// (and never a game the network thinks is won, however it plays). Below 3% to win and
/// behind by more than a twentieth of the board's points.
pub fn clearly_lost(analysis: &Analysis) -> bool {
    let area = analysis.size.area() as f64;
    analysis.mover_winrate() < 0.03 && analysis.mover_lead() < -area / 20.0
}

/// Whether the opponent of `game`'s mover has a stone the analysis's root ownership gives
/// to the mover (false without ownership).
pub fn opponent_has_dead_stones(analysis: &Analysis, game: &Game) -> bool {
    let Some(own) = &analysis.ownership else {
        return false;
    };
    let mover = game.to_move();
    let board = game.board();
    board
        .size()
        .points()
        .zip(own)
        .any(|(l, &o)| board.stone(l) == Some(mover.opp()) && is_mine(mover, o))
}

/// A White-view value from `mover`'s view.
fn mover_view(mover: Player, white: f64) -> f64 {
    match mover {
        Player::White => white,
        Player::Black => -white,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_reads_back_from_its_text() {
        let texts: Vec<String> = Rank::all().map(|r| r.to_string()).collect();
        assert_eq!(texts.first().map(String::as_str), Some("25k"));
        assert_eq!(texts.get(24).map(String::as_str), Some("1k"));
        assert_eq!(texts.get(25).map(String::as_str), Some("1d"));
        assert_eq!(texts.last().map(String::as_str), Some("5d"));
        for (r, t) in Rank::all().zip(&texts) {
            assert_eq!(t.parse::<Strength>(), Ok(Strength::Rank(r)));
        }
        assert_eq!("MAX".parse::<Strength>(), Ok(Strength::Max));
        assert_eq!(Strength::Max.to_string(), "max");
        assert_eq!(
            " 12K ".parse::<Strength>().map(|s| s.to_string()),
            Ok("12k".into())
        );
    }

    #[test]
    fn bad_texts_are_errors() {
        for t in [
            "", "k", "0k", "26k", "6d", "0d", "12", "12x", "-1k", "1.5k", "é", "kk",
        ] {
            assert!(t.parse::<Strength>().is_err(), "{t:?} parsed");
        }
    }

    #[test]
    fn the_table_gets_stronger_rank_by_rank() {
        for pair in TABLE.windows(2) {
            let (weak, strong) = (&pair[0], &pair[1]);
            assert!(strong.visits > weak.visits);
            assert!(strong.temperature < weak.temperature);
            for i in 0..3 {
                assert!(strong.aim[i] < weak.aim[i]);
            }
        }
        assert!(Rank::kyu(25) < Rank::kyu(1) && Rank::kyu(1) < Rank::dan(1));
    }

    #[test]
    fn the_ledger_carries_a_game_s_debt_and_forgets_undone_moves() {
        use tengen_rules::{BoardSize, Rules};
        let size = BoardSize::square(9).expect("9x9");
        let at = |x, y| Move::Play(size.loc(x, y).expect("on the board"));
        let r = Rank::kyu(20).expect("20k").settings();
        let mut game = Game::new(size, Rules::chinese());
        let mut ledger = Ledger::default();
        let opening = r.aim_for(GamePhase::Opening);
        assert_eq!(ledger.aim(&game, r), opening);
        // Black gives away nothing for its aim: the debt comes back on its next move.
        ledger.record(&game, at(2, 2), opening, 0.0);
        game.play(at(2, 2)).expect("legal");
        // White's account is its own.
        assert_eq!(ledger.aim(&game, r), opening);
        ledger.record(&game, at(6, 6), opening, 5.0 * opening);
        game.play(at(6, 6)).expect("legal");
        assert_eq!(ledger.aim(&game, r), 2.0 * opening);
        game.play(at(6, 2)).expect("legal");
        // White overshot by four aims: it plays its best until paid back, never below 0.
        assert_eq!(ledger.aim(&game, r), 0.0);
        // Black pays its debt with a move that loses two aims: its aim is the phase's again.
        let mut paid = game.clone();
        paid.undo();
        let mut ledger_paid = ledger.clone();
        ledger_paid.record(&paid, at(6, 2), opening, 2.0 * opening);
        let mut after = game.clone();
        after.play(at(2, 6)).expect("legal");
        assert_eq!(ledger_paid.aim(&after, r), opening);
        // A debt is capped: Black's third move is said to have gained ten aims.
        let mut before = game.clone();
        before.undo();
        ledger.record(&before, at(6, 2), opening, -10.0 * opening);
        assert_eq!(ledger.aim(&game, r), 0.0);
        let mut black = game.clone();
        black.set_player_to_move(Player::Black);
        assert_eq!(ledger.aim(&black, r), MAX_AIM_MULTIPLE * opening);
        // Undoing White's move forgets it; a new game forgets everything.
        game.undo();
        game.undo();
        game.set_player_to_move(Player::White);
        assert_eq!(ledger.aim(&game, r), opening);
        let fresh = Game::new(size, Rules::chinese());
        assert_eq!(ledger.aim(&fresh, r), opening);
    }

    /// An analysis of `game` whose root moves are `moves`, each with its lead from the
    /// mover's view and 10 visits (the first is the best).
    fn analysis_of(game: &Game, moves: &[(Move, f64)]) -> Analysis {
        let searched: Vec<_> = moves.iter().map(|&(mv, lead)| (mv, lead, 10)).collect();
        analysis_searched(game, &searched)
    }

    /// An analysis of `game` whose root moves are `moves`, each with its lead from the
    /// mover's view and its visits (the first is the best).
    fn analysis_searched(game: &Game, moves: &[(Move, f64, u64)]) -> Analysis {
        use crate::analysis::RootInfo;
        let mover = game.to_move();
        let root = RootInfo {
            current_player: mover,
            visits: 100,
            winrate: 0.5,
            score_mean: 0.0,
            score_stdev: 0.0,
            score_lead: 0.0,
            score_selfplay: 0.0,
            utility: 0.0,
            raw_winrate: 0.5,
            raw_lead: 0.0,
            raw_score_selfplay: 0.0,
            raw_score_selfplay_stdev: 0.0,
            raw_no_result_prob: 0.0,
            raw_var_time_left: 0.0,
            raw_st_wr_error: 0.0,
            raw_st_score_error: 0.0,
            this_hash: 0,
            sym_hash: 0,
        };
        let moves = moves
            .iter()
            .enumerate()
            .map(|(order, &(mv, lead, visits))| {
                // `mover_view` turns a mover's view back into White's as well.
                let white = mover_view(mover, lead);
                MoveInfo {
                    mv,
                    visits,
                    edge_visits: visits,
                    winrate: 0.5,
                    score_mean: white,
                    score_stdev: 0.0,
                    score_lead: white,
                    score_selfplay: white,
                    prior: 0.5,
                    utility: 0.0,
                    lcb: 0.5,
                    utility_lcb: 0.0,
                    order,
                    pv: vec![mv],
                    pv_visits: vec![visits],
                    pv_edge_visits: vec![visits],
                    ownership: None,
                    ownership_stdev: None,
                }
            })
            .collect();
        Analysis {
            size: game.board().size(),
            root,
            moves,
            ownership: None,
            ownership_stdev: None,
        }
    }

    /// Over a 9x9 game of `turns` in which every search offers a move losing nothing and
    /// one losing twice the aim, how far each player's summed loss ends from its summed
    /// aim; with `keep` the ledger lasts the game, else each move starts a fresh one.
    fn final_deviations(seed: u64, turns: usize, keep: bool) -> [f64; 2] {
        use tengen_rules::{BoardSize, Rules};
        let size = BoardSize::square(9).expect("9x9");
        let r = Rank::kyu(12).expect("12k").settings();
        let mut game = Game::new(size, Rules::chinese());
        let mut ledger = Ledger::default();
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut gap = [0.0; 2];
        for _ in 0..turns {
            let mover = game.to_move();
            let mut free = size
                .points()
                .filter(|&l| game.is_legal(Move::Play(l)) && !game.board().is_simple_eye(l, mover));
            let (Some(a), Some(b)) = (free.next(), free.next()) else {
                break;
            };
            let aim = r.aim_for(GamePhase::of(&game));
            let analysis = analysis_of(&game, &[(Move::Play(a), 0.0), (Move::Play(b), -2.0 * aim)]);
            if !keep {
                ledger.clear();
            }
            let mv = choose(&analysis, &game, r, &mut ledger, &mut rng).expect("a move");
            let given = if mv == Move::Play(a) { 0.0 } else { 2.0 * aim };
            gap[mover.index()] += given - aim;
            game.play(mv).expect("legal");
        }
        gap
    }

    #[test]
    fn a_game_s_loss_stays_near_its_aim() {
        let aim = Rank::kyu(12).expect("12k").settings().aim[1];
        let (mut kept, mut fresh) = (0.0_f64, 0.0_f64);
        for seed in 0..20 {
            for (k, f) in final_deviations(seed, 60, true)
                .into_iter()
                .zip(final_deviations(seed, 60, false))
            {
                // The ledger pays a debt within a move or two: never more than twice the
                // middle game's aim behind or ahead.
                assert!(
                    k.abs() <= 2.0 * aim,
                    "seed {seed}: a game ends {k:.2} off its aim"
                );
                kept = kept.max(k.abs());
                fresh = fresh.max(f.abs());
            }
        }
        // Without it a game's loss wanders with the draws.
        assert!(
            fresh > 2.0 * kept,
            "fresh {fresh:.2} against kept {kept:.2}"
        );
    }

    #[test]
    fn a_mistake_is_drawn_only_where_its_size_is_known() {
        use tengen_rules::{BoardSize, Rules};
        let size = BoardSize::square(9).expect("9x9");
        let at = |x, y| Move::Play(size.loc(x, y).expect("on the board"));
        let game = Game::new(size, Rules::chinese());
        let (best, near, far) = (at(2, 2), at(4, 4), at(6, 6));
        let drawn = |near_visits: u64, aim: f64| {
            let a = analysis_searched(
                &game,
                &[
                    (best, 0.0, 300),
                    (near, -aim, near_visits),
                    (far, -5.0 * aim, 200),
                ],
            );
            candidates(&a, &game, aim)
                .iter()
                .any(|c| c.mv == near && c.weight > 0.0)
        };
        // A half-point mistake wants its lead known to half a point: 6 visits, not 5.
        assert!(!drawn(5, 0.5));
        assert!(drawn(6, 0.5));
        // A five-point mistake is drawn on one visit.
        assert!(drawn(1, 5.0));
        // With nothing else near the target the strong rank plays the best move.
        let a = analysis_searched(&game, &[(best, 0.0, 300), (near, -0.5, 2)]);
        let cands = candidates(&a, &game, 0.5);
        assert_eq!(cands.iter().map(|c| c.mv).collect::<Vec<_>>(), vec![best]);
    }
}
