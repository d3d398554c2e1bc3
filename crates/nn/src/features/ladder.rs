//! Ladder reading for the ladder input features: the same game tree, shortcuts and limits
//! as KataGo's `Board::searchIsLadderCaptured`, `searchIsLadderCapturedAttackerFirst2Libs`
//! and `iterLadders` (nninputs.cpp), so that the features agree with KataGo's.
//!
//! The defender's chain escapes once it has 3 liberties (2 when it is the defender's turn);
//! the defender may extend on its last liberty or capture an adjacent chain in atari, the
//! attacker may only fill one of the two liberties. Suicide is never played, a ko left by
//! the attacker counts as an escape (except at the root, where kos are assumed to work for
//! the defender), a double ko-mouth death counts as captured, a search deeper than 1.5x
//! the board area counts as captured and one that plays more than 25,000 moves gives up
//! (not captured). The answer does not depend on the order moves are tried in, except
//! through that budget: KataGo orders equal candidates by its internal chain lists, so a
//! search that gives up (never seen in practice) might disagree with KataGo's. One of
//! KataGo's shortcuts depends on that order too (see [`Lists::defender_moves`]); Tengen
//! takes the order-free reading, so mirror images of a position read alike.
//!
//! Searches play on copies of the board (one per depth, reused), never on the caller's.

use tengen_rules::{Board, Loc, Move, Player};

/// Moves a single search may play before it gives up (KataGo's budget).
const NODE_BUDGET: usize = 25_000;

/// How a ladder search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Captured,
    Escapes,
    /// The node budget ran out; KataGo then answers "not captured".
    GaveUp,
}

/// One level of the explicit search stack.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// Where this level's move list starts in the move buffer.
    start: usize,
    /// Length of the move list.
    len: usize,
    /// Index of the move being tried; `None` until the list is generated.
    cur: Option<usize>,
}

impl Frame {
    const FRESH: Frame = Frame {
        start: 0,
        len: 0,
        cur: None,
    };
}

/// Move lists of all levels, one after the other, and what generating them needs.
#[derive(Default, Debug)]
struct Lists {
    buf: Vec<Loc>,
    /// Representative stones of chains already looked at while listing captures.
    chains_seen: Vec<Loc>,
}

/// The search proper: buffers reused from one search to the next.
#[derive(Default, Debug)]
struct Search {
    lists: Lists,
    frames: Vec<Frame>,
    /// `boards[d]` is the position after the move tried at depth `d` (depth 0 plays on the
    /// root). Copying a board is cheaper than taking a move back on it.
    boards: Vec<Board>,
    /// The position after the attacker's first move, for two-liberty chains.
    after_atari: Option<Box<Board>>,
}

/// Reusable state for ladder reading; allocates only while its buffers grow.
#[derive(Default)]
pub struct LadderSearch {
    search: Search,
    /// Per point (row-major) of the board being scanned: liberties of its chain, counted
    /// up to 3, or 0 if not yet known (empty points stay 0).
    libs: Vec<u8>,
    /// Per point: the ladder verdict of its chain once solved.
    verdict: Vec<Verdict>,
    working: Vec<Loc>,
}

/// What is known about a chain's ladder status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Unknown,
    Laddered,
    Safe,
}

impl std::fmt::Debug for LadderSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LadderSearch").finish_non_exhaustive()
    }
}

impl LadderSearch {
    /// A search with empty buffers.
    pub fn new() -> LadderSearch {
        LadderSearch::default()
    }

    /// True if the chain through `loc`, with one liberty and its owner to move, cannot
    /// escape the ladder. False for empty points and chains with more liberties.
    pub fn is_captured(&mut self, board: &Board, loc: Loc) -> bool {
        self.search.captured(board, loc, true) == Outcome::Captured
    }

    /// For a chain with exactly two liberties, the attacker's first moves (ataris) after
    /// which the chain is ladder-captured; empty if there are none or the chain does not
    /// have exactly two liberties.
    pub fn working_ataris(&mut self, board: &Board, loc: Loc) -> &[Loc] {
        self.working.clear();
        self.search
            .attack_two_libs(board, loc, false, &mut self.working);
        &self.working
    }

