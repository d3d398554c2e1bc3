//! Reconciling a physical board with the game: moves read off snapshots, late lifts,
//! hands over the board, two moves at once, knocked stones, setups.

use tengen_device::{Cell, Fix, Reconciler, Snapshot, SnapshotError, Verdict};
use tengen_rules::{BoardSize, Game, Loc, Move, Player, Rules};

const B: Player = Player::Black;
const W: Player = Player::White;

fn size() -> BoardSize {
    BoardSize::square(9).unwrap()
}

fn at(gtp: &str) -> Loc {
    size().parse_loc(gtp).unwrap()
}

fn game(moves: &[&str]) -> Game {
    let mut g = Game::new(size(), Rules::chinese());
    for m in moves {
        g.play(size().parse_move(m).unwrap()).unwrap();
    }
    g
}

/// The game's board as a sensor would see it, changed at some points.
fn seen(g: &Game, changes: &[(&str, Cell)]) -> Snapshot {
    let mut s = Snapshot::of_board(g.board());
    for &(p, c) in changes {
        s.set(at(p), c);
    }
    s
}

fn apply(g: &mut Game, v: &Verdict) {
    if let Verdict::Moves { moves, .. } = v {
        for &(p, l) in moves {
            assert_eq!(g.to_move(), p);
            g.play(Move::Play(l)).unwrap();
        }
    }
}

#[test]
fn a_move_counts_once_the_snapshot_is_stable() {
    let g = game(&[]);
    let mut r = Reconciler::new(3);
    // A stone being placed flickers first.
    let flicker = seen(&g, &[("E5", Cell::Unknown)]);
    assert_eq!(r.observe(&g, flicker).unwrap(), None);
    let s = seen(&g, &[("E5", Cell::Stone(B))]);
    assert_eq!(r.observe(&g, s.clone()).unwrap(), None);
    assert_eq!(r.observe(&g, s.clone()).unwrap(), None);
    let v = r
        .observe(&g, s.clone())
        .unwrap()
        .expect("stable after three");
    assert_eq!(
        v,
        Verdict::Moves {
            moves: vec![(B, at("E5"))],
            captured: vec![],
            unlifted: vec![],
        }
    );
    // Judged once: the same snapshot again says nothing more.
    assert_eq!(r.observe(&g, s).unwrap(), None);
}

