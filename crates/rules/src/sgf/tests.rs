//! Unit tests of the SGF reader and writer.

use super::record::resignation_winner;
use super::*;
use crate::board::Board;
use crate::game::{Game, GameOptions};
use crate::geometry::{BoardSize, Loc, Move};
use crate::rules::Rules;

fn err(text: &str) -> SgfError {
    match parse(text) {
        Ok(t) => panic!("{text:?} parsed: {t:?}"),
        Err(e) => e,
    }
}

fn one(text: &str) -> GameTree {
    let mut trees = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(trees.len(), 1);
    trees.remove(0)
}

fn load_ok(text: &str) -> SgfGame {
    load(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn load_err(text: &str) -> SgfError {
    match load(text) {
        Ok(g) => panic!("{text:?} loaded: {:?}", g.game),
        Err(e) => e,
    }
}

fn pt(size: BoardSize, s: &str) -> Loc {
    match size.parse_sgf(s) {
        Ok(Move::Play(l)) => l,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn parse_errors_report_byte_offsets() {
    use SgfErrorKind as K;
    let cases: &[(&str, usize, SgfErrorKind)] = &[
        ("", 0, K::NoGameTree),
        ("  \n", 3, K::NoGameTree),
        ("x(;B[aa])", 0, K::ExpectedGameTree('x')),
        ("(;B[aa]) junk", 9, K::ExpectedGameTree('j')),
        ("(;B[aa]))", 8, K::ExpectedGameTree(')')),
        ("(B[aa])", 1, K::ExpectedNode('B')),
        ("( )", 2, K::ExpectedNode(')')),
        ("(", 0, K::UnclosedGameTree),
        ("(;B[aa]", 0, K::UnclosedGameTree),
        ("(;B[aa](;W[bb])", 0, K::UnclosedGameTree),
        ("(;B[aa](;W[bb]", 7, K::UnclosedGameTree),
        ("(;C[abc", 3, K::UnclosedValue),
        ("(;C[abc\\]", 3, K::UnclosedValue),
        ("(;GM[1]C[ab\\", 8, K::UnclosedValue),
        ("(;[aa])", 2, K::MissingIdentifier),
        ("(;add[aa])", 2, K::EmptyIdentifier("add".into())),
        ("(;B)", 3, K::ExpectedValue("B".into())),
        ("(;B", 3, K::ExpectedValue("B".into())),
        ("(;B  ;W[aa])", 5, K::ExpectedValue("B".into())),
        ("(;B[aa] 12 ;W[bb])", 8, K::UnexpectedChar('1')),
        ("(;B[aa]é)", 7, K::UnexpectedChar('é')),
        ("(;B[aa](;W[bb]);B[cc])", 15, K::NodeAfterVariation),
    ];
    for (text, offset, kind) in cases {
        let e = err(text);
        assert_eq!((e.offset, &e.kind), (*offset, kind), "{text:?}: {e}");
    }
}

#[test]
fn error_display_shows_the_offset() {
    let e = err("(;GM[1];B[aa]C[never closed");
    assert_eq!(e.to_string(), "byte 14: unclosed property value");
    let e = load_err("(;SZ[9];B[aa];W[aa])");
    assert_eq!(e.offset, 13);
    assert!(
        e.to_string()
            .starts_with("byte 13: node 2: illegal move White W[aa]"),
        "{e}"
    );
}

#[test]
fn escapes_and_soft_line_breaks() {
    let t = one("(;C[a\\]b\\\\c\\:d\\e]N[x\\\ny\\\r\nz\\\rw\\\n\rv]GN[line\nbreak\r\nkept])");
    let r = t.root();
    assert_eq!(r.get("C"), Some("a]b\\c:de"));
    assert_eq!(r.get("N"), Some("xyzwv"));
    assert_eq!(r.get("GN"), Some("line\nbreak\r\nkept"));
    // An escaped multi-byte character stays whole.
    assert_eq!(one("(;C[\\日本])").root().get("C"), Some("日本"));
}

#[test]
fn lowercase_letters_in_identifiers_are_dropped() {
    let t = one("(;GaMe[1]AddBlack[aa][bb]\n  ;Black[cc])");
    assert_eq!(t.root().get("GM"), Some("1"));
    assert_eq!(t.root().values("AB"), ["aa", "bb"]);
    assert_eq!(t.root().first_child().and_then(|n| n.get("B")), Some("cc"));
}

#[test]
fn whitespace_between_tokens_and_several_trees() {
    let text = "\u{feff} \n ( ; FF [4] \t GM\n[1] ; B [aa] ( ; W[bb] ) ( ;W[cc] ) )\r\n(;GM[1])\n";
    let trees = parse(text).unwrap();
    assert_eq!(trees.len(), 2);
    let t = &trees[0];
    assert_eq!(t.root().properties().len(), 2);
    assert_eq!(t.root().offset(), Some(8)); // after a 3-byte BOM
    assert_eq!(t.main_line().count(), 3);
    assert_eq!(t.node_count(), 4);
    assert_eq!(trees[1].root().get("GM"), Some("1"));
    // Whitespace between the values of one property too.
    assert_eq!(
        one("(;B[aa][bb] [cc]\n[dd])").root().values("B"),
        ["aa", "bb", "cc", "dd"]
    );
}

#[test]
fn variations_are_kept_and_the_main_line_is_the_first_child() {
    let t = one("(;GM[1];B[aa](;W[bb];B[cc](;W[dd])(;W[ee]))(;W[ff]))");
    let moves: Vec<_> = t
        .main_line()
        .filter_map(|n| n.get("B").or(n.get("W")))
        .collect();
    assert_eq!(moves, ["aa", "bb", "cc", "dd"]);
    let b1 = t.root().first_child().unwrap();
    assert_eq!(b1.children().len(), 2);
    let alt: Vec<_> = b1.children().map(|n| n.get("W").unwrap()).collect();
    assert_eq!(alt, ["bb", "ff"]);
    let cc = b1.child(0).unwrap().first_child().unwrap();
    assert_eq!(
        cc.children()
            .map(|n| n.get("W").unwrap())
            .collect::<Vec<_>>(),
        ["dd", "ee"]
    );
    assert_eq!(cc.parent().unwrap().parent().unwrap().id(), b1.id());
    assert_eq!(t.node_count(), 7);
    assert_eq!(one(&t.to_sgf()), t);
}

#[test]
fn writer_escapes_and_round_trips() {
    let mut t = GameTree::new(vec![Property::new(
        "C",
        vec!["a]b\\c\n\\".into(), "".into(), "日本]".into()],
    )
    .unwrap()]);
    let root = t.root().id();
    let a = t
        .add_child(root, vec![Property::new("B", vec!["aa".into()]).unwrap()])
        .unwrap();
    t.add_child(root, vec![]).unwrap();
    t.add_child(a, vec![Property::new("W", vec!["bb".into()]).unwrap()])
        .unwrap();
    let text = t.to_sgf();
    assert_eq!(
        text,
        "(;C[a\\]b\\\\c\n\\\\][][日本\\]]\n(;B[aa];W[bb])\n(;))"
    );
    assert_eq!(one(&text), t);
    assert_eq!(write(&[t.clone(), t.clone()]), format!("{text}\n{text}\n"));
    assert!(Property::new("Ab", vec!["x".into()]).is_err());
    assert!(Property::new("", vec!["x".into()]).is_err());
    assert!(Property::new("AB", vec![]).is_err());
    assert!(t.properties_mut(NodeId(99)).is_none());
    assert!(t.add_child(NodeId(99), vec![]).is_none());
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    const N: usize = 100_000;
    let e = err(&"(".repeat(N));
    assert_eq!((e.offset, e.kind), (1, SgfErrorKind::ExpectedNode('(')));
    let e = err(&"(;".repeat(N));
    assert_eq!(
        (e.offset, e.kind),
        (2 * (N - 1), SgfErrorKind::UnclosedGameTree)
    );
    let nested = format!("{}{}", "(;".repeat(N), ")".repeat(N));
    let t = one(&nested);
    assert_eq!(t.main_line().count(), N);
    // Written back as one long sequence: a different text for the same tree.
    let text = t.to_sgf();
    assert_eq!(text.len(), N + 3); // `(`, N `;`, a line break after the root, `)`
    assert_eq!(one(&text), t);
    drop(t);
    // A long game loads too.
    let long = format!("(;SZ[2]{})", ";B[];W[]".repeat(N / 2));
    assert_eq!(load_ok(&long).game.turns().len(), N);
}

#[test]
fn compressed_point_lists() {
    let g = load_ok("(;SZ[5]AB[aa:cc][ee]AW[dd:ed]AE[bb])");
    let s = g.game.board().size();
    let b = g.game.initial_board();
    assert_eq!(b.num_stones(Player::Black), 9);
    assert_eq!(b.num_stones(Player::White), 2);
    assert_eq!(b.stone(pt(s, "bb")), None);
    assert_eq!(b.stone(pt(s, "cc")), Some(Player::Black));
    assert_eq!(b.stone(pt(s, "ed")), Some(Player::White));
    // Corners in any order give the same rectangle.
    let g2 = load_ok("(;SZ[5]AB[cc:aa][ee]AW[ed:dd]AE[bb])");
    assert_eq!(g2.game.initial_board(), b);
    assert!(matches!(
        load_err("(;SZ[5]AB[aa:ff])").kind,
        SgfErrorKind::BadPoint { node: 0, ref property, .. } if property == "AB"
    ));
    assert!(load_err("(;SZ[5]AB[aa:])").kind != SgfErrorKind::NoGameTree);
}

#[test]
fn rectangular_sizes() {
    let g = load_ok("(;GM[1]SZ[9:13];B[im];W[ai])");
    let s = g.game.board().size();
    assert_eq!((s.width(), s.height()), (9, 13));
    assert_eq!(
        g.game.board().stone(s.loc(8, 12).unwrap()),
        Some(Player::Black)
    );
    assert_eq!(
        g.game.board().stone(s.loc(0, 8).unwrap()),
        Some(Player::White)
    );
    assert!(matches!(
        load_err("(;SZ[9:13];B[ma])").kind,
        SgfErrorKind::BadPoint { node: 1, .. }
    ));
    assert_eq!(
        load_ok("(;SZ[ 7 : 3 ])").game.board().size(),
        BoardSize::new(7, 3).unwrap()
    );
    let out = save(&g.game);
    assert!(out.contains("SZ[9:13]"), "{out}");
}

#[test]
fn bad_sizes_are_errors() {
    for sz in ["1", "26", "0:9", "9:", "nine", "", "19:19:19", "-9"] {
        let text = format!("(;GM[1]SZ[{sz}])");
        let e = load_err(&text);
        assert_eq!(
            (e.offset, e.kind),
            (1, SgfErrorKind::BadSize(sz.to_string())),
            "{sz}"
        );
    }
}

#[test]
fn passes_are_empty_values_and_tt_up_to_19() {
    let g = load_ok("(;SZ[19];B[];W[tt];B[ ])");
    assert!(g.game.turns().iter().all(|t| t.mv == Move::Pass));
    assert_eq!(g.game.turns().len(), 3);
    let g = load_ok("(;SZ[21];B[tt])");
    let s = g.game.board().size();
    assert_eq!(g.game.turns()[0].mv, Move::Play(s.loc(19, 19).unwrap()));
    assert!(save(&g.game).contains(";B[tt]"));
    let g = load_ok("(;SZ[21];B[])");
    assert_eq!(g.game.turns()[0].mv, Move::Pass);
    assert!(save(&g.game).contains(";B[])"));
}

#[test]
fn illegal_moves_name_the_node() {
    let text = "(;SZ[9]\n;B[ee];W[dd]\n;B[ee])";
    let e = load_err(text);
    assert_eq!(e.offset, text.rfind(';').unwrap());
    match e.kind {
        SgfErrorKind::IllegalMove {
            node,
            player,
            reason,
            ..
        } => {
            assert_eq!(
                (node, player, reason),
                (3, Player::Black, IllegalMove::Occupied)
            );
        }
        k => panic!("{k:?}"),
    }
    // One-stone suicide in the corner.
    let text = "(;SZ[9]AW[ba][ab];B[aa])";
    let e = load_err(text);
    assert_eq!(e.offset, 17);
    assert!(matches!(
        e.kind,
        SgfErrorKind::IllegalMove {
            node: 1,
            reason: IllegalMove::Suicide,
            ..
        }
    ));
    // Multi-stone suicide, superko, out-of-turn moves are tolerated.
    let g = load_ok("(;SZ[9]RU[Japanese]AB[ba]AW[ca][bb][ab];B[aa];B[ee];B[ff])");
    assert_eq!(g.game.turns().len(), 3);
    assert_eq!(
        g.game
            .board()
            .stone(pt(BoardSize::square(9).unwrap(), "aa")),
        None
    );
    let e = load_err("(;SZ[9];B[aa][bb])");
    assert!(matches!(
        e.kind,
        SgfErrorKind::BadMove {
            node: 1,
            values: 2,
            ..
        }
    ));
}

#[test]
fn bad_coordinates_are_errors() {
    for (text, node) in [
        ("(;SZ[9];B[jj])", 1),
        ("(;SZ[9];B[e])", 1),
        ("(;SZ[9];W[a1])", 1),
        ("(;AB[tt])", 0),
        ("(;SZ[9]AW[zz])", 0),
    ] {
        let e = load_err(text);
        assert!(
            matches!(e.kind, SgfErrorKind::BadPoint { node: n, .. } if n == node),
            "{text}: {e}"
        );
    }
}

#[test]
fn setup_without_liberties_is_an_error() {
    let e = load_err("(;SZ[9]AB[aa]AW[ba][ab])");
    assert_eq!(e.offset, 1);
    assert!(matches!(
        e.kind,
        SgfErrorKind::BadSetup {
            node: 0,
            reason: SetupError::NoLiberties(0)
        }
    ));
    let text = "(;SZ[9];B[aa];W[ba];B[ee]AW[ab])";
    let e = load_err(text);
    assert_eq!(e.offset, text.rfind(';').unwrap());
    assert!(matches!(e.kind, SgfErrorKind::BadSetup { node: 3, .. }));
}

#[test]
fn other_games_are_refused() {
    let e = load_err("(;GM[2]SZ[8])");
    assert_eq!((e.offset, e.kind), (1, SgfErrorKind::NotGo("2".into())));
    assert!(load("(;GM[1])").is_ok());
    assert!(load("(;GM[ 1 ])").is_ok());
}

#[test]
fn rules_names_and_fallback() {
    let cases = [
        ("Japanese", Rules::japanese()),
        ("japanese", Rules::japanese()),
        ("Chinese", Rules::chinese()),
        ("CN", Rules::chinese()),
        ("Chinese rules", Rules::chinese()),
        ("AGA", Rules::preset("aga").unwrap()),
        ("GOE", Rules::preset("goe").unwrap()),
        ("Ing", Rules::preset("goe").unwrap()),
        ("NZ", Rules::preset("nz").unwrap()),
        ("New Zealand", Rules::preset("nz").unwrap()),
        ("Korean", Rules::preset("korean").unwrap()),
        ("Tromp-Taylor", Rules::tromp_taylor()),
        ("koSIMPLEscoreAREAtaxNONEsui0whbNfpok1", Rules::chinese()),
    ];
    for (name, want) in cases {
        let g = load_ok(&format!("(;RU[{name}])"));
        assert_eq!(*g.game.rules(), want, "{name}");
        assert!(g.warnings.is_empty(), "{name}");
    }
    let g = load_ok("(;RU[Martian]KM[3])");
    assert!(g.game.rules().equals_ignoring_komi(&Rules::tromp_taylor()));
    assert_eq!(g.game.rules().komi, 3.0);
    assert_eq!(g.warnings, [SgfWarning::UnknownRules("Martian".into())]);
    let g = load_ok("(;GM[1])");
    assert_eq!(*g.game.rules(), Rules::default());
    assert!(g.warnings.is_empty());
    // Compact text with komi: KM wins when present.
    assert_eq!(
        load_ok("(;RU[koSIMPLEscoreAREAkomi5])").game.rules().komi,
        5.0
    );
    assert_eq!(
        load_ok("(;RU[koSIMPLEscoreAREAkomi5]KM[0.5])")
            .game
            .rules()
            .komi,
        0.5
    );
    assert_eq!(rules_from_name("nonsense"), None);
}

#[test]
fn komi_and_handicap() {
    let g = load_ok("(;RU[Japanese])");
    assert_eq!(g.game.rules().komi, 6.5);
    let g = load_ok("(;RU[Japanese]KM[-2.5]HA[3])");
    assert_eq!((g.game.rules().komi, g.handicap), (-2.5, Some(3)));
    let g = load_ok("(;RU[Chinese]KM[7.3]HA[two])");
    assert_eq!((g.game.rules().komi, g.handicap), (7.5, None));
    assert_eq!(
        g.warnings,
        [
            SgfWarning::BadKomi("7.3".into()),
            SgfWarning::BadHandicap("two".into())
        ]
    );
}

#[test]
fn the_first_player() {
    let p = |text: &str| load_ok(text).game.initial_player();
    assert_eq!(p("(;SZ[9])"), Player::Black);
    assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg])"), Player::White);
    assert_eq!(p("(;SZ[9]AB[cc][gg])"), Player::Black);
    assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg]AW[ee])"), Player::Black);
    assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg]PL[B])"), Player::Black);
    assert_eq!(p("(;SZ[9]PL[W])"), Player::White);
    assert_eq!(p("(;SZ[9]PL[white])"), Player::White);
    // Without PL, the first move tells.
    assert_eq!(p("(;SZ[9];W[ee])"), Player::White);
    assert_eq!(p("(;SZ[9]HA[2]AB[cc][gg];B[ee])"), Player::Black);
    let g = load_ok("(;SZ[9]PL[x])");
    assert_eq!(g.game.initial_player(), Player::Black);
    assert_eq!(
        g.warnings,
        [SgfWarning::BadPlayer {
            node: 0,
            value: "x".into()
        }]
    );
    let g = load_ok("(;SZ[9]HA[2]AB[cc][gg])");
    assert_eq!(g.game.initial_turn_number(), 2);
}

