//! The deep check: every stored value recomputed from its successors.
//!
//! [`deep_check`] does not trust the solver. It reads a table file whole
//! into one byte per position and side ([`crate::generate::cells::CellArray`]), each kept WDL raised
//! by the position's best capture as a probe does ([`FileValues`]),
//! checking on the way that the WDL and DTZ sections agree. The file keeps DTZ for one side to
//! move; the other side's wins and losses get the DTZ their moves give
//! over the kept side's values (what a probe's one-ply search finds),
//! which must agree with their stored WDL. A first pass computes, for
//! every position, what its own moves say before any quiet move is valued:
//! legal or not, mated or stalemate, and what its best zeroing move
//! (capture, pawn move, promotion) scores, read from the sub-table files and
//! this file's WDL section (the seed pass of the solver, run here against
//! the files). A second pass scores each quiet move from the stored value
//! of the position it reaches (`-d ± 1`, mate 1), takes the best with the
//! zeroing score by the one move-score rule ([`Dtz::of_move`]: the
//! smallest positive score, else zero, else the most negative, is the
//! position's DTZ), and compares the result with the
//! stored DTZ. A table that passes is a fixed point of the DTZ recursion
//! given its sub-tables, which is what the retrograde solver must produce;
//! the ply order, the loss candidates and the cursed plies of the solver
//! play no part in it.
//!
//! Where identical pieces give a position one index per order of their
//! squares, a file keeps the sorted index's value alone and readers read
//! every order there ([`Layout::sorted_identical`]); so the check works on
//! sorted indices alone too, and reads a successor at its sorted index.
//! That halves the work of KRNvKNN's check.
//!
//! The two passes reuse the solver's move generation on indices, so one
//! position in every [`SAMPLE_EVERY`] is recomputed a second time through
//! shakmaty's move generation and the probe API, as are positions whose
//! value involves en passant.
//!
//! Memory: three bytes per position, not per index (the solver's slots:
//! every order of identical pieces shares one), in RAM or, with a work
//! directory, in files there that the kernel pages: each side's stored
//! value, and both sides' seeds in one byte ([`SeedPairs`]); values past
//! 123 plies go to a map beside them, as in the solver. KRNvKNN: 11.8 GB
//! of arrays for 7.75 G indices per side. Each stream is read once, in
//! its own order, the DTZ stream after the WDL ones.

use std::{io, path::Path, sync::Mutex};

use rayon::prelude::*;
use shakmaty::{ByColor, Chess, Color, Position};

use crate::{
    format::{Source, TableFile},
    generate::{
        cell::Cell,
        cells::TableCells,
        seed::{Search, Seeder},
        seed_pairs::SeedPairs,
        solve::{CHUNK, ensure_space},
        tenths::Tenths,
        values::FileValues,
    },
    index::{Layout, Placement, Reorder, TableIndex},
    material::Material,
    mmap::WorkArray,
    probe::{ProbeError, Tablebase, score_move, won_by_zeroing},
    value::{Dtz, Rule, Successor, Wdl},
};

/// At most this many inconsistencies are kept for the report.
pub const MAX_REPORTED: usize = 10;

/// One position in this many is also recomputed through shakmaty.
pub const SAMPLE_EVERY: u64 = 1009;

/// What the deep check found in one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeepReport {
    /// Legal positions checked (both sides to move).
    pub checked: u64,
    /// Of those, how many were also recomputed through shakmaty.
    pub cross_checked: u64,
    /// Positions whose stored values disagree with their successors.
    pub inconsistent: u64,
    /// The first few, as text (FEN, stored and recomputed values).
    pub examples: Vec<String>,
}

/// Where a deep check is, for the progress of a long one (KRNvKNN's takes
/// over an hour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepStep {
    /// Valuing every position's own moves (legal, mated, zeroing moves
    /// from the sub-tables): `percent` done (0 as it starts, then every
    /// tenth).
    Seeding {
        /// How much is done.
        percent: u8,
    },
    /// Reading the file's values back, each stream in its own order.
    Reading,
    /// Giving the side whose DTZ the file does not keep the DTZ of its
    /// moves.
    Deriving,
    /// Recomputing every position from its successors: `percent` done.
    Checking {
        /// How much is done.
        percent: u8,
    },
}

