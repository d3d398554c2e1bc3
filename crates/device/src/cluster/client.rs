//! The client side: queries read as `tengen analysis` reads them, sent to the pool as
//! jobs, and their answers printed once each, whatever the pool redelivers or repeats.
//!
//! [`Pool`] is the bookkeeping without I/O; [`run`] is the MQTT loop around it.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tengen_protocol::analysis::{parse, Action, Defaults, Request, MAX_QUERY_LINE_BYTES};
use tengen_search::SearchParams;
use tokio::sync::mpsc::Receiver;

use super::job::{answer_topic, Reply, Ticket, JOB_TOPIC};
use super::link::{Link, Polled};
use super::Broker;

/// A query sent and not fully answered.
struct Pending {
    /// The query line, sent again if no answer comes.
    line: String,
    /// Turns still without a final answer.
    turns: BTreeSet<usize>,
    /// When it is sent again.
    due: Instant,
    /// Wait before the next resend (doubles each time, so a slow pool is not flooded).
    wait: Duration,
}

/// What to do with a line read from the input.
#[derive(Debug, PartialEq)]
pub enum Submitted {
    /// Print this answer (an error, or an action answered here).
    Print(Value),
    /// Publish this job.
    Send(Ticket, String),
}

/// The client's queries in the pool.
pub struct Pool {
    nonce: u64,
    seq: u64,
    pending: HashMap<u64, Pending>,
    resend_after: Duration,
    /// Only read queries: the workers' defaults decide how they are searched.
    defaults: Defaults,
}

impl Pool {
    /// An empty pool whose jobs are sent again after `resend_after` without an answer;
    /// `nonce` tells this run's answers from an earlier run's.
    pub fn new(nonce: u64, resend_after: Duration) -> Pool {
        Pool {
            nonce,
            seq: 0,
            pending: HashMap::new(),
            resend_after,
            defaults: Defaults {
                params: SearchParams::default(),
                max_visits: 1,
                max_playouts: None,
                pv_len: 1,
                max_time: None,
            },
        }
    }

    /// Queries without all their final answers.
    pub fn open(&self) -> usize {
        self.pending.len()
    }

    /// Reads one input line: a bad one is answered with the engine's error, an action is
    /// answered here (see docs/cluster.md), a query becomes a job. Warnings about a query
    /// come from the worker, so they are not printed here.
    pub fn submit(&mut self, line: &str, now: Instant) -> Option<Submitted> {
        if line.trim().is_empty() {
            return None;
        }
        match parse(line, &self.defaults) {
            Err(v) => Some(Submitted::Print(v)),
            Ok(Request::Action(action, query)) => {
                let mut reply = Value::Object(query);
                match action {
                    Action::QueryVersion => {
                        reply["version"] = json!(env!("CARGO_PKG_VERSION"));
                        reply["git_hash"] = json!("");
                    }
                    // The pool's workers may each run another network.
                    Action::QueryModels => reply["models"] = json!([]),
                    Action::ClearCache | Action::Terminate { .. } => {}
                }
                Some(Submitted::Print(reply))
            }
            Ok(Request::Query(tasks, _)) => {
                self.seq += 1;
                let ticket = Ticket {
                    nonce: self.nonce,
                    seq: self.seq,
                };
                self.pending.insert(
                    self.seq,
                    Pending {
                        line: line.to_string(),
                        turns: tasks.iter().map(|t| t.turn).collect(),
                        due: now + self.resend_after,
                        wait: self.resend_after,
                    },
                );
                Some(Submitted::Send(ticket, line.to_string()))
            }
        }
    }

    /// An answer from the pool: the line to print, or `None` when it is a repeat, for a
    /// query already answered, or not ours.
    pub fn answer(&mut self, correlation: &[u8], payload: &[u8], now: Instant) -> Option<String> {
        let t = Ticket::read(correlation).filter(|t| t.nonce == self.nonce)?;
        let p = self.pending.get_mut(&t.seq)?;
        let Ok(v) = serde_json::from_slice::<Value>(payload) else {
            log::warn!("cluster: an answer that is not JSON was ignored");
            return None;
        };
        let print = || Some(String::from_utf8_lossy(payload).into_owned());
        let turn = v.get("turnNumber").and_then(Value::as_u64);
        let (warning, error) = (v.get("warning").is_some(), v.get("error").is_some());
        if turn.is_none() && !warning && !error {
            log::warn!("cluster: an answer with no turn, warning or error was ignored");
            return None;
        }
        p.due = now + p.wait;
        if warning {
            return print();
        }
        let Some(turn) = turn.and_then(|t| usize::try_from(t).ok()) else {
            // A worker busy with this client's other jobs: send it again, maybe to
            // another worker, once its wait is over.
            if let Some(secs) = v.get("retryAfter").and_then(Value::as_u64) {
                log::debug!("cluster: job {} refused for now: {v}", t.seq);
                p.due = now + Duration::from_secs(secs.clamp(1, 600));
                return None;
            }
            // An error about the whole query ends it.
            self.pending.remove(&t.seq);
            return print();
        };
        if !p.turns.contains(&turn) {
            return None;
        }
        if v.get("isDuringSearch") != Some(&Value::Bool(true)) {
            p.turns.remove(&turn);
            if p.turns.is_empty() {
                self.pending.remove(&t.seq);
            }
        }
        print()
    }

