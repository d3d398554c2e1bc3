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
pub mod worker;

pub use job::{Job, JOB_TOPIC, MAX_JOB_BYTES};

/// Where a broker is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broker {
    /// Host name or address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Why a broker address was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a broker address (mqtt://host[:port])")]
pub struct BrokerError(String);

impl std::str::FromStr for Broker {
    type Err = BrokerError;

    /// `mqtt://host:port`, `mqtt://host` (port 1883) or `host[:port]`.
    fn from_str(s: &str) -> Result<Broker, BrokerError> {
        let bad = || BrokerError(s.to_string());
        let rest = s.strip_prefix("mqtt://").unwrap_or(s).trim_end_matches('/');
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().map_err(|_| bad())?),
            None => (rest, 1883),
        };
        if host.is_empty() || host.contains('/') || s.contains("://") && !s.starts_with("mqtt://") {
            return Err(bad());
        }
        Ok(Broker {
            host: host.to_string(),
            port,
        })
    }
}

impl std::fmt::Display for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mqtt://{}:{}", self.host, self.port)
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
}
