//! Game clocks as GTP controllers describe them, and how long to think per move.
//!
//! The model and budgeting rules follow KataGo's `TimeControls`: one clock covers
//! unlimited, absolute, Fischer (optionally capped), Japanese byo-yomi (N periods
//! of one stone) and Canadian overtime (one period of S stones). [`Clock::budget`]
//! turns what is left into min / recommended / max thinking times, and
//! [`Clock::round_up_limit`] keeps the search from stopping early when the rest
//! of a byo-yomi period would be thrown away anyway.

use std::fmt;

/// Largest time a controller may send; anything above is garbage.
const MAX_INPUT_TIME: f64 = 1e25;
/// Clocks with more than this left impose no practical limit.
const UNLIMITED_THRESHOLD: f64 = 1e20;
/// `time_left` may run a little negative when the controller's clock lags ours.
const TIME_LEFT_SLACK: f64 = 10.0;
const MAX_SETTING_COUNT: i64 = 1_000_000;
const MAX_TIME_LEFT_COUNT: i64 = 100_000;
/// Byo-yomi periods beyond this many are spent as if they were main time.
const RESERVED_PERIODS: u32 = 5;

const GTP: &str = "time_settings";
const KGS: &str = "kgs-time_settings";
const KATA: &str = "kata-time_settings";
const TIME_LEFT: &str = "time_left";
const SECONDS: &str = "a finite number of seconds >= 0 (at most 1e25)";
const COUNT: &str = "a whole number from 0 to 1000000";

/// A game clock as GTP sets it, and what is left on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    increment: f64,
    /// Fischer-capped: main time never grows past this (infinite when uncapped).
    main_cap: f64,
    /// Fischer-capped: hard limit for one move (infinite when uncapped).
    max_per_move: f64,
    /// Overtime periods in the setting; 0 for unlimited, absolute and Fischer.
    periods: u32,
    stones_per_period: u32,
    period_time: f64,
    main_left: f64,
    in_overtime: bool,
    /// Periods left, counting the one in use.
    periods_left: u32,
    stones_left: u32,
    period_left: f64,
}

/// How long to think about one move, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeBudget {
    /// Stopping before this wastes time that cannot be used later.
    pub min: f64,
    /// The time to aim for on an ordinary move.
    pub recommended: f64,
    /// Going past this risks losing on time.
    pub max: f64,
}

impl TimeBudget {
    /// The budget of a clock without limit: no minimum, no ceiling.
    pub const UNLIMITED: TimeBudget = TimeBudget {
        min: 0.0,
        recommended: f64::INFINITY,
        max: f64::INFINITY,
    };
}

