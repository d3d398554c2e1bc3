//! Choosing which move to descend at a node (KataGo paper §5 with KataGo's current
//! details): PUCT over the node's edges, where an edge counts its child's weight in the
//! share its own visits give it, first-play urgency for moves not yet tried, the
//! exploration constant scaled by the node's utility spread, virtual losses, and at the
//! root forced playouts, wide-root noise and the ending bonus.

use tengen_rules::Player;

use crate::mirror::{Hint, Mirror, Parent};
use crate::params::SearchParams;
use crate::tree::{gaussian, Node, Prior, Tree};
use crate::utility::UtilityFn;

/// What selection chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pick {
    /// The existing edge in this slot.
    Edge(u16),
    /// A move with no edge yet.
    New(Prior),
}

/// The facts of one run that selection needs beyond the tree.
pub struct SelectCtx<'a> {
    /// Search parameters.
    pub params: &'a SearchParams,
    /// The run's utility function (for the parents' own evaluations and the ending bonus).
    pub utility: &'a UtilityFn,
    /// The opponent's mirroring, if anti-mirror search sees one.
    pub mirror: Option<&'a Mirror>,
    /// White's score bonus per root move (policy index) for ending the game cleanly
    /// (KataGo's `rootEndingBonusPoints`); empty when there is none.
    pub root_bonus: &'a [f32],
    /// Forced playouts at the root: sqrt(k · prior · total weight) (0 = off).
    pub forced_k: f64,
}

/// Per-thread scratch space, so selection does not allocate.
#[derive(Default)]
pub struct Scratch {
    /// Whether each root move already has an edge (root scan only).
    has_edge: Vec<bool>,
}

/// A parent's exploration scale, first-play urgency and related figures.
pub(crate) struct Explore {
    /// First-play urgency (White's utility).
    pub fpu: f64,
    /// The PUCT exploration scale.
    pub scale: f64,
}

impl Tree {
    /// First-play urgency and exploration scale at `n`, given its children's visited
    /// policy mass and total weight.
    pub(crate) fn explore(
        &self,
        n: u32,
        params: &SearchParams,
        utility: &UtilityFn,
        mass: f64,
        total_weight: f64,
    ) -> Explore {
        let node = &self.nodes[n as usize];
        let s = &node.stats;
        let parent_utility = s.utility;
        // Stdev of the parent's utility, shrunk towards a prior (KataGo's cpuctUtilityStdev*).
        let prior = params.cpuct_utility_stdev_prior;
        let stdev = if s.visits == 0 || s.weight_sum <= 1.0 {
            prior
        } else {
            let u2 = parent_utility * parent_utility;
            let sq = s.utility_sq.max(u2);
            let w = params.cpuct_utility_stdev_prior_weight;
            (((u2 + prior * prior) * w + sq * s.weight_sum) / (w + s.weight_sum - 1.0) - u2)
                .max(0.0)
                .sqrt()
        };
        let stdev_factor = 1.0 + params.cpuct_utility_stdev_scale * (stdev / prior - 1.0);
        let cpuct = params.cpuct_exploration
            + params.cpuct_exploration_log
                * ((total_weight + params.cpuct_exploration_base) / params.cpuct_exploration_base)
                    .ln();
        let scale = cpuct * (total_weight + 0.01).sqrt() * stdev_factor;

        let base = match params.fpu_parent_weight_by_visited_policy_pow {
            Some(pow) => {
                let w = mass.powf(pow).min(1.0);
                w * parent_utility + (1.0 - w) * utility.of_eval(&node.eval)
            }
            None => parent_utility,
        };
        let reduction_max = if n == 0 {
            params.root_fpu_reduction_max
        } else {
            params.fpu_reduction_max
        };
        let reduction = reduction_max * mass.sqrt();
        let white = node.next_player == Player::White;
        let mut fpu = if white {
            base - reduction
        } else {
            base + reduction
        };
        let loss = if white {
            -params.utility_radius()
        } else {
            params.utility_radius()
        };
        fpu += (loss - fpu) * params.fpu_loss_prop;
        Explore { fpu, scale }
    }

