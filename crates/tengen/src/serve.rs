//! `tengen serve`: the appliance daemon. One engine loop owns the game; the MQTT link
//! (a tokio task), the web panel, the serial GTP line and signals feed it through one
//! bounded queue, and what it publishes goes to the MQTT link and the panel alike.
//! systemd hears READY once the engine is loaded, and watchdog pings only while the
//! engine loop keeps turning.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use sd_notify::NotifyState;
use tengen_device::appliance::{Appliance, Out, RemoteGtp, Settings};
use tengen_device::cluster::{
    self,
    remote::Heard,
    seal::Seal,
    worker::{Caps, EngineParts, WorkerConfig},
};
use tengen_device::mqtt::{self, Inbound, MqttConfig, TlsFiles, Version, INBOUND_QUEUE};
use tengen_device::serial::{serve_gtp, SerialConfig};
use tengen_panel::{Hub, WebConfig};
use tengen_protocol::analysis::{Defaults, Perspective, DEFAULT_QUEUE_BYTES};
use tengen_protocol::gtp::{parse_line, Engine, EngineConfig};

use crate::config::{self, Config, ConfigArgs};
use crate::evaluators::{Settled, SharedSource};
use crate::network::{self, ModelSource};
use crate::setup::EngineSpec;

/// Options of `tengen serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// State directory (overrides `state.dir`).
    #[arg(long)]
    state_dir: Option<PathBuf>,
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(a: ServeArgs) -> Result<()> {
    let mut cfg = config::load(
        a.config.board.as_deref(),
        a.config.config.as_deref(),
        a.config.boards_dir.as_deref(),
    )?;
    if let Some(d) = a.state_dir {
        cfg.state.dir = d;
    }
    let dir = cfg.state.dir.clone();
    tengen_device::journal::ensure_dir(&dir).context("state.dir")?;
    let _lock = lock_state_dir(&dir)?;
    // Leftovers of writes a crash interrupted (the journal's, the graph cache's).
    tengen_device::journal::remove_temporaries(&dir);
    tengen_device::journal::remove_temporaries(&dir.join("cache"));
    // The journal exists before any cache is written beside it: on a nearly full disk
    // the game's record comes first. (Failing here is for Appliance::open to report.)
    if let Err(e) = tengen_device::journal::Journal::open(&dir) {
        log::warn!("the journal cannot be opened yet: {e}");
    }

    let started = Instant::now();
    // Raised to end a search at once: by a stop signal for good, by the watchdog for
    // the one move that would outlast its deadline.
    let interrupt = Arc::new(AtomicBool::new(false));
    let (engine, describe, network, evaluators, refused) =
        match build_engine(&cfg, &dir, interrupt.clone()) {
            Ok((engine, describe, network, evaluators)) => {
                (engine, describe, network, evaluators, None)
            }
            Err(e) => {
                // A network the daemon cannot run must not take the board down with it: the
                // game, journal and panel go on with a stand-in, and the maker is told.
                // A configuration error is no network's fault: it stops the start as before.
                let spec_ok = EngineSpec::from_config(&cfg, &dir).is_ok();
                let Some(stand_in) = stand_in_model(&cfg).filter(|_| spec_ok) else {
                    return Err(e);
                };
                let asked = cfg
                    .engine
                    .model
                    .as_deref()
                    .unwrap_or(Path::new(network::BUNDLED));
                let why = format!(
                    "cannot run the network {}: {e:#}; playing with {} until engine.model \
                 is fixed",
                    asked.display(),
                    stand_in_name(&stand_in)
                );
                log::error!("{why}");
                cfg.engine.model = Some(stand_in);
                let (engine, describe, network, evaluators) =
                    build_engine(&cfg, &dir, interrupt.clone())?;
                (engine, describe, network, evaluators, Some(why))
            }
        };
    let mut app = Appliance::open(engine, &dir, settings(&cfg)?)
        .with_context(|| format!("cannot resume from {}", dir.display()))?;
    if let Some(why) = &refused {
        app.alert_error("engine", why.clone());
    }
    log::info!(
        "engine ready in {:.2} s: {describe}",
        started.elapsed().as_secs_f64()
    );
    let network = network
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();

    let (in_tx, in_rx) = sync_channel::<Inbound>(INBOUND_QUEUE);
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::new(AtomicBool::new(false));
    let heartbeat = Arc::new(AtomicU64::new(0));
    let clock = Instant::now();

    // The async side: signals and the MQTT link.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    let out_tx = match mqtt_config(&cfg)? {
        Some(mc) => {
            let (tx, rx) = tokio::sync::mpsc::channel::<Out>(1024);
            let status = serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "engine": describe,
                "network": network,
                "engine_error": refused,
                "pid": std::process::id(),
            })
            .to_string();
            let in_tx = in_tx.clone();
            runtime.spawn(async move {
                if let Err(e) = mqtt::run(mc, status, in_tx, rx).await {
                    log::error!("mqtt: {e}");
                }
            });
            Some(tx)
        }
        None => None,
    };
    // The pool's jobs, served beside the game by an analysis engine of their own over
    // the game's evaluators.
    let cluster = match cluster_worker(&cfg, &dir, &evaluators)? {
        Some((wc, parts)) => {
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            log::info!("serving the pool's jobs at {} as {}", wc.broker, wc.id);
            let task = runtime.spawn(cluster::worker::run(wc, parts, async {
                let _ = rx.await;
            }));
            Some((tx, task))
        }
        None => None,
    };
    let panel = if cfg.web.enabled {
        let hub = Arc::new(Hub::with_graph_in(dir.clone()).context("web panel")?);
        let web = WebConfig {
            bind: cfg.web.bind.parse().context("web.bind")?,
            port: cfg.web.port,
            token: cfg.web.token.clone(),
            pin: cfg.web.pin,
            games_dir: dir.join("games"),
            hosts: {
                let me = crate::worker::host();
                let mut hosts = vec![format!("{me}.local"), me];
                hosts.extend(cfg.web.hosts.iter().cloned());
                hosts
            },
        };
        tengen_panel::start(web, hub.clone(), in_tx.clone(), runtime.handle())
            .context("web panel")?;
        Some(hub)
    } else {
        None
    };
    // The live position, analysed by the pool with `[analysis] remote`.
    let remote = if cfg.analysis.remote {
        let (tx, rx) = tokio::sync::watch::channel(None);
        let rc = remote_config(&cfg)?;
        log::info!("live analysis by the pool at {}", rc.broker);
        let (mqtt, panel, inbound) = (out_tx.clone(), panel.clone(), in_tx.clone());
        runtime.spawn(cluster::remote::run(rc, rx, move |heard| {
            let o = match heard {
                Heard::Analysis(o) => o,
                Heard::Silent | Heard::Answering => {
                    let silent = matches!(heard, Heard::Silent);
                    if inbound.try_send(Inbound::PoolSilent(silent)).is_err() {
                        log::warn!("the engine loop's queue is full: pool state not passed on");
                    }
                    return;
                }
            };
            if let Some(hub) = &panel {
                hub.publish(&o);
            }
            // Analysis is throttled and soon superseded: one lost to a full queue is
            // not missed.
            if let Some(tx) = &mqtt {
                let _ = tx.try_send(o);
            }
        }));
        Some(tx)
    } else {
        None
    };
    let outlets = Outlets {
        mqtt: out_tx,
        panel,
        remote,
    };
    {
        // Listen before READY: a SIGTERM right after it must stop us cleanly, not kill us.
        use tokio::signal::unix::{signal, SignalKind};
        let _context = runtime.enter();
        let mut term = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
        let in_tx = in_tx.clone();
        let (stopping, interrupt) = (stopping.clone(), interrupt.clone());
        runtime.spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            log::info!("stopping");
            // Flags, not only a message: the queue may be full, and a search running.
            stopping.store(true, Ordering::SeqCst);
            interrupt.store(true, Ordering::SeqCst);
            let _ = in_tx.try_send(Inbound::Shutdown);
        });
    }
    let serial = cfg.serial.port.clone().map(|path| {
        let sc = SerialConfig {
            path,
            baud: cfg.serial.baud,
            reopen_delay: Duration::from_millis(500),
        };
        spawn_serial(sc, in_tx.clone(), stop.clone())
    });
    // Not joined at the end: it may be waiting out a stalled camera, and holds nothing
    // that needs closing beyond its source.
    let _camera = crate::camera::spawn(&cfg, in_tx.clone(), outlets.mqtt.as_ref(), stop.clone())?;
    drop(in_tx);
    let watchdog = spawn_watchdog(
        heartbeat.clone(),
        clock,
        stop.clone(),
        interrupt.clone(),
        cfg.engine.move_time,
    );

    let _ = sd_notify::notify(
        false,
        &[
            NotifyState::Ready,
            NotifyState::Status(&format!("serving: {describe}")),
        ],
    );
    let turn = Turn {
        heartbeat: &heartbeat,
        clock,
        stopping: &stopping,
        interrupt: &interrupt,
    };
    engine_loop(&mut app, &in_rx, &outlets, &turn);
    let _ = sd_notify::notify(false, &[NotifyState::Stopping]);
    // Commands still queued are answered, not silently lost.
    for msg in in_rx.try_iter() {
        match msg {
            Inbound::Command(p) => app.drop_command(&p, "shutting down"),
            Inbound::Control(_, reply) => {
                let _ = reply.send(Err("the daemon is shutting down".into()));
            }
            _ => {}
        }
    }
    flush(&mut app, &outlets);
    if let Some(hub) = &outlets.panel {
        hub.finish();
    }

    stop.store(true, Ordering::SeqCst);
    // Whatever is still queued goes unanswered: dropping it wakes a serial thread
    // waiting for its reply.
    drop(in_rx);
    drop(outlets);
    if let Some(t) = serial {
        let _ = t.join();
    }
    let _ = watchdog.join();
    if let Some((stop, task)) = cluster {
        // Marked offline and disconnected; the last will covers a worker that hangs.
        let _ = stop.send(());
        // The timer is made inside the runtime: built outside, it panics.
        let _ =
            runtime.block_on(async { tokio::time::timeout(Duration::from_secs(3), task).await });
    }
    // Let the link publish `offline` and disconnect.
    runtime.shutdown_timeout(Duration::from_secs(3));
    Ok(())
}

