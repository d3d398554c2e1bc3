//! Automatic board finding: thin dark ridges → Hough lines → two dominant directions → grid
//! hypotheses from neighbouring line pairs, fitted over line intersections → the board's
//! extent and size from how well the image shows each grid line → sub-pixel refinement.

use tengen_rules::BoardSize;

use crate::filter::{dark_lines, downscale, median3, ridge, ridges, Plane};
use crate::frame::Frame;
use crate::homography::{fit_ransac, Homography, Point};
use crate::hough::{self, Line};

mod extend;
mod step;
mod stones;
mod window;

use stones::refit_on_stones;
use window::{best_window, grow, settle, Support, Window};

/// The sizes looked for, largest first.
pub const SIZES: [usize; 3] = [19, 13, 9];

/// Frames are searched at most this many pixels on their long side: enough for a 19x19
/// grid to keep lines several pixels apart, small enough to stay fast.
pub(crate) const WORK_SIDE: f64 = 800.0;
/// Radius of the neighbourhood a line pixel must be darker than (grid lines are 1-3 px).
pub(crate) const LINE_RADIUS: usize = 3;
/// Share of the frame's pixels taken as line pixels for the Hough transform.
const LINE_PIXEL_SHARE: f64 = 0.12;
/// How far either side of a pixel the ridge test looks: wider than a line at the working
/// scale, narrower than half a stone (3, or 2 and 4 together, lost rendered boards).
const RIDGE_REACH: usize = 2;
/// Lines weaker than this share of the strongest are dropped.
const MIN_LINE_FRACTION: f32 = 0.15;
/// Lines within this many degrees of a dominant direction belong to its family; perspective
/// fans a family out, so this is wide.
const FAMILY_DEGREES: f64 = 22.0;
/// Peaks of the direction histogram considered as a grid's directions: a family fanned out
/// by a steep view shows several low peaks of its own, which weak clutter lines around the
/// other family can outrank (only the two strongest pairs are tried, so more peaks cost
/// no time).
const DIRECTION_PEAKS: usize = 7;
/// Pairs of those peaks tried as the grid's two directions, strongest first.
const DIRECTION_PAIRS: usize = 2;
/// The two directions of a grid are at least this far apart in the image.
const MIN_SEPARATION_DEGREES: f64 = 35.0;
/// An intersection supports a grid hypothesis when it lies this close (in cells) to a grid point.
const GRID_TOL: f64 = 0.15;
/// Candidate grids kept for refitting: from cells between neighbouring lines, and from
/// cells between lines two apart.
const KEPT_CANDIDATES: [usize; 2] = [16, 8];
/// Intersections a candidate grid is ranked on at most.
const RANKING_POINTS: usize = 400;
/// Grid coordinates searched either side of a hypothesis' first cell.
const REACH: i64 = 21;
/// Samples per cell along a grid line when measuring its support.
const STEPS: i64 = 4;
/// Cells smaller than this (working pixels) are texture, not a board one could read.
const MIN_CELL: f64 = 6.0;
/// How far across a grid line snapping compares it with the wood either side, in cells: past
/// half a line's width (printed lines are about 0.05 cell wide), short of a stone's edge.
const LINE_WIDTH_REACH: f64 = 0.06;
/// ... and in working pixels at the least.
const MIN_LINE_REACH: f64 = 2.0;
/// Grid hypotheses whose best windows are refined on the image before the final choice.
const REFINED_HYPOTHESES: usize = 6;
/// A refined window's grid is also tried at twice its shorter step when the longer step is
/// this many times the shorter or more: a board's cell (22 by 23.7 mm) seen at 45° is at
/// most 1.52 times as long as it is deep.
const DOUBLING_ASPECT: f64 = 1.6;
/// A window whose lines show this much more than its surroundings is a board.
const MIN_SCORE: f64 = 0.1;

/// A board found in a frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FoundBoard {
    /// Lines in each direction.
    pub size: BoardSize,
    /// The four outermost intersections in frame pixels: top-left, top-right, bottom-right,
    /// bottom-left as seen in the frame.
    pub corners: [Point; 4],
    /// From board coordinates (column, row, 0..size-1, row 0 along corners TL→TR) to frame pixels.
    pub grid: Homography,
    /// How clearly the frame shows this grid against its surroundings, in [-1, 1]: the mean
    /// line support inside minus that of the lines just outside.
    pub score: f64,
}

impl FoundBoard {
    /// The frame pixel of intersection (column, row).
    pub fn point(&self, col: f64, row: f64) -> Option<Point> {
        self.grid.apply([col, row])
    }

    /// The mean distance between neighbouring intersections along the outer lines, pixels.
    pub fn mean_spacing(&self) -> f64 {
        let c = &self.corners;
        let n = self.size.width().saturating_sub(1).max(1) as f64;
        (0..4).map(|i| dist(c[i], c[(i + 1) % 4])).sum::<f64>() / (4.0 * n)
    }
}

/// Why no board was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoBoard {
    /// The frame shows too few straight lines (a black or blank frame, no board).
    TooFewLines,
    /// There are lines, but not in two directions.
    NoTwoDirections,
    /// There are lines in two directions but no regular grid of a known size.
    NoGrid,
}

impl std::fmt::Display for NoBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoBoard::TooFewLines => "too few straight lines",
            NoBoard::NoTwoDirections => "no two dominant line directions",
            NoBoard::NoGrid => "no regular 9x9, 13x13 or 19x19 grid",
        })
    }
}

