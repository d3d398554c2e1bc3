//! Keys that let the search share what it learns between positions: the graph hash under
//! which transpositions share one node (KataGo's graph search), and the local-pattern key
//! of the subtree value-bias table.

use std::sync::OnceLock;

use tengen_rules::{BoardSize, Game, Loc, Move, Player, MAX_AREA};

/// Zobrist-style constants, drawn once from a fixed seed so that keys are the same in every
/// run (a table survives nothing across processes, but reproducible runs need fixed keys).
struct Zobrist {
    pass_ends_phase: u128,
    game_over: u128,
    /// Indexed by policy index (pass last) and by which of the two moves it is.
    moves: Vec<[u128; 2]>,
    ko: Vec<u128>,
    /// Window cell × (empty, black, white).
    pattern: [[u128; 3]; WINDOW * WINDOW],
    atari: [u128; WINDOW * WINDOW],
    player: [u128; 2],
}

/// The side of the square window a pattern key looks at, centred on the move.
const WINDOW: usize = 5;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn zobrist() -> &'static Zobrist {
    static Z: OnceLock<Zobrist> = OnceLock::new();
    Z.get_or_init(|| {
        let mut s = 0x7e46_6b65_7973_2026u64;
        let mut next = || u128::from(splitmix(&mut s)) << 64 | u128::from(splitmix(&mut s));
        Zobrist {
            pass_ends_phase: next(),
            game_over: next(),
            moves: (0..=MAX_AREA).map(|_| [next(), next()]).collect(),
            ko: (0..MAX_AREA).map(|_| next()).collect(),
            pattern: std::array::from_fn(|_| [next(), next(), next()]),
            atari: std::array::from_fn(|_| next()),
            player: [next(), next()],
        }
    })
}

/// Mixes `prev` so that chaining hashes depends on order (a step of splitmix on each half).
fn step(prev: u128) -> u128 {
    let (hi, lo) = ((prev >> 64) as u64, prev as u64);
    let mut a = hi ^ lo;
    let h0 = splitmix(&mut a);
    let mut b = lo.rotate_left(23) ^ 0xA076_1D64_78BD_642F;
    let h1 = splitmix(&mut b).wrapping_add(h0);
    u128::from(h0) << 64 | u128::from(h1)
}

/// The hash of everything about `game`'s situation that its future depends on: the
/// rules' situation (stones, player, ko and superko bans, phase, komi, rules), whether a
/// pass now ends the phase, whether the game is over, and the passes in a row.
pub fn state_hash(game: &Game) -> u128 {
    let z = zobrist();
    let mut h = game.situation_hash();
    if game.pass_would_end_phase() {
        h ^= z.pass_ends_phase;
    }
    if game.is_over() {
        h ^= z.game_over;
    }
    let passes = u128::from(game.consecutive_ending_passes());
    h.wrapping_add(passes.wrapping_mul(0x27BB_2EE6_87B0_B0FD_9E37_79B9_7F4A_7C15))
}

/// The graph hash of `game`, given `prev`, the graph hash of the position before its last
/// move. When that move cannot be part of a repetition within `rep_bound` moves, history
/// cannot change what follows and the hash is the state's alone, so every move order
/// reaching the position shares its node; otherwise it also depends on `prev`, which keeps
/// positions inside ko fights and other short cycles apart by their paths.
pub fn graph_hash(prev: u128, game: &Game, rep_bound: usize) -> u128 {
    let state = state_hash(game);
    let history_free = match game.turns().last().map(|t| t.mv) {
        None => true,
        Some(Move::Pass) => false,
        Some(Move::Play(loc)) => game.board().repetition_bound_exceeds(loc, rep_bound),
    };
    if history_free {
        state
    } else {
        step(prev).wrapping_add(state)
    }
}

/// The graph hash of `game` computed along its whole history (for a fresh root).
pub fn graph_hash_from_scratch(game: &Game, rep_bound: usize) -> u128 {
    let mut g = Game::from_position(
        game.initial_board().clone(),
        game.initial_player(),
        *game.rules(),
        *game.options(),
    );
    g.set_initial_turn_number(game.initial_turn_number());
    let mut h = graph_hash(0, &g, rep_bound);
    for t in game.turns() {
        if g.play_tolerant(t.player, t.mv).is_err() {
            // A history the rules cannot replay from its start (an edited position):
            // the situation alone is the best key there is.
            return state_hash(game);
        }
        h = graph_hash(h, &g, rep_bound);
    }
    h
}