/// What the engine loop shares with the threads around it.
struct Turn<'a> {
    /// The watchdog's proof of life: it moves only when the loop comes round.
    heartbeat: &'a AtomicU64,
    clock: Instant,
    /// Set by a stop signal.
    stopping: &'a AtomicBool,
    /// Ends a running search.
    interrupt: &'a AtomicBool,
}

/// Where the appliance's messages go.
struct Outlets {
    /// The MQTT link, when enabled.
    mqtt: Option<tokio::sync::mpsc::Sender<Out>>,
    /// The web panel's view, when enabled.
    panel: Option<Arc<Hub>>,
    /// The position the pool analyses, with `[analysis] remote`.
    remote: Option<tokio::sync::watch::Sender<Option<String>>>,
}

/// Takes inputs until a shutdown; publishes what the appliance says.
fn engine_loop(app: &mut Appliance, inbound: &Receiver<Inbound>, out: &Outlets, turn: &Turn) {
    loop {
        turn.heartbeat
            .store(turn.clock.elapsed().as_millis() as u64, Ordering::SeqCst);
        if turn.stopping.load(Ordering::SeqCst) {
            break;
        }
        // A watchdog deadline ended the last search; the next one starts afresh.
        turn.interrupt.store(false, Ordering::SeqCst);
        flush(app, out);
        let wait = if app.is_pondering() {
            Duration::from_millis(10)
        } else {
            Duration::from_millis(100)
        };
        match inbound.recv_timeout(wait) {
            Ok(Inbound::Snapshot(p)) => app.on_snapshot(&p),
            Ok(Inbound::Command(p)) => app.on_command(&p),
            Ok(Inbound::Connected) => app.republish(),
            Ok(Inbound::Camera(status, snap)) => app.on_camera(status, snap),
            Ok(Inbound::PoolSilent(silent)) => app.set_pool_silent(silent),
            Ok(Inbound::Control(cmd, reply)) => {
                let done = app.control(cmd).map(|_| ());
                flush(app, out);
                let _ = reply.send(done);
            }
            Ok(Inbound::Gtp(line, reply)) => {
                let id = parse_line(&line).and_then(|c| c.ok()).and_then(|c| c.id);
                let text = app.gtp(&line).format(id);
                flush(app, out);
                let _ = reply.send(text);
            }
            Ok(Inbound::Shutdown) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        flush(app, out);
        app.tick(Instant::now());
        if let Some(remote) = &out.remote {
            // A new position supersedes the job of the old one; the same one sends nothing.
            let wanted = app.remote_query();
            remote.send_if_modified(|q| {
                let changed = *q != wanted;
                if changed {
                    *q = wanted;
                }
                changed
            });
        }
    }
    flush(app, out);
}

/// Hands the appliance's messages to the panel (at once: it never waits on viewers) and
/// the MQTT link. A slow broker slows the engine loop down (a reply must not be dropped
/// for want of room) up to a few seconds a message; while disconnected the link takes
/// messages at once, so nothing waits then.
fn flush(app: &mut Appliance, out: &Outlets) {
    use tokio::sync::mpsc::error::TrySendError as Full;
    const WAIT: Duration = Duration::from_secs(5);
    for mut o in app.take_outbox() {
        if let Some(hub) = &out.panel {
            hub.publish(&o);
        }
        let Some(tx) = &out.mqtt else { continue };
        let deadline = Instant::now() + WAIT;
        loop {
            match tx.try_send(o) {
                Ok(()) | Err(Full::Closed(_)) => break,
                Err(Full::Full(back)) if Instant::now() < deadline => {
                    o = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(Full::Full(back)) => {
                    log::warn!("mqtt link stalled: {} message dropped", back.topic);
                    break;
                }
            }
        }
    }
}

/// Serves GTP on the serial line, each command carried out by the engine loop. Waits
/// for room in the queue and for the reply without ever blocking a stop.
fn spawn_serial(
    sc: SerialConfig,
    inbound: SyncSender<Inbound>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    const STOPPED: &str = "? the engine has stopped\n\n";
    std::thread::spawn(move || {
        log::info!("serial GTP on {} at {} baud", sc.path.display(), sc.baud);
        serve_gtp(&sc, &stop, |line| {
            let (tx, rx) = std::sync::mpsc::channel();
            let mut msg = Inbound::Gtp(line.to_string(), tx);
            loop {
                match inbound.try_send(msg) {
                    Ok(()) => break,
                    Err(TrySendError::Full(m)) if !stop.load(Ordering::SeqCst) => {
                        msg = m;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => return STOPPED.into(),
                }
            }
            loop {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(reply) => return reply,
                    Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::SeqCst) => {}
                    Err(_) => return STOPPED.into(),
                }
            }
        });
    })
}

/// Pings systemd's watchdog at half its interval while the engine loop's heartbeat is
/// younger than that; a stuck engine loop stops the pings and systemd restarts us.
fn spawn_watchdog(
    heartbeat: Arc<AtomicU64>,
    clock: Instant,
    stop: Arc<AtomicBool>,
    interrupt: Arc<AtomicBool>,
    move_time: Option<f64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut usec = 0;
        if !sd_notify::watchdog_enabled(false, &mut usec) || usec == 0 {
            return;
        }
        let half = Duration::from_micros(usec / 2);
        log::info!("systemd watchdog every {:?}", half * 2);
        if move_time.is_some_and(|t| t >= half.as_secs_f64()) {
            // The engine loop is busy for a whole move: a long one looks like a stall.
            log::warn!(
                "engine.move_time is over half the watchdog interval: long moves will be taken for a stall"
            );
        }
        let mut last_ping = Instant::now() - half;
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50).min(half));
            if last_ping.elapsed() < half {
                continue;
            }
            let now = clock.elapsed().as_millis() as u64;
            let age = Duration::from_millis(now.saturating_sub(heartbeat.load(Ordering::SeqCst)));
            if age < half {
                let _ = sd_notify::notify(false, &[NotifyState::Watchdog]);
                last_ping = Instant::now();
            } else {
                // Most likely a long search: end it, so the loop comes round before
                // systemd's deadline; a loop stuck elsewhere gets no ping and is restarted.
                interrupt.store(true, Ordering::SeqCst);
                log::warn!("engine loop silent for {age:?}: search interrupted, ping withheld");
                last_ping = Instant::now();
            }
        }
    })
}

