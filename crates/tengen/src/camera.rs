//! `[camera]` in `tengen serve`: a thread reads frames from the configured source, follows
//! the board, settles its points and hands the engine loop a snapshot and the reader's
//! status, which go through the same reconciler, journal and topics as MQTT snapshots.
//! With `thumbnail` on, it also publishes a small JPEG of the board straight to the MQTT
//! link, never through the engine loop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use tengen_device::appliance::Out;
use tengen_device::mqtt::Inbound;
use tengen_device::payload::{CameraStatus, CameraTracking};
use tengen_device::{Cell, Snapshot};
use tengen_rules::{BoardSize, Player};
use tengen_vision::source::v4l::FormatChoice;
use tengen_vision::track::{
    board_from_corners, default_reader, SettleConfig, Settled, Status, Stone, TrackStatus, Tracker,
    Watcher,
};
use tengen_vision::{CameraSettings, Frame, FrameLimits, SourceSpec};

use crate::config::{Camera, Config};

/// A settled board is handed over again this often while it stands, so that the
/// reconciler (which wants it seen several times in a row) takes it.
const REPEAT: Duration = Duration::from_millis(200);

/// Least time between two statuses that differ only in their count of unseen points.
const UNSEEN_EVERY: Duration = Duration::from_secs(1);

/// Least time between two thumbnails.
const THUMBNAIL_MIN: Duration = Duration::from_secs(2);

/// A thumbnail is sent again this often while the board stands still (light, hands).
const THUMBNAIL_EVERY: Duration = Duration::from_secs(15);

/// The thumbnail's JPEG quality.
const THUMBNAIL_QUALITY: u8 = 75;

/// Starts the camera thread when `[camera] source` is set; thumbnails, when asked for,
/// go to `out` (the MQTT link).
pub fn spawn(
    cfg: &Config,
    inbound: SyncSender<Inbound>,
    out: Option<&tokio::sync::mpsc::Sender<Out>>,
    stop: Arc<AtomicBool>,
) -> Result<Option<std::thread::JoinHandle<()>>> {
    let c = cfg.camera.clone();
    let Some(source) = c.source.clone() else {
        return Ok(None);
    };
    let spec = SourceSpec::parse(&source).context("camera.source")?;
    let size = BoardSize::square(cfg.game.size).map_err(|e| anyhow!("game.size: {e}"))?;
    let tracker = match &c.corners {
        Some(p) if p.len() == 4 => Tracker::with_board(
            board_from_corners(size, [p[0], p[1], p[2], p[3]])
                .context("camera.corners: the four points do not make a board")?,
        ),
        _ => Tracker::new(),
    };
    let settings = CameraSettings {
        width: c.width,
        height: c.height,
        fps: c.fps,
        format: c
            .format
            .parse::<FormatChoice>()
            .map_err(anyhow::Error::msg)?,
        frame_limits: FrameLimits {
            bytes: c.max_frame_bytes,
            pixels: c.max_frame_pixels,
        },
    };
    // A weak link: the camera thread must not keep the MQTT link open past shutdown.
    let mut thumbnails = out
        .filter(|_| c.thumbnail)
        .map(|o| Thumbnails::new(o.downgrade(), c.thumbnail_px as usize, c.rotation));
    log::info!("camera: reading {source}");
    Ok(Some(std::thread::spawn(move || {
        run(
            &c,
            &spec,
            &settings,
            tracker,
            &inbound,
            thumbnails.as_mut(),
            &stop,
        )
    })))
}

/// Sends the board's thumbnail to the MQTT link: after each settled change and now and
/// then while nothing changes, never more often than [`THUMBNAIL_MIN`].
struct Thumbnails {
    out: tokio::sync::mpsc::WeakSender<Out>,
    side: usize,
    rotation: u32,
    last: Option<Instant>,
    /// A change settled since the last thumbnail.
    changed: bool,
}

impl Thumbnails {
    fn new(out: tokio::sync::mpsc::WeakSender<Out>, side: usize, rotation: u32) -> Thumbnails {
        Thumbnails {
            out,
            side,
            rotation,
            last: None,
            changed: true,
        }
    }

    /// Considers `frame`, in which the reader saw `update`.
    fn offer(&mut self, frame: &Frame, update: &tengen_vision::track::Update) {
        self.changed |= update.settled.is_some();
        let Some(board) = &update.board else {
            return;
        };
        let since = self.last.map(|t| t.elapsed());
        let due = match since {
            None => true,
            Some(s) if s < THUMBNAIL_MIN => false,
            Some(s) => self.changed || s >= THUMBNAIL_EVERY,
        };
        // A hand over the board makes a poor picture: wait for a clear view if there is
        // a change to show.
        if !due || matches!(update.status.tracking, TrackStatus::Hidden) {
            return;
        }
        let jpeg = match tengen_vision::thumbnail::thumbnail_jpeg(
            frame,
            board,
            self.side,
            self.rotation,
            THUMBNAIL_QUALITY,
        ) {
            Ok(j) => j,
            Err(e) => {
                log::warn!("camera: cannot encode the thumbnail: {e}");
                return;
            }
        };
        self.last = Some(Instant::now());
        self.changed = false;
        let Some(out) = self.out.upgrade() else {
            return;
        };
        // A busy link drops a thumbnail: the next one is as good.
        let _ = out.try_send(Out {
            topic: "camera/thumbnail",
            payload: jpeg,
            retain: true,
        });
    }
}