/// Counts of one chunk of the check pass.
#[derive(Default)]
struct Counts {
    checked: u64,
    cross_checked: u64,
    inconsistent: u64,
}

/// Recompute every position of `material` from its successors, telling
/// `progress` where the check is. The work arrays are anonymous memory,
/// or with `work_dir` maps of unlinked files there, which the kernel pages
/// to disk when memory runs short (a check of a table larger than the
/// machine's memory).
///
/// # Errors
/// A missing or corrupt table (this one or a sub-table), memory for the
/// work arrays that cannot be had, or a work directory without room for
/// them.
pub fn deep_check(
    tables: &Tablebase,
    material: &Material,
    work_dir: Option<&Path>,
    progress: &(dyn Fn(DeepStep) + Sync),
) -> Result<DeepReport, ProbeError> {
    let table = tables.table(material)?;
    // The check numbers both sides as the file numbers White to move
    // (Black's stream may order its digits otherwise: see read_stored).
    let layout = table.layout(Color::White);
    let io_error = |e: io::Error| ProbeError::Io {
        path: work_dir.map_or_else(|| tables.path_of(material), Path::to_path_buf),
        source: e,
    };
    let all_slices: Vec<usize> = (0..layout.slice_count()).collect();
    let mut stored = TableCells::new(layout, &[all_slices], false);
    let positions = stored.level_size(0);
    if let Some(dir) = work_dir {
        ensure_space(dir, 3 * positions).map_err(io_error)?;
    }
    let allocate = |size: usize| match work_dir {
        Some(dir) => WorkArray::file_backed(dir, size),
        None => WorkArray::anonymous(size).inspect(WorkArray::prefer_huge_pages),
    };
    stored.open(0, allocate).map_err(io_error)?;
    let seeds = allocate(usize::try_from(positions).expect("positions fit in memory"));
    let arrays = Arrays {
        stored,
        seeds: SeedPairs::new(seeds.map_err(io_error)?, tables.rule()),
    };
    let general = seed(tables, layout, &arrays, &|percent| {
        progress(DeepStep::Seeding { percent });
    })?;
    progress(DeepStep::Reading);
    let values = FileValues::new(tables, material)?;
    read_stored(&values, &arrays)?;
    let check = Check {
        tables,
        layout,
        values: &values,
        rule: tables.rule(),
        arrays,
        general,
        examples: Mutex::new(Vec::new()),
    };
    progress(DeepStep::Deriving);
    check.resolve_general_zeroing()?;
    check.derive_unkept()?;
    progress(DeepStep::Checking { percent: 0 });
    let chunks = chunks(layout);
    let report = |percent| progress(DeepStep::Checking { percent });
    let tenths = Tenths::new(chunks.len(), &report);
    let counts = chunks
        .into_par_iter()
        .map(|range| {
            let counts = check.chunk(range);
            tenths.chunk_done();
            counts
        })
        .try_reduce(Counts::default, |a, b| {
            Ok(Counts {
                checked: a.checked + b.checked,
                cross_checked: a.cross_checked + b.cross_checked,
                inconsistent: a.inconsistent + b.inconsistent,
            })
        })?;
    Ok(DeepReport {
        checked: counts.checked,
        cross_checked: counts.cross_checked,
        inconsistent: counts.inconsistent,
        examples: check.examples.into_inner().expect("lock"),
    })
}

/// The check's work arrays, one cell per position, not per index (a
/// [`TableCells`] slot, which every order of identical pieces shares):
/// each side's stored values, and both sides' seeds in one byte.
struct Arrays {
    stored: TableCells,
    seeds: SeedPairs,
}

impl Arrays {
    /// The slot of the position at `index` of the check's layout.
    #[inline]
    fn slot(&self, index: u64) -> u64 {
        self.stored.locate(index).1
    }

    /// The seed of the position at `index` with `turn` to move.
    #[inline]
    fn seed(&self, turn: Color, index: u64) -> Cell {
        self.seeds.load(self.slot(index), turn)
    }

    /// The stored cell of the position at `index` with `turn` to move.
    #[inline]
    fn stored(&self, turn: Color, index: u64) -> Cell {
        self.stored.load(turn, index)
    }

