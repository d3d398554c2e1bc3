//! A cheap move prior for the search: each legal move is described by a few local
//! features (its 3x3 shape, distance to the last moves, captures, ataris, escapes, line,
//! and what the analysis says of the point), and its logit is the sum of the features'
//! learned weights (a linear softmax, as in Coulom's and the early Monte Carlo programs).
//!
//! The weights were fitted by `crates/classic/scripts/fit_prior.py` to b6c96's policy on
//! positions from Tengen's games; the features are numbered here and nowhere else, so the
//! script reads them from the `prior_features` example rather than computing its own.

use std::sync::OnceLock;

use tengen_rules::{Board, Loc, Player};

use crate::points::{edge_distance, manhattan, PointMap};

/// Number of distinct raw 3x3 shape codes (8 neighbours, 2 bits each).
pub const SHAPES: u32 = 1 << 16;

/// Feature groups after the shapes: (name, values). A feature's number is `SHAPES` plus
/// its group's offset plus its value.
pub const GROUPS: &[(&str, u32)] = &[
    ("dist_last", 7),
    ("dist_own_last", 7),
    ("capture", 4),
    ("save", 4),
    ("atari", 3),
    ("self_atari", 3),
    ("line", 5),
    ("line_alone", 6),
    ("libs_after", 4),
    ("own_eye", 2),
    ("key_point", 2),
    ("ownership", 5),
];

const fn offset(group: usize) -> u32 {
    let mut o = SHAPES;
    let mut i = 0;
    while i < group {
        o += GROUPS[i].1;
        i += 1;
    }
    o
}

/// Total number of features.
pub const FEATURES: u32 = offset(GROUPS.len());

/// What the prior knows of the position besides the board.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    /// The opponent's last stone.
    pub last: Option<Loc>,
    /// The mover's own previous stone.
    pub own_last: Option<Loc>,
}

/// What the analysis says of a point, when there is one.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointNotes {
    /// The point attacks or defends a critical worm or dragon.
    pub key_point: bool,
    /// Ownership from the mover's view (-1 theirs .. 1 ours).
    pub ownership: f32,
}

/// Up to 16 feature numbers of one move.
pub type Features = heapless::Vec<u32, 16>;

/// The raw 3x3 code of the point's eight neighbours from `pla`'s view, clockwise from
/// north: 0 empty, 1 own stone, 2 opponent stone, 3 off the board.
pub fn shape_code(b: &Board, l: Loc, pla: Player) -> u32 {
    let size = b.size();
    let (x, y) = size.xy(l);
    const RING: [(i32, i32); 8] = [
        (0, -1),
        (1, -1),
        (1, 0),
        (1, 1),
        (0, 1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
    ];
    let mut code = 0;
    for (i, (dx, dy)) in RING.iter().enumerate() {
        let (nx, ny) = (x as i32 + dx, y as i32 + dy);
        let v = if nx < 0 || ny < 0 {
            3
        } else {
            match size.loc(nx as usize, ny as usize) {
                None => 3,
                Some(n) => match b.stone(n) {
                    None => 0,
                    Some(c) if c == pla => 1,
                    Some(_) => 2,
                },
            }
        };
        code |= v << (2 * i);
    }
    code
}

/// The least of a shape code's eight rotations and reflections, so that one weight
/// serves every orientation.
pub fn canonical_shape(code: u32) -> u32 {
    let cell = |c: u32, i: u32| (c >> (2 * (i % 8))) & 3;
    let mut best = u32::MAX;
    for reflect in [false, true] {
        for turn in [0u32, 2, 4, 6] {
            let mut c = 0;
            for i in 0..8u32 {
                // Turning by 90 degrees moves each neighbour two places round the ring;
                // reflecting reverses the ring (north stays north).
                let from = if reflect { (8 - i) % 8 } else { i };
                c |= cell(code, from + turn) << (2 * i);
            }
            best = best.min(c);
        }
    }
    best
}

fn bucket_distance(b: &Board, from: Option<Loc>, l: Loc) -> u32 {
    match from {
        Some(p) if !b.is_empty_at(p) => (manhattan(b.size(), p, l).clamp(1, 6) - 1) as u32,
        _ => 6,
    }
}

/// One position as the prior sees it: the board, the mover, the last stones, and which
/// points have a stone within two steps (computed once for every move's features).
pub struct Position<'a> {
    b: &'a Board,
    pla: Player,
    ctx: Context,
    crowded: PointMap<bool>,
}

