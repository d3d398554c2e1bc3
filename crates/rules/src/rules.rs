//! KataGo's rule options, its named presets, its JSON rules object and its compact string form.

use std::fmt;

use serde_json::{json, Map, Value};

/// How repetition is prevented.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum KoRule {
    /// Only an immediate recapture is banned; long cycles end the game (see the rules text).
    Simple,
    /// No move may repeat an earlier board.
    Positional,
    /// No move may repeat an earlier board with the same player to move.
    Situational,
    /// KataGo's experimental Spight rule: passes lift bans.
    Spight,
}

/// How the final position is counted.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ScoringRule {
    /// Stones plus surrounded empty points.
    Area,
    /// Surrounded empty points plus captures, with the cleanup phases.
    Territory,
}

/// Which empty points may not be scored.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TaxRule {
    /// All surrounded points count.
    None,
    /// No points in seki.
    Seki,
    /// No points in seki, and two points off per independent group.
    All,
}

/// What White receives for Black's handicap stones.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum HandicapBonus {
    /// Nothing.
    Zero,
    /// One point per handicap stone.
    N,
    /// One point per handicap stone beyond the first.
    NMinusOne,
}

/// A complete rule set with komi.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Rules {
    /// Ko rule.
    pub ko: KoRule,
    /// Scoring rule.
    pub scoring: ScoringRule,
    /// Tax rule.
    pub tax: TaxRule,
    /// Whether suicide of more than one stone is legal (one-stone suicide never is).
    pub multi_stone_suicide: bool,
    /// Whether the first player to pass gets half a point.
    pub button: bool,
    /// White's handicap bonus.
    pub white_handicap_bonus: HandicapBonus,
    /// Whether passing before capturing dead stones is acceptable (area scoring; advisory).
    pub friendly_pass_ok: bool,
    /// Points given to White.
    pub komi: f32,
}

/// Why a rules text was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    /// Not a known name, JSON object or compact form.
    #[error("could not parse rules: {0:?}")]
    Unparseable(String),
    /// A key the rules do not have.
    #[error("unknown rules option: {0:?}")]
    UnknownKey(String),
    /// A value not allowed for its key.
    #[error("invalid value {value:?} for rules option {key:?}")]
    BadValue {
        /// The option.
        key: String,
        /// The value given.
        value: String,
    },
    /// Komi that is not a finite multiple of 0.5 within ±400.
    #[error("komi {0} is not a half-integer between -400 and 400")]
    BadKomi(f64),
}

/// Lowest komi a user may set.
pub const MIN_KOMI: f32 = -400.0;
/// Highest komi a user may set.
pub const MAX_KOMI: f32 = 400.0;

/// True if `komi` is finite, a multiple of 0.5 and within the user range.
pub fn komi_is_valid(komi: f64) -> bool {
    komi.is_finite()
        && (MIN_KOMI as f64..=MAX_KOMI as f64).contains(&komi)
        && (komi * 2.0).fract() == 0.0
}

/// What [`komi_is_valid`] accepts, in words, for error messages.
pub fn komi_rule() -> String {
    format!("a multiple of 0.5 from {MIN_KOMI} to {MAX_KOMI}")
}

/// The presets, under the names KataGo prints for them.
const NICE_NAMES: [&str; 7] = [
    "TrompTaylor",
    "Japanese",
    "Chinese",
    "Chinese-OGS",
    "AGA",
    "StoneScoring",
    "NewZealand",
];

impl Default for Rules {
    /// KataGo's default: Tromp-Taylor-like with komi 7.5.
    fn default() -> Self {
        Rules::tromp_taylor()
    }
}

impl Rules {
    /// Tromp-Taylor: positional superko, area scoring, suicide allowed, komi 7.5.
    pub fn tromp_taylor() -> Rules {
        Rules {
            ko: KoRule::Positional,
            scoring: ScoringRule::Area,
            tax: TaxRule::None,
            multi_stone_suicide: true,
            button: false,
            white_handicap_bonus: HandicapBonus::Zero,
            friendly_pass_ok: false,
            komi: 7.5,
        }
    }

    /// Japanese rules as KataGo models them: simple ko, territory, no points in seki, komi 6.5.
    pub fn japanese() -> Rules {
        Rules::preset("japanese").expect("known preset")
    }

    /// Chinese rules: simple ko, area scoring, handicap bonus N, komi 7.5.
    pub fn chinese() -> Rules {
        Rules::preset("chinese").expect("known preset")
    }

