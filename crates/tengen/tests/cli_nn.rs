//! `tengen convert` and `tengen bench nn` driven as a user would: the real binary, real model
//! files from ../shared, and bad inputs that must end in a clear error, not a panic.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use support::shared::shared_model;

use tengen_nn::onnx::load::{load_path, DEFAULT_MAX_MODEL_BYTES};

fn tengen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("tengen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts a failed run with a message and without a panic.
fn assert_clean_failure(out: &Output, needle: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "expected failure, stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
}

fn convert(model: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "convert",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    tengen(&args)
}

#[test]
fn convert_writes_graphs_the_loader_accepts() {
    let Some(model) = shared_model() else { return };
    let dir = tempfile::tempdir().unwrap();

    let masked = dir.path().join("b6.onnx");
    let out = convert(&model, &masked, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let loaded = load_path(&masked, DEFAULT_MAX_MODEL_BYTES).expect("masked graph loads");
    let m = &loaded.metadata;
    assert_eq!((m.nn_x_len, m.nn_y_len), (19, 19));
    assert!(!m.require_exact_nn_len);
    assert_eq!(m.model_version, 8);

    let exact = dir.path().join("b6-9x13.onnx.gz");
    let out = convert(
        &model,
        &exact,
        &["--board", "9x13", "--exact", "--name", "nine"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&exact).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "written gzip-compressed");
    let loaded = load_path(&exact, DEFAULT_MAX_MODEL_BYTES).expect("gzip graph loads");
    let m = &loaded.metadata;
    assert_eq!((m.nn_x_len, m.nn_y_len), (9, 13));
    assert!(m.require_exact_nn_len);
    assert_eq!(m.name, "nine");

    // Only the two graphs: no temporary file is left behind.
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["b6-9x13.onnx.gz", "b6.onnx"]);
}

#[test]
fn convert_rejects_bad_input_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("x.onnx");

    let out = convert(&dir.path().join("missing.bin.gz"), &out_path, &[]);
    assert_clean_failure(&out, "missing.bin.gz");

    let garbage = dir.path().join("garbage.bin.gz");
    std::fs::write(&garbage, b"\x1f\x8b\x08\x00 this is not a model").unwrap();
    let out = convert(&garbage, &out_path, &[]);
    assert_clean_failure(&out, "garbage.bin.gz");

    let text_model = dir.path().join("short.txt");
    std::fs::write(&text_model, b"mymodel 8\n22 19\n").unwrap();
    let out = convert(&text_model, &out_path, &[]);
    assert_clean_failure(&out, "short.txt");
    assert!(!out_path.exists(), "nothing written for a bad model");

    if let Some(model) = shared_model() {
        for board in ["abc", "30x30", "1"] {
            let out = convert(&model, &out_path, &["--board", board]);
            assert_clean_failure(&out, "board");
        }
    }
}

#[test]
fn bench_nn_prints_one_row_per_configuration() {
    let Some(model) = shared_model() else { return };
    let out = tengen(&[
        "bench",
        "nn",
        "--model",
        model.to_str().unwrap(),
        "--board",
        "9",
        "--batch",
        "1,2",
        "--threads",
        "1",
        "--seconds",
        "0.2",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("9x9")).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    for (row, batch) in rows.iter().zip(["1", "2"]) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[..4], ["9x9", "tract", "1", batch], "{row}");
        let rate: f64 = cols[4].parse().unwrap();
        assert!(rate > 0.0, "{row}");
        // The share of the core's peak, where the CPU's peak could be measured.
        if let Some(share) = cols[5].strip_suffix('%') {
            assert!(share.parse::<f64>().unwrap() > 0.0, "{row}");
        } else {
            assert_eq!(cols[5], "-", "{row}");
        }
    }
    assert!(stdout.contains("core(s)"), "{stdout}");
    assert!(stdout.contains("backends: tract"), "{stdout}");

    let out = tengen(&[
        "bench",
        "nn",
        "--model",
        model.to_str().unwrap(),
        "--backend",
        "gpu9",
    ]);
    assert_clean_failure(&out, "unknown backend");
}

