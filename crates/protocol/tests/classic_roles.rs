//! The classical engine's roles in the GTP engine: `tengen-level` applies only when the
//! classical engine chooses the moves.

use std::sync::Arc;

use tengen_classic::Classic;
use tengen_protocol::gtp::{parse_line, Decider, Engine, EngineConfig, Reply};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

fn engine(moves: Decider, status: Decider) -> Engine {
    let config = EngineConfig {
        visits: Some(8),
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        resign_below: None,
        moves,
        status,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    Engine::new(source, config).unwrap()
}

fn send(e: &mut Engine, line: &str) -> Reply {
    let cmd = parse_line(line).unwrap().unwrap();
    e.handle(&cmd)
}

fn classic() -> Decider {
    Decider::Classic(Arc::new(Classic::new(10, 1)))
}

#[test]
fn levels_apply_only_to_a_classical_move_source() {
    let mut searching = engine(Decider::Search, classic());
    let Reply::Failure(e) = send(&mut searching, "tengen-level 3") else {
        panic!("a search took a level");
    };
    assert!(e.starts_with("levels apply to the classical engine"), "{e}");

    let mut playing = engine(classic(), classic());
    assert_eq!(
        send(&mut playing, "tengen-level 3"),
        Reply::Success(String::new())
    );
    for bad in ["tengen-level 0", "tengen-level 11", "tengen-level x"] {
        let Reply::Failure(e) = send(&mut playing, bad) else {
            panic!("{bad} was taken");
        };
        assert_eq!(e, "tengen-level takes a level from 1 to 10");
    }
    send(&mut playing, "boardsize 9");
    let Reply::Success(mv) = send(&mut playing, "genmove b") else {
        panic!("the classical engine did not move");
    };
    assert!(!mv.is_empty());
}
