//! From a network's raw outputs to what a search uses, as KataGo's `nneval.cpp` does:
//! policy softmax over the legal moves (with temperature and the optimism blend),
//! win/loss/no-result softmax, score mean/stdev/lead with the model's multipliers,
//! ownership `tanh`, short-term error estimates; everything from White's point of view.

use tengen_rules::{BoardSize, Game, KoRule, Move, Player, ScoringRule};

use crate::contract::meta::ModelMetadata;

/// One position's raw outputs, in board orientation (symmetry already undone), laid out
/// as the graph returns them for a buffer `x_len` wide.
#[derive(Clone, Copy, Debug)]
pub struct RawOutput<'a> {
    /// Policy logits, `[channels][y_len][x_len]`.
    pub policy: &'a [f32],
    /// Pass logits, one per policy channel.
    pub policy_pass: &'a [f32],
    /// Win, loss, no-result logits from the side to move.
    pub value: &'a [f32],
    /// Score-value channels (score mean, stdev, lead, variance of time left, short-term errors).
    pub score_value: &'a [f32],
    /// Ownership logits from the side to move, `[y_len][x_len]`.
    pub ownership: Option<&'a [f32]>,
    /// Buffer width the outputs were computed for.
    pub x_len: usize,
    /// Buffer height.
    pub y_len: usize,
}

/// What decoding needs to know about the position, taken from the game when the
/// evaluation is requested (so the game itself need not travel with the request).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionInfo {
    /// The board's size.
    pub size: BoardSize,
    /// The player the network evaluated for.
    pub to_move: Player,
    /// Legal moves of the player to move: row-major points, then pass.
    pub legal: Vec<bool>,
    /// Whether a game under these rules can end without a result (simple ko or territory).
    pub no_result_possible: bool,
}

impl PositionInfo {
    /// The decoding facts of the position in `game`, for the player to move.
    pub fn from_game(game: &Game) -> PositionInfo {
        let size = game.board().size();
        let mut legal: Vec<bool> = size
            .points()
            .map(|l| game.is_legal(Move::Play(l)))
            .collect();
        legal.push(game.is_legal(Move::Pass));
        let rules = game.rules();
        PositionInfo {
            size,
            to_move: game.to_move(),
            legal,
            no_result_possible: rules.ko == KoRule::Simple
                || rules.scoring == ScoringRule::Territory,
        }
    }
}

pub use tengen_eval::{NnOutput, PolicyOptions};

/// Why raw outputs could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PostprocessError {
    /// An output array is shorter than the model and buffer say.
    #[error("output {what} has {got} values, expected at least {expected}")]
    ShortOutput {
        /// Which output.
        what: &'static str,
        /// Values given.
        got: usize,
        /// Values needed.
        expected: usize,
    },
    /// The board does not fit the buffer the outputs were computed for.
    #[error("the {x}x{y} board does not fit the {x_len}x{y_len} network buffer")]
    BoardTooBig {
        /// Board width.
        x: usize,
        /// Board height.
        y: usize,
        /// Buffer width.
        x_len: usize,
        /// Buffer height.
        y_len: usize,
    },
    /// The network produced NaN or infinity.
    #[error("the network produced a non-finite {0}")]
    NonFinite(&'static str),
    /// The player to move has no legal move at all (cannot happen: pass is always legal).
    #[error("no legal move")]
    NoLegalMove,
    /// The legal-move mask does not match the board.
    #[error("legal-move mask has {got} entries, expected {expected}")]
    BadMask {
        /// Entries given.
        got: usize,
        /// Points plus pass.
        expected: usize,
    },
}

fn soft_plus(x: f64) -> f64 {
    // Above 40, log(1 + e^x) is x to double precision and exp would only risk overflow.
    if x > 40.0 {
        x
    } else {
        (1.0 + x.exp()).ln()
    }
}

fn need(what: &'static str, got: usize, expected: usize) -> Result<(), PostprocessError> {
    if got < expected {
        Err(PostprocessError::ShortOutput {
            what,
            got,
            expected,
        })
    } else {
        Ok(())
    }
}

