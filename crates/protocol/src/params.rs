//! The search parameters a client may read and set by KataGo's names: one table, used by
//! GTP's `kata-list-params`, `kata-get-param` and `kata-set-param`, the binary's
//! `--param NAME=VALUE`, and the analysis engine's `overrideSettings`.

use std::fmt;

use serde_json::Value as Json;
use tengen_rules::Player;
use tengen_search::evaluator::{HumanProfile, ProfileError};
use tengen_search::SearchParams;

/// One parameter: its KataGo name, the values it takes and where it lives.
pub struct Param {
    /// KataGo's name, e.g. `cpuctExploration`.
    pub name: &'static str,
    field: Field,
}

/// Where a parameter's value lives and which values it takes.
enum Field {
    /// The visits per move, kept beside the search parameters (`EngineConfig::visits`, a
    /// query's `maxVisits`): a number from -1 to 1e12, below 1 meaning no visit limit.
    MaxVisits,
    /// A real number within a range.
    Real {
        lo: f64,
        hi: f64,
        at: fn(&mut SearchParams) -> &mut f64,
    },
    /// A real number within a range, stored in single precision.
    Real32 {
        lo: f64,
        hi: f64,
        at: fn(&mut SearchParams) -> &mut f32,
    },
    /// A whole number within a range; fractions are cut off, as KataGo's config reader does.
    Count {
        lo: f64,
        hi: f64,
        at: fn(&mut SearchParams) -> &mut usize,
    },
    /// `true` or `false`.
    Flag {
        at: fn(&mut SearchParams) -> &mut bool,
    },
    /// A player, `BLACK` or `WHITE` (or `B`, `W`, in any case); unset by default.
    Player {
        at: fn(&mut SearchParams) -> &mut Option<Player>,
    },
    /// A human-SL profile by KataGo's name (`rank_5k`, ...); empty for none.
    Profile {
        at: fn(&mut SearchParams) -> &mut Option<HumanProfile>,
    },
}

/// The largest `maxVisits`.
const MAX_VISITS: f64 = 1e12;

