//! The appliance without a broker: inputs in, outbox and journal checked.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tengen_device::appliance::{Appliance, GameSettings, Out, Settings};
use tengen_device::payload::{EngineSide, State};
use tengen_protocol::gtp::{Engine, EngineConfig, Reply};
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

fn engine() -> Engine {
    let config = EngineConfig {
        visits: Some(8),
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        resign_below: None,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    Engine::new(source, config).unwrap()
}

fn open(dir: &Path, side: EngineSide) -> Appliance {
    let settings = Settings {
        game: GameSettings {
            size: tengen_rules::BoardSize::square(9).unwrap(),
            komi: 7.0,
            engine: side,
            ..GameSettings::default()
        },
        window: 1,
        ..Settings::default()
    };
    Appliance::open(engine(), dir, settings).unwrap()
}

fn last(out: &[Out], topic: &str) -> Option<serde_json::Value> {
    out.iter()
        .rev()
        .find(|o| o.topic == topic)
        .map(|o| serde_json::from_str(&o.payload).unwrap())
}

fn state(out: &[Out]) -> State {
    serde_json::from_value(last(out, "state").expect("a state message")).unwrap()
}

fn ok(r: Reply) -> String {
    match r {
        Reply::Success(t) => t,
        Reply::Failure(e) => panic!("GTP failed: {e}"),
    }
}

#[test]
fn a_reopened_journal_resumes_the_same_game() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut app = open(dir.path(), EngineSide::None);
        let first = app.take_outbox();
        assert!(state(&first).moves.is_empty());
        assert_eq!(state(&first).size, [9, 9]);
        ok(app.gtp("play B E5"));
        ok(app.gtp("play W C3"));
        ok(app.gtp("undo"));
        ok(app.gtp("play W G7"));
        assert!(matches!(app.gtp("play W G7"), Reply::Failure(_)));
    }
    let mut app = open(dir.path(), EngineSide::None);
    let s = state(&app.take_outbox());
    assert_eq!(s.moves, ["B E5", "W G7"]);
    assert_eq!(s.to_move, "B");
    assert_eq!(s.komi, 7.0);
}

#[test]
fn the_engine_answers_a_stone_on_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(dir.path(), EngineSide::White);
    app.take_outbox();
    let mut rows = vec![".........".to_string(); 9];
    rows[4] = "....X....".into();
    app.on_snapshot(rows.join("\n").as_bytes());
    app.tick(Instant::now());
    let out = app.take_outbox();
    let mv = last(&out, "move").expect("the engine moved");
    assert_eq!(mv["color"], "W");
    assert_eq!(mv["number"], 2);
    let s = state(&out);
    assert_eq!(s.moves.len(), 2);
    assert_eq!(s.moves[1], format!("W {}", mv["vertex"].as_str().unwrap()));
    // Undo goes back to the player's turn, past the engine's reply.
    app.on_command(br#"{"cmd":"undo"}"#);
    let s = state(&app.take_outbox());
    assert!(s.moves.is_empty(), "{:?}", s.moves);
}

#[test]
fn a_finished_game_is_archived_once_and_a_cleared_board_starts_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(dir.path(), EngineSide::None);
    ok(app.gtp("play B E5"));
    app.on_command(br#"{"cmd":"resign"}"#);
    let s = state(&app.take_outbox());
    assert_eq!(s.result.as_deref(), Some("B+R"), "White, to move, resigned");
    // Further settings do not archive it again.
    app.on_command(br#"{"cmd":"analysis","on":false}"#);
    let games: Vec<_> = std::fs::read_dir(dir.path().join("games"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(games.len(), 1, "{games:?}");
    let sgf = std::fs::read_to_string(&games[0]).unwrap();
    assert!(sgf.contains("RE[B+R]") && sgf.contains(";B[ee]"), "{sgf}");
    // A restart now begins the next game rather than the finished one.
    drop(app);
    let mut app = open(dir.path(), EngineSide::None);
    let s = state(&app.take_outbox());
    assert!(s.moves.is_empty() && s.result.is_none());
    // And on a live daemon, clearing the board does the same.
    ok(app.gtp("play B E5"));
    app.on_command(br#"{"cmd":"resign"}"#);
    app.take_outbox();
    app.on_snapshot(vec![".........".to_string(); 9].join("\n").as_bytes());
    let s = state(&app.take_outbox());
    assert!(s.moves.is_empty() && s.result.is_none());
}

#[test]
fn moves_after_the_end_wait_for_the_next_game() {
    // The GTP engine would reopen a finished game, but the appliance has archived it.
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(dir.path(), EngineSide::None);
    ok(app.gtp("play B E5"));
    ok(app.gtp("play W pass"));
    ok(app.gtp("play B pass"));
    let s = state(&app.take_outbox());
    assert!(s.result.is_some(), "two passes end the game");
    for line in ["play W C3", "genmove W", "kgs-genmove_cleanup W", "undo"] {
        match app.gtp(line) {
            Reply::Failure(e) => assert!(e.contains("the game is over"), "{line}: {e}"),
            Reply::Success(t) => panic!("{line} was accepted after the end: {t}"),
        }
    }
    app.take_outbox();
    app.on_command(br#"{"cmd":"undo"}"#);
    let out = app.take_outbox();
    assert!(
        last(&out, "alert").is_some(),
        "an undo command after the end is refused"
    );
    app.on_command(br#"{"cmd":"analysis","on":false}"#);
    let s = state(&app.take_outbox());
    assert_eq!(s.moves, ["B E5", "W pass", "B pass"]);
    assert!(s.result.is_some());
    // A restart begins the next game: nothing was journalled onto its setup.
    drop(app);
    let mut app = open(dir.path(), EngineSide::None);
    let s = state(&app.take_outbox());
    assert!(s.moves.is_empty() && s.result.is_none(), "{:?}", s.moves);
}

#[test]
fn bad_input_gives_alerts_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(dir.path(), EngineSide::None);
    app.take_outbox();
    for payload in [
        &b"{"[..],
        br#"{"cmd":"new_game","size":0}"#,
        br#"{"cmd":"level","level":99}"#,
    ] {
        app.on_command(payload);
        let out = app.take_outbox();
        let alert = last(&out, "alert").expect("an alert");
        assert_eq!(alert["kind"], "error");
        assert!(last(&out, "state").is_none());
    }
    app.on_snapshot(b"X");
    assert_eq!(last(&app.take_outbox(), "alert").unwrap()["kind"], "error");
    assert!(matches!(app.gtp("loadsgf /etc/passwd"), Reply::Failure(_)));
    assert!(matches!(app.gtp(&"x".repeat(100_000)), Reply::Failure(_)));
    // A new game with a handicap: its stones are in the state's setup.
    app.on_command(br#"{"cmd":"new_game","size":9,"handicap":2,"engine":"none"}"#);
    let s = state(&app.take_outbox());
    assert_eq!(s.setup.len(), 2);
    assert_eq!(s.to_move, "W");
}
