//! The 17-plane AlphaGo Zero observation of Pgx 2.6's Go environment, for agents trained
//! on Pgx: own and opponent stones on the last 8 boards, and the observer's colour.
//!
//! Plane `2k` holds the observer's stones and plane `2k+1` the opponent's on the board `k`
//! actions ago (passes repeat the board; boards before the first action are empty);
//! plane 16 is all 1 when the observer plays White (Pgx's inversion of AlphaGo Zero's
//! "Black to play" plane, and it describes the observer, not the side to move).

use tengen_rules::{PgxGame, Player, PGX_HISTORY};

use super::FeatureError;

/// Number of observation planes.
pub const PGX_PLANES: usize = 2 * PGX_HISTORY + 1;

/// Plane that marks a White observer.
pub const PGX_COLOUR_PLANE: usize = 2 * PGX_HISTORY;

/// Order of the values in an observation buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// Pgx's own order `[row][col][plane]` (NHWC).
    #[default]
    ChannelsLast,
    /// `[plane][row][col]` (NCHW).
    ChannelsFirst,
}

/// Writes the observation of `game` seen by `observer` into `out` (`N*N*PGX_PLANES` values,
/// 0 or 1, rows from the top, in `layout` order).
pub fn pgx_observation(
    game: &PgxGame,
    observer: Player,
    layout: Layout,
    out: &mut [f32],
) -> Result<(), FeatureError> {
    let size = game.board().size();
    let area = size.area();
    let expected = area * PGX_PLANES;
    if out.len() != expected {
        return Err(FeatureError::BufferLength {
            what: "observation",
            expected,
            got: out.len(),
        });
    }
    let index = |point: usize, plane: usize| match layout {
        Layout::ChannelsLast => point * PGX_PLANES + plane,
        Layout::ChannelsFirst => plane * area + point,
    };
    let white = if observer == Player::White { 1.0 } else { 0.0 };
    for (p, loc) in size.points().enumerate() {
        for k in 0..PGX_HISTORY {
            let stone = game.recent_stone(k, loc);
            out[index(p, 2 * k)] = f32::from(stone == Some(observer));
            out[index(p, 2 * k + 1)] = f32::from(stone == Some(observer.opp()));
        }
        out[index(p, PGX_COLOUR_PLANE)] = white;
    }
    Ok(())
}
