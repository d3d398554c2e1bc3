//! The board's surface: wood grain, grid lines and star points, anti-aliased over each
//! pixel's footprint.

use super::scene::BoardLook;

/// A hash of a lattice point to [0, 1).
fn hash(seed: u64, i: i64, j: i64) -> f64 {
    let mut z = seed
        ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (j as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 32)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The largest integer not above `x` (libm's floor is a call on baseline x86-64).
pub fn floor(x: f64) -> f64 {
    let i = x as i64 as f64;
    if i > x {
        i - 1.0
    } else {
        i
    }
}

/// Smooth value noise in [0, 1) with unit lattice spacing.
pub fn value_noise(seed: u64, x: f64, y: f64) -> f64 {
    let (fx, fy) = (floor(x), floor(y));
    let (i, j) = (fx as i64, fy as i64);
    let (tx, ty) = (x - fx, y - fy);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let a = hash(seed, i, j);
    let b = hash(seed, i + 1, j);
    let c = hash(seed, i, j + 1);
    let d = hash(seed, i + 1, j + 1);
    let top = a + (b - a) * sx;
    let bottom = c + (d - c) * sx;
    top + (bottom - top) * sy
}

/// The slowly varying part of the wood at world position (x, y): how far the grain is bent
/// and the blotchiness. Smooth, so it can be interpolated between nearby points.
#[derive(Clone, Copy, Debug, Default)]
pub struct Slow {
    /// Shift of the grain's phase, in periods.
    pub bend: f64,
    /// Brightness blotch, about -0.5..0.5.
    pub blotch: f64,
}

impl Slow {
    /// The weighted sum of four values (bilinear interpolation).
    pub fn blend(values: &[Slow; 4], weights: [f64; 4]) -> Slow {
        let mut out = Slow::default();
        for (v, w) in values.iter().zip(weights) {
            out.bend += v.bend * w;
            out.blotch += v.blotch * w;
        }
        out
    }
}

/// The wood's slow variation at world position (x, y).
pub fn slow(look: &BoardLook, x: f64, y: f64) -> Slow {
    let (across, along) = if look.grain_vertical { (x, y) } else { (y, x) };
    // Stripes across the grain are bent by slow noise so they wander like growth rings.
    Slow {
        bend: 2.5 * value_noise(look.wood_seed, across * 0.35, along * 0.06),
        blotch: value_noise(look.wood_seed ^ 0x55, x * 0.25, y * 0.25) - 0.5,
    }
}

/// The wood's colour (linear RGB) at world position (x, y), grain only.
pub fn wood(look: &BoardLook, x: f64, y: f64) -> [f64; 3] {
    wood_with(look, x, y, slow(look, x, y))
}

/// The wood's colour at world position (x, y) given its slow variation there.
pub fn wood_with(look: &BoardLook, x: f64, y: f64, slow: Slow) -> [f64; 3] {
    let across = if look.grain_vertical { x } else { y };
    let phase = across * look.grain_frequency + slow.bend;
    // A smooth bump once per period (a parabola of the phase's fraction), cubed so late
    // wood is a narrow band; cheaper than a sine per pixel.
    let t = phase - floor(phase);
    let bump = 4.0 * t * (1.0 - t);
    let stripe = bump * bump * bump;
    // Fine fibres: a cheap hash of thin bands across the grain.
    let fine = hash(look.wood_seed ^ 0xAA, floor(across * 14.0) as i64, 0) - 0.5;
    let f = 1.0 - look.grain * (0.2 * stripe - 0.12 * slow.blotch - 0.05 * fine);
    // Late wood is darker and redder.
    [
        look.wood[0] * f,
        look.wood[1] * (f - 0.04 * look.grain * stripe),
        look.wood[2] * (f - 0.1 * look.grain * stripe),
    ]
}

/// The share of a pixel spanning `extent` (in the same units) around offset `dist` from a
/// band of width `width` centred at 0.
fn band_coverage(dist: f64, width: f64, extent: f64) -> f64 {
    let half = width / 2.0;
    let e = extent.max(1e-6) / 2.0;
    let overlap = (dist + e).min(half) - (dist - e).max(-half);
    (overlap / (2.0 * e)).clamp(0.0, 1.0)
}

/// The lines carrying star points on an n-line board.
fn star_lines(n: usize) -> &'static [usize] {
    match n {
        19 => &[3, 9, 15],
        13 => &[3, 6, 9],
        9 => &[2, 4, 6],
        _ => &[],
    }
}

/// Whether (column, row) is a star point of an n-line board.
pub fn is_star(n: usize, col: usize, row: usize) -> bool {
    let lines = star_lines(n);
    // 9x9 boards mark the four 3-3 points and tengen, not the sides.
    lines.contains(&col) && lines.contains(&row) && !(n == 9 && (row == 4) != (col == 4))
}

/// The star points of an n-line board, (column, row), row-major.
pub fn star_points(n: usize) -> Vec<(usize, usize)> {
    (0..n * n)
        .map(|i| (i % n, i / n))
        .filter(|&(c, r)| is_star(n, c, r))
        .collect()
}

/// How much ink covers a pixel at board position (col, row) whose footprint spans
/// `ex` columns and `ey` rows, for an n-line board.
pub fn ink(look: &BoardLook, n: usize, col: f64, row: f64, ex: f64, ey: f64) -> f64 {
    let last = (n - 1) as f64;
    let w = look.line_width;
    let along = |t: f64| (-w / 2.0..=last + w / 2.0).contains(&t);
    let mut clear = 1.0;
    let kc = floor(col + 0.5).clamp(0.0, last);
    if along(row) {
        clear *= 1.0 - band_coverage(col - kc, w, ex);
    }
    let kr = floor(row + 0.5).clamp(0.0, last);
    if along(col) {
        clear *= 1.0 - band_coverage(row - kr, w, ey);
    }
    if look.star_radius > 0.0 && is_star(n, kc as usize, kr as usize) {
        let d = ((col - kc) * (col - kc) + (row - kr) * (row - kr)).sqrt();
        let e = (ex + ey).max(1e-6) / 2.0;
        let cover = ((look.star_radius - d) / e + 0.5).clamp(0.0, 1.0);
        clear *= 1.0 - cover;
    }
    1.0 - clear
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_points_per_size() {
        assert_eq!(star_points(19).len(), 9);
        assert_eq!(star_points(13).len(), 9);
        assert_eq!(star_points(9), vec![(2, 2), (6, 2), (4, 4), (2, 6), (6, 6)]);
    }

    #[test]
    fn coverage_of_a_band() {
        assert_eq!(band_coverage(0.0, 0.1, 0.05), 1.0);
        assert_eq!(band_coverage(0.5, 0.1, 0.05), 0.0);
        assert!((band_coverage(0.0, 0.1, 0.2) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn value_noise_is_smooth_and_bounded() {
        for i in 0..200 {
            let x = i as f64 * 0.37;
            let a = value_noise(3, x, 1.3);
            let b = value_noise(3, x + 0.01, 1.3);
            assert!((0.0..1.0).contains(&a));
            assert!((a - b).abs() < 0.05);
        }
    }
}
