//! Hands and settling on rendered game videos (the acceptance): a game played with
//! a hand over the board in about 30% of frames, read at 10 frames a second. No stone
//! change may be reported falsely or on a point under a hand, and every move must be
//! reported within 10 frames of the hand leaving, on seven videos: four 19x19 seeds, a
//! 13x13 and two 9x9 games. One line per video.

use std::time::Duration;

use tengen_rules::Player;
use tengen_vision::render::video::{Video, VideoOptions};
use tengen_vision::render::Variation;
use tengen_vision::track::{default_reader, SettleConfig, Stone, Watcher};
use tengen_vision::FoundBoard;

/// A 9x9 game of 24 moves, no captures.
const GAME9: &str = "(;GM[1]FF[4]SZ[9]KM[6.5];B[ee];W[gc];B[cg];W[cc];B[gg];W[dc];B[ec];W[eb]\
;B[fb];W[db];B[fc];W[gf];B[hf];W[ge];B[he];W[fg];B[fh];W[eg];B[dg];W[ef];B[df];W[de];B[ce];W[cd])";

/// A 13x13 game of 24 moves, no captures.
const GAME13: &str = "(;GM[1]FF[4]SZ[13]KM[6.5];B[jd];W[dj];B[jj];W[dd];B[fk];W[ck];B[hk];W[kf]\
;B[kc];W[lc];B[ld];W[kg];B[cf];W[ec];B[ch];W[cc];B[dg];W[ki];B[ik];W[kk];B[jk];W[kl];B[jl];W[km])";

/// A 19x19 opening of 24 moves.
const GAME: &str = "(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[dp];B[pp];W[dd];B[fq];W[cn];B[jp];W[qf]\
;B[nc];W[rd];B[qc];W[qi];B[cf];W[fc];B[ch];W[cc];B[dj];W[pj];B[nq];W[qq];B[qp];W[pq];B[oq];W[rp])";

/// The frame interval the video stands for.
const FRAME: Duration = Duration::from_millis(100);

/// For a found board, the scene's point (row-major) of each found point: the found board's
/// corners are matched to the rendered ones, which fixes the square's symmetry.
fn to_scene(found: &FoundBoard, drawn: &[[f64; 2]; 4]) -> Vec<usize> {
    let n = found.size.width();
    let last = (n - 1) as i64;
    let scene_corner = [(0, 0), (last, 0), (last, last), (0, last)];
    let nearest = |p: [f64; 2]| {
        (0..4)
            .min_by(|&a, &b| {
                let d = |k: usize| (drawn[k][0] - p[0]).hypot(drawn[k][1] - p[1]);
                d(a).total_cmp(&d(b))
            })
            .unwrap()
    };
    // Found corners are TL, TR, BR, BL of found coordinates (0,0), (last,0), (last,last), (0,last).
    let o = scene_corner[nearest(found.corners[0])];
    let x = scene_corner[nearest(found.corners[1])];
    let y = scene_corner[nearest(found.corners[3])];
    (0..n * n)
        .map(|i| {
            let (c, r) = ((i % n) as i64, (i / n) as i64);
            let sc = o.0 + (x.0 - o.0) * c / last + (y.0 - o.0) * r / last;
            let sr = o.1 + (x.1 - o.1) * c / last + (y.1 - o.1) * r / last;
            (sr * n as i64 + sc) as usize
        })
        .collect()
}

fn stone_of(p: Option<Player>) -> Stone {
    match p {
        None => Stone::Empty,
        Some(Player::Black) => Stone::Black,
        Some(Player::White) => Stone::White,
    }
}

/// What one video gave.
struct Outcome {
    frames: usize,
    hand_frames: usize,
    false_changes: usize,
    under_hand: usize,
    moves: usize,
    /// Moves not reported within 10 frames of the hand leaving: (move, point, frame the
    /// move was done, frame it was reported).
    late: Vec<(usize, usize, usize, Option<usize>)>,
}