fn run(
    c: &Camera,
    spec: &SourceSpec,
    settings: &CameraSettings,
    tracker: Tracker,
    inbound: &SyncSender<Inbound>,
    mut thumbnails: Option<&mut Thumbnails>,
    stop: &AtomicBool,
) {
    let stall = Duration::from_millis(c.stall_ms);
    let mut watcher = Watcher::with_tracker(
        tracker,
        default_reader(),
        SettleConfig {
            settle: Duration::from_millis(c.settle_ms),
            ..SettleConfig::default()
        },
    );
    let start = Instant::now();
    // Folder frames are played in real time at the configured rate.
    let step = Duration::from_secs_f64(1.0 / c.folder_fps);
    let mut source = match spec.open(settings, stall) {
        Ok(s) => Some(s),
        Err(e) => {
            let status = status_of(&watcher.no_frame(start.elapsed(), e.status()).status);
            log::warn!("camera: {}", e.status());
            let _ = inbound.try_send(Inbound::Camera(status, None));
            None
        }
    };
    let mut count = 0u32;
    let mut last_sent: Option<Instant> = None;
    let mut last_status: Option<CameraStatus> = None;
    let mut last_unseen_at: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        let Some(src) = source.as_mut() else {
            // A source that cannot open (a missing folder) will not appear: idle.
            std::thread::sleep(Duration::from_millis(100));
            continue;
        };
        let t = if spec.is_live() {
            start.elapsed()
        } else {
            let due = step * count;
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            due
        };
        let update = match src.next_frame() {
            Ok(Some(frame)) => {
                let update = watcher.frame(&frame, t);
                if let Some(th) = thumbnails.as_deref_mut() {
                    th.offer(&frame, &update);
                }
                update
            }
            Ok(None) => {
                // The last file was read: the board stays as last settled.
                source = None;
                continue;
            }
            Err(e) => watcher.no_frame(t, e.status()),
        };
        count += 1;
        let mut status = status_of(&update.status);
        // The unseen count moves with every hand: published at most once a second.
        if let Some(last) = &last_status {
            let fresh = last_unseen_at.is_none_or(|at| at.elapsed() >= UNSEEN_EVERY);
            let same_but_unseen = CameraStatus {
                unseen: last.unseen,
                ..status.clone()
            } == *last;
            if !fresh && same_but_unseen {
                status.unseen = last.unseen;
            }
        }
        if last_status
            .as_ref()
            .is_none_or(|l| l.unseen != status.unseen)
        {
            last_unseen_at = Some(Instant::now());
        }
        if last_status.as_ref() != Some(&status) {
            log::info!("camera: {}", update.status.line());
        }
        let due = last_sent.is_none_or(|at| at.elapsed() >= REPEAT);
        if update.settled.is_some() || due || last_status.as_ref() != Some(&status) {
            let snap = watcher.current().and_then(|s| snapshot(s, c.rotation));
            // A full queue drops this report; the next one carries the same board.
            if inbound
                .try_send(Inbound::Camera(status.clone(), snap))
                .is_ok()
            {
                last_sent = Some(Instant::now());
                last_status = Some(status);
            }
        }
    }
}

/// The reader's status as the appliance publishes it.
fn status_of(s: &Status) -> CameraStatus {
    let (tracking, why) = match &s.tracking {
        TrackStatus::Found => (CameraTracking::Found, None),
        TrackStatus::Tracking => (CameraTracking::Tracking, None),
        TrackStatus::Hidden => (CameraTracking::Hidden, None),
        TrackStatus::Manual => (CameraTracking::Manual, None),
        TrackStatus::Lost(why) => (CameraTracking::Lost, Some(format!("no board: {why}"))),
        TrackStatus::NoFrame => (CameraTracking::NoFrame, None),
    };
    CameraStatus {
        board_found: s.board_found,
        tracking,
        unseen: s.unseen,
        message: s.source_error.clone().or(why),
    }
}

/// The settled board as a snapshot, turned clockwise by `rotation` degrees.
fn snapshot(s: &Settled, rotation: u32) -> Option<Snapshot> {
    let n = s.size.width();
    if s.size.height() != n {
        return None;
    }
    let mut cells = vec![Cell::Unknown; n * n];
    for (i, p) in s.points.iter().enumerate() {
        let (c, r) = (i % n, i / n);
        let (gc, gr) = match rotation {
            90 => (n - 1 - r, c),
            180 => (n - 1 - c, n - 1 - r),
            270 => (r, n - 1 - c),
            _ => (c, r),
        };
        cells[gr * n + gc] = match p.stone {
            None => Cell::Unknown,
            Some(Stone::Empty) => Cell::Empty,
            Some(Stone::Black) => Cell::Stone(Player::Black),
            Some(Stone::White) => Cell::Stone(Player::White),
        };
    }
    Snapshot::new(s.size, cells).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_vision::track::Observation;

    #[test]
    fn rotations_turn_the_board_clockwise() {
        let size = BoardSize::square(3).unwrap();
        let mut points = vec![
            Observation {
                stone: Some(Stone::Empty),
                confidence: 1.0
            };
            9
        ];
        // A black stone at the top-left as seen, an unseen point at its right.
        points[0].stone = Some(Stone::Black);
        points[1].stone = None;
        let s = Settled { size, points };
        let text = |r| {
            let snap = snapshot(&s, r).unwrap();
            size.points()
                .map(|l| match snap.at(l) {
                    Cell::Empty => '.',
                    Cell::Stone(Player::Black) => 'X',
                    Cell::Stone(Player::White) => 'O',
                    Cell::Unknown => '?',
                })
                .collect::<String>()
        };
        // Each quarter turn moves the stone to the next corner, clockwise (top-left,
        // top-right, bottom-right, bottom-left), and the unseen point with it.
        let at: Vec<(usize, usize)> = [0, 90, 180, 270]
            .iter()
            .map(|&r| {
                let t = text(r);
                (t.find('X').unwrap(), t.find('?').unwrap())
            })
            .collect();
        assert_eq!(at, [(0, 1), (2, 5), (8, 7), (6, 3)]);
    }
}
