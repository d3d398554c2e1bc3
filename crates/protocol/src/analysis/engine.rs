//! The analysis engine: queued tasks served by worker threads in priority order, each
//! answered with one final JSON line (and optional partial ones), out of order; actions
//! answered at once. Output goes through one lock so lines never interleave.

use std::collections::{BinaryHeap, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use tengen_rules::BoardSize;
use tengen_search::evaluator::{InputParams, PolicyOptions, Symmetry};
use tengen_search::{EvalRequest, Evaluator, Limits, Search, SnapshotOptions};

use super::query::{Action, Task};
use super::response::{response, Perspective};
use crate::gtp::engine::EvaluatorSource;

struct Queued {
    task: Task,
    seq: u64,
}

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.seq == o.seq
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    /// Higher priority first, then earlier queries.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.task
            .priority
            .cmp(&o.task.priority)
            .then(o.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Queued>,
    seq: u64,
    /// Tasks being searched: id, turn, and the flag that stops them.
    running: Vec<(String, usize, Arc<AtomicBool>)>,
    closing: bool,
}

/// The source of evaluators and those it gave, per board size.
type Evaluators = (EvaluatorSource, HashMap<BoardSize, Arc<dyn Evaluator>>);

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    source: Mutex<Evaluators>,
    out: Mutex<Box<dyn Write + Send>>,
    perspective: Perspective,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// KataGo's JSON analysis engine over an evaluator source.
pub struct AnalysisEngine {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl AnalysisEngine {
    /// Starts `threads` workers (each runs one search at a time) writing to `out`.
    pub fn new(
        source: EvaluatorSource,
        threads: usize,
        perspective: Perspective,
        out: Box<dyn Write + Send>,
    ) -> AnalysisEngine {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            source: Mutex::new((source, HashMap::new())),
            out: Mutex::new(out),
            perspective,
        });
        let workers = (0..threads.max(1))
            .filter_map(|i| {
                let s = shared.clone();
                std::thread::Builder::new()
                    .name(format!("analysis-{i}"))
                    .spawn(move || worker(&s))
                    .ok()
            })
            .collect();
        AnalysisEngine { shared, workers }
    }

    /// Writes one response line.
    pub fn emit(&self, v: &Value) {
        emit(&self.shared, v);
    }

    /// Queues tasks.
    pub fn submit(&self, tasks: Vec<Task>) {
        let mut q = lock(&self.shared.queue);
        for task in tasks {
            q.seq += 1;
            let seq = q.seq;
            q.heap.push(Queued { task, seq });
        }
        drop(q);
        self.shared.work.notify_all();
    }

    /// Carries out an action and answers it.
    pub fn action(&self, action: &Action, query: Map<String, Value>, models: &Value) {
        let mut reply = Value::Object(query);
        match action {
            Action::QueryVersion => {
                reply["version"] = json!(env!("CARGO_PKG_VERSION"));
                reply["git_hash"] = json!("");
            }
            Action::QueryModels => reply["models"] = models.clone(),
            Action::ClearCache => {
                for ev in lock(&self.shared.source).1.values() {
                    ev.clear_cache();
                }
            }
            Action::Terminate { id, turns } => {
                let matches = |tid: &str, turn: usize| {
                    id.as_deref().is_none_or(|i| i == tid)
                        && turns.as_ref().is_none_or(|t| t.contains(&turn))
                };
                let mut q = lock(&self.shared.queue);
                let (gone, kept): (Vec<Queued>, Vec<Queued>) = std::mem::take(&mut q.heap)
                    .into_iter()
                    .partition(|e| matches(&e.task.id, e.task.turn));
                q.heap = kept.into_iter().collect();
                for (tid, turn, stop) in &q.running {
                    if matches(tid, *turn) {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                drop(q);
                for e in gone {
                    emit(
                        &self.shared,
                        &json!({"id": e.task.id, "turnNumber": e.task.turn,
                                "isDuringSearch": false, "noResults": true}),
                    );
                }
            }
        }
        emit(&self.shared, &reply);
    }

    /// Stops accepting work; with `wait`, finishes the queue first, else terminates it.
    pub fn finish(mut self, wait: bool) {
        {
            let mut q = lock(&self.shared.queue);
            q.closing = true;
            if !wait {
                q.heap.clear();
                for (_, _, stop) in &q.running {
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
        self.shared.work.notify_all();
        for h in self.workers.drain(..) {
            let _ = h.join();
        }
    }
}

fn emit(shared: &Shared, v: &Value) {
    let mut out = lock(&shared.out);
    // A closed output leaves nothing to tell; the engine winds down at end of input.
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn worker(shared: &Shared) {
    loop {
        let (task, stop) = {
            let mut q = lock(&shared.queue);
            loop {
                if let Some(e) = q.heap.pop() {
                    let stop = Arc::new(AtomicBool::new(false));
                    q.running
                        .push((e.task.id.clone(), e.task.turn, stop.clone()));
                    break (e.task, stop);
                }
                if q.closing {
                    return;
                }
                q = shared.work.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let v = run_task(shared, &task, &stop);
        emit(shared, &v);
        lock(&shared.queue)
            .running
            .retain(|(_, _, s)| !Arc::ptr_eq(s, &stop));
    }
}

fn evaluator_for(shared: &Shared, size: BoardSize) -> Result<Arc<dyn Evaluator>, String> {
    let mut src = lock(&shared.source);
    if let Some(ev) = src.1.get(&size) {
        return Ok(ev.clone());
    }
    let ev = (src.0)(size)?;
    src.1.insert(size, ev.clone());
    Ok(ev)
}

/// Searches one task, reporting partial results when asked; returns the final response.
fn run_task(shared: &Shared, task: &Task, stop: &AtomicBool) -> Value {
    let fail = |msg: String| json!({"error": msg, "id": task.id, "turnNumber": task.turn});
    let size = task.game.board().size();
    let ev = match evaluator_for(shared, size) {
        Ok(ev) => ev,
        Err(e) => return fail(e),
    };
    let mut params = task.params.clone();
    params.ownership = task.ownership || task.moves_ownership;
    let mut search = Search::new(ev.clone(), params);
    search.set_filter(task.filters.clone());
    search.set_position(&task.game);
    if let Err(e) = search.start(Limits::visits(task.max_visits)) {
        return fail(e.to_string());
    }
    let opts = SnapshotOptions {
        pv_len: task.pv_len + 1,
        ownership: task.ownership,
        moves_ownership: task.moves_ownership,
    };
    let mut last_report = Instant::now();
    while search.is_running() {
        std::thread::sleep(Duration::from_millis(10));
        if stop.load(Ordering::SeqCst) {
            search.stop();
            break;
        }
        if let Some(every) = task.report_every {
            if last_report.elapsed() >= every {
                last_report = Instant::now();
                if let Some(a) = search.analysis(&opts) {
                    emit(shared, &response(task, &a, true, None, shared.perspective));
                }
            }
        }
    }
    if let Err(e) = search.wait() {
        return fail(e.to_string());
    }
    let policy = task.policy.then(|| {
        let req = EvalRequest {
            symmetry: Symmetry::default(),
            policy: PolicyOptions::default(),
            inputs: InputParams::default(),
            ownership: false,
        };
        ev.evaluate(&task.game, &req).ok().map(|o| o.policy.clone())
    });
    match search.analysis(&opts) {
        Some(a) => response(task, &a, false, policy.flatten(), shared.perspective),
        None => {
            json!({"id": task.id, "turnNumber": task.turn, "isDuringSearch": false, "noResults": true})
        }
    }
}
