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

/// `tengen vision read` with its arguments; (stdout, whether it exited successfully).
fn read(args: &[&str]) -> (String, bool) {
    let out = tengen()
        .args(["vision", "read"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out.status.success())
}

#[test]
fn bad_input_to_read_is_a_status_line_and_an_unseen_board() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08, 0x01, 0x02]).unwrap();
    let black = dir.path().join("black.png");
    let frame = tengen_vision::Frame::filled_grey(640, 480, 0).unwrap();
    std::fs::write(&black, frame.to_png().unwrap()).unwrap();
    let cases = [
        (cut.to_str().unwrap().to_string(), "truncated JPEG"),
        (black.to_str().unwrap().to_string(), "no board"),
        ("/dev/video-tengen-none".to_string(), "is not there"),
    ];
    for (source, says) in cases {
        let (text, ok) = read(&[&source, "--frames", "2", "--stall-ms", "300"]);
        assert!(ok, "{source}: {text}");
        let status = text.lines().next().unwrap_or_default();
        assert!(status.starts_with("status: "), "{source}: {text}");
        assert!(status.contains(says), "{source}: {status}");
        assert!(
            status.ends_with("board unseen") || status.ends_with("unseen"),
            "{status}"
        );
        // No stone on any board printed (the status line names paths, which may hold X or O).
        let boards: String = text.lines().filter(|l| !l.starts_with("status:")).collect();
        assert!(
            !boards.contains('X') && !boards.contains('O'),
            "{source}: {text}"
        );
    }
}

#[test]
fn a_stalled_stream_is_reported_not_waited_on() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/video", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            // Headers, then silence with the connection held open.
            let _ = s.write_all(
                b"HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=f\r\n\r\n",
            );
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_secs(10));
                drop(s);
            });
        }
    });
    let start = std::time::Instant::now();
    let (text, ok) = read(&[&url, "--frames", "2", "--stall-ms", "300"]);
    assert!(ok);
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    assert!(text.contains("stalled"), "{text}");
    assert!(text.contains("board unseen"), "{text}");
}

#[test]
fn reads_the_stones_of_a_webcam_frame() {
    let Some(photo) = shared_path(
        "tengen vision read",
        "camera/gomrade/testing_sequence/11.jpg",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let overlay = dir.path().join("read.png");
    let (text, ok) = read(&[
        photo.to_str().unwrap(),
        "--overlay",
        overlay.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let label = std::fs::read_to_string(photo.with_extension("txt")).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("board 19x19"))
        .skip(1)
        .take(19)
        .collect();
    assert_eq!(rows.len(), 19, "{text}");
    // Every point read agrees with the label; unseen points are allowed.
    for (row, want) in rows.iter().zip(label.lines()) {
        for (got, want) in row.chars().zip(want.split_whitespace()) {
            let want = match want {
                "B" => 'X',
                "W" => 'O',
                _ => '.',
            };
            assert!(got == '?' || got == want, "{row} against {want}");
        }
    }
    assert!(std::fs::read(&overlay).unwrap().starts_with(b"\x89PNG"));
}
