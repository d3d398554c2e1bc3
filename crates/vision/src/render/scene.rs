//! What one rendered frame shows, and random scenes drawn from ranges of variation.

use tengen_rules::{BoardSize, Player};

use super::camera::Camera;
use super::hands::Hand;

/// Everything one frame shows. Points are row-major, row 0 the top line as seen from the
/// top-left corner, column 0 the left line.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Lines in each direction (9, 13 or 19 are the sizes boards come in).
    pub size: BoardSize,
    /// The stone on each point, if any.
    pub stones: Vec<Option<Player>>,
    /// How the stone on each point looks (used only where there is a stone).
    pub looks: Vec<StoneLook>,
    /// The camera.
    pub camera: Camera,
    /// The board's wood, lines and surroundings.
    pub board: BoardLook,
    /// The stones' shape.
    pub stone: StoneShape,
    /// The light.
    pub light: Light,
    /// Hands and arms over the board, nearest last.
    pub hands: Vec<Hand>,
    /// What the camera does to the picture.
    pub degrade: Degrade,
    /// Seed of the sensor noise (and any other per-frame randomness).
    pub noise_seed: u64,
}

/// How one stone looks beyond its colour.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoneLook {
    /// Where the stone sits relative to its intersection, in cells (players never place
    /// exactly; a knocked stone sits far off).
    pub offset: [f64; 2],
    /// Strength of a sharp specular highlight (a lamp's reflection): 0 none, 1 strong.
    pub glare: f64,
    /// Brightness factor of this stone's material (stones are not all alike).
    pub tone: f64,
}

impl Default for StoneLook {
    fn default() -> Self {
        StoneLook {
            offset: [0.0, 0.0],
            glare: 0.0,
            tone: 1.0,
        }
    }
}

/// The board: wood, lines and what lies around it.
#[derive(Clone, Debug, PartialEq)]
pub struct BoardLook {
    /// Row spacing over column spacing (real boards are about 1.07, slightly tall).
    pub aspect: f64,
    /// Wood between the outer lines and the board's edge, in cells.
    pub margin: f64,
    /// Board thickness, in cells (its sides show at an angle).
    pub thickness: f64,
    /// Base colour of the wood, linear RGB in 0..1.
    pub wood: [f64; 3],
    /// Strength of the grain (0 plain, 1 strong).
    pub grain: f64,
    /// Grain stripes per cell.
    pub grain_frequency: f64,
    /// Grain direction: true along the columns (vertical stripes), false along the rows.
    pub grain_vertical: bool,
    /// Seed of the grain pattern.
    pub wood_seed: u64,
    /// Line colour, linear RGB.
    pub line: [f64; 3],
    /// Line width in cells.
    pub line_width: f64,
    /// Star point radius in cells.
    pub star_radius: f64,
    /// Colour of the table around the board, linear RGB.
    pub table: [f64; 3],
    /// Varnish sheen of the board (broad specular), 0 matte.
    pub sheen: f64,
}

/// The stones' shape: a lens (two spherical caps) of this radius and thickness, in cells.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoneShape {
    /// Radius in cells (0.5 touches the neighbours).
    pub radius: f64,
    /// Total thickness in cells.
    pub thickness: f64,
}

/// One lamp plus ambient light.
#[derive(Clone, Debug, PartialEq)]
pub struct Light {
    /// Colour of the light (a cast), multiplied into every surface, linear RGB.
    pub colour: [f64; 3],
    /// Strength of the lamp.
    pub intensity: f64,
    /// Strength of the ambient (shadowless) light.
    pub ambient: f64,
    /// Direction the lamp is in, degrees around the board (same convention as the camera).
    pub azimuth_degrees: f64,
    /// Lamp elevation above the board's plane, degrees (90 = straight above).
    pub elevation_degrees: f64,
    /// Lamp distance from the board centre in cells (near lamps light unevenly).
    pub distance: f64,
    /// Shadow edge softness in cells.
    pub softness: f64,
    /// Broad specular sheen on every stone.
    pub stone_sheen: f64,
}

/// What the camera does to the picture after the optics.
#[derive(Clone, Debug, PartialEq)]
pub struct Degrade {
    /// Gaussian blur sigma in pixels (focus and motion).
    pub blur: f64,
    /// Sensor noise standard deviation in 8-bit levels.
    pub noise: f64,
    /// JPEG quality (1..=100) to encode and decode the frame with; `None` keeps it lossless.
    pub jpeg_quality: Option<u8>,
    /// Exposure factor before the tone curve.
    pub exposure: f64,
    /// Darkening toward the image corners, 0 none.
    pub vignette: f64,
}

/// Ranges random scenes are drawn from.
#[derive(Clone, Debug, PartialEq)]
pub struct Variation {
    /// Output size in pixels.
    pub width: usize,
    /// Output height in pixels.
    pub height: usize,
    /// Largest camera tilt, degrees.
    pub max_tilt_degrees: f64,
    /// Largest rotation of the board in the image, degrees either way.
    pub max_rotation_degrees: f64,
    /// Share of the image's short side the board spans, smallest and largest.
    pub fill: [f64; 2],
    /// Largest |k1| of the lens.
    pub max_distortion: f64,
    /// Share of stones with a strong glare highlight.
    pub glare_share: f64,
    /// Strength of the light's colour cast (0 white light).
    pub cast_strength: f64,
    /// Dimmest and brightest light, as an exposure factor.
    pub exposure: [f64; 2],
    /// Largest blur sigma in pixels.
    pub max_blur: f64,
    /// Largest noise standard deviation, 8-bit levels.
    pub max_noise: f64,
    /// Lowest and highest JPEG quality; `None` for lossless frames.
    pub jpeg_quality: Option<[u8; 2]>,
    /// Chance of a hand over the board.
    pub hand_probability: f64,
    /// Largest placement error of a stone off its intersection, cells.
    pub max_offset: f64,
}

impl Default for Variation {
    /// The synthetic acceptance: 1280x720, tilt up to 45°, coloured light, glare on
    /// 20% of stones, no hands.
    fn default() -> Self {
        Variation {
            width: 1280,
            height: 720,
            max_tilt_degrees: 45.0,
            max_rotation_degrees: 20.0,
            fill: [0.7, 0.95],
            max_distortion: 0.12,
            glare_share: 0.2,
            cast_strength: 0.35,
            exposure: [0.55, 1.3],
            max_blur: 1.4,
            max_noise: 5.0,
            jpeg_quality: Some([60, 95]),
            hand_probability: 0.0,
            max_offset: 0.1,
        }
    }
}
