//! The shapes of one batch row and the flat buffers a batch travels in.

use crate::contract::meta::ModelMetadata;

use super::BackendError;

/// The per-row tensor shapes of a graph: channel counts and the board buffer size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoShape {
    /// Board buffer width (`X`).
    pub x_len: usize,
    /// Board buffer height (`Y`).
    pub y_len: usize,
    /// Channels of `InputSpatial`.
    pub spatial_channels: usize,
    /// Channels of `InputGlobal`.
    pub global_channels: usize,
    /// Channels of `InputMeta` (0: the graph has no such input).
    pub meta_channels: usize,
    /// Channels of `OutputPolicy` and `OutputPolicyPass`.
    pub policy_channels: usize,
    /// Channels of `OutputValue` (3).
    pub value_channels: usize,
    /// Channels of `OutputScoreValue`.
    pub score_value_channels: usize,
    /// Channels of `OutputOwnership` (1).
    pub ownership_channels: usize,
}

impl IoShape {
    /// The shapes the metadata declares.
    pub fn from_metadata(meta: &ModelMetadata) -> Self {
        let us = |v: u32| v as usize;
        IoShape {
            x_len: us(meta.nn_x_len),
            y_len: us(meta.nn_y_len),
            spatial_channels: us(meta.num_input_channels),
            global_channels: us(meta.num_input_global_channels),
            meta_channels: if meta.has_meta_input() {
                us(meta.num_input_meta_channels)
            } else {
                0
            },
            policy_channels: us(meta.num_policy_channels),
            value_channels: us(meta.num_value_channels),
            score_value_channels: us(meta.num_score_value_channels),
            ownership_channels: us(meta.num_ownership_channels),
        }
    }

    /// Points of the board buffer.
    pub fn area(&self) -> usize {
        self.x_len * self.y_len
    }

    /// Values of `InputSpatial` per row.
    pub fn spatial_len(&self) -> usize {
        self.spatial_channels * self.area()
    }

    /// Values of `InputMask` per row.
    pub fn mask_len(&self) -> usize {
        self.area()
    }

    /// Values of `OutputPolicy` per row.
    pub fn policy_len(&self) -> usize {
        self.policy_channels * self.area()
    }

    /// Values of `OutputOwnership` per row.
    pub fn ownership_len(&self) -> usize {
        self.ownership_channels * self.area()
    }

    /// The ONNX shape `[rows, C, H, W]` of each input, in the contract's order (meta only if present).
    pub fn input_dims(&self, rows: usize) -> Vec<[usize; 4]> {
        let (x, y) = (self.x_len, self.y_len);
        let mut v = vec![
            [rows, self.spatial_channels, y, x],
            [rows, self.global_channels, 1, 1],
        ];
        if self.meta_channels > 0 {
            v.push([rows, self.meta_channels, 1, 1]);
        }
        v.push([rows, 1, y, x]);
        v
    }
}

/// A batch of inputs: `rows` positions, each tensor flat in NCHW order.
#[derive(Clone, Copy, Debug)]
pub struct BatchInput<'a> {
    /// Number of positions.
    pub rows: usize,
    /// `InputSpatial`, `rows * spatial_len` values.
    pub spatial: &'a [f32],
    /// `InputGlobal`, `rows * global_channels` values.
    pub global: &'a [f32],
    /// `InputMeta`, `rows * meta_channels` values, for models with a meta encoder only.
    pub meta: Option<&'a [f32]>,
    /// `InputMask`, `rows * area` values (1 on the board, 0 off it).
    pub mask: &'a [f32],
}

impl<'a> BatchInput<'a> {
    /// Checks the slice lengths against the shape and the batch size.
    pub fn check(&self, shape: &IoShape, max_rows: usize) -> Result<(), BackendError> {
        if self.rows == 0 || self.rows > max_rows {
            return Err(BackendError::BatchSize {
                rows: self.rows,
                max: max_rows,
            });
        }
        let check = |name, found: usize, per_row: usize| {
            let expected = per_row * self.rows;
            if found == expected {
                Ok(())
            } else {
                Err(BackendError::InputLength {
                    name,
                    found,
                    expected,
                    rows: self.rows,
                })
            }
        };
        check("InputSpatial", self.spatial.len(), shape.spatial_len())?;
        check("InputGlobal", self.global.len(), shape.global_channels)?;
        check("InputMask", self.mask.len(), shape.mask_len())?;
        match (self.meta, shape.meta_channels) {
            (Some(meta), n) if n > 0 => check("InputMeta", meta.len(), n)?,
            (None, 0) => {}
            (Some(_), _) => return Err(BackendError::MetaInput { needs: "has no" }),
            (None, _) => return Err(BackendError::MetaInput { needs: "needs" }),
        }
        Ok(())
    }

    /// The sub-batch of rows `start..start + rows`.
    pub fn slice(&self, shape: &IoShape, start: usize, rows: usize) -> BatchInput<'a> {
        let part = |s: &'a [f32], per_row: usize| &s[start * per_row..(start + rows) * per_row];
        BatchInput {
            rows,
            spatial: part(self.spatial, shape.spatial_len()),
            global: part(self.global, shape.global_channels),
            meta: self.meta.map(|m| part(m, shape.meta_channels)),
            mask: part(self.mask, shape.mask_len()),
        }
    }

    /// The inputs as flat slices in the contract's order (meta only if present).
    pub fn tensors(&self) -> Vec<&'a [f32]> {
        let mut v = vec![self.spatial, self.global];
        if let Some(meta) = self.meta {
            v.push(meta);
        }
        v.push(self.mask);
        v
    }
}

