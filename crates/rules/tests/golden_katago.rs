//! Replays KataGo's reference games and area diagrams and compares everything KataGo
//! recorded: legal moves before every move, phases, ko and superko bans, game end,
//! captures, bonuses, the scoring area and the final score. Also checks the rules
//! side (legal moves, ko, komi, bonuses, captures) of KataGo's feature positions.

mod common;

use common::*;
use serde_json::Value;
use tengen_rules::{AreaOptions, Board, Game, GameOptions, Outcome, Player, Rules};

fn rules_of(v: &Value) -> Rules {
    Rules::from_json(&v["rules"], true).expect("golden rules parse")
}

fn winner_str(o: &Outcome) -> &'static str {
    match o.winner() {
        Some(Player::Black) => "B",
        Some(Player::White) => "W",
        None => "none",
    }
}

fn check_random_game(r: &Value, c: &mut Check) {
    let size = size_of(r);
    let rules = rules_of(r);
    if let Some(name) = r["rulesName"].as_str() {
        let by_name = Rules::parse_with_komi(name, rules.komi);
        c.eq("rules by name", by_name.ok(), Some(rules));
    }
    let mut board = Board::new(size);
    let stones: Vec<_> = strings(&r["handicapStones"])
        .iter()
        .map(|s| (size.parse_loc(s).expect("vertex"), Some(Player::Black)))
        .collect();
    board.set_stones(&stones).expect("handicap stones");
    let options = GameOptions {
        cleanup_phases: r["encore"].as_bool().unwrap_or(false),
        ..GameOptions::default()
    };
    let mut g = Game::from_position(board, player(str_of(r, "initialPlayer")), rules, options);
    c.eq(
        "initial handicap bonus",
        g.white_handicap_bonus() as f64,
        r["initialWhiteHandicapBonusScore"]
            .as_f64()
            .expect("number"),
    );

    let moves = r["moves"].as_array().expect("moves");
    for (i, m) in moves.iter().enumerate() {
        let legal: Vec<String> = g.legal_moves().into_iter().map(|m| size.gtp(m)).collect();
        c.eq(
            format!("move {i} legal moves"),
            legal,
            strings(&r["legalBefore"][i]),
        );
        c.eq(
            format!("move {i} phase"),
            g.phase().index() as u64,
            r["encorePhaseBefore"][i].as_u64().expect("phase"),
        );
        c.eq(
            format!("move {i} pass would end phase"),
            g.pass_would_end_phase(),
            r["passWouldEndPhaseBefore"][i].as_bool().expect("bool"),
        );
        c.eq(
            format!("move {i} ko"),
            g.ko_point().map(|l| size.gtp(tengen_rules::Move::Play(l))),
            opt_vertex(&r["koLocBefore"][i]),
        );
        if !g.phase().is_cleanup() {
            let banned: Vec<String> = size
                .points()
                .filter(|&l| g.superko_banned(l) && g.ko_point() != Some(l))
                .map(|l| size.gtp(tengen_rules::Move::Play(l)))
                .collect();
            c.eq(
                format!("move {i} superko bans"),
                banned,
                strings(&r["superKoBannedBefore"][i]),
            );
        }
        let pla = player(m[0].as_str().expect("colour"));
        let mv = mv(size, m[1].as_str().expect("vertex"));
        c.eq(format!("move {i} player"), g.to_move(), pla);
        if let Err(e) = g.play(mv) {
            c.fail(format!("move {i} {} refused: {e}", size.gtp(mv)));
            return;
        }
        if !c.ok() {
            return;
        }
    }

    let reason = str_of(r, "endReason");
    c.eq(
        "finished by rules",
        g.is_over(),
        r["gameFinishedByRules"].as_bool().expect("bool"),
    );
    c.eq(
        "past main phase end",
        g.past_normal_phase_end(),
        reason.ends_with("NoEncore"),
    );
    c.eq(
        "final phase",
        g.phase().index() as u64,
        r["finalEncorePhase"].as_u64().expect("phase"),
    );
    c.eq("next player", g.to_move(), player(str_of(r, "nextPlayer")));
    c.eq("final board", g.board().rows(), rows(&r["finalBoard"]));
    c.eq(
        "black captures",
        g.board().captures(Player::Black) as u64,
        r["numBlackCaptures"].as_u64().expect("n"),
    );
    c.eq(
        "white captures",
        g.board().captures(Player::White) as u64,
        r["numWhiteCaptures"].as_u64().expect("n"),
    );
    c.eq(
        "white bonus before scoring",
        g.white_bonus() as f64,
        r["whiteBonusScoreBeforeScoring"].as_f64().expect("n"),
    );
    c.eq(
        "handicap bonus",
        g.white_handicap_bonus() as f64,
        r["whiteHandicapBonusScore"].as_f64().expect("n"),
    );
    c.eq(
        "independent life regions",
        g.independent_life_region_balance() as i64,
        r["whiteMinusBlackIndependentLifeRegionCount"]
            .as_i64()
            .expect("n"),
    );
    let pass_alive = g
        .board()
        .area(AreaOptions::pass_alive(g.rules().multi_stone_suicide));
    c.eq(
        "pass-alive area",
        pass_alive.rows(),
        rows(&r["passAliveArea"]),
    );
    c.eq("scoring area", g.area_now().rows(), rows(&r["scoringArea"]));

    let res = &r["result"];
    let forced = res["forcedScoring"].as_bool().expect("bool");
    if forced {
        g.end_and_score_now();
    }
    let outcome = g.outcome();
    c.eq(
        "no result",
        outcome == Some(Outcome::NoResult),
        res["isNoResult"].as_bool().expect("bool"),
    );
    match outcome {
        Some(o @ Outcome::Scored { white_minus_black }) => {
            c.eq("scored", true, res["isScored"].as_bool().expect("bool"));
            c.eq(
                "score",
                white_minus_black as f64,
                res["finalWhiteMinusBlackScore"].as_f64().expect("n"),
            );
            c.eq("winner", winner_str(&o), str_of(res, "winner"));
            c.eq(
                "white bonus after scoring",
                g.white_bonus() as f64,
                res["whiteBonusScoreAfterScoring"].as_f64().expect("n"),
            );
        }
        Some(Outcome::NoResult) => {
            c.eq("winner", "none", str_of(res, "winner"));
            if let Some(anyway) = r.get("scoreIfScoredNowAnyway") {
                let mut copy = g.clone();
                copy.end_and_score_now();
                if let Some(Outcome::Scored { white_minus_black }) = copy.outcome() {
                    let theirs = anyway["finalWhiteMinusBlackScore"]
                        .as_f64()
                        .or_else(|| anyway.as_f64());
                    c.eq(
                        "score if scored anyway",
                        Some(white_minus_black as f64),
                        theirs,
                    );
                }
            }
        }
        other => c.fail(format!("game not ended: {other:?}")),
    }
}

