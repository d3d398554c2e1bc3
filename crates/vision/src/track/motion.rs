//! Motion and hands, per point: each intersection's patch (sampled through the board's
//! homography) is compared with the last frame's, and checked for skin that the board
//! itself does not show. A point in a moving region or under a hand is unseen.

use crate::find::FoundBoard;
use crate::frame::{Frame, PixelFormat};

/// Samples per side of a point's patch (a square half a spacing either way).
const PATCH: usize = 5;
/// Mean grey change per sample, beyond the board-wide change (exposure), that is motion.
const MOTION_LEVEL: f32 = 14.0;
/// Share of a patch's samples that must look like skin for the point to be under a hand.
const SKIN_SHARE: f32 = 0.4;
/// How far (RGB distance) a skin-like patch must be from the board's wood to count: wood
/// is often skin-coloured itself.
const SKIN_FROM_WOOD: f32 = 40.0;

/// Why a point cannot be read in this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cover {
    /// Nothing over it, nothing moving.
    Clear,
    /// The patch changed since the last frame (or a neighbour's did).
    Moving,
    /// Skin (a hand or an arm) over it.
    Hand,
}

/// Remembers each point's last patch.
#[derive(Clone, Debug, Default)]
pub struct Motion {
    last: Vec<[f32; PATCH * PATCH]>,
}

impl Motion {
    /// A detector with no history: the first frame shows no motion.
    pub fn new() -> Motion {
        Motion::default()
    }

    /// Forgets the last frame (after the board was lost or found again).
    pub fn reset(&mut self) {
        self.last.clear();
    }

    /// Each point's cover in this frame, row-major from the board's top-left.
    pub fn update(&mut self, frame: &Frame, board: &FoundBoard) -> Vec<Cover> {
        let (w, h) = (board.size.width(), board.size.height());
        let mut patches = Vec::with_capacity(w * h);
        let mut skin = Vec::with_capacity(w * h);
        let mut colour = Vec::with_capacity(w * h);
        for row in 0..h {
            for col in 0..w {
                let (p, s, c) = patch(frame, board, col as f64, row as f64);
                patches.push(p);
                skin.push(s);
                colour.push(c);
            }
        }
        let mut cover = vec![Cover::Clear; w * h];
        // Hands: skin-like and unlike the board's usual colour (the median patch colour).
        let wood = median_colour(&colour);
        for i in 0..w * h {
            let d = (0..3)
                .map(|k| (colour[i][k] - wood[k]).powi(2))
                .sum::<f32>()
                .sqrt();
            if skin[i] >= SKIN_SHARE && d >= SKIN_FROM_WOOD {
                cover[i] = Cover::Hand;
            }
        }
        if self.last.len() == patches.len() {
            let diffs: Vec<f32> = patches
                .iter()
                .zip(&self.last)
                .map(|(a, b)| {
                    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f32>() / a.len() as f32
                })
                .collect();
            let mut sorted = diffs.clone();
            sorted.sort_by(f32::total_cmp);
            let common = sorted[sorted.len() / 2];
            let moving: Vec<bool> = diffs.iter().map(|d| d - common > MOTION_LEVEL).collect();
            // A neighbour of a moving point is held too: motion blurs past patch edges.
            for y in 0..h {
                for x in 0..w {
                    let near = (y.saturating_sub(1)..(y + 2).min(h)).any(|yy| {
                        (x.saturating_sub(1)..(x + 2).min(w)).any(|xx| moving[yy * w + xx])
                    });
                    if near && cover[y * w + x] == Cover::Clear {
                        cover[y * w + x] = Cover::Moving;
                    }
                }
            }
        }
        self.last = patches;
        cover
    }
}

/// A point's patch of grey samples, the share of them that look like skin, and its mean colour.
fn patch(
    frame: &Frame,
    board: &FoundBoard,
    col: f64,
    row: f64,
) -> ([f32; PATCH * PATCH], f32, [f32; 3]) {
    let mut out = [0.0f32; PATCH * PATCH];
    let mut skin = 0usize;
    let mut sum = [0.0f32; 3];
    for j in 0..PATCH {
        for i in 0..PATCH {
            let u = col + (i as f64 + 0.5) / PATCH as f64 - 0.5;
            let v = row + (j as f64 + 0.5) / PATCH as f64 - 0.5;
            let rgb = board
                .point(u, v)
                .map_or([0, 0, 0], |[x, y]| pixel(frame, x, y));
            let [r, g, b] = rgb.map(f32::from);
            out[j * PATCH + i] = 0.299 * r + 0.587 * g + 0.114 * b;
            skin += usize::from(is_skin(rgb));
            sum = [sum[0] + r, sum[1] + g, sum[2] + b];
        }
    }
    let n = (PATCH * PATCH) as f32;
    (out, skin as f32 / n, sum.map(|s| s / n))
}