    /// A named preset (case-insensitive, with KataGo's aliases), or `None`.
    pub fn preset(name: &str) -> Option<Rules> {
        use HandicapBonus as W;
        use KoRule as K;
        use ScoringRule as S;
        use TaxRule as T;
        let r = |ko, scoring, tax, sui, button, whb, fpok, komi| Rules {
            ko,
            scoring,
            tax,
            multi_stone_suicide: sui,
            button,
            white_handicap_bonus: whb,
            friendly_pass_ok: fpok,
            komi,
        };
        let lower = name.trim().to_ascii_lowercase();
        let key: String = lower
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .collect();
        Some(match key.as_str() {
            "japanese" | "korean" => r(
                K::Simple,
                S::Territory,
                T::Seki,
                false,
                false,
                W::Zero,
                false,
                6.5,
            ),
            "chinese" => r(K::Simple, S::Area, T::None, false, false, W::N, true, 7.5),
            "chineseogs" | "chinesekgs" => r(
                K::Positional,
                S::Area,
                T::None,
                false,
                false,
                W::N,
                true,
                7.5,
            ),
            "ancientarea" | "stonescoring" => {
                r(K::Simple, S::Area, T::All, false, false, W::Zero, true, 7.5)
            }
            "ancientterritory" => r(
                K::Simple,
                S::Territory,
                T::All,
                false,
                false,
                W::Zero,
                false,
                6.5,
            ),
            "agabutton" => r(
                K::Situational,
                S::Area,
                T::None,
                false,
                true,
                W::NMinusOne,
                true,
                7.0,
            ),
            "aga" | "bga" | "french" => r(
                K::Situational,
                S::Area,
                T::None,
                false,
                false,
                W::NMinusOne,
                true,
                7.5,
            ),
            "nz" | "newzealand" => r(
                K::Situational,
                S::Area,
                T::None,
                true,
                false,
                W::Zero,
                true,
                7.0,
            ),
            "tromptaylor" => Rules::tromp_taylor(),
            "goe" | "ing" => r(
                K::Positional,
                S::Area,
                T::None,
                true,
                false,
                W::Zero,
                true,
                7.5,
            ),
            _ => return None,
        })
    }

    /// Parses a preset name, a JSON rules object or the compact form, with komi allowed in the text.
    pub fn parse(text: &str) -> Result<Rules, RulesError> {
        parse_rules(text, true)
    }

    /// Parses rules whose komi is given separately (a `komi` key in the text is an error).
    pub fn parse_with_komi(text: &str, komi: f32) -> Result<Rules, RulesError> {
        let mut r = parse_rules(text, false)?;
        r.komi = komi;
        Ok(r)
    }

    /// Sets one option by key and value, as GTP `kata-set-rule` does.
    pub fn update(&self, key: &str, value: &str) -> Result<Rules, RulesError> {
        let mut r = *self;
        let key = key.trim();
        let v = value.trim().to_ascii_uppercase();
        let bad = || RulesError::BadValue {
            key: key.to_string(),
            value: value.to_string(),
        };
        let boolean = |v: &str| match v.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "t" | "y" => Ok(true),
            "false" | "0" | "no" | "f" | "n" => Ok(false),
            _ => Err(bad()),
        };
        match key {
            "ko" => r.ko = parse_ko(&v).ok_or_else(bad)?,
            "score" | "scoring" => r.scoring = parse_scoring(&v).ok_or_else(bad)?,
            "tax" => r.tax = parse_tax(&v).ok_or_else(bad)?,
            "suicide" => r.multi_stone_suicide = boolean(&v)?,
            "hasButton" => r.button = boolean(&v)?,
            "whiteHandicapBonus" => r.white_handicap_bonus = parse_whb(&v).ok_or_else(bad)?,
            "friendlyPassOk" => r.friendly_pass_ok = boolean(&v)?,
            _ => return Err(RulesError::UnknownKey(key.to_string())),
        }
        Ok(r)
    }

    /// True if the rules (komi aside) are the same.
    pub fn equals_ignoring_komi(&self, other: &Rules) -> bool {
        Rules { komi: 0.0, ..*self }
            == Rules {
                komi: 0.0,
                ..*other
            }
    }

    /// The preset name these rules match (komi aside), in KataGo's spelling.
    pub fn nice_name(&self) -> Option<&'static str> {
        NICE_NAMES
            .into_iter()
            .find(|n| Rules::preset(n).is_some_and(|p| p.equals_ignoring_komi(self)))
    }

    /// True if the final score is always a whole number (a draw is possible).
    pub fn result_is_integer(&self) -> bool {
        let komi_int = self.komi.fract() == 0.0;
        komi_int != self.button
    }

    /// KataGo's JSON rules object (keys sorted, as KataGo prints them).
    pub fn to_json(&self) -> Value {
        let mut v = self.to_json_no_komi();
        v["komi"] = json!(self.komi);
        v
    }

    /// KataGo's JSON rules object without komi.
    pub fn to_json_no_komi(&self) -> Value {
        json!({
            "ko": ko_name(self.ko),
            "scoring": scoring_name(self.scoring),
            "tax": tax_name(self.tax),
            "suicide": self.multi_stone_suicide,
            "hasButton": self.button,
            "whiteHandicapBonus": whb_name(self.white_handicap_bonus),
            "friendlyPassOk": self.friendly_pass_ok,
        })
    }

    /// Reads KataGo's JSON rules object (missing keys take Tromp-Taylor defaults;
    /// tax and komi defaults follow the scoring rule and button, as KataGo's do).
    pub fn from_json(v: &Value, allow_komi: bool) -> Result<Rules, RulesError> {
        let obj = v
            .as_object()
            .ok_or_else(|| RulesError::Unparseable(v.to_string()))?;
        from_json_object(obj, allow_komi)
    }

    /// The compact form without komi, e.g. `koSIMPLEscoreAREAtaxNONEsui0whbNfpok1`.
    pub fn compact_no_komi(&self) -> String {
        let mut s = format!(
            "ko{}score{}tax{}sui{}",
            ko_name(self.ko),
            scoring_name(self.scoring),
            tax_name(self.tax),
            self.multi_stone_suicide as u8
        );
        if self.button {
            s.push_str("button1");
        }
        if self.white_handicap_bonus != HandicapBonus::Zero {
            s.push_str("whb");
            s.push_str(whb_name(self.white_handicap_bonus));
        }
        if self.friendly_pass_ok {
            s.push_str("fpok1");
        }
        s
    }
}

