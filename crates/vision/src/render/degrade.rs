//! What a camera does to the light reaching it: exposure, vignetting, a display tone curve,
//! blur, sensor noise, 8-bit quantisation and JPEG compression.

use crate::frame::{Frame, PixelFormat};

use super::scene::Degrade;

/// The largest blur sigma applied, pixels.
const MAX_BLUR: f64 = 8.0;

/// Entries of the tone curve's table over linear 0..=1.
const TONE_STEPS: usize = 4096;

/// Turns linear RGB radiance (row-major, three floats a pixel) into the frame a camera
/// would deliver, with its JPEG encoding when `d` asks for one.
pub fn develop(
    mut img: Vec<f32>,
    width: usize,
    height: usize,
    d: &Degrade,
    seed: u64,
) -> (Frame, Option<Vec<u8>>) {
    expose(&mut img, width, height, d);
    finish(&img, width, height, d, seed)
}

/// The optics and tone of `d` in place: exposure, vignetting, the tone curve (to display
/// levels 0..255) and blur. The same for every frame of a still scene, so a video does it
/// once for them all.
pub fn expose(img: &mut [f32], width: usize, height: usize, d: &Degrade) {
    let tone = tone_table();
    let (cx, cy) = (width as f32 / 2.0, height as f32 / 2.0);
    let r2max = cx * cx + cy * cy;
    let exposure = d.exposure as f32;
    let vignette = d.vignette as f32;
    for y in 0..height {
        let dy = y as f32 - cy;
        for x in 0..width {
            let dx = x as f32 - cx;
            let gain = exposure * (1.0 - vignette * (dx * dx + dy * dy) / r2max);
            let i = 3 * (y * width + x);
            for k in 0..3 {
                let v = (img[i + k] * gain).clamp(0.0, 1.0);
                img[i + k] = tone[(v * (TONE_STEPS - 1) as f32) as usize];
            }
        }
    }
    // Beyond a few pixels a blur shows nothing a classifier could use; it only costs time.
    let sigma = if d.blur.is_finite() {
        d.blur.clamp(0.0, MAX_BLUR)
    } else {
        0.0
    };
    if sigma > 0.2 {
        blur(img, width, height, sigma as f32);
    }
}

/// What differs from frame to frame after [`expose`]: sensor noise (seeded by `seed`),
/// 8-bit quantisation and JPEG compression.
pub fn finish(
    img: &[f32],
    width: usize,
    height: usize,
    d: &Degrade,
    seed: u64,
) -> (Frame, Option<Vec<u8>>) {
    let noise = d.noise.max(0.0) as f32;
    let mut rng = fastrand::Rng::with_seed(seed);
    let bytes: Vec<u8> = if noise > 0.0 {
        // Irwin-Hall: four uniform bytes sum to nearly a Gaussian, far cheaper to draw.
        let luma_scale = noise / 147.8;
        let chroma_scale = 0.35 * noise / 73.9;
        let mut out = Vec::with_capacity(img.len());
        for px in img.chunks_exact(3) {
            let r = rng.u64(..);
            let b = |k: u32| ((r >> (8 * k)) & 0xFF) as f32;
            let luma = (b(0) + b(1) + b(2) + b(3) - 510.0) * luma_scale;
            for (k, v) in px.iter().enumerate() {
                let chroma = (b(4 + k as u32) - 127.5) * chroma_scale;
                out.push(((v + luma + chroma).clamp(0.0, 255.0) + 0.5) as u8);
            }
        }
        out
    } else {
        img.iter()
            .map(|v| (v.clamp(0.0, 255.0) + 0.5) as u8)
            .collect()
    };
    let frame = Frame::new(width, height, PixelFormat::Rgb, bytes)
        .expect("the buffer is width x height x 3");
    match d.jpeg_quality.and_then(|q| jpeg_round_trip(&frame, q)) {
        Some((decoded, bytes)) => (decoded, Some(bytes)),
        None => (frame, None),
    }
}