    /// [`Arrays::stored`], or `None` if the cell was given a value past
    /// the bytes' range since the cells were last published.
    #[inline]
    fn stored_published(&self, turn: Color, index: u64) -> Option<Cell> {
        let slot = self.slot(index);
        self.stored.level_arrays(0).get(turn).load_published(slot)
    }

    /// Store the cell of the position at `index` with `turn` to move.
    #[inline]
    fn store(&self, turn: Color, index: u64, cell: Cell) {
        let slot = self.slot(index);
        self.stored.level_arrays(0).get(turn).store(slot, cell);
    }
}

/// The index space cut into chunks for parallel passes.
fn chunks(layout: &Layout) -> Vec<std::ops::Range<u64>> {
    let size = layout.size();
    (0..size.div_ceil(CHUNK))
        .map(|c| c * CHUNK..((c + 1) * CHUNK).min(size))
        .collect()
}

/// Fill the stored cells from the file, with the seeds' marks:
/// [`Cell::ILLEGAL`] where the seed says illegal, [`Cell::MATED`] where it
/// says mated and the file holds -1, so that the check pass reads one array
/// per successor. A legal position's WDL and DTZ must agree; where they do
/// not (or a mated position is not stored as -1), the cell holds
/// [`Cell::UNKNOWN`] (never a stored value), so the check pass reports it.
/// So do, for now, the wins and losses of the side whose DTZ the file does
/// not keep ([`Check::derive_unkept`] fills them). A win whose seed says a
/// zeroing move wins it as fast as its kind can be gets that DTZ, as a
/// probe finds it, whatever the file holds there.
///
/// Each WDL stream is read chunk by chunk in its own order; the kept
/// side's wins and losses hold their WDL alone until [`read_dtz`] reads
/// the DTZ stream in its own order too (in a mirrored file, where both
/// sides read White's streams, chunks read their DTZ as they go).
fn read_stored(values: &FileValues<'_>, arrays: &Arrays) -> Result<(), ProbeError> {
    let table = values.file();
    let rule = table.header().rule;
    let to_check = to_check(table);
    let check = table.layout(Color::White);
    let dtz_later = (!table.is_mirrored()).then(|| table.dtz_side());
    (0..table.chunk_count())
        .into_par_iter()
        .try_for_each(|chunk| {
            let (turn, range) = table.chunk_range(chunk);
            let later = dtz_later == Some(turn);
            let entries = if later {
                let wdl = values.chunk_wdl(chunk)?;
                wdl.into_iter().map(|wdl| (wdl, None)).collect()
            } else {
                values.chunk(chunk)?
            };
            for (index, (wdl, dtz)) in range.zip(entries) {
                let Some(index) = in_check(table, &to_check, turn, index) else {
                    continue;
                };
                if check.sorted_identical(index) != index {
                    continue;
                }
                let seed = arrays.seed(turn, index);
                let cell = match wdl {
                    _ if seed == Cell::ILLEGAL => Cell::ILLEGAL,
                    Wdl::Draw => stored_cell(seed, wdl, Some(Dtz(0)), rule),
                    _ if later => wdl_only(wdl, rule),
                    _ => stored_cell(seed, wdl, dtz, rule),
                };
                arrays.store(turn, index, cell);
            }
            Ok::<(), ProbeError>(())
        })?;
    arrays.stored.publish();
    for turn in Color::ALL {
        fill_twins(check, table.layout(turn), turn, arrays);
    }
    if let Some(turn) = dtz_later {
        read_dtz(values, turn, arrays)?;
        fill_twins(check, table.dtz_layout(), turn, arrays);
    }
    Ok(())
}

/// The cell [`read_stored`] keeps for a legal position with `seed`, of
/// WDL `wdl` and stored DTZ `dtz` (`None`: not kept).
fn stored_cell(seed: Cell, wdl: Wdl, dtz: Option<Dtz>, rule: Rule) -> Cell {
    let fastest = Dtz::fastest(wdl, rule);
    let dtz = match dtz {
        Some(_) if fastest.is_some_and(|f| seed.zeroing_wins(f, rule)) => fastest,
        dtz => dtz,
    };
    let consistent = dtz.is_some_and(|dtz| Wdl::from_dtz(dtz, rule) == wdl);
    match (seed, dtz) {
        (Cell::ILLEGAL, _) => Cell::ILLEGAL,
        (Cell::MATED, Some(Dtz(-1))) if consistent => Cell::MATED,
        (_, Some(dtz)) if consistent => Cell::dtz(dtz),
        _ => Cell::UNKNOWN,
    }
}

