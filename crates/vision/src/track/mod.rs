//! Live reading, sans-IO: frames with timestamps in, settled boards out. The
//! [`Tracker`] follows the board (finding it again when nudged), [`Motion`] marks points
//! under a hand or in motion, a [`PointReader`] reads the stones, and the [`Settler`]
//! reports a change only once it has been still for the settle time.

use std::time::Duration;

use crate::find::FoundBoard;
use crate::frame::Frame;

mod level;
mod motion;
mod settle;
mod tracker;

pub use level::LevelReader;
pub use motion::{Cover, Motion};
pub use settle::{Observation, SettleConfig, Settled, Settler, Stone, DEFAULT_SETTLE_MS};
pub use tracker::{board_from_corners, TrackStatus, Tracked, Tracker, SHIFT_PATIENCE};

/// Reads every point of a found board in one frame (row-major from the board's top-left).
pub trait PointReader {
    /// One observation per point; unseen where the reader cannot tell.
    fn read(&mut self, frame: &Frame, board: &FoundBoard) -> Vec<Observation>;
}

impl PointReader for crate::read::StoneReader {
    fn read(&mut self, frame: &Frame, board: &FoundBoard) -> Vec<Observation> {
        use crate::read::PointState;
        crate::read::StoneReader::read(self, frame, board)
            .points
            .iter()
            .map(|p| Observation {
                stone: match p.state {
                    PointState::Empty => Some(Stone::Empty),
                    PointState::Black => Some(Stone::Black),
                    PointState::White => Some(Stone::White),
                    PointState::Unseen => None,
                },
                confidence: p.confidence,
            })
            .collect()
    }
}

/// The stone reader with the committed classifier, or the plain brightness reader (with a
/// warning) when the classifier cannot be loaded.
pub fn default_reader() -> Box<dyn PointReader + Send> {
    match crate::read::StoneReader::new() {
        Ok(r) => Box::new(r),
        Err(e) => {
            log::warn!("{e}; reading stones by brightness instead");
            Box::new(LevelReader)
        }
    }
}

/// How the live reader is doing, for a status line or a retained status message.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// A board is placed in the frame (found, tracked or manual).
    pub board_found: bool,
    /// How the board was obtained, or why there is none.
    pub tracking: TrackStatus,
    /// Points unseen on the settled board; `None` before any board was seen (its size is
    /// not known), when the whole board is unseen.
    pub unseen: Option<usize>,
    /// A problem with the frames themselves (a stalled stream, an unplugged camera).
    pub source_error: Option<String>,
}

impl Status {
    /// One line for people.
    pub fn line(&self) -> String {
        let what = match &self.tracking {
            TrackStatus::Found => "board found".to_string(),
            TrackStatus::Tracking => "tracking".into(),
            TrackStatus::Hidden => "tracking (board partly hidden)".into(),
            TrackStatus::Manual => "board placed by the configured corners".into(),
            TrackStatus::Lost(why) => format!("no board ({why})"),
            TrackStatus::NoFrame => "no frame".into(),
        };
        let unseen = match self.unseen {
            Some(n) => format!("{n} points unseen"),
            None => "board unseen".into(),
        };
        match &self.source_error {
            Some(e) => format!("{e}; {what}; {unseen}"),
            None => format!("{what}; {unseen}"),
        }
    }
}

/// What one frame (or a frame that did not come) produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// The reader's status after this frame.
    pub status: Status,
    /// The settled board, when it changed.
    pub settled: Option<Settled>,
    /// The board in this frame, if any (for overlays).
    pub board: Option<FoundBoard>,
}

/// The whole live pipeline for one camera.
pub struct Watcher {
    tracker: Tracker,
    motion: Motion,
    reader: Box<dyn PointReader + Send>,
    config: SettleConfig,
    settler: Option<Settler>,
}

impl Watcher {
    /// A pipeline reading stones with `reader`, finding the board itself.
    pub fn new(reader: Box<dyn PointReader + Send>, config: SettleConfig) -> Watcher {
        Watcher::with_tracker(Tracker::new(), reader, config)
    }

    /// A pipeline starting from the given tracker (e.g. one with manual corners).
    pub fn with_tracker(
        tracker: Tracker,
        reader: Box<dyn PointReader + Send>,
        config: SettleConfig,
    ) -> Watcher {
        Watcher {
            tracker,
            motion: Motion::new(),
            reader,
            config,
            settler: None,
        }
    }

    /// Takes a frame captured at `t` (any clock that does not go back).
    pub fn frame(&mut self, frame: &Frame, t: Duration) -> Update {
        let tracked = self.tracker.update(frame);
        let Some(board) = tracked.board.clone() else {
            self.motion.reset();
            return self.unseen(t, tracked.status, None);
        };
        if matches!(tracked.status, TrackStatus::Found | TrackStatus::Manual) {
            self.motion.reset();
        }
        let readings = self.reader.read(frame, &board);
        let cover = self.motion.update(frame, &board, &readings);
        let size = board.size;
        let settler = match &mut self.settler {
            Some(s) if s.size() == size => s,
            slot => slot.insert(Settler::new(size, self.config)),
        };
        let settled = settler.push_cover(t, &readings, cover).cloned();
        let unseen = Some(settler.current().map_or(size.area(), Settled::unseen));
        Update {
            status: Status {
                board_found: true,
                tracking: tracked.status,
                unseen,
                source_error: None,
            },
            settled,
            board: Some(board),
        }
    }

    /// The last settled board, if any.
    pub fn current(&self) -> Option<&Settled> {
        self.settler.as_ref().and_then(Settler::current)
    }

    /// No frame came at `t` (the source failed): the board is unseen until frames return.
    pub fn no_frame(&mut self, t: Duration, why: String) -> Update {
        self.motion.reset();
        self.unseen(t, TrackStatus::NoFrame, Some(why))
    }

    fn unseen(&mut self, t: Duration, tracking: TrackStatus, why: Option<String>) -> Update {
        let settled = self.settler.as_mut().and_then(|s| {
            let blank = vec![Observation::UNSEEN; s.size().area()];
            s.push(t, &blank).cloned()
        });
        let unseen = self
            .settler
            .as_ref()
            .and_then(Settler::current)
            .map(Settled::unseen);
        Update {
            status: Status {
                board_found: false,
                tracking,
                unseen,
                source_error: why,
            },
            settled,
            board: None,
        }
    }
}
