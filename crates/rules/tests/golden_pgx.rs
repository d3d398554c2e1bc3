//! Replays Pgx 2.6's reference games and compares every recorded step: the legal
//! action mask, the player to move, termination, rewards and the board, then the
//! final area counts.

mod common;

use common::*;
use serde_json::Value;
use tengen_rules::{BoardSize, Move, PgxGame, Player};

fn check_game(r: &Value, c: &mut Check) {
    let n = r["size"].as_u64().expect("size") as usize;
    let size = BoardSize::square(n).expect("size");
    let komi = r["komi"].as_f64().expect("komi") as f32;
    let order: Vec<u64> = r["player_order"]
        .as_array()
        .expect("player_order")
        .iter()
        .map(|v| v.as_u64().expect("id"))
        .collect();
    let colour_of = |id: u64| {
        if order[0] == id {
            Player::Black
        } else {
            Player::White
        }
    };
    let mut g = PgxGame::new(size, komi);
    let actions = r["actions"].as_array().expect("actions");
    let steps = r["steps"].as_array().expect("steps");
    c.eq("step records", steps.len(), actions.len() + 1);
    for (k, s) in steps.iter().enumerate() {
        let mask: String = g
            .legal_mask()
            .iter()
            .map(|&b| if b { '1' } else { '0' })
            .collect();
        c.eq(
            format!("step {k} mask"),
            mask.as_str(),
            str_of(s, "legal_action_mask"),
        );
        c.eq(
            format!("step {k} current player"),
            order[g.to_move().index()],
            s["current_player"].as_u64().expect("id"),
        );
        c.eq(
            format!("step {k} terminated"),
            g.termination().is_some(),
            s["terminated"].as_bool().expect("bool"),
        );
        let rewards: Vec<f64> = (0..2).map(|id| g.reward(colour_of(id)) as f64).collect();
        let theirs: Vec<f64> = s["rewards"]
            .as_array()
            .expect("rewards")
            .iter()
            .map(|v| v.as_f64().expect("reward"))
            .collect();
        c.eq(format!("step {k} rewards"), rewards, theirs);
        c.eq(
            format!("step {k} board"),
            g.board().rows().concat(),
            str_of(s, "board").to_string(),
        );
        if !c.ok() {
            return;
        }
        if let Some(a) = actions.get(k) {
            let a = a.as_u64().expect("action") as usize;
            let mv = if a == size.area() {
                Move::Pass
            } else {
                Move::Play(size.loc_at_index(a).expect("action on board"))
            };
            if let Err(e) = g.step(mv) {
                return c.fail(format!("action {k} ({a}) refused: {e}"));
            }
        }
    }
    let area: Vec<u64> = g.area_scores().iter().map(|&x| x as u64).collect();
    let theirs: Vec<u64> = r["final_area_scores"]
        .as_array()
        .expect("scores")
        .iter()
        .map(|v| v.as_u64().expect("n"))
        .collect();
    c.eq("final area", area, theirs);
    let termination = match g.termination() {
        Some(tengen_rules::PgxTermination::TwoPasses) => "two_passes",
        Some(tengen_rules::PgxTermination::MaxSteps) => "max_steps",
        Some(tengen_rules::PgxTermination::PositionalSuperko) => "positional_superko",
        None => "none",
    };
    c.eq("termination", termination, str_of(r, "termination"));
}

#[test]
fn pgx_golden() {
    let Some(records) = golden_records("pgx-go.jsonl") else {
        return;
    };
    let results: Vec<(String, Check)> = records
        .iter()
        .map(|r| {
            let mut c = Check::default();
            check_game(r, &mut c);
            (str_of(r, "id").to_string(), c)
        })
        .collect();
    let (agreed, total) = report("pgx-go.jsonl", &results);
    assert_eq!(agreed, total, "every Pgx game must agree");
}