/// The subtree value-bias table's key for `mv` played by `pla` on `before` (the game
/// before the move), answering `prev_mv` (the policy index of the move before it):
/// both moves, the 5x5 pattern around `mv` with the stones in atari, the player and the
/// ko point. Positions with the same key tend to be misjudged by the network the same
/// way, so they share a correction. `None` for passes.
pub fn bias_key(
    before: &Game,
    pla: Player,
    prev_mv: usize,
    mv: Move,
    mv_index: usize,
) -> Option<u128> {
    let Move::Play(at) = mv else {
        return None;
    };
    let z = zobrist();
    let board = before.board();
    let size = board.size();
    let mut h = z.moves[prev_mv.min(MAX_AREA)][0] ^ z.moves[mv_index.min(MAX_AREA)][1];
    h ^= z.player[pla.index()];
    let (x, y) = size.xy(at);
    let r = WINDOW / 2;
    for dy in 0..WINDOW {
        for dx in 0..WINDOW {
            let (Some(px), Some(py)) = ((x + dx).checked_sub(r), (y + dy).checked_sub(r)) else {
                continue;
            };
            let Some(p) = size.loc(px, py) else {
                continue;
            };
            let cell = dy * WINDOW + dx;
            let colour = match board.stone(p) {
                None => 0,
                Some(Player::Black) => 1,
                Some(Player::White) => 2,
            };
            h ^= z.pattern[cell][colour];
            if colour != 0 && board.in_atari(p) {
                h ^= z.atari[cell];
            }
        }
    }
    if let Some(ko) = board.ko() {
        h ^= z.ko[ko_index(size, ko)];
    }
    Some(h)
}

fn ko_index(size: BoardSize, ko: Loc) -> usize {
    size.index_of(ko).min(MAX_AREA - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::Rules;

    fn play(g: &mut Game, moves: &[&str]) {
        for m in moves {
            let mv = g.board().size().parse_move(m).unwrap();
            g.play(mv).unwrap();
        }
    }

    fn hash_along(moves: &[&str]) -> u128 {
        let mut g = Game::new(BoardSize::square(9).unwrap(), Rules::chinese());
        let mut h = graph_hash(0, &g, 11);
        for m in moves {
            play(&mut g, &[m]);
            h = graph_hash(h, &g, 11);
        }
        assert_eq!(h, graph_hash_from_scratch(&g, 11));
        h
    }

    #[test]
    fn move_orders_reaching_one_open_position_share_a_hash() {
        let a = hash_along(&["C3", "G7", "G3", "C7"]);
        let b = hash_along(&["G3", "C7", "C3", "G7"]);
        assert_eq!(a, b);
        let c = hash_along(&["C7", "G3", "G7", "C3"]);
        assert_ne!(
            a, c,
            "other colours on the same points are another position"
        );
    }

    #[test]
    fn a_pass_or_a_move_in_a_small_region_keeps_the_path_in_the_hash() {
        let mut g = Game::new(BoardSize::square(9).unwrap(), Rules::chinese());
        play(&mut g, &["C3"]);
        // A stone on an open board: what came before cannot matter.
        assert_eq!(graph_hash(1, &g, 11), graph_hash(2, &g, 11));
        // The same stone when repetitions within 100 moves are possible: it can.
        assert_ne!(graph_hash(1, &g, 100), graph_hash(2, &g, 100));
        play(&mut g, &["pass"]);
        assert_ne!(graph_hash(1, &g, 11), graph_hash(2, &g, 11));
    }

    #[test]
    fn bias_keys_see_only_the_neighbourhood() {
        let mut g = Game::new(BoardSize::square(9).unwrap(), Rules::chinese());
        play(&mut g, &["C3", "G7"]);
        let size = g.board().size();
        let mv = size.parse_move("D3").unwrap();
        let idx = crate::filter::move_index(size, mv);
        let prev = crate::filter::move_index(size, size.parse_move("G7").unwrap());
        let k1 = bias_key(&g, Player::Black, prev, mv, idx).unwrap();
        // A stone far away changes nothing; one next to the move does.
        let mut far = g.clone();
        play(&mut far, &["J9", "A9"]);
        let k2 = bias_key(&far, Player::Black, prev, mv, idx).unwrap();
        assert_eq!(k1, k2);
        let mut near = g.clone();
        play(&mut near, &["E4", "A9"]);
        let k3 = bias_key(&near, Player::Black, prev, mv, idx).unwrap();
        assert_ne!(k1, k3);
        assert!(bias_key(&g, Player::Black, prev, Move::Pass, idx).is_none());
    }
}
