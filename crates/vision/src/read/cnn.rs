//! The stone network, run through tract: a batch of normalised patches in, class
//! probabilities out. A plan is optimised once per batch size (a board's point count) and
//! kept, with its state and input tensor, so later frames reuse them.

use std::sync::Arc;

use tract_onnx::prelude::{
    tvec, Datum, Framework, InferenceFact, InferenceModel, InferenceModelExt, IntoRunnable, TValue,
    Tensor, TractResult, TypedRunnableModel, TypedSimpleState,
};

use super::rectify::{PATCH, PATCH_LEN};
use super::ModelError;

/// One optimised plan for a fixed number of patches.
struct Plan {
    rows: usize,
    state: TypedSimpleState,
    input: Arc<Tensor>,
    _runnable: Arc<TypedRunnableModel>,
}

/// The network and its plans.
pub struct Cnn {
    model: InferenceModel,
    plans: Vec<Plan>,
}

impl std::fmt::Debug for Cnn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cnn")
            .field(
                "plans",
                &self.plans.iter().map(|p| p.rows).collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn load_error(e: impl std::fmt::Display) -> ModelError {
    ModelError::Load(e.to_string())
}

impl Cnn {
    /// Reads an ONNX model taking `N x 3 x PATCH x PATCH` and giving `N x 4` logits, and
    /// checks that it runs on one patch.
    pub fn from_onnx(bytes: &[u8]) -> Result<Cnn, ModelError> {
        let model = std::panic::catch_unwind(|| {
            tract_onnx::onnx().model_for_read(&mut std::io::Cursor::new(bytes))
        })
        .map_err(|_| load_error("tract panicked reading the model"))?
        .map_err(load_error)?;
        let mut cnn = Cnn {
            model,
            plans: Vec::new(),
        };
        let mut probs = [[0.0; 4]; 1];
        cnn.run(&vec![0.0; PATCH_LEN], &mut probs)?;
        Ok(cnn)
    }

    fn plan(&mut self, rows: usize) -> Result<&mut Plan, ModelError> {
        if let Some(i) = self.plans.iter().position(|p| p.rows == rows) {
            return Ok(&mut self.plans[i]);
        }
        let model = self.model.clone();
        let build = move || -> TractResult<Plan> {
            let fact = InferenceFact::dt_shape(f32::datum_type(), tvec![rows, 3, PATCH, PATCH]);
            let runnable = model
                .with_input_fact(0, fact)?
                .into_optimized()?
                .into_runnable()?;
            let state = TypedSimpleState::new(&runnable)?;
            let input = Arc::new(Tensor::zero::<f32>(&[rows, 3, PATCH, PATCH])?);
            Ok(Plan {
                rows,
                state,
                input,
                _runnable: runnable,
            })
        };
        let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(build))
            .map_err(|_| load_error("tract panicked optimising the model"))?
            .map_err(load_error)?;
        self.plans.push(plan);
        let last = self.plans.len() - 1;
        Ok(&mut self.plans[last])
    }

    /// Class probabilities (softmax of the logits) of `patches.len() / PATCH_LEN` patches.
    pub fn run(&mut self, patches: &[f32], probs: &mut [[f32; 4]]) -> Result<(), ModelError> {
        let rows = patches.len() / PATCH_LEN;
        if rows == 0 || rows != probs.len() || patches.len() != rows * PATCH_LEN {
            return Err(ModelError::Run(
                "patches and outputs disagree in number".into(),
            ));
        }
        let plan = self.plan(rows)?;
        let result = (|| -> TractResult<()> {
            // Refill the input in place when the last run let go of it (the usual case).
            if let Some(t) = Arc::get_mut(&mut plan.input) {
                t.try_as_plain_ram_mut()?
                    .as_slice_mut::<f32>()?
                    .copy_from_slice(patches);
            } else {
                plan.input = Arc::new(Tensor::from_shape(&[rows, 3, PATCH, PATCH], patches)?);
            }
            let outputs = plan
                .state
                .run(tvec![TValue::from_const(Arc::clone(&plan.input))])?;
            let logits = outputs[0].try_as_plain_ram()?;
            let logits = logits.as_slice::<f32>()?;
            if logits.len() != rows * 4 {
                tract_onnx::tract_core::internal::bail!(
                    "{} logits for {rows} patches",
                    logits.len()
                );
            }
            for (p, l) in probs.iter_mut().zip(logits.chunks_exact(4)) {
                let m = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: [f32; 4] = std::array::from_fn(|k| (l[k] - m).exp());
                let s: f32 = e.iter().sum();
                *p = e.map(|v| v / s);
            }
            Ok(())
        })();
        result.map_err(|e| ModelError::Run(e.to_string()))
    }
}
