//! Random openings for paired games: games 2k and 2k+1 of a match start from the same
//! few random moves with the engines' colours swapped, so an opening that favours one
//! colour favours each engine once, and games differ even between deterministic engines.

use tengen_rules::{BoardSize, Game, Move, Rules};

/// The opening moves of game `index`: `moves` random legal moves off the first line, the
/// same for both games of a pair (`index / 2`) under one `seed`. Fewer if the board runs
/// out of such points.
pub(super) fn opening(
    size: BoardSize,
    rules: Rules,
    moves: usize,
    seed: u64,
    index: usize,
) -> Vec<Move> {
    let pair = (index / 2) as u64;
    // Distinct pairs get unrelated streams (a large odd multiplier spreads the pair index).
    let mut rng = fastrand::Rng::with_seed(seed ^ pair.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (w, h) = (size.width(), size.height());
    // The first line is almost never a good opening move; on boards too small to have an
    // inside, any point will do.
    let inside = |x: usize, y: usize| w < 3 || h < 3 || (x > 0 && y > 0 && x + 1 < w && y + 1 < h);
    let mut game = Game::new(size, rules);
    let mut out = Vec::with_capacity(moves);
    while out.len() < moves {
        let candidates: Vec<Move> = size
            .points()
            .filter(|&l| {
                let (x, y) = size.xy(l);
                inside(x, y)
            })
            .map(Move::Play)
            .filter(|&m| game.is_legal(m))
            .collect();
        if candidates.is_empty() {
            break;
        }
        let mv = candidates[rng.usize(..candidates.len())];
        if game.play(mv).is_err() {
            break;
        }
        out.push(mv);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_share_an_opening_and_pairs_differ() {
        let size = BoardSize::square(9).unwrap();
        let rules = Rules::chinese();
        let of = |i| opening(size, rules, 4, 7, i);
        assert_eq!(of(0), of(1));
        assert_eq!(of(2), of(3));
        let distinct: std::collections::HashSet<Vec<Move>> = (0..20).map(|p| of(2 * p)).collect();
        assert!(
            distinct.len() > 15,
            "only {} distinct openings of 20",
            distinct.len()
        );
        assert_ne!(
            opening(size, rules, 4, 8, 0),
            of(0),
            "the seed changes the openings"
        );
        for i in 0..20 {
            let moves = of(i);
            assert_eq!(moves.len(), 4);
            let mut g = Game::new(size, rules);
            for mv in moves {
                let (x, y) = size.xy(mv.loc().unwrap());
                assert!(
                    (1..8).contains(&x) && (1..8).contains(&y),
                    "{mv:?} is on the edge"
                );
                g.play(mv).unwrap();
            }
        }
        assert!(opening(size, rules, 0, 7, 0).is_empty());
    }

    #[test]
    fn a_full_board_ends_the_opening_early() {
        // 3x3 has one inside point: the second move has nowhere to go.
        let size = BoardSize::square(3).unwrap();
        assert_eq!(opening(size, Rules::chinese(), 5, 1, 0).len(), 1);
    }
}
