//! Rectified patches: each intersection's neighbourhood resampled from the frame through the
//! grid homography into a small square, so the classifier sees every point the same way
//! whatever the camera's angle.

use crate::find::FoundBoard;
use crate::frame::{Frame, PixelFormat};
use crate::homography::Point;

/// Pixels on a patch's side.
pub const PATCH: usize = 24;
/// Floats in one patch: three planes (red, green, blue) of `PATCH` x `PATCH`.
pub const PATCH_LEN: usize = 3 * PATCH * PATCH;
/// Cells a patch spans: a stone (a little under one cell across) plus room for its top,
/// which a slanted view shifts toward the far side by up to about 0.4 cell.
pub const SPAN: f64 = 1.6;

/// Bilinear RGB at frame pixel (x, y) (pixel centres at integers); `None` outside.
pub fn sample_rgb(frame: &Frame, [x, y]: Point) -> Option<[f32; 3]> {
    let (w, h) = (frame.width() as f64, frame.height() as f64);
    if !(x >= 0.0 && y >= 0.0 && x <= w - 1.0 && y <= h - 1.0) {
        return None;
    }
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = (
        (x0 + 1).min(frame.width() - 1),
        (y0 + 1).min(frame.height() - 1),
    );
    let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
    let data = frame.data();
    let width = frame.width();
    let mut out = [0.0f32; 3];
    match frame.format() {
        PixelFormat::Rgb => {
            let at = |xx: usize, yy: usize, c: usize| f32::from(data[3 * (yy * width + xx) + c]);
            for (c, o) in out.iter_mut().enumerate() {
                let top = at(x0, y0, c) * (1.0 - fx) + at(x1, y0, c) * fx;
                let bottom = at(x0, y1, c) * (1.0 - fx) + at(x1, y1, c) * fx;
                *o = top * (1.0 - fy) + bottom * fy;
            }
        }
        PixelFormat::Grey => {
            let at = |xx: usize, yy: usize| f32::from(data[yy * width + xx]);
            let top = at(x0, y0) * (1.0 - fx) + at(x1, y0) * fx;
            let bottom = at(x0, y1) * (1.0 - fx) + at(x1, y1) * fx;
            out = [top * (1.0 - fy) + bottom * fy; 3];
        }
    }
    Some(out)
}

/// Fills `out` (exactly `PATCH_LEN` floats, planar RGB in 0..255) with the patch centred on
/// board point (col, row) shifted by `shift` cells. Pixels outside the frame are NaN; the
/// return value is how many there were.
pub fn sample_patch(
    frame: &Frame,
    board: &FoundBoard,
    centre: Point,
    shift: Point,
    out: &mut [f32],
) -> usize {
    debug_assert_eq!(out.len(), PATCH_LEN);
    let plane = PATCH * PATCH;
    let step = SPAN / PATCH as f64;
    let (cx, cy) = (centre[0] + shift[0], centre[1] + shift[1]);
    let mut outside = 0;
    for i in 0..PATCH {
        let v = cy + (i as f64 + 0.5) * step - SPAN / 2.0;
        for j in 0..PATCH {
            let u = cx + (j as f64 + 0.5) * step - SPAN / 2.0;
            let k = i * PATCH + j;
            match board.grid.apply([u, v]).and_then(|p| sample_rgb(frame, p)) {
                Some(rgb) => {
                    out[k] = rgb[0];
                    out[plane + k] = rgb[1];
                    out[2 * plane + k] = rgb[2];
                }
                None => {
                    outside += 1;
                    out[k] = f32::NAN;
                    out[plane + k] = f32::NAN;
                    out[2 * plane + k] = f32::NAN;
                }
            }
        }
    }
    outside
}

/// Patch pixel offsets (row, column) of the disc a stone covers at the patch's centre,
/// `radius` cells across its half.
pub fn disc(radius: f64) -> Vec<usize> {
    let mut out = Vec::new();
    let scale = PATCH as f64 / SPAN;
    let mid = PATCH as f64 / 2.0;
    for i in 0..PATCH {
        for j in 0..PATCH {
            let (dy, dx) = (i as f64 + 0.5 - mid, j as f64 + 0.5 - mid);
            if dx.hypot(dy) <= radius * scale {
                out.push(i * PATCH + j);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::homography::Homography;
    use tengen_rules::BoardSize;

    fn board(spacing: f64, origin: f64) -> FoundBoard {
        let size = BoardSize::new(9, 9).unwrap();
        let grid = Homography([spacing, 0.0, origin, 0.0, spacing, origin, 0.0, 0.0, 1.0]);
        let last = 8.0 * spacing + origin;
        FoundBoard {
            size,
            corners: [
                [origin, origin],
                [last, origin],
                [last, last],
                [origin, last],
            ],
            grid,
            score: 1.0,
        }
    }

    #[test]
    fn a_patch_is_centred_on_its_intersection() {
        // A frame whose red channel is x and green channel y.
        let (w, h) = (200, 200);
        let data: Vec<u8> = (0..w * h)
            .flat_map(|i| [(i % w) as u8, (i / w) as u8, 0])
            .collect();
        let frame = Frame::new(w, h, PixelFormat::Rgb, data).unwrap();
        let b = board(20.0, 20.0);
        let mut out = vec![0.0; PATCH_LEN];
        let outside = sample_patch(&frame, &b, [2.0, 3.0], [0.0, 0.0], &mut out);
        assert_eq!(outside, 0);
        let plane = PATCH * PATCH;
        // The four middle pixels straddle the intersection at (60, 80).
        let mid = PATCH / 2;
        let red = (out[(mid - 1) * PATCH + mid - 1] + out[mid * PATCH + mid]) / 2.0;
        let green = (out[plane + (mid - 1) * PATCH + mid] + out[plane + mid * PATCH + mid]) / 2.0;
        assert!((red - 60.0).abs() < 0.51, "{red}");
        assert!((green - 80.0).abs() < 0.51, "{green}");
        // A corner point near the frame's edge has pixels outside it.
        let b = board(20.0, 5.0);
        assert!(sample_patch(&frame, &b, [0.0, 0.0], [0.0, 0.0], &mut out) > 0);
        assert!(out[0].is_nan());
    }

    #[test]
    fn the_disc_is_round_and_central() {
        let d = disc(0.4);
        let mid = PATCH / 2;
        assert!(d.contains(&(mid * PATCH + mid)));
        assert!(!d.contains(&0));
        let area = d.len() as f64;
        let expected = std::f64::consts::PI * (0.4 * PATCH as f64 / SPAN).powi(2);
        assert!(
            (area - expected).abs() / expected < 0.1,
            "{area} vs {expected}"
        );
    }
}
