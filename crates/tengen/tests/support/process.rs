//! What the tests read of a running process.

#![allow(dead_code)]

/// The resident memory of process `pid`, in MB (`VmRSS` in `/proc/<pid>/status`).
pub fn rss_mb(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = s.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}
