//! The `katago.*` metadata of KataGo's ONNX contract (docs/ONNX_Model_Files.md in KataGo):
//! what a graph's inputs mean and how to decode its outputs.

use super::version::{self, LATEST_MODEL_VERSION, OLDEST_MODEL_VERSION};

/// Post-processing multipliers of a model (KataGo's `ModelPostProcessParams`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PostProcessParams {
    /// `katago.postProcess.tdScoreMultiplier`.
    pub td_score_multiplier: f64,
    /// `katago.postProcess.scoreMeanMultiplier`.
    pub score_mean_multiplier: f64,
    /// `katago.postProcess.scoreStdevMultiplier`.
    pub score_stdev_multiplier: f64,
    /// `katago.postProcess.leadMultiplier`.
    pub lead_multiplier: f64,
    /// `katago.postProcess.varianceTimeMultiplier`.
    pub variance_time_multiplier: f64,
    /// `katago.postProcess.shorttermValueErrorMultiplier`.
    pub shortterm_value_error_multiplier: f64,
    /// `katago.postProcess.shorttermScoreErrorMultiplier`.
    pub shortterm_score_error_multiplier: f64,
    /// `katago.postProcess.outputScaleMultiplier`: every raw output is multiplied by it.
    pub output_scale_multiplier: f64,
}

impl Default for PostProcessParams {
    /// The defaults for models that carry no multipliers (before model version 13).
    fn default() -> Self {
        PostProcessParams {
            td_score_multiplier: 20.0,
            score_mean_multiplier: 20.0,
            score_stdev_multiplier: 20.0,
            lead_multiplier: 20.0,
            variance_time_multiplier: 40.0,
            shortterm_value_error_multiplier: 0.25,
            shortterm_score_error_multiplier: 30.0,
            output_scale_multiplier: 1.0,
        }
    }
}

/// Everything the `katago.*` keys say about a graph.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelMetadata {
    /// `katago.metadataVersion` (currently 1).
    pub metadata_version: u32,
    /// `katago.name`: 1 to 96 characters of `[A-Za-z0-9_-]`.
    pub name: String,
    /// `katago.modelVersion`: fixes the input encoding and output decoding.
    pub model_version: u32,
    /// `katago.numInputChannels`.
    pub num_input_channels: u32,
    /// `katago.numInputGlobalChannels`.
    pub num_input_global_channels: u32,
    /// `katago.numInputMetaChannels`.
    pub num_input_meta_channels: u32,
    /// `katago.numPolicyChannels`.
    pub num_policy_channels: u32,
    /// `katago.numValueChannels`.
    pub num_value_channels: u32,
    /// `katago.numScoreValueChannels`.
    pub num_score_value_channels: u32,
    /// `katago.numOwnershipChannels`.
    pub num_ownership_channels: u32,
    /// `katago.build.nnXLen`: board buffer width.
    pub nn_x_len: u32,
    /// `katago.build.nnYLen`: board buffer height.
    pub nn_y_len: u32,
    /// `katago.build.requireExactNNLen`: the graph has no board masking.
    pub require_exact_nn_len: bool,
    /// `katago.metaEncoderVersion` (0 for a normal model).
    pub meta_encoder_version: u32,
    /// `katago.preferPassAliveUnderSuicideRules`.
    pub prefer_pass_alive_under_suicide_rules: bool,
    /// `katago.preferExcludeTerritoryAdjacentToAtari`.
    pub prefer_exclude_territory_adjacent_to_atari: bool,
    /// The `katago.postProcess.*` multipliers.
    pub post_process: PostProcessParams,
    /// `katago.build.scale8Applied`.
    pub scale8_applied: bool,
    /// `katago.build.transformerNHWC`.
    pub transformer_nhwc: bool,
    /// `katago.fp32Nodes.trunkTipAndHead`: node names TensorRT keeps in FP32.
    pub fp32_nodes_trunk_tip_and_head: Vec<String>,
    /// `katago.fp32Nodes.rmsNorm`: node names TensorRT keeps in FP32.
    pub fp32_nodes_rms_norm: Vec<String>,
    /// `katago.info.*` keys (informational, never affect evaluation), in file order.
    pub info: Vec<(String, String)>,
}

/// The `katago.metadataVersion` this build reads and writes.
pub const METADATA_VERSION: u32 = 1;
/// The longest `katago.name` accepted, since names end up in cache file names.
pub const MAX_NAME_LEN: usize = 96;
/// The smallest board buffer side accepted in `katago.build.nnXLen`/`nnYLen`.
pub const MIN_NN_LEN: u32 = tengen_rules::MIN_SIZE as u32;
/// The largest board buffer side accepted: the largest board Tengen plays.
pub const MAX_NN_LEN: u32 = tengen_rules::MAX_SIZE as u32;

