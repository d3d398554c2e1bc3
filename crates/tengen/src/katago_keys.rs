//! KataGo's config keys and what each means in Tengen: one table. A key either sets one of
//! Tengen's settings (for `tengen gtp`, `tengen analysis` or both), or is a search
//! parameter of the protocol's table (`tengen_protocol::params`, looked up there, not
//! listed again), or is a KataGo key Tengen has no use for (accepted and listed once at
//! start-up, saying why, as KataGo lists its unused keys). Any other key is warned about.
//! A bad value is an error naming the key and where it was given.

use std::path::PathBuf;
use std::time::Duration;

use tengen_protocol::analysis::Perspective;
use tengen_protocol::gtp::search_factor::SearchFactors;
use tengen_protocol::params::{self, Setting};
use tengen_rules::{HandicapBonus, Rules, ScoringRule, TaxRule};
use tengen_search::{Limits, SearchParams};

use crate::katago_config::{Entry, KataConfig, Origin};

/// The tool reading a config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `tengen gtp`.
    Gtp,
    /// `tengen analysis`.
    Analysis,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Gtp => "tengen gtp",
            Tool::Analysis => "tengen analysis",
        }
    }
}

/// Which tools read a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum For {
    Gtp,
    Analysis,
    Both,
}

impl For {
    fn includes(self, tool: Tool) -> bool {
        matches!(
            (self, tool),
            (For::Both, _) | (For::Gtp, Tool::Gtp) | (For::Analysis, Tool::Analysis)
        )
    }
}

/// [`Meaning::Set`] by an assignment to the settings `s` from the value `v`.
macro_rules! set {
    (|$s:ident, $v:ident| $assign:expr) => {
        Meaning::Set(|$s, $v| {
            $assign;
            Ok(())
        })
    };
}

/// Sets a setting from a value, or says why the value is bad.
type Setter = fn(&mut Settings, &str) -> Result<(), String>;

