//! The accept loop: HTTP/1.1 connections with bounded headers, a deadline for them, a cap
//! on open connections overall and per address, and a deadline on every write, so that
//! slow, stalled or numerous clients cannot hold memory or every viewer's place.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Sleep;

/// Open connections at most (live viewers included); further ones are closed at once.
const MAX_CONNECTIONS: usize = 128;

/// Open connections from one address at most: one machine cannot take every viewer's
/// place (a browser opens about six).
pub const MAX_PER_ADDRESS: usize = 16;

/// A request's headers must arrive within this (slow-loris clients are cut off).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A write may wait this long for a client to read; then the connection is dropped
/// (a viewer that stopped reading, once the events have filled its socket's buffer).
pub const WRITE_STALL: Duration = Duration::from_secs(10);

/// Largest read buffer, so the largest header block (hyper's minimum is 8 KiB).
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Open connections per address.
#[derive(Clone, Default)]
struct PerAddress(Arc<Mutex<HashMap<IpAddr, usize>>>);

/// One connection counted against its address until dropped.
struct Counted(PerAddress, IpAddr);

impl PerAddress {
    fn admit(&self, ip: IpAddr) -> Option<Counted> {
        let mut m = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let n = m.entry(ip).or_insert(0);
        if *n >= MAX_PER_ADDRESS {
            return None;
        }
        *n += 1;
        Some(Counted(self.clone(), ip))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut m = (self.0).0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// A stream whose writes fail once they have waited [`WRITE_STALL`] for the peer.
struct WriteDeadline<S> {
    inner: S,
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    /// `Ready` is passed on (and the clock reset); `Pending` starts or checks the clock.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_STALL)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client stopped reading",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves `app` on `listener` until the runtime stops.
pub async fn serve(listener: TcpListener, app: Router) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let per_address = PerAddress::default();
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors, mostly: wait rather than spin.
                log::warn!("web panel: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(counted) = per_address.admit(peer.ip().to_canonical()) else {
            log::debug!("web panel: {peer} refused, {MAX_PER_ADDRESS} connections from it open");
            drop(stream);
            continue;
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            log::debug!("web panel: {peer} refused, {MAX_CONNECTIONS} connections open");
            drop(stream);
            continue;
        };
        // Handlers may ask who is asking (the PIN is for the device's own screen only).
        let service = TowerToHyperService::new(
            app.clone()
                .layer(axum::Extension(axum::extract::ConnectInfo(peer))),
        );
        let io = WriteDeadline {
            inner: stream,
            stalled: None,
        };
        tokio::spawn(async move {
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES)
                .serve_connection(TokioIo::new(io), service);
            if let Err(e) = conn.await {
                log::debug!("web panel: {peer}: {e}");
            }
            drop((slot, counted));
        });
    }
}
