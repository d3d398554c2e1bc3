//! The QDQ rewrite: each chosen convolution reads its input through a uint8
//! `QuantizeLinear`/`DequantizeLinear` pair, its weights as per-channel symmetric int8 and
//! its bias as int32, and its output passes through another uint8 pair, the pattern ONNX
//! Runtime replaces by one integer convolution.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::{
    attribute_proto, tensor_proto, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto,
};

use super::{QuantizeError, Ranges};
use crate::contract::meta::ModelMetadata;
use crate::onnx::load::props_of;

/// A convolution chosen for int8: its node index and the tensors whose ranges it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvSite {
    /// Index of the `Conv` node in the graph.
    pub node: usize,
    /// The activation it reads.
    pub input: String,
    /// The tensor it writes.
    pub output: String,
}

/// The convolutions worth quantizing: spatial convolutions with constant weights in the
/// trunk, except the input layer and those the graph's metadata pins to fp32 (the trunk's
/// tip and the heads). Convolutions reading pooled features (a `Concat`) are dense layers
/// on one point each and gain nothing.
pub fn quantizable_convs(model: &ModelProto) -> Result<Vec<ConvSite>, QuantizeError> {
    let graph = graph_of(model)?;
    let meta = ModelMetadata::from_props(&props_of(model))
        .map_err(|e| QuantizeError::Unsupported(format!("metadata: {e}")))?;
    let pinned: HashSet<&str> = meta
        .fp32_nodes_trunk_tip_and_head
        .iter()
        .map(String::as_str)
        .collect();
    let inputs: HashSet<&str> = graph.input.iter().map(|i| i.name.as_str()).collect();
    let producer: HashMap<&str, &str> = graph
        .node
        .iter()
        .flat_map(|n| {
            n.output
                .iter()
                .map(move |o| (o.as_str(), n.op_type.as_str()))
        })
        .collect();
    let weights: HashMap<&str, &TensorProto> = graph
        .initializer
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let mut sites = Vec::new();
    for (i, node) in graph.node.iter().enumerate() {
        if node.op_type != "Conv" || pinned.contains(node.name.as_str()) {
            continue;
        }
        let (Some(x), Some(w), Some(y)) =
            (node.input.first(), node.input.get(1), node.output.first())
        else {
            continue;
        };
        let spatial_weights = weights.get(w.as_str()).is_some_and(|t| {
            t.dims.len() == 4 && t.data_type == tensor_proto::DataType::Float as i32
        });
        if !spatial_weights
            || inputs.contains(x.as_str())
            || producer.get(x.as_str()) == Some(&"Concat")
        {
            continue;
        }
        sites.push(ConvSite {
            node: i,
            input: x.clone(),
            output: y.clone(),
        });
    }
    if sites.is_empty() {
        return Err(QuantizeError::Unsupported(
            "no convolution to quantize".into(),
        ));
    }
    Ok(sites)
}

