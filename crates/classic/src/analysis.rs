//! One position understood: worms, dragons, who wins the open fights with the side to
//! move first, how alive every stone is, and who owns every point.

use tengen_rules::{Board, Loc, Player};

use crate::dragons::{Dragons, Status};
use crate::influence::Influence;
use crate::points::PointMap;
use crate::reading::Reader;
use crate::worms::{Known, Worms};

/// The classical engine's view of a position.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The side to move, which wins the first open fight it picks.
    pub to_move: Player,
    /// Worms and their tactical status.
    pub worms: Worms,
    /// Dragons and their life estimate.
    pub dragons: Dragons,
    /// How alive each worm is for its owner: 1 alive, 0 unsettled, -1 dead.
    pub life: Vec<f32>,
    /// Influence of the living stones.
    pub influence: Influence,
    /// Ownership of every point from White's view (-1 Black's, 1 White's).
    pub ownership: PointMap<f32>,
    /// Expected area of White minus Black, before komi.
    pub white_area: f32,
}

/// Least ownership of a point in an area that only one colour borders.
const AREA_FLOOR: f32 = 0.6;
/// The same when the surrounding dragon is alive: the area is all but secure.
const SAFE_AREA_FLOOR: f32 = 0.95;

/// An open fight: a worm or dragon whose fate the next move decides.
struct Fight {
    colour: Player,
    value: f32,
    /// The owner saves it here.
    save: Option<Loc>,
    /// The opponent kills it here.
    kill: Option<Loc>,
    worms: Vec<usize>,
}

impl Analysis {
    /// Analyses `b` with `to_move` to play; `known` lends reading results of untouched worms.
    pub fn new(b: &Board, to_move: Player, reader: &mut Reader, known: &dyn Known) -> Analysis {
        let worms = Worms::new(b, reader, known);
        let mut dead: Vec<bool> = worms.list.iter().map(|w| w.is_dead()).collect();
        let mut dragons = Dragons::new(b, &worms, &dead);
        let mut life = life_of(&worms, &dragons, &dead);
        // Dead dragons, and weak ones shut in the opponent's area, are lost: their area
        // is the opponent's eye space, so the dragons are formed again without them.
        let first = Influence::new(b, |l| worms.at(l).map_or(0.0, |w| life[w].max(0.0)));
        let enclosed = enclosed_dragons(b, &worms, &dragons, &first);
        if !enclosed.is_empty() {
            for d in enclosed {
                for &w in &dragons.list[d].worms {
                    dead[w] = true;
                }
            }
            dragons = Dragons::new(b, &worms, &dead);
            life = life_of(&worms, &dragons, &dead);
        }

        let mut fights: Vec<Fight> = Vec::new();
        for (i, w) in worms.list.iter().enumerate() {
            if w.is_critical() {
                fights.push(Fight {
                    colour: w.colour,
                    value: w.value(),
                    save: w.defence.point,
                    kill: w.attack.point,
                    worms: vec![i],
                });
            }
        }
        for d in &dragons.list {
            if d.status == Status::Critical {
                fights.push(Fight {
                    colour: d.colour,
                    value: d.value(),
                    save: d.key_point,
                    kill: d.key_point,
                    worms: d.worms.clone(),
                });
            }
        }
        resolve(&mut fights, to_move, &mut life);

        let influence = Influence::new(b, |l| worms.at(l).map_or(0.0, |w| life[w].max(0.0)));
        let size = b.size();
        let mut ownership = PointMap::new(0.0f32);
        let mut white_area = 0.0;
        for l in size.points() {
            let white = |p: Player, v: f32| if p == Player::White { v } else { -v };
            let own = match (b.stone(l), worms.at(l)) {
                (Some(c), Some(w)) if life[w] >= 0.0 => white(c, life[w]),
                (Some(c), Some(w)) if dragons.eye_of(l).is_none() => white(c, life[w]),
                _ => match dragons.eye_of(l) {
                    Some(d) => {
                        let dr = &dragons.list[d];
                        let wl = dr.worms.iter().map(|&w| life[w]).fold(f32::MAX, f32::min);
                        white(dr.colour, wl)
                    }
                    None => {
                        let lean = influence.white_ownership(l);
                        match dragons.area_of(l) {
                            // A larger area one colour surrounds: at least leaning its way.
                            Some(d) => {
                                let dr = &dragons.list[d];
                                let wl = dr.worms.iter().map(|&w| life[w]).fold(1.0, f32::min);
                                let floor = if dr.status == Status::Alive {
                                    SAFE_AREA_FLOOR
                                } else {
                                    AREA_FLOOR
                                };
                                let toward = white(dr.colour, lean).max(floor);
                                white(dr.colour, toward * wl.max(0.0))
                            }
                            None => lean,
                        }
                    }
                },
            };
            ownership[l] = own;
            white_area += own;
        }
        Analysis {
            to_move,
            worms,
            dragons,
            life,
            influence,
            ownership,
            white_area,
        }
    }

