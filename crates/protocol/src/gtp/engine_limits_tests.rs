//! `loadsgf`'s limits (which files, how large, what an error may show), starting over
//! for a server's next client, raw lines run as typed commands, and when pondering starts.

use std::sync::Arc;

use tengen_search::{Evaluator, SearchParams, UniformEvaluator};

use super::*;
use crate::gtp::{parse_line, Reply};

fn engine(sgf_access: SgfAccess) -> Engine {
    let config = EngineConfig {
        visits: Some(4),
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        sgf_access,
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    Engine::new(source, config).unwrap()
}

fn run(e: &mut Engine, line: &str) -> std::result::Result<String, String> {
    match e.handle(&parse_line(line).unwrap().unwrap()) {
        Reply::Success(t) => Ok(t),
        Reply::Failure(t) => Err(t),
    }
}

const GAME: &str = "(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc])";

#[test]
fn any_file_loads_but_only_regular_ones_of_bounded_size() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("game.sgf");
    std::fs::write(&good, GAME).unwrap();
    let big = dir.path().join("big.sgf");
    std::fs::write(&big, vec![b' '; MAX_SGF_BYTES as usize + 1]).unwrap();
    let mut e = engine(SgfAccess::Any);
    assert_eq!(
        run(&mut e, &format!("loadsgf {}", good.display())),
        Ok(String::new())
    );
    assert_eq!(e.game().turns().len(), 2);
    let err = run(&mut e, &format!("loadsgf {}", big.display())).unwrap_err();
    assert!(err.contains("larger than"), "{err}");
    for special in ["/dev/zero", "/dev/null"] {
        let err = run(&mut e, &format!("loadsgf {special}")).unwrap_err();
        assert!(err.contains("not a regular file"), "{special}: {err}");
    }
    let err = run(&mut e, &format!("loadsgf {}", dir.path().display())).unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
    // The failed loads left the loaded game alone.
    assert_eq!(e.game().turns().len(), 2);
}

#[test]
fn errors_do_not_show_what_a_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("shadow");
    std::fs::write(&secret, "root:$6$secrethash:19000:0:99999:7:::\n").unwrap();
    let bad_point = dir.path().join("point.sgf");
    std::fs::write(&bad_point, "(;GM[1]SZ[9];B[zzsecret])").unwrap();
    let bad_prop = dir.path().join("prop.sgf");
    std::fs::write(&bad_prop, "(;GM[1]SZ[9]secret)").unwrap();
    let mut e = engine(SgfAccess::Any);
    for (file, leak) in [(&secret, "r"), (&bad_point, "zz"), (&bad_prop, "secret")] {
        let err = run(&mut e, &format!("loadsgf {}", file.display())).unwrap_err();
        let shown = err.replace(&file.display().to_string(), "");
        assert!(shown.starts_with("cannot load file: "), "{err}");
        assert!(!shown.contains("secret") && !shown.contains("'"), "{err}");
        assert!(!shown.contains(&format!("{leak:?}")), "{err}");
    }
}

#[test]
fn within_a_directory_only_its_files_load() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("sgf");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("game.sgf"), GAME).unwrap();
    std::fs::write(root.path().join("outside.sgf"), GAME).unwrap();
    std::os::unix::fs::symlink(root.path().join("outside.sgf"), dir.join("link.sgf")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.sgf")).unwrap();
    let mut e = engine(SgfAccess::Within(dir.clone()));
    assert_eq!(run(&mut e, "loadsgf game.sgf"), Ok(String::new()));
    let absolute = format!("loadsgf {}", dir.join("game.sgf").display());
    assert_eq!(run(&mut e, &absolute), Ok(String::new()));
    let outside = root.path().join("outside.sgf");
    for name in [
        "../outside.sgf".to_string(),
        outside.display().to_string(),
        "link.sgf".into(),
        "zero.sgf".into(),
        "/etc/passwd".into(),
        "/no/such/file".into(),
        "../../../../../../../../etc/passwd".into(),
    ] {
        let err = run(&mut e, &format!("loadsgf {name}")).unwrap_err();
        assert!(err.contains("outside the SGF directory"), "{name}: {err}");
    }
    let err = run(&mut e, "loadsgf missing.sgf").unwrap_err();
    assert!(
        err.starts_with("cannot load file: ") && !err.contains("outside"),
        "{err}"
    );
    let mut refused = engine(SgfAccess::Refused);
    let err = run(&mut refused, &absolute).unwrap_err();
    assert!(err.contains("not available"), "{err}");
}