fn check_area_diagram(r: &Value, c: &mut Check) {
    let size = size_of(r);
    let board = match Board::from_rows(size, &rows(&r["board"])) {
        Ok(b) => b,
        Err(e) => return c.fail(format!("diagram refused: {e}")),
    };
    for (k, m) in r["areaModes"].as_array().expect("modes").iter().enumerate() {
        let sui = m["multiStoneSuicideLegal"].as_bool().expect("bool");
        let flag = |key: &str| m[key].as_bool().expect("bool");
        match str_of(m, "function") {
            "calculateArea" => {
                let opts = AreaOptions {
                    non_pass_alive_stones: flag("nonPassAliveStones"),
                    safe_big_territories: flag("safeBigTerritories"),
                    unsafe_big_territories: flag("unsafeBigTerritories"),
                    multi_stone_suicide: sui,
                };
                c.eq(
                    format!("mode {k} {opts:?}"),
                    board.area(opts).rows(),
                    rows(&m["area"]),
                );
            }
            "calculateIndependentLifeArea" => {
                let (area, n) =
                    board.independent_life_area(flag("keepTerritories"), flag("keepStones"), sui);
                c.eq(
                    format!("mode {k} independent life area"),
                    area.rows(),
                    rows(&m["area"]),
                );
                c.eq(
                    format!("mode {k} region count"),
                    n as i64,
                    m["whiteMinusBlackIndependentLifeRegionCount"]
                        .as_i64()
                        .expect("n"),
                );
            }
            other => c.fail(format!("unknown area function {other}")),
        }
    }
    for s in r["scores"].as_array().expect("scores") {
        let rules = Rules::from_json(&s["rules"], true).expect("rules");
        if let Some(name) = s["rulesName"].as_str() {
            c.eq(
                format!("rules {name}"),
                Rules::parse_with_komi(name, rules.komi).ok(),
                Some(rules),
            );
        }
        let to_move = player(str_of(s, "nextPlayer"));
        let mut g = Game::from_position(board.clone(), to_move, rules, GameOptions::default());
        let area = g.end_and_score_now();
        let what = format!(
            "{} {}",
            s["rulesName"].as_str().unwrap_or("?"),
            to_move.letter()
        );
        match g.outcome() {
            Some(o @ Outcome::Scored { white_minus_black }) => {
                c.eq(
                    format!("{what} score"),
                    white_minus_black as f64,
                    s["finalWhiteMinusBlackScore"].as_f64().expect("n"),
                );
                c.eq(
                    format!("{what} winner"),
                    winner_str(&o),
                    str_of(s, "winner"),
                );
            }
            other => c.fail(format!("{what}: not scored: {other:?}")),
        }
        c.eq(
            format!("{what} scoring area"),
            area.rows(),
            rows(&s["scoringArea"]),
        );
    }
}

