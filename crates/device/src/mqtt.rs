//! The MQTT link: one event loop that keeps a persistent QoS 1 session with the broker,
//! reconnects with backoff, hands snapshots and commands to the engine loop and publishes
//! what the appliance says, under `<prefix>/` (`tengen/<device-id>` by default).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rumqttc::{v5, QoS, TlsConfiguration, Transport};
use tokio::sync::mpsc::Receiver;

use crate::appliance::Out;
use crate::payload::{Alert, PayloadError, MAX_PAYLOAD};

/// Inbound messages kept while the engine loop is busy; past this (or
/// [`INBOUND_BYTES`]) they are dropped with an alert, so that a flood cannot exhaust memory.
pub const INBOUND_QUEUE: usize = 4096;

/// Payload bytes kept while the engine loop is busy (a few thousand snapshots).
pub const INBOUND_BYTES: usize = 2 * 1024 * 1024;

/// Largest packet taken from the broker. Payloads over the appliance's own limit are
/// still read (and refused with an alert): a packet over this one drops the connection.
pub const MAX_INCOMING_PACKET: usize = 4 * 1024 * 1024;

/// QoS 1 messages sent and not yet acknowledged, at most, on an MQTT 5 connection.
/// rumqttc otherwise takes the broker's receive maximum (65,535 from mosquitto) and
/// allocates a slot for each up front: 14 MB per connection, measured with heaptrack
/// on the daemon, which has two (its own and its pool worker's). A hundred is MQTT
/// 3.1.1's default here too.
pub const OUTGOING_INFLIGHT: u16 = 100;

/// The MQTT protocol version spoken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Version {
    /// MQTT 3.1.1.
    #[default]
    V311,
    /// MQTT 5.
    V5,
}

/// TLS files (PEM).
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The CA that signed the broker's certificate.
    pub ca: PathBuf,
    /// A client certificate and its key, for brokers that ask for one.
    pub client: Option<(PathBuf, PathBuf)>,
}

impl TlsFiles {
    /// The TLS set-up of a connection that checks the broker against these files.
    pub fn configuration(&self) -> Result<TlsConfiguration, MqttError> {
        // One process-wide crypto provider; installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let read = |p: &PathBuf| {
            std::fs::read(p).map_err(|source| MqttError::TlsFile {
                path: p.clone(),
                source,
            })
        };
        let client_auth = match &self.client {
            Some((cert, key)) => Some((read(cert)?, read(key)?)),
            None => None,
        };
        Ok(TlsConfiguration::Simple {
            ca: read(&self.ca)?,
            alpn: None,
            client_auth,
        })
    }
}

/// Where the broker is and who we are.
#[derive(Clone, Debug)]
pub struct MqttConfig {
    /// Broker host.
    pub host: String,
    /// Broker port.
    pub port: u16,
    /// Client id (also names the persistent session).
    pub client_id: String,
    /// Topic prefix, e.g. `tengen/kiosk-1`.
    pub prefix: String,
    /// Protocol version.
    pub version: Version,
    /// User name and password.
    pub credentials: Option<(String, String)>,
    /// TLS, if the broker wants it.
    pub tls: Option<TlsFiles>,
    /// Keep-alive interval.
    pub keep_alive: Duration,
    /// Longest wait between reconnection attempts.
    pub max_backoff: Duration,
    /// Home Assistant discovery prefix (e.g. `homeassistant`), to announce the sensors.
    pub home_assistant: Option<String>,
    /// The device id, as Home Assistant names the device.
    pub device_id: String,
}

/// What the links (MQTT, serial, signals) hand to the engine loop.
#[derive(Debug)]
pub enum Inbound {
    /// A GTP line from the serial link; the formatted reply goes back on the sender.
    Gtp(String, std::sync::mpsc::Sender<String>),
    /// Stop: a signal asked the daemon to end.
    Shutdown,
    /// A payload on `board/snapshot`.
    Snapshot(Payload),
    /// A payload on `command`.
    Command(Payload),
    /// The link (re)connected: the state should be published again.
    Connected,
    /// With remote analysis: the pool went silent (`true`: analyse here) or answers
    /// again (`false`).
    PoolSilent(bool),
    /// A camera reader's status, and the board it settled on when it has one.
    Camera(crate::payload::CameraStatus, Option<crate::Snapshot>),
    /// A command already decoded by another front end (the web panel), whose outcome goes
    /// back on the sender instead of `alert`.
    Control(
        crate::payload::Command,
        tokio::sync::oneshot::Sender<Result<(), String>>,
    ),
}

