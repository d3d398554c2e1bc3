//! The panel's view of the appliance: the messages the engine loop publishes on MQTT,
//! read once into types, the latest of each kept for new viewers and every one passed on
//! to the live ones. It is fed the same `Out` messages as the MQTT link, so it holds no
//! game of its own. With a file, its win-rate graph outlives a restart.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tengen_device::appliance::Out;
use tengen_device::payload::{Alert, AnalysisMsg, CameraStatus, State};
use tokio::sync::broadcast;

pub use crate::graph::Point;
use crate::graph::{Graph, Saved};
use crate::graph_file::{self, Writer};

/// Live events a slow viewer may fall behind by before it is dropped (it reconnects and
/// gets the whole view again).
const LAG: usize = 64;

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
    /// Black's win rate, lead and visits over the game, by move number.
    pub graph: Vec<Point>,
}

#[derive(Default)]
struct Latest {
    state: Option<State>,
    analysis: Option<AnalysisMsg>,
    alert: Option<Alert>,
    camera: Option<CameraStatus>,
    graph: Graph,
}

/// The shared view and the live event channel.
pub struct Hub {
    latest: Mutex<Latest>,
    live: broadcast::Sender<Event>,
    /// Saves the graph, when it is kept on disk.
    writer: Mutex<Option<Writer>>,
}

impl Default for Hub {
    fn default() -> Self {
        Hub {
            latest: Mutex::default(),
            live: broadcast::channel(LAG).0,
            writer: Mutex::default(),
        }
    }
}

impl Hub {
    /// A hub with nothing published yet.
    pub fn new() -> Hub {
        Hub::default()
    }

    /// A hub whose graph is kept in `dir` ([`graph_file::FILE_NAME`]): the graph saved
    /// there is shown as far as the first state's game has its positions. A file that
    /// cannot be read is passed over with a warning (and replaced at the next save).
    pub fn with_graph_in(dir: PathBuf) -> std::io::Result<Hub> {
        let path = dir.join(graph_file::FILE_NAME);
        let graph = match graph_file::load(&path) {
            Ok(Some(saved)) => Graph::restored(saved),
            Ok(None) => Graph::default(),
            Err(e) => {
                log::warn!("panel: the saved graph is passed over: {e}");
                Graph::default()
            }
        };
        let hub = Hub::new();
        hub.lock().graph = graph;
        *hub.writer.lock().unwrap_or_else(PoisonError::into_inner) = Some(Writer::spawn(path)?);
        Ok(hub)
    }

    /// Saves the graph as it stands and waits until it is on disk (the daemon is stopping).
    pub fn finish(&self) {
        let last = self.lock().graph.take_unsaved();
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(w) = writer {
            if let Some(saved) = last {
                w.send(saved);
            }
            w.finish();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Latest> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner)
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
        let save = match self.lock().take(kind, json) {
            Ok(save) => save,
            Err(e) => {
                // Our own appliance's JSON: a mismatch is a bug, not bad input.
                log::error!("panel: cannot read a {} message: {e}", kind.name());
                return;
            }
        };
        if let Some(saved) = save {
            if let Some(w) = &*self.writer.lock().unwrap_or_else(PoisonError::into_inner) {
                w.send(saved);
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
        self.lock().view()
    }

    /// The view as it stands and the live events after it, taken together so that no
    /// event falls between them.
    pub fn subscribe(&self) -> (View, broadcast::Receiver<Event>) {
        let l = self.lock();
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
            // Until a state says which game is on show, restored points may be another's.
            graph: if self.state.is_some() {
                self.graph.points()
            } else {
                Vec::new()
            },
        }
    }

    /// Takes one message; returns the graph to save when a position was left (its
    /// points are final then; the current one's are saved when the daemon stops, and
    /// analysed again after a crash).
    fn take(&mut self, kind: Kind, json: &str) -> Result<Option<Saved>, serde_json::Error> {
        match kind {
            Kind::State => {
                let s: State = serde_json::from_str(json)?;
                let save = if self.graph.follow(&s) {
                    self.graph.take_unsaved()
                } else {
                    None
                };
                if self
                    .analysis
                    .as_ref()
                    .is_some_and(|a| a.number != s.moves.len())
                {
                    self.analysis = None;
                }
                self.state = Some(s);
                return Ok(save);
            }
            Kind::Analysis => {
                let a: AnalysisMsg = serde_json::from_str(json)?;
                self.graph.add(&a);
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
        Ok(None)
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
            to_move: if moves.len().is_multiple_of(2) {
                "B"
            } else {
                "W"
            }
            .into(),
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
    fn the_graph_kept_on_disk_comes_back_for_the_same_game_only() {
        let dir = tempfile::tempdir().unwrap();
        let hub = Hub::with_graph_in(dir.path().to_path_buf()).unwrap();
        hub.publish(&out("state", &state(&[])));
        hub.publish(&out("analysis", &analysis(0, "B", 0.5, 0.5)));
        hub.publish(&out("state", &state(&["B E5"])));
        hub.publish(&out("analysis", &analysis(1, "W", 0.3, 2.0)));
        hub.publish(&out("state", &state(&["B E5", "W C3"])));
        hub.publish(&out("analysis", &analysis(2, "B", 0.6, 1.5)));
        let before = hub.view().graph;
        assert_eq!(before.len(), 3);
        // Killed: what was saved when the last position was left.
        drop(hub);
        let hub = Hub::with_graph_in(dir.path().to_path_buf()).unwrap();
        assert!(hub.view().graph.is_empty(), "no points before a state");
        hub.publish(&out("state", &state(&["B E5", "W C3"])));
        assert_eq!(hub.view().graph, before[..2]);
        // Stopped: every point, the current position's too.
        hub.publish(&out("analysis", &analysis(2, "B", 0.6, 1.5)));
        hub.finish();
        let hub = Hub::with_graph_in(dir.path().to_path_buf()).unwrap();
        hub.publish(&out("state", &state(&["B E5", "W C3"])));
        assert_eq!(hub.view().graph, before);
        // Another game resumed (say, its journal restored): none of the saved points.
        hub.finish();
        let hub = Hub::with_graph_in(dir.path().to_path_buf()).unwrap();
        hub.publish(&out("state", &state(&["B D4"])));
        assert_eq!(hub.view().graph, before[..1], "only the empty board's");
        // Dropped, its writer has written what it was handed.
        drop(hub);
        // A damaged file: passed over, and replaced at the next save.
        std::fs::write(dir.path().join(graph_file::FILE_NAME), b"{\"version\":").unwrap();
        let hub = Hub::with_graph_in(dir.path().to_path_buf()).unwrap();
        hub.publish(&out("state", &state(&["B E5", "W C3"])));
        assert!(hub.view().graph.is_empty());
        hub.publish(&out("analysis", &analysis(2, "B", 0.6, 1.5)));
        hub.finish();
        let saved = graph_file::load(&dir.path().join(graph_file::FILE_NAME));
        assert_eq!(saved.unwrap().unwrap().points, before[2..]);
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
