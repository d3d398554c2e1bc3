//! Prints what the classical engine sees in a diagram: worms, dragons, ownership and
//! the best moves with their reasons.
//!
//! `cargo run -p tengen-classic --example explain -- 'rows/separated/by/slashes' [b|w]`

use tengen_classic::Classic;
use tengen_rules::{Board, BoardSize, Game, GameOptions, Move, Player, Rules};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(diagram) = args.get(1) else {
        eprintln!("usage: explain 'ROW/ROW/...' [b|w]");
        std::process::exit(2);
    };
    let rows: Vec<&str> = diagram.split('/').collect();
    let to_move = match args.get(2).map(String::as_str) {
        Some("w") => Player::White,
        _ => Player::Black,
    };
    let size = match BoardSize::square(rows.len()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let board = match Board::from_rows(size, &rows) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let mut rules = Rules::chinese();
    rules.komi = 7.0;
    let game = Game::from_position(board, to_move, rules, GameOptions::default());
    let engine = Classic::new(10, 1);
    let a = engine.analyse(&game);
    let g = |l| size.gtp(Move::Play(l));
    for (i, w) in a.worms.list.iter().enumerate() {
        println!(
            "worm {} {:?} size {} libs {} attack {:?}@{:?} defence {:?}@{:?} life {:.2}",
            g(w.origin),
            w.colour,
            w.size,
            w.liberties,
            w.attack.outcome,
            w.attack.point.map(g),
            w.defence.outcome,
            w.defence.point.map(g),
            a.life[i]
        );
    }
    for d in &a.dragons.list {
        println!(
            "dragon {} {:?} stones {} libs {} eyes {}..{} space {} escape {} {:?} key {:?}",
            g(a.worms.list[d.worms[0]].origin),
            d.colour,
            d.stones,
            d.liberties,
            d.eyes_min,
            d.eyes_max,
            d.eye_space,
            d.escape,
            d.status,
            d.key_point.map(g)
        );
    }
    for y in 0..size.height() {
        let row: Vec<String> = (0..size.width())
            .map(|x| format!("{:+.1}", a.ownership[size.loc(x, y).unwrap()]))
            .collect();
        println!("{}", row.join(" "));
    }
    println!("white area {:.1}", a.white_area);
    let t = std::time::Instant::now();
    let values = engine.value_moves(&game);
    println!("valued {} moves in {:?}", values.len(), t.elapsed());
    for v in values.iter().take(8) {
        println!(
            "{} {:.2} (terr {:.2} rev {:.2} follow {:.2} shape {:.2}) {:?}",
            g(v.loc),
            v.value,
            v.territorial,
            v.reverse,
            v.followup,
            v.shape,
            v.reasons
        );
    }
    println!("genmove {}", size.gtp(engine.genmove(&game)));
}
