//! `tengen analysis` over pipes: KataGo's JSON protocol with the classical evaluator
//! (`--model none`): every analysed turn gets exactly one final response, partial reports
//! are marked, actions are echoed, bad queries get errors naming the field, and
//! terminated queries still finish exactly once.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

fn run(args: &[&str], input: impl AsRef<[u8]>) -> Vec<Value> {
    // The protocol is under test: the classical judgement answers fast.
    run_logged(&[&["--model", "none"], args].concat(), input, "error").0
}

/// `tengen analysis ARGS` over `input` with the log at `log`: the response lines and the log.
fn run_logged(args: &[&str], input: impl AsRef<[u8]>, log: &str) -> (Vec<Value>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("analysis")
        .args(args)
        .env("RUST_LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tengen runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_ref())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[cfg(feature = "bundled-net")]
#[test]
fn without_a_model_the_bundled_network_analyses() {
    let input = [
        r#"{"id":"m","action":"query_models"}"#,
        r#"{"id":"q","moves":[["B","E5"]],"rules":"chinese","komi":7,"boardXSize":9,"boardYSize":9,"maxVisits":8}"#,
    ]
    .join("\n");
    let (out, log) = run_logged(&[], format!("{input}\n"), "info");
    assert!(
        log.contains("network: the bundled network g170-b6c96")
            && log.contains("loaded model g170-b6c96"),
        "{log}"
    );
    let models = &out.iter().find(|v| v["id"] == "m").unwrap()["models"];
    assert_eq!(models[0]["internalName"], "g170-b6c96", "{models}");
    let q = out.iter().find(|v| v["id"] == "q").unwrap();
    assert!(q["rootInfo"]["winrate"].is_number(), "{q}");
}

#[test]
fn every_turn_gets_one_final_response() {
    let q = r#"{"id":"foo","initialStones":[["B","Q4"],["B","C4"]],"moves":[["W","P5"],["B","P6"]],"rules":"tromp-taylor","komi":7.5,"boardXSize":19,"boardYSize":19,"analyzeTurns":[0,1,2],"maxVisits":30,"includeOwnership":true,"includePolicy":true,"includePVVisits":true}"#;
    let out = run(&[], format!("{q}\n"));
    assert_eq!(out.len(), 3, "{out:?}");
    let mut turns: Vec<u64> = out
        .iter()
        .map(|v| v["turnNumber"].as_u64().unwrap())
        .collect();
    turns.sort();
    assert_eq!(turns, vec![0, 1, 2]);
    for v in &out {
        assert_eq!(v["id"], "foo");
        assert_eq!(v["isDuringSearch"], false);
        let infos = v["moveInfos"].as_array().unwrap();
        assert!(!infos.is_empty());
        assert_eq!(infos[0]["order"], 0);
        for key in [
            "move",
            "visits",
            "winrate",
            "scoreLead",
            "scoreMean",
            "prior",
            "utility",
            "lcb",
            "utilityLcb",
            "pv",
            "pvVisits",
            "edgeVisits",
            "pvEdgeVisits",
            "weight",
            "edgeWeight",
        ] {
            assert!(!infos[0][key].is_null(), "{key} missing");
        }
        let root = &v["rootInfo"];
        assert_eq!(root["visits"], 30);
        assert_eq!(root["thisHash"].as_str().unwrap().len(), 32);
        assert_eq!(v["ownership"].as_array().unwrap().len(), 361);
        assert_eq!(v["policy"].as_array().unwrap().len(), 362);
    }
    // Turn 0: White to move (the first move is White's); turn 2: White again.
    let by_turn: HashMap<u64, &Value> = out
        .iter()
        .map(|v| (v["turnNumber"].as_u64().unwrap(), v))
        .collect();
    assert_eq!(by_turn[&0]["rootInfo"]["currentPlayer"], "W");
    assert_eq!(by_turn[&1]["rootInfo"]["currentPlayer"], "B");
}

#[test]
fn actions_errors_and_warnings_have_katagos_shapes() {
    let input = [
        r#"{"id":"a","action":"query_version"}"#,
        r#"{"id":"b","action":"clear_cache"}"#,
        r#"{"id":"c","action":"query_models"}"#,
        r#"{"id":"d","action":"fly"}"#,
        r#"not json at all"#,
        r#"[1,2]"#,
        r#"{"moves":[]}"#,
        r#"{"id":"e","moves":[["B","Z99"]],"rules":"chinese","boardXSize":9,"boardYSize":9}"#,
        r#"{"id":"f","moves":[],"rules":"chinese","boardXSize":0,"boardYSize":9}"#,
        r#"{"id":"g","moves":[],"rules":"nonsense","boardXSize":9,"boardYSize":9}"#,
        r#"{"id":"h","moves":[["B","E5"],["W","E5"]],"rules":"chinese","boardXSize":9,"boardYSize":9}"#,
        r#"{"id":"i","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":5,"frobnicate":true}"#,
        r#"{"id":"l","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":5,"overrideSettings":{"humanSLProfile":"rank_3d","cpuctExploration":0.9}}"#,
    ]
    .join("\n");
    let mut bytes = format!("{input}\n").into_bytes();
    bytes.extend_from_slice(b"{\"id\":\"u\",\"moves\":[[\"B\",\"\xff\xfe\"]]}\n");
    bytes.extend_from_slice(&vec![b' '; 1 << 20]);
    bytes.extend_from_slice(b"{\"id\":\"big\"}\n");
    bytes.extend_from_slice(br#"{"id":"j","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":1e300}"#);
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(
        br#"{"id":"k","moves":[],"rules":"chinese","komi":"seven","boardXSize":9,"boardYSize":9}"#,
    );
    bytes.extend_from_slice(b"\n");
    let out = run(&[], bytes);
    let find = |id: &str| out.iter().filter(|v| v["id"] == id).collect::<Vec<_>>();
    assert_eq!(find("a")[0]["action"], "query_version");
    assert!(find("a")[0]["version"].is_string());
    assert_eq!(find("b")[0]["action"], "clear_cache");
    assert!(find("c")[0]["models"].is_array());
    assert_eq!(find("d")[0]["field"], "action");
    let general: Vec<_> = out.iter().filter(|v| v["id"].is_null()).collect();
    assert_eq!(general.len(), 4, "{general:?}");
    assert!(general.iter().all(|v| v["error"].is_string()));
    assert_eq!(find("e")[0]["field"], "moves");
    assert_eq!(find("f")[0]["field"], "boardXSize");
    assert_eq!(find("g")[0]["field"], "rules");
    assert_eq!(find("h")[0]["field"], "moves");
    let i = find("i");
    assert_eq!(i[0]["warning"], "unknown field");
    assert_eq!(i[0]["field"], "frobnicate");
    assert_eq!(i[1]["isDuringSearch"], false);
    assert!(find("u")[0]["error"].is_string());
    assert!(out
        .iter()
        .any(|v| v["error"].as_str().is_some_and(|e| e.contains("too long"))));
    assert_eq!(find("j")[0]["field"], "maxVisits");
    assert_eq!(find("k")[0]["field"], "komi");
    let l = find("l");
    assert!(
        l[0]["warning"].as_str().unwrap().contains("human SL model"),
        "{l:?}"
    );
    assert_eq!(l.len(), 2, "the query still runs: {l:?}");
}

#[test]
fn partial_reports_then_exactly_one_final() {
    let q = r#"{"id":"p","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":3000,"reportDuringSearchEvery":0.01}"#;
    let out = run(&[], format!("{q}\n"));
    let partial = out.iter().filter(|v| v["isDuringSearch"] == true).count();
    let finals: Vec<_> = out
        .iter()
        .filter(|v| v["isDuringSearch"] == false)
        .collect();
    assert!(partial >= 1, "no partial report");
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0]["rootInfo"]["visits"], 3000);
}

#[test]
fn terminated_queries_finish_exactly_once() {
    // Many queued queries, some terminated by id or turn, then all of them.
    let mut input = String::new();
    for i in 0..40 {
        input.push_str(&format!(
            r#"{{"id":"q{i}","moves":[["B","E5"],["W","C3"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1,2],"maxVisits":200}}"#
        ));
        input.push('\n');
        if i % 7 == 3 {
            input.push_str(&format!(
                r#"{{"id":"t{i}","action":"terminate","terminateId":"q{i}","turnNumbers":[1]}}"#
            ));
            input.push('\n');
        }
    }
    input.push_str(r#"{"id":"all","action":"terminate_all"}"#);
    input.push('\n');
    let out = run(&["--analysis-threads", "2"], input);
    let mut finals: HashMap<(String, u64), usize> = HashMap::new();
    for v in &out {
        if v["isDuringSearch"] == false && v["turnNumber"].is_u64() {
            let key = (
                v["id"].as_str().unwrap().to_string(),
                v["turnNumber"].as_u64().unwrap(),
            );
            *finals.entry(key).or_default() += 1;
        }
    }
    assert_eq!(finals.len(), 120, "every (query, turn) answered");
    assert!(finals.values().all(|&n| n == 1), "one final response each");
    assert!(
        out.iter().any(|v| v["noResults"] == true),
        "terminated queued queries say so"
    );
    assert!(out.iter().any(|v| v["action"] == "terminate_all"));
}

#[test]
fn quit_without_waiting_drops_the_queue() {
    let mut input = String::new();
    for i in 0..20 {
        input.push_str(&format!(
            r#"{{"id":"q{i}","moves":[],"rules":"chinese","boardXSize":19,"boardYSize":19,"maxVisits":100000}}"#
        ));
        input.push('\n');
    }
    let start = std::time::Instant::now();
    let out = run(&["-quit-without-waiting"], input);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    assert!(out.len() <= 1, "{} responses", out.len());
}

#[test]
fn a_turn_after_both_passed_is_analysed_as_if_play_went_on() {
    // KataGo answers for a finished game too: a client reviewing a record's last turn
    // gets candidate moves, not an error.
    let q = r#"{"id":"end","moves":[["B","E5"],["W","pass"],["B","pass"]],"rules":"chinese","komi":7,"boardXSize":9,"boardYSize":9,"analyzeTurns":[3],"maxVisits":20}"#;
    let out = run(&[], format!("{q}\n"));
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].get("error").is_none(), "{}", out[0]);
    assert_eq!(out[0]["turnNumber"], 3);
    assert!(
        out[0]["rootInfo"]["visits"].as_u64().unwrap() >= 20,
        "{}",
        out[0]
    );
    assert!(
        out[0]["moveInfos"].as_array().unwrap().len() > 1,
        "{}",
        out[0]
    );
}

