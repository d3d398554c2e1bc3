//! The appliance's configuration: one TOML file over a hardware profile
//! (`boards/<name>/board.toml`), each a [`Layer`] of optional keys, merged key by key
//! over the defaults into a [`Config`] and validated, every error naming its key.
//! `tengen config` prints the result.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use tengen_device::appliance::{Settings, DEFAULT_REMOTE_GTP};
use tengen_device::payload::EngineSide;
use tengen_device::GameSettings;
use tengen_rules::BoardSize;

use crate::backend::BackendKind;
use crate::bundled;

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
    /// Folder of hardware profiles (default: $TENGEN_BOARDS, ./boards,
    /// /usr/share/tengen/boards, else the profiles built into the binary).
    #[arg(long)]
    pub boards_dir: Option<PathBuf>,
}

/// Declares a section of the configuration from one table of keys: the merged section
/// (a key with a default has its plain type; an `Option` key without one stays optional,
/// as its absence means something), the layer a file or profile gives (every key
/// optional), the defaults and the merge.
macro_rules! section {
    ($(#[$doc:meta])* $name:ident, $layer:ident {
        $($(#[$key_doc:meta])* $key:ident: $ty:ty $(= $default:expr)?,)*
    }) => {
        $(#[$doc])*
        #[derive(Serialize, Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[$key_doc])* pub $key: $ty,)*
        }

        /// A layer of the section of the same name: every key optional.
        #[derive(Deserialize, Debug, Default, Clone, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct $layer {
            $($(#[$key_doc])* pub $key: layer_type!($ty $(, $default)?),)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($key: default_value!($($default)?),)*
                }
            }
        }

        impl $name {
            /// Takes each key `top` gives.
            fn merge(&mut self, top: &$layer) {
                $(merge_key!($($default)?)(&mut self.$key, &top.$key);)*
            }
        }
    };
}

/// A key's type in a layer: optional, unless it is optional already.
macro_rules! layer_type {
    ($ty:ty) => { $ty };
    ($ty:ty, $default:expr) => { Option<$ty> };
}

/// A key's default: the one given, or absent.
macro_rules! default_value {
    () => {
        None
    };
    ($default:expr) => {
        $default
    };
}

/// How a layer's key goes over the merged one.
macro_rules! merge_key {
    () => {
        over_optional
    };
    ($default:expr) => {
        over
    };
}

/// Takes `top`'s value where it has one.
fn over<T: Clone>(base: &mut T, top: &Option<T>) {
    if let Some(v) = top {
        base.clone_from(v);
    }
}

/// Takes `top`'s value where it has one, for a key that may stay absent.
fn over_optional<T: Clone>(base: &mut Option<T>, top: &Option<T>) {
    if top.is_some() {
        base.clone_from(top);
    }
}

section! {
    /// Engine settings.
    Engine, EngineLayer {
        /// Network file, `bundled` (the network built into the binary; the default when
        /// there is one and `mode` is not `classic`) or `none` (the classical engine).
        model: Option<PathBuf>,
        /// `tract`, `ort` or `native` (default: `native` on x86-64 with AVX2 and FMA, else
        /// `tract`).
        backend: String = BackendKind::cpu_default().name().into(),
        /// Search threads.
        threads: u32 = 2,
        /// Largest network batch.
        batch: u32 = 8,
        /// Visits per move.
        visits: u64 = 400,
        /// Classical engine level, 1 to 10.
        level: u8 = 10,
        /// The search's strength: a rank from `25k` to `1k` or `1d` to `5d`, or `max`
        /// (the default).
        strength: Option<String>,
        /// Seconds per move (overrides `visits`).
        move_time: Option<f64>,
        /// `search` (MCTS) or `classic` (the classical engine's own move choice); by
        /// default `search` with a model, `classic` without.
        mode: Option<String>,
        /// ONNX Runtime's execution providers to try in order (`tensorrt`, `cuda`, `cpu`);
        /// when none starts, tract runs the network on the CPU.
        providers: Vec<String> = vec!["cpu".into()],
        /// The GPU for CUDA and TensorRT.
        device: i32 = 0,
        /// Let TensorRT run layers in FP16.
        fp16: bool = false,
        /// Network precision: `auto` (int16 on the native backend where the CPU has
        /// AVX-512 VNNI, fp32 elsewhere), `fp32`, `int8` (ONNX Runtime, calibrated at
        /// start-up) or `int16` (the native backend, on CPUs with AVX-512 VNNI).
        precision: String = "auto".into(),
        /// No move's search goes past this many visits, whatever a remote client sets
        /// (the tree's memory grows with visits: 100,000 hold it near 60 MB).
        max_visits: u64 = 100_000,
        /// No move's search takes longer than this many seconds, whatever a remote client
        /// sets (under systemd's 30 s watchdog, with room to spare).
        max_time: f64 = 20.0,
    }
}

section! {
    /// MQTT connection.
    Mqtt, MqttLayer {
        /// Broker host.
        host: String = "localhost".into(),
        /// Broker port.
        port: u16 = 1883,
        /// Topic prefix `tengen/<device_id>/`.
        device_id: String = "tengen".into(),
        /// User name.
        username: Option<String>,
        /// Password.
        password: Option<String>,
        /// Use TLS.
        tls: bool = false,
        /// Connect at all (false: serial only).
        enabled: bool = true,
        /// `5` (it tells the broker the largest message the device takes, so a bigger
        /// one is dropped at the broker and nothing behind it is lost) or `3.1.1` (for
        /// old brokers).
        protocol: String = "5".into(),
        /// CA certificate (PEM) that signed the broker's.
        tls_ca: Option<PathBuf>,
        /// Client certificate (PEM), for brokers that ask for one.
        tls_cert: Option<PathBuf>,
        /// The client certificate's key (PEM).
        tls_key: Option<PathBuf>,
        /// Keep-alive in seconds.
        keep_alive: u64 = 15,
        /// Announce sensors to Home Assistant under this discovery prefix (empty: off).
        home_assistant: Option<String>,
        /// MQTT client id (default: derived from the machine id, unique per device).
        client_id: Option<String>,
        /// GTP commands the `gtp` command may run (`[]`: none, `["*"]`: all).
        gtp_commands: Vec<String> = DEFAULT_REMOTE_GTP.iter().map(|s| s.to_string()).collect(),
    }
}

section! {
    /// The game started when there is none to resume (defaults: the appliance's).
    GameCfg, GameLayer {
        /// Board size.
        size: usize = GameSettings::default().size.width(),
        /// Komi.
        komi: f64 = GameSettings::default().komi,
        /// Rules name.
        rules: String = GameSettings::default().rules,
        /// Fixed handicap (0 or 2..9).
        handicap: usize = GameSettings::default().handicap,
        /// The engine's side: `black`, `white` or `none`.
        engine: String = GameSettings::default().engine.name().into(),
    }
}

section! {
    /// Analysis published over MQTT (defaults: the appliance's).
    AnalysisCfg, AnalysisLayer {
        /// On from the start.
        enabled: bool = Settings::default().analysis,
        /// With ownership.
        ownership: bool = Settings::default().ownership,
        /// Least milliseconds between two messages.
        interval_ms: u64 = Settings::default().analysis_interval.as_millis() as u64,
        /// Candidates per message.
        top: usize = Settings::default().analysis_top,
        /// Visits after which a position's analysis stops.
        max_visits: u64 = Settings::default().analysis_max_visits,
        /// Done by the cluster's pool (`[cluster] broker`/`group`), not the engine.
        remote: bool = Settings::default().remote_analysis,
        /// With `remote`: seconds without an answer from the pool after which the
        /// engine analyses until the pool answers again (0: never).
        fallback_s: u64 = 10,
    }
}

section! {
    /// Club-scale analysis: serve the analysis jobs of an MQTT 5 broker's pool
    /// (docs/cluster.md).
    Cluster, ClusterLayer {
        /// Serve the pool's jobs beside the appliance's own game.
        worker: bool = false,
        /// The pool's broker, `mqtt://host:port` (default: the `[mqtt]` broker).
        broker: Option<String>,
        /// The shared-subscription group.
        group: String = "tengen".into(),
        /// Jobs held at once (the connection's receive maximum).
        slots: u16 = 2,
        /// The pool's shared secret (16 bytes or more): jobs and answers are sealed
        /// with it, and those without its seal dropped.
        secret: Option<String>,
    }
}

section! {
    /// Serial line to a smart board's controller.
    Serial, SerialLayer {
        /// Device path.
        port: Option<PathBuf>,
        /// Baud rate.
        baud: u32 = 115_200,
    }
}

section! {
    /// The physical board.
    Board, BoardLayer {
        /// Snapshots seen unchanged in a row before they count (default: the appliance's).
        stability: u32 = Settings::default().window as u32,
    }
}

section! {
    /// A camera over a plain board: the board is read from its frames and fed to the
    /// same reconciler as MQTT snapshots. Off unless `source` is set.
    Camera, CameraLayer {
        /// `/dev/videoN` (V4L2), an `http://` MJPEG stream, `csi` or `gst:PIPELINE` (with the
        /// `gstreamer` feature), a folder of frames or an image.
        source: Option<String>,
        /// Frame width asked of a V4L2 camera (it takes the closest it offers).
        width: u32 = 1280,
        /// Frame height asked of a V4L2 camera.
        height: u32 = 720,
        /// Frames per second asked of a V4L2 camera.
        fps: u32 = 15,
        /// Pixel format of a V4L2 camera: `auto`, `mjpeg` or `yuyv`.
        format: String = "auto".into(),
        /// The board's four outermost intersections in frame pixels (top-left, top-right,
        /// bottom-right, bottom-left as seen), overriding automatic finding.
        corners: Option<Vec<[f64; 2]>>,
        /// Degrees (0, 90, 180, 270) the board as seen is turned clockwise to give the
        /// game's board: which edge of the picture is the board's top row.
        rotation: u32 = 0,
        /// Milliseconds a point must be still before a change is reported.
        settle_ms: u64 = tengen_vision::DEFAULT_SETTLE_MS,
        /// Milliseconds without a frame before the source is reported stalled.
        stall_ms: u64 = 5000,
        /// Frames per second a folder of frames stands for.
        folder_fps: f64 = 10.0,
        /// Publish a small JPEG of the board seen from above on `camera/thumbnail`.
        thumbnail: bool = false,
        /// The thumbnail's side in pixels.
        thumbnail_px: u32 = 240,
        /// The largest encoded frame read (a file, an MJPEG part), in bytes.
        max_frame_bytes: u64 = tengen_vision::FrameLimits::default().bytes,
        /// The most pixels a frame may have; checked before it is decoded.
        max_frame_pixels: u64 = tengen_vision::FrameLimits::default().pixels,
    }
}

section! {
    /// Where state lives.
    State, StateLayer {
        /// State directory (journal, archived games, engine caches).
        dir: PathBuf = "/var/lib/tengen".into(),
    }
}

section! {
    /// The kiosk panel: a web page and JSON API served by `tengen serve`.
    Web, WebLayer {
        /// Serve the panel.
        enabled: bool = false,
        /// Address to listen on: loopback by default; `0.0.0.0` or `::` for the network.
        bind: String = "127.0.0.1".into(),
        /// Port (0: any free one, logged).
        port: u16 = 8080,
        /// Bearer token the controls need (8 to 256 visible characters); without it the
        /// panel is read-only.
        token: Option<String>,
        /// Show a 6-digit pairing PIN on the kiosk (`?kiosk=1` on the device itself); a
        /// browser that enters it gets a session token for the controls.
        pin: bool = false,
        /// Host names the panel answers to besides IP addresses, `localhost` and the
        /// device's own name (and `<name>.local`); requests for others are refused.
        hosts: Vec<String> = Vec::new(),
    }
}

impl Web {
    /// Checks the web keys; the error names the key.
    fn validate(&self) -> Result<()> {
        self.bind
            .parse::<std::net::IpAddr>()
            .map_err(|_| anyhow::anyhow!("web.bind: {:?} is not an IP address", self.bind))?;
        if let Some(t) = &self.token {
            if !(8..=256).contains(&t.len()) || !t.bytes().all(|b| b.is_ascii_graphic()) {
                bail!("web.token: give 8 to 256 visible ASCII characters (no spaces)");
            }
        }
        Ok(())
    }
}

section! {
    /// The systemd service's limits, which `tengen config --systemd` prints as a drop-in.
    Service, ServiceLayer {
        /// The unit's MemoryMax=: a size such as "2560M" or "2.5G" (K, M, G, T: powers of
        /// 1024). None: the unit's own limits (a share of the RAM) apply.
        memory_max: Option<String>,
    }
}

impl Camera {
    /// Checks the camera keys; the error names the key.
    fn validate(&self) -> Result<()> {
        if let Some(src) = &self.source {
            tengen_vision::SourceSpec::parse(src)
                .map_err(|e| anyhow::anyhow!("camera.source: {e}"))?;
        }
        in_range("camera.width", self.width, 16, 8192)?;
        in_range("camera.height", self.height, 16, 8192)?;
        in_range("camera.fps", self.fps, 1, 240)?;
        self.format
            .parse::<tengen_vision::source::v4l::FormatChoice>()
            .map_err(|e| anyhow::anyhow!("camera.format: {e}"))?;
        if let Some(c) = &self.corners {
            if c.len() != 4 || c.iter().flatten().any(|v| !v.is_finite()) {
                bail!("camera.corners: give four [x, y] points (top-left, top-right, bottom-right, bottom-left)");
            }
        }
        if ![0, 90, 180, 270].contains(&self.rotation) {
            bail!(
                "camera.rotation: {} is not 0, 90, 180 or 270",
                self.rotation
            );
        }
        in_range("camera.settle_ms", self.settle_ms, 0, 60_000)?;
        in_range("camera.stall_ms", self.stall_ms, 100, 600_000)?;
        in_range("camera.thumbnail_px", self.thumbnail_px, 16, 1024)?;
        let f = self.folder_fps;
        if !(f.is_finite() && f > 0.0 && f <= 1000.0) {
            bail!("camera.folder_fps: {f} is out of range (above 0, at most 1000)");
        }
        Ok(())
    }
}

/// The merged configuration: defaults, then each layer's keys over them.
#[derive(Serialize, Debug, Default, Clone, PartialEq)]
pub struct Config {
    /// Engine settings.
    pub engine: Engine,
    /// MQTT connection.
    pub mqtt: Mqtt,
    /// Serial line.
    pub serial: Serial,
    /// The physical board.
    pub board: Board,
    /// A camera over the board.
    pub camera: Camera,
    /// State directory.
    pub state: State,
    /// The default game.
    pub game: GameCfg,
    /// Analysis.
    pub analysis: AnalysisCfg,
    /// Club-scale analysis.
    pub cluster: Cluster,
    /// The systemd service's limits.
    pub service: Service,
    /// The kiosk panel.
    pub web: Web,
}

/// One layer of the configuration (a board profile or a file): every key optional.
#[derive(Deserialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Engine settings.
    #[serde(default)]
    pub engine: EngineLayer,
    /// MQTT connection.
    #[serde(default)]
    pub mqtt: MqttLayer,
    /// Serial line.
    #[serde(default)]
    pub serial: SerialLayer,
    /// The physical board.
    #[serde(default)]
    pub board: BoardLayer,
    /// A camera over the board.
    #[serde(default)]
    pub camera: CameraLayer,
    /// State directory.
    #[serde(default)]
    pub state: StateLayer,
    /// The default game.
    #[serde(default)]
    pub game: GameLayer,
    /// Analysis.
    #[serde(default)]
    pub analysis: AnalysisLayer,
    /// Club-scale analysis.
    #[serde(default)]
    pub cluster: ClusterLayer,
    /// The systemd service's limits.
    #[serde(default)]
    pub service: ServiceLayer,
    /// The kiosk panel.
    #[serde(default)]
    pub web: WebLayer,
}

