//! The search graph, as KataGo's graph search keeps it: nodes in one arena, a position
//! reached by different move orders sharing one node (found through a table of graph
//! hashes, [`crate::keys`]), and each node's moves as edges that carry their own visit
//! counts. A node's values are averages recomputed from its children and its own
//! evaluation ([`crate::backup`]); choosing the edge to descend is [`crate::select`].
//!
//! Everything here runs under the search's lock and never waits on a network.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use tengen_rules::Player;

use crate::mirror::NO_HINT;

/// "No node" (or no bias entry) in the arena's links.
pub const NONE: u32 = u32::MAX;

/// Where a node is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Created by a parent's selection; nobody has asked for its evaluation yet.
    Fresh,
    /// A thread is evaluating it.
    InFlight,
    /// Evaluated, with its moves' priors.
    Expanded,
    /// The game is over here; its value is fixed.
    Terminal,
}

/// What a node has seen, as weighted averages from White's point of view (KataGo's
/// `NodeStats`): its own evaluation and its children's averages, each child weighted by
/// the visits of the edge to it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Visits: the node's own plus those of the edges below it.
    pub visits: u32,
    /// Total weight of what the averages hold.
    pub weight_sum: f64,
    /// Sum of squared weights (for the effective sample size of the LCB).
    pub weight_sq_sum: f64,
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
    /// Utility.
    pub utility: f64,
    /// Squared utility.
    pub utility_sq: f64,
}

impl Stats {
    /// The weight this node brings to a parent whose edge to it has `edge_visits` visits:
    /// a transposition seen from one parent counts for that parent's share only.
    #[inline]
    pub fn child_weight(&self, edge_visits: u32) -> f64 {
        self.weight_sum * f64::from(edge_visits) / f64::from(self.visits.max(1))
    }

    /// The same share of the squared weights.
    #[inline]
    pub fn child_weight_sq(&self, edge_visits: u32) -> f64 {
        self.weight_sq_sum * f64::from(edge_visits) / f64::from(self.visits.max(1))
    }
}

/// A node's own evaluation (White's point of view) with the weight it counts for, kept so
/// that the node's averages can be recomputed whenever its children's change.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Eval {
    /// Win minus loss.
    pub winloss: f32,
    /// No result.
    pub no_result: f32,
    /// Score mean.
    pub score: f32,
    /// Score mean square.
    pub score_sq: f32,
    /// Lead.
    pub lead: f32,
    /// Weight (1, or less for an evaluation the network is unsure of).
    pub weight: f32,
}

/// One position of the graph.
#[derive(Clone, Debug)]
pub struct Node {
    /// Averages of what was backed up here.
    pub stats: Stats,
    /// The node's own evaluation (valid once expanded or terminal).
    pub eval: Eval,
    /// The node's graph hash (the key under which transpositions find it; 0 for a node
    /// that is never shared).
    pub hash: u128,
    /// What this node last put into its subtree value-bias entry: the delta sum...
    pub bias_delta: f64,
    /// ...and the weight.
    pub bias_weight: f64,
    /// This node's edges in the pool: `edges[edges_at..edges_at + edges_len]`.
    pub edges_at: u32,
    /// This node's priors in the pool: `priors[priors_at..priors_at + priors_len]`.
    pub priors_at: u32,
    /// Its subtree value-bias entry, or [`NONE`].
    pub bias: u32,
    /// Edges in use.
    pub edges_len: u16,
    /// Edges the block at `edges_at` has room for.
    edges_cap: u16,
    /// Number of stored priors.
    pub priors_len: u16,
    /// Threads currently below this node.
    pub virtual_losses: u16,
    /// What anti-mirror search does here, a packed [`crate::mirror::Hint`].
    pub mirror: u16,
    /// Life stage.
    pub state: State,
    /// The player to move here.
    pub next_player: Player,
}

impl Node {
    fn new(next_player: Player, hash: u128) -> Node {
        Node {
            stats: Stats::default(),
            eval: Eval::default(),
            hash,
            bias_delta: 0.0,
            bias_weight: 0.0,
            edges_at: 0,
            priors_at: 0,
            bias: NONE,
            edges_len: 0,
            edges_cap: 0,
            priors_len: 0,
            virtual_losses: 0,
            mirror: NO_HINT,
            state: State::Fresh,
            next_player,
        }
    }

