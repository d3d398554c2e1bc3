//! Search parameters, with the values KataGo's GTP and analysis engines use by default.

use std::time::Duration;

use tengen_eval::HumanProfile;
use tengen_rules::Player;

/// How the search weighs outcomes, explores and reports; see KataGo's `searchparams.h`.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchParams {
    /// Search threads, each descending the tree and waiting on one evaluation at a time.
    pub threads: usize,
    /// Seed of the per-thread random generators (noise, symmetries, tie-breaking).
    pub seed: u64,
    /// Weight of win minus loss in the utility.
    pub win_loss_utility_factor: f64,
    /// Weight of the score utility centred on 0.
    pub static_score_utility_factor: f64,
    /// Weight of the score utility centred on the root's expected score.
    pub dynamic_score_utility_factor: f64,
    /// How much the dynamic centre is pulled towards 0.
    pub dynamic_score_center_zero_weight: f64,
    /// Width of the dynamic score utility, in units of the board's side length.
    pub dynamic_score_center_scale: f64,
    /// Utility of a no-result game for White.
    pub no_result_utility_for_white: f64,
    /// What a draw is worth to White in wins.
    pub draw_equivalent_wins_for_white: f64,
    /// PUCT exploration constant.
    pub cpuct_exploration: f64,
    /// Growth of the exploration constant with the log of the parent's visits.
    pub cpuct_exploration_log: f64,
    /// Visits at which the logarithmic growth starts to matter.
    pub cpuct_exploration_base: f64,
    /// Prior utility stdev used to scale exploration by the parent's observed stdev.
    pub cpuct_utility_stdev_prior: f64,
    /// Weight of that prior, in visits.
    pub cpuct_utility_stdev_prior_weight: f64,
    /// How strongly the observed stdev scales exploration (0 disables it).
    pub cpuct_utility_stdev_scale: f64,
    /// First-play-urgency reduction below the root, times sqrt(visited policy mass).
    pub fpu_reduction_max: f64,
    /// First-play-urgency reduction at the root.
    pub root_fpu_reduction_max: f64,
    /// Blend of the FPU value towards a loss (0 = none).
    pub fpu_loss_prop: f64,
    /// Blend the parent's searched utility with its raw NN utility by (visited policy)^pow for FPU.
    pub fpu_parent_weight_by_visited_policy_pow: Option<f64>,
    /// Virtual losses each thread adds to a node it descends through.
    pub virtual_losses_per_thread: f64,
    /// Policy temperature for every node's network policy.
    pub nn_policy_temperature: f32,
    /// Blend towards the network's optimistic policy, below the root.
    pub policy_optimism: f32,
    /// Blend towards the optimistic policy at the root.
    pub root_policy_optimism: f32,
    /// Extra temperature on the root policy (self-play exploration).
    pub root_policy_temperature: f64,
    /// Mix Dirichlet noise into the root policy.
    pub root_noise: bool,
    /// Total concentration of the root Dirichlet noise, spread over the legal moves.
    pub root_dirichlet_total_concentration: f64,
    /// Weight of the Dirichlet noise in the root policy.
    pub root_dirichlet_weight: f64,
    /// Symmetries the root is evaluated in and averaged over (1 to 8).
    pub root_symmetries: usize,
    /// Use a random symmetry for each evaluation below the root (else the identity).
    pub random_symmetries: bool,
    /// Forced playouts at the root: a child gets at least sqrt(k * prior * visits) (0 = off).
    pub forced_playouts_k: f64,
    /// Random utility bonus at the root making analysis look at more moves (0 = off).
    pub wide_root_noise: f64,
    /// The wide root noise GTP's analysis commands use instead of `wide_root_noise`
    /// (KataGo's `analysisWideRootNoise`; `genmove` keeps `wide_root_noise`).
    pub analysis_wide_root_noise: f64,
    /// Search as if `playout_doubling_advantage_pla` had 2^this times the opponent's
    /// playouts (KataGo's `playoutDoublingAdvantage`, -3 to 3): the network's input for
    /// it, so a handicap game is played for more than an even game's margin.
    pub playout_doubling_advantage: f64,
    /// The player the advantage is for; `None`: the player to move at the root (the
    /// player the search is for, as KataGo defaults it).
    pub playout_doubling_advantage_pla: Option<Player>,
    /// The game a human-SL network imitates (KataGo's `humanSLProfile`); other networks
    /// ignore it, a human-SL network refuses to evaluate without it.
    pub human_profile: Option<HumanProfile>,
    /// Detect an opponent mirroring our moves and steer the search to break the mirror
    /// (KataGo's `antiMirror`; see [`crate::mirror`]): in analysis.
    pub anti_mirror: bool,
    /// Likewise in a search for a move to play (KataGo's `genmoveAntiMirror`, on by
    /// default); see [`SearchParams::for_genmove`].
    pub genmove_anti_mirror: bool,
    /// Choose the move by lower confidence bound on utility rather than by visits.
    pub use_lcb_for_selection: bool,
    /// Standard deviations below the mean for the LCB.
    pub lcb_stdevs: f64,
    /// A move needs this share of the most-visited move's visits for its LCB to count.
    pub min_visit_prop_for_lcb: f64,
    /// Temperature of the final move choice over visits (0 = the best move).
    pub chosen_move_temperature: f64,
    /// Below the root, moves with a smaller prior are not stored and never searched: PUCT
    /// would not reach them within millions of visits, and storing every legal move's
    /// prior would triple the tree's memory. 0 keeps them all.
    pub min_stored_prior: f32,
    /// Hide history when a game-ending pass would not win (KataGo's passing hacks).
    pub enable_passing_hacks: bool,
    /// Track ownership at the root and its children (costs a little per playout).
    pub ownership: bool,
    /// Share one node between move orders reaching the same position (KataGo's
    /// `useGraphSearch`): transpositions are searched once and fewer evaluations are needed.
    pub use_graph_search: bool,
    /// A move whose chain and neighbouring empty regions hold at most this many points may
    /// start a repetition, so history stays in its graph hash (`graphSearchRepBound`).
    pub graph_search_rep_bound: usize,
    /// Take weight from over-visited poor children when backing up (`useNoisePruning`).
    pub use_noise_pruning: bool,
    /// Utility gap over which noise pruning takes most of the excess (`noisePruneUtilityScale`).
    pub noise_prune_utility_scale: f64,
    /// Most weight noise pruning takes from one child (`noisePruningCap`).
    pub noise_pruning_cap: f64,
    /// Weight children by their chance of being best, to this power (`valueWeightExponent`; 0 = off).
    pub value_weight_exponent: f64,
    /// Correct each evaluation by what search found below similar positions
    /// (`subtreeValueBiasFactor`; 0 = off).
    pub subtree_value_bias_factor: f64,
    /// Share of a discarded node's bias contribution taken back (`subtreeValueBiasFreeProp`).
    pub subtree_value_bias_free_prop: f64,
    /// A node's bias contribution weighs its children's weight to this power
    /// (`subtreeValueBiasWeightExponent`).
    pub subtree_value_bias_weight_exponent: f64,
    /// Weight evaluations by the network's own error estimates, where it has them (`useUncertainty`).
    pub use_uncertainty: bool,
    /// Scale of uncertainty weighting (`uncertaintyCoeff`).
    pub uncertainty_coeff: f64,
    /// Power of the uncertainty in the weight (`uncertaintyExponent`).
    pub uncertainty_exponent: f64,
    /// Most an evaluation can weigh (`uncertaintyMaxWeight`).
    pub uncertainty_max_weight: f64,
    /// Where a pass would end the phase, make sure both a pass and another move are tried,
    /// with visits that count for neither the parent nor the limits
    /// (`enableMorePassingHacks`).
    pub enable_more_passing_hacks: bool,
    /// Points that discourage pointless moves in settled areas and, with a button, passing,
    /// at the root (`rootEndingBonusPoints`).
    pub root_ending_bonus_points: f64,
    /// Evaluations kept by the network cache are the evaluator's business; this caps tree nodes.
    pub max_nodes: usize,
}

