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

/// The camera's position in board coordinates: (column, row) of the point under it and its
/// height, in cells; `None` when the homography does not determine it.
pub fn camera(board: &FoundBoard, width: usize, height: usize) -> Option<[f64; 3]> {
    let (cx, cy) = (width as f64 / 2.0, height as f64 / 2.0);
    let g = &board.grid.0;
    // Columns of the homography with the principal point moved to the origin.
    let col = |k: usize| [g[k] - cx * g[6 + k], g[3 + k] - cy * g[6 + k], g[6 + k]];
    let (h1, h2, h3) = (col(0), col(1), col(2));
    let mut estimates = Vec::with_capacity(2);
    // Each constraint is num = f²·den: the columns are orthogonal, and of equal length.
    let den1 = h1[2] * h2[2];
    let num1 = -(h1[0] * h2[0] + h1[1] * h2[1]);
    if den1.abs() > 1e-12 && num1 / den1 > 0.0 {
        estimates.push(num1 / den1);
    }
    let den2 = h1[2] * h1[2] - h2[2] * h2[2];
    let num2 = -(h1[0] * h1[0] + h1[1] * h1[1] - h2[0] * h2[0] - h2[1] * h2[1]);
    if den2.abs() > 1e-12 && num2 / den2 > 0.0 {
        estimates.push(num2 / den2);
    }
    // Seen square-on, the focal length is undetermined and barely matters: take a usual one.
    let f2 = match estimates[..] {
        [] => (width.max(height) as f64).powi(2),
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
            [640.0 + f * dx / dz, 360.0 + f * dy / dz]
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
