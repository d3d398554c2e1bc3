//! Board finding on real photographs (../shared/camera): the found corners against the
//! labelled ones, in line spacings, printed in the golden form with the worst image.

use std::path::{Path, PathBuf};

use tengen_test_support::{golden_line, shared_dir};
use tengen_vision::overlay::{draw_board, draw_line};
use tengen_vision::{find_board, read_image, FoundBoard, Frame, FrameFolder, FrameSource, Point};

/// A corner agrees when it is within this many line spacings of the label.
const AGREE_SPACINGS: f64 = 0.25;

/// Within this many spacings every corner is on the right intersection: the right grid and
/// size, whatever the sub-pixel placement (or the label's).
const RIGHT_GRID_SPACINGS: f64 = 0.5;

fn dist(a: Point, b: Point) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// The largest corner error in line spacings of `found` (a board of `n` lines) against the
/// labelled corners, under the assignment of found to labelled corners that fits best.
fn corner_error(found: &[Point; 4], labelled: &[Point; 4], n: usize) -> f64 {
    let spacing = (0..4)
        .map(|i| dist(labelled[i], labelled[(i + 1) % 4]))
        .sum::<f64>()
        / (4.0 * (n - 1) as f64);
    let mut best = f64::INFINITY;
    for p in permutations() {
        let worst = (0..4)
            .map(|i| dist(found[i], labelled[p[i]]))
            .fold(0.0, f64::max);
        best = best.min(worst);
    }
    best / spacing
}

/// How far the found corners lie outside the labelled ones on average, in line spacings,
/// along the directions from the labelled board's centre (negative: inside); a consistent
/// sign over many images points to lens bending or a labelling habit rather than noise.
fn outward(found: &[Point; 4], labelled: &[Point; 4], n: usize) -> f64 {
    let spacing = (0..4)
        .map(|i| dist(labelled[i], labelled[(i + 1) % 4]))
        .sum::<f64>()
        / (4.0 * (n - 1) as f64);
    let c = [
        labelled.iter().map(|p| p[0]).sum::<f64>() / 4.0,
        labelled.iter().map(|p| p[1]).sum::<f64>() / 4.0,
    ];
    let mut total = 0.0;
    for f in found {
        let l = labelled
            .iter()
            .min_by(|a, b| dist(**a, *f).total_cmp(&dist(**b, *f)))
            .unwrap();
        let r = dist(*l, c).max(1e-9);
        total += ((f[0] - l[0]) * (l[0] - c[0]) + (f[1] - l[1]) * (l[1] - c[1])) / r;
    }
    total / 4.0 / spacing
}

/// Where the board's four outermost lines are darkest, relative to where the finder put
/// them, in line spacings (positive: outwards), averaged over the four: near zero when the
/// corners sit on the outermost crossings, positive if refinement drifts onto the board's
/// edge or a line's outer side. Each offset takes the median grey along the line (stones on
/// the edge lines do not move it).
fn darkest_outer_offset(frame: &Frame, board: &FoundBoard) -> Option<f64> {
    let (w, h) = (frame.width(), frame.height());
    let grey = frame.to_grey();
    let sample = |p: Point| -> Option<f64> {
        let (x, y) = (p[0], p[1]);
        if !(x >= 0.0 && y >= 0.0 && x < (w - 1) as f64 && y < (h - 1) as f64) {
            return None;
        }
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let g = |xx: usize, yy: usize| f64::from(grey[yy * w + xx]);
        Some(
            (g(x0, y0) * (1.0 - fx) + g(x0 + 1, y0) * fx) * (1.0 - fy)
                + (g(x0, y0 + 1) * (1.0 - fx) + g(x0 + 1, y0 + 1) * fx) * fy,
        )
    };
    let last = (board.size.width() - 1) as f64;
    // Each outer line as (fixed coordinate is a column?, its value, outward sign).
    let edges = [
        (false, 0.0, -1.0),
        (false, last, 1.0),
        (true, 0.0, -1.0),
        (true, last, 1.0),
    ];
    let mut offsets = Vec::new();
    for (col, at, out) in edges {
        let mut best: Option<(f64, f64)> = None;
        for k in -15..=15 {
            let t = f64::from(k) * 0.02;
            let mut along: Vec<f64> = (1..(4 * last as i64))
                .filter_map(|s| {
                    let a = s as f64 / 4.0;
                    let b = at + out * t;
                    board.point(if col { b } else { a }, if col { a } else { b })
                })
                .filter_map(sample)
                .collect();
            if along.len() < 8 {
                continue;
            }
            along.sort_by(f64::total_cmp);
            let median = along[along.len() / 2];
            if best.is_none_or(|b| median < b.1) {
                best = Some((t, median));
            }
        }
        offsets.extend(best.map(|b| b.0));
    }
    (offsets.len() == 4).then(|| offsets.iter().sum::<f64>() / 4.0)
}

