//! `tengen worker`: a headless member of an analysis pool, serving the KataGo analysis
//! queries of an MQTT 5 broker's job topic (docs/cluster.md).

use anyhow::{bail, Context, Result};
use clap::Args;
use std::time::Duration;

use tengen_device::cluster::job::is_topic_level;
use tengen_device::cluster::worker::{self, Caps, WorkerConfig, DEFAULT_CAPS};
use tengen_device::cluster::Broker;

use crate::analysis::{EngineArgs, PoolLinkArgs};

/// Options of `tengen worker`.
#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The broker (`mqtt[s]://[user:password@]host[:port]`).
    #[arg(long)]
    broker: Broker,
    /// The shared-subscription group: each job goes to one worker of the group.
    #[arg(long, default_value = "tengen")]
    group: String,
    /// Jobs held at once (the connection's receive maximum); the broker keeps the rest.
    /// Default: the analysis threads plus one, so that a job waits ready to start.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    slots: Option<u16>,
    /// The worker's id: its client id and `tengen/workers/<id>/status`.
    /// Default: `worker-<host>-<pid>`.
    #[arg(long)]
    id: Option<String>,
    /// Refuse jobs that ask for more visits a turn than this (a search holds about
    /// 11 KB a visit on 19x19).
    #[arg(long, default_value_t = DEFAULT_CAPS.visits.unwrap_or(u64::MAX))]
    max_job_visits: u64,
    /// Search a job's turn at most this many seconds: the limit of a query that gives
    /// no `overrideSettings.maxTime`, and a query giving more is refused.
    #[arg(long, value_parser = seconds, default_value_t = DEFAULT_CAPS.time.map_or(f64::MAX, |t| t.as_secs_f64()))]
    max_job_seconds: f64,
    /// Jobs one client (one response topic) may have held here at once; more are
    /// refused with `retryAfter`. Default: all slots but one.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    max_client_jobs: Option<u16>,
    #[command(flatten)]
    tls: PoolLinkArgs,
    #[command(flatten)]
    engine: EngineArgs,
}

/// Seconds, more than zero.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}

/// This machine's host name, for default client ids.
pub fn host() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "tengen".into())
}

/// The slots a worker with `threads` analysis threads takes by default.
pub fn default_slots(threads: usize) -> u16 {
    u16::try_from(threads.saturating_add(1)).unwrap_or(u16::MAX)
}

/// Runs `tengen worker` until SIGTERM or SIGINT.
pub fn run(a: WorkerArgs) -> Result<()> {
    // Before the network loads: a wrong address is said at once.
    let broker = a.tls.apply(a.broker)?;
    let mut prepared = a.engine.prepare(|_| Ok(()))?;
    let time_cap = Duration::from_secs_f64(a.max_job_seconds);
    // A query without a time limit gets the cap as its limit.
    let d = &mut prepared.parts.defaults;
    d.max_time = Some(d.max_time.map_or(time_cap, |t| t.min(time_cap)));
    let slots = a
        .slots
        .unwrap_or_else(|| default_slots(prepared.parts.threads));
    let cfg = WorkerConfig {
        broker,
        id: a
            .id
            .unwrap_or_else(|| format!("worker-{}-{}", host(), std::process::id())),
        group: a.group,
        slots,
        backend: prepared.describe,
        caps: Caps {
            visits: Some(a.max_job_visits),
            time: Some(time_cap),
            client_jobs: a.max_client_jobs.map(usize::from),
        }
        .with_client_share(slots),
    };
    for (what, name) in [("--id", &cfg.id), ("--group", &cfg.group)] {
        if !is_topic_level(name) {
            bail!("{what}: {name:?} cannot be part of a topic (no /, + or #)");
        }
    }
    log::info!(
        "worker {} serving group {} at {} with {} slots",
        cfg.id,
        cfg.group,
        cfg.broker,
        cfg.slots
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    runtime.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
        let stop = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            log::info!("stopping");
        };
        worker::run(cfg, prepared.parts, stop).await;
        Ok(())
    })
}
