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
use crate::tree::Tree;

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
    /// Visits through this edge (equal to `visits`: the tree has no transpositions).
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
    /// Visits of each node of the PV.
    pub pv_visits: Vec<u64>,
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
        self.with_tree(|inner, _, game| {
            let params = self.params();
            let tree = &inner.tree;
            let size = game.board().size();
            let sign = if game.to_move() == Player::White {
                1.0
            } else {
                -1.0
            };
            let kids: Vec<&crate::tree::Node> = tree
                .children(0)
                .map(|c| &tree.nodes[c as usize])
                .filter(|n| n.visits > 0)
                .collect();
            let best = kids.iter().max_by_key(|n| n.visits)?;
            let total: f64 = kids.iter().map(|n| f64::from(n.visits)).sum();
            let scale = tree.root_explore_scale(params);
            let puct = |n: &crate::tree::Node, visits: f64| {
                sign * n.utility() + scale * f64::from(n.prior) / (1.0 + visits)
            };
            let best_value = puct(best, f64::from(best.visits));
            let mut out = Vec::new();
            for n in &kids {
                let v = f64::from(n.visits);
                let kept = if std::ptr::eq(*n, *best) || params.forced_playouts_k <= 0.0 {
                    v
                } else {
                    let forced = (params.forced_playouts_k * f64::from(n.prior) * total).sqrt();
                    // The fewest visits at which this move would still not outrank the best.
                    let gap = best_value - sign * n.utility();
                    let needed = if gap > 0.0 {
                        (scale * f64::from(n.prior) / gap - 1.0).max(0.0)
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
                    out.push((index_move(size, usize::from(n.mv)), kept));
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
    _run: Option<&Run>,
    game: &Game,
    params: &SearchParams,
    opts: &SnapshotOptions,
) -> Option<Analysis> {
    let raw = inner.root_eval.as_ref()?;
    let tree = &inner.tree;
    let root = tree.root();
    if root.visits == 0 {
        return None;
    }
    let size = game.board().size();
    let pla = game.to_move();
    let sign = if pla == Player::White { 1.0 } else { -1.0 };
    let n = f64::from(root.visits);
    let s = &root.sums;
    let score_mean = s.score / n;
    let raw_stdev = (f64::from(raw.white_score_mean_sq) - f64::from(raw.white_score_mean).powi(2))
        .max(0.0)
        .sqrt();
    let root_info = RootInfo {
        current_player: pla,
        visits: u64::from(root.visits),
        winrate: 0.5 * (1.0 + s.winloss / n),
        score_mean,
        score_stdev: (s.score_sq / n - score_mean * score_mean).max(0.0).sqrt(),
        score_lead: s.lead / n,
        score_selfplay: score_mean,
        utility: s.utility / n,
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

    let mut moves = Vec::new();
    let mut max_visits = 0u32;
    for c in tree.children(0) {
        max_visits = max_visits.max(tree.nodes[c as usize].visits);
    }
    for c in tree.children(0) {
        let node = &tree.nodes[c as usize];
        if node.visits == 0 {
            continue;
        }
        let v = f64::from(node.visits);
        let m = &node.sums;
        let u = m.utility / v;
        let radius = if node.visits >= 2 {
            let var = (m.utility_sq / v - u * u).max(1e-8);
            params.lcb_stdevs * (var / v).sqrt()
        } else {
            // One visit says nothing about spread: a bound as wide as utility itself.
            2.0 * params.utility_radius()
        };
        let winrate = 0.5 * (1.0 + m.winloss / v);
        let mean = m.score / v;
        let (pv, pv_visits) = principal_variation(tree, c, opts.pv_len, size);
        let (ownership, ownership_stdev) = if opts.moves_ownership {
            inner
                .own_children
                .iter()
                .find(|(mv, _)| *mv == node.mv)
                .and_then(|(_, acc)| acc.mean_stdev())
                .map_or((None, None), |(a, b)| (Some(a), Some(b)))
        } else {
            (None, None)
        };
        moves.push(MoveInfo {
            mv: index_move(size, usize::from(node.mv)),
            visits: u64::from(node.visits),
            edge_visits: u64::from(node.visits),
            winrate,
            score_mean: mean,
            score_stdev: (m.score_sq / v - mean * mean).max(0.0).sqrt(),
            score_lead: m.lead / v,
            score_selfplay: mean,
            prior: f64::from(node.prior),
            utility: u,
            lcb: winrate - sign * 0.5 * radius,
            utility_lcb: u - sign * radius,
            order: 0,
            pv,
            pv_visits,
            ownership,
            ownership_stdev,
        });
    }
    order_moves(&mut moves, params, sign, max_visits);
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

/// Sorts moves into choice order: with LCB, the moves with enough visits by the mover's
/// utility LCB, then the rest by visits; without, by visits then prior.
fn order_moves(moves: &mut [MoveInfo], params: &SearchParams, sign: f64, max_visits: u32) {
    let min = (params.min_visit_prop_for_lcb * f64::from(max_visits)).max(2.0);
    let eligible = |m: &MoveInfo| params.use_lcb_for_selection && m.visits as f64 >= min;
    moves.sort_by(|a, b| {
        let (ea, eb) = (eligible(a), eligible(b));
        eb.cmp(&ea).then_with(|| {
            if ea && eb {
                (sign * b.utility_lcb).total_cmp(&(sign * a.utility_lcb))
            } else {
                b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior))
            }
        })
    });
    for (i, m) in moves.iter_mut().enumerate() {
        m.order = i;
    }
}

/// The most-visited line from root child `c`.
fn principal_variation(tree: &Tree, c: u32, len: usize, size: BoardSize) -> (Vec<Move>, Vec<u64>) {
    let mut pv = Vec::new();
    let mut visits = Vec::new();
    let mut n = c;
    while pv.len() < len.max(1) {
        let node = &tree.nodes[n as usize];
        if node.visits == 0 {
            break;
        }
        pv.push(index_move(size, usize::from(node.mv)));
        visits.push(u64::from(node.visits));
        let next = tree.children(n).max_by(|&a, &b| {
            let (x, y) = (&tree.nodes[a as usize], &tree.nodes[b as usize]);
            x.visits.cmp(&y.visits).then(x.prior.total_cmp(&y.prior))
        });
        match next {
            Some(k) if tree.nodes[k as usize].visits > 0 => n = k,
            _ => break,
        }
    }
    (pv, visits)
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
