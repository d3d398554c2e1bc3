//! The search driver: owns the tree and the root position, runs search threads in the
//! background or to a limit, reuses the tree when the game moves on, and answers
//! snapshots while it runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tengen_eval::{EvalError, InputParams, NnOutput, PolicyOptions, Symmetry};
use tengen_rules::{Game, Move, Outcome, Player};

use crate::backup::{self, BackupCtx, BackupScratch, Step};
use crate::ending;
use crate::evaluator::{EvalRequest, Evaluator};
use crate::filter::{index_move, move_index, FilterRule, MoveFilter};
use crate::keys;
use crate::mirror::{Hint, Mirror};
use crate::params::{Limits, SearchParams};
use crate::select::{Pick, Scratch, SelectCtx};
use crate::tree::{gaussian, Eval, Prior, State, Tree};
use crate::utility::UtilityFn;

/// Why a search could not run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SearchError {
    /// No position was set.
    #[error("no position to search")]
    NoPosition,
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A move stored in the tree could not be replayed (a bug, reported rather than hidden).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Counters of one search run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunStats {
    /// Playouts completed in this run (a fresh root's evaluation counts as the first).
    pub playouts: u64,
    /// Network (or other evaluator) requests made in this run.
    pub evaluations: u64,
    /// Descents that met a node another thread was evaluating.
    pub collisions: u64,
    /// Root visits now (reused visits included).
    pub root_visits: u64,
    /// Nodes in the tree.
    pub nodes: usize,
    /// Time since the run started.
    pub elapsed: Duration,
}

/// Running sums of ownership for one node (root or root child).
#[derive(Clone, Debug, Default)]
pub(crate) struct OwnAcc {
    pub sum: Vec<f64>,
    pub sum_sq: Vec<f64>,
    pub n: u32,
}

impl OwnAcc {
    fn add(&mut self, own: &[f32]) {
        if self.sum.len() != own.len() {
            self.sum = vec![0.0; own.len()];
            self.sum_sq = vec![0.0; own.len()];
            self.n = 0;
        }
        for ((s, q), &o) in self.sum.iter_mut().zip(self.sum_sq.iter_mut()).zip(own) {
            let o = f64::from(o);
            *s += o;
            *q += o * o;
        }
        self.n += 1;
    }

    /// Mean and stdev per point, or `None` before any sample.
    pub fn mean_stdev(&self) -> Option<(Vec<f32>, Vec<f32>)> {
        if self.n == 0 {
            return None;
        }
        let n = f64::from(self.n);
        let mean: Vec<f32> = self.sum.iter().map(|s| (s / n) as f32).collect();
        let stdev = self
            .sum
            .iter()
            .zip(&self.sum_sq)
            .map(|(s, q)| ((q / n) - (s / n) * (s / n)).max(0.0).sqrt() as f32)
            .collect();
        Some((mean, stdev))
    }
}

/// What the tree lock protects.
pub(crate) struct Inner {
    pub tree: Tree,
    pub root_eval: Option<Arc<NnOutput>>,
    pub own_root: OwnAcc,
    pub own_children: Vec<(u16, OwnAcc)>,
    pub error: Option<SearchError>,
    pub started: u64,
    pub completed: u64,
    pub evaluations: u64,
    pub collisions: u64,
}

/// The fixed facts of one run, shared by its threads.
pub(crate) struct Run {
    pub game: Arc<Game>,
    pub params: SearchParams,
    pub limits: Limits,
    pub start: Instant,
    pub utility: UtilityFn,
    pub filter: MoveFilter,
    /// The player the playout doubling advantage is for.
    pub advantaged: Player,
    /// The opponent's mirroring, when anti-mirror search is on and sees one.
    pub mirror: Option<Mirror>,
    /// Raised from outside (a daemon stopping): end the run at once.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Whether positions reached by different move orders share a node in this run (off
    /// when what a node holds depends on its path: filters below the root, anti-mirror).
    pub graph: bool,
    /// White's ending bonus per root move (see [`crate::ending`]); empty when none.
    pub root_bonus: Vec<f32>,
    /// Whether the network estimates its own short-term errors (uncertainty weighting).
    pub network_errors: bool,
}

impl Run {
    fn select_ctx(&self) -> SelectCtx<'_> {
        SelectCtx {
            params: &self.params,
            utility: &self.utility,
            mirror: self.mirror.as_ref(),
            root_bonus: &self.root_bonus,
            forced_k: self.params.forced_playouts_k,
        }
    }

    fn backup_ctx(&self) -> BackupCtx<'_> {
        BackupCtx {
            params: &self.params,
            utility: &self.utility,
            mirroring: self.mirror.is_some(),
        }
    }
}

