//! Model version → input-feature version and input/output channel counts, as KataGo
//! defines them (`modelversion.cpp`, `nninputs.h`, the head descriptions in `desc.cpp`).
//! Everything here reads the one table [`VERSIONS`].

/// Oldest model version KataGo v1.17 (and Tengen) accepts.
pub const OLDEST_MODEL_VERSION: u32 = 3;
/// Newest model version KataGo v1.17 (and Tengen) accepts.
pub const LATEST_MODEL_VERSION: u32 = 17;

/// Value channels (win, loss, no result) of every supported version.
pub const VALUE_CHANNELS: u32 = 3;
/// Ownership channels of every supported version.
pub const OWNERSHIP_CHANNELS: u32 = 1;
/// Width of `InputMeta` for meta-encoder version 1 (KataGo's SGF metadata encoder).
pub const META_ENCODER_V1_CHANNELS: u32 = 192;

/// What one model version implies for a network's inputs and outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    /// The model version this row describes.
    pub model_version: u32,
    /// KataGo's input-feature version (`fillRowV*`); Tengen computes version 7.
    pub inputs_version: u32,
    /// Spatial input channels.
    pub spatial_channels: u32,
    /// Global input channels.
    pub global_channels: u32,
    /// The legal policy output channel counts: one when the version implies it, several
    /// when the model states which (in the file's policy head, or `katago.numPolicyChannels`).
    pub policy_channels: &'static [u32],
    /// Score-value output channels.
    pub score_value_channels: u32,
}

const fn row(
    model_version: u32,
    inputs_version: u32,
    (spatial_channels, global_channels): (u32, u32),
    policy_channels: &'static [u32],
    score_value_channels: u32,
) -> VersionInfo {
    VersionInfo {
        model_version,
        inputs_version,
        spatial_channels,
        global_channels,
        policy_channels,
        score_value_channels,
    }
}

/// Spatial and global channels of each input-feature version.
const INPUTS_V3: (u32, u32) = (22, 14);
const INPUTS_V4: (u32, u32) = (22, 14);
const INPUTS_V5: (u32, u32) = (13, 12);
const INPUTS_V6: (u32, u32) = (22, 16);
const INPUTS_V7: (u32, u32) = (22, 19);

/// One row per supported model version, oldest first.
pub const VERSIONS: [VersionInfo; (LATEST_MODEL_VERSION - OLDEST_MODEL_VERSION + 1) as usize] = [
    row(3, 3, INPUTS_V3, &[1], 1),
    row(4, 3, INPUTS_V3, &[1], 2),
    row(5, 4, INPUTS_V4, &[1], 2),
    row(6, 5, INPUTS_V5, &[1], 2),
    row(7, 6, INPUTS_V6, &[1], 2),
    row(8, 7, INPUTS_V7, &[1], 4),
    row(9, 7, INPUTS_V7, &[1], 6),
    row(10, 7, INPUTS_V7, &[1], 6),
    row(11, 7, INPUTS_V7, &[1], 6),
    // The optimistic policy adds a second channel.
    row(12, 7, INPUTS_V7, &[2], 6),
    row(13, 7, INPUTS_V7, &[2], 6),
    row(14, 7, INPUTS_V7, &[2], 6),
    row(15, 7, INPUTS_V7, &[2], 6),
    // Q-value predictions add two more; version 17 makes them optional.
    row(16, 7, INPUTS_V7, &[4], 6),
    row(17, 7, INPUTS_V7, &[2, 4], 6),
];

/// The row of a model version, if it is supported.
pub fn info(model_version: u32) -> Option<&'static VersionInfo> {
    let i = model_version.checked_sub(OLDEST_MODEL_VERSION)?;
    VERSIONS.get(usize::try_from(i).ok()?)
}

/// Whether `version` is implemented.
pub fn is_supported(version: u32) -> bool {
    info(version).is_some()
}

/// The input-feature version (`fillRowV*`) a model version uses.
pub fn inputs_version(model_version: u32) -> Option<u32> {
    info(model_version).map(|v| v.inputs_version)
}

