//! Stones as grid points: a crowded board hides most of its lines under stones, but each
//! stone sits on an intersection, so the centres of the stones a grid predicts are points to
//! refit the grid on where its lines cannot be snapped to.

use crate::filter::Plane;
use crate::homography::{fit_ransac, Homography, Point};

use super::dist;
use super::window::{stone_shade, Shade};

/// The disc a stone's centre is looked for in, in cells around where it was last placed:
/// as large as a stone, so that the centroid moves until the whole stone is inside it (in a
/// smaller disc it stops anywhere inside the stone), and no larger, so that neighbouring
/// stones stay out of it once it is centred.
const DISC: f64 = 0.5;
/// A stone's centre may lie this far (cells) from the predicted intersection; further, it
/// is more likely a neighbour's.
const MAX_MOVE: f64 = 0.35;
/// A pixel counts towards a stone when it differs from the wood in the stone's shade by
/// more than this (`Shade::deviation`, as `is_stone` measures).
const PIXEL_DEVIATION: f32 = 0.06;
/// Centroid steps taken from the predicted intersection at most: each moves only part of
/// the way, the search disc overlapping the stone's only in part...
const STEPS: usize = 12;
/// ...and they stop once a step moves less than this (pixels).
const SETTLED: f64 = 0.05;
/// Stone centres a refit needs at the least, and the share of them it must explain.
const MIN_STONES: usize = 12;
const MIN_INLIER_SHARE: f64 = 0.5;
/// A stone centre explains a fit within this many cells.
const TOLERANCE: f64 = 0.15;

/// The image position and shade of the stone on intersection (c, r) of grid `h`, if
/// `is_stone` sees one there: the centroid of the pixels of its shade around the predicted
/// intersection, moved towards the disc's middle until it settles.
pub(super) fn stone_centre(img: &Plane, h: &Homography, c: i64, r: i64) -> Option<(Point, Shade)> {
    let (c, r) = (c as f64, r as f64);
    let front = |g: Point| h.apply(g);
    let (wood, shade) = stone_shade(img, &front, c, r)?;
    let p = h.apply([c, r])?;
    let spacing = 0.5 * (dist(p, h.apply([c + 1.0, r])?) + dist(p, h.apply([c, r + 1.0])?));
    if !(spacing.is_finite() && spacing >= 2.0) {
        return None;
    }
    let radius = DISC * spacing;
    let (w, hgt) = (img.width as i64 - 1, img.height as i64 - 1);
    let mut q = p;
    for _ in 0..STEPS {
        let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
        let (x0, x1) = (
            (q[0] - radius).floor() as i64,
            (q[0] + radius).ceil() as i64,
        );
        let (y0, y1) = (
            (q[1] - radius).floor() as i64,
            (q[1] + radius).ceil() as i64,
        );
        if x0 < 0 || y0 < 0 || x1 > w || y1 > hgt {
            return None;
        }
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (x as f64 - q[0], y as f64 - q[1]);
                if dx * dx + dy * dy > radius * radius {
                    continue;
                }
                let g = img.data[y as usize * img.width + x as usize];
                let dev = shade.deviation(g, wood) - PIXEL_DEVIATION;
                if dev > 0.0 {
                    let weight = f64::from(dev);
                    sx += weight * x as f64;
                    sy += weight * y as f64;
                    sw += weight;
                }
            }
        }
        if sw <= 0.0 {
            return None;
        }
        let next = [sx / sw, sy / sw];
        let moved = dist(next, q);
        q = next;
        if moved < SETTLED {
            break;
        }
    }
    (dist(q, p) <= MAX_MOVE * spacing).then_some((q, shade))
}

/// Grid `h` refitted on the centres of the stones at the intersections of the window of
/// `dims` columns and rows from (0, 0), when enough stones are there and most of them agree
/// on one grid.
pub(super) fn refit_on_stones(img: &Plane, h: &Homography, dims: [usize; 2]) -> Option<Homography> {
    let mut src = Vec::new();
    let mut dst = Vec::new();
    for r in 0..dims[1] as i64 {
        for c in 0..dims[0] as i64 {
            if let Some((q, _)) = stone_centre(img, h, c, r) {
                src.push([c as f64, r as f64]);
                dst.push(q);
            }
        }
    }
    if src.len() < MIN_STONES {
        return None;
    }
    let last = [(dims[0].max(2) - 1) as f64, (dims[1].max(2) - 1) as f64];
    let (a, b) = (h.apply([0.0, 0.0])?, h.apply(last)?);
    let spacing = dist(a, b) / last[0].hypot(last[1]);
    let fit = fit_ransac(&src, &dst, (TOLERANCE * spacing).max(1.0), 200, 7)?;
    (fit.inlier_count() as f64 >= MIN_INLIER_SHARE * src.len() as f64).then_some(fit.h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wood of grey 150 with black discs of radius 9.5 px on every other intersection (or
    /// every one, `packed`) of a 9x9 grid of 20 px cells from (20, 20), all moved by `off`
    /// pixels from where the grid puts them.
    fn board(off: Point, packed: bool) -> (Plane, Homography) {
        let (w, h) = (220usize, 220usize);
        let grid = Homography([20.0, 0.0, 20.0, 0.0, 20.0, 20.0, 0.0, 0.0, 1.0]);
        let mut data = vec![150.0f32; w * h];
        for r in 0..9 {
            for c in 0..9 {
                if !packed && (c + r) % 2 != 0 {
                    continue;
                }
                let [cx, cy] = grid.apply([c as f64, r as f64]).unwrap();
                let (cx, cy) = (cx + off[0], cy + off[1]);
                for y in 0..h {
                    for x in 0..w {
                        if (x as f64 - cx).hypot(y as f64 - cy) <= 9.5 {
                            data[y * w + x] = 30.0;
                        }
                    }
                }
            }
        }
        (
            Plane {
                width: w,
                height: h,
                data,
            },
            grid,
        )
    }

    #[test]
    fn a_stone_centre_is_found_where_the_stone_lies() {
        let (img, grid) = board([3.0, 2.0], false);
        let (q, shade) = stone_centre(&img, &grid, 4, 4).expect("a stone at (4, 4)");
        assert_eq!(shade, Shade::Darker);
        assert!(dist(q, [103.0, 102.0]) < 0.5, "{q:?}");
        // No stone on (3, 4).
        assert!(stone_centre(&img, &grid, 3, 4).is_none());
    }

    #[test]
    fn a_grid_off_the_stones_is_refitted_onto_them() {
        // Packed stones too: neighbours touching do not pull a centre off its stone.
        for packed in [false, true] {
            let (img, grid) = board([3.0, 2.0], packed);
            let fitted = refit_on_stones(&img, &grid, [9, 9]).expect("stones to fit on");
            for g in [[0.0, 0.0], [8.0, 0.0], [8.0, 8.0], [3.0, 5.0]] {
                let want = grid.apply(g).unwrap();
                let got = fitted.apply(g).unwrap();
                assert!(
                    dist(got, [want[0] + 3.0, want[1] + 2.0]) < 0.5,
                    "packed {packed}, {g:?}: {got:?}"
                );
            }
        }
    }

    #[test]
    fn too_few_stones_refit_nothing() {
        let img = Plane {
            width: 220,
            height: 220,
            data: vec![150.0; 220 * 220],
        };
        let grid = Homography([20.0, 0.0, 20.0, 0.0, 20.0, 20.0, 0.0, 0.0, 1.0]);
        assert!(refit_on_stones(&img, &grid, [9, 9]).is_none());
    }
}
