//! Measuring a backend's throughput (evaluations per second) on random positions, from one
//! or several calling threads.

use std::time::{Duration, Instant};

use super::{Backend, BackendError, BatchInput, BatchOutput, IoShape};

/// Owned inputs for a batch, filled with plausible random planes.
#[derive(Clone, Debug)]
pub struct OwnedBatch {
    /// Number of positions.
    pub rows: usize,
    /// `InputSpatial` values.
    pub spatial: Vec<f32>,
    /// `InputGlobal` values.
    pub global: Vec<f32>,
    /// `InputMeta` values, when the model has that input.
    pub meta: Option<Vec<f32>>,
    /// `InputMask` values (the whole buffer on board).
    pub mask: Vec<f32>,
}

impl OwnedBatch {
    /// `rows` random positions filling the whole buffer of `shape` (binary planes, small globals).
    pub fn random(shape: &IoShape, rows: usize, seed: u64) -> Self {
        let mut state = seed ^ 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            // xorshift64*: deterministic, no dependency, plenty for benchmark inputs.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut spatial: Vec<f32> = (0..rows * shape.spatial_len())
            .map(|_| if next() < 0.3 { 1.0 } else { 0.0 })
            .collect();
        for r in 0..rows {
            let start = r * shape.spatial_len();
            spatial[start..start + shape.area()].fill(1.0);
        }
        OwnedBatch {
            rows,
            spatial,
            global: (0..rows * shape.global_channels)
                .map(|_| next() - 0.5)
                .collect(),
            meta: (shape.meta_channels > 0)
                .then(|| (0..rows * shape.meta_channels).map(|_| next()).collect()),
            mask: vec![1.0; rows * shape.mask_len()],
        }
    }

    /// The batch as a [`BatchInput`].
    pub fn batch(&self) -> BatchInput<'_> {
        BatchInput {
            rows: self.rows,
            spatial: &self.spatial,
            global: &self.global,
            meta: self.meta.as_deref(),
            mask: &self.mask,
        }
    }
}

/// The outcome of [`measure`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throughput {
    /// Rows per `evaluate` call.
    pub rows: usize,
    /// Threads calling `evaluate` at once.
    pub callers: usize,
    /// Evaluations (rows) per second over all callers.
    pub evals_per_second: f64,
    /// Mean seconds per `evaluate` call.
    pub seconds_per_batch: f64,
}

/// Evaluates batches of `rows` from `callers` threads for at least `min_time` (after one
/// warm-up call each) and reports the throughput.
pub fn measure(
    backend: &dyn Backend,
    rows: usize,
    callers: usize,
    min_time: Duration,
) -> Result<Throughput, BackendError> {
    let callers = callers.max(1);
    let inputs = OwnedBatch::random(backend.shape(), rows, 1);
    backend.warm_up(&[rows])?;
    let mut out = BatchOutput::new();
    backend.evaluate(&inputs.batch(), &mut out)?;
    let started = Instant::now();
    let counts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..callers)
            .map(|_| {
                let inputs = &inputs;
                scope.spawn(move || -> Result<usize, BackendError> {
                    let mut out = BatchOutput::new();
                    let mut calls = 0;
                    while calls == 0 || started.elapsed() < min_time {
                        backend.evaluate(&inputs.batch(), &mut out)?;
                        calls += 1;
                    }
                    Ok(calls)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|payload| {
                    Err(BackendError::Panicked(
                        "benchmark caller",
                        super::panic_message(&*payload),
                    ))
                })
            })
            .collect::<Result<Vec<usize>, BackendError>>()
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let calls: usize = counts.iter().sum();
    Ok(Throughput {
        rows,
        callers,
        evals_per_second: (calls * rows) as f64 / seconds,
        seconds_per_batch: seconds * callers as f64 / calls as f64,
    })
}
