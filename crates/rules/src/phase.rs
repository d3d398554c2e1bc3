//! The phase of a game: the main phase, then (territory scoring only) the two cleanup
//! phases KataGo calls the encore.

use std::fmt;

/// Which phase a game is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Ordinary play, until two passes (or a Spight-like ending).
    #[default]
    Main,
    /// First cleanup phase: a ko capture blocks the recapture until the opponent unblocks it.
    Cleanup1,
    /// Second cleanup phase: as the first, but only stones standing since it began score.
    Cleanup2,
}

impl Phase {
    /// Every phase, in the order a game passes through them.
    pub const ALL: [Phase; 3] = [Phase::Main, Phase::Cleanup1, Phase::Cleanup2];

    /// KataGo's number for the phase (its `encorePhase`): 0, 1 or 2.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// The phase with KataGo's number `n`, if there is one.
    pub fn from_index(n: usize) -> Option<Phase> {
        Phase::ALL.get(n).copied()
    }

    /// True in either cleanup phase.
    #[inline]
    pub fn is_cleanup(self) -> bool {
        self != Phase::Main
    }

    /// The phase that follows this one, if any.
    pub fn next(self) -> Option<Phase> {
        Phase::from_index(self.index() + 1)
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Main => "main",
            Phase::Cleanup1 => "cleanup 1",
            Phase::Cleanup2 => "cleanup 2",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_round_trip_and_phases_follow_in_order() {
        for (i, p) in Phase::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(Phase::from_index(i), Some(p));
        }
        assert_eq!(Phase::from_index(3), None);
        assert_eq!(Phase::Main.next(), Some(Phase::Cleanup1));
        assert_eq!(Phase::Cleanup1.next(), Some(Phase::Cleanup2));
        assert_eq!(Phase::Cleanup2.next(), None);
        assert!(!Phase::Main.is_cleanup());
        assert!(Phase::Cleanup1.is_cleanup() && Phase::Cleanup2.is_cleanup());
    }
}
