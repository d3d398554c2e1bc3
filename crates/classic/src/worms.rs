//! Worms (strings of connected stones) with their liberties and tactical status.

use tengen_rules::{Board, Loc, Player};

use crate::points::{liberties, PointMap, Points};
use crate::reading::{Outcome, Reader, Tactic};

/// No worm at this point.
pub const NO_WORM: u16 = u16::MAX;

/// One string of stones and what tactical reading says of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worm {
    /// A stone of the worm (its first in board order).
    pub origin: Loc,
    /// Its colour.
    pub colour: Player,
    /// Stones in it.
    pub size: u16,
    /// Liberties, counted up to 8.
    pub liberties: u16,
    /// The opponent moving first: can it be captured, and where.
    pub attack: Tactic,
    /// Its owner moving first: can it be saved, and where.
    pub defence: Tactic,
}

impl Worm {
    /// Captured whoever moves first.
    pub fn is_dead(&self) -> bool {
        self.attack.outcome != Outcome::Fail && self.defence.outcome == Outcome::Fail
    }

    /// Captured if the opponent moves first, saved if its owner does.
    pub fn is_critical(&self) -> bool {
        self.attack.outcome != Outcome::Fail && self.defence.outcome != Outcome::Fail
    }

    /// Rough worth in points: its stones count twice (area lost and gained).
    pub fn value(&self) -> f32 {
        2.0 * self.size as f32 + self.liberties.min(4) as f32 * 0.5
    }
}

/// Every worm of a position and the worm of each point.
#[derive(Clone, Debug)]
pub struct Worms {
    /// The worms, in board order of their origins.
    pub list: Vec<Worm>,
    id: PointMap<u16>,
}

/// Reading results to reuse for worms a move did not touch.
pub trait Known {
    /// The earlier results for the worm whose stones include `origin`, if still valid.
    fn known(&self, b: &Board, origin: Loc) -> Option<(Tactic, Tactic)>;
}

/// Nothing known: read every worm.
pub struct Unknown;

impl Known for Unknown {
    fn known(&self, _: &Board, _: Loc) -> Option<(Tactic, Tactic)> {
        None
    }
}

const SAFE: Tactic = Tactic {
    outcome: Outcome::Fail,
    point: None,
    uncertain: false,
};
const SAVED: Tactic = Tactic {
    outcome: Outcome::Win,
    point: None,
    uncertain: false,
};

impl Worms {
    /// Finds the worms of `b` and reads the weak ones (few liberties).
    pub fn new(b: &Board, reader: &mut Reader, known: &dyn Known) -> Worms {
        let size = b.size();
        let mut id = PointMap::new(NO_WORM);
        let mut list = Vec::new();
        let max_libs = reader.limits().max_liberties;
        for l in size.points() {
            let Some(colour) = b.stone(l) else { continue };
            if id[l] != NO_WORM {
                continue;
            }
            let n = list.len() as u16;
            let mut stones = 0u16;
            for s in b.chain(l) {
                id[s] = n;
                stones += 1;
            }
            let libs: Points<8> = liberties(b, l);
            let (attack, defence) = if libs.len() > max_libs {
                (SAFE, SAVED)
            } else if let Some(k) = known.known(b, l) {
                k
            } else {
                let attack = reader.attack(b, l);
                let defence = if attack.outcome == Outcome::Fail {
                    SAVED
                } else {
                    reader.defend(b, l)
                };
                (attack, defence)
            };
            list.push(Worm {
                origin: l,
                colour,
                size: stones,
                liberties: libs.len() as u16,
                attack,
                defence,
            });
        }
        Worms { list, id }
    }

    /// The index of the worm at `l`, if there is a stone.
    #[inline]
    pub fn at(&self, l: Loc) -> Option<usize> {
        let i = self.id[l];
        (i != NO_WORM).then_some(i as usize)
    }

    /// The worm at `l`, if there is a stone.
    pub fn worm_at(&self, l: Loc) -> Option<&Worm> {
        self.at(l).map(|i| &self.list[i])
    }
}
