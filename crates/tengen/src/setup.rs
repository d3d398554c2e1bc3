//! The engine set-up, one for every subcommand that runs the engine in-process (`gtp`,
//! `analysis`, `serve`, `bench search`): what judges positions, where moves come from,
//! the network backend, threads and limits, as one typed spec built from the command
//! line or the configuration; and the evaluators and GTP engine built from it.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use tengen_classic::Classic;
use tengen_nn::backend::Backend;
use tengen_nn::eval::{Evaluator as NnEvaluator, EvaluatorConfig};
use tengen_protocol::gtp::engine::EvaluatorSource;
use tengen_protocol::gtp::{Decider, Engine, EngineConfig};
use tengen_rules::Rules;
use tengen_search::{SearchParams, Strength};

use crate::backend::{BackendGraph, BackendKind, OrtArgs};
use crate::classic_eval::ClassicArgs;
use crate::config::Config;
use crate::evaluators::{self, NetworkSpec, Settled};
use crate::network::ModelSource;

/// What judges positions for the search and for analysis.
#[derive(Clone, Debug)]
pub enum Evaluation {
    /// A network.
    Network(NetworkSpec),
    /// The classical engine's judgement, blended with playouts.
    Classic,
}

impl Evaluation {
    /// A network's evaluation, or the classical engine's without a model.
    pub fn new(
        model: Option<ModelSource>,
        backend: BackendKind,
        ort: &OrtArgs,
        cache: Option<&Path>,
    ) -> Evaluation {
        match model {
            Some(m) => Evaluation::Network(NetworkSpec {
                model: m,
                backend,
                ort: ort.clone(),
                cache: cache.map(Path::to_path_buf),
            }),
            None => Evaluation::Classic,
        }
    }
}

/// Where `genmove`'s moves come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MoveSource {
    /// A search (MCTS) over what judges positions.
    Search,
    /// The classical engine's own move choice.
    Classic,
}

impl MoveSource {
    /// Without a choice: a search over a network, the classical engine without one.
    pub fn default_for(evaluation: &Evaluation) -> MoveSource {
        match evaluation {
            Evaluation::Network(_) => MoveSource::Search,
            Evaluation::Classic => MoveSource::Classic,
        }
    }
}

impl FromStr for MoveSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "search" => Ok(MoveSource::Search),
            "classic" => Ok(MoveSource::Classic),
            other => Err(format!("{other:?} is not a mode (search or classic)")),
        }
    }
}

/// How far a move's search goes.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveLimits {
    /// Visits per move when the clock does not decide (None: only the clock limits).
    pub visits: Option<u64>,
    /// Seconds per move when no clock is set; overrides `visits`.
    pub move_time: Option<f64>,
    /// No move's search goes past this many visits, whatever a client sets.
    pub visits_cap: Option<u64>,
    /// No move's search takes longer than this many seconds, whatever the clocks say.
    pub time_cap: Option<f64>,
}

/// An engine, fully specified.
#[derive(Clone, Debug)]
pub struct EngineSpec {
    /// What judges positions.
    pub evaluation: Evaluation,
    /// Where moves come from.
    pub moves: MoveSource,
    /// The classical engine: its level (for its moves and its stone status judgement)
    /// and, when it judges positions, its playouts.
    pub classic: ClassicArgs,
    /// Seed of the classical engine's move choice.
    pub seed: u64,
    /// Search threads (the backend gets as many cores).
    pub threads: usize,
    /// How network requests are batched.
    pub batching: EvaluatorConfig,
    /// How far a move's search goes.
    pub limits: MoveLimits,
    /// Rules of a new game.
    pub rules: Rules,
    /// Resign below this winrate; `None` never resigns.
    pub resign_below: Option<f64>,
    /// How strongly the search plays.
    pub strength: Strength,
}

impl EngineSpec {
    /// The defaults over `evaluation`: moves by [`MoveSource::default_for`], the full
    /// classical engine seeded from the clock, one thread, the GTP engine's limits,
    /// Chinese rules, resigning as the GTP engine does.
    pub fn new(evaluation: Evaluation) -> EngineSpec {
        let engine = EngineConfig::default();
        EngineSpec {
            moves: MoveSource::default_for(&evaluation),
            evaluation,
            classic: ClassicArgs::default(),
            seed: clock_seed(),
            threads: 1,
            batching: EvaluatorConfig {
                max_batch: 1,
                ..EvaluatorConfig::default()
            },
            limits: MoveLimits {
                visits: engine.visits,
                move_time: engine.move_time,
                visits_cap: engine.visits_cap,
                time_cap: engine.time_cap,
            },
            rules: engine.rules,
            resign_below: engine.resign_below,
            strength: engine.strength,
        }
    }

