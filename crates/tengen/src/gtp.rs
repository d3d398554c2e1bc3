//! `tengen gtp`: the GTP engine on standard input and output.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use tengen_protocol::gtp::{
    parse_line, Analyze, AnalyzeRequest, Command, Engine, EngineConfig, LineError, ModelInfo,
    Reply, SgfAccess, MAX_LINE_BYTES,
};
use tengen_rules::Rules;
use tengen_search::Strength;

use crate::backend::{BackendKind, OrtArgs};
use crate::classic_eval::ClassicArgs;
use crate::katago_args::KataArgs;
use crate::katago_keys::{Settings, Tool};
use crate::logging::{self, Logged};
use crate::network::ModelSource;
use crate::setup::{EngineSpec, Evaluation, MoveSource};

/// Options of `tengen gtp`.
#[derive(Args, Debug)]
pub struct GtpArgs {
    /// The network (`.bin.gz` or `.onnx`), `bundled` or `none`. Without one, the bundled
    /// network (if the build has one and `--engine classic` is not given); with `none`, or
    /// without a bundled network, the classical engine plays, and judges positions for
    /// the search when `--engine search` asks for a search.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Where moves come from: `search` (MCTS over the network, or over the classical
    /// engine without one) or `classic` (the classical engine alone). Default: `search`
    /// with a network, `classic` without.
    #[arg(long, value_enum)]
    engine: Option<MoveSource>,
    /// Seed of the classical engine's randomness (default: from the clock, so that
    /// games differ).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    classic: ClassicArgs,
    /// Network backend: `tract`, `native`, or `ort` when built with the `ort` feature.
    /// Default: `native` on x86-64 CPUs with AVX2 and FMA, else `tract`; a model the
    /// native backend does not run (an ONNX file) runs on tract.
    #[arg(long, default_value_t = BackendKind::cpu_default())]
    backend: BackendKind,
    /// Search threads (the backend gets as many cores). Default: the config's
    /// numSearchThreads, else 1.
    #[arg(long)]
    threads: Option<usize>,
    /// Visits per move when no clock is set. Default: the config's maxVisits, else 800.
    #[arg(long)]
    visits: Option<u64>,
    /// Playing strength of the search: a rank from `25k` to `1k` or `1d` to `5d` (its
    /// visits and deliberate mistakes; see docs/strength.md), or `max` (the default).
    #[arg(long, value_name = "RANK")]
    strength: Option<Strength>,
    /// Seconds per move when no clock is set, instead of a visit count: searched in full,
    /// as KataGo's maxTime (under a game clock the search stops once the move is decided).
    #[arg(long)]
    move_time: Option<f64>,
    /// Rules of a new game (any name `tengen rules` accepts). Default: the config's rules
    /// keys, else chinese.
    #[arg(long)]
    rules: Option<String>,
    /// Never resign.
    #[arg(long)]
    no_resign: bool,
    /// A search parameter by KataGo's name, as `kata-set-param` sets it (repeatable;
    /// `kata-list-params` lists them), e.g. `--param cpuctExploration=1.5`.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    params: Vec<String>,
    /// Serve GTP over TCP instead of standard input/output: a port (loopback) or an address.
    #[arg(long)]
    listen: Option<String>,
    /// With `--listen`: close a client's connection after this many seconds in which it
    /// sent nothing and was sent nothing while no command ran (0: never).
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    idle_timeout: u64,
    /// With `--listen`: keep the game, rules, clocks and parameters from one client to the
    /// next instead of starting each client afresh.
    #[arg(long)]
    listen_shared: bool,
    /// The only directory `loadsgf` may read from (symbolic links out of it refused).
    /// Without it, `loadsgf` reads any file over standard input and none over `--listen`.
    #[arg(long, value_name = "DIR")]
    sgf_dir: Option<PathBuf>,
    #[command(flatten)]
    ort: OrtArgs,
    #[command(flatten)]
    katago: KataArgs,
    /// What GTP `version` answers (KataGo's `-override-version`); wins over the config's
    /// gtpVersion.
    #[arg(long, value_name = "VERSION")]
    override_version: Option<String>,
}

