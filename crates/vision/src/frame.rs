//! Frames: owned pixel buffers with their size, decoded from JPEG or PNG at the edge.

use thiserror::Error;

/// How a frame's pixels are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelFormat {
    /// Three bytes per pixel, red, green, blue.
    Rgb,
    /// One byte per pixel, luminance.
    Grey,
}

impl PixelFormat {
    /// Bytes per pixel.
    pub fn channels(self) -> usize {
        match self {
            PixelFormat::Rgb => 3,
            PixelFormat::Grey => 1,
        }
    }
}

/// Why bytes could not become a frame.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The buffer's length does not match width x height x channels.
    #[error("a {width}x{height} {format:?} frame needs {expected} bytes, got {got}")]
    BadLength {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
        /// The pixel format.
        format: PixelFormat,
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// A frame with no pixels.
    #[error("a frame cannot be empty ({width}x{height})")]
    Empty {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
    },
    /// A JPEG whose data stops before its end marker (a cut-off file or stream).
    #[error("truncated JPEG: no end-of-image marker after the scan data")]
    TruncatedJpeg,
    /// Bytes that are not an image in a format we decode (JPEG, PNG), or are corrupt.
    #[error("cannot decode the image")]
    Decode(#[from] image::ImageError),
    /// An encoded image over the byte limit, refused unread.
    #[error("the image is {bytes} bytes, over the limit of {limit} (camera.max_frame_bytes)")]
    TooManyBytes {
        /// Its size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// An image whose header promises more pixels than the limit, refused before decoding.
    #[error(
        "the image is {width}x{height}, over the limit of {limit} pixels (camera.max_frame_pixels)"
    )]
    TooManyPixels {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// The limit.
        limit: u64,
    },
}

/// The most a frame may be: encoded bytes and decoded pixels, both checked before any
/// decoding (a small PNG can promise 13,000 x 13,000 pixels, 2 GB once decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameLimits {
    /// Encoded bytes (a file, an MJPEG part).
    pub bytes: u64,
    /// Decoded pixels (width x height).
    pub pixels: u64,
}

impl Default for FrameLimits {
    /// 32 MiB encoded and 64 million pixels (a 50-megapixel phone photo passes; decoded
    /// as RGB it takes at most 192 MB).
    fn default() -> Self {
        FrameLimits {
            bytes: 32 << 20,
            pixels: 64_000_000,
        }
    }
}

/// An owned image: RGB or grey, row-major, no padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    width: usize,
    height: usize,
    format: PixelFormat,
    data: Vec<u8>,
}

impl Frame {
    /// A frame from raw pixels; the length must match the size and format.
    pub fn new(
        width: usize,
        height: usize,
        format: PixelFormat,
        data: Vec<u8>,
    ) -> Result<Self, FrameError> {
        if width == 0 || height == 0 {
            return Err(FrameError::Empty { width, height });
        }
        let expected = width
            .checked_mul(height)
            .and_then(|a| a.checked_mul(format.channels()))
            .unwrap_or(usize::MAX);
        if data.len() != expected {
            return Err(FrameError::BadLength {
                width,
                height,
                format,
                expected,
                got: data.len(),
            });
        }
        Ok(Frame {
            width,
            height,
            format,
            data,
        })
    }

    /// A frame of one grey level.
    pub fn filled_grey(width: usize, height: usize, level: u8) -> Result<Self, FrameError> {
        Frame::new(
            width,
            height,
            PixelFormat::Grey,
            vec![level; width.saturating_mul(height)],
        )
    }

    /// Decodes a JPEG or PNG (the format is read from the bytes) within the default
    /// [`FrameLimits`].
    pub fn decode(bytes: &[u8]) -> Result<Self, FrameError> {
        Frame::decode_within(bytes, FrameLimits::default())
    }

