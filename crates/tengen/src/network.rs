//! Where the binary gets a network from: a KataGo `.bin.gz` (a graph is built for the
//! board size at hand) or an ONNX file that follows KataGo's contract.

use std::path::Path;

use anyhow::{bail, Context, Result};
use tengen_nn::model::load_model;
use tengen_nn::onnx::build::{build_graph, BuildOptions};
use tengen_nn::onnx::load::{load_path, LoadedModel, DEFAULT_MAX_MODEL_BYTES};
use tengen_rules::BoardSize;

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
pub fn load_for_board(path: &Path, size: BoardSize) -> Result<LoadedModel> {
    if is_onnx(path) {
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
        return Ok(model);
    }
    let desc = load_model(path).with_context(|| format!("reading {}", path.display()))?;
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
pub fn load_cached(path: &Path, size: BoardSize, dir: &Path) -> Result<LoadedModel> {
    if is_onnx(path) {
        return load_for_board(path, size);
    }
    let stat = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().replace(['.', ' '], "_"))
        .unwrap_or_default();
    let prefix = format!("{stem}-{}x{}-", size.width(), size.height());
    let file = dir.join(format!("{prefix}{:016x}.onnx", cache_key(path, &stat)));
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
    let model = load_for_board(path, size)?;
    match store(dir, &file, &prefix, &model.to_bytes()) {
        Ok(()) => log::info!("cached the graph for {size} in {}", file.display()),
        Err(e) => log::warn!("cannot cache the graph in {}: {e}", dir.display()),
    }
    Ok(model)
}

/// Identifies the model file's contents cheaply (path, length, modification time) and the
/// converter (Tengen's version): any change misses the cache.
fn cache_key(path: &Path, stat: &std::fs::Metadata) -> u64 {
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

/// Writes `bytes` to `file` through a synced temporary file and a rename, so that a crash
/// never leaves half a graph under the final name; then removes stale files of `prefix`.
fn store(dir: &Path, file: &Path, prefix: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let tmp = file.with_extension("onnx.tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, file)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(prefix) && entry.path() != file {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}
