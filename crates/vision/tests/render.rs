//! The synthetic renderer: determinism, labels consistent with the geometry, and boards the
//! finder can find.

use tengen_rules::{BoardSize, Player};
use tengen_vision::render::{render, Scene, Variation};
use tengen_vision::{find_board, Point};

/// A random position with about `percent` % of the points taken.
fn sparse(area: usize, seed: u64, percent: u8) -> Vec<Option<Player>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..area)
        .map(|_| match rng.u8(0..200) {
            k if k < percent => Some(Player::Black),
            k if k < 2 * percent => Some(Player::White),
            _ => None,
        })
        .collect()
}

/// A middle-game density, about 40% of the points taken.
fn position(area: usize, seed: u64) -> Vec<Option<Player>> {
    sparse(area, seed, 40)
}

fn dist(a: Point, b: Point) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

#[test]
fn the_same_seed_renders_the_same_bytes() {
    let size = BoardSize::square(9).unwrap();
    let v = Variation {
        width: 320,
        height: 240,
        hand_probability: 1.0,
        ..Variation::default()
    };
    let scene = Scene::random(size, position(81, 1), 3, &v);
    let a = render(&scene);
    let b = render(&Scene::random(size, position(81, 1), 3, &v));
    assert_eq!(a.frame, b.frame);
    assert_eq!(a.jpeg, b.jpeg);
    assert_eq!(a.occluded, b.occluded);
    let other = render(&Scene::random(size, position(81, 1), 4, &v));
    assert_ne!(a.frame, other.frame);
}

#[test]
fn corners_are_the_grid_at_the_corner_points_through_the_lens() {
    for (n, seed) in [(9, 1), (13, 2), (19, 3)] {
        let size = BoardSize::square(n).unwrap();
        let v = Variation {
            width: 480,
            height: 360,
            max_distortion: 0.2,
            ..Variation::default()
        };
        let scene = Scene::random(size, position(n * n, seed), seed, &v);
        let r = render(&scene);
        let last = (n - 1) as f64;
        for (c, p) in r
            .corners
            .iter()
            .zip([[0.0, 0.0], [last, 0.0], [last, last], [0.0, last]])
        {
            let q = r.distort(r.grid.apply(p).unwrap());
            assert!(dist(*c, q) < 1e-9, "{n}: {c:?} {q:?}");
            assert!((0.0..480.0).contains(&c[0]) && (0.0..360.0).contains(&c[1]));
        }
        // On the board's plane, a point above it is the point itself; a stone's top is off
        // its intersection when the camera is tilted.
        let q = r.point_above(last, 0.0, 0.0).unwrap();
        assert!(dist(q, r.corners[1]) < 1e-6);
        let top = r.point_above(last, 0.0, scene.stone.thickness).unwrap();
        if scene.camera.tilt_degrees > 10.0 {
            assert!(dist(top, q) > 0.5, "{n}: {top:?} {q:?}");
        }
        // Without a lens term the corners are the grid's own.
        let mut straight = scene.clone();
        straight.camera.k1 = 0.0;
        let r = render(&straight);
        assert!(dist(r.corners[2], r.grid.apply([last, last]).unwrap()) < 1e-9);
    }
}

#[test]
fn occluded_points_lie_under_the_hand_and_free_points_do_not() {
    let size = BoardSize::square(19).unwrap();
    let v = Variation {
        width: 640,
        height: 480,
        hand_probability: 1.0,
        ..Variation::default()
    };
    let mut some = 0;
    for seed in 0..4 {
        let r = render(&Scene::random(size, position(361, seed), seed, &v));
        assert_eq!(r.hand_mask.len(), 640 * 480);
        for (i, &occ) in r.occluded.iter().enumerate() {
            let p = r.point((i % 19) as f64, (i / 19) as f64).unwrap();
            let under = r.hand_mask[p[1].round() as usize * 640 + p[0].round() as usize];
            // The point's own pixel under the hand is always occluded; a point marked
            // occluded has some of its disc under the hand (checked at its centre's
            // neighbourhood, three pixels either way).
            if under {
                assert!(occ, "seed {seed} point {i}");
            }
            if occ {
                some += 1;
                let near = (-8i64..=8).any(|dy| {
                    (-8i64..=8).any(|dx| {
                        let (x, y) = (p[0].round() as i64 + dx, p[1].round() as i64 + dy);
                        (0..640).contains(&x)
                            && (0..480).contains(&y)
                            && r.hand_mask[y as usize * 640 + x as usize]
                    })
                });
                assert!(near, "seed {seed} point {i}");
            }
        }
    }
    assert!(some > 0, "hands always over the board cover some points");
}

