//! A fixed time a move (`--move-time`, `engine.move_time`) is searched in full, as KataGo
//! searches its `maxTime`: with no clock to bank it in, stopping once the move is decided
//! would only throw away the subtree the next move reuses. (Under a game clock the search
//! still stops once the move is decided and keeps the time: `tengen_search::timing`.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use tengen_protocol::gtp::{Command, Engine, EngineConfig, Reply};
use tengen_rules::Game;
use tengen_search::evaluator::{EvalError, NnOutput};
use tengen_search::{EvalRequest, Evaluator, SearchParams, UniformEvaluator};

/// A uniform judgement whose policy puts nearly everything on the first legal point, so
/// the move is decided after a handful of visits.
struct Obvious;

impl Evaluator for Obvious {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let mut out = (*UniformEvaluator.evaluate(game, req)?).clone();
        let legal: Vec<usize> = (0..out.policy.len())
            .filter(|&i| out.policy[i] >= 0.0)
            .collect();
        for &i in &legal {
            out.policy[i] = 0.001 / legal.len() as f32;
        }
        out.policy[legal[0]] += 0.999;
        Ok(Arc::new(out))
    }
}

fn run(e: &mut Engine, line: &str) -> Result<String, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let cmd = Command::parse(words[0], &words[1..]).expect("a command");
    match e.execute(&cmd) {
        Reply::Success(t) => Ok(t),
        Reply::Failure(t) => Err(t),
    }
}

#[test]
fn a_fixed_move_time_is_searched_in_full_even_when_the_move_is_decided() {
    let config = EngineConfig {
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        move_time: Some(0.4),
        resign_below: None,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(Obvious) as Arc<dyn Evaluator>));
    let mut e = Engine::new(source, config).expect("an engine");
    run(&mut e, "boardsize 7").unwrap();
    let started = Instant::now();
    run(&mut e, "genmove b").unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(380), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}
