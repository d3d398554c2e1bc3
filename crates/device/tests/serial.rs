//! GTP over a real pty pair made by socat: a session, an over-long line, noise,
//! unplugging and replugging the board, and stopping.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tengen_device::serial::{serve_gtp, LineEvent, SerialConfig, SerialPort};

/// How long any one reply may take before the test fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(10);

fn socat_installed() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("socat").is_file()));
    if !found {
        println!("serial tests skipped: socat not installed");
    }
    found
}

/// A small GTP session: counts commands and keeps the stones played.
fn handler() -> impl FnMut(&str) -> String {
    let mut count = 0;
    let mut moves = Vec::new();
    move |line| {
        count += 1;
        let mut words = line.split_whitespace();
        match words.next() {
            Some("play") => {
                moves.push(words.collect::<Vec<_>>().join(" "));
                format!("= {count}\n\n")
            }
            Some("list") => format!("= {count} {}\n\n", moves.join(", ")),
            _ => format!("= {count} {line}\n\n"),
        }
    }
}

fn config(path: PathBuf) -> SerialConfig {
    SerialConfig {
        path,
        baud: 115200,
        reopen_delay: Duration::from_millis(50),
    }
}

/// A daemon serving GTP on one end of a socat pty pair, and the test on the other.
struct Rig {
    dir: tempfile::TempDir,
    socat: Option<Child>,
    stop: Arc<AtomicBool>,
    server: Option<JoinHandle<()>>,
    ctl: Option<SerialPort>,
}

impl Rig {
    fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let mut rig = Rig {
            dir,
            socat: None,
            stop: Arc::new(AtomicBool::new(false)),
            server: None,
            ctl: None,
        };
        rig.plug();
        let config = config(rig.board());
        let stop = Arc::clone(&rig.stop);
        rig.server = Some(thread::spawn(move || serve_gtp(&config, &stop, handler())));
        rig
    }

    fn board(&self) -> PathBuf {
        self.dir.path().join("board")
    }

    fn ctl_path(&self) -> PathBuf {
        self.dir.path().join("ctl")
    }

    /// Starts socat and opens the controller's end once both links are there.
    fn plug(&mut self) {
        let pty = |link: &Path| format!("pty,raw,echo=0,link={}", link.display());
        let child = Command::new("socat")
            .arg(pty(&self.board()))
            .arg(pty(&self.ctl_path()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start socat");
        self.socat = Some(child);
        let since = Instant::now();
        // `exists` follows the links, so stale ones from a killed socat do not count.
        while !(self.board().exists() && self.ctl_path().exists()) {
            assert!(since.elapsed() < PATIENCE, "socat made no ptys");
            thread::sleep(Duration::from_millis(10));
        }
        self.ctl = Some(SerialPort::open(&config(self.ctl_path())).expect("open ctl pty"));
    }

    /// Kills socat, as pulling the cable would, and drops the controller's end.
    fn unplug(&mut self) {
        self.ctl = None;
        if let Some(mut child) = self.socat.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn ctl(&mut self) -> &mut SerialPort {
        self.ctl.as_mut().expect("plugged in")
    }

    fn send(&mut self, text: &str) {
        self.ctl().write_all(text).expect("write to ctl");
    }

    /// The next reply: its lines up to the blank line that ends it, joined with '\n'.
    /// A reply line too long for the controller shows as "<too long>".
    fn reply(&mut self) -> String {
        let deadline = Instant::now() + PATIENCE;
        let mut lines: Vec<String> = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no complete reply within {PATIENCE:?}; got {lines:?}"
            );
            match self.ctl().read_line(left).expect("read from ctl") {
                None => {}
                Some(LineEvent::TooLong) => lines.push("<too long>".into()),
                Some(LineEvent::Line(line)) if line.is_empty() && !lines.is_empty() => {
                    return lines.join("\n");
                }
                // A blank line before any reply text ends nothing.
                Some(LineEvent::Line(line)) if line.is_empty() => {}
                Some(LineEvent::Line(line)) => lines.push(line),
            }
        }
    }

    fn ask(&mut self, command: &str) -> String {
        self.send(&format!("{command}\n"));
        self.reply()
    }

    /// Sets `stop` and waits for the server; how long that took.
    fn shut_down(&mut self) -> Duration {
        self.stop.store(true, Ordering::Relaxed);
        let since = Instant::now();
        if let Some(server) = self.server.take() {
            while !server.is_finished() && since.elapsed() < PATIENCE {
                thread::sleep(Duration::from_millis(5));
            }
            let took = since.elapsed();
            assert!(server.is_finished(), "serve_gtp ignored stop");
            server.join().expect("serve_gtp panicked");
            return took;
        }
        since.elapsed()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.unplug();
        self.stop.store(true, Ordering::Relaxed);
        // After a failed test the thread may be stuck in the handler; do not hang on it.
        if let Some(server) = self.server.take() {
            let since = Instant::now();
            while !server.is_finished() && since.elapsed() < PATIENCE {
                thread::sleep(Duration::from_millis(5));
            }
            if server.is_finished() && server.join().is_err() && !thread::panicking() {
                panic!("serve_gtp panicked");
            }
        }
    }
}

