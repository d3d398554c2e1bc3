//! Plane-to-plane homographies: least-squares fits (normalised DLT) and a RANSAC fit that
//! tolerates outliers.

/// A point in a plane (image pixels or grid coordinates).
pub type Point = [f64; 2];

/// A 3x3 projective map, row-major, applied to column vectors (x, y, 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Homography(pub [f64; 9]);

impl Homography {
    /// The identity map.
    pub const IDENTITY: Homography = Homography([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);

    /// Maps a point; `None` for a point sent to infinity.
    pub fn apply(&self, [x, y]: Point) -> Option<Point> {
        let h = &self.0;
        let w = h[6] * x + h[7] * y + h[8];
        if w.abs() < 1e-12 || !w.is_finite() {
            return None;
        }
        Some([
            (h[0] * x + h[1] * y + h[2]) / w,
            (h[3] * x + h[4] * y + h[5]) / w,
        ])
    }

    /// The composition `self ∘ other` (apply `other` first).
    pub fn then_after(&self, other: &Homography) -> Homography {
        let (a, b) = (&self.0, &other.0);
        let mut m = [0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                m[3 * r + c] = (0..3).map(|k| a[3 * r + k] * b[3 * k + c]).sum();
            }
        }
        Homography(m)
    }

    /// The inverse map, `None` when singular.
    pub fn inverse(&self) -> Option<Homography> {
        let m = &self.0;
        let cof = [
            m[4] * m[8] - m[5] * m[7],
            m[2] * m[7] - m[1] * m[8],
            m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8],
            m[0] * m[8] - m[2] * m[6],
            m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6],
            m[1] * m[6] - m[0] * m[7],
            m[0] * m[4] - m[1] * m[3],
        ];
        let det = m[0] * cof[0] + m[1] * cof[3] + m[2] * cof[6];
        let scale = m.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if !det.is_finite() || det.abs() <= 1e-12 * scale.powi(3) {
            return None;
        }
        Some(Homography(cof.map(|c| c / det)))
    }

    /// The least-squares homography taking each `src` to its `dst` (at least four pairs, not
    /// three on a line); `None` when the points do not determine one.
    pub fn fit(src: &[Point], dst: &[Point]) -> Option<Homography> {
        if src.len() != dst.len() || src.len() < 4 {
            return None;
        }
        // Normalising both sides (Hartley) keeps the normal equations well conditioned.
        let (ts, _) = normaliser(src)?;
        let (td, tdi) = normaliser(dst)?;
        let mut ata = [[0.0f64; 8]; 8];
        let mut atb = [0.0f64; 8];
        for (s, d) in src.iter().zip(dst) {
            let [x, y] = ts.apply(*s)?;
            let [u, v] = td.apply(*d)?;
            let rows = [
                ([x, y, 1.0, 0.0, 0.0, 0.0, -x * u, -y * u], u),
                ([0.0, 0.0, 0.0, x, y, 1.0, -x * v, -y * v], v),
            ];
            for (a, b) in rows {
                for i in 0..8 {
                    atb[i] += a[i] * b;
                    for j in 0..8 {
                        ata[i][j] += a[i] * a[j];
                    }
                }
            }
        }
        let h = solve8(ata, atb)?;
        let hn = Homography([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], 1.0]);
        let full = tdi.then_after(&hn).then_after(&ts);
        let s = full.0[8];
        if s.abs() < 1e-12 || !s.is_finite() {
            return Some(full);
        }
        Some(Homography(full.0.map(|v| v / s)))
    }
}

/// The similarity moving the points' centroid to 0 and their mean distance to √2, and its
/// inverse.
fn normaliser(pts: &[Point]) -> Option<(Homography, Homography)> {
    let n = pts.len() as f64;
    let cx = pts.iter().map(|p| p[0]).sum::<f64>() / n;
    let cy = pts.iter().map(|p| p[1]).sum::<f64>() / n;
    let mean = pts
        .iter()
        .map(|p| ((p[0] - cx).powi(2) + (p[1] - cy).powi(2)).sqrt())
        .sum::<f64>()
        / n;
    if mean.is_nan() || mean <= 1e-12 {
        return None;
    }
    let s = std::f64::consts::SQRT_2 / mean;
    Some((
        Homography([s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0]),
        Homography([1.0 / s, 0.0, cx, 0.0, 1.0 / s, cy, 0.0, 0.0, 1.0]),
    ))
}

