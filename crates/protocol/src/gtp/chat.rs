//! The one-line search summary KataGo writes to standard error after each move it chooses
//! when `ogsChatToStderr` is on: bot bridges such as gtp2ogs read lines that start with
//! `MALKOVICH:` and post them in the game's chat (KataGo wrote `CHAT:` before 1.13;
//! gtp2ogs now reads `MALKOVICH:`, `DISCUSSION:` and `MAIN:`).

use std::fmt;

use tengen_rules::{Move, Player};
use tengen_search::{Analysis, SearchParams};

use crate::perspective::Perspective;

/// The summary of one move's search, from the reported point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchChat {
    /// Root visits.
    pub visits: u64,
    /// The reported player's chance of winning, 0 to 1.
    pub winrate: f64,
    /// The reported player's expected lead, points.
    pub score_lead: f64,
    /// The stdev of the final score, points.
    pub score_stdev: f64,
    /// The mover's playout doubling advantage, when the search had one.
    pub playout_doubling_advantage: Option<f64>,
    /// The principal variation from the chosen move, as GTP vertices.
    pub pv: Vec<String>,
}

impl SearchChat {
    /// The summary of `analysis`, searched with `params`, after `mover` chose `chosen`,
    /// with values in `view` (the mover's is KataGo's side to move): its PV is the chosen
    /// move's (just the move if the search never visited it).
    pub fn new(
        analysis: &Analysis,
        params: &SearchParams,
        mover: Player,
        chosen: Move,
        view: Perspective,
    ) -> SearchChat {
        let r = &analysis.root;
        // The search reports White's values.
        let (winrate, score_lead) = if view.flips(mover) {
            (1.0 - r.winrate, -r.score_lead)
        } else {
            (r.winrate, r.score_lead)
        };
        let pv = match analysis.moves.iter().find(|m| m.mv == chosen) {
            Some(m) => m.pv.clone(),
            None => vec![chosen],
        };
        SearchChat {
            visits: r.visits,
            winrate,
            score_lead,
            score_stdev: r.score_stdev,
            playout_doubling_advantage: (params.playout_doubling_advantage != 0.0)
                .then(|| params.playout_doubling_input(params.advantaged_player(mover), mover)),
            pv: pv.into_iter().map(|mv| analysis.size.gtp(mv)).collect(),
        }
    }
}

/// KataGo's line: `MALKOVICH:Visits V Winrate W% ScoreLead L ScoreStdev S PV MOVES`, with
/// ` (PDA P)` before ` PV` when the search had a playout doubling advantage.
impl fmt::Display for SearchChat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MALKOVICH:Visits {} Winrate {:.2}% ScoreLead {:.1} ScoreStdev {:.1}",
            self.visits,
            self.winrate * 100.0,
            self.score_lead,
            self.score_stdev,
        )?;
        if let Some(pda) = self.playout_doubling_advantage {
            write!(f, " (PDA {pda:.2})")?;
        }
        write!(f, " PV {}", self.pv.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_katagos() {
        let mut chat = SearchChat {
            visits: 812,
            winrate: 0.61234,
            score_lead: -2.25,
            score_stdev: 11.04,
            playout_doubling_advantage: None,
            pv: vec!["D4".into(), "Q16".into(), "pass".into()],
        };
        assert_eq!(
            chat.to_string(),
            "MALKOVICH:Visits 812 Winrate 61.23% ScoreLead -2.2 ScoreStdev 11.0 PV D4 Q16 pass"
        );
        chat.playout_doubling_advantage = Some(-1.5);
        assert_eq!(
            chat.to_string(),
            "MALKOVICH:Visits 812 Winrate 61.23% ScoreLead -2.2 ScoreStdev 11.0 (PDA -1.50) \
             PV D4 Q16 pass"
        );
    }
}