/// The graph rewritten with `sites` in int8, using the calibrated `ranges`.
pub fn quantize(
    model: &ModelProto,
    sites: &[ConvSite],
    ranges: &Ranges,
) -> Result<ModelProto, QuantizeError> {
    let mut out = model.clone();
    let graph = out
        .graph
        .as_mut()
        .ok_or_else(|| QuantizeError::Unsupported("no graph".into()))?;
    let old_nodes = std::mem::take(&mut graph.node);
    let mut inits: HashMap<String, TensorProto> = std::mem::take(&mut graph.initializer)
        .into_iter()
        .map(|t| (t.name.clone(), t))
        .collect();
    let by_node: HashMap<usize, &ConvSite> = sites.iter().map(|s| (s.node, s)).collect();
    // One quantize/dequantize pair per activation, however many convolutions read it.
    let mut dequantized: HashMap<String, (String, f32)> = HashMap::new();
    let mut nodes = Vec::with_capacity(old_nodes.len() + 4 * sites.len());
    let mut added = Vec::new();
    for (i, node) in old_nodes.into_iter().enumerate() {
        let Some(site) = by_node.get(&i) else {
            nodes.push(node);
            continue;
        };
        let (x_dq, x_scale) = match dequantized.get(&site.input) {
            Some(d) => d.clone(),
            None => {
                let range = ranges.get(&site.input)?;
                let x = site.input.as_str();
                let dq = format!("{x}#dq");
                let scale = qdq(&mut nodes, &mut added, (x, x, &dq), range);
                dequantized.insert(site.input.clone(), (dq.clone(), scale));
                (dq, scale)
            }
        };
        let w_name = node
            .input
            .get(1)
            .ok_or_else(|| QuantizeError::Unsupported(format!("{} has no weights", node.name)))?;
        let w = inits
            .remove(w_name)
            .ok_or_else(|| QuantizeError::Unsupported(format!("weights {w_name} missing")))?;
        let (w_dq, w_scales) = weights_int8(&mut nodes, &mut added, &w)?;
        let mut conv_inputs = vec![x_dq, w_dq];
        if let Some(b_name) = node.input.get(2) {
            let b = inits
                .remove(b_name)
                .ok_or_else(|| QuantizeError::Unsupported(format!("bias {b_name} missing")))?;
            conv_inputs.push(bias_int32(&mut nodes, &mut added, &b, x_scale, &w_scales)?);
        }
        let raw = format!("{}#fp32", site.output);
        nodes.push(NodeProto {
            input: conv_inputs,
            output: vec![raw.clone()],
            name: raw.clone(),
            ..node
        });
        let range = ranges.get(&site.output)?;
        let y = site.output.as_str();
        qdq(&mut nodes, &mut added, (&raw, y, y), range);
    }
    graph.node = nodes;
    graph.initializer = inits.into_values().chain(added).collect();
    // Deterministic bytes for the same input (the map above has no order).
    graph.initializer.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn graph_of(model: &ModelProto) -> Result<&GraphProto, QuantizeError> {
    model
        .graph
        .as_ref()
        .ok_or_else(|| QuantizeError::Unsupported("no graph".into()))
}

/// Scale and zero point of an asymmetric uint8 grid covering `[min, max]` and zero.
fn uint8_grid((min, max): (f32, f32)) -> (f32, u8) {
    let (lo, hi) = (min.min(0.0), max.max(0.0));
    let scale = if hi > lo { (hi - lo) / 255.0 } else { 1.0 };
    let zero = (-lo / scale).round().clamp(0.0, 255.0) as u8;
    (scale, zero)
}

/// Appends `input -> QuantizeLinear -> DequantizeLinear -> out` on the uint8 grid of
/// `range`, its constants named after `base`; returns the grid's scale.
fn qdq(
    nodes: &mut Vec<NodeProto>,
    inits: &mut Vec<TensorProto>,
    (input, base, out): (&str, &str, &str),
    range: (f32, f32),
) -> f32 {
    let (scale, zero) = uint8_grid(range);
    let bytes = scale.to_le_bytes().to_vec();
    let s = push_init(inits, &format!("{base}#scale"), &[], FLOAT, bytes);
    let z = push_init(inits, &format!("{base}#zero"), &[], UINT8, vec![zero]);
    let q = format!("{base}#q");
    nodes.push(node("QuantizeLinear", &[input, &s, &z], &q, vec![]));
    nodes.push(node("DequantizeLinear", &[&q, &s, &z], out, vec![]));
    scale
}

/// Per-output-channel symmetric int8 weights behind a `DequantizeLinear`; returns its
/// output name and the channel scales.
fn weights_int8(
    nodes: &mut Vec<NodeProto>,
    inits: &mut Vec<TensorProto>,
    w: &TensorProto,
) -> Result<(String, Vec<f32>), QuantizeError> {
    let values = floats(w)?;
    let channels = w
        .dims
        .first()
        .and_then(|&d| usize::try_from(d).ok())
        .unwrap_or(0)
        .max(1);
    let per = values.len() / channels;
    if per * channels != values.len() || per == 0 {
        return Err(QuantizeError::Unsupported(format!(
            "weights {} shape",
            w.name
        )));
    }
    let mut scales = Vec::with_capacity(channels);
    let mut q = Vec::with_capacity(values.len());
    for chunk in values.chunks(per) {
        let max = chunk.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        q.extend(
            chunk
                .iter()
                .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8 as u8),
        );
    }
    let base = &w.name;
    let wq = push_init(inits, &format!("{base}#int8"), &w.dims, INT8, q);
    let s = push_init(
        inits,
        &format!("{base}#scale"),
        &[channels as i64],
        FLOAT,
        scales.iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    let z = push_init(
        inits,
        &format!("{base}#zero"),
        &[channels as i64],
        INT8,
        vec![0; channels],
    );
    let dq = format!("{base}#dq");
    nodes.push(node("DequantizeLinear", &[&wq, &s, &z], &dq, vec![axis(0)]));
    Ok((dq, scales))
}

/// The bias as int32 on the grid `x_scale * w_scale[o]` (what an integer convolution
/// accumulates in) behind a `DequantizeLinear`.
fn bias_int32(
    nodes: &mut Vec<NodeProto>,
    inits: &mut Vec<TensorProto>,
    b: &TensorProto,
    x_scale: f32,
    w_scales: &[f32],
) -> Result<String, QuantizeError> {
    let values = floats(b)?;
    if values.len() != w_scales.len() {
        return Err(QuantizeError::Unsupported(format!(
            "bias {} length",
            b.name
        )));
    }
    let scales: Vec<f32> = w_scales.iter().map(|w| w * x_scale).collect();
    let q: Vec<u8> = values
        .iter()
        .zip(&scales)
        .flat_map(|(v, s)| {
            let q = (f64::from(*v) / f64::from(*s)).round();
            (q.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32).to_le_bytes()
        })
        .collect();
    let n = [values.len() as i64];
    let base = &b.name;
    let bq = push_init(inits, &format!("{base}#int32"), &n, INT32, q);
    let s = push_init(
        inits,
        &format!("{base}#scale"),
        &n,
        FLOAT,
        scales.iter().flat_map(|v| v.to_le_bytes()).collect(),
    );
    let z = push_init(
        inits,
        &format!("{base}#zero"),
        &n,
        INT32,
        vec![0; 4 * values.len()],
    );
    let dq = format!("{base}#dq");
    nodes.push(node("DequantizeLinear", &[&bq, &s, &z], &dq, vec![axis(0)]));
    Ok(dq)
}

const FLOAT: i32 = tensor_proto::DataType::Float as i32;
const UINT8: i32 = tensor_proto::DataType::Uint8 as i32;
const INT8: i32 = tensor_proto::DataType::Int8 as i32;
const INT32: i32 = tensor_proto::DataType::Int32 as i32;

/// The float values of an initializer (raw little-endian bytes or `float_data`).
fn floats(t: &TensorProto) -> Result<Vec<f32>, QuantizeError> {
    if t.data_type != FLOAT {
        return Err(QuantizeError::Unsupported(format!(
            "{} is not float",
            t.name
        )));
    }
    if !t.raw_data.is_empty() {
        if !t.raw_data.len().is_multiple_of(4) {
            return Err(QuantizeError::Unsupported(format!("{} raw data", t.name)));
        }
        return Ok(t
            .raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect());
    }
    Ok(t.float_data.clone())
}

fn push_init(
    inits: &mut Vec<TensorProto>,
    name: &str,
    dims: &[i64],
    data_type: i32,
    raw_data: Vec<u8>,
) -> String {
    inits.push(TensorProto {
        name: name.to_string(),
        dims: dims.to_vec(),
        data_type,
        raw_data,
        ..TensorProto::default()
    });
    name.to_string()
}

fn node(op_type: &str, inputs: &[&str], out: &str, attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.to_string()],
        name: out.to_string(),
        op_type: op_type.to_string(),
        attribute,
        ..NodeProto::default()
    }
}

