//! Influence: living stones radiate, halving with each step through empty points
//! and stopped by stones; the balance of the two colours' influence estimates who
//! owns each empty point (territory where it is one-sided, moyo where it leans).

use tengen_rules::{Board, Loc, Player};

use crate::points::PointMap;

/// Steps a stone's influence reaches.
const RADIUS: usize = 4;
/// Influence balance (in stone-neighbour units) that makes a point half owned.
const SCALE: f32 = 1.2;

/// Each colour's influence at every point.
#[derive(Clone, Debug)]
pub struct Influence {
    black: PointMap<f32>,
    white: PointMap<f32>,
}

impl Influence {
    /// Radiates influence from every stone with its strength (`strength(l)` in 0..=1
    /// for the stone's owner; stones of strength 0 neither radiate nor block).
    pub fn new(b: &Board, strength: impl Fn(Loc) -> f32) -> Influence {
        let size = b.size();
        let mut inf = Influence {
            black: PointMap::new(0.0),
            white: PointMap::new(0.0),
        };
        let mut dist: PointMap<u8> = PointMap::new(u8::MAX);
        let mut touched: Vec<Loc> = Vec::new();
        let mut frontier: Vec<Loc> = Vec::new();
        let mut next: Vec<Loc> = Vec::new();
        let blocks = |l: Loc| b.stone(l).is_some() && strength(l) > 0.0;
        for src in size.points() {
            let Some(colour) = b.stone(src) else { continue };
            let s = strength(src);
            if s <= 0.0 {
                continue;
            }
            let map = match colour {
                Player::Black => &mut inf.black,
                Player::White => &mut inf.white,
            };
            for &t in &touched {
                dist[t] = u8::MAX;
            }
            touched.clear();
            frontier.clear();
            frontier.push(src);
            dist[src] = 0;
            touched.push(src);
            let mut amount = s;
            for _ in 0..RADIUS {
                next.clear();
                for &p in &frontier {
                    for n in b.neighbours(p) {
                        if dist[n] != u8::MAX || blocks(n) {
                            continue;
                        }
                        dist[n] = 1;
                        touched.push(n);
                        map[n] += amount;
                        next.push(n);
                    }
                }
                std::mem::swap(&mut frontier, &mut next);
                amount *= 0.5;
            }
        }
        inf
    }

    /// Influence of `colour` at `l`.
    pub fn of(&self, colour: Player, l: Loc) -> f32 {
        match colour {
            Player::Black => self.black[l],
            Player::White => self.white[l],
        }
    }

    /// Estimated ownership of a point without stones, from White's view (-1..=1).
    pub fn white_ownership(&self, l: Loc) -> f32 {
        let (w, bl) = (self.white[l], self.black[l]);
        let lean = ((w - bl) / SCALE).tanh();
        // Points hardly anyone reaches are nobody's yet.
        let reach = ((w + bl) / 0.5).min(1.0);
        lean * reach
    }
}