/// Reads one line of at most `max` bytes, consuming the rest of an over-long line
/// without storing it. `None` at end of input; invalid UTF-8 is replaced, not refused.
pub(crate) fn read_bounded(
    input: &mut impl BufRead,
    max: usize,
) -> std::io::Result<Option<Result<String, LineError>>> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            if buf.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max + 2 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Err(LineError::TooLong)));
    }
    let text = String::from_utf8_lossy(&buf);
    Ok(Some(Ok(text.trim_end_matches(['\n', '\r']).to_string())))
}

/// Runs `tengen gtp`.
pub fn run(a: GtpArgs) -> Result<()> {
    let (settings, report) = a.katago.settings(Tool::Gtp)?;
    if let Some(file) = logging::init(&settings.log, "gtp")? {
        log::info!("logging to {}", file.display());
    }
    report.log(Tool::Gtp);
    let rules = match &a.rules {
        Some(text) => Rules::parse(text).with_context(|| format!("--rules {text}"))?,
        None => settings.rules.unwrap_or_else(Rules::chinese),
    };
    if a.move_time.is_some_and(|t| !(t.is_finite() && t > 0.0)) {
        bail!("--move-time must be a positive number of seconds");
    }
    let sgf_access = match (&a.sgf_dir, &a.listen) {
        (Some(dir), _) => {
            let dir = dir
                .canonicalize()
                .with_context(|| format!("--sgf-dir {}", dir.display()))?;
            if !dir.is_dir() {
                bail!("--sgf-dir {} is not a directory", dir.display());
            }
            SgfAccess::Within(dir)
        }
        (None, Some(_)) => SgfAccess::Refused,
        (None, None) => SgfAccess::Any,
    };
    let classic = a.engine == Some(MoveSource::Classic);
    let model = ModelSource::choose(a.model.as_deref(), classic).context("--model")?;
    let model_names = model.as_ref().map(ModelSource::names);
    let evaluation = Evaluation::new(model, a.backend, &a.ort, None);
    let threads = a.threads.or(settings.threads).unwrap_or(1);
    let mut spec = EngineSpec::new(evaluation).with_threads(threads);
    if let Some(moves) = a.engine {
        spec.moves = moves;
    }
    if let Some(seed) = a.seed {
        spec.seed = seed;
    }
    spec.classic = a.classic;
    if let Some(strength) = a.strength {
        spec.strength = strength;
    }
    spec.limits.visits = Some(a.visits.or(settings.max_visits).unwrap_or(800));
    spec.limits.move_time = a.move_time;
    spec.limits.time_cap = settings.max_time.or(spec.limits.time_cap);
    spec.rules = rules;
    if let Some(b) = settings.max_batch {
        spec.batching.max_batch = b;
    }
    if let Some(c) = settings.cache_entries {
        spec.batching.cache_entries = c;
    }
    if a.no_resign || settings.allow_resignation == Some(false) {
        spec.resign_below = None;
    } else if let Some(t) = settings.resign_threshold {
        // KataGo's threshold is on the expected result (-1 lost, 1 won), Tengen's on the winrate.
        spec.resign_below = Some((t + 1.0) / 2.0);
    }
    let models = model_names.map(|(name, internal_name)| ModelInfo {
        name,
        internal_name,
        max_batch_size: spec.batching.max_batch,
        version: None,
        fp16: false,
    });
    let mut config = gtp_config(&spec, &settings, a.override_version.clone(), sgf_access);
    config.models = models.into_iter().collect();
    log::info!("engine: {}", spec.describe());
    if let Strength::Rank(rank) = spec.strength {
        log::info!("strength: {rank}");
    }
    let (mut engine, _) = spec.engine(config)?;
    for p in &a.params {
        let (key, value) = p
            .split_once('=')
            .with_context(|| format!("--param {p}: expected NAME=VALUE"))?;
        engine
            .set_param(key.trim(), value.trim())
            .map_err(|e| anyhow::anyhow!("--param {p}: {e}"))?;
    }
    let traffic = settings.log.requests;
    let Some(listen) = &a.listen else {
        let mut out = Logged::new(std::io::stdout().lock(), ">", traffic);
        let input = Logged::new(std::io::stdin(), "<", traffic);
        serve_session(&mut engine, input, &mut out, &Activity::new())?;
        return Ok(());
    };
    // Each client starts from what the command line set up, not from the last client's game.
    let startup = engine.config().clone();
    let idle = (a.idle_timeout > 0).then(|| Duration::from_secs(a.idle_timeout));
    let addr = listen_address(listen)?;
    if !addr.ip().is_loopback() {
        log::warn!("GTP on {addr} is reachable from other machines; GTP has no authentication");
    }
    let listener = TcpListener::bind(addr).with_context(|| format!("listening on {addr}"))?;
    log::info!("GTP listening on {}", listener.local_addr()?);
    // One client at a time, as GTP is a conversation; `quit` ends the client's session,
    // not the server.
    for conn in listener.incoming() {
        let mut stream = match conn {
            Ok(s) => s,
            Err(e) => {
                log::warn!("GTP connection failed: {e}");
                continue;
            }
        };
        let peer = stream
            .peer_addr()
            .map(|p| p.to_string())
            .unwrap_or_default();
        log::info!("GTP client {peer} connected");
        let activity = Arc::new(Activity::new());
        let result = stream
            .try_clone()
            .map_err(anyhow::Error::from)
            .and_then(|reader| {
                let touching = Touching {
                    inner: &mut stream,
                    activity: &activity,
                };
                let mut out = Logged::new(touching, ">", traffic);
                match idle {
                    Some(idle) => {
                        // A client that stops reading is idle too: a blocked write gives up
                        // (the clone shares the socket, and so its options).
                        reader.set_write_timeout(Some(idle))?;
                        let reader = IdleReader {
                            inner: reader,
                            activity: activity.clone(),
                            idle,
                        };
                        let reader = Logged::new(reader, "<", traffic);
                        serve_session(&mut engine, reader, &mut out, &activity)
                    }
                    None => {
                        let reader = Logged::new(reader, "<", traffic);
                        serve_session(&mut engine, reader, &mut out, &activity)
                    }
                }
            });
        if let Err(e) = result {
            log::warn!("GTP client {peer}: {e:#}");
        }
        let _ = stream.shutdown(std::net::Shutdown::Both);
        if a.listen_shared {
            engine.resume();
        } else if let Err(e) = engine.reset(startup.clone()) {
            bail!("cannot start a new game for the next client: {e}");
        }
        log::info!("GTP client {peer} left");
    }
    Ok(())
}

