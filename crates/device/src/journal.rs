//! The unfinished game kept on disk as the GTP commands that changed it, made durable
//! before the daemon acknowledges them, and finished games archived as SGF files.
//!
//! Layout of a state directory:
//!
//! - `journal.jsonl`: one JSON object per line, `{"seq":N,"cmd":"play B D4"}`. JSON framing
//!   means a command's quotes or backslashes can never be mistaken for a record boundary;
//!   the explicit `seq` lets a reader notice lost or doubled records instead of replaying a
//!   different game.
//! - `journal.jsonl.tmp`: a whole new journal being written by [`Journal::reset`]; it only
//!   becomes the journal by an atomic rename, so a crash leaves the old or the new, never a mix.
//! - `games/<name>.sgf`: finished games, written by [`Journal::archive`]; when `games/`
//!   cannot be written, `<name>.sgf` in the state directory itself ([`Journal::archive_beside`]).
//! - `journal.jsonl.corrupt-<n>`: a journal that was damaged before its last line, kept
//!   aside by [`Journal::open_or_recover`], which resumes from its valid prefix.
//!
//! Crash model: a record is appended with a single `write` and then `fdatasync`ed, so a
//! crash can only leave the *last* line incomplete. That torn line was never acknowledged
//! (its fsync had not returned), so it is dropped on open. Anything wrong *before* the last
//! line cannot come from a crash and is reported, because dropping it would silently lose
//! acknowledged moves that follow it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The longest command accepted, in bytes (a GTP line is short; anything bigger is a bug).
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

const JOURNAL_NAME: &str = "journal.jsonl";
const JOURNAL_TMP_NAME: &str = "journal.jsonl.tmp";
const GAMES_DIR: &str = "games";
// Ends in `.tmp`, so it can never collide with an archive, which always ends in `.sgf`.
const ARCHIVE_TMP_NAME: &str = "archive.tmp";
// Well under the usual 255-byte file-name limit, leaving room for a suffix and `.sgf`.
const MAX_NAME_CHARS: usize = 128;

/// Why the journal failed (typed; io errors keep the path in the message).
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// A filesystem operation failed.
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. "open" or "fsync".
        op: &'static str,
        /// The file or directory it was done to.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A line other than the last is unreadable, or any record is out of sequence or invalid.
    #[error("journal line {line} is corrupt: {reason}")]
    Corrupt {
        /// The 1-based line number in `journal.jsonl`.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// The command contains `\n` or `\r`, which would split it into two GTP commands on replay.
    #[error("command contains a line break")]
    LineBreak,
    /// The command is longer than [`MAX_COMMAND_BYTES`].
    #[error("command is {len} bytes, the limit is {MAX_COMMAND_BYTES}")]
    TooLong {
        /// The command's length in bytes.
        len: usize,
    },
    /// A record could not be encoded as JSON (not expected for string commands).
    #[error("cannot encode journal record: {0}")]
    Encode(#[from] serde_json::Error),
    /// An earlier write failed part-way, so memory and disk may disagree; reopen the journal.
    #[error("journal is unusable after a failed write; reopen it")]
    Unusable,
    /// Something other than a regular file stands at the journal's path (a FIFO would
    /// hang the start-up, a device would be read for ever).
    #[error("{} is not a regular file; move it away", .0.display())]
    NotRegular(PathBuf),
}

/// The unfinished game's record in a state directory: `<dir>/journal.jsonl` and archived games in `<dir>/games/`.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    path: PathBuf,
    // Always opened in append mode: every write lands at the end even if something moved
    // the file position, and a record is written with one `write` call.
    file: File,
    len: u64,
    // Bytes of whole, valid records: where to cut back to if an append fails part-way.
    size: u64,
    // Set when a failed write may have left the file different from what `len`/`size` say.
    unusable: bool,
}

#[derive(Serialize)]
struct RecordOut<'a> {
    seq: u64,
    cmd: &'a str,
}

// Unknown fields are ignored so that a newer daemon may add fields without making the
// journal unreadable to an older one after a downgrade.
#[derive(Deserialize)]
struct RecordIn {
    seq: u64,
    cmd: String,
}

