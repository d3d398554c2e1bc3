//! Dragons: worms joined by connections the opponent cannot cut, their eye spaces,
//! and a life-and-death estimate (alive, weak, critical, dead, seki), with
//! liberty counting for capturing races between eyeless groups.

use std::collections::HashMap;

use tengen_rules::{Board, Loc, Move, Player};

use crate::points::{diagonals, liberties, PointMap, Points};
use crate::worms::Worms;

/// What the life-and-death estimate says of a dragon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Two eyes, or wins its capturing race.
    Alive,
    /// Not two eyes yet, but room to run or make them.
    Weak,
    /// Lives if its owner moves first at the key point, dies otherwise.
    Critical,
    /// Cannot make two eyes nor escape.
    Dead,
    /// Lives in seki with a neighbour: neither side can approach.
    Seki,
}

/// A group of worms that live or die together.
#[derive(Clone, Debug, PartialEq)]
pub struct Dragon {
    /// Its colour.
    pub colour: Player,
    /// Indices of its worms in [`Worms::list`].
    pub worms: Vec<usize>,
    /// Stones in it.
    pub stones: u16,
    /// Distinct liberties, counted up to 32.
    pub liberties: u16,
    /// Eyes it surely has.
    pub eyes_min: u8,
    /// Eyes it can have if it moves first.
    pub eyes_max: u8,
    /// Points of its eye spaces.
    pub eye_space: u16,
    /// Empty points within reach it could run into.
    pub escape: u16,
    /// The estimate.
    pub status: Status,
    /// Where the status is decided (a vital eye point, a liberty in a race).
    pub key_point: Option<Loc>,
    /// Its status comes from a capturing race with a neighbour.
    pub in_race: bool,
}

impl Dragon {
    /// Rough worth in points of the dragon living rather than dying.
    pub fn value(&self) -> f32 {
        2.0 * self.stones as f32 + 2.0 * self.eye_space as f32
    }
}

/// The dragons of a position, with each worm's dragon and each eye-space point's owner.
#[derive(Clone, Debug)]
pub struct Dragons {
    /// The dragons.
    pub list: Vec<Dragon>,
    /// Dragon of each worm (`u16::MAX` for tactically dead worms).
    pub of_worm: Vec<u16>,
    /// Dragon whose eye space each point is part of (`u16::MAX` for none).
    pub eye_owner: PointMap<u16>,
    /// Dragon bordering each closed region of one colour, up to a quarter of the board
    /// (`u16::MAX` for none).
    pub area_owner: PointMap<u16>,
}

const NONE: u16 = u16::MAX;

/// Largest region counted point by point as one dragon's eyes (a small enclosed area).
const MAX_EYE_SPACE: usize = 12;

struct UnionFind(Vec<usize>);

