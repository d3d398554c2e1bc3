//! A convolutional KataGo network laid out for the native backend, and its forward pass over
//! one position: the same arithmetic as the ONNX graph `onnx::build` writes (trunk blocks,
//! trunk tip, policy and value heads), on HWC activations.

use crate::model::{
    Activation, Block, GlobalPoolingBlock, ModelDesc, NestedBottleneckBlock, ResidualBlock,
    TransformerAttentionBlock, TransformerFfnBlock, TrunkTip,
};

use super::layers::{
    activate, add_channel_bias, global_pool, Conv, Dense, Mask, NormAct, Pool, Scratch,
};
use super::transformer::{attend, projection, rms_normalize, Heads, RmsTip, RopeTables};
use super::winograd::Gemm;

/// Why a model cannot run on the native backend.
#[derive(Debug, thiserror::Error)]
#[error("the native backend does not run {0}")]
pub struct Unsupported(pub String);

enum NetBlock {
    Ordinary {
        pre: NormAct,
        regular: Conv,
        mid_act: Activation,
        last: Conv,
    },
    GlobalPooling {
        pre: NormAct,
        regular: Conv,
        gpool: Conv,
        gpool_act: Activation,
        to_bias: Dense,
        mid_act: Activation,
        last: Conv,
    },
    Nested {
        pre: NormAct,
        first: Conv,
        blocks: Vec<NetBlock>,
        post: NormAct,
        last: Conv,
    },
    Attention {
        eps: f32,
        q: Conv,
        k: Conv,
        v: Conv,
        out: Conv,
        shape: Heads,
        rope: Option<RopeTables>,
    },
    Ffn {
        eps: f32,
        linear1: Conv,
        gate: Option<Conv>,
        linear2: Conv,
    },
}

/// The trunk's last normalization.
enum Tip {
    Batch(NormAct),
    Rms(RmsTip, Activation),
}

/// The SGF-metadata encoder of a human-SL net: two hidden layers, then the trunk's width.
struct MetaEncoder {
    mul1: Dense,
    act1: Activation,
    mul2: Dense,
    act2: Activation,
    mul3: Dense,
}

/// What laying out the blocks needs besides the model: how 3x3 and 1x1 convolutions
/// multiply, and the board buffer (for the attention blocks' rotation tables).
#[derive(Clone, Copy)]
struct Layout {
    gemm: Gemm,
    h: usize,
    w: usize,
}

/// The network, ready to evaluate.
pub struct Net {
    initial_conv: Conv,
    initial_global: Dense,
    trunk_channels: usize,
    meta: Option<MetaEncoder>,
    blocks: Vec<NetBlock>,
    tip: Tip,
    // Policy head.
    p1: Conv,
    g1: Conv,
    g1_act: Activation,
    g1_to_bias: Dense,
    p1_act: Activation,
    p2: Conv,
    pass: Dense,
    pass_mlp: Option<(Activation, Dense)>,
    // Value head.
    v1: Conv,
    v1_act: Activation,
    v2: Dense,
    v2_act: Activation,
    v3: Dense,
    sv3: Dense,
    ownership: Conv,
}

fn ordinary(b: &ResidualBlock, gemm: Gemm) -> NetBlock {
    let (ms, mb) = b.mid_bn.merged_scale_bias();
    NetBlock::Ordinary {
        pre: NormAct::new(&b.pre_bn, b.pre_activation.activation),
        regular: Conv::new(&b.regular_conv, Some(&ms), Some(mb), gemm),
        mid_act: b.mid_activation.activation,
        last: Conv::new(&b.final_conv, None, None, gemm),
    }
}

