//! A pinhole camera over the board with one radial distortion term. World units are board
//! cells: x along the columns, y along the rows (row spacing may differ from column
//! spacing), z up from the board's top surface.

use crate::homography::{Homography, Point};

/// A 3-vector in world units.
pub type Vec3 = [f64; 3];

/// Where the camera is and how it images the board.
#[derive(Clone, Debug, PartialEq)]
pub struct Camera {
    /// Output width in pixels.
    pub width: usize,
    /// Output height in pixels.
    pub height: usize,
    /// Angle between the optical axis and the board's normal, degrees (0 = straight above).
    pub tilt_degrees: f64,
    /// The side the camera leans toward, degrees around the board: 0 = the last row's side
    /// (the near player's), 90 = the last column's side.
    pub azimuth_degrees: f64,
    /// Rotation of the image about the optical axis, degrees.
    pub roll_degrees: f64,
    /// Focal length in pixels.
    pub focal: f64,
    /// Distance from the board centre to the camera, in cells.
    pub distance: f64,
    /// The board point the optical axis passes through, as an offset from the board centre in
    /// cells (moves the board off the image centre).
    pub aim: [f64; 2],
    /// Radial distortion: a pixel at normalised radius r is drawn at r (1 + k1 r²);
    /// negative is barrel.
    pub k1: f64,
}

/// A camera's position and axes in world coordinates, ready to project.
#[derive(Clone, Copy, Debug)]
pub struct Pose {
    /// The centre of projection.
    pub eye: Vec3,
    right: Vec3,
    down: Vec3,
    forward: Vec3,
    focal: f64,
    cx: f64,
    cy: f64,
    k1: f64,
}

impl Camera {
    /// The camera's pose over a board whose centre is at `centre` (world units).
    pub fn pose(&self, centre: [f64; 2]) -> Pose {
        let (tilt, az, roll) = (
            self.tilt_degrees.to_radians(),
            self.azimuth_degrees.to_radians(),
            self.roll_degrees.to_radians(),
        );
        // Horizontal direction from the board toward the camera's side.
        let side = [az.sin(), az.cos(), 0.0];
        let target = [centre[0] + self.aim[0], centre[1] + self.aim[1], 0.0];
        let back = [side[0] * tilt.sin(), side[1] * tilt.sin(), tilt.cos()];
        let eye = add(target, scale(back, self.distance));
        let forward = scale(back, -1.0);
        // Right is horizontal, perpendicular to the side the camera leans toward; at azimuth 0
        // it is +x, so column 0 is on the left and row 0 at the top.
        let right0 = [az.cos(), -az.sin(), 0.0];
        let down0 = cross(right0, forward);
        let (s, c) = roll.sin_cos();
        let right = add(scale(right0, c), scale(down0, s));
        let down = add(scale(down0, c), scale(right0, -s));
        Pose {
            eye,
            right,
            down,
            forward,
            focal: self.focal,
            cx: self.width as f64 / 2.0,
            cy: self.height as f64 / 2.0,
            k1: self.k1,
        }
    }
}

impl Pose {
    /// The undistorted image position of a world point; `None` behind the camera.
    pub fn project_ideal(&self, p: Vec3) -> Option<Point> {
        let d = sub(p, self.eye);
        let z = dot(d, self.forward);
        if z <= 1e-9 {
            return None;
        }
        Some([
            self.cx + self.focal * dot(d, self.right) / z,
            self.cy + self.focal * dot(d, self.down) / z,
        ])
    }

    /// The image position of a world point as the lens draws it.
    pub fn project(&self, p: Vec3) -> Option<Point> {
        self.project_ideal(p).map(|q| self.distort(q))
    }

    /// Moves an ideal (pinhole) image position to where the lens draws it.
    pub fn distort(&self, [x, y]: Point) -> Point {
        let (nx, ny) = ((x - self.cx) / self.focal, (y - self.cy) / self.focal);
        let f = 1.0 + self.k1 * (nx * nx + ny * ny);
        [self.cx + nx * f * self.focal, self.cy + ny * f * self.focal]
    }

