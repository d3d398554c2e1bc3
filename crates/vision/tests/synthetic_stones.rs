//! The stone reader on rendered frames (the project's renderer, fixed seeds, the issue's
//! synthetic variation: tilt up to 45°, coloured light, glare on 20% of stones) across 9x9,
//! 13x13 and 19x19. Two measurements: with the board given by the renderer's drawn
//! intersections (the classifier alone), and with automatic board finding (compared under
//! the found board's four rotations). Printed: per-intersection accuracy (an `Unseen` point
//! counts as wrong) and the share of reported stones with the wrong colour.

mod support;
use support::stone_reader;

use tengen_rules::{BoardSize, Player};
use tengen_vision::render::{render, Rendered, Scene, Variation};
use tengen_vision::{find_board, BoardReading, FoundBoard, Homography, PointState};

/// Tallies over frames.
#[derive(Default)]
struct Tally {
    points: usize,
    right: usize,
    reported_stones: usize,
    wrong_colour: usize,
    false_stones: usize,
    /// Points read `Unseen` with no confidence at all: their patch is mostly off the frame.
    off_frame: usize,
    boards: usize,
    exact: usize,
    /// Why points were wrong, when the reader's probabilities were at hand.
    misses: Misses,
    /// The largest distance (cells) between where a patch was centred and half-way up the
    /// stone as drawn, over the boards read with the given board.
    centre_error: f64,
}

/// The wrong points by kind (the given board only, where the network's probabilities and
/// the renderer's labels of what is in view are known).
#[derive(Default)]
struct Misses {
    /// Unseen points the renderer puts outside the frame (a stone's centre off the picture).
    out_of_view: usize,
    /// Unseen because more than a quarter of the patch is off the frame, the point in view.
    patch_off: usize,
    /// Unseen because the network said occluded (there are no hands in these scenes).
    occluded: usize,
    /// Unseen because no class reached the confidence floor.
    doubtful: usize,
    /// A stone read as bare wood.
    stone_as_empty: usize,
}

impl Misses {
    fn add(&mut self, read: PointState, truth: PointState, probs: Option<[f32; 4]>, in_view: bool) {
        if read == truth {
            return;
        }
        match (read, probs) {
            (PointState::Unseen, _) if !in_view => self.out_of_view += 1,
            (PointState::Unseen, None) => self.patch_off += 1,
            (PointState::Unseen, Some(p)) if p[3] >= p[0].max(p[1]).max(p[2]) => self.occluded += 1,
            (PointState::Unseen, Some(_)) => self.doubtful += 1,
            (PointState::Empty, _) => self.stone_as_empty += 1,
            _ => {}
        }
    }
}

impl Tally {
    fn add(&mut self, reading: &BoardReading, truth: &[PointState]) {
        self.boards += 1;
        let mut all_right = true;
        for (p, t) in reading.points.iter().zip(truth) {
            self.points += 1;
            self.right += usize::from(p.state == *t);
            all_right &= p.state == *t;
            self.off_frame += usize::from(p.state == PointState::Unseen && p.confidence == 0.0);
            if matches!(p.state, PointState::Black | PointState::White) {
                self.reported_stones += 1;
                match t {
                    PointState::Empty => self.false_stones += 1,
                    t if *t != p.state => self.wrong_colour += 1,
                    _ => {}
                }
            }
        }
        self.exact += usize::from(all_right);
    }

    /// A board that was not found: every point wrong.
    fn missed(&mut self, n: usize) {
        self.boards += 1;
        self.points += n * n;
    }

    /// Adds the reasons for the misses of one board read with the given board.
    fn explain(
        &mut self,
        reading: &BoardReading,
        truth: &[PointState],
        probs: &[[f32; 4]],
        outside: &[f32],
        occluded: &[bool],
    ) {
        for (i, (p, t)) in reading.points.iter().zip(truth).enumerate() {
            // Probabilities count only where the patch was read (not mostly off the frame).
            let read = outside.get(i).is_some_and(|&o| o <= 0.25);
            let probs = probs.get(i).copied().filter(|_| read);
            self.misses.add(p.state, *t, probs, !occluded[i]);
        }
    }

    fn print_misses(&self) {
        let m = &self.misses;
        // A stone outside the picture cannot be seen: `Unseen` is the right reading there.
        println!(
            "  {}/{} points right ({:.3}%) with a point out of view right when unseen",
            self.right + m.out_of_view,
            self.points,
            100.0 * (self.right + m.out_of_view) as f64 / self.points.max(1) as f64
        );
        println!(
            "  patches centred within {:.2} cell of half-way up the stones drawn",
            self.centre_error
        );
        println!(
            "  misses: {} unseen out of view, {} unseen with the patch off the frame, {} taken \
             as occluded, {} doubtful, {} stones read empty",
            m.out_of_view, m.patch_off, m.occluded, m.doubtful, m.stone_as_empty
        );
    }

