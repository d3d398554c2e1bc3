//! Reading one JSON line of KataGo's analysis protocol: an action, or a query that
//! becomes one task per analysed turn. Unknown fields are warnings; bad ones are errors
//! naming the field.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tengen_rules::{Board, BoardSize, Game, GameOptions, Hash, Move, Player, Rules, Turn};
use tengen_search::{FilterRule, SearchParams};

use super::response::Perspective;

/// Longest query line read: a 10,000-move game with every turn listed in `analyzeTurns`
/// takes about 200 KB; a longer line is skipped unread and answered with an error.
pub const MAX_QUERY_LINE_BYTES: usize = 1 << 20;

/// Most moves (plus initial stones) one query may hold: replaying them is the work done
/// before the query is answered, and 10,000 is 25 times a long 19x19 game.
pub const MAX_QUERY_MOVES: usize = 10_000;

/// Most positions of one query kept as starting points for its turns; a turn is
/// replayed from the nearest one before it, so a query costs at most this many games
/// however many of its turns are analysed.
const MAX_CHECKPOINTS: usize = 32;

/// One position to analyse: a turn of a query, sharing everything else with the query's
/// other turns.
#[derive(Clone)]
pub struct Task {
    /// Turn number analysed.
    pub turn: usize,
    /// Higher runs first.
    pub priority: i64,
    /// What the query asked, shared by its turns.
    pub query: Arc<Query>,
    /// Bytes this task holds while queued (its share of the query), for the queue's limit.
    pub cost: usize,
}

impl Task {
    /// The position of this turn, replayed from the query's nearest earlier checkpoint.
    pub fn game(&self) -> Result<Game, String> {
        self.query.record.position(self.turn)
    }
}

/// What a query asked for, apart from its turns.
pub struct Query {
    /// The query's id.
    pub id: String,
    /// The game, from which each turn's position is built when it is searched.
    pub record: Record,
    /// Search parameters for it.
    pub params: SearchParams,
    /// Visit limit.
    pub max_visits: u64,
    /// Time limit (`maxTime` in `overrideSettings`), if any.
    pub max_time: Option<Duration>,
    /// Whose view values are reported in, when the query overrides the engine's.
    pub perspective: Option<Perspective>,
    /// PV length after the first move.
    pub pv_len: usize,
    /// Include root ownership (and its stdev).
    pub ownership: bool,
    /// Include ownership stdev.
    pub ownership_stdev: bool,
    /// Include ownership per move.
    pub moves_ownership: bool,
    /// Include ownership stdev per move.
    pub moves_ownership_stdev: bool,
    /// Include the raw policy.
    pub policy: bool,
    /// Include PV visits.
    pub pv_visits: bool,
    /// Avoid/allow rules.
    pub filters: Vec<FilterRule>,
    /// Report partial results this often.
    pub report_every: Option<Duration>,
}

/// A query's moves and a few positions along them: a turn's position is the checkpoint
/// at or before it plus the moves in between, built only when the turn is searched.
pub struct Record {
    /// The moves in order, each with its player.
    moves: Vec<(Player, Move)>,
    /// Positions at turns `k * spacing`, for the `k` some analysed turn needs.
    checkpoints: Vec<(usize, Game)>,
    /// Turns between checkpoints.
    spacing: usize,
}

impl Record {
    /// The position before move `turn` (0: the start), with the player of the next listed
    /// move to play.
    pub fn position(&self, turn: usize) -> Result<Game, String> {
        let slot = turn / self.spacing * self.spacing;
        let (at, start) = self
            .checkpoints
            .iter()
            .find(|(t, _)| *t == slot)
            .ok_or_else(|| format!("turn {turn} was not asked for"))?;
        let mut game = start.clone();
        let moves = self.moves.get(*at..turn).ok_or("turn beyond the moves")?;
        for &(pla, mv) in moves {
            // The query was replayed when it was read; this cannot fail, but says so if it does.
            game.play_tolerant(pla, mv)
                .map_err(|e| format!("illegal move replaying turn {turn}: {e}"))?;
        }
        // The next listed move says who is to move, whatever the previous one was.
        if let Some(&(next, _)) = self.moves.get(turn) {
            game.set_player_to_move(next);
        }
        Ok(game)
    }

