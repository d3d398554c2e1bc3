//! The render passes: every pixel's board, table or hand; then every stone by ray casting
//! into its bounding box; then the camera's development of the light into a frame.

use tengen_rules::Player;

use super::camera::{add, dot, normalize, scale, sub, Pose, Vec3};
use super::degrade::{expose, finish};
use super::hands::HandShape;
use super::light::{FlatLight, Lamp, Material};
use super::scene::{Degrade, Scene, StoneLook};
use super::stones::{contact_shade, material, segment_distance, stone_shadow, Lens as StoneLens};
use super::wood::{floor, ink, slow, value_noise, wood, wood_with, Slow};
use super::{Lens, Rendered};
use crate::homography::{Homography, Point};

/// The largest frame side drawn (larger requests are clamped).
const MAX_SIDE: usize = 8192;
/// Stones this far (cells) off their point are checked for shadows everywhere.
const FAR_OFFSET: f64 = 0.25;

/// A stone placed in the world.
struct Placed {
    player: Player,
    look: StoneLook,
    centre: [f64; 2],
    lens: StoneLens,
}

/// Everything the passes share.
struct Stage<'a> {
    scene: &'a Scene,
    cols: usize,
    rows: usize,
    aspect: f64,
    pose: Pose,
    lamp: Lamp,
    /// The board's top face, world x0, x1, y0, y1.
    rect: [f64; 4],
    stones: Vec<Placed>,
    /// Per point, the index of the stone standing there.
    at: Vec<Option<usize>>,
    /// Stones far off their point (knocked), checked for shadows everywhere.
    far: Vec<usize>,
    hands: Vec<(HandShape, Homography)>,
}

/// Draws a scene: see [`super::render`].
pub fn paint(scene: &Scene) -> Rendered {
    paint_clean(scene)
        .expose(&scene.degrade)
        .develop(scene.noise_seed)
}

/// A scene drawn in linear light before the camera's degradations, with its labels: what
/// frames of a video with the same board, stones and hands share (only the noise differs).
#[derive(Debug)]
pub(super) struct Painted {
    linear: Vec<f32>,
    width: usize,
    height: usize,
    corners: [Point; 4],
    grid: Homography,
    occluded: Vec<bool>,
    hand_mask: Vec<bool>,
    lens: Lens,
    pose: Pose,
    aspect: f64,
}

impl Painted {
    /// The picture through the camera's optics and tone curve ([`expose`]), what every
    /// frame of a still scene shares before its own noise.
    pub(super) fn expose(mut self, d: &Degrade) -> Exposed {
        expose(&mut self.linear, self.width, self.height, d);
        Exposed {
            painted: self,
            degrade: d.clone(),
        }
    }
}

/// A [`Painted`] scene after [`Painted::expose`]: its picture in display levels, and the
/// degradations it was exposed with (the rest of them, noise and compression, are
/// applied per frame).
#[derive(Debug)]
pub(super) struct Exposed {
    painted: Painted,
    degrade: Degrade,
}

impl Exposed {
    /// The frame as the camera delivers it, with the sensor noise of `noise_seed`.
    pub(super) fn develop(&self, noise_seed: u64) -> Rendered {
        let p = &self.painted;
        let (frame, jpeg) = finish(&p.linear, p.width, p.height, &self.degrade, noise_seed);
        Rendered {
            frame,
            jpeg,
            corners: p.corners,
            grid: p.grid,
            occluded: p.occluded.clone(),
            hand_mask: p.hand_mask.clone(),
            lens: p.lens,
            pose: p.pose,
            aspect: p.aspect,
        }
    }
}

