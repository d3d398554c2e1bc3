//! SGF round trips (random node trees, random legal games) and hand-written fixture records.

use proptest::prelude::*;
use proptest::sample::Index;
use tengen_rules::sgf::{self, GameTree, Property, SgfErrorKind, SgfGame};
use tengen_rules::{Board, BoardSize, Game, GameOptions, IllegalMove, Loc, Move, Player, Rules};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sgf/");

fn fixture(name: &str) -> String {
    let path = format!("{FIXTURES}{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load_fixture(name: &str) -> SgfGame {
    sgf::load(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn pt(size: BoardSize, s: &str) -> Loc {
    match size.parse_sgf(s) {
        Ok(Move::Play(l)) => l,
        other => panic!("{s}: {other:?}"),
    }
}

fn moves(g: &Game) -> Vec<String> {
    let size = g.board().size();
    g.turns()
        .iter()
        .map(|t| format!("{}[{}]", t.player.letter(), size.sgf(t.mv)))
        .collect()
}

/// Reading what `save` wrote gives the same game.
fn assert_same_game(back: &Game, game: &Game) {
    assert_eq!(back.turns(), game.turns());
    assert_eq!(back.initial_board(), game.initial_board());
    assert_eq!(back.initial_player(), game.initial_player());
    assert_eq!(back.board(), game.board());
    assert_eq!(back.board().size(), game.board().size());
    assert_eq!(*back.rules(), *game.rules());
    assert_eq!(back.rules().komi, game.rules().komi);
    assert_eq!(back.outcome(), game.outcome());
}

// ---- random node trees ----

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-s]{0,2}",
        "[\\]\\\\\\[\n\r:;() a日😀é]{0,12}",
        any::<String>(),
    ]
}

fn properties() -> impl Strategy<Value = Vec<Property>> {
    prop::collection::vec(("[A-Z]{1,3}", prop::collection::vec(value(), 1..4)), 0..4).prop_map(
        |ps| {
            ps.into_iter()
                .map(|(id, values)| Property::new(id, values).expect("valid by construction"))
                .collect()
        },
    )
}