    /// Checkpoint spacing for a game of `moves` moves: at most [`MAX_CHECKPOINTS`] of them.
    fn spacing_for(moves: usize) -> usize {
        (moves + 1).div_ceil(MAX_CHECKPOINTS).max(1)
    }

    /// Bytes held by one game after `turns` turns: the struct and its history vectors.
    fn game_bytes(turns: usize) -> usize {
        std::mem::size_of::<Game>()
            + turns * (std::mem::size_of::<Turn>() + 3 * std::mem::size_of::<Hash>())
    }
}

/// A special action.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `query_version`.
    QueryVersion,
    /// `clear_cache`.
    ClearCache,
    /// `terminate` (an id) or `terminate_all` (none), optionally for some turns.
    Terminate {
        /// Whose queries; `None` for all.
        id: Option<String>,
        /// Which turns; `None` for all.
        turns: Option<Vec<usize>>,
    },
    /// `query_models`.
    QueryModels,
}

/// What a line asks for.
pub enum Request {
    /// An action, with the query object to echo.
    Action(Action, Map<String, Value>),
    /// Tasks to queue, and warnings to print first.
    Query(Vec<Task>, Vec<Value>),
}

/// Defaults a query starts from.
#[derive(Clone, Debug)]
pub struct Defaults {
    /// Search parameters.
    pub params: SearchParams,
    /// Visits when a query gives none.
    pub max_visits: u64,
    /// New playouts per search whatever a query gives (KataGo's `maxPlayouts`).
    pub max_playouts: Option<u64>,
    /// PV length when a query gives none.
    pub pv_len: usize,
    /// Time limit when a query's `overrideSettings` give no `maxTime` (KataGo's config key).
    pub max_time: Option<Duration>,
}

const KNOWN: &[&str] = &[
    "id",
    "moves",
    "initialStones",
    "initialPlayer",
    "rules",
    "komi",
    "whiteHandicapBonus",
    "boardXSize",
    "boardYSize",
    "analyzeTurns",
    "maxVisits",
    "rootPolicyTemperature",
    "rootFpuReductionMax",
    "analysisPVLen",
    "includeOwnership",
    "includeOwnershipStdev",
    "includeMovesOwnership",
    "includeMovesOwnershipStdev",
    "includePolicy",
    "includePVVisits",
    "avoidMoves",
    "allowMoves",
    "overrideSettings",
    "reportDuringSearchEvery",
    "priority",
    "priorities",
];

/// An error response for a field.
pub fn field_error(id: Option<&str>, field: &str, msg: &str) -> Value {
    let mut v = json!({"error": msg, "field": field});
    if let Some(id) = id {
        v["id"] = json!(id);
    }
    v
}