/// How a line failed to decode: only an unreadable line may be a torn tail.
enum LineError {
    /// Not UTF-8 or not a record: what a crash mid-write leaves behind.
    Unreadable(String),
    /// A well-formed record that is nonetheless wrong: never the result of a crash.
    Invalid(String),
}

impl Journal {
    /// Opens (creating `dir` and the file if needed) and returns the journal with the records of the unfinished game, in order.
    ///
    /// A torn last line (no trailing newline, or not valid JSON, left by a crash mid-write)
    /// is dropped and truncated away with a warning; a damaged line before it is
    /// [`JournalError::Corrupt`], since dropping it would lose the records after it.
    pub fn open(dir: &Path) -> Result<(Journal, Vec<String>), JournalError> {
        ensure_dir(dir)?;
        let path = dir.join(JOURNAL_NAME);
        refuse_non_regular(&path)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(io_err("open", &path))?;
        // Always, not only when the file was just created: if an earlier `reset` renamed a
        // new journal into place but failed to fsync the directory, this makes that name
        // durable before any record appended to it is acknowledged.
        sync_dir(dir)?;

        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io_err("read", &path))?;
        let (commands, valid_len) = parse(&bytes)?;

        if valid_len < bytes.len() {
            let torn = &bytes[valid_len..];
            log::warn!(
                "{}: dropping torn last line ({} bytes: {:?}) left by an interrupted write",
                path.display(),
                torn.len(),
                String::from_utf8_lossy(&torn[..torn.len().min(80)]),
            );
            // Cut it away now: the next append would otherwise be glued onto it, turning a
            // harmless torn tail into a corrupt middle line.
            file.set_len(valid_len as u64)
                .map_err(io_err("truncate", &path))?;
            file.sync_all().map_err(io_err("fsync", &path))?;
        }

