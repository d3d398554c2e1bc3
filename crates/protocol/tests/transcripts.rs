//! Transcript tests: command transcripts in `tests/gtp/*.txt` and `tests/analysis/*.txt`
//! (format: `transcript/mod.rs`) run in-process against the GTP engine and the analysis
//! engine, each over a deterministic evaluator (every legal move equally likely, value
//! from the area count), one search thread and small visit counts. Prints
//! `transcripts: <files> files, <agreed>/<total> commands agree`.
//!
//! A transcript in `tests/gtp` may set up its engine with `@visits N` (per move, default
//! 16), `@resign off`, `@classic LEVEL` (the classical engine plays and judges) and
//! `@rules NAME`; `loadsgf` reads only `tests/gtp/sgf`. One in `tests/analysis` with
//! `@visits N` (a query's default, 8), `@threads N` (analysis threads, 1),
//! `@perspective BLACK|WHITE|SIDETOMOVE` (BLACK) and `@queue BYTES`.

mod transcript;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tengen_protocol::analysis::{AnalysisEngine, Defaults, Perspective};
use tengen_protocol::gtp::{
    parse_line, Command, Decider, Engine, EngineConfig, LineError, Reply, SgfAccess,
};
use tengen_rules::Rules;
use tengen_search::{Evaluator, SearchParams, UniformEvaluator};
use transcript::{gtp_lines_match, json::check, Step, Transcript};

/// The longest a streaming command or an analysis response is waited for.
const PATIENCE: Duration = Duration::from_secs(30);

