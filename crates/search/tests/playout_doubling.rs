//! Playout doubling advantage (KataGo's `playoutDoublingAdvantage`): the network's input
//! carries it with the mover's sign, the evaluation cache keeps evaluations made under
//! different advantages apart, and KaTrain's handicap AI settings change the move chosen
//! in a handicap game. The network tests are skipped without ../shared.

mod common;

use std::sync::{Arc, Mutex};

use tengen_rules::handicap::fixed_handicap;
use tengen_rules::{BoardSize, Game, Player, Rules};
use tengen_search::evaluator::{EvalError, NnOutput};
use tengen_search::{
    EvalRequest, Evaluator, Limits, Search, SearchParams, SnapshotOptions, UniformEvaluator,
};

/// A uniform evaluator that records the advantage input of each request by mover.
#[derive(Default)]
struct Recorder(Mutex<Vec<(Player, f64)>>);

impl Evaluator for Recorder {
    fn evaluate(&self, game: &Game, req: &EvalRequest) -> Result<Arc<NnOutput>, EvalError> {
        let seen = (game.to_move(), req.inputs.playout_doubling_advantage);
        self.0.lock().unwrap().push(seen);
        UniformEvaluator.evaluate(game, req)
    }
}

fn handicap_game(n: usize, stones: usize, komi: f32) -> Game {
    let size = BoardSize::square(n).unwrap();
    let mut rules = Rules::chinese();
    rules.komi = komi;
    Game::with_handicap(size, rules, &fixed_handicap(size, stones).unwrap()).unwrap()
}

/// The advantage inputs a 64-visit search of `game` sent, by mover.
fn inputs_seen(game: &Game, params: SearchParams) -> Vec<(Player, f64)> {
    let rec = Arc::new(Recorder::default());
    let mut s = Search::new(rec.clone(), params);
    s.set_position(game);
    s.run(Limits::visits(64)).unwrap();
    let seen = rec.0.lock().unwrap().clone();
    assert!(seen.iter().any(|s| s.0 == Player::Black) && seen.iter().any(|s| s.0 == Player::White));
    seen
}

#[test]
fn the_advantage_reaches_the_input_with_the_movers_sign() {
    let g = handicap_game(9, 2, 0.5);
    assert_eq!(g.to_move(), Player::White);
    // KaTrain's handicap AI: Black, the handicap taker, is given a negative advantage.
    let katrain = SearchParams {
        playout_doubling_advantage: -1.5,
        playout_doubling_advantage_pla: Some(Player::Black),
        ..SearchParams::default()
    };
    for (pla, pda) in inputs_seen(&g, katrain) {
        let want = if pla == Player::Black { -1.5 } else { 1.5 };
        assert_eq!(pda, want, "{pla:?} to move");
    }
    // No player named: the advantage is the root player's (White here).
    let root = SearchParams {
        playout_doubling_advantage: 2.0,
        ..SearchParams::default()
    };
    for (pla, pda) in inputs_seen(&g, root) {
        let want = if pla == Player::White { 2.0 } else { -2.0 };
        assert_eq!(pda, want, "{pla:?} to move");
    }
    // By default, no advantage at all.
    assert!(inputs_seen(&g, SearchParams::default())
        .iter()
        .all(|s| s.1 == 0.0));
}

#[test]
fn a_new_advantage_forgets_the_tree() {
    let g = handicap_game(9, 2, 0.5);
    let mut s = Search::new(Arc::new(UniformEvaluator), SearchParams::default());
    s.set_position(&g);
    s.run(Limits::visits(40)).unwrap();
    assert_eq!(s.stats().root_visits, 40);
    // A wider exploration keeps the tree; a new advantage does not.
    s.set_params(SearchParams {
        cpuct_exploration: 1.1,
        ..SearchParams::default()
    });
    assert_eq!(s.stats().root_visits, 40);
    s.set_params(SearchParams {
        playout_doubling_advantage: 1.0,
        ..SearchParams::default()
    });
    assert_eq!(s.stats().root_visits, 0);
}

fn network(n: usize) -> Option<Arc<dyn Evaluator>> {
    common::b6c96("playout doubling with the b6c96 network", n)
}

/// The move chosen and the network's lead for White at the root, after `visits` visits.
fn search(ev: &Arc<dyn Evaluator>, g: &Game, params: SearchParams, visits: u64) -> (String, f64) {
    let mut s = Search::new(ev.clone(), params);
    s.set_position(g);
    s.run(Limits::visits(visits)).unwrap();
    let a = s.analysis(&SnapshotOptions::default()).unwrap();
    let size = g.board().size();
    let top: Vec<String> = a
        .moves
        .iter()
        .take(5)
        .map(|m| format!("{} v{} wr{:.3}", size.gtp(m.mv), m.visits, m.winrate))
        .collect();
    println!("top: {}", top.join(", "));
    (size.gtp(a.best_move().unwrap()), a.root.raw_lead)
}

/// KaTrain's handicap AI with its automatic advantage (`ai.py`: 3/8 of a point per
/// handicap stone, capped at 3).
fn katrain_handicap(stones: f64, komi: f64) -> SearchParams {
    let advantage = (stones - 1.0).max(0.0) - (komi - 7.0) / 14.0;
    SearchParams {
        playout_doubling_advantage: (-advantage * 3.0 / 8.0).clamp(-3.0, 3.0),
        playout_doubling_advantage_pla: Some(Player::Black),
        ..SearchParams::default()
    }
}

#[test]
fn katrain_handicap_settings_change_the_move_in_a_handicap_game() {
    let n = 19;
    let Some(ev) = network(n) else { return };
    let g = handicap_game(n, 9, 0.5);
    let params = katrain_handicap(9.0, 0.5);
    assert_eq!(params.playout_doubling_advantage, -3.0);
    let (plain, plain_lead) = search(&ev, &g, SearchParams::default(), 60);
    // The same evaluator and cache: an evaluation made without the advantage must not be
    // reused with it.
    let (handicap, handicap_lead) = search(&ev, &g, params, 60);
    println!("default {plain} ({plain_lead:.1}), handicap AI {handicap} ({handicap_lead:.1})");
    // White, facing a Black with an eighth of its playouts, expects to lose by less.
    assert!(
        handicap_lead > plain_lead + 5.0,
        "{plain_lead} -> {handicap_lead}"
    );
    assert_ne!(plain, handicap);
}