    /// `threads` search threads, each of which may wait on the network at once.
    pub fn with_threads(mut self, threads: usize) -> EngineSpec {
        self.threads = threads.max(1);
        self.batching.max_batch = self.threads;
        self
    }

    /// The appliance's engine from its configuration; the network's graphs are cached
    /// under `state_dir`.
    pub fn from_config(cfg: &Config, state_dir: &Path) -> Result<EngineSpec> {
        let e = &cfg.engine;
        let backend: BackendKind = e
            .backend
            .parse()
            .map_err(anyhow::Error::msg)
            .context("engine.backend")?;
        let cache = state_dir.join("cache");
        let ort = OrtArgs::new(
            e.providers.clone(),
            e.device,
            e.fp16,
            Some(cache.join("tensorrt")),
            e.precision
                .parse()
                .map_err(anyhow::Error::msg)
                .context("engine.precision")?,
        );
        let classic = e.mode.as_deref() == Some("classic");
        let model = ModelSource::choose(e.model.as_deref(), classic).context("engine.model")?;
        let evaluation = Evaluation::new(model, backend, &ort, Some(&cache));
        let mut spec = EngineSpec::new(evaluation).with_threads(e.threads as usize);
        if let Some(mode) = &e.mode {
            spec.moves = mode
                .parse()
                .map_err(anyhow::Error::msg)
                .context("engine.mode")?;
        }
        spec.classic.level = e.level;
        if let Some(s) = &e.strength {
            spec.strength = s.parse().context("engine.strength")?;
        }
        spec.batching.max_batch = (e.batch as usize).max(1);
        spec.limits = MoveLimits {
            visits: Some(e.visits),
            move_time: e.move_time,
            visits_cap: Some(e.max_visits),
            time_cap: Some(e.max_time),
        };
        Ok(spec)
    }

    /// The search parameters: the defaults on this many threads.
    pub fn search_params(&self) -> SearchParams {
        SearchParams {
            threads: self.threads,
            ..SearchParams::default()
        }
    }

    /// The analysis engine's search parameters: the defaults on this many threads, looking
    /// at more moves than a game's search (as KataGo's analysis engine does).
    pub fn analysis_params(&self) -> SearchParams {
        SearchParams {
            wide_root_noise: 0.04,
            ..self.search_params()
        }
    }

    /// Evaluators per board size, and the backend a cached network settled on.
    pub fn evaluator_source(&self) -> (EvaluatorSource, Settled) {
        match &self.evaluation {
            Evaluation::Network(n) => {
                evaluators::network_source(n.clone(), self.threads, self.batching.clone())
            }
            Evaluation::Classic => (evaluators::classic_source(self.classic), Settled::default()),
        }
    }

    /// The network evaluator this spec describes over a graph already prepared for its
    /// backend (a benchmark loads and prepares it once for many set-ups), and its backend.
    pub(crate) fn nn_evaluator(
        &self,
        graph: &BackendGraph<'_>,
    ) -> Result<(Arc<NnEvaluator>, Arc<dyn Backend>)> {
        let Evaluation::Network(n) = &self.evaluation else {
            bail!("this engine has no network");
        };
        evaluators::nn_evaluator(graph, self.threads, self.batching.clone(), &n.ort)
    }

    /// The GTP engine's settings; a caller sets what only it knows (file access, an
    /// interrupt) over them.
    pub fn engine_config(&self) -> EngineConfig {
        let classic = Arc::new(Classic::new(self.classic.level, self.seed));
        EngineConfig {
            params: self.search_params(),
            visits: self.limits.visits,
            move_time: self.limits.move_time,
            visits_cap: self.limits.visits_cap,
            time_cap: self.limits.time_cap,
            rules: self.rules,
            resign_below: self.resign_below,
            strength: self.strength,
            moves: match self.moves {
                MoveSource::Classic => Decider::Classic(classic.clone()),
                MoveSource::Search => Decider::Search,
            },
            // Without a network, the classical engine that judges positions judges
            // dead stones too.
            status: match self.evaluation {
                Evaluation::Classic => Decider::Classic(classic),
                Evaluation::Network(_) => Decider::Search,
            },
            ..EngineConfig::default()
        }
    }

    /// The GTP engine with `config` (from [`EngineSpec::engine_config`]), and the backend
    /// its network settled on.
    pub fn engine(&self, config: EngineConfig) -> Result<(Engine, Settled)> {
        let (source, settled) = self.evaluator_source();
        let engine = Engine::new(source, config).map_err(anyhow::Error::msg)?;
        Ok((engine, settled))
    }

    /// One line saying what plays.
    pub fn describe(&self) -> String {
        let level = self.classic.level;
        match (&self.evaluation, self.moves) {
            (Evaluation::Network(n), MoveSource::Search) => format!(
                "search over {} ({}, {} threads)",
                n.model, n.backend, self.threads
            ),
            (Evaluation::Classic, MoveSource::Search) => {
                format!("search over the classical engine (level {level})")
            }
            (_, MoveSource::Classic) => format!("classical engine (level {level})"),
        }
    }
}

