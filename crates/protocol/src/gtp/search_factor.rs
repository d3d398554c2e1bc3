//! KataGo's search factors for `genmove`: a move's search is shortened after the
//! opponent passes and while the engine is clearly winning, so a won or ending game
//! does not keep a human opponent waiting.

use std::time::Duration;

use tengen_rules::{Game, Move, Player};
use tengen_search::Limits;

/// How much shorter a move's search gets; 1.0 everywhere (the default) changes nothing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchFactors {
    /// Factor after the opponent's last move was a pass.
    pub after_one_pass: f64,
    /// Factor after the opponent's last two moves were passes.
    pub after_two_pass: f64,
    /// Factor when the engine is sure to win (scaled in from the threshold).
    pub when_winning: f64,
    /// The engine's win-loss value (-1 lost to 1 won) above which winning shortens.
    pub when_winning_threshold: f64,
}

impl Default for SearchFactors {
    fn default() -> Self {
        SearchFactors {
            after_one_pass: 1.0,
            after_two_pass: 1.0,
            when_winning: 1.0,
            when_winning_threshold: 1.0,
        }
    }
}

/// How many recent searches must all say winning before winning shortens the search.
const WINNING_LOOKBACK: usize = 3;

impl SearchFactors {
    /// The factor for `game`'s next move, given the root win-loss values of the engine's
    /// recent `genmove` searches from White's view (oldest first).
    pub fn factor(&self, game: &Game, recent_white_win_loss: &[f64]) -> f64 {
        let pla = game.to_move();
        self.winning_factor(pla, recent_white_win_loss) * self.pass_factor(game)
    }

    /// The factor for the opponent's passes: the last turn, and the opponent's turn before.
    fn pass_factor(&self, game: &Game) -> f64 {
        let turns = game.turns();
        let passed = |back: usize| {
            turns
                .len()
                .checked_sub(back)
                .is_some_and(|i| turns[i].mv == Move::Pass)
        };
        match (passed(1), passed(3)) {
            (true, true) => self.after_two_pass,
            (true, false) => self.after_one_pass,
            _ => 1.0,
        }
    }

    /// The winning factor: from 1 at the threshold down to `when_winning` at a sure win,
    /// by the least winning of the last few searches; 1 with fewer searches than that.
    fn winning_factor(&self, pla: Player, recent_white_win_loss: &[f64]) -> f64 {
        let span = 1.0 - self.when_winning_threshold;
        if recent_white_win_loss.len() < WINNING_LOOKBACK || span <= 1e-10 {
            return 1.0;
        }
        let sign = if pla == Player::White { 1.0 } else { -1.0 };
        let least = recent_white_win_loss[recent_white_win_loss.len() - WINNING_LOOKBACK..]
            .iter()
            .map(|v| sign * v)
            .fold(1.0, f64::min);
        let excess = least - self.when_winning_threshold;
        if excess > 0.0 {
            1.0 + excess / span * (self.when_winning - 1.0)
        } else {
            1.0
        }
    }
}

/// `limits` with their visits, playouts and times scaled by `factor` (visits rounded up).
pub fn scale(mut limits: Limits, factor: f64) -> Limits {
    if factor == 1.0 || !factor.is_finite() || factor <= 0.0 {
        return limits;
    }
    let count = |n: u64| (n as f64 * factor).ceil().min((1u64 << 62) as f64) as u64;
    let time = |t: Duration| Duration::from_secs_f64(t.as_secs_f64() * factor);
    limits.visits = limits.visits.map(count);
    limits.playouts = limits.playouts.map(count);
    limits.time = limits.time.map(time);
    limits.min_time = limits.min_time.map(time);
    limits
}

#[cfg(test)]
mod tests {
    use super::*;
    use tengen_rules::{BoardSize, Rules};

    const FACTORS: SearchFactors = SearchFactors {
        after_one_pass: 0.5,
        after_two_pass: 0.25,
        when_winning: 0.4,
        when_winning_threshold: 0.95,
    };

    fn game(moves: &[Move]) -> Game {
        let mut g = Game::new(BoardSize::square(9).unwrap(), Rules::chinese());
        for &m in moves {
            g.play(m).unwrap();
        }
        g
    }

    fn at(game: &Game, x: usize, y: usize) -> Move {
        Move::Play(game.board().size().loc(x, y).unwrap())
    }

    #[test]
    fn opponent_passes_shorten_the_search() {
        let empty = game(&[]);
        let e5 = at(&empty, 4, 5);
        let c3 = at(&empty, 2, 3);
        assert_eq!(FACTORS.factor(&game(&[]), &[]), 1.0);
        assert_eq!(FACTORS.factor(&game(&[e5]), &[]), 1.0);
        assert_eq!(FACTORS.factor(&game(&[Move::Pass]), &[]), 0.5);
        assert_eq!(FACTORS.factor(&game(&[e5, Move::Pass]), &[]), 0.5);
        // Our own pass in between does not count; the opponent's earlier one does.
        assert_eq!(
            FACTORS.factor(&game(&[Move::Pass, c3, Move::Pass]), &[]),
            0.25
        );
        assert_eq!(FACTORS.factor(&game(&[e5, c3, Move::Pass]), &[]), 0.5);
        assert_eq!(
            SearchFactors::default().factor(&game(&[Move::Pass]), &[]),
            1.0
        );
    }

    #[test]
    fn winning_shortens_by_the_least_winning_of_the_last_three_searches() {
        let black = game(&[]);
        let white = game(&[at(&black, 4, 5)]);
        // White values: Black wins at -1.
        assert_eq!(
            FACTORS.factor(&black, &[-1.0, -1.0]),
            1.0,
            "too few searches"
        );
        assert!((FACTORS.factor(&black, &[0.5, -1.0, -1.0, -1.0]) - 0.4).abs() < 1e-12);
        assert_eq!(FACTORS.factor(&black, &[-1.0, -1.0, -0.9]), 1.0);
        // Halfway from the threshold to a sure win: halfway to the factor.
        assert!((FACTORS.factor(&white, &[1.0, 0.975, 1.0]) - 0.7).abs() < 1e-9);
        assert_eq!(FACTORS.factor(&white, &[-1.0, -1.0, -1.0]), 1.0);
    }

    #[test]
    fn scaling_rounds_counts_up_and_scales_times() {
        let limits = Limits {
            visits: Some(5),
            playouts: Some(100),
            time: Some(Duration::from_secs(10)),
            min_time: Some(Duration::from_secs(2)),
            stop_when_decided: true,
        };
        let half = scale(limits, 0.5);
        assert_eq!(half.visits, Some(3));
        assert_eq!(half.playouts, Some(50));
        assert_eq!(half.time, Some(Duration::from_secs(5)));
        assert_eq!(half.min_time, Some(Duration::from_secs(1)));
        assert!(half.stop_when_decided);
        assert_eq!(scale(limits, 1.0), limits);
    }
}
