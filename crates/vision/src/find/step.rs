//! A window's grid steps measured again on the image: a hypothesis built from a few Hough
//! lines can settle on a step that is a fraction of the board's (a faint second edge of each
//! line, a row of stones, the lines three apart), and still gather evidence from the lines
//! it meets. The board's lines across a window repeat at the board's step, so the period of
//! line support along each axis of the window tells the step the lines really have.

use crate::homography::{Homography, Point};

use super::dist;
use super::window::{in_front, Support};

/// Line support is profiled across each axis at this many samples a cell.
const PROFILE_STEPS: usize = 20;
/// Samples a cell along each profiled line.
const ALONG_STEPS: usize = 4;
/// Steps tried, as multiples of the window's own: from a little over half of it (a clear
/// board's lines halved would stand out about as well, see `NEAR_BEST`) to under twice it
/// (a doubled step is `doubled_steps`' to try).
const SCALES: (f64, f64) = (0.55, 1.9);
/// A step whose lines stand out this share of the best step's as much counts as good.
const NEAR_BEST: f64 = 0.9;
/// Scales tried apart, and phases apart as a share of the step tried.
const SCALE_STEP: f64 = 0.01;
const PHASE_STEP: f64 = 0.05;
/// A measured step replaces the window's when it differs from it by this share or more;
/// below that, snapping the window onto its lines corrects it.
const MIN_CHANGE: f64 = 0.15;
/// Not when the window's lines stand out less than this from its half-way lines: those are
/// lines as well, the window's step a multiple of the board's, which is no period to measure
/// from (and the window choice passes over such a grid).
const MIN_OWN: f64 = 0.01;
/// And when its lines stand out from the half-way lines by this many times the window's own,
const MIN_GAIN: f64 = 2.0;
/// and by this share of how the other axis' lines stand out at the window's step.
const ALIKE: f64 = 0.5;
/// And by this much at least, in line support (the support of a clear line is 1).
const MIN_CONTRAST: f64 = 0.2;

/// Line support across the window along one axis: `values[i]` for the lines of constant
/// coordinate `from + i / PROFILE_STEPS` on that axis, averaged over the window's extent
/// along them.
struct Profile {
    from: f64,
    values: Vec<f64>,
}

impl Profile {
    /// The profile of `h`'s window of `n` lines across axis `axis` (0: columns).
    fn across(h: &Homography, n: usize, axis: usize, support: &Support) -> Option<Profile> {
        let front = in_front(h);
        let at = |u: f64, t: f64| if axis == 0 { [u, t] } else { [t, u] };
        let last = (n - 1) as f64;
        let (from, to) = (-0.5, last + 0.5);
        let count = ((to - from) * PROFILE_STEPS as f64) as usize + 1;
        let mut values = Vec::with_capacity(count);
        for i in 0..count {
            let u = from + i as f64 / PROFILE_STEPS as f64;
            let (mut sum, mut seen) = (0.0, 0u32);
            for j in 0..=(n - 1) * ALONG_STEPS {
                let t = j as f64 / ALONG_STEPS as f64;
                let (Some(p), Some(q)) = (front(at(u, t)), front(at(u, t + 0.1))) else {
                    continue;
                };
                let len = dist(p, q);
                if len <= 1e-9 {
                    continue;
                }
                let dir: Point = [(q[0] - p[0]) / len, (q[1] - p[1]) / len];
                sum += support.at(p, dir);
                seen += 1;
            }
            values.push(if seen > 0 { sum / f64::from(seen) } else { 0.0 });
        }
        (values.len() > 2).then_some(Profile { from, values })
    }

    /// The support at coordinate `u`, interpolated; `None` outside the profile.
    fn at(&self, u: f64) -> Option<f64> {
        let x = (u - self.from) * PROFILE_STEPS as f64;
        if x < 0.0 || x > (self.values.len() - 1) as f64 {
            return None;
        }
        let i = (x as usize).min(self.values.len() - 2);
        let f = x - i as f64;
        Some(self.values[i] * (1.0 - f) + self.values[i + 1] * f)
    }

    /// How lines at `phase + k * scale` stand out from the half-way lines between them: the
    /// mean support on them less the mean half-way.
    fn contrast(&self, scale: f64, phase: f64) -> f64 {
        let (lo, hi) = (
            self.from,
            self.from + (self.values.len() - 1) as f64 / PROFILE_STEPS as f64,
        );
        let k0 = ((lo - phase) / scale).ceil() as i64;
        let (mut on, mut non, mut off, mut noff) = (0.0, 0u32, 0.0, 0u32);
        let mut k = k0;
        loop {
            let u = phase + k as f64 * scale;
            if u > hi {
                break;
            }
            if let Some(v) = self.at(u) {
                on += v;
                non += 1;
            }
            if let Some(v) = self.at(u + 0.5 * scale) {
                off += v;
                noff += 1;
            }
            k += 1;
        }
        // Fewer than three lines in the window say nothing about a period.
        if non < 3 || noff < 2 {
            return f64::MIN;
        }
        on / f64::from(non) - off / f64::from(noff)
    }

    /// The phase at which lines `scale` apart stand out most, and how much.
    fn best_phase(&self, scale: f64) -> (f64, f64) {
        let phases = (1.0 / PHASE_STEP).round() as usize;
        (0..phases)
            .map(|j| {
                let phase = j as f64 * PHASE_STEP * scale;
                (phase, self.contrast(scale, phase))
            })
            .fold((0.0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a })
    }

