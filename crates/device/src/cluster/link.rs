//! The MQTT 5 connection of a worker or client: rumqttc's event loop pumped in a task of
//! its own (reconnecting with backoff), its events handed over as [`Polled`], and the
//! few publications the cluster makes.

use std::time::Duration;

use rumqttc::v5::mqttbytes::v5::{LastWill, Publish, PublishProperties};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{AsyncClient, Event, EventLoop, Incoming, MqttOptions};
use serde_json::Value;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

use super::job::{Job, Reply, MAX_PACKET_BYTES};
use super::seal::{self, Kind, Seal};
use super::Broker;

/// Requests (publications, acknowledgements) the client queues for the event loop.
const REQUESTS: usize = 4096;

/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// A message received.
#[derive(Debug)]
pub struct Message {
    publish: Box<Publish>,
    /// False when the pool has a secret and the message lacks its seal.
    pub trusted: bool,
}

impl Message {
    /// The message as a job: its payload and where to answer it.
    pub fn job(&self) -> Job {
        let props = self.publish.properties.as_ref();
        Job {
            query: self.publish.payload.to_vec(),
            reply: props.and_then(|p| {
                Some(Reply {
                    topic: p.response_topic.clone()?,
                    correlation: p.correlation_data.as_deref().unwrap_or_default().to_vec(),
                })
            }),
        }
    }

    /// The correlation data (empty if none) and the payload.
    pub fn answer(&self) -> (&[u8], &[u8]) {
        let c = self.publish.properties.as_ref();
        let c = c.and_then(|p| p.correlation_data.as_deref());
        (c.unwrap_or_default(), &self.publish.payload)
    }

    /// Whether the message bears `seal`'s seal as a message of `kind`.
    fn sealed(&self, seal: &Seal, kind: Kind) -> bool {
        let Some(props) = self.publish.properties.as_ref() else {
            return false;
        };
        let topic = match kind {
            Kind::Job => props.response_topic.as_deref().unwrap_or_default(),
            Kind::Answer => "",
        };
        let correlation = props.correlation_data.as_deref().unwrap_or_default();
        props
            .user_properties
            .iter()
            .filter(|(k, _)| k == seal::PROPERTY)
            .any(|(_, v)| seal.check(kind, topic, correlation, &self.publish.payload, v))
    }
}

/// What the connection reported.
#[derive(Debug)]
pub enum Polled {
    /// (Re)connected: subscriptions and statuses are to be made again.
    Connected,
    /// A message arrived.
    Message(Message),
    /// The connection was lost; the link reconnects by itself.
    Lost,
}

/// One MQTT 5 connection.
pub struct Link {
    client: AsyncClient,
    seal: Option<Seal>,
    events: UnboundedReceiver<Polled>,
    pump: tokio::task::JoinHandle<()>,
}

impl Link {
    /// A worker's connection: a clean session each time (a dead worker's jobs are not
    /// kept for it), at most `slots` unacknowledged jobs at once, acknowledged by hand,
    /// and `offline` as its retained last will on `status`.
    pub fn worker(broker: &Broker, id: &str, slots: u16, status: &str, offline: &str) -> Link {
        let mut o = MqttOptions::new(id, &broker.host, broker.port);
        o.set_clean_start(true)
            .set_receive_maximum(Some(slots.max(1)))
            .set_manual_acks(true)
            .set_last_will(LastWill::new(
                status,
                offline.as_bytes().to_vec(),
                QoS::AtLeastOnce,
                true,
                None,
            ));
        Link::start(broker, o, Kind::Job)
    }

    /// A client's connection: a persistent session (an hour), so that answers published
    /// while it is away wait for it.
    pub fn client(broker: &Broker, id: &str) -> Link {
        let mut o = MqttOptions::new(id, &broker.host, broker.port);
        o.set_clean_start(false)
            .set_session_expiry_interval(Some(3600));
        Link::start(broker, o, Kind::Answer)
    }

    /// The connection, its messages expected to be of `incoming` kind.
    fn start(broker: &Broker, mut o: MqttOptions, incoming: Kind) -> Link {
        o.set_keep_alive(Duration::from_secs(10))
            .set_max_packet_size(Some(MAX_PACKET_BYTES as u32))
            .set_outgoing_inflight_upper_limit(crate::mqtt::OUTGOING_INFLIGHT)
            .set_transport(broker.transport());
        if let Some((user, password)) = &broker.credentials {
            o.set_credentials(user, password);
        }
        // Jobs and answers are small and wait on each other: Nagle's algorithm would
        // hold each one back for the peer's delayed acknowledgement (tens of ms).
        let mut net = rumqttc::NetworkOptions::new();
        net.set_tcp_nodelay(true);
        o.set_network_options(net);
        let (client, ev) = AsyncClient::new(o, REQUESTS);
        let (tx, events) = unbounded_channel();
        let seal = broker.seal().cloned();
        let pump = tokio::spawn(pump(ev, tx, seal.clone(), incoming));
        Link {
            client,
            seal,
            events,
            pump,
        }
    }

