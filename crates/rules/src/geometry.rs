//! Board sizes, points and moves, and their text forms: GTP (`D4`, `AA12`), `(x,y)`, SGF (`dp`).
//!
//! A point is stored as an index into a padded array with a one-point wall
//! around the board, as fast board code usually does: `(x+1) + (y+1)*(width+1)`,
//! with `y = 0` the top row. Only [`BoardSize`] makes [`Loc`]s, so a `Loc` is
//! always a point of the board it was made for.

use std::fmt;

/// Smallest board edge Tengen plays on.
pub const MIN_SIZE: usize = 2;
/// Largest board edge Tengen plays on.
pub const MAX_SIZE: usize = 25;
/// Most points a board can have.
pub const MAX_AREA: usize = MAX_SIZE * MAX_SIZE;
/// Length of the padded per-point arrays (board plus walls).
pub(crate) const MAX_ARR: usize = (MAX_SIZE + 1) * (MAX_SIZE + 2) + 1;

/// GTP column letters: A to Z without I.
const GTP_LETTERS: &[u8; 25] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// A point of the board, as an index into the padded arrays.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Loc(pub(crate) u16);

impl Loc {
    /// The raw padded-array index (stable for a given board size).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A turn's action on the board: a stone on a point, or a pass.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Move {
    /// Pass the turn.
    Pass,
    /// Place a stone on a point.
    Play(Loc),
}

impl Move {
    /// The point played, if this is not a pass.
    pub fn loc(self) -> Option<Loc> {
        match self {
            Move::Pass => None,
            Move::Play(l) => Some(l),
        }
    }
}

/// Why a board size was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("board size {x}x{y} is not supported (each side must be {MIN_SIZE} to {MAX_SIZE})")]
pub struct SizeError {
    /// Requested width.
    pub x: usize,
    /// Requested height.
    pub y: usize,
}

/// Why a coordinate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoordError {
    /// The text is not a coordinate in any known form.
    #[error("not a board coordinate: {0:?}")]
    Syntax(String),
    /// The coordinate is well formed but off this board.
    #[error("coordinate {text:?} is off the {x}x{y} board")]
    OffBoard {
        /// The text as given.
        text: String,
        /// Board width.
        x: usize,
        /// Board height.
        y: usize,
    },
}

/// The width and height of a board (each 2 to 25).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct BoardSize {
    x: u8,
    y: u8,
}

impl Default for BoardSize {
    fn default() -> Self {
        BoardSize { x: 19, y: 19 }
    }
}

impl fmt::Display for BoardSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.x, self.y)
    }
}

impl BoardSize {
    /// A board `x` columns wide and `y` rows high.
    pub fn new(x: usize, y: usize) -> Result<Self, SizeError> {
        if (MIN_SIZE..=MAX_SIZE).contains(&x) && (MIN_SIZE..=MAX_SIZE).contains(&y) {
            Ok(BoardSize {
                x: x as u8,
                y: y as u8,
            })
        } else {
            Err(SizeError { x, y })
        }
    }

    /// A square board.
    pub fn square(n: usize) -> Result<Self, SizeError> {
        Self::new(n, n)
    }

    /// Number of columns.
    #[inline]
    pub fn width(self) -> usize {
        self.x as usize
    }

    /// Number of rows.
    #[inline]
    pub fn height(self) -> usize {
        self.y as usize
    }

    /// Number of points.
    #[inline]
    pub fn area(self) -> usize {
        self.width() * self.height()
    }

    /// Distance in the padded array between vertically adjacent points.
    #[inline]
    pub(crate) fn stride(self) -> usize {
        self.width() + 1
    }

    /// The point at column `x` (0 = left) and row `y` (0 = top).
    #[inline]
    pub fn loc(self, x: usize, y: usize) -> Option<Loc> {
        (x < self.width() && y < self.height()).then(|| self.loc_unchecked(x, y))
    }

    #[inline]
    pub(crate) fn loc_unchecked(self, x: usize, y: usize) -> Loc {
        Loc(((x + 1) + (y + 1) * self.stride()) as u16)
    }

    /// Column and row (0-based, row 0 at the top) of a point.
    #[inline]
    pub fn xy(self, loc: Loc) -> (usize, usize) {
        let i = loc.0 as usize;
        (i % self.stride() - 1, i / self.stride() - 1)
    }