fn global_pooling(b: &GlobalPoolingBlock, gemm: Gemm) -> NetBlock {
    let (ms, mb) = b.mid_bn.merged_scale_bias();
    let (gs, gb) = b.gpool_bn.merged_scale_bias();
    NetBlock::GlobalPooling {
        pre: NormAct::new(&b.pre_bn, b.pre_activation.activation),
        regular: Conv::new(&b.regular_conv, Some(&ms), None, gemm),
        gpool: Conv::new(&b.gpool_conv, Some(&gs), Some(gb), gemm),
        gpool_act: b.gpool_activation.activation,
        to_bias: Dense::new(&b.gpool_to_bias_mul, Some(&ms), Some(mb)),
        mid_act: b.mid_activation.activation,
        last: Conv::new(&b.final_conv, None, None, gemm),
    }
}

fn nested(b: &NestedBottleneckBlock, layout: Layout) -> Result<NetBlock, Unsupported> {
    let gemm = layout.gemm;
    Ok(NetBlock::Nested {
        pre: NormAct::new(&b.pre_bn, b.pre_activation.activation),
        first: Conv::new(&b.pre_conv, None, None, gemm),
        blocks: stack(&b.blocks, layout)?,
        post: NormAct::new(&b.post_bn, b.post_activation.activation),
        last: Conv::new(&b.post_conv, None, None, gemm),
    })
}

/// The projections take the norm's gain on their inputs, the query also `1/sqrt(d)`.
fn attention(b: &TransformerAttentionBlock, layout: Layout) -> NetBlock {
    let (gain, gemm) = (b.pre_norm.weight.as_slice(), layout.gemm);
    let scale = 1.0 / (b.q_head_dim as f32).sqrt();
    NetBlock::Attention {
        eps: b.pre_norm.epsilon,
        q: projection(&b.q_proj, gain, scale, gemm),
        k: projection(&b.k_proj, gain, 1.0, gemm),
        v: projection(&b.v_proj, gain, 1.0, gemm),
        out: projection(&b.out_proj, &[], 1.0, gemm),
        shape: Heads {
            heads: b.num_heads,
            kv_heads: b.num_kv_heads,
            d: b.q_head_dim,
            dv: b.v_head_dim,
        },
        rope: RopeTables::new(b, layout.h, layout.w),
    }
}

fn ffn(b: &TransformerFfnBlock, layout: Layout) -> NetBlock {
    let (gain, gemm) = (b.pre_norm.weight.as_slice(), layout.gemm);
    NetBlock::Ffn {
        eps: b.pre_norm.epsilon,
        linear1: projection(&b.linear1, gain, 1.0, gemm),
        gate: b
            .linear_gate
            .as_ref()
            .map(|g| projection(g, gain, 1.0, gemm)),
        linear2: projection(&b.linear2, &[], 1.0, gemm),
    }
}

fn stack(blocks: &[Block], layout: Layout) -> Result<Vec<NetBlock>, Unsupported> {
    let gemm = layout.gemm;
    blocks
        .iter()
        .map(|b| match b {
            Block::Ordinary(b) => Ok(ordinary(b, gemm)),
            Block::GlobalPooling(b) => Ok(global_pooling(b, gemm)),
            Block::NestedBottleneck(b) => nested(b, layout),
            Block::TransformerAttention(b) => {
                let heads_fit = b.num_kv_heads > 0
                    && b.num_heads.is_multiple_of(b.num_kv_heads)
                    && b.q_head_dim.is_multiple_of(2);
                if !heads_fit {
                    return Err(Unsupported(format!(
                        "attention block {:?} ({} query heads over {} KV heads, width {})",
                        b.name, b.num_heads, b.num_kv_heads, b.q_head_dim
                    )));
                }
                Ok(attention(b, layout))
            }
            Block::TransformerFfn(b) => Ok(ffn(b, layout)),
        })
        .collect()
}

