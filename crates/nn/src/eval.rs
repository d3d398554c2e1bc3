//! The batching evaluator: search threads ask for evaluations of positions; server
//! threads gather the requests into batches (up to a maximum size, waiting at most a
//! short time for more), run them on a [`Backend`] and hand each caller its decoded
//! [`NnOutput`]. Results are kept in a bounded cache keyed by the position, the rules,
//! komi, the symmetry and the decoding options.

use std::collections::VecDeque;
use std::hash::{Hash as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tengen_rules::Game;

use crate::backend::{Backend, BatchInput, BatchOutput, IoShape};
use crate::contract::meta::ModelMetadata;
use crate::features::{FeatureError, InputParams, Symmetry, V7Encoder, NUM_GLOBAL, NUM_SPATIAL};
use crate::postprocess::{
    postprocess, NnOutput, PolicyOptions, PositionInfo, PostprocessError, RawOutput,
};

/// How the evaluator batches and caches.
#[derive(Clone, Debug, PartialEq)]
pub struct EvaluatorConfig {
    /// Most positions in one batch.
    pub max_batch: usize,
    /// Longest a request waits for others to fill its batch.
    pub max_wait: Duration,
    /// Threads that run batches on the backend (each runs one batch at a time).
    pub server_threads: usize,
    /// Results kept in the cache (rounded up to a power of two; 0 disables the cache).
    pub cache_entries: usize,
}

impl Default for EvaluatorConfig {
    fn default() -> Self {
        EvaluatorConfig {
            max_batch: 16,
            max_wait: Duration::from_micros(500),
            server_threads: 1,
            cache_entries: 1 << 14,
        }
    }
}

/// Which of the 8 board symmetries a request uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymmetryChoice {
    /// Always this one.
    Fixed(Symmetry),
    /// A random one that keeps the buffer's shape, drawn per request.
    Random,
}

/// What one evaluation request asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvalOptions {
    /// The symmetry the network sees the position in.
    pub symmetry: SymmetryChoice,
    /// How the policy is decoded.
    pub policy: PolicyOptions,
    /// Input feature parameters (draw value, passing hacks, ...).
    pub inputs: InputParams,
    /// Whether to decode ownership.
    pub ownership: bool,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            symmetry: SymmetryChoice::Fixed(Symmetry::IDENTITY),
            policy: PolicyOptions::default(),
            inputs: InputParams::default(),
            ownership: true,
        }
    }
}

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The position could not be encoded (e.g. the board is larger than the network's buffer).
    #[error(transparent)]
    Features(#[from] FeatureError),
    /// The symmetry does not fit a non-square buffer.
    #[error("symmetry {0} transposes a non-square {1}x{2} buffer")]
    Symmetry(u8, usize, usize),
    /// The backend failed on the batch this request was in.
    #[error("network evaluation failed: {0}")]
    Backend(String),
    /// The outputs could not be decoded.
    #[error(transparent)]
    Postprocess(#[from] PostprocessError),
    /// The model's inputs are not KataGo's version-7 encoding this evaluator produces.
    #[error("the model expects {0} spatial and {1} global inputs; Tengen encodes 22 and 19")]
    UnsupportedInputs(usize, usize),
    /// A human-SL net (one with an SGF-metadata encoder, `InputMeta`) asked for without a
    /// profile.
    #[error(
        "the model reads SGF metadata (InputMeta): a human-SL net needs a profile such as \
         rank_5k (KataGo's humanSLProfile)"
    )]
    NeedsProfile,
    /// The evaluator is shutting down.
    #[error("the evaluator has shut down")]
    Shutdown,
}

/// Counters for logs and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvalStats {
    /// Positions evaluated by the network.
    pub evaluated: u64,
    /// Batches run.
    pub batches: u64,
    /// Requests answered from the cache.
    pub cache_hits: u64,
    /// Time the backend spent running batches, summed over server threads.
    pub backend_time: Duration,
}

/// Evaluates positions with one network, batching requests from many threads.
pub struct Evaluator {
    shared: Arc<Shared>,
    servers: Vec<JoinHandle<()>>,
}

struct Shared {
    backend: Arc<dyn Backend>,
    meta: ModelMetadata,
    shape: IoShape,
    config: EvaluatorConfig,
    queue: Mutex<Queue>,
    arrived: Condvar,
    cache: Cache,
    evaluated: AtomicU64,
    batches: AtomicU64,
    cache_hits: AtomicU64,
    backend_nanos: AtomicU64,
}

