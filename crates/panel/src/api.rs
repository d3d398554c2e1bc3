//! The routes: the page and its assets, the JSON API under `/api/`, live events, and the
//! controls. Every refusal is a JSON `{"error": "..."}` with a 4xx or 5xx status.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use tengen_device::mqtt::Inbound;
use tengen_device::payload::{decode_command, Command, MAX_PAYLOAD};
use tokio::sync::{broadcast, Semaphore};

use crate::archive::{self, ArchiveError};
use crate::assets;
use crate::hub::{Event, Hub};
use crate::pairing::{PairError, Pairing};
use crate::WebConfig;

/// Live viewers at most; more get 503 until one leaves.
const MAX_VIEWERS: usize = 64;

/// Controls waiting for the engine loop at most; more get 429.
const MAX_PENDING: usize = 16;

/// How long a control or an SGF may wait for the engine loop (a move's search included).
const ENGINE_WAIT: Duration = Duration::from_secs(60);

/// A request body must arrive within this.
const BODY_WAIT: Duration = Duration::from_secs(10);

/// What every request handler shares.
#[derive(Clone)]
pub struct Shared(Arc<Inner>);

struct Inner {
    cfg: WebConfig,
    hub: Arc<Hub>,
    inbound: SyncSender<Inbound>,
    viewers: AtomicUsize,
    pending: Semaphore,
    /// With `web.pin`: the PIN on show and the sessions paired.
    pairing: Option<Pairing>,
}

impl Shared {
    /// The handlers' shared state.
    pub fn new(
        cfg: WebConfig,
        hub: Arc<Hub>,
        inbound: SyncSender<Inbound>,
    ) -> Result<Shared, PairError> {
        let pairing = if cfg.pin { Some(Pairing::new()?) } else { None };
        Ok(Shared(Arc::new(Inner {
            cfg,
            hub,
            inbound,
            viewers: AtomicUsize::new(0),
            pending: Semaphore::new(MAX_PENDING),
            pairing,
        })))
    }
}

/// A refusal: its status and its reason, sent as JSON.
#[derive(Debug)]
struct ApiError(StatusCode, String);

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError(status, message.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response();
        if self.0 == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        r
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// What every response carries: the page loads only its own scripts, styles and data,
/// in no other site's frame, and types are never guessed.
const SECURITY_HEADERS: [(header::HeaderName, &str); 4] = [
    (
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'",
    ),
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "no-referrer"),
];

/// The host part of a `Host` header or an origin's authority: the name or address
/// without the port, lower case.
fn host_name(authority: &str) -> String {
    let a = authority.trim();
    let name = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        match a.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => a,
        }
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Whether the panel answers to `host`: an IP address, `localhost`, or a configured name.
fn host_allowed(cfg: &WebConfig, host: &str) -> bool {
    let name = host_name(host);
    name.parse::<std::net::IpAddr>().is_ok()
        || name == "localhost"
        || cfg.hosts.iter().any(|h| host_name(h) == name)
}

/// Checks what every request must pass before its route (the `Host` it names; for a
/// POST, an `Origin` of this same panel when a browser sends one) and adds the security
/// headers to every answer.
async fn guard(State(s): State<Shared>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let refused = match host {
        Some(h) if !host_allowed(&s.0.cfg, h) => Some(ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "this panel does not answer to {:?} (web.hosts)",
                host_name(h)
            ),
        )),
        _ if req.method() == axum::http::Method::POST => {
            let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
            match (origin, host) {
                // A browser's request from a page of this panel, or no browser at all.
                (None, _) => None,
                (Some(o), Some(h)) if o.split_once("://").is_some_and(|(_, a)| a == h) => None,
                (Some(o), _) => Some(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!("a request from the page {o:?} is not taken here"),
                )),
            }
        }
        _ => None,
    };
    let mut r = match refused {
        Some(e) => e.into_response(),
        None => next.run(req).await,
    };
    for (name, value) in SECURITY_HEADERS {
        r.headers_mut()
            .insert(name, header::HeaderValue::from_static(value));
    }
    r
}

/// Every route.
pub fn router(shared: Shared) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/assets/{file}", get(asset))
        .route("/api/state", get(state))
        .route("/api/analysis", get(analysis))
        .route("/api/events", get(events))
        .route("/api/games", get(games))
        .route("/api/games/{name}", get(game_sgf))
        .route("/api/sgf", get(current_sgf))
        .route("/api/command", post(command))
        .route("/api/pin", get(pin))
        .route("/api/pair", post(pair))
        .fallback(not_found)
        .method_not_allowed_fallback(not_allowed)
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard))
        .with_state(shared)
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such page")
}

