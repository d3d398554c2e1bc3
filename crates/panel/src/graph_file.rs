//! The win-rate graph on disk, so that a restarted daemon still shows the earlier moves'
//! points: one small JSON file beside the journal, replaced whole and durably by a thread
//! of its own (the engine loop never waits on the disk), read once at start.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::graph::{Game, Point, Saved};

/// The file's name in the state directory.
pub const FILE_NAME: &str = "graph.json";

/// The file's format; another one is not read.
const VERSION: u32 = 1;

/// The largest file read: a full graph and its moves take a fraction of it.
const MAX_BYTES: u64 = 1 << 20;

/// Why a saved graph was not read.
#[derive(Debug, thiserror::Error)]
pub enum GraphFileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is larger than any graph.
    #[error("{path} is over {MAX_BYTES} bytes")]
    TooBig {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a graph of this format.
    #[error("{path} is not a saved graph: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// The file's content.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    game: Game,
    points: Vec<Point>,
}

/// Reads the graph saved at `path`: `None` when there is none.
pub fn load(path: &Path) -> Result<Option<Saved>, GraphFileError> {
    let read_err = |source| GraphFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    // A FIFO would block the open until a writer came; a device would never end.
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => {
            return Err(read_err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file; move it away",
            )))
        }
        _ => {}
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(GraphFileError::TooBig {
            path: path.to_path_buf(),
        });
    }
    let invalid = |reason: String| GraphFileError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    // The version first, so that another format says so rather than failing on a field.
    #[derive(Deserialize)]
    struct Version {
        version: u32,
    }
    let v: Version = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    if v.version != VERSION {
        return Err(invalid(format!("format {}, not {VERSION}", v.version)));
    }
    let f: File = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let saved = Saved {
        game: f.game,
        points: f.points,
    };
    saved.check().map_err(invalid)?;
    Ok(Some(saved))
}

/// Writes `saved` as the whole file at `path`, durably (the old graph or the new one
/// survives a crash, never a mix).
pub fn save(path: &Path, saved: &Saved) -> Result<(), String> {
    let file = File {
        version: VERSION,
        game: saved.game.clone(),
        points: saved.points.clone(),
    };
    let bytes = serde_json::to_vec(&file).map_err(|e| e.to_string())?;
    tengen_device::journal::replace_durably(path, &bytes).map_err(|e| e.to_string())
}

/// The thread that saves graphs: it writes the newest handed to it, skipping any it fell
/// behind on.
pub struct Writer {
    tx: Option<Sender<Saved>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread, saving to `path`.
    pub fn spawn(path: PathBuf) -> std::io::Result<Writer> {
        let (tx, rx) = channel::<Saved>();
        let thread = std::thread::Builder::new()
            .name("panel-graph".into())
            .spawn(move || {
                while let Ok(mut saved) = rx.recv() {
                    while let Ok(newer) = rx.try_recv() {
                        saved = newer;
                    }
                    if let Err(e) = save(&path, &saved) {
                        log::warn!("panel: cannot save the graph: {e}");
                    }
                }
            })?;
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Hands a graph over to be saved (never waits on the disk).
    pub fn send(&self, saved: Saved) {
        if let Some(tx) = &self.tx {
            // The thread only ends when `tx` goes, so this cannot fail while it is here.
            let _ = tx.send(saved);
        }
    }

    /// Waits until every graph handed over is on disk, and ends the thread (as dropping
    /// it does).
    pub fn finish(self) {}
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(points: usize) -> Saved {
        Saved {
            game: Game {
                size: [9, 9],
                komi: 6.5,
                rules: serde_json::json!({"scoring": "AREA", "ko": "SIMPLE"}),
                setup: vec!["B C3".into()],
                moves: (0..points.saturating_sub(1))
                    .map(|i| format!("{} A{}", if i % 2 == 0 { "W" } else { "B" }, i + 1))
                    .collect(),
            },
            points: (0..points)
                .map(|n| Point {
                    number: n,
                    // Binary fractions, which JSON's decimals carry exactly.
                    winrate: 0.25 + 0.0625 * n as f64,
                    lead: -3.5 + n as f64,
                    visits: 40 * n as u64,
                })
                .collect(),
        }
    }

    #[test]
    fn a_saved_graph_reads_back_the_same_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        assert!(load(&path).unwrap().is_none());
        let s = saved(4);
        save(&path, &s).unwrap();
        assert_eq!(load(&path).unwrap().unwrap(), s);
        let newer = saved(7);
        let w = Writer::spawn(path.clone()).unwrap();
        w.send(s);
        w.send(newer.clone());
        w.finish();
        assert_eq!(load(&path).unwrap().unwrap(), newer);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE_NAME]);
    }

    #[test]
    fn a_bad_file_is_an_error_never_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        save(&path, &saved(3)).unwrap();
        let good: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let edited = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v = good.clone();
            f(&mut v);
            v.to_string().into_bytes()
        };
        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("empty", vec![], "not a saved graph"),
            ("not JSON", b"{\"version\":1,".to_vec(), "not a saved graph"),
            ("not UTF-8", vec![0xff, 0xfe, 0x00], "not a saved graph"),
            ("a list", b"[1,2,3]".to_vec(), "not a saved graph"),
            (
                "another format",
                edited(&|v| v["version"] = 2.into()),
                "format 2",
            ),
            (
                "a missing field",
                edited(&|v| drop(v.as_object_mut().unwrap().remove("game"))),
                "missing field",
            ),
            (
                "an unknown field",
                edited(&|v| v["extra"] = true.into()),
                "unknown field",
            ),
            (
                "a wrong type",
                edited(&|v| v["points"][0]["number"] = "one".into()),
                "invalid type",
            ),
            (
                "a negative number",
                edited(&|v| v["points"][0]["number"] = (-1).into()),
                "invalid value",
            ),
            (
                "a win rate over 1",
                edited(&|v| v["points"][1]["winrate"] = 1.5.into()),
                "out of range",
            ),
            (
                "points out of order",
                edited(&|v| v["points"].as_array_mut().unwrap().reverse()),
                "out of order",
            ),
            (
                "a point past the moves",
                edited(&|v| drop(v["game"]["moves"].as_array_mut().unwrap().pop())),
                "past the",
            ),
            (
                "too big",
                vec![b' '; MAX_BYTES as usize + 1],
                "over 1048576 bytes",
            ),
        ];
        for (what, bytes, says) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let e = load(&path).expect_err(what).to_string();
            assert!(e.contains(says), "{what}: {e}");
        }
        // A folder where the file should be: an error too.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(load(&path).is_err());
        // And one that cannot be written over: the writer logs and carries on.
        let w = Writer::spawn(path.clone()).unwrap();
        w.send(saved(2));
        w.finish();
        assert!(path.is_dir());
    }
}
