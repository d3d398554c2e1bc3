//! Snapshots of a search, taken at any moment without stopping it, the move choice
//! (LCB or visits, optionally with temperature) and resignation.
//!
//! Every value is from White's point of view (winrate = White's win probability, scores
//! White minus Black); `lcb` and `utility_lcb` are the player to move's lower bounds written
//! in White's terms, so flipping a field to the mover's view gives the mover's bound.

use tengen_rules::{BoardSize, Game, Move, Player};

use crate::filter::index_move;
use crate::params::SearchParams;
use crate::search::{Inner, Run, Search};
use crate::tree::{Node, Tree};
use crate::utility::UtilityFn;

/// What a snapshot includes beyond the basics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotOptions {
    /// Longest principal variation per move.
    pub pv_len: usize,
    /// Ownership mean and stdev for the root.
    pub ownership: bool,
    /// Ownership mean and stdev after each root move.
    pub moves_ownership: bool,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            pv_len: 15,
            ownership: false,
            moves_ownership: false,
        }
    }
}

/// The root's searched and raw values.
#[derive(Clone, Debug, PartialEq)]
pub struct RootInfo {
    /// The player to move.
    pub current_player: Player,
    /// Root visits.
    pub visits: u64,
    /// White's win probability after search (draws and no results count half).
    pub winrate: f64,
    /// Expected score after search.
    pub score_mean: f64,
    /// Stdev of the score after search.
    pub score_stdev: f64,
    /// Expected lead after search.
    pub score_lead: f64,
    /// Expected self-play score (the score mean).
    pub score_selfplay: f64,
    /// Mean utility.
    pub utility: f64,
    /// The network's win probability for White at the root.
    pub raw_winrate: f64,
    /// The network's lead.
    pub raw_lead: f64,
    /// The network's score mean.
    pub raw_score_selfplay: f64,
    /// The network's score stdev.
    pub raw_score_selfplay_stdev: f64,
    /// The network's no-result probability.
    pub raw_no_result_prob: f64,
    /// The network's remaining-time estimate (-1 if the model has none).
    pub raw_var_time_left: f64,
    /// The network's short-term win/loss error estimate (-1 if none).
    pub raw_st_wr_error: f64,
    /// The network's short-term score error estimate (-1 if none).
    pub raw_st_score_error: f64,
    /// Hash of the position and player to move.
    pub this_hash: u128,
    /// The same hash made independent of the board's symmetries.
    pub sym_hash: u128,
}

/// One root move's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveInfo {
    /// The move.
    pub mv: Move,
    /// Visits of the move's subtree.
    pub visits: u64,
    /// Visits through the root's edge to this move (fewer than `visits` when the
    /// position after it was also reached by another move order).
    pub edge_visits: u64,
    /// White's win probability.
    pub winrate: f64,
    /// Expected score.
    pub score_mean: f64,
    /// Stdev of the score.
    pub score_stdev: f64,
    /// Expected lead.
    pub score_lead: f64,
    /// Expected self-play score.
    pub score_selfplay: f64,
    /// The (root-shaped) prior.
    pub prior: f64,
    /// Mean utility.
    pub utility: f64,
    /// The mover's winrate lower bound, in White's terms.
    pub lcb: f64,
    /// The mover's utility lower bound, in White's terms.
    pub utility_lcb: f64,
    /// Rank in the move choice (0 = the move that would be played).
    pub order: usize,
    /// Principal variation starting with this move.
    pub pv: Vec<Move>,
    /// Visits of each node of the PV (KataGo's `pvVisits`).
    pub pv_visits: Vec<u64>,
    /// Visits through each edge of the PV (`pvEdgeVisits`): fewer than the node's when
    /// graph search also reaches it by another move order.
    pub pv_edge_visits: Vec<u64>,
    /// Ownership after this move (White = +1), if asked for.
    pub ownership: Option<Vec<f32>>,
    /// Its stdev.
    pub ownership_stdev: Option<Vec<f32>>,
}

/// A snapshot of the search.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The board size searched.
    pub size: BoardSize,
    /// Root values.
    pub root: RootInfo,
    /// Root moves with visits, in choice order.
    pub moves: Vec<MoveInfo>,
    /// Root ownership (White = +1), if asked for.
    pub ownership: Option<Vec<f32>>,
    /// Its stdev.
    pub ownership_stdev: Option<Vec<f32>>,
}

