//! The stone reader: owns its classifier and every buffer a reading needs, so reading a
//! frame allocates nothing once the first one has sized them.

use thiserror::Error;

use crate::find::FoundBoard;
use crate::frame::Frame;

use super::classical::Classical;
use super::colour::{cell_centres, local_wood, normalise, EmptyReference};
use super::rectify::{sample_patch, PATCH, PATCH_LEN};
use super::{decide, BoardReading, PointReading};

/// A patch with more than this share of its pixels off the frame is not read.
const MAX_OUTSIDE: f32 = 0.25;

/// Why a classifier model could not be loaded.
#[derive(Debug, Error)]
pub enum ModelError {
    /// tract could not read or prepare the ONNX model.
    #[error("cannot load the stone classifier: {0}")]
    Load(String),
}

/// Which classifier a reader runs.
#[derive(Debug)]
enum Classifier {
    Classical(Classical),
}

/// Reads the stones of a found board in a frame. Build it once and reuse it.
#[derive(Debug)]
pub struct StoneReader {
    classifier: Classifier,
    reference: Option<EmptyReference>,
    centres: Vec<[f32; 3]>,
    wood: Vec<[f32; 3]>,
    patches: Vec<f32>,
    outside: Vec<f32>,
    scratch: Vec<f32>,
}

impl StoneReader {
    /// The reader with the committed classifier.
    pub fn new() -> Result<StoneReader, ModelError> {
        Ok(StoneReader::classical())
    }

    /// A reader with the classical brightness rule (no network).
    pub fn classical() -> StoneReader {
        StoneReader::with(Classifier::Classical(Classical::new()))
    }

    fn with(classifier: Classifier) -> StoneReader {
        StoneReader {
            classifier,
            reference: None,
            centres: Vec::new(),
            wood: Vec::new(),
            patches: Vec::new(),
            outside: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Remembers the wood of an empty board (same camera and board): later frames are
    /// corrected against its pattern of light, scaled to their own overall colour.
    pub fn set_empty_reference(&mut self, frame: &Frame, board: &FoundBoard) {
        let n = board.size.width();
        cell_centres(frame, board, &mut self.centres);
        let mut wood = Vec::new();
        let overall = local_wood(&self.centres, n, &mut wood, &mut self.scratch);
        self.reference = (!overall[0].is_nan()).then_some(EmptyReference { n, wood, overall });
    }

    /// Forgets the empty board's reference (the board or the camera moved).
    pub fn clear_empty_reference(&mut self) {
        self.reference = None;
    }

    /// The empty board's reference, if one is set.
    pub fn empty_reference(&self) -> Option<&EmptyReference> {
        self.reference.as_ref()
    }

    /// Reads every intersection of `board` in `frame`.
    pub fn read(&mut self, frame: &Frame, board: &FoundBoard) -> BoardReading {
        let mut out = BoardReading::unseen(board.size);
        self.read_into(frame, board, &mut out);
        out
    }

    /// Reads every intersection into `out`, reusing its storage.
    pub fn read_into(&mut self, frame: &Frame, board: &FoundBoard, out: &mut BoardReading) {
        let (n, rows) = (board.size.width(), board.size.height());
        let count = n * rows;
        out.size = board.size;
        out.points.clear();
        out.points.resize(count, PointReading::UNSEEN);
        if n != rows {
            return;
        }
        self.prepare(frame, board);
        match &mut self.classifier {
            Classifier::Classical(c) => {
                for (i, p) in out.points.iter_mut().enumerate() {
                    if self.outside[i] <= MAX_OUTSIDE {
                        *p = decide(c.classify(&self.patches[i * PATCH_LEN..(i + 1) * PATCH_LEN]));
                    }
                }
            }
        }
    }

    /// The normalised patches of the last frame read (or prepared), `PATCH_LEN` floats each.
    pub fn patches(&self) -> &[f32] {
        &self.patches
    }

    /// Fills the normalised patches (and how much of each is off the frame).
    pub fn prepare(&mut self, frame: &Frame, board: &FoundBoard) {
        let n = board.size.width();
        let count = n * n;
        cell_centres(frame, board, &mut self.centres);
        let overall = local_wood(&self.centres, n, &mut self.wood, &mut self.scratch);
        if let Some(r) = self.reference.as_ref().filter(|r| r.n == n) {
            r.apply(overall, &mut self.wood);
        }
        self.patches.resize(count * PATCH_LEN, 0.0);
        self.outside.resize(count, 0.0);
        for i in 0..count {
            let patch = &mut self.patches[i * PATCH_LEN..(i + 1) * PATCH_LEN];
            let centre = [(i % n) as f64, (i / n) as f64];
            let off = sample_patch(frame, board, centre, [0.0, 0.0], patch);
            self.outside[i] = off as f32 / (PATCH * PATCH) as f32;
            normalise(patch, self.wood[i]);
        }
    }
}
