//! The accept loop: HTTP/1.1 connections with bounded headers, a deadline for them, and
//! a cap on open connections, so that slow or numerous clients cannot hold memory.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Open connections at most (live viewers included); further ones are closed at once.
const MAX_CONNECTIONS: usize = 128;

/// A request's headers must arrive within this (slow-loris clients are cut off).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest read buffer, so the largest header block (hyper's minimum is 8 KiB).
const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Serves `app` on `listener` until the runtime stops.
pub async fn serve(listener: TcpListener, app: Router) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
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
        tokio::spawn(async move {
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES)
                .serve_connection(TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                log::debug!("web panel: {peer}: {e}");
            }
            drop(slot);
        });
    }
}
