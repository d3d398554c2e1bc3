//! Zobrist tables: fixed 128-bit random keys, generated at compile time from a constant seed
//! so that hashes are identical across runs, machines and builds.

use crate::geometry::{MAX_ARR, MAX_SIZE};

/// A 128-bit Zobrist hash.
pub type Hash = u128;

const fn splitmix64(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

/// `N` keys drawn from a stream identified by `stream`.
const fn keys<const N: usize>(stream: u64) -> [Hash; N] {
    let mut out = [0u128; N];
    let mut state = stream.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    let mut i = 0;
    while i < N {
        let (s1, a) = splitmix64(state);
        let (s2, b) = splitmix64(s1);
        state = s2;
        out[i] = ((a as u128) << 64) | b as u128;
        i += 1;
    }
    out
}

/// Key for a stone of each player (index `loc * 2 + player.index()`).
pub(crate) static STONE: [Hash; MAX_ARR * 2] = keys(1);
/// Key for the player to move.
pub(crate) static PLAYER: [Hash; 2] = keys(2);
/// Key for a point banned by ko (simple ko, or superko/cleanup bans in situation hashes).
pub(crate) static KO_BAN: [Hash; MAX_ARR] = keys(3);
/// Key for the board width and height, so that boards of different sizes never collide.
pub(crate) static SIZE_X: [Hash; MAX_SIZE + 1] = keys(4);
/// See [`SIZE_X`].
pub(crate) static SIZE_Y: [Hash; MAX_SIZE + 1] = keys(5);
/// Key for a ko-recapture-blocked mark in the cleanup phases.
pub(crate) static KO_MARK: [Hash; MAX_ARR] = keys(6);
/// Key for the game phase (main, cleanup 1, cleanup 2).
pub(crate) static PHASE: [Hash; 3] = keys(7);
/// Key for the colour a point had when the second cleanup phase began.
pub(crate) static SECOND_CLEANUP_START: [Hash; MAX_ARR * 2] = keys(8);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_are_distinct() {
        let mut seen = HashSet::new();
        for k in STONE
            .iter()
            .chain(&PLAYER)
            .chain(&KO_BAN)
            .chain(&SIZE_X)
            .chain(&SIZE_Y)
        {
            assert!(seen.insert(*k));
        }
        for k in KO_MARK.iter().chain(&PHASE).chain(&SECOND_CLEANUP_START) {
            assert!(seen.insert(*k));
        }
    }
}