    /// Stops waiting for a job's answers (its position was superseded).
    pub fn forget(&mut self, seq: u64) {
        self.pending.remove(&seq);
    }

    /// Jobs to send again: no answer came for them in time.
    pub fn due(&mut self, now: Instant) -> Vec<(Ticket, String)> {
        let nonce = self.nonce;
        let mut out: Vec<(Ticket, String)> = self
            .pending
            .iter_mut()
            .filter(|(_, p)| p.due <= now)
            .map(|(&seq, p)| {
                p.wait = (p.wait * 2).min(Duration::from_secs(600));
                p.due = now + p.wait;
                (Ticket { nonce, seq }, p.line.clone())
            })
            .collect();
        out.sort_by_key(|(t, _)| t.seq);
        out
    }
}

/// A line of input.
#[derive(Debug)]
pub enum Line {
    /// A line to read.
    Text(String),
    /// A line over [`MAX_QUERY_LINE_BYTES`], skipped unread.
    TooLong,
}

/// Who the client is and where the pool is.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// The broker.
    pub broker: Broker,
    /// The client id: names its session and its answer topic.
    pub id: String,
    /// Send a job again when nothing came back for it this long.
    pub resend_after: Duration,
    /// Jobs expire at the broker after this many seconds (MQTT 5 message expiry).
    pub expiry: Option<u32>,
    /// At end of input, stop at once instead of waiting for the answers.
    pub quit_without_waiting: bool,
}

/// A client's session with the pool: its answer topic, its link (not yet connected) and
/// an empty [`Pool`] whose tickets no earlier run of this client can have issued.
pub(crate) fn open(broker: &Broker, id: &str, resend_after: Duration) -> (String, Link, Pool) {
    let nonce = fastrand::u64(..) ^ u64::from(std::process::id());
    (
        answer_topic(id),
        Link::client(broker, id),
        Pool::new(nonce, resend_after),
    )
}

/// Where the answers to the job of `ticket` go: `topic`, with the ticket as correlation.
pub(crate) fn reply_to(topic: &str, ticket: Ticket) -> Reply {
    Reply {
        topic: topic.to_owned(),
        correlation: ticket.bytes(),
    }
}

