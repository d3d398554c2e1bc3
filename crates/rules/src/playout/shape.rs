//! 3x3 shapes that make a point worth answering first in a playout: hane, cuts and
//! blocks on the edge, seen from the player about to move. A shape is the eight
//! neighbours' contents; all of them live in one 64 Ki-bit table built on first use.

use std::sync::OnceLock;

use crate::board::Board;
use crate::player::Player;

/// The shapes, with the player to move as `X`, the opponent `O`, `.` empty, `#` off the
/// board, `?` anything, `x` anything but `X`, `o` anything but `O`. The centre is the move.
/// Every rotation and reflection of each is matched too.
const SHAPES: [[&str; 3]; 9] = [
    // Hane: around an opponent stone that touches one of ours diagonally to the move.
    ["XOX", "...", "???"],
    ["XO.", "...", "?.?"],
    ["XO?", "X..", "?.?"],
    ["XOO", "...", "?.?"],
    // Cut: two opponent stones meeting only through the move's point.
    ["XO?", "O.o", "?o?"],
    // Wedge between two opponent stones, backed by one of ours.
    ["?X?", "O.O", "xxx"],
    // First-line hane under an opponent stone.
    ["XO?", "..?", "###"],
    // Block an opponent crawling along the first line.
    ["?X?", "O.?", "###"],
    ["?X?", "O.o", "###"],
];

/// Slot of each neighbour in a shape key, by (row, column) offset from the centre.
fn slot(dr: i32, dc: i32) -> usize {
    match (dr, dc) {
        (-1, 0) => 0,
        (1, 0) => 1,
        (0, -1) => 2,
        (0, 1) => 3,
        (-1, -1) => 4,
        (-1, 1) => 5,
        (1, -1) => 6,
        _ => 7,
    }
}

/// The contents of the eight neighbours of padded point `l` (2 bits each: empty, black,
/// white, off the board), in slot order: N, S, W, E, NW, NE, SW, SE.
#[inline]
fn key(board: &Board, l: usize) -> u16 {
    let [n, w, e, s] = board.adj(l);
    let [nw, ne, sw, se] = board.diag(l);
    [n, s, w, e, nw, ne, sw, se]
        .iter()
        .enumerate()
        .fold(0u16, |k, (i, &p)| k | (board.cell(p) as u16) << (2 * i))
}

/// The key with black and white exchanged, so one table serves both players.
#[inline]
fn swap_colours(key: u16) -> u16 {
    // A slot holding 1 or 2 has exactly one of its two bits set: flip both of them.
    let lo = key & 0x5555;
    let hi = (key >> 1) & 0x5555;
    let one_of = lo ^ hi;
    key ^ (one_of | one_of << 1)
}

/// True if a listed shape for `pla` surrounds the empty padded point `l`.
#[inline]
pub(crate) fn matches(board: &Board, l: usize, pla: Player) -> bool {
    let k = key(board, l);
    let k = if pla == Player::Black {
        k
    } else {
        swap_colours(k)
    };
    table()[(k >> 6) as usize] >> (k & 63) & 1 == 1
}

/// The table of keys that match a shape, with Black to move.
fn table() -> &'static [u64; 1024] {
    static TABLE: OnceLock<Box<[u64; 1024]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0u64; 1024]);
        for shape in &SHAPES {
            for sym in 0..8 {
                let allowed = allowed_per_slot(shape, sym);
                set_all(&mut t, &allowed, 0, 0);
            }
        }
        t
    })
}

/// For one symmetry of a shape, the cell values (as a bit mask over 0..4) each slot allows.
fn allowed_per_slot(shape: &[&str; 3], sym: u8) -> [u8; 8] {
    let mut allowed = [0b1111u8; 8];
    for (r, row) in shape.iter().enumerate() {
        for (c, ch) in row.bytes().enumerate() {
            let (dr, dc) = (r as i32 - 1, c as i32 - 1);
            if (dr, dc) == (0, 0) {
                continue;
            }
            // The dihedral group: optionally transpose, then mirror either axis.
            let (mut tr, mut tc) = if sym & 4 != 0 { (dc, dr) } else { (dr, dc) };
            if sym & 1 != 0 {
                tr = -tr;
            }
            if sym & 2 != 0 {
                tc = -tc;
            }
            allowed[slot(tr, tc)] = match ch {
                b'.' => 0b0001,
                b'X' => 0b0010,
                b'O' => 0b0100,
                b'#' => 0b1000,
                b'x' => 0b1101,
                b'o' => 0b1011,
                _ => 0b1111,
            };
        }
    }
    allowed
}

