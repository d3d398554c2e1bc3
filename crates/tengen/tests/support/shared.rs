//! The reference data beside the repository (`../shared`, or `$TENGEN_SHARED`).
// Each test crate uses its own subset of the helpers.
#![allow(dead_code)]

use std::path::PathBuf;

/// The b6c96 network from ../shared (or `$TENGEN_SHARED`), or `None` after saying the
/// test is skipped (a failure under `TENGEN_REQUIRE_GOLDEN=1`).
pub fn shared_model() -> Option<PathBuf> {
    tengen_test_support::shared_path("tests with the b6c96 network", "models/g170-b6c96.bin.gz")
}