struct Shared {
    evaluator: Arc<dyn Evaluator>,
    inner: Mutex<Inner>,
    stop: AtomicBool,
    /// Snapshots waiting for the lock. The lock is not fair: with a fast evaluator the
    /// search threads would take it back before a waiting snapshot ever got it, so they
    /// step aside while this is non-zero.
    readers_waiting: AtomicUsize,
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // Tree updates are small and self-contained; a panicked thread leaves them usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A Monte-Carlo tree search over one game, on one evaluator.
pub struct Search {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    params: SearchParams,
    game: Option<Arc<Game>>,
    filter_rules: Vec<FilterRule>,
    run: Option<Arc<Run>>,
    runs: u64,
    interrupt: Option<Arc<AtomicBool>>,
    /// The player the last run's playout doubling advantage was for.
    last_advantaged: Option<Player>,
    /// The mirroring player the last run saw, if any.
    last_mirroring: Option<Player>,
}

impl Search {
    /// A search with no position yet.
    pub fn new(evaluator: Arc<dyn Evaluator>, params: SearchParams) -> Search {
        Search {
            shared: Arc::new(Shared {
                evaluator,
                inner: Mutex::new(Inner {
                    tree: Tree::new(),
                    root_eval: None,
                    own_root: OwnAcc::default(),
                    own_children: Vec::new(),
                    error: None,
                    started: 0,
                    completed: 0,
                    evaluations: 0,
                    collisions: 0,
                }),
                stop: AtomicBool::new(false),
                readers_waiting: AtomicUsize::new(0),
            }),
            workers: Vec::new(),
            params,
            game: None,
            filter_rules: Vec::new(),
            run: None,
            runs: 0,
            interrupt: None,
            last_advantaged: None,
            last_mirroring: None,
        }
    }

    /// The parameters in use.
    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// Changes parameters (stops a running search; the tree is kept unless the change
    /// alters evaluations, such as a new playout doubling advantage).
    pub fn set_params(&mut self, params: SearchParams) {
        self.stop();
        if params.changes_evaluations(&self.params) {
            reset(&mut lock(&self.shared.inner));
        }
        self.params = params;
    }

    /// The root position, if set.
    pub fn game(&self) -> Option<&Game> {
        self.game.as_deref()
    }

    /// Ends every run early while `flag` is raised (a stopping daemon or a watchdog
    /// deadline must not wait for a long search); the move chosen so far still stands.
    pub fn set_interrupt(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.interrupt = flag;
    }

    /// Sets avoid/allow rules (stops a running search; clears the tree if they change).
    pub fn set_filter(&mut self, rules: Vec<FilterRule>) {
        self.stop();
        if rules != self.filter_rules {
            self.filter_rules = rules;
            self.clear_tree();
        }
    }

    /// Moves the root to `game`'s position, keeping the subtree of the moves played since
    /// the old root when `game` continues it (tree reuse), otherwise starting afresh.
    pub fn set_position(&mut self, game: &Game) {
        self.stop();
        let reusable = self.game.as_deref().and_then(|old| continuation(old, game));
        let mut inner = lock(&self.shared.inner);
        let mut kept = false;
        if let Some(extra) = reusable {
            let below_root_filter =
                MoveFilter::new(game.board().size(), &self.filter_rules).reaches_below_root();
            if !below_root_filter {
                kept = reuse(
                    &mut inner,
                    game,
                    &extra,
                    self.params.subtree_value_bias_free_prop,
                );
            }
        }
        if !kept {
            reset(&mut inner);
        }
        drop(inner);
        self.game = Some(Arc::new(game.clone()));
    }

    /// Forgets the evaluator's cached results.
    pub fn clear_cache(&self) {
        self.shared.evaluator.clear_cache();
    }

    /// Forgets the tree (the position stays).
    pub fn clear_tree(&mut self) {
        self.stop();
        reset(&mut lock(&self.shared.inner));
    }

    /// Starts searching in the background until `limits` or [`Search::stop`].
    pub fn start(&mut self, limits: Limits) -> Result<(), SearchError> {
        self.stop();
        // A finished game is searched as if play went on (KataGo's non-terminal root):
        // a move after the end reopens it, so GTP clients can play a cleanup.
        let game = self.game.clone().ok_or(SearchError::NoPosition)?;
        let run = self.prepare(game, limits)?;
        self.shared.stop.store(false, Ordering::SeqCst);
        self.runs += 1;
        for t in 0..self.params.threads.max(1) {
            let shared = self.shared.clone();
            let run = run.clone();
            let seed = self.params.seed
                ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ self.runs.wrapping_mul(0xD1B5_4A32_D192_ED03);
            let h = std::thread::Builder::new()
                .name(format!("search-{t}"))
                .spawn(move || worker(&shared, &run, seed))
                .map_err(|e| SearchError::Internal(format!("cannot start a search thread: {e}")))?;
            self.workers.push(h);
        }
        self.run = Some(run);
        Ok(())
    }

    /// Searches to `limits` and returns when done.
    pub fn run(&mut self, limits: Limits) -> Result<RunStats, SearchError> {
        self.start(limits)?;
        self.wait()
    }