/// Sends the queries read from `input` to the pool and writes their answers to `out`
/// until the input ends and every query is answered.
pub async fn run(cfg: ClientConfig, mut input: Receiver<Line>, out: &mut (dyn Write + Send)) {
    let (topic, mut link, mut pool) = open(&cfg.broker, &cfg.id, cfg.resend_after);
    let reply = |t: Ticket| reply_to(&topic, t);
    let mut print = |s: &str| {
        // A closed output leaves nobody to tell.
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    };
    let mut reading = true;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    while reading || (pool.open() > 0 && !cfg.quit_without_waiting) {
        tokio::select! {
            line = input.recv(), if reading => match line {
                None => reading = false,
                Some(Line::TooLong) => print(&json!({
                    "error": format!("line too long (more than {MAX_QUERY_LINE_BYTES} bytes)")
                }).to_string()),
                Some(Line::Text(l)) => match pool.submit(&l, Instant::now()) {
                    None => {}
                    Some(Submitted::Print(v)) => print(&v.to_string()),
                    Some(Submitted::Send(t, l)) => link.job(JOB_TOPIC, &l, &reply(t), cfg.expiry).await,
                },
            },
            polled = link.next() => match polled {
                Polled::Connected => link.subscribe(&topic).await,
                Polled::Message(m) if !m.trusted => {
                    log::warn!("cluster: an answer without this pool's seal was dropped");
                }
                Polled::Message(m) => {
                    let (c, payload) = m.answer();
                    if let Some(s) = pool.answer(c, payload, Instant::now()) {
                        print(&s);
                    }
                }
                Polled::Lost => {}
            },
            _ = tick.tick() => {
                for (t, l) in pool.due(Instant::now()) {
                    log::info!("cluster: no answer yet for job {}; sending it again", t.seq);
                    link.job(JOB_TOPIC, &l, &reply(t), cfg.expiry).await;
                }
            }
        }
    }
    link.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: &str = r#"{"id":"q","moves":[["B","C3"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1]}"#;

    fn sent(pool: &mut Pool, line: &str, now: Instant) -> Ticket {
        match pool.submit(line, now) {
            Some(Submitted::Send(t, l)) => {
                assert_eq!(l, line);
                t
            }
            other => panic!("not sent: {other:?}"),
        }
    }

    fn answer(turn: usize, during: bool) -> Vec<u8> {
        json!({"id": "q", "turnNumber": turn, "isDuringSearch": during})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn every_final_answer_is_printed_once_and_a_query_ends_with_its_last_turn() {
        let now = Instant::now();
        let mut pool = Pool::new(9, Duration::from_secs(5));
        let t = sent(&mut pool, Q, now);
        let c = t.bytes();
        assert!(pool.answer(&c, &answer(1, true), now).is_some());
        assert!(pool.answer(&c, &answer(1, false), now).is_some());
        assert!(pool.answer(&c, &answer(1, false), now).is_none(), "repeat");
        assert!(
            pool.answer(&c, &answer(1, true), now).is_none(),
            "after its final"
        );
        let other = Ticket {
            nonce: 8,
            seq: t.seq,
        }
        .bytes();
        assert!(
            pool.answer(&other, &answer(0, false), now).is_none(),
            "not ours"
        );
        assert_eq!(pool.open(), 1);
        assert!(pool.answer(&c, &answer(0, false), now).is_some());
        assert_eq!(pool.open(), 0);
        assert!(pool.answer(&c, &answer(0, false), now).is_none());
    }

    #[test]
    fn an_unanswered_job_is_sent_again_later_and_later() {
        let now = Instant::now();
        let mut pool = Pool::new(1, Duration::from_secs(5));
        let t = sent(&mut pool, Q, now);
        assert!(pool.due(now + Duration::from_secs(4)).is_empty());
        let again = pool.due(now + Duration::from_secs(5));
        assert_eq!(again, vec![(t, Q.to_string())]);
        assert!(
            pool.due(now + Duration::from_secs(14)).is_empty(),
            "waits 10 s now"
        );
        assert_eq!(pool.due(now + Duration::from_secs(15)).len(), 1);
        // An error about the whole query ends it.
        let e = json!({"error": "job too large"}).to_string();
        assert!(pool.answer(&t.bytes(), e.as_bytes(), now).is_some());
        assert_eq!(pool.open(), 0);
    }

    #[test]
    fn bad_lines_and_actions_are_answered_here() {
        let mut pool = Pool::new(1, Duration::from_secs(5));
        let now = Instant::now();
        let Some(Submitted::Print(v)) = pool.submit("{oops", now) else {
            panic!("not answered")
        };
        assert!(v["error"].as_str().unwrap().contains("JSON"));
        let Some(Submitted::Print(v)) = pool.submit(r#"{"id":"v","action":"query_version"}"#, now)
        else {
            panic!("not answered")
        };
        assert_eq!(
            (v["id"].as_str(), v["version"].is_string()),
            (Some("v"), true)
        );
        assert_eq!(pool.submit("  ", now), None);
        assert_eq!(pool.open(), 0);
    }

    #[test]
    fn a_busy_refusal_is_sent_again_and_an_empty_answer_is_ignored() {
        let now = Instant::now();
        let mut pool = Pool::new(3, Duration::from_secs(30));
        let t = sent(&mut pool, Q, now);
        let busy = json!({"error": "this worker holds 1 jobs", "id": "q", "retryAfter": 2});
        let busy = busy.to_string();
        assert!(pool.answer(&t.bytes(), busy.as_bytes(), now).is_none());
        assert!(pool.answer(&t.bytes(), b"{}", now).is_none());
        assert_eq!(pool.open(), 1, "still waiting for its answers");
        assert!(pool.due(now + Duration::from_secs(1)).is_empty());
        assert_eq!(pool.due(now + Duration::from_secs(2)).len(), 1);
    }
}
