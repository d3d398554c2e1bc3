//! The job and answer envelope: which topics carry them, what a job holds and how an
//! answer finds its way back (MQTT 5 response topic and correlation data).

use serde_json::{json, Value};
use tengen_protocol::analysis::MAX_QUERY_LINE_BYTES;

/// The topic clients publish jobs on; workers take them through a shared subscription.
pub const JOB_TOPIC: &str = "tengen/jobs/analysis";

/// The largest job a worker takes: the longest query line `tengen analysis` reads.
pub const MAX_JOB_BYTES: usize = MAX_QUERY_LINE_BYTES;

/// Largest packet a cluster link reads; jobs between [`MAX_JOB_BYTES`] and this are
/// refused with an answer, larger ones the broker never sends (the connect packet says so).
pub const MAX_PACKET_BYTES: usize = 4 * MAX_JOB_BYTES;

/// The shared-subscription filter of a worker group: each job goes to one worker of it.
pub fn shared_filter(group: &str) -> String {
    format!("$share/{group}/{JOB_TOPIC}")
}

/// The prefix of every answer topic.
pub const ANSWERS: &str = "tengen/answers/";

/// The topic a client reads its answers on.
pub fn answer_topic(client_id: &str) -> String {
    format!("{ANSWERS}{client_id}")
}

/// A worker's retained status topic.
pub fn status_topic(worker_id: &str) -> String {
    format!("tengen/workers/{worker_id}/status")
}

/// Whether `name` may stand as one level of a topic (a client id, worker id or group):
/// not empty, and no `/`, `+` or `#`.
pub fn is_topic_level(name: &str) -> bool {
    !name.is_empty() && !name.contains(['/', '+', '#', '\0'])
}

/// Where an answer goes: the job's response topic and correlation data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The response topic.
    pub topic: String,
    /// Opaque bytes the client uses to match the answer to its job (may be empty).
    pub correlation: Vec<u8>,
}

/// One job as it arrives: a KataGo analysis query line and where to answer it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The query, as `tengen analysis` reads it on one line.
    pub query: Vec<u8>,
    /// Where answers go; `None` when the job named no response topic.
    pub reply: Option<Reply>,
}

/// Why a job is not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// Nobody to answer: the job is dropped.
    #[error("a job without a response topic was dropped")]
    NoReplyTopic,
    /// Over [`MAX_JOB_BYTES`]: refused with an answer.
    #[error("job too large: {0} bytes, the limit is {MAX_JOB_BYTES}")]
    TooLarge(usize),
    /// Not UTF-8 text.
    #[error("a job must be UTF-8 text")]
    NotText,
    /// Its response topic is outside the pool's answer topics: answering it would let
    /// anyone make the workers publish where they like. Dropped.
    #[error("a job whose response topic {0:?} is not under {ANSWERS}+ was dropped")]
    ForeignReplyTopic(String),
}

impl JobError {
    /// The answer that says so, in the analysis engine's error form.
    pub fn answer(&self) -> Value {
        json!({ "error": self.to_string() })
    }
}

impl Job {
    /// The reply address and the query text, or why the job cannot run.
    pub fn open(&self) -> Result<(&Reply, &str), (Option<&Reply>, JobError)> {
        let reply = self.reply.as_ref().ok_or((None, JobError::NoReplyTopic))?;
        let client = reply.topic.strip_prefix(ANSWERS).unwrap_or_default();
        if !is_topic_level(client) {
            return Err((None, JobError::ForeignReplyTopic(reply.topic.clone())));
        }
        if self.query.len() > MAX_JOB_BYTES {
            return Err((Some(reply), JobError::TooLarge(self.query.len())));
        }
        let text =
            std::str::from_utf8(&self.query).map_err(|_| (Some(reply), JobError::NotText))?;
        Ok((reply, text))
    }
}

/// A client's correlation data: its run's nonce (so that answers meant for an earlier
/// run under the same client id are told apart) and the job's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    /// Chosen at random when the client starts.
    pub nonce: u64,
    /// The job's number in this run.
    pub seq: u64,
}

impl Ticket {
    /// The 16 bytes sent as correlation data.
    pub fn bytes(self) -> Vec<u8> {
        let mut b = self.nonce.to_be_bytes().to_vec();
        b.extend_from_slice(&self.seq.to_be_bytes());
        b
    }

    /// The ticket in correlation data, if it is one.
    pub fn read(b: &[u8]) -> Option<Ticket> {
        let (n, s) = (b.get(..8)?, b.get(8..)?);
        Some(Ticket {
            nonce: u64::from_be_bytes(n.try_into().ok()?),
            seq: u64::from_be_bytes(s.try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(len: usize, reply: bool) -> Job {
        Job {
            query: vec![b' '; len],
            reply: reply.then(|| Reply {
                topic: answer_topic("c"),
                correlation: vec![1],
            }),
        }
    }

    #[test]
    fn a_job_needs_a_reply_topic_and_a_size_within_the_limit() {
        assert!(job(10, true).open().is_ok());
        assert_eq!(job(10, false).open().unwrap_err().1, JobError::NoReplyTopic);
        let big = job(MAX_JOB_BYTES + 1, true);
        let (reply, e) = big.open().unwrap_err();
        assert_eq!(reply.unwrap().topic, "tengen/answers/c");
        assert!(e.answer()["error"]
            .as_str()
            .unwrap()
            .starts_with("job too large"));
        let bad = Job {
            query: vec![0xff, 0xfe],
            ..job(0, true)
        };
        assert_eq!(bad.open().unwrap_err().1, JobError::NotText);
        for topic in [
            "tengen/workers/w/status",
            "tengen/answers/",
            "tengen/answers/a/b",
        ] {
            let foreign = Job {
                reply: Some(Reply {
                    topic: topic.into(),
                    correlation: vec![],
                }),
                ..job(10, true)
            };
            let (reply, e) = foreign.open().unwrap_err();
            assert!(reply.is_none(), "never answered");
            assert!(matches!(e, JobError::ForeignReplyTopic(_)), "{topic}");
        }
    }

    #[test]
    fn tickets_round_trip_and_other_bytes_are_not_tickets() {
        let t = Ticket { nonce: 7, seq: 300 };
        assert_eq!(Ticket::read(&t.bytes()), Some(t));
        assert_eq!(Ticket::read(b"short"), None);
        assert_eq!(Ticket::read(&[0; 17]), None);
        assert_eq!(shared_filter("club"), "$share/club/tengen/jobs/analysis");
        assert!(is_topic_level("kiosk-1"));
        assert!(!is_topic_level("a/b") && !is_topic_level("+") && !is_topic_level(""));
    }
}