/// Every parameter, in `kata-list-params` order.
pub static TABLE: &[Param] = &[
    Param {
        name: "maxVisits",
        field: Field::MaxVisits,
    },
    Param {
        name: "numSearchThreads",
        field: Field::Count {
            lo: 1.0,
            hi: 256.0,
            at: |p| &mut p.threads,
        },
    },
    Param {
        name: "cpuctExploration",
        field: Field::Real {
            lo: 0.0,
            hi: 10.0,
            at: |p| &mut p.cpuct_exploration,
        },
    },
    Param {
        name: "cpuctExplorationLog",
        field: Field::Real {
            lo: 0.0,
            hi: 10.0,
            at: |p| &mut p.cpuct_exploration_log,
        },
    },
    Param {
        name: "cpuctExplorationBase",
        field: Field::Real {
            lo: 10.0,
            hi: 100_000.0,
            at: |p| &mut p.cpuct_exploration_base,
        },
    },
    Param {
        name: "fpuReductionMax",
        field: Field::Real {
            lo: 0.0,
            hi: 2.0,
            at: |p| &mut p.fpu_reduction_max,
        },
    },
    Param {
        name: "rootFpuReductionMax",
        field: Field::Real {
            lo: 0.0,
            hi: 2.0,
            at: |p| &mut p.root_fpu_reduction_max,
        },
    },
    Param {
        name: "winLossUtilityFactor",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.win_loss_utility_factor,
        },
    },
    Param {
        name: "staticScoreUtilityFactor",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.static_score_utility_factor,
        },
    },
    Param {
        name: "dynamicScoreUtilityFactor",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.dynamic_score_utility_factor,
        },
    },
    Param {
        name: "lcbStdevs",
        field: Field::Real {
            lo: 1.0,
            hi: 12.0,
            at: |p| &mut p.lcb_stdevs,
        },
    },
    Param {
        name: "minVisitPropForLCB",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.min_visit_prop_for_lcb,
        },
    },
    Param {
        name: "useLcbForSelection",
        field: Field::Flag {
            at: |p| &mut p.use_lcb_for_selection,
        },
    },
    Param {
        name: "chosenMoveTemperature",
        field: Field::Real {
            lo: 0.0,
            hi: 5.0,
            at: |p| &mut p.chosen_move_temperature,
        },
    },
    Param {
        name: "wideRootNoise",
        field: Field::Real {
            lo: 0.0,
            hi: 5.0,
            at: |p| &mut p.wide_root_noise,
        },
    },
    Param {
        name: "rootPolicyTemperature",
        field: Field::Real {
            lo: 0.01,
            hi: 100.0,
            at: |p| &mut p.root_policy_temperature,
        },
    },
    Param {
        name: "nnPolicyTemperature",
        field: Field::Real32 {
            lo: 0.01,
            hi: 100.0,
            at: |p| &mut p.nn_policy_temperature,
        },
    },
    Param {
        name: "rootNumSymmetriesToSample",
        field: Field::Count {
            lo: 1.0,
            hi: 8.0,
            at: |p| &mut p.root_symmetries,
        },
    },
    Param {
        name: "policyOptimism",
        field: Field::Real32 {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.policy_optimism,
        },
    },
    Param {
        name: "rootPolicyOptimism",
        field: Field::Real32 {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.root_policy_optimism,
        },
    },
    Param {
        name: "analysisWideRootNoise",
        field: Field::Real {
            lo: 0.0,
            hi: 5.0,
            at: |p| &mut p.analysis_wide_root_noise,
        },
    },
    Param {
        name: "playoutDoublingAdvantage",
        field: Field::Real {
            lo: -3.0,
            hi: 3.0,
            at: |p| &mut p.playout_doubling_advantage,
        },
    },
    Param {
        name: "playoutDoublingAdvantagePla",
        field: Field::Player {
            at: |p| &mut p.playout_doubling_advantage_pla,
        },
    },
    Param {
        name: "humanSLProfile",
        field: Field::Profile {
            at: |p| &mut p.human_profile,
        },
    },
    Param {
        name: "antiMirror",
        field: Field::Flag {
            at: |p| &mut p.anti_mirror,
        },
    },
    Param {
        name: "genmoveAntiMirror",
        field: Field::Flag {
            at: |p| &mut p.genmove_anti_mirror,
        },
    },
    Param {
        name: "useGraphSearch",
        field: Field::Flag {
            at: |p| &mut p.use_graph_search,
        },
    },
    Param {
        name: "graphSearchRepBound",
        field: Field::Count {
            lo: 0.0,
            hi: 50.0,
            at: |p| &mut p.graph_search_rep_bound,
        },
    },
    Param {
        name: "useNoisePruning",
        field: Field::Flag {
            at: |p| &mut p.use_noise_pruning,
        },
    },
    Param {
        name: "noisePruneUtilityScale",
        field: Field::Real {
            lo: 0.001,
            hi: 10.0,
            at: |p| &mut p.noise_prune_utility_scale,
        },
    },
    Param {
        name: "noisePruningCap",
        field: Field::Real {
            lo: 0.0,
            hi: 1e50,
            at: |p| &mut p.noise_pruning_cap,
        },
    },
    Param {
        name: "valueWeightExponent",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.value_weight_exponent,
        },
    },
    Param {
        name: "subtreeValueBiasFactor",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.subtree_value_bias_factor,
        },
    },
    Param {
        name: "subtreeValueBiasFreeProp",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.subtree_value_bias_free_prop,
        },
    },
    Param {
        name: "subtreeValueBiasWeightExponent",
        field: Field::Real {
            lo: 0.0,
            hi: 1.0,
            at: |p| &mut p.subtree_value_bias_weight_exponent,
        },
    },
    Param {
        name: "useUncertainty",
        field: Field::Flag {
            at: |p| &mut p.use_uncertainty,
        },
    },
    Param {
        name: "uncertaintyCoeff",
        field: Field::Real {
            lo: 0.0001,
            hi: 1.0,
            at: |p| &mut p.uncertainty_coeff,
        },
    },
    Param {
        name: "uncertaintyExponent",
        field: Field::Real {
            lo: 0.0,
            hi: 2.0,
            at: |p| &mut p.uncertainty_exponent,
        },
    },
    Param {
        name: "uncertaintyMaxWeight",
        field: Field::Real {
            lo: 1.0,
            hi: 100.0,
            at: |p| &mut p.uncertainty_max_weight,
        },
    },
    Param {
        name: "enableMorePassingHacks",
        field: Field::Flag {
            at: |p| &mut p.enable_more_passing_hacks,
        },
    },
    Param {
        name: "rootEndingBonusPoints",
        field: Field::Real {
            lo: -1.0,
            hi: 1.0,
            at: |p| &mut p.root_ending_bonus_points,
        },
    },
];

