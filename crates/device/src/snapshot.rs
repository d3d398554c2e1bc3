//! What a sensor board or camera reports: the colour seen at every point, or that a
//! point could not be seen (a hand over the board).

use tengen_rules::{Board, BoardSize, Loc, Player};

/// One point as seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    /// No stone.
    Empty,
    /// A stone of this colour.
    Stone(Player),
    /// Not visible (occluded or unreadable).
    Unknown,
}

impl Cell {
    /// The cell showing what `stone` says.
    pub fn from_stone(stone: Option<Player>) -> Cell {
        stone.map_or(Cell::Empty, Cell::Stone)
    }

    /// Whether the cell shows exactly `stone` (an unknown cell shows nothing).
    pub fn shows(self, stone: Option<Player>) -> bool {
        self == Cell::from_stone(stone)
    }
}

/// Why a snapshot could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The number of rows or points does not fit the board.
    #[error("snapshot has {got} points, the {size} board has {want}")]
    WrongSize {
        /// The board size expected.
        size: BoardSize,
        /// Points expected.
        want: usize,
        /// Points given.
        got: usize,
    },
    /// A character that is not a point.
    #[error("unknown point character {0:?} (use . X O ?)")]
    BadChar(char),
}

/// The whole board as seen at one moment, row-major from the top-left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    size: BoardSize,
    cells: Vec<Cell>,
}

impl Snapshot {
    /// A snapshot from its cells (row-major, top row first).
    pub fn new(size: BoardSize, cells: Vec<Cell>) -> Result<Snapshot, SnapshotError> {
        if cells.len() != size.area() {
            return Err(SnapshotError::WrongSize {
                size,
                want: size.area(),
                got: cells.len(),
            });
        }
        Ok(Snapshot { size, cells })
    }

    /// Reads rows of `.` (empty), `X`/`B` (black), `O`/`W` (white), `?` (unseen);
    /// whitespace is ignored.
    pub fn parse(size: BoardSize, text: &str) -> Result<Snapshot, SnapshotError> {
        let mut cells = Vec::with_capacity(size.area());
        for c in text.chars().filter(|c| !c.is_whitespace()) {
            cells.push(match c {
                '.' | '+' => Cell::Empty,
                'X' | 'x' | 'B' | 'b' => Cell::Stone(Player::Black),
                'O' | 'o' | 'W' | 'w' => Cell::Stone(Player::White),
                '?' => Cell::Unknown,
                other => return Err(SnapshotError::BadChar(other)),
            });
            if cells.len() > size.area() {
                break;
            }
        }
        Snapshot::new(size, cells)
    }

    /// What a board looks like when every point is seen.
    pub fn of_board(board: &Board) -> Snapshot {
        let size = board.size();
        Snapshot {
            size,
            cells: size
                .points()
                .map(|l| Cell::from_stone(board.stone(l)))
                .collect(),
        }
    }

    /// The board size.
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// The cell at a point.
    pub fn at(&self, l: Loc) -> Cell {
        self.cells[self.size.index_of(l)]
    }

    /// Marks a point as seen differently (for building test snapshots).
    pub fn set(&mut self, l: Loc, c: Cell) {
        let i = self.size.index_of(l);
        self.cells[i] = c;
    }
}
