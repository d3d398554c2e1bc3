//! Network inputs of game positions, for the benchmarks: positions from random legal
//! games, and their encoding into a backend's input buffers.

use anyhow::Result;
use tengen_nn::features::{fill_row_v7, InputParams, NUM_GLOBAL, NUM_SPATIAL};
use tengen_nn::onnx::load::LoadedModel;
use tengen_rules::{BoardSize, Game, Move, Rules};

/// Inputs of `rows` different positions from random legal games, for `model`'s buffer.
pub(crate) fn bench_inputs(
    size: BoardSize,
    model: &LoadedModel,
    rows: usize,
) -> Result<(Vec<f32>, Vec<f32>, Vec<f32>)> {
    let mut rng = fastrand::Rng::with_seed(11);
    let mut games = Vec::new();
    for r in 0..rows {
        let mut g = Game::new(size, Rules::chinese());
        // Positions from the opening to the middle game.
        for _ in 0..(10 + 7 * r) % (size.area() / 2) {
            let legal: Vec<Move> = g
                .legal_moves()
                .into_iter()
                .filter(|&m| m != Move::Pass)
                .collect();
            if legal.is_empty() {
                break;
            }
            g.play(legal[rng.usize(..legal.len())])?;
        }
        games.push(g);
    }
    let m = &model.metadata;
    encode_inputs(&games, m.nn_x_len as usize, m.nn_y_len as usize)
}

/// Spatial, global and mask inputs of these positions for an `x_len` by `y_len` buffer.
pub(crate) fn encode_inputs(
    games: &[Game],
    x_len: usize,
    y_len: usize,
) -> Result<(Vec<f32>, Vec<f32>, Vec<f32>)> {
    let plane = x_len * y_len;
    let (mut spatial, mut global, mut mask) = (Vec::new(), Vec::new(), Vec::new());
    for g in games {
        let mut s = vec![0f32; NUM_SPATIAL * plane];
        let mut gl = vec![0f32; NUM_GLOBAL];
        fill_row_v7(
            g,
            g.to_move(),
            &InputParams::default(),
            x_len,
            y_len,
            &mut s,
            &mut gl,
        )?;
        mask.extend_from_slice(&s[..plane]);
        spatial.extend_from_slice(&s);
        global.extend_from_slice(&gl);
    }
    Ok((spatial, global, mask))
}