impl Default for SearchParams {
    /// KataGo's GTP defaults where they apply (`setup.cpp`), deterministic otherwise.
    fn default() -> Self {
        SearchParams {
            threads: 1,
            seed: 0x7e46_e11d,
            win_loss_utility_factor: 1.0,
            static_score_utility_factor: 0.1,
            dynamic_score_utility_factor: 0.3,
            dynamic_score_center_zero_weight: 0.2,
            dynamic_score_center_scale: 0.75,
            no_result_utility_for_white: 0.0,
            draw_equivalent_wins_for_white: 0.5,
            cpuct_exploration: 1.0,
            cpuct_exploration_log: 0.45,
            cpuct_exploration_base: 500.0,
            cpuct_utility_stdev_prior: 0.40,
            cpuct_utility_stdev_prior_weight: 2.0,
            cpuct_utility_stdev_scale: 0.85,
            fpu_reduction_max: 0.2,
            root_fpu_reduction_max: 0.1,
            fpu_loss_prop: 0.0,
            fpu_parent_weight_by_visited_policy_pow: Some(2.0),
            // KataGo's struct says 3, but its config loading sets 1 unless the config names it;
            // 3 drives many threads onto poor moves while visits are few.
            virtual_losses_per_thread: 1.0,
            nn_policy_temperature: 1.0,
            policy_optimism: 1.0,
            root_policy_optimism: 0.2,
            root_policy_temperature: 1.0,
            root_noise: false,
            root_dirichlet_total_concentration: 10.83,
            root_dirichlet_weight: 0.25,
            root_symmetries: 1,
            random_symmetries: true,
            forced_playouts_k: 0.0,
            wide_root_noise: 0.0,
            analysis_wide_root_noise: 0.0,
            playout_doubling_advantage: 0.0,
            playout_doubling_advantage_pla: None,
            human_profile: None,
            anti_mirror: false,
            genmove_anti_mirror: true,
            use_lcb_for_selection: true,
            lcb_stdevs: 5.0,
            min_visit_prop_for_lcb: 0.15,
            chosen_move_temperature: 0.0,
            min_stored_prior: 1e-4,
            enable_passing_hacks: true,
            ownership: false,
            use_graph_search: true,
            graph_search_rep_bound: 11,
            use_noise_pruning: true,
            noise_prune_utility_scale: 0.15,
            noise_pruning_cap: 1e50,
            value_weight_exponent: 0.25,
            subtree_value_bias_factor: 0.45,
            subtree_value_bias_free_prop: 0.8,
            subtree_value_bias_weight_exponent: 0.85,
            use_uncertainty: true,
            uncertainty_coeff: 0.25,
            uncertainty_exponent: 1.0,
            uncertainty_max_weight: 8.0,
            root_ending_bonus_points: 0.5,
            enable_more_passing_hacks: true,
            max_nodes: 4_000_000,
        }
    }
}

