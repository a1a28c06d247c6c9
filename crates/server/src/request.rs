//! Reading a request: the `fen` parameter, as lila-tablebase reads it.
//!
//! Underscores stand for spaces (`8/8/8/8/8/2k5/8/KQ6_w_-_-_0_1`), and, as
//! in lila-tablebase, castling rights that cannot exist, an impossible
//! en-passant square and an impossible check are dropped rather than
//! refused: an analysis board may send such a FEN.

use serde::Deserialize;
use shakmaty::{CastlingMode, Chess, PositionError, fen::Fen};

use crate::errors::ServerError;

/// The query string of `/standard` and `/standard/mainline`.
#[derive(Debug, Clone, Deserialize)]
pub struct FenQuery {
    /// The position (spaces or underscores between the fields).
    pub fen: Option<String>,
}

impl FenQuery {
    /// The position asked about.
    ///
    /// # Errors
    /// [`ServerError::BadRequest`] for a missing parameter, a FEN that does
    /// not parse, or an illegal position.
    pub fn position(&self) -> Result<Chess, ServerError> {
        let text = self
            .fen
            .as_deref()
            .ok_or_else(|| ServerError::BadRequest("missing fen parameter".to_owned()))?
            .trim();
        parse_position(text)
    }
}

/// A position from FEN text with spaces or underscores, lenient as
/// lila-tablebase is about castling rights, en passant and check.
///
/// # Errors
/// [`ServerError::BadRequest`] with a one-line message.
pub fn parse_position(text: &str) -> Result<Chess, ServerError> {
    let fen: Fen = text
        .parse()
        .map_err(|e| ServerError::BadRequest(format!("bad FEN '{text}': {e}")))?;
    fen.into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_castling_rights)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|e| ServerError::BadRequest(format!("illegal position '{text}': {e}")))
}

#[cfg(test)]
mod tests {
    use shakmaty::Position;

    use super::*;

    #[test]
    fn underscores_stand_for_spaces() {
        let pos = parse_position("8/8/8/8/8/2k5/8/KQ6_w_-_-_7_1").expect("legal");
        assert_eq!(pos.halfmoves(), 7);
    }

    #[test]
    fn bad_input_is_one_line() {
        for text in ["", "not a fen", "8/8/8/8/8/8/8/8 w - - 0 1"] {
            let e = parse_position(text).expect_err(text).to_string();
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