/// Every key of the must-understand namespace that this build knows.
pub mod keys {
    /// `katago.metadataVersion`.
    pub const METADATA_VERSION: &str = "katago.metadataVersion";
    /// `katago.name`.
    pub const NAME: &str = "katago.name";
    /// `katago.modelVersion`.
    pub const MODEL_VERSION: &str = "katago.modelVersion";
    /// `katago.numInputChannels`.
    pub const NUM_INPUT_CHANNELS: &str = "katago.numInputChannels";
    /// `katago.numInputGlobalChannels`.
    pub const NUM_INPUT_GLOBAL_CHANNELS: &str = "katago.numInputGlobalChannels";
    /// `katago.numInputMetaChannels`.
    pub const NUM_INPUT_META_CHANNELS: &str = "katago.numInputMetaChannels";
    /// `katago.numPolicyChannels`.
    pub const NUM_POLICY_CHANNELS: &str = "katago.numPolicyChannels";
    /// `katago.numValueChannels`.
    pub const NUM_VALUE_CHANNELS: &str = "katago.numValueChannels";
    /// `katago.numScoreValueChannels`.
    pub const NUM_SCORE_VALUE_CHANNELS: &str = "katago.numScoreValueChannels";
    /// `katago.numOwnershipChannels`.
    pub const NUM_OWNERSHIP_CHANNELS: &str = "katago.numOwnershipChannels";
    /// `katago.build.nnXLen`.
    pub const NN_X_LEN: &str = "katago.build.nnXLen";
    /// `katago.build.nnYLen`.
    pub const NN_Y_LEN: &str = "katago.build.nnYLen";
    /// `katago.build.requireExactNNLen`.
    pub const REQUIRE_EXACT_NN_LEN: &str = "katago.build.requireExactNNLen";
    /// `katago.metaEncoderVersion`.
    pub const META_ENCODER_VERSION: &str = "katago.metaEncoderVersion";
    /// `katago.preferPassAliveUnderSuicideRules`.
    pub const PREFER_PASS_ALIVE: &str = "katago.preferPassAliveUnderSuicideRules";
    /// `katago.preferExcludeTerritoryAdjacentToAtari`.
    pub const PREFER_EXCLUDE_ATARI: &str = "katago.preferExcludeTerritoryAdjacentToAtari";
    /// `katago.postProcess.tdScoreMultiplier`.
    pub const TD_SCORE: &str = "katago.postProcess.tdScoreMultiplier";
    /// `katago.postProcess.scoreMeanMultiplier`.
    pub const SCORE_MEAN: &str = "katago.postProcess.scoreMeanMultiplier";
    /// `katago.postProcess.scoreStdevMultiplier`.
    pub const SCORE_STDEV: &str = "katago.postProcess.scoreStdevMultiplier";
    /// `katago.postProcess.leadMultiplier`.
    pub const LEAD: &str = "katago.postProcess.leadMultiplier";
    /// `katago.postProcess.varianceTimeMultiplier`.
    pub const VARIANCE_TIME: &str = "katago.postProcess.varianceTimeMultiplier";
    /// `katago.postProcess.shorttermValueErrorMultiplier`.
    pub const SHORTTERM_VALUE_ERROR: &str = "katago.postProcess.shorttermValueErrorMultiplier";
    /// `katago.postProcess.shorttermScoreErrorMultiplier`.
    pub const SHORTTERM_SCORE_ERROR: &str = "katago.postProcess.shorttermScoreErrorMultiplier";
    /// `katago.postProcess.outputScaleMultiplier`.
    pub const OUTPUT_SCALE: &str = "katago.postProcess.outputScaleMultiplier";
    /// `katago.fp32Nodes.trunkTipAndHead`.
    pub const FP32_TRUNK_TIP_AND_HEAD: &str = "katago.fp32Nodes.trunkTipAndHead";
    /// `katago.fp32Nodes.rmsNorm`.
    pub const FP32_RMS_NORM: &str = "katago.fp32Nodes.rmsNorm";
    /// `katago.build.scale8Applied`.
    pub const SCALE8_APPLIED: &str = "katago.build.scale8Applied";
    /// `katago.build.transformerNHWC`.
    pub const TRANSFORMER_NHWC: &str = "katago.build.transformerNHWC";
    /// Prefix of the whole must-understand namespace.
    pub const NAMESPACE: &str = "katago.";
    /// Prefix of the informational namespace, whose unknown keys are skipped.
    pub const INFO_PREFIX: &str = "katago.info.";

    /// All known must-understand keys.
    pub const KNOWN: [&str; 28] = [
        METADATA_VERSION,
        NAME,
        MODEL_VERSION,
        NUM_INPUT_CHANNELS,
        NUM_INPUT_GLOBAL_CHANNELS,
        NUM_INPUT_META_CHANNELS,
        NUM_POLICY_CHANNELS,
        NUM_VALUE_CHANNELS,
        NUM_SCORE_VALUE_CHANNELS,
        NUM_OWNERSHIP_CHANNELS,
        NN_X_LEN,
        NN_Y_LEN,
        REQUIRE_EXACT_NN_LEN,
        META_ENCODER_VERSION,
        PREFER_PASS_ALIVE,
        PREFER_EXCLUDE_ATARI,
        TD_SCORE,
        SCORE_MEAN,
        SCORE_STDEV,
        LEAD,
        VARIANCE_TIME,
        SHORTTERM_VALUE_ERROR,
        SHORTTERM_SCORE_ERROR,
        OUTPUT_SCALE,
        FP32_TRUNK_TIP_AND_HEAD,
        FP32_RMS_NORM,
        SCALE8_APPLIED,
        TRANSFORMER_NHWC,
    ];
}

