//! The page's files, compiled into the binary: no build step and nothing to install.

/// One file of the page.
pub struct Asset {
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its contents.
    pub body: &'static str,
}

/// Every file, by the name it is served under (`/` is `index.html`, the rest under
/// `/assets/`).
const ASSETS: &[(&str, Asset)] = &[
    (
        "index.html",
        Asset {
            content_type: "text/html; charset=utf-8",
            body: include_str!("../assets/index.html"),
        },
    ),
    (
        "panel.css",
        Asset {
            content_type: "text/css; charset=utf-8",
            body: include_str!("../assets/panel.css"),
        },
    ),
    (
        "app.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            body: include_str!("../assets/js/app.js"),
        },
    ),
    (
        "board.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            body: include_str!("../assets/js/board.js"),
        },
    ),
    (
        "graph.js",
        Asset {
            content_type: "text/javascript; charset=utf-8",
            body: include_str!("../assets/js/graph.js"),
        },
    ),
];

/// The file served as `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|(n, _)| *n == name).map(|(_, a)| a)
}
