//! Game clocks as GTP controllers describe them, and how long to think per move.
//!
//! The model and budgeting rules follow KataGo's `TimeControls`: one clock covers
//! unlimited, absolute, Fischer (optionally capped), Japanese byo-yomi (N periods
//! of one stone) and Canadian overtime (one period of S stones). [`Clock::budget`]
//! turns what is left into min / recommended / max thinking times, and
//! [`Clock::round_up_limit`] keeps the search from stopping early when the rest
//! of a byo-yomi period would be thrown away anyway.

use std::fmt;
use std::num::NonZeroU32;

/// Largest time a controller may send; anything above is garbage.
pub const MAX_INPUT_TIME: f64 = 1e25;
/// Clocks with more than this left impose no practical limit.
const UNLIMITED_THRESHOLD: f64 = 1e20;
/// `time_left` may run a little negative when the controller's clock lags ours.
const TIME_LEFT_SLACK: f64 = 10.0;
const MAX_TIME_LEFT_COUNT: i64 = 100_000;
/// Byo-yomi periods beyond this many are spent as if they were main time.
const RESERVED_PERIODS: u32 = 5;

const TIME_LEFT: &str = "time_left";

/// A game clock as GTP sets it, and what is left on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Clock {
    control: Control,
    /// Main time left: infinite when unlimited, 0 in overtime (negative while a
    /// projection carries a deficit into the periods).
    main_left: f64,
}

/// The kind of time control, with the settings only that kind has.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    /// No limit, until `time_left` says what is really on the clock.
    Unlimited,
    /// Main time for the whole game.
    Absolute,
    /// Main time plus an increment after each move.
    Fischer(Fischer),
    /// Main time, then periods of overtime.
    Overtime(Overtime),
}

/// Fischer settings; the caps are KataGo's `fischer-capped`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Fischer {
    increment: f64,
    /// Main time never grows past this.
    main_cap: Option<f64>,
    /// Hard limit for one move.
    max_per_move: Option<f64>,
}

/// Overtime settings and, once main time is spent, the period in use.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Overtime {
    shape: OvertimeShape,
    period_time: f64,
    /// None while main time lasts.
    current: Option<Period>,
}

/// How overtime is divided: many one-stone periods, or one period of many stones.
#[derive(Clone, Copy, Debug, PartialEq)]
enum OvertimeShape {
    /// Japanese byo-yomi: this many periods of one move each.
    ByoYomi { periods: NonZeroU32 },
    /// Canadian: one period, renewed, in which this many moves must be played.
    Canadian { stones: NonZeroU32 },
}

/// Where the clock stands inside overtime.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Period {
    /// Periods left, counting the one in use.
    periods_left: u32,
    stones_left: u32,
    seconds_left: f64,
}

impl Overtime {
    fn periods(&self) -> u32 {
        match self.shape {
            OvertimeShape::ByoYomi { periods } => periods.get(),
            OvertimeShape::Canadian { .. } => 1,
        }
    }

    fn stones_per_period(&self) -> u32 {
        match self.shape {
            OvertimeShape::ByoYomi { .. } => 1,
            OvertimeShape::Canadian { stones } => stones.get(),
        }
    }

    /// Periods left, counting the one in use (all of them while main time lasts).
    fn periods_left(&self) -> u32 {
        self.current.map_or(self.periods(), |p| p.periods_left)
    }

