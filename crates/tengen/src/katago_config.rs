//! KataGo's config file format, read into key/value entries that remember where each was
//! given: `key = value` lines, `#` comments, double-quoted values with backslash escapes,
//! `@include FILE` (relative to the including file). Several files merge, a later one
//! winning; `-override-config KEY=VALUE,...` wins over them all, and an empty value there
//! removes the key. What the keys mean is `katago_keys`' business.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a value was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A line (from 1) of a config file.
    Line {
        /// The file.
        file: PathBuf,
        /// The line.
        line: usize,
    },
    /// `-override-config` on the command line.
    Override,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Line { file, line } => write!(f, "{} line {line}", file.display()),
            Origin::Override => f.write_str("-override-config"),
        }
    }
}

/// One key's value and where it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The value, unquoted.
    pub value: String,
    /// Where it was given.
    pub origin: Origin,
}

/// Why a config could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// A file could not be read.
    #[error("cannot read config {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line or override that is not `key = value`.
    #[error("{at}: {message}")]
    Syntax {
        /// Where.
        at: Origin,
        /// What is wrong.
        message: String,
    },
}

/// How deep `@include`s may nest: deeper is surely a mistake.
const MAX_INCLUDE_DEPTH: usize = 16;

/// The merged entries of KataGo config files and overrides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KataConfig {
    entries: BTreeMap<String, Entry>,
}

impl KataConfig {
    /// Reads `files` in order (a later file's key wins), then applies each `-override-config`
    /// text in order.
    pub fn load(files: &[PathBuf], overrides: &[String]) -> Result<KataConfig, FormatError> {
        let mut cfg = KataConfig::default();
        for file in files {
            let mut read = HashSet::new();
            cfg.read_file(file, &mut read, 0)?;
        }
        for text in overrides {
            cfg.apply_overrides(text)?;
        }
        Ok(cfg)
    }

    /// Every key with its entry, in key order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.entries.iter().map(|(k, e)| (k.as_str(), e))
    }

    /// Reads one file and what it includes; `read` holds the files read so far for this
    /// file, which may not be read twice (KataGo refuses repeated includes too).
    fn read_file(
        &mut self,
        path: &Path,
        read: &mut HashSet<PathBuf>,
        depth: usize,
    ) -> Result<(), FormatError> {
        let io = |source| FormatError::Io {
            path: path.to_path_buf(),
            source,
        };
        let canonical = path.canonicalize().map_err(io)?;
        let text = std::fs::read_to_string(path).map_err(io)?;
        read.insert(canonical);
        let mut this_file = HashSet::new();
        for (n, raw) in text.lines().enumerate() {
            let at = Origin::Line {
                file: path.to_path_buf(),
                line: n + 1,
            };
            let syntax = |message: String| FormatError::Syntax {
                at: at.clone(),
                message,
            };
            let line = raw.trim();
            if let Some(directive) = line.strip_prefix('@') {
                let name = include_target(directive).map_err(syntax)?;
                let target = path.parent().unwrap_or(Path::new("")).join(name);
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(syntax(format!(
                        "@include nested deeper than {MAX_INCLUDE_DEPTH}"
                    )));
                }
                if target.canonicalize().is_ok_and(|c| read.contains(&c)) {
                    return Err(syntax(format!(
                        "{} is included twice (or includes itself)",
                        target.display()
                    )));
                }
                self.read_file(&target, read, depth + 1)
                    .map_err(|e| match e {
                        FormatError::Io { path, source } => {
                            syntax(format!("@include {}: {source}", path.display()))
                        }
                        other => other,
                    })?;
                continue;
            }
            let Some((key, value)) = parse_line(line).map_err(syntax)? else {
                continue;
            };
            if !this_file.insert(key.clone()) {
                return Err(syntax(format!("{key} is given twice in this file")));
            }
            self.entries.insert(
                key,
                Entry {
                    value,
                    origin: at.clone(),
                },
            );
        }
        Ok(())
    }

    /// Applies `KEY=VALUE,KEY=VALUE,...`; an empty value removes the key.
    fn apply_overrides(&mut self, text: &str) -> Result<(), FormatError> {
        for piece in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, value)) = piece.split_once('=') else {
                return Err(FormatError::Syntax {
                    at: Origin::Override,
                    message: format!("expected KEY=VALUE, not {piece:?}"),
                });
            };
            let (key, value) = (key.trim(), value.trim());
            if value.is_empty() {
                self.entries.remove(key);
            } else {
                self.entries.insert(
                    key.to_string(),
                    Entry {
                        value: value.to_string(),
                        origin: Origin::Override,
                    },
                );
            }
        }
        Ok(())
    }
}