        let journal = Journal {
            dir: dir.to_path_buf(),
            path,
            file,
            len: commands.len() as u64,
            size: valid_len as u64,
            unusable: false,
        };
        Ok((journal, commands))
    }

    /// Appends one record and fsyncs it before returning: after `Ok` the record survives a crash; returns its 1-based sequence number.
    pub fn append(&mut self, command: &str) -> Result<u64, JournalError> {
        if self.unusable {
            return Err(JournalError::Unusable);
        }
        check_command(command)?;
        let seq = self.len + 1;
        let line = encode(seq, command)?;

        let written = self
            .file
            .write_all(line.as_bytes())
            .map_err(io_err("append to", &self.path))
            .and_then(|()| self.file.sync_data().map_err(io_err("fsync", &self.path)));
        if let Err(err) = written {
            // Cut back any partial line so a later reopen does not find a corrupt middle.
            // Refuse further appends anyway: after a failed fsync the kernel may already
            // have dropped the dirty pages, so only a reopen (which reads what the file
            // really holds) gives a state we can trust again.
            self.unusable = true;
            if let Err(cut) = self.file.set_len(self.size) {
                log::error!(
                    "{}: cannot cut back a failed append: {cut}",
                    self.path.display()
                );
            }
            return Err(err);
        }

        self.len = seq;
        self.size += line.len() as u64;
        Ok(seq)
    }

    /// Number of records of the unfinished game.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the unfinished game has no records.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Replaces all records at once (to start a new game with its setup commands), atomically: the old records or the new, never a mix.
    pub fn reset(&mut self, commands: &[String]) -> Result<(), JournalError> {
        // Validate everything before touching the disk, so a bad command changes nothing.
        let mut content = String::new();
        for (i, command) in commands.iter().enumerate() {
            check_command(command)?;
            content.push_str(&encode(i as u64 + 1, command)?);
        }

        let tmp = self.dir.join(JOURNAL_TMP_NAME);
        // A failure up to and including the rename leaves the old journal in place and
        // our handle on it valid, so the journal stays usable.
        let file = write_durably(&tmp, content.as_bytes())?;
        fs::rename(&tmp, &self.path).map_err(io_err("rename", &tmp))?;

        // The handle on the temp file now is the journal (same inode); the old handle
        // points at the replaced, unlinked file and must not be written to again.
        self.file = file;
        self.len = commands.len() as u64;
        self.size = content.len() as u64;
        self.unusable = false;

        // Until the directory is synced a crash may bring the old journal back, and records
        // appended to the new one would vanish with it: refuse appends if this fails.
        if let Err(err) = sync_dir(&self.dir) {
            self.unusable = true;
            return Err(err);
        }
        Ok(())
    }

    /// Archives a game durably as `<dir>/games/<name>.sgf` (sanitised name, numeric suffix instead of overwriting); returns the archive's path. The journal is left as it is: the caller replaces it with the next game once the SGF is safe.
    pub fn archive(&mut self, name: &str, sgf: &str) -> Result<PathBuf, JournalError> {
        let games = self.dir.join(GAMES_DIR);
        if !games.is_dir() {
            fs::create_dir_all(&games).map_err(io_err("create directory", &games))?;
            sync_dir(&self.dir)?;
        }
        write_archive(&games, name, sgf)
    }

    /// Archives a game as `<dir>/<name>.sgf`, beside the journal: the place of last resort
    /// when `games/` cannot be written (the journal's own directory is writable, or no
    /// record could be acknowledged at all).
    pub fn archive_beside(&mut self, name: &str, sgf: &str) -> Result<PathBuf, JournalError> {
        write_archive(&self.dir, name, sgf)
    }

    /// Like [`Journal::open`], but a journal damaged before its last line does not stop
    /// the daemon for good: the file is kept aside as `journal.jsonl.corrupt-<n>`, the
    /// valid records before the damage become the journal, and what happened is returned.
    pub fn open_or_recover(dir: &Path) -> Result<Opened, JournalError> {
        match Journal::open(dir) {
            Ok((journal, records)) => Ok(Opened {
                journal,
                records,
                quarantined: None,
            }),
            Err(JournalError::Corrupt { line, reason }) => {
                let path = dir.join(JOURNAL_NAME);
                let bytes = fs::read(&path).map_err(io_err("read", &path))?;
                let (records, _) = parse_prefix(&bytes);
                let aside = free_path(dir, &format!("{JOURNAL_NAME}.corrupt"), "")?;
                // Copied, not renamed: until the new journal is in place, the old one
                // stays where a restart would look for it.
                write_durably(&aside, &bytes)?;
                sync_dir(dir)?;
                let content = records
                    .iter()
                    .enumerate()
                    .map(|(i, c)| encode(i as u64 + 1, c))
                    .collect::<Result<String, _>>()?;
                let tmp = dir.join(JOURNAL_TMP_NAME);
                write_durably(&tmp, content.as_bytes())?;
                fs::rename(&tmp, &path).map_err(io_err("rename", &tmp))?;
                sync_dir(dir)?;
                let (journal, records) = Journal::open(dir)?;
                Ok(Opened {
                    journal,
                    records,
                    quarantined: Some(Quarantined {
                        line,
                        reason,
                        kept_as: aside,
                    }),
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// The records a journal holds, read without writing anything (its damaged or torn
/// lines left out): what a daemon shows when the journal cannot be opened for writing,
/// e.g. on a full disk. Empty when there is no readable journal.
pub fn read_only(dir: &Path) -> Vec<String> {
    let path = dir.join(JOURNAL_NAME);
    if refuse_non_regular(&path).is_err() {
        return Vec::new();
    }
    match fs::read(&path) {
        Ok(bytes) => parse_prefix(&bytes).0,
        Err(_) => Vec::new(),
    }
}

/// An error when something other than a regular file (or nothing) is at `path`.
pub fn refuse_non_regular(path: &Path) -> Result<(), JournalError> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(JournalError::NotRegular(path.to_path_buf())),
        _ => Ok(()),
    }
}

/// A journal opened by [`Journal::open_or_recover`].
#[derive(Debug)]
pub struct Opened {
    /// The journal, ready for appends.
    pub journal: Journal,
    /// The records of the unfinished game, in order.
    pub records: Vec<String>,
    /// Set when a damaged journal was kept aside and only its valid prefix resumed.
    pub quarantined: Option<Quarantined>,
}

/// A damaged journal kept aside.
#[derive(Debug, Clone, PartialEq)]
pub struct Quarantined {
    /// The first damaged line (1-based).
    pub line: u64,
    /// What was wrong with it.
    pub reason: String,
    /// Where the whole damaged file was kept.
    pub kept_as: PathBuf,
}

/// Creates `dir` and its missing ancestors, making each new entry durable in its parent:
/// a power cut must not take away a state directory whose records were acknowledged.
pub fn ensure_dir(dir: &Path) -> Result<(), JournalError> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        ensure_dir(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => {}
        // Made meanwhile by someone else: still fsync the parent below.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
        Err(e) => return Err(io_err("create directory", dir)(e)),
    }
    match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => sync_dir(parent),
        None => Ok(()),
    }
}

/// Writes `sgf` durably as `<folder>/<name>.sgf`, never over an existing file.
fn write_archive(folder: &Path, name: &str, sgf: &str) -> Result<PathBuf, JournalError> {
    let tmp = folder.join(ARCHIVE_TMP_NAME);
    write_durably(&tmp, sgf.as_bytes())?;
    // Checking for a free name and then renaming is not atomic, but only one daemon
    // owns a state directory, so nothing else creates archives behind our back.
    let target = free_path(folder, &sanitise_name(name), ".sgf")?;
    fs::rename(&tmp, &target).map_err(io_err("rename", &tmp))?;
    sync_dir(folder)?;
    Ok(target)
}

/// Replaces the whole of `path` with `data` durably: written beside it as `<name>.tmp`,
/// fsynced, renamed over it and the directory synced, so a crash leaves the old content or
/// the new, never a mix.
pub fn replace_durably(path: &Path, data: &[u8]) -> Result<(), JournalError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    write_durably(&tmp, data)?;
    fs::rename(&tmp, path).map_err(io_err("rename", &tmp))?;
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => Ok(()),
    }
}

