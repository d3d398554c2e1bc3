//! The reference data beside the repository (`../shared`, or `$TENGEN_SHARED`).
// Each test crate uses its own subset of the helpers.
#![allow(dead_code)]

use std::path::PathBuf;

/// The b6c96 network from ../shared (or `$TENGEN_SHARED`), or `None` after saying the
/// test is skipped.
pub fn shared_model() -> Option<PathBuf> {
    let dir = std::env::var_os("TENGEN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")));
    let model = dir.join("models/g170-b6c96.bin.gz");
    if model.is_file() {
        Some(model)
    } else {
        println!("skipped: {} not found", model.display());
        None
    }
}
