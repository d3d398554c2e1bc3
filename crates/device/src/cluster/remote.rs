//! An appliance's own live analysis done by the pool (`[analysis] remote = true`): the
//! position on the board is sent as one job, its answers (partial ones while the worker
//! searches) become the appliance's usual `analysis` messages, and a new position
//! supersedes the old job.
//!
//! [`query`] and [`message`] are the translation without I/O; [`run`] is the MQTT loop.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tengen_rules::{Game, Player};
use tokio::sync::watch;

use super::client::{open, reply_to, Submitted};
use super::job::{Ticket, JOB_TOPIC};
use super::link::Polled;
use super::Broker;
use crate::appliance::Out;
use crate::payload::{AnalysisMsg, Candidate};

/// How the appliance's position is asked about.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    /// Visits of the search (0: the worker's own limit).
    pub max_visits: u64,
    /// Partial answers this often.
    pub every: Duration,
    /// With ownership.
    pub ownership: bool,
}

/// The KataGo analysis query for the current position of `game` (its last turn only).
pub fn query(game: &Game, ask: &Ask) -> String {
    let size = game.board().size();
    let letter = |p: Player| p.letter().to_string();
    let moves: Vec<Value> = game
        .turns()
        .iter()
        .map(|t| json!([letter(t.player), size.gtp(t.mv)]))
        .collect();
    let initial = game.initial_board();
    let stones: Vec<Value> = size
        .points()
        .filter_map(|l| {
            let p = initial.stone(l)?;
            Some(json!([letter(p), size.gtp(tengen_rules::Move::Play(l))]))
        })
        .collect();
    let mut q = json!({
        "id": "live",
        "moves": moves,
        "initialStones": stones,
        "initialPlayer": letter(game.initial_player()),
        "rules": game.rules().to_json_no_komi(),
        "komi": game.rules().komi,
        "boardXSize": size.width(),
        "boardYSize": size.height(),
        "reportDuringSearchEvery": ask.every.as_secs_f64(),
        "includeOwnership": ask.ownership,
        // `message` reads values for Black: ask for them, whatever the worker's own
        // configuration says.
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"},
    });
    if ask.max_visits > 0 {
        q["maxVisits"] = json!(ask.max_visits);
    }
    q.to_string()
}

