//! Utility of search results for White: win/loss, no-result and score parts (KataGo paper §5.4).

use crate::params::SearchParams;

/// One evaluation's values, from White's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// Utility the search maximises for White.
    pub utility: f64,
    /// Win probability minus loss probability.
    pub winloss: f64,
    /// No-result probability.
    pub no_result: f64,
    /// Expected score, White minus Black.
    pub score: f64,
    /// Expected square of the score.
    pub score_sq: f64,
    /// Expected lead.
    pub lead: f64,
}

/// Computes utilities with a fixed dynamic-score centre (one per search).
#[derive(Clone, Copy, Debug)]
pub struct UtilityFn {
    win_loss: f64,
    no_result: f64,
    static_factor: f64,
    dynamic_factor: f64,
    dynamic_scale: f64,
    center: f64,
    sqrt_area: f64,
}

impl UtilityFn {
    /// A utility for a board of `area` points with the dynamic score centred at `center`.
    pub fn new(params: &SearchParams, area: usize, center: f64) -> UtilityFn {
        UtilityFn {
            win_loss: params.win_loss_utility_factor,
            no_result: params.no_result_utility_for_white,
            static_factor: params.static_score_utility_factor,
            dynamic_factor: params.dynamic_score_utility_factor,
            dynamic_scale: params.dynamic_score_center_scale,
            center,
            sqrt_area: (area as f64).sqrt(),
        }
    }

    /// The dynamic centre for a root expecting `root_score`: pulled towards 0, within a
    /// board-sized distance of the expectation.
    pub fn center_for(params: &SearchParams, area: usize, root_score: f64) -> f64 {
        let c = root_score * (1.0 - params.dynamic_score_center_zero_weight);
        let cap = (area as f64).sqrt() * params.dynamic_score_center_scale;
        c.clamp(root_score - cap, root_score + cap)
    }

    /// The centre in use.
    pub fn center(&self) -> f64 {
        self.center
    }

    /// Score utility of a score distribution with this mean and mean square.
    pub fn score_utility(&self, score: f64, score_sq: f64) -> f64 {
        let stdev = (score_sq - score * score).max(0.0).sqrt();
        let s = expected_score_value(score, stdev, 0.0, 2.0, self.sqrt_area);
        let d = expected_score_value(
            score,
            stdev,
            self.center,
            self.dynamic_scale,
            self.sqrt_area,
        );
        s * self.static_factor + d * self.dynamic_factor
    }

    /// Full utility of results with these win-loss, no-result and score values.
    pub fn utility(&self, winloss: f64, no_result: f64, score: f64, score_sq: f64) -> f64 {
        winloss * self.win_loss + no_result * self.no_result + self.score_utility(score, score_sq)
    }

    /// Utility of a node's own evaluation.
    pub fn of_eval(&self, e: &crate::tree::Eval) -> f64 {
        self.utility(
            f64::from(e.winloss),
            f64::from(e.no_result),
            f64::from(e.score),
            f64::from(e.score_sq),
        )
    }

    /// How much the score utility changes when the whole score distribution moves by
    /// `delta` points for White (its spread kept).
    pub fn score_utility_shift(&self, score: f64, score_sq: f64, delta: f64) -> f64 {
        let var = (score_sq - score * score).max(0.0);
        let moved = score + delta;
        self.score_utility(moved, var + moved * moved) - self.score_utility(score, score_sq)
    }

    /// The slope of the score utility at a sure score of `score` (the spread ignored):
    /// how much a point is worth there.
    pub fn score_utility_slope(&self, score: f64) -> f64 {
        let slope = |center: f64, scale: f64| {
            let k = scale * self.sqrt_area;
            let x = (score - center) / k;
            (2.0 / std::f64::consts::PI) / (k * (1.0 + x * x))
        };
        slope(0.0, 2.0) * self.static_factor
            + slope(self.center, self.dynamic_scale) * self.dynamic_factor
    }

