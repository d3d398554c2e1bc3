//! One refereed game: the rules engine checks every move, dead stones come off the count
//! only when both engines agree, and under area scoring a disagreement is settled by
//! playing on, as KGS's cleanup phase does.

use anyhow::{bail, Result};
use tengen_rules::{BoardSize, Game, Loc, Move, Player, Rules, ScoringRule};

use super::engine::{Engine, Fault, Thinking};
use super::opening;
use super::{Forfeit, MatchArgs, Side};

/// A finished game: the winner (None for a draw or no result) and the record.
pub(super) struct Played {
    pub(super) a_black: bool,
    pub(super) winner: Option<Player>,
    /// The engine that lost by fault, and how.
    pub(super) forfeit: Option<(Side, Forfeit)>,
    pub(super) game: Game,
    /// Each side's time on its moves, by [`Side`].
    pub(super) thinking: [Thinking; 2],
}

/// Where a stretch of play left the game.
enum Stop {
    /// Two passes, or the move cap: the board decides.
    OnBoard,
    /// A resignation, or a loss by an engine's fault (which engine, and how).
    Decided(Option<(Side, Forfeit)>),
}

/// The two engines by colour, and which side of the match plays Black.
struct Seats {
    black: Engine,
    white: Engine,
    a_black: bool,
}

impl Seats {
    fn of(&mut self, pla: Player) -> (&mut Engine, &mut Engine) {
        match pla {
            Player::Black => (&mut self.black, &mut self.white),
            Player::White => (&mut self.white, &mut self.black),
        }
    }

    fn side_of(&self, pla: Player) -> Side {
        if (pla == Player::Black) == self.a_black {
            Side::A
        } else {
            Side::B
        }
    }
}

/// Plays game `index` of the match.
pub(super) fn play_one(a: &MatchArgs, index: usize, rules: Rules) -> Result<Played> {
    let size = BoardSize::square(a.board)?;
    let move_timeout = std::time::Duration::from_secs_f64(a.move_timeout);
    let a_black = index.is_multiple_of(2);
    let (black, white) = if a_black {
        (&a.engine_a, &a.engine_b)
    } else {
        (&a.engine_b, &a.engine_a)
    };
    let mut seats = Seats {
        black: Engine::start(black, move_timeout)?,
        white: Engine::start(white, move_timeout)?,
        a_black,
    };
    let rules_json = rules.to_json_no_komi().to_string();
    for e in [&mut seats.black, &mut seats.white] {
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
    for mv in opening::opening(size, rules, a.opening_moves, a.opening_seed, index) {
        let pla = game.to_move();
        game.play(mv)?;
        for e in [&mut seats.black, &mut seats.white] {
            e.setup(&format!("play {} {}", pla.letter(), size.gtp(mv)))?;
        }
    }
    let mut stop = play_moves(&mut game, &mut seats, index, a.max_moves, ["genmove"; 2]);
    if let Stop::OnBoard = stop {
        let disputed = count(&mut game, &mut seats, index)?;
        if disputed > 0 && rules.scoring == ScoringRule::Area {
            if let Some(s) = clean_up(&mut game, &mut seats, index, disputed) {
                stop = s;
            }
        }
    }
    let winner = game.outcome().and_then(|o| o.winner());
    if let Stop::OnBoard = stop {
        log_engine_counts(&mut seats, &game, index);
    }
    let forfeit = match stop {
        Stop::Decided(f) => f,
        Stop::OnBoard => None,
    };
    let mut thinking = [Thinking::default(); 2];
    thinking[seats.side_of(Player::Black) as usize] = seats.black.thinking;
    thinking[seats.side_of(Player::White) as usize] = seats.white.thinking;
    Ok(Played {
        a_black,
        winner,
        forfeit,
        game,
        thinking,
    })
}

/// Asks the engines for moves (`genmove` or a variant, per colour) until the game ends
/// on the board or `limit` moves have been played; every move is checked, and an engine
/// that crashes, hangs or answers illegally loses.
fn play_moves(
    game: &mut Game,
    seats: &mut Seats,
    index: usize,
    limit: usize,
    command: [&str; 2],
) -> Stop {
    let size = game.board().size();
    for _ in 0..limit {
        if game.is_over() {
            break;
        }
        let pla = game.to_move();
        let side = seats.side_of(pla);
        let (mover, other) = seats.of(pla);
        let cmd = command[pla.index()];
        let asked = std::time::Instant::now();
        let sent = mover.send(&format!("{cmd} {}", pla.letter()));
        mover.thinking.add(Thinking {
            time: asked.elapsed(),
            moves: 1,
        });
        let reply = match sent {
            Ok(reply) => reply,
            Err(f) => {
                log::warn!(
                    "game {index}: {} ({}) {f} on {cmd}: it loses",
                    mover.name,
                    pla.letter()
                );
                game.resign(pla);
                return Stop::Decided(Some((side, Forfeit::of(&f))));
            }
        };
        if reply.eq_ignore_ascii_case("resign") {
            game.resign(pla);
            return Stop::Decided(None);
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
                return Stop::Decided(Some((side, Forfeit::Illegal)));
            }
        };
        if game.play(mv).is_err() {
            // is_legal said yes: a referee bug, not the engine's fault. End the game here.
            log::warn!("game {index}: the referee could not play {reply}; counting now");
            return Stop::OnBoard;
        }
        if let Err(f) = other.send(&format!("play {} {}", pla.letter(), size.gtp(mv))) {
            log::warn!(
                "game {index}: {} ({}) {f} on {}'s legal move {}: it loses",
                other.name,
                pla.opp().letter(),
                pla.letter(),
                size.gtp(mv)
            );
            game.resign(pla.opp());
            return Stop::Decided(Some((seats.side_of(pla.opp()), Forfeit::of(&f))));
        }
    }
    Stop::OnBoard
}

