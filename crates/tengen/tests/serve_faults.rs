//! `tengen serve` under faults, driven over a real pseudo-terminal pair made by socat
//! (`DIR/board` is the daemon's serial port, `DIR/ctl` the board controller's end):
//! `kill -9` in the middle of a stream of moves never loses an acknowledged one, the
//! serial session survives an unplugged cable and garbage on the line, and the systemd
//! watchdog pings stop while the engine loop is stuck in a long search.
//!
//! Without a model the daemon runs the classical engine and starts in well under a
//! second. Each test prints "skipped: socat not installed" and passes when socat is
//! missing. Every process is killed by a guard, every read has a timeout, and the
//! daemon's log is printed when a test fails.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use tengen_rules::{BoardSize, Game, Move, Rules};

/// True when socat is on PATH; otherwise says the test is skipped.
fn have_socat() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("socat").is_file()));
    if !found {
        println!("skipped: socat not installed");
    }
    found
}

/// A pty pair relayed by socat, `DIR/board` to `DIR/ctl`; killed when dropped (its
/// links are then left dangling, as an unplugged cable leaves its device gone).
struct Socat {
    child: Child,
}

impl Socat {
    fn start(dir: &Path) -> Socat {
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

    fn stop(&mut self) {
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
struct Daemon {
    child: Child,
    log: PathBuf,
}

impl Daemon {
    /// Starts `tengen serve --config CONFIG` with `envs` added to a clean environment
    /// (no systemd variables inherited). `pid_env` sets `WATCHDOG_PID` to the daemon's
    /// own pid, as systemd does, by starting it through `sh -c 'exec …'`.
    fn start(dir: &Path, config: &Path, envs: &[(&str, &str)], pid_env: bool) -> Daemon {
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

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `kill -9` and reap.
    fn kill(&mut self) {
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
struct Port {
    file: File,
    pending: Vec<u8>,
}

impl Port {
    fn open(path: &Path) -> Port {
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

    fn send(&mut self, bytes: &[u8]) {
        self.file
            .write_all(bytes)
            .expect("cannot write to the ctl pty");
    }

    /// The next reply, without the empty line that ends it, or `None` if no whole
    /// reply came within `timeout` (or the pty failed).
    fn reply(&mut self, timeout: Duration) -> Option<String> {
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
    fn ask(&mut self, command: &str, timeout: Duration) -> Option<String> {
        self.send(format!("{command}\n").as_bytes());
        self.reply(timeout)
    }

    /// Reads whatever arrives within `timeout`; false if the pty failed.
    fn fill(&mut self, timeout: Duration) -> bool {
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

/// Writes the daemon's configuration: serial on `DIR/board`, no MQTT, state in
/// `DIR/state`, a 19x19 game with no engine side, then `extra` TOML.
fn write_config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("tengen.toml");
    let text = format!(
        "[mqtt]\nenabled = false\n\n\
         [serial]\nport = \"{}\"\n\n\
         [game]\nsize = 19\nengine = \"none\"\n\n\
         [state]\ndir = \"{}\"\n\n{extra}",
        dir.join("board").display(),
        dir.join("state").display()
    );
    std::fs::write(&path, text).expect("cannot write the configuration");
    path
}

/// A random legal 19x19 game under Chinese rules, without passes, as "B D4" strings:
/// at most `length` moves, fewer if a player is left with no move but a pass.
fn random_game(seed: u64, length: usize) -> Vec<String> {
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
fn sgf_moves(reply: &str) -> Vec<String> {
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
fn start_session(dir: &Path, config: &Path) -> (Socat, Daemon, Port) {
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

#[test]
fn kill_dash_nine_never_loses_an_acknowledged_move() {
    if !have_socat() {
        return;
    }
    const RUNS: usize = 100;
    // A run acknowledges about 100 moves (a move takes the daemon about 1 ms here, its
    // fsync included), so when a game is used up the next one starts in a fresh state
    // directory.
    const LENGTH: usize = 600;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = write_config(dir, "");
    let mut rng = fastrand::Rng::with_seed(0x5EED_0009);
    let new_game = |rng: &mut fastrand::Rng| {
        let game = random_game(rng.u64(..), LENGTH);
        assert!(
            game.len() >= 200,
            "random game of only {} moves",
            game.len()
        );
        game
    };
    let mut game = new_game(&mut rng);
    let started = Instant::now();
    // The acknowledged moves are always the game's first `acked`.
    let mut acked = 0usize;
    let (mut runs, mut games, mut total) = (0, 1, 0);
    let mut one_unacked = 0;
    loop {
        let (mut socat, mut daemon, mut port) = start_session(dir, &config);
        let reply = port
            .ask("printsgf", Duration::from_secs(10))
            .expect("no reply to printsgf");
        let moves = sgf_moves(&reply);
        assert!(
            moves.len() >= acked,
            "run {runs}: {} acknowledged moves lost (the daemon has {} of {acked})",
            acked - moves.len(),
            moves.len()
        );
        assert!(
            moves.len() <= acked + 1,
            "run {runs}: the daemon has {} moves, {} more than were acknowledged",
            moves.len(),
            moves.len() - acked
        );
        let agree = moves.iter().zip(&game).take_while(|(a, b)| a == b).count();
        assert_eq!(
            agree,
            moves.len(),
            "run {runs}: move {} is {:?}, not the game's {:?}",
            agree + 1,
            moves[agree],
            game[agree]
        );
        if moves.len() > acked {
            // Applied and journalled, its reply lost at the kill: it counts from now on.
            one_unacked += 1;
        }
        acked = moves.len();
        if runs == RUNS {
            break;
        }
        if acked == game.len() {
            drop((port, daemon, socat));
            std::fs::remove_dir_all(dir.join("state")).unwrap();
            total += acked;
            acked = 0;
            game = new_game(&mut rng);
            games += 1;
            continue;
        }
        runs += 1;

        // Stream the rest of the game while counting replies; kill -9 at a random moment.
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let mut file = port.file.try_clone().unwrap();
            let lines: Vec<String> = game[acked..]
                .iter()
                .map(|m| format!("play {m}\n"))
                .collect();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for line in lines {
                    if stop.load(Ordering::SeqCst) || file.write_all(line.as_bytes()).is_err() {
                        break;
                    }
                }
            })
        };
        let delay = Duration::from_millis(rng.u64(0..=150));
        let mut kill_at: Option<Instant> = None;
        let count = |reply: Option<String>, acked: &mut usize| -> bool {
            match reply {
                Some(r) if r.starts_with('=') => {
                    *acked += 1;
                    true
                }
                Some(r) => panic!(
                    "run {runs}: `play {}` was refused: {r:?}",
                    game[*acked].as_str()
                ),
                None => false,
            }
        };
        while acked < game.len() {
            let wait = match kill_at {
                None => Duration::from_secs(10),
                Some(t) => t.saturating_duration_since(Instant::now()),
            };
            if wait.is_zero() {
                break;
            }
            if count(port.reply(wait), &mut acked) && kill_at.is_none() {
                kill_at = Some(Instant::now() + delay);
            }
            assert!(
                kill_at.is_some(),
                "run {runs}: no reply to the first `play` in 10 s"
            );
        }
        daemon.kill();
        // Replies the daemon wrote before it died are acknowledgements too: read on
        // until the relay has been quiet for 100 ms (at most 2 s).
        let drain_until = Instant::now() + Duration::from_secs(2);
        while acked < game.len() && Instant::now() < drain_until {
            if !count(port.reply(Duration::from_millis(100)), &mut acked) {
                break;
            }
        }
        // Unblocks the writer (its pty fails once the relay is gone).
        stop.store(true, Ordering::SeqCst);
        socat.stop();
        writer.join().unwrap();
        drop(port);
    }
    total += acked;
    println!(
        "kill -9: {runs} runs, {total} moves acknowledged, 0 lost \
         ({one_unacked} times one journalled move's reply was lost at the kill; \
         {games} games; {:.1} s)",
        started.elapsed().as_secs_f64()
    );
    assert!(total > 100, "only {total} moves acknowledged");
}

#[test]
fn serial_session_survives_unplug_and_bad_input() {
    if !have_socat() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = write_config(dir, "");
    let (mut socat, mut daemon, mut port) = start_session(dir, &config);
    let t = Duration::from_secs(10);
    for m in ["B D4", "W Q16", "B Q4"] {
        assert_eq!(port.ask(&format!("play {m}"), t).as_deref(), Some("="));
    }

    // Unplug: the relay and both ptys vanish, then come back under the same names.
    drop(port);
    socat.stop();
    std::thread::sleep(Duration::from_millis(300));
    let _socat = Socat::start(dir);
    std::thread::sleep(Duration::from_millis(800));
    let mut port = Port::open(&dir.join("ctl"));
    let reply = port.ask("printsgf", t).expect("no reply after the replug");
    assert_eq!(sgf_moves(&reply), ["B D4", "W Q16", "B Q4"]);
    assert_eq!(port.ask("play W D16", t).as_deref(), Some("="));
    assert!(daemon.log_has("is back; GTP session continues"));

    // A 1 MB line: one error, nothing kept.
    let mut big = vec![b'x'; 1 << 20];
    big.push(b'\n');
    port.send(&big);
    let reply = port
        .reply(Duration::from_secs(30))
        .expect("no reply to 1 MB");
    assert!(reply.starts_with("? line too long"), "{reply:?}");

    // 4 KB of noise (every byte value but the line end, NUL and 0xFF first) on one line.
    let mut rng = fastrand::Rng::with_seed(0xBAD_1DEA);
    let mut noise: Vec<u8> = vec![0x00, 0xFF];
    while noise.len() < 4000 {
        let b = rng.u8(..);
        if b != b'\n' {
            noise.push(b);
        }
    }
    noise.push(b'\n');
    port.send(&noise);
    let reply = port.reply(t).expect("no reply to noise");
    assert!(reply.starts_with('?'), "{reply:?}");

    assert_eq!(port.ask("name", t).as_deref(), Some("= Tengen"));
    let reply = port.ask("printsgf", t).expect("no reply to printsgf");
    assert_eq!(sgf_moves(&reply), ["B D4", "W Q16", "B Q4", "W D16"]);
    assert!(daemon.alive(), "the daemon exited");
}

#[test]
fn watchdog_pings_stop_when_the_engine_stalls() {
    if !have_socat() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // engine.visits is at most 10^7 (config validation); with the classical evaluator
    // on one thread that is a search of many minutes.
    let config = write_config(
        dir,
        "[engine]\nmode = \"search\"\nvisits = 10000000\nthreads = 1\n",
    );
    let notify_path = dir.join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let _socat = Socat::start(dir);
    let notify_env = notify_path.to_str().unwrap();
    let mut daemon = Daemon::start(
        dir,
        &config,
        &[("NOTIFY_SOCKET", notify_env), ("WATCHDOG_USEC", "400000")],
        true,
    );

    // Every datagram's lines (`READY=1`, `WATCHDOG=1`, …) until `until`.
    let messages = |until: Instant| -> Vec<String> {
        let mut lines = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return lines;
            }
            notify.set_read_timeout(Some(left)).unwrap();
            match notify.recv(&mut buf) {
                Ok(n) => lines.extend(
                    String::from_utf8_lossy(&buf[..n])
                        .lines()
                        .map(str::to_string),
                ),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(e) => panic!("notify socket: {e}"),
            }
        }
    };
    let count = |lines: &[String], what: &str| lines.iter().filter(|l| *l == what).count();

    // READY=1 first (within 20 s), then pings at half the interval while idle.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut ready = false;
    while !ready && Instant::now() < deadline {
        let lines = messages((Instant::now() + Duration::from_millis(100)).min(deadline));
        ready = lines.iter().any(|l| l == "READY=1");
    }
    assert!(ready, "no READY=1 in 20 s");
    let idle = messages(Instant::now() + Duration::from_secs(2));
    let pings = count(&idle, "WATCHDOG=1");
    assert!(pings >= 3, "{pings} watchdog pings in 2 s idle: {idle:?}");

    let mut port = Port::open(&dir.join("ctl"));
    port.send(b"genmove b\n");
    // A ping may still go out while the heartbeat ages: wait for 300 ms without one.
    let search_started = Instant::now();
    loop {
        let quiet = messages(Instant::now() + Duration::from_millis(300));
        if count(&quiet, "WATCHDOG=1") == 0 {
            break;
        }
        assert!(
            search_started.elapsed() < Duration::from_secs(5),
            "the watchdog pings go on 5 s after `genmove b`"
        );
    }
    let stalled = messages(Instant::now() + Duration::from_secs(2));
    assert!(daemon.alive(), "the daemon exited during the search");
    assert_eq!(
        count(&stalled, "WATCHDOG=1"),
        0,
        "watchdog pings while the engine loop is stuck in genmove: {stalled:?}"
    );
    assert!(
        port.reply(Duration::from_millis(10)).is_none(),
        "genmove answered already: the search was not long enough to test anything"
    );
    assert!(daemon.log_has("withholding the watchdog ping"));
    daemon.kill();
}

impl Daemon {
    /// Whether the daemon's log has a line containing `text`.
    fn log_has(&self, text: &str) -> bool {
        std::fs::read_to_string(&self.log).is_ok_and(|l| l.contains(text))
    }
}