/// Refuses what could break line framing on replay or is clearly not a GTP command.
fn check_command(command: &str) -> Result<(), JournalError> {
    if command.len() > MAX_COMMAND_BYTES {
        return Err(JournalError::TooLong { len: command.len() });
    }
    if command.contains(['\n', '\r']) {
        return Err(JournalError::LineBreak);
    }
    Ok(())
}

/// One record as a complete line, newline included, so it is written with one call.
fn encode(seq: u64, cmd: &str) -> Result<String, JournalError> {
    let mut line = serde_json::to_string(&RecordOut { seq, cmd })?;
    line.push('\n');
    Ok(line)
}

/// The commands in `bytes` and the length of the prefix holding them; what follows that
/// prefix is a torn last line to be dropped.
fn parse(bytes: &[u8]) -> Result<(Vec<String>, usize), JournalError> {
    let mut commands = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let line_no = commands.len() as u64 + 1;
        let Some(newline) = bytes[start..].iter().position(|&b| b == b'\n') else {
            // No newline: the write of the last record was cut short.
            break;
        };
        let end = start + newline + 1;
        match decode(&bytes[start..end - 1], line_no) {
            Ok(command) => commands.push(command),
            // Only the very last line can be torn by a crash.
            Err(LineError::Unreadable(_)) if end == bytes.len() => break,
            Err(LineError::Unreadable(reason) | LineError::Invalid(reason)) => {
                return Err(JournalError::Corrupt {
                    line: line_no,
                    reason,
                });
            }
        }
        start = end;
    }
    Ok((commands, start))
}

/// The records before the first line that does not decode, and that line's start.
fn parse_prefix(bytes: &[u8]) -> (Vec<String>, usize) {
    let mut commands = Vec::new();
    let mut start = 0;
    while let Some(newline) = bytes[start..].iter().position(|&b| b == b'\n') {
        let end = start + newline + 1;
        match decode(&bytes[start..end - 1], commands.len() as u64 + 1) {
            Ok(command) => commands.push(command),
            Err(_) => break,
        }
        start = end;
    }
    (commands, start)
}

