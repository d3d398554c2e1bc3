//! Offline sources: one image file, or a folder of frames in natural order.

use std::path::{Path, PathBuf};

use std::io::Read;

use super::{FrameSource, SourceError};
use crate::frame::{Frame, FrameError, FrameLimits};

/// Reads and decodes one image file within the default [`FrameLimits`].
pub fn read_image(path: &Path) -> Result<Frame, SourceError> {
    read_image_within(path, FrameLimits::default())
}

/// Reads and decodes one image file within `limits`: a file over the byte limit is not
/// read at all (nor more of a file that grows while read), and its pixels are checked
/// before decoding.
pub fn read_image_within(path: &Path, limits: FrameLimits) -> Result<Frame, SourceError> {
    let io = |source| SourceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bad = |source| SourceError::Frame {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        )));
    }
    let too_big = |bytes| FrameError::TooManyBytes {
        bytes,
        limit: limits.bytes,
    };
    if meta.len() > limits.bytes {
        return Err(bad(too_big(meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limits.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limits.bytes {
        return Err(bad(too_big(bytes.len() as u64)));
    }
    Frame::decode_within(&bytes, limits).map_err(bad)
}

/// One image file: a single frame, then the end.
#[derive(Debug)]
pub struct ImageFile {
    path: Option<PathBuf>,
    limits: FrameLimits,
}

impl ImageFile {
    /// A source for the file at `path` (read when the frame is asked for).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ImageFile {
            path: Some(path.into()),
            limits: FrameLimits::default(),
        }
    }

    /// The same source, its frame within `limits`.
    pub fn with_limits(mut self, limits: FrameLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl FrameSource for ImageFile {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        match self.path.take() {
            Some(p) => read_image_within(&p, self.limits).map(Some),
            None => Ok(None),
        }
    }
}

/// The JPEG and PNG files of a folder, in natural order (`2.jpg` before `10.jpg`).
#[derive(Debug)]
pub struct FrameFolder {
    files: std::vec::IntoIter<PathBuf>,
    limits: FrameLimits,
}

impl FrameFolder {
    /// Lists the folder's image files now; they are read one by one as frames are asked for.
    pub fn open(dir: &Path) -> Result<Self, SourceError> {
        let io = |source| SourceError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            if matches!(ext.as_deref(), Some("jpg" | "jpeg" | "png")) && path.is_file() {
                files.push(path);
            }
        }
        files.sort_by_cached_key(|p| {
            natural_key(&p.file_name().unwrap_or_default().to_string_lossy())
        });
        Ok(FrameFolder {
            files: files.into_iter(),
            limits: FrameLimits::default(),
        })
    }

    /// The same folder, each frame within `limits`.
    pub fn with_limits(mut self, limits: FrameLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How many frames are left.
    pub fn remaining(&self) -> usize {
        self.files.len()
    }
}

impl FrameSource for FrameFolder {
    fn next_frame(&mut self) -> Result<Option<Frame>, SourceError> {
        match self.files.next() {
            Some(p) => read_image_within(&p, self.limits).map(Some),
            None => Ok(None),
        }
    }
}

/// A sort key that orders runs of digits by their value.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Number(u128, usize),
    Text(String),
}

fn natural_key(name: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let digit = c.is_ascii_digit();
        let end = rest
            .find(|ch: char| ch.is_ascii_digit() != digit)
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(end);
        parts.push(if digit {
            // Very long runs saturate; the length keeps `01` and `1` apart.
            Part::Number(run.parse().unwrap_or(u128::MAX), run.len())
        } else {
            Part::Text(run.to_string())
        });
        rest = tail;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_2_before_10() {
        let mut names = vec!["10.jpg", "2.jpg", "1.jpg", "b.png", "a10.png", "a9.png"];
        names.sort_by_key(|n| natural_key(n));
        assert_eq!(
            names,
            ["1.jpg", "2.jpg", "10.jpg", "a9.png", "a10.png", "b.png"]
        );
    }

    #[test]
    fn missing_files_and_folders_are_errors() {
        let missing = Path::new("/nonexistent/tengen-vision/none.jpg");
        assert!(matches!(
            ImageFile::new(missing).next_frame(),
            Err(SourceError::Io { .. })
        ));
        assert!(FrameFolder::open(Path::new("/nonexistent/tengen-vision")).is_err());
    }
}
