//! `tengen match` between two real GTP engines (two `tengen gtp` processes with the
//! classical engine): every game is refereed, saved as SGF and counted. Faulty engines
//! (tiny shell scripts) lose their games without stopping the match.

use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn a_short_match_is_played_recorded_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = format!(
        "{} gtp --model none --visits 8",
        env!("CARGO_BIN_EXE_tengen")
    );
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
    // Each side's thinking time is counted over all its moves.
    let line = text
        .lines()
        .find(|l| l.starts_with("time a move: A "))
        .unwrap_or_else(|| panic!("no time line in {text}"));
    let counts: Vec<u32> = line
        .split(" over ")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let mut sgfs: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    sgfs.sort();
    assert_eq!(sgfs.len(), 4);
    let mut turns = 0;
    for p in sgfs {
        let rec = tengen_rules::sgf::load(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert!(rec.game.is_over(), "{} has no result", p.display());
        assert!(!rec.game.turns().is_empty());
        turns += rec.game.turns().len() as u32;
    }
    // Every move in the records was asked for; a settled dispute's closing passes are
    // asked for but taken back before play goes on, so the counts may exceed the records.
    assert_eq!(counts.len(), 2, "{line}");
    assert!(counts[0] > 0 && counts[1] > 0, "{line}");
    assert!(counts[0] + counts[1] >= turns, "{line} vs {turns} turns");

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

#[test]
fn paired_games_start_from_the_same_random_opening() {
    let engine = format!(
        "{} gtp --model none --visits 4",
        env!("CARGO_BIN_EXE_tengen")
    );
    // Plays `games` games of one 7x7 match with random openings into `dir`.
    let play = |dir: &std::path::Path, games: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .args(["match", "--engine-a", &engine, "--engine-b", &engine])
            .args(games)
            .args(["--board", "7", "--max-moves", "30", "--opening-moves", "3"])
            .args(["--opening-seed", "5", "--sgf-dir", dir.to_str().unwrap()])
            .env("RUST_LOG", "error")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // The first three moves of a game's record.
    let opening = |path: std::path::PathBuf| -> Vec<_> {
        let rec = tengen_rules::sgf::load(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let turns = rec.game.turns();
        assert!(
            turns.len() > 3,
            "{} has only {} moves",
            path.display(),
            turns.len()
        );
        turns[..3].iter().map(|t| (t.player, t.mv)).collect()
    };
    let dir = tempfile::tempdir().unwrap();
    play(dir.path(), &["--games", "4"]);
    let openings: Vec<Vec<_>> = (0..4)
        .map(|i| opening(dir.path().join(format!("game-{i:04}.sgf"))))
        .collect();
    assert_eq!(openings[0], openings[1]);
    assert_eq!(openings[2], openings[3]);
    assert_ne!(openings[0], openings[2]);

    // A match resumed at game 3 plays game 3 as the whole match did: its SGF name and
    // its opening.
    let rest = tempfile::tempdir().unwrap();
    play(rest.path(), &["--games", "1", "--first-game", "3"]);
    let names: Vec<_> = std::fs::read_dir(rest.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["game-0003.sgf"]);
    assert_eq!(opening(rest.path().join("game-0003.sgf")), openings[3]);
}

/// A shell GTP engine named `name`: `= ` to every command, `genmove` runs `on_genmove`,
/// `play` runs `on_play`.
fn shell_engine(name: &str, on_genmove: &str, on_play: &str) -> String {
    format!(
        "while read -r c _; do case $c in \
         name) printf '= {name}\\n\\n';; \
         genmove) {on_genmove};; \
         play) {on_play};; \
         quit) printf '= \\n\\n'; exit 0;; \
         *) printf '= \\n\\n';; \
         esac; done"
    )
}

const REPLY: &str = "printf '= \\n\\n'";

/// Plays `games` games on 7x7 between a passing shell engine (A) and `engine_b`; returns
/// the summary and how long the match took, after checking that it succeeded.
fn match_against(engine_b: &str, games: usize, extra: &[&str]) -> (String, Duration) {
    let passer = shell_engine("passer", "printf '= pass\\n\\n'", REPLY);
    let games = games.to_string();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "match",
            "--engine-a",
            &passer,
            "--engine-b",
            engine_b,
            "--games",
            &games,
            "--board",
            "7",
        ])
        .args(extra)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{log}");
    assert!(log.contains("it loses"), "the forfeit is not logged: {log}");
    (text, elapsed)
}

