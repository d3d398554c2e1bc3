//! Settling (sans-IO): per-point readings with timestamps in, settled boards out. A point
//! that cannot be seen (a hand, motion, the reader's doubt) is unseen, never a guess, and
//! a point's new state is reported only once it and its neighbours have been in view, and
//! it unchanged, for the settle time.

use std::time::Duration;

use tengen_rules::BoardSize;

use super::motion::Cover;

/// What is on one point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stone {
    /// No stone.
    Empty,
    /// A black stone.
    Black,
    /// A white stone.
    White,
}

/// One point in one frame: what it shows, or `None` when it cannot be seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// The state read, `None` when unseen.
    pub stone: Option<Stone>,
    /// How sure the reader is, in [0, 1].
    pub confidence: f32,
}

impl Observation {
    /// An unseen point.
    pub const UNSEEN: Observation = Observation {
        stone: None,
        confidence: 0.0,
    };
}

/// A board as settled: every point's state (`None`: unseen) and confidence.
#[derive(Clone, Debug, PartialEq)]
pub struct Settled {
    /// The board size.
    pub size: BoardSize,
    /// Row-major from the top-left, as the reader's points are.
    pub points: Vec<Observation>,
}

impl Settled {
    /// How many points are unseen.
    pub fn unseen(&self) -> usize {
        self.points.iter().filter(|p| p.stone.is_none()).count()
    }

    /// The board as rows of `.`, `X`, `O` and `?`.
    pub fn to_text(&self) -> String {
        let w = self.size.width();
        let mut s = String::with_capacity(self.points.len() + self.size.height());
        for (i, p) in self.points.iter().enumerate() {
            s.push(match p.stone {
                None => '?',
                Some(Stone::Empty) => '.',
                Some(Stone::Black) => 'X',
                Some(Stone::White) => 'O',
            });
            if (i + 1) % w == 0 {
                s.push('\n');
            }
        }
        s
    }
}

/// Settling's one parameter and the least confidence a reading needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SettleConfig {
    /// How long a point and its neighbours must be in view, and the point unchanged,
    /// before its new state is reported.
    pub settle: Duration,
    /// Readings less sure than this count as unseen.
    pub min_confidence: f32,
}

/// The default settle time, milliseconds: long enough that a stone being set down or a
/// hand's shadow passing is not reported, short enough for quick play (0.5 s missed a move
/// whose point the next player's hand covered 0.4 s after the last hand left).
pub const DEFAULT_SETTLE_MS: u64 = 300;

