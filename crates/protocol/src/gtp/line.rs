//! GTP input preprocessing (specification §3.1): control characters other than tab and
//! newline removed, tabs made spaces, `#` comments dropped, empty lines ignored; then an
//! optional numeric id, the command name and its arguments.

/// Longest input line accepted; a longer one is refused without being stored.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// One command line, split: an id, a name and its words ([`super::Command::parse`] reads
/// the name and words as a command).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The id to echo, if given.
    pub id: Option<u64>,
    /// Command name, as sent.
    pub name: String,
    /// Arguments.
    pub args: Vec<String>,
}

/// Why a line is not a command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line had an id but no command.
    #[error("missing command")]
    MissingCommand {
        /// The id, to echo in the error reply.
        id: Option<u64>,
    },
    /// The line was longer than [`MAX_LINE_BYTES`].
    #[error("line too long (more than {MAX_LINE_BYTES} bytes)")]
    TooLong,
}

/// Parses one line (without its newline); `None` for lines GTP ignores.
pub fn parse_line(raw: &str) -> Option<Result<Line, LineError>> {
    if raw.len() > MAX_LINE_BYTES {
        return Some(Err(LineError::TooLong));
    }
    let cleaned: String = raw
        .chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect();
    let text = cleaned.split('#').next().unwrap_or("");
    let mut words = text.split_whitespace();
    let first = words.next()?;
    let (id, name) = match first.parse::<u64>() {
        Ok(id) => match words.next() {
            Some(name) => (Some(id), name),
            None => return Some(Err(LineError::MissingCommand { id: Some(id) })),
        },
        Err(_) => (None, first),
    };
    Some(Ok(Line {
        id,
        name: name.to_string(),
        args: words.map(str::to_string).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(line: &str) -> Line {
        parse_line(line).unwrap().unwrap()
    }

    #[test]
    fn ids_comments_tabs_and_control_characters() {
        let c = cmd("12 play\tb D4 # a comment");
        assert_eq!(c.id, Some(12));
        assert_eq!(c.name, "play");
        assert_eq!(c.args, vec!["b", "D4"]);
        assert_eq!(cmd("gen\u{7}move w").name, "genmove");
        assert!(parse_line("   # only a comment").is_none());
        assert!(parse_line("").is_none());
        assert_eq!(
            parse_line("7"),
            Some(Err(LineError::MissingCommand { id: Some(7) }))
        );
        assert_eq!(
            parse_line(&"x".repeat(MAX_LINE_BYTES + 1)),
            Some(Err(LineError::TooLong))
        );
    }
}
