//! Prints the move prior's features of every legal move, for fitting its weights
//! (`scripts/fit_prior.py`).
//!
//! Reads positions from standard input, one per line: the board size, then the moves
//! as `B:D4`, `W:pass`... Prints, per position, `position N` and then one line per legal
//! move: its GTP vertex and its feature numbers.

use std::io::{BufRead, Write};

use tengen_classic::engine::prior_inputs;
use tengen_classic::prior::{PointNotes, Position};
use tengen_classic::Classic;
use tengen_rules::{BoardSize, Game, Move, Player, Rules};

fn main() {
    let engine = Classic::new(10, 1);
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (n, line) in stdin.lock().lines().enumerate() {
        let Ok(line) = line else { break };
        let mut words = line.split_whitespace();
        let Some(Ok(side)) = words.next().map(str::parse::<usize>) else {
            eprintln!("line {}: no board size", n + 1);
            continue;
        };
        let Ok(size) = BoardSize::square(side) else {
            eprintln!("line {}: bad board size {side}", n + 1);
            continue;
        };
        let mut game = Game::new(size, Rules::chinese());
        let mut ok = true;
        for w in words {
            let (c, v) = w.split_once(':').unwrap_or(("", w));
            let pla = if c == "W" {
                Player::White
            } else {
                Player::Black
            };
            game.set_player_to_move(pla);
            match size.parse_move(v).map(|m| game.play(m)) {
                Ok(Ok(())) => {}
                _ => {
                    eprintln!("line {}: cannot play {w}", n + 1);
                    ok = false;
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        let a = engine.analyse(&game);
        let (ctx, notes) = prior_inputs(&game, &a);
        let position = Position::new(game.board(), game.to_move(), ctx);
        let _ = writeln!(out, "position {n}");
        for l in size.points() {
            if !game.is_legal(Move::Play(l)) {
                continue;
            }
            let note: PointNotes = notes[size.index_of(l)];
            let f = position.features(l, Some(note));
            let list: Vec<String> = f.iter().map(u32::to_string).collect();
            let _ = writeln!(out, "{} {}", size.gtp(Move::Play(l)), list.join(" "));
        }
    }
}
