//! Which network backend Tengen picks on this machine.
// Each test crate uses its own subset of the helpers.
#![allow(dead_code)]

/// The backend used when none is named: native where its AVX2+FMA kernels run (as
/// `BackendKind::cpu_default` decides), tract elsewhere.
pub fn cpu_default() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        return "native";
    }
    "tract"
}
