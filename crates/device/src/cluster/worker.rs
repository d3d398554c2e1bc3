//! A worker: jobs from the group's shared subscription, run by the analysis engine,
//! answered on each job's response topic, acknowledged once their final answer is out.
//!
//! [`Jobs`] is the job table without I/O; [`run`] is the MQTT loop around it.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tengen_protocol::analysis::{parse, AnalysisEngine, Defaults, Perspective, Request, Task};
use tengen_protocol::gtp::engine::EvaluatorSource;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

use super::job::{shared_filter, status_topic, Job, JobError, Reply};
use super::link::{self, Link, Polled};
use super::Broker;

/// A job taken and not yet fully answered.
struct Open<T> {
    /// The query id the client gave (the engine sees a name of ours instead).
    original: String,
    reply: Reply,
    /// Analysed turns still without a final answer.
    turns_left: usize,
    /// What acknowledges the job's message.
    token: T,
    /// The job's tasks until the engine is given them.
    waiting: Option<Vec<Task>>,
}

/// What became of a job offered to [`Jobs::admit`].
pub enum Admitted<T> {
    /// No response topic: acknowledge it and log why.
    Dropped(T, JobError),
    /// Answered at once with an error; acknowledge it after publishing.
    Refused(Reply, Value, T),
    /// Held: publish the warnings; [`Jobs::next_to_run`] hands its tasks over in turn.
    Held {
        /// Warnings about the query, already addressed.
        warnings: Vec<(Reply, Value)>,
    },
}

/// An answer line addressed to its job's client; with the job's token when it was the
/// job's last final answer.
pub struct Routed<T> {
    /// Where it goes.
    pub reply: Reply,
    /// The answer, with the client's query id.
    pub answer: Value,
    /// Present when the job is done: acknowledge it.
    pub done: Option<T>,
}

/// The most a job may ask of this worker; a query asking more is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Caps {
    /// Visits per analysed turn.
    pub visits: Option<u64>,
    /// Search time per analysed turn.
    pub time: Option<Duration>,
    /// Jobs one client (one response topic) may have held here at once; past it a job is
    /// refused with `retryAfter`, so that the broker hands over other clients' jobs.
    pub client_jobs: Option<usize>,
}

/// A worker's limits when nobody sets them: a job from the network must not take the
/// machine's memory (about 11 KB a visit on 19x19) or its CPU for good. The visits are
/// an appliance's default live analysis (`[analysis] max_visits`), so boards' pool
/// jobs pass.
pub const DEFAULT_CAPS: Caps = Caps {
    visits: Some(20_000),
    time: Some(Duration::from_secs(60)),
    client_jobs: None,
};

/// Seconds a client waits before it sends a job refused for its share again.
pub const RETRY_AFTER_S: u64 = 2;

impl Caps {
    /// Why `task` asks too much, if it does.
    fn exceeded(&self, task: &Task) -> Option<String> {
        let q = &task.query;
        if let Some(cap) = self.visits.filter(|&c| q.max_visits > c) {
            return Some(format!(
                "maxVisits {} is above this worker's limit of {cap}",
                q.max_visits
            ));
        }
        let cap = self.time?;
        match q.max_time {
            Some(t) if t <= cap => None,
            _ => Some(format!(
                "this worker searches at most {} s a turn (overrideSettings.maxTime)",
                cap.as_secs_f64()
            )),
        }
    }

    /// The per-client share of a worker with `slots` slots: all but one, so one slot
    /// is always left for another client.
    pub fn with_client_share(mut self, slots: u16) -> Caps {
        if self.client_jobs.is_none() {
            self.client_jobs = Some(usize::from(slots.saturating_sub(1)).max(1));
        }
        self
    }
}

/// The worker's open jobs, keyed by the unique id the engine sees, so that two clients'
/// queries with the same id never mix.
pub struct Jobs<T> {
    caps: Caps,
    next: u64,
    open: HashMap<String, Open<T>>,
    /// Visits of the final answers given, for the status.
    visits: u64,
    /// Waiting jobs' keys per client (response topic), in arrival order.
    waiting: HashMap<String, VecDeque<String>>,
    /// Clients with waiting jobs, the next to be served first.
    turn: VecDeque<String>,
    /// Jobs the engine has and has not finished.
    running: usize,
}

impl<T> Default for Jobs<T> {
    fn default() -> Self {
        Jobs {
            caps: Caps::default(),
            next: 0,
            open: HashMap::new(),
            visits: 0,
            waiting: HashMap::new(),
            turn: VecDeque::new(),
            running: 0,
        }
    }
}

