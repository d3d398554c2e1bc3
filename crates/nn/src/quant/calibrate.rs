//! Calibration: the range of every tensor a quantized convolution reads or writes, taken
//! over the positions of short games the fp32 network plays against itself (each move
//! drawn from its own policy, so the openings vary and the positions look like real play).
//!
//! The network runs on tract with the recorded tensors added as graph outputs; tract is
//! always built, so calibration works wherever Tengen does.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::{tensor_proto, type_proto, ModelProto, TypeProto, ValueInfoProto};
use tract_onnx::prelude::{
    tvec, Datum, Framework, InferenceFact, InferenceModelExt, IntoRunnable, TValue, Tensor,
    TractResult, TypedRunnableModel,
};

use super::qdq::ConvSite;
use super::QuantizeError;
use crate::backend::tract::contained;
use crate::backend::IoShape;
use crate::contract::meta::ModelMetadata;
use crate::features::{fill_row_v7, InputParams};
use crate::onnx::load::props_of;
use tengen_rules::{BoardSize, Game, Move, Rules};

/// How many positions calibration looks at, and which.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CalibrationOptions {
    /// Games played.
    pub games: usize,
    /// Moves per game at most, as a fraction of the board's points.
    pub length: f32,
    /// Seed of the move sampling (the same seed gives the same graph).
    pub seed: u64,
}

impl Default for CalibrationOptions {
    fn default() -> Self {
        CalibrationOptions {
            games: 2,
            length: 0.7,
            seed: 1,
        }
    }
}

/// Calibrated ranges, by tensor name.
#[derive(Clone, Debug, Default)]
pub struct Ranges(HashMap<String, Observed>);

/// What was seen of one tensor: its extremes. (Averaging each position's extremes
/// instead clips the rare large activations of unusual positions and wrecks their value.)
#[derive(Clone, Copy, Debug)]
struct Observed {
    min: f32,
    max: f32,
}

impl Ranges {
    /// The `(min, max)` seen for `name`.
    pub fn get(&self, name: &str) -> Result<(f32, f32), QuantizeError> {
        let o = self
            .0
            .get(name)
            .ok_or_else(|| QuantizeError::MissingRange(name.to_string()))?;
        Ok((o.min, o.max))
    }

