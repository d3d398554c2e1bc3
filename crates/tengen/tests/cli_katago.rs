//! KataGo's command line and config files, as clients that run KataGo start Tengen:
//! KaTrain's `analysis -model M -config CFG -override-config homeDataDir=...`, a GTP
//! engine line `gtp -model M -config CFG`, overrides and their precedence, the identity
//! Lizzie-family clients look at, and KataGo-style errors (exit 1, naming the flag, key
//! and line). With `-model none` (the classical engine) so that each run is quick.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// What a run of `tengen` gave.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// `tengen ARGS` with `input` on standard input, its log at info.
fn tengen(args: &[&str], input: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tengen runs");
    // A run that fails at start-up may close its input before reading it.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The GTP replies of a run, each without its `= ` and blank line.
fn replies(run: &Run) -> Vec<String> {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout
        .trim_end()
        .split("\n\n")
        .map(|r| r.trim_start_matches("= ").to_string())
        .collect()
}

/// The JSON lines of an analysis run.
fn responses(run: &Run) -> Vec<Value> {
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A config with the keys KaTrain's shipped analysis_config.cfg sets (our own text and
/// values, not KaTrain's file), plus a maxVisits the test can see in a response; the log
/// goes to dated files in `log_dir`.
fn katrain_like(log_dir: &Path) -> String {
    format!(
        "\
# Analysis engine config in KataGo's format, keys as KaTrain ships them.
logDir = {}
logSearchInfo = false
reportAnalysisWinratesAs = BLACK   # KaTrain reads values from Black's view
conservativePass = true
maxVisits = 37
numAnalysisThreads = 2
numSearchThreads = 2
nnMaxBatchSize = 16
nnCacheSizePowerOfTwo = 18
nnMutexPoolSizePowerOfTwo = 14
nnRandomize = true
",
        log_dir.display()
    )
}

const QUERY: &str = r#"{"id":"q","moves":[["B","E5"]],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9}"#;

/// The root visits of the answer to `QUERY` (which gives no maxVisits).
fn root_visits(run: &Run) -> u64 {
    let out = responses(run);
    let q = out.iter().find(|v| v["id"] == "q").expect("an answer");
    assert!(q.get("error").is_none(), "{q}");
    q["rootInfo"]["visits"].as_u64().unwrap()
}

#[test]
fn katrains_command_line_starts_the_analysis_engine() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("analysis_logs");
    let cfg = write(dir.path(), "analysis_config.cfg", &katrain_like(&logs));
    let home = format!("homeDataDir={}", dir.path().join("katrain").display());
    let cfg = cfg.to_str().unwrap();
    // KaTrain's shape: -model M -config CFG -override-config homeDataDir=...
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-config",
            &home,
        ],
        &format!("{QUERY}\n"),
    );
    assert_eq!(root_visits(&run), 37, "{}", run.stderr);
    // KataGo's keys Tengen has no use for are listed once; nothing is warned about.
    assert_eq!(
        run.stderr.matches("does not use").count(),
        1,
        "{}",
        run.stderr
    );
    for key in [
        "conservativePass",
        "nnMutexPoolSizePowerOfTwo",
        "homeDataDir",
        "logSearchInfo",
    ] {
        assert!(run.stderr.contains(key), "{key} not listed: {}", run.stderr);
    }
    assert!(!run.stderr.contains("WARN"), "{}", run.stderr);
    // logDir: the log went to a dated file in that directory too.
    let files: Vec<PathBuf> = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("does not use"), "{text}");

    // An override wins over the file, a flag given on the command line over both.
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-config",
            "maxVisits=23,logDir=",
            "-override-config",
            &home,
        ],
        &format!("{QUERY}\n"),
    );
    assert_eq!(root_visits(&run), 23, "{}", run.stderr);
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-config",
            "maxVisits=23,logDir=",
            "--max-visits",
            "11",
            "-analysis-threads",
            "1",
        ],
        &format!("{QUERY}\n"),
    );
    assert_eq!(root_visits(&run), 11, "{}", run.stderr);
}

