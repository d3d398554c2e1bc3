//! The kiosk panel of `tengen serve`, against a real mosquitto: the live view follows a
//! game played by publishing snapshots, controls need the token and are journalled, bad
//! requests get clear errors and change nothing. Skipped when mosquitto is not installed.

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::http::{get, post, raw, wait_for, Viewer};
use support::mqtt::{free_port, moves, setup, show, Daemon, Observer, Rows};

const TOKEN: &str = "club-kiosk-1";

fn panel_config(web_port: u16, token: Option<&str>, more: &str) -> String {
    let token = token
        .map(|t| format!("token = \"{t}\"\n"))
        .unwrap_or_default();
    format!(
        "[game]\nsize = 9\nkomi = 7\nengine = \"none\"\n[board]\nstability = 2\n\
         [web]\nenabled = true\nport = {web_port}\n{token}{more}"
    )
}

fn state_moves(port: u16) -> Vec<String> {
    moves(&get(port, "/api/state").json()["state"])
}

#[test]
fn the_panel_follows_the_game_and_controls_are_journalled() {
    let Some((dir, broker)) = setup("the_panel_follows_the_game") else {
        return;
    };
    let web = free_port();
    let obs = Observer::connect(broker.port, "obs");
    let cfg = panel_config(
        web,
        Some(TOKEN),
        "[analysis]\nenabled = true\ninterval_ms = 100\nmax_visits = 200\nownership = true\n\
         [engine]\nlevel = 6\n",
    );
    let mut daemon = Daemon::start(dir.path(), broker.port, &cfg);
    wait_for(web);
    on_mqtt(&obs, &daemon);

    // The page and its modules are served; nothing else is.
    let page = get(web, "/");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("/assets/app.js"), "{}", page.body);
    let js = get(web, "/assets/board.js");
    assert_eq!(js.status, 200);
    assert!(js
        .header("content-type")
        .unwrap()
        .starts_with("text/javascript"));
    for path in [
        "/assets/../Cargo.toml",
        "/assets/nope.js",
        "/api/nope",
        "/etc/passwd",
    ] {
        let r = get(web, path);
        assert_eq!(r.status, 404, "{path}");
        assert!(r.json()["error"].is_string(), "{path}");
    }

    // A viewer gets the whole view first, then each change as the MQTT topics carry it.
    let viewer = Viewer::connect(web);
    assert_eq!(viewer.status, 200);
    let (_, first) = viewer.wait(0, "view", |v| v["state"].is_object());
    assert_eq!(first.data["state"]["size"], serde_json::json!([9, 9]));
    // The configured level until a level command sets one.
    assert_eq!(first.data["state"]["level"], "6");
    let board = Rows::empty().with("E5", b'X');
    let from = viewer.count();
    let mqtt_from = obs.count();
    show(&obs, &board, 2);
    let (_, on_panel) = viewer.wait(from, "state", |s| moves(s) == ["B E5"]);
    let (i, _) = obs.wait(mqtt_from, "state", |s| moves(s) == ["B E5"]);
    let on_mqtt = obs.seen.lock().unwrap()[i].at;
    // The panel is fed with the MQTT link from the same messages.
    let gap = on_panel.at.max(on_mqtt) - on_panel.at.min(on_mqtt);
    assert!(
        gap < Duration::from_millis(500),
        "panel and MQTT {gap:?} apart"
    );
    // Analysis reaches the viewer and the graph, in Black's view.
    let (_, a) = viewer.wait(from, "analysis", |a| a["number"] == 1);
    assert_eq!(a.data["to_move"], "W");
    assert!(a.data["ownership"]
        .as_array()
        .is_some_and(|o| o.len() == 81));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // The view is taken whole: its graph point is its analysis, turned to Black's view.
        let v = get(web, "/api/state").json();
        let point = v["graph"]
            .as_array()
            .and_then(|g| g.iter().find(|p| p["number"] == 1).cloned());
        if let (Some(p), 1) = (point, v["analysis"]["number"].as_u64().unwrap_or(0)) {
            let (w, lead) = (&v["analysis"]["winrate"], &v["analysis"]["scoreLead"]);
            let near = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-9;
            assert!(near(&p["winrate"], 1.0 - w.as_f64().unwrap()), "{v}");
            assert!(near(&p["lead"], -lead.as_f64().unwrap()), "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "no graph point: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(get(web, "/api/analysis").json()["number"], 1);

    // A knocked stone: the alert names exactly its point, and clears when it is back.
    let from = viewer.count();
    show(&obs, &Rows::empty(), 2);
    let (_, alert) = viewer.wait(from, "alert", |a| a["kind"] == "fix");
    let points: Vec<&str> = alert.data["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["point"].as_str().unwrap())
        .collect();
    assert_eq!(points, ["E5"]);
    assert_eq!(get(web, "/api/state").json()["alert"]["kind"], "fix");
    show(&obs, &board, 2);
    viewer.wait(from, "alert", |a| a["kind"] == "resolved");
    assert!(get(web, "/api/state").json()["alert"].is_null());

    // Controls: refused without the token or with a wrong one, and nothing changes.
    for token in [None, Some("wrong-token-9")] {
        let r = post(web, "/api/command", token, r#"{"cmd":"pass"}"#);
        assert_eq!(r.status, 401, "{}", r.body);
        assert!(r.json()["error"].is_string());
    }
    // Bad input: a clear 4xx with the reason, and nothing changes.
    let bad = [
        ("not json", 400, "bad JSON"),
        (r#"{"cmd":"fly"}"#, 400, "fly"),
        (
            r#"{"cmd":"new_game","size":7,"handicap":9}"#,
            400,
            "handicap",
        ),
        (r#"{"cmd":"level","level":11}"#, 400, "level"),
        (r#"{"cmd":"gtp","line":"clear_board"}"#, 400, "gtp"),
    ];
    for (body, status, says) in bad {
        let r = post(web, "/api/command", Some(TOKEN), body);
        assert_eq!(r.status, status, "{body}: {}", r.body);
        let e = r.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains(says), "{body}: {e}");
    }
    let big = format!(r#"{{"cmd":"pass","x":"{}"}}"#, "a".repeat(20_000));
    assert_eq!(post(web, "/api/command", Some(TOKEN), &big).status, 413);
    assert_eq!(get(web, "/api/command").status, 405);
    assert_eq!(state_moves(web), ["B E5"]);

    // With the token: pass and undo go through the appliance, journalled.
    let r = post(web, "/api/command", Some(TOKEN), r#"{"cmd":"pass"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(state_moves(web), ["B E5", "W pass"]);
    assert_eq!(
        post(web, "/api/command", Some(TOKEN), r#"{"cmd":"undo"}"#).status,
        200
    );
    assert_eq!(state_moves(web), ["B E5"]);
    // The level, as text, in the state every viewer gets.
    let from = viewer.count();
    let r = post(
        web,
        "/api/command",
        Some(TOKEN),
        r#"{"cmd":"level","level":3}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    viewer.wait(from, "state", |s| s["level"] == "3");
    assert_eq!(get(web, "/api/state").json()["state"]["level"], "3");
    let sgf = get(web, "/api/sgf");
    assert_eq!(sgf.status, 200);
    assert!(sgf.body.contains("B[ee]"), "{}", sgf.body);

    // A new game archives this one; its SGF is listed and served by name only.
    let from = viewer.count();
    let r = post(
        web,
        "/api/command",
        Some(TOKEN),
        r#"{"cmd":"new_game","size":9,"komi":6.5,"engine":"none"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    viewer.wait(from, "state", |s| moves(s).is_empty() && s["komi"] == 6.5);
    let games = get(web, "/api/games").json();
    let game = &games.as_array().unwrap()[0];
    assert_eq!(game["moves"], 1);
    let name = game["name"].as_str().unwrap();
    let archived = get(web, &format!("/api/games/{name}"));
    assert_eq!(archived.status, 200);
    assert!(archived.body.contains("B[ee]"));
    assert!(archived
        .header("content-disposition")
        .unwrap()
        .contains(name));
    for (path, status) in [
        ("/api/games/..%2Fjournal.jsonl", 400),
        ("/api/games/..%2F..%2Fetc%2Fpasswd", 400),
        ("/api/games/.hidden.sgf", 400),
        ("/api/games/0-0moves.sgf", 404),
    ] {
        assert_eq!(get(web, path).status, status, "{path}");
    }

    // The daemon restarted: the game the panel started is the one resumed.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    drop(viewer);
    let _daemon = Daemon::start(dir.path(), broker.port, &cfg);
    wait_for(web);
    let state = get(web, "/api/state").json();
    assert_eq!(state["state"]["komi"], 6.5);
    assert!(moves(&state["state"]).is_empty());
    // The level set before is journalled and carried into the new game.
    assert_eq!(state["state"]["level"], "3");
}

#[test]
fn a_read_only_panel_refuses_controls_and_shrugs_off_abuse() {
    let Some((dir, broker)) = setup("a_read_only_panel") else {
        return;
    };
    let web = free_port();
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start(dir.path(), broker.port, &panel_config(web, None, ""));
    wait_for(web);
    let r = post(web, "/api/command", Some(TOKEN), r#"{"cmd":"pass"}"#);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("read-only"));

    // A slow-loris client holds its connection open without finishing its headers;
    // others are served meanwhile, and it is cut off.
    let mut slow = TcpStream::connect(("127.0.0.1", web)).unwrap();
    slow.write_all(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // Malformed and oversized requests: errors, not a stopped daemon.
    let garbage = raw(web, b"BLAH / HTTP/9.9\r\n\r\n");
    assert!(
        garbage.status == 0 || (400..500).contains(&garbage.status),
        "{garbage:?}"
    );
    let huge_header = format!(
        "GET /api/state HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    let r = raw(web, huge_header.as_bytes());
    assert!(
        r.status == 0 || (400..500).contains(&r.status),
        "{}",
        r.status
    );
    // Many rapid controls, all refused, none disturbing the game.
    let started = Instant::now();
    for _ in 0..1000 {
        assert_eq!(
            post(web, "/api/command", None, r#"{"cmd":"resign"}"#).status,
            403
        );
    }
    eprintln!("1000 refused controls in {:?}", started.elapsed());
    let from = obs.count();
    show(&obs, &Rows::empty().with("C3", b'X'), 2);
    obs.wait(from, "state", |s| moves(s) == ["B C3"]);
    assert_eq!(state_moves(web), ["B C3"]);
    // The slow client was cut off after the header deadline.
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 512];
    let n = std::io::Read::read(&mut slow, &mut buf).unwrap_or(0);
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(
        n == 0 || answer.starts_with("HTTP/1.1 408"),
        "the slow client was answered {answer:?}"
    );
}

#[test]
fn a_taken_port_stops_the_daemon_before_ready() {
    let Some((dir, broker)) = setup("a_taken_port") else {
        return;
    };
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mut daemon = Daemon::start(dir.path(), broker.port, &panel_config(port, None, ""));
    let status = daemon.child.wait().unwrap();
    assert!(!status.success());
    assert!(daemon.log().contains("web panel"), "{}", daemon.log());
}

/// The graph of `/api/state` once a state is on show (restored points wait for one).
fn graph_on_show(port: u16) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = get(port, "/api/state").json();
        if v["state"].is_object() {
            return v["graph"].as_array().unwrap().clone();
        }
        assert!(Instant::now() < deadline, "no state on show: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The graph's point for move `number`, if any.
fn point(graph: &[serde_json::Value], number: u64) -> Option<&serde_json::Value> {
    graph.iter().find(|p| p["number"] == number)
}

/// Waits until `daemon` is on MQTT (its retained `status` names its pid), so that what is
/// published next reaches it.
fn on_mqtt(obs: &Observer, daemon: &Daemon) {
    let pid = daemon.child.id();
    obs.wait(0, "status", |s| s["pid"] == pid);
}

/// Waits until the graph file holds a point for move `number`.
fn saved_point(dir: &std::path::Path, number: u64) {
    let path = dir.join("state/graph.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let saved: serde_json::Value = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if saved["points"]
            .as_array()
            .is_some_and(|p| point(p, number).is_some())
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no point {number} saved: {saved}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether two points carry the same figures (the file's decimals may differ from the
/// first in the last digit).
fn same_point(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    let near = |k: &str| (a[k].as_f64().unwrap() - b[k].as_f64().unwrap()).abs() < 1e-12;
    a["number"] == b["number"] && a["visits"] == b["visits"] && near("winrate") && near("lead")
}

#[test]
fn the_graph_outlives_a_restart_and_never_shows_another_games_points() {
    let Some((dir, broker)) = setup("the_graph_outlives_a_restart") else {
        return;
    };
    let web = free_port();
    let obs = Observer::connect(broker.port, "obs");
    let cfg = panel_config(
        web,
        None,
        "[analysis]\nenabled = true\ninterval_ms = 100\nmax_visits = 200\n",
    );
    let mut daemon = Daemon::start(dir.path(), broker.port, &cfg);
    wait_for(web);
    on_mqtt(&obs, &daemon);
    // Two moves, each position analysed before the next.
    let mut board = Rows::empty();
    for (n, (p, c)) in [("E5", b'X'), ("C3", b'O')].into_iter().enumerate() {
        board = board.with(p, c);
        let from = obs.count();
        show(&obs, &board, 2);
        obs.wait(from, "analysis", |a| a["number"] == n + 1);
    }
    let before = graph_on_show(web);
    let first = point(&before, 1).expect("a point for move 1").clone();
    assert!(first["visits"].as_u64().unwrap() > 0, "{first}");

    // Killed once the position left is saved: its point comes back at once (only move
    // 2's position is analysed again), in the view and in a viewer's first event.
    saved_point(dir.path(), 1);
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    let mut daemon = Daemon::start(dir.path(), broker.port, &cfg);
    wait_for(web);
    let after = graph_on_show(web);
    let p = point(&after, 1).expect("move 1's point after a restart");
    assert!(same_point(p, &first), "{p} vs {first}");
    let viewer = Viewer::connect(web);
    let (_, view) = viewer.wait(0, "view", |v| v["state"].is_object());
    let p = point(view.data["graph"].as_array().unwrap(), 1).expect("in the SSE view");
    assert!(same_point(p, &first), "{p} vs {first}");
    drop(viewer);

    // Stopped cleanly with analysis off: the current position's point is kept too.
    on_mqtt(&obs, &daemon);
    let from = obs.count();
    obs.publish("command", r#"{"cmd":"analysis","on":false}"#);
    obs.wait(from, "state", |_| true);
    let before = graph_on_show(web);
    let last = point(&before, 2).expect("a point for move 2").clone();
    let pid = nix::unistd::Pid::from_raw(daemon.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(daemon.child.wait().unwrap().success());
    let mut daemon = Daemon::start(dir.path(), broker.port, &cfg);
    wait_for(web);
    let after = graph_on_show(web);
    assert_eq!(after.len(), before.len(), "{after:?} vs {before:?}");
    let p = point(&after, 2).expect("move 2's point after a clean stop");
    assert!(same_point(p, &last), "{p} vs {last}");

    // Another game's points are never shown: with the journal gone the configured game
    // starts, another komi, and none of the saved points is its.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    std::fs::remove_file(dir.path().join("state/journal.jsonl")).unwrap();
    let other = cfg
        .replace("komi = 7\n", "komi = 5.5\n")
        .replace("enabled = true\ninterval", "enabled = false\ninterval");
    let mut daemon = Daemon::start(dir.path(), broker.port, &other);
    wait_for(web);
    assert!(graph_on_show(web).is_empty());
    let passed_over = format!("0 of the {} saved graph points", after.len());
    assert!(daemon.log().contains(&passed_over), "{}", daemon.log());

    // A damaged file is passed over with a warning; the daemon serves on.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    std::fs::write(
        dir.path().join("state/graph.json"),
        b"{\"version\":1,\"game\":",
    )
    .unwrap();
    let daemon = Daemon::start(dir.path(), broker.port, &other);
    wait_for(web);
    assert!(graph_on_show(web).is_empty());
    assert!(
        daemon.log().contains("the saved graph is passed over"),
        "{}",
        daemon.log()
    );
}

#[test]
fn a_pin_on_the_kiosk_pairs_a_browser_for_the_controls() {
    let Some((dir, broker)) = setup("a_pin_on_the_kiosk") else {
        return;
    };
    let web = free_port();
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        &panel_config(web, None, "pin = true\n"),
    );
    wait_for(web);
    let pin_on_show = || {
        get(web, "/api/pin").json()["pin"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let pair = |body: &str| post(web, "/api/pair", None, body);
    let not = |pin: &str| if pin == "000000" { "000001" } else { "000000" }.to_string();

    // Unpaired: refused as unauthorised (pairing is on, so not read-only).
    let r = post(web, "/api/command", None, r#"{"cmd":"pass"}"#);
    assert_eq!(r.status, 401, "{}", r.body);
    let pin = pin_on_show();
    assert!(
        pin.len() == 6 && pin.bytes().all(|b| b.is_ascii_digit()),
        "{pin}"
    );
    assert_eq!(pair(&format!(r#"{{"pin":"{}"}}"#, not(&pin))).status, 401);
    assert_eq!(pair("not json").status, 400);
    assert_eq!(
        pair(&format!(r#"{{"pin":"{}"}}"#, "1".repeat(300))).status,
        413
    );

    // The PIN on show gives a session token, and the controls take it.
    let r = pair(&format!(r#"{{"pin":"{pin}"}}"#));
    assert_eq!(r.status, 200, "{}", r.body);
    let token = r.json()["token"].as_str().unwrap().to_string();
    let r = post(web, "/api/command", Some(&token), r#"{"cmd":"pass"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(state_moves(web), ["B pass"]);
    // Used, the PIN changes (it may come up again only by a one-in-a-million chance).
    let next = pin_on_show();
    let mut wrong_so_far = 0;
    if next != pin {
        assert_eq!(pair(&format!(r#"{{"pin":"{pin}"}}"#)).status, 401);
        wrong_so_far += 1;
    }

    // Guessing is cut short: after five wrong PINs since the last pairing, even the right
    // one waits.
    for _ in wrong_so_far..5 {
        let wrong = not(&pin_on_show());
        assert_eq!(pair(&format!(r#"{{"pin":"{wrong}"}}"#)).status, 401);
    }
    let r = pair(&format!(r#"{{"pin":"{}"}}"#, pin_on_show()));
    assert_eq!(r.status, 429, "{}", r.body);
    // The session paired before still works.
    let r = post(web, "/api/command", Some(&token), r#"{"cmd":"undo"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(state_moves(web).is_empty());
}

/// One request with its own `Host` and `Origin` lines.
fn with_host(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    origin: Option<&str>,
    body: &str,
) -> u16 {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{origin}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(port, req.as_bytes()).status
}

/// A viewer connection from `source` (an address of the loopback range) that asks for
/// the events and never reads them.
fn stalled_viewer(source: std::net::Ipv4Addr, port: u16) -> Option<std::net::TcpStream> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .ok()?;
    let mut s = rt
        .block_on(async {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind(std::net::SocketAddr::from((source, 0)))?;
            socket
                .connect(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
                .await?
                .into_std()
        })
        .ok()?;
    s.set_nonblocking(false).ok()?;
    s.write_all(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    Some(s)
}

/// Whether a viewer from `source` is admitted: its first event arrives.
fn admitted(source: std::net::Ipv4Addr, port: u16) -> bool {
    use std::io::Read;
    let Some(mut s) = stalled_viewer(source, port) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.windows(11).any(|w| w == b"event: view") {
            return true;
        }
    }
    false
}

/// The audit's attacks on the panel: a page on a rebound name (DNS rebinding), a foreign
/// page pausing pairing, and 64 viewers that never read. Each is refused, and a new
/// viewer from another machine still gets in.
#[test]
fn the_panel_refuses_foreign_names_foreign_pages_and_hoarded_connections() {
    let Some((dir, broker)) = setup("the_panel_refuses_foreign") else {
        return;
    };
    let web = free_port();
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        &panel_config(web, None, "pin = true\n"),
    );
    wait_for(web);

    // Security headers on the page and on errors alike.
    let page = get(web, "/");
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'self'"),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(get(web, "/api/nope")
        .header("content-security-policy")
        .is_some());

    // Names: addresses, localhost and the device's own name; not a rebound domain.
    let own = nix::unistd::gethostname().unwrap().into_string().unwrap();
    for (host, want) in [
        (format!("127.0.0.1:{web}"), 200),
        ("localhost".to_string(), 200),
        (format!("[::1]:{web}"), 200),
        (format!("{own}.local:{web}"), 200),
        (format!("rebound.example:{web}"), 421),
    ] {
        assert_eq!(
            with_host(web, "GET", "/api/state", &host, None, ""),
            want,
            "{host}"
        );
    }

    // A foreign page's wrong PINs are refused before they count: pairing stays open.
    let here = format!("127.0.0.1:{web}");
    for _ in 0..20 {
        let s = with_host(
            web,
            "POST",
            "/api/pair",
            &here,
            Some("http://evil.example"),
            r#"{"pin":"000000"}"#,
        );
        assert_eq!(s, 403);
    }
    let pin = get(web, "/api/pin").json()["pin"]
        .as_str()
        .unwrap()
        .to_string();
    let body = format!(r#"{{"pin":"{pin}"}}"#);
    let own_page = format!("http://{here}");
    assert_eq!(
        with_host(web, "POST", "/api/pair", &here, Some(&own_page), &body),
        200
    );

    // 64 viewers from one machine that never read: it gets its share, no more, and a
    // viewer from another machine (another loopback address) is admitted.
    let hoard: Vec<_> = (0..64)
        .filter_map(|_| stalled_viewer(std::net::Ipv4Addr::new(127, 0, 0, 1), web))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let others = (2..7u8)
        .filter(|&b| admitted(std::net::Ipv4Addr::new(127, 0, 0, b), web))
        .count();
    eprintln!(
        "with {} stalled viewers from one address: {others} of 5 new viewers from other \
         addresses admitted",
        hoard.len()
    );
    assert_eq!(others, 5);
}
