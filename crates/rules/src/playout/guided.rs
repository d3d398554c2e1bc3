//! The guided playout policy, after MoGo's and Fuego's: each move is answered near it
//! first (take the stones it left in atari, save ours it put in atari, answer a known
//! 3x3 shape around it), and only then at random. Neither the local answers nor the
//! random moves may put two or more of the mover's own stones in atari.

use super::{play_out, shape, uniform_move, PlayoutResult};
use crate::board::Board;
use crate::geometry::{Loc, Move};
use crate::player::Player;

/// Local answers gathered for one move (the shape stage sees at most 8 points; the
/// escape stage at most a few per chain in atari).
const MAX_CANDIDATES: usize = 32;

/// A small fixed list of candidate points; the hot path must not allocate.
struct Candidates {
    locs: [Loc; MAX_CANDIDATES],
    len: usize,
}

impl Candidates {
    fn new() -> Candidates {
        Candidates {
            locs: [Loc(0); MAX_CANDIDATES],
            len: 0,
        }
    }

    fn push(&mut self, l: Loc) {
        if self.len < MAX_CANDIDATES {
            self.locs[self.len] = l;
            self.len += 1;
        }
    }

    fn pick(&self, rng: &mut fastrand::Rng) -> Option<Move> {
        (self.len > 0).then(|| Move::Play(self.locs[rng.usize(..self.len)]))
    }
}

/// Plays the guided policy from `board` until both players pass in a row or
/// `max_moves` is reached; `last` is the move that led to the position, if any.
/// Scored like [`super::random_playout`]: stones plus one-point eyes, komi not included.
pub fn guided_playout(
    board: &mut Board,
    to_move: Player,
    last: Option<Loc>,
    rng: &mut fastrand::Rng,
    max_moves: usize,
) -> PlayoutResult {
    play_out(board, to_move, last, max_moves, |b, pla, last| {
        guided_move(b, pla, last, rng)
    })
}

/// The guided policy's move for `pla` after the opponent's stone at `last` (None after
/// a pass or at the start). Passes only when every legal move fills one of its own eyes
/// or puts two or more of its stones in atari. The board's list of empty points is
/// reordered; nothing else changes.
pub fn guided_move(
    board: &mut Board,
    pla: Player,
    last: Option<Loc>,
    rng: &mut fastrand::Rng,
) -> Move {
    if let Some(m) = last.and_then(|l| local_answer(board, pla, l, rng)) {
        return m;
    }
    uniform_move(board, rng, |b, loc| allowed(b, loc, pla))
}

/// Legal in a playout (not ko, not suicide, not an own eye) and no self-atari of two
/// or more stones; a single stone may still be thrown in.
#[inline]
fn allowed(board: &Board, loc: Loc, pla: Player) -> bool {
    board.is_playout_move(loc, pla) && board.self_atari_stones(loc, pla) < 2
}

