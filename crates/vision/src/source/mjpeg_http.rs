//! MJPEG over HTTP (`multipart/x-mixed-replace`), as IP cameras and phone webcam apps send
//! it: a small parser over `std::net::TcpStream` with a deadline on every frame, so a
//! stalled or trickling stream is an error within the stall timeout, never a hang.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::{Grabber, SourceError};
use crate::frame::{Frame, FrameError, FrameLimits};

/// Longest header line, and most header lines, taken from a server.
const MAX_LINE: usize = 8 * 1024;
const MAX_HEADERS: usize = 64;
/// Largest JPEG part taken (a 4K frame at high quality is a few MB).
const MAX_PART: usize = 16 * 1024 * 1024;

/// An `http://host[:port]/path` URL, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Url {
    host: String,
    port: u16,
    path: String,
}

fn parse_url(url: &str) -> Option<Url> {
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    // Credentials in the URL are not supported: say so rather than send them in clear.
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, tail) = v6.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if tail.is_empty() => 80,
            None => return None,
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), 80),
        }
    };
    if host.is_empty() || path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    Some(Url {
        host,
        port,
        path: path.to_string(),
    })
}

/// An open stream: the socket, bytes read but not yet used, and the part boundary.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    /// `--` and the boundary.
    delimiter: Vec<u8>,
    /// The previous part ended at a delimiter already read (parts without a length).
    at_part: bool,
}

/// An MJPEG stream over HTTP, connected on the first grab and again after any failure.
pub struct MjpegHttp {
    url: Url,
    origin: String,
    timeout: Duration,
    conn: Option<Conn>,
    limits: FrameLimits,
}

impl MjpegHttp {
    /// A stream from `url` (`http://` only); `timeout` bounds connecting and each frame.
    pub fn new(url: &str, timeout: Duration) -> Result<MjpegHttp, SourceError> {
        let parsed = parse_url(url).ok_or_else(|| {
            SourceError::BadSpec(format!(
                "{url}: not an http://host[:port]/path URL (no credentials in the URL)"
            ))
        })?;
        Ok(MjpegHttp {
            url: parsed,
            origin: url.to_string(),
            timeout,
            conn: None,
            limits: FrameLimits::default(),
        })
    }

    /// The same stream, each frame within `limits` (a part over the byte limit is
    /// skipped unread, like one over the stream's own limit).
    pub fn with_limits(mut self, limits: FrameLimits) -> Self {
        self.limits = limits;
        self
    }

    /// A part over the byte limit, as the frame it would have been.
    fn too_big(&self, bytes: usize) -> SourceError {
        SourceError::BadFrame {
            origin: self.origin.clone(),
            source: FrameError::TooManyBytes {
                bytes: bytes as u64,
                limit: self.max_part() as u64,
            },
        }
    }

    /// The most bytes one part may have.
    fn max_part(&self) -> usize {
        usize::try_from(self.limits.bytes).map_or(MAX_PART, |b| b.min(MAX_PART))
    }

    fn disconnected(&self, reason: impl Into<String>) -> SourceError {
        SourceError::Disconnected {
            origin: self.origin.clone(),
            reason: reason.into(),
        }
    }

