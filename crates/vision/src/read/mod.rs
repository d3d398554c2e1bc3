//! Reading the stones: for a frame and the board found in it, every intersection's state
//! (empty, black, white, or unseen) with a confidence.
//!
//! Each intersection's neighbourhood is rectified into a small patch through the grid
//! homography (`rectify`), divided by the colour of the wood around it (`colour`), and
//! classified as empty, black, white or occluded by a small network run through tract
//! (`cnn`), or by a brightness rule (`classical`). An occluded or doubtful point is
//! `Unseen`, never a guess.

pub mod classical;
pub mod colour;
mod reader;
pub mod rectify;

pub use colour::EmptyReference;
pub use reader::{ModelError, StoneReader};

use tengen_rules::BoardSize;

/// What a point holds, as far as the camera can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointState {
    /// Bare wood.
    Empty,
    /// A black stone.
    Black,
    /// A white stone.
    White,
    /// Not readable: under a hand, off the frame, or too doubtful to report.
    Unseen,
}

/// One intersection's reading.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointReading {
    /// The state read.
    pub state: PointState,
    /// How likely the state is right, 0..1 (for `Unseen`: how likely the point is covered
    /// or unreadable rather than merely doubtful).
    pub confidence: f32,
}

impl PointReading {
    /// A point that could not be read at all.
    pub const UNSEEN: PointReading = PointReading {
        state: PointState::Unseen,
        confidence: 0.0,
    };
}

/// A whole board's reading.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardReading {
    /// The board's size.
    pub size: BoardSize,
    /// One reading per intersection, row-major; row 0 is the line from the found board's
    /// top-left corner to its top-right one.
    pub points: Vec<PointReading>,
}

impl BoardReading {
    /// A board of `size` with every point unseen (the board is lost, or not found yet).
    pub fn unseen(size: BoardSize) -> Self {
        BoardReading {
            size,
            points: vec![PointReading::UNSEEN; size.area()],
        }
    }

    /// The reading at (column, row), `None` off the board.
    pub fn at(&self, col: usize, row: usize) -> Option<PointReading> {
        (col < self.size.width() && row < self.size.height())
            .then(|| self.points[row * self.size.width() + col])
    }
}

/// The classifiers' classes, in the order of their outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Bare wood.
    Empty = 0,
    /// A black stone.
    Black = 1,
    /// A white stone.
    White = 2,
    /// Something over the point (a hand, an arm), or a point that is not wood nor stone.
    Occluded = 3,
}

/// Class probabilities below this make a point `Unseen`: reporting a wrong stone is worse
/// than waiting for a clearer frame.
pub const MIN_CONFIDENCE: f32 = 0.6;

/// The reading of one point from its class probabilities.
pub fn decide(p: [f32; 4]) -> PointReading {
    let best = (0..4)
        .max_by(|&a, &b| p[a].total_cmp(&p[b]))
        .unwrap_or(Class::Occluded as usize);
    let confidence = p[best];
    let state = match best {
        _ if !confidence.is_finite() => return PointReading::UNSEEN,
        0 => PointState::Empty,
        1 => PointState::Black,
        2 => PointState::White,
        _ => {
            return PointReading {
                state: PointState::Unseen,
                confidence,
            }
        }
    };
    if confidence < MIN_CONFIDENCE {
        return PointReading {
            state: PointState::Unseen,
            confidence: 1.0 - confidence,
        };
    }
    PointReading { state, confidence }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubtful_and_occluded_points_are_unseen() {
        assert_eq!(decide([0.9, 0.05, 0.03, 0.02]).state, PointState::Empty);
        assert_eq!(decide([0.0, 0.0, 0.99, 0.01]).state, PointState::White);
        assert_eq!(decide([0.1, 0.0, 0.1, 0.8]).state, PointState::Unseen);
        let doubtful = decide([0.45, 0.4, 0.1, 0.05]);
        assert_eq!(doubtful.state, PointState::Unseen);
        assert!((doubtful.confidence - 0.55).abs() < 1e-6);
        assert_eq!(decide([f32::NAN; 4]), PointReading::UNSEEN);
    }

    #[test]
    fn an_unseen_board_has_every_point() {
        let b = BoardReading::unseen(BoardSize::square(13).unwrap());
        assert_eq!(b.points.len(), 169);
        assert_eq!(b.at(12, 12), Some(PointReading::UNSEEN));
        assert_eq!(b.at(13, 0), None);
    }
}
