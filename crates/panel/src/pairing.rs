//! Pairing by a PIN shown on the kiosk: whoever can read the kiosk's screen trades the
//! PIN for a session token that controls take like `web.token`. The PIN is good for one
//! pairing, and wrong guesses are rate-limited (and make a new PIN), so it cannot be
//! guessed from the network.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Wrong PINs allowed before pairing pauses (the PIN changes then too).
const MAX_WRONG: u32 = 5;

/// How long pairing pauses after too many wrong PINs.
const PAUSE: Duration = Duration::from_secs(60);

/// Sessions kept; pairing another drops the oldest.
const MAX_SESSIONS: usize = 32;

/// Why a PIN was not taken.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum PairError {
    /// Not the PIN on show.
    #[error("wrong PIN")]
    Wrong,
    /// Too many wrong PINs lately.
    #[error("too many wrong PINs; try again in {0} s with the PIN on the kiosk")]
    Paused(u64),
    /// No randomness to make a token from.
    #[error("cannot make a session token: {0}")]
    Random(String),
}

/// The PIN on show and the sessions paired with it.
pub struct Pairing {
    state: Mutex<State>,
}

struct State {
    pin: String,
    wrong: u32,
    paused_until: Option<Instant>,
    sessions: VecDeque<String>,
}

impl Pairing {
    /// Pairing with a fresh PIN.
    pub fn new() -> Result<Pairing, PairError> {
        Ok(Pairing {
            state: Mutex::new(State {
                pin: new_pin()?,
                wrong: 0,
                paused_until: None,
                sessions: VecDeque::new(),
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The PIN on show.
    pub fn pin(&self) -> String {
        self.lock().pin.clone()
    }

    /// Trades the PIN on show for a session token; the PIN changes once used, and after
    /// [`MAX_WRONG`] wrong ones pairing pauses for [`PAUSE`] with a new PIN.
    pub fn pair(&self, pin: &str, now: Instant) -> Result<String, PairError> {
        let mut s = self.lock();
        if let Some(until) = s.paused_until {
            if now < until {
                return Err(PairError::Paused((until - now).as_secs() + 1));
            }
            s.paused_until = None;
        }
        if !crate::api::same(pin.as_bytes(), s.pin.as_bytes()) {
            s.wrong += 1;
            if s.wrong >= MAX_WRONG {
                s.wrong = 0;
                s.paused_until = Some(now + PAUSE);
                s.pin = new_pin()?;
            }
            return Err(PairError::Wrong);
        }
        let token = hex(&random::<16>()?);
        s.pin = new_pin()?;
        s.wrong = 0;
        if s.sessions.len() >= MAX_SESSIONS {
            s.sessions.pop_front();
        }
        s.sessions.push_back(token.clone());
        Ok(token)
    }

    /// Whether `token` is a paired session's.
    pub fn admits(&self, token: &str) -> bool {
        self.lock().sessions.iter().fold(false, |ok, t| {
            ok | crate::api::same(t.as_bytes(), token.as_bytes())
        })
    }
}

/// Six random digits.
fn new_pin() -> Result<String, PairError> {
    let n = u64::from_le_bytes(random::<8>()?);
    Ok(format!("{:06}", n % 1_000_000))
}

/// `N` bytes from the kernel's random source.
fn random<const N: usize>() -> Result<[u8; N], PairError> {
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| PairError::Random(e.to_string()))?;
    Ok(b)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_pairs_once_and_a_new_one_is_shown() {
        let p = Pairing::new().unwrap();
        let pin = p.pin();
        assert!(
            pin.len() == 6 && pin.bytes().all(|c| c.is_ascii_digit()),
            "{pin}"
        );
        let now = Instant::now();
        let token = p.pair(&pin, now).unwrap();
        assert_eq!(token.len(), 32);
        assert!(p.admits(&token));
        assert!(!p.admits("0123456789abcdef0123456789abcdef"));
        assert!(!p.admits(""));
        // Used: that PIN pairs no more (the new one may only match it by chance).
        if p.pin() != pin {
            assert_eq!(p.pair(&pin, now), Err(PairError::Wrong));
        }
        let second = p.pair(&p.pin(), now).unwrap();
        assert_ne!(second, token);
        assert!(p.admits(&token) && p.admits(&second));
    }

    #[test]
    fn wrong_pins_pause_pairing_and_change_the_pin() {
        let p = Pairing::new().unwrap();
        let pin = p.pin();
        let wrong = if pin == "000000" { "000001" } else { "000000" };
        let now = Instant::now();
        for _ in 0..MAX_WRONG {
            assert_eq!(p.pair(wrong, now), Err(PairError::Wrong));
        }
        // Paused: even the new PIN waits.
        assert!(matches!(p.pair(&p.pin(), now), Err(PairError::Paused(_))));
        let later = now + PAUSE + Duration::from_millis(1);
        assert!(p.pair(&p.pin(), later).is_ok());
    }

    #[test]
    fn sessions_are_bounded() {
        let p = Pairing::new().unwrap();
        let now = Instant::now();
        let first = p.pair(&p.pin(), now).unwrap();
        for _ in 0..MAX_SESSIONS {
            p.pair(&p.pin(), now).unwrap();
        }
        assert!(!p.admits(&first));
    }
}