/// Why a parameter could not be read or set.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No parameter has this name.
    #[error("unknown parameter {0:?} (kata-list-params lists them)")]
    Unknown(String),
    /// A number outside the parameter's range, or not a number.
    #[error("{name} must be a number from {lo} to {hi}, not {value:?}")]
    Range {
        /// The parameter.
        name: &'static str,
        /// Least value.
        lo: f64,
        /// Greatest value.
        hi: f64,
        /// What was given.
        value: String,
    },
    /// Not `true` or `false`.
    #[error("{name} takes true or false, not {value:?}")]
    NotFlag {
        /// The parameter.
        name: &'static str,
        /// What was given.
        value: String,
    },
    /// Not a player.
    #[error("{name} takes BLACK or WHITE, not {value:?}")]
    NotPlayer {
        /// The parameter.
        name: &'static str,
        /// What was given.
        value: String,
    },
    /// Not a human-SL profile.
    #[error("{name}: {source}")]
    NotProfile {
        /// The parameter.
        name: &'static str,
        /// Why the name is not a profile.
        source: ProfileError,
    },
}

/// The parameter named `name`.
pub fn find(name: &str) -> Result<&'static Param, ParamError> {
    TABLE
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ParamError::Unknown(name.to_string()))
}

/// A value checked against its parameter, ready to apply.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A number within the parameter's range.
    Number(f64),
    /// A flag.
    Flag(bool),
    /// A player.
    Player(Player),
    /// A human-SL profile, or none.
    Profile(Option<HumanProfile>),
}

/// A parameter with a value it accepts: what `kata-set-param` sets.
#[derive(Clone, Copy)]
pub struct Setting {
    param: &'static Param,
    value: Value,
}

impl Param {
    /// The range of a numeric parameter; `None` for a flag or a player.
    pub fn range(&self) -> Option<(f64, f64)> {
        match self.field {
            Field::MaxVisits => Some((-1.0, MAX_VISITS)),
            Field::Real { lo, hi, .. }
            | Field::Real32 { lo, hi, .. }
            | Field::Count { lo, hi, .. } => Some((lo, hi)),
            Field::Flag { .. } | Field::Player { .. } | Field::Profile { .. } => None,
        }
    }

    /// Whether the parameter takes a player rather than a number or a flag.
    pub fn takes_player(&self) -> bool {
        matches!(self.field, Field::Player { .. })
    }

    /// Whether the parameter takes a human-SL profile.
    pub fn takes_profile(&self) -> bool {
        matches!(self.field, Field::Profile { .. })
    }

    /// Whether this is `maxVisits`, which lives beside the search parameters.
    pub fn is_max_visits(&self) -> bool {
        matches!(self.field, Field::MaxVisits)
    }

    /// The value as `kata-get-param` shows it, from the search parameters and the visits.
    pub fn get(&self, search: &SearchParams, visits: Option<u64>) -> String {
        let mut p = search.clone();
        match self.field {
            Field::MaxVisits => visits.map_or("-1".into(), |v| v.to_string()),
            Field::Real { at, .. } => at(&mut p).to_string(),
            Field::Real32 { at, .. } => at(&mut p).to_string(),
            Field::Count { at, .. } => at(&mut p).to_string(),
            Field::Flag { at } => at(&mut p).to_string(),
            // KataGo's short form, `E` when unset.
            Field::Player { at } => at(&mut p).map_or('E', Player::letter).to_string(),
            // KataGo's answer when none is set: nothing.
            Field::Profile { at } => at(&mut p).map_or(String::new(), |h| h.to_string()),
        }
    }

    /// Reads a value as GTP and the command line give it.
    pub fn parse(&'static self, text: &str) -> Result<Setting, ParamError> {
        if self.takes_player() {
            return self.player(text);
        }
        if self.takes_profile() {
            return self.profile(text);
        }
        let value = match self.range() {
            Some((lo, hi)) => match text.parse::<f64>() {
                Ok(x) if (lo..=hi).contains(&x) => Value::Number(x),
                _ => {
                    return Err(ParamError::Range {
                        name: self.name,
                        lo,
                        hi,
                        value: text.to_string(),
                    })
                }
            },
            None => match text {
                "true" => Value::Flag(true),
                "false" => Value::Flag(false),
                _ => {
                    return Err(ParamError::NotFlag {
                        name: self.name,
                        value: text.to_string(),
                    })
                }
            },
        };
        Ok(Setting { param: self, value })
    }

