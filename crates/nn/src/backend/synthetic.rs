//! Random-weight graphs that follow the ONNX contract and are shaped like KataGo's nets
//! (5x5 input conv, residual blocks, some with global pooling, policy/value/ownership heads),
//! for tests and benchmarks of the backends when no real model is at hand.

use tract_onnx::pb::{
    self, tensor_proto::DataType, tensor_shape_proto::dimension, type_proto, AttributeProto,
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};

use crate::contract::meta::ModelMetadata;
use crate::onnx::load::{
    set_props, INPUT_GLOBAL, INPUT_MASK, INPUT_META, INPUT_SPATIAL, OUTPUT_OWNERSHIP,
    OUTPUT_POLICY, OUTPUT_POLICY_PASS, OUTPUT_SCORE_VALUE, OUTPUT_VALUE,
};

/// The name of the symbolic batch dimension in synthetic graphs.
pub const BATCH_DIM: &str = "N";

/// The architecture of a synthetic net.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntheticNet {
    /// Residual blocks in the trunk.
    pub blocks: usize,
    /// Trunk channels.
    pub channels: usize,
    /// Indices of the blocks that carry a global-pooling branch.
    pub gpool_blocks: Vec<usize>,
    /// Channels of the global-pooling branches and of the heads.
    pub head_channels: usize,
    /// Seed of the weights.
    pub seed: u64,
}

impl SyntheticNet {
    /// A net shaped like KataGo's b6c96 (6 blocks of 96 channels, two with global pooling).
    pub fn b6c96(seed: u64) -> Self {
        SyntheticNet {
            blocks: 6,
            channels: 96,
            gpool_blocks: vec![2, 4],
            head_channels: 32,
            seed,
        }
    }

    /// A small net for quick tests (2 blocks of 16 channels, one with global pooling).
    pub fn tiny(seed: u64) -> Self {
        SyntheticNet {
            blocks: 2,
            channels: 16,
            gpool_blocks: vec![1],
            head_channels: 8,
            seed,
        }
    }

    /// Builds the graph for `meta` (its channel counts, buffer size and masking mode) with
    /// `meta`'s `katago.*` metadata attached.
    pub fn build(&self, meta: &ModelMetadata) -> ModelProto {
        let mut g = Builder::new(self.seed);
        let (x, y) = (i64::from(meta.nn_x_len), i64::from(meta.nn_y_len));
        let c = self.channels;
        let hc = self.head_channels;
        let masked = !meta.require_exact_nn_len;
        let mask = |g: &mut Builder, t: String| if masked { g.mul(&t, INPUT_MASK) } else { t };

        let mut inputs = vec![
            value_info(INPUT_SPATIAL, [i64::from(meta.num_input_channels), y, x]),
            value_info(
                INPUT_GLOBAL,
                [i64::from(meta.num_input_global_channels), 1, 1],
            ),
        ];
        if meta.has_meta_input() {
            inputs.push(value_info(
                INPUT_META,
                [i64::from(meta.num_input_meta_channels), 1, 1],
            ));
        }
        inputs.push(value_info(INPUT_MASK, [1, y, x]));

        let spatial = g.conv(INPUT_SPATIAL, meta.num_input_channels as usize, c, 5);
        let global = g.conv(INPUT_GLOBAL, meta.num_input_global_channels as usize, c, 1);
        let mut trunk = g.add(&spatial, &global);
        if meta.has_meta_input() {
            let m = g.conv(INPUT_META, meta.num_input_meta_channels as usize, c, 1);
            trunk = g.add(&trunk, &m);
        }
        trunk = mask(&mut g, trunk);
        for block in 0..self.blocks {
            let a = g.relu(&trunk);
            let mut mid = g.conv(&a, c, c, 3);
            if self.gpool_blocks.contains(&block) {
                let gp = g.conv(&a, c, hc, 3);
                let gp = g.relu(&gp);
                let pooled = g.pool(&gp);
                let bias = g.conv(&pooled, 2 * hc, c, 1);
                mid = g.add(&mid, &bias);
            }
            let mid = mask(&mut g, mid);
            let mid = g.relu(&mid);
            let out = g.conv(&mid, c, c, 3);
            let out = mask(&mut g, out);
            trunk = g.add(&trunk, &out);
        }
        let tip = g.relu(&trunk);

        let policy_channels = meta.num_policy_channels as usize;
        let p = g.conv(&tip, c, hc, 1);
        let p = g.relu(&p);
        g.conv_named(&p, hc, policy_channels, 1, OUTPUT_POLICY);
        let p_pooled = g.pool(&p);
        g.conv_named(&p_pooled, 2 * hc, policy_channels, 1, OUTPUT_POLICY_PASS);

        let v = g.conv(&tip, c, hc, 1);
        let v = g.relu(&v);
        g.conv_named(
            &v,
            hc,
            meta.num_ownership_channels as usize,
            1,
            OUTPUT_OWNERSHIP,
        );
        let v_pooled = g.pool(&v);
        let v2 = g.conv(&v_pooled, 2 * hc, hc, 1);
        let v2 = g.relu(&v2);
        g.conv_named(&v2, hc, meta.num_value_channels as usize, 1, OUTPUT_VALUE);
        g.conv_named(
            &v2,
            hc,
            meta.num_score_value_channels as usize,
            1,
            OUTPUT_SCORE_VALUE,
        );

        let outputs = vec![
            value_info(
                OUTPUT_POLICY_PASS,
                [i64::from(meta.num_policy_channels), 1, 1],
            ),
            value_info(OUTPUT_POLICY, [i64::from(meta.num_policy_channels), y, x]),
            value_info(OUTPUT_VALUE, [i64::from(meta.num_value_channels), 1, 1]),
            value_info(
                OUTPUT_SCORE_VALUE,
                [i64::from(meta.num_score_value_channels), 1, 1],
            ),
            value_info(
                OUTPUT_OWNERSHIP,
                [i64::from(meta.num_ownership_channels), y, x],
            ),
        ];
        let mut model = ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: 17,
            }],
            producer_name: "tengen-synthetic".to_string(),
            graph: Some(GraphProto {
                name: meta.name.clone(),
                node: g.nodes,
                initializer: g.initializers,
                input: inputs,
                output: outputs,
                ..Default::default()
            }),
            ..Default::default()
        };
        set_props(&mut model, meta);
        model
    }
}

