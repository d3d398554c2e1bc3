//! `tengen serve` under faults, driven over a real pseudo-terminal pair made by socat
//! (`DIR/board` is the daemon's serial port, `DIR/ctl` the board controller's end):
//! `kill -9` in the middle of a stream of moves never loses an acknowledged one, the
//! serial session survives an unplugged cable and garbage on the line, a long search is
//! cut short by the systemd watchdog's deadline, and SIGTERM stops the daemon within
//! seconds during a long search or a flood on the line. Over MQTT: a full state
//! directory (a small tmpfs, filled) still starts, with an alert, and records again once
//! there is room; a FIFO at the journal's path does not hang the start.
//!
//! Without a model the daemon runs the classical engine and starts in well under a
//! second. Each test prints "skipped: socat not installed" and passes when socat is
//! missing. Every process is killed by a guard, every read has a timeout, and the
//! daemon's log is printed when a test fails.

use std::io::Write;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod support;

use support::mqtt::{setup, Observer};
use support::process::terminate;

use support::serial::{have_socat, random_game, sgf_moves, start_session, Daemon, Port, Socat};

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
    std::fs::write(&path, support::config::without_network(&text))
        .expect("cannot write the configuration");
    path
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
        "[engine]\nmode = \"search\"\nvisits = 10000000\nmax_visits = 10000000\n\
         max_time = 3600\nthreads = 1\n",
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

    // The search would take minutes; the watchdog's deadline ends it at once, so the
    // loop comes round in time and the pings go on.
    let mut port = Port::open(&dir.join("ctl"));
    let asked = Instant::now();
    port.send(b"genmove b\n");
    let reply = port
        .reply(Duration::from_secs(10))
        .expect("a 10^7-visit genmove was not cut short by the watchdog deadline");
    assert!(reply.starts_with("= "), "{reply:?}");
    println!("watchdog: genmove cut short after {:?}", asked.elapsed());
    assert!(daemon.alive(), "the daemon exited during the search");
    assert!(daemon.log_has("search interrupted"));
    let after = messages(Instant::now() + Duration::from_secs(1));
    assert!(
        count(&after, "WATCHDOG=1") >= 1,
        "no pings after the search: {after:?}"
    );
    daemon.kill();
}

#[test]
fn sigterm_stops_a_long_search_and_a_serial_flood_in_time() {
    if !have_socat() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let config = write_config(
        dir,
        "[engine]\nmode = \"search\"\nvisits = 10000000\nmax_visits = 10000000\n\
         max_time = 3600\nthreads = 1\n",
    );

    // A search of minutes.
    let (_socat, mut daemon, mut port) = start_session(dir, &config);
    let played = port.ask("play B D4", Duration::from_secs(10));
    assert!(
        played.as_deref().is_some_and(|r| r.starts_with('=')),
        "{played:?}"
    );
    port.send(b"genmove w\n");
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        port.reply(Duration::from_millis(10)).is_none(),
        "genmove ended by itself"
    );
    let status = terminate(&mut daemon.child, Duration::from_secs(5));
    assert!(status.success(), "{status}");
    drop((port, daemon, _socat));

    // A flood of commands on the serial line, the queue full behind a search.
    let (mut socat, mut daemon, mut port) = start_session(dir, &config);
    let moves = sgf_moves(&port.ask("printsgf", Duration::from_secs(10)).unwrap());
    assert_eq!(moves.first().map(String::as_str), Some("B D4"), "{moves:?}");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let mut file = port.file.try_clone().unwrap();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let _ = file.write_all(b"genmove b\n");
            while !stop.load(Ordering::SeqCst) && file.write_all(b"showboard\n").is_ok() {}
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let status = terminate(&mut daemon.child, Duration::from_secs(5));
    assert!(status.success(), "{status}");
    stop.store(true, Ordering::SeqCst);
    socat.stop();
    writer.join().unwrap();
    drop((port, daemon, socat));

    // The journal is intact: the game comes back.
    let (_socat, _daemon, mut port) = start_session(dir, &config);
    let again = sgf_moves(&port.ask("printsgf", Duration::from_secs(10)).unwrap());
    assert_eq!(again.first().map(String::as_str), Some("B D4"), "{again:?}");
}

impl Daemon {
    /// Whether the daemon's log has a line containing `text`.
    fn log_has(&self, text: &str) -> bool {
        std::fs::read_to_string(&self.log).is_ok_and(|l| l.contains(text))
    }
}

// `tengen serve` on a full or odd state directory: a small tmpfs, filled, holds the
// state directory; the daemon still starts, says why nothing is recorded, leaves no
// temporary file behind, and records again once there is room. Needs mosquitto and
// root (to mount the tmpfs); it fails saying so without them.

