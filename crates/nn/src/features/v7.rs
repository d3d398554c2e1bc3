//! KataGo's version-7 network inputs (`NNInputs::fillRowV7`): 22 spatial planes and 19
//! global values describing a [`Game`] from the side of the player to move.
//!
//! The planes are written channel-major (NCHW, one row): index `c*y_len*x_len + y*x_len + x`,
//! `y = 0` the top row. The input may be larger than the board; the board then sits in the
//! top-left corner, plane [`spatial::ON_BOARD`] marks its points and everything off the
//! board is 0, as KataGo does for nets evaluated at a fixed size.

use tengen_rules::{AreaMap, AreaOptions, Board, Game, Move, Phase, Player, ScoringRule, TaxRule};

use super::ladder::LadderSearch;
use super::FeatureError;

/// Number of spatial planes.
pub const NUM_SPATIAL: usize = 22;
/// Number of global values.
pub const NUM_GLOBAL: usize = 19;

/// The spatial planes, by index.
pub mod spatial {
    /// 1 on every point of the board.
    pub const ON_BOARD: usize = 0;
    /// Stones of the player to move.
    pub const OWN_STONE: usize = 1;
    /// Stones of the opponent.
    pub const OPP_STONE: usize = 2;
    /// Stones whose chain has exactly 1 liberty.
    pub const LIBS_1: usize = 3;
    /// Stones whose chain has exactly 2 liberties.
    pub const LIBS_2: usize = 4;
    /// Stones whose chain has exactly 3 liberties.
    pub const LIBS_3: usize = 5;
    /// Ko and superko bans (main phase), cleanup ko-capture bans (cleanup phases).
    pub const KO_BAN: usize = 6;
    /// Ko-recapture-blocked stones (cleanup phases).
    pub const KO_RECAPTURE_BLOCKED: usize = 7;
    /// Unused by version 7 (always 0).
    pub const UNUSED: usize = 8;
    /// Point of the move 1 turn ago; the moves 2..5 turns ago follow at 10..13.
    pub const PREV_MOVE_1: usize = 9;
    /// Stones that can be ladder-captured now.
    pub const LADDERED: usize = 14;
    /// Stones that could be ladder-captured 1 turn ago.
    pub const LADDERED_PREV_1: usize = 15;
    /// Stones that could be ladder-captured 2 turns ago.
    pub const LADDERED_PREV_2: usize = 16;
    /// Attacking moves that ladder an opponent chain with two liberties.
    pub const LADDER_WORKING_MOVES: usize = 17;
    /// Area of the player to move.
    pub const OWN_AREA: usize = 18;
    /// Area of the opponent.
    pub const OPP_AREA: usize = 19;
    /// Own stones present when the second cleanup phase began.
    pub const OWN_SECOND_CLEANUP_STONE: usize = 20;
    /// Opponent stones present when the second cleanup phase began.
    pub const OPP_SECOND_CLEANUP_STONE: usize = 21;
}

/// The global values, by index.
pub mod global {
    /// 1 if the move 1 turn ago was a pass; 2..5 turns ago follow at 1..4.
    pub const PREV_PASS_1: usize = 0;
    /// Komi from the side to move, divided by 20.
    pub const SELF_KOMI: usize = 5;
    /// 1 unless the ko rule is simple ko.
    pub const SUPERKO: usize = 6;
    /// 0.5 for positional (and Spight) superko, -0.5 for situational superko.
    pub const KO_KIND: usize = 7;
    /// Multi-stone suicide is legal.
    pub const SUICIDE: usize = 8;
    /// Territory scoring.
    pub const TERRITORY: usize = 9;
    /// Tax SEKI or ALL.
    pub const TAX_SEKI: usize = 10;
    /// Tax ALL.
    pub const TAX_ALL: usize = 11;
    /// In cleanup phase 1 or 2.
    pub const CLEANUP_1: usize = 12;
    /// In cleanup phase 2.
    pub const CLEANUP_2: usize = 13;
    /// A pass now would end the phase.
    pub const PASS_ENDS_PHASE: usize = 14;
    /// A playout doubling advantage is set.
    pub const PLAYOUT_DOUBLING_ON: usize = 15;
    /// Half the playout doubling advantage.
    pub const PLAYOUT_DOUBLING: usize = 16;
    /// The button can still be taken.
    pub const BUTTON: usize = 17;
    /// Komi parity triangle wave.
    pub const KOMI_PARITY_WAVE: usize = 18;
}

/// How far komi may exceed the board area before it is clipped (KataGo's `KOMI_CLIP_RADIUS`).
const KOMI_CLIP_RADIUS: f32 = 20.0;

