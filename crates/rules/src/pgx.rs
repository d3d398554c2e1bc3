//! The Go environment of Pgx 2.6 (`pgx.go.Go`, env v1), as it actually behaves:
//! only the simple-ko point is removed from the legal moves, a stone placement
//! that repeats any earlier board loses at once, passes never repeat, the game
//! stops after `N*N*2` actions, and area scoring gives ties to White.

use std::collections::HashSet;

use crate::board::{Board, IllegalMove};
use crate::geometry::{BoardSize, Loc, Move, MAX_AREA};
use crate::player::Player;
use crate::zobrist::Hash;

/// How many boards [`PgxGame::recent_stone`] remembers: the current one and the 7 before it,
/// the history of Pgx's 17-plane observation.
pub const PGX_HISTORY: usize = 8;

/// Why a Pgx game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgxTermination {
    /// Two passes in a row.
    TwoPasses,
    /// `N*N*2` actions were played.
    MaxSteps,
    /// A stone placement repeated an earlier board; the mover lost.
    PositionalSuperko,
}

/// A game of Go with Pgx's rules.
#[derive(Clone, Debug)]
pub struct PgxGame {
    board: Board,
    komi: f32,
    steps: usize,
    consecutive_passes: u32,
    /// Boards after every action so far (passes included).
    seen: HashSet<Hash>,
    termination: Option<PgxTermination>,
    /// Final reward of Black and White (0 while the game goes on).
    rewards: [f32; 2],
    /// Stones (row-major cell values) after each of the last [`PGX_HISTORY`] actions, a ring
    /// whose newest entry is at `history_at`; all empty before the first action, as in Pgx.
    history: Box<[[u8; MAX_AREA]; PGX_HISTORY]>,
    history_at: usize,
}