/// What Tengen does with a key.
enum Meaning {
    /// Sets one of Tengen's settings.
    Set(Setter),
    /// A search parameter KataGo reads only from its config (`kata-set-param` cannot set
    /// it, so it is not in the protocol's table): a real number within a range.
    SearchReal {
        lo: f64,
        hi: f64,
        at: fn(&mut SearchParams) -> &mut f64,
    },
    /// Likewise, `true` or `false`.
    SearchFlag(fn(&mut SearchParams) -> &mut bool),
    /// One of the rules keys, read together as KataGo reads them.
    Rule,
    /// A KataGo key without a use in Tengen: accepted, listed at start-up with this reason.
    Unused(&'static str),
}

struct Key {
    name: &'static str,
    tools: For,
    meaning: Meaning,
}

/// The table: `"name" Tools => meaning`, one key a line (`rustfmt` leaves it so).
macro_rules! keys {
    ($($name:literal $tools:ident => $meaning:expr),* $(,)?) => {
        &[$(Key { name: $name, tools: For::$tools, meaning: $meaning }),*]
    };
}

/// [`Meaning::SearchReal`] for the field `$field` of the search parameters.
macro_rules! search_real {
    ($lo:expr, $hi:expr, $field:ident) => {
        Meaning::SearchReal {
            lo: $lo,
            hi: $hi,
            at: |p| &mut p.$field,
        }
    };
}

const NO_SEARCH_OPTION: &str = "a KataGo search option Tengen does not have";
const NO_DATA_FILES: &str = "Tengen keeps no data files there";

/// Every KataGo key Tengen knows that is not a search parameter of the protocol's table.
#[rustfmt::skip]
static KEYS: &[Key] = keys![
    // How far a search goes.
    "maxVisits" Both => set!(|s, v| s.max_visits = Some(count(v, 1, 1 << 50)?)),
    "maxTime" Both => set!(|s, v| s.max_time = Some(real(v, 1e-3, 1e9)?)),
    "maxPlayouts" Both => set!(|s, v| s.max_playouts = Some(count(v, 1, 1 << 50)?)),
    "ponderingEnabled" Gtp => set!(|s, v| s.pondering = Some(flag(v)?)),
    "maxVisitsPondering" Gtp => set!(|s, v| s.ponder_limits.visits = Some(count(v, 1, 1 << 50)?)),
    "maxPlayoutsPondering" Gtp => set!(|s, v| s.ponder_limits.playouts = Some(count(v, 1, 1 << 50)?)),
    // KataGo's 1e20 (its default) is no limit.
    "maxTimePondering" Gtp => set!(|s, v| s.ponder_limits.time = Duration::try_from_secs_f64(real(v, 0.0, 1e20)?).ok()),
    "lagBuffer" Gtp => set!(|s, v| s.lag_buffer = Some(real(v, 0.0, 3600.0)?)),
    "searchFactorWhenWinning" Gtp => set!(|s, v| s.search_factors.when_winning = real(v, 0.01, 1.0)?),
    "searchFactorWhenWinningThreshold" Gtp => set!(|s, v| s.search_factors.when_winning_threshold = real(v, 0.0, 1.0)?),
    "searchFactorAfterOnePass" Gtp => set!(|s, v| s.search_factors.after_one_pass = real(v, 0.0, 1.0)?),
    "searchFactorAfterTwoPass" Gtp => set!(|s, v| s.search_factors.after_two_pass = real(v, 0.0, 1.0)?),
    // Threads and the network's batches and cache.
    "numSearchThreads" Both => set!(|s, v| s.threads = Some(count(v, 1, 1024)?)),
    "numSearchThreadsPerAnalysisThread" Analysis => set!(|s, v| s.threads = Some(count(v, 1, 1024)?)),
    "numAnalysisThreads" Analysis => set!(|s, v| s.analysis_threads = Some(count(v, 1, 16384)?)),
    "nnMaxBatchSize" Both => set!(|s, v| s.max_batch = Some(count(v, 1, 65536)?)),
    "nnCacheSizePowerOfTwo" Both => set!(|s, v| s.cache_entries = Some(1usize << count::<u32>(v, 0, 30)?)),
    "nnRandomize" Both => Meaning::SearchFlag(|p| &mut p.random_symmetries),
    // Resignation.
    "allowResignation" Gtp => set!(|s, v| s.allow_resignation = Some(flag(v)?)),
    "resignThreshold" Gtp => set!(|s, v| s.resign_threshold = Some(real(v, -1.0, 1.0)?)),
    "resignConsecTurns" Gtp => set!(|s, v| s.resign_turns = Some(count(v, 1, 1000)?)),
    "resignMinScoreDifference" Gtp => Meaning::Unused("Tengen resigns on the winrate alone"),
    "resignMinMovesPerBoardArea" Gtp => Meaning::Unused("Tengen resigns on the winrate alone"),
    // Rules of a new game.
    "rules" Gtp => Meaning::Rule,
    "koRule" Gtp => Meaning::Rule,
    "scoringRule" Gtp => Meaning::Rule,
    "taxRule" Gtp => Meaning::Rule,
    "multiStoneSuicideLegal" Gtp => Meaning::Rule,
    "hasButton" Gtp => Meaning::Rule,
    "whiteHandicapBonus" Gtp => Meaning::Rule,
    "whiteBonusPerHandicapStone" Gtp => Meaning::Rule,
    "friendlyPassOk" Gtp => Meaning::Rule,
    "defaultBoardSize" Gtp => Meaning::Unused("a game starts at 19x19 until boardsize"),
    "ignoreGTPAndForceKomi" Gtp => Meaning::Unused("Tengen takes komi from the controller"),
    // What analysis reports.
    "reportAnalysisWinratesAs" Both => set!(|s, v| s.report_as = Some(v.parse::<Perspective>()?)),
    "analysisPVLen" Both => set!(|s, v| s.pv_len = Some(count(v, 1, 1000)?)),
    // Identity (Tengen's own keys).
    "gtpName" Gtp => set!(|s, v| s.name = Some(word(v)?)),
    "gtpVersion" Gtp => set!(|s, v| s.version = Some(word(v)?)),
    // Logging.
    "logFile" Both => set!(|s, v| s.log.file = Some(PathBuf::from(v))),
    "logDir" Both => set!(|s, v| s.log.dir = Some(PathBuf::from(v))),
    "logDirDated" Both => set!(|s, v| s.log.dir = Some(PathBuf::from(v))),
    "logToStderr" Both => set!(|s, v| s.log.to_stderr = flag(v)?),
    "logAllGTPCommunication" Gtp => set!(|s, v| s.log.requests = flag(v)?),
    "logAllRequests" Analysis => set!(|s, v| s.log.requests = flag(v)?),
    "logAllResponses" Analysis => set!(|s, v| s.log.responses = flag(v)?),
    "logErrorsAndWarnings" Analysis => Meaning::Unused("Tengen always logs its errors and warnings"),
    "logSearchInfo" Gtp => Meaning::Unused("Tengen logs no search trees"),
    "logSearchInfoForChosenMove" Gtp => Meaning::Unused("Tengen logs no search trees"),
    "ogsChatToStderr" Gtp => set!(|s, v| s.ogs_chat = Some(flag(v)?)),
    "startupPrintMessageToStderr" Gtp => Meaning::Unused("Tengen's start-up lines are its log"),
    "homeDataDir" Both => Meaning::Unused(NO_DATA_FILES),
    "warnUnusedFields" Analysis => Meaning::Unused("Tengen always warns about unknown query fields"),
    // Search parameters KataGo reads only from its config.
    "cpuctUtilityStdevPrior" Both => search_real!(0.0, 10.0, cpuct_utility_stdev_prior),
    "cpuctUtilityStdevPriorWeight" Both => search_real!(0.0, 100.0, cpuct_utility_stdev_prior_weight),
    "cpuctUtilityStdevScale" Both => search_real!(0.0, 1.0, cpuct_utility_stdev_scale),
    "dynamicScoreCenterZeroWeight" Both => search_real!(0.0, 1.0, dynamic_score_center_zero_weight),
    "dynamicScoreCenterScale" Both => search_real!(0.2, 5.0, dynamic_score_center_scale),
    "noResultUtilityForWhite" Both => search_real!(-2.0, 2.0, no_result_utility_for_white),
    "drawEquivalentWinsForWhite" Both => search_real!(0.0, 1.0, draw_equivalent_wins_for_white),
    "numVirtualLossesPerThread" Both => search_real!(0.0, 1000.0, virtual_losses_per_thread),
    "fpuLossProp" Both => search_real!(0.0, 1.0, fpu_loss_prop),
    "enablePassingHacks" Both => Meaning::SearchFlag(|p| &mut p.enable_passing_hacks),
];

/// KataGo search options Tengen does not have (from KataGo's example configs): accepted
/// and listed at start-up.
static KATAGO_ONLY: &[&str] = &[
    "analysisIgnorePreRootHistory",
    "assumeMultipleStartingBlackMovesAreHandicap",
    "avoidMYTDaggerHack",
    "avoidRepeatedPatternUtility",
    "chosenMovePrune",
    "chosenMoveSubtract",
    "chosenMoveTemperatureEarly",
    "chosenMoveTemperatureHalflife",
    "conservativePass",
    "dynamicPlayoutDoublingAdvantageCapPerOppLead",
    "evalCacheMinVisits",
    "fpuParentWeightByVisitedPolicy",
    "ignorePreRootHistory",
    "nodeTableShardsPowerOfTwo",
    "preventCleanupPhase",
    "rootPruneUselessMoves",
    "rootSymmetryPruning",
    "searchRandSeed",
    "useEvalCache",
];

/// Key prefixes of KataGo's sample-avoidance and automatic-repetition options.
static KATAGO_ONLY_PREFIXES: &[&str] = &["avoidSgf", "autoAvoidRepeat"];

/// Prefixes of keys that concern only KataGo's own backends (its GPUs, its CPU backend,
/// its network server threads).
static BACKEND_PREFIXES: &[&str] = &[
    "cuda",
    "trt",
    "opencl",
    "metal",
    "eigen",
    "coreml",
    "dummybackend",
    "gpuToUse",
    "numNNServerThreadsPerModel",
    "numEigenThreadsPerModel",
    "nnMutexPoolSizePowerOfTwo",
    "nnRandSeed",
    "gtpForceMaxNNSize",
    "maxBoardXSizeForNNBuffer",
    "maxBoardYSizeForNNBuffer",
    "requireMaxBoardSize",
];

/// Settings a config gives; `None` where it says nothing.
#[derive(Debug, Default)]
pub struct Settings {
    /// Visits per move (gtp) or per query without its own (analysis).
    pub max_visits: Option<u64>,
    /// No move's search takes longer (seconds).
    pub max_time: Option<f64>,
    /// New playouts per search, the reused tree's visits not counted.
    pub max_playouts: Option<u64>,
    /// How much shorter `genmove`'s search gets after passes and when winning (KataGo's
    /// defaults, all 1.0, change nothing).
    pub search_factors: SearchFactors,
    /// Whether `genmove` ponders (searches on until the next command).
    pub pondering: Option<bool>,
    /// Limits of pondering (none by default, as in KataGo).
    pub ponder_limits: Limits,
    /// Search threads (per analysis thread, for analysis).
    pub threads: Option<usize>,
    /// Positions analysed at once.
    pub analysis_threads: Option<usize>,
    /// Network requests batched at most.
    pub max_batch: Option<usize>,
    /// Network evaluations cached.
    pub cache_entries: Option<usize>,
    /// Whether to resign at all.
    pub allow_resignation: Option<bool>,
    /// KataGo's resign threshold: the mover's expected result from -1 (lost) to 1 (won).
    pub resign_threshold: Option<f64>,
    /// Turns in a row below the threshold before resigning.
    pub resign_turns: Option<u32>,
    /// Rules of a new game.
    pub rules: Option<Rules>,
    /// Seconds kept in hand for network and controller delays.
    pub lag_buffer: Option<f64>,
    /// Whose view analysis reports values from (JSON responses, GTP analysis lines).
    pub report_as: Option<Perspective>,
    /// Moves of a reported variation after its first.
    pub pv_len: Option<usize>,
    /// Whether to write a search summary to standard error after each chosen move.
    pub ogs_chat: Option<bool>,
    /// What `name` answers.
    pub name: Option<String>,
    /// What `version` answers.
    pub version: Option<String>,
    /// Search parameters, in key order.
    pub search: Vec<SearchSetting>,
    /// Where and what to log.
    pub log: LogSettings,
}

/// Where the log goes and what it records beyond Tengen's usual lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogSettings {
    /// Log to this file too.
    pub file: Option<PathBuf>,
    /// Log to a new file named by the date and time in this directory too.
    pub dir: Option<PathBuf>,
    /// Log to standard error (Tengen's default, unlike KataGo's GTP engine).
    pub to_stderr: bool,
    /// Log every command (gtp) or query (analysis) received, and every GTP reply.
    pub requests: bool,
    /// Log every analysis response.
    pub responses: bool,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            file: None,
            dir: None,
            to_stderr: true,
            requests: false,
            responses: false,
        }
    }
}