/// Solves an 8x8 system by Gaussian elimination with partial pivoting.
fn solve8(mut a: [[f64; 8]; 8], mut b: [f64; 8]) -> Option<[f64; 8]> {
    for col in 0..8 {
        let pivot = (col..8).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].is_nan() || a[pivot][col].abs() <= 1e-10 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..8 {
            let f = a[row][col] / pivot_row[col];
            for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 8];
    for row in (0..8).rev() {
        let s: f64 = (row + 1..8).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// A homography fitted robustly, with the pairs it explains.
#[derive(Clone, Debug)]
pub struct RobustFit {
    /// The map, refitted on all inliers.
    pub h: Homography,
    /// Whether each pair is an inlier.
    pub inliers: Vec<bool>,
}

impl RobustFit {
    /// How many pairs are inliers.
    pub fn inlier_count(&self) -> usize {
        self.inliers.iter().filter(|&&i| i).count()
    }
}

/// RANSAC: fits on random minimal sets of four pairs (at most `iterations` of them, fewer
/// once the best set's inlier share makes a better one unlikely), keeps the map under which
/// most pairs land within `tol` (in `dst` units) of their target, and refits it on those
/// inliers. Deterministic for a given `seed`.
pub fn fit_ransac(
    src: &[Point],
    dst: &[Point],
    tol: f64,
    iterations: usize,
    seed: u64,
) -> Option<RobustFit> {
    let n = src.len();
    if n < 4 || dst.len() != n {
        return None;
    }
    let mut rng = SplitMix(seed);
    let mut best: Option<(usize, Homography)> = None;
    let mut mask = vec![false; n];
    // Sampling stops once an all-inlier set would have been drawn by now with
    // `RANSAC_CONFIDENCE`: most fits here have most pairs inliers, and then 50 draws do what
    // 200 did.
    let mut needed = iterations;
    let mut drawn = 0;
    while drawn < needed {
        drawn += 1;
        let mut idx = [0usize; 4];
        for k in 0..4 {
            loop {
                let i = rng.below(n);
                if !idx[..k].contains(&i) {
                    idx[k] = i;
                    break;
                }
            }
        }
        let Some(h) = Homography::fit(&idx.map(|i| src[i]), &idx.map(|i| dst[i])) else {
            continue;
        };
        let count = mark_inliers(&h, src, dst, tol, &mut mask);
        if best.as_ref().is_none_or(|(c, _)| count > *c) {
            best = Some((count, h));
            needed = needed.min(draws_for(count as f64 / n as f64).max(MIN_DRAWS));
        }
    }
    let (_, mut h) = best?;
    // Refit on the inliers until the set stops growing (a few rounds at most).
    let mut count = mark_inliers(&h, src, dst, tol, &mut mask);
    for _ in 0..5 {
        let (s, d): (Vec<Point>, Vec<Point>) = (0..n)
            .filter(|&i| mask[i])
            .map(|i| (src[i], dst[i]))
            .unzip();
        let Some(refit) = Homography::fit(&s, &d) else {
            break;
        };
        let mut m2 = vec![false; n];
        let c2 = mark_inliers(&refit, src, dst, tol, &mut m2);
        if c2 < count {
            break;
        }
        let grew = c2 > count;
        (h, count, mask) = (refit, c2, m2);
        if !grew {
            break;
        }
    }
    (count >= 4).then_some(RobustFit { h, inliers: mask })
}

/// Draws of four pairs after which, when a share `w` of all pairs are inliers, a set of
/// inliers only would have been drawn with probability `RANSAC_CONFIDENCE`.
fn draws_for(w: f64) -> usize {
    let all_in = w.powi(4);
    if all_in >= 1.0 {
        return 1;
    }
    let draws = (1.0 - RANSAC_CONFIDENCE).ln() / (1.0 - all_in).ln();
    if draws.is_finite() {
        draws.ceil().max(1.0) as usize
    } else {
        usize::MAX
    }
}

/// See `draws_for`.
const RANSAC_CONFIDENCE: f64 = 0.999;
/// Draws made at the least (when the caller allows as many): later draws still find sets a
/// few inliers larger, and stopping at the first good set lost three roboflow boards' corners
/// their quarter spacing.
const MIN_DRAWS: usize = 50;

fn mark_inliers(
    h: &Homography,
    src: &[Point],
    dst: &[Point],
    tol: f64,
    mask: &mut [bool],
) -> usize {
    let mut count = 0;
    for ((s, d), m) in src.iter().zip(dst).zip(mask.iter_mut()) {
        *m = h
            .apply(*s)
            .is_some_and(|p| (p[0] - d[0]).hypot(p[1] - d[1]) <= tol);
        count += usize::from(*m);
    }
    count
}

/// A small deterministic generator (SplitMix64), enough for sampling.
pub(crate) struct SplitMix(pub u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Homography = Homography([1.3, 0.2, 120.0, -0.1, 0.9, 45.0, 0.0009, 0.0004, 1.0]);

    fn grid() -> Vec<Point> {
        (0..19 * 19)
            .map(|i| [(i % 19) as f64, (i / 19) as f64])
            .collect()
    }

    fn close(a: Point, b: Point, tol: f64) -> bool {
        (a[0] - b[0]).hypot(a[1] - b[1]) <= tol
    }

    #[test]
    fn fit_recovers_an_exact_map_from_four_and_many_points() {
        let src = grid();
        let dst: Vec<Point> = src.iter().map(|&p| H.apply(p).unwrap()).collect();
        let corners = [0, 18, 360, 342];
        let four = Homography::fit(&corners.map(|i| src[i]), &corners.map(|i| dst[i])).unwrap();
        let all = Homography::fit(&src, &dst).unwrap();
        for (s, d) in src.iter().zip(&dst) {
            assert!(close(four.apply(*s).unwrap(), *d, 1e-6));
            assert!(close(all.apply(*s).unwrap(), *d, 1e-6));
        }
        let inv = all.inverse().unwrap();
        assert!(close(inv.apply(dst[200]).unwrap(), src[200], 1e-9));
    }

    #[test]
    fn degenerate_points_give_no_fit() {
        let line: Vec<Point> = (0..6).map(|i| [i as f64, 2.0 * i as f64]).collect();
        assert!(Homography::fit(&line, &line).is_none());
        assert!(Homography::fit(&line[..3], &line[..3]).is_none());
    }

    #[test]
    fn ransac_ignores_a_third_of_outliers() {
        let src = grid();
        let mut rng = SplitMix(7);
        let mut outlier = vec![false; src.len()];
        let dst: Vec<Point> = src
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                let q = H.apply(p).unwrap();
                if i % 3 == 0 {
                    outlier[i] = true;
                    [
                        q[0] + 10.0 + rng.below(80) as f64,
                        q[1] - 10.0 - rng.below(80) as f64,
                    ]
                } else {
                    // Half a pixel of noise on the true points.
                    [q[0] + (rng.below(100) as f64 - 50.0) / 100.0, q[1]]
                }
            })
            .collect();
        let plain = Homography::fit(&src, &dst).unwrap();
        assert!(!close(
            plain.apply(src[1]).unwrap(),
            H.apply(src[1]).unwrap(),
            1.0
        ));
        let fit = fit_ransac(&src, &dst, 2.0, 200, 1).unwrap();
        for (i, p) in src.iter().enumerate() {
            assert!(close(fit.h.apply(*p).unwrap(), H.apply(*p).unwrap(), 0.5));
            assert_eq!(fit.inliers[i], !outlier[i], "pair {i}");
        }
    }

    #[test]
    fn ransac_draws_fewer_sets_the_more_pairs_are_inliers() {
        assert_eq!(draws_for(1.0), 1);
        // (1 - 0.9^4)^7 < 0.001 <= (1 - 0.9^4)^6; for a half it takes 108 draws.
        assert_eq!(draws_for(0.9), 7);
        assert_eq!(draws_for(0.5), 108);
        assert_eq!(draws_for(0.0), usize::MAX);
    }
}