impl Net {
    /// Lays out `model` for an `h` x `w` board buffer, its trunk's convolutions and
    /// transformer projections multiplying by `gemm` (the heads' and the input layer's in
    /// f32, as are attention's own products).
    pub fn new(model: &ModelDesc, gemm: Gemm, h: usize, w: usize) -> Result<Net, Unsupported> {
        let t = &model.trunk;
        let blocks = stack(&t.blocks, Layout { gemm, h, w })?;
        let meta = t.sgf_metadata_encoder.as_ref().map(|e| MetaEncoder {
            mul1: Dense::new(&e.mul1, None, Some(e.bias1.weights.clone())),
            act1: e.act1.activation,
            mul2: Dense::new(&e.mul2, None, Some(e.bias2.weights.clone())),
            act2: e.act2.activation,
            mul3: Dense::new(&e.mul3, None, None),
        });
        let tip = match &t.tip {
            TrunkTip::BatchNorm(bn) => Tip::Batch(NormAct::new(bn, t.tip_activation.activation)),
            TrunkTip::RmsNorm(rms) => Tip::Rms(
                RmsTip {
                    gamma: rms.gamma.clone(),
                    beta: rms.beta.clone(),
                    eps: rms.epsilon,
                    spatial: rms.spatial,
                },
                t.tip_activation.activation,
            ),
        };
        let ph = &model.policy_head;
        let vh = &model.value_head;
        let (ps, pb) = ph.p1_bn.merged_scale_bias();
        let (gs, gb) = ph.g1_bn.merged_scale_bias();
        let (vs, vb) = vh.v1_bn.merged_scale_bias();
        let pass_mlp = ph
            .pass_mlp
            .as_ref()
            .map(|mlp| (mlp.activation.activation, Dense::new(&mlp.mul2, None, None)));
        let pass_bias = ph.pass_mlp.as_ref().map(|mlp| mlp.bias.weights.clone());
        Ok(Net {
            initial_conv: Conv::new(&t.initial_conv, None, None, Gemm::F32),
            initial_global: Dense::new(&t.initial_matmul, None, None),
            trunk_channels: t.trunk_num_channels,
            meta,
            blocks,
            tip,
            p1: Conv::new(&ph.p1_conv, Some(&ps), None, Gemm::F32),
            g1: Conv::new(&ph.g1_conv, Some(&gs), Some(gb), Gemm::F32),
            g1_act: ph.g1_activation.activation,
            g1_to_bias: Dense::new(&ph.gpool_to_bias_mul, Some(&ps), Some(pb)),
            p1_act: ph.p1_activation.activation,
            p2: Conv::new(&ph.p2_conv, None, None, Gemm::F32),
            pass: Dense::new(&ph.gpool_to_pass_mul, None, pass_bias),
            pass_mlp,
            v1: Conv::new(&vh.v1_conv, Some(&vs), Some(vb), Gemm::F32),
            v1_act: vh.v1_activation.activation,
            v2: Dense::new(&vh.v2_mul, None, Some(vh.v2_bias.weights.clone())),
            v2_act: vh.v2_activation.activation,
            v3: Dense::new(&vh.v3_mul, None, Some(vh.v3_bias.weights.clone())),
            sv3: Dense::new(&vh.sv3_mul, None, Some(vh.sv3_bias.weights.clone())),
            ownership: Conv::new(&vh.ownership_conv, None, None, Gemm::F32),
        })
    }
}

impl Net {
    /// Whether the trunk's convolutions run in 16-bit integers.
    pub fn is_int16(&self) -> bool {
        self.blocks.iter().any(NetBlock::is_int16)
    }
}

impl NetBlock {
    fn is_int16(&self) -> bool {
        match self {
            NetBlock::Ordinary { regular, .. } | NetBlock::GlobalPooling { regular, .. } => {
                regular.is_int16()
            }
            NetBlock::Nested { first, blocks, .. } => {
                first.is_int16() || blocks.iter().any(NetBlock::is_int16)
            }
            NetBlock::Attention { .. } | NetBlock::Ffn { .. } => false,
        }
    }
}

/// Reusable buffers for one forward pass at a time (allocation-free once warmed up).
#[derive(Default)]
pub struct Workspace {
    free: Vec<Vec<f32>>,
    scratch: Scratch,
    mask: Mask,
    pooled: Vec<f32>,
    hidden: Vec<f32>,
}

