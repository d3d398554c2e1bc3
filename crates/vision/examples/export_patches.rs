//! Writes the stone classifier's real training patches: every labelled Gomrade still in the
//! named folders (by default the five stills 1/ to 5/, so the 12-frame testing sequence stays
//! held out) goes through automatic board finding and the reader's rectification and colour
//! correction, exactly as at run time, and each intersection's patch is written with its
//! label.
//!
//! With `--rendered K` it also renders K random scenes (9x9, 13x13 and 19x19 in turn, the
//! renderer's default variation with hands over the board in a third of them; seeds from
//! 1,000,000 up, apart from the tests' seeds) and writes every point's patch, taken through
//! the homography fitted to the drawn intersections as a found board would be, labelled with
//! the scene's stones, or occluded where a hand covers the point.
//!
//! `cargo run -p tengen-vision --example export_patches -- OUT_DIR [--rendered K] [FOLDER...]`
//! writes `OUT_DIR/{real,rendered}_patches.f32` (little-endian f32, N x 3 x 16 x 16) and
//! `OUT_DIR/{real,rendered}_labels.u8` (N classes: 0 empty, 1 black, 2 white, 3 occluded).
//! The shared data is found as the tests find it (`TENGEN_SHARED`, else ../shared beside
//! the repository).

use std::io::Write;
use std::path::PathBuf;

use tengen_rules::{BoardSize, Player};
use tengen_vision::read::rectify::PATCH_LEN;
use tengen_vision::read::Class;
use tengen_vision::render::{render, Scene, Variation};
use tengen_vision::{find_board, read_image, FoundBoard, Homography, PointState, StoneReader};

/// The first seed of the rendered training scenes (the tests use small seeds).
const FIRST_SEED: u64 = 1_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: export_patches OUT_DIR [--rendered K] [FOLDER...]";
    let out = PathBuf::from(args.next().ok_or(usage)?);
    let mut folders: Vec<String> = Vec::new();
    let mut rendered = 0usize;
    while let Some(a) = args.next() {
        if a == "--rendered" {
            rendered = args.next().ok_or(usage)?.parse()?;
        } else {
            folders.push(a);
        }
    }
    std::fs::create_dir_all(&out)?;
    if rendered > 0 {
        export_rendered(&out, rendered)?;
    }
    if folders.is_empty() {
        folders = ["1", "2", "3", "4", "5"].map(String::from).to_vec();
    }
    let root = match std::env::var_os("TENGEN_SHARED") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
    .join("camera/gomrade");
    let mut patches = std::io::BufWriter::new(std::fs::File::create(out.join("real_patches.f32"))?);
    let mut labels = Vec::new();
    let mut reader = StoneReader::classical();
    for folder in &folders {
        let mut names: Vec<PathBuf> = std::fs::read_dir(root.join(folder))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jpg"))
            .collect();
        names.sort();
        for image in names {
            let truth = parse_labels(&std::fs::read_to_string(image.with_extension("txt"))?)?;
            let frame = read_image(&image)?;
            let Ok(board) = find_board(&frame) else {
                eprintln!("{}: no board found, skipped", image.display());
                continue;
            };
            if board.size.width() != 19 {
                eprintln!("{}: found {}, skipped", image.display(), board.size);
                continue;
            }
            // The labels' orientation is the one under which the classical reading agrees best.
            let reading = reader.read(&frame, &board);
            let (turns, agreed) = (0..4)
                .map(|t| {
                    let a = (0..361)
                        .filter(|&i| reading.points[turned(i, t)].state == truth[i])
                        .count();
                    (t, a)
                })
                .max_by_key(|&(_, a)| a)
                .unwrap_or((0, 0));
            eprintln!(
                "{}: {agreed}/361 by the classical rule, {turns} turns",
                image.display()
            );
            let mut label_of = [0u8; 361];
            for (i, t) in truth.iter().enumerate() {
                label_of[turned(i, turns)] = match t {
                    PointState::Black => Class::Black as u8,
                    PointState::White => Class::White as u8,
                    _ => Class::Empty as u8,
                };
            }
            let all = reader.patches();
            for (j, label) in label_of.iter().enumerate() {
                for v in &all[j * PATCH_LEN..(j + 1) * PATCH_LEN] {
                    patches.write_all(&v.to_le_bytes())?;
                }
                labels.push(*label);
            }
        }
    }
    patches.flush()?;
    std::fs::write(out.join("real_labels.u8"), &labels)?;
    eprintln!("{} patches written to {}", labels.len(), out.display());
    Ok(())
}

