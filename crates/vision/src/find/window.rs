//! Choosing a board window in a grid hypothesis: how clearly each grid line shows against
//! the half-way lines beside it (stones on a line count for it), and the 9, 13 or 19 lines
//! whose evidence is largest.

use std::ops::RangeInclusive;

use crate::filter::Plane;
use crate::homography::{Homography, Point};

use super::{dist, shift, REACH, SIZES, STEPS};

/// How much a point looks like part of a thin dark line running in a given direction: the
/// grey level there against the levels `LINE_REACH` pixels either side across the line,
/// relative to their brightness, scaled so that `threshold` counts fully. Being directional,
/// it ignores stone rims and texture running across the supposed line.
pub(super) struct Support<'a> {
    img: &'a Plane,
    scale: f32,
}

/// How far either side of a line its background is sampled, working pixels.
const LINE_REACH: f64 = 2.5;

impl<'a> Support<'a> {
    pub(super) fn new(img: &'a Plane, threshold: f32) -> Self {
        Support {
            img,
            scale: 1.0 / threshold,
        }
    }

    /// Support at `p` for a line running along the unit vector `dir`; the best of the
    /// points within two pixels across the line, which tolerates a slightly wrong hypothesis.
    pub(super) fn at(&self, p: Point, dir: Point) -> f64 {
        // Off the frame every sample reads 0, and so would the support: skip the sampling.
        let margin = LINE_REACH + 3.0;
        if !(p[0] > -margin
            && p[1] > -margin
            && p[0] < self.img.width as f64 + margin
            && p[1] < self.img.height as f64 + margin)
        {
            return 0.0;
        }
        let n = [-dir[1], dir[0]];
        let mut best = 0.0f32;
        for o in [-2.0, -1.0, 0.0, 1.0, 2.0] {
            let c = [p[0] + o * n[0], p[1] + o * n[1]];
            let v = self.img.sample(c[0], c[1]);
            let a = self
                .img
                .sample(c[0] + LINE_REACH * n[0], c[1] + LINE_REACH * n[1]);
            let b = self
                .img
                .sample(c[0] - LINE_REACH * n[0], c[1] - LINE_REACH * n[1]);
            let bg = 0.5 * (a + b);
            // Both sides must be lighter: an edge (light one side only) is not a line.
            let r = ((a.min(b) - v) / (bg + 24.0)).max(0.0);
            best = best.max(r);
        }
        f64::from((best * self.scale).min(1.0))
    }
}

/// Grid point → image point for the points of `h` on the camera's side of the horizon, the
/// side board coordinate (0, 0) lies on; beyond it a homography maps points behind the
/// camera, which are not on the board.
pub(super) fn in_front(h: &Homography) -> impl Fn(Point) -> Option<Point> + '_ {
    let w0 = h.0[8];
    move |g: Point| {
        let w = h.0[6] * g[0] + h.0[7] * g[1] + h.0[8];
        (w * w0 > 0.0).then(|| h.apply(g)).flatten()
    }
}

/// Along every grid line of a hypothesis within reach, prefix sums of its contrast against
/// the half-way lines either side (at the samples no stone covers) and of the samples that
/// stones cover. A stone is a disc centred on an intersection that hides the line under it;
/// it is evidence for the grid, not against it, so a line crowded with stones still counts.
struct LineProfiles {
    /// `cols[c + REACH][s]`: column c's contrast summed over its visible samples before
    /// sample s, and how many of those samples were visible (rows alike).
    cols: Vec<Vec<(f64, u32)>>,
    rows: Vec<Vec<(f64, u32)>>,
    /// `lat_cols[c + REACH][s]`: column c's lattice contrast (see `lattice`) summed over its
    /// samples in the frame before sample s, and how many those were (rows alike).
    lat_cols: Vec<Vec<(f64, u32)>>,
    lat_rows: Vec<Vec<(f64, u32)>>,
    /// What a sample under a stone counts as.
    stone_credit: f64,
}

/// What a sample under a stone counts as, in line contrast: a little more than the least a
/// line must show, so a line of stones counts for a window but weighs less than a clear one.
const STONE_CREDIT: f64 = 0.25;
/// Or this share of the contrast the grid's visible lines typically show, if more.
const STONE_SHARE: f64 = 0.75;
/// A stone differs from the wood around it by at least this, relative to the wood's level.
const STONE_DEVIATION: f32 = 0.12;