    /// Reads a value as JSON gives it (`overrideSettings`): a number, or for a numeric
    /// parameter also a boolean as 0 or 1.
    pub fn from_json(&'static self, v: &Json) -> Result<Setting, ParamError> {
        if self.takes_profile() {
            return match v.as_str() {
                Some(text) => self.profile(text),
                None => Err(ParamError::NotProfile {
                    name: self.name,
                    source: ProfileError(v.to_string()),
                }),
            };
        }
        if self.takes_player() {
            return match v.as_str() {
                Some(text) => self.player(text),
                None => Err(ParamError::NotPlayer {
                    name: self.name,
                    value: v.to_string(),
                }),
            };
        }
        let value = match self.range() {
            Some((lo, hi)) => match v.as_f64().or_else(|| v.as_bool().map(f64::from)) {
                Some(x) if (lo..=hi).contains(&x) => Value::Number(x),
                _ => {
                    return Err(ParamError::Range {
                        name: self.name,
                        lo,
                        hi,
                        value: v.to_string(),
                    })
                }
            },
            None => match v.as_bool() {
                Some(b) => Value::Flag(b),
                None => {
                    return Err(ParamError::NotFlag {
                        name: self.name,
                        value: v.to_string(),
                    })
                }
            },
        };
        Ok(Setting { param: self, value })
    }

    /// Reads a human-SL profile by KataGo's name; `""`, `_` or `""` in quotes unset it.
    fn profile(&'static self, text: &str) -> Result<Setting, ParamError> {
        let profile = match text {
            "" | "_" | "\"\"" => None,
            name => {
                Some(
                    name.parse::<HumanProfile>()
                        .map_err(|source| ParamError::NotProfile {
                            name: self.name,
                            source,
                        })?,
                )
            }
        };
        Ok(Setting {
            param: self,
            value: Value::Profile(profile),
        })
    }

    /// Reads a player as KataGo does: `BLACK`, `WHITE`, `B` or `W`, in any case.
    fn player(&'static self, text: &str) -> Result<Setting, ParamError> {
        let player = match text.to_ascii_lowercase().as_str() {
            "black" | "b" => Player::Black,
            "white" | "w" => Player::White,
            _ => {
                return Err(ParamError::NotPlayer {
                    name: self.name,
                    value: text.to_string(),
                })
            }
        };
        Ok(Setting {
            param: self,
            value: Value::Player(player),
        })
    }
}

impl Setting {
    /// The parameter set.
    pub fn param(&self) -> &'static Param {
        self.param
    }

    /// Applies the value to the search parameters, or for `maxVisits` to the visits.
    pub fn apply(&self, search: &mut SearchParams, visits: &mut Option<u64>) {
        let x = match self.value {
            Value::Number(x) => x,
            Value::Flag(b) => f64::from(u8::from(b)),
            Value::Player(p) => {
                if let Field::Player { at } = self.param.field {
                    *at(search) = Some(p);
                }
                return;
            }
            Value::Profile(h) => {
                if let Field::Profile { at } = self.param.field {
                    *at(search) = h;
                }
                return;
            }
        };
        match self.param.field {
            Field::MaxVisits => *visits = (x >= 1.0).then_some(x as u64),
            Field::Real { at, .. } => *at(search) = x,
            Field::Real32 { at, .. } => *at(search) = x as f32,
            Field::Count { at, .. } => *at(search) = x as usize,
            Field::Flag { at } => *at(search) = x != 0.0,
            // Player and profile values returned above; a number never reaches them.
            Field::Player { .. } | Field::Profile { .. } => {}
        }
    }
}

impl PartialEq for Setting {
    fn eq(&self, other: &Setting) -> bool {
        self.param.name == other.param.name && self.value == other.value
    }
}

impl fmt::Debug for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Setting({self})")
    }
}

/// `name value`, as `kata-set-param` takes them.
impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Value::Number(x) => write!(f, "{} {x}", self.param.name),
            Value::Flag(b) => write!(f, "{} {b}", self.param.name),
            Value::Player(p) => write!(f, "{} {}", self.param.name, p.letter()),
            Value::Profile(Some(h)) => write!(f, "{} {h}", self.param.name),
            Value::Profile(None) => write!(f, "{} \"\"", self.param.name),
        }
    }
}

impl fmt::Debug for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Param({})", self.name)
    }
}

