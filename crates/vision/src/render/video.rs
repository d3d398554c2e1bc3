//! Game videos: an SGF's main line played out in front of a fixed camera and light, a hand
//! reaching in to place each stone and to take captured stones away, with per-frame labels
//! (the stones physically on the board, the points under a hand, the moves completed).
//! Optionally a stone is knocked onto a neighbouring point, left there a while and put back.

use std::sync::{Arc, Mutex};

use fastrand::Rng;
use tengen_rules::sgf::{self, SgfError};
use tengen_rules::{Board, BoardSize, Move, Player};
use thiserror::Error;

use super::hands::Hand;
use super::paint::{paint_clean, Exposed};
use super::scene::{Scene, StoneLook, Variation};
use super::Rendered;

/// Why a game could not become a video.
#[derive(Debug, Error)]
pub enum VideoError {
    /// The record is not a game we can read.
    #[error("cannot read the game record: {0}")]
    Sgf(#[from] SgfError),
}

/// How a game video is made.
#[derive(Clone, Debug)]
pub struct VideoOptions {
    /// Ranges for the camera, light, board and stones, drawn once per video (its
    /// `hand_probability` is not used: hands follow the game).
    pub variation: Variation,
    /// Share of frames with a hand over the board (sets the idle time between moves).
    pub hand_share: f64,
    /// Stop after this many moves of the main line.
    pub max_moves: Option<usize>,
    /// Idle frames after the last move.
    pub tail_frames: usize,
    /// A knocked stone, if any.
    pub knock: Option<Knock>,
}

impl Default for VideoOptions {
    fn default() -> Self {
        VideoOptions {
            variation: Variation::default(),
            hand_share: 0.3,
            max_moves: None,
            tail_frames: 10,
            knock: None,
        }
    }
}

/// A stone knocked onto an empty neighbouring point by a passing hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knock {
    /// The knock happens once this many moves are complete.
    pub after_move: usize,
    /// Frames the stone stays displaced before a hand puts it back.
    pub frames: usize,
}

/// A stone off its point: it stood on `from` and now sits on `to` (points row-major).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Knocked {
    /// The point the stone was played on.
    pub from: usize,
    /// The neighbouring point it sits on now.
    pub to: usize,
}

/// One frame of a video and what is true in it.
#[derive(Clone, Debug)]
pub struct VideoFrame {
    /// The frame's number from 0.
    pub index: usize,
    /// The picture and its geometry labels (`occluded` is the points under a hand).
    pub rendered: Rendered,
    /// The stones physically on the board, row-major.
    pub stones: Vec<Option<Player>>,
    /// How many moves of the main line are complete (placed, captures removed, hand gone).
    pub moves_done: usize,
    /// Whether a hand is in the picture.
    pub hand: bool,
    /// A stone displaced by a knock, while it is.
    pub knocked: Option<Knocked>,
}

/// What one frame shows, before rendering.
#[derive(Clone, Debug)]
struct Planned {
    stones: Vec<Option<Player>>,
    hand: Option<Hand>,
    moves_done: usize,
    knocked: Option<Knocked>,
}

/// A game video: frames are rendered on demand, in order through the iterator or by number.
#[derive(Clone, Debug)]
pub struct Video {
    base: Scene,
    plan: Vec<Planned>,
    moves: Vec<(Player, Option<usize>)>,
    next: usize,
    last_painted: LastPainted,
}

impl Planned {
    /// Whether the two frames show the same thing (they differ only in the camera's noise).
    fn looks_like(&self, other: &Planned) -> bool {
        self.stones == other.stones && self.hand == other.hand && self.knocked == other.knocked
    }
}

/// The last frame drawn and exposed, before its noise, and its number: most frames of a
/// video show what the one before showed (nobody's hand is over the board), and drawing,
/// tone and blur are most of the cost of rendering, so they share them.
#[derive(Debug, Default)]
struct LastPainted(Mutex<Option<(usize, Arc<Exposed>)>>);

impl Clone for LastPainted {
    fn clone(&self) -> Self {
        LastPainted::default()
    }
}