/// A seed from the clock, so that games differ.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Layer;

    fn spec(toml: &str) -> EngineSpec {
        let mut cfg = Config::default();
        cfg.merge(&Layer::parse(toml, "t").unwrap());
        cfg.validate().unwrap();
        EngineSpec::from_config(&cfg, Path::new("/state")).unwrap()
    }

    #[test]
    fn without_a_model_the_appliance_plays_the_bundled_network_if_built_in() {
        let s = spec("");
        match ModelSource::bundled() {
            Some(_) => {
                let Evaluation::Network(n) = &s.evaluation else {
                    panic!("no network: {:?}", s.evaluation)
                };
                assert!(matches!(n.model, ModelSource::Bundled(_)));
                assert_eq!(n.cache.as_deref(), Some(Path::new("/state/cache")));
                assert_eq!(s.moves, MoveSource::Search);
                assert!(s.describe().contains("the bundled network g170-b6c96"));
                let s = spec("[engine]\nmodel = \"bundled\"\nmode = \"classic\"\n");
                assert!(matches!(s.evaluation, Evaluation::Network(_)));
            }
            None => {
                assert!(matches!(s.evaluation, Evaluation::Classic));
                let mut cfg = Config::default();
                cfg.merge(&Layer::parse("[engine]\nmodel = \"bundled\"\n", "t").unwrap());
                assert!(EngineSpec::from_config(&cfg, Path::new("/s")).is_err());
            }
        }
    }

    #[test]
    fn the_classic_mode_or_no_network_plays_the_classical_engine() {
        let s = spec("[engine]\nmode = \"classic\"\n");
        assert!(matches!(s.evaluation, Evaluation::Classic));
        assert_eq!(s.moves, MoveSource::Classic);
        assert_eq!((s.threads, s.batching.max_batch), (2, 8));
        assert_eq!(
            s.limits,
            MoveLimits {
                visits: Some(400),
                move_time: None,
                visits_cap: Some(100_000),
                time_cap: Some(20.0),
            }
        );
        let c = s.engine_config();
        assert!(matches!(c.moves, Decider::Classic(_)));
        assert!(matches!(c.status, Decider::Classic(_)));
        assert_eq!(s.describe(), "classical engine (level 10)");

        let s = spec("[engine]\nmodel = \"none\"\nmode = \"search\"\nlevel = 4\n");
        assert_eq!(s.moves, MoveSource::Search);
        assert_eq!(s.classic.level, 4);
        let c = s.engine_config();
        assert!(matches!(c.moves, Decider::Search));
        assert!(matches!(c.status, Decider::Classic(_)));
        assert_eq!(s.describe(), "search over the classical engine (level 4)");
        assert_eq!(c.strength, Strength::Max);
    }

    #[test]
    fn the_strength_key_reaches_the_engine() {
        let s = spec("[engine]\nmodel = \"none\"\nmode = \"search\"\nstrength = \"12k\"\n");
        assert_eq!(s.engine_config().strength.to_string(), "12k");
    }

    #[test]
    fn a_model_searches_and_caches_its_graphs_under_the_state_dir() {
        let s = spec("[engine]\nmodel = \"/m/net.onnx\"\nbackend = \"ort\"\nthreads = 3\n");
        let Evaluation::Network(n) = &s.evaluation else {
            panic!("no network: {:?}", s.evaluation);
        };
        assert_eq!(n.backend, BackendKind::Ort);
        assert_eq!(n.cache.as_deref(), Some(Path::new("/state/cache")));
        assert_eq!(s.moves, MoveSource::Search);
        let c = s.engine_config();
        assert!(matches!(c.moves, Decider::Search));
        assert!(matches!(c.status, Decider::Search));
        assert_eq!(c.params.threads, 3);
        assert_eq!(s.describe(), "search over /m/net.onnx (ort, 3 threads)");

        let s = spec("[engine]\nmodel = \"/m/net.onnx\"\nmode = \"classic\"\n");
        assert!(matches!(s.engine_config().moves, Decider::Classic(_)));
        assert_eq!(s.describe(), "classical engine (level 10)");
    }

    #[test]
    fn names_parse_into_their_types_or_are_named_in_the_error() {
        assert_eq!("classic".parse(), Ok(MoveSource::Classic));
        assert!("both"
            .parse::<MoveSource>()
            .unwrap_err()
            .contains("\"both\""));
        assert_eq!("tract".parse(), Ok(BackendKind::Tract));
        let e = "gpu".parse::<BackendKind>().unwrap_err();
        assert_eq!(e, "unknown backend \"gpu\" (tract, ort, native)");
    }
}
