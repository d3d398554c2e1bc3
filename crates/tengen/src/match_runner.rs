//! `tengen match`: two GTP engines play each other with alternating colours; the rules
//! engine referees every move and scores every game (stones both engines call dead
//! taken off); one SGF per game; win rate with a
//! 95% confidence interval and the Elo difference at the end. An engine that crashes,
//! hangs or answers illegally loses that game and the match goes on.

mod engine;
mod opening;
mod referee;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tengen_rules::{sgf, BoardSize, Player, Rules};

use engine::Fault;
use referee::{play_one, Played};

/// Options of `tengen match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    /// First engine: a shell command line that speaks GTP on stdin/stdout.
    #[arg(long)]
    engine_a: String,
    /// Second engine.
    #[arg(long)]
    engine_b: String,
    /// Games to play (colours alternate; A is Black in even games).
    #[arg(long, default_value_t = 10)]
    games: usize,
    /// Board size.
    #[arg(long, default_value_t = 9)]
    board: usize,
    /// Komi.
    #[arg(long, default_value_t = 7.0)]
    komi: f32,
    /// Rules the referee scores by (sent to engines that know `kata-set-rules`).
    #[arg(long, default_value = "chinese")]
    rules: String,
    /// GTP `time_settings` for both engines, e.g. "0 2 1" (2 s per move).
    #[arg(long)]
    time_settings: Option<String>,
    /// Seconds an engine has to answer `genmove` before it is killed and loses the game.
    /// Other commands get min(this, 30 s); an engine's first command, which waits for it
    /// to start up (e.g. load a network), gets max(this, 300 s).
    #[arg(long, default_value_t = 120.0)]
    move_timeout: f64,
    /// Games played at once (each with its own pair of engine processes).
    #[arg(long, default_value_t = 1)]
    parallel: usize,
    /// Adjudicate by the referee's count after this many moves.
    #[arg(long, default_value_t = 600)]
    max_moves: usize,
    /// Directory for one SGF per game.
    #[arg(long)]
    sgf_dir: Option<PathBuf>,
    /// Random moves (off the first line) each game starts from; games 2k and 2k+1 share
    /// theirs, so each opening is played once with each engine as Black.
    #[arg(long, default_value_t = 0)]
    opening_moves: usize,
    /// Seed of the random openings.
    #[arg(long, default_value_t = 1)]
    opening_seed: u64,
    /// Index of the first game: games N to N+games-1 are played, with the colours,
    /// openings and SGF names they have in a whole match, so a stopped match can be
    /// finished or one match split across processes.
    #[arg(long, default_value_t = 0)]
    first_game: usize,
}

/// How a game was lost by an engine's fault rather than by play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forfeit {
    /// The engine died or closed its output.
    Crashed = 0,
    /// The engine did not answer in time.
    Hung = 1,
    /// An illegal or unreadable move, or a refused `genmove`/`play`.
    Illegal = 2,
}

impl Forfeit {
    fn of(fault: &Fault) -> Forfeit {
        match fault {
            Fault::Crashed(_) => Forfeit::Crashed,
            Fault::TimedOut(_) => Forfeit::Hung,
            Fault::Refused(_) | Fault::Garbled(_) => Forfeit::Illegal,
        }
    }
}

/// Which engine of the match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    A = 0,
    B = 1,
}

