//! Colour correction: every patch is divided, channel by channel, by the colour of the wood
//! around its intersection, so coloured casts (white balance) and dim light cancel out and
//! empty wood reads as 0 whatever the light.

use crate::find::FoundBoard;
use crate::frame::Frame;

use super::rectify::{sample_rgb, PATCH, PATCH_LEN};

/// Offsets (in cells) averaged around a cell's centre when sampling its wood.
const WOOD_TAPS: [f64; 3] = [-0.12, 0.0, 0.12];
/// Cells either side of an intersection whose centres vote on its wood colour.
const WOOD_REACH: usize = 2;
/// Below this (0..255), a channel is too dark to divide by; it is clamped up to it.
const MIN_WOOD: f32 = 4.0;

/// The wood at the centre of every cell (row-major, (n-1)², NaN where it is off the frame):
/// no line passes there and a stone on a neighbouring intersection does not reach it.
pub fn cell_centres(frame: &Frame, board: &FoundBoard, out: &mut Vec<[f32; 3]>) {
    let cells = board.size.width().saturating_sub(1);
    out.clear();
    for r in 0..cells {
        for c in 0..cells {
            let (cx, cy) = (c as f64 + 0.5, r as f64 + 0.5);
            let mut sum = [0.0f32; 3];
            let mut count = 0.0f32;
            for dy in WOOD_TAPS {
                for dx in WOOD_TAPS {
                    if let Some(rgb) = board
                        .grid
                        .apply([cx + dx, cy + dy])
                        .and_then(|p| sample_rgb(frame, p))
                    {
                        for k in 0..3 {
                            sum[k] += rgb[k];
                        }
                        count += 1.0;
                    }
                }
            }
            out.push(if count > 0.0 {
                sum.map(|s| s / count)
            } else {
                [f32::NAN; 3]
            });
        }
    }
}

/// Each intersection's wood colour: the per-channel median of the cell centres within
/// `WOOD_REACH` cells (a median, because some of them hold a stone's shadow or top), or the
/// whole board's median where none was seen. `out` gets n² entries; the whole board's
/// median is returned.
pub fn local_wood(
    centres: &[[f32; 3]],
    n: usize,
    out: &mut Vec<[f32; 3]>,
    scratch: &mut Vec<f32>,
) -> [f32; 3] {
    let cells = n.saturating_sub(1);
    let global = median_rgb(centres.iter().copied(), scratch);
    out.clear();
    for r in 0..n {
        for c in 0..n {
            let rows = r.saturating_sub(WOOD_REACH)..(r + WOOD_REACH).min(cells);
            let cols = c.saturating_sub(WOOD_REACH)..(c + WOOD_REACH).min(cells);
            let near = rows.flat_map(|rr| cols.clone().map(move |cc| centres[rr * cells + cc]));
            let local = median_rgb(near, scratch);
            out.push(if local[0].is_nan() { global } else { local });
        }
    }
    global
}

/// The per-channel median of the finite colours, NaN when there are none. `scratch` is
/// reused between calls, so nothing is allocated once it has grown.
pub fn median_rgb(colours: impl Iterator<Item = [f32; 3]>, scratch: &mut Vec<f32>) -> [f32; 3] {
    scratch.clear();
    for c in colours.filter(|c| c.iter().all(|v| v.is_finite())) {
        scratch.extend_from_slice(&c);
    }
    let len = scratch.len() / 3;
    if len == 0 {
        return [f32::NAN; 3];
    }
    let mut out = [0.0; 3];
    for (k, o) in out.iter_mut().enumerate() {
        // Channel k goes after the interleaved colours, where its middle value is selected.
        for i in 0..len {
            let v = scratch[3 * i + k];
            scratch.push(v);
        }
        let (_, mid, _) = scratch[3 * len..].select_nth_unstable_by(len / 2, f32::total_cmp);
        *o = *mid;
        scratch.truncate(3 * len);
    }
    out
}