impl LineProfiles {
    fn new(h: &Homography, support: &Support) -> Self {
        let lines = (4 * REACH + 3) as usize;
        let samples = (2 * REACH * STEPS + 1) as usize;
        let front = in_front(h);
        // Support at grid point `g` for the grid line through it along grid direction `d`.
        let along = |g: Point, d: Point| -> f64 {
            let (Some(p), Some(q)) = (front(g), front([g[0] + 0.1 * d[0], g[1] + 0.1 * d[1]]))
            else {
                return 0.0;
            };
            let len = dist(p, q);
            if len.is_nan() || len <= 1e-9 {
                return 0.0;
            }
            support.at(p, [(q[0] - p[0]) / len, (q[1] - p[1]) / len])
        };
        // Raw support along every line and half-way line: index i is line (i - 2·REACH - 1) / 2.
        let mut col_raw = vec![vec![0.0; samples]; lines];
        let mut row_raw = vec![vec![0.0; samples]; lines];
        for i in 0..lines {
            let line = (i as f64 - (2 * REACH + 1) as f64) / 2.0;
            for s in 0..samples {
                let t = (s as i64 - REACH * STEPS) as f64 / STEPS as f64;
                col_raw[i][s] = along([line, t], [0.0, 1.0]);
                row_raw[i][s] = along([t, line], [1.0, 0.0]);
            }
        }
        let side = (2 * REACH + 1) as usize;
        let stones: Vec<bool> = (0..side * side)
            .map(|k| {
                let (c, r) = ((k % side) as i64 - REACH, (k / side) as i64 - REACH);
                is_stone(support.img, &front, c as f64, r as f64)
            })
            .collect();
        // Whether the intersection nearest sample s of integer line `li` (0-based) holds a stone.
        let stone_at = |col: bool, li: usize, s: usize| {
            let k = ((s as i64 + STEPS / 2) / STEPS) as usize;
            let k = k.min(side - 1);
            if col {
                stones[k * side + li]
            } else {
                stones[li * side + k]
            }
        };
        let prefix = |raw: &[Vec<f64>], col: bool| {
            running_sums(raw, side, |li, s, [before, v, after]| {
                (!stone_at(col, li, s)).then_some(v - 0.5 * (before + after))
            })
        };
        let (cols, rows) = (prefix(&col_raw, true), prefix(&row_raw, false));
        let (w, hgt) = (support.img.width as f64, support.img.height as f64);
        let in_frame = |g: Point| {
            front(g).is_some_and(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0] < w && p[1] < hgt)
        };
        let lattice_prefix = |raw: &[Vec<f64>], col: bool| {
            running_sums(raw, side, |li, s, [before, v, after]| {
                let l = li as f64 - REACH as f64;
                let t = (s as i64 - REACH * STEPS) as f64 / STEPS as f64;
                in_frame(if col { [l, t] } else { [t, l] }).then(|| lattice(before, v, after))
            })
        };
        let (lat_cols, lat_rows) = (
            lattice_prefix(&col_raw, true),
            lattice_prefix(&row_raw, false),
        );
        // How clearly this grid's lines show where nothing covers them: the median over the
        // lines that show at all. A stone hides a line as surely as it proves one.
        let mut shown: Vec<f64> = cols
            .iter()
            .chain(&rows)
            .filter_map(|t| {
                let (sum, seen) = t[t.len() - 1];
                (seen > 0).then(|| sum / f64::from(seen))
            })
            .filter(|&c| c > LINE_CONTRAST)
            .collect();
        shown.sort_by(f64::total_cmp);
        let typical = shown.get(shown.len() / 2).copied().unwrap_or(0.0);
        LineProfiles {
            stone_credit: STONE_CREDIT.max(STONE_SHARE * typical),
            cols,
            rows,
            lat_cols,
            lat_rows,
        }
    }

    /// How much column or row `line` shows between `from` and `to` more than the half-way
    /// lines either side of it, the samples under stones counting `STONE_CREDIT`: high on
    /// a grid line, near zero on texture or plain wood.
    fn contrast(&self, col: bool, line: i64, from: i64, to: i64) -> f64 {
        if !(-REACH..=REACH).contains(&line) {
            return 0.0;
        }
        let (sum, seen) = self.visible(col, line, from, to);
        let total = ((to - from) * STEPS + 1) as f64;
        let hidden = total - f64::from(seen);
        (sum + hidden * self.stone_credit) / total
    }

    /// Column or row `line`'s contrast summed between `from` and `to` over the samples no
    /// stone covers, and how many those are.
    fn visible(&self, col: bool, line: i64, from: i64, to: i64) -> (f64, u32) {
        between(if col { &self.cols } else { &self.rows }, line, from, to)
    }

    /// The mean contrast of the lines `across` (columns if `col`) over the strip between
    /// grid lines `from` and `to`, at the samples no stone covers; `None` where none shows.
    fn strip(&self, col: bool, from: i64, to: i64, across: RangeInclusive<i64>) -> Option<f64> {
        let (sum, seen) = across
            .map(|l| self.visible(col, l, from, to))
            .fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        (seen > 0).then(|| sum / f64::from(seen))
    }

    /// The window of `n` lines at (c0, r0) as [`settle`] judges it: its lines' evidence,
    /// less a charge for each blank outermost cell (on a board the lines across each side
    /// run through them, but a window stretched onto the board's edge, a dark step between
    /// wood and table that looks like one more line, ends in bare margin). A line just
    /// outside counts against the window only as far as the lines across run on to it: a
    /// board's edge beyond its last line is no grid line, however dark.
    fn settled(&self, n: i64, c0: i64, r0: i64) -> f64 {
        let (c1, r1) = (c0 + n - 1, r0 + n - 1);
        let inside = self.inside(n, c0, r0);
        // One side: the window's outermost column (or row) `last`, the line beyond it one
        // step `dir` further, and the strips just inside and just outside it.
        let side = |is_col: bool, last: i64, dir: i64| {
            let span = if is_col { r0..=r1 } else { c0..=c1 };
            let beyond = self.contrast(is_col, last + dir, *span.start(), *span.end());
            let strip = |to: i64| self.strip(!is_col, last.min(to), last.max(to), span.clone());
            let inner = strip(last - dir).map_or(0.0, |m| (RIM_CONTRAST - m).max(0.0));
            // Bare margin reads up to `RIM_CONTRAST` (the wood's grain along the strip), a
            // board's cell `CROSSED` or more. Well below zero something dark lies between
            // the crossings (stones' shadows, the gaps of packed stones): covered, not bare.
            let runs_on = strip(last + dir).map_or(1.0, |m| {
                if m < -BARE_FLOOR {
                    1.0
                } else {
                    ((m - RIM_CONTRAST) / (CROSSED - RIM_CONTRAST)).clamp(0.0, 1.0)
                }
            });
            (beyond - LINE_CONTRAST).max(0.0) * runs_on + RIM_WEIGHT * inner
        };
        inside
            - LINE_CONTRAST * (2 * n) as f64
            - side(true, c0, -1)
            - side(true, c1, 1)
            - side(false, r0, -1)
            - side(false, r1, 1)
    }
}