/// The GTP engine's settings: the spec's, with what only the KataGo config and command
/// line say (identity, lag buffer, resignation turns, search chat, reporting, search
/// parameters) over them.
fn gtp_config(
    spec: &EngineSpec,
    s: &Settings,
    override_version: Option<String>,
    sgf_access: SgfAccess,
) -> EngineConfig {
    let mut config = spec.engine_config();
    config.sgf_access = sgf_access;
    if let Some(name) = &s.name {
        config.name = name.clone();
    }
    if let Some(version) = override_version.or_else(|| s.version.clone()) {
        config.version = version;
    }
    if let Some(lag) = s.lag_buffer {
        config.lag_buffer = lag;
    }
    if let Some(turns) = s.resign_turns {
        config.resign_turns = turns;
    }
    if let Some(chat) = s.ogs_chat {
        config.ogs_chat_to_stderr = chat;
    }
    if s.pondering == Some(true) {
        config.pondering = Some(s.ponder_limits);
    }
    config.report_as = s.report_as.unwrap_or(config.report_as);
    config.analysis_pv_len = s.pv_len.unwrap_or(config.analysis_pv_len);
    config.playouts = s.max_playouts.or(config.playouts);
    config.search_factors = s.search_factors;
    for setting in &s.search {
        setting.apply(&mut config.params);
    }
    // As KataGo: without genmoveAntiMirror, a config's antiMirror is genmove's too.
    let given = |name: &str| s.search.iter().any(|x| x.param_name() == Some(name));
    if given("antiMirror") && !given("genmoveAntiMirror") {
        config.params.genmove_anti_mirror = config.params.anti_mirror;
    }
    config
}