/// Runs `tengen match`.
pub fn run(a: MatchArgs) -> Result<()> {
    let mut rules = Rules::parse(&a.rules).with_context(|| format!("--rules {}", a.rules))?;
    if !tengen_rules::komi_is_valid(f64::from(a.komi)) {
        bail!("--komi must be {}", tengen_rules::komi_rule());
    }
    rules.komi = a.komi;
    if !(a.move_timeout.is_finite() && a.move_timeout > 0.0 && a.move_timeout < 1e9) {
        bail!("--move-timeout must be a positive number of seconds");
    }
    BoardSize::square(a.board).with_context(|| format!("--board {}", a.board))?;
    if let Some(dir) = &a.sgf_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let bar = ProgressBar::new(a.games as u64).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let end = a
        .first_game
        .checked_add(a.games)
        .context("--first-game plus --games is too large")?;
    let next = AtomicUsize::new(a.first_game);
    let results: Mutex<Vec<(usize, Played)>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..a.parallel.clamp(1, a.games.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= end {
                    break;
                }
                match play_one(&a, i, rules) {
                    Ok(p) => {
                        if let Some(dir) = &a.sgf_dir {
                            let path = dir.join(format!("game-{i:04}.sgf"));
                            if let Err(e) = std::fs::write(&path, sgf::save(&p.game)) {
                                log::warn!("writing {}: {e}", path.display());
                            }
                        }
                        results
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((i, p));
                    }
                    Err(e) => errors
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("game {i}: {e:#}")),
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let errors = errors.into_inner().unwrap_or_default();
    for e in &errors {
        eprintln!("{e}");
    }
    let results = results.into_inner().unwrap_or_default();
    let (mut a_wins, mut b_wins, mut draws) = (0usize, 0usize, 0usize);
    // [side][crashed, hung, illegal]
    let mut faults = [[0usize; 3]; 2];
    let mut thinking = [engine::Thinking::default(); 2];
    for (_, p) in &results {
        thinking[0].add(p.thinking[0]);
        thinking[1].add(p.thinking[1]);
        if let Some((side, how)) = p.forfeit {
            faults[side as usize][how as usize] += 1;
        }
        let a_colour = if p.a_black {
            Player::Black
        } else {
            Player::White
        };
        match p.winner {
            Some(w) if w == a_colour => a_wins += 1,
            Some(_) => b_wins += 1,
            None => draws += 1,
        }
    }
    let n = results.len();
    println!("A: {}\nB: {}", a.engine_a, a.engine_b);
    println!(
        "games {n} (of {}), A wins {a_wins}, B wins {b_wins}, draws {draws}, errors {}",
        a.games,
        errors.len()
    );
    let [fa, fb] = faults;
    println!(
        "faults: A crashed {}, hung {}, illegal {}; B crashed {}, hung {}, illegal {}",
        fa[0], fa[1], fa[2], fb[0], fb[1], fb[2]
    );
    let per_move = |t: engine::Thinking| t.time.as_secs_f64() / f64::from(t.moves.max(1));
    println!(
        "time a move: A {:.3} s over {} moves, B {:.3} s over {} moves",
        per_move(thinking[0]),
        thinking[0].moves,
        per_move(thinking[1]),
        thinking[1].moves
    );
    if n > 0 {
        let (p, lo, hi) = win_rate(a_wins as f64 + 0.5 * draws as f64, n as f64);
        println!(
            "A win rate {:.1}% (95% CI {:.1}%..{:.1}%), Elo A-B {} ({}..{})",
            100.0 * p,
            100.0 * lo,
            100.0 * hi,
            elo(p),
            elo(lo),
            elo(hi)
        );
    }
    if n == 0 {
        bail!("no game finished");
    }
    Ok(())
}

/// White's margin in a result like `B+3.5`, `W+2`, `0` (None for resignations and junk).
fn score_of(result: &str) -> Option<f32> {
    let r = result.trim();
    if r == "0" {
        return Some(0.0);
    }
    let (sign, rest) = match r.get(..2).map(str::to_ascii_uppercase).as_deref() {
        Some("B+") => (-1.0, &r[2..]),
        Some("W+") => (1.0, &r[2..]),
        _ => return None,
    };
    rest.parse::<f32>().ok().map(|x| sign * x)
}

/// Win rate and its 95% Wilson interval from `wins` (draws counting half) of `n`.
fn win_rate(wins: f64, n: f64) -> (f64, f64, f64) {
    let p = wins / n;
    let z = 1.959_964;
    let d = 1.0 + z * z / n;
    let c = (p + z * z / (2.0 * n)) / d;
    let r = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / d;
    (p, (c - r).max(0.0), (c + r).min(1.0))
}

/// The Elo difference a win rate implies, as text (±inf at 0% and 100%).
fn elo(p: f64) -> String {
    if p <= 0.0 {
        "-inf".into()
    } else if p >= 1.0 {
        "+inf".into()
    } else {
        // Adding 0.0 turns -0.0 (at exactly 50%) into 0.0.
        format!("{:+.0}", -400.0 * (1.0 / p - 1.0).log10() + 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_and_elo() {
        let (p, lo, hi) = win_rate(50.0, 100.0);
        assert!((p - 0.5).abs() < 1e-12);
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3);
        assert_eq!(elo(0.5), "+0");
        assert_eq!(elo(0.76), "+200");
        assert_eq!(elo(0.0), "-inf");
        assert_eq!(score_of("B+9.0"), score_of("B+9"));
        assert_eq!(score_of("W+0.5"), Some(0.5));
        assert_eq!(score_of("0"), Some(0.0));
        assert_eq!(score_of("B+R"), None);
        let (_, lo, hi) = win_rate(10.0, 10.0);
        assert!(lo > 0.69 && hi > 0.999_999);
    }
}
