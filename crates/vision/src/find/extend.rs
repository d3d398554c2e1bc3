//! Growing a window line by line: a crowded 19x19 board can show clear lines only in a
//! corner, and a grid extrapolated from there ten lines out lands off the stones and lines
//! it should measure. Added one line at a time, each step refitted on the lines and stones
//! it now holds, the grid stays on the board while the added lines still show it, and
//! stops at the board's edge, past which no line and no stone lies.

use crate::filter::Plane;
use crate::homography::{Homography, Point};

use super::stones::{refit_on_stones, stone_centre};
use super::window::{
    against_wood, cell_wood, in_front, lattice, window_at, Shade, Support, Window, GROW_SAME_WOOD,
};
use super::{dist, refine_rect, shift, SIZES, STEPS};

/// How a line shows the grid: its lattice contrast per sample in the frame, and the share
/// of its samples in the frame.
#[derive(Clone, Copy, Debug)]
struct Showing {
    lattice: f64,
    in_frame: f64,
}

/// What the window's board looks like: its wood between the stones, and the grey at the
/// centre of its black and of its white stones (`None` for a colour it holds too few of).
struct Look {
    wood: f32,
    stones: [Option<f32>; 2],
}

impl Look {
    /// The look of the window of `n` lines from (0, 0) of `h`.
    fn of(img: &Plane, h: &Homography, n: i64) -> Option<Look> {
        let wood = cell_wood(
            img,
            h,
            (0..n - 1).flat_map(|c| (0..n - 1).map(move |r| (c, r))),
        )?;
        let mut greys: [Vec<f32>; 2] = [Vec::new(), Vec::new()];
        for c in 0..n {
            for r in 0..n {
                if let Some((shade, grey)) = stone_at(img, h, c, r) {
                    greys[shade as usize].push(grey);
                }
            }
        }
        let stones = greys.map(|mut g| {
            g.sort_by(f32::total_cmp);
            (g.len() >= MIN_LOOK_STONES).then(|| g[g.len() / 2])
        });
        Some(Look { wood, stones })
    }

    /// Whether a stone lies centred on intersection (c, r) of `h` and looks like the
    /// window's stones of its colour: past a board's edge a dark or lit band (its side, its
    /// shadow) reads as a row of stones on the wood, but not as the board's stones.
    fn stone(&self, img: &Plane, h: &Homography, c: i64, r: i64) -> bool {
        stone_at(img, h, c, r).is_some_and(|(shade, grey)| {
            self.stones[shade as usize].is_some_and(|like| {
                (against_wood(grey, self.wood) - against_wood(like, self.wood)).abs() <= STONE_MATCH
            })
        })
    }
}

/// The shade and centre grey of the stone centred on intersection (c, r) of `h`, whose
/// disc settles within `CENTRED` of the crossing.
fn stone_at(img: &Plane, h: &Homography, c: i64, r: i64) -> Option<(Shade, f32)> {
    let (x, y) = (c as f64, r as f64);
    let (p, q) = (h.apply([x, y])?, h.apply([x + 1.0, y + 1.0])?);
    let (centre, shade) = stone_centre(img, h, c, r)?;
    (dist(centre, p) <= CENTRED * dist(p, q) / 2f64.sqrt())
        .then(|| (shade, img.sample(centre[0], centre[1])))
}

/// A line is added when its lattice contrast, as a share of the window's own lines', plus
/// the share of its intersections holding stones reaches this: either alone or both in
/// part (a crowded line shows stones where it hides its printed line).
const SHOWS: f64 = 0.6;
/// A stone counts for a line when its centre lies within this many cells of the crossing.
const CENTRED: f64 = 0.25;
/// A colour's stones are compared with the window's when it holds at least this many.
const MIN_LOOK_STONES: usize = 3;
/// A stone on an added line differs from the window's of its colour by this share of the
/// wood's grey at most (a share of the stone's own grey would leave black stones a few grey
/// levels).
const STONE_MATCH: f32 = 0.2;
/// A line with fewer of its samples in the frame says nothing and is not added.
const IN_FRAME: f64 = 0.5;

/// One side of a rectangle of lines.
#[derive(Clone, Copy, Debug)]
enum Side {
    Left,
    Right,
    Top,
    Bottom,
}

impl Side {
    const ALL: [Side; 4] = [Side::Left, Side::Right, Side::Top, Side::Bottom];

