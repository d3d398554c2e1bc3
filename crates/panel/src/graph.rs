//! The win-rate graph: Black's win rate, lead and visits by move number, one point per
//! position, following the game through moves, undos and new games. A point stays only
//! while the game on show still has its position: same board, komi, rules and setup, and
//! the same moves up to its number.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tengen_device::payload::{AnalysisMsg, State};

/// Graph points kept: one per move number, so a long game stays bounded.
pub const MAX_POINTS: usize = 2000;

/// One point of the win-rate graph, from Black's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Move number the analysis was of (0: before the first move).
    pub number: usize,
    /// Black's win probability.
    pub winrate: f64,
    /// Black's lead in points.
    pub lead: f64,
    /// Visits the analysis had.
    pub visits: u64,
}

impl Point {
    /// The point of an analysis report (which is in the mover's view).
    pub fn of(a: &AnalysisMsg) -> Point {
        let black = a.to_move == "B";
        Point {
            number: a.number,
            winrate: if black { a.winrate } else { 1.0 - a.winrate },
            lead: if black { a.score_lead } else { -a.score_lead },
            visits: a.visits,
        }
    }
}

/// What decides a game's positions: the board, komi, rules, setup and moves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Game {
    /// Board width and height.
    pub size: [usize; 2],
    /// Komi.
    pub komi: f32,
    /// Rules, as the state carries them.
    pub rules: serde_json::Value,
    /// Setup stones.
    pub setup: Vec<String>,
    /// Moves from the start.
    pub moves: Vec<String>,
}

impl Game {
    /// The game of a published state.
    pub fn of(s: &State) -> Game {
        Game {
            size: s.size,
            komi: s.komi,
            rules: s.rules.clone(),
            setup: s.setup.clone(),
            moves: s.moves.clone(),
        }
    }

    /// How many moves from the start `self` and `other` share, when they start alike
    /// (board, komi, rules and setup); `None` when they are different games.
    pub fn shared_moves(&self, other: &Game) -> Option<usize> {
        let alike = self.size == other.size
            && self.komi == other.komi
            && self.rules == other.rules
            && self.setup == other.setup;
        alike.then(|| {
            self.moves
                .iter()
                .zip(&other.moves)
                .take_while(|(a, b)| a == b)
                .count()
        })
    }
}

/// A graph as kept on disk: its points and the game they were taken in (its moves up to
/// the last point).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    /// The game, moves cut after the last point's.
    pub game: Game,
    /// The points, by move number.
    pub points: Vec<Point>,
}

impl Saved {
    /// Why these points cannot be shown, if they cannot: out of order, past the moves
    /// kept, too many, or values no analysis gives.
    pub fn check(&self) -> Result<(), String> {
        if self.points.len() > MAX_POINTS {
            return Err(format!(
                "{} points, more than {MAX_POINTS}",
                self.points.len()
            ));
        }
        let mut last = None;
        for p in &self.points {
            if last.is_some_and(|n| p.number <= n) {
                return Err(format!("point {} out of order", p.number));
            }
            last = Some(p.number);
            if p.number > self.game.moves.len() {
                return Err(format!(
                    "point {} is past the {} moves kept",
                    p.number,
                    self.game.moves.len()
                ));
            }
            if !(0.0..=1.0).contains(&p.winrate) || !p.lead.is_finite() {
                return Err(format!(
                    "point {}: win rate {} or lead {} out of range",
                    p.number, p.winrate, p.lead
                ));
            }
        }
        Ok(())
    }
}

/// The graph of the game on show.
#[derive(Debug, Default)]
pub struct Graph {
    /// The game the points were taken in (before the first state: the restored one's).
    game: Option<Game>,
    points: BTreeMap<usize, Point>,
    /// Points changed since the graph was last taken for saving.
    unsaved: bool,
    /// The points came from disk and the first state has not confirmed them yet.
    restored: bool,
}

impl Graph {
    /// A graph restored from disk: its points are kept by the first state as far as that
    /// state's game shares their positions (see [`Graph::follow`]).
    pub fn restored(saved: Saved) -> Graph {
        Graph {
            points: saved.points.iter().map(|p| (p.number, *p)).collect(),
            game: Some(saved.game),
            unsaved: false,
            restored: true,
        }
    }

    /// Follows a published state: points of positions it no longer has go (moves taken
    /// back, another game). True when the position changed, so that the points so far
    /// are final and worth saving.
    pub fn follow(&mut self, s: &State) -> bool {
        let game = Game::of(s);
        let shared = self.game.as_ref().and_then(|g| g.shared_moves(&game));
        let before = self.points.len();
        match shared {
            Some(kept) => self.points.retain(|&n, _| n <= kept),
            None => self.points.clear(),
        }
        if self.points.len() != before {
            self.unsaved = true;
        }
        if std::mem::take(&mut self.restored) {
            log::info!(
                "panel: {} of the {before} saved graph points are of the game on show",
                self.points.len()
            );
        }
        let changed = self.game.as_ref() != Some(&game);
        self.game = Some(game);
        changed
    }

    /// Takes an analysis report's point (the latest of a position replaces the earlier).
    pub fn add(&mut self, a: &AnalysisMsg) {
        if self.points.len() < MAX_POINTS || self.points.contains_key(&a.number) {
            self.points.insert(a.number, Point::of(a));
            self.unsaved = true;
        }
    }