/// Renders `count` random scenes and writes their patches and labels.
fn export_rendered(out: &std::path::Path, count: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mut patches =
        std::io::BufWriter::new(std::fs::File::create(out.join("rendered_patches.f32"))?);
    let mut labels = Vec::new();
    let mut reader = StoneReader::classical();
    for k in 0..count {
        let seed = FIRST_SEED + k as u64;
        let n = [9, 13, 19][k % 3];
        let size = BoardSize::square(n)?;
        let mut rng = fastrand::Rng::with_seed(seed);
        let density = rng.f64() * 0.7;
        let stones: Vec<Option<Player>> = (0..n * n)
            .map(|_| {
                (rng.f64() < density).then(|| {
                    if rng.bool() {
                        Player::Black
                    } else {
                        Player::White
                    }
                })
            })
            .collect();
        let variation = Variation {
            hand_probability: 0.35,
            ..Variation::default()
        };
        let scene = Scene::random(size, stones.clone(), seed, &variation);
        let shot = render(&scene);
        let Some(board) = drawn_board(&shot, size) else {
            continue;
        };
        reader.prepare(&shot.frame, &board);
        for (i, stone) in stones.iter().enumerate() {
            if reader.outside()[i] > 0.25 {
                continue;
            }
            let label = if shot.occluded[i] {
                Class::Occluded
            } else {
                match stone {
                    Some(Player::Black) => Class::Black,
                    Some(Player::White) => Class::White,
                    None => Class::Empty,
                }
            };
            for v in &reader.patches()[i * PATCH_LEN..(i + 1) * PATCH_LEN] {
                patches.write_all(&v.to_le_bytes())?;
            }
            labels.push(label as u8);
        }
    }
    patches.flush()?;
    std::fs::write(out.join("rendered_labels.u8"), &labels)?;
    eprintln!("{} rendered patches written", labels.len());
    Ok(())
}

/// The board as a finder would report it: the homography fitted to every drawn
/// intersection (the lens bends lines a little, which one homography averages).
fn drawn_board(shot: &tengen_vision::render::Rendered, size: BoardSize) -> Option<FoundBoard> {
    let n = size.width();
    let src: Vec<[f64; 2]> = (0..n * n)
        .map(|i| [(i % n) as f64, (i / n) as f64])
        .collect();
    let dst: Option<Vec<[f64; 2]>> = src.iter().map(|p| shot.point(p[0], p[1])).collect();
    let grid = Homography::fit(&src, &dst?)?;
    let last = (n - 1) as f64;
    let corners = [[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]].map(|p| grid.apply(p));
    Some(FoundBoard {
        size,
        corners: [corners[0]?, corners[1]?, corners[2]?, corners[3]?],
        grid,
        score: 1.0,
    })
}

/// The reading index of label index `i` on a 19x19 board turned a quarter `turns` times.
fn turned(i: usize, turns: usize) -> usize {
    let (c, r) = (0..turns).fold((i % 19, i / 19), |(c, r), _| (18 - r, c));
    r * 19 + c
}

fn parse_labels(text: &str) -> Result<Vec<PointState>, String> {
    let v: Vec<PointState> = text
        .split_whitespace()
        .map(|t| match t {
            "B" => Ok(PointState::Black),
            "W" => Ok(PointState::White),
            "." => Ok(PointState::Empty),
            other => Err(format!("label token {other:?}")),
        })
        .collect::<Result<_, _>>()?;
    if v.len() != 361 {
        return Err(format!("{} labels, expected 361", v.len()));
    }
    Ok(v)
}
