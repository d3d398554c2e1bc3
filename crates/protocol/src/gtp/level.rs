//! What `tengen-level` (and the appliance's `level` command) sets: a classical engine
//! level, or a strength for the network's search.

use std::fmt;
use std::str::FromStr;

use tengen_search::Strength;

/// Highest classical engine level.
pub const MAX_CLASSIC_LEVEL: u8 = 10;

/// A level: the classical engine's 1 to 10, or a rank (or `max`) for the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// The classical engine's level, 1 to 10.
    Classic(u8),
    /// The search's strength: a rank from 25k to 5d, or full strength.
    Strength(Strength),
}

/// Why a text is not a level.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "a level is 1 to 10 (classical engine), a rank from 25k to 1k or 1d to 5d, or max; got {0:?}"
)]
pub struct LevelError(pub String);

impl Level {
    /// The classical level `n`, if it is one (1 to 10).
    pub fn classic(n: u8) -> Option<Level> {
        (1..=MAX_CLASSIC_LEVEL)
            .contains(&n)
            .then_some(Level::Classic(n))
    }
}

impl FromStr for Level {
    type Err = LevelError;

    fn from_str(s: &str) -> Result<Level, LevelError> {
        let t = s.trim();
        if let Ok(n) = t.parse::<u8>() {
            return Level::classic(n).ok_or_else(|| LevelError(s.to_string()));
        }
        t.parse::<Strength>()
            .map(Level::Strength)
            .map_err(|_| LevelError(s.to_string()))
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Classic(n) => write!(f, "{n}"),
            Level::Strength(s) => s.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_ranks_read_back_from_their_text() {
        for t in ["1", "10", "25k", "12k", "1k", "1d", "5d", "max"] {
            let l: Level = t.parse().expect(t);
            assert_eq!(l.to_string(), t);
        }
        assert!(matches!("7".parse(), Ok(Level::Classic(7))));
        assert!(matches!("7k".parse(), Ok(Level::Strength(_))));
        for t in ["0", "11", "256", "", "high", "26k", "6d", "-1"] {
            assert!(t.parse::<Level>().is_err(), "{t:?} parsed");
        }
    }
}