/// A payload waiting for the engine loop; its bytes count against the queue's budget
/// until it is dropped.
#[derive(Debug)]
pub struct Payload {
    bytes: Vec<u8>,
    queued: Arc<AtomicUsize>,
}

impl std::ops::Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Payload {
    fn drop(&mut self) {
        self.queued.fetch_sub(self.bytes.len(), Ordering::SeqCst);
    }
}

/// The MQTT side of the inbound queue: bounded by count and by bytes.
struct Queue {
    tx: SyncSender<Inbound>,
    queued: Arc<AtomicUsize>,
    /// When a dropped snapshot was last reported (a busy board floods otherwise).
    snapshot_alerted: Option<Instant>,
}

/// The topics the daemon takes input from.
#[derive(Clone, Copy)]
enum Input {
    Snapshot,
    Command,
}

impl Input {
    /// The input a topic under `prefix` carries, if any.
    fn of(topic: &str, prefix: &str) -> Option<Input> {
        match topic.strip_prefix(prefix)?.strip_prefix('/')? {
            "board/snapshot" => Some(Input::Snapshot),
            "command" => Some(Input::Command),
            _ => None,
        }
    }

    /// The topic's name under the prefix, as alerts name their source.
    fn source(self) -> &'static str {
        match self {
            Input::Snapshot => "board/snapshot",
            Input::Command => "command",
        }
    }
}

/// Why a payload was not queued.
enum Refused {
    Full,
    Closed,
}

impl Queue {
    /// Queues `bytes` (at most [`MAX_PAYLOAD`]: [`Polled::publish`] keeps larger ones
    /// out), or gives them back with the reason they were refused.
    fn offer(&mut self, input: Input, bytes: Vec<u8>) -> Result<(), (Refused, Vec<u8>)> {
        let n = bytes.len();
        if self.queued.fetch_add(n, Ordering::SeqCst) + n > INBOUND_BYTES {
            self.queued.fetch_sub(n, Ordering::SeqCst);
            return Err((Refused::Full, bytes));
        }
        let payload = Payload {
            bytes,
            queued: self.queued.clone(),
        };
        let msg = match input {
            Input::Command => Inbound::Command(payload),
            Input::Snapshot => Inbound::Snapshot(payload),
        };
        let back = match self.tx.try_send(msg) {
            Ok(()) => return Ok(()),
            Err(TrySendError::Full(m)) => (Refused::Full, m),
            Err(TrySendError::Disconnected(m)) => (Refused::Closed, m),
        };
        match back.1 {
            Inbound::Command(mut p) | Inbound::Snapshot(mut p) => {
                let bytes = std::mem::take(&mut p.bytes);
                self.queued.fetch_sub(bytes.len(), Ordering::SeqCst);
                Err((back.0, bytes))
            }
            _ => Err((back.0, Vec::new())),
        }
    }

    /// Queues a payload or says on `alert` why not; the sender always learns the outcome.
    fn hand_over(&mut self, client: &Client, prefix: &str, input: Input, bytes: Vec<u8>) {
        let source = input.source();
        let alert = match self.offer(input, bytes) {
            Ok(()) | Err((Refused::Closed, _)) => return,
            Err((Refused::Full, bytes)) => {
                log::warn!("engine loop busy: {source} dropped");
                if let Input::Snapshot = input {
                    // The board sends its snapshot again; one alert a second is enough.
                    let now = Instant::now();
                    if self
                        .snapshot_alerted
                        .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
                    {
                        return;
                    }
                    self.snapshot_alerted = Some(now);
                }
                Alert::dropped(source, "queue full", &bytes)
            }
        };
        publish_alert(client, prefix, &alert);
    }
}

/// Says on `alert` that a payload of `n` bytes on `input` is over the limit.
fn refuse_too_large(client: &Client, prefix: &str, input: Input, n: usize) {
    let alert = Alert::Error {
        source: input.source().into(),
        message: PayloadError::TooLarge(n).to_string(),
    };
    publish_alert(client, prefix, &alert);
}

/// Publishes `alert` straight from the link (the engine loop is busy or never sees it).
fn publish_alert(client: &Client, prefix: &str, alert: &Alert) {
    match serde_json::to_string(alert) {
        Ok(p) => {
            if let Err(e) = client.try_publish(topic(prefix, "alert"), false, p.into_bytes()) {
                log::warn!("mqtt: alert dropped: {e}");
            }
        }
        Err(e) => log::error!("cannot encode an alert: {e}"),
    }
}

