//! The search with KataGo's g170 b6c96 network (ONNX Runtime or tract, as `common` picks)
//! on tactical positions: a working ladder is started, an escapable atari is escaped, a
//! seki is left alone, and the only living move is found in standard life-and-death
//! shapes. Also: a fixed seed, one thread and a fixed symmetry give identical analyses.
//! Skipped without ../shared.

mod common;

use std::sync::Arc;

use tengen_rules::{Board, BoardSize, Game, GameOptions, Move, Player, Rules};
use tengen_search::{Evaluator, Limits, Search, SearchParams, SnapshotOptions};

fn network(n: usize) -> Option<Arc<dyn Evaluator>> {
    common::b6c96("tactics with the b6c96 network", n)
}

fn position(n: usize, rows: &[&str], to_move: Player, komi: f32) -> Game {
    let size = BoardSize::square(n).unwrap();
    let board = Board::from_rows(size, rows).expect("diagram");
    let mut rules = Rules::chinese();
    rules.komi = komi;
    Game::from_position(board, to_move, rules, GameOptions::default())
}

fn best_move(ev: &Arc<dyn Evaluator>, game: &Game, visits: u64) -> Move {
    let mut s = Search::new(ev.clone(), SearchParams::default());
    s.set_position(game);
    s.run(Limits::visits(visits)).expect("search");
    let a = s.analysis(&SnapshotOptions::default()).expect("analysis");
    let size = game.board().size();
    let top: Vec<String> = a
        .moves
        .iter()
        .take(8)
        .map(|m| {
            let wr = if game.to_move() == Player::White {
                m.winrate
            } else {
                1.0 - m.winrate
            };
            format!(
                "{} v{} p{:.3} wr{:.2}",
                size.gtp(m.mv),
                m.visits,
                m.prior,
                wr
            )
        })
        .collect();
    println!("top moves: {}", top.join(", "));
    a.best_move().expect("a move")
}

fn mv(n: usize, text: &str) -> Move {
    BoardSize::square(n).unwrap().parse_move(text).unwrap()
}

#[test]
fn captures_a_ladder_that_works() {
    let Some(ev) = network(19) else { return };
    // A ladder in progress: White's D4 E4 E5 cut Black apart and have two liberties, E6
    // and F5. Atari from E6 drives them along an empty diagonal to the edge: the ladder
    // works. Atari from F5, or any other move, lets them out.
    let mut rows = vec!["..................."; 19];
    rows[3] = "...O...........X...";
    rows[14] = "...XO..............";
    rows[15] = "..XOOX.........O...";
    rows[16] = "...XX..........O...";
    let g = position(19, &rows, Player::Black, 7.5);
    let e5 = mv(19, "E5").loc().unwrap();
    assert_eq!(g.board().chain_len(e5), 3);
    assert_eq!(g.board().liberties(e5), 2);
    assert_eq!(best_move(&ev, &g, 300), mv(19, "E6"));
}

#[test]
fn escapes_an_atari_that_can_be_escaped() {
    let Some(ev) = network(9) else { return };
    // Black's E5 is in atari; extending to E4 gives three liberties.
    let rows = [
        ".........",
        ".........",
        ".........",
        "....O....",
        "...OXO...",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    let g = position(9, &rows, Player::Black, 7.0);
    let e5 = mv(9, "E5").loc().unwrap();
    assert_eq!(g.board().liberties(e5), 1);
    let best = best_move(&ev, &g, 400);
    let mut after = g.clone();
    after.play(best).unwrap();
    assert!(
        after.board().stone(e5) == Some(Player::Black) && after.board().liberties(e5) >= 3,
        "played {}",
        BoardSize::square(9).unwrap().gtp(best)
    );
}

#[test]
fn leaves_a_seki_alone() {
    let Some(ev) = network(9) else { return };
    // Bottom left: Black B1 C1 and White A2-E2 E1 share the liberties A1 and D1 and have
    // no eyes: a seki. Either shared liberty is self-atari for Black and loses B1 C1.
    let rows = [
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
        "XXXXXX...",
        "OOOOOX...",
        ".XX.OX...",
    ];
    let g = position(9, &rows, Player::Black, 7.0);
    let best = best_move(&ev, &g, 600);
    assert!(
        best != mv(9, "A1") && best != mv(9, "D1"),
        "Black played self-atari in the seki"
    );
}

#[test]
fn finds_the_only_living_move() {
    let Some(ev) = network(9) else { return };
    // Black groups inside White walls with three-point eye spaces: only the vital point
    // makes two eyes.
    // Black has compensation elsewhere, so the group's life decides the game.
    let cases: [(&[&str; 9], &str); 3] = [
        // Straight three in the corner (A1 B1 C1): B1.
        (
            &[
                "..O..X...",
                "..O..X...",
                "..O..X...",
                "..O..X...",
                ".OO..X...",
                "OOO..X...",
                "OOOOOOX..",
                "XXXXO.X..",
                "...XO.X..",
            ],
            "B1",
        ),
        // Straight three on the edge (C1 D1 E1): D1.
        (
            &[
                "....OX...",
                "....OX...",
                "....OX...",
                "....OX...",
                "....OX...",
                "....OX...",
                "OOOOOOOX.",
                "OXXXXXOX.",
                "OX...XOX.",
            ],
            "D1",
        ),
        // Bent three in the corner (A1 A2 B1): A1.
        (
            &[
                "...OX....",
                "...OX....",
                "...OX....",
                "...OX....",
                "OOOOX....",
                "OOOOX....",
                "XXOOX....",
                ".XXOX....",
                "..XOX....",
            ],
            "A1",
        ),
    ];
    for (rows, answer) in cases {
        let g = position(9, rows, Player::Black, 7.0);
        assert_eq!(best_move(&ev, &g, 600), mv(9, answer), "answer {answer}");
    }
}

#[test]
fn fixed_seed_one_thread_fixed_symmetry_is_deterministic() {
    let Some(ev) = network(9) else { return };
    let size = BoardSize::square(9).unwrap();
    let mut g = Game::new(size, Rules::chinese());
    for m in ["E5", "C4", "G4", "E3"] {
        g.play(size.parse_move(m).unwrap()).unwrap();
    }
    let params = SearchParams {
        threads: 1,
        random_symmetries: false,
        seed: 42,
        ..SearchParams::default()
    };
    let run = || {
        let mut s = Search::new(ev.clone(), params.clone());
        s.clear_cache();
        s.set_position(&g);
        s.run(Limits::visits(300)).unwrap();
        s.analysis(&SnapshotOptions {
            ownership: true,
            moves_ownership: true,
            ..SnapshotOptions::default()
        })
        .unwrap()
    };
    let (a, b) = (run(), run());
    assert_eq!(a.root.visits, 300);
    assert!(a.moves.len() > 3);
    assert_eq!(a, b);
}
