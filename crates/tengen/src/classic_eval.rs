//! The flags that set up the classical engine as the search's evaluator
//! (`tengen_classic::ClassicEvaluator`), for running without a network.

use clap::Args;
use tengen_classic::{Classic, ClassicEvaluator};
use tengen_rules::playout::PlayoutPolicy;

/// How the classical engine judges positions for the search (without a network).
#[derive(Args, Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClassicArgs {
    /// Strength of the classical engine, 1 (beginner) to 10 (full).
    #[arg(long, default_value_t = ClassicArgs::default().level,
          value_parser = clap::value_parser!(u8).range(1..=10))]
    pub level: u8,
    /// Playouts per evaluation, blended with the classical estimate (0: none).
    #[arg(long, default_value_t = ClassicArgs::default().playouts)]
    pub playouts: u32,
    /// Weight of the classical estimate against the playouts' results (0 to 1). At 0
    /// the analysis is skipped: the learned move prior is the policy, the playouts give
    /// value, score and ownership (about twice the evaluations a second).
    #[arg(long, default_value_t = ClassicArgs::default().playout_mix)]
    pub playout_mix: f32,
    /// How playouts choose moves: `guided` (answer the last move locally first:
    /// captures, escapes, shape) or `random`.
    #[arg(long, value_enum, default_value_t = ClassicArgs::default().playout_policy)]
    pub playout_policy: PlayoutChoice,
}

/// The playout policies offered on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlayoutChoice {
    /// Local answers to the last move first, then random moves.
    Guided,
    /// Uniformly random moves.
    Random,
}

impl From<PlayoutChoice> for PlayoutPolicy {
    fn from(c: PlayoutChoice) -> PlayoutPolicy {
        match c {
            PlayoutChoice::Guided => PlayoutPolicy::Guided,
            PlayoutChoice::Random => PlayoutPolicy::Random,
        }
    }
}

impl Default for ClassicArgs {
    /// Eight guided playouts and no static estimate, which agreed with b6c96 on the
    /// winner of 9x9 positions far less often than eight playouts did.
    fn default() -> Self {
        ClassicArgs {
            level: 10,
            playouts: 8,
            playout_mix: 0.0,
            playout_policy: PlayoutChoice::Guided,
        }
    }
}

impl ClassicArgs {
    /// The evaluator these flags describe, over a classical engine at their level (with a
    /// fixed seed, so that a search can be reproduced).
    pub fn evaluator(&self) -> ClassicEvaluator {
        let engine = Classic::new(self.level, 0x7e46_e115);
        ClassicEvaluator::with_playouts(engine, self.playouts, self.playout_mix)
            .with_policy(self.playout_policy.into())
    }
}