    fn print(&self, what: &str) {
        println!(
            "synthetic stones {what}: {}/{} points right ({:.3}%), {} of {} reported stones \
             the wrong colour ({:.3}%), {} on empty points, {} unseen as off the frame, {}/{} \
             boards exact",
            self.right,
            self.points,
            100.0 * self.right as f64 / self.points.max(1) as f64,
            self.wrong_colour,
            self.reported_stones,
            100.0 * self.wrong_colour as f64 / self.reported_stones.max(1) as f64,
            self.false_stones,
            self.off_frame,
            self.exact,
            self.boards
        );
    }

    fn wrong_colour_rate(&self) -> f64 {
        self.wrong_colour as f64 / self.reported_stones.max(1) as f64
    }

    fn accuracy(&self) -> f64 {
        self.right as f64 / self.points.max(1) as f64
    }
}

/// Scene `k`: sizes in turn, stones at a density drawn from the seed.
fn scene(k: u64) -> (Scene, Vec<PointState>) {
    let n = [9, 13, 19][(k % 3) as usize];
    let mut rng = fastrand::Rng::with_seed(k);
    let density = 0.1 + rng.f64() * 0.5;
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
    let truth = stones
        .iter()
        .map(|s| match s {
            Some(Player::Black) => PointState::Black,
            Some(Player::White) => PointState::White,
            None => PointState::Empty,
        })
        .collect();
    let scene = Scene::random(
        BoardSize::square(n).unwrap(),
        stones,
        k,
        &Variation::default(),
    );
    (scene, truth)
}

/// The board given by the drawn intersections (one homography fitted to all of them).
fn drawn_board(shot: &Rendered, size: BoardSize) -> FoundBoard {
    let n = size.width();
    let src: Vec<[f64; 2]> = (0..n * n)
        .map(|i| [(i % n) as f64, (i / n) as f64])
        .collect();
    let dst: Vec<[f64; 2]> = src
        .iter()
        .map(|p| shot.point(p[0], p[1]).unwrap())
        .collect();
    let grid = Homography::fit(&src, &dst).unwrap();
    FoundBoard {
        size,
        corners: shot.corners,
        grid,
        score: 1.0,
    }
}

/// The reading turned a quarter `turns` times (so row 0 follows another corner).
fn turned(reading: &BoardReading, turns: usize) -> BoardReading {
    let n = reading.size.width();
    let mut out = reading.clone();
    for i in 0..n * n {
        let (c, r) = (0..turns).fold((i % n, i / n), |(c, r), _| (n - 1 - r, c));
        out.points[i] = reading.points[r * n + c];
    }
    out
}

/// Writes the frame with its grid and a square on every point read wrong (red: unseen,
/// blue: a stone read as something else, yellow: a stone read on an empty point).
fn write_overlay(
    dir: &std::path::Path,
    name: &str,
    shot: &Rendered,
    board: &FoundBoard,
    reading: &BoardReading,
    truth: &[PointState],
) {
    if reading.points.iter().zip(truth).all(|(p, t)| p.state == *t) {
        return;
    }
    let mut frame = shot.frame.clone();
    tengen_vision::overlay::draw_board(&mut frame, board);
    let n = board.size.width();
    for (i, (p, t)) in reading.points.iter().zip(truth).enumerate() {
        if p.state == *t {
            continue;
        }
        let rgb = match (p.state, t) {
            (PointState::Unseen, _) => [255, 0, 0],
            (_, PointState::Empty) => [255, 255, 0],
            _ => [0, 0, 255],
        };
        let Some([x, y]) = board.grid.apply([(i % n) as f64, (i / n) as f64]) else {
            continue;
        };
        for d in -6i64..=6 {
            for (dx, dy) in [(d, -6), (d, 6), (-6, d), (6, d)] {
                frame.put(x as i64 + dx, y as i64 + dy, rgb);
            }
        }
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), frame.to_png().unwrap()).unwrap();
}

/// The largest distance (cells, on the board) between where the reader centres a patch
/// (`height::patch_shifts`) and where the renderer draws half-way up a stone, over the four
/// corner points and the centre.
fn patch_centre_error(shot: &Rendered, board: &FoundBoard, thickness: f64) -> f64 {
    let (w, h) = (shot.frame.width(), shot.frame.height());
    let mut shifts = Vec::new();
    tengen_vision::read::height::patch_shifts(board, w, h, &mut shifts);
    let n = board.size.width();
    let Some(inverse) = board.grid.inverse() else {
        return f64::INFINITY;
    };
    [0, n - 1, n * n - 1, n * (n - 1), n * n / 2]
        .into_iter()
        .filter_map(|i| {
            let (c, r) = ((i % n) as f64, (i / n) as f64);
            let mid = inverse.apply(shot.point_above(c, r, thickness / 2.0)?)?;
            Some((mid[0] - c - shifts[i][0]).hypot(mid[1] - r - shifts[i][1]))
        })
        .fold(0.0, f64::max)
}