impl Analysis {
    /// The move the search would play now.
    pub fn best_move(&self) -> Option<Move> {
        self.moves.first().map(|m| m.mv)
    }

    /// A move drawn with probability proportional to visits^(1/temperature) (0 = the best move).
    pub fn choose_move(&self, temperature: f64, rng: &mut fastrand::Rng) -> Option<Move> {
        if temperature <= 1e-4 || self.moves.len() < 2 {
            return self.best_move();
        }
        let max = self.moves.iter().map(|m| m.visits).max()? as f64;
        let weights: Vec<f64> = self
            .moves
            .iter()
            .map(|m| (m.visits as f64 / max).powf(1.0 / temperature))
            .collect();
        let total: f64 = weights.iter().sum();
        let mut r = rng.f64() * total;
        for (m, w) in self.moves.iter().zip(&weights) {
            if r < *w {
                return Some(m.mv);
            }
            r -= w;
        }
        self.best_move()
    }

    /// The root winrate of the player to move.
    pub fn mover_winrate(&self) -> f64 {
        match self.root.current_player {
            Player::White => self.root.winrate,
            Player::Black => 1.0 - self.root.winrate,
        }
    }

    /// The root lead of the player to move.
    pub fn mover_lead(&self) -> f64 {
        match self.root.current_player {
            Player::White => self.root.score_lead,
            Player::Black => -self.root.score_lead,
        }
    }
}

/// Decides resignation: the mover's winrate stays below a threshold for several turns.
#[derive(Clone, Debug, PartialEq)]
pub struct ResignTracker {
    /// Resign below this winrate of the mover.
    pub threshold: f64,
    /// ...for this many of our consecutive turns.
    pub consecutive_turns: u32,
    /// ...and only when behind by at least this many points.
    pub min_lead_deficit: f64,
    count: u32,
}

impl Default for ResignTracker {
    fn default() -> Self {
        ResignTracker::new(0.05, 3, 0.0)
    }
}

impl ResignTracker {
    /// A tracker with these thresholds.
    pub fn new(threshold: f64, consecutive_turns: u32, min_lead_deficit: f64) -> ResignTracker {
        ResignTracker {
            threshold,
            consecutive_turns,
            min_lead_deficit,
            count: 0,
        }
    }

    /// Records one of our turns' analysis; true if we should resign now.
    pub fn observe(&mut self, a: &Analysis) -> bool {
        let losing = a.mover_winrate() < self.threshold && -a.mover_lead() >= self.min_lead_deficit;
        self.count = if losing { self.count + 1 } else { 0 };
        self.consecutive_turns > 0 && self.count >= self.consecutive_turns
    }

    /// Forgets the streak (new game, undo).
    pub fn reset(&mut self) {
        self.count = 0;
    }
}

impl Search {
    /// The root's visit distribution as a policy training target, with forced playouts
    /// taken back (KataGo paper §5.3): every move but the most visited loses the visits
    /// PUCT would not have given it by itself, up to its forced share sqrt(k·P·N), and a
    /// move left with at most one visit is dropped. Normalised; `None` before a search.
    pub fn policy_target(&self) -> Option<Vec<(Move, f64)>> {
        self.with_tree(|inner, run, game| {
            let params = self.params();
            let tree = &inner.tree;
            let size = game.board().size();
            let sign = if game.to_move() == Player::White {
                1.0
            } else {
                -1.0
            };
            let kids: Vec<(&Node, &crate::tree::Edge)> = tree
                .edges_of(0)
                .iter()
                .map(|e| (&tree.nodes[e.child as usize], e))
                .filter(|(_, e)| e.visits > 0)
                .collect();
            let &(best, best_edge) = kids.iter().max_by_key(|(_, e)| e.visits)?;
            let total: f64 = kids.iter().map(|(_, e)| f64::from(e.visits)).sum();
            let utility = run
                .map(|r| r.utility)
                .unwrap_or_else(|| crate::utility::UtilityFn::new(params, size.area(), 0.0));
            let scale = tree.root_explore_scale(params, &utility);
            let puct = |n: &Node, prior: f64, visits: f64| {
                sign * n.utility() + scale * prior / (1.0 + visits)
            };
            let best_value = puct(
                best,
                f64::from(best_edge.prior()),
                f64::from(best_edge.visits),
            );
            let mut out = Vec::new();
            for (n, e) in &kids {
                let v = f64::from(e.visits);
                let prior = f64::from(e.prior());
                let kept = if std::ptr::eq(*e, best_edge) || params.forced_playouts_k <= 0.0 {
                    v
                } else {
                    let forced = (params.forced_playouts_k * prior * total).sqrt();
                    // The fewest visits at which this move would still not outrank the best.
                    let gap = best_value - sign * n.utility();
                    let needed = if gap > 0.0 {
                        (scale * prior / gap - 1.0).max(0.0)
                    } else {
                        v
                    };
                    let k = (v - forced).max(needed.ceil()).min(v);
                    if k <= 1.0 {
                        0.0
                    } else {
                        k
                    }
                };
                if kept > 0.0 {
                    out.push((index_move(size, usize::from(e.mv)), kept));
                }
            }
            let sum: f64 = out.iter().map(|p| p.1).sum();
            out.iter_mut().for_each(|p| p.1 /= sum);
            Some(out)
        })
        .flatten()
    }