/// Decodes line `expected_seq` (records are numbered like the lines that hold them).
fn decode(line: &[u8], expected_seq: u64) -> Result<String, LineError> {
    let text = std::str::from_utf8(line)
        .map_err(|err| LineError::Unreadable(format!("not UTF-8: {err}")))?;
    let record: RecordIn = serde_json::from_str(text)
        .map_err(|err| LineError::Unreadable(format!("not a journal record: {err}")))?;
    if record.seq != expected_seq {
        return Err(LineError::Invalid(format!(
            "sequence number {} where {expected_seq} was expected",
            record.seq
        )));
    }
    // `append` never writes such a command, so one here was not written by us.
    check_command(&record.cmd).map_err(|err| LineError::Invalid(err.to_string()))?;
    Ok(record.cmd)
}

/// Writes `data` as the whole content of `path` and fsyncs it; returns the handle, in append mode.
fn write_durably(path: &Path, data: &[u8]) -> Result<File, JournalError> {
    refuse_non_regular(path)?;
    let mut file = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(io_err("create", path))?;
    // A leftover from an interrupted earlier attempt is emptied first (append mode cannot
    // be combined with truncate-on-open).
    let written = file
        .set_len(0)
        .map_err(io_err("truncate", path))
        .and_then(|()| file.write_all(data).map_err(io_err("write", path)))
        .and_then(|()| file.sync_all().map_err(io_err("fsync", path)));
    if let Err(e) = written {
        // A half-written temporary file only takes space a full disk lacks.
        drop(file);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(file)
}

/// Removes the temporary files an interrupted write left in `dir` (`*.tmp`: never a
/// journal, archive or state file, which only take their names by a rename once whole).
pub fn remove_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if regular && path.extension().is_some_and(|e| e == "tmp") {
            match fs::remove_file(&path) {
                Ok(()) => log::info!("removed {} left by an interrupted write", path.display()),
                Err(e) => log::warn!("cannot remove {}: {e}", path.display()),
            }
        }
    }
}

/// Makes entries created, renamed or removed in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), JournalError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err("fsync directory", dir))
}

/// `name` reduced to `[A-Za-z0-9._-]` (others become `_`), so it can never leave the games directory.
fn sanitise_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .take(MAX_NAME_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        "game".to_string()
    } else {
        clean
    }
}

/// `<folder>/<base><ext>`, or `<base>-2<ext>`, `<base>-3<ext>`… if taken.
fn free_path(folder: &Path, base: &str, ext: &str) -> Result<PathBuf, JournalError> {
    let mut candidate = folder.join(format!("{base}{ext}"));
    let mut n: u64 = 1;
    loop {
        // `symlink_metadata`, so even a dangling symlink counts as taken and is not replaced.
        match fs::symlink_metadata(&candidate) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(candidate),
            Err(err) => return Err(io_err("inspect", &candidate)(err)),
            Ok(_) => {
                n += 1;
                candidate = folder.join(format!("{base}-{n}{ext}"));
            }
        }
    }
}

