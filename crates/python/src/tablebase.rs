//! The `Tablebase` class: python-chess's `chess.syzygy.Tablebase` over
//! dtz50 tables, plus the verdict, ranked moves and the rule.
//!
//! One `dtz50::Tablebase` per directory, tried in the order the directories
//! were added (as python-chess tries its tables): the first directory that
//! has the position's table (and the tables its captures reach) answers.
//! Probes release the GIL, so threads probing one `Tablebase` run in
//! parallel; the directory list sits behind a lock that is only taken
//! without the GIL, so `add_directory` or `close` in one thread cannot
//! deadlock a probe in another.

use std::{
    fs,
    path::{Path, PathBuf},
    sync::{Arc, PoisonError, RwLock},
};

use dtz50::{
    ProbeError, Rule,
    format::EXTENSION,
    material::Material,
    probe::{RankedMove as Ranked, StoredValues, open_file},
};
use pyo3::{exceptions::PyValueError, intern, prelude::*, types::PyList};
use shakmaty::{CastlingMode, Chess, Position};

use crate::{
    adjudicate::games,
    board::{fen, position},
    errors::{Metric, io_error, probe_error},
    values::{RankedMove, Verdict},
};

/// The directories and the rule they were built for.
#[derive(Default)]
struct Directories {
    /// The rule of every directory (`None` before the first one).
    rule: Option<Rule>,
    /// One table set per directory, in the order added.
    tables: Vec<Arc<dtz50::Tablebase>>,
}

/// A collection of dtz50 tables, probed like python-chess's
/// ``chess.syzygy.Tablebase``.
///
/// Create it with :func:`dtz50.open_tablebase` (or ``Tablebase()`` and
/// :meth:`add_directory`). Probing is thread-safe and releases the GIL.
/// Use it as a context manager to :meth:`close` it at the end.
#[pyclass(frozen, module = "dtz50")]
pub struct Tablebase {
    directories: RwLock<Directories>,
}

impl Tablebase {
    /// The first directory's tables (adjudication uses one table set).
    pub fn first(&self) -> Option<Arc<dtz50::Tablebase>> {
        self.read(|d| d.tables.first().cloned())
    }

    /// Look at the directories (call without the GIL).
    fn read<T>(&self, f: impl FnOnce(&Directories) -> T) -> T {
        f(&self
            .directories
            .read()
            .unwrap_or_else(PoisonError::into_inner))
    }

    /// Probe `pos` in each directory in turn until one has the table.
    fn probe_with<T: Send>(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        metric: Metric,
        probe: impl Fn(&dtz50::Tablebase, &Chess) -> Result<T, ProbeError> + Send + Sync,
    ) -> PyResult<T> {
        let pos = position(board)?;
        let result = py.detach(|| {
            self.read(|d| {
                let mut missing = None;
                for tables in &d.tables {
                    match probe(tables, &pos) {
                        Err(e @ ProbeError::MissingTable { .. }) => missing = Some(e),
                        done => return Some(done),
                    }
                }
                missing.map(Err)
            })
        });
        match result {
            Some(Ok(value)) => Ok(value),
            Some(Err(e)) => Err(probe_error(&e, metric, &fen(board)?)),
            // No directory (none added yet, or closed): python-chess's
            // message for an empty collection.
            None => Err(probe_error(
                &ProbeError::MissingTable {
                    material: Material::from_board(pos.board()).normalized(),
                    dir: None,
                },
                metric,
                "",
            )),
        }
    }
}

/// The rule of the first table file in `dir` (by name), if any.
fn rule_of_directory(dir: &Path) -> PyResult<Option<Rule>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| io_error(&e, dir))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == EXTENSION))
        .collect();
    files.sort();
    match files.first() {
        None => Ok(None),
        Some(path) => open_file(path)
            .map(|table| Some(table.header().rule))
            .map_err(|e| probe_error(&e, Metric::Dtz, "")),
    }
}

