//! Club-scale analysis over a real mosquitto: `tengen worker` processes share the jobs
//! that `tengen analysis --cluster` clients send, through kills and a broker restart.

mod support;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rumqttc::v5::mqttbytes::v5::PublishProperties;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{Client, Event, Incoming, MqttOptions};
use serde_json::Value;
use support::mqtt::{free_port, have, Broker};

/// A scratch folder and a free port for a test's broker; `None` (saying so) without
/// mosquitto.
fn scratch() -> Option<(tempfile::TempDir, u16)> {
    if !have("mosquitto") {
        eprintln!("skipped: no mosquitto");
        return None;
    }
    Some((tempfile::tempdir().unwrap(), free_port()))
}

/// A `tengen worker` whose log goes to a file.
fn worker(port: u16, id: &str, dir: &Path) -> Child {
    worker_at(&format!("mqtt://127.0.0.1:{port}"), id, dir, &[])
}

/// A `tengen worker` of the broker at `url`, with `more` arguments.
fn worker_at(url: &str, id: &str, dir: &Path, more: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["worker", "--broker", url])
        .args([
            "--id",
            id,
            "--group",
            "test",
            "--slots",
            "2",
            "--max-visits",
            "2",
        ])
        .args(more)
        .env("RUST_LOG", "info,tengen_device::cluster=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{id}.log"))).unwrap())
        .spawn()
        .expect("tengen worker starts")
}

/// A `tengen analysis --cluster` client and the lines it printed so far.
struct Analysis {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Analysis {
    fn start(port: u16, id: &str, dir: &Path) -> Analysis {
        Analysis::start_at(&format!("mqtt://127.0.0.1:{port}"), id, dir, &[])
    }

    /// A client of the broker at `url`, with `more` arguments.
    fn start_at(url: &str, id: &str, dir: &Path, more: &[&str]) -> Analysis {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .args(["analysis", "--cluster", url])
            .args(["--client-id", id, "--resend-after", "4"])
            .args(more)
            .env("RUST_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join(format!("{id}.log"))).unwrap())
            .spawn()
            .expect("tengen analysis starts");
        let stdout = child.stdout.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let l2 = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                l2.lock().unwrap().push(line);
            }
        });
        Analysis {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn count(&self) -> usize {
        self.lines.lock().unwrap().len()
    }

    /// Closes its input and waits for it to print its last answer and exit.
    fn finish(mut self, limit: Duration) -> Vec<String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "the client failed: {status}");
                break;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the client did not finish; it printed {} lines",
                    self.count()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The reader thread drains what is left.
        std::thread::sleep(Duration::from_millis(200));
        self.lines.lock().unwrap().clone()
    }
}

