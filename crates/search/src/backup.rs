//! Backing values up the graph as KataGo does. A leaf's first value is its own evaluation;
//! every node above it is then recomputed from its children's averages, each weighted by
//! the visits of the edge to it (so a shared child counts for each parent in its share),
//! less what noise pruning and value weighting take from children the search has
//! over-visited or found poor, plus the node's own evaluation corrected by its subtree
//! value-bias entry.

use tengen_rules::Player;

use crate::params::SearchParams;
use crate::tree::{Eval, Stats, Tree, NONE};
use crate::utility::UtilityFn;

/// What backing up needs beyond the tree.
pub struct BackupCtx<'a> {
    /// Search parameters.
    pub params: &'a SearchParams,
    /// The run's utility function.
    pub utility: &'a UtilityFn,
    /// Anti-mirror search sees a mirror: KataGo then keeps children's plain weights
    /// (its adjusted utilities would mislead the pruning).
    pub mirroring: bool,
}

/// A step of a descent: a node and the slot of the edge taken from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The node.
    pub node: u32,
    /// The slot of the edge taken.
    pub slot: u16,
    /// A visit that must not count for this node or above it (KataGo's weightless
    /// visits, see `Tree::passing_hack`): the edge gains nothing and the backup stops
    /// below it.
    pub weightless: bool,
}

impl Step {
    /// An ordinary step.
    pub fn new(node: u32, slot: u16) -> Step {
        Step {
            node,
            slot,
            weightless: false,
        }
    }
}

/// One child's figures while its parent is recomputed.
#[derive(Clone, Copy, Debug)]
struct Kid {
    stats: Stats,
    /// Its utility from the parent's mover's point of view.
    self_utility: f64,
    /// The weight it gets in the parent.
    weight: f64,
    /// The parent's prior for the move.
    prior: f64,
}

/// Reused buffers, so backing up does not allocate.
#[derive(Default)]
pub struct BackupScratch {
    kids: Vec<Kid>,
}

/// Student's t distribution's CDF with 3 degrees of freedom (KataGo's value weighting):
/// heavy tails, so one poor child is down-weighted smoothly rather than cut.
fn t3_cdf(t: f64) -> f64 {
    let x = t / 3f64.sqrt();
    0.5 + (x / (1.0 + x * x) + x.atan()) / std::f64::consts::PI
}

/// Takes weight from children visited beyond what their policy share and value justify
/// (KataGo's noise pruning): in prior order, a child whose utility is below the average of
/// the children before it and whose weight exceeds twice its policy share of theirs loses
/// part of the excess, more the worse it is. Returns the new total weight.
fn prune_noise(kids: &mut [Kid], total: f64, params: &SearchParams) -> f64 {
    if kids.len() <= 1 || total <= 1e-5 {
        return total;
    }
    let mut utility_sum = 0.0;
    let mut weight_sum = 0.0;
    let mut policy_sum = 0.0;
    for k in kids.iter_mut() {
        if weight_sum > 0.0 && policy_sum > 0.0 {
            let gap = utility_sum / weight_sum - k.self_utility;
            if gap > 0.0 {
                let lenient_share = 2.0 * weight_sum * k.prior / policy_sum;
                if k.weight > lenient_share {
                    let excess = k.weight - lenient_share;
                    let cut = (excess * (1.0 - (-gap / params.noise_prune_utility_scale).exp()))
                        .min(params.noise_pruning_cap);
                    k.weight -= cut;
                }
            }
        }
        utility_sum += k.self_utility * k.weight;
        weight_sum += k.weight;
        policy_sum += k.prior;
    }
    weight_sum
}

/// Weights children by how likely each is to be the best (KataGo's value weighting): a
/// child's weight is multiplied by P(its utility beats the children's mean)^exponent,
/// its uncertainty shrinking with its weight; then all are scaled back to `total`.
fn weight_by_value(kids: &mut [Kid], total: f64, exponent: f64) {
    if kids.is_empty() || total <= 0.0 {
        return;
    }
    if exponent > 0.0 {
        let simple = kids.iter().map(|k| k.self_utility * k.weight).sum::<f64>() / total;
        let mut unnormed = 0.0;
        for k in kids.iter_mut() {
            let precision = 1.5 * k.weight.sqrt();
            let stdev = (1e-8 + 1.0 / precision.max(1e-300)).sqrt();
            let p = t3_cdf((k.self_utility - simple) / stdev) + 1e-4;
            k.weight *= p.powf(exponent);
            unnormed += k.weight;
        }
        if unnormed <= 0.0 {
            return;
        }
        let factor = total / unnormed;
        kids.iter_mut().for_each(|k| k.weight *= factor);
    }
}