impl fmt::Display for Rules {
    /// The compact form with komi, e.g. `koPOSITIONALscoreAREAtaxNONEsui1komi7.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}komi{}", self.compact_no_komi(), self.komi)
    }
}

fn ko_name(k: KoRule) -> &'static str {
    match k {
        KoRule::Simple => "SIMPLE",
        KoRule::Positional => "POSITIONAL",
        KoRule::Situational => "SITUATIONAL",
        KoRule::Spight => "SPIGHT",
    }
}
fn scoring_name(s: ScoringRule) -> &'static str {
    match s {
        ScoringRule::Area => "AREA",
        ScoringRule::Territory => "TERRITORY",
    }
}
fn tax_name(t: TaxRule) -> &'static str {
    match t {
        TaxRule::None => "NONE",
        TaxRule::Seki => "SEKI",
        TaxRule::All => "ALL",
    }
}
fn whb_name(w: HandicapBonus) -> &'static str {
    match w {
        HandicapBonus::Zero => "0",
        HandicapBonus::N => "N",
        HandicapBonus::NMinusOne => "N-1",
    }
}
fn parse_ko(s: &str) -> Option<KoRule> {
    [
        KoRule::Simple,
        KoRule::Positional,
        KoRule::Situational,
        KoRule::Spight,
    ]
    .into_iter()
    .find(|&k| ko_name(k) == s)
}
fn parse_scoring(s: &str) -> Option<ScoringRule> {
    [ScoringRule::Area, ScoringRule::Territory]
        .into_iter()
        .find(|&k| scoring_name(k) == s)
}
fn parse_tax(s: &str) -> Option<TaxRule> {
    [TaxRule::None, TaxRule::Seki, TaxRule::All]
        .into_iter()
        .find(|&k| tax_name(k) == s)
}
fn parse_whb(s: &str) -> Option<HandicapBonus> {
    [
        HandicapBonus::Zero,
        HandicapBonus::N,
        HandicapBonus::NMinusOne,
    ]
    .into_iter()
    .find(|&k| whb_name(k) == s)
}

/// After an explicit (non-preset) rules text: tax and komi defaults that depend on other options.
fn apply_defaults(r: &mut Rules, tax_given: bool, komi_given: bool) {
    if !tax_given {
        r.tax = if r.scoring == ScoringRule::Territory {
            TaxRule::Seki
        } else {
            TaxRule::None
        };
    }
    if !komi_given {
        if r.scoring == ScoringRule::Territory {
            r.komi = 6.5;
        } else if r.button {
            r.komi = 7.0;
        }
    }
}