    /// Expected score for `pla` (area, komi counted for White).
    pub fn score_for(&self, pla: Player, komi: f32) -> f32 {
        let w = self.white_area + komi;
        if pla == Player::White {
            w
        } else {
            -w
        }
    }

    /// How alive the stone at `l` is for its owner (None for an empty point).
    pub fn life_at(&self, l: Loc) -> Option<f32> {
        self.worms.at(l).map(|w| self.life[w])
    }

    /// Stones judged dead (captured in the end).
    pub fn dead_stones(&self, b: &Board) -> Vec<Loc> {
        b.size()
            .points()
            .filter(|&l| self.life_at(l).is_some_and(|v| v < 0.0))
            .collect()
    }

    /// Stones judged alive in seki.
    pub fn seki_stones(&self, b: &Board) -> Vec<Loc> {
        b.size()
            .points()
            .filter(|&l| {
                self.dragons
                    .at(&self.worms, l)
                    .is_some_and(|d| self.dragons.list[d].status == Status::Seki)
            })
            .collect()
    }
}

/// How alive each worm is from its dragon's status (-1 for worms already lost).
fn life_of(worms: &Worms, dragons: &Dragons, dead: &[bool]) -> Vec<f32> {
    (0..worms.list.len())
        .map(|i| {
            if dead[i] {
                return -1.0;
            }
            let d = &dragons.list[dragons.of_worm[i] as usize];
            match d.status {
                Status::Alive | Status::Seki => 1.0,
                Status::Weak => (0.35 + d.escape as f32 / 25.0 + 0.1 * d.eyes_max as f32).min(0.85),
                Status::Critical => 0.0,
                Status::Dead => -1.0,
            }
        })
        .collect()
}

/// Dead dragons, and weak dragons that cannot reach a living friend through empty
/// points and whose reachable area the opponent's influence dominates: invaders with
/// no room to live.
fn enclosed_dragons(b: &Board, worms: &Worms, dragons: &Dragons, inf: &Influence) -> Vec<usize> {
    let mut out = Vec::new();
    let mut seen = PointMap::new(false);
    let mut stack = Vec::new();
    let mut region = Vec::new();
    for (id, d) in dragons.list.iter().enumerate() {
        if d.status == Status::Dead {
            out.push(id);
            continue;
        }
        if d.status != Status::Weak {
            continue;
        }
        seen.fill(false);
        stack.clear();
        region.clear();
        for &w in &d.worms {
            let o = worms.list[w].origin;
            seen[o] = true;
            stack.push(o);
        }
        let mut friend = false;
        let (mut room, mut theirs) = (0usize, 0usize);
        while let Some(p) = stack.pop() {
            region.push(p);
            if b.is_empty_at(p) {
                room += 1;
                if inf.of(d.colour.opp(), p) > inf.of(d.colour, p) {
                    theirs += 1;
                }
            }
            for n in b.neighbours(p) {
                if seen[n] {
                    continue;
                }
                let passable = match b.stone(n) {
                    None => true,
                    Some(c) if c == d.colour => {
                        match dragons.at(worms, n).map(|x| dragons.list[x].status) {
                            Some(Status::Alive) | Some(Status::Seki) => {
                                friend = true;
                                false
                            }
                            _ => true,
                        }
                    }
                    // Dead opponent stones are room too.
                    Some(_) => worms.at(n).is_some_and(|w| worms.list[w].is_dead()),
                };
                if passable {
                    seen[n] = true;
                    stack.push(n);
                }
            }
            if friend {
                break;
            }
        }
        // Most of the room is the opponent's; a bigger group needs it nearly all theirs.
        let needed = if d.stones <= 6 { 2.0 / 3.0 } else { 0.85 };
        if !friend && theirs as f32 >= needed * room as f32 {
            out.push(id);
        }
    }
    out
}

/// Plays the open fights out greedily: each side in turn settles the biggest one in its
/// favour (saving its own or killing the opponent's); a point that settles several
/// fights settles them all at once.
fn resolve(fights: &mut [Fight], to_move: Player, life: &mut [f32]) {
    let mut done = vec![false; fights.len()];
    let mut mover = to_move;
    loop {
        let pick = (0..fights.len())
            .filter(|&i| !done[i])
            .max_by(|&a, &b| fights[a].value.total_cmp(&fights[b].value));
        let Some(i) = pick else { break };
        let point = if fights[i].colour == mover {
            fights[i].save
        } else {
            fights[i].kill
        };
        for j in 0..fights.len() {
            if done[j] {
                continue;
            }
            let f = &fights[j];
            let own = f.colour == mover;
            let hit = j == i || (point.is_some() && (if own { f.save } else { f.kill }) == point);
            if !hit {
                continue;
            }
            done[j] = true;
            for &w in &f.worms {
                life[w] = if own { life[w].max(0.8) } else { -0.9 };
            }
        }
        mover = mover.opp();
    }
}