    /// Decodes a JPEG or PNG within `limits`: its size and the pixel count its header
    /// gives are checked first, and the decoder may allocate no more than that many
    /// pixels need.
    pub fn decode_within(bytes: &[u8], limits: FrameLimits) -> Result<Self, FrameError> {
        if bytes.len() as u64 > limits.bytes {
            return Err(FrameError::TooManyBytes {
                bytes: bytes.len() as u64,
                limit: limits.bytes,
            });
        }
        let format = image::guess_format(bytes)?;
        if format == image::ImageFormat::Jpeg && !jpeg_is_complete(bytes) {
            return Err(FrameError::TruncatedJpeg);
        }
        let reader = || image::ImageReader::with_format(std::io::Cursor::new(bytes), format);
        let (width, height) = reader().into_dimensions()?;
        if u64::from(width) * u64::from(height) > limits.pixels {
            return Err(FrameError::TooManyPixels {
                width,
                height,
                limit: limits.pixels,
            });
        }
        let mut decoder_limits = image::Limits::default();
        // RGBA at 16 bits a channel is the most any decoder keeps a pixel in, plus room
        // for its working buffers.
        decoder_limits.max_alloc = Some(limits.pixels.saturating_mul(8).saturating_add(64 << 20));
        let mut r = reader();
        r.limits(decoder_limits);
        let img = r.decode()?;
        let rgb = img.into_rgb8();
        let (w, h) = (rgb.width() as usize, rgb.height() as usize);
        Frame::new(w, h, PixelFormat::Rgb, rgb.into_raw())
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The pixel format.
    pub fn format(&self) -> PixelFormat {
        self.format
    }

    /// The raw pixels, row-major.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The luminance of every pixel (ITU-R BT.601 weights), row-major.
    pub fn to_grey(&self) -> Vec<u8> {
        match self.format {
            PixelFormat::Grey => self.data.clone(),
            PixelFormat::Rgb => self
                .data
                .chunks_exact(3)
                .map(|p| {
                    let y = 299 * u32::from(p[0]) + 587 * u32::from(p[1]) + 114 * u32::from(p[2]);
                    ((y + 500) / 1000) as u8
                })
                .collect(),
        }
    }

    /// This frame as RGB (a grey frame is expanded).
    pub fn into_rgb(self) -> Frame {
        match self.format {
            PixelFormat::Rgb => self,
            PixelFormat::Grey => Frame {
                width: self.width,
                height: self.height,
                format: PixelFormat::Rgb,
                data: self.data.iter().flat_map(|&g| [g, g, g]).collect(),
            },
        }
    }

    /// Sets the pixel at (x, y) if it is inside the frame (grey frames take the luminance).
    pub fn put(&mut self, x: i64, y: i64, rgb: [u8; 3]) {
        if x < 0 || y < 0 || x as usize >= self.width || y as usize >= self.height {
            return;
        }
        let i = y as usize * self.width + x as usize;
        match self.format {
            PixelFormat::Rgb => self.data[3 * i..3 * i + 3].copy_from_slice(&rgb),
            PixelFormat::Grey => {
                let [r, g, b] = rgb.map(u32::from);
                self.data[i] = ((299 * r + 587 * g + 114 * b) / 1000) as u8;
            }
        }
    }

    /// The frame encoded as PNG.
    pub fn to_png(&self) -> Result<Vec<u8>, FrameError> {
        let color = match self.format {
            PixelFormat::Rgb => image::ExtendedColorType::Rgb8,
            PixelFormat::Grey => image::ExtendedColorType::L8,
        };
        let mut out = Vec::new();
        image::ImageEncoder::write_image(
            image::codecs::png::PngEncoder::new(&mut out),
            &self.data,
            self.width as u32,
            self.height as u32,
            color,
        )?;
        Ok(out)
    }
}

/// Whether a JPEG has its end-of-image marker after the last start-of-scan. Inside scan
/// data 0xFF is always followed by 0x00 or a restart marker, so FF D9 there is the real
/// end; an EOI before the last scan belongs to an embedded thumbnail.
fn jpeg_is_complete(bytes: &[u8]) -> bool {
    let last = |marker: u8| bytes.windows(2).rposition(|w| w == [0xFF, marker]);
    match (last(0xDA), last(0xD9)) {
        (Some(sos), Some(eoi)) => eoi > sos,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_jpeg() -> Vec<u8> {
        let mut out = Vec::new();
        let pixels: Vec<u8> = (0..32 * 32 * 3).map(|i| (i * 7 % 251) as u8).collect();
        image::ImageEncoder::write_image(
            image::codecs::jpeg::JpegEncoder::new(&mut out),
            &pixels,
            32,
            32,
            image::ExtendedColorType::Rgb8,
        )
        .unwrap();
        out
    }

    #[test]
    fn a_whole_jpeg_decodes_to_its_size() {
        let f = Frame::decode(&tiny_jpeg()).unwrap();
        assert_eq!(
            (f.width(), f.height(), f.format()),
            (32, 32, PixelFormat::Rgb)
        );
    }

    #[test]
    fn a_truncated_jpeg_is_an_error_at_every_cut() {
        let jpeg = tiny_jpeg();
        for cut in 0..jpeg.len() - 1 {
            assert!(Frame::decode(&jpeg[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn garbage_and_bad_lengths_are_errors() {
        assert!(Frame::decode(b"not an image at all").is_err());
        assert!(Frame::decode(&[]).is_err());
        assert!(matches!(
            Frame::new(4, 4, PixelFormat::Rgb, vec![0; 47]),
            Err(FrameError::BadLength { .. })
        ));
        assert!(matches!(
            Frame::new(0, 4, PixelFormat::Grey, vec![]),
            Err(FrameError::Empty { .. })
        ));
    }

    #[test]
    fn png_round_trips() {
        let f = Frame::new(3, 2, PixelFormat::Rgb, (0..18).collect()).unwrap();
        assert_eq!(Frame::decode(&f.to_png().unwrap()).unwrap(), f);
    }
}
