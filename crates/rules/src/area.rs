//! Who owns each point: Benson's pass-alive groups and territory, big territories,
//! and the independent-life regions that KataGo's seki and tax rules score with.
//!
//! These follow KataGo's `calculateArea` / `calculateIndependentLifeArea` exactly,
//! including the adjustment for multi-stone suicide: when suicide is legal, every
//! point of an enclosed region (opponent stones too) must touch a chain for the
//! region to count as one of its vital regions; otherwise only the empty points must.

use crate::board::Board;
use crate::geometry::{BoardSize, Loc, MAX_AREA, MAX_ARR};
use crate::player::Player;

const NONE: u8 = 0;
const EMPTY: u8 = 0;
const WALL: u8 = 3;

/// An owner (or none) for every point of a board.
#[derive(Clone)]
pub struct AreaMap {
    size: BoardSize,
    cells: [u8; MAX_ARR],
}

impl AreaMap {
    fn new(size: BoardSize) -> Self {
        AreaMap {
            size,
            cells: [NONE; MAX_ARR],
        }
    }

    /// The owner of a point, if any.
    #[inline]
    pub fn get(&self, loc: Loc) -> Option<Player> {
        Player::from_cell(self.cells[loc.index()])
    }

    /// Sets the owner of a point.
    #[inline]
    pub fn set(&mut self, loc: Loc, owner: Option<Player>) {
        self.cells[loc.index()] = owner.map_or(NONE, Player::cell);
    }

    /// The board size this map covers.
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// Number of points owned by `player`.
    pub fn count(&self, player: Player) -> usize {
        self.size
            .points()
            .filter(|l| self.cells[l.index()] == player.cell())
            .count()
    }

    /// White's points minus Black's points.
    pub fn white_minus_black(&self) -> i32 {
        self.count(Player::White) as i32 - self.count(Player::Black) as i32
    }

    /// Text rows, top first: `X` Black, `O` White, `.` nobody.
    pub fn rows(&self) -> Vec<String> {
        self.size.text_rows(|l| self.get(l))
    }
}

impl std::fmt::Debug for AreaMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in self.rows() {
            writeln!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Which points [`Board::area`] counts beyond pass-alive stones and pass-alive territory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AreaOptions {
    /// Also count every remaining stone for its colour (unless inside the other side's pass-alive territory).
    pub non_pass_alive_stones: bool,
    /// Also count empty regions bordered only by one side's pass-alive stones.
    pub safe_big_territories: bool,
    /// Also count empty regions bordered only by one side's stones, pass-alive or not.
    pub unsafe_big_territories: bool,
    /// Compute pass-aliveness as if multi-stone suicide were legal.
    pub multi_stone_suicide: bool,
}

impl AreaOptions {
    /// Pure Benson: pass-alive stones and pass-alive territory only.
    pub fn pass_alive(multi_stone_suicide: bool) -> Self {
        AreaOptions {
            multi_stone_suicide,
            ..Default::default()
        }
    }

    /// Everything: the area-scoring count of a finished game.
    pub fn full(multi_stone_suicide: bool) -> Self {
        AreaOptions {
            non_pass_alive_stones: true,
            safe_big_territories: true,
            unsafe_big_territories: true,
            multi_stone_suicide,
        }
    }
}

impl Board {
    /// The area each side owns, by pass-aliveness and the extra options.
    pub fn area(&self, opts: AreaOptions) -> AreaMap {
        let mut out = AreaMap::new(self.size());
        for p in Player::BOTH {
            area_for(
                self,
                p,
                opts.safe_big_territories,
                opts.unsafe_big_territories,
                opts.multi_stone_suicide,
                &mut out,
            );
        }
        if opts.non_pass_alive_stones {
            for l in self.size().points() {
                let i = l.index();
                if out.cells[i] == NONE {
                    out.cells[i] = self.cell(i);
                }
            }
        }
        out
    }

