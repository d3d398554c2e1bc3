//! A plain reader by brightness, for when no classifier is given: each intersection's
//! centre against the board's usual (median) level. Dark is black, bright is white, and a
//! point in between either is unseen rather than guessed.

use super::{Observation, PointReader, Stone};
use crate::find::FoundBoard;
use crate::frame::Frame;

/// Reads stones by the grey level at each intersection relative to the board's median.
#[derive(Clone, Copy, Debug, Default)]
pub struct LevelReader;

/// Below this share of the median level a point is black, above `WHITE` white; within
/// `EMPTY` of the median it is empty; anywhere else it is unseen.
const BLACK: f32 = 0.45;
const WHITE: f32 = 1.45;
const EMPTY: f32 = 0.25;

impl PointReader for LevelReader {
    fn read(&mut self, frame: &Frame, board: &FoundBoard) -> Vec<Observation> {
        let grey = frame.to_grey();
        let (w, h) = (board.size.width(), board.size.height());
        // The mean of a small cross around each intersection (the line itself is dark, so
        // the samples sit a fifth of a spacing off it, diagonally).
        let level = |c: f64, r: f64| -> Option<f32> {
            let mut sum = 0.0f32;
            for (du, dv) in [(0.2, 0.2), (-0.2, 0.2), (0.2, -0.2), (-0.2, -0.2)] {
                let [x, y] = board.point(c + du, r + dv)?;
                let (x, y) = (x.round(), y.round());
                if !(x >= 0.0 && y >= 0.0 && x < frame.width() as f64 && y < frame.height() as f64)
                {
                    return None;
                }
                sum += f32::from(grey[y as usize * frame.width() + x as usize]);
            }
            Some(sum / 4.0)
        };
        let levels: Vec<Option<f32>> = (0..h)
            .flat_map(|r| (0..w).map(move |c| (c as f64, r as f64)))
            .map(|(c, r)| level(c, r))
            .collect();
        let mut known: Vec<f32> = levels.iter().flatten().copied().collect();
        known.sort_by(f32::total_cmp);
        let Some(&median) = known.get(known.len() / 2) else {
            return vec![Observation::UNSEEN; w * h];
        };
        let median = median.max(1.0);
        levels
            .iter()
            .map(|l| {
                let Some(l) = l else {
                    return Observation::UNSEEN;
                };
                let r = l / median;
                let (stone, confidence) = if r < BLACK {
                    (Stone::Black, 1.0 - r / BLACK * 0.5)
                } else if r > WHITE {
                    (Stone::White, (0.5 + (r - WHITE)).min(1.0))
                } else if (r - 1.0).abs() < EMPTY {
                    (Stone::Empty, 1.0 - (r - 1.0).abs() / EMPTY * 0.5)
                } else {
                    return Observation::UNSEEN;
                };
                Observation {
                    stone: Some(stone),
                    confidence,
                }
            })
            .collect()
    }
}
