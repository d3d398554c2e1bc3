//! The graph under construction: nodes, initializers, unique names, and the layer-level helpers
//! (convolutions with folded normalization, activations, masking, global pooling) every part of
//! the network is built from.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::{attribute_proto, tensor_proto, AttributeProto, NodeProto, TensorProto};

use crate::model::{Activation, ConvLayer, MatMulLayer};

/// The name of the mask input.
pub(super) const INPUT_MASK: &str = "InputMask";

/// Optional per-channel factors folded into a convolution or dense layer's weights.
#[derive(Default)]
pub(super) struct Fold<'a> {
    /// Multiplies output channel `o` (a following normalization's scale).
    pub out_scale: Option<&'a [f32]>,
    /// Multiplies input channel `i` (a preceding normalization's gain).
    pub in_scale: Option<&'a [f32]>,
    /// Added to output channel `o` (a following normalization's bias).
    pub bias: Option<Vec<f32>>,
    /// Multiplies every weight (e.g. attention's `1/sqrt(head_dim)`).
    pub factor: f32,
}

impl Fold<'_> {
    /// No folding.
    pub fn none() -> Self {
        Fold {
            factor: 1.0,
            ..Fold::default()
        }
    }
}

/// Which third feature global pooling produces besides the mean and the size-scaled mean.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PoolKind {
    /// Maximum over on-board points (trunk blocks, policy head).
    Max,
    /// Mean times a quadratic in the board width (value head).
    ValueQuad,
}

/// Mask-derived tensors, computed once and shared by every layer that needs them.
#[derive(Default)]
struct MaskCache {
    sum: Option<String>,
    minus_one: Option<String>,
    pool_scale: Option<String>,
    pool_quad: Option<String>,
    attention_bias: Option<String>,
}

/// A graph being built.
pub(super) struct Graph {
    pub nodes: Vec<NodeProto>,
    pub initializers: Vec<TensorProto>,
    used: HashSet<String>,
    scalars: HashMap<u32, String>,
    masks: MaskCache,
    /// No board masking: every position fills the buffer.
    pub exact: bool,
    /// Board buffer width.
    pub x_len: usize,
    /// Board buffer height.
    pub y_len: usize,
    /// Nodes of the precision-sensitive part of every RMS norm (for TensorRT FP32 pinning).
    pub rms_norm_nodes: Vec<String>,
}

fn attr_int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: name.to_string(),
        r#type: attribute_proto::AttributeType::Int as i32,
        i: value,
        ..AttributeProto::default()
    }
}

fn attr_ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.to_string(),
        r#type: attribute_proto::AttributeType::Ints as i32,
        ints: values.to_vec(),
        ..AttributeProto::default()
    }
}

fn dims_i64(dims: &[usize]) -> Vec<i64> {
    dims.iter()
        .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
        .collect()
}

impl Graph {
    /// An empty graph for an `x_len` x `y_len` buffer.
    pub fn new(x_len: usize, y_len: usize, exact: bool) -> Self {
        let mut used = HashSet::new();
        for reserved in ["InputSpatial", "InputGlobal", "InputMeta", INPUT_MASK] {
            used.insert(reserved.to_string());
        }
        Graph {
            nodes: Vec::new(),
            initializers: Vec::new(),
            used,
            scalars: HashMap::new(),
            masks: MaskCache::default(),
            exact,
            x_len,
            y_len,
            rms_norm_nodes: Vec::new(),
        }
    }

    /// Board buffer area.
    pub fn area(&self) -> usize {
        self.x_len * self.y_len
    }

