//! Building a response object from a search snapshot, in the perspective the engine
//! reports (KataGo's `reportAnalysisWinratesAs`).

use serde_json::{json, Value};
use tengen_search::Analysis;

use super::query::Task;
pub use crate::perspective::Perspective;

/// The response for `task` from snapshot `a`.
pub fn response(
    task: &Task,
    a: &Analysis,
    during: bool,
    policy: Option<Vec<f32>>,
    perspective: Perspective,
) -> Value {
    let size = a.size;
    let flip = perspective.flips(a.root.current_player);
    // Snapshots are in White's view; `lcb` is the mover's bound written in White's terms,
    // so flipping turns every field into the reported player's view.
    let wr = |w: f64| if flip { 1.0 - w } else { w };
    let pts = |s: f64| if flip { -s } else { s };
    let own = |o: &[f32]| -> Vec<f64> { o.iter().map(|&x| pts(f64::from(x))).collect() };
    let infos: Vec<Value> = a
        .moves
        .iter()
        .map(|m| {
            let pv_len = task.query.pv_len + 1;
            let mut v = json!({
                "move": size.gtp(m.mv),
                "visits": m.visits,
                "edgeVisits": m.edge_visits,
                "winrate": wr(m.winrate),
                "scoreMean": pts(m.score_lead),
                "scoreStdev": m.score_stdev,
                "scoreLead": pts(m.score_lead),
                "scoreSelfplay": pts(m.score_selfplay),
                "prior": m.prior,
                "utility": pts(m.utility),
                "lcb": wr(m.lcb),
                "utilityLcb": pts(m.utility_lcb),
                "weight": m.visits as f64,
                "edgeWeight": m.edge_visits as f64,
                "order": m.order,
                "pv": m.pv.iter().take(pv_len).map(|&mv| size.gtp(mv)).collect::<Vec<_>>(),
            });
            if task.query.pv_visits {
                let first = |v: &[u64]| v.iter().take(pv_len).copied().collect::<Vec<u64>>();
                v["pvVisits"] = json!(first(&m.pv_visits));
                v["pvEdgeVisits"] = json!(first(&m.pv_edge_visits));
            }
            if task.query.moves_ownership {
                if let Some(o) = &m.ownership {
                    v["ownership"] = json!(own(o));
                }
            }
            if task.query.moves_ownership_stdev {
                if let Some(o) = &m.ownership_stdev {
                    v["ownershipStdev"] = json!(o);
                }
            }
            v
        })
        .collect();
    let r = &a.root;
    let root_lcb = a.moves.first().map_or(wr(r.winrate), |m| wr(m.lcb));
    let mut v = json!({
        "id": task.query.id,
        "turnNumber": task.turn,
        "isDuringSearch": during,
        "moveInfos": infos,
        "rootInfo": {
            "currentPlayer": r.current_player.letter().to_string(),
            "visits": r.visits,
            "weight": r.visits as f64,
            "winrate": wr(r.winrate),
            "scoreLead": pts(r.score_lead),
            "scoreSelfplay": pts(r.score_selfplay),
            "scoreStdev": r.score_stdev,
            "utility": pts(r.utility),
            "lcb": root_lcb,
            "thisHash": format!("{:032X}", r.this_hash),
            "symHash": format!("{:032X}", r.sym_hash),
            "rawWinrate": wr(r.raw_winrate),
            "rawLead": pts(r.raw_lead),
            "rawScoreSelfplay": pts(r.raw_score_selfplay),
            "rawScoreSelfplayStdev": r.raw_score_selfplay_stdev,
            "rawNoResultProb": r.raw_no_result_prob,
            "rawStWrError": r.raw_st_wr_error,
            "rawStScoreError": r.raw_st_score_error,
            "rawVarTimeLeft": r.raw_var_time_left,
        },
    });
    if task.query.ownership {
        if let Some(o) = &a.ownership {
            v["ownership"] = json!(own(o));
        }
    }
    if task.query.ownership_stdev {
        if let Some(o) = &a.ownership_stdev {
            v["ownershipStdev"] = json!(o);
        }
    }
    if let Some(p) = policy {
        v["policy"] = json!(p);
    }
    v
}
