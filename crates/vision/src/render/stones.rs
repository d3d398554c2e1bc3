//! Stones as solids: a lens (the intersection of two balls) standing on the board, hit by
//! camera rays, with the shadows they cast on the wood.

use tengen_rules::Player;

use super::camera::{dot, sub, Vec3};
use super::light::Material;
use super::scene::{StoneLook, StoneShape};

/// A stone's lens: the two balls whose intersection it is.
#[derive(Clone, Copy, Debug)]
pub struct Lens {
    /// Centre of the ball forming the upper face.
    upper: Vec3,
    /// Centre of the ball forming the lower face.
    lower: Vec3,
    radius2: f64,
}

impl Lens {
    /// A stone of `shape` standing on the board at world (x, y).
    pub fn new(shape: &StoneShape, [x, y]: [f64; 2]) -> Lens {
        let half = (shape.thickness / 2.0).max(1e-3);
        let r = shape.radius.max(1e-3);
        // A cap of height `half` over a base of radius `r` lies on a ball of this radius.
        let big = (r * r + half * half) / (2.0 * half);
        Lens {
            upper: [x, y, 2.0 * half - big],
            lower: [x, y, big],
            radius2: big * big,
        }
    }

    /// Where the ray from `eye` along unit `dir` enters the stone: the distance and the
    /// outward normal there.
    pub fn hit(&self, eye: Vec3, dir: Vec3) -> Option<(f64, Vec3)> {
        let span = |c: Vec3| {
            let oc = sub(eye, c);
            let b = dot(dir, oc);
            let disc = b * b - (dot(oc, oc) - self.radius2);
            (disc >= 0.0).then(|| {
                let s = disc.sqrt();
                (-b - s, -b + s)
            })
        };
        let (a0, a1) = span(self.upper)?;
        let (b0, b1) = span(self.lower)?;
        let (enter, exit) = (a0.max(b0), a1.min(b1));
        if enter >= exit || enter <= 0.0 {
            return None;
        }
        let centre = if a0 >= b0 { self.upper } else { self.lower };
        let p = [
            eye[0] + dir[0] * enter,
            eye[1] + dir[1] * enter,
            eye[2] + dir[2] * enter,
        ];
        let n = sub(p, centre);
        let len = dot(n, n).sqrt().max(1e-12);
        Some((enter, [n[0] / len, n[1] / len, n[2] / len]))
    }
}

/// The material of a stone: dark slate or glass for Black, shell or glass for White.
pub fn material(player: Player, look: &StoneLook, sheen: f64) -> [Material; 2] {
    let tone = look.tone;
    let base = match player {
        Player::Black => Material {
            albedo: [0.030 * tone, 0.031 * tone, 0.036 * tone],
            specular: sheen,
            shininess: 10,
        },
        Player::White => Material {
            albedo: [0.80 * tone, 0.79 * tone, 0.74 * tone],
            specular: sheen * 0.6,
            shininess: 12,
        },
    };
    // Glare: a lamp's sharp reflection, strong enough to saturate the sensor.
    let glare = Material {
        albedo: [0.0; 3],
        specular: 4.0 * look.glare,
        shininess: 160,
    };
    [base, glare]
}

/// How much of the lamp a board point `q` (world x, y) sees past a stone at `c`, given the
/// direction toward the lamp `l` at that point.
pub fn stone_shadow(shape: &StoneShape, c: [f64; 2], q: [f64; 2], l: Vec3, softness: f64) -> f64 {
    let lz = l[2].max(0.05);
    // The stone's shadow is about its outline swept from its foot to its top's shadow.
    let reach = 0.6 * shape.thickness / lz;
    let end = [c[0] - l[0] * reach, c[1] - l[1] * reach];
    let d = segment_distance(q, c, end);
    let soft = softness.max(1e-3);
    let inside = (shape.radius * 0.96 - d) / soft + 0.5;
    1.0 - inside.clamp(0.0, 1.0)
}

/// Ambient occlusion on the board close around a stone's foot: 1 far away, darker near.
pub fn contact_shade(shape: &StoneShape, c: [f64; 2], q: [f64; 2]) -> f64 {
    let (dx, dy) = (q[0] - c[0], q[1] - c[1]);
    let d = (dx * dx + dy * dy).sqrt();
    let t = ((d - 0.85 * shape.radius) / (0.45 * shape.radius)).clamp(0.0, 1.0);
    1.0 - 0.55 * (1.0 - t * t * (3.0 - 2.0 * t))
}

/// Distance from `q` to the segment from `a` to `b`.
pub fn segment_distance(q: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((q[0] - a[0]) * dx + (q[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ey) = (q[0] - a[0] - t * dx, q[1] - a[1] - t * dy);
    (ex * ex + ey * ey).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: StoneShape = StoneShape {
        radius: 0.48,
        thickness: 0.4,
    };

    #[test]
    fn a_ray_from_above_hits_the_top_of_the_stone() {
        let lens = Lens::new(&SHAPE, [3.0, 4.0]);
        let (t, n) = lens.hit([3.0, 4.0, 10.0], [0.0, 0.0, -1.0]).unwrap();
        assert!((t - (10.0 - SHAPE.thickness)).abs() < 1e-9);
        assert!((n[2] - 1.0).abs() < 1e-9);
        // Past the rim there is nothing to hit.
        assert!(lens.hit([3.5, 4.0, 10.0], [0.0, 0.0, -1.0]).is_none());
        // A level ray hits the rim, with a normal facing back toward it.
        let (_, n) = lens.hit([-5.0, 4.0, 0.2], [1.0, 0.0, 0.0]).unwrap();
        assert!(n[0] < -0.6, "{n:?}");
    }

    #[test]
    fn shadows_fall_away_from_the_lamp() {
        let l = [0.6, 0.0, 0.8];
        let behind = stone_shadow(&SHAPE, [0.0, 0.0], [-0.6, 0.0], l, 0.05);
        let in_front = stone_shadow(&SHAPE, [0.0, 0.0], [0.6, 0.0], l, 0.05);
        assert!(behind < 0.1 && in_front > 0.9, "{behind} {in_front}");
    }
}
