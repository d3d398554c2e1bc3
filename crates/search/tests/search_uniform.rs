//! The search on the network-free uniform evaluator: limits are honoured exactly, statistics
//! add up, threads share one tree, snapshots work while searching, the tree is reused when
//! the game moves on, avoid lists hold, and finished games are searched as if play went on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tengen_rules::{Board, BoardSize, Game, GameOptions, Move, Player, Rules};
use tengen_search::{
    Evaluator, FilterRule, Limits, Search, SearchError, SearchParams, SnapshotOptions,
    UniformEvaluator,
};

fn game9() -> Game {
    let size = BoardSize::square(9).unwrap();
    let mut g = Game::new(size, Rules::chinese());
    for m in ["E5", "C3", "G7"] {
        g.play(size.parse_move(m).unwrap()).unwrap();
    }
    g
}

fn search(threads: usize) -> Search {
    search_with(SearchParams {
        threads,
        ..SearchParams::default()
    })
}

fn search_with(params: SearchParams) -> Search {
    Search::new(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>, params)
}

#[test]
fn visit_limit_is_exact_and_child_visits_add_up() {
    for (threads, graph) in [(1, true), (3, true), (3, false)] {
        let mut s = search_with(SearchParams {
            threads,
            use_graph_search: graph,
            ..SearchParams::default()
        });
        s.set_position(&game9());
        let stats = s.run(Limits::visits(300)).unwrap();
        assert_eq!(stats.root_visits, 300, "{threads} threads");
        let a = s.analysis(&SnapshotOptions::default()).unwrap();
        assert_eq!(a.root.visits, 300);
        let child_sum: u64 = a.moves.iter().map(|m| m.visits).sum();
        // The root's own evaluation is its one visit that no child has.
        assert_eq!(child_sum, 299);
        for (i, m) in a.moves.iter().enumerate() {
            assert_eq!(m.order, i);
            assert_eq!(m.pv[0], m.mv);
            assert_eq!(m.pv.len(), m.pv_visits.len());
            assert_eq!(m.pv.len(), m.pv_edge_visits.len());
            assert_eq!(
                (m.pv_visits[0], m.pv_edge_visits[0]),
                (m.visits, m.edge_visits)
            );
            // A node holds every visit through the edge into it, and its own evaluation is
            // one visit that no edge out of it carries. In a graph a node reached by
            // another move order may hold more visits than its parent, so only without
            // graph search do the node visits fall along the line.
            for k in 0..m.pv.len() {
                assert!(m.pv_edge_visits[k] <= m.pv_visits[k], "{m:?}");
                if k > 0 {
                    assert!(m.pv_edge_visits[k] < m.pv_visits[k - 1], "{m:?}");
                }
            }
            if !graph {
                assert_eq!(m.pv_visits, m.pv_edge_visits);
                assert!(m.pv_visits.windows(2).all(|w| w[1] < w[0]), "{m:?}");
            }
            assert!((0.0..=1.0).contains(&m.winrate));
        }
    }
}

#[test]
fn playout_and_time_limits_stop_the_search() {
    let mut s = search(2);
    s.set_position(&game9());
    let stats = s
        .run(Limits {
            playouts: Some(120),
            ..Limits::default()
        })
        .unwrap();
    assert_eq!(stats.playouts, 120);
    // As KataGo: on a fresh tree the root's evaluation is one of the N playouts...
    assert_eq!(stats.root_visits, 120);
    // ...and on a reused tree, N playouts add N visits to the root.
    let stats = s
        .run(Limits {
            playouts: Some(50),
            ..Limits::default()
        })
        .unwrap();
    assert_eq!((stats.playouts, stats.root_visits), (50, 170));

    let t = Instant::now();
    s.run(Limits {
        time: Some(Duration::from_millis(300)),
        ..Limits::default()
    })
    .unwrap();
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn a_search_stops_early_once_the_best_move_is_decided() {
    let mut s = search(1);
    s.set_position(&game9());
    let stats = s
        .run(Limits {
            visits: Some(5000),
            stop_when_decided: true,
            ..Limits::default()
        })
        .unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    let mut v: Vec<u64> = a.moves.iter().map(|m| m.visits).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    let left = 5000 - stats.root_visits;
    assert!(stats.root_visits < 5000, "never stopped early");
    assert!(
        v[1] + left < v[0],
        "stopped while the second move could still catch up"
    );
}

#[test]
fn snapshots_are_taken_while_the_search_runs() {
    let mut s = search(2);
    s.set_position(&game9());
    s.start(Limits::default()).unwrap();
    let mut last = 0;
    let mut grew = 0;
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(20));
        let a = s.analysis(&SnapshotOptions::default()).unwrap();
        if a.root.visits > last {
            grew += 1;
        }
        last = a.root.visits;
    }
    assert!(s.is_running());
    s.stop();
    assert!(!s.is_running());
    assert!(grew >= 10, "visits grew in only {grew} of 20 snapshots");
}

