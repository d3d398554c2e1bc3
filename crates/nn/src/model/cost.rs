//! What one evaluation of a model costs: its multiply-adds counted as a direct computation
//! would do them (every convolution and dense layer over the board at every point, the
//! attention's scores and weighted sums, the dense layers on pooled features once). Fast
//! paths do fewer (Winograd a quarter of a 3x3 convolution's), so a backend's rate of these
//! multiply-adds can pass the core's peak; that rate against the peak is how `tengen bench
//! nn` reports each path's efficiency.

use super::{Block, ConvLayer, MatMulLayer, ModelDesc};

fn conv(layer: &ConvLayer, area: u64) -> u64 {
    layer.weights.len() as u64 * area
}

fn dense(layer: &MatMulLayer) -> u64 {
    layer.weights.len() as u64
}

fn blocks(stack: &[Block], area: u64) -> u64 {
    stack
        .iter()
        .map(|b| match b {
            Block::Ordinary(b) => conv(&b.regular_conv, area) + conv(&b.final_conv, area),
            Block::GlobalPooling(b) => {
                conv(&b.regular_conv, area)
                    + conv(&b.gpool_conv, area)
                    + dense(&b.gpool_to_bias_mul)
                    + conv(&b.final_conv, area)
            }
            Block::NestedBottleneck(b) => {
                conv(&b.pre_conv, area) + blocks(&b.blocks, area) + conv(&b.post_conv, area)
            }
            Block::TransformerAttention(b) => {
                let projections = [&b.q_proj, &b.k_proj, &b.v_proj, &b.out_proj];
                let per_point: u64 = projections.iter().map(|l| dense(l)).sum();
                let heads = b.num_heads as u64;
                let widths = (b.q_head_dim + b.v_head_dim) as u64;
                per_point * area + heads * area * area * widths
            }
            Block::TransformerFfn(b) => {
                let gate = b.linear_gate.as_ref().map_or(0, dense);
                (dense(&b.linear1) + gate + dense(&b.linear2)) * area
            }
        })
        .sum()
}

impl ModelDesc {
    /// Multiply-adds of one evaluation on a board of `area` points, counted directly.
    pub fn multiply_adds(&self, area: usize) -> u64 {
        let area = area as u64;
        let t = &self.trunk;
        let meta = t
            .sgf_metadata_encoder
            .as_ref()
            .map_or(0, |e| dense(&e.mul1) + dense(&e.mul2) + dense(&e.mul3));
        let p = &self.policy_head;
        let pass = p.pass_mlp.as_ref().map_or(0, |m| dense(&m.mul2));
        let v = &self.value_head;
        conv(&t.initial_conv, area)
            + dense(&t.initial_matmul)
            + meta
            + blocks(&t.blocks, area)
            + conv(&p.p1_conv, area)
            + conv(&p.g1_conv, area)
            + dense(&p.gpool_to_bias_mul)
            + conv(&p.p2_conv, area)
            + dense(&p.gpool_to_pass_mul)
            + pass
            + conv(&v.v1_conv, area)
            + dense(&v.v2_mul)
            + dense(&v.v3_mul)
            + dense(&v.sv3_mul)
            + conv(&v.ownership_conv, area)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::load_model;

    fn net(name: &str) -> ModelDesc {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/nets/{name}.bin.gz"));
        load_model(&path).expect("test net loads")
    }

    /// `f(3a) - 2 f(2a) + f(a)`: zero for a cost linear in the area, `2 a^2 c` for `c a^2`.
    fn second_difference(d: &ModelDesc, a: usize) -> i128 {
        let f = |n: usize| i128::from(d.multiply_adds(n));
        f(3 * a) - 2 * f(2 * a) + f(a)
    }

    #[test]
    fn convolutions_cost_their_weights_at_every_point_and_attention_grows_with_its_square() {
        let conv = net("t-b3c48nbt-bng");
        assert_eq!(second_difference(&conv, 81), 0);
        // Nearly every weight is a convolution's, used once a point.
        let per_point = conv.multiply_adds(361) as f64 / 361.0;
        let params = conv.num_parameters() as f64;
        assert!(
            per_point < params && per_point > 0.9 * params,
            "{per_point} / {params}"
        );

        let tf = net("t-b2c64h4nbttflrs");
        let mut attention = 0i128;
        let mut stack: Vec<&Block> = tf.trunk.blocks.iter().collect();
        while let Some(b) = stack.pop() {
            match b {
                Block::NestedBottleneck(nb) => stack.extend(nb.blocks.iter()),
                Block::TransformerAttention(a) => {
                    attention += (a.num_heads * (a.q_head_dim + a.v_head_dim)) as i128
                }
                _ => {}
            }
        }
        assert!(attention > 0);
        assert_eq!(second_difference(&tf, 81), 2 * 81 * 81 * attention);
    }
}
