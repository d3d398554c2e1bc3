//! The CPU backend on tract: one optimized plan per sub-batch size, built lazily from a
//! decluttered model with a symbolic batch, and cached.
//!
//! tract 0.23 is fastest at batch 1: a concrete batch of 1 takes the lazy-im2col convolution
//! path, while larger or symbolic batches fall back to eager im2col and are slower per row.
//! So by default a batch of B rows runs as B batch-1 evaluations spread over worker threads,
//! each thread with its own plan state, and the batch dimension is made concrete before
//! `into_optimized()`. [`TractOptions::sub_batch`] can run larger pieces instead.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;

use tract_onnx::pb::ModelProto;
use tract_onnx::prelude::{
    tvec, Datum, Framework, InferenceFact, InferenceModelExt, IntoRunnable, TDim, TValue, Tensor,
    ToDim, TractError, TractResult, TypedModel, TypedRunnableModel, TypedSimpleState,
};
use tract_onnx::tract_core::optim::Optimizer;

use super::io::{output_lens, output_slices, split_outputs, OUTPUT_NAMES};
use super::spread::spread;
use super::{panic_message, Backend, BackendError, BatchInput, BatchOutput, IoShape};
use crate::onnx::load::LoadedModel;

/// How the tract backend runs batches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TractOptions {
    /// Threads that evaluate the pieces of one batch in parallel, counting the caller's
    /// (1: everything on the calling thread).
    pub threads: usize,
    /// Rows per tract run: a batch is cut into pieces of at most this many rows
    /// (1 is fastest per row in tract 0.23).
    pub sub_batch: usize,
    /// The largest batch accepted by [`Backend::evaluate`].
    pub max_batch: usize,
}

impl Default for TractOptions {
    /// One thread per core, batch-1 runs, batches up to 256.
    fn default() -> Self {
        TractOptions {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            sub_batch: 1,
            max_batch: 256,
        }
    }
}

/// Time spent preparing the model, for logs and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TractTimings {
    /// Seconds to translate the ONNX graph and declutter it (once per backend).
    pub analyse_seconds: f64,
}

/// A CPU backend on tract; see the module documentation.
pub struct TractBackend {
    name: String,
    shape: IoShape,
    options: TractOptions,
    /// Decluttered, with the batch symbolic: the starting point of every plan.
    base: TypedModel,
    batch: tract_onnx::prelude::Symbol,
    /// For each output in the contract's order, its index among tract's outputs.
    output_index: [usize; 5],
    plans: RwLock<HashMap<usize, Arc<Plan>>>,
    pool: Option<rayon::ThreadPool>,
    timings: TractTimings,
}

/// An optimized plan for one concrete batch size, with spare states for the threads.
struct Plan {
    rows: usize,
    runnable: Arc<TypedRunnableModel>,
    idle: Mutex<Vec<Scratch>>,
}

/// A plan state and its input tensors, reused run after run by one thread at a time.
struct Scratch {
    state: TypedSimpleState,
    inputs: Vec<Arc<Tensor>>,
}

