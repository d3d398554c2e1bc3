//! A synthetic renderer of Go boards under a camera, with exact labels: a wooden board with
//! its grid, stones as shaded solids with height, a lamp with a colour cast, shadows and
//! glare, a camera posed at an angle with lens distortion, hands and arms over the board,
//! and the camera's blur, noise and JPEG artefacts. Deterministic: the same scene gives the
//! same bytes. Used by tests, benches and the stone classifier's training data.
//!
//! `render(&Scene::random(size, stones, seed, &Variation::default()))` draws one frame;
//! [`video`] plays a whole game from SGF.

pub mod camera;
pub mod degrade;
pub mod hands;
pub mod light;
mod paint;
mod random;
pub mod scene;
pub mod stones;
pub mod video;
pub mod wood;

pub use camera::Camera;
pub use hands::Hand;
pub use random::random_stones;
pub use scene::{BoardLook, Degrade, Light, Scene, StoneLook, StoneShape, Variation};

use crate::frame::Frame;
use crate::homography::{Homography, Point};

/// A rendered frame and what is exactly true about it.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The picture.
    pub frame: Frame,
    /// The frame's JPEG encoding, when the scene asks for JPEG (`frame` is its decoding).
    pub jpeg: Option<Vec<u8>>,
    /// Image positions (as the lens draws them) of the four outermost intersections:
    /// (0, 0), (last, 0), (last, last), (0, last) in (column, row), i.e. TL, TR, BR, BL for
    /// a board seen the right way up.
    pub corners: [Point; 4],
    /// From board (column, row) to ideal image positions, before lens distortion; apply
    /// [`Rendered::distort`] for the drawn position.
    pub grid: Homography,
    /// Per point (row-major): covered by a hand or arm, or outside the frame.
    pub occluded: Vec<bool>,
    /// Per pixel (row-major): a hand or arm is drawn there. Empty when the scene has no hands.
    pub hand_mask: Vec<bool>,
    /// The lens's radial distortion, with the image centre and focal length it applies to.
    lens: Lens,
    /// The camera, for points off the board's plane.
    pose: camera::Pose,
    /// Row spacing over column spacing.
    aspect: f64,
}

/// The radial distortion term and its frame of reference.
#[derive(Clone, Copy, Debug)]
struct Lens {
    cx: f64,
    cy: f64,
    focal: f64,
    k1: f64,
}

impl Rendered {
    /// Moves an ideal image position (from `grid`) to where the lens draws it.
    pub fn distort(&self, [x, y]: Point) -> Point {
        let l = &self.lens;
        let (nx, ny) = ((x - l.cx) / l.focal, (y - l.cy) / l.focal);
        let f = 1.0 + l.k1 * (nx * nx + ny * ny);
        [l.cx + nx * f * l.focal, l.cy + ny * f * l.focal]
    }

    /// The drawn image position of board point (column, row).
    pub fn point(&self, col: f64, row: f64) -> Option<Point> {
        self.grid.apply([col, row]).map(|p| self.distort(p))
    }

    /// The drawn image position of the point `height` cells above board point (column, row),
    /// e.g. the top of a stone (its thickness is `Scene::stone.thickness`).
    pub fn point_above(&self, col: f64, row: f64, height: f64) -> Option<Point> {
        self.pose.project([col, row * self.aspect, height])
    }
}

/// Draws a scene. Never panics: a scene whose per-point tables are short treats the missing
/// points as empty, and a zero-sized camera renders one pixel.
pub fn render(scene: &Scene) -> Rendered {
    paint::paint(scene)
}
