//! The values of GTP's time-setting commands (`time_settings`, `kgs-time_settings`,
//! `kata-time_settings`), checked and made into a [`Clock`]; errors carry the whole reply text.

use tengen_search::{Clock, ClockError, MAX_INPUT_TIME};

const GTP: &str = "time_settings";
const KGS: &str = "kgs-time_settings";
const KATA: &str = "kata-time_settings";
const SECONDS: &str = "a finite number of seconds >= 0 (at most 1e25)";
const COUNT: &str = "a whole number from 0 to 1000000";
const MAX_SETTING_COUNT: i64 = 1_000_000;

/// GTP `time_settings main byo_yomi_time byo_yomi_stones`, its values read by
/// [`super::command`]: 0 stones with positive byo-yomi time means no limit (GTP v2),
/// byo-yomi time 0 means absolute, else Canadian.
pub fn time_settings(main: f64, byo_time: f64, byo_stones: i64) -> Result<Clock, ClockError> {
    let main = check_time(GTP, "main time", main)?;
    let byo_time = check_time(GTP, "byo-yomi time", byo_time)?;
    let stones = check_count(GTP, "byo-yomi stones", byo_stones)?;
    Ok(gtp_rule(main, byo_time, stones))
}

/// `kgs-time_settings none | absolute M | byoyomi M T N | canadian M T S`, given the words after the command.
pub fn kgs_time_settings(args: &[&str]) -> Result<Clock, ClockError> {
    parse_named(KGS, args)
}

/// `kata-time_settings`: the KGS forms plus `fischer M I` and `fischer-capped M I L P` (negative L or P: no cap).
pub fn kata_time_settings(args: &[&str]) -> Result<Clock, ClockError> {
    parse_named(KATA, args)
}

/// Accepts a setting time in [0, 1e25]; NaN fails the range test too.
fn check_time(command: &'static str, what: &'static str, t: f64) -> Result<f64, ClockError> {
    if (0.0..=MAX_INPUT_TIME).contains(&t) {
        Ok(t)
    } else {
        Err(ClockError::bad_value(command, what, t, SECONDS))
    }
}

fn check_count(command: &'static str, what: &'static str, n: i64) -> Result<u32, ClockError> {
    match u32::try_from(n) {
        Ok(count) if n <= MAX_SETTING_COUNT => Ok(count),
        _ => Err(ClockError::bad_value(command, what, n, COUNT)),
    }
}

/// `time_settings` semantics, shared with the `canadian` kind.
fn gtp_rule(main: f64, byo_time: f64, stones: u32) -> Clock {
    if stones == 0 && byo_time > 0.0 {
        Clock::unlimited()
    } else {
        Clock::canadian(main, byo_time, stones)
    }
}

/// The time systems, in KataGo's order: name, how many values follow it, and whether only
/// `kata-time_settings` takes it (`kgs-time_settings` takes the others).
const SYSTEMS: &[(&str, usize, bool)] = &[
    ("none", 0, false),
    ("absolute", 1, false),
    ("byoyomi", 3, false),
    ("canadian", 3, false),
    ("fischer", 2, true),
    ("fischer-capped", 4, true),
];

/// The systems `kata-time_settings` takes, in KataGo's order (`kata-list_time_settings`).
pub fn kata_time_systems() -> impl Iterator<Item = &'static str> {
    SYSTEMS.iter().map(|&(name, _, _)| name)
}