/// A search parameter set by a config.
#[derive(Clone, Copy, Debug)]
pub enum SearchSetting {
    /// One of the protocol's table, as `kata-set-param` would set it.
    Param(Setting),
    /// A real number only the config sets.
    Real(fn(&mut SearchParams) -> &mut f64, f64),
    /// A flag only the config sets.
    Flag(fn(&mut SearchParams) -> &mut bool, bool),
}

impl SearchSetting {
    /// The name of the protocol's parameter it sets, if it sets one of those.
    pub fn param_name(&self) -> Option<&'static str> {
        match self {
            SearchSetting::Param(s) => Some(s.param().name),
            _ => None,
        }
    }

    /// Sets the parameter in `p`.
    pub fn apply(&self, p: &mut SearchParams) {
        match *self {
            // The table's `maxVisits` is read by this module's own key, never here.
            SearchSetting::Param(s) => s.apply(p, &mut None),
            SearchSetting::Real(at, x) => *at(p) = x,
            SearchSetting::Flag(at, b) => *at(p) = b,
        }
    }
}

/// What the start-up log says about a config.
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    /// Keys accepted without effect, each with why.
    pub unused: Vec<(String, String)>,
    /// Keys neither KataGo's nor Tengen's, with where each was given.
    pub unknown: Vec<(String, Origin)>,
}

