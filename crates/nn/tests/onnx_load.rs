//! Loading `.onnx` / `.onnx.gz` files: KataGo's ONNX contract is enforced with typed errors,
//! and corrupt or hostile bytes never panic.

use std::io::Write;
use std::path::PathBuf;

use prost::Message;
use tengen_nn::backend::synthetic::{value_info, SyntheticNet};
use tengen_nn::contract::meta::{keys, MetaError, ModelMetadata};
use tengen_nn::onnx::load::{self, ContractError, LoadError, LoadedModel};
use tract_onnx::pb::{self, ModelProto, StringStringEntryProto};

fn meta(version: u32) -> ModelMetadata {
    ModelMetadata::for_version("onnx-load-test", version, 9, 9).unwrap()
}

fn model() -> ModelProto {
    SyntheticNet::tiny(1).build(&meta(15))
}

fn set_meta(m: &mut ModelProto, key: &str, value: &str) {
    match m.metadata_props.iter_mut().find(|p| p.key == key) {
        Some(p) => p.value = value.to_string(),
        None => m.metadata_props.push(StringStringEntryProto {
            key: key.to_string(),
            value: value.to_string(),
        }),
    }
}

fn remove_meta(m: &mut ModelProto, key: &str) {
    let before = m.metadata_props.len();
    m.metadata_props.retain(|p| p.key != key);
    assert_eq!(m.metadata_props.len() + 1, before, "{key} was not present");
}

fn graph(m: &mut ModelProto) -> &mut pb::GraphProto {
    m.graph.as_mut().unwrap()
}

fn load(m: &ModelProto) -> Result<LoadedModel, LoadError> {
    LoadedModel::from_bytes(&m.encode_to_vec())
}

fn meta_err(m: &ModelProto) -> MetaError {
    match load(m) {
        Err(LoadError::Meta(e)) => e,
        other => panic!("expected a metadata error, got {other:?}"),
    }
}

fn contract_err(m: &ModelProto) -> ContractError {
    match load(m) {
        Err(LoadError::Contract(e)) => e,
        other => panic!("expected a contract error, got {other:?}"),
    }
}

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tengen-onnx-load-{}-{name}", std::process::id()))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn valid_model_loads_from_bytes_and_path() {
    let m = model();
    let loaded = load(&m).unwrap();
    assert_eq!(loaded.metadata, meta(15));
    assert_eq!(loaded.proto, m);
    let path = temp_path("plain.onnx");
    std::fs::write(&path, m.encode_to_vec()).unwrap();
    let from_file = LoadedModel::from_path(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(from_file.metadata, meta(15));
}

