//! A small HTTP/1.1 client over a plain socket for the panel's tests: whole requests,
//! raw bytes (for malformed ones), and a Server-Sent Events reader on a thread.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A response: status, headers (names lower-cased) and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `raw` as is and reads the response until the server closes (status 0: the
/// server closed without answering, or before all of `raw` was taken).
pub fn raw(port: u16, raw: &[u8]) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let _ = s.write_all(raw);
    let mut r = BufReader::new(s);
    read_response(&mut r)
}

/// One request with `Connection: close`.
pub fn request(port: u16, method: &str, path: &str, token: Option<&str>, body: &str) -> Response {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{auth}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(port, req.as_bytes())
}

pub fn get(port: u16, path: &str) -> Response {
    request(port, "GET", path, None, "")
}

pub fn post(port: u16, path: &str, token: Option<&str>, body: &str) -> Response {
    request(port, "POST", path, token, body)
}

fn read_head(r: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return (0, Vec::new());
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((n, v)) = l.split_once(':') {
            headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    (status, headers)
}

fn read_response(r: &mut impl BufRead) -> Response {
    let (status, headers) = read_head(r);
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let mut body = Vec::new();
    if chunked {
        while let Some(chunk) = read_chunk(r) {
            body.extend(chunk);
        }
    } else {
        let _ = r.read_to_end(&mut body);
    }
    Response {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

/// One chunk of a chunked body; `None` at its end (or when the connection closes).
fn read_chunk(r: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let size = usize::from_str_radix(line.trim(), 16).ok()?;
    let mut chunk = vec![0; size + 2];
    r.read_exact(&mut chunk).ok()?;
    chunk.truncate(size);
    (size > 0).then_some(chunk)
}

/// One server-sent event as received.
#[derive(Clone, Debug)]
pub struct Sse {
    pub event: String,
    pub data: Value,
    pub at: Instant,
}

/// A live viewer of `/api/events`, recording every event on a thread.
pub struct Viewer {
    pub status: u16,
    pub seen: Arc<Mutex<Vec<Sse>>>,
    pub open: Arc<Mutex<bool>>,
    stream: TcpStream,
}

impl Viewer {
    pub fn connect(port: u16) -> Viewer {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(
            b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
        )
        .unwrap();
        let stream = s.try_clone().unwrap();
        let mut r = BufReader::new(s);
        let (status, _) = read_head(&mut r);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let open = Arc::new(Mutex::new(true));
        let (seen2, open2) = (seen.clone(), open.clone());
        std::thread::spawn(move || {
            let mut text = String::new();
            while let Some(chunk) = read_chunk(&mut r) {
                text.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = text.find("\n\n") {
                    let block: String = text.drain(..end + 2).collect();
                    let mut event = String::from("message");
                    let mut data = String::new();
                    for l in block.lines() {
                        if let Some(e) = l.strip_prefix("event:") {
                            event = e.trim().to_string();
                        } else if let Some(d) = l.strip_prefix("data:") {
                            data.push_str(d.strip_prefix(' ').unwrap_or(d));
                        }
                    }
                    if data.is_empty() {
                        continue; // a keep-alive comment
                    }
                    seen2.lock().unwrap().push(Sse {
                        event,
                        data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
                        at: Instant::now(),
                    });
                }
            }
            *open2.lock().unwrap() = false;
        });
        Viewer {
            status,
            seen,
            open,
            stream,
        }
    }

    pub fn count(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The first event after index `from` named `event` satisfying `ok`.
    pub fn wait(&self, from: usize, event: &str, ok: impl Fn(&Value) -> bool) -> (usize, Sse) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            {
                let seen = self.seen.lock().unwrap();
                if let Some((i, e)) = seen
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, e)| e.event == event && ok(&e.data))
                {
                    return (i, e.clone());
                }
            }
            assert!(
                Instant::now() < deadline,
                "no {event} event as expected; got {:#?}",
                self.seen
                    .lock()
                    .unwrap()
                    .iter()
                    .skip(from)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Waits until the panel answers on `port`.
pub fn wait_for(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            let r = get(port, "/api/state");
            if r.status == 200 && !r.json()["state"].is_null() {
                return;
            }
        }
        assert!(Instant::now() < deadline, "the panel did not answer");
        std::thread::sleep(Duration::from_millis(50));
    }
}