/// A tmpfs of `kib` KiB mounted at `dir`, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, kib: u32) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "cannot mount a tmpfs at {} (this test needs root)",
            dir.display()
        );
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the filesystem of `dir` with one file until it takes no more bytes.
fn fill(dir: &Path) -> std::path::PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    while f.write_all(&[0]).is_ok() {}
    let _ = f.sync_all();
    path
}

fn temporaries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for sub in [dir.to_path_buf(), dir.join("cache")] {
        for e in std::fs::read_dir(sub).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tmp") {
                found.push(name);
            }
        }
    }
    found
}

const CONFIG: &str = "[engine]\nmodel = \"bundled\"\nthreads = 1\nvisits = 4\n\
                      [game]\nsize = 9\nengine = \"none\"\n";

fn gtp_over_mqtt(obs: &Observer, line: &str, id: &str) -> serde_json::Value {
    let from = obs.count();
    obs.publish(
        "command",
        format!(r#"{{"cmd":"gtp","line":"{line}","id":"{id}"}}"#),
    );
    obs.wait(from, "gtp/reply", |r| r["id"] == id).1
}

#[test]
fn a_full_state_directory_starts_with_an_alert_and_records_once_there_is_room() {
    let Some((dir, broker)) = setup("a_full_state_directory") else {
        return;
    };
    let state = dir.path().join("state");
    let _disk = Tmpfs::mount(&state, 1024);
    let filler = fill(&state);
    let obs = Observer::connect(broker.port, "obs");

    // A full disk, no journal yet, the bundled network's graph to cache (4 MB).
    let started = Instant::now();
    let mut daemon = support::mqtt::Daemon::start_with(
        dir.path(),
        broker.port,
        "gtp_commands = [\"*\"]\n",
        CONFIG,
    );
    let (_, alert) = obs.wait_for(0, "alert", Duration::from_secs(60), |a| {
        a["source"] == "journal"
    });
    let up = started.elapsed();
    assert!(
        alert["message"]
            .as_str()
            .unwrap()
            .contains("cannot be written"),
        "{alert}"
    );
    obs.wait(0, "status", |s| s["pid"].is_number());
    assert!(daemon.alive(), "{}", daemon.log());
    assert_eq!(temporaries(&state), Vec::<String>::new());
    // A change is refused, not acknowledged unrecorded.
    let r = gtp_over_mqtt(&obs, "play b E5", "p1");
    assert_eq!(r["ok"], false, "{r}");

    // Room again: the next change is recorded.
    std::fs::remove_file(&filler).unwrap();
    let r = gtp_over_mqtt(&obs, "play b E5", "p2");
    assert_eq!(r["ok"], true, "{r}");
    let journal = std::fs::read_to_string(state.join("journal.jsonl")).unwrap();
    assert!(journal.contains("E5"), "{journal}");
    let log = daemon.log();
    drop(daemon);
    eprintln!(
        "full 1 MiB state directory: up with a journal alert in {:.1} s, no temporary \
         file left, E5 recorded once space was freed",
        up.as_secs_f64()
    );
    assert!(log.contains("cannot cache the graph"), "{log}");

    // A journal damaged in the middle, on a full disk: it cannot be rewritten, so the
    // daemon shows what it can read and says so, instead of exiting at every start.
    let mut lines: Vec<String> = journal.lines().map(str::to_string).collect();
    let last = lines.len() - 1;
    lines.insert(last, "{not a record".into());
    std::fs::write(state.join("journal.jsonl"), lines.join("\n") + "\n").unwrap();
    let filler = fill(&state);
    let from = obs.count();
    let mut daemon = support::mqtt::Daemon::start_with(
        dir.path(),
        broker.port,
        "gtp_commands = [\"*\"]\n",
        CONFIG,
    );
    let (_, alert) = obs.wait_for(from, "alert", Duration::from_secs(60), |a| {
        a["source"] == "journal"
    });
    assert!(daemon.alive(), "{}", daemon.log());
    eprintln!("damaged journal on a full disk: {}", alert["message"]);
    drop(daemon);
    std::fs::remove_file(&filler).unwrap();

    // Something other than a file at the journal's path must not hang the start.
    std::fs::remove_file(state.join("journal.jsonl")).unwrap();
    let fifo = state.join("journal.jsonl");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let from = obs.count();
    let mut daemon = support::mqtt::Daemon::start_with(dir.path(), broker.port, "", CONFIG);
    let (_, alert) = obs.wait_for(from, "alert", Duration::from_secs(60), |a| {
        a["source"] == "journal"
    });
    assert!(
        alert["message"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{alert}"
    );
    assert!(daemon.alive(), "{}", daemon.log());
}
