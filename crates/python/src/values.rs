//! The small classes dtz50 adds to python-chess's surface: `Verdict` and
//! `RankedMove`.

use pyo3::{intern, prelude::*};

/// The verdict on a position with a halfmove clock applied.
///
/// Attributes: ``wdl`` (-2..2 with the clock at zero, as ``probe_wdl``),
/// ``dtz`` (exact plies, as ``probe_dtz``), ``halfmove`` (the clock
/// applied), ``rule`` (``"50"``, ``"75"`` or ``"none"``), ``outcome``
/// (``"win"``, ``"draw"`` or ``"loss"`` for the side to move with the clock
/// applied) and ``margin`` (plies to spare for a result that survives the
/// clock, else ``None``). ``str(verdict)`` is dtz50's one-sentence verdict.
#[pyclass(frozen, module = "dtz50")]
pub struct Verdict(pub dtz50::Verdict);

#[pymethods]
impl Verdict {
    /// WDL with the clock at zero: -2 loss, -1 blessed loss, 0 draw,
    /// 1 cursed win, 2 win.
    #[getter]
    fn wdl(&self) -> i8 {
        self.0.wdl.to_i8()
    }

    /// Exact DTZ in plies, signed for the side to move.
    #[getter]
    fn dtz(&self) -> i16 {
        self.0.dtz.0
    }

    /// The halfmove clock that was applied.
    #[getter]
    fn halfmove(&self) -> u32 {
        self.0.halfmove
    }

    /// The rule of the tables: "50", "75" or "none".
    #[getter]
    fn rule(&self) -> String {
        self.0.rule.to_string()
    }

    /// "win", "draw" or "loss" for the side to move, with the clock applied.
    #[getter]
    fn outcome(&self) -> &'static str {
        self.0.outcome.name()
    }

    /// Plies to spare for a win or loss that survives the clock, else None.
    #[getter]
    fn margin(&self) -> Option<u32> {
        self.0.margin
    }

    /// The fields as a dict, the same as the JSON of `dtz50 probe --json`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_python(py, &serde_json::to_string(&self.0).map_err(json_error)?)
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        let v = &self.0;
        let margin = v.margin.map_or("None".to_owned(), |m| m.to_string());
        format!(
            "Verdict(wdl={}, dtz={}, halfmove={}, rule='{}', outcome='{}', margin={margin})",
            v.wdl.to_i8(),
            v.dtz.0,
            v.halfmove,
            v.rule,
            v.outcome.name(),
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Verdict>()
            .is_ok_and(|other| other.get().0 == self.0)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut hasher);
        hasher.finish()
    }
}

/// A legal move at the root and what it is worth, as ranked by
/// ``Tablebase.best_moves``: ``move`` (a ``chess.Move``), ``dtz`` (the DTZ
/// of the root position if this move is played: mate 1, a zeroing move by
/// the result it reaches, a quiet move one ply further than its successor)
/// and ``outcome`` (``"win"``, ``"draw"`` or ``"loss"`` with the board's
/// halfmove clock applied). Unpacks as ``move, dtz, outcome = ranked``.
#[pyclass(frozen, module = "dtz50")]
pub struct RankedMove {
    /// The move, a `chess.Move`.
    pub mv: Py<PyAny>,
    /// DTZ of the root if this move is played.
    pub dtz: i16,
    /// The result with the clock applied.
    pub outcome: &'static str,
}

#[pymethods]
impl RankedMove {
    /// The move (a ``chess.Move``).
    #[getter(r#move)]
    fn mv(&self, py: Python<'_>) -> Py<PyAny> {
        self.mv.clone_ref(py)
    }

    /// DTZ of the root position if this move is played.
    #[getter]
    fn dtz(&self) -> i16 {
        self.dtz
    }

    /// "win", "draw" or "loss" with the halfmove clock applied.
    #[getter]
    fn outcome(&self) -> &'static str {
        self.outcome
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        (self.mv.clone_ref(py), self.dtz, self.outcome)
            .into_pyobject(py)?
            .try_iter()
            .map(Bound::into_any)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mv = self.mv.bind(py).str()?;
        Ok(format!(
            "RankedMove(move=Move.from_uci('{mv}'), dtz={}, outcome='{}')",
            self.dtz, self.outcome
        ))
    }
}

/// Parse JSON text with Python's `json.loads`.
pub fn json_to_python<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import(intern!(py, "json"))?
        .call_method1(intern!(py, "loads"), (text,))
}

/// A serialisation failure (cannot happen for these types) as a Python error.
pub fn json_error(e: serde_json::Error) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(e.to_string())
}
