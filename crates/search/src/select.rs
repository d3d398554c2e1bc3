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
        } else if let Some(p) = self.next_untried(n) {
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

    /// Below the root, the best move without an edge. Edges are made in prior order, so
    /// it is the prior after the last edge's, except that a pass forced out of order by
    /// [`Tree::passing_hack`] may stand among them: then it is one earlier.
    fn next_untried(&self, n: u32) -> Option<Prior> {
        let priors = self.priors_of(n);
        let len = usize::from(self.nodes[n as usize].edges_len);
        if let Some(k) = len.checked_sub(1) {
            if let Some(p) = priors.get(k) {
                if self.edges_of(n).iter().all(|e| e.mv != p.mv) {
                    return Some(*p);
                }
            }
        }
        priors.get(len).copied()
    }

    /// KataGo's extra passing hack, for a node where a pass would end the phase and whose
    /// edges have at least two visits: when no pass was tried and `pick` is another move,
    /// a pass instead; when only a pass was tried and `pick` is the pass, the best other
    /// move not yet tried. The caller makes such a visit weightless. `pass` is the pass's
    /// policy index.
    pub fn passing_hack(&self, n: u32, pick: Pick, pass: u16) -> Option<Pick> {
        let edges = self.edges_of(n);
        if edges.iter().map(|e| u64::from(e.visits)).sum::<u64>() < 2 {
            return None;
        }
        let has_pass = edges.iter().any(|e| e.mv == pass);
        let has_other = edges.iter().any(|e| e.mv != pass);
        let picked = match pick {
            Pick::Edge(slot) => edges[usize::from(slot)].mv,
            Pick::New(p) => p.mv,
        };
        if !has_pass && picked != pass {
            let prior = self
                .priors_of(n)
                .iter()
                .find(|p| p.mv == pass)
                .map_or(0.0, |p| p.p());
            return Some(Pick::New(Prior::new(pass, prior)));
        }
        if !has_other && picked == pass {
            let best = if n == 0 {
                self.priors_of(0)
                    .iter()
                    .filter(|p| p.mv != pass && edges.iter().all(|e| e.mv != p.mv))
                    .max_by(|a, b| a.p().total_cmp(&b.p()))
                    .copied()
            } else {
                // Only the pass has an edge, in its place in prior order, so the next
                // untried move is not the pass.
                self.next_untried(n).filter(|p| p.mv != pass)
            };
            return best.map(Pick::New);
        }
        None
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

    #[test]
    fn the_passing_hack_tries_a_pass_and_then_keeps_prior_order() {
        // Below the root: priors in order 3, 7, 9, pass (index 81).
        let mut t = Tree::new();
        let (n, _) = t.node_for(Some(5), Player::White);
        t.add_edge(0, 1, 1.0, n);
        let ps = [
            Prior::new(3, 0.5),
            Prior::new(7, 0.3),
            Prior::new(9, 0.15),
            Prior::new(81, 0.05),
        ];
        t.expand(n, Player::White, Eval::default(), &ps);
        let (a, _) = t.node_for(Some(6), Player::Black);
        t.add_edge(n, 3, 0.5, a);
        // Too few visits yet: nothing is forced.
        assert_eq!(t.passing_hack(n, Pick::Edge(0), 81), None);
        t.edge_mut(n, 0).visits = 2;
        let forced = t.passing_hack(n, Pick::Edge(0), 81);
        assert!(
            matches!(forced, Some(Pick::New(p)) if p.mv == 81),
            "{forced:?}"
        );
        // The pass joins out of prior order; the next untried move is still 7, then 9.
        let (b, _) = t.node_for(Some(7), Player::Black);
        t.add_edge(n, 81, 0.05, b);
        assert_eq!(t.next_untried(n).map(|p| p.mv), Some(7));
        let (c, _) = t.node_for(Some(8), Player::Black);
        t.add_edge(n, 7, 0.3, c);
        assert_eq!(t.next_untried(n).map(|p| p.mv), Some(9));
        let (d, _) = t.node_for(Some(9), Player::Black);
        t.add_edge(n, 9, 0.15, d);
        assert_eq!(t.next_untried(n), None);
        // With a pass already tried, nothing more is forced.
        assert_eq!(t.passing_hack(n, Pick::Edge(0), 81), None);
    }

    #[test]
    fn the_passing_hack_tries_another_move_when_only_the_pass_was_tried() {
        let mut t = root_with(&[(81, 0.6), (3, 0.3), (7, 0.1)]);
        let (a, _) = t.node_for(Some(6), Player::White);
        t.add_edge(0, 81, 0.6, a);
        t.edge_mut(0, 0).visits = 3;
        let forced = t.passing_hack(0, Pick::Edge(0), 81);
        assert!(
            matches!(forced, Some(Pick::New(p)) if p.mv == 3),
            "{forced:?}"
        );
        // A pick of another move already has one: nothing to force.
        assert_eq!(t.passing_hack(0, Pick::New(Prior::new(7, 0.1)), 81), None);
    }
}