    /// Waits for a background search to reach its limits.
    pub fn wait(&mut self) -> Result<RunStats, SearchError> {
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
        let mut inner = lock(&self.shared.inner);
        if let Some(e) = inner.error.take() {
            return Err(e);
        }
        drop(inner);
        Ok(self.stats())
    }

    /// Stops a background search (if any) and waits for its threads.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }

    /// True while search threads are running.
    pub fn is_running(&self) -> bool {
        self.workers.iter().any(|h| !h.is_finished())
    }

    /// Counters of the current or last run.
    pub fn stats(&self) -> RunStats {
        let inner = lock(&self.shared.inner);
        RunStats {
            playouts: inner.completed,
            evaluations: inner.evaluations,
            collisions: inner.collisions,
            root_visits: u64::from(inner.tree.root().stats.visits),
            nodes: inner.tree.nodes.len(),
            elapsed: self
                .run
                .as_ref()
                .map_or(Duration::ZERO, |r| r.start.elapsed()),
        }
    }

    /// Bytes held by the tree's arrays.
    pub fn tree_bytes(&self) -> usize {
        lock(&self.shared.inner).tree.heap_bytes()
    }

    /// Runs `f` on the tree and run facts under the lock (snapshots).
    pub(crate) fn with_tree<R>(
        &self,
        f: impl FnOnce(&Inner, Option<&Run>, &Game) -> R,
    ) -> Option<R> {
        let game = self.game.as_deref()?;
        self.shared.readers_waiting.fetch_add(1, Ordering::SeqCst);
        let inner = lock(&self.shared.inner);
        self.shared.readers_waiting.fetch_sub(1, Ordering::SeqCst);
        Some(f(&inner, self.run.as_deref(), game))
    }

