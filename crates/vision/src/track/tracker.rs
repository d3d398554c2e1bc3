//! Following a found board from frame to frame: every grid line is searched for a short
//! way either side of where the last frame had it, the homography is refitted on the
//! crossings of the lines found, and only when too few lines are where they should be (a
//! nudged board, a shift by a whole line) is the board searched for again from scratch.

use tengen_rules::BoardSize;

use crate::filter::{dark_lines, downscale, Plane};
use crate::find::{find_board, FoundBoard, NoBoard};
use crate::frame::Frame;
use crate::homography::{fit_ransac, Homography, Point};

// Frames are tracked at the finder's working size, with its line map.
use crate::find::{LINE_RADIUS, WORK_SIDE};
/// How far (in line spacings) a line is searched for either side of its last place.
const REACH: f64 = 0.35;
/// A half line counts as found when it shows this share of the board's usual contrast.
const FOUND_SHARE: f64 = 0.35;
/// Below this share of half lines found, the board is searched for again.
const LOST_SHARE: f64 = 0.2;
/// At or above this share the refitted homography is taken; between the two, the board
/// is partly hidden (a hand) and the last homography is kept.
const TRACK_SHARE: f64 = 0.5;
/// Frames in a row the grid may look a whole line off before the board is searched for
/// afresh (meanwhile the last board is kept, as hidden). A hand over one edge can hide the
/// outermost line and show its own edge a spacing outside: one frame of that made a
/// rendered 19x19 video search again under the hand, land a line off and track the shifted
/// lattice. A board really nudged a line stays so.
pub const SHIFT_PATIENCE: u8 = 2;

/// How this frame's board was obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackStatus {
    /// Found from scratch in this frame (the first, or after a nudge).
    Found,
    /// Followed from the last frame.
    Tracking,
    /// Followed, but much of the grid is hidden: the last frame's homography is kept.
    Hidden,
    /// Placed by the configuration's corners.
    Manual,
    /// No board in this frame: every point is unseen.
    Lost(NoBoard),
    /// No frame came (the source failed): every point is unseen.
    NoFrame,
}

/// A frame's board and how it was obtained.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracked {
    /// The board, unless lost.
    pub board: Option<FoundBoard>,
    /// How it was obtained.
    pub status: TrackStatus,
    /// The share of grid half-lines seen where expected, 0 when lost.
    pub seen: f64,
}

/// Follows one board across frames (sans-IO: frames in, boards out).
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    board: Option<FoundBoard>,
    /// The median contrast of the board's half lines when it was found.
    reference: f64,
    /// Corners from the configuration: never searched for, only refined.
    manual: Option<FoundBoard>,
    /// Frames in a row the grid has looked a line off.
    shifted_frames: u8,
}

/// A board placed by its four outermost intersections (top-left, top-right, bottom-right,
/// bottom-left as seen), for manual corners in a configuration.
pub fn board_from_corners(size: BoardSize, corners: [Point; 4]) -> Option<FoundBoard> {
    let last = (size.width().max(2) - 1) as f64;
    let g = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]];
    let grid = Homography::fit(&g, &corners)?;
    Some(FoundBoard {
        size,
        corners,
        grid,
        score: 0.0,
    })
}

impl Tracker {
    /// A tracker that finds the board by itself.
    pub fn new() -> Tracker {
        Tracker::default()
    }

    /// A tracker that starts from (and falls back to) a board placed by hand.
    pub fn with_board(board: FoundBoard) -> Tracker {
        Tracker {
            board: None,
            reference: 0.0,
            manual: Some(board),
            shifted_frames: 0,
        }
    }

    /// The board followed now, if any.
    pub fn board(&self) -> Option<&FoundBoard> {
        self.board.as_ref()
    }

    /// Forgets the board: the next frame searches for it from scratch.
    pub fn reset(&mut self) {
        self.board = None;
    }

    /// The board in this frame.
    pub fn update(&mut self, frame: &Frame) -> Tracked {
        let work = Work::new(frame);
        if let Some(prev) = self.board.clone() {
            if let Some(t) = self.follow(&work, &prev) {
                return t;
            }
        }
        self.acquire(frame, &work)
    }

    /// The board found again from scratch (or the manual one), with its reference contrast.
    fn acquire(&mut self, frame: &Frame, work: &Work) -> Tracked {
        // A fresh search starts a fresh count of frames that look shifted.
        self.shifted_frames = 0;
        let (found, status) = match &self.manual {
            Some(m) => (Ok(m.clone()), TrackStatus::Manual),
            None => (find_board(frame), TrackStatus::Found),
        };
        match found {
            Ok(board) => {
                let h = work.to_work.then_after(&board.grid);
                let halves = measure(&work.map, &h, board.size.width(), 0.15);
                let mut c: Vec<f64> = halves.iter().map(|s| s.contrast).collect();
                c.sort_by(f64::total_cmp);
                self.reference = c.get(c.len() / 2).copied().unwrap_or(0.0).max(1e-3);
                self.board = Some(board.clone());
                Tracked {
                    board: Some(board),
                    status,
                    seen: 1.0,
                }
            }
            Err(why) => {
                self.board = None;
                Tracked {
                    board: None,
                    status: TrackStatus::Lost(why),
                    seen: 0.0,
                }
            }
        }
    }

