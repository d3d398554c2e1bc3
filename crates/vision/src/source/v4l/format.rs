//! What a V4L2 camera is asked for, and its raw frames made RGB: pure functions, tested
//! without a device.

use crate::frame::{Frame, FrameError, PixelFormat};

/// The pixel formats we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PixelCode {
    /// Motion JPEG: every frame a JPEG (decoded with a pure-Rust decoder).
    Mjpeg,
    /// YUV 4:2:2, two pixels in four bytes (Y0 U Y1 V).
    Yuyv,
}

impl PixelCode {
    /// The format's four-character code as V4L2 writes it.
    pub fn fourcc(self) -> u32 {
        match self {
            PixelCode::Mjpeg => fourcc(*b"MJPG"),
            PixelCode::Yuyv => fourcc(*b"YUYV"),
        }
    }

    /// The format with this four-character code, if we read it.
    pub fn of_fourcc(code: u32) -> Option<PixelCode> {
        [PixelCode::Mjpeg, PixelCode::Yuyv]
            .into_iter()
            .find(|p| p.fourcc() == code)
    }
}

/// A four-character code, little-endian as V4L2 packs it.
pub fn fourcc(c: [u8; 4]) -> u32 {
    u32::from_le_bytes(c)
}

/// Which pixel format to ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FormatChoice {
    /// MJPEG above 640x480 (USB 2 cannot carry raw frames that large at speed), YUYV at or
    /// below it (no decoding, no compression artefacts).
    #[default]
    Auto,
    /// MJPEG only.
    Mjpeg,
    /// YUYV only.
    Yuyv,
}

impl std::str::FromStr for FormatChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "auto" => Ok(FormatChoice::Auto),
            "mjpeg" | "mjpg" => Ok(FormatChoice::Mjpeg),
            "yuyv" | "yuy2" => Ok(FormatChoice::Yuyv),
            other => Err(format!(
                "unknown camera format {other:?} (auto, mjpeg, yuyv)"
            )),
        }
    }
}

/// One size in one format that a camera offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// The pixel format.
    pub code: PixelCode,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// The offered mode closest to the wanted size (by width and height together), in a format
/// `choice` allows; between formats at one size, `Auto` takes MJPEG above 640x480.
pub fn choose_mode(
    offered: &[Mode],
    width: u32,
    height: u32,
    choice: FormatChoice,
) -> Option<Mode> {
    let allowed = |m: &Mode| match choice {
        FormatChoice::Auto => true,
        FormatChoice::Mjpeg => m.code == PixelCode::Mjpeg,
        FormatChoice::Yuyv => m.code == PixelCode::Yuyv,
    };
    let distance = |m: &Mode| m.width.abs_diff(width) as u64 + m.height.abs_diff(height) as u64;
    let preferred = |m: &Mode| {
        let large = u64::from(m.width) * u64::from(m.height) > 640 * 480;
        (m.code == PixelCode::Mjpeg) == large
    };
    offered
        .iter()
        .filter(|m| allowed(m))
        .min_by_key(|m| (distance(m), !preferred(m)))
        .copied()
}