    /// The step and phase whose lines stand out most, and how much: the shortest step
    /// within `NEAR_BEST` of the best, since lines three steps apart (any odd number) stand
    /// out from their half-way lines as well as the board's own do.
    fn best_period(&self) -> (f64, f64, f64) {
        let scales = ((SCALES.1 - SCALES.0) / SCALE_STEP).round() as usize;
        let per_scale: Vec<(f64, f64, f64)> = (0..=scales)
            .map(|i| {
                let scale = SCALES.0 + i as f64 * SCALE_STEP;
                let (phase, contrast) = self.best_phase(scale);
                (scale, phase, contrast)
            })
            .collect();
        let top = per_scale.iter().map(|p| p.2).fold(f64::MIN, f64::max);
        per_scale
            .into_iter()
            .find(|p| p.2 >= NEAR_BEST * top)
            .unwrap_or((1.0, 0.0, f64::MIN))
    }
}

/// `h`'s window of `n` lines with an axis renumbered onto the step its line support
/// repeats at, when that differs from the window's own and shows the lines about as clearly
/// as the other axis does at its own step (a board's two families are printed alike);
/// `None` when neither axis is renumbered.
pub(super) fn restepped(h: &Homography, n: usize, support: &Support) -> Option<Homography> {
    let profiles = [
        Profile::across(h, n, 0, support)?,
        Profile::across(h, n, 1, support)?,
    ];
    // Each axis at the window's step (its best phase: a grid half a cell off its lines
    // is the window's to settle), and at the step it shows best.
    let own = profiles.each_ref().map(|p| p.best_phase(1.0).1);
    let best = profiles.each_ref().map(Profile::best_period);
    let mut map = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let mut changed = false;
    for axis in 0..2 {
        let (scale, phase, contrast) = best[axis];
        if (scale - 1.0).abs() >= MIN_CHANGE
            && own[axis] >= MIN_OWN
            && contrast >= MIN_GAIN * own[axis]
            && contrast >= ALIKE * own[1 - axis]
            && contrast >= MIN_CONTRAST
        {
            // New line k lies at old coordinate phase + k * scale.
            map[axis * 3 + axis] = scale;
            map[axis * 3 + 2] = phase;
            changed = true;
        }
    }
    changed.then(|| h.then_after(&Homography(map)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Plane;

    /// Dark 2-pixel lines every 12 pixels from x = y = 12 over wood of grey 170.
    fn ruled() -> Plane {
        let side = 260;
        let mut data = vec![170.0f32; side * side];
        for k in 0..20 {
            let at = 12 + 12 * k;
            for t in 0..side {
                for d in 0..2 {
                    data[t * side + at + d] = 40.0;
                    data[(at + d) * side + t] = 40.0;
                }
            }
        }
        Plane {
            width: side,
            height: side,
            data,
        }
    }

    /// Board coordinates → pixels with the given steps, column 0 and row 0 on lines.
    fn grid(across: f64, down: f64) -> Homography {
        Homography([across, 0.0, 13.0, 0.0, down, 13.0, 0.0, 0.0, 1.0])
    }

    #[test]
    fn a_window_at_one_and_a_half_steps_down_is_renumbered_onto_the_lines() {
        let img = ruled();
        let support = Support::new(&img, 0.3);
        let h = restepped(&grid(12.0, 18.0), 9, &support).expect("rows restepped");
        // Rows of the new grid are 12 pixels apart on the lines; columns stay as they were.
        let p = |c: f64, r: f64| h.apply([c, r]).unwrap();
        let down = p(0.0, 1.0)[1] - p(0.0, 0.0)[1];
        assert!((down - 12.0).abs() < 0.5, "{down}");
        // On a line to within a fifth of a cell (the line support is flat across a line's
        // width and the two pixels either side; snapping settles the rest).
        let offset = (p(0.0, 0.0)[1] - 13.0).rem_euclid(12.0);
        assert!(offset.min(12.0 - offset) < 2.4, "{offset}");
        assert!((p(1.0, 0.0)[0] - p(0.0, 0.0)[0] - 12.0).abs() < 1e-9);
    }

    #[test]
    fn a_window_on_the_lines_is_left_alone() {
        let img = ruled();
        let support = Support::new(&img, 0.3);
        assert!(restepped(&grid(12.0, 12.0), 9, &support).is_none());
    }

    #[test]
    fn a_step_is_never_renumbered_off_the_lines() {
        let img = ruled();
        let support = Support::new(&img, 0.3);
        // Every other line: its half-way lines are lines too, so any renumbering must keep
        // to the ruled lines (lines three apart do, and are the shortest step tried that
        // stands out as well as the board's).
        for (across, down) in [(24.0, 24.0), (12.0, 18.0), (15.0, 12.0)] {
            let Some(h) = restepped(&grid(across, down), 9, &support) else {
                continue;
            };
            for k in 0..9 {
                let p = h.apply([k as f64, k as f64]).unwrap();
                for v in p {
                    let off = (v - 13.0).rem_euclid(12.0);
                    assert!(
                        off.min(12.0 - off) < 2.4,
                        "{across}x{down}: line {k} at {v}"
                    );
                }
            }
        }
    }
}
