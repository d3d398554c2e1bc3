//! The search tree: nodes in one arena, each node's policy in one shared pool, PUCT
//! selection with first-play urgency and virtual losses, and backup of values.
//!
//! Everything here runs under the search's tree lock and never waits on a network;
//! evaluations happen outside it.

use std::collections::HashMap;

use tengen_rules::Player;

use crate::mirror::{Hint, Mirror, NO_HINT};
use crate::params::SearchParams;
use crate::utility::Sample;

/// "No node" in the arena's links.
pub const NONE: u32 = u32::MAX;

/// Where a node is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Created by its parent's selection; nobody has asked for its evaluation yet.
    Fresh,
    /// A thread is evaluating it.
    InFlight,
    /// Evaluated, with its moves' priors.
    Expanded,
    /// The game is over here; its value is fixed.
    Terminal,
}

/// Sums of the samples backed up through a node, from White's point of view.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sums {
    /// Utility.
    pub utility: f64,
    /// Squared utility (for the stdev-scaled exploration and the LCB).
    pub utility_sq: f64,
    /// Win minus loss.
    pub winloss: f64,
    /// No result.
    pub no_result: f64,
    /// Score mean.
    pub score: f64,
    /// Score mean square.
    pub score_sq: f64,
    /// Lead.
    pub lead: f64,
}

impl Sums {
    fn add(&mut self, s: &Sample) {
        self.utility += s.utility;
        self.utility_sq += s.utility * s.utility;
        self.winloss += s.winloss;
        self.no_result += s.no_result;
        self.score += s.score;
        self.score_sq += s.score_sq;
        self.lead += s.lead;
    }

    /// The mean sample over `visits` (a terminal node's fixed value).
    pub fn mean(&self, visits: u32) -> Sample {
        let n = f64::from(visits.max(1));
        Sample {
            utility: self.utility / n,
            winloss: self.winloss / n,
            no_result: self.no_result / n,
            score: self.score / n,
            score_sq: self.score_sq / n,
            lead: self.lead / n,
        }
    }
}

/// One position of the tree.
#[derive(Clone, Debug)]
pub struct Node {
    /// Backed-up values.
    pub sums: Sums,
    /// Completed visits.
    pub visits: u32,
    /// Newest child, or [`NONE`].
    pub first_child: u32,
    /// Next older sibling, or [`NONE`].
    pub next_sibling: u32,
    /// This node's priors in the pool: `priors[priors_at..priors_at + priors_len]`.
    pub priors_at: u32,
    /// Number of stored priors.
    pub priors_len: u16,
    /// Number of children created.
    pub num_children: u16,
    /// Prior of the move leading here, as the parent sees it.
    pub prior: f32,
    /// Utility of this node's own evaluation (for first-play urgency).
    pub nn_utility: f32,
    /// The move leading here, as a policy index.
    pub mv: u16,
    /// Threads currently below this node.
    pub virtual_losses: u16,
    /// Life stage.
    pub state: State,
    /// The player to move here (valid once expanded).
    pub next_player: Player,
    /// What anti-mirror search does here, a packed [`Hint`] (fills what was padding).
    pub mirror: u16,
}

impl Node {
    fn new(mv: u16, prior: f32) -> Node {
        Node {
            sums: Sums::default(),
            visits: 0,
            first_child: NONE,
            next_sibling: NONE,
            priors_at: 0,
            priors_len: 0,
            num_children: 0,
            prior,
            nn_utility: 0.0,
            mv,
            virtual_losses: 0,
            state: State::Fresh,
            next_player: Player::Black,
            mirror: NO_HINT,
        }
    }

    /// Mean utility for White (0 before any visit).
    pub fn utility(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.sums.utility / f64::from(self.visits)
        }
    }
}

/// A move and its prior, as stored in the pool: the prior rounded to bfloat16 (about 3
/// significant digits), which is all PUCT needs and halves the tree's largest cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prior {
    /// Policy index of the move.
    pub mv: u16,
    bits: u16,
}

