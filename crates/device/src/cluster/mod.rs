//! Club-scale analysis over an MQTT 5 broker: workers share the jobs of a shared
//! subscription, clients send KataGo analysis queries as jobs and read the answers on
//! their own response topic. The broker is the only coordinator.
//!
//! - [`job`]: the job and answer envelope (topics, properties, size limit, routing ids);
//! - [`worker`]: a worker's job table over the analysis engine, and its MQTT loop;
//! - [`client`]: the client's pending queries, duplicate suppression and resending, and
//!   its MQTT loop;
//! - [`remote`]: an appliance's live analysis sent to the pool.

pub mod client;
pub mod job;
mod link;
pub mod remote;
pub mod seal;
pub mod worker;

pub use job::{Job, JOB_TOPIC, MAX_JOB_BYTES};

use rumqttc::{TlsConfiguration, Transport};

use crate::mqtt::{MqttError, TlsFiles};

/// Where a broker is and how to reach it: `mqtt[s]://[user:password@]host[:port]`.
/// Its `Debug` is its `Display`: the password is never printed.
#[derive(Clone)]
pub struct Broker {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// User name and password.
    pub credentials: Option<(String, String)>,
    tls: Tls,
    /// The pool's shared secret, when it has one: jobs and answers are sealed with it.
    seal: Option<seal::Seal>,
}

/// A broker address's TLS.
#[derive(Clone, Debug)]
enum Tls {
    /// `mqtt://`.
    Off,
    /// `mqtts://`, the files to check the broker by not given yet.
    Wanted,
    /// `mqtts://` with its files read.
    On(TlsConfiguration),
}

/// Why a broker address was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a broker address (mqtt[s]://[user:password@]host[:port])")]
pub struct BrokerError(String);

impl Broker {
    /// A plain connection to `host:port`.
    pub fn plain(host: &str, port: u16) -> Broker {
        Broker {
            host: host.to_string(),
            port,
            credentials: None,
            tls: Tls::Off,
            seal: None,
        }
    }

    /// The pool with a shared secret: every job and answer sealed with it, and those
    /// without its seal dropped.
    pub fn with_seal(mut self, seal: seal::Seal) -> Broker {
        self.seal = Some(seal);
        self
    }

    /// The pool's seal, if it has a secret.
    pub(crate) fn seal(&self) -> Option<&seal::Seal> {
        self.seal.as_ref()
    }

    /// Whether the address asked for TLS (`mqtts://`).
    pub fn wants_tls(&self) -> bool {
        !matches!(self.tls, Tls::Off)
    }

    /// The broker reached over TLS (whatever the address said), checked against `files`
    /// and authenticating with the client certificate they may hold.
    pub fn with_tls(mut self, files: &TlsFiles) -> Result<Broker, MqttError> {
        self.tls = Tls::On(files.configuration()?);
        Ok(self)
    }

    /// The connection's transport. TLS wanted without files gets an empty set of
    /// authorities: every broker is refused, never reached in the clear.
    pub(crate) fn transport(&self) -> Transport {
        match &self.tls {
            Tls::Off => Transport::Tcp,
            Tls::Wanted => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                Transport::Tls(TlsConfiguration::Simple {
                    ca: Vec::new(),
                    alpn: None,
                    client_auth: None,
                })
            }
            Tls::On(c) => Transport::Tls(c.clone()),
        }
    }
}

impl std::str::FromStr for Broker {
    type Err = BrokerError;

    /// `mqtt://host:port`, `mqtt://host` (port 1883), `mqtts://host` (port 8883),
    /// `user:password@` before the host, or a bare `host[:port]`.
    fn from_str(s: &str) -> Result<Broker, BrokerError> {
        let bad = || BrokerError(s.to_string());
        let (rest, tls) = if let Some(r) = s.strip_prefix("mqtts://") {
            (r, Tls::Wanted)
        } else if let Some(r) = s.strip_prefix("mqtt://") {
            (r, Tls::Off)
        } else if s.contains("://") {
            return Err(bad());
        } else {
            (s, Tls::Off)
        };
        let rest = rest.trim_end_matches('/');
        // The password may hold ':' and '@'; the host holds neither '@' nor '/'.
        let (credentials, hostport) = match rest.rsplit_once('@') {
            Some((user, hp)) => {
                let (u, p) = user.split_once(':').ok_or_else(bad)?;
                if u.is_empty() {
                    return Err(bad());
                }
                (Some((u.to_string(), p.to_string())), hp)
            }
            None => (None, rest),
        };
        let default_port = if matches!(tls, Tls::Off) { 1883 } else { 8883 };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().map_err(|_| bad())?),
            None => (hostport, default_port),
        };
        if host.is_empty() || host.contains('/') {
            return Err(bad());
        }
        Ok(Broker {
            host: host.to_string(),
            port,
            credentials,
            tls,
            seal: None,
        })
    }
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for Broker {
    /// The address without the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.wants_tls() { "mqtts" } else { "mqtt" };
        write!(f, "{scheme}://")?;
        if let Some((user, _)) = &self.credentials {
            write!(f, "{user}@")?;
        }
        write!(f, "{}:{}", self.host, self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_addresses_parse_with_a_default_port() {
        let b: Broker = "mqtt://10.0.0.2:1884".parse().unwrap();
        assert_eq!((b.host.as_str(), b.port), ("10.0.0.2", 1884));
        let b: Broker = "mqtt://club".parse().unwrap();
        assert_eq!((b.host.as_str(), b.port), ("club", 1883));
        assert_eq!(b.to_string(), "mqtt://club:1883");
        assert!("http://club".parse::<Broker>().is_err());
        assert!("mqtt://club:x".parse::<Broker>().is_err());
        assert!("mqtt://".parse::<Broker>().is_err());
    }

    #[test]
    fn credentials_and_tls_come_from_the_address_and_the_password_is_never_shown() {
        let b: Broker = "mqtts://board:p@ss:w@club".parse().unwrap();
        assert_eq!((b.host.as_str(), b.port), ("club", 8883));
        assert_eq!(b.credentials, Some(("board".into(), "p@ss:w".into())));
        assert!(b.wants_tls() && matches!(b.tls, Tls::Wanted));
        assert_eq!(b.to_string(), "mqtts://board@club:8883");
        assert_eq!(format!("{b:?}"), "mqtts://board@club:8883");
        let b: Broker = "mqtt://u:@10.0.0.2:1884".parse().unwrap();
        assert_eq!(b.credentials, Some(("u".into(), String::new())));
        assert!(!b.wants_tls());
        assert!("mqtt://nopassword@club".parse::<Broker>().is_err());
        assert!("mqtt://:p@club".parse::<Broker>().is_err());
        let missing = TlsFiles {
            ca: "/nonexistent/ca.pem".into(),
            client: None,
        };
        let e = b.with_tls(&missing).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/ca.pem"), "{e}");
    }
}
