//! Whose point of view reported values take (KataGo's `reportAnalysisWinratesAs`): one
//! type for the analysis engine's responses and GTP's analysis lines.

use tengen_rules::Player;

/// Whose point of view values are reported from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Perspective {
    /// Black's (KataGo's default for the analysis engine).
    Black,
    /// White's.
    White,
    /// The player to move's (KataGo's default for GTP).
    SideToMove,
}

impl Perspective {
    /// Whether values in White's view (as the search keeps them) must be flipped to be in
    /// this view when `to_move` is to play at the root.
    pub fn flips(self, to_move: Player) -> bool {
        match self {
            Perspective::Black => true,
            Perspective::White => false,
            Perspective::SideToMove => to_move == Player::Black,
        }
    }
}

impl std::str::FromStr for Perspective {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_uppercase().as_str() {
            "BLACK" | "B" => Ok(Perspective::Black),
            "WHITE" | "W" => Ok(Perspective::White),
            "SIDETOMOVE" => Ok(Perspective::SideToMove),
            _ => Err(format!("{s:?} is not BLACK, WHITE or SIDETOMOVE")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_values_for_another_view_than_whites_flip() {
        for to_move in [Player::Black, Player::White] {
            assert!(Perspective::Black.flips(to_move));
            assert!(!Perspective::White.flips(to_move));
        }
        assert!(Perspective::SideToMove.flips(Player::Black));
        assert!(!Perspective::SideToMove.flips(Player::White));
        assert_eq!("sidetomove".parse(), Ok(Perspective::SideToMove));
        assert_eq!("b".parse(), Ok(Perspective::Black));
        assert!("red".parse::<Perspective>().is_err());
    }
}