#[test]
fn katago_rules_golden() {
    let Some(records) = golden_records("katago-rules.jsonl") else {
        return;
    };
    let results: Vec<(String, Check)> = records
        .iter()
        .map(|r| {
            let mut c = Check::default();
            match str_of(r, "type") {
                "randomGame" => check_random_game(r, &mut c),
                "areaDiagram" => check_area_diagram(r, &mut c),
                other => c.fail(format!("unknown record type {other}")),
            }
            (str_of(r, "id").to_string(), c)
        })
        .collect();
    let (agreed, total) = report("katago-rules.jsonl", &results);
    assert_eq!(agreed, total, "every KataGo rules record must agree");
}

/// The rules engine's side of KataGo's feature positions: legal moves, ko, komi and bonuses, captures.
#[test]
fn katago_feature_positions_rules_fields() {
    let Some(records) = golden_records("katago-features-v7.jsonl") else {
        return;
    };
    let results: Vec<(String, Check)> = records
        .iter()
        .map(|r| {
            let mut c = Check::default();
            let size = size_of(r);
            let komi = r["komi"].as_f64().expect("komi") as f32;
            let rules = Rules::parse_with_komi(str_of(r, "rules"), komi).expect("rules name");
            let handicap: Vec<_> = strings(&r["handicapStones"])
                .iter()
                .map(|s| size.parse_loc(s).expect("vertex"))
                .collect();
            let mut g = if handicap.is_empty() {
                Game::new(size, rules)
            } else {
                Game::with_handicap(size, rules, &handicap).expect("handicap")
            };
            for m in r["moves"].as_array().expect("moves") {
                let pla = player(m[0].as_str().expect("colour"));
                let mv = mv(size, m[1].as_str().expect("vertex"));
                if let Err(e) = g.play_tolerant(pla, mv) {
                    c.fail(format!("move refused: {e}"));
                }
            }
            let next = player(str_of(r, "nextPlayer"));
            c.eq("next player", g.to_move(), next);
            c.eq("board", g.board().rows(), rows(&r["board"]));
            c.eq(
                "ko",
                g.ko_point().map(|l| size.gtp(tengen_rules::Move::Play(l))),
                opt_vertex(&r["koLoc"]),
            );
            let legal: Vec<String> = g.legal_moves().into_iter().map(|m| size.gtp(m)).collect();
            c.eq("legal moves", legal, strings(&r["legalMoves"]));
            c.eq(
                "self komi",
                g.self_komi(next, 0.5) as f64,
                r["selfKomi"].as_f64().expect("n"),
            );
            c.eq(
                "white bonus",
                g.white_bonus() as f64,
                r["whiteBonusScore"].as_f64().expect("n"),
            );
            c.eq(
                "handicap bonus",
                g.white_handicap_bonus() as f64,
                r["whiteHandicapBonusScore"].as_f64().expect("n"),
            );
            c.eq(
                "black captures",
                g.board().captures(Player::Black) as u64,
                r["numBlackCaptures"].as_u64().expect("n"),
            );
            c.eq(
                "white captures",
                g.board().captures(Player::White) as u64,
                r["numWhiteCaptures"].as_u64().expect("n"),
            );
            (str_of(r, "id").to_string(), c)
        })
        .collect();
    let (agreed, total) = report("katago-features-v7.jsonl (rules fields)", &results);
    assert_eq!(
        agreed, total,
        "every feature position's rules fields must agree"
    );
}