impl UnionFind {
    fn find(&mut self, mut i: usize) -> usize {
        while self.0[i] != i {
            self.0[i] = self.0[self.0[i]];
            i = self.0[i];
        }
        i
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// True if `pla` playing at `l` is illegal or leaves its stone in atari without capturing.
pub fn is_self_atari(b: &Board, l: Loc, pla: Player) -> bool {
    if !b.is_legal(Move::Play(l), pla, false) {
        return true;
    }
    if b.would_capture(l, pla) {
        return false;
    }
    let mut libs: Points<3> = Points::new();
    for n in b.neighbours(l) {
        if b.is_empty_at(n) {
            crate::points::push_unique(&mut libs, n);
        } else if b.stone(n) == Some(pla) {
            for x in liberties::<3>(b, n) {
                if x != l {
                    crate::points::push_unique(&mut libs, x);
                }
            }
        }
        if libs.len() >= 2 {
            return false;
        }
    }
    libs.len() < 2
}

/// One region of empty points and dead stones bordered by a single colour.
struct EyeRegion {
    colour: Player,
    points: Vec<Loc>,
    dragon: usize,
}

impl Dragons {
    /// Builds the dragons of `b` from its worms; `dead_worm` marks worms already lost.
    pub fn new(b: &Board, worms: &Worms, dead_worm: &[bool]) -> Dragons {
        let size = b.size();
        let nw = worms.list.len();
        let mut uf = UnionFind((0..nw).collect());
        let alive = |w: Option<usize>| w.filter(|&w| !dead_worm[w]);
        // Connections through one empty point: shared twice, or a point the opponent
        // cannot play without being captured.
        let mut shared: HashMap<(usize, usize), u8> = HashMap::new();
        for l in size.points() {
            if !b.is_empty_at(l) {
                continue;
            }
            for colour in Player::BOTH {
                let mut adj: Points<4> = Points::new();
                for n in b.neighbours(l) {
                    if b.stone(n) == Some(colour) {
                        if let Some(w) = alive(worms.at(n)) {
                            if !adj.iter().any(|&o| worms.at(o) == Some(w)) {
                                let _ = adj.push(n);
                            }
                        }
                    }
                }
                if adj.len() < 2 {
                    continue;
                }
                let ids: Points<4> = adj.clone();
                if is_self_atari(b, l, colour.opp()) {
                    for w in ids.windows(2) {
                        let (a, c) = (worms.at(w[0]), worms.at(w[1]));
                        if let (Some(a), Some(c)) = (a, c) {
                            uf.union(a, c);
                        }
                    }
                } else {
                    for i in 0..ids.len() {
                        for j in i + 1..ids.len() {
                            if let (Some(a), Some(c)) = (worms.at(ids[i]), worms.at(ids[j])) {
                                *shared.entry((a.min(c), a.max(c))).or_default() += 1;
                            }
                        }
                    }
                }
            }
        }
        for ((a, c), n) in shared {
            if n >= 2 {
                uf.union(a, c);
            }
        }
        // Diagonal stones with both crossing points empty: miai.
        for l in size.points() {
            let Some(colour) = b.stone(l) else { continue };
            let Some(w) = alive(worms.at(l)) else {
                continue;
            };
            let (x, y) = size.xy(l);
            for d in diagonals(size, l) {
                if b.stone(d) != Some(colour) {
                    continue;
                }
                let Some(v) = alive(worms.at(d)) else {
                    continue;
                };
                let (dx, dy) = size.xy(d);
                let c1 = size.loc(dx, y);
                let c2 = size.loc(x, dy);
                if let (Some(c1), Some(c2)) = (c1, c2) {
                    if b.is_empty_at(c1) && b.is_empty_at(c2) {
                        uf.union(w, v);
                    }
                }
            }
        }

        // Eye regions: empty points and dead stones bordered by one colour only.
        let mut seen = PointMap::new(false);
        let mut regions = Vec::new();
        let mut stack = Vec::new();
        for start in size.points() {
            let open = |l: Loc| b.is_empty_at(l) || worms.at(l).is_some_and(|w| dead_worm[w]);
            if seen[start] || !open(start) {
                continue;
            }
            let mut points = Vec::new();
            let mut border = [false; 2];
            let mut border_worm = None;
            seen[start] = true;
            stack.push(start);
            while let Some(p) = stack.pop() {
                points.push(p);
                for n in b.neighbours(p) {
                    if open(n) {
                        if !seen[n] {
                            seen[n] = true;
                            stack.push(n);
                        }
                    } else if let (Some(c), Some(w)) = (b.stone(n), worms.at(n)) {
                        border[c.index()] = true;
                        border_worm.get_or_insert(w);
                    }
                }
            }
            let colour = match border {
                [true, false] => Player::Black,
                [false, true] => Player::White,
                _ => continue,
            };
            // Every bordering worm shares the region: they live together.
            let first = border_worm.expect("a bordered region has a worm");
            for &p in &points {
                for n in b.neighbours(p) {
                    if let Some(w) = alive(worms.at(n)) {
                        if worms.list[w].colour == colour {
                            uf.union(first, w);
                        }
                    }
                }
            }
            regions.push(EyeRegion {
                colour,
                points,
                dragon: first,
            });
        }

        // Number the dragons.
        let mut of_worm = vec![NONE; nw];
        let mut list: Vec<Dragon> = Vec::new();
        let mut root_id: HashMap<usize, u16> = HashMap::new();
        for (w, worm) in worms.list.iter().enumerate() {
            if dead_worm[w] {
                continue;
            }
            let r = uf.find(w);
            let id = *root_id.entry(r).or_insert_with(|| {
                list.push(Dragon {
                    colour: worm.colour,
                    worms: Vec::new(),
                    stones: 0,
                    liberties: 0,
                    eyes_min: 0,
                    eyes_max: 0,
                    eye_space: 0,
                    escape: 0,
                    status: Status::Dead,
                    key_point: None,
                    in_race: false,
                });
                (list.len() - 1) as u16
            });
            of_worm[w] = id;
            let d = &mut list[id as usize];
            d.worms.push(w);
            d.stones += worm.size;
        }

        let mut eye_owner = PointMap::new(NONE);
        let mut area_owner = PointMap::new(NONE);
        let mut vital: Vec<Option<Loc>> = vec![None; list.len()];
        for r in &regions {
            let root = uf.find(r.dragon);
            let Some(&id) = root_id.get(&root) else {
                continue;
            };
            let (lo, hi, v) = eye_value(b, &r.points, r.colour);
            let d = &mut list[id as usize];
            d.eyes_min = d.eyes_min.saturating_add(lo);
            d.eyes_max = d.eyes_max.saturating_add(hi);
            d.eye_space = d.eye_space.saturating_add(r.points.len() as u16);
            if hi > lo && vital[id as usize].is_none() {
                vital[id as usize] = v;
            }
            // A large area bordered by one colour gives two eyes, but the opponent can
            // still live or reduce inside it: its points are left to the influence.
            // Larger areas are open to invasion: their points are left to the influence.
            let closed = r.points.len() <= size.area() / 4;
            for &p in &r.points {
                if closed {
                    area_owner[p] = id;
                }
                if r.points.len() <= MAX_EYE_SPACE {
                    eye_owner[p] = id;
                }
            }
        }

        // Liberties and room to run.
        let mut libsets: Vec<Vec<Loc>> = vec![Vec::new(); list.len()];
        for (id, d) in list.iter_mut().enumerate() {
            let mut libs = Vec::new();
            for &w in &d.worms {
                for l in liberties::<32>(b, worms.list[w].origin) {
                    if !libs.contains(&l) {
                        libs.push(l);
                    }
                }
            }
            d.liberties = libs.len() as u16;
            d.escape = escape_room(b, &libs, d.colour, &eye_owner);
            libsets[id] = libs;
        }

        for (id, d) in list.iter_mut().enumerate() {
            d.status = if d.eyes_min >= 2 {
                Status::Alive
            } else if d.eyes_max >= 2 {
                d.key_point = vital[id];
                Status::Critical
            } else if d.escape >= 8 || (d.eyes_max == 1 && d.escape >= 5) {
                Status::Weak
            } else {
                Status::Dead
            };
        }
        races(b, &mut list, &libsets, &eye_owner);
        Dragons {
            list,
            of_worm,
            eye_owner,
            area_owner,
        }
    }

    /// The dragon of the stone at `l`, if it is part of one.
    pub fn at(&self, worms: &Worms, l: Loc) -> Option<usize> {
        let w = worms.at(l)?;
        let d = self.of_worm[w];
        (d != NONE).then_some(d as usize)
    }

    /// The dragon bordering the closed one-colour region `l` is in.
    pub fn area_of(&self, l: Loc) -> Option<usize> {
        let d = self.area_owner[l];
        (d != NONE).then_some(d as usize)
    }

    /// The dragon whose eye space `l` is in.
    pub fn eye_of(&self, l: Loc) -> Option<usize> {
        let d = self.eye_owner[l];
        (d != NONE).then_some(d as usize)
    }
}

/// Room to run: empty points within three steps of the liberties (outside the
/// dragon's own eyes), in halves: a point touching opponent stones counts half.
fn escape_room(b: &Board, libs: &[Loc], colour: Player, eye_owner: &PointMap<u16>) -> u16 {
    let mut seen: Vec<Loc> = Vec::new();
    let mut frontier: Vec<Loc> = libs
        .iter()
        .copied()
        .filter(|&l| eye_owner[l] == NONE)
        .collect();
    let mut halves = 0u16;
    for step in 0..3 {
        let mut next = Vec::new();
        for &p in &frontier {
            if seen.contains(&p) {
                continue;
            }
            seen.push(p);
            let touches_enemy = b.neighbours(p).any(|n| b.stone(n) == Some(colour.opp()));
            halves += if touches_enemy { 1 } else { 2 };
            if step < 2 {
                for n in b.neighbours(p) {
                    if b.is_empty_at(n) && eye_owner[n] == NONE && !seen.contains(&n) {
                        next.push(n);
                    }
                }
            }
        }
        frontier = next;
    }
    halves / 2
}

/// Eyes an eye space gives (surely, at best) and its vital point.
fn eye_value(b: &Board, pts: &[Loc], colour: Player) -> (u8, u8, Option<Loc>) {
    let size = b.size();
    let n = pts.len();
    if n >= 7 {
        return (2, 2, None);
    }
    let degree = |p: Loc| b.neighbours(p).filter(|q| pts.contains(q)).count();
    let empty = |p: Loc| b.is_empty_at(p);
    match n {
        1 => {
            let p = pts[0];
            let edge = crate::points::edge_distance(size, p) == 0;
            let bad = diagonals(size, p)
                .filter(|&d| b.stone(d) == Some(colour.opp()))
                .count();
            if (edge && bad >= 1) || bad >= 2 {
                (0, 0, None)
            } else {
                (1, 1, None)
            }
        }
        2 => (1, 1, None),
        3 => {
            let mid = pts.iter().copied().find(|&p| degree(p) == 2);
            match mid {
                Some(m) if empty(m) => (1, 2, Some(m)),
                _ => (1, 1, None),
            }
        }
        4..=6 => {
            let hub = pts
                .iter()
                .copied()
                .max_by_key(|&p| degree(p))
                .unwrap_or(pts[0]);
            let square = pts.iter().any(|&p| {
                let (x, y) = size.xy(p);
                [(1, 0), (0, 1), (1, 1)]
                    .iter()
                    .all(|&(dx, dy)| size.loc(x + dx, y + dy).is_some_and(|q| pts.contains(&q)))
            });
            let max_deg = degree(hub);
            let shape = match (n, square, max_deg) {
                (4, true, _) => (1, 1, None),
                (4, false, 3) => (1, 2, Some(hub)),
                (5, false, 4) => (1, 2, Some(hub)),
                (5, true, _) => (1, 2, Some(hub)),
                (6, true, 3) if pts.iter().filter(|&&p| degree(p) == 3).count() == 1 => {
                    (1, 2, Some(hub))
                }
                _ => (2, 2, None),
            };
            match shape {
                (1, 2, Some(v)) if !empty(v) => (1, 1, None),
                s => s,
            }
        }
        _ => (0, 0, None),
    }
}

/// Capturing races and seki between neighbouring eyeless dragons.
fn races(b: &Board, list: &mut [Dragon], libs: &[Vec<Loc>], eye_owner: &PointMap<u16>) {
    let stuck = |d: &Dragon| d.eyes_max < 2 && d.escape < 8;
    for a in 0..list.len() {
        if list[a].status != Status::Dead {
            continue;
        }
        for c in 0..list.len() {
            if list[c].colour == list[a].colour || !stuck(&list[c]) {
                continue;
            }
            let shared: Vec<Loc> = libs[a]
                .iter()
                .copied()
                .filter(|l| libs[c].contains(l))
                .collect();
            // Races are fought over shared liberties; dragons that only touch are left alone.
            if shared.is_empty() {
                continue;
            }
            let own = |x: usize| libs[x].iter().filter(|l| !shared.contains(l)).count();
            let in_eyes = |x: usize| {
                libs[x]
                    .iter()
                    .filter(|l| !shared.contains(l))
                    .all(|&l| eye_owner[l] == x as u16)
            };
            let (ea, ec) = (list[a].eyes_min, list[c].eyes_min);
            let seki = in_eyes(a)
                && in_eyes(c)
                && shared.iter().all(|&l| {
                    is_self_atari(b, l, list[a].colour) && is_self_atari(b, l, list[c].colour)
                });
            if seki {
                list[a].status = Status::Seki;
                list[c].status = Status::Seki;
                break;
            }
            let bonus = |mine: u8, theirs: u8| {
                if mine > 0 && theirs == 0 {
                    shared.len()
                } else {
                    0
                }
            };
            let la = own(a) + bonus(ea, ec);
            let lc = own(c) + bonus(ec, ea);
            let fill = |x: usize| {
                libs[x]
                    .iter()
                    .copied()
                    .find(|l| !shared.contains(l))
                    .or(shared.first().copied())
            };
            list[a].in_race = true;
            list[c].in_race = true;
            if la > lc {
                list[a].status = Status::Alive;
                list[c].status = Status::Dead;
            } else if la == lc {
                list[a].status = Status::Critical;
                list[a].key_point = fill(c);
                list[c].status = Status::Critical;
                list[c].key_point = fill(a);
            } else {
                list[c].status = Status::Alive;
            }
            break;
        }
    }
}
