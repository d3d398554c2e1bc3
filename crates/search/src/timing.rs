//! From a game clock to the limits of one move's search (KataGo's use of `getTime`).

use std::time::Duration;

use tengen_rules::{Game, Player};

use crate::clock::Clock;
use crate::params::Limits;

/// Limits for thinking about the next move of `game` under `clock`: search for the
/// recommended time (rounded up so that a byo-yomi period is not half wasted), never
/// past the maximum, and stop early once the move is decided but not before the minimum.
/// Visit and playout limits from `base` still apply; an unlimited clock leaves `base` alone.
pub fn limits_for_move(clock: &Clock, game: &Game, lag_buffer: f64, base: Limits) -> Limits {
    if clock.is_unlimited() {
        return base;
    }
    let board = game.board();
    let stones = board.num_stones(Player::Black) + board.num_stones(Player::White);
    let b = clock.budget(board.size().area(), stones, lag_buffer);
    let target = clock
        .round_up_limit(lag_buffer, 0.0, b.recommended)
        .min(b.max)
        .max(0.0);
    let secs = |s: f64| Duration::from_secs_f64(if s.is_finite() { s.max(0.0) } else { 1e9 });
    Limits {
        time: Some(secs(target)),
        min_time: Some(secs(b.min.min(target))),
        stop_when_decided: true,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::{BoardSize, Rules};

    #[test]
    fn clocks_turn_into_time_limits_within_the_time_left() {
        let g = Game::new(BoardSize::square(19).unwrap(), Rules::japanese());
        let base = Limits::visits(1000);
        assert_eq!(limits_for_move(&Clock::unlimited(), &g, 1.0, base), base);

        let l = limits_for_move(&Clock::absolute(600.0), &g, 1.0, base);
        let t = l.time.unwrap().as_secs_f64();
        assert!(t > 1.0 && t < 60.0, "{t}");
        assert!(l.min_time.unwrap() <= l.time.unwrap());
        assert!(l.stop_when_decided && l.visits == Some(1000));

        // In byo-yomi with no main time left, use most of the period but not all of it.
        let mut c = Clock::byo_yomi(0.0, 30.0, 5);
        c.set_time_left(30.0, 5).unwrap();
        let t = limits_for_move(&c, &g, 1.0, base)
            .time
            .unwrap()
            .as_secs_f64();
        assert!(t > 10.0 && t < 30.0, "{t}");
    }
}
