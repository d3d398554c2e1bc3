//! `tengen vision find`: the board found in a real photo, and clear errors for bad files.

use std::process::Command;

use tengen_test_support::shared_path;

fn tengen() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
}

#[test]
fn unreadable_and_truncated_images_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jpg");
    let out = tengen()
        .args(["vision", "find"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));

    // The start of a JPEG (its markers, no end): a cut-off file.
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 0x01, 0x02]).unwrap();
    let out = tengen()
        .args(["vision", "find"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a usable image"), "{err}");
}

#[test]
fn finds_the_board_in_a_webcam_frame_and_draws_it() {
    let Some(photo) = shared_path(
        "tengen vision find",
        "camera/gomrade/testing_sequence/0.jpg",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("overlay.png");
    let out = tengen()
        .args(["vision", "find"])
        .arg(&photo)
        .arg("--overlay")
        .arg(&overlay)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("board 19x19 score "), "{text}");
    // The labelled top-left intersection is at (407, 45); the line is within a quarter
    // spacing (about 8 px) of it.
    let tl: Vec<f64> = text
        .lines()
        .find_map(|l| l.strip_prefix("top-left "))
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    assert!((tl[0] - 407.0).hypot(tl[1] - 45.0) < 8.0, "{tl:?}");
    assert!(std::fs::read(&overlay).unwrap().starts_with(b"\x89PNG"));
}