#[test]
fn session_answers_commands_in_order() {
    if !socat_installed() {
        return;
    }
    let mut rig = Rig::new();
    assert_eq!(rig.ask("name"), "= 1 name");
    assert_eq!(rig.ask("play b d4"), "= 2");
    // CRLF as some controllers send it, and two commands in one write.
    rig.send("play w q16\r\nplay b c3\n");
    assert_eq!(rig.reply(), "= 3");
    assert_eq!(rig.reply(), "= 4");
    assert_eq!(rig.ask("list"), "= 5 b d4, w q16, b c3");
    rig.shut_down();
}

#[test]
fn megabyte_line_is_refused_and_the_next_command_served() {
    if !socat_installed() {
        return;
    }
    let mut rig = Rig::new();
    let mut huge = "x".repeat(1 << 20);
    huge.push('\n');
    rig.send(&huge);
    assert_eq!(rig.reply(), "? line too long (more than 4096 bytes)");
    // The refused line never reached the handler.
    assert_eq!(rig.ask("version"), "= 1 version");
    rig.shut_down();
}

#[test]
fn noise_is_answered_and_serving_goes_on() {
    if !socat_installed() {
        return;
    }
    let mut rig = Rig::new();
    assert_eq!(rig.ask("name"), "= 1 name");
    // xorshift: 4 KB of every byte value, NULs and 0xFF forced in.
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut noise: Vec<u8> = (0..4000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    noise.extend_from_slice(b"\0\0\xff\xfe\xff\x80\0\n");
    // write_all takes text, as replies are; noise goes straight to the pty instead.
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut raw = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_NOCTTY.bits())
            .open(rig.ctl_path())
            .unwrap();
        raw.write_all(&noise).unwrap();
    }
    rig.send("after noise\n");
    // The noise gets replies of its own (one per newline in it); skip to ours.
    let deadline = Instant::now() + PATIENCE;
    let count: u32 = loop {
        assert!(
            Instant::now() < deadline,
            "no reply to the command after the noise"
        );
        let reply = rig.reply();
        if let Some(count) = reply
            .strip_prefix("= ")
            .and_then(|r| r.strip_suffix(" after noise"))
        {
            break count.parse().unwrap();
        }
    };
    assert!(count > 2, "the noise reached the handler");
    assert_eq!(rig.ask("name"), format!("= {} name", count + 1));
    rig.shut_down();
}

#[test]
fn unplug_and_replug_keeps_the_session() {
    if !socat_installed() {
        return;
    }
    let mut rig = Rig::new();
    assert_eq!(rig.ask("play b d4"), "= 1");
    assert_eq!(rig.ask("play w q16"), "= 2");
    rig.unplug();
    thread::sleep(Duration::from_millis(300));
    rig.plug();
    assert_eq!(rig.ask("list"), "= 3 b d4, w q16");
    // And once more, straight away.
    rig.unplug();
    rig.plug();
    assert_eq!(rig.ask("play b c3"), "= 4");
    assert_eq!(rig.ask("list"), "= 5 b d4, w q16, b c3");
    rig.shut_down();
}

#[test]
fn stops_promptly_when_asked() {
    if !socat_installed() {
        return;
    }
    let mut rig = Rig::new();
    assert_eq!(rig.ask("name"), "= 1 name");
    let took = rig.shut_down();
    assert!(took < Duration::from_secs(1), "stopping took {took:?}");
}

#[test]
fn stops_promptly_while_waiting_for_a_missing_port() {
    // No socat needed: the port never appears, and the reopen delay is long.
    let dir = tempfile::tempdir().unwrap();
    let config = SerialConfig {
        reopen_delay: Duration::from_secs(30),
        ..config(dir.path().join("missing"))
    };
    let stop = Arc::new(AtomicBool::new(false));
    let server = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || serve_gtp(&config, &stop, handler()))
    };
    thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let since = Instant::now();
    while !server.is_finished() && since.elapsed() < PATIENCE {
        thread::sleep(Duration::from_millis(5));
    }
    let took = since.elapsed();
    assert!(server.is_finished(), "serve_gtp ignored stop");
    server.join().unwrap();
    assert!(took < Duration::from_secs(1), "stopping took {took:?}");
}

#[test]
fn port_reports_gone_when_the_pty_vanishes() {
    if !socat_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("board");
    let ctl = dir.path().join("ctl");
    let pty = |link: &Path| format!("pty,raw,echo=0,link={}", link.display());
    let mut socat = Command::new("socat")
        .arg(pty(&board))
        .arg(pty(&ctl))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start socat");
    let since = Instant::now();
    while !(board.exists() && ctl.exists()) {
        assert!(since.elapsed() < PATIENCE, "socat made no ptys");
        thread::sleep(Duration::from_millis(10));
    }
    let mut port = SerialPort::open(&config(board)).unwrap();
    let mut ctl = SerialPort::open(&config(ctl)).unwrap();
    ctl.write_all("last words\n").unwrap();
    assert_eq!(
        port.read_line(PATIENCE).unwrap(),
        Some(LineEvent::Line("last words".into()))
    );
    assert_eq!(port.read_line(Duration::from_millis(50)).unwrap(), None);
    socat.kill().unwrap();
    socat.wait().unwrap();
    let since = Instant::now();
    let read = port.read_line(PATIENCE);
    println!(
        "read after the pty vanished: {read:?} after {:?}",
        since.elapsed()
    );
    assert!(read.is_err());
    let write = port.write_all("anyone?\n");
    println!("write after the pty vanished: {write:?}");
    assert!(write.is_err());
}
