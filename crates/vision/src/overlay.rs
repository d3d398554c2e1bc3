//! Drawing a found board over its frame, to see what the finder saw.

use crate::find::FoundBoard;
use crate::frame::Frame;
use crate::homography::Point;

/// Draws the board's grid lines (green) and its corners (red) onto the frame.
pub fn draw_board(frame: &mut Frame, board: &FoundBoard) {
    let n = board.size.width();
    let last = (n - 1) as f64;
    for k in 0..n {
        let x = k as f64;
        for (a, b) in [([x, 0.0], [x, last]), ([0.0, x], [last, x])] {
            if let (Some(p), Some(q)) = (board.point(a[0], a[1]), board.point(b[0], b[1])) {
                draw_line(frame, p, q, [0, 230, 0]);
            }
        }
    }
    for c in board.corners {
        for d in -4..=4 {
            let d = f64::from(d);
            draw_line(
                frame,
                [c[0] - 4.0, c[1] + d],
                [c[0] + 4.0, c[1] + d],
                [255, 0, 0],
            );
        }
    }
}

/// A one-pixel line from `a` to `b`, clipped to the frame.
pub fn draw_line(frame: &mut Frame, a: Point, b: Point, rgb: [u8; 3]) {
    let len = (b[0] - a[0]).hypot(b[1] - a[1]);
    if !len.is_finite() {
        return;
    }
    // Far-off endpoints (a grid seen nearly edge-on) are not worth millions of steps.
    let steps = (len.ceil() as usize).min(20_000);
    for i in 0..=steps {
        let t = if steps == 0 {
            0.0
        } else {
            i as f64 / steps as f64
        };
        let x = a[0] + (b[0] - a[0]) * t;
        let y = a[1] + (b[1] - a[1]) * t;
        frame.put(x.round() as i64, y.round() as i64, rgb);
    }
}
