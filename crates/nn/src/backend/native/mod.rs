//! Tengen's own CPU backend for convolutional KataGo networks: the model file's layers run
//! directly, without an ONNX graph, with 3x3 convolutions by Winograd's F(4x4, 3x3)
//! ([`winograd`]), which needs about a quarter of a direct convolution's multiplications.
//! Transformer blocks (attention, SwiGLU, RMS norms) and metadata encoders run here too.
//!
//! Rows of a batch run one after another on the calling thread; concurrent callers (search
//! threads) each take a workspace from a pool, so evaluation allocates nothing once warm.

mod activation;
mod int16;
mod layers;
mod net;
mod peak;
mod pointwise;
mod transformer;
pub mod winograd;

pub use peak::peak_multiply_adds;
pub use winograd::Gemm;

use std::sync::{Mutex, PoisonError};

use crate::contract::meta::ModelMetadata;
use crate::model::ModelDesc;

use super::io::{output_lens, output_slices};
use super::spread::spread;
use super::{Backend, BackendError, BatchInput, BatchOutput, IoShape};
use net::{Net, RowInput, RowOutput, Workspace};

/// How the native backend runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeOptions {
    /// Threads that share a batch's rows, counting the caller's.
    pub threads: usize,
    /// The largest batch [`Backend::evaluate`] accepts.
    pub max_batch: usize,
    /// How the trunk's 3x3 convolutions multiply ([`Gemm::Int16`] runs in f32 on a CPU
    /// without AVX-512 VNNI).
    pub gemm: Gemm,
}

impl Default for NativeOptions {
    /// One thread, batches up to 256, f32.
    fn default() -> Self {
        NativeOptions {
            threads: 1,
            max_batch: 256,
            gemm: Gemm::F32,
        }
    }
}

/// The native backend for one network at one board buffer size.
pub struct NativeBackend {
    name: String,
    shape: IoShape,
    options: NativeOptions,
    net: Net,
    workspaces: Mutex<Vec<Workspace>>,
    pool: Option<rayon::ThreadPool>,
}

impl NativeBackend {
    /// Lays out `model` for the board buffer `metadata` declares (the metadata of a graph
    /// built from the same model).
    pub fn new(
        model: &ModelDesc,
        metadata: &ModelMetadata,
        options: NativeOptions,
    ) -> Result<NativeBackend, BackendError> {
        let shape = IoShape::from_metadata(metadata);
        let net = Net::new(model, options.gemm, shape.y_len, shape.x_len)
            .map_err(|e| BackendError::Unavailable(e.to_string()))?;
        let options = NativeOptions {
            threads: options.threads.max(1),
            max_batch: options.max_batch.max(1),
            ..options
        };
        let pool = if options.threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(options.threads - 1)
                .thread_name(|i| format!("nn-native-{i}"))
                .build()
                .map_err(|e| BackendError::Unavailable(format!("thread pool: {e}")))?;
            Some(pool)
        } else {
            None
        };
        let simd = if net.is_int16() {
            "AVX-512 VNNI int16"
        } else if winograd::simd_available() {
            "AVX2"
        } else {
            "portable"
        };
        Ok(NativeBackend {
            name: format!("native {simd} ({} threads)", options.threads),
            shape,
            options,
            net,
            workspaces: Mutex::new(Vec::new()),
            pool,
        })
    }

    /// Runs `input`'s rows one after another into `out` (the rows' parts of each output).
    fn run_rows(&self, input: &BatchInput<'_>, out: [&mut [f32]; 5]) {
        let shape = self.shape;
        let lens = output_lens(&shape);
        let mut ws = self
            .workspaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        let [pass, policy, value, score, own] = out;
        // Every length is at least 1 in a validated model, so each chunking yields the rows.
        let rows = pass
            .chunks_exact_mut(lens[0])
            .zip(policy.chunks_exact_mut(lens[1]))
            .zip(value.chunks_exact_mut(lens[2]))
            .zip(score.chunks_exact_mut(lens[3]))
            .zip(own.chunks_exact_mut(lens[4]));
        for (r, ((((policy_pass, policy), value), score_value), ownership)) in rows.enumerate() {
            let row = input.slice(&shape, r, 1);
            let row_input = RowInput {
                spatial: row.spatial,
                global: row.global,
                mask: row.mask,
                meta: row.meta,
            };
            let out = RowOutput {
                policy_pass,
                policy,
                value,
                score_value,
                ownership,
            };
            self.net
                .forward(&row_input, shape.y_len, shape.x_len, &mut ws, out);
        }
        self.workspaces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ws);
    }
}

impl Backend for NativeBackend {
    fn name(&self) -> &str {
        &self.name
    }

    fn shape(&self) -> &IoShape {
        &self.shape
    }

    fn max_batch(&self) -> usize {
        self.options.max_batch
    }

    fn preferred_batch(&self) -> usize {
        self.options.threads
    }

    fn evaluate(
        &self,
        input: &BatchInput<'_>,
        output: &mut BatchOutput,
    ) -> Result<(), BackendError> {
        input.check(&self.shape, self.options.max_batch)?;
        output.prepare(&self.shape, input.rows);
        let out = output_slices(output, &self.shape);
        let pool = match &self.pool {
            Some(pool) if input.rows > 1 => pool,
            _ => {
                self.run_rows(input, out);
                return Ok(());
            }
        };
        spread(
            pool,
            self.options.threads,
            1,
            &self.shape,
            input,
            out,
            |piece, head| {
                self.run_rows(piece, head);
                Ok(())
            },
        )
    }
}
