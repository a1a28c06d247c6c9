//! Python bindings of dtz50: the module `dtz50`.
//!
//! It gives python-chess users the surface they already probe Syzygy tables
//! with (`chess.syzygy.open_tablebase`, `probe_wdl`, `probe_dtz`, `get_wdl`,
//! `get_dtz`, `add_directory`, `close`, the context manager, `KeyError` and
//! `MissingTableError`), taking `chess.Board` objects, and adds what dtz50
//! knows beyond Syzygy: the verdict under the board's halfmove clock, ranked
//! root moves, the rule of the tables and PGN adjudication.
//!
//! Layout: `board` turns a `chess.Board` into a shakmaty position (with
//! python-chess's checks and messages), `tablebase` is the `Tablebase`
//! class over one `dtz50::Tablebase` per directory, `values` holds the
//! small result classes, `errors` maps library errors to Python
//! exceptions, `adjudicate` wraps PGN adjudication. The Python-facing
//! documentation (docstrings) is in the doc comments, and `dtz50.pyi` in
//! the crate folder repeats the signatures as type stubs.

mod adjudicate;
mod board;
mod errors;
mod tablebase;
mod values;

use pyo3::prelude::*;

/// Exact DTZ50 chess endgame tablebases with python-chess's `chess.syzygy`
/// interface.
///
/// >>> import chess, dtz50
/// >>> with dtz50.open_tablebase("tables") as tablebase:
/// ...     tablebase.probe_dtz(chess.Board("8/8/8/8/8/2k5/8/KQ6 w - - 0 1"))
/// 11
#[pymodule]
#[pyo3(name = "dtz50")]
fn dtz50_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "MissingTableError",
        m.py().get_type::<errors::MissingTableError>(),
    )?;
    m.add("MAX_PIECES", dtz50::material::MAX_PIECES)?;
    m.add_class::<tablebase::Tablebase>()?;
    m.add_class::<values::Verdict>()?;
    m.add_class::<values::RankedMove>()?;
    m.add_function(wrap_pyfunction!(tablebase::open_tablebase, m)?)?;
    m.add_function(wrap_pyfunction!(tablebase::adjudicate, m)?)?;
    Ok(())
}
