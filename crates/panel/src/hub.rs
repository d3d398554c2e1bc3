//! The panel's view of the appliance: the messages the engine loop publishes on MQTT,
//! read once into types, the latest of each kept for new viewers and every one passed on
//! to the live ones. It is fed the same `Out` messages as the MQTT link, so it holds no
//! game of its own.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tengen_device::appliance::Out;
use tengen_device::payload::{Alert, AnalysisMsg, CameraStatus, State};
use tokio::sync::broadcast;

/// Live events a slow viewer may fall behind by before it is dropped (it reconnects and
/// gets the whole view again).
const LAG: usize = 64;

/// Graph points kept: one per move number, so a long game stays bounded.
const MAX_POINTS: usize = 2000;

/// What a live event is about; its name is the Server-Sent Events event name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The game state (`state` topic).
    State,
    /// An analysis report (`analysis` topic).
    Analysis,
    /// A reconciler alert, an error or a resolution (`alert` topic).
    Alert,
    /// The engine's move (`move` topic).
    Move,
    /// The camera reader's status (`camera` topic).
    Camera,
}

impl Kind {
    /// The kind of a topic the panel shows; `None` for the others (`gtp/reply`).
    fn of_topic(topic: &str) -> Option<Kind> {
        Some(match topic {
            "state" => Kind::State,
            "analysis" => Kind::Analysis,
            "alert" => Kind::Alert,
            "move" => Kind::Move,
            "camera" => Kind::Camera,
            _ => return None,
        })
    }

    /// The event's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::State => "state",
            Kind::Analysis => "analysis",
            Kind::Alert => "alert",
            Kind::Move => "move",
            Kind::Camera => "camera",
        }
    }
}

/// One live event: its kind and its JSON, shared by every viewer.
#[derive(Clone, Debug)]
pub struct Event {
    /// What it is about.
    pub kind: Kind,
    /// The payload as published on MQTT.
    pub data: Arc<str>,
}

/// One point of the win-rate graph, from Black's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Point {
    /// Move number the analysis was of (0: before the first move).
    pub number: usize,
    /// Black's win probability.
    pub winrate: f64,
    /// Black's lead in points.
    pub lead: f64,
}

/// Everything a viewer needs on (re)connecting.
#[derive(Clone, Debug, Default, Serialize)]
pub struct View {
    /// The game state, once published.
    pub state: Option<State>,
    /// The latest analysis of the current position, if any.
    pub analysis: Option<AnalysisMsg>,
    /// The reconciler's open alert (points to fix or an ambiguity), if any.
    pub alert: Option<Alert>,
    /// The camera reader's status, when a camera is in use.
    pub camera: Option<CameraStatus>,
    /// Black's win rate and lead over the game, by move number.
    pub graph: Vec<Point>,
}

#[derive(Default)]
struct Latest {
    state: Option<State>,
    analysis: Option<AnalysisMsg>,
    alert: Option<Alert>,
    camera: Option<CameraStatus>,
    graph: BTreeMap<usize, Point>,
}

/// The shared view and the live event channel.
pub struct Hub {
    latest: Mutex<Latest>,
    live: broadcast::Sender<Event>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            latest: Mutex::default(),
            live: broadcast::channel(LAG).0,
        }
    }
}

impl Hub {
    /// A hub with nothing published yet.
    pub fn new() -> Hub {
        Hub::default()
    }

