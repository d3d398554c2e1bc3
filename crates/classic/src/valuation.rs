//! Move reasons and their valuation in points.
//!
//! Every candidate is tried on the board twice: played by us (the opponent then to
//! move) and played by the opponent (we then to move). Each position is analysed
//! afresh — tactical status, dragons, open fights, influence — reusing the reading of
//! worms the move did not touch. Comparing these with the position where we pass
//! gives the move's reasons (attack, defence, threats, either/all-of, atari-atari,
//! connections, cuts, owl attack/defence, semeai, eyes, territory, antisuji) and its
//! value: our gain over passing, half of what the opponent would gain by playing
//! there, a follow-up bonus for threats, and a small shape term.

use tengen_rules::{Board, Game, Loc, Move, Player};

use crate::analysis::Analysis;
use crate::dragons::{is_self_atari, Status};
use crate::points::{diagonals, edge_distance, manhattan};
use crate::reading::{Reader, Tactic};
use crate::worms::{Known, Worms};

/// Why a move is worth playing (or not), as GNU Go names its move reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Captures the opponent's worm at this point (its origin).
    Attack(Loc),
    /// Saves our worm at this point.
    Defend(Loc),
    /// Threatens to capture the opponent's worm here (a follow-up).
    Threat(Loc),
    /// Threatens two or more worms at once: one of them falls.
    Either,
    /// Saves two or more of our worms at once.
    AllOf,
    /// An atari whose follow-up threatens more: the start of a chain of ataris.
    AtariAtari,
    /// Joins dragons of ours that were apart.
    Connect,
    /// Splits an opponent dragon.
    Cut,
    /// Makes one of our dragons alive (owl defence, eye making, semeai).
    OwlDefend(Loc),
    /// Kills an opponent dragon (owl attack, eye destroying, semeai).
    OwlAttack(Loc),
    /// Wins a capturing race for the dragon at this point (ours or theirs).
    Semeai(Loc),
    /// Gives our dragon here a sure eye more.
    MakeEye(Loc),
    /// Takes a possible eye from the opponent's dragon here.
    DestroyEye(Loc),
    /// Gains territory or moyo.
    Territory,
    /// A move never to play: filling our own eye, or a self-atari that only loses stones.
    Antisuji,
}

/// One candidate's valuation.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveValue {
    /// The move.
    pub loc: Loc,
    /// Total value in points (the sum of the parts below).
    pub value: f32,
    /// Our expected score after it, minus after passing.
    pub territorial: f32,
    /// Half of what the opponent would gain by playing here.
    pub reverse: f32,
    /// Threats it leaves behind, weighted as a follow-up.
    pub followup: f32,
    /// Local shape.
    pub shape: f32,
    /// The reasons found.
    pub reasons: Vec<Reason>,
}

/// Reading results of a base position, lent to positions one move away from it.
struct Untouched<'a> {
    base: &'a Worms,
    near: Loc,
}

impl Known for Untouched<'_> {
    fn known(&self, b: &Board, origin: Loc) -> Option<(Tactic, Tactic)> {
        let w = self.base.worm_at(origin)?;
        let size = b.size();
        if Some(w.colour) != b.stone(origin) || b.chain_len(origin) != w.size as usize {
            return None;
        }
        if b.liberties_up_to(origin, 9) != w.liberties as usize {
            return None;
        }
        if b.chain(origin).any(|s| manhattan(size, s, self.near) <= 3) {
            return None;
        }
        Some((w.attack, w.defence))
    }
}

/// The base analyses of a position that every candidate is compared with.
pub struct Baseline {
    /// The position with us to move.
    pub ours: Analysis,
    /// The position if we pass (opponent to move).
    pub passed: Analysis,
}

impl Baseline {
    /// Analyses `game`'s position both ways.
    pub fn new(game: &Game, reader: &mut Reader) -> Baseline {
        let b = game.board();
        let pla = game.to_move();
        let ours = Analysis::new(b, pla, reader, &crate::worms::Unknown);
        let passed = Analysis::new(
            b,
            pla.opp(),
            reader,
            &Untouched {
                base: &ours.worms,
                near: far_away(),
            },
        );
        Baseline { ours, passed }
    }
}