impl Workspace {
    /// A buffer of `len` floats holding whatever it last held: each caller overwrites all
    /// of it, so zeroing it (a tenth of an int16 evaluation's time) would be wasted.
    fn take(&mut self, len: usize) -> Vec<f32> {
        let mut v = self.free.pop().unwrap_or_default();
        v.truncate(len);
        v.resize(len, 0.0);
        v
    }

    fn give(&mut self, v: Vec<f32>) {
        self.free.push(v);
    }
}

/// One position's inputs, NCHW as the ONNX contract has them.
pub struct RowInput<'a> {
    /// `InputSpatial`, `[channel][point]`.
    pub spatial: &'a [f32],
    /// `InputGlobal`.
    pub global: &'a [f32],
    /// `InputMask`, one value a point.
    pub mask: &'a [f32],
    /// `InputMeta`, for a net with a metadata encoder.
    pub meta: Option<&'a [f32]>,
}

/// One position's raw outputs, NCHW as the ONNX contract has them.
pub struct RowOutput<'a> {
    /// `OutputPolicyPass`.
    pub policy_pass: &'a mut [f32],
    /// `OutputPolicy`, `[channel][point]`.
    pub policy: &'a mut [f32],
    /// `OutputValue`.
    pub value: &'a mut [f32],
    /// `OutputScoreValue`.
    pub score_value: &'a mut [f32],
    /// `OutputOwnership`, one value a point.
    pub ownership: &'a mut [f32],
}

/// The board being evaluated: its size and the scratch the layers share.
struct Pass<'w> {
    h: usize,
    w: usize,
    ws: &'w mut Workspace,
}