impl Video {
    /// The video of an SGF record's main line with `seed` for everything random.
    pub fn from_sgf(text: &str, seed: u64, options: &VideoOptions) -> Result<Video, VideoError> {
        let record = sgf::load(text)?;
        let game = &record.game;
        let size = game.board().size();
        let mut board = game.initial_board().clone();
        let turns = game.turns();
        let limit = options.max_moves.unwrap_or(turns.len()).min(turns.len());
        let variation = Variation {
            hand_probability: 0.0,
            ..options.variation.clone()
        };
        let base = Scene::random(size, stones_of(&board), seed, &variation);
        let mut rng = Rng::with_seed(seed ^ 0x000F_1DE0);
        let mut planner = Planner {
            size,
            rng: &mut rng,
            plan: Vec::new(),
            // A visit lasts about four frames; idle time makes up the rest of the share.
            idle: 4.0 * (1.0 - options.hand_share.clamp(0.05, 0.95))
                / options.hand_share.clamp(0.05, 0.95),
        };
        let mut moves = Vec::with_capacity(limit);
        let mut stones = stones_of(&board);
        for (done, turn) in turns[..limit].iter().enumerate() {
            if let Some(k) = options.knock.filter(|k| k.after_move == done) {
                // The last move stands still a while first, as it would before anyone
                // brushed past (a stone knocked at once was never seen on its point).
                planner.idle(&stones, done);
                planner.knock(&mut stones, done, k.frames);
            }
            planner.idle(&stones, done);
            let point = turn.mv.loc().map(|l| size.index_of(l));
            moves.push((turn.player, point));
            if let Move::Play(loc) = turn.mv {
                if board.is_empty_at(loc) {
                    board.play(turn.mv, turn.player);
                }
                let after = stones_of(&board);
                planner.visit(&stones, &after, turn.player, point, done);
                stones = after;
            }
        }
        if let Some(k) = options.knock.filter(|k| k.after_move == limit) {
            planner.idle(&stones, limit);
            planner.knock(&mut stones, limit, k.frames);
        }
        for _ in 0..options.tail_frames.max(1) {
            planner.push(&stones, None, limit, None);
        }
        let plan = planner.plan;
        Ok(Video {
            base,
            plan,
            moves,
            next: 0,
            last_painted: LastPainted::default(),
        })
    }

    /// Frames in the video.
    pub fn len(&self) -> usize {
        self.plan.len()
    }

    /// Whether the video has no frames (never, in practice).
    pub fn is_empty(&self) -> bool {
        self.plan.is_empty()
    }

    /// The moves played, in order: who and where (row-major point; `None` for a pass).
    pub fn moves(&self) -> &[(Player, Option<usize>)] {
        &self.moves
    }

    /// The fixed scene (camera, light, board) the frames are drawn in.
    pub fn scene(&self) -> &Scene {
        &self.base
    }

    /// Whether frame `index` has a hand in it, without rendering it.
    pub fn frame_has_hand(&self, index: usize) -> Option<bool> {
        self.plan.get(index).map(|p| p.hand.is_some())
    }

    /// Renders frame `index`.
    pub fn frame(&self, index: usize) -> Option<VideoFrame> {
        let p = self.plan.get(index)?;
        let mut scene = self.base.clone();
        scene.stones = p.stones.clone();
        scene.hands = p.hand.iter().cloned().collect();
        scene.noise_seed = self.base.noise_seed.wrapping_add(index as u64);
        if let Some(k) = p.knocked {
            // The knocked stone sits near, not on, its new point.
            let from = scene.looks[k.from];
            scene.looks[k.to] = StoneLook {
                offset: [from.offset[1] * 0.8 + 0.12, -from.offset[0] * 0.8 - 0.1],
                ..from
            };
        }
        let mut last = self
            .last_painted
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let exposed = match last.as_ref() {
            Some((i, exposed)) if self.plan[*i].looks_like(p) => exposed.clone(),
            _ => {
                let exposed = Arc::new(paint_clean(&scene).expose(&scene.degrade));
                *last = Some((index, exposed.clone()));
                exposed
            }
        };
        drop(last);
        let rendered = exposed.develop(scene.noise_seed);
        Some(VideoFrame {
            index,
            rendered,
            stones: p.stones.clone(),
            moves_done: p.moves_done,
            hand: p.hand.is_some(),
            knocked: p.knocked,
        })
    }
}

impl Iterator for Video {
    type Item = VideoFrame;

    fn next(&mut self) -> Option<VideoFrame> {
        let f = self.frame(self.next)?;
        self.next += 1;
        Some(f)
    }
}

/// The stones of a board, row-major.
fn stones_of(board: &Board) -> Vec<Option<Player>> {
    board.size().points().map(|l| board.stone(l)).collect()
}

/// Builds the frame plan.
struct Planner<'a> {
    size: BoardSize,
    rng: &'a mut Rng,
    plan: Vec<Planned>,
    idle: f64,
}

