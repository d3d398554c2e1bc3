//! The SGF-metadata input of KataGo's human-SL networks (`InputMeta`, 192 values): who is
//! playing (human, rank), the game's time control, date and server, as KataGo's
//! `SGFMetadata::fillMetadataRow` encodes them, for the profiles KataGo's `humanSLProfile`
//! names (`rank_5k`, `rank_3d_1k`, `preaz_2d`, `proyear_1990`, ...).

use std::fmt;
use std::str::FromStr;

use tengen_rules::Player;

/// Width of the metadata input (meta-encoder version 1).
pub const NUM_META: usize = 192;

/// Where a game was played (KataGo's `SGFMetadata::SOURCE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Source {
    Kgs = 2,
    Gogod = 5,
    Go4go = 6,
}

/// Which kind of game a profile names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    /// `rank_`: KGS in 2020.
    Rank,
    /// `preaz_`: KGS in 2016, before AlphaZero.
    PreAz,
    /// `proyear_`: professionals of that year.
    ProYear(i32),
}

/// The game a human-SL net is asked to imitate: one of KataGo's `humanSLProfile`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HumanProfile {
    kind: Kind,
    /// KataGo's inverse ranks: 9d = 1, 1d = 9, 1k = 10, 20k = 29.
    inverse_black: u8,
    inverse_white: u8,
    /// KGS games with 20 min + 5 x 30 s byo-yomi and unknown ratedness; otherwise a
    /// professional game of unknown time control.
    kgs: bool,
    /// The game's date as days since 1970-01-01.
    days: i32,
    source: Source,
}

/// A `humanSLProfile` that is not one of KataGo's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown human SL profile {0:?} (expected rank_<rank>, rank_<black>_<white>, \
     preaz_<rank>, preaz_<black>_<white> with ranks 20k..1k and 1d..9d, or \
     proyear_<1800..2023>)"
)]
pub struct ProfileError(pub String);

/// KataGo's inverse rank of `20k`..`1k`, `1d`..`9d`.
fn inverse_rank(rank: &str) -> Option<u8> {
    let (n, kind) = rank.split_at(rank.len().checked_sub(1)?);
    let n: u8 = n.parse().ok()?;
    match kind {
        "d" if (1..=9).contains(&n) => Some(10 - n),
        "k" if (1..=20).contains(&n) => Some(9 + n),
        _ => None,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_since_epoch(year: i32, month: u32, day: u32) -> i32 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i32;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i32 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl FromStr for HumanProfile {
    type Err = ProfileError;

    fn from_str(s: &str) -> Result<HumanProfile, ProfileError> {
        let bad = || ProfileError(s.to_string());
        if let Some(year) = s.strip_prefix("proyear_") {
            let year: i32 = year.parse().map_err(|_| bad())?;
            let source = match year {
                1800..=2020 => Source::Gogod,
                2021..=2023 => Source::Go4go,
                _ => return Err(bad()),
            };
            return Ok(HumanProfile {
                kind: Kind::ProYear(year),
                inverse_black: 1,
                inverse_white: 1,
                kgs: false,
                days: days_since_epoch(year, 6, 1),
                source,
            });
        }
        let (ranks, kind, date) = if let Some(r) = s.strip_prefix("rank_") {
            (r, Kind::Rank, (2020, 3, 1))
        } else if let Some(r) = s.strip_prefix("preaz_") {
            (r, Kind::PreAz, (2016, 9, 1))
        } else {
            return Err(bad());
        };
        let (black, white) = match inverse_rank(ranks) {
            Some(r) => (r, r),
            None => {
                let (b, w) = ranks.split_once('_').ok_or_else(bad)?;
                (
                    inverse_rank(b).ok_or_else(bad)?,
                    inverse_rank(w).ok_or_else(bad)?,
                )
            }
        };
        Ok(HumanProfile {
            kind,
            inverse_black: black,
            inverse_white: white,
            kgs: true,
            days: days_since_epoch(date.0, date.1, date.2),
            source: Source::Kgs,
        })
    }
}

/// A rank's name from KataGo's inverse rank.
fn rank_name(inverse: u8) -> String {
    if inverse <= 9 {
        format!("{}d", 10 - inverse)
    } else {
        format!("{}k", inverse - 9)
    }
}

impl fmt::Display for HumanProfile {
    /// The profile's name as KataGo spells it (`rank_5k`, `preaz_3d_9k`, `proyear_1990`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            Kind::ProYear(year) => return write!(f, "proyear_{year}"),
            Kind::Rank => "rank",
            Kind::PreAz => "preaz",
        };
        let black = rank_name(self.inverse_black);
        if self.inverse_black == self.inverse_white {
            write!(f, "{prefix}_{black}")
        } else {
            write!(f, "{prefix}_{black}_{}", rank_name(self.inverse_white))
        }
    }
}