/// Why a set of `metadata_props` is not a valid KataGo contract.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MetaError {
    /// No `katago.` key at all: the file is a plain ONNX graph.
    #[error("the file carries no KataGo metadata (no katago.* keys in metadata_props)")]
    NoMetadata,
    /// A required key is absent.
    #[error("missing required key {key}")]
    MissingKey {
        /// The key.
        key: &'static str,
    },
    /// A `katago.` key outside `katago.info.` that this build does not know.
    #[error("this build does not know: {key} (unknown must-understand katago.* key)")]
    UnknownKey {
        /// The key as found in the file.
        key: String,
    },
    /// A must-understand key given twice, which makes its meaning ambiguous.
    #[error("key {key} appears more than once")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// A value that does not parse as the key's type.
    #[error("{key} = {value:?} is not {expected}")]
    Parse {
        /// The key.
        key: &'static str,
        /// The value as found.
        value: String,
        /// What was expected ("an integer", "a boolean (true/false)", "a number").
        expected: &'static str,
    },
    /// A `katago.metadataVersion` this build does not read.
    #[error("{key} = {found}: this build reads metadata version {METADATA_VERSION} only", key = keys::METADATA_VERSION)]
    UnsupportedMetadataVersion {
        /// The version found.
        found: u32,
    },
    /// A `katago.modelVersion` outside 3..=17.
    #[error("{key} = {found} is not supported (supported: {OLDEST_MODEL_VERSION} to {LATEST_MODEL_VERSION})", key = keys::MODEL_VERSION)]
    UnsupportedModelVersion {
        /// The version found.
        found: u32,
    },
    /// A `katago.name` that is empty, too long or has characters outside `[A-Za-z0-9_-]`.
    #[error("{key} = {name:?} is invalid: {reason}", key = keys::NAME)]
    BadName {
        /// The name found (truncated to 128 characters).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A channel count that is not the legal one for the model version.
    #[error("{key} = {found}, but model version {model_version} requires {expected}")]
    ChannelCount {
        /// The key.
        key: &'static str,
        /// The count found.
        found: u32,
        /// The legal value(s), as text.
        expected: String,
        /// The model version they were checked against.
        model_version: u32,
    },
    /// A `katago.metaEncoderVersion` other than 0 or 1.
    #[error("{key} = {found} is not implemented (supported: 0, 1)", key = keys::META_ENCODER_VERSION)]
    UnsupportedMetaEncoder {
        /// The version found.
        found: u32,
    },
    /// A multiplier that is zero, negative, infinite or NaN.
    #[error("{key} = {value} must be a positive finite number")]
    NotPositive {
        /// The key.
        key: &'static str,
        /// The value found.
        value: f64,
    },
    /// An integer outside the range this build supports.
    #[error("{key} = {found} is outside the supported range {min}..={max}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value found.
        found: u32,
        /// Smallest accepted value.
        min: u32,
        /// Largest accepted value.
        max: u32,
    },
    /// An FP32 node name that cannot be written to a newline-separated list.
    #[error("{key} has an invalid node name {name:?} (empty or containing a newline)")]
    BadNodeName {
        /// The key of the list.
        key: &'static str,
        /// The name.
        name: String,
    },
    /// An entry of [`ModelMetadata::info`] whose key is not under `katago.info.`.
    #[error("info key {key:?} is not under katago.info.")]
    BadInfoKey {
        /// The key.
        key: String,
    },
}

impl ModelMetadata {
    /// Metadata for a plain (no meta encoder) model of `model_version` with the legal channel
    /// counts, default multipliers and flags, for a masked `nn_x_len` × `nn_y_len` graph.
    pub fn for_version(
        name: &str,
        model_version: u32,
        nn_x_len: u32,
        nn_y_len: u32,
    ) -> Result<Self, MetaError> {
        if !version::is_supported(model_version) {
            return Err(MetaError::UnsupportedModelVersion {
                found: model_version,
            });
        }
        let meta = ModelMetadata {
            metadata_version: METADATA_VERSION,
            name: name.to_string(),
            model_version,
            num_input_channels: version::spatial_channels(model_version).unwrap_or(0),
            num_input_global_channels: version::global_channels(model_version).unwrap_or(0),
            num_input_meta_channels: 0,
            num_policy_channels: version::policy_channels(model_version)
                .first()
                .copied()
                .unwrap_or(0),
            num_value_channels: version::VALUE_CHANNELS,
            num_score_value_channels: version::score_value_channels(model_version).unwrap_or(0),
            num_ownership_channels: version::OWNERSHIP_CHANNELS,
            nn_x_len,
            nn_y_len,
            require_exact_nn_len: false,
            meta_encoder_version: 0,
            prefer_pass_alive_under_suicide_rules: false,
            prefer_exclude_territory_adjacent_to_atari: false,
            post_process: PostProcessParams::default(),
            scale8_applied: false,
            transformer_nhwc: false,
            fp32_nodes_trunk_tip_and_head: Vec::new(),
            fp32_nodes_rms_norm: Vec::new(),
            info: Vec::new(),
        };
        meta.validate()?;
        Ok(meta)
    }

    /// KataGo's input-features version for this model (7 for model versions 8 to 17).
    pub fn inputs_version(&self) -> Option<u32> {
        version::inputs_version(self.model_version)
    }

    /// Whether the graph has an `InputMeta` input.
    pub fn has_meta_input(&self) -> bool {
        self.meta_encoder_version > 0
    }

