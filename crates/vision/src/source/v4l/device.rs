//! An open V4L2 capture device: format set, buffers mapped, streaming.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};

use super::format::{choose_mode, yuyv_to_rgb, Mode, PixelCode};
use super::sys::{self, zeroed};
use super::CameraSettings;
use crate::frame::Frame;
use crate::source::SourceError;

/// Buffers asked for: enough for the driver to keep filling while we read one.
const BUFFERS: u32 = 4;

/// One driver buffer mapped into our memory.
struct Mapped {
    ptr: NonNull<std::ffi::c_void>,
    len: usize,
}

/// A camera streaming into mapped buffers; streaming stops and the buffers are unmapped
/// when it is dropped.
pub struct Device {
    path: PathBuf,
    file: File,
    mode: Mode,
    stride: usize,
    buffers: Vec<Mapped>,
    streaming: bool,
}

// SAFETY: the mapped buffers belong to this device alone and are only read through it.
unsafe impl Send for Device {}

/// Errors meaning the device is gone rather than failing.
fn is_gone(e: Errno) -> bool {
    matches!(e, Errno::ENODEV | Errno::ENOENT | Errno::ENXIO | Errno::EIO)
}

impl Device {
    /// Opens the camera and starts streaming in the offered mode closest to `settings`.
    pub fn open(path: &Path, settings: &CameraSettings) -> Result<Device, SourceError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(path)
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => SourceError::NoDevice {
                    path: path.to_path_buf(),
                },
                _ => SourceError::Device {
                    path: path.to_path_buf(),
                    what: "cannot open".into(),
                    source,
                },
            })?;
        let fd = file.as_raw_fd();
        let fail = |what: &str, e: Errno| {
            if is_gone(e) {
                SourceError::NoDevice {
                    path: path.to_path_buf(),
                }
            } else {
                SourceError::Device {
                    path: path.to_path_buf(),
                    what: what.into(),
                    source: std::io::Error::from(e),
                }
            }
        };
        let mut cap: sys::Capability = zeroed();
        // SAFETY: `cap` is a valid, writable VIDIOC_QUERYCAP structure for this call.
        unsafe { sys::querycap(fd, &mut cap) }.map_err(|e| fail("not a V4L2 device", e))?;
        let caps = if cap.capabilities & sys::CAP_DEVICE_CAPS != 0 {
            cap.device_caps
        } else {
            cap.capabilities
        };
        if caps & sys::CAP_VIDEO_CAPTURE == 0 || caps & sys::CAP_STREAMING == 0 {
            return Err(SourceError::Unsupported {
                path: path.to_path_buf(),
                reason: "not a streaming video capture device (try another /dev/videoN)".into(),
            });
        }
        let offered = offered_modes(fd, settings);
        let mode = choose_mode(&offered, settings.width, settings.height, settings.format)
            .ok_or_else(|| SourceError::Unsupported {
                path: path.to_path_buf(),
                reason: format!(
                    "no {:?} mode among the camera's formats (MJPEG or YUYV needed)",
                    settings.format
                ),
            })?;
        let mut fmt: sys::Format = zeroed();
        fmt.kind = sys::BUF_TYPE_CAPTURE;
        fmt.pix.width = mode.width;
        fmt.pix.height = mode.height;
        fmt.pix.pixelformat = mode.code.fourcc();
        fmt.pix.field = sys::FIELD_ANY;
        // SAFETY: `fmt` is a valid VIDIOC_S_FMT structure for the capture type.
        unsafe { sys::s_fmt(fd, &mut fmt) }.map_err(|e| fail("cannot set the format", e))?;
        let code =
            PixelCode::of_fourcc(fmt.pix.pixelformat).ok_or_else(|| SourceError::Unsupported {
                path: path.to_path_buf(),
                reason: "the driver changed the pixel format to one we do not read".into(),
            })?;
        let mode = Mode {
            code,
            width: fmt.pix.width,
            height: fmt.pix.height,
        };
        if settings.fps > 0 {
            let mut parm: sys::StreamParm = zeroed();
            parm.kind = sys::BUF_TYPE_CAPTURE;
            parm.capture.timeperframe = [1, settings.fps];
            // SAFETY: `parm` is a valid VIDIOC_S_PARM structure; a camera that cannot set
            // its rate keeps its own, which is fine.
            if let Err(e) = unsafe { sys::s_parm(fd, &mut parm) } {
                log::debug!("camera {}: frame rate not set: {e}", path.display());
            }
        }
        let mut dev = Device {
            path: path.to_path_buf(),
            file,
            mode,
            stride: fmt.pix.bytesperline as usize,
            buffers: Vec::new(),
            streaming: false,
        };
        dev.start().map_err(|(what, e)| fail(what, e))?;
        Ok(dev)
    }

    /// The mode streamed.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Requests, maps and queues the buffers, then starts streaming.
    fn start(&mut self) -> Result<(), (&'static str, Errno)> {
        let fd = self.file.as_raw_fd();
        let mut req: sys::RequestBuffers = zeroed();
        req.count = BUFFERS;
        req.kind = sys::BUF_TYPE_CAPTURE;
        req.memory = sys::MEMORY_MMAP;
        // SAFETY: `req` is a valid VIDIOC_REQBUFS structure.
        unsafe { sys::reqbufs(fd, &mut req) }.map_err(|e| ("cannot get buffers", e))?;
        if req.count == 0 {
            return Err(("the driver gave no buffers", Errno::ENOMEM));
        }
        for index in 0..req.count {
            let mut buf = self.buffer(index);
            // SAFETY: `buf` is a valid VIDIOC_QUERYBUF structure for a requested buffer.
            unsafe { sys::querybuf(fd, &mut buf) }.map_err(|e| ("cannot query a buffer", e))?;
            let len = std::num::NonZeroUsize::new(buf.length as usize)
                .ok_or(("a buffer has no length", Errno::EINVAL))?;
            // SAFETY: maps the driver's buffer at the offset it gave; unmapped on drop.
            let ptr = unsafe {
                mmap(
                    None,
                    len,
                    ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                    MapFlags::MAP_SHARED,
                    self.file.as_fd(),
                    // SAFETY: for MMAP buffers the driver sets the `offset` member.
                    i64::from(buf.m.offset),
                )
            }
            .map_err(|e| ("cannot map a buffer", e))?;
            self.buffers.push(Mapped {
                ptr,
                len: len.get(),
            });
            // SAFETY: queues the buffer just mapped.
            unsafe { sys::qbuf(fd, &mut buf) }.map_err(|e| ("cannot queue a buffer", e))?;
        }
        let kind = sys::BUF_TYPE_CAPTURE as nix::libc::c_int;
        // SAFETY: VIDIOC_STREAMON takes a pointer to the buffer type.
        unsafe { sys::streamon(fd, &kind) }.map_err(|e| ("cannot start streaming", e))?;
        self.streaming = true;
        Ok(())
    }

    fn buffer(&self, index: u32) -> sys::Buffer {
        let mut buf: sys::Buffer = zeroed();
        buf.index = index;
        buf.kind = sys::BUF_TYPE_CAPTURE;
        buf.memory = sys::MEMORY_MMAP;
        buf
    }

    /// Waits for a frame (at most `timeout`), takes the newest one ready and converts it.
    pub fn next(&self, timeout: Duration) -> Result<Frame, SourceError> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let fd = self.file.as_raw_fd();
        let fail = |what: &str, e: Errno| {
            if is_gone(e) {
                SourceError::NoDevice {
                    path: self.path.clone(),
                }
            } else {
                SourceError::Device {
                    path: self.path.clone(),
                    what: what.into(),
                    source: std::io::Error::from(e),
                }
            }
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        let mut fds = [PollFd::new(self.file.as_fd(), PollFlags::POLLIN)];
        let ready = poll(
            &mut fds,
            PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
        )
        .map_err(|e| fail("cannot wait for a frame", e))?;
        let revents = fds[0].revents().unwrap_or(PollFlags::empty());
        if revents.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL) {
            return Err(SourceError::NoDevice {
                path: self.path.clone(),
            });
        }
        if ready == 0 {
            return Err(SourceError::Stalled {
                origin: self.path.display().to_string(),
                after: timeout,
            });
        }
        // Dequeue every filled buffer, keep the newest, give the older ones straight back.
        let mut newest: Option<sys::Buffer> = None;
        loop {
            let mut buf = self.buffer(0);
            // SAFETY: `buf` is a valid VIDIOC_DQBUF structure; the fd is non-blocking.
            match unsafe { sys::dqbuf(fd, &mut buf) } {
                Ok(_) => {
                    if let Some(mut old) = newest.replace(buf) {
                        // SAFETY: requeues a buffer we dequeued.
                        unsafe { sys::qbuf(fd, &mut old) }
                            .map_err(|e| fail("cannot requeue a buffer", e))?;
                    }
                }
                Err(Errno::EAGAIN) => break,
                Err(e) => return Err(fail("cannot take a frame", e)),
            }
        }
        let Some(mut buf) = newest else {
            return Err(SourceError::Stalled {
                origin: self.path.display().to_string(),
                after: timeout,
            });
        };
        let frame = self.convert(&buf);
        // SAFETY: gives the buffer back to the driver once its bytes are converted.
        unsafe { sys::qbuf(fd, &mut buf) }.map_err(|e| fail("cannot requeue a buffer", e))?;
        frame.map_err(|source| SourceError::BadFrame {
            origin: self.path.display().to_string(),
            source,
        })
    }

    fn convert(&self, buf: &sys::Buffer) -> Result<Frame, crate::frame::FrameError> {
        let map = &self.buffers[(buf.index as usize).min(self.buffers.len() - 1)];
        let used = (buf.bytesused as usize).min(map.len);
        // SAFETY: the buffer is mapped for `map.len` bytes and dequeued, so the driver is
        // not writing it while we read.
        let bytes = unsafe { std::slice::from_raw_parts(map.ptr.as_ptr().cast::<u8>(), used) };
        match self.mode.code {
            PixelCode::Mjpeg => Frame::decode(bytes),
            PixelCode::Yuyv => yuyv_to_rgb(
                bytes,
                self.mode.width as usize,
                self.mode.height as usize,
                self.stride,
            ),
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        let fd = self.file.as_raw_fd();
        if self.streaming {
            let kind = sys::BUF_TYPE_CAPTURE as nix::libc::c_int;
            // SAFETY: VIDIOC_STREAMOFF takes a pointer to the buffer type.
            let _ = unsafe { sys::streamoff(fd, &kind) };
        }
        for m in self.buffers.drain(..) {
            // SAFETY: each mapping was made by `start` with this length and is unused now.
            let _ = unsafe { munmap(m.ptr, m.len) };
        }
    }
}

