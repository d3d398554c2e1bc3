//! Helpers of the rules crate's golden tests: comparing a record with ours, and reading its
//! fields. Finding and reading the shared data is `tengen_test_support`'s.

#![allow(dead_code)]

use serde_json::Value;
use tengen_rules::{BoardSize, Move, Player};
pub use tengen_test_support::golden_records;

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
    println!(
        "{}",
        tengen_test_support::golden_line(file, agreed, results.len())
    );
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