/// Ranks each player's part of the input holds (one value per rank step from 9d down).
const RANK_LEN: usize = 34;
/// The date's sines and cosines.
const DATE_LEN: usize = 32;

impl HumanProfile {
    /// The metadata input for `next` to move on a board of `area` points.
    pub fn row(&self, next: Player, area: usize) -> [f32; NUM_META] {
        let mut row = [0.0f32; NUM_META];
        // Both players are human and ranked.
        row[0] = 1.0;
        row[1] = 1.0;
        let (own, opp) = match next {
            Player::Black => (self.inverse_black, self.inverse_white),
            Player::White => (self.inverse_white, self.inverse_black),
        };
        row[6..6 + usize::from(own).min(RANK_LEN)].fill(1.0);
        row[6 + RANK_LEN..6 + RANK_LEN + usize::from(opp).min(RANK_LEN)].fill(1.0);
        let (main, period, periods) = if self.kgs {
            // Ratedness unknown; byo-yomi.
            row[74] = 0.5;
            row[79] = 1.0;
            (1200.0, 30.0, 5.0)
        } else {
            // Time control unknown.
            row[75] = 1.0;
            (0.0, 0.0, 0.0)
        };
        let ln = f64::ln;
        row[82] = (0.4 * (ln(main + 60.0) - 6.5)) as f32;
        row[83] = (0.3 * (ln(period + 1.0) - 3.0)) as f32;
        row[84] = (0.5 * (ln(periods + 2.0) - 1.5)) as f32;
        row[85] = (0.25 * (ln(2.0) - 1.5)) as f32;
        row[86] = (0.5 * ln(area as f64 / 361.0)) as f32;
        // The date as 32 phases, periods growing from a week to 80,000 weeks.
        let factor = 80_000f64.powf(1.0 / (DATE_LEN - 1) as f64);
        let mut period = 7.0;
        for i in 0..DATE_LEN {
            let turns = f64::from(self.days) / period;
            let angle = turns * std::f64::consts::TAU;
            row[87 + 2 * i] = angle.cos() as f32;
            row[87 + 2 * i + 1] = angle.sin() as f32;
            period *= factor;
        }
        row[151 + self.source as usize] = 1.0;
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_as_katago_names_them() {
        let p: HumanProfile = "rank_5k".parse().expect("rank_5k");
        assert_eq!((p.inverse_black, p.inverse_white, p.kgs), (14, 14, true));
        assert_eq!(p.days, 18_322, "2020-03-01");
        let p: HumanProfile = "preaz_3d_9d".parse().expect("preaz");
        assert_eq!((p.inverse_black, p.inverse_white), (7, 1));
        assert_eq!(p.days, 17_045, "2016-09-01");
        let p: HumanProfile = "proyear_1850".parse().expect("proyear");
        assert_eq!((p.source, p.kgs), (Source::Gogod, false));
        assert!(p.days < 0);
        assert_eq!(
            "proyear_2022".parse::<HumanProfile>().expect("2022").source,
            Source::Go4go
        );
        for name in [
            "rank_5k",
            "rank_9d",
            "rank_20k",
            "preaz_3d_9k",
            "proyear_1850",
        ] {
            let p: HumanProfile = name.parse().expect("a profile");
            assert_eq!(p.to_string(), name);
        }
        assert_eq!(
            "rank_2k_2k"
                .parse::<HumanProfile>()
                .expect("same ranks")
                .to_string(),
            "rank_2k"
        );
        for bad in [
            "",
            "rank_0k",
            "rank_21k",
            "rank_10d",
            "rank_5k_",
            "proyear_2024",
            "5k",
        ] {
            assert!(bad.parse::<HumanProfile>().is_err(), "{bad:?}");
        }
        assert_eq!(days_since_epoch(1970, 1, 1), 0);
        assert_eq!(days_since_epoch(1969, 12, 31), -1);
    }

    #[test]
    fn the_row_encodes_each_players_rank_from_the_movers_side() {
        let p: HumanProfile = "rank_1d_3k".parse().expect("profile");
        let row = p.row(Player::White, 81);
        // White (3k, inverse 12) moves; Black (1d, inverse 9) is the opponent.
        assert_eq!(row[6..40].iter().filter(|&&v| v == 1.0).count(), 12);
        assert_eq!(row[40..74].iter().filter(|&&v| v == 1.0).count(), 9);
        assert_eq!((row[74], row[79], row[151 + 2]), (0.5, 1.0, 1.0));
        assert!((row[86] - (0.5 * (81.0f64 / 361.0).ln()) as f32).abs() < 1e-7);
        assert_eq!(row[167..].iter().filter(|&&v| v != 0.0).count(), 0);
    }
}
