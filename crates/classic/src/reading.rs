//! Tactical reading: can a worm be captured, can it be saved?
//!
//! A depth-first search over liberty-filling, escaping, counter-atari and capturing
//! moves, played and taken back on one board. Strings with few liberties are read
//! to the end (ladders run across the board); more liberties count as safe. Each
//! read has a node budget; a read that runs out is reported as uncertain and
//! counted as "the side that must prove something failed". Results are cached per
//! position, ko point and target, so the worms of the next position mostly hit.

use std::collections::HashMap;

use tengen_rules::{Board, Loc, Move, Player};

use crate::points::{adjacent_chains, liberties, push_unique, Points};

/// What a side achieves, best last: the order is used to pick the best try.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// It does not work.
    Fail,
    /// It works only by winning a ko.
    Ko,
    /// It works unconditionally.
    Win,
}

impl Outcome {
    /// The other side's outcome when this side's try is answered.
    fn invert(self) -> Outcome {
        match self {
            Outcome::Fail => Outcome::Win,
            Outcome::Ko => Outcome::Ko,
            Outcome::Win => Outcome::Fail,
        }
    }
}

/// The result of one read: the outcome and the move that achieves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tactic {
    /// How well the reading side does.
    pub outcome: Outcome,
    /// The first move of the best line, if a move is needed.
    pub point: Option<Loc>,
    /// The read ran out of nodes, so the outcome is a guess.
    pub uncertain: bool,
}

/// Limits of a reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadingLimits {
    /// Moves tried per read before it gives up.
    pub nodes: u32,
    /// Plies before a line is cut off (ladders need about twice the board's width).
    pub depth: u16,
    /// Liberties above which a worm counts as safe at the start of a read.
    pub max_liberties: usize,
}

impl Default for ReadingLimits {
    fn default() -> Self {
        ReadingLimits {
            nodes: 3000,
            depth: 80,
            max_liberties: 3,
        }
    }
}

/// Cached entries kept before the cache is emptied (about 40 bytes each).
const CACHE_CAP: usize = 400_000;

/// A tactical reader with its cache.
#[derive(Debug)]
pub struct Reader {
    limits: ReadingLimits,
    cache: HashMap<(u128, u16, bool), (Outcome, Option<Loc>)>,
    nodes: u32,
    exhausted: bool,
    board: Option<Board>,
}

impl Reader {
    /// A reader with the given limits and an empty cache.
    pub fn new(limits: ReadingLimits) -> Reader {
        Reader {
            limits,
            cache: HashMap::new(),
            nodes: 0,
            exhausted: false,
            board: None,
        }
    }

    /// The limits in use.
    pub fn limits(&self) -> ReadingLimits {
        self.limits
    }

    /// Cached results held.
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    /// Can the opponent of the worm at `target` capture it, moving first?
    pub fn attack(&mut self, board: &Board, target: Loc) -> Tactic {
        self.top(board, target, true)
    }

    /// Can the worm at `target` be saved, its owner moving first?
    pub fn defend(&mut self, board: &Board, target: Loc) -> Tactic {
        self.top(board, target, false)
    }

    fn top(&mut self, board: &Board, target: Loc, attack: bool) -> Tactic {
        if board.stone(target).is_none() {
            return Tactic {
                outcome: Outcome::Fail,
                point: None,
                uncertain: false,
            };
        }
        if self.cache.len() > CACHE_CAP {
            self.cache.clear();
        }
        let mut b = match self.board.take() {
            Some(mut b) => {
                b.clone_from(board);
                b
            }
            None => board.clone(),
        };
        self.nodes = 0;
        self.exhausted = false;
        let (outcome, point) = if attack {
            self.attack_at(&mut b, target, 0)
        } else {
            self.defend_at(&mut b, target, 0)
        };
        self.board = Some(b);
        Tactic {
            outcome,
            point,
            uncertain: self.exhausted,
        }
    }

