//! The classical engine on textbook positions, each written as a diagram (top row
//! first, `X` Black, `O` White). Every expectation here was also checked against
//! GNU Go 3.8's `attack`, `defend`, `dragon_status` and `final_status_list`.

use tengen_classic::worms::Unknown;
use tengen_classic::{Analysis, Classic, Outcome, Reader, ReadingLimits, Reason, Status};
use tengen_rules::{Board, BoardSize, Game, GameOptions, Loc, Move, Player, Rules};

fn board(rows: &[&str]) -> Board {
    let size = BoardSize::square(rows.len()).unwrap();
    Board::from_rows(size, rows).unwrap()
}

fn at(b: &Board, gtp: &str) -> Loc {
    b.size().parse_loc(gtp).unwrap()
}

fn name(b: &Board, l: Option<Loc>) -> String {
    l.map_or("none".into(), |l| b.size().gtp(Move::Play(l)))
}

fn game(rows: &[&str], to_move: Player) -> Game {
    let mut rules = Rules::chinese();
    rules.komi = 7.0;
    Game::from_position(board(rows), to_move, rules, GameOptions::default())
}

/// The full-strength engine's move for `pla` in a diagram.
fn genmove(rows: &[&str], pla: Player) -> String {
    let g = game(rows, pla);
    let mv = Classic::new(10, 7).genmove(&g);
    g.board().size().gtp(mv)
}

fn reader() -> Reader {
    Reader::new(ReadingLimits::default())
}

fn analyse(rows: &[&str], to_move: Player) -> (Board, Analysis) {
    let b = board(rows);
    let a = Analysis::new(&b, to_move, &mut reader(), &Unknown);
    (b, a)
}

/// White D5 has two liberties; Black's atari at E5 starts a ladder that runs down and
/// to the left, and one at D4 a ladder up and to the right.
const LADDER: [&str; 9] = [
    ".........",
    ".........",
    ".........",
    "...X.....",
    "..XO.....",
    "....X....",
    ".........",
    ".........",
    ".........",
];

#[test]
fn ladder_works_without_a_breaker() {
    let b = board(&LADDER);
    let t = at(&b, "D5");
    let mut r = reader();
    let attack = r.attack(&b, t);
    assert_eq!(attack.outcome, Outcome::Win, "{attack:?}");
    assert!(!attack.uncertain);
    // The atari must leave White the liberty that leads into the ladder.
    let p = name(&b, attack.point);
    assert!(p == "D4" || p == "E5", "{p}");
    // Playing it, White cannot escape.
    let mut after = b.clone();
    after.play(Move::Play(attack.point.unwrap()), Player::Black);
    assert_eq!(r.defend(&after, t).outcome, Outcome::Fail);
}

#[test]
fn ladder_breaks_on_breakers() {
    let mut rows = LADDER;
    rows[1] = "......O..";
    rows[7] = ".O.......";
    let b = board(&rows);
    let t = at(&b, "D5");
    let mut r = reader();
    let attack = r.attack(&b, t);
    assert_eq!(attack.outcome, Outcome::Fail, "{attack:?}");
    // One breaker is not enough: the other ladder still works.
    rows[7] = ".........";
    let b = board(&rows);
    let attack = r.attack(&b, t);
    assert_eq!(attack.outcome, Outcome::Win, "{attack:?}");
    assert_eq!(name(&b, attack.point), "E5");
}