    /// A sample from a network's (or a finished game's) values.
    pub fn sample(
        &self,
        winloss: f64,
        no_result: f64,
        score: f64,
        score_sq: f64,
        lead: f64,
    ) -> Sample {
        Sample {
            utility: self.utility(winloss, no_result, score, score_sq),
            winloss,
            no_result,
            score,
            score_sq,
            lead,
        }
    }
}

/// Score value of one final score: an arctangent squashed to (-1, 1), scaled to the board.
fn score_value(score: f64, center: f64, scale: f64, sqrt_area: f64) -> f64 {
    (2.0 / std::f64::consts::PI) * ((score - center) / (scale * sqrt_area)).atan()
}

/// Quadrature nodes (in stdevs) and normal weights for the expectation below: a midpoint
/// rule over ±5 stdevs, fine enough that the result is smooth in mean and stdev.
const STEPS: usize = 41;

fn normal_weights() -> &'static [(f64, f64); STEPS] {
    static W: std::sync::OnceLock<[(f64, f64); STEPS]> = std::sync::OnceLock::new();
    W.get_or_init(|| {
        let mut w = [(0.0, 0.0); STEPS];
        let mut total = 0.0;
        for (i, slot) in w.iter_mut().enumerate() {
            let x = -5.0 + 10.0 * i as f64 / (STEPS - 1) as f64;
            let p = (-0.5 * x * x).exp();
            *slot = (x, p);
            total += p;
        }
        for slot in w.iter_mut() {
            slot.1 /= total;
        }
        w
    })
}

/// Expected score value when the final score is normal with this mean and stdev.
pub fn expected_score_value(mean: f64, stdev: f64, center: f64, scale: f64, sqrt_area: f64) -> f64 {
    if stdev < 1e-3 {
        return score_value(mean, center, scale, sqrt_area);
    }
    normal_weights()
        .iter()
        .map(|&(x, w)| w * score_value(mean + x * stdev, center, scale, sqrt_area))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_value_is_odd_bounded_and_increasing() {
        let sa = 19.0;
        assert!(score_value(0.0, 0.0, 2.0, sa).abs() < 1e-12);
        let mut last = -1.0;
        for s in -400..=400 {
            let v = score_value(s as f64, 0.0, 2.0, sa);
            assert!(v > last && v < 1.0);
            assert!((v + score_value(-s as f64, 0.0, 2.0, sa)).abs() < 1e-12);
            last = v;
        }
    }

    #[test]
    fn uncertainty_shrinks_the_expected_value_towards_zero() {
        let sa = 19.0;
        let sure = expected_score_value(10.0, 0.0, 0.0, 2.0, sa);
        let unsure = expected_score_value(10.0, 30.0, 0.0, 2.0, sa);
        assert!(unsure > 0.0 && unsure < sure);
        // Symmetric distributions around the centre are worth nothing.
        assert!(expected_score_value(0.0, 30.0, 0.0, 2.0, sa).abs() < 1e-9);
    }

    #[test]
    fn utility_prefers_wins_and_bigger_scores() {
        let p = SearchParams::default();
        let u = UtilityFn::new(&p, 361, 0.0);
        assert!(u.utility(1.0, 0.0, 5.0, 25.0) > u.utility(0.0, 0.0, 5.0, 25.0));
        assert!(u.utility(0.5, 0.0, 8.0, 64.0) > u.utility(0.5, 0.0, 2.0, 4.0));
        let top = u.utility(1.0, 0.0, 1000.0, 1e6);
        assert!(top <= p.utility_radius() + 1e-9);
    }

    #[test]
    fn centre_is_pulled_to_zero_and_capped() {
        let p = SearchParams::default();
        let c = UtilityFn::center_for(&p, 361, 10.0);
        assert!((c - 8.0).abs() < 1e-9);
        let far = UtilityFn::center_for(&p, 81, 200.0);
        assert!((far - (200.0 - 9.0 * 0.75)).abs() < 1e-9);
    }
}
