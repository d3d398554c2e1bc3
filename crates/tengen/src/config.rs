//! The appliance's configuration: one TOML file over a hardware profile
//! (`boards/<name>/board.toml`), merged key by key and validated, every error naming
//! its key. `tengen config` prints the result.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use tengen_device::payload::EngineSide;
use tengen_device::GameSettings;
use tengen_rules::BoardSize;

/// Where the configuration file is by default.
pub const DEFAULT_CONFIG: &str = "/etc/tengen/tengen.toml";

/// Options of `tengen config`.
#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// Hardware profile: a folder name under the boards directory.
    #[arg(long)]
    pub board: Option<String>,
    /// Configuration file (default /etc/tengen/tengen.toml when it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Folder of hardware profiles (default: $TENGEN_BOARDS, ./boards, /usr/share/tengen/boards).
    #[arg(long)]
    pub boards_dir: Option<PathBuf>,
}

/// Engine settings.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Engine {
    /// Network file; none plays the classical engine.
    pub model: Option<PathBuf>,
    /// `tract` or `ort`.
    pub backend: Option<String>,
    /// Search threads.
    pub threads: Option<u32>,
    /// Largest network batch.
    pub batch: Option<u32>,
    /// Visits per move.
    pub visits: Option<u64>,
    /// Classical engine level, 1 to 10.
    pub level: Option<u8>,
    /// Seconds per move (overrides `visits`).
    pub move_time: Option<f64>,
    /// `search` (MCTS) or `classic` (the classical engine's own move choice).
    pub mode: Option<String>,
    /// ONNX Runtime's execution providers to try in order (`tensorrt`, `cuda`, `cpu`);
    /// when none starts, tract runs the network on the CPU.
    pub providers: Option<Vec<String>>,
    /// The GPU for CUDA and TensorRT.
    pub device: Option<i32>,
    /// Let TensorRT run layers in FP16.
    pub fp16: Option<bool>,
    /// No move's search goes past this many visits, whatever a remote client sets.
    pub max_visits: Option<u64>,
    /// No move's search takes longer than this many seconds, whatever a remote client sets.
    pub max_time: Option<f64>,
}

/// MQTT connection.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Mqtt {
    /// Broker host.
    pub host: Option<String>,
    /// Broker port.
    pub port: Option<u16>,
    /// Topic prefix `tengen/<device_id>/`.
    pub device_id: Option<String>,
    /// User name.
    pub username: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Use TLS.
    pub tls: Option<bool>,
    /// Connect at all (false: serial only).
    pub enabled: Option<bool>,
    /// `3.1.1` or `5`.
    pub protocol: Option<String>,
    /// CA certificate (PEM) that signed the broker's.
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM), for brokers that ask for one.
    pub tls_cert: Option<PathBuf>,
    /// The client certificate's key (PEM).
    pub tls_key: Option<PathBuf>,
    /// Keep-alive in seconds.
    pub keep_alive: Option<u64>,
    /// Announce sensors to Home Assistant under this discovery prefix (empty: off).
    pub home_assistant: Option<String>,
    /// MQTT client id (default: derived from the machine id, unique per device).
    pub client_id: Option<String>,
    /// GTP commands the `gtp` command may run (`[]`: none, `["*"]`: all).
    pub gtp_commands: Option<Vec<String>>,
}

/// The game started when there is none to resume.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GameCfg {
    /// Board size.
    pub size: Option<usize>,
    /// Komi.
    pub komi: Option<f64>,
    /// Rules name.
    pub rules: Option<String>,
    /// Fixed handicap (0 or 2..9).
    pub handicap: Option<usize>,
    /// The engine's side: `black`, `white` or `none`.
    pub engine: Option<String>,
}

/// Analysis published over MQTT.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AnalysisCfg {
    /// On from the start.
    pub enabled: Option<bool>,
    /// With ownership.
    pub ownership: Option<bool>,
    /// Least milliseconds between two messages.
    pub interval_ms: Option<u64>,
    /// Candidates per message.
    pub top: Option<usize>,
    /// Visits after which a position's analysis stops.
    pub max_visits: Option<u64>,
}