/// Weighted sums of the values a node averages.
#[derive(Default)]
struct Sums {
    winloss: f64,
    no_result: f64,
    score: f64,
    score_sq: f64,
    lead: f64,
    utility: f64,
    utility_sq: f64,
    weight: f64,
    weight_sq: f64,
}

impl Tree {
    /// The utility of `n`'s own evaluation with its subtree value-bias correction.
    fn corrected_utility(&self, n: u32, ctx: &BackupCtx<'_>) -> f64 {
        let node = &self.nodes[n as usize];
        let mut u = ctx.utility.of_eval(&node.eval);
        let f = ctx.params.subtree_value_bias_factor;
        if f != 0.0 && node.bias != NONE {
            let e = self.bias(node.bias);
            if e.weight_sum > 0.001 {
                u += f * e.delta_sum / e.weight_sum;
            }
        }
        u
    }

    /// Gives a just-evaluated node its first value, or adds one more visit of a finished
    /// game's fixed value (`terminal`); `eval` is the node's own.
    pub fn add_leaf_value(&mut self, n: u32, terminal: bool, ctx: &BackupCtx<'_>) {
        let u = if terminal {
            ctx.utility.of_eval(&self.nodes[n as usize].eval)
        } else {
            self.corrected_utility(n, ctx)
        };
        let node = &mut self.nodes[n as usize];
        let e = node.eval;
        let w = f64::from(e.weight);
        let s = &mut node.stats;
        let old = s.weight_sum;
        let new = old + w;
        let blend = |avg: f64, v: f64| (avg * old + v * w) / new;
        s.winloss = blend(s.winloss, f64::from(e.winloss));
        s.no_result = blend(s.no_result, f64::from(e.no_result));
        s.score = blend(s.score, f64::from(e.score));
        s.score_sq = blend(s.score_sq, f64::from(e.score_sq));
        s.lead = blend(s.lead, f64::from(e.lead));
        s.utility = blend(s.utility, u);
        s.utility_sq = blend(s.utility_sq, u * u);
        s.weight_sum = new;
        s.weight_sq_sum += w * w;
        s.visits += 1;
    }