impl<T> Jobs<T> {
    /// No job open, none allowed past `caps`.
    pub fn new(caps: Caps) -> Jobs<T> {
        Jobs {
            caps,
            ..Jobs::default()
        }
    }

    /// Jobs taken and not yet answered.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// True when no job is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Visits of every final answer so far.
    pub fn visits(&self) -> u64 {
        self.visits
    }

    /// Reads a job: refused, dropped, or renamed and parsed into the engine's tasks.
    pub fn admit(&mut self, job: &Job, token: T, defaults: &Defaults) -> Admitted<T> {
        let (reply, text) = match job.open() {
            Ok(ok) => ok,
            Err((None, e)) => return Admitted::Dropped(token, e),
            Err((Some(reply), e)) => return Admitted::Refused(reply.clone(), e.answer(), token),
        };
        self.next += 1;
        let key = format!("job-{}", self.next);
        // The client's id is swapped for ours; a line with no string id is left as it
        // is, and the engine's parser says what is wrong with it.
        let (line, original) = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(mut m)) => match m.get("id").and_then(Value::as_str) {
                Some(id) => {
                    let original = id.to_string();
                    m.insert("id".into(), json!(key));
                    (Value::Object(m).to_string(), original)
                }
                None => (text.to_string(), String::new()),
            },
            _ => (text.to_string(), String::new()),
        };
        let restore = |mut v: Value| {
            if v.get("id").and_then(Value::as_str) == Some(key.as_str()) {
                v["id"] = json!(original);
            }
            v
        };
        match parse(&line, defaults) {
            Err(v) => Admitted::Refused(reply.clone(), restore(v), token),
            Ok(Request::Action(..)) => Admitted::Refused(
                reply.clone(),
                json!({"error": "actions are answered by the client, not by a worker",
                       "id": original}),
                token,
            ),
            Ok(Request::Query(tasks, _))
                if tasks
                    .first()
                    .is_some_and(|t| self.caps.exceeded(t).is_some()) =>
            {
                let why = tasks.first().and_then(|t| self.caps.exceeded(t));
                Admitted::Refused(reply.clone(), json!({"error": why, "id": original}), token)
            }
            Ok(Request::Query(tasks, warnings)) => {
                let client = &reply.topic;
                let held = self
                    .open
                    .values()
                    .filter(|o| &o.reply.topic == client)
                    .count();
                if let Some(cap) = self.caps.client_jobs.filter(|&c| held >= c) {
                    let why = format!(
                        "this worker holds {held} jobs for {client}, its share per client \
                         ({cap}); send it again later"
                    );
                    let answer = json!({"error": why, "id": original, "retryAfter": RETRY_AFTER_S});
                    return Admitted::Refused(reply.clone(), answer, token);
                }
                let warnings = warnings
                    .into_iter()
                    .map(|w| (reply.clone(), restore(w)))
                    .collect();
                self.open.insert(
                    key.clone(),
                    Open {
                        original,
                        reply: reply.clone(),
                        turns_left: tasks.len(),
                        token,
                        waiting: Some(tasks),
                    },
                );
                let queue = self.waiting.entry(client.clone()).or_default();
                if queue.is_empty() {
                    self.turn.push_back(client.clone());
                }
                queue.push_back(key);
                Admitted::Held { warnings }
            }
        }
    }

    /// The next job for the engine while fewer than `slots` run: clients take turns,
    /// each client's jobs in arrival order, so one client's many jobs cannot keep
    /// another's waiting. Returns its key and tasks; call again until `None`.
    pub fn next_to_run(&mut self, slots: usize) -> Option<(String, Vec<Task>)> {
        while self.running < slots {
            let client = self.turn.pop_front()?;
            let queue = self.waiting.get_mut(&client)?;
            let Some(key) = queue.pop_front() else {
                self.waiting.remove(&client);
                continue;
            };
            if queue.is_empty() {
                self.waiting.remove(&client);
            } else {
                self.turn.push_back(client);
            }
            let Some(tasks) = self.open.get_mut(&key).and_then(|o| o.waiting.take()) else {
                continue;
            };
            self.running += 1;
            return Some((key, tasks));
        }
        None
    }

    /// The engine would not queue job `key`: its error answer, which ends it.
    pub fn fail(&mut self, key: &str, error: String) -> Option<Routed<T>> {
        let open = self.open.remove(key)?;
        if open.waiting.is_none() {
            self.running = self.running.saturating_sub(1);
        }
        Some(Routed {
            reply: open.reply,
            answer: json!({"error": error, "id": open.original}),
            done: Some(open.token),
        })
    }

    /// Routes one line the engine wrote back to its job's client.
    pub fn route(&mut self, mut line: Value) -> Option<Routed<T>> {
        let key = line.get("id")?.as_str()?.to_string();
        let open = self.open.get_mut(&key)?;
        line["id"] = json!(open.original);
        let during = line.get("isDuringSearch") == Some(&Value::Bool(true));
        if during || line.get("warning").is_some() {
            return Some(Routed {
                reply: open.reply.clone(),
                answer: line,
                done: None,
            });
        }
        self.visits += line
            .pointer("/rootInfo/visits")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        open.turns_left = open.turns_left.saturating_sub(1);
        let reply = open.reply.clone();
        let done = if open.turns_left == 0 {
            self.running = self.running.saturating_sub(1);
            self.open.remove(&key).map(|o| o.token)
        } else {
            None
        };
        Some(Routed {
            reply,
            answer: line,
            done,
        })
    }
}