    /// The ideal position of a drawn pixel position (inverts [`Pose::distort`] by fixed-point
    /// iteration, which converges quickly for webcam-sized distortion).
    pub fn undistort(&self, [x, y]: Point) -> Point {
        if self.k1 == 0.0 {
            return [x, y];
        }
        let (dx, dy) = ((x - self.cx) / self.focal, (y - self.cy) / self.focal);
        let (mut ux, mut uy) = (dx, dy);
        for _ in 0..4 {
            let f = 1.0 + self.k1 * (ux * ux + uy * uy);
            ux = dx / f;
            uy = dy / f;
        }
        [self.cx + ux * self.focal, self.cy + uy * self.focal]
    }

    /// How far in front of the camera a world point is, along the optical axis.
    pub fn depth(&self, p: Vec3) -> f64 {
        dot(sub(p, self.eye), self.forward)
    }

    /// The unit direction of the ray through an ideal image position.
    pub fn ray(&self, [x, y]: Point) -> Vec3 {
        let a = (x - self.cx) / self.focal;
        let b = (y - self.cy) / self.focal;
        normalize(add(
            self.forward,
            add(scale(self.right, a), scale(self.down, b)),
        ))
    }

    /// The map from a horizontal plane at height `z` (world x, y) to ideal image positions.
    pub fn plane(&self, z: f64) -> Homography {
        // Columns of the 3x4 projection for (x, y, z, 1), with z folded into the constant.
        let row = |axis: Vec3, c: f64, cam: f64| {
            // u = c * (axis·(p - eye)) + cam * (forward·(p - eye)), linear in (x, y, 1).
            let v = add(scale(axis, c), scale(self.forward, cam));
            [v[0], v[1], v[2] * z - dot(v, self.eye)]
        };
        let r0 = row(self.right, self.focal, self.cx);
        let r1 = row(self.down, self.focal, self.cy);
        let r2 = row(self.forward, 0.0, 1.0);
        Homography([
            r0[0], r0[1], r0[2], r1[0], r1[1], r1[2], r2[0], r2[1], r2[2],
        ])
    }
}

/// a + b.
pub fn add(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// a - b.
pub fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// a scaled by s.
pub fn scale(a: Vec3, s: f64) -> Vec3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

/// The dot product.
pub fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// The cross product.
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// a scaled to unit length (a zero vector stays zero).
pub fn normalize(a: Vec3) -> Vec3 {
    let n = dot(a, a).sqrt();
    if n > 0.0 {
        scale(a, 1.0 / n)
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam(tilt: f64, az: f64, roll: f64, k1: f64) -> Camera {
        Camera {
            width: 1280,
            height: 720,
            tilt_degrees: tilt,
            azimuth_degrees: az,
            roll_degrees: roll,
            focal: 900.0,
            distance: 30.0,
            aim: [0.5, -0.3],
            k1,
        }
    }

    #[test]
    fn a_front_camera_keeps_column_zero_left_and_row_zero_on_top() {
        let pose = cam(0.0, 0.0, 0.0, 0.0).pose([9.0, 9.0]);
        let tl = pose.project([0.0, 0.0, 0.0]).unwrap();
        let br = pose.project([18.0, 18.0, 0.0]).unwrap();
        assert!(tl[0] < br[0] && tl[1] < br[1], "{tl:?} {br:?}");
    }

    #[test]
    fn the_plane_homography_agrees_with_projection() {
        let pose = cam(40.0, 30.0, 10.0, 0.0).pose([9.0, 9.7]);
        for z in [0.0, 1.5] {
            let h = pose.plane(z);
            for p in [[0.0, 0.0], [18.0, 3.0], [7.5, 19.4]] {
                let a = h.apply(p).unwrap();
                let b = pose.project_ideal([p[0], p[1], z]).unwrap();
                assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 1e-6, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn undistort_inverts_distort_and_rays_hit_their_points() {
        let pose = cam(35.0, 200.0, -5.0, -0.12).pose([6.0, 6.0]);
        for p in [[0.0, 0.0, 0.0], [12.0, 12.0, 0.4], [3.0, 9.0, 0.0]] {
            let ideal = pose.project_ideal(p).unwrap();
            let back = pose.undistort(pose.distort(ideal));
            assert!((back[0] - ideal[0]).hypot(back[1] - ideal[1]) < 1e-3);
            let d = pose.ray(ideal);
            let t = dot(sub(p, pose.eye), d);
            let miss = sub(add(pose.eye, scale(d, t)), p);
            assert!(dot(miss, miss).sqrt() < 1e-6);
        }
    }
}