/// A float32 `[N, C, H, W]` graph input/output declaration with a symbolic batch.
pub fn value_info(name: &str, chw: [i64; 3]) -> ValueInfoProto {
    let mut dim = vec![pb::tensor_shape_proto::Dimension {
        value: Some(dimension::Value::DimParam(BATCH_DIM.to_string())),
        ..Default::default()
    }];
    dim.extend(chw.iter().map(|&d| pb::tensor_shape_proto::Dimension {
        value: Some(dimension::Value::DimValue(d)),
        ..Default::default()
    }));
    ValueInfoProto {
        name: name.to_string(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Accumulates nodes and weights with generated names.
struct Builder {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
    next: usize,
    rng: u64,
}

impl Builder {
    fn new(seed: u64) -> Self {
        Builder {
            nodes: Vec::new(),
            initializers: Vec::new(),
            next: 0,
            rng: seed ^ 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn fresh(&mut self, what: &str) -> String {
        self.next += 1;
        format!("{what}_{}", self.next)
    }

    /// Uniform in [-1, 1) from a splitmix64 stream: deterministic without a dependency.
    fn uniform(&mut self) -> f32 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn weight(&mut self, dims: &[i64], scale: f32) -> String {
        let name = self.fresh("w");
        let count: i64 = dims.iter().product();
        let float_data = (0..count).map(|_| self.uniform() * scale).collect();
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: dims.to_vec(),
            data_type: DataType::Float as i32,
            float_data,
            ..Default::default()
        });
        name
    }

    fn node(&mut self, op: &str, inputs: &[&str], output: String, attrs: Vec<AttributeProto>) {
        let name = self.fresh(op);
        self.nodes.push(NodeProto {
            name,
            op_type: op.to_string(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output],
            attribute: attrs,
            ..Default::default()
        });
    }

    fn conv(&mut self, x: &str, cin: usize, cout: usize, k: usize) -> String {
        let out = self.fresh("conv");
        self.conv_named(x, cin, cout, k, &out);
        out
    }

    /// A convolution with bias and "same" padding; weights scaled to keep activations O(1).
    fn conv_named(&mut self, x: &str, cin: usize, cout: usize, k: usize, out: &str) {
        let fan_in = (cin * k * k) as f32;
        let scale = (3.0 / fan_in).sqrt();
        let (cin, cout, k) = (cin as i64, cout as i64, k as i64);
        let w = self.weight(&[cout, cin, k, k], scale);
        let b = self.weight(&[cout], 0.1);
        let pad = k / 2;
        let attrs = vec![
            ints_attr("kernel_shape", vec![k, k]),
            ints_attr("pads", vec![pad, pad, pad, pad]),
        ];
        self.node("Conv", &[x, &w, &b], out.to_string(), attrs);
    }

    fn relu(&mut self, x: &str) -> String {
        let out = self.fresh("relu");
        self.node("Relu", &[x], out.clone(), vec![]);
        out
    }

    fn add(&mut self, a: &str, b: &str) -> String {
        let out = self.fresh("add");
        self.node("Add", &[a, b], out.clone(), vec![]);
        out
    }

    fn mul(&mut self, a: &str, b: &str) -> String {
        let out = self.fresh("mul");
        self.node("Mul", &[a, b], out.clone(), vec![]);
        out
    }

    /// Mean and max over the board, concatenated: `[N, C, H, W]` to `[N, 2C, 1, 1]`.
    fn pool(&mut self, x: &str) -> String {
        let mean = self.fresh("gap");
        self.node("GlobalAveragePool", &[x], mean.clone(), vec![]);
        let max = self.fresh("gmp");
        self.node("GlobalMaxPool", &[x], max.clone(), vec![]);
        let out = self.fresh("concat");
        let axis = AttributeProto {
            name: "axis".to_string(),
            r#type: pb::attribute_proto::AttributeType::Int as i32,
            i: 1,
            ..Default::default()
        };
        self.node("Concat", &[&mean, &max], out.clone(), vec![axis]);
        out
    }
}

fn ints_attr(name: &str, ints: Vec<i64>) -> AttributeProto {
    AttributeProto {
        name: name.to_string(),
        r#type: pb::attribute_proto::AttributeType::Ints as i32,
        ints,
        ..Default::default()
    }
}
