//! `tengen config --board NAME` from a directory without `boards/`: the profiles built
//! into the binary; `--boards-dir` still overrides them.

mod support;

use std::process::{Command, Output};

fn config(cwd: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("config")
        .args(args)
        .current_dir(cwd)
        .env_remove("TENGEN_BOARDS")
        .output()
        .expect("tengen runs")
}

#[test]
fn board_profiles_are_built_in_and_a_boards_dir_overrides_them() {
    let empty = tempfile::tempdir().unwrap();
    let out = config(empty.path(), &["--board", "x86-kiosk"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cfg: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(cfg["engine"]["backend"].as_str(), Some("native"), "{text}");
    assert_eq!(cfg["engine"]["threads"].as_integer(), Some(4), "{text}");
    assert_eq!(cfg["engine"]["model"].as_str(), Some("bundled"), "{text}");

    let out = config(empty.path(), &["--board", "no-such-board"]);
    assert!(!out.status.success());

    // A boards directory given on the command line wins over the built-in profiles.
    let boards = tempfile::tempdir().unwrap();
    let kiosk = boards.path().join("x86-kiosk");
    std::fs::create_dir(&kiosk).unwrap();
    std::fs::write(kiosk.join("board.toml"), "[engine]\nthreads = 7\n").unwrap();
    let out = config(
        empty.path(),
        &[
            "--board",
            "x86-kiosk",
            "--boards-dir",
            boards.path().to_str().unwrap(),
        ],
    );
    let cfg: toml::Value = toml::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(cfg["engine"]["threads"].as_integer(), Some(7));
    assert_eq!(
        cfg["engine"]["backend"].as_str(),
        Some(support::backend::cpu_default())
    );
}