/// A cell that holds a win's or loss's WDL alone, until [`read_dtz`]
/// reads it back: a DTZ of that WDL (a zeroing move's into its flip).
fn wdl_only(wdl: Wdl, rule: Rule) -> Cell {
    Cell::dtz(Dtz::of_move(Successor::Zeroing(wdl.flipped()), rule))
}

/// Read the DTZ stream of `turn`, the kept side, in its own order (each
/// block decoded once): each win or loss [`read_stored`] left holding its
/// WDL alone gets the cell its code gives. A position read twice (the two
/// orientations of kings on the diagonal) gets the same cell again.
fn read_dtz(values: &FileValues<'_>, turn: Color, arrays: &Arrays) -> Result<(), ProbeError> {
    let table = values.file();
    let rule = table.header().rule;
    let stream = table.dtz_layout();
    let to_check = stream.reorder_if_other(table.layout(Color::White));
    let corrupt = |source| ProbeError::bad_file(values.path(), source);
    chunks(stream).into_par_iter().try_for_each(|range| {
        let len = (range.end - range.start) as usize;
        let codes = table.dtz_codes(range.start, len).map_err(corrupt)?;
        for (place, code) in range.zip(codes) {
            if !stream.names_placement(place) || stream.sorted_identical(place) != place {
                continue;
            }
            let index = to_check.as_ref().map_or(place, |to| to.apply(place));
            // Draws, illegal and inconsistent positions are final already,
            // and so is a position read twice whose first read gave it a
            // DTZ past the bytes' range (unpublished until the pass ends).
            let Some(kept) = arrays
                .stored_published(turn, index)
                .and_then(Cell::value)
                .filter(|d| d.0 != 0)
            else {
                continue;
            };
            let wdl = Wdl::from_dtz(kept, rule);
            let dtz = table.signed_dtz(wdl, code);
            let cell = stored_cell(arrays.seed(turn, index), wdl, Some(dtz), rule);
            arrays.store(turn, index, cell);
        }
        Ok::<(), ProbeError>(())
    })?;
    arrays.stored.publish();
    Ok(())
}

/// From each side's index in `table` to the deep check's (White's), where
/// that side's order differs.
fn to_check<S: Source>(table: &TableFile<S>) -> ByColor<Option<Reorder>> {
    ByColor::new_with(|turn| {
        table
            .layout(turn)
            .reorder_if_other(table.layout(Color::White))
    })
}

/// The check's index of the position at `index` of `table` with `turn` to
/// move; `None` for an index that names no placement in an order other
/// than the check's (it has no place there).
fn in_check<S: Source>(
    table: &TableFile<S>,
    to_check: &ByColor<Option<Reorder>>,
    turn: Color,
    index: u64,
) -> Option<u64> {
    match to_check.get(turn) {
        None => Some(index),
        Some(_) if !table.layout(turn).names_placement(index) => None,
        Some(to) => Some(to.apply(index)),
    }
}

/// A pass that reads `turn`'s positions in the order of `from`, other than
/// the check's, reaches one index of the check's per position; the
/// check's other index of the same position (the second orientation of
/// kings on the a1-h8 diagonal) takes that index's cell. The stored cells
/// must be published; they are again after.
fn fill_twins(check: &Layout, from: &Layout, turn: Color, arrays: &Arrays) {
    let (Some(to_from), Some(to_check)) =
        (check.reorder_if_other(from), from.reorder_if_other(check))
    else {
        return;
    };
    chunks(check).into_par_iter().for_each(|range| {
        for index in range.filter(|&i| check.names_placement(i) && check.sorted_identical(i) == i) {
            let reached = to_check.apply(to_from.apply(index));
            if reached != index {
                arrays.store(turn, index, arrays.stored(turn, reached));
            }
        }
    });
    arrays.stored.publish();
}