    /// A snapshot of the search (running or not); `None` before a position is set or the
    /// root is evaluated.
    pub fn analysis(&self, opts: &SnapshotOptions) -> Option<Analysis> {
        self.with_tree(|inner, run, game| build(inner, run, game, self.params(), opts))
            .flatten()
    }
}

fn build(
    inner: &Inner,
    run: Option<&Run>,
    game: &Game,
    params: &SearchParams,
    opts: &SnapshotOptions,
) -> Option<Analysis> {
    let raw = inner.root_eval.as_ref()?;
    let tree = &inner.tree;
    let root = tree.root();
    if root.stats.visits == 0 {
        return None;
    }
    let size = game.board().size();
    let pla = game.to_move();
    let sign = if pla == Player::White { 1.0 } else { -1.0 };
    let s = &root.stats;
    let raw_stdev = (f64::from(raw.white_score_mean_sq) - f64::from(raw.white_score_mean).powi(2))
        .max(0.0)
        .sqrt();
    let root_info = RootInfo {
        current_player: pla,
        visits: u64::from(s.visits),
        winrate: 0.5 * (1.0 + s.winloss),
        score_mean: s.score,
        score_stdev: (s.score_sq - s.score * s.score).max(0.0).sqrt(),
        score_lead: s.lead,
        score_selfplay: s.score,
        utility: s.utility,
        raw_winrate: f64::from(raw.white_win) + 0.5 * f64::from(raw.no_result),
        raw_lead: f64::from(raw.white_lead),
        raw_score_selfplay: f64::from(raw.white_score_mean),
        raw_score_selfplay_stdev: raw_stdev,
        raw_no_result_prob: f64::from(raw.no_result),
        raw_var_time_left: f64::from(raw.var_time_left),
        raw_st_wr_error: f64::from(raw.shortterm_winloss_error),
        raw_st_score_error: f64::from(raw.shortterm_score_error),
        this_hash: game.situation_hash(),
        sym_hash: symmetric_hash(game),
    };

    let fallback;
    let utility = match run {
        Some(r) => &r.utility,
        None => {
            fallback = UtilityFn::new(params, size.area(), 0.0);
            &fallback
        }
    };
    let bonus: &[f32] = run.map_or(&[], |r| &r.root_bonus);
    let choice = choose(tree, params, utility, bonus);
    let mut moves = Vec::new();
    for (slot, e) in tree.edges_of(0).iter().enumerate() {
        let node = &tree.nodes[e.child as usize];
        if e.visits == 0 || node.stats.visits == 0 {
            continue;
        }
        let m = &node.stats;
        let (lcb, radius) = choice.lcb[slot];
        let winrate = 0.5 * (1.0 + m.winloss);
        let (pv, pv_visits, pv_edge_visits) = principal_variation(tree, e, opts.pv_len, size);
        let (ownership, ownership_stdev) = if opts.moves_ownership {
            inner
                .own_children
                .iter()
                .find(|(mv, _)| *mv == e.mv)
                .and_then(|(_, acc)| acc.mean_stdev())
                .map_or((None, None), |(a, b)| (Some(a), Some(b)))
        } else {
            (None, None)
        };
        // The bound in White's terms: the mover's bound turned back.
        let utility_lcb = sign * lcb;
        moves.push((
            choice.values[slot],
            MoveInfo {
                mv: index_move(size, usize::from(e.mv)),
                visits: u64::from(m.visits),
                edge_visits: u64::from(e.visits),
                winrate,
                score_mean: m.score,
                score_stdev: (m.score_sq - m.score * m.score).max(0.0).sqrt(),
                score_lead: m.lead,
                score_selfplay: m.score,
                prior: f64::from(e.prior()),
                utility: m.utility,
                lcb: winrate - sign * 0.5 * radius,
                utility_lcb,
                order: 0,
                pv,
                pv_visits,
                pv_edge_visits,
                ownership,
                ownership_stdev,
            },
        ));
    }
    moves.sort_by(|(va, a), (vb, b)| {
        vb.total_cmp(va)
            .then(b.edge_visits.cmp(&a.edge_visits))
            .then(b.prior.total_cmp(&a.prior))
    });
    let mut moves: Vec<MoveInfo> = moves.into_iter().map(|(_, m)| m).collect();
    for (i, m) in moves.iter_mut().enumerate() {
        m.order = i;
    }
    let (ownership, ownership_stdev) = if opts.ownership {
        inner
            .own_root
            .mean_stdev()
            .map_or((None, None), |(a, b)| (Some(a), Some(b)))
    } else {
        (None, None)
    };
    Some(Analysis {
        size,
        root: root_info,
        moves,
        ownership,
        ownership_stdev,
    })
}

