//! A real mosquitto, a recording MQTT client and a `tengen serve` daemon, for the MQTT
//! tests and the latency benchmark.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

pub const PREFIX: &str = "tengen/test";

/// True when `cmd` is on PATH. Under CI (`CI` set) a missing tool fails the test
/// instead: there a skipped test must never read as a passed one.
pub fn have(cmd: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    super::require_under_ci(found, cmd);
    found
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs a shell command in `dir`, failing the test with its output if it fails.
pub fn sh(dir: &Path, cmd: &str) {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether the tools of [`tls_broker`] are here (saying so when not).
pub fn have_tls_tools(test: &str) -> bool {
    let ok = have("mosquitto") && have("openssl") && have("mosquitto_passwd");
    if !ok {
        eprintln!("{test} skipped: mosquitto, openssl or mosquitto_passwd missing");
    }
    ok
}

/// A throw-away CA (`ca.pem` in `dir`), a server certificate for localhost and
/// 127.0.0.1, and a password file with `users` (name, password): the mosquitto
/// configuration of a TLS listener on `port` that wants a password.
pub fn tls_broker(dir: &Path, port: u16, users: &[(&str, &str)]) -> String {
    sh(
        dir,
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
           -subj /CN=tengen-test-ca 2>/dev/null",
    );
    sh(
        dir,
        "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \
           -subj /CN=localhost 2>/dev/null",
    );
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    sh(
        dir,
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
           -out server.pem -days 2 -extfile ext.cnf 2>/dev/null",
    );
    for (i, (user, password)) in users.iter().enumerate() {
        let create = if i == 0 { "-c " } else { "" };
        sh(
            dir,
            &format!("mosquitto_passwd -b {create}passwd {user} {password}"),
        );
    }
    format!(
        "listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {0}/passwd\n\
         cafile {0}/ca.pem\ncertfile {0}/server.pem\nkeyfile {0}/server.key\n",
        dir.display()
    )
}

/// A mosquitto on a loopback port, with persistence so that a restart keeps sessions.
pub struct Broker {
    pub child: Child,
    pub port: u16,
    pub dir: PathBuf,
}

impl Broker {
    pub fn start(dir: &Path, port: u16) -> Broker {
        Broker::start_with(dir, port, "")
    }

    /// With `more` appended to the configuration (e.g. another listener).
    pub fn start_with(dir: &Path, port: u16, more: &str) -> Broker {
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "per_listener_settings true\nuser root\n\
                 persistence true\npersistence_location {}/\nautosave_interval 1\n\
                 listener {port} 127.0.0.1\nallow_anonymous true\n{more}",
                dir.display()
            ),
        )
        .unwrap();
        let child = Command::new("mosquitto")
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("mosquitto.log")).unwrap())
            .spawn()
            .expect("mosquitto starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "mosquitto did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Broker {
            child,
            port,
            dir: dir.to_path_buf(),
        }
    }

    /// Stops the broker the way a service manager would (it saves its sessions).
    pub fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    pub fn restart(&mut self) {
        self.stop();
        *self = Broker::start(&self.dir.clone(), self.port);
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One received message.
#[derive(Clone)]
pub struct Msg {
    pub topic: String,
    pub payload: String,
    /// The payload as sent (a picture's bytes).
    pub bytes: Vec<u8>,
    pub retain: bool,
    /// When it arrived.
    pub at: Instant,
}

impl std::fmt::Debug for Msg {
    /// Without the raw bytes, which the text already shows.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Msg")
            .field("topic", &self.topic)
            .field("payload", &self.payload)
            .field("retain", &self.retain)
            .finish()
    }
}

/// A test client that records every message under the device's prefix.
pub struct Observer {
    pub client: Client,
    pub seen: Arc<Mutex<Vec<Msg>>>,
}

impl Observer {
    pub fn connect(port: u16, name: &str) -> Observer {
        Observer::connect_with(port, name, true)
    }

