//! The stone reader on a 1280x720 frame with a 19x19 board: rectification, colour
//! correction and the network for all 361 points (the budget is 15 ms), the
//! rectification and correction alone, and the classical rule for comparison.
//! `TENGEN_STONES_ONNX=path` also times another network of the same shape (to compare
//! candidates before training one).

use criterion::{criterion_group, criterion_main, Criterion};
use tengen_rules::BoardSize;
use tengen_vision::{BoardReading, FoundBoard, Frame, Homography, PixelFormat, StoneReader};

/// A wood-coloured frame with dark lines and a few dark and light discs, and its board.
fn scene() -> (Frame, FoundBoard) {
    let (w, h) = (1280usize, 720usize);
    let corners = [
        [340.0, 80.0],
        [940.0, 90.0],
        [1010.0, 660.0],
        [270.0, 650.0],
    ];
    let grid = Homography::fit(
        &[[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]],
        &corners,
    )
    .expect("a board");
    let inv = grid.inverse().expect("invertible");
    let mut data = Vec::with_capacity(w * h * 3);
    for y in 0..h {
        for x in 0..w {
            let [u, v] = inv.apply([x as f64, y as f64]).unwrap_or([-9.0, -9.0]);
            let (du, dv) = (u - u.round(), v - v.round());
            let on = (-0.5..18.5).contains(&u) && (-0.5..18.5).contains(&v);
            let stone = ((u.round() as i64 * 7 + v.round() as i64 * 3) % 5) as u8;
            let rgb = if on && du.hypot(dv) < 0.45 && stone < 2 {
                if stone == 0 {
                    [20, 20, 25]
                } else {
                    [230, 230, 225]
                }
            } else if on && (du.abs() < 0.05 || dv.abs() < 0.05) {
                [60, 45, 30]
            } else {
                [200, 160, 100]
            };
            data.extend_from_slice(&rgb);
        }
    }
    let frame = Frame::new(w, h, PixelFormat::Rgb, data).expect("frame");
    let board = FoundBoard {
        size: BoardSize::square(19).expect("19"),
        corners,
        grid,
        score: 1.0,
    };
    (frame, board)
}

fn classify(c: &mut Criterion) {
    let (frame, board) = scene();
    let mut out = BoardReading::unseen(board.size);
    let mut reader = StoneReader::new().expect("the committed model");
    reader.read_into(&frame, &board, &mut out);
    c.bench_function("read 361 points (cnn)", |b| {
        b.iter(|| reader.read_into(&frame, &board, &mut out))
    });
    c.bench_function("rectify and correct 361 points", |b| {
        b.iter(|| reader.prepare(&frame, &board))
    });
    if let Some(path) = std::env::var_os("TENGEN_STONES_ONNX") {
        let bytes = std::fs::read(&path).expect("the candidate network");
        let mut other = StoneReader::from_onnx(&bytes).expect("a network of the same shape");
        other.read_into(&frame, &board, &mut out);
        c.bench_function("read 361 points (candidate)", |b| {
            b.iter(|| other.read_into(&frame, &board, &mut out))
        });
    }
    let mut classical = StoneReader::classical();
    c.bench_function("read 361 points (classical)", |b| {
        b.iter(|| classical.read_into(&frame, &board, &mut out))
    });
}

criterion_group!(benches, classify);
criterion_main!(benches);
