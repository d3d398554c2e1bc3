//! The 8 symmetries of the board (the dihedral group of the square), numbered as KataGo
//! numbers them, applied to input rows and undone on per-point outputs.
//!
//! A symmetry number is three bits, as in KataGo's `SymmetryHelpers` (and `kata-raw-nn <n>`):
//! bit 0 (1) flips vertically (row `y` becomes `h-1-y`), bit 1 (2) flips horizontally
//! (column `x` becomes `w-1-x`), and bit 2 (4) then transposes (swaps `x` and `y`).
//! The flips happen before the transpose, so:
//!
//! | n | effect on point `(x, y)` of a `w`x`h` grid |
//! | --- | --- |
//! | 0 | identity |
//! | 1 | `(x, h-1-y)`: top and bottom swapped |
//! | 2 | `(w-1-x, y)`: left and right swapped |
//! | 3 | `(w-1-x, h-1-y)`: rotation by 180 degrees |
//! | 4 | `(y, x)`: transpose |
//! | 5 | `(h-1-y, x)`: vertical flip, then transpose |
//! | 6 | `(y, w-1-x)`: horizontal flip, then transpose |
//! | 7 | `(h-1-y, w-1-x)`: anti-transpose |
//!
//! Every symmetry is its own inverse except 5 and 6, which undo each other.
//! Transposing changes the shape of a non-square grid; KataGo then silently skips the
//! transpose (see [`Symmetry::for_shape`]), while the functions here refuse it.

use tengen_rules::{BoardSize, Loc, Move};

/// Why a symmetry could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SymmetryError {
    /// Symmetry numbers are 0 to 7.
    #[error("symmetry {0} does not exist (0 to 7)")]
    OutOfRange(u8),
    /// A transposing symmetry would change the shape of a non-square grid.
    #[error("symmetry {symmetry} transposes, which a {x_len}x{y_len} grid does not allow")]
    NotSquare {
        /// The symmetry number.
        symmetry: u8,
        /// Grid width.
        x_len: usize,
        /// Grid height.
        y_len: usize,
    },
    /// A buffer does not have the length the grid needs.
    #[error("{what} has {got} values, expected {expected}")]
    BufferLength {
        /// Which buffer.
        what: &'static str,
        /// Length required.
        expected: usize,
        /// Length given.
        got: usize,
    },
}

/// One of the 8 board symmetries, by KataGo's number (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Symmetry(u8);

impl Symmetry {
    /// The identity (symmetry 0).
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// All 8 symmetries, in KataGo's order.
    pub const ALL: [Symmetry; 8] = [
        Symmetry(0),
        Symmetry(1),
        Symmetry(2),
        Symmetry(3),
        Symmetry(4),
        Symmetry(5),
        Symmetry(6),
        Symmetry(7),
    ];

    /// The 4 symmetries that keep any grid's shape (no transpose).
    pub const WITHOUT_TRANSPOSE: [Symmetry; 4] =
        [Symmetry(0), Symmetry(1), Symmetry(2), Symmetry(3)];

    /// The symmetry with KataGo's number `n` (0 to 7).
    pub fn new(n: u8) -> Result<Symmetry, SymmetryError> {
        if n < 8 {
            Ok(Symmetry(n))
        } else {
            Err(SymmetryError::OutOfRange(n))
        }
    }

    /// KataGo's number of this symmetry.
    #[inline]
    pub fn number(self) -> u8 {
        self.0
    }

    /// True if rows are reversed (bit 0).
    #[inline]
    pub fn flips_y(self) -> bool {
        self.0 & 1 != 0
    }

    /// True if columns are reversed (bit 1).
    #[inline]
    pub fn flips_x(self) -> bool {
        self.0 & 2 != 0
    }