/// Plays one rendered game video through a watcher, as 10 frames a second.
fn measure(sgf: &str, seed: u64) -> Outcome {
    let options = VideoOptions {
        variation: Variation {
            max_tilt_degrees: 20.0,
            max_rotation_degrees: 10.0,
            max_distortion: 0.03,
            fill: [0.8, 0.9],
            ..Variation::default()
        },
        hand_share: 0.3,
        // Long enough after the last move to tell a late report from a missed one.
        tail_frames: 30,
        ..VideoOptions::default()
    };
    let video = Video::from_sgf(sgf, seed, &options).unwrap();
    let frames = video.len();
    let mut watcher = Watcher::new(default_reader(), SettleConfig::default());
    let area = video.scene().size.area();
    // What has been reported on each scene point, and when each move was.
    let mut reported: Vec<Option<Stone>> = vec![None; area];
    let mut reported_at: Vec<Option<usize>> = vec![None; area];
    let (mut false_changes, mut under_hand, mut hand_frames) = (0, 0, 0);
    let mut done_at: Vec<usize> = Vec::new();
    for f in 0..frames {
        let vf = video.frame(f).unwrap();
        hand_frames += usize::from(vf.hand);
        while done_at.len() < vf.moves_done {
            done_at.push(f);
        }
        let u = watcher.frame(&vf.rendered.frame, FRAME * f as u32);
        let (Some(settled), Some(board)) = (u.settled, u.board) else {
            continue;
        };
        if board.size.area() != area {
            // A board of the wrong size would be every point wrong: count it once.
            false_changes += 1;
            println!("frame {f}: a {:?} board found", board.size);
            continue;
        }
        let map = to_scene(&board, &vf.rendered.corners);
        for (i, p) in settled.points.iter().enumerate() {
            let (Some(s), j) = (p.stone, map[i]) else {
                continue;
            };
            if reported[j] == Some(s) {
                continue;
            }
            let truth = stone_of(vf.stones[j]);
            if s != truth {
                false_changes += 1;
                println!("frame {f}: point {j} reported {s:?}, truly {truth:?}");
            }
            if vf.rendered.occluded[j] {
                under_hand += 1;
                println!("frame {f}: point {j} changed under a hand");
            }
            reported[j] = Some(s);
            reported_at[j] = Some(f);
        }
    }
    let mut late = Vec::new();
    for (k, &(player, point)) in video.moves().iter().enumerate() {
        let (Some(p), Some(&done)) = (point, done_at.get(k)) else {
            continue;
        };
        let ok = reported_at[p].is_some_and(|at| at <= done + 10)
            && reported[p] == Some(stone_of(Some(player)));
        if !ok {
            late.push((k, p, done, reported_at[p]));
        }
    }
    Outcome {
        frames,
        hand_frames,
        false_changes,
        under_hand,
        moves: video.moves().len(),
        late,
    }
}