impl Report {
    /// Logs the unused keys in one line and a warning for each unknown key.
    pub fn log(&self, tool: Tool) {
        if !self.unused.is_empty() {
            let list: Vec<String> = self
                .unused
                .iter()
                .map(|(k, why)| format!("{k} ({why})"))
                .collect();
            log::info!(
                "config keys {} does not use: {}",
                tool.name(),
                list.join("; ")
            );
        }
        for (key, at) in &self.unknown {
            log::warn!("{at}: unknown config key {key} ignored (a typo?)");
        }
    }
}

/// A value a key does not take.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{at}: bad value {value:?} for {key}: {message}")]
pub struct KeyError {
    /// The key.
    pub key: String,
    /// What was given.
    pub value: String,
    /// Where.
    pub at: Origin,
    /// Why it is bad.
    pub message: String,
}

fn key_error(key: &str, e: &Entry, message: impl Into<String>) -> KeyError {
    KeyError {
        key: key.to_string(),
        value: e.value.clone(),
        at: e.origin.clone(),
        message: message.into(),
    }
}

/// Reads `cfg` for `tool`: its settings, and what the start-up log should say.
pub fn read(cfg: &KataConfig, tool: Tool) -> Result<(Settings, Report), KeyError> {
    let mut s = Settings::default();
    let mut report = Report::default();
    let mut rule_keys = Vec::new();
    for (name, entry) in cfg.entries() {
        let bad = |m: String| key_error(name, entry, m);
        if let Some(k) = KEYS.iter().find(|k| k.name == name) {
            if !k.tools.includes(tool) {
                let other = if tool == Tool::Gtp {
                    Tool::Analysis
                } else {
                    Tool::Gtp
                };
                report
                    .unused
                    .push((name.to_string(), format!("only {} reads it", other.name())));
                continue;
            }
            let v = entry.value.as_str();
            match &k.meaning {
                Meaning::Set(set) => set(&mut s, v).map_err(bad)?,
                Meaning::SearchReal { lo, hi, at } => {
                    let x = real(v, *lo, *hi).map_err(bad)?;
                    s.search.push(SearchSetting::Real(*at, x));
                }
                Meaning::SearchFlag(at) => s
                    .search
                    .push(SearchSetting::Flag(*at, flag(v).map_err(bad)?)),
                Meaning::Rule => rule_keys.push((name, entry)),
                Meaning::Unused(why) => report.unused.push((name.to_string(), why.to_string())),
            }
        } else if let Ok(p) = params::find(name) {
            let setting = p.parse(&entry.value).map_err(|e| bad(e.to_string()))?;
            s.search.push(SearchSetting::Param(setting));
        } else if KATAGO_ONLY.contains(&name)
            || KATAGO_ONLY_PREFIXES.iter().any(|p| name.starts_with(p))
        {
            report
                .unused
                .push((name.to_string(), NO_SEARCH_OPTION.to_string()));
        } else if BACKEND_PREFIXES.iter().any(|p| name.starts_with(p)) {
            report.unused.push((
                name.to_string(),
                "concerns only KataGo's backends".to_string(),
            ));
        } else {
            report
                .unknown
                .push((name.to_string(), entry.origin.clone()));
        }
    }
    s.rules = rules(&rule_keys)?;
    Ok((s, report))
}

