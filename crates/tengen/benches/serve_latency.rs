//! Latency of the appliance over MQTT: a board snapshot published → the engine's move, and
//! → the first analysis message, through a real mosquitto on loopback. Runs the classical
//! engine, and the b6c96 network from ../shared when it is there.
//!
//! `cargo bench -p tengen --bench serve_latency` (needs mosquitto).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use support::mqtt::{have, setup, Daemon, Observer, Rows};

/// Points played in turn on the 19x19 board (away from each other: no captures).
const POINTS: [&str; 12] = [
    "D4", "Q16", "D16", "Q4", "K10", "C10", "R10", "K3", "K17", "F6", "O14", "F14",
];

fn summary(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name}: n={} median {:.0} ms, p90 {:.0} ms, max {:.0} ms",
        ms.len(),
        pick(0.5),
        pick(0.9),
        ms[ms.len() - 1]
    );
}

/// Snapshot → first analysis of the new position (nobody's engine side: an analysis
/// station), one stone after another.
fn first_analysis(engine: &str) -> Vec<f64> {
    let (dir, broker) = setup("serve_latency").expect("mosquitto");
    let obs = Observer::connect(broker.port, "bench");
    let _d = Daemon::start(
        dir.path(),
        broker.port,
        &format!(
            "{engine}[game]\nsize = 19\nengine = \"none\"\n[board]\nstability = 1\n\
             [analysis]\nenabled = true\ninterval_ms = 100\nmax_visits = 400\n"
        ),
    );
    obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    let mut rows = Rows(vec![vec![b'.'; 19]; 19]);
    let mut out = Vec::new();
    for (i, p) in POINTS.iter().enumerate() {
        let c = if i % 2 == 0 { b'X' } else { b'O' };
        *at19(&mut rows, p) = c;
        // Let the previous position's analysis settle so each figure stands alone.
        std::thread::sleep(Duration::from_millis(300));
        let from = obs.count();
        let t0 = Instant::now();
        obs.publish("board/snapshot", rows.text());
        let (k, _) = obs.wait(from, "analysis", |a| a["number"] == i + 1);
        let t1 = obs.seen.lock().unwrap()[k].at;
        out.push((t1 - t0).as_secs_f64() * 1e3);
    }
    out
}

/// Snapshot of the player's stone → the engine's move, engine playing White.
fn engine_move(engine: &str) -> Vec<f64> {
    let (dir, broker) = setup("serve_latency").expect("mosquitto");
    let obs = Observer::connect(broker.port, "bench");
    let _d = Daemon::start(
        dir.path(),
        broker.port,
        &format!("{engine}[game]\nsize = 19\nengine = \"white\"\n[board]\nstability = 1\n"),
    );
    let (_, mut state) = obs.wait(0, "state", |s| s["moves"].as_array().is_some());
    let mut out = Vec::new();
    for (i, p) in POINTS.iter().enumerate().step_by(2) {
        let mut rows = rows19(&state);
        if *at19(&mut rows, p) != b'.' {
            continue;
        }
        *at19(&mut rows, p) = b'X';
        let from = obs.count();
        let t0 = Instant::now();
        obs.publish("board/snapshot", rows.text());
        let number = (i / 2) * 2 + 2;
        let (k, _) = obs.wait(from, "move", |m| m["number"] == number);
        let t1 = obs.seen.lock().unwrap()[k].at;
        out.push((t1 - t0).as_secs_f64() * 1e3);
        state = obs
            .wait(from, "state", |s| {
                s["moves"].as_array().is_some_and(|m| m.len() == number)
            })
            .1;
    }
    out
}

fn rows19(state: &serde_json::Value) -> Rows {
    Rows::of(state)
}

fn at19<'a>(rows: &'a mut Rows, point: &str) -> &'a mut u8 {
    let col = b"ABCDEFGHJKLMNOPQRST"
        .iter()
        .position(|&c| c == point.as_bytes()[0])
        .unwrap();
    let row: usize = point[1..].parse().unwrap();
    &mut rows.0[19 - row][col]
}

fn main() {
    // `cargo test --benches` runs this too: only measure when asked to bench.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    if !have("mosquitto") {
        println!("serve_latency skipped: mosquitto not installed");
        return;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("serve_latency on {cores} cores (19x19, snapshot published → message received)");
    let classic = "[engine]\nlevel = 10\nthreads = 2\n";
    summary("classical: first analysis", first_analysis(classic));
    summary("classical: engine move", engine_move(classic));
    // A measurement, not a test: without the network its figures are left out.
    let model = tengen_test_support::shared_root().join("models/g170-b6c96.bin.gz");
    if model.exists() {
        let net = format!(
            "[engine]\nmodel = \"{}\"\nbackend = \"tract\"\nthreads = 2\nbatch = 2\nvisits = 100\n",
            model.display()
        );
        summary("b6c96 (tract): first analysis", first_analysis(&net));
        summary("b6c96 (tract, 100 visits): engine move", engine_move(&net));
    } else {
        println!("b6c96 figures skipped: {} not found", model.display());
    }
}