#[test]
fn reset_starts_a_new_client_afresh() {
    let mut e = engine(SgfAccess::Any);
    let startup = e.config().clone();
    for line in [
        "boardsize 9",
        "komi 3.5",
        "kata-set-rules japanese",
        "kata-set-param cpuctExploration 2.5",
        "time_settings 60 10 1",
        "play b E5",
    ] {
        assert!(run(&mut e, line).is_ok(), "{line}");
    }
    assert_eq!(e.game().board().size().width(), 9);
    e.reset(startup.clone()).unwrap();
    assert_eq!(e.game().board().size(), BoardSize::square(19).unwrap());
    assert!(e.game().turns().is_empty());
    assert_eq!(e.game().rules(), &startup.rules);
    assert_eq!(
        run(&mut e, "kata-get-param cpuctExploration"),
        Ok(startup.params.cpuct_exploration.to_string())
    );
    assert!(run(&mut e, "genmove b").is_ok());
}

#[test]
fn raw_lines_run_as_typed_commands() {
    let mut e = engine(SgfAccess::Any);
    let ok = |t: &str| Some(Reply::Success(t.into()));
    let fail = |t: &str| Some(Reply::Failure(t.into()));
    assert_eq!(e.handle_line("  # nothing"), None);
    assert_eq!(e.handle_line("boardsize 9"), ok(""));
    assert_eq!(e.handle_line("play b J9"), ok(""));
    // On any board a vertex, but off this one: refused when it runs.
    assert_eq!(e.handle_line("play w J10"), fail("invalid vertex"));
    assert_eq!(e.handle_line("frobnicate"), fail("unknown command"));
    assert_eq!(e.handle_line("7"), fail("missing command"));
    assert_eq!(e.handle_line("known_command kata-set-param"), ok("true"));
    assert_eq!(e.handle_line("known_command frobnicate"), ok("false"));
    assert_eq!(e.handle_line("kata-set-param maxVisits 12"), ok(""));
    assert_eq!(e.handle_line("kata-get-param maxVisits"), ok("12"));
    assert_eq!(e.config().visits, Some(12));
    assert_eq!(e.game().turns().len(), 1);
}

#[test]
fn the_opponents_passes_scale_the_genmove_limits() {
    let config = EngineConfig {
        visits: Some(100),
        playouts: Some(40),
        search_factors: SearchFactors {
            after_one_pass: 0.5,
            after_two_pass: 0.25,
            ..SearchFactors::default()
        },
        params: SearchParams {
            threads: 1,
            ..SearchParams::default()
        },
        ..EngineConfig::default()
    };
    let source = Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>));
    let mut e = Engine::new(source, config).unwrap();
    run(&mut e, "boardsize 9").unwrap();
    let limits = e.move_limits();
    assert_eq!((limits.visits, limits.playouts), (Some(100), Some(40)));
    run(&mut e, "play B pass").unwrap();
    let limits = e.move_limits();
    assert_eq!((limits.visits, limits.playouts), (Some(50), Some(20)));
    run(&mut e, "play W E5").unwrap();
    run(&mut e, "play B pass").unwrap();
    let limits = e.move_limits();
    assert_eq!((limits.visits, limits.playouts), (Some(25), Some(10)));
    // A new game forgets the passes.
    run(&mut e, "clear_board").unwrap();
    assert_eq!(e.move_limits().visits, Some(100));
}

#[test]
fn pondering_follows_a_played_move_within_its_limits() {
    let cmd = |line: &str| {
        let l = parse_line(line).unwrap().unwrap();
        Command::parse(&l.name, &l.args).unwrap()
    };
    let mut e = engine(SgfAccess::Any);
    run(&mut e, "boardsize 9").unwrap();
    run(&mut e, "genmove b").unwrap();
    assert!(!e.start_pondering(&cmd("genmove b")), "pondering is off");
    e.config.pondering = Some(Limits::visits(50));
    assert!(
        !e.start_pondering(&cmd("name")),
        "a command that moves nothing"
    );
    assert!(e.start_pondering(&cmd("genmove b")));
    // The search runs to the pondering limit, from the tree of Black's search.
    while e.is_searching() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(e.stop_pondering(), 50);
    // White's move starts from that tree: its 4 visits are long reached.
    run(&mut e, "genmove w").unwrap();
    assert!(e.search.stats().root_visits >= 49);
    // Black's genmove that left White's move the last one had resigned.
    assert!(
        !e.start_pondering(&cmd("genmove b")),
        "no pondering after resigning"
    );
    assert!(e.start_pondering(&cmd("play b pass")));
    e.stop_pondering();
}