/// Parses a line; `Err` is the error response to print.
pub fn parse(line: &str, d: &Defaults) -> Result<Request, Value> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| json!({"error": format!("could not parse JSON: {e}")}))?;
    let Value::Object(obj) = v else {
        return Err(json!({"error": "a query must be a JSON object"}));
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(field_error(None, "id", "id must be a string")),
        None => return Err(json!({"error": "query is missing the id field"})),
    };
    let err = |field: &str, msg: &str| field_error(Some(&id), field, msg);
    if let Some(a) = obj.get("action") {
        let action = match a.as_str() {
            Some("query_version") => Action::QueryVersion,
            Some("clear_cache") => Action::ClearCache,
            Some("query_models") => Action::QueryModels,
            Some(kind @ ("terminate" | "terminate_all")) => {
                let target = if kind == "terminate" {
                    match obj.get("terminateId") {
                        Some(Value::String(s)) => Some(s.clone()),
                        _ => return Err(err("terminateId", "terminateId must be a string")),
                    }
                } else {
                    None
                };
                let turns = match obj.get("turnNumbers") {
                    None => None,
                    Some(t) => Some(int_list(t).ok_or_else(|| {
                        err("turnNumbers", "turnNumbers must be a list of turn numbers")
                    })?),
                };
                Action::Terminate { id: target, turns }
            }
            _ => return Err(err("action", "unknown action")),
        };
        return Ok(Request::Action(action, obj));
    }

    let mut warnings = Vec::new();
    for k in obj.keys() {
        if !KNOWN.contains(&k.as_str()) {
            warnings.push(json!({"warning": "unknown field", "field": k, "id": id}));
        }
    }
    let size_of = |f: &str| -> Result<usize, Value> {
        match obj.get(f).and_then(Value::as_u64) {
            Some(n) if (2..=25).contains(&n) => Ok(n as usize),
            Some(_) => Err(err(f, "board size must be from 2 to 25")),
            None => Err(err(f, "required integer field")),
        }
    };
    let size = BoardSize::new(size_of("boardXSize")?, size_of("boardYSize")?)
        .map_err(|e| err("boardXSize", &e.to_string()))?;
    let mut rules = match obj.get("rules") {
        Some(Value::String(s)) => Rules::parse(s).map_err(|e| err("rules", &e.to_string()))?,
        Some(v @ Value::Object(_)) => {
            Rules::from_json(v, false).map_err(|e| err("rules", &e.to_string()))?
        }
        _ => return Err(err("rules", "rules must be a string or a JSON object")),
    };
    if let Some(k) = obj.get("komi") {
        let k = k
            .as_f64()
            .ok_or_else(|| err("komi", "komi must be a number"))?;
        if !tengen_rules::komi_is_valid(k) {
            return Err(err(
                "komi",
                &format!("komi must be {}", tengen_rules::komi_rule()),
            ));
        }
        rules.komi = k as f32;
    }
    if let Some(w) = obj.get("whiteHandicapBonus") {
        rules = w
            .as_str()
            .ok_or(())
            .and_then(|s| rules.update("whiteHandicapBonus", s).map_err(|_| ()))
            .map_err(|_| err("whiteHandicapBonus", "must be \"0\", \"N\" or \"N-1\""))?;
    }
    let player_of = |v: &Value, field: &str| -> Result<Player, Value> {
        v.as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| err(field, "player must be \"B\" or \"W\""))
    };
    let moves_of = |field: &str| -> Result<Vec<(Player, Move)>, Value> {
        let Some(list) = obj.get(field) else {
            return Ok(Vec::new());
        };
        let list = list
            .as_array()
            .ok_or_else(|| err(field, "must be a list of [player, move] pairs"))?;
        list.iter()
            .map(|pair| {
                let p = pair.as_array().filter(|p| p.len() == 2);
                let p = p.ok_or_else(|| err(field, "each entry must be [player, move]"))?;
                let pla = player_of(&p[0], field)?;
                let mv = p[1]
                    .as_str()
                    .and_then(|s| size.parse_move(s).ok())
                    .ok_or_else(|| err(field, &format!("bad location {}", p[1])))?;
                Ok((pla, mv))
            })
            .collect()
    };
    if obj.get("moves").is_none() {
        return Err(err("moves", "required field"));
    }
    let moves = moves_of("moves")?;
    let stones = moves_of("initialStones")?;
    if moves.len() + stones.len() > MAX_QUERY_MOVES {
        return Err(err(
            "moves",
            &format!(
                "query too large: {} moves and initial stones, at most {MAX_QUERY_MOVES}",
                moves.len() + stones.len()
            ),
        ));
    }
    let mut board = Board::new(size);
    let placements: Vec<_> = stones
        .iter()
        .filter_map(|&(p, m)| m.loc().map(|l| (l, Some(p))))
        .collect();
    board
        .set_stones(&placements)
        .map_err(|e| err("initialStones", &e.to_string()))?;
    let first = match obj.get("initialPlayer") {
        Some(v) => player_of(v, "initialPlayer")?,
        None => moves.first().map_or(Player::Black, |m| m.0),
    };
    let mut game = Game::from_position(board, first, rules, GameOptions::default());

    let turns = match obj.get("analyzeTurns") {
        None => vec![moves.len()],
        Some(t) => int_list(t)
            .filter(|l| l.iter().all(|&x| x <= moves.len()))
            .ok_or_else(|| {
                err(
                    "analyzeTurns",
                    "must be a list of turns from 0 to the number of moves",
                )
            })?,
    };
    let priorities: Vec<i64> = match (obj.get("priorities"), obj.get("priority")) {
        (Some(p), _) => {
            let p = p
                .as_array()
                .filter(|a| a.len() == turns.len())
                .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
                .ok_or_else(|| err("priorities", "must be a list of integers, one per turn"))?;
            p
        }
        (None, Some(p)) => vec![
            p.as_i64()
                .ok_or_else(|| err("priority", "must be an integer"))?;
            turns.len()
        ],
        (None, None) => vec![0; turns.len()],
    };

    let flag = |f: &str| -> Result<bool, Value> {
        match obj.get(f) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(err(f, "must be true or false")),
        }
    };
    let mut params = d.params.clone();
    let mut override_visits = None;
    // Parameters KataGo also takes as query fields: numbers, in the table's ranges.
    for key in ["rootPolicyTemperature", "rootFpuReductionMax"] {
        let Some(v) = obj.get(key) else { continue };
        let param = crate::params::find(key).map_err(|e| err(key, &e.to_string()))?;
        let (lo, hi) = param.range().unwrap_or((0.0, 0.0));
        let bad = || err(key, &format!("must be a number from {lo} to {hi}"));
        if !v.is_number() {
            return Err(bad());
        }
        param
            .from_json(v)
            .map_err(|_| bad())?
            .apply(&mut params, &mut override_visits);
    }
    let mut overrides = Overrides {
        max_time: d.max_time,
        ..Overrides::default()
    };
    match obj.get("overrideSettings") {
        None => {}
        Some(Value::Object(o)) => {
            let bad = |e: String| err("overrideSettings", &format!("Could not set settings: {e}"));
            overrides =
                Overrides::read(o, d.max_time, &mut params, &mut override_visits).map_err(bad)?;
            for k in &overrides.human_sl {
                warnings.push(json!({"warning": format!("{k} needs a human SL model, and none is loaded"), "field": "overrideSettings", "id": id}));
            }
            if !overrides.unknown.is_empty() {
                let unknown = overrides.unknown.join(",");
                warnings.push(json!({"warning": format!("Unknown config params: {unknown}"), "field": "overrideSettings", "id": id}));
            }
        }
        Some(_) => return Err(err("overrideSettings", "Must be an object")),
    }
    let max_visits = match obj.get("maxVisits") {
        None => override_visits.map_or(d.max_visits, |v| v.min(1 << 40)),
        Some(v) => v
            .as_u64()
            .filter(|&v| (1..=1 << 40).contains(&v))
            .ok_or_else(|| err("maxVisits", "must be a positive integer"))?,
    };
    // Each search starts from an empty tree, so its playouts are its root's visits.
    let max_visits = d
        .max_playouts
        .map_or(max_visits, |p| max_visits.min(p.max(1)));
    let pv_len = match obj.get("analysisPVLen") {
        None => d.pv_len,
        Some(v) => v
            .as_u64()
            .filter(|&v| v <= 1000)
            .ok_or_else(|| err("analysisPVLen", "must be an integer from 0 to 1000"))?
            as usize,
    };
    let report_every = match obj.get("reportDuringSearchEvery") {
        None => None,
        Some(v) => Some(
            v.as_f64()
                .filter(|s| (0.001..=1e6).contains(s))
                .map(Duration::from_secs_f64)
                .ok_or_else(|| {
                    err(
                        "reportDuringSearchEvery",
                        "must be a positive number of seconds",
                    )
                })?,
        ),
    };
    let mut filters = Vec::new();
    for (field, allow) in [("avoidMoves", false), ("allowMoves", true)] {
        let Some(list) = obj.get(field) else { continue };
        let list = list
            .as_array()
            .ok_or_else(|| err(field, "must be a list of objects"))?;
        for e in list {
            let player = player_of(&e["player"], field)?;
            let moves = e["moves"]
                .as_array()
                .and_then(|m| {
                    m.iter()
                        .map(|s| s.as_str().and_then(|s| size.parse_move(s).ok()))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or_else(|| err(field, "moves must be a list of locations"))?;
            let until_depth = e["untilDepth"]
                .as_u64()
                .filter(|&d| d >= 1)
                .ok_or_else(|| err(field, "untilDepth must be a positive integer"))?
                as u32;
            filters.push(FilterRule {
                player,
                moves,
                until_depth,
                allow,
            });
        }
    }
    let ownership = flag("includeOwnership")?;
    let ownership_stdev = flag("includeOwnershipStdev")?;
    let moves_ownership = flag("includeMovesOwnership")?;
    let moves_ownership_stdev = flag("includeMovesOwnershipStdev")?;
    let policy = flag("includePolicy")?;
    let pv_visits = flag("includePVVisits")?;
    let filters_bytes: usize = filters
        .iter()
        .map(|f| std::mem::size_of::<FilterRule>() + f.moves.len() * std::mem::size_of::<Move>())
        .sum();
    // Where each turn first appears in analyzeTurns (repeats are analysed once).
    let mut order: Vec<Option<usize>> = vec![None; moves.len() + 1];
    for (i, &t) in turns.iter().enumerate() {
        order[t].get_or_insert(i);
    }
    let spacing = Record::spacing_for(moves.len());
    let mut checkpoints = Vec::new();
    for (turn, mv) in std::iter::once(None)
        .chain(moves.iter().map(Some))
        .enumerate()
    {
        if let Some(&(pla, m)) = mv {
            game.play_tolerant(pla, m)
                .map_err(|e| err("moves", &format!("illegal move {}: {e}", size.gtp(m))))?;
        }
        let slot = turn % spacing == 0;
        let needed = || {
            order[turn..(turn + spacing).min(order.len())]
                .iter()
                .any(Option::is_some)
        };
        if slot && needed() {
            checkpoints.push((turn, game.clone()));
        }
    }
    let bytes = std::mem::size_of::<Query>()
        + id.len()
        + moves.len() * std::mem::size_of::<(Player, Move)>()
        + filters_bytes
        + checkpoints
            .iter()
            .map(|(t, _)| Record::game_bytes(*t))
            .sum::<usize>();
    let query = Arc::new(Query {
        id: id.clone(),
        record: Record {
            moves,
            checkpoints,
            spacing,
        },
        params,
        max_visits,
        max_time: overrides.max_time,
        perspective: overrides.perspective,
        pv_len,
        ownership,
        ownership_stdev,
        moves_ownership,
        moves_ownership_stdev,
        policy,
        pv_visits,
        filters,
        report_every,
    });
    let mut picked: Vec<(usize, usize)> = order
        .iter()
        .enumerate()
        .filter_map(|(turn, first)| first.map(|i| (i, turn)))
        .collect();
    picked.sort_unstable();
    // The query's bytes are shared out among its turns, the remainder to the first, so
    // that the queue frees each turn's part when that turn is done.
    let parts = picked.len().max(1);
    let (share, rest) = (bytes / parts, bytes % parts);
    let tasks = picked
        .iter()
        .enumerate()
        .map(|(k, &(i, turn))| Task {
            turn,
            priority: priorities[i],
            query: query.clone(),
            cost: std::mem::size_of::<Task>() + share + if k == 0 { rest } else { 0 },
        })
        .collect();
    Ok(Request::Query(tasks, warnings))
}

fn int_list(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_u64().filter(|&n| n < 1 << 20).map(|n| n as usize))
        .collect()
}