/// Finds a 9x9, 13x13 or 19x19 board in a frame, without any given corners.
pub fn find_board(frame: &Frame) -> Result<FoundBoard, NoBoard> {
    let (w, h) = (frame.width(), frame.height());
    let factor = (WORK_SIDE / w.max(h) as f64).min(1.0);
    let img = median3(&downscale(&frame.to_grey(), w, h, factor));
    let maps = LineMaps::new(&img).ok_or(NoBoard::TooFewLines)?;
    let found = hough::lines(&maps.ridges, maps.line_pixel, 160, MIN_LINE_FRACTION, 4, 3);
    if found.len() < 8 {
        return Err(NoBoard::TooFewLines);
    }
    let pairs: Vec<(Vec<Line>, Vec<Line>)> = families(&found, img.width, img.height)
        .into_iter()
        .filter(|(a, b)| a.len() >= 3 && b.len() >= 3)
        .collect();
    if pairs.is_empty() {
        return Err(NoBoard::NoTwoDirections);
    }
    let support = Support::new(&img, maps.support_scale);
    // The best window, and whether it is a larger window its grid was restepped into.
    let mut best: Option<(Window, bool)> = None;
    // Many hypotheses settle on the same grid; measuring each grid once is what keeps
    // finding fast.
    let mut hypotheses: Vec<Homography> = Vec::new();
    for h in pairs.iter().flat_map(|(a, b)| grid_hypotheses(a, b)) {
        let Some(h) = reduced(&h) else {
            continue;
        };
        if !hypotheses.iter().any(|k| same_grid(&h, k)) {
            hypotheses.push(h);
        }
    }
    let mut windows: Vec<Window> = hypotheses
        .iter()
        .filter_map(|h| best_window(h, &support))
        .collect();
    windows.sort_by(|a, b| b.evidence.total_cmp(&a.evidence));
    windows.truncate(REFINED_HYPOTHESES);
    for mut w in windows {
        let mut restepped_larger = false;
        // A hypothesis fitted on a few intersections drifts off the far lines; snapping its
        // window onto the image and choosing the window again corrects both.
        w = snapped(w, &img, &support);
        // A board's lines and the rows of stones or of gaps between them can make a grid of
        // half the board's step along one axis (snapping settles on one too); every other
        // line of it, on either parity, is then the board, and shows more as a grid.
        if let Some(d) = doubled_steps(&w)
            .iter()
            .filter_map(|h| best_window(h, &support))
            .max_by(|a, b| a.evidence.total_cmp(&b.evidence))
        {
            if d.evidence > w.evidence {
                w = d;
            }
        }
        // A grid whose step is a fraction of the board's still meets some of its lines;
        // the period of the window's line support is the board's step.
        if let Some(r) = step::restepped(&w.h, w.n, &support) {
            if let Some(w2) = best_window(&r, &support).map(|r| snapped(r, &img, &support)) {
                if w2.evidence > w.evidence && covers(&w2, &w) {
                    restepped_larger = w2.n > w.n;
                    w = w2;
                }
            }
        }
        if best.as_ref().is_none_or(|b| w.evidence > b.0.evidence) {
            best = Some((w, restepped_larger));
        }
    }
    let (mut best, restepped_larger) = best.ok_or(NoBoard::NoGrid)?;
    if best.score < MIN_SCORE {
        return Err(NoBoard::NoGrid);
    }
    // A crowded 19x19 board can show its clearest lines only in a 9x9 or 13x13 window of
    // itself; the lattice around the window tells.
    let grown = grow(&best, &support);
    // A grid restepped into a larger window is extrapolated from the smaller one, as a grown one.
    let mut was_grown = grown.is_some() || restepped_larger;
    if let Some((larger, [c0, r0])) = grown {
        best = grown_onto_image(&best, larger, [c0, r0], &img);
    } else if let Some(larger) = extend::extend(&best, &support, &img) {
        best = larger;
        was_grown = true;
    }
    let Window {
        score, n, h: hb, ..
    } = best;
    let mut hb = refine(&hb, n, &img, 3).unwrap_or(hb);
    // A grown board is a crowded one, whose lines partly snap to the gaps between stones.
    if was_grown {
        hb = refit_on_stones(&img, &hb, [n, n]).unwrap_or(hb);
    }
    let offset = settle(&hb, n, &support);
    if offset != [0, 0] {
        let moved = hb.then_after(&shift(offset));
        hb = refine(&moved, n, &img, 3).unwrap_or(moved);
    }
    // Back to frame pixels.
    let s = 1.0 / factor;
    let to_frame = Homography([s, 0.0, 0.5 * s - 0.5, 0.0, s, 0.5 * s - 0.5, 0.0, 0.0, 1.0]);
    let grid = to_frame.then_after(&hb);
    orient(grid, n, score).ok_or(NoBoard::NoGrid)
}

/// What the finder finds lines among, and the scale it measures their support in.
pub(crate) struct LineMaps {
    /// Ridges (`filter::ridges`), for the Hough transform. The rims of black stones are
    /// darker than their surroundings but not than both of their sides; counted as line
    /// pixels, on a crowded board they outnumber the grid's and line up along its diagonals.
    pub(crate) ridges: Plane,
    /// The ridge value from which a pixel is a line pixel (the top `LINE_PIXEL_SHARE`).
    pub(crate) line_pixel: f32,
    /// The line contrast that counts as full support: the same share of the map of pixels
    /// darker than their neighbourhood (`filter::dark_lines`), the scale the window
    /// evidence's constants were set in.
    pub(crate) support_scale: f32,
}