impl Pass<'_> {
    fn area(&self) -> usize {
        self.h * self.w
    }

    fn conv(&mut self, conv: &Conv, x: &[f32]) -> Vec<f32> {
        let mut y = self.ws.take(self.area() * conv.out_channels());
        conv.run(x, self.h, self.w, &mut self.ws.scratch, &mut y);
        y
    }

    fn norm_act(&mut self, na: &NormAct, x: &[f32], c: usize) -> Vec<f32> {
        let mut y = self.ws.take(self.area() * c);
        na.run(x, &self.ws.mask, &mut y);
        y
    }

    /// Runs `blocks` on the trunk `x` (`c` channels) in place.
    fn blocks(&mut self, blocks: &[NetBlock], x: &mut [f32], c: usize) {
        for b in blocks {
            let out = match b {
                NetBlock::Ordinary {
                    pre,
                    regular,
                    mid_act,
                    last,
                } => {
                    let p = self.norm_act(pre, x, c);
                    let mut mid = self.conv(regular, &p);
                    activate(&mut mid, regular.out_channels(), *mid_act, &self.ws.mask);
                    let out = self.conv(last, &mid);
                    self.ws.give(p);
                    self.ws.give(mid);
                    out
                }
                NetBlock::GlobalPooling {
                    pre,
                    regular,
                    gpool,
                    gpool_act,
                    to_bias,
                    mid_act,
                    last,
                } => {
                    let p = self.norm_act(pre, x, c);
                    let mut mid = self.conv(regular, &p);
                    let mut g = self.conv(gpool, &p);
                    let gc = gpool.out_channels();
                    activate(&mut g, gc, *gpool_act, &self.ws.mask);
                    let mut pooled = std::mem::take(&mut self.ws.pooled);
                    pooled.resize(3 * gc, 0.0);
                    global_pool(&g, gc, &self.ws.mask, Pool::Max, &mut pooled);
                    let mc = regular.out_channels();
                    let mut bias = std::mem::take(&mut self.ws.hidden);
                    bias.resize(mc, 0.0);
                    to_bias.run(&pooled, &mut bias);
                    add_channel_bias(&mut mid, &bias[..mc]);
                    self.ws.pooled = pooled;
                    self.ws.hidden = bias;
                    activate(&mut mid, mc, *mid_act, &self.ws.mask);
                    let out = self.conv(last, &mid);
                    self.ws.give(p);
                    self.ws.give(mid);
                    self.ws.give(g);
                    out
                }
                NetBlock::Nested {
                    pre,
                    first,
                    blocks,
                    post,
                    last,
                } => {
                    let p = self.norm_act(pre, x, c);
                    let mut inner = self.conv(first, &p);
                    let ic = first.out_channels();
                    self.blocks(blocks, &mut inner, ic);
                    let q = self.norm_act(post, &inner, ic);
                    let out = self.conv(last, &q);
                    self.ws.give(p);
                    self.ws.give(inner);
                    self.ws.give(q);
                    out
                }
                NetBlock::Attention {
                    eps,
                    q,
                    k,
                    v,
                    out,
                    shape,
                    rope,
                } => {
                    let n = self.area();
                    let mut xn = self.ws.take(n * c);
                    rms_normalize(x, c, *eps, &self.ws.mask.values, &mut xn);
                    let (mut qs, mut ks) = (self.conv(q, &xn), self.conv(k, &xn));
                    let vs = self.conv(v, &xn);
                    if let Some(r) = rope {
                        r.rotate(&mut qs, shape.heads, shape.kv_heads, shape.d, n);
                        r.rotate(&mut ks, shape.kv_heads, shape.kv_heads, shape.d, n);
                    }
                    let mut scores = self.ws.take(n * n);
                    let mut att = self.ws.take(n * shape.heads * shape.dv);
                    attend(
                        &qs,
                        &ks,
                        &vs,
                        *shape,
                        &self.ws.mask.values,
                        &mut scores,
                        &mut att,
                    );
                    let mut y = self.conv(out, &att);
                    activate(&mut y, c, Activation::Identity, &self.ws.mask);
                    for buf in [xn, qs, ks, vs, scores, att] {
                        self.ws.give(buf);
                    }
                    y
                }
                NetBlock::Ffn {
                    eps,
                    linear1,
                    gate,
                    linear2,
                } => {
                    let n = self.area();
                    let mut xn = self.ws.take(n * c);
                    rms_normalize(x, c, *eps, &self.ws.mask.values, &mut xn);
                    let mut a = self.conv(linear1, &xn);
                    let f = linear1.out_channels();
                    activate(&mut a, f, Activation::Silu, &self.ws.mask);
                    if let Some(gate) = gate {
                        let g = self.conv(gate, &xn);
                        a.iter_mut().zip(&g).for_each(|(a, g)| *a *= g);
                        self.ws.give(g);
                    }
                    let mut y = self.conv(linear2, &a);
                    activate(&mut y, c, Activation::Identity, &self.ws.mask);
                    self.ws.give(xn);
                    self.ws.give(a);
                    y
                }
            };
            x.iter_mut().zip(&out).for_each(|(v, o)| *v += o);
            self.ws.give(out);
        }
    }
}

