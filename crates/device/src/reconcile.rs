//! Physical-board reconciliation: from successive snapshots of a real board, which
//! moves were played, and when the board and the game disagree, which points to fix.
//!
//! Sans-IO: the caller feeds snapshots and applies the verdicts to its game. A
//! snapshot counts once it has been seen unchanged `window` times in a row (stones
//! being placed, hands passing over). It is then explained by at most two moves — the
//! player to move, then the opponent — tolerating stones that a capture removed but
//! that are still on the board (lifted late, even a move late) and points nobody can
//! see. An explanation that fits every visible point is accepted; several that fit
//! are put to the players; none that fit, with some points unseen, waits for a clear
//! view; otherwise the closest explanation gives the exact points to fix.

use tengen_rules::{Game, Loc, Move, Player};

use crate::snapshot::{Cell, Snapshot, SnapshotError};

/// Candidate stones of one colour considered as its move; more means a mess to fix.
const MAX_CANDIDATES: usize = 6;

/// A point where the board must change to match the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fix {
    /// The point.
    pub loc: Loc,
    /// What should be there.
    pub want: Option<Player>,
    /// What is seen there.
    pub seen: Cell,
}

/// A move read off the board.
pub type Played = (Player, Loc);

/// What a stable snapshot means for the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The board shows the game; `unlifted` are captured stones still on it.
    InSync {
        /// Captured stones not yet taken off.
        unlifted: Vec<Loc>,
    },
    /// These moves were played, in order; `captured` are the stones they took.
    Moves {
        /// The moves.
        moves: Vec<Played>,
        /// Stones the moves captured.
        captured: Vec<Loc>,
        /// Captured stones, of these moves or earlier ones, still on the board.
        unlifted: Vec<Loc>,
    },
    /// Before the first move: stones were set up (handicap, or a free setup).
    Setup {
        /// The stones added.
        stones: Vec<Played>,
    },
    /// More than one sequence of moves fits: the players must say which.
    Ambiguous {
        /// The sequences that fit.
        options: Vec<Vec<Played>>,
    },
    /// Nothing fits, but part of the board is hidden: wait for a clear view.
    Waiting,
    /// Nothing fits: put the board right at these points (after `assuming` these moves).
    Mismatch {
        /// The points to fix.
        fixes: Vec<Fix>,
        /// The moves the fixes assume were played.
        assuming: Vec<Played>,
    },
}

/// Turns a stream of snapshots into verdicts.
#[derive(Clone, Debug)]
pub struct Reconciler {
    window: usize,
    candidate: Option<Snapshot>,
    seen: usize,
    /// Captured stones that may still stand on the board, with their colour.
    unlifted: Vec<(Loc, Player)>,
}

/// One way to explain a snapshot, and how well it fits.
struct Explanation {
    moves: Vec<Played>,
    captured: Vec<Loc>,
    unlifted: Vec<(Loc, Player)>,
    fixes: Vec<Fix>,
}

impl Reconciler {
    /// A reconciler that trusts a snapshot once seen `window` times in a row (at least 1).
    pub fn new(window: usize) -> Reconciler {
        Reconciler {
            window: window.max(1),
            candidate: None,
            seen: 0,
            unlifted: Vec::new(),
        }
    }

    /// Feeds one snapshot. Returns a verdict when the snapshot has just become stable,
    /// `None` while it is still changing or was already judged. A `Moves` verdict is
    /// expected to be applied to the game before the next call.
    pub fn observe(
        &mut self,
        game: &Game,
        snap: Snapshot,
    ) -> Result<Option<Verdict>, SnapshotError> {
        check_size(game, &snap)?;
        if self.candidate.as_ref() == Some(&snap) {
            self.seen += 1;
        } else {
            self.candidate = Some(snap);
            self.seen = 1;
        }
        if self.seen != self.window {
            return Ok(None);
        }
        let snap = self.candidate.clone().expect("just stored");
        self.judge(game, &snap).map(Some)
    }

