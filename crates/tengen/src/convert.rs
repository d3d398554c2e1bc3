//! `tengen convert`: a KataGo `.bin.gz` network to an ONNX graph that follows
//! KataGo's ONNX contract.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tengen_nn::model::load_model;
use tengen_nn::onnx::build::{build_graph, write_onnx, BuildOptions};

/// Options of `tengen convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The KataGo model (`.bin.gz`, or `.bin`).
    model: PathBuf,
    /// Where to write the graph; a name ending in `.gz` is written gzip-compressed.
    #[arg(short, long)]
    output: PathBuf,
    /// Board buffer the graph is built for, `19x19` or `19` (columns x rows).
    #[arg(long, default_value = "19x19")]
    board: String,
    /// Build without board masking: only valid for positions that fill the whole buffer.
    #[arg(long)]
    exact: bool,
    /// Model name written in `katago.name` (default: the model's own name).
    #[arg(long)]
    name: Option<String>,
}

/// Parses `19x19`, `9x13` or `19`.
pub fn parse_board(text: &str) -> Result<(usize, usize)> {
    let num = |s: &str| -> Result<usize> {
        s.trim()
            .parse::<usize>()
            .with_context(|| format!("bad board size {text:?}: expected e.g. 19x19"))
    };
    let (x, y) = match text.split_once(['x', 'X']) {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(text)?;
            (n, n)
        }
    };
    if !(tengen_rules::MIN_SIZE..=tengen_rules::MAX_SIZE).contains(&x)
        || !(tengen_rules::MIN_SIZE..=tengen_rules::MAX_SIZE).contains(&y)
    {
        bail!("board {x}x{y} is outside 2x2..25x25");
    }
    Ok((x, y))
}

/// Converts a model and writes the graph.
pub fn run(a: ConvertArgs) -> Result<()> {
    let (x_len, y_len) = parse_board(&a.board)?;
    let started = Instant::now();
    let spinner = ProgressBar::new_spinner().with_message(format!("reading {}", a.model.display()));
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    let model = load_model(&a.model).with_context(|| format!("reading {}", a.model.display()))?;
    spinner.finish_and_clear();
    log::info!(
        "read {} (model version {}, {} parameters) in {:.1}s",
        model.name,
        model.model_version,
        model.num_parameters(),
        started.elapsed().as_secs_f64()
    );

    let bar = ProgressBar::new(1).with_style(
        ProgressStyle::with_template("building graph {bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let opts = BuildOptions {
        x_len,
        y_len,
        exact: a.exact,
        name: a.name.as_deref(),
        progress: Some(&progress),
    };
    let graph = build_graph(&model, &opts).context("building the ONNX graph")?;
    bar.finish_and_clear();

    let bytes = write_onnx(&graph);
    let gz = a.output.extension().is_some_and(|e| e == "gz");
    let data = if gz {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&bytes)?;
        enc.finish()?
    } else {
        bytes
    };
    // Write beside the target and rename, so a crash never leaves a half-written model.
    let tmp = a.output.with_extension("partial");
    std::fs::write(&tmp, &data).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &a.output)
        .with_context(|| format!("renaming to {}", a.output.display()))?;
    println!(
        "wrote {} ({} bytes, {}x{} buffer, {}) in {:.1}s",
        a.output.display(),
        data.len(),
        x_len,
        y_len,
        if a.exact {
            "exact, no masking"
        } else {
            "masked"
        },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