    fn connect(&self) -> Result<Conn, SourceError> {
        let addrs = (self.url.host.as_str(), self.url.port)
            .to_socket_addrs()
            .map_err(|e| self.disconnected(format!("cannot resolve {}: {e}", self.url.host)))?;
        let mut last = None;
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, self.timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let mut stream = stream.ok_or_else(|| {
            self.disconnected(match last {
                Some(e) => format!("cannot connect: {e}"),
                None => "no address".into(),
            })
        })?;
        let io = |e: std::io::Error| self.disconnected(format!("cannot set up the socket: {e}"));
        stream.set_read_timeout(Some(self.timeout)).map_err(io)?;
        stream.set_write_timeout(Some(self.timeout)).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        // HTTP/1.0: the server must not answer with chunked transfer encoding.
        let host = if self.url.host.contains(':') {
            format!("[{}]", self.url.host)
        } else {
            self.url.host.clone()
        };
        let request = format!(
            "GET {} HTTP/1.0\r\nHost: {host}:{}\r\nUser-Agent: tengen\r\n\
             Accept: multipart/x-mixed-replace, image/jpeg\r\n\r\n",
            self.url.path, self.url.port
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| self.disconnected(format!("cannot send the request: {e}")))?;
        let mut conn = Conn {
            stream,
            buf: Vec::new(),
            pos: 0,
            delimiter: Vec::new(),
            at_part: false,
        };
        let deadline = Instant::now() + self.timeout;
        let status = self.line(&mut conn, deadline)?;
        let status = String::from_utf8_lossy(&status).into_owned();
        let code = status.split_whitespace().nth(1).unwrap_or("");
        if !status.starts_with("HTTP/") || code != "200" {
            return Err(self.not_mjpeg(format!("the server answered {status:?}")));
        }
        let headers = self.headers(&mut conn, deadline)?;
        let ctype = header(&headers, "content-type").unwrap_or_default();
        let boundary = boundary_of(&ctype).ok_or_else(|| {
            self.not_mjpeg(format!(
                "content type {ctype:?}, not multipart/x-mixed-replace"
            ))
        })?;
        conn.delimiter = format!("--{boundary}").into_bytes();
        Ok(conn)
    }

    fn not_mjpeg(&self, reason: String) -> SourceError {
        SourceError::NotMjpeg {
            origin: self.origin.clone(),
            reason,
        }
    }