/// The engine's output, cut into lines and handed to the worker loop as JSON.
struct LineSink {
    buf: Vec<u8>,
    tx: UnboundedSender<Value>,
}

impl Write for LineSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        while let Some(end) = self.buf.iter().position(|&c| c == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            match serde_json::from_slice::<Value>(&line) {
                // A closed loop is a worker winding down: nobody is left to answer.
                Ok(v) => drop(self.tx.send(v)),
                Err(e) => log::error!("cluster: the engine wrote a line that is not JSON: {e}"),
            }
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a worker needs from the engine set-up.
pub struct EngineParts {
    /// Evaluators per board size.
    pub source: EvaluatorSource,
    /// Positions searched at once.
    pub threads: usize,
    /// Whose view values are reported from.
    pub perspective: Perspective,
    /// What a query starts from.
    pub defaults: Defaults,
    /// Bytes that queued and running queries may hold.
    pub queue_bytes: usize,
}

/// Who the worker is and where it works.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// The broker.
    pub broker: Broker,
    /// The worker's id: its client id and status topic.
    pub id: String,
    /// The shared-subscription group.
    pub group: String,
    /// Jobs taken at once (the connection's receive maximum).
    pub slots: u16,
    /// What judges positions, for the status (e.g. the network and backend).
    pub backend: String,
    /// The most a job may ask.
    pub caps: Caps,
}

/// How often the status is refreshed when it changed.
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// A job's message and the connection it came on: an acknowledgement only means
/// something on the connection that delivered it.
type Token = (u64, link::Message);

/// Serves jobs until `stop` completes, then marks the worker offline.
pub async fn run(cfg: WorkerConfig, parts: EngineParts, stop: impl Future<Output = ()>) {
    let status = status_topic(&cfg.id);
    let offline = json!({"state": "offline", "group": cfg.group}).to_string();
    let mut link = Link::worker(&cfg.broker, &cfg.id, cfg.slots, &status, &offline);
    let (tx, mut lines) = unbounded_channel();
    let sink = LineSink {
        buf: Vec::new(),
        tx,
    };
    let engine = AnalysisEngine::new(
        parts.source,
        parts.threads,
        parts.perspective,
        Box::new(sink),
        parts.queue_bytes,
    );
    let mut jobs: Jobs<Token> = Jobs::new(cfg.caps);
    let mut generation = 0u64;
    let mut tick = tokio::time::interval(STATUS_EVERY);
    let mut shown = Value::Null;
    let mut last = (Instant::now(), 0u64);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            polled = link.next() => match polled {
                Polled::Connected => {
                    generation += 1;
                    link.subscribe(&shared_filter(&cfg.group)).await;
                    shown = Value::Null;
                }
                Polled::Message(m) if !m.trusted => {
                    log::warn!("cluster: a job without this pool's seal was dropped");
                    link.ack(&m).await;
                }
                Polled::Message(m) => {
                    let job = m.job();
                    match jobs.admit(&job, (generation, m), &parts.defaults) {
                        Admitted::Dropped((_, m), e) => {
                            log::warn!("cluster: {e}");
                            link.ack(&m).await;
                        }
                        Admitted::Refused(reply, answer, (_, m)) => {
                            log::info!("cluster: job refused: {answer}");
                            link.answer(&reply, &answer).await;
                            link.ack(&m).await;
                        }
                        Admitted::Held { warnings } => {
                            log::debug!("cluster: job taken; {} jobs open", jobs.len());
                            for (reply, w) in &warnings {
                                link.answer(reply, w).await;
                            }
                        }
                    }
                    start_jobs(&engine, &mut jobs, parts.threads, &link, generation).await;
                }
                Polled::Lost => generation += 1,
            },
            Some(line) = lines.recv() => {
                if let Some(r) = jobs.route(line) {
                    finish(&link, r, generation).await;
                }
                start_jobs(&engine, &mut jobs, parts.threads, &link, generation).await;
            }
            _ = tick.tick() => {
                let now = Instant::now();
                let secs = now.duration_since(last.0).as_secs_f64().max(1e-3);
                let rate = (jobs.visits() - last.1) as f64 / secs;
                last = (now, jobs.visits());
                let s = json!({"state": "online", "group": cfg.group, "backend": cfg.backend,
                               "slots": cfg.slots, "queue": jobs.len(),
                               "visitsPerSecond": (rate * 10.0).round() / 10.0});
                if s != shown {
                    link.publish_retained(&status, &s.to_string()).await;
                    shown = s;
                }
            }
        }
    }
    engine.finish(false);
    link.publish_retained(&status, &offline).await;
    link.close().await;
}

