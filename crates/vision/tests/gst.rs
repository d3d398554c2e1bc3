//! GStreamer sources for real, through `videotestsrc` (gstreamer1.0-plugins-base).
#![cfg(feature = "gstreamer")]

use std::time::Duration;

use tengen_vision::source::{FrameSource, GstSource, SourceError};
use tengen_vision::{CameraSettings, SourceSpec};

const STALL: Duration = Duration::from_secs(5);

#[test]
fn frames_of_the_asked_size_arrive() {
    let spec =
        SourceSpec::parse("gst:videotestsrc ! video/x-raw,width=322,height=240,framerate=30/1")
            .unwrap();
    let mut src = spec.open(&CameraSettings::default(), STALL).unwrap();
    for _ in 0..3 {
        let f = src
            .next_frame()
            .unwrap()
            .expect("a live source does not end");
        // 322 * 3 is not a multiple of 4: GStreamer pads the rows, the frame must not.
        assert_eq!((f.width(), f.height()), (322, 240));
        assert_eq!(f.data().len(), 322 * 240 * 3);
        // The default test pattern starts with a white bar at the top left.
        assert!(
            f.data()[..3].iter().all(|&c| c > 200),
            "{:?}",
            &f.data()[..3]
        );
    }
}

#[test]
fn a_pipeline_already_in_rgb_is_read_as_is() {
    let mut src = GstSource::new(
        "videotestsrc pattern=black ! video/x-raw,format=RGB,width=64,height=48",
        STALL,
    )
    .unwrap();
    let f = src.next_frame().unwrap().unwrap();
    assert_eq!((f.width(), f.height()), (64, 48));
    assert!(f.data().iter().all(|&c| c < 20));
}

#[test]
fn a_missing_element_is_named() {
    let e = GstSource::new("nosuchcamerasrc ! videoconvert", STALL)
        .err()
        .expect("no such element");
    match &e {
        SourceError::MissingElement { element, .. } => assert_eq!(element, "nosuchcamerasrc"),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("nosuchcamerasrc"), "{e}");
}

#[test]
fn a_broken_pipeline_is_a_pipeline_error() {
    let e = GstSource::new("videotestsrc ! ! !", STALL)
        .err()
        .expect("does not parse");
    assert!(matches!(e, SourceError::Pipeline { .. }), "{e:?}");
}

#[test]
fn the_end_of_stream_is_a_clean_disconnect() {
    let mut src = GstSource::new(
        "videotestsrc num-buffers=4 ! video/x-raw,width=32,height=24",
        STALL,
    )
    .unwrap();
    let mut frames = 0;
    let end = loop {
        match src.next_frame() {
            Ok(Some(_)) => frames += 1,
            Ok(None) => panic!("a live source does not end"),
            Err(e) => break e,
        }
        assert!(frames <= 4, "more frames than were sent");
    };
    assert!(frames >= 1, "no frame before the end");
    assert!(matches!(end, SourceError::Disconnected { .. }), "{end:?}");
    // The next call starts the pipeline again.
    assert!(src.next_frame().unwrap().is_some());
}

#[test]
fn silence_is_a_stall() {
    // A live source that never produces: a frame rate of one per hour.
    let mut src = GstSource::new(
        "videotestsrc is-live=true ! video/x-raw,width=32,height=24,framerate=1/3600",
        Duration::from_millis(300),
    )
    .unwrap();
    // The first frame comes at once; then nothing for an hour.
    let _ = src.next_frame();
    let e = src.next_frame().expect_err("stalled");
    assert!(matches!(e, SourceError::Stalled { .. }), "{e:?}");
}
