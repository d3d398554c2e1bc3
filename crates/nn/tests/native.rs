//! The native backend against tract on g170-b6c96 with boards smaller than the buffer
//! (masked graphs, which the golden positions do not cover), batches spread over two
//! threads against single rows, and bad input as typed errors. KataGo's own numbers are
//! checked in `golden_rawnn.rs`.

use std::sync::Arc;

use tengen_nn::backend::native::{NativeBackend, NativeOptions};
use tengen_nn::backend::tract::{TractBackend, TractOptions};
use tengen_nn::backend::{Backend, BackendError, BatchInput, BatchOutput, IoShape};
use tengen_nn::model::{load_model, ModelDesc};
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::LoadedModel;

fn b6c96() -> Option<ModelDesc> {
    let path = tengen_test_support::shared_path("native backend", "models/g170-b6c96.bin.gz")?;
    Some(load_model(&path).expect("model loads"))
}

/// Random 0/1 features on `rows` positions; row `r` is a board of `sizes[r % len]` in the
/// buffer's corner (channel 0 and the mask mark it), the global inputs random.
fn inputs(
    shape: &IoShape,
    rows: usize,
    sizes: &[usize],
    seed: u64,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let area = shape.area();
    let mut spatial = Vec::new();
    let mut mask = Vec::new();
    for r in 0..rows {
        let n = sizes[r % sizes.len()];
        let m: Vec<f32> = (0..area)
            .map(|i| f32::from(i / shape.x_len < n && i % shape.x_len < n))
            .collect();
        spatial.extend_from_slice(&m);
        for _ in 1..shape.spatial_channels {
            spatial.extend(m.iter().map(|&on| on * f32::from(rng.u8(..) < 40)));
        }
        mask.extend_from_slice(&m);
    }
    let global = (0..rows * shape.global_channels)
        .map(|_| f32::from(rng.bool()) * 0.5)
        .collect();
    (spatial, global, mask)
}

fn run(
    backend: &dyn Backend,
    spatial: &[f32],
    global: &[f32],
    mask: &[f32],
    rows: usize,
) -> BatchOutput {
    let mut out = BatchOutput::new();
    let input = BatchInput {
        rows,
        spatial,
        global,
        meta: None,
        mask,
    };
    backend.evaluate(&input, &mut out).expect("evaluates");
    out
}

/// Largest difference over every output, and over on-board policy and ownership only.
fn max_diff(a: &BatchOutput, b: &BatchOutput, mask: &[f32], area: usize) -> f32 {
    let mut worst = 0.0f32;
    let mut cmp = |x: &[f32], y: &[f32], per_point: bool| {
        assert_eq!(x.len(), y.len());
        for (i, (p, q)) in x.iter().zip(y).enumerate() {
            if per_point && mask[(i / (x.len() / mask.len() * area)) * area + i % area] == 0.0 {
                continue;
            }
            worst = worst.max((p - q).abs());
        }
    };
    cmp(&a.policy_pass, &b.policy_pass, false);
    cmp(&a.value, &b.value, false);
    cmp(&a.score_value, &b.score_value, false);
    cmp(&a.policy, &b.policy, true);
    cmp(&a.ownership, &b.ownership, true);
    worst
}

#[test]
fn agrees_with_tract_on_masked_boards_and_batches() {
    let Some(desc) = b6c96() else { return };
    for (buffer, sizes) in [
        (19, vec![19, 13, 9, 7]),
        (13, vec![13, 11]),
        (9, vec![9, 5]),
    ] {
        let proto = build_graph(&desc, &BuildOptions::new(buffer, buffer)).expect("graph builds");
        let model = LoadedModel::from_proto(proto).expect("contract");
        let tract = TractBackend::new(&model, TractOptions::default()).expect("tract");
        let native = NativeBackend::new(
            &desc,
            &model.metadata,
            NativeOptions {
                threads: 2,
                max_batch: 4,
                ..NativeOptions::default()
            },
        )
        .expect("native");
        let shape = *native.shape();
        assert_eq!(&shape, tract.shape());
        let rows = 4;
        let (spatial, global, mask) = inputs(&shape, rows, &sizes, buffer as u64);
        let want = run(&tract, &spatial, &global, &mask, rows);
        let got = run(&native, &spatial, &global, &mask, rows);
        let worst = max_diff(&got, &want, &mask, shape.area());
        // Logits of order 1-10: fp32 rounding in a different order, nothing more.
        assert!(
            worst < 2e-3,
            "{buffer}x{buffer} buffer, boards {sizes:?}: off by {worst}"
        );
        for r in 0..rows {
            let one = |v: &[f32], per: usize| v[r * per..(r + 1) * per].to_vec();
            let single = run(
                &native,
                &one(&spatial, shape.spatial_len()),
                &one(&global, shape.global_channels),
                &one(&mask, shape.area()),
                1,
            );
            assert_eq!(single.policy, one(&got.policy, shape.policy_len()));
            assert_eq!(single.value, one(&got.value, shape.value_channels));
        }
    }
}

#[test]
fn threads_share_one_backend() {
    let Some(desc) = b6c96() else { return };
    let proto = build_graph(&desc, &BuildOptions::new(9, 9).exact(true)).expect("graph builds");
    let model = LoadedModel::from_proto(proto).expect("contract");
    let native = Arc::new(
        NativeBackend::new(
            &desc,
            &model.metadata,
            NativeOptions {
                threads: 1,
                max_batch: 1,
                ..NativeOptions::default()
            },
        )
        .expect("native"),
    );
    let shape = *native.shape();
    let (spatial, global, mask) = inputs(&shape, 1, &[9], 5);
    let want = run(native.as_ref(), &spatial, &global, &mask, 1);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..5 {
                    let got = run(native.as_ref(), &spatial, &global, &mask, 1);
                    assert_eq!(got.policy, want.policy);
                    assert_eq!(got.value, want.value);
                }
            });
        }
    });
}

#[test]
fn bad_batches_are_typed_errors() {
    let Some(desc) = b6c96() else { return };
    let proto = build_graph(&desc, &BuildOptions::new(9, 9).exact(true)).expect("graph builds");
    let model = LoadedModel::from_proto(proto).expect("contract");
    let native = NativeBackend::new(
        &desc,
        &model.metadata,
        NativeOptions {
            threads: 1,
            max_batch: 2,
            ..NativeOptions::default()
        },
    )
    .expect("native");
    let shape = *native.shape();
    let (spatial, global, mask) = inputs(&shape, 3, &[9], 6);
    let mut out = BatchOutput::new();
    let too_many = BatchInput {
        rows: 3,
        spatial: &spatial,
        global: &global,
        meta: None,
        mask: &mask,
    };
    assert!(matches!(
        native.evaluate(&too_many, &mut out),
        Err(BackendError::BatchSize { rows: 3, max: 2 })
    ));
    let short = BatchInput {
        rows: 1,
        spatial: &spatial[..10],
        global: &global[..shape.global_channels],
        meta: None,
        mask: &mask[..shape.area()],
    };
    assert!(matches!(
        native.evaluate(&short, &mut out),
        Err(BackendError::InputLength {
            name: "InputSpatial",
            ..
        })
    ));
}