    /// Takes one message the appliance published (called on the engine loop's thread;
    /// never blocks on viewers).
    pub fn publish(&self, out: &Out) {
        let Some(kind) = Kind::of_topic(out.topic) else {
            return;
        };
        // The topics shown carry JSON text (only the camera's thumbnail is a picture).
        let Ok(json) = std::str::from_utf8(&out.payload) else {
            log::error!("panel: a {} message is not text", kind.name());
            return;
        };
        {
            let mut l = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(e) = l.take(kind, json) {
                // Our own appliance's JSON: a mismatch is a bug, not bad input.
                log::error!("panel: cannot read a {} message: {e}", kind.name());
                return;
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.live.send(Event {
            kind,
            data: json.into(),
        });
    }

    /// The view as it stands.
    pub fn view(&self) -> View {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .view()
    }

    /// The view as it stands and the live events after it, taken together so that no
    /// event falls between them.
    pub fn subscribe(&self) -> (View, broadcast::Receiver<Event>) {
        let l = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        (l.view(), self.live.subscribe())
    }
}

impl Latest {
    fn view(&self) -> View {
        View {
            state: self.state.clone(),
            analysis: self.analysis.clone(),
            alert: self.alert.clone(),
            camera: self.camera.clone(),
            graph: self.graph.values().copied().collect(),
        }
    }

    fn take(&mut self, kind: Kind, json: &str) -> Result<(), serde_json::Error> {
        match kind {
            Kind::State => {
                let s: State = serde_json::from_str(json)?;
                // Points past where the new game and the old one part are of moves
                // taken back; another board, setup or komi is another game.
                let same = self
                    .state
                    .as_ref()
                    .is_some_and(|o| o.size == s.size && o.setup == s.setup && o.komi == s.komi);
                match &self.state {
                    Some(old) if same => {
                        let kept = old
                            .moves
                            .iter()
                            .zip(&s.moves)
                            .take_while(|(a, b)| a == b)
                            .count();
                        self.graph.retain(|&n, _| n <= kept);
                    }
                    _ => self.graph.clear(),
                }
                if self
                    .analysis
                    .as_ref()
                    .is_some_and(|a| a.number != s.moves.len())
                {
                    self.analysis = None;
                }
                self.state = Some(s);
            }
            Kind::Analysis => {
                let a: AnalysisMsg = serde_json::from_str(json)?;
                let black = a.to_move == "B";
                let point = Point {
                    number: a.number,
                    winrate: if black { a.winrate } else { 1.0 - a.winrate },
                    lead: if black { a.score_lead } else { -a.score_lead },
                };
                if self.graph.len() < MAX_POINTS || self.graph.contains_key(&a.number) {
                    self.graph.insert(a.number, point);
                }
                self.analysis = Some(a);
            }
            Kind::Alert => match serde_json::from_str::<Alert>(json)? {
                a @ (Alert::Fix { .. } | Alert::Ambiguous { .. }) => self.alert = Some(a),
                Alert::Resolved => self.alert = None,
                // Errors and dropped inputs are news, not a standing condition.
                Alert::Error { .. } | Alert::Dropped { .. } => {}
            },
            Kind::Camera => self.camera = Some(serde_json::from_str(json)?),
            Kind::Move => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(topic: &'static str, payload: &str) -> Out {
        Out {
            topic,
            payload: payload.as_bytes().to_vec(),
            retain: false,
        }
    }

    fn state(moves: &[&str]) -> String {
        let s = State {
            size: [9, 9],
            komi: 7.0,
            rules: serde_json::json!({}),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            setup: vec![],
            to_move: if moves.len() % 2 == 0 { "B" } else { "W" }.into(),
            rows: vec![".........".into(); 9],
            engine: Default::default(),
            level: "10".into(),
            thinking: false,
            result: None,
        };
        serde_json::to_string(&s).unwrap()
    }

    fn analysis(number: usize, to_move: &str, winrate: f64, lead: f64) -> String {
        format!(
            r#"{{"number":{number},"to_move":"{to_move}","visits":10,"winrate":{winrate},"scoreLead":{lead},"moves":[]}}"#
        )
    }

    #[test]
    fn the_graph_is_in_blacks_view_and_follows_undo_and_new_games() {
        let hub = Hub::new();
        hub.publish(&out("state", &state(&["B E5"])));
        hub.publish(&out("analysis", &analysis(1, "W", 0.3, 2.0)));
        hub.publish(&out("state", &state(&["B E5", "W C3"])));
        hub.publish(&out("analysis", &analysis(2, "B", 0.6, 1.5)));
        let g = hub.view().graph;
        assert_eq!(g.len(), 2);
        assert_eq!((g[0].number, g[0].winrate, g[0].lead), (1, 0.7, -2.0));
        assert_eq!((g[1].number, g[1].winrate, g[1].lead), (2, 0.6, 1.5));
        // Undo: the point of the move taken back goes, and so does its analysis.
        hub.publish(&out("state", &state(&["B E5"])));
        let v = hub.view();
        assert_eq!(v.graph.len(), 1);
        assert!(v.analysis.is_none());
        // A new game of the same settings keeps only the empty board's point.
        hub.publish(&out("analysis", &analysis(0, "B", 0.5, 0.0)));
        hub.publish(&out("state", &state(&["B C3"])));
        let g = hub.view().graph;
        assert_eq!(g.iter().map(|p| p.number).collect::<Vec<_>>(), [0]);
        // Another komi: nothing of the old game stays.
        let mut other: State = serde_json::from_str(&state(&[])).unwrap();
        other.komi = 6.5;
        hub.publish(&out("state", &serde_json::to_string(&other).unwrap()));
        assert!(hub.view().graph.is_empty());
    }

    #[test]
    fn a_fix_alert_stands_until_resolved_and_errors_pass_by() {
        let hub = Hub::new();
        let (_, mut rx) = hub.subscribe();
        hub.publish(&out(
            "alert",
            r#"{"kind":"fix","fixes":[{"point":"C7","want":"B","seen":"empty"}],"assuming":[]}"#,
        ));
        hub.publish(&out(
            "alert",
            r#"{"kind":"error","source":"command","message":"x"}"#,
        ));
        assert!(matches!(hub.view().alert, Some(Alert::Fix { .. })));
        hub.publish(&out("alert", r#"{"kind":"resolved"}"#));
        assert!(hub.view().alert.is_none());
        let kinds: Vec<Kind> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, [Kind::Alert; 3]);
    }

    #[test]
    fn other_topics_and_unreadable_payloads_are_not_passed_on() {
        let hub = Hub::new();
        let (_, mut rx) = hub.subscribe();
        hub.publish(&out("gtp/reply", r#"{"id":null,"ok":true,"text":""}"#));
        hub.publish(&out("state", "not json"));
        assert!(rx.try_recv().is_err());
        assert!(hub.view().state.is_none());
    }
}
