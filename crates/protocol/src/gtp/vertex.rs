//! A GTP vertex as a command names it, before a board gives it meaning: a command is
//! parsed once, whatever the board, and its vertices are placed on the board when it runs.

use std::fmt;

use tengen_rules::{BoardSize, Move, MAX_SIZE};

/// `pass`, or a point on some board of at most [`MAX_SIZE`] lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vertex(Spot);

/// Both forms GTP clients send are kept as sent, so that a command prints back as given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Spot {
    Pass,
    /// A column letter (0 is `A`, `I` skipped) and a row number counted from the bottom, 1 up.
    Named {
        column: u8,
        row: u8,
    },
    /// KataGo's `(x,y)` form, `y` counted from the top.
    Xy {
        x: u8,
        y: u8,
    },
}

/// The largest board: every vertex names a point on it.
fn largest() -> BoardSize {
    BoardSize::square(MAX_SIZE).expect("the largest size is a size")
}

impl Vertex {
    /// `pass`.
    pub const PASS: Vertex = Vertex(Spot::Pass);

    /// Reads `D4`, `pass` or `(3,15)`; `None` for text that names no point on any board.
    pub fn parse(text: &str) -> Option<Vertex> {
        let big = largest();
        let loc = match big.parse_move(text).ok()? {
            Move::Pass => return Some(Vertex::PASS),
            Move::Play(l) => l,
        };
        let (x, y) = big.xy(loc);
        // Both are below MAX_SIZE, so they fit a byte.
        let (x, y) = (x as u8, y as u8);
        Some(Vertex(if text.trim_start().starts_with('(') {
            Spot::Xy { x, y }
        } else {
            Spot::Named {
                column: x,
                row: MAX_SIZE as u8 - y,
            }
        }))
    }

    /// The vertex of `mv` on a board of `size`, in letter form.
    pub fn of(size: BoardSize, mv: Move) -> Vertex {
        match mv {
            Move::Pass => Vertex::PASS,
            Move::Play(l) => {
                let (x, y) = size.xy(l);
                Vertex(Spot::Named {
                    column: x as u8,
                    row: (size.height() - y) as u8,
                })
            }
        }
    }

    /// Whether this is `pass`.
    pub fn is_pass(self) -> bool {
        self.0 == Spot::Pass
    }

    /// The move this vertex names on a board of `size`; `None` when it is off that board.
    pub fn on(self, size: BoardSize) -> Option<Move> {
        let (x, y) = match self.0 {
            Spot::Pass => return Some(Move::Pass),
            Spot::Named { column, row } => {
                (usize::from(column), size.height().checked_sub(row.into())?)
            }
            Spot::Xy { x, y } => (usize::from(x), usize::from(y)),
        };
        size.loc(x, y).map(Move::Play)
    }
}

impl fmt::Display for Vertex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Spot::Pass => f.write_str("pass"),
            Spot::Xy { x, y } => write!(f, "({x},{y})"),
            Spot::Named { column, row } => {
                let big = largest();
                let y = MAX_SIZE - usize::from(row);
                let mv = big.loc(column.into(), y).map_or(Move::Pass, Move::Play);
                f.write_str(&big.gtp(mv))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertices_are_placed_on_the_board_at_hand() {
        let nine = BoardSize::square(9).unwrap();
        let wide = BoardSize::new(13, 5).unwrap();
        for text in ["D4", "j9", "A1", "(3,2)", "pass", "PSS"] {
            let v = Vertex::parse(text).unwrap();
            assert_eq!(v.on(nine), nine.parse_move(text).ok(), "{text}");
            assert_eq!(v.on(wide), wide.parse_move(text).ok(), "{text}");
            assert_eq!(Vertex::parse(&v.to_string()), Some(v), "{text}");
        }
        assert_eq!(Vertex::parse("j9").unwrap().to_string(), "J9");
        assert_eq!(Vertex::parse("Z25").unwrap().on(nine), None);
        for bad in ["Z26", "I5", "D0", "D", "4", "(25,0)", "AA1", "", "resign"] {
            assert_eq!(Vertex::parse(bad), None, "{bad}");
        }
        for l in wide.points() {
            let v = Vertex::of(wide, Move::Play(l));
            assert_eq!(v.on(wide), Some(Move::Play(l)));
            assert_eq!(wide.gtp(Move::Play(l)), v.to_string());
        }
    }
}