    /// Reads more bytes into the buffer; an error past the deadline, at the end of the
    /// stream, or when the socket times out.
    fn fill(&self, c: &mut Conn, deadline: Instant) -> Result<(), SourceError> {
        let now = Instant::now();
        if now >= deadline {
            return Err(self.stalled());
        }
        if c.pos > 0 && c.pos == c.buf.len() {
            c.buf.clear();
            c.pos = 0;
        } else if c.pos > 1 << 20 {
            c.buf.drain(..c.pos);
            c.pos = 0;
        }
        // Never wait past the frame's deadline, however slowly bytes trickle in.
        let left = (deadline - now).max(Duration::from_millis(1));
        let _ = c.stream.set_read_timeout(Some(left));
        let mut chunk = [0u8; 64 * 1024];
        match c.stream.read(&mut chunk) {
            Ok(0) => Err(self.disconnected("the server closed the stream")),
            Ok(n) => {
                c.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(self.stalled())
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(self.disconnected(format!("read failed: {e}"))),
        }
    }

    fn stalled(&self) -> SourceError {
        SourceError::Stalled {
            origin: self.origin.clone(),
            after: self.timeout,
        }
    }

    /// One line without its CR LF.
    fn line(&self, c: &mut Conn, deadline: Instant) -> Result<Vec<u8>, SourceError> {
        loop {
            if let Some(i) = c.buf[c.pos..].iter().position(|&b| b == b'\n') {
                let mut line = c.buf[c.pos..c.pos + i].to_vec();
                c.pos += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if c.buf.len() - c.pos > MAX_LINE {
                return Err(self.not_mjpeg("a header line is too long".into()));
            }
            self.fill(c, deadline)?;
        }
    }

    /// Header lines up to the blank line, as (lower-case name, value).
    fn headers(
        &self,
        c: &mut Conn,
        deadline: Instant,
    ) -> Result<Vec<(String, String)>, SourceError> {
        let mut out = Vec::new();
        loop {
            let line = self.line(c, deadline)?;
            if line.is_empty() {
                return Ok(out);
            }
            if out.len() >= MAX_HEADERS {
                return Err(self.not_mjpeg("too many header lines".into()));
            }
            let text = String::from_utf8_lossy(&line);
            if let Some((k, v)) = text.split_once(':') {
                out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
    }

    /// The next part's bytes.
    fn part(&self, c: &mut Conn, deadline: Instant) -> Result<Vec<u8>, SourceError> {
        if !c.at_part {
            // Skip to the delimiter line (servers may send a preamble or blank lines).
            let mut skipped = 0;
            loop {
                let line = self.line(c, deadline)?;
                if line.starts_with(&c.delimiter) {
                    break;
                }
                skipped += line.len() + 2;
                if skipped > MAX_PART {
                    return Err(self.not_mjpeg("no part boundary in the stream".into()));
                }
            }
        }
        c.at_part = false;
        let headers = self.headers(c, deadline)?;
        if let Some(len) = header(&headers, "content-length") {
            let len: usize = len
                .parse()
                .map_err(|_| self.not_mjpeg(format!("bad part length {len:?}")))?;
            if len > self.max_part() {
                // Refused before it is read; the connection is dropped with it.
                return Err(self.too_big(len));
            }
            while c.buf.len() - c.pos < len {
                self.fill(c, deadline)?;
            }
            let data = c.buf[c.pos..c.pos + len].to_vec();
            c.pos += len;
            return Ok(data);
        }
        // No length: the part runs to the next delimiter, on a line of its own.
        let mut marker = b"\r\n".to_vec();
        marker.extend_from_slice(&c.delimiter);
        let mut searched = 0;
        loop {
            let hay = &c.buf[c.pos..];
            if let Some(i) = hay[searched..]
                .windows(marker.len())
                .position(|w| w == marker.as_slice())
            {
                let end = searched + i;
                let data = hay[..end].to_vec();
                c.pos += end + 2;
                // Consume the delimiter line itself.
                self.line(c, deadline)?;
                c.at_part = true;
                return Ok(data);
            }
            if hay.len() > self.max_part() {
                return Err(self.too_big(hay.len()));
            }
            searched = hay.len().saturating_sub(marker.len());
            self.fill(c, deadline)?;
        }
    }
}

impl Grabber for MjpegHttp {
    fn grab(&mut self) -> Result<Frame, SourceError> {
        let mut conn = match self.conn.take() {
            Some(c) => c,
            None => self.connect()?,
        };
        let deadline = Instant::now() + self.timeout;
        // Any failure to read drops the connection; a bad JPEG in a whole part does not.
        let bytes = self.part(&mut conn, deadline)?;
        self.conn = Some(conn);
        Frame::decode_within(&bytes, self.limits).map_err(|source| SourceError::BadFrame {
            origin: self.origin.clone(),
            source,
        })
    }
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// The boundary of a `multipart/x-mixed-replace; boundary=…` content type, without any
/// quotes or the leading `--` some servers put in it.
fn boundary_of(ctype: &str) -> Option<String> {
    let mut parts = ctype.split(';');
    let kind = parts.next()?.trim().to_ascii_lowercase();
    if kind != "multipart/x-mixed-replace" {
        return None;
    }
    let b = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("boundary")).then(|| v.trim().trim_matches('"'))
    })?;
    let b = b.strip_prefix("--").unwrap_or(b);
    (!b.is_empty()).then(|| b.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse() {
        assert_eq!(
            parse_url("http://10.0.0.7:8080/video"),
            Some(Url {
                host: "10.0.0.7".into(),
                port: 8080,
                path: "/video".into()
            })
        );
        assert_eq!(
            parse_url("http://cam").map(|u| (u.port, u.path)),
            Some((80, "/".into()))
        );
        assert_eq!(
            parse_url("http://[::1]:81/x").map(|u| u.host),
            Some("::1".into())
        );
        for bad in [
            "https://cam/",
            "http://",
            "http://user:pw@cam/",
            "http://cam:port/",
            "http://cam/a b",
        ] {
            assert_eq!(parse_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn boundaries_parse() {
        assert_eq!(
            boundary_of("multipart/x-mixed-replace; boundary=frame").as_deref(),
            Some("frame")
        );
        assert_eq!(
            boundary_of("multipart/x-mixed-replace;boundary=\"--myboundary\"").as_deref(),
            Some("myboundary")
        );
        assert_eq!(boundary_of("image/jpeg"), None);
        assert_eq!(boundary_of("multipart/x-mixed-replace"), None);
    }
}
