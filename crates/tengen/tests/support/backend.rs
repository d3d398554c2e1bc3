//! Which network backend Tengen picks on this machine.
// Each test crate uses its own subset of the helpers.
#![allow(dead_code)]

/// The backend used when none is named, by the same test `BackendKind::cpu_default` makes:
/// native where its SIMD kernels run, tract elsewhere.
pub fn cpu_default() -> &'static str {
    if tengen_nn::backend::native::winograd::simd_available() {
        "native"
    } else {
        "tract"
    }
}
