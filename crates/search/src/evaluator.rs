//! What the search asks of a position: the [`Evaluator`] trait, the network's adapter,
//! and a uniform evaluator for tests. The classical engine's adapter lives in the binary,
//! so that the search does not depend on the classical engine.

use std::sync::Arc;

use tengen_nn::eval::{EvalOptions, SymmetryChoice};
// Re-exported: the types of an `EvalRequest` and its answer, so that users of this crate
// need not depend on the network crate to call an evaluator.
pub use tengen_nn::eval::EvalError;
pub use tengen_nn::features::{HumanProfile, InputParams, ProfileError, Symmetry};
pub use tengen_nn::postprocess::{NnOutput, PolicyOptions};
use tengen_rules::{Game, Player};

use crate::filter::move_index;

/// One evaluation request from the search.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvalRequest {
    /// The symmetry to evaluate in (the search draws it, so runs can be reproduced).
    pub symmetry: Symmetry,
    /// How to turn policy logits into probabilities.
    pub policy: PolicyOptions,
    /// Input feature parameters.
    pub inputs: InputParams,
    /// Whether ownership is wanted.
    pub ownership: bool,
}

/// Anything that judges positions for the search: a network, the classical engine, a test double.
pub trait Evaluator: Send + Sync {
    /// The judgement of `game`'s position for the player to move (outputs from White's view).
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError>;

    /// The largest number of requests worth having in flight at once (a batch).
    fn max_batch(&self) -> usize {
        1
    }

    /// Forgets cached evaluations. A cache keyed by position answers a transposition with
    /// the first history's evaluation, so reproducing a search exactly needs a cold cache.
    fn clear_cache(&self) {}
}

impl Evaluator for tengen_nn::eval::Evaluator {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let opts = EvalOptions {
            symmetry: SymmetryChoice::Fixed(req.symmetry),
            policy: req.policy,
            inputs: req.inputs,
            ownership: req.ownership,
        };
        tengen_nn::eval::Evaluator::evaluate(self, game, &opts)
    }

    fn max_batch(&self) -> usize {
        self.config().max_batch
    }

    fn clear_cache(&self) {
        tengen_nn::eval::Evaluator::clear_cache(self);
    }
}

/// A network-free evaluator: every legal move equally likely, value from the area count
/// (stones plus surrounded empty points) squashed into a win probability.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let size = game.board().size();
        let area = size.area();
        let mut policy = vec![-1f32; area + 1];
        let legal = game.legal_moves();
        let p = 1.0 / legal.len() as f32;
        for mv in legal {
            policy[move_index(size, mv)] = p;
        }
        let map = game.area_now();
        let score = map.white_minus_black() as f32 + game.white_bonus();
        // A logistic in points: ten points ahead is a near-certain win on any board.
        let white_win = 1.0 / (1.0 + (-score / 3.0).exp());
        let ownership = req.ownership.then(|| {
            size.points()
                .map(|l| match map.get(l) {
                    Some(Player::White) => 1.0,
                    Some(Player::Black) => -1.0,
                    None => 0.0,
                })
                .collect()
        });
        Ok(Arc::new(NnOutput {
            policy,
            white_win,
            white_loss: 1.0 - white_win,
            no_result: 0.0,
            white_score_mean: score,
            white_score_mean_sq: score * score + 4.0,
            white_lead: score,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: ownership,
        }))
    }
}
