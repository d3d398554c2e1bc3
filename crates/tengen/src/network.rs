//! Where the binary gets a network from: a KataGo `.bin.gz` (a graph is built for the
//! board size at hand) or an ONNX file that follows KataGo's contract.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use tengen_nn::model::{load_model, parse_model, ModelDesc};
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::{load_path, LoadedModel, DEFAULT_MAX_MODEL_BYTES};
use tengen_rules::BoardSize;

use crate::bundled::{self, BundledNet};

/// Where a network comes from: a file, or the one compiled into the binary.
#[derive(Clone, Debug)]
pub enum ModelSource {
    /// A `.bin.gz` or ONNX file.
    File(PathBuf),
    /// The network compiled into the binary.
    Bundled(&'static BundledNet),
}

/// The word that names the bundled network where a model file is asked for.
pub const BUNDLED: &str = "bundled";
/// The word that names no network (the classical engine judges positions).
pub const NONE: &str = "none";

impl ModelSource {
    /// The bundled network, if this build has one.
    pub fn bundled() -> Option<ModelSource> {
        bundled::NET.map(ModelSource::Bundled)
    }

    /// What a `--model` or `model =` value names: `bundled`, `none` (no network: `None`),
    /// or a file (`./bundled` names a file of that name).
    pub fn parse(given: &Path) -> Result<Option<ModelSource>> {
        if given == Path::new(BUNDLED) {
            return match ModelSource::bundled() {
                Some(m) => Ok(Some(m)),
                None => bail!("this build has no bundled network (feature bundled-net)"),
            };
        }
        if given == Path::new(NONE) {
            return Ok(None);
        }
        Ok(Some(ModelSource::File(given.to_path_buf())))
    }

    /// The network for a `--model`/`model =` value; without one, the bundled network
    /// unless `classic` asks for the classical engine (which then needs no network).
    pub fn choose(given: Option<&Path>, classic: bool) -> Result<Option<ModelSource>> {
        match given {
            Some(p) => ModelSource::parse(p),
            None if classic => Ok(None),
            None => Ok(ModelSource::bundled()),
        }
    }

    /// The KataGo model's layers, for the native backend (an ONNX file has none to give).
    pub fn desc(&self) -> Result<ModelDesc> {
        match self {
            ModelSource::File(p) if is_onnx(p) => bail!(
                "the native backend runs KataGo model files (.bin.gz), not ONNX graphs like {}",
                p.display()
            ),
            _ => self.katago_desc(),
        }
    }

    /// Reads and parses a KataGo model (not an ONNX file).
    fn katago_desc(&self) -> Result<ModelDesc> {
        match self {
            ModelSource::File(path) => {
                load_model(path).with_context(|| format!("reading {}", path.display()))
            }
            ModelSource::Bundled(net) => {
                parse_model(net.bytes).with_context(|| format!("reading the bundled {}", net.name))
            }
        }
    }

    /// The model's name as the analysis engine's `query_models` reports it (file name,
    /// and the name without its extensions).
    pub fn names(&self) -> (String, String) {
        match self {
            ModelSource::File(p) => {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let internal = name
                    .trim_end_matches(".gz")
                    .trim_end_matches(".bin")
                    .trim_end_matches(".onnx")
                    .to_string();
                (name, internal)
            }
            ModelSource::Bundled(net) => (format!("{}.bin.gz", net.name), net.name.to_string()),
        }
    }
}

impl fmt::Display for ModelSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSource::File(p) => write!(f, "{}", p.display()),
            ModelSource::Bundled(net) => write!(f, "the bundled network {}", net.name),
        }
    }
}

/// True if the file name says ONNX (`.onnx` or `.onnx.gz`).
pub fn is_onnx(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    name.ends_with(".onnx") || name.ends_with(".onnx.gz")
}

