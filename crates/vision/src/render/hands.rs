//! Hands and arms over the board: a flat hand (fingers, thumb, palm, forearm, sleeve) made of
//! capsules, held level at some height above the board and reaching in from one side.

use super::stones::segment_distance;

/// One hand and its arm.
#[derive(Clone, Debug, PartialEq)]
pub struct Hand {
    /// Where the fingertips are, in board coordinates (column, row).
    pub tip: [f64; 2],
    /// The side the arm comes from, degrees around the board (0 = the last row's side,
    /// 90 = the last column's side).
    pub from_degrees: f64,
    /// Height above the board, in cells.
    pub height: f64,
    /// Size factor (1 is an adult hand on a standard board).
    pub scale: f64,
    /// Skin colour, linear RGB.
    pub skin: [f64; 3],
    /// Sleeve colour, linear RGB.
    pub sleeve: [f64; 3],
    /// A left hand (the thumb on the other side).
    pub left: bool,
}

/// A capsule: a segment swept by a disc.
#[derive(Clone, Copy, Debug)]
struct Capsule {
    a: [f64; 2],
    b: [f64; 2],
    radius: f64,
    sleeve: bool,
}

/// A hand laid out in world coordinates on its plane, ready to test points against.
#[derive(Clone, Debug)]
pub struct HandShape {
    parts: Vec<Capsule>,
    bound: Capsule,
    /// Height of the hand's plane above the board, world units.
    pub height: f64,
    /// Skin colour, linear RGB.
    pub skin: [f64; 3],
    /// Sleeve colour, linear RGB.
    pub sleeve: [f64; 3],
}

/// What a hand shows at a point of its plane.
#[derive(Clone, Copy, Debug)]
pub struct HandHit {
    /// The sleeve rather than skin.
    pub sleeve: bool,
    /// How far up the rounded surface faces (1 along the middle of a finger, 0 at its edge).
    pub up: f64,
    /// The horizontal outward direction of the surface there.
    pub outward: [f64; 2],
}

impl HandShape {
    /// The hand's shape in world coordinates, for a board with row spacing `aspect`.
    pub fn new(hand: &Hand, aspect: f64) -> HandShape {
        let t = [hand.tip[0], hand.tip[1] * aspect];
        let az = hand.from_degrees.to_radians();
        let a = [az.sin(), az.cos()];
        let side = if hand.left { -1.0 } else { 1.0 };
        let p = [a[1] * side, -a[0] * side];
        let s = hand.scale.max(0.1);
        // Positions along the arm (from the tip) and across it, in cells for scale 1.
        let at = |along: f64, across: f64| {
            [
                t[0] + (a[0] * along + p[0] * across) * s,
                t[1] + (a[1] * along + p[1] * across) * s,
            ]
        };
        let cap = |a0: f64, c0: f64, a1: f64, c1: f64, radius: f64, sleeve: bool| Capsule {
            a: at(a0, c0),
            b: at(a1, c1),
            radius: radius * s,
            sleeve,
        };
        let parts = vec![
            cap(0.35, 0.3, 3.4, 0.7, 0.42, false),   // index finger
            cap(0.3, -0.3, 3.5, -0.3, 0.44, false),  // middle finger
            cap(2.2, -1.1, 3.7, -1.15, 0.42, false), // ring finger, curled
            cap(2.6, -1.85, 3.8, -1.8, 0.36, false), // little finger, curled
            cap(1.7, 1.5, 4.4, 1.35, 0.5, false),    // thumb
            cap(4.3, -0.4, 5.4, -0.4, 1.75, false),  // palm
            cap(5.5, -0.4, 9.5, -0.4, 1.35, false),  // forearm
            cap(9.5, -0.4, 80.0, -0.4, 2.0, true),   // sleeve, reaching out of the picture
        ];
        let bound = cap(-0.2, 0.0, 80.0, 0.0, 3.2, false);
        HandShape {
            parts,
            bound,
            height: hand.height,
            skin: hand.skin,
            sleeve: hand.sleeve,
        }
    }

    /// What the hand shows at world (x, y) on its plane, if anything.
    pub fn at(&self, q: [f64; 2]) -> Option<HandHit> {
        if segment_distance(q, self.bound.a, self.bound.b) > self.bound.radius {
            return None;
        }
        let mut best: Option<(f64, &Capsule)> = None;
        for c in &self.parts {
            let d = segment_distance(q, c.a, c.b);
            let depth = 1.0 - d / c.radius;
            if depth > 0.0 && best.is_none_or(|(b, _)| depth > b) {
                best = Some((depth, c));
            }
        }
        let (depth, c) = best?;
        // The surface of a round limb: its normal tilts outward toward the edge.
        let (dx, dy) = (c.b[0] - c.a[0], c.b[1] - c.a[1]);
        let len2 = (dx * dx + dy * dy).max(1e-12);
        let t = (((q[0] - c.a[0]) * dx + (q[1] - c.a[1]) * dy) / len2).clamp(0.0, 1.0);
        let (ox, oy) = (q[0] - c.a[0] - t * dx, q[1] - c.a[1] - t * dy);
        let on = (ox * ox + oy * oy).sqrt().max(1e-12);
        let r = 1.0 - depth;
        Some(HandHit {
            sleeve: c.sleeve,
            up: (1.0 - r * r).sqrt(),
            outward: [ox / on, oy / on],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand() -> Hand {
        Hand {
            tip: [4.0, 4.0],
            from_degrees: 0.0,
            height: 1.5,
            scale: 1.0,
            skin: [0.7, 0.5, 0.4],
            sleeve: [0.1, 0.2, 0.5],
            left: false,
        }
    }

    #[test]
    fn the_hand_covers_its_tip_and_its_arm_but_not_the_far_side() {
        let shape = HandShape::new(&hand(), 1.0);
        assert!(shape.at([4.0, 4.5]).is_some());
        // The arm comes from the last row's side (+y).
        assert!(shape.at([4.0, 20.0]).is_some_and(|h| h.sleeve));
        assert!(shape.at([4.0, 2.0]).is_none());
        assert!(shape.at([12.0, 4.0]).is_none());
    }
}
