//! The tracking path on a real 1280x720 webcam frame (../shared/camera/gomrade): one
//! frame followed from the board found in the last one, as a live camera runs it.

use criterion::{criterion_group, criterion_main, Criterion};
use tengen_test_support::shared_path;
use tengen_vision::read_image;
use tengen_vision::track::{TrackStatus, Tracker};

fn tracking(c: &mut Criterion) {
    let Some(dir) = shared_path("bench track", "camera/gomrade/testing_sequence") else {
        return;
    };
    let a = read_image(&dir.join("5.jpg")).expect("frame 5");
    let b = read_image(&dir.join("6.jpg")).expect("frame 6");
    let mut tracker = Tracker::new();
    assert!(tracker.update(&a).board.is_some(), "no board in frame 5");
    c.bench_function("track 1280x720 frame", |bench| {
        bench.iter(|| {
            let t = tracker.update(&b);
            assert_eq!(t.status, TrackStatus::Tracking);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = tracking
}
criterion_main!(benches);
