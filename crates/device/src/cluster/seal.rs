//! The pool's shared secret: an HMAC-SHA256 over each job and answer, carried as an MQTT 5
//! user property, so that a client of the broker without the secret can neither forge
//! answers (it can read the jobs, correlation data and all) nor slip jobs in.

use ring::hmac;

/// The user property that carries a message's seal (hex).
pub const PROPERTY: &str = "tengen-seal";

/// What a sealed message is: a job and an answer with the same bytes seal differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A job, bound to its response topic.
    Job,
    /// An answer.
    Answer,
}

/// The pool's secret, ready to seal and check.
#[derive(Clone)]
pub struct Seal(hmac::Key);

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal(..)")
    }
}

/// Why a secret was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a pool secret needs at least 16 bytes (it has {0})")]
pub struct SecretTooShort(pub usize);

impl Seal {
    /// The seal of `secret` (at least 16 bytes: a short one is guessed offline).
    pub fn new(secret: &[u8]) -> Result<Seal, SecretTooShort> {
        if secret.len() < 16 {
            return Err(SecretTooShort(secret.len()));
        }
        Ok(Seal(hmac::Key::new(hmac::HMAC_SHA256, secret)))
    }

    /// The bytes sealed: the kind, the parts' lengths (so that no two splits of the
    /// same bytes seal alike), then the parts.
    fn message(kind: Kind, topic: &str, correlation: &[u8], payload: &[u8]) -> Vec<u8> {
        let parts = [topic.as_bytes(), correlation, payload];
        let mut m = Vec::with_capacity(64 + parts.iter().map(|p| p.len()).sum::<usize>());
        m.extend_from_slice(match kind {
            Kind::Job => b"tengen job\0",
            Kind::Answer => b"tengen answer\0",
        });
        for p in parts {
            m.extend_from_slice(&(p.len() as u64).to_be_bytes());
        }
        for p in parts {
            m.extend_from_slice(p);
        }
        m
    }

    /// The seal of a message, as hex. `topic` is a job's response topic and empty for
    /// an answer (whose topic the client chose).
    pub fn sign(&self, kind: Kind, topic: &str, correlation: &[u8], payload: &[u8]) -> String {
        let tag = hmac::sign(&self.0, &Seal::message(kind, topic, correlation, payload));
        tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether `seal` (hex) is this secret's seal of the message.
    pub fn check(
        &self,
        kind: Kind,
        topic: &str,
        correlation: &[u8],
        payload: &[u8],
        seal: &str,
    ) -> bool {
        let Some(tag) = unhex(seal) else {
            return false;
        };
        // ring compares in constant time.
        let m = Seal::message(kind, topic, correlation, payload);
        hmac::verify(&self.0, &m, &tag).is_ok()
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || s.len() > 128 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_checks_only_with_its_secret_kind_topic_and_bytes() {
        let seal = Seal::new(b"club secret 0123456789").unwrap();
        let s = seal.sign(Kind::Answer, "", b"ticket", b"{\"id\":\"q\"}");
        assert!(seal.check(Kind::Answer, "", b"ticket", b"{\"id\":\"q\"}", &s));
        assert!(!seal.check(Kind::Job, "", b"ticket", b"{\"id\":\"q\"}", &s));
        assert!(!seal.check(Kind::Answer, "", b"ticket", b"{\"id\":\"r\"}", &s));
        assert!(!seal.check(Kind::Answer, "", b"tickeT", b"{\"id\":\"q\"}", &s));
        assert!(!seal.check(Kind::Answer, "t", b"ticket", b"{\"id\":\"q\"}", &s));
        let other = Seal::new(b"another secret 0123456789").unwrap();
        assert!(!other.check(Kind::Answer, "", b"ticket", b"{\"id\":\"q\"}", &s));
        assert!(!seal.check(Kind::Answer, "", b"ticket", b"{\"id\":\"q\"}", "zz"));
        assert!(!seal.check(Kind::Answer, "", b"ticket", b"{\"id\":\"q\"}", ""));
        assert_eq!(Seal::new(b"short").unwrap_err(), SecretTooShort(5));
    }
}