impl LineMaps {
    /// The maps of a working image; `None` when it shows no dark detail at all.
    pub(crate) fn new(img: &Plane) -> Option<LineMaps> {
        let ridges = ridges(img, RIDGE_REACH);
        let line_pixel = quantile_threshold(&ridges, LINE_PIXEL_SHARE);
        let support_scale = quantile_threshold(&dark_lines(img, LINE_RADIUS), LINE_PIXEL_SHARE);
        (line_pixel > 0.0 && support_scale > 0.0).then_some(LineMaps {
            ridges,
            line_pixel,
            support_scale,
        })
    }
}

/// Whether window `outer` holds the centre of window `inner`.
fn covers(outer: &Window, inner: &Window) -> bool {
    let mid = 0.5 * (inner.n - 1) as f64;
    let span = -0.5..=(outer.n as f64 - 0.5);
    outer.h.inverse().is_some_and(|inv| {
        inner
            .h
            .apply([mid, mid])
            .and_then(|p| inv.apply(p))
            .is_some_and(|q| span.contains(&q[0]) && span.contains(&q[1]))
    })
}

/// Window `w` snapped onto the image's lines and chosen again, while that shows more: a
/// hypothesis fitted on a few intersections drifts off the far lines.
fn snapped(mut w: Window, img: &Plane, support: &Support) -> Window {
    for _ in 0..2 {
        let Some(refined) = refine(&w.h, w.n, img, 1) else {
            break;
        };
        match best_window(&refined, support) {
            Some(w2) if w2.evidence >= w.evidence => w = w2,
            _ => break,
        }
    }
    w
}

/// The grown window `grown` (its origin at (c0, r0) of `from`'s grid, c0 and r0 ≤ 0), its
/// lines snapped onto the image a step at a time: the grid fitted on the smaller window
/// drifts off the lines it extrapolates to, and snapping ten lines out at once would catch
/// a neighbouring line.
fn grown_onto_image(from: &Window, grown: Window, origin: [i64; 2], img: &Plane) -> Window {
    const STEP: i64 = 2;
    let n = from.n as i64;
    let big = grown.n as i64;
    // The current rectangle, in `from`'s board coordinates: [lo, hi] per axis.
    let (mut lo, mut hi) = ([0i64, 0], [n - 1, n - 1]);
    let target_lo = origin;
    let target_hi = [origin[0] + big - 1, origin[1] + big - 1];
    let mut h = from.h;
    while lo != target_lo || hi != target_hi {
        for a in 0..2 {
            lo[a] = (lo[a] - STEP).max(target_lo[a]);
            hi[a] = (hi[a] + STEP).min(target_hi[a]);
        }
        let dims = [(hi[0] - lo[0] + 1) as usize, (hi[1] - lo[1] + 1) as usize];
        let moved = h.then_after(&shift(lo));
        let snapped = refine_rect(&moved, dims, img, 1);
        // Under packed stones the lines cannot be snapped to (or snap to the gaps between
        // stones); the stones themselves still mark the intersections.
        let Some(refined) =
            refit_on_stones(img, snapped.as_ref().unwrap_or(&moved), dims).or(snapped)
        else {
            return grown;
        };
        h = refined.then_after(&shift([-lo[0], -lo[1]]));
    }
    Window {
        h: h.then_after(&shift(origin)),
        ..grown
    }
}

/// Board coordinates moved by `by` cells.
fn shift(by: [i64; 2]) -> Homography {
    Homography([
        1.0,
        0.0,
        by[0] as f64,
        0.0,
        1.0,
        by[1] as f64,
        0.0,
        0.0,
        1.0,
    ])
}

/// The value above which the given share of the map's positive values lies.
fn quantile_threshold(map: &Plane, share: f64) -> f32 {
    const BINS: usize = 1024;
    let max = map.data.iter().copied().fold(0.0f32, f32::max);
    // Too faint to be a printed line anywhere: a black or blank frame.
    if max < 0.05 {
        return 0.0;
    }
    let mut hist = vec![0usize; BINS];
    for &v in &map.data {
        hist[((v / max * (BINS - 1) as f32) as usize).min(BINS - 1)] += 1;
    }
    let want = (map.data.len() as f64 * share) as usize;
    let mut seen = 0;
    for b in (0..BINS).rev() {
        seen += hist[b];
        if seen >= want {
            return (b as f32 / (BINS - 1) as f32 * max).max(0.02);
        }
    }
    0.02
}

fn dist(a: Point, b: Point) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Angular distance between two line normals, degrees, in [0, 90].
fn angle_between(a: f64, b: f64) -> f64 {
    let d = (a - b).to_degrees().rem_euclid(180.0);
    d.min(180.0 - d)
}