/// Every (format, size) the camera offers in a format we read; a size range counts as the
/// wanted size clamped into it.
fn offered_modes(fd: i32, settings: &CameraSettings) -> Vec<Mode> {
    let mut out = Vec::new();
    for index in 0..64 {
        let mut desc: sys::FmtDesc = zeroed();
        desc.index = index;
        desc.kind = sys::BUF_TYPE_CAPTURE;
        // SAFETY: `desc` is a valid VIDIOC_ENUM_FMT structure.
        if unsafe { sys::enum_fmt(fd, &mut desc) }.is_err() {
            break;
        }
        let Some(code) = PixelCode::of_fourcc(desc.pixelformat) else {
            continue;
        };
        for i in 0..256 {
            let mut size: sys::FrmSizeEnum = zeroed();
            size.index = i;
            size.pixel_format = desc.pixelformat;
            // SAFETY: `size` is a valid VIDIOC_ENUM_FRAMESIZES structure.
            if unsafe { sys::enum_framesizes(fd, &mut size) }.is_err() {
                break;
            }
            if size.kind == sys::FRMSIZE_DISCRETE {
                out.push(Mode {
                    code,
                    width: size.size[0],
                    height: size.size[1],
                });
            } else {
                let [min_w, max_w, step_w, min_h, max_h, step_h] = size.size;
                let snap = |want: u32, min: u32, max: u32, step: u32| {
                    let v = want.clamp(min, max.max(min));
                    min + (v - min) / step.max(1) * step.max(1)
                };
                out.push(Mode {
                    code,
                    width: snap(settings.width, min_w, max_w, step_w),
                    height: snap(settings.height, min_h, max_h, step_h),
                });
                break;
            }
        }
    }
    out
}
