//! `tengen serve` reading the board from a camera: a rendered video of a game (hands
//! placing every stone) fed as a folder of frames, with a real mosquitto, the engine
//! playing neither side (an analysis station): the game must hold exactly the video's
//! moves, with no alert, and the camera's status is published.
//! Skipped (with a message) when mosquitto is not installed.

mod support;

use support::mqtt::{moves, setup, Daemon, Observer};
use tengen_vision::render::video::{Video, VideoOptions};
use tengen_vision::render::Variation;

/// A 19x19 opening of 10 moves.
const GAME: &str =
    "(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[dp];B[pp];W[dd];B[fq];W[cn];B[jp];W[qf];B[nc];W[rd])";

/// The GTP vertex of a row-major point on a 19x19 board (row 0 at the top).
fn vertex(point: usize) -> String {
    let letters = "ABCDEFGHJKLMNOPQRST".as_bytes();
    format!("{}{}", letters[point % 19] as char, 19 - point / 19)
}

#[test]
fn a_game_on_camera_becomes_the_game_on_the_move_topic() {
    let Some((dir, broker)) = setup("serve camera") else {
        return;
    };
    let options = VideoOptions {
        variation: Variation {
            max_tilt_degrees: 15.0,
            max_rotation_degrees: 5.0,
            max_distortion: 0.0,
            fill: [0.8, 0.9],
            ..Variation::default()
        },
        hand_share: 0.3,
        tail_frames: 20,
        ..VideoOptions::default()
    };
    let video = Video::from_sgf(GAME, 3, &options).unwrap();
    let frames = dir.path().join("frames");
    std::fs::create_dir(&frames).unwrap();
    for f in 0..video.len() {
        let vf = video.frame(f).unwrap();
        let (name, bytes) = match vf.rendered.jpeg {
            Some(j) => (format!("{f}.jpg"), j),
            None => (format!("{f}.png"), vf.rendered.frame.to_png().unwrap()),
        };
        std::fs::write(frames.join(name), bytes).unwrap();
    }
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        &format!(
            "[game]\nsize = 19\nengine = \"none\"\n\
             [camera]\nsource = \"{}\"\nfolder_fps = 10\nsettle_ms = 500\n",
            frames.display()
        ),
    );
    let want: Vec<String> = video
        .moves()
        .iter()
        .map(|&(p, point)| {
            let c = if p == tengen_rules::Player::Black {
                "B"
            } else {
                "W"
            };
            format!("{c} {}", vertex(point.unwrap()))
        })
        .collect();
    // The players' moves go into the game (the `state` topic; `move` carries the engine's,
    // and here the engine plays neither side). The video lasts about 15 s.
    let (_, state) = obs.wait(0, "state", |s| moves(s).len() >= want.len());
    assert_eq!(moves(&state), want);
    assert!(obs.all(0, "alert").is_empty(), "{:?}", obs.all(0, "alert"));
    // The reader's status is published, retained, on `camera`.
    let (_, status) = obs.wait(0, "camera", |s| s["board_found"] == true);
    assert!(status["unseen"].is_number(), "{status}");
}
