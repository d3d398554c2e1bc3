//! `tengen match`: two GTP engines play each other with alternating colours; the rules
//! engine referees every move and scores every game (stones both engines call dead
//! taken off); one SGF per game; win rate with a
//! 95% confidence interval and the Elo difference at the end. An engine that crashes,
//! hangs or answers illegally loses that game and the match goes on.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tengen_rules::{sgf, BoardSize, Game, Loc, Move, Player, Rules};

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
}

/// Cap on the reply time of commands other than `genmove`.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Floor on the reply time of an engine's first command, which waits for its start-up.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(300);
/// How long an engine has to exit after `quit` before it is killed.
const QUIT_GRACE: Duration = Duration::from_secs(2);

/// Why an engine did not answer a command with `=`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fault {
    /// The process died or closed its output (the text says how we noticed).
    Crashed(String),
    /// No complete reply in time; the process has been killed.
    TimedOut(Duration),
    /// A `?` reply, with its text.
    Refused(String),
    /// Something that is not a GTP reply.
    Garbled(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Crashed(how) => write!(f, "crashed ({how})"),
            Fault::TimedOut(d) => write!(f, "did not answer within {:.1} s", d.as_secs_f64()),
            Fault::Refused(why) => write!(f, "refused: {why}"),
            Fault::Garbled(reply) => {
                write!(f, "answered with something that is not GTP: {reply:?}")
            }
        }
    }
}

impl std::error::Error for Fault {}

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

/// One engine process.
struct Engine {
    child: Child,
    /// None once closed in `drop`.
    input: Option<ChildStdin>,
    /// Lines of the engine's stdout, from a reader thread, so a reply can have a deadline.
    lines: Receiver<String>,
    name: String,
    /// Reply time for `genmove`.
    move_timeout: Duration,
    /// Set once the engine crashed or was killed: every later command fails at once.
    dead: bool,
}

impl Engine {
    fn start(cmd: &str, move_timeout: Duration) -> Result<Engine> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Its own process group, so `kill` reaches what a wrapper script started too.
        // Ctrl-C then reaches only us; engines see their input close and quit.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {cmd:?}"))?;
        let input = child.stdin.take().context("engine stdin")?;
        let output = child.stdout.take().context("engine stdout")?;
        let (tx, lines) = mpsc::channel();
        // Detached: it ends when the engine's output closes or, after the next line, when
        // the engine is dropped. A killed engine's orphaned children may keep the pipe open;
        // then this thread waits for them, which costs nothing but a parked thread.
        std::thread::Builder::new()
            .name("engine-stdout".into())
            .spawn(move || {
                let mut output = BufReader::new(output);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match output.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        // Lossy: bad bytes make a garbled reply, not a dead engine.
                        Ok(_) => {
                            if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                                break;
                            }
                        }
                    }
                }
            })
            .context("starting the engine's reader thread")?;
        let mut e = Engine {
            child,
            input: Some(input),
            lines,
            name: cmd.to_string(),
            move_timeout,
            dead: false,
        };
        match e.send_within("name", move_timeout.max(STARTUP_TIMEOUT)) {
            Ok(n) if !n.is_empty() => e.name = n,
            Ok(_) | Err(Fault::Refused(_) | Fault::Garbled(_)) => {}
            Err(f) => bail!("{cmd:?} {f}"),
        }
        Ok(e)
    }

    /// Sends one command with the reply deadline its kind gets (see `--move-timeout`).
    fn send(&mut self, cmd: &str) -> Result<String, Fault> {
        let limit = if cmd.starts_with("genmove") {
            self.move_timeout
        } else {
            self.move_timeout.min(COMMAND_TIMEOUT)
        };
        self.send_within(cmd, limit)
    }

    /// Like `send`, with a fault naming the engine and command, for set-up.
    fn setup(&mut self, cmd: &str) -> Result<String> {
        self.send(cmd)
            .with_context(|| format!("{}: {cmd:?}", self.name))
    }

    /// Sends one command; `Ok(text)` for `=`. An engine that does not answer within
    /// `limit` is killed: its late reply would be taken for the next command's.
    fn send_within(&mut self, cmd: &str, limit: Duration) -> Result<String, Fault> {
        if self.dead {
            return Err(Fault::Crashed("gone after an earlier fault".into()));
        }
        let Some(input) = self.input.as_mut() else {
            return Err(Fault::Crashed("input closed".into()));
        };
        if let Err(e) = writeln!(input, "{cmd}").and_then(|()| input.flush()) {
            self.dead = true;
            return Err(Fault::Crashed(format!("writing to it: {e}")));
        }
        let deadline = Instant::now() + limit;
        let mut reply = String::new();
        loop {
            let line = match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    self.dead = true;
                    self.kill();
                    return Err(Fault::TimedOut(limit));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.dead = true;
                    return Err(Fault::Crashed("closed its output".into()));
                }
            };
            if line.trim().is_empty() && !reply.is_empty() {
                break;
            }
            if !line.trim().is_empty() {
                reply.push_str(&line);
            }
        }
        let reply = reply.trim();
        match reply.chars().next() {
            Some('=') => Ok(reply[1..]
                .trim_start_matches(char::is_numeric)
                .trim()
                .to_string()),
            Some('?') => Err(Fault::Refused(
                reply[1..]
                    .trim_start_matches(char::is_numeric)
                    .trim()
                    .to_string(),
            )),
            _ => Err(Fault::Garbled(reply.to_string())),
        }
    }

    /// Kills the engine with everything it started (on Unix, its process group): a
    /// wrapper script's engine would otherwise live on, still thinking, beside later games.
    /// Only called before the child is reaped, so its pid still names its group.
    fn kill(&mut self) {
        #[cfg(unix)]
        {
            let _ = Command::new("sh")
                .arg("-c")
                .arg("kill -s KILL -- \"-$1\"")
                .arg("sh")
                .arg(self.child.id().to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
    }
}

impl Drop for Engine {
    /// Asks the engine to quit, then kills it if it has not exited within `QUIT_GRACE`:
    /// dropping never hangs on a stuck engine.
    fn drop(&mut self) {
        if let Some(mut input) = self.input.take() {
            if !self.dead {
                let _ = writeln!(input, "quit");
                let _ = input.flush();
            }
            // Dropping `input` closes stdin: an engine waiting for a command sees its end.
        }
        let deadline = Instant::now() + QUIT_GRACE;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => break,
            }
        }
        self.kill();
        let _ = self.child.wait();
    }
}

