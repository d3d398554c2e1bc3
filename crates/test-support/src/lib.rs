//! Test helpers for the shared reference data (KataGo's and Pgx's golden records and the
//! real networks), which lives outside the repository: finding it, skipping a test that
//! needs it when it is absent, and the `golden <set>: <agreed>/<total> agree` line.
//!
//! `TENGEN_SHARED` names the directory; without it, `../shared` beside the repository is
//! used. `TENGEN_REQUIRE_GOLDEN=1` turns every skip for missing shared data into a test
//! failure that says what is missing, so a run that should have the data cannot pass
//! without checking against it.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The variable naming the shared directory.
pub const SHARED_VAR: &str = "TENGEN_SHARED";

/// The variable that, set to `1`, makes a missing piece of shared data a failure.
pub const REQUIRE_VAR: &str = "TENGEN_REQUIRE_GOLDEN";

/// The variable that, set to `k`, runs only every k-th golden position.
pub const STRIDE_VAR: &str = "TENGEN_GOLDEN_STRIDE";

/// Where the shared data is expected: `$TENGEN_SHARED`, else `../shared` beside the
/// repository. Whether it is there is not checked.
pub fn shared_root() -> PathBuf {
    match std::env::var_os(SHARED_VAR) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// Whether `TENGEN_REQUIRE_GOLDEN=1` asks for the shared data to be present.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v.trim() == "1")
}

/// Says that `what` (a test, or a golden set as `golden <set>`) is skipped because of
/// `why`: a line `<what>: skipped (<why>)`, or, under `TENGEN_REQUIRE_GOLDEN=1`, a panic
/// that fails the test and says so.
pub fn skip(what: &str, why: &str) {
    if required() {
        panic!("{what}: {REQUIRE_VAR}=1 but {why}");
    }
    println!("{what}: skipped ({why})");
}

/// The path of `rel` (e.g. `golden` or `models/g170-b6c96.bin.gz`) in the shared
/// directory if it exists; otherwise `None`, after [`skip`] has said why for `what`.
pub fn shared_path(what: &str, rel: &str) -> Option<PathBuf> {
    let path = shared_root().join(rel);
    if path.exists() {
        return Some(path);
    }
    skip(
        what,
        &format!(
            "the shared reference data is missing at {}; set {SHARED_VAR}",
            path.display()
        ),
    );
    None
}

/// The shared directory if it holds every path of `needs`; otherwise `None`, after
/// [`skip`] has said for `what` which one is missing.
pub fn shared_dir(what: &str, needs: &[&str]) -> Option<PathBuf> {
    for rel in needs {
        shared_path(what, rel)?;
    }
    Some(shared_root())
}

/// The records of the golden JSONL file `golden/<file>`, or `None` after saying that the
/// set is skipped. A line that is not JSON fails the test: the data is damaged.
pub fn golden_records(file: &str) -> Option<Vec<Value>> {
    let what = format!("golden {file}");
    let path = shared_path(&what, &format!("golden/{file}"))?;
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            skip(&what, &format!("{}: {e}", path.display()));
            return None;
        }
    };
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("golden line is JSON"))
            .collect(),
    )
}

/// The summary line of a golden set: `golden <set>: <agreed>/<total> agree`.
pub fn golden_line(set: &str, agreed: usize, total: usize) -> String {
    format!("golden {set}: {agreed}/{total} agree")
}

/// Every k-th golden position with `TENGEN_GOLDEN_STRIDE=k` (CI's aarch64 run under
/// qemu, where each evaluation is a hundred times slower), else all of them.
pub fn stride() -> usize {
    std::env::var(STRIDE_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&k| k >= 1)
        .unwrap_or(1)
}

/// How a golden line says that only every k-th position ran (empty when all did).
pub fn stride_note() -> String {
    match stride() {
        1 => String::new(),
        k => format!(" (every {k}th position, {STRIDE_VAR})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_golden_line_has_its_fixed_shape() {
        assert_eq!(golden_line("a.jsonl", 3, 4), "golden a.jsonl: 3/4 agree");
    }
}