/// The offset (columns, rows), each -1, 0 or 1, that moves the board window of `n` lines
/// of a refined grid `h` onto the board, if it is off by a line: the window one line over
/// wins when it is judged better (`LineProfiles::settled`). Only on a refined grid are
/// the outermost cells' lines sharp enough to judge by.
pub(super) fn settle(h: &Homography, n: usize, support: &Support) -> [i64; 2] {
    let prof = LineProfiles::new(h, support);
    let n = n as i64;
    let mut best = ([0, 0], prof.settled(n, 0, 0));
    for dc in -1..=1 {
        for dr in -1..=1 {
            let e = prof.settled(n, dc, dr);
            if e > best.1 {
                best = ([dc, dr], e);
            }
        }
    }
    best.0
}

impl LineProfiles {
    /// Column or row `line`'s lattice contrast summed between `from` and `to`, and the
    /// number of its samples there in the frame.
    fn lattice_sum(&self, col: bool, line: i64, from: i64, to: i64) -> (f64, u32) {
        between(
            if col { &self.lat_cols } else { &self.lat_rows },
            line,
            from,
            to,
        )
    }

    /// The lattice contrast summed over the lines of the window of `n` lines at (c0, r0),
    /// and the samples in the frame.
    fn lattice_window(&self, n: i64, c0: i64, r0: i64) -> (f64, u32) {
        let (c1, r1) = (c0 + n - 1, r0 + n - 1);
        (c0..=c1)
            .map(|c| self.lattice_sum(true, c, r0, r1))
            .chain((r0..=r1).map(|r| self.lattice_sum(false, r, c0, c1)))
            .fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    }
}