/// Reads `frames` scenes from seed `first`; returns the tallies (given board, found board)
/// and how board finding did.
fn run(first: u64, frames: u64, find: bool) -> (Tally, Tally, Finding) {
    let mut reader = stone_reader();
    let (mut given, mut found) = (Tally::default(), Tally::default());
    let mut finding = Finding::default();
    // `TENGEN_VISION_SEEDS=a,b` reads only those seeds of the run; `TENGEN_VISION_OVERLAY=DIR`
    // writes each frame read with a miss, its grid and its wrong points marked, as PNG (the
    // drawn grid as `<seed>.png`, the found one as `<seed>-found.png`).
    let only: Option<Vec<u64>> = std::env::var("TENGEN_VISION_SEEDS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect());
    let overlay = std::env::var_os("TENGEN_VISION_OVERLAY").map(std::path::PathBuf::from);
    for k in first..first + frames {
        if only.as_ref().is_some_and(|o| !o.contains(&k)) {
            continue;
        }
        let (scene, truth) = scene(k);
        let shot = render(&scene);
        let board = drawn_board(&shot, scene.size);
        let reading = reader.read(&shot.frame, &board);
        let (probs, outside) = (reader.probabilities(), reader.outside());
        let centre_error = patch_centre_error(&shot, &board, scene.stone.thickness);
        if std::env::var_os("TENGEN_VISION_VERBOSE").is_some() {
            let mut one = Tally {
                centre_error,
                ..Tally::default()
            };
            one.add(&reading, &truth);
            one.explain(&reading, &truth, probs, outside, &shot.occluded);
            one.print(&format!("seed {k}, {}", scene.size));
            one.print_misses();
        }
        given.centre_error = given.centre_error.max(centre_error);
        if let Some(dir) = &overlay {
            write_overlay(dir, &k.to_string(), &shot, &board, &reading, &truth);
        }
        given.add(&reading, &truth);
        given.explain(&reading, &truth, probs, outside, &shot.occluded);
        if !find {
            continue;
        }
        let outcome = find_board(&shot.frame);
        finding.add(k, &outcome, &shot, scene.size);
        if let (Some(dir), Ok(b)) = (&overlay, &outcome) {
            let reading = reader.read(&shot.frame, b);
            write_overlay(dir, &format!("{k}-found"), &shot, b, &reading, &truth);
        }
        match outcome {
            Ok(b) if b.size == scene.size => {
                let reading = reader.read(&shot.frame, &b);
                let best = (0..4)
                    .map(|t| turned(&reading, t))
                    .max_by_key(|r| {
                        r.points
                            .iter()
                            .zip(&truth)
                            .filter(|(p, t)| p.state == **t)
                            .count()
                    })
                    .unwrap();
                found.add(&best, &truth);
            }
            _ => found.missed(scene.size.width()),
        }
    }
    if find {
        finding.print();
    }
    (given, found, finding)
}

/// How board finding did on the rendered frames: not found, another size, or the right
/// size with its corners on the drawn ones (within a quarter of a spacing) or off them.
#[derive(Default)]
struct Finding {
    on_grid: usize,
    /// Seeds of the frames where no board was found.
    none: Vec<u64>,
    /// Seeds of the frames where a board of another size was found, and that size.
    wrong_size: Vec<(u64, usize)>,
    /// Seed and size of each board found off the grid, and its worst corner error
    /// (spacings).
    off: Vec<(u64, usize, f64)>,
}

impl Finding {
    fn add(
        &mut self,
        seed: u64,
        outcome: &Result<FoundBoard, tengen_vision::NoBoard>,
        shot: &Rendered,
        size: BoardSize,
    ) {
        let Ok(b) = outcome else {
            self.none.push(seed);
            return;
        };
        if b.size != size {
            self.wrong_size.push((seed, b.size.width()));
            return;
        }
        // The drawn board's spacing: its perimeter over the 4 (n - 1) cells along it.
        let c = shot.corners;
        let d = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).hypot(a[1] - b[1]);
        let spacing = (0..4).map(|k| d(c[k], c[(k + 1) % 4])).sum::<f64>()
            / (4.0 * (size.width() - 1) as f64);
        // The found corners, in either order and from any start, against the drawn ones.
        let error = (0..4)
            .flat_map(|start| [false, true].map(move |rev| (start, rev)))
            .map(|(start, rev)| {
                (0..4)
                    .map(|k| {
                        let j = if rev {
                            (start + 4 - k) % 4
                        } else {
                            (start + k) % 4
                        };
                        d(b.corners[j], c[k])
                    })
                    .fold(0.0, f64::max)
            })
            .fold(f64::INFINITY, f64::min)
            / spacing;
        if error <= 0.25 {
            self.on_grid += 1;
        } else {
            self.off.push((seed, size.width(), error));
        }
    }

    fn print(&self) {
        let off: Vec<_> = self
            .off
            .iter()
            .map(|(k, n, e)| format!("seed {k} {n}x{n} {e:.2}"))
            .collect();
        let other: Vec<_> = self
            .wrong_size
            .iter()
            .map(|(k, n)| format!("seed {k} as {n}x{n}"))
            .collect();
        println!(
            "  find_board: {} on the drawn grid (corners within 0.25 spacing), {} off it, {} \
             another size, {} not found; off the grid: {off:?}; another size: {other:?}; not \
             found: {:?}",
            self.on_grid,
            self.off.len(),
            self.wrong_size.len(),
            self.none.len(),
            self.none
        );
    }
}