impl<'a> Position<'a> {
    /// The position `b` with `pla` to move.
    pub fn new(b: &'a Board, pla: Player, ctx: Context) -> Position<'a> {
        let size = b.size();
        let mut crowded = PointMap::new(false);
        for s in size.points().filter(|&s| !b.is_empty_at(s)) {
            let (x, y) = size.xy(s);
            for dy in -2i32..=2 {
                for dx in -2i32..=2 {
                    if dx.abs() + dy.abs() > 2 {
                        continue;
                    }
                    let (nx, ny) = (x as i32 + dx, y as i32 + dy);
                    if nx >= 0 && ny >= 0 {
                        if let Some(n) = size.loc(nx as usize, ny as usize) {
                            crowded[n] = true;
                        }
                    }
                }
            }
        }
        Position {
            b,
            pla,
            ctx,
            crowded,
        }
    }

    /// The features of playing at the empty, legal point `l`.
    pub fn features(&self, l: Loc, notes: Option<PointNotes>) -> Features {
        let (b, pla, ctx) = (self.b, self.pla, &self.ctx);
        let mut f = Features::new();
        let mut push = |group: usize, value: u32| {
            debug_assert!(value < GROUPS[group].1);
            let _ = f.push(offset(group) + value);
        };
        let size = b.size();
        push(0, bucket_distance(b, ctx.last, l));
        push(1, bucket_distance(b, ctx.own_last, l));
        // Captures, and saving our own chains in atari next to the move.
        let mut captured = 0usize;
        let mut in_atari_own = false;
        let mut atari_opp = 0u32;
        for n in b.neighbours(l) {
            match b.stone(n) {
                Some(c) if c != pla => {
                    let libs = b.liberties_up_to(n, 3);
                    if libs == 1 {
                        captured += b.chain_len(n);
                    } else if libs == 2 {
                        atari_opp = atari_opp.max(if b.chain_len(n) >= 2 { 2 } else { 1 });
                    }
                }
                Some(_) => in_atari_own |= b.in_atari(n),
                None => {}
            }
        }
        // A chain touching l on two sides counts twice: a bucket, not a count.
        push(
            2,
            match captured {
                0 => 0,
                1 => 1,
                2..=3 => 2,
                _ => 3,
            },
        );
        let libs = if captured > 0 {
            // A capture frees at least one liberty.
            b.liberties_after(l, pla, 4).max(1) + 1
        } else {
            b.liberties_after(l, pla, 4)
        };
        let save = match (in_atari_own, libs) {
            (false, _) => 0,
            (true, 0 | 1) => 1,
            (true, 2) => 2,
            (true, _) => 3,
        };
        push(3, save);
        push(4, if captured > 0 { 0 } else { atari_opp });
        let self_atari = if captured > 0 {
            0
        } else {
            b.self_atari_stones(l, pla)
        };
        push(5, self_atari.min(2) as u32);
        let line = edge_distance(size, l).min(4) as u32;
        push(6, line);
        push(7, if self.crowded[l] { 5 } else { line });
        push(8, (libs.clamp(1, 4) - 1) as u32);
        push(9, b.is_simple_eye(l, pla) as u32);
        if let Some(n) = notes {
            push(10, n.key_point as u32);
            let o = n.ownership;
            let bucket = if o < -0.85 {
                0
            } else if o < -0.5 {
                1
            } else if o <= 0.5 {
                2
            } else if o <= 0.85 {
                3
            } else {
                4
            };
            push(11, bucket);
        }
        let _ = f.push(canonical_shape(shape_code(b, l, pla)));
        f
    }
}

/// Learned weights: one per canonical shape, one per value of every other group.
pub struct Weights {
    shapes: Vec<f32>,
    groups: Vec<f32>,
}

impl Weights {
    /// Weights from a sparse list of (feature number, weight); unlisted features weigh 0.
    pub fn from_pairs(pairs: &[(u32, f32)]) -> Weights {
        let mut w = Weights {
            shapes: vec![0.0; SHAPES as usize],
            groups: vec![0.0; (FEATURES - SHAPES) as usize],
        };
        for &(i, v) in pairs {
            if i < SHAPES {
                w.shapes[i as usize] = v;
            } else if i < FEATURES {
                w.groups[(i - SHAPES) as usize] = v;
            }
        }
        // Every orientation of a shape shares the canonical one's weight.
        for code in 0..SHAPES {
            let c = canonical_shape(code);
            w.shapes[code as usize] = w.shapes[c as usize];
        }
        w
    }

    /// The built-in weights, for moves described with the analysis' notes.
    pub fn builtin() -> &'static Weights {
        static W: OnceLock<Weights> = OnceLock::new();
        W.get_or_init(|| Weights::from_pairs(crate::prior_weights::WEIGHTS))
    }