#[test]
fn setup_in_a_later_node_restarts_the_game() {
    let g = load_ok("(;SZ[9];B[ee]C[first];W[dd];B[cc]AW[aa]AE[ee]C[setup];W[ff]C[after])");
    let s = g.game.board().size();
    assert_eq!(
        g.warnings,
        [SgfWarning::SetupRestart {
            node: 3,
            dropped_turns: 2
        }]
    );
    let init = g.game.initial_board();
    assert_eq!(init.stone(pt(s, "dd")), Some(Player::White));
    assert_eq!(init.stone(pt(s, "aa")), Some(Player::White));
    assert_eq!(init.stone(pt(s, "ee")), None);
    assert_eq!(init.stone(pt(s, "cc")), None);
    // The node's own move comes after its setup, and decides who moved first.
    let turns: Vec<_> = g
        .game
        .turns()
        .iter()
        .map(|t| (t.player, s.sgf(t.mv)))
        .collect();
    assert_eq!(
        turns,
        [(Player::Black, "cc".into()), (Player::White, "ff".into())]
    );
    assert_eq!(g.game.initial_player(), Player::Black);
    let c: Vec<_> = g
        .comments
        .iter()
        .map(|c| (c.node, c.turns, c.text.as_str()))
        .collect();
    assert_eq!(c, [(1, 0, "first"), (3, 1, "setup"), (4, 2, "after")]);
}