#[test]
fn a_query_over_the_move_limit_is_too_large_and_the_next_is_answered() {
    let moves: Vec<Value> = (0..10_001)
        .map(|i| serde_json::json!([if i % 2 == 0 { "B" } else { "W" }, "pass"]))
        .collect();
    let big = serde_json::json!({"id":"big","moves":moves,"rules":"chinese","boardXSize":19,
                                 "boardYSize":19,"analyzeTurns":[0]});
    let small = r#"{"id":"small","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":5}"#;
    let out = run(&[], format!("{big}\n{small}\n"));
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(out[0]["id"], "big");
    assert_eq!(out[0]["field"], "moves");
    let e = out[0]["error"].as_str().unwrap();
    assert!(e.starts_with("query too large"), "{e}");
    assert_eq!(out[1]["id"], "small");
    assert_eq!(out[1]["isDuringSearch"], false);
}

#[test]
fn a_flood_gets_queue_full_for_the_excess_and_the_rest_is_answered() {
    // Each query holds a position for each of its 11 turns (about 0.35 MB), so a 1 MB
    // queue takes two or three at a time, and the flood arrives faster than they finish.
    let mut input = String::new();
    for i in 0..20 {
        input.push_str(&format!(
            r#"{{"id":"f{i}","moves":[["B","C3"],["W","G7"],["B","C7"],["W","G3"],["B","E5"],["W","E3"],["B","D3"],["W","F3"],["B","E7"],["W","D7"]],"rules":"chinese","boardXSize":9,"boardYSize":9,"analyzeTurns":[0,1,2,3,4,5,6,7,8,9,10],"maxVisits":50}}"#
        ));
        input.push('\n');
    }
    let out = run(&["--max-queue-mb", "1"], input);
    let (mut answered, mut full) = (0, 0);
    for i in 0..20 {
        let id = format!("f{i}");
        let mine: Vec<&Value> = out.iter().filter(|v| v["id"] == id.as_str()).collect();
        let errors: Vec<&&Value> = mine.iter().filter(|v| v["error"].is_string()).collect();
        if errors.is_empty() {
            let mut turns: Vec<u64> = mine
                .iter()
                .filter(|v| v["isDuringSearch"] == false)
                .map(|v| v["turnNumber"].as_u64().unwrap())
                .collect();
            turns.sort();
            assert_eq!(turns, (0..=10).collect::<Vec<u64>>(), "{id}: {mine:?}");
            answered += 1;
        } else {
            assert_eq!(mine.len(), 1, "{id} refused whole: {mine:?}");
            let e = errors[0]["error"].as_str().unwrap();
            assert!(e.starts_with("queue full"), "{e}");
            full += 1;
        }
    }
    assert!(answered >= 2, "{answered} answered");
    assert!(full >= 1, "{full} refused");
}

#[test]
fn an_overlong_line_is_skipped_unstored_and_the_engine_goes_on() {
    let mut bytes = vec![b'['; 8 << 20];
    bytes.push(b'\n');
    bytes.extend_from_slice(
        br#"{"id":"after","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"maxVisits":5}"#,
    );
    bytes.push(b'\n');
    let out = run(&[], bytes);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(
        out[0]["error"].as_str().unwrap().contains("line too long"),
        "{}",
        out[0]
    );
    assert_eq!(out[1]["id"], "after");
    assert_eq!(out[1]["isDuringSearch"], false);
}
