//! What `kata-get-models` reports about the loaded networks: KataGo's JSON array of one
//! object per model, filled from what the program that loaded them knows.

use serde_json::{json, Value};

/// One loaded network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelInfo {
    /// Its file name (`g170-b6c96.bin.gz`).
    pub name: String,
    /// Its name without extensions, as KataGo's `internalName`.
    pub internal_name: String,
    /// The most positions evaluated in one batch.
    pub max_batch_size: usize,
    /// The model format version, when known before the first evaluation.
    pub version: Option<u32>,
    /// Whether evaluation runs in half precision.
    pub fp16: bool,
}

impl ModelInfo {
    /// The object KataGo prints for a model (no human-SL models here, so
    /// `usesHumanSLProfile` is false).
    pub fn to_json(&self) -> Value {
        let mut o = json!({
            "name": self.name,
            "internalName": self.internal_name,
            "maxBatchSize": self.max_batch_size,
            "usesHumanSLProfile": false,
            "usingFP16": self.fp16.to_string(),
        });
        if let Some(v) = self.version {
            o["version"] = json!(v);
        }
        o
    }
}

/// `kata-get-models`'s reply: an array, empty when no network plays.
pub fn models_json(models: &[ModelInfo]) -> String {
    Value::Array(models.iter().map(ModelInfo::to_json).collect()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_reads_as_katago_prints_it() {
        let m = ModelInfo {
            name: "g170-b6c96.bin.gz".into(),
            internal_name: "g170-b6c96".into(),
            max_batch_size: 4,
            version: Some(8),
            fp16: false,
        };
        let v: Value = serde_json::from_str(&models_json(&[m])).unwrap();
        assert_eq!(v[0]["name"], "g170-b6c96.bin.gz");
        assert_eq!(v[0]["internalName"], "g170-b6c96");
        assert_eq!(v[0]["maxBatchSize"], 4);
        assert_eq!(v[0]["version"], 8);
        assert_eq!(v[0]["usesHumanSLProfile"], false);
        assert_eq!(v[0]["usingFP16"], "false");
        assert_eq!(models_json(&[]), "[]");
    }
}