#[test]
fn gzipped_model_loads_by_magic() {
    let m = model();
    let path = temp_path("model.onnx.gz");
    std::fs::write(&path, gzip(&m.encode_to_vec())).unwrap();
    let loaded = LoadedModel::from_path(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(loaded.proto, m);
    // The extension does not matter, only the content.
    let loaded = LoadedModel::from_bytes(&gzip(&m.encode_to_vec())).unwrap();
    assert_eq!(loaded.metadata.name, "onnx-load-test");
}

#[test]
fn missing_required_key_is_named() {
    for key in [
        keys::NUM_VALUE_CHANNELS,
        keys::NN_X_LEN,
        keys::NAME,
        keys::PREFER_EXCLUDE_ATARI,
        keys::LEAD,
    ] {
        let mut m = model();
        remove_meta(&mut m, key);
        let err = meta_err(&m);
        assert_eq!(err, MetaError::MissingKey { key });
        assert!(err.to_string().contains(key));
    }
    let mut m = model();
    m.metadata_props.clear();
    assert_eq!(meta_err(&m), MetaError::NoMetadata);
}

#[test]
fn unknown_katago_key_is_refused_by_name() {
    let mut m = model();
    set_meta(&mut m, "katago.someKeyFromTheFuture", "surprise");
    let err = meta_err(&m);
    assert_eq!(
        err,
        MetaError::UnknownKey {
            key: "katago.someKeyFromTheFuture".into()
        }
    );
    assert!(err.to_string().contains("katago.someKeyFromTheFuture"));
    // A misspelled key is an unknown key.
    let mut m = model();
    set_meta(&mut m, "katago.preferPassAliveUnderSuicideRule", "true");
    assert!(matches!(meta_err(&m), MetaError::UnknownKey { .. }));
}

#[test]
fn info_and_foreign_keys_are_ignored() {
    let mut m = model();
    set_meta(&mut m, "katago.info.someReportingKeyFromTheFuture", "x");
    set_meta(&mut m, "katago.info.sourceSha256", "abc123");
    set_meta(&mut m, "some.other.tools.key", "ignored");
    let loaded = load(&m).unwrap();
    assert_eq!(loaded.metadata.info.len(), 2);
}

#[test]
fn bad_name_is_refused() {
    for name in ["", "bad/name", "spaces are bad", &"x".repeat(97)] {
        let mut m = model();
        set_meta(&mut m, keys::NAME, name);
        assert!(
            matches!(meta_err(&m), MetaError::BadName { .. }),
            "{name:?}"
        );
    }
}

#[test]
fn wrong_channel_count_for_version() {
    let mut m = model();
    set_meta(&mut m, keys::NUM_POLICY_CHANNELS, "4");
    let err = meta_err(&m);
    assert!(
        matches!(err, MetaError::ChannelCount { key, found: 4, model_version: 15, .. } if key == keys::NUM_POLICY_CHANNELS),
        "{err:?}"
    );
    // Version 6 had 13 spatial features: 22 is wrong there.
    let mut m = model();
    set_meta(&mut m, keys::MODEL_VERSION, "6");
    assert!(matches!(
        meta_err(&m),
        MetaError::ChannelCount { key, .. } if key == keys::NUM_INPUT_CHANNELS
    ));
    let mut m = model();
    set_meta(&mut m, keys::MODEL_VERSION, "18");
    assert_eq!(
        meta_err(&m),
        MetaError::UnsupportedModelVersion { found: 18 }
    );
}

#[test]
fn extra_graph_input_or_output_is_refused() {
    let mut m = model();
    graph(&mut m).input.push(value_info("Bogus", [3, 1, 1]));
    assert_eq!(
        contract_err(&m),
        ContractError::UnexpectedInput {
            name: "Bogus".into()
        }
    );
    let mut m = model();
    graph(&mut m)
        .output
        .push(value_info("OutputBogus", [3, 1, 1]));
    assert_eq!(
        contract_err(&m),
        ContractError::UnexpectedOutput {
            name: "OutputBogus".into()
        }
    );
    let mut m = model();
    let dup = graph(&mut m).input[2].clone();
    graph(&mut m).input.push(dup);
    assert!(matches!(contract_err(&m), ContractError::Duplicate { .. }));
}

#[test]
fn missing_graph_input_or_output_is_refused() {
    let mut m = model();
    graph(&mut m).input.pop();
    assert_eq!(
        contract_err(&m),
        ContractError::MissingInput { name: "InputMask" }
    );
    let mut m = model();
    graph(&mut m).output.retain(|o| o.name != "OutputValue");
    assert_eq!(
        contract_err(&m),
        ContractError::MissingOutput {
            name: "OutputValue"
        }
    );
    // A meta encoder model must declare InputMeta.
    let mut m = model();
    set_meta(&mut m, keys::META_ENCODER_VERSION, "1");
    set_meta(&mut m, keys::NUM_INPUT_META_CHANNELS, "192");
    assert_eq!(
        contract_err(&m),
        ContractError::MissingInput { name: "InputMeta" }
    );
}

#[test]
fn wrong_input_order_is_refused() {
    let mut m = model();
    graph(&mut m).input.swap(0, 2);
    let err = contract_err(&m);
    assert!(matches!(err, ContractError::InputOrder { .. }), "{err:?}");
    // Outputs are bound by name: their order is free.
    let mut m = model();
    graph(&mut m).output.reverse();
    load(&m).unwrap();
}

#[test]
fn wrong_shape_is_refused() {
    let mut m = model();
    graph(&mut m).output[1] = value_info("OutputPolicy", [2, 13, 9]);
    assert_eq!(
        contract_err(&m),
        ContractError::WrongDim {
            name: "OutputPolicy".into(),
            axis: "height",
            found: 13,
            expected: 9
        }
    );
    let mut m = model();
    graph(&mut m).input[0] = value_info("InputSpatial", [19, 9, 9]);
    assert!(matches!(
        contract_err(&m),
        ContractError::WrongDim {
            axis: "channel",
            found: 19,
            expected: 22,
            ..
        }
    ));
    // Rank, fixed batch, symbolic channel, element type.
    let mut m = model();
    shape_of(&mut graph(&mut m).input[1]).dim.pop();
    assert!(matches!(
        contract_err(&m),
        ContractError::Rank { rank: 3, .. }
    ));
    let mut m = model();
    shape_of(&mut graph(&mut m).input[0]).dim[0].value =
        Some(pb::tensor_shape_proto::dimension::Value::DimValue(1));
    assert!(matches!(
        contract_err(&m),
        ContractError::FixedBatch { value: 1, .. }
    ));
    let mut m = model();
    shape_of(&mut graph(&mut m).input[0]).dim[1].value = Some(
        pb::tensor_shape_proto::dimension::Value::DimParam("c".into()),
    );
    assert!(matches!(
        contract_err(&m),
        ContractError::SymbolicDim {
            axis: "channel",
            ..
        }
    ));
    let mut m = model();
    tensor_of(&mut graph(&mut m).output[2]).elem_type = pb::tensor_proto::DataType::Int32 as i32;
    assert!(matches!(contract_err(&m), ContractError::NotFloat { .. }));
}

#[test]
fn initializer_declared_as_input_is_a_weight() {
    let mut m = model();
    let weight = graph(&mut m).initializer[0].clone();
    let dims = weight.dims.clone();
    assert_eq!(dims.len(), 4);
    let mut info = value_info(&weight.name, [dims[1], dims[2], dims[3]]);
    shape_of(&mut info).dim[0].value =
        Some(pb::tensor_shape_proto::dimension::Value::DimValue(dims[0]));
    graph(&mut m).input.push(info);
    load(&m).unwrap();
}

#[test]
fn external_data_is_refused() {
    let mut m = model();
    let t = &mut graph(&mut m).initializer[0];
    t.data_location = Some(pb::tensor_proto::DataLocation::External as i32);
    t.external_data.push(StringStringEntryProto {
        key: "location".into(),
        value: "../../etc/passwd".into(),
    });
    assert!(matches!(
        contract_err(&m),
        ContractError::ExternalData { .. }
    ));
}

#[test]
fn garbage_bytes_are_typed_errors() {
    assert!(matches!(
        LoadedModel::from_bytes(b"this is not an onnx file"),
        Err(LoadError::Decode(_))
    ));
    // An empty message decodes to an empty model: it has no metadata.
    assert!(matches!(
        LoadedModel::from_bytes(&[]),
        Err(LoadError::Meta(MetaError::NoMetadata))
    ));
    // Gzip magic followed by garbage.
    assert!(matches!(
        LoadedModel::from_bytes(&[0x1f, 0x8b, 1, 2, 3, 4, 5, 6, 7]),
        Err(LoadError::Gzip(_))
    ));
    // A truncated model.
    let bytes = model().encode_to_vec();
    assert!(LoadedModel::from_bytes(&bytes[..bytes.len() / 2]).is_err());
    // A gzip stream expanding past the limit stops at the limit.
    let bomb = gzip(&vec![0u8; 1 << 20]);
    assert!(matches!(
        load::load_bytes(&bomb, 1 << 16),
        Err(LoadError::TooLarge { .. })
    ));
    assert!(matches!(
        LoadedModel::from_path(temp_path("does-not-exist.onnx")),
        Err(LoadError::Io { .. })
    ));
}

#[test]
fn random_corruption_never_panics() {
    let bytes = model().encode_to_vec();
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..300 {
        let mut b = bytes.clone();
        for _ in 0..rng.usize(1..8) {
            let i = rng.usize(..b.len());
            b[i] = rng.u8(..);
        }
        let cut = rng.usize(b.len() / 2..=b.len());
        let _ = LoadedModel::from_bytes(&b[..cut]);
        let _ = LoadedModel::from_bytes(&gzip(&b[..cut]));
    }
    for len in [1, 2, 10, 100, 1000] {
        let noise: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
        let _ = LoadedModel::from_bytes(&noise);
    }
}

fn tensor_of(info: &mut pb::ValueInfoProto) -> &mut pb::type_proto::Tensor {
    match info.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        Some(pb::type_proto::Value::TensorType(t)) => t,
        None => panic!("no tensor type"),
    }
}

fn shape_of(info: &mut pb::ValueInfoProto) -> &mut pb::TensorShapeProto {
    tensor_of(info).shape.as_mut().unwrap()
}
