//! The synthetic renderer's speed: one random 1280x720 scene per size with the default
//! variation (tilt, coloured light, glare, blur, noise, JPEG), a middle-game position and a
//! hand over the board.

use criterion::{criterion_group, criterion_main, Criterion};
use tengen_rules::BoardSize;
use tengen_vision::render::{random_stones, render, Scene, Variation};

fn renders(c: &mut Criterion) {
    let mut group = c.benchmark_group("render_1280x720");
    group.sample_size(20);
    let variation = Variation {
        hand_probability: 1.0,
        ..Variation::default()
    };
    for n in [9, 19] {
        let size = BoardSize::square(n).expect("valid size");
        let stones = random_stones(size, n as u64);
        let scene = Scene::random(size, stones, 1, &variation);
        group.bench_function(format!("{n}x{n}"), |b| b.iter(|| render(&scene)));
    }
    group.finish();
}

criterion_group!(benches, renders);
criterion_main!(benches);
