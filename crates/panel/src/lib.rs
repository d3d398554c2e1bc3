//! The kiosk panel: a web page and a JSON API served by `tengen serve` on its own tokio
//! runtime. It shows what the appliance publishes on MQTT (the [`Hub`] is fed the same
//! messages) and sends controls down the same command path, journalled the same way.
//!
//! `hub` keeps the latest view; `graph` follows the win-rate graph and `graph_file` keeps
//! it on disk; `server` accepts connections with their limits; `api` answers requests;
//! `archive` lists and reads finished games; `assets` holds the page.

mod api;
mod archive;
mod assets;
pub mod graph;
pub mod graph_file;
pub mod hub;
mod pairing;
mod server;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

pub use hub::Hub;
use tengen_device::mqtt::Inbound;

/// Where and how the panel is served.
#[derive(Clone, Debug)]
pub struct WebConfig {
    /// Address to listen on (loopback unless the panel is meant for the network).
    pub bind: IpAddr,
    /// Port (0: any free one, as tests use).
    pub port: u16,
    /// The bearer token controls need; without one (and without a PIN) the panel is
    /// read-only.
    pub token: Option<String>,
    /// Whether a pairing PIN, shown on the device's own screen, gives session tokens.
    pub pin: bool,
    /// Where finished games are archived (`state.dir/games`).
    pub games_dir: PathBuf,
    /// Host names the panel answers to besides IP addresses and `localhost` (e.g. the
    /// device's own name): a request for any other name is refused, so that a page
    /// that rebinds its own name to the kiosk's address reads nothing.
    pub hosts: Vec<String>,
}

/// Why the panel could not start.
#[derive(Debug, thiserror::Error)]
pub enum PanelError {
    /// The address could not be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Pairing could not start.
    #[error("pairing: {0}")]
    Pairing(#[from] pairing::PairError),
}

/// Listens on the configured address at once (so that a taken port stops the daemon
/// before READY) and serves on `runtime`; returns the address it listens on.
pub fn start(
    cfg: WebConfig,
    hub: Arc<Hub>,
    inbound: SyncSender<Inbound>,
    runtime: &tokio::runtime::Handle,
) -> Result<SocketAddr, PanelError> {
    let addr = SocketAddr::new(cfg.bind, cfg.port);
    let bind_err = |source| PanelError::Bind { addr, source };
    let listener = std::net::TcpListener::bind(addr).map_err(bind_err)?;
    listener.set_nonblocking(true).map_err(bind_err)?;
    let local = listener.local_addr().map_err(bind_err)?;
    let _context = runtime.enter();
    let listener = tokio::net::TcpListener::from_std(listener).map_err(bind_err)?;
    if !cfg.bind.is_loopback() {
        log::warn!(
            "web panel bound to {local}: anyone on the network can watch{}",
            if cfg.token.is_some() || cfg.pin {
                ", and anyone with the token or the kiosk's PIN control"
            } else {
                ""
            }
        );
    }
    log::info!(
        "web panel on http://{local}/ ({})",
        match (&cfg.token, cfg.pin) {
            (_, true) => "controls need the token or pairing with the kiosk's PIN",
            (Some(_), false) => "controls need the token",
            (None, false) => "read-only: no web.token",
        }
    );
    let app = api::router(api::Shared::new(cfg, hub, inbound)?);
    runtime.spawn(server::serve(listener, app));
    Ok(local)
}