/// The first stage with an answer to the stone at `last`: capture it, save our chains
/// it put in atari, or play a shape next to it.
fn local_answer(board: &Board, pla: Player, last: Loc, rng: &mut fastrand::Rng) -> Option<Move> {
    if board.stone(last) != Some(pla.opp()) {
        return None;
    }
    let mut c = Candidates::new();
    // The stones just played are in atari: take them.
    if let Some(lib) = board.atari_liberty(last) {
        if board.is_playout_move(lib, pla) {
            return Some(Move::Play(lib));
        }
    }
    // Our chains next to the move in atari: capture an attacker or run out.
    let mut seen = [Loc(0); 4];
    for (k, n) in board.neighbours(last).enumerate() {
        if board.stone(n) != Some(pla) || seen.iter().any(|&s| board.same_chain(s, n)) {
            continue;
        }
        seen[k] = n;
        let Some(lib) = board.atari_liberty(n) else {
            continue;
        };
        for s in board.chain(n) {
            for m in board.neighbours(s) {
                if board.stone(m) == Some(pla.opp()) {
                    if let Some(take) = board.atari_liberty(m) {
                        if board.is_playout_move(take, pla) {
                            c.push(take);
                        }
                    }
                }
            }
        }
        if board.is_playout_move(lib, pla) && board.liberties_after(lib, pla, 2) >= 2 {
            c.push(lib);
        }
    }
    if c.len > 0 {
        return c.pick(rng);
    }
    // Shapes on the eight points around the move.
    let l = last.index();
    let [a, b, d, e] = board.adj(l);
    let [f, g, h, i] = board.diag(l);
    for p in [a, b, d, e, f, g, h, i] {
        let loc = Loc(p as u16);
        if board.cell(p) == 0 && shape::matches(board, p, pla) && allowed(board, loc, pla) {
            c.push(loc);
        }
    }
    c.pick(rng)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::BoardSize;

    fn board(rows: &[&str]) -> Board {
        Board::from_rows(BoardSize::square(rows.len()).unwrap(), rows).unwrap()
    }

    fn at(b: &Board, x: usize, y: usize) -> Loc {
        b.size().loc(x, y).unwrap()
    }

    #[test]
    fn guided_playouts_end_and_leave_a_consistent_board() {
        let mut rng = fastrand::Rng::with_seed(3);
        for n in [2, 5, 9, 19] {
            let size = BoardSize::square(n).unwrap();
            for _ in 0..20 {
                let mut b = Board::new(size);
                let r = guided_playout(&mut b, Player::Black, None, &mut rng, 3 * size.area());
                b.check_consistency().unwrap();
                assert!(r.moves >= 2 && r.moves <= 3 * size.area());
                // A finished playout leaves each player only eye fills and self-ataris.
                if r.moves < 3 * size.area() {
                    for pla in [Player::Black, Player::White] {
                        for l in b.empty_points().collect::<Vec<_>>() {
                            assert!(!allowed(&b, l, pla), "{n}x{n}: {pla} could still play");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_stone_left_in_atari_is_taken() {
        // White's C3 has one liberty, D3: Black takes it every time.
        let mut b = board(&[".....", "..X..", ".XO..", "..X..", "....."]);
        let (c3, d3) = (at(&b, 2, 2), at(&b, 3, 2));
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..50 {
            let m = guided_move(&mut b, Player::Black, Some(c3), &mut rng);
            assert_eq!(m, Move::Play(d3));
        }
    }

    #[test]
    fn a_chain_put_in_atari_runs_or_captures() {
        // White's D3 leaves Black's C3-C4 with one liberty, C5: Black runs there.
        let mut b = board(&[
            ".......", "..O....", ".OXO...", ".OXO...", ".......", ".......", ".......",
        ]);
        let (d3, c5) = (at(&b, 3, 2), at(&b, 2, 4));
        assert_eq!(b.atari_liberty(at(&b, 2, 2)), Some(c5));
        let mut rng = fastrand::Rng::with_seed(2);
        for _ in 0..50 {
            let m = guided_move(&mut b, Player::Black, Some(d3), &mut rng);
            assert_eq!(m, Move::Play(c5));
        }
        // Now White's B3-B4, one of the attackers, is itself in atari at B5: taking it
        // is an answer too, and nothing else is.
        let mut b = board(&[
            ".......", ".XO....", "XOXO...", "XOXO...", ".......", ".......", ".......",
        ]);
        let b5 = at(&b, 1, 4);
        assert_eq!(b.atari_liberty(at(&b, 1, 2)), Some(b5));
        let mut answers = std::collections::HashSet::new();
        for _ in 0..100 {
            answers.insert(guided_move(&mut b, Player::Black, Some(d3), &mut rng));
        }
        let expected = [Move::Play(b5), Move::Play(c5)].into_iter().collect();
        assert_eq!(answers, expected);
    }

    #[test]
    fn moves_that_self_atari_two_stones_are_never_played() {
        // Black's A2-B2 has two liberties, A1 and B1; filling either leaves one.
        let b0 = board(&["..O..", "XXO..", "OOO..", ".....", "....."]);
        let (a1, b1) = (at(&b0, 0, 0), at(&b0, 1, 0));
        assert_eq!(b0.self_atari_stones(a1, Player::Black), 3);
        assert_eq!(b0.self_atari_stones(b1, Player::Black), 3);
        // A single white stone thrown in at A1 is still allowed.
        assert_eq!(b0.self_atari_stones(a1, Player::White), 1);
        assert!(allowed(&b0, a1, Player::White));
        let mut rng = fastrand::Rng::with_seed(4);
        let mut b = b0.clone();
        for _ in 0..300 {
            let m = guided_move(&mut b, Player::Black, None, &mut rng);
            assert!(m != Move::Play(a1) && m != Move::Play(b1), "{m:?}");
            assert!(matches!(m, Move::Play(_)));
        }
    }
}