#[test]
fn a_front_facing_19x19_board_is_found_within_a_quarter_spacing() {
    let size = BoardSize::square(19).unwrap();
    let v = Variation {
        max_tilt_degrees: 5.0,
        max_rotation_degrees: 5.0,
        max_distortion: 0.0,
        fill: [0.8, 0.9],
        max_blur: 0.8,
        max_noise: 2.0,
        ..Variation::default()
    };
    for seed in 0..3 {
        let r = render(&Scene::random(size, sparse(361, seed, 15), seed, &v));
        let found = find_board(&r.frame).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert_eq!(found.size, size, "seed {seed}");
        let spacing = dist(r.corners[0], r.corners[1]) / 18.0;
        for (a, b) in found.corners.iter().zip(&r.corners) {
            assert!(dist(*a, *b) < 0.25 * spacing, "seed {seed}: {a:?} vs {b:?}");
        }
    }
}

/// A close-up board: a 9x9 or 13x13 board filling a large frame has lines several working
/// pixels wide (the finder works at 800 pixels), which a line detector tuned to thin lines
/// must still see.
#[test]
fn close_up_small_boards_are_found_within_a_quarter_spacing() {
    let mut missed = Vec::new();
    for (n, seed) in [(9, 21), (9, 22), (9, 23), (13, 24), (13, 25), (13, 26)] {
        let size = BoardSize::square(n).unwrap();
        let v = Variation {
            width: 1600,
            height: 1200,
            max_tilt_degrees: 20.0,
            max_rotation_degrees: 10.0,
            max_distortion: 0.0,
            fill: [0.85, 0.95],
            ..Variation::default()
        };
        let r = render(&Scene::random(size, sparse(n * n, seed, 30), seed, &v));
        let spacing = dist(r.corners[0], r.corners[1]) / (n - 1) as f64;
        let ok = find_board(&r.frame).is_ok_and(|f| {
            f.size == size
                && (0..4).any(|k| {
                    (0..4).all(|j| dist(f.corners[(k + j) % 4], r.corners[j]) < 0.25 * spacing)
                })
        });
        if !ok {
            missed.push(seed);
        }
    }
    assert!(
        missed.is_empty(),
        "close-up boards not found: seeds {missed:?}"
    );
}

#[test]
fn hard_poses_are_reported() {
    // Board finding at 45° and with lens distortion is being improved elsewhere: print only.
    for (n, seed) in [(9, 11), (13, 12), (19, 13), (19, 14)] {
        let size = BoardSize::square(n).unwrap();
        let r = render(&Scene::random(
            size,
            position(n * n, seed),
            seed,
            &Variation::default(),
        ));
        match find_board(&r.frame) {
            Ok(f) => {
                let spacing = dist(r.corners[0], r.corners[1]) / (n - 1) as f64;
                let worst = (0..4)
                    .map(|k| {
                        (0..4)
                            .map(|j| dist(f.corners[(k + j) % 4], r.corners[j]))
                            .fold(0.0, f64::max)
                    })
                    .fold(f64::INFINITY, f64::min);
                println!(
                    "{n}x{n} seed {seed}: found {}, worst corner {:.2} spacing",
                    f.size,
                    worst / spacing
                );
            }
            Err(e) => println!("{n}x{n} seed {seed}: {e}"),
        }
    }
}

mod video {
    use tengen_rules::Player;
    use tengen_vision::render::video::{Knock, Video, VideoOptions};
    use tengen_vision::render::Variation;

    /// Black takes White's corner stone on move 3.
    const CAPTURE: &str = "(;GM[1]SZ[9];B[ba];W[aa];B[ab];W[ee];B[cc];W[gg])";

