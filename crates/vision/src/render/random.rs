//! Random scenes: every look and pose drawn from a [`Variation`]'s ranges with one seed.

use fastrand::Rng;
use tengen_rules::{BoardSize, Player};

use super::camera::Camera;
use super::hands::Hand;
use super::scene::{BoardLook, Degrade, Light, Scene, StoneLook, StoneShape, Variation};

/// Skin tones, linear RGB, light to dark.
const SKIN: [[f64; 3]; 5] = [
    [0.78, 0.52, 0.40],
    [0.68, 0.43, 0.30],
    [0.52, 0.30, 0.19],
    [0.32, 0.17, 0.10],
    [0.16, 0.08, 0.05],
];

/// A random middle-game density of stones for a board of `size` (a fifth black, a fifth
/// white, the rest empty), row-major as [`Scene::random`] takes them.
pub fn random_stones(size: BoardSize, seed: u64) -> Vec<Option<Player>> {
    let mut rng = Rng::with_seed(seed);
    (0..size.area())
        .map(|_| match rng.u8(0..5) {
            0 => Some(Player::Black),
            1 => Some(Player::White),
            _ => None,
        })
        .collect()
}

/// A uniform value in [lo, hi].
fn between(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * rng.f64()
}

impl Scene {
    /// A random scene showing `stones` (row-major, missing points empty) on a board of
    /// `size`, drawn from `variation` with `seed`: the same arguments give the same scene.
    pub fn random(
        size: BoardSize,
        stones: Vec<Option<Player>>,
        seed: u64,
        variation: &Variation,
    ) -> Scene {
        let mut rng = Rng::with_seed(seed);
        let area = size.area();
        let mut stones = stones;
        stones.resize(area, None);
        let looks = (0..area)
            .map(|_| random_look(&mut rng, variation))
            .collect();
        let board = random_board(&mut rng, size);
        let stone = StoneShape {
            radius: between(&mut rng, 0.46, 0.5),
            thickness: between(&mut rng, 0.3, 0.45),
        };
        let light = random_light(&mut rng, variation);
        let camera = random_camera(&mut rng, size, &board, variation);
        let mut hands = Vec::new();
        if rng.f64() < variation.hand_probability {
            hands.push(random_hand(&mut rng, size));
        }
        let degrade = Degrade {
            blur: between(&mut rng, 0.4, variation.max_blur.max(0.4)),
            noise: between(&mut rng, 0.5, variation.max_noise.max(0.5)),
            jpeg_quality: variation
                .jpeg_quality
                .map(|[lo, hi]| rng.u8(lo.min(hi)..=hi.max(lo))),
            exposure: between(&mut rng, variation.exposure[0], variation.exposure[1]),
            vignette: between(&mut rng, 0.0, 0.35),
        };
        Scene {
            size,
            stones,
            looks,
            camera,
            board,
            stone,
            light,
            hands,
            degrade,
            noise_seed: rng.u64(..),
        }
    }
}

fn random_look(rng: &mut Rng, v: &Variation) -> StoneLook {
    let angle = between(rng, 0.0, std::f64::consts::TAU);
    let dist = v.max_offset * rng.f64().sqrt();
    StoneLook {
        offset: [dist * angle.cos(), dist * angle.sin()],
        glare: if rng.f64() < v.glare_share {
            between(rng, 0.5, 1.0)
        } else {
            0.0
        },
        tone: between(rng, 0.85, 1.15),
    }
}

fn random_board(rng: &mut Rng, size: BoardSize) -> BoardLook {
    // Wood from pale spruce to dark, reddish kaya, in linear RGB.
    let r = between(rng, 0.35, 0.8);
    let wood = [
        r,
        r * between(rng, 0.48, 0.68),
        r * between(rng, 0.14, 0.35),
    ];
    let table = match rng.u8(0..4) {
        0 => [between(rng, 0.02, 0.1); 3],
        1 => [between(rng, 0.4, 0.8); 3],
        2 => [0.05, between(rng, 0.1, 0.25), 0.06],
        _ => [
            between(rng, 0.1, 0.4),
            between(rng, 0.05, 0.2),
            between(rng, 0.02, 0.1),
        ],
    };
    let small = size.width().max(size.height()) <= 13;
    BoardLook {
        aspect: between(rng, 1.0, 1.08),
        margin: between(rng, 0.5, if small { 1.6 } else { 1.1 }),
        thickness: between(rng, 0.3, 1.5),
        wood,
        grain: between(rng, 0.15, 0.7),
        grain_frequency: between(rng, 1.2, 4.5),
        grain_vertical: rng.bool(),
        wood_seed: rng.u64(..),
        line: [between(rng, 0.005, 0.04); 3],
        line_width: between(rng, 0.03, 0.06),
        star_radius: between(rng, 0.07, 0.11),
        table,
        sheen: between(rng, 0.0, 0.15),
    }
}

fn random_light(rng: &mut Rng, v: &Variation) -> Light {
    let hue = between(rng, 0.0, std::f64::consts::TAU);
    let s = v.cast_strength * rng.f64();
    let third = std::f64::consts::TAU / 3.0;
    let raw = [
        1.0 + s * hue.cos(),
        1.0 + s * (hue - third).cos(),
        1.0 + s * (hue + third).cos(),
    ];
    let mean = (raw[0] + raw[1] + raw[2]) / 3.0;
    Light {
        colour: raw.map(|c| c / mean),
        intensity: between(rng, 0.7, 1.1),
        ambient: between(rng, 0.25, 0.6),
        azimuth_degrees: between(rng, 0.0, 360.0),
        elevation_degrees: between(rng, 35.0, 85.0),
        distance: between(rng, 15.0, 80.0),
        softness: between(rng, 0.04, 0.25),
        stone_sheen: between(rng, 0.04, 0.2),
    }
}