/// Draws a scene in linear light, with its labels (everything but the degradations).
pub(super) fn paint_clean(scene: &Scene) -> Painted {
    let mut camera = scene.camera.clone();
    camera.width = camera.width.clamp(1, MAX_SIDE);
    camera.height = camera.height.clamp(1, MAX_SIDE);
    let (width, height) = (camera.width, camera.height);
    let (cols, rows) = (scene.size.width(), scene.size.height());
    let aspect = if scene.board.aspect.is_finite() && scene.board.aspect > 0.1 {
        scene.board.aspect
    } else {
        1.0
    };
    let centre = [(cols - 1) as f64 / 2.0, (rows - 1) as f64 / 2.0 * aspect];
    let pose = camera.pose(centre);
    let lamp = Lamp::new(&scene.light, centre);
    let m = scene.board.margin.max(0.0);
    let rect = [
        -m,
        (cols - 1) as f64 + m,
        -m,
        (rows - 1) as f64 * aspect + m,
    ];

    let mut stones = Vec::new();
    let mut at = vec![None; cols * rows];
    let mut far = Vec::new();
    for (i, slot) in at.iter_mut().enumerate() {
        let Some(&Some(player)) = scene.stones.get(i) else {
            continue;
        };
        let look = scene.looks.get(i).copied().unwrap_or_default();
        let centre = [
            (i % cols) as f64 + look.offset[0],
            ((i / cols) as f64 + look.offset[1]) * aspect,
        ];
        if look.offset[0].hypot(look.offset[1]) > FAR_OFFSET {
            far.push(stones.len());
        }
        *slot = Some(stones.len());
        stones.push(Placed {
            player,
            look,
            centre,
            lens: StoneLens::new(&scene.stone, centre),
        });
    }
    let hands = scene
        .hands
        .iter()
        .filter_map(|h| {
            let shape = HandShape::new(h, aspect);
            let to_plane = pose.plane(shape.height).inverse()?;
            Some((shape, to_plane))
        })
        .collect();
    let stage = Stage {
        scene,
        cols,
        rows,
        aspect,
        pose,
        lamp,
        rect,
        stones,
        at,
        far,
        hands,
    };

    let mut linear = vec![0f32; width * height * 3];
    let mut mask = if stage.hands.is_empty() {
        Vec::new()
    } else {
        vec![false; width * height]
    };
    let lens = Undistort::new(&pose, &camera);
    stage.background(&mut linear, &mut mask, &lens);
    stage.stones(&mut linear, &mask, &lens);

    let grid = pose.plane(0.0).then_after(&Homography([
        1.0, 0.0, 0.0, 0.0, aspect, 0.0, 0.0, 0.0, 1.0,
    ]));
    let lens = Lens {
        cx: width as f64 / 2.0,
        cy: height as f64 / 2.0,
        focal: camera.focal,
        k1: camera.k1,
    };
    let last = [(cols - 1) as f64, (rows - 1) as f64];
    let corners = [[0.0, 0.0], [last[0], 0.0], last, [0.0, last[1]]]
        .map(|p| pose.distort(grid.apply(p).unwrap_or([f64::NAN; 2])));
    let occluded = stage.occluded(&mask, width, height);
    Painted {
        linear,
        width,
        height,
        corners,
        grid,
        occluded,
        hand_mask: mask,
        lens,
        pose,
        aspect,
    }
}

/// Side of the square tiles whose plain table is interpolated.
const TILE: usize = 8;