impl Prior {
    /// Stores `p` (a probability in [0, 1]).
    pub fn new(mv: u16, p: f32) -> Prior {
        let b = p.max(0.0).to_bits();
        // Round to nearest, ties away: add half of the dropped part before truncating.
        let bits = (b.saturating_add(0x8000) >> 16) as u16;
        Prior { mv, bits }
    }

    /// The stored probability.
    #[inline]
    pub fn p(self) -> f32 {
        f32::from_bits(u32::from(self.bits) << 16)
    }
}

/// What a descent found at its end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leaf {
    /// A new node: the thread must evaluate it (it is marked in flight).
    Evaluate,
    /// A finished game: back up its fixed value.
    Terminal(Sample),
    /// Another thread is evaluating this node; back off and retry.
    Collision,
    /// A node with no move to choose (cannot happen with a legal pass; treated as an error).
    Stuck,
}

/// Per-thread scratch space, so descents do not allocate.
#[derive(Default)]
pub struct Scratch {
    /// Whether each root move already has a child (root scan only).
    has_child: Vec<bool>,
}

/// The arena and pool; node 0 is the root.
pub struct Tree {
    /// All nodes; index 0 is the root.
    pub nodes: Vec<Node>,
    /// All stored priors.
    pub priors: Vec<Prior>,
    /// Anti-mirror search's hard case: the liberties (policy indices) of the centre chain
    /// at the nodes where we are to move, which get a bonus. Rare, so kept aside.
    center_liberties: HashMap<u32, Box<[u16]>>,
}

impl Tree {
    /// A tree holding only a fresh root.
    pub fn new() -> Tree {
        Tree {
            nodes: vec![Node::new(u16::MAX, 1.0)],
            priors: Vec::new(),
            center_liberties: HashMap::new(),
        }
    }