#[test]
fn tree_is_reused_when_the_game_continues_and_dropped_otherwise() {
    let mut s = search(1);
    let g = game9();
    s.set_position(&g);
    s.run(Limits::visits(400)).unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    let best = a.moves[0].clone();

    let mut next = g.clone();
    next.play(best.mv).unwrap();
    s.set_position(&next);
    let kept = s.stats().root_visits;
    assert_eq!(
        kept, best.visits,
        "the chosen move's subtree becomes the root"
    );
    s.run(Limits::visits(kept + 50)).unwrap();
    assert_eq!(s.stats().root_visits, kept + 50);

    // A different game (undo) cannot reuse anything.
    s.set_position(&g);
    assert_eq!(s.stats().root_visits, 0);

    // Nor can the same board with the other player to move.
    s.run(Limits::visits(100)).unwrap();
    s.set_position(&g);
    assert_eq!(
        s.stats().root_visits,
        100,
        "the same position keeps its tree"
    );
    let mut other = g.clone();
    other.set_player_to_move(g.to_move().opp());
    s.set_position(&other);
    assert_eq!(s.stats().root_visits, 0);
}

#[test]
fn avoided_moves_are_never_searched_at_the_root() {
    let size = BoardSize::square(9).unwrap();
    let mut s = search(1);
    let g = game9();
    let avoid: Vec<Move> = ["D4", "E4", "F4", "D6", "E6", "F6", "pass"]
        .iter()
        .map(|m| size.parse_move(m).unwrap())
        .collect();
    s.set_filter(vec![FilterRule {
        player: g.to_move(),
        moves: avoid.clone(),
        until_depth: 1,
        allow: false,
    }]);
    s.set_position(&g);
    s.run(Limits::visits(500)).unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    assert!(!a.moves.is_empty());
    for m in &a.moves {
        assert!(!avoid.contains(&m.mv), "{:?} was searched", m.mv);
    }

    // An allow list of two points leaves only those (and passing).
    let allow: Vec<Move> = ["A1", "J9"]
        .iter()
        .map(|m| size.parse_move(m).unwrap())
        .collect();
    s.set_filter(vec![FilterRule {
        player: g.to_move(),
        moves: allow.clone(),
        until_depth: 1,
        allow: true,
    }]);
    s.run(Limits::visits(200)).unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    for m in &a.moves {
        assert!(
            allow.contains(&m.mv) || m.mv == Move::Pass,
            "{:?} was searched",
            m.mv
        );
    }
}

#[test]
fn ownership_is_tracked_when_asked_for() {
    let params = SearchParams {
        ownership: true,
        ..SearchParams::default()
    };
    let mut s = Search::new(Arc::new(UniformEvaluator), params);
    s.set_position(&game9());
    s.run(Limits::visits(200)).unwrap();
    let a = s
        .analysis(&SnapshotOptions {
            ownership: true,
            moves_ownership: true,
            ..SnapshotOptions::default()
        })
        .unwrap();
    let own = a.ownership.expect("ownership");
    let sd = a.ownership_stdev.expect("ownership stdev");
    assert_eq!(own.len(), 81);
    assert!(own.iter().all(|x| (-1.0..=1.0).contains(x)));
    assert!(sd.iter().all(|x| (0.0..=1.0).contains(x)));
    assert!(a.moves[0].ownership.as_ref().is_some_and(|o| o.len() == 81));
}

#[test]
fn a_missing_position_is_an_error() {
    let mut s = search(1);
    assert!(matches!(
        s.run(Limits::visits(10)),
        Err(SearchError::NoPosition)
    ));
}

/// Black to move on 7x7 with White's four stones in atari at D2.
fn capture_position() -> Game {
    let size = BoardSize::square(7).unwrap();
    let board = Board::from_rows(
        size,
        &[
            ".......", ".......", ".......", "XXXXX..", "OOOOX..", "XXX....", ".......",
        ],
    )
    .unwrap();
    Game::from_position(
        board,
        Player::Black,
        Rules::chinese(),
        GameOptions::default(),
    )
}

/// Searches `g` for 600 visits and plays the best move on a copy.
fn best_reply(g: &Game) -> (Move, Game) {
    let mut s = search(1);
    s.set_position(g);
    let stats = s.run(Limits::visits(600)).unwrap();
    assert_eq!(stats.root_visits, 600);
    let best = s
        .analysis(&SnapshotOptions::default())
        .unwrap()
        .best_move()
        .unwrap();
    let mut after = g.clone();
    after.play(best).unwrap();
    (best, after)
}

