//! Shared helpers for the golden tests: where the reference data is, and reading it.

#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;
use tengen_rules::{BoardSize, Move, Player};

/// The shared reference-data folder: `$TENGEN_SHARED`, else `../shared` beside the repository.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TENGEN_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")));
    dir.join("golden").is_dir().then_some(dir)
}

/// The records of a golden JSONL file, or `None` (after saying so) when the data is absent.
pub fn golden_records(file: &str) -> Option<Vec<Value>> {
    let Some(dir) = shared_dir() else {
        println!("golden {file}: skipped (no shared reference data; set TENGEN_SHARED)");
        return None;
    };
    let path = dir.join("golden").join(file);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            println!("golden {file}: skipped ({}: {e})", path.display());
            return None;
        }
    };
    Some(
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("golden line is JSON"))
            .collect(),
    )
}

/// Collects mismatches of one record; a record agrees when none were found.
#[derive(Default)]
pub struct Check {
    pub problems: Vec<String>,
}

impl Check {
    pub fn eq<T: PartialEq + std::fmt::Debug>(
        &mut self,
        what: impl std::fmt::Display,
        ours: T,
        theirs: T,
    ) {
        if ours != theirs {
            self.problems
                .push(format!("{what}: ours {ours:?}, reference {theirs:?}"));
        }
    }

    pub fn fail(&mut self, what: impl std::fmt::Display) {
        self.problems.push(what.to_string());
    }

    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Prints the summary line and details of the first disagreements; returns (agreed, total).
pub fn report(file: &str, results: &[(String, Check)]) -> (usize, usize) {
    let agreed = results.iter().filter(|(_, c)| c.ok()).count();
    println!("golden {file}: {agreed}/{} agree", results.len());
    for (id, c) in results.iter().filter(|(_, c)| !c.ok()).take(10) {
        for p in c.problems.iter().take(5) {
            println!("  {id}: {p}");
        }
    }
    (agreed, results.len())
}

pub fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("field {key} is a string"))
}

pub fn size_of(v: &Value) -> BoardSize {
    let x = v["boardXSize"].as_u64().expect("boardXSize") as usize;
    let y = v["boardYSize"].as_u64().expect("boardYSize") as usize;
    BoardSize::new(x, y).expect("valid size")
}

pub fn player(s: &str) -> Player {
    s.parse().expect("B or W")
}

pub fn mv(size: BoardSize, s: &str) -> Move {
    size.parse_move(s).expect("valid vertex")
}

pub fn rows(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("rows")
        .iter()
        .map(|r| r.as_str().expect("row").to_string())
        .collect()
}

pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("string").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A `"null"`-or-vertex string as an optional vertex string.
pub fn opt_vertex(v: &Value) -> Option<String> {
    match v.as_str() {
        None | Some("null") => None,
        Some(s) => Some(s.to_string()),
    }
}