    /// The visited policy mass and total child weight of `n`'s edges, and its heaviest child's weight.
    pub(crate) fn child_totals(&self, n: u32) -> (f64, f64, f64) {
        let mut mass = 0.0;
        let mut total = 0.0;
        let mut max = 0.0f64;
        for e in self.edges_of(n) {
            mass += f64::from(e.prior());
            let w = self.nodes[e.child as usize].stats.child_weight(e.visits);
            total += w;
            max = max.max(w);
        }
        (mass, total, max)
    }

    /// A child's utility as selection and move choice see it: its average, with the
    /// ending bonus at the root; `None` before its first visit.
    pub(crate) fn child_utility(
        &self,
        parent: u32,
        child: &Node,
        mv: u16,
        ctx_utility: &UtilityFn,
        root_bonus: &[f32],
    ) -> Option<f64> {
        if child.stats.visits == 0 || child.stats.weight_sum <= 0.0 {
            return None;
        }
        let mut u = child.stats.utility;
        if parent == 0 {
            if let Some(&bonus) = root_bonus.get(usize::from(mv)) {
                if bonus != 0.0 {
                    u += ctx_utility.score_utility_shift(
                        child.stats.score,
                        child.stats.score_sq,
                        f64::from(bonus),
                    );
                }
            }
        }
        Some(u)
    }

    /// The PUCT choice at `n` (reached by the move `last_move`, for anti-mirror search).
    /// `None` when the node has no move at all (every prior filtered out).
    pub fn select(
        &self,
        n: u32,
        last_move: Option<u16>,
        ctx: &SelectCtx<'_>,
        rng: &mut fastrand::Rng,
        scratch: &mut Scratch,
    ) -> Option<Pick> {
        let params = ctx.params;
        let root = n == 0;
        let (mass, total, _) = self.child_totals(n);
        let Explore { fpu, scale } = self.explore(n, params, ctx.utility, mass, total);
        let node = &self.nodes[n as usize];
        let white = node.next_player == Player::White;
        let sign = if white { 1.0 } else { -1.0 };
        let radius = params.utility_radius();
        let vl_utility = if white { -radius } else { radius };
        let wide = if root { params.wide_root_noise } else { 0.0 };
        let noisy = |p: f64, u: f64, rng: &mut fastrand::Rng| -> (f64, f64) {
            if wide <= 0.0 {
                return (p, u);
            }
            let p = p.powf(1.0 / (4.0 * wide + 1.0));
            let bonus = if rng.bool() {
                wide * gaussian(rng).abs()
            } else {
                0.0
            };
            (p, u + sign * bonus)
        };
        let hint = Hint::unpack(node.mirror);
        let mirror_at = ctx.mirror.filter(|_| hint != Hint::None).map(|m| {
            (
                m,
                Parent {
                    white,
                    utility: node.utility(),
                    total,
                    last_move,
                    center_liberties: self.center_liberties(n),
                },
            )
        });

        let mut best = f64::NEG_INFINITY;
        let mut choice = None;
        let edges = self.edges_of(n);
        for (slot, e) in edges.iter().enumerate() {
            let child = &self.nodes[e.child as usize];
            let mut w = child.stats.child_weight(e.visits);
            let mut u = self
                .child_utility(n, child, e.mv, ctx.utility, ctx.root_bonus)
                .filter(|_| w > 0.0)
                .unwrap_or(fpu);
            if child.virtual_losses > 0 {
                let vl = f64::from(child.virtual_losses) * params.virtual_losses_per_thread;
                u += (vl_utility - u) * vl / (vl + w.max(0.25));
                w += vl;
            }
            let mut p = f64::from(e.prior());
            if root {
                if ctx.forced_k > 0.0 && p > 0.0 && child.virtual_losses == 0 {
                    let forced = (ctx.forced_k * p * total).sqrt();
                    if f64::from(e.visits) < forced {
                        return Some(Pick::Edge(slot as u16));
                    }
                }
                (p, u) = noisy(p, u, rng);
            }
            if let Some((m, at)) = &mirror_at {
                u = m.adjust(hint, at, e.mv, u, w);
            }
            let v = scale * p / (1.0 + w) + sign * u;
            if v > best {
                best = v;
                choice = Some(Pick::Edge(slot as u16));
            }
        }

        if root {
            let has = &mut scratch.has_edge;
            has.clear();
            // Policy indices are below MAX_AREA + 1 (626).
            has.resize(1024, false);
            for e in edges {
                has[usize::from(e.mv)] = true;
            }
            for &p in self.priors_of(0) {
                if has[usize::from(p.mv)] {
                    continue;
                }
                let (q, mut u) = noisy(f64::from(p.p()), fpu, rng);
                if let Some((m, at)) = &mirror_at {
                    u = m.adjust(hint, at, p.mv, u, 0.0);
                }
                let v = scale * q + sign * u;
                if v > best {
                    best = v;
                    choice = Some(Pick::New(p));
                }
            }
        } else if node.edges_len < node.priors_len {
            // Below the root, edges are made in prior order: the next prior is the best
            // move not tried yet.
            let p = self.priors_of(n)[usize::from(node.edges_len)];
            let mut u = fpu;
            if let Some((m, at)) = &mirror_at {
                u = m.adjust(hint, at, p.mv, u, 0.0);
            }
            let v = scale * f64::from(p.p()) + sign * u;
            if v > best {
                choice = Some(Pick::New(p));
            }
        }
        choice
    }

