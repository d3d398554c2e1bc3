//! Where frames come from: one trait, offline sources (an image file, a folder of frames)
//! and live ones (a V4L2 camera, an MJPEG stream over HTTP) that always hand out the newest
//! frame, never a queue of stale ones.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use crate::frame::FrameError;

mod file;
mod latest;
pub mod mjpeg_http;
pub mod v4l;

pub use file::{read_image, FrameFolder, ImageFile};
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
/// `/dev/…` a V4L2 camera, a folder its frames in order, anything else one image file.
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
        matches!(self, SourceSpec::Http(_) | SourceSpec::Device(_))
    }

    /// Opens the source. Live sources capture on a thread of their own and wait at most
    /// `stall` for a frame; a camera that is not there yet is an error at the first frame,
    /// not here, so a daemon can start before it is plugged in.
    pub fn open(
        &self,
        camera: &CameraSettings,
        stall: Duration,
    ) -> Result<Box<dyn FrameSource + Send>, SourceError> {
        Ok(match self {
            SourceSpec::Image(p) => Box::new(ImageFile::new(p.clone())),
            SourceSpec::Folder(p) => Box::new(FrameFolder::open(p)?),
            SourceSpec::Http(url) => Box::new(Latest::spawn(MjpegHttp::new(url, stall)?, stall)),
            SourceSpec::Device(p) => Box::new(Latest::spawn(
                Camera::new(p.clone(), camera.clone(), stall),
                stall,
            )),
        })
    }
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
    }
}
