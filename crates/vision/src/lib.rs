//! Tengen's camera board reader. Sans-IO at its core: frames in, results out. This first
//! part has frames and their sources (an image file, a folder of frames) and automatic
//! board finding: the grid, its size (9x9, 13x13, 19x19) and its corners, with no clicks.

pub mod filter;
pub mod find;
pub mod frame;
pub mod homography;
pub mod hough;
pub mod overlay;
pub mod read;
pub mod render;
pub mod source;
pub mod thumbnail;
pub mod track;

pub use find::{find_board, FoundBoard, NoBoard};
pub use frame::{Frame, FrameError, FrameLimits, PixelFormat};
pub use homography::{fit_ransac, Homography, Point, RobustFit};
pub use read::{BoardReading, PointReading, PointState, StoneReader};
pub use source::{
    read_image, CameraSettings, FrameFolder, FrameSource, ImageFile, Latest, MjpegHttp,
    SourceError, SourceSpec,
};
pub use track::DEFAULT_SETTLE_MS;
