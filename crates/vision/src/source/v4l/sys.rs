//! The few V4L2 structures and ioctls a capture needs, laid out as `linux/videodev2.h` has
//! them on 64-bit Linux (sizes checked below and ioctl numbers in the tests). Raw ioctls:
//! no libv4l, no generated bindings, nothing to build but Rust.

#![allow(missing_docs)]

/// `V4L2_BUF_TYPE_VIDEO_CAPTURE`.
pub const BUF_TYPE_CAPTURE: u32 = 1;
/// `V4L2_MEMORY_MMAP`.
pub const MEMORY_MMAP: u32 = 1;
/// `V4L2_CAP_VIDEO_CAPTURE`, `V4L2_CAP_STREAMING`, `V4L2_CAP_DEVICE_CAPS`.
pub const CAP_VIDEO_CAPTURE: u32 = 0x0000_0001;
pub const CAP_STREAMING: u32 = 0x0400_0000;
pub const CAP_DEVICE_CAPS: u32 = 0x8000_0000;
/// `V4L2_FRMSIZE_TYPE_DISCRETE`.
pub const FRMSIZE_DISCRETE: u32 = 1;
/// `V4L2_FIELD_ANY`.
pub const FIELD_ANY: u32 = 0;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Capability {
    pub driver: [u8; 16],
    pub card: [u8; 32],
    pub bus_info: [u8; 32],
    pub version: u32,
    pub capabilities: u32,
    pub device_caps: u32,
    pub reserved: [u32; 3],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct FmtDesc {
    pub index: u32,
    pub kind: u32,
    pub flags: u32,
    pub description: [u8; 32],
    pub pixelformat: u32,
    pub mbus_code: u32,
    pub reserved: [u32; 3],
}

/// `v4l2_frmsizeenum`: `size` is (width, height) when discrete, else min/max/step of each.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FrmSizeEnum {
    pub index: u32,
    pub pixel_format: u32,
    pub kind: u32,
    pub size: [u32; 6],
    pub reserved: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct PixFormat {
    pub width: u32,
    pub height: u32,
    pub pixelformat: u32,
    pub field: u32,
    pub bytesperline: u32,
    pub sizeimage: u32,
    pub colorspace: u32,
    pub private: u32,
    pub flags: u32,
    pub ycbcr_enc: u32,
    pub quantization: u32,
    pub xfer_func: u32,
}

/// `v4l2_format` for the single-planar capture type; its union is 8-aligned.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct Format {
    pub kind: u32,
    pub pad: u32,
    pub pix: PixFormat,
    pub rest: [u8; 152],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct CaptureParm {
    pub capability: u32,
    pub capturemode: u32,
    /// Seconds per frame as numerator / denominator.
    pub timeperframe: [u32; 2],
    pub extendedmode: u32,
    pub readbuffers: u32,
    pub reserved: [u32; 4],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct StreamParm {
    pub kind: u32,
    pub capture: CaptureParm,
    pub rest: [u8; 160],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct RequestBuffers {
    pub count: u32,
    pub kind: u32,
    pub memory: u32,
    pub capabilities: u32,
    pub flags: u8,
    pub reserved: [u8; 3],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union BufferM {
    pub offset: u32,
    pub userptr: u64,
    pub fd: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Buffer {
    pub index: u32,
    pub kind: u32,
    pub bytesused: u32,
    pub flags: u32,
    pub field: u32,
    pub pad: u32,
    pub timestamp: [i64; 2],
    pub timecode: [u32; 4],
    pub sequence: u32,
    pub memory: u32,
    pub m: BufferM,
    pub length: u32,
    pub reserved2: u32,
    pub request_fd: i32,
    pub pad2: u32,
}

/// All-zero values of these plain structures, as the ioctls expect them before filling.
pub fn zeroed<T: Copy>() -> T {
    // SAFETY: only used with the repr(C) structures above, made of integers and byte
    // arrays (and a union of integers), for which all-zero bytes are a valid value.
    unsafe { std::mem::zeroed() }
}

const _: () = {
    assert!(std::mem::size_of::<Capability>() == 104);
    assert!(std::mem::size_of::<FmtDesc>() == 64);
    assert!(std::mem::size_of::<FrmSizeEnum>() == 44);
    assert!(std::mem::size_of::<Format>() == 208);
    assert!(std::mem::size_of::<StreamParm>() == 204);
    assert!(std::mem::size_of::<RequestBuffers>() == 20);
    assert!(std::mem::size_of::<Buffer>() == 88);
};

nix::ioctl_read!(querycap, b'V', 0, Capability);
nix::ioctl_readwrite!(enum_fmt, b'V', 2, FmtDesc);
nix::ioctl_readwrite!(s_fmt, b'V', 5, Format);
nix::ioctl_readwrite!(reqbufs, b'V', 8, RequestBuffers);
nix::ioctl_readwrite!(querybuf, b'V', 9, Buffer);
nix::ioctl_readwrite!(qbuf, b'V', 15, Buffer);
nix::ioctl_readwrite!(dqbuf, b'V', 17, Buffer);
nix::ioctl_write_ptr!(streamon, b'V', 18, nix::libc::c_int);
nix::ioctl_write_ptr!(streamoff, b'V', 19, nix::libc::c_int);
nix::ioctl_readwrite!(s_parm, b'V', 22, StreamParm);
nix::ioctl_readwrite!(enum_framesizes, b'V', 74, FrmSizeEnum);

#[cfg(test)]
mod tests {
    use super::*;

    // The request type is u64 with glibc and i32 with musl: the casts are needed on one.
    #[allow(clippy::unnecessary_cast)]
    #[test]
    fn ioctl_numbers_match_videodev2_h() {
        // The values of VIDIOC_* on 64-bit Linux, as a C program printing them gives.
        let size = std::mem::size_of::<Capability>();
        assert_eq!(nix::request_code_read!(b'V', 0, size) as u64, 0x8068_5600);
        let rw = |nr, size| nix::request_code_readwrite!(b'V', nr, size) as u64;
        assert_eq!(rw(2, std::mem::size_of::<FmtDesc>()), 0xc040_5602);
        assert_eq!(rw(5, std::mem::size_of::<Format>()), 0xc0d0_5605);
        assert_eq!(rw(8, std::mem::size_of::<RequestBuffers>()), 0xc014_5608);
        assert_eq!(rw(9, std::mem::size_of::<Buffer>()), 0xc058_5609);
        assert_eq!(rw(17, std::mem::size_of::<Buffer>()), 0xc058_5611);
        assert_eq!(rw(22, std::mem::size_of::<StreamParm>()), 0xc0cc_5616);
        assert_eq!(rw(74, std::mem::size_of::<FrmSizeEnum>()), 0xc02c_564a);
        let int = std::mem::size_of::<nix::libc::c_int>();
        assert_eq!(nix::request_code_write!(b'V', 18, int) as u64, 0x4004_5612);
        assert_eq!(std::mem::offset_of!(Buffer, m), 64);
        assert_eq!(std::mem::offset_of!(Buffer, length), 72);
        assert_eq!(std::mem::offset_of!(Format, pix), 8);
        assert_eq!(std::mem::offset_of!(StreamParm, capture), 4);
    }
}