/// A YUYV frame (BT.601, limited range) as RGB. `stride` is the bytes per row, at least
/// twice the width; the width must be even.
pub fn yuyv_to_rgb(
    data: &[u8],
    width: usize,
    height: usize,
    stride: usize,
) -> Result<Frame, FrameError> {
    let row = 2 * width;
    let stride = stride.max(row);
    let need = stride * height.saturating_sub(1) + row;
    if width == 0 || height == 0 || width % 2 == 1 || data.len() < need {
        return Err(FrameError::BadLength {
            width,
            height,
            format: PixelFormat::Rgb,
            expected: need,
            got: data.len(),
        });
    }
    let mut out = Vec::with_capacity(width * height * 3);
    for y in 0..height {
        for q in data[y * stride..y * stride + row].chunks_exact(4) {
            let (u, v) = (i32::from(q[1]) - 128, i32::from(q[3]) - 128);
            for luma in [q[0], q[2]] {
                let c = 298 * (i32::from(luma) - 16);
                let px = [c + 409 * v, c - 100 * u - 208 * v, c + 516 * u];
                out.extend(px.map(|x| ((x + 128) >> 8).clamp(0, 255) as u8));
            }
        }
    }
    Frame::new(width, height, PixelFormat::Rgb, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yuyv_primaries_convert() {
        // Black, white, and BT.601 red and blue, each as one YUYV pair.
        let cases: [([u8; 4], [u8; 3]); 4] = [
            ([16, 128, 16, 128], [0, 0, 0]),
            ([235, 128, 235, 128], [255, 255, 255]),
            ([81, 90, 81, 240], [255, 0, 0]),
            ([41, 240, 41, 110], [0, 0, 255]),
        ];
        for (yuyv, rgb) in cases {
            let f = yuyv_to_rgb(&yuyv, 2, 1, 4).unwrap();
            for (got, want) in f.data().chunks(3).flat_map(|p| p.iter().zip(rgb)) {
                assert!(got.abs_diff(want) <= 2, "{yuyv:?}: {:?}", f.data());
            }
        }
    }

    #[test]
    fn yuyv_rows_use_the_stride_and_bad_sizes_are_errors() {
        // Two rows of one pair each, with two padding bytes per row.
        let data = [16, 128, 16, 128, 9, 9, 235, 128, 235, 128, 9, 9];
        let f = yuyv_to_rgb(&data, 2, 2, 6).unwrap();
        assert_eq!(&f.data()[..6], &[0; 6]);
        assert_eq!(&f.data()[6..], &[255; 6]);
        assert!(yuyv_to_rgb(&data, 3, 2, 6).is_err());
        assert!(yuyv_to_rgb(&data[..9], 2, 2, 6).is_err());
        assert!(yuyv_to_rgb(&[], 0, 0, 0).is_err());
    }

    #[test]
    fn the_closest_size_wins_and_auto_prefers_mjpeg_when_large() {
        let m = |code, width, height| Mode {
            code,
            width,
            height,
        };
        let offered = [
            m(PixelCode::Yuyv, 640, 480),
            m(PixelCode::Yuyv, 1280, 720),
            m(PixelCode::Mjpeg, 640, 480),
            m(PixelCode::Mjpeg, 1280, 720),
            m(PixelCode::Mjpeg, 1920, 1080),
        ];
        let pick = |w, h, c| choose_mode(&offered, w, h, c).unwrap();
        assert_eq!(pick(1280, 720, FormatChoice::Auto), offered[3]);
        assert_eq!(pick(640, 480, FormatChoice::Auto), offered[0]);
        assert_eq!(pick(1280, 720, FormatChoice::Yuyv), offered[1]);
        assert_eq!(pick(1900, 1000, FormatChoice::Auto), offered[4]);
        assert_eq!(pick(1920, 1080, FormatChoice::Yuyv), offered[1]);
        assert_eq!(
            choose_mode(&offered[..2], 640, 480, FormatChoice::Mjpeg),
            None
        );
        assert_eq!(choose_mode(&[], 640, 480, FormatChoice::Auto), None);
    }

    #[test]
    fn fourccs_match_v4l2() {
        // V4L2_PIX_FMT_MJPEG and V4L2_PIX_FMT_YUYV from videodev2.h.
        assert_eq!(PixelCode::Mjpeg.fourcc(), 0x4750_4a4d);
        assert_eq!(PixelCode::Yuyv.fourcc(), 0x5659_5559);
        assert_eq!(PixelCode::of_fourcc(0x5659_5559), Some(PixelCode::Yuyv));
        assert_eq!(PixelCode::of_fourcc(fourcc(*b"NV12")), None);
    }
}
