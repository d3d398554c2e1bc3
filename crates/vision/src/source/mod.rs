//! Where frames come from: one trait, offline sources (an image file, a folder of frames)
//! and live ones (a V4L2 camera, an MJPEG stream over HTTP) that always hand out the newest
//! frame, never a queue of stale ones.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::frame::FrameError;

mod file;
#[cfg(feature = "gstreamer")]
pub mod gst;
mod latest;
pub mod mjpeg_http;
pub mod v4l;

pub use file::{read_image, read_image_within, FrameFolder, ImageFile};
#[cfg(feature = "gstreamer")]
pub use gst::GstSource;
pub use latest::{Grabber, Latest};
pub use mjpeg_http::MjpegHttp;
pub use v4l::{Camera, CameraSettings};

use crate::frame::Frame;

/// Why a source could not give a frame.
#[derive(Debug, Error)]
pub enum SourceError {
    /// A file or folder could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file was read but is not a frame.
    #[error("{path} is not a usable image")]
    Frame {
        /// The file.
        path: PathBuf,
        /// Why it is not a frame.
        #[source]
        source: FrameError,
    },
    /// A live source sent bytes that are not a frame (a truncated or corrupt JPEG); the next
    /// frame may be fine.
    #[error("bad frame from {origin}")]
    BadFrame {
        /// The camera or URL.
        origin: String,
        /// Why it is not a frame.
        #[source]
        source: FrameError,
    },
    /// A live source sent nothing for this long.
    #[error("{origin}: no frame for {:.1} s (stalled)", .after.as_secs_f64())]
    Stalled {
        /// The camera or URL.
        origin: String,
        /// How long it has been silent.
        after: Duration,
    },
    /// A network stream could not be reached or was cut; it is reconnected on the next call.
    #[error("{origin}: {reason}")]
    Disconnected {
        /// The URL.
        origin: String,
        /// What happened.
        reason: String,
    },
    /// A server answered, but not with a stream of JPEG frames.
    #[error("{origin}: not an MJPEG stream ({reason})")]
    NotMjpeg {
        /// The URL.
        origin: String,
        /// What was wrong.
        reason: String,
    },
    /// A camera device is missing or was unplugged; it is reopened on the next call.
    #[error("camera {path} is not there (unplugged?)")]
    NoDevice {
        /// The device node.
        path: PathBuf,
    },
    /// A camera device failed.
    #[error("camera {path}: {what}")]
    Device {
        /// The device node.
        path: PathBuf,
        /// The operation that failed.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A camera offers no format we can read.
    #[error("camera {path}: {reason}")]
    Unsupported {
        /// The device node.
        path: PathBuf,
        /// What is missing.
        reason: String,
    },
    /// A GStreamer pipeline does not parse, does not start or failed while running.
    #[error("{origin}: {reason}")]
    Pipeline {
        /// The pipeline.
        origin: String,
        /// GStreamer's complaint.
        reason: String,
    },
    /// A GStreamer pipeline names an element that is not installed (`nvarguscamerasrc`
    /// off a Jetson, a missing plugin package).
    #[error("{origin}: no GStreamer element {element} (plugin not installed?)")]
    MissingElement {
        /// The pipeline.
        origin: String,
        /// The element's name.
        element: String,
    },
    /// This build cannot read such a source (a cargo feature was left out).
    #[error("{origin}: {reason}")]
    NotBuilt {
        /// The source as given.
        origin: String,
        /// What the build lacks.
        reason: String,
    },
    /// The source was given in a form we do not understand.
    #[error("{0}")]
    BadSpec(String),
}

impl SourceError {
    /// A one-line status for people, with the underlying cause.
    pub fn status(&self) -> String {
        let mut s = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            s.push_str(": ");
            s.push_str(&c.to_string());
            cause = c.source();
        }
        s
    }
}

/// Something that yields frames, newest last; `Ok(None)` once it has no more. Live sources
/// never end: an error is a status (stalled, unplugged, a bad frame) and the next call
/// tries again.
pub trait FrameSource {
    /// The next frame, `Ok(None)` at the end.
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError>;
}

