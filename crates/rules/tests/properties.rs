//! Property tests of the board and the game: incremental hashes and chain counts
//! equal a recomputation from scratch, undo restores the exact state, and the
//! liberty forecasts playouts use agree with playing the move.

use proptest::prelude::*;
use tengen_rules::{Board, BoardSize, Game, Move, Player, Rules};

/// A uniformly random move the board allows (simple ko), pass included.
fn random_move(b: &Board, pla: Player, multi: bool, rng: &mut fastrand::Rng) -> Move {
    let mut moves: Vec<Move> = b
        .size()
        .points()
        .map(Move::Play)
        .filter(|&m| b.is_legal(m, pla, multi))
        .collect();
    // Passes are rare so that games grow full boards, captures and suicides.
    if moves.is_empty() || rng.u8(..50) == 0 {
        moves.push(Move::Pass);
    }
    moves[rng.usize(..moves.len())]
}

const PRESETS: [&str; 8] = [
    "tromp-taylor",
    "chinese",
    "japanese",
    "aga",
    "aga-button",
    "stone-scoring",
    "new-zealand",
    "chinese-ogs",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn incremental_state_equals_recomputation(
        w in 2usize..=25, h in 2usize..=25, seed: u64, multi: bool, n in 1usize..400
    ) {
        let size = BoardSize::new(w, h).unwrap();
        let mut b = Board::new(size);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut pla = Player::Black;
        for _ in 0..n {
            let mv = random_move(&b, pla, multi, &mut rng);
            b.play(mv, pla);
            prop_assert_eq!(b.position_hash(), b.hash_from_scratch());
            if let Err(e) = b.check_consistency() {
                return Err(TestCaseError::fail(format!("after {}: {e}\n{b:?}", size.gtp(mv))));
            }
            pla = pla.opp();
        }
    }

    #[test]
    fn liberties_after_and_self_atari_agree_with_playing_the_move(
        w in 2usize..=13, h in 2usize..=13, seed: u64, n in 1usize..200
    ) {
        let size = BoardSize::new(w, h).unwrap();
        let mut b = Board::new(size);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut pla = Player::Black;
        for _ in 0..n {
            let mv = random_move(&b, pla, false, &mut rng);
            b.play(mv, pla);
            pla = pla.opp();
        }
        for l in size.points() {
            let m = Move::Play(l);
            if !b.is_legal(m, pla, false) {
                continue;
            }
            let mut after = b.clone();
            after.play(m, pla);
            let libs = after.liberties(l);
            let stones = after.chain_len(l);
            if !b.would_capture(l, pla) {
                for cap in 1..=4 {
                    prop_assert_eq!(b.liberties_after(l, pla, cap), libs.min(cap), "{} cap {}", size.gtp(m), cap);
                }
                let expected = if libs < 2 { stones } else { 0 };
                prop_assert_eq!(b.self_atari_stones(l, pla), expected, "{}", size.gtp(m));
            } else {
                prop_assert_eq!(b.self_atari_stones(l, pla), 0);
            }
            // The liberty of a chain in atari is the one point that captures it.
            if let Some(lib) = after.atari_liberty(l) {
                prop_assert_eq!(libs, 1);
                prop_assert!(after.is_empty_at(lib));
                prop_assert!(after.neighbours(lib).any(|x| after.same_chain(x, l)));
            } else {
                prop_assert!(libs != 1);
            }
        }
    }

    #[test]
    fn undo_restores_the_exact_state(
        w in 2usize..=25, h in 2usize..=25, seed: u64, multi: bool, n in 1usize..300
    ) {
        let size = BoardSize::new(w, h).unwrap();
        let mut b = Board::new(size);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut pla = Player::Black;
        let mut history = Vec::new();
        for _ in 0..n {
            let before = b.clone();
            let mv = random_move(&b, pla, multi, &mut rng);
            let undo = b.play(mv, pla);
            history.push((before, undo, mv));
            pla = pla.opp();
        }
        while let Some((before, undo, mv)) = history.pop() {
            b.undo(undo);
            prop_assert!(b.same_state(&before), "undo of {} differs:\n{:?}\nexpected\n{:?}", size.gtp(mv), b, before);
            prop_assert_eq!(b.position_hash(), before.position_hash());
            if let Err(e) = b.check_consistency() {
                return Err(TestCaseError::fail(format!("after undoing {}: {e}", size.gtp(mv))));
            }
        }
    }

    #[test]
    fn game_undo_restores_the_game(
        w in 2usize..=9, h in 2usize..=9, seed: u64, preset in 0usize..PRESETS.len(),
        cleanup: bool, n in 1usize..120
    ) {
        let size = BoardSize::new(w, h).unwrap();
        let rules = Rules::parse(PRESETS[preset]).unwrap();
        let mut g = Game::new(size, rules);
        if cleanup {
            let opts = tengen_rules::GameOptions { cleanup_phases: true, ..*g.options() };
            g.set_options(opts).unwrap();
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut snapshots = Vec::new();
        for _ in 0..n {
            if g.is_over() {
                break;
            }
            let legal = g.legal_moves();
            // Pass a little more often than at random, so that phases end.
            let mv = if rng.u8(..8) == 0 { Move::Pass } else { legal[rng.usize(..legal.len())] };
            snapshots.push(g.clone());
            g.play(mv).unwrap();
            prop_assert_eq!(g.board().position_hash(), g.board().hash_from_scratch());
        }
        while let Some(before) = snapshots.pop() {
            prop_assert!(g.undo());
            prop_assert_eq!(g.situation_hash(), before.situation_hash());
            prop_assert!(g.board().same_state(before.board()));
            prop_assert_eq!(g.legal_moves(), before.legal_moves());
            prop_assert_eq!(g.outcome(), before.outcome());
            prop_assert_eq!(g.phase(), before.phase());
            prop_assert_eq!(g.white_bonus(), before.white_bonus());
            prop_assert_eq!(g.pass_would_end_phase(), before.pass_would_end_phase());
        }
        prop_assert!(!g.undo());
    }
}

#[test]
fn recent_boards_follow_the_game() {
    let size = BoardSize::square(5).unwrap();
    let mut g = Game::new(size, Rules::chinese());
    let start = g.board().clone();
    assert!(g.recent_board(2).unwrap().same_state(&start));
    let mut boards = vec![start];
    for m in ["C3", "D4", "pass", "B2", "D2"] {
        g.play(size.parse_move(m).unwrap()).unwrap();
        boards.push(g.board().clone());
        let n = boards.len();
        for k in 0..tengen_rules::RECENT_BOARDS.min(n) {
            assert!(
                g.recent_board(k).unwrap().same_state(&boards[n - 1 - k]),
                "{k} after {m}"
            );
        }
    }
    assert!(g.recent_board(tengen_rules::RECENT_BOARDS).is_none());
    assert!(g.undo());
    assert!(g.recent_board(1).unwrap().same_state(&boards[3]));
}

#[test]
fn pass_end_checks_for_either_player() {
    let size = BoardSize::square(5).unwrap();
    // Spight ko: only a pass repeating the passer's earlier pass situation ends the phase.
    let spight = Rules::parse("koSPIGHTscoreAREAtaxNONEsui1").unwrap();
    let mut g = Game::new(size, spight);
    g.play(Move::Pass).unwrap();
    assert_eq!(g.to_move(), Player::White);
    assert!(!g.pass_would_end_phase());
    assert!(!g.pass_would_end_phase_for(Player::White));
    assert!(g.pass_would_end_phase_for(Player::Black));

    // Chinese: White's second pass ends the game but is suppressed as a friendly pass;
    // Black passing again from the same situation is a Spight-like end, never suppressed.
    let mut g = Game::new(size, Rules::chinese());
    g.play(Move::Pass).unwrap();
    assert!(g.should_suppress_friendly_pass_end());
    assert!(g.should_suppress_friendly_pass_end_for(Player::White));
    assert!(!g.should_suppress_friendly_pass_end_for(Player::Black));
}
