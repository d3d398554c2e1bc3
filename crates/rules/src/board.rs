//! The board: stones, chains with exact liberty counts, captures, simple ko, Zobrist hash.
//!
//! This is the hot path of every search and playout. Playing a move allocates
//! nothing and touches only the chains next to it; chains are circular linked
//! lists whose head holds the chain's counts; the empty points are kept in a
//! list for fast random playouts; [`Board::undo`] takes back a move from the
//! small [`Undo`] record that [`Board::play`] returns.
//!
//! Chains keep pseudo-liberties (empty neighbours counted once per adjacent
//! stone) with the sum and sum of squares of their positions. That is enough to
//! know exactly when a chain is captured (none) or in atari (all the same
//! point: `n * sum_sq == sum^2`) without ever deduplicating liberties, which is
//! what makes playing a move cheap. [`Board::liberties`] counts exactly on demand.
//!
//! The board knows only the simple-ko point and whether multi-stone suicide is
//! allowed; superko, passes and scoring belong to [`crate::Game`].

use std::fmt;

use crate::geometry::{BoardSize, Loc, Move, MAX_AREA, MAX_ARR};
use crate::player::Player;
use crate::zobrist::{self, Hash};

const EMPTY: u8 = 0;
const WALL: u8 = 3;

/// Length of the per-point arrays: every padded point index, and every index of the empty list.
const GRID: usize = if MAX_ARR > MAX_AREA {
    MAX_ARR
} else {
    MAX_AREA
};

/// A per-point array indexed by padded point index.
#[derive(Clone)]
struct Grid<T>([T; GRID]);

impl<T> std::ops::Index<usize> for Grid<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.0[i]
    }
}

impl<T> std::ops::IndexMut<usize> for Grid<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.0[i]
    }
}

/// What a chain's head keeps: stones, and pseudo-liberties (each empty neighbour
/// counted once per adjacent stone) with the sum and sum of squares of their indices.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Chain {
    plibs: u16,
    stones: u16,
    lib_sum: u32,
    lib_sq: u32,
}

/// The stones on a board and everything needed to play on it quickly.
#[derive(Clone)]
pub struct Board {
    size: BoardSize,
    /// `EMPTY`, a player's cell value, or `WALL`, per padded point.
    cells: Grid<u8>,
    /// Head stone of the chain a stone belongs to.
    head: Grid<u16>,
    /// Next stone of the same chain (circular).
    next: Grid<u16>,
    /// Counts of the chain, valid at heads only.
    chains: Grid<Chain>,
    /// The empty points, in no particular order (the first `num_empty` entries).
    empties: Grid<u16>,
    /// Position of each empty point in `empties`.
    empty_pos: Grid<u16>,
    num_empty: u16,
    /// Simple-ko banned point, 0 when none.
    ko: u16,
    hash: Hash,
    /// Stones of each player captured so far (index [`Player::index`]).
    captured: [u32; 2],
}

/// What [`Board::undo`] needs to take a move back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    loc: u16,
    pla: Player,
    prev_ko: u16,
    /// Bits 0..3: directions in which chains were captured; bit 4: the move was suicide.
    flags: u8,
}

const SUICIDE_FLAG: u8 = 1 << 4;

/// A move that the board itself refuses (occupied, simple ko or suicide).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// The point already has a stone.
    #[error("point is occupied")]
    Occupied,
    /// The point is banned by the simple-ko rule.
    #[error("point is banned by ko")]
    Ko,
    /// The move would capture the player's own stones and this is not allowed.
    #[error("move is suicide")]
    Suicide,
    /// A superko rule bans the move.
    #[error("move repeats an earlier position (superko)")]
    Superko,
    /// The cleanup phase forbids this ko capture.
    #[error("ko capture is blocked in the cleanup phase")]
    CleanupKo,
    /// It is not this player's turn.
    #[error("it is not this player's turn")]
    WrongPlayer,
    /// The game has already ended.
    #[error("the game is over")]
    GameOver,
}

/// A board set-up that leaves a chain without liberties, or a malformed diagram.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// The chain containing this point (row-major index) would have no liberty.
    #[error("the stones at point index {0} would have no liberties")]
    NoLiberties(usize),
    /// The diagram is not the size of the board or has an unknown character.
    #[error("bad board diagram: {0}")]
    Diagram(String),
}

impl Board {
    /// An empty board.
    pub fn new(size: BoardSize) -> Board {
        let mut b = Board {
            size,
            cells: Grid([WALL; GRID]),
            head: Grid([0; GRID]),
            next: Grid([0; GRID]),
            chains: Grid([Chain::default(); GRID]),
            empties: Grid([0; GRID]),
            empty_pos: Grid([0; GRID]),
            num_empty: 0,
            ko: 0,
            hash: zobrist::SIZE_X[size.width()] ^ zobrist::SIZE_Y[size.height()],
            captured: [0; 2],
        };
        for l in size.points() {
            b.cells[l.index()] = EMPTY;
            b.push_empty(l.index());
        }
        b
    }

