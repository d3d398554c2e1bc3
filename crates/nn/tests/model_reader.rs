//! Integration tests of the KataGo model reader: the shared real networks load with the right
//! architecture, and hostile inputs (truncated, corrupted, oversized, inconsistent) fail with a
//! typed [`ModelError`] instead of panicking or allocating what they declare.
//!
//! Tests that need the real networks look for the shared directory in `TENGEN_SHARED` or next to
//! the repository (`../shared`) and skip themselves when it is absent; everything else runs on
//! small models this file writes itself.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tengen_nn::model::version;
use tengen_nn::model::*;

/// The small real network: model version 8, six residual blocks of 96 channels.
const G170: &str = "g170-b6c96.bin.gz";
/// The large real network: model version 15, nested-bottleneck transformer blocks.
const B10: &str = "b10c384h6nbttflrs.bin.gz";

// ---------------------------------------------------------------------------------------------
// Allocation tracking: "fails before allocating" is only testable by watching the allocator.

/// The system allocator, recording the largest single request made by each thread.
struct LargestAllocation;

thread_local! {
    /// Largest allocation (bytes) this thread requested since the last [`reset_largest`].
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// Records an allocation request of `size` bytes for the calling thread.
fn note_allocation(size: usize) {
    // `try_with`: allocations during thread teardown must not panic inside the allocator.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

/// Forgets the calling thread's largest allocation so far.
fn reset_largest() {
    LARGEST.with(|l| l.set(0));
}

/// The calling thread's largest allocation since [`reset_largest`].
fn largest() -> usize {
    LARGEST.with(Cell::get)
}

// SAFETY: every method forwards to `System` unchanged; the bookkeeping touches only a
// const-initialised thread-local `Cell`, which neither allocates nor unwinds.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: LargestAllocation = LargestAllocation;

// ---------------------------------------------------------------------------------------------
// Helpers.

/// The shared data directory, or `None` (after saying so) when this checkout has none.
fn shared() -> Option<PathBuf> {
    tengen_test_support::shared_dir("model reader tests", &["models"])
}

/// Path of a shared model file.
fn model_path(shared: &Path, file: &str) -> PathBuf {
    shared.join("models").join(file)
}

/// The bytes of a shared model file.
fn read_model(shared: &Path, file: &str) -> Vec<u8> {
    let path = model_path(shared, file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Decompresses a whole gzip stream.
fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("the shared models are valid gzip");
    out
}

/// Compresses `bytes` into one gzip member.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("writing to a Vec cannot fail");
    enc.finish().expect("writing to a Vec cannot fail")
}

/// Lower-case hex SHA-256, computed independently of the reader.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A short description of a parse outcome (never the Debug of a whole model: megabytes of floats).
fn outcome(result: &Result<ModelDesc, ModelError>) -> String {
    match result {
        Ok(desc) => format!("Ok(model {:?})", desc.name),
        Err(e) => format!("Err({e:?})"),
    }
}

/// Asserts that a parse result is an error matching the pattern (with an optional guard).
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {{
        let result = $result;
        match &result {
            Err(e) if matches!(e, $pattern $(if $guard)?) => {}
            _ => panic!(
                "expected Err({}), got {}",
                stringify!($pattern),
                outcome(&result)
            ),
        }
    }};
}

/// Whether an error is what running out of input should produce.
fn is_truncation(e: &ModelError) -> bool {
    matches!(
        e,
        ModelError::UnexpectedEof { .. } | ModelError::TruncatedWeights { .. }
    )
}

/// C `isspace`, the token separator of the model format.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whether cutting `data` at `cut` splits a token, which may leave a shorter but well-formed
/// token behind (`ACTIVATION_RELU` → `ACTIV`, `15` → `1`) and so any typed error.
fn splits_token(data: &[u8], cut: usize) -> bool {
    cut > 0
        && data.get(cut - 1).is_some_and(|&b| !is_space(b))
        && data.get(cut).is_some_and(|&b| !is_space(b))
}

/// Checks one truncated parse: an error, and a truncation error unless a token was split.
fn check_truncated(data: &[u8], cut: usize, result: Result<ModelDesc, ModelError>) {
    match &result {
        Err(e) if is_truncation(e) || splits_token(data, cut) => {}
        _ => panic!("cut at byte {cut}: {}", outcome(&result)),
    }
}

/// `data` with the first occurrence of `from` replaced by `to`.
fn replace_once(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = data
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{:?} not found", String::from_utf8_lossy(from)));
    [&data[..at], to, &data[at + from.len()..]].concat()
}

/// Compares two parses of the same model that differ only in file bytes (and so hash).
fn assert_same_model(a: &ModelDesc, b: &ModelDesc) {
    let mut b = b.clone();
    b.sha256.clone_from(&a.sha256);
    assert!(*a == b, "models {} and {} differ", a.name, b.name);
}

/// Block kinds of a block stack.
fn kinds(blocks: &[Block]) -> Vec<BlockKind> {
    blocks.iter().map(Block::kind).collect()
}

/// Parses every mutation under `catch_unwind` and describes the seeds that panicked or made the
/// reader allocate, at once, much more than the input's size (every count is checked against
/// the bytes that remain, so only fixed-size buffers such as a batch norm's default scale of at
/// most `MAX_CHANNELS` floats may exceed it).
fn bad_seeds(seeds: std::ops::Range<u64>, mutate: impl Fn(u64) -> Vec<u8>) -> Vec<String> {
    seeds
        .filter_map(|seed| {
            let data = mutate(seed);
            reset_largest();
            let parsed = catch_unwind(AssertUnwindSafe(|| {
                // Ok or any typed error is fine: a flipped weight byte can leave a valid model.
                let _ = parse_model(&data);
            }));
            let peak = largest();
            if parsed.is_err() {
                Some(format!("seed {seed} panicked"))
            } else if peak > 2 * data.len() + (1 << 20) {
                Some(format!("seed {seed} allocated {peak} bytes at once"))
            } else {
                None
            }
        })
        .collect()
}

/// Flips 1 to 4 random bits anywhere in `data`.
fn flip_bits(data: &[u8], seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = data.to_vec();
    for _ in 0..rng.usize(1..=4) {
        let at = rng.usize(0..out.len());
        out[at] ^= 1 << rng.u8(0..8);
    }
    out
}

/// Flips 1 to 4 random bits in the layer headers of a binary model: the 48 bytes before one of
/// the `@BIN@` markers at `markers`, and the marker itself.
fn flip_field_bits(data: &[u8], markers: &[usize], seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = data.to_vec();
    for _ in 0..rng.usize(1..=4) {
        let marker = markers[rng.usize(0..markers.len())];
        let at = rng.usize(marker.saturating_sub(48)..marker + 5);
        out[at] ^= 1 << rng.u8(0..8);
    }
    out
}

/// Overwrites 1 to 3 random bytes of `data` with digits, separators or random bytes: the
/// changes that alter a text token's value rather than only corrupting it.
fn mutate_tokens(data: &[u8], seed: u64) -> Vec<u8> {
    const INTERESTING: &[u8] = b"0123456789-+.e \n@";
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = data.to_vec();
    for _ in 0..rng.usize(1..=3) {
        let at = rng.usize(0..out.len());
        out[at] = if rng.bool() {
            INTERESTING[rng.usize(0..INTERESTING.len())]
        } else {
            rng.u8(..)
        };
    }
    out
}

// ---------------------------------------------------------------------------------------------
// A writer of small, complete model files in KataGo's format, in either float encoding.

/// Builds a model file field by field.
struct ModelWriter {
    /// The file so far.
    out: Vec<u8>,
    /// `@BIN@` float blocks (`.bin`) instead of decimal text (`.txt`).
    binary: bool,
    /// Model version, which decides the optional fields.
    version: u32,
    /// Weight counter, so successive weights differ.
    seq: usize,
}

/// Trunk width of the tiny models.
const TINY_C: usize = 4;

impl ModelWriter {
    /// An empty file of the given version and float encoding.
    fn new(version: u32, binary: bool) -> Self {
        ModelWriter {
            out: Vec::new(),
            binary,
            version,
            seq: 0,
        }
    }

    /// One text token on its own line, as KataGo's exporter writes them.
    fn tok(&mut self, token: impl std::fmt::Display) {
        writeln!(self.out, "{token}").expect("writing to a Vec cannot fail");
    }

    /// One float block.
    fn floats(&mut self, values: &[f32]) {
        if self.binary {
            self.out.extend_from_slice(b"@BIN@");
            for v in values {
                self.out.extend_from_slice(&v.to_le_bytes());
            }
            self.out.push(b'\n');
        } else {
            let text: Vec<String> = values.iter().map(f32::to_string).collect();
            self.tok(text.join(" "));
        }
    }

    /// A block of `n` varied weights in [-1, 1] (short in text form, exact in both).
    fn weights(&mut self, n: usize) {
        let values: Vec<f32> = (0..n)
            .map(|_| {
                self.seq += 1;
                (self.seq % 9) as f32 / 4.0 - 1.0
            })
            .collect();
        self.floats(&values);
    }

    /// A convolution whose weights are their own file index, to check the layout conversion.
    fn indexed_conv(&mut self, name: &str, k: usize, in_c: usize, out_c: usize) {
        for t in [name.to_string(), k.to_string(), k.to_string()] {
            self.tok(t);
        }
        for v in [in_c, out_c, 1, 1] {
            self.tok(v);
        }
        let values: Vec<f32> = (0..k * k * in_c * out_c).map(|i| i as f32).collect();
        self.floats(&values);
    }

    fn conv(&mut self, name: &str, k: usize, in_c: usize, out_c: usize) {
        self.tok(name);
        for v in [k, k, in_c, out_c, 1, 1] {
            self.tok(v);
        }
        self.weights(k * k * in_c * out_c);
    }

    fn bn(&mut self, name: &str, c: usize) {
        self.tok(name);
        self.tok(c);
        self.tok("1e-5");
        self.tok(1);
        self.tok(1);
        self.weights(c); // mean
        self.floats(&vec![1.5; c]); // variance: positive, or the reader rejects the layer
        self.weights(c); // scale
        self.weights(c); // bias
    }

    fn act(&mut self, name: &str) {
        self.tok(name);
        if self.version >= 11 {
            self.tok(if self.version >= 15 {
                "ACTIVATION_SILU"
            } else {
                "ACTIVATION_MISH"
            });
        }
    }

    fn matmul(&mut self, name: &str, in_c: usize, out_c: usize) {
        self.tok(name);
        self.tok(in_c);
        self.tok(out_c);
        self.weights(in_c * out_c);
    }

    fn matbias(&mut self, name: &str, c: usize) {
        self.tok(name);
        self.tok(c);
        self.weights(c);
    }

    fn ordinary_block(&mut self, name: &str, c: usize, indexed: bool) {
        self.tok("ordinary_block");
        self.tok(name);
        self.bn(&format!("{name}.bn1"), c);
        self.act(&format!("{name}.act1"));
        if indexed {
            self.indexed_conv(&format!("{name}.conv1"), 3, c, c);
        } else {
            self.conv(&format!("{name}.conv1"), 3, c, c);
        }
        self.bn(&format!("{name}.bn2"), c);
        self.act(&format!("{name}.act2"));
        self.conv(&format!("{name}.conv2"), 1, c, c);
    }

    fn gpool_block(&mut self, name: &str, c: usize) {
        let (regular, gpool) = (3, 2);
        self.tok("gpool_block");
        self.tok(name);
        self.bn(&format!("{name}.bn1"), c);
        self.act(&format!("{name}.act1"));
        self.conv(&format!("{name}.conv1a"), 1, c, regular);
        self.conv(&format!("{name}.conv1b"), 1, c, gpool);
        self.bn(&format!("{name}.bn1b"), gpool);
        self.act(&format!("{name}.act1b"));
        self.matmul(&format!("{name}.gpool"), 3 * gpool, regular);
        self.bn(&format!("{name}.bn2"), regular);
        self.act(&format!("{name}.act2"));
        self.conv(&format!("{name}.conv2"), 1, regular, c);
    }

    /// A nested-bottleneck block whose inner stack (of width `inner`) `body` writes.
    fn nested_block(
        &mut self,
        name: &str,
        c: usize,
        inner: usize,
        num_blocks: usize,
        body: impl FnOnce(&mut Self),
    ) {
        self.tok("nested_bottleneck_block");
        self.tok(name);
        self.tok(num_blocks);
        self.bn(&format!("{name}.prebn"), c);
        self.act(&format!("{name}.preact"));
        self.conv(&format!("{name}.preconv"), 1, c, inner);
        body(self);
        self.bn(&format!("{name}.postbn"), inner);
        self.act(&format!("{name}.postact"));
        self.conv(&format!("{name}.postconv"), 1, inner, c);
    }

    /// Two query heads sharing one key/value head, head dimension 2.
    fn attention_block(&mut self, name: &str, c: usize, learnable_rope: bool) {
        self.tok("transformer_attention_block");
        self.tok(name);
        for v in [2, 1, 2, 2, 1, usize::from(learnable_rope)] {
            self.tok(v);
        }
        self.tok(format!("{name}.norm"));
        self.tok(c);
        self.tok("1e-6");
        self.weights(c);
        self.matmul(&format!("{name}.q"), c, 4);
        self.matmul(&format!("{name}.k"), c, 2);
        self.matmul(&format!("{name}.v"), c, 2);
        self.matmul(&format!("{name}.out"), 4, c);
        if learnable_rope {
            self.tok(format!("{name}.rope"));
            for v in [1, 1, 2] {
                self.tok(v);
            }
            self.weights(2);
        } else {
            self.tok(format!("{name}.theta"));
            self.tok("100.0");
        }
    }

    fn ffn_block(&mut self, name: &str, c: usize, swiglu: bool) {
        let hidden = 6;
        self.tok("transformer_ffn_block");
        self.tok(name);
        self.tok(c);
        self.tok(hidden);
        self.tok(usize::from(swiglu));
        self.tok(format!("{name}.norm"));
        self.tok(c);
        self.tok("1e-6");
        self.weights(c);
        self.matmul(&format!("{name}.linear1"), c, hidden);
        if swiglu {
            self.matmul(&format!("{name}.gate"), c, hidden);
        }
        self.matmul(&format!("{name}.linear2"), hidden, c);
    }
}

/// A complete, valid model of `model_version` (3 to 17) with a 4-channel trunk: ordinary and
/// global-pooling blocks, plus from version 15 a nested-bottleneck block of transformer blocks,
/// an RMS-norm trunk tip, the SGF-metadata encoder and the pass MLP.
fn tiny_model(model_version: u32, binary: bool) -> Vec<u8> {
    let v = model_version;
    let spatial = version::num_spatial_features(v).expect("supported version");
    let global = version::num_global_features(v).expect("supported version");
    let modern = v >= 15;
    let mut w = ModelWriter::new(v, binary);

    w.tok(format!("tiny-v{v}"));
    w.tok(v);
    w.tok(spatial);
    w.tok(global);
    if v >= 13 {
        for m in ["20", "20", "20", "20", "40", "0.25", "150"] {
            w.tok(m);
        }
    }
    if modern {
        w.tok(1); // metaEncoderVersion
        w.tok(0); // preferPassAliveUnderSuicideRules
        for _ in 0..6 {
            w.tok(0);
        }
    }

    let c = TINY_C;
    w.tok("trunk");
    for field in [if modern { 3 } else { 2 }, c, c, 3, 0, 2] {
        w.tok(field);
    }
    if modern {
        w.tok(1); // RMS-norm trunk tip
        for _ in 0..5 {
            w.tok(0);
        }
    }
    w.conv("conv1", 1, spatial, c);
    w.matmul("ginput", global, c);
    if modern {
        let meta = version::num_input_meta_channels(1).expect("encoder version 1");
        w.tok("meta");
        w.tok(meta);
        w.matmul("meta.mul1", meta, 2);
        w.matbias("meta.bias1", 2);
        w.act("meta.act1");
        w.matmul("meta.mul2", 2, 2);
        w.matbias("meta.bias2", 2);
        w.act("meta.act2");
        w.matmul("meta.mul3", 2, c);
    }
    w.ordinary_block("b1", c, true);
    w.gpool_block("b2", c);
    if modern {
        w.nested_block("b3", c, c, 5, |w| {
            w.attention_block("b3.att1", c, true);
            w.ffn_block("b3.ffn1", c, true);
            w.attention_block("b3.att2", c, false);
            w.ffn_block("b3.ffn2", c, false);
            w.ordinary_block("b3.inner", c, false);
        });
        w.tok("trunk.norm");
        w.tok(c);
        w.tok("1e-6");
        w.tok(1); // spatial
        w.tok(0); // cgroupSize
        w.weights(c);
        w.weights(c);
    } else {
        w.bn("trunk.tipbn", c);
    }
    w.act("trunk.tipact");

    // Version 17 files state their policy channel count; 2 is one of the two allowed.
    let policy = version::num_policy_channels(v).unwrap_or(2);
    let (p1, g1) = (3, 2);
    w.tok("policy");
    if v >= 17 {
        w.tok(policy);
        for _ in 0..3 {
            w.tok(0);
        }
    }
    w.conv("p1conv", 1, c, p1);
    w.conv("g1conv", 1, c, g1);
    w.bn("g1bn", g1);
    w.act("g1act");
    w.matmul("gpooltobias", 3 * g1, p1);
    w.bn("p1bn", p1);
    w.act("p1act");
    w.conv("p2conv", 1, p1, policy);
    if modern {
        w.matmul("gpooltopass", 3 * g1, p1);
        w.matbias("passbias", p1);
        w.act("passact");
        w.matmul("pass2", p1, policy);
    } else {
        w.matmul("gpooltopass", 3 * g1, policy);
    }

    let score = version::num_score_value_channels(v).expect("supported version");
    let (v1, v2) = (2, 3);
    w.tok("value");
    if v >= 17 {
        for _ in 0..3 {
            w.tok(0);
        }
    }
    w.conv("v1conv", 1, c, v1);
    w.bn("v1bn", v1);
    w.act("v1act");
    w.matmul("v2mul", 3 * v1, v2);
    w.matbias("v2bias", v2);
    w.act("v2act");
    w.matmul("v3mul", v2, 3);
    w.matbias("v3bias", 3);
    w.matmul("sv3mul", v2, score);
    w.matbias("sv3bias", score);
    w.conv("vownership", 1, v1, 1);
    w.out
}

/// Offset of the first byte of the last token of `data` (its last float, for a tiny text model).
fn last_token_start(data: &[u8]) -> usize {
    let end = data.iter().rposition(|&b| !is_space(b)).expect("not empty");
    data[..end]
        .iter()
        .rposition(|&b| is_space(b))
        .map_or(0, |p| p + 1)
}

// ---------------------------------------------------------------------------------------------
// The real networks.

#[test]
fn g170_b6c96_loads_as_a_version_8_convnet() {
    let Some(shared) = shared() else { return };
    let path = model_path(&shared, G170);
    let bytes = read_model(&shared, G170);
    let desc = load_model(&path).expect("the shared g170 model loads");

    assert_eq!(desc.name, "g170-b6c96-s175395328-d26788732");
    assert_eq!(desc.model_version, 8);
    assert_eq!(desc.num_parameters(), 1_027_911);
    assert_eq!(desc.short_info(), "convnet, 1027911 params");
    assert_eq!(desc.sha256, sha256_hex(&bytes));
    assert_eq!(
        (desc.num_input_channels, desc.num_input_global_channels),
        (22, 19)
    );
    assert_eq!(desc.num_input_meta_channels, 0);
    assert_eq!(desc.num_policy_channels, 1);
    assert_eq!(desc.num_value_channels, 3);
    assert_eq!(desc.num_score_value_channels, 4);
    assert_eq!(desc.num_ownership_channels, 1);

    let trunk = &desc.trunk;
    assert_eq!(trunk.trunk_num_channels, 96);
    assert_eq!(trunk.mid_num_channels, 96);
    assert_eq!(trunk.regular_num_channels, 64);
    assert_eq!(trunk.gpool_num_channels, 32);
    assert_eq!(
        (trunk.initial_conv.kernel_y, trunk.initial_conv.in_channels),
        (5, 22)
    );
    assert_eq!(trunk.initial_conv.out_channels, 96);
    use BlockKind::{GlobalPooling as G, Ordinary as O};
    assert_eq!(kinds(&trunk.blocks), [O, O, G, O, G, O]);
    assert!(matches!(trunk.tip, TrunkTip::BatchNorm(_)));
    assert_eq!(trunk.tip_activation.activation, Activation::Relu);
    assert!(trunk.sgf_metadata_encoder.is_none());
    assert!(!desc.has_any_transformer_blocks());
    assert!(!desc.has_any_nested_bottleneck_blocks());
    assert!(desc.policy_head.pass_mlp.is_none());

    // Reading the bytes directly gives the same model as reading the file.
    let again = parse_model(&bytes).expect("same bytes");
    assert!(again == desc);
}

#[test]
fn b10c384_loads_as_a_version_15_nested_transformer() {
    let Some(shared) = shared() else { return };
    let bytes = read_model(&shared, B10);
    let desc = parse_model(&bytes).expect("the shared b10c384 model loads");

    assert_eq!(desc.name, "b10c384h6nbttflrs");
    assert_eq!(desc.model_version, 15);
    assert_eq!(desc.num_parameters(), 10_545_753);
    assert_eq!(desc.short_info(), "nbt transformer, 10545753 params");
    assert_eq!(desc.sha256, sha256_hex(&bytes));
    assert_eq!(desc.num_policy_channels, 2);
    assert_eq!(desc.num_score_value_channels, 6);
    assert_eq!(desc.post_process.td_score_multiplier, 20.0);
    assert_eq!(desc.post_process.shortterm_score_error_multiplier, 150.0);

    let trunk = &desc.trunk;
    assert_eq!(trunk.trunk_num_channels, 384);
    assert_eq!(trunk.mid_num_channels, 192);
    assert_eq!(trunk.regular_num_channels, 144);
    assert_eq!(trunk.gpool_num_channels, 48);
    assert_eq!(trunk.blocks.len(), 10);
    assert!(trunk.sgf_metadata_encoder.is_none());
    let TrunkTip::RmsNorm(tip) = &trunk.tip else {
        panic!("expected an RMS-norm trunk tip");
    };
    assert_eq!(tip.num_channels, 384);
    assert!(tip.spatial);
    assert_eq!(trunk.tip_activation.activation, Activation::Silu);
    assert!(desc.has_any_transformer_blocks());
    assert!(desc.has_any_nested_bottleneck_blocks());
    assert!(desc.policy_head.pass_mlp.is_some());

    use BlockKind::{TransformerAttention as A, TransformerFfn as F};
    for block in &trunk.blocks {
        let Block::NestedBottleneck(nb) = block else {
            panic!(
                "block {} is {:?}, not nested bottleneck",
                block.name(),
                block.kind()
            );
        };
        assert_eq!(
            (nb.pre_conv.in_channels, nb.pre_conv.out_channels),
            (384, 192)
        );
        assert_eq!(
            (nb.post_conv.in_channels, nb.post_conv.out_channels),
            (192, 384)
        );
        assert_eq!(kinds(&nb.blocks), [A, F, A, F], "inside {}", nb.name);
        for inner in &nb.blocks {
            match inner {
                Block::TransformerAttention(a) => {
                    assert_eq!((a.num_heads, a.num_kv_heads), (6, 6));
                    assert_eq!((a.q_head_dim, a.v_head_dim), (32, 32));
                    assert!(matches!(&a.rope, Rope::Learnable { freqs } if freqs.len() == 192));
                }
                Block::TransformerFfn(f) => {
                    assert_eq!((f.num_channels, f.ffn_channels), (192, 512));
                    assert!(f.uses_swiglu());
                }
                other => panic!("unexpected inner block {:?}", other.kind()),
            }
        }
    }

    // A few truncations of the decompressed transformer model (the g170 test does many).
    let data = gunzip(&bytes);
    for i in 1..8 {
        let cut = i * data.len() / 8;
        check_truncated(&data, cut, parse_model(&data[..cut]));
    }
}

// ---------------------------------------------------------------------------------------------
// The tiny models this file writes: both encodings of every supported version.

#[test]
fn tiny_models_of_every_version_parse_identically_in_both_encodings() {
    for v in version::OLDEST_MODEL_VERSION..=version::LATEST_MODEL_VERSION {
        let text =
            parse_model(&tiny_model(v, false)).unwrap_or_else(|e| panic!("text model v{v}: {e}"));
        let binary =
            parse_model(&tiny_model(v, true)).unwrap_or_else(|e| panic!("binary model v{v}: {e}"));
        assert_same_model(&text, &binary);
        assert_eq!(text.model_version, v);
        assert_eq!(text.name, format!("tiny-v{v}"));
        assert_eq!(text.trunk.trunk_num_channels, TINY_C);

        // Compression is transparent apart from the hash, which is of the bytes given.
        let gz = gzip(&tiny_model(v, true));
        let from_gz = parse_model(&gz).expect("gzip of a valid model");
        assert_eq!(from_gz.sha256, sha256_hex(&gz));
        assert_same_model(&binary, &from_gz);

        if v >= 15 {
            use BlockKind::*;
            assert_eq!(
                kinds(&text.trunk.blocks),
                [Ordinary, GlobalPooling, NestedBottleneck]
            );
            let Some(Block::NestedBottleneck(nb)) = text.trunk.blocks.last() else {
                unreachable!("checked above")
            };
            assert_eq!(
                kinds(&nb.blocks),
                [
                    TransformerAttention,
                    TransformerFfn,
                    TransformerAttention,
                    TransformerFfn,
                    Ordinary
                ]
            );
            assert!(text.trunk.sgf_metadata_encoder.is_some());
            assert_eq!(text.num_input_meta_channels, 192);
            assert!(matches!(text.trunk.tip, TrunkTip::RmsNorm(_)));
        }
    }
}

#[test]
fn conv_weights_are_reordered_from_file_order_to_oihw() {
    let desc = parse_model(&tiny_model(8, false)).expect("valid tiny model");
    let Some(Block::Ordinary(b1)) = desc.trunk.blocks.first() else {
        panic!("the first tiny block is ordinary");
    };
    let conv = &b1.regular_conv;
    let (k, c) = (3, TINY_C);
    assert_eq!((conv.kernel_y, conv.kernel_x, conv.in_channels), (k, k, c));
    // The file stores y, x, in, out (out fastest); each weight's value is its file index.
    for y in 0..k {
        for x in 0..k {
            for ic in 0..c {
                for oc in 0..c {
                    let file_index = ((y * k + x) * c + ic) * c + oc;
                    let oihw = ((oc * c + ic) * k + y) * k + x;
                    assert_eq!(conv.weights[oihw], file_index as f32);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs.

#[test]
fn empty_input_is_unexpected_eof() {
    assert_err!(
        parse_model(b""),
        ModelError::UnexpectedEof { offset: 0, .. }
    );
    assert_err!(parse_model(b" \n\t\n"), ModelError::UnexpectedEof { .. });
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("model_reader_empty.bin.gz");
    std::fs::write(&path, b"").expect("write the empty file");
    assert_err!(load_model(&path), ModelError::UnexpectedEof { .. });
}

#[test]
fn missing_file_is_io_error() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("model_reader_no_such_file.bin.gz");
    assert_err!(
        load_model(&path),
        ModelError::Io { path: p, .. } if *p == path
    );
}

#[test]
fn inputs_that_are_not_models_are_rejected() {
    // Text whose second token is not a version number.
    assert_err!(
        parse_model(b"hello world, this is not a model"),
        ModelError::Syntax {
            expected: "an integer",
            ..
        }
    );
    // Binary garbage (a PNG signature) and names KataGo would refuse.
    assert_err!(
        parse_model(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ModelError::InvalidName { .. }
    );
    assert_err!(
        parse_model("modèle 8 22 19".as_bytes()),
        ModelError::InvalidName { .. }
    );
    let long_name = format!("{} 8 22 19", "n".repeat(MAX_NAME_LEN + 1));
    assert_err!(
        parse_model(long_name.as_bytes()),
        ModelError::InvalidName { .. }
    );
    // A token longer than any name or number the format has.
    assert_err!(
        parse_model(&vec![b'7'; 1 << 20]),
        ModelError::OutOfRange { .. }
    );
    // The gzip magic followed by something that is not deflate data.
    assert_err!(
        parse_model(b"\x1f\x8b\x08\0\0\0\0\0\0\xffthis is not deflate data"),
        ModelError::Gzip(_)
    );
    assert_err!(parse_model(b"\x1f\x8b"), ModelError::Gzip(_));
    // A valid gzip stream of something that is not a model.
    assert_err!(
        parse_model(&gzip(&[0u8; 1000])),
        ModelError::InvalidName { .. }
    );
}

#[test]
fn truncated_gzip_stream_is_a_gzip_error() {
    let Some(shared) = shared() else { return };
    let bytes = read_model(&shared, G170);
    // Keep at least the magic, so every cut takes the gunzip path; the last cuts lose only
    // the CRC-32 and length trailer, which must still be noticed.
    let cuts = (0..50).map(|i| 2 + i * (bytes.len() - 2) / 50).chain([
        bytes.len() - 8,
        bytes.len() - 4,
        bytes.len() - 1,
    ]);
    for cut in cuts {
        let result = parse_model(&bytes[..cut]);
        match &result {
            Err(ModelError::Gzip(_)) => {}
            _ => panic!("gzip cut at byte {cut}: {}", outcome(&result)),
        }
    }
}

#[test]
fn truncated_model_data_is_a_truncation_error() {
    // Every prefix of the tiny models, in both encodings.
    for v in [8, 15, 17] {
        for binary in [false, true] {
            let data = tiny_model(v, binary);
            // Only cutting the final newline, or inside the last text token ("0.75" → "0.7"),
            // can leave a complete model.
            let complete_from = if binary {
                data.len() - 1
            } else {
                last_token_start(&data) + 1
            };
            for cut in 0..complete_from {
                check_truncated(&data, cut, parse_model(&data[..cut]));
            }
        }
    }

    // 50 evenly spaced cuts of the decompressed real model.
    let Some(shared) = shared() else { return };
    let data = gunzip(&read_model(&shared, G170));
    for i in 0..50 {
        let cut = i * data.len() / 50;
        check_truncated(&data, cut, parse_model(&data[..cut]));
    }
}

#[test]
fn unsupported_model_versions_are_rejected() {
    let model = tiny_model(8, false);
    let header = b"tiny-v8\n8\n";
    for (bad, expected) in [(2, 2), (0, 0), (-1, -1), (18, 18), (i64::MAX, i64::MAX)] {
        let data = replace_once(&model, header, format!("tiny-v8\n{bad}\n").as_bytes());
        assert_err!(
            parse_model(&data),
            ModelError::UnsupportedModelVersion { version, oldest: 3, latest: 17 }
                if *version == expected
        );
    }
    // Not an integer at all, or one that overflows i64.
    for bad in ["8.0", "eight", "99999999999999999999"] {
        let data = replace_once(&model, header, format!("tiny-v8\n{bad}\n").as_bytes());
        assert_err!(
            parse_model(&data),
            ModelError::Syntax {
                expected: "an integer",
                ..
            }
        );
    }

    let Some(shared) = shared() else { return };
    let data = gunzip(&read_model(&shared, G170));
    let header = b"g170-b6c96-s175395328-d26788732\n8\n";
    let with_version = |v: &str| {
        let to = format!("g170-b6c96-s175395328-d26788732\n{v}\n");
        replace_once(&data, header, to.as_bytes())
    };
    assert_err!(
        parse_model(&with_version("99")),
        ModelError::UnsupportedModelVersion { version: 99, .. }
    );
    // A supported but wrong version: version 9 value heads have 6 score outputs, this one 4.
    assert_err!(
        parse_model(&with_version("9")),
        ModelError::ShapeMismatch { detail, .. } if detail.contains("sv3Mul.outChannels")
    );
    // Version 11 files name each activation; this one has a layer name there instead.
    assert_err!(
        parse_model(&with_version("11")),
        ModelError::UnsupportedActivation { .. }
    );
}

#[test]
fn huge_declared_sizes_fail_before_allocating() {
    // Anything close to what these headers declare (gigabytes) would show up here.
    const ALLOWED: usize = 16 << 20;
    let check = |data: &[u8], what: &str| -> Result<ModelDesc, ModelError> {
        reset_largest();
        let result = parse_model(data);
        let peak = largest();
        assert!(
            peak <= ALLOWED,
            "{what}: the reader allocated {peak} bytes at once for a {}-byte input",
            data.len()
        );
        assert!(result.is_err(), "{what}: {}", outcome(&result));
        result
    };

    // Tiny text model: each count above the sanity limit, then counts within the limits whose
    // product is far more weights than the file holds.
    let model = tiny_model(8, false);
    let conv1 = b"conv1\n1\n1\n22\n4\n1\n1\n";
    let big = MAX_CHANNELS + 1;
    for (to, field) in [
        (format!("conv1\n1\n1\n22\n{big}\n1\n1\n"), "outChannels"),
        (format!("conv1\n1\n1\n{big}\n4\n1\n1\n"), "inChannels"),
        (
            format!("conv1\n{}\n1\n22\n4\n1\n1\n", MAX_KERNEL + 2),
            "convYSize",
        ),
        (
            "conv1\n1\n999999999999\n22\n4\n1\n1\n".to_string(),
            "convXSize",
        ),
        (
            format!("conv1\n1\n1\n22\n4\n{}\n1\n", MAX_DILATION + 1),
            "dilationY",
        ),
        ("conv1\n1\n1\n22\n-4\n1\n1\n".to_string(), "outChannels"),
    ] {
        let data = replace_once(&model, conv1, to.as_bytes());
        assert_err!(
            check(&data, field),
            ModelError::OutOfRange { field: f, .. } if *f == field
        );
    }
    let huge_conv = format!("conv1\n{MAX_KERNEL}\n{MAX_KERNEL}\n22\n{MAX_CHANNELS}\n1\n1\n");
    let data = replace_once(&model, conv1, huge_conv.as_bytes());
    assert_err!(
        check(&data, "text conv"),
        ModelError::TruncatedWeights { .. }
    );
    let huge_blocks = format!("trunk\n{}\n", MAX_BLOCKS + 1);
    let data = replace_once(&model, b"trunk\n2\n", huge_blocks.as_bytes());
    assert_err!(
        check(&data, "numBlocks"),
        ModelError::OutOfRange {
            field: "numBlocks",
            ..
        }
    );
    // The most blocks allowed, but the file holds two.
    let data = replace_once(
        &model,
        b"trunk\n2\n",
        format!("trunk\n{MAX_BLOCKS}\n").as_bytes(),
    );
    assert_err!(
        check(&data, "numBlocks"),
        ModelError::UnsupportedBlockKind { .. }
    );

    // The real binary model with its first convolution declared as 63x63x22x65536 (22 GB).
    let Some(shared) = shared() else { return };
    let data = gunzip(&read_model(&shared, G170));
    let huge_conv = format!("conv1\n{MAX_KERNEL}\n{MAX_KERNEL}\n22\n{MAX_CHANNELS}\n1\n1\n@BIN@");
    let data = replace_once(
        &data,
        b"conv1\n5\n5\n22\n96\n1\n1\n@BIN@",
        huge_conv.as_bytes(),
    );
    assert_err!(
        check(&data, "binary conv"),
        ModelError::TruncatedWeights { count, .. }
            if *count == (MAX_KERNEL * MAX_KERNEL * 22 * MAX_CHANNELS) as u64
    );
}

#[test]
fn nesting_deeper_than_the_limit_is_too_deep() {
    /// A nested-bottleneck block holding `depth - 1` more levels and then an ordinary block.
    fn nest(w: &mut ModelWriter, depth: usize) {
        let name = format!("nest{depth}");
        if depth == 0 {
            w.ordinary_block(&name, TINY_C, false);
        } else {
            w.nested_block(&name, TINY_C, TINY_C, 1, |w| nest(w, depth - 1));
        }
    }
    /// The tiny v8 model with its blocks replaced by one nest of the given depth.
    fn nested_model(depth: usize) -> Vec<u8> {
        let model = tiny_model(8, false);
        let trunk_start = b"trunk\n2\n";
        let blocks_start = model
            .windows(15)
            .position(|w| w == b"ordinary_block\n")
            .expect("the tiny model has blocks");
        let tip_start = model
            .windows(11)
            .position(|w| w == b"trunk.tipbn")
            .expect("the tiny model has a trunk tip");
        let mut w = ModelWriter::new(8, false);
        nest(&mut w, depth);
        let with_nest = [&model[..blocks_start], &w.out, &model[tip_start..]].concat();
        replace_once(&with_nest, trunk_start, b"trunk\n1\n")
    }

    // `MAX_NESTING_DEPTH` nested blocks are fine, one more is refused.
    let ok = parse_model(&nested_model(MAX_NESTING_DEPTH));
    assert!(ok.is_ok(), "{}", outcome(&ok));
    assert_err!(
        parse_model(&nested_model(MAX_NESTING_DEPTH + 1)),
        ModelError::TooDeep {
            limit: MAX_NESTING_DEPTH,
            ..
        }
    );
}

#[test]
fn non_finite_weights_are_rejected() {
    let model = tiny_model(15, false);
    // The first weight of the initial convolution; every spelling Rust or C++ would accept.
    let conv1 = b"conv1\n1\n1\n22\n4\n1\n1\n";
    let at = model
        .windows(conv1.len())
        .position(|w| w == conv1)
        .expect("conv1 header")
        + conv1.len();
    let first = model[at..]
        .iter()
        .position(|&b| b == b' ')
        .expect("a space")
        + at;
    for bad in ["nan", "NaN", "inf", "-inf", "infinity", "1e39", "-3.5e38"] {
        let data = [&model[..at], bad.as_bytes(), &model[first..]].concat();
        assert_err!(
            parse_model(&data),
            ModelError::NonFiniteWeight { context, offset }
                if *offset == at && context.contains("conv1")
        );
    }
    // A header number (a post-processing multiplier) and an epsilon must be finite too.
    let data = replace_once(&model, b"\n40\n", b"\ninf\n");
    assert_err!(
        parse_model(&data),
        ModelError::OutOfRange {
            field: "varianceTimeMultiplier",
            ..
        }
    );
    let data = replace_once(&model, b"1e-5", b"nan");
    assert_err!(
        parse_model(&data),
        ModelError::OutOfRange {
            field: "epsilon",
            ..
        }
    );
    // A negative variance makes the batch norm's merged scale NaN.
    let data = replace_once(&tiny_model(8, false), b"1.5 1.5 1.5 1.5", b"1.5 -2 1.5 1.5");
    assert_err!(
        parse_model(&data),
        ModelError::NonFiniteWeight { context, .. } if context.ends_with("b1.bn1")
    );

    // A NaN in the binary floats of the real model.
    let Some(shared) = shared() else { return };
    let data = gunzip(&read_model(&shared, G170));
    let at = data
        .windows(5)
        .position(|w| w == b"@BIN@")
        .expect("binary floats")
        + 5
        + 4 * 7;
    let mut bad = data.clone();
    bad[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    assert_err!(
        parse_model(&bad),
        ModelError::NonFiniteWeight { offset, .. } if *offset == at
    );
    bad[at..at + 4].copy_from_slice(&f32::NEG_INFINITY.to_le_bytes());
    assert_err!(
        parse_model(&bad),
        ModelError::NonFiniteWeight { offset, .. } if *offset == at
    );
}

#[test]
fn random_mutations_never_panic() {
    let mut bad = Vec::new();
    // Tiny models: small enough to mutate thousands of times, and every token is text.
    for (v, binary) in [(8, false), (8, true), (15, false), (15, true)] {
        let model = tiny_model(v, binary);
        let name = format!("tiny v{v} binary={binary}");
        let seeds = bad_seeds(0..500, |seed| mutate_tokens(&model, seed));
        bad.extend(seeds.iter().map(|s| format!("{name} {s}")));
    }

    if let Some(shared) = shared() {
        let data = gunzip(&read_model(&shared, G170));
        // Half the mutations hit the text fields (layer names and sizes) just before a float
        // block, the rest land anywhere (mostly inside binary weights).
        let markers: Vec<usize> = data
            .windows(5)
            .enumerate()
            .filter(|(_, w)| *w == b"@BIN@")
            .map(|(i, _)| i)
            .collect();
        let fields = bad_seeds(0..150, |seed| flip_field_bits(&data, &markers, seed));
        let anywhere = bad_seeds(1000..1150, |seed| flip_bits(&data, seed));
        bad.extend(fields.iter().chain(&anywhere).map(|s| format!("g170 {s}")));
    }
    assert!(bad.is_empty(), "the reader misbehaved on: {bad:?}");
}

#[test]
fn gzip_bomb_stops_at_the_size_limit() {
    const LIMIT: u64 = 1 << 20;
    let limits = ReadLimits {
        max_model_bytes: LIMIT,
    };
    // 10 MB of zeros compress to about 10 KB.
    let bomb = gzip(&vec![0u8; 10 << 20]);
    assert!(bomb.len() < 64 << 10);

    reset_largest();
    let result = parse_model_with_limits(&bomb, &limits);
    let peak = largest();
    assert_err!(result, ModelError::TooLarge { limit: LIMIT });
    // The decompression buffer must stop near the limit, not grow to the bomb's size (and the
    // tracker must have seen it reach the limit, or this test proves nothing).
    assert!(
        peak > LIMIT as usize,
        "the allocation tracker saw only {peak} bytes"
    );
    assert!(peak <= 4 * LIMIT as usize, "allocated {peak} bytes at once");

    // The same bytes as a file.
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("model_reader_bomb.bin.gz");
    std::fs::write(&path, &bomb).expect("write the bomb");
    assert_err!(
        load_model_with_limits(&path, &limits),
        ModelError::TooLarge { limit: LIMIT }
    );
    // A file (or byte slice) over the limit is refused before it is decompressed or parsed.
    let tiny = ReadLimits {
        max_model_bytes: 100,
    };
    assert_err!(
        load_model_with_limits(&path, &tiny),
        ModelError::TooLarge { limit: 100 }
    );
    assert_err!(
        parse_model_with_limits(&bomb, &tiny),
        ModelError::TooLarge { limit: 100 }
    );
    // A decompressed model exactly at the limit is accepted.
    let model = tiny_model(8, true);
    let exact = ReadLimits {
        max_model_bytes: model.len() as u64,
    };
    assert!(parse_model_with_limits(&gzip(&model), &exact).is_ok());
}

/// Writes the tiny models as a fuzzing seed corpus into `$TENGEN_FUZZ_SEEDS` (see
/// `crates/nn/fuzz/README.md`); ignored in normal runs.
#[test]
#[ignore = "writes files; run by crates/nn/fuzz/seed_corpus.sh"]
fn write_fuzz_seeds() {
    let dir = PathBuf::from(std::env::var_os("TENGEN_FUZZ_SEEDS").expect("TENGEN_FUZZ_SEEDS"));
    std::fs::create_dir_all(&dir).expect("create the seed directory");
    for v in [3, 8, 11, 13, 15, 17] {
        for (binary, ext) in [(false, "txt"), (true, "bin")] {
            let path = dir.join(format!("tiny-v{v}.{ext}"));
            std::fs::write(&path, tiny_model(v, binary)).expect("write a seed");
        }
    }
}