/// A rule given as "50", "75" or "none".
fn parse_rule(rule: Option<&str>) -> PyResult<Option<Rule>> {
    rule.map(str::parse::<Rule>)
        .transpose()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Refuse a board class of another variant, as python-chess's
/// `VariantBoard` would select tables we do not have.
fn check_variant(variant_board: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    if let Some(class) = variant_board {
        let variant: String = class
            .getattr(intern!(class.py(), "uci_variant"))?
            .extract()?;
        if variant != "chess" {
            return Err(PyValueError::new_err(format!(
                "dtz50 has tables for standard chess only, not {variant}"
            )));
        }
    }
    Ok(())
}

#[pymethods]
impl Tablebase {
    /// An empty collection; add tables with :meth:`add_directory`.
    ///
    /// ``rule`` (``"50"``, ``"75"`` or ``"none"``) is the rule every
    /// directory must have been built for; by default the first directory's
    /// files say. ``max_fds`` and ``VariantBoard`` are accepted for
    /// python-chess compatibility: dtz50 maps its files into memory and
    /// opens them lazily, so there is no file-descriptor limit to apply,
    /// and only standard chess (``chess.Board``) has tables.
    #[new]
    #[pyo3(signature = (*, max_fds = Some(128), VariantBoard = None, rule = None))]
    #[allow(non_snake_case)]
    fn new(
        max_fds: Option<u64>,
        VariantBoard: Option<&Bound<'_, PyAny>>,
        rule: Option<&str>,
    ) -> PyResult<Tablebase> {
        let _ = max_fds;
        check_variant(VariantBoard)?;
        Ok(Tablebase {
            directories: RwLock::new(Directories {
                rule: parse_rule(rule)?,
                tables: Vec::new(),
            }),
        })
    }

    /// Adds the tables of a directory, tried after those added before.
    ///
    /// Returns the number of table files (``*.dtz50``) found. A dtz50 file
    /// holds WDL and DTZ together, so ``load_wdl`` and ``load_dtz`` cannot
    /// load one without the other: the directory is added unless both are
    /// false (then nothing is added and 0 returned, as python-chess).
    ///
    /// :raises: :exc:`FileNotFoundError` (an :exc:`OSError`) if the
    ///     directory does not exist, :exc:`ValueError` if its tables were
    ///     built for another rule than the tablebase's.
    #[pyo3(signature = (directory, *, load_wdl = true, load_dtz = true))]
    fn add_directory(
        &self,
        py: Python<'_>,
        directory: PathBuf,
        load_wdl: bool,
        load_dtz: bool,
    ) -> PyResult<usize> {
        if !load_wdl && !load_dtz {
            return Ok(0);
        }
        let directory = std::path::absolute(&directory).map_err(|e| io_error(&e, &directory))?;
        let found = fs::read_dir(&directory)
            .map_err(|e| io_error(&e, &directory))?
            .filter_map(Result::ok)
            .filter(|entry| entry.path().extension().is_some_and(|ext| ext == EXTENSION))
            .count();
        let own_rule = rule_of_directory(&directory)?;
        py.detach(|| {
            let mut d = self
                .directories
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let rule = match (d.rule, own_rule) {
                (Some(rule), Some(own)) if rule != own => {
                    return Err(PyValueError::new_err(format!(
                        "{}: tables built for rule {own}, the tablebase has rule {rule}",
                        directory.display()
                    )));
                }
                (Some(rule), _) | (None, Some(rule)) => rule,
                (None, None) => Rule::Fifty,
            };
            // Every directory shares the first one's cache of decoded DTZ
            // blocks: one bound for the whole tablebase.
            let mut tables = dtz50::Tablebase::open(&directory, rule)
                .map_err(|e| probe_error(&e, Metric::Dtz, ""))?;
            if let Some(first) = d.tables.first() {
                tables = tables.sharing_decoded_cache(first.decoded_cache().cloned());
            }
            d.rule = Some(rule);
            d.tables.push(Arc::new(tables));
            Ok(found)
        })
    }

    /// The rule the tables were built for: ``"50"``, ``"75"`` or ``"none"``
    /// (``None`` before a directory is added).
    #[getter]
    fn rule(&self, py: Python<'_>) -> Option<String> {
        py.detach(|| self.read(|d| d.rule.map(|r| r.to_string())))
    }

    /// The directories added, in probing order.
    #[getter]
    fn directories(&self, py: Python<'_>) -> Vec<PathBuf> {
        py.detach(|| self.read(|d| d.tables.iter().map(|t| t.dir().to_path_buf()).collect()))
    }

    /// WDL for the side to move with the halfmove clock at zero, as
    /// python-chess: ``2`` win, ``1`` cursed win (won, but drawn by the
    /// 50-move rule), ``0`` draw, ``-1`` blessed loss, ``-2`` loss.
    ///
    /// En passant is taken into account; the board's halfmove clock is not
    /// (see :meth:`probe` for that).
    ///
    /// :raises: :exc:`KeyError` (specifically :exc:`MissingTableError` if a
    ///     table is missing) for a position the tables cannot answer:
    ///     castling rights, more than ``MAX_PIECES`` pieces, another
    ///     variant. :exc:`ValueError` for an illegal board. Use
    ///     :meth:`get_wdl` to get ``None`` instead of a ``KeyError``.
    fn probe_wdl(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<i8> {
        self.probe_with(py, board, Metric::Wdl, |t, pos| t.probe_wdl(pos))
            .map(|wdl| wdl.to_i8())
    }

    /// :meth:`probe_wdl`, or ``default`` where it raises ``KeyError``.
    #[pyo3(signature = (board, default = None))]
    fn get_wdl(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        or_default(py, self.probe_wdl(py, board).map(i64::from), default)
    }

    /// DTZ50'' in plies for the side to move: positive when winning, ``0``
    /// for a draw, negative when losing; ``1..=100`` a win within the
    /// 50-move rule, ``> 100`` a cursed win (``-100..=-1`` and ``< -100``
    /// the losses). The same conventions as python-chess's ``probe_dtz``,
    /// except that dtz50 is exact: python-chess's value "can be off by one"
    /// ply because official Syzygy tables store most values in full moves;
    /// dtz50 stores every value to the ply (for one side to move, the other
    /// found by a one-ply search), so this is never rounded. Checkmated: ``-1``; a winning zeroing
    /// move (capture, pawn move) or mate next: ``1``.
    ///
    /// :raises: as :meth:`probe_wdl`; use :meth:`get_dtz` to get ``None``
    ///     instead of a ``KeyError``.
    fn probe_dtz(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<i16> {
        self.probe_with(py, board, Metric::Dtz, |t, pos| t.probe_dtz(pos))
            .map(|dtz| dtz.0)
    }

    /// :meth:`probe_dtz`, or ``default`` where it raises ``KeyError``.
    #[pyo3(signature = (board, default = None))]
    fn get_dtz(
        &self,
        py: Python<'_>,
        board: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        or_default(py, self.probe_dtz(py, board).map(i64::from), default)
    }

    /// The verdict with the board's halfmove clock (``board.halfmove_clock``)
    /// applied: does the win or loss survive the rule, and with how many
    /// plies to spare? See :class:`Verdict`. Exact for every clock.
    ///
    /// :raises: as :meth:`probe_dtz`.
    fn probe(&self, py: Python<'_>, board: &Bound<'_, PyAny>) -> PyResult<Verdict> {
        self.probe_with(py, board, Metric::Dtz, |t, pos| t.probe(pos))
            .map(Verdict)
    }

    /// Every legal move ranked, best first: a win within the clock is kept,
    /// a loss is delayed as long as possible. A list of :class:`RankedMove`
    /// (``move``, ``dtz``, ``outcome``), empty at mate or stalemate.
    ///
    /// :raises: as :meth:`probe_dtz`.
    fn best_moves<'py>(
        &self,
        py: Python<'py>,
        board: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ranked: Vec<Ranked> =
            self.probe_with(py, board, Metric::Dtz, |t, pos| t.best_moves(pos))?;
        let from_uci = py
            .import(intern!(py, "chess"))?
            .getattr(intern!(py, "Move"))?
            .getattr(intern!(py, "from_uci"))?;
        let moves = PyList::empty(py);
        for r in ranked {
            let uci = r.mv.to_uci(CastlingMode::Standard).to_string();
            moves.append(RankedMove {
                mv: from_uci.call1((uci,))?.unbind(),
                dtz: r.dtz.0,
                outcome: r.outcome.name(),
            })?;
        }
        Ok(moves)
    }

    /// Adjudicate the games of a PGN text with these tables: see
    /// :func:`dtz50.adjudicate`.
    #[pyo3(signature = (pgn, *, fivefold_2014 = false))]
    fn adjudicate<'py>(
        slf: &Bound<'py, Tablebase>,
        pgn: &str,
        fivefold_2014: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        adjudicate(slf.py(), pgn, Some(slf), fivefold_2014)
    }

    /// Closes all tables: later probes raise :exc:`MissingTableError`
    /// until a directory is added again.
    fn close(&self, py: Python<'_>) {
        py.detach(|| {
            let mut d = self
                .directories
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            d.tables.clear();
        });
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let (rule, dirs) = py.detach(|| {
            self.read(|d| {
                let dirs: Vec<String> = d
                    .tables
                    .iter()
                    .map(|t| format!("{:?}", t.dir().display().to_string()))
                    .collect();
                (
                    d.rule.map_or("None".to_owned(), |r| format!("'{r}'")),
                    dirs.join(", "),
                )
            })
        });
        format!("<dtz50.Tablebase rule={rule} directories=[{dirs}]>")
    }
}

/// `value`, or `default` for a `KeyError` (as python-chess's `get_wdl`).
fn or_default(
    py: Python<'_>,
    value: PyResult<i64>,
    default: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    match value {
        Ok(v) => Ok(v.into_pyobject(py)?.into_any().unbind()),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(py) => {
            Ok(default.unwrap_or_else(|| py.None()))
        }
        Err(e) => Err(e),
    }
}

/// Opens the dtz50 tables of ``directory`` for probing, as python-chess's
/// ``chess.syzygy.open_tablebase``.
///
/// ``rule`` (``"50"``, ``"75"`` or ``"none"``) defaults to the rule the
/// directory's files were built for (``"50"`` for a directory without
/// tables). ``load_wdl``, ``load_dtz``, ``max_fds`` and ``VariantBoard``
/// are python-chess's; see :meth:`Tablebase.add_directory` and
/// :class:`Tablebase` for what they mean here. Add further directories
/// with :meth:`Tablebase.add_directory`.
#[pyfunction]
#[pyo3(signature = (directory, *, load_wdl = true, load_dtz = true, max_fds = Some(128), VariantBoard = None, rule = None))]
#[allow(non_snake_case)]
pub fn open_tablebase(
    py: Python<'_>,
    directory: PathBuf,
    load_wdl: bool,
    load_dtz: bool,
    max_fds: Option<u64>,
    VariantBoard: Option<&Bound<'_, PyAny>>,
    rule: Option<&str>,
) -> PyResult<Tablebase> {
    let tables = Tablebase::new(max_fds, VariantBoard, rule)?;
    tables.add_directory(py, directory, load_wdl, load_dtz)?;
    Ok(tables)
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
    let tables = tablebase.and_then(|t| t.get().first());
    let store = tables.as_deref().map(|t| t as &(dyn StoredValues + Sync));
    games(py, pgn, store, fivefold_2014)
}
