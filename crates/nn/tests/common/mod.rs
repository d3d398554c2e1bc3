//! Helpers shared by the golden tests: where the reference data is, and how a golden record
//! becomes a game.
// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;
use tengen_rules::{BoardSize, Game, Loc, Player, Rules};

/// `$TENGEN_SHARED`, else `../shared` beside the repository, if it holds golden data.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TENGEN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")));
    dir.join("golden").is_dir().then_some(dir)
}

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

/// Every k-th golden position with `TENGEN_GOLDEN_STRIDE=k` (CI's aarch64 run under
/// qemu, where each evaluation is a hundred times slower), else all of them.
pub fn stride() -> usize {
    std::env::var("TENGEN_GOLDEN_STRIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&k| k >= 1)
        .unwrap_or(1)
}

/// How the golden line says that only every k-th position ran.
pub fn stride_note() -> String {
    match stride() {
        1 => String::new(),
        k => format!(" (every {k}th position, TENGEN_GOLDEN_STRIDE)"),
    }
}