    /// Calls `f` for every stone, in row-major order, of every chain that is ladder-captured
    /// with one liberty, or that the attacker can ladder with two liberties (KataGo's
    /// `iterLadders`). `f` gets the stone and, for the first stone seen of a two-liberty
    /// chain, the attacker's working first moves (empty otherwise).
    pub fn for_each_laddered(&mut self, board: &Board, mut f: impl FnMut(Loc, &[Loc])) {
        // KataGo searches on one copy of the board; a search there that runs out of budget
        // leaves the simple-ko ban lifted for the attackers' first moves after it.
        let mut ko_lifted = false;
        let size = board.size();
        self.libs.clear();
        self.libs.resize(size.area(), 0);
        self.verdict.clear();
        self.verdict.resize(size.area(), Verdict::Unknown);
        for (i, loc) in size.points().enumerate() {
            if board.stone(loc).is_none() {
                continue;
            }
            // Count each chain's liberties once, for all its stones.
            if self.libs[i] == 0 {
                let libs = board.liberties_up_to(loc, 3) as u8;
                for s in board.chain(loc) {
                    if let Some(j) = super::point_index(size, s) {
                        self.libs[j] = libs;
                    }
                }
            }
            let libs = self.libs[i];
            if libs != 1 && libs != 2 {
                continue;
            }
            match self.verdict[i] {
                Verdict::Laddered => f(loc, &[]),
                Verdict::Safe => {}
                Verdict::Unknown => {
                    self.working.clear();
                    let laddered = if libs == 1 {
                        let outcome = self.search.captured(board, loc, true);
                        ko_lifted |= outcome == Outcome::GaveUp;
                        outcome == Outcome::Captured
                    } else {
                        self.search
                            .attack_two_libs(board, loc, ko_lifted, &mut self.working)
                    };
                    let v = if laddered {
                        Verdict::Laddered
                    } else {
                        Verdict::Safe
                    };
                    for s in board.chain(loc) {
                        if let Some(j) = super::point_index(size, s) {
                            self.verdict[j] = v;
                        }
                    }
                    if laddered {
                        f(loc, &self.working);
                    }
                }
            }
        }
    }
}

impl Search {
    /// Attacker to move against a two-liberty chain: tries both ataris, records the ones
    /// after which the chain is captured in `working`, and says whether any works.
    /// `ignore_ko` lets the attacker play on the simple-ko point.
    fn attack_two_libs(
        &mut self,
        root: &Board,
        loc: Loc,
        ignore_ko: bool,
        working: &mut Vec<Loc>,
    ) -> bool {
        let Some(defender) = root.stone(loc) else {
            return false;
        };
        if root.liberties_up_to(loc, 3) != 2 {
            return false;
        }
        let attacker = defender.opp();
        self.lists.buf.clear();
        push_liberties(root, loc, &mut self.lists.buf, 0);
        let [m0, m1] = match self.lists.buf[..] {
            [a, b] => [a, b],
            _ => return false,
        };
        let mut after = self
            .after_atari
            .take()
            .unwrap_or_else(|| Box::new(root.clone()));
        let mut any = false;
        for m in [m0, m1] {
            // Suicide never helps the attacker: it cannot take a liberty.
            let mv = Move::Play(m);
            let legal = if ignore_ko {
                root.check_move_ignoring_ko(mv, attacker, false).is_ok()
            } else {
                root.is_legal(mv, attacker, false)
            };
            if !legal {
                continue;
            }
            after.as_mut().clone_from(root);
            after.play(mv, attacker);
            if self.captured(&after, loc, true) == Outcome::Captured {
                working.push(m);
                any = true;
            }
        }
        self.after_atari = Some(after);
        any
    }