    fn small() -> VideoOptions {
        VideoOptions {
            variation: Variation {
                width: 400,
                height: 300,
                jpeg_quality: None,
                ..Variation::default()
            },
            tail_frames: 3,
            ..VideoOptions::default()
        }
    }

    /// A longer 19x19 game: stones spread over the board, no captures.
    fn long_game(moves: usize) -> String {
        let mut sgf = String::from("(;GM[1]SZ[19]");
        let mut used = std::collections::HashSet::new();
        let mut k = 0usize;
        while used.len() < moves {
            k += 1;
            let p = (k * 47) % 361;
            let (x, y) = (p % 19, p / 19);
            // Every other line only: no stone ever loses its last liberty.
            if x % 2 == 1 || y % 2 == 1 || !used.insert(p) {
                continue;
            }
            let colour = if used.len() % 2 == 1 { 'B' } else { 'W' };
            let c = |v: usize| (b'a' + v as u8) as char;
            sgf.push_str(&format!(";{colour}[{}{}]", c(x), c(y)));
        }
        sgf.push(')');
        sgf
    }

    #[test]
    fn a_game_video_changes_stones_only_under_a_hand_and_ends_on_the_final_position() {
        let video = Video::from_sgf(CAPTURE, 7, &small()).unwrap();
        assert_eq!(video.moves().len(), 6);
        let frames: Vec<_> = video.collect();
        let mut previous: Option<&tengen_vision::render::video::VideoFrame> = None;
        let mut placed = 0;
        for f in &frames {
            if let Some(p) = previous {
                if p.stones != f.stones {
                    assert!(f.hand, "frame {}: stones changed with no hand", f.index);
                }
                // A stone appears where the hand's fingers are.
                for i in 0..81 {
                    if p.stones[i].is_none() && f.stones[i].is_some() {
                        placed += 1;
                        assert!(f.rendered.occluded[i], "frame {} point {i}", f.index);
                    }
                }
                assert!(f.moves_done >= p.moves_done);
            }
            previous = Some(f);
        }
        assert_eq!(placed, 6);
        let last = frames.last().unwrap();
        assert_eq!(last.moves_done, 6);
        assert!(!last.hand);
        // The capture: White's corner stone at a1 (index 0) is gone.
        assert_eq!(last.stones[0], None);
        assert_eq!(last.stones[1], Some(Player::Black));
        assert_eq!(last.stones.iter().filter(|s| s.is_some()).count(), 5);
    }

    #[test]
    fn the_same_seed_gives_the_same_video_and_another_seed_another() {
        let a = Video::from_sgf(CAPTURE, 5, &small()).unwrap();
        let b = Video::from_sgf(CAPTURE, 5, &small()).unwrap();
        let c = Video::from_sgf(CAPTURE, 6, &small()).unwrap();
        assert_eq!(a.len(), b.len());
        for k in [0, a.len() / 2, a.len() - 1] {
            assert_eq!(
                a.frame(k).unwrap().rendered.frame,
                b.frame(k).unwrap().rendered.frame
            );
        }
        assert_ne!(
            a.frame(0).unwrap().rendered.frame,
            c.frame(0).unwrap().rendered.frame
        );
        // Sensor noise differs from frame to frame even when nothing moves.
        let (f0, f1) = (a.frame(0).unwrap(), a.frame(1).unwrap());
        assert_eq!(f0.stones, f1.stones);
        assert_ne!(f0.rendered.frame, f1.rendered.frame);
        assert!(a.frame(a.len()).is_none());
    }

