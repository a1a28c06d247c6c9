//! Library errors as the exceptions python-chess raises.
//!
//! python-chess raises `KeyError` for a position the tables cannot hold
//! (castling rights, too many pieces, another variant) and its subclass
//! `MissingTableError` for a table that is not there; `get_wdl` and
//! `get_dtz` turn exactly these into their default. dtz50 does the same.
//! What python-chess does not check raises a non-`KeyError`: an impossible
//! board `ValueError`, tables of another rule `ValueError`, damaged or
//! unreadable files `OSError`.

use std::{io, path::Path};

use dtz50::{ProbeError, probe::error_chain};
use pyo3::{
    PyErr, create_exception,
    exceptions::{
        PyFileNotFoundError, PyKeyError, PyNotADirectoryError, PyOSError, PyRuntimeError,
        PyValueError,
    },
};

create_exception!(
    dtz50,
    MissingTableError,
    PyKeyError,
    "Can not probe position because a required table is missing (a KeyError, as in chess.syzygy)."
);

/// Which values a probe asked for, for python-chess's message
/// ("did not find wdl table KQvKR").
#[derive(Debug, Clone, Copy)]
pub enum Metric {
    /// `probe_wdl`.
    Wdl,
    /// `probe_dtz`, `probe`, `best_moves`.
    Dtz,
}

/// The Python exception for a failed probe of the position `fen`.
pub fn probe_error(e: &ProbeError, metric: Metric, fen: &str) -> PyErr {
    match e {
        ProbeError::MissingTable { material, .. } => {
            let metric = match metric {
                Metric::Wdl => "wdl",
                Metric::Dtz => "dtz",
            };
            MissingTableError::new_err(format!("did not find {metric} table {material}"))
        }
        ProbeError::TooManyPieces { .. } | ProbeError::CastlingRights => {
            PyKeyError::new_err(format!("{}: {fen}", error_chain(e)))
        }
        ProbeError::RuleMismatch { .. } => PyValueError::new_err(error_chain(e)),
        ProbeError::Corrupt { .. }
        | ProbeError::Unsupported { .. }
        | ProbeError::Io { .. }
        | ProbeError::NotAFile { .. } => PyOSError::new_err(error_chain(e)),
        ProbeError::NoValue { .. } => PyRuntimeError::new_err(format!("{}: {fen}", error_chain(e))),
    }
}

/// The Python exception for an I/O error on `path`, of the `OSError`
/// subclass Python itself would raise (as `os.listdir` does for
/// python-chess's `add_directory`).
pub fn io_error(e: &io::Error, path: &Path) -> PyErr {
    let message = format!("{}: {e}", path.display());
    match e.kind() {
        io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        io::ErrorKind::NotADirectory => PyNotADirectoryError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}
