//! The finished games in `state.dir/games`: listed, and read by a name checked to be one
//! of them (a name never becomes a path of its own).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Games listed at most, newest first.
pub const MAX_LISTED: usize = 500;

/// Largest SGF served; an archive file past it is not one of ours.
const MAX_SGF: u64 = 4 << 20;

/// One archived game.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GameEntry {
    /// Its file name, e.g. `1764000000-57moves.sgf`.
    pub name: String,
    /// Seconds since 1970 when it was archived, from the name.
    pub archived: Option<u64>,
    /// Its number of moves, from the name.
    pub moves: Option<usize>,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Why a game could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// Not the name of an archived game.
    #[error("{0:?} is not a game name (letters, digits, '-', '_', '.', ending in .sgf)")]
    BadName(String),
    /// No such game.
    #[error("no archived game {0:?}")]
    NotFound(String),
    /// The folder or file could not be read.
    #[error("cannot read the archive: {0}")]
    Io(#[from] std::io::Error),
}

/// Whether `name` can be an archived game's file name: no path separators, no leading
/// dot, nothing but plain characters.
fn valid_name(name: &str) -> bool {
    name.len() <= 128
        && name.ends_with(".sgf")
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// The archived games in `dir`, newest first (an absent folder holds none).
pub fn list(dir: &Path) -> Result<Vec<GameEntry>, ArchiveError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut games = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !valid_name(&name) || !meta.is_file() {
            continue;
        }
        let (archived, moves) = parse_name(&name);
        games.push(GameEntry {
            name,
            archived,
            moves,
            bytes: meta.len(),
        });
    }
    games.sort_by(|a, b| b.archived.cmp(&a.archived).then(b.name.cmp(&a.name)));
    games.truncate(MAX_LISTED);
    Ok(games)
}

/// The SGF text of the archived game `name` in `dir`.
pub fn read(dir: &Path, name: &str) -> Result<String, ArchiveError> {
    if !valid_name(name) {
        return Err(ArchiveError::BadName(name.chars().take(64).collect()));
    }
    let path: PathBuf = dir.join(name);
    // Not followed: a link in the archive is not a game the appliance wrote.
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_file() && m.len() <= MAX_SGF => {}
        Ok(_) => return Err(ArchiveError::NotFound(name.into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ArchiveError::NotFound(name.into()))
        }
        Err(e) => return Err(e.into()),
    }
    let bytes = std::fs::read(&path)?;
    String::from_utf8(bytes).map_err(|_| ArchiveError::NotFound(name.into()))
}

/// The archive time and move count in a name of the appliance's form
/// `<unix seconds>-<N>moves.sgf`.
fn parse_name(name: &str) -> (Option<u64>, Option<usize>) {
    let stem = name.trim_end_matches(".sgf");
    let Some((time, moves)) = stem.split_once('-') else {
        return (None, None);
    };
    (
        time.parse().ok(),
        moves.strip_suffix("moves").and_then(|m| m.parse().ok()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_newest_first_and_reads_only_games_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let games = dir.path().join("games");
        std::fs::create_dir(&games).unwrap();
        std::fs::write(games.join("100-3moves.sgf"), "(;FF[4])").unwrap();
        std::fs::write(games.join("200-7moves.sgf"), "(;FF[4]SZ[9])").unwrap();
        std::fs::write(games.join("notes.txt"), "x").unwrap();
        std::fs::write(dir.path().join("secret.sgf"), "s").unwrap();
        let l = list(&games).unwrap();
        let names: Vec<&str> = l.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["200-7moves.sgf", "100-3moves.sgf"]);
        assert_eq!(
            (l[0].archived, l[0].moves, l[0].bytes),
            (Some(200), Some(7), 13)
        );
        assert_eq!(read(&games, "200-7moves.sgf").unwrap(), "(;FF[4]SZ[9])");
        for bad in [
            "../secret.sgf",
            "..%2fsecret.sgf",
            "/etc/passwd",
            ".sgf",
            "a b.sgf",
        ] {
            assert!(
                matches!(read(&games, bad), Err(ArchiveError::BadName(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            read(&games, "300-1moves.sgf"),
            Err(ArchiveError::NotFound(_))
        ));
        assert!(list(&dir.path().join("none")).unwrap().is_empty());
    }

    #[test]
    fn links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("outside"), "(;)").unwrap();
        let games = dir.path().join("games");
        std::fs::create_dir(&games).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside"), games.join("1-1moves.sgf")).unwrap();
        assert!(matches!(
            read(&games, "1-1moves.sgf"),
            Err(ArchiveError::NotFound(_))
        ));
        assert!(list(&games).unwrap().is_empty());
    }
}
