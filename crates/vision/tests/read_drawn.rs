//! The stone reader on drawn boards, whose every stone is known: it reads them exactly
//! (with the network and with the classical rule), under a coloured dim light, and gives
//! `Unseen` for points off the frame and for a black frame; a bad model is an error.

use tengen_rules::BoardSize;
use tengen_vision::{
    BoardReading, FoundBoard, Frame, Homography, PixelFormat, PointState, StoneReader,
};

/// What is drawn at (col, row): a fixed scatter of stones.
fn drawn(col: i64, row: i64) -> PointState {
    match (col * 7 + row * 3 + col * row) % 7 {
        0 => PointState::Black,
        1 => PointState::White,
        _ => PointState::Empty,
    }
}

/// A 640x480 frame with a slanted 19x19 board at `corners`, its colours scaled by `light`.
fn scene(corners: [[f64; 2]; 4], light: [f64; 3], stones: bool) -> (Frame, FoundBoard) {
    let (w, h) = (640usize, 480usize);
    let grid = Homography::fit(
        &[[0.0, 0.0], [18.0, 0.0], [18.0, 18.0], [0.0, 18.0]],
        &corners,
    )
    .unwrap();
    let inv = grid.inverse().unwrap();
    let mut data = Vec::with_capacity(w * h * 3);
    for y in 0..h {
        for x in 0..w {
            let [u, v] = inv.apply([x as f64, y as f64]).unwrap_or([-9.0, -9.0]);
            let (cu, cv) = (u.round(), v.round());
            let (du, dv) = (u - cu, v - cv);
            let on = (-0.7..18.7).contains(&u) && (-0.7..18.7).contains(&v);
            let inside = (-0.02..18.02).contains(&u) && (-0.02..18.02).contains(&v);
            let state = if stones {
                drawn(cu as i64, cv as i64)
            } else {
                PointState::Empty
            };
            let rgb: [f64; 3] = if on && du.hypot(dv) < 0.46 && state == PointState::Black {
                [18.0, 18.0, 22.0]
            } else if on && du.hypot(dv) < 0.46 && state == PointState::White {
                [235.0, 235.0, 228.0]
            } else if inside && (du.abs() < 0.04 || dv.abs() < 0.04) {
                [70.0, 50.0, 30.0]
            } else if on {
                [205.0, 160.0, 100.0]
            } else {
                [90.0, 90.0, 95.0]
            };
            data.extend(
                rgb.iter()
                    .zip(light)
                    .map(|(c, l)| (c * l).round().clamp(0.0, 255.0) as u8),
            );
        }
    }
    let board = FoundBoard {
        size: BoardSize::square(19).unwrap(),
        corners,
        grid,
        score: 1.0,
    };
    (Frame::new(w, h, PixelFormat::Rgb, data).unwrap(), board)
}

const SLANTED: [[f64; 2]; 4] = [[170.0, 60.0], [470.0, 65.0], [540.0, 440.0], [100.0, 430.0]];

fn wrong_points(reading: &BoardReading) -> Vec<(usize, usize, PointState)> {
    (0..361)
        .filter(|&i| reading.points[i].state != drawn((i % 19) as i64, (i / 19) as i64))
        .map(|i| (i % 19, i / 19, reading.points[i].state))
        .collect()
}

#[test]
fn a_drawn_board_is_read_exactly() {
    let (frame, board) = scene(SLANTED, [1.0; 3], true);
    for mut reader in [StoneReader::new().unwrap(), StoneReader::classical()] {
        let reading = reader.read(&frame, &board);
        assert_eq!(reading.size, board.size);
        assert_eq!(wrong_points(&reading), vec![], "{reader:?}");
    }
}

#[test]
fn dim_coloured_light_is_corrected_against_the_wood() {
    let (frame, board) = scene(SLANTED, [0.35, 0.4, 0.6], true);
    let mut reader = StoneReader::new().unwrap();
    assert_eq!(wrong_points(&reader.read(&frame, &board)), vec![]);
    // With an empty board's reference taken under white light, the same still holds.
    let (empty, _) = scene(SLANTED, [1.0; 3], false);
    reader.set_empty_reference(&empty, &board);
    assert!(reader.empty_reference().is_some());
    assert_eq!(wrong_points(&reader.read(&frame, &board)), vec![]);
}

#[test]
fn points_off_the_frame_and_black_frames_are_unseen() {
    // The board's right columns lie beyond the frame's right edge.
    let corners = [[250.0, 60.0], [760.0, 60.0], [760.0, 420.0], [250.0, 420.0]];
    let (frame, board) = scene(corners, [1.0; 3], true);
    let mut reader = StoneReader::new().unwrap();
    let reading = reader.read(&frame, &board);
    for (i, p) in reading.points.iter().enumerate() {
        let (col, row) = (i % 19, i / 19);
        let x = 250.0 + col as f64 * 510.0 / 18.0;
        if x > 650.0 {
            assert_eq!(
                p.state,
                PointState::Unseen,
                "({col}, {row}) is off the frame"
            );
        } else if x < 600.0 {
            assert_eq!(p.state, drawn(col as i64, row as i64), "({col}, {row})");
        }
    }
    let black = Frame::filled_grey(640, 480, 0).unwrap();
    let reading = reader.read(&black, &board);
    assert!(reading.points.iter().all(|p| p.state == PointState::Unseen));
}

#[test]
fn a_bad_model_is_an_error() {
    assert!(StoneReader::from_onnx(b"not a network").is_err());
    assert!(StoneReader::from_onnx(&[]).is_err());
}

#[test]
fn a_reader_can_move_to_another_thread() {
    fn is_send<T: Send>(_: &T) {}
    let reader = StoneReader::new().unwrap();
    is_send(&reader);
    let (frame, board) = scene(SLANTED, [1.0; 3], true);
    let reading = std::thread::spawn(move || {
        let mut reader = reader;
        reader.read(&frame, &board)
    })
    .join()
    .unwrap();
    assert_eq!(wrong_points(&reading), vec![]);
}