    fn key(b: &Board, target: Loc, attack: bool) -> (u128, u16, bool) {
        let ko = b.ko().map_or(0, |k| k.index() as u128);
        (
            b.position_hash() ^ ko.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835),
            target.index() as u16,
            attack,
        )
    }

    /// Liberties above which the defender is safe at this depth: deep lines only
    /// follow ladders and two-liberty fights.
    fn safe_above(&self, depth: u16) -> usize {
        if depth == 0 {
            self.limits.max_liberties
        } else if depth <= 4 {
            self.limits.max_liberties.min(3)
        } else {
            2
        }
    }

    fn spend(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes > self.limits.nodes {
            self.exhausted = true;
        }
        !self.exhausted
    }

    /// Attacker to move: can the chain at `t` be captured?
    fn attack_at(&mut self, b: &mut Board, t: Loc, depth: u16) -> (Outcome, Option<Loc>) {
        let Some(def) = b.stone(t) else {
            return (Outcome::Win, None);
        };
        let att = def.opp();
        let libs: Points<6> = liberties(b, t);
        if libs.len() == 1 {
            let l = libs[0];
            return if b.ko() == Some(l) {
                (Outcome::Ko, Some(l))
            } else {
                (Outcome::Win, Some(l))
            };
        }
        if libs.len() > self.safe_above(depth) || depth >= self.limits.depth {
            return (Outcome::Fail, None);
        }
        let key = Self::key(b, t, true);
        if let Some(&hit) = self.cache.get(&key) {
            return hit;
        }
        let mut cands: Points<24> = Points::new();
        // Save our own stones next to the target that it could capture to escape.
        for a in adjacent_chains::<8>(b, t, att) {
            if b.in_atari(a) {
                for l in liberties::<1>(b, a) {
                    push_unique(&mut cands, l);
                }
            }
        }
        // Take the liberty whose loss hurts most first: the one with more room.
        push_by_room(b, &libs, &mut cands);
        // Nets and geta: points next to the two liberties.
        if libs.len() == 2 && depth < 8 {
            push_next_to(b, &libs, &mut cands);
        }
        let best = self.try_moves(b, t, att, &cands, depth, true);
        self.remember(key, best)
    }

    /// Caches a complete read's result and returns it.
    fn remember(
        &mut self,
        key: (u128, u16, bool),
        best: (Outcome, Option<Loc>),
    ) -> (Outcome, Option<Loc>) {
        if !self.exhausted {
            self.cache.insert(key, best);
        }
        best
    }

    /// Defender to move: can the chain at `t` be saved?
    fn defend_at(&mut self, b: &mut Board, t: Loc, depth: u16) -> (Outcome, Option<Loc>) {
        let Some(def) = b.stone(t) else {
            return (Outcome::Fail, None);
        };
        let att = def.opp();
        let libs: Points<6> = liberties(b, t);
        if libs.len() > self.safe_above(depth) || depth >= self.limits.depth {
            return (Outcome::Win, None);
        }
        let key = Self::key(b, t, false);
        if let Some(&hit) = self.cache.get(&key) {
            return hit;
        }
        let mut cands: Points<24> = Points::new();
        let enemies: Points<12> = adjacent_chains(b, t, att);
        // Capturing an adjacent attacker first: it usually gains the most.
        for &a in &enemies {
            if b.in_atari(a) {
                for l in liberties::<1>(b, a) {
                    push_unique(&mut cands, l);
                }
            }
        }
        push_by_room(b, &libs, &mut cands);
        // Counter-attack attackers short of liberties (capturing races).
        for &a in &enemies {
            let al: Points<4> = liberties(b, a);
            if al.len() >= 2 && al.len() <= libs.len() + 1 && al.len() <= 3 {
                for l in al {
                    push_unique(&mut cands, l);
                }
            }
        }
        if libs.len() == 2 && depth < 4 {
            push_next_to(b, &libs, &mut cands);
        }
        let best = self.try_moves(b, t, def, &cands, depth, false);
        self.remember(key, best)
    }

    /// Plays each candidate for `mover` and reads the answer; the best for `mover`.
    fn try_moves(
        &mut self,
        b: &mut Board,
        t: Loc,
        mover: Player,
        cands: &[Loc],
        depth: u16,
        attacking: bool,
    ) -> (Outcome, Option<Loc>) {
        let mut best = (Outcome::Fail, None);
        for &m in cands {
            if !b.is_legal(Move::Play(m), mover, false) {
                continue;
            }
            if !self.spend() {
                break;
            }
            // A ko capture can be answered by a ko threat: the line only wins a ko.
            let takes_ko = b.ko_capture_point(m, mover).is_some();
            let undo = b.play(Move::Play(m), mover);
            let r = if attacking {
                if b.stone(t).is_none() {
                    Outcome::Win
                } else {
                    self.defend_at(b, t, depth + 1).0.invert()
                }
            } else if b.stone(t).is_none() {
                Outcome::Fail
            } else {
                self.attack_at(b, t, depth + 1).0.invert()
            };
            b.undo(undo);
            let r = if takes_ko && r == Outcome::Win {
                Outcome::Ko
            } else {
                r
            };
            if r > best.0 {
                best = (r, Some(m));
                if r == Outcome::Win {
                    break;
                }
            }
        }
        best
    }
}

fn empty_neighbours(b: &Board, l: Loc) -> usize {
    b.neighbours(l).filter(|&n| b.is_empty_at(n)).count()
}

/// Adds the liberties, those with the most empty neighbours first.
fn push_by_room<const N: usize>(b: &Board, libs: &[Loc], cands: &mut Points<N>) {
    let mut ordered: Points<8> = libs.iter().copied().collect();
    ordered.sort_by_key(|&l| std::cmp::Reverse(empty_neighbours(b, l)));
    for l in ordered {
        push_unique(cands, l);
    }
}

/// Adds the empty points next to the liberties.
fn push_next_to<const N: usize>(b: &Board, libs: &[Loc], cands: &mut Points<N>) {
    for &l in libs {
        for n in b.neighbours(l) {
            if b.is_empty_at(n) {
                push_unique(cands, n);
            }
        }
    }
}
