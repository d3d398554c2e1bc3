//! Options of an evaluation that change the network's inputs.

use crate::profile::HumanProfile;

/// Options of an evaluation that change the inputs (KataGo's `MiscNNInputParams`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputParams {
    /// What a draw is worth to White, 0 to 1; moves the komi input when draws are possible.
    pub draw_equivalent_wins_for_white: f64,
    /// At the root, search as if a game-ending pass did not end the game (hides history).
    pub conservative_pass_and_is_root: bool,
    /// Hide history when a game-ending pass would not win, so the net does not pass early.
    pub enable_passing_hacks: bool,
    /// Playout doubling advantage of the player to move (for handicap play).
    pub playout_doubling_advantage: f64,
    /// At most this many turns of history are shown.
    pub max_history: usize,
    /// Compute pass-alive area as if multi-stone suicide were legal (`Some(true)`) or as the
    /// rules say (`Some(false)`), instead of following the game's option.
    pub pass_alive_suicide_override: Option<bool>,
    /// The game a human-SL net imitates (its `InputMeta`); other nets ignore it.
    pub human_profile: Option<HumanProfile>,
}

impl Default for InputParams {
    /// KataGo's defaults, the parameters of `kata-raw-nn`.
    fn default() -> Self {
        InputParams {
            draw_equivalent_wins_for_white: 0.5,
            conservative_pass_and_is_root: false,
            enable_passing_hacks: false,
            playout_doubling_advantage: 0.0,
            max_history: 1000,
            pass_alive_suicide_override: None,
            human_profile: None,
        }
    }
}
