//! Uniformly random legal playouts (no filling of one's own one-point eyes) from an
//! empty board, one per iteration; criterion prints playouts per second as "elem/s".

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tengen_rules::playout::random_playout;
use tengen_rules::{Board, BoardSize, Player};

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_playout");
    group.throughput(Throughput::Elements(1));
    for n in [9, 19] {
        let size = BoardSize::square(n).expect("valid size");
        let empty = Board::new(size);
        let mut rng = fastrand::Rng::with_seed(42);
        group.bench_function(format!("{n}x{n}"), |b| {
            b.iter(|| {
                let mut board = empty.clone();
                random_playout(&mut board, Player::Black, &mut rng, 3 * size.area())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, playouts);
criterion_main!(benches);