/// How many past moves the history planes show.
const HISTORY_TURNS: usize = 5;

pub use tengen_eval::InputParams;

/// Computes version-7 inputs; keeps its buffers so that repeated calls do not allocate.
#[derive(Debug, Default)]
pub struct V7Encoder {
    ladders: LadderSearch,
    /// Liberties (up to 4) of the chain through each point, row-major; 0 = not yet counted.
    libs: Vec<u8>,
}

impl V7Encoder {
    /// An encoder with empty buffers.
    pub fn new() -> V7Encoder {
        V7Encoder::default()
    }

    /// Writes the inputs for `pla` to move in `game` into `spatial`
    /// (`NUM_SPATIAL * y_len * x_len` values, NCHW) and `global` (`NUM_GLOBAL` values).
    /// The board must fit in `x_len` x `y_len`; the buffers are fully overwritten.
    /// `pla` is normally the player to move; the superko bans shown are always those of
    /// the player to move, as in KataGo.
    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        &mut self,
        game: &Game,
        pla: Player,
        params: &InputParams,
        x_len: usize,
        y_len: usize,
        spatial: &mut [f32],
        global: &mut [f32],
    ) -> Result<(), FeatureError> {
        let board = game.board();
        let size = board.size();
        if size.width() > x_len || size.height() > y_len {
            return Err(FeatureError::BoardTooLarge {
                board: size,
                x_len,
                y_len,
            });
        }
        let plane = x_len * y_len;
        let spatial_len = NUM_SPATIAL * plane;
        if spatial.len() != spatial_len {
            return Err(FeatureError::BufferLength {
                what: "spatial",
                expected: spatial_len,
                got: spatial.len(),
            });
        }
        if global.len() != NUM_GLOBAL {
            return Err(FeatureError::BufferLength {
                what: "global",
                expected: NUM_GLOBAL,
                got: global.len(),
            });
        }
        spatial.fill(0.0);
        global.fill(0.0);

        let mut out = Planes {
            data: spatial,
            plane,
            x_len,
            width: size.width(),
        };
        let opp = pla.opp();
        let rules = game.rules();
        let phase = game.phase();

        // Stones and liberties (counted once per chain).
        self.libs.clear();
        self.libs.resize(size.area(), 0);
        for (p, loc) in size.points().enumerate() {
            out.set_index(spatial::ON_BOARD, p);
            let Some(stone) = board.stone(loc) else {
                continue;
            };
            out.set_index(
                if stone == pla {
                    spatial::OWN_STONE
                } else {
                    spatial::OPP_STONE
                },
                p,
            );
            if self.libs[p] == 0 {
                let libs = board.liberties_up_to(loc, 4) as u8;
                for s in board.chain(loc) {
                    if let Some(j) = super::point_index(size, s) {
                        self.libs[j] = libs;
                    }
                }
            }
            match self.libs[p] {
                1 => out.set_index(spatial::LIBS_1, p),
                2 => out.set_index(spatial::LIBS_2, p),
                3 => out.set_index(spatial::LIBS_3, p),
                _ => {}
            }
        }

        // Ko bans, and the cleanup phases' ko-recapture blocks.
        if phase == Phase::Main {
            if let Some(ko) = board.ko() {
                out.set(spatial::KO_BAN, board, ko);
            }
            for loc in size.points().filter(|&l| game.superko_banned(l)) {
                out.set(spatial::KO_BAN, board, loc);
            }
        } else {
            for loc in size.points() {
                if game.superko_banned(loc) {
                    out.set(spatial::KO_BAN, board, loc);
                }
                if game.ko_recapture_blocked(loc) {
                    out.set(spatial::KO_RECAPTURE_BLOCKED, board, loc);
                }
            }
        }

        // Area: what scoring would count now (territory scoring only once it matters).
        let suicide_for_pass_alive = rules.multi_stone_suicide
            || params
                .pass_alive_suicide_override
                .unwrap_or(game.options().pass_alive_as_if_suicide_legal);
        let area = match (rules.scoring, rules.tax) {
            (ScoringRule::Area, TaxRule::None) => {
                Some((board.area(AreaOptions::full(suicide_for_pass_alive)), 0))
            }
            (ScoringRule::Area, _) => {
                Some(board.independent_life_area(false, true, suicide_for_pass_alive))
            }
            (ScoringRule::Territory, tax) if phase == Phase::Cleanup2 => Some(
                board.independent_life_area(tax == TaxRule::None, false, suicide_for_pass_alive),
            ),
            (ScoringRule::Territory, _) => None,
        };
        let mut game_end_would_not_win = false;
        if let Some((area, white_minus_black_regions)) = area {
            let tax = if rules.tax == TaxRule::All {
                2 * white_minus_black_regions
            } else {
                0
            };
            let mut board_score = if pla == Player::White { -tax } else { tax };
            board_score += write_area(&mut out, game, &area, pla);
            let self_komi = game.self_komi(pla, params.draw_equivalent_wins_for_white);
            game_end_would_not_win = board_score as f32 + self_komi <= 0.0;
        }

        // History is hidden when a pass would end the game but the search pretends it does
        // not; after the end of the game only the last turn is shown.
        let pass_ends_phase = game.pass_would_end_phase_for(pla);
        let pass_ends_game = pass_ends_phase && game.is_final_phase();
        let mut max_turns = HISTORY_TURNS;
        let mut hide_pass_end = false;
        if pass_ends_game
            && (params.conservative_pass_and_is_root
                || game.should_suppress_friendly_pass_end_for(pla)
                || (params.enable_passing_hacks && game_end_would_not_win))
        {
            max_turns = 0;
            hide_pass_end = true;
        } else if game.is_over() || game.past_normal_phase_end() {
            max_turns = 1;
        }
        max_turns = max_turns.min(params.max_history);
        let history = max_turns.min(game.approx_valid_turns_this_phase() as usize);
        let turns = game.turns();
        let mut turns_shown = 0;
        for k in 1..=history {
            let Some(turn) = turns.len().checked_sub(k).and_then(|i| turns.get(i)) else {
                break;
            };
            // Only an alternating sequence back from the opponent's last move is shown.
            let expected = if k % 2 == 1 { opp } else { pla };
            if turn.player != expected {
                break;
            }
            turns_shown = k;
            match turn.mv {
                Move::Pass => global[global::PREV_PASS_1 + k - 1] = 1.0,
                Move::Play(loc) => out.set(spatial::PREV_MOVE_1 + k - 1, board, loc),
            }
        }

        // Ladders now, and on the boards of the shown history.
        self.ladders.for_each_laddered(board, |loc, working| {
            out.set(spatial::LADDERED, board, loc);
            if board.stone(loc) == Some(opp) && !board.in_atari(loc) {
                for &w in working {
                    out.set(spatial::LADDER_WORKING_MOVES, board, w);
                }
            }
        });
        // Without that much history KataGo reads the same board again; copy its planes.
        match game.recent_board(1) {
            Some(b) if turns_shown >= 1 => {
                self.ladders.for_each_laddered(b, |loc, _| {
                    out.set(spatial::LADDERED_PREV_1, board, loc);
                });
            }
            _ => out.copy_plane(spatial::LADDERED, spatial::LADDERED_PREV_1),
        }
        match game.recent_board(2) {
            Some(b) if turns_shown >= 2 => {
                self.ladders.for_each_laddered(b, |loc, _| {
                    out.set(spatial::LADDERED_PREV_2, board, loc);
                });
            }
            _ => out.copy_plane(spatial::LADDERED_PREV_1, spatial::LADDERED_PREV_2),
        }

        if phase == Phase::Cleanup2 {
            for loc in size.points() {
                match game.second_cleanup_start(loc) {
                    Some(p) if p == pla => out.set(spatial::OWN_SECOND_CLEANUP_STONE, board, loc),
                    Some(_) => out.set(spatial::OPP_SECOND_CLEANUP_STONE, board, loc),
                    None => {}
                }
            }
        }

        // Globals.
        let area_f = size.area() as f32;
        let self_komi = game
            .self_komi(pla, params.draw_equivalent_wins_for_white)
            .clamp(-area_f - KOMI_CLIP_RADIUS, area_f + KOMI_CLIP_RADIUS);
        global[global::SELF_KOMI] = self_komi / 20.0;
        match rules.ko {
            tengen_rules::KoRule::Simple => {}
            tengen_rules::KoRule::Positional | tengen_rules::KoRule::Spight => {
                global[global::SUPERKO] = 1.0;
                global[global::KO_KIND] = 0.5;
            }
            tengen_rules::KoRule::Situational => {
                global[global::SUPERKO] = 1.0;
                global[global::KO_KIND] = -0.5;
            }
        }
        if rules.multi_stone_suicide {
            global[global::SUICIDE] = 1.0;
        }
        if rules.scoring == ScoringRule::Territory {
            global[global::TERRITORY] = 1.0;
        }
        if rules.tax != TaxRule::None {
            global[global::TAX_SEKI] = 1.0;
        }
        if rules.tax == TaxRule::All {
            global[global::TAX_ALL] = 1.0;
        }
        if phase.is_cleanup() {
            global[global::CLEANUP_1] = 1.0;
        }
        if phase == Phase::Cleanup2 {
            global[global::CLEANUP_2] = 1.0;
        }
        if pass_ends_phase && !hide_pass_end {
            global[global::PASS_ENDS_PHASE] = 1.0;
        }
        if params.playout_doubling_advantage != 0.0 {
            global[global::PLAYOUT_DOUBLING_ON] = 1.0;
            global[global::PLAYOUT_DOUBLING] = (0.5 * params.playout_doubling_advantage) as f32;
        }
        if game.button_available() {
            global[global::BUTTON] = 1.0;
        }
        if rules.scoring == ScoringRule::Area || phase == Phase::Cleanup2 {
            global[global::KOMI_PARITY_WAVE] =
                parity_wave(self_komi, size.area().is_multiple_of(2));
        }
        Ok(())
    }
}

