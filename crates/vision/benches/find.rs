//! Board finding on one 1280x720 frame, from the frame to the corners (no decoding): a
//! rendered 19x19 board at an angle with stones on it, and a real webcam frame of the
//! Gomrade sequence when ../shared is there. The goal is 500 ms per frame.

use criterion::{criterion_group, criterion_main, Criterion};
use tengen_test_support::shared_dir;
use tengen_vision::{find_board, read_image, Frame, Homography, PixelFormat};

const WIDTH: usize = 1280;
const HEIGHT: usize = 720;

/// A grey 1280x720 frame: a wooden 19x19 board seen at an angle on a darker table, with
/// black and white stones on a few dozen points.
fn rendered_frame() -> Frame {
    let last = 18.0;
    let grid = Homography::fit(
        &[[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]],
        &[
            [400.0, 90.0],
            [900.0, 110.0],
            [1010.0, 640.0],
            [300.0, 610.0],
        ],
    )
    .expect("a proper quadrilateral");
    let inv = grid.inverse().expect("invertible");
    let mut data = Vec::with_capacity(WIDTH * HEIGHT);
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            let [u, v] = inv.apply([x as f64, y as f64]).unwrap_or([-9.0, -9.0]);
            let (ru, rv) = (u.round(), v.round());
            let on_board = (-0.7..=last + 0.7).contains(&u) && (-0.7..=last + 0.7).contains(&v);
            // A stone on every point whose coordinates make this pattern, about one in eight.
            let stone = (0.0..=last).contains(&ru)
                && (0.0..=last).contains(&rv)
                && (ru as i64 * 7 + rv as i64 * 3) % 8 == 0
                && (u - ru).hypot(v - rv) < 0.46;
            let line = |a: f64, b: f64| {
                (a - a.round()).abs() < 0.05
                    && (0.0..=last).contains(&a.round())
                    && (-0.05..=last + 0.05).contains(&b)
            };
            let level = if !on_board {
                60
            } else if stone {
                if (ru as i64 + rv as i64) % 2 == 0 {
                    30
                } else {
                    235
                }
            } else if line(u, v) || line(v, u) {
                70
            } else {
                // Wood grain: a slow ripple along one direction.
                (180.0 + 12.0 * (u * 3.1 + v * 0.4).sin()) as u8
            };
            data.push(level);
        }
    }
    Frame::new(WIDTH, HEIGHT, PixelFormat::Grey, data).expect("sizes match")
}

fn find(c: &mut Criterion) {
    let mut group = c.benchmark_group("find_board_1280x720");
    group.sample_size(10);
    let rendered = rendered_frame();
    assert!(find_board(&rendered).is_ok(), "the rendered board is found");
    group.bench_function("rendered_19x19", |b| b.iter(|| find_board(&rendered)));
    if let Some(root) = shared_dir(
        "vision bench webcam frame",
        &["camera/gomrade/testing_sequence/6.jpg"],
    ) {
        let path = root.join("camera/gomrade/testing_sequence/6.jpg");
        let frame = read_image(&path).expect("a readable frame");
        assert_eq!((frame.width(), frame.height()), (WIDTH, HEIGHT));
        group.bench_function("gomrade_webcam", |b| b.iter(|| find_board(&frame)));
    }
    group.finish();
    // The slowest path: a crowded 19x19 board whose clearest lines form a 9x9 window in one
    // corner, grown from there a line at a time (a 608x608 photo, about as many working
    // pixels as a 1280x720 frame shrunk to 800 px).
    let crowded = "camera/roboflow-corners/images/74_jpg.rf.a30f77b82bd07ac2fbaf5347cf249a4f.jpg";
    if let Some(root) = shared_dir("vision bench crowded photo", &[crowded]) {
        let frame = read_image(&root.join(crowded)).expect("a readable photo");
        let mut group = c.benchmark_group("find_board_grown");
        group.sample_size(10);
        group.bench_function("roboflow_crowded_19x19", |b| b.iter(|| find_board(&frame)));
        group.finish();
    }
}

criterion_group!(benches, find);
criterion_main!(benches);