/// A finished game: the winner (None for a draw or no result) and the record.
struct Played {
    a_black: bool,
    winner: Option<Player>,
    /// The engine that lost by fault, and how.
    forfeit: Option<(Side, Forfeit)>,
    game: Game,
}

fn play_one(a: &MatchArgs, index: usize, rules: Rules) -> Result<Played> {
    let size = BoardSize::square(a.board).with_context(|| format!("--board {}", a.board))?;
    let move_timeout = Duration::from_secs_f64(a.move_timeout);
    let a_black = index % 2 == 0;
    let side_of = |pla: Player| {
        if (pla == Player::Black) == a_black {
            Side::A
        } else {
            Side::B
        }
    };
    let (mut black, mut white) = if a_black {
        (
            Engine::start(&a.engine_a, move_timeout)?,
            Engine::start(&a.engine_b, move_timeout)?,
        )
    } else {
        (
            Engine::start(&a.engine_b, move_timeout)?,
            Engine::start(&a.engine_a, move_timeout)?,
        )
    };
    let rules_json = rules.to_json_no_komi().to_string();
    for e in [&mut black, &mut white] {
        e.setup(&format!("boardsize {}", a.board))?;
        e.setup("clear_board")?;
        e.setup(&format!("komi {}", a.komi))?;
        // Not every engine knows KataGo's rules command; the referee scores anyway.
        match e.send(&format!("kata-set-rules {rules_json}")) {
            Ok(_) | Err(Fault::Refused(_)) => {}
            Err(f) => bail!("{}: kata-set-rules: {f}", e.name),
        }
        if let Some(t) = &a.time_settings {
            e.setup(&format!("time_settings {t}"))?;
        }
    }
    let mut game = Game::new(size, rules);
    let mut forfeit = None;
    // Resigned or forfeited: no count to compare.
    let mut decided = false;
    for _ in 0..a.max_moves {
        if game.is_over() {
            break;
        }
        let pla = game.to_move();
        let (mover, other) = match pla {
            Player::Black => (&mut black, &mut white),
            Player::White => (&mut white, &mut black),
        };
        let reply = match mover.send(&format!("genmove {}", pla.letter())) {
            Ok(reply) => reply,
            Err(f) => {
                log::warn!(
                    "game {index}: {} ({}) {f} on genmove: it loses",
                    mover.name,
                    pla.letter()
                );
                game.resign(pla);
                forfeit = Some((side_of(pla), Forfeit::of(&f)));
                decided = true;
                break;
            }
        };
        if reply.eq_ignore_ascii_case("resign") {
            game.resign(pla);
            decided = true;
            break;
        }
        let mv = match size.parse_move(&reply) {
            Ok(mv) if game.is_legal(mv) => mv,
            _ => {
                log::warn!(
                    "game {index}: {} ({}) played {reply:?}, not a legal move: it loses",
                    mover.name,
                    pla.letter()
                );
                game.resign(pla);
                forfeit = Some((side_of(pla), Forfeit::Illegal));
                decided = true;
                break;
            }
        };
        game.play(mv)?;
        if let Err(f) = other.send(&format!("play {} {}", pla.letter(), size.gtp(mv))) {
            log::warn!(
                "game {index}: {} ({}) {f} on {}'s legal move {}: it loses",
                other.name,
                pla.opp().letter(),
                pla.letter(),
                size.gtp(mv)
            );
            game.resign(pla.opp());
            forfeit = Some((side_of(pla.opp()), Forfeit::of(&f)));
            decided = true;
            break;
        }
    }
    if !game.is_over() {
        game.end_and_score_now();
    }
    if !decided {
        // A count without a dead-stone agreement rewards leaving dead stones on the board.
        let dead = agreed_dead(&mut black, &mut white, &game, index);
        if !dead.is_empty() {
            game.rescore_with_dead(&dead)?;
        }
    }
    let winner = game.outcome().and_then(|o| o.winner());
    if !decided {
        // Both engines' own counts, for the log: dead stones may be judged differently.
        let ours = game.outcome().map(|o| o.sgf_result()).unwrap_or_default();
        for e in [&mut black, &mut white] {
            match e.send("final_score") {
                Ok(theirs) => {
                    if score_of(&theirs) != score_of(&ours) {
                        log::info!(
                            "game {index}: referee says {ours}, {} says {theirs}",
                            e.name
                        );
                    }
                }
                Err(f @ (Fault::Crashed(_) | Fault::TimedOut(_))) => {
                    log::warn!("game {index}: {} {f} on final_score", e.name);
                }
                Err(f) => log::info!("game {index}: {} {f} on final_score", e.name),
            }
        }
    }
    Ok(Played {
        a_black,
        winner,
        forfeit,
        game,
    })
}