/// The runner's one door into the GTP engine, taking a line as the binary's session loop
/// does: a line as a controller sends it, and the reply as the controller reads it (ended
/// by its empty line), or `None` for a line GTP ignores. Streaming analysis reports once,
/// after its first interval (the `genmove` forms: once their move is chosen), where a
/// transport reports every interval until the next command arrives.
fn gtp_exchange(engine: &mut Engine, raw: &str) -> Option<String> {
    let line = match parse_line(raw)? {
        Ok(line) => line,
        Err(LineError::MissingCommand { id }) => {
            return Some(Reply::Failure("missing command".into()).format(id))
        }
        Err(e) => return Some(Reply::Failure(e.to_string()).format(None)),
    };
    let cmd = match Command::parse(&line.name, &line.args) {
        Ok(cmd) => cmd,
        Err(e) => return Some(Reply::Failure(e.to_string()).format(line.id)),
    };
    let Command::Analyze(kind, request) = &cmd else {
        return Some(engine.execute(&cmd).format(line.id));
    };
    let a = match engine.start_analysis(*kind, request) {
        Ok(a) => a,
        Err(e) => return Some(Reply::Failure(e).format(line.id)),
    };
    let mut out = format!("={}\n", line.id.map(|i| i.to_string()).unwrap_or_default());
    let started = Instant::now();
    if !a.genmove {
        std::thread::sleep(a.interval.min(Duration::from_secs(1)));
    }
    let report = loop {
        let done = if a.genmove {
            !engine.is_searching()
        } else {
            engine.analyze_line(&a).is_some()
        };
        if done || started.elapsed() > PATIENCE {
            break engine.analyze_line(&a);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    // An interval of 0 asks for no reports.
    if let Some(text) = report.filter(|_| !a.interval.is_zero()) {
        out.push_str(&text);
        out.push('\n');
    }
    if let Some(play) = engine.finish_analyze(&a) {
        out.push_str(&play);
        out.push('\n');
    }
    out.push('\n');
    Some(out)
}

/// The runner's one door into the analysis engine: a query line in, as the binary's loop
/// handles it; responses arrive on the engine's output.
fn analysis_exchange(engine: &AnalysisEngine, defaults: &Defaults, line: &str) {
    engine.handle_line(line, defaults, &json!([]));
}

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The transcripts of one kind (`gtp` or `analysis`), in name order.
fn transcripts(kind: &str) -> Vec<PathBuf> {
    let dir = tests_dir().join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
}

fn uniform_source() -> tengen_protocol::gtp::engine::EvaluatorSource {
    Box::new(|_| Ok(Arc::new(UniformEvaluator) as Arc<dyn Evaluator>))
}

fn one_thread() -> SearchParams {
    SearchParams {
        threads: 1,
        ..SearchParams::default()
    }
}

fn gtp_engine(setup: &[(String, String)]) -> Result<Engine, String> {
    let sgf_dir = tests_dir().join("gtp/sgf").canonicalize();
    let mut config = EngineConfig {
        params: one_thread(),
        visits: Some(16),
        sgf_access: SgfAccess::Within(sgf_dir.map_err(|e| format!("tests/gtp/sgf: {e}"))?),
        ..EngineConfig::default()
    };
    for (name, value) in setup {
        let bad = || format!("bad @{name} {value:?}");
        match name.as_str() {
            "visits" => config.visits = Some(value.parse().map_err(|_| bad())?),
            "resign" if value == "off" => config.resign_below = None,
            "classic" => {
                let level = value.parse().map_err(|_| bad())?;
                let classic = Arc::new(tengen_classic::Classic::new(level, config.params.seed));
                config.moves = Decider::Classic(classic.clone());
                config.status = Decider::Classic(classic);
            }
            "rules" => config.rules = Rules::parse(value).map_err(|_| bad())?,
            _ => return Err(format!("unknown set-up @{name}")),
        }
    }
    Engine::new(uniform_source(), config)
}

/// What one transcript came to: commands that agreed, and what went wrong.
#[derive(Default)]
struct Outcome {
    commands: usize,
    agreed: usize,
    failures: Vec<String>,
}

impl Outcome {
    fn record(&mut self, path: &Path, step: &Step, verdict: Result<(), String>) {
        self.commands += 1;
        match verdict {
            Ok(()) => self.agreed += 1,
            Err(why) => self.failures.push(format!(
                "{}:{}: > {}\n{why}",
                path.display(),
                step.line_no,
                step.command
            )),
        }
    }
}

fn run_gtp(path: &Path, t: &Transcript, out: &mut Outcome) -> Result<(), String> {
    let mut engine = gtp_engine(&t.setup)?;
    for step in &t.steps {
        if engine.quit_requested() {
            return Err(format!("line {}: a command after quit", step.line_no));
        }
        let verdict = match gtp_exchange(&mut engine, &step.command) {
            None if step.expected.is_empty() => Ok(()),
            None => Err("no reply (GTP ignores this line)".to_string()),
            Some(reply) => gtp_verdict(&step.expected, &reply),
        };
        out.record(path, step, verdict);
    }
    Ok(())
}

fn gtp_verdict(expected: &[String], reply: &str) -> Result<(), String> {
    let Some(body) = reply.strip_suffix("\n\n") else {
        return Err(format!(
            "the reply does not end with an empty line: {reply:?}"
        ));
    };
    let lines: Vec<&str> = body.split('\n').collect();
    if gtp_lines_match(expected, &lines)? {
        Ok(())
    } else {
        Err(format!("expected:\n{}\ngot:\n{body}", expected.join("\n")))
    }
}

/// Output shared between the analysis engine's threads and the runner.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Sink {
    /// The complete lines written so far.
    fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let text = String::from_utf8(bytes).expect("responses are UTF-8");
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete.lines().map(str::to_string).collect()
    }
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn run_analysis(path: &Path, t: &Transcript, out: &mut Outcome) -> Result<(), String> {
    let mut defaults = Defaults {
        params: one_thread(),
        max_visits: 8,
        max_playouts: None,
        pv_len: 5,
        max_time: None,
    };
    let (mut threads, mut perspective, mut queue) = (1, Perspective::Black, 64 << 20);
    for (name, value) in &t.setup {
        let bad = || format!("bad @{name} {value:?}");
        match name.as_str() {
            "visits" => defaults.max_visits = value.parse().map_err(|_| bad())?,
            "threads" => threads = value.parse().map_err(|_| bad())?,
            "perspective" => perspective = value.parse().map_err(|_| bad())?,
            "queue" => queue = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown set-up @{name}")),
        }
    }
    let sink = Sink::default();
    let engine = AnalysisEngine::new(
        uniform_source(),
        threads,
        perspective,
        Box::new(sink.clone()),
        queue,
    );
    let mut seen = 0;
    for step in &t.steps {
        analysis_exchange(&engine, &defaults, &step.command);
        let started = Instant::now();
        let mut lines = sink.lines();
        while lines.len() < seen + step.expected.len() && started.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(2));
            lines = sink.lines();
        }
        let got: Vec<String> = lines
            .into_iter()
            .skip(seen)
            .take(step.expected.len())
            .collect();
        seen += got.len();
        out.record(path, step, responses_verdict(&step.expected, &got));
    }
    engine.finish(true);
    let rest: Vec<String> = sink.lines().into_iter().skip(seen).collect();
    if rest.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "responses no command expected:\n{}",
            rest.join("\n")
        ))
    }
}

/// Whether the response lines match the patterns one to one, in any order.
fn responses_verdict(expected: &[String], got: &[String]) -> Result<(), String> {
    let patterns = expected
        .iter()
        .map(|p| serde_json::from_str(p).map_err(|e| format!("pattern {p}: {e}")))
        .collect::<Result<Vec<Value>, String>>()?;
    let responses = got
        .iter()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("response {l}: {e}")))
        .collect::<Result<Vec<Value>, String>>()?;
    let shown = || {
        format!(
            "expected:\n{}\ngot:\n{}",
            expected.join("\n"),
            got.join("\n")
        )
    };
    if responses.len() != patterns.len() {
        return Err(format!(
            "{} responses, expected {}\n{}",
            got.len(),
            expected.len(),
            shown()
        ));
    }
    let fits: Vec<Vec<bool>> = patterns
        .iter()
        .map(|p| responses.iter().map(|r| check(p, r).is_ok()).collect())
        .collect();
    let mut owner = vec![None; responses.len()];
    for (i, p) in patterns.iter().enumerate() {
        if !assign(i, &fits, &mut owner, &mut vec![false; responses.len()]) {
            let why: Vec<String> = responses.iter().filter_map(|r| check(p, r).err()).collect();
            return Err(format!(
                "no response left for {p} ({})\n{}",
                why.join("; "),
                shown()
            ));
        }
    }
    Ok(())
}

