//! Moves the search must not consider: avoid lists and allow lists, each for one player and
//! down to a depth, as KataGo's analysis engine takes them.

use tengen_rules::{BoardSize, Move, Player};

/// One rule: for `player`, avoid these moves, or allow only these, for the first
/// `until_depth` turns counted from the root (1 = the root move only).
#[derive(Clone, Debug, PartialEq)]
pub struct FilterRule {
    /// Whose moves it restricts.
    pub player: Player,
    /// The moves named.
    pub moves: Vec<Move>,
    /// Turns from the root it applies to.
    pub until_depth: u32,
    /// True: only `moves` (and pass) are allowed; false: `moves` are avoided.
    pub allow: bool,
}

/// A compiled set of rules: per player and move, the depth from which it is allowed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MoveFilter {
    /// Indexed by [`Player::index`], then by move index (points row-major, then pass).
    banned_until: [Vec<u32>; 2],
}

impl MoveFilter {
    /// Compiles rules for a board of this size.
    pub fn new(size: BoardSize, rules: &[FilterRule]) -> MoveFilter {
        let n = size.area() + 1;
        let mut f = MoveFilter::default();
        if rules.is_empty() {
            return f;
        }
        f.banned_until = [vec![0; n], vec![0; n]];
        for r in rules {
            let table = &mut f.banned_until[r.player.index()];
            let named: Vec<usize> = r.moves.iter().map(|&m| move_index(size, m)).collect();
            if r.allow {
                for (i, t) in table.iter_mut().enumerate() {
                    // Passing stays possible: an allow list names where to play, not whether to.
                    if i != n - 1 && !named.contains(&i) {
                        *t = (*t).max(r.until_depth);
                    }
                }
            } else {
                for i in named {
                    table[i] = table[i].max(r.until_depth);
                }
            }
        }
        f
    }

    /// True if no rule restricts anything.
    pub fn is_empty(&self) -> bool {
        self.banned_until[0].is_empty()
    }

    /// True if the deepest rule reaches beyond the root.
    pub fn reaches_below_root(&self) -> bool {
        self.banned_until.iter().any(|t| t.iter().any(|&d| d > 1))
    }

    /// Whether `player` may play the move with this index at `depth` turns from the root.
    #[inline]
    pub fn allows(&self, player: Player, move_index: usize, depth: u32) -> bool {
        match self.banned_until[player.index()].get(move_index) {
            Some(&until) => depth >= until,
            None => true,
        }
    }
}

/// The index of a move in policy order: points row-major, then pass.
pub use tengen_eval::policy_index as move_index;

/// The move with this policy index.
#[inline]
pub fn index_move(size: BoardSize, i: usize) -> Move {
    size.loc_at_index(i).map_or(Move::Pass, Move::Play)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avoid_and_allow_apply_to_their_player_and_depth() {
        let size = BoardSize::square(9).unwrap();
        let a = size.parse_move("E5").unwrap();
        let b = size.parse_move("C3").unwrap();
        let f = MoveFilter::new(
            size,
            &[
                FilterRule {
                    player: Player::Black,
                    moves: vec![a],
                    until_depth: 1,
                    allow: false,
                },
                FilterRule {
                    player: Player::White,
                    moves: vec![b],
                    until_depth: 3,
                    allow: true,
                },
            ],
        );
        let (ia, ib, pass) = (move_index(size, a), move_index(size, b), size.area());
        assert!(!f.allows(Player::Black, ia, 0));
        assert!(f.allows(Player::Black, ia, 1));
        assert!(!f.allows(Player::White, ia, 2));
        assert!(f.allows(Player::White, ia, 3));
        assert!(f.allows(Player::White, ib, 0));
        assert!(f.allows(Player::White, pass, 0));
        assert!(f.reaches_below_root());
        assert!(MoveFilter::new(size, &[]).allows(Player::Black, ia, 0));
    }
}
