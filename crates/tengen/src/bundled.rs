//! What is compiled into the binary: the default network (behind the `bundled-net`
//! feature) and the board profiles of `boards/`, so that a bare binary needs no other file.

/// A network compiled into the binary.
#[derive(Debug)]
pub struct BundledNet {
    /// The name `models/manifest.toml` gives it.
    pub name: &'static str,
    /// The `.bin.gz` file's bytes.
    pub bytes: &'static [u8],
}

/// The board profiles (`boards/<name>/board.toml`), by folder name. A test checks that
/// every folder of `boards/` is here.
pub const BOARDS: &[(&str, &str)] = &[
    (
        "jetson-nano",
        include_str!("../../../boards/jetson-nano/board.toml"),
    ),
    (
        "jetson-orin-nano",
        include_str!("../../../boards/jetson-orin-nano/board.toml"),
    ),
    (
        "jetson-xavier-nx",
        include_str!("../../../boards/jetson-xavier-nx/board.toml"),
    ),
    (
        "raspberry-pi-5",
        include_str!("../../../boards/raspberry-pi-5/board.toml"),
    ),
    (
        "x86-kiosk",
        include_str!("../../../boards/x86-kiosk/board.toml"),
    ),
];

/// The compiled-in profile called `name`.
pub fn board(name: &str) -> Option<&'static str> {
    BOARDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The bundled network's name, as a literal for `concat!`.
#[cfg(feature = "bundled-net")]
macro_rules! net_name {
    () => {
        "g170-b6c96"
    };
}

/// The default network, when this build carries one.
#[cfg(feature = "bundled-net")]
pub const NET: Option<&BundledNet> = Some(&BundledNet {
    name: net_name!(),
    bytes: include_bytes!("../../../models/g170-b6c96.bin.gz"),
});

/// The default network, when this build carries one.
#[cfg(not(feature = "bundled-net"))]
pub const NET: Option<&BundledNet> = None;

/// What `--version` prints: the crate's version and the bundled network.
#[cfg(feature = "bundled-net")]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (bundled network: ",
    net_name!(),
    ")"
);

/// What `--version` prints: the crate's version and the bundled network.
#[cfg(not(feature = "bundled-net"))]
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (no bundled network)");

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn every_profile_in_boards_is_compiled_in_verbatim() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../boards");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().join("board.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let compiled: Vec<String> = BOARDS.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(compiled, on_disk, "boards/ and BOARDS differ");
        for name in &on_disk {
            let text = std::fs::read_to_string(dir.join(name).join("board.toml")).unwrap();
            assert_eq!(board(name), Some(text.as_str()), "{name}");
        }
    }

    #[cfg(feature = "bundled-net")]
    #[test]
    fn the_bundled_net_is_the_manifest_entry() {
        let manifest: toml::Value =
            toml::from_str(include_str!("../../../models/manifest.toml")).unwrap();
        let net = NET.unwrap();
        let entry = manifest["model"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"].as_str() == Some(net.name))
            .expect("the bundled net is in models/manifest.toml");
        let desc = tengen_nn::model::parse_model(net.bytes).unwrap();
        assert_eq!(Some(desc.sha256.as_str()), entry["sha256"].as_str());
        assert!(VERSION.contains(net.name));
    }
}
