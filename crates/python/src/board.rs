//! A `chess.Board` as a shakmaty position, read from its bitboards.
//!
//! Reading the bitboards (a dozen attribute reads) is exact and cheaper
//! than formatting and parsing a FEN: the halfmove clock, the move number
//! and python-chess's raw en-passant square come across unchanged. The
//! checks python-chess makes before probing come first, in its order and
//! with its exception (`KeyError`): another variant, castling rights, too
//! many pieces. Then shakmaty validates the board; like python-chess, which
//! probes any board, it accepts an en-passant square no pawn can use (it is
//! dropped) and a check no legal move could have given (such positions are
//! in the tables).

use std::num::NonZeroU32;

use dtz50::material::MAX_PIECES;
use pyo3::{
    exceptions::{PyKeyError, PyValueError},
    intern,
    prelude::*,
    types::PyString,
};
use shakmaty::{
    Bitboard, Board, ByColor, ByRole, CastlingMode, Chess, Color, FromSetup, PositionError, Setup,
    Square,
};

/// The board's FEN, for error messages.
pub fn fen(board: &Bound<'_, PyAny>) -> PyResult<String> {
    board.call_method0(intern!(board.py(), "fen"))?.extract()
}

/// One integer attribute.
fn int<'py, T>(board: &Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<T>
where
    T: for<'a> FromPyObject<'a, 'py>,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    board.getattr(name)?.extract().map_err(Into::into)
}

/// The position of a `chess.Board` (or anything with its attributes).
///
/// # Errors
/// `KeyError` for another variant, castling rights or more than
/// `MAX_PIECES` pieces (as python-chess); `ValueError` for a board shakmaty
/// rejects (a missing king, pawns on the back rank, the side not to move in
/// check, ...); `AttributeError`/`TypeError` for an object that is not a
/// board.
pub fn position(board: &Bound<'_, PyAny>) -> PyResult<Chess> {
    let py = board.py();
    let variant: String = int(board, intern!(py, "uci_variant"))?;
    if variant != "chess" {
        return Err(PyKeyError::new_err(format!(
            "tablebase has been opened for chess, probed with: {variant}"
        )));
    }
    if int::<u64>(board, intern!(py, "castling_rights"))? != 0 {
        return Err(PyKeyError::new_err(format!(
            "dtz50 tables do not contain positions with castling rights: {}",
            fen(board)?
        )));
    }
    let occupied_co = board.getattr(intern!(py, "occupied_co"))?;
    let by_color = ByColor {
        black: Bitboard(occupied_co.get_item(0)?.extract()?),
        white: Bitboard(occupied_co.get_item(1)?.extract()?),
    };
    let pieces = (by_color.white | by_color.black).count();
    if pieces > MAX_PIECES {
        return Err(PyKeyError::new_err(format!(
            "dtz50 tables support up to {MAX_PIECES} pieces, not {pieces}: {}",
            fen(board)?
        )));
    }
    let bitboard = |name| int(board, name).map(Bitboard);
    let by_role = ByRole {
        pawn: bitboard(intern!(py, "pawns"))?,
        knight: bitboard(intern!(py, "knights"))?,
        bishop: bitboard(intern!(py, "bishops"))?,
        rook: bitboard(intern!(py, "rooks"))?,
        queen: bitboard(intern!(py, "queens"))?,
        king: bitboard(intern!(py, "kings"))?,
    };
    let bad = |what: String| -> PyResult<Chess> {
        Err(PyValueError::new_err(format!("{what}: {}", fen(board)?)))
    };
    let Ok(placement) = Board::try_from_bitboards(by_role, by_color) else {
        return bad("inconsistent bitboards".to_owned());
    };
    let ep_square = match int::<Option<u32>>(board, intern!(py, "ep_square"))? {
        None => None,
        Some(index) => match Square::try_from(index) {
            Ok(square) => Some(square),
            Err(_) => return bad(format!("en-passant square {index} is off the board")),
        },
    };
    let turn: bool = int(board, intern!(py, "turn"))?;
    let setup = Setup {
        board: placement,
        promoted: Bitboard::EMPTY,
        pockets: None,
        turn: Color::from_white(turn),
        castling_rights: Bitboard::EMPTY,
        ep_square,
        remaining_checks: None,
        halfmoves: int(board, intern!(py, "halfmove_clock"))?,
        fullmoves: NonZeroU32::new(int(board, intern!(py, "fullmove_number"))?)
            .unwrap_or(NonZeroU32::MIN),
    };
    match Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_impossible_check)
    {
        Ok(pos) => Ok(pos),
        Err(e) => bad(e.to_string()),
    }
}