impl PgxGame {
    /// A new game on an empty board, Black to move.
    pub fn new(size: BoardSize, komi: f32) -> PgxGame {
        PgxGame {
            board: Board::new(size),
            komi,
            steps: 0,
            consecutive_passes: 0,
            seen: HashSet::new(),
            termination: None,
            rewards: [0.0; 2],
            history: Box::new([[0; MAX_AREA]; PGX_HISTORY]),
            history_at: 0,
        }
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The colour to move: Black on even steps, White on odd ones.
    pub fn to_move(&self) -> Player {
        if self.steps.is_multiple_of(2) {
            Player::Black
        } else {
            Player::White
        }
    }

    /// Actions played so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Most actions a game may have.
    pub fn max_steps(&self) -> usize {
        self.board.size().area() * 2
    }

    /// The stone on `loc` after the action `steps_ago` actions back (0 = the current board),
    /// as Pgx's observation sees it: passes repeat the board, and boards before the first
    /// action are empty. `None` for an empty point, for `steps_ago >= PGX_HISTORY`, or for
    /// a point of another board size.
    pub fn recent_stone(&self, steps_ago: usize, loc: Loc) -> Option<Player> {
        if steps_ago >= PGX_HISTORY {
            return None;
        }
        let size = self.board.size();
        // Decode the padded index by hand: a point of another size must not panic.
        let (col, row) = (loc.index() % size.stride(), loc.index() / size.stride());
        if col == 0 || row == 0 || col > size.width() || row > size.height() {
            return None;
        }
        let slot = (self.history_at + PGX_HISTORY - steps_ago) % PGX_HISTORY;
        Player::from_cell(self.history[slot][size.index_of(loc)])
    }

    /// Why the game ended, if it has.
    pub fn termination(&self) -> Option<PgxTermination> {
        self.termination
    }

    /// The reward of a player: +1 win, -1 loss, 0 until the end (there are no draws).
    pub fn reward(&self, player: Player) -> f32 {
        self.rewards[player.index()]
    }

    /// Whether `mv` is in Pgx's legal action mask (every action is, once the game is over).
    pub fn is_legal(&self, mv: Move) -> bool {
        self.termination.is_some() || self.board.is_legal(mv, self.to_move(), false)
    }

    /// Pgx's legal action mask: one entry per point in row-major order, then pass.
    pub fn legal_mask(&self) -> Vec<bool> {
        let size = self.board.size();
        (0..size.area())
            .map(|i| Move::Play(size.loc_at_index(i).expect("index in range")))
            .chain([Move::Pass])
            .map(|m| self.is_legal(m))
            .collect()
    }

    /// Plays an action. After the end this does nothing, as in Pgx.
    pub fn step(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if self.termination.is_some() {
            return Ok(());
        }
        let pla = self.to_move();
        self.board.check_move(mv, pla, false)?;
        self.board.play(mv, pla);
        self.consecutive_passes = if mv == Move::Pass {
            self.consecutive_passes + 1
        } else {
            0
        };
        let fresh = self.seen.insert(self.board.position_hash());
        self.record_history();
        self.steps += 1;
        if mv != Move::Pass && !fresh {
            self.termination = Some(PgxTermination::PositionalSuperko);
            self.rewards[pla.index()] = -1.0;
            self.rewards[pla.opp().index()] = 1.0;
        } else if self.consecutive_passes >= 2 || self.steps >= self.max_steps() {
            self.termination = Some(if self.consecutive_passes >= 2 {
                PgxTermination::TwoPasses
            } else {
                PgxTermination::MaxSteps
            });
            let [black, white] = self.area_scores();
            let black_wins = black as f32 - self.komi > white as f32;
            let winner = if black_wins {
                Player::Black
            } else {
                Player::White
            };
            self.rewards[winner.index()] = 1.0;
            self.rewards[winner.opp().index()] = -1.0;
        }
        Ok(())
    }

    /// Pushes the current stones onto the history ring (after every action, passes too).
    fn record_history(&mut self) {
        self.history_at = (self.history_at + 1) % PGX_HISTORY;
        let size = self.board.size();
        let slot = &mut self.history[self.history_at];
        for (i, l) in size.points().enumerate() {
            slot[i] = self.board.stone(l).map_or(0, Player::cell);
        }
    }

    /// Black's and White's area: stones plus empty points from which the other
    /// colour cannot be reached through empty points (so an empty board counts fully for both).
    pub fn area_scores(&self) -> [u32; 2] {
        let b = &self.board;
        let size = b.size();
        let mut area = [0u32; 2];
        let mut seen = vec![false; size.area()];
        let mut stack = Vec::new();
        for start in size.points() {
            if let Some(p) = b.stone(start) {
                area[p.index()] += 1;
                continue;
            }
            if seen[size.index_of(start)] {
                continue;
            }
            let (mut count, mut touches) = (0, [false; 2]);
            seen[size.index_of(start)] = true;
            stack.push(start);
            while let Some(l) = stack.pop() {
                count += 1;
                for n in b.neighbours(l) {
                    match b.stone(n) {
                        Some(p) => touches[p.index()] = true,
                        None if !seen[size.index_of(n)] => {
                            seen[size.index_of(n)] = true;
                            stack.push(n);
                        }
                        None => {}
                    }
                }
            }
            for p in Player::BOTH {
                if !touches[p.opp().index()] {
                    area[p.index()] += count;
                }
            }
        }
        area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_board_double_pass_ties_go_to_white() {
        let mut g = PgxGame::new(BoardSize::square(5).unwrap(), 0.0);
        g.step(Move::Pass).unwrap();
        g.step(Move::Pass).unwrap();
        assert_eq!(g.termination(), Some(PgxTermination::TwoPasses));
        assert_eq!(g.area_scores(), [25, 25]);
        assert_eq!(g.reward(Player::White), 1.0);
        assert_eq!(g.reward(Player::Black), -1.0);
        assert!(g.legal_mask().iter().all(|&m| m));
    }

    #[test]
    fn history_keeps_the_last_eight_boards() {
        let size = BoardSize::square(5).unwrap();
        let mut g = PgxGame::new(size, 7.5);
        let c3 = size.parse_loc("C3").unwrap();
        assert!((0..PGX_HISTORY).all(|k| g.recent_stone(k, c3).is_none()));
        g.step(Move::Play(c3)).unwrap();
        assert_eq!(g.recent_stone(0, c3), Some(Player::Black));
        assert_eq!(g.recent_stone(1, c3), None);
        let mut boards = vec![g.board().clone()];
        for m in ["D4", "pass", "B2", "D2", "A1", "pass", "E5", "B4", "A5"] {
            g.step(size.parse_move(m).unwrap()).unwrap();
            boards.push(g.board().clone());
            let n = boards.len();
            for k in 0..PGX_HISTORY {
                for l in size.points() {
                    let want = n.checked_sub(k + 1).and_then(|i| boards[i].stone(l));
                    assert_eq!(g.recent_stone(k, l), want, "{k} steps ago after {m}");
                }
            }
        }
        assert_eq!(g.recent_stone(PGX_HISTORY, c3), None);
    }

    #[test]
    fn random_games_end_within_the_step_limit() {
        let size = BoardSize::square(3).unwrap();
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..200 {
            let mut g = PgxGame::new(size, 0.5);
            while g.termination().is_none() {
                let mask = g.legal_mask();
                // Avoid passing so that games run long and hit the limit or a repetition.
                let moves: Vec<usize> = (0..size.area()).filter(|&i| mask[i]).collect();
                let mv = if moves.is_empty() || rng.u8(..10) == 0 {
                    Move::Pass
                } else {
                    Move::Play(size.loc_at_index(moves[rng.usize(..moves.len())]).unwrap())
                };
                g.step(mv).unwrap();
            }
            assert!(g.steps() <= g.max_steps());
            assert_eq!(g.reward(Player::Black) + g.reward(Player::White), 0.0);
            assert_ne!(g.reward(Player::Black), 0.0);
        }
    }
}