/// Fills one row of version-7 inputs with a fresh [`V7Encoder`] (convenient, but allocates
/// the ladder buffers each time; keep an encoder for repeated use).
#[allow(clippy::too_many_arguments)]
pub fn fill_row_v7(
    game: &Game,
    pla: Player,
    params: &InputParams,
    x_len: usize,
    y_len: usize,
    spatial: &mut [f32],
    global: &mut [f32],
) -> Result<(), FeatureError> {
    V7Encoder::new().fill(game, pla, params, x_len, y_len, spatial, global)
}

/// Writes the area planes and returns the board score for `pla` (points owned minus the
/// opponent's). Under territory scoring (second cleanup phase) stones present since that
/// phase began count too.
fn write_area(out: &mut Planes<'_>, game: &Game, area: &AreaMap, pla: Player) -> i32 {
    let board = game.board();
    let territory = game.rules().scoring == ScoringRule::Territory;
    let mut score = 0;
    for loc in board.size().points() {
        let owner = match area.get(loc) {
            Some(o) => Some(o),
            None if territory => board
                .stone(loc)
                .filter(|&s| game.second_cleanup_start(loc) == Some(s)),
            None => None,
        };
        match owner {
            Some(o) if o == pla => {
                out.set(spatial::OWN_AREA, board, loc);
                score += 1;
            }
            Some(_) => {
                out.set(spatial::OPP_AREA, board, loc);
                score -= 1;
            }
            None => {}
        }
    }
    score
}