    /// Where the clock will stand `used` seconds from now, from `main` seconds of
    /// main time: the main balance (negative once spent, so callers can see the
    /// deficit) and the overtime state, carrying a negative balance into the
    /// following periods (the last one is kept).
    fn project(&self, main: f64, used: f64) -> (f64, Overtime) {
        let (mut main, mut o) = (main, *self);
        match &mut o.current {
            Some(p) => p.seconds_left -= used,
            None => main -= used,
        }
        if main < 0.0 && o.current.is_none() {
            o.current = Some(Period {
                periods_left: o.periods(),
                stones_left: o.stones_per_period(),
                seconds_left: main + o.period_time,
            });
        }
        if let Some(p) = &mut o.current {
            if p.seconds_left < 0.0 && p.periods_left > 1 {
                let needed = (-p.seconds_left / o.period_time).ceil(); // inf when periods are 0 s
                let burnt = f64::from(p.periods_left - 1).min(needed) as u32;
                p.periods_left -= burnt;
                p.seconds_left += f64::from(burnt) * o.period_time;
            }
        }
        (main, o)
    }
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

impl ClockError {
    /// A value error in the usual words: "`command`: `what` must be `allowed`, got '`word`'".
    pub fn bad_value(command: &str, what: &str, word: impl fmt::Display, allowed: &str) -> Self {
        ClockError::Value(format!("{command}: {what} must be {allowed}, got '{word}'"))
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
    fn with_overtime(main: f64, period: f64, shape: Option<OvertimeShape>) -> Clock {
        let Some(shape) = shape else {
            return Clock::absolute(main);
        };
        Clock {
            control: Control::Overtime(Overtime {
                shape,
                period_time: clamp_time(period),
                current: None,
            }),
            main_left: clamp_time(main),
        }
    }

    /// No time limit at all.
    pub fn unlimited() -> Clock {
        Clock {
            control: Control::Unlimited,
            main_left: f64::INFINITY,
        }
    }

    /// `main` seconds for the whole game (negative or NaN reads as 0).
    pub fn absolute(main: f64) -> Clock {
        Clock {
            control: Control::Absolute,
            main_left: clamp_time(main),
        }
    }

    /// `main` seconds, plus `increment` seconds after each move.
    pub fn fischer(main: f64, increment: f64) -> Clock {
        Clock {
            control: Control::Fischer(Fischer {
                increment: clamp_time(increment),
                main_cap: None,
                max_per_move: None,
            }),
            main_left: clamp_time(main),
        }
    }

    /// Fischer whose main time never exceeds `main_cap` and whose moves never exceed
    /// `max_per_move`; the error (a cap below the main time) does not name a command.
    pub fn fischer_capped(
        main: f64,
        increment: f64,
        main_cap: Option<f64>,
        max_per_move: Option<f64>,
    ) -> Result<Clock, ClockError> {
        let main = clamp_time(main);
        let main_cap = main_cap.map(clamp_time);
        if let Some(cap) = main_cap.filter(|&cap| cap < main) {
            return Err(ClockError::Inconsistent(format!(
                "main time limit {cap} is below main time {main}"
            )));
        }
        Ok(Clock {
            control: Control::Fischer(Fischer {
                increment: clamp_time(increment),
                main_cap,
                max_per_move: max_per_move.map(clamp_time),
            }),
            main_left: main,
        })
    }

    /// Japanese byo-yomi: `periods` periods of `period` seconds, one move each; 0 periods is absolute.
    pub fn byo_yomi(main: f64, period: f64, periods: u32) -> Clock {
        let shape = NonZeroU32::new(periods).map(|periods| OvertimeShape::ByoYomi { periods });
        Clock::with_overtime(main, period, shape)
    }

    /// Canadian overtime: `stones` moves in each `period` seconds; 0 stones is absolute.
    pub fn canadian(main: f64, period: f64, stones: u32) -> Clock {
        let shape = NonZeroU32::new(stones).map(|stones| OvertimeShape::Canadian { stones });
        Clock::with_overtime(main, period, shape)
    }

    /// GTP `time_left seconds stones`: 0 stones is main time; otherwise overtime with that many stones left (periods left for KGS-style byo-yomi).
    pub fn set_time_left(&mut self, seconds: f64, stones: i64) -> Result<(), ClockError> {
        if !(-TIME_LEFT_SLACK..=MAX_INPUT_TIME).contains(&seconds) {
            let allowed = "a finite number of seconds >= -10 (at most 1e25)";
            return Err(ClockError::bad_value(TIME_LEFT, "time", seconds, allowed));
        }
        let count = match u32::try_from(stones) {
            Ok(n) if stones <= MAX_TIME_LEFT_COUNT => n,
            _ => {
                let allowed = "a whole number from 0 to 100000";
                return Err(ClockError::bad_value(TIME_LEFT, "stones", stones, allowed));
            }
        };
        if count == 0 {
            // As in KataGo this also makes an unlimited clock absolute: the
            // controller is telling us what is really on the clock.
            self.main_left = seconds;
            match &mut self.control {
                Control::Unlimited => self.control = Control::Absolute,
                Control::Overtime(o) => o.current = None,
                Control::Absolute | Control::Fischer(_) => {}
            }
            return Ok(());
        }
        let Control::Overtime(o) = &mut self.control else {
            return Err(ClockError::Inconsistent(format!(
                "{TIME_LEFT}: {stones} overtime stones given, but the clock has no overtime"
            )));
        };
        self.main_left = 0.0;
        o.current = Some(match o.shape {
            // KGS sends the periods left in the stones slot for Japanese byo-yomi.
            OvertimeShape::ByoYomi { periods } => Period {
                periods_left: count.min(periods.get()),
                stones_left: 1,
                seconds_left: seconds,
            },
            OvertimeShape::Canadian { stones } => Period {
                periods_left: 1,
                stones_left: count.min(stones.get()),
                seconds_left: seconds,
            },
        });
        Ok(())
    }

    /// Charges `used` seconds for one of our moves, so the clock stays sensible without `time_left`.
    pub fn charge(&mut self, used: f64) {
        let used = clamp_time(used);
        let o = match self.control {
            Control::Unlimited => return,
            Control::Absolute | Control::Fischer(_) => {
                self.main_left = (self.main_left - used + self.increment()).min(self.main_cap());
                return;
            }
            Control::Overtime(o) => o,
        };
        let (main, now) = o.project(self.main_left, used);
        let Some(mut p) = now.current else {
            self.main_left = main;
            return;
        };
        self.main_left = 0.0;
        // A period entered by running out of the previous one starts with a full quota.
        if p.periods_left < o.periods_left() {
            p.stones_left = o.stones_per_period();
        }
        // Below zero the game is lost on time; keep the deficit visible.
        if p.seconds_left >= 0.0 {
            if p.stones_left <= 1 {
                // The quota was met in time, so the period starts over.
                p.stones_left = o.stones_per_period();
                p.seconds_left = o.period_time;
            } else {
                p.stones_left -= 1;
            }
        }
        self.control = Control::Overtime(Overtime {
            current: Some(p),
            ..o
        });
    }

    /// True when the clock imposes no practical limit.
    pub fn is_unlimited(&self) -> bool {
        let period_left = self.overtime().map(|(_, _, seconds)| seconds);
        (self.main_left > UNLIMITED_THRESHOLD
            || period_left.is_some_and(|s| s > UNLIMITED_THRESHOLD))
            && self.max_per_move() > UNLIMITED_THRESHOLD
    }

    /// Main time left in seconds (infinite when unlimited, 0 in overtime).
    pub fn main_time_left(&self) -> f64 {
        self.main_left
    }

    /// In overtime: (periods left counting the current one, stones left in it, seconds left in it).
    pub fn overtime(&self) -> Option<(u32, u32, f64)> {
        let Control::Overtime(o) = &self.control else {
            return None;
        };
        o.current
            .map(|p| (p.periods_left, p.stones_left, p.seconds_left))
    }

    fn increment(&self) -> f64 {
        match self.control {
            Control::Fischer(f) => f.increment,
            _ => 0.0,
        }
    }

    fn main_cap(&self) -> f64 {
        match self.control {
            Control::Fischer(f) => f.main_cap.unwrap_or(f64::INFINITY),
            _ => f64::INFINITY,
        }
    }

    fn max_per_move(&self) -> f64 {
        match self.control {
            Control::Fischer(f) => f.max_per_move.unwrap_or(f64::INFINITY),
            _ => f64::INFINITY,
        }
    }

    /// KataGo's getTime: thinking time for our next move from the board area, the stones on the board and a lag buffer in seconds.
    pub fn budget(&self, board_area: usize, stones_on_board: usize, lag_buffer: f64) -> TimeBudget {
        if self.is_unlimited() {
            return TimeBudget::UNLIMITED;
        }
        let mut lag = lag_buffer.max(0.0); // NaN becomes 0 too
        let turns = TurnsLeft::new(board_area, stones_on_board);
        let (min, rec, max) = match &self.control {
            Control::Overtime(o) => self.overtime_budget(o, &turns, &mut lag),
            _ => self.fischer_budget(&turns, lag),
        };
        let max = apply_lag(max.min(self.max_per_move()), lag).max(0.0);
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
        let Control::Overtime(o) = &self.control else {
            return limit;
        };
        let lag = lag_buffer.max(0.0);
        let used = if used.is_nan() { 0.0 } else { used };
        let (main, now) = o.project(self.main_left, used);
        let stones_per = f64::from(o.stones_per_period());
        let per_move = o.period_time / stones_per;
        let per_move_buffered = apply_lag(per_move, lag);
        // A small step past a boundary: about the lag, at most one move's share.
        let bit = lag.max(per_move_buffered * 0.01).min(per_move_buffered);

        let rounded = match now.current {
            None => {
                if main >= per_move * 0.5 {
                    return limit;
                }
                // Main time is nearly gone: finish it, and in byo-yomi use the
                // period as well, since it comes back in full after the move.
                main + used
                    + if o.stones_per_period() <= 1 {
                        per_move_buffered
                    } else {
                        bit
                    }
            }
            // Probably lost on time already; rounding cannot help.
            Some(p) if p.seconds_left <= 0.0 => return limit,
            Some(p) if p.stones_left > 1 => {
                // Having just crossed into Canadian overtime, make sure the move
                // lands inside the period so it counts as one of its stones.
                let spent = o.period_time - p.seconds_left;
                if o.current.is_some() || spent >= bit {
                    return limit;
                }
                used + bit - spent
            }
            // Last stone of the period: what is left of it is lost unless spent now.
            Some(p) => apply_lag(used + p.seconds_left, lag),
        };
        if rounded < used {
            limit
        } else {
            limit.max(rounded)
        }
    }

    fn fischer_budget(&self, turns: &TurnsLeft, lag: f64) -> (f64, f64, f64) {
        let (main, inc) = (self.main_left, self.increment());
        // With a cap, whatever the increment would push past it is wasted.
        let min = (main * 0.5)
            .max(0.0)
            .min((main + inc - self.main_cap()).max(0.0));
        if main <= inc {
            return (min, apply_lag(main, lag), main);
        }
        // Spend the increment each move and spread the surplus over the game;
        // the surplus is lag-buffered twice on purpose.
        let surplus = apply_lag(main - inc, lag);
        let share = (surplus / turns.fischer).min(surplus / turns.absolute + 2.0 * inc);
        (min, inc + share, main.min(inc + surplus / 5.0))
    }

    fn overtime_budget(&self, o: &Overtime, turns: &TurnsLeft, lag: &mut f64) -> (f64, f64, f64) {
        let stones_per = f64::from(o.stones_per_period());
        let (mut main, now) = o.project(self.main_left, 0.0);
        let (mut overtime, mut periods, mut period_left, stones) = match now.current {
            Some(p) => (true, p.periods_left, p.seconds_left, p.stones_left),
            None => (false, o.periods(), 0.0, 0),
        };
        if periods > RESERVED_PERIODS {
            // Periods beyond the reserve are as good as main time.
            let spare = f64::from(periods - RESERVED_PERIODS) * o.period_time;
            main += if o.current.is_some() {
                period_left + spare - o.period_time
            } else {
                spare
            };
            overtime = false;
        }
        if !overtime {
            // The most we would ever spend on one move once in overtime.
            let large = o.period_time / (0.75 * stones_per + 0.25);
            let rec = o.byo_yomi_share(main, turns);
            let mut max = large + (large * 1.75).min(main).max(main / 5.0);
            if max > main && max < main + large {
                max = main + large; // Dipping into overtime anyway: allow a full move there.
            }
            if max > main && periods <= 1 && o.stones_per_period() <= 1 {
                *lag *= 2.0; // Overrunning that one period loses the game.
            }
            return (0.0, rec, max);
        }
        // Far into the period with periods to spare (after a reconnect, say):
        // give up one period now to get real thinking time.
        let threshold = apply_lag(0.5 * o.period_time, *lag) * f64::from(periods.saturating_sub(1))
            / f64::from(RESERVED_PERIODS - 1);
        if periods > 1 && apply_lag(period_left, *lag) < threshold {
            periods -= 1;
            period_left += o.period_time;
        }
        let s = f64::from(stones.max(1));
        if periods <= 1 && stones <= 1 {
            *lag *= 2.0;
        }
        let min = if stones <= 1 { period_left } else { 0.0 };
        (min, period_left / s, period_left / (0.75 * s + 0.25))
    }
}

impl Overtime {
    /// One move's share of `time` (main time) when overtime follows.
    fn byo_yomi_share(&self, time: f64, turns: &TurnsLeft) -> f64 {
        let absolute_share = time / turns.absolute;
        if self.period_time <= 0.0 {
            return absolute_share;
        }
        let per_move = self.period_time / f64::from(self.stones_per_period());
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

    #[test]
    fn time_left_error_names_the_command() {
        let e: Box<dyn std::error::Error> =
            Box::new(Clock::absolute(9.0).set_time_left(5.0, 2).unwrap_err());
        assert!(e.to_string().starts_with("time_left: 2 overtime stones"));
    }

    #[test]
    fn fischer_cap_below_main_time_is_refused() {
        let below = Clock::fischer_capped(60.0, 10.0, Some(30.0), None);
        assert!(matches!(below, Err(ClockError::Inconsistent(_))));
        assert!(Clock::fischer_capped(60.0, 10.0, Some(60.0), None).is_ok());
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
        assert_eq!(c.overtime(), None);
        // Back in main time, all five periods are there again.
        c.charge(410.0);
        assert_eq!(c.overtime(), Some((5, 1, 30.0)));
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
        let capped = Clock::fischer_capped(60.0, 10.0, Some(60.0), Some(1e15)).unwrap();
        check(&capped, 9.0, 9.34296, 18.8);
        check(&left(capped, 30.0, 0), 0.0, 9.13298, 12.8);
        let per_move = Clock::fischer_capped(60.0, 10.0, None, Some(12.0)).unwrap();
        assert_eq!(per_move.budget(361, 0, 1.0).max, 11.0);
    }

    #[test]
    fn budgets_match_katago_byo_yomi_and_canadian() {
        check(&Clock::byo_yomi(20.0, 5.0, 5), 0.0, 6.76652, 12.75);
        check(&left(Clock::byo_yomi(20.0, 5.0, 5), 10.0, 7), 9.0, 9.0, 9.0);
        // Spare periods beyond the last five count as main time.
        let b7 = Clock::byo_yomi(20.0, 7.0, 7);
        check(&left(b7.clone(), 10.0, 7), 0.0, 9.87313, 23.0);
        check(&left(b7.clone(), 2.0, 3), 8.0, 8.0, 8.0);
        check(&left(b7.clone(), -5.0, 1), 0.0, 0.0, 0.0);
        check(&left(b7, -1.0, 0), 0.0, 9.87313, 19.0);
        let c = Clock::canadian(60.0, 10.0, 3);
        check(&c, 0.0, 4.17768, 15.0);
        check(&left(c, 15.0, 2), 0.0, 6.5, 7.57143);
        check(&Clock::canadian(0.0, 10.0, 1), 0.0, 8.0, 8.0);
        check(&Clock::canadian(5.0, 10.0, 3), 0.0, 4.0, 8.0);
        check(&left(Clock::canadian(5.0, 10.0, 3), 2.0, 1), 1.0, 1.0, 1.0);
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
        let b = left(Clock::byo_yomi(20.0, 7.0, 7), 10.0, 1);
        assert!(close(b.round_up_limit(1.0, 0.0, 8.0), 9.0));
        // Main time nearly gone: finish it and use the period too.
        let b = left(b, 2.0, 0);
        assert!(close(b.round_up_limit(1.0, 9.87313, 9.87313), 15.0));
        assert_eq!(left(b, 300.0, 0).round_up_limit(1.0, 5.0, 5.0), 5.0);
        // Canadian: once main time is spent, step just into the period.
        let k = Clock::canadian(5.0, 10.0, 3);
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
        assert_eq!(c.overtime().map(|(periods, _, _)| periods), Some(1));
        for lag in [f64::NAN, -1.0, f64::INFINITY] {
            for clock in [Clock::absolute(60.0), Clock::byo_yomi(60.0, 30.0, 3)] {
                let b = clock.budget(0, 500, lag);
                assert!(b.max.is_finite() && b.min >= 0.0 && b.recommended <= b.max);
                assert!(!clock.round_up_limit(lag, f64::NAN, 1.0).is_nan());
            }
        }
    }
}