#[test]
fn katrains_shipped_config_when_given() {
    // KaTrain's own file (pip download katrain; katrain/KataGo/analysis_config.cfg).
    let Some(cfg) = std::env::var_os("TENGEN_KATRAIN_CFG") else {
        eprintln!("TENGEN_KATRAIN_CFG not set: KaTrain's analysis_config.cfg not tested");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let home = format!("homeDataDir={}", dir.path().display());
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg.to_str().unwrap(),
            "-override-config",
            &home,
        ],
        r#"{"id":"q","moves":[],"rules":"japanese","komi":6.5,"boardXSize":9,"boardYSize":9,"maxVisits":20}
"#,
    );
    let out = responses(&run);
    assert!(out[0]["rootInfo"]["visits"].as_u64() >= Some(20), "{out:?}");
    assert!(!run.stderr.contains("unknown config key"), "{}", run.stderr);
}

#[test]
fn a_gtp_config_sets_rules_visits_and_search_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "default_gtp.cfg",
        "\
# GTP engine config in KataGo's format.
logToStderr = true
koRule = SITUATIONAL
scoringRule = AREA
taxRule = NONE
multiStoneSuicideLegal = true
hasButton = true
whiteHandicapBonus = N-1
maxVisits = 321
numSearchThreads = 2
cpuctExploration = 1.25
ponderingEnabled = false
lagBuffer = 1.0
",
    );
    let cfg = cfg.to_str().unwrap();
    let script = "kata-get-rules\nget_komi\nkata-get-param maxVisits\nkata-get-param cpuctExploration\nkata-get-param numSearchThreads\nquit\n";
    let r = replies(&tengen(&["gtp", "-model", "none", "-config", cfg], script));
    let rules: Value = serde_json::from_str(&r[0]).unwrap();
    assert_eq!(rules["ko"], "SITUATIONAL", "{rules}");
    assert_eq!(rules["scoring"], "AREA");
    assert_eq!(rules["suicide"], true);
    assert_eq!(rules["hasButton"], true);
    assert_eq!(rules["whiteHandicapBonus"], "N-1");
    // KataGo's komi for a button game.
    assert_eq!(r[1], "7");
    assert_eq!(&r[2..5], ["321", "1.25", "2"]);

    // A later config file wins over an earlier one; the overrides over both, the later
    // override over the earlier; a flag on the command line over everything.
    let second = write(dir.path(), "second.cfg", "maxVisits = 400\n");
    let second = second.to_str().unwrap();
    let get = "kata-get-param maxVisits\nkata-get-rules\nquit\n";
    let r = replies(&tengen(
        &["gtp", "-model", "none", "-config", cfg, "-config", second],
        get,
    ));
    assert_eq!(r[0], "400");
    let run = tengen(
        &[
            "gtp",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-config",
            "maxVisits=500",
            "-override-config",
            "maxVisits=600, rules=japanese",
        ],
        get,
    );
    let r = replies(&run);
    assert_eq!(r[0], "600");
    let rules: Value = serde_json::from_str(&r[1]).unwrap();
    assert_eq!(
        rules["scoring"], "TERRITORY",
        "an overriding rules key replaces the file's"
    );
    let r = replies(&tengen(
        &[
            "gtp",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-config",
            "maxVisits=600",
            "--visits",
            "77",
        ],
        get,
    ));
    assert_eq!(r[0], "77");
}

#[test]
fn both_forms_of_rules_in_the_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(
        dir.path(),
        "a.cfg",
        "koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = false\n",
    );
    let second = write(dir.path(), "b.cfg", "rules = japanese\n");
    let run = tengen(
        &[
            "gtp",
            "-model",
            "none",
            "-config",
            first.to_str().unwrap(),
            "-config",
            second.to_str().unwrap(),
        ],
        "quit\n",
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("b.cfg line 1") && run.stderr.contains("rules"),
        "{}",
        run.stderr
    );
    let partial = write(dir.path(), "c.cfg", "koRule = SIMPLE\n");
    let run = tengen(
        &[
            "gtp",
            "-model",
            "none",
            "-config",
            partial.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("scoringRule"), "{}", run.stderr);
}