    /// Checks every rule of the contract that the metadata alone can break.
    pub fn validate(&self) -> Result<(), MetaError> {
        if self.metadata_version != METADATA_VERSION {
            return Err(MetaError::UnsupportedMetadataVersion {
                found: self.metadata_version,
            });
        }
        validate_name(&self.name)?;
        let v = self.model_version;
        if !version::is_supported(v) {
            return Err(MetaError::UnsupportedModelVersion { found: v });
        }
        let meta_channels = version::meta_channels(self.meta_encoder_version).ok_or(
            MetaError::UnsupportedMetaEncoder {
                found: self.meta_encoder_version,
            },
        )?;
        let one = |key: &'static str, found: u32, expected: Option<u32>| match expected {
            Some(e) if e == found => Ok(()),
            _ => Err(MetaError::ChannelCount {
                key,
                found,
                expected: expected.map_or_else(|| "nothing".to_string(), |e| e.to_string()),
                model_version: v,
            }),
        };
        one(
            keys::NUM_INPUT_CHANNELS,
            self.num_input_channels,
            version::spatial_channels(v),
        )?;
        one(
            keys::NUM_INPUT_GLOBAL_CHANNELS,
            self.num_input_global_channels,
            version::global_channels(v),
        )?;
        one(
            keys::NUM_INPUT_META_CHANNELS,
            self.num_input_meta_channels,
            Some(meta_channels),
        )?;
        let policy = version::policy_channels(v);
        if !policy.contains(&self.num_policy_channels) {
            let expected = policy
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" or ");
            return Err(MetaError::ChannelCount {
                key: keys::NUM_POLICY_CHANNELS,
                found: self.num_policy_channels,
                expected,
                model_version: v,
            });
        }
        one(
            keys::NUM_VALUE_CHANNELS,
            self.num_value_channels,
            Some(version::VALUE_CHANNELS),
        )?;
        one(
            keys::NUM_SCORE_VALUE_CHANNELS,
            self.num_score_value_channels,
            version::score_value_channels(v),
        )?;
        one(
            keys::NUM_OWNERSHIP_CHANNELS,
            self.num_ownership_channels,
            Some(version::OWNERSHIP_CHANNELS),
        )?;
        for (key, len) in [
            (keys::NN_X_LEN, self.nn_x_len),
            (keys::NN_Y_LEN, self.nn_y_len),
        ] {
            if !(MIN_NN_LEN..=MAX_NN_LEN).contains(&len) {
                return Err(MetaError::OutOfRange {
                    key,
                    found: len,
                    min: MIN_NN_LEN,
                    max: MAX_NN_LEN,
                });
            }
        }
        for (key, value) in self.post_process.entries() {
            if !(value.is_finite() && value > 0.0) {
                return Err(MetaError::NotPositive { key, value });
            }
        }
        for (key, names) in [
            (
                keys::FP32_TRUNK_TIP_AND_HEAD,
                &self.fp32_nodes_trunk_tip_and_head,
            ),
            (keys::FP32_RMS_NORM, &self.fp32_nodes_rms_norm),
        ] {
            if let Some(bad) = names.iter().find(|n| n.is_empty() || n.contains('\n')) {
                return Err(MetaError::BadNodeName {
                    key,
                    name: bad.clone(),
                });
            }
        }
        if let Some((key, _)) = self
            .info
            .iter()
            .find(|(k, _)| !k.starts_with(keys::INFO_PREFIX))
        {
            return Err(MetaError::BadInfoKey { key: key.clone() });
        }
        Ok(())
    }

    /// The `metadata_props` entries that describe this model, every known key written out
    /// (optional ones with their values, node lists only when non-empty), then the info keys.
    pub fn to_props(&self) -> Vec<(String, String)> {
        let mut props: Vec<(String, String)> =
            Vec::with_capacity(keys::KNOWN.len() + self.info.len());
        let mut put = |key: &str, value: String| props.push((key.to_string(), value));
        put(keys::METADATA_VERSION, self.metadata_version.to_string());
        put(keys::NAME, self.name.clone());
        put(keys::MODEL_VERSION, self.model_version.to_string());
        put(
            keys::NUM_INPUT_CHANNELS,
            self.num_input_channels.to_string(),
        );
        put(
            keys::NUM_INPUT_GLOBAL_CHANNELS,
            self.num_input_global_channels.to_string(),
        );
        put(
            keys::NUM_INPUT_META_CHANNELS,
            self.num_input_meta_channels.to_string(),
        );
        put(
            keys::NUM_POLICY_CHANNELS,
            self.num_policy_channels.to_string(),
        );
        put(
            keys::NUM_VALUE_CHANNELS,
            self.num_value_channels.to_string(),
        );
        put(
            keys::NUM_SCORE_VALUE_CHANNELS,
            self.num_score_value_channels.to_string(),
        );
        put(
            keys::NUM_OWNERSHIP_CHANNELS,
            self.num_ownership_channels.to_string(),
        );
        put(
            keys::META_ENCODER_VERSION,
            self.meta_encoder_version.to_string(),
        );
        put(
            keys::PREFER_PASS_ALIVE,
            bool_str(self.prefer_pass_alive_under_suicide_rules),
        );
        put(
            keys::PREFER_EXCLUDE_ATARI,
            bool_str(self.prefer_exclude_territory_adjacent_to_atari),
        );
        for (key, value) in self.post_process.entries() {
            // `{}` on f64 is the shortest text that parses back to the same value.
            put(key, format!("{value}"));
        }
        put(keys::NN_X_LEN, self.nn_x_len.to_string());
        put(keys::NN_Y_LEN, self.nn_y_len.to_string());
        put(
            keys::REQUIRE_EXACT_NN_LEN,
            bool_str(self.require_exact_nn_len),
        );
        put(keys::SCALE8_APPLIED, bool_str(self.scale8_applied));
        put(keys::TRANSFORMER_NHWC, bool_str(self.transformer_nhwc));
        if !self.fp32_nodes_trunk_tip_and_head.is_empty() {
            put(
                keys::FP32_TRUNK_TIP_AND_HEAD,
                self.fp32_nodes_trunk_tip_and_head.join("\n"),
            );
        }
        if !self.fp32_nodes_rms_norm.is_empty() {
            put(keys::FP32_RMS_NORM, self.fp32_nodes_rms_norm.join("\n"));
        }
        for (key, value) in &self.info {
            put(key, value.clone());
        }
        props
    }

    /// Parses and validates `metadata_props`: unknown `katago.` keys, missing required keys
    /// and bad values are errors naming the key; keys outside `katago.` are ignored.
    pub fn from_props(props: &[(String, String)]) -> Result<Self, MetaError> {
        let map = PropMap::collect(props)?;
        let metadata_version = match map.get(keys::METADATA_VERSION) {
            Some(_) => map.required_u32(keys::METADATA_VERSION)?,
            None if map.is_empty() => return Err(MetaError::NoMetadata),
            None => {
                return Err(MetaError::MissingKey {
                    key: keys::METADATA_VERSION,
                })
            }
        };
        if metadata_version != METADATA_VERSION {
            return Err(MetaError::UnsupportedMetadataVersion {
                found: metadata_version,
            });
        }
        let name = map
            .get(keys::NAME)
            .ok_or(MetaError::MissingKey { key: keys::NAME })?
            .to_string();
        validate_name(&name)?;
        let model_version = map.required_u32(keys::MODEL_VERSION)?;
        if !version::is_supported(model_version) {
            return Err(MetaError::UnsupportedModelVersion {
                found: model_version,
            });
        }
        let v15 = model_version >= 15;
        let v13 = model_version >= 13;
        let defaults = PostProcessParams::default();
        let multiplier = |key: &'static str, default: f64| map.f64_gated(key, v13, default);
        let post_process = PostProcessParams {
            td_score_multiplier: multiplier(keys::TD_SCORE, defaults.td_score_multiplier)?,
            score_mean_multiplier: multiplier(keys::SCORE_MEAN, defaults.score_mean_multiplier)?,
            score_stdev_multiplier: multiplier(keys::SCORE_STDEV, defaults.score_stdev_multiplier)?,
            lead_multiplier: multiplier(keys::LEAD, defaults.lead_multiplier)?,
            variance_time_multiplier: multiplier(
                keys::VARIANCE_TIME,
                defaults.variance_time_multiplier,
            )?,
            shortterm_value_error_multiplier: multiplier(
                keys::SHORTTERM_VALUE_ERROR,
                defaults.shortterm_value_error_multiplier,
            )?,
            shortterm_score_error_multiplier: multiplier(
                keys::SHORTTERM_SCORE_ERROR,
                defaults.shortterm_score_error_multiplier,
            )?,
            output_scale_multiplier: map.f64_gated(
                keys::OUTPUT_SCALE,
                false,
                defaults.output_scale_multiplier,
            )?,
        };
        let meta = ModelMetadata {
            metadata_version,
            name,
            model_version,
            num_input_channels: map.required_u32(keys::NUM_INPUT_CHANNELS)?,
            num_input_global_channels: map.required_u32(keys::NUM_INPUT_GLOBAL_CHANNELS)?,
            num_input_meta_channels: map.required_u32(keys::NUM_INPUT_META_CHANNELS)?,
            num_policy_channels: map.required_u32(keys::NUM_POLICY_CHANNELS)?,
            num_value_channels: map.required_u32(keys::NUM_VALUE_CHANNELS)?,
            num_score_value_channels: map.required_u32(keys::NUM_SCORE_VALUE_CHANNELS)?,
            num_ownership_channels: map.required_u32(keys::NUM_OWNERSHIP_CHANNELS)?,
            nn_x_len: map.required_u32(keys::NN_X_LEN)?,
            nn_y_len: map.required_u32(keys::NN_Y_LEN)?,
            require_exact_nn_len: map.bool_gated(keys::REQUIRE_EXACT_NN_LEN, true)?,
            meta_encoder_version: map.u32_gated(keys::META_ENCODER_VERSION, v15, 0)?,
            prefer_pass_alive_under_suicide_rules: map.bool_gated(keys::PREFER_PASS_ALIVE, v15)?,
            prefer_exclude_territory_adjacent_to_atari: map
                .bool_gated(keys::PREFER_EXCLUDE_ATARI, v15)?,
            post_process,
            scale8_applied: map.bool_gated(keys::SCALE8_APPLIED, false)?,
            transformer_nhwc: map.bool_gated(keys::TRANSFORMER_NHWC, false)?,
            fp32_nodes_trunk_tip_and_head: map.node_list(keys::FP32_TRUNK_TIP_AND_HEAD),
            fp32_nodes_rms_norm: map.node_list(keys::FP32_RMS_NORM),
            info: map.info,
        };
        meta.validate()?;
        Ok(meta)
    }
}