/// Settles disputed dead stones by play. Under area scoring, capturing stones inside
/// one's own area or playing on there costs nothing, so the game goes on from the final
/// position: both engines get it again without the closing passes (`clear_board` and
/// the moves, which every GTP engine takes, whatever it does after two passes) and
/// are asked for `kgs-genmove_cleanup` if they know it (no passing while the opponent
/// has dead stones on the board), else `genmove`, until two passes again or one move
/// per point. Then stones both call dead come off the count; the rest stand. None if
/// play could not go on (the game and its first count are then left as they were).
fn clean_up(game: &mut Game, seats: &mut Seats, index: usize, disputed: usize) -> Option<Stop> {
    let mut resumed = game.clone();
    while resumed.turns().last().is_some_and(|t| t.mv == Move::Pass) {
        resumed.undo();
    }
    if resumed.is_over() {
        log::info!("game {index}: {disputed} stones disputed, but no pass to take back: counted as they stand");
        return None;
    }
    let size = game.board().size();
    let mut command = ["genmove"; 2];
    for pla in [Player::Black, Player::White] {
        let (e, _) = seats.of(pla);
        let replayed = e.send("clear_board").and_then(|_| {
            resumed.turns().iter().try_for_each(|t| {
                e.send(&format!("play {} {}", t.player.letter(), size.gtp(t.mv)))
                    .map(drop)
            })
        });
        if let Err(f) = replayed {
            // The engine no longer holds the game: nothing more can be asked of it.
            log::warn!(
                "game {index}: {} {f} while replaying the game for the cleanup: counted as they stand",
                e.name
            );
            return None;
        }
        if e.send("known_command kgs-genmove_cleanup").as_deref() == Ok("true") {
            command[pla.index()] = "kgs-genmove_cleanup";
        }
    }
    log::info!(
        "game {index}: {disputed} stones disputed: playing on (Black {}, White {})",
        command[0],
        command[1]
    );
    let before = resumed.turns().len();
    *game = resumed;
    let stop = play_moves(game, seats, index, size.area(), command);
    log::info!(
        "game {index}: cleanup took {} moves",
        game.turns().len().saturating_sub(before)
    );
    if let Stop::OnBoard = stop {
        if let Err(e) = count(game, seats, index) {
            log::warn!("game {index}: counting after the cleanup: {e:#}");
        }
    }
    Some(stop)
}

/// Ends the game on the board if it has not ended and counts it with the stones both
/// engines call dead taken off (a count without a dead-stone agreement rewards leaving
/// dead stones on the board); returns how many stones are disputed.
fn count(game: &mut Game, seats: &mut Seats, index: usize) -> Result<usize> {
    if !game.is_over() {
        game.end_and_score_now();
    }
    let (dead, disputed) = agreed_dead(seats, game, index);
    if !dead.is_empty() {
        game.rescore_with_dead(&dead)?;
    }
    Ok(disputed)
}

/// Both engines' own counts, for the log: dead stones may be judged differently.
fn log_engine_counts(seats: &mut Seats, game: &Game, index: usize) {
    let ours = game.outcome().map(|o| o.sgf_result()).unwrap_or_default();
    for e in [&mut seats.black, &mut seats.white] {
        match e.send("final_score") {
            Ok(theirs) => {
                if super::score_of(&theirs) != super::score_of(&ours) {
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

/// The stones both engines call dead (`final_status_list dead`) once the game has
/// ended on the board, and how many stones only one of them calls dead (those stay and
/// are counted as they stand); an engine that cannot answer agrees to nothing.
fn agreed_dead(seats: &mut Seats, game: &Game, index: usize) -> (Vec<Loc>, usize) {
    let size = game.board().size();
    let mut lists = Vec::with_capacity(2);
    for e in [&mut seats.black, &mut seats.white] {
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
            "game {index}: {} stones dead by agreement, taken off for the count; {disputed} disputed",
            agreed.len()
        );
    }
    (agreed, disputed)
}