/// Holds an exclusive lock on the state directory, so two daemons never share a journal.
fn lock_state_dir(dir: &std::path::Path) -> Result<nix::fcntl::Flock<std::fs::File>> {
    let path = dir.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
        anyhow::anyhow!(
            "state.dir {} is in use by another tengen ({e})",
            dir.display()
        )
    })
}

/// What plays in place of a configured network that cannot run: the bundled network
/// when this build has one and it was not the one refused, else the classical engine.
/// `None` when nothing would change (no network was asked for).
fn stand_in_model(cfg: &Config) -> Option<PathBuf> {
    let asked = cfg.engine.model.as_deref();
    if asked == Some(Path::new(network::NONE)) || cfg.engine.mode.as_deref() == Some("classic") {
        return None;
    }
    let bundled_refused = asked.is_none() || asked == Some(Path::new(network::BUNDLED));
    if !bundled_refused && ModelSource::bundled().is_some() {
        Some(PathBuf::from(network::BUNDLED))
    } else {
        Some(PathBuf::from(network::NONE))
    }
}

/// What a stand-in from [`stand_in_model`] is, for people.
fn stand_in_name(stand_in: &Path) -> &'static str {
    if stand_in == Path::new(network::BUNDLED) {
        "the bundled network"
    } else {
        "the classical engine"
    }
}