/// Why the link could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum MqttError {
    /// A TLS file could not be read.
    #[error("cannot read the TLS file {path}: {source}")]
    TlsFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The topic of `suffix` under `prefix`.
pub fn topic(prefix: &str, suffix: &str) -> String {
    format!("{prefix}/{suffix}")
}

/// One client, either version.
#[derive(Clone)]
enum Client {
    V4(rumqttc::AsyncClient),
    V5(v5::AsyncClient),
}

enum Loop {
    V4(Box<rumqttc::EventLoop>),
    V5(Box<v5::EventLoop>),
}

/// What a poll of the event loop gave.
enum Polled {
    ConnAck,
    Publish(String, Vec<u8>),
    /// A payload over [`MAX_PAYLOAD`]: only its size is kept.
    TooLarge(String, usize),
    /// Our own disconnect went out: the next error ends the loop.
    Disconnect,
    /// (MQTT 3.1.1) A packet of this many bytes, over [`MAX_INCOMING_PACKET`], cut the
    /// link; the next connection is clean, discarding what the broker held for us.
    Oversized(usize),
    Other,
}

impl Polled {
    /// A publish, copied only if the appliance could take it.
    fn publish(topic: String, payload: &[u8]) -> Polled {
        if payload.len() > MAX_PAYLOAD {
            Polled::TooLarge(topic, payload.len())
        } else {
            Polled::Publish(topic, payload.to_vec())
        }
    }
}

impl Client {
    fn new(c: &MqttConfig) -> Result<(Client, Loop), MqttError> {
        let will_topic = topic(&c.prefix, "availability");
        let transport = match &c.tls {
            None => Transport::Tcp,
            Some(t) => Transport::Tls(t.configuration()?),
        };
        Ok(match c.version {
            Version::V311 => {
                let mut o = rumqttc::MqttOptions::new(&c.client_id, &c.host, c.port);
                o.set_keep_alive(c.keep_alive)
                    .set_clean_session(false)
                    .set_max_packet_size(MAX_INCOMING_PACKET, 256 * 1024)
                    .set_transport(transport)
                    .set_last_will(rumqttc::LastWill::new(
                        will_topic,
                        "offline",
                        QoS::AtLeastOnce,
                        true,
                    ));
                if let Some((u, p)) = &c.credentials {
                    o.set_credentials(u, p);
                }
                let (client, ev) = rumqttc::AsyncClient::new(o, 1024);
                (Client::V4(client), Loop::V4(Box::new(ev)))
            }
            Version::V5 => {
                let mut o = v5::MqttOptions::new(&c.client_id, &c.host, c.port);
                o.set_keep_alive(c.keep_alive)
                    .set_clean_start(false)
                    // The session outlives a disconnection by a day, so that queued
                    // snapshots wait for us.
                    .set_session_expiry_interval(Some(86_400))
                    .set_max_packet_size(Some(MAX_INCOMING_PACKET as u32))
                    .set_outgoing_inflight_upper_limit(OUTGOING_INFLIGHT)
                    .set_transport(transport)
                    .set_last_will(v5::mqttbytes::v5::LastWill::new(
                        will_topic,
                        "offline",
                        v5::mqttbytes::QoS::AtLeastOnce,
                        true,
                        None,
                    ));
                if let Some((u, p)) = &c.credentials {
                    o.set_credentials(u, p);
                }
                let (client, ev) = v5::AsyncClient::new(o, 1024);
                (Client::V5(client), Loop::V5(Box::new(ev)))
            }
        })
    }

    fn try_publish(&self, topic: String, retain: bool, payload: Vec<u8>) -> Result<(), String> {
        match self {
            Client::V4(c) => c
                .try_publish(topic, QoS::AtLeastOnce, retain, payload)
                .map_err(|e| e.to_string()),
            Client::V5(c) => c
                .try_publish(topic, v5::mqttbytes::QoS::AtLeastOnce, retain, payload)
                .map_err(|e| e.to_string()),
        }
    }

    /// Publishes, waiting for room in the client's queue (back-pressure, not a drop).
    async fn publish(&self, topic: String, retain: bool, payload: Vec<u8>) -> Result<(), String> {
        match self {
            Client::V4(c) => c
                .publish(topic, QoS::AtLeastOnce, retain, payload)
                .await
                .map_err(|e| e.to_string()),
            Client::V5(c) => c
                .publish(topic, v5::mqttbytes::QoS::AtLeastOnce, retain, payload)
                .await
                .map_err(|e| e.to_string()),
        }
    }