    /// Recomputes `n`'s averages from its children and its own evaluation, adding
    /// `visits_to_add` to its visits.
    pub fn recompute(
        &mut self,
        n: u32,
        visits_to_add: u32,
        ctx: &BackupCtx<'_>,
        scratch: &mut BackupScratch,
    ) {
        let params = ctx.params;
        let kids = &mut scratch.kids;
        kids.clear();
        let sign = if self.nodes[n as usize].next_player == Player::White {
            1.0
        } else {
            -1.0
        };
        let mut orig_total = 0.0;
        for e in self.edges_of(n) {
            let c = self.nodes[e.child as usize].stats;
            if c.visits == 0 || c.weight_sum <= 0.0 || e.visits == 0 {
                continue;
            }
            let weight = c.child_weight(e.visits);
            orig_total += weight;
            kids.push(Kid {
                stats: c,
                self_utility: sign * c.utility,
                weight,
                prior: f64::from(e.prior()).max(1e-30),
            });
        }
        let mut total = orig_total;
        if !ctx.mirroring {
            if params.use_noise_pruning {
                total = prune_noise(kids, total, params);
            }
            weight_by_value(kids, total, params.value_weight_exponent);
        }
        let mut sums = Sums {
            weight: total,
            ..Sums::default()
        };
        for k in kids.iter() {
            let w = k.weight;
            let s = &k.stats;
            sums.winloss += w * s.winloss;
            sums.no_result += w * s.no_result;
            sums.score += w * s.score;
            sums.score_sq += w * s.score_sq;
            sums.lead += w * s.lead;
            sums.utility += w * s.utility;
            sums.utility_sq += w * s.utility_sq;
            let scaling = w / s.weight_sum;
            sums.weight_sq += scaling * scaling * s.weight_sq_sum;
        }

        // The node's own evaluation, after updating what it teaches its bias entry: the
        // gap between what its children found and what the network said.
        let bias = self.nodes[n as usize].bias;
        if params.subtree_value_bias_factor != 0.0 && bias != NONE && total > 1e-10 {
            let own = ctx.utility.of_eval(&self.nodes[n as usize].eval);
            let weight = orig_total.powf(params.subtree_value_bias_weight_exponent);
            let delta = (sums.utility / total - own) * weight;
            let (last_delta, last_weight) = {
                let node = &mut self.nodes[n as usize];
                let last = (node.bias_delta, node.bias_weight);
                node.bias_delta = delta;
                node.bias_weight = weight;
                last
            };
            let entry = self.bias_mut(bias);
            entry.delta_sum += delta - last_delta;
            entry.weight_sum += weight - last_weight;
        }
        let u = self.corrected_utility(n, ctx);
        let node = &mut self.nodes[n as usize];
        let e = node.eval;
        let w = f64::from(e.weight);
        sums.winloss += w * f64::from(e.winloss);
        sums.no_result += w * f64::from(e.no_result);
        sums.score += w * f64::from(e.score);
        sums.score_sq += w * f64::from(e.score_sq);
        sums.lead += w * f64::from(e.lead);
        sums.utility += w * u;
        sums.utility_sq += w * u * u;
        sums.weight += w;
        sums.weight_sq += w * w;

        let s = &mut node.stats;
        let total = sums.weight.max(1e-300);
        s.winloss = sums.winloss / total;
        s.no_result = sums.no_result / total;
        s.score = sums.score / total;
        s.score_sq = sums.score_sq / total;
        s.lead = sums.lead / total;
        s.utility = sums.utility / total;
        s.utility_sq = sums.utility_sq / total;
        s.weight_sum = sums.weight;
        s.weight_sq_sum = sums.weight_sq;
        s.visits += visits_to_add;
    }

    /// Backs a finished playout up `path` (root first, each step's edge leading to the next
    /// step's node or to the leaf): each edge gains a visit and each node is recomputed,
    /// bottom up, as far as the first weightless step; the virtual losses the descent
    /// added go.
    pub fn backup(&mut self, path: &[Step], ctx: &BackupCtx<'_>, scratch: &mut BackupScratch) {
        for step in path.iter().rev() {
            if step.weightless {
                break;
            }
            self.edge_mut(step.node, step.slot).visits += 1;
            self.recompute(step.node, 1, ctx, scratch);
        }
        self.remove_virtual_losses(path);
    }

    /// Takes back the virtual losses of a descent along `path`.
    pub fn remove_virtual_losses(&mut self, path: &[Step]) {
        for step in path {
            let c = self.edge(step.node, step.slot).child;
            let node = &mut self.nodes[c as usize];
            node.virtual_losses = node.virtual_losses.saturating_sub(1);
        }
    }

    /// Recomputes every node reachable from the root, children first: after tree reuse, so
    /// that the new search's utility (its score centre) holds throughout.
    pub fn recompute_all(&mut self, ctx: &BackupCtx<'_>, scratch: &mut BackupScratch) {
        for n in self.post_order() {
            match self.nodes[n as usize].state {
                crate::tree::State::Expanded => self.recompute(n, 0, ctx, scratch),
                crate::tree::State::Terminal => {
                    // A finished game's value is fixed: only its utility changes.
                    let u = ctx.utility.of_eval(&self.nodes[n as usize].eval);
                    let s = &mut self.nodes[n as usize].stats;
                    s.utility = u;
                    s.utility_sq = u * u;
                }
                _ => {}
            }
        }
    }
}