/// What a query's `overrideSettings` set beside the search parameters.
#[derive(Default)]
struct Overrides {
    /// `maxTime`: `None` for no limit.
    max_time: Option<Duration>,
    /// `reportAnalysisWinratesAs`.
    perspective: Option<Perspective>,
    /// Keys that need a human SL model (none can be loaded).
    human_sl: Vec<String>,
    /// Keys no setting has (KataGo warns of them and runs the query).
    unknown: Vec<String>,
}

/// The longest `maxTime` KataGo's config reader takes; anything near it means no limit.
const MAX_TIME_SECONDS: f64 = 1e20;

impl Overrides {
    /// Applies `overrideSettings` as KataGo does: search parameters by the parameter
    /// table (`maxVisits` there counts when the query has none of its own), the query's
    /// time limit (over `max_time`, the default) and perspective here. A value may be
    /// given as JSON or as text, since KataGo reads them as config text. A bad value
    /// fails the whole query.
    fn read(
        o: &Map<String, Value>,
        max_time: Option<Duration>,
        params: &mut SearchParams,
        visits: &mut Option<u64>,
    ) -> Result<Overrides, String> {
        let mut out = Overrides {
            max_time,
            ..Overrides::default()
        };
        for (k, v) in o {
            let text = v.as_str();
            match k.as_str() {
                _ if k.starts_with("humanSL") => out.human_sl.push(k.clone()),
                "maxTime" => {
                    let secs = text.map_or_else(|| v.as_f64(), |t| t.trim().parse().ok());
                    let secs = secs
                        .filter(|s| (0.0..=MAX_TIME_SECONDS).contains(s))
                        .ok_or_else(|| {
                            format!("maxTime must be a number of seconds from 0 to 1e20, not {v}")
                        })?;
                    // Beyond what a Duration holds is as good as no limit.
                    out.max_time = Duration::try_from_secs_f64(secs).ok();
                }
                "reportAnalysisWinratesAs" => {
                    let p = text
                        .ok_or_else(|| format!("{v} is not BLACK, WHITE or SIDETOMOVE"))?
                        .parse::<Perspective>()?;
                    out.perspective = Some(p);
                }
                // GTP's own settings: KataGo's analysis engine does not know them either.
                "analysisWideRootNoise" | "genmoveAntiMirror" => out.unknown.push(k.clone()),
                _ => {
                    let Ok(param) = crate::params::find(k) else {
                        out.unknown.push(k.clone());
                        continue;
                    };
                    let setting = match text {
                        Some(t) => param.parse(t),
                        None => param.from_json(v),
                    };
                    setting.map_err(|e| e.to_string())?.apply(params, visits);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Defaults {
        Defaults {
            params: SearchParams::default(),
            max_visits: 10,
            max_playouts: None,
            pv_len: 5,
            max_time: None,
        }
    }

    fn tasks(line: &str) -> Vec<Task> {
        match parse(line, &defaults()) {
            Ok(Request::Query(t, _)) => t,
            Ok(Request::Action(..)) => panic!("an action"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn settings_are_read_by_the_parameter_table() {
        let base = r#"{"id":"s","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9"#;
        let query = |extra: &str| match parse(&format!("{base}{extra}}}"), &defaults()) {
            Ok(Request::Query(t, w)) => Ok((t[0].query.clone(), w)),
            Ok(Request::Action(..)) => panic!("an action"),
            Err(e) => Err(e.to_string()),
        };
        let (q, w) = query(
            r#","overrideSettings":{"cpuctExploration":0.9,"useLcbForSelection":false,"maxVisits":7,"nope":1,"zap":"x","analysisWideRootNoise":0.1,"genmoveAntiMirror":false}"#,
        )
        .unwrap();
        assert_eq!(q.params.cpuct_exploration, 0.9);
        assert!(!q.params.use_lcb_for_selection);
        assert_eq!(q.max_visits, 7, "maxVisits in overrideSettings");
        // KataGo's one warning naming every unknown key.
        let warned: Vec<String> = w.iter().map(|w| w["warning"].to_string()).collect();
        assert_eq!(
            warned,
            ["\"Unknown config params: analysisWideRootNoise,genmoveAntiMirror,nope,zap\""]
        );
        assert_eq!(q.params.analysis_wide_root_noise, 0.0);
        // A bad value fails the query, naming the setting.
        let e = query(r#","overrideSettings":{"lcbStdevs":99}"#)
            .err()
            .unwrap();
        assert!(
            e.contains("Could not set settings: lcbStdevs must be a number from 1 to 12"),
            "{e}"
        );
        let e = query(r#","overrideSettings":[1]"#).err().unwrap();
        assert!(e.contains("Must be an object"), "{e}");
        // The query's own maxVisits wins.
        let (q, _) = query(r#","maxVisits":3,"overrideSettings":{"maxVisits":7}"#).unwrap();
        assert_eq!(q.max_visits, 3);
        // The config's maxPlayouts bounds every query's visits.
        let capped = Defaults {
            max_playouts: Some(5),
            ..defaults()
        };
        let visits = |extra: &str| match parse(&format!("{base}{extra}}}"), &capped) {
            Ok(Request::Query(t, _)) => t[0].query.max_visits,
            _ => panic!("not a query"),
        };
        assert_eq!((visits(""), visits(r#","maxVisits":3"#)), (5, 3));
        assert_eq!(visits(r#","maxVisits":70"#), 5);
        let (q, _) = query(r#","rootPolicyTemperature":2.5"#).unwrap();
        assert_eq!(q.params.root_policy_temperature, 2.5);
        let e = query(r#","rootPolicyTemperature":true"#).err().unwrap();
        assert!(e.contains("must be a number from 0.01 to 100"), "{e}");
        let e = query(r#","rootFpuReductionMax":3"#).err().unwrap();
        assert!(e.contains("must be a number from 0 to 2"), "{e}");
    }

    #[test]
    fn katrains_settings_are_all_understood() {
        // What KaTrain's engine.py and ai.py put in overrideSettings, its handicap and
        // anti-mirror AIs included; and the query fields it sends.
        let q = r#"{"id":"QUERY:1","rules":"japanese","priority":0,"analyzeTurns":[1],"maxVisits":5,"komi":6.5,"boardXSize":9,"boardYSize":9,"includeOwnership":true,"includeMovesOwnership":true,"includePolicy":true,"initialStones":[["B","C3"],["B","G7"]],"initialPlayer":"W","moves":[["W","E5"]],"reportDuringSearchEvery":0.5,"avoidMoves":[{"moves":["A1"],"player":"B","untilDepth":1}],"overrideSettings":{"reportAnalysisWinratesAs":"BLACK","wideRootNoise":0.04,"maxTime":8.0,"playoutDoublingAdvantage":-1.5,"playoutDoublingAdvantagePla":"BLACK","antiMirror":true}}"#;
        let Ok(Request::Query(t, w)) = parse(q, &defaults()) else {
            panic!("not a query");
        };
        assert!(w.is_empty(), "{w:?}");
        let q = &t[0].query;
        assert_eq!(q.max_time, Some(Duration::from_secs(8)));
        assert_eq!(q.perspective, Some(Perspective::Black));
        assert_eq!(q.params.wide_root_noise, 0.04);
        assert_eq!(q.params.playout_doubling_advantage, -1.5);
        assert_eq!(q.params.playout_doubling_advantage_pla, Some(Player::Black));
        assert!(q.params.anti_mirror);
    }

    #[test]
    fn override_values_may_be_text_as_katago_reads_them() {
        let q = r#"{"id":"t","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"overrideSettings":{"maxTime":"2.5","antiMirror":"true","playoutDoublingAdvantage":"1","reportAnalysisWinratesAs":"sidetomove","maxVisits":"1e30"}}"#;
        match parse(q, &defaults()) {
            Err(e) => assert!(e["error"].as_str().unwrap().contains("maxVisits"), "{e}"),
            Ok(_) => panic!("maxVisits 1e30 accepted"),
        }
        let q = q.replace(r#","maxVisits":"1e30""#, "");
        let Ok(Request::Query(t, w)) = parse(&q, &defaults()) else {
            panic!("not a query");
        };
        assert!(w.is_empty(), "{w:?}");
        let q = &t[0].query;
        assert_eq!(q.max_time, Some(Duration::from_millis(2500)));
        assert!(q.params.anti_mirror);
        assert_eq!(q.params.playout_doubling_advantage, 1.0);
        assert_eq!(q.perspective, Some(Perspective::SideToMove));
        for bad in [
            r#"{"maxTime":-1}"#,
            r#"{"maxTime":"soon"}"#,
            r#"{"reportAnalysisWinratesAs":"RED"}"#,
            r#"{"reportAnalysisWinratesAs":1}"#,
            r#"{"playoutDoublingAdvantagePla":"EMPTY"}"#,
            r#"{"playoutDoublingAdvantage":4}"#,
            r#"{"antiMirror":"maybe"}"#,
        ] {
            let q = format!(
                r#"{{"id":"b","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"overrideSettings":{bad}}}"#
            );
            let Err(e) = parse(&q, &defaults()) else {
                panic!("{bad} accepted");
            };
            assert_eq!(e["field"], "overrideSettings", "{bad}");
            assert_eq!(e["id"], "b");
        }
        // A huge maxTime is no limit.
        let q = r#"{"id":"h","moves":[],"rules":"chinese","boardXSize":9,"boardYSize":9,"overrideSettings":{"maxTime":1e20}}"#;
        let Ok(Request::Query(t, _)) = parse(q, &defaults()) else {
            panic!("not a query");
        };
        assert_eq!(t[0].query.max_time, None);
    }

    /// A 9x9 game with a capture and passes, as query JSON moves.
    const MOVES: &str = r#"[["B","D3"],["W","D4"],["B","C4"],["W","pass"],["B","E4"],["W","F5"],["B","D5"],["W","E5"],["B","D4"],["W","pass"],["B","F4"],["W","G5"],["B","pass"],["W","pass"]]"#;

    #[test]
    fn every_turn_is_built_as_a_direct_replay_would() {
        let q = format!(
            r#"{{"id":"r","moves":{MOVES},"rules":"japanese","boardXSize":9,"boardYSize":9,"analyzeTurns":[14,0,7,7,13,1]}}"#
        );
        let ts = tasks(&q);
        let turns: Vec<usize> = ts.iter().map(|t| t.turn).collect();
        assert_eq!(
            turns,
            vec![14, 0, 7, 13, 1],
            "analyzeTurns order, repeats once"
        );
        let moves: Vec<Value> = serde_json::from_str(MOVES).unwrap();
        let size = BoardSize::square(9).unwrap();
        for t in &ts {
            let mut g = Game::new(size, Rules::parse("japanese").unwrap());
            for m in &moves[..t.turn] {
                let p: Player = m[0].as_str().unwrap().parse().unwrap();
                g.play_tolerant(p, size.parse_move(m[1].as_str().unwrap()).unwrap())
                    .unwrap();
            }
            if let Some(m) = moves.get(t.turn) {
                g.set_player_to_move(m[0].as_str().unwrap().parse().unwrap());
            }
            let built = t.game().unwrap();
            assert_eq!(
                built.situation_hash(),
                g.situation_hash(),
                "turn {}",
                t.turn
            );
            assert_eq!(built.turns().len(), t.turn);
            assert_eq!(built.to_move(), g.to_move());
        }
    }

    #[test]
    fn a_long_query_keeps_a_bounded_number_of_positions() {
        let n = MAX_QUERY_MOVES - 1;
        let moves: Vec<Value> = (0..n)
            .map(|i| json!([if i % 2 == 0 { "B" } else { "W" }, "pass"]))
            .collect();
        let all: Vec<usize> = (0..=n).collect();
        let q = json!({"id":"long","moves":moves,"rules":"chinese","boardXSize":19,
                       "boardYSize":19,"analyzeTurns":all});
        let ts = tasks(&q.to_string());
        assert_eq!(ts.len(), n + 1);
        let record = &ts[0].query.record;
        assert!(record.checkpoints.len() <= MAX_CHECKPOINTS);
        assert!(ts.iter().all(|t| Arc::ptr_eq(&t.query, &ts[0].query)));
        // What the queue is charged covers the positions kept, and stays in the tens of MB.
        let cost: usize = ts.iter().map(|t| t.cost).sum();
        assert!(cost >= record.checkpoints.len() * std::mem::size_of::<Game>());
        assert!(cost < 64 << 20, "{cost}");
        assert_eq!(ts[n].game().unwrap().turns().len(), n);
    }

    #[test]
    fn a_query_over_the_move_limit_is_too_large() {
        let moves: Vec<Value> = (0..=MAX_QUERY_MOVES)
            .map(|i| json!([if i % 2 == 0 { "B" } else { "W" }, "pass"]))
            .collect();
        let q = json!({"id":"big","moves":moves,"rules":"chinese","boardXSize":19,"boardYSize":19});
        let Err(e) = parse(&q.to_string(), &defaults()) else {
            panic!("accepted");
        };
        assert_eq!(e["id"], "big");
        assert_eq!(e["field"], "moves");
        assert!(
            e["error"].as_str().unwrap().starts_with("query too large"),
            "{e}"
        );
    }
}