/// Per-intersection accuracy with the given board below which a run fails (99.975% on the
/// 60 CI frames when set, 99.894% on the 2,100).
const GIVEN_FLOOR: f64 = 0.9985;
/// Share of reported stones with the wrong colour above which a run fails (none on the 60
/// frames when set, 0.0014% on the 2,100).
const WRONG_COLOUR_CEILING: f64 = 0.0005;

/// Boards of the 60 CI frames `find_board` must put on the drawn grid (49 when set; 34
/// before off-frame points stopped counting as stones, windows a line off were settled,
/// five direction peaks were tried instead of three, a board's edge past its last line
/// stopped counting against the window, windows grew over the same wood only and seven
/// direction peaks were kept; 50 since grown windows are refitted on their stones, 53
/// since lines are found among ridges, 56 since they are snapped onto ridges).
const FOUND_FLOOR: usize = 54;

/// Cells a patch's centre may be from half-way up the stone drawn there (0.21 on the 60 CI
/// frames when set, 0.34 on the 2,100); a wrong camera estimate once put it 0.53 off.
const CENTRE_ERROR_CEILING: f64 = 0.4;

#[test]
fn rendered_boards_are_read() {
    let (given, found, finding) = run(1, 60, true);
    given.print("(60 frames, drawn grid)");
    given.print_misses();
    found.print("(60 frames, find_board)");
    assert!(given.accuracy() >= GIVEN_FLOOR, "{}", given.accuracy());
    assert!(
        given.centre_error <= CENTRE_ERROR_CEILING,
        "{}",
        given.centre_error
    );
    assert!(
        given.wrong_colour_rate() <= WRONG_COLOUR_CEILING,
        "{}",
        given.wrong_colour_rate()
    );
    assert!(
        finding.on_grid >= FOUND_FLOOR,
        "find_board put {} of 60 boards on the drawn grid",
        finding.on_grid
    );
}

#[test]
#[ignore = "2,100 rendered frames: minutes; the acceptance figure"]
fn rendered_boards_are_read_at_scale() {
    let (given, _, _) = run(10_000, 2100, false);
    given.print("(2100 frames, drawn grid)");
    given.print_misses();
    assert!(given.accuracy() >= GIVEN_FLOOR, "{}", given.accuracy());
    assert!(
        given.centre_error <= CENTRE_ERROR_CEILING,
        "{}",
        given.centre_error
    );
    assert!(
        given.wrong_colour_rate() <= WRONG_COLOUR_CEILING,
        "{}",
        given.wrong_colour_rate()
    );
}

/// Boards of the 120 held-out frames `find_board` must put on the drawn grid (94 when set;
/// 89 before grown windows were refitted on their stones; 102 since lines are found among
/// ridges, 106 since they are snapped onto ridges).
const HELD_OUT_FLOOR: usize = 103;

/// Seeds 1,000 to 1,119, never looked at one by one while building the finder: a check
/// that a change to it is not fitted to the 60 frames above (`run` prints the finding).
#[test]
#[ignore = "120 rendered frames held out from tuning the finder: minutes"]
fn rendered_boards_are_found_on_held_out_seeds() {
    let (_, found, finding) = run(1_000, 120, true);
    found.print("(120 held-out frames, find_board)");
    assert!(
        finding.on_grid >= HELD_OUT_FLOOR,
        "find_board put {} of 120 held-out boards on the drawn grid",
        finding.on_grid
    );
}