/// Turns a raw patch (planar RGB, 0..255, NaN off the frame) into the classifier's input:
/// each channel over the wood's, less one (empty wood is 0, a black stone near -1, a white
/// one above 0), clamped to [-1, 3]; pixels off the frame become 0.
pub fn normalise(patch: &mut [f32], wood: [f32; 3]) {
    debug_assert_eq!(patch.len(), PATCH_LEN);
    let plane = PATCH * PATCH;
    for (k, w) in wood.iter().enumerate() {
        let inv = 1.0 / w.max(MIN_WOOD);
        for v in &mut patch[k * plane..(k + 1) * plane] {
            *v = if v.is_finite() {
                (*v * inv - 1.0).clamp(-1.0, 3.0)
            } else {
                0.0
            };
        }
    }
}

/// The wood seen on an empty board, kept to correct later frames against: the spatial
/// pattern of the light (vignetting, a lamp's falloff) comes from the empty board, its
/// overall level and tint from the frame being read.
#[derive(Clone, Debug, PartialEq)]
pub struct EmptyReference {
    /// Lines per side of the board it was taken on.
    pub n: usize,
    /// Each intersection's wood colour on the empty board (n², row-major).
    pub wood: Vec<[f32; 3]>,
    /// The median over the board of the empty board's cell centres.
    pub overall: [f32; 3],
}

impl EmptyReference {
    /// Each intersection's wood now: the empty board's pattern scaled by how the board's
    /// overall colour changed since (`now` is this frame's median cell centre).
    pub fn apply(&self, now: [f32; 3], out: &mut [[f32; 3]]) {
        let gain: [f32; 3] = std::array::from_fn(|k| {
            if now[k].is_finite() && self.overall[k] > 0.0 {
                now[k] / self.overall[k]
            } else {
                1.0
            }
        });
        for (o, w) in out.iter_mut().zip(&self.wood) {
            *o = std::array::from_fn(|k| w[k] * gain[k]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_ignores_a_minority_of_stones_and_nan() {
        let mut cols = vec![[200.0, 150.0, 90.0]; 9];
        cols.extend([[10.0, 10.0, 10.0]; 4]);
        cols.push([f32::NAN; 3]);
        let mut s = Vec::new();
        assert_eq!(
            median_rgb(cols.iter().copied(), &mut s),
            [200.0, 150.0, 90.0]
        );
        let many: Vec<[f32; 3]> = (0..100).map(|i| [i as f32, 2.0 * i as f32, 7.0]).collect();
        assert_eq!(median_rgb(many.into_iter(), &mut s), [50.0, 100.0, 7.0]);
        assert!(median_rgb(std::iter::empty(), &mut s)
            .iter()
            .all(|v| v.is_nan()));
    }

    #[test]
    fn normalised_wood_is_zero_under_any_cast() {
        for wood in [
            [200.0, 150.0, 90.0],
            [60.0, 80.0, 120.0],
            [20.0, 18.0, 10.0],
        ] {
            let mut patch = vec![0.0; PATCH_LEN];
            let plane = PATCH * PATCH;
            for k in 0..3 {
                patch[k * plane..(k + 1) * plane].fill(wood[k]);
            }
            patch[0] = f32::NAN;
            normalise(&mut patch, wood);
            assert!(patch.iter().all(|v| v.abs() < 1e-5), "{wood:?}");
        }
    }

    #[test]
    fn local_wood_follows_a_gradient() {
        // 5 lines, 4x4 cells getting brighter to the right; one cell holds a black stone.
        let n = 5;
        let mut centres: Vec<[f32; 3]> = (0..16)
            .map(|i| [100.0 + 20.0 * (i % 4) as f32; 3])
            .collect();
        centres[5] = [5.0; 3];
        let mut out = Vec::new();
        local_wood(&centres, n, &mut out, &mut Vec::new());
        assert_eq!(out.len(), 25);
        assert!(out[0][0] < out[4][0]);
        assert!(out.iter().all(|w| w[0] >= 100.0));
    }
}
