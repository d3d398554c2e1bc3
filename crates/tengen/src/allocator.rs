//! The allocator's set-up. Every search runs on threads of its own, and glibc gives each
//! new thread an arena of its own (up to eight per core) that keeps what it held once
//! the thread is gone: a daemon's memory then grew with the number of searches (40
//! short analyses, 55 MB to 446 MB). Two arenas are enough for threads that allocate
//! little on the hot path, and keep memory flat.

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