/// How much a line sample stands out from both half-way lines beside it, whichever way:
/// a printed line or a row of black stones shows more line support than the half-way lines,
/// a row of packed white stones less (the gaps between them are the dark lines then). Both
/// sides must agree, so a step (a board's edge, a sleeve) counts for nothing.
pub(super) fn lattice(before: f64, line: f64, after: f64) -> f64 {
    let pos = (line - before).min(line - after).max(0.0);
    let neg = (before - line).min(after - line).max(0.0);
    pos + neg
}

/// Whether a stone sits on grid intersection (c, r): of the crossing and four points a
/// quarter cell from it diagonally (inside a stone, on bare wood beside an empty crossing),
/// at least four differ from the wood at the cell centres around it (which no stone covers)
/// in the same direction, darker or lighter, by at least `STONE_DEVIATION`. All of them
/// must lie in the frame.
fn is_stone(img: &Plane, front: &dyn Fn(Point) -> Option<Point>, c: f64, r: f64) -> bool {
    stone_shade(img, front, c, r).is_some()
}

/// Which way a stone differs from the wood: black stones read darker, white ones lighter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shade {
    /// Darker than the wood.
    Darker,
    /// Lighter than the wood.
    Lighter,
}

impl Shade {
    /// How far `grey` lies from the wood's grey `wood` in this shade's direction, relative
    /// to the wood (negative the other way).
    pub(super) fn deviation(self, grey: f32, wood: f32) -> f32 {
        match self {
            Shade::Darker => -against_wood(grey, wood),
            Shade::Lighter => against_wood(grey, wood),
        }
    }
}

/// How far `grey` lies above the wood's grey `wood`, relative to the wood (the offset keeps
/// dim wood from magnifying noise).
pub(super) fn against_wood(grey: f32, wood: f32) -> f32 {
    (grey - wood) / (wood + 24.0)
}

/// The stone `is_stone` sees on intersection (c, r), as the wood's grey there and the
/// stone's shade against it.
pub(super) fn stone_shade(
    img: &Plane,
    front: &dyn Fn(Point) -> Option<Point>,
    c: f64,
    r: f64,
) -> Option<(f32, Shade)> {
    // Off the frame the image reads black, and a crossing there would look like a black
    // stone on the wood inside: a board window shifted out of the frame would gain credit.
    let (w, h) = (
        img.width.saturating_sub(1) as f64,
        img.height.saturating_sub(1) as f64,
    );
    let grey = |dc: f64, dr: f64| {
        front([c + dc, r + dr])
            .filter(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0] <= w && p[1] <= h)
            .map(|p| img.sample(p[0], p[1]))
    };
    let mut woods = [0.0f32; 4];
    for (k, (dc, dr)) in [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)]
        .into_iter()
        .enumerate()
    {
        woods[k] = grey(dc, dr)?;
    }
    // The middle two of the four: a shadow or a stray stone at one cell centre is ignored.
    woods.sort_by(f32::total_cmp);
    let wood = 0.5 * (woods[1] + woods[2]);
    let (mut darker, mut lighter) = (0, 0);
    for (dc, dr) in [
        (0.0, 0.0),
        (-0.25, -0.25),
        (0.25, -0.25),
        (0.25, 0.25),
        (-0.25, 0.25),
    ] {
        let dev = against_wood(grey(dc, dr)?, wood);
        if dev <= -STONE_DEVIATION {
            darker += 1;
        } else if dev >= STONE_DEVIATION {
            lighter += 1;
        }
    }
    // One of the five may miss: a black stone's highlight, a white stone's shadowed side.
    if darker >= 4 {
        Some((wood, Shade::Darker))
    } else if lighter >= 4 {
        Some((wood, Shade::Lighter))
    } else {
        None
    }
}

