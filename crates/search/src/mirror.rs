//! Anti-mirror go (KataGo's `antiMirror`): recognise an opponent who answers each of our
//! moves with its point reflection through the centre, and steer the search towards
//! moves that punish it.
//!
//! As in KataGo (`searchmirror.cpp`):
//! - detection at each run's start from the game's moves, with the same thresholds: most of
//!   the opponent's moves mirrored, most recent ones too (decaying average), the last one
//!   certainly; then how many points the mirror would win by if it held to the end, and how
//!   far the central 7x7 is from symmetric;
//! - below the root, on every line where the opponent kept mirroring since the root: the
//!   opponent's mirror reply gets a large share of prior (three times more when it holds
//!   the centre and the komi favours it), our central moves a small one, both shrinking
//!   with depth; the mirror reply is forced to take a share of the visits, and is
//!   favoured outright when few visits went there, so that lines where mirroring loses are
//!   found; our centre move (and near-centre moves in the hard case) gets forced visits;
//! - in the hard case (the opponent holds the centre and the komi favours it), a position
//!   on such a line has its win rate shifted by who owns the centre point.
//!
//! Not the same: KataGo turns off its graph-search cache, noise pruning and value
//! weighting while a mirror is seen; Tengen has none of those. A stored prior is rounded
//! to three digits (KataGo biases the full-precision policy). On a reused tree, the lines
//! were checked for the mirror from the old root (KataGo re-checks from the new one).

use tengen_rules::{Game, HandicapBonus, Move, Player, ScoringRule};

use crate::filter::move_index;

/// Utility a forced child gets for its mover: larger than any real utility difference.
const FORCE: f64 = 100.0;

/// An opponent seen mirroring, as the search needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mirror {
    /// The player who mirrors (the opponent of the player to move at the root).
    pub mirroring: Player,
    /// Points the mirroring player wins by if the mirror holds to the end of the game.
    pub advantage: f64,
    /// How far the central 7x7 is from point-symmetric (0: exactly; grows quadratically).
    pub center_error: f64,
    /// Turns played before the root (lines are checked for mirroring from here on).
    root_turns: usize,
    /// The move that led to the root, as a policy index, if any.
    root_last: Option<u16>,
    /// Whether the mirroring player holds the centre point at the root.
    root_center_taken: bool,
    width: usize,
    height: usize,
}

/// What the anti-mirror logic does at one node, fixed when the node is expanded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// Nothing (no mirror on the line to this node).
    None,
    /// The mirroring player is to move: push its mirror reply (a policy index).
    Reply {
        /// The reflection of the last move, or pass when that point is not playable.
        mirror_move: u16,
        /// The mirroring player holds the centre and the komi favours it.
        difficult: bool,
    },
    /// We are to move: push the centre.
    Break {
        /// As for [`Hint::Reply`].
        difficult: bool,
    },
}

/// The node whose children selection weighs, as anti-mirror exploration needs it.
#[derive(Clone, Copy, Debug)]
pub struct Parent<'a> {
    /// White moves here.
    pub white: bool,
    /// The node's mean utility (White's).
    pub utility: f64,
    /// Its children's total weight.
    pub total: f64,
    /// The move that led here (`None` at the root: the game's last move).
    pub last_move: Option<u16>,
    /// In the hard case with us to move: the centre chain's liberties (else empty).
    pub center_liberties: &'a [u16],
}

/// [`Hint::None`] packed.
pub const NO_HINT: u16 = u16::MAX;
const BREAK_BIT: u16 = 1 << 15;
const DIFFICULT_BIT: u16 = 1 << 14;
const MOVE_MASK: u16 = (1 << 10) - 1;

impl Hint {
    /// The hint in two bytes (a node carries it).
    pub fn pack(self) -> u16 {
        let d = |difficult: bool| if difficult { DIFFICULT_BIT } else { 0 };
        match self {
            Hint::None => NO_HINT,
            Hint::Reply {
                mirror_move,
                difficult,
            } => (mirror_move & MOVE_MASK) | d(difficult),
            Hint::Break { difficult } => BREAK_BIT | d(difficult),
        }
    }

