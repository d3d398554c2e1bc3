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

/// Reads `frames` scenes from seed `first`; returns the tallies (given board, found board).
fn run(first: u64, frames: u64, find: bool) -> (Tally, Tally) {
    let mut reader = stone_reader();
    let (mut given, mut found) = (Tally::default(), Tally::default());
    for k in first..first + frames {
        let (scene, truth) = scene(k);
        let shot = render(&scene);
        let board = drawn_board(&shot, scene.size);
        let reading = reader.read(&shot.frame, &board);
        if std::env::var_os("TENGEN_VISION_VERBOSE").is_some() {
            let mut one = Tally::default();
            one.add(&reading, &truth);
            one.print(&format!("seed {k}, {}", scene.size));
        }
        given.add(&reading, &truth);
        if !find {
            continue;
        }
        match find_board(&shot.frame) {
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
    (given, found)
}

/// Per-intersection accuracy with the given board below which a run fails (99.975% on the
/// 60 CI frames when set, 99.798% on the 2,100).
const GIVEN_FLOOR: f64 = 0.996;
/// Share of reported stones with the wrong colour above which a run fails (none on the 60
/// frames when set, 0.005% on the 2,100).
const WRONG_COLOUR_CEILING: f64 = 0.002;

#[test]
fn rendered_boards_are_read() {
    let (given, found) = run(1, 60, true);
    given.print("(60 frames, drawn grid)");
    found.print("(60 frames, find_board)");
    assert!(given.accuracy() >= GIVEN_FLOOR, "{}", given.accuracy());
    assert!(
        given.wrong_colour_rate() <= WRONG_COLOUR_CEILING,
        "{}",
        given.wrong_colour_rate()
    );
}

#[test]
#[ignore = "2,100 rendered frames: minutes; the acceptance figure"]
fn rendered_boards_are_read_at_scale() {
    let (given, _) = run(10_000, 2100, false);
    given.print("(2100 frames, drawn grid)");
    assert!(given.accuracy() >= GIVEN_FLOOR, "{}", given.accuracy());
    assert!(
        given.wrong_colour_rate() <= WRONG_COLOUR_CEILING,
        "{}",
        given.wrong_colour_rate()
    );
}