/// The engine the configuration asks for, a line describing it, the network backend it
/// settled on (filled once the engine has loaded its network), and its evaluators for
/// the pool worker to share.
fn build_engine(
    cfg: &Config,
    state_dir: &Path,
    interrupt: Arc<AtomicBool>,
) -> Result<(Engine, String, Settled, SharedSource)> {
    let spec = EngineSpec::from_config(cfg, state_dir)?;
    let config = EngineConfig {
        interrupt: Some(interrupt),
        ..spec.engine_config()
    };
    let (source, settled) = spec.evaluator_source();
    let shared = SharedSource::new(source);
    let engine = Engine::new(shared.source(), config).map_err(anyhow::Error::msg)?;
    Ok((engine, spec.describe(), settled, shared))
}

/// The pool's broker: `[cluster] broker` (its address's credentials), or else the
/// `[mqtt]` one (with `[mqtt]`'s credentials); over TLS the `[mqtt]` TLS files check it.
fn cluster_broker(cfg: &Config) -> Result<cluster::Broker> {
    let m = &cfg.mqtt;
    let broker = match &cfg.cluster.broker {
        Some(b) => b.parse().context("cluster.broker")?,
        None => {
            let mut b = cluster::Broker::plain(&m.host, m.port);
            b.credentials = m.username.clone().zip(m.password.clone());
            b
        }
    };
    let broker = match &cfg.cluster.secret {
        Some(s) => broker.with_seal(Seal::new(s.as_bytes()).context("cluster.secret")?),
        None => broker,
    };
    let tls = match &cfg.cluster.broker {
        Some(_) => broker.wants_tls(),
        None => m.tls,
    };
    if !tls {
        return Ok(broker);
    }
    Ok(broker.with_tls(&tls_files(cfg)?)?)
}

