//! Helpers of the nn crate's golden tests: how a golden record becomes a game. Finding and
//! reading the shared data is `tengen_test_support`'s.
// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

pub mod rawnn;

use serde_json::Value;
use tengen_rules::{BoardSize, Game, Loc, Player, Rules};

/// Replays a golden record as KataGo's GTP did: rules by name, free handicap, then every move
/// played tolerantly (cleanup phases prevented, the default). Returns the game and the side
/// the record says is to move.
pub fn replay(r: &Value) -> (Game, Player) {
    let x = r["boardXSize"].as_u64().expect("boardXSize") as usize;
    let y = r["boardYSize"].as_u64().expect("boardYSize") as usize;
    let size = BoardSize::new(x, y).expect("size");
    let komi = r["komi"].as_f64().expect("komi") as f32;
    let rules = Rules::parse_with_komi(r["rules"].as_str().expect("rules"), komi).expect("rules");
    let handicap: Vec<Loc> = r["handicapStones"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| size.parse_loc(s.as_str().expect("vertex")).expect("vertex"))
                .collect()
        })
        .unwrap_or_default();
    let mut g = if handicap.is_empty() {
        Game::new(size, rules)
    } else {
        Game::with_handicap(size, rules, &handicap).expect("handicap")
    };
    for m in r["moves"].as_array().expect("moves") {
        let pla: Player = m[0].as_str().expect("colour").parse().expect("colour");
        let mv = size
            .parse_move(m[1].as_str().expect("vertex"))
            .expect("vertex");
        g.play_tolerant(pla, mv).expect("golden move");
    }
    let next: Player = r["nextPlayer"]
        .as_str()
        .expect("nextPlayer")
        .parse()
        .expect("colour");
    (g, next)
}
