//! Handicap stone placement: GTP's fixed layout, and checks for free placement.

use crate::board::Board;
use crate::geometry::{BoardSize, Loc};

/// Why handicap stones cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandicapError {
    /// Fewer than two stones, or more than the layout (or the board) allows.
    #[error("invalid number of handicap stones: {requested} (this board allows {min} to {max})")]
    BadCount {
        /// Stones asked for.
        requested: usize,
        /// Fewest allowed.
        min: usize,
        /// Most allowed.
        max: usize,
    },
    /// The board already has stones.
    #[error("the board is not empty")]
    BoardNotEmpty,
    /// The same point was given twice.
    #[error("handicap point given twice")]
    Duplicate,
}

/// Most stones GTP's `fixed_handicap` places on this board: 9 on odd sides of 9 or more,
/// 4 on other sides of 8 or more (and on 7x7), none below 7.
pub fn max_fixed_handicap(size: BoardSize) -> usize {
    let per_side = |n: usize| match n {
        0..=6 => 0,
        7 => 4,
        n if n % 2 == 0 => 4,
        _ => 9,
    };
    per_side(size.width()).min(per_side(size.height()))
}

/// The GTP fixed-handicap points for `n` stones, in GTP's order.
pub fn fixed_handicap(size: BoardSize, n: usize) -> Result<Vec<Loc>, HandicapError> {
    let max = max_fixed_handicap(size);
    if n < 2 || n > max {
        return Err(HandicapError::BadCount {
            requested: n,
            min: 2,
            max,
        });
    }
    // Distance of the star points from the edge: 3rd line below 13, 4th line from 13 up.
    let edge = |side: usize| if side < 13 { 2 } else { 3 };
    let xs = [
        edge(size.width()),
        (size.width() - 1) / 2,
        size.width() - 1 - edge(size.width()),
    ];
    let ys = [
        size.height() - 1 - edge(size.height()),
        (size.height() - 1) / 2,
        edge(size.height()),
    ];
    // (column, row) with row 0 = the lowest line and column 0 = the left one.
    const ORDER: [(usize, usize); 9] = [
        (0, 0),
        (2, 2),
        (0, 2),
        (2, 0),
        (0, 1),
        (2, 1),
        (1, 0),
        (1, 2),
        (1, 1),
    ];
    let pick: &[usize] = match n {
        5 => &[0, 1, 2, 3, 8],
        7 => &[0, 1, 2, 3, 4, 5, 8],
        _ => &[0, 1, 2, 3, 4, 5, 6, 7, 8][..n],
    };
    Ok(pick
        .iter()
        .map(|&k| {
            let (cx, cy) = ORDER[k];
            size.loc_unchecked(xs[cx], ys[cy])
        })
        .collect())
}

/// Checks free-placement handicap stones (GTP `set_free_handicap`): at least two,
/// all distinct, fewer than the number of points, on an empty board.
pub fn check_free_handicap(board: &Board, stones: &[Loc]) -> Result<(), HandicapError> {
    let max = board.size().area() - 1;
    if stones.len() < 2 || stones.len() > max {
        return Err(HandicapError::BadCount {
            requested: stones.len(),
            min: 2,
            max,
        });
    }
    if !board.is_board_empty() {
        return Err(HandicapError::BoardNotEmpty);
    }
    let mut sorted = stones.to_vec();
    sorted.sort();
    sorted.dedup();
    if sorted.len() != stones.len() {
        return Err(HandicapError::Duplicate);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Move;

    fn names(size: BoardSize, n: usize) -> Vec<String> {
        fixed_handicap(size, n)
            .unwrap()
            .into_iter()
            .map(|l| size.gtp(Move::Play(l)))
            .collect()
    }

    #[test]
    fn gtp_layout_19() {
        let s = BoardSize::square(19).unwrap();
        assert_eq!(names(s, 2), ["D4", "Q16"]);
        assert_eq!(names(s, 3), ["D4", "Q16", "D16"]);
        assert_eq!(names(s, 4), ["D4", "Q16", "D16", "Q4"]);
        assert_eq!(names(s, 5), ["D4", "Q16", "D16", "Q4", "K10"]);
        assert_eq!(names(s, 6), ["D4", "Q16", "D16", "Q4", "D10", "Q10"]);
        assert_eq!(names(s, 7), ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K10"]);
        assert_eq!(
            names(s, 8),
            ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16"]
        );
        assert_eq!(
            names(s, 9),
            ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"]
        );
    }

    #[test]
    fn small_and_even_boards() {
        let s9 = BoardSize::square(9).unwrap();
        assert_eq!(names(s9, 2), ["C3", "G7"]);
        assert_eq!(names(s9, 9).len(), 9);
        let s8 = BoardSize::square(8).unwrap();
        assert_eq!(max_fixed_handicap(s8), 4);
        assert!(fixed_handicap(s8, 5).is_err());
        let s7 = BoardSize::square(7).unwrap();
        assert_eq!(names(s7, 4), ["C3", "E5", "C5", "E3"]);
        assert!(fixed_handicap(BoardSize::square(6).unwrap(), 2).is_err());
        assert!(fixed_handicap(BoardSize::square(19).unwrap(), 1).is_err());
        assert!(fixed_handicap(BoardSize::square(19).unwrap(), 10).is_err());
    }

    #[test]
    fn free_placement_checks() {
        let s = BoardSize::square(5).unwrap();
        let b = Board::new(s);
        let a = s.parse_loc("A1").unwrap();
        let c = s.parse_loc("C3").unwrap();
        assert!(check_free_handicap(&b, &[a, c]).is_ok());
        assert_eq!(
            check_free_handicap(&b, &[a, a]),
            Err(HandicapError::Duplicate)
        );
        assert!(check_free_handicap(&b, &[a]).is_err());
    }
}