    /// With `clean` false the broker keeps the session (and queues for it) while away.
    pub fn connect_with(port: u16, name: &str, clean: bool) -> Observer {
        let mut o = MqttOptions::new(format!("{name}-{}", std::process::id()), "127.0.0.1", port);
        o.set_keep_alive(Duration::from_secs(5));
        o.set_clean_session(clean);
        // Big enough for the oversized messages some tests send the daemon.
        o.set_max_packet_size(16 << 20, 16 << 20);
        let (client, mut conn) = Client::new(o, 100);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (c2, s2) = (client.clone(), seen.clone());
        std::thread::spawn(move || {
            for ev in conn.iter() {
                match ev {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        // A clean session forgets subscriptions: renew them each time.
                        let _ = c2.subscribe(format!("{PREFIX}/#"), QoS::AtLeastOnce);
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => s2.lock().unwrap().push(Msg {
                        topic: p
                            .topic
                            .trim_start_matches(&format!("{PREFIX}/"))
                            .to_string(),
                        payload: String::from_utf8_lossy(&p.payload).into_owned(),
                        bytes: p.payload.to_vec(),
                        retain: p.retain,
                        at: Instant::now(),
                    }),
                    Ok(_) => {}
                    Err(rumqttc::ConnectionError::RequestsDone) => break,
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        });
        Observer { client, seen }
    }

    pub fn publish(&self, suffix: &str, payload: impl Into<Vec<u8>>) {
        self.client
            .publish(
                format!("{PREFIX}/{suffix}"),
                QoS::AtLeastOnce,
                false,
                payload,
            )
            .unwrap();
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The first message after index `from` on `topic` satisfying `ok`.
    pub fn wait(&self, from: usize, topic: &str, ok: impl Fn(&Value) -> bool) -> (usize, Value) {
        self.wait_for(from, topic, Duration::from_secs(30), ok)
    }

    /// As [`Observer::wait`], waiting up to `limit`.
    pub fn wait_for(
        &self,
        from: usize,
        topic: &str,
        limit: Duration,
        ok: impl Fn(&Value) -> bool,
    ) -> (usize, Value) {
        let deadline = Instant::now() + limit;
        loop {
            {
                let seen = self.seen.lock().unwrap();
                for (i, m) in seen.iter().enumerate().skip(from) {
                    if m.topic == topic {
                        let v = serde_json::from_str(&m.payload)
                            .unwrap_or(Value::String(m.payload.clone()));
                        if ok(&v) {
                            return (i, v);
                        }
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "no {topic} message as expected; got {:#?}",
                self.seen
                    .lock()
                    .unwrap()
                    .iter()
                    .skip(from)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The raw messages on `topic` after index `from`.
    pub fn raw(&self, from: usize, topic: &str) -> Vec<Msg> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .skip(from)
            .filter(|m| m.topic == topic)
            .cloned()
            .collect()
    }

    /// Messages on `topic` after index `from`.
    pub fn all(&self, from: usize, topic: &str) -> Vec<Value> {
        self.raw(from, topic)
            .into_iter()
            .map(|m| serde_json::from_str(&m.payload).unwrap_or(Value::String(m.payload)))
            .collect()
    }
}

/// The daemon, killed when dropped.
pub struct Daemon {
    pub child: Child,
    pub log: PathBuf,
}

impl Daemon {
    pub fn start(dir: &Path, port: u16, extra: &str) -> Daemon {
        Daemon::start_with(dir, port, "", extra)
    }

    /// `mqtt` adds keys to the `[mqtt]` table, `extra` adds tables.
    pub fn start_with(dir: &Path, port: u16, mqtt: &str, extra: &str) -> Daemon {
        let cfg = dir.join("tengen.toml");
        let text = format!(
            "[mqtt]\nhost = \"127.0.0.1\"\nport = {port}\ndevice_id = \"test\"\nkeep_alive = 5\n\
             {mqtt}\n[state]\ndir = \"{}\"\n{extra}",
            dir.join("state").display()
        );
        std::fs::write(&cfg, super::config::without_network(&text)).unwrap();
        let log = dir.join("daemon.log");
        let child = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .args(["serve", "--config"])
            .arg(&cfg)
            .env("RUST_LOG", "info,tengen_device=debug")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            )
            .spawn()
            .unwrap();
        Daemon { child, log }
    }

    pub fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Stops it as systemd would; its exit status (see `process::terminate`).
    pub fn terminate(&mut self, limit: std::time::Duration) -> std::process::ExitStatus {
        super::process::terminate(&mut self.child, limit)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("--- daemon log ---\n{}", self.log());
        }
    }
}

pub fn setup(name: &str) -> Option<(tempfile::TempDir, Broker)> {
    if !have("mosquitto") {
        eprintln!("{name} skipped: mosquitto not installed");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path(), free_port());
    Some((dir, broker))
}

/// A 9x9 board as rows, edited by point names like `C7`.
#[derive(Clone)]
pub struct Rows(pub Vec<Vec<u8>>);

impl Rows {
    pub fn empty() -> Rows {
        Rows(vec![vec![b'.'; 9]; 9])
    }
    pub fn of(state: &Value) -> Rows {
        Rows(
            state["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().as_bytes().to_vec())
                .collect(),
        )
    }
    pub fn at(&mut self, point: &str) -> &mut u8 {
        let col = b"ABCDEFGHJ"
            .iter()
            .position(|&c| c == point.as_bytes()[0])
            .unwrap();
        let row: usize = point[1..].parse().unwrap();
        &mut self.0[9 - row][col]
    }
    pub fn with(mut self, point: &str, c: u8) -> Rows {
        *self.at(point) = c;
        self
    }
    pub fn text(&self) -> String {
        self.0
            .iter()
            .map(|r| String::from_utf8(r.clone()).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }
    /// The same board with a hand over the 3x3 block around `point`.
    pub fn hand_over(&self, point: &str) -> Rows {
        let mut r = self.clone();
        let col = b"ABCDEFGHJ"
            .iter()
            .position(|&c| c == point.as_bytes()[0])
            .unwrap() as i32;
        let row = 9 - point[1..].parse::<i32>().unwrap();
        for y in row - 1..=row + 1 {
            for x in col - 1..=col + 1 {
                if (0..9).contains(&y) && (0..9).contains(&x) {
                    r.0[y as usize][x as usize] = b'?';
                }
            }
        }
        r
    }
}

pub fn moves(state: &Value) -> Vec<String> {
    state["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

/// Publishes a snapshot as often as the stability window wants.
pub fn show(obs: &Observer, rows: &Rows, times: usize) {
    for _ in 0..times {
        obs.publish("board/snapshot", rows.text());
    }
}