fn axis(value: i64) -> AttributeProto {
    AttributeProto {
        name: "axis".to_string(),
        r#type: attribute_proto::AttributeType::Int as i32,
        i: value,
        ..AttributeProto::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uint8_grid_covers_the_range_and_zero() {
        let (s, z) = uint8_grid((-1.0, 3.0));
        assert!((s - 4.0 / 255.0).abs() < 1e-7);
        assert_eq!(z, 64);
        // Zero is exactly representable: the grid always includes it.
        let (s, z) = uint8_grid((0.5, 2.0));
        assert_eq!(z, 0);
        assert!((s - 2.0 / 255.0).abs() < 1e-7);
        let (s, z) = uint8_grid((0.0, 0.0));
        assert_eq!((s, z), (1.0, 0));
    }

    #[test]
    fn a_graph_it_cannot_rewrite_is_an_error() {
        let empty = ModelProto::default();
        assert!(matches!(
            quantizable_convs(&empty),
            Err(QuantizeError::Unsupported(_))
        ));
        let calibrated = super::super::calibrate(&empty, &[], &Default::default());
        assert!(matches!(calibrated, Err(QuantizeError::Unsupported(_))));
        // A site naming a node that is not there (or has no weights) fails cleanly too.
        let graph = ModelProto {
            graph: Some(GraphProto {
                node: vec![node("Conv", &["x"], "y", vec![])],
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        };
        let site = ConvSite {
            node: 0,
            input: "x".into(),
            output: "y".into(),
        };
        let mut ranges = Ranges::default();
        ranges.observe("x", &[0.0, 1.0]);
        ranges.observe("y", &[-1.0, 1.0]);
        assert!(quantize(&graph, &[site], &ranges).is_err());
    }
}
