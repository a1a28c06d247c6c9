//! The deep check: every stored value recomputed from its successors.
//!
//! [`deep_check`] does not trust the solver. For every legal position of a
//! table file it generates the legal moves with shakmaty, reads the stored
//! value of each successor from the files (this table and its sub-tables),
//! scores the moves as SPEC §2 defines (mate 1; zeroing moves by the WDL they
//! reach; quiet moves `-d ± 1`), picks the best, and compares the result with
//! the stored DTZ; it also checks that the WDL section agrees with the DTZ
//! section. A table that passes is a fixed point of the DTZ recursion given
//! its sub-tables, which together with the correct seeds (mates, zeroing
//! moves) is what the retrograde solver is meant to produce.

use std::sync::Mutex;

use rayon::prelude::*;
use shakmaty::{Chess, Color, Position};

use crate::{
    index::TableIndex,
    material::Material,
    probe::{ProbeError, Tablebase},
    table::zeroing_score,
    value::{Dtz, Wdl},
};

/// At most this many inconsistencies are kept for the report.
pub const MAX_REPORTED: usize = 10;

/// What the deep check found in one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeepReport {
    /// Legal positions checked (both sides to move).
    pub checked: u64,
    /// Positions whose stored values disagree with their successors.
    pub inconsistent: u64,
    /// The first few, as text (FEN, stored and recomputed values).
    pub examples: Vec<String>,
}

/// Recompute every position of `material` from its successors.
///
/// # Errors
/// A missing or corrupt table (this one or a sub-table).
pub fn deep_check(tables: &Tablebase, material: &Material) -> Result<DeepReport, ProbeError> {
    let table = tables.table(material)?;
    let layout = table.layout();
    let examples = Mutex::new(Vec::new());
    let chunks: Vec<u64> = (0..layout.size().div_ceil(4096)).collect();
    let counts = chunks
        .par_iter()
        .map(|&chunk| -> Result<(u64, u64), ProbeError> {
            let (mut checked, mut inconsistent) = (0, 0);
            for i in chunk * 4096..((chunk + 1) * 4096).min(layout.size()) {
                let placement = layout.decode(TableIndex(i));
                for turn in Color::ALL {
                    let Some(pos) = layout.position(&placement, turn) else {
                        continue;
                    };
                    checked += 1;
                    let stored_dtz = tables.probe_dtz(&pos)?;
                    let stored_wdl = tables.probe_wdl(&pos)?;
                    let recomputed = recompute(tables, &pos)?;
                    let wdl_ok = stored_wdl == Wdl::from_dtz(stored_dtz, tables.rule());
                    if stored_dtz != recomputed || !wdl_ok {
                        inconsistent += 1;
                        let mut kept = examples.lock().expect("lock");
                        if kept.len() < MAX_REPORTED {
                            kept.push(format!(
                                "{}: stored DTZ {} WDL {}, recomputed DTZ {}",
                                shakmaty::fen::Fen::from_position(
                                    &pos,
                                    shakmaty::EnPassantMode::Legal
                                ),
                                stored_dtz,
                                stored_wdl.name(),
                                recomputed
                            ));
                        }
                    }
                }
            }
            Ok((checked, inconsistent))
        })
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
    Ok(DeepReport {
        checked: counts.0,
        inconsistent: counts.1,
        examples: examples.into_inner().expect("lock"),
    })
}

/// The DTZ of `pos` from the stored values of its successors.
fn recompute(tables: &Tablebase, pos: &Chess) -> Result<Dtz, ProbeError> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return Ok(if pos.is_check() { Dtz(-1) } else { Dtz(0) });
    }
    let mut best: Option<Dtz> = None;
    for m in &moves {
        let mut after = pos.clone();
        after.play_unchecked(*m);
        let score = if after.is_checkmate() {
            Dtz(1)
        } else if m.is_zeroing() {
            zeroing_score(tables, &after).map_err(|e| tables.lookup_error(e))?
        } else {
            Dtz::of_quiet_move(tables.probe_dtz(&after)?)
        };
        best = Some(best.map_or(score, |b| b.prefer(score)));
    }
    Ok(best.expect("at least one move"))
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use shakmaty::Color;

    use super::*;
    use crate::{
        format::write_table,
        solve::{SolveOptions, solve, stats},
        table::TableSet,
        value::{Cell, Rule},
    };

    /// Write KQvK into a temporary directory, optionally with one value
    /// changed, and deep-check it.
    fn check_kqvk(tamper: bool) -> DeepReport {
        let material: Material = "KQvK".parse().expect("material");
        let table = solve(
            material,
            &SolveOptions::default(),
            &TableSet::new(),
            &|_| {},
        )
        .expect("solves");
        if tamper {
            let index = (0..table.layout().size())
                .map(TableIndex)
                .find(|&i| table.cell(Color::White, i) == Cell(5))
                .expect("a win in 5");
            table.set_cell(Color::White, index, Cell(7));
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let file = File::create(dir.path().join("KQvK.dtz50")).expect("create");
        write_table(&table, &stats(&table), file).expect("write");
        let tables = Tablebase::open(dir.path(), Rule::Fifty).expect("open");
        deep_check(&tables, &material).expect("deep check runs")
    }

    #[test]
    fn a_solved_table_is_consistent() {
        let report = check_kqvk(false);
        assert!(report.checked > 40_000);
        assert_eq!(report.inconsistent, 0, "{:?}", report.examples);
    }

    #[test]
    fn a_wrong_value_is_found() {
        let report = check_kqvk(true);
        // The changed position itself, and predecessors that relied on it.
        assert!(report.inconsistent >= 1);
        assert!(
            report
                .examples
                .iter()
                .any(|e| e.contains("stored DTZ 7 WDL win, recomputed DTZ 5")),
            "{:?}",
            report.examples
        );
    }
}