fn from_json_object(obj: &Map<String, Value>, allow_komi: bool) -> Result<Rules, RulesError> {
    let mut r = Rules::tromp_taylor();
    let (mut tax_given, mut komi_given) = (false, false);
    for (key, value) in obj {
        let bad = || RulesError::BadValue {
            key: key.clone(),
            value: value.to_string(),
        };
        let string = || value.as_str().ok_or_else(bad);
        let boolean = || value.as_bool().ok_or_else(bad);
        match key.as_str() {
            "ko" => r.ko = parse_ko(string()?).ok_or_else(bad)?,
            "score" | "scoring" => r.scoring = parse_scoring(string()?).ok_or_else(bad)?,
            "tax" => {
                r.tax = parse_tax(string()?).ok_or_else(bad)?;
                tax_given = true;
            }
            "suicide" => r.multi_stone_suicide = boolean()?,
            "hasButton" => r.button = boolean()?,
            "whiteHandicapBonus" => {
                r.white_handicap_bonus = parse_whb(string()?).ok_or_else(bad)?
            }
            "friendlyPassOk" => r.friendly_pass_ok = boolean()?,
            "komi" if allow_komi => {
                let k = value.as_f64().ok_or_else(bad)?;
                if !komi_is_valid(k) {
                    return Err(RulesError::BadKomi(k));
                }
                r.komi = k as f32;
                komi_given = true;
            }
            _ => return Err(RulesError::UnknownKey(key.clone())),
        }
    }
    apply_defaults(&mut r, tax_given, komi_given);
    Ok(r)
}

fn parse_rules(text: &str, allow_komi: bool) -> Result<Rules, RulesError> {
    if let Some(r) = Rules::preset(text) {
        return Ok(r);
    }
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        let v: Value =
            serde_json::from_str(trimmed).map_err(|_| RulesError::Unparseable(text.to_string()))?;
        return Rules::from_json(&v, allow_komi);
    }
    parse_compact(text, allow_komi)
}