impl SearchParams {
    /// The most utility can be worth either way (a sure win with a maximal score).
    pub fn utility_radius(&self) -> f64 {
        self.win_loss_utility_factor
            + self.static_score_utility_factor
            + self.dynamic_score_utility_factor
    }

    /// The player given the playout doubling advantage in a search whose root player is
    /// `root_player`.
    pub fn advantaged_player(&self, root_player: Player) -> Player {
        self.playout_doubling_advantage_pla.unwrap_or(root_player)
    }

    /// The network's playout doubling input for a position with `to_move` to play, when
    /// `advantaged` holds the advantage: the input is the mover's own advantage, so it
    /// changes sign on the opponent's turns (KataGo's search does the same).
    pub fn playout_doubling_input(&self, advantaged: Player, to_move: Player) -> f64 {
        if to_move == advantaged {
            self.playout_doubling_advantage
        } else {
            -self.playout_doubling_advantage
        }
    }

    /// Whether `other` would evaluate positions differently from `self`, so that a tree
    /// built under one must not be reused under the other. (Anti-mirror changes them only
    /// where a mirror is seen; the search drops its tree when that changes.)
    pub fn changes_evaluations(&self, other: &SearchParams) -> bool {
        self.playout_doubling_advantage != other.playout_doubling_advantage
            || self.playout_doubling_advantage_pla != other.playout_doubling_advantage_pla
    }

    /// These parameters as a search for a move to play uses them: with genmove's
    /// anti-mirror setting (KataGo keeps separate genmove and analysis parameters).
    pub fn for_genmove(&self) -> SearchParams {
        SearchParams {
            anti_mirror: self.genmove_anti_mirror,
            ..self.clone()
        }
    }
}

/// When a search stops.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Stop when the root has this many visits (reused ones included).
    pub visits: Option<u64>,
    /// Stop after this many playouts in this search.
    pub playouts: Option<u64>,
    /// Stop after this long.
    pub time: Option<Duration>,
    /// Never stop for being decided before this long.
    pub min_time: Option<Duration>,
    /// Stop once no other move can overtake the most visited one within the limits.
    pub stop_when_decided: bool,
}

impl Limits {
    /// A limit on root visits only.
    pub fn visits(n: u64) -> Limits {
        Limits {
            visits: Some(n),
            ..Limits::default()
        }
    }

    /// True when there is no limit at all (the search runs until stopped).
    pub fn is_unbounded(&self) -> bool {
        self.visits.is_none() && self.playouts.is_none() && self.time.is_none()
    }
}