    /// A board from text rows (top row first): `X`/`B` black, `O`/`W` white, `.`/`+`/`-` empty.
    pub fn from_rows<S: AsRef<str>>(size: BoardSize, rows: &[S]) -> Result<Board, SetupError> {
        if rows.len() != size.height() {
            return Err(SetupError::Diagram(format!(
                "{} rows for a board of height {}",
                rows.len(),
                size.height()
            )));
        }
        let mut placements = Vec::new();
        for (y, row) in rows.iter().enumerate() {
            let row: Vec<char> = row
                .as_ref()
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            if row.len() != size.width() {
                return Err(SetupError::Diagram(format!(
                    "row {} has {} points, expected {}",
                    y + 1,
                    row.len(),
                    size.width()
                )));
            }
            for (x, c) in row.into_iter().enumerate() {
                let stone = match c {
                    'X' | 'x' | 'B' | 'b' => Some(Player::Black),
                    'O' | 'o' | 'W' | 'w' => Some(Player::White),
                    '.' | '+' | '-' => None,
                    _ => {
                        return Err(SetupError::Diagram(format!(
                            "unknown point character {c:?}"
                        )))
                    }
                };
                if stone.is_some() {
                    placements.push((size.loc_unchecked(x, y), stone));
                }
            }
        }
        let mut b = Board::new(size);
        b.set_stones(&placements)?;
        Ok(b)
    }

    /// The board's dimensions.
    #[inline]
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// The stone on a point, if any.
    #[inline]
    pub fn stone(&self, loc: Loc) -> Option<Player> {
        Player::from_cell(self.cells[loc.index()])
    }

    /// True if the point is empty.
    #[inline]
    pub fn is_empty_at(&self, loc: Loc) -> bool {
        self.cells[loc.index()] == EMPTY
    }

    /// Liberties of the chain through `loc` (0 for an empty point), counted exactly
    /// by walking the chain.
    pub fn liberties(&self, loc: Loc) -> usize {
        self.liberties_up_to(loc, usize::MAX)
    }

    /// Liberties of the chain through `loc`, counting no further than `cap`
    /// (features need only 1, 2, 3 or more).
    pub fn liberties_up_to(&self, loc: Loc, cap: usize) -> usize {
        let start = loc.index();
        if !self.is_stone(start) {
            return 0;
        }
        let h = self.head[start] as usize;
        if self.chains[h].plibs == 0 {
            return 0;
        }
        if self.atari_at_head(h) {
            return 1;
        }
        let mut seen = [0u64; GRID.div_ceil(64)];
        let mut n = 0;
        let mut s = start;
        loop {
            for a in self.adj(s) {
                let (word, bit) = (a / 64, 1u64 << (a % 64));
                if self.cells[a] == EMPTY && seen[word] & bit == 0 {
                    seen[word] |= bit;
                    n += 1;
                    if n >= cap {
                        return n;
                    }
                }
            }
            s = self.next[s] as usize;
            if s == start {
                return n;
            }
        }
    }

    /// True if the chain through `loc` has exactly one liberty.
    #[inline]
    pub fn in_atari(&self, loc: Loc) -> bool {
        let l = loc.index();
        self.is_stone(l) && self.atari_at_head(self.head[l] as usize)
    }

    /// Stones in the chain through `loc` (0 for an empty point).
    #[inline]
    pub fn chain_len(&self, loc: Loc) -> usize {
        let l = loc.index();
        if self.is_stone(l) {
            self.chains[self.head[l] as usize].stones as usize
        } else {
            0
        }
    }

    /// True if both points hold stones of the same chain.
    #[inline]
    pub fn same_chain(&self, a: Loc, b: Loc) -> bool {
        self.is_stone(a.index())
            && self.is_stone(b.index())
            && self.head[a.index()] == self.head[b.index()]
    }