#[test]
fn hands_never_cause_a_false_change_and_moves_are_reported_soon_after() {
    let cases = [
        ("19x19", GAME, 3),
        ("19x19", GAME, 4),
        ("19x19", GAME, 5),
        ("13x13", GAME13, 6),
        ("9x9", GAME9, 7),
        // Two seeds not used in the diagnosis or the fixes (run only to check them).
        ("19x19", GAME, 8),
        ("9x9", GAME9, 9),
    ];
    // The videos are independent: measured on every core (each is a few CPU-minutes in
    // the test profile), then reported in order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(cases.len()));
    let mut outcomes: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let jobs: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(_, sgf, seed)) = cases.get(i) else {
                            return done;
                        };
                        done.push((i, measure(sgf, seed)));
                    }
                })
            })
            .collect();
        jobs.into_iter()
            .flat_map(|j| j.join().expect("a measuring thread panicked"))
            .collect()
    });
    outcomes.sort_by_key(|(i, _)| *i);
    let (mut frames, mut late, mut moves) = (0, 0, 0);
    for ((name, _, seed), (_, o)) in cases.into_iter().zip(outcomes) {
        println!(
            "hands video {name} seed {seed}: {} frames, {} with a hand, {} false changes, \
             {} under a hand, {}/{} moves in time, late or missed {:?}",
            o.frames,
            o.hand_frames,
            o.false_changes,
            o.under_hand,
            o.moves - o.late.len(),
            o.moves,
            o.late
        );
        assert!(o.frames >= 300, "{name} seed {seed}: a short video");
        assert!(o.hand_frames * 5 > o.frames, "too few hand frames to test");
        assert!(
            o.false_changes * 1000 <= o.frames,
            "{name} seed {seed}: {} false changes",
            o.false_changes
        );
        assert_eq!(o.under_hand, 0, "{name} seed {seed}: a change under a hand");
        frames += o.frames;
        late += o.late.len();
        moves += o.moves;
    }
    println!("hands videos: {frames} frames, {late} of {moves} moves late or missed");
    // The goal is none late; measured none at the 0.3 s settle time (on the Intel VM on
    // 2026-11-25 and three times on the AMD EPYC VM on 2026-11-28). At 0.5 s, 1 of 168: on
    // 19x19 seed 5 the next player's hand covers a move's point five frames after the last
    // hand left, 0.4 s of clear frames. (Before white stones stopped passing for hands, 55
    // of 120 on the first five videos.)
    assert_eq!(late, 0, "moves late or missed");
}

