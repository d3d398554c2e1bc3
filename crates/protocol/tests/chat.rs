//! The search summary for bot bridges (KataGo's `ogsChatToStderr`): kept after each move a
//! search chooses when the configuration asks for it, never otherwise.

use std::sync::Arc;

use tengen_protocol::gtp::{Command, Engine, EngineConfig, Reply};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

fn engine(chat: bool) -> Engine {
    let config = EngineConfig {
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        visits: Some(24),
        resign_below: None,
        ogs_chat_to_stderr: chat,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    Engine::new(source, config).expect("an engine")
}

fn run(e: &mut Engine, line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let cmd = Command::parse(words[0], &words[1..]).expect("a command");
    match e.execute(&cmd) {
        Reply::Success(t) => t,
        Reply::Failure(t) => panic!("{line}: {t}"),
    }
}

#[test]
fn each_chosen_move_leaves_one_summary_that_starts_with_it() {
    let mut e = engine(true);
    run(&mut e, "boardsize 7");
    assert!(e.take_chat().is_none(), "no move chosen yet");
    for search in ["genmove b", "kata-search w", "kata-search_cancellable w"] {
        let mv = run(&mut e, search);
        let chat = e.take_chat().expect("a summary");
        assert_eq!(chat.pv.first(), Some(&mv), "{search}: {chat}");
        assert!(chat.visits >= 24, "{chat}");
        assert!((0.0..=1.0).contains(&chat.winrate), "{chat}");
        let line = chat.to_string();
        assert!(
            line.starts_with(&format!("MALKOVICH:Visits {} Winrate ", chat.visits)),
            "{line}"
        );
        assert!(line.contains(&format!(" PV {mv}")), "{line}");
        assert!(e.take_chat().is_none(), "taken once");
    }
    run(&mut e, "showboard");
    assert!(e.take_chat().is_none(), "only a search's move leaves one");
}

#[test]
fn winrate_and_lead_are_the_movers() {
    // The same position searched for each colour: one's view is the other's mirrored.
    let mut e = engine(true);
    run(&mut e, "boardsize 5");
    run(&mut e, "set_position b B2 b C2 b D2 b B3 b C3 b D3");
    run(&mut e, "kata-search b");
    let black = e.take_chat().expect("a summary");
    run(&mut e, "kata-search w");
    let white = e.take_chat().expect("a summary");
    // Black owns most of the board: good for Black, bad for White.
    assert!(black.score_lead > 0.0 && black.winrate > 0.5, "{black}");
    assert!(white.score_lead < 0.0 && white.winrate < 0.5, "{white}");
}

#[test]
fn a_playout_doubling_advantage_is_shown_as_the_movers() {
    let mut e = engine(true);
    run(&mut e, "boardsize 7");
    run(&mut e, "genmove b");
    assert_eq!(
        e.take_chat().expect("a summary").playout_doubling_advantage,
        None
    );
    run(&mut e, "kata-set-param playoutDoublingAdvantage 1.5");
    run(&mut e, "kata-set-param playoutDoublingAdvantagePla WHITE");
    run(&mut e, "genmove w");
    let white = e.take_chat().expect("a summary");
    assert_eq!(white.playout_doubling_advantage, Some(1.5));
    assert!(white.to_string().contains(" (PDA 1.50) PV "), "{white}");
    run(&mut e, "genmove b");
    let black = e.take_chat().expect("a summary");
    assert_eq!(black.playout_doubling_advantage, Some(-1.5), "{black}");
}

#[test]
fn off_by_default() {
    let mut e = engine(false);
    run(&mut e, "boardsize 7");
    run(&mut e, "genmove b");
    assert!(e.take_chat().is_none());
    assert!(!EngineConfig::default().ogs_chat_to_stderr);
}
