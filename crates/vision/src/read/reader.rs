//! The stone reader: owns its classifier and every buffer a reading needs, so reading a
//! frame allocates nothing once the first one has sized them.

use thiserror::Error;

use crate::find::FoundBoard;
use crate::frame::Frame;

use super::classical::Classical;
use super::cnn::Cnn;
use super::colour::{cell_centres, local_wood, normalise, EmptyReference};
use super::height::patch_shifts;
use super::rectify::{disc, sample_patch, PATCH_LEN};
use super::{decide, BoardReading, PointReading};

/// A point with more than this share of its stone's disc off the frame is not read. The
/// disc, not the whole patch: the patch reaches 0.8 cell either way, into the neighbours'
/// cells, and an edge line at the foot of a low photograph had every patch a third off the
/// frame with its stone (or bare wood) in full view.
const MAX_OUTSIDE: f32 = 0.25;
/// The stone's disc, in cells from the patch's centre (a stone is a little under a cell
/// across).
const STONE_RADIUS: f64 = 0.45;
/// Wood darker than this (mean of the channels, 0..255) is too dark to read anything on:
/// a black frame, a covered lens.
const MIN_WOOD_LEVEL: f32 = 12.0;

/// Why a classifier model could not be loaded or run.
#[derive(Debug, Error)]
pub enum ModelError {
    /// tract could not read or prepare the ONNX model.
    #[error("cannot load the stone classifier: {0}")]
    Load(String),
    /// A run of the network failed.
    #[error("the stone classifier failed: {0}")]
    Run(String),
}

/// The committed stone network (crates/vision/train/train.py writes it).
const MODEL: &[u8] = include_bytes!("../../model/stones.onnx");

/// Which classifier a reader runs.
#[derive(Debug)]
enum Classifier {
    Classical(Classical),
    Cnn(Box<Cnn>),
}

/// Reads the stones of a found board in a frame. Build it once and reuse it.
pub struct StoneReader {
    classifier: Classifier,
    reference: Option<EmptyReference>,
    centres: Vec<[f32; 3]>,
    wood: Vec<[f32; 3]>,
    patches: Vec<f32>,
    outside: Vec<f32>,
    scratch: Vec<f32>,
    probs: Vec<[f32; 4]>,
    shifts: Vec<crate::homography::Point>,
    /// Patch pixels (of one plane) inside the stone's disc.
    disc: Vec<usize>,
}

impl std::fmt::Debug for StoneReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The buffers are scratch space, not state worth printing.
        f.debug_struct("StoneReader")
            .field("classifier", &self.classifier)
            .field("empty_reference", &self.reference.is_some())
            .finish()
    }
}

impl StoneReader {
    /// The reader with the committed network.
    pub fn new() -> Result<StoneReader, ModelError> {
        StoneReader::from_onnx(MODEL)
    }

    /// A reader with another network (ONNX: `N x 3 x 16 x 16` patches in, `N x 4` logits
    /// out, classes in the order of [`super::Class`]).
    pub fn from_onnx(bytes: &[u8]) -> Result<StoneReader, ModelError> {
        Ok(StoneReader::with(Classifier::Cnn(Box::new(
            Cnn::from_onnx(bytes)?,
        ))))
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
            probs: Vec::new(),
            shifts: Vec::new(),
            disc: disc(STONE_RADIUS),
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
        self.probs.clear();
        if n != rows {
            return;
        }
        if !self.prepare(frame, board) {
            return;
        }
        match &mut self.classifier {
            Classifier::Classical(c) => {
                for (i, p) in out.points.iter_mut().enumerate() {
                    if self.outside[i] <= MAX_OUTSIDE {
                        *p = decide(c.classify(&self.patches[i * PATCH_LEN..(i + 1) * PATCH_LEN]));
                    }
                }
            }
            Classifier::Cnn(net) => {
                self.probs.resize(count, [0.0; 4]);
                // A failed run leaves every point unseen.
                if net.run(&self.patches, &mut self.probs).is_ok() {
                    for (i, p) in out.points.iter_mut().enumerate() {
                        if self.outside[i] <= MAX_OUTSIDE {
                            *p = decide(self.probs[i]);
                        }
                    }
                } else {
                    self.probs.clear();
                }
            }
        }
    }

    /// The normalised patches of the last frame read (or prepared), `PATCH_LEN` floats each.
    pub fn patches(&self) -> &[f32] {
        &self.patches
    }

    /// The share of each point's stone disc (its patch's centre) that fell off the frame in
    /// the last frame read; points with more than a quarter off are not read.
    pub fn outside(&self) -> &[f32] {
        &self.outside
    }

    /// The network's class probabilities for each point of the last frame read (empty,
    /// black, white, occluded); empty with the classical rule or when nothing was read.
    pub fn probabilities(&self) -> &[[f32; 4]] {
        match self.classifier {
            Classifier::Cnn(_) => &self.probs,
            Classifier::Classical(_) => &[],
        }
    }

    /// Fills the normalised patches (and how much of each is off the frame); false when the
    /// board's wood is too dark (or unseen) to read.
    pub fn prepare(&mut self, frame: &Frame, board: &FoundBoard) -> bool {
        let n = board.size.width();
        let count = n * n;
        cell_centres(frame, board, &mut self.centres);
        let overall = local_wood(&self.centres, n, &mut self.wood, &mut self.scratch);
        if let Some(r) = self.reference.as_ref().filter(|r| r.n == n) {
            r.apply(overall, &mut self.wood);
        }
        let level = overall.iter().sum::<f32>() / 3.0;
        // NaN (no wood seen at all) fails this too.
        if level.is_nan() || level < MIN_WOOD_LEVEL {
            return false;
        }
        patch_shifts(board, frame.width(), frame.height(), &mut self.shifts);
        self.patches.resize(count * PATCH_LEN, 0.0);
        self.outside.resize(count, 0.0);
        for i in 0..count {
            let patch = &mut self.patches[i * PATCH_LEN..(i + 1) * PATCH_LEN];
            let centre = [(i % n) as f64, (i / n) as f64];
            let off = sample_patch(frame, board, centre, self.shifts[i], patch);
            // Off-frame pixels are NaN until normalised.
            let off_disc = if off == 0 {
                0
            } else {
                self.disc.iter().filter(|&&k| patch[k].is_nan()).count()
            };
            self.outside[i] = off_disc as f32 / self.disc.len() as f32;
            normalise(patch, self.wood[i]);
        }
        true
    }
}