#[test]
fn name_and_version_are_configurable_for_lizzie_family_clients() {
    let script = "name\nversion\nquit\n";
    let r = replies(&tengen(&["gtp", "-model", "none"], script));
    assert_eq!(r[0], "Tengen");
    assert_eq!(r[1], env!("CARGO_PKG_VERSION"));
    let r = replies(&tengen(
        &["gtp", "-model", "none", "-override-version", "1.15.3"],
        script,
    ));
    assert_eq!(r[..2], ["Tengen", "1.15.3"]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "id.cfg",
        "gtpName = KataGo-Tengen\ngtpVersion = 1.14.0\n",
    );
    let cfg = cfg.to_str().unwrap();
    let r = replies(&tengen(&["gtp", "-model", "none", "-config", cfg], script));
    assert_eq!(r[..2], ["KataGo-Tengen", "1.14.0"]);
    // The command line wins over the config.
    let r = replies(&tengen(
        &[
            "gtp",
            "-model",
            "none",
            "-config",
            cfg,
            "-override-version",
            "2.0",
        ],
        script,
    ));
    assert_eq!(r[..2], ["KataGo-Tengen", "2.0"]);
}

#[test]
fn unknown_flags_exit_1_naming_them() {
    for sub in ["gtp", "analysis"] {
        for flag in ["-frobnicate", "--frobnicate"] {
            let run = tengen(&[sub, "-model", "none", flag, "x"], "");
            assert_eq!(run.code, Some(1), "{sub} {flag}: {}", run.stderr);
            assert!(run.stderr.contains("frobnicate"), "{}", run.stderr);
        }
        let run = tengen(&[sub, "-model", "none", "-human-model", "h.bin.gz"], "");
        assert_eq!(run.code, Some(1));
        assert!(
            run.stderr.contains("human-SL models are not supported"),
            "{}",
            run.stderr
        );
    }
    // Other subcommands keep clap's usage code.
    assert_eq!(tengen(&["rules", "--frobnicate"], "").code, Some(2));
    assert_eq!(tengen(&["gtp", "-help"], "").code, Some(0));
}

#[test]
fn malformed_configs_and_bad_values_exit_1_naming_key_and_line() {
    let dir = tempfile::tempdir().unwrap();
    // (config, what the error names, whether only tengen gtp reads the key)
    for (text, expect, gtp_only) in [
        ("# fine\nmaxVisits = 10\njust some words\n", "line 3", false),
        ("maxVisits = lots\n", "maxVisits", false),
        ("numSearchThreads = 0\n", "numSearchThreads", false),
        ("cpuctExploration = 99\n", "cpuctExploration", false),
        ("allowResignation = maybe\n", "allowResignation", true),
        ("\n\nrules = no-such-rules\n", "line 3", true),
        ("@include missing.cfg\n", "missing.cfg", false),
    ] {
        let cfg = write(dir.path(), "bad.cfg", text);
        for sub in ["gtp", "analysis"] {
            let run = tengen(
                &[sub, "-model", "none", "-config", cfg.to_str().unwrap()],
                "",
            );
            // Keys only gtp reads are listed as unused by analysis, their values unread.
            if sub == "analysis" && gtp_only {
                assert_eq!(run.code, Some(0), "{}", run.stderr);
                continue;
            }
            assert_eq!(run.code, Some(1), "{sub} {text:?}: {}", run.stderr);
            assert!(
                run.stderr.contains(expect),
                "{sub} {text:?}: {}",
                run.stderr
            );
            assert!(run.stderr.contains("bad.cfg"), "{}", run.stderr);
        }
    }
    let run = tengen(
        &["gtp", "-model", "none", "-override-config", "maxVisits=0"],
        "",
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("-override-config") && run.stderr.contains("maxVisits"),
        "{}",
        run.stderr
    );
}

