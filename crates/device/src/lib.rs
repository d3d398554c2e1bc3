//! Tengen on the device: what turns a physical board into a game.
//!
//! - [`snapshot`]: a board as a sensor or camera sees it, unseen points included;
//! - [`reconcile`]: successive snapshots turned into moves, setups, or the points to fix;
//! - [`game_settings`]: a new game's size, komi, rules, handicap and side, checked whole;
//! - [`record`]: what the journal records, typed, with its canonical text line;
//! - [`history`]: the records a replay needs, with what cancels out taken away;
//! - [`appliance`]: the game fed by snapshots, commands and GTP, journalled and published;
//! - [`cluster`]: club-scale analysis: workers and clients sharing jobs over an MQTT 5 broker;
//! - [`payload`]: the MQTT payloads in and out, decoded with typed errors;
//! - [`mqtt`]: the broker link, reconnecting, with a persistent QoS 1 session;
//! - [`home_assistant`]: MQTT discovery so the appliance shows up in Home Assistant;
//! - [`journal`]: the game's changes made durable before they are acknowledged;
//! - [`serial`]: GTP over a serial line, reopened when the board is unplugged.

pub mod appliance;
pub mod cluster;
pub mod game_settings;
pub mod history;
pub mod home_assistant;
pub mod journal;
pub mod mqtt;
pub mod payload;
pub mod reconcile;
pub mod record;
pub mod serial;
pub mod snapshot;

pub use game_settings::GameSettings;
pub use reconcile::{Fix, Reconciler, Verdict};
pub use snapshot::{Cell, Snapshot, SnapshotError};