/// The root's move choice (KataGo's play selection values), per edge slot.
struct Choice {
    /// How strongly each move is chosen: its weight, less what PUCT gave it beyond what it
    /// would have wanted in hindsight, the LCB's choice raised above the rest.
    values: Vec<f64>,
    /// Each move's utility lower bound for the mover and the bound's radius.
    lcb: Vec<(f64, f64)>,
}

/// Computes the root's play selection values: KataGo's move choice.
fn choose(tree: &Tree, params: &SearchParams, utility: &UtilityFn, bonus: &[f32]) -> Choice {
    let edges = tree.edges_of(0);
    let root = tree.root();
    let sign = if root.next_player == Player::White {
        1.0
    } else {
        -1.0
    };
    let mut values: Vec<f64> = edges
        .iter()
        .map(|e| tree.nodes[e.child as usize].stats.child_weight(e.visits))
        .collect();
    let n = edges.len();
    let mut lcb = vec![(f64::NEG_INFINITY, 0.0); n];
    if n == 0 {
        return Choice { values, lcb };
    }
    // The most weighted child, discounting one visit's worth (the latest may be overweighted)
    // and nudged by policy, so that very low visit counts behave.
    let goodness = |i: usize| {
        let ev = f64::from(edges[i].visits);
        values[i] * (ev - 1.0).max(0.0) / ev.max(1.0) + 2.0 * f64::from(edges[i].prior())
    };
    let best = (0..n)
        .max_by(|&a, &b| goodness(a).total_cmp(&goodness(b)))
        .unwrap_or(0);
    let best_weight = values[best];
    // Take back from every other move the weight PUCT spent on it beyond what, seeing its
    // value now, it would have wanted next to the best move.
    let (mass, total, _) = tree.child_totals(0);
    let _ = mass;
    let scale = tree.explore(0, params, utility, 1.0, total).scale;
    let value_of = |i: usize| {
        let c = &tree.nodes[edges[i].child as usize];
        tree.child_utility(0, c, edges[i].mv, utility, bonus)
    };
    if let Some(bu) = value_of(best) {
        let best_select = scale * f64::from(edges[best].prior()) / (1.0 + best_weight) + sign * bu;
        for i in 0..n {
            if i == best {
                continue;
            }
            let Some(u) = value_of(i) else {
                values[i] = 0.0;
                continue;
            };
            let explore = best_select - sign * u;
            let wanted = if explore <= 0.0 {
                1e100
            } else {
                (scale * f64::from(edges[i].prior()) / explore - 1.0).max(0.0)
            };
            if values[i] > wanted {
                values[i] = wanted.ceil();
            }
        }
    }
    // The lower confidence bound on each move's utility for the mover, from its weighted
    // samples' effective size, with a small prior that the spread is as wide as it can be.
    let range = params.utility_radius();
    for (i, e) in edges.iter().enumerate() {
        let c = &tree.nodes[e.child as usize];
        let wide = 2.0 * range * params.lcb_stdevs;
        lcb[i] = (-wide, wide);
        let mut w = c.stats.child_weight(e.visits);
        let mut wsq = c.stats.child_weight_sq(e.visits);
        let Some(u) = value_of(i) else {
            continue;
        };
        if w <= 0.0 || wsq <= 0.0 {
            continue;
        }
        let ess = w * w / wsq;
        let prior_weight = w / (ess * ess * ess);
        let avg = c.stats.utility;
        let mut sq = c.stats.utility_sq.max(avg * avg + 1e-8);
        sq = (sq * w + (sq + range * range) * prior_weight) / (w + prior_weight);
        w += prior_weight;
        wsq += prior_weight * prior_weight;
        let ess = w * w / wsq;
        let radius = params.lcb_stdevs * ((sq - avg * avg).max(0.0) / ess).sqrt();
        lcb[i] = (sign * u - radius, radius);
    }
    if params.use_lcb_for_selection {
        let eligible =
            |i: usize| values[i] > 0.0 && values[i] >= params.min_visit_prop_for_lcb * best_weight;
        if let Some(top) = (0..n)
            .filter(|&i| eligible(i))
            .max_by(|&a, &b| lcb[a].0.total_cmp(&lcb[b].0))
        {
            // The best bound gets at least the weight each other move would need for its
            // bound to be as wide as the gap between them (never more than 25 times).
            let mut raised = values[top];
            for i in 0..n {
                let excess = lcb[top].0 - lcb[i].0;
                if i == top || excess < 0.0 {
                    continue;
                }
                let radius = lcb[i].1;
                let factor = (radius + excess) / (radius + 0.2 * excess);
                raised = raised.max(factor * factor * values[i]);
            }
            values[top] = raised;
        }
    }
    Choice { values, lcb }
}