fn parse_named(command: &'static str, args: &[&str]) -> Result<Clock, ClockError> {
    let systems: Vec<(&str, usize)> = SYSTEMS
        .iter()
        .filter(|&&(_, _, kata_only)| command == KATA || !kata_only)
        .map(|&(name, values, _)| (name, values))
        .collect();
    let kinds = match systems.split_last() {
        Some(((last, _), rest)) => {
            let rest: Vec<&str> = rest.iter().map(|&(n, _)| n).collect();
            format!("{} or {last}", rest.join(", "))
        }
        None => String::new(),
    };
    let syntax = |detail: String| ClockError::Syntax(format!("{command}: {detail}"));
    let Some((first, rest)) = args.split_first() else {
        return Err(syntax(format!("expected {kinds}")));
    };
    let kind = first.trim().to_ascii_lowercase();
    let Some(&(_, expected)) = systems.iter().find(|&&(name, _)| name == kind) else {
        return Err(syntax(format!("unknown kind '{kind}', expected {kinds}")));
    };
    if rest.len() != expected {
        let n = rest.len();
        return Err(syntax(format!(
            "'{kind}' takes {expected} value(s), got {n}"
        )));
    }
    let number = |i: usize, what| {
        rest[i]
            .trim()
            .parse::<f64>()
            .map_err(|_| ClockError::bad_value(command, what, rest[i], SECONDS))
    };
    let time = |i, what| number(i, what).and_then(|t| check_time(command, what, t));
    let count = |i: usize, what| match rest[i].trim().parse::<i64>() {
        Ok(n) => check_count(command, what, n),
        Err(_) => Err(ClockError::bad_value(command, what, rest[i], COUNT)),
    };
    // fischer-capped: a negative cap means "no cap".
    let cap = |i, what| match number(i, what)? {
        t if (-MAX_INPUT_TIME..0.0).contains(&t) => Ok(None),
        t => check_time(command, what, t).map(Some),
    };
    Ok(match kind.as_str() {
        "none" => Clock::unlimited(),
        "absolute" => Clock::absolute(time(0, "main time")?),
        "fischer" => Clock::fischer(time(0, "main time")?, time(1, "increment")?),
        "byoyomi" => Clock::byo_yomi(
            time(0, "main time")?,
            time(1, "byo-yomi period time")?,
            count(2, "byo-yomi periods")?,
        ),
        "canadian" => gtp_rule(
            time(0, "main time")?,
            time(1, "overtime period time")?,
            count(2, "overtime stones")?,
        ),
        _ => Clock::fischer_capped(
            time(0, "main time")?,
            time(1, "increment")?,
            cap(2, "main time limit")?,
            cap(3, "max time per move")?,
        )
        .map_err(|e| ClockError::Inconsistent(format!("{command}: {e}")))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<&str> {
        line.split_whitespace().collect()
    }

    fn kata(line: &str) -> Clock {
        kata_time_settings(&words(line)).unwrap()
    }

    fn gtp(line: &str) -> Result<Clock, ClockError> {
        let [m, b, s] = words(line)[..] else {
            panic!("three values: {line}");
        };
        time_settings(m.parse().unwrap(), b.parse().unwrap(), s.parse().unwrap())
    }

    #[test]
    fn gtp_time_settings_forms() {
        assert_eq!(gtp("60 0 0"), Ok(Clock::absolute(60.0)));
        // GTP v2: positive byo-yomi time with zero stones means no limit.
        assert!(gtp("60 10 0").unwrap().is_unlimited());
        assert_eq!(gtp("60 10 3"), Ok(Clock::canadian(60.0, 10.0, 3)));
        assert_eq!(gtp("0 10 1"), Ok(Clock::canadian(0.0, 10.0, 1)));
    }

    #[test]
    fn kgs_and_kata_forms() {
        assert!(kgs_time_settings(&["none"]).unwrap().is_unlimited());
        assert_eq!(
            kgs_time_settings(&["Absolute", "300"]),
            Ok(Clock::absolute(300.0))
        );
        let b = kgs_time_settings(&words("byoyomi 600 30 5"));
        assert_eq!(b, Ok(Clock::byo_yomi(600.0, 30.0, 5)));
        let c = kgs_time_settings(&words("canadian 600 300 25"));
        assert_eq!(c, Ok(Clock::canadian(600.0, 300.0, 25)));
        // Zero periods or stones: absolute, or no limit as in time_settings.
        assert_eq!(kata("byoyomi 60 30 0"), Clock::absolute(60.0));
        assert!(kata("canadian 5 10 0").is_unlimited());
        assert_eq!(kata("fischer 60 5"), Clock::fischer(60.0, 5.0));
        let fischer = kgs_time_settings(&["fischer", "60", "5"]); // a KataGo extension
        assert!(matches!(fischer, Err(ClockError::Syntax(_))));
    }

    #[test]
    fn fischer_capped_form() {
        let want = Clock::fischer_capped(60.0, 10.0, Some(60.0), None);
        assert_eq!(Ok(kata("fischer-capped 60 10 60 -1")), want);
        let want = Clock::fischer_capped(60.0, 10.0, None, Some(12.0));
        assert_eq!(Ok(kata("fischer-capped 60 10 -1 12")), want);
        let below = kata_time_settings(&words("fischer-capped 60 10 30 -1"));
        let Err(ClockError::Inconsistent(e)) = below else {
            panic!("{below:?}");
        };
        assert_eq!(
            e,
            "kata-time_settings: main time limit 30 is below main time 60"
        );
        let nan = kata_time_settings(&words("fischer-capped 60 1 nan -1"));
        assert!(matches!(nan, Err(ClockError::Value(_))));
    }

    #[test]
    fn bad_settings_are_errors() {
        for t in ["-1", "nan", "inf", "1e30"] {
            assert!(gtp(&format!("{t} 0 0")).is_err());
            assert!(gtp(&format!("0 {t} 1")).is_err());
        }
        assert!(gtp("60 10 -1").is_err());
        assert!(gtp("60 10 2000000").is_err());
        let bad = "|sudden-death 60|absolute|absolute 60 5|none 1|fischer 60|absolute sixty|\
                   absolute nan|absolute -5|absolute inf|byoyomi 60 30 2.5|canadian 60 30 -3|\
                   byoyomi 60 30 2000000";
        for line in bad.split('|') {
            assert!(kgs_time_settings(&words(line)).is_err(), "{line}");
            assert!(kata_time_settings(&words(line)).is_err(), "{line}");
        }
    }

    #[test]
    fn kata_lists_every_system_it_takes_and_kgs_the_first_four() {
        let all: Vec<&str> = kata_time_systems().collect();
        assert_eq!(
            all,
            [
                "none",
                "absolute",
                "byoyomi",
                "canadian",
                "fischer",
                "fischer-capped"
            ]
        );
        let sample = |s: &str| match s {
            "none" => "none".to_string(),
            "absolute" => "absolute 60".into(),
            "fischer" => "fischer 60 5".into(),
            "fischer-capped" => "fischer-capped 60 5 -1 -1".into(),
            other => format!("{other} 60 30 5"),
        };
        for s in all {
            assert!(kata_time_settings(&words(&sample(s))).is_ok(), "{s}");
            let kgs = kgs_time_settings(&words(&sample(s))).is_ok();
            assert_eq!(kgs, !s.starts_with("fischer"), "{s}");
        }
    }

    #[test]
    fn error_messages_name_the_command() {
        let e = gtp("-1 0 0").unwrap_err().to_string();
        let want = "time_settings: main time must be a finite number of seconds >= 0";
        assert!(e.starts_with(want), "{e}");
        let e = kata_time_settings(&["hourglass"]).unwrap_err().to_string();
        assert!(
            e.starts_with("kata-time_settings: unknown kind 'hourglass'"),
            "{e}"
        );
        assert!(e.contains("fischer-capped"), "{e}");
        let e = kgs_time_settings(&["byoyomi", "1"])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "kgs-time_settings: 'byoyomi' takes 3 value(s), got 1");
    }
}