    #[test]
    fn frames_that_share_a_drawing_are_the_frames_drawn_alone() {
        // With JPEG on, and a knock, so every part of a frame's making is compared.
        let options = VideoOptions {
            variation: Variation {
                jpeg_quality: Some([80, 80]),
                ..small().variation
            },
            knock: Some(Knock {
                after_move: 4,
                frames: 3,
            }),
            ..small()
        };
        let video = Video::from_sgf(CAPTURE, 9, &options).unwrap();
        let in_order: Vec<_> = video.clone().collect();
        let mut shared = 0;
        for (k, f) in in_order.iter().enumerate() {
            // A fresh clone has drawn nothing yet, so it draws frame k from scratch.
            let alone = video.clone().frame(k).unwrap();
            assert_eq!(f.rendered.frame, alone.rendered.frame, "frame {k}");
            assert_eq!(f.rendered.jpeg, alone.rendered.jpeg, "frame {k}");
            assert_eq!(f.rendered.occluded, alone.rendered.occluded, "frame {k}");
            assert_eq!(f.rendered.hand_mask, alone.rendered.hand_mask, "frame {k}");
            assert_eq!(f.rendered.corners, alone.rendered.corners, "frame {k}");
            shared += usize::from(k > 0 && f.stones == in_order[k - 1].stones && !f.hand);
        }
        // Most frames show what the one before did: the case the sharing is for.
        assert!(
            shared * 2 > in_order.len(),
            "{shared} of {}",
            in_order.len()
        );
    }

    #[test]
    fn a_bad_record_is_an_error() {
        assert!(Video::from_sgf("(;GM[1]SZ[9];B[zz", 1, &small()).is_err());
        assert!(Video::from_sgf("", 1, &small()).is_err());
    }

    #[test]
    fn hands_are_over_the_board_in_about_the_asked_share_of_frames() {
        let video = Video::from_sgf(&long_game(40), 3, &small()).unwrap();
        let n = video.len();
        // Counting the plan needs no rendering: every frame says whether a hand is in it.
        let with_hand = (0..n).filter(|&k| video.frame_has_hand(k).unwrap()).count();
        let share = with_hand as f64 / n as f64;
        assert!((0.22..0.4).contains(&share), "{with_hand}/{n}");
    }

    #[test]
    fn a_knocked_stone_sits_on_its_neighbour_then_is_put_back() {
        let options = VideoOptions {
            knock: Some(Knock {
                after_move: 4,
                frames: 5,
            }),
            ..small()
        };
        let video = Video::from_sgf(CAPTURE, 9, &options).unwrap();
        let frames: Vec<_> = video.collect();
        let knocked: Vec<_> = frames.iter().filter(|f| f.knocked.is_some()).collect();
        assert!(knocked.len() >= 5);
        let k = knocked[0].knocked.unwrap();
        let before = frames[knocked[0].index - 1].stones.clone();
        for f in &knocked {
            assert_eq!(f.stones[k.from], None);
            assert_eq!(f.stones[k.to], before[k.from]);
            assert_eq!(f.moves_done, 4);
        }
        let after = &frames[knocked.last().unwrap().index + 1];
        assert_eq!(after.stones, before);
    }
}

#[test]
fn odd_scenes_render_without_panicking() {
    let size = BoardSize::square(9).unwrap();
    let v = Variation {
        width: 64,
        height: 48,
        hand_probability: 1.0,
        ..Variation::default()
    };
    let base = Scene::random(size, vec![Some(Player::White); 3], 1, &v);
    let mut scenes = Vec::new();
    let mut s = base.clone();
    s.camera.width = 0;
    s.camera.height = 0;
    scenes.push(s);
    let mut s = base.clone();
    s.camera.tilt_degrees = f64::NAN;
    s.camera.focal = f64::INFINITY;
    scenes.push(s);
    let mut s = base.clone();
    s.camera.k1 = 50.0;
    s.camera.distance = -3.0;
    scenes.push(s);
    let mut s = base.clone();
    s.stones.clear();
    s.looks.clear();
    s.board.aspect = 0.0;
    s.stone.radius = f64::NAN;
    s.light.elevation_degrees = -90.0;
    s.degrade.blur = 1e9;
    s.degrade.jpeg_quality = Some(0);
    scenes.push(s);
    let mut s = base;
    s.size = BoardSize::square(2).unwrap();
    s.degrade.noise = f64::NAN;
    s.degrade.exposure = f64::NAN;
    scenes.push(s);
    for (k, s) in scenes.iter().enumerate() {
        let r = render(s);
        assert_eq!(r.occluded.len(), s.size.area(), "scene {k}");
        assert!(r.frame.width() >= 1 && r.frame.height() >= 1);
    }
}