    /// The root.
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The children of `n`, newest first.
    pub fn children(&self, n: u32) -> Children<'_> {
        Children {
            tree: self,
            at: self.nodes[n as usize].first_child,
        }
    }

    /// The child of `n` reached by the move with policy index `mv`.
    pub fn child_by_move(&self, n: u32, mv: u16) -> Option<u32> {
        self.children(n).find(|&c| self.nodes[c as usize].mv == mv)
    }

    /// The stored priors of `n`.
    pub fn priors_of(&self, n: u32) -> &[Prior] {
        let node = &self.nodes[n as usize];
        let at = node.priors_at as usize;
        &self.priors[at..at + node.priors_len as usize]
    }

    /// Gives `n` its evaluation: the player to move, its own utility and its priors
    /// (already filtered; sorted by decreasing prior unless `n` is the root).
    pub fn expand(&mut self, n: u32, next_player: Player, nn_utility: f64, priors: &[Prior]) {
        let at = self.priors.len() as u32;
        self.priors.extend_from_slice(priors);
        let node = &mut self.nodes[n as usize];
        node.priors_at = at;
        node.priors_len = priors.len() as u16;
        node.next_player = next_player;
        node.nn_utility = nn_utility as f32;
        node.state = State::Expanded;
    }

    /// Records the centre chain's liberties at `n` for anti-mirror search's hard case.
    pub fn set_center_liberties(&mut self, n: u32, liberties: Vec<u16>) {
        if liberties.is_empty() {
            self.center_liberties.remove(&n);
        } else {
            self.center_liberties
                .insert(n, liberties.into_boxed_slice());
        }
    }

    /// Replaces the root's priors (root temperature, noise, filters) and updates the priors
    /// its existing children carry.
    pub fn set_root_priors(&mut self, priors: &[Prior]) {
        let at = self.priors.len() as u32;
        self.priors.extend_from_slice(priors);
        self.nodes[0].priors_at = at;
        self.nodes[0].priors_len = priors.len() as u16;
        let mut c = self.nodes[0].first_child;
        while c != NONE {
            let mv = self.nodes[c as usize].mv;
            let p = priors.iter().find(|q| q.mv == mv).map_or(0.0, |q| q.p());
            self.nodes[c as usize].prior = p;
            c = self.nodes[c as usize].next_sibling;
        }
    }

    /// Walks from the root choosing children by PUCT, adding a virtual loss to each node
    /// entered, and records the path (root first). Creates the chosen new child, if any.
    pub fn descend(
        &mut self,
        params: &SearchParams,
        mirror: Option<&Mirror>,
        root_forced_k: f64,
        rng: &mut fastrand::Rng,
        path: &mut Vec<u32>,
        scratch: &mut Scratch,
    ) -> Leaf {
        path.clear();
        let mut n = 0u32;
        loop {
            path.push(n);
            let node = &mut self.nodes[n as usize];
            match node.state {
                State::Fresh => {
                    node.state = State::InFlight;
                    return Leaf::Evaluate;
                }
                State::InFlight => return Leaf::Collision,
                State::Terminal => return Leaf::Terminal(node.sums.mean(node.visits)),
                State::Expanded => {}
            }
            let next = if n == 0 {
                self.select_at_root(params, mirror, root_forced_k, rng, scratch)
            } else {
                self.select(n, params, mirror)
            };
            let Some(c) = next else {
                return Leaf::Stuck;
            };
            self.nodes[c as usize].virtual_losses += 1;
            n = c;
        }
    }

    /// Takes back the virtual losses of an abandoned descent and returns its leaf to fresh.
    pub fn abandon(&mut self, path: &[u32], leaf_was_claimed: bool) {
        for &n in path.iter().skip(1) {
            let node = &mut self.nodes[n as usize];
            node.virtual_losses = node.virtual_losses.saturating_sub(1);
        }
        if leaf_was_claimed {
            if let Some(&leaf) = path.last() {
                let node = &mut self.nodes[leaf as usize];
                if node.state == State::InFlight {
                    node.state = State::Fresh;
                }
            }
        }
    }

    /// Adds a sample to every node of the path and removes the path's virtual losses.
    pub fn backup(&mut self, path: &[u32], sample: &Sample) {
        for (i, &n) in path.iter().enumerate() {
            let node = &mut self.nodes[n as usize];
            node.visits += 1;
            node.sums.add(sample);
            if i > 0 {
                node.virtual_losses = node.virtual_losses.saturating_sub(1);
            }
        }
    }

    /// Marks a leaf as a finished game.
    pub fn set_terminal(&mut self, n: u32) {
        self.nodes[n as usize].state = State::Terminal;
    }

    /// First-play urgency and the exploration scale at `n`, given the policy mass and
    /// total weight of its visited children.
    fn fpu_and_scale(
        &self,
        n: u32,
        params: &SearchParams,
        is_root: bool,
        mass: f64,
        total: f64,
    ) -> (f64, f64) {
        let node = &self.nodes[n as usize];
        let visits = f64::from(node.visits.max(1));
        let parent_utility = node.sums.utility / visits;
        // Stdev of the parent's utility, shrunk towards a prior (KataGo's cpuctUtilityStdev*).
        let prior = params.cpuct_utility_stdev_prior;
        let stdev = if visits <= 1.0 {
            prior
        } else {
            let u2 = parent_utility * parent_utility;
            let sq = (node.sums.utility_sq / visits).max(u2);
            let w = params.cpuct_utility_stdev_prior_weight;
            (((u2 + prior * prior) * w + sq * visits) / (w + visits - 1.0) - u2)
                .max(0.0)
                .sqrt()
        };
        let stdev_factor = 1.0 + params.cpuct_utility_stdev_scale * (stdev / prior - 1.0);
        let cpuct = params.cpuct_exploration
            + params.cpuct_exploration_log
                * ((total + params.cpuct_exploration_base) / params.cpuct_exploration_base).ln();
        let scale = cpuct * (total + 0.01).sqrt() * stdev_factor;

        let base = match params.fpu_parent_weight_by_visited_policy_pow {
            Some(pow) => {
                let w = mass.powf(pow).min(1.0);
                w * parent_utility + (1.0 - w) * f64::from(node.nn_utility)
            }
            None => parent_utility,
        };
        let reduction_max = if is_root {
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
        (fpu, scale)
    }

    /// A visited child's utility and weight as selection sees them, virtual losses included.
    #[inline]
    fn child_value(&self, c: &Node, params: &SearchParams, fpu: f64, white: bool) -> (f64, f64) {
        let mut weight = f64::from(c.visits);
        let mut utility = if c.visits == 0 { fpu } else { c.utility() };
        if c.virtual_losses > 0 {
            let vl = f64::from(c.virtual_losses) * params.virtual_losses_per_thread;
            let radius = params.utility_radius();
            let loss = if white { -radius } else { radius };
            utility += (loss - utility) * vl / (vl + weight.max(0.25));
            weight += vl;
        }
        (utility, weight)
    }

    /// The root's PUCT exploration scale as selection computes it now.
    pub fn root_explore_scale(&self, params: &SearchParams) -> f64 {
        let (mass, total) = self.totals(0);
        self.fpu_and_scale(0, params, true, mass, total).1
    }

    fn totals(&self, n: u32) -> (f64, f64) {
        let mut mass = 0.0;
        let mut total = 0.0;
        for c in self.children(n) {
            let c = &self.nodes[c as usize];
            mass += f64::from(c.prior);
            total += f64::from(c.visits);
        }
        (mass, total)
    }

    /// PUCT choice below the root: the visited children, and the best unvisited move,
    /// which is the next stored prior (children are created in prior order).
    fn select(&mut self, n: u32, params: &SearchParams, mirror: Option<&Mirror>) -> Option<u32> {
        let (mass, total) = self.totals(n);
        let (fpu, scale) = self.fpu_and_scale(n, params, false, mass, total);
        let node = &self.nodes[n as usize];
        let white = node.next_player == Player::White;
        let sign = if white { 1.0 } else { -1.0 };
        let anti_mirror = self.anti_mirror(n, mirror, total);
        let mut best = f64::NEG_INFINITY;
        let mut choice = None;
        for c in self.children(n) {
            let child = &self.nodes[c as usize];
            let (u, w) = self.child_value(child, params, fpu, white);
            let u = anti_mirror.as_ref().map_or(u, |f| f(child.mv, u, w));
            let v = scale * f64::from(child.prior) / (1.0 + w) + sign * u;
            if v > best {
                best = v;
                choice = Some(c);
            }
        }
        // It borrows the tree, which a new child changes.
        drop(anti_mirror);
        if node.num_children < node.priors_len {
            let p = self.priors[node.priors_at as usize + node.num_children as usize];
            let v = scale * f64::from(p.p()) + sign * fpu;
            if v > best {
                return Some(self.add_child(n, p));
            }
        }
        choice
    }

    /// PUCT choice at the root, scanning every prior (root priors carry noise and are not
    /// sorted), with forced playouts and wide-root noise when asked for.
    fn select_at_root(
        &mut self,
        params: &SearchParams,
        mirror: Option<&Mirror>,
        forced_k: f64,
        rng: &mut fastrand::Rng,
        scratch: &mut Scratch,
    ) -> Option<u32> {
        let (mass, total) = self.totals(0);
        let (fpu, scale) = self.fpu_and_scale(0, params, true, mass, total);
        let root = &self.nodes[0];
        let white = root.next_player == Player::White;
        let sign = if white { 1.0 } else { -1.0 };
        let wide = params.wide_root_noise;
        let anti_mirror = self.anti_mirror(0, mirror, total);
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
        let mut best = f64::NEG_INFINITY;
        let mut choice: Option<Result<u32, Prior>> = None;
        let has = &mut scratch.has_child;
        has.clear();
        // Policy indices are below MAX_AREA + 1 (626).
        has.resize(1024, false);
        for c in self.children(0) {
            let child = &self.nodes[c as usize];
            has[child.mv as usize] = true;
            let (u, w) = self.child_value(child, params, fpu, white);
            if forced_k > 0.0 && child.prior > 0.0 {
                let forced = (forced_k * f64::from(child.prior) * total).sqrt();
                if f64::from(child.visits) < forced && child.virtual_losses == 0 {
                    return Some(c);
                }
            }
            let (p, u) = noisy(f64::from(child.prior), u, rng);
            let u = anti_mirror.as_ref().map_or(u, |f| f(child.mv, u, w));
            let v = scale * p / (1.0 + w) + sign * u;
            if v > best {
                best = v;
                choice = Some(Ok(c));
            }
        }
        drop(anti_mirror);
        for &p in self.priors_of(0) {
            if has[p.mv as usize] {
                continue;
            }
            let (q, u) = noisy(f64::from(p.p()), fpu, rng);
            let v = scale * q + sign * u;
            if v > best {
                best = v;
                choice = Some(Err(p));
            }
        }
        match choice? {
            Ok(c) => Some(c),
            Err(p) => Some(self.add_child(0, p)),
        }
    }

    /// The anti-mirror adjustment of children's utilities at `n` (move, utility, weight to
    /// utility), when a mirror is seen and `n` is on a line that kept it.
    fn anti_mirror<'a>(
        &'a self,
        n: u32,
        mirror: Option<&'a Mirror>,
        total: f64,
    ) -> Option<impl Fn(u16, f64, f64) -> f64 + 'a> {
        let node = &self.nodes[n as usize];
        let hint = Hint::unpack(node.mirror);
        let m = mirror.filter(|_| hint != Hint::None)?;
        let at = crate::mirror::Parent {
            white: node.next_player == Player::White,
            utility: node.utility(),
            total,
            last_move: (n != 0).then_some(node.mv),
            center_liberties: self.center_liberties.get(&n).map_or(&[], |l| l),
        };
        Some(move |mv, u, w| m.adjust(hint, &at, mv, u, w))
    }

    fn add_child(&mut self, parent: u32, p: Prior) -> u32 {
        let idx = self.nodes.len() as u32;
        let mut child = Node::new(p.mv, p.p());
        child.next_sibling = self.nodes[parent as usize].first_child;
        self.nodes.push(child);
        let parent = &mut self.nodes[parent as usize];
        parent.first_child = idx;
        parent.num_children += 1;
        idx
    }

    /// Keeps only the subtree under `new_root`, compacted into fresh arrays (tree reuse).
    pub fn reroot(&mut self, new_root: u32) {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        let mut priors = Vec::with_capacity(self.priors.len());
        // (old index, new index of its parent, or NONE for the root)
        let mut stack = vec![(new_root, NONE)];
        let mut center_liberties = HashMap::new();
        while let Some((old, parent)) = stack.pop() {
            let mut node = self.nodes[old as usize].clone();
            let at = priors.len() as u32;
            priors.extend_from_slice(self.priors_of(old));
            node.priors_at = at;
            node.first_child = NONE;
            node.next_sibling = NONE;
            node.virtual_losses = 0;
            if node.state == State::InFlight {
                node.state = State::Fresh;
            }
            let idx = nodes.len() as u32;
            if let Some(l) = self.center_liberties.remove(&old) {
                center_liberties.insert(idx, l);
            }
            if parent != NONE {
                let p: &mut Node = &mut nodes[parent as usize];
                node.next_sibling = p.first_child;
                p.first_child = idx;
            }
            nodes.push(node);
            // Push children oldest first so that, re-linked newest first, the order is kept.
            let kids: Vec<u32> = self.children(old).collect();
            for &c in kids.iter() {
                stack.push((c, idx));
            }
        }
        self.nodes = nodes;
        self.priors = priors;
        self.center_liberties = center_liberties;
        self.nodes[0].prior = 1.0;
    }

    /// Bytes the arrays hold (for memory reports).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.priors.capacity() * std::mem::size_of::<Prior>()
    }
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