/// The convex hull of points, counter-clockwise in image coordinates (monotone chain).
fn convex_hull(mut pts: Vec<Point>) -> Vec<Point> {
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let turn = |o: Point, a: Point, b: Point| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<Point> = Vec::with_capacity(2 * pts.len());
    for pass in 0..2 {
        let start = hull.len();
        let order: Vec<Point> = if pass == 0 {
            pts.clone()
        } else {
            pts.iter().rev().copied().collect()
        };
        for p in order {
            while hull.len() >= start + 2
                && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// Whether `p` lies outside the convex polygon `hull` by more than `margin`.
fn outside_by(hull: &[Point], p: Point, margin: f64) -> bool {
    if hull.len() < 3 {
        return false;
    }
    let mut inside = true;
    let mut nearest = f64::INFINITY;
    for k in 0..hull.len() {
        let (a, b) = (hull[k], hull[(k + 1) % hull.len()]);
        let cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        if cross < 0.0 {
            inside = false;
        }
        nearest = nearest.min(segment_distance(p, a, b));
    }
    !inside && nearest > margin
}

/// Undoes the lens for every pixel: the radial factor looked up by squared radius, which is
/// far cheaper than iterating per pixel.
struct Undistort {
    width: usize,
    height: usize,
    cx: f64,
    cy: f64,
    /// Squared radius (pixels²) per table step.
    step: f64,
    /// Ideal radius over drawn radius, by drawn squared radius.
    factor: Vec<f64>,
}

impl Undistort {
    const STEPS: usize = 2048;

    fn new(pose: &Pose, camera: &super::Camera) -> Undistort {
        let (cx, cy) = (camera.width as f64 / 2.0, camera.height as f64 / 2.0);
        let max = (cx * cx + cy * cy) * 1.01 + 1.0;
        let step = max / (Self::STEPS - 1) as f64;
        let factor = (0..Self::STEPS)
            .map(|k| {
                let r = (k as f64 * step).sqrt();
                if r < 1e-9 {
                    return 1.0;
                }
                let q = pose.undistort([cx + r, cy]);
                (q[0] - cx) / r
            })
            .collect();
        Undistort {
            width: camera.width,
            height: camera.height,
            cx,
            cy,
            step,
            factor,
        }
    }

    /// The ideal position of pixel (x, y).
    fn ideal(&self, x: usize, y: usize) -> Point {
        self.ideal_at(x as f64, y as f64)
    }

    /// The ideal position of a drawn position.
    fn ideal_at(&self, x: f64, y: f64) -> Point {
        let (dx, dy) = (x - self.cx, y - self.cy);
        let t = (dx * dx + dy * dy) / self.step;
        let k = (t as usize).min(Self::STEPS - 2);
        let f = t - k as f64;
        let s = self.factor[k] * (1.0 - f) + self.factor[k + 1] * f;
        [self.cx + dx * s, self.cy + dy * s]
    }
}

impl Stage<'_> {
    /// Board, board sides, table and hands: one value per pixel. Tiles of plain table,
    /// well clear of the board, are shaded at their corners and interpolated.
    fn background(&self, out: &mut [f32], mask: &mut [bool], lens: &Undistort) {
        let Some(to_board) = self.pose.plane(0.0).inverse() else {
            return;
        };
        let (width, height) = (lens.width, lens.height);
        let hull = self.board_hull();
        let mut put = |x: usize, y: usize, colour: [f64; 3], hand: bool| {
            let i = y * width + x;
            if hand {
                mask[i] = true;
            }
            for k in 0..3 {
                out[3 * i + k] = colour[k] as f32;
            }
        };
        for ty in (0..height).step_by(TILE) {
            for tx in (0..width).step_by(TILE) {
                let (x1, y1) = ((tx + TILE).min(width), (ty + TILE).min(height));
                let centre = lens.ideal_at((tx + x1) as f64 / 2.0, (ty + y1) as f64 / 2.0);
                let plain = hull
                    .as_ref()
                    .is_some_and(|h| outside_by(h, centre, TILE as f64 * 1.5));
                if plain {
                    let at = |x: usize, y: usize| self.around(self.pose.ray(lens.ideal(x, y)));
                    let c = [at(tx, ty), at(x1, ty), at(tx, y1), at(x1, y1)];
                    let (dx, dy) = ((x1 - tx) as f64, (y1 - ty) as f64);
                    for y in ty..y1 {
                        let v = (y - ty) as f64 / dy;
                        for x in tx..x1 {
                            let ideal = lens.ideal(x, y);
                            if let Some(hand) = self.hand_at(ideal) {
                                put(x, y, hand, true);
                                continue;
                            }
                            let u = (x - tx) as f64 / dx;
                            let mut colour = [0.0; 3];
                            for k in 0..3 {
                                let top = c[0][k] + (c[1][k] - c[0][k]) * u;
                                let bottom = c[2][k] + (c[3][k] - c[2][k]) * u;
                                colour[k] = top + (bottom - top) * v;
                            }
                            put(x, y, colour, false);
                        }
                    }
                    continue;
                }
                // The lamp's light and the wood's slow variation are smooth over the board:
                // exact at the tile's corners, interpolated inside (shadows, lines and grain
                // stripes stay exact per pixel).
                let corner_light = |x: usize, y: usize| {
                    let q = to_board.apply(lens.ideal(x, y))?;
                    let p = [q[0], q[1], 0.0];
                    (self.pose.depth(p) > 0.0)
                        .then(|| (self.flat_light(p), slow(&self.scene.board, q[0], q[1])))
                };
                let light = (|| {
                    Some([
                        corner_light(tx, ty)?,
                        corner_light(x1, ty)?,
                        corner_light(tx, y1)?,
                        corner_light(x1, y1)?,
                    ])
                })();
                let (dx, dy) = ((x1 - tx) as f64, (y1 - ty) as f64);
                for y in ty..y1 {
                    let v = (y - ty) as f64 / dy;
                    for x in tx..x1 {
                        let ideal = lens.ideal(x, y);
                        if let Some(c) = self.hand_at(ideal) {
                            put(x, y, c, true);
                            continue;
                        }
                        let u = (x - tx) as f64 / dx;
                        let here = light.as_ref().map(|c| {
                            let w = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
                            (
                                FlatLight::blend(&c.map(|t| t.0), w),
                                Slow::blend(&c.map(|t| t.1), w),
                            )
                        });
                        put(x, y, self.surface(&to_board, ideal, here), false);
                    }
                }
            }
        }
    }

    /// The convex outline, in ideal image positions, of the board as a solid (top and
    /// sides) and its shadow on the table; `None` when part of it is behind the camera.
    fn board_hull(&self) -> Option<Vec<Point>> {
        let [x0, x1, y0, y1] = self.rect;
        let depth = self.scene.board.thickness.max(0.0);
        let mut pts = Vec::with_capacity(12);
        for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] {
            for z in [0.0, -depth] {
                pts.push(self.pose.project_ideal([x, y, z])?);
            }
            // The board's shadow on the table has a sharp edge: keep it exact too.
            let l = self.lamp.direction([x, y, 0.0]);
            let run = depth / l[2].max(0.05);
            pts.push(
                self.pose
                    .project_ideal([x - l[0] * run, y - l[1] * run, -depth])?,
            );
        }
        Some(convex_hull(pts))
    }

    /// The nearest hand drawn at an ideal image position, shaded.
    fn hand_at(&self, ideal: Point) -> Option<[f64; 3]> {
        for (shape, to_plane) in self.hands.iter().rev() {
            let Some(q) = to_plane.apply(ideal) else {
                continue;
            };
            let Some(hit) = shape.at(q) else {
                continue;
            };
            let p = [q[0], q[1], shape.height];
            if self.pose.depth(p) <= 0.0 {
                continue;
            }
            let side = (1.0 - hit.up * hit.up).sqrt();
            let n = [hit.outward[0] * side, hit.outward[1] * side, hit.up];
            let m = Material {
                albedo: if hit.sleeve { shape.sleeve } else { shape.skin },
                specular: if hit.sleeve { 0.0 } else { 0.08 },
                shininess: 8,
            };
            let view = normalize(sub(self.pose.eye, p));
            return Some(self.lamp.shade(&m, p, n, view, 1.0));
        }
        None
    }

    /// The board's top, its sides or the table seen at an ideal image position.
    fn surface(
        &self,
        to_board: &Homography,
        ideal: Point,
        light: Option<(FlatLight, Slow)>,
    ) -> [f64; 3] {
        let h = &to_board.0;
        let w = h[6] * ideal[0] + h[7] * ideal[1] + h[8];
        let [rx0, rx1, ry0, ry1] = self.rect;
        if w.abs() > 1e-12 {
            let wx = (h[0] * ideal[0] + h[1] * ideal[1] + h[2]) / w;
            let wy = (h[3] * ideal[0] + h[4] * ideal[1] + h[5]) / w;
            let p = [wx, wy, 0.0];
            let in_front = self.pose.depth(p) > 0.0;
            if in_front && (rx0..=rx1).contains(&wx) && (ry0..=ry1).contains(&wy) {
                // The pixel's footprint on the board, from the map's derivatives.
                let dxx = (h[0] - wx * h[6]) / w;
                let dxy = (h[1] - wx * h[7]) / w;
                let dyx = (h[3] - wy * h[6]) / w;
                let dyy = (h[4] - wy * h[7]) / w;
                let ex = dxx.abs() + dxy.abs();
                let ey = (dyx.abs() + dyy.abs()) / self.aspect;
                let (light, slow) =
                    light.unwrap_or_else(|| (self.flat_light(p), slow(&self.scene.board, wx, wy)));
                return self.board_top(p, ex, ey, light, slow);
            }
        }
        self.around(self.pose.ray(ideal))
    }

    /// The lamp's light on the board's top at `p`, before shadows.
    fn flat_light(&self, p: Vec3) -> FlatLight {
        let view = normalize(sub(self.pose.eye, p));
        self.lamp.flat(p, view, self.scene.board.sheen, 6)
    }

    /// The board's top face at world point `p`, lit by `light`, the wood varying by `slow`.
    fn board_top(&self, p: Vec3, ex: f64, ey: f64, light: FlatLight, slow: Slow) -> [f64; 3] {
        let look = &self.scene.board;
        let (col, row) = (p[0], p[1] / self.aspect);
        let grain = wood_with(look, p[0], p[1], slow);
        let cover = ink(look, self.cols.min(self.rows), col, row, ex, ey);
        let mut albedo = [0.0; 3];
        for k in 0..3 {
            albedo[k] = grain[k] * (1.0 - cover) + look.line[k] * cover;
        }
        let (visible, contact) = self.board_shadow(p, self.lamp.direction(p));
        let c = self.lamp.combine(albedo, light, visible);
        c.map(|v| v * contact)
    }

    /// How much of the lamp reaches board point `p` past stones and hands, and the ambient
    /// occlusion around stone feet.
    fn board_shadow(&self, p: Vec3, l: Vec3) -> (f64, f64) {
        let shape = &self.scene.stone;
        let soft = self.scene.light.softness;
        let q = [p[0], p[1]];
        let mut visible = self.hand_shadow(p, l);
        let mut contact = 1.0;
        // Stones casting here stand near the point half a shadow toward the lamp.
        let reach = 0.3 * shape.thickness / l[2].max(0.05);
        // Beyond this distance from a stone's centre neither its shadow nor its foot's
        // darkening reaches: skip the exact tests.
        let far = (shape.radius * 1.3).max(shape.radius + 2.0 * reach + soft);
        let far2 = far * far;
        let mut check = |s: &Placed| {
            let (dx, dy) = (q[0] - s.centre[0], q[1] - s.centre[1]);
            if dx * dx + dy * dy > far2 {
                return;
            }
            visible *= stone_shadow(shape, s.centre, q, l, soft);
            contact *= contact_shade(shape, s.centre, q);
        };
        let c = (
            floor(p[0] + l[0] * reach + 0.5),
            floor((p[1] + l[1] * reach) / self.aspect + 0.5),
        );
        for dr in -1..=1 {
            for dc in -1..=1 {
                let (cc, rr) = (c.0 + dc as f64, c.1 + dr as f64);
                if cc < 0.0 || rr < 0.0 || cc >= self.cols as f64 || rr >= self.rows as f64 {
                    continue;
                }
                let i = rr as usize * self.cols + cc as usize;
                if let Some(s) = self.at[i] {
                    if !self.far.contains(&s) {
                        check(&self.stones[s]);
                    }
                }
            }
        }
        for &s in &self.far {
            check(&self.stones[s]);
        }
        (visible, contact)
    }

    /// How much of the lamp reaches world point `p` past the hands.
    fn hand_shadow(&self, p: Vec3, l: Vec3) -> f64 {
        let mut visible = 1.0;
        for (shape, _) in &self.hands {
            let rise = (shape.height - p[2]) / l[2].max(0.05);
            if rise <= 0.0 {
                continue;
            }
            if let Some(hit) = shape.at([p[0] + l[0] * rise, p[1] + l[1] * rise]) {
                visible *= 1.0 - (4.0 * hit.up).min(1.0);
            }
        }
        visible
    }

    /// What a ray that misses the board's top sees: a side of the board, or the table.
    fn around(&self, dir: Vec3) -> [f64; 3] {
        let eye = self.pose.eye;
        let look = &self.scene.board;
        let depth = look.thickness.max(0.0);
        let [x0, x1, y0, y1] = self.rect;
        let mut best: Option<(f64, Vec3, Vec3)> = None;
        let faces = [
            (0, x0, [-1.0, 0.0, 0.0]),
            (0, x1, [1.0, 0.0, 0.0]),
            (1, y0, [0.0, -1.0, 0.0]),
            (1, y1, [0.0, 1.0, 0.0]),
        ];
        for (axis, at, n) in faces {
            if dir[axis].abs() < 1e-12 || dot(dir, n) >= 0.0 {
                continue;
            }
            let s = (at - eye[axis]) / dir[axis];
            let p = add(eye, scale(dir, s));
            let (other, lo, hi) = if axis == 0 { (1, y0, y1) } else { (0, x0, x1) };
            let on_face = (-depth..=0.0).contains(&p[2]) && (lo..=hi).contains(&p[other]);
            if s > 0.0 && on_face && best.as_ref().is_none_or(|b| s < b.0) {
                best = Some((s, p, n));
            }
        }
        let view = scale(dir, -1.0);
        if let Some((_, p, n)) = best {
            let grain = wood(look, p[0] + p[1], p[2] * 3.0);
            let m = Material {
                albedo: grain.map(|v| v * 0.75),
                specular: 0.0,
                shininess: 1,
            };
            return self.lamp.shade(&m, p, n, view, 1.0);
        }
        if dir[2] >= -1e-9 {
            return [0.02; 3];
        }
        let s = (-depth - eye[2]) / dir[2];
        let p = add(eye, scale(dir, s));
        let t = value_noise(look.wood_seed ^ 0x7AB1E, p[0] * 0.7, p[1] * 0.7);
        let m = Material {
            albedo: look.table.map(|v| v * (0.85 + 0.3 * t)),
            specular: 0.0,
            shininess: 1,
        };
        // The board shades the table near its edges a little.
        let l = self.lamp.direction(p);
        let under = (x0..=x1).contains(&(p[0] + l[0] * depth / l[2].max(0.05)))
            && (y0..=y1).contains(&(p[1] + l[1] * depth / l[2].max(0.05)));
        let visible = if under { 0.3 } else { 1.0 };
        self.lamp.shade(&m, p, [0.0, 0.0, 1.0], view, visible)
    }

    /// Every stone, ray cast over its bounding box; hands stay in front.
    fn stones(&self, out: &mut [f32], mask: &[bool], lens: &Undistort) {
        let (width, height) = (lens.width, lens.height);
        let mut depth = vec![f32::INFINITY; width * height];
        let shape = &self.scene.stone;
        let (r, t) = (shape.radius, shape.thickness);
        for s in &self.stones {
            let mut lo = [f64::INFINITY; 2];
            let mut hi = [f64::NEG_INFINITY; 2];
            for k in 0..8 {
                let corner = [
                    s.centre[0] + if k & 1 == 0 { -r } else { r },
                    s.centre[1] + if k & 2 == 0 { -r } else { r },
                    if k & 4 == 0 { 0.0 } else { t },
                ];
                let Some(q) = self.pose.project(corner) else {
                    continue;
                };
                for a in 0..2 {
                    lo[a] = lo[a].min(q[a]);
                    hi[a] = hi[a].max(q[a]);
                }
            }
            if !(lo[0].is_finite() && hi[0].is_finite() && lo[1].is_finite() && hi[1].is_finite()) {
                continue;
            }
            let x0 = (lo[0].floor() - 1.0).max(0.0) as usize;
            let y0 = (lo[1].floor() - 1.0).max(0.0) as usize;
            let x1 = (hi[0].ceil() + 1.0).min(width as f64 - 1.0);
            let y1 = (hi[1].ceil() + 1.0).min(height as f64 - 1.0);
            if x1 < 0.0 || y1 < 0.0 {
                continue;
            }
            let [base, glare] = material(s.player, &s.look, self.scene.light.stone_sheen);
            for y in y0..=y1 as usize {
                for x in x0..=x1 as usize {
                    let i = y * width + x;
                    if mask.get(i).copied().unwrap_or(false) {
                        continue;
                    }
                    let dir = self.pose.ray(lens.ideal(x, y));
                    let Some((dist, n)) = s.lens.hit(self.pose.eye, dir) else {
                        continue;
                    };
                    if dist as f32 >= depth[i] {
                        continue;
                    }
                    depth[i] = dist as f32;
                    let p = add(self.pose.eye, scale(dir, dist));
                    let l = self.lamp.direction(p);
                    let visible = self.hand_shadow(p, l);
                    let view = scale(dir, -1.0);
                    let c = self.lamp.shade(&base, p, n, view, visible);
                    let g = if glare.specular > 0.0 {
                        self.lamp.shade(&glare, p, n, view, visible)
                    } else {
                        [0.0; 3]
                    };
                    // Less ambient light reaches the underside, near the board.
                    let occlusion = 0.8 + 0.2 * n[2];
                    for k in 0..3 {
                        out[3 * i + k] = ((c[k] * occlusion) + g[k]) as f32;
                    }
                }
            }
        }
    }

    /// Per point: any of nine samples over the stone-sized disc lands under a hand, or the
    /// point is outside the frame.
    fn occluded(&self, mask: &[bool], width: usize, height: usize) -> Vec<bool> {
        let t = self.scene.stone.thickness;
        (0..self.cols * self.rows)
            .map(|i| {
                let c = [(i % self.cols) as f64, (i / self.cols) as f64 * self.aspect];
                let pixel = |p: Vec3| {
                    self.pose.project(p).and_then(|q| {
                        let (x, y) = (q[0].round(), q[1].round());
                        (x >= 0.0 && y >= 0.0 && x < width as f64 && y < height as f64)
                            .then(|| y as usize * width + x as usize)
                    })
                };
                let Some(centre) = pixel([c[0], c[1], t / 2.0]) else {
                    return true;
                };
                if mask.is_empty() {
                    return false;
                }
                let around = (0..8).filter_map(|k| {
                    let a = k as f64 * std::f64::consts::FRAC_PI_4;
                    pixel([c[0] + 0.42 * a.cos(), c[1] + 0.42 * a.sin(), t / 2.0])
                });
                std::iter::once(centre).chain(around).any(|px| mask[px])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hull_keeps_the_outline_and_tells_near_from_far() {
        let hull = convex_hull(vec![
            [0.0, 0.0],
            [10.0, 0.0],
            [5.0, 5.0],
            [10.0, 10.0],
            [0.0, 10.0],
        ]);
        assert_eq!(hull.len(), 4);
        assert!(!outside_by(&hull, [5.0, 5.0], 1.0));
        assert!(!outside_by(&hull, [11.0, 5.0], 2.0));
        assert!(outside_by(&hull, [13.0, 5.0], 2.0));
        assert!(outside_by(&hull, [-5.0, -5.0], 2.0));
    }
}
