//! Grey-level image operations the board finder needs: area downscaling and a map of thin
//! dark lines.

/// A single-channel float image, row-major.
#[derive(Clone, Debug)]
pub struct Plane {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// The values, row-major.
    pub data: Vec<f32>,
}

impl Plane {
    /// The value at integer (x, y), 0 outside.
    pub fn at(&self, x: i64, y: i64) -> f32 {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return 0.0;
        }
        self.data[y as usize * self.width + x as usize]
    }

    /// Bilinear value at (x, y), 0 outside.
    pub fn sample(&self, x: f64, y: f64) -> f32 {
        if !(x.is_finite() && y.is_finite()) {
            return 0.0;
        }
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = ((x - x0) as f32, (y - y0) as f32);
        let (xi, yi) = (x0 as i64, y0 as i64);
        let top = self.at(xi, yi) * (1.0 - fx) + self.at(xi + 1, yi) * fx;
        let bottom = self.at(xi, yi + 1) * (1.0 - fx) + self.at(xi + 1, yi + 1) * fx;
        top * (1.0 - fy) + bottom * fy
    }

    /// The largest value in the 3x3 neighbourhood of the pixel nearest (x, y).
    pub fn max3(&self, x: f64, y: f64) -> f32 {
        if !(x.is_finite() && y.is_finite()) {
            return 0.0;
        }
        let (xi, yi) = (x.round() as i64, y.round() as i64);
        let mut m = 0.0f32;
        for dy in -1..=1 {
            for dx in -1..=1 {
                m = m.max(self.at(xi + dx, yi + dy));
            }
        }
        m
    }
}

/// Summed-area table with a zero first row and column.
fn integral(width: usize, height: usize, value: impl Fn(usize) -> f64) -> Vec<f64> {
    let w1 = width + 1;
    let mut s = vec![0.0f64; w1 * (height + 1)];
    for y in 0..height {
        let mut row = 0.0;
        for x in 0..width {
            row += value(y * width + x);
            s[(y + 1) * w1 + x + 1] = s[y * w1 + x + 1] + row;
        }
    }
    s
}

/// The mean over the box [x0, x1) x [y0, y1) of a summed-area table.
fn box_mean(s: &[f64], w1: usize, x0: usize, y0: usize, x1: usize, y1: usize) -> f64 {
    let sum = s[y1 * w1 + x1] - s[y0 * w1 + x1] - s[y1 * w1 + x0] + s[y0 * w1 + x0];
    sum / ((x1 - x0) * (y1 - y0)) as f64
}

/// Shrinks a grey image by `factor` (≤ 1) averaging each output pixel's area.
pub fn downscale(grey: &[u8], width: usize, height: usize, factor: f64) -> Plane {
    let ow = ((width as f64 * factor).round() as usize).clamp(1, width);
    let oh = ((height as f64 * factor).round() as usize).clamp(1, height);
    let s = integral(width, height, |i| f64::from(grey[i]));
    let mut data = Vec::with_capacity(ow * oh);
    for y in 0..oh {
        let y0 = y * height / oh;
        let y1 = ((y + 1) * height / oh).max(y0 + 1);
        for x in 0..ow {
            let x0 = x * width / ow;
            let x1 = ((x + 1) * width / ow).max(x0 + 1);
            data.push(box_mean(&s, width + 1, x0, y0, x1, y1) as f32);
        }
    }
    Plane {
        width: ow,
        height: oh,
        data,
    }
}

/// How much darker each pixel is than its (2r+1)² neighbourhood, relative to that
/// neighbourhood's brightness: high on thin dark lines (a board's grid) whatever the light.
pub fn dark_lines(img: &Plane, r: usize) -> Plane {
    let (w, h) = (img.width, img.height);
    let s = integral(w, h, |i| f64::from(img.data[i]));
    let mut data = Vec::with_capacity(w * h);
    for y in 0..h {
        let (y0, y1) = (y.saturating_sub(r), (y + r + 1).min(h));
        for x in 0..w {
            let (x0, x1) = (x.saturating_sub(r), (x + r + 1).min(w));
            let mean = box_mean(&s, w + 1, x0, y0, x1, y1) as f32;
            // The offset keeps near-black regions (noise on a dark frame) from looking like lines.
            data.push(((mean - img.data[y * w + x]) / (mean + 24.0)).max(0.0));
        }
    }
    Plane {
        width: w,
        height: h,
        data,
    }
}