/// The file an `@include` directive (without its `@`) names.
fn include_target(directive: &str) -> Result<&str, String> {
    let directive = directive.split('#').next().unwrap_or("").trim();
    let (name, rest) = directive
        .split_once(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or((directive, ""));
    if name != "include" {
        return Err(format!("unsupported directive @{name} (only @include)"));
    }
    let file = rest
        .trim_start_matches(|c: char| c.is_whitespace() || c == '=')
        .trim()
        .trim_matches(|c| c == '"' || c == '\'');
    if file.is_empty() {
        return Err("@include without a file".into());
    }
    Ok(file)
}

/// Reads a trimmed line: `None` for a blank or comment line, else key and value.
fn parse_line(line: &str) -> Result<Option<(String, String)>, String> {
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let bad = || format!("expected key = value, not {line:?}");
    let key_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(key_end);
    let Some(rest) = rest.trim_start().strip_prefix('=') else {
        return Err(bad());
    };
    if key.is_empty() {
        return Err(bad());
    }
    let rest = rest.trim_start();
    let value = match rest.strip_prefix('"') {
        Some(quoted) => {
            let mut value = String::new();
            let mut chars = quoted.chars();
            loop {
                match chars.next() {
                    Some('\\') => value.push(chars.next().ok_or_else(bad)?),
                    Some('"') => break,
                    Some(c) => value.push(c),
                    None => return Err(format!("unterminated quote in {line:?}")),
                }
            }
            let tail = chars.as_str().trim();
            if !(tail.is_empty() || tail.starts_with('#')) {
                return Err(bad());
            }
            value
        }
        None => rest.split('#').next().unwrap_or("").trim().to_string(),
    };
    if value.is_empty() {
        return Err(format!("{key} has no value"));
    }
    Ok(Some((key.to_string(), value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_as_katago_reads_them() {
        let ok = |l: &str| parse_line(l).unwrap();
        assert_eq!(ok("# comment"), None);
        assert_eq!(ok(""), None);
        let kv = |k: &str, v: &str| Some((k.to_string(), v.to_string()));
        assert_eq!(ok("maxVisits = 500"), kv("maxVisits", "500"));
        assert_eq!(ok("maxVisits=500 # per move"), kv("maxVisits", "500"));
        assert_eq!(ok("logDir = \"my # logs\" # c"), kv("logDir", "my # logs"));
        assert_eq!(ok("name = \"a\\\"b\""), kv("name", "a\"b"));
        for bad in [
            "just words",
            "maxVisits",
            "maxVisits =",
            "maxVisits = # none",
            "= 5",
            "max.Visits = 5",
            "x = \"open",
            "x = \"a\" b",
        ] {
            assert!(parse_line(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn files_merge_includes_read_and_overrides_win() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("inc.cfg"), "a = inc\nb = inc\n").unwrap();
        let main = dir.path().join("main.cfg");
        std::fs::write(&main, "a = main\n@include sub/inc.cfg\nc = main\n").unwrap();
        let second = dir.path().join("second.cfg");
        std::fs::write(&second, "c = second\nd = second\n").unwrap();
        let cfg = KataConfig::load(
            &[main.clone(), second.clone()],
            &["d = over, e=over".into(), "b=".into()],
        )
        .unwrap();
        let got: Vec<(&str, &str)> = cfg.entries().map(|(k, e)| (k, e.value.as_str())).collect();
        // The include comes after `a`, so its `a` wins; `b=` removed `b`.
        assert_eq!(
            got,
            [("a", "inc"), ("c", "second"), ("d", "over"), ("e", "over")]
        );
        let c = &cfg.entries.get("c").unwrap().origin;
        assert_eq!(c.to_string(), format!("{} line 1", second.display()));

        std::fs::write(&main, "a = 1\n\na = 2\n").unwrap();
        let e = KataConfig::load(std::slice::from_ref(&main), &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 3") && e.contains("a is given twice"),
            "{e}"
        );
        std::fs::write(&main, "@include main.cfg\n").unwrap();
        let e = KataConfig::load(std::slice::from_ref(&main), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("included twice"), "{e}");
        std::fs::write(&main, "@import x.cfg\n").unwrap();
        assert!(KataConfig::load(std::slice::from_ref(&main), &[]).is_err());
        let e = KataConfig::load(&[], &["novalue".into()]).unwrap_err();
        assert!(e.to_string().starts_with("-override-config"), "{e}");
        let missing = dir.path().join("missing.cfg");
        let e = KataConfig::load(&[missing], &[]).unwrap_err().to_string();
        assert!(e.contains("missing.cfg"), "{e}");
    }
}
