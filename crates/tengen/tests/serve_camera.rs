//! `tengen serve` reading the board from a camera, end to end with a real mosquitto:
//! rendered videos of games (hands placing every stone) fed as a folder of frames or as a
//! live MJPEG stream on loopback. Every move must come out on `move` exactly once, in
//! order; a knocked stone must give the reconciler's alert with its exact points.
//! The tests run one at a time (they are real time and the machine is small).
//! Skipped (with a message) when mosquitto is not installed.

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use support::mqtt::{moves, setup, Daemon, Observer};
use tengen_rules::{BoardSize, Player};
use tengen_vision::render::video::{Knock, Video, VideoOptions};
use tengen_vision::render::Variation;

/// A whole 9x9 game, Black resigning after 26 moves; Black captures White's A1 with A2.
const GAME9: &str = "(;GM[1]FF[4]SZ[9]KM[7]RE[W+R];B[ee];W[gc];B[cg];W[gg];B[cc];W[ge];\
B[ec];W[eg];B[dg];W[eh];B[dh];W[ai];B[bi];W[fc];B[ah];W[ed];B[dd];W[fe];B[ef];W[ff];\
B[df];W[fh];B[ei];W[hg];B[cb];W[gb])";

/// A 19x19 opening of 10 moves.
const GAME19: &str =
    "(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[dp];B[pp];W[dd];B[fq];W[cn];B[jp];W[qf];B[nc];W[rd])";

/// Long enough for a whole video on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(240);

/// One test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A friendly camera: moderate tilt, no lens distortion, the board filling the frame.
fn options(size: BoardSize) -> VideoOptions {
    VideoOptions {
        variation: Variation {
            max_tilt_degrees: 15.0,
            max_rotation_degrees: 5.0,
            max_distortion: 0.0,
            fill: if size.width() == 9 {
                [0.7, 0.8]
            } else {
                [0.8, 0.9]
            },
            ..Variation::default()
        },
        hand_share: 0.3,
        tail_frames: 20,
        ..VideoOptions::default()
    }
}

/// The GTP vertex of a row-major point (row 0 at the top).
fn vertex(size: BoardSize, point: usize) -> String {
    let n = size.width();
    let letters = "ABCDEFGHJKLMNOPQRST".as_bytes();
    format!("{}{}", letters[point % n] as char, n - point / n)
}

/// The video's moves as the state lists them, e.g. `B D4`.
fn listed(size: BoardSize, moves: &[(Player, Option<usize>)]) -> Vec<String> {
    moves
        .iter()
        .map(|&(p, point)| {
            let v = point.map_or("pass".to_string(), |pt| vertex(size, pt));
            format!("{} {v}", p.letter())
        })
        .collect()
}

/// A frame's encoding: the JPEG the renderer made, or PNG for lossless frames.
fn encoded(video: &Video, index: usize) -> (&'static str, Vec<u8>) {
    let vf = video.frame(index).unwrap();
    match vf.rendered.jpeg {
        Some(j) => ("jpg", j),
        None => ("png", vf.rendered.frame.to_png().unwrap()),
    }
}

/// Writes every frame of `video` into `dir` as `0.jpg`, `1.jpg`, ...
fn write_frames(video: &Video, dir: &Path) {
    std::fs::create_dir(dir).unwrap();
    for f in 0..video.len() {
        let (ext, bytes) = encoded(video, f);
        std::fs::write(dir.join(format!("{f}.{ext}")), bytes).unwrap();
    }
}

/// Starts a daemon reading the folder `frames` of a `size` game, the engine playing
/// neither side.
fn station(dir: &Path, port: u16, size: BoardSize, frames: &Path, more: &str) -> Daemon {
    Daemon::start(
        dir,
        port,
        &format!(
            "[game]\nsize = {}\nengine = \"none\"\n\
             [camera]\nsource = \"{}\"\nfolder_fps = 10\nsettle_ms = 500\n{more}",
            size.width(),
            frames.display()
        ),
    )
}

