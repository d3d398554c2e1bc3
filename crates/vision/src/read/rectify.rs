//! Rectified patches: each intersection's neighbourhood resampled from the frame through the
//! grid homography into a small square, so the classifier sees every point the same way
//! whatever the camera's angle.

use crate::find::FoundBoard;
use crate::frame::{Frame, PixelFormat};
use crate::homography::Point;

/// Pixels on a patch's side: 10 a cell, enough for a stone (about 9 across) and its
/// lines, and less than half the samples and network work of 15 a cell (the reader's
/// budget is 15 ms for 361 points).
pub const PATCH: usize = 16;
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
///
/// This is the reader's hot loop (361 x 576 samples a frame): along a patch row the
/// homography's numerators and denominator are linear in the column, so each sample costs
/// two divisions and a bilinear lookup, with no `Option`s and no per-pixel format match.
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
    let h = &board.grid.0;
    let (width, height) = (frame.width(), frame.height());
    let (max_x, max_y) = (width as f64 - 1.0, height as f64 - 1.0);
    let data = frame.data();
    let grey = frame.format() == PixelFormat::Grey;
    let u0 = cx + 0.5 * step - SPAN / 2.0;
    let (r, g) = out.split_at_mut(plane);
    let (g, b) = g.split_at_mut(plane);
    let mut outside = 0;
    for i in 0..PATCH {
        let v = cy + (i as f64 + 0.5) * step - SPAN / 2.0;
        // Numerators and denominator at the row's first column, and their steps.
        let (x0, y0, w0) = (
            h[0] * u0 + h[1] * v + h[2],
            h[3] * u0 + h[4] * v + h[5],
            h[6] * u0 + h[7] * v + h[8],
        );
        let (dx, dy, dw) = (h[0] * step, h[3] * step, h[6] * step);
        for j in 0..PATCH {
            let k = i * PATCH + j;
            let jf = j as f64;
            let w = w0 + jf * dw;
            let inv = 1.0 / w;
            let (x, y) = ((x0 + jf * dx) * inv, (y0 + jf * dy) * inv);
            // NaN fails these comparisons too, like a degenerate denominator.
            let inside = w.abs() >= 1e-12 && x >= 0.0 && y >= 0.0 && x <= max_x && y <= max_y;
            if !inside {
                outside += 1;
                (r[k], g[k], b[k]) = (f32::NAN, f32::NAN, f32::NAN);
                continue;
            }
            let (xi, yi) = (x as usize, y as usize);
            let (fx, fy) = ((x - xi as f64) as f32, (y - yi as f64) as f32);
            // The right and lower neighbours, clamped at the frame's last column and row.
            let right = usize::from(xi + 1 < width);
            let down = if yi + 1 < height { width } else { 0 };
            let top = yi * width + xi;
            let wts = [
                (1.0 - fx) * (1.0 - fy),
                fx * (1.0 - fy),
                (1.0 - fx) * fy,
                fx * fy,
            ];
            let at = [top, top + right, top + down, top + down + right];
            if grey {
                let v: f32 = (0..4).map(|q| wts[q] * f32::from(data[at[q]])).sum();
                (r[k], g[k], b[k]) = (v, v, v);
            } else {
                let mut rgb = [0.0f32; 3];
                for (&a, &wt) in at.iter().zip(&wts) {
                    if let Some(&[pr, pg, pb]) = data.get(3 * a..3 * a + 3) {
                        rgb[0] += wt * f32::from(pr);
                        rgb[1] += wt * f32::from(pg);
                        rgb[2] += wt * f32::from(pb);
                    }
                }
                (r[k], g[k], b[k]) = (rgb[0], rgb[1], rgb[2]);
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
    fn the_fast_patch_matches_point_by_point_sampling() {
        // A textured frame and a slanted board reaching past the frame's right edge.
        let (w, h) = (160, 120);
        let data: Vec<u8> = (0..w * h)
            .flat_map(|i| {
                let (x, y) = (i % w, i / w);
                [(x * 7 + y) as u8, (x * y) as u8, (x ^ y) as u8]
            })
            .collect();
        let rgb = Frame::new(w, h, PixelFormat::Rgb, data).unwrap();
        let grey = Frame::new(w, h, PixelFormat::Grey, rgb.to_grey()).unwrap();
        let mut b = board(20.0, 10.0);
        b.grid = Homography([14.0, 3.0, 30.0, -2.0, 11.0, 12.0, 0.004, 0.002, 1.0]);
        let mut out = vec![0.0; PATCH_LEN];
        let plane = PATCH * PATCH;
        let step = SPAN / PATCH as f64;
        for frame in [&rgb, &grey] {
            for (centre, shift) in [([2.0, 3.0], [0.1, -0.2]), ([8.0, 4.0], [0.0, 0.0])] {
                let outside = sample_patch(frame, &b, centre, shift, &mut out);
                let mut expected_outside = 0;
                for i in 0..PATCH {
                    for j in 0..PATCH {
                        let u = centre[0] + shift[0] + (j as f64 + 0.5) * step - SPAN / 2.0;
                        let v = centre[1] + shift[1] + (i as f64 + 0.5) * step - SPAN / 2.0;
                        let k = i * PATCH + j;
                        match b.grid.apply([u, v]).and_then(|p| sample_rgb(frame, p)) {
                            Some(want) => {
                                for c in 0..3 {
                                    let got = out[c * plane + k];
                                    assert!((got - want[c]).abs() < 1e-3, "{got} vs {want:?}");
                                }
                            }
                            None => {
                                expected_outside += 1;
                                assert!(out[k].is_nan());
                            }
                        }
                    }
                }
                assert_eq!(outside, expected_outside);
            }
        }
        // The second centre runs off the frame, so both paths were exercised.
        assert!(sample_patch(&rgb, &b, [8.0, 4.0], [0.0, 0.0], &mut out) > 0);
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
