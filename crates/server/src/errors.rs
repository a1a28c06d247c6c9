//! What goes wrong with a request, and the status it gets: the client's
//! fault (400), a position the tables cannot answer where the answer must
//! come from them (404, the mainline of a position with castling rights,
//! as lila-tablebase says), or the tables' fault (500). Every message is
//! one line of plain text.

use axum::{
    http::StatusCode,
    response::{IntoResponse, Response},
};
use dtz50::{ProbeError, probe::error_chain};

/// A request that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerError {
    /// Bad input: a missing or bad FEN, an illegal position.
    BadRequest(String),
    /// The tables hold no answer (castling rights, too many pieces, a
    /// missing table).
    NotFound(String),
    /// The tables are damaged or unreadable, or a probe task failed.
    Internal(String),
}

impl ServerError {
    /// The HTTP status.
    pub const fn status(&self) -> StatusCode {
        match self {
            ServerError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ServerError::NotFound(_) => StatusCode::NOT_FOUND,
            ServerError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::BadRequest(m) | ServerError::NotFound(m) | ServerError::Internal(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for ServerError {}

/// Whether a probe error means "not in the tables" rather than a fault.
pub fn is_not_in_tables(e: &ProbeError) -> bool {
    matches!(
        e,
        ProbeError::TooManyPieces { .. }
            | ProbeError::CastlingRights
            | ProbeError::MissingTable { .. }
    )
}

impl From<ProbeError> for ServerError {
    fn from(e: ProbeError) -> ServerError {
        let text = one_line(&e);
        if is_not_in_tables(&e) {
            ServerError::NotFound(text)
        } else {
            ServerError::Internal(text)
        }
    }
}

/// An error and its causes on one line (a line of an HTTP body).
fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    error_chain(e).replace('\n', " ")
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        (self.status(), format!("{self}\n")).into_response()
    }
}
