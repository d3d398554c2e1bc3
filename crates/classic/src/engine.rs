//! The classical engine's uses: choosing a move, judging a position for the search
//! (a policy and a score), and marking dead stones, at a chosen strength level.

use std::sync::Mutex;

use tengen_rules::playout::{add_white_ownership, PlayoutPolicy};
use tengen_rules::{Game, Loc, Move, Player};

use crate::analysis::Analysis;
use crate::dragons::is_self_atari;
use crate::prior::{Context, PointNotes, Position, Weights};
use crate::reading::{Reader, ReadingLimits};
use crate::valuation::{candidates, value_move, Baseline, MoveValue, Reason};
use crate::worms::Unknown;

/// Moves worth less than this (in points) are not worth a turn: pass instead.
const PASS_BELOW: f32 = 0.4;

/// Playouts that decide which stones are dead at the end of a game.
const FINAL_PLAYOUTS: usize = 200;

/// How far below the best move's logit a pass starts while points are still open.
const PASS_UNSETTLED: f32 = 6.0;

/// Strength levels, 1 (beginner) to 10 (full strength).
pub const LEVELS: std::ops::RangeInclusive<u8> = 1..=10;

/// How the engine plays at a level: reading budget and randomness.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LevelSettings {
    /// Tactical reading budget per read.
    pub reading: ReadingLimits,
    /// Points of uniform noise added to each move's value.
    pub noise: f32,
}

impl LevelSettings {
    /// The settings of `level` (clamped to 1..=10).
    pub fn of(level: u8) -> LevelSettings {
        let level = level.clamp(*LEVELS.start(), *LEVELS.end());
        let steps = (10 - level) as u32;
        LevelSettings {
            reading: ReadingLimits {
                nodes: (3000 >> steps.min(5)).max(60),
                depth: if level >= 4 { 80 } else { 12 },
                max_liberties: if level >= 3 { 3 } else { 2 },
            },
            noise: 0.1 + 1.2 * steps as f32,
        }
    }
}

/// A position as the search wants it: policy, score and ownership, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// Move probabilities, row-major points then pass; illegal moves get -1 (as KataGo's do).
    pub policy: Vec<f32>,
    /// Expected final score from White's view, komi included.
    pub white_score: f32,
    /// Ownership of each point from White's view (-1..=1), row-major.
    pub white_ownership: Vec<f32>,
}

/// The classical engine. Thread-safe: each call borrows a reader from a pool.
pub struct Classic {
    level: u8,
    settings: LevelSettings,
    readers: Mutex<Vec<Reader>>,
    rng: Mutex<fastrand::Rng>,
}