/// Rules from either `rules` or the individual keys, as KataGo builds them: the individual
/// form needs `koRule`, `scoringRule` and `multiStoneSuicideLegal`; tax and komi default
/// by the scoring rule and button. An override of one form replaces the files' other form.
fn rules(given: &[(&str, &Entry)]) -> Result<Option<Rules>, KeyError> {
    let overridden = |e: &Entry| e.origin == Origin::Override;
    let mut preset = given.iter().find(|(k, _)| *k == "rules").copied();
    let mut parts: Vec<(&str, &Entry)> = given
        .iter()
        .filter(|(k, _)| *k != "rules")
        .copied()
        .collect();
    if preset.is_some_and(|(_, e)| overridden(e)) {
        parts.retain(|(_, e)| overridden(e));
    } else if parts.iter().any(|(_, e)| overridden(e)) {
        preset = None;
    }
    let Some(&(first_key, first)) = parts.first() else {
        return match preset {
            Some((k, e)) => Rules::parse(&e.value)
                .map(Some)
                .map_err(|err| key_error(k, e, err.to_string())),
            None => Ok(None),
        };
    };
    if let Some((k, e)) = preset {
        let both = format!("give either rules or individual rules such as {first_key}, not both");
        return Err(key_error(k, e, both));
    }
    let find = |name: &str| parts.iter().find(|(k, _)| *k == name).map(|(_, e)| *e);
    let set = |r: Rules, name: &str, rule: &str, e: &Entry| {
        r.update(rule, &e.value)
            .map_err(|err| key_error(name, e, err.to_string()))
    };
    let mut r = Rules::tromp_taylor();
    for (name, rule) in [
        ("koRule", "ko"),
        ("scoringRule", "scoring"),
        ("multiStoneSuicideLegal", "suicide"),
    ] {
        let e = find(name).ok_or_else(|| {
            key_error(
                first_key,
                first,
                format!("individual rules need {name} too"),
            )
        })?;
        r = set(r, name, rule, e)?;
    }
    r.tax = if r.scoring == ScoringRule::Territory {
        TaxRule::Seki
    } else {
        TaxRule::None
    };
    r.white_handicap_bonus = HandicapBonus::Zero;
    r.friendly_pass_ok = false;
    for (name, rule) in [
        ("taxRule", "tax"),
        ("hasButton", "hasButton"),
        ("whiteHandicapBonus", "whiteHandicapBonus"),
        ("friendlyPassOk", "friendlyPassOk"),
    ] {
        if let Some(e) = find(name) {
            r = set(r, name, rule, e)?;
        }
    }
    if let Some(e) = find("whiteBonusPerHandicapStone") {
        let name = "whiteBonusPerHandicapStone";
        if find("whiteHandicapBonus").is_some() {
            return Err(key_error(
                name,
                e,
                "give it or whiteHandicapBonus, not both",
            ));
        }
        r.white_handicap_bonus = match count::<u8>(&e.value, 0, 1) {
            Ok(0) => HandicapBonus::Zero,
            Ok(_) => HandicapBonus::N,
            Err(m) => return Err(key_error(name, e, m)),
        };
    }
    if r.button && r.scoring != ScoringRule::Area {
        if let Some(e) = find("hasButton") {
            return Err(key_error("hasButton", e, "a button needs area scoring"));
        }
    }
    r.komi = if r.scoring == ScoringRule::Territory {
        6.5
    } else if r.button {
        7.0
    } else {
        7.5
    };
    Ok(Some(r))
}