    /// The next event; a link whose pump ended reports nothing more.
    pub async fn next(&mut self) -> Polled {
        match self.events.recv().await {
            Some(p) => p,
            None => std::future::pending().await,
        }
    }

    /// Subscribes to `filter` with QoS 1.
    pub async fn subscribe(&self, filter: &str) {
        if let Err(e) = self.client.subscribe(filter, QoS::AtLeastOnce).await {
            log::error!("cluster: cannot subscribe to {filter}: {e}");
        }
    }

    /// Acknowledges a message received with manual acknowledgements.
    pub async fn ack(&self, m: &Message) {
        if let Err(e) = self.client.ack(&m.publish).await {
            log::warn!("cluster: cannot acknowledge a job: {e}");
        }
    }

    /// Publishes one answer to its reply address.
    pub async fn answer(&self, reply: &Reply, answer: &Value) {
        let payload = answer.to_string().into_bytes();
        let props = PublishProperties {
            correlation_data: (!reply.correlation.is_empty())
                .then(|| reply.correlation.clone().into()),
            user_properties: self.sealed(Kind::Answer, "", &reply.correlation, &payload),
            ..PublishProperties::default()
        };
        let sent = self
            .client
            .publish_with_properties(&reply.topic, QoS::AtLeastOnce, false, payload, props)
            .await;
        if let Err(e) = sent {
            log::warn!("cluster: cannot answer on {}: {e}", reply.topic);
        }
    }

    /// Publishes a job: `line` answered on `reply`, expiring after `expiry` seconds.
    pub async fn job(&self, topic: &str, line: &str, reply: &Reply, expiry: Option<u32>) {
        let props = PublishProperties {
            response_topic: Some(reply.topic.clone()),
            correlation_data: Some(reply.correlation.clone().into()),
            message_expiry_interval: expiry,
            user_properties: self.sealed(
                Kind::Job,
                &reply.topic,
                &reply.correlation,
                line.as_bytes(),
            ),
            ..PublishProperties::default()
        };
        let sent = self
            .client
            .publish_with_properties(topic, QoS::AtLeastOnce, false, line.to_string(), props)
            .await;
        if let Err(e) = sent {
            log::warn!("cluster: cannot publish a job: {e}");
        }
    }

    /// The user property sealing a message, when the pool has a secret.
    fn sealed(
        &self,
        kind: Kind,
        topic: &str,
        correlation: &[u8],
        payload: &[u8],
    ) -> Vec<(String, String)> {
        self.seal
            .iter()
            .map(|s| {
                (
                    seal::PROPERTY.to_string(),
                    s.sign(kind, topic, correlation, payload),
                )
            })
            .collect()
    }

    /// Publishes a retained message.
    pub async fn publish_retained(&self, topic: &str, payload: &str) {
        let sent = self
            .client
            .publish(topic, QoS::AtLeastOnce, true, payload.to_string())
            .await;
        if let Err(e) = sent {
            log::warn!("cluster: cannot publish on {topic}: {e}");
        }
    }

    /// Disconnects, giving queued publications a moment to go out first.
    pub async fn close(self) {
        let _ = self.client.disconnect().await;
        let _ = tokio::time::timeout(Duration::from_secs(2), self.pump).await;
    }
}

/// Polls the event loop until the client disconnects, reconnecting with backoff; each
/// message is checked against the pool's seal for its `incoming` kind.
async fn pump(mut ev: EventLoop, tx: UnboundedSender<Polled>, seal: Option<Seal>, incoming: Kind) {
    let mut backoff = Duration::from_millis(100);
    let mut connected = false;
    let mut disconnecting = false;
    // The last failure to connect: a new reason is a warning, a repeat is not.
    let mut last_failure = String::new();
    loop {
        let polled = match ev.poll().await {
            Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                log::info!("cluster: connected to the broker");
                connected = true;
                last_failure.clear();
                backoff = Duration::from_millis(100);
                Polled::Connected
            }
            Ok(Event::Incoming(Incoming::Publish(p))) => {
                let mut m = Message {
                    publish: Box::new(p),
                    trusted: true,
                };
                if let Some(s) = &seal {
                    m.trusted = m.sealed(s, incoming);
                }
                Polled::Message(m)
            }
            Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect)) => {
                disconnecting = true;
                continue;
            }
            Ok(_) => continue,
            Err(e) => {
                if disconnecting {
                    return;
                }
                let e = e.to_string();
                if std::mem::take(&mut connected) {
                    log::warn!("cluster: connection lost: {e}; reconnecting");
                    let _ = tx.send(Polled::Lost);
                } else if e != last_failure {
                    log::warn!("cluster: cannot connect to the broker: {e}; retrying");
                } else {
                    log::debug!("cluster: still not connected: {e}");
                }
                last_failure = e;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        if tx.send(polled).is_err() {
            return;
        }
    }
}