#[test]
fn backend_keys_are_listed_once_and_unknown_keys_warned() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "gpu.cfg",
        "cudaUseFP16 = true\ncudaDeviceToUse = 0\nopenclDeviceToUse = 0\ntrtUseFP16 = auto\nnumAnalysisThreads = 2\nmaxVisitz = 10\n",
    );
    let run = tengen(
        &["gtp", "-model", "none", "-config", cfg.to_str().unwrap()],
        "quit\n",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let listed: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("does not use"))
        .collect();
    assert_eq!(listed.len(), 1, "{}", run.stderr);
    for key in [
        "cudaUseFP16",
        "cudaDeviceToUse",
        "openclDeviceToUse",
        "trtUseFP16",
    ] {
        assert_eq!(listed[0].matches(key).count(), 1, "{key}: {}", listed[0]);
    }
    assert!(listed[0].contains("numAnalysisThreads (only tengen analysis reads it)"));
    let warned: Vec<&str> = run.stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(warned.len(), 1, "{}", run.stderr);
    assert!(
        warned[0].contains("maxVisitz") && warned[0].contains("line 6"),
        "{}",
        warned[0]
    );
}

#[test]
fn gtp_communication_goes_to_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("gtp.log");
    let cfg = write(
        dir.path(),
        "log.cfg",
        &format!(
            "logFile = \"{}\"\nlogAllGTPCommunication = true\nlogToStderr = false\n",
            log.display()
        ),
    );
    let run = tengen(
        &["gtp", "-model", "none", "-config", cfg.to_str().unwrap()],
        "name\nquit\n",
    );
    assert_eq!(replies(&run)[0], "Tengen");
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("< name") && text.contains("> = Tengen"),
        "{text}"
    );
}

#[test]
fn max_time_caps_each_moves_search() {
    // Without the cap, ten million visits over the classical engine would take hours.
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "t.cfg", "maxVisits = 10000000\nmaxTime = 0.5\n");
    let start = std::time::Instant::now();
    let run = tengen(
        &[
            "gtp",
            "-model",
            "none",
            "--engine",
            "search",
            "-config",
            cfg.to_str().unwrap(),
        ],
        "boardsize 9\ngenmove b\nquit\n",
    );
    let r = replies(&run);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert!(r[1] != "resign" && r[1].len() >= 2, "{r:?}");
}

#[test]
fn max_time_bounds_a_query_without_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "a.cfg", "maxTime = 0.3\n");
    let q = r#"{"id":"q","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":10000000000}"#;
    let start = std::time::Instant::now();
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg.to_str().unwrap(),
        ],
        &format!("{q}\n"),
    );
    let out = responses(&run);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(out[0]["isDuringSearch"], false, "{out:?}");
}

#[test]
fn ogs_chat_to_stderr_writes_the_search_summary() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "chat.cfg",
        "ogsChatToStderr = true\nmaxVisits = 30\n",
    );
    let args = ["gtp", "-model", "none", "--engine", "search"];
    let script = "boardsize 9\ngenmove b\nquit\n";
    let run = tengen(
        &[&args[..], &["-config", cfg.to_str().unwrap()]].concat(),
        script,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("MALKOVICH:Visits"), "{}", run.stderr);
    let run = tengen(&args, script);
    assert!(!run.stderr.contains("MALKOVICH:"), "{}", run.stderr);
}

