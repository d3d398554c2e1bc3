//! Small point helpers the rules crate does not need: per-point maps, diagonals,
//! distances and bounded liberty lists.

use tengen_rules::{Board, BoardSize, Loc, Player, MAX_SIZE};

/// Length of a map indexed by [`Loc::index`] (the rules crate's padded layout).
pub const PADDED: usize = (MAX_SIZE + 1) * (MAX_SIZE + 2) + 1;

/// A short list of points (liberties, candidate moves), kept on the stack.
pub type Points<const N: usize> = heapless::Vec<Loc, N>;

/// Pushes `l` unless it is already there or the list is full.
#[inline]
pub fn push_unique<const N: usize>(list: &mut Points<N>, l: Loc) {
    if !list.contains(&l) {
        let _ = list.push(l);
    }
}

/// The distinct liberties of the chain through `at`, at most `N` of them.
pub fn liberties<const N: usize>(b: &Board, at: Loc) -> Points<N> {
    let mut out = Points::new();
    for s in b.chain(at) {
        for n in b.neighbours(s) {
            if b.is_empty_at(n) {
                push_unique(&mut out, n);
                if out.is_full() {
                    return out;
                }
            }
        }
    }
    out
}

/// One stone of each distinct chain of `colour` next to the chain through `at`.
pub fn adjacent_chains<const N: usize>(b: &Board, at: Loc, colour: Player) -> Points<N> {
    let mut out: Points<N> = Points::new();
    for s in b.chain(at) {
        for n in b.neighbours(s) {
            if b.stone(n) == Some(colour) && !out.iter().any(|&o| b.same_chain(o, n)) {
                if out.is_full() {
                    return out;
                }
                let _ = out.push(n);
            }
        }
    }
    out
}

/// The on-board diagonal neighbours of a point.
pub fn diagonals(size: BoardSize, l: Loc) -> impl Iterator<Item = Loc> {
    let (x, y) = size.xy(l);
    [(-1i32, -1i32), (1, -1), (-1, 1), (1, 1)]
        .into_iter()
        .filter_map(move |(dx, dy)| {
            let (nx, ny) = (x as i32 + dx, y as i32 + dy);
            (nx >= 0 && ny >= 0)
                .then(|| size.loc(nx as usize, ny as usize))
                .flatten()
        })
}

/// Distance from the nearest edge (0 on the first line).
pub fn edge_distance(size: BoardSize, l: Loc) -> usize {
    let (x, y) = size.xy(l);
    x.min(y)
        .min(size.width() - 1 - x)
        .min(size.height() - 1 - y)
}

/// Manhattan distance between two points.
pub fn manhattan(size: BoardSize, a: Loc, b: Loc) -> usize {
    let (ax, ay) = size.xy(a);
    let (bx, by) = size.xy(b);
    ax.abs_diff(bx) + ay.abs_diff(by)
}

/// A value per point, indexed by [`Loc::index`].
#[derive(Clone, Debug)]
pub struct PointMap<T>(Vec<T>);

impl<T: Clone> PointMap<T> {
    /// A map with every point set to `v`.
    pub fn new(v: T) -> Self {
        PointMap(vec![v; PADDED])
    }

    /// Sets every point to `v`, keeping the allocation.
    pub fn fill(&mut self, v: T) {
        self.0.fill(v);
    }
}

impl<T> std::ops::Index<Loc> for PointMap<T> {
    type Output = T;
    #[inline]
    fn index(&self, l: Loc) -> &T {
        &self.0[l.index()]
    }
}

impl<T> std::ops::IndexMut<Loc> for PointMap<T> {
    #[inline]
    fn index_mut(&mut self, l: Loc) -> &mut T {
        &mut self.0[l.index()]
    }
}