    /// A tensor name based on `base` that no other tensor uses.
    pub fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}#{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }

    /// Reserves an exact name (graph outputs); `false` if taken.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.used.insert(name.to_string())
    }

    /// A float initializer.
    pub fn init(&mut self, base: &str, dims: &[usize], data: &[f32]) -> String {
        let name = self.fresh(base);
        let raw_data = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: dims_i64(dims),
            data_type: tensor_proto::DataType::Float as i32,
            raw_data,
            ..TensorProto::default()
        });
        name
    }

    /// An int64 initializer.
    pub fn init_i64(&mut self, base: &str, dims: &[usize], data: &[i64]) -> String {
        let name = self.fresh(base);
        let raw_data = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: dims_i64(dims),
            data_type: tensor_proto::DataType::Int64 as i32,
            raw_data,
            ..TensorProto::default()
        });
        name
    }

    /// A shared rank-0 float constant.
    pub fn scalar(&mut self, value: f32) -> String {
        if let Some(name) = self.scalars.get(&value.to_bits()) {
            return name.clone();
        }
        let name = self.init(&format!("const/{value}"), &[], &[value]);
        self.scalars.insert(value.to_bits(), name.clone());
        name
    }

    /// Adds a node whose single output gets a fresh name based on `base`.
    pub fn op(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        base: &str,
        attrs: Vec<AttributeProto>,
    ) -> String {
        let out = self.fresh(base);
        self.op_into(op_type, inputs, &out, attrs);
        out
    }

    /// Adds a node writing the already-reserved tensor `out`.
    pub fn op_into(
        &mut self,
        op_type: &str,
        inputs: &[&str],
        out: &str,
        attrs: Vec<AttributeProto>,
    ) {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.to_string()],
            name: out.to_string(),
            op_type: op_type.to_string(),
            attribute: attrs,
            ..NodeProto::default()
        });
    }

    /// A reduction over `axes` keeping dimensions (opset 18: axes as an input).
    pub fn reduce(&mut self, op_type: &str, x: &str, axes: &[i64], base: &str) -> String {
        let axes_name = self.init_i64(&format!("{base}/axes"), &[axes.len()], axes);
        self.op(
            op_type,
            &[x, &axes_name],
            base,
            vec![attr_int("keepdims", 1)],
        )
    }

    /// `Reshape` to a constant shape (`0` copies the input dimension, `-1` infers it).
    pub fn reshape(&mut self, x: &str, shape: &[i64], base: &str) -> String {
        let shape_name = self.init_i64(&format!("{base}/shape"), &[shape.len()], shape);
        self.op("Reshape", &[x, &shape_name], base, vec![])
    }

    /// `Transpose` with a permutation.
    pub fn transpose(&mut self, x: &str, perm: &[i64], base: &str) -> String {
        self.op("Transpose", &[x], base, vec![attr_ints("perm", perm)])
    }

    /// `Gather` along `axis` with constant indices.
    pub fn gather(&mut self, x: &str, indices: &[i64], axis: i64, base: &str) -> String {
        let idx = self.init_i64(&format!("{base}/indices"), &[indices.len()], indices);
        self.op("Gather", &[x, &idx], base, vec![attr_int("axis", axis)])
    }

    /// `Softmax` along `axis`.
    pub fn softmax(&mut self, x: &str, axis: i64, base: &str) -> String {
        self.op("Softmax", &[x], base, vec![attr_int("axis", axis)])
    }

    /// `Concat` along `axis`.
    pub fn concat(&mut self, xs: &[&str], axis: i64, base: &str) -> String {
        self.op("Concat", xs, base, vec![attr_int("axis", axis)])
    }

    /// A convolution with optional folded factors, `SAME` padding, writing a fresh tensor.
    pub fn conv(&mut self, x: &str, layer: &ConvLayer, fold: Fold<'_>, base: &str) -> String {
        let out = self.fresh(base);
        self.conv_into(x, layer, fold, &out);
        out
    }

    /// [`Graph::conv`] writing the already-reserved tensor `out`.
    pub fn conv_into(&mut self, x: &str, layer: &ConvLayer, fold: Fold<'_>, out: &str) {
        let per_out = layer.in_channels * layer.kernel_y * layer.kernel_x;
        let per_in = layer.kernel_y * layer.kernel_x;
        let mut w = layer.weights.clone();
        for (o, chunk) in w.chunks_mut(per_out.max(1)).enumerate() {
            let os = fold
                .out_scale
                .and_then(|s| s.get(o))
                .copied()
                .unwrap_or(1.0)
                * fold.factor;
            for (j, v) in chunk.iter_mut().enumerate() {
                let is = fold
                    .in_scale
                    .and_then(|s| s.get(j / per_in.max(1)))
                    .copied()
                    .unwrap_or(1.0);
                *v *= os * is;
            }
        }
        let w_name = self.init(
            &format!("{out}/weight"),
            &[
                layer.out_channels,
                layer.in_channels,
                layer.kernel_y,
                layer.kernel_x,
            ],
            &w,
        );
        let mut inputs = vec![x.to_string(), w_name];
        if let Some(b) = &fold.bias {
            inputs.push(self.init(&format!("{out}/bias"), &[layer.out_channels], b));
        }
        let pad_y = (layer.dilation_y * (layer.kernel_y - 1) / 2) as i64;
        let pad_x = (layer.dilation_x * (layer.kernel_x - 1) / 2) as i64;
        let attrs = vec![
            attr_ints(
                "kernel_shape",
                &[layer.kernel_y as i64, layer.kernel_x as i64],
            ),
            attr_ints(
                "dilations",
                &[layer.dilation_y as i64, layer.dilation_x as i64],
            ),
            attr_ints("pads", &[pad_y, pad_x, pad_y, pad_x]),
            attr_ints("strides", &[1, 1]),
        ];
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        self.op_into("Conv", &refs, out, attrs);
    }

    /// A dense layer over the channel axis of an NCHW tensor, as a 1x1 convolution (works on
    /// `[N,C,1,1]` pooled features and `[N,C,H,W]` maps alike), writing a fresh tensor.
    pub fn dense(&mut self, x: &str, layer: &MatMulLayer, fold: Fold<'_>, base: &str) -> String {
        let out = self.fresh(base);
        self.dense_into(x, layer, fold, &out);
        out
    }

    /// [`Graph::dense`] writing the already-reserved tensor `out`.
    pub fn dense_into(&mut self, x: &str, layer: &MatMulLayer, fold: Fold<'_>, out: &str) {
        self.conv_into(x, &layer.to_conv(), fold, out);
    }

    /// `x * scale + bias` per channel of an NCHW tensor.
    pub fn affine(&mut self, x: &str, scale: &[f32], bias: &[f32], base: &str) -> String {
        let s = self.init(&format!("{base}/scale"), &[1, scale.len(), 1, 1], scale);
        let b = self.init(&format!("{base}/bias"), &[1, bias.len(), 1, 1], bias);
        let scaled = self.op("Mul", &[x, &s], &format!("{base}/mul"), vec![]);
        self.op("Add", &[&scaled, &b], &format!("{base}/add"), vec![])
    }

    /// An activation function (no node at all for the identity).
    pub fn activation(&mut self, x: &str, activation: Activation, base: &str) -> String {
        match activation {
            Activation::Identity => x.to_string(),
            Activation::Relu => self.op("Relu", &[x], base, vec![]),
            // ONNX `Mish` (opset 18) is x * tanh(softplus(x)), as KataGo defines it.
            Activation::Mish => self.op("Mish", &[x], base, vec![]),
            Activation::Silu => {
                let sig = self.op("Sigmoid", &[x], &format!("{base}/sigmoid"), vec![]);
                self.op("Mul", &[x, &sig], base, vec![])
            }
        }
    }

    /// Zeroes off-board points (nothing in an exact graph).
    pub fn mask(&mut self, x: &str, base: &str) -> String {
        if self.exact {
            x.to_string()
        } else {
            self.op("Mul", &[x, INPUT_MASK], &format!("{base}/mask"), vec![])
        }
    }

    /// `[N,1,1,1]` number of on-board points.
    pub fn mask_sum(&mut self) -> String {
        if let Some(s) = &self.masks.sum {
            return s.clone();
        }
        let s = self.reduce("ReduceSum", INPUT_MASK, &[2, 3], "mask/sum");
        self.masks.sum = Some(s.clone());
        s
    }

    /// `[N,1,H,W]` mask minus one: 0 on-board, -1 off-board.
    fn mask_minus_one(&mut self) -> String {
        if let Some(s) = &self.masks.minus_one {
            return s.clone();
        }
        let neg_one = self.scalar(-1.0);
        let s = self.op("Add", &[INPUT_MASK, &neg_one], "mask/minus_one", vec![]);
        self.masks.minus_one = Some(s.clone());
        s
    }

    /// The two board-size factors of KataGo's pooling, `(sqrt(area) - 14) / 10` and
    /// `(sqrt(area) - 14)^2 / 100 - 0.1`: tensors when masking, constants in an exact graph.
    fn pool_factors(&mut self) -> (String, String) {
        if let (Some(a), Some(b)) = (&self.masks.pool_scale, &self.masks.pool_quad) {
            return (a.clone(), b.clone());
        }
        let (scale, quad) = if self.exact {
            // KataGo computes these in f32 from the on-board point count.
            let shifted = (self.area() as f32).sqrt() - 14.0;
            (
                self.scalar(shifted * 0.1),
                self.scalar(shifted * shifted * 0.01 - 0.1),
            )
        } else {
            let sum = self.mask_sum();
            let width = self.op("Sqrt", &[&sum], "mask/width", vec![]);
            let neg14 = self.scalar(-14.0);
            let shifted = self.op("Add", &[&width, &neg14], "mask/width_shifted", vec![]);
            let tenth = self.scalar(0.1);
            let scale = self.op("Mul", &[&shifted, &tenth], "mask/pool_scale", vec![]);
            let sq = self.op(
                "Mul",
                &[&shifted, &shifted],
                "mask/width_shifted_sq",
                vec![],
            );
            let hundredth = self.scalar(0.01);
            let sq_scaled = self.op(
                "Mul",
                &[&sq, &hundredth],
                "mask/width_shifted_sq_scaled",
                vec![],
            );
            let neg_tenth = self.scalar(-0.1);
            let quad = self.op("Add", &[&sq_scaled, &neg_tenth], "mask/pool_quad", vec![]);
            (scale, quad)
        };
        self.masks.pool_scale = Some(scale.clone());
        self.masks.pool_quad = Some(quad.clone());
        (scale, quad)
    }

    /// KataGo's global pooling of an already-masked `[N,C,H,W]` tensor into `[N,3C,1,1]`:
    /// mean over on-board points, mean times `(sqrt(area)-14)/10`, and either the on-board
    /// maximum (floored at -1, as KataGo's) or mean times `(sqrt(area)-14)^2/100 - 0.1`.
    pub fn global_pool(&mut self, x: &str, kind: PoolKind, base: &str) -> String {
        let mean = if self.exact {
            self.reduce("ReduceMean", x, &[2, 3], &format!("{base}/mean"))
        } else {
            let sum = self.reduce("ReduceSum", x, &[2, 3], &format!("{base}/sum"));
            let count = self.mask_sum();
            self.op("Div", &[&sum, &count], &format!("{base}/mean"), vec![])
        };
        let (scale, quad) = self.pool_factors();
        let scaled = self.op(
            "Mul",
            &[&mean, &scale],
            &format!("{base}/mean_scaled"),
            vec![],
        );
        let third = match kind {
            PoolKind::ValueQuad => {
                self.op("Mul", &[&mean, &quad], &format!("{base}/mean_quad"), vec![])
            }
            PoolKind::Max => {
                // Off-board points are 0 after masking; shifting them to -1 keeps them out of the
                // max, and the floor at -1 reproduces KataGo's accumulator start value.
                let shifted = if self.exact {
                    x.to_string()
                } else {
                    let m1 = self.mask_minus_one();
                    self.op("Add", &[x, &m1], &format!("{base}/shifted"), vec![])
                };
                let max = self.reduce("ReduceMax", &shifted, &[2, 3], &format!("{base}/max"));
                let neg_one = self.scalar(-1.0);
                self.op(
                    "Max",
                    &[&max, &neg_one],
                    &format!("{base}/max_floor"),
                    vec![],
                )
            }
        };
        self.concat(&[&mean, &scaled, &third], 1, &format!("{base}/concat"))
    }

    /// `[N,1,1,S]` additive attention bias over keys: 0 on-board, -1e9 off-board; `None` when exact.
    pub fn attention_key_bias(&mut self) -> Option<String> {
        if self.exact {
            return None;
        }
        if let Some(s) = &self.masks.attention_bias {
            return Some(s.clone());
        }
        let m1 = self.mask_minus_one();
        // exp(-1e9 + anything sane) is exactly 0 in f32, so off-board keys get no weight at all.
        let big = self.scalar(1e9);
        let bias = self.op("Mul", &[&m1, &big], "mask/attention_bias_nchw", vec![]);
        let area = i64::try_from(self.area()).unwrap_or(i64::MAX);
        let s = self.reshape(&bias, &[0, 1, 1, area], "mask/attention_bias");
        self.masks.attention_bias = Some(s.clone());
        Some(s)
    }
}
