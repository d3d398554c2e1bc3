//! The transcript file format, shared by the GTP and the analysis transcripts.
//!
//! A transcript is a UTF-8 text file read line by line:
//!
//! - `# ...` is a comment and an empty line is nothing (a GTP reply never holds an empty
//!   line, and a JSON response is one line, so neither needs one).
//! - `@name value` before the first command sets up the engine (see each runner's
//!   `setup`), e.g. `@visits 16`.
//! - `> LINE` sends LINE to the engine exactly as a controller would (ids, comments and
//!   all; the `> ` itself is not sent).
//! - Every other line up to the next `> ` is one line of the expected reply. GTP: the reply
//!   as sent, without the empty line that ends it (`= 2`, `=7`, `? illegal move: ...`, and
//!   a board's lines after its `=`). Analysis: one JSON pattern per response line, matched
//!   in any order (the protocol answers out of order).
//!
//! Search-dependent text is matched without hard-coding it:
//!
//! - GTP: `~ REGEX` matches one reply line by a regular expression over the whole line;
//!   `...` matches any number of reply lines (none included).
//! - JSON: see [`json`] (`"*"` any value, `"~REGEX"` a scalar's text, `"*81"` an array of
//!   81 values, a `"..."` key or last element allowing more).
//!
//! In both, regular expressions may use `{vertex}` (a board point), `{move}` (a point or
//! `pass`) and `{num}` (a decimal number). Trailing whitespace is not compared: editors
//! strip it, and no reply means anything by it.

pub mod json;

use regex::Regex;

/// One command and what it must answer.
pub struct Step {
    /// The line of the `> ` in its file, for messages.
    pub line_no: usize,
    /// What is sent.
    pub command: String,
    /// The expected reply lines, unparsed (each runner reads them its own way).
    pub expected: Vec<String>,
}

/// A parsed transcript file.
pub struct Transcript {
    /// Set-up directives: name and value.
    pub setup: Vec<(String, String)>,
    /// The commands in order.
    pub steps: Vec<Step>,
}

impl Transcript {
    /// Reads a transcript's text; `Err` says which line is malformed.
    pub fn parse(text: &str) -> Result<Transcript, String> {
        let mut setup = Vec::new();
        let mut steps: Vec<Step> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(command) = line.strip_prefix("> ") {
                steps.push(Step {
                    line_no,
                    command: command.to_string(),
                    expected: Vec::new(),
                });
            } else if let Some(directive) = line.strip_prefix('@') {
                if !steps.is_empty() {
                    return Err(format!("line {line_no}: set-up after the first command"));
                }
                let (name, value) = directive.split_once(' ').unwrap_or((directive, ""));
                setup.push((name.to_string(), value.trim().to_string()));
            } else {
                let Some(step) = steps.last_mut() else {
                    return Err(format!("line {line_no}: a reply before any command"));
                };
                step.expected.push(line.to_string());
            }
        }
        if steps.is_empty() {
            return Err("no commands".into());
        }
        Ok(Transcript { setup, steps })
    }
}

/// A regular expression matching a whole text, with the shorthands expanded.
pub fn whole_regex(pattern: &str) -> Result<Regex, String> {
    let expanded = pattern
        .replace("{vertex}", "(?:[A-HJ-Z](?:1[0-9]|2[0-5]|[1-9]))")
        .replace("{move}", "(?:[A-HJ-Z](?:1[0-9]|2[0-5]|[1-9])|pass)")
        .replace("{num}", "(?:-?[0-9]+(?:\\.[0-9]+)?(?:e-?[0-9]+)?)");
    Regex::new(&format!("^(?:{expanded})$")).map_err(|e| format!("bad pattern {pattern:?}: {e}"))
}

/// Whether reply `lines` match the GTP `expected` lines (exact text, `~ REGEX`, `...`).
pub fn gtp_lines_match(expected: &[String], lines: &[&str]) -> Result<bool, String> {
    let Some((first, rest)) = expected.split_first() else {
        return Ok(lines.is_empty());
    };
    if first == "..." {
        // Any number of lines, then the rest: the first way that fits.
        for skip in 0..=lines.len() {
            if gtp_lines_match(rest, &lines[skip..])? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let Some((line, more)) = lines.split_first() else {
        return Ok(false);
    };
    let line = line.trim_end();
    let here = match first.strip_prefix("~ ") {
        Some(pattern) => whole_regex(pattern)?.is_match(line),
        None => first == line,
    };
    Ok(here && gtp_lines_match(rest, more)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_format_reads_set_up_commands_and_replies() {
        let t = Transcript::parse("# c\n@visits 8\n\n> 1 name\n=1 Tengen\n> quit\n=\n").unwrap();
        assert_eq!(t.setup, vec![("visits".to_string(), "8".to_string())]);
        assert_eq!(t.steps.len(), 2);
        assert_eq!(t.steps[0].line_no, 4);
        assert_eq!(t.steps[0].command, "1 name");
        assert_eq!(t.steps[0].expected, lines(&["=1 Tengen"]));
        assert!(Transcript::parse("= stray\n> name\n").is_err());
        assert!(Transcript::parse("> name\n= x\n@visits 3\n").is_err());
        assert!(Transcript::parse("# nothing\n").is_err());
    }

    #[test]
    fn gtp_lines_match_exactly_by_pattern_or_skipping() {
        let m = |e: &[&str], a: &[&str]| gtp_lines_match(&lines(e), a).unwrap();
        assert!(m(&["= 2"], &["= 2"]));
        assert!(!m(&["= 2"], &["= 3"]));
        assert!(!m(&["= 2"], &["= 2", "more"]));
        assert!(m(&["~ = {vertex}"], &["= Q16"]));
        assert!(!m(&["~ = {vertex}"], &["= I5"]));
        assert!(!m(&["~ = {vertex}"], &["= pass"]));
        assert!(m(&["~ = {move}"], &["= pass"]));
        assert!(m(&["=", "...", "end"], &["=", "a", "b", "end"]));
        assert!(m(&["=", "...", "end"], &["=", "end"]));
        assert!(!m(&["=", "...", "end"], &["=", "a"]));
        assert!(m(&["x"], &["x   "]));
        assert!(gtp_lines_match(&lines(&["~ ("]), &["x"]).is_err());
    }
}
