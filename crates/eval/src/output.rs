//! What an evaluator answers, and how its policy is decoded.

use tengen_rules::{BoardSize, Move};

/// How to turn policy logits into probabilities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolicyOptions {
    /// Divides the logits; 1 is the network's own policy.
    pub temperature: f32,
    /// Blend towards the optimism channel: `logit + (optimistic - logit) * optimism` (0 = plain policy).
    pub optimism: f32,
    /// Caps the pass probability at 19 times the rest together (KataGo's passing hack).
    pub passing_hacks: bool,
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            temperature: 1.0,
            optimism: 0.0,
            passing_hacks: false,
        }
    }
}

/// A network's judgement of a position, from White's point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct NnOutput {
    /// Move probabilities, row-major over the board, then pass; `-1` marks an illegal move.
    pub policy: Vec<f32>,
    /// Probability that White wins.
    pub white_win: f32,
    /// Probability that White loses.
    pub white_loss: f32,
    /// Probability of no result (only possible under simple ko or territory scoring).
    pub no_result: f32,
    /// Expected final score, White minus Black.
    pub white_score_mean: f32,
    /// Expected square of the final score.
    pub white_score_mean_sq: f32,
    /// Expected points White is ahead (what komi would make the game even).
    pub white_lead: f32,
    /// Expected remaining game length measure; -1 for models before version 9.
    pub var_time_left: f32,
    /// Expected short-term error of the win/loss value; -1 before version 9.
    pub shortterm_winloss_error: f32,
    /// Expected short-term error of the score; -1 before version 9.
    pub shortterm_score_error: f32,
    /// Ownership in [-1, 1] per point, row-major, +1 = White owns.
    pub white_ownership: Option<Vec<f32>>,
}

impl NnOutput {
    /// Probability of a move on a board of this size, or `None` if it is illegal.
    pub fn policy_of(&self, size: BoardSize, mv: Move) -> Option<f32> {
        self.policy
            .get(crate::policy_index(size, mv))
            .copied()
            .filter(|&p| p >= 0.0)
    }
}