    fn try_subscribe(&self, topic: String) -> Result<(), String> {
        match self {
            Client::V4(c) => c
                .try_subscribe(topic, QoS::AtLeastOnce)
                .map_err(|e| e.to_string()),
            Client::V5(c) => c
                .try_subscribe(topic, v5::mqttbytes::QoS::AtLeastOnce)
                .map_err(|e| e.to_string()),
        }
    }

    fn try_disconnect(&self) {
        let _ = match self {
            Client::V4(c) => c.try_disconnect().map_err(|e| e.to_string()),
            Client::V5(c) => c.try_disconnect().map_err(|e| e.to_string()),
        };
    }
}

impl Loop {
    async fn poll(&mut self) -> Result<Polled, String> {
        match self {
            Loop::V4(ev) => match ev.poll().await {
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::ConnAck(_))) => {
                    // Persistent again after a clean start that discarded a poisoned queue.
                    ev.mqtt_options.set_clean_session(false);
                    Ok(Polled::ConnAck)
                }
                Err(rumqttc::ConnectionError::MqttState(rumqttc::StateError::Deserialization(
                    rumqttc::Error::PayloadSizeLimitExceeded(n),
                ))) => {
                    // MQTT 3.1.1 cannot tell the broker our size limit, and it redelivers
                    // a QoS 1 message until it is acknowledged: one oversized message would
                    // cut the link for good. A clean session discards it (and whatever else
                    // was queued for us), so that the device stays reachable.
                    ev.mqtt_options.set_clean_session(true);
                    Ok(Polled::Oversized(n))
                }
                Ok(rumqttc::Event::Incoming(rumqttc::Packet::Publish(p))) => {
                    Ok(Polled::publish(p.topic, &p.payload))
                }
                Ok(rumqttc::Event::Outgoing(rumqttc::Outgoing::Disconnect)) => {
                    Ok(Polled::Disconnect)
                }
                Ok(_) => Ok(Polled::Other),
                Err(e) => Err(e.to_string()),
            },
            Loop::V5(ev) => match ev.poll().await {
                Ok(v5::Event::Incoming(v5::Incoming::ConnAck(_))) => Ok(Polled::ConnAck),
                Ok(v5::Event::Incoming(v5::Incoming::Publish(p))) => Ok(Polled::publish(
                    String::from_utf8_lossy(&p.topic).into_owned(),
                    &p.payload,
                )),
                Ok(v5::Event::Outgoing(rumqttc::Outgoing::Disconnect)) => Ok(Polled::Disconnect),
                Ok(_) => Ok(Polled::Other),
                Err(e) => Err(e.to_string()),
            },
        }
    }
}

/// How long an outgoing message may wait for room while connected before it is dropped.
const PUBLISH_WAIT: Duration = Duration::from_secs(5);

/// Runs the link until `outbound` closes (the engine loop ended): then publishes
/// `offline` and disconnects. `online` is the retained status published on each connection.
///
/// The event loop runs in a task of its own, so that publishing can wait for room in the
/// client's queue (which only the event loop empties) without ever stalling it: replies
/// are slowed down by a slow broker, not dropped. While disconnected nothing waits.
pub async fn run(
    config: MqttConfig,
    online: String,
    inbound: SyncSender<Inbound>,
    mut outbound: Receiver<Out>,
) -> Result<(), MqttError> {
    let (client, ev) = Client::new(&config)?;
    let connected = Arc::new(AtomicBool::new(false));
    let link = Link {
        config: config.clone(),
        online,
        client: client.clone(),
        connected: connected.clone(),
        queue: Queue {
            tx: inbound,
            queued: Arc::new(AtomicUsize::new(0)),
            snapshot_alerted: None,
        },
    };
    let events = tokio::spawn(link.run(ev));
    let prefix = &config.prefix;
    while let Some(o) = outbound.recv().await {
        let (t, payload) = (topic(prefix, o.topic), o.payload);
        let sent = if connected.load(Ordering::SeqCst) {
            match tokio::time::timeout(PUBLISH_WAIT, client.publish(t, o.retain, payload)).await {
                Ok(r) => r,
                Err(_) => Err("the broker is not keeping up".into()),
            }
        } else {
            client.try_publish(t, o.retain, payload)
        };
        if let Err(e) = sent {
            log::warn!("mqtt: {} message dropped: {e}", o.topic);
        }
    }
    // Orderly stop: say so (the will covers crashes), give the loop a moment to send it.
    let _ = client.try_publish(topic(prefix, "availability"), true, b"offline".to_vec());
    client.try_disconnect();
    let _ = tokio::time::timeout(Duration::from_secs(2), events).await;
    Ok(())
}

