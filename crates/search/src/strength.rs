//! Playing strength with the network: the one table from rank to search visits, policy
//! temperature and point-loss budget, and the move choice that plays at a rank.
//!
//! A rank keeps the network's judgement intact and weakens only the choice: a shorter
//! search, a flatter root policy (so more moves get evaluated), and a move drawn among the
//! evaluated ones whose estimated loss fits the rank's budget for the game's phase. Safety
//! rules a human at any rank keeps hold over the draw: no illegal move, no filling of a
//! real one-point eye, no pass while the opponent has dead stones on the board.

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

/// The part of a game a move is in, for the loss budget.
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
    /// Largest point loss of a deliberate mistake on 19x19 in the opening, middle game and
    /// endgame (smaller boards scale it by their side).
    pub budget: [f64; 3],
}

impl RankSettings {
    /// The loss budget, in points, for a move in `phase` on a board of side `side`.
    pub fn budget_for(&self, phase: GamePhase, side: usize) -> f64 {
        let i = match phase {
            GamePhase::Opening => 0,
            GamePhase::Middle => 1,
            GamePhase::Endgame => 2,
        };
        self.budget[i] * side as f64 / 19.0
    }

    /// `base` as this rank's search uses it (a flatter root policy).
    pub fn search_params(&self, base: &SearchParams) -> SearchParams {
        SearchParams {
            root_policy_temperature: self.temperature,
            ..base.clone()
        }
    }
}

const fn row(visits: u64, temperature: f64, budget: [f64; 3]) -> RankSettings {
    RankSettings {
        visits,
        temperature,
        budget,
    }
}

/// The rank table, weakest first (25k .. 1k, 1d .. 5d). Visits double every ten ranks
/// from 32 (fewer leave too few evaluated moves to choose among), temperature falls
/// linearly from 3 to 1, and the budgets shrink by 15% a rank: a first guess
/// shaped after human point-loss statistics, to be refined by the calibration matches
/// (docs/strength.md).
pub const TABLE: [RankSettings; 30] = [
    row(32, 3.00, [21.00, 30.00, 15.00]), // 25k
    row(34, 2.93, [17.85, 25.50, 12.75]), // 24k
    row(37, 2.86, [15.17, 21.67, 10.84]), // 23k
    row(39, 2.79, [12.90, 18.42, 9.21]),  // 22k
    row(42, 2.72, [10.96, 15.66, 7.83]),  // 21k
    row(45, 2.66, [9.32, 13.31, 6.66]),   // 20k
    row(49, 2.59, [7.92, 11.31, 5.66]),   // 19k
    row(52, 2.52, [6.73, 9.62, 4.81]),    // 18k
    row(56, 2.45, [5.72, 8.17, 4.09]),    // 17k
    row(60, 2.38, [4.86, 6.95, 3.47]),    // 16k
    row(64, 2.31, [4.13, 5.91, 2.95]),    // 15k
    row(69, 2.24, [3.51, 5.02, 2.51]),    // 14k
    row(74, 2.17, [2.99, 4.27, 2.13]),    // 13k
    row(79, 2.10, [2.54, 3.63, 1.81]),    // 12k
    row(84, 2.03, [2.16, 3.08, 1.54]),    // 11k
    row(91, 1.97, [1.83, 2.62, 1.31]),    // 10k
    row(97, 1.90, [1.56, 2.23, 1.11]),    // 9k
    row(104, 1.83, [1.33, 1.89, 0.95]),   // 8k
    row(111, 1.76, [1.13, 1.61, 0.80]),   // 7k
    row(119, 1.69, [0.96, 1.37, 0.68]),   // 6k
    row(128, 1.62, [0.81, 1.16, 0.58]),   // 5k
    row(137, 1.55, [0.69, 0.99, 0.49]),   // 4k
    row(147, 1.48, [0.59, 0.84, 0.42]),   // 3k
    row(158, 1.41, [0.50, 0.71, 0.36]),   // 2k
    row(169, 1.34, [0.42, 0.61, 0.30]),   // 1k
    row(181, 1.28, [0.36, 0.52, 0.26]),   // 1d
    row(194, 1.21, [0.31, 0.44, 0.22]),   // 2d
    row(208, 1.14, [0.26, 0.37, 0.19]),   // 3d
    row(223, 1.07, [0.22, 0.32, 0.16]),   // 4d
    row(239, 1.00, [0.19, 0.27, 0.13]),   // 5d
];

/// One candidate of a rank's draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// The move.
    pub mv: Move,
    /// Its estimated point loss against the search's best move (0 or more).
    pub loss: f64,
    /// Its weight in the draw (the root policy, as the rank's temperature shaped it).
    pub weight: f64,
}

/// The moves a player at `settings` may play after `analysis` of `game` (the mover to
/// play): legal, no own real eye filled, no pass unless the search's best move is a pass
/// and the opponent has no dead stones, and a loss within the phase's budget. The search's
/// best move is always among them when it is allowed at all.
pub fn candidates(analysis: &Analysis, game: &Game, settings: &RankSettings) -> Vec<Candidate> {
    let Some(best) = analysis.moves.first() else {
        return Vec::new();
    };
    let mover = game.to_move();
    let board = game.board();
    let lead = |m: &MoveInfo| mover_view(mover, m.score_lead);
    let best_lead = lead(best);
    let side = board.size().width().max(board.size().height());
    let budget = settings.budget_for(GamePhase::of(game), side);
    let pass_ok = best.mv == Move::Pass && !opponent_has_dead_stones(analysis, game);
    analysis
        .moves
        .iter()
        .filter(|m| game.is_legal(m.mv))
        .filter(|m| match m.mv {
            Move::Pass => pass_ok,
            Move::Play(l) => !board.is_simple_eye(l, mover),
        })
        .map(|m| Candidate {
            mv: m.mv,
            loss: (best_lead - lead(m)).max(0.0),
            weight: m.prior.max(1e-6),
        })
        .filter(|c| c.mv == best.mv || c.loss <= budget)
        .collect()
}

/// The move a player at `settings` plays after `analysis` of `game`: drawn among the
/// [`candidates`] by weight; when none is left (the search saw only a forbidden pass or
/// eye-filling moves), a move taking dead opponent stones off, else the playable evaluated
/// move of least loss, else the search's own choice (the position is finished). `None`
/// only when the search evaluated no move.
pub fn choose(
    analysis: &Analysis,
    game: &Game,
    settings: &RankSettings,
    rng: &mut fastrand::Rng,
) -> Option<Move> {
    let cands = candidates(analysis, game, settings);
    let total: f64 = cands.iter().map(|c| c.weight).sum();
    if total > 0.0 {
        let mut r = rng.f64() * total;
        for c in &cands {
            if r < c.weight {
                return Some(c.mv);
            }
            r -= c.weight;
        }
        return cands.last().map(|c| c.mv);
    }
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
                assert!(strong.budget[i] <= weak.budget[i]);
            }
        }
        assert!(Rank::kyu(25) < Rank::kyu(1) && Rank::kyu(1) < Rank::dan(1));
    }
}