#[test]
fn snapback_captures() {
    // White's four stones have liberties B9 and C9. Black's throw-in at B9 is captured
    // by C9, which leaves White's five stones with the one liberty B9: snapback.
    let rows = [
        "O..X.....",
        "OOOX.....",
        "XXX......",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    let b = board(&rows);
    let t = at(&b, "A9");
    let mut r = reader();
    assert_eq!(r.attack(&b, t).outcome, Outcome::Win);
    assert_eq!(r.defend(&b, t).outcome, Outcome::Fail);
    // The throw-in itself: a self-atari that still kills.
    let mut after = b.clone();
    after.play(Move::Play(at(&b, "B9")), Player::Black);
    assert!(after.in_atari(at(&b, "B9")), "the throw-in is in atari");
    let d = r.defend(&after, t);
    assert_eq!(
        d.outcome,
        Outcome::Fail,
        "capturing the throw-in is snapped back: {d:?}"
    );
    // And White really can take it, only to lose five stones.
    after.play(Move::Play(at(&b, "C9")), Player::White);
    assert_eq!(after.chain_len(t), 5);
    assert!(after.in_atari(t));
}

#[test]
fn capture_race_with_a_clear_winner() {
    // White's four stones (2 liberties, A9 and A8) against Black's three (3 liberties,
    // D9 D8 D7); Black wins the race whoever moves first.
    let rows = [
        ".OX.O....",
        ".OX.O....",
        "OOX.O....",
        "XXOOO....",
        "XXX......",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    for to_move in Player::BOTH {
        let (b, a) = analyse(&rows, to_move);
        let white = a.worms.worm_at(at(&b, "B9")).unwrap();
        let black = a.worms.worm_at(at(&b, "C9")).unwrap();
        assert_eq!(white.attack.outcome, Outcome::Win, "{to_move:?}");
        assert_eq!(white.defence.outcome, Outcome::Fail, "{to_move:?}");
        assert_eq!(black.attack.outcome, Outcome::Fail, "{to_move:?}");
        assert!(a.life_at(at(&b, "B9")).unwrap() < 0.0);
        assert!(a.life_at(at(&b, "C9")).unwrap() > 0.5);
        let d = a.dragons.at(&a.worms, at(&b, "C9")).unwrap();
        assert_eq!(a.dragons.list[d].status, Status::Alive);
    }
}

#[test]
fn dead_group_is_dead_and_living_group_alive() {
    // White's group in the top edge has one eye of two points: dead.
    let rows = [
        "..XO..OX.",
        "..XOOOOX.",
        "..XXXXXX.",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    let (b, a) = analyse(&rows, Player::White);
    for p in ["D9", "E8", "G9"] {
        assert!(a.life_at(at(&b, p)).unwrap() < 0.0, "{p} should be dead");
    }
    let dead = a.dead_stones(&b);
    assert_eq!(dead.len(), 6, "{dead:?}");
    assert!(
        a.ownership[at(&b, "E9")] < -0.9,
        "its eye is Black's territory"
    );

    // Two separate eyes: alive though surrounded.
    let rows = [
        "XXXXXXXX.",
        "XOOOOOOX.",
        "XO.O.OOX.",
        "XOOOOOOX.",
        "XXXXXXXX.",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    let (b, a) = analyse(&rows, Player::Black);
    let d = a.dragons.at(&a.worms, at(&b, "B8")).unwrap();
    assert_eq!(a.dragons.list[d].status, Status::Alive);
    assert_eq!(a.dragons.list[d].eyes_min, 2);
    assert!(a.dead_stones(&b).is_empty());
    assert!(a.ownership[at(&b, "C7")] > 0.9, "an eye is White's point");
}

#[test]
fn straight_three_is_critical_with_the_vital_point_in_the_middle() {
    let rows = [
        "..XO...OX",
        "..XOOOOOX",
        "..XXXXXXX",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
        ".........",
    ];
    let (b, a) = analyse(&rows, Player::Black);
    let d = a.dragons.at(&a.worms, at(&b, "D9")).unwrap();
    let dragon = &a.dragons.list[d];
    assert_eq!(dragon.status, Status::Critical);
    assert_eq!(name(&b, dragon.key_point), "F9");
    // Black to move kills, White to move lives.
    assert!(a.life_at(at(&b, "D9")).unwrap() < 0.0);
    let (_, a) = analyse(&rows, Player::White);
    assert!(a.life_at(at(&b, "D9")).unwrap() > 0.0);
    // And genmove plays the vital point for both sides, for the reasons it should.
    for pla in Player::BOTH {
        assert_eq!(genmove(&rows, pla), "F9", "{pla:?}");
    }
    let g = game(&rows, Player::Black);
    let kill = Classic::new(10, 1).value_moves(&g).remove(0);
    assert!(
        kill.reasons.contains(&Reason::DestroyEye(at(&b, "D9"))),
        "{kill:?}"
    );
    assert!(
        kill.reasons.contains(&Reason::OwlAttack(at(&b, "D9"))),
        "{kill:?}"
    );
    let g = game(&rows, Player::White);
    let live = Classic::new(10, 1).value_moves(&g).remove(0);
    assert!(
        live.reasons.contains(&Reason::MakeEye(at(&b, "D9"))),
        "{live:?}"
    );
}

#[test]
fn seki_is_recognised() {
    // Each inner group has one eye (A9, E9) and they share the liberty C9.
    let rows = [
        ".X.O.OX..",
        "XXXOOOX..",
        "OOOXXXX..",
        "OOOX.....",
        "OOOX.....",
        "OOO.X....",
        ".........",
        ".........",
        ".........",
    ];
    let (b, a) = analyse(&rows, Player::Black);
    for p in ["B9", "D9"] {
        let d = a.dragons.at(&a.worms, at(&b, p)).unwrap();
        assert_eq!(a.dragons.list[d].status, Status::Seki, "{p}");
        assert!(a.life_at(at(&b, p)).unwrap() > 0.0);
    }
    let seki = a.seki_stones(&b);
    assert_eq!(seki.len(), 9, "{seki:?}");
    // Neither side fills the shared liberty.
    for pla in Player::BOTH {
        assert_ne!(genmove(&rows, pla), "C9", "{pla:?}");
    }
}

#[test]
fn genmove_captures_and_saves() {
    // Black's E5 is in atari (liberty E4) and so is White's D5 (liberty C5):
    // capturing at C5 saves E5 and is worth most.
    let rows = [
        ".........",
        ".........",
        ".........",
        "...XO....",
        "...OXO...",
        "...X.....",
        ".........",
        ".........",
        ".........",
    ];
    let b = board(&rows);
    let g = game(&rows, Player::Black);
    let engine = Classic::new(10, 1);
    let values = engine.value_moves(&g);
    let best = &values[0];
    assert_eq!(name(&b, Some(best.loc)), "C5", "{values:?}");
    assert!(best.reasons.iter().any(|r| matches!(r, Reason::Attack(_))));
    // White to move captures E5 at E4 or saves D5 at C5.
    let gw = game(&rows, Player::White);
    let mv = engine.genmove(&gw);
    assert!(
        ["C5", "E4"].contains(&b.size().gtp(mv).as_str()),
        "{}",
        b.size().gtp(mv)
    );
}

#[test]
fn levels_change_reading_and_randomness() {
    let weak = tengen_classic::LevelSettings::of(1);
    let strong = tengen_classic::LevelSettings::of(10);
    assert!(weak.reading.nodes < strong.reading.nodes);
    assert!(weak.noise > strong.noise);
    assert_eq!(tengen_classic::LevelSettings::of(0), weak);
    assert_eq!(tengen_classic::LevelSettings::of(99), strong);
}

#[test]
fn judge_gives_a_distribution_and_a_score() {
    let rows = LADDER;
    let g = game(&rows, Player::Black);
    let j = Classic::new(10, 1).judge(&g);
    let total: f32 = j.policy.iter().filter(|&&p| p >= 0.0).sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    // Occupied points are marked illegal; the two ataris on the lone white stone (E5
    // starts the ladder that captures it) are the favourites by far.
    let size = g.board().size();
    assert_eq!(j.policy[size.index_of(at(g.board(), "D5"))], -1.0);
    let mut order: Vec<usize> = (0..size.area()).collect();
    order.sort_by(|&a, &b| j.policy[b].total_cmp(&j.policy[a]));
    let mut top: Vec<String> = order[..2]
        .iter()
        .map(|&i| name(g.board(), size.loc_at_index(i)))
        .collect();
    top.sort();
    assert_eq!(top, ["D4", "E5"]);
    assert!(
        j.policy[order[1]] > 2.0 * j.policy[order[2]],
        "{:?}",
        &order[..3]
    );
    // Black is ahead on the board (White's stone is lost), less komi.
    assert!(j.white_score < 0.0, "{}", j.white_score);
    assert_eq!(j.white_ownership.len(), 81);
}

#[test]
fn the_prior_alone_favours_the_ataris_and_looks_at_passing_after_a_pass() {
    let mut g = game(&LADDER, Player::Black);
    let engine = Classic::new(10, 1);
    let p = engine.prior_policy(&g);
    let size = g.board().size();
    let total: f32 = p.iter().filter(|&&x| x >= 0.0).sum();
    assert!((total - 1.0).abs() < 1e-3, "{total}");
    assert_eq!(p[size.index_of(at(g.board(), "D5"))], -1.0);
    let best = (0..size.area())
        .max_by(|&a, &b| p[a].total_cmp(&p[b]))
        .unwrap();
    let best_name = name(g.board(), size.loc_at_index(best));
    assert!(best_name == "E5" || best_name == "D4", "{best_name}");
    // Before any pass, passing is far below the best move; after White passes, level.
    assert!(p[size.area()] < 0.01 * p[best], "{}", p[size.area()]);
    g.set_player_to_move(Player::White);
    g.play(Move::Pass).unwrap();
    let q = engine.prior_policy(&g);
    let top = q[..size.area()].iter().copied().fold(0.0f32, f32::max);
    assert!(
        (q[size.area()] - top).abs() < 1e-6,
        "{} {}",
        q[size.area()],
        top
    );
}

#[test]
fn at_the_end_stones_lost_inside_the_other_area_are_dead() {
    // The last position of a 9x9 game against GNU Go, both sides passed. The lone black
    // stone at H8 has room around it but lives nowhere; GNU Go (`--chinese-rules`)
    // calls the same seven stones dead.
    let rows = [
        "...OO....",
        ".OOXOO.X.",
        ".OXXXOOOX",
        "OOXOXO.OO",
        "OOOOXXOOX",
        "OXXXXXXOX",
        "OOXOXOXXX",
        "XOXOOOX.X",
        "XXX......",
    ];
    let g = game(&rows, Player::Black);
    let (dead, seki) = Classic::new(10, 1).final_status(&g);
    let mut names: Vec<String> = dead.iter().map(|&l| name(g.board(), Some(l))).collect();
    names.sort();
    assert_eq!(names, ["D2", "D3", "E2", "F2", "F3", "H8", "J7"]);
    assert!(seki.is_empty(), "{seki:?}");
}

#[test]
fn at_the_end_a_chain_in_atari_that_cannot_escape_is_dead() {
    // The last position of another game: Black's five stones on the left (A6 to B3)
    // have one liberty, A4, and White takes them whenever it likes. Light playouts
    // often lose the race that follows; the reading does not.
    let rows = [
        ".OOX.XXXX",
        ".OXXXXX.X",
        "OOXXXXO..",
        "XOX.X..X.",
        "XXOX.XXXX",
        ".XOXXXXXX",
        "OXOXOXOOO",
        "OOOOOOOX.",
        "O.OO.OO.X",
    ];
    let mut g = game(&rows, Player::Black);
    g.set_player_to_move(Player::White);
    let (dead, _) = Classic::new(10, 1).final_status(&g);
    let names: Vec<String> = dead.iter().map(|&l| name(g.board(), Some(l))).collect();
    for stone in ["A6", "A5", "B5", "B4", "B3"] {
        assert!(names.iter().any(|n| n == stone), "{stone} not in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "B9" || n == "A7"), "{names:?}");
}