#[test]
fn comments_along_the_main_line() {
    let g = load_ok("(;SZ[9]C[root];B[ee]C[one]C[more](;W[dd]C[main])(;W[cc]C[side]))");
    let c: Vec<_> = g
        .comments
        .iter()
        .map(|c| (c.node, c.turns, c.text.as_str()))
        .collect();
    assert_eq!(c, [(0, 0, "root"), (1, 1, "one\nmore"), (2, 2, "main")]);
    assert_eq!(g.tree.node_count(), 4);
}

#[test]
fn save_writes_the_header_and_reads_back() {
    let size = BoardSize::new(9, 7).unwrap();
    let stones = [size.loc(2, 2).unwrap(), size.loc(6, 4).unwrap()];
    let mut game = Game::with_handicap(size, Rules::preset("aga").unwrap(), &stones).unwrap();
    game.set_komi(0.5);
    for m in ["ee", "dd", "", "cd"] {
        let mv = size.parse_sgf(m).unwrap();
        game.play(mv).unwrap();
    }
    let text = save(&game);
    let head = format!("(;FF[4]GM[1]CA[UTF-8]AP[Tengen:{}]SZ[9:7]KM[0.5]RU[AGA]HA[2]AB[cc][ge]\n;W[ee];B[dd];W[];B[cd])\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(text, head);
    let back = load_ok(&text);
    assert_eq!(back.game.turns(), game.turns());
    assert_eq!(back.game.initial_board(), game.initial_board());
    assert_eq!(back.game.initial_player(), Player::White);
    assert_eq!(*back.game.rules(), *game.rules());
    assert_eq!(back.handicap, Some(2));
    assert!(back.warnings.is_empty());
    // Rules without a nice name are written in the compact form, komi in KM.
    let odd = Rules::parse("koSPIGHTscoreAREAtaxALLsui1komi2").unwrap();
    let g = Game::new(BoardSize::square(5).unwrap(), odd);
    let text = save(&g);
    assert!(
        text.contains("KM[2]RU[koSPIGHTscoreAREAtaxALLsui1]"),
        "{text}"
    );
    assert_eq!(*load_ok(&text).game.rules(), odd);
    // A first player that is not the default is written.
    let mut g = Game::from_position(
        Board::new(size),
        Player::White,
        Rules::japanese(),
        GameOptions::default(),
    );
    assert!(save(&g).contains("PL[W]"));
    g.play(Move::Pass).unwrap();
    assert!(!save(&g).contains("PL["));
}

#[test]
fn results_and_resignation_round_trip() {
    let size = BoardSize::square(5).unwrap();
    let mut game = Game::new(size, Rules::tromp_taylor());
    game.play(size.parse_sgf("cc").unwrap()).unwrap();
    game.resign(Player::White);
    let g = load_ok(&save(&game));
    assert_eq!(g.result.as_deref(), Some("B+R"));
    assert_eq!(g.game.outcome(), game.outcome());
    // Two passes score the game again on replay.
    let mut game = Game::new(size, Rules::tromp_taylor());
    for m in ["cc", "", ""] {
        game.play(size.parse_sgf(m).unwrap()).unwrap();
    }
    let text = save(&game);
    assert!(text.contains("RE[B+17.5]"), "{text}");
    let g = load_ok(&text);
    assert_eq!(g.game.outcome(), game.outcome());
    assert_eq!(resignation_winner("W+Resign"), Some(Player::White));
    assert_eq!(resignation_winner("B+3.5"), None);
    assert_eq!(resignation_winner("Void"), None);
}
