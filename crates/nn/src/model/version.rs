//! Model version → input/output channel counts (KataGo `modelversion.cpp`, `nninputs.h`).

/// Oldest model version KataGo v1.17.2 (and this reader) accepts.
pub const OLDEST_MODEL_VERSION: u32 = 3;
/// Newest model version KataGo v1.17.2 (and this reader) accepts.
pub const LATEST_MODEL_VERSION: u32 = 17;

/// Whether `version` is implemented.
pub fn is_supported(version: u32) -> bool {
    (OLDEST_MODEL_VERSION..=LATEST_MODEL_VERSION).contains(&version)
}

/// The input-feature version (`fillRowV*`) a model version uses.
pub fn inputs_version(model_version: u32) -> Option<u32> {
    match model_version {
        3 | 4 => Some(3),
        5 => Some(4),
        6 => Some(5),
        7 => Some(6),
        8..=17 => Some(7),
        _ => None,
    }
}

/// Spatial input channels of a model version.
pub fn num_spatial_features(model_version: u32) -> Option<usize> {
    match inputs_version(model_version)? {
        3 | 4 | 6 | 7 => Some(22),
        5 => Some(13),
        _ => None,
    }
}

/// Global input channels of a model version.
pub fn num_global_features(model_version: u32) -> Option<usize> {
    match inputs_version(model_version)? {
        3 | 4 => Some(14),
        5 => Some(12),
        6 => Some(16),
        7 => Some(19),
        _ => None,
    }
}

/// Metadata input channels of an SGF-metadata encoder version (0 = no encoder).
pub fn num_input_meta_channels(meta_encoder_version: u32) -> Option<usize> {
    match meta_encoder_version {
        0 => Some(0),
        1 => Some(192),
        _ => None,
    }
}

/// Policy channels implied by the model version; `None` for version 17+, where the file says (2 or 4).
pub fn num_policy_channels(model_version: u32) -> Option<usize> {
    match model_version {
        3..=11 => Some(1),
        12..=15 => Some(2),
        16 => Some(4),
        _ => None,
    }
}

/// Score-value channels of a model version.
pub fn num_score_value_channels(model_version: u32) -> Option<usize> {
    match model_version {
        3 => Some(1),
        4..=7 => Some(2),
        8 => Some(4),
        9..=17 => Some(6),
        _ => None,
    }
}

/// Value channels (win, loss, no result) of every supported version.
pub const NUM_VALUE_CHANNELS: usize = 3;
/// Ownership channels of every supported version.
pub const NUM_OWNERSHIP_CHANNELS: usize = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v7_inputs_for_modern_versions() {
        for v in 8..=17 {
            assert_eq!(num_spatial_features(v), Some(22));
            assert_eq!(num_global_features(v), Some(19));
        }
        assert_eq!(num_spatial_features(6), Some(13));
        assert_eq!(num_global_features(2), None);
        assert_eq!(num_score_value_channels(8), Some(4));
        assert_eq!(num_policy_channels(15), Some(2));
    }
}
