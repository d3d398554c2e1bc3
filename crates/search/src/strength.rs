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

/// The rank table, weakest first (25k .. 1k, 1d .. 5d). Visits double every six ranks,
/// temperature falls linearly to 1, and the budgets shrink by 12% a rank: a first guess
/// shaped after human point-loss statistics, to be refined by the calibration matches
/// (docs/strength.md).
pub const TABLE: [RankSettings; 30] = [
    row(8, 1.80, [14.4, 18.0, 9.0]),  // 25k
    row(9, 1.77, [12.7, 15.8, 7.9]),  // 24k
    row(10, 1.74, [11.2, 13.9, 7.0]), // 23k
    row(11, 1.72, [9.8, 12.3, 6.1]),  // 22k
    row(13, 1.69, [8.6, 10.8, 5.4]),  // 21k
    row(14, 1.66, [7.6, 9.5, 4.7]),   // 20k
    row(16, 1.63, [6.7, 8.4, 4.2]),   // 19k
    row(18, 1.61, [5.9, 7.4, 3.7]),   // 18k
    row(20, 1.58, [5.2, 6.5, 3.2]),   // 17k
    row(23, 1.55, [4.6, 5.7, 2.8]),   // 16k
    row(25, 1.52, [4.0, 5.0, 2.5]),   // 15k
    row(29, 1.50, [3.5, 4.4, 2.2]),   // 14k
    row(32, 1.47, [3.1, 3.9, 1.9]),   // 13k
    row(36, 1.44, [2.7, 3.4, 1.7]),   // 12k
    row(40, 1.41, [2.4, 3.0, 1.5]),   // 11k
    row(45, 1.39, [2.1, 2.6, 1.3]),   // 10k
    row(51, 1.36, [1.9, 2.3, 1.2]),   // 9k
    row(57, 1.33, [1.6, 2.0, 1.0]),   // 8k
    row(64, 1.30, [1.4, 1.8, 0.9]),   // 7k
    row(72, 1.28, [1.3, 1.6, 0.8]),   // 6k
    row(81, 1.25, [1.1, 1.4, 0.7]),   // 5k
    row(91, 1.22, [1.0, 1.2, 0.6]),   // 4k
    row(102, 1.19, [0.9, 1.1, 0.5]),  // 3k
    row(114, 1.17, [0.8, 1.0, 0.5]),  // 2k
    row(128, 1.14, [0.7, 0.8, 0.4]),  // 1k
    row(144, 1.11, [0.6, 0.7, 0.4]),  // 1d
    row(161, 1.08, [0.5, 0.6, 0.3]),  // 2d
    row(181, 1.06, [0.5, 0.6, 0.3]),  // 3d
    row(203, 1.03, [0.4, 0.5, 0.3]),  // 4d
    row(228, 1.00, [0.4, 0.4, 0.2]),  // 5d
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
/// eye-filling moves), the playable evaluated move of least loss, else the search's own
/// choice (the position is finished). `None` only when the search evaluated no move.
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
    board.size().points().zip(own).any(|(l, &o)| {
        board.stone(l) == Some(mover.opp())
            && mover_view(mover, f64::from(o)) > f64::from(DEAD_OWNERSHIP)
    })
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