    /// The board followed from `prev`, or `None` when it must be searched for again.
    fn follow(&mut self, work: &Work, prev: &FoundBoard) -> Option<Tracked> {
        let n = prev.size.width();
        let h = work.to_work.then_after(&prev.grid);
        let halves = measure(&work.map, &h, n, REACH);
        let found = |s: &HalfSnap| s.contrast >= FOUND_SHARE * self.reference;
        let seen = halves.iter().filter(|s| found(s)).count() as f64 / halves.len() as f64;
        if seen < LOST_SHARE {
            return None;
        }
        let keep = |status| {
            Some(Tracked {
                board: Some(prev.clone()),
                status,
                seen,
            })
        };
        if shifted_by_a_line(&work.map, &h, n, self.reference) {
            if self.shifted_frames >= SHIFT_PATIENCE {
                self.shifted_frames = 0;
                return None;
            }
            self.shifted_frames += 1;
            return keep(TrackStatus::Hidden);
        }
        self.shifted_frames = 0;
        if seen < TRACK_SHARE {
            return keep(TrackStatus::Hidden);
        }
        let Some(refit) = refit(&halves, &h, n, &found) else {
            return keep(TrackStatus::Hidden);
        };
        let grid = work.to_frame.then_after(&refit);
        let last = (n - 1) as f64;
        let corners = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]]
            .map(|g| grid.apply(g))
            .into_iter()
            .collect::<Option<Vec<_>>>()?;
        let board = FoundBoard {
            size: prev.size,
            corners: [corners[0], corners[1], corners[2], corners[3]],
            grid,
            score: prev.score,
        };
        self.board = Some(board.clone());
        Some(Tracked {
            board: Some(board),
            status: TrackStatus::Tracking,
            seen,
        })
    }
}

/// A frame at working scale: its dark-line map and the maps between frame and work pixels.
struct Work {
    map: Plane,
    to_work: Homography,
    to_frame: Homography,
}

impl Work {
    fn new(frame: &Frame) -> Work {
        let (w, h) = (frame.width(), frame.height());
        let factor = (WORK_SIDE / w.max(h) as f64).min(1.0);
        let img = downscale(&frame.to_grey(), w, h, factor);
        let s = 1.0 / factor;
        // Pixel centres: work pixel x covers frame pixels [x·s, (x+1)·s).
        let to_frame = Homography([s, 0.0, 0.5 * s - 0.5, 0.0, s, 0.5 * s - 0.5, 0.0, 0.0, 1.0]);
        let to_work = to_frame.inverse().unwrap_or(Homography::IDENTITY);
        Work {
            map: dark_lines(&img, LINE_RADIUS),
            to_work,
            to_frame,
        }
    }
}

/// One half of a grid line, searched for across its predicted place.
#[derive(Clone, Copy, Debug)]
struct HalfSnap {
    /// Where the half's middle lies after the search (work pixels).
    mid: Point,
    /// The line's direction there (unit vector, work pixels).
    dir: Point,
    /// How much the line stands out: its mean line strength less the mean half a spacing
    /// either side.
    contrast: f64,
}

/// Every grid line's two halves (columns first, then rows; two halves each) searched for
/// within `reach` spacings of their place under `h` (board → work pixels).
fn measure(map: &Plane, h: &Homography, n: usize, reach: f64) -> Vec<HalfSnap> {
    let last = (n - 1) as f64;
    let mut out = Vec::with_capacity(4 * n);
    for col in [true, false] {
        for k in 0..n {
            let x = k as f64;
            let (a, b) = if col {
                ([x, 0.0], [x, last])
            } else {
                ([0.0, x], [last, x])
            };
            for half in 0..2 {
                let g0 = lerp(a, b, 0.5 * half as f64);
                let g1 = lerp(a, b, 0.5 * (half + 1) as f64);
                out.push(snap(map, h, g0, g1, reach).unwrap_or(HalfSnap {
                    mid: [f64::NAN; 2],
                    dir: [0.0; 2],
                    contrast: 0.0,
                }));
            }
        }
    }
    out
}

