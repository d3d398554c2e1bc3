//! A serial board over a real pseudo-terminal pair made by socat (`DIR/board` is the
//! daemon's serial port, `DIR/ctl` the controller's end) and a `tengen serve` daemon
//! talking GTP on it, for the fault tests.
#![allow(dead_code)]

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use tengen_rules::{BoardSize, Game, Move, Rules};

/// True when socat is on PATH; otherwise says the test is skipped.
pub fn have_socat() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("socat").is_file()));
    super::require_under_ci(found, "socat");
    if !found {
        println!("skipped: socat not installed");
    }
    found
}

/// A pty pair relayed by socat, `DIR/board` to `DIR/ctl`; killed when dropped (its
/// links are then left dangling, as an unplugged cable leaves its device gone).
pub struct Socat {
    child: Child,
}

impl Socat {
    pub fn start(dir: &Path) -> Socat {
        let (board, ctl) = (dir.join("board"), dir.join("ctl"));
        for link in [&board, &ctl] {
            let _ = std::fs::remove_file(link);
        }
        let child = Command::new("socat")
            .arg(format!("pty,raw,echo=0,link={}", board.display()))
            .arg(format!("pty,raw,echo=0,link={}", ctl.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start socat");
        let mut socat = Socat { child };
        let deadline = Instant::now() + Duration::from_secs(10);
        // `exists` follows the links: true once both point at live ptys.
        while !(board.exists() && ctl.exists()) {
            if let Ok(Some(status)) = socat.child.try_wait() {
                panic!("socat exited before making its ptys: {status}");
            }
            assert!(Instant::now() < deadline, "socat made no ptys in 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        socat
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Socat {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `tengen serve` process, killed (SIGKILL) when dropped; its stderr goes to a log
/// file that is printed if the test is failing.
pub struct Daemon {
    pub child: Child,
    pub log: PathBuf,
}

impl Daemon {
    /// Starts `tengen serve --config CONFIG` with `envs` added to a clean environment
    /// (no systemd variables inherited). `pid_env` sets `WATCHDOG_PID` to the daemon's
    /// own pid, as systemd does, by starting it through `sh -c 'exec …'`.
    pub fn start(dir: &Path, config: &Path, envs: &[(&str, &str)], pid_env: bool) -> Daemon {
        let log = dir.join("daemon.log");
        let stderr = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("cannot open the daemon log");
        let bin = env!("CARGO_BIN_EXE_tengen");
        let mut cmd = if pid_env {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg("WATCHDOG_PID=$$; export WATCHDOG_PID; exec \"$0\" serve --config \"$1\"")
                .arg(bin)
                .arg(config);
            c
        } else {
            let mut c = Command::new(bin);
            c.arg("serve").arg("--config").arg(config);
            c
        };
        cmd.env("RUST_LOG", "info")
            .env_remove("NOTIFY_SOCKET")
            .env_remove("WATCHDOG_USEC")
            .env_remove("WATCHDOG_PID")
            .env_remove("TENGEN_BOARDS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("cannot start tengen serve");
        Daemon { child, log }
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `kill -9` and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            // The last 16 KB is plenty: the log of the run that failed is at its end.
            let mut start = log.len().saturating_sub(16 * 1024);
            while !log.is_char_boundary(start) {
                start += 1;
            }
            eprintln!(
                "--- daemon log {} (end) ---\n{}\n--- end of daemon log ---",
                self.log.display(),
                &log[start..]
            );
        }
    }
}

/// The controller's end of the line (`DIR/ctl`).
pub struct Port {
    pub file: File,
    pending: Vec<u8>,
}

impl Port {
    pub fn open(path: &Path) -> Port {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::libc::O_NOCTTY)
            .open(path)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
        Port {
            file,
            pending: Vec::new(),
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.file
            .write_all(bytes)
            .expect("cannot write to the ctl pty");
    }

    /// The next reply, without the empty line that ends it, or `None` if no whole
    /// reply came within `timeout` (or the pty failed).
    pub fn reply(&mut self, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = self.pending.windows(2).position(|w| w == b"\n\n") {
                let text = String::from_utf8_lossy(&self.pending[..end]).into_owned();
                self.pending.drain(..end + 2);
                return Some(text);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.fill(left) {
                return None;
            }
        }
    }

    /// Sends `command` and waits up to `timeout` for its reply.
    pub fn ask(&mut self, command: &str, timeout: Duration) -> Option<String> {
        self.send(format!("{command}\n").as_bytes());
        self.reply(timeout)
    }

    /// Reads whatever arrives within `timeout`; false if the pty failed.
    pub fn fill(&mut self, timeout: Duration) -> bool {
        let millis = u64::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(u64::MAX);
        let mut fds = [PollFd::new(self.file.as_fd(), PollFlags::POLLIN)];
        match poll(
            &mut fds,
            PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX),
        ) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
        let revents = fds[0].revents().unwrap_or(PollFlags::empty());
        if !revents.contains(PollFlags::POLLIN) {
            // A hang-up without data: the relay is gone.
            return false;
        }
        let mut chunk = [0u8; 65536];
        match self.file.read(&mut chunk) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.pending.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }
}

/// A random legal 19x19 game under Chinese rules, without passes, as "B D4" strings:
/// at most `length` moves, fewer if a player is left with no move but a pass.
pub fn random_game(seed: u64, length: usize) -> Vec<String> {
    let size = BoardSize::square(19).unwrap();
    let mut game = Game::new(size, Rules::chinese());
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut moves = Vec::with_capacity(length);
    while moves.len() < length && !game.is_over() {
        let pla = game.to_move();
        let legal: Vec<Move> = game
            .legal_moves()
            .into_iter()
            .filter(|&m| m != Move::Pass)
            .collect();
        let Some(&mv) = (!legal.is_empty()).then(|| &legal[rng.usize(..legal.len())]) else {
            // Only a pass is left: the game ends here.
            break;
        };
        game.play(mv).expect("a legal move is refused");
        moves.push(format!("{} {}", pla.letter(), size.gtp(mv)));
    }
    moves
}

/// The moves of a `printsgf` reply, as "B D4" strings.
pub fn sgf_moves(reply: &str) -> Vec<String> {
    let text = reply
        .strip_prefix('=')
        .unwrap_or_else(|| panic!("printsgf failed: {reply:?}"));
    let record = tengen_rules::sgf::load(text.trim())
        .unwrap_or_else(|e| panic!("printsgf is not a readable SGF ({e}): {text}"));
    let size = record.game.board().size();
    record
        .game
        .turns()
        .iter()
        .map(|t| format!("{} {}", t.player.letter(), size.gtp(t.mv)))
        .collect()
}

/// Starts socat and the daemon and waits until it answers `name`.
pub fn start_session(dir: &Path, config: &Path) -> (Socat, Daemon, Port) {
    let socat = Socat::start(dir);
    let daemon = Daemon::start(dir, config, &[], false);
    let mut port = Port::open(&dir.join("ctl"));
    // Bytes written before the daemon opens its end wait in the pty.
    match port.ask("name", Duration::from_secs(20)) {
        Some(r) if r == "= Tengen" => {}
        other => panic!("the daemon does not answer `name`: {other:?}"),
    }
    (socat, daemon, port)
}
