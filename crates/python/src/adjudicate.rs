//! PGN adjudication for Python, as `dtz50 adjudicate --json` prints it
//! (the `dtz50.adjudicate` function and method live with `Tablebase`).

use dtz50::{
    adjudicate::{AdjudicateOptions, FivefoldRule, adjudicate_pgn},
    probe::{StoredValues, error_chain},
};
use pyo3::{prelude::*, types::PyList};

use crate::values::{json_error, json_to_python};

/// A game that could not be adjudicated, as the CLI prints it.
#[derive(serde::Serialize)]
struct GameFailure {
    game: usize,
    error: String,
}

/// Adjudicate every game of a PGN text with `store` (if any): one dict
/// per game, exactly the objects `dtz50 adjudicate --json` prints.
pub fn games<'py>(
    py: Python<'py>,
    pgn: &str,
    store: Option<&(dyn StoredValues + Sync)>,
    fivefold_2014: bool,
) -> PyResult<Bound<'py, PyList>> {
    let options = AdjudicateOptions {
        fivefold: if fivefold_2014 {
            FivefoldRule::Consecutive2014
        } else {
            FivefoldRule::Current
        },
    };
    let lines = py.detach(|| {
        let store = store.map(|s| s as &dyn StoredValues);
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
