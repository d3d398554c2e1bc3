//! Stone height in a slanted view: a stone's top is nearer the camera than the board, so
//! it shows displaced away from the point under the camera. The camera's position is
//! recovered from the grid homography (principal point at the frame's centre, square
//! pixels, focal length from the two constraints a plane's rotation gives), and each patch
//! is centred half-way up the stone instead of on its base.

use crate::find::FoundBoard;
use crate::homography::Point;

/// A stone's height in cells (about 9 mm over a 22 mm spacing).
pub const STONE_HEIGHT: f64 = 0.38;
/// Where the patch is centred between the stone's base (0) and its top (1).
const CENTRE_AT: f64 = 0.5;
/// The horizontal fields of view (degrees, across the frame's long side) a camera over a
/// board plausibly has: from a phone's telephoto lens to a wide webcam. A focal length
/// estimated outside them comes from a constraint too weak to determine it.
const PLAUSIBLE_FOV: [f64; 2] = [20.0, 120.0];

/// The focal length (pixels) that gives a horizontal field of view across `long` pixels.
fn focal_for(long: f64, fov_degrees: f64) -> f64 {
    long / 2.0 / (fov_degrees.to_radians() / 2.0).tan()
}

/// The camera's position in board coordinates: (column, row) of the point under it and its
/// height, in cells; `None` when the homography does not determine it.
pub fn camera(board: &FoundBoard, width: usize, height: usize) -> Option<[f64; 3]> {
    let (cx, cy) = (width as f64 / 2.0, height as f64 / 2.0);
    let g = &board.grid.0;
    // Columns of the homography with the principal point moved to the origin.
    let col = |k: usize| [g[k] - cx * g[6 + k], g[3 + k] - cy * g[6 + k], g[6 + k]];
    let (h1, h2, h3) = (col(0), col(1), col(2));
    let long = width.max(height) as f64;
    // Squared focal lengths, widest view first (a shorter focal length is a wider view).
    let (f2_min, f2_max) = (
        focal_for(long, PLAUSIBLE_FOV[1]).powi(2),
        focal_for(long, PLAUSIBLE_FOV[0]).powi(2),
    );
    let plausible = |f2: f64| (f2_min..=f2_max).contains(&f2);
    let mut estimates = Vec::with_capacity(2);
    // Each constraint is num = f²·den: the columns are orthogonal, and of equal length.
    let den1 = h1[2] * h2[2];
    let num1 = -(h1[0] * h2[0] + h1[1] * h2[1]);
    if den1.abs() > 1e-12 && plausible(num1 / den1) {
        estimates.push(num1 / den1);
    }
    let den2 = h1[2] * h1[2] - h2[2] * h2[2];
    let num2 = -(h1[0] * h1[0] + h1[1] * h1[1] - h2[0] * h2[0] - h2[1] * h2[1]);
    if den2.abs() > 1e-12 && plausible(num2 / den2) {
        estimates.push(num2 / den2);
    }
    // Seen nearly square-on, a constraint's denominator is near zero and its estimate can
    // land anywhere (a rendered board seen from 45° along its diagonal gave a 19° view,
    // one seen nearly square-on a 142° one, each putting the camera far too near and the
    // patches up to half a cell off). With neither, take a usual field of view (53°).
    let f2 = match estimates[..] {
        [] => long * long,
        [one] => one,
        // Estimates more than four times apart in focal length mean one constraint is
        // degenerate (its denominator near zero: orthogonality when the camera leans along
        // a board line, equal lengths along a diagonal). Their average then put a rendered
        // board turned 59° six times too far and its patches a whole cell off; least
        // squares over both constraints, which weights each by its denominator², does not.
        // Closer estimates are averaged, which serves real webcams well (whose principal
        // point is not exactly the frame's centre, so neither is exact).
        [e1, e2] if e1.max(e2) > 16.0 * e1.min(e2) => {
            (num1 * den1 + num2 * den2) / (den1 * den1 + den2 * den2)
        }
        _ => estimates.iter().sum::<f64>() / estimates.len() as f64,
    };
    let f = f2.sqrt();
    let unproject = |h: [f64; 3]| [h[0] / f, h[1] / f, h[2]];
    let (r1, r2, t) = (unproject(h1), unproject(h2), unproject(h3));
    let norm = |v: [f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let mut scale = (norm(r1) + norm(r2)) / 2.0;
    if !(scale.is_finite() && scale > 1e-12) {
        return None;
    }
    // The board lies in front of the camera.
    if t[2] < 0.0 {
        scale = -scale;
    }
    let (r1, r2, t) = (
        r1.map(|v| v / scale),
        r2.map(|v| v / scale),
        t.map(|v| v / scale),
    );
    let r3 = [
        r1[1] * r2[2] - r1[2] * r2[1],
        r1[2] * r2[0] - r1[0] * r2[2],
        r1[0] * r2[1] - r1[1] * r2[0],
    ];
    // The camera centre is -Rᵀt.
    let dot = |a: [f64; 3]| -(a[0] * t[0] + a[1] * t[1] + a[2] * t[2]);
    let c = [dot(r1), dot(r2), dot(r3).abs()];
    c.iter().all(|v| v.is_finite()).then_some(c)
}

/// Where to centre each point's patch relative to its intersection, in cells (row-major,
/// n²): half-way along the displacement of a stone's top away from the camera's foot.
pub fn patch_shifts(board: &FoundBoard, width: usize, height: usize, out: &mut Vec<Point>) {
    let n = board.size.width();
    out.clear();
    let cam = camera(board, width, height).filter(|c| c[2] > 2.0 * STONE_HEIGHT);
    for i in 0..n * n {
        let (u, v) = ((i % n) as f64, (i / n) as f64);
        out.push(match cam {
            Some([cu, cv, ch]) => {
                let k = CENTRE_AT * STONE_HEIGHT / (ch - STONE_HEIGHT);
                [(u - cu) * k, (v - cv) * k]
            }
            None => [0.0, 0.0],
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::homography::Homography;
    use tengen_rules::BoardSize;

    /// The board seen by a pinhole camera (focal `f`, centre of a 1280x720 frame) at
    /// `cam` (board coordinates, cells), looking at the board's centre.
    fn view(cam: [f64; 3], f: f64) -> FoundBoard {
        view_through(cam, f, 0.0)
    }

    /// The same, through a lens with radial distortion `k1` (barrel when negative), the
    /// homography fitted to the distorted intersections.
    fn view_through(cam: [f64; 3], f: f64, k1: f64) -> FoundBoard {
        let target = [9.0, 9.0, 0.0];
        let z: Vec<f64> = (0..3).map(|k| target[k] - cam[k]).collect();
        let nz = z.iter().map(|v| v * v).sum::<f64>().sqrt();
        let z = [z[0] / nz, z[1] / nz, z[2] / nz];
        // x along the board's columns as far as possible, y completing the frame.
        let up = [0.0, 1.0, 0.0];
        let x = [
            up[1] * z[2] - up[2] * z[1],
            up[2] * z[0] - up[0] * z[2],
            up[0] * z[1] - up[1] * z[0],
        ];
        let nx = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2]).sqrt();
        let x = x.map(|v| -v / nx);
        let y = [
            z[1] * x[2] - z[2] * x[1],
            z[2] * x[0] - z[0] * x[2],
            z[0] * x[1] - z[1] * x[0],
        ];
        let project = |p: [f64; 3]| {
            let d = [p[0] - cam[0], p[1] - cam[1], p[2] - cam[2]];
            let dx: f64 = (0..3).map(|k| d[k] * x[k]).sum();
            let dy: f64 = (0..3).map(|k| d[k] * y[k]).sum();
            let dz: f64 = (0..3).map(|k| d[k] * z[k]).sum();
            let (nx, ny) = (dx / dz, dy / dz);
            let d = 1.0 + k1 * (nx * nx + ny * ny);
            [640.0 + f * nx * d, 360.0 + f * ny * d]
        };
        let src: Vec<Point> = (0..361)
            .map(|i| [(i % 19) as f64, (i / 19) as f64])
            .collect();
        let dst: Vec<Point> = src.iter().map(|p| project([p[0], p[1], 0.0])).collect();
        let grid = Homography::fit(&src, &dst).unwrap();
        FoundBoard {
            size: BoardSize::square(19).unwrap(),
            corners: [dst[0], dst[18], dst[360], dst[342]],
            grid,
            score: 1.0,
        }
    }

    #[test]
    fn the_camera_is_recovered_from_a_slanted_view() {
        for (cam, f) in [([9.0, 30.0, -20.0], 900.0), ([-5.0, 25.0, -15.0], 1200.0)] {
            let board = view(cam, f);
            let got = camera(&board, 1280, 720).unwrap();
            for k in 0..2 {
                assert!((got[k] - cam[k]).abs() < 0.05, "{got:?} vs {cam:?}");
            }
            assert!((got[2] - cam[2].abs()).abs() < 0.05, "{got:?} vs {cam:?}");
        }
    }

    #[test]
    fn the_camera_is_recovered_from_every_side() {
        // Leaning along a line or a diagonal, and every side between.
        for step in 0..24 {
            let a = f64::from(step) * 15f64.to_radians();
            let cam = [9.0 + 14.0 * a.cos(), 9.0 + 14.0 * a.sin(), -27.0];
            let got = camera(&view(cam, 1020.0), 1280, 720).unwrap();
            for k in 0..2 {
                assert!((got[k] - cam[k]).abs() < 0.5, "{step}: {got:?} vs {cam:?}");
            }
            assert!((got[2] - 27.0).abs() < 0.5, "{step}: {got:?} vs {cam:?}");
        }
    }

    #[test]
    fn a_view_nearly_square_on_keeps_the_camera_far() {
        // From straight above, the perspective terms are nearly zero and either constraint
        // may give any focal length; an implausible one puts the camera close and shifts
        // the patches far. The true shift at a corner here is under 0.05 cell.
        for cam in [[9.3, 9.2, -40.0], [9.05, 9.4, -30.0], [8.8, 8.9, -35.0]] {
            let mut shifts = Vec::new();
            patch_shifts(&view_through(cam, 1000.0, -0.1), 1280, 720, &mut shifts);
            for s in [shifts[0], shifts[18], shifts[342], shifts[360]] {
                assert!(s[0].hypot(s[1]) < 0.1, "{cam:?}: {s:?}");
            }
        }
    }

    #[test]
    fn a_lens_does_not_make_a_diagonal_view_telephoto() {
        // Leaning along a diagonal, the equal-lengths constraint is degenerate; through a
        // barrel lens it gave a 19° view on a rendered board, and averaged with the other
        // estimate a camera too near. The shift at the near corner is about 0.13 cell.
        for cam in [
            [-9.0, -9.0, -20.0],
            [27.0, 27.0, -22.0],
            [-8.0, 26.0, -20.0],
        ] {
            let board = view_through(cam, 1000.0, -0.12);
            let mut shifts = Vec::new();
            patch_shifts(&board, 1280, 720, &mut shifts);
            let got = camera(&board, 1280, 720).unwrap();
            assert!((got[2] + cam[2]).abs() < 0.25 * -cam[2], "{cam:?}: {got:?}");
        }
    }

    #[test]
    fn shifts_point_away_from_the_camera() {
        let board = view([9.0, 30.0, -20.0], 900.0);
        let mut shifts = Vec::new();
        patch_shifts(&board, 1280, 720, &mut shifts);
        assert_eq!(shifts.len(), 361);
        // The camera stands beyond the bottom row: tops move toward row 0.
        assert!(shifts[9].iter().all(|v| v.is_finite()));
        assert!(
            shifts[9][1] < -0.1 && shifts[9][0].abs() < 0.01,
            "{:?}",
            shifts[9]
        );
        assert!(shifts[9][1] < shifts[351][1]);
    }
}
