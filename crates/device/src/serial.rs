//! GTP over a serial line: the board's controller sends one command per line and reads
//! the reply. The port is opened raw (no echo, no line editing, no flow control), lines
//! are buffered in bounded memory so noise or a runaway sender cannot exhaust it, and a
//! port that vanishes (USB unplugged, pty closed) is reopened while the GTP session, held
//! by the caller's handler, carries on.

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{open, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::stat::Mode;
use nix::sys::termios::{
    cfmakeraw, cfsetispeed, cfsetospeed, tcgetattr, tcsetattr, BaudRate, ControlFlags, InputFlags,
    SetArg, SpecialCharacterIndices,
};

/// Longest line kept; longer lines are answered with a GTP error and discarded.
// Counted with its '\n': a line takes at most the whole pending buffer.
pub const MAX_LINE: usize = 4096;

/// The longest `serve_gtp` goes without looking at its stop flag (handler time aside).
const STOP_CHECK: Duration = Duration::from_millis(100);

/// How long a write may make no progress before the port is deemed stuck.
// A UART without flow control always drains; only a wedged driver or pty stalls.
const WRITE_STALL: Duration = Duration::from_secs(5);

/// Where and how fast the serial line is.
#[derive(Clone, Debug)]
pub struct SerialConfig {
    /// The device, e.g. `/dev/ttyUSB0` or a stable `/dev/serial/by-id/…` link.
    pub path: PathBuf,
    /// Bits per second, the same both ways.
    pub baud: u32,
    /// Wait between attempts to reopen a port that vanished or failed.
    pub reopen_delay: Duration,
}

/// Why the serial port could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SerialError {
    /// The baud rate is not one the terminal driver offers.
    #[error("unsupported baud rate {0} (use a standard rate such as 9600 or 115200)")]
    UnsupportedBaud(u32),
    /// The device could not be opened.
    #[error("cannot open serial port {}: {source}", path.display())]
    Open {
        /// The device tried.
        path: PathBuf,
        /// What `open` said.
        source: nix::Error,
    },
    /// The device refused its line settings (it may not be a terminal).
    #[error("cannot set serial line parameters: {0}")]
    Termios(#[source] nix::Error),
    /// The other side went away: end of file, hang-up, or EIO.
    #[error("serial port gone ({0})")]
    Gone(&'static str),
    /// A write made no progress for too long.
    #[error("serial write stalled for {0:?}")]
    WriteStalled(Duration),
    /// Any other failure reading, writing or polling.
    #[error("serial I/O failed: {0}")]
    Io(#[source] nix::Error),
}

/// One thing read from the line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineEvent {
    /// A complete line, without its "\n" or "\r\n"; invalid UTF-8 replaced by U+FFFD.
    Line(String),
    /// A line over [`MAX_LINE`] bytes, discarded up to its newline.
    TooLong,
}

/// Splits incoming bytes into lines within a fixed buffer, so memory stays bounded
/// however long a line is.
#[derive(Debug)]
struct LineBuffer {
    /// Bytes received and not yet returned; may hold several lines.
    pending: heapless::Vec<u8, MAX_LINE>,
    /// Set while skipping the rest of an over-long line, until its newline.
    discarding: bool,
}

impl LineBuffer {
    fn new() -> LineBuffer {
        LineBuffer {
            pending: heapless::Vec::new(),
            discarding: false,
        }
    }

    /// Free space in bytes; never zero once `next_event` has returned `None`.
    fn room(&self) -> usize {
        self.pending.capacity() - self.pending.len()
    }

    /// Appends as much of `bytes` as fits and returns how many were taken.
    fn push(&mut self, bytes: &[u8]) -> usize {
        let taken = bytes.len().min(self.room());
        // Cannot fail: `taken` is at most the free space.
        let _ = self.pending.extend_from_slice(&bytes[..taken]);
        taken
    }

    /// The next complete line (or over-long line) among the buffered bytes.
    fn next_event(&mut self) -> Option<LineEvent> {
        let Some(end) = self.pending.iter().position(|&b| b == b'\n') else {
            if self.pending.is_full() {
                // No newline in a full buffer: the line is too long. Drop what we have
                // and skip on to its newline, reporting it once there.
                self.discarding = true;
                self.pending.clear();
            }
            return None;
        };
        let event = if self.discarding {
            self.discarding = false;
            LineEvent::TooLong
        } else {
            let line = &self.pending[..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            LineEvent::Line(String::from_utf8_lossy(line).into_owned())
        };
        // Keep what follows the newline for the next call.
        let rest = self.pending.len() - (end + 1);
        self.pending.copy_within(end + 1.., 0);
        self.pending.truncate(rest);
        Some(event)
    }
}

/// An open serial port in raw mode.
#[derive(Debug)]
pub struct SerialPort {
    fd: OwnedFd,
    lines: LineBuffer,
}

impl SerialPort {
    /// Opens the port and sets it raw, 8N1, no flow control, at the configured speed.
    pub fn open(config: &SerialConfig) -> Result<SerialPort, SerialError> {
        let baud = baud_rate(config.baud)?;
        // O_NOCTTY: a board must never become our controlling terminal (its hang-up
        // would signal the daemon). O_NONBLOCK: every wait goes through poll, with a
        // timeout, and open does not block on modem lines.
        let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = open(&config.path, flags, Mode::empty()).map_err(|source| SerialError::Open {
            path: config.path.clone(),
            source,
        })?;
        let mut tio = tcgetattr(&fd).map_err(SerialError::Termios)?;
        cfmakeraw(&mut tio);
        cfsetispeed(&mut tio, baud).map_err(SerialError::Termios)?;
        cfsetospeed(&mut tio, baud).map_err(SerialError::Termios)?;
        // CLOCAL: ignore modem control lines (boards have none); CREAD: receive at all.
        tio.control_flags |= ControlFlags::CLOCAL | ControlFlags::CREAD | ControlFlags::CS8;
        tio.control_flags &= !(ControlFlags::PARENB | ControlFlags::CSTOPB | ControlFlags::CRTSCTS);
        // cfmakeraw leaves IXOFF and IXANY; noise must not pause the line either.
        tio.input_flags &= !(InputFlags::IXON | InputFlags::IXOFF | InputFlags::IXANY);
        // VMIN 1 makes an empty non-blocking read EAGAIN; with VMIN 0 it would return 0,
        // indistinguishable from the end of file that marks a vanished port.
        tio.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        tio.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        tcsetattr(&fd, SetArg::TCSANOW, &tio).map_err(SerialError::Termios)?;
        Ok(SerialPort {
            fd,
            lines: LineBuffer::new(),
        })
    }

    /// Waits up to `timeout` for the next line; `Ok(None)` on timeout, `Err` once the port is gone.
    pub fn read_line(&mut self, timeout: Duration) -> Result<Option<LineEvent>, SerialError> {
        let deadline = Instant::now() + timeout;
        let mut polled = false;
        // Sized to the line buffer's free space, so every byte read is taken.
        let mut chunk = [0u8; MAX_LINE];
        loop {
            if let Some(event) = self.lines.next_event() {
                return Ok(Some(event));
            }
            // Checked after reads too, so a stream of noise without newlines still
            // returns to the caller on time.
            let left = deadline.saturating_duration_since(Instant::now());
            if polled && left.is_zero() {
                return Ok(None);
            }
            polled = true;
            let ready = self.wait(PollFlags::POLLIN, left)?;
            if !ready.contains(PollFlags::POLLIN) {
                continue;
            }
            let room = self.lines.room();
            match nix::unistd::read(&self.fd, &mut chunk[..room]) {
                Ok(0) => return Err(SerialError::Gone("end of file")),
                Ok(n) => {
                    self.lines.push(&chunk[..n]);
                }
                Err(Errno::EAGAIN | Errno::EINTR) => {}
                Err(e) => return Err(io_error(e)),
            }
        }
    }

    /// Writes all of `text`, waiting for the port to drain when its buffer is full.
    pub fn write_all(&mut self, text: &str) -> Result<(), SerialError> {
        let mut rest = text.as_bytes();
        while !rest.is_empty() {
            match nix::unistd::write(&self.fd, rest) {
                Ok(0) => return Err(SerialError::Gone("write accepted nothing")),
                Ok(n) => rest = &rest[n..],
                Err(Errno::EAGAIN) => {
                    let ready = self.wait(PollFlags::POLLOUT, WRITE_STALL)?;
                    if ready.is_empty() {
                        return Err(SerialError::WriteStalled(WRITE_STALL));
                    }
                }
                Err(Errno::EINTR) => {}
                Err(e) => return Err(io_error(e)),
            }
        }
        Ok(())
    }

    /// Polls for `events` up to `timeout`: the ready ones (empty on timeout or a
    /// signal), or `Err` if the port hung up or failed instead.
    fn wait(&self, events: PollFlags, timeout: Duration) -> Result<PollFlags, SerialError> {
        // Rounded up so that a sub-millisecond remainder does not become a busy loop.
        let millis = u64::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        let timeout = PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.fd.as_fd(), events)];
        match poll(&mut fds, timeout) {
            Ok(_) => {}
            Err(Errno::EINTR) => return Ok(PollFlags::empty()),
            Err(e) => return Err(SerialError::Io(e)),
        }
        let revents = fds[0].revents().unwrap_or(PollFlags::empty());
        // Data still buffered is read before a hang-up is reported; the read that
        // finds nothing more then fails with EOF or EIO.
        if revents.intersects(events) {
            Ok(revents & events)
        } else if revents.contains(PollFlags::POLLNVAL) {
            Err(SerialError::Io(Errno::EBADF))
        } else if revents.contains(PollFlags::POLLERR) {
            Err(SerialError::Gone("poll error"))
        } else if revents.contains(PollFlags::POLLHUP) {
            Err(SerialError::Gone("hang-up"))
        } else {
            Ok(PollFlags::empty())
        }
    }
}

/// EIO is how a tty reports its other side gone (pty master closed, USB device removed).
fn io_error(e: Errno) -> SerialError {
    match e {
        Errno::EIO => SerialError::Gone("EIO"),
        Errno::ENXIO | Errno::ENODEV => SerialError::Gone("device removed"),
        e => SerialError::Io(e),
    }
}

/// The terminal driver's code for `baud`, if it has one.
fn baud_rate(baud: u32) -> Result<BaudRate, SerialError> {
    Ok(match baud {
        1200 => BaudRate::B1200,
        1800 => BaudRate::B1800,
        2400 => BaudRate::B2400,
        4800 => BaudRate::B4800,
        9600 => BaudRate::B9600,
        19200 => BaudRate::B19200,
        38400 => BaudRate::B38400,
        57600 => BaudRate::B57600,
        115200 => BaudRate::B115200,
        230400 => BaudRate::B230400,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        460800 => BaudRate::B460800,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        500000 => BaudRate::B500000,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        576000 => BaudRate::B576000,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        921600 => BaudRate::B921600,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        1000000 => BaudRate::B1000000,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        1152000 => BaudRate::B1152000,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        1500000 => BaudRate::B1500000,
        #[cfg(any(target_os = "linux", target_os = "android"))]
        2000000 => BaudRate::B2000000,
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            not(target_arch = "sparc64")
        ))]
        2500000 => BaudRate::B2500000,
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            not(target_arch = "sparc64")
        ))]
        3000000 => BaudRate::B3000000,
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            not(target_arch = "sparc64")
        ))]
        3500000 => BaudRate::B3500000,
        #[cfg(all(
            any(target_os = "linux", target_os = "android"),
            not(target_arch = "sparc64")
        ))]
        4000000 => BaudRate::B4000000,
        other => return Err(SerialError::UnsupportedBaud(other)),
    })
}