    /// Evaluates and expands the root if needed, rebuilds its priors for this run (root
    /// temperature, noise, filters) and fixes the utility's score centre.
    fn prepare(&mut self, game: Arc<Game>, limits: Limits) -> Result<Arc<Run>, SearchError> {
        let params = self.params.clone();
        let size = game.board().size();
        let area = size.area();
        let filter = MoveFilter::new(size, &self.filter_rules);
        let pla = game.to_move();
        // The tree's evaluations were made for one advantaged player and one mirror
        // status; when either changes, they are stale (KataGo clears its tree too).
        let advantaged = params.advantaged_player(pla);
        let mirror = params.anti_mirror.then(|| Mirror::detect(&game)).flatten();
        let mirroring = mirror.map(|m| m.mirroring);
        if (params.playout_doubling_advantage != 0.0 && self.last_advantaged != Some(advantaged))
            || mirroring != self.last_mirroring
        {
            reset(&mut lock(&self.shared.inner));
        }
        self.last_advantaged = Some(advantaged);
        self.last_mirroring = mirroring;
        let mut rng =
            fastrand::Rng::with_seed(params.seed ^ self.runs.wrapping_mul(0xA076_1D64_78BD_642F));
        let inputs = Inputs {
            advantaged,
            mirror: mirror.as_ref(),
        };
        let root_out = evaluate_root(
            self.shared.evaluator.as_ref(),
            &game,
            &params,
            &inputs,
            &mut rng,
        )?;
        let mut inner = lock(&self.shared.inner);
        inner.evaluations += params.root_symmetries.clamp(1, 8) as u64;
        let expected = if inner.tree.root().stats.visits > 0 {
            inner.tree.root().stats.score
        } else {
            f64::from(root_out.white_score_mean)
        };
        let utility = UtilityFn::new(
            &params,
            area,
            UtilityFn::center_for(&params, area, expected),
        );
        let network_errors = root_out.shortterm_winloss_error >= 0.0;
        let root_eval = eval_of_output(&params, &utility, &root_out);

        let mut priors = Vec::with_capacity(area + 1);
        for (i, &p) in root_out.policy.iter().take(area + 1).enumerate() {
            if p >= 0.0 && filter.allows(pla, i, 0) {
                priors.push((i as u16, f64::from(p)));
            }
        }
        if priors.is_empty() {
            // Everything was filtered out: passing is always possible.
            priors.push((area as u16, 1.0));
        }
        shape_root_priors(&mut priors, &params, &mut rng);
        let mut priors: Vec<(u16, f32)> = priors.iter().map(|&(m, p)| (m, p as f32)).collect();
        let hint = mirror.map_or(Hint::None, |m| m.hint(&game));
        if let Some(m) = &mirror {
            m.bias_priors(&game, hint, &mut priors);
        }
        let priors: Vec<Prior> = priors.iter().map(|&(m, p)| Prior::new(m, p)).collect();
        let graph = params.use_graph_search && !filter.reaches_below_root() && mirror.is_none();
        let root_bonus = ending::root_bonus(
            &game,
            root_out.white_ownership.as_deref(),
            params.root_ending_bonus_points,
        );
        let run = Run {
            game: game.clone(),
            params,
            limits,
            start: Instant::now(),
            utility,
            filter,
            advantaged,
            mirror,
            interrupt: self.interrupt.clone(),
            graph,
            root_bonus,
            network_errors,
        };

        let fresh = inner.tree.root().state != State::Expanded;
        let ctx = run.backup_ctx();
        if fresh {
            inner.tree = Tree::new();
            inner.tree.nodes[0].hash =
                keys::graph_hash_from_scratch(&game, run.params.graph_search_rep_bound);
            inner.tree.expand(0, pla, root_eval, &priors);
            inner.tree.add_leaf_value(0, false, &ctx);
            if let Some(own) = &root_out.white_ownership {
                inner.own_root.add(own);
            }
        } else {
            let root = &mut inner.tree.nodes[0];
            root.next_player = pla;
            root.eval = root_eval;
            inner.tree.set_root_priors(&priors);
            // The reused values were backed up under the last search's utility (its score
            // centre): recompute them all under this one's.
            let mut scratch = BackupScratch::default();
            inner.tree.recompute_all(&ctx, &mut scratch);
        }
        inner.tree.nodes[0].mirror = hint.pack();
        let liberties = run
            .mirror
            .map_or_else(Vec::new, |m| m.center_liberties(&game, hint));
        inner.tree.set_center_liberties(0, liberties);
        inner.root_eval = Some(root_out);
        inner.error = None;
        // A fresh root's evaluation is the run's first playout, as KataGo counts it, so
        // that `maxPlayouts` N on a new tree gives N root visits.
        let root_playout = u64::from(fresh);
        inner.started = root_playout;
        inner.completed = root_playout;
        inner.collisions = 0;
        drop(inner);
        Ok(Arc::new(run))
    }
}

impl Drop for Search {
    fn drop(&mut self) {
        self.stop();
    }
}

fn reset(inner: &mut Inner) {
    inner.tree = Tree::new();
    inner.root_eval = None;
    inner.own_root = OwnAcc::default();
    inner.own_children.clear();
}

/// The moves `new` adds to `old`, if `new` is `old` continued (same start, rules and komi).
fn continuation(old: &Game, new: &Game) -> Option<Vec<(Player, Move)>> {
    let (a, b) = (old.turns(), new.turns());
    let same_start = old.rules() == new.rules()
        && old.white_bonus() == new.white_bonus()
        && old.initial_player() == new.initial_player()
        && old.initial_turn_number() == new.initial_turn_number()
        && old.initial_board().same_state(new.initial_board());
    if !same_start || b.len() < a.len() || a != &b[..a.len()] {
        return None;
    }
    Some(b[a.len()..].iter().map(|t| (t.player, t.mv)).collect())
}

/// Follows `extra` from the root; keeps what that position reaches if it is in the tree.
/// Returns whether it did.
fn reuse(inner: &mut Inner, game: &Game, extra: &[(Player, Move)], bias_free_prop: f64) -> bool {
    let size = game.board().size();
    let mut n = 0u32;
    for &(pla, mv) in extra {
        let node = &inner.tree.nodes[n as usize];
        if node.state != State::Expanded || node.next_player != pla {
            return false;
        }
        match inner.tree.child_by_move(n, move_index(size, mv) as u16) {
            Some((_, c)) => n = c,
            None => return false,
        }
    }
    // A tree searched for the other player to move (a `set_player_to_move`, GTP's
    // `genmove` out of turn) answers another question.
    let end = &inner.tree.nodes[n as usize];
    if end.state == State::Expanded && end.next_player != game.to_move() {
        return false;
    }
    if n == 0 {
        return true;
    }
    let first_mv = move_index(size, extra[0].1) as u16;
    inner.own_root = if extra.len() == 1 {
        inner
            .own_children
            .iter()
            .find(|(m, _)| *m == first_mv)
            .map(|(_, a)| a.clone())
            .unwrap_or_default()
    } else {
        OwnAcc::default()
    };
    inner.own_children.clear();
    inner.tree.reroot(n, bias_free_prop);
    inner.root_eval = None;
    true
}

/// What, beyond the parameters, sets an evaluation's inputs and post-processing.
struct Inputs<'a> {
    /// The player the playout doubling advantage is for.
    advantaged: Player,
    /// A mirror seen by anti-mirror search.
    mirror: Option<&'a Mirror>,
}

impl Inputs<'_> {
    /// The request for `game`'s position, at the root or below.
    fn request(
        &self,
        params: &SearchParams,
        game: &Game,
        root: bool,
        sym: Symmetry,
    ) -> EvalRequest {
        let pda = params.playout_doubling_input(self.advantaged, game.to_move());
        let mut req = request(params, root, sym, pda);
        req.ownership |= self.mirror.is_some_and(|m| m.shifts_evaluation(game));
        req
    }

    /// The evaluation as the search uses it: shifted by the centre's owner in anti-mirror
    /// search's hard case.
    fn adjust(&self, game: &Game, out: Arc<NnOutput>) -> Arc<NnOutput> {
        let Some(m) = self.mirror.filter(|m| m.shifts_evaluation(game)) else {
            return out;
        };
        let Some(own) = m
            .center_index()
            .and_then(|c| out.white_ownership.as_ref()?.get(c).copied())
        else {
            return out;
        };
        let mut o = (*out).clone();
        (o.white_win, o.white_loss) = m.shift(o.white_win, o.white_loss, own);
        Arc::new(o)
    }
}