    /// Mean utility for White (0 before any visit).
    pub fn utility(&self) -> f64 {
        if self.stats.visits == 0 {
            0.0
        } else {
            self.stats.utility
        }
    }
}

/// A move and its prior, as stored in the pool: the prior rounded to bfloat16 (about 3
/// significant digits), which is all PUCT needs and halves the pool's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prior {
    /// Policy index of the move.
    pub mv: u16,
    bits: u16,
}

impl Prior {
    /// Stores `p` (a probability in [0, 1]).
    pub fn new(mv: u16, p: f32) -> Prior {
        Prior {
            mv,
            bits: to_bf16(p),
        }
    }

    /// The stored probability.
    #[inline]
    pub fn p(self) -> f32 {
        from_bf16(self.bits)
    }
}

fn to_bf16(p: f32) -> u16 {
    let b = p.max(0.0).to_bits();
    // Round to nearest, ties away: add half of the dropped part before truncating.
    (b.saturating_add(0x8000) >> 16) as u16
}

fn from_bf16(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// A move from a node to a child, with the visits that went through it (a shared child
/// has more visits than any one edge to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The child node.
    pub child: u32,
    /// Visits through this edge.
    pub visits: u32,
    /// Policy index of the move.
    pub mv: u16,
    prior_bits: u16,
}

impl Edge {
    /// The move's prior as the parent sees it.
    #[inline]
    pub fn prior(&self) -> f32 {
        from_bf16(self.prior_bits)
    }
}

/// One entry of the subtree value-bias table: how much searched values below positions
/// sharing a key differed from the network's, summed with weights.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BiasEntry {
    /// Sum of weighted differences (children's utility minus the node's own).
    pub delta_sum: f64,
    /// Sum of weights.
    pub weight_sum: f64,
    /// Nodes that use the entry.
    users: u32,
}

/// Hashes of positions are random already: use their low bits as they are.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)) ^ (self.0 >> 56);
        }
    }

    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64 ^ (v >> 64) as u64;
    }
}

type KeyMap = HashMap<u128, u32, BuildHasherDefault<KeyHasher>>;

/// The arena, pools and tables; node 0 is the root.
pub struct Tree {
    /// All nodes; index 0 is the root.
    pub nodes: Vec<Node>,
    edges: Vec<Edge>,
    priors: Vec<Prior>,
    /// Shared nodes by graph hash.
    table: KeyMap,
    bias: Vec<BiasEntry>,
    bias_index: KeyMap,
    /// Anti-mirror search's hard case: the liberties (policy indices) of the centre chain
    /// at the nodes where we are to move, which get a bonus. Rare, so kept aside.
    center_liberties: HashMap<u32, Box<[u16]>>,
}

impl Tree {
    /// A tree holding only a fresh root with this graph hash (0: unknown yet).
    pub fn new() -> Tree {
        Tree {
            nodes: vec![Node::new(Player::Black, 0)],
            edges: Vec::new(),
            priors: Vec::new(),
            table: KeyMap::default(),
            bias: Vec::new(),
            bias_index: KeyMap::default(),
            center_liberties: HashMap::new(),
        }
    }

    /// The root.
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The edges of `n`, oldest first (below the root, that is prior order).
    pub fn edges_of(&self, n: u32) -> &[Edge] {
        let node = &self.nodes[n as usize];
        let at = node.edges_at as usize;
        &self.edges[at..at + node.edges_len as usize]
    }

    /// The edge in slot `slot` of `n`.
    pub fn edge(&self, n: u32, slot: u16) -> &Edge {
        &self.edges[self.nodes[n as usize].edges_at as usize + slot as usize]
    }

    pub(crate) fn edge_mut(&mut self, n: u32, slot: u16) -> &mut Edge {
        let at = self.nodes[n as usize].edges_at as usize;
        &mut self.edges[at + slot as usize]
    }

    /// The slot and child of `n`'s edge for the move with policy index `mv`.
    pub fn child_by_move(&self, n: u32, mv: u16) -> Option<(u16, u32)> {
        self.edges_of(n)
            .iter()
            .position(|e| e.mv == mv)
            .map(|i| (i as u16, self.edges_of(n)[i].child))
    }

    /// The stored priors of `n`.
    pub fn priors_of(&self, n: u32) -> &[Prior] {
        let node = &self.nodes[n as usize];
        let at = node.priors_at as usize;
        &self.priors[at..at + node.priors_len as usize]
    }