impl std::fmt::Debug for Classic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classic")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Classic {
    /// An engine at `level` (1..=10), its randomness seeded by `seed`.
    pub fn new(level: u8, seed: u64) -> Classic {
        let level = level.clamp(*LEVELS.start(), *LEVELS.end());
        Classic {
            level,
            settings: LevelSettings::of(level),
            readers: Mutex::new(Vec::new()),
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
        }
    }

    /// The level it plays at (1..=10).
    pub fn level(&self) -> u8 {
        self.level
    }

    /// The settings in use.
    pub fn settings(&self) -> LevelSettings {
        self.settings
    }

    fn with_reader<T>(&self, f: impl FnOnce(&mut Reader) -> T) -> T {
        let popped = self.readers.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut reader = popped.unwrap_or_else(|| Reader::new(self.settings.reading));
        let out = f(&mut reader);
        self.readers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(reader);
        out
    }

    /// The analysis of `game`'s position with its player to move.
    pub fn analyse(&self, game: &Game) -> Analysis {
        self.with_reader(|r| Analysis::new(game.board(), game.to_move(), r, &Unknown))
    }

    /// Every candidate move valued for the player to move, best first.
    pub fn value_moves(&self, game: &Game) -> Vec<MoveValue> {
        self.with_reader(|r| {
            let base = Baseline::new(game, r);
            let mut values: Vec<MoveValue> = candidates(game)
                .into_iter()
                .map(|m| value_move(game, &base, r, m))
                .collect();
            values.sort_by(|a, b| b.value.total_cmp(&a.value));
            values
        })
    }

    /// The move to play (a pass when nothing is worth a turn).
    pub fn genmove(&self, game: &Game) -> Move {
        let mut values = self.value_moves(game);
        {
            let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
            for v in values.iter_mut().filter(|v| v.value > -50.0) {
                v.value += rng.f32() * self.settings.noise;
            }
        }
        let best = values.iter().max_by(|a, b| a.value.total_cmp(&b.value));
        match best {
            Some(b) if b.value >= PASS_BELOW + self.settings.noise.min(1.0) * 0.5 => {
                log::debug!(
                    "classic: {} worth {:.2} ({:?})",
                    game.board().size().gtp(Move::Play(b.loc)),
                    b.value,
                    b.reasons
                );
                Move::Play(b.loc)
            }
            _ => self.cleanup_move(game).map_or(Move::Pass, Move::Play),
        }
    }

    /// Under area scoring dead stones left on the board count for their owner, so
    /// before passing we take those inside our area off the board.
    fn cleanup_move(&self, game: &Game) -> Option<Loc> {
        let pla = game.to_move();
        let a = self.analyse(game);
        let b = game.board();
        let ours = |l: Loc| {
            let o = a.ownership[l];
            if pla == Player::White {
                o > 0.5
            } else {
                o < -0.5
            }
        };
        for w in a.worms.list.iter() {
            if w.colour == pla || a.life_at(w.origin).is_none_or(|v| v >= 0.0) {
                continue;
            }
            if !ours(w.origin) {
                continue;
            }
            let libs: crate::points::Points<8> = crate::points::liberties(b, w.origin);
            let pick = libs.iter().copied().find(|&l| {
                game.is_legal(Move::Play(l))
                    && (b.would_capture(l, pla)
                        || (!b.is_simple_eye(l, pla) && !is_self_atari(b, l, pla)))
            });
            if pick.is_some() {
                return pick;
            }
        }
        None
    }

    /// Dead and seki stones of the position, for `final_status_list` and scoring. A
    /// stone is dead when guided playouts from here end with its point the opponent's in
    /// most of them (at the end of a game they capture what is lost and, never putting
    /// two stones in atari, leave sekis standing), or when the analysis reads it dead and
    /// the playouts do not clearly keep it; seki is the analysis' call.
    pub fn final_status(&self, game: &Game) -> (Vec<Loc>, Vec<Loc>) {
        let a = self.analyse(game);
        let b = game.board();
        let size = b.size();
        let mut owned = vec![0.0f32; size.area()];
        let mut rng = fastrand::Rng::with_seed(b.position_hash() as u64);
        let mut board = b.clone();
        let last = prior_context(game).last;
        for _ in 0..FINAL_PLAYOUTS {
            board.clone_from(b);
            PlayoutPolicy::Guided.play(&mut board, game.to_move(), last, &mut rng, 3 * size.area());
            add_white_ownership(&board, &mut owned);
        }
        let seki = a.seki_stones(b);
        let dead = size
            .points()
            .filter(|&l| {
                let Some(c) = b.stone(l) else { return false };
                let own = owned[size.index_of(l)] / FINAL_PLAYOUTS as f32;
                let for_owner = if c == Player::White { own } else { -own };
                // Light playouts botch some races the reading settles (a chain in atari
                // that its opponent need not hurry to take): the analysis' dead stones
                // count unless the playouts clearly keep them.
                let read_dead = a.life_at(l).is_some_and(|v| v < 0.0);
                (for_owner < -0.5 || (read_dead && for_owner < 0.5)) && !seki.contains(&l)
            })
            .collect();
        (dead, seki)
    }

    /// A quick judgement for the search: one analysis, and the move prior's policy with
    /// the analysis' notes on each point.
    pub fn judge(&self, game: &Game) -> Judgement {
        let a = self.analyse(game);
        let b = game.board();
        let size = b.size();
        let (ctx, notes) = prior_inputs(game, &a);
        let position = Position::new(b, game.to_move(), ctx);
        let weights = Weights::builtin();
        let mut logits = vec![f32::NEG_INFINITY; size.area() + 1];
        let mut settled = true;
        for l in size.points() {
            if !game.is_legal(Move::Play(l)) {
                continue;
            }
            let i = size.index_of(l);
            if a.ownership[l].abs() < 0.5 {
                settled = false;
            }
            logits[i] = weights.logit(&position.features(l, Some(notes[i])));
        }
        // Passing is worth a look once every open point is decided, hardly before.
        softmax_with_pass(&mut logits, settled);
        let white_ownership = size.points().map(|l| a.ownership[l]).collect();
        Judgement {
            policy: logits,
            white_score: a.white_area + game.white_bonus(),
            white_ownership,
        }
    }

    /// The move prior alone, without an analysis (fast): for an evaluator whose value
    /// comes from elsewhere. Passing is worth a look once the opponent has passed.
    pub fn prior_policy(&self, game: &Game) -> Vec<f32> {
        let b = game.board();
        let size = b.size();
        let position = Position::new(b, game.to_move(), prior_context(game));
        let weights = Weights::bare();
        let mut logits = vec![f32::NEG_INFINITY; size.area() + 1];
        for l in size.points() {
            if game.is_legal(Move::Play(l)) {
                logits[size.index_of(l)] = weights.logit(&position.features(l, None));
            }
        }
        let passed = game.turns().last().is_some_and(|t| t.mv == Move::Pass);
        softmax_with_pass(&mut logits, passed);
        logits
    }

    /// The policy of the full valuation: a softmax over move values (slow, precise);
    /// -1 for moves not worth considering.
    pub fn value_policy(&self, game: &Game, temperature: f32) -> Vec<f32> {
        let size = game.board().size();
        let values = self.value_moves(game);
        let mut p = vec![-1.0f32; size.area() + 1];
        let best = values.first().map_or(0.0, |v| v.value).max(PASS_BELOW);
        let mut total = 0.0;
        for v in values
            .iter()
            .filter(|v| !v.reasons.contains(&Reason::Antisuji))
        {
            let x = ((v.value - best) / temperature).exp();
            p[size.index_of(v.loc)] = x;
            total += x;
        }
        let pass = ((PASS_BELOW - best) / temperature).exp();
        p[size.area()] = pass;
        total += pass;
        for x in p.iter_mut().filter(|x| **x >= 0.0) {
            *x /= total;
        }
        p
    }
}

