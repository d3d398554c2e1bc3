//! The batching evaluator on a small random-weight graph: many threads at once get the
//! same answers as one at a time, batches fill up, the cache answers repeats and can be
//! cleared, symmetries are undone on the outputs, and bad requests are errors.

use std::sync::Arc;
use std::time::Duration;

use tengen_nn::backend::synthetic::SyntheticNet;
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::Backend;
use tengen_nn::contract::meta::ModelMetadata;
use tengen_nn::eval::{EvalError, EvalOptions, Evaluator, EvaluatorConfig, SymmetryChoice};
use tengen_nn::features::Symmetry;
use tengen_nn::onnx::load::LoadedModel;
use tengen_nn::postprocess::NnOutput;
use tengen_rules::{BoardSize, Game, Move, Player, Rules};

fn evaluator(x: u32, y: u32, config: EvaluatorConfig) -> Evaluator {
    let meta = ModelMetadata::for_version("eval-test", 8, x, y).unwrap();
    let proto = SyntheticNet::tiny(7).build(&meta);
    let model = LoadedModel::from_proto(proto).unwrap();
    let backend = TractBackend::new(
        &model,
        TractOptions {
            threads: 1,
            ..TractOptions::default()
        },
    )
    .unwrap();
    Evaluator::new(
        Arc::new(backend) as Arc<dyn Backend>,
        model.metadata,
        config,
    )
    .unwrap()
}

/// A few distinct positions on a 7x7 board.
fn games() -> Vec<Game> {
    let size = BoardSize::square(7).unwrap();
    let lines: [&[&str]; 5] = [
        &[],
        &["D4"],
        &["D4", "C3", "E5"],
        &["C3", "E5", "pass", "B6", "F2"],
        &["A1", "G7", "B2", "F6", "C3", "E5", "D4"],
    ];
    lines
        .iter()
        .map(|moves| {
            let mut g = Game::new(size, Rules::chinese());
            for m in *moves {
                g.play(size.parse_move(m).unwrap()).unwrap();
            }
            g
        })
        .collect()
}

fn close(a: &NnOutput, b: &NnOutput) {
    let d = |x: f32, y: f32| (x - y).abs();
    assert_eq!(a.policy.len(), b.policy.len());
    for (x, y) in a.policy.iter().zip(&b.policy) {
        assert!(d(*x, *y) < 1e-5, "policy {x} vs {y}");
    }
    assert!(d(a.white_win, b.white_win) < 1e-5);
    assert!(d(a.white_lead, b.white_lead) < 1e-4);
    for (x, y) in a
        .white_ownership
        .as_ref()
        .unwrap()
        .iter()
        .zip(b.white_ownership.as_ref().unwrap())
    {
        assert!(d(*x, *y) < 1e-5, "ownership {x} vs {y}");
    }
}

#[test]
fn concurrent_requests_batch_and_match_single_requests() {
    let games = games();
    let opts = EvalOptions::default();
    let single = evaluator(
        7,
        7,
        EvaluatorConfig {
            max_batch: 1,
            cache_entries: 0,
            ..Default::default()
        },
    );
    let expected: Vec<Arc<NnOutput>> = games
        .iter()
        .map(|g| single.evaluate(g, &opts).unwrap())
        .collect();

    let batched = evaluator(
        7,
        7,
        EvaluatorConfig {
            max_batch: 8,
            max_wait: Duration::from_millis(50),
            cache_entries: 0,
            ..Default::default()
        },
    );
    std::thread::scope(|s| {
        for t in 0..8 {
            let (batched, games, expected) = (&batched, &games, &expected);
            s.spawn(move || {
                for round in 0..3 {
                    let i = (t + round) % games.len();
                    let out = batched
                        .evaluate(&games[i], &EvalOptions::default())
                        .unwrap();
                    close(&out, &expected[i]);
                }
            });
        }
    });
    let stats = batched.stats();
    assert_eq!(stats.evaluated, 24);
    assert!(
        stats.batches < 24,
        "8 threads should share batches: {stats:?}"
    );
    // The policy is a distribution over legal moves: the occupied D4 is illegal.
    let g = &games[1];
    let d4 = g.board().size().parse_move("D4").unwrap();
    assert_eq!(expected[1].policy_of(g.board().size(), d4), None);
}

