//! Reading one JSON line of KataGo's analysis protocol: an action, or a query that
//! becomes one task per analysed turn. Unknown fields are warnings; bad ones are errors
//! naming the field.

use std::time::Duration;

use serde_json::{json, Map, Value};
use tengen_rules::{Board, BoardSize, Game, GameOptions, Move, Player, Rules};
use tengen_search::{FilterRule, SearchParams};

/// One position to analyse.
#[derive(Clone)]
pub struct Task {
    /// The query's id.
    pub id: String,
    /// Turn number analysed.
    pub turn: usize,
    /// Higher runs first.
    pub priority: i64,
    /// The position.
    pub game: Game,
    /// Search parameters for it.
    pub params: SearchParams,
    /// Visit limit.
    pub max_visits: u64,
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
    /// PV length when a query gives none.
    pub pv_len: usize,
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
                "komi must be a multiple of 0.5 from -150 to 150",
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
    if let Some(t) = obj.get("rootPolicyTemperature") {
        params.root_policy_temperature = t
            .as_f64()
            .filter(|t| (0.01..=100.0).contains(t))
            .ok_or_else(|| err("rootPolicyTemperature", "must be a number from 0.01 to 100"))?;
    }
    if let Some(t) = obj.get("rootFpuReductionMax") {
        params.root_fpu_reduction_max = t
            .as_f64()
            .filter(|t| (0.0..=2.0).contains(t))
            .ok_or_else(|| err("rootFpuReductionMax", "must be a number from 0 to 2"))?;
    }
    if let Some(Value::Object(o)) = obj.get("overrideSettings") {
        for (k, v) in o {
            if k.starts_with("humanSL") {
                warnings.push(json!({"warning": format!("{k} needs a human SL model, and none is loaded"), "field": "overrideSettings", "id": id}));
                continue;
            }
            if !override_param(&mut params, k, v) {
                warnings.push(json!({"warning": format!("unknown or invalid setting {k}"), "field": "overrideSettings", "id": id}));
            }
        }
    }
    let max_visits = match obj.get("maxVisits") {
        None => d.max_visits,
        Some(v) => v
            .as_u64()
            .filter(|&v| (1..=1 << 40).contains(&v))
            .ok_or_else(|| err("maxVisits", "must be a positive integer"))?,
    };
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
    let base = Task {
        id: id.clone(),
        turn: 0,
        priority: 0,
        game: game.clone(),
        params,
        max_visits,
        pv_len,
        ownership: flag("includeOwnership")?,
        ownership_stdev: flag("includeOwnershipStdev")?,
        moves_ownership: flag("includeMovesOwnership")?,
        moves_ownership_stdev: flag("includeMovesOwnershipStdev")?,
        policy: flag("includePolicy")?,
        pv_visits: flag("includePVVisits")?,
        filters,
        report_every,
    };
    let mut tasks = Vec::new();
    for (turn, mv) in std::iter::once(None)
        .chain(moves.iter().map(Some))
        .enumerate()
    {
        if let Some(&(pla, m)) = mv {
            game.play_tolerant(pla, m)
                .map_err(|e| err("moves", &format!("illegal move {}: {e}", size.gtp(m))))?;
            // The next listed move says who is to move, whatever the previous one was.
        }
        if let Some(i) = turns.iter().position(|&t| t == turn) {
            let mut t = base.clone();
            t.turn = turn;
            t.priority = priorities[i];
            t.game = game.clone();
            if let Some(&(next, _)) = moves.get(turn) {
                t.game.set_player_to_move(next);
            }
            tasks.push(t);
        }
    }
    tasks.sort_by_key(|t| turns.iter().position(|&x| x == t.turn));
    Ok(Request::Query(tasks, warnings))
}

fn int_list(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_u64().filter(|&n| n < 1 << 20).map(|n| n as usize))
        .collect()
}

/// Applies one `overrideSettings` entry; false if unknown or out of range.
fn override_param(p: &mut SearchParams, key: &str, v: &Value) -> bool {
    let Some(x) = v.as_f64().or_else(|| v.as_bool().map(f64::from)) else {
        return false;
    };
    let within = |lo: f64, hi: f64| (lo..=hi).contains(&x);
    match key {
        "cpuctExploration" if within(0.0, 10.0) => p.cpuct_exploration = x,
        "cpuctExplorationLog" if within(0.0, 10.0) => p.cpuct_exploration_log = x,
        "winLossUtilityFactor" if within(0.0, 1.0) => p.win_loss_utility_factor = x,
        "staticScoreUtilityFactor" if within(0.0, 1.0) => p.static_score_utility_factor = x,
        "dynamicScoreUtilityFactor" if within(0.0, 1.0) => p.dynamic_score_utility_factor = x,
        "fpuReductionMax" if within(0.0, 2.0) => p.fpu_reduction_max = x,
        "wideRootNoise" if within(0.0, 5.0) => p.wide_root_noise = x,
        "rootNumSymmetriesToSample" if within(1.0, 8.0) => p.root_symmetries = x as usize,
        "lcbStdevs" if within(1.0, 12.0) => p.lcb_stdevs = x,
        "minVisitPropForLCB" if within(0.0, 1.0) => p.min_visit_prop_for_lcb = x,
        "numSearchThreads" if within(1.0, 256.0) => p.threads = x as usize,
        _ => return false,
    }
    true
}
