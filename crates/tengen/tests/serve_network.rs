//! `tengen serve` with a network: the backend settled at start-up (ONNX Runtime down its
//! provider chain, else tract) is logged and published on `status`; the graph built from
//! the model is cached in the state directory, used on the next start, and rebuilt when
//! the cached file is damaged. Needs mosquitto and ../shared's b6c96; skipped without.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::shared::shared_model;

use serde_json::Value;
use support::mqtt::{setup, Daemon, Observer};

fn engine_config(model: &Path, providers: &str) -> String {
    format!(
        "[engine]\nmodel = \"{}\"\nbackend = \"ort\"\nproviders = {providers}\nthreads = 1\n\
         visits = 8\n[game]\nsize = 9\nengine = \"none\"\n",
        model.display()
    )
}

/// Stops the daemon as systemd would; its log.
fn stop(mut d: Daemon) -> String {
    assert!(
        d.terminate(Duration::from_secs(10)).success(),
        "{}",
        d.log()
    );
    d.log()
}

/// The ONNX files in the state directory's cache.
fn cached(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("state/cache"))
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == "onnx"));
    v.sort();
    v
}

/// The engine answers a genmove through the GTP pass-through (the network works).
fn plays(obs: &Observer, id: &str) {
    let from = obs.count();
    obs.publish(
        "command",
        format!(r#"{{"cmd":"gtp","line":"genmove b","id":"{id}"}}"#),
    );
    let (_, reply) = obs.wait(from, "gtp/reply", |r| r["id"] == id);
    assert_eq!(reply["ok"], true, "{reply}");
    assert!(reply["text"].as_str().unwrap().len() >= 2, "{reply}");
}

/// The GTP pass-through may run `genmove` (by default it may not).
const ALL_GTP: &str = "gtp_commands = [\"*\"]\n";

#[test]
fn gpu_chain_falls_back_to_tract_and_the_graph_cache_survives_restarts() {
    let Some(model) = shared_model() else { return };
    let Some((dir, broker)) = setup("gpu_chain_falls_back") else {
        return;
    };
    let cfg = engine_config(&model, r#"["tensorrt", "cuda"]"#);
    let obs = Observer::connect(broker.port, "obs");

    // First start: no GPU here, so the chain ends on tract, and the status says why.
    let daemon = Daemon::start_with(dir.path(), broker.port, ALL_GTP, &cfg);
    let (_, status) = obs.wait(0, "status", |s| s["network"].is_object());
    let net = &status["network"];
    assert_eq!(net["backend"], "tract", "{status}");
    assert!(
        net["runs_on"].as_str().unwrap().starts_with("tract"),
        "{status}"
    );
    let passed: Vec<&str> = net["passed_over"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(passed.len(), 1, "{status}");
    assert!(passed[0].starts_with("ONNX Runtime: "), "{status}");
    if cfg!(feature = "ort") && std::env::var_os("ORT_DYLIB_PATH").is_some() {
        // The library loaded; each GPU provider was tried and named.
        assert!(
            passed[0].contains("TensorRT:0 FP16") || passed[0].contains("TensorRT:0"),
            "{status}"
        );
        assert!(passed[0].contains("CUDA:0"), "{status}");
    }
    plays(&obs, "a");
    let log = stop(daemon);
    assert!(log.contains("falling back to tract"), "{log}");
    let files = cached(dir.path());
    // The start-up size (19x19) and the game's (9x9).
    assert_eq!(files.len(), 2, "{files:?}");
    let stamps: Vec<_> = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
        .collect();

    // Second start: the graphs come from the cache, untouched.
    let from = obs.count();
    let daemon = Daemon::start_with(dir.path(), broker.port, ALL_GTP, &cfg);
    obs.wait(from, "status", |s| s["network"]["backend"] == "tract");
    plays(&obs, "b");
    let log = stop(daemon);
    assert_eq!(log.matches("from the cache").count(), 2, "{log}");
    assert_eq!(cached(dir.path()), files);
    for (f, t) in files.iter().zip(&stamps) {
        assert_eq!(std::fs::metadata(f).unwrap().modified().unwrap(), *t);
    }

    // A damaged cache (a power cut under a careless writer, a bad sector) is rebuilt.
    for f in &files {
        std::fs::write(f, b"not an onnx graph").unwrap();
    }
    let from = obs.count();
    let daemon = Daemon::start_with(dir.path(), broker.port, ALL_GTP, &cfg);
    obs.wait(from, "status", |s| s["network"]["backend"] == "tract");
    plays(&obs, "c");
    let log = stop(daemon);
    assert_eq!(
        log.matches("discarding the cached graph").count(),
        2,
        "{log}"
    );
    let rebuilt = cached(dir.path());
    assert_eq!(rebuilt, files);
    for f in &rebuilt {
        assert!(std::fs::metadata(f).unwrap().len() > 100_000, "{f:?}");
    }
}

#[test]
fn onnx_runtime_runs_the_network_when_its_provider_starts() {
    let Some(model) = shared_model() else { return };
    if !cfg!(feature = "ort") || std::env::var_os("ORT_DYLIB_PATH").is_none() {
        println!("skipped: needs the `ort` feature and ORT_DYLIB_PATH");
        return;
    }
    let Some((dir, broker)) = setup("onnx_runtime_runs_the_network") else {
        return;
    };
    let obs = Observer::connect(broker.port, "obs");
    let daemon = Daemon::start_with(
        dir.path(),
        broker.port,
        ALL_GTP,
        &engine_config(&model, r#"["cpu"]"#),
    );
    let (_, status) = obs.wait(0, "status", |s| s["network"].is_object());
    let net: &Value = &status["network"];
    assert_eq!(net["backend"], "ort", "{status}");
    assert_eq!(net["runs_on"], "ort CPU", "{status}");
    assert_eq!(net["passed_over"].as_array().unwrap().len(), 0, "{status}");
    plays(&obs, "a");
    stop(daemon);
}

/// A copy of a committed test net whose first block has a kind no KataGo release writes:
/// a network Tengen reads up to that block and cannot run.
fn unrunnable_net(dir: &Path) -> PathBuf {
    use std::io::{Read, Write};
    let good = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../nn/tests/nets/t-b3c32-v15.bin.gz"
    );
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(good).unwrap())
        .read_to_end(&mut raw)
        .unwrap();
    let at = raw
        .windows(14)
        .position(|w| w == b"ordinary_block")
        .expect("the test net has an ordinary block");
    raw[at..at + 14].copy_from_slice(b"quantumz_block");
    let path = dir.join("odd.bin.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(&raw).unwrap();
    gz.finish().unwrap();
    path
}

#[test]
fn an_unrunnable_network_leaves_the_daemon_up_and_says_why() {
    let Some((dir, broker)) = setup("an_unrunnable_network") else {
        return;
    };
    let cfg = format!(
        "[engine]\nmodel = \"{}\"\nthreads = 1\nvisits = 8\n[game]\nsize = 9\nengine = \"none\"\n",
        unrunnable_net(dir.path()).display()
    );
    let obs = Observer::connect(broker.port, "obs");
    let mut daemon = Daemon::start_with(dir.path(), broker.port, ALL_GTP, &cfg);
    let stand_in = if cfg!(feature = "bundled-net") {
        "playing with the bundled network"
    } else {
        "playing with the classical engine"
    };

    // The maker hears which part cannot run, and what plays meanwhile.
    let (_, alert) = obs.wait(0, "alert", |a| a["source"] == "engine");
    let message = alert["message"].as_str().unwrap();
    assert!(
        message.contains("unsupported block kind \"quantumz_block\""),
        "{alert}"
    );
    assert!(message.contains(stand_in), "{alert}");
    let (_, status) = obs.wait(0, "status", |s| s["engine_error"].is_string());
    assert_eq!(status["engine_error"], alert["message"], "{status}");

    // The board still plays, and the daemon stays up.
    plays(&obs, "a");
    assert!(daemon.alive(), "{}", daemon.log());
    let log = stop(daemon);
    assert!(log.contains("cannot run the network"), "{log}");
    eprintln!("unrunnable network: the daemon stayed up; alert: {message}");
}