/// The compact form: a run of `ko…`, `score…`/`scoring…`, `tax…`, `sui0/1`, `button0/1`,
/// `whb0/N/N-1`, `fpok0/1` and `komi<number>` in any order.
fn parse_compact(text: &str, allow_komi: bool) -> Result<Rules, RulesError> {
    let err = || RulesError::Unparseable(text.to_string());
    let mut s = text.trim();
    if s.is_empty() {
        return Err(err());
    }
    let mut r = Rules::tromp_taylor();
    let (mut tax_given, mut komi_given) = (false, false);
    fn take(s: &mut &str, prefix: &str) -> bool {
        match s.strip_prefix(prefix) {
            Some(rest) => {
                *s = rest.trim_start();
                true
            }
            None => false,
        }
    }
    fn choose<T: Copy>(s: &mut &str, options: &[(&str, T)]) -> Option<T> {
        options.iter().find(|(p, _)| take(s, p)).map(|&(_, v)| v)
    }
    while !s.is_empty() {
        if take(&mut s, "komi") {
            if !allow_komi {
                return Err(err());
            }
            let end = s
                .find(|c: char| c.is_ascii_alphabetic() || c.is_whitespace())
                .unwrap_or(s.len());
            let k: f64 = s[..end].parse().map_err(|_| err())?;
            if !k.is_finite() || k.abs() > 1e5 {
                return Err(err());
            }
            r.komi = k as f32;
            komi_given = true;
            s = s[end..].trim_start();
        } else if take(&mut s, "ko") {
            r.ko = choose(
                &mut s,
                &[
                    ("SIMPLE", KoRule::Simple),
                    ("POSITIONAL", KoRule::Positional),
                    ("SITUATIONAL", KoRule::Situational),
                    ("SPIGHT", KoRule::Spight),
                ],
            )
            .ok_or_else(err)?;
        } else if take(&mut s, "scoring") || take(&mut s, "score") {
            r.scoring = choose(
                &mut s,
                &[
                    ("AREA", ScoringRule::Area),
                    ("TERRITORY", ScoringRule::Territory),
                ],
            )
            .ok_or_else(err)?;
        } else if take(&mut s, "tax") {
            r.tax = choose(
                &mut s,
                &[
                    ("NONE", TaxRule::None),
                    ("SEKI", TaxRule::Seki),
                    ("ALL", TaxRule::All),
                ],
            )
            .ok_or_else(err)?;
            tax_given = true;
        } else if take(&mut s, "sui") {
            r.multi_stone_suicide = choose(&mut s, &[("1", true), ("0", false)]).ok_or_else(err)?;
        } else if take(&mut s, "button") {
            r.button = choose(&mut s, &[("1", true), ("0", false)]).ok_or_else(err)?;
        } else if take(&mut s, "whb") {
            r.white_handicap_bonus = choose(
                &mut s,
                &[
                    ("0", HandicapBonus::Zero),
                    ("N-1", HandicapBonus::NMinusOne),
                    ("N", HandicapBonus::N),
                ],
            )
            .ok_or_else(err)?;
        } else if take(&mut s, "fpok") {
            r.friendly_pass_ok = choose(&mut s, &[("1", true), ("0", false)]).ok_or_else(err)?;
        } else {
            return Err(err());
        }
    }
    apply_defaults(&mut r, tax_given, komi_given);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRESETS: [&str; 15] = [
        "tromp-taylor",
        "chinese",
        "chinese-ogs",
        "chinese-kgs",
        "japanese",
        "korean",
        "stone-scoring",
        "ancient-territory",
        "aga",
        "bga",
        "french",
        "new-zealand",
        "aga-button",
        "goe",
        "ing",
    ];

    #[test]
    fn presets_round_trip_through_json_and_compact() {
        for name in PRESETS {
            let r = Rules::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            let via_json = Rules::parse(&r.to_json().to_string()).unwrap();
            assert_eq!(via_json, r, "{name} via json");
            let via_compact = Rules::parse(&r.to_string()).unwrap();
            assert_eq!(via_compact, r, "{name} via compact {r}");
            assert_eq!(Rules::parse(&name.to_uppercase()).unwrap(), r);
        }
    }

    #[test]
    fn preset_contents() {
        let j = Rules::parse("Japanese").unwrap();
        assert_eq!(
            (j.ko, j.scoring, j.tax, j.komi),
            (KoRule::Simple, ScoringRule::Territory, TaxRule::Seki, 6.5)
        );
        let aga = Rules::parse("aga").unwrap();
        assert_eq!(aga.white_handicap_bonus, HandicapBonus::NMinusOne);
        assert_eq!(aga.ko, KoRule::Situational);
        assert!(Rules::parse("aga_button").unwrap().button);
        assert_eq!(Rules::parse("stone scoring").unwrap().tax, TaxRule::All);
        assert_eq!(Rules::chinese().nice_name(), Some("Chinese"));
        assert_eq!(
            Rules::parse("korean").unwrap().nice_name(),
            Some("Japanese")
        );
        assert_eq!(Rules::parse("aga-button").unwrap().nice_name(), None);
    }

    #[test]
    fn json_shape_matches_katago() {
        let s = Rules::tromp_taylor().to_json().to_string();
        assert_eq!(
            s,
            r#"{"friendlyPassOk":false,"hasButton":false,"ko":"POSITIONAL","komi":7.5,"scoring":"AREA","suicide":true,"tax":"NONE","whiteHandicapBonus":"0"}"#
        );
        assert_eq!(
            Rules::chinese().to_string(),
            "koSIMPLEscoreAREAtaxNONEsui0whbNfpok1komi7.5"
        );
    }

    #[test]
    fn defaults_and_errors() {
        let r = Rules::parse(r#"{"scoring":"TERRITORY"}"#).unwrap();
        assert_eq!(
            (r.tax, r.komi, r.ko),
            (TaxRule::Seki, 6.5, KoRule::Positional)
        );
        let r = Rules::parse("koSIMPLEscoreAREAbutton1").unwrap();
        assert_eq!(r.komi, 7.0);
        assert!(matches!(
            Rules::parse(r#"{"foo":1}"#),
            Err(RulesError::UnknownKey(_))
        ));
        assert!(matches!(
            Rules::parse(r#"{"ko":"BIG"}"#),
            Err(RulesError::BadValue { .. })
        ));
        assert!(matches!(
            Rules::parse(r#"{"komi":7.3}"#),
            Err(RulesError::BadKomi(_))
        ));
        assert!(Rules::parse_with_komi(r#"{"komi":7}"#, 5.0).is_err());
        assert!(Rules::parse("").is_err());
        assert!(Rules::parse("{").is_err());
        assert!(Rules::parse("koNOPE").is_err());
        assert!(Rules::parse("nonsense").is_err());
        assert_eq!(Rules::parse("komi-3.5koSIMPLE").unwrap().komi, -3.5);
        let u = Rules::japanese().update("tax", "all").unwrap();
        assert_eq!(u.tax, TaxRule::All);
        assert!(Rules::japanese().update("colour", "x").is_err());
    }
}