/// Decodes one position's raw outputs.
pub fn postprocess(
    raw: &RawOutput<'_>,
    meta: &ModelMetadata,
    pos: &PositionInfo,
    opts: &PolicyOptions,
) -> Result<NnOutput, PostprocessError> {
    let size = pos.size;
    let (w, h) = (size.width(), size.height());
    if pos.legal.len() != size.area() + 1 {
        return Err(PostprocessError::BadMask {
            got: pos.legal.len(),
            expected: size.area() + 1,
        });
    }
    if w > raw.x_len || h > raw.y_len {
        return Err(PostprocessError::BoardTooBig {
            x: w,
            y: h,
            x_len: raw.x_len,
            y_len: raw.y_len,
        });
    }
    let plane = raw.x_len * raw.y_len;
    let channels = meta.num_policy_channels.max(1) as usize;
    need("policy", raw.policy.len(), plane * channels)?;
    need("policy pass", raw.policy_pass.len(), channels)?;
    need("value", raw.value.len(), 3)?;
    let score_channels = meta.num_score_value_channels as usize;
    need("score value", raw.score_value.len(), score_channels.min(6))?;
    let pp = &meta.post_process;
    let scale = pp.output_scale_multiplier as f32;

    // Policy: blend the optimism channel in logit space, then softmax over legal moves.
    let logit = |plane_index: Option<usize>| -> f32 {
        let (base, opt) = match plane_index {
            Some(i) => (raw.policy[i], (channels > 1).then(|| raw.policy[plane + i])),
            None => (
                raw.policy_pass[0],
                (channels > 1).then(|| raw.policy_pass[1]),
            ),
        };
        match opt {
            Some(o) if opts.optimism != 0.0 => base + (o - base) * opts.optimism,
            _ => base,
        }
    };
    let policy_scale = scale / opts.temperature;
    let pass_index = size.area();
    let mut policy = vec![0f32; pass_index + 1];
    let legal = &pos.legal;
    let mut max = f32::NEG_INFINITY;
    let mut legal_count = 0;
    for (i, l) in size.points().enumerate() {
        if legal[i] {
            let (x, y) = size.xy(l);
            policy[i] = logit(Some(y * raw.x_len + x)) * policy_scale;
            max = max.max(policy[i]);
            legal_count += 1;
        }
    }
    if legal[pass_index] {
        policy[pass_index] = logit(None) * policy_scale;
        max = max.max(policy[pass_index]);
        legal_count += 1;
    }
    if legal_count == 0 {
        return Err(PostprocessError::NoLegalMove);
    }
    if !max.is_finite() {
        return Err(PostprocessError::NonFinite("policy"));
    }
    let mut sum = 0f32;
    for (p, &ok) in policy[..pass_index].iter_mut().zip(legal) {
        *p = if ok { (*p - max).exp() } else { 0.0 };
        sum += *p;
    }
    let pass = if legal[pass_index] {
        (policy[pass_index] - max).exp()
    } else {
        0.0
    };
    policy[pass_index] = if opts.passing_hacks {
        pass.min(sum * 19.0).max(1e-20)
    } else {
        pass
    };
    sum += policy[pass_index];
    if !sum.is_finite() {
        return Err(PostprocessError::NonFinite("policy sum"));
    }
    if sum <= 0.0 {
        // Every legal move underflowed: fall back to uniform, as KataGo does.
        let uniform = 1.0 / legal_count as f32;
        for (i, p) in policy.iter_mut().enumerate() {
            *p = if legal[i] { uniform } else { -1.0 };
        }
    } else {
        for (i, p) in policy.iter_mut().enumerate() {
            *p = if legal[i] { *p / sum } else { -1.0 };
        }
    }

    // Value and score, from the side to move.
    let scale = scale as f64;
    let no_result_possible = pos.no_result_possible;
    let (win_l, loss_l, mut nr_l) = (
        raw.value[0] as f64 * scale,
        raw.value[1] as f64 * scale,
        raw.value[2] as f64 * scale,
    );
    if !no_result_possible {
        nr_l -= 100000.0;
    }
    let m = win_l.max(loss_l).max(nr_l);
    let (mut win, mut loss, mut nr) = ((win_l - m).exp(), (loss_l - m).exp(), (nr_l - m).exp());
    if !no_result_possible {
        nr = 0.0;
    }
    let total = win + loss + nr;
    win /= total;
    loss /= total;
    nr /= total;
    let sv = |k: usize| raw.score_value.get(k).map_or(0.0, |&v| v as f64 * scale);
    let mut score_mean = sv(0) * pp.score_mean_multiplier;
    let score_stdev = soft_plus(sv(1)) * pp.score_stdev_multiplier;
    let mut score_mean_sq = score_mean * score_mean + score_stdev * score_stdev;
    let mut lead = if score_channels >= 3 {
        sv(2) * pp.lead_multiplier
    } else {
        score_mean
    };
    let var_time_left = soft_plus(sv(3)) * pp.variance_time_multiplier;
    // No result counts as a score of 0.
    score_mean *= 1.0 - nr;
    score_mean_sq *= 1.0 - nr;
    lead *= 1.0 - nr;
    let version = meta.model_version;
    let (st_wl, st_score) = if version >= 14 {
        let a = soft_plus(sv(4) * 0.5);
        let b = soft_plus(sv(5) * 0.5);
        (
            (a * a * pp.shortterm_value_error_multiplier).sqrt(),
            (b * b * pp.shortterm_score_error_multiplier).sqrt(),
        )
    } else if version >= 10 {
        (
            (soft_plus(sv(4)) * pp.shortterm_value_error_multiplier).sqrt(),
            (soft_plus(sv(5)) * pp.shortterm_score_error_multiplier).sqrt(),
        )
    } else {
        (soft_plus(sv(4)), soft_plus(sv(5)) * 10.0)
    };
    for (name, v) in [
        ("value", total),
        ("score mean", score_mean),
        ("score mean square", score_mean_sq),
        ("lead", lead),
        ("time left", var_time_left),
        ("short-term value error", st_wl),
        ("short-term score error", st_score),
    ] {
        if !v.is_finite() {
            return Err(PostprocessError::NonFinite(name));
        }
    }
    let white = pos.to_move == Player::White;
    let sign = if white { 1.0 } else { -1.0 };
    let (white_win, white_loss) = if white { (win, loss) } else { (loss, win) };
    let has_extras = version >= 9;

    let white_ownership = match raw.ownership {
        None => None,
        Some(own) => {
            need("ownership", own.len(), plane)?;
            Some(
                size.points()
                    .map(|l| {
                        let (x, y) = size.xy(l);
                        sign as f32 * (own[y * raw.x_len + x] * scale as f32).tanh()
                    })
                    .collect(),
            )
        }
    };

    Ok(NnOutput {
        policy,
        white_win: white_win as f32,
        white_loss: white_loss as f32,
        no_result: nr as f32,
        white_score_mean: (sign * score_mean) as f32,
        white_score_mean_sq: score_mean_sq as f32,
        white_lead: (sign * lead) as f32,
        var_time_left: if has_extras {
            var_time_left as f32
        } else {
            -1.0
        },
        shortterm_winloss_error: if has_extras { st_wl as f32 } else { -1.0 },
        shortterm_score_error: if has_extras { st_score as f32 } else { -1.0 },
        white_ownership,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::meta::PostProcessParams;
    use tengen_rules::Rules;

    fn meta(version: u32, policy_channels: u32) -> ModelMetadata {
        ModelMetadata {
            metadata_version: 1,
            name: "test".into(),
            model_version: version,
            num_input_channels: 22,
            num_input_global_channels: 19,
            num_input_meta_channels: 0,
            num_policy_channels: policy_channels,
            num_value_channels: 3,
            num_score_value_channels: 6,
            num_ownership_channels: 1,
            nn_x_len: 5,
            nn_y_len: 5,
            require_exact_nn_len: false,
            meta_encoder_version: 0,
            prefer_pass_alive_under_suicide_rules: false,
            prefer_exclude_territory_adjacent_to_atari: false,
            post_process: PostProcessParams::default(),
            scale8_applied: false,
            transformer_nhwc: false,
            fp32_nodes_trunk_tip_and_head: vec![],
            fp32_nodes_rms_norm: vec![],
            info: vec![],
        }
    }

    #[test]
    fn policy_is_a_distribution_over_legal_moves_and_values_flip_for_black() {
        let size = BoardSize::square(3).unwrap();
        let mut g = Game::new(size, Rules::tromp_taylor());
        g.play(size.parse_move("B2").unwrap()).unwrap();
        // A 5x5 buffer with the 3x3 board in its top-left corner; logits rise with the index.
        let policy: Vec<f32> = (0..25).map(|i| i as f32 * 0.1).collect();
        let own = vec![1.0f32; 25];
        let raw = RawOutput {
            policy: &policy,
            policy_pass: &[0.5],
            value: &[2.0, 0.0, 0.0],
            score_value: &[0.1, 0.0, 0.2, 0.0, 0.0, 0.0],
            ownership: Some(&own),
            x_len: 5,
            y_len: 5,
        };
        let out = postprocess(
            &raw,
            &meta(8, 1),
            &PositionInfo::from_game(&g),
            &PolicyOptions::default(),
        )
        .unwrap();
        assert_eq!(out.policy.len(), 10);
        let b2 = size.index_of(size.parse_loc("B2").unwrap());
        assert_eq!(out.policy[b2], -1.0, "occupied point is illegal");
        let total: f32 = out.policy.iter().filter(|&&p| p >= 0.0).sum();
        assert!((total - 1.0).abs() < 1e-6);
        // C1 is buffer index 2*5+2 = 12: the largest on-board logit.
        let c1 = size.index_of(size.parse_loc("C1").unwrap());
        let best = (0..9)
            .max_by(|&a, &b| out.policy[a].total_cmp(&out.policy[b]))
            .unwrap();
        assert_eq!(best, c1);
        // White to move: the net's side-to-move view is already White's.
        assert!(out.white_win > 0.7 && out.no_result == 0.0);
        assert!((out.white_score_mean - 2.0).abs() < 1e-5);
        assert!((out.white_lead - 4.0).abs() < 1e-5);
        assert!(out
            .white_ownership
            .as_ref()
            .unwrap()
            .iter()
            .all(|&o| (o - 1f32.tanh()).abs() < 1e-6));
        assert_eq!(out.var_time_left, -1.0);

        // Black to move: everything flips to White's view.
        g.play(Move::Pass).unwrap();
        let out = postprocess(
            &raw,
            &meta(8, 1),
            &PositionInfo::from_game(&g),
            &PolicyOptions::default(),
        )
        .unwrap();
        assert!(out.white_loss > 0.7);
        assert!((out.white_score_mean + 2.0).abs() < 1e-5);
        assert!(out.white_ownership.unwrap().iter().all(|&o| o < 0.0));
    }

    #[test]
    fn no_result_only_under_simple_ko_or_territory() {
        let size = BoardSize::square(3).unwrap();
        let raw = RawOutput {
            policy: &[0.0; 9],
            policy_pass: &[0.0],
            value: &[0.0, 0.0, 0.0],
            score_value: &[0.0; 6],
            ownership: None,
            x_len: 3,
            y_len: 3,
        };
        let tt = Game::new(size, Rules::tromp_taylor());
        let out = postprocess(
            &raw,
            &meta(15, 1),
            &PositionInfo::from_game(&tt),
            &PolicyOptions::default(),
        )
        .unwrap();
        assert_eq!(out.no_result, 0.0);
        assert!((out.white_win - 0.5).abs() < 1e-6);
        let jp = Game::new(size, Rules::japanese());
        let out = postprocess(
            &raw,
            &meta(15, 1),
            &PositionInfo::from_game(&jp),
            &PolicyOptions::default(),
        )
        .unwrap();
        assert!((out.no_result - 1.0 / 3.0).abs() < 1e-6);
        // Version 14+: short-term errors are sqrt(softplus(x/2)^2 * multiplier).
        let expect = (2f64.ln() * 2f64.ln() * 0.25).sqrt() as f32;
        assert!((out.shortterm_winloss_error - expect).abs() < 1e-6);
    }

    #[test]
    fn optimism_blends_channels_and_bad_outputs_are_errors() {
        let size = BoardSize::square(2).unwrap();
        let g = Game::new(size, Rules::tromp_taylor());
        // Channel 0 favours A2, channel 1 (optimism) favours B1.
        let policy = [3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0];
        let raw = RawOutput {
            policy: &policy,
            policy_pass: &[0.0, 0.0],
            value: &[0.0, 0.0, 0.0],
            score_value: &[0.0; 6],
            ownership: None,
            x_len: 2,
            y_len: 2,
        };
        let plain = postprocess(
            &raw,
            &meta(15, 2),
            &PositionInfo::from_game(&g),
            &PolicyOptions::default(),
        )
        .unwrap();
        let opt = PolicyOptions {
            optimism: 1.0,
            ..PolicyOptions::default()
        };
        let full = postprocess(&raw, &meta(15, 2), &PositionInfo::from_game(&g), &opt).unwrap();
        assert!(plain.policy[0] > plain.policy[3]);
        assert!(full.policy[3] > full.policy[0]);
        let short = RawOutput {
            policy: &policy[..3],
            ..raw
        };
        assert!(matches!(
            postprocess(
                &short,
                &meta(15, 2),
                &PositionInfo::from_game(&g),
                &PolicyOptions::default()
            ),
            Err(PostprocessError::ShortOutput { .. })
        ));
        let nan = RawOutput {
            value: &[f32::NAN, 0.0, 0.0],
            ..raw
        };
        assert!(matches!(
            postprocess(
                &nan,
                &meta(15, 2),
                &PositionInfo::from_game(&g),
                &PolicyOptions::default()
            ),
            Err(PostprocessError::NonFinite(_))
        ));
    }
}