#[derive(Default)]
struct Queue {
    pending: VecDeque<Request>,
    shutdown: bool,
}

/// A request waiting for its batch: encoded inputs (symmetry applied) and where to answer.
struct Request {
    spatial: Vec<f32>,
    global: Vec<f32>,
    /// `InputMeta` for a net that reads it, else empty.
    meta: Vec<f32>,
    symmetry: Symmetry,
    info: PositionInfo,
    policy: PolicyOptions,
    ownership: bool,
    key: u128,
    reply: Arc<Reply>,
}

#[derive(Default)]
struct Reply {
    result: Mutex<Option<Result<Arc<NnOutput>, EvalError>>>,
    done: Condvar,
}

thread_local! {
    /// Each search thread keeps its own encoder so encoding never allocates after warm-up.
    static ENCODER: std::cell::RefCell<V7Encoder> = std::cell::RefCell::new(V7Encoder::new());
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking thread cannot leave these structures half-updated in a harmful way.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Evaluator {
    /// Starts the server threads for a backend and the metadata of its model.
    pub fn new(
        backend: Arc<dyn Backend>,
        meta: ModelMetadata,
        config: EvaluatorConfig,
    ) -> Result<Evaluator, EvalError> {
        let shape = *backend.shape();
        if shape.spatial_channels != NUM_SPATIAL || shape.global_channels != NUM_GLOBAL {
            return Err(EvalError::UnsupportedInputs(
                shape.spatial_channels,
                shape.global_channels,
            ));
        }
        let config = EvaluatorConfig {
            max_batch: config.max_batch.clamp(1, backend.max_batch().max(1)),
            server_threads: config.server_threads.max(1),
            ..config
        };
        let shared = Arc::new(Shared {
            cache: Cache::new(config.cache_entries),
            backend,
            meta,
            shape,
            config,
            queue: Mutex::new(Queue::default()),
            arrived: Condvar::new(),
            evaluated: AtomicU64::new(0),
            batches: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
            backend_nanos: AtomicU64::new(0),
        });
        let servers = (0..shared.config.server_threads)
            .map(|i| {
                let s = shared.clone();
                std::thread::Builder::new()
                    .name(format!("nn-server-{i}"))
                    .spawn(move || s.serve())
                    .map_err(|e| EvalError::Backend(format!("cannot start a server thread: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Evaluator { shared, servers })
    }

    /// The model's metadata.
    pub fn metadata(&self) -> &ModelMetadata {
        &self.shared.meta
    }

    /// The batching and caching settings in use (after clamping to the backend).
    pub fn config(&self) -> &EvaluatorConfig {
        &self.shared.config
    }

    /// The network's input buffer size and channels.
    pub fn shape(&self) -> &IoShape {
        &self.shared.shape
    }

    /// Evaluates the position of `game` for the player to move (blocking until its batch ran).
    pub fn evaluate(&self, game: &Game, opts: &EvalOptions) -> Result<Arc<NnOutput>, EvalError> {
        let sh = &self.shared;
        let (x_len, y_len) = (sh.shape.x_len, sh.shape.y_len);
        let symmetry = match opts.symmetry {
            SymmetryChoice::Fixed(s) => s,
            SymmetryChoice::Random => {
                let all: &[Symmetry] = if x_len == y_len {
                    &Symmetry::ALL
                } else {
                    &Symmetry::WITHOUT_TRANSPOSE
                };
                all[fastrand::usize(..all.len())]
            }
        };
        if !symmetry.keeps_shape(x_len, y_len) {
            return Err(EvalError::Symmetry(symmetry.number(), x_len, y_len));
        }
        let key = cache_key(game, symmetry, opts);
        if let Some(hit) = sh.cache.get(key) {
            sh.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(hit);
        }

        let meta = if sh.shape.meta_channels > 0 {
            let profile = opts.inputs.human_profile.ok_or(EvalError::NeedsProfile)?;
            // The contract holds a metadata net to KataGo's one width (NUM_META).
            profile
                .row(game.to_move(), game.board().size().area())
                .to_vec()
        } else {
            Vec::new()
        };
        let plane = x_len * y_len;
        let mut spatial = vec![0f32; NUM_SPATIAL * plane];
        let mut global = vec![0f32; NUM_GLOBAL];
        ENCODER.with(|enc| -> Result<(), EvalError> {
            let mut enc = enc.borrow_mut();
            if symmetry == Symmetry::IDENTITY {
                enc.fill(
                    game,
                    game.to_move(),
                    &opts.inputs,
                    x_len,
                    y_len,
                    &mut spatial,
                    &mut global,
                )?;
            } else {
                let mut plain = vec![0f32; NUM_SPATIAL * plane];
                enc.fill(
                    game,
                    game.to_move(),
                    &opts.inputs,
                    x_len,
                    y_len,
                    &mut plain,
                    &mut global,
                )?;
                symmetry
                    .apply_planes(&plain, &mut spatial, NUM_SPATIAL, x_len, y_len)
                    .map_err(|_| EvalError::Symmetry(symmetry.number(), x_len, y_len))?;
            }
            Ok(())
        })?;

        let reply = Arc::new(Reply::default());
        {
            let mut q = lock(&sh.queue);
            if q.shutdown {
                return Err(EvalError::Shutdown);
            }
            q.pending.push_back(Request {
                spatial,
                global,
                meta,
                symmetry,
                info: PositionInfo::from_game(game),
                policy: opts.policy,
                ownership: opts.ownership,
                key,
                reply: reply.clone(),
            });
        }
        sh.arrived.notify_one();
        let mut slot = lock(&reply.result);
        loop {
            if let Some(r) = slot.take() {
                return r;
            }
            slot = reply.done.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.shared.cache.clear();
    }

    /// Counters since the start.
    pub fn stats(&self) -> EvalStats {
        let sh = &self.shared;
        EvalStats {
            evaluated: sh.evaluated.load(Ordering::Relaxed),
            batches: sh.batches.load(Ordering::Relaxed),
            cache_hits: sh.cache_hits.load(Ordering::Relaxed),
            backend_time: Duration::from_nanos(sh.backend_nanos.load(Ordering::Relaxed)),
        }
    }
}

impl Drop for Evaluator {
    fn drop(&mut self) {
        lock(&self.shared.queue).shutdown = true;
        self.shared.arrived.notify_all();
        for s in self.servers.drain(..) {
            let _ = s.join();
        }
    }
}

impl Shared {
    /// A server thread: take a batch, run it, answer, repeat until shutdown.
    fn serve(&self) {
        let mut spatial = Vec::new();
        let mut global = Vec::new();
        let mut mask = Vec::new();
        let mut meta = Vec::new();
        let mut out = BatchOutput::new();
        while let Some(batch) = self.next_batch() {
            let rows = batch.len();
            spatial.clear();
            global.clear();
            mask.clear();
            meta.clear();
            let plane = self.shape.area();
            for r in &batch {
                spatial.extend_from_slice(&r.spatial);
                global.extend_from_slice(&r.global);
                meta.extend_from_slice(&r.meta);
                // The mask is the on-board plane, already in the symmetry's orientation.
                mask.extend_from_slice(&r.spatial[..plane]);
            }
            let input = BatchInput {
                rows,
                spatial: &spatial,
                global: &global,
                meta: (self.shape.meta_channels > 0).then_some(meta.as_slice()),
                mask: &mask,
            };
            let start = Instant::now();
            let result = self.backend.evaluate(&input, &mut out);
            self.backend_nanos
                .fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
            self.batches.fetch_add(1, Ordering::Relaxed);
            self.evaluated.fetch_add(rows as u64, Ordering::Relaxed);
            for (i, r) in batch.into_iter().enumerate() {
                let answer = match &result {
                    Err(e) => Err(EvalError::Backend(e.to_string())),
                    Ok(()) => self.decode(&out, i, &r).map(Arc::new),
                };
                if let Ok(o) = &answer {
                    self.cache.insert(r.key, o.clone());
                }
                *lock(&r.reply.result) = Some(answer);
                r.reply.done.notify_one();
            }
        }
    }

    /// Waits for requests, then for up to `max_wait` more until the batch is full.
    fn next_batch(&self) -> Option<Vec<Request>> {
        let mut q = lock(&self.queue);
        while q.pending.is_empty() {
            if q.shutdown {
                return None;
            }
            q = self.arrived.wait(q).unwrap_or_else(|e| e.into_inner());
        }
        let deadline = Instant::now() + self.config.max_wait;
        while q.pending.len() < self.config.max_batch && !q.shutdown {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            q = self
                .arrived
                .wait_timeout(q, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let n = q.pending.len().min(self.config.max_batch);
        Some(q.pending.drain(..n).collect())
    }

    /// Undoes the request's symmetry on the per-point outputs and decodes row `i`.
    fn decode(&self, out: &BatchOutput, i: usize, r: &Request) -> Result<NnOutput, EvalError> {
        let row = out.row(&self.shape, i);
        let (x_len, y_len) = (self.shape.x_len, self.shape.y_len);
        let sym_err = |_| EvalError::Symmetry(r.symmetry.number(), x_len, y_len);
        let mut policy = vec![0f32; row.policy.len()];
        r.symmetry
            .unapply_planes(
                row.policy,
                &mut policy,
                self.shape.policy_channels,
                x_len,
                y_len,
            )
            .map_err(sym_err)?;
        let ownership = if r.ownership {
            let mut own = vec![0f32; row.ownership.len()];
            r.symmetry
                .unapply_planes(
                    row.ownership,
                    &mut own,
                    self.shape.ownership_channels,
                    x_len,
                    y_len,
                )
                .map_err(sym_err)?;
            Some(own)
        } else {
            None
        };
        let raw = RawOutput {
            policy: &policy,
            policy_pass: row.policy_pass,
            value: row.value,
            score_value: row.score_value,
            ownership: ownership.as_deref(),
            x_len,
            y_len,
        };
        Ok(postprocess(&raw, &self.meta, &r.info, &r.policy)?)
    }
}

/// What makes two requests the same evaluation.
fn cache_key(game: &Game, symmetry: Symmetry, opts: &EvalOptions) -> u128 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    symmetry.number().hash(&mut h);
    opts.policy.temperature.to_bits().hash(&mut h);
    opts.policy.optimism.to_bits().hash(&mut h);
    opts.policy.passing_hacks.hash(&mut h);
    opts.ownership.hash(&mut h);
    let i = &opts.inputs;
    i.draw_equivalent_wins_for_white.to_bits().hash(&mut h);
    i.conservative_pass_and_is_root.hash(&mut h);
    i.enable_passing_hacks.hash(&mut h);
    i.playout_doubling_advantage.to_bits().hash(&mut h);
    i.max_history.hash(&mut h);
    i.pass_alive_suicide_override.hash(&mut h);
    i.human_profile.hash(&mut h);
    // The situation hash covers stones, player, ko and superko bans, phase, komi and rules.
    game.situation_hash() ^ (h.finish() as u128)
}

/// One shard of the cache: slots holding a key and its result.
type Shard = Mutex<Vec<Option<(u128, Arc<NnOutput>)>>>;

/// A bounded cache: a fixed table of slots in locked shards; a new result replaces
/// whatever occupied its slot, so memory never grows.
struct Cache {
    shards: Vec<Shard>,
    slots_per_shard: usize,
}

const SHARDS: usize = 16;

impl Cache {
    fn new(entries: usize) -> Cache {
        if entries == 0 {
            return Cache {
                shards: Vec::new(),
                slots_per_shard: 0,
            };
        }
        let total = entries.next_power_of_two().max(SHARDS);
        let per = total / SHARDS;
        Cache {
            shards: (0..SHARDS).map(|_| Mutex::new(vec![None; per])).collect(),
            slots_per_shard: per,
        }
    }

    fn slot(&self, key: u128) -> Option<(&Shard, usize)> {
        let shard = self.shards.get(key as usize % SHARDS.max(1))?;
        Some((shard, (key >> 64) as usize % self.slots_per_shard))
    }

    fn get(&self, key: u128) -> Option<Arc<NnOutput>> {
        let (shard, i) = self.slot(key)?;
        match &lock(shard)[i] {
            Some((k, v)) if *k == key => Some(v.clone()),
            _ => None,
        }
    }

    fn insert(&self, key: u128, value: Arc<NnOutput>) {
        if let Some((shard, i)) = self.slot(key) {
            lock(shard)[i] = Some((key, value));
        }
    }

    fn clear(&self) {
        for s in &self.shards {
            lock(s).iter_mut().for_each(|e| *e = None);
        }
    }
}

/// The network as the search's evaluator (`tengen-eval`'s contract): the search draws
/// the symmetry itself, so that its runs can be reproduced.
impl tengen_eval::Evaluator for Evaluator {
    fn evaluate(
        &self,
        game: &Game,
        req: &tengen_eval::EvalRequest,
    ) -> Result<Arc<NnOutput>, tengen_eval::EvalError> {
        let opts = EvalOptions {
            symmetry: SymmetryChoice::Fixed(req.symmetry),
            policy: req.policy,
            inputs: req.inputs,
            ownership: req.ownership,
        };
        Evaluator::evaluate(self, game, &opts).map_err(tengen_eval::EvalError::new)
    }

    fn max_batch(&self) -> usize {
        self.config().max_batch
    }

    fn clear_cache(&self) {
        Evaluator::clear_cache(self);
    }
}