#[test]
fn cache_answers_repeats_until_cleared() {
    let ev = evaluator(7, 7, EvaluatorConfig::default());
    let g = &games()[2];
    let a = ev.evaluate(g, &EvalOptions::default()).unwrap();
    let b = ev.evaluate(g, &EvalOptions::default()).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(ev.stats().cache_hits, 1);
    // Other options are another entry.
    let no_own = EvalOptions {
        ownership: false,
        ..EvalOptions::default()
    };
    let c = ev.evaluate(g, &no_own).unwrap();
    assert!(c.white_ownership.is_none());
    ev.clear_cache();
    let d = ev.evaluate(g, &EvalOptions::default()).unwrap();
    assert!(!Arc::ptr_eq(&a, &d));
    close(&a, &d);
    assert_eq!(ev.stats().evaluated, 3);
}

#[test]
fn symmetries_are_undone_on_the_outputs() {
    // Evaluating a position under symmetry s must equal evaluating the transformed position
    // under the identity, mapped back: the net sees the same input either way.
    let ev = evaluator(
        7,
        7,
        EvaluatorConfig {
            cache_entries: 0,
            ..Default::default()
        },
    );
    let size = BoardSize::square(7).unwrap();
    let moves = ["C3", "E5", "B6", "F2", "D4"];
    for s in Symmetry::ALL {
        let mut g = Game::new(size, Rules::chinese());
        let mut t = Game::new(size, Rules::chinese());
        for m in moves {
            let mv = size.parse_move(m).unwrap();
            g.play(mv).unwrap();
            t.play(s.map_move(size, mv).unwrap()).unwrap();
        }
        let with_sym = EvalOptions {
            symmetry: SymmetryChoice::Fixed(s),
            ..EvalOptions::default()
        };
        let a = ev.evaluate(&g, &with_sym).unwrap();
        let b = ev.evaluate(&t, &EvalOptions::default()).unwrap();
        for l in size.points() {
            let i = size.index_of(l);
            let j = size.index_of(s.map_loc(size, l).unwrap());
            assert!(
                (a.policy[i] - b.policy[j]).abs() < 1e-5,
                "symmetry {}",
                s.number()
            );
            let (oa, ob) = (
                a.white_ownership.as_ref().unwrap(),
                b.white_ownership.as_ref().unwrap(),
            );
            assert!((oa[i] - ob[j]).abs() < 1e-5);
        }
        assert!((a.policy[size.area()] - b.policy[size.area()]).abs() < 1e-5);
        assert!((a.white_win - b.white_win).abs() < 1e-5);
    }
    // Random symmetries are answered too.
    let random = EvalOptions {
        symmetry: SymmetryChoice::Random,
        ..EvalOptions::default()
    };
    let mut g = Game::new(size, Rules::chinese());
    g.play(Move::Pass).unwrap();
    assert_eq!(g.to_move(), Player::White);
    assert!(ev.evaluate(&g, &random).is_ok());
}

#[test]
fn bad_requests_are_errors() {
    // A board larger than the buffer.
    let ev = evaluator(7, 7, EvaluatorConfig::default());
    let big = Game::new(BoardSize::square(9).unwrap(), Rules::chinese());
    assert!(matches!(
        ev.evaluate(&big, &EvalOptions::default()),
        Err(EvalError::Features(_))
    ));
    // A transposing symmetry on a non-square buffer.
    let rect = evaluator(7, 5, EvaluatorConfig::default());
    let g = Game::new(BoardSize::new(7, 5).unwrap(), Rules::chinese());
    let transpose = EvalOptions {
        symmetry: SymmetryChoice::Fixed(Symmetry::new(4).unwrap()),
        ..EvalOptions::default()
    };
    assert!(matches!(
        rect.evaluate(&g, &transpose),
        Err(EvalError::Symmetry(4, 7, 5))
    ));
    // A smaller board in a bigger buffer is fine, and so are the non-transposing symmetries.
    let small = Game::new(BoardSize::square(5).unwrap(), Rules::chinese());
    assert!(ev.evaluate(&small, &EvalOptions::default()).is_ok());
    let flip = EvalOptions {
        symmetry: SymmetryChoice::Fixed(Symmetry::new(3).unwrap()),
        ..EvalOptions::default()
    };
    assert!(rect.evaluate(&g, &flip).is_ok());
}