    /// The axis the side moves along: 0 for columns, 1 for rows.
    fn axis(self) -> usize {
        match self {
            Side::Left | Side::Right => 0,
            Side::Top | Side::Bottom => 1,
        }
    }

    /// Whether the side moves out towards lower coordinates.
    fn low(self) -> bool {
        matches!(self, Side::Left | Side::Top)
    }
}

/// A rectangle of grid lines, inclusive: columns `lo[0]..=hi[0]`, rows `lo[1]..=hi[1]`.
#[derive(Clone, Copy, Debug)]
struct Rect {
    lo: [i64; 2],
    hi: [i64; 2],
}

impl Rect {
    /// Lines along axis `a`.
    fn lines(&self, a: usize) -> i64 {
        self.hi[a] - self.lo[a] + 1
    }

    /// The line one step out of side `s`.
    fn next(&self, s: Side) -> i64 {
        if s.low() {
            self.lo[s.axis()] - 1
        } else {
            self.hi[s.axis()] + 1
        }
    }

    /// The rectangle with side `s` moved one line out.
    fn grown(mut self, s: Side) -> Rect {
        let line = self.next(s);
        if s.low() {
            self.lo[s.axis()] = line;
        } else {
            self.hi[s.axis()] = line;
        }
        self
    }

    /// Columns and rows.
    fn dims(&self) -> [usize; 2] {
        [self.lines(0) as usize, self.lines(1) as usize]
    }
}

/// The window of the next size up holding `w`, grown a line at a time while the added lines
/// show the grid (see `SHOWS`) over the same wood, and then to a whole board on the sides
/// that show it best; `None` unless the lines that showed reach within one of a larger size.
pub(super) fn extend(w: &Window, support: &Support, img: &Plane) -> Option<Window> {
    let n = w.n as i64;
    let grower = Grower {
        support,
        img,
        own: own_lattice(&w.h, support, img, n)?,
        look: Look::of(img, &w.h, n)?,
    };
    let mut h = w.h;
    let mut rect = Rect {
        lo: [0, 0],
        hi: [n - 1, n - 1],
    };
    let largest = SIZES[0] as i64;
    // Lines added because they showed the grid; then the rest, to a board's size.
    loop {
        let best = Side::ALL
            .iter()
            .filter(|s| rect.lines(s.axis()) < largest)
            .filter_map(|&s| {
                let v = grower.judge(&h, rect, s)?;
                (v >= SHOWS).then_some((s, v))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((side, _)) = best else { break };
        rect = rect.grown(side);
        h = grower.refit(&h, rect);
    }
    let span = rect.lines(0).max(rect.lines(1));
    let size = SIZES.iter().rev().map(|&s| s as i64).find(|&s| s >= span)?;
    if size <= n || span < size - 1 {
        return None;
    }
    while rect.lines(0) < size || rect.lines(1) < size {
        let side = Side::ALL
            .iter()
            .filter(|s| rect.lines(s.axis()) < size)
            .map(|&s| (s, grower.judge(&h, rect, s).unwrap_or(f64::MIN)))
            .max_by(|a, b| a.1.total_cmp(&b.1))?
            .0;
        rect = rect.grown(side);
        h = grower.refit(&h, rect);
    }
    let h = h.then_after(&shift(rect.lo));
    let mut grown = window_at(&h, size as usize, support);
    grown.evidence = w.evidence;
    Some(grown)
}

/// What growing a window measures against: the image, and how the window's own lines and
/// stones show.
struct Grower<'a> {
    support: &'a Support<'a>,
    img: &'a Plane,
    /// The lattice contrast per sample of the window's own lines.
    own: f64,
    look: Look,
}

impl Grower<'_> {
    /// `h` refitted on the lines of `rect`: snapped onto the lines that show, onto the
    /// stones, or both, whichever centres the most stones (snapping can catch the gaps
    /// between packed stones, and a refit on the stones can follow a misplaced grid's).
    fn refit(&self, h: &Homography, rect: Rect) -> Homography {
        let dims = rect.dims();
        let moved = h.then_after(&shift(rect.lo));
        let snapped = refine_rect(&moved, dims, self.img, 1);
        let candidates = [
            refit_on_stones(self.img, &moved, dims),
            snapped.and_then(|s| refit_on_stones(self.img, &s, dims)),
            snapped,
        ];
        // Counted on the two outermost lines each side, where fits differ most (counting
        // every point made a fully grown board take half as long again to find).
        let (cols, rows) = (dims[0] as i64, dims[1] as i64);
        let rim = |c: i64, r: i64| c.min(cols - 1 - c) < 2 || r.min(rows - 1 - r) < 2;
        let centred = |f: &Homography| {
            (0..cols)
                .flat_map(|c| (0..rows).map(move |r| (c, r)))
                .filter(|&(c, r)| rim(c, r) && stone_at(self.img, f, c, r).is_some())
                .count()
        };
        candidates
            .into_iter()
            .flatten()
            .map(|f| (centred(&f), f))
            .max_by_key(|(k, _)| *k)
            .map_or(*h, |(_, f)| {
                f.then_after(&shift([-rect.lo[0], -rect.lo[1]]))
            })
    }

    /// How well the line one step out of side `s` of `rect` shows the grid (see `SHOWS`),
    /// if enough of it is in the frame and the cells it adds are the window's wood.
    fn judge(&self, h: &Homography, rect: Rect, s: Side) -> Option<f64> {
        let (img, support) = (self.img, self.support);
        let line = rect.next(s);
        let across = 1 - s.axis();
        let (from, to) = (rect.lo[across], rect.hi[across]);
        let col = s.axis() == 0;
        let shows = showing(h, support, img, col, line, from, to);
        if shows.in_frame < IN_FRAME {
            return None;
        }
        // The cells between the rectangle's outermost line and this one, by their top-left
        // crossings.
        let first = if s.low() { line } else { line - 1 };
        let point = |k: i64| if col { (line, k) } else { (k, line) };
        let added = cell_wood(
            img,
            h,
            (from..to).map(|k| if col { (first, k) } else { (k, first) }),
        )?;
        if f64::from(against_wood(added, self.look.wood).abs()) > GROW_SAME_WOOD {
            return None;
        }
        // The lines across must run on into the added cells: past a board's last line its
        // margin and edge can show one more dark line, but nothing crosses it.
        let (mut sum, mut count) = (0.0, 0.0);
        for k in from..=to {
            let c = showing(h, support, img, !col, k, first, first + 1);
            if c.in_frame > 0.0 {
                sum += c.lattice;
                count += 1.0;
            }
        }
        let runs_on = if count > 0.0 { sum / count } else { 0.0 };
        let stones = (from..=to)
            .filter(|&k| {
                let (c, r) = point(k);
                self.look.stone(img, h, c, r)
            })
            .count() as f64
            / (to - from + 1) as f64;
        Some((shows.lattice.min(runs_on) / self.own).min(1.0) + stones)
    }
}