#[test]
fn a_finished_game_is_searched_as_if_play_went_on() {
    // Both pass with White's stones still in atari: a GTP client that plays on (KGS's
    // cleanup) asks for a move, and the search must still find the capture.
    let mut g = capture_position();
    g.play(Move::Pass).unwrap();
    g.play(Move::Pass).unwrap();
    assert!(g.is_over());
    let (best, after) = best_reply(&g);
    assert!(!after.is_over(), "{best:?} should reopen the game");
    assert_eq!(
        after.board().num_stones(Player::White),
        0,
        "played {best:?}"
    );
}

#[test]
fn the_uniform_evaluator_finds_a_capture_of_many_stones() {
    // Taking the four stones outweighs anything else on a small board, even for a
    // one-ply area count.
    let g = capture_position();
    let size = g.board().size();
    let (best, after) = best_reply(&g);
    assert_eq!(
        after.board().num_stones(Player::White),
        0,
        "played {} instead of capturing",
        size.gtp(best)
    );
}

#[test]
fn pondering_on_the_opponents_time_carries_over_to_their_reply() {
    let mut s = search(2);
    let g = game9();
    s.set_position(&g);
    // Ponder with no limit, as a GTP engine does after its own move.
    s.start(Limits::default()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    let reply = a.moves[0].mv;
    let mut next = g.clone();
    next.play(reply).unwrap();
    // The opponent's move stops pondering and keeps what was searched below it.
    s.set_position(&next);
    assert!(!s.is_running());
    assert!(
        s.stats().root_visits >= 1,
        "the reply's subtree was dropped"
    );
}

#[test]
fn forced_playouts_are_pruned_from_the_policy_target() {
    let params = SearchParams {
        forced_playouts_k: 2.0,
        root_noise: true,
        ..SearchParams::default()
    };
    let mut s = Search::new(Arc::new(UniformEvaluator), params);
    s.set_position(&game9());
    s.run(Limits::visits(600)).unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    let target = s.policy_target().unwrap();
    let total: f64 = target.iter().map(|p| p.1).sum();
    assert!((total - 1.0).abs() < 1e-9);
    let visits: u64 = a.moves.iter().map(|m| m.visits).sum();
    let most = a.moves.iter().max_by_key(|m| m.visits).unwrap();
    let share = |mv: Move| target.iter().find(|p| p.0 == mv).map_or(0.0, |p| p.1);
    // The most visited move gains share; no other move gains on it.
    assert!(share(most.mv) >= most.visits as f64 / visits as f64 - 1e-12);
    let mut pruned = 0;
    for m in &a.moves {
        let before = m.visits as f64 / most.visits as f64;
        assert!(share(m.mv) / share(most.mv) <= before + 1e-12);
        if share(m.mv) / share(most.mv) < before - 1e-9 {
            pruned += 1;
        }
    }
    assert!(pruned > 0, "no forced playout was taken back");
}

#[test]
fn transpositions_share_nodes_and_save_evaluations() {
    let run = |graph: bool| {
        let params = SearchParams {
            use_graph_search: graph,
            ..SearchParams::default()
        };
        let mut s = Search::new(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>, params);
        // A small board, where a uniform policy meets transpositions within a few plies.
        s.set_position(&Game::new(BoardSize::square(5).unwrap(), Rules::chinese()));
        let stats = s.run(Limits::visits(3000)).unwrap();
        let a = s.analysis(&SnapshotOptions::default()).unwrap();
        // The root's visits are its own and its edges', whatever lies below them.
        let edges: u64 = a.moves.iter().map(|m| m.edge_visits).sum();
        assert_eq!(a.root.visits, edges + 1);
        assert!(a.moves.iter().all(|m| m.visits >= m.edge_visits));
        stats
    };
    let tree = run(false);
    let graph = run(true);
    assert_eq!((tree.root_visits, graph.root_visits), (3000, 3000));
    // Without sharing, every playout but those ending in a finished game evaluates a node.
    assert!(
        tree.evaluations as f64 > 0.9 * tree.playouts as f64,
        "{tree:?}"
    );
    // With it, move orders that meet (two moves by each side in either order) are searched
    // once: fewer evaluations and fewer nodes for the same visits.
    assert!(
        (graph.evaluations as f64) < 0.95 * tree.evaluations as f64,
        "{graph:?} vs {tree:?}"
    );
    assert!(graph.nodes < tree.nodes);
}