    /// True if `x` and `y` are swapped after the flips (bit 2).
    #[inline]
    pub fn transposes(self) -> bool {
        self.0 & 4 != 0
    }

    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        match self.0 {
            5 => Symmetry(6),
            6 => Symmetry(5),
            n => Symmetry(n),
        }
    }

    /// This symmetry followed by `then`, as one symmetry (KataGo's `compose`).
    pub fn then(self, then: Symmetry) -> Symmetry {
        // After a transpose, `then`'s flips act on swapped axes.
        let next = if self.transposes() {
            (then.0 & 4) | ((then.0 & 2) >> 1) | ((then.0 & 1) << 1)
        } else {
            then.0
        };
        Symmetry(self.0 ^ next)
    }

    /// True if this symmetry maps a `x_len`x`y_len` grid onto itself.
    #[inline]
    pub fn keeps_shape(self, x_len: usize, y_len: usize) -> bool {
        !self.transposes() || x_len == y_len
    }

    /// The symmetry KataGo actually applies to a `x_len`x`y_len` grid: on a non-square grid
    /// it drops the transpose, so that 4..7 act as 0..3.
    pub fn for_shape(self, x_len: usize, y_len: usize) -> Symmetry {
        if self.keeps_shape(x_len, y_len) {
            self
        } else {
            Symmetry(self.0 & 3)
        }
    }

    /// Width and height of a `w`x`h` grid after the symmetry.
    #[inline]
    pub fn shape(self, w: usize, h: usize) -> (usize, usize) {
        if self.transposes() {
            (h, w)
        } else {
            (w, h)
        }
    }

    /// Where point `(x, y)` of a `w`x`h` grid goes (KataGo's `getSymLoc`), in the grid of
    /// shape [`Symmetry::shape`]. Coordinates must be inside the grid.
    #[inline]
    pub fn map_xy(self, x: usize, y: usize, w: usize, h: usize) -> (usize, usize) {
        let x = if self.flips_x() { w - 1 - x } else { x };
        let y = if self.flips_y() { h - 1 - y } else { y };
        if self.transposes() {
            (y, x)
        } else {
            (x, y)
        }
    }

    /// The board this symmetry turns a board of size `size` into (transposes swap the sides).
    pub fn board_size(self, size: BoardSize) -> BoardSize {
        let (w, h) = self.shape(size.width(), size.height());
        // Swapping two valid sides gives a valid size.
        BoardSize::new(w, h).unwrap_or(size)
    }

    /// Where a point of a board of size `size` goes, as a point of [`Symmetry::board_size`];
    /// `None` if `loc` is not a point of that board.
    pub fn map_loc(self, size: BoardSize, loc: Loc) -> Option<Loc> {
        let i = crate::point_index(size, loc)?;
        let (x, y) = (i % size.width(), i / size.width());
        let (sx, sy) = self.map_xy(x, y, size.width(), size.height());
        self.board_size(size).loc(sx, sy)
    }

    /// A move under the symmetry (passes stay passes); `None` for a point of another board.
    pub fn map_move(self, size: BoardSize, mv: Move) -> Option<Move> {
        match mv {
            Move::Pass => Some(Move::Pass),
            Move::Play(l) => self.map_loc(size, l).map(Move::Play),
        }
    }

    /// Copies `channels` planes of `x_len`x`y_len` values (NCHW, one row) from `src` into
    /// `dst` with the symmetry applied: the value at point `p` of `src` lands at the image of
    /// `p` (KataGo's `copyInputsWithSymmetry`). The whole buffer is transformed, so a board
    /// smaller than the buffer moves away from the top-left corner, as in KataGo.
    pub fn apply_planes(
        self,
        src: &[f32],
        dst: &mut [f32],
        channels: usize,
        x_len: usize,
        y_len: usize,
    ) -> Result<(), SymmetryError> {
        self.copy_planes(src, dst, channels, x_len, y_len, true)
    }

    /// The inverse of [`Symmetry::apply_planes`] for outputs: `src` holds `channels` planes
    /// a net computed on input transformed by this symmetry; `dst` gets them back in the
    /// original orientation (KataGo's `copyOutputsWithSymmetry`). Use it for the policy
    /// (without the pass entry) and ownership.
    pub fn unapply_planes(
        self,
        src: &[f32],
        dst: &mut [f32],
        channels: usize,
        x_len: usize,
        y_len: usize,
    ) -> Result<(), SymmetryError> {
        self.copy_planes(src, dst, channels, x_len, y_len, false)
    }

    /// Copies planes from the original orientation to this symmetry's (`forward`) or back.
    fn copy_planes(
        self,
        src: &[f32],
        dst: &mut [f32],
        channels: usize,
        x_len: usize,
        y_len: usize,
        forward: bool,
    ) -> Result<(), SymmetryError> {
        self.check(src.len(), dst.len(), channels, x_len, y_len)?;
        let plane = x_len * y_len;
        let (w2, _) = self.shape(x_len, y_len);
        for c in 0..channels {
            let (s, d) = (&src[c * plane..][..plane], &mut dst[c * plane..][..plane]);
            for y in 0..y_len {
                for x in 0..x_len {
                    let (sx, sy) = self.map_xy(x, y, x_len, y_len);
                    let (original, mapped) = (y * x_len + x, sy * w2 + sx);
                    if forward {
                        d[mapped] = s[original];
                    } else {
                        d[original] = s[mapped];
                    }
                }
            }
        }
        Ok(())
    }

    fn check(
        self,
        src: usize,
        dst: usize,
        channels: usize,
        x_len: usize,
        y_len: usize,
    ) -> Result<(), SymmetryError> {
        if !self.keeps_shape(x_len, y_len) {
            return Err(SymmetryError::NotSquare {
                symmetry: self.0,
                x_len,
                y_len,
            });
        }
        let expected = channels
            .checked_mul(x_len)
            .and_then(|n| n.checked_mul(y_len))
            .unwrap_or(usize::MAX);
        for (what, got) in [("source", src), ("destination", dst)] {
            if got != expected {
                return Err(SymmetryError::BufferLength {
                    what,
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Symmetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_matches_katago() {
        // KataGo's getSymLoc on a 19x19 board for the point (3, 1).
        let expect = [
            (3, 1),
            (3, 17),
            (15, 1),
            (15, 17),
            (1, 3),
            (17, 3),
            (1, 15),
            (17, 15),
        ];
        for (s, e) in Symmetry::ALL.into_iter().zip(expect) {
            assert_eq!(s.map_xy(3, 1, 19, 19), e, "symmetry {s}");
        }
    }

    #[test]
    fn inverse_and_composition() {
        for a in Symmetry::ALL {
            assert_eq!(a.then(a.inverse()), Symmetry::IDENTITY);
            for b in Symmetry::ALL {
                let ab = a.then(b);
                for (x, y) in [(0, 0), (2, 5), (6, 1)] {
                    let (x1, y1) = a.map_xy(x, y, 7, 7);
                    assert_eq!(
                        b.map_xy(x1, y1, 7, 7),
                        ab.map_xy(x, y, 7, 7),
                        "{a} then {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn planes_round_trip_and_shapes() {
        let (c, w, h) = (3, 4, 6);
        let src: Vec<f32> = (0..c * w * h).map(|i| i as f32).collect();
        let mut out = vec![0.0; src.len()];
        let mut back = vec![0.0; src.len()];
        for s in Symmetry::ALL {
            let r = s.apply_planes(&src, &mut out, c, w, h);
            if s.transposes() {
                assert!(matches!(r, Err(SymmetryError::NotSquare { .. })));
                assert_eq!(s.for_shape(w, h).number(), s.number() - 4);
                continue;
            }
            r.unwrap();
            s.unapply_planes(&out, &mut back, c, w, h).unwrap();
            assert_eq!(back, src);
        }
        assert!(Symmetry::IDENTITY
            .apply_planes(&src, &mut out[1..], c, w, h)
            .is_err());
        assert!(Symmetry::new(8).is_err());
    }
}