/// Raw outputs of a batch, flat in NCHW order; reuse one across calls to avoid allocating.
#[derive(Clone, Debug, Default)]
pub struct BatchOutput {
    /// Rows the buffers currently hold.
    pub rows: usize,
    /// `OutputPolicyPass`, `rows * policy_channels`.
    pub policy_pass: Vec<f32>,
    /// `OutputPolicy`, `rows * policy_channels * area`.
    pub policy: Vec<f32>,
    /// `OutputValue`, `rows * 3`.
    pub value: Vec<f32>,
    /// `OutputScoreValue`, `rows * score_value_channels`.
    pub score_value: Vec<f32>,
    /// `OutputOwnership`, `rows * area`.
    pub ownership: Vec<f32>,
}

/// One row's raw outputs, borrowed from a [`BatchOutput`].
#[derive(Clone, Copy, Debug)]
pub struct OutputRow<'a> {
    /// Pass logits, one per policy channel.
    pub policy_pass: &'a [f32],
    /// Policy logits, `[channels][y][x]`.
    pub policy: &'a [f32],
    /// Win, loss, no-result logits.
    pub value: &'a [f32],
    /// Score-value channels.
    pub score_value: &'a [f32],
    /// Ownership logits, `[y][x]`.
    pub ownership: &'a [f32],
}

impl BatchOutput {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes every buffer for `rows` rows of `shape` (allocates only to grow).
    pub fn prepare(&mut self, shape: &IoShape, rows: usize) {
        self.rows = rows;
        for (buf, per_row) in self.buffers_mut(shape) {
            buf.resize(per_row * rows, 0.0);
        }
    }

    /// Row `i`'s outputs.
    pub fn row(&self, shape: &IoShape, i: usize) -> OutputRow<'_> {
        fn part(v: &[f32], i: usize, per_row: usize) -> &[f32] {
            v.get(i * per_row..(i + 1) * per_row).unwrap_or(&[])
        }
        OutputRow {
            policy_pass: part(&self.policy_pass, i, shape.policy_channels),
            policy: part(&self.policy, i, shape.policy_len()),
            value: part(&self.value, i, shape.value_channels),
            score_value: part(&self.score_value, i, shape.score_value_channels),
            ownership: part(&self.ownership, i, shape.ownership_len()),
        }
    }

    /// The buffers with their per-row lengths, in the contract's output order.
    pub(crate) fn buffers_mut(&mut self, shape: &IoShape) -> [(&mut Vec<f32>, usize); 5] {
        [
            (&mut self.policy_pass, shape.policy_channels),
            (&mut self.policy, shape.policy_len()),
            (&mut self.value, shape.value_channels),
            (&mut self.score_value, shape.score_value_channels),
            (&mut self.ownership, shape.ownership_len()),
        ]
    }
}

/// Output names in the contract's order, matching [`BatchOutput::buffers_mut`].
pub(crate) const OUTPUT_NAMES: [&str; 5] = [
    crate::onnx::load::OUTPUT_POLICY_PASS,
    crate::onnx::load::OUTPUT_POLICY,
    crate::onnx::load::OUTPUT_VALUE,
    crate::onnx::load::OUTPUT_SCORE_VALUE,
    crate::onnx::load::OUTPUT_OWNERSHIP,
];

/// Per-row lengths of the outputs, in the contract's order.
pub(crate) fn output_lens(shape: &IoShape) -> [usize; 5] {
    [
        shape.policy_channels,
        shape.policy_len(),
        shape.value_channels,
        shape.score_value_channels,
        shape.ownership_len(),
    ]
}

/// The output buffers as mutable slices, in the contract's order.
pub(crate) fn output_slices<'a>(
    output: &'a mut BatchOutput,
    shape: &IoShape,
) -> [&'a mut [f32]; 5] {
    let [a, b, c, d, e] = output.buffers_mut(shape);
    [
        a.0.as_mut_slice(),
        b.0.as_mut_slice(),
        c.0.as_mut_slice(),
        d.0.as_mut_slice(),
        e.0.as_mut_slice(),
    ]
}

/// Splits each output slice after `rows` rows.
pub(crate) fn split_outputs<'a>(
    out: [&'a mut [f32]; 5],
    lens: &[usize; 5],
    rows: usize,
) -> ([&'a mut [f32]; 5], [&'a mut [f32]; 5]) {
    let [a, b, c, d, e] = out;
    let (a0, a1) = a.split_at_mut(lens[0] * rows);
    let (b0, b1) = b.split_at_mut(lens[1] * rows);
    let (c0, c1) = c.split_at_mut(lens[2] * rows);
    let (d0, d1) = d.split_at_mut(lens[3] * rows);
    let (e0, e1) = e.split_at_mut(lens[4] * rows);
    ([a0, b0, c0, d0, e0], [a1, b1, c1, d1, e1])
}