/// The weight of an evaluation (KataGo's uncertainty weighting): 1 unless `params` asks for
/// uncertainty weighting and the network estimates its own short-term errors; then the
/// less sure the network, the less the evaluation counts, up to `uncertainty_max_weight`.
pub fn eval_weight(
    params: &SearchParams,
    utility: &UtilityFn,
    score: f64,
    winloss_error: f64,
    score_error: f64,
) -> f64 {
    if !params.use_uncertainty || winloss_error < 0.0 || score_error < 0.0 {
        return 1.0;
    }
    let uncertainty = params.win_loss_utility_factor * winloss_error
        + utility.score_utility_slope(score) * score_error;
    let powered = if params.uncertainty_exponent == 1.0 {
        uncertainty
    } else {
        uncertainty.max(0.0).powf(params.uncertainty_exponent)
    };
    let baseline = params.uncertainty_coeff / params.uncertainty_max_weight;
    params.uncertainty_coeff / (powered + baseline)
}

/// The weight of a finished game's value: the most an evaluation can weigh when
/// uncertainty weighting is on (a result is certain), else 1.
pub fn terminal_weight(params: &SearchParams, network_has_errors: bool) -> f64 {
    if params.use_uncertainty && network_has_errors {
        params.uncertainty_max_weight
    } else {
        1.0
    }
}

