//! `tengen serve --board x86-kiosk` on a bare machine: started from an empty working
//! directory (no `boards/`, no network file), with no MQTT broker listening, it takes
//! the board profile and the network built into the binary and tells systemd READY.

#![cfg(feature = "bundled-net")]

mod support;

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::mqtt::free_port;
use support::serial::{have_socat, Port, Socat};

#[test]
fn a_board_profile_reaches_ready_with_the_bundled_network_and_no_broker() {
    let cwd = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let state = work.path().join("state");
    // A port nobody listens on: the broker is retried in the background.
    let port = free_port();
    let config = work.path().join("tengen.toml");
    std::fs::write(
        &config,
        format!(
            "[mqtt]\nhost = \"127.0.0.1\"\nport = {port}\n\n[serial]\nport = \"{}\"\n",
            work.path().join("board").display()
        ),
    )
    .unwrap();
    // The board's serial line, when socat can make one: a GTP command over it makes the
    // daemon evaluate a position with the network.
    let socat = have_socat().then(|| Socat::start(work.path()));
    let notify_path = work.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let log = work.path().join("daemon.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["serve", "--board", "x86-kiosk", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(&state)
        .current_dir(cwd.path())
        .env("RUST_LOG", "info")
        .env("NOTIFY_SOCKET", &notify_path)
        .env_remove("TENGEN_BOARDS")
        .env_remove("WATCHDOG_USEC")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("tengen runs");

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut ready = false;
    let mut buf = [0u8; 4096];
    notify
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    while !ready && Instant::now() < deadline {
        if let Ok(n) = notify.recv(&mut buf) {
            ready = String::from_utf8_lossy(&buf[..n])
                .lines()
                .any(|l| l == "READY=1");
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "tengen serve exited ({status}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
    }
    if ready && socat.is_some() {
        let mut port = Port::open(&work.path().join("ctl"));
        let wait = Duration::from_secs(60);
        assert_eq!(port.ask("boardsize 9", wait).as_deref(), Some("="));
        let raw = port.ask("kata-raw-nn 0", wait).unwrap_or_default();
        assert!(raw.contains("whiteWin") && raw.contains("policy"), "{raw}");
        // The graph built from the bundled net is cached under its own name.
        let cached: Vec<String> = std::fs::read_dir(state.join("cache"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            cached
                .iter()
                .any(|n| n.starts_with("bundled-g170-b6c96-9x9-") && n.ends_with(".onnx")),
            "{cached:?}"
        );
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let serial = socat.is_some();
    drop(socat);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(ready, "no READY=1 in 60 s: {text}");
    assert!(
        text.contains("engine ready") && text.contains("the bundled network g170-b6c96"),
        "{text}"
    );
    if serial {
        assert!(text.contains("loaded model g170-b6c96"), "{text}");
    }
    // Nothing was looked for in, or left behind in, the working directory.
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
}