impl Planner<'_> {
    fn push(
        &mut self,
        stones: &[Option<Player>],
        hand: Option<Hand>,
        moves_done: usize,
        knocked: Option<Knocked>,
    ) {
        self.plan.push(Planned {
            stones: stones.to_vec(),
            hand,
            moves_done,
            knocked,
        });
    }

    /// Still frames between visits.
    fn idle(&mut self, stones: &[Option<Player>], done: usize) {
        let n = (self.idle * (0.5 + self.rng.f64())).round().max(1.0) as usize;
        for _ in 0..n {
            self.push(stones, None, done, None);
        }
    }

    /// The (column, row) of a point.
    fn xy(&self, point: usize) -> [f64; 2] {
        let w = self.size.width();
        [(point % w) as f64, (point / w) as f64]
    }

    /// A hand with its fingertips at `tip`, `away` cells back along its arm.
    fn hand(&self, tip: [f64; 2], away: f64, look: &Hand) -> Hand {
        let a = look.from_degrees.to_radians();
        // Fingertips come down onto the stones; an arm passing by is higher.
        Hand {
            tip: [tip[0] + a.sin() * away, tip[1] + a.cos() * away],
            height: if away > 0.5 { 2.0 } else { 0.6 },
            ..look.clone()
        }
    }

    /// A fresh hand for one visit of `player` (Black reaches in from the last row's side,
    /// White from the first row's).
    fn look(&mut self, player: Player) -> Hand {
        let side = match player {
            Player::Black => 0.0,
            Player::White => 180.0,
        };
        let skin = if player == Player::Black {
            [0.70, 0.47, 0.35]
        } else {
            [0.55, 0.36, 0.25]
        };
        Hand {
            tip: [0.0, 0.0],
            from_degrees: side + (self.rng.f64() - 0.5) * 60.0,
            height: 1.5,
            scale: 0.95 + 0.1 * self.rng.f64(),
            skin,
            sleeve: if player == Player::Black {
                [0.05, 0.08, 0.2]
            } else {
                [0.45, 0.12, 0.1]
            },
            left: self.rng.f64() < 0.15,
        }
    }

    /// A hand placing a stone (the position goes from `before` to `after`), then taking the
    /// captured stones away; the move is complete once the hand has left.
    fn visit(
        &mut self,
        before: &[Option<Player>],
        after: &[Option<Player>],
        player: Player,
        point: Option<usize>,
        done: usize,
    ) {
        let Some(point) = point else {
            return;
        };
        let look = self.look(player);
        let target = self.xy(point);
        let approach = 1 + self.rng.usize(..2);
        for j in (1..=approach).rev() {
            let h = self.hand(target, 3.0 * j as f64, &look);
            self.push(before, Some(h), done, None);
        }
        // The stone is down while the fingers are on it; captures are still there.
        let mut now = before.to_vec();
        now[point] = after[point];
        let h = self.hand(target, 0.0, &look);
        self.push(&now, Some(h), done, None);
        let captured: Vec<usize> = (0..before.len())
            .filter(|&i| before[i].is_some() && after[i].is_none())
            .collect();
        for chunk in captured.chunks(3) {
            for &i in chunk {
                now[i] = None;
            }
            let n = chunk.len() as f64;
            let centre = chunk.iter().fold([0.0, 0.0], |c, &i| {
                let p = self.xy(i);
                [c[0] + p[0] / n, c[1] + p[1] / n]
            });
            let h = self.hand(centre, 0.0, &look);
            self.push(&now, Some(h), done, None);
        }
        let retreat = 1 + self.rng.usize(..2);
        let last = if captured.is_empty() {
            target
        } else {
            self.xy(captured[captured.len() - 1])
        };
        for j in 1..=retreat {
            let h = self.hand(last, 3.5 * j as f64, &look);
            self.push(after, Some(h), done, None);
        }
    }

    /// A hand passing knocks a stone onto an empty neighbour; it stays there `frames`
    /// frames, then a hand puts it back.
    fn knock(&mut self, stones: &mut [Option<Player>], done: usize, frames: usize) {
        let w = self.size.width();
        let h = self.size.height();
        let candidates: Vec<(usize, usize)> = (0..stones.len())
            .filter(|&i| stones[i].is_some())
            .flat_map(|i| {
                let (x, y) = (i % w, i / w);
                let mut n = Vec::new();
                if x > 0 {
                    n.push(i - 1);
                }
                if x + 1 < w {
                    n.push(i + 1);
                }
                if y > 0 {
                    n.push(i - w);
                }
                if y + 1 < h {
                    n.push(i + w);
                }
                n.into_iter()
                    .filter(|&j| stones[j].is_none())
                    .map(move |j| (i, j))
            })
            .collect();
        if candidates.is_empty() {
            return;
        }
        let (from, to) = candidates[self.rng.usize(..candidates.len())];
        let player = stones[from].unwrap_or(Player::Black);
        let knocked = Knocked { from, to };
        let look = self.look(player.opp());
        let mut moved = stones.to_vec();
        moved[to] = moved[from].take();
        // The sleeve brushes past: the stone moves under the passing hand.
        let at = self.xy(from);
        let hand = self.hand(at, 1.0, &look);
        self.push(stones, Some(hand.clone()), done, None);
        self.push(&moved, Some(hand), done, Some(knocked));
        for _ in 0..frames {
            self.push(&moved, None, done, Some(knocked));
        }
        let fixer = self.look(player);
        let hand = self.hand(self.xy(to), 0.0, &fixer);
        self.push(&moved, Some(hand.clone()), done, Some(knocked));
        self.push(stones, Some(hand), done, None);
    }
}