/// Why a time setting or `time_left` was rejected; each carries the whole message for the GTP reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ClockError {
    /// The words after the command do not form a setting it knows.
    Syntax(String),
    /// A time or count is not a number or is out of range.
    Value(String),
    /// The values are valid alone but describe an impossible clock.
    Inconsistent(String),
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::Syntax(m) | ClockError::Value(m) | ClockError::Inconsistent(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for ClockError {}

fn bad_value(command: &str, what: &str, word: impl fmt::Display, allowed: &str) -> ClockError {
    ClockError::Value(format!("{command}: {what} must be {allowed}, got '{word}'"))
}

/// Accepts a setting time in [0, 1e25]; NaN fails the range test too.
fn check_time(command: &'static str, what: &'static str, t: f64) -> Result<f64, ClockError> {
    if (0.0..=MAX_INPUT_TIME).contains(&t) {
        Ok(t)
    } else {
        Err(bad_value(command, what, t, SECONDS))
    }
}

fn check_count(command: &'static str, what: &'static str, n: i64) -> Result<u32, ClockError> {
    match u32::try_from(n) {
        Ok(count) if n <= MAX_SETTING_COUNT => Ok(count),
        _ => Err(bad_value(command, what, n, COUNT)),
    }
}

/// Clamps programmatic input into the range the parsers accept.
fn clamp_time(t: f64) -> f64 {
    if t > 0.0 {
        t.min(MAX_INPUT_TIME)
    } else {
        0.0 // also NaN
    }
}

/// Keeps a margin for network and GUI lag, but never more than half of a
/// short time, so a nearly empty clock still gets some thought.
fn apply_lag(time: f64, lag: f64) -> f64 {
    if time < 0.0 {
        time
    } else if time < 2.0 * lag {
        time * 0.5
    } else {
        time - lag
    }
}

/// Rough count of our own moves still to come, per time-control family.
struct TurnsLeft {
    absolute: f64,
    fischer: f64,
    byo_yomi: f64,
}

impl TurnsLeft {
    fn new(board_area: usize, stones_on_board: usize) -> TurnsLeft {
        let (area, stones) = (board_area as f64, stones_on_board as f64);
        // Expected game length minus the stones already down, floored so the
        // endgame still gets a share; halved as we play every other move.
        // Byo-yomi plans to run out of main time sooner than the others.
        let left = |length: f64, floor: f64| (length - stones).max(floor) * 0.5;
        TurnsLeft {
            absolute: left(0.95 * area + 20.0, 0.15 * area + 30.0),
            fischer: left(0.75 * area + 15.0, 0.10 * area + 20.0),
            byo_yomi: left(0.50 * area + 10.0, 0.02 * area + 4.0),
        }
    }
}

impl Clock {
    fn with_main(main: f64) -> Clock {
        Clock {
            increment: 0.0,
            main_cap: f64::INFINITY,
            max_per_move: f64::INFINITY,
            periods: 0,
            stones_per_period: 0,
            period_time: 0.0,
            main_left: main,
            in_overtime: false,
            periods_left: 0,
            stones_left: 0,
            period_left: 0.0,
        }
    }

    fn with_overtime(main: f64, period: f64, periods: u32, stones: u32) -> Clock {
        if periods == 0 || stones == 0 {
            return Clock::absolute(main);
        }
        Clock {
            periods,
            stones_per_period: stones,
            period_time: clamp_time(period),
            periods_left: periods,
            ..Clock::absolute(main)
        }
    }

    /// No time limit at all.
    pub fn unlimited() -> Clock {
        Clock::with_main(f64::INFINITY)
    }

    /// `main` seconds for the whole game (negative or NaN reads as 0).
    pub fn absolute(main: f64) -> Clock {
        Clock::with_main(clamp_time(main))
    }

    /// `main` seconds, plus `increment` seconds after each move.
    pub fn fischer(main: f64, increment: f64) -> Clock {
        let increment = clamp_time(increment);
        Clock {
            increment,
            ..Clock::absolute(main)
        }
    }

    /// Fischer whose main time never exceeds `main_cap` and whose moves never exceed `max_per_move`.
    pub fn fischer_capped(
        main: f64,
        increment: f64,
        main_cap: Option<f64>,
        max_per_move: Option<f64>,
    ) -> Result<Clock, ClockError> {
        let clock = Clock::fischer(main, increment);
        let main_cap = main_cap.map_or(f64::INFINITY, clamp_time);
        if main_cap < clock.main_left {
            let main = clock.main_left;
            return Err(ClockError::Inconsistent(format!(
                "{KATA}: main time limit {main_cap} is below main time {main}"
            )));
        }
        let max_per_move = max_per_move.map_or(f64::INFINITY, clamp_time);
        Ok(Clock {
            main_cap,
            max_per_move,
            ..clock
        })
    }

    /// Japanese byo-yomi: `periods` periods of `period` seconds, one move each; 0 periods is absolute.
    pub fn byo_yomi(main: f64, period: f64, periods: u32) -> Clock {
        Clock::with_overtime(main, period, periods, 1)
    }

    /// Canadian overtime: `stones` moves in each `period` seconds; 0 stones is absolute.
    pub fn canadian(main: f64, period: f64, stones: u32) -> Clock {
        Clock::with_overtime(main, period, 1, stones)
    }

    /// GTP `time_settings main byo_yomi_time byo_yomi_stones`: 0 stones with positive byo-yomi time means no limit (GTP v2), byo-yomi time 0 means absolute, else Canadian.
    pub fn from_gtp(main: f64, byo_time: f64, byo_stones: i64) -> Result<Clock, ClockError> {
        let main = check_time(GTP, "main time", main)?;
        let byo_time = check_time(GTP, "byo-yomi time", byo_time)?;
        let stones = check_count(GTP, "byo-yomi stones", byo_stones)?;
        Ok(gtp_rule(main, byo_time, stones))
    }

    /// `kgs-time_settings none | absolute M | byoyomi M T N | canadian M T S`, given the words after the command.
    pub fn from_kgs(args: &[&str]) -> Result<Clock, ClockError> {
        parse_named(KGS, args)
    }

    /// `kata-time_settings`: the KGS forms plus `fischer M I` and `fischer-capped M I L P` (negative L or P: no cap).
    pub fn from_kata(args: &[&str]) -> Result<Clock, ClockError> {
        parse_named(KATA, args)
    }

    /// GTP `time_left seconds stones`: 0 stones is main time; otherwise overtime with that many stones left (periods left for KGS-style byo-yomi).
    pub fn set_time_left(&mut self, seconds: f64, stones: i64) -> Result<(), ClockError> {
        if !(-TIME_LEFT_SLACK..=MAX_INPUT_TIME).contains(&seconds) {
            let allowed = "a finite number of seconds >= -10 (at most 1e25)";
            return Err(bad_value(TIME_LEFT, "time", seconds, allowed));
        }
        let count = match u32::try_from(stones) {
            Ok(n) if stones <= MAX_TIME_LEFT_COUNT => n,
            _ => {
                let allowed = "a whole number from 0 to 100000";
                return Err(bad_value(TIME_LEFT, "stones", stones, allowed));
            }
        };
        if count == 0 {
            // As in KataGo this also makes an unlimited clock absolute: the
            // controller is telling us what is really on the clock.
            self.main_left = seconds;
            self.in_overtime = false;
            self.periods_left = self.periods;
            self.stones_left = 0;
            self.period_left = 0.0;
            return Ok(());
        }
        if self.periods == 0 {
            return Err(ClockError::Inconsistent(format!(
                "{TIME_LEFT}: {stones} overtime stones given, but the clock has no overtime"
            )));
        }
        self.main_left = 0.0;
        self.in_overtime = true;
        self.period_left = seconds;
        if self.periods > 1 && self.stones_per_period == 1 {
            // KGS sends the periods left in the stones slot for Japanese byo-yomi.
            self.periods_left = count.min(self.periods);
            self.stones_left = 1;
        } else {
            self.periods_left = 1;
            self.stones_left = count.min(self.stones_per_period);
        }
        Ok(())
    }

    /// Charges `used` seconds for one of our moves, so the clock stays sensible without `time_left`.
    pub fn charge(&mut self, used: f64) {
        let used = clamp_time(used);
        if self.periods == 0 {
            self.main_left = (self.main_left - used + self.increment).min(self.main_cap);
            return;
        }
        let now = self.project(used);
        if !now.in_overtime {
            self.main_left = now.main_left;
            return;
        }
        // A period entered by running out of the previous one starts with a full quota.
        let rolled = now.periods_left < self.periods_left;
        *self = Clock {
            main_left: 0.0,
            ..now
        };
        if rolled {
            self.stones_left = self.stones_per_period;
        }
        if self.period_left < 0.0 {
            return; // Lost on time; keep the deficit visible.
        }
        if self.stones_left <= 1 {
            // The quota was met in time, so the period starts over.
            self.stones_left = self.stones_per_period;
            self.period_left = self.period_time;
        } else {
            self.stones_left -= 1;
        }
    }

    /// True when the clock imposes no practical limit.
    pub fn is_unlimited(&self) -> bool {
        (self.main_left > UNLIMITED_THRESHOLD
            || (self.in_overtime && self.period_left > UNLIMITED_THRESHOLD))
            && self.max_per_move > UNLIMITED_THRESHOLD
    }

    /// Main time left in seconds (infinite when unlimited, 0 in overtime).
    pub fn main_time_left(&self) -> f64 {
        self.main_left
    }

    /// In overtime: (periods left counting the current one, stones left in it, seconds left in it).
    pub fn overtime(&self) -> Option<(u32, u32, f64)> {
        let state = (self.periods_left, self.stones_left, self.period_left);
        self.in_overtime.then_some(state)
    }

    /// KataGo's getTime: thinking time for our next move from the board area, the stones on the board and a lag buffer in seconds.
    pub fn budget(&self, board_area: usize, stones_on_board: usize, lag_buffer: f64) -> TimeBudget {
        if self.is_unlimited() {
            return TimeBudget::UNLIMITED;
        }
        let mut lag = lag_buffer.max(0.0); // NaN becomes 0 too
        let turns = TurnsLeft::new(board_area, stones_on_board);
        let (min, rec, max) = if self.periods == 0 {
            self.fischer_budget(&turns, lag)
        } else {
            self.overtime_budget(&turns, &mut lag)
        };
        let max = apply_lag(max.min(self.max_per_move), lag).max(0.0);
        let min = apply_lag(min, lag).max(0.0).min(max);
        let recommended = apply_lag(rec, lag).max(0.0).min(max);
        TimeBudget {
            min,
            recommended,
            max,
        }
    }

    /// KataGo's roundUpTimeLimitIfNeeded: raises `limit` when stopping there, `used` seconds in, would waste byo-yomi time.
    pub fn round_up_limit(&self, lag_buffer: f64, used: f64, limit: f64) -> f64 {
        if self.periods == 0 {
            return limit;
        }
        let lag = lag_buffer.max(0.0);
        let used = if used.is_nan() { 0.0 } else { used };
        let now = self.project(used);
        let (main, period_left) = (now.main_left, now.period_left);
        let stones_per = f64::from(self.stones_per_period);
        let per_move = self.period_time / stones_per;
        let per_move_buffered = apply_lag(per_move, lag);
        // A small step past a boundary: about the lag, at most one move's share.
        let bit = lag.max(per_move_buffered * 0.01).min(per_move_buffered);

        let rounded = if !now.in_overtime {
            if main >= per_move * 0.5 {
                return limit;
            }
            // Main time is nearly gone: finish it, and in byo-yomi use the
            // period as well, since it comes back in full after the move.
            main + used
                + if self.stones_per_period <= 1 {
                    per_move_buffered
                } else {
                    bit
                }
        } else if period_left <= 0.0 {
            return limit; // Probably lost on time already; rounding cannot help.
        } else if now.stones_left > 1 {
            // Having just crossed into Canadian overtime, make sure the move
            // lands inside the period so it counts as one of its stones.
            let spent = self.period_time - period_left;
            if self.in_overtime || spent >= bit {
                return limit;
            }
            used + bit - spent
        } else {
            // Last stone of the period: what is left of it is lost unless spent now.
            apply_lag(used + period_left, lag)
        };
        if rounded < used {
            limit
        } else {
            limit.max(rounded)
        }
    }

    /// Where the clock will stand `used` seconds from now, carrying a negative
    /// main or period balance into the following periods (the last one is kept).
    fn project(&self, used: f64) -> Clock {
        let mut c = self.clone();
        if c.in_overtime {
            c.period_left -= used;
        } else {
            c.main_left -= used;
        }
        if c.main_left < 0.0 && !c.in_overtime {
            c.in_overtime = true;
            c.period_left = c.main_left + c.period_time;
            c.stones_left = c.stones_per_period;
        }
        if c.in_overtime && c.period_left < 0.0 && c.periods_left > 1 {
            let needed = (-c.period_left / c.period_time).ceil(); // inf when periods are 0 s
            let burnt = f64::from(c.periods_left - 1).min(needed) as u32;
            c.periods_left -= burnt;
            c.period_left += f64::from(burnt) * c.period_time;
        }
        c
    }

    fn fischer_budget(&self, turns: &TurnsLeft, lag: f64) -> (f64, f64, f64) {
        let (main, inc) = (self.main_left, self.increment);
        // With a cap, whatever the increment would push past it is wasted.
        let min = (main * 0.5)
            .max(0.0)
            .min((main + inc - self.main_cap).max(0.0));
        if main <= inc {
            return (min, apply_lag(main, lag), main);
        }
        // Spend the increment each move and spread the surplus over the game;
        // the surplus is lag-buffered twice on purpose.
        let surplus = apply_lag(main - inc, lag);
        let share = (surplus / turns.fischer).min(surplus / turns.absolute + 2.0 * inc);
        (min, inc + share, main.min(inc + surplus / 5.0))
    }

    fn overtime_budget(&self, turns: &TurnsLeft, lag: &mut f64) -> (f64, f64, f64) {
        let stones_per = f64::from(self.stones_per_period);
        let now = self.project(0.0);
        let (mut main, mut overtime) = (now.main_left, now.in_overtime);
        let (mut periods, mut period_left) = (now.periods_left, now.period_left);
        let stones = now.stones_left;
        if periods > RESERVED_PERIODS {
            // Periods beyond the reserve are as good as main time.
            let spare = f64::from(periods - RESERVED_PERIODS) * self.period_time;
            main += if self.in_overtime {
                period_left + spare - self.period_time
            } else {
                spare
            };
            overtime = false;
        }
        if !overtime {
            // The most we would ever spend on one move once in overtime.
            let large = self.period_time / (0.75 * stones_per + 0.25);
            let rec = self.byo_yomi_share(main, turns);
            let mut max = large + (large * 1.75).min(main).max(main / 5.0);
            if max > main && max < main + large {
                max = main + large; // Dipping into overtime anyway: allow a full move there.
            }
            if max > main && periods <= 1 && self.stones_per_period <= 1 {
                *lag *= 2.0; // Overrunning that one period loses the game.
            }
            return (0.0, rec, max);
        }
        // Far into the period with periods to spare (after a reconnect, say):
        // give up one period now to get real thinking time.
        let threshold = apply_lag(0.5 * self.period_time, *lag)
            * f64::from(periods.saturating_sub(1))
            / f64::from(RESERVED_PERIODS - 1);
        if periods > 1 && apply_lag(period_left, *lag) < threshold {
            periods -= 1;
            period_left += self.period_time;
        }
        let s = f64::from(stones.max(1));
        if periods <= 1 && stones <= 1 {
            *lag *= 2.0;
        }
        let min = if stones <= 1 { period_left } else { 0.0 };
        (min, period_left / s, period_left / (0.75 * s + 0.25))
    }

    /// One move's share of `time` (main time) when overtime follows.
    fn byo_yomi_share(&self, time: f64, turns: &TurnsLeft) -> f64 {
        let absolute_share = time / turns.absolute;
        if self.period_time <= 0.0 {
            return absolute_share;
        }
        let per_move = self.period_time / f64::from(self.stones_per_period);
        // If strength grows with log(thinking time), spending e times the
        // overtime rate until main time is gone is optimal: that lasts
        // time / (e * per_move) moves. Stretch this towards the expected game
        // length, but never plan slower than under absolute time.
        let optimal_turns = time / per_move * (-1.0f64).exp();
        let mut turns_to_use = optimal_turns;
        if turns.byo_yomi > optimal_turns {
            turns_to_use = turns.byo_yomi.min(optimal_turns * 1.75);
        }
        let turns_to_use = turns_to_use.min(turns.absolute).max(1.0);
        let share = (time / turns_to_use)
            .min(absolute_share + 3.0 * per_move)
            .max(per_move);
        if share < per_move * 1.5 && time < per_move * 1.5 {
            return time + per_move; // Nearly out: use it all and step into overtime.
        }
        share
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

fn parse_named(command: &'static str, args: &[&str]) -> Result<Clock, ClockError> {
    let kinds = if command == KATA {
        "none, absolute, byoyomi, canadian, fischer or fischer-capped"
    } else {
        "none, absolute, byoyomi or canadian"
    };
    let syntax = |detail: String| ClockError::Syntax(format!("{command}: {detail}"));
    let Some((first, rest)) = args.split_first() else {
        return Err(syntax(format!("expected {kinds}")));
    };
    let kind = first.trim().to_ascii_lowercase();
    let expected = match kind.as_str() {
        "none" => 0,
        "absolute" => 1,
        "fischer" if command == KATA => 2,
        "byoyomi" | "canadian" => 3,
        "fischer-capped" if command == KATA => 4,
        _ => return Err(syntax(format!("unknown kind '{kind}', expected {kinds}"))),
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
            .map_err(|_| bad_value(command, what, rest[i], SECONDS))
    };
    let time = |i, what| number(i, what).and_then(|t| check_time(command, what, t));
    let count = |i: usize, what| match rest[i].trim().parse::<i64>() {
        Ok(n) => check_count(command, what, n),
        Err(_) => Err(bad_value(command, what, rest[i], COUNT)),
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
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KataGo's GTP regression file uses an empty 19x19 board and a 1 s lag buffer.
    #[track_caller]
    fn check(clock: &Clock, min: f64, rec: f64, max: f64) {
        let b = clock.budget(361, 0, 1.0);
        let ok = [(b.min, min), (b.recommended, rec), (b.max, max)];
        let ok = ok.iter().all(|&(x, y)| close(x, y));
        assert!(ok, "got {b:?}, want {min} {rec} {max}");
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-4 * b.abs().max(1.0)
    }

    fn left(mut clock: Clock, seconds: f64, stones: i64) -> Clock {
        clock.set_time_left(seconds, stones).unwrap();
        clock
    }

    fn kgs(args: &str) -> Clock {
        Clock::from_kata(&args.split(' ').collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn gtp_time_settings_forms() {
        assert_eq!(Clock::from_gtp(60.0, 0.0, 0), Ok(Clock::absolute(60.0)));
        // GTP v2: positive byo-yomi time with zero stones means no limit.
        assert!(Clock::from_gtp(60.0, 10.0, 0).unwrap().is_unlimited());
        let c = Clock::from_gtp(60.0, 10.0, 3).unwrap();
        assert_eq!(c, Clock::canadian(60.0, 10.0, 3));
        assert_eq!(
            (c.periods, c.stones_per_period, c.period_time),
            (1, 3, 10.0)
        );
    }

    #[test]
    fn kgs_and_kata_forms() {
        assert!(Clock::from_kgs(&["none"]).unwrap().is_unlimited());
        assert_eq!(
            Clock::from_kgs(&["Absolute", "300"]),
            Ok(Clock::absolute(300.0))
        );
        let b = Clock::from_kgs(&["byoyomi", "600", "30", "5"]).unwrap();
        assert_eq!(
            (b.periods, b.stones_per_period, b.period_time),
            (5, 1, 30.0)
        );
        let c = Clock::from_kgs(&["canadian", "600", "300", "25"]).unwrap();
        assert_eq!((c.periods, c.stones_per_period), (1, 25));
        // Zero periods or stones: absolute, or no limit as in time_settings.
        assert_eq!(kgs("byoyomi 60 30 0"), Clock::absolute(60.0));
        assert!(kgs("canadian 5 10 0").is_unlimited());
        assert_eq!(kgs("fischer 60 5"), Clock::fischer(60.0, 5.0));
        let fischer = Clock::from_kgs(&["fischer", "60", "5"]); // a KataGo extension
        assert!(matches!(fischer, Err(ClockError::Syntax(_))));
    }

    #[test]
    fn fischer_capped_form() {
        let c = kgs("fischer-capped 60 10 60 -1");
        assert_eq!((c.main_cap, c.max_per_move), (60.0, f64::INFINITY));
        let c = kgs("fischer-capped 60 10 -1 12");
        assert_eq!((c.main_cap, c.max_per_move), (f64::INFINITY, 12.0));
        let below = Clock::from_kata(&["fischer-capped", "60", "10", "30", "-1"]);
        assert!(matches!(below, Err(ClockError::Inconsistent(_))));
        let nan = Clock::from_kata(&["fischer-capped", "60", "1", "nan", "-1"]);
        assert!(matches!(nan, Err(ClockError::Value(_))));
    }

    #[test]
    fn bad_settings_are_errors() {
        for t in [-1.0, f64::NAN, f64::INFINITY, 1e30] {
            assert!(Clock::from_gtp(t, 0.0, 0).is_err());
            assert!(Clock::from_gtp(0.0, t, 1).is_err());
        }
        assert!(Clock::from_gtp(60.0, 10.0, -1).is_err());
        assert!(Clock::from_gtp(60.0, 10.0, 2_000_000).is_err());
        let bad = "|sudden-death 60|absolute|absolute 60 5|none 1|fischer 60|absolute sixty|\
                   absolute nan|absolute -5|absolute inf|byoyomi 60 30 2.5|canadian 60 30 -3|\
                   byoyomi 60 30 2000000";
        for line in bad.split('|') {
            let args: Vec<&str> = line.split_whitespace().collect();
            assert!(Clock::from_kgs(&args).is_err(), "{line}");
            assert!(Clock::from_kata(&args).is_err(), "{line}");
        }
    }

    #[test]
    fn error_messages_name_the_command() {
        let e = Clock::from_gtp(-1.0, 0.0, 0).unwrap_err().to_string();
        let want = "time_settings: main time must be a finite number of seconds >= 0";
        assert!(e.starts_with(want), "{e}");
        let e = Clock::from_kata(&["hourglass"]).unwrap_err().to_string();
        assert!(
            e.starts_with("kata-time_settings: unknown kind 'hourglass'"),
            "{e}"
        );
        assert!(e.contains("fischer-capped"), "{e}");
        let e = Clock::from_kgs(&["byoyomi", "1"]).unwrap_err().to_string();
        assert_eq!(e, "kgs-time_settings: 'byoyomi' takes 3 value(s), got 1");
        let e: Box<dyn std::error::Error> =
            Box::new(Clock::absolute(9.0).set_time_left(5.0, 2).unwrap_err());
        assert!(e.to_string().starts_with("time_left: 2 overtime stones"));
    }

    #[test]
    fn time_left_moves_into_and_out_of_overtime() {
        let mut c = left(Clock::canadian(600.0, 300.0, 25), 280.0, 20);
        assert_eq!(
            (c.main_time_left(), c.overtime()),
            (0.0, Some((1, 20, 280.0)))
        );
        c.set_time_left(280.0, 99).unwrap(); // more stones than a period holds
        assert_eq!(c.overtime(), Some((1, 25, 280.0)));
        c.set_time_left(100.0, 0).unwrap();
        assert_eq!((c.main_time_left(), c.overtime()), (100.0, None));
    }

    #[test]
    fn time_left_kgs_byo_yomi_counts_periods() {
        let mut c = left(Clock::byo_yomi(600.0, 30.0, 5), 25.0, 3);
        assert_eq!(c.overtime(), Some((3, 1, 25.0)));
        c.set_time_left(25.0, 9).unwrap();
        assert_eq!(c.overtime(), Some((5, 1, 25.0)));
        c.set_time_left(400.0, 0).unwrap();
        assert_eq!((c.periods_left, c.overtime()), (5, None));
    }

    #[test]
    fn time_left_rejects_bad_input() {
        let mut c = Clock::absolute(60.0);
        let e = c.set_time_left(30.0, 2);
        assert!(matches!(e, Err(ClockError::Inconsistent(_))));
        for t in [-10.5, f64::NAN, f64::INFINITY, 1e26] {
            assert!(matches!(c.set_time_left(t, 0), Err(ClockError::Value(_))));
        }
        assert!(c.set_time_left(30.0, -1).is_err());
        assert!(c.set_time_left(30.0, 100_001).is_err());
        assert_eq!(
            c,
            Clock::absolute(60.0),
            "failed calls leave the clock alone"
        );
        assert!(
            c.set_time_left(-3.0, 0).is_ok(),
            "a lagging controller is tolerated"
        );
        // KataGo reads time_left on an unlimited clock as the real time left.
        check(&left(Clock::unlimited(), 40.0, 0), 0.0, 0.107453, 6.8);
    }

    #[test]
    fn byo_yomi_charge_keeps_periods() {
        let mut c = Clock::byo_yomi(10.0, 30.0, 3);
        c.charge(4.0);
        assert_eq!((c.main_time_left(), c.overtime()), (6.0, None));
        c.charge(20.0); // main time ran out, but the move ended inside the period
        assert_eq!(c.overtime(), Some((3, 1, 30.0)));
        c.charge(29.0);
        assert_eq!(c.overtime(), Some((3, 1, 30.0)));
        c.charge(45.0); // overrunning a period costs exactly that period
        assert_eq!(c.overtime(), Some((2, 1, 30.0)));
        c.charge(1000.0);
        let (periods, _, seconds) = c.overtime().unwrap();
        assert!(periods == 1 && seconds < 0.0, "lost on time stays visible");
    }

    #[test]
    fn canadian_charge_counts_stones_and_resets() {
        let mut c = Clock::canadian(5.0, 60.0, 3);
        c.charge(15.0); // 10 s into overtime: the first stone of the period
        assert_eq!(c.overtime(), Some((1, 2, 50.0)));
        c.charge(20.0);
        assert_eq!(c.overtime(), Some((1, 1, 30.0)));
        c.charge(25.0); // quota met in time: a fresh period
        assert_eq!(c.overtime(), Some((1, 3, 60.0)));
    }

    #[test]
    fn fischer_charge_adds_increment_up_to_cap() {
        let mut c = Clock::fischer(60.0, 5.0);
        c.charge(10.0);
        assert_eq!(c.main_time_left(), 55.0);
        let mut capped = Clock::fischer_capped(60.0, 10.0, Some(60.0), None).unwrap();
        capped.charge(2.0);
        capped.charge(f64::NAN); // nonsense durations cost nothing
        capped.charge(-5.0);
        assert_eq!(capped.main_time_left(), 60.0);
        let mut u = Clock::unlimited();
        u.charge(1e6);
        assert!(u.is_unlimited());
    }

    #[test]
    fn budgets_match_katago_absolute_and_fischer() {
        check(&Clock::absolute(60.0), 0.0, 0.162557, 10.8);
        check(&left(Clock::absolute(60.0), 50.0, 0), 0.0, 0.135005, 8.8);
        check(&Clock::fischer(60.0, 5.0), 0.0, 4.37795, 14.8);
        check(&Clock::fischer(60.0, 1.0), 0.0, 0.702975, 11.6);
        check(&left(Clock::fischer(62.5, 2.5), 7.3, 0), 0.0, 1.5266, 2.26);
        let capped = kgs("fischer-capped 60 10 60 1e15");
        check(&capped, 9.0, 9.34296, 18.8);
        check(&left(capped, 30.0, 0), 0.0, 9.13298, 12.8);
        let per_move = kgs("fischer-capped 60 10 -1 12");
        assert_eq!(per_move.budget(361, 0, 1.0).max, 11.0);
    }

    #[test]
    fn budgets_match_katago_byo_yomi_and_canadian() {
        check(&kgs("byoyomi 20 5 5"), 0.0, 6.76652, 12.75);
        check(&left(kgs("byoyomi 20 5 5"), 10.0, 7), 9.0, 9.0, 9.0);
        // Spare periods beyond the last five count as main time.
        let b7 = kgs("byoyomi 20 7 7");
        check(&left(b7.clone(), 10.0, 7), 0.0, 9.87313, 23.0);
        check(&left(b7.clone(), 2.0, 3), 8.0, 8.0, 8.0);
        check(&left(b7.clone(), -5.0, 1), 0.0, 0.0, 0.0);
        check(&left(b7, -1.0, 0), 0.0, 9.87313, 19.0);
        let c = Clock::from_gtp(60.0, 10.0, 3).unwrap();
        check(&c, 0.0, 4.17768, 15.0);
        check(&left(c, 15.0, 2), 0.0, 6.5, 7.57143);
        check(&Clock::from_gtp(0.0, 10.0, 1).unwrap(), 0.0, 8.0, 8.0);
        check(&kgs("canadian 5 10 3"), 0.0, 4.0, 8.0);
        check(&left(kgs("canadian 5 10 3"), 2.0, 1), 1.0, 1.0, 1.0);
    }

    #[test]
    fn unlimited_budget_is_infinite() {
        let b = Clock::unlimited().budget(361, 100, 1.0);
        assert_eq!(b, TimeBudget::UNLIMITED);
        assert!(Clock::absolute(1e21).is_unlimited());
    }

    #[test]
    fn more_time_never_gives_a_smaller_budget() {
        let clocks = [
            (Clock::absolute(0.0), 0),
            (Clock::fischer(0.0, 5.0), 0),
            (Clock::canadian(0.0, 300.0, 20), 10),
        ];
        for (base, stones) in clocks {
            let mut prev = left(base.clone(), 0.0, stones).budget(361, 50, 0.5);
            for step in 0..2000 {
                let c = left(base.clone(), f64::from(step) * 0.5, stones);
                let b = c.budget(361, 50, 0.5);
                assert!(b.min >= prev.min && b.recommended >= prev.recommended);
                assert!(b.max >= prev.max, "{c:?} {b:?} {prev:?}");
                prev = b;
            }
        }
    }

    #[test]
    fn budget_stays_within_time_left() {
        for step in 0..400 {
            let t = f64::from(step) * 0.75;
            let clocks = [
                left(Clock::absolute(3600.0), t, 0),
                left(Clock::fischer(3600.0, 3.0), t, 0),
                left(Clock::canadian(0.0, 600.0, 10), t, 4),
            ];
            for (clock, area) in clocks.iter().zip([81, 361, 361]) {
                let b = clock.budget(area, area / 3, 1.0);
                assert!(b.min <= b.recommended && b.recommended <= b.max);
                let limit = if t >= 2.0 { t - 1.0 } else { t };
                assert!(b.max <= limit + 1e-9, "{clock:?} {b:?}");
            }
        }
    }

    #[test]
    fn later_positions_and_smaller_boards_get_more_per_move() {
        let c = Clock::absolute(600.0);
        let early = c.budget(361, 0, 0.5).recommended;
        assert!(c.budget(361, 250, 0.5).recommended > early);
        assert!(c.budget(81, 0, 0.5).recommended > early);
    }

    #[test]
    fn round_up_uses_the_whole_byo_yomi_period() {
        // Last stone of the period: stopping early throws the rest away.
        let b = left(kgs("byoyomi 20 7 7"), 10.0, 1);
        assert!(close(b.round_up_limit(1.0, 0.0, 8.0), 9.0));
        // Main time nearly gone: finish it and use the period too.
        let b = left(b, 2.0, 0);
        assert!(close(b.round_up_limit(1.0, 9.87313, 9.87313), 15.0));
        assert_eq!(left(b, 300.0, 0).round_up_limit(1.0, 5.0, 5.0), 5.0);
        // Canadian: once main time is spent, step just into the period.
        let k = kgs("canadian 5 10 3");
        assert!(close(k.round_up_limit(1.0, 4.0 - 1e-6, 4.0), 6.0));
        assert_eq!(k.round_up_limit(1.0, 0.0, 4.0), 4.0);
        let k = left(k, 8.0, 2); // mid-period with stones to go: nothing to gain
        assert_eq!(k.round_up_limit(1.0, 1.0, 2.0), 2.0);
        assert_eq!(Clock::fischer(1.0, 5.0).round_up_limit(1.0, 0.9, 1.0), 1.0);
    }

    #[test]
    fn programmatic_nonsense_does_not_panic() {
        assert_eq!(Clock::absolute(f64::NAN), Clock::absolute(0.0));
        assert_eq!(Clock::byo_yomi(60.0, 30.0, 0), Clock::absolute(60.0));
        assert_eq!(Clock::canadian(60.0, 30.0, 0), Clock::absolute(60.0));
        let mut c = Clock::byo_yomi(1.0, 0.0, u32::MAX);
        c.charge(f64::INFINITY);
        assert_eq!(c.periods_left, 1);
        for lag in [f64::NAN, -1.0, f64::INFINITY] {
            for clock in [Clock::absolute(60.0), Clock::byo_yomi(60.0, 30.0, 3)] {
                let b = clock.budget(0, 500, lag);
                assert!(b.max.is_finite() && b.min >= 0.0 && b.recommended <= b.max);
                assert!(!clock.round_up_limit(lag, f64::NAN, 1.0).is_nan());
            }
        }
    }
}
