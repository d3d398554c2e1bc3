//! Motion and hands, per point: each intersection's patch (sampled through the board's
//! homography) is compared with the last frame's, and checked for skin that the board
//! itself does not show. A point in a moving region or under a hand is unseen.
//!
//! Skin colour alone does not tell a hand from a stone: under warm light a white stone
//! passes every skin rule and stands as far from the wood's colour as a hand does. What
//! tells them apart is that a stone stays put: a skin-like point whose patch has been
//! still for a few frames and that the reader reads with confidence (its classifier knows
//! hands as occluded) is a stone or wood, not a hand.

use crate::find::FoundBoard;
use crate::frame::{Frame, PixelFormat};

use super::settle::Observation;

/// Samples per side of a point's patch (a square half a spacing either way).
const PATCH: usize = 5;
/// Mean grey change per sample, beyond the board-wide change (exposure), that is motion.
const MOTION_LEVEL: f32 = 14.0;
/// Share of a patch's samples that must look like skin for the point to be under a hand.
const SKIN_SHARE: f32 = 0.4;
/// How far (RGB distance) a skin-like patch must be from the board's wood to count: wood
/// is often skin-coloured itself.
const SKIN_FROM_WOOD: f32 = 40.0;
/// Frames a skin-like point's own patch must have been still, read with confidence, to be
/// taken as what it is read as rather than a hand (the first clear frame after a hand
/// leaves still differs from the last one under it, so this is about 0.1 s after that).
const STILL_FRAMES: u8 = 2;
/// The least confidence of a reading that can clear a skin-like point.
const SURE_READING: f32 = 0.9;

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

/// Remembers each point's last patch and how long it has been still; owns its buffers,
/// so a frame of the same board allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct Motion {
    last: Vec<[f32; PATCH * PATCH]>,
    /// Per point: frames in a row its own patch has not moved (0 without a last frame).
    still: Vec<u8>,
    patches: Vec<[f32; PATCH * PATCH]>,
    skin: Vec<f32>,
    colour: Vec<[f32; 3]>,
    diffs: Vec<f32>,
    sorted: Vec<f32>,
    moving: Vec<bool>,
    cover: Vec<Cover>,
}

impl Motion {
    /// A detector with no history: the first frame shows no motion.
    pub fn new() -> Motion {
        Motion::default()
    }

    /// Forgets the last frame (after the board was lost or found again).
    pub fn reset(&mut self) {
        self.last.clear();
        self.still.clear();
    }

