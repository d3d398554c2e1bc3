//! The search's own cost per visit, without a network: an evaluator that answers every
//! position with one precomputed output, so descent, replay, expansion and backup are
//! all that is measured. Criterion prints visits per second as "elem/s".

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tengen_rules::{BoardSize, Game, Rules};
use tengen_search::evaluator::{EvalError, NnOutput};
use tengen_search::{EvalRequest, Evaluator, Limits, Search, SearchParams, UniformEvaluator};

/// Returns one fixed judgement; its policy covers the empty board's moves, and the
/// search only stores those still legal.
struct Fixed(Arc<NnOutput>);

impl Evaluator for Fixed {
    fn evaluate(&self, _: &Game, _: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        Ok(self.0.clone())
    }
}

fn visits(c: &mut Criterion) {
    let mut group = c.benchmark_group("search_overhead");
    const VISITS: u64 = 2000;
    group.throughput(Throughput::Elements(VISITS));
    group.sample_size(10);
    for n in [9, 19] {
        let size = BoardSize::square(n).expect("valid size");
        let game = Game::new(size, Rules::chinese());
        let mut template = (*UniformEvaluator
            .evaluate(
                &game,
                &EvalRequest {
                    symmetry: Default::default(),
                    policy: Default::default(),
                    inputs: Default::default(),
                    ownership: false,
                },
            )
            .expect("uniform"))
        .clone();
        // A skewed policy, as a network's is, so the tree grows deep.
        let mut rng = fastrand::Rng::with_seed(5);
        for p in template.policy.iter_mut().filter(|p| **p >= 0.0) {
            *p = rng.f32().powi(8);
        }
        let total: f32 = template.policy.iter().filter(|p| **p >= 0.0).sum();
        template
            .policy
            .iter_mut()
            .filter(|p| **p >= 0.0)
            .for_each(|p| *p /= total);
        let ev: Arc<dyn Evaluator> = Arc::new(Fixed(Arc::new(template)));
        group.bench_function(format!("{n}x{n}"), |b| {
            b.iter(|| {
                let mut s = Search::new(ev.clone(), SearchParams::default());
                s.set_position(&game);
                s.run(Limits::visits(VISITS)).expect("search")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, visits);
criterion_main!(benches);