    /// Whether the chain through `loc` is captured in the ladder game, with the defender
    /// or the attacker to move first. With the defender first, every ko at the root is
    /// assumed to work for it (the simple-ko ban is ignored there).
    fn captured(&mut self, root: &Board, loc: Loc, defender_first: bool) -> Outcome {
        let Some(defender) = root.stone(loc) else {
            return Outcome::Escapes;
        };
        let libs = root.liberties_up_to(loc, 3);
        if libs > 2 || (defender_first && libs > 1) {
            return Outcome::Escapes;
        }
        let attacker = defender.opp();
        let Search {
            lists,
            frames,
            boards,
            ..
        } = self;

        let stack_size = root.size().area() * 3 / 2 + 1;
        if frames.len() < stack_size {
            frames.resize(stack_size, Frame::FRESH);
        }
        frames[0] = Frame::FRESH;
        lists.buf.clear();
        let mut depth: isize = 0;
        let mut result = false;
        let mut nodes = 0usize;

        loop {
            if depth < 0 {
                return if result {
                    Outcome::Captured
                } else {
                    Outcome::Escapes
                };
            }
            let d = depth as usize;
            // Too deep: call it captured.
            if d + 1 >= stack_size {
                result = true;
                depth -= 1;
                continue;
            }
            if nodes >= NODE_BUDGET {
                return Outcome::GaveUp;
            }
            let defender_to_move = d.is_multiple_of(2) == defender_first;
            let ko_ignored = d == 0 && defender_first;
            let pos: &Board = if d == 0 { root } else { &boards[d - 1] };

            match frames[d].cur {
                None => {
                    let libs = if pos.in_atari(loc) {
                        1
                    } else {
                        pos.liberties_up_to(loc, 3)
                    };
                    let decided = if defender_to_move {
                        // Two liberties is an escape; so is a ko the attacker left behind
                        // (a ladder that needs a ko is not a ladder, and this stops cycles).
                        (libs >= 2 || (!ko_ignored && pos.ko().is_some())).then_some(false)
                    } else if libs <= 1 {
                        Some(true)
                    } else if libs >= 3 {
                        Some(false)
                    } else {
                        None
                    };
                    let start = frames[d].start;
                    let decided = decided.or_else(|| {
                        if defender_to_move {
                            lists.defender_moves(pos, loc, defender, start)
                        } else {
                            lists.attacker_moves(pos, loc, defender, start)
                        }
                    });
                    if let Some(v) = decided {
                        result = v;
                        depth -= 1;
                        continue;
                    }
                    frames[d].len = lists.buf.len() - start;
                    frames[d].cur = Some(0);
                }
                Some(cur) => {
                    // The side to move found a move that wins for it.
                    if defender_to_move != result {
                        depth -= 1;
                        continue;
                    }
                    frames[d].cur = Some(cur + 1);
                }
            }

            let frame = frames[d];
            let cur = frame.cur.unwrap_or(0);
            if cur >= frame.len {
                // Every move fails for the side to move.
                result = defender_to_move;
                depth -= 1;
                continue;
            }
            let mv = Move::Play(lists.buf[frame.start + cur]);
            let p = if defender_to_move { defender } else { attacker };
            let legal = if ko_ignored {
                pos.check_move_ignoring_ko(mv, p, false).is_ok()
            } else {
                pos.is_legal(mv, p, false)
            };
            if !legal {
                // Count it as a failed move and try the next one at this level.
                result = defender_to_move;
                continue;
            }
            // The position after this move goes to boards[d].
            if boards.len() <= d {
                let copy = pos.clone();
                boards.push(copy);
            } else if d == 0 {
                boards[0].clone_from(root);
            } else {
                let (before, after) = boards.split_at_mut(d);
                after[0].clone_from(&before[d - 1]);
            }
            boards[d].play(mv, p);
            nodes += 1;
            depth += 1;
            frames[d + 1] = Frame {
                start: frame.start + frame.len,
                ..Frame::FRESH
            };
        }
    }
}

