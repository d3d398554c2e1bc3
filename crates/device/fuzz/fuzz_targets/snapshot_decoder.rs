//! Fuzzes the MQTT payload decoders: the first byte picks a square board (2x2 to 25x25),
//! the rest is read both as a snapshot for that board (`decode_snapshot`: plain rows or the
//! `{"rows": [...]}` / `{"board": "..."}` JSON forms) and as a command (`decode_command`).
//! Both must return a value or an error, never panic. A decoded snapshot must have the
//! requested size and a readable cell at every point.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tengen_device::payload::{decode_command, decode_snapshot};
use tengen_rules::BoardSize;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(size) = BoardSize::square(2 + (first as usize % 24)) else {
        return;
    };
    if let Ok(snap) = decode_snapshot(rest, size) {
        assert_eq!(snap.size(), size, "decoded snapshot has the wrong size");
        for l in size.points() {
            let _ = snap.at(l);
        }
    }
    let _ = decode_command(rest);
});