/// The evaluation of the root: the average over the configured number of symmetries.
fn evaluate_root(
    ev: &dyn Evaluator,
    game: &Game,
    params: &SearchParams,
    inputs: &Inputs<'_>,
    rng: &mut fastrand::Rng,
) -> Result<Arc<NnOutput>, SearchError> {
    let k = params.root_symmetries.clamp(1, 8);
    let mut syms = Symmetry::ALL;
    if k < 8 && params.random_symmetries {
        rng.shuffle(&mut syms);
    }
    let square = game.board().size().width() == game.board().size().height();
    let syms: Vec<Symmetry> = syms
        .into_iter()
        .filter(|s| square || !s.transposes())
        .take(k)
        .collect();
    let mut req = inputs.request(params, game, true, Symmetry::IDENTITY);
    let mut acc: Option<NnOutput> = None;
    for &s in &syms {
        req.symmetry = s;
        let out = ev.evaluate(game, &req)?;
        match &mut acc {
            None => acc = Some((*out).clone()),
            Some(a) => {
                for (x, &y) in a.policy.iter_mut().zip(&out.policy) {
                    if *x >= 0.0 {
                        *x += y;
                    }
                }
                a.white_win += out.white_win;
                a.white_loss += out.white_loss;
                a.no_result += out.no_result;
                a.white_score_mean += out.white_score_mean;
                a.white_score_mean_sq += out.white_score_mean_sq;
                a.white_lead += out.white_lead;
                a.var_time_left += out.var_time_left;
                a.shortterm_winloss_error += out.shortterm_winloss_error;
                a.shortterm_score_error += out.shortterm_score_error;
                if let (Some(o), Some(p)) = (&mut a.white_ownership, &out.white_ownership) {
                    for (x, &y) in o.iter_mut().zip(p) {
                        *x += y;
                    }
                }
            }
        }
    }
    let mut a = acc.ok_or_else(|| SearchError::Internal("no symmetry to evaluate".into()))?;
    let n = syms.len() as f32;
    if n > 1.0 {
        for x in a.policy.iter_mut().filter(|x| **x >= 0.0) {
            *x /= n;
        }
        for v in [
            &mut a.white_win,
            &mut a.white_loss,
            &mut a.no_result,
            &mut a.white_score_mean,
            &mut a.white_score_mean_sq,
            &mut a.white_lead,
            &mut a.var_time_left,
            &mut a.shortterm_winloss_error,
            &mut a.shortterm_score_error,
        ] {
            *v /= n;
        }
        if let Some(o) = &mut a.white_ownership {
            o.iter_mut().for_each(|x| *x /= n);
        }
    }
    Ok(inputs.adjust(game, Arc::new(a)))
}

/// The request for an evaluation at the root or below, with the mover's playout doubling
/// advantage `pda`.
fn request(params: &SearchParams, root: bool, symmetry: Symmetry, pda: f64) -> EvalRequest {
    EvalRequest {
        symmetry,
        policy: PolicyOptions {
            temperature: params.nn_policy_temperature,
            optimism: if root {
                params.root_policy_optimism
            } else {
                params.policy_optimism
            },
            passing_hacks: params.enable_passing_hacks,
        },
        inputs: InputParams {
            draw_equivalent_wins_for_white: params.draw_equivalent_wins_for_white,
            enable_passing_hacks: params.enable_passing_hacks,
            playout_doubling_advantage: pda,
            human_profile: params.human_profile,
            ..InputParams::default()
        },
        ownership: params.ownership || root,
    }
}

/// Root temperature, then Dirichlet noise, on (move, probability) pairs.
fn shape_root_priors(priors: &mut [(u16, f64)], params: &SearchParams, rng: &mut fastrand::Rng) {
    let t = params.root_policy_temperature;
    if t > 0.0 && (t - 1.0).abs() > 1e-9 {
        let max = priors.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-30);
        for p in priors.iter_mut() {
            p.1 = (p.1 / max).powf(1.0 / t);
        }
    }
    let total: f64 = priors.iter().map(|p| p.1).sum();
    if total > 0.0 {
        priors.iter_mut().for_each(|p| p.1 /= total);
    }
    if params.root_noise && !priors.is_empty() {
        let alpha = params.root_dirichlet_total_concentration / priors.len() as f64;
        let draws: Vec<f64> = priors.iter().map(|_| gamma(alpha, rng)).collect();
        let sum: f64 = draws.iter().sum::<f64>().max(1e-300);
        let w = params.root_dirichlet_weight;
        for (p, d) in priors.iter_mut().zip(draws) {
            p.1 = p.1 * (1.0 - w) + w * d / sum;
        }
    }
}