/// Gives pattern `i` a response, moving earlier patterns to others where needed (a
/// bipartite matching by augmenting paths): true if it found one.
fn assign(i: usize, fits: &[Vec<bool>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for r in 0..owner.len() {
        if fits[i][r] && !seen[r] {
            seen[r] = true;
            if owner[r].is_none_or(|j| assign(j, fits, owner, seen)) {
                owner[r] = Some(i);
                return true;
            }
        }
    }
    false
}

#[test]
fn transcripts_agree() {
    let mut files = 0;
    let mut all = Outcome::default();
    type Runner = fn(&Path, &Transcript, &mut Outcome) -> Result<(), String>;
    for (kind, run) in [("gtp", run_gtp as Runner), ("analysis", run_analysis)] {
        for path in transcripts(kind) {
            files += 1;
            let text = std::fs::read_to_string(&path).expect("a transcript is UTF-8");
            let result = Transcript::parse(&text).and_then(|t| run(&path, &t, &mut all));
            if let Err(e) = result {
                all.failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    println!(
        "transcripts: {files} files, {}/{} commands agree",
        all.agreed, all.commands
    );
    assert!(all.failures.is_empty(), "\n{}", all.failures.join("\n\n"));
    assert!(files >= 30, "only {files} transcripts");
}

#[test]
fn every_listed_command_has_a_transcript() {
    let mut engine = gtp_engine(&[]).expect("an engine");
    let listed = gtp_exchange(&mut engine, "list_commands").expect("a reply");
    let listed = listed.strip_prefix("= ").expect("list_commands succeeds");
    let mut used = std::collections::HashSet::new();
    for path in transcripts("gtp") {
        let text = std::fs::read_to_string(&path).expect("a transcript is UTF-8");
        let t = Transcript::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for step in &t.steps {
            let mut words = step.command.split_whitespace();
            let first = words.next().unwrap_or("");
            let name = if first.parse::<u64>().is_ok() {
                words.next().unwrap_or("")
            } else {
                first
            };
            used.insert(name.to_string());
        }
    }
    let missing: Vec<&str> = listed
        .split_whitespace()
        .filter(|c| !used.contains(*c))
        .collect();
    assert!(listed.split_whitespace().count() >= 40, "{listed}");
    assert!(missing.is_empty(), "no transcript sends {missing:?}");
}

#[test]
fn list_commands_leads_clients_to_kata_analyze() {
    let mut engine = gtp_engine(&[]).expect("an engine");
    let listed = gtp_exchange(&mut engine, "list_commands").expect("a reply");
    let listed: Vec<&str> = listed
        .strip_prefix("= ")
        .expect("list_commands succeeds")
        .lines()
        .filter(|l| !l.is_empty())
        .collect();
    // Sabaki takes the first of its preferences that the engine lists.
    let sabaki = ["analyze", "kata-analyze", "lz-analyze"]
        .into_iter()
        .find(|c| listed.contains(c));
    assert_eq!(sabaki, Some("kata-analyze"), "{listed:?}");
    // KataGo's commands come first, in the order of KataGo's list (1.17's `knownCommands`,
    // some of which Tengen lacks), then Tengen's own.
    let katago = "protocol_version name version known_command list_commands quit boardsize \
        rectangular_boardsize clear_board set_position komi get_komi play undo kata-get-rules \
        kata-set-rule kata-set-rules kata-get-models kata-get-param kata-set-param \
        kata-list-params kgs-rules genmove kata-search kata-search_cancellable genmove_debug \
        kata-search_debug clear_cache showboard fixed_handicap place_free_handicap \
        set_free_handicap time_settings kgs-time_settings time_left kata-list_time_settings \
        kata-time_settings final_score final_status_list loadsgf printsgf lz-genmove_analyze \
        kata-genmove_analyze kata-search_analyze kata-search_analyze_cancellable lz-analyze \
        kata-analyze kata-raw-nn kata-raw-human-nn cputime gomill-cpu_time kata-benchmark \
        kata-debug-print-tc debug_moves stop";
    let rank = |c: &str| katago.split_whitespace().position(|k| k == c);
    let ranks: Vec<Option<usize>> = listed.iter().map(|c| rank(c)).collect();
    let theirs = ranks.iter().take_while(|r| r.is_some()).count();
    assert!(theirs >= 40, "{listed:?}");
    assert!(ranks[theirs..].iter().all(Option::is_none), "{listed:?}");
    assert!(
        ranks[..theirs].windows(2).all(|w| w[0] < w[1]),
        "{listed:?}"
    );
    // The unlisted names still run.
    let reply = gtp_exchange(&mut engine, "genmove_analyze b 0").expect("a reply");
    assert!(reply.starts_with("=\nplay "), "{reply}");
}