    /// The points, by move number.
    pub fn points(&self) -> Vec<Point> {
        self.points.values().copied().collect()
    }

    /// The graph to save, if it changed since last taken (and has a game to belong to).
    pub fn take_unsaved(&mut self) -> Option<Saved> {
        if !self.unsaved || self.restored {
            return None;
        }
        let game = self.game.as_ref()?;
        self.unsaved = false;
        let points: Vec<Point> = self
            .points
            .values()
            .filter(|p| p.number <= game.moves.len())
            .copied()
            .collect();
        let last = points.last().map_or(0, |p| p.number);
        Some(Saved {
            game: Game {
                moves: game.moves[..last].to_vec(),
                ..game.clone()
            },
            points,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(moves: &[&str], komi: f32) -> State {
        State {
            size: [9, 9],
            komi,
            rules: serde_json::json!({"scoring": "AREA"}),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            setup: vec![],
            to_move: if moves.len().is_multiple_of(2) {
                "B"
            } else {
                "W"
            }
            .into(),
            rows: vec![".........".into(); 9],
            engine: Default::default(),
            level: "10".into(),
            thinking: false,
            result: None,
        }
    }

    fn analysis(number: usize, winrate: f64) -> AnalysisMsg {
        serde_json::from_value(serde_json::json!({
            "number": number, "to_move": if number.is_multiple_of(2) { "B" } else { "W" },
            "visits": 100 + number, "winrate": winrate, "scoreLead": 1.5, "moves": []
        }))
        .unwrap()
    }

    /// A graph of `moves` with a point for every position.
    fn played(moves: &[&str]) -> Graph {
        let mut g = Graph::default();
        for n in 0..=moves.len() {
            g.follow(&state(&moves[..n], 7.0));
            g.add(&analysis(n, 0.5 + 0.01 * n as f64));
        }
        g
    }

    #[test]
    fn a_saved_graph_keeps_the_moves_up_to_its_last_point_and_checks() {
        let mut g = played(&["B E5", "W C3"]);
        // A move without analysis yet: the position left is saved.
        assert!(g.follow(&state(&["B E5", "W C3", "B D4"], 7.0)));
        let saved = g.take_unsaved().unwrap();
        assert_eq!(saved.game.moves, ["B E5", "W C3"]);
        assert_eq!(
            saved.points.iter().map(|p| p.number).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(
            (saved.points[1].winrate, saved.points[1].visits),
            (0.49, 101)
        );
        assert_eq!(saved.check(), Ok(()));
        // Nothing changed since: nothing to save; a thinking state is no new position.
        assert!(g.take_unsaved().is_none());
        let mut thinking = state(&["B E5", "W C3", "B D4"], 7.0);
        thinking.thinking = true;
        assert!(!g.follow(&thinking));
    }

    #[test]
    fn a_restored_graph_shows_only_the_positions_the_game_on_show_shares() {
        let saved = {
            let mut g = played(&["B E5", "W C3", "B D4"]);
            g.follow(&state(&["B E5", "W C3", "B D4", "W F6"], 7.0));
            g.take_unsaved().unwrap()
        };
        // The same game, resumed: every point.
        let mut g = Graph::restored(saved.clone());
        assert!(
            g.take_unsaved().is_none(),
            "unconfirmed points are not saved"
        );
        g.follow(&state(&["B E5", "W C3", "B D4", "W F6"], 7.0));
        assert_eq!(g.points(), saved.points);
        // Two moves taken back while the daemon was down: their points go.
        let mut g = Graph::restored(saved.clone());
        g.follow(&state(&["B E5", "W C3"], 7.0));
        assert_eq!(g.points(), saved.points[..3]);
        // Another first move: only the empty board's point is of this game.
        let mut g = Graph::restored(saved.clone());
        g.follow(&state(&["B C3"], 7.0));
        assert_eq!(g.points(), saved.points[..1]);
        // Another komi (or board, rules, setup): another game, no point.
        let mut g = Graph::restored(saved);
        g.follow(&state(&["B E5", "W C3", "B D4", "W F6"], 6.5));
        assert!(g.points().is_empty());
    }

    #[test]
    fn bad_saved_points_are_refused() {
        let good = played(&["B E5", "W C3"]).take_unsaved().unwrap();
        assert_eq!(good.check(), Ok(()));
        let with = |f: &dyn Fn(&mut Saved)| {
            let mut s = good.clone();
            f(&mut s);
            s.check()
        };
        assert!(with(&|s| s.points.swap(0, 1))
            .unwrap_err()
            .contains("order"));
        assert!(with(&|s| s.points[1].number = 0)
            .unwrap_err()
            .contains("order"));
        assert!(with(&|s| s.game.moves.pop().map(drop).unwrap_or(()))
            .unwrap_err()
            .contains("past"));
        assert!(with(&|s| s.points[2].winrate = 1.5)
            .unwrap_err()
            .contains("range"));
        assert!(with(&|s| s.points[0].lead = f64::INFINITY)
            .unwrap_err()
            .contains("range"));
        assert!(with(&|s| s.points = vec![s.points[0]; MAX_POINTS + 1])
            .unwrap_err()
            .contains("more than"));
    }
}