/// The best board window of a grid hypothesis.
pub(super) struct Window {
    /// What windows are ranked by: over the window's lines, the sum of each line's contrast
    /// less `LINE_CONTRAST`, so every real line a window takes in counts for it and every
    /// blank one against it (a 9x9 window inside a 19x19 board loses to the whole board).
    pub(super) evidence: f64,
    /// Mean contrast of the window's lines less that of the four lines just outside it.
    pub(super) score: f64,
    /// Lines per side.
    pub(super) n: usize,
    /// Board coordinates → working pixels.
    pub(super) h: Homography,
}

/// A larger window of the same grid holding `w` (board coordinates 0..n-1 at `w.h`), when
/// the lines it adds show the grid's lattice (lines, or stones in rows) about as clearly as
/// the window's own lines: a crowded 19x19 board hides most lines under stones and hands,
/// and a 9x9 or 13x13 window of clear lines inside it can outweigh it line by line, but
/// what lies around such a window is still a lattice, where off a board it is not.
pub(super) fn grow(w: &Window, support: &Support) -> Option<(Window, [i64; 2])> {
    let prof = LineProfiles::new(&w.h, support);
    let n = w.n as i64;
    let (inner, inner_seen) = prof.lattice_window(n, 0, 0);
    if inner_seen == 0 {
        return None;
    }
    let inner_mean = inner / f64::from(inner_seen);
    // The same measure a quarter cell off the grid, where a lattice shows least and
    // texture (a table, a cloth, a hand) as much as anywhere.
    let inner_wood = cell_wood(
        support.img,
        &w.h,
        (0..n - 1).flat_map(|c| (0..n - 1).map(move |r| (c, r))),
    );
    let prof_q = LineProfiles::new(&w.h.then_after(&shift_by(0.25)), support);
    let (inner_q, inner_q_seen) = prof_q.lattice_window(n, 0, 0);
    // Largest first: a 19x19 board seen through a 13x13 window also shows as a 13x13 one.
    for size in SIZES {
        let big = size as i64;
        if big <= n {
            continue;
        }
        // Where the larger board lies around the window: its lines show the lattice and
        // the lines just beyond it do not.
        let mut best: Option<(f64, i64, i64)> = None;
        for c0 in (n - big)..=0 {
            for r0 in (n - big)..=0 {
                let (c1, r1) = (c0 + big - 1, r0 + big - 1);
                let beyond: f64 = [
                    prof.lattice_sum(true, c0 - 1, r0, r1).0,
                    prof.lattice_sum(true, c1 + 1, r0, r1).0,
                    prof.lattice_sum(false, r0 - 1, c0, c1).0,
                    prof.lattice_sum(false, r1 + 1, c0, c1).0,
                ]
                .iter()
                .sum();
                let score = prof.lattice_window(big, c0, r0).0 - beyond;
                if best.is_none_or(|b| score > b.0) {
                    best = Some((score, c0, r0));
                }
            }
        }
        let (_, c0, r0) = best?;
        let (all, all_seen) = prof.lattice_window(big, c0, r0);
        let ring_seen = all_seen.saturating_sub(inner_seen);
        let ring_cells = (2 * big * (big - 1) - 2 * n * (n - 1)) * STEPS;
        // Most of the added lines must be in the frame to say anything about them.
        if f64::from(ring_seen) < GROW_IN_FRAME * ring_cells as f64 {
            continue;
        }
        let ring_mean = (all - inner) / f64::from(ring_seen);
        let (all_q, all_q_seen) = prof_q.lattice_window(big, c0, r0);
        let ring_q_mean =
            (all_q - inner_q) / f64::from(all_q_seen.saturating_sub(inner_q_seen).max(1));
        // The added cells must be the same wood as the window's: a lattice of the board's
        // edges over a table of another shade is not more board. Measured last: it samples
        // the image.
        let same_wood = || {
            let inside = |c: i64, r: i64| (0..n - 1).contains(&c) && (0..n - 1).contains(&r);
            let ring_wood = cell_wood(
                support.img,
                &w.h,
                (c0..c0 + big - 1)
                    .flat_map(|c| (r0..r0 + big - 1).map(move |r| (c, r)))
                    .filter(|&(c, r)| !inside(c, r)),
            );
            match (inner_wood, ring_wood) {
                (Some(a), Some(b)) => f64::from(against_wood(b, a).abs()) <= GROW_SAME_WOOD,
                _ => false,
            }
        };
        let lattice = ring_mean >= GROW_STRONG_RING_SHARE * inner_mean
            || (ring_mean >= GROW_RING_SHARE * inner_mean
                && ring_mean >= GROW_OVER_QUARTER * ring_q_mean);
        if lattice && same_wood() {
            let (_, score) = prof.evidence(big, c0, r0);
            let grown = Window {
                evidence: w.evidence,
                score,
                n: size,
                h: w.h.then_after(&shift([c0, r0])),
            };
            return Some((grown, [c0, r0]));
        }
    }
    None
}