    /// The stones of the chain through `loc` (nothing for an empty point).
    pub fn chain(&self, loc: Loc) -> impl Iterator<Item = Loc> + '_ {
        let start = loc.index();
        let mut cur = if self.is_stone(start) {
            Some(start)
        } else {
            None
        };
        std::iter::from_fn(move || {
            let c = cur?;
            let n = self.next[c] as usize;
            cur = (n != start).then_some(n);
            Some(Loc(c as u16))
        })
    }

    /// True when the stones of the chain through `loc` plus the empty regions it touches
    /// (or, for an empty point, its own empty region) number more than `bound`: then the
    /// position after the move at `loc` cannot recur within `bound` moves, since every move
    /// of a cycle back to it must fill or empty one of those points (KataGo's graph search
    /// uses this to decide when history cannot matter).
    pub fn repetition_bound_exceeds(&self, loc: Loc, bound: usize) -> bool {
        let start = loc.index();
        let mut seen = [0u64; GRID.div_ceil(64)];
        let mut count = 0usize;
        let mut stack = [0u16; GRID];
        // Floods the empty region through `from`, adding its points to `count`; true once
        // the count passes the bound.
        let mut flood = |from: usize, count: &mut usize, seen: &mut [u64]| -> bool {
            let mark = |seen: &mut [u64], i: usize| {
                let (w, b) = (i / 64, 1u64 << (i % 64));
                let fresh = seen[w] & b == 0;
                seen[w] |= b;
                fresh
            };
            if !mark(seen, from) {
                return false;
            }
            let mut top = 1;
            stack[0] = from as u16;
            while top > 0 {
                top -= 1;
                let p = stack[top] as usize;
                *count += 1;
                if *count > bound {
                    return true;
                }
                for a in self.adj(p) {
                    if self.cells[a] == EMPTY && mark(seen, a) {
                        stack[top] = a as u16;
                        top += 1;
                    }
                }
            }
            false
        };
        if self.cells[start] == EMPTY {
            return flood(start, &mut count, &mut seen);
        }
        if !self.is_stone(start) {
            return false;
        }
        count = self.chain_len(loc);
        if count > bound {
            return true;
        }
        for s in self.chain(loc) {
            for a in self.adj(s.index()) {
                if self.cells[a] == EMPTY && flood(a, &mut count, &mut seen) {
                    return true;
                }
            }
        }
        false
    }

    /// The on-board neighbours of a point.
    pub fn neighbours(&self, loc: Loc) -> impl Iterator<Item = Loc> + '_ {
        self.adj(loc.index())
            .into_iter()
            .filter(|&n| self.cells[n] != WALL)
            .map(|n| Loc(n as u16))
    }

    /// The point banned by the simple-ko rule, if any.
    #[inline]
    pub fn ko(&self) -> Option<Loc> {
        (self.ko != 0).then_some(Loc(self.ko))
    }

    /// Lifts the simple-ko ban.
    #[inline]
    pub fn clear_ko(&mut self) {
        self.ko = 0;
    }

    /// Zobrist hash of the stones and the board size.
    #[inline]
    pub fn position_hash(&self) -> Hash {
        self.hash
    }

    /// Zobrist hash of the stones, the player to move and the simple-ko ban.
    #[inline]
    pub fn situation_hash(&self, to_move: Player) -> Hash {
        let mut h = self.hash ^ zobrist::PLAYER[to_move.index()];
        if self.ko != 0 {
            h ^= zobrist::KO_BAN[self.ko as usize];
        }
        h
    }

    /// How many of `player`'s stones have been captured (suicides included).
    #[inline]
    pub fn captures(&self, player: Player) -> u32 {
        self.captured[player.index()]
    }

    /// Sets the capture counters, e.g. when a position is loaded from elsewhere.
    pub fn set_captures(&mut self, black: u32, white: u32) {
        self.captured = [black, white];
    }

    /// Number of empty points.
    #[inline]
    pub fn num_empty(&self) -> usize {
        self.num_empty as usize
    }

    /// The empty points, in no particular order.
    pub fn empty_points(&self) -> impl Iterator<Item = Loc> + '_ {
        self.empties.0[..self.num_empty as usize]
            .iter()
            .map(|&l| Loc(l))
    }

    /// Number of stones of `player` on the board.
    pub fn num_stones(&self, player: Player) -> usize {
        self.size
            .points()
            .filter(|&l| self.cells[l.index()] == player.cell())
            .count()
    }

    /// True if no stone is on the board.
    pub fn is_board_empty(&self) -> bool {
        self.num_empty() == self.size.area()
    }

    /// True if playing here would leave the new stone's chain without liberties
    /// (nothing captured). Passes are never suicide.
    pub fn is_suicide(&self, mv: Move, pla: Player) -> bool {
        match mv {
            Move::Pass => false,
            Move::Play(l) => self.suicide_check(l.index(), pla, false),
        }
    }

    /// True if the move is suicide and the rules forbid it: single-stone suicide
    /// always, multi-stone suicide unless `multi_stone_suicide` is set.
    #[inline]
    pub fn is_illegal_suicide(&self, loc: Loc, pla: Player, multi_stone_suicide: bool) -> bool {
        self.suicide_check(loc.index(), pla, multi_stone_suicide)
    }

    /// Occupied, suicide or simple-ko check; `Ok` if the board allows the move.
    pub fn check_move(
        &self,
        mv: Move,
        pla: Player,
        multi_stone_suicide: bool,
    ) -> Result<(), IllegalMove> {
        self.check_move_ignoring_ko(mv, pla, multi_stone_suicide)?;
        match mv {
            Move::Play(l) if l.0 == self.ko => Err(IllegalMove::Ko),
            _ => Ok(()),
        }
    }

    /// Like [`Board::check_move`] but ignoring the simple-ko ban.
    pub fn check_move_ignoring_ko(
        &self,
        mv: Move,
        pla: Player,
        multi_stone_suicide: bool,
    ) -> Result<(), IllegalMove> {
        match mv {
            Move::Pass => Ok(()),
            Move::Play(l) => {
                if self.cells[l.index()] != EMPTY {
                    Err(IllegalMove::Occupied)
                } else if self.suicide_check(l.index(), pla, multi_stone_suicide) {
                    Err(IllegalMove::Suicide)
                } else {
                    Ok(())
                }
            }
        }
    }

    /// True if the board allows the move (empty point, not simple ko, not forbidden suicide).
    #[inline]
    pub fn is_legal(&self, mv: Move, pla: Player, multi_stone_suicide: bool) -> bool {
        match mv {
            Move::Pass => true,
            Move::Play(l) => {
                let l = l.index();
                self.cells[l] == EMPTY
                    && l != self.ko as usize
                    && !self.suicide_check(l, pla, multi_stone_suicide)
            }
        }
    }

    #[inline]
    fn suicide_check(&self, l: usize, pla: Player, multi_ok: bool) -> bool {
        let p = pla.cell();
        for n in self.adj(l) {
            let c = self.cells[n];
            if c == EMPTY {
                return false;
            } else if c == p {
                if multi_ok || !self.atari_at_head(self.head[n] as usize) {
                    return false;
                }
            } else if c != WALL && self.atari_at_head(self.head[n] as usize) {
                return false;
            }
        }
        true
    }

    /// For random playouts: the point is legal for `pla` (simple ko, no suicide)
    /// and not one of `pla`'s own one-point eyes. Fast when a neighbour is empty.
    #[inline]
    pub(crate) fn is_playout_move(&self, loc: Loc, pla: Player) -> bool {
        let l = loc.index();
        if l == self.ko as usize {
            return false;
        }
        let nb = self.adj(l);
        if nb.iter().any(|&n| self.cells[n] == EMPTY) {
            return true;
        }
        !self.is_simple_eye(loc, pla) && !self.suicide_check(l, pla, false)
    }

    /// True if playing here captures at least one opponent chain.
    pub fn would_capture(&self, loc: Loc, pla: Player) -> bool {
        let l = loc.index();
        let o = pla.opp().cell();
        self.cells[l] == EMPTY
            && self
                .adj(l)
                .into_iter()
                .any(|n| self.cells[n] == o && self.atari_at_head(self.head[n] as usize))
    }

    /// Liberties the chain of a stone `pla` plays at the empty point `loc` would have,
    /// counted up to `cap` (at most 8), not counting points that captures would free
    /// (ask [`Board::would_capture`] for those).
    pub fn liberties_after(&self, loc: Loc, pla: Player, cap: usize) -> usize {
        let l = loc.index();
        let cap = cap.min(8);
        let mut found = [0usize; 8];
        let mut n = 0;
        for a in self.adj(l) {
            if self.cells[a] == EMPTY {
                found[n] = a;
                n += 1;
                if n >= cap {
                    return n;
                }
            }
        }
        let p = pla.cell();
        let mut heads = [usize::MAX; 4];
        for (k, a) in self.adj(l).into_iter().enumerate() {
            if self.cells[a] != p {
                continue;
            }
            let h = self.head[a] as usize;
            if heads.contains(&h) {
                continue;
            }
            heads[k] = h;
            // A chain in atari here has `l` as its only liberty and adds nothing.
            if self.atari_at_head(h) {
                continue;
            }
            let mut s = h;
            loop {
                for b in self.adj(s) {
                    if self.cells[b] == EMPTY && b != l && !found[..n].contains(&b) {
                        found[n] = b;
                        n += 1;
                        if n >= cap {
                            return n;
                        }
                    }
                }
                s = self.next[s] as usize;
                if s == h {
                    break;
                }
            }
        }
        n
    }

    /// Stones `pla` would put in atari by playing at the empty point `loc`: the new
    /// stone and the chains it joins, or 0 when the move keeps two liberties or captures.
    pub fn self_atari_stones(&self, loc: Loc, pla: Player) -> usize {
        if self.would_capture(loc, pla) || self.liberties_after(loc, pla, 2) >= 2 {
            return 0;
        }
        let l = loc.index();
        let p = pla.cell();
        let mut heads = [usize::MAX; 4];
        let mut stones = 1;
        for (k, a) in self.adj(l).into_iter().enumerate() {
            if self.cells[a] == p {
                let h = self.head[a] as usize;
                if !heads.contains(&h) {
                    heads[k] = h;
                    stones += self.chains[h].stones as usize;
                }
            }
        }
        stones
    }

    /// The only liberty of the chain through the stone `loc`, if it is in atari.
    #[inline]
    pub fn atari_liberty(&self, loc: Loc) -> Option<Loc> {
        let l = loc.index();
        if !self.is_stone(l) {
            return None;
        }
        let h = self.head[l] as usize;
        let c = &self.chains[h];
        self.atari_at_head(h)
            .then(|| Loc((c.lib_sum / c.plibs as u32) as u16))
    }

    /// If playing at `loc` is a capture in a ko mouth (all neighbours opponent
    /// stones or edge, exactly one single-stone chain in atari), the stone it captures.
    pub fn ko_capture_point(&self, loc: Loc, pla: Player) -> Option<Loc> {
        let l = loc.index();
        if self.cells[l] != EMPTY {
            return None;
        }
        let o = pla.opp().cell();
        let mut victim = None;
        for n in self.adj(l) {
            let c = self.cells[n];
            if c != WALL && c != o {
                return None;
            }
            if c == o && self.atari_at_head(self.head[n] as usize) {
                if victim.is_some() {
                    return None;
                }
                victim = Some(n);
            }
        }
        let v = victim?;
        (self.chains[self.head[v] as usize].stones == 1).then_some(Loc(v as u16))
    }

    /// True if `loc` is an empty point whose neighbours are all `pla`'s stones (or the edge)
    /// and whose diagonals are not held by the opponent too much: a real one-point eye.
    #[inline]
    pub fn is_simple_eye(&self, loc: Loc, pla: Player) -> bool {
        let l = loc.index();
        if self.cells[l] != EMPTY {
            return false;
        }
        let p = pla.cell();
        let mut at_edge = false;
        for n in self.adj(l) {
            let c = self.cells[n];
            if c == WALL {
                at_edge = true;
            } else if c != p {
                return false;
            }
        }
        let o = pla.opp().cell();
        let opp_corners = self
            .diag(l)
            .into_iter()
            .filter(|&d| self.cells[d] == o)
            .count();
        !(opp_corners >= 2 || (at_edge && opp_corners >= 1))
    }

    /// The position hash after `pla` plays on the empty point `loc`, captures and suicide resolved.
    pub fn hash_after(&self, loc: Loc, pla: Player) -> Hash {
        let l = loc.index();
        let p = pla.cell();
        let o = pla.opp().cell();
        let mut h = self.hash ^ zobrist::STONE[l * 2 + pla.index()];
        let mut seen = [0u16; 4];
        let mut nseen = 0;
        let mut suicide = true;
        for n in self.adj(l) {
            let c = self.cells[n];
            if c == EMPTY || (c == p && !self.atari_at_head(self.head[n] as usize)) {
                suicide = false;
            } else if c == o && self.atari_at_head(self.head[n] as usize) {
                suicide = false;
                let hd = self.head[n];
                if !seen[..nseen].contains(&hd) {
                    seen[nseen] = hd;
                    nseen += 1;
                    h ^= self.chain_hash(n, pla.opp());
                }
            }
        }
        if suicide {
            for n in self.adj(l) {
                if self.cells[n] == p {
                    let hd = self.head[n];
                    if !seen[..nseen].contains(&hd) {
                        seen[nseen] = hd;
                        nseen += 1;
                        h ^= self.chain_hash(n, pla);
                    }
                }
            }
            h ^= zobrist::STONE[l * 2 + pla.index()];
        }
        h
    }

    fn chain_hash(&self, start: usize, colour: Player) -> Hash {
        let mut h = 0;
        let mut s = start;
        loop {
            h ^= zobrist::STONE[s * 2 + colour.index()];
            s = self.next[s] as usize;
            if s == start {
                return h;
            }
        }
    }

    /// Plays a move that the board allows (see [`Board::is_legal`]; the simple-ko
    /// ban is not checked, so callers may implement other ko rules) and returns
    /// what is needed to undo it. Playing on an occupied point is a logic error:
    /// it is caught in debug builds and leaves the board unchanged in release builds.
    pub fn play(&mut self, mv: Move, pla: Player) -> Undo {
        let prev_ko = self.ko;
        let l = match mv {
            Move::Pass => {
                self.ko = 0;
                return Undo {
                    loc: 0,
                    pla,
                    prev_ko,
                    flags: 0,
                };
            }
            Move::Play(loc) => loc.index(),
        };
        debug_assert_eq!(self.cells[l], EMPTY, "play on a non-empty point");
        if self.cells[l] != EMPTY {
            return Undo {
                loc: 0,
                pla,
                prev_ko,
                flags: 0,
            };
        }
        let p = pla.cell();
        let o = pla.opp().cell();
        self.cells[l] = p;
        self.hash ^= zobrist::STONE[l * 2 + pla.index()];
        self.remove_empty(l);
        self.head[l] = l as u16;
        self.next[l] = l as u16;
        self.chains[l] = Chain {
            stones: 1,
            ..Chain::default()
        };
        let nb = self.adj(l);

        let mut flags = 0u8;
        let mut captured = 0u32;
        let mut ko_candidate = 0usize;
        // Pseudo-liberties count one per (stone, empty neighbour) pair, so every
        // adjacency is handled on its own and nothing needs deduplicating.
        for &n in &nb {
            if self.cells[n] == EMPTY {
                self.add_lib(l, n);
            }
        }
        for (d, &n) in nb.iter().enumerate() {
            let c = self.cells[n];
            if c == p {
                let h = self.head[n] as usize;
                self.sub_lib(h, l);
                let mine = self.head[l] as usize;
                if h != mine {
                    self.merge(h, mine);
                }
            } else if c == o {
                let h = self.head[n] as usize;
                self.sub_lib(h, l);
                if self.chains[h].plibs == 0 {
                    captured += self.remove_chain(h);
                    flags |= 1 << d;
                    ko_candidate = n;
                }
            }
        }
        self.captured[pla.opp().index()] += captured;

        let h = self.head[l] as usize;
        if self.chains[h].plibs == 0 {
            let n = self.remove_chain(h);
            self.captured[pla.index()] += n;
            flags |= SUICIDE_FLAG;
            self.ko = 0;
        } else if captured == 1 && self.chains[h].stones == 1 && self.chains[h].plibs == 1 {
            self.ko = ko_candidate as u16;
        } else {
            self.ko = 0;
        }
        Undo {
            loc: l as u16,
            pla,
            prev_ko,
            flags,
        }
    }

    /// Plays a move after checking it with [`Board::check_move`].
    pub fn try_play(
        &mut self,
        mv: Move,
        pla: Player,
        multi_stone_suicide: bool,
    ) -> Result<Undo, IllegalMove> {
        self.check_move(mv, pla, multi_stone_suicide)?;
        Ok(self.play(mv, pla))
    }

    /// Takes back the last move played; moves must be undone in reverse order.
    pub fn undo(&mut self, u: Undo) {
        self.ko = u.prev_ko;
        if u.loc == 0 {
            return;
        }
        let l = u.loc as usize;
        let pla = u.pla;
        let mut refilled = [0u16; MAX_AREA];
        let mut nref = 0;
        if u.flags & SUICIDE_FLAG != 0 {
            let n = self.refill(l, pla, &mut refilled, &mut nref);
            self.captured[pla.index()] -= n;
        }
        let nb = self.adj(l);
        for (d, &n) in nb.iter().enumerate() {
            if u.flags & (1 << d) != 0 && self.cells[n] == EMPTY {
                let k = self.refill(n, pla.opp(), &mut refilled, &mut nref);
                self.captured[pla.opp().index()] -= k;
            }
        }
        // Take the stone itself off.
        self.cells[l] = EMPTY;
        self.hash ^= zobrist::STONE[l * 2 + pla.index()];
        self.push_empty(l);

        // Rebuild every chain whose stones or liberties changed.
        let mut done = [false; MAX_ARR];
        let mut stack = [0u16; MAX_AREA];
        for n in nb {
            self.rebuild_if_stone(n, &mut done, &mut stack);
        }
        for &r in &refilled[..nref] {
            let r = r as usize;
            self.rebuild_if_stone(r, &mut done, &mut stack);
            for n in self.adj(r) {
                self.rebuild_if_stone(n, &mut done, &mut stack);
            }
        }
    }

    /// Places and removes stones for a set-up (handicap, SGF `AB`/`AW`/`AE`).
    /// Fails, leaving the board unchanged, if a chain would have no liberties.
    /// Clears the ko ban.
    pub fn set_stones(&mut self, placements: &[(Loc, Option<Player>)]) -> Result<(), SetupError> {
        let backup = self.clone();
        for &(loc, stone) in placements {
            let l = loc.index();
            if self.cells[l] == WALL {
                continue;
            }
            if let Some(old) = Player::from_cell(self.cells[l]) {
                self.hash ^= zobrist::STONE[l * 2 + old.index()];
            } else {
                self.remove_empty(l);
            }
            match stone {
                Some(p) => {
                    self.cells[l] = p.cell();
                    self.hash ^= zobrist::STONE[l * 2 + p.index()];
                }
                None => {
                    self.cells[l] = EMPTY;
                    self.push_empty(l);
                }
            }
        }
        self.ko = 0;
        self.rebuild_all_chains();
        if let Some(l) = self
            .size
            .points()
            .find(|&l| self.is_stone(l.index()) && self.liberties(l) == 0)
        {
            let index = self.size.index_of(l);
            *self = backup;
            return Err(SetupError::NoLiberties(index));
        }
        Ok(())
    }

    /// Text rows, top first: `X` black, `O` white, `.` empty.
    pub fn rows(&self) -> Vec<String> {
        self.size.text_rows(|l| self.stone(l))
    }

    /// Compares everything a rules engine can observe: stones, chains, liberties,
    /// ko, captures and hash (not the internal order of lists).
    pub fn same_state(&self, other: &Board) -> bool {
        if self.size != other.size
            || self.ko != other.ko
            || self.hash != other.hash
            || self.captured != other.captured
            || self.num_empty != other.num_empty
        {
            return false;
        }
        self.size.points().all(|l| {
            self.cells[l.index()] == other.cells[l.index()]
                && self.liberties(l) == other.liberties(l)
                && self.chain_len(l) == other.chain_len(l)
                && self.chain(l).min() == other.chain(l).min()
        }) && self.empty_points().all(|l| other.is_empty_at(l))
    }

    /// Recomputes the position hash from the stones, for checking the incremental one.
    pub fn hash_from_scratch(&self) -> Hash {
        let mut h = zobrist::SIZE_X[self.size.width()] ^ zobrist::SIZE_Y[self.size.height()];
        for l in self.size.points() {
            if let Some(p) = self.stone(l) {
                h ^= zobrist::STONE[l.index() * 2 + p.index()];
            }
        }
        h
    }

    /// Checks every internal invariant; returns a description of the first one broken.
    pub fn check_consistency(&self) -> Result<(), String> {
        if self.hash != self.hash_from_scratch() {
            return Err("hash differs from recomputation".into());
        }
        let mut fresh = self.clone();
        fresh.rebuild_all_chains();
        let mut empties = 0;
        for l in self.size.points() {
            let i = l.index();
            if self.cells[i] == EMPTY {
                empties += 1;
                let pos = self.empty_pos[i] as usize;
                if pos >= self.num_empty as usize || self.empties[pos] as usize != i {
                    return Err(format!("empty list broken at {i}"));
                }
            } else {
                let h = self.head[i] as usize;
                if self.cells[h] != self.cells[i] {
                    return Err(format!("head of {i} has another colour"));
                }
                let fh = fresh.head[i] as usize;
                if self.chains[h].plibs != fresh.chains[fh].plibs
                    || self.chains[h].lib_sum != fresh.chains[fh].lib_sum
                    || self.chains[h].lib_sq != fresh.chains[fh].lib_sq
                    || self.chains[h].stones != fresh.chains[fh].stones
                {
                    return Err(format!("chain counts wrong at {i}"));
                }
                if self.chain(l).count() != self.chains[h].stones as usize {
                    return Err(format!("chain list broken at {i}"));
                }
            }
        }
        if empties != self.num_empty as usize {
            return Err("empty count wrong".into());
        }
        Ok(())
    }

    // ---- crate-internal raw access, for the area computations ----

    /// Raw cell value at a padded index (0 empty, 1 black, 2 white, 3 wall).
    #[inline]
    pub(crate) fn cell(&self, l: usize) -> u8 {
        self.cells[l]
    }

    /// Head of the chain through the stone at padded index `l`.
    #[inline]
    pub(crate) fn head_of(&self, l: usize) -> usize {
        self.head[l] as usize
    }

    /// Next stone in the chain after padded index `l`.
    #[inline]
    pub(crate) fn next_of(&self, l: usize) -> usize {
        self.next[l] as usize
    }

    /// True if the chain with head `h` has exactly one liberty.
    #[inline]
    fn atari_at_head(&self, h: usize) -> bool {
        let n = self.chains[h].plibs as u64;
        let sum = self.chains[h].lib_sum as u64;
        n > 0 && n * self.chains[h].lib_sq as u64 == sum * sum
    }

    #[inline]
    fn add_lib(&mut self, h: usize, lib: usize) {
        self.chains[h].plibs += 1;
        self.chains[h].lib_sum += lib as u32;
        self.chains[h].lib_sq += (lib * lib) as u32;
    }

    #[inline]
    fn sub_lib(&mut self, h: usize, lib: usize) {
        self.chains[h].plibs -= 1;
        self.chains[h].lib_sum -= lib as u32;
        self.chains[h].lib_sq -= (lib * lib) as u32;
    }

    // ---- internals ----

    #[inline]
    fn is_stone(&self, l: usize) -> bool {
        let c = self.cells[l];
        c != EMPTY && c != WALL
    }

    /// Padded indices of the four neighbours of `l` (walls included).
    #[inline]
    pub(crate) fn adj(&self, l: usize) -> [usize; 4] {
        let s = self.size.stride();
        [l - s, l - 1, l + 1, l + s]
    }

    #[inline]
    pub(crate) fn diag(&self, l: usize) -> [usize; 4] {
        let s = self.size.stride();
        [l - s - 1, l - s + 1, l + s - 1, l + s + 1]
    }

    #[inline]
    fn push_empty(&mut self, l: usize) {
        self.empty_pos[l] = self.num_empty;
        self.empties[self.num_empty as usize] = l as u16;
        self.num_empty += 1;
    }

    #[inline]
    fn remove_empty(&mut self, l: usize) {
        let pos = self.empty_pos[l] as usize;
        self.num_empty -= 1;
        let last = self.empties[self.num_empty as usize];
        self.empties[pos] = last;
        self.empty_pos[last as usize] = pos as u16;
    }

    /// Swaps two entries of the empty list (playouts use this to sample without replacement).
    #[inline]
    pub(crate) fn swap_empties(&mut self, i: usize, j: usize) {
        let (a, b) = (self.empties[i], self.empties[j]);
        self.empties[i] = b;
        self.empties[j] = a;
        self.empty_pos[a as usize] = j as u16;
        self.empty_pos[b as usize] = i as u16;
    }

    /// The `i`th entry of the empty list.
    #[inline]
    pub(crate) fn empty_at(&self, i: usize) -> Loc {
        Loc(self.empties[i])
    }

    /// Joins two chains of one colour; returns the surviving head.
    fn merge(&mut self, a: usize, b: usize) -> usize {
        let (big, small) = if self.chains[a].stones >= self.chains[b].stones {
            (a, b)
        } else {
            (b, a)
        };
        let mut s = small;
        loop {
            self.head[s] = big as u16;
            s = self.next[s] as usize;
            if s == small {
                break;
            }
        }
        let sm = self.chains[small];
        let bg = &mut self.chains[big];
        bg.plibs += sm.plibs;
        bg.lib_sum += sm.lib_sum;
        bg.lib_sq += sm.lib_sq;
        bg.stones += sm.stones;
        self.next.0.swap(big, small);
        big
    }

    /// Removes a chain, giving each neighbouring enemy chain its new liberties.
    fn remove_chain(&mut self, h: usize) -> u32 {
        let colour = self.cells[h];
        let idx = colour as usize - 1;
        let other = 3 - colour;
        let mut n = 0;
        let mut s = h;
        loop {
            self.cells[s] = EMPTY;
            self.hash ^= zobrist::STONE[s * 2 + idx];
            self.push_empty(s);
            n += 1;
            s = self.next[s] as usize;
            if s == h {
                break;
            }
        }
        loop {
            for a in self.adj(s) {
                if self.cells[a] == other {
                    self.add_lib(self.head[a] as usize, s);
                }
            }
            s = self.next[s] as usize;
            if s == h {
                break;
            }
        }
        n
    }

    /// Fills the empty region through `start` with `colour` (an undo of a capture
    /// or suicide, whose region is bounded by the other colour); returns its size.
    fn refill(
        &mut self,
        start: usize,
        colour: Player,
        out: &mut [u16; MAX_AREA],
        nout: &mut usize,
    ) -> u32 {
        let c = colour.cell();
        let mut stack = [0u16; MAX_AREA];
        let mut sp = 0;
        let mut n = 0;
        self.cells[start] = c;
        self.hash ^= zobrist::STONE[start * 2 + colour.index()];
        self.remove_empty(start);
        stack[sp] = start as u16;
        sp += 1;
        while sp > 0 {
            sp -= 1;
            let s = stack[sp] as usize;
            n += 1;
            out[*nout] = s as u16;
            *nout += 1;
            for a in self.adj(s) {
                if self.cells[a] == EMPTY {
                    self.cells[a] = c;
                    self.hash ^= zobrist::STONE[a * 2 + colour.index()];
                    self.remove_empty(a);
                    stack[sp] = a as u16;
                    sp += 1;
                }
            }
        }
        n
    }

    fn rebuild_if_stone(
        &mut self,
        l: usize,
        done: &mut [bool; MAX_ARR],
        stack: &mut [u16; MAX_AREA],
    ) {
        if self.is_stone(l) && !done[l] {
            self.rebuild_chain(l, done, stack);
        }
    }

    /// Recomputes the chain through `seed` by flood fill: links, head, stones, liberties.
    fn rebuild_chain(
        &mut self,
        seed: usize,
        done: &mut [bool; MAX_ARR],
        stack: &mut [u16; MAX_AREA],
    ) {
        let c = self.cells[seed];
        let mut sp = 0;
        let mut count = 0u16;
        let mut prev = seed;
        self.chains[seed].plibs = 0;
        self.chains[seed].lib_sum = 0;
        self.chains[seed].lib_sq = 0;
        done[seed] = true;
        stack[sp] = seed as u16;
        sp += 1;
        while sp > 0 {
            sp -= 1;
            let s = stack[sp] as usize;
            count += 1;
            self.head[s] = seed as u16;
            if s != seed {
                self.next[prev] = s as u16;
                prev = s;
            }
            for a in self.adj(s) {
                let ca = self.cells[a];
                if ca == c && !done[a] {
                    done[a] = true;
                    stack[sp] = a as u16;
                    sp += 1;
                } else if ca == EMPTY {
                    self.add_lib(seed, a);
                }
            }
        }
        self.next[prev] = seed as u16;
        self.chains[seed].stones = count;
    }

    fn rebuild_all_chains(&mut self) {
        let mut done = [false; MAX_ARR];
        let mut stack = [0u16; MAX_AREA];
        for l in self.size.points() {
            self.rebuild_if_stone(l.index(), &mut done, &mut stack);
        }
    }
}