/// Candidate pairs of line families, each family sorted across itself: the two strongest
/// directions first, then the next pairing of strong directions if there is one. Rows of
/// stones and blur can make a false direction outweigh one of the grid's, and the window
/// evidence later tells the real grid apart, so more than one pairing is tried.
fn families(lines: &[Line], width: usize, height: usize) -> Vec<(Vec<Line>, Vec<Line>)> {
    // A vote-weighted histogram of directions, smoothed over ±5 degrees.
    let mut hist = [0.0f64; 180];
    for l in lines {
        let t = l.theta.to_degrees().round() as i64;
        for d in -5..=5i64 {
            hist[(t + d).rem_euclid(180) as usize] += f64::from(l.votes) * (6 - d.abs()) as f64;
        }
    }
    // The histogram's peaks (local maxima over ±5 degrees), strongest first.
    let mut peaks: Vec<usize> = (0..180)
        .filter(|&t| {
            hist[t] > 0.0
                && (1..=5)
                    .all(|d| hist[t] >= hist[(t + d) % 180] && hist[t] > hist[(t + 180 - d) % 180])
        })
        .collect();
    peaks.sort_by(|&a, &b| hist[b].total_cmp(&hist[a]));
    peaks.truncate(DIRECTION_PEAKS);
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, &a) in peaks.iter().enumerate() {
        for &b in &peaks[i + 1..] {
            if angle_between((a as f64).to_radians(), (b as f64).to_radians())
                >= MIN_SEPARATION_DEGREES
            {
                pairs.push((a, b));
            }
        }
    }
    pairs.sort_by(|p, q| (hist[q.0] + hist[q.1]).total_cmp(&(hist[p.0] + hist[p.1])));
    pairs.truncate(DIRECTION_PAIRS);
    let centre = [width as f64 / 2.0, height as f64 / 2.0];
    let family = |dir: usize| {
        let dir = (dir as f64).to_radians();
        let mut fam: Vec<(f64, Line)> = lines
            .iter()
            .filter(|l| angle_between(l.theta, dir) <= FAMILY_DEGREES)
            .filter_map(|l| position(l, dir, centre).map(|t| (t, *l)))
            .collect();
        fam.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Two detections of one line (its two edges): keep the stronger.
        let mut out: Vec<(f64, Line)> = Vec::with_capacity(fam.len());
        for (t, l) in fam {
            match out.last_mut() {
                Some((lt, last)) if (t - *lt).abs() < MIN_CELL => {
                    if l.votes > last.votes {
                        (*lt, *last) = (t, l);
                    }
                }
                _ => out.push((t, l)),
            }
        }
        out.into_iter().map(|(_, l)| l).collect::<Vec<_>>()
    };
    pairs
        .into_iter()
        .map(|(a, b)| (family(a), family(b)))
        .collect()
}

/// Where a line crosses the transversal through `centre` along the family's normal `dir`.
fn position(l: &Line, dir: f64, centre: Point) -> Option<f64> {
    let n = [dir.cos(), dir.sin()];
    let ln = l.normal();
    let dot = n[0] * ln[0] + n[1] * ln[1];
    if dot.abs() < 1e-6 {
        return None;
    }
    Some((l.rho - centre[0] * ln[0] - centre[1] * ln[1]) / dot)
}

/// Grid hypotheses: for each pair of neighbouring lines in each family, the homography taking
/// the unit cell to their four intersections, improved by refitting on every line
/// intersection it explains. Returned best-supported first, at most a few dozen.
fn grid_hypotheses(fam_a: &[Line], fam_b: &[Line]) -> Vec<Homography> {
    // Every intersection, labelled by its two lines.
    let mut points = Vec::with_capacity(fam_a.len() * fam_b.len());
    for (i, a) in fam_a.iter().enumerate() {
        for (j, b) in fam_b.iter().enumerate() {
            if let Some(p) = a.intersect(b) {
                points.push((i, j, p));
            }
        }
    }
    let mut grid = vec![None; fam_a.len() * fam_b.len()];
    for &(i, j, p) in &points {
        grid[i * fam_b.len() + j] = Some(p);
    }
    let at = |i: usize, j: usize| {
        (i < fam_a.len() && j < fam_b.len())
            .then(|| grid[i * fam_b.len() + j])
            .flatten()
    };
    let unit = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
    // Candidates from neighbouring lines, and from lines two apart.
    let mut scored: [Vec<(usize, Homography)>; 2] = [Vec::new(), Vec::new()];
    // Candidates are ranked on an even subsample of the intersections: the ranking only
    // picks which to refit on all of them, and thousands of candidates times thousands of
    // intersections would dominate the finder's time.
    let stride = points.len().div_ceil(RANKING_POINTS).max(1);
    let sample: Vec<(usize, usize, Point)> = points.iter().copied().step_by(stride).collect();
    // Lines two apart make a cell too: a false line between two grid lines (a faint
    // alignment of crossings, a stone row's edge) must not hide the cell they bound.
    for (i, j) in (0..fam_a.len()).flat_map(|i| (0..fam_b.len()).map(move |j| (i, j))) {
        for (di, dj) in [(1, 1), (1, 2), (2, 1), (2, 2)] {
            let (Some(p00), Some(p10), Some(p11), Some(p01)) =
                (at(i, j), at(i + di, j), at(i + di, j + dj), at(i, j + dj))
            else {
                continue;
            };
            let quad = [p00, p10, p11, p01];
            if (0..4).any(|k| dist(quad[k], quad[(k + 1) % 4]) < MIN_CELL) {
                continue;
            }
            let Some(h) = Homography::fit(&unit, &quad) else {
                continue;
            };
            let (count, _) = explain(&h, &sample);
            scored[usize::from((di, dj) != (1, 1))].push((count, h));
        }
    }
    // Each kind is ranked on its own: a cell two lines wide extrapolates twice as well and
    // so explains more intersections even when it spans two true cells (its grid then
    // shows as strongly half-way between lines, and the window choice drops it).
    let scored: Vec<(usize, Homography)> = scored
        .into_iter()
        .zip(KEPT_CANDIDATES)
        .flat_map(|(mut kind, keep)| {
            kind.sort_by_key(|s| std::cmp::Reverse(s.0));
            kind.truncate(keep);
            kind
        })
        .collect();
    // Local optimisation: refit each on the intersections it labels.
    scored
        .into_iter()
        .map(|(_, mut h)| {
            for _ in 0..3 {
                let (_, labelled) = explain(&h, &points);
                let (src, dst): (Vec<Point>, Vec<Point>) = labelled.into_iter().unzip();
                match Homography::fit(&src, &dst) {
                    Some(refit) => h = refit,
                    None => break,
                }
            }
            h
        })
        .collect()
}