/// A whole number from `lo` to `hi`.
fn count<T: TryFrom<u64>>(v: &str, lo: u64, hi: u64) -> Result<T, String> {
    v.parse::<u64>()
        .ok()
        .filter(|x| (lo..=hi).contains(x))
        .and_then(|x| T::try_from(x).ok())
        .ok_or_else(|| format!("expected a whole number from {lo} to {hi}"))
}

/// A real number from `lo` to `hi`.
fn real(v: &str, lo: f64, hi: f64) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| (lo..=hi).contains(x))
        .ok_or_else(|| format!("expected a number from {lo} to {hi}"))
}

/// `true` or `false`, spelled as KataGo accepts them.
fn flag(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "t" | "1" | "yes" | "y" => Ok(true),
        "false" | "f" | "0" | "no" | "n" => Ok(false),
        _ => Err("expected true or false".into()),
    }
}

/// A single word (a GTP reply line may not hold line breaks).
fn word(v: &str) -> Result<String, String> {
    if v.is_empty() || v.chars().any(|c| c.is_control()) {
        return Err("expected text on one line".into());
    }
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str, overrides: &[&str], tool: Tool) -> Result<(Settings, Report), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.cfg");
        std::fs::write(&path, text).unwrap();
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let cfg = KataConfig::load(&[path], &overrides).map_err(|e| e.to_string())?;
        read(&cfg, tool).map_err(|e| e.to_string())
    }

    #[test]
    fn individual_rules_take_katagos_defaults() {
        let text = "koRule = simple\nscoringRule = TERRITORY\nmultiStoneSuicideLegal = false\n";
        let (s, _) = read_text(text, &[], Tool::Gtp).unwrap();
        let r = s.rules.unwrap();
        assert_eq!(
            (r.scoring, r.tax, r.komi),
            (ScoringRule::Territory, TaxRule::Seki, 6.5)
        );
        assert_eq!(r.white_handicap_bonus, HandicapBonus::Zero);
        let e = read_text(&format!("{text}hasButton = true\n"), &[], Tool::Gtp).unwrap_err();
        assert!(e.contains("hasButton") && e.contains("line 4"), "{e}");
        let e = read_text(
            &format!("{text}whiteBonusPerHandicapStone = 2\n"),
            &[],
            Tool::Gtp,
        )
        .unwrap_err();
        assert!(e.contains("whiteBonusPerHandicapStone"), "{e}");
        // An overriding preset replaces the file's individual keys, and the other way round.
        let (s, _) = read_text(text, &["rules=chinese"], Tool::Gtp).unwrap();
        assert_eq!(s.rules, Some(Rules::chinese()));
        let (s, _) = read_text(
            "rules = chinese\n",
            &["koRule=POSITIONAL,scoringRule=AREA,multiStoneSuicideLegal=true"],
            Tool::Gtp,
        )
        .unwrap();
        assert_eq!(s.rules, Some(Rules::tromp_taylor()));
    }

    #[test]
    fn each_key_means_what_the_table_says_for_each_tool() {
        let text = "maxVisits = 9\nnumAnalysisThreads = 3\nresignThreshold = -0.9\n\
                    wideRootNoise = 0.5\nnumVirtualLossesPerThread = 2\nhomeDataDir = /x\n";
        let (s, report) = read_text(text, &[], Tool::Analysis).unwrap();
        assert_eq!((s.max_visits, s.analysis_threads), (Some(9), Some(3)));
        assert_eq!(s.resign_threshold, None);
        let mut p = SearchParams::default();
        for setting in &s.search {
            setting.apply(&mut p);
        }
        assert_eq!((p.wide_root_noise, p.virtual_losses_per_thread), (0.5, 2.0));
        let unused: Vec<&str> = report.unused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(unused, ["homeDataDir", "resignThreshold"]);
        assert!(report.unknown.is_empty());
        let (s, report) = read_text(text, &[], Tool::Gtp).unwrap();
        assert_eq!((s.analysis_threads, s.resign_threshold), (None, Some(-0.9)));
        let unused: Vec<&str> = report.unused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(unused, ["homeDataDir", "numAnalysisThreads"]);
        let (_, report) = read_text("maxVisitz = 1\n", &[], Tool::Gtp).unwrap();
        assert_eq!(report.unknown.len(), 1);
        assert_eq!(report.unknown[0].0, "maxVisitz");
        assert!(matches!(&report.unknown[0].1, Origin::Line { line: 1, .. }));
    }

    #[test]
    fn search_factors_and_playouts_set_the_gtp_settings() {
        let text = "searchFactorAfterOnePass = 0.5\nsearchFactorAfterTwoPass = 0.25\n\
                    searchFactorWhenWinning = 0.4\nsearchFactorWhenWinningThreshold = 0.95\n\
                    maxPlayouts = 300\n";
        let (s, report) = read_text(text, &[], Tool::Gtp).unwrap();
        let expected = SearchFactors {
            after_one_pass: 0.5,
            after_two_pass: 0.25,
            when_winning: 0.4,
            when_winning_threshold: 0.95,
        };
        assert_eq!((s.search_factors, s.max_playouts), (expected, Some(300)));
        assert!(report.unused.is_empty(), "{:?}", report.unused);
        let (s, _) = read_text("maxVisits = 9\n", &[], Tool::Gtp).unwrap();
        assert_eq!(s.search_factors, SearchFactors::default());
        let e = read_text("searchFactorAfterOnePass = 1.5\n", &[], Tool::Gtp).unwrap_err();
        assert!(e.contains("searchFactorAfterOnePass"), "{e}");
        let e = read_text("maxPlayouts = 0\n", &[], Tool::Gtp).unwrap_err();
        assert!(e.contains("maxPlayouts"), "{e}");
    }

    #[test]
    fn pondering_keys_set_pondering_and_its_limits() {
        let text = "ponderingEnabled = true\nmaxVisitsPondering = 5000\n\
                    maxPlayoutsPondering = 3000\nmaxTimePondering = 60.0\n";
        let (s, report) = read_text(text, &[], Tool::Gtp).unwrap();
        assert_eq!(s.pondering, Some(true));
        let l = s.ponder_limits;
        assert_eq!((l.visits, l.playouts), (Some(5000), Some(3000)));
        assert_eq!(l.time, Some(Duration::from_secs(60)));
        assert!(report.unused.is_empty(), "{:?}", report.unused);
        // KataGo's own default, 1e20 seconds, is no limit.
        let (s, _) = read_text("maxTimePondering = 1e20\n", &[], Tool::Gtp).unwrap();
        assert_eq!(s.ponder_limits.time, None);
        let e = read_text("ponderingEnabled = often\n", &[], Tool::Gtp).unwrap_err();
        assert!(
            e.contains("ponderingEnabled") && e.contains("line 1"),
            "{e}"
        );
        // The analysis engine does not ponder.
        let (s, report) = read_text(text, &[], Tool::Analysis).unwrap();
        assert_eq!((s.pondering, report.unused.len()), (None, 4));
    }
}
