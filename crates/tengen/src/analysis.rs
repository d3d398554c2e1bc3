//! `tengen analysis`: KataGo's JSON analysis engine on standard input and output.

use std::io::BufReader;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;
use tengen_nn::eval::EvaluatorConfig;
use tengen_protocol::analysis::{
    AnalysisEngine, Defaults, Perspective, DEFAULT_QUEUE_BYTES, MAX_QUERY_LINE_BYTES,
};

use crate::backend::{BackendKind, OrtArgs};
use crate::gtp::read_bounded;
use crate::katago_args::KataArgs;
use crate::katago_keys::Settings;
use crate::katago_keys::Tool;
use crate::logging::{self, Logged};
use crate::network::ModelSource;
use crate::setup::{EngineSpec, Evaluation};
use tengen_device::cluster::client::{self, ClientConfig, Line};
use tengen_device::cluster::job::is_topic_level;
use tengen_device::cluster::seal::Seal;
use tengen_device::cluster::worker::EngineParts;
use tengen_device::cluster::Broker;
use tengen_device::mqtt::TlsFiles;

/// The analysis engine's options, shared by `tengen analysis` and `tengen worker`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// The network (`.bin.gz` or `.onnx`), `bundled` (the default when the build has one)
    /// or `none` (the classical engine judges positions).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Network backend: `tract`, `native`, or `ort` when built with the `ort` feature.
    /// Default: `native` on x86-64 CPUs with AVX2 and FMA, else `tract`; a model the
    /// native backend does not run (an ONNX file) runs on tract.
    #[arg(long, default_value_t = BackendKind::cpu_default())]
    backend: BackendKind,
    /// Positions searched at once. Default: the config's numAnalysisThreads, else 1.
    #[arg(long)]
    analysis_threads: Option<usize>,
    /// Search threads per position (the backend gets as many cores). Default: the config's
    /// numSearchThreads, else 1.
    #[arg(long)]
    search_threads: Option<usize>,
    /// Visits when a query gives no maxVisits. Default: the config's maxVisits, else 500.
    #[arg(long)]
    max_visits: Option<u64>,
    /// PV length when a query gives no analysisPVLen. Default: the config's analysisPVLen,
    /// else 15.
    #[arg(long)]
    pv_len: Option<usize>,
    /// Whose view values are reported from: BLACK, WHITE or SIDETOMOVE. Default: the
    /// config's reportAnalysisWinratesAs, else BLACK.
    #[arg(long)]
    report_analysis_winrates_as: Option<Perspective>,
    /// Megabytes that queued and running queries may hold; a query past it is answered
    /// `queue full` (one of 10,000 moves with every turn analysed holds about 10).
    #[arg(long, default_value_t = (DEFAULT_QUEUE_BYTES >> 20) as u64,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_queue_mb: u64,
    #[command(flatten)]
    ort: OrtArgs,
    #[command(flatten)]
    katago: KataArgs,
}

/// Options of `tengen analysis`.
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    #[command(flatten)]
    engine: EngineArgs,
    /// At end of input, drop queued and running queries instead of finishing them.
    #[arg(long)]
    quit_without_waiting: bool,
    #[command(flatten)]
    cluster: ClusterArgs,
}

/// Options of `tengen analysis --cluster`.
#[derive(Args, Debug)]
struct ClusterArgs {
    /// Send the queries to the workers of an MQTT 5 broker (`mqtt://host:port`) instead
    /// of analysing them here (docs/cluster.md).
    #[arg(long, value_name = "BROKER")]
    cluster: Option<Broker>,
    /// The client id at the broker, which names the answer topic
    /// (`tengen/answers/<id>`). Default: `analysis-<host>-<pid>`.
    #[arg(long, requires = "cluster")]
    client_id: Option<String>,
    /// Seconds without any answer to a job after which it is sent again (answers given
    /// twice are printed once).
    #[arg(long, default_value_t = 30.0, requires = "cluster",
          value_parser = positive_seconds)]
    resend_after: f64,
    /// Seconds a job may wait at the broker before it expires (MQTT 5 message expiry).
    #[arg(long, requires = "cluster")]
    job_expiry: Option<u32>,
    #[command(flatten)]
    tls: PoolLinkArgs,
}