fn wait_until(limit: Duration, what: &str, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A short 9x9 query with a priority, searched with very few visits.
fn query(id: &str, rng: &mut fastrand::Rng) -> String {
    let cols = ['C', 'D', 'E', 'F', 'G'];
    let n = rng.usize(0..4);
    let moves: Vec<String> = (0..n)
        .map(|i| {
            let who = if i % 2 == 0 { "B" } else { "W" };
            format!(r#"["{who}","{}{}"]"#, cols[i], 3 + rng.usize(0..4))
        })
        .collect();
    format!(
        r#"{{"id":"{id}","moves":[{}],"rules":"chinese","komi":7,"boardXSize":9,"boardYSize":9,"maxVisits":{},"priority":{}}}"#,
        moves.join(","),
        1 + rng.usize(0..2),
        rng.i32(-5..6)
    )
}

/// Each id's final answers in `lines`; every line must be a final answer for one of
/// `ids`, and each of those answered exactly once.
fn check_answered_once(lines: &[String], ids: &[String]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v.get("error").is_none(), "an error answer: {l}");
        assert_eq!(v["isDuringSearch"], false, "{l}");
        assert!(v["rootInfo"]["visits"].as_u64().unwrap() >= 1, "{l}");
        *seen
            .entry(v["id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    for id in ids {
        assert_eq!(
            seen.get(id),
            Some(&1),
            "query {id} answered {:?} times",
            seen.get(id)
        );
    }
    assert_eq!(seen.len(), ids.len(), "answers for queries never asked");
}

#[test]
fn a_pool_answers_every_query_once_through_a_worker_kill_and_a_broker_restart() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let mut broker = Broker::start(dir.path(), port);
    let mut workers: Vec<Child> = ["w1", "w2", "w3"]
        .iter()
        .map(|id| worker(port, id, dir.path()))
        .collect();
    let mut rng = fastrand::Rng::with_seed(27);
    let mut clients = Vec::new();
    let mut asked = Vec::new();
    for c in ["club-a", "club-b"] {
        let mut client = Analysis::start(port, c, dir.path());
        let ids: Vec<String> = (0..150).map(|i| format!("{c}-{i}")).collect();
        for id in &ids {
            client.send(&query(id, &mut rng));
        }
        clients.push(client);
        asked.push(ids);
    }
    let answered = |clients: &[Analysis]| clients.iter().map(Analysis::count).sum::<usize>();
    wait_until(Duration::from_secs(40), "the first answers", || {
        answered(&clients) >= 40
    });
    // A worker dies with jobs in hand; a new one joins later.
    let _ = workers[0].kill();
    let _ = workers[0].wait();
    wait_until(Duration::from_secs(40), "answers after the kill", || {
        answered(&clients) >= 120
    });
    workers.push(worker(port, "w4", dir.path()));
    // The broker goes away with jobs in flight, and comes back on the same port.
    broker.restart();
    for (client, ids) in clients.into_iter().zip(&asked) {
        let lines = client.finish(Duration::from_secs(60));
        check_answered_once(&lines, ids);
    }
    for mut w in workers {
        let _ = w.kill();
        let _ = w.wait();
    }
}

/// Messages received: correlation data and payload text.
type Received = Arc<Mutex<Vec<(Vec<u8>, String)>>>;

/// A test's own MQTT 5 connection: publishes jobs and records what comes back.
fn v5_client(port: u16, id: &str, topic: &str) -> (Client, Received) {
    let mut o = MqttOptions::new(id, "127.0.0.1", port);
    o.set_max_packet_size(Some(8 << 20));
    let (client, mut conn) = Client::new(o, 100);
    let got = Arc::new(Mutex::new(Vec::new()));
    let (c2, g2, t2) = (client.clone(), got.clone(), topic.to_string());
    std::thread::spawn(move || {
        for ev in conn.iter() {
            match ev {
                Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                    let _ = c2.subscribe(t2.clone(), QoS::AtLeastOnce);
                }
                Ok(Event::Incoming(Incoming::Publish(p))) => {
                    let c = p.properties.and_then(|p| p.correlation_data);
                    let c = c.map(|c| c.to_vec()).unwrap_or_default();
                    let text = String::from_utf8_lossy(&p.payload).into_owned();
                    g2.lock().unwrap().push((c, text));
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    (client, got)
}

#[test]
fn bad_jobs_are_answered_refused_or_dropped_and_the_worker_serves_on() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let mut w = worker(port, "solo", dir.path());
    let reply = "tengen/answers/tester";
    let (client, got) = v5_client(port, "tester", reply);
    let got2 = got.clone();
    // The worker is there when its retained status says so.
    let (status_client, status) = v5_client(port, "watcher", "tengen/workers/solo/status");
    wait_until(Duration::from_secs(30), "the worker's status", || {
        status
            .lock()
            .unwrap()
            .iter()
            .any(|(_, s)| s.contains("\"online\""))
    });
    let job = |payload: Vec<u8>, corr: &str, topic: Option<&str>| {
        let props = PublishProperties {
            response_topic: topic.map(str::to_string),
            correlation_data: Some(corr.as_bytes().to_vec().into()),
            ..PublishProperties::default()
        };
        client
            .publish_with_properties(
                "tengen/jobs/analysis",
                QoS::AtLeastOnce,
                false,
                payload,
                props,
            )
            .unwrap();
    };
    let good =
        r#"{"id":"ok","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":2}"#;
    job(b"{not json".to_vec(), "bad", Some(reply));
    job(good.as_bytes().to_vec(), "lost", None);
    let mut big = good.as_bytes().to_vec();
    big.resize((1 << 20) + 100, b' ');
    job(big, "big", Some(reply));
    job(good.as_bytes().to_vec(), "good", Some(reply));
    wait_until(Duration::from_secs(30), "three answers", || {
        got.lock().unwrap().len() >= 3
    });
    std::thread::sleep(Duration::from_millis(300));
    let got = got.lock().unwrap().clone();
    let by: HashMap<String, Value> = got
        .iter()
        .map(|(c, t)| {
            (
                String::from_utf8_lossy(c).into_owned(),
                serde_json::from_str(t).unwrap(),
            )
        })
        .collect();
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        by["bad"]["error"].as_str().unwrap().contains("JSON"),
        "{got:?}"
    );
    assert!(
        by["big"]["error"]
            .as_str()
            .unwrap()
            .starts_with("job too large"),
        "{got:?}"
    );
    assert_eq!(by["good"]["id"], "ok");
    assert_eq!(by["good"]["isDuringSearch"], false);
    let log = std::fs::read_to_string(dir.path().join("solo.log")).unwrap();
    assert!(
        log.contains("without a response topic was dropped"),
        "{log}"
    );
    // Partial reports reach the client too, then the final answer.
    let searching = r#"{"id":"long","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":10000,"reportDuringSearchEvery":0.1,"overrideSettings":{"maxTime":1.0}}"#;
    job(searching.as_bytes().to_vec(), "long", Some(reply));
    let long = || -> Vec<Value> {
        got2.lock()
            .unwrap()
            .iter()
            .filter(|(c, _)| c == b"long")
            .map(|(_, t)| serde_json::from_str(t).unwrap())
            .collect()
    };
    wait_until(Duration::from_secs(30), "the final answer", || {
        long().iter().any(|v| v["isDuringSearch"] == false)
    });
    let long = long();
    assert!(long.len() >= 2, "no partial report: {long:?}");
    let (last, partial) = long.split_last().unwrap();
    assert!(partial
        .iter()
        .all(|v| v["isDuringSearch"] == true && v["id"] == "long"));
    assert_eq!(
        (last["isDuringSearch"].as_bool(), last["id"].as_str()),
        (Some(false), Some("long"))
    );
    // Four long jobs from one client at once, more than its share (one of the two
    // slots): the worker holds one and refuses the others for now, naming when to send
    // them again, so that another client's job behind them still runs.
    for n in 0..4 {
        let q = format!(
            r#"{{"id":"slow{n}","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":10000,"overrideSettings":{{"maxTime":0.5}}}}"#
        );
        job(q.into_bytes(), &format!("slow{n}"), Some(reply));
    }
    let other_reply = "tengen/answers/other";
    let (other, other_got) = v5_client(port, "other", other_reply);
    std::thread::sleep(Duration::from_millis(300));
    other
        .publish_with_properties(
            "tengen/jobs/analysis",
            QoS::AtLeastOnce,
            false,
            good.as_bytes().to_vec(),
            PublishProperties {
                response_topic: Some(other_reply.into()),
                correlation_data: Some(b"theirs".to_vec().into()),
                ..PublishProperties::default()
            },
        )
        .unwrap();
    let slow = || -> (usize, usize) {
        let got = got2.lock().unwrap();
        let mine = got.iter().filter(|(c, _)| c.starts_with(b"slow"));
        let (answered, refused): (Vec<_>, Vec<_>) = mine
            .filter(|(_, t)| t.contains("rootInfo") || t.contains("retryAfter"))
            .partition(|(_, t)| t.contains("rootInfo"));
        (answered.len(), refused.len())
    };
    wait_until(Duration::from_secs(30), "four slow jobs settled", || {
        let (a, r) = slow();
        a + r == 4
    });
    wait_until(Duration::from_secs(30), "the other client's answer", || {
        other_got
            .lock()
            .unwrap()
            .iter()
            .any(|(c, t)| c == b"theirs" && t.contains("rootInfo"))
    });
    let (answered, refused) = slow();
    assert!(
        answered >= 1 && refused >= 1,
        "{answered} run, {refused} refused"
    );
    eprintln!("one client's 4 jobs: {answered} run, {refused} refused for now; the other client was answered");
    let _ = w.kill();
    let _ = w.wait();
    // Killed without a word: the broker publishes its last will.
    wait_until(Duration::from_secs(30), "the worker's last will", || {
        status
            .lock()
            .unwrap()
            .last()
            .is_some_and(|(_, s)| s.contains("\"offline\""))
    });
    drop(status_client);
}

#[test]
fn an_appliance_with_cluster_worker_on_serves_the_pools_jobs() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let mut daemon = support::mqtt::Daemon::start(
        dir.path(),
        port,
        "[cluster]\nworker = true\ngroup = \"club\"\nslots = 1\n",
    );
    let (_watcher, status) = v5_client(port, "watcher", "tengen/workers/worker-test/status");
    wait_until(
        Duration::from_secs(60),
        "the appliance's worker status",
        || {
            status
                .lock()
                .unwrap()
                .iter()
                .any(|(_, s)| s.contains("\"online\"") && s.contains("\"slots\":1"))
        },
    );
    let reply = "tengen/answers/kiosk";
    let (client, got) = v5_client(port, "kiosk", reply);
    let q = r#"{"id":"pool","moves":[["B","E5"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":3,"analyzeTurns":[0,1]}"#;
    let props = PublishProperties {
        response_topic: Some(reply.into()),
        correlation_data: Some(b"k1".to_vec().into()),
        ..PublishProperties::default()
    };
    // The subscription may still be on its way: the job is sent until it is answered.
    wait_until(Duration::from_secs(60), "two answers", || {
        if got.lock().unwrap().is_empty() {
            client
                .publish_with_properties(
                    "tengen/jobs/analysis",
                    QoS::AtLeastOnce,
                    false,
                    q,
                    props.clone(),
                )
                .unwrap();
            std::thread::sleep(Duration::from_millis(500));
        }
        got.lock().unwrap().len() >= 2
    });
    let got = got.lock().unwrap().clone();
    let mut turns: Vec<u64> = got
        .iter()
        .map(|(c, t)| {
            assert_eq!(c, b"k1");
            let v: Value = serde_json::from_str(t).unwrap();
            assert_eq!(
                (v["id"].as_str(), v["isDuringSearch"].as_bool()),
                (Some("pool"), Some(false)),
                "{v}"
            );
            v["turnNumber"].as_u64().unwrap()
        })
        .collect();
    turns.sort_unstable();
    turns.dedup();
    assert_eq!(turns, [0, 1], "{got:?}");
    // Stopping it stops its worker too, cleanly (it once panicked here).
    let status = daemon.terminate(Duration::from_secs(10));
    assert!(status.success(), "{status}\n{}", daemon.log());
}

/// The keys of an object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn through_the_pool_the_answers_read_as_tengen_analysis_writes_them() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let mut w = worker(port, "same", dir.path());
    let input = [
        r#"{"id":"v","action":"query_version"}"#,
        r#"{"id":"a","moves":[["B","E5"]],"rules":"chinese","komi":7,"boardXSize":9,"boardYSize":9,"maxVisits":3,"includeOwnership":true,"analyzeTurns":[0,1],"bogus":1}"#,
        r#"{"id":"b","moves":[["B","Z9"]],"rules":"chinese","boardXSize":9,"boardYSize":9}"#,
    ];
    let direct = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["analysis", "--max-visits", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pooled = Analysis::start(port, "same-client", dir.path());
    direct
        .stdin
        .as_ref()
        .unwrap()
        .write_all(format!("{}\n", input.join("\n")).as_bytes())
        .unwrap();
    for l in input {
        pooled.send(l);
    }
    let direct = direct.wait_with_output().unwrap();
    let parse = |lines: Vec<String>| -> Vec<Value> {
        let mut v: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // Answers come out of order; compare them by what they answer.
        v.sort_by_key(|v| (v["id"].to_string(), v["turnNumber"].as_u64(), keys(v)));
        v
    };
    let direct = parse(
        String::from_utf8(direct.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect(),
    );
    let pooled = parse(pooled.finish(Duration::from_secs(30)));
    assert_eq!(direct.len(), pooled.len(), "{direct:?}\n{pooled:?}");
    assert_eq!(
        direct.len(),
        5,
        "version, a warning, two turns, an error: {direct:?}"
    );
    for (d, p) in direct.iter().zip(&pooled) {
        assert_eq!(keys(d), keys(p), "{d}\n{p}");
        assert_eq!((&d["id"], &d["turnNumber"]), (&p["id"], &p["turnNumber"]));
        if let Some(info) = d.get("rootInfo") {
            assert_eq!(keys(info), keys(&p["rootInfo"]));
            assert_eq!(keys(&d["moveInfos"][0]), keys(&p["moveInfos"][0]));
        } else {
            // Errors, warnings and the version are the same text.
            assert_eq!(d, p);
        }
    }
    let _ = w.kill();
    let _ = w.wait();
}

#[test]
fn an_appliance_with_remote_analysis_publishes_the_pools_answers_for_its_position() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let obs = support::mqtt::Observer::connect(port, "panel");
    // No network and nobody playing: only the pool can analyse.
    let mut daemon = support::mqtt::Daemon::start(
        dir.path(),
        port,
        "[game]\nsize = 9\nengine = \"none\"\n[analysis]\nenabled = true\nremote = true\n\
         max_visits = 40\ninterval_ms = 100\n[cluster]\ngroup = \"test\"\n",
    );
    let (_, state) = obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    assert_eq!(support::mqtt::moves(&state).len(), 0);
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        obs.all(0, "analysis").is_empty(),
        "analysis without a worker: the engine analysed locally"
    );
    let mut w = worker(port, "w-remote", dir.path());
    // The job was sent before the worker subscribed: the resend rule brings it back.
    let (_, a) = obs.wait_for(0, "analysis", Duration::from_secs(90), |a| {
        a["number"] == 0 && a["visits"].as_u64() >= Some(1)
    });
    assert_eq!(a["to_move"], "B", "{a}");
    assert!(!a["moves"].as_array().unwrap().is_empty(), "{a}");
    // A move on the board: the new position's answers follow, the old job's are dropped.
    let at = obs.count();
    support::mqtt::show(&obs, &support::mqtt::Rows::empty().with("E5", b'X'), 4);
    let (i, a) = obs.wait_for(at, "analysis", Duration::from_secs(60), |a| {
        a["number"] == 1
    });
    assert_eq!(a["to_move"], "W", "{a}");
    std::thread::sleep(Duration::from_secs(1));
    let later = obs.all(i, "analysis");
    assert!(
        later.iter().all(|a| a["number"] == 1),
        "answers for the superseded position: {later:?}"
    );
    let log = std::fs::read_to_string(dir.path().join("w-remote.log")).unwrap();
    assert!(log.contains("taken"), "the worker took no job: {log}");
    let _ = w.kill();
    let _ = w.wait();
    assert!(daemon.alive());
}

#[test]
fn a_pool_works_over_tls_with_passwords() {
    if !support::mqtt::have_tls_tools("a_pool_works_over_tls_with_passwords") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let listener = support::mqtt::tls_broker(d, port, &[("board", "w-pass"), ("club", "c-pass")]);
    let _broker = Broker::start_with(d, free_port(), &listener);
    let ca = d.join("ca.pem");
    let tls = ["--tls-ca", ca.to_str().unwrap()];
    let worker_url = format!("mqtts://board:w-pass@localhost:{port}");
    // mqtts:// without the CA to check the broker by is refused at once, with the flag named.
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["worker", "--broker", &worker_url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--tls-ca"), "{err}");
    let mut w = worker_at(&worker_url, "tls-worker", d, &tls);
    let url = format!("mqtts://club:c-pass@localhost:{port}");
    let mut client = Analysis::start_at(&url, "tls-client", d, &tls);
    let mut rng = fastrand::Rng::with_seed(5);
    let ids: Vec<String> = (0..3).map(|i| format!("tls-{i}")).collect();
    for id in &ids {
        client.send(&query(id, &mut rng));
    }
    check_answered_once(&client.finish(Duration::from_secs(60)), &ids);
    // A wrong password gets no answer, and the client says why.
    let bad = format!("mqtts://club:guess@localhost:{port}");
    let mut wrong = Analysis::start_at(&bad, "tls-wrong", d, &tls);
    wrong.send(&query("never", &mut rng));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(wrong.count(), 0);
    let _ = wrong.child.kill();
    let _ = wrong.child.wait();
    let log = std::fs::read_to_string(d.join("tls-wrong.log")).unwrap();
    assert!(log.contains("cannot connect"), "{log}");
    let _ = w.kill();
    let _ = w.wait();
}

#[test]
fn a_board_whose_pool_is_silent_analyses_on_its_own_until_a_worker_answers() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let obs = support::mqtt::Observer::connect(port, "panel");
    // Analysis that never ends by itself, so that the engine's stopping shows.
    let mut daemon = support::mqtt::Daemon::start(
        dir.path(),
        port,
        "[game]\nsize = 9\nengine = \"none\"\n[analysis]\nenabled = true\nremote = true\n\
         max_visits = 20000\ninterval_ms = 100\nfallback_s = 2\n[cluster]\ngroup = \"test\"\n",
    );
    obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    // No worker: after two silent seconds the engine analyses, and says so by omission.
    let (_, local) = obs.wait_for(0, "analysis", Duration::from_secs(30), |a| {
        a["visits"].as_u64() >= Some(1)
    });
    assert!(local.get("pool").is_none(), "{local}");
    let mut w = worker(port, "w-late", dir.path());
    // A worker takes the resent job: its answers are the pool's, and the engine stops.
    let (i, _) = obs.wait_for(0, "analysis", Duration::from_secs(60), |a| {
        a["pool"] == true
    });
    std::thread::sleep(Duration::from_millis(500));
    let settled = obs.count().max(i);
    std::thread::sleep(Duration::from_millis(1500));
    let after = obs.all(settled, "analysis");
    assert!(!after.is_empty(), "the pool's answers stopped");
    assert!(
        after.iter().all(|a| a["pool"] == true),
        "the engine still analyses beside the pool: {after:?}"
    );
    let _ = w.kill();
    let _ = w.wait();
    assert!(daemon.alive());
}

/// The audit's attack: two jobs of a billion visits each from any client of the broker.
/// The worker's default limits refuse them, naming the limit, and a normal job behind
/// them is answered; the worker's memory stays where it was.
#[test]
fn a_worker_refuses_jobs_past_its_default_limits_and_serves_on() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let mut w = worker_at(
        &format!("mqtt://127.0.0.1:{port}"),
        "limits",
        dir.path(),
        &["--model", "bundled"],
    );
    let reply = "tengen/answers/greedy";
    let (client, got) = v5_client(port, "greedy", reply);
    let (_watch, status) = v5_client(port, "watch", "tengen/workers/limits/status");
    wait_until(Duration::from_secs(60), "the worker's status", || {
        status
            .lock()
            .unwrap()
            .iter()
            .any(|(_, s)| s.contains("\"online\""))
    });
    let before = support::process::rss_mb(w.id());
    let send = |q: &str, corr: &str| {
        let props = PublishProperties {
            response_topic: Some(reply.into()),
            correlation_data: Some(corr.as_bytes().to_vec().into()),
            ..PublishProperties::default()
        };
        client
            .publish_with_properties(
                "tengen/jobs/analysis",
                QoS::AtLeastOnce,
                false,
                q.as_bytes().to_vec(),
                props,
            )
            .unwrap();
    };
    let huge = r#"{"id":"huge","moves":[],"rules":"chinese","boardXSize":19,"boardYSize":19,"maxVisits":1000000000}"#;
    send(huge, "huge1");
    send(huge, "huge2");
    let forever = r#"{"id":"forever","moves":[],"rules":"chinese","boardXSize":19,"boardYSize":19,"maxVisits":100,"overrideSettings":{"maxTime":1000000}}"#;
    send(forever, "forever");
    let normal = r#"{"id":"normal","moves":[["B","D4"]],"rules":"chinese","boardXSize":19,"boardYSize":19,"maxVisits":50}"#;
    let sent = Instant::now();
    send(normal, "normal");
    wait_until(Duration::from_secs(60), "four answers", || {
        got.lock().unwrap().len() >= 4
    });
    let took = sent.elapsed();
    let by: HashMap<String, Value> = got
        .lock()
        .unwrap()
        .iter()
        .map(|(c, t)| {
            (
                String::from_utf8_lossy(c).into_owned(),
                serde_json::from_str(t).unwrap(),
            )
        })
        .collect();
    for k in ["huge1", "huge2"] {
        let e = by[k]["error"].as_str().unwrap_or_default();
        assert!(
            e.contains("maxVisits 1000000000 is above this worker's limit of 20000"),
            "{by:?}"
        );
    }
    let e = by["forever"]["error"].as_str().unwrap_or_default();
    assert!(e.contains("at most 60 s a turn"), "{by:?}");
    assert_eq!(
        by["normal"]["rootInfo"]["visits"].as_u64().map(|v| v >= 50),
        Some(true),
        "{by:?}"
    );
    let after = support::process::rss_mb(w.id());
    eprintln!(
        "worker RSS {before} MB before, {after} MB after two 1e9-visit jobs and a 1e6 s one \
         (all refused); the normal job behind them answered in {:.1} s",
        took.as_secs_f64()
    );
    assert!(after < before + 100, "{before} MB -> {after} MB");
    let _ = w.kill();
    let _ = w.wait();
}