/// Sets every key whose slots from `i` on take allowed values, given the bits so far.
fn set_all(t: &mut [u64; 1024], allowed: &[u8; 8], i: usize, key: u16) {
    if i == 8 {
        t[(key >> 6) as usize] |= 1 << (key & 63);
        return;
    }
    for v in 0..4u16 {
        if allowed[i] >> v & 1 == 1 {
            set_all(t, allowed, i + 1, key | v << (2 * i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{BoardSize, Loc};

    fn board(rows: &[&str]) -> Board {
        Board::from_rows(BoardSize::square(rows.len()).unwrap(), rows).unwrap()
    }

    fn at(b: &Board, x: usize, y: usize) -> usize {
        b.size().loc(x, y).unwrap().index()
    }

    #[test]
    fn a_hane_matches_in_every_orientation_and_for_either_colour() {
        // Black at B2, White at C2: C3, below the white stone and diagonal to the black
        // one, is Black's hane.
        let rows = [".....", ".XO..", ".....", ".....", "....."];
        let b = board(&rows);
        assert!(matches(&b, at(&b, 2, 2), Player::Black), "hane under O");
        assert!(
            !matches(&b, at(&b, 2, 2), Player::White),
            "not White's shape"
        );
        // The same shape with colours exchanged is White's.
        let swapped: Vec<String> = rows
            .iter()
            .map(|r| r.replace('X', "o").replace('O', "X").replace('o', "O"))
            .collect();
        let b2 = Board::from_rows(BoardSize::square(5).unwrap(), &swapped).unwrap();
        assert!(matches(&b2, at(&b2, 2, 2), Player::White));
        assert!(!matches(&b2, at(&b2, 2, 2), Player::Black));
        // Turned a quarter: the stones in a column, the hane point beside the white one.
        let b3 = board(&[".....", ".X...", ".O...", ".....", "....."]);
        assert!(matches(&b3, at(&b3, 2, 2), Player::Black));
        // Mirrored.
        let b4 = board(&[".....", "...X.", "...O.", ".....", "....."]);
        assert!(matches(&b4, at(&b4, 2, 2), Player::Black));
    }

    #[test]
    fn empty_surroundings_and_lone_stones_match_nothing() {
        let b = board(&[".....", ".....", "..X..", ".....", "....."]);
        for y in 0..5 {
            for x in 0..5 {
                let l = at(&b, x, y);
                if b.is_empty_at(Loc(l as u16)) {
                    assert!(!matches(&b, l, Player::Black), "({x},{y})");
                    assert!(!matches(&b, l, Player::White), "({x},{y})");
                }
            }
        }
    }

    #[test]
    fn a_cut_and_an_edge_block_match() {
        // White's C2 and B3 meet only through C3 (Black holds B2, their other link).
        let b = board(&[".....", ".XO..", ".O...", ".....", "....."]);
        assert!(matches(&b, at(&b, 2, 2), Player::Black), "cut");
        // White crawls along the bottom edge at B5; Black's C4 stands above C5.
        let e = board(&[".....", ".....", ".....", "..X..", ".O..."]);
        assert!(matches(&e, at(&e, 2, 4), Player::Black), "block");
        assert!(!matches(&e, at(&e, 2, 4), Player::White));
    }

    #[test]
    fn swapping_colours_twice_is_the_identity_and_keeps_walls() {
        for k in 0..=u16::MAX {
            assert_eq!(swap_colours(swap_colours(k)), k);
        }
        assert_eq!(swap_colours(0b11_10_01_00), 0b11_01_10_00);
    }
}