/// How much darker a grey level `v` is than the lighter-looking of its two sides `a` and
/// `b`, relative to that side's brightness (the offset keeps near-black noise from looking
/// like lines); 0 when it is not darker than both.
pub fn ridge(v: f32, a: f32, b: f32) -> f32 {
    let side = a.min(b);
    ((side - v) / (side + 24.0)).max(0.0)
}

/// How much darker each pixel is than the lighter-looking of its two sides, across the
/// best of four directions, at `r` pixels, relative to that side's brightness: high on thin
/// dark lines (lighter on both sides), near zero on the dark side of an edge, such as the
/// rim of a black stone, which `dark_lines` counts as line.
pub fn ridges(img: &Plane, r: usize) -> Plane {
    let (w, h) = (img.width, img.height);
    let mut data = vec![0.0f32; w * h];
    let r = r as i64;
    // Across a line: horizontal, vertical and both diagonals (a diagonal step of r pixels
    // reaches as far as r / √2 straight ones would not, so diagonals use a shorter step).
    let rd = ((r as f64) / std::f64::consts::SQRT_2).round().max(1.0) as i64;
    let dirs = [(r, 0), (0, r), (rd, rd), (rd, -rd)];
    for y in r..(h as i64 - r) {
        for x in r..(w as i64 - r) {
            let v = img.data[y as usize * w + x as usize];
            let mut best = 0.0f32;
            for (dx, dy) in dirs {
                let a = img.data[(y + dy) as usize * w + (x + dx) as usize];
                let b = img.data[(y - dy) as usize * w + (x - dx) as usize];
                best = best.max(ridge(v, a, b));
            }
            data[y as usize * w + x as usize] = best;
        }
    }
    Plane {
        width: w,
        height: h,
        data,
    }
}

/// The 3x3 median of every pixel (edges keep their value): removes salt-and-pepper noise,
/// which would otherwise look like tiny dark lines.
pub fn median3(img: &Plane) -> Plane {
    let (w, h) = (img.width, img.height);
    let mut data = img.data.clone();
    let mut win = [0.0f32; 9];
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            for dy in 0..3 {
                for dx in 0..3 {
                    win[dy * 3 + dx] = img.data[(y + dy - 1) * w + x + dx - 1];
                }
            }
            data[y * w + x] = *win.select_nth_unstable_by(4, f32::total_cmp).1;
        }
    }
    Plane {
        width: w,
        height: h,
        data,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Light wood (200) with a dark disc of radius 12 (a black stone, 30) at (20, 20) and a
    /// vertical line two pixels wide (120) at x = 50.
    fn stone_and_line() -> Plane {
        let (w, h) = (64, 40);
        let mut data = vec![200.0f32; w * h];
        for y in 0..h {
            for x in 0..w {
                let (dx, dy) = (x as f32 - 20.0, y as f32 - 20.0);
                if dx.hypot(dy) <= 12.0 {
                    data[y * w + x] = 30.0;
                }
                if x == 50 || x == 51 {
                    data[y * w + x] = 120.0;
                }
            }
        }
        Plane {
            width: w,
            height: h,
            data,
        }
    }

    #[test]
    fn ridges_keep_thin_lines_and_drop_the_rims_of_dark_discs() {
        let img = stone_and_line();
        let ridge = ridges(&img, 2);
        let dark = dark_lines(&img, 3);
        let at = |p: &Plane, x: usize, y: usize| p.data[y * p.width + x];
        // On the line both maps respond.
        assert!(at(&ridge, 50, 20) > 0.3, "{}", at(&ridge, 50, 20));
        assert!(at(&dark, 50, 20) > 0.2);
        // Just inside the disc's rim, darker than its neighbourhood but not than both of
        // its sides: a line to `dark_lines`, none to `ridges`.
        for (x, y) in [(9, 20), (31, 20), (20, 9), (28, 28)] {
            assert!(at(&dark, x, y) > 0.2, "dark_lines at ({x}, {y})");
            assert!(
                at(&ridge, x, y) < 0.01,
                "ridges at ({x}, {y}): {}",
                at(&ridge, x, y)
            );
        }
        // Inside the disc and on plain wood, nothing.
        assert_eq!(at(&ridge, 20, 20), 0.0);
        assert_eq!(at(&ridge, 40, 5), 0.0);
    }
}
