//! `tengen match` between two real GTP engines (two `tengen gtp` processes with the
//! uniform evaluator): every game is refereed, saved as SGF and counted.

use std::process::Command;

#[test]
fn a_short_match_is_played_recorded_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = format!("{} gtp --visits 8", env!("CARGO_BIN_EXE_tengen"));
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "match",
            "--engine-a",
            &engine,
            "--engine-b",
            &engine,
            "--games",
            "4",
            "--board",
            "7",
            "--parallel",
            "2",
            "--max-moves",
            "120",
            "--sgf-dir",
            dir.path().to_str().unwrap(),
        ])
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("games 4 (of 4)"), "{text}");
    assert!(text.contains("errors 0"), "{text}");
    assert!(
        text.contains("A win rate") && text.contains("95% CI") && text.contains("Elo"),
        "{text}"
    );
    let mut sgfs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    sgfs.sort();
    assert_eq!(sgfs.len(), 4);
    for p in sgfs {
        let rec = tengen_rules::sgf::load(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert!(rec.game.is_over(), "{} has no result", p.display());
        assert!(!rec.game.turns().is_empty());
    }

    // A broken engine is an error for its games, not a crash.
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "match",
            "--engine-a",
            &engine,
            "--engine-b",
            "true",
            "--games",
            "1",
            "--board",
            "7",
        ])
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("game 0"));
}
