//! A small picture of the board as if seen from straight above, for panels: the frame
//! resampled through the board's grid into a square and encoded as JPEG.

use crate::find::FoundBoard;
use crate::frame::{Frame, FrameError, PixelFormat};
use crate::read::rectify::sample_rgb;

/// Cells of wood shown beyond the outermost lines, so edge stones are whole.
const MARGIN: f64 = 0.7;

/// Smallest and largest side accepted, in pixels.
pub const SIDES: std::ops::RangeInclusive<usize> = 16..=1024;

/// The board as seen from above, `side` pixels square (clamped to [`SIDES`]), turned
/// clockwise by `rotation` degrees (0, 90, 180 or 270; others count as 0) as the game's
/// board is; pixels the frame does not cover are black.
pub fn rectified(frame: &Frame, board: &FoundBoard, side: usize, rotation: u32) -> Frame {
    let side = side.clamp(*SIDES.start(), *SIDES.end());
    let (w, h) = (board.size.width() as f64, board.size.height() as f64);
    // The board's longer extent, margins included, fills the square.
    let span = (w.max(h) - 1.0) + 2.0 * MARGIN;
    let cell = span / side as f64;
    let mut data = vec![0u8; side * side * 3];
    for y in 0..side {
        for x in 0..side {
            // Where this output pixel sits on the game's board, then on the board as seen.
            let u = (x as f64 + 0.5) * cell - MARGIN - (span - (w - 1.0) - 2.0 * MARGIN) / 2.0;
            let v = (y as f64 + 0.5) * cell - MARGIN - (span - (h - 1.0) - 2.0 * MARGIN) / 2.0;
            let (col, row) = match rotation {
                90 => (v, (h - 1.0) - u),
                180 => ((w - 1.0) - u, (h - 1.0) - v),
                270 => ((w - 1.0) - v, u),
                _ => (u, v),
            };
            let Some(rgb) = board.point(col, row).and_then(|p| sample_rgb(frame, p)) else {
                continue;
            };
            let at = 3 * (y * side + x);
            for (o, c) in data[at..at + 3].iter_mut().zip(rgb) {
                *o = c.round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Frame::new(side, side, PixelFormat::Rgb, data).expect("the buffer fits the size")
}

/// [`rectified`] encoded as a JPEG of `quality` (1..=100).
pub fn thumbnail_jpeg(
    frame: &Frame,
    board: &FoundBoard,
    side: usize,
    rotation: u32,
    quality: u8,
) -> Result<Vec<u8>, FrameError> {
    let pic = rectified(frame, board, side, rotation);
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality.clamp(1, 100)),
        pic.data(),
        pic.width() as u32,
        pic.height() as u32,
        image::ExtendedColorType::Rgb8,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{render, Scene, Variation};
    use tengen_rules::{BoardSize, Player};

    #[test]
    fn a_black_stone_shows_dark_where_the_game_has_it() {
        let size = BoardSize::square(9).unwrap();
        let mut stones = vec![None; 81];
        // Row 0, column 2 of the board as seen.
        stones[2] = Some(Player::Black);
        let variation = Variation {
            max_tilt_degrees: 20.0,
            max_rotation_degrees: 5.0,
            max_distortion: 0.0,
            hand_probability: 0.0,
            ..Variation::default()
        };
        let scene = Scene::random(size, stones, 4, &variation);
        let shot = render(&scene);
        let board = crate::track::board_from_corners(size, shot.corners).unwrap();
        let side = 120;
        // Mean brightness around board point (col, row) in a picture.
        let lum = |pic: &Frame, col: f64, row: f64| {
            let per_px = (8.0 + 2.0 * MARGIN) / side as f64;
            let (cx, cy) = ((col + MARGIN) / per_px, (row + MARGIN) / per_px);
            let mut sum = 0.0;
            for dy in -2..=2 {
                for dx in -2..=2 {
                    let (x, y) = ((cx as i64 + dx) as usize, (cy as i64 + dy) as usize);
                    let i = 3 * (y * side + x);
                    sum += pic.data()[i..i + 3]
                        .iter()
                        .map(|&c| f64::from(c))
                        .sum::<f64>();
                }
            }
            sum / 75.0
        };
        let pic = rectified(&shot.frame, &board, side, 0);
        assert_eq!((pic.width(), pic.height()), (side, side));
        assert!(lum(&pic, 2.0, 0.0) + 60.0 < lum(&pic, 6.0, 4.0));
        // Turned a quarter clockwise, the top row becomes the right-hand column.
        let turned = rectified(&shot.frame, &board, side, 90);
        assert!(lum(&turned, 8.0, 2.0) + 60.0 < lum(&turned, 2.0, 4.0));
        let jpeg = thumbnail_jpeg(&shot.frame, &board, side, 0, 80).unwrap();
        let back = Frame::decode(&jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (side, side));
    }
}