/// Fill the seeds with what every position's own moves say (the solver's
/// seed, valued from the files), at sorted indices (see the module doc).
/// Returns, per side to move, the sorted indices of positions left
/// to the general path (en passant); their seeds say "legal, not mated"
/// ([`Cell::UNKNOWN`]).
fn seed(
    tables: &Tablebase,
    layout: &Layout,
    arrays: &Arrays,
    progress: &(dyn Fn(u8) + Sync),
) -> Result<ByColor<Vec<u64>>, ProbeError> {
    progress(0);
    let seeder = Seeder::new(layout, tables.rule(), tables, Search::All)?;
    let chunks = chunks(layout);
    let tenths = Tenths::new(chunks.len(), progress);
    let parts = chunks
        .into_par_iter()
        .map(|range| -> Result<ByColor<Vec<u64>>, ProbeError> {
            let mut general = ByColor::<Vec<u64>>::default();
            layout.try_for_each_placement(range, |index, placement| {
                if layout.sorted_identical(index) != index {
                    // Not kept in the file: see the module doc.
                    return Ok(());
                }
                let cells = seeder.cells(&placement.squares)?;
                let mut seed = |turn: Color| match *cells.get(turn) {
                    Some(cell) => cell,
                    None if layout.position(placement, turn).is_none() => Cell::ILLEGAL,
                    None => {
                        general.get_mut(turn).push(index);
                        Cell::UNKNOWN
                    }
                };
                let white = seed(Color::White);
                let black = seed(Color::Black);
                arrays.seeds.store(arrays.slot(index), white, black);
                Ok(())
            })?;
            Ok(general)
        })
        .inspect(|_| tenths.chunk_done())
        .collect::<Result<Vec<_>, ProbeError>>()?;
    Ok(ByColor::new_with(|turn| {
        parts
            .iter()
            .flat_map(|p| p.get(turn).iter().copied())
            .collect()
    }))
}

/// The check pass over filled arrays.
struct Check<'a> {
    tables: &'a Tablebase,
    layout: &'a Layout,
    values: &'a FileValues<'a>,
    rule: Rule,
    arrays: Arrays,
    general: ByColor<Vec<u64>>,
    examples: Mutex<Vec<String>>,
}