/// Serial line to a smart board's controller.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Serial {
    /// Device path.
    pub port: Option<PathBuf>,
    /// Baud rate.
    pub baud: Option<u32>,
}

/// The physical board.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Board {
    /// Snapshots seen unchanged in a row before they count.
    pub stability: Option<u32>,
}

/// Where state lives.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct State {
    /// State directory (journal, archived games, engine caches).
    pub dir: Option<PathBuf>,
}

/// The systemd service's limits, which `tengen config --systemd` prints as a drop-in.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// The unit's MemoryMax=: a size such as "2560M" or "2.5G" (K, M, G, T: powers of 1024).
    pub memory_max: Option<String>,
}

/// A configuration, or a layer of one (profile or file): every key optional.
#[derive(Deserialize, Serialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Engine settings.
    #[serde(default)]
    pub engine: Engine,
    /// MQTT connection.
    #[serde(default)]
    pub mqtt: Mqtt,
    /// Serial line.
    #[serde(default)]
    pub serial: Serial,
    /// The physical board.
    #[serde(default)]
    pub board: Board,
    /// State directory.
    #[serde(default)]
    pub state: State,
    /// The default game.
    #[serde(default)]
    pub game: GameCfg,
    /// Analysis.
    #[serde(default)]
    pub analysis: AnalysisCfg,
    /// The systemd service's limits.
    #[serde(default)]
    pub service: Service,
}

/// Takes `top`'s value where it has one.
fn over<T: Clone>(base: &mut Option<T>, top: &Option<T>) {
    if top.is_some() {
        base.clone_from(top);
    }
}

impl Config {
    /// The defaults every layer starts from.
    pub fn defaults() -> Config {
        Config {
            engine: Engine {
                model: None,
                backend: Some("tract".into()),
                threads: Some(2),
                batch: Some(8),
                visits: Some(400),
                level: Some(10),
                move_time: None,
                mode: None,
                providers: Some(vec!["cpu".into()]),
                device: Some(0),
                fp16: Some(false),
                // The tree's memory grows with visits: 100,000 hold it near 60 MB.
                max_visits: Some(100_000),
                // Under systemd's 30 s watchdog, with room to spare.
                max_time: Some(20.0),
            },
            mqtt: Mqtt {
                host: Some("localhost".into()),
                port: Some(1883),
                device_id: Some("tengen".into()),
                username: None,
                password: None,
                tls: Some(false),
                enabled: Some(true),
                protocol: Some("3.1.1".into()),
                tls_ca: None,
                tls_cert: None,
                tls_key: None,
                keep_alive: Some(15),
                home_assistant: None,
                client_id: None,
                gtp_commands: Some(
                    tengen_device::appliance::DEFAULT_REMOTE_GTP
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                ),
            },
            serial: Serial {
                port: None,
                baud: Some(115_200),
            },
            board: Board { stability: Some(3) },
            state: State {
                dir: Some("/var/lib/tengen".into()),
            },
            game: GameCfg {
                size: Some(19),
                komi: Some(7.5),
                rules: Some("chinese".into()),
                handicap: Some(0),
                engine: Some("white".into()),
            },
            analysis: AnalysisCfg {
                enabled: Some(false),
                ownership: Some(false),
                interval_ms: Some(500),
                top: Some(5),
                max_visits: Some(20_000),
            },
            // None: the unit's own limits (a share of the RAM) apply.
            service: Service::default(),
        }
    }