/// An evaluation as a node keeps it.
pub fn eval_of(
    winloss: f64,
    no_result: f64,
    score: f64,
    score_sq: f64,
    lead: f64,
    weight: f64,
) -> Eval {
    Eval {
        winloss: winloss as f32,
        no_result: no_result as f32,
        score: score as f32,
        score_sq: score_sq as f32,
        lead: lead as f32,
        weight: weight as f32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Prior, State};

    /// Parameters with every refinement off and utility from win/loss alone, so that
    /// averages are easy to check by hand.
    fn plain() -> SearchParams {
        SearchParams {
            use_noise_pruning: false,
            value_weight_exponent: 0.0,
            subtree_value_bias_factor: 0.0,
            static_score_utility_factor: 0.0,
            dynamic_score_utility_factor: 0.0,
            ..SearchParams::default()
        }
    }

    fn ctx<'a>(p: &'a SearchParams, u: &'a UtilityFn) -> BackupCtx<'a> {
        BackupCtx {
            params: p,
            utility: u,
            mirroring: false,
        }
    }

    #[test]
    fn the_t_cdf_is_a_distribution() {
        assert!((t3_cdf(0.0) - 0.5).abs() < 1e-12);
        assert!(t3_cdf(-50.0) < 1e-3 && t3_cdf(50.0) > 0.999);
        // Known value: P(T3 <= 1) = 0.8045.
        assert!((t3_cdf(1.0) - 0.8045).abs() < 1e-3);
    }

    #[test]
    fn noise_pruning_cuts_only_an_overvisited_poor_child() {
        let p = SearchParams::default();
        let kid = |u: f64, w: f64, prior: f64| Kid {
            stats: Stats::default(),
            self_utility: u,
            weight: w,
            prior,
        };
        // A good first child, then one with far more than its share and a worse value.
        let mut kids = vec![kid(0.2, 10.0, 0.5), kid(-0.3, 20.0, 0.1)];
        let total = prune_noise(&mut kids, 30.0, &p);
        assert!(kids[1].weight < 20.0 && kids[1].weight >= 2.0 * 10.0 * 0.1 / 0.5);
        assert!((total - (10.0 + kids[1].weight)).abs() < 1e-9);
        // The same child with a better value keeps its weight.
        let mut kids = vec![kid(0.2, 10.0, 0.5), kid(0.3, 20.0, 0.1)];
        assert_eq!(prune_noise(&mut kids, 30.0, &p), 30.0);
    }

    fn leaf(t: &mut Tree, parent: u32, mv: u16, winloss: f32, ctx: &BackupCtx<'_>) -> u32 {
        let (c, _) = t.node_for(None, Player::White);
        t.add_edge(parent, mv, 0.5, c);
        let e = Eval {
            winloss,
            weight: 1.0,
            ..Eval::default()
        };
        t.expand(c, Player::White, e, &[Prior::new(0, 1.0)]);
        t.add_leaf_value(c, false, ctx);
        c
    }

    #[test]
    fn a_parent_averages_its_children_by_edge_visits_and_its_own_evaluation() {
        let p = plain();
        let u = UtilityFn::new(&p, 81, 0.0);
        let c = ctx(&p, &u);
        let mut t = Tree::new();
        t.expand(
            0,
            Player::Black,
            Eval {
                weight: 1.0,
                ..Eval::default()
            },
            &[],
        );
        t.add_leaf_value(0, false, &c);
        let a = leaf(&mut t, 0, 0, 0.6, &c);
        let b = leaf(&mut t, 0, 1, -0.3, &c);
        let mut s = BackupScratch::default();
        t.backup(&[Step::new(0, 0)], &c, &mut s);
        t.backup(&[Step::new(0, 1)], &c, &mut s);
        // A shared child: b also reached by a second visit through its own edge.
        t.nodes[b as usize].stats.visits = 3;
        t.nodes[b as usize].stats.weight_sum = 3.0;
        let root = t.root().stats;
        assert_eq!(root.visits, 3);
        // Evaluations are single precision.
        assert!((root.winloss - (0.0 + 0.6 - 0.3) / 3.0).abs() < 1e-6);
        t.recompute(0, 0, &c, &mut s);
        // b's weight seen from the root is still its one edge visit.
        assert!((t.root().stats.weight_sum - 3.0).abs() < 1e-9);
        assert_eq!(t.nodes[a as usize].state, State::Expanded);
    }

    #[test]
    fn value_weighting_moves_the_average_towards_the_better_child() {
        let mut p = plain();
        let u = UtilityFn::new(&p, 81, 0.0);
        let mut t = Tree::new();
        let c = ctx(&p, &u);
        t.expand(
            0,
            Player::White,
            Eval {
                weight: 1.0,
                ..Eval::default()
            },
            &[],
        );
        t.add_leaf_value(0, false, &c);
        leaf(&mut t, 0, 0, 0.8, &c);
        leaf(&mut t, 0, 1, -0.8, &c);
        let mut s = BackupScratch::default();
        for slot in [0, 1] {
            for _ in 0..20 {
                t.edge_mut(0, slot).visits += 1;
            }
        }
        for n in [1u32, 2] {
            let st = &mut t.nodes[n as usize].stats;
            st.visits = 20;
            st.weight_sum = 20.0;
            st.weight_sq_sum = 20.0;
        }
        p.value_weight_exponent = 0.0;
        let plain = {
            let c = ctx(&p, &u);
            t.recompute(0, 0, &c, &mut s);
            t.root().stats.winloss
        };
        p.value_weight_exponent = 0.25;
        let c = ctx(&p, &u);
        t.recompute(0, 0, &c, &mut s);
        // White to move prefers +0.8: the weighted average leans towards it.
        assert!(
            t.root().stats.winloss > plain + 0.05,
            "{} vs {plain}",
            t.root().stats.winloss
        );
    }

    #[test]
    fn the_bias_entry_learns_the_gap_between_children_and_the_network() {
        let p = SearchParams {
            subtree_value_bias_factor: 0.45,
            ..plain()
        };
        let u = UtilityFn::new(&p, 81, 0.0);
        let c = ctx(&p, &u);
        let mut t = Tree::new();
        t.expand(
            0,
            Player::Black,
            Eval {
                weight: 1.0,
                ..Eval::default()
            },
            &[],
        );
        t.add_leaf_value(0, false, &c);
        let n = leaf(&mut t, 0, 0, 0.0, &c);
        let entry = t.bias_entry(42);
        t.nodes[n as usize].bias = entry;
        leaf(&mut t, n, 0, 0.5, &c);
        let mut s = BackupScratch::default();
        t.backup(&[Step::new(0, 0), Step::new(n, 0)], &c, &mut s);
        let e = *t.bias(entry);
        assert!((e.delta_sum / e.weight_sum - 0.5).abs() < 1e-9);
        // A new node sharing the entry starts from the corrected value.
        let m = leaf(&mut t, 0, 1, 0.0, &c);
        t.nodes[m as usize].bias = entry;
        t.nodes[m as usize].stats = Stats::default();
        t.add_leaf_value(m, false, &c);
        assert!((t.nodes[m as usize].stats.utility - 0.45 * 0.5).abs() < 1e-9);
    }
}