/// Iterator over a node's children.
pub struct Children<'a> {
    tree: &'a Tree,
    at: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.at == NONE {
            return None;
        }
        let c = self.at;
        self.at = self.tree.nodes[c as usize].next_sibling;
        Some(c)
    }
}

/// A standard normal draw (Box-Muller).
pub fn gaussian(rng: &mut fastrand::Rng) -> f64 {
    let u1 = rng.f64().max(1e-300);
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anti_mirror_hint_costs_a_node_no_bytes() {
        // 7 sums of 8 bytes, then 38 bytes of fields: the hint fills the padding to 96.
        assert_eq!(std::mem::size_of::<Node>(), 96);
    }

    #[test]
    fn priors_round_to_three_digits() {
        for &p in &[1.0f32, 0.5, 0.123_456, 1e-3, 3.3e-5, 0.0] {
            let q = Prior::new(7, p).p();
            assert!((q - p).abs() <= p * 4e-3, "{p} -> {q}");
        }
    }

    fn sample(u: f64) -> Sample {
        Sample {
            utility: u,
            winloss: u,
            ..Sample::default()
        }
    }

    fn expanded_root(priors: &[(u16, f32)]) -> Tree {
        let mut t = Tree::new();
        let ps: Vec<Prior> = priors.iter().map(|&(m, p)| Prior::new(m, p)).collect();
        t.expand(0, Player::Black, 0.0, &ps);
        t.backup(&[0], &sample(0.0));
        t
    }

    #[test]
    fn first_descent_takes_the_highest_prior_and_virtual_loss_spreads_threads() {
        let mut t = expanded_root(&[(0, 0.2), (1, 0.7), (2, 0.1)]);
        let params = SearchParams::default();
        let mut rng = fastrand::Rng::with_seed(1);
        let mut path = Vec::new();
        let mut s = Scratch::default();
        assert_eq!(
            t.descend(&params, None, 0.0, &mut rng, &mut path, &mut s),
            Leaf::Evaluate
        );
        let first = path[1];
        assert_eq!(t.nodes[first as usize].mv, 1);
        // A second thread, while the first is in flight, goes elsewhere.
        let mut path2 = Vec::new();
        let second = t.descend(&params, None, 0.0, &mut rng, &mut path2, &mut s);
        assert_eq!(second, Leaf::Evaluate);
        assert_ne!(path2[1], first);
        t.abandon(&path2, true);
        t.backup(&path, &sample(-0.5));
        assert_eq!(t.root().visits, 2);
        assert_eq!(t.nodes[first as usize].virtual_losses, 0);
    }

    #[test]
    fn a_losing_move_for_black_loses_visits_to_a_winning_one() {
        // Utility is White's: for Black, -0.9 is excellent and +0.9 terrible.
        let mut t = expanded_root(&[(0, 0.5), (1, 0.5)]);
        let params = SearchParams::default();
        let mut rng = fastrand::Rng::with_seed(1);
        let mut s = Scratch::default();
        let mut path = Vec::new();
        for _ in 0..200 {
            match t.descend(&params, None, 0.0, &mut rng, &mut path, &mut s) {
                Leaf::Evaluate => {
                    let leaf = *path.last().unwrap();
                    let u = if t.nodes[path[1] as usize].mv == 0 {
                        0.9
                    } else {
                        -0.9
                    };
                    t.expand(leaf, Player::White, u, &[Prior::new(0, 1.0)]);
                    t.backup(&path, &sample(u));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        let good = t.child_by_move(0, 1).unwrap();
        let bad = t.child_by_move(0, 0).unwrap();
        assert!(t.nodes[good as usize].visits > 10 * t.nodes[bad as usize].visits);
    }

    #[test]
    fn reroot_keeps_the_subtree_and_its_statistics() {
        let mut t = expanded_root(&[(0, 0.6), (1, 0.4)]);
        let params = SearchParams::default();
        let mut rng = fastrand::Rng::with_seed(3);
        let mut s = Scratch::default();
        let mut path = Vec::new();
        for _ in 0..50 {
            if t.descend(&params, None, 0.0, &mut rng, &mut path, &mut s) == Leaf::Evaluate {
                let leaf = *path.last().unwrap();
                let np = t.nodes[path[path.len() - 2] as usize].next_player.opp();
                t.expand(leaf, np, 0.1, &[Prior::new(0, 0.5), Prior::new(1, 0.5)]);
                t.backup(&path, &sample(0.1));
            }
        }
        let c = t.child_by_move(0, 0).unwrap();
        let visits = t.nodes[c as usize].visits;
        let count_below = |t: &Tree, n: u32| {
            let mut stack = vec![n];
            let mut k = 0;
            while let Some(x) = stack.pop() {
                k += 1;
                stack.extend(t.children(x));
            }
            k
        };
        let size = count_below(&t, c);
        t.reroot(c);
        assert_eq!(t.root().visits, visits);
        assert_eq!(t.nodes.len(), size);
        assert_eq!(count_below(&t, 0), size);
    }
}