    /// Reads one layer from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Config> {
        toml::from_str(text).with_context(|| format!("{origin}: not a valid configuration"))
    }

    /// Puts `top`'s keys over this configuration's.
    pub fn merge(&mut self, top: &Config) {
        let (e, t) = (&mut self.engine, &top.engine);
        over(&mut e.model, &t.model);
        over(&mut e.backend, &t.backend);
        over(&mut e.threads, &t.threads);
        over(&mut e.batch, &t.batch);
        over(&mut e.visits, &t.visits);
        over(&mut e.level, &t.level);
        over(&mut e.move_time, &t.move_time);
        over(&mut e.mode, &t.mode);
        over(&mut e.providers, &t.providers);
        over(&mut e.device, &t.device);
        over(&mut e.fp16, &t.fp16);
        over(&mut e.max_visits, &t.max_visits);
        over(&mut e.max_time, &t.max_time);
        let (m, t) = (&mut self.mqtt, &top.mqtt);
        over(&mut m.host, &t.host);
        over(&mut m.port, &t.port);
        over(&mut m.device_id, &t.device_id);
        over(&mut m.username, &t.username);
        over(&mut m.password, &t.password);
        over(&mut m.tls, &t.tls);
        over(&mut m.enabled, &t.enabled);
        over(&mut m.protocol, &t.protocol);
        over(&mut m.tls_ca, &t.tls_ca);
        over(&mut m.tls_cert, &t.tls_cert);
        over(&mut m.tls_key, &t.tls_key);
        over(&mut m.keep_alive, &t.keep_alive);
        over(&mut m.home_assistant, &t.home_assistant);
        over(&mut m.client_id, &t.client_id);
        over(&mut m.gtp_commands, &t.gtp_commands);
        let (g, t) = (&mut self.game, &top.game);
        over(&mut g.size, &t.size);
        over(&mut g.komi, &t.komi);
        over(&mut g.rules, &t.rules);
        over(&mut g.handicap, &t.handicap);
        over(&mut g.engine, &t.engine);
        let (a, t) = (&mut self.analysis, &top.analysis);
        over(&mut a.enabled, &t.enabled);
        over(&mut a.ownership, &t.ownership);
        over(&mut a.interval_ms, &t.interval_ms);
        over(&mut a.top, &t.top);
        over(&mut a.max_visits, &t.max_visits);
        over(&mut self.serial.port, &top.serial.port);
        over(&mut self.serial.baud, &top.serial.baud);
        over(&mut self.board.stability, &top.board.stability);
        over(&mut self.state.dir, &top.state.dir);
        over(&mut self.service.memory_max, &top.service.memory_max);
    }

    /// Checks every value; the error names the key.
    pub fn validate(&self) -> Result<()> {
        let e = &self.engine;
        if let Some(b) = &e.backend {
            if b != "tract" && b != "ort" {
                bail!("engine.backend: {b:?} is not a backend (tract or ort)");
            }
        }
        for p in e.providers.iter().flatten() {
            if !["tensorrt", "cuda", "cpu"].contains(&p.as_str()) {
                bail!("engine.providers: {p:?} is not a provider (tensorrt, cuda or cpu)");
            }
        }
        if e.providers.as_ref().is_some_and(|p| p.is_empty()) {
            bail!("engine.providers: name at least one provider (tensorrt, cuda or cpu)");
        }
        in_range("engine.device", e.device, 0, 64)?;
        in_range("engine.threads", e.threads, 1, 256)?;
        in_range("engine.batch", e.batch, 1, 1024)?;
        in_range("engine.visits", e.visits, 1, 10_000_000)?;
        in_range("engine.level", e.level, 1, 10)?;
        in_range("engine.max_visits", e.max_visits, 2, 10_000_000)?;
        if let Some(t) = e.max_time {
            if !(t.is_finite() && t > 0.0 && t <= 3600.0) {
                bail!("engine.max_time: {t} is out of range (above 0, at most 3600 seconds)");
            }
        }
        if let (Some(t), Some(max)) = (e.move_time, e.max_time) {
            if t > max {
                bail!("engine.move_time: {t} is over engine.max_time ({max}); raise that too");
            }
        }
        if let (Some(v), Some(max)) = (e.visits, e.max_visits) {
            if v > max {
                bail!("engine.visits: {v} is over engine.max_visits ({max}); raise that too");
            }
        }
        in_range("mqtt.port", self.mqtt.port, 1, u16::MAX)?;
        if let Some(id) = &self.mqtt.device_id {
            let ok = !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                bail!("mqtt.device_id: {id:?} must be letters, digits, '-' or '_' (it is a topic level)");
            }
        }
        if self.mqtt.username.is_some() != self.mqtt.password.is_some() {
            bail!("mqtt.password: give both username and password, or neither");
        }
        if let Some(id) = &self.mqtt.client_id {
            if id.is_empty() || id.len() > 64 || id.chars().any(|c| c.is_control()) {
                bail!("mqtt.client_id: {id:?} must be 1 to 64 printable characters");
            }
        }
        for name in self.mqtt.gtp_commands.iter().flatten() {
            if name != "*" && !tengen_protocol::gtp::engine::COMMANDS.contains(&name.as_str()) {
                bail!("mqtt.gtp_commands: {name:?} is not a GTP command Tengen knows");
            }
        }
        if self.mqtt.host.as_deref() == Some("") {
            bail!("mqtt.host: must not be empty");
        }
        if let Some(b) = self.serial.baud {
            const RATES: [u32; 9] = [
                1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400,
            ];
            if !RATES.contains(&b) {
                bail!("serial.baud: {b} is not a standard rate ({RATES:?})");
            }
        }
        in_range("board.stability", self.board.stability, 1, 100)?;
        if let Some(t) = e.move_time {
            if !(t.is_finite() && t > 0.0 && t <= 3600.0) {
                bail!("engine.move_time: {t} is out of range (above 0, at most 3600 seconds)");
            }
        }
        if let Some(m) = &e.mode {
            if m != "search" && m != "classic" {
                bail!("engine.mode: {m:?} is not a mode (search or classic)");
            }
        }
        if let Some(p) = &self.mqtt.protocol {
            if p != "3.1.1" && p != "5" {
                bail!("mqtt.protocol: {p:?} is not a protocol version (3.1.1 or 5)");
            }
        }
        if self.mqtt.tls == Some(true) && self.mqtt.tls_ca.is_none() {
            bail!("mqtt.tls_ca: needed when mqtt.tls is true");
        }
        if self.mqtt.tls_cert.is_some() != self.mqtt.tls_key.is_some() {
            bail!("mqtt.tls_key: give both tls_cert and tls_key, or neither");
        }
        in_range("mqtt.keep_alive", self.mqtt.keep_alive, 5, 3600)?;
        in_range("game.size", self.game.size, 2, 25)?;
        self.game_settings()?;
        let a = &self.analysis;
        in_range("analysis.interval_ms", a.interval_ms, 10, 60_000)?;
        in_range("analysis.top", a.top, 1, 50)?;
        if let Some(m) = &self.service.memory_max {
            crate::unit::memory_mib(m).context("service.memory_max")?;
        }
        Ok(())
    }

    /// The default game, checked whole as the appliance will set it up (komi, rules,
    /// handicap against the size, side); the error names the key.
    pub fn game_settings(&self) -> Result<GameSettings> {
        let g = &self.game;
        let side = g.engine.as_deref().unwrap_or("white");
        let Some(engine) = EngineSide::parse(side) else {
            bail!("game.engine: {side:?} is not a side (black, white or none)");
        };
        let size = g.size.unwrap_or(19);
        let game = GameSettings {
            size: BoardSize::square(size).map_err(|e| anyhow::anyhow!("game.size: {e}"))?,
            komi: g.komi.unwrap_or(7.5),
            rules: g.rules.clone().unwrap_or_else(|| "chinese".into()),
            handicap: g.handicap.unwrap_or(0),
            engine,
        };
        if let Err(e) = game.check() {
            bail!("game.{e}");
        }
        Ok(game)
    }
}

fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    v: Option<T>,
    lo: T,
    hi: T,
) -> Result<()> {
    match v {
        Some(x) if x < lo || x > hi => bail!("{key}: {x} is out of range ({lo} to {hi})"),
        _ => Ok(()),
    }
}

/// The folder of hardware profiles to use.
fn boards_dir(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(d) = given {
        return Some(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("TENGEN_BOARDS") {
        return Some(PathBuf::from(d));
    }
    ["boards", "/usr/share/tengen/boards"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_dir())
}

/// Defaults, then the board profile, then the configuration file; validated.
pub fn load(board: Option<&str>, file: Option<&Path>, boards: Option<&Path>) -> Result<Config> {
    let mut cfg = Config::defaults();
    if let Some(name) = board {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            bail!("--board {name:?}: not a profile name");
        }
        let dir = boards_dir(boards).context("no boards directory found (use --boards-dir)")?;
        let path = dir.join(name).join("board.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("--board {name}: cannot read {}", path.display()))?;
        cfg.merge(&Config::parse(&text, &path.display().to_string())?);
    }
    let file = match file {
        Some(f) => Some(f.to_path_buf()),
        None => Some(PathBuf::from(DEFAULT_CONFIG)).filter(|p| p.exists()),
    };
    if let Some(path) = file {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        cfg.merge(&Config::parse(&text, &path.display().to_string())?);
    }
    cfg.validate()?;
    Ok(cfg)
}

/// Runs `tengen config`: prints the effective configuration as TOML.
pub fn run(a: ConfigArgs) -> Result<()> {
    let cfg = load(
        a.board.as_deref(),
        a.config.as_deref(),
        a.boards_dir.as_deref(),
    )?;
    print!(
        "{}",
        toml::to_string(&cfg).context("writing the configuration")?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_merge_key_by_key() {
        let mut c = Config::defaults();
        let profile = Config::parse("[engine]\nthreads = 4\nbackend = \"ort\"\n", "p").unwrap();
        let file = Config::parse("[engine]\nthreads = 3\n[mqtt]\nport = 1884\n", "f").unwrap();
        c.merge(&profile);
        c.merge(&file);
        assert_eq!(c.engine.threads, Some(3));
        assert_eq!(c.engine.backend.as_deref(), Some("ort"));
        assert_eq!(c.mqtt.port, Some(1884));
        assert_eq!(c.mqtt.host.as_deref(), Some("localhost"));
        c.validate().unwrap();
    }

    #[test]
    fn errors_name_the_key() {
        let err = |text: &str| {
            let mut c = Config::defaults();
            match Config::parse(text, "t") {
                Ok(l) => {
                    c.merge(&l);
                    format!("{:#}", c.validate().unwrap_err())
                }
                Err(e) => format!("{e:#}"),
            }
        };
        assert!(err("[engine]\nthreads = 0\n").starts_with("engine.threads:"));
        assert!(err("[engine]\nbackend = \"gpu\"\n").starts_with("engine.backend:"));
        assert!(err("[engine]\nlevel = 11\n").starts_with("engine.level:"));
        assert!(err("[serial]\nbaud = 1234\n").starts_with("serial.baud:"));
        assert!(err("[mqtt]\ndevice_id = \"a/b\"\n").starts_with("mqtt.device_id:"));
        assert!(err("[board]\nstability = 0\n").starts_with("board.stability:"));
        assert!(err("[mqtt]\nusername = \"u\"\n").starts_with("mqtt.password:"));
        assert!(err("[mqtt]\ngtp_commands = [\"fly\"]\n").starts_with("mqtt.gtp_commands:"));
        assert!(err("[engine]\nmove_time = 30.0\n").starts_with("engine.move_time:"));
        assert!(err("[engine]\nvisits = 200000\n").starts_with("engine.visits:"));
        assert!(err("[engine]\nmax_time = 0.0\n").starts_with("engine.max_time:"));
        assert!(err("[game]\nkomi = 0.3\n").contains("-400 to 400"));
        assert!(err("[game]\nsize = 7\nhandicap = 9\n").starts_with("game.handicap:"));
        assert!(err("[game]\nrules = \"chinse\"\n").starts_with("game.rules:"));
        assert!(err("[game]\nengine = \"both\"\n").starts_with("game.engine:"));
        let unknown = err("[engine]\nthread = 2\n");
        assert!(unknown.contains("thread"), "{unknown}");
        let wrong_type = err("[mqtt]\nport = \"x\"\n");
        assert!(wrong_type.contains("port"), "{wrong_type}");
    }

    #[test]
    fn every_shipped_profile_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../boards");
        let names = [
            "jetson-orin-nano",
            "jetson-xavier-nx",
            "jetson-nano",
            "raspberry-pi-5",
            "x86-kiosk",
        ];
        for name in names {
            let c = load(Some(name), None, Some(&dir)).unwrap();
            assert!(
                c.engine.threads.is_some() && c.serial.port.is_some(),
                "{name}"
            );
        }
        assert!(load(Some("../etc"), None, Some(&dir)).is_err());
        assert!(load(Some("no-such-board"), None, Some(&dir)).is_err());
    }
}