/// Where to read frames from, parsed from one string: `http://…` is an MJPEG stream,
/// `/dev/…` a V4L2 camera, `gst:…` a GStreamer pipeline, `csi` (or `csi:N`) a Jetson's
/// CSI camera, a folder its frames in order, anything else one image file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceSpec {
    /// One image file.
    Image(PathBuf),
    /// A folder of frames.
    Folder(PathBuf),
    /// An MJPEG stream over HTTP.
    Http(String),
    /// A V4L2 camera device node.
    Device(PathBuf),
    /// A GStreamer pipeline without its sink (an appsink taking RGB is added).
    Gst(String),
    /// A Jetson CSI camera by its sensor id, through `nvarguscamerasrc`.
    Csi(u32),
}

impl SourceSpec {
    /// Reads a source from its text (looking at the file system to tell folders from files).
    pub fn parse(text: &str) -> Result<SourceSpec, SourceError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(SourceError::BadSpec("an empty camera source".into()));
        }
        if t.starts_with("http://") {
            return Ok(SourceSpec::Http(t.to_string()));
        }
        if t.contains("://") {
            return Err(SourceError::BadSpec(format!(
                "{t}: only http:// streams are read (no TLS, no RTSP)"
            )));
        }
        if let Some(p) = t.strip_prefix("gst:") {
            let p = p.trim();
            if p.is_empty() {
                return Err(SourceError::BadSpec("gst: without a pipeline".into()));
            }
            if p.contains("appsink") {
                return Err(SourceError::BadSpec(format!(
                    "{t}: leave the appsink out, it is added"
                )));
            }
            return Ok(SourceSpec::Gst(p.to_string()));
        }
        if t == "csi" {
            return Ok(SourceSpec::Csi(0));
        }
        if let Some(n) = t.strip_prefix("csi:") {
            return n.trim().parse().map(SourceSpec::Csi).map_err(|_| {
                SourceError::BadSpec(format!("{t}: a CSI sensor is a number, e.g. csi:0"))
            });
        }
        let path = PathBuf::from(t);
        if t.starts_with("/dev/") {
            Ok(SourceSpec::Device(path))
        } else if path.is_dir() {
            Ok(SourceSpec::Folder(path))
        } else {
            Ok(SourceSpec::Image(path))
        }
    }

    /// Whether frames come live (and should be taken as they arrive) rather than from files.
    pub fn is_live(&self) -> bool {
        matches!(
            self,
            SourceSpec::Http(_) | SourceSpec::Device(_) | SourceSpec::Gst(_) | SourceSpec::Csi(_)
        )
    }

    /// Opens the source. Live sources capture on a thread of their own and wait at most
    /// `stall` for a frame; a camera that is not there yet is an error at the first frame,
    /// not here, so a daemon can start before it is plugged in.
    pub fn open(
        &self,
        camera: &CameraSettings,
        stall: Duration,
    ) -> Result<Box<dyn FrameSource + Send>, SourceError> {
        let limits = camera.frame_limits;
        Ok(match self {
            SourceSpec::Image(p) => Box::new(ImageFile::new(p.clone()).with_limits(limits)),
            SourceSpec::Folder(p) => Box::new(FrameFolder::open(p)?.with_limits(limits)),
            SourceSpec::Http(url) => Box::new(Latest::spawn(
                MjpegHttp::new(url, stall)?.with_limits(limits),
                stall,
            )),
            SourceSpec::Device(p) => Box::new(Latest::spawn(
                Camera::new(p.clone(), camera.clone(), stall),
                stall,
            )),
            SourceSpec::Gst(p) => open_gst(p, stall, limits)?,
            SourceSpec::Csi(sensor) => open_gst(&csi_pipeline(*sensor, camera), stall, limits)?,
        })
    }
}

/// The pipeline a Jetson's CSI camera is read through: the ISP's NVMM buffers at the asked
/// size and rate, copied to system memory by `nvvidconv` (which cannot give RGB, so BGRx).
pub fn csi_pipeline(sensor: u32, camera: &CameraSettings) -> String {
    format!(
        "nvarguscamerasrc sensor-id={sensor} ! \
         video/x-raw(memory:NVMM),width={},height={},framerate={}/1 ! \
         nvvidconv ! video/x-raw,format=BGRx",
        camera.width,
        camera.height,
        camera.fps.max(1)
    )
}