/// The median grey at the centres of `cells` (board coordinates of their top-left
/// crossings, at `h`) that lie in the frame: the bare wood between the stones.
pub(super) fn cell_wood(
    img: &Plane,
    h: &Homography,
    cells: impl Iterator<Item = (i64, i64)>,
) -> Option<f32> {
    let (w, hgt) = (img.width as f64 - 1.0, img.height as f64 - 1.0);
    let mut greys: Vec<f32> = cells
        .filter_map(|(c, r)| h.apply([c as f64 + 0.5, r as f64 + 0.5]))
        .filter(|p| p[0] >= 0.0 && p[1] >= 0.0 && p[0] <= w && p[1] <= hgt)
        .map(|p| img.sample(p[0], p[1]))
        .collect();
    greys.sort_by(f32::total_cmp);
    greys.get(greys.len() / 2).copied()
}

/// Board coordinates moved by `d` cells along both directions.
fn shift_by(d: f64) -> Homography {
    Homography([1.0, 0.0, d, 0.0, 1.0, d, 0.0, 0.0, 1.0])
}

/// A larger window is taken when the lines it adds show at least this share of the lattice
/// contrast of the window's own lines (stones and hands hide part of a crowded board's)...
const GROW_RING_SHARE: f64 = 0.4;
/// ...and this many times what the same places show a quarter cell off the grid (texture
/// shows alike on and off the grid, a lattice does not).
const GROW_OVER_QUARTER: f64 = 1.2;
/// Or at least this share, whatever the quarter-cell comparison says: rows of packed stones
/// show a lattice a quarter cell off the grid too, so on a crowded board that comparison
/// fails where the added lines are nearly as clear as the window's own.
const GROW_STRONG_RING_SHARE: f64 = 0.7;
/// The added cells' median grey may differ from the window's by this share of it at most.
pub(super) const GROW_SAME_WOOD: f64 = 0.25;
/// Share of the added lines' samples that must lie in the frame.
const GROW_IN_FRAME: f64 = 0.5;

/// The contrast a grid line shows at the least, partly hidden by stones or hands.
const LINE_CONTRAST: f64 = 0.12;
/// The contrast the lines across a window's outermost cells show at the least, where no
/// stone covers them...
const RIM_CONTRAST: f64 = 0.12;
/// ...and what each unit of shortfall costs a window, in lines' evidence.
const RIM_WEIGHT: f64 = 4.0;
/// A strip whose crossing lines average below minus this is covered, not bare margin.
const BARE_FLOOR: f64 = 0.02;
/// A strip whose crossing lines average this contrast or more is a cell of the board.
const CROSSED: f64 = 0.3;

/// The window of 9, 13 or 19 lines of hypothesis `h` with the most evidence.
pub(super) fn best_window(h: &Homography, support: &Support) -> Option<Window> {
    let prof = LineProfiles::new(h, support);
    let mut best: Option<(f64, usize, i64, i64)> = None;
    for n in SIZES {
        let span = n as i64 - 1;
        for c0 in -REACH + 1..=REACH - 1 - span {
            for r0 in -REACH + 1..=REACH - 1 - span {
                let evidence = prof.evidence(n as i64, c0, r0).0;
                if best.is_none_or(|b| evidence > b.0) {
                    best = Some((evidence, n, c0, r0));
                }
            }
        }
    }
    let (evidence, n, c0, r0) = best?;
    let score = prof.evidence(n as i64, c0, r0).1;
    Some(Window {
        evidence,
        score,
        n,
        h: h.then_after(&shift([c0, r0])),
    })
}