/// A Gamma(alpha, 1) draw (Marsaglia and Tsang; boosted for alpha < 1).
fn gamma(alpha: f64, rng: &mut fastrand::Rng) -> f64 {
    if alpha < 1.0 {
        let u = rng.f64().max(1e-300);
        return gamma(alpha + 1.0, rng) * u.powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = gaussian(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = rng.f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A network output as a node keeps it, weighted by the network's confidence when
/// uncertainty weighting is on.
fn eval_of_output(params: &SearchParams, u: &UtilityFn, out: &NnOutput) -> Eval {
    let score = f64::from(out.white_score_mean);
    let weight = backup::eval_weight(
        params,
        u,
        score,
        f64::from(out.shortterm_winloss_error),
        f64::from(out.shortterm_score_error),
    );
    backup::eval_of(
        f64::from(out.white_win - out.white_loss),
        f64::from(out.no_result),
        score,
        f64::from(out.white_score_mean_sq),
        f64::from(out.white_lead),
        weight,
    )
}

/// The fixed value of a finished game.
fn terminal_eval(run: &Run, game: &Game) -> Eval {
    let w = backup::terminal_weight(&run.params, run.network_errors);
    match game.outcome() {
        Some(Outcome::Scored { white_minus_black }) => {
            let s = f64::from(white_minus_black);
            let winloss = s.signum() * f64::from(u8::from(s != 0.0));
            backup::eval_of(winloss, 0.0, s, s * s, s, w)
        }
        Some(Outcome::Resigned { winner }) => {
            let wl = if winner == Player::White { 1.0 } else { -1.0 };
            backup::eval_of(wl, 0.0, 0.0, 0.0, 0.0, w)
        }
        Some(Outcome::NoResult) | None => backup::eval_of(0.0, 1.0, 0.0, 0.0, 0.0, w),
    }
}

impl Run {
    /// Whether the run should stop, judged under the lock.
    fn done(&self, inner: &Inner) -> bool {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Relaxed))
        {
            return true;
        }
        if inner.tree.nodes.len() >= self.params.max_nodes {
            return true;
        }
        let in_flight = inner.started - inner.completed;
        let visits = u64::from(inner.tree.root().stats.visits) + in_flight;
        let l = &self.limits;
        if l.visits.is_some_and(|v| visits >= v) || l.playouts.is_some_and(|p| inner.started >= p) {
            return true;
        }
        let elapsed = self.start.elapsed();
        if l.time.is_some_and(|t| elapsed >= t) {
            return true;
        }
        l.stop_when_decided
            && l.min_time.is_none_or(|m| elapsed >= m)
            && self.decided(inner, visits, elapsed)
    }

    /// True once the second most visited root move cannot catch the first in what is left.
    fn decided(&self, inner: &Inner, visits: u64, elapsed: Duration) -> bool {
        let l = &self.limits;
        let mut left = u64::MAX;
        if let Some(v) = l.visits {
            left = left.min(v.saturating_sub(visits));
        }
        if let Some(p) = l.playouts {
            left = left.min(p.saturating_sub(inner.started));
        }
        if let Some(t) = l.time {
            // Need a rate estimate before judging by time.
            if inner.completed < 16 {
                return false;
            }
            let rate = inner.completed as f64 / elapsed.as_secs_f64().max(1e-6);
            left = left.min((rate * t.saturating_sub(elapsed).as_secs_f64()) as u64);
        }
        if left == u64::MAX {
            return false;
        }
        let (mut first, mut second) = (0u64, 0u64);
        for e in inner.tree.edges_of(0) {
            let v = u64::from(e.visits);
            if v > first {
                second = first;
                first = v;
            } else if v > second {
                second = v;
            }
        }
        second + left < first
    }
}

/// How a descent ended.
enum Descent {
    /// At a fresh node, now claimed: evaluate it (the thread's game is at its position).
    /// The flag says whether the playout counts (is not weightless).
    Evaluate(u32, bool),
    /// The playout is complete and backed up (a finished game, a transposition whose
    /// edge caught up with its node, or a cycle); whether it counts.
    Done(bool),
    /// Another thread is evaluating the node reached; try again.
    Collision,
}

/// Walks from the root by PUCT under the lock, playing each move on `game` and making
/// nodes (or finding shared ones) for new moves, and finishes the playout at once where no
/// evaluation is needed.
#[allow(clippy::too_many_arguments)]
fn descend(
    inner: &mut Inner,
    run: &Run,
    game: &mut Game,
    path: &mut Vec<Step>,
    rng: &mut fastrand::Rng,
    select: &mut Scratch,
    backup: &mut BackupScratch,
) -> Result<Descent, SearchError> {
    game.clone_from(&run.game);
    path.clear();
    let size = game.board().size();
    let sel = run.select_ctx();
    let ctx = run.backup_ctx();
    let tree = &mut inner.tree;
    let mut n = 0u32;
    let mut last_move = None;
    let pass = size.area() as u16;
    let hacks = run.params.enable_more_passing_hacks && run.filter.is_empty();
    let mut counted = true;
    loop {
        let mut pick = tree
            .select(n, last_move, &sel, rng, select)
            .ok_or_else(|| SearchError::Internal("a node has no move".into()))?;
        let mut weightless = false;
        if hacks && game.pass_would_end_phase() {
            if let Some(forced) = tree.passing_hack(n, pick, pass) {
                pick = forced;
                weightless = true;
                counted = false;
            }
        }
        let (slot, child, mv) = match pick {
            Pick::Edge(slot) => {
                let e = *tree.edge(n, slot);
                play(game, size, e.mv)?;
                (slot, e.child, e.mv)
            }
            Pick::New(p) => {
                // The value-bias key looks at the board before the move.
                let key = if run.params.subtree_value_bias_factor != 0.0 {
                    game.turns().last().and_then(|t| {
                        let prev = move_index(size, t.mv);
                        keys::bias_key(
                            game,
                            game.to_move(),
                            prev,
                            index_move(size, p.mv.into()),
                            p.mv.into(),
                        )
                    })
                } else {
                    None
                };
                play(game, size, p.mv)?;
                let hash = run.graph.then(|| {
                    keys::graph_hash(
                        tree.nodes[n as usize].hash,
                        game,
                        run.params.graph_search_rep_bound,
                    )
                });
                let (c, found) = tree.node_for(hash, game.to_move());
                if let (Some(k), false) = (key, found) {
                    let entry = tree.bias_entry(k);
                    tree.nodes[c as usize].bias = entry;
                }
                let slot = tree.add_edge(n, p.mv, p.p(), c);
                (slot, c, p.mv)
            }
        };
        tree.nodes[child as usize].virtual_losses += 1;
        path.push(Step {
            node: n,
            slot,
            weightless,
        });
        // A path back into itself (only possible through a hash that keeps no history):
        // count the edge and end the playout, as KataGo does.
        if child == 0 || path.iter().any(|s| s.node == child) {
            tree.backup(path, &ctx, backup);
            return Ok(Descent::Done(counted));
        }
        let node = &tree.nodes[child as usize];
        let caught_up = tree.edge(n, slot).visits >= node.stats.visits;
        match node.state {
            // A shared node already knows more than this edge has seen: the edge takes
            // one of its visits without a new evaluation.
            State::Expanded | State::Terminal if !caught_up => {
                tree.backup(path, &ctx, backup);
                return Ok(Descent::Done(counted));
            }
            State::Terminal => {
                tree.add_leaf_value(child, true, &ctx);
                tree.backup(path, &ctx, backup);
                return Ok(Descent::Done(counted));
            }
            State::Fresh if game.is_over() => {
                tree.set_terminal(child, terminal_eval(run, game));
                tree.add_leaf_value(child, true, &ctx);
                tree.backup(path, &ctx, backup);
                return Ok(Descent::Done(counted));
            }
            State::Fresh => {
                tree.nodes[child as usize].state = State::InFlight;
                return Ok(Descent::Evaluate(child, counted));
            }
            State::InFlight => {
                tree.remove_virtual_losses(path);
                return Ok(Descent::Collision);
            }
            State::Expanded => {
                n = child;
                last_move = Some(mv);
            }
        }
    }
}

/// Plays the move with policy index `mv` on `game` (a move stored in the tree, so an
/// illegal one is a bug, reported rather than hidden).
fn play(game: &mut Game, size: tengen_rules::BoardSize, mv: u16) -> Result<(), SearchError> {
    let m = index_move(size, usize::from(mv));
    game.play(m).map_err(|e| {
        SearchError::Internal(format!("tree move {} cannot be played: {e}", size.gtp(m)))
    })
}

/// One search thread: descend under the lock, evaluate outside it, back up, until told to stop.
fn worker(shared: &Shared, run: &Run, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut game = (*run.game).clone();
    let size = game.board().size();
    let mut path: Vec<Step> = Vec::with_capacity(256);
    let mut select = Scratch::default();
    let mut backup = BackupScratch::default();
    let mut priors: Vec<Prior> = Vec::with_capacity(size.area() + 1);
    let mut pairs: Vec<(u16, f32)> = Vec::with_capacity(size.area() + 1);
    let params = &run.params;
    let ctx = run.backup_ctx();
    while !shared.stop.load(Ordering::Relaxed) {
        while shared.readers_waiting.load(Ordering::Relaxed) > 0 {
            std::thread::yield_now();
        }
        let descent = {
            let mut inner = lock(&shared.inner);
            if run.done(&inner) {
                shared.stop.store(true, Ordering::SeqCst);
                break;
            }
            let d = descend(
                &mut inner,
                run,
                &mut game,
                &mut path,
                &mut rng,
                &mut select,
                &mut backup,
            );
            match &d {
                Ok(Descent::Done(true)) => {
                    inner.started += 1;
                    inner.completed += 1;
                }
                Ok(Descent::Evaluate(_, true)) => inner.started += 1,
                Ok(Descent::Done(false) | Descent::Evaluate(_, false)) => {}
                Ok(Descent::Collision) => inner.collisions += 1,
                Err(_) => inner.tree.remove_virtual_losses(&path),
            }
            d
        };
        let (leaf, counted) = match descent {
            Ok(Descent::Evaluate(leaf, counted)) => (leaf, counted),
            Ok(Descent::Done(_)) => continue,
            Ok(Descent::Collision) => {
                std::thread::sleep(Duration::from_micros(50));
                continue;
            }
            Err(e) => {
                fail(shared, None, &path, e);
                break;
            }
        };
        let sym = if params.random_symmetries {
            Symmetry::ALL[rng.usize(..if size.width() == size.height() { 8 } else { 4 })]
        } else {
            Symmetry::IDENTITY
        };
        let inputs = Inputs {
            advantaged: run.advantaged,
            mirror: run.mirror.as_ref(),
        };
        let out = match shared
            .evaluator
            .evaluate(&game, &inputs.request(params, &game, false, sym))
        {
            Ok(o) => inputs.adjust(&game, o),
            Err(e) => {
                fail(shared, Some((leaf, counted)), &path, e.into());
                break;
            }
        };
        let depth = path.len() as u32;
        let hint = run.mirror.map_or(Hint::None, |m| m.hint(&game));
        let liberties = run
            .mirror
            .map_or_else(Vec::new, |m| m.center_liberties(&game, hint));
        leaf_priors(&out, &game, run, depth, hint, &mut pairs, &mut priors);
        let eval = eval_of_output(params, &run.utility, &out);
        let mut inner = lock(&shared.inner);
        inner.evaluations += 1;
        let tree = &mut inner.tree;
        tree.expand(leaf, game.to_move(), eval, &priors);
        tree.nodes[leaf as usize].mirror = hint.pack();
        if !liberties.is_empty() {
            tree.set_center_liberties(leaf, liberties);
        }
        tree.add_leaf_value(leaf, false, &ctx);
        tree.backup(&path, &ctx, &mut backup);
        inner.completed += u64::from(counted);
        if let Some(own) = out.white_ownership.as_deref().filter(|_| params.ownership) {
            let first = inner.tree.edge(0, path[0].slot).mv;
            inner.add_ownership(first, own);
        }
    }
}

impl Inner {
    fn add_ownership(&mut self, first_move: u16, own: &[f32]) {
        self.own_root.add(own);
        match self.own_children.iter_mut().find(|(m, _)| *m == first_move) {
            Some((_, acc)) => acc.add(own),
            None => {
                let mut acc = OwnAcc::default();
                acc.add(own);
                self.own_children.push((first_move, acc));
            }
        }
    }
}

/// Stops the run on an error: the descent's virtual losses (and its claim on `leaf`, if
/// it had one) are taken back first.
fn fail(shared: &Shared, leaf: Option<(u32, bool)>, path: &[Step], e: SearchError) {
    log::error!("search stopped: {e}");
    let mut inner = lock(&shared.inner);
    if let Some((l, counted)) = leaf {
        inner.tree.remove_virtual_losses(path);
        let node = &mut inner.tree.nodes[l as usize];
        if node.state == State::InFlight {
            node.state = State::Fresh;
        }
        inner.started = inner.started.saturating_sub(u64::from(counted));
    }
    inner.error.get_or_insert(e);
    shared.stop.store(true, Ordering::SeqCst);
}

/// Builds a leaf's stored priors: legal, allowed, sorted by decreasing probability, and
/// without the negligible tail (memory; see [`SearchParams::min_stored_prior`]).
fn leaf_priors(
    out: &NnOutput,
    game: &Game,
    run: &Run,
    depth: u32,
    hint: Hint,
    pairs: &mut Vec<(u16, f32)>,
    priors: &mut Vec<Prior>,
) {
    let pla = game.to_move();
    pairs.clear();
    // Only the board's moves: an evaluator's policy longer than that is not trusted.
    let moves = game.board().size().area() + 1;
    for (i, &p) in out.policy.iter().take(moves).enumerate() {
        if p >= 0.0 && run.filter.allows(pla, i, depth) {
            pairs.push((i as u16, p));
        }
    }
    // Before the sort and the cut, so that a raised prior is stored in its place.
    if let Some(m) = &run.mirror {
        m.bias_priors(game, hint, pairs);
    }
    pairs.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let floor = run.params.min_stored_prior;
    let keep = pairs.iter().take_while(|p| p.1 >= floor).count().max(1);
    pairs.truncate(keep);
    if pairs.is_empty() {
        // Everything was filtered out: passing stays possible.
        pairs.push((game.board().size().area() as u16, 1.0));
    }
    priors.clear();
    priors.extend(pairs.iter().map(|&(m, p)| Prior::new(m, p)));
}
