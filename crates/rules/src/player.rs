//! The two players and the colour of a point.

use std::fmt;
use std::str::FromStr;

/// One of the two players; also the colour of a stone.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Player {
    /// Black, who moves first in an even game.
    Black = 1,
    /// White.
    White = 2,
}

impl Player {
    /// Both players, Black first.
    pub const BOTH: [Player; 2] = [Player::Black, Player::White];

    /// The other player.
    #[inline]
    pub fn opp(self) -> Player {
        match self {
            Player::Black => Player::White,
            Player::White => Player::Black,
        }
    }

    /// 0 for Black, 1 for White: an index into per-player arrays.
    #[inline]
    pub fn index(self) -> usize {
        self as usize - 1
    }

    /// `'B'` or `'W'`.
    pub fn letter(self) -> char {
        match self {
            Player::Black => 'B',
            Player::White => 'W',
        }
    }

    /// `'X'` for Black, `'O'` for White, as in KataGo's text boards.
    pub fn stone_char(self) -> char {
        match self {
            Player::Black => 'X',
            Player::White => 'O',
        }
    }

    /// The internal cell value of this player's stones.
    #[inline]
    pub(crate) fn cell(self) -> u8 {
        self as u8
    }

    /// The player whose stones have this cell value, if any.
    #[inline]
    pub(crate) fn from_cell(c: u8) -> Option<Player> {
        match c {
            1 => Some(Player::Black),
            2 => Some(Player::White),
            _ => None,
        }
    }
}

impl fmt::Display for Player {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Player::Black => "Black",
            Player::White => "White",
        })
    }
}

/// A colour name that is neither black nor white.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a player colour: {0:?} (expected b, w, black or white)")]
pub struct PlayerParseError(pub String);

impl FromStr for Player {
    type Err = PlayerParseError;

    /// Accepts `b`, `w`, `black`, `white` in any case, as GTP does.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "b" | "black" => Ok(Player::Black),
            "w" | "white" => Ok(Player::White),
            _ => Err(PlayerParseError(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_opp() {
        assert_eq!("B".parse::<Player>().unwrap(), Player::Black);
        assert_eq!("white".parse::<Player>().unwrap(), Player::White);
        assert!("x".parse::<Player>().is_err());
        assert_eq!(Player::Black.opp(), Player::White);
        assert_eq!(Player::White.index(), 1);
    }
}