    /// The full area with seki regions taken out: a region counts only if it
    /// touches no dame and none of its owner's stones is in atari. Returns the map
    /// and White's minus Black's number of independent-life regions (for tax ALL).
    /// `keep_territories` keeps the territory (and dead stones) of seki regions,
    /// `keep_stones` keeps their stones.
    pub fn independent_life_area(
        &self,
        keep_territories: bool,
        keep_stones: bool,
        multi_stone_suicide: bool,
    ) -> (AreaMap, i32) {
        let size = self.size();
        let basic = self.area(AreaOptions::full(multi_stone_suicide));
        let mut result = AreaMap::new(size);

        // Regions (connected by owner) touching dame or with an owner's stone in atari are seki.
        let mut seki = [false; MAX_ARR];
        let mut queue = [0u16; MAX_AREA];
        for l in size.points() {
            let i = l.index();
            let owner = basic.cells[i];
            if owner == NONE || seki[i] {
                continue;
            }
            let in_atari = self.cell(i) == owner && self.in_atari(l);
            let touches_dame = self
                .adj(i)
                .into_iter()
                .any(|a| self.cell(a) == EMPTY && basic.cells[a] == NONE);
            if in_atari || touches_dame {
                flood(self, &basic, i, owner, &mut queue, |j| {
                    let fresh = !seki[j];
                    seki[j] = true;
                    fresh
                });
            }
        }

        let mut regions = 0i32;
        for l in size.points() {
            let i = l.index();
            let owner = basic.cells[i];
            if owner == NONE || seki[i] || result.cells[i] == owner {
                continue;
            }
            regions += if owner == Player::White.cell() { 1 } else { -1 };
            let cells = &mut result.cells;
            flood(self, &basic, i, owner, &mut queue, |j| {
                let fresh = cells[j] != owner;
                cells[j] = owner;
                fresh
            });
        }

        for l in size.points() {
            let i = l.index();
            let owner = basic.cells[i];
            if owner == NONE {
                continue;
            }
            let is_own_stone = owner == self.cell(i);
            if (keep_territories && !is_own_stone) || (keep_stones && is_own_stone) {
                result.cells[i] = owner;
            }
        }
        (result, regions)
    }
}

/// Visits the points connected to `start` that `basic` gives to `owner`;
/// `visit` marks a point and says whether it was new.
fn flood(
    board: &Board,
    basic: &AreaMap,
    start: usize,
    owner: u8,
    queue: &mut [u16; MAX_AREA],
    mut visit: impl FnMut(usize) -> bool,
) {
    visit(start);
    queue[0] = start as u16;
    let (mut head, mut tail) = (0, 1);
    while head < tail {
        let s = queue[head] as usize;
        head += 1;
        for a in board.adj(s) {
            if basic.cells[a] == owner && visit(a) {
                queue[tail] = a as u16;
                tail += 1;
            }
        }
    }
}

/// Benson's algorithm for one player, then the territory marks the options ask for.
fn area_for(
    board: &Board,
    pla: Player,
    safe_big: bool,
    unsafe_big: bool,
    multi_suicide: bool,
    result: &mut AreaMap,
) {
    let size = board.size();
    let p = pla.cell();
    let o = pla.opp().cell();

    // Maximal regions of empty-or-opponent points, each grown from an empty point.
    // Their points are stored contiguously in `members`.
    let mut region_of = [-1i16; MAX_ARR];
    let mut members = [0u16; MAX_AREA];
    let mut nmembers = 0usize;
    let mut region_start = [0u16; MAX_AREA + 1];
    // Chains the region is vital for: every (empty, or any under suicide) point touches them.
    let mut vital = [[0u16; 4]; MAX_AREA];
    let mut vital_len = [0u8; MAX_AREA];
    let mut internal = [0u8; MAX_AREA];
    let mut contains_opp = [false; MAX_AREA];
    let mut nregions = 0usize;
    let mut any_pla = false;

    let touches_chain = |l: usize, h: usize| {
        board
            .adj(l)
            .into_iter()
            .any(|a| board.cell(a) == p && board.head_of(a) == h)
    };

    for l in size.points() {
        let i = l.index();
        let c = board.cell(i);
        if c == p {
            any_pla = true;
        }
        if c != EMPTY || region_of[i] >= 0 {
            continue;
        }
        let r = nregions;
        nregions += 1;
        region_start[r] = nmembers as u16;
        for a in board.adj(i) {
            if board.cell(a) == p {
                let h = board.head_of(a) as u16;
                let len = vital_len[r] as usize;
                if !vital[r][..len].contains(&h) {
                    vital[r][len] = h;
                    vital_len[r] += 1;
                }
            }
        }
        region_of[i] = r as i16;
        members[nmembers] = i as u16;
        let mut head = nmembers;
        nmembers += 1;
        while head < nmembers {
            let s = members[head] as usize;
            head += 1;
            let cs = board.cell(s);
            if vital_len[r] > 0 && (multi_suicide || cs == EMPTY) {
                let mut keep = 0;
                for k in 0..vital_len[r] as usize {
                    let h = vital[r][k];
                    if touches_chain(s, h as usize) {
                        vital[r][keep] = h;
                        keep += 1;
                    }
                }
                vital_len[r] = keep as u8;
            }
            if internal[r] < 2 && !board.adj(s).into_iter().any(|a| board.cell(a) == p) {
                internal[r] += 1;
            }
            if cs == o {
                contains_opp[r] = true;
            }
            for a in board.adj(s) {
                let ca = board.cell(a);
                if (ca == EMPTY || ca == o) && region_of[a] < 0 {
                    region_of[a] = r as i16;
                    members[nmembers] = a as u16;
                    nmembers += 1;
                }
            }
        }
    }
    region_start[nregions] = nmembers as u16;

    // Benson's iteration: a chain with fewer than two vital regions is not pass-alive,
    // and no region touching such a chain stays vital for anyone.
    let mut heads = [0u16; MAX_AREA];
    let mut nheads = 0;
    let mut vital_count = [0i32; MAX_ARR];
    for l in size.points() {
        let i = l.index();
        if board.cell(i) == p && board.head_of(i) == i {
            heads[nheads] = i as u16;
            nheads += 1;
        }
    }
    for r in 0..nregions {
        for &h in &vital[r][..vital_len[r] as usize] {
            vital_count[h as usize] += 1;
        }
    }
    let mut killed = [false; MAX_AREA];
    let mut borders_dead = [false; MAX_AREA];
    loop {
        let mut changed = false;
        for k in 0..nheads {
            let h = heads[k] as usize;
            if killed[k] || vital_count[h] >= 2 {
                continue;
            }
            killed[k] = true;
            changed = true;
            let mut s = h;
            loop {
                for a in board.adj(s) {
                    let r = region_of[a];
                    if r >= 0 && !borders_dead[r as usize] {
                        let r = r as usize;
                        borders_dead[r] = true;
                        for &v in &vital[r][..vital_len[r] as usize] {
                            vital_count[v as usize] -= 1;
                        }
                    }
                }
                s = board.next_of(s);
                if s == h {
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }

    for k in 0..nheads {
        if killed[k] {
            continue;
        }
        let h = heads[k] as usize;
        let mut s = h;
        loop {
            result.cells[s] = p;
            s = board.next_of(s);
            if s == h {
                break;
            }
        }
    }

    if !any_pla {
        return;
    }
    for r in 0..nregions {
        let pts = &members[region_start[r] as usize..region_start[r + 1] as usize];
        let pass_alive_territory = internal[r] <= 1 && !borders_dead[r];
        let safe = safe_big && !contains_opp[r] && !borders_dead[r];
        if pass_alive_territory || safe {
            for &m in pts {
                result.cells[m as usize] = p;
            }
        } else if unsafe_big && !contains_opp[r] {
            // Never over an opponent's claim (its pass-alive territory may use these points).
            for &m in pts {
                if result.cells[m as usize] == NONE {
                    result.cells[m as usize] = p;
                }
            }
        }
    }
    debug_assert!(board.cell(0) == WALL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        let size = BoardSize::new(rows[0].len(), rows.len()).unwrap();
        Board::from_rows(size, rows).unwrap()
    }

    #[test]
    fn two_eyes_are_pass_alive() {
        let b = board(&[
            ".X.X.", //
            "XXXXX", //
            ".....", //
            ".....", //
            ".....",
        ]);
        let a = b.area(AreaOptions::pass_alive(false));
        assert_eq!(a.rows()[0], "XXXXX");
        assert_eq!(a.rows()[1], "XXXXX");
        assert_eq!(a.rows()[2], ".....");
    }

    #[test]
    fn one_eye_is_not() {
        let b = board(&[
            ".X...", //
            "XX...", //
            ".....", //
            ".....", //
            ".....",
        ]);
        let a = b.area(AreaOptions::pass_alive(false));
        assert_eq!(a.count(Player::Black), 0);
        let full = b.area(AreaOptions::full(false));
        assert_eq!(full.count(Player::Black), 25);
    }

    #[test]
    fn pass_alive_territory_with_one_interior_point() {
        // Black wall with two eyes; the big corner region has one point (A1) that no
        // black stone touches, which pass-alive territory allows.
        let b = board(&[
            ".X.X.", //
            "XXXXX", //
            "XX.XX", //
            "X..X.", //
            "...X.",
        ]);
        let a = b.area(AreaOptions::pass_alive(false));
        assert_eq!(a.rows(), vec!["XXXXX", "XXXXX", "XXXXX", "XXXXX", "XXXXX"]);
        // A white stone on the interior point is inside the territory and dead.
        let b2 = board(&[
            ".X.X.", //
            "XXXXX", //
            "XX.XX", //
            "X..X.", //
            "O..X.",
        ]);
        let a2 = b2.area(AreaOptions::pass_alive(false));
        assert_eq!(
            a2.get(b2.size().parse_loc("A1").unwrap()),
            Some(Player::Black)
        );
        // A second interior point makes the region not pass-alive territory.
        let b3 = board(&[
            ".X.X..", //
            "XXXXX.", //
            "XX.XX.", //
            "X..X..", //
            "...X..", //
            "...X..",
        ]);
        let a3 = b3.area(AreaOptions::pass_alive(false));
        assert_eq!(a3.get(b3.size().parse_loc("A1").unwrap()), None);
    }
}