/// The move prior's context (the last two stones) and what the analysis says of each
/// point (row-major): key points of open fights, and ownership from the mover's view.
pub fn prior_inputs(game: &Game, a: &Analysis) -> (Context, Vec<PointNotes>) {
    let b = game.board();
    let size = b.size();
    let pla = game.to_move();
    let mut notes = vec![PointNotes::default(); size.area()];
    for (i, w) in a.worms.list.iter().enumerate() {
        // Critical worms, and the capture of already lost ones.
        let capture = w.colour != pla && w.attack.point.is_some() && a.life[i] < 0.0;
        if !w.is_critical() && !capture {
            continue;
        }
        let p = if w.colour == pla {
            w.defence.point
        } else {
            w.attack.point
        };
        if let Some(p) = p {
            notes[size.index_of(p)].key_point = true;
        }
    }
    for d in &a.dragons.list {
        if let (crate::dragons::Status::Critical, Some(p)) = (d.status, d.key_point) {
            notes[size.index_of(p)].key_point = true;
        }
    }
    for l in size.points() {
        let o = a.ownership[l];
        notes[size.index_of(l)].ownership = if pla == Player::White { o } else { -o };
    }
    (prior_context(game), notes)
}

/// The opponent's last stone and the mover's previous one, where still on the board.
fn prior_context(game: &Game) -> Context {
    let b = game.board();
    let turns = game.turns();
    let stone = |k: usize| {
        turns
            .len()
            .checked_sub(k)
            .and_then(|i| turns[i].mv.loc())
            .filter(|&l| !b.is_empty_at(l))
    };
    Context {
        last: stone(1),
        own_last: stone(2),
    }
}

/// Turns logits (points row-major, then pass; -inf for illegal moves) into
/// probabilities, illegal moves -1; the pass logit is set from the best move's: equal
/// when `pass_ok`, `PASS_UNSETTLED` below otherwise.
fn softmax_with_pass(logits: &mut [f32], pass_ok: bool) {
    let n = logits.len() - 1;
    let best = logits[..n]
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    logits[n] = if !best.is_finite() {
        0.0
    } else if pass_ok {
        best
    } else {
        best - PASS_UNSETTLED
    };
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0;
    for x in logits.iter_mut() {
        if x.is_finite() {
            *x = (*x - max).exp();
            total += *x;
        } else {
            *x = -1.0;
        }
    }
    for x in logits.iter_mut().filter(|x| **x >= 0.0) {
        *x /= total;
    }
}