impl Default for SettleConfig {
    fn default() -> Self {
        SettleConfig {
            settle: Duration::from_millis(DEFAULT_SETTLE_MS),
            min_confidence: 0.5,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct PointState {
    /// The last state reported for the point.
    settled: Option<Stone>,
    /// The state seen now and since when, while the point stays in view.
    candidate: Option<(Stone, Duration)>,
    /// Since when the point has been free of hands and motion without a break.
    in_view: Option<Duration>,
    /// The lowest confidence of the candidate's readings.
    confidence: f32,
    /// The last frame, when it held the point back for motion alone: its time and what
    /// was read then. Should the next frame show no motion, the two frames look the same,
    /// so the still run began with that one.
    moved: Option<(Duration, Option<(Stone, f32)>)>,
}

/// Turns a stream of per-frame readings into settled boards.
#[derive(Clone, Debug)]
pub struct Settler {
    size: BoardSize,
    config: SettleConfig,
    points: Vec<PointState>,
    last: Option<Settled>,
}

impl Settler {
    /// A settler for boards of `size`, with nothing settled yet.
    pub fn new(size: BoardSize, config: SettleConfig) -> Settler {
        Settler {
            size,
            config,
            points: vec![PointState::default(); size.area()],
            last: None,
        }
    }

    /// The board size.
    pub fn size(&self) -> BoardSize {
        self.size
    }

    /// Takes one frame's readings at time `t` (any clock, non-decreasing); returns the
    /// settled board when it differs from the last one returned. Every unseen reading
    /// counts as covered (see [`Settler::push_covered`]). Readings of the wrong length
    /// count as a frame where nothing is seen.
    pub fn push(&mut self, t: Duration, readings: &[Observation]) -> Option<&Settled> {
        let covered: Vec<bool> = readings.iter().map(|r| r.stone.is_none()).collect();
        self.push_covered(t, readings, &covered)
    }

    /// As [`Settler::push`], with the points under a hand or in motion given apart: only
    /// those hold their neighbours' changes back, while a point the reader merely doubts
    /// is unseen itself without blocking the points around it.
    pub fn push_covered(
        &mut self,
        t: Duration,
        readings: &[Observation],
        covered: &[bool],
    ) -> Option<&Settled> {
        let n = self.points.len();
        let whole = readings.len() == n && covered.len() == n;
        self.step(t, readings, |i| match covered.get(i).filter(|_| whole) {
            Some(false) => Cover::Clear,
            _ => Cover::Hand,
        })
    }

    /// As [`Settler::push_covered`], with each point's cover as motion found it and the
    /// reader's readings of every point, covered ones included (they are not reported).
    /// A point held back by motion alone whose next frame shows none was still from that
    /// frame on: its time in view, and its reading if the same, count from there.
    pub fn push_cover(
        &mut self,
        t: Duration,
        readings: &[Observation],
        cover: &[Cover],
    ) -> Option<&Settled> {
        let n = self.points.len();
        let whole = readings.len() == n && cover.len() == n;
        self.step(t, readings, |i| match cover.get(i).filter(|_| whole) {
            Some(&c) => c,
            None => Cover::Hand,
        })
    }

    fn step(
        &mut self,
        t: Duration,
        readings: &[Observation],
        cover: impl Fn(usize) -> Cover,
    ) -> Option<&Settled> {
        let n = self.points.len();
        let min = self.config.min_confidence;
        for (i, p) in self.points.iter_mut().enumerate() {
            let c = cover(i);
            let r = readings
                .get(i)
                .filter(|_| c != Cover::Hand)
                .and_then(|r| Some((r.stone?, r.confidence)))
                .filter(|&(_, conf)| conf >= min);
            if c != Cover::Clear {
                p.in_view = None;
                p.candidate = None;
                p.moved = (c == Cover::Moving).then_some((t, r));
                continue;
            }
            let moved = p.moved.take();
            p.in_view.get_or_insert(moved.map_or(t, |(t0, _)| t0));
            match r {
                None => p.candidate = None,
                Some((s, c)) => match p.candidate {
                    Some((cs, _)) if cs == s => p.confidence = p.confidence.min(c),
                    _ => match moved {
                        Some((t0, Some((ms, mc)))) if ms == s => {
                            p.candidate = Some((s, t0));
                            p.confidence = c.min(mc);
                        }
                        _ => {
                            p.candidate = Some((s, t));
                            p.confidence = c;
                        }
                    },
                },
            }
        }
        let settle = self.config.settle;
        let long_in_view =
            |p: &PointState| p.in_view.is_some_and(|v| t.saturating_sub(v) >= settle);
        let (w, h) = (self.size.width(), self.size.height());
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let p = self.points[i];
            let Some((s, since)) = p.candidate else {
                out.push(Observation::UNSEEN);
                continue;
            };
            if p.settled == Some(s) {
                out.push(Observation {
                    stone: Some(s),
                    confidence: p.confidence,
                });
                continue;
            }
            let (x, y) = (i % w, i / w);
            let calm = (y.saturating_sub(1)..(y + 2).min(h))
                .flat_map(|yy| (x.saturating_sub(1)..(x + 2).min(w)).map(move |xx| yy * w + xx))
                .all(|j| long_in_view(&self.points[j]));
            if calm && t.saturating_sub(since) >= settle {
                self.points[i].settled = Some(s);
                out.push(Observation {
                    stone: Some(s),
                    confidence: p.confidence,
                });
            } else {
                // A change not yet settled: not reported, and the old state not claimed.
                out.push(Observation::UNSEEN);
            }
        }
        let settled = Settled {
            size: self.size,
            points: out,
        };
        let changed = self.last.as_ref().is_none_or(|l| !same_states(l, &settled));
        self.last = Some(settled);
        if changed {
            self.last.as_ref()
        } else {
            None
        }
    }

    /// The last settled board, if any frame was pushed.
    pub fn current(&self) -> Option<&Settled> {
        self.last.as_ref()
    }
}

fn same_states(a: &Settled, b: &Settled) -> bool {
    a.points
        .iter()
        .zip(&b.points)
        .all(|(p, q)| p.stone == q.stone)
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Observation = Observation {
        stone: Some(Stone::Black),
        confidence: 0.9,
    };
    const E: Observation = Observation {
        stone: Some(Stone::Empty),
        confidence: 0.9,
    };

    fn board(size: usize, fill: Observation) -> Vec<Observation> {
        vec![fill; size * size]
    }

    fn ms(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    /// A settler with a 0.5 s settle time (the times below are written for it).
    fn settler() -> Settler {
        let config = SettleConfig {
            settle: ms(500),
            ..SettleConfig::default()
        };
        Settler::new(BoardSize::square(9).unwrap(), config)
    }

    #[test]
    fn an_empty_board_settles_after_the_settle_time() {
        let mut s = settler();
        let empty = board(9, E);
        // At first nothing has settled: every point unseen.
        assert_eq!(s.push(ms(0), &empty).unwrap().unseen(), 81);
        assert!(s.push(ms(400), &empty).is_none());
        assert_eq!(s.push(ms(500), &empty).unwrap().unseen(), 0);
    }

    #[test]
    fn a_stone_is_reported_only_once_still_and_a_flicker_never() {
        let mut s = settler();
        let empty = board(9, E);
        s.push(ms(0), &empty);
        s.push(ms(500), &empty);
        let mut placed = empty.clone();
        placed[40] = B;
        // One frame of a black reading, then empty again: no change reported.
        let r = s.push(ms(600), &placed).unwrap();
        assert_eq!(r.points[40], Observation::UNSEEN);
        assert_eq!(r.points[0].stone, Some(Stone::Empty));
        assert_eq!(
            s.push(ms(700), &empty).unwrap().points[40].stone,
            Some(Stone::Empty)
        );
        // Held: reported after the settle time, not before.
        s.push(ms(800), &placed);
        assert!(s.push(ms(1200), &placed).is_none());
        let r = s.push(ms(1300), &placed).unwrap();
        assert_eq!(r.points[40].stone, Some(Stone::Black));
    }

    #[test]
    fn unseen_points_and_their_neighbours_hold_changes_back() {
        let mut s = settler();
        let empty = board(9, E);
        s.push(ms(0), &empty);
        s.push(ms(500), &empty);
        // A hand over points 41 and 42 while a stone shows at 40.
        let mut hand = empty.clone();
        hand[40] = B;
        hand[41] = Observation::UNSEEN;
        hand[42] = Observation::UNSEEN;
        for t in (600..=2000).step_by(100) {
            let r = s.push(ms(t), &hand).cloned();
            if let Some(r) = r {
                assert_eq!(r.points[40], Observation::UNSEEN, "at {t} ms");
                assert_eq!(r.points[41], Observation::UNSEEN);
            }
            assert_ne!(s.current().unwrap().points[40].stone, Some(Stone::Black));
        }
        // The hand leaves: the stone is reported once its neighbours have been in view
        // for the settle time.
        let mut after = empty.clone();
        after[40] = B;
        s.push(ms(2100), &after);
        assert_ne!(s.current().unwrap().points[40].stone, Some(Stone::Black));
        s.push(ms(2600), &after);
        assert_eq!(s.current().unwrap().points[40].stone, Some(Stone::Black));
    }

    #[test]
    fn a_doubted_neighbour_does_not_block_a_change_but_a_covered_one_does() {
        let mut s = settler();
        let empty = board(9, E);
        let clear = vec![false; 81];
        s.push_covered(ms(0), &empty, &clear);
        s.push_covered(ms(500), &empty, &clear);
        let mut placed = empty.clone();
        placed[40] = B;
        // The reader doubts point 41 for good; nothing covers it.
        placed[41] = Observation::UNSEEN;
        s.push_covered(ms(600), &placed, &clear);
        s.push_covered(ms(1100), &placed, &clear);
        let now = s.current().unwrap();
        assert_eq!(now.points[40].stone, Some(Stone::Black));
        assert_eq!(now.points[41].stone, None);
        // A covered neighbour (a hand at 30) holds a new change at 31 back.
        let mut more = placed.clone();
        more[31] = B;
        more[30] = Observation::UNSEEN;
        let mut covered = clear.clone();
        covered[30] = true;
        s.push_covered(ms(1200), &more, &covered);
        s.push_covered(ms(2000), &more, &covered);
        assert_eq!(s.current().unwrap().points[31].stone, None);
    }

    #[test]
    fn doubtful_and_malformed_readings_are_unseen() {
        let mut s = settler();
        let doubtful = board(
            9,
            Observation {
                stone: Some(Stone::White),
                confidence: 0.2,
            },
        );
        s.push(ms(0), &doubtful);
        assert_eq!(s.push(ms(1000), &doubtful).map(|r| r.unseen()), None);
        assert_eq!(s.current().unwrap().unseen(), 81);
        s.push(ms(2000), &[E; 3]);
        assert_eq!(s.current().unwrap().unseen(), 81);
    }

    #[test]
    fn a_still_run_counts_from_its_first_frame_after_motion_but_not_after_a_hand() {
        let run = |first: Cover, first_reading: Observation| {
            let mut s = settler();
            let empty = board(9, E);
            let clear = vec![Cover::Clear; 81];
            s.push_cover(ms(0), &empty, &clear);
            s.push_cover(ms(500), &empty, &clear);
            // A stone appears at 40: the frame it appears in shows motion around it.
            let mut placed = empty.clone();
            placed[40] = first_reading;
            let mut moving = clear.clone();
            for j in [30, 31, 32, 39, 40, 41, 48, 49, 50] {
                moving[j] = first;
            }
            s.push_cover(ms(600), &placed, &moving);
            placed[40] = B;
            let mut at = Vec::new();
            for t in (700..=1300).step_by(100) {
                s.push_cover(ms(t), &placed, &clear);
                if s.current().unwrap().points[40].stone == Some(Stone::Black) {
                    at.push(t);
                }
            }
            at.first().copied()
        };
        // The next frame showed no motion, so the frame at 600 already looked still.
        assert_eq!(run(Cover::Moving, B), Some(1100));
        // Read otherwise in that frame: the stone counts from 700.
        assert_eq!(run(Cover::Moving, E), Some(1200));
        // A hand over it then: nothing counts from that frame.
        assert_eq!(run(Cover::Hand, B), Some(1200));
    }

    #[test]
    fn text_rows() {
        let mut s = Settler::new(
            BoardSize::square(9).unwrap(),
            SettleConfig {
                settle: Duration::ZERO,
                min_confidence: 0.5,
            },
        );
        let mut b = board(9, E);
        b[0] = B;
        b[8] = Observation::UNSEEN;
        let text = s.push(ms(0), &b).unwrap().to_text();
        // Point 7 is held back too: its neighbour 8 is out of view.
        assert_eq!(text.lines().next(), Some("X......??"));
        assert_eq!(text.lines().count(), 9);
    }
}