    /// Each point's cover in this frame, row-major from the board's top-left. `readings`
    /// are the reader's for the same frame (empty when there are none: every skin-like
    /// point is then a hand).
    pub fn update(
        &mut self,
        frame: &Frame,
        board: &FoundBoard,
        readings: &[Observation],
    ) -> &[Cover] {
        let (w, h) = (board.size.width(), board.size.height());
        let n = w * h;
        self.patches.clear();
        self.skin.clear();
        self.colour.clear();
        for row in 0..h {
            for col in 0..w {
                let (p, s, c) = patch(frame, board, col as f64, row as f64);
                self.patches.push(p);
                self.skin.push(s);
                self.colour.push(c);
            }
        }
        self.moving.clear();
        self.moving.resize(n, false);
        let history = self.last.len() == n && self.still.len() == n;
        if history {
            self.diffs.clear();
            self.diffs
                .extend(self.patches.iter().zip(&self.last).map(|(a, b)| {
                    a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f32>() / a.len() as f32
                }));
            self.sorted.clone_from(&self.diffs);
            self.sorted.sort_by(f32::total_cmp);
            let common = self.sorted[n / 2];
            for i in 0..n {
                self.moving[i] = self.diffs[i] - common > MOTION_LEVEL;
                self.still[i] = if self.moving[i] {
                    0
                } else {
                    self.still[i].saturating_add(1)
                };
            }
        } else {
            self.still.clear();
            self.still.resize(n, 0);
        }
        self.cover.clear();
        self.cover.resize(n, Cover::Clear);
        // Hands: skin-like and unlike the board's usual colour (the median patch colour),
        // unless the point has held still and reads clearly as a stone or wood.
        let wood = median_colour(&self.colour, &mut self.sorted);
        for i in 0..n {
            let d = (0..3)
                .map(|k| (self.colour[i][k] - wood[k]).powi(2))
                .sum::<f32>()
                .sqrt();
            let sure = readings
                .get(i)
                .is_some_and(|r| r.stone.is_some() && r.confidence >= SURE_READING);
            let settled = sure && self.still[i] >= STILL_FRAMES;
            if self.skin[i] >= SKIN_SHARE && d >= SKIN_FROM_WOOD && !settled {
                self.cover[i] = Cover::Hand;
            }
        }
        if history {
            // A neighbour of a moving point is held too: motion blurs past patch edges.
            for y in 0..h {
                for x in 0..w {
                    let near = (y.saturating_sub(1)..(y + 2).min(h)).any(|yy| {
                        (x.saturating_sub(1)..(x + 2).min(w)).any(|xx| self.moving[yy * w + xx])
                    });
                    if near && self.cover[y * w + x] == Cover::Clear {
                        self.cover[y * w + x] = Cover::Moving;
                    }
                }
            }
        }
        std::mem::swap(&mut self.last, &mut self.patches);
        &self.cover
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

/// The per-channel median of the colours (`scratch` is reused).
fn median_colour(colours: &[[f32; 3]], scratch: &mut Vec<f32>) -> [f32; 3] {
    std::array::from_fn(|k| {
        scratch.clear();
        scratch.extend(colours.iter().map(|c| c[k]));
        scratch.sort_by(f32::total_cmp);
        scratch.get(scratch.len() / 2).copied().unwrap_or(0.0)
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
        assert!(m
            .update(&frame, &board, &[])
            .iter()
            .all(|&c| c == Cover::Clear));
        assert!(m
            .update(&frame, &board, &[])
            .iter()
            .all(|&c| c == Cover::Clear));
        // A dark stone appears at (4, 4), 100 px from the corner.
        paint(&mut frame, 92, 92, 17, [20, 20, 20]);
        let c = m.update(&frame, &board, &[]);
        assert_eq!(c[4 * 9 + 4], Cover::Moving);
        assert_eq!(c[3 * 9 + 5], Cover::Moving);
        assert_eq!(c[0], Cover::Clear);
        // Still again: clear.
        assert!(m
            .update(&frame, &board, &[])
            .iter()
            .all(|&c| c == Cover::Clear));
    }

    #[test]
    fn skin_over_the_board_is_a_hand_but_skin_coloured_wood_is_not() {
        let (mut frame, board) = setup();
        let mut m = Motion::new();
        // The wood itself passes the skin rule: it must not count as a hand.
        assert!(is_skin([200, 170, 110]));
        assert!(m
            .update(&frame, &board, &[])
            .iter()
            .all(|&c| c == Cover::Clear));
        // A pinkish hand over the bottom-left corner.
        paint(&mut frame, 0, 130, 70, [225, 140, 130]);
        let c = m.update(&frame, &board, &[]);
        assert_eq!(c[8 * 9], Cover::Hand);
        assert_eq!(c[0], Cover::Clear);
    }

    #[test]
    fn a_still_stone_that_passes_the_skin_rule_is_a_hand_only_until_it_reads_clearly() {
        use crate::track::{Observation, Stone};
        let (mut frame, board) = setup();
        let white = Observation {
            stone: Some(Stone::White),
            confidence: 0.99,
        };
        let doubtful = Observation {
            confidence: 0.7,
            ..white
        };
        let mut sure = vec![white; 81];
        let mut unsure = vec![doubtful; 81];
        let (mut m, mut blind, mut doubting) = (Motion::new(), Motion::new(), Motion::new());
        for _ in 0..2 {
            m.update(&frame, &board, &sure);
            blind.update(&frame, &board, &[]);
            doubting.update(&frame, &board, &unsure);
        }
        // A white stone under warm light at (4, 4): skin-like and far from the wood.
        let stone = [235, 200, 160];
        assert!(is_skin(stone));
        paint(&mut frame, 92, 92, 17, stone);
        let at = 4 * 9 + 4;
        sure[at] = white;
        unsure[at] = doubtful;
        // It arrived (a hand may have brought it): held as a hand while it has not been still.
        for frame_no in 0..2 {
            assert_eq!(
                m.update(&frame, &board, &sure)[at],
                Cover::Hand,
                "{frame_no}"
            );
            assert_eq!(blind.update(&frame, &board, &[])[at], Cover::Hand);
            assert_eq!(doubting.update(&frame, &board, &unsure)[at], Cover::Hand);
        }
        // Still for two frames and read clearly: a stone. Without a clear reading: a hand.
        assert_eq!(m.update(&frame, &board, &sure)[at], Cover::Clear);
        assert_eq!(blind.update(&frame, &board, &[])[at], Cover::Hand);
        assert_eq!(doubting.update(&frame, &board, &unsure)[at], Cover::Hand);
        // It moves again: a hand until still again.
        paint(&mut frame, 92, 92, 17, [225, 140, 130]);
        assert_eq!(m.update(&frame, &board, &sure)[at], Cover::Hand);
    }
}