/// A camera at a random tilt, side and rotation, its distance chosen so the board fills
/// the wanted share of the frame, and aimed off-centre as far as the frame allows.
fn random_camera(rng: &mut Rng, size: BoardSize, board: &BoardLook, v: &Variation) -> Camera {
    let (w, h) = (v.width.max(1), v.height.max(1));
    let fov = between(rng, 55.0, 75.0).to_radians();
    let tilt = between(rng, 0.0, v.max_tilt_degrees.clamp(0.0, 80.0));
    let azimuth = between(rng, 0.0, 360.0);
    let rotation = between(rng, -v.max_rotation_degrees, v.max_rotation_degrees);
    let fill = between(rng, v.fill[0].min(v.fill[1]), v.fill[1].max(v.fill[0]));
    let max_k = v.max_distortion.abs();
    let k1 = between(rng, -max_k, 0.3 * max_k);
    let mut cam = Camera {
        width: w,
        height: h,
        tilt_degrees: tilt,
        azimuth_degrees: azimuth,
        roll_degrees: 0.0,
        focal: (w as f64 / 2.0) / (fov / 2.0).tan(),
        distance: 30.0,
        aim: [0.0, 0.0],
        k1,
    };
    let (cols, rows) = (size.width() as f64, size.height() as f64);
    let m = board.margin;
    let outline = [
        [-m, -m],
        [cols - 1.0 + m, -m],
        [cols - 1.0 + m, (rows - 1.0) * board.aspect + m],
        [-m, (rows - 1.0) * board.aspect + m],
    ];
    let centre = [(cols - 1.0) / 2.0, (rows - 1.0) / 2.0 * board.aspect];
    // Roll so the board's column axis appears at the wanted rotation.
    let pose = cam.pose(centre);
    let (a, b) = (
        pose.project([centre[0], centre[1], 0.0]),
        pose.project([centre[0] + 1.0, centre[1], 0.0]),
    );
    if let (Some(a), Some(b)) = (a, b) {
        let seen = (b[1] - a[1]).atan2(b[0] - a[0]).to_degrees();
        cam.roll_degrees = seen - rotation;
    }
    let extent = |cam: &Camera| {
        let pose = cam.pose(centre);
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        for p in outline {
            let q = pose.project([p[0], p[1], 0.0])?;
            for k in 0..2 {
                lo[k] = lo[k].min(q[k]);
                hi[k] = hi[k].max(q[k]);
            }
        }
        Some((lo, hi))
    };
    // Distance for the wanted fill, with the camera aimed at `aim`.
    let fit = |cam: &mut Camera| {
        for _ in 0..8 {
            let Some((lo, hi)) = extent(cam) else {
                cam.distance *= 1.5;
                continue;
            };
            let share = ((hi[0] - lo[0]) / w as f64).max((hi[1] - lo[1]) / h as f64);
            cam.distance *= share / fill;
        }
    };
    fit(&mut cam);
    // Aim off-centre by a random share of the slack, halving until the board fits.
    let cell = h.min(w) as f64 * fill / rows.max(cols);
    let slack = [
        (w as f64 - fill * h.min(w) as f64) / (2.0 * cell),
        (h as f64 - fill * h.min(w) as f64) / (2.0 * cell),
    ];
    let wanted = [
        between(rng, -1.0, 1.0) * slack[0].max(0.0),
        between(rng, -1.0, 1.0) * slack[1].max(0.0),
    ];
    for k in 0..6 {
        let f = 0.5f64.powi(k);
        cam.aim = [wanted[0] * f, wanted[1] * f];
        fit(&mut cam);
        if let Some((lo, hi)) = extent(&cam) {
            if lo[0] >= 2.0 && lo[1] >= 2.0 && hi[0] <= w as f64 - 2.0 && hi[1] <= h as f64 - 2.0 {
                return cam;
            }
        }
    }
    cam.aim = [0.0, 0.0];
    fit(&mut cam);
    cam
}

fn random_hand(rng: &mut Rng, size: BoardSize) -> Hand {
    let (cols, rows) = (size.width() as f64, size.height() as f64);
    // Players reach in from their own sides, sometimes across a corner.
    let side = if rng.bool() { 0.0 } else { 180.0 };
    Hand {
        tip: [between(rng, 0.0, cols - 1.0), between(rng, 0.0, rows - 1.0)],
        from_degrees: side + between(rng, -45.0, 45.0),
        height: between(rng, 0.8, 2.5),
        scale: between(rng, 0.85, 1.15),
        skin: SKIN[rng.usize(..SKIN.len())].map(|c| c * between(rng, 0.9, 1.1)),
        sleeve: [rng.f64() * 0.6, rng.f64() * 0.6, rng.f64() * 0.6],
        left: rng.bool(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_scene() {
        let size = BoardSize::square(13).unwrap();
        let v = Variation::default();
        let a = Scene::random(size, vec![Some(Player::Black)], 5, &v);
        let b = Scene::random(size, vec![Some(Player::Black)], 5, &v);
        let c = Scene::random(size, vec![Some(Player::Black)], 6, &v);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.stones.len(), 169);
    }
}