async fn not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "method not allowed here")
}

async fn page() -> Response {
    asset_response("index.html").unwrap_or_else(|| not_found_now().into_response())
}

async fn asset(Path(file): Path<String>) -> Response {
    asset_response(&file).unwrap_or_else(|| not_found_now().into_response())
}

fn not_found_now() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such page")
}

fn asset_response(name: &str) -> Option<Response> {
    let a = assets::find(name)?;
    Some(
        (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            a.body,
        )
            .into_response(),
    )
}

async fn state(State(s): State<Shared>) -> Response {
    Json(s.0.hub.view()).into_response()
}

async fn analysis(State(s): State<Shared>) -> Response {
    Json(s.0.hub.view().analysis).into_response()
}

/// Counts a live viewer while it is connected.
struct Viewer(Shared);

impl Drop for Viewer {
    fn drop(&mut self) {
        self.0 .0.viewers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Server-Sent Events: the whole view first (`view`), then each event as published
/// (`state`, `analysis`, `alert`, `move`, `camera`). A viewer that falls behind is cut
/// off; its browser reconnects and gets the view again.
async fn events(
    State(s): State<Shared>,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let n = s.0.viewers.fetch_add(1, Ordering::SeqCst);
    let viewer = Viewer(s.clone());
    if n >= MAX_VIEWERS {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{MAX_VIEWERS} viewers are connected; try again later"),
        ));
    }
    let (view, rx) = s.0.hub.subscribe();
    let first = SseEvent::default()
        .event("view")
        .json_data(&view)
        .unwrap_or_else(|_| SseEvent::default().event("view").data("{}"));
    struct Feed {
        first: Option<SseEvent>,
        rx: broadcast::Receiver<Event>,
        _viewer: Viewer,
    }
    let feed = Feed {
        first: Some(first),
        rx,
        _viewer: viewer,
    };
    let stream = futures_util::stream::unfold(feed, |mut f| async move {
        if let Some(e) = f.first.take() {
            return Some((Ok::<_, Infallible>(e), f));
        }
        match f.rx.recv().await {
            Ok(ev) => {
                let e = SseEvent::default().event(ev.kind.name()).data(&*ev.data);
                Some((Ok(e), f))
            }
            // Lagged: dropped, to reconnect; closed: the daemon is stopping.
            Err(_) => None,
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}

async fn games(State(s): State<Shared>) -> ApiResult<Response> {
    let dir = s.0.cfg.games_dir.clone();
    let list = tokio::task::spawn_blocking(move || archive::list(&dir))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(Json(list).into_response())
}

async fn game_sgf(State(s): State<Shared>, Path(name): Path<String>) -> ApiResult<Response> {
    let dir = s.0.cfg.games_dir.clone();
    let n = name.clone();
    let sgf = tokio::task::spawn_blocking(move || archive::read(&dir, &n))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| {
            let status = match e {
                ArchiveError::BadName(_) => StatusCode::BAD_REQUEST,
                ArchiveError::NotFound(_) => StatusCode::NOT_FOUND,
                ArchiveError::Io(_) => StatusCode::INTERNAL_SERVER_ERROR,
            };
            ApiError::new(status, e.to_string())
        })?;
    Ok(sgf_response(sgf, &name))
}

fn sgf_response(sgf: String, name: &str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/x-go-sgf".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        sgf,
    )
        .into_response()
}

/// The game on the board as SGF, from the engine that holds it.
async fn current_sgf(State(s): State<Shared>) -> ApiResult<Response> {
    let (tx, rx) = std::sync::mpsc::channel();
    enqueue(&s, Inbound::Gtp("printsgf".into(), tx))?;
    let reply = tokio::task::spawn_blocking(move || rx.recv_timeout(ENGINE_WAIT))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the engine did not answer in time",
            )
        })?;
    match reply.strip_prefix('=') {
        Some(sgf) => Ok(sgf_response(sgf.trim().to_string(), "current.sgf")),
        None => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            reply.trim_start_matches('?').trim().to_string(),
        )),
    }
}