impl Check<'_> {
    /// Give the kept wins of the positions left to the general path (a
    /// move of theirs allows an en-passant capture, so the seed does not
    /// value their moves) the DTZ a reader gives them where a zeroing move
    /// wins as fast as a win of their kind can be: the file may keep any
    /// DTZ there, and [`read_stored`] resolves this from the seed for all
    /// other positions. Without it such a position reads as its kept
    /// don't-care value, and so do the positions whose moves reach it.
    ///
    /// The don't-care code may read as no DTZ of a win at all (code 0:
    /// DTZ 0), so [`read_stored`] left such a cell without a value; its
    /// WDL is read from the file again.
    fn resolve_general_zeroing(&self) -> Result<(), ProbeError> {
        let table = self.values.file();
        for turn in Color::ALL {
            let kept = table.is_mirrored() || turn == table.dtz_side();
            self.general
                .get(turn)
                .par_iter()
                .try_for_each(|&index| -> Result<(), ProbeError> {
                    let stored = self.arrays.stored(turn, index).value();
                    let wdl = match stored {
                        Some(dtz) => Wdl::from_dtz(dtz, self.rule),
                        None if kept => self.in_file(index, turn)?.0,
                        // Not kept: derive_unkept values it.
                        None => return Ok(()),
                    };
                    let Some(fastest) = Dtz::fastest(wdl, self.rule).filter(|&f| Some(f) != stored)
                    else {
                        return Ok(());
                    };
                    let placement = self.layout.decode(TableIndex(index));
                    let Some(pos) = self.layout.position(&placement, turn) else {
                        return Ok(());
                    };
                    if won_by_zeroing(self.tables, &pos, wdl)?.is_some() {
                        self.arrays.store(turn, index, Cell::dtz(fastest));
                    }
                    Ok(())
                })?;
            self.arrays.stored.publish();
        }
        Ok(())
    }

    /// Fill the wins and losses of the side whose DTZ the file does not
    /// keep with the DTZ their moves give over the kept side's stored
    /// values, where that agrees with their stored WDL ([`Cell::UNKNOWN`]
    /// where not, which the check pass reports).
    fn derive_unkept(&self) -> Result<(), ProbeError> {
        let values = self.values;
        let table = values.file();
        let turn = table.dtz_side().other();
        let to_check = to_check(table);
        let chunks: Vec<usize> = (0..table.chunk_count())
            .filter(|&chunk| table.chunk_range(chunk).0 == turn)
            .collect();
        chunks.into_par_iter().try_for_each(|chunk| {
            let entries = values.chunk(chunk)?;
            let (_, range) = table.chunk_range(chunk);
            for (index, (wdl, dtz)) in range.zip(entries) {
                let Some(index) = in_check(table, &to_check, turn, index) else {
                    continue;
                };
                if self.layout.sorted_identical(index) != index {
                    continue;
                }
                let seed = self.arrays.seed(turn, index);
                if dtz.is_some() || seed == Cell::ILLEGAL {
                    continue;
                }
                let placement = self.layout.decode(TableIndex(index));
                let derived = if self.general.get(turn).binary_search(&index).is_ok() {
                    self.through_shakmaty(&placement, turn)?
                } else {
                    self.by_index(&placement, index, turn, seed)
                };
                let cell = match derived {
                    Some(dtz) if Wdl::from_dtz(dtz, self.rule) == wdl => match seed {
                        Cell::MATED => Cell::MATED,
                        _ => Cell::dtz(dtz),
                    },
                    _ => Cell::UNKNOWN,
                };
                self.arrays.store(turn, index, cell);
            }
            Ok::<(), ProbeError>(())
        })?;
        self.arrays.stored.publish();
        fill_twins(self.layout, table.layout(turn), turn, &self.arrays);
        Ok(())
    }

    fn chunk(&self, range: std::ops::Range<u64>) -> Result<Counts, ProbeError> {
        let mut counts = Counts::default();
        self.layout
            .try_for_each_placement(range, |index, placement| {
                if self.layout.sorted_identical(index) != index {
                    return Ok(());
                }
                for turn in Color::ALL {
                    let seed = self.arrays.seed(turn, index);
                    if seed == Cell::ILLEGAL {
                        continue;
                    }
                    // Its value (mated: -1), `None` where the file disagrees
                    // with itself.
                    let stored = self.arrays.stored(turn, index).value();
                    counts.checked += 1;
                    let general = self.general.get(turn).binary_search(&index).is_ok();
                    let recomputed = if general {
                        self.through_shakmaty(placement, turn)?
                    } else {
                        self.by_index(placement, index, turn, seed)
                    };
                    let mut agrees = recomputed.is_some() && recomputed == stored;
                    if index % SAMPLE_EVERY == 0 && !general {
                        counts.cross_checked += 1;
                        agrees &= self.through_shakmaty(placement, turn)? == stored;
                    }
                    if !agrees {
                        counts.inconsistent += 1;
                        self.report(placement, index, turn, recomputed)?;
                    }
                }
                Ok(())
            })?;
        Ok(counts)
    }

    /// The DTZ of a legal position from its seed and the stored values of
    /// its quiet successors (`None`: an unknown seed without a legal quiet
    /// move, which the seed never produces).
    fn by_index(&self, placement: &Placement, index: u64, turn: Color, seed: Cell) -> Option<Dtz> {
        if !seed.is_unknown() {
            return seed.value();
        }
        let mut best = seed.zeroing_score(self.rule);
        self.layout
            .quiet_moves(placement, TableIndex(index), turn, |next| {
                let successor = match self.arrays.stored(turn.other(), next) {
                    Cell::ILLEGAL => return true,
                    Cell::MATED => Successor::Mate,
                    // A successor the file disagrees about is reported
                    // itself.
                    cell => Successor::Quiet(cell.value().unwrap_or(Dtz(0))),
                };
                let score = Dtz::of_move(successor, self.rule);
                best = Some(best.map_or(score, |b| b.prefer(score)));
                true
            });
        best
    }

    /// The DTZ of a legal position through shakmaty's move generation and
    /// the probe API.
    fn through_shakmaty(
        &self,
        placement: &Placement,
        turn: Color,
    ) -> Result<Option<Dtz>, ProbeError> {
        match self.layout.position(placement, turn) {
            Some(pos) => recompute(self.tables, &pos).map(Some),
            None => Ok(None),
        }
    }

    /// What the file holds for the position at `index` of the check's
    /// layout with `turn` to move: its WDL, raised by its captures as a
    /// probe reads it, and its DTZ as the file keeps it (`None`: not kept),
    /// as read, whether or not the two agree.
    fn in_file(&self, index: u64, turn: Color) -> Result<(Wdl, Option<Dtz>), ProbeError> {
        let table = self.values.file();
        let corrupt = |source| ProbeError::bad_file(self.values.path(), source);
        // The file numbers this side in its own order.
        let in_file = TableIndex(self.layout.reorder_to(table.layout(turn)).apply(index));
        let file_placement = table.layout(turn).decode(in_file);
        let wdl = table.kept_wdl(turn, in_file).map_err(corrupt)?;
        let wdl = self.values.raised(wdl, &file_placement, turn)?;
        let dtz = table.dtz_given(turn, in_file, wdl).map_err(corrupt)?;
        Ok((wdl, dtz))
    }

    /// Keep a description of an inconsistent position.
    fn report(
        &self,
        placement: &Placement,
        index: u64,
        turn: Color,
        recomputed: Option<Dtz>,
    ) -> Result<(), ProbeError> {
        let mut kept = self.examples.lock().expect("lock");
        if kept.len() >= MAX_REPORTED {
            return Ok(());
        }
        let (wdl, dtz) = self.in_file(index, turn)?;
        let dtz = dtz.map_or_else(|| "not kept".to_owned(), |d| d.to_string());
        let fen = self.layout.position(placement, turn).map_or_else(
            || format!("index {index} ({turn} to move)"),
            |pos| {
                shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string()
            },
        );
        let recomputed = recomputed.map_or_else(|| "nothing".to_owned(), |d| format!("DTZ {d}"));
        kept.push(format!(
            "{fen}: stored DTZ {dtz} WDL {}, recomputed {recomputed}",
            wdl.name()
        ));
        Ok(())
    }
}