/// The pixel nearest (x, y), black outside the frame.
fn pixel(frame: &Frame, x: f64, y: f64) -> [u8; 3] {
    let (xi, yi) = (x.round(), y.round());
    if !(xi >= 0.0 && yi >= 0.0 && xi < frame.width() as f64 && yi < frame.height() as f64) {
        return [0, 0, 0];
    }
    let i = yi as usize * frame.width() + xi as usize;
    let d = frame.data();
    match frame.format() {
        PixelFormat::Rgb => [d[3 * i], d[3 * i + 1], d[3 * i + 2]],
        PixelFormat::Grey => [d[i]; 3],
    }
}

/// A common RGB rule for skin under ordinary light (a grey frame shows none).
fn is_skin([r, g, b]: [u8; 3]) -> bool {
    let (r, g, b) = (i32::from(r), i32::from(g), i32::from(b));
    r > 95
        && g > 40
        && b > 20
        && r > g
        && r > b
        && r - g > 15
        && r - g.min(b) > 15
        && (r - g).abs() > 15
}

fn median_colour(colours: &[[f32; 3]]) -> [f32; 3] {
    std::array::from_fn(|k| {
        let mut v: Vec<f32> = colours.iter().map(|c| c[k]).collect();
        v.sort_by(f32::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::board_from_corners;
    use tengen_rules::BoardSize;

    /// A flat wood-coloured frame with a 9x9 board placed over most of it.
    fn setup() -> (Frame, FoundBoard) {
        let (w, h) = (200usize, 200usize);
        let data = [200u8, 170, 110].repeat(w * h);
        let frame = Frame::new(w, h, PixelFormat::Rgb, data).unwrap();
        let board = board_from_corners(
            BoardSize::square(9).unwrap(),
            [[20.0, 20.0], [180.0, 20.0], [180.0, 180.0], [20.0, 180.0]],
        )
        .unwrap();
        (frame, board)
    }

    fn paint(frame: &mut Frame, x0: i64, y0: i64, size: i64, rgb: [u8; 3]) {
        for y in y0..y0 + size {
            for x in x0..x0 + size {
                frame.put(x, y, rgb);
            }
        }
    }

    #[test]
    fn a_still_board_is_clear_and_a_change_is_motion_around_it() {
        let (mut frame, board) = setup();
        let mut m = Motion::new();
        assert!(m.update(&frame, &board).iter().all(|&c| c == Cover::Clear));
        assert!(m.update(&frame, &board).iter().all(|&c| c == Cover::Clear));
        // A dark stone appears at (4, 4), 100 px from the corner.
        paint(&mut frame, 92, 92, 17, [20, 20, 20]);
        let c = m.update(&frame, &board);
        assert_eq!(c[4 * 9 + 4], Cover::Moving);
        assert_eq!(c[3 * 9 + 5], Cover::Moving);
        assert_eq!(c[0], Cover::Clear);
        // Still again: clear.
        assert!(m.update(&frame, &board).iter().all(|&c| c == Cover::Clear));
    }

    #[test]
    fn skin_over_the_board_is_a_hand_but_skin_coloured_wood_is_not() {
        let (mut frame, board) = setup();
        let mut m = Motion::new();
        // The wood itself passes the skin rule: it must not count as a hand.
        assert!(is_skin([200, 170, 110]));
        assert!(m.update(&frame, &board).iter().all(|&c| c == Cover::Clear));
        // A pinkish hand over the bottom-left corner.
        paint(&mut frame, 0, 130, 70, [225, 140, 130]);
        let c = m.update(&frame, &board);
        assert_eq!(c[8 * 9], Cover::Hand);
        assert_eq!(c[0], Cover::Clear);
    }
}