impl Lists {
    /// Lists the defender's moves (captures of adjacent chains in atari, then its own last
    /// liberty) at `start`, or decides the node at once from bounds on the liberties the
    /// last move listed would give.
    fn defender_moves(
        &mut self,
        b: &Board,
        loc: Loc,
        defender: Player,
        start: usize,
    ) -> Option<bool> {
        self.buf.truncate(start);
        self.chains_seen.clear();
        let attacker = defender.opp();
        for s in b.chain(loc) {
            for n in b.neighbours(s) {
                if b.stone(n) == Some(attacker)
                    && b.in_atari(n)
                    && !self.chains_seen.iter().any(|&c| b.same_chain(c, n))
                {
                    push_liberties(b, n, &mut self.buf, start);
                    self.chains_seen.push(n);
                }
            }
        }
        push_liberties(b, loc, &mut self.buf, start);
        let len = self.buf.len() - start;
        // The bounds are taken at the chain's own liberty, the one move certain to join
        // the chain. KataGo takes them at the last move listed, which is a capture when the
        // liberty is also a capturing point; that depends on its chain order, so it can
        // differ between mirror images of one position, and it may call an escape for a
        // capture elsewhere that does not join the chain.
        let lib = b.atari_liberty(loc)?;
        let (lower, upper) = liberty_bounds_after_play(b, lib, defender);
        if lower >= 3 {
            return Some(false);
        }
        if len == 1 && upper <= 1 {
            return Some(true);
        }
        None
    }

    /// Lists the attacker's moves (the two liberties, the more promising first) at `start`,
    /// or decides the node at once.
    fn attacker_moves(
        &mut self,
        b: &Board,
        loc: Loc,
        defender: Player,
        start: usize,
    ) -> Option<bool> {
        self.buf.truncate(start);
        push_liberties(b, loc, &mut self.buf, start);
        let [l0, l1] = match self.buf[start..] {
            [a, c] => [a, c],
            // Not two liberties: nothing to try (cannot happen after the base cases).
            _ => {
                self.buf.truncate(start);
                return None;
            }
        };
        let attacker = defender.opp();
        let imm0 = empty_neighbours(b, l0);
        let imm1 = empty_neighbours(b, l1);

        // Both liberties are ko mouths the defender cannot usefully fill and it has nothing
        // to capture: it dies to a double ko, whatever its threats.
        if imm0 == 0
            && imm1 == 0
            && b.ko_capture_point(l0, attacker).is_some()
            && b.ko_capture_point(l1, attacker).is_some()
            && liberties_after_play(b, l0, defender, 3) <= 2
            && liberties_after_play(b, l1, defender, 3) <= 2
            && !has_liberty_gaining_capture(b, loc)
        {
            return Some(true);
        }

        // If the liberties are not adjacent, filling one does not touch the other, so an
        // escape there with 3 empty neighbours is certain.
        if !adjacent(b, l0, l1) {
            if imm0 >= 3 && imm1 >= 3 {
                return Some(false);
            } else if imm0 >= 3 {
                self.buf.truncate(start + 1);
                return None;
            } else if imm1 >= 3 {
                self.buf.truncate(start);
                self.buf.push(l1);
                return None;
            }
        }
        // Try first the liberty where the defender would gain least by extending.
        let score0 = imm0 * 2 + connection_liberties_x2(b, l0, defender);
        let score1 = imm1 * 2 + connection_liberties_x2(b, l1, defender);
        if score1 > score0 {
            self.buf[start] = l1;
            self.buf[start + 1] = l0;
        }
        None
    }
}

/// Appends the liberties of the chain through `loc` to `buf`, skipping points already in
/// `buf[from..]`.
fn push_liberties(b: &Board, loc: Loc, buf: &mut Vec<Loc>, from: usize) {
    for s in b.chain(loc) {
        for n in b.neighbours(s) {
            if b.is_empty_at(n) && !buf[from..].contains(&n) {
                buf.push(n);
            }
        }
    }
}

/// Number of empty points next to `loc`.
fn empty_neighbours(b: &Board, loc: Loc) -> i32 {
    b.neighbours(loc).filter(|&n| b.is_empty_at(n)).count() as i32
}