/// The appliance's `analysis` message for one answer line, with at most `top`
/// candidates; `None` for a warning or an error. The values are Black's ([`query`] asks
/// for them so); the message takes the side to move's view.
pub fn message(answer: &Value, top: usize) -> Option<AnalysisMsg> {
    let root = answer.get("rootInfo")?;
    let number = usize::try_from(answer.get("turnNumber")?.as_u64()?).ok()?;
    let to_move = root.get("currentPlayer")?.as_str()?;
    let white = match to_move {
        "W" => true,
        "B" => false,
        _ => return None,
    };
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let win = |w: f64| round(if white { 1.0 - w } else { w });
    let lead = |s: f64| round(if white { -s } else { s });
    let mut infos: Vec<&Value> = answer
        .get("moveInfos")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    infos.sort_by_key(|m| m.get("order").and_then(Value::as_u64).unwrap_or(u64::MAX));
    let moves = infos
        .into_iter()
        .take(top)
        .filter_map(|m| {
            Some(Candidate {
                vertex: m.get("move")?.as_str()?.to_string(),
                visits: m.get("visits").and_then(Value::as_u64).unwrap_or(0),
                winrate: win(num(m, "winrate")),
                score_lead: lead(num(m, "scoreLead")),
                pv: m
                    .get("pv")
                    .and_then(Value::as_array)
                    .map(|pv| {
                        pv.iter()
                            .filter_map(|s| s.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect();
    let ownership = answer.get("ownership").and_then(Value::as_array).map(|o| {
        let sign = if white { -1.0 } else { 1.0 };
        o.iter()
            .map(|x| (sign * x.as_f64().unwrap_or(0.0)) as f32)
            .collect()
    });
    Some(AnalysisMsg {
        number,
        to_move: to_move.to_string(),
        visits: root.get("visits").and_then(Value::as_u64).unwrap_or(0),
        winrate: win(num(root, "winrate")),
        score_lead: lead(num(root, "scoreLead")),
        moves,
        ownership,
        pool: true,
    })
}

/// Where the appliance's remote analysis goes.
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    /// The pool's broker.
    pub broker: Broker,
    /// The client id: names the session and the answer topic.
    pub id: String,
    /// Candidates per message.
    pub top: usize,
    /// Send the job again when nothing came back for it this long.
    pub resend_after: Duration,
    /// Call the pool silent when the position's job had no answer this long (`None`:
    /// never).
    pub fallback_after: Option<Duration>,
}

/// What the pool's answers tell the appliance.
#[derive(Debug)]
pub enum Heard {
    /// An `analysis` message of the position on show.
    Analysis(Out),
    /// The pool left the position's job unanswered for `fallback_after`: analyse here.
    Silent,
    /// The pool answers again after [`Heard::Silent`].
    Answering,
}

/// Sends each position `positions` holds (a query from [`query`], `None`: no analysis
/// wanted) to the pool and hands the current one's answers to `heard` as `analysis`
/// messages, until `positions` closes. Answers for a superseded position are dropped.
/// A job left unanswered for `fallback_after` is reported once as [`Heard::Silent`], and
/// the next answer as [`Heard::Answering`].
pub async fn run(
    cfg: RemoteConfig,
    mut positions: watch::Receiver<Option<String>>,
    mut heard: impl FnMut(Heard) + Send,
) {
    let (topic, mut link, mut pool) = open(&cfg.broker, &cfg.id, cfg.resend_after);
    let reply = |t: Ticket| reply_to(&topic, t);
    // The job of the position on show.
    let mut current: Option<Ticket> = None;
    // Since when the job on show waits for its first answer.
    let mut waiting_since: Option<Instant> = None;
    let mut silent = false;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    loop {
        tokio::select! {
            changed = positions.changed() => {
                if changed.is_err() {
                    break;
                }
                if let Some(t) = current.take() {
                    pool.forget(t.seq);
                }
                let wanted = positions.borrow_and_update().clone();
                waiting_since = None;
                let Some(line) = wanted else { continue };
                match pool.submit(&line, Instant::now()) {
                    Some(Submitted::Send(t, l)) => {
                        current = Some(t);
                        waiting_since = Some(Instant::now());
                        link.job(JOB_TOPIC, &l, &reply(t), None).await;
                    }
                    other => log::warn!("cluster: the position was not sent: {other:?}"),
                }
            },
            polled = link.next() => match polled {
                Polled::Connected => link.subscribe(&topic).await,
                Polled::Message(m) if !m.trusted => {
                    log::warn!("cluster: an answer without this pool's seal was dropped");
                }
                Polled::Message(m) => {
                    let (c, payload) = m.answer();
                    let ours = Ticket::read(c).is_some_and(|t| Some(t) == current);
                    let Some(line) = ours.then(|| pool.answer(c, payload, Instant::now())).flatten() else {
                        continue;
                    };
                    waiting_since = None;
                    if std::mem::take(&mut silent) {
                        log::info!("cluster: the pool answers again");
                        heard(Heard::Answering);
                    }
                    let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
                    match message(&v, cfg.top) {
                        Some(msg) => heard(Heard::Analysis(Out {
                            topic: "analysis",
                            payload: serde_json::to_vec(&msg).unwrap_or_default(),
                            retain: false,
                        })),
                        None => log::warn!("cluster: the pool answered {line}"),
                    }
                }
                Polled::Lost => {}
            },
            _ = tick.tick() => {
                let now = Instant::now();
                for (t, l) in pool.due(now) {
                    link.job(JOB_TOPIC, &l, &reply(t), None).await;
                }
                let overdue = waiting_since
                    .zip(cfg.fallback_after)
                    .is_some_and(|(since, after)| now.duration_since(since) >= after);
                if overdue && !silent {
                    log::warn!("cluster: no answer from the pool; analysing here until it answers");
                    silent = true;
                    heard(Heard::Silent);
                }
            }
        }
    }
    link.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::client::Pool;
    use tengen_rules::{BoardSize, Move, Rules};

    #[test]
    fn the_query_is_the_position_and_reads_as_a_valid_analysis_query() {
        let size = BoardSize::square(9).unwrap();
        let mut game = Game::new(size, Rules::default());
        game.play(Move::Play(size.loc(4, 4).unwrap())).unwrap();
        let ask = Ask {
            max_visits: 7,
            every: Duration::from_millis(500),
            ownership: false,
        };
        let q = query(&game, &ask);
        let mut pool = Pool::new(1, Duration::from_secs(5));
        assert!(matches!(
            pool.submit(&q, Instant::now()),
            Some(Submitted::Send(..))
        ));
        let v: Value = serde_json::from_str(&q).unwrap();
        assert_eq!(v["moves"], json!([["B", "E5"]]));
        assert_eq!(
            v["overrideSettings"]["reportAnalysisWinratesAs"],
            json!("BLACK")
        );
        assert_eq!(
            (v["maxVisits"].as_u64(), v["boardXSize"].as_u64()),
            (Some(7), Some(9))
        );
    }

    #[test]
    fn answers_take_the_side_to_moves_view_in_the_engines_order() {
        let a = json!({"id":"live","turnNumber":1,"isDuringSearch":true,
            "rootInfo":{"currentPlayer":"W","visits":9,"winrate":0.7,"scoreLead":3.0},
            "moveInfos":[
                {"move":"D4","order":1,"visits":3,"winrate":0.8,"scoreLead":4.0,"pv":["D4"]},
                {"move":"C3","order":0,"visits":6,"winrate":0.6,"scoreLead":2.0,"pv":["C3","D4"]}]});
        let m = message(&a, 1).unwrap();
        assert_eq!((m.number, m.to_move.as_str(), m.visits), (1, "W", 9));
        assert!((m.winrate - 0.3).abs() < 1e-9 && (m.score_lead + 3.0).abs() < 1e-9);
        assert_eq!(m.moves.len(), 1);
        assert_eq!(m.moves[0].vertex, "C3");
        assert_eq!(m.moves[0].pv, ["C3", "D4"]);
        assert!(message(&json!({"error":"x"}), 5).is_none());
    }
}