/// The network for boards of `size`: an exact-size graph built from a KataGo model, or an
/// ONNX file whose buffer holds the board.
pub fn load_for_board(source: &ModelSource, size: BoardSize) -> Result<LoadedModel> {
    let path = match source {
        ModelSource::File(p) if is_onnx(p) => p,
        _ => return build_for_board(source.katago_desc()?, size),
    };
    let model = load_path(path, DEFAULT_MAX_MODEL_BYTES)
        .with_context(|| format!("loading {}", path.display()))?;
    let m = &model.metadata;
    let (x, y) = (m.nn_x_len as usize, m.nn_y_len as usize);
    if x < size.width() || y < size.height() {
        bail!(
            "{} is built for a {x}x{y} buffer; a {size} board does not fit",
            path.display()
        );
    }
    if m.require_exact_nn_len && (x, y) != (size.width(), size.height()) {
        bail!(
            "{} is an exact {x}x{y} graph without masking; it cannot evaluate a {size} board",
            path.display()
        );
    }
    Ok(model)
}

/// An exact-size graph for boards of `size`, built from a KataGo model.
fn build_for_board(desc: ModelDesc, size: BoardSize) -> Result<LoadedModel> {
    let opts = BuildOptions {
        x_len: size.width(),
        y_len: size.height(),
        exact: true,
        name: None,
        progress: None,
    };
    let proto = build_graph(&desc, &opts).context("building the network graph")?;
    LoadedModel::from_proto(proto).context("checking the built graph")
}

/// Like [`load_for_board`], keeping each graph built from a KataGo model in `dir` (one
/// ONNX file per model file and board size), so that a restart skips reading and
/// converting the network. A cached file that no longer loads is rebuilt; files for older
/// versions of the same model are removed when a new one is written. ONNX files are
/// loaded as they are.
pub fn load_cached(source: &ModelSource, size: BoardSize, dir: &Path) -> Result<LoadedModel> {
    let (stem, key) = match source {
        ModelSource::File(path) if is_onnx(path) => return load_for_board(source, size),
        ModelSource::File(path) => {
            let stat =
                std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
            let stem = path
                .file_name()
                .map(|n| n.to_string_lossy().replace(['.', ' '], "_"))
                .unwrap_or_default();
            (stem, file_key(path, &stat))
        }
        ModelSource::Bundled(net) => (format!("bundled-{}", net.name), bytes_key(net.bytes)),
    };
    let prefix = format!("{stem}-{}x{}-", size.width(), size.height());
    let file = dir.join(format!("{prefix}{key:016x}.onnx"));
    if file.is_file() {
        match load_path(&file, DEFAULT_MAX_MODEL_BYTES) {
            Ok(model) => {
                log::info!("network for {size} from the cache {}", file.display());
                return Ok(model);
            }
            Err(e) => {
                log::warn!("discarding the cached graph {}: {e}", file.display());
                let _ = std::fs::remove_file(&file);
            }
        }
    }
    let model = load_for_board(source, size)?;
    match store(dir, &file, &prefix, &model.to_bytes()) {
        Ok(()) => log::info!("cached the graph for {size} in {}", file.display()),
        Err(e) => log::warn!("cannot cache the graph in {}: {e}", dir.display()),
    }
    Ok(model)
}

/// Identifies the model file's contents cheaply (path, length, modification time) and the
/// converter (Tengen's version): any change misses the cache.
fn file_key(path: &Path, stat: &std::fs::Metadata) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .hash(&mut h);
    stat.len().hash(&mut h);
    stat.modified().ok().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    h.finish()
}

/// Identifies a compiled-in model by its bytes themselves and the converter (Tengen's
/// version), so that a binary with another bundled net never reads this one's graphs.
fn bytes_key(bytes: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    h.finish()
}

/// Space a graph leaves free beside it: the journal and the archived games come first.
const KEEP_FREE: u64 = 16 << 20;

/// Writes `bytes` to `file` through a synced temporary file and a rename, so that a crash
/// never leaves half a graph under the final name; then removes stale files of `prefix`.
/// Nothing is written unless the filesystem keeps [`KEEP_FREE`] bytes free after it, and
/// a failed write leaves no temporary file behind.
fn store(dir: &Path, file: &Path, prefix: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let stat = nix::sys::statvfs::statvfs(dir).map_err(std::io::Error::from)?;
    // The block counts are narrower than u64 on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    let free = u64::from(stat.blocks_available()).saturating_mul(u64::from(stat.fragment_size()));
    if free < bytes.len() as u64 + KEEP_FREE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            format!(
                "{} bytes free, a graph of {} needs {} more kept free",
                free,
                bytes.len(),
                KEEP_FREE
            ),
        ));
    }
    let tmp = file.with_extension("onnx.tmp");
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(prefix) && entry.path() != file {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}
