//! Playouts from an empty board, one per iteration, with each policy: uniformly random
//! legal moves (no filling of one's own one-point eyes) and the guided policy;
//! criterion prints playouts per second as "elem/s".

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tengen_rules::playout::PlayoutPolicy;
use tengen_rules::{Board, BoardSize, Player};

fn playouts(c: &mut Criterion) {
    for (name, policy) in [
        ("random_playout", PlayoutPolicy::Random),
        ("guided_playout", PlayoutPolicy::Guided),
    ] {
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Elements(1));
        for n in [9, 19] {
            let size = BoardSize::square(n).expect("valid size");
            let empty = Board::new(size);
            let mut rng = fastrand::Rng::with_seed(42);
            let mut board = empty.clone();
            group.bench_function(format!("{n}x{n}"), |b| {
                b.iter(|| {
                    board.clone_from(&empty);
                    policy.play(&mut board, Player::Black, None, &mut rng, 3 * size.area())
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, playouts);
criterion_main!(benches);
