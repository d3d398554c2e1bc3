//! The root's ending bonus (KataGo's `rootEndingBonusPoints`): near the end of a game the
//! network sees little difference between a useful move and a pointless one, so at the
//! root a move into an area the network is sure of (that captures nothing, touches no
//! opponent stone and joins no two weak chains) is worth a fraction of a point less, as is
//! passing while the button is up or under territory scoring; dame and cleanup moves keep
//! their value. It steers which move is played, never what a position is worth below it.

use tengen_rules::{AreaMap, AreaOptions, Game, Loc, Move, Phase, Player, ScoringRule};

use crate::filter::index_move;

/// Ownership beyond which the network is taken to be sure of a point.
const SURE: f64 = 0.95;
/// The ownership range over which the penalty grows from nothing to the full amount.
const TAIL: f64 = 0.05;

/// White's score bonus for each root move (by policy index, pass last), given the root's
/// ownership map (White = +1, one value per point in index order) and the bonus `points`.
/// Empty when nothing gets a bonus (no points, or no ownership).
pub fn root_bonus(game: &Game, ownership: Option<&[f32]>, points: f64) -> Vec<f32> {
    let size = game.board().size();
    let Some(own) = ownership.filter(|o| o.len() == size.area() && points != 0.0) else {
        return Vec::new();
    };
    let board = game.board();
    let pla = game.to_move();
    let suicide = game.rules().multi_stone_suicide || game.options().pass_alive_as_if_suicide_legal;
    let safe = board.area(AreaOptions::pass_alive(suicide));
    let area_ish = game.rules().scoring == ScoringRule::Area || game.phase() == Phase::Cleanup2;
    let sign = if pla == Player::White { 1.0 } else { -1.0 };
    let mut out = vec![0f32; size.area() + 1];
    for (i, slot) in out.iter_mut().enumerate() {
        // Extra points for the player to move (negative: a penalty).
        let mut extra = 0.0;
        match index_move(size, i) {
            Move::Pass => {
                if !area_ish {
                    extra -= points * (2.0 / 3.0);
                } else if game.button_available() {
                    extra -= points * 0.5;
                }
            }
            Move::Play(loc) if board.ko().is_none() && board.is_empty_at(loc) => {
                let mine = sign * f64::from(own[i]);
                if mine <= -SURE {
                    // The opponent's sure area: pointless unless it captures (area scoring
                    // only spares captures; territory scoring spares nothing there).
                    if !area_ish || !board.would_capture(loc, pla) {
                        extra -= points * ((-SURE - mine) / TAIL);
                    }
                } else if mine >= SURE
                    && !touches(game, loc, pla.opp())
                    && !joins_weak_chains(game, loc, pla, &safe)
                {
                    extra -= points * ((mine - SURE) / TAIL);
                }
            }
            Move::Play(_) => {}
        }
        *slot = (sign * extra) as f32;
    }
    if out.iter().all(|&b| b == 0.0) {
        out.clear();
    }
    out
}

/// True if `loc` touches a stone of `pla`.
fn touches(game: &Game, loc: Loc, pla: Player) -> bool {
    game.board()
        .neighbours(loc)
        .any(|n| game.board().stone(n) == Some(pla))
}

/// True if a stone of `pla` at the empty point `loc`, outside `pla`'s pass-alive area,
/// would join a chain that is not pass-alive to another chain: a connection that may
/// matter even inside a settled-looking area.
fn joins_weak_chains(game: &Game, loc: Loc, pla: Player, safe: &AreaMap) -> bool {
    if safe.get(loc) == Some(pla) {
        return false;
    }
    let board = game.board();
    let Some(weak) = board
        .neighbours(loc)
        .find(|&n| board.stone(n) == Some(pla) && safe.get(n).is_none())
    else {
        return false;
    };
    board
        .neighbours(loc)
        .any(|n| board.stone(n) == Some(pla) && !board.same_chain(n, weak))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::{Board, BoardSize, Rules};

    fn game(rows: &[&str], to_move: Player, rules: Rules) -> Game {
        let size = BoardSize::square(rows.len()).unwrap();
        let board = Board::from_rows(size, rows).unwrap();
        Game::from_position(board, to_move, rules, Default::default())
    }

    #[test]
    fn sure_areas_cost_a_pointless_move_and_dame_cost_nothing() {
        // Black to move; the network is sure the left side is Black's and the right White's.
        let g = game(
            &[
                ".X.O.", //
                ".X.O.", //
                ".X.O.", //
                ".X.O.", //
                ".X.O.",
            ],
            Player::Black,
            Rules::chinese(),
        );
        let size = g.board().size();
        let own: Vec<f32> = size
            .points()
            .map(|l| match size.xy(l).0 {
                0 | 1 => -1.0,
                3 | 4 => 1.0,
                _ => 0.0,
            })
            .collect();
        let bonus = root_bonus(&g, Some(&own), 0.5);
        let at = |s: &str| crate::filter::move_index(size, size.parse_move(s).unwrap());
        // Filling one's own sure area and playing into the opponent's are penalised
        // (for Black, a penalty is a bonus for White: positive).
        assert!((bonus[at("A3")] - 0.5).abs() < 1e-6);
        assert!((bonus[at("E3")] - 0.5).abs() < 1e-6);
        // The dame between the walls is not.
        assert_eq!(bonus[at("C3")], 0.0);
        // Nothing for passing under area scoring without a button.
        assert_eq!(bonus[size.area()], 0.0);
        assert!(root_bonus(&g, None, 0.5).is_empty());
        assert!(root_bonus(&g, Some(&own), 0.0).is_empty());
    }

    #[test]
    fn passing_under_territory_scoring_is_discouraged() {
        let g = game(&["...", "...", "..."], Player::White, Rules::japanese());
        let own = vec![0f32; 9];
        let bonus = root_bonus(&g, Some(&own), 0.5);
        // White loses a third of a point for passing: a negative bonus for White.
        assert!((bonus[9] + 1.0 / 3.0).abs() < 1e-6);
    }
}
