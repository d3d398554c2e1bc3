//! `tengen serve` against a real mosquitto broker: whole games played by publishing board
//! snapshots (noisy ones included), bad payloads, a broker restart, the last will.
//! Skipped (with a message) when mosquitto is not installed.

mod support;

use std::time::Duration;

use serde_json::Value;
use support::mqtt::{free_port, have, moves, setup, show, Broker, Daemon, Observer, Rows};

#[test]
fn plays_against_the_engine_from_snapshots_and_leaves_a_will() {
    let Some((dir, broker)) = setup("plays_against_the_engine") else {
        return;
    };
    let obs = Observer::connect(broker.port, "obs");
    let mut daemon = Daemon::start(
        dir.path(),
        broker.port,
        "[game]\nsize = 9\nkomi = 7\nengine = \"white\"\n[board]\nstability = 2\n\
         [engine]\nlevel = 3\n",
    );
    let (mut at, state) = obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    assert_eq!(state["to_move"], "B");
    obs.wait(0, "availability", |v| v == "online");
    let mut board = Rows::of(&state);
    let mut last = state;
    for (n, p) in ["E5", "C3", "G3", "C7", "G7", "E3"].iter().enumerate() {
        let mut p = *p;
        if *board.at(p) != b'.' {
            // The engine took the point: play on any free one away from the edge.
            p = ["D4", "F4", "D6", "F6", "B2", "H8", "B8", "H2"]
                .into_iter()
                .find(|q| *board.clone().at(q) == b'.')
                .unwrap();
        }
        let next = board.clone().with(p, b'X');
        // A hand hovers over the board first: nothing must happen.
        show(&obs, &next.hand_over(p), 2);
        show(&obs, &next, 2);
        let number = 2 * n + 2;
        // The player's move from the board is told on `move` too, before the engine's.
        let (j, own) = obs.wait(at, "move", |m| m["number"] == number - 1);
        assert_eq!(
            (&own["color"], &own["vertex"], &own["by"]),
            (&"B".into(), &p.into(), &"board".into())
        );
        let (i, mv) = obs.wait(at, "move", |m| m["number"] == number);
        assert!(j < i);
        assert_eq!(mv["color"], "W");
        assert_eq!(mv["by"], "engine");
        let (i, state) = obs.wait(i, "state", |s| moves(s).len() == number);
        let ms = moves(&state);
        assert_eq!(ms[number - 2], format!("B {p}"));
        assert_eq!(
            ms[number - 1],
            format!("W {}", mv["vertex"].as_str().unwrap())
        );
        at = i;
        board = Rows::of(&state);
        last = state;
    }
    // Each move was told once.
    assert_eq!(obs.all(0, "move").len(), 12, "{:?}", obs.all(0, "move"));
    // The engine's stone put down on the wrong point: that point is flagged.
    let engine_point = moves(&last).last().unwrap()[2..].to_string();
    let wrong = if *board.clone().at("J1") == b'.' {
        "J1"
    } else {
        "J9"
    };
    let misplaced = board.clone().with(&engine_point, b'.').with(wrong, b'O');
    let before = obs.count();
    show(&obs, &misplaced, 2);
    let (_, alert) = obs.wait(before, "alert", |a| a["kind"] == "fix");
    let points: Vec<&str> = alert["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["point"].as_str().unwrap())
        .collect();
    assert!(points.contains(&wrong), "{alert}");
    show(&obs, &board, 2);
    obs.wait(before, "alert", |a| a["kind"] == "resolved");

    // A late subscriber gets the retained state of the game as it stands.
    let late = Observer::connect(broker.port, "late");
    let (_, retained) = late.wait(0, "state", |s| moves(s).len() == 12);
    assert!(late
        .seen
        .lock()
        .unwrap()
        .iter()
        .any(|m| m.topic == "state" && m.retain));
    assert_eq!(Rows::of(&retained).text(), board.text());

    // Killed without a goodbye: the broker publishes the will.
    daemon.child.kill().unwrap();
    daemon.child.wait().unwrap();
    late.wait(0, "availability", |v| v == "offline");
}

#[test]
fn analysis_station_reads_noisy_boards() {
    let Some((dir, broker)) = setup("analysis_station_reads_noisy_boards") else {
        return;
    };
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        "[game]\nsize = 9\nkomi = 7\nengine = \"none\"\n[board]\nstability = 2\n\
         [analysis]\nenabled = true\ninterval_ms = 100\nmax_visits = 300\n",
    );
    let (at, _) = obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    let step = |rows: &Rows, want: usize| -> Value {
        let from = obs.count();
        show(&obs, rows, 2);
        obs.wait(from, "state", |s| moves(s).len() == want).1
    };
    // B B1, W A1, B A2 captures A1 — but the captured stone stays on the board.
    let b = Rows::empty().with("B1", b'X');
    step(&b, 1);
    let b = b.with("A1", b'O');
    step(&b, 2);
    let b = b.with("A2", b'X');
    let s = step(&b, 3);
    assert_eq!(Rows::of(&s).clone().at("A1").to_owned(), b'.');
    // White answers while A1 is still not lifted: read as one move.
    let b = b.with("E5", b'O');
    let s = step(&b, 4);
    assert_eq!(moves(&s)[3], "W E5");
    // Now lifted: nothing changes, no alert.
    let b = b.with("A1", b'.');
    show(&obs, &b, 2);
    // Two moves land at once: Black's and White's, only one order is legal.
    let b = b.with("C7", b'X').with("G7", b'O');
    let s = step(&b, 6);
    assert_eq!(moves(&s)[4..], ["B C7".to_string(), "W G7".to_string()]);
    // A hand over the board while Black plays: only the clear view counts.
    let b2 = b.clone().with("D4", b'X');
    let from = obs.count();
    show(&obs, &b2.hand_over("E4"), 3);
    std::thread::sleep(Duration::from_millis(300));
    assert!(obs.all(from, "state").is_empty(), "a hidden board moved");
    assert!(
        obs.all(from, "alert").is_empty(),
        "a hidden board raised an alert"
    );
    let s = step(&b2, 7);
    assert_eq!(moves(&s)[6], "B D4");
    // A knocked stone: C7 slid to C6. Exactly those two points are flagged.
    let knocked = b2.clone().with("C7", b'.').with("C6", b'X');
    let from = obs.count();
    show(&obs, &knocked, 2);
    let (_, alert) = obs.wait(from, "alert", |a| a["kind"] == "fix");
    let mut fixes: Vec<(String, String, String)> = alert["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["point"].as_str().unwrap().to_string(),
                f["want"].as_str().unwrap().to_string(),
                f["seen"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    fixes.sort();
    assert_eq!(
        fixes,
        [
            ("C6".into(), "empty".into(), "B".into()),
            ("C7".into(), "B".into(), "empty".into())
        ]
    );
    show(&obs, &b2, 2);
    obs.wait(from, "alert", |a| a["kind"] == "resolved");
    // Analysis of the position after the last move, from White's view (White to move).
    let (_, a) = obs.wait(at, "analysis", |a| a["number"] == 7);
    assert_eq!(a["to_move"], "W");
    assert!(!a["moves"].as_array().unwrap().is_empty());
    let wr = a["winrate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&wr));
}

#[test]
fn bad_payloads_get_alerts_and_the_daemon_goes_on() {
    let Some((dir, broker)) = setup("bad_payloads") else {
        return;
    };
    let obs = Observer::connect(broker.port, "obs");
    let mut daemon = Daemon::start(
        dir.path(),
        broker.port,
        "[game]\nsize = 9\nengine = \"none\"\n",
    );
    obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    let bad: Vec<(&str, Vec<u8>, &str)> = vec![
        ("command", b"{not json".to_vec(), "bad JSON"),
        (
            "command",
            br#"{"cmd":"new_game","size":99}"#.to_vec(),
            "size",
        ),
        (
            "command",
            br#"{"cmd":"new_game","size":1}"#.to_vec(),
            "size",
        ),
        ("command", br#"{"cmd":"level","level":0}"#.to_vec(), "level"),
        ("command", br#"{"cmd":"teleport"}"#.to_vec(), "bad JSON"),
        ("board/snapshot", vec![b'.'; 1 << 20], "limit"),
        ("board/snapshot", b"....\n....".to_vec(), "81"),
        ("board/snapshot", vec![0xff, 0x00, 0xfe, 0x07], "UTF-8"),
        (
            "board/snapshot",
            br#"{"rows":[1,2,3]}"#.to_vec(),
            "bad JSON",
        ),
        ("board/snapshot", [b'Z'; 81].to_vec(), "'Z'"),
    ];
    for (topic, payload, why) in bad {
        let from = obs.count();
        obs.publish(topic, payload);
        let (_, alert) = obs.wait(from, "alert", |a| a["kind"] == "error");
        let message = alert["message"].as_str().unwrap();
        assert!(message.contains(why), "{topic}: {message} lacks {why:?}");
        assert!(daemon.alive());
    }
    // A GTP command through MQTT still works, with its reply on gtp/reply.
    let from = obs.count();
    obs.publish("command", r#"{"cmd":"gtp","line":"play b E5","id":"q1"}"#);
    let (_, r) = obs.wait(from, "gtp/reply", |r| r["id"] == "q1");
    assert_eq!(r["ok"], true);
    obs.publish("command", r#"{"cmd":"gtp","line":"play b E5","id":"q2"}"#);
    let (_, r) = obs.wait(from, "gtp/reply", |r| r["id"] == "q2");
    assert_eq!(r["ok"], false, "an occupied point is refused");
    obs.wait(from, "state", |s| moves(s) == ["B E5"]);
    // Search limits and searches are not for any publisher: refused by default.
    for (id, line) in [
        ("q3", "kata-set-param maxVisits 1000000000000"),
        ("q4", "genmove w"),
    ] {
        obs.publish(
            "command",
            format!(r#"{{"cmd":"gtp","line":"{line}","id":"{id}"}}"#),
        );
        let (_, r) = obs.wait(from, "gtp/reply", |r| r["id"] == id);
        assert_eq!(r["ok"], false, "{line} over MQTT: {r}");
        assert!(r["text"].as_str().unwrap().contains("not allowed"), "{r}");
    }
    assert!(daemon.alive());
}

#[test]
fn broker_restart_loses_no_snapshot() {
    let Some((dir, mut broker)) = setup("broker_restart_loses_no_snapshot") else {
        return;
    };
    let obs = Observer::connect_with(broker.port, "obs", false);
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        "[game]\nsize = 9\nengine = \"none\"\n[board]\nstability = 1\n",
    );
    obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    let b = Rows::empty().with("E5", b'X');
    show(&obs, &b, 1);
    obs.wait(0, "state", |s| moves(s).len() == 1);

    broker.restart();
    let from = obs.count();
    // Published at once, before the daemon is back: the broker keeps it in the daemon's
    // persistent session and delivers it on reconnection.
    let publisher = Observer::connect(broker.port, "pub");
    let b = b.with("C3", b'O');
    show(&publisher, &b, 1);
    let (_, s) = obs.wait(from, "state", |s| moves(s).len() == 2);
    assert_eq!(moves(&s), ["B E5", "W C3"]);
    // The state was published again on reconnection, before or with the new move.
    let states = obs.all(from, "state");
    assert!(
        states.iter().any(|s| moves(s).len() == 1),
        "state not re-published after the reconnect: {states:?}"
    );
    obs.wait(from, "availability", |v| v == "online");
}

#[test]
fn speaks_mqtt_5_too() {
    let Some((dir, broker)) = setup("speaks_mqtt_5_too") else {
        return;
    };
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start_with(
        dir.path(),
        broker.port,
        "protocol = \"5\"\nhome_assistant = \"homeassistant\"",
        "[game]\nsize = 9\nengine = \"black\"\n",
    );
    obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    // The engine plays Black: it opens.
    let (_, m) = obs.wait(0, "move", |m| m["number"] == 1);
    assert_eq!(m["color"], "B");
    // Home Assistant finds the device's sensors (retained, for a late Home Assistant).
    obs.client
        .subscribe("homeassistant/#", rumqttc::QoS::AtLeastOnce)
        .unwrap();
    let (_, ha) = obs.wait(0, "homeassistant/sensor/tengen_test_winrate/config", |_| {
        true
    });
    assert_eq!(ha["state_topic"], "tengen/test/analysis");
}

#[test]
fn connects_over_tls_with_a_password() {
    if !support::mqtt::have_tls_tools("connects_over_tls_with_a_password") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tls_port = free_port();
    let listener = support::mqtt::tls_broker(d, tls_port, &[("panel", "s3cret")]);
    let broker = Broker::start_with(d, free_port(), &listener);
    // The observer listens on the plain listener of the same broker.
    let obs = Observer::connect(broker.port, "obs");
    let mqtt = |password: &str| {
        format!(
            "tls = true\ntls_ca = \"{}\"\nusername = \"panel\"\npassword = \"{password}\"\n",
            d.join("ca.pem").display()
        )
    };
    // The daemon's config names the TLS port in place of the plain one.
    let start = |password: &str| {
        Daemon::start_with(
            d,
            tls_port,
            &mqtt(password),
            "[game]\nsize = 9\nengine = \"none\"\n",
        )
    };
    {
        // A wrong password: no connection, no state, but the daemon keeps trying.
        let mut wrong = start("guess");
        std::thread::sleep(Duration::from_millis(1500));
        assert!(obs.all(0, "state").is_empty());
        assert!(wrong.alive());
    }
    let _daemon = start("s3cret");
    let (_, s) = obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    assert_eq!(s["size"][0], 9);
    obs.wait(0, "availability", |v| v == "online");
}

#[test]
fn a_flood_of_commands_is_answered_or_alerted_one_by_one() {
    if !have("mosquitto") {
        eprintln!("a_flood_of_commands skipped: mosquitto not installed");
        return;
    }
    // Mosquitto drops, unannounced, what it holds beyond 1,000 messages for a client that
    // reads slower than they come (max_queued_messages): on a loaded machine that is the
    // observer or the daemon here. This test is about the daemon's answers, so the broker
    // keeps everything.
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start_with(dir.path(), free_port(), "max_queued_messages 0\n");
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start_with(
        dir.path(),
        broker.port,
        "gtp_commands = [\"*\"]\n",
        "[game]\nsize = 19\nengine = \"none\"\n\
         [engine]\nmode = \"search\"\nvisits = 10000000\nmax_visits = 10000000\nmax_time = 2\n",
    );
    obs.wait(0, "status", |s| s["pid"].is_number());
    // A two-second search keeps the engine loop busy while the flood arrives.
    let from = obs.count();
    obs.publish("command", r#"{"cmd":"gtp","line":"genmove b","id":"g"}"#);
    const N: usize = 5000;
    for i in 0..N {
        obs.publish(
            "command",
            format!(r#"{{"cmd":"gtp","line":"name","id":"{i}"}}"#),
        );
    }
    let outcomes = || {
        let replies: Vec<Value> = obs
            .all(from, "gtp/reply")
            .into_iter()
            .filter(|r| r["id"] != "g")
            .collect();
        let dropped = obs.all(from, "alert");
        let ids: Vec<String> = replies
            .iter()
            .chain(dropped.iter().filter(|a| a["kind"] == "dropped"))
            .filter_map(|m| m["id"].as_str().map(str::to_string))
            .collect();
        (replies.len(), ids)
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (replies, mut ids) = loop {
        let (replies, ids) = outcomes();
        if ids.len() >= N || std::time::Instant::now() > deadline {
            break (replies, ids);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids.len(),
        N,
        "{} of {N} commands answered or alerted",
        ids.len()
    );
    println!(
        "flood: {N} commands, {replies} answered, {} dropped with an alert",
        N - replies
    );
}

/// The audit's attack: a message over the daemon's 4 MiB packet limit, then 300 QoS 1
/// commands at once. Over MQTT 5 (the default) the daemon's connect packet gives the
/// broker its limit, the broker drops the big message, and every command is answered;
/// over MQTT 3.1.1 the daemon must reconnect with a clean session to be rid of it, which
/// loses what was queued behind it, and it says so on `alert`.
#[test]
fn an_oversized_message_costs_no_command_silently() {
    for protocol in ["5", "3.1.1"] {
        let Some((dir, broker)) = setup("an_oversized_message") else {
            return;
        };
        let obs = Observer::connect(broker.port, "obs");
        let _daemon = Daemon::start_with(
            dir.path(),
            broker.port,
            &format!("protocol = \"{protocol}\"\ngtp_commands = [\"name\"]\n"),
            "[game]\nengine = \"none\"\n",
        );
        obs.wait(0, "status", |s| s["pid"].is_number());
        let mut o = rumqttc::MqttOptions::new("big-publisher", "127.0.0.1", broker.port);
        o.set_max_packet_size(16 << 20, 16 << 20);
        let (client, mut conn) = rumqttc::Client::new(o, 10);
        let topic = format!("{}/board/snapshot", support::mqtt::PREFIX);
        client
            .publish(topic, rumqttc::QoS::AtLeastOnce, false, vec![b'.'; 5 << 20])
            .unwrap();
        std::thread::spawn(move || for _ in conn.iter() {});
        let from = obs.count();
        const N: usize = 300;
        for i in 0..N {
            obs.publish(
                "command",
                format!(r#"{{"cmd":"gtp","line":"name","id":"c{i}"}}"#),
            );
        }
        // Answered, or covered by an alert that says commands were lost.
        let settled = || {
            let replies = obs.all(from, "gtp/reply").len();
            let lost = obs.all(from, "alert").iter().any(|a| {
                a["source"] == "mqtt"
                    && a["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("send recent commands again"))
            });
            (replies, lost)
        };
        // All answered, or the loss alerted and a moment given to what still comes.
        let start = std::time::Instant::now();
        loop {
            let (replies, lost) = settled();
            let waited = start.elapsed();
            if replies >= N || (lost && waited > Duration::from_secs(3)) {
                break;
            }
            assert!(
                waited < Duration::from_secs(30),
                "MQTT {protocol}: {replies} answered"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let (replies, lost) = settled();
        eprintln!(
            "MQTT {protocol}: {replies} of {N} commands answered after a 5 MiB message{}",
            if lost {
                "; the loss of the rest was alerted"
            } else {
                ""
            }
        );
        assert!(
            replies == N || lost,
            "MQTT {protocol}: {replies} answered, no alert"
        );
        if protocol == "5" {
            assert_eq!(replies, N, "MQTT 5 loses nothing");
        }
        // The link works on.
        let from = obs.count();
        obs.publish("command", r#"{"cmd":"gtp","line":"name","id":"after"}"#);
        let (_, r) = obs.wait(from, "gtp/reply", |r| r["id"] == "after");
        assert_eq!(r["text"], "Tengen");
    }
}