/// The `move` messages as `number color vertex by`.
fn told(obs: &Observer) -> Vec<String> {
    obs.all(0, "move")
        .iter()
        .map(|m| {
            format!(
                "{} {} {} {}",
                m["number"],
                m["color"].as_str().unwrap_or("?"),
                m["vertex"].as_str().unwrap_or("?"),
                m["by"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// What `told` should be for `moves`, each made `by(index)`.
fn expected_told(moves: &[String], by: impl Fn(usize) -> &'static str) -> Vec<String> {
    moves
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{} {m} {}", i + 1, by(i)))
        .collect()
}

#[test]
fn a_whole_game_on_camera_comes_out_on_move_once_each_in_order() {
    let _one = serial();
    let Some((dir, broker)) = setup("serve camera: a whole game") else {
        return;
    };
    let size = BoardSize::square(9).unwrap();
    let video = Video::from_sgf(GAME9, 3, &options(size)).unwrap();
    let frames = dir.path().join("frames");
    write_frames(&video, &frames);
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = station(
        dir.path(),
        broker.port,
        size,
        &frames,
        "thumbnail = true\nthumbnail_px = 200\n",
    );
    let want = listed(size, video.moves());
    assert_eq!(want.len(), 26);
    let (_, state) = obs.wait_for(0, "state", PATIENCE, |s| moves(s).len() >= want.len());
    assert_eq!(moves(&state), want);
    // Every move once, in order, read off the board; nothing to fix.
    obs.wait(0, "move", |m| m["number"] == want.len());
    assert_eq!(told(&obs), expected_told(&want, |_| "board"));
    assert!(obs.all(0, "alert").is_empty(), "{:?}", obs.all(0, "alert"));
    // The reader's status is published, retained, on `camera`.
    let (_, status) = obs.wait(0, "camera", |s| s["board_found"] == true);
    assert!(status["unseen"].is_number(), "{status}");
    // So is a thumbnail of the board: a JPEG of the size asked for.
    let thumbs = obs.raw(0, "camera/thumbnail");
    assert!(!thumbs.is_empty(), "no thumbnail");
    let pic = tengen_vision::Frame::decode(&thumbs[thumbs.len() - 1].bytes).unwrap();
    assert_eq!((pic.width(), pic.height()), (200, 200));
    // A panel connecting late still gets one.
    let late = Observer::connect(broker.port, "late");
    late.wait(0, "camera/thumbnail", |_| true);
    assert!(late.raw(0, "camera/thumbnail")[0].retain);
}

#[test]
fn a_knocked_stone_is_named_on_alert_and_put_back_the_game_goes_on() {
    let _one = serial();
    let Some((dir, broker)) = setup("serve camera: a knocked stone") else {
        return;
    };
    let size = BoardSize::square(19).unwrap();
    let after_move = 6;
    let video = Video::from_sgf(
        GAME19,
        3,
        &VideoOptions {
            knock: Some(Knock {
                after_move,
                frames: 30,
            }),
            ..options(size)
        },
    )
    .unwrap();
    let knocked = (0..video.len())
        .find_map(|i| {
            let f = video.frame(i).unwrap();
            f.knocked.map(|k| (k, f.stones[k.to].unwrap()))
        })
        .expect("the video knocks a stone");
    let frames = dir.path().join("frames");
    write_frames(&video, &frames);
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = station(dir.path(), broker.port, size, &frames, "");
    let want = listed(size, video.moves());
    let (_, state) = obs.wait_for(0, "state", PATIENCE, |s| moves(s).len() >= want.len());
    assert_eq!(moves(&state), want, "the knock changed no move");
    assert_eq!(told(&obs), expected_told(&want, |_| "board"));
    // The alert: the reconciler explains the board with the fewest fixes. With the
    // knocked stone's colour to move, it reads the displaced stone as that player's move
    // and asks for the stone back on its own point; otherwise it names both points.
    let ((k, colour), to_move) = (knocked, Player::Black);
    assert_eq!(after_move % 2, 0, "Black is to move after an even count");
    let (from, to) = (vertex(size, k.from), vertex(size, k.to));
    let c = colour.letter().to_string();
    let (mut fixes, assuming) = if colour == to_move {
        (
            vec![serde_json::json!({"point": from, "want": c, "seen": "empty"})],
            vec![format!("{c} {to}")],
        )
    } else {
        (
            vec![
                serde_json::json!({"point": from, "want": c, "seen": "empty"}),
                serde_json::json!({"point": to, "want": "empty", "seen": c}),
            ],
            vec![],
        )
    };
    let alerts = obs.all(0, "alert");
    assert_eq!(alerts.len(), 2, "one fix, then resolved: {alerts:?}");
    let mut got: Vec<Value> = alerts[0]["fixes"].as_array().unwrap().clone();
    let by_point = |a: &Value, b: &Value| a["point"].as_str().cmp(&b["point"].as_str());
    got.sort_by(by_point);
    fixes.sort_by(by_point);
    assert_eq!(alerts[0]["kind"], "fix", "{alerts:?}");
    assert_eq!(got, fixes, "{alerts:?}");
    assert_eq!(alerts[0]["assuming"], serde_json::json!(assuming));
    assert_eq!(alerts[1]["kind"], "resolved", "{alerts:?}");
    // The fix came before the next move (the knock was after move 6), resolved before it.
    let seen = obs.seen.lock().unwrap().clone();
    let pos = |topic: &str, ok: &dyn Fn(&Value) -> bool| {
        seen.iter()
            .position(|m| {
                m.topic == topic && serde_json::from_str::<Value>(&m.payload).is_ok_and(|v| ok(&v))
            })
            .unwrap()
    };
    let fix_at = pos("alert", &|a| a["kind"] == "fix");
    let resolved_at = pos("alert", &|a| a["kind"] == "resolved");
    assert!(pos("move", &|m| m["number"] == after_move) < fix_at);
    assert!(resolved_at < pos("move", &|m| m["number"] == after_move + 1));
}

/// A live MJPEG stream on loopback: it sends its frames at 10 a second, then repeats
/// the last one (a still board) until more are added.
struct Stream {
    frames: Arc<Mutex<Vec<Arc<Vec<u8>>>>>,
    stop: Arc<AtomicBool>,
    at: Arc<Mutex<usize>>,
    url: String,
}

impl Stream {
    fn start() -> Stream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/video", listener.local_addr().unwrap());
        let frames: Arc<Mutex<Vec<Arc<Vec<u8>>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        // Where the stream is, shared by connections: a reconnect goes on from there.
        let at = Arc::new(Mutex::new(0usize));
        let (f, s, a) = (frames.clone(), stop.clone(), at.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (f, s, a) = (f.clone(), s.clone(), a.clone());
                std::thread::spawn(move || serve(conn, &f, &s, &a));
            }
        });
        Stream {
            frames,
            stop,
            at,
            url,
        }
    }

    /// Whether the stream has reached its last frame.
    fn finished(&self) -> bool {
        let n = self.frames.lock().unwrap().len();
        *self.at.lock().unwrap() + 1 >= n
    }

    fn push(&self, jpeg: Vec<u8>) {
        self.frames.lock().unwrap().push(Arc::new(jpeg));
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(
    mut s: TcpStream,
    frames: &Mutex<Vec<Arc<Vec<u8>>>>,
    stop: &AtomicBool,
    at: &Mutex<usize>,
) {
    let mut req = Vec::new();
    let mut byte = [0u8; 1];
    while !req.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
        req.push(byte[0]);
    }
    const B: &str = "tengenframe";
    if write!(
        s,
        "HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary={B}\r\n\r\n"
    )
    .is_err()
    {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        let frame = {
            let frames = frames.lock().unwrap();
            let mut i = at.lock().unwrap();
            let f = frames.get(*i).cloned();
            if *i + 1 < frames.len() {
                *i += 1;
            }
            f
        };
        if let Some(jpeg) = frame {
            let head = format!(
                "--{B}\r\nContent-Type: image/jpeg\r\nContent-Length: {}\r\n\r\n",
                jpeg.len()
            );
            let sent = s
                .write_all(head.as_bytes())
                .and_then(|_| s.write_all(&jpeg))
                .and_then(|_| s.write_all(b"\r\n"));
            if sent.is_err() {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The SGF of a 9x9 game so far.
fn sgf9(moves: &[(Player, Option<usize>)]) -> String {
    let mut text = "(;GM[1]FF[4]SZ[9]KM[7]".to_string();
    for &(p, point) in moves {
        let at = point.map_or(String::new(), |i| {
            format!(
                "{}{}",
                (b'a' + (i % 9) as u8) as char,
                (b'a' + (i / 9) as u8) as char
            )
        });
        text.push_str(&format!(";{}[{at}]", p.letter()));
    }
    text + ")"
}

/// Streams the video of `moves` from frame `*done` on (the new move's idle frames and the
/// hand placing it) and the still board after it; `*done` moves to that still frame.
fn stream_moves(stream: &Stream, moves: &[(Player, Option<usize>)], done: &mut usize) {
    let size = BoardSize::square(9).unwrap();
    let opts = VideoOptions {
        tail_frames: 1,
        ..options(size)
    };
    let video = Video::from_sgf(&sgf9(moves), 5, &opts).unwrap();
    for i in *done..video.len() {
        stream.push(encoded(&video, i).1);
    }
    *done = video.len() - 1;
}

#[test]
fn the_engine_plays_white_against_a_camera_board() {
    let _one = serial();
    let Some((dir, broker)) = setup("serve camera: the engine plays") else {
        return;
    };
    let size = BoardSize::square(9).unwrap();
    let stream = Stream::start();
    let mut played: Vec<(Player, Option<usize>)> = Vec::new();
    let mut done = 0;
    stream_moves(&stream, &played, &mut done);
    let obs = Observer::connect(broker.port, "obs");
    let _daemon = Daemon::start(
        dir.path(),
        broker.port,
        &format!(
            "[game]\nsize = 9\nkomi = 7\nengine = \"white\"\n\
             [engine]\nvisits = 32\n\
             [camera]\nsource = \"{}\"\nsettle_ms = 500\nstall_ms = 20000\n",
            stream.url
        ),
    );
    obs.wait_for(0, "camera", PATIENCE, |s| s["board_found"] == true);
    // Black's moves: the first of these the game allows at each turn.
    let wishes = [
        "E5", "C3", "G7", "C7", "G3", "D4", "F6", "D6", "F4", "E3", "E7", "C5", "G5", "B2", "H8",
        "B8", "H2", "J5", "A5",
    ];
    let rounds = 8;
    for round in 0..rounds {
        let game = tengen_rules::sgf::load(&sgf9(&played)).unwrap().game;
        let mv = wishes
            .iter()
            .map(|w| size.parse_move(w).unwrap())
            .find(|&m| game.is_legal(m) && m.loc().is_some_and(|l| game.board().is_empty_at(l)))
            .expect("Black has a move");
        let point = size.index_of(mv.loc().unwrap());
        played.push((Player::Black, Some(point)));
        stream_moves(&stream, &played, &mut done);
        let number = 2 * round + 1;
        let (_, m) = obs.wait_for(0, "move", PATIENCE, |m| m["number"] == number);
        assert_eq!(m["by"], "board", "{m}");
        assert_eq!(m["vertex"], vertex(size, point), "{m}");
        // The engine answers; its stone is then placed by hand like any other.
        let (_, m) = obs.wait_for(0, "move", PATIENCE, |m| m["number"] == number + 1);
        assert_eq!(
            (m["by"].as_str(), m["color"].as_str()),
            (Some("engine"), Some("W"))
        );
        let reply = size.parse_move(m["vertex"].as_str().unwrap()).unwrap();
        played.push((Player::White, reply.loc().map(|l| size.index_of(l))));
        stream_moves(&stream, &played, &mut done);
    }
    // The last stone placed (and seen a while): the board agrees with the game, which
    // holds every move once.
    let want = listed(size, &played);
    while !stream.finished() {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    let (_, state) = obs.wait(0, "state", |s| moves(s).len() == want.len());
    assert_eq!(moves(&state), want);
    assert_eq!(
        told(&obs),
        expected_told(&want, |i| if i % 2 == 0 { "board" } else { "engine" })
    );
    let alerts = obs.all(0, "alert");
    assert!(
        alerts.last().is_none_or(|a| a["kind"] == "resolved"),
        "{alerts:?}"
    );
    assert!(
        alerts
            .iter()
            .all(|a| a["kind"] == "fix" || a["kind"] == "resolved"),
        "{alerts:?}"
    );
}