    /// Row-major index (top row first), the order of KataGo's and Pgx's flat arrays.
    #[inline]
    pub fn index_of(self, loc: Loc) -> usize {
        let (x, y) = self.xy(loc);
        y * self.width() + x
    }

    /// The point at a row-major index, if it is on the board.
    pub fn loc_at_index(self, i: usize) -> Option<Loc> {
        (i < self.area()).then(|| self.loc_unchecked(i % self.width(), i / self.width()))
    }

    /// Every point, row-major from the top-left.
    pub fn points(self) -> impl Iterator<Item = Loc> {
        (0..self.area()).map(move |i| self.loc_unchecked(i % self.width(), i / self.width()))
    }

    /// Text rows of a per-point colour, top row first: `X` Black, `O` White, `.` none.
    pub(crate) fn text_rows(self, colour: impl Fn(Loc) -> Option<crate::Player>) -> Vec<String> {
        (0..self.height())
            .map(|y| {
                (0..self.width())
                    .map(|x| colour(self.loc_unchecked(x, y)).map_or('.', |p| p.stone_char()))
                    .collect()
            })
            .collect()
    }

    /// Reads a move in GTP form (`D4`, `aa12`, `pass`) or `(x,y)` form (`(3,15)`, y from the top).
    pub fn parse_move(self, text: &str) -> Result<Move, CoordError> {
        let s = text.trim();
        if s.eq_ignore_ascii_case("pass") || s.eq_ignore_ascii_case("pss") {
            return Ok(Move::Pass);
        }
        let syntax = || CoordError::Syntax(text.to_string());
        let (x, y) = if let Some(inner) = s.strip_prefix('(') {
            let inner = inner.strip_suffix(')').ok_or_else(syntax)?;
            let (a, b) = inner.split_once(',').ok_or_else(syntax)?;
            let x: i64 = a.trim().parse().map_err(|_| syntax())?;
            let y: i64 = b.trim().parse().map_err(|_| syntax())?;
            (x, y)
        } else {
            let bytes = s.as_bytes();
            let letters = bytes.iter().take_while(|b| b.is_ascii_alphabetic()).count();
            let column = |b: u8| {
                let up = b.to_ascii_uppercase();
                GTP_LETTERS.iter().position(|&l| l == up).ok_or_else(syntax)
            };
            let x = match letters {
                1 => column(bytes[0])?,
                2 => (column(bytes[0])? + 1) * 25 + column(bytes[1])?,
                _ => return Err(syntax()),
            };
            let digits = &s[letters..];
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(syntax());
            }
            let row: i64 = digits.parse().map_err(|_| syntax())?;
            (x as i64, self.height() as i64 - row)
        };
        if x < 0 || y < 0 || x >= self.width() as i64 || y >= self.height() as i64 {
            return Err(CoordError::OffBoard {
                text: text.to_string(),
                x: self.width(),
                y: self.height(),
            });
        }
        Ok(Move::Play(self.loc_unchecked(x as usize, y as usize)))
    }

    /// Reads a point in GTP or `(x,y)` form; `pass` is refused.
    pub fn parse_loc(self, text: &str) -> Result<Loc, CoordError> {
        match self.parse_move(text)? {
            Move::Play(l) => Ok(l),
            Move::Pass => Err(CoordError::Syntax(text.to_string())),
        }
    }

    /// A move in GTP form: `pass`, `D4`, or two letters past column Z (`AA1`).
    pub fn gtp(self, mv: Move) -> String {
        match mv {
            Move::Pass => "pass".to_string(),
            Move::Play(l) => {
                let (x, y) = self.xy(l);
                let row = self.height() - y;
                if x < 25 {
                    format!("{}{}", GTP_LETTERS[x] as char, row)
                } else {
                    format!(
                        "{}{}{}",
                        GTP_LETTERS[x / 25 - 1] as char,
                        GTP_LETTERS[x % 25] as char,
                        row
                    )
                }
            }
        }
    }

    /// A move in `(x,y)` form with `y` counted from the top, as KataGo's machine form.
    pub fn xy_text(self, mv: Move) -> String {
        match mv {
            Move::Pass => "pass".to_string(),
            Move::Play(l) => {
                let (x, y) = self.xy(l);
                format!("({x},{y})")
            }
        }
    }

    /// Reads an SGF point value (`dp`; `a`..`z` then `A`..`Z`, top-left is `aa`).
    /// The empty value, and `tt` on boards up to 19x19, are passes.
    pub fn parse_sgf(self, text: &str) -> Result<Move, CoordError> {
        let b = text.as_bytes();
        if b.is_empty() || (text == "tt" && self.width() <= 19 && self.height() <= 19) {
            return Ok(Move::Pass);
        }
        let letter = |c: u8| match c {
            b'a'..=b'z' => Some((c - b'a') as usize),
            b'A'..=b'Z' => Some((c - b'A') as usize + 26),
            _ => None,
        };
        if b.len() != 2 {
            return Err(CoordError::Syntax(text.to_string()));
        }
        let (Some(x), Some(y)) = (letter(b[0]), letter(b[1])) else {
            return Err(CoordError::Syntax(text.to_string()));
        };
        self.loc(x, y)
            .map(Move::Play)
            .ok_or_else(|| CoordError::OffBoard {
                text: text.to_string(),
                x: self.width(),
                y: self.height(),
            })
    }

    /// A move as an SGF point value; a pass is the empty value.
    pub fn sgf(self, mv: Move) -> String {
        let letter = |v: usize| {
            if v < 26 {
                (b'a' + v as u8) as char
            } else {
                (b'A' + (v - 26) as u8) as char
            }
        };
        match mv {
            Move::Pass => String::new(),
            Move::Play(l) => {
                let (x, y) = self.xy(l);
                format!("{}{}", letter(x), letter(y))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert!(BoardSize::new(1, 5).is_err());
        assert!(BoardSize::new(26, 5).is_err());
        assert!(BoardSize::new(2, 25).is_ok());
        let s = BoardSize::new(9, 13).unwrap();
        assert_eq!((s.width(), s.height(), s.area()), (9, 13, 117));
        assert_eq!(s.points().count(), 117);
    }

    #[test]
    fn gtp_round_trip_all_sizes() {
        for w in MIN_SIZE..=MAX_SIZE {
            for h in [2, 7, 19, 25] {
                let s = BoardSize::new(w, h).unwrap();
                for l in s.points() {
                    let t = s.gtp(Move::Play(l));
                    assert_eq!(s.parse_move(&t).unwrap(), Move::Play(l), "{t}");
                    assert_eq!(s.parse_move(&t.to_lowercase()).unwrap(), Move::Play(l));
                    assert_eq!(
                        s.parse_move(&s.xy_text(Move::Play(l))).unwrap(),
                        Move::Play(l)
                    );
                    assert_eq!(s.parse_sgf(&s.sgf(Move::Play(l))).unwrap(), Move::Play(l));
                }
            }
        }
    }

    #[test]
    fn gtp_known_points() {
        let s = BoardSize::square(19).unwrap();
        assert_eq!(s.index_of(s.parse_loc("A19").unwrap()), 0);
        assert_eq!(s.index_of(s.parse_loc("T19").unwrap()), 18);
        assert_eq!(s.index_of(s.parse_loc("A1").unwrap()), 342);
        assert_eq!(s.index_of(s.parse_loc("K10").unwrap()), 180);
        assert_eq!(s.parse_move("PASS").unwrap(), Move::Pass);
        assert_eq!(s.sgf(s.parse_move("D4").unwrap()), "dp");
        assert_eq!(s.parse_sgf("tt").unwrap(), Move::Pass);
        assert_eq!(s.parse_sgf("").unwrap(), Move::Pass);
        let big = BoardSize::square(25).unwrap();
        assert_eq!(big.gtp(Move::Play(big.loc(24, 0).unwrap())), "Z25");
        assert!(big.parse_sgf("tt").unwrap() != Move::Pass);
    }

    #[test]
    fn bad_coordinates_are_errors() {
        let s = BoardSize::square(9).unwrap();
        for bad in [
            "", "I5", "A", "5", "A0", "A10", "K5", "Z9", "(9,0)", "(-1,2)", "(1,2", "A-1", "A1x",
            "ÄÖ3",
        ] {
            assert!(s.parse_move(bad).is_err(), "{bad:?}");
        }
        for bad in ["a", "abc", "j1", "zz", "!a"] {
            assert!(s.parse_sgf(bad).is_err(), "{bad:?}");
        }
        assert!(matches!(
            s.parse_move("J10"),
            Err(CoordError::OffBoard { .. })
        ));
    }
}