/// The lattice contrast per sample of the window's own lines (of `n` from (0, 0)).
fn own_lattice(h: &Homography, support: &Support, img: &Plane, n: i64) -> Option<f64> {
    let (mut sum, mut count) = (0.0, 0.0);
    for line in 0..n {
        for col in [true, false] {
            let s = showing(h, support, img, col, line, 0, n - 1);
            if s.in_frame > 0.0 {
                sum += s.lattice;
                count += 1.0;
            }
        }
    }
    let own = sum / count;
    (count > 0.0 && own > 0.0).then_some(own)
}

/// How column (or row) `line` of `h` shows between the lines `from` and `to` across it.
fn showing(
    h: &Homography,
    support: &Support,
    img: &Plane,
    col: bool,
    line: i64,
    from: i64,
    to: i64,
) -> Showing {
    let front = in_front(h);
    let at = |a: f64, b: f64| if col { [a, b] } else { [b, a] };
    let (wid, hgt) = (img.width as f64, img.height as f64);
    // Support for a line along the grid's direction through grid point `g`.
    let along = |g: Point| -> Option<f64> {
        let step = at(0.0, 0.1);
        let (p, q) = (front(g)?, front([g[0] + step[0], g[1] + step[1]])?);
        let len = dist(p, q);
        (len > 1e-9).then(|| support.at(p, [(q[0] - p[0]) / len, (q[1] - p[1]) / len]))
    };
    let l = line as f64;
    let (mut sum, mut seen, mut total) = (0.0, 0u32, 0u32);
    for s in from * STEPS..=to * STEPS {
        total += 1;
        let t = s as f64 / STEPS as f64;
        let g = at(l, t);
        if !front(g).is_some_and(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0] < wid && p[1] < hgt) {
            continue;
        }
        let (Some(before), Some(on), Some(after)) =
            (along(at(l - 0.5, t)), along(g), along(at(l + 0.5, t)))
        else {
            continue;
        };
        sum += lattice(before, on, after);
        seen += 1;
    }
    Showing {
        lattice: if seen > 0 { sum / f64::from(seen) } else { 0.0 },
        in_frame: f64::from(seen) / f64::from(total.max(1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::LineMaps;

    const CELL: f64 = 16.0;
    /// Every frame is as large as a 19x19 board with three cells round it, so a smaller
    /// board has room to grow.
    const SIDE: usize = (24.0 * CELL) as usize;

    /// A board of `n` lines, 16 px cells, in the middle of the frame: wood of grey 170 with
    /// its printed lines, six tenths of a cell of margin and then a table of grey `table`;
    /// `stone` says which intersections hold a black (`Some(true)`) or white stone.
    fn board(
        n: usize,
        table: f32,
        stone: impl Fn(i64, i64) -> Option<bool>,
    ) -> (Plane, Homography) {
        let side = SIDE;
        let origin = 0.5 * (side as f64 - CELL * (n - 1) as f64);
        let (lo, hi) = (origin - 0.6 * CELL, origin + CELL * ((n - 1) as f64 + 0.6));
        let mut data = vec![table; side * side];
        for y in 0..side {
            for x in 0..side {
                let (fx, fy) = (x as f64, y as f64);
                if (lo..hi).contains(&fx) && (lo..hi).contains(&fy) {
                    data[y * side + x] = 170.0;
                }
            }
        }
        let last = origin + CELL * (n - 1) as f64;
        for k in 0..n {
            let at = (origin + CELL * k as f64) as usize;
            for t in origin as usize..=last as usize {
                data[t * side + at] = 60.0;
                data[at * side + t] = 60.0;
            }
        }
        let grid = Homography([CELL, 0.0, origin, 0.0, CELL, origin, 0.0, 0.0, 1.0]);
        for r in 0..n as i64 {
            for c in 0..n as i64 {
                let Some(black) = stone(c, r) else { continue };
                let [cx, cy] = grid.apply([c as f64, r as f64]).unwrap();
                let radius = 0.47 * CELL;
                for y in (cy - radius) as usize..=(cy + radius) as usize + 1 {
                    for x in (cx - radius) as usize..=(cx + radius) as usize + 1 {
                        if (x as f64 - cx).hypot(y as f64 - cy) <= radius {
                            data[y * side + x] = if black { 30.0 } else { 240.0 };
                        }
                    }
                }
            }
        }
        let img = Plane {
            width: side,
            height: side,
            data,
        };
        (img, grid)
    }

    /// `extend` from the 9x9 window at the board's top-left corner.
    fn extend_corner(img: &Plane, grid: &Homography) -> Option<Window> {
        let maps = LineMaps::new(img).unwrap();
        let support = Support::new(img, maps.support_scale);
        let w = Window {
            evidence: 0.0,
            score: 0.0,
            n: 9,
            h: *grid,
        };
        extend(&w, &support, img)
    }

    /// A few stones of each colour inside the corner window, so it shows what its stones
    /// look like.
    fn sprinkled(c: i64, r: i64) -> Option<bool> {
        [(2, 2), (4, 6), (6, 3)]
            .contains(&(c, r))
            .then_some(true)
            .or_else(|| [(3, 5), (5, 1), (7, 7)].contains(&(c, r)).then_some(false))
    }

    #[test]
    fn a_crowded_board_grows_from_its_clear_corner_over_its_stones() {
        // Outside the top-left 9x9 corner every point holds a stone, in a pattern of both
        // colours, so no printed line shows there.
        let (img, grid) = board(19, 110.0, |c, r| {
            if c < 9 && r < 9 {
                sprinkled(c, r)
            } else {
                Some((c * 7 + r * 3) % 5 < 2)
            }
        });
        let grown = extend_corner(&img, &grid).expect("grown over the stones");
        assert_eq!(grown.n, 19);
        for g in [[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]] {
            let want = grid.apply(g).unwrap();
            let got = grown.h.apply(g).unwrap();
            assert!(dist(want, got) < 0.25 * CELL, "{g:?}: {got:?} for {want:?}");
        }
    }

    #[test]
    fn a_whole_nine_by_nine_board_does_not_grow_into_its_margin_and_table() {
        // A table of the board's own grey too: then only the lines and stones tell.
        for table in [110.0, 170.0] {
            let (img, grid) = board(9, table, sprinkled);
            assert!(extend_corner(&img, &grid).is_none(), "table {table}");
        }
    }
}
