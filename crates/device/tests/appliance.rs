//! The appliance without a broker: inputs in, outbox and journal checked.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tengen_device::appliance::{Appliance, GameSettings, Out, Settings};
use tengen_device::payload::{EngineSide, State};
use tengen_protocol::gtp::{Command, Decider, Engine, EngineConfig, Level, Reply};
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
        .map(|o| serde_json::from_slice(&o.payload).unwrap())
}

fn all(out: &[Out], topic: &str) -> Vec<serde_json::Value> {
    out.iter()
        .filter(|o| o.topic == topic)
        .map(|o| serde_json::from_slice(&o.payload).unwrap())
        .collect()
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
    // The player's move from the board, then the engine's, each told once on `move`.
    let told = all(&out, "move");
    assert_eq!(told.len(), 2, "{told:?}");
    assert_eq!(
        told[0],
        serde_json::json!({"color": "B", "vertex": "E5", "number": 1, "by": "board"})
    );
    let mv = &told[1];
    assert_eq!(mv["color"], "W");
    assert_eq!(mv["number"], 2);
    assert_eq!(mv["by"], "engine");
    let s = state(&out);
    assert_eq!(s.moves.len(), 2);
    assert_eq!(s.moves[1], format!("W {}", mv["vertex"].as_str().unwrap()));
    // Undo goes back to the player's turn, past the engine's reply.
    app.on_command(br#"{"cmd":"undo"}"#);
    let s = state(&app.take_outbox());
    assert!(s.moves.is_empty(), "{:?}", s.moves);
}

#[test]
fn moves_by_command_are_told_on_move_and_a_replay_tells_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(dir.path(), EngineSide::None);
    app.take_outbox();
    ok(app.gtp("play B C3"));
    app.on_command(br#"{"cmd":"gtp","line":"play W D4"}"#);
    app.on_command(br#"{"cmd":"pass"}"#);
    // A refused move is not told.
    assert!(matches!(app.gtp("play W C3"), Reply::Failure(_)));
    app.on_command(br#"{"cmd":"resign"}"#);
    let told: Vec<String> = all(&app.take_outbox(), "move")
        .iter()
        .map(|m| {
            assert_eq!(m["by"], "command", "{m}");
            format!("{} {} {}", m["number"], m["color"], m["vertex"])
        })
        .collect();
    assert_eq!(
        told,
        [
            r#"1 "B" "C3""#,
            r#"2 "W" "D4""#,
            r#"3 "B" "pass""#,
            r#"3 "W" "resign""#
        ]
    );
    // Resuming the journal replays the game without telling its moves again.
    drop(app);
    let mut app = open(dir.path(), EngineSide::None);
    assert!(all(&app.take_outbox(), "move").is_empty());
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

/// An appliance whose engine has the classical engine, so that `tengen-level` applies.
fn open_classic(dir: &Path) -> Appliance {
    open_classic_at(dir, 5)
}

/// [`open_classic`] with the classical engine configured at `level`.
fn open_classic_at(dir: &Path, level: u8) -> Appliance {
    let mut engine = engine();
    let config = EngineConfig {
        moves: Decider::Classic(Arc::new(tengen_classic::Classic::new(level, 1))),
        ..engine.config().clone()
    };
    engine.reset(config).unwrap();
    let settings = Settings {
        game: GameSettings {
            size: tengen_rules::BoardSize::square(9).unwrap(),
            engine: EngineSide::None,
            ..GameSettings::default()
        },
        window: 1,
        ..Settings::default()
    };
    Appliance::open(engine, dir, settings).unwrap()
}

/// What a restart must bring back: the game as published, and the engine's level.
fn kept(app: &Appliance) -> (State, Option<Level>) {
    let state = State::of(app.engine().game(), EngineSide::None, String::new(), false);
    (state, app.level())
}

#[test]
fn every_command_that_changes_the_game_is_journalled_and_survives_a_restart() {
    // Every kind of command that changes the game, by construction: a new kind of
    // command must say whether it does (Command::changes_game has no catch-all), and
    // the examples cover every command name (checked in tengen-protocol).
    let changing: Vec<Command> = Command::examples()
        .into_iter()
        .filter(Command::changes_game)
        .collect();
    assert!(changing.len() >= 15, "{changing:?}");
    for cmd in changing {
        let text = cmd.to_string();
        let dir = tempfile::tempdir().unwrap();
        let mut app = open_classic(dir.path());
        let handicap = matches!(
            cmd,
            Command::FixedHandicap(_) | Command::PlaceFreeHandicap(_) | Command::SetFreeHandicap(_)
        );
        if !handicap {
            // A move, so that undo has something to take back.
            ok(app.gtp("play B E5"));
        }
        let before = kept(&app);
        let reply = app.gtp(&text);
        let after = kept(&app);
        // The appliance refuses what it cannot journal: a file's game, a streaming search.
        let refused = matches!(cmd, Command::Loadsgf { .. } | Command::Analyze(..));
        match reply {
            Reply::Success(_) => {
                assert!(!refused, "{text} ran on the appliance");
                assert_ne!(after, before, "{text} changed nothing, so proves nothing");
            }
            Reply::Failure(e) => {
                assert!(refused, "{text} failed: {e}");
                assert_eq!(after, before, "{text} failed but changed the game");
            }
        }
        drop(app);
        let app = open_classic(dir.path());
        assert_eq!(
            kept(&app),
            after,
            "{text} was not brought back by the journal"
        );
    }
}

#[test]
fn a_rank_set_over_mqtt_is_journalled_and_kept_across_a_restart_and_new_games() {
    let dir = tempfile::tempdir().unwrap();
    let rank = |s: &str| Some(Level::Strength(s.parse().unwrap()));
    let strength = |app: &Appliance| app.engine().config().strength.to_string();
    {
        let mut app = open(dir.path(), EngineSide::None);
        // A searching engine plays at full strength until told otherwise.
        assert_eq!(state(&app.take_outbox()).level, "max");
        app.on_command(br#"{"cmd":"level","level":"12k"}"#);
        let out = app.take_outbox();
        assert!(last(&out, "alert").is_none());
        assert_eq!(state(&out).level, "12k", "the state shows the rank");
        assert_eq!(app.level(), rank("12k"));
        assert_eq!(strength(&app), "12k");
        ok(app.gtp("play B E5"));
        // A classical level is refused by a searching engine and changes nothing.
        app.on_command(br#"{"cmd":"level","level":4}"#);
        assert!(last(&app.take_outbox(), "alert").is_some());
        assert_eq!(app.level(), rank("12k"));
    }
    let mut app = open(dir.path(), EngineSide::None);
    assert_eq!(app.level(), rank("12k"));
    assert_eq!(strength(&app), "12k");
    assert_eq!(state(&app.take_outbox()).moves, ["B E5"]);
    // Mid-game to another rank, then a new game keeps it.
    app.on_command(br#"{"cmd":"level","level":"3d"}"#);
    app.on_command(br#"{"cmd":"new_game","size":9,"engine":"white"}"#);
    assert_eq!(app.level(), rank("3d"));
    assert_eq!(strength(&app), "3d");
    drop(app);
    let app = open(dir.path(), EngineSide::None);
    assert_eq!(strength(&app), "3d");
}

#[test]
fn journals_written_as_text_before_typed_records_still_replay() {
    // A journal as earlier versions wrote it, line for line.
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        "boardsize 9",
        "komi 6.5",
        "kata-set-rules japanese",
        "tengen-engine-side none",
        "tengen-analysis off off",
        "tengen-level 3",
        "play B E5",
        "play W C3",
        "undo",
        "play W pass",
        "set_free_handicap D4",
    ];
    let body: String = lines
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{}\n", serde_json::json!({"seq": i + 1, "cmd": l})))
        .collect();
    std::fs::write(dir.path().join("journal.jsonl"), body).unwrap();
    let app = open_classic(dir.path());
    let (s, level) = kept(&app);
    assert_eq!(s.moves, ["B E5", "W pass"], "the bad last line is left out");
    assert_eq!(s.komi, 6.5);
    assert_eq!(s.rules["scoring"], "TERRITORY");
    assert_eq!(level, Some(Level::Classic(3)));
}

#[test]
fn the_state_shows_the_configured_level_until_a_level_command_sets_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open_classic_at(dir.path(), 7);
    assert_eq!(state(&app.take_outbox()).level, "7");
    app.on_command(br#"{"cmd":"level","level":4}"#);
    assert_eq!(state(&app.take_outbox()).level, "4");
    // A refused level changes nothing and publishes no state.
    app.on_command(br#"{"cmd":"level","level":0}"#);
    assert!(last(&app.take_outbox(), "state").is_none());
    ok(app.gtp("tengen-level 2"));
    assert_eq!(state(&app.take_outbox()).level, "2");
    drop(app);
    // The journalled level, not the configured one, is shown after a restart.
    let mut app = open_classic_at(dir.path(), 7);
    assert_eq!(state(&app.take_outbox()).level, "2");
}

#[test]
fn a_decoded_control_answers_its_caller_and_is_journalled() {
    use tengen_device::payload::Command as Control;
    let dir = tempfile::tempdir().unwrap();
    {
        let mut app = open(dir.path(), EngineSide::None);
        ok(app.gtp("play B E5"));
        app.take_outbox();
        assert!(app.control(Control::Pass).is_ok());
        assert_eq!(state(&app.take_outbox()).moves, ["B E5", "W pass"]);
        // Refusals come back to the caller, not on `alert`.
        let gtp = Control::Gtp {
            line: "clear_board".into(),
            id: None,
        };
        assert!(app.control(gtp).is_err());
        assert!(app.control(Control::Resign).is_ok());
        app.take_outbox();
        let refused = app.control(Control::Undo).unwrap_err();
        assert!(refused.contains("over"), "{refused}");
        assert!(last(&app.take_outbox(), "alert").is_none());
    }
    // The resignation was journalled: the game was archived and the next one set up.
    let mut app = open(dir.path(), EngineSide::None);
    assert!(state(&app.take_outbox()).moves.is_empty());
    let games = std::fs::read_dir(dir.path().join("games")).unwrap().count();
    assert_eq!(games, 1);
}