/// The most-visited line from the root's edge `first`, with the visits of its nodes and of
/// its edges.
fn principal_variation(
    tree: &Tree,
    first: &crate::tree::Edge,
    len: usize,
    size: BoardSize,
) -> (Vec<Move>, Vec<u64>, Vec<u64>) {
    let node_visits = |e: &crate::tree::Edge| u64::from(tree.nodes[e.child as usize].stats.visits);
    let mut pv = vec![index_move(size, usize::from(first.mv))];
    let mut visits = vec![node_visits(first)];
    let mut edge_visits = vec![u64::from(first.visits)];
    let mut n = first.child;
    while pv.len() < len.max(1) {
        let next = tree.edges_of(n).iter().max_by(|a, b| {
            a.visits
                .cmp(&b.visits)
                .then(a.prior().total_cmp(&b.prior()))
        });
        match next {
            Some(e) if e.visits > 0 => {
                pv.push(index_move(size, usize::from(e.mv)));
                visits.push(node_visits(e));
                edge_visits.push(u64::from(e.visits));
                n = e.child;
            }
            _ => break,
        }
    }
    (pv, visits, edge_visits)
}

/// A hash of the stones, player to move and ko point that is the same for all symmetric
/// copies of the position: the smallest of its hashes over the board's symmetries.
fn symmetric_hash(game: &Game) -> u128 {
    let board = game.board();
    let size = board.size();
    let (w, h) = (size.width(), size.height());
    let syms: &[u8] = if w == h {
        &[0, 1, 2, 3, 4, 5, 6, 7]
    } else {
        &[0, 1, 2, 3]
    };
    let ko = board.ko();
    syms.iter()
        .map(|&s| {
            let mut acc: u128 =
                mix(((w as u64) << 8 | h as u64) ^ (game.to_move().index() as u64) << 20);
            for loc in size.points() {
                let (x, y) = size.xy(loc);
                let (mut tx, mut ty) = (x, y);
                if s & 1 != 0 {
                    ty = h - 1 - ty;
                }
                if s & 2 != 0 {
                    tx = w - 1 - tx;
                }
                if s & 4 != 0 {
                    std::mem::swap(&mut tx, &mut ty);
                }
                let t = (ty * 32 + tx) as u64;
                let code = match board.stone(loc) {
                    Some(p) => p.index() as u64 + 1,
                    None if Some(loc) == ko => 3,
                    None => continue,
                };
                acc = acc.wrapping_add(mix(t << 2 | code));
            }
            acc
        })
        .min()
        .unwrap_or(0)
}

/// A 128-bit mix of a 64-bit key (two rounds of splitmix64).
fn mix(k: u64) -> u128 {
    let r = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let a = r(k);
    (u128::from(a) << 64) | u128::from(r(a ^ 0x5851_F42D_4C95_7F2D))
}