impl Layer {
    /// Reads one layer from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Layer> {
        toml::from_str(text).with_context(|| format!("{origin}: not a valid configuration"))
    }
}

impl Config {
    /// Puts `top`'s keys over this configuration's.
    pub fn merge(&mut self, top: &Layer) {
        self.engine.merge(&top.engine);
        self.mqtt.merge(&top.mqtt);
        self.serial.merge(&top.serial);
        self.board.merge(&top.board);
        self.camera.merge(&top.camera);
        self.state.merge(&top.state);
        self.game.merge(&top.game);
        self.analysis.merge(&top.analysis);
        self.cluster.merge(&top.cluster);
        self.service.merge(&top.service);
        self.web.merge(&top.web);
    }

    /// Checks every value; the error names the key.
    pub fn validate(&self) -> Result<()> {
        let e = &self.engine;
        if let Err(why) = e.backend.parse::<BackendKind>() {
            bail!("engine.backend: {why}");
        }
        for p in &e.providers {
            if !["tensorrt", "cuda", "cpu"].contains(&p.as_str()) {
                bail!("engine.providers: {p:?} is not a provider (tensorrt, cuda or cpu)");
            }
        }
        if e.providers.is_empty() {
            bail!("engine.providers: name at least one provider (tensorrt, cuda or cpu)");
        }
        if let Err(why) = e.precision.parse::<tengen_nn::quant::Precision>() {
            bail!("engine.precision: {why}");
        }
        in_range("engine.device", e.device, 0, 64)?;
        in_range("engine.threads", e.threads, 1, 256)?;
        in_range("engine.batch", e.batch, 1, 1024)?;
        in_range("engine.visits", e.visits, 1, 10_000_000)?;
        in_range("engine.level", e.level, 1, 10)?;
        if let Some(s) = &e.strength {
            s.parse::<tengen_search::Strength>()
                .with_context(|| format!("engine.strength: {s:?}"))?;
        }
        in_range("engine.max_visits", e.max_visits, 2, 10_000_000)?;
        let max = e.max_time;
        if !(max.is_finite() && max > 0.0 && max <= 3600.0) {
            bail!("engine.max_time: {max} is out of range (above 0, at most 3600 seconds)");
        }
        if let Some(t) = e.move_time {
            if t > max {
                bail!("engine.move_time: {t} is over engine.max_time ({max}); raise that too");
            }
        }
        if e.visits > e.max_visits {
            bail!(
                "engine.visits: {} is over engine.max_visits ({}); raise that too",
                e.visits,
                e.max_visits
            );
        }
        let m = &self.mqtt;
        in_range("mqtt.port", m.port, 1, u16::MAX)?;
        let id = &m.device_id;
        let ok = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            bail!(
                "mqtt.device_id: {id:?} must be letters, digits, '-' or '_' (it is a topic level)"
            );
        }
        if m.username.is_some() != m.password.is_some() {
            bail!("mqtt.password: give both username and password, or neither");
        }
        if let Some(id) = &m.client_id {
            if id.is_empty() || id.len() > 64 || id.chars().any(|c| c.is_control()) {
                bail!("mqtt.client_id: {id:?} must be 1 to 64 printable characters");
            }
        }
        for name in &m.gtp_commands {
            let known = tengen_protocol::gtp::COMMANDS
                .iter()
                .chain(tengen_protocol::gtp::UNLISTED)
                .any(|c| c == name);
            if name != "*" && !known {
                bail!("mqtt.gtp_commands: {name:?} is not a GTP command Tengen knows");
            }
        }
        if m.host.is_empty() {
            bail!("mqtt.host: must not be empty");
        }
        const RATES: [u32; 9] = [
            1200, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400,
        ];
        if !RATES.contains(&self.serial.baud) {
            bail!(
                "serial.baud: {} is not a standard rate ({RATES:?})",
                self.serial.baud
            );
        }
        in_range("board.stability", self.board.stability, 1, 100)?;
        self.camera.validate()?;
        self.web.validate()?;
        let c = &self.cluster;
        if let Some(b) = &c.broker {
            let b = b
                .parse::<tengen_device::cluster::Broker>()
                .map_err(|e| anyhow::anyhow!("cluster.broker: {e}"))?;
            if b.wants_tls() && self.mqtt.tls_ca.is_none() {
                bail!("cluster.broker: {b} needs mqtt.tls_ca, the CA that signed the broker's");
            }
        }
        in_range("cluster.slots", c.slots, 1, 1024)?;
        if let Some(secret) = &c.secret {
            tengen_device::cluster::seal::Seal::new(secret.as_bytes())
                .map_err(|e| anyhow::anyhow!("cluster.secret: {e}"))?;
        }
        if !tengen_device::cluster::job::is_topic_level(&c.group) {
            bail!(
                "cluster.group: {:?} is not a group name (no /, + or #)",
                c.group
            );
        }
        if let Some(t) = e.move_time {
            if !(t.is_finite() && t > 0.0 && t <= 3600.0) {
                bail!("engine.move_time: {t} is out of range (above 0, at most 3600 seconds)");
            }
        }
        if let Some(mode) = &e.mode {
            if mode != "search" && mode != "classic" {
                bail!("engine.mode: {mode:?} is not a mode (search or classic)");
            }
        }
        if m.protocol != "3.1.1" && m.protocol != "5" {
            bail!(
                "mqtt.protocol: {:?} is not a protocol version (3.1.1 or 5)",
                m.protocol
            );
        }
        if m.tls && m.tls_ca.is_none() {
            bail!("mqtt.tls_ca: needed when mqtt.tls is true");
        }
        if m.tls_cert.is_some() != m.tls_key.is_some() {
            bail!("mqtt.tls_key: give both tls_cert and tls_key, or neither");
        }
        in_range("mqtt.keep_alive", m.keep_alive, 5, 3600)?;
        in_range("game.size", self.game.size, 2, 25)?;
        self.game_settings()?;
        let a = &self.analysis;
        in_range("analysis.interval_ms", a.interval_ms, 10, 60_000)?;
        in_range("analysis.top", a.top, 1, 50)?;
        in_range("analysis.fallback_s", a.fallback_s, 0, 86_400)?;
        if let Some(m) = &self.service.memory_max {
            memory_mib(m).context("service.memory_max")?;
        }
        Ok(())
    }

    /// The default game, checked whole as the appliance will set it up (komi, rules,
    /// handicap against the size, side); the error names the key.
    pub fn game_settings(&self) -> Result<GameSettings> {
        let g = &self.game;
        let Some(engine) = EngineSide::parse(&g.engine) else {
            bail!(
                "game.engine: {:?} is not a side (black, white or none)",
                g.engine
            );
        };
        let game = GameSettings {
            size: BoardSize::square(g.size).map_err(|e| anyhow::anyhow!("game.size: {e}"))?,
            komi: g.komi,
            rules: g.rules.clone(),
            handicap: g.handicap,
            engine,
        };
        if let Err(e) = game.check() {
            bail!("game.{e}");
        }
        Ok(game)
    }
}