impl PartialEq for Board {
    fn eq(&self, other: &Self) -> bool {
        self.same_state(other)
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Board {} ko={:?}",
            self.size,
            self.ko().map(|l| self.size.gtp(Move::Play(l)))
        )?;
        for r in self.rows() {
            writeln!(f, "{r}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        let size = BoardSize::new(rows[0].len(), rows.len()).unwrap();
        Board::from_rows(size, rows).unwrap()
    }

    fn mv(b: &Board, s: &str) -> Move {
        b.size().parse_move(s).unwrap()
    }

    #[test]
    fn repetition_bound_counts_the_chain_and_the_empty_regions_it_touches() {
        // Black's B4 stone touches two empty regions walled off by White, {A4} and
        // {C4, C5}: 1 + 1 + 2 = 4 points, so a bound of 3 is exceeded and 4 is not.
        let b = board(&[
            "OO.O.", //
            ".X.O.", //
            "OOOO.", //
            ".....", //
            ".....",
        ]);
        let at = |s: &str| b.size().parse_loc(s).unwrap();
        assert!(b.repetition_bound_exceeds(at("B4"), 3));
        assert!(!b.repetition_bound_exceeds(at("B4"), 4));
        // An empty point counts its own region: A4 alone.
        assert!(!b.repetition_bound_exceeds(at("A4"), 1));
        assert!(b.repetition_bound_exceeds(at("A4"), 0));
        // A stone touching the open side of the board sees a large region.
        assert!(b.repetition_bound_exceeds(at("D5"), 11));
    }

    #[test]
    fn capture_and_ko() {
        let mut b = board(&[
            ".XO..", //
            "XO.O.", //
            ".XO..", //
            ".....", //
            ".....",
        ]);
        let c4 = mv(&b, "C4");
        assert!(b.is_legal(c4, Player::Black, false));
        let u = b.play(c4, Player::Black);
        assert_eq!(b.stone(b.size().parse_loc("B4").unwrap()), None);
        assert_eq!(b.captures(Player::White), 1);
        assert_eq!(b.ko(), b.size().parse_loc("B4").ok());
        assert!(!b.is_legal(mv(&b, "B4"), Player::White, false));
        b.check_consistency().unwrap();
        b.undo(u);
        b.check_consistency().unwrap();
        assert_eq!(
            b.stone(b.size().parse_loc("B4").unwrap()),
            Some(Player::White)
        );
        assert_eq!(b.captures(Player::White), 0);
    }

    #[test]
    fn suicide_rules() {
        let b = board(&[
            ".X...", //
            "XX...", //
            ".....", //
            ".....", //
            ".....",
        ]);
        // Single-stone suicide at A5 for White is never legal.
        assert!(b.is_illegal_suicide(mv(&b, "A5").loc().unwrap(), Player::White, true));
        let b2 = board(&[
            "O.X..", //
            "XX...", //
            ".....", //
            ".....", //
            ".....",
        ]);
        // White B5 would kill the white pair A5-B5: multi-stone suicide.
        let b5 = mv(&b2, "B5");
        assert!(b2.is_illegal_suicide(b5.loc().unwrap(), Player::White, false));
        assert!(!b2.is_illegal_suicide(b5.loc().unwrap(), Player::White, true));
        let mut b3 = b2.clone();
        let u = b3.play(b5, Player::White);
        assert_eq!(b3.captures(Player::White), 2);
        assert!(b3.stone(b5.loc().unwrap()).is_none());
        b3.check_consistency().unwrap();
        b3.undo(u);
        assert!(b3.same_state(&b2));
    }

    #[test]
    fn hash_after_matches_play() {
        let b = board(&[
            "O.X..", //
            "XX...", //
            ".XO..", //
            "XO.O.", //
            ".XO..",
        ]);
        for l in b.size().points() {
            for p in Player::BOTH {
                if b.is_empty_at(l) {
                    let mut c = b.clone();
                    c.play(Move::Play(l), p);
                    assert_eq!(b.hash_after(l, p), c.position_hash());
                }
            }
        }
    }

    #[test]
    fn eyes() {
        let b = board(&[
            ".X.X.", //
            "XX.XX", //
            ".....", //
            "XXO..", //
            "X.XO.",
        ]);
        assert!(b.is_simple_eye(mv(&b, "A5").loc().unwrap(), Player::Black));
        assert!(!b.is_simple_eye(mv(&b, "C5").loc().unwrap(), Player::Black));
        // B1 has a white diagonal on the edge: a false eye.
        assert!(!b.is_simple_eye(mv(&b, "B1").loc().unwrap(), Player::Black));
        assert!(!b.is_simple_eye(mv(&b, "A5").loc().unwrap(), Player::White));
    }

    #[test]
    fn setup_rejects_dead_stones() {
        let size = BoardSize::square(3).unwrap();
        let mut b = Board::new(size);
        let before = b.clone();
        let place = |s: &str, p| (size.parse_loc(s).unwrap(), Some(p));
        let err = b
            .set_stones(&[
                place("A3", Player::White),
                place("B3", Player::Black),
                place("A2", Player::Black),
            ])
            .unwrap_err();
        assert_eq!(err, SetupError::NoLiberties(0));
        assert!(b.same_state(&before));
        assert!(Board::from_rows(size, &["...", "..."]).is_err());
        assert!(Board::from_rows(size, &["..?", "...", "..."]).is_err());
    }
}