impl PostProcessParams {
    /// The multipliers with their `katago.postProcess.*` keys, in the contract's order.
    pub fn entries(&self) -> [(&'static str, f64); 8] {
        [
            (keys::TD_SCORE, self.td_score_multiplier),
            (keys::SCORE_MEAN, self.score_mean_multiplier),
            (keys::SCORE_STDEV, self.score_stdev_multiplier),
            (keys::LEAD, self.lead_multiplier),
            (keys::VARIANCE_TIME, self.variance_time_multiplier),
            (
                keys::SHORTTERM_VALUE_ERROR,
                self.shortterm_value_error_multiplier,
            ),
            (
                keys::SHORTTERM_SCORE_ERROR,
                self.shortterm_score_error_multiplier,
            ),
            (keys::OUTPUT_SCALE, self.output_scale_multiplier),
        ]
    }
}

/// Checks a `katago.name`: 1 to 96 characters of `[A-Za-z0-9_-]`.
pub fn validate_name(name: &str) -> Result<(), MetaError> {
    let bad = |reason| MetaError::BadName {
        name: name.chars().take(128).collect(),
        reason,
    };
    if name.is_empty() {
        return Err(bad("name is empty"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(bad("too long (at most 96 characters)"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(bad(
            "only alphanumeric characters, underscores and hyphens are allowed",
        ));
    }
    Ok(())
}

fn bool_str(b: bool) -> String {
    if b { "true" } else { "false" }.to_string()
}

/// The `katago.` entries of a props list, checked for unknown and duplicate keys.
struct PropMap<'a> {
    known: Vec<(&'static str, &'a str)>,
    info: Vec<(String, String)>,
}

impl<'a> PropMap<'a> {
    fn collect(props: &'a [(String, String)]) -> Result<Self, MetaError> {
        let mut known: Vec<(&'static str, &'a str)> = Vec::new();
        let mut info = Vec::new();
        for (key, value) in props {
            if !key.starts_with(keys::NAMESPACE) {
                continue;
            }
            if key.starts_with(keys::INFO_PREFIX) {
                info.push((key.clone(), value.clone()));
                continue;
            }
            let Some(k) = keys::KNOWN.iter().copied().find(|k| *k == key) else {
                return Err(MetaError::UnknownKey { key: key.clone() });
            };
            if known.iter().any(|(seen, _)| *seen == k) {
                return Err(MetaError::DuplicateKey { key: key.clone() });
            }
            known.push((k, value.as_str()));
        }
        Ok(PropMap { known, info })
    }

    fn is_empty(&self) -> bool {
        self.known.is_empty() && self.info.is_empty()
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.known.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn required(&self, key: &'static str) -> Result<&'a str, MetaError> {
        self.get(key).ok_or(MetaError::MissingKey { key })
    }

    fn required_u32(&self, key: &'static str) -> Result<u32, MetaError> {
        parse_u32(key, self.required(key)?)
    }

    /// An integer key that is required when `required`, else defaults.
    fn u32_gated(&self, key: &'static str, required: bool, default: u32) -> Result<u32, MetaError> {
        match self.get(key) {
            Some(v) => parse_u32(key, v),
            None if required => Err(MetaError::MissingKey { key }),
            None => Ok(default),
        }
    }

    /// A boolean key that is required when `required`, else defaults to false.
    fn bool_gated(&self, key: &'static str, required: bool) -> Result<bool, MetaError> {
        match self.get(key) {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            Some(v) => Err(MetaError::Parse {
                key,
                value: truncate(v),
                expected: "a boolean (true or false)",
            }),
            None if required => Err(MetaError::MissingKey { key }),
            None => Ok(false),
        }
    }

    /// A number key that is required when `required`, else defaults.
    fn f64_gated(&self, key: &'static str, required: bool, default: f64) -> Result<f64, MetaError> {
        match self.get(key) {
            Some(v) => v.trim().parse::<f64>().map_err(|_| MetaError::Parse {
                key,
                value: truncate(v),
                expected: "a number",
            }),
            None if required => Err(MetaError::MissingKey { key }),
            None => Ok(default),
        }
    }

    /// A newline-separated list of node names, blank lines dropped.
    fn node_list(&self, key: &'static str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split('\n')
                    .map(|s| s.trim_end_matches('\r'))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn parse_u32(key: &'static str, value: &str) -> Result<u32, MetaError> {
    value.trim().parse::<u32>().map_err(|_| MetaError::Parse {
        key,
        value: truncate(value),
        expected: "a non-negative integer",
    })
}

/// Keeps error messages short when a hostile file stores megabytes in one value.
fn truncate(value: &str) -> String {
    value.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props_of(meta: &ModelMetadata) -> Vec<(String, String)> {
        meta.to_props()
    }

    fn set(props: &mut Vec<(String, String)>, key: &str, value: &str) {
        match props.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_string(),
            None => props.push((key.to_string(), value.to_string())),
        }
    }

    fn remove(props: &mut Vec<(String, String)>, key: &str) {
        props.retain(|(k, _)| k != key);
    }

    #[test]
    fn round_trip_every_version() {
        for v in OLDEST_MODEL_VERSION..=LATEST_MODEL_VERSION {
            let meta = ModelMetadata::for_version("net-1_a", v, 19, 19).unwrap();
            let back = ModelMetadata::from_props(&props_of(&meta)).unwrap();
            assert_eq!(back, meta, "model version {v}");
        }
    }

    #[test]
    fn round_trip_all_fields() {
        let mut meta = ModelMetadata::for_version("kata1-b18c384", 15, 13, 9).unwrap();
        meta.num_input_meta_channels = version::META_ENCODER_V1_CHANNELS;
        meta.meta_encoder_version = 1;
        meta.prefer_pass_alive_under_suicide_rules = true;
        meta.prefer_exclude_territory_adjacent_to_atari = true;
        meta.require_exact_nn_len = true;
        meta.scale8_applied = true;
        meta.transformer_nhwc = true;
        meta.post_process.shortterm_score_error_multiplier = 150.0;
        meta.post_process.output_scale_multiplier = 8.0;
        meta.post_process.td_score_multiplier = 0.1 + 0.2;
        meta.fp32_nodes_trunk_tip_and_head = vec!["node/a".into(), "node/b".into()];
        meta.fp32_nodes_rms_norm = vec!["node/c".into()];
        meta.info = vec![("katago.info.sourceSha256".into(), "abc".into())];
        let back = ModelMetadata::from_props(&props_of(&meta)).unwrap();
        assert_eq!(back, meta);
    }

    #[test]
    fn old_versions_default_gated_keys() {
        let meta = ModelMetadata::for_version("old", 8, 19, 19).unwrap();
        let mut props = props_of(&meta);
        for key in [
            keys::META_ENCODER_VERSION,
            keys::PREFER_PASS_ALIVE,
            keys::PREFER_EXCLUDE_ATARI,
            keys::TD_SCORE,
            keys::SCORE_MEAN,
            keys::SCORE_STDEV,
            keys::LEAD,
            keys::VARIANCE_TIME,
            keys::SHORTTERM_VALUE_ERROR,
            keys::SHORTTERM_SCORE_ERROR,
            keys::OUTPUT_SCALE,
            keys::SCALE8_APPLIED,
            keys::TRANSFORMER_NHWC,
        ] {
            remove(&mut props, key);
        }
        let back = ModelMetadata::from_props(&props).unwrap();
        assert_eq!(back.post_process, PostProcessParams::default());
        assert_eq!(back.num_policy_channels, 1);
        assert_eq!(back.num_score_value_channels, 4);
        assert_eq!(back, meta);
    }

    #[test]
    fn gated_keys_required_from_their_version() {
        let props = props_of(&ModelMetadata::for_version("n", 15, 19, 19).unwrap());
        for key in [
            keys::META_ENCODER_VERSION,
            keys::PREFER_PASS_ALIVE,
            keys::PREFER_EXCLUDE_ATARI,
            keys::LEAD,
        ] {
            let mut p = props.clone();
            remove(&mut p, key);
            assert_eq!(
                ModelMetadata::from_props(&p),
                Err(MetaError::MissingKey { key })
            );
        }
        let props = props_of(&ModelMetadata::for_version("n", 13, 19, 19).unwrap());
        let mut p = props.clone();
        remove(&mut p, keys::PREFER_PASS_ALIVE);
        assert!(ModelMetadata::from_props(&p).is_ok());
        remove(&mut p, keys::VARIANCE_TIME);
        assert_eq!(
            ModelMetadata::from_props(&p),
            Err(MetaError::MissingKey {
                key: keys::VARIANCE_TIME
            })
        );
    }

    #[test]
    fn required_keys_are_named_when_missing() {
        let props = props_of(&ModelMetadata::for_version("n", 17, 19, 19).unwrap());
        for key in [
            keys::NAME,
            keys::MODEL_VERSION,
            keys::NUM_INPUT_CHANNELS,
            keys::NUM_INPUT_GLOBAL_CHANNELS,
            keys::NUM_INPUT_META_CHANNELS,
            keys::NUM_POLICY_CHANNELS,
            keys::NUM_VALUE_CHANNELS,
            keys::NUM_SCORE_VALUE_CHANNELS,
            keys::NUM_OWNERSHIP_CHANNELS,
            keys::NN_X_LEN,
            keys::NN_Y_LEN,
            keys::REQUIRE_EXACT_NN_LEN,
            keys::METADATA_VERSION,
        ] {
            let mut p = props.clone();
            remove(&mut p, key);
            let err = ModelMetadata::from_props(&p).unwrap_err();
            assert_eq!(err, MetaError::MissingKey { key });
            assert!(err.to_string().contains(key));
        }
        assert_eq!(ModelMetadata::from_props(&[]), Err(MetaError::NoMetadata));
        let foreign = vec![("producer".to_string(), "x".to_string())];
        assert_eq!(
            ModelMetadata::from_props(&foreign),
            Err(MetaError::NoMetadata)
        );
    }

    #[test]
    fn unknown_and_foreign_keys() {
        let props = props_of(&ModelMetadata::for_version("n", 15, 19, 19).unwrap());
        let mut p = props.clone();
        set(&mut p, "katago.preferPassAliveUnderSuicideRule", "true");
        let err = ModelMetadata::from_props(&p).unwrap_err();
        assert!(
            err.to_string()
                .contains("katago.preferPassAliveUnderSuicideRule"),
            "{err}"
        );
        let mut p = props.clone();
        set(&mut p, "katago.info.fromTheFuture", "x");
        set(&mut p, "some.other.tool", "y");
        let meta = ModelMetadata::from_props(&p).unwrap();
        assert_eq!(
            meta.info,
            vec![("katago.info.fromTheFuture".into(), "x".into())]
        );
        let mut p = props.clone();
        p.push((keys::LEAD.into(), "20".into()));
        assert!(matches!(
            ModelMetadata::from_props(&p),
            Err(MetaError::DuplicateKey { .. })
        ));
    }

    #[test]
    fn bad_values() {
        let props = props_of(&ModelMetadata::for_version("n", 15, 19, 19).unwrap());
        let check = |key: &str, value: &str, pred: &dyn Fn(&MetaError) -> bool| {
            let mut p = props.clone();
            set(&mut p, key, value);
            let err = ModelMetadata::from_props(&p).unwrap_err();
            assert!(pred(&err), "{key}={value:?}: {err:?}");
        };
        check(keys::METADATA_VERSION, "2", &|e| {
            matches!(e, MetaError::UnsupportedMetadataVersion { found: 2 })
        });
        check(keys::METADATA_VERSION, "banana", &|e| {
            matches!(e, MetaError::Parse { .. })
        });
        check(keys::MODEL_VERSION, "2", &|e| {
            matches!(e, MetaError::UnsupportedModelVersion { found: 2 })
        });
        check(keys::MODEL_VERSION, "18", &|e| {
            matches!(e, MetaError::UnsupportedModelVersion { found: 18 })
        });
        check(keys::NAME, "", &|e| matches!(e, MetaError::BadName { .. }));
        check(keys::NAME, "bad/name", &|e| {
            matches!(e, MetaError::BadName { .. })
        });
        check(keys::NAME, &"x".repeat(97), &|e| {
            matches!(e, MetaError::BadName { .. })
        });
        check(
            keys::NUM_VALUE_CHANNELS,
            "4",
            &|e| matches!(e, MetaError::ChannelCount { key, .. } if *key == keys::NUM_VALUE_CHANNELS),
        );
        check(
            keys::NUM_POLICY_CHANNELS,
            "4",
            &|e| matches!(e, MetaError::ChannelCount { key, .. } if *key == keys::NUM_POLICY_CHANNELS),
        );
        check(
            keys::NUM_INPUT_CHANNELS,
            "13",
            &|e| matches!(e, MetaError::ChannelCount { key, .. } if *key == keys::NUM_INPUT_CHANNELS),
        );
        check(
            keys::NUM_INPUT_META_CHANNELS,
            "5",
            &|e| matches!(e, MetaError::ChannelCount { key, .. } if *key == keys::NUM_INPUT_META_CHANNELS),
        );
        check(keys::META_ENCODER_VERSION, "2", &|e| {
            matches!(e, MetaError::UnsupportedMetaEncoder { found: 2 })
        });
        check(keys::LEAD, "0", &|e| {
            matches!(e, MetaError::NotPositive { .. })
        });
        check(keys::LEAD, "-5", &|e| {
            matches!(e, MetaError::NotPositive { .. })
        });
        check(keys::LEAD, "NaN", &|e| {
            matches!(e, MetaError::NotPositive { .. })
        });
        check(keys::LEAD, "inf", &|e| {
            matches!(e, MetaError::NotPositive { .. })
        });
        check(keys::LEAD, "twenty", &|e| {
            matches!(e, MetaError::Parse { .. })
        });
        check(keys::NN_X_LEN, "1", &|e| {
            matches!(e, MetaError::OutOfRange { .. })
        });
        check(keys::NN_Y_LEN, "26", &|e| {
            matches!(e, MetaError::OutOfRange { .. })
        });
        check(keys::NN_X_LEN, "-3", &|e| {
            matches!(e, MetaError::Parse { .. })
        });
        check(keys::PREFER_PASS_ALIVE, "maybe", &|e| {
            matches!(e, MetaError::Parse { .. })
        });
        check(keys::REQUIRE_EXACT_NN_LEN, "1", &|e| {
            matches!(e, MetaError::Parse { .. })
        });
    }

    #[test]
    fn version_17_accepts_either_policy_width() {
        let mut meta = ModelMetadata::for_version("n", 17, 19, 19).unwrap();
        for (channels, ok) in [(2, true), (4, true), (1, false), (3, false)] {
            meta.num_policy_channels = channels;
            assert_eq!(meta.validate().is_ok(), ok, "{channels} policy channels");
        }
    }

    #[test]
    fn node_lists_drop_blank_lines() {
        let mut props = props_of(&ModelMetadata::for_version("n", 15, 19, 19).unwrap());
        set(&mut props, keys::FP32_RMS_NORM, "\nnode/c\n");
        let meta = ModelMetadata::from_props(&props).unwrap();
        assert_eq!(meta.fp32_nodes_rms_norm, vec!["node/c".to_string()]);
    }
}