/// The event loop's side of the link: connection, subscriptions and inbound messages.
struct Link {
    config: MqttConfig,
    online: String,
    client: Client,
    connected: Arc<AtomicBool>,
    queue: Queue,
}

impl Link {
    /// Polls until the client disconnects (or the task is dropped).
    async fn run(mut self, mut ev: Loop) {
        let c = self.config.clone();
        let prefix = c.prefix.clone();
        let snapshot_topic = topic(&prefix, Input::Snapshot.source());
        let command_topic = topic(&prefix, Input::Command.source());
        let mut backoff = Duration::from_millis(250);
        // The last connection failure logged: a new reason is a warning, a repeat is not.
        let mut last_failure = String::new();
        let mut disconnecting = false;
        // An oversized message's size, until the clean session that discarded it (and
        // whatever was queued behind it) is up and the loss can be told.
        let mut discarded = None;
        loop {
            match ev.poll().await {
                Ok(Polled::ConnAck) => {
                    log::info!("mqtt: connected to {}:{}", c.host, c.port);
                    self.connected.store(true, Ordering::SeqCst);
                    last_failure.clear();
                    backoff = Duration::from_millis(250);
                    self.on_connect(&prefix, &snapshot_topic, &command_topic);
                    if let Some(n) = discarded.take() {
                        let alert = Alert::Error {
                            source: "mqtt".into(),
                            message: format!(
                                "a message of {n} bytes, over the {MAX_INCOMING_PACKET}-byte \
                                 limit, was discarded with the messages queued behind it \
                                 (MQTT 3.1.1 cannot tell the broker the limit; use \
                                 mqtt.protocol = \"5\"): send recent commands again"
                            ),
                        };
                        publish_alert(&self.client, &prefix, &alert);
                    }
                }
                Ok(Polled::Oversized(n)) => {
                    self.connected.store(false, Ordering::SeqCst);
                    log::warn!(
                        "mqtt: a message of {n} bytes, over the {MAX_INCOMING_PACKET}-byte \
                         limit, was sent to us; reconnecting with a clean session to \
                         discard it (messages queued for us meanwhile are lost)"
                    );
                    discarded = Some(n);
                    tokio::time::sleep(backoff).await;
                }
                Ok(Polled::Publish(t, payload)) => {
                    if let Some(input) = Input::of(&t, &prefix) {
                        self.queue.hand_over(&self.client, &prefix, input, payload);
                    }
                }
                Ok(Polled::TooLarge(t, n)) => {
                    if let Some(input) = Input::of(&t, &prefix) {
                        refuse_too_large(&self.client, &prefix, input, n);
                    }
                }
                Ok(Polled::Disconnect) => disconnecting = true,
                Ok(Polled::Other) => {}
                Err(e) => {
                    if disconnecting {
                        return;
                    }
                    if self.connected.swap(false, Ordering::SeqCst) {
                        log::warn!("mqtt: connection lost: {e}; reconnecting");
                    } else if e != last_failure {
                        // Refused, not authorised, a TLS failure: the maker must see why.
                        log::warn!(
                            "mqtt: cannot connect to {}:{}: {e}; retrying",
                            c.host,
                            c.port
                        );
                    } else {
                        log::debug!("mqtt: still not connected: {e}");
                    }
                    last_failure = e;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(c.max_backoff);
                }
            }
        }
    }

    /// Subscribes and announces the device after each connection.
    fn on_connect(&mut self, prefix: &str, snapshot_topic: &str, command_topic: &str) {
        let client = &self.client;
        for t in [snapshot_topic, command_topic] {
            if let Err(e) = client.try_subscribe(t.to_string()) {
                log::error!("mqtt: cannot subscribe to {t}: {e}");
            }
        }
        let _ = client.try_publish(topic(prefix, "availability"), true, b"online".to_vec());
        let _ = client.try_publish(
            topic(prefix, "status"),
            true,
            self.online.clone().into_bytes(),
        );
        if let Some(ha) = &self.config.home_assistant {
            for (t, p) in crate::home_assistant::discovery(ha, prefix, &self.config.device_id) {
                let _ = client.try_publish(t, true, p.into_bytes());
            }
        }
        if let Err(TrySendError::Full(_)) = self.queue.tx.try_send(Inbound::Connected) {
            log::warn!("engine loop busy: the state is republished on its next change");
        }
    }
}