/// `pipeline` ending in an appsink called `sink` that takes RGB and keeps only the newest
/// frame (a slow reader drops frames rather than queueing them); `videoconvert` and RGB
/// caps go before it unless the pipeline already ends in RGB caps (two caps in a row do
/// not parse).
pub fn pipeline_with_sink(pipeline: &str, sink: &str) -> String {
    let last = pipeline.rsplit('!').next().unwrap_or("").replace(' ', "");
    let rgb = last.starts_with("video/x-raw")
        && (last.contains("format=RGB,") || last.ends_with("format=RGB"));
    let convert = if rgb {
        ""
    } else {
        " ! videoconvert ! video/x-raw,format=RGB"
    };
    format!("{pipeline}{convert} ! appsink name={sink} max-buffers=1 drop=true sync=false")
}

#[cfg(feature = "gstreamer")]
fn open_gst(
    pipeline: &str,
    stall: Duration,
    limits: crate::frame::FrameLimits,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    Ok(Box::new(
        GstSource::new(pipeline, stall)?.with_limits(limits),
    ))
}

#[cfg(not(feature = "gstreamer"))]
fn open_gst(
    pipeline: &str,
    _stall: Duration,
    _limits: crate::frame::FrameLimits,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    Err(SourceError::NotBuilt {
        origin: format!("gst:{pipeline}"),
        reason: "GStreamer sources need tengen built with --features gstreamer".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_told_apart() {
        assert_eq!(
            SourceSpec::parse("http://10.0.0.2:8080/video").unwrap(),
            SourceSpec::Http("http://10.0.0.2:8080/video".into())
        );
        assert_eq!(
            SourceSpec::parse("/dev/video0").unwrap(),
            SourceSpec::Device("/dev/video0".into())
        );
        assert_eq!(
            SourceSpec::parse("/tmp").unwrap(),
            SourceSpec::Folder("/tmp".into())
        );
        assert_eq!(
            SourceSpec::parse("board.jpg").unwrap(),
            SourceSpec::Image("board.jpg".into())
        );
        assert!(SourceSpec::parse("rtsp://cam/1").is_err());
        assert!(SourceSpec::parse("https://cam/1").is_err());
        assert!(SourceSpec::parse("  ").is_err());
        assert_eq!(
            SourceSpec::parse("gst: videotestsrc ").unwrap(),
            SourceSpec::Gst("videotestsrc".into())
        );
        assert!(SourceSpec::parse("gst:").is_err());
        assert!(SourceSpec::parse("gst:videotestsrc ! appsink").is_err());
        assert_eq!(SourceSpec::parse("csi").unwrap(), SourceSpec::Csi(0));
        assert_eq!(SourceSpec::parse("csi:1").unwrap(), SourceSpec::Csi(1));
        assert!(SourceSpec::parse("csi:left").is_err());
        assert!(SourceSpec::parse("csi").unwrap().is_live());
    }

    #[test]
    fn the_sink_converts_only_when_needed() {
        let p = pipeline_with_sink("videotestsrc ! video/x-raw,format=I420", "s");
        assert!(p.contains("format=I420 ! videoconvert ! video/x-raw,format=RGB ! appsink name=s"));
        assert!(p.contains("max-buffers=1 drop=true"));
        let p = pipeline_with_sink("videotestsrc ! video/x-raw, format=RGB", "s");
        assert!(!p.contains("videoconvert"), "{p}");
        assert!(p.ends_with("format=RGB ! appsink name=s max-buffers=1 drop=true sync=false"));
    }

    #[test]
    fn the_csi_shorthand_asks_for_the_configured_mode() {
        let cam = CameraSettings {
            width: 1920,
            height: 1080,
            fps: 30,
            ..CameraSettings::default()
        };
        let p = csi_pipeline(1, &cam);
        assert!(p.starts_with("nvarguscamerasrc sensor-id=1 ! "), "{p}");
        assert!(p.contains("width=1920,height=1080,framerate=30/1"), "{p}");
        assert!(p.contains("nvvidconv"), "{p}");
    }

    #[cfg(not(feature = "gstreamer"))]
    #[test]
    fn without_the_feature_a_pipeline_is_a_clear_error() {
        let spec = SourceSpec::parse("csi").unwrap();
        let e = spec
            .open(&CameraSettings::default(), Duration::from_secs(1))
            .err()
            .expect("no GStreamer in this build");
        assert!(matches!(e, SourceError::NotBuilt { .. }), "{e:?}");
        assert!(e.to_string().contains("--features gstreamer"), "{e}");
    }
}
