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
