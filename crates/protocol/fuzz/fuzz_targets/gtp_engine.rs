//! Fuzzes GTP input end to end: bytes become lines, lines become commands
//! (`parse_line`), and commands run on an engine with the uniform evaluator and a tiny
//! visit budget. Nothing may panic; every command gets a reply. `loadsgf` is skipped
//! (it would read files named by the fuzzer).

#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use tengen_protocol::gtp::{parse_line, Engine, EngineConfig, Reply};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let config = EngineConfig {
        visits: Some(4),
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    let mut engine = Engine::new(source, config).expect("the uniform evaluator never fails");
    for line in text.lines().take(64) {
        let Some(Ok(cmd)) = parse_line(line) else {
            continue;
        };
        if cmd.name == "loadsgf" || cmd.name.ends_with("analyze") {
            continue;
        }
        match engine.handle(&cmd) {
            Reply::Success(t) | Reply::Failure(t) => {
                let _ = Reply::Success(t).format(cmd.id);
            }
        }
        if engine.quit_requested() {
            break;
        }
    }
});
