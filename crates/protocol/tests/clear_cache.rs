//! `clear_cache` forgets the search tree as well as cached evaluations, as KataGo's does,
//! so that the next search starts afresh; the game is untouched.

use std::sync::Arc;

use tengen_protocol::gtp::{Command, Engine, EngineConfig, Reply};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

fn run(e: &mut Engine, line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let cmd = Command::parse(words[0], &words[1..]).expect("a command");
    match e.execute(&cmd) {
        Reply::Success(t) => t,
        Reply::Failure(t) => panic!("{line}: {t}"),
    }
}

#[test]
fn clear_cache_forgets_the_tree_and_keeps_the_game() {
    let config = EngineConfig {
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        visits: Some(16),
        resign_below: None,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    let mut e = Engine::new(source, config).expect("an engine");
    run(&mut e, "boardsize 7");
    run(&mut e, "kata-search b");
    let visits = |e: &Engine| e.analysis(false).map_or(0, |a| a.root.visits);
    assert!(visits(&e) >= 16, "the search's tree is there");
    run(&mut e, "clear_cache");
    assert_eq!(visits(&e), 0, "the tree is gone");
    assert!(e.game().turns().is_empty());
    assert!(!run(&mut e, "genmove b").is_empty());
}