#[test]
fn search_factors_shorten_genmove_after_the_opponents_pass() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "f.cfg",
        "maxVisits = 40\nnumSearchThreads = 1\nogsChatToStderr = true\n\
         searchFactorAfterOnePass = 0.5\n",
    );
    let visits = |script: &str| {
        let run = tengen(
            &[
                "gtp",
                "-model",
                "none",
                "--engine",
                "search",
                "-config",
                cfg.to_str().unwrap(),
            ],
            script,
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let line = run.stderr.lines().find(|l| l.contains("MALKOVICH:Visits"));
        let line = line.unwrap_or_else(|| panic!("{}", run.stderr));
        let after = line.split("MALKOVICH:Visits ").nth(1).unwrap();
        after.split(' ').next().unwrap().parse::<u64>().unwrap()
    };
    assert_eq!(visits("boardsize 9\nplay w E5\ngenmove b\nquit\n"), 40);
    assert_eq!(visits("boardsize 9\nplay w pass\ngenmove b\nquit\n"), 20);
    // maxPlayouts bounds the new playouts too, and is scaled likewise. On a fresh tree the
    // root's evaluation is the first playout, as in KataGo: N playouts, N root visits.
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}maxPlayouts = 15\n")).unwrap();
    assert_eq!(visits("boardsize 9\nplay w E5\ngenmove b\nquit\n"), 15);
    assert_eq!(visits("boardsize 9\nplay w pass\ngenmove b\nquit\n"), 8);
}

#[test]
fn max_playouts_bounds_a_querys_visits() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "p.cfg", "maxVisits = 30\nmaxPlayouts = 12\n");
    let run = tengen(
        &[
            "analysis",
            "-model",
            "none",
            "-config",
            cfg.to_str().unwrap(),
        ],
        &format!("{QUERY}\n"),
    );
    assert_eq!(root_visits(&run), 12);
}

/// The last report line of each streaming answer in a GTP run's output.
fn last_reports(stdout: &str) -> Vec<String> {
    stdout
        .split("\n\n")
        .filter_map(|block| block.lines().rfind(|l| l.starts_with("info ")))
        .map(str::to_string)
        .collect()
}