/// A point no board reaches, so that nothing counts as touched.
fn far_away() -> Loc {
    tengen_rules::BoardSize::square(tengen_rules::MAX_SIZE)
        .ok()
        .and_then(|s| s.loc(0, 0))
        .expect("the largest board has a corner")
}

/// Candidate points worth valuing: every legal point on small boards; on large boards
/// those near stones, and the open third and fourth lines.
pub fn candidates(game: &Game) -> Vec<Loc> {
    let b = game.board();
    let size = b.size();
    let stones: Vec<Loc> = size.points().filter(|&l| b.stone(l).is_some()).collect();
    let small = size.area() <= 13 * 13;
    size.points()
        .filter(|&l| game.is_legal(Move::Play(l)))
        .filter(|&l| {
            small
                || (2..=3).contains(&edge_distance(size, l))
                || stones.iter().any(|&s| manhattan(size, s, l) <= 3)
        })
        .collect()
}

/// Values one candidate for the player to move.
pub fn value_move(game: &Game, base: &Baseline, reader: &mut Reader, m: Loc) -> MoveValue {
    let b = game.board();
    let pla = game.to_move();
    let komi = game.white_bonus();
    let mut reasons = Vec::new();
    let eye_fill = b.is_simple_eye(m, pla) && !b.would_capture(m, pla);

    let mut after = b.clone();
    after.play(Move::Play(m), pla);
    let us = Analysis::new(
        &after,
        pla.opp(),
        reader,
        &Untouched {
            base: &base.ours.worms,
            near: m,
        },
    );
    let territorial = us.score_for(pla, komi) - base.passed.score_for(pla, komi);

    let reverse = if b.is_legal(Move::Play(m), pla.opp(), false) {
        let mut theirs = b.clone();
        theirs.play(Move::Play(m), pla.opp());
        let them = Analysis::new(
            &theirs,
            pla,
            reader,
            &Untouched {
                base: &base.ours.worms,
                near: m,
            },
        );
        (0.5 * (base.ours.score_for(pla, komi) - them.score_for(pla, komi))).max(0.0)
    } else {
        0.0
    };

    // Reasons: how the worms and dragons fare against passing.
    let passed = &base.passed;
    let mut threatened = 0;
    let mut followup = 0.0;
    for (i, w) in passed.worms.list.iter().enumerate() {
        let before = passed.life[i];
        let now = match after.stone(w.origin) {
            Some(c) if c == w.colour => us.life_at(w.origin).unwrap_or(-1.0),
            _ => -1.0,
        };
        if w.colour == pla {
            if before < 0.0 && now > 0.0 {
                reasons.push(Reason::Defend(w.origin));
            }
        } else if before >= 0.0 && now < 0.0 {
            reasons.push(Reason::Attack(w.origin));
        } else if now >= 0.0 {
            if let Some(uw) = us.worms.worm_at(w.origin) {
                if uw.is_critical() && !w.is_critical() {
                    reasons.push(Reason::Threat(w.origin));
                    threatened += 1;
                    followup += 0.3 * uw.value();
                }
            }
        }
    }
    if threatened >= 2 {
        reasons.push(Reason::Either);
        let atari = b
            .neighbours(m)
            .any(|n| b.stone(n) == Some(pla.opp()) && after.in_atari(n));
        if atari {
            reasons.push(Reason::AtariAtari);
        }
    }
    if reasons
        .iter()
        .filter(|r| matches!(r, Reason::Defend(_)))
        .count()
        >= 2
    {
        reasons.push(Reason::AllOf);
    }
    let dragons_of = |a: &Analysis, c: Player| {
        a.dragons
            .list
            .iter()
            .filter(|d| d.colour == c && d.status != Status::Dead)
            .count()
    };
    if dragons_of(&us, pla) < dragons_of(passed, pla) {
        reasons.push(Reason::Connect);
    }
    if dragons_of(&us, pla.opp()) > dragons_of(passed, pla.opp()) {
        reasons.push(Reason::Cut);
    }
    for d in &passed.dragons.list {
        let origin = passed.worms.list[d.worms[0]].origin;
        let later = us
            .dragons
            .at(&us.worms, origin)
            .map(|i| &us.dragons.list[i]);
        let now = later.map(|x| x.status);
        let safe = |s: Option<Status>| matches!(s, Some(Status::Alive) | Some(Status::Seki));
        let lost = |s: Option<Status>| matches!(s, None | Some(Status::Dead));
        let decided = if d.colour == pla {
            !safe(Some(d.status)) && safe(now)
        } else {
            !lost(Some(d.status)) && lost(now)
        };
        if decided {
            reasons.push(if d.colour == pla {
                Reason::OwlDefend(origin)
            } else {
                Reason::OwlAttack(origin)
            });
            if d.in_race {
                reasons.push(Reason::Semeai(origin));
            }
        }
        // A dragon that no longer stands has no eyes left.
        let (lo, hi) = later.map_or((0, 0), |x| (x.eyes_min, x.eyes_max));
        if d.colour == pla && lo > d.eyes_min {
            reasons.push(Reason::MakeEye(origin));
        }
        if d.colour != pla && hi < d.eyes_max {
            reasons.push(Reason::DestroyEye(origin));
        }
    }
    let selfish = is_self_atari(b, m, pla) && us.life_at(m).is_some_and(|v| v < 0.0);
    if eye_fill || (selfish && !reasons.iter().any(|r| matches!(r, Reason::Attack(_)))) {
        reasons.push(Reason::Antisuji);
    }
    if reasons.is_empty() && territorial > 0.5 {
        reasons.push(Reason::Territory);
    }
    let shape = shape_value(b, m, pla);
    let value = if reasons.contains(&Reason::Antisuji) {
        -100.0
    } else {
        territorial + reverse + followup + shape
    };
    MoveValue {
        loc: m,
        value,
        territorial,
        reverse,
        followup,
        shape,
        reasons,
    }
}

