//! Tengen's protocols. [`gtp`]: the Go Text Protocol v2 engine, transport-free (lines in,
//! replies out), so the binary can serve it over stdin/stdout, TCP or a serial line.
//! [`analysis`]: KataGo's JSON analysis engine. [`params`]: the search parameters both
//! let a client set. [`perspective`]: whose view reported values take.

pub mod analysis;
pub mod gtp;
pub mod params;
pub mod perspective;
