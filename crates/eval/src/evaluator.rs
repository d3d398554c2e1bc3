//! What the search asks of a position: the [`Evaluator`] trait, its request and error,
//! and a uniform evaluator for tests.

use std::fmt;
use std::sync::Arc;

use tengen_rules::{BoardSize, Game, Move, Player};

use crate::{InputParams, NnOutput, PolicyOptions, Symmetry};

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

/// Why an evaluation failed: the evaluator's own error, kept whole (its message, and
/// [`EvalError::downcast_ref`] for a caller that knows the evaluator), so that the
/// search need not know any evaluator's error type.
#[derive(Clone)]
pub struct EvalError(Arc<dyn std::error::Error + Send + Sync>);

impl EvalError {
    /// Wraps an evaluator's error.
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> EvalError {
        EvalError(Arc::new(e))
    }

    /// The evaluator's error, if it is a `T`.
    pub fn downcast_ref<T: std::error::Error + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
}

impl fmt::Debug for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for EvalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// A move's index in a policy vector: row-major points, then pass.
#[inline]
pub fn policy_index(size: BoardSize, mv: Move) -> usize {
    match mv {
        Move::Pass => size.area(),
        Move::Play(l) => size.index_of(l),
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
            policy[policy_index(size, mv)] = p;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the backend fell over")]
    struct Fell;

    #[test]
    fn an_eval_error_keeps_the_evaluators_error() {
        let e = EvalError::new(Fell);
        assert_eq!(e.to_string(), "the backend fell over");
        assert!(e.downcast_ref::<Fell>().is_some());
        assert!(e.downcast_ref::<std::fmt::Error>().is_none());
    }
}
