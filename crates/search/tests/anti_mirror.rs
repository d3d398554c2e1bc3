//! Anti-mirror search (KataGo's `antiMirror`) against an opponent who has mirrored every
//! move: with it on, the search sees the mirror, expects the mirror reply below the root
//! and tries the centre; with it off, the same search does neither.

use std::sync::Arc;

use tengen_rules::{BoardSize, Game, Move, Rules};
use tengen_search::filter::move_index;
use tengen_search::{Limits, Mirror, Search, SearchParams, SnapshotOptions, UniformEvaluator};

/// A 19x19 game where White has answered each of Black's 16 moves with its reflection.
fn mirrored() -> Game {
    let size = BoardSize::square(19).unwrap();
    let mut g = Game::new(size, Rules::chinese());
    for text in [
        "D4", "K3", "G6", "O5", "C7", "R3", "F2", "M8", "B9", "H4", "P7", "E8", "Q2", "L6", "J9",
        "A5",
    ] {
        let mv = size.parse_move(text).unwrap();
        g.play(mv).unwrap();
        let reflected = size.area() - 1 - move_index(size, mv);
        g.play(Move::Play(size.loc_at_index(reflected).unwrap()))
            .unwrap();
    }
    g
}

/// Root visits of the centre, and the share of Black's other candidate moves whose
/// principal variation continues with White's mirror reply, after `visits` visits.
fn search(anti_mirror: bool, visits: u64) -> (u64, f64) {
    let g = mirrored();
    let size = g.board().size();
    let params = SearchParams {
        anti_mirror,
        ..SearchParams::default()
    };
    let mut s = Search::new(Arc::new(UniformEvaluator), params);
    s.set_position(&g);
    s.run(Limits::visits(visits)).unwrap();
    let a = s
        .analysis(&SnapshotOptions {
            pv_len: 2,
            ..SnapshotOptions::default()
        })
        .unwrap();
    let center = size.parse_move("K10").unwrap();
    let center_visits = a
        .moves
        .iter()
        .find(|m| m.mv == center)
        .map_or(0, |m| m.visits);
    // The centre is its own reflection: no reply can mirror it.
    let lines: Vec<_> = a
        .moves
        .iter()
        .filter(|m| m.pv.len() == 2 && m.mv != center)
        .collect();
    let mirrored = lines
        .iter()
        .filter(|m| move_index(size, m.pv[1]) == size.area() - 1 - move_index(size, m.pv[0]))
        .count();
    (center_visits, mirrored as f64 / lines.len().max(1) as f64)
}

#[test]
fn the_search_expects_the_mirror_and_tries_the_centre() {
    assert!(Mirror::detect(&mirrored()).is_some());
    let (center_on, mirrored_on) = search(true, 800);
    let (center_off, mirrored_off) = search(false, 800);
    println!("centre visits {center_on} vs {center_off}, mirror replies {mirrored_on:.2} vs {mirrored_off:.2}");
    assert!(center_on >= 48, "{center_on}");
    assert!(
        center_on > 4 * center_off.max(1),
        "{center_on} vs {center_off}"
    );
    assert!(mirrored_on > 0.9, "{mirrored_on}");
    assert!(mirrored_off < 0.5, "{mirrored_off}");
}