    /// Widens `name`'s range to cover `values` (non-finite values are ignored).
    pub fn observe(&mut self, name: &str, values: &[f32]) {
        let (lo, hi) = values
            .iter()
            .filter(|v| v.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        if lo > hi {
            return;
        }
        let o = self
            .0
            .entry(name.to_string())
            .or_insert(Observed { min: lo, max: hi });
        o.min = o.min.min(lo);
        o.max = o.max.max(hi);
    }

    /// Number of tensors with a range.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Plays `opts.games` games with `model` (fp32) and records the ranges of the tensors `sites` use.
pub fn calibrate(
    model: &ModelProto,
    sites: &[ConvSite],
    opts: &CalibrationOptions,
) -> Result<Ranges, QuantizeError> {
    let meta = ModelMetadata::from_props(&props_of(model))
        .map_err(|e| QuantizeError::Unsupported(format!("metadata: {e}")))?;
    if meta.has_meta_input() {
        return Err(QuantizeError::Unsupported(
            "networks with a metadata input are not calibrated".into(),
        ));
    }
    let shape = IoShape::from_metadata(&meta);
    let size = BoardSize::new(shape.x_len, shape.y_len)
        .map_err(|e| QuantizeError::Unsupported(format!("board buffer: {e}")))?;
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for s in sites {
        for t in [&s.input, &s.output] {
            if seen.insert(t.clone()) {
                names.push(t.clone());
            }
        }
    }
    // tract has panicking paths that a hostile graph can reach: contained, as in its backend.
    let failed = |e: crate::backend::BackendError| QuantizeError::Calibration(e.to_string());
    let probe =
        contained("tract (calibration)", || Probe::new(model, &shape, &names)).map_err(failed)?;
    let mut ranges = Ranges::default();
    let mut rng = fastrand::Rng::with_seed(opts.seed);
    let max_moves = ((size.area() as f32) * opts.length).ceil() as usize;
    let params = InputParams::default();
    let mut spatial = vec![0.0; shape.spatial_len()];
    let mut global = vec![0.0; shape.global_channels];
    let mask = vec![1.0; shape.mask_len()];
    for _ in 0..opts.games {
        let mut game = Game::new(size, Rules::tromp_taylor());
        for _ in 0..max_moves {
            if game.is_over() {
                break;
            }
            fill_row_v7(
                &game,
                game.to_move(),
                &params,
                shape.x_len,
                shape.y_len,
                &mut spatial,
                &mut global,
            )
            .map_err(|e| QuantizeError::Calibration(e.to_string()))?;
            let logits = contained("tract (calibration)", || {
                probe.run(&shape, &spatial, &global, &mask, &mut ranges)
            })
            .map_err(failed)?;
            let mv = sample(&game, size, &logits, &mut rng);
            // A sampled move is legal by construction; should the rules still refuse it,
            // the game simply ends there.
            if game.play(mv).is_err() {
                break;
            }
        }
    }
    if ranges.len() < names.len() {
        return Err(QuantizeError::Calibration(format!(
            "ranges for {} of {} tensors",
            ranges.len(),
            names.len()
        )));
    }
    Ok(ranges)
}

/// A move drawn from the policy logits (board points row-major, then pass) over legal moves.
fn sample(game: &Game, size: BoardSize, logits: &[f32], rng: &mut fastrand::Rng) -> Move {
    let width = size.width();
    let mut moves: Vec<(Move, f32)> = Vec::new();
    for y in 0..size.height() {
        for x in 0..width {
            if let Some(loc) = size.loc(x, y) {
                let mv = Move::Play(loc);
                if game.is_legal(mv) {
                    moves.push((mv, logits[y * width + x]));
                }
            }
        }
    }
    if let Some(&pass) = logits.get(size.area()) {
        moves.push((Move::Pass, pass));
    }
    let max = moves.iter().fold(f32::NEG_INFINITY, |m, &(_, l)| m.max(l));
    let weights: Vec<f32> = moves.iter().map(|&(_, l)| (l - max).exp()).collect();
    let total: f32 = weights.iter().sum();
    let mut pick = rng.f32() * total;
    for (&(mv, _), w) in moves.iter().zip(&weights) {
        if pick < *w {
            return mv;
        }
        pick -= w;
    }
    Move::Pass
}

/// The fp32 graph with the recorded tensors as extra outputs, planned for one row.
struct Probe {
    plan: std::sync::Arc<TypedRunnableModel>,
    policy: usize,
    pass: usize,
    recorded: Vec<(usize, String)>,
}

impl Probe {
    fn new(model: &ModelProto, shape: &IoShape, names: &[String]) -> TractResult<Probe> {
        let mut probe = model.clone();
        let graph = probe.graph.as_mut().ok_or_else(|| anyhow_msg("no graph"))?;
        for name in names {
            graph.output.push(ValueInfoProto {
                name: name.clone(),
                r#type: Some(TypeProto {
                    value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                        elem_type: tensor_proto::DataType::Float as i32,
                        shape: None,
                    })),
                    ..TypeProto::default()
                }),
                ..ValueInfoProto::default()
            });
        }
        let position = |name: &str| graph.output.iter().position(|o| o.name == name);
        let policy = position("OutputPolicy").ok_or_else(|| anyhow_msg("no OutputPolicy"))?;
        let pass = position("OutputPolicyPass").ok_or_else(|| anyhow_msg("no OutputPolicyPass"))?;
        let recorded = names
            .iter()
            .filter_map(|n| position(n).map(|i| (i, n.clone())))
            .collect();
        let onnx = tract_onnx::onnx()
            .with_ignore_output_shapes(true)
            .with_ignore_value_info(true);
        let mut inference = onnx.model_for_proto_model(&probe)?;
        for (i, dims) in shape.input_dims(1).iter().enumerate() {
            inference.set_input_fact(i, InferenceFact::dt_shape(f32::datum_type(), dims))?;
        }
        let plan = inference.into_optimized()?.into_runnable()?;
        Ok(Probe {
            plan,
            policy,
            pass,
            recorded,
        })
    }

    /// Evaluates one position, widening `ranges`; returns the policy logits and the pass logit.
    fn run(
        &self,
        shape: &IoShape,
        spatial: &[f32],
        global: &[f32],
        mask: &[f32],
        ranges: &mut Ranges,
    ) -> TractResult<Vec<f32>> {
        let dims = shape.input_dims(1);
        let tensor = |d: &[usize; 4], data: &[f32]| -> TractResult<TValue> {
            Ok(Tensor::from_shape(d, data)?.into())
        };
        let inputs = tvec![
            tensor(&dims[0], spatial)?,
            tensor(&dims[1], global)?,
            tensor(&dims[dims.len() - 1], mask)?,
        ];
        let outputs = self.plan.run(inputs)?;
        for (i, name) in &self.recorded {
            ranges.observe(name, outputs[*i].try_as_plain_ram()?.as_slice::<f32>()?);
        }
        // Channel 0 of the policy is the move the player to move should make.
        let policy = outputs[self.policy].try_as_plain_ram()?;
        let pass = outputs[self.pass].try_as_plain_ram()?;
        let (Some(board), Some(&pass)) = (
            policy.as_slice::<f32>()?.get(..shape.area()),
            pass.as_slice::<f32>()?.first(),
        ) else {
            return Err(anyhow_msg("policy outputs smaller than the board"));
        };
        let mut logits = board.to_vec();
        logits.push(pass);
        Ok(logits)
    }
}

fn anyhow_msg(msg: &str) -> tract_onnx::prelude::TractError {
    tract_onnx::prelude::TractError::msg(msg.to_string())
}
