//! Where the log goes: standard error, and with a KataGo config's `logFile` or `logDir`
//! a file too (or only the file, with `logToStderr = false`). `RUST_LOG` filters it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::katago_keys::LogSettings;

fn builder() -> env_logger::Builder {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
}

/// Logs to standard error.
pub fn init_stderr() {
    builder().init();
}

/// Logs as `s` says; a dated file in `s.dir` is named after `tool`. Returns the log file.
pub fn init(s: &LogSettings, tool: &str) -> Result<Option<PathBuf>> {
    let path = match (&s.file, &s.dir) {
        (Some(file), _) => Some(file.clone()),
        (None, Some(dir)) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the log directory {}", dir.display()))?;
            let name = format!("tengen-{tool}-{}-{}.log", utc_stamp(), std::process::id());
            Some(dir.join(name))
        }
        (None, None) => None,
    };
    let file = match &path {
        Some(p) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("opening the log file {}", p.display()))?,
        ),
        None => None,
    };
    if file.is_none() && s.to_stderr {
        init_stderr();
    } else {
        let tee = Tee {
            file,
            stderr: s.to_stderr,
        };
        builder()
            .target(env_logger::Target::Pipe(Box::new(tee)))
            .init();
    }
    Ok(path)
}

/// Writes the log to a file and, if asked, to standard error. A failed write to the file
/// loses that line, never the engine.
struct Tee {
    file: Option<File>,
    stderr: bool,
}

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(f) = &mut self.file {
            let _ = f.write_all(buf);
        }
        if self.stderr {
            let _ = std::io::stderr().write_all(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(f) = &mut self.file {
            let _ = f.flush();
        }
        Ok(())
    }
}

/// Longest part of a line kept for the log; the rest of a longer line is left out.
const MAX_LOGGED_LINE: usize = 64 << 10;

/// A reader or writer that, when enabled, logs each non-empty line passing through it
/// (KataGo's `logAllGTPCommunication`, `logAllRequests`, `logAllResponses`).
pub struct Logged<T> {
    inner: T,
    label: &'static str,
    enabled: bool,
    partial: Vec<u8>,
}

impl<T> Logged<T> {
    /// `inner`, its lines logged after `label` if `enabled`.
    pub fn new(inner: T, label: &'static str, enabled: bool) -> Logged<T> {
        Logged {
            inner,
            label,
            enabled,
            partial: Vec::new(),
        }
    }

    fn see(&mut self, bytes: &[u8]) {
        if !self.enabled {
            return;
        }
        for &b in bytes {
            if b == b'\n' {
                let line = String::from_utf8_lossy(&self.partial);
                let line = line.trim_end_matches('\r');
                if !line.is_empty() {
                    log::info!("{} {line}", self.label);
                }
                self.partial.clear();
            } else if self.partial.len() < MAX_LOGGED_LINE {
                self.partial.push(b);
            }
        }
    }
}

impl<R: Read> Read for Logged<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.see(&buf[..n]);
        Ok(n)
    }
}

impl<W: Write> Write for Logged<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.see(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The time now in UTC as `YYYYMMDD-HHMMSS`, for log file names.
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_781), (2026, 11, 24));
        assert_eq!(utc_stamp().len(), "YYYYMMDD-HHMMSS".len());
    }
}
