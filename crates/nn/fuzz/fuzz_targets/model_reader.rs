//! Fuzzes the KataGo model reader (`tengen_nn::model::parse_model_with_limits`).
//!
//! Every input is parsed twice: as the file bytes themselves (so mutations hit both the
//! parser and, for inputs that start with the gzip magic, the gunzip layer), and gzip-compressed
//! first (so mutations of a plain model reach the parser through the gunzip path a real
//! `.bin.gz` takes). When the input is not itself gzip, both must agree exactly.

#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use tengen_nn::model::{parse_model_with_limits, ReadLimits};

/// Small enough that a gzip bomb costs milliseconds, large enough for every seed.
const LIMITS: ReadLimits = ReadLimits {
    max_model_bytes: 8 << 20,
};

/// The gzip magic number, which makes the reader decompress.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// `data` as a one-member gzip stream.
fn gzip(data: &[u8]) -> Vec<u8> {
    // The fastest level: the point is the container, not the ratio.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).expect("writing to a Vec cannot fail");
    enc.finish().expect("writing to a Vec cannot fail")
}

fuzz_target!(|data: &[u8]| {
    let raw = parse_model_with_limits(data, &LIMITS);
    let compressed = gzip(data);
    let via_gzip = parse_model_with_limits(&compressed, &LIMITS);

    // A gzip input is decompressed once in the raw mode but twice behind the extra layer, and an
    // input near the limit may fit raw but not compressed: only plain, small inputs must agree.
    let comparable = !data.starts_with(&GZIP_MAGIC)
        && (data.len().max(compressed.len()) as u64) <= LIMITS.max_model_bytes;
    if !comparable {
        return;
    }
    match (raw, via_gzip) {
        (Ok(a), Ok(mut b)) => {
            // The hash is of the bytes given, which differ by design.
            b.sha256.clone_from(&a.sha256);
            assert!(a == b, "gzip layer changed the parsed model {}", a.name);
        }
        // Offsets are into the decompressed bytes, so even the messages must match.
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!(
            "gzip layer changed the outcome: raw {:?}, gzip {:?}",
            a.err(),
            b.err()
        ),
    }
});