#[test]
fn captures_may_be_lifted_a_move_late() {
    // Black A2, White A1: Black's B1 captures A1.
    let mut g = game(&["A2", "A1"]);
    let mut r = Reconciler::new(1);
    // Black plays B1, capturing A1; the white stone stays on the board for now.
    let s = seen(&g, &[("B1", Cell::Stone(B))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Moves {
            moves: vec![(B, at("B1"))],
            captured: vec![at("A1")],
            unlifted: vec![at("A1")],
        }
    );
    apply(&mut g, &v);
    // White answers at E5 while the captured stone is still there.
    let s = seen(&g, &[("A1", Cell::Stone(W)), ("E5", Cell::Stone(W))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Moves {
            moves: vec![(W, at("E5"))],
            captured: vec![],
            unlifted: vec![at("A1")],
        }
    );
    apply(&mut g, &v);
    // Finally lifted: in sync with nothing pending.
    let v = r.observe(&g, seen(&g, &[])).unwrap().unwrap();
    assert_eq!(v, Verdict::InSync { unlifted: vec![] });
    // A white stone put back there now is an error to fix, no longer a late lift.
    let v = r
        .observe(&g, seen(&g, &[("A1", Cell::Stone(W))]))
        .unwrap()
        .unwrap();
    assert_eq!(
        v,
        Verdict::Mismatch {
            fixes: vec![Fix {
                loc: at("A1"),
                want: None,
                seen: Cell::Stone(W),
            }],
            assuming: vec![],
        }
    );
}

#[test]
fn a_hand_over_the_board_waits_or_is_seen_past() {
    let g = game(&["E5"]);
    let mut r = Reconciler::new(1);
    let hand = ["C3", "C4", "D3", "D4", "E3"];
    let mut changes: Vec<(&str, Cell)> = hand.iter().map(|&p| (p, Cell::Unknown)).collect();
    // Whatever is under the hand, what is visible matches the game.
    let v = r.observe(&g, seen(&g, &changes)).unwrap().unwrap();
    assert_eq!(v, Verdict::InSync { unlifted: vec![] });
    // A visible change that no move explains, with points hidden: a capture may be
    // under the hand, so wait rather than alert.
    let mut gone = changes.clone();
    gone.push(("E5", Cell::Empty));
    let v = r.observe(&g, seen(&g, &gone)).unwrap().unwrap();
    assert_eq!(v, Verdict::Waiting);
    // A new stone visible beside the hand: accepted.
    changes.push(("F4", Cell::Stone(W)));
    let v = r.observe(&g, seen(&g, &changes)).unwrap().unwrap();
    assert!(
        matches!(&v, Verdict::Moves { moves, .. } if moves == &vec![(W, at("F4"))]),
        "{v:?}"
    );
}

#[test]
fn two_moves_at_once_in_the_only_legal_order() {
    let mut g = game(&["E5", "C3"]);
    let mut r = Reconciler::new(1);
    let s = seen(&g, &[("G5", Cell::Stone(B)), ("C7", Cell::Stone(W))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Moves {
            moves: vec![(B, at("G5")), (W, at("C7"))],
            captured: vec![],
            unlifted: vec![],
        }
    );
    apply(&mut g, &v);
    assert_eq!(g.to_move(), B);
    // Two stones of the mover's colour cannot both be moves: the closest reading keeps
    // one as the move and asks for the other to go.
    let s = seen(&g, &[("D6", Cell::Stone(B)), ("F6", Cell::Stone(B))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    let Verdict::Mismatch { fixes, assuming } = v else {
        panic!("{v:?}")
    };
    assert_eq!(assuming.len(), 1);
    assert_eq!(fixes.len(), 1);
    assert_eq!(fixes[0].want, None);
    assert_ne!(fixes[0].loc, assuming[0].1);
}

#[test]
fn knocked_and_wrong_stones_get_exact_fixes() {
    let g = game(&["E5", "C3", "G7"]);
    let mut r = Reconciler::new(1);
    // Black's E5 knocked to E6 while White is to move: put E5 back, take E6 away.
    let s = seen(&g, &[("E5", Cell::Empty), ("E6", Cell::Stone(B))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Mismatch {
            fixes: vec![
                Fix {
                    loc: at("E6"),
                    want: None,
                    seen: Cell::Stone(B),
                },
                Fix {
                    loc: at("E5"),
                    want: Some(B),
                    seen: Cell::Empty,
                },
            ],
            assuming: vec![],
        }
    );
    // A stone of the wrong colour.
    let s = seen(&g, &[("C3", Cell::Stone(B))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Mismatch {
            fixes: vec![Fix {
                loc: at("C3"),
                want: Some(W),
                seen: Cell::Stone(B),
            }],
            assuming: vec![],
        }
    );
    // A removed stone, with White's move played meanwhile: the move counts, the fix stays.
    let s = seen(&g, &[("G7", Cell::Empty), ("D4", Cell::Stone(W))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert_eq!(
        v,
        Verdict::Mismatch {
            fixes: vec![Fix {
                loc: at("G7"),
                want: Some(B),
                seen: Cell::Empty,
            }],
            assuming: vec![(W, at("D4"))],
        }
    );
}

#[test]
fn handicap_and_free_setup_before_the_first_move() {
    let g = game(&[]);
    let mut r = Reconciler::new(1);
    let s = seen(
        &g,
        &[
            ("C3", Cell::Stone(B)),
            ("G7", Cell::Stone(B)),
            ("C7", Cell::Stone(B)),
        ],
    );
    let v = r.observe(&g, s).unwrap().unwrap();
    let Verdict::Setup { stones } = v else {
        panic!("{v:?}")
    };
    assert_eq!(stones.len(), 3);
    assert!(stones.iter().all(|&(p, _)| p == B));
    let s = seen(&g, &[("C3", Cell::Stone(B)), ("G7", Cell::Stone(W))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert!(
        matches!(v, Verdict::Setup { ref stones } if stones.len() == 2),
        "{v:?}"
    );
    // After the first move, several new stones are no setup.
    let g = game(&["E5"]);
    let s = seen(&g, &[("C3", Cell::Stone(B)), ("G7", Cell::Stone(B))]);
    let v = r.observe(&g, s).unwrap().unwrap();
    assert!(matches!(v, Verdict::Mismatch { .. }), "{v:?}");
}

#[test]
fn snapshots_of_the_wrong_size_or_with_junk_are_errors() {
    let g = game(&[]);
    let mut r = Reconciler::new(1);
    let small = Snapshot::parse(BoardSize::square(5).unwrap(), &".".repeat(25)).unwrap();
    assert!(matches!(
        r.observe(&g, small),
        Err(SnapshotError::WrongSize { .. })
    ));
    assert_eq!(
        Snapshot::parse(size(), &format!("{}Z", ".".repeat(80))),
        Err(SnapshotError::BadChar('Z'))
    );
    assert!(matches!(
        Snapshot::parse(size(), "...."),
        Err(SnapshotError::WrongSize { got: 4, .. })
    ));
    let parsed = Snapshot::parse(size(), &format!("X?O{}", ".".repeat(78))).unwrap();
    assert_eq!(parsed.at(at("A9")), Cell::Stone(B));
    assert_eq!(parsed.at(at("B9")), Cell::Unknown);
    assert_eq!(parsed.at(at("C9")), Cell::Stone(W));
}
