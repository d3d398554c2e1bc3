//! The rules quirks that KataGo's rules text names, each checked on a hand-made position:
//! bent four in the corner, no points in seki, double-ko seki in the cleanup phases,
//! sending-two-returning-one under simple ko, the button, handicap bonus and
//! pass-alive territory with one interior point; and a count with stones both players
//! agree are dead taken off.
//!
//! Every expected value below was worked out by hand from the rules text
//! (KataGo's "full rigorous rules", version 1); the comment above each test says how.
//! Diagrams are top row first; columns are A, B, C, ... from the left, rows count up
//! from the bottom as in GTP.

use tengen_rules::{
    AreaOptions, Board, BoardSize, Game, GameOptions, HandicapBonus, IllegalMove, Loc, Move,
    Outcome, Phase, Player, Rules, TaxRule,
};

// ---- helpers ----

fn board(rows: &[&str]) -> Board {
    let size = BoardSize::new(rows[0].len(), rows.len()).expect("board size");
    Board::from_rows(size, rows).expect("valid diagram")
}

fn loc(g: &Game, s: &str) -> Loc {
    g.board().size().parse_loc(s).expect("point")
}

fn mv(g: &Game, s: &str) -> Move {
    g.board().size().parse_move(s).expect("move")
}

/// Plays `s` for the player to move, which must be legal.
fn play(g: &mut Game, s: &str) {
    let m = mv(g, s);
    let pla = g.to_move();
    if let Err(e) = g.play(m) {
        panic!("{pla:?} {s} refused: {e}\n{g:?}");
    }
}

fn play_all(g: &mut Game, moves: &[&str]) {
    for s in moves {
        play(g, s);
    }
}

fn with_cleanup() -> GameOptions {
    GameOptions {
        cleanup_phases: true,
        ..GameOptions::default()
    }
}

/// White's score minus Black's of a finished, counted game.
fn score(g: &Game) -> f32 {
    match g.outcome() {
        Some(Outcome::Scored { white_minus_black }) => white_minus_black,
        other => panic!("expected a counted result, got {other:?}\n{g:?}"),
    }
}

