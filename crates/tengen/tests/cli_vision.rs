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

/// A PNG that promises `side` x `side` black RGB pixels: small on disk (zeros compress
/// a thousandfold), 3 x side² bytes once decoded.
fn bomb_png(path: &std::path::Path, side: u32) {
    use std::io::Write;
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc.sum().to_be_bytes());
    }
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&side.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let row = vec![0u8; 1 + 3 * side as usize];
    for _ in 0..side {
        z.write_all(&row).unwrap();
    }
    let idat = z.finish().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &idat);
    chunk(&mut png, b"IEND", &[]);
    std::fs::write(path, png).unwrap();
}

/// Runs `tengen vision read` and returns its output and its peak resident memory in MB.
// The child is reaped by wait4 (for its resource usage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn read_measured(args: &[&std::ffi::OsStr]) -> (String, u64) {
    let child = tengen()
        .args(["vision", "read"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as nix::libc::pid_t;
    let mut stdout = child.stdout.unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; `pid` is our own child, not yet
    // reaped (its Child handle was consumed without waiting).
    let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals of the types wait4 writes.
    let reaped = unsafe { nix::libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid);
    (text, usage.ru_maxrss as u64 / 1024)
}

/// The audit's attack: a 13,000 x 13,000 PNG of about half a megabyte, which decoded to
/// 2 GB from a folder of frames. Its header is read and the frame refused before any
/// decoding, whatever the source; a file over the byte limit is not read at all.
#[test]
fn frames_over_the_limits_are_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames).unwrap();
    let bomb = frames.join("1.png");
    bomb_png(&bomb, 13_000);
    let small = std::fs::metadata(&bomb).unwrap().len();
    let one = [bomb.as_os_str(), "--frames".as_ref(), "1".as_ref()];
    let folder = [frames.as_os_str(), "--frames".as_ref(), "1".as_ref()];
    for (what, args) in [("the image", &one[..]), ("a folder of frames", &folder[..])] {
        let (text, peak) = read_measured(args);
        let status = text.lines().next().unwrap_or_default();
        assert!(
            status.contains("13000x13000, over the limit of 64000000 pixels"),
            "{what}: {text}"
        );
        eprintln!("{what}: a {small}-byte PNG of 13,000² pixels refused; peak RSS {peak} MB");
        assert!(peak < 150, "{what}: peak RSS {peak} MB");
    }
    // The byte limit, set low: the file is refused unread.
    let (text, _) = read_measured(&[
        bomb.as_os_str(),
        "--max-frame-bytes".as_ref(),
        "1000".as_ref(),
    ]);
    assert!(text.contains("over the limit of 1000"), "{text}");
}