    /// Gives `n` its evaluation: the player to move and its priors (already filtered;
    /// sorted by decreasing prior unless `n` is the root). Its values come with
    /// [`Tree::add_leaf_value`].
    pub fn expand(&mut self, n: u32, next_player: Player, eval: Eval, priors: &[Prior]) {
        let at = self.priors.len() as u32;
        self.priors.extend_from_slice(priors);
        let node = &mut self.nodes[n as usize];
        node.priors_at = at;
        node.priors_len = priors.len() as u16;
        node.next_player = next_player;
        node.eval = eval;
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

    /// The centre chain's liberties recorded at `n` (empty if none).
    pub fn center_liberties(&self, n: u32) -> &[u16] {
        self.center_liberties.get(&n).map_or(&[], |l| l)
    }

    /// Replaces the root's priors (root temperature, noise, filters) and updates the priors
    /// its existing edges carry.
    pub fn set_root_priors(&mut self, priors: &[Prior]) {
        let at = self.priors.len() as u32;
        self.priors.extend_from_slice(priors);
        self.nodes[0].priors_at = at;
        self.nodes[0].priors_len = priors.len() as u16;
        let (start, len) = (self.nodes[0].edges_at as usize, self.nodes[0].edges_len);
        for e in &mut self.edges[start..start + len as usize] {
            let p = priors.iter().find(|q| q.mv == e.mv).map_or(0.0, |q| q.p());
            e.prior_bits = to_bf16(p);
        }
    }

    /// The node for a child position: the shared node with graph hash `hash` when there
    /// is one for the same player to move, else a new fresh node (entered in the table
    /// when `hash` is given). Returns the node and whether it was found.
    pub fn node_for(&mut self, hash: Option<u128>, next_player: Player) -> (u32, bool) {
        if let Some(h) = hash {
            if let Some(&n) = self.table.get(&h) {
                if self.nodes[n as usize].next_player == next_player {
                    return (n, true);
                }
                // A hash collision across players (astronomically rare): keep them apart.
                return (self.push(Node::new(next_player, 0)), false);
            }
            let n = self.push(Node::new(next_player, h));
            self.table.insert(h, n);
            return (n, false);
        }
        (self.push(Node::new(next_player, 0)), false)
    }

    fn push(&mut self, node: Node) -> u32 {
        let idx = self.nodes.len() as u32;
        self.nodes.push(node);
        idx
    }

    /// Adds an edge from `parent` to `child` for the move with policy index `mv`; returns
    /// its slot. A node's edges live in one block, moved to a block twice the size when
    /// full (the old block is reclaimed when the tree is compacted).
    pub fn add_edge(&mut self, parent: u32, mv: u16, prior: f32, child: u32) -> u16 {
        let node = &self.nodes[parent as usize];
        let (at, len, cap) = (node.edges_at as usize, node.edges_len, node.edges_cap);
        if len == cap {
            let new_cap = if cap == 0 {
                // The root sees many moves at once; below it, most nodes get a few.
                if parent == 0 {
                    32
                } else {
                    2
                }
            } else {
                cap.saturating_mul(2)
            };
            let new_at = self.edges.len();
            self.edges.extend_from_within(at..at + len as usize);
            self.edges.resize(
                new_at + new_cap as usize,
                Edge {
                    child: NONE,
                    visits: 0,
                    mv: 0,
                    prior_bits: 0,
                },
            );
            let node = &mut self.nodes[parent as usize];
            node.edges_at = new_at as u32;
            node.edges_cap = new_cap;
        }
        let node = &mut self.nodes[parent as usize];
        let slot = node.edges_len;
        node.edges_len += 1;
        let at = node.edges_at as usize;
        self.edges[at + slot as usize] = Edge {
            child,
            visits: 0,
            mv,
            prior_bits: to_bf16(prior),
        };
        slot
    }

    /// Marks a node as a finished game.
    pub fn set_terminal(&mut self, n: u32, eval: Eval) {
        let node = &mut self.nodes[n as usize];
        node.state = State::Terminal;
        node.eval = eval;
    }

    /// The subtree value-bias entry for `key`, made if needed, now used by one more node.
    pub fn bias_entry(&mut self, key: u128) -> u32 {
        let next = self.bias.len() as u32;
        let idx = *self.bias_index.entry(key).or_insert(next);
        if idx == next {
            self.bias.push(BiasEntry::default());
        }
        self.bias[idx as usize].users += 1;
        idx
    }

    /// The bias entry with index `i`.
    pub fn bias(&self, i: u32) -> &BiasEntry {
        &self.bias[i as usize]
    }

    pub(crate) fn bias_mut(&mut self, i: u32) -> &mut BiasEntry {
        &mut self.bias[i as usize]
    }

    /// Keeps only what `new_root` reaches, compacted into fresh arrays (tree reuse).
    /// Each dropped node takes back `bias_free_prop` of what it put into its bias entry
    /// (KataGo keeps the rest: what a discarded line taught still says something about
    /// the shape); entries no kept node uses are dropped.
    pub fn reroot(&mut self, new_root: u32, bias_free_prop: f64) {
        let mut map = vec![NONE; self.nodes.len()];
        let mut order = Vec::with_capacity(self.nodes.len());
        map[new_root as usize] = 0;
        order.push(new_root);
        let mut i = 0;
        while i < order.len() {
            let old = order[i];
            for e in self.edges_of(old) {
                if map[e.child as usize] == NONE {
                    map[e.child as usize] = order.len() as u32;
                    order.push(e.child);
                }
            }
            i += 1;
        }
        // Dropped nodes give back their bias contributions.
        for (old, node) in self.nodes.iter().enumerate() {
            if map[old] == NONE && node.bias != NONE {
                let e = &mut self.bias[node.bias as usize];
                e.delta_sum -= node.bias_delta * bias_free_prop;
                e.weight_sum -= node.bias_weight * bias_free_prop;
                e.users -= 1;
            }
        }
        let mut bias_map = vec![NONE; self.bias.len()];
        let mut bias = Vec::new();
        let mut bias_index = KeyMap::default();
        for (key, &idx) in &self.bias_index {
            let e = self.bias[idx as usize];
            if e.users > 0 {
                bias_map[idx as usize] = bias.len() as u32;
                bias_index.insert(*key, bias.len() as u32);
                bias.push(e);
            }
        }

        let mut nodes = Vec::with_capacity(order.len());
        let mut edges = Vec::with_capacity(self.edges.len() / 2);
        let mut priors = Vec::with_capacity(self.priors.len() / 2);
        let mut table = KeyMap::default();
        let mut center_liberties = HashMap::new();
        for (new, &old) in order.iter().enumerate() {
            let mut node = self.nodes[old as usize].clone();
            let at = priors.len() as u32;
            priors.extend_from_slice(self.priors_of(old));
            node.priors_at = at;
            let e_at = edges.len() as u32;
            edges.extend(self.edges_of(old).iter().map(|e| Edge {
                child: map[e.child as usize],
                ..*e
            }));
            node.edges_at = e_at;
            node.edges_cap = node.edges_len;
            node.virtual_losses = 0;
            if node.state == State::InFlight {
                node.state = State::Fresh;
            }
            if node.bias != NONE {
                node.bias = bias_map[node.bias as usize];
            }
            if new != 0 && node.hash != 0 {
                table.insert(node.hash, new as u32);
            }
            if let Some(l) = self.center_liberties.remove(&old) {
                center_liberties.insert(new as u32, l);
            }
            nodes.push(node);
        }
        self.nodes = nodes;
        self.edges = edges;
        self.priors = priors;
        self.table = table;
        self.bias = bias;
        self.bias_index = bias_index;
        self.center_liberties = center_liberties;
    }

    /// Nodes reachable from the root in post-order (children before parents), each once.
    pub fn post_order(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut seen = vec![false; self.nodes.len()];
        // (node, next edge to look at)
        let mut stack = vec![(0u32, 0usize)];
        seen[0] = true;
        while let Some(&mut (n, ref mut k)) = stack.last_mut() {
            let edges = self.edges_of(n);
            if *k < edges.len() {
                let c = edges[*k].child;
                *k += 1;
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    stack.push((c, 0));
                }
            } else {
                out.push(n);
                stack.pop();
            }
        }
        out
    }