/// Diagnosis of late moves (run by hand): the watcher's stages replayed one by one, and for
/// every move not reported in time, per frame from its placing to 12 frames after the hand
/// left: the tracking, the corner error, the point's raw reading, its and its neighbours'
/// cover (`.` clear, `m` moving, `H` hand) and what the settler shows for it.
/// `TENGEN_HANDS_CASE=<size>:<seed>` picks the video (default 9:7).
#[test]
#[ignore]
fn diagnose_late_moves() {
    use tengen_vision::track::{Cover, Motion, Observation, Settler, TrackStatus, Tracker};
    use tengen_vision::{PointState, StoneReader};
    let case = std::env::var("TENGEN_HANDS_CASE").unwrap_or_else(|_| "9:7".into());
    let (size, seed) = case.split_once(':').expect("size:seed");
    let seed: u64 = seed.parse().expect("a seed");
    let sgf = match size {
        "9" => GAME9,
        "13" => GAME13,
        _ => GAME,
    };
    let options = VideoOptions {
        variation: Variation {
            max_tilt_degrees: 20.0,
            max_rotation_degrees: 10.0,
            max_distortion: 0.03,
            fill: [0.8, 0.9],
            ..Variation::default()
        },
        hand_share: 0.3,
        tail_frames: 30,
        ..VideoOptions::default()
    };
    let video = Video::from_sgf(sgf, seed, &options).unwrap();
    let n = video.scene().size.width();
    let mut tracker = Tracker::new();
    let mut motion = Motion::new();
    let mut reader = StoneReader::new().unwrap();
    let mut settler = Settler::new(video.scene().size, SettleConfig::default());
    struct Row {
        status: String,
        corner_err: f64,
        to_found: Vec<usize>,
        cover: Vec<Cover>,
        raw: Vec<(PointState, f32)>,
        settled: Vec<Option<Stone>>,
        truth: Vec<Stone>,
        occluded: Vec<bool>,
    }
    let mut rows = Vec::new();
    let mut done_at = Vec::new();
    for f in 0..video.len() {
        let vf = video.frame(f).unwrap();
        while done_at.len() < vf.moves_done {
            done_at.push(f);
        }
        let tracked = tracker.update(&vf.rendered.frame);
        let truth: Vec<Stone> = vf.stones.iter().map(|&s| stone_of(s)).collect();
        let Some(board) = tracked.board.clone() else {
            motion.reset();
            rows.push(Row {
                status: format!("{:?}", tracked.status),
                corner_err: f64::NAN,
                to_found: vec![0; n * n],
                cover: vec![Cover::Hand; n * n],
                raw: vec![(PointState::Unseen, 0.0); n * n],
                settled: vec![None; n * n],
                truth,
                occluded: vf.rendered.occluded.clone(),
            });
            continue;
        };
        if matches!(tracked.status, TrackStatus::Found | TrackStatus::Manual) {
            motion.reset();
        }
        let reading = reader.read(&vf.rendered.frame, &board);
        let obs: Vec<Observation> = reading
            .points
            .iter()
            .map(|p| Observation {
                stone: match p.state {
                    PointState::Empty => Some(Stone::Empty),
                    PointState::Black => Some(Stone::Black),
                    PointState::White => Some(Stone::White),
                    PointState::Unseen => None,
                },
                confidence: p.confidence,
            })
            .collect();
        let cover = motion.update(&vf.rendered.frame, &board, &obs).to_vec();
        settler.push_cover(FRAME * f as u32, &obs, &cover);
        let map = to_scene(&board, &vf.rendered.corners);
        let mut to_found = vec![0; n * n];
        for (i, &j) in map.iter().enumerate() {
            to_found[j] = i;
        }
        let spacing = board.mean_spacing();
        let corner_err = board
            .corners
            .iter()
            .map(|c| {
                vf.rendered
                    .corners
                    .iter()
                    .map(|d| (c[0] - d[0]).hypot(c[1] - d[1]))
                    .fold(f64::INFINITY, f64::min)
                    / spacing
            })
            .fold(0.0, f64::max);
        rows.push(Row {
            status: format!("{:?} {:.2}", tracked.status, tracked.seen),
            corner_err,
            to_found,
            cover,
            raw: reading
                .points
                .iter()
                .map(|p| (p.state, p.confidence))
                .collect(),
            settled: settler
                .current()
                .unwrap()
                .points
                .iter()
                .map(|p| p.stone)
                .collect(),
            truth,
            occluded: vf.rendered.occluded.clone(),
        });
    }
    let c = |c: Cover| match c {
        Cover::Clear => '.',
        Cover::Moving => 'm',
        Cover::Hand => 'H',
    };
    for (k, &(player, point)) in video.moves().iter().enumerate() {
        let (Some(p), Some(&done)) = (point, done_at.get(k)) else {
            continue;
        };
        let want = stone_of(Some(player));
        let in_time = (done..(done + 11).min(rows.len()))
            .any(|f| rows[f].settled.get(rows[f].to_found[p]) == Some(&Some(want)));
        if in_time {
            continue;
        }
        let placed = (0..done)
            .rev()
            .find(|&f| rows[f].truth[p] != want)
            .map_or(0, |f| f + 1);
        println!(
            "move {k} {player:?} at ({}, {}), placed at frame {placed}, done at {done}",
            p % n,
            p / n
        );
        for (f, r) in rows
            .iter()
            .enumerate()
            .take((done + 13).min(rows.len()))
            .skip(placed)
        {
            let i = r.to_found[p];
            let (x, y) = ((i % n) as i64, (i / n) as i64);
            let mut around = String::new();
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let (xx, yy) = (x + dx, y + dy);
                    around.push(if xx < 0 || yy < 0 || xx >= n as i64 || yy >= n as i64 {
                        ' '
                    } else {
                        c(r.cover[yy as usize * n + xx as usize])
                    });
                }
                around.push('|');
            }
            println!(
                "  f{f:3} {:<16} err {:.2} raw {:?} {:.2} cover {around} settled {:?}{}",
                r.status,
                r.corner_err,
                r.raw[i].0,
                r.raw[i].1,
                r.settled[i],
                if r.occluded[p] { " (occluded)" } else { "" }
            );
        }
    }
}