/// A client of the broker that reads every job and answers it first with a forged final
/// answer (the job's own correlation data and id) and an empty one. Returns how many
/// jobs it answered.
fn forger(port: u16) -> Arc<Mutex<usize>> {
    let (client, mut conn) = Client::new(MqttOptions::new("forger", "127.0.0.1", port), 100);
    let jobs = Arc::new(Mutex::new(0));
    let j2 = jobs.clone();
    std::thread::spawn(move || {
        for ev in conn.iter() {
            match ev {
                Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                    let _ = client.subscribe("tengen/jobs/analysis", QoS::AtLeastOnce);
                }
                Ok(Event::Incoming(Incoming::Publish(p))) => {
                    let props = p.properties.clone().unwrap_or_default();
                    let Some(topic) = props.response_topic else {
                        continue;
                    };
                    let q: Value = serde_json::from_slice(&p.payload).unwrap_or_default();
                    let forged = serde_json::json!({"id": q["id"], "turnNumber": 0,
                        "isDuringSearch": false, "forged": true, "moveInfos": [],
                        "rootInfo": {"visits": 1, "winrate": 0.0}});
                    for payload in ["{}".to_string(), forged.to_string()] {
                        let props = PublishProperties {
                            correlation_data: props.correlation_data.clone(),
                            ..PublishProperties::default()
                        };
                        let _ = client.publish_with_properties(
                            topic.clone(),
                            QoS::AtLeastOnce,
                            false,
                            payload,
                            props,
                        );
                    }
                    *j2.lock().unwrap() += 1;
                }
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    });
    jobs
}

/// The audit's attack: a client of the broker answers the pool's jobs before the
/// workers do. With `[cluster] secret` (here `--pool-secret-file`) on both sides no
/// forged answer is printed; and a job naming a response topic outside the pool's
/// answer topics is dropped, never answered there.
#[test]
fn with_the_pools_secret_forged_answers_are_dropped() {
    let Some((dir, port)) = scratch() else {
        return;
    };
    let _broker = Broker::start(dir.path(), port);
    let url = format!("mqtt://127.0.0.1:{port}");
    let secret = dir.path().join("pool.secret");
    std::fs::write(&secret, "a club secret of some length\n").unwrap();
    let secret = secret.to_str().unwrap();
    let forged_jobs = forger(port);
    let mut rng = fastrand::Rng::with_seed(5);
    let mut printed = Vec::new();
    for sealed in [false, true] {
        let more: &[&str] = if sealed {
            &["--pool-secret-file", secret]
        } else {
            &[]
        };
        let id = format!("w-{sealed}");
        let mut w = worker_at(&url, &id, dir.path(), more);
        let mut a = Analysis::start_at(&url, &format!("c-{sealed}"), dir.path(), more);
        let ids: Vec<String> = (0..3).map(|i| format!("q{i}")).collect();
        for q in &ids {
            a.send(&query(q, &mut rng));
        }
        let lines = a.finish(Duration::from_secs(60));
        let forged = lines.iter().filter(|l| l.contains("forged")).count();
        printed.push(forged);
        // A rogue's job: with the secret, unsealed, so dropped; without it, naming a
        // panel's topic for its answers, so dropped as well.
        let (answers, says) = if sealed {
            check_answered_once(&lines, &ids);
            (
                "tengen/answers/rogue",
                "a job without this pool's seal was dropped",
            )
        } else {
            (
                "tengen/kiosk/state",
                "is not under tengen/answers/+ was dropped",
            )
        };
        let (rogue, panel) = v5_client(port, &format!("rogue-{sealed}"), answers);
        std::thread::sleep(Duration::from_millis(300));
        let props = PublishProperties {
            response_topic: Some(answers.into()),
            ..PublishProperties::default()
        };
        let q = query("r", &mut rng).into_bytes();
        rogue
            .publish_with_properties("tengen/jobs/analysis", QoS::AtLeastOnce, false, q, props)
            .unwrap();
        let log = dir.path().join(format!("{id}.log"));
        wait_until(Duration::from_secs(10), says, || {
            std::fs::read_to_string(&log).unwrap().contains(says)
        });
        if !sealed {
            // (The forger answers there too; the worker must not.)
            let panel = panel.lock().unwrap();
            let worker_said = panel
                .iter()
                .filter(|(_, t)| t != "{}" && !t.contains("forged"));
            assert_eq!(
                worker_said.count(),
                0,
                "published on a panel topic: {panel:?}"
            );
        }
        let _ = w.kill();
        let _ = w.wait();
    }
    eprintln!(
        "forged answers printed: {} of 3 queries without a secret, {} of 3 with one \
         (the forger answered {} jobs)",
        printed[0],
        printed[1],
        forged_jobs.lock().unwrap()
    );
    assert_eq!(printed[1], 0);
}
