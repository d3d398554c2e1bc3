//! Tengen on the device: what turns a physical board into a game.
//!
//! - [`snapshot`]: a board as a sensor or camera sees it, unseen points included;
//! - [`reconcile`]: successive snapshots turned into moves, setups, or the points to fix.
//!
//! The MQTT link, serial GTP and the game journal will join this crate.

pub mod reconcile;
pub mod snapshot;

pub use reconcile::{Fix, Reconciler, Verdict};
pub use snapshot::{Cell, Snapshot, SnapshotError};
