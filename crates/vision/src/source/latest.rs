//! The newest frame of a live source: a capture thread grabs frames as fast as the camera
//! sends them and keeps only the last one, so a slow reader never works on stale frames.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::{FrameSource, SourceError};
use crate::frame::Frame;

/// A live source that blocks until its next frame (at most about its stall timeout).
pub trait Grabber: Send + 'static {
    /// The next frame the device or stream sends; errors are statuses, and the next call
    /// tries again (reconnecting or reopening as needed).
    fn grab(&mut self) -> Result<Frame, SourceError>;
}

/// What the capture thread leaves for the reader.
#[derive(Default)]
struct Slot {
    frame: Option<Frame>,
    /// Frames grabbed so far.
    frames: u64,
    error: Option<SourceError>,
    /// Errors met so far.
    errors: u64,
}

struct Shared {
    slot: Mutex<Slot>,
    fresh: Condvar,
    stop: AtomicBool,
    /// Frames overwritten before anyone read them.
    dropped: AtomicU64,
}

/// A [`Grabber`] run on a thread of its own; [`FrameSource::next_frame`] returns the newest
/// frame not yet returned, the newest error, or [`SourceError::Stalled`] after `stall`.
pub struct Latest {
    shared: Arc<Shared>,
    stall: Duration,
    frames_seen: u64,
    errors_seen: u64,
}

/// Pause after a failed grab before the next try, doubled up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(2);

impl Latest {
    /// Starts capturing from `grabber` on a new thread.
    pub fn spawn<G: Grabber>(mut grabber: G, stall: Duration) -> Latest {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot::default()),
            fresh: Condvar::new(),
            stop: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
        });
        let theirs = shared.clone();
        std::thread::spawn(move || {
            let mut retry = FIRST_RETRY;
            while !theirs.stop.load(Ordering::SeqCst) {
                let got = grabber.grab();
                let failed = got.is_err();
                {
                    let mut slot = theirs.slot.lock().unwrap_or_else(PoisonError::into_inner);
                    match got {
                        Ok(f) => {
                            if slot.frame.replace(f).is_some() {
                                theirs.dropped.fetch_add(1, Ordering::Relaxed);
                            }
                            slot.frames += 1;
                        }
                        Err(e) => {
                            slot.error = Some(e);
                            slot.errors += 1;
                        }
                    }
                }
                theirs.fresh.notify_all();
                if failed {
                    // Sleep in small steps so that a dropped source stops soon.
                    let until = Instant::now() + retry;
                    while Instant::now() < until && !theirs.stop.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    retry = (retry * 2).min(MAX_RETRY);
                } else {
                    retry = FIRST_RETRY;
                }
            }
        });
        Latest {
            shared,
            stall,
            frames_seen: 0,
            errors_seen: 0,
        }
    }

    /// How many frames were replaced by a newer one before being read.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl FrameSource for Latest {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        let start = Instant::now();
        let mut slot = self
            .shared
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        loop {
            if slot.frames > self.frames_seen {
                if let Some(f) = slot.frame.take() {
                    self.frames_seen = slot.frames;
                    return Ok(Some(f));
                }
            }
            if slot.errors > self.errors_seen {
                self.errors_seen = slot.errors;
                if let Some(e) = slot.error.take() {
                    return Err(e);
                }
            }
            let left = self.stall.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(SourceError::Stalled {
                    origin: "the capture thread".into(),
                    after: self.stall,
                });
            }
            slot = self
                .shared
                .fresh
                .wait_timeout(slot, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Latest {
    /// The thread ends after its current grab (grabbers block at most about their stall
    /// timeout); it is not joined, so dropping a source never waits on a dead camera.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::PixelFormat;

    /// Frames whose one grey pixel counts up, one every millisecond.
    struct Counter(u8);

    impl Grabber for Counter {
        fn grab(&mut self) -> Result<Frame, SourceError> {
            std::thread::sleep(Duration::from_millis(1));
            self.0 = self.0.wrapping_add(1);
            Ok(Frame::new(1, 1, PixelFormat::Grey, vec![self.0]).unwrap())
        }
    }

    #[test]
    fn a_slow_reader_gets_the_newest_frame_and_stale_ones_are_dropped() {
        let mut src = Latest::spawn(Counter(0), Duration::from_secs(2));
        let first = src.next_frame().unwrap().unwrap().data()[0];
        std::thread::sleep(Duration::from_millis(60));
        let second = src.next_frame().unwrap().unwrap().data()[0];
        // Dozens of frames came in between; only the newest was kept.
        assert!(second.wrapping_sub(first) > 10, "{first} then {second}");
        assert!(src.dropped() > 10);
    }

    /// Fails every time, as an unplugged camera does.
    struct Unplugged;

    impl Grabber for Unplugged {
        fn grab(&mut self) -> Result<Frame, SourceError> {
            Err(SourceError::NoDevice {
                path: "/dev/video9".into(),
            })
        }
    }

    #[test]
    fn errors_are_passed_on_and_silence_is_a_stall() {
        let mut src = Latest::spawn(Unplugged, Duration::from_millis(300));
        assert!(matches!(
            src.next_frame(),
            Err(SourceError::NoDevice { .. })
        ));
        // The thread now waits before retrying: the reader hears of a stall, not a hang.
        let t = Instant::now();
        let r = src.next_frame();
        assert!(
            matches!(
                r,
                Err(SourceError::Stalled { .. } | SourceError::NoDevice { .. })
            ),
            "{r:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
