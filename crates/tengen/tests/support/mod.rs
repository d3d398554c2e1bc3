//! Helpers shared by the integration tests and benchmarks.

pub mod backend;
pub mod config;
pub mod http;
pub mod mqtt;
pub mod process;
pub mod serial;
pub mod shared;