    /// The hint [`Hint::pack`] made.
    pub fn unpack(bits: u16) -> Hint {
        if bits == NO_HINT {
            return Hint::None;
        }
        let difficult = bits & DIFFICULT_BIT != 0;
        if bits & BREAK_BIT != 0 {
            Hint::Break { difficult }
        } else {
            Hint::Reply {
                mirror_move: bits & MOVE_MASK,
                difficult,
            }
        }
    }
}

impl Mirror {
    /// The mirror seen in `game`'s moves, from the point of view of the player to move.
    pub fn detect(game: &Game) -> Option<Mirror> {
        let size = game.board().size();
        let (width, height) = (size.width(), size.height());
        let area = size.area();
        let us = game.to_move();
        let turns = game.turns();
        let index = |mv: Move| move_index(size, mv);
        let (mut count, mut total) = (0u32, 0u32);
        let (mut recent, mut recent_total) = (0.0f64, 0.0f64);
        let mut last_was_mirror = false;
        for pair in turns.windows(2) {
            if pair[1].player == us {
                continue;
            }
            last_was_mirror = index(pair[1].mv) == reflect(area, index(pair[0].mv));
            if last_was_mirror {
                count += 1;
                recent += 1.0;
            }
            total += 1;
            recent_total += 1.0;
            recent *= 0.75;
            recent_total *= 0.75;
        }
        let seen = f64::from(count) >= 7.0 + 0.5 * f64::from(total)
            && recent >= 0.45 * recent_total
            && last_was_mirror;
        if !seen {
            return None;
        }
        let mirroring = us.opp();
        let board = game.board();
        let center = center(width, height).and_then(|i| size.loc_at_index(i));
        let mut m = Mirror {
            mirroring,
            advantage: advantage(game, mirroring),
            center_error: 1e10,
            root_turns: turns.len(),
            root_last: turns.last().map(|t| index(t.mv) as u16),
            root_center_taken: center.is_some_and(|c| board.stone(c) == Some(mirroring)),
            width,
            height,
        };
        if width >= 7 && height >= 7 {
            let (hx, hy) = (width as i64 / 2, height as i64 / 2);
            let mut error = 0.0;
            let mut unmatched = 0.0;
            for dy in -3..=3 {
                for dx in -3..=3 {
                    let i = ((hy + dy) * width as i64 + hx + dx) as usize;
                    let j = reflect(area, i);
                    if i == j {
                        continue;
                    }
                    let stone = |k: usize| size.loc_at_index(k).and_then(|l| board.stone(l));
                    let (a, b) = (stone(i), stone(j));
                    if a == Some(us) && b != Some(mirroring) {
                        error += 1.0;
                    }
                    if a == Some(mirroring) && b.is_none() {
                        unmatched += 1.0;
                    }
                }
            }
            if error > 0.0 {
                error += 0.2 * unmatched;
            }
            if error >= 1.0 {
                error = 0.5 * error * (1.0 + error);
            }
            m.center_error = error;
        }
        Some(m)
    }

    /// The hint for a node at `game`'s position, reached from the root by the line
    /// `game` holds beyond it.
    pub fn hint(&self, game: &Game) -> Hint {
        if !self.holds_since_root(game, 0) {
            return Hint::None;
        }
        let size = game.board().size();
        let difficult = self.is_difficult(game);
        if game.to_move() == self.mirroring {
            let Some(last) = game.turns().last() else {
                return Hint::None;
            };
            let Move::Play(l) = last.mv else {
                return Hint::None;
            };
            let target = reflect(size.area(), size.index_of(l));
            let mirror_move = match size.loc_at_index(target) {
                Some(t) if game.is_legal(Move::Play(t)) => target,
                _ => size.area(),
            };
            Hint::Reply {
                mirror_move: mirror_move as u16,
                difficult,
            }
        } else {
            Hint::Break { difficult }
        }
    }