/// With ONNX Runtime, a GPU chain on this GPU-less machine falls back to the CPU and says so;
/// an unknown provider is refused.
#[cfg(feature = "ort")]
#[test]
fn bench_nn_ort_falls_back_to_the_cpu() {
    let Some(model) = shared_model() else { return };
    if std::env::var_os("ORT_DYLIB_PATH").is_none_or(|p| p.is_empty()) {
        println!("skipped: ORT_DYLIB_PATH is not set");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "bench",
        "nn",
        "--model",
        model.to_str().unwrap(),
        "--board",
        "9",
        "--batch",
        "1",
        "--seconds",
        "0.2",
        "--rounds",
        "1",
        "--backend",
        "ort",
    ];
    let cache = dir.path().to_str().unwrap();
    let mut args = base.to_vec();
    args.extend_from_slice(&[
        "--ort-providers",
        "tensorrt,cuda",
        "--ort-fp16",
        "--ort-trt-cache",
        cache,
    ]);
    let out = tengen(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("backends: ort CPU"), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.starts_with("9x9")).collect();
    assert_eq!(rows.len(), 1, "{stdout}");

    let mut args = base.to_vec();
    args.extend_from_slice(&["--ort-providers", "npu"]);
    assert_clean_failure(&tengen(&args), "unknown ONNX Runtime provider");
}

/// The native backend benches beside tract; given an ONNX graph, which has no KataGo
/// layers to run, it says so.
#[test]
fn bench_nn_runs_the_native_backend_and_it_declines_onnx_files() {
    let Some(model) = shared_model() else { return };
    let model = model.to_str().unwrap();
    let args = [
        "bench",
        "nn",
        "--model",
        model,
        "--board",
        "9",
        "--batch",
        "2",
        "--threads",
        "2",
        "--seconds",
        "0.2",
        "--rounds",
        "1",
        "--backend",
        "native,tract",
    ];
    let out = tengen(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("9x9"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert_eq!(rows[0][..4], ["9x9", "native", "2", "2"], "{stdout}");
    assert!(rows[0][4].parse::<f64>().unwrap() > 0.0, "{stdout}");
    // Which kernels run is the CPU's (the default precision takes int16 where it can; the
    // int16 test below checks which).
    assert!(
        [
            "native AVX2",
            "native portable",
            "native AVX-512 VNNI int16"
        ]
        .iter()
        .any(|name| stdout.contains(name)),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("b6.onnx");
    let out = convert(Path::new(model), &onnx, &["--board", "9"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut args = args.to_vec();
    args[3] = onnx.to_str().unwrap();
    *args.last_mut().unwrap() = "native";
    assert_clean_failure(&tengen(&args), "native backend runs KataGo model files");
}

/// `--precision int16` runs the native backend's GEMMs in 16-bit integers where the CPU
/// has AVX-512 VNNI and says it runs fp32 where not; tract, which has no int16 path, says
/// so and runs fp32; an unknown precision is a clean failure.
#[test]
fn bench_nn_runs_int16_on_the_native_backend_where_the_cpu_has_it() {
    let Some(model) = shared_model() else { return };
    let model = model.to_str().unwrap();
    let run = |backend: &str, precision: &str| {
        tengen(&[
            "bench",
            "nn",
            "--model",
            model,
            "--board",
            "9",
            "--batch",
            "1",
            "--threads",
            "1",
            "--seconds",
            "0.2",
            "--rounds",
            "1",
            "--backend",
            backend,
            "--precision",
            precision,
        ])
    };
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let vnni = cfg!(target_arch = "x86_64")
        && ["avx2", "fma", "avx512f", "avx512bw", "avx512_vnni"]
            .iter()
            .all(|f| cpuinfo.split_whitespace().any(|w| w == *f));
    let out = run("native", "int16");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let row = stdout.lines().find(|l| l.starts_with("9x9")).unwrap_or("");
    assert!(
        row.split_whitespace()
            .nth(4)
            .and_then(|v| v.parse::<f64>().ok())
            > Some(0.0)
    );
    if vnni {
        assert!(stdout.contains("native AVX-512 VNNI int16"), "{stdout}");
    } else {
        assert!(!stdout.contains("int16"), "{stdout}");
        assert!(stderr.contains("no AVX-512 VNNI"), "{stderr}");
    }

    let out = run("tract", "int16");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("does not run int16"),
        "{}",
        text(&out.stderr)
    );

    assert_clean_failure(&run("native", "int4"), "unknown precision");
}

#[test]
fn bench_nn_feeds_a_human_sl_net_its_metadata_on_every_backend() {
    let net = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../nn/tests/nets/t-b2c48nbt-meta.bin.gz"
    );
    let out = tengen(&[
        "bench",
        "nn",
        "--model",
        net,
        "--board",
        "9",
        "--batch",
        "1,2",
        "--backend",
        "tract,native",
        "--seconds",
        "0.2",
        "--rounds",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let rows = stdout.lines().filter(|l| l.starts_with("9x9")).count();
    assert_eq!(rows, 4, "{stdout}");
}