/// The DTZ of `pos` from the stored values of its successors.
fn recompute(tables: &Tablebase, pos: &Chess) -> Result<Dtz, ProbeError> {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return Ok(if pos.is_check() { Dtz(-1) } else { Dtz(0) });
    }
    let mut best: Option<Dtz> = None;
    for m in &moves {
        let score = score_move(tables, pos, m)?;
        best = Some(best.map_or(score, |b| b.prefer(score)));
    }
    Ok(best.expect("at least one move"))
}

#[cfg(test)]
mod tests {
    use std::fs::{self, File};

    use shakmaty::Color;

    use super::*;
    use crate::{
        format::{OrderSearch, SolvedValues, write_table},
        generate::{
            solve::{SolveOptions, solve},
            stats::stats,
            table::{Table, TableSet},
        },
        value::Rule,
    };

    /// Write KQvK into a temporary directory, optionally with one value
    /// changed, and deep-check it (its work arrays in `work_dir` if given).
    fn check_kqvk(tamper: bool, work_dir: Option<&Path>) -> DeepReport {
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
        write_table(&table, &stats(&table), OrderSearch::Sampled, file, &|_| {}).expect("write");
        check_written(dir.path(), &material, work_dir)
    }

    /// The report of a table written with a win in 5 changed to 7 names
    /// that position (predecessors that relied on it may be reported too).
    fn assert_change_found(report: &DeepReport) {
        assert!(report.inconsistent >= 1);
        assert!(
            report
                .examples
                .iter()
                .any(|e| e.ends_with("stored DTZ 7 WDL win, recomputed DTZ 5")),
            "{:?}",
            report.examples
        );
    }

    /// Deep-check `material`, written in `dir` with its sub-tables, whose
    /// file must keep White's DTZ (where the tests change a value).
    fn check_written(dir: &Path, material: &Material, work_dir: Option<&Path>) -> DeepReport {
        let tables = Tablebase::open(dir, Rule::Fifty).expect("open");
        let kept = tables.table(material).expect("written").dtz_side();
        assert_eq!(
            kept,
            Color::White,
            "the changed value is one the file keeps"
        );
        deep_check(&tables, material, work_dir, &|_| {}).expect("deep check runs")
    }

    #[test]
    fn a_solved_table_is_consistent() {
        let report = check_kqvk(false, None);
        assert!(report.checked > 40_000);
        // One index in SAMPLE_EVERY, both sides to move where legal.
        assert_eq!(report.cross_checked, 47);
        assert_eq!(report.inconsistent, 0, "{:?}", report.examples);
    }

    #[test]
    fn a_wrong_value_is_found() {
        assert_change_found(&check_kqvk(true, None));
    }