    /// Raises the priors (policy index, probability) of a node at `game`'s position with
    /// hint `hint`, as KataGo's anti-mirror policy does.
    pub fn bias_priors(&self, game: &Game, hint: Hint, priors: &mut [(u16, f32)]) {
        let depth = game.turns().len().saturating_sub(self.root_turns) as f64;
        let shrink = 1.0 / (1.0 + depth.sqrt());
        let size = game.board().size();
        let center = center(self.width, self.height);
        // The centre stone's chain on this line, if it still stands.
        let center_chain = center
            .and_then(|c| size.loc_at_index(c))
            .filter(|&c| game.board().stone(c).is_some());
        for (mv, p) in priors.iter_mut() {
            let mv = usize::from(*mv);
            let weight = match hint {
                Hint::None => 0.0,
                Hint::Reply {
                    mirror_move,
                    difficult,
                } => {
                    if mv == usize::from(mirror_move) {
                        if difficult {
                            3.0
                        } else {
                            1.0
                        }
                    } else {
                        0.0
                    }
                }
                Hint::Break { .. } => {
                    let Some(loc) = size.loc_at_index(mv) else {
                        continue;
                    };
                    if self.is_central(mv, 0) {
                        0.3
                    } else {
                        let mut w = if self.is_central(mv, 1) { 0.05 } else { 0.0 };
                        // Near an opposing centre stone the root had.
                        if let Some(c) = center.filter(|_| self.root_center_taken) {
                            let board = game.board();
                            let touches = center_chain.is_some_and(|chain| {
                                board
                                    .neighbours(loc)
                                    .any(|n| board.stone(n).is_some() && board.same_chain(n, chain))
                            });
                            let d2 = self.distance_sq(mv, c);
                            if touches || d2 <= 2 {
                                w = 0.05;
                            } else if d2 <= 4 {
                                w = 0.03;
                            }
                        }
                        w
                    }
                }
            };
            if weight > 0.0 {
                *p += (1.0 - *p) * (weight * shrink) as f32;
            }
        }
    }

    /// A child's utility (White's) as selection sees it at `parent`, a node with hint
    /// `hint`, for the child reached by `mv` with `weight` of the children's total weight:
    /// forced or favoured as KataGo's anti-mirror exploration does.
    pub fn adjust(
        &self,
        hint: Hint,
        parent: &Parent<'_>,
        mv: u16,
        utility: f64,
        weight: f64,
    ) -> f64 {
        let Parent {
            white,
            utility: parent_utility,
            total,
            last_move: parent_move,
            center_liberties,
        } = *parent;
        let sign = if white { 1.0 } else { -1.0 };
        let mv = usize::from(mv);
        let area = self.width * self.height;
        let center = center(self.width, self.height);
        let damp = (1.0 - 0.7 * parent_utility * parent_utility).max(0.3);
        let err = self.center_error;
        let mut u = utility;
        match hint {
            Hint::None => {}
            Hint::Reply {
                mirror_move,
                difficult,
            } => {
                if mv != usize::from(mirror_move) {
                    return u;
                }
                let (mut dump, mut bias) = if difficult {
                    let mut dump: f64 = 0.20;
                    if let (Some(c), true) = (center, mv != area) {
                        let d = (self.distance_sq(mv, c) as f64).sqrt();
                        dump = dump.max(1.0 / (0.75 + 0.5 * d) / err.max(1.0));
                    }
                    (dump, 0.75)
                } else if self.advantage >= 5.0 {
                    (0.15, 0.50)
                } else if self.advantage >= -5.0 {
                    (0.10 + self.advantage, 0.30 + self.advantage * 4.0)
                } else {
                    (0.05, 0.10)
                };
                if mv == area {
                    dump *= if center == Some(mv) {
                        0.35
                    } else {
                        0.35 / err.sqrt().max(1.0)
                    };
                }
                if err >= 1.0 {
                    dump /= err;
                    bias /= err;
                }
                if weight < dump * total {
                    u += sign * FORCE;
                }
                if weight < bias * total {
                    u += sign * 0.18 * damp;
                }
                if weight < 0.5 * bias * total {
                    u += sign * 0.36 * damp;
                }
            }
            Hint::Break { difficult } => {
                if mv == area {
                    return u;
                }
                let Some(c) = center else {
                    return u;
                };
                let mut dump: f64 = 0.0;
                if difficult {
                    // Touching the centre chain: a bonus and forced visits, more the fewer
                    // liberties it has.
                    if center_liberties.contains(&(mv as u16)) {
                        let libs = center_liberties.len() as f64;
                        u += sign * 0.75 / (1.0 + libs) / err.max(1.0) * damp;
                        dump = 0.10 / libs;
                    }
                    let d2 = self.distance_sq(mv, c);
                    if d2 <= 2 {
                        dump = dump.max(0.010);
                    } else if d2 <= 4 {
                        dump = dump.max(0.005);
                    }
                }
                if mv == c {
                    dump = if parent_move.is_none() { 0.06 } else { 0.12 };
                }
                let loss = sign * (parent_utility - utility);
                if loss > 0.0 && loss * dump > 0.03 {
                    dump += 0.5 * (0.03 / loss - dump);
                }
                let prev = match parent_move {
                    Some(m) => Some(usize::from(m)),
                    None => self.root_last.map(usize::from),
                };
                if let Some(p) = prev.filter(|&p| p < area) {
                    let d2 = self.distance_sq(p, c);
                    if d2 <= 16 {
                        dump *= 0.900;
                    }
                    if d2 <= 5 {
                        dump *= 0.825;
                    }
                    if d2 <= 2 {
                        dump *= 0.750;
                    }
                }
                if weight < dump * total {
                    u += sign * FORCE;
                }
            }
        }
        u
    }