/// The hypothesis renumbered onto the shortest grid steps: a family of diagonals (rows of
/// stones run along them too) and one of the board's line families pass through the same
/// crossings, so a grid built on them explains the same intersections, but its steps are
/// not the board's. Lagrange's reduction of the two image steps at the grid's origin gives
/// the board's own axes: its diagonals are longer than its sides in any view short of
/// grazing, and a board's lines are what is measured next.
fn reduced(h: &Homography) -> Option<Homography> {
    let o = h.apply([0.0, 0.0])?;
    let step = |g: Point| h.apply(g).map(|p| [p[0] - o[0], p[1] - o[1]]);
    // Integer steps in board coordinates, and their image vectors.
    let (mut a, mut b) = ([1.0, 0.0], [0.0, 1.0]);
    let (mut ea, mut eb) = (step(a)?, step(b)?);
    let len2 = |e: Point| e[0] * e[0] + e[1] * e[1];
    for _ in 0..8 {
        if len2(ea) > len2(eb) {
            std::mem::swap(&mut a, &mut b);
            std::mem::swap(&mut ea, &mut eb);
        }
        let la = len2(ea);
        if la.is_nan() || la <= 1e-9 {
            return None;
        }
        let m = ((ea[0] * eb[0] + ea[1] * eb[1]) / la).round();
        if m == 0.0 {
            break;
        }
        b = [b[0] - m * a[0], b[1] - m * a[1]];
        eb = step(b)?;
    }
    if a == [1.0, 0.0] && b == [0.0, 1.0] || a == [0.0, 1.0] && b == [1.0, 0.0] {
        return Some(*h);
    }
    Some(h.then_after(&Homography([
        a[0], b[0], 0.0, a[1], b[1], 0.0, 0.0, 0.0, 1.0,
    ])))
}