/// The `[mqtt]` TLS files: the club's CA, for its broker and its pool's.
fn tls_files(cfg: &Config) -> Result<TlsFiles> {
    let m = &cfg.mqtt;
    Ok(TlsFiles {
        ca: m.tls_ca.clone().context("mqtt.tls_ca: needed with TLS")?,
        client: m.tls_cert.clone().zip(m.tls_key.clone()),
    })
}

/// Where `[analysis] remote = true` sends the live position.
fn remote_config(cfg: &Config) -> Result<cluster::remote::RemoteConfig> {
    Ok(cluster::remote::RemoteConfig {
        broker: cluster_broker(cfg)?,
        id: format!("analysis-{}", cfg.mqtt.device_id),
        top: cfg.analysis.top,
        // Partial answers keep coming while a worker searches: silence means a lost job.
        resend_after: Duration::from_secs(10),
        fallback_after: (cfg.analysis.fallback_s > 0)
            .then(|| Duration::from_secs(cfg.analysis.fallback_s)),
    })
}

/// The pool worker `[cluster] worker = true` asks for: its identity and an analysis
/// engine built through the one engine set-up, evaluating with the game's `evaluators`.
fn cluster_worker(
    cfg: &Config,
    dir: &Path,
    evaluators: &SharedSource,
) -> Result<Option<(WorkerConfig, EngineParts)>> {
    let c = &cfg.cluster;
    if !c.worker {
        return Ok(None);
    }
    let broker = cluster_broker(cfg)?;
    let spec = EngineSpec::from_config(cfg, dir)?;
    let parts = EngineParts {
        source: evaluators.source(),
        threads: 1,
        perspective: Perspective::Black,
        defaults: Defaults {
            params: spec.analysis_params(),
            max_visits: cfg.engine.visits.max(1),
            max_playouts: None,
            pv_len: 15,
            max_time: Duration::try_from_secs_f64(cfg.engine.max_time).ok(),
        },
        queue_bytes: DEFAULT_QUEUE_BYTES,
    };
    let wc = WorkerConfig {
        broker,
        id: format!("worker-{}", cfg.mqtt.device_id),
        group: c.group.clone(),
        slots: c.slots,
        backend: spec.describe(),
        // Jobs come from the network: no more than a move's search may take.
        caps: Caps {
            visits: Some(cfg.engine.max_visits),
            time: Duration::try_from_secs_f64(cfg.engine.max_time).ok(),
            client_jobs: None,
        }
        .with_client_share(c.slots),
    };
    Ok(Some((wc, parts)))
}