/// Wraps an io error with what was being done and to which path.
fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> JournalError + 'a {
    move |source| JournalError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal_path(dir: &Path) -> PathBuf {
        dir.join(JOURNAL_NAME)
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn open_creates_missing_directories_and_an_empty_journal() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("state");
        let (journal, commands) = Journal::open(&dir).unwrap();
        assert!(commands.is_empty());
        assert!(journal.is_empty());
        assert_eq!(journal.len(), 0);
        assert!(journal_path(&dir).is_file());
    }

    #[test]
    fn append_and_reopen_round_trip_keeps_order_and_seq() {
        let tmp = tempfile::tempdir().unwrap();
        let cmds = [
            "boardsize 9",
            "komi 7",
            "kata-set-rules chinese",
            "play B D4",
            "undo",
        ];
        {
            let (mut journal, _) = Journal::open(tmp.path()).unwrap();
            for (i, cmd) in cmds.iter().enumerate() {
                assert_eq!(journal.append(cmd).unwrap(), i as u64 + 1);
            }
            assert_eq!(journal.len(), 5);
        }
        let (mut journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&cmds));
        assert_eq!(journal.len(), 5);
        assert_eq!(journal.append("tengen-engine-color white").unwrap(), 6);

        let text = fs::read_to_string(journal_path(tmp.path())).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(first, r#"{"seq":1,"cmd":"boardsize 9"}"#);
        assert_eq!(text.lines().count(), 6);
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn torn_tail_is_dropped_and_appends_continue_cleanly() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let (mut journal, _) = Journal::open(tmp.path()).unwrap();
            journal.append("boardsize 9").unwrap();
            journal.append("play B D4").unwrap();
        }
        let path = journal_path(tmp.path());
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"seq":3,"cm"#).unwrap();
        drop(file);

        let (mut journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&["boardsize 9", "play B D4"]));
        assert_eq!(journal.append("play W E5").unwrap(), 3);

        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"seq":1,"cmd":"boardsize 9"}"#,
                "\n",
                r#"{"seq":2,"cmd":"play B D4"}"#,
                "\n",
                r#"{"seq":3,"cmd":"play W E5"}"#,
                "\n"
            )
        );
        let (_, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(
            commands,
            strings(&["boardsize 9", "play B D4", "play W E5"])
        );
    }

    #[test]
    fn last_line_without_newline_or_unreadable_is_dropped() {
        for tail in [
            &br#"{"seq":2,"cmd":"play B D4"}"#[..], // whole record, newline missing
            b"\0\0\0\0\0\0",                        // zero-filled block after power loss
            b"{\"seq\":2,\"cmd\":\"pl\n",           // garbage that happens to end in '\n'
            b"{\"seq\":2,\"cmd\":\"\xff\"}\n",      // not UTF-8
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let path = journal_path(tmp.path());
            let mut content = b"{\"seq\":1,\"cmd\":\"boardsize 9\"}\n".to_vec();
            let clean_len = content.len() as u64;
            content.extend_from_slice(tail);
            fs::write(&path, &content).unwrap();

            let (journal, commands) = Journal::open(tmp.path()).unwrap();
            assert_eq!(commands, strings(&["boardsize 9"]), "tail {tail:?}");
            assert_eq!(journal.len(), 1);
            assert_eq!(fs::metadata(&path).unwrap().len(), clean_len);
        }
    }

    #[test]
    fn corrupt_middle_line_is_an_error_with_its_line_number() {
        let tmp = tempfile::tempdir().unwrap();
        let path = journal_path(tmp.path());
        let content = concat!(
            r#"{"seq":1,"cmd":"boardsize 9"}"#,
            "\n",
            r#"{"seq":2,"cm"#,
            "\n",
            r#"{"seq":3,"cmd":"play B D4"}"#,
            "\n"
        );
        fs::write(&path, content).unwrap();
        match Journal::open(tmp.path()) {
            Err(JournalError::Corrupt { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected Corrupt, got {other:?}"),
        }
        // Nothing was cut away: the records after the damage are still there to recover.
        assert_eq!(fs::read_to_string(&path).unwrap(), content);
    }

    #[test]
    fn sequence_gaps_and_repeats_are_corrupt_even_on_the_last_line() {
        for (content, bad_line) in [
            ("{\"seq\":1,\"cmd\":\"a\"}\n{\"seq\":3,\"cmd\":\"b\"}\n", 2),
            (
                "{\"seq\":1,\"cmd\":\"a\"}\n{\"seq\":1,\"cmd\":\"b\"}\n{\"seq\":2,\"cmd\":\"c\"}\n",
                2,
            ),
            ("{\"seq\":0,\"cmd\":\"a\"}\n", 1),
            // Valid JSON but a command `append` would have refused.
            ("{\"seq\":1,\"cmd\":\"a\\nb\"}\n", 1),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            fs::write(journal_path(tmp.path()), content).unwrap();
            match Journal::open(tmp.path()) {
                Err(JournalError::Corrupt { line, .. }) => assert_eq!(line, bad_line),
                other => panic!("expected Corrupt for {content:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn awkward_commands_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let cmds = [
            r#"tengen-name "quoted" \ back\slash"#,
            "unicode 天元 ☗ é",
            "tab\there",
            r#"{"seq":99,"cmd":"looks like a record"}"#,
            "",
        ];
        {
            let (mut journal, _) = Journal::open(tmp.path()).unwrap();
            for cmd in cmds {
                journal.append(cmd).unwrap();
            }
        }
        let (journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&cmds));
        assert_eq!(journal.len(), cmds.len() as u64);
        let text = fs::read_to_string(journal_path(tmp.path())).unwrap();
        assert_eq!(text.lines().count(), cmds.len());
    }

    #[test]
    fn line_breaks_and_oversized_commands_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        journal.append("boardsize 9").unwrap();
        assert!(matches!(
            journal.append("play B D4\nplay W E5"),
            Err(JournalError::LineBreak)
        ));
        assert!(matches!(
            journal.append("play B D4\r"),
            Err(JournalError::LineBreak)
        ));
        let long = "x".repeat(MAX_COMMAND_BYTES + 1);
        assert!(matches!(
            journal.append(&long),
            Err(JournalError::TooLong { len }) if len == MAX_COMMAND_BYTES + 1
        ));
        // Refusals change nothing and leave the journal usable.
        assert_eq!(journal.len(), 1);
        assert_eq!(journal.append(&"y".repeat(MAX_COMMAND_BYTES)).unwrap(), 2);
        let (_, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands.len(), 2);
        assert_eq!(commands[0], "boardsize 9");
    }

    #[test]
    fn reset_replaces_all_records() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        for cmd in ["boardsize 19", "play B Q16", "play W D4"] {
            journal.append(cmd).unwrap();
        }
        let setup = strings(&["boardsize 9", "komi 7"]);
        journal.reset(&setup).unwrap();
        assert_eq!(journal.len(), 2);
        // Appends after a reset go to the new file, continuing its numbering.
        assert_eq!(journal.append("play B E5").unwrap(), 3);
        assert!(!tmp.path().join(JOURNAL_TMP_NAME).exists());

        let (mut journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&["boardsize 9", "komi 7", "play B E5"]));

        journal.reset(&[]).unwrap();
        assert!(journal.is_empty());
        let (_, commands) = Journal::open(tmp.path()).unwrap();
        assert!(commands.is_empty());
    }

    #[test]
    fn reset_with_a_bad_command_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        journal.append("boardsize 9").unwrap();
        let bad = strings(&["boardsize 13", "komi\n7"]);
        assert!(matches!(journal.reset(&bad), Err(JournalError::LineBreak)));
        assert_eq!(journal.len(), 1);
        assert_eq!(journal.append("play B D4").unwrap(), 2);
        let (_, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&["boardsize 9", "play B D4"]));
    }

    #[test]
    fn archive_writes_sgf_keeps_the_journal_and_never_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let games = tmp.path().join(GAMES_DIR);
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        journal.append("boardsize 9").unwrap();
        journal.append("play B D4").unwrap();

        let first_sgf = "(;GM[1]SZ[9];B[dd])";
        let first = journal.archive("2024-05-01_game", first_sgf).unwrap();
        assert_eq!(first, games.join("2024-05-01_game.sgf"));
        assert_eq!(fs::read_to_string(&first).unwrap(), first_sgf);
        // The game stays in the journal until the caller starts the next one.
        assert_eq!(journal.len(), 2);
        assert!(!games.join(ARCHIVE_TMP_NAME).exists());
        let (mut journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(commands, strings(&["boardsize 9", "play B D4"]));

        journal.append("boardsize 9").unwrap();
        let second = journal.archive("2024-05-01_game", "(;GM[1]SZ[9])").unwrap();
        assert_eq!(second, games.join("2024-05-01_game-2.sgf"));
        let third = journal.archive("2024-05-01_game", "(;GM[1])").unwrap();
        assert_eq!(third, games.join("2024-05-01_game-3.sgf"));
        assert_eq!(fs::read_to_string(&first).unwrap(), first_sgf);
        assert_eq!(fs::read_to_string(&second).unwrap(), "(;GM[1]SZ[9])");
        assert_eq!(fs::read_dir(&games).unwrap().count(), 3);
    }

    #[test]
    fn archive_names_are_sanitised_into_the_games_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let games = tmp.path().join(GAMES_DIR);
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        for (name, file) in [
            ("../x", ".._x.sgf"),
            ("/etc/passwd", "_etc_passwd.sgf"),
            ("a b/c\\d:é", "a_b_c_d__.sgf"),
            ("", "game.sgf"),
            ("ok.Name_1-2", "ok.Name_1-2.sgf"),
        ] {
            let path = journal.archive(name, "(;GM[1])").unwrap();
            assert_eq!(path, games.join(file), "name {name:?}");
            assert_eq!(path.parent().unwrap(), games);
            assert!(path.is_file());
        }
        assert!(!tmp.path().join("x.sgf").exists());
        let long = journal.archive(&"n".repeat(1000), "(;GM[1])").unwrap();
        let file_name = long.file_name().unwrap().to_str().unwrap();
        assert_eq!(file_name.len(), MAX_NAME_CHARS + ".sgf".len());
    }

    #[test]
    fn a_corrupt_middle_line_is_kept_aside_and_the_valid_prefix_resumes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = journal_path(tmp.path());
        let content = concat!(
            r#"{"seq":1,"cmd":"boardsize 9"}"#,
            "\n",
            r#"{"seq":2,"cmd":"play B D4"}"#,
            "\n",
            "garbage\n",
            r#"{"seq":4,"cmd":"play B E5"}"#,
            "\n"
        );
        fs::write(&path, content).unwrap();
        let opened = Journal::open_or_recover(tmp.path()).unwrap();
        assert_eq!(opened.records, strings(&["boardsize 9", "play B D4"]));
        let q = opened.quarantined.expect("the damage is reported");
        assert_eq!(q.line, 3);
        assert_eq!(q.kept_as, tmp.path().join("journal.jsonl.corrupt"));
        assert_eq!(fs::read_to_string(&q.kept_as).unwrap(), content);
        let mut journal = opened.journal;
        assert_eq!(journal.append("play W C3").unwrap(), 3);
        // A second damage is kept beside the first, not over it.
        fs::write(&path, content).unwrap();
        let again = Journal::open_or_recover(tmp.path()).unwrap();
        let q2 = again.quarantined.unwrap();
        assert_eq!(q2.kept_as, tmp.path().join("journal.jsonl.corrupt-2"));
        // A sound journal opens as it is.
        let sound = Journal::open_or_recover(tmp.path()).unwrap();
        assert!(sound.quarantined.is_none());
        assert_eq!(sound.records.len(), 2);
    }

    #[test]
    fn archives_go_beside_the_journal_when_games_cannot_be_written() {
        let tmp = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(tmp.path()).unwrap();
        // A plain file where the games directory should be.
        fs::write(tmp.path().join(GAMES_DIR), "x").unwrap();
        assert!(journal.archive("g", "(;GM[1])").is_err());
        let path = journal.archive_beside("g", "(;GM[1])").unwrap();
        assert_eq!(path, tmp.path().join("g.sgf"));
        assert_eq!(fs::read_to_string(path).unwrap(), "(;GM[1])");
    }

    #[test]
    fn ensure_dir_makes_every_missing_level() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a").join("b").join("c");
        ensure_dir(&deep).unwrap();
        assert!(deep.is_dir());
        ensure_dir(&deep).unwrap();
        let file = tmp.path().join("f");
        fs::write(&file, "").unwrap();
        assert!(ensure_dir(&file.join("x")).is_err());
    }

    #[test]
    fn a_thousand_records_survive_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let cmds: Vec<String> = (0..1000).map(|i| format!("play B {i}")).collect();
        {
            let (mut journal, _) = Journal::open(tmp.path()).unwrap();
            for (i, cmd) in cmds.iter().enumerate() {
                assert_eq!(journal.append(cmd).unwrap(), i as u64 + 1);
            }
        }
        let (journal, commands) = Journal::open(tmp.path()).unwrap();
        assert_eq!(journal.len(), 1000);
        assert_eq!(commands, cmds);
    }

    #[test]
    fn io_errors_name_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let not_a_dir = tmp.path().join("plain-file");
        fs::write(&not_a_dir, "x").unwrap();
        let err = Journal::open(&not_a_dir).unwrap_err();
        assert!(matches!(err, JournalError::Io { .. }), "{err:?}");
        assert!(
            err.to_string().contains(&not_a_dir.display().to_string()),
            "{err}"
        );
    }
}