/// The window of `n` lines at (0, 0) of `h`, measured as `best_window` measures windows.
pub(super) fn window_at(h: &Homography, n: usize, support: &Support) -> Window {
    let (evidence, score) = LineProfiles::new(h, support).evidence(n as i64, 0, 0);
    Window {
        evidence,
        score,
        n,
        h: *h,
    }
}

impl LineProfiles {
    /// The contrast of the window of `n` lines at (c0, r0), summed over its lines.
    fn inside(&self, n: i64, c0: i64, r0: i64) -> f64 {
        let (c1, r1) = (c0 + n - 1, r0 + n - 1);
        (c0..=c1)
            .map(|c| self.contrast(true, c, r0, r1))
            .chain((r0..=r1).map(|r| self.contrast(false, r, c0, c1)))
            .sum()
    }

    /// The window of `n` lines at (c0, r0): its evidence (see `Window::evidence`) and score.
    fn evidence(&self, n: i64, c0: i64, r0: i64) -> (f64, f64) {
        let (c1, r1) = (c0 + n - 1, r0 + n - 1);
        let inside = self.inside(n, c0, r0);
        let beyond = [
            self.contrast(true, c0 - 1, r0, r1),
            self.contrast(true, c1 + 1, r0, r1),
            self.contrast(false, r0 - 1, c0, c1),
            self.contrast(false, r1 + 1, c0, c1),
        ];
        // A board ends where its wood shows no further line: a line just outside the window
        // that shows as a grid line counts against the window ending there as much as a
        // line inside counts for it.
        let edge_penalty: f64 = beyond.iter().map(|c| (c - LINE_CONTRAST).max(0.0)).sum();
        let evidence = inside - LINE_CONTRAST * (2 * n) as f64 - edge_penalty;
        let outside = beyond.iter().sum::<f64>() / 4.0;
        (evidence, inside / (2 * n) as f64 - outside)
    }
}

/// The sum and count of line `line`'s running sums (`running_sums`) between grid
/// coordinates `from` and `to` along it; nothing for a line out of reach.
fn between(table: &[Vec<(f64, u32)>], line: i64, from: i64, to: i64) -> (f64, u32) {
    if !(-REACH..=REACH).contains(&line) {
        return (0.0, 0);
    }
    let table = &table[(line + REACH) as usize];
    let (a, b) = (
        ((from + REACH) * STEPS) as usize,
        ((to + REACH) * STEPS) as usize + 1,
    );
    (table[b].0 - table[a].0, table[b].1 - table[a].1)
}

