//! Fuzzes the analysis engine's query reader: any line must become an action, tasks, or
//! an error response, never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tengen_protocol::analysis::{parse, Defaults};
use tengen_search::SearchParams;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let defaults = Defaults {
        params: SearchParams::default(),
        max_visits: 10,
        max_playouts: None,
        pv_len: 15,
        max_time: None,
    };
    let _ = parse(&text, &defaults);
});
