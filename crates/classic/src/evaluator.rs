//! The classical engine as the search's evaluator (`tengen-eval`'s contract), for
//! running without a network.

use std::sync::Arc;

use tengen_eval::{EvalError, EvalRequest, Evaluator, NnOutput};
use tengen_rules::playout::{add_white_ownership, PlayoutPolicy};
use tengen_rules::{Game, Move};

use crate::Classic;

/// The classical engine as the search's evaluator: its quick judgement's policy, and a
/// win probability from its score estimate, blended with playouts' results
/// (as AlphaGo mixed its value network with rollouts): the static estimate knows
/// shape and reading, the playouts see fights to their end.
pub struct ClassicEvaluator {
    engine: Classic,
    playouts: u32,
    /// Weight of the static estimate; the playouts get the rest.
    mix: f32,
    policy: PlayoutPolicy,
    seed: std::sync::atomic::AtomicU64,
}

impl ClassicEvaluator {
    /// Wraps a classical engine, adding `playouts` guided playouts per evaluation whose
    /// results weigh `1 - mix` against the static estimate's `mix`.
    pub fn with_playouts(engine: Classic, playouts: u32, mix: f32) -> Self {
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

/// What a batch of playouts from one position found, from White's view.
struct PlayoutStats {
    /// Share of playouts White won (a draw counts half).
    white_win: f32,
    /// Mean final score, komi included.
    score: f32,
    /// Mean squared final score.
    score_sq: f32,
}

impl ClassicEvaluator {
    /// Plays `self.playouts` playouts from `game`'s position; adds each one's final
    /// owners to `owned` when given (summed, not averaged).
    fn run_playouts(&self, game: &Game, mut owned: Option<&mut [f32]>) -> PlayoutStats {
        let area = game.board().size().area();
        let n = self.seed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut rng = fastrand::Rng::with_seed(n ^ game.board().position_hash() as u64);
        let mut board = game.board().clone();
        // The opponent's last stone, which the guided policy answers first.
        let last = match game.turns().last().map(|t| t.mv) {
            Some(Move::Play(l)) if !board.is_empty_at(l) => Some(l),
            _ => None,
        };
        let (mut wins, mut total, mut total_sq) = (0.0f32, 0.0f32, 0.0f32);
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
            total_sq += s * s;
            if let Some(o) = owned.as_deref_mut() {
                add_white_ownership(&board, o);
            }
        }
        let k = self.playouts.max(1) as f32;
        PlayoutStats {
            white_win: wins / k,
            score: total / k,
            score_sq: total_sq / k,
        }
    }

    /// Without a static estimate in the blend there is no need for the analysis: the
    /// prior alone gives the policy, and the playouts the value, score and ownership.
    fn evaluate_by_playouts(&self, game: &Game, req: &EvalRequest) -> Arc<NnOutput> {
        let mut policy = self.engine.prior_policy(game);
        sharpen(&mut policy, req.policy.temperature);
        let area = game.board().size().area();
        let scale = 0.35 * (area as f32).sqrt();
        let mut owned = req.ownership.then(|| vec![0.0f32; area]);
        let p = self.run_playouts(game, owned.as_deref_mut());
        if let Some(o) = owned.as_mut() {
            let k = self.playouts.max(1) as f32;
            o.iter_mut().for_each(|x| *x /= k);
        }
        Arc::new(NnOutput {
            policy,
            white_win: p.white_win,
            white_loss: 1.0 - p.white_win,
            no_result: 0.0,
            white_score_mean: p.score,
            // The playouts' spread, never below the static estimate's assumed one.
            white_score_mean_sq: p.score_sq.max(p.score * p.score + scale * scale),
            white_lead: p.score,
            var_time_left: -1.0,
            shortterm_winloss_error: -1.0,
            shortterm_score_error: -1.0,
            white_ownership: owned,
        })
    }
}

impl Evaluator for ClassicEvaluator {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        if self.mix == 0.0 && self.playouts > 0 {
            return Ok(self.evaluate_by_playouts(game, req));
        }
        let mut j = self.engine.judge(game);
        sharpen(&mut j.policy, req.policy.temperature);
        let area = game.board().size().area();
        // A point of score is worth more on a small board: scale by the board's side.
        let scale = 0.35 * (area as f32).sqrt();
        let static_win = 1.0 / (1.0 + (-j.white_score / scale).exp());
        let (wins, total) = if self.playouts > 0 {
            let p = self.run_playouts(game, None);
            (p.white_win, p.score)
        } else {
            (0.0, 0.0)
        };
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

/// Applies a policy temperature to probabilities (entries below zero are illegal moves):
/// `p^(1/t)`, renormalised, as dividing logits by `t` does.
fn sharpen(policy: &mut [f32], temperature: f32) {
    if temperature == 1.0 || temperature.is_nan() || temperature <= 0.0 {
        return;
    }
    let inv = 1.0 / temperature;
    let mut total = 0.0;
    for p in policy.iter_mut().filter(|p| **p >= 0.0) {
        *p = p.powf(inv);
        total += *p;
    }
    if total > 0.0 {
        for p in policy.iter_mut().filter(|p| **p >= 0.0) {
            *p /= total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_eval::{InputParams, PolicyOptions, Symmetry};
    use tengen_rules::{Board, BoardSize, GameOptions, Player, Rules};

    fn request(ownership: bool) -> EvalRequest {
        EvalRequest {
            symmetry: Symmetry::IDENTITY,
            policy: PolicyOptions::default(),
            inputs: InputParams::default(),
            ownership,
        }
    }

    #[test]
    fn without_a_static_weight_the_playouts_judge_alone() {
        // Two walls: Black has the three columns on the left, White the four on the right
        // (9 points more, and komi).
        let rows = ["...XO...."; 9];
        let board = Board::from_rows(BoardSize::square(9).unwrap(), &rows).unwrap();
        let mut rules = Rules::chinese();
        rules.komi = 7.0;
        let game = Game::from_position(board, Player::Black, rules, GameOptions::default());
        let e = ClassicEvaluator::with_playouts(Classic::new(10, 1), 128, 0.0);
        let out = e.evaluate(&game, &request(true)).unwrap();
        let legal: f32 = out.policy.iter().filter(|&&p| p >= 0.0).sum();
        assert!((legal - 1.0).abs() < 1e-3, "{legal}");
        assert_eq!(out.policy[3], -1.0, "an occupied point is illegal");
        // Playouts in such open areas let Black invade now and then (and such games are
        // lost by a lot); most of them still end as White's.
        assert!(out.white_win > 0.6, "{}", out.white_win);
        assert!(out.white_lead > 0.0, "{}", out.white_lead);
        let own = out
            .white_ownership
            .as_ref()
            .expect("ownership was asked for");
        assert_eq!(own.len(), 81);
        assert!(own.iter().all(|o| (-1.0..=1.0).contains(o)));
        // White's wall and far corner are White's; Black's corner is Black's.
        assert!(own[4] > 0.7, "{}", own[4]);
        assert!(own[80] > 0.4, "{}", own[80]);
        assert!(own[0] < -0.6, "{}", own[0]);
        let without = e.evaluate(&game, &request(false)).unwrap();
        assert!(without.white_ownership.is_none());
    }

    #[test]
    fn a_policy_temperature_flattens_or_sharpens_legal_moves_only() {
        let mut p = vec![0.64, 0.16, -1.0, 0.2];
        sharpen(&mut p, 2.0);
        assert_eq!(p[2], -1.0);
        // p^(1/2): 0.8, 0.4, 0.447..., then normalised; the ratio of the first two halves.
        assert!((p[0] / p[1] - 2.0).abs() < 1e-5, "{p:?}");
        assert!((p[0] + p[1] + p[3] - 1.0).abs() < 1e-5);
        let mut q = vec![0.6, 0.4];
        sharpen(&mut q, 0.5);
        assert!((q[0] / q[1] - 2.25).abs() < 1e-4, "{q:?}");
        let mut same = vec![0.3, 0.7];
        sharpen(&mut same, 1.0);
        assert_eq!(same, vec![0.3, 0.7]);
    }
}