fn permutations() -> Vec<[usize; 4]> {
    let mut out = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    let p = [a, b, c, d];
                    if (0..4).all(|i| p[..i].iter().all(|&q| q != p[i])) {
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

/// One labelled image: its path, its corners, and the corners as the label files give them
/// before any correction (the same where there is none).
type Case = (PathBuf, [Point; 4], [Point; 4]);

/// Runs the finder on every labelled image: prints the golden line, the count against the
/// uncorrected labels where they differ, the worst image, and where the outermost lines are
/// darkest; returns how many agree, how many are on the right grid, and that mean offset.
fn measure(set: &str, cases: &[Case]) -> (usize, usize, f64) {
    let mut agreed = 0;
    let mut agreed_raw = 0;
    let mut right_grid = 0;
    let mut worst: Option<(f64, String)> = None;
    // On the right grid: where the outermost lines are darkest, and how far outside the
    // labels the found corners are (both in spacings, outwards positive).
    let mut darkest = Vec::new();
    let mut outwards = Vec::new();
    let only = std::env::var("TENGEN_VISION_ONLY").ok();
    let overlay_dir = std::env::var_os("TENGEN_VISION_OVERLAY").map(PathBuf::from);
    for (path, labelled, raw) in cases {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let frame = read_image(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let found = find_board(&frame);
        if let Some(dir) = &overlay_dir {
            write_overlay(dir, &name, &frame, found.as_ref().ok(), labelled);
        }
        if let Ok(b) = &found {
            if corner_error(&b.corners, raw, b.size.width()) <= AGREE_SPACINGS {
                agreed_raw += 1;
            }
        }
        let (err, what) = match found {
            Ok(b) => {
                let e = corner_error(&b.corners, labelled, b.size.width());
                let out = outward(&b.corners, labelled, b.size.width());
                let dark = darkest_outer_offset(&frame, &b);
                if e <= RIGHT_GRID_SPACINGS {
                    outwards.push(out);
                    darkest.extend(dark);
                }
                (
                    e,
                    format!(
                        "{}x{} score {:.2}, error {e:.2} spacings (outward {out:+.2}, \
                         outer lines darkest at {})",
                        b.size.width(),
                        b.size.width(),
                        b.score,
                        dark.map_or("?".to_string(), |d| format!("{d:+.2}"))
                    ),
                )
            }
            Err(why) => (f64::INFINITY, format!("no board ({why})")),
        };
        if std::env::var_os("TENGEN_VISION_VERBOSE").is_some() {
            println!("  {name}: {what}");
        }
        if err <= AGREE_SPACINGS {
            agreed += 1;
        }
        if err <= RIGHT_GRID_SPACINGS {
            right_grid += 1;
        }
        if worst.as_ref().is_none_or(|w| err > w.0) {
            worst = Some((err, format!("{name}: {what}")));
        }
    }
    println!(
        "{}",
        golden_line(&format!("camera {set}"), agreed, cases.len())
    );
    println!(
        "golden camera {set}: {right_grid}/{} within half a spacing (the right grid and size)",
        cases.len()
    );
    if cases.iter().any(|c| c.1 != c.2) {
        println!(
            "golden camera {set}: {agreed_raw}/{} against the uncorrected label centres",
            cases.len()
        );
    }
    if let Some((_, w)) = worst {
        println!("golden camera {set}: worst image {w}");
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "golden camera {set}: on the right grid, found corners {:+.3} spacing outside the \
         labels ({} of {} outwards); the outermost lines darkest {:+.3} spacing from the found ones",
        mean(&outwards),
        outwards.iter().filter(|&&o| o > 0.0).count(),
        outwards.len(),
        mean(&darkest)
    );
    (agreed, right_grid, mean(&darkest))
}

/// Draws the found grid (green, red corners) and the labelled corners (blue) into `dir`,
/// for looking at what the finder saw (set TENGEN_VISION_OVERLAY=dir).
fn write_overlay(
    dir: &Path,
    name: &str,
    frame: &Frame,
    found: Option<&FoundBoard>,
    labelled: &[Point; 4],
) {
    let mut out = frame.clone().into_rgb();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.raw.png")), out.to_png().unwrap()).unwrap();
    if let Some(b) = found {
        draw_board(&mut out, b);
    }
    for c in labelled {
        for d in -3..=3 {
            let d = f64::from(d);
            draw_line(
                &mut out,
                [c[0] - 3.0, c[1] + d],
                [c[0] + 3.0, c[1] + d],
                [0, 0, 255],
            );
        }
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), out.to_png().unwrap()).unwrap();
}

#[test]
fn roboflow_corners_are_found_within_a_quarter_spacing() {
    let Some(root) = shared_dir(
        "golden camera roboflow-corners",
        &["camera/roboflow-corners/labels"],
    ) else {
        return;
    };
    let dir = root.join("camera/roboflow-corners");
    let mut cases = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.join("images"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for img in names {
        let stem = img.file_stem().unwrap().to_string_lossy().to_string();
        let labels =
            std::fs::read_to_string(dir.join("labels").join(format!("{stem}.txt"))).unwrap();
        let (w, h) = image_size(&img);
        let boxes: Vec<[f64; 4]> = labels
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: Vec<f64> = l.split_whitespace().map(|t| t.parse().unwrap()).collect();
                [v[1], v[2], v[3], v[4]]
            })
            .collect();
        assert_eq!(boxes.len(), 4, "{stem}: four corner boxes");
        let pts = unclipped_centres(&boxes).map(|[x, y]| [x * w - 0.5, y * h - 0.5]);
        let raw = std::array::from_fn(|i| [boxes[i][0] * w - 0.5, boxes[i][1] * h - 0.5]);
        cases.push((img, pts, raw));
    }
    assert_eq!(cases.len(), 186);
    let (agreed, right_grid, darkest) = measure("roboflow-corners", &cases);
    if std::env::var_os("TENGEN_VISION_ONLY").is_some() {
        return;
    }
    // A floor a little under what the finder reaches now, so a regression fails.
    assert!(agreed >= ROBOFLOW_FLOOR, "{agreed} < {ROBOFLOW_FLOOR}");
    assert!(
        right_grid >= ROBOFLOW_GRID_FLOOR,
        "{right_grid} < {ROBOFLOW_GRID_FLOOR}"
    );
    // The found corners sit on the outermost crossings, not outside them (-0.005 measured):
    // the labels' inward offset is theirs.
    assert!(
        darkest.abs() < MAX_LINE_OFFSET,
        "outer lines off by {darkest:+.3}"
    );
}

/// How far, in spacings, the outermost lines may be darkest from where the finder put them,
/// on average over the images on the right grid.
const MAX_LINE_OFFSET: f64 = 0.03;

/// Agreeing roboflow images below which the test fails (87 of 186 measured when first set,
/// 84 when lowered: the labels' own offset, 0.137 spacing, leaves a few hundredths of a
/// spacing of fit to move an image across the quarter; 95 since lines are found among
/// ridges, 99 since they are snapped onto ridges).
const ROBOFLOW_FLOOR: usize = 94;
/// Roboflow images on the right grid (within half a spacing) below which the test fails
/// (155 of 186 measured when set, 173 since lines are found among ridges, 185 since they
/// are snapped onto ridges).
const ROBOFLOW_GRID_FLOOR: usize = 182;
/// Agreeing Gomrade sequence frames below which the test fails (12 of 12 measured when set).
const GOMRADE_FLOOR: usize = 11;

/// The corners' box centres (normalised), each box that the image border cut restored to
/// the size of the image's uncut boxes first. The augmented images were rotated and sheared
/// after labelling, which pushed some corner boxes partly out of the frame; a cut box keeps
/// its inner edge, so its centre moves inwards by half the cut, up to a third of a spacing.
fn unclipped_centres(boxes: &[[f64; 4]]) -> [Point; 4] {
    // A box edge within half a pixel of the border was cut there.
    const AT_BORDER: f64 = 0.5 / 608.0;
    let cut = |b: &[f64; 4], axis: usize| {
        let (c, half) = (b[axis], b[axis + 2] / 2.0);
        (c - half <= AT_BORDER, c + half >= 1.0 - AT_BORDER)
    };
    // The typical uncut size along each axis, from this image's boxes.
    let size = |axis: usize| {
        let mut v: Vec<f64> = boxes
            .iter()
            .filter(|b| cut(b, axis) == (false, false))
            .map(|b| b[axis + 2])
            .collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let sizes = [size(0), size(1)];
    std::array::from_fn(|i| {
        let b = &boxes[i];
        let mut centre = [b[0], b[1]];
        for axis in 0..2 {
            let Some(full) = sizes[axis].filter(|&s| s > b[axis + 2]) else {
                continue;
            };
            let (c, half) = (b[axis], b[axis + 2] / 2.0);
            match cut(b, axis) {
                (true, false) => centre[axis] = c + half - full / 2.0,
                (false, true) => centre[axis] = c - half + full / 2.0,
                _ => {}
            }
        }
        centre
    })
}

fn image_size(path: &Path) -> (f64, f64) {
    let f = read_image(path).unwrap();
    (f.width() as f64, f.height() as f64)
}

#[test]
fn gomrade_sequence_corners_are_found_within_a_quarter_spacing() {
    let Some(root) = shared_dir("golden camera gomrade", &["camera/gomrade/manifest.jsonl"]) else {
        return;
    };
    let dir = root.join("camera/gomrade");
    let manifest = std::fs::read_to_string(dir.join("manifest.jsonl")).unwrap();
    let mut cases = Vec::new();
    for line in manifest.lines().filter(|l| !l.trim().is_empty()) {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(corners) = rec["corners_grid_px"].as_array() else {
            continue;
        };
        let pts: Vec<Point> = corners
            .iter()
            .map(|c| [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()])
            .collect();
        let corners = [pts[0], pts[1], pts[2], pts[3]];
        cases.push((dir.join(rec["image"].as_str().unwrap()), corners, corners));
    }
    assert_eq!(cases.len(), 12);
    let (agreed, _, darkest) = measure("gomrade-sequence", &cases);
    if std::env::var_os("TENGEN_VISION_ONLY").is_some() {
        return;
    }
    assert!(agreed >= GOMRADE_FLOOR, "{agreed} < {GOMRADE_FLOOR}");
    assert!(
        darkest.abs() < MAX_LINE_OFFSET,
        "outer lines off by {darkest:+.3}"
    );
}

#[test]
fn the_gomrade_sequence_reads_as_a_folder_in_natural_order() {
    let Some(root) = shared_dir("camera folder source", &["camera/gomrade/testing_sequence"])
    else {
        return;
    };
    let dir = root.join("camera/gomrade/testing_sequence");
    let mut folder = FrameFolder::open(&dir).unwrap();
    assert_eq!(folder.remaining(), 12);
    let mut count = 0;
    while let Some(frame) = folder.next_frame().unwrap() {
        // Frame k is the same picture as the file k.jpg read on its own.
        let single = read_image(&dir.join(format!("{count}.jpg"))).unwrap();
        assert_eq!(frame, single, "frame {count}");
        count += 1;
    }
    assert_eq!(count, 12);
    // A cut-off copy of a real frame is an error, not a picture.
    let bytes = std::fs::read(dir.join("0.jpg")).unwrap();
    assert!(tengen_vision::Frame::decode(&bytes[..bytes.len() / 2]).is_err());
}