/// The segment from grid point `g0` to `g1`, moved across itself onto the strongest line
/// within `reach` spacings (the spacing measured across, at the segment).
fn snap(map: &Plane, h: &Homography, g0: Point, g1: Point, reach: f64) -> Option<HalfSnap> {
    let (p0, p1) = (h.apply(g0)?, h.apply(g1)?);
    let len = dist(p0, p1);
    if !(2.0..1e5).contains(&len) {
        return None;
    }
    let dir = [(p1[0] - p0[0]) / len, (p1[1] - p0[1]) / len];
    let normal = [-dir[1], dir[0]];
    // The spacing here: how far the next line over lies, across this one.
    let gm = lerp(g0, g1, 0.5);
    let across = if (g1[0] - g0[0]).abs() < 1e-9 {
        [gm[0] + 1.0, gm[1]]
    } else {
        [gm[0], gm[1] + 1.0]
    };
    let mid = lerp(p0, p1, 0.5);
    let q = h.apply(across)?;
    let spacing = ((q[0] - mid[0]) * normal[0] + (q[1] - mid[1]) * normal[1]).abs();
    if !(3.0..1e4).contains(&spacing) {
        return None;
    }
    let samples = (len / 2.0).ceil().min(400.0) as usize;
    let profile = |d: f64| -> f64 {
        (0..samples)
            .map(|i| {
                let p = lerp(p0, p1, (i as f64 + 0.5) / samples as f64);
                f64::from(map.sample(p[0] + d * normal[0], p[1] + d * normal[1]))
            })
            .sum::<f64>()
            / samples as f64
    };
    let steps = (2.0 * reach * spacing).ceil().max(1.0) as i64;
    let scores: Vec<f64> = (-steps..=steps).map(|s| profile(s as f64 * 0.5)).collect();
    let best = (0..scores.len()).max_by(|&i, &j| scores[i].total_cmp(&scores[j]))?;
    let mut offset = best as f64;
    if best > 0 && best + 1 < scores.len() {
        let (l, c, r) = (scores[best - 1], scores[best], scores[best + 1]);
        let denom = l - 2.0 * c + r;
        if denom < 0.0 {
            offset += (0.5 * (l - r) / denom).clamp(-0.5, 0.5);
        }
    }
    let d = (offset - steps as f64) * 0.5;
    let beside = 0.5 * (profile(d - 0.5 * spacing) + profile(d + 0.5 * spacing));
    Some(HalfSnap {
        mid: [mid[0] + d * normal[0], mid[1] + d * normal[1]],
        dir,
        contrast: scores[best] - beside,
    })
}

/// The homography refitted (RANSAC) on the crossings of the lines found; a line with one
/// half found is taken parallel to its old place through that half.
fn refit(
    halves: &[HalfSnap],
    h: &Homography,
    n: usize,
    found: &dyn Fn(&HalfSnap) -> bool,
) -> Option<Homography> {
    let line = |i: usize| -> Option<[Point; 2]> {
        let (a, b) = (&halves[2 * i], &halves[2 * i + 1]);
        match (found(a), found(b)) {
            (true, true) => Some([a.mid, b.mid]),
            (true, false) => Some([a.mid, add(a.mid, a.dir)]),
            (false, true) => Some([b.mid, add(b.mid, b.dir)]),
            (false, false) => None,
        }
    };
    let mut src = Vec::with_capacity(n * n);
    let mut dst = Vec::with_capacity(n * n);
    for c in 0..n {
        let Some(lc) = line(c) else { continue };
        for r in 0..n {
            let Some(lr) = line(n + r) else { continue };
            if let Some(p) = cross(&lc, &lr) {
                src.push([c as f64, r as f64]);
                dst.push(p);
            }
        }
    }
    let spacing = {
        let a = h.apply([0.0, 0.0])?;
        let b = h.apply([(n - 1) as f64, (n - 1) as f64])?;
        dist(a, b) / ((n - 1) as f64 * std::f64::consts::SQRT_2)
    };
    let fit = fit_ransac(&src, &dst, (0.12 * spacing).max(1.0), 60, 7)?;
    (fit.inlier_count() * 2 >= src.len() && fit.inlier_count() >= 8).then_some(fit.h)
}

/// Whether the grid sits a whole line off: the line just outside one edge shows as a grid
/// line while the opposite outermost line shows nothing.
fn shifted_by_a_line(map: &Plane, h: &Homography, n: usize, reference: f64) -> bool {
    let last = (n - 1) as f64;
    let strong = |a: Point, b: Point, share: f64| {
        (0..2).all(|half| {
            let g0 = lerp(a, b, 0.5 * half as f64);
            let g1 = lerp(a, b, 0.5 * (half + 1) as f64);
            snap(map, h, g0, g1, 0.15).is_some_and(|s| s.contrast >= share * reference)
        })
    };
    let col = |x: f64| ([x, 0.0], [x, last]);
    let row = |y: f64| ([0.0, y], [last, y]);
    let pairs = [
        (col(-1.0), col(last)),
        (col(last + 1.0), col(0.0)),
        (row(-1.0), row(last)),
        (row(last + 1.0), row(0.0)),
    ];
    // The far edge must be blank on both halves, not merely covered on one.
    let blank = |a: Point, b: Point| {
        (0..2).all(|half| {
            let g0 = lerp(a, b, 0.5 * half as f64);
            let g1 = lerp(a, b, 0.5 * (half + 1) as f64);
            snap(map, h, g0, g1, 0.15).map_or(0.0, |s| s.contrast) < FOUND_SHARE * reference
        })
    };
    pairs
        .iter()
        .any(|&((a, b), (c, d))| strong(a, b, 0.6) && blank(c, d))
}

fn lerp(a: Point, b: Point, t: f64) -> Point {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
}

fn add(a: Point, b: Point) -> Point {
    [a[0] + b[0], a[1] + b[1]]
}

fn dist(a: Point, b: Point) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
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