/// A small shape table of our own: empty triangles are bad, early first- and
/// second-line moves away from stones are slow, and the open third and fourth lines
/// are good in the opening.
fn shape_value(b: &Board, m: Loc, pla: Player) -> f32 {
    let size = b.size();
    let (x, y) = size.xy(m);
    let mut v = 0.0;
    // Empty triangle: two of our stones around m in a 2x2 block whose fourth point is empty.
    for (dx, dy) in [(-1i32, -1i32), (1, -1), (-1, 1), (1, 1)] {
        let at = |ox: i32, oy: i32| {
            let (nx, ny) = (x as i32 + ox, y as i32 + oy);
            (nx >= 0 && ny >= 0)
                .then(|| size.loc(nx as usize, ny as usize))
                .flatten()
        };
        if let (Some(a), Some(c), Some(d)) = (at(dx, 0), at(0, dy), at(dx, dy)) {
            if b.stone(a) == Some(pla) && b.stone(c) == Some(pla) && b.is_empty_at(d) {
                v -= 1.0;
            }
        }
    }
    let near = size
        .points()
        .filter(|&s| b.stone(s).is_some() && manhattan(size, s, m) <= 2)
        .count();
    let crowded = b.num_stones(Player::Black) + b.num_stones(Player::White);
    let opening = crowded * 5 < size.area();
    match edge_distance(size, m) {
        0 if near == 0 => v -= 2.0,
        1 if opening && near == 0 => v -= 1.0,
        2 | 3 if opening && near == 0 => v += 0.5,
        _ => {}
    }
    // Diagonal contact keeps shape without touching: a small plus in fights.
    if diagonals(size, m).any(|d| b.stone(d) == Some(pla))
        && b.neighbours(m).any(|n| b.stone(n) == Some(pla.opp()))
    {
        v += 0.25;
    }
    v
}