impl TractBackend {
    /// Builds the backend for a model that passed the contract checks.
    pub fn new(model: &LoadedModel, options: TractOptions) -> Result<Self, BackendError> {
        let shape = IoShape::from_metadata(&model.metadata);
        let started = Instant::now();
        let (base, batch) = contained("tract model analysis", || analyse(&model.proto, &shape))?;
        let analyse_seconds = started.elapsed().as_secs_f64();
        let output_index = output_index(&model.proto)?;
        let threads = options.threads.max(1);
        let pool = if threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("tract-{i}"))
                .build()
                .map_err(|e| BackendError::Unavailable(format!("thread pool: {e}")))?;
            Some(pool)
        } else {
            None
        };
        let options = TractOptions {
            threads,
            sub_batch: options.sub_batch.max(1),
            max_batch: options.max_batch.max(1),
        };
        log::info!(
            "tract backend for {}: {}x{} buffer, {} threads, sub-batch {}, analysed in {:.3}s",
            model.metadata.name,
            shape.x_len,
            shape.y_len,
            options.threads,
            options.sub_batch,
            analyse_seconds
        );
        Ok(TractBackend {
            name: format!("tract ({} threads)", options.threads),
            shape,
            options,
            base,
            batch,
            output_index,
            plans: RwLock::new(HashMap::new()),
            pool,
            timings: TractTimings { analyse_seconds },
        })
    }

    /// Validates `proto` against the contract, then builds the backend.
    pub fn from_proto(proto: ModelProto, options: TractOptions) -> Result<Self, BackendError> {
        let model = LoadedModel::from_proto(proto)?;
        Self::new(&model, options)
    }

    /// The options in force (threads at least 1).
    pub fn options(&self) -> &TractOptions {
        &self.options
    }

    /// The decluttered model with a symbolic batch that every plan starts from (for tooling,
    /// e.g. exporting it to NNEF).
    pub fn base_model(&self) -> &TypedModel {
        &self.base
    }

    /// How long the one-time model analysis took.
    pub fn timings(&self) -> TractTimings {
        self.timings
    }

    /// The plan for `rows` rows, built on first use.
    fn plan(&self, rows: usize) -> Result<Arc<Plan>, BackendError> {
        if let Some(plan) = self
            .plans
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&rows)
        {
            return Ok(Arc::clone(plan));
        }
        // Build under the write lock so that threads asking for the same size wait for one build.
        let mut plans = self.plans.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(plan) = plans.get(&rows) {
            return Ok(Arc::clone(plan));
        }
        let started = Instant::now();
        let runnable = contained("tract plan optimization", || {
            self.optimized_for(rows)?.into_runnable()
        })?;
        log::info!(
            "tract: plan for batch {rows} built in {:.3}s",
            started.elapsed().as_secs_f64()
        );
        let plan = Arc::new(Plan {
            rows,
            runnable,
            idle: Mutex::new(Vec::new()),
        });
        plans.insert(rows, Arc::clone(&plan));
        Ok(plan)
    }

    /// Seconds to build (optimize) the plan for `rows` rows from scratch, without caching it.
    pub fn measure_plan_build(&self, rows: usize) -> Result<f64, BackendError> {
        let started = Instant::now();
        contained("tract plan optimization", || {
            self.optimized_for(rows)?.into_runnable()
        })?;
        Ok(started.elapsed().as_secs_f64())
    }

    /// The model with its batch made `rows`, optimized. tract 0.23.9's axis-changing pass
    /// can fail on a graph it has rewritten itself: once it has fused a per-row bias (a
    /// global-pooling block's) into a convolution whose batch axis it dropped, it moves an
    /// axis of that bias as if it were the image (`Conv: Bias should be scalar or a
    /// vector`), which happens in nested-bottleneck nets. Such a model is optimized again
    /// without that pass, which only rearranges axes.
    fn optimized_for(&self, rows: usize) -> TractResult<TypedModel> {
        let subs: HashMap<_, _> = [(self.batch.clone(), TDim::Val(rows as i64))].into();
        let model = self.base.set_symbols(&subs)?;
        match model.clone().into_optimized() {
            Ok(optimized) => Ok(optimized),
            Err(e) if format!("{e:?}").contains("ChangeAxes") => {
                log::info!(
                    "tract: optimizing again without its axis-changing pass, which failed on \
                     this graph ({e})"
                );
                let mut model = model;
                let mut declutter = Optimizer::declutter();
                declutter
                    .passes
                    .retain(|pass| format!("{pass:?}") != "ChangeAxes");
                declutter.optimize(&mut model)?;
                model.optimize()?;
                Ok(model)
            }
            Err(e) => Err(e),
        }
    }

    /// Runs rows `input` (exactly `plan.rows` of them) into `out`.
    fn run_piece(
        &self,
        plan: &Plan,
        input: &BatchInput<'_>,
        out: &mut [&mut [f32]; 5],
    ) -> Result<(), BackendError> {
        let spare = plan
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut scratch = match spare {
            Some(s) => s,
            None => self.new_scratch(plan)?,
        };
        let result = contained("tract run", || -> TractResult<()> {
            let srcs = [
                Some(input.spatial),
                Some(input.global),
                input.meta,
                Some(input.mask),
            ];
            let mut values = tvec![];
            for (tensor, src) in scratch.inputs.iter_mut().zip(srcs.into_iter().flatten()) {
                // Refill the tensor in place when the last run let go of it (the usual case).
                if let Some(t) = Arc::get_mut(tensor) {
                    t.try_as_plain_ram_mut()?
                        .as_slice_mut::<f32>()?
                        .copy_from_slice(src);
                } else {
                    *tensor = Arc::new(Tensor::from_shape(tensor.shape(), src)?);
                }
                values.push(TValue::from_const(Arc::clone(tensor)));
            }
            let outputs = scratch.state.run(values)?;
            for (k, dst) in out.iter_mut().enumerate() {
                let t = outputs.get(self.output_index[k]).ok_or_else(|| {
                    tract_onnx::tract_core::internal::format_err!(
                        "missing output {}",
                        OUTPUT_NAMES[k]
                    )
                })?;
                let view = t.try_as_plain_ram()?;
                let src = view.as_slice::<f32>()?;
                if src.len() != dst.len() {
                    tract_onnx::tract_core::internal::bail!(
                        "output {} has {} values, expected {}",
                        OUTPUT_NAMES[k],
                        src.len(),
                        dst.len()
                    );
                }
                dst.copy_from_slice(src);
            }
            Ok(())
        });
        // A state whose run failed may hold half a turn: drop it rather than reuse it.
        if result.is_ok() {
            plan.idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(scratch);
        }
        result
    }

    fn new_scratch(&self, plan: &Plan) -> Result<Scratch, BackendError> {
        let state = TypedSimpleState::new(&plan.runnable).map_err(tract_error)?;
        let inputs = self
            .shape
            .input_dims(plan.rows)
            .iter()
            .map(|dims| Tensor::zero::<f32>(dims).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()
            .map_err(tract_error)?;
        Ok(Scratch { state, inputs })
    }

    /// Runs rows in pieces of `sub_batch` on the calling thread.
    fn run_rows(
        &self,
        input: &BatchInput<'_>,
        mut out: [&mut [f32]; 5],
    ) -> Result<(), BackendError> {
        let lens = output_lens(&self.shape);
        let mut start = 0;
        while start < input.rows {
            let rows = self.options.sub_batch.min(input.rows - start);
            let plan = self.plan(rows)?;
            let piece = input.slice(&self.shape, start, rows);
            let (mut head, tail) = split_outputs(out, &lens, rows);
            self.run_piece(&plan, &piece, &mut head)?;
            out = tail;
            start += rows;
        }
        Ok(())
    }
}

