//! `tengen vision`: the camera board reader from the command line.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tengen_vision::{find_board, overlay, read_image};

/// `tengen vision` subcommands.
#[derive(Subcommand, Debug)]
pub enum VisionCommand {
    /// Find the board in an image (JPEG or PNG): print its size, corners and score.
    Find(FindArgs),
}

/// Options of `tengen vision find`.
#[derive(Args, Debug)]
pub struct FindArgs {
    /// The image file.
    image: PathBuf,
    /// Also write the image with the found grid drawn over it, as PNG.
    #[arg(long, value_name = "OUT.png")]
    overlay: Option<PathBuf>,
}

/// Runs a `tengen vision` subcommand.
pub fn run(cmd: VisionCommand) -> Result<()> {
    match cmd {
        VisionCommand::Find(a) => find(a),
    }
}

fn find(args: FindArgs) -> Result<()> {
    let frame = read_image(&args.image)?;
    let found = find_board(&frame);
    match &found {
        Ok(b) => {
            let n = b.size.width();
            println!("board {n}x{n} score {:.3}", b.score);
            for (name, [x, y]) in ["top-left", "top-right", "bottom-right", "bottom-left"]
                .iter()
                .zip(b.corners)
            {
                println!("{name} {x:.1} {y:.1}");
            }
        }
        Err(why) => println!("no board: {why}"),
    }
    if let Some(out) = args.overlay {
        let mut image = frame.into_rgb();
        if let Ok(b) = &found {
            overlay::draw_board(&mut image, b);
        }
        let png = image.to_png().context("encoding the overlay")?;
        std::fs::write(&out, png).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(())
}