#[test]
fn an_engine_that_crashes_on_genmove_loses_every_game() {
    let (text, _) = match_against(&shell_engine("crasher", "exit 1", REPLY), 2, &[]);
    assert!(
        text.contains("games 2 (of 2), A wins 2, B wins 0, draws 0, errors 0"),
        "{text}"
    );
    assert!(
        text.contains("faults: A crashed 0, hung 0, illegal 0; B crashed 2, hung 0, illegal 0"),
        "{text}"
    );
}

#[test]
fn an_engine_that_hangs_is_timed_out_killed_and_loses() {
    // Not `exec`: the sleeper is the shell's child, as in a wrapper script, and must die too.
    let hanger = shell_engine("hanger", "sleep 987", REPLY);
    let (text, elapsed) = match_against(&hanger, 2, &["--move-timeout", "1"]);
    assert!(
        text.contains("games 2 (of 2), A wins 2, B wins 0, draws 0, errors 0"),
        "{text}"
    );
    assert!(
        text.contains("faults: A crashed 0, hung 0, illegal 0; B crashed 0, hung 2, illegal 0"),
        "{text}"
    );
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    #[cfg(target_os = "linux")]
    {
        let sleepers = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| c.as_slice() == b"sleep\0987\0")
            .count();
        assert_eq!(
            sleepers, 0,
            "the hung engine's process group was not killed"
        );
    }
}

#[test]
fn an_engine_that_plays_illegally_loses_every_game() {
    // A1 is legal once; the second A1 is on an occupied point.
    let (text, _) = match_against(
        &shell_engine("a1-forever", "printf '= A1\\n\\n'", REPLY),
        2,
        &[],
    );
    assert!(
        text.contains("games 2 (of 2), A wins 2, B wins 0, draws 0, errors 0"),
        "{text}"
    );
    assert!(
        text.contains("faults: A crashed 0, hung 0, illegal 0; B crashed 0, hung 0, illegal 2"),
        "{text}"
    );
}

#[test]
fn an_engine_that_refuses_or_dies_on_a_legal_play_loses() {
    let refuser = shell_engine(
        "refuser",
        "printf '= pass\\n\\n'",
        "printf '? illegal move\\n\\n'",
    );
    let (text, _) = match_against(&refuser, 2, &[]);
    assert!(text.contains("A wins 2, B wins 0"), "{text}");
    assert!(
        text.contains("faults: A crashed 0, hung 0, illegal 0; B crashed 0, hung 0, illegal 2"),
        "{text}"
    );

    let dier = shell_engine("dier", "printf '= pass\\n\\n'", "exit 1");
    let (text, _) = match_against(&dier, 2, &[]);
    assert!(text.contains("A wins 2, B wins 0"), "{text}");
    assert!(
        text.contains("faults: A crashed 0, hung 0, illegal 0; B crashed 2, hung 0, illegal 0"),
        "{text}"
    );
}

/// One 7x7 game, komi 7: Black plays D4, White A1, both pass. Returns the SGF result
/// and the log.
fn count_after_passes(black_dead: &str, white_dead: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "match",
            "--engine-a",
            &scripted_engine("black", "D4", "", black_dead),
            "--engine-b",
            &scripted_engine("white", "A1", "", white_dead),
            "--games",
            "1",
            "--board",
            "7",
            "--sgf-dir",
            dir.path().to_str().unwrap(),
        ])
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{log}");
    let sgf = std::fs::read_to_string(dir.path().join("game-0000.sgf")).unwrap();
    // The record's RE: replaying the moves would count the board as it stands again.
    let result = sgf
        .split_once("RE[")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(re, _)| re.to_string())
        .unwrap_or_else(|| panic!("no result in {sgf}"));
    (result, log)
}

