//! `tengen config --systemd`: the systemd unit's limits for a board, as a drop-in. The
//! board profile (`[service]` in `board.toml`) is their only source: the unit itself ships
//! limits relative to the machine's RAM, and this drop-in replaces them. With a V4L2
//! camera configured (`[camera] source = "/dev/videoN"`) it also lets the sandboxed
//! unit open it: the `video` group and the video4linux device class.

use anyhow::Result;
use clap::Args;

use crate::config::{self, memory_mib, Config, ConfigArgs};

/// Options of `tengen config`.
#[derive(Args, Debug)]
pub struct ConfigCommand {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Print a drop-in for tengen.service with the profile's limits (MemoryMax=,
    /// MemoryHigh=) and, with a V4L2 camera, its device rule, instead of the
    /// configuration.
    #[arg(long)]
    pub systemd: bool,
}

/// Runs `tengen config`.
pub fn run(c: ConfigCommand) -> Result<()> {
    if !c.systemd {
        return config::run(c.config);
    }
    let cfg = config::load(
        c.config.board.as_deref(),
        c.config.config.as_deref(),
        c.config.boards_dir.as_deref(),
    )?;
    print!("{}", drop_in(&cfg, c.config.board.as_deref())?);
    Ok(())
}

/// The drop-in's text. MemoryHigh= sits a tenth below MemoryMax=, so that the kernel
/// reclaims (and the daemon slows) before it is killed.
pub fn drop_in(cfg: &Config, board: Option<&str>) -> Result<String> {
    let origin = board.map_or("no board profile".to_string(), |b| format!("--board {b}"));
    let mut out = format!(
        "# tengen.service's limits for {origin}, written by `tengen config --systemd`.\n\
         # Install as /etc/systemd/system/tengen.service.d/memory.conf, then\n\
         #   systemctl daemon-reload && systemctl restart tengen\n\
         [Service]\n"
    );
    match &cfg.service.memory_max {
        Some(m) => {
            let max = memory_mib(m)?;
            out += &format!("MemoryHigh={}M\nMemoryMax={max}M\n", max - max / 10);
        }
        None => out += "# No service.memory_max is set: the unit's own limits apply.\n",
    }
    out += &camera_rules(cfg.camera.source.as_deref());
    Ok(out)
}

/// What the unit needs to read the configured camera: a V4L2 device (`/dev/video*`)
/// belongs to the `video` group and the `video4linux` device class, which the shipped
/// unit's device list leaves out; a network stream or a folder needs nothing; a CSI or
/// GStreamer camera needs the GPU's devices too (systemd/jetson-gpu.conf).
fn camera_rules(source: Option<&str>) -> String {
    match source {
        Some(s) if s.starts_with("/dev/") => format!(
            "# The camera {s}: its group and device class (the unit allows serial ports only).\n\
             SupplementaryGroups=video\n\
             DeviceAllow=char-video4linux rw\n"
        ),
        Some(s) if s == "csi" || s.starts_with("csi:") || s.starts_with("gst:") => format!(
            "# The camera {s} is read through GStreamer and the Jetson's ISP: install\n\
             # systemd/jetson-gpu.conf as well (the video group and the GPU's devices).\n"
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_bad_limit_names_its_key() {
        let mut c = Config::default();
        c.merge(&config::Layer::parse("[service]\nmemory_max = \"2Q\"\n", "t").unwrap());
        let e = format!("{:#}", c.validate().unwrap_err());
        assert!(e.starts_with("service.memory_max:"), "{e}");
    }

    #[test]
    fn the_file_overrides_the_profile_and_high_is_below_max() {
        let mut c = Config::default();
        c.merge(&config::Layer::parse("[service]\nmemory_max = \"2.5G\"\n", "p").unwrap());
        let text = drop_in(&c, Some("b")).unwrap();
        assert!(
            text.contains("\n[Service]\nMemoryHigh=2304M\nMemoryMax=2560M\n"),
            "{text}"
        );
        c.merge(&config::Layer::parse("[service]\nmemory_max = \"1G\"\n", "f").unwrap());
        assert!(drop_in(&c, Some("b"))
            .unwrap()
            .contains("MemoryMax=1024M\n"));
        let none = drop_in(&Config::default(), None).unwrap();
        assert!(
            none.contains("[Service]\n") && !none.contains("MemoryMax="),
            "{none}"
        );
    }

    #[test]
    fn every_shipped_profile_limits_memory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../boards");
        // The RAM of each profile's smallest supported board, in MiB: its limit must
        // leave the system at least a quarter of it.
        let boards = [
            ("jetson-nano", 4096),
            ("jetson-orin-nano", 8192),
            ("jetson-xavier-nx", 8192),
            ("raspberry-pi-5", 2048),
            ("x86-kiosk", 8192),
        ];
        let found = std::fs::read_dir(&dir).unwrap().count() - 1; // and README.md
        assert_eq!(found, boards.len(), "a profile without a RAM size here");
        for (name, ram) in boards {
            let c = config::load(Some(name), Some(Path::new("/dev/null")), Some(&dir)).unwrap();
            let m = c.service.memory_max.as_deref();
            let max = memory_mib(m.unwrap_or_else(|| panic!("{name}: no memory_max"))).unwrap();
            assert!(max * 4 <= ram * 3, "{name}: {max} MiB of {ram}");
            let text = drop_in(&c, Some(name)).unwrap();
            assert!(text.contains(&format!("MemoryMax={max}M\n")), "{text}");
        }
    }

    #[test]
    fn a_v4l2_camera_gets_its_group_and_device_class() {
        let rules = camera_rules(Some("/dev/video0"));
        assert!(rules.contains("SupplementaryGroups=video\n"), "{rules}");
        assert!(
            rules.contains("DeviceAllow=char-video4linux rw\n"),
            "{rules}"
        );
        assert!(camera_rules(Some("csi")).contains("jetson-gpu.conf"));
        assert_eq!(camera_rules(Some("http://cam.local/stream")), "");
        assert_eq!(camera_rules(None), "");
    }
}