/// How to reach a pool: the files of a TLS connection to its broker (`mqtts://`) and
/// its shared secret.
#[derive(Args, Debug, Clone)]
pub struct PoolLinkArgs {
    /// The CA certificate (PEM) that signed the broker's: needed with `mqtts://`.
    #[arg(long, value_name = "FILE")]
    tls_ca: Option<PathBuf>,
    /// A client certificate (PEM), for a broker that asks for one.
    #[arg(long, value_name = "FILE", requires = "tls_key", requires = "tls_ca")]
    tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A file holding the pool's shared secret (16 bytes or more): jobs and answers are
    /// sealed with it, and those without its seal dropped (docs/cluster.md).
    #[arg(long, value_name = "FILE")]
    pool_secret_file: Option<PathBuf>,
}

impl PoolLinkArgs {
    /// `broker` with these files read when its address asks for TLS.
    pub fn apply(&self, broker: Broker) -> Result<Broker> {
        let broker = match &self.pool_secret_file {
            Some(f) => {
                let secret = std::fs::read(f)
                    .with_context(|| format!("--pool-secret-file {}", f.display()))?;
                let secret = secret.trim_ascii_end();
                broker.with_seal(Seal::new(secret).context("--pool-secret-file")?)
            }
            None => broker,
        };
        if !broker.wants_tls() {
            if self.tls_ca.is_some() {
                anyhow::bail!("--tls-ca: {broker} is not a TLS address (mqtts://)");
            }
            return Ok(broker);
        }
        let Some(ca) = self.tls_ca.clone() else {
            anyhow::bail!(
                "{broker}: mqtts:// needs --tls-ca FILE, the CA that signed the broker's \
                 certificate"
            );
        };
        let files = TlsFiles {
            ca,
            client: self.tls_cert.clone().zip(self.tls_key.clone()),
        };
        Ok(broker.with_tls(&files)?)
    }
}

/// An analysis engine ready to start: what [`EngineArgs`] and the KataGo config ask for.
pub struct Prepared {
    /// The engine's parts for a worker or for standard input.
    pub parts: EngineParts,
    /// `query_models`' answer.
    pub models: serde_json::Value,
    /// One line saying what judges positions.
    pub describe: String,
    /// The KataGo config's settings (logging).
    pub settings: Settings,
}

impl EngineArgs {
    /// The KataGo config's settings, its report logged once logging is set up by `log`.
    fn settings(&self, log: impl FnOnce(&Settings) -> Result<()>) -> Result<Settings> {
        let (settings, report) = self.katago.settings(Tool::Analysis)?;
        log(&settings)?;
        report.log(Tool::Analysis);
        Ok(settings)
    }

    /// Builds the engine's parts through the one engine set-up ([`EngineSpec`]), with
    /// logging set up by `log` from the config first.
    pub fn prepare(&self, log: impl FnOnce(&Settings) -> Result<()>) -> Result<Prepared> {
        let settings = self.settings(log)?;
        // Command-line flags win over the config, which wins over the defaults.
        let analysis_threads = self
            .analysis_threads
            .or(settings.analysis_threads)
            .unwrap_or(1);
        let threads = self.search_threads.or(settings.threads).unwrap_or(1).max(1);
        let max_visits = self.max_visits.or(settings.max_visits).unwrap_or(500);
        let pv_len = self.pv_len.or(settings.pv_len).unwrap_or(15);
        let perspective = self
            .report_analysis_winrates_as
            .or(settings.report_as)
            .unwrap_or(Perspective::Black);
        let mut batching = EvaluatorConfig {
            // Every search thread of every analysis thread may wait on the network at once.
            max_batch: settings
                .max_batch
                .unwrap_or(threads * analysis_threads.max(1)),
            ..EvaluatorConfig::default()
        };
        if let Some(c) = settings.cache_entries {
            batching.cache_entries = c;
        }
        let model = ModelSource::choose(self.model.as_deref(), false).context("--model")?;
        let models = match &model {
            Some(m) => {
                let (name, internal) = m.names();
                json!([{"name": name, "internalName": internal, "maxBatchSize": threads,
                        "usesHumanSLProfile": false}])
            }
            None => json!([]),
        };
        let evaluation = Evaluation::new(model, self.backend, &self.ort, None);
        let spec = EngineSpec {
            batching,
            ..EngineSpec::new(evaluation).with_threads(threads)
        };
        let describe = match &spec.evaluation {
            Evaluation::Network(n) => format!("{} ({})", n.model, n.backend),
            Evaluation::Classic => "the classical engine".to_string(),
        };
        if let Evaluation::Network(n) = &spec.evaluation {
            log::info!("network: {}", n.model);
        }
        let (source, _) = spec.evaluator_source();
        let mut params = spec.analysis_params();
        for setting in &settings.search {
            setting.apply(&mut params);
        }
        let defaults = Defaults {
            params,
            max_visits: max_visits.max(1),
            max_playouts: settings.max_playouts,
            pv_len,
            // Beyond what a Duration holds is no limit.
            max_time: settings
                .max_time
                .and_then(|t| std::time::Duration::try_from_secs_f64(t).ok()),
        };
        Ok(Prepared {
            parts: EngineParts {
                source,
                threads: analysis_threads,
                perspective,
                defaults,
                queue_bytes: usize::try_from(self.max_queue_mb << 20).unwrap_or(usize::MAX),
            },
            models,
            describe,
            settings,
        })
    }
}

