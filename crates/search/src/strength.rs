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
    /// Largest point loss of a deliberate mistake in the opening, middle game and endgame,
    /// on any board (a stone's worth spread over a game's moves is about the same per move
    /// on every board).
    pub budget: [f64; 3],
}

impl RankSettings {
    /// The loss budget, in points, for a move in `phase`.
    pub fn budget_for(&self, phase: GamePhase) -> f64 {
        let i = match phase {
            GamePhase::Opening => 0,
            GamePhase::Middle => 1,
            GamePhase::Endgame => 2,
        };
        self.budget[i]
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

/// The rank table, weakest first (25k .. 1k, 1d .. 5d).
///
/// Principle: neighbouring ranks should win against each other at about the same rate. A
/// game's result varies more the more a side loses per move (weak play loses by large,
/// rare mistakes), so a step between ranks counts in proportion to the loss itself: the
/// table aims at a constant ratio of average loss per move from rank to rank, 1.11 from 1d
/// (0.52 points a move) down to 25k (aimed at 7; the draw's ceiling there measured nearer
/// 5, so the weak end is flatter than aimed); the dan ranks keep their steeper measured
/// 1.2 (0.24 at 5d; `max` loses about 0.12 by the same measure).
/// The middle-game budgets (40 at 25k, 19.2 at 20k, 12.3 at 15k, 9.4 at 10k, 5.3 at 5k,
/// 3.5 at 1d, 1.7 at 5d, log-linear between) are set so the measured loss follows that
/// curve (docs/strength.md). Visits grow fourfold from 64 at 25k to 256 at 5d, temperature
/// falls geometrically from 8 to 1 (weak ranks need a flat policy for enough evaluated
/// moves to draw large mistakes from), and the opening's budget is 70% and the endgame's
/// 50% of the middle game's.
pub const TABLE: [RankSettings; 30] = [
    row(64, 8.00, [28.00, 40.00, 20.00]), // 25k
    row(67, 7.45, [24.18, 34.54, 17.27]), // 24k
    row(70, 6.93, [20.88, 29.82, 14.91]), // 23k
    row(74, 6.45, [18.03, 25.75, 12.88]), // 22k
    row(77, 6.01, [15.57, 22.24, 11.12]), // 21k
    row(81, 5.59, [13.44, 19.20, 9.60]),  // 20k
    row(85, 5.20, [12.29, 17.56, 8.78]),  // 19k
    row(89, 4.84, [11.25, 16.07, 8.03]),  // 18k
    row(94, 4.51, [10.29, 14.70, 7.35]),  // 17k
    row(98, 4.20, [9.41, 13.45, 6.72]),   // 16k
    row(103, 3.91, [8.61, 12.30, 6.15]),  // 15k
    row(108, 3.64, [8.16, 11.66, 5.83]),  // 14k
    row(114, 3.38, [7.73, 11.05, 5.52]),  // 13k
    row(119, 3.15, [7.33, 10.47, 5.23]),  // 12k
    row(125, 2.93, [6.94, 9.92, 4.96]),   // 11k
    row(131, 2.73, [6.58, 9.40, 4.70]),   // 10k
    row(138, 2.54, [5.87, 8.38, 4.19]),   // 9k
    row(144, 2.36, [5.23, 7.47, 3.74]),   // 8k
    row(151, 2.20, [4.67, 6.67, 3.33]),   // 7k
    row(159, 2.05, [4.16, 5.94, 2.97]),   // 6k
    row(166, 1.91, [3.71, 5.30, 2.65]),   // 5k
    row(175, 1.77, [3.41, 4.88, 2.44]),   // 4k
    row(183, 1.65, [3.15, 4.49, 2.24]),   // 3k
    row(192, 1.54, [2.89, 4.13, 2.07]),   // 2k
    row(202, 1.43, [2.66, 3.80, 1.90]),   // 1k
    row(211, 1.33, [2.45, 3.50, 1.75]),   // 1d
    row(222, 1.24, [2.05, 2.92, 1.46]),   // 2d
    row(233, 1.15, [1.71, 2.44, 1.22]),   // 3d
    row(244, 1.07, [1.43, 2.04, 1.02]),   // 4d
    row(256, 1.00, [1.19, 1.70, 0.85]),   // 5d
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
    let budget = settings.budget_for(GamePhase::of(game));
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