    /// Whether a position on the line from the root is the hard case for its evaluation:
    /// the opponent holds the centre, the komi favours it and it mirrored all along
    /// (bar the last four moves).
    pub fn shifts_evaluation(&self, game: &Game) -> bool {
        let size = game.board().size();
        self.advantage >= -0.5
            && center(self.width, self.height)
                .and_then(|c| size.loc_at_index(c))
                .is_some_and(|c| game.board().stone(c) == Some(self.mirroring))
            && self.holds_since_root(game, 4)
    }

    /// KataGo's shift of a hard-case evaluation: the win/loss balance moved in logit
    /// space by White's ownership of the centre point.
    pub fn shift(&self, white_win: f32, white_loss: f32, center_ownership: f32) -> (f32, f32) {
        let total = f64::from(white_win) + f64::from(white_loss);
        let scale = if self.center_error <= 0.0 { 0.7 } else { 0.3 };
        let wl =
            (f64::from(white_win - white_loss) / (total + 1e-10)).clamp(-1.0 + 1e-15, 1.0 - 1e-15);
        let wl = (wl.atanh() + scale * f64::from(center_ownership)).tanh();
        let win = total * (0.5 + 0.5 * wl);
        (win as f32, (total - win) as f32)
    }

    /// The liberties of the centre chain (policy indices) where the hint is the hard
    /// case with us to move; empty otherwise.
    pub fn center_liberties(&self, game: &Game, hint: Hint) -> Vec<u16> {
        if hint != (Hint::Break { difficult: true }) {
            return Vec::new();
        }
        let board = game.board();
        let size = board.size();
        let Some(c) = center(self.width, self.height).and_then(|c| size.loc_at_index(c)) else {
            return Vec::new();
        };
        if board.stone(c).is_none() {
            return Vec::new();
        }
        let mut libs: Vec<u16> = board
            .chain(c)
            .flat_map(|s| board.neighbours(s))
            .filter(|&n| board.is_empty_at(n))
            .map(|n| size.index_of(n) as u16)
            .collect();
        libs.sort_unstable();
        libs.dedup();
        libs
    }

    /// The centre's policy index, on a board with a centre point.
    pub fn center_index(&self) -> Option<usize> {
        center(self.width, self.height)
    }

    /// Whether every opponent move after the root reflected the move before it, ignoring
    /// the last `skip` moves.
    fn holds_since_root(&self, game: &Game, skip: usize) -> bool {
        let size = game.board().size();
        let turns = game.turns();
        let mut i = self.root_turns + 1;
        while i + skip < turns.len() {
            let a = move_index(size, turns[i - 1].mv);
            if move_index(size, turns[i].mv) != reflect(size.area(), a) {
                return false;
            }
            i += 2;
        }
        true
    }

    fn is_difficult(&self, game: &Game) -> bool {
        let size = game.board().size();
        self.advantage >= -0.5
            && center(self.width, self.height)
                .and_then(|c| size.loc_at_index(c))
                .is_some_and(|c| game.board().stone(c) == Some(self.mirroring))
    }

    /// Whether board index `i` is within `margin` of the central point(s).
    fn is_central(&self, i: usize, margin: i64) -> bool {
        let (w, h) = (self.width as i64, self.height as i64);
        let (x, y) = (i as i64 % w, i as i64 / w);
        x >= (w - 1) / 2 - margin
            && x <= w / 2 + margin
            && y >= (h - 1) / 2 - margin
            && y <= h / 2 + margin
    }