/// Serves GTP on the serial line until `stop` is set, reopening the port whenever it is lost.
///
/// Each line goes to `handle`, whose reply is written back as is; an over-long line is
/// answered with a GTP error without reaching `handle`. When the port fails or vanishes
/// it is reopened every `reopen_delay`; the loss and the recovery are logged once each,
/// and `handle` (the session) is kept throughout, so an unplugged board finds its game
/// where it left it.
pub fn serve_gtp(config: &SerialConfig, stop: &AtomicBool, mut handle: impl FnMut(&str) -> String) {
    let path = config.path.display();
    let mut port: Option<SerialPort> = None;
    // Whether a loss has been logged and not yet its recovery, so neither repeats.
    let mut lost = false;
    while !stop.load(Ordering::Relaxed) {
        let Some(open_port) = port.as_mut() else {
            match SerialPort::open(config) {
                Ok(opened) => {
                    if lost {
                        log::info!("serial port {path} is back; GTP session continues");
                    } else {
                        log::info!("serving GTP on serial port {path}");
                    }
                    lost = false;
                    port = Some(opened);
                }
                Err(e) => {
                    if !lost {
                        log::warn!("{e}; retrying every {:?}", config.reopen_delay);
                        lost = true;
                    }
                    nap(config.reopen_delay, stop);
                }
            }
            continue;
        };
        let result = match open_port.read_line(STOP_CHECK) {
            Ok(None) => Ok(()),
            Ok(Some(LineEvent::Line(line))) => open_port.write_all(&handle(&line)),
            Ok(Some(LineEvent::TooLong)) => {
                open_port.write_all(&format!("? line too long (more than {MAX_LINE} bytes)\n\n"))
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            log::warn!(
                "lost serial port {path}: {e}; reopening every {:?}",
                config.reopen_delay
            );
            lost = true;
            port = None;
            // A device that just vanished may linger a moment; let it settle first.
            nap(config.reopen_delay, stop);
        }
    }
}

/// Sleeps for `delay`, waking early when `stop` is set.
fn nap(delay: Duration, stop: &AtomicBool) {
    let until = Instant::now() + delay;
    while !stop.load(Ordering::Relaxed) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(STOP_CHECK));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` in chunks of `chunk` bytes, as reads would, collecting every event.
    fn feed(buf: &mut LineBuffer, bytes: &[u8], chunk: usize) -> Vec<LineEvent> {
        let mut events = Vec::new();
        for mut piece in bytes.chunks(chunk) {
            while !piece.is_empty() {
                let taken = buf.push(piece);
                piece = &piece[taken..];
                while let Some(event) = buf.next_event() {
                    events.push(event);
                }
            }
        }
        events
    }

    fn line(s: &str) -> LineEvent {
        LineEvent::Line(s.to_string())
    }

    #[test]
    fn crlf_and_lf_lines() {
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, b"name\r\nversion\n\r\n\n", 64);
        assert_eq!(events, [line("name"), line("version"), line(""), line("")]);
    }

    #[test]
    fn only_one_trailing_cr_is_stripped() {
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, b"a\r\r\nb\rc\n", 64);
        assert_eq!(events, [line("a\r"), line("b\rc")]);
    }

    #[test]
    fn several_lines_in_one_chunk_come_one_at_a_time() {
        let mut buf = LineBuffer::new();
        assert_eq!(buf.push(b"play b d4\ngenmove w\nlist"), 24);
        assert_eq!(buf.next_event(), Some(line("play b d4")));
        assert_eq!(buf.next_event(), Some(line("genmove w")));
        // The unfinished line stays buffered.
        assert_eq!(buf.next_event(), None);
        buf.push(b"_stones\n");
        assert_eq!(buf.next_event(), Some(line("list_stones")));
        assert_eq!(buf.next_event(), None);
    }

    #[test]
    fn line_split_over_chunks() {
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, b"komi 6.5\r\nboardsize 19\r\n", 1);
        assert_eq!(events, [line("komi 6.5"), line("boardsize 19")]);
        // A CR and LF arriving in separate reads still make one line end.
        let mut buf = LineBuffer::new();
        assert!(feed(&mut buf, b"clear_board\r", 64).is_empty());
        assert_eq!(feed(&mut buf, b"\n", 64), [line("clear_board")]);
    }

    #[test]
    fn longest_line_kept_and_one_byte_more_rejected() {
        let mut longest = vec![b'x'; MAX_LINE - 1];
        longest.push(b'\n');
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, &longest, 1000);
        assert_eq!(events, [LineEvent::Line("x".repeat(MAX_LINE - 1))]);

        let mut over = vec![b'x'; MAX_LINE];
        over.extend_from_slice(b"\nnext\n");
        let events = feed(&mut buf, &over, 1000);
        assert_eq!(events, [LineEvent::TooLong, line("next")]);
    }

    #[test]
    fn megabyte_line_is_one_too_long_then_lines_work() {
        let mut bytes = vec![b'a'; 1 << 20];
        bytes.extend_from_slice(b"\r\nquit\r\n");
        for chunk in [1, 7, 512, MAX_LINE, 10_000] {
            let mut buf = LineBuffer::new();
            let events = feed(&mut buf, &bytes, chunk);
            assert_eq!(events, [LineEvent::TooLong, line("quit")], "chunk {chunk}");
            assert!(!buf.discarding);
            assert!(buf.pending.is_empty());
        }
    }

    #[test]
    fn too_long_line_and_next_line_in_the_same_chunk() {
        let mut bytes = vec![b'z'; MAX_LINE + 10];
        bytes.extend_from_slice(b"\nname\nver");
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, &bytes, bytes.len());
        assert_eq!(events, [LineEvent::TooLong, line("name")]);
        assert_eq!(feed(&mut buf, b"sion\n", 64), [line("version")]);
    }

    #[test]
    fn noise_never_panics_and_becomes_replacement_chars() {
        let mut buf = LineBuffer::new();
        let events = feed(&mut buf, b"\x00\xff\xfe\x80abc\xc3\n\x00\n", 3);
        assert_eq!(
            events,
            [line("\0\u{FFFD}\u{FFFD}\u{FFFD}abc\u{FFFD}"), line("\0")]
        );

        // Pseudo-random bytes of every value, fed in uneven chunks: no panic, bounded
        // buffer, and a clean line afterwards still comes through.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let noise: Vec<u8> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect();
        let mut buf = LineBuffer::new();
        for (i, piece) in noise.chunks(997).enumerate() {
            feed(&mut buf, piece, 1 + i % 300);
            assert!(buf.pending.len() <= MAX_LINE);
        }
        let events = feed(&mut buf, b"\nname\n", 64);
        assert_eq!(events.last(), Some(&line("name")));
    }

    #[test]
    fn baud_rates() {
        assert!(matches!(baud_rate(9600), Ok(BaudRate::B9600)));
        assert!(matches!(baud_rate(115200), Ok(BaudRate::B115200)));
        #[cfg(target_os = "linux")]
        assert!(matches!(baud_rate(921600), Ok(BaudRate::B921600)));
        for bad in [0, 110, 1234, 115201, 5_000_000] {
            assert!(matches!(baud_rate(bad), Err(SerialError::UnsupportedBaud(b)) if b == bad));
        }
    }

    #[test]
    fn open_failures_say_what() {
        let config = SerialConfig {
            path: "/nonexistent/tty".into(),
            baud: 115200,
            reopen_delay: Duration::from_millis(10),
        };
        let err = SerialPort::open(&config).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/tty"), "{err}");
        let config = SerialConfig {
            baud: 12345,
            ..config
        };
        assert!(matches!(
            SerialPort::open(&config),
            Err(SerialError::UnsupportedBaud(12345))
        ));
        // Not a terminal: opens, but refuses line settings.
        let file = tempfile::NamedTempFile::new().unwrap();
        let config = SerialConfig {
            path: file.path().to_path_buf(),
            baud: 115200,
            ..config
        };
        assert!(matches!(
            SerialPort::open(&config),
            Err(SerialError::Termios(_))
        ));
    }
}