    /// Bytes the arrays hold (for memory reports).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.edges.capacity() * std::mem::size_of::<Edge>()
            + self.priors.capacity() * std::mem::size_of::<Prior>()
            + self.table.capacity() * (std::mem::size_of::<(u128, u32)>() + 1)
    }

    /// Nodes shared through the graph table (for tests and reports).
    pub fn shared_nodes(&self) -> usize {
        self.table.len()
    }
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
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
    fn priors_round_to_three_digits() {
        for &p in &[1.0f32, 0.5, 0.123_456, 1e-3, 3.3e-5, 0.0] {
            let q = Prior::new(7, p).p();
            assert!((q - p).abs() <= p * 4e-3, "{p} -> {q}");
        }
    }

    #[test]
    fn a_shared_position_is_one_node_with_an_edge_from_each_parent() {
        let mut t = Tree::new();
        let (a, found) = t.node_for(Some(11), Player::White);
        assert!(!found);
        let (b, _) = t.node_for(Some(12), Player::White);
        t.add_edge(0, 1, 0.5, a);
        t.add_edge(0, 2, 0.5, b);
        let (c1, _) = t.node_for(Some(99), Player::Black);
        let (c2, found) = t.node_for(Some(99), Player::Black);
        assert!(found);
        assert_eq!(c1, c2);
        t.add_edge(a, 3, 1.0, c1);
        t.add_edge(b, 4, 1.0, c2);
        assert_eq!(t.shared_nodes(), 3);
        // The same hash with the other player to move is another node.
        let (d, found) = t.node_for(Some(99), Player::White);
        assert!(!found);
        assert_ne!(d, c1);
        // Post-order lists the shared node once, before both parents.
        let order = t.post_order();
        assert_eq!(order.iter().filter(|&&n| n == c1).count(), 1);
        let pos = |n| order.iter().position(|&m| m == n).unwrap();
        assert!(pos(c1) < pos(a) && pos(c1) < pos(b) && pos(0) == order.len() - 1);
    }

    #[test]
    fn edges_grow_in_place_order_and_survive_rerooting() {
        let mut t = Tree::new();
        let (a, _) = t.node_for(Some(1), Player::White);
        t.add_edge(0, 5, 0.9, a);
        let mut kids = Vec::new();
        for mv in 0..9u16 {
            let (c, _) = t.node_for(Some(100 + u128::from(mv)), Player::Black);
            t.add_edge(a, mv, 0.1, c);
            kids.push(c);
        }
        // One grandchild reached from two children.
        let (g, _) = t.node_for(Some(500), Player::White);
        t.add_edge(kids[0], 40, 1.0, g);
        t.add_edge(kids[1], 41, 1.0, g);
        t.edge_mut(a, 3).visits = 7;
        let e: Vec<u16> = t.edges_of(a).iter().map(|e| e.mv).collect();
        assert_eq!(e, (0..9).collect::<Vec<_>>());
        t.reroot(a, 0.8);
        assert_eq!(t.nodes.len(), 11);
        assert_eq!(t.edges_of(0).len(), 9);
        assert_eq!(t.edge(0, 3).visits, 7);
        let g1 = t.edges_of(t.edge(0, 0).child)[0].child;
        let g2 = t.edges_of(t.edge(0, 1).child)[0].child;
        assert_eq!(g1, g2, "the shared grandchild stays shared");
        // The table knows the kept nodes under their new indices, not the dropped ones.
        assert_eq!(t.node_for(Some(500), Player::White), (g1, true));
        assert!(!t.node_for(Some(1), Player::White).1);
    }

    #[test]
    fn dropped_nodes_give_back_part_of_their_bias() {
        let mut t = Tree::new();
        let (a, _) = t.node_for(Some(1), Player::White);
        let (b, _) = t.node_for(Some(2), Player::White);
        t.add_edge(0, 1, 0.5, a);
        t.add_edge(0, 2, 0.5, b);
        let ea = t.bias_entry(77);
        let eb = t.bias_entry(77);
        assert_eq!(ea, eb);
        t.nodes[a as usize].bias = ea;
        t.nodes[b as usize].bias = eb;
        for n in [a, b] {
            t.nodes[n as usize].bias_delta = 1.0;
            t.nodes[n as usize].bias_weight = 2.0;
        }
        t.bias_mut(ea).delta_sum = 2.0;
        t.bias_mut(ea).weight_sum = 4.0;
        t.reroot(a, 0.8);
        let e = t.bias(t.root().bias);
        assert!((e.delta_sum - 1.2).abs() < 1e-12 && (e.weight_sum - 2.4).abs() < 1e-12);
        assert_eq!(e.users, 1);
    }
}