impl Backend for TractBackend {
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
        // Enough rows to keep every thread busy with its own sub-batch.
        self.options.threads * self.options.sub_batch
    }

    fn warm_up(&self, batch_sizes: &[usize]) -> Result<(), BackendError> {
        for &rows in batch_sizes {
            let piece = self.options.sub_batch.min(rows.max(1));
            self.plan(piece)?;
            let rest = rows % self.options.sub_batch;
            if rest > 0 {
                self.plan(rest)?;
            }
        }
        Ok(())
    }

    fn evaluate(
        &self,
        input: &BatchInput<'_>,
        output: &mut BatchOutput,
    ) -> Result<(), BackendError> {
        input.check(&self.shape, self.options.max_batch)?;
        output.prepare(&self.shape, input.rows);
        let out = output_slices(output, &self.shape);
        let pieces = input.rows.div_ceil(self.options.sub_batch);
        let pool = match &self.pool {
            Some(pool) if pieces > 1 => pool,
            _ => return self.run_rows(input, out),
        };
        spread(
            pool,
            self.options.threads,
            self.options.sub_batch,
            &self.shape,
            input,
            out,
            |piece, head| self.run_rows(piece, head),
        )
    }
}

/// Translates the ONNX graph with every input's batch bound to one symbol, and declutters it.
fn analyse(
    proto: &ModelProto,
    shape: &IoShape,
) -> TractResult<(TypedModel, tract_onnx::prelude::Symbol)> {
    // The declared output shapes and value_info may name the batch differently from the inputs;
    // tract would then refuse to unify them, so only the inputs' facts are taken from here.
    let onnx = tract_onnx::onnx()
        .with_ignore_output_shapes(true)
        .with_ignore_value_info(true);
    let mut model = onnx.model_for_proto_model(proto)?;
    let batch = model.symbols.sym("tengen_batch");
    for (i, dims) in shape.input_dims(1).iter().enumerate() {
        let fact = InferenceFact::dt_shape(
            f32::datum_type(),
            tvec![
                batch.to_dim(),
                dims[1].to_dim(),
                dims[2].to_dim(),
                dims[3].to_dim()
            ],
        );
        model.set_input_fact(i, fact)?;
    }
    let typed = model.into_typed()?.into_decluttered()?;
    Ok((typed, batch))
}

/// Where each contract output sits among the graph's declared outputs.
fn output_index(proto: &ModelProto) -> Result<[usize; 5], BackendError> {
    let outputs = proto.graph.as_ref().map(|g| &g.output[..]).unwrap_or(&[]);
    let mut index = [0; 5];
    for (k, name) in OUTPUT_NAMES.iter().enumerate() {
        index[k] = outputs
            .iter()
            .position(|o| o.name == *name)
            .ok_or_else(|| BackendError::Tract(format!("graph has no output {name}")))?;
    }
    Ok(index)
}

fn tract_error(e: TractError) -> BackendError {
    BackendError::Tract(format!("{e:#}"))
}

/// Runs a tract call, turning both its errors and its panics (tract has `unimplemented!`
/// paths that hostile graphs can reach) into [`BackendError`]s.
pub(crate) fn contained<T>(
    what: &'static str,
    f: impl FnOnce() -> TractResult<T>,
) -> Result<T, BackendError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(tract_error(e)),
        Err(payload) => Err(BackendError::Panicked(what, panic_message(&*payload))),
    }
}