/// The stones both engines call dead (`final_status_list dead`) once the game has
/// ended on the board. Stones only one of them calls dead stay and are counted as they
/// stand (logged as disputed); an engine that cannot answer agrees to nothing.
fn agreed_dead(black: &mut Engine, white: &mut Engine, game: &Game, index: usize) -> Vec<Loc> {
    let size = game.board().size();
    let mut lists = Vec::with_capacity(2);
    for e in [black, white] {
        let mut dead = Vec::new();
        match e.send("final_status_list dead") {
            Ok(reply) => {
                for word in reply.split_whitespace() {
                    match size.parse_move(word) {
                        Ok(Move::Play(l)) if game.board().stone(l).is_some() => dead.push(l),
                        _ => log::info!(
                            "game {index}: {} calls {word:?} dead, not a stone: ignored",
                            e.name
                        ),
                    }
                }
            }
            Err(f) => log::info!("game {index}: {} {f} on final_status_list dead", e.name),
        }
        dead.sort_unstable();
        dead.dedup();
        lists.push(dead);
    }
    let (b, w) = (&lists[0], &lists[1]);
    let agreed: Vec<Loc> = b.iter().filter(|l| w.contains(l)).copied().collect();
    let disputed = b.len() + w.len() - 2 * agreed.len();
    if !agreed.is_empty() || disputed > 0 {
        log::info!(
            "game {index}: {} stones dead by agreement, taken off for the count; {disputed} disputed, counted as they stand",
            agreed.len()
        );
    }
    agreed
}

/// Runs `tengen match`.
pub fn run(a: MatchArgs) -> Result<()> {
    let mut rules = Rules::parse(&a.rules).with_context(|| format!("--rules {}", a.rules))?;
    if !tengen_rules::komi_is_valid(f64::from(a.komi)) {
        bail!("--komi must be a multiple of 0.5 from -150 to 150");
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
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Played)>> = Mutex::new(Vec::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..a.parallel.clamp(1, a.games.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= a.games {
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
    for (_, p) in &results {
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