/// Spatial input channels of a model version (`katago.numInputChannels`).
pub fn spatial_channels(model_version: u32) -> Option<u32> {
    info(model_version).map(|v| v.spatial_channels)
}

/// Global input channels of a model version (`katago.numInputGlobalChannels`).
pub fn global_channels(model_version: u32) -> Option<u32> {
    info(model_version).map(|v| v.global_channels)
}

/// The legal policy channel counts of a model version; empty when it is not supported.
pub fn policy_channels(model_version: u32) -> &'static [u32] {
    info(model_version).map_or(&[], |v| v.policy_channels)
}

/// Score-value channels of a model version.
pub fn score_value_channels(model_version: u32) -> Option<u32> {
    info(model_version).map(|v| v.score_value_channels)
}

/// Metadata input channels of an SGF-metadata encoder version (0 = no encoder).
pub fn meta_channels(meta_encoder_version: u32) -> Option<u32> {
    match meta_encoder_version {
        0 => Some(0),
        1 => Some(META_ENCODER_V1_CHANNELS),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// KataGo v1.17.2's own rules, restated version by version, against the table:
    /// - inputs version: `NNModelVersion::getInputsVersion` (cpp/neuralnet/modelversion.cpp):
    ///   3 for models 3-4, then 4, 5, 6 for models 5, 6, 7, and 7 for models 8-17;
    /// - spatial and global channels: `getNumSpatialFeatures` / `getNumGlobalFeatures` (same
    ///   file) through `NNInputs::NUM_FEATURES_{SPATIAL,GLOBAL}_V*` (cpp/neuralnet/nninputs.h):
    ///   V3 22/14, V4 22/14, V5 13/12, V6 22/16, V7 22/19;
    /// - policy channels: the `PolicyHeadDesc` constructor (cpp/neuralnet/desc.cpp): 1 before
    ///   model 12, 2 from 12, 4 for 16, and from 17 read from the file, 2 or 4;
    /// - score-value channels: the `ValueHeadDesc` constructor's `sv3Mul.outChannels` checks
    ///   (desc.cpp): 1 for 3, 2 from 4, 4 for 8, 6 from 9;
    /// - value 3 (`v3Mul.outChannels`) and ownership 1 (`vOwnershipConv.outChannels`);
    /// - meta channels: `getNumInputMetaChannels` (modelversion.cpp): 0 for encoder 0, 192 for 1.
    #[test]
    fn table_agrees_with_katago() {
        for v in 3..=17u32 {
            let inputs = match v {
                3 | 4 => 3,
                5 => 4,
                6 => 5,
                7 => 6,
                _ => 7,
            };
            let (spatial, global) = match inputs {
                3 | 4 => (22, 14),
                5 => (13, 12),
                6 => (22, 16),
                _ => (22, 19),
            };
            let policy: &[u32] = if v >= 17 {
                &[2, 4]
            } else if v == 16 {
                &[4]
            } else if v >= 12 {
                &[2]
            } else {
                &[1]
            };
            let score = if v >= 9 {
                6
            } else if v >= 8 {
                4
            } else if v >= 4 {
                2
            } else {
                1
            };
            let want = VersionInfo {
                model_version: v,
                inputs_version: inputs,
                spatial_channels: spatial,
                global_channels: global,
                policy_channels: policy,
                score_value_channels: score,
            };
            assert_eq!(info(v), Some(&want), "model version {v}");
        }
        assert_eq!((VALUE_CHANNELS, OWNERSHIP_CHANNELS), (3, 1));
        assert_eq!((meta_channels(0), meta_channels(1)), (Some(0), Some(192)));
        assert_eq!(meta_channels(2), None);
    }

    #[test]
    fn unsupported_versions_have_no_row() {
        for v in [0, 1, 2, 18, u32::MAX] {
            assert!(!is_supported(v));
            assert_eq!(spatial_channels(v), None);
            assert!(policy_channels(v).is_empty());
        }
        assert!(is_supported(OLDEST_MODEL_VERSION) && is_supported(LATEST_MODEL_VERSION));
    }
}
