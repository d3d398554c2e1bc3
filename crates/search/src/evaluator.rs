//! What the search asks of a position: the evaluation contract of `tengen-eval`,
//! re-exported so that users of the search name one crate. The network
//! (`tengen-nn`) and the classical engine (`tengen-classic`) implement it.

pub use tengen_eval::{
    EvalError, EvalRequest, Evaluator, HumanProfile, InputParams, NnOutput, PolicyOptions,
    ProfileError, Symmetry, UniformEvaluator,
};
