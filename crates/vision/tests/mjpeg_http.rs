//! The MJPEG-over-HTTP source against a real HTTP server on loopback: whole frames, frames
//! without a length, a truncated JPEG, a stall, a disconnect and a server that is not a
//! camera. Every case must end in a frame or a clear error within the timeout.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use tengen_vision::source::{Grabber, MjpegHttp};
use tengen_vision::{FrameSource, Latest, SourceError};

/// A small JPEG whose pixels depend on `seed`.
fn jpeg(seed: u8) -> Vec<u8> {
    let pixels: Vec<u8> = (0..48 * 32 * 3)
        .map(|i| (i as u8).wrapping_mul(seed))
        .collect();
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::jpeg::JpegEncoder::new(&mut out),
        &pixels,
        48,
        32,
        image::ExtendedColorType::Rgb8,
    )
    .unwrap();
    out
}

/// How the server behaves after its headers.
#[derive(Clone, Copy)]
enum Script {
    /// Three frames with Content-Length, then it closes.
    Frames,
    /// Three frames with no Content-Length, then it closes.
    NoLength,
    /// A whole frame, a frame cut short (with a matching length), a whole frame.
    Truncated,
    /// One frame, then nothing while the connection stays open.
    Stall,
    /// One frame, then half of the next, then it closes.
    Disconnect,
    /// A 404 page.
    NotFound,
}

const BOUNDARY: &str = "tengenframe";

fn serve(mut s: TcpStream, script: Script) {
    // Read the request (up to its blank line).
    let mut req = Vec::new();
    let mut byte = [0u8; 1];
    while !req.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
        req.push(byte[0]);
    }
    assert!(req.starts_with(b"GET /video HTTP/1.0\r\n"), "{req:?}");
    if let Script::NotFound = script {
        let _ = s.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Type: text/html\r\n\r\nnope");
        return;
    }
    let _ = write!(
        s,
        "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary={BOUNDARY}\r\n\r\n"
    );
    let part = |s: &mut TcpStream, data: &[u8], with_len: bool| {
        let _ = write!(s, "--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n");
        if with_len {
            let _ = write!(s, "Content-Length: {}\r\n", data.len());
        }
        let _ = s.write_all(b"\r\n");
        let _ = s.write_all(data);
        let _ = s.write_all(b"\r\n");
    };
    match script {
        Script::Frames => (1..=3).for_each(|i| part(&mut s, &jpeg(i), true)),
        Script::NoLength => {
            (1..=3).for_each(|i| part(&mut s, &jpeg(i), false));
            // The last part ends at the closing delimiter.
            let _ = write!(s, "--{BOUNDARY}--\r\n");
        }
        Script::Truncated => {
            part(&mut s, &jpeg(1), true);
            let j = jpeg(2);
            part(&mut s, &j[..j.len() / 2], true);
            part(&mut s, &jpeg(3), true);
        }
        Script::Stall => {
            part(&mut s, &jpeg(1), true);
            std::thread::sleep(Duration::from_secs(3));
        }
        Script::Disconnect => {
            part(&mut s, &jpeg(1), true);
            let j = jpeg(2);
            let _ = write!(s, "--{BOUNDARY}\r\nContent-Length: {}\r\n\r\n", j.len());
            let _ = s.write_all(&j[..j.len() / 2]);
        }
        Script::NotFound => unreachable!(),
    }
}

/// A server on loopback answering every connection with `script`; returns its URL.
fn server(script: Script) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || serve(s, script));
        }
    });
    format!("http://127.0.0.1:{port}/video")
}

fn source(script: Script, timeout_ms: u64) -> MjpegHttp {
    MjpegHttp::new(&server(script), Duration::from_millis(timeout_ms)).unwrap()
}

#[test]
fn frames_with_and_without_lengths_decode_then_the_close_is_reported() {
    for script in [Script::Frames, Script::NoLength] {
        let mut src = source(script, 2000);
        let frames: Vec<_> = (0..3).map(|_| src.grab().unwrap()).collect();
        assert!(frames.iter().all(|f| (f.width(), f.height()) == (48, 32)));
        // Three different frames, in order.
        assert_ne!(frames[0], frames[1]);
        assert_ne!(frames[1], frames[2]);
        let e = src.grab().unwrap_err();
        assert!(matches!(e, SourceError::Disconnected { .. }), "{e:?}");
        // The next grab reconnects and the stream starts again.
        assert_eq!(src.grab().unwrap(), frames[0]);
    }
}

#[test]
fn a_truncated_jpeg_is_a_bad_frame_and_the_stream_goes_on() {
    let mut src = source(Script::Truncated, 2000);
    assert!(src.grab().is_ok());
    let e = src.grab().unwrap_err();
    assert!(matches!(e, SourceError::BadFrame { .. }), "{e:?}");
    assert!(e.status().contains("truncated JPEG"), "{}", e.status());
    assert!(src.grab().is_ok());
}

#[test]
fn a_stalled_stream_is_an_error_within_the_timeout() {
    let mut src = source(Script::Stall, 400);
    assert!(src.grab().is_ok());
    let t = Instant::now();
    let e = src.grab().unwrap_err();
    assert!(matches!(e, SourceError::Stalled { .. }), "{e:?}");
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(350) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert!(e.to_string().contains("stalled"));
}

#[test]
fn a_stream_cut_mid_frame_is_a_disconnect() {
    let mut src = source(Script::Disconnect, 2000);
    assert!(src.grab().is_ok());
    let e = src.grab().unwrap_err();
    assert!(matches!(e, SourceError::Disconnected { .. }), "{e:?}");
}

#[test]
fn a_web_page_is_not_a_camera() {
    let mut src = source(Script::NotFound, 2000);
    let e = src.grab().unwrap_err();
    assert!(matches!(e, SourceError::NotMjpeg { .. }), "{e:?}");
    assert!(e.to_string().contains("404"), "{e}");
}

#[test]
fn nobody_listening_is_a_disconnect_not_a_hang() {
    // A port just freed: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut src = MjpegHttp::new(
        &format!("http://127.0.0.1:{port}/"),
        Duration::from_millis(500),
    )
    .unwrap();
    assert!(matches!(src.grab(), Err(SourceError::Disconnected { .. })));
}

#[test]
fn through_the_capture_thread_a_stall_is_a_status_and_frames_come_back() {
    let mut live = Latest::spawn(source(Script::Stall, 300), Duration::from_millis(600));
    let first = live.next_frame().unwrap().unwrap();
    assert_eq!(first.width(), 48);
    // Then the stream stalls: statuses, never a hang; and after a reconnect, frames again.
    let t = Instant::now();
    let mut saw_stall = false;
    let mut again = false;
    while t.elapsed() < Duration::from_secs(5) {
        match live.next_frame() {
            Err(SourceError::Stalled { .. }) => saw_stall = true,
            Ok(Some(_)) if saw_stall => {
                again = true;
                break;
            }
            _ => {}
        }
    }
    assert!(
        saw_stall && again,
        "stall {saw_stall}, frames again {again}"
    );
}