    /// Judges a snapshot against the game now, whatever its stability.
    pub fn judge(&mut self, game: &Game, snap: &Snapshot) -> Result<Verdict, SnapshotError> {
        check_size(game, snap)?;
        let board = game.board();
        // Forget captured stones that were lifted, or whose point holds a stone again.
        self.unlifted
            .retain(|&(l, c)| snap.at(l) == Cell::Stone(c) && board.stone(l).is_none());
        if let Some(v) = setup(game, snap) {
            return Ok(v);
        }
        let pla = game.to_move();
        let new_stones = |c: Player| -> Vec<Loc> {
            board
                .size()
                .points()
                .filter(|&l| board.stone(l).is_none() && snap.at(l) == Cell::Stone(c))
                .take(MAX_CANDIDATES)
                .collect()
        };
        let (mine, theirs) = (new_stones(pla), new_stones(pla.opp()));
        let mut sequences: Vec<Vec<Played>> = vec![Vec::new()];
        for &a in &mine {
            sequences.push(vec![(pla, a)]);
            for &b in &theirs {
                sequences.push(vec![(pla, a), (pla.opp(), b)]);
            }
        }
        let mut fitting = Vec::new();
        let mut best: Option<Explanation> = None;
        for seq in sequences {
            let Some(e) = self.explain(game, snap, seq) else {
                continue;
            };
            if e.fixes.is_empty() {
                fitting.push(e);
            } else if best.as_ref().is_none_or(|b| e.fixes.len() < b.fixes.len()) {
                best = Some(e);
            }
        }
        match fitting.len() {
            1 => {
                let e = fitting.pop().expect("one");
                let unlifted: Vec<Loc> = e.unlifted.iter().map(|&(l, _)| l).collect();
                self.unlifted = e.unlifted;
                Ok(if e.moves.is_empty() {
                    Verdict::InSync { unlifted }
                } else {
                    log::debug!("read {} move(s) off the board", e.moves.len());
                    Verdict::Moves {
                        moves: e.moves,
                        captured: e.captured,
                        unlifted,
                    }
                })
            }
            0 => {
                let hidden = snap.size().points().any(|l| snap.at(l) == Cell::Unknown);
                if hidden {
                    return Ok(Verdict::Waiting);
                }
                let e = best.expect("the empty sequence always explains something");
                Ok(Verdict::Mismatch {
                    fixes: e.fixes,
                    assuming: e.moves,
                })
            }
            _ => Ok(Verdict::Ambiguous {
                options: fitting.into_iter().map(|e| e.moves).collect(),
            }),
        }
    }

    /// Plays `seq` on a copy of the game and compares the result with the snapshot;
    /// `None` if the sequence is not legal.
    fn explain(&self, game: &Game, snap: &Snapshot, seq: Vec<Played>) -> Option<Explanation> {
        let before = game.board();
        let mut g = game.clone();
        for &(p, l) in &seq {
            if g.to_move() != p || !g.is_legal(Move::Play(l)) {
                return None;
            }
            g.play(Move::Play(l)).ok()?;
        }
        let after = g.board();
        let size = after.size();
        let captured: Vec<Loc> = size
            .points()
            .filter(|&l| before.stone(l).is_some() && after.stone(l).is_none())
            .collect();
        let mut tolerated: Vec<(Loc, Player)> = self.unlifted.clone();
        tolerated.extend(
            captured
                .iter()
                .filter_map(|&l| before.stone(l).map(|c| (l, c))),
        );
        let mut unlifted = Vec::new();
        let mut fixes = Vec::new();
        for l in size.points() {
            let want = after.stone(l);
            let seen = snap.at(l);
            if seen == Cell::Unknown || seen.shows(want) {
                continue;
            }
            match (want, seen) {
                (None, Cell::Stone(c)) if tolerated.contains(&(l, c)) => unlifted.push((l, c)),
                _ => fixes.push(Fix { loc: l, want, seen }),
            }
        }
        Some(Explanation {
            moves: seq,
            captured,
            unlifted,
            fixes,
        })
    }
}

fn check_size(game: &Game, snap: &Snapshot) -> Result<(), SnapshotError> {
    let size = game.board().size();
    if snap.size() != size {
        return Err(SnapshotError::WrongSize {
            size,
            want: size.area(),
            got: snap.size().area(),
        });
    }
    Ok(())
}

/// Before the first move, several stones appearing together (and nothing removed) are
/// a setup: handicap stones if all black, a free setup otherwise.
fn setup(game: &Game, snap: &Snapshot) -> Option<Verdict> {
    if !game.turns().is_empty() {
        return None;
    }
    let board = game.board();
    let mut stones = Vec::new();
    for l in board.size().points() {
        match (board.stone(l), snap.at(l)) {
            (None, Cell::Stone(c)) => stones.push((c, l)),
            (_, Cell::Unknown) => return None,
            (want, seen) if !seen.shows(want) => return None,
            _ => {}
        }
    }
    (stones.len() >= 2).then_some(Verdict::Setup { stones })
}