/// Checks that `key`'s value `x` lies in `lo..=hi`.
fn in_range<T: PartialOrd + std::fmt::Display>(key: &str, x: T, lo: T, hi: T) -> Result<()> {
    if x < lo || x > hi {
        bail!("{key}: {x} is out of range ({lo} to {hi})");
    }
    Ok(())
}

/// The least limit accepted: a network, its plans and a search tree need more than this,
/// and a smaller number is more likely a unit mistaken (MiB written as bytes).
const LEAST_MIB: u64 = 256;

/// A size in systemd's notation ("2560M", "2.5G", "4G"; K, M, G, T are powers of 1024,
/// no suffix is bytes), in whole MiB.
pub fn memory_mib(text: &str) -> Result<u64> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        'T' => 40,
        _ => bail!("{text:?}: the unit must be K, M, G or T"),
    };
    let numeric = !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        && number.matches('.').count() <= 1;
    let value: f64 = match number.parse() {
        Ok(v) if numeric => v,
        _ => bail!("{text:?} is not a size (a number, then K, M, G or T)"),
    };
    let mib = (value * (1u64 << shift) as f64 / (1u64 << 20) as f64).floor() as u64;
    if !(LEAST_MIB..=(1 << 30)).contains(&mib) {
        bail!("{text:?} is out of range ({LEAST_MIB}M to 1024T)");
    }
    Ok(mib)
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
    let mut cfg = Config::default();
    if let Some(name) = board {
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            bail!("--board {name:?}: not a profile name");
        }
        match boards_dir(boards) {
            Some(dir) => {
                let path = dir.join(name).join("board.toml");
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("--board {name}: cannot read {}", path.display()))?;
                cfg.merge(&Layer::parse(&text, &path.display().to_string())?);
            }
            // No boards directory: the profiles compiled into the binary.
            None => {
                let text = bundled::board(name).with_context(|| {
                    format!("--board {name}: no such built-in profile (no boards directory found)")
                })?;
                cfg.merge(&Layer::parse(text, &format!("built-in profile {name}"))?);
            }
        }
    }
    let file = match file {
        Some(f) => Some(f.to_path_buf()),
        None => Some(PathBuf::from(DEFAULT_CONFIG)).filter(|p| p.exists()),
    };
    if let Some(path) = file {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        cfg.merge(&Layer::parse(&text, &path.display().to_string())?);
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
        let mut c = Config::default();
        let profile = Layer::parse("[engine]\nthreads = 4\nbackend = \"ort\"\n", "p").unwrap();
        let file = Layer::parse("[engine]\nthreads = 3\n[mqtt]\nport = 1884\n", "f").unwrap();
        c.merge(&profile);
        c.merge(&file);
        assert_eq!(c.engine.threads, 3);
        assert_eq!(c.engine.backend, "ort");
        assert_eq!(c.mqtt.port, 1884);
        assert_eq!(c.mqtt.host, "localhost");
        assert_eq!(c.engine.model, None);
        c.validate().unwrap();
    }

    #[test]
    fn errors_name_the_key() {
        let err = |text: &str| {
            let mut c = Config::default();
            match Layer::parse(text, "t") {
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
        assert!(err("[engine]\nprecision = \"int4\"\n").starts_with("engine.precision:"));
        assert!(err("[engine]\nstrength = \"26k\"\n").starts_with("engine.strength:"));
        assert!(err("[serial]\nbaud = 1234\n").starts_with("serial.baud:"));
        assert!(err("[mqtt]\ndevice_id = \"a/b\"\n").starts_with("mqtt.device_id:"));
        assert!(err("[cluster]\ngroup = \"a/b\"\n").starts_with("cluster.group:"));
        assert!(err("[cluster]\nslots = 0\n").starts_with("cluster.slots:"));
        assert!(err("[cluster]\nsecret = \"short\"\n").starts_with("cluster.secret:"));
        assert!(err("[cluster]\nbroker = \"http://x\"\n").starts_with("cluster.broker:"));
        assert!(err("[cluster]\nbroker = \"mqtts://u:p@club\"\n").contains("mqtt.tls_ca"));
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
        assert!(err("[web]\nbind = \"kiosk\"\n").starts_with("web.bind:"));
        assert!(err("[web]\ntoken = \"short\"\n").starts_with("web.token:"));
        assert!(err("[web]\ntoken = \"has a space\"\n").starts_with("web.token:"));
        let unknown = err("[engine]\nthread = 2\n");
        assert!(unknown.contains("thread"), "{unknown}");
        let wrong_type = err("[mqtt]\nport = \"x\"\n");
        assert!(wrong_type.contains("port"), "{wrong_type}");
    }

    #[test]
    fn sizes_read_as_systemd_reads_them() {
        assert_eq!(memory_mib("2560M").unwrap(), 2560);
        assert_eq!(memory_mib("2.5G").unwrap(), 2560);
        assert_eq!(memory_mib("4g").unwrap(), 4096);
        assert_eq!(memory_mib("1T").unwrap(), 1 << 20);
        assert_eq!(memory_mib("524288K").unwrap(), 512);
        assert_eq!(memory_mib("1073741824").unwrap(), 1024);
        for bad in [
            "", "G", "2.5.1G", "-1G", "2X", "1e3M", "75%", "2560", "100M",
        ] {
            assert!(memory_mib(bad).is_err(), "{bad:?} was accepted");
        }
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
            // Each profile sets its own thread count and serial port.
            let path = dir.join(name).join("board.toml");
            let profile = Layer::parse(&std::fs::read_to_string(path).unwrap(), name).unwrap();
            assert_eq!(profile.engine.threads, Some(c.engine.threads), "{name}");
            assert!(c.serial.port.is_some(), "{name}");
        }
        assert!(load(Some("../etc"), None, Some(&dir)).is_err());
        assert!(load(Some("no-such-board"), None, Some(&dir)).is_err());
    }

    #[test]
    fn without_a_boards_directory_the_built_in_profiles_load() {
        // What `load` merges when no boards directory is found (tests/cli_config.rs runs
        // that from an empty directory).
        for (name, text) in bundled::BOARDS {
            let mut c = Config::default();
            c.merge(&Layer::parse(text, name).unwrap());
            c.validate().unwrap();
            assert!(c.serial.port.is_some(), "{name}");
        }
    }
}
