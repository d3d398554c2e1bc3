//! Frames from a GStreamer pipeline (a Jetson's CSI camera through `nvarguscamerasrc`, or
//! any pipeline a user writes) that ends in an appsink keeping only the newest frame.

use std::time::Duration;

use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_app as gst_app;

use super::{pipeline_with_sink, FrameSource, SourceError};
use crate::frame::{Frame, PixelFormat};

/// The appsink's name inside the pipeline we build.
const SINK: &str = "tengen_sink";

/// A running pipeline; it is (re)started on the next call after an end of stream or an
/// error, so an unplugged or restarted camera comes back by itself.
pub struct GstSource {
    /// The user's pipeline, without the sink.
    text: String,
    stall: Duration,
    running: Option<Running>,
    limits: crate::frame::FrameLimits,
}

struct Running {
    pipeline: gst::Pipeline,
    sink: gst_app::AppSink,
}

impl Drop for Running {
    fn drop(&mut self) {
        // A pipeline left playing keeps the camera open; failure here changes nothing.
        let _ = self.pipeline.set_state(gst::State::Null);
    }
}

impl GstSource {
    /// Checks that the pipeline parses and its elements exist, then leaves it stopped
    /// until the first frame is asked for.
    pub fn new(text: &str, stall: Duration) -> Result<GstSource, SourceError> {
        let source = GstSource {
            text: text.to_string(),
            stall,
            running: None,
            limits: crate::frame::FrameLimits::default(),
        };
        source.build()?;
        Ok(source)
    }

    /// The same pipeline, its frames within `limits` (pixels; they come decoded).
    pub fn with_limits(mut self, limits: crate::frame::FrameLimits) -> Self {
        self.limits = limits;
        self
    }

    fn origin(&self) -> String {
        format!("gst:{}", self.text)
    }

    /// Parses the pipeline with our sink at its end.
    fn build(&self) -> Result<Running, SourceError> {
        gst::init().map_err(|e| SourceError::Pipeline {
            origin: self.origin(),
            reason: format!("GStreamer does not start: {e}"),
        })?;
        let full = pipeline_with_sink(&self.text, SINK);
        let mut ctx = gst::ParseContext::new();
        let element =
            match gst::parse::launch_full(&full, Some(&mut ctx), gst::ParseFlags::FATAL_ERRORS) {
                Ok(e) => e,
                Err(e) => {
                    let missing = ctx.missing_elements();
                    return Err(match missing.first() {
                        Some(name) => SourceError::MissingElement {
                            origin: self.origin(),
                            element: name.to_string(),
                        },
                        None => SourceError::Pipeline {
                            origin: self.origin(),
                            reason: e.to_string(),
                        },
                    });
                }
            };
        let bad = |reason: &str| SourceError::Pipeline {
            origin: self.origin(),
            reason: reason.to_string(),
        };
        let pipeline = element
            .downcast::<gst::Pipeline>()
            .map_err(|_| bad("not a pipeline"))?;
        let sink = pipeline
            .by_name(SINK)
            .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
            .ok_or_else(|| bad("no appsink at its end"))?;
        Ok(Running { pipeline, sink })
    }

    /// Builds and plays the pipeline; an element that cannot start (no camera) is an error.
    fn start(&self) -> Result<Running, SourceError> {
        let running = self.build()?;
        if running.pipeline.set_state(gst::State::Playing).is_err() {
            return Err(self.bus_error(&running).unwrap_or(SourceError::Pipeline {
                origin: self.origin(),
                reason: "the pipeline does not start".into(),
            }));
        }
        Ok(running)
    }

    /// The first error or end of stream waiting on the pipeline's bus.
    fn bus_error(&self, running: &Running) -> Option<SourceError> {
        let bus = running.pipeline.bus()?;
        let msg = bus.pop_filtered(&[gst::MessageType::Error, gst::MessageType::Eos])?;
        Some(match msg.view() {
            gst::MessageView::Error(e) => SourceError::Pipeline {
                origin: self.origin(),
                reason: e.error().to_string(),
            },
            _ => self.ended(),
        })
    }

    fn ended(&self) -> SourceError {
        SourceError::Disconnected {
            origin: self.origin(),
            reason: "end of stream".into(),
        }
    }

    /// A sample's pixels as a frame, dropping the padding GStreamer puts at row ends.
    fn to_frame(&self, sample: &gst::Sample) -> Result<Frame, SourceError> {
        let bad = |reason: String| SourceError::Pipeline {
            origin: self.origin(),
            reason,
        };
        let caps = sample
            .caps()
            .ok_or_else(|| bad("a frame without caps".into()))?;
        let s = caps.structure(0).ok_or_else(|| bad("empty caps".into()))?;
        let dim = |k: &str| {
            s.get::<i32>(k)
                .ok()
                .and_then(|v| usize::try_from(v).ok())
                .filter(|&v| v > 0)
                .ok_or_else(|| bad(format!("caps without a {k}")))
        };
        let (w, h) = (dim("width")?, dim("height")?);
        if (w as u64).saturating_mul(h as u64) > self.limits.pixels {
            return Err(SourceError::BadFrame {
                origin: self.origin(),
                source: crate::frame::FrameError::TooManyPixels {
                    width: w as u32,
                    height: h as u32,
                    limit: self.limits.pixels,
                },
            });
        }
        let buffer = sample
            .buffer()
            .ok_or_else(|| bad("a sample without a buffer".into()))?;
        let map = buffer
            .map_readable()
            .map_err(|_| bad("an unreadable buffer".into()))?;
        let row = w * 3;
        let stride = map.len() / h;
        if stride < row {
            return Err(bad(format!("{} bytes for a {w}x{h} RGB frame", map.len())));
        }
        let mut data = Vec::with_capacity(row * h);
        for y in 0..h {
            data.extend_from_slice(&map[y * stride..y * stride + row]);
        }
        Frame::new(w, h, PixelFormat::Rgb, data).map_err(|source| SourceError::BadFrame {
            origin: self.origin(),
            source,
        })
    }
}

impl FrameSource for GstSource {
    /// The newest frame; an end of stream is [`SourceError::Disconnected`] (the pipeline
    /// restarts on the next call), silence past the stall time [`SourceError::Stalled`].
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        if self.running.is_none() {
            self.running = Some(self.start()?);
        }
        let Some(running) = self.running.as_ref() else {
            return Err(self.ended());
        };
        let timeout =
            gst::ClockTime::from_nseconds(u64::try_from(self.stall.as_nanos()).unwrap_or(u64::MAX));
        if let Some(sample) = running.sink.try_pull_sample(timeout) {
            return self.to_frame(&sample).map(Some);
        }
        let err = if running.sink.is_eos() {
            Some(self.ended())
        } else {
            self.bus_error(running)
        };
        match err {
            Some(e) => {
                self.running = None;
                Err(e)
            }
            None => Err(SourceError::Stalled {
                origin: self.origin(),
                after: self.stall,
            }),
        }
    }
}
