//! What the search asks of a position: the [`Evaluator`] trait, the network's adapter,
//! and a uniform evaluator for tests and for running without a network.

use std::sync::Arc;

use tengen_nn::eval::{EvalOptions, SymmetryChoice};
// Re-exported: the types of an `EvalRequest` and its answer, so that users of this crate
// need not depend on the network crate to call an evaluator.
pub use tengen_nn::eval::EvalError;
pub use tengen_nn::features::{InputParams, Symmetry};
pub use tengen_nn::postprocess::{NnOutput, PolicyOptions};
use tengen_rules::playout::PlayoutPolicy;
use tengen_rules::{Game, Move, Player};

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

/// The classical engine as the search's evaluator: its quick judgement's policy, and a
/// win probability from its score estimate, blended with playouts' results
/// (as AlphaGo mixed its value network with rollouts): the static estimate knows
/// shape and reading, the playouts see fights to their end.
pub struct ClassicEvaluator {
    engine: tengen_classic::Classic,
    playouts: u32,
    /// Weight of the static estimate; the playouts get the rest.
    mix: f32,
    policy: PlayoutPolicy,
    seed: std::sync::atomic::AtomicU64,
}

impl ClassicEvaluator {
    /// Wraps a classical engine, with eight guided playouts per evaluation weighing 0.7
    /// against its 0.3.
    pub fn new(engine: tengen_classic::Classic) -> ClassicEvaluator {
        ClassicEvaluator::with_playouts(engine, 8, 0.3)
    }

    /// Wraps a classical engine, adding `playouts` guided playouts per evaluation whose
    /// results weigh `1 - mix` against the static estimate's `mix`.
    pub fn with_playouts(engine: tengen_classic::Classic, playouts: u32, mix: f32) -> Self {
        ClassicEvaluator {
            engine,
            playouts,
            mix: if playouts == 0 {
                1.0
            } else {
                mix.clamp(0.0, 1.0)
            },
            policy: PlayoutPolicy::Guided,
            seed: std::sync::atomic::AtomicU64::new(0x5eed),
        }
    }

    /// The same evaluator with another playout policy.
    pub fn with_policy(mut self, policy: PlayoutPolicy) -> Self {
        self.policy = policy;
        self
    }
}

impl Evaluator for ClassicEvaluator {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let j = self.engine.judge(game);
        let area = game.board().size().area();
        // A point of score is worth more on a small board: scale by the board's side.
        let scale = 0.35 * (area as f32).sqrt();
        let static_win = 1.0 / (1.0 + (-j.white_score / scale).exp());
        let (mut wins, mut total) = (0.0f32, 0.0f32);
        if self.playouts > 0 {
            let n = self.seed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut rng = fastrand::Rng::with_seed(n ^ game.board().position_hash() as u64);
            let mut board = game.board().clone();
            // The opponent's last stone, which the guided policy answers first.
            let last = match game.turns().last().map(|t| t.mv) {
                Some(Move::Play(l)) if !board.is_empty_at(l) => Some(l),
                _ => None,
            };
            for _ in 0..self.playouts {
                board.clone_from(game.board());
                let r = self
                    .policy
                    .play(&mut board, game.to_move(), last, &mut rng, 3 * area);
                let s = r.white_minus_black as f32 + game.white_bonus();
                wins += if s > 0.0 {
                    1.0
                } else if s < 0.0 {
                    0.0
                } else {
                    0.5
                };
                total += s;
            }
            wins /= self.playouts as f32;
            total /= self.playouts as f32;
        }
        let white_win = self.mix * static_win + (1.0 - self.mix) * wins;
        let score = self.mix * j.white_score + (1.0 - self.mix) * total;
        Ok(Arc::new(NnOutput {
            policy: j.policy,
            white_win,
            white_loss: 1.0 - white_win,
            no_result: 0.0,
            white_score_mean: score,
            white_score_mean_sq: score * score + scale * scale,
            white_lead: score,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: req.ownership.then_some(j.white_ownership),
        }))
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