/// The appliance's behaviour from the configuration.
fn settings(cfg: &Config) -> Result<Settings> {
    let a = &cfg.analysis;
    let game = cfg.game_settings()?;
    let names = &cfg.mqtt.gtp_commands;
    let remote_gtp = if names.is_empty() {
        RemoteGtp::Off
    } else if names.iter().any(|n| n == "*") {
        RemoteGtp::All
    } else {
        RemoteGtp::Only(names.clone())
    };
    Ok(Settings {
        game,
        remote_gtp,
        // A camera's reader settles each change itself before it hands a board over; asking
        // the reconciler for repeats as well only delays moves behind hands.
        window: if cfg.camera.source.is_some() {
            1
        } else {
            cfg.board.stability as usize
        },
        analysis: a.enabled,
        ownership: a.ownership,
        analysis_interval: Duration::from_millis(a.interval_ms),
        analysis_top: a.top,
        analysis_max_visits: a.max_visits,
        remote_analysis: a.remote,
    })
}

fn mqtt_config(cfg: &Config) -> Result<Option<MqttConfig>> {
    let m = &cfg.mqtt;
    if !m.enabled {
        return Ok(None);
    }
    let id = m.device_id.clone();
    let tls = if m.tls { Some(tls_files(cfg)?) } else { None };
    Ok(Some(MqttConfig {
        host: m.host.clone(),
        port: m.port,
        client_id: m
            .client_id
            .clone()
            .unwrap_or_else(|| default_client_id(&id)),
        prefix: format!("tengen/{id}"),
        version: if m.protocol == "5" {
            Version::V5
        } else {
            Version::V311
        },
        credentials: m.username.clone().zip(m.password.clone()),
        tls,
        keep_alive: Duration::from_secs(m.keep_alive),
        max_backoff: Duration::from_secs(10),
        home_assistant: m.home_assistant.clone().filter(|p| !p.is_empty()),
        device_id: id,
    }))
}

/// `tengen-<device id>-<12 hex digits>`, the digits a hash of the machine id: stable for
/// one device and different between two, so two kiosks on one broker never take each
/// other's session (the machine id itself stays private, as systemd asks).
fn default_client_id(device_id: &str) -> String {
    let machine = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| nix::unistd::gethostname().ok()?.into_string().ok())
        .unwrap_or_default();
    // FNV-1a: stable across builds and Rust versions, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in "tengen-mqtt-client:".bytes().chain(machine.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("tengen-{device_id}-{:012x}", h & 0xffff_ffff_ffff)
}
