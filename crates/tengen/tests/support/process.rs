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

/// Sends SIGTERM, as systemd stops a service, and waits up to `limit` for `child` to
/// exit; its exit status.
pub fn terminate(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> std::process::ExitStatus {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let sent = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            println!("SIGTERM: exited after {:?}", sent.elapsed());
            return status;
        }
        assert!(
            sent.elapsed() < limit,
            "still running {limit:?} after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
