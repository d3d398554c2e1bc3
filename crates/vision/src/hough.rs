//! Straight lines from a map of line pixels: a Hough transform in (angle, distance) with
//! non-maximum suppression.

use crate::filter::Plane;

/// Angle bins over half a turn (one degree each).
const THETA_BINS: usize = 180;

/// A line `x cos θ + y sin θ = rho`, with the votes it got.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// The normal's angle in radians, in [0, π).
    pub theta: f64,
    /// Signed distance from the origin, pixels.
    pub rho: f64,
    /// Accumulated weight.
    pub votes: f32,
}

impl Line {
    /// The unit normal.
    pub fn normal(&self) -> [f64; 2] {
        [self.theta.cos(), self.theta.sin()]
    }

    /// Where two lines cross, `None` when (nearly) parallel.
    pub fn intersect(&self, other: &Line) -> Option<[f64; 2]> {
        let [a, b] = self.normal();
        let [c, d] = other.normal();
        let det = a * d - b * c;
        if det.abs() < 1e-6 {
            return None;
        }
        Some([
            (self.rho * d - b * other.rho) / det,
            (a * other.rho - self.rho * c) / det,
        ])
    }
}

/// The strongest lines through the pixels whose value is at least `threshold`, one vote
/// each (a faint long grid line must outweigh a bold short edge): at most `max_lines`, none below `min_fraction` of the strongest,
/// and no two within `rho_window` pixels and `theta_window` degrees of each other.
pub fn lines(
    map: &Plane,
    threshold: f32,
    max_lines: usize,
    min_fraction: f32,
    rho_window: usize,
    theta_window: usize,
) -> Vec<Line> {
    let diag = ((map.width.pow(2) + map.height.pow(2)) as f64)
        .sqrt()
        .ceil() as usize;
    let rho_bins = 2 * diag + 1;
    let mut acc = vec![0.0f32; THETA_BINS * rho_bins];
    let trig: Vec<(f64, f64)> = (0..THETA_BINS)
        .map(|t| {
            let a = (t as f64).to_radians();
            (a.cos(), a.sin())
        })
        .collect();
    for y in 0..map.height {
        for x in 0..map.width {
            let v = map.data[y * map.width + x];
            if v < threshold {
                continue;
            }
            for (t, &(c, s)) in trig.iter().enumerate() {
                // Split the vote between the two nearest distance bins: rounding would
                // bunch pixels into some bins at angles like 45° and make false peaks.
                let r = x as f64 * c + y as f64 * s + diag as f64;
                let r0 = r.floor();
                let f = (r - r0) as f32;
                let i = t * rho_bins + r0 as usize;
                acc[i] += 1.0 - f;
                if (r0 as usize) + 1 < rho_bins {
                    acc[i + 1] += f;
                }
            }
        }
    }
    // Reads a cell; past either end of the angle range the same line has the opposite rho.
    let cell = |t: i64, r: i64| -> f32 {
        let (t, r) = if t < 0 {
            (t + THETA_BINS as i64, 2 * diag as i64 - r)
        } else if t >= THETA_BINS as i64 {
            (t - THETA_BINS as i64, 2 * diag as i64 - r)
        } else {
            (t, r)
        };
        if r < 0 || r >= rho_bins as i64 {
            return 0.0;
        }
        acc[t as usize * rho_bins + r as usize]
    };
    let mut peaks = Vec::new();
    let (tw, rw) = (theta_window as i64, rho_window as i64);
    // Cells under the final floor can never be kept, so they need no neighbourhood test.
    let floor = acc.iter().copied().fold(0.0f32, f32::max) * min_fraction;
    for t in 0..THETA_BINS as i64 {
        for r in 0..rho_bins as i64 {
            let v = acc[t as usize * rho_bins + r as usize];
            if v <= 0.0 || v < floor {
                continue;
            }
            let mut is_max = true;
            'nb: for dt in -tw..=tw {
                for dr in -rw..=rw {
                    if (dt, dr) == (0, 0) {
                        continue;
                    }
                    let n = cell(t + dt, r + dr);
                    // Ties go to the earlier cell so a flat top gives one peak.
                    if n > v || (n == v && (dt, dr) < (0, 0)) {
                        is_max = false;
                        break 'nb;
                    }
                }
            }
            if is_max {
                peaks.push(Line {
                    theta: (t as f64).to_radians(),
                    rho: (r - diag as i64) as f64,
                    votes: v,
                });
            }
        }
    }
    peaks.sort_by(|a, b| b.votes.total_cmp(&a.votes));
    let floor = peaks.first().map_or(0.0, |p| p.votes * min_fraction);
    peaks.retain(|p| p.votes >= floor);
    peaks.truncate(max_lines);
    peaks
}
