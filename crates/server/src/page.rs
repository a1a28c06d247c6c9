//! The page at `/`: a FEN field, the board, the verdict in words, every
//! legal move best first with its category and exact DTZ, and a
//! halfmove-clock slider that asks again as it moves, so the verdict and
//! the moves recolour at the exact ply where the rule turns a result.
//! Clicking a move plays it. The position lives in the URL's fragment
//! (`/#8/8/8/4k3/8/8/8/R3K3%20w%20-%20-%200%201`), so a link shows it.
//!
//! Every asset is compiled into the binary: the page works with no
//! network.

use axum::{Router, http::header, response::IntoResponse, routing::get};

/// The HTML.
const INDEX: &str = include_str!("../assets/index.html");
/// The script.
const SCRIPT: &str = include_str!("../assets/app.js");
/// The style sheet.
const STYLE: &str = include_str!("../assets/style.css");

/// `/`, `/app.js` and `/style.css`.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| asset("text/html; charset=utf-8", INDEX)))
        .route(
            "/app.js",
            get(|| asset("text/javascript; charset=utf-8", SCRIPT)),
        )
        .route(
            "/style.css",
            get(|| asset("text/css; charset=utf-8", STYLE)),
        )
}

async fn asset(kind: &'static str, body: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, kind)], body)
}
