//! Why a probe failed: one error type for every reader of stored values.
//!
//! The probe API, the solver reading its sub-tables, the deep check and
//! adjudication all read values through the same traits, so they share one
//! error: what is wrong with the *position* (too many pieces, castling
//! rights), what is wrong with the *tables* (missing, another rule, damaged,
//! written by another dtz50, unreadable), with the facts attached. A
//! lower-level error is kept as the [`source`](std::error::Error::source),
//! not flattened into text: an `io::Error` stays an `io::Error`, a damaged
//! file's [`FormatError`] says what is damaged. Messages do not repeat their
//! source; print the whole chain (as the CLI does) to see both.

use std::{
    io,
    path::{Path, PathBuf},
};

use thiserror::Error;

use crate::{
    format::FormatError,
    material::{MAX_PIECES, Material},
    value::Rule,
};

/// Why a probe failed.
#[derive(Debug, Error)]
pub enum ProbeError {
    /// More pieces than any table has.
    #[error("too many pieces: {count}, tables have at most {MAX_PIECES}")]
    TooManyPieces {
        /// Pieces on the board.
        count: usize,
    },
    /// Tables hold no positions with castling rights.
    #[error("castling rights are not supported by tablebases")]
    CastlingRights,
    /// The table for this material is not available.
    #[error("missing table {material}{}", dir.as_ref().map_or(String::new(), |d| format!(" in {}", d.display())))]
    MissingTable {
        /// The normalised material.
        material: Material,
        /// The directory searched (`None` for tables held in memory).
        dir: Option<PathBuf>,
    },
    /// The file was built for another rule than the one asked for.
    #[error("table {} was built for rule {got}, asked for rule {expected}", path.display())]
    RuleMismatch {
        /// The file.
        path: PathBuf,
        /// The rule asked for.
        expected: Rule,
        /// The rule in the file.
        got: Rule,
    },
    /// The file is damaged (the source says how).
    #[error("corrupt table {}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: FormatError,
    },
    /// Another dtz50 wrote the file, in a way this one does not read (the
    /// source says how, and how to rebuild it).
    #[error("cannot use table {}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used.
        source: FormatError,
    },
    /// Something other than a regular file stands where a table file
    /// should be (a directory, a fifo, ...).
    #[error("{} is {what}, not a table file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is, in words: "a directory", "a fifo", ...
        what: &'static str,
    },
    /// The file could not be read (the source says why).
    #[error("cannot read {}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The table has no value for the position (a bug or corruption).
    #[error("table {material} has no value for this position")]
    NoValue {
        /// The normalised material.
        material: Material,
    },
}

impl ProbeError {
    /// The file at `path` cannot be used, as `source` says:
    /// [`ProbeError::Unsupported`] where another dtz50 wrote it
    /// ([`FormatError::is_from_another_version`]), else
    /// [`ProbeError::Corrupt`].
    pub fn bad_file(path: &Path, source: FormatError) -> ProbeError {
        let path = path.to_path_buf();
        if source.is_from_another_version() {
            ProbeError::Unsupported { path, source }
        } else {
            ProbeError::Corrupt { path, source }
        }
    }
}

/// An error and its causes on one line, each cause once: "corrupt table
/// KQvK.dtz50: wdl block 0 is corrupt". For front-ends that show errors
/// to people (the CLI, the server, the bindings).
///
/// ```
/// use dtz50::{ProbeError, probe::error_chain};
///
/// let err = ProbeError::Io {
///     path: "tables/KQvK.dtz50".into(),
///     source: std::io::Error::other("disk on fire"),
/// };
/// assert_eq!(error_chain(&err), "cannot read tables/KQvK.dtz50: disk on fire");
/// ```
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{LEAD_FLAG, OrderError};

    #[test]
    fn a_file_another_dtz50_wrote_is_unsupported_not_corrupt() {
        let path = Path::new("tables/KBBvKN.dtz50");
        let miswritten = OrderError::Miswritten {
            order: vec![LEAD_FLAG | 4, 2, 3, 0, 1],
        };
        let err = ProbeError::bad_file(path, miswritten.into());
        assert!(matches!(err, ProbeError::Unsupported { .. }));
        assert_eq!(
            error_chain(&err),
            "cannot use table tables/KBBvKN.dtz50: piece order [12, 2, 3, 0, 1] puts one of identical pieces after a flagged piece, which dtz50 wrote with wrong values until 2026-11-29; `dtz50 generate` into its directory rebuilds it"
        );
        let invalid = OrderError::Invalid("piece order [1, 0] is not an order".into());
        let err = ProbeError::bad_file(path, invalid.into());
        assert!(matches!(err, ProbeError::Corrupt { .. }));
        assert_eq!(
            error_chain(&err),
            "corrupt table tables/KBBvKN.dtz50: bad header: piece order [1, 0] is not an order"
        );
    }
}