/// Window `w`'s grid with its step doubled along its shorter axis, from its even and from
/// its odd lines, when its cells are far from square (a board's are square but for the
/// view's foreshortening); none otherwise.
fn doubled_steps(w: &Window) -> Vec<Homography> {
    let mid = 0.5 * (w.n - 1) as f64;
    let step = |g: Point| Some(dist(w.h.apply([mid, mid])?, w.h.apply(g)?));
    let (Some(across), Some(down)) = (step([mid + 1.0, mid]), step([mid, mid + 1.0])) else {
        return Vec::new();
    };
    if across.max(down) < DOUBLING_ASPECT * across.min(down) {
        return Vec::new();
    }
    let columns = across < down;
    [0.0, 1.0]
        .into_iter()
        .map(|p| {
            // Line k of the doubled grid is line 2k + p of `w`'s.
            let every_other = if columns {
                Homography([2.0, 0.0, p, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
            } else {
                Homography([1.0, 0.0, 0.0, 0.0, 2.0, p, 0.0, 0.0, 1.0])
            };
            w.h.then_after(&every_other)
        })
        .collect()
}

/// Whether two hypotheses (grid → image) are one grid up to renumbering: a few of `a`'s grid
/// points land near `b`'s grid points, and `a`'s unit steps are unit steps of `b`.
fn same_grid(a: &Homography, b: &Homography) -> bool {
    let Some(inv) = b.inverse() else {
        return false;
    };
    let in_b = |g: Point| a.apply(g).and_then(|p| inv.apply(p));
    let Some(origin) = in_b([0.0, 0.0]) else {
        return false;
    };
    let near = |q: Point| (q[0] - q[0].round()).abs() < 0.1 && (q[1] - q[1].round()).abs() < 0.1;
    if !near(origin) {
        return false;
    }
    let unit = |g: Point| {
        in_b(g).is_some_and(|q| {
            let d = [(q[0] - origin[0]).round(), (q[1] - origin[1]).round()];
            near(q) && d[0].abs() + d[1].abs() == 1.0
        })
    };
    let far = |g: Point| in_b(g).is_some_and(near);
    unit([1.0, 0.0])
        && unit([0.0, 1.0])
        && [[6.0, 6.0], [-6.0, 6.0], [6.0, -6.0], [-6.0, -6.0]]
            .into_iter()
            .all(far)
}

/// How many intersections land near a grid point under `h` (grid → image), and those
/// intersections with their grid points.
fn explain(h: &Homography, points: &[(usize, usize, Point)]) -> (usize, Vec<(Point, Point)>) {
    let Some(inv) = h.inverse() else {
        return (0, Vec::new());
    };
    let mut out = Vec::new();
    for &(_, _, p) in points {
        let Some([u, v]) = inv.apply(p) else {
            continue;
        };
        let (ru, rv) = (u.round(), v.round());
        if (u - ru).abs() < GRID_TOL
            && (v - rv).abs() < GRID_TOL
            && ru.abs() <= REACH as f64
            && rv.abs() <= REACH as f64
        {
            out.push(([ru, rv], p));
        }
    }
    (out.len(), out)
}

/// Moves each grid line onto the dark line under it (sub-pixel), then refits the board map
/// on the crossings of the moved lines, ignoring crossings that disagree (hands, stones).
fn refine(hb: &Homography, n: usize, img: &Plane, rounds: usize) -> Option<Homography> {
    refine_rect(hb, [n, n], img, rounds)
}

/// `refine` on a window of `n[0]` columns and `n[1]` rows from (0, 0).
fn refine_rect(hb: &Homography, n: [usize; 2], img: &Plane, rounds: usize) -> Option<Homography> {
    let last = [(n[0].max(2) - 1) as f64, (n[1].max(2) - 1) as f64];
    let mut h = *hb;
    for round in 0..rounds {
        let spacing = {
            let c = [
                [0.0, 0.0],
                [last[0], 0.0],
                [last[0], last[1]],
                [0.0, last[1]],
            ]
            .map(|g| h.apply(g));
            let c: Vec<Point> = c.into_iter().collect::<Option<_>>()?;
            (0..4).map(|i| dist(c[i], c[(i + 1) % 4])).sum::<f64>() / (2.0 * (last[0] + last[1]))
        };
        // A grid whose cells outgrow the image is no board, and snapping its far-flung
        // lines would sample millions of points.
        if !(spacing.is_finite() && spacing < img.width.max(img.height) as f64) {
            return None;
        }
        let reach = if round == 0 {
            0.3 * spacing
        } else {
            0.12 * spacing
        }
        .max(1.5);
        let across = (LINE_WIDTH_REACH * spacing).max(MIN_LINE_REACH);
        let mut cols = Vec::with_capacity(n[0]);
        let mut rows = Vec::with_capacity(n[1]);
        for k in 0..n[0] {
            let x = k as f64;
            cols.push(snap_line(&h, [x, 0.0], [x, last[1]], reach, across, img)?);
        }
        for k in 0..n[1] {
            let y = k as f64;
            rows.push(snap_line(&h, [0.0, y], [last[0], y], reach, across, img)?);
        }
        let mut src = Vec::with_capacity(n[0] * n[1]);
        let mut dst = Vec::with_capacity(n[0] * n[1]);
        for (i, c) in cols.iter().enumerate() {
            for (j, r) in rows.iter().enumerate() {
                if let Some(p) = cross(c, r) {
                    src.push([i as f64, j as f64]);
                    dst.push(p);
                }
            }
        }
        let fit = fit_ransac(&src, &dst, (0.1 * spacing).max(1.0), 200, round as u64 + 1)?;
        if fit.inlier_count() < src.len() / 3 {
            return None;
        }
        h = fit.h;
    }
    Some(h)
}

/// A grid line, from grid point `a` to `b`, moved onto the strongest dark line within
/// `reach` pixels on either side, each half separately: the line through the two moved
/// half-midpoints. A point is on a dark line as far as it is darker than the lighter of the
/// two points `across` pixels either side across the line: the rim of a black stone, dark
/// with the stone on one side, does not pull the line off the grid.
fn snap_line(
    h: &Homography,
    a: Point,
    b: Point,
    reach: f64,
    across: f64,
    img: &Plane,
) -> Option<[Point; 2]> {
    let mut out = [[0.0; 2]; 2];
    for (half, slot) in out.iter_mut().enumerate() {
        let g0 = lerp(a, b, 0.5 * half as f64);
        let g1 = lerp(a, b, 0.5 * (half + 1) as f64);
        let (p0, p1) = (h.apply(g0)?, h.apply(g1)?);
        let len = dist(p0, p1);
        if !(2.0..=4.0 * (img.width + img.height) as f64).contains(&len) {
            return None;
        }
        let dir = [(p1[0] - p0[0]) / len, (p1[1] - p0[1]) / len];
        let normal = [-dir[1], dir[0]];
        // Every other pixel along the line is plenty to place it.
        let samples = (len / 2.0).ceil() as usize;
        let ridge = |v: f32, a: f32, b: f32| f64::from(ridge(v, a, b));
        let along = |i: usize| lerp(p0, p1, (i as f64 + 0.5) / samples as f64);
        let at = |p: Point, d: f64| img.sample(p[0] + d * normal[0], p[1] + d * normal[1]);
        let score = |d: f64| -> f64 {
            (0..samples)
                .map(|i| {
                    let p = along(i);
                    ridge(at(p, d), at(p, d + across), at(p, d - across))
                })
                .sum()
        };
        // Whole pixels over the reach, then quarter pixels around the best of them; a
        // parabola through the peak and its neighbours places it between quarters. On whole
        // pixels the wood is compared a whole number of pixels away, so each point's samples
        // across the line serve every offset.
        let whole = reach.ceil() as i64;
        let side = across.round().max(1.0) as i64;
        let span = whole + side;
        let mut column = vec![0.0f32; (2 * span + 1) as usize];
        let mut sums = vec![0.0f64; (2 * whole + 1) as usize];
        for i in 0..samples {
            let p = along(i);
            for (k, v) in column.iter_mut().enumerate() {
                *v = at(p, (k as i64 - span) as f64);
            }
            for (k, sum) in sums.iter_mut().enumerate() {
                let c = k + side as usize;
                *sum += ridge(
                    column[c],
                    column[c + side as usize],
                    column[c - side as usize],
                );
            }
        }
        let coarse =
            (0..sums.len()).max_by(|&a, &b| sums[a].total_cmp(&sums[b]))? as f64 - whole as f64;
        let fine: Vec<(f64, f64)> = (-4..=4)
            .map(|q| coarse + f64::from(q) / 4.0)
            .map(|d| (d, score(d)))
            .collect();
        let best = (0..fine.len()).max_by(|&i, &j| fine[i].1.total_cmp(&fine[j].1))?;
        let mut d = fine[best].0;
        if best > 0 && best + 1 < fine.len() {
            let (l, c, r) = (fine[best - 1].1, fine[best].1, fine[best + 1].1);
            let denom = l - 2.0 * c + r;
            if denom < 0.0 {
                d += (0.5 * (l - r) / denom).clamp(-0.5, 0.5) / 4.0;
            }
        }
        let mid = lerp(p0, p1, 0.5);
        *slot = [mid[0] + d * normal[0], mid[1] + d * normal[1]];
    }
    Some(out)
}

fn lerp(a: Point, b: Point, t: f64) -> Point {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
}

/// Where the lines through two point pairs cross.
fn cross(l: &[Point; 2], m: &[Point; 2]) -> Option<Point> {
    let (p, r) = (l[0], [l[1][0] - l[0][0], l[1][1] - l[0][1]]);
    let (q, s) = (m[0], [m[1][0] - m[0][0], m[1][1] - m[0][1]]);
    let denom = r[0] * s[1] - r[1] * s[0];
    if denom.abs() < 1e-9 {
        return None;
    }
    let t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / denom;
    Some([p[0] + t * r[0], p[1] + t * r[1]])
}

/// The board with its corners named as seen: board coordinates are renumbered (by one of
/// the square's eight symmetries) so that (0, 0) is the corner nearest the frame's top-left
/// and row 0 runs clockwise from it.
fn orient(grid: Homography, n: usize, score: f64) -> Option<FoundBoard> {
    let last = (n - 1) as f64;
    let g = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    let px: Vec<Point> = g.iter().map(|&p| grid.apply(p)).collect::<Option<_>>()?;
    let cx = px.iter().map(|p| p[0]).sum::<f64>() / 4.0;
    let cy = px.iter().map(|p| p[1]).sum::<f64>() / 4.0;
    // Clockwise on screen (y down) is increasing angle.
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| {
        let ang = |i: usize| (px[i][1] - cy).atan2(px[i][0] - cx);
        ang(a).total_cmp(&ang(b))
    });
    let start = (0..4).min_by(|&a, &b| {
        let s = |i: usize| px[order[i]][0] + px[order[i]][1];
        s(a).total_cmp(&s(b))
    })?;
    let idx: [usize; 4] = std::array::from_fn(|k| order[(start + k) % 4]);
    let corners = idx.map(|i| px[i]);
    let src = idx.map(|i| g[i]);
    // The renumbering is exact on the corners, so fitting it on them gives the symmetry.
    let sym = Homography::fit(&g, &src)?;
    Some(FoundBoard {
        size: BoardSize::square(n).ok()?,
        corners,
        grid: grid.then_after(&sym),
        score,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::PixelFormat;

    #[test]
    fn only_a_grid_of_oblong_cells_is_tried_at_twice_its_shorter_step() {
        let window = |across: f64, down: f64| Window {
            evidence: 0.0,
            score: 0.0,
            n: 19,
            h: Homography([across, 0.0, 40.0, 0.0, down, 30.0, 0.0, 0.0, 1.0]),
        };
        // Cells at 45° (1.4 times as wide as deep) are a board's own.
        assert!(doubled_steps(&window(14.0, 10.0)).is_empty());
        // Half-width columns: every other one, from the even and from the odd lines.
        let doubled = doubled_steps(&window(8.0, 17.0));
        assert_eq!(doubled.len(), 2);
        for (parity, h) in doubled.iter().enumerate() {
            let origin = h.apply([0.0, 0.0]).unwrap();
            assert!(dist(origin, [40.0 + 8.0 * parity as f64, 30.0]) < 1e-9);
            assert!(dist(h.apply([1.0, 1.0]).unwrap(), [origin[0] + 16.0, 47.0]) < 1e-9);
        }
        // Half-depth rows likewise.
        let rows = doubled_steps(&window(17.0, 8.0));
        assert!(dist(rows[1].apply([1.0, 1.0]).unwrap(), [57.0, 30.0 + 24.0]) < 1e-9);
    }

    /// A rendered board: wood with dark grid lines under the perspective map `h` (board
    /// coordinates → pixels), on a darker table, 3x3 supersampled.
    fn render(n: usize, h: &Homography, width: usize, height: usize) -> Frame {
        let inv = h.inverse().unwrap();
        let last = (n - 1) as f64;
        let mut data = Vec::with_capacity(width * height);
        for y in 0..height {
            for x in 0..width {
                let mut sum = 0.0;
                for sy in 0..3 {
                    for sx in 0..3 {
                        let p = [
                            x as f64 + (sx as f64 - 1.0) / 3.0,
                            y as f64 + (sy as f64 - 1.0) / 3.0,
                        ];
                        let [u, v] = inv.apply(p).unwrap();
                        let on_board =
                            (-0.7..=last + 0.7).contains(&u) && (-0.7..=last + 0.7).contains(&v);
                        let near = |a: f64, b: f64| {
                            (a - a.round()).abs() < 0.05
                                && (0.0..=last).contains(&a.round())
                                && (-0.05..=last + 0.05).contains(&b)
                        };
                        sum += if !on_board {
                            70.0
                        } else if near(u, v) || near(v, u) {
                            50.0
                        } else {
                            190.0
                        };
                    }
                }
                data.push((sum / 9.0) as u8);
            }
        }
        Frame::new(width, height, PixelFormat::Grey, data).unwrap()
    }

    /// Corner error allowed, in cells at that corner. The rendered lines are a tenth of a
    /// cell wide (printed ones are about half that), and snapping compares a line with the
    /// wood only 0.06 cell either side (`LINE_WIDTH_REACH`), so on a line this wide it can
    /// settle off the line's middle.
    const TOLERANCE: f64 = 0.15;

    fn check(n: usize, h: Homography) {
        let frame = render(n, &h, 640, 480);
        let board = find_board(&frame).unwrap_or_else(|e| panic!("{n}x{n}: {e}"));
        assert_eq!(board.size.width(), n);
        let last = (n - 1) as f64;
        let truth =
            [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]].map(|g| h.apply(g).unwrap());
        // Each corner against the cell size there: in a steep view the near cells are
        // twice the far ones.
        for c in board.corners {
            let (k, nearest) = (0..4)
                .map(|k| (k, dist(truth[k], c)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            let local = (dist(truth[k], truth[(k + 1) % 4]) + dist(truth[k], truth[(k + 3) % 4]))
                / (2.0 * last);
            assert!(
                nearest < TOLERANCE * local,
                "{n}x{n}: corner {c:?} is {nearest:.2} px off (cells {local:.0} px)"
            );
        }
        // Named as seen: top-left has the smallest x + y, and the order runs clockwise.
        let sums = board.corners.map(|c| c[0] + c[1]);
        assert!(sums.iter().all(|&s| s >= sums[0]));
        assert!(board.corners[1][0] > board.corners[3][0]);
    }

    /// A tilted view: board coordinates scaled to `cell` pixels, then a mild perspective.
    fn view(n: usize, cell: f64) -> Homography {
        let span = cell * (n - 1) as f64;
        let src = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
            .map(|[a, b]| [a * (n - 1) as f64, b * (n - 1) as f64]);
        let (x0, y0) = (320.0 - span / 2.0, 240.0 - span / 2.0);
        let dst = [
            [x0 + 0.08 * span, y0],
            [x0 + 0.95 * span, y0 + 0.05 * span],
            [x0 + span, y0 + span],
            [x0 - 0.02 * span, y0 + 0.97 * span],
        ];
        Homography::fit(&src, &dst).unwrap()
    }

    #[test]
    fn finds_rendered_19x19_and_13x13_boards() {
        check(19, view(19, 22.0));
        check(13, view(13, 28.0));
    }

    #[test]
    fn finds_rendered_9x9_boards_at_several_scales() {
        // A false line half-way between grid lines once hid every true cell of a 9x9 board.
        for cell in [30.0, 36.0, 42.0] {
            check(9, view(9, cell));
        }
    }

    /// A steep view: the far edge much shorter than the near one, as from a camera looking
    /// down at about 40 degrees from the side of the table.
    fn steep(n: usize) -> Homography {
        let last = (n - 1) as f64;
        let src = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
        let dst = [[220.0, 90.0], [430.0, 95.0], [560.0, 420.0], [80.0, 410.0]];
        Homography::fit(&src, &dst).unwrap()
    }

    #[test]
    fn finds_steeply_viewed_boards_of_every_size() {
        for n in SIZES {
            check(n, steep(n));
        }
    }

    #[test]
    fn a_grid_on_diagonals_is_renumbered_onto_the_board_lines() {
        let board = view(19, 22.0);
        // Steps (1, 0) and (1, 1) of the board: the same crossings, the wrong lines.
        let diagonal = board.then_after(&Homography([1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]));
        assert!(!same_grid(&diagonal, &board));
        let fixed = reduced(&diagonal).unwrap();
        assert!(same_grid(&fixed, &board));
        assert!(same_grid(&reduced(&board).unwrap(), &board));
    }

    #[test]
    fn blank_frames_have_no_board() {
        for level in [0, 128, 255] {
            let frame = Frame::filled_grey(640, 480, level).unwrap();
            assert_eq!(
                find_board(&frame),
                Err(NoBoard::TooFewLines),
                "level {level}"
            );
        }
    }

    #[test]
    fn a_smooth_gradient_has_no_board() {
        let data = (0..320 * 240)
            .map(|i| ((i % 320) * 255 / 320) as u8)
            .collect();
        let frame = Frame::new(320, 240, PixelFormat::Grey, data).unwrap();
        assert!(find_board(&frame).is_err());
    }
}