    /// The built-in weights fitted without the analysis' notes (a prior with no analysis).
    pub fn bare() -> &'static Weights {
        static W: OnceLock<Weights> = OnceLock::new();
        W.get_or_init(|| Weights::from_pairs(crate::prior_weights_bare::WEIGHTS_BARE))
    }

    /// The logit of a move with these features.
    pub fn logit(&self, f: &[u32]) -> f32 {
        f.iter()
            .map(|&i| {
                if i < SHAPES {
                    self.shapes[i as usize]
                } else {
                    self.groups
                        .get((i - SHAPES) as usize)
                        .copied()
                        .unwrap_or(0.0)
                }
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::BoardSize;

    fn board(rows: &[&str]) -> Board {
        Board::from_rows(BoardSize::square(rows.len()).unwrap(), rows).unwrap()
    }

    fn shape_at(rows: &[&str], x: usize, y: usize, pla: Player) -> u32 {
        let b = board(rows);
        canonical_shape(shape_code(&b, b.size().loc(x, y).unwrap(), pla))
    }

    #[test]
    fn a_shape_and_its_rotations_and_reflections_share_one_code() {
        // A hane around C3: own stone north, opponent stone north-east.
        let hane = [".....", "..XO.", ".....", ".....", "....."];
        let base = shape_at(&hane, 2, 2, Player::Black);
        // Turned a quarter clockwise: north goes east, north-east goes south-east.
        let turned = [".....", ".....", "...X.", "...O.", "....."];
        assert_eq!(shape_at(&turned, 2, 2, Player::Black), base);
        // Mirrored left to right.
        let mirrored = [".....", ".OX..", ".....", ".....", "....."];
        assert_eq!(shape_at(&mirrored, 2, 2, Player::Black), base);
        // The other colour to play sees another shape.
        assert_ne!(shape_at(&hane, 2, 2, Player::White), base);
        // Every canonical code is its own, and no larger than the code.
        for code in (0..SHAPES).step_by(97) {
            let c = canonical_shape(code);
            assert!(c <= code);
            assert_eq!(canonical_shape(c), c);
        }
    }

    #[test]
    fn the_edge_is_part_of_the_shape() {
        let empty = [".....", ".....", ".....", ".....", "....."];
        assert_eq!(shape_at(&empty, 2, 2, Player::Black), 0);
        let corner = shape_at(&empty, 0, 0, Player::Black);
        assert_ne!(corner, 0);
        assert_eq!(corner, shape_at(&empty, 4, 4, Player::Black));
        assert_ne!(corner, shape_at(&empty, 2, 0, Player::Black));
    }

    #[test]
    fn features_name_captures_ataris_escapes_and_self_ataris() {
        let pla = Player::Black;
        let feats = |rows: &[&str], x: usize, y: usize| {
            let b = board(rows);
            let at = b.size().loc(x, y).unwrap();
            let f = Position::new(&b, pla, Context::default()).features(at, None);
            assert!(f.iter().all(|&i| i < FEATURES), "{f:?}");
            f
        };
        // C2 takes the white stone at C3, which has no other liberty.
        let f = feats(&[".....", "..X..", ".XOX.", ".....", "....."], 2, 3);
        assert!(f.contains(&(offset(2) + 1)), "capture: {f:?}");
        // The black stone at C3 is in atari; C4 runs out to three liberties.
        let f = feats(&[".....", "..O..", ".OXO.", ".....", "....."], 2, 3);
        assert!(f.contains(&(offset(3) + 3)), "escape: {f:?}");
        // B4 ataris the single white stone at C4.
        let f = feats(&[".....", "..X..", "..O..", "..X..", "....."], 1, 2);
        assert!(f.contains(&(offset(4) + 1)), "atari: {f:?}");
        // A1 between two white stones is a one-stone self-atari.
        let f = feats(&[".....", ".....", ".....", ".....", ".O..."], 0, 4);
        assert!(f.contains(&(offset(5) + 1)), "self-atari: {f:?}");
        // Alone on the third line, with no last move.
        let f = feats(&[".....", ".....", ".....", ".....", "....."], 2, 2);
        assert!(f.contains(&(offset(7) + 2)), "alone: {f:?}");
        assert!(f.contains(&(offset(0) + 6)), "no last move: {f:?}");
    }

    #[test]
    fn weights_give_every_orientation_the_canonical_weight() {
        let hane = [".....", "..XO.", ".....", ".....", "....."];
        let canon = shape_at(&hane, 2, 2, Player::Black);
        let w = Weights::from_pairs(&[(canon, 1.5), (offset(6) + 2, -0.5)]);
        let b = board(&[".....", ".....", "...X.", "...O.", "....."]);
        let raw = shape_code(&b, b.size().loc(2, 2).unwrap(), Player::Black);
        assert_eq!(w.logit(&[raw]), 1.5);
        assert_eq!(w.logit(&[canon, offset(6) + 2]), 1.0);
    }
}