fn rows(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

// ---- 1. bent four in the corner ----

/// White's six stones A3,B3,B2,C2,D2,D1 have no outside liberties; their eye space is
/// the bent four A2,A1,B1,C1 with its elbow on the 1-1 point. Black is pass-alive
/// (one chain with the one-point eyes B6 and D6).
const BENT_FOUR: [&str; 7] = [
    "XXXXXXX", //
    "X.X.XXX", //
    "XXXXXXX", //
    "XXXXXXX", //
    "OOXXXXX", //
    ".OOOXXX", //
    "...OXXX",
];

// Rule: in the cleanup phases a ko capture marks the capturing stone ko-recapture-blocked;
// the opponent may not capture it back, only "unblock" it (the pass for ko), so a
// bent four in the corner dies whatever ko threats exist.
// Derivation: pass x2 ends the main phase (Japanese = territory, so cleanup follows),
// pass x2 ends cleanup phase 1. In phase 2, Black B1 (White's liberties: A2, C1),
// White A1 (a single stone with liberty A2), Black A2 captures A1; A2 is one stone with
// one liberty (A1) and White A1 would restore the previous grid, so A2 was a ko-move and
// is marked. White's chain is now in atari at C1. White A1 would capture the marked A2:
// only the unblock action remains (board unchanged, mark removed). White C1 fills the
// chain's last liberty and captures nothing (B1 still has A1): multi-stone suicide,
// illegal under Japanese rules. Black C1 then removes all six stones; pass, pass ends the
// game. Score by the rules' second territory formula (tax SEKI): setup stones count as
// moves played (Black 37, White 6), none in phase 1; at the end no white stone is left,
// the whole board is one maximal non-white region with no dame and no chain in atari
// (A2: 3 liberties, B1-C1: 4), so all 9 empty points are Black's and all 40 black stones
// count: Black = -37 + 9 + 40 = 12, White = -6 + 6.5 = 0.5, W-B = -11.5.
// (First formula: Black 9 empty + 7 captures + 3 phase-2 moves = 19, White 1 phase-2
// move + 6.5 = 7.5; the same -11.5.)
#[test]
fn bent_four_in_the_corner_dies_in_the_cleanup() {
    let mut g = Game::from_position(
        board(&BENT_FOUR),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!(g.phase(), Phase::Cleanup1);
    assert_eq!(g.to_move(), Player::Black);
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!(g.phase(), Phase::Cleanup2);
    assert!(!g.is_over());

    play_all(&mut g, &["B1", "A1", "A2"]);
    let a1 = loc(&g, "A1");
    let a2 = loc(&g, "A2");
    let c1 = loc(&g, "C1");
    assert_eq!(g.board().stone(a1), None, "A2 captured A1");
    assert_eq!(g.board().captures(Player::White), 1);
    assert!(g.ko_recapture_blocked(a2));
    assert!(
        g.board().in_atari(loc(&g, "B2")),
        "White's chain is in atari"
    );

    // White cannot take back: A1 is only the unblock action; C1 is suicide.
    assert!(g.is_pass_for_ko(Player::White, a1));
    assert_eq!(
        g.check_move(Player::White, Move::Play(c1)),
        Err(IllegalMove::Suicide)
    );
    let before = g.board().rows();
    play(&mut g, "A1");
    assert_eq!(
        g.board().rows(),
        before,
        "unblocking does not change the board"
    );
    assert!(!g.ko_recapture_blocked(a2));
    assert_eq!(g.phase(), Phase::Cleanup2);

    // Black captures the six stones.
    play(&mut g, "C1");
    assert_eq!(g.board().captures(Player::White), 7);
    assert_eq!(
        g.board().rows(),
        rows(&[
            "XXXXXXX", //
            "X.X.XXX", //
            "XXXXXXX", //
            "XXXXXXX", //
            "..XXXXX", //
            "X...XXX", //
            ".XX.XXX",
        ])
    );
    play(&mut g, "pass");
    assert!(!g.is_over());
    play(&mut g, "pass");
    assert!(g.is_over());
    assert_eq!(score(&g), -11.5);
    assert_eq!(g.outcome().unwrap().winner(), Some(Player::Black));
    assert_eq!(g.area_now().rows(), rows(&["XXXXXXX"; 7]));
}

// Rule: the same, when White simply passes instead of unblocking: the mark stays and
// Black captures at C1 at once (C1 takes the last liberty of a six-stone chain; that is not
// a ko-move, so no cleanup restriction applies).
#[test]
fn bent_four_white_passing_does_not_help() {
    let mut g = Game::from_position(
        board(&BENT_FOUR),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    play_all(
        &mut g,
        &["pass", "pass", "pass", "pass", "B1", "A1", "A2", "pass"],
    );
    assert!(g.ko_recapture_blocked(loc(&g, "A2")));
    play(&mut g, "C1");
    assert_eq!(g.board().captures(Player::White), 7);
    assert_eq!(g.board().stone(loc(&g, "D1")), None);
}

/// The same corner with the top of the board open, so that both sides can exchange
/// moves elsewhere (ko threats).
const BENT_FOUR_OPEN: [&str; 7] = [
    ".......", //
    ".......", //
    ".......", //
    "XXXXXXX", //
    "OOXXXXX", //
    ".OOOXXX", //
    "...OXXX",
];

// Rule (contrast, main phase): under simple ko only the immediate recapture is banned
// ("doesn't result in the state at the start of the opponent's previous turn").
// Derivation: Black B1, White A1, Black A2 captures A1 (a ko). White A1 now would restore
// the grid before Black's move: IllegalMove::Ko. White C1 is suicide as above. After
// White D6 and Black E6 elsewhere, White A1 recaptures A2 (legal: it restores no state at
// the start of Black's previous turn); then Black's immediate A2 is the banned one.
#[test]
fn bent_four_main_phase_is_an_ordinary_ko() {
    let mut g = Game::from_position(
        board(&BENT_FOUR_OPEN),
        Player::Black,
        Rules::japanese(),
        GameOptions::default(),
    );
    play_all(&mut g, &["B1", "A1", "A2"]);
    let a1 = mv(&g, "A1");
    assert_eq!(g.check_move(Player::White, a1), Err(IllegalMove::Ko));
    assert_eq!(
        g.check_move(Player::White, mv(&g, "C1")),
        Err(IllegalMove::Suicide)
    );
    assert!(!g.is_pass_for_ko(Player::White, loc(&g, "A1")));
    play_all(&mut g, &["D6", "E6"]);
    assert_eq!(g.check_move(Player::White, a1), Ok(()));
    play(&mut g, "A1");
    assert_eq!(g.board().stone(loc(&g, "A2")), None, "A1 captured A2");
    assert_eq!(g.board().captures(Player::Black), 1);
    assert_eq!(
        g.check_move(Player::Black, mv(&g, "A2")),
        Err(IllegalMove::Ko)
    );
}

// Rule (cleanup, with ko threats available): the ko-recapture-blocked mark is not lifted
// by moves elsewhere, only by the unblock action, so threats do not save White.
// Derivation: pass x2 -> phase 1 (Black to move). Black B1, White A1, Black A2 (marked).
// White D6 and Black E6 are exchanged elsewhere; A2 is still marked and White's A1 is
// still only the unblock action. After it, Black C1 captures the six stones.
#[test]
fn bent_four_cleanup_ko_threats_do_not_lift_the_block() {
    let mut g = Game::from_position(
        board(&BENT_FOUR_OPEN),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!(g.phase(), Phase::Cleanup1);
    play_all(&mut g, &["B1", "A1", "A2", "D6", "E6"]);
    let a2 = loc(&g, "A2");
    assert!(g.ko_recapture_blocked(a2));
    assert!(g.is_pass_for_ko(Player::White, loc(&g, "A1")));
    let before = g.board().rows();
    play(&mut g, "A1");
    assert_eq!(g.board().rows(), before);
    assert!(!g.ko_recapture_blocked(a2));
    play(&mut g, "C1");
    assert_eq!(g.board().captures(Player::White), 7);
    assert_eq!(g.board().rows()[4], "..XXXXX");
}

// ---- 2. seki and one-sided dame ----

/// Black B2,C2,A1,B1,C1,D1 (liberties A2, D2) against White E2,F2,E1,F1,G1 (liberties
/// D2, G2): A2 is Black's one-sided point, G2 White's, D2 is shared.
const SEKI: [&str; 2] = [".XX.OO.", "XXXXOOO"];

// Rule: a group that fills a shared or its own one-sided liberty puts itself in atari and
// is captured, so this is seki. Derivation: after Black D2 the black chain's only liberty
// is A2; White A2 (neighbours A1, B2, both black) captures all seven black stones. After
// Black A2 the only liberty is D2; White D2 captures seven. Symmetrically after White G2,
// Black D2 captures six white stones. Black G2 is a one-stone suicide (White still has D2).
#[test]
fn seki_filling_a_liberty_is_self_atari() {
    let new = || {
        Game::from_position(
            board(&SEKI),
            Player::Black,
            Rules::japanese(),
            GameOptions::default(),
        )
    };
    let mut g = new();
    assert_eq!(
        g.check_move(Player::Black, mv(&g, "G2")),
        Err(IllegalMove::Suicide)
    );
    play(&mut g, "D2");
    assert!(g.board().in_atari(loc(&g, "A1")));
    play(&mut g, "A2");
    assert_eq!(g.board().captures(Player::Black), 7);
    assert_eq!(g.board().rows(), rows(&["O...OO.", "....OOO"]));

    let mut g = new();
    play(&mut g, "A2");
    assert!(g.board().in_atari(loc(&g, "A1")));
    play(&mut g, "D2");
    assert_eq!(g.board().captures(Player::Black), 7);
    assert_eq!(g.board().rows(), rows(&["...OOO.", "....OOO"]));

    let mut g = Game::from_position(
        board(&SEKI),
        Player::White,
        Rules::japanese(),
        GameOptions::default(),
    );
    play(&mut g, "G2");
    assert!(g.board().in_atari(loc(&g, "G1")));
    play(&mut g, "D2");
    assert_eq!(g.board().captures(Player::White), 6);
    assert_eq!(g.board().rows(), rows(&[".XXX...", "XXXX..."]));
}

// Rule: neither chain is a pass-alive group (each has only one region all of whose empty
// points touch it: {A2} for Black, {G2} for White), so Benson gives nobody anything.
#[test]
fn seki_is_not_pass_alive() {
    let b = board(&SEKI);
    for sui in [false, true] {
        assert_eq!(
            b.area(AreaOptions::pass_alive(sui)).rows(),
            rows(&[".......", "......."])
        );
    }
}

// Rule: territory scoring with tax SEKI gives no points in seki, not even one-sided dame.
// Derivation: both maximal regions touch the dame region D2, so neither is an
// independent-life region: no empty point scores. Stones count (they were their colour
// when cleanup phase 2 began), offset by the "stones played" charge, so the map shows only
// stones: Black 6, White 5, and the setup charge is White +6 -5 = +1: W-B = -1 + 1 + 6.5
// = 6.5 (first formula: no territory, no captures, komi only). The full game with cleanup
// (pass x6) gives the same, and so does ending at once.
#[test]
fn seki_japanese_no_territory_even_one_sided() {
    let stones_only = rows(&[".XX.OO.", "XXXXOOO"]);
    let mut g = Game::from_position(
        board(&SEKI),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    for (i, phase_after) in [
        Phase::Main,
        Phase::Cleanup1,
        Phase::Cleanup1,
        Phase::Cleanup2,
        Phase::Cleanup2,
    ]
    .into_iter()
    .enumerate()
    {
        play(&mut g, "pass");
        assert_eq!(g.phase(), phase_after, "after pass {}", i + 1);
        assert!(!g.is_over());
    }
    play(&mut g, "pass");
    assert!(g.is_over());
    assert_eq!(score(&g), 6.5);
    assert_eq!(g.area_now().rows(), stones_only);

    let mut g = Game::from_position(
        board(&SEKI),
        Player::Black,
        Rules::japanese(),
        GameOptions::default(),
    );
    assert_eq!(g.end_and_score_now().rows(), stones_only);
    assert_eq!(score(&g), 6.5);
}

// Rule: with tax NONE (territory) every empty region bordered by one colour only counts,
// so the one-sided points A2 (Black) and G2 (White) are territory. Map: stones plus A2 and
// G2; W-B = (6 - 7) + 1 (setup charge) + 6.5 = 6.5 (first formula: 1 point each, komi).
#[test]
fn seki_territory_tax_none_counts_one_sided_points() {
    let rules = Rules {
        tax: TaxRule::None,
        ..Rules::japanese()
    };
    let mut g = Game::from_position(board(&SEKI), Player::Black, rules, with_cleanup());
    play_all(&mut g, &["pass"; 6]);
    assert!(g.is_over());
    assert_eq!(g.area_now().rows(), rows(&["XXX.OOO", "XXXXOOO"]));
    assert_eq!(score(&g), 6.5);
}

// Rule: area scoring, tax NONE (Chinese): stones plus empty regions bordered by one colour
// only: Black 6 + A2 = 7, White 5 + G2 = 6, W-B = -1 + 7.5 = 6.5; D2 is dame.
#[test]
fn seki_chinese_counts_stones_and_one_sided_points() {
    let mut g = Game::from_position(
        board(&SEKI),
        Player::Black,
        Rules::chinese(),
        GameOptions::default(),
    );
    play_all(&mut g, &["pass", "pass"]);
    assert!(g.is_over());
    assert_eq!(g.area_now().rows(), rows(&["XXX.OOO", "XXXXOOO"]));
    assert_eq!(score(&g), 6.5);
}

// Rule: area scoring, tax ALL (stone scoring): stones count, empty points only inside
// independent-life regions, -2 per such region. The seki regions touch the dame D2, so
// there is no independent-life region: only stones, Black 6, White 5, no tax:
// W-B = -1 + 7.5 = 6.5.
#[test]
fn seki_stone_scoring_counts_only_stones() {
    let rules = Rules::parse("stone-scoring").unwrap();
    assert_eq!(rules.tax, TaxRule::All);
    let mut g = Game::from_position(board(&SEKI), Player::Black, rules, GameOptions::default());
    play_all(&mut g, &["pass", "pass"]);
    assert!(g.is_over());
    assert_eq!(g.area_now().rows(), rows(&[".XX.OO.", "XXXXOOO"]));
    assert_eq!(g.independent_life_region_balance(), 0);
    assert_eq!(score(&g), 6.5);
}

// ---- 3. double-ko seki ----

/// A double-ko seki. Black's chain (A1-C1, A2-B2, B3-C3, A4-B4, A5-C5) has the eye A3 and
/// the liberty C2; White's chain (D1-F1, E2-F2, D3-E3, E4-F4, D5-F5) has the eye F3 and the
/// liberty D4. Ko 1: White's single stone C4 (liberty D4) can be taken by Black D4.
/// Ko 2: Black's single stone D2 (liberty C2) can be taken by White C2.
/// If Black takes D4, White is in atari at F3 and must take C2 at once (then Black is
/// limited to A3 and C4 and cannot retake D2 at once); filling A3, C2, D4 or F3 is suicide
/// or self-atari. So neither side can capture the other: a seki held by two kos.
const DOUBLE_KO: [&str; 5] = [
    "XXXOOO", //
    "XXO.OO", //
    ".XXOO.", //
    "XX.XOO", //
    "XXXOOO",
];

// The four ko states: (C4 white | D4 black) x (D2 black | C2 white).
const DK_S0: [&str; 5] = DOUBLE_KO;
const DK_G1: [&str; 5] = ["XXXOOO", "XX.XOO", ".XXOO.", "XX.XOO", "XXXOOO"];
const DK_G2: [&str; 5] = ["XXXOOO", "XX.XOO", ".XXOO.", "XXO.OO", "XXXOOO"];
const DK_G5: [&str; 5] = ["XXXOOO", "XXO.OO", ".XXOO.", "XXO.OO", "XXXOOO"];

// Rule: independent-life regions exclude regions containing a chain in atari (footnote
// [1]: "This handles double ko seki"), and the groups are not pass-alive.
// Derivation: in every ko state some single ko stone is in atari, or one of the two big
// chains is (G1: White at F3; G5: Black at A3); there is no dame. So neither maximal region
// is independent: the map is empty for territory scoring and no region is counted.
// Benson: Black's chain has the one-point region A3; its other region {C2} (or {C4}) also
// touches the lone ko stone, which has a single vital region and dies first, so {C2}
// stops counting; likewise for White. Nothing is pass-alive.
#[test]
fn double_ko_seki_has_no_independent_life_and_no_pass_alive_group() {
    for diagram in [DK_S0, DK_G1, DK_G2, DK_G5] {
        let b = board(&diagram);
        let (area, regions) = b.independent_life_area(false, false, false);
        assert_eq!(area.rows(), rows(&["......"; 5]), "{diagram:?}");
        assert_eq!(regions, 0);
        assert_eq!(
            b.area(AreaOptions::pass_alive(false)).rows(),
            rows(&["......"; 5]),
            "{diagram:?}"
        );
    }
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Act {
    Capture(&'static str),
    Unblock(&'static str),
    Pass,
}

/// A fixed local policy in the double ko: take a ko if a legal ko capture exists (Black
/// tries D4 then D2, White C4 then C2), else unblock one, else pass.
fn double_ko_turn(g: &mut Game) -> Act {
    let pla = g.to_move();
    let points: [&'static str; 2] = match pla {
        Player::Black => ["D4", "D2"],
        Player::White => ["C4", "C2"],
    };
    for p in points {
        let l = loc(g, p);
        if g.board().is_empty_at(l)
            && g.board().would_capture(l, pla)
            && !g.is_pass_for_ko(pla, l)
            && g.is_legal(Move::Play(l))
        {
            g.play(Move::Play(l)).unwrap();
            return Act::Capture(p);
        }
    }
    for p in points {
        let l = loc(g, p);
        if g.board().is_empty_at(l) && g.is_pass_for_ko(pla, l) {
            assert!(g.is_legal(Move::Play(l)));
            g.play(Move::Play(l)).unwrap();
            return Act::Unblock(p);
        }
    }
    g.play(Move::Pass).unwrap();
    Act::Pass
}

// Rule: in a cleanup phase a player may make a ko capture on a point only once from the
// same grid colouring (footnote [8]); marks are lifted only by unblocking.
// Derivation (phase 1, Black to move at S0, no marks):
//  1 B D4 takes C4 (mark D4) -> G1, White in atari at F3.
//  2 W C2 takes D2 (mark C2; C4 would capture the marked D4) -> G2.
//  3 B D2 would capture the marked C2: unblock. 4 W C4 would capture the marked D4: unblock.
//  5 B D2 takes C2 (legal: Black's only earlier capture was D4 from S0) -> G1, mark D2.
//  6 W C4 takes D4 (new for White: C2 was from G1, this is C4 from G1) -> S0, mark C4.
//  7 B D4: unblock C4. 8 W C2: unblock D2. Now S0, no marks, Black to move, as at the
//  start (its second occurrence, not a third: no "no result").
//  9 B D4 would repeat Black's move 1 (same point, same grid): banned.
#[test]
fn double_ko_seki_cleanup_capture_only_once_per_position() {
    let mut g = Game::from_position(
        board(&DOUBLE_KO),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!((g.phase(), g.to_move()), (Phase::Cleanup1, Player::Black));

    let (d4, c4, d2, c2) = (loc(&g, "D4"), loc(&g, "C4"), loc(&g, "D2"), loc(&g, "C2"));
    play(&mut g, "D4");
    assert!(g.ko_recapture_blocked(d4));
    assert_eq!(g.board().rows(), rows(&DK_G1));
    assert!(g.is_pass_for_ko(Player::White, c4));
    play(&mut g, "C2");
    assert_eq!(g.board().rows(), rows(&DK_G2));
    assert!(g.ko_recapture_blocked(c2) && g.ko_recapture_blocked(d4));
    assert!(g.is_pass_for_ko(Player::Black, d2));
    play(&mut g, "D2"); // unblock
    assert_eq!(g.board().rows(), rows(&DK_G2));
    assert!(!g.ko_recapture_blocked(c2));
    assert!(g.is_pass_for_ko(Player::White, c4));
    play(&mut g, "C4"); // unblock
    assert!(!g.ko_recapture_blocked(d4));
    assert!(!g.superko_banned(d2));
    play(&mut g, "D2"); // capture
    assert_eq!(g.board().rows(), rows(&DK_G1));
    assert!(g.ko_recapture_blocked(d2));
    assert!(!g.superko_banned(c4) && !g.is_pass_for_ko(Player::White, c4));
    play(&mut g, "C4"); // capture
    assert_eq!(g.board().rows(), rows(&DK_S0));
    assert!(g.ko_recapture_blocked(c4) && g.ko_recapture_blocked(d2));
    play(&mut g, "D4"); // unblock
    play(&mut g, "C2"); // unblock
    assert_eq!(g.board().rows(), rows(&DK_S0));
    assert!(!g.ko_recapture_blocked(c4) && !g.ko_recapture_blocked(d2));
    assert_eq!(g.to_move(), Player::Black);
    assert!(
        !g.is_over(),
        "second occurrence of the start state is not a no-result"
    );

    assert!(!g.is_pass_for_ko(Player::Black, d4));
    assert!(g.superko_banned(d4));
    assert_eq!(
        g.check_move(Player::Black, Move::Play(d4)),
        Err(IllegalMove::CleanupKo)
    );
    // The ban is per phase: after pass, pass the second cleanup phase starts afresh.
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!((g.phase(), g.to_move()), (Phase::Cleanup2, Player::Black));
    assert!(!g.superko_banned(d4));
    assert_eq!(g.check_move(Player::Black, Move::Play(d4)), Ok(()));
}

// Rule: the once-only rule makes the cleanup of a double-ko seki end with passes, and the
// seki scores no points (tax SEKI).
// Derivation: the policy above played by hand through both phases (grids named as in the
// consts, U = captures already used in the phase):
// Phase 1 (Black first): B D4 cap, W C2 cap, B D2 unblock, W C4 unblock, B D2 cap,
// W C4 cap, B D4 unblock, W C2 unblock, B pass (D4 from S0 used), W C2 cap (new: from S0),
// B D4 cap (from G5), W C4 unblock, B D2 unblock, W C4 cap (from G2), B D2 cap (from G5),
// W C2 unblock, B D4 unblock, W pass (C2 from S0 used), B pass (D4 from S0 used) -> two
// passes end phase 1 at S0. No state occurs a third time between passes.
// Phase 2 starts with White (Black took the last turn) and mirrors it: W C2 cap, B D4 cap,
// W C4 unblock, B D2 unblock, W C4 cap, B D2 cap, W C2 unblock, B D4 unblock, W pass,
// B D4 cap, W C2 cap, B D2 unblock, W C4 unblock, B D2 cap, W C4 cap, B D4 unblock,
// W C2 unblock, B pass, W pass -> the game ends at S0.
// Score (second formula): setup 13 stones each, 4 phase-1 captures (moves) each, no
// independent-life region, all 13 stones of each side were theirs when phase 2 began:
// W-B = (-13 - 4 + 13) - (-13 - 4 + 13) + 6.5 = 6.5. The map shows stones only.
#[test]
fn double_ko_seki_cleanup_ends_with_passes_and_no_points() {
    use Act::{Capture as C, Pass as P, Unblock as U};
    let phase1 = [
        C("D4"),
        C("C2"),
        U("D2"),
        U("C4"),
        C("D2"),
        C("C4"),
        U("D4"),
        U("C2"),
        P,
        C("C2"),
        C("D4"),
        U("C4"),
        U("D2"),
        C("C4"),
        C("D2"),
        U("C2"),
        U("D4"),
        P,
        P,
    ];
    let phase2 = [
        C("C2"),
        C("D4"),
        U("C4"),
        U("D2"),
        C("C4"),
        C("D2"),
        U("C2"),
        U("D4"),
        P,
        C("D4"),
        C("C2"),
        U("D2"),
        U("C4"),
        C("D2"),
        C("C4"),
        U("D4"),
        U("C2"),
        P,
        P,
    ];
    let mut g = Game::from_position(
        board(&DOUBLE_KO),
        Player::Black,
        Rules::japanese(),
        with_cleanup(),
    );
    play_all(&mut g, &["pass", "pass"]);
    assert_eq!((g.phase(), g.to_move()), (Phase::Cleanup1, Player::Black));
    for (i, want) in phase1.iter().enumerate() {
        assert_eq!(
            g.phase(),
            Phase::Cleanup1,
            "phase 1 ended early, before turn {i}"
        );
        let got = double_ko_turn(&mut g);
        assert_eq!(got, *want, "phase 1 turn {i}\n{g:?}");
        assert!(!g.is_over(), "phase 1 turn {i}: {:?}", g.outcome());
    }
    assert_eq!((g.phase(), g.to_move()), (Phase::Cleanup2, Player::White));
    assert_eq!(g.board().rows(), rows(&DK_S0));
    for (i, want) in phase2.iter().enumerate() {
        assert!(!g.is_over(), "game ended early, before phase 2 turn {i}");
        let got = double_ko_turn(&mut g);
        assert_eq!(got, *want, "phase 2 turn {i}\n{g:?}");
    }
    assert!(g.is_over());
    assert_eq!(g.board().rows(), rows(&DK_S0));
    assert_eq!(g.board().captures(Player::Black), 8);
    assert_eq!(g.board().captures(Player::White), 8);
    assert_eq!(score(&g), 6.5);
    assert_eq!(g.area_now().rows(), rows(&DK_S0));
}

// ---- 4. sending two, returning one ----

/// Black's trick at the bottom left: Black A1 makes A1-B1 a two-stone chain with the
/// single liberty C1; White C1 takes both and stands alone with one liberty (B1); Black B1
/// takes it back, restoring the grid with White to move. White has the same trick at the
/// top right (G6, E6, F6). Both big chains are pass-alive (eyes B5, C4 and E3, F2).
const STRO: [&str; 6] = [
    "OOOO.O.", //
    "O.OOOXX", //
    "OO.OXXX", //
    "OOOX.XX", //
    "OOXXX.X", //
    ".X.XXXX",
];

// Rule (simple ko, footnote [4]): "A player passes from a state that the player has
// already passed from once before" ends the phase, even without two consecutive passes.
// Derivation: B A1, W C1, B B1 restores the grid with White to move (B B1 captures one
// stone and has two liberties, so no simple-ko ban). White passes (first time from that
// state; one pass only, so nothing ends). B A1, W C1, B B1 again; White passing now repeats
// a pass from the same state and ends the game. Chinese count: each side 17 stones and 3
// points of its own (Black C1, E3, F2; White B5, C4, E6), A1 and G6 are dame; W+7.5.
#[test]
fn sending_two_returning_one_spight_pass_ends_the_game() {
    let mut g = Game::from_position(
        board(&STRO),
        Player::Black,
        Rules::chinese(),
        GameOptions::default(),
    );
    play(&mut g, "A1");
    assert_eq!(g.board().chain_len(loc(&g, "B1")), 2);
    assert!(!g.pass_would_end_phase());
    play(&mut g, "C1");
    assert_eq!(g.board().captures(Player::Black), 2);
    play(&mut g, "B1");
    assert_eq!(g.board().captures(Player::White), 1);
    assert_eq!(g.board().rows(), rows(&STRO));
    assert!(!g.pass_would_end_phase());
    play(&mut g, "pass");
    assert!(!g.is_over());
    play_all(&mut g, &["A1", "C1"]);
    assert!(!g.pass_would_end_phase());
    play(&mut g, "B1");
    assert_eq!(g.board().rows(), rows(&STRO));
    assert_eq!(g.to_move(), Player::White);
    assert!(g.pass_would_end_phase());
    play(&mut g, "pass");
    assert!(g.is_over());
    assert_eq!(score(&g), 7.5);
}

// Rule (simple ko, footnote [5]): "at the start of a player's turn, the current state has
// already occurred twice before since the most recent pass" ends the game with no result.
// Derivation: B A1, W C1, B B1 (Black's cycle), W G6, B E6, W F6 (White's cycle) returns to
// the start state with Black to move after 6 moves and again after 12; the start counts as
// the first occurrence, so the 12th move makes the third. Every other state has been seen at
// most twice by then. Under positional superko the cycle is impossible: B B1 would repeat
// the starting grid.
#[test]
fn sending_two_returning_one_cycle_without_passes_is_no_result() {
    let cycle = ["A1", "C1", "B1", "G6", "E6", "F6"];
    let mut g = Game::from_position(
        board(&STRO),
        Player::Black,
        Rules::chinese(),
        GameOptions::default(),
    );
    for round in 0..2 {
        for (i, s) in cycle.iter().enumerate() {
            assert!(!g.is_over(), "round {round} move {i}");
            play(&mut g, s);
        }
        assert_eq!(g.board().rows(), rows(&STRO));
        assert_eq!(g.to_move(), Player::Black);
    }
    assert_eq!(g.outcome(), Some(Outcome::NoResult));

    let mut g = Game::from_position(
        board(&STRO),
        Player::Black,
        Rules::tromp_taylor(),
        GameOptions::default(),
    );
    play_all(&mut g, &["A1", "C1"]);
    assert_eq!(
        g.check_move(Player::Black, mv(&g, "B1")),
        Err(IllegalMove::Superko)
    );
}

// ---- 5. the button ----

/// Black owns columns A-B (10 points), White C-E (15 points): W-B on the board is +5.
const BUTTON: [&str; 5] = [".XO..", ".XO..", ".XO..", ".XO..", ".XO.."];

// Rule: with the button, the first player to pass gets half a point, and the main phase
// ends after two consecutive passes "ignoring the first pass of the game".
// Derivation: Black passes first: button to Black (White's bonus -0.5); White's pass is
// the first counted one, so the game goes on; Black's pass is the second: the game ends.
// W-B = 5 + 7 (komi) - 0.5 = 11.5.
#[test]
fn button_taken_by_black() {
    let rules = Rules::parse("aga-button").unwrap();
    assert!(rules.button);
    assert_eq!(rules.komi, 7.0);
    let mut g = Game::from_position(board(&BUTTON), Player::Black, rules, GameOptions::default());
    assert!(g.button_available());
    assert_eq!(g.white_bonus(), 0.0);
    play(&mut g, "pass");
    assert!(!g.button_available());
    assert_eq!(g.white_bonus(), -0.5);
    assert!(!g.pass_would_end_phase());
    play(&mut g, "pass");
    assert!(
        !g.is_over(),
        "the button pass does not count toward two passes"
    );
    assert_eq!(g.white_bonus(), -0.5);
    assert!(g.pass_would_end_phase());
    play(&mut g, "pass");
    assert!(g.is_over());
    assert_eq!(score(&g), 11.5);
}

// Rule: the button goes to the first player to pass, not the first to move.
// Derivation: Black A3 (inside Black's own area: a stone for an empty point, Black still
// has 10); White passes first and takes the button (+0.5); then Black and White pass.
// W-B = 5 + 7 + 0.5 = 12.5.
#[test]
fn button_taken_by_white() {
    let rules = Rules::parse("aga-button").unwrap();
    let mut g = Game::from_position(board(&BUTTON), Player::Black, rules, GameOptions::default());
    play(&mut g, "A3");
    assert!(g.button_available());
    play(&mut g, "pass");
    assert_eq!(g.white_bonus(), 0.5);
    assert!(!g.button_available());
    play(&mut g, "pass");
    assert!(!g.is_over());
    play(&mut g, "pass");
    assert!(g.is_over());
    assert_eq!(score(&g), 12.5);
}

// ---- 6. handicap bonus ----

// Rule (footnote [11]): White gets 0, N or N-1 points for N >= 2 handicap stones.
// Derivation: 3 stones on 5x5; White passes, Black passes (simple ko, area): Black owns all
// 25 points (3 stones + 22 empty points bordered only by Black). W-B = -25 + 7.5 + bonus:
// N (Chinese) -> 3 -> -14.5; N-1 -> 2 -> -15.5; 0 -> -17.5.
#[test]
fn handicap_bonus_zero_n_and_n_minus_one() {
    let size = BoardSize::new(5, 5).unwrap();
    let stones: Vec<Loc> = ["B2", "D4", "D2"]
        .iter()
        .map(|s| size.parse_loc(s).unwrap())
        .collect();
    for (whb, bonus, result) in [
        (HandicapBonus::N, 3.0, -14.5),
        (HandicapBonus::NMinusOne, 2.0, -15.5),
        (HandicapBonus::Zero, 0.0, -17.5),
    ] {
        let rules = Rules {
            white_handicap_bonus: whb,
            ..Rules::chinese()
        };
        let mut g = Game::with_handicap(size, rules, &stones).unwrap();
        assert_eq!(g.to_move(), Player::White);
        assert_eq!(g.white_handicap_bonus(), bonus, "{whb:?}");
        play_all(&mut g, &["pass", "pass"]);
        assert!(g.is_over());
        assert_eq!(score(&g), result, "{whb:?}");
    }
    // One stone is not a handicap.
    let g = Game::with_handicap(size, Rules::chinese(), &stones[..1]).unwrap();
    assert_eq!(g.white_handicap_bonus(), 0.0);
}

// Rule (engine option, GTP practice): a run of Black moves at the start, with White only
// passing in between, is a handicap when `black_opening_run_is_handicap` is set.
// Derivation: B B2, W pass, B D4, W pass, B D2 gives N = 1, 2, 3 -> bonus 0, 2, 3 (whb N;
// one stone is no handicap). Then W C3, B pass, W pass: stones 3 Black, 1 White, the 21
// empty points form one region bordering both (dame), so W-B = 1 - 3 + 7.5 + 3 = 8.5,
// and 5.5 without the bonus when the option is off.
#[test]
fn handicap_black_opening_run() {
    let size = BoardSize::new(5, 5).unwrap();
    for (run_is_handicap, bonuses, result) in
        [(true, [0.0, 2.0, 3.0], 8.5), (false, [0.0, 0.0, 0.0], 5.5)]
    {
        let opts = GameOptions {
            black_opening_run_is_handicap: run_is_handicap,
            ..GameOptions::default()
        };
        let mut g = Game::from_position(Board::new(size), Player::Black, Rules::chinese(), opts);
        for (i, s) in ["B2", "D4", "D2"].iter().enumerate() {
            if i > 0 {
                play(&mut g, "pass");
            }
            play(&mut g, s);
            assert_eq!(
                g.white_handicap_bonus(),
                bonuses[i],
                "{run_is_handicap} {s}"
            );
        }
        play_all(&mut g, &["C3", "pass", "pass"]);
        assert!(g.is_over());
        assert_eq!(g.white_handicap_bonus(), bonuses[2]);
        assert_eq!(score(&g), result, "{run_is_handicap}");
    }
}

// Rule: the same with Black moving twice in a row (placed out of turn): 2 stones -> N = 2.
// A single Black move followed by a White move is not a handicap.
#[test]
fn handicap_two_black_moves_in_a_row_and_single_stone() {
    let size = BoardSize::new(5, 5).unwrap();
    let mut g = Game::new(size, Rules::chinese());
    g.play_tolerant(Player::Black, mv(&g, "B2")).unwrap();
    assert_eq!(g.white_handicap_bonus(), 0.0);
    g.play_tolerant(Player::Black, mv(&g, "D4")).unwrap();
    assert_eq!(g.white_handicap_bonus(), 2.0);

    let mut g = Game::new(size, Rules::chinese());
    play_all(&mut g, &["B2", "C3", "D4"]);
    assert_eq!(g.white_handicap_bonus(), 0.0);
}

// ---- 7. pass-alive territory with one interior point ----

/// A pass-alive Black chain (eyes G7 and G5) around a 3x3 hole B2-D4 whose only point not
/// touching a Black stone is the centre C3.
fn hole(centre: char) -> Board {
    let mut middle: Vec<char> = "X...XXX".chars().collect();
    middle[2] = centre;
    let middle: String = middle.into_iter().collect();
    board(&[
        "XXXXXX.", //
        "XXXXXXX", //
        "XXXXXX.", //
        "X...XXX", //
        &middle, "X...XXX", //
        "XXXXXXX",
    ])
}

// Rule: a region is pass-alive territory if every bordering chain of the colour is
// pass-alive and all but at most one of its points touch such a chain (footnote [3]).
// Derivation: empty hole: 9 points, only C3 touches no Black stone -> territory, the whole
// board is Black's. White stone on C3: still the same region (maximal non-black), still
// only C3 inside -> territory, the dead stone included. Black stone on C3: the lone stone's
// only neighbouring region is the ring of 8 points, whose corners (B2, B4, D2, D4) do not
// touch it, so it has no vital region (White can fill the ring and capture it): not
// pass-alive, and the ring borders it, so the ring and C3 are not Black's.
#[test]
fn pass_alive_territory_one_interior_point() {
    let all_black = rows(&["XXXXXXX"; 7]);
    for sui in [false, true] {
        let opts = AreaOptions::pass_alive(sui);
        assert_eq!(
            hole('.').area(opts).rows(),
            all_black,
            "empty, suicide {sui}"
        );
        assert_eq!(
            hole('O').area(opts).rows(),
            all_black,
            "white C3, suicide {sui}"
        );
        assert_eq!(
            hole('X').area(opts).rows(),
            rows(&[
                "XXXXXXX", //
                "XXXXXXX", //
                "XXXXXXX", //
                "X...XXX", //
                "X...XXX", //
                "X...XXX", //
                "XXXXXXX",
            ]),
            "black C3, suicide {sui}"
        );
    }
}

// Rule: two points touching no Black stone make a region not pass-alive territory.
// Derivation: the 3x4 hole B2-E4 has C3 and D3 inside; the wall (eyes G7, G5) stays
// pass-alive, the hole is nobody's.
#[test]
fn pass_alive_territory_two_interior_points_is_not() {
    let b = board(&[
        "XXXXXX.", //
        "XXXXXXX", //
        "XXXXXX.", //
        "X....XX", //
        "X....XX", //
        "X....XX", //
        "XXXXXXX",
    ]);
    for sui in [false, true] {
        assert_eq!(
            b.area(AreaOptions::pass_alive(sui)).rows(),
            rows(&[
                "XXXXXXX", //
                "XXXXXXX", //
                "XXXXXXX", //
                "X....XX", //
                "X....XX", //
                "X....XX", //
                "XXXXXXX",
            ]),
            "suicide {sui}"
        );
    }
}

// ---- counting with agreed dead stones ----

#[test]
fn agreed_dead_stones_come_off_for_the_count_but_stay_on_the_board() {
    let mut g = Game::new(
        BoardSize::square(7).unwrap(),
        Rules::parse("chinese").unwrap(),
    );
    g.set_komi(7.0);
    play_all(&mut g, &["D4", "A1", "pass", "pass"]);
    assert!(g.is_over());
    // As the board stands, White's A1 leaves both sides one stone and no territory.
    assert_eq!(score(&g), 7.0);
    // Taken off as dead, Black owns all 49 points; empty points in the list are ignored.
    g.rescore_with_dead(&[loc(&g, "A1"), loc(&g, "C3")])
        .unwrap();
    assert_eq!(score(&g), 7.0 - 49.0);
    assert!(g.board().stone(loc(&g, "A1")).is_some());
    // Nothing dead: the count as it stands again.
    g.rescore_with_dead(&[]).unwrap();
    assert_eq!(score(&g), 7.0);
}

// Rule: KataGo lets a game start in a cleanup phase, but only under territory scoring;
// starting in the second one snapshots the stones then on the board, as entering it does.
#[test]
fn a_game_can_start_in_a_cleanup_phase_under_territory_scoring_only() {
    let size = BoardSize::square(9).unwrap();
    let c3 = size.loc(2, 2).unwrap();
    let mut board = Board::new(size);
    board.play(Move::Play(c3), Player::Black);
    let start = |rules, phase| {
        Game::from_cleanup_position(
            board.clone(),
            Player::White,
            rules,
            GameOptions::default(),
            phase,
        )
    };
    assert!(start(Rules::chinese(), Phase::Cleanup1).is_err());
    assert!(start(Rules::chinese(), Phase::Main).is_ok());
    let g = start(Rules::japanese(), Phase::Cleanup2).unwrap();
    assert_eq!((g.phase(), g.to_move()), (Phase::Cleanup2, Player::White));
    assert_eq!(g.second_cleanup_start(c3), Some(Player::Black));
    assert!(g.is_final_phase());
}