#[test]
fn stones_both_engines_call_dead_are_taken_off_before_the_count() {
    // On the board as it stands, White's lone A1 stone spoils Black's whole area
    // (1 point each, komi 7: W+7). Both engines call it dead: Black owns all 49 points.
    let (result, log) = count_after_passes("A1", "a1");
    assert_eq!(result, "B+42", "{log}");
    assert!(log.contains("1 stones dead by agreement"), "{log}");

    // Only one engine calls it dead: the count stands as the board is, and says so.
    let (result, log) = count_after_passes("A1", "");
    assert_eq!(result, "W+7", "{log}");
    assert!(log.contains("1 disputed"), "{log}");

    // Claims of dead stones on empty points or off the board are ignored.
    let (result, log) = count_after_passes("A1 C3 Z99", "A1 C3");
    assert_eq!(result, "B+42", "{log}");
}

/// A shell GTP engine that plays `main` (moves in order, then passes) for `genmove`,
/// `cleanup` for `kgs-genmove_cleanup` (offered only when `cleanup` is not empty), and
/// calls `dead` dead.
fn scripted_engine(name: &str, main: &str, cleanup: &str, dead: &str) -> String {
    let knows = if cleanup.is_empty() { "false" } else { "true" };
    format!(
        "main='{main}'; clean='{cleanup}'; \
         while read -r c _; do case $c in \
         name) printf '= {name}\\n\\n';; \
         genmove) set -- $main; m=${{1:-pass}}; [ $# -gt 0 ] && shift; main=\"$*\"; printf '= %s\\n\\n' \"$m\";; \
         kgs-genmove_cleanup) set -- $clean; m=${{1:-pass}}; [ $# -gt 0 ] && shift; clean=\"$*\"; printf '= %s\\n\\n' \"$m\";; \
         known_command) printf '= {knows}\\n\\n';; \
         final_status_list) printf '= {dead}\\n\\n';; \
         quit) printf '= \\n\\n'; exit 0;; \
         *) printf '= \\n\\n';; \
         esac; done"
    )
}

/// Plays one 7x7 game of `black` against `white` under `rules`; returns the log, the
/// final board and the result.
fn one_game(black: &str, white: &str, rules: &str) -> (String, tengen_rules::Board, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["match", "--engine-a", black, "--engine-b", white])
        .args([
            "--games",
            "1",
            "--board",
            "7",
            "--rules",
            rules,
            "--sgf-dir",
        ])
        .arg(dir.path())
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{log}");
    assert!(text.contains("games 1 (of 1)"), "{text}{log}");
    let sgf = std::fs::read_to_string(dir.path().join("game-0000.sgf")).unwrap();
    let rec = tengen_rules::sgf::load(&sgf).unwrap();
    let result = rec
        .game
        .outcome()
        .map(|o| o.sgf_result())
        .unwrap_or_default();
    (log, rec.game.board().clone(), result)
}

#[test]
fn disputed_dead_stones_are_settled_by_playing_on_under_area_scoring() {
    // Black walls off the corner; White's stone at A1 has two liberties and is dead, but
    // White never says so. Black captures it in the cleanup (B1, then A2).
    let black = scripted_engine("claimer", "C1 B2 A3", "B1 A2", "A1");
    let white = scripted_engine("stubborn", "A1", "", "");
    let size = tengen_rules::BoardSize::square(7).unwrap();
    let at = |p: &str| size.parse_loc(p).unwrap();

    let (log, board, result) = one_game(&black, &white, "chinese");
    // Black's 5 stones and every empty point: 49, less komi 7.
    assert_eq!(result, "B+42", "{log}");
    assert!(
        log.contains("1 stones disputed: playing on (Black kgs-genmove_cleanup, White genmove)"),
        "{log}"
    );
    assert!(log.contains("cleanup took 6 moves"), "{log}");
    assert_eq!(
        board.stone(at("A1")),
        None,
        "the disputed stone was not captured"
    );
    assert_eq!(board.stone(at("B1")), Some(tengen_rules::Player::Black));
    assert_eq!(board.stone(at("A2")), Some(tengen_rules::Player::Black));

    // Under territory scoring a capture inside one's own area would cost a point: no
    // playing on, the stone stands.
    let (log, board, _) = one_game(&black, &white, "japanese");
    assert!(!log.contains("playing on"), "{log}");
    assert!(log.contains("1 disputed"), "{log}");
    assert_eq!(board.stone(at("A1")), Some(tengen_rules::Player::White));
}
