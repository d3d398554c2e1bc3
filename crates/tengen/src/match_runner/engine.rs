//! One GTP engine process of a match: started through `sh -c` in its own process group,
//! spoken to line by line with a deadline on every reply, killed when it hangs.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Cap on the reply time of commands other than `genmove` and `kgs-genmove_cleanup`.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// Floor on the reply time of an engine's first command, which waits for its start-up.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(300);
/// How long an engine has to exit after `quit` before it is killed.
const QUIT_GRACE: Duration = Duration::from_secs(2);

/// Why an engine did not answer a command with `=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fault {
    /// The process died or closed its output (the text says how we noticed).
    Crashed(String),
    /// No complete reply in time; the process has been killed.
    TimedOut(Duration),
    /// A `?` reply, with its text.
    Refused(String),
    /// Something that is not a GTP reply.
    Garbled(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Crashed(how) => write!(f, "crashed ({how})"),
            Fault::TimedOut(d) => write!(f, "did not answer within {:.1} s", d.as_secs_f64()),
            Fault::Refused(why) => write!(f, "refused: {why}"),
            Fault::Garbled(reply) => {
                write!(f, "answered with something that is not GTP: {reply:?}")
            }
        }
    }
}

impl std::error::Error for Fault {}

/// One engine process.
pub(super) struct Engine {
    child: Child,
    /// None once closed in `drop`.
    input: Option<ChildStdin>,
    /// Lines of the engine's stdout, from a reader thread, so a reply can have a deadline.
    lines: Receiver<String>,
    pub(super) name: String,
    /// Reply time for `genmove`.
    move_timeout: Duration,
    /// Set once the engine crashed or was killed: every later command fails at once.
    dead: bool,
    /// Time spent answering move requests, and how many: an equal-time match shows
    /// whether both engines really used the same time.
    pub(super) thinking: Thinking,
}

/// Time an engine spent on its moves.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Thinking {
    /// Total time answering move requests.
    pub(super) time: Duration,
    /// Move requests answered.
    pub(super) moves: u32,
}

impl Thinking {
    /// Adds another record.
    pub(super) fn add(&mut self, other: Thinking) {
        self.time += other.time;
        self.moves += other.moves;
    }
}

impl Engine {
    pub(super) fn start(cmd: &str, move_timeout: Duration) -> Result<Engine> {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Its own process group, so `kill` reaches what a wrapper script started too.
        // Ctrl-C then reaches only us; engines see their input close and quit.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {cmd:?}"))?;
        let input = child.stdin.take().context("engine stdin")?;
        let output = child.stdout.take().context("engine stdout")?;
        let (tx, lines) = mpsc::channel();
        // Detached: it ends when the engine's output closes or, after the next line, when
        // the engine is dropped. A killed engine's orphaned children may keep the pipe open;
        // then this thread waits for them, which costs nothing but a parked thread.
        std::thread::Builder::new()
            .name("engine-stdout".into())
            .spawn(move || {
                let mut output = BufReader::new(output);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match output.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        // Lossy: bad bytes make a garbled reply, not a dead engine.
                        Ok(_) => {
                            if tx.send(String::from_utf8_lossy(&buf).into_owned()).is_err() {
                                break;
                            }
                        }
                    }
                }
            })
            .context("starting the engine's reader thread")?;
        let mut e = Engine {
            child,
            input: Some(input),
            lines,
            name: cmd.to_string(),
            move_timeout,
            dead: false,
            thinking: Thinking::default(),
        };
        match e.send_within("name", move_timeout.max(STARTUP_TIMEOUT)) {
            Ok(n) if !n.is_empty() => e.name = n,
            Ok(_) | Err(Fault::Refused(_) | Fault::Garbled(_)) => {}
            Err(f) => bail!("{cmd:?} {f}"),
        }
        Ok(e)
    }

    /// Sends one command with the reply deadline its kind gets (see `--move-timeout`).
    pub(super) fn send(&mut self, cmd: &str) -> Result<String, Fault> {
        let limit = if cmd.starts_with("genmove") || cmd.starts_with("kgs-genmove_cleanup") {
            self.move_timeout
        } else {
            self.move_timeout.min(COMMAND_TIMEOUT)
        };
        self.send_within(cmd, limit)
    }

    /// Like `send`, with a fault naming the engine and command, for set-up.
    pub(super) fn setup(&mut self, cmd: &str) -> Result<String> {
        self.send(cmd)
            .with_context(|| format!("{}: {cmd:?}", self.name))
    }

    /// Sends one command; `Ok(text)` for `=`. An engine that does not answer within
    /// `limit` is killed: its late reply would be taken for the next command's.
    fn send_within(&mut self, cmd: &str, limit: Duration) -> Result<String, Fault> {
        if self.dead {
            return Err(Fault::Crashed("gone after an earlier fault".into()));
        }
        let Some(input) = self.input.as_mut() else {
            return Err(Fault::Crashed("input closed".into()));
        };
        if let Err(e) = writeln!(input, "{cmd}").and_then(|()| input.flush()) {
            self.dead = true;
            return Err(Fault::Crashed(format!("writing to it: {e}")));
        }
        let deadline = Instant::now() + limit;
        let mut reply = String::new();
        loop {
            let line = match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    self.dead = true;
                    self.kill();
                    return Err(Fault::TimedOut(limit));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.dead = true;
                    return Err(Fault::Crashed("closed its output".into()));
                }
            };
            if line.trim().is_empty() && !reply.is_empty() {
                break;
            }
            if !line.trim().is_empty() {
                reply.push_str(&line);
            }
        }
        let reply = reply.trim();
        match reply.chars().next() {
            Some('=') => Ok(reply[1..]
                .trim_start_matches(char::is_numeric)
                .trim()
                .to_string()),
            Some('?') => Err(Fault::Refused(
                reply[1..]
                    .trim_start_matches(char::is_numeric)
                    .trim()
                    .to_string(),
            )),
            _ => Err(Fault::Garbled(reply.to_string())),
        }
    }

    /// Kills the engine with everything it started (on Unix, its process group): a
    /// wrapper script's engine would otherwise live on, still thinking, beside later games.
    /// Only called before the child is reaped, so its pid still names its group.
    fn kill(&mut self) {
        #[cfg(unix)]
        {
            let _ = Command::new("sh")
                .arg("-c")
                .arg("kill -s KILL -- \"-$1\"")
                .arg("sh")
                .arg(self.child.id().to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
    }
}

impl Drop for Engine {
    /// Asks the engine to quit, then kills it if it has not exited within `QUIT_GRACE`:
    /// dropping never hangs on a stuck engine.
    fn drop(&mut self) {
        if let Some(mut input) = self.input.take() {
            if !self.dead {
                let _ = writeln!(input, "quit");
                let _ = input.flush();
            }
            // Dropping `input` closes stdin: an engine waiting for a command sees its end.
        }
        let deadline = Instant::now() + QUIT_GRACE;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => break,
            }
        }
        self.kill();
        let _ = self.child.wait();
    }
}