/// A tree of up to 40 nodes, each hung from a random earlier node.
fn tree() -> impl Strategy<Value = GameTree> {
    (
        properties(),
        prop::collection::vec((any::<Index>(), properties()), 0..40),
    )
        .prop_map(|(root, rest)| {
            let mut t = GameTree::new(root);
            let mut ids = vec![t.root().id()];
            for (parent, props) in rest {
                let p = ids[parent.index(ids.len())];
                ids.push(t.add_child(p, props).expect("parent exists"));
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn node_trees_round_trip(trees in prop::collection::vec(tree(), 1..4)) {
        let text = sgf::write(&trees);
        let back = sgf::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, trees);
    }

    #[test]
    fn any_text_parses_or_fails_without_panicking(text in any::<String>()) {
        if let Ok(trees) = sgf::parse(&text) {
            prop_assert_eq!(sgf::parse(&sgf::write(&trees)).ok(), Some(trees));
        }
        let _ = sgf::load(&text);
    }

    #[test]
    fn damaged_records_parse_or_fail_without_panicking(
        cuts in prop::collection::vec((any::<Index>(), any::<Index>(), "[\\[\\]();\\\\A-Za-z: é]{0,3}"), 1..4),
    ) {
        let mut text = fixture("handicap_19x19.sgf");
        for (at, len, insert) in cuts {
            let chars: Vec<char> = text.chars().collect();
            let start = at.index(chars.len() + 1);
            let end = (start + len.index(4)).min(chars.len());
            text = chars[..start].iter().chain(insert.chars().collect::<Vec<_>>().iter()).chain(chars[end..].iter()).collect();
        }
        match sgf::parse(&text) {
            Ok(trees) => prop_assert_eq!(sgf::parse(&sgf::write(&trees)).ok(), Some(trees)),
            Err(e) => prop_assert!(e.offset <= text.len(), "{} beyond {}", e, text.len()),
        }
        let _ = sgf::load(&text);
    }
}

// ---- random legal games ----

const PRESETS: [&str; 13] = [
    "tromp-taylor",
    "chinese",
    "chinese-ogs",
    "japanese",
    "korean",
    "stone-scoring",
    "ancient-territory",
    "aga",
    "aga-button",
    "bga",
    "new-zealand",
    "goe",
    "koSPIGHTscoreTERRITORYtaxNONEsui1",
];

#[derive(Debug, Clone)]
struct GameSpec {
    width: usize,
    height: usize,
    preset: usize,
    komi_halves: i32,
    black_setup: usize,
    white_setup: usize,
    white_first: bool,
    moves: usize,
    resign: bool,
    seed: u64,
}

fn game_spec() -> impl Strategy<Value = GameSpec> {
    (
        prop_oneof![2usize..=9, 2usize..=25],
        prop_oneof![2usize..=9, 2usize..=25],
        0..PRESETS.len(),
        -30i32..=30,
        prop_oneof![Just(0usize), 0usize..=9],
        prop_oneof![Just(0usize), 0usize..=4],
        any::<bool>(),
        // Games with no moves are where `PL` matters.
        prop_oneof![1 => Just(0usize), 4 => 0usize..120],
        prop::bool::weighted(0.2),
        any::<u64>(),
    )
        .prop_map(
            |(
                width,
                height,
                preset,
                komi_halves,
                black_setup,
                white_setup,
                white_first,
                moves,
                resign,
                seed,
            )| GameSpec {
                width,
                height,
                preset,
                komi_halves,
                black_setup,
                white_setup,
                white_first,
                moves,
                resign,
                seed,
            },
        )
}

/// Plays the game a spec describes: setup stones, then random legal moves (passes made likelier so games end).
fn play(spec: &GameSpec) -> Game {
    let size = BoardSize::new(spec.width, spec.height).expect("2..=25");
    let mut rules = Rules::parse(PRESETS[spec.preset]).expect("known rules");
    rules.komi = spec.komi_halves as f32 / 2.0;
    let mut rng = fastrand::Rng::with_seed(spec.seed);
    let mut points: Vec<Loc> = size.points().collect();
    rng.shuffle(&mut points);
    // Black-only setups always leave liberties while a point stays empty; mixed ones may not.
    let blacks = spec.black_setup.min(size.area() - 1);
    let black: Vec<_> = points[..blacks]
        .iter()
        .map(|&l| (l, Some(Player::Black)))
        .collect();
    let whites = spec.white_setup.min(size.area() - 1 - blacks);
    let white: Vec<_> = points[blacks..blacks + whites]
        .iter()
        .map(|&l| (l, Some(Player::White)))
        .collect();
    let mut board = Board::new(size);
    if board.set_stones(&[black.clone(), white].concat()).is_err() {
        board
            .set_stones(&black)
            .expect("black stones alone have liberties");
    }
    let first = if spec.white_first {
        Player::White
    } else {
        Player::Black
    };
    let mut game = Game::from_position(board, first, rules, GameOptions::default());
    for _ in 0..spec.moves {
        if game.is_over() {
            break;
        }
        let legal = game.legal_moves();
        let mv = if rng.f32() < 0.1 {
            Move::Pass
        } else {
            legal[rng.usize(..legal.len())]
        };
        game.play(mv).expect("legal move");
    }
    if spec.resign && !game.is_over() {
        game.resign(game.to_move());
    }
    game
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_games_round_trip(spec in game_spec()) {
        let game = play(&spec);
        let text = sgf::save(&game);
        let back = sgf::load(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        assert_same_game(&back.game, &game);
        let b = game.initial_board();
        let handicap = (b.num_stones(Player::White) == 0 && b.num_stones(Player::Black) >= 2)
            .then(|| b.num_stones(Player::Black) as u32);
        prop_assert_eq!(back.handicap, handicap);
        prop_assert_eq!(back.result, game.outcome().map(|o| o.sgf_result()));
        // Writing the loaded game again gives the same text.
        prop_assert_eq!(sgf::save(&back.game), text);
    }
}

// ---- fixtures ----

#[test]
fn fixture_9x9_capture_and_ko() {
    let g = load_fixture("ko_capture_9x9.sgf");
    let size = g.game.board().size();
    assert_eq!(size, BoardSize::square(9).unwrap());
    assert_eq!(*g.game.rules(), Rules::japanese());
    assert_eq!(g.game.rules().komi, 6.5);
    assert_eq!(g.tree.root().get("PB"), Some("Hand"));
    assert_eq!(g.game.turns().len(), 13);
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);

    // The ko: after Black's capture at move 9, White's immediate retake is illegal.
    let mut strict = Game::new(size, Rules::japanese());
    for t in &g.game.turns()[..9] {
        strict.play(t.mv).unwrap();
    }
    assert_eq!(strict.board().stone(pt(size, "cc")), None);
    assert_eq!(strict.board().captures(Player::White), 1);
    assert_eq!(strict.board().ko(), Some(pt(size, "cc")));
    assert_eq!(
        strict.play(Move::Play(pt(size, "cc"))),
        Err(IllegalMove::Ko)
    );
    // After a threat and an answer the retake is legal, and it is what the record plays.
    for t in &g.game.turns()[9..] {
        strict.play(t.mv).unwrap();
    }
    let b = g.game.board();
    assert_eq!(b, strict.board());
    assert_eq!(b.stone(pt(size, "cc")), Some(Player::White));
    assert_eq!(b.stone(pt(size, "dc")), None);
    assert_eq!(
        (b.captures(Player::Black), b.captures(Player::White)),
        (1, 1)
    );

    assert_eq!(g.result.as_deref(), Some("W+R"));
    assert_eq!(
        g.game.outcome().and_then(|o| o.winner()),
        Some(Player::White)
    );
    let comments: Vec<_> = g.comments.iter().map(|c| (c.node, c.turns)).collect();
    assert_eq!(comments, [(0, 0), (9, 9), (10, 10), (12, 12)]);
    assert!(g.comments[1].text.starts_with("Black captures"));
}

#[test]
fn fixture_19x19_handicap_with_comments_and_a_variation() {
    let g = load_fixture("handicap_19x19.sgf");
    let size = g.game.board().size();
    assert_eq!(size, BoardSize::square(19).unwrap());
    assert_eq!(g.handicap, Some(2));
    assert_eq!(g.game.rules().komi, 0.5);
    let init = g.game.initial_board();
    assert_eq!(init.num_stones(Player::Black), 2);
    assert_eq!(init.num_stones(Player::White), 0);
    assert_eq!(init.stone(pt(size, "dp")), Some(Player::Black));
    assert_eq!(init.stone(pt(size, "pd")), Some(Player::Black));
    assert_eq!(g.game.initial_player(), Player::White);
    assert_eq!(g.game.initial_turn_number(), 2);
    assert_eq!(
        moves(&g.game),
        ["W[qp]", "B[oq]", "W[dd]", "B[pq]", "W[qq]", "B[pr]"]
    );

    // The variation is kept beside the main line.
    let fork = g.tree.main_line().nth(3).unwrap();
    assert_eq!(fork.get("W"), Some("dd"));
    let replies: Vec<_> = fork.children().map(|n| n.get("B").unwrap()).collect();
    assert_eq!(replies, ["pq", "dc"]);
    assert_eq!(
        fork.child(1).unwrap().first_child().unwrap().get("W"),
        Some("pq")
    );
    assert_eq!(g.tree.node_count(), 9);

    let comments: Vec<_> = g
        .comments
        .iter()
        .map(|c| (c.node, c.turns, c.text.as_str()))
        .collect();
    assert_eq!(
        comments,
        [
            (0, 0, "Two handicap stones; White moves first."),
            (1, 1, "White approaches the lower right [corner]."),
            (4, 4, "Main line: Black blocks."),
        ]
    );
    assert_eq!(g.result, None);
    assert_eq!(g.game.outcome(), None);
}

#[test]
fn fixture_9x13_rectangle() {
    let g = load_fixture("rectangle_9x13.sgf");
    let size = g.game.board().size();
    assert_eq!((size.width(), size.height()), (9, 13));
    assert_eq!(*g.game.rules(), Rules::parse("new-zealand").unwrap());
    assert_eq!(g.game.initial_player(), Player::White);
    let init = g.game.initial_board();
    assert_eq!(init.stone(size.loc(0, 0).unwrap()), Some(Player::Black));
    assert_eq!(init.stone(size.loc(1, 0).unwrap()), Some(Player::Black));
    assert_eq!(init.stone(size.loc(8, 12).unwrap()), Some(Player::White));
    assert_eq!(moves(&g.game), ["W[ea]", "B[em]", "W[ig]", "B[]", "W[]"]);
    assert_eq!(
        g.game.board().stone(size.loc(4, 12).unwrap()),
        Some(Player::Black)
    );
    // Two passes end it: three stones each, no territory, komi 7.
    assert_eq!(
        g.game.outcome().map(|o| o.sgf_result()).as_deref(),
        Some("W+7")
    );
}

#[test]
fn fixture_malformed_reports_the_byte_offset() {
    let text = fixture("malformed_unclosed_value.sgf");
    let e = sgf::parse(&text).unwrap_err();
    assert_eq!(e.kind, SgfErrorKind::UnclosedValue);
    assert_eq!(e.offset, text.find("C[").unwrap() + 1);
    assert_eq!(
        e.to_string(),
        format!("byte {}: unclosed property value", e.offset)
    );
    assert_eq!(sgf::load(&text).unwrap_err(), e);
}

#[test]
fn fixture_illegal_move_names_the_node() {
    let text = fixture("illegal_occupied.sgf");
    let e = sgf::load(&text).unwrap_err();
    assert_eq!(e.offset, text.rfind(';').unwrap());
    match e.kind {
        SgfErrorKind::IllegalMove {
            node,
            player,
            ref value,
            ref reason,
            ..
        } => {
            assert_eq!(
                (node, player, value.as_str(), reason),
                (4, Player::White, "ee", &IllegalMove::Occupied)
            );
        }
        ref k => panic!("{k:?}"),
    }
    assert!(e.to_string().contains("node 4"), "{e}");
}

#[test]
fn fixtures_round_trip() {
    for name in [
        "ko_capture_9x9.sgf",
        "handicap_19x19.sgf",
        "rectangle_9x13.sgf",
    ] {
        let text = fixture(name);
        // The whole tree, variations and comments included.
        let trees = sgf::parse(&text).unwrap();
        assert_eq!(sgf::parse(&sgf::write(&trees)).unwrap(), trees, "{name}");
        // The game.
        let g = load_fixture(name);
        let back = sgf::load(&sgf::save(&g.game)).unwrap();
        assert_same_game(&back.game, &g.game);
    }
}
