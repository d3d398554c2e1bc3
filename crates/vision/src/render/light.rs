//! Lighting: one lamp (position, colour, falloff) plus ambient light, Lambert diffuse and
//! Blinn-Phong specular.

use super::camera::{add, dot, normalize, scale, sub, Vec3};
use super::scene::Light;

/// A lamp placed over a board, ready to shade.
#[derive(Clone, Copy, Debug)]
pub struct Lamp {
    /// The lamp's position, world units.
    pub position: Vec3,
    colour: [f64; 3],
    intensity: f64,
    ambient: f64,
    reference: f64,
}

/// What a surface is made of, for shading.
#[derive(Clone, Copy, Debug)]
pub struct Material {
    /// Diffuse colour, linear RGB.
    pub albedo: [f64; 3],
    /// Specular strength.
    pub specular: f64,
    /// Specular exponent (larger is a tighter highlight).
    pub shininess: i32,
}

/// The lamp's light on an upward-facing surface point, before shadows: smooth across the
/// board, so it can be interpolated between nearby points.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlatLight {
    /// Diffuse irradiance from the lamp (falloff and angle included).
    pub diffuse: f64,
    /// Specular light toward the eye.
    pub specular: f64,
}

impl FlatLight {
    /// The weighted sum of four values (bilinear interpolation).
    pub fn blend(values: &[FlatLight; 4], weights: [f64; 4]) -> FlatLight {
        let mut out = FlatLight::default();
        for (v, w) in values.iter().zip(weights) {
            out.diffuse += v.diffuse * w;
            out.specular += v.specular * w;
        }
        out
    }
}

impl Lamp {
    /// The lamp of `light` over a board centred at `centre`.
    pub fn new(light: &Light, centre: [f64; 2]) -> Lamp {
        let (az, el) = (
            light.azimuth_degrees.to_radians(),
            light
                .elevation_degrees
                .to_radians()
                .clamp(0.05, std::f64::consts::FRAC_PI_2),
        );
        let dir = [az.sin() * el.cos(), az.cos() * el.cos(), el.sin()];
        let d = light.distance.max(1.0);
        Lamp {
            position: add([centre[0], centre[1], 0.0], scale(dir, d)),
            colour: light.colour,
            intensity: light.intensity,
            ambient: light.ambient,
            reference: d,
        }
    }

    /// The unit direction from a point toward the lamp.
    pub fn direction(&self, p: Vec3) -> Vec3 {
        normalize(sub(self.position, p))
    }

    /// The lamp's light at a point of the board's top (normal straight up), `view` the unit
    /// direction to the eye, for a varnish of strength `sheen` and exponent `shininess`.
    pub fn flat(&self, p: Vec3, view: Vec3, sheen: f64, shininess: i32) -> FlatLight {
        let to_lamp = sub(self.position, p);
        let dist2 = dot(to_lamp, to_lamp).max(1e-9);
        let l = scale(to_lamp, 1.0 / dist2.sqrt());
        let lamp = self.intensity * (self.reference * self.reference / dist2);
        let cos = l[2].max(0.0);
        let specular = if sheen > 0.0 && cos > 0.0 {
            let h = normalize(add(l, view));
            lamp * sheen * h[2].max(0.0).powi(shininess)
        } else {
            0.0
        };
        FlatLight {
            diffuse: lamp * cos,
            specular,
        }
    }

    /// The light leaving a board point of colour `albedo` lit by `t`, `visible` the
    /// unshadowed share of the lamp; agrees with [`Lamp::shade`] for a flat surface.
    pub fn combine(&self, albedo: [f64; 3], t: FlatLight, visible: f64) -> [f64; 3] {
        let mut out = [0.0; 3];
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.colour[k]
                * (albedo[k] * (self.ambient + t.diffuse * visible) + t.specular * visible);
        }
        out
    }

    /// The light leaving `p` toward the eye (linear RGB): normal `n`, unit direction to the
    /// eye `view`, `visible` the unshadowed share of the lamp (0..1).
    pub fn shade(&self, m: &Material, p: Vec3, n: Vec3, view: Vec3, visible: f64) -> [f64; 3] {
        let to_lamp = sub(self.position, p);
        let dist2 = dot(to_lamp, to_lamp).max(1e-9);
        let l = scale(to_lamp, 1.0 / dist2.sqrt());
        // Inverse-square falloff relative to the board centre: near lamps light unevenly.
        let lamp = self.intensity * visible * (self.reference * self.reference / dist2);
        let diffuse = dot(n, l).max(0.0);
        let h = normalize(add(l, view));
        let spec = if m.specular > 0.0 && diffuse > 0.0 {
            m.specular * dot(n, h).max(0.0).powi(m.shininess)
        } else {
            0.0
        };
        let mut out = [0.0; 3];
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.colour[k] * (m.albedo[k] * (self.ambient + lamp * diffuse) + lamp * spec);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn light() -> Light {
        Light {
            colour: [1.0, 0.9, 0.8],
            intensity: 1.0,
            ambient: 0.3,
            azimuth_degrees: 0.0,
            elevation_degrees: 60.0,
            distance: 40.0,
            softness: 0.1,
            stone_sheen: 0.1,
        }
    }

    #[test]
    fn a_surface_facing_the_lamp_is_brighter_than_one_in_shadow() {
        let lamp = Lamp::new(&light(), [9.0, 9.0]);
        let m = Material {
            albedo: [0.5; 3],
            specular: 0.0,
            shininess: 1,
        };
        let p = [9.0, 9.0, 0.0];
        let up = [0.0, 0.0, 1.0];
        let lit = lamp.shade(&m, p, up, up, 1.0);
        let dark = lamp.shade(&m, p, up, up, 0.0);
        assert!(lit[0] > dark[0] && dark[0] > 0.0);
        // The cast tints the result.
        assert!(lit[0] > lit[2]);
    }

    #[test]
    fn flat_light_agrees_with_full_shading() {
        let lamp = Lamp::new(&light(), [9.0, 9.0]);
        let m = Material {
            albedo: [0.6, 0.4, 0.2],
            specular: 0.1,
            shininess: 6,
        };
        let p = [3.0, 12.0, 0.0];
        let view = normalize([0.2, 0.3, 1.0]);
        for visible in [0.0, 0.4, 1.0] {
            let a = lamp.shade(&m, p, [0.0, 0.0, 1.0], view, visible);
            let b = lamp.combine(m.albedo, lamp.flat(p, view, 0.1, 6), visible);
            for k in 0..3 {
                assert!((a[k] - b[k]).abs() < 1e-12, "{a:?} {b:?}");
            }
        }
    }
}