/// The number after ` KEY ` in a report line's part `part`.
fn field(part: &str, key: &str) -> f64 {
    let after = part
        .split(&format!(" {key} "))
        .nth(1)
        .unwrap_or_else(|| panic!("no {key} in {part}"));
    after.split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn gtp_analysis_reports_values_and_variations_as_configured() {
    let dir = tempfile::tempdir().unwrap();
    // With a komi of 50, White is far ahead whoever is to move.
    let script = "boardsize 9\nkomi 50\nplay b E5\n\
                  kata-search_analyze w interval 5 rootInfo true\nplay w C3\n\
                  kata-search_analyze b interval 5 rootInfo true\n\
                  lz-genmove_analyze b 5\nquit\n";
    // The reported root lead with Black and with White to move, the lz winrate of a move
    // of Black's, and the longest variation shown.
    let run_with = |keys: &str| {
        let cfg = write(dir.path(), "r.cfg", &format!("maxVisits = 60\n{keys}"));
        // The bundled network, which knows what a komi of 50 means.
        let run = tengen(&["gtp", "-config", cfg.to_str().unwrap()], script);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let reports = last_reports(&run.stdout);
        assert_eq!(reports.len(), 3, "{}", run.stdout);
        let root = |r: &str| field(r.split(" rootInfo").nth(1).unwrap(), "scoreLead");
        let lz_winrate = field(&reports[2], "winrate");
        let longest_pv = run
            .stdout
            .lines()
            .flat_map(|l| l.split("info move").skip(1))
            .map(|info| {
                let pv = info.split(" pv ").nth(1).unwrap().split(' ');
                // The variation's vertices, up to the next field's name (`rootInfo`, ...).
                let vertex = |w: &&str| w.get(1..).is_some_and(|n| n.parse::<u8>().is_ok());
                pv.take_while(|w| vertex(w) || *w == "pass").count()
            })
            .max()
            .unwrap();
        (root(&reports[1]), root(&reports[0]), lz_winrate, longest_pv)
    };
    let (b_to_move, w_to_move, lz, longest) = run_with("");
    assert!(
        b_to_move < -10.0 && w_to_move > 10.0,
        "{b_to_move} {w_to_move}"
    );
    assert!(lz < 5000.0, "{lz}");
    assert!(longest > 2, "{longest}");
    let (b_to_move, w_to_move, lz, _) = run_with("reportAnalysisWinratesAs = BLACK\n");
    assert!(
        b_to_move < -10.0 && w_to_move < -10.0,
        "{b_to_move} {w_to_move}"
    );
    assert!(lz < 5000.0, "{lz}");
    let (b_to_move, w_to_move, lz, _) = run_with("reportAnalysisWinratesAs = WHITE\n");
    assert!(
        b_to_move > 10.0 && w_to_move > 10.0,
        "{b_to_move} {w_to_move}"
    );
    assert!(lz > 5000.0, "{lz}");
    let (_, _, _, longest) = run_with("analysisPVLen = 1\n");
    assert_eq!(longest, 2);
}

/// GTP lines of a 19x19 game where White has answered each of Black's 16 moves with its
/// reflection through the centre.
fn mirrored_game() -> String {
    let cols = "ABCDEFGHJKLMNOPQRST";
    let mut lines = String::new();
    for mv in [
        "D4", "K3", "G6", "O5", "C7", "R3", "F2", "M8", "B9", "H4", "P7", "E8", "Q2", "L6", "J9",
        "A5",
    ] {
        let col = cols.find(&mv[..1]).unwrap();
        let row: usize = mv[1..].parse().unwrap();
        let reflected = format!("{}{}", &cols[18 - col..19 - col], 20 - row);
        lines.push_str(&format!("play b {mv}\nplay w {reflected}\n"));
    }
    lines
}

#[test]
fn genmove_anti_mirror_is_on_by_default_and_follows_anti_mirror_as_in_katago() {
    let dir = tempfile::tempdir().unwrap();
    // The centre's visits when searching Black's move as genmove does, and the two
    // settings as kata-get-param reads them.
    let run_with = |keys: &str| {
        let cfg = write(dir.path(), "m.cfg", &format!("maxVisits = 100\n{keys}"));
        let script = format!(
            "{}kata-search_analyze b interval 1000 maxmoves 400\n\
             kata-get-param genmoveAntiMirror\nkata-get-param antiMirror\nquit\n",
            mirrored_game()
        );
        let run = tengen(&["gtp", "-config", cfg.to_str().unwrap()], &script);
        let r = replies(&run);
        let search = &r[r.len() - 4];
        let centre = search
            .split("info move K10 visits ")
            .last()
            .filter(|_| search.contains("info move K10 "))
            .map_or(0, |after| after.split(' ').next().unwrap().parse().unwrap());
        (centre, r[r.len() - 3].clone(), r[r.len() - 2].clone())
    };
    // Anti-mirror search gives the centre forced visits; KataGo's defaults: on for
    // genmove, off for analysis.
    let (centre, genmove, analysis) = run_with("");
    assert!(centre > 0);
    assert_eq!((genmove.as_str(), analysis.as_str()), ("true", "false"));
    let (centre, genmove, analysis) = run_with("antiMirror = false\n");
    assert_eq!(centre, 0);
    assert_eq!((genmove.as_str(), analysis.as_str()), ("false", "false"));
    let (centre, genmove, _) = run_with("genmoveAntiMirror = false\nantiMirror = true\n");
    assert_eq!(centre, 0);
    assert_eq!(genmove, "false");
    let (centre, genmove, analysis) = run_with("antiMirror = true\n");
    assert!(centre > 0);
    assert_eq!((genmove.as_str(), analysis.as_str()), ("true", "true"));
}

#[test]
fn a_genmove_form_answers_when_its_move_is_chosen_not_at_its_next_report() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "i.cfg", "maxVisits = 20\n");
    let start = std::time::Instant::now();
    // Reports every 100 s; the 20 visits take a moment.
    let run = tengen(
        &["gtp", "-config", cfg.to_str().unwrap()],
        "boardsize 9\nkata-genmove_analyze b interval 10000\nquit\n",
    );
    let r = replies(&run);
    assert!(r[1].lines().last().unwrap().starts_with("play "), "{r:?}");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
}