/// Running sums and counts along each of a window's `side` lines: line `li`'s samples are
/// `raw[2 li + 1]`, between the half-way lines `raw[2 li]` and `raw[2 li + 2]`; `score`
/// gives sample `s` its value from (before, on, after), or `None` to leave it out.
fn running_sums(
    raw: &[Vec<f64>],
    side: usize,
    score: impl Fn(usize, usize, [f64; 3]) -> Option<f64>,
) -> Vec<Vec<(f64, u32)>> {
    (0..side)
        .map(|li| {
            let [before, line, after] = [&raw[2 * li], &raw[2 * li + 1], &raw[2 * li + 2]];
            let mut acc = Vec::with_capacity(line.len() + 1);
            acc.push((0.0, 0u32));
            let (mut sum, mut seen) = (0.0, 0u32);
            for (s, v) in line.iter().enumerate() {
                if let Some(x) = score(li, s, [before[s], *v, after[s]]) {
                    sum += x;
                    seen += 1;
                }
                acc.push((sum, seen));
            }
            acc
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of 10-pixel cells whose column `c` lies at x = 10 c + `x0`, over plain wood.
    fn wood_and_grid(x0: f64) -> (Plane, impl Fn(Point) -> Option<Point>) {
        let (width, height) = (100, 100);
        let img = Plane {
            width,
            height,
            data: vec![150.0; width * height],
        };
        (img, move |g: Point| {
            Some([10.0 * g[0] + x0, 10.0 * g[1] + 50.0])
        })
    }

    #[test]
    fn a_crossing_off_the_frame_is_not_a_stone() {
        // Column 10 at x = 104, just past the frame's right edge; the cell centres to its
        // left are on the wood, the crossing and its quarter points off the frame, where
        // the image reads black.
        let (img, front) = wood_and_grid(4.0);
        assert!(!is_stone(&img, &front, 10.0, 0.0));
        // A dark disc on the wood in the frame is one.
        let (mut img, front) = wood_and_grid(4.0);
        for y in 47..54 {
            for x in 41..48 {
                img.data[y * 100 + x] = 30.0;
            }
        }
        assert!(is_stone(&img, &front, 4.0, 0.0));
    }

    /// A 9x9 board of 12-pixel cells (column c at x = 30 + 12 c, row r at y = 20 + 12 r)
    /// whose first column is faint (stones along it, say) and whose right-hand edge, a
    /// cell past the last column, is a dark line the rows do not reach.
    fn board_with_a_dark_edge() -> Plane {
        let (width, height) = (200, 140);
        let mut data = vec![150.0f32; width * height];
        let mut dark = |x0: usize, x1: usize, y0: usize, y1: usize, v: f32| {
            for y in y0..y1 {
                for x in x0..x1 {
                    data[y * width + x] = data[y * width + x].min(v);
                }
            }
        };
        for k in 0..9 {
            let (x, y) = (30 + 12 * k, 20 + 12 * k);
            dark(x, x + 2, 20, 118, if k == 0 { 135.0 } else { 60.0 });
            dark(30, 128, y, y + 2, 60.0);
        }
        dark(138, 140, 8, 130, 40.0);
        Plane {
            width,
            height,
            data,
        }
    }

    #[test]
    fn a_dark_edge_past_the_last_line_does_not_pull_the_window_onto_it() {
        let img = board_with_a_dark_edge();
        let support = Support::new(&img, 0.3);
        // The window of nine columns from x = 42: the board's columns 1 to 8 and the edge.
        let onto_edge = Homography([12.0, 0.0, 43.0, 0.0, 12.0, 21.0, 0.0, 0.0, 1.0]);
        assert_eq!(settle(&onto_edge, 9, &support), [-1, 0]);
        // The board's own window stays.
        let on_board = Homography([12.0, 0.0, 31.0, 0.0, 12.0, 21.0, 0.0, 0.0, 1.0]);
        assert_eq!(settle(&on_board, 9, &support), [0, 0]);
    }

    /// A 13x13 grid of dark lines, 12-pixel cells from x = y = 12, on a 168-pixel image:
    /// wood of grey 170 under the middle 9x9 lines (from line 2) and `outside` around them.
    fn grid_on(outside: f32) -> Plane {
        let side = 168;
        let mut data = vec![outside; side * side];
        for y in 36..133 {
            for x in 36..133 {
                data[y * side + x] = 170.0;
            }
        }
        for k in 0..13 {
            let at = 12 + 12 * k;
            for t in 12..158 {
                for d in 0..2 {
                    data[t * side + at + d] = 30.0;
                    data[(at + d) * side + t] = 30.0;
                }
            }
        }
        Plane {
            width: side,
            height: side,
            data,
        }
    }

    #[test]
    fn a_window_grows_over_the_same_wood_only() {
        let nine = |img: &Plane| {
            let support = Support::new(img, 0.3);
            let w = Window {
                evidence: 0.0,
                score: 0.0,
                n: 9,
                h: Homography([12.0, 0.0, 37.0, 0.0, 12.0, 37.0, 0.0, 0.0, 1.0]),
            };
            grow(&w, &support).map(|(g, at)| (g.n, at))
        };
        assert_eq!(nine(&grid_on(170.0)), Some((13, [-2, -2])));
        // The same lattice over a table of another shade is not more board.
        assert_eq!(nine(&grid_on(110.0)), None);
    }
}
