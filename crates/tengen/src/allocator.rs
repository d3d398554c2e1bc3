//! The allocator's set-up. Every search runs on threads of its own, and glibc gives each
//! new thread an arena of its own (up to eight per core) that keeps what it held once
//! the thread is gone: a daemon's memory then grew with the number of searches (40
//! short analyses, 55 MB to 446 MB). Two arenas are enough for threads that allocate
//! little on the hot path, and keep memory flat.
//!
//! Even so glibc keeps the free pages between live chunks: in a 30-minute soak of the
//! daemon (analysis, a pool worker, panel viewers) its live heap stayed near 110 MB
//! while its RSS crept from 239 to 288 MB over the last 20 minutes. Long-running
//! commands therefore hand free pages back every half minute ([`keep_trimming`]).

/// Arenas glibc may create.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: i32 = 2;

/// Limits glibc's arenas, unless `MALLOC_ARENA_MAX` already says how many (glibc reads
/// it itself). Nothing to do on other C libraries.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets an allocator parameter; called before any thread
        // other than this one exists.
        let ok = unsafe { nix::libc::mallopt(nix::libc::M_ARENA_MAX, ARENAS) };
        if ok != 1 {
            log::debug!("mallopt(M_ARENA_MAX) was refused");
        }
    }
}

/// How often [`keep_trimming`] returns free pages.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// For the long-running commands (`serve`, `worker`, `gtp`, `analysis`): a thread that
/// calls glibc's `malloc_trim` every 30 s, which returns the free pages of every arena
/// to the system (a few milliseconds under the arenas' locks). Nothing on other C
/// libraries.
pub fn keep_trimming() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let spawned = std::thread::Builder::new()
            .name("malloc-trim".into())
            .spawn(|| loop {
                std::thread::sleep(TRIM_EVERY);
                // SAFETY: malloc_trim only releases free memory; it takes the arenas'
                // own locks and is safe to call from any thread at any time.
                unsafe { nix::libc::malloc_trim(0) };
            });
        if let Err(e) = spawned {
            log::debug!("no malloc-trim thread: {e}");
        }
    }
}