    /// The root's PUCT exploration scale as selection computes it now.
    pub fn root_explore_scale(&self, params: &SearchParams, utility: &UtilityFn) -> f64 {
        let (mass, total, _) = self.child_totals(0);
        self.explore(0, params, utility, mass, total).scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Eval, State};

    fn ctx<'a>(params: &'a SearchParams, u: &'a UtilityFn) -> SelectCtx<'a> {
        SelectCtx {
            params,
            utility: u,
            mirror: None,
            root_bonus: &[],
            forced_k: 0.0,
        }
    }

    fn root_with(priors: &[(u16, f32)]) -> Tree {
        let mut t = Tree::new();
        let ps: Vec<Prior> = priors.iter().map(|&(m, p)| Prior::new(m, p)).collect();
        t.expand(0, Player::Black, Eval::default(), &ps);
        t.nodes[0].stats.visits = 1;
        t.nodes[0].stats.weight_sum = 1.0;
        t
    }

    #[test]
    fn the_first_pick_is_the_highest_prior_and_a_virtual_loss_sends_the_next_elsewhere() {
        let params = SearchParams::default();
        let u = UtilityFn::new(&params, 81, 0.0);
        let mut t = root_with(&[(0, 0.2), (1, 0.7), (2, 0.1)]);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut s = Scratch::default();
        let Some(Pick::New(p)) = t.select(0, None, &ctx(&params, &u), &mut rng, &mut s) else {
            panic!("expected a new move");
        };
        assert_eq!(p.mv, 1);
        let (c, _) = t.node_for(Some(5), Player::White);
        t.add_edge(0, p.mv, p.p(), c);
        t.nodes[c as usize].virtual_losses = 1;
        t.nodes[c as usize].state = State::InFlight;
        let next = t.select(0, None, &ctx(&params, &u), &mut rng, &mut s);
        assert!(matches!(next, Some(Pick::New(q)) if q.mv != 1), "{next:?}");
    }

    #[test]
    fn an_edge_counts_only_its_share_of_a_shared_child() {
        // One child with 100 visits reached through an edge with 1: selection must see a
        // weight of about 1, not 100, so the edge still looks unexplored.
        let params = SearchParams::default();
        let u = UtilityFn::new(&params, 81, 0.0);
        let mut t = root_with(&[(0, 0.5), (1, 0.5)]);
        let (a, _) = t.node_for(Some(5), Player::White);
        let (b, _) = t.node_for(Some(6), Player::White);
        t.add_edge(0, 0, 0.5, a);
        t.add_edge(0, 1, 0.5, b);
        for (n, visits, edge) in [(a, 100u32, 1u32), (b, 10, 10)] {
            let s = &mut t.nodes[n as usize].stats;
            s.visits = visits;
            s.weight_sum = f64::from(visits);
            s.utility = 0.0;
            let slot = if n == a { 0 } else { 1 };
            t.edge_mut(0, slot).visits = edge;
        }
        let (_, total, max) = t.child_totals(0);
        assert!((total - 11.0).abs() < 1e-9 && (max - 10.0).abs() < 1e-9);
        let mut rng = fastrand::Rng::with_seed(1);
        let mut s = Scratch::default();
        assert_eq!(
            t.select(0, None, &ctx(&params, &u), &mut rng, &mut s),
            Some(Pick::Edge(0))
        );
    }
}
