//! Playouts: games played quickly to their end from a position, for Monte Carlo
//! evaluation. [`random_playout`] plays uniformly random moves (the classic benchmark of
//! a Go board); [`guided_playout`] answers each move locally first (captures, escapes,
//! shape), which makes its results a much better judge of fights.

mod guided;
mod shape;

pub use guided::{guided_move, guided_playout};

use crate::board::Board;
use crate::geometry::{Loc, Move};
use crate::player::Player;

/// Which moves a playout plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlayoutPolicy {
    /// Uniformly random moves ([`random_playout`]).
    Random,
    /// Local answers first, then random moves ([`guided_playout`]).
    #[default]
    Guided,
}

impl PlayoutPolicy {
    /// Plays this policy from `board` to the end (`last`: the move that led here, which
    /// only the guided policy answers).
    pub fn play(
        self,
        board: &mut Board,
        to_move: Player,
        last: Option<Loc>,
        rng: &mut fastrand::Rng,
        max_moves: usize,
    ) -> PlayoutResult {
        match self {
            PlayoutPolicy::Random => random_playout(board, to_move, rng, max_moves),
            PlayoutPolicy::Guided => guided_playout(board, to_move, last, rng, max_moves),
        }
    }
}

/// What a playout did and how it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayoutResult {
    /// Moves played, passes included.
    pub moves: usize,
    /// White's area minus Black's (stones plus one-point eyes), komi not included.
    pub white_minus_black: i32,
}

/// Plays uniformly random legal moves (simple ko, no suicide) from `board`, never
/// filling the mover's own one-point eyes, until both players pass in a row or
/// `max_moves` is reached. A player passes when no such move exists.
///
/// Moves are drawn without replacement from the board's empty-point list, so
/// each one is uniform over the allowed moves and nothing is allocated.
pub fn random_playout(
    board: &mut Board,
    to_move: Player,
    rng: &mut fastrand::Rng,
    max_moves: usize,
) -> PlayoutResult {
    play_out(board, to_move, None, max_moves, |b, pla, _| {
        uniform_move(b, rng, |b, loc| b.is_playout_move(loc, pla))
    })
}

/// Plays the moves `choose` picks (given the board, the mover and the opponent's last
/// stone) until both players pass in a row or `max_moves` is reached, then counts.
fn play_out(
    board: &mut Board,
    mut to_move: Player,
    mut last: Option<Loc>,
    max_moves: usize,
    mut choose: impl FnMut(&mut Board, Player, Option<Loc>) -> Move,
) -> PlayoutResult {
    let mut moves = 0;
    let mut passes = 0;
    while moves < max_moves && passes < 2 {
        let chosen = choose(board, to_move, last);
        board.play(chosen, to_move);
        last = match chosen {
            // A suicide leaves nothing to answer.
            Move::Play(l) if !board.is_empty_at(l) => Some(l),
            _ => None,
        };
        passes = if chosen == Move::Pass { passes + 1 } else { 0 };
        moves += 1;
        to_move = to_move.opp();
    }
    PlayoutResult {
        moves,
        white_minus_black: quick_area(board),
    }
}

/// Adds each point's owner on a board played out to the end to `owned` (row-major):
/// +1 for White, -1 for Black, for a stone or an empty point only one colour touches.
pub fn add_white_ownership(board: &Board, owned: &mut [f32]) {
    let size = board.size();
    for l in size.points() {
        let owner = match board.stone(l) {
            Some(p) => Some(p),
            None => {
                let mut seen = [false; 2];
                for n in board.neighbours(l) {
                    if let Some(p) = board.stone(n) {
                        seen[p.index()] = true;
                    }
                }
                match seen {
                    [true, false] => Some(Player::Black),
                    [false, true] => Some(Player::White),
                    _ => None,
                }
            }
        };
        owned[size.index_of(l)] += match owner {
            Some(Player::White) => 1.0,
            Some(Player::Black) => -1.0,
            None => 0.0,
        };
    }
}

/// A uniformly random empty point that `ok` accepts, or a pass when none does: drawn
/// without replacement from the board's empty-point list (reordering it), so nothing
/// is allocated.
#[inline]
fn uniform_move(
    board: &mut Board,
    rng: &mut fastrand::Rng,
    ok: impl Fn(&Board, Loc) -> bool,
) -> Move {
    let mut candidates = board.num_empty();
    while candidates > 0 {
        let i = rng.usize(..candidates);
        let loc = board.empty_at(i);
        if ok(board, loc) {
            return Move::Play(loc);
        }
        candidates -= 1;
        board.swap_empties(i, candidates);
    }
    Move::Pass
}

/// Stones plus empty points whose neighbours are all one colour: the area count
/// of a board filled to the end by playouts.
pub(crate) fn quick_area(board: &Board) -> i32 {
    let mut score = 0;
    for l in board.size().points() {
        let i = l.index();
        let owner = match board.cell(i) {
            0 => {
                // Bit 1 set: a black neighbour; bit 2: a white one (walls are 3, both: ignored).
                let seen = board
                    .adj(i)
                    .iter()
                    .fold(0u8, |acc, &n| match board.cell(n) {
                        c @ (1 | 2) => acc | c,
                        _ => acc,
                    });
                seen
            }
            c => c,
        };
        score += match owner {
            1 => -1,
            2 => 1,
            _ => 0,
        };
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::BoardSize;

    #[test]
    fn ownership_counts_stones_and_points_one_colour_surrounds() {
        let size = BoardSize::square(3).unwrap();
        let b = Board::from_rows(size, &[".X.", "XXO", ".O."]).unwrap();
        let mut owned = vec![0.5f32; 9];
        add_white_ownership(&b, &mut owned);
        // Row-major from the top: A3 only touches Black, C3 and A1 touch both colours,
        // C1 only touches White.
        assert_eq!(owned, [-0.5, -0.5, 0.5, -0.5, -0.5, 1.5, 0.5, 1.5, 1.5]);
    }

    #[test]
    fn playouts_fill_the_board_and_stay_consistent() {
        let mut rng = fastrand::Rng::with_seed(7);
        for n in [2, 5, 9, 19] {
            let size = BoardSize::square(n).unwrap();
            for _ in 0..20 {
                let mut b = Board::new(size);
                let r = random_playout(&mut b, Player::Black, &mut rng, 3 * size.area());
                b.check_consistency().unwrap();
                assert!(r.moves >= 2);
                // Unless the cap hit, the last player to pass had no move left but own eyes.
                if r.moves < 3 * size.area() {
                    let last = if r.moves % 2 == 1 {
                        Player::Black
                    } else {
                        Player::White
                    };
                    for l in size.points() {
                        let m = Move::Play(l);
                        assert!(
                            !b.is_legal(m, last, false) || b.is_simple_eye(l, last),
                            "{n}x{n}: {last} could still play {}",
                            size.gtp(m)
                        );
                    }
                }
            }
        }
    }
}
