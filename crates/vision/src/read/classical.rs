//! A classical classifier, the fallback and the baseline the network is measured against:
//! the median brightness of a stone-sized disc relative to the wood around it.

use super::rectify::{disc, PATCH, SPAN};
use super::Class;

/// The disc's radius in cells: inside any stone, wide enough that a grid line is a minority.
const DISC_RADIUS: f64 = 0.3;
/// Pixels whose centre is this close (in cells) to either line through the point are left
/// out of the disc: at 10 pixels a cell, bilinear sampling spreads each line over two
/// pixel rows, which would otherwise make the lines half the disc.
const LINE_CLEARANCE: f64 = 0.1;
/// Relative brightness (mean of the three channel ratios) at and below which a disc is
/// surely black, and above which it is surely not.
const BLACK: (f32, f32) = (0.5, 0.65);
/// Relative brightness at and above which a disc is surely white, and below which it is
/// surely not; wood between the two, less a grid line's darkening, is empty.
const WHITE: (f32, f32) = (1.3, 1.12);
/// Relative brightness of empty wood (with its lines): none below the first, surely from the
/// second to the third, none above the fourth.
const EMPTY: [f32; 4] = [0.62, 0.78, 1.06, 1.16];

/// Scores normalised patches from the disc at their centre.
#[derive(Clone, Debug)]
pub struct Classical {
    disc: Vec<usize>,
    values: Vec<f32>,
}

impl Default for Classical {
    fn default() -> Self {
        Classical::new()
    }
}

impl Classical {
    /// The classifier, with its disc precomputed.
    pub fn new() -> Self {
        let scale = PATCH as f64 / SPAN;
        let mid = PATCH as f64 / 2.0;
        let off_line = |k: usize| (k as f64 + 0.5 - mid).abs() >= LINE_CLEARANCE * scale;
        let disc: Vec<usize> = disc(DISC_RADIUS)
            .into_iter()
            .filter(|&i| off_line(i / PATCH) && off_line(i % PATCH))
            .collect();
        let values = Vec::with_capacity(disc.len());
        Classical { disc, values }
    }

    /// Class probabilities (indexed by [`Class`]) of one normalised patch.
    pub fn classify(&mut self, patch: &[f32]) -> [f32; 4] {
        scores(self.level(patch))
    }

    /// The median relative brightness of the disc (wood is about 1).
    pub fn level(&mut self, patch: &[f32]) -> f32 {
        let plane = PATCH * PATCH;
        self.values.clear();
        for &i in &self.disc {
            let mean = (patch[i] + patch[plane + i] + patch[2 * plane + i]) / 3.0;
            self.values.push(mean + 1.0);
        }
        let mid = self.values.len() / 2;
        let (_, &mut level, _) = self.values.select_nth_unstable_by(mid, f32::total_cmp);
        level
    }
}

/// Piecewise-linear class scores of a disc's relative brightness; what no class claims is
/// left to "occluded" (a hand, glare, something between wood and stone).
fn scores(level: f32) -> [f32; 4] {
    let ramp = |x: f32, from: f32, to: f32| ((x - from) / (to - from)).clamp(0.0, 1.0);
    let black = ramp(level, BLACK.1, BLACK.0);
    let white = ramp(level, WHITE.1, WHITE.0);
    let empty = ramp(level, EMPTY[0], EMPTY[1]).min(ramp(level, EMPTY[3], EMPTY[2]));
    let mut p = [0.0; 4];
    p[Class::Empty as usize] = empty;
    p[Class::Black as usize] = black;
    p[Class::White as usize] = white;
    p[Class::Occluded as usize] = (1.0 - black - white - empty).max(0.0);
    let sum: f32 = p.iter().sum();
    p.map(|v| v / sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::rectify::PATCH_LEN;

    fn flat(level: f32) -> Vec<f32> {
        vec![level - 1.0; PATCH_LEN]
    }

    fn best(p: [f32; 4]) -> usize {
        (0..4).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap()
    }

    #[test]
    fn dark_light_and_wood_discs_get_their_classes() {
        let mut c = Classical::new();
        assert_eq!(best(c.classify(&flat(0.1))), Class::Black as usize);
        assert_eq!(best(c.classify(&flat(1.8))), Class::White as usize);
        assert_eq!(best(c.classify(&flat(0.97))), Class::Empty as usize);
        // Between wood and a stone: nobody's.
        assert_eq!(best(c.classify(&flat(0.62))), Class::Occluded as usize);
    }

    #[test]
    fn scores_are_probabilities() {
        for i in 0..=40 {
            let p = scores(i as f32 * 0.05);
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
        }
    }
}