impl PartialEq for Param {
    fn eq(&self, other: &Param) -> bool {
        self.name == other.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_reads_back_what_was_set() {
        for p in TABLE {
            let mut search = SearchParams::default();
            let mut visits = Some(800);
            let before = p.get(&search, visits);
            // A value other than the default, so that reading it back proves the write.
            let text = match p.range() {
                Some((lo, hi)) => [hi.min(lo + 7.0), lo]
                    .iter()
                    .map(|x| x.to_string())
                    .find(|t| *t != before)
                    .unwrap(),
                None if p.takes_player() => {
                    assert_eq!(before, "E", "{} is unset by default", p.name);
                    "W".to_string()
                }
                None if p.takes_profile() => {
                    assert_eq!(before, "", "{} is unset by default", p.name);
                    "preaz_3d_9k".to_string()
                }
                None => (!before.parse::<bool>().unwrap()).to_string(),
            };
            let s = p.parse(&text).unwrap();
            s.apply(&mut search, &mut visits);
            assert_eq!(p.get(&search, visits), text, "{}", p.name);
            assert_eq!(s.to_string(), format!("{} {text}", p.name));
            assert_eq!(find(p.name).unwrap().name, p.name);
        }
    }

    #[test]
    fn values_outside_the_range_and_unknown_names_are_refused() {
        for p in TABLE {
            let bad = match p.range() {
                Some((lo, hi)) => vec![
                    format!("{}", lo - 1.0),
                    format!("{}", hi * 2.0),
                    "NaN".into(),
                    "x".into(),
                ],
                None if p.takes_profile() => vec!["1".into(), "rank_0k".into(), "E".into()],
                None => vec!["1".into(), "yes".into(), "".into(), "E".into()],
            };
            for v in bad {
                let e = p.parse(&v).unwrap_err();
                assert!(e.to_string().starts_with(p.name), "{}: {e}", p.name);
            }
        }
        assert_eq!(
            find("maxvisits").unwrap_err().to_string(),
            "unknown parameter \"maxvisits\" (kata-list-params lists them)"
        );
        let e = find("lcbStdevs").unwrap().parse("0.5").unwrap_err();
        assert_eq!(
            e.to_string(),
            "lcbStdevs must be a number from 1 to 12, not \"0.5\""
        );
    }

    #[test]
    fn max_visits_below_one_means_no_limit() {
        let p = find("maxVisits").unwrap();
        let (mut search, mut visits) = (SearchParams::default(), Some(5));
        p.parse("-1").unwrap().apply(&mut search, &mut visits);
        assert_eq!(visits, None);
        assert_eq!(p.get(&search, visits), "-1");
        p.parse("2.9").unwrap().apply(&mut search, &mut visits);
        assert_eq!(visits, Some(2));
    }

    #[test]
    fn json_values_take_numbers_and_flags() {
        let threads = find("numSearchThreads").unwrap();
        let (mut search, mut visits) = (SearchParams::default(), None);
        threads
            .from_json(&serde_json::json!(3))
            .unwrap()
            .apply(&mut search, &mut visits);
        assert_eq!(search.threads, 3);
        assert!(threads.from_json(&serde_json::json!("3")).is_err());
        assert!(threads.from_json(&serde_json::json!(300)).is_err());
        let lcb = find("useLcbForSelection").unwrap();
        lcb.from_json(&serde_json::json!(false))
            .unwrap()
            .apply(&mut search, &mut visits);
        assert!(!search.use_lcb_for_selection);
        assert!(lcb.from_json(&serde_json::json!(0)).is_err());
    }

    #[test]
    fn the_advantaged_player_is_read_as_katago_reads_players() {
        let pla = find("playoutDoublingAdvantagePla").unwrap();
        let (mut search, mut visits) = (SearchParams::default(), None);
        for (text, want) in [
            ("BLACK", Player::Black),
            ("white", Player::White),
            ("b", Player::Black),
            ("W", Player::White),
        ] {
            pla.parse(text).unwrap().apply(&mut search, &mut visits);
            assert_eq!(search.playout_doubling_advantage_pla, Some(want), "{text}");
        }
        pla.from_json(&serde_json::json!("BLACK"))
            .unwrap()
            .apply(&mut search, &mut visits);
        assert_eq!(pla.get(&search, visits), "B");
        let e = pla.from_json(&serde_json::json!(1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "playoutDoublingAdvantagePla takes BLACK or WHITE, not \"1\""
        );
        let pda = find("playoutDoublingAdvantage").unwrap();
        pda.parse("-2.5").unwrap().apply(&mut search, &mut visits);
        assert_eq!(search.playout_doubling_advantage, -2.5);
        assert!(pda.parse("3.5").is_err());
    }
}
