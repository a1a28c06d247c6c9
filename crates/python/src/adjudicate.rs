//! `dtz50.adjudicate`: PGN adjudication, as `dtz50 adjudicate --json`.

use dtz50::{
    adjudicate::{AdjudicateOptions, FivefoldRule, adjudicate_pgn},
    probe::{StoredValues, error_chain},
};
use pyo3::{intern, prelude::*, types::PyList};

use crate::{tablebase::Tablebase, values::json_error};

/// A game that could not be adjudicated, as the CLI prints it.
#[derive(serde::Serialize)]
struct GameFailure {
    game: usize,
    error: String,
}

/// Parse JSON text with Python's `json.loads`.
pub fn json_to_python<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import(intern!(py, "json"))?
        .call_method1(intern!(py, "loads"), (text,))
}

/// Adjudicate every game of a PGN text.
///
/// Returns one dict per game, exactly the objects ``dtz50 adjudicate
/// --json`` prints (parsed with ``json.loads``): repetition claims,
/// fivefold repetition, the 50-move claim, the 75-move draw and, once a
/// game is in table range, the tablebase verdict after every move
/// (``verdicts``) and each move that changes it. A game that cannot be
/// read or replayed is ``{"game": N, "error": "..."}``; the others are
/// still adjudicated.
///
/// ``tablebase`` gives the verdicts (its first directory); without it only
/// the draw rules are applied. ``fivefold_2014`` applies the 2014 text of
/// the fivefold rule (five consecutive repetitions), as
/// ``--fivefold-2014``.
#[pyfunction]
#[pyo3(signature = (pgn, tablebase = None, *, fivefold_2014 = false))]
pub fn adjudicate<'py>(
    py: Python<'py>,
    pgn: &str,
    tablebase: Option<&Bound<'py, Tablebase>>,
    fivefold_2014: bool,
) -> PyResult<Bound<'py, PyList>> {
    let options = AdjudicateOptions {
        fivefold: if fivefold_2014 {
            FivefoldRule::Consecutive2014
        } else {
            FivefoldRule::Current
        },
    };
    let tables = tablebase.and_then(|t| t.get().first());
    let lines = py.detach(|| {
        let store = tables.as_deref().map(|t| t as &dyn StoredValues);
        adjudicate_pgn(pgn.as_bytes(), store, options)
            .map(|game| match game {
                Ok(report) => serde_json::to_string(&report),
                Err(e) => serde_json::to_string(&GameFailure {
                    game: e.game().number,
                    error: error_chain(&e),
                }),
            })
            .collect::<Result<Vec<_>, _>>()
    });
    let games = PyList::empty(py);
    for line in lines.map_err(json_error)? {
        games.append(json_to_python(py, &line)?)?;
    }
    Ok(games)
}