/// True if two points are orthogonal neighbours.
fn adjacent(b: &Board, a: Loc, c: Loc) -> bool {
    b.neighbours(a).any(|n| n == c)
}

/// True if a stone of the chain through `loc` touches an opposing chain in atari.
fn has_liberty_gaining_capture(b: &Board, loc: Loc) -> bool {
    let Some(p) = b.stone(loc) else {
        return false;
    };
    b.chain(loc).any(|s| {
        b.neighbours(s)
            .any(|n| b.stone(n) == Some(p.opp()) && b.in_atari(n))
    })
}

/// Cheap bounds on the liberties of a `pla` stone played at `loc`, counting each
/// neighbour direction separately (KataGo's `getBoundNumLibertiesAfterPlay`). Callers
/// only compare the lower bound with 3 and the upper bound with 1, so friendly chains'
/// liberties are counted up to 4.
fn liberty_bounds_after_play(b: &Board, loc: Loc, pla: Player) -> (i32, i32) {
    let (mut empty, mut caps, mut cap_stones, mut conn_sum, mut conn_max) = (0, 0, 0, 0, 0);
    for n in b.neighbours(loc) {
        match b.stone(n) {
            None => empty += 1,
            Some(p) if p == pla => {
                let conn = b.liberties_up_to(n, 4) as i32 - 1;
                conn_sum += conn;
                conn_max = conn_max.max(conn);
            }
            Some(_) => {
                if b.in_atari(n) {
                    caps += 1;
                    cap_stones += b.chain_len(n) as i32;
                }
            }
        }
    }
    (caps + conn_max.max(empty), empty + cap_stones + conn_sum)
}

/// Liberties a `pla` stone at `loc` would have after captures and connections, counted
/// up to `max` (KataGo's `getNumLibertiesAfterPlay`).
fn liberties_after_play(b: &Board, loc: Loc, pla: Player, max: usize) -> usize {
    const CAP: usize = 8;
    let max = max.min(CAP);
    let mut libs = [loc; CAP];
    let mut n = 0;
    let mut captured = [loc; 4];
    let mut ncap = 0;
    for adj in b.neighbours(loc) {
        match b.stone(adj) {
            None => {}
            Some(p) if p != pla && b.in_atari(adj) => {
                if !captured[..ncap].iter().any(|&c| b.same_chain(c, adj)) {
                    captured[ncap] = adj;
                    ncap += 1;
                }
            }
            _ => continue,
        }
        // An empty neighbour, or a stone that the move captures.
        libs[n] = adj;
        n += 1;
        if n >= max {
            return max;
        }
    }
    let would_be_empty = |q: Loc| match b.stone(q) {
        None => true,
        Some(p) => p != pla && captured[..ncap].iter().any(|&c| b.same_chain(c, q)),
    };
    let mut joined = [loc; 4];
    let mut njoined = 0;
    for adj in b.neighbours(loc) {
        if b.stone(adj) != Some(pla) || joined[..njoined].iter().any(|&c| b.same_chain(c, adj)) {
            continue;
        }
        joined[njoined] = adj;
        njoined += 1;
        for s in b.chain(adj) {
            for q in b.neighbours(s) {
                if q != loc && would_be_empty(q) && !libs[..n].contains(&q) {
                    libs[n] = q;
                    n += 1;
                    if n >= max {
                        return max;
                    }
                }
            }
        }
    }
    n
}

/// Twice the liberties beyond 1.5 of the `pla` chains next to `loc`, summed per direction:
/// a move-ordering heuristic (KataGo's `countHeuristicConnectionLibertiesX2`).
fn connection_liberties_x2(b: &Board, loc: Loc, pla: Player) -> i32 {
    b.neighbours(loc)
        .filter(|&n| b.stone(n) == Some(pla))
        .map(|n| b.liberties(n) as i32)
        .filter(|&l| l > 1)
        .map(|l| l * 2 - 3)
        .sum()
}