    /// `tables` written in order (sub-tables first) into a temporary
    /// directory; with `change`, White's value of the last one at one
    /// sorted index (which readers also read for identical pieces
    /// swapped) is written as 7 where the table says 5. The last one
    /// deep-checked.
    fn check_changed(tables: &[&str], change: bool) -> DeepReport {
        /// A solved table with one value changed.
        struct Changed<'a> {
            table: &'a Table,
            at: Option<u64>,
        }
        impl SolvedValues for Changed<'_> {
            fn layout(&self) -> &Layout {
                self.table.layout()
            }
            fn rule(&self) -> Rule {
                self.table.rule()
            }
            fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
                match (turn, self.at) {
                    (Color::White, Some(at)) if at == index => Some(Dtz(7)),
                    _ => self.table.value(turn, index),
                }
            }
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let mut set = TableSet::new();
        let last = tables.last().expect("a table to check");
        for name in tables {
            let material: Material = name.parse().expect("material");
            let table = solve(material, &SolveOptions::default(), &set, &|_| {}).expect("solves");
            let layout = table.layout();
            let at = (change && name == last).then(|| {
                (0..layout.size())
                    .find(|&i| {
                        layout.sorted_identical(i) == i
                            && table.value(Color::White, i) == Some(Dtz(5))
                    })
                    .expect("a sorted index won in 5")
            });
            let changed = Changed { table: &table, at };
            let file = File::create(dir.path().join(format!("{name}.dtz50"))).expect("create");
            write_table(
                &changed,
                &stats(&table),
                OrderSearch::Sampled,
                file,
                &|_| {},
            )
            .expect("write");
            set.insert(table);
        }
        let material = last.parse().expect("material");
        if tables == ["KRvK", "KNvK", "KRNvK"] {
            let opened = Tablebase::open(dir.path(), Rule::Fifty).expect("open");
            let file = opened.table(&material).expect("written");
            assert_ne!(
                file.dtz_layout().order(),
                file.layout(Color::White).order(),
                "KRNvK's DTZ stream keeps another order than White's WDL"
            );
        }
        check_written(dir.path(), &material, None)
    }

    /// KRRvK (its rooks identical), with its sub-table KRvK.
    fn check_krrvk(change: bool) -> DeepReport {
        check_changed(&["KRvK", "KRRvK"], change)
    }

    /// The DTZ stream, read in its own order, is checked as the WDL
    /// streams are: KRNvK's puts the knight first.
    #[test]
    fn a_wrong_value_in_a_dtz_stream_of_another_order_is_found() {
        let tables = ["KRvK", "KNvK", "KRNvK"];
        let report = check_changed(&tables, false);
        assert_eq!(report.inconsistent, 0, "{:?}", report.examples);
        assert_change_found(&check_changed(&tables, true));
    }

    /// A table with identical pieces is checked at its sorted indices,
    /// each legal position once, and a wrong value there is found.
    #[test]
    fn identical_pieces_are_checked_once_per_position() {
        let report = check_krrvk(false);
        assert_eq!(report.inconsistent, 0, "{:?}", report.examples);
        let layout = Layout::new("KRRvK".parse().expect("material"));
        let legal: u64 = (0..layout.size())
            .filter(|&i| layout.names_placement(i) && layout.sorted_identical(i) == i)
            .map(|i| {
                let placement = layout.decode(TableIndex(i));
                Color::ALL
                    .iter()
                    .filter(|&&turn| layout.position(&placement, turn).is_some())
                    .count() as u64
            })
            .sum();
        assert_eq!(report.checked, legal);
        assert_change_found(&check_krrvk(true));
    }

    /// Work arrays in a work directory give the same counts, the found
    /// wrong values included, and leave nothing there.
    #[test]
    fn a_work_dir_gives_the_same_counts_and_is_left_empty() {
        let dir = tempfile::tempdir().expect("temp dir");
        // The examples are the first found by parallel passes: compare
        // the counts.
        let counts = |r: DeepReport| (r.checked, r.cross_checked, r.inconsistent);
        for tamper in [false, true] {
            assert_eq!(
                counts(check_kqvk(tamper, Some(dir.path()))),
                counts(check_kqvk(tamper, None))
            );
        }
        assert_eq!(fs::read_dir(dir.path()).expect("lists").count(), 0);
    }
}
