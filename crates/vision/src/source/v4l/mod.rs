//! V4L2 cameras (USB webcams): the format and size asked for from the configuration,
//! memory-mapped streaming through raw ioctls, MJPEG decoded in Rust and YUYV converted.
//! A missing or unplugged `/dev/videoN` is [`SourceError::NoDevice`], and the camera is
//! reopened on the next grab, so plugging it back in resumes the stream.

use std::path::PathBuf;
use std::time::Duration;

use super::{Grabber, SourceError};
use crate::frame::Frame;

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod device;
pub mod format;
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod sys;

pub use format::{choose_mode, yuyv_to_rgb, FormatChoice, Mode, PixelCode};

/// What to ask a camera for; it gets the closest it offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CameraSettings {
    /// Wanted width in pixels.
    pub width: u32,
    /// Wanted height in pixels.
    pub height: u32,
    /// Wanted frames per second (the driver may round it).
    pub fps: u32,
    /// Which pixel format to ask for.
    pub format: FormatChoice,
    /// The largest frame any source may hand over (files, folders and streams too).
    pub frame_limits: crate::frame::FrameLimits,
}

impl Default for CameraSettings {
    fn default() -> Self {
        CameraSettings {
            width: 1280,
            height: 720,
            fps: 15,
            format: FormatChoice::Auto,
            frame_limits: crate::frame::FrameLimits::default(),
        }
    }
}

/// A V4L2 camera, opened at the first grab and again after it was lost.
pub struct Camera {
    path: PathBuf,
    settings: CameraSettings,
    timeout: Duration,
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    device: Option<device::Device>,
}

impl Camera {
    /// A camera at `path` (e.g. `/dev/video0`); `timeout` bounds the wait for each frame.
    pub fn new(path: PathBuf, settings: CameraSettings, timeout: Duration) -> Camera {
        Camera {
            path,
            settings,
            timeout,
            #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
            device: None,
        }
    }

    /// The mode the open camera streams in, if it is open.
    pub fn mode(&self) -> Option<Mode> {
        #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
        return self.device.as_ref().map(|d| d.mode());
        #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
        None
    }
}

impl Grabber for Camera {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    fn grab(&mut self) -> Result<Frame, SourceError> {
        let dev = match self.device.take() {
            Some(d) => d,
            None => {
                let d = device::Device::open(&self.path, &self.settings)?;
                let m = d.mode();
                log::info!(
                    "camera {}: {}x{} {:?}",
                    self.path.display(),
                    m.width,
                    m.height,
                    m.code
                );
                d
            }
        };
        match dev.next(self.timeout) {
            Ok(f) => {
                self.device = Some(dev);
                Ok(f)
            }
            // A bad frame or a late one leaves the camera open; a failed device is closed.
            Err(e @ (SourceError::BadFrame { .. } | SourceError::Stalled { .. })) => {
                self.device = Some(dev);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    fn grab(&mut self) -> Result<Frame, SourceError> {
        Err(SourceError::Unsupported {
            path: self.path.clone(),
            reason: "V4L2 cameras are read on 64-bit Linux only".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_device_is_a_clear_error() {
        let mut cam = Camera::new(
            "/dev/video-tengen-none".into(),
            CameraSettings::default(),
            Duration::from_millis(100),
        );
        let e = cam.grab().unwrap_err();
        assert!(matches!(e, SourceError::NoDevice { .. }), "{e:?}");
        assert!(e.to_string().contains("/dev/video-tengen-none"));
        // Still missing on the next try, still no panic.
        assert!(matches!(cam.grab(), Err(SourceError::NoDevice { .. })));
    }

    #[test]
    fn a_file_that_is_not_a_camera_is_refused() {
        let mut cam = Camera::new(
            "/dev/null".into(),
            CameraSettings::default(),
            Duration::from_millis(100),
        );
        let e = cam.grab().unwrap_err();
        assert!(matches!(e, SourceError::Device { .. }), "{e:?}");
    }
}
