//! Helpers shared by the integration tests and benchmarks.

pub mod backend;
pub mod config;
pub mod http;
pub mod mqtt;
pub mod process;
pub mod serial;
pub mod shared;

/// Fails the test when a tool it needs is missing under CI (`CI` set), where
/// tests/run.sh installs every tool; elsewhere the caller skips.
pub fn require_under_ci(found: bool, tool: &str) {
    if !found && std::env::var_os("CI").is_some() {
        panic!("{tool} is not installed; under CI every test runs (tests/run.sh installs it)");
    }
}