/// The komi parity triangle wave: 0 at komis that allow a draw, rising to 0.5 half a point
/// above them and falling to -0.5 half a point below (period 2), in f32 as KataGo.
fn parity_wave(self_komi: f32, area_even: bool) -> f32 {
    // Drawable komis have the parity of the board area.
    let floor = if area_even {
        (self_komi / 2.0).floor() * 2.0
    } else {
        ((self_komi - 1.0) / 2.0).floor() * 2.0 + 1.0
    };
    let delta = (self_komi - floor).clamp(0.0, 2.0);
    if delta < 0.5 {
        delta
    } else if delta < 1.5 {
        1.0 - delta
    } else {
        delta - 2.0
    }
}

/// The spatial buffer with its geometry, for setting single values.
struct Planes<'a> {
    data: &'a mut [f32],
    plane: usize,
    x_len: usize,
    width: usize,
}

impl Planes<'_> {
    /// Sets plane `c` at the board's row-major point index `p`.
    #[inline]
    fn set_index(&mut self, c: usize, p: usize) {
        let (x, y) = (p % self.width, p / self.width);
        if let Some(v) = self.data.get_mut(c * self.plane + y * self.x_len + x) {
            *v = 1.0;
        }
    }

    /// Copies plane `from` onto plane `to`.
    fn copy_plane(&mut self, from: usize, to: usize) {
        let n = self.plane;
        if from.max(to) < self.data.len() / n.max(1) {
            self.data.copy_within(from * n..(from + 1) * n, to * n);
        }
    }

    /// Sets plane `c` at a point of `board`.
    #[inline]
    fn set(&mut self, c: usize, board: &Board, loc: tengen_rules::Loc) {
        self.set_index(c, board.size().index_of(loc));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_wave_shape() {
        // Even area: drawable komis are even.
        for (k, w) in [
            (0.0, 0.0),
            (0.5, 0.5),
            (1.0, 0.0),
            (1.5, -0.5),
            (7.5, -0.5),
            (-6.5, -0.5),
            (-7.5, 0.5),
        ] {
            assert_eq!(parity_wave(k, true), w, "komi {k}");
        }
        // Odd area (e.g. 9x9): drawable komis are odd.
        for (k, w) in [(7.0, 0.0), (7.5, 0.5), (6.5, -0.5), (-3.0, 0.0), (0.0, 0.0)] {
            assert_eq!(parity_wave(k, false), w, "komi {k}");
        }
    }
}