/// Sets up `tengen analysis`'s log from the config.
fn init_log(settings: &Settings) -> Result<()> {
    if let Some(file) = logging::init(&settings.log, "analysis")? {
        log::info!("logging to {}", file.display());
    }
    Ok(())
}

/// Runs `tengen analysis`.
pub fn run(a: AnalysisArgs) -> Result<()> {
    if let Some(broker) = a.cluster.cluster.clone() {
        let broker = a.cluster.tls.apply(broker)?;
        let settings = a.engine.settings(init_log)?;
        return run_cluster(a, broker, &settings);
    }
    let Prepared {
        parts,
        models,
        settings,
        ..
    } = a.engine.prepare(init_log)?;
    let out = Logged::new(std::io::stdout(), "response:", settings.log.responses);
    let engine = AnalysisEngine::new(
        parts.source,
        parts.threads,
        parts.perspective,
        Box::new(out),
        parts.queue_bytes,
    );
    let input = Logged::new(std::io::stdin(), "request:", settings.log.requests);
    let mut input = BufReader::new(input);
    while let Some(line) = read_bounded(&mut input, MAX_QUERY_LINE_BYTES)? {
        let Ok(line) = line else {
            // Only an over-long line is refused; it was skipped without being stored.
            engine.emit(&json!({
                "error": format!("line too long (more than {MAX_QUERY_LINE_BYTES} bytes)")
            }));
            continue;
        };
        engine.handle_line(&line, &parts.defaults, &models);
    }
    engine.finish(!a.quit_without_waiting);
    Ok(())
}

/// `tengen analysis --cluster`: the same protocol on standard input and output, the
/// queries answered by the pool's workers.
fn run_cluster(a: AnalysisArgs, broker: Broker, settings: &Settings) -> Result<()> {
    let c = &a.cluster;
    let id = c
        .client_id
        .clone()
        .unwrap_or_else(|| format!("analysis-{}-{}", crate::worker::host(), std::process::id()));
    if !is_topic_level(&id) {
        anyhow::bail!("--client-id: {id:?} cannot be part of a topic (no /, + or #)");
    }
    let cfg = ClientConfig {
        broker,
        id,
        resend_after: std::time::Duration::from_secs_f64(c.resend_after),
        expiry: c.job_expiry,
        quit_without_waiting: a.quit_without_waiting,
    };
    log::info!("sending queries to {} as {}", cfg.broker, cfg.id);
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let requests = settings.log.requests;
    // Standard input is read on a thread of its own: a blocking read has no place in
    // the event loop.
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let input = Logged::new(std::io::stdin(), "request:", requests);
            let mut input = BufReader::new(input);
            while let Ok(Some(line)) = read_bounded(&mut input, MAX_QUERY_LINE_BYTES) {
                let line = line.map_or(Line::TooLong, Line::Text);
                if tx.blocking_send(line).is_err() {
                    break;
                }
            }
        })
        .context("cannot start the input thread")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the I/O runtime")?;
    let mut out = Logged::new(std::io::stdout(), "response:", settings.log.responses);
    runtime.block_on(client::run(cfg, rx, &mut out));
    Ok(())
}

/// Seconds, more than zero.
fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("{s:?} is not a positive number of seconds")),
    }
}