/// `--listen` as an address; a bare port means loopback.
fn listen_address(text: &str) -> Result<SocketAddr> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .with_context(|| format!("--listen {text:?} is neither a port nor an address"))
}

/// When a client last sent or was sent anything, and whether a command of its is running:
/// what an idle timeout is measured from.
struct Activity {
    last: Mutex<Instant>,
    busy: AtomicBool,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            last: Mutex::new(Instant::now()),
            busy: AtomicBool::new(false),
        }
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// Marks a command running (no timeout while it runs) or done.
    fn set_busy(&self, busy: bool) {
        self.busy.store(busy, Ordering::SeqCst);
        self.touch();
    }

    /// How much longer the client may stay silent; zero once it has been idle too long.
    fn remaining(&self, idle: Duration) -> Duration {
        if self.busy.load(Ordering::SeqCst) {
            return idle;
        }
        let last = *self.last.lock().unwrap_or_else(|e| e.into_inner());
        idle.saturating_sub(last.elapsed())
    }
}

/// A connection's reading half that fails with `TimedOut` once the client has been idle
/// for `idle`, which ends its session.
struct IdleReader {
    inner: TcpStream,
    activity: Arc<Activity>,
    idle: Duration,
}

impl Read for IdleReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let wait = self.activity.remaining(self.idle);
            if wait.is_zero() {
                log::info!("GTP client idle for {} s: closing", self.idle.as_secs());
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            self.inner.set_read_timeout(Some(wait))?;
            match self.inner.read(buf) {
                Ok(n) => {
                    self.activity.touch();
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// A writer that counts what it sends as the client's activity.
struct Touching<'a, W> {
    inner: W,
    activity: &'a Activity,
}

impl<W: Write> Write for Touching<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.activity.touch();
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Serves one GTP conversation: lines from `input`, read on their own thread so that a
/// running analysis or pondering sees the next command arrive and stops, as clients
/// expect; replies to `out`. Ends at `quit` or when the input ends. `activity` is told
/// while a command runs.
fn serve_session(
    engine: &mut Engine,
    input: impl Read + Send + 'static,
    out: &mut impl Write,
    activity: &Activity,
) -> Result<()> {
    let (tx, rx) = mpsc::sync_channel::<Result<String, LineError>>(16);
    std::thread::Builder::new()
        .name("gtp-input".into())
        .spawn(move || {
            let mut input = BufReader::new(input);
            while let Ok(Some(line)) = read_bounded(&mut input, MAX_LINE_BYTES) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        })?;
    let mut pending = None;
    loop {
        let line = match pending.take() {
            Some(l) => l,
            None => match rx.recv() {
                Ok(l) => l,
                Err(_) => break,
            },
        };
        let line = match line.map(|l| parse_line(&l)) {
            Ok(None) => continue,
            Ok(Some(Ok(line))) => line,
            Ok(Some(Err(LineError::MissingCommand { id }))) => {
                write_reply(out, &Reply::Failure("missing command".into()), id)?;
                continue;
            }
            Ok(Some(Err(e))) | Err(e) => {
                write_reply(out, &Reply::Failure(e.to_string()), None)?;
                continue;
            }
        };
        let cmd = match Command::parse(&line.name, &line.args) {
            Ok(cmd) => cmd,
            Err(e) => {
                write_reply(out, &Reply::Failure(e.to_string()), line.id)?;
                continue;
            }
        };
        if let Command::Analyze(kind, request) = &cmd {
            // A genmove form runs until its move is chosen, like genmove; a plain analysis
            // runs until the client speaks, and only its reports keep the client active.
            activity.set_busy(kind.genmove());
            pending = analyze(engine, *kind, request, line.id, &rx, out)?;
            activity.set_busy(false);
            write_chat(engine);
        } else {
            activity.set_busy(true);
            let reply = match cmd {
                Command::KataSearchCancellable(pla) => {
                    let (reply, next) = search_cancellable(engine, pla, &rx)?;
                    pending = next;
                    reply
                }
                _ => engine.execute(&cmd),
            };
            activity.set_busy(false);
            write_chat(engine);
            write_reply(out, &reply, line.id)?;
            if engine.quit_requested() {
                break;
            }
            if matches!(reply, Reply::Failure(_)) {
                continue;
            }
        }
        if pending.is_none() && engine.start_pondering(&cmd) {
            match ponder(engine, &rx)? {
                Some(next) => pending = Some(next),
                None => break,
            }
        }
    }
    engine.stop();
    Ok(())
}

/// Pondering, once started: until the next input line (which stops it and is returned)
/// or its limits; `None` when the input ends first.
fn ponder(engine: &mut Engine, rx: &mpsc::Receiver<Line>) -> Result<Option<Line>> {
    let waited = wait(engine, rx, Until::LineOrSearchEnd, Duration::ZERO, |_| {
        Ok(())
    })?;
    let visits = engine.stop_pondering();
    Ok(match waited {
        Waited::Line(l) => {
            log::info!("pondering stopped by the next command: {visits} visits in the tree");
            Some(l)
        }
        Waited::SearchEnded => {
            log::info!("pondering reached its limits: {visits} visits in the tree");
            rx.recv().ok()
        }
        Waited::InputEnded => None,
    })
}

/// KataGo's `ogsChatToStderr`: the search summary of a chosen move, for bot bridges.
fn write_chat(engine: &mut Engine) {
    if let Some(chat) = engine.take_chat() {
        eprintln!("{chat}");
    }
}

/// `kata-search_cancellable`: the search runs until it decides or the next input line
/// arrives (which cancels it, as in KataGo, unless the search had already ended). Returns
/// the reply and the line that stopped it.
fn search_cancellable(
    engine: &mut Engine,
    pla: tengen_rules::Player,
    rx: &mpsc::Receiver<Line>,
) -> Result<(Reply, Option<Line>)> {
    let pending = match engine.start_search(pla) {
        Ok(p) => p,
        Err(e) => return Ok((Reply::Failure(e), None)),
    };
    let no_report = |_: &Engine| Ok(());
    let (next, cancelled) = match wait(
        engine,
        rx,
        Until::LineOrSearchEnd,
        Duration::ZERO,
        no_report,
    )? {
        Waited::Line(l) => (Some(l), engine.is_searching()),
        Waited::SearchEnded => (None, false),
        Waited::InputEnded => {
            // No line can come to cancel it: the search ends at its limits.
            wait(engine, rx, Until::SearchEnd, Duration::ZERO, no_report)?;
            (None, false)
        }
    };
    Ok((engine.finish_search(pending, cancelled), next))
}

fn write_reply(out: &mut impl Write, reply: &Reply, id: Option<u64>) -> Result<()> {
    out.write_all(reply.format(id).as_bytes())?;
    out.flush()?;
    Ok(())
}

type Line = Result<String, LineError>;

/// What ends a [`wait`] besides the end of the input.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    /// The search's end; input lines wait (a genmove form that is not cancellable).
    SearchEnd,
    /// The next input line (an analysis, which searches until the client speaks).
    Line,
    /// Whichever comes first (a cancellable search, pondering).
    LineOrSearchEnd,
}

/// How a [`wait`] ended.
enum Waited {
    /// The next input line arrived (the search may still run).
    Line(Line),
    /// The search ended.
    SearchEnded,
    /// The input ended.
    InputEnded,
}

/// Waits for the next input line or the engine's search to end, as `until` says, calling
/// `report` every `interval` meanwhile (zero: never). The one loop of every command that
/// searches while the client may speak.
fn wait(
    engine: &Engine,
    rx: &mpsc::Receiver<Line>,
    until: Until,
    interval: Duration,
    mut report: impl FnMut(&Engine) -> Result<()>,
) -> Result<Waited> {
    // How often the search's end is looked for: short, so that no answer waits on a
    // report interval.
    const POLL: Duration = Duration::from_millis(10);
    let mut next_report = Instant::now() + interval;
    loop {
        if until != Until::Line && !engine.is_searching() {
            return Ok(Waited::SearchEnded);
        }
        if until == Until::SearchEnd {
            std::thread::sleep(POLL);
        } else {
            match rx.recv_timeout(POLL) {
                Ok(l) => return Ok(Waited::Line(l)),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(Waited::InputEnded),
            }
        }
        if !interval.is_zero() && Instant::now() >= next_report {
            report(engine)?;
            next_report = Instant::now() + interval;
        }
    }
}

/// Runs a streaming analysis command: `=id`, then a report line every interval until the
/// next input line arrives (or, for the genmove forms, until the move is chosen and
/// played), then an empty line. Returns the input line that stopped it.
fn analyze(
    engine: &mut Engine,
    kind: Analyze,
    request: &AnalyzeRequest,
    id: Option<u64>,
    rx: &mpsc::Receiver<Line>,
    out: &mut impl Write,
) -> Result<Option<Line>> {
    let a = match engine.start_analysis(kind, request) {
        Ok(a) => a,
        Err(e) => {
            write_reply(out, &Reply::Failure(e), id)?;
            return Ok(None);
        }
    };
    let id = id.map(|i| i.to_string()).unwrap_or_default();
    writeln!(out, "={id}")?;
    out.flush()?;
    // KataGo reports no more often than every 10 ms.
    let interval = if a.interval.is_zero() {
        Duration::ZERO
    } else {
        a.interval.max(Duration::from_millis(10))
    };
    let until = match (a.genmove, kind.cancellable()) {
        (false, _) => Until::Line,
        (true, false) => Until::SearchEnd,
        (true, true) => Until::LineOrSearchEnd,
    };
    let mut report = |engine: &Engine| -> Result<()> {
        if let Some(line) = engine.analyze_line(&a) {
            writeln!(out, "{line}")?;
            out.flush()?;
        }
        Ok(())
    };
    let (next, cancelled) = match wait(engine, rx, until, interval, &mut report)? {
        Waited::Line(l) => (Some(l), a.genmove && engine.is_searching()),
        Waited::SearchEnded => (None, false),
        Waited::InputEnded if a.genmove => {
            // kata-search_analyze_cancellable without input: its move, at its limits.
            wait(engine, rx, Until::SearchEnd, interval, &mut report)?;
            (None, false)
        }
        Waited::InputEnded => (None, false),
    };
    if a.genmove && !interval.is_zero() {
        if let Some(line) = engine.analyze_line(&a) {
            writeln!(out, "{line}")?;
        }
    }
    let closing = if cancelled {
        engine.cancel_analyze(&a)
    } else {
        engine.finish_analyze(&a)
    };
    if let Some(play) = closing {
        writeln!(out, "{play}")?;
    }
    writeln!(out)?;
    out.flush()?;
    Ok(next)
}
