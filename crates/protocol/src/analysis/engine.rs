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

use super::query::{parse, Action, Defaults, Request, Task};
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
    /// Tasks being searched: the task, and the flag that stops it.
    running: Vec<(Task, Arc<AtomicBool>)>,
    /// Bytes held by queued and running tasks (their [`Task::cost`]).
    bytes: usize,
    /// The most `bytes` may reach; a query that would pass it is refused whole.
    limit: usize,
    closing: bool,
}

/// Default for the queue's byte limit: room for about 25 of the longest queries
/// ([`super::query::MAX_QUERY_MOVES`] moves, every turn analysed, about 10 MB each) or
/// thousands of ordinary ones, well inside a small board's memory.
pub const DEFAULT_QUEUE_BYTES: usize = 256 << 20;

/// Why a query was not queued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The queue holds too much already; the query may be sent again later.
    #[error("queue full: {queued} bytes of queries waiting, this one needs {needed} more, the limit is {limit}")]
    QueueFull {
        /// Bytes held now.
        queued: usize,
        /// Bytes the query needs.
        needed: usize,
        /// The limit.
        limit: usize,
    },
    /// The engine is winding down.
    #[error("the engine is shutting down")]
    Closing,
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
    /// Starts `threads` workers (each runs one search at a time) writing to `out`, with
    /// at most `queue_bytes` of queries queued or running.
    pub fn new(
        source: EvaluatorSource,
        threads: usize,
        perspective: Perspective,
        out: Box<dyn Write + Send>,
        queue_bytes: usize,
    ) -> AnalysisEngine {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                limit: queue_bytes,
                ..Queue::default()
            }),
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

    /// Queues a query's tasks, all or none: none when they would take the queue past its
    /// byte limit.
    pub fn submit(&self, tasks: Vec<Task>) -> Result<(), SubmitError> {
        let needed: usize = tasks.iter().map(|t| t.cost).sum();
        let mut q = lock(&self.shared.queue);
        if q.closing {
            return Err(SubmitError::Closing);
        }
        if q.bytes.saturating_add(needed) > q.limit {
            return Err(SubmitError::QueueFull {
                queued: q.bytes,
                needed,
                limit: q.limit,
            });
        }
        q.bytes += needed;
        for task in tasks {
            q.seq += 1;
            let seq = q.seq;
            q.heap.push(Queued { task, seq });
        }
        drop(q);
        self.shared.work.notify_all();
        Ok(())
    }

    /// Handles one input line as KataGo's analysis engine does: a query is queued (its
    /// warnings emitted first), an action answered, anything else answered with an error.
    pub fn handle_line(&self, line: &str, defaults: &Defaults, models: &Value) {
        if line.trim().is_empty() {
            return;
        }
        match parse(line, defaults) {
            Err(v) => self.emit(&v),
            Ok(Request::Action(action, query)) => self.action(&action, query, models),
            Ok(Request::Query(tasks, warnings)) => {
                for w in &warnings {
                    self.emit(w);
                }
                let id = tasks.first().map(|t| t.query.id.clone());
                if let Err(e) = self.submit(tasks) {
                    self.emit(&json!({"error": e.to_string(), "id": id}));
                }
            }
        }
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
                    .partition(|e| matches(&e.task.query.id, e.task.turn));
                q.heap = kept.into_iter().collect();
                q.bytes -= gone.iter().map(|e| e.task.cost).sum::<usize>();
                for (task, stop) in &q.running {
                    if matches(&task.query.id, task.turn) {
                        stop.store(true, Ordering::SeqCst);
                    }
                }
                drop(q);
                for e in gone {
                    emit(
                        &self.shared,
                        &json!({"id": e.task.query.id, "turnNumber": e.task.turn,
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
                let dropped: usize = q.heap.drain().map(|e| e.task.cost).sum();
                q.bytes -= dropped;
                for (_, stop) in &q.running {
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
                    q.running.push((e.task.clone(), stop.clone()));
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
        let mut q = lock(&shared.queue);
        q.running.retain(|(_, s)| !Arc::ptr_eq(s, &stop));
        q.bytes -= task.cost;
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
    let query = &task.query;
    let fail = |msg: String| json!({"error": msg, "id": query.id, "turnNumber": task.turn});
    // Built now, not when queued, so that a queued turn holds no game of its own.
    let game = match task.game() {
        Ok(g) => g,
        Err(e) => return fail(e),
    };
    let size = game.board().size();
    let ev = match evaluator_for(shared, size) {
        Ok(ev) => ev,
        Err(e) => return fail(e),
    };
    let mut params = query.params.clone();
    params.ownership = query.ownership || query.moves_ownership;
    let mut search = Search::new(ev.clone(), params);
    search.set_filter(query.filters.clone());
    search.set_position(&game);
    let limits = Limits {
        time: query.max_time,
        ..Limits::visits(query.max_visits)
    };
    if let Err(e) = search.start(limits) {
        return fail(e.to_string());
    }
    let opts = SnapshotOptions {
        pv_len: query.pv_len + 1,
        ownership: query.ownership,
        moves_ownership: query.moves_ownership,
    };
    let perspective = query.perspective.unwrap_or(shared.perspective);
    let mut last_report = Instant::now();
    while search.is_running() {
        std::thread::sleep(Duration::from_millis(10));
        if stop.load(Ordering::SeqCst) {
            search.stop();
            break;
        }
        if let Some(every) = query.report_every {
            if last_report.elapsed() >= every {
                last_report = Instant::now();
                if let Some(a) = search.analysis(&opts) {
                    emit(shared, &response(task, &a, true, None, perspective));
                }
            }
        }
    }
    if let Err(e) = search.wait() {
        return fail(e.to_string());
    }
    let policy = query.policy.then(|| {
        // The network's view of the root as the search saw it: with the mover's advantage.
        let p = &query.params;
        let pda = p.playout_doubling_input(p.advantaged_player(game.to_move()), game.to_move());
        let req = EvalRequest {
            symmetry: Symmetry::default(),
            policy: PolicyOptions::default(),
            inputs: InputParams {
                playout_doubling_advantage: pda,
                human_profile: p.human_profile,
                ..InputParams::default()
            },
            ownership: false,
        };
        ev.evaluate(&game, &req).ok().map(|o| o.policy.clone())
    });
    match search.analysis(&opts) {
        Some(a) => response(task, &a, false, policy.flatten(), perspective),
        None => {
            json!({"id": query.id, "turnNumber": task.turn, "isDuringSearch": false, "noResults": true})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{parse, Defaults, Request};
    use tengen_search::{SearchParams, UniformEvaluator};

    /// Output shared with the test.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn tasks(id: &str, visits: u64) -> Vec<Task> {
        let d = Defaults {
            params: SearchParams {
                threads: 1,
                ..SearchParams::default()
            },
            max_visits: visits,
            max_playouts: None,
            pv_len: 2,
            max_time: None,
        };
        let q = format!(
            r#"{{"id":"{id}","moves":[["B","C3"],["W","G7"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1,2]}}"#
        );
        match parse(&q, &d) {
            Ok(Request::Query(t, _)) => t,
            _ => panic!("a query"),
        }
    }

    #[test]
    fn the_queue_refuses_what_passes_its_limit_and_frees_what_is_done() {
        let one: usize = tasks("a", 1).iter().map(|t| t.cost).sum();
        let sink = Sink::default();
        let source: EvaluatorSource =
            Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
        let engine = AnalysisEngine::new(
            source,
            1,
            Perspective::Black,
            Box::new(sink.clone()),
            one + one / 2,
        );
        assert_eq!(engine.submit(tasks("a", 1)), Ok(()));
        // A second query does not fit beside the first while it is queued or running.
        let mut refused = 0;
        loop {
            match engine.submit(tasks("b", 1)) {
                Ok(()) => break,
                Err(SubmitError::QueueFull { limit, .. }) => {
                    assert_eq!(limit, one + one / 2);
                    refused += 1;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
            assert!(refused < 10_000, "the first query's bytes were never freed");
        }
        engine.finish(true);
        let out = String::from_utf8(lock(&sink.0).clone()).unwrap();
        let finals = out
            .lines()
            .filter(|l| l.contains("\"isDuringSearch\":false"));
        assert_eq!(finals.count(), 6, "{out}");
    }

    #[test]
    fn max_time_ends_a_query_that_visits_would_not() {
        let sink = Sink::default();
        let source: EvaluatorSource =
            Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
        let engine = AnalysisEngine::new(
            source,
            1,
            Perspective::Black,
            Box::new(sink.clone()),
            DEFAULT_QUEUE_BYTES,
        );
        let d = Defaults {
            params: SearchParams::default(),
            max_visits: 10,
            max_playouts: None,
            pv_len: 2,
            max_time: None,
        };
        // Ten billion visits would take hours; a fifth of a second ends it.
        let q = r#"{"id":"t","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":10000000000,"overrideSettings":{"maxTime":0.2}}"#;
        let started = Instant::now();
        engine.handle_line(q, &d, &json!([]));
        engine.finish(true);
        let took = started.elapsed();
        let out = String::from_utf8(lock(&sink.0).clone()).unwrap();
        let v: Value = serde_json::from_str(out.trim()).unwrap();
        let visits = v["rootInfo"]["visits"].as_u64().unwrap();
        assert!(visits > 0 && visits < 10_000_000_000, "{v}");
        // Loose: the limit, not the visits, ended it (a loaded machine may be slow).
        assert!(took < Duration::from_secs(60), "{took:?}");
    }

    #[test]
    fn a_query_larger_than_the_whole_queue_is_refused_at_once() {
        let source: EvaluatorSource =
            Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
        let engine = AnalysisEngine::new(
            source,
            1,
            Perspective::Black,
            Box::new(Sink::default()),
            1000,
        );
        let e = engine.submit(tasks("a", 1)).unwrap_err();
        assert!(e.to_string().starts_with("queue full"), "{e}");
        engine.finish(true);
    }
}