impl Net {
    /// Evaluates one position on an `h` x `w` board buffer.
    pub fn forward(
        &self,
        input: &RowInput<'_>,
        h: usize,
        w: usize,
        ws: &mut Workspace,
        out: RowOutput<'_>,
    ) {
        let area = h * w;
        ws.mask.set(&input.mask[..area]);
        let mut pass = Pass { h, w, ws };
        let cin = input.spatial.len() / area;
        // NCHW to HWC.
        let mut xin = pass.ws.take(area * cin);
        for (ch, plane) in input.spatial.chunks_exact(area).enumerate() {
            for (pt, &v) in plane.iter().enumerate() {
                xin[pt * cin + ch] = v;
            }
        }
        let c = self.trunk_channels;
        let mut x = pass.conv(&self.initial_conv, &xin);
        pass.ws.give(xin);
        let mut g = std::mem::take(&mut pass.ws.hidden);
        g.resize(c, 0.0);
        self.initial_global.run(input.global, &mut g);
        add_channel_bias(&mut x, &g[..c]);
        if let (Some(enc), Some(meta)) = (&self.meta, input.meta) {
            // Small vectors: the pooled buffer holds the hidden layers.
            let mut h = std::mem::take(&mut pass.ws.pooled);
            h.resize(enc.mul1.out_channels() + enc.mul2.out_channels(), 0.0);
            let (h1, h2) = h.split_at_mut(enc.mul1.out_channels());
            enc.mul1.run(meta, h1);
            h1.iter_mut().for_each(|v| *v = enc.act1.apply(*v));
            enc.mul2.run(h1, h2);
            h2.iter_mut().for_each(|v| *v = enc.act2.apply(*v));
            enc.mul3.run(h2, &mut g[..c]);
            add_channel_bias(&mut x, &g[..c]);
            pass.ws.pooled = h;
        }
        pass.ws.hidden = g;
        pass.blocks(&self.blocks, &mut x, c);
        let tip = match &self.tip {
            Tip::Batch(na) => pass.norm_act(na, &x, c),
            Tip::Rms(rms, act) => {
                let mut y = pass.ws.take(area * c);
                rms.run(&x, &pass.ws.mask.values, &mut y);
                activate(&mut y, c, *act, &pass.ws.mask);
                y
            }
        };
        pass.ws.give(x);

        // Policy head.
        let mut g1 = pass.conv(&self.g1, &tip);
        let gc = self.g1.out_channels();
        activate(&mut g1, gc, self.g1_act, &pass.ws.mask);
        let mut pooled = std::mem::take(&mut pass.ws.pooled);
        pooled.resize(3 * gc, 0.0);
        global_pool(&g1, gc, &pass.ws.mask, Pool::Max, &mut pooled);
        pass.ws.give(g1);
        let mut p1 = pass.conv(&self.p1, &tip);
        let pc = self.p1.out_channels();
        let mut bias = std::mem::take(&mut pass.ws.hidden);
        bias.resize(pc.max(self.pass.out_channels()), 0.0);
        self.g1_to_bias.run(&pooled, &mut bias);
        add_channel_bias(&mut p1, &bias[..pc]);
        activate(&mut p1, pc, self.p1_act, &pass.ws.mask);
        let policy = pass.conv(&self.p2, &p1);
        pass.ws.give(p1);
        let channels = self.p2.out_channels();
        for (pt, row) in policy.chunks_exact(channels).enumerate() {
            for (ch, &v) in row.iter().enumerate() {
                out.policy[ch * area + pt] = v;
            }
        }
        pass.ws.give(policy);
        match &self.pass_mlp {
            None => self.pass.run(&pooled, out.policy_pass),
            Some((act, mul2)) => {
                let hc = self.pass.out_channels();
                bias.resize(hc, 0.0);
                self.pass.run(&pooled, &mut bias);
                bias.iter_mut().for_each(|v| *v = act.apply(*v));
                mul2.run(&bias, out.policy_pass);
            }
        }

        // Value head.
        let mut v1 = pass.conv(&self.v1, &tip);
        let vc = self.v1.out_channels();
        activate(&mut v1, vc, self.v1_act, &pass.ws.mask);
        pooled.resize(3 * vc, 0.0);
        global_pool(&v1, vc, &pass.ws.mask, Pool::Quad, &mut pooled);
        bias.resize(self.v2.out_channels(), 0.0);
        self.v2.run(&pooled, &mut bias);
        bias.iter_mut().for_each(|v| *v = self.v2_act.apply(*v));
        self.v3.run(&bias, out.value);
        self.sv3.run(&bias, out.score_value);
        let own = pass.conv(&self.ownership, &v1);
        out.ownership[..area].copy_from_slice(&own[..area]);
        pass.ws.give(own);
        pass.ws.give(v1);
        pass.ws.give(tip);
        pass.ws.pooled = pooled;
        pass.ws.hidden = bias;
    }
}