    fn distance_sq(&self, a: usize, b: usize) -> i64 {
        let w = self.width as i64;
        let (dx, dy) = (a as i64 % w - b as i64 % w, a as i64 / w - b as i64 / w);
        dx * dx + dy * dy
    }
}

/// The policy index of the reflection through the centre (pass reflects to itself).
fn reflect(area: usize, i: usize) -> usize {
    if i >= area {
        i
    } else {
        area - 1 - i
    }
}

/// The centre point's index on a board with odd sides.
fn center(width: usize, height: usize) -> Option<usize> {
    (width % 2 == 1 && height % 2 == 1).then(|| (height / 2) * width + width / 2)
}

/// Points the mirroring player wins by if every move is mirrored to the end: komi
/// against Black's handicap and, under area scoring, the extra stones and the last move
/// Black gets on an odd board.
fn advantage(game: &Game, mirroring: Player) -> f64 {
    let rules = game.rules();
    // Handicap stones: Black's set-up stones when White has none (placed handicap).
    let initial = game.initial_board();
    let black = initial.num_stones(Player::Black);
    let handicap = if initial.num_stones(Player::White) == 0 && black >= 2 {
        black as f64
    } else {
        0.0
    };
    let size = game.board().size();
    let mut black_extra = 0.0;
    if rules.scoring == ScoringRule::Area {
        if handicap > 0.0 {
            black_extra += handicap - 1.0;
        }
        let odd_board = size.width() % 2 == 1 && size.height() % 2 == 1;
        let odd_stones = handicap == 0.0 || (handicap as u64) % 2 == 1;
        if odd_board == odd_stones {
            black_extra += 1.0;
        }
    }
    if handicap > 0.0 {
        match rules.white_handicap_bonus {
            HandicapBonus::N => black_extra -= handicap,
            HandicapBonus::NMinusOne => black_extra -= handicap - 1.0,
            HandicapBonus::Zero => {}
        }
    }
    let komi = f64::from(rules.komi);
    if mirroring == Player::Black {
        black_extra - komi
    } else {
        komi - black_extra
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::{BoardSize, Rules};

    /// A 19x19 game where White answers each Black move with its reflection, `n` times.
    fn mirrored_game(n: usize) -> Game {
        mirrored_from(
            Game::new(BoardSize::square(19).unwrap(), Rules::chinese()),
            n,
        )
    }

    /// `start` (19x19, Black to move) continued by `n` Black moves, each mirrored.
    fn mirrored_from(start: Game, n: usize) -> Game {
        let mut g = start;
        let size = g.board().size();
        // All below the middle row, so that no reflection meets a Black stone.
        let black = [
            "D4", "K3", "G6", "O5", "C7", "R3", "F2", "M8", "B9", "H4", "P7", "E8", "Q2", "L6",
            "J9", "A5",
        ];
        for text in black.iter().take(n) {
            let mv = size.parse_move(text).unwrap();
            g.play(mv).unwrap();
            let i = move_index(size, mv);
            g.play(Move::Play(
                size.loc_at_index(reflect(size.area(), i)).unwrap(),
            ))
            .unwrap();
        }
        g
    }

    #[test]
    fn a_mirroring_opponent_is_seen_once_it_has_mirrored_enough() {
        // Thirteen mirrored replies are not enough (13 >= 7 + 6.5 fails); fourteen are.
        assert_eq!(Mirror::detect(&mirrored_game(13)), None);
        let m = Mirror::detect(&mirrored_game(14)).expect("a mirror");
        assert_eq!(m.mirroring, Player::White);
        // Chinese rules, no handicap, odd board: Black gets the last move, so White's
        // mirror wins by komi - 1.
        assert_eq!(m.advantage, 6.5);
        // The centre is empty and the stones there are symmetric.
        assert_eq!(m.center_error, 0.0);
        // Black to move: the hint pushes the centre.
        let g = mirrored_game(14);
        assert!(matches!(m.hint(&g), Hint::Break { difficult: false }));
    }

    #[test]
    fn a_broken_mirror_is_not_seen() {
        let mut g = mirrored_game(14);
        let size = g.board().size();
        g.play(size.parse_move("K10").unwrap()).unwrap();
        g.play(size.parse_move("A1").unwrap()).unwrap();
        assert_eq!(Mirror::detect(&g), None, "the last reply was not a mirror");
    }

    #[test]
    fn the_mirror_reply_gets_prior_and_forced_visits() {
        let mut g = mirrored_game(14);
        let m = Mirror::detect(&g).unwrap();
        let size = g.board().size();
        let ours = size.parse_move("C3").unwrap();
        g.play(ours).unwrap();
        let reply = reflect(size.area(), move_index(size, ours)) as u16;
        let hint = m.hint(&g);
        assert_eq!(
            hint,
            Hint::Reply {
                mirror_move: reply,
                difficult: false
            }
        );
        assert_eq!(Hint::unpack(hint.pack()), hint);
        let mut priors = vec![(reply, 0.01f32), (0, 0.5)];
        m.bias_priors(&g, hint, &mut priors);
        // Depth 1: weight 1 / (1 + 1) pulls the reply half way to 1; others stay.
        assert!((priors[0].1 - 0.505).abs() < 1e-6, "{priors:?}");
        assert_eq!(priors[1].1, 0.5);
        // White moves: a starved mirror reply is pushed up by the forcing amount.
        let at = Parent {
            white: true,
            utility: 0.0,
            total: 100.0,
            last_move: Some(0),
            center_liberties: &[],
        };
        let u = m.adjust(hint, &at, reply, 0.1, 0.0);
        assert!(u > 50.0, "{u}");
        assert_eq!(m.adjust(hint, &at, reply, 0.1, 90.0), 0.1);
        assert_eq!(m.adjust(hint, &at, 0, 0.1, 0.0), 0.1);
    }

    #[test]
    fn the_hard_case_is_an_opponent_on_the_centre_with_the_komi() {
        // White began on the centre, then mirrored: komi 7.5 makes the mirror win.
        let size = BoardSize::square(19).unwrap();
        let mut board = tengen_rules::Board::new(size);
        let k10 = size.parse_move("K10").unwrap().loc().unwrap();
        board.set_stones(&[(k10, Some(Player::White))]).unwrap();
        let start = Game::from_position(
            board,
            Player::Black,
            Rules::chinese(),
            tengen_rules::GameOptions::default(),
        );
        let mut g = mirrored_from(start, 16);
        let m = Mirror::detect(&g).expect("a mirror");
        assert_eq!(m.advantage, 6.5);
        let hint = m.hint(&g);
        assert_eq!(hint, Hint::Break { difficult: true });
        // The centre stone's four liberties get a bonus and forced visits for Black.
        let libs = m.center_liberties(&g, hint);
        let around: Vec<u16> = ["K11", "J10", "L10", "K9"]
            .iter()
            .map(|t| move_index(size, size.parse_move(t).unwrap()) as u16)
            .collect();
        assert_eq!(libs.len(), 4);
        assert!(around.iter().all(|a| libs.contains(a)), "{libs:?}");
        let at = Parent {
            white: false,
            utility: 0.0,
            total: 100.0,
            last_move: None,
            center_liberties: &libs,
        };
        let touching = m.adjust(hint, &at, around[0], 0.0, 50.0);
        assert!((touching + 0.75 / 5.0).abs() < 1e-9, "{touching}");
        // Starved, it is forced (a quarter of 10% of the visits).
        assert!(m.adjust(hint, &at, around[0], 0.0, 1.0) < -50.0);
        assert_eq!(m.adjust(hint, &at, 0, 0.0, 1.0), 0.0, "A19 is far away");
        // White's mirror reply then gets three times the prior weight.
        let ours = size.parse_move("C3").unwrap();
        g.play(ours).unwrap();
        let reply = reflect(size.area(), move_index(size, ours)) as u16;
        let hint = m.hint(&g);
        assert_eq!(
            hint,
            Hint::Reply {
                mirror_move: reply,
                difficult: true
            }
        );
        let mut priors = vec![(reply, 0.0f32)];
        m.bias_priors(&g, hint, &mut priors);
        assert!((priors[0].1 - 1.5).abs() < 1e-6, "{priors:?}");
    }

    #[test]
    fn hints_pack_into_two_bytes_and_back() {
        for h in [
            Hint::None,
            Hint::Break { difficult: true },
            Hint::Break { difficult: false },
            Hint::Reply {
                mirror_move: 625,
                difficult: true,
            },
            Hint::Reply {
                mirror_move: 0,
                difficult: false,
            },
        ] {
            assert_eq!(Hint::unpack(h.pack()), h);
        }
    }
}