/// Hands `msg` to the engine loop, or says it is busy.
fn enqueue(s: &Shared, msg: Inbound) -> ApiResult<()> {
    match s.0.inbound.try_send(msg) {
        Ok(()) => Ok(()),
        Err(TrySendError::Full(_)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the engine's queue is full; try again",
        )),
        Err(TrySendError::Disconnected(_)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the daemon is stopping",
        )),
    }
}

/// Whether the request carries the configured bearer token or a paired session's.
fn authorize(s: &Shared, headers: &HeaderMap) -> ApiResult<()> {
    let token = s.0.cfg.token.as_deref();
    if token.is_none() && s.0.pairing.is_none() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "the panel is read-only: no web.token is configured",
        ));
    }
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(g) if token.is_some_and(|t| same(g.as_bytes(), t.as_bytes())) => Ok(()),
        Some(g) if s.0.pairing.as_ref().is_some_and(|p| p.admits(g)) => Ok(()),
        Some(_) => Err(ApiError::new(StatusCode::UNAUTHORIZED, "wrong token")),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "controls need the token: Authorization: Bearer <web.token> (or a paired session's)",
        )),
    }
}

/// The pairing PIN, for the device's own screen only: a request from another machine
/// is refused, so that only who can see the kiosk can pair.
async fn pin(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<std::net::SocketAddr>,
) -> ApiResult<Response> {
    let Some(p) = &s.0.pairing else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "pairing is off: no web.pin",
        ));
    };
    // Canonical: an IPv4 peer on an IPv6 socket (`::ffff:127.0.0.1`) is loopback too.
    if !peer.ip().to_canonical().is_loopback() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "the PIN is shown on the kiosk's own screen only",
        ));
    }
    Ok(Json(serde_json::json!({ "pin": p.pin() })).into_response())
}

/// Trades the PIN on the kiosk (`{"pin":"123456"}`) for a session token.
async fn pair(State(s): State<Shared>, body: Body) -> ApiResult<Response> {
    let Some(p) = &s.0.pairing else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "pairing is off: no web.pin",
        ));
    };
    #[derive(serde::Deserialize)]
    struct Pin {
        pin: String,
    }
    let bytes = match tokio::time::timeout(BODY_WAIT, axum::body::to_bytes(body, 256)).await {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "a pairing request is at most 256 bytes",
            ))
        }
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            ))
        }
    };
    let req: Pin = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("want {{\"pin\":\"123456\"}}: {e}"),
        )
    })?;
    match p.pair(&req.pin, std::time::Instant::now()) {
        Ok(token) => Ok(Json(serde_json::json!({ "token": token })).into_response()),
        Err(e @ PairError::Wrong) => Err(ApiError::new(StatusCode::UNAUTHORIZED, e.to_string())),
        Err(e @ PairError::Paused(_)) => {
            Err(ApiError::new(StatusCode::TOO_MANY_REQUESTS, e.to_string()))
        }
        Err(e @ PairError::Random(_)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            e.to_string(),
        )),
    }
}

/// Compares without stopping at the first difference, so timing tells nothing.
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A control: the MQTT command JSON (`{"cmd":"undo"}`, ...), checked by the same decoder,
/// carried out by the engine loop and journalled before the answer.
async fn command(State(s): State<Shared>, headers: HeaderMap, body: Body) -> ApiResult<Response> {
    authorize(&s, &headers)?;
    let bytes = match tokio::time::timeout(BODY_WAIT, axum::body::to_bytes(body, MAX_PAYLOAD)).await
    {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("a command is at most {MAX_PAYLOAD} bytes"),
            ))
        }
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            ))
        }
    };
    let cmd = decode_command(&bytes)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
    if matches!(cmd, Command::Gtp { .. }) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "gtp commands are not taken over the web; use MQTT or the serial line",
        ));
    }
    let _slot = s.0.pending.try_acquire().map_err(|_| {
        ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("{MAX_PENDING} controls are already waiting; try again"),
        )
    })?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    enqueue(&s, Inbound::Control(cmd, tx))?;
    match tokio::time::timeout(ENGINE_WAIT, rx).await {
        Ok(Ok(Ok(()))) => Ok(Json(serde_json::json!({ "ok": true })).into_response()),
        Ok(Ok(Err(e))) => Err(ApiError::new(StatusCode::CONFLICT, e)),
        Ok(Err(_)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the daemon is stopping",
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "the engine did not answer in time; the command may still be carried out",
        )),
    }
}