/// Hands the engine the jobs next in turn while it has a free thread; a job the engine
/// will not queue is answered with its error.
async fn start_jobs(
    engine: &AnalysisEngine,
    jobs: &mut Jobs<Token>,
    threads: usize,
    link: &Link,
    generation: u64,
) {
    while let Some((key, tasks)) = jobs.next_to_run(threads.max(1)) {
        if let Err(e) = engine.submit(tasks) {
            if let Some(r) = jobs.fail(&key, e.to_string()) {
                finish(link, r, generation).await;
            }
        }
    }
}

/// Publishes a routed answer and, when it ended its job, acknowledges the job (only on
/// the connection it came on: the broker has forgotten older ones).
async fn finish(link: &Link, r: Routed<Token>, generation: u64) {
    link.answer(&r.reply, &r.answer).await;
    if let Some((g, m)) = r.done {
        if g == generation {
            link.ack(&m).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::job::ANSWERS;
    use super::*;
    use tengen_search::SearchParams;

    fn defaults() -> Defaults {
        Defaults {
            params: SearchParams::default(),
            max_visits: 2,
            max_playouts: None,
            pv_len: 2,
            max_time: None,
        }
    }

    fn job(q: &str, topic: Option<&str>) -> Job {
        Job {
            query: q.as_bytes().to_vec(),
            reply: topic.map(|t| Reply {
                topic: super::super::job::answer_topic(t),
                correlation: b"c".to_vec(),
            }),
        }
    }

    const Q: &str = r#"{"id":"same","moves":[["B","C3"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1],"bogus":1}"#;

    #[test]
    fn two_jobs_with_one_query_id_are_routed_to_their_own_clients() {
        let mut jobs = Jobs::default();
        let mut keys = Vec::new();
        for (topic, token) in [("a", 1), ("b", 2)] {
            match jobs.admit(&job(Q, Some(topic)), token, &defaults()) {
                Admitted::Held { warnings } => {
                    assert_eq!(warnings.len(), 1, "the unknown field is warned about");
                    assert_eq!(warnings[0].1["id"], "same");
                }
                _ => panic!("not held"),
            }
            let (key, tasks) = jobs.next_to_run(2).expect("a free slot");
            assert_eq!(tasks.len(), 2);
            assert_eq!(tasks[0].query.id, key);
            keys.push(key);
        }
        assert!(jobs.next_to_run(2).is_none(), "nothing else waits");
        assert_ne!(keys[0], keys[1]);
        let line = |key: &str, turn: u64, during: bool| {
            json!({"id": key, "turnNumber": turn, "isDuringSearch": during,
                   "rootInfo": {"visits": 3}})
        };
        let r = jobs.route(line(&keys[1], 0, true)).unwrap();
        assert_eq!((r.reply.topic.as_str(), r.done), ("tengen/answers/b", None));
        assert_eq!(r.answer["id"], "same");
        assert_eq!(jobs.route(line(&keys[1], 0, false)).unwrap().done, None);
        let r = jobs.route(line(&keys[1], 1, false)).unwrap();
        assert_eq!(r.done, Some(2), "the last final answer ends the job");
        assert_eq!(jobs.visits(), 6);
        assert!(jobs.route(line(&keys[1], 1, false)).is_none());
        assert_eq!(jobs.len(), 1);
        let r = jobs.fail(&keys[0], "queue full".into()).unwrap();
        assert_eq!((r.answer["id"].as_str(), r.done), (Some("same"), Some(1)));
        assert!(jobs.is_empty());
    }

    #[test]
    fn bad_jobs_are_refused_with_the_engines_error_or_dropped() {
        let mut jobs = Jobs::default();
        match jobs.admit(&job("{not json", Some("a")), 1, &defaults()) {
            Admitted::Refused(r, v, 1) => {
                assert_eq!(r.topic, "tengen/answers/a");
                assert!(v["error"].as_str().unwrap().contains("JSON"), "{v}");
            }
            _ => panic!("not refused"),
        }
        let bad =
            r#"{"id":"x","moves":[["B","Z99"]],"rules":"chinese","boardXSize":9,"boardYSize":9}"#;
        match jobs.admit(&job(bad, Some("a")), 2, &defaults()) {
            Admitted::Refused(_, v, 2) => assert_eq!(v["id"], "x", "{v}"),
            _ => panic!("not refused"),
        }
        assert!(matches!(
            jobs.admit(&job(Q, None), 3, &defaults()),
            Admitted::Dropped(3, JobError::NoReplyTopic)
        ));
        let mut capped = Jobs::new(Caps {
            visits: Some(100),
            time: Some(Duration::from_secs(5)),
            client_jobs: None,
        });
        let greedy = r#"{"id":"g","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":101}"#;
        match capped.admit(&job(greedy, Some("a")), 5, &defaults()) {
            Admitted::Refused(_, v, 5) => {
                assert!(v["error"].as_str().unwrap().contains("limit of 100"), "{v}");
                assert_eq!(v["id"], "g");
            }
            _ => panic!("not refused"),
        }
        let timed = r#"{"id":"t","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":100,"overrideSettings":{"maxTime":5}}"#;
        assert!(matches!(
            capped.admit(&job(timed, Some("a")), 6, &defaults()),
            Admitted::Held { .. }
        ));
        let action = r#"{"id":"v","action":"query_version"}"#;
        assert!(matches!(
            jobs.admit(&job(action, Some("a")), 4, &defaults()),
            Admitted::Refused(_, _, 4)
        ));
        assert!(jobs.is_empty());
    }

    #[test]
    fn clients_take_turns_and_one_client_cannot_hold_every_slot() {
        let mut jobs = Jobs::new(DEFAULT_CAPS.with_client_share(4));
        // A query without a time limit gets the cap's (as `tengen worker` sets it).
        let timed = Defaults {
            max_time: DEFAULT_CAPS.time,
            ..defaults()
        };
        let defaults = || timed.clone();
        let one = r#"{"id":"j","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9}"#;
        // Client a fills its share (3 of 4 slots); its fourth job is refused for now.
        for token in 0..3 {
            assert!(matches!(
                jobs.admit(&job(one, Some("a")), token, &defaults()),
                Admitted::Held { .. }
            ));
        }
        match jobs.admit(&job(one, Some("a")), 3, &defaults()) {
            Admitted::Refused(_, v, 3) => {
                assert!(v["error"].as_str().unwrap().contains("share"), "{v}");
                assert_eq!(v["retryAfter"], RETRY_AFTER_S);
            }
            _ => panic!("not refused"),
        }
        assert!(matches!(
            jobs.admit(&job(one, Some("b")), 4, &defaults()),
            Admitted::Held { .. }
        ));
        // One engine thread: a's first job, then b's, then a's others.
        let order: Vec<String> = std::iter::from_fn(|| {
            let (key, _) = jobs.next_to_run(1)?;
            let r = jobs.route(json!({"id": key, "turnNumber": 0}))?;
            Some(r.reply.topic.strip_prefix(ANSWERS)?.to_string())
        })
        .collect();
        assert_eq!(order, ["a", "b", "a", "a"]);
        assert!(jobs.is_empty());
        // The defaults refuse a job of a billion visits or one without a time limit.
        let greedy = r#"{"id":"g","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":1000000000}"#;
        assert!(matches!(
            jobs.admit(&job(greedy, Some("a")), 5, &defaults()),
            Admitted::Refused(..)
        ));
    }
}