/// Linear 0..1 to display levels 0..255 (the sRGB curve).
fn tone_table() -> Vec<f32> {
    (0..TONE_STEPS)
        .map(|i| {
            let v = i as f64 / (TONE_STEPS - 1) as f64;
            let s = if v <= 0.003_130_8 {
                12.92 * v
            } else {
                1.055 * v.powf(1.0 / 2.4) - 0.055
            };
            (255.0 * s) as f32
        })
        .collect()
}

/// A separable Gaussian blur in place.
fn blur(img: &mut [f32], width: usize, height: usize, sigma: f32) {
    // Two sigmas hold 95% of the weight; the rest is renormalised.
    let radius = (2.0 * sigma).ceil() as usize;
    let mut kernel: Vec<f32> = (0..=2 * radius)
        .map(|i| {
            let d = i as f32 - radius as f32;
            (-d * d / (2.0 * sigma * sigma)).exp()
        })
        .collect();
    let sum: f32 = kernel.iter().sum();
    kernel.iter_mut().for_each(|k| *k /= sum);
    let mut tmp = vec![0f32; img.len()];
    let r = radius as isize;
    // Rows, then columns; edges repeat the border pixel.
    let mut padded = vec![0f32; 3 * (width + 2 * radius)];
    for y in 0..height {
        let row = &img[3 * y * width..3 * (y + 1) * width];
        for (x, px) in padded.chunks_exact_mut(3).enumerate() {
            let sx = x.saturating_sub(radius).min(width - 1);
            px.copy_from_slice(&row[3 * sx..3 * sx + 3]);
        }
        let out = &mut tmp[3 * y * width..3 * (y + 1) * width];
        out.fill(0.0);
        for (j, k) in kernel.iter().enumerate() {
            for (o, s) in out.iter_mut().zip(&padded[3 * j..]) {
                *o += k * s;
            }
        }
    }
    let stride = 3 * width;
    for y in 0..height {
        let out = &mut img[y * stride..(y + 1) * stride];
        out.fill(0.0);
        for (j, k) in kernel.iter().enumerate() {
            let sy = (y as isize + j as isize - r).clamp(0, height as isize - 1) as usize;
            let src = &tmp[sy * stride..(sy + 1) * stride];
            for (o, s) in out.iter_mut().zip(src) {
                *o += k * s;
            }
        }
    }
}

/// Encodes a frame as JPEG at `quality` and decodes it again: the decoded frame and the bytes.
pub fn jpeg_round_trip(frame: &Frame, quality: u8) -> Option<(Frame, Vec<u8>)> {
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
    // Full-resolution colour, as the frames have always been compressed here.
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::F_1_1);
    let (width, height) = (
        u16::try_from(frame.width()).ok()?,
        u16::try_from(frame.height()).ok()?,
    );
    encoder
        .encode(frame.data(), width, height, jpeg_encoder::ColorType::Rgb)
        .ok()?;
    Some((Frame::decode(&out).ok()?, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Degrade {
        Degrade {
            blur: 0.0,
            noise: 0.0,
            jpeg_quality: None,
            exposure: 1.0,
            vignette: 0.0,
        }
    }

    #[test]
    fn mid_grey_develops_to_the_srgb_level_and_noise_is_seeded() {
        let linear = vec![0.214f32; 16 * 8 * 3];
        let (f, jpeg) = develop(linear.clone(), 16, 8, &plain(), 1);
        assert!(jpeg.is_none());
        assert!(f.data().iter().all(|&v| (126..=129).contains(&v)));
        let noisy = Degrade {
            noise: 4.0,
            ..plain()
        };
        let a = develop(linear.clone(), 16, 8, &noisy, 1).0;
        let b = develop(linear.clone(), 16, 8, &noisy, 1).0;
        let c = develop(linear.clone(), 16, 8, &noisy, 2).0;
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn blur_keeps_a_flat_image_flat_and_spreads_an_edge() {
        let mut img: Vec<f32> = (0..20 * 4 * 3)
            .map(|i| if (i / 3) % 20 < 10 { 0.0 } else { 100.0 })
            .collect();
        blur(&mut img, 20, 4, 1.0);
        assert!(img[3 * 9] > 5.0 && img[3 * 10] < 95.0);
        assert!(img[0] < 0.01 && img[3 * 19] > 99.99);
    }
}
