//! Solved tables held in memory: what [`solve`](fn@crate::generate::solve)
//! returns, a set of them that the solver and tests read sub-table values
//! from ([`TableSet`], a [`StoredValues`] store), and a solved table as the
//! builder writes it ([`Seeded`]: with the wins its zeroing moves decide,
//! which the file need not keep).

use std::{collections::HashMap, ops::Range};

use rayon::prelude::*;
use std::convert::Infallible;

use shakmaty::{Board, ByColor, Color, Role};

use crate::{
    format::SolvedValues,
    generate::{
        cell::Cell,
        cells::{TableBits, TableCells},
        seed::{Search, Seeder},
    },
    index::{Layout, Placement, TableIndex},
    material::Material,
    mmap::prefetch,
    probe::{IndexedValues, KeptDtz, KeptWdl, ProbeError, StoredValues},
    value::{Dtz, Rule, Wdl},
};

/// A solved table held in memory: one cell per position and side to move.
#[derive(Debug)]
pub struct Table {
    layout: Layout,
    rule: Rule,
    cells: TableCells,
    /// By side to move and position: see [`Table::zeroing_reaches`].
    zeroing_reaches: ByColor<TableBits>,
}

impl Table {
    /// Wrap solved cells, with the solver's record of which positions'
    /// best zeroing moves reach their WDL.
    pub(crate) fn new(
        layout: Layout,
        rule: Rule,
        cells: TableCells,
        zeroing_reaches: ByColor<TableBits>,
    ) -> Table {
        Table {
            layout,
            rule,
            cells,
            zeroing_reaches,
        }
    }

    /// Whether the best zeroing move (capture, pawn move) of the position
    /// at `index` gives the side to move the WDL of the position's final
    /// value; false for illegal positions and those without zeroing moves.
    /// The solver records it as it decides each position, from what the
    /// position's seed said its zeroing moves guarantee.
    pub(crate) fn zeroing_reaches(&self, turn: Color, index: u64) -> bool {
        self.zeroing_reaches
            .get(turn)
            .get(self.cells.table_slot(index))
    }

    /// Start loading the bit [`Table::zeroing_reaches`] reads into the
    /// cache.
    fn prefetch_zeroing_reaches(&self, turn: Color, index: u64) {
        self.zeroing_reaches
            .get(turn)
            .prefetch(self.cells.table_slot(index));
    }

    /// The index scheme.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The rule the table was solved for.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The final DTZ at `index` with `turn` to move (`None`: no legal
    /// position there).
    pub fn dtz(&self, turn: Color, index: TableIndex) -> Option<Dtz> {
        self.cell(turn, index).value()
    }

    /// The cell at `index` with `turn` to move.
    pub(crate) fn cell(&self, turn: Color, index: TableIndex) -> Cell {
        self.cells.load(turn, index.0)
    }

    /// Append the cells of the indices in `range` with `turn` to move to
    /// `out`, in order ([`TableCells::load_range`]): what [`Table::cell`]
    /// gives each, read a run at a time.
    pub(crate) fn cells_in(&self, turn: Color, range: Range<u64>, out: &mut Vec<Cell>) {
        self.cells.load_range(turn, range, out);
    }

    /// Overwrite one cell (tests corrupt tables this way).
    #[cfg(test)]
    pub(crate) fn set_cell(&self, turn: Color, index: TableIndex, cell: Cell) {
        let (cells, local) = self.cells.open_array(turn, index.0);
        cells.store(local, cell);
        cells.publish();
    }

    /// The stored WDL of a board of this table's material (either colours):
    /// exact, held in memory.
    ///
    /// # Errors
    /// As [`Table::stored_dtz`].
    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        let dtz = self.stored_dtz(board, turn)?;
        Ok(KeptWdl::Exact(Wdl::from_dtz(dtz, self.rule)))
    }

    /// The stored DTZ of a board of this table's material (either colours).
    ///
    /// # Errors
    /// If the material is not this table's, or the cell holds no value.
    pub fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, ProbeError> {
        let material = self.layout.material();
        let (turn, index) = self
            .layout
            .locate(board, turn)
            .ok_or(ProbeError::MissingTable {
                material,
                dir: None,
            })?;
        self.cell(turn, index)
            .value()
            .ok_or(ProbeError::NoValue { material })
    }
}

impl SolvedValues for Table {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn rule(&self) -> Rule {
        self.rule
    }

    fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
        self.cells.load(turn, index).value()
    }

    fn distinct_values(&self, turn: Color) -> Option<Vec<Dtz>> {
        let cells = self.cells.distinct(turn)?;
        Some(cells.into_iter().filter_map(Cell::value).collect())
    }
}

impl IndexedValues for Table {
    fn side_layout(&self, _: Color) -> &Layout {
        &self.layout
    }

    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, ProbeError> {
        let material = self.layout.material();
        let dtz = self
            .cell(turn, index)
            .value()
            .ok_or(ProbeError::NoValue { material })?;
        Ok(Wdl::from_dtz(dtz, self.rule))
    }
}

/// Solved tables by material, as a [`StoredValues`] store.
#[derive(Debug, Default)]
pub struct TableSet {
    tables: HashMap<Material, Table>,
    rule: Option<Rule>,
}

impl TableSet {
    /// An empty set.
    pub fn new() -> TableSet {
        TableSet::default()
    }

    /// Add a solved table (replacing one of the same material).
    ///
    /// # Panics
    /// If its rule differs from the tables already in the set.
    pub fn insert(&mut self, table: Table) {
        let rule = *self.rule.get_or_insert(table.rule);
        assert_eq!(rule, table.rule, "one rule per table set");
        self.tables.insert(table.layout.material(), table);
    }

    /// The table of a normalised material.
    pub fn get(&self, material: &Material) -> Option<&Table> {
        self.tables.get(material)
    }

    /// `material` and its sub-tables solved under `options`, for tests.
    #[cfg(test)]
    pub(crate) fn solved(material: Material, options: &super::SolveOptions) -> TableSet {
        let mut set = TableSet::new();
        for sub in Material::with_dependencies(&[material]) {
            set.insert(super::solve(sub, options, &set, &|_| {}).expect("solves"));
        }
        set
    }

    /// The table of `board`'s material.
    fn table_of(&self, board: &Board) -> Result<&Table, ProbeError> {
        let material = Material::from_board(board).normalized();
        self.tables.get(&material).ok_or(ProbeError::MissingTable {
            material,
            dir: None,
        })
    }
}

impl StoredValues for TableSet {
    fn rule(&self) -> Rule {
        self.rule.unwrap_or(Rule::Fifty)
    }

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError> {
        match self.tables.get(material) {
            Some(table) => Ok(table),
            None => Err(ProbeError::MissingTable {
                material: *material,
                dir: None,
            }),
        }
    }

    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        self.table_of(board)?.kept_wdl(board, turn)
    }

    fn kept_dtz(&self, board: &Board, turn: Color, _: Wdl) -> Result<KeptDtz, ProbeError> {
        self.table_of(board)?
            .stored_dtz(board, turn)
            .map(KeptDtz::Exact)
    }
}

/// A solved table and the tables its zeroing moves reach, as one store.
pub(crate) struct WithSubtables<'a> {
    /// The solved table.
    pub table: &'a Table,
    /// Every other table.
    pub subtables: &'a dyn StoredValues,
}

impl StoredValues for WithSubtables<'_> {
    fn rule(&self) -> Rule {
        self.table.rule
    }

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError> {
        if *material == self.table.layout.material() {
            Ok(self.table)
        } else {
            self.subtables.indexed(material)
        }
    }

    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        if Material::from_board(board).normalized() == self.table.layout.material() {
            self.table.kept_wdl(board, turn)
        } else {
            self.subtables.kept_wdl(board, turn)
        }
    }

    fn kept_dtz(&self, board: &Board, turn: Color, wdl: Wdl) -> Result<KeptDtz, ProbeError> {
        if Material::from_board(board).normalized() == self.table.layout.material() {
            self.table.stored_dtz(board, turn).map(KeptDtz::Exact)
        } else {
            self.subtables.kept_dtz(board, turn, wdl)
        }
    }
}

/// A solved table as the builder writes it: its values, the positions
/// whose best capture reaches their WDL ([`SolvedValues::capture_reaches`])
/// and the wins that a zeroing move decides
/// ([`SolvedValues::zeroing_decides`]). Both follow from what the solver
/// recorded ([`Table::zeroing_reaches`]): a win is decided when it is as
/// fast as its kind can be and its best zeroing move reaches its WDL (so
/// scores it); without pawns every zeroing move is a capture, and with
/// pawns each position whose best zeroing move reaches its WDL searches
/// its captures again, from the sub-tables, for one that reaches it
/// ([`Seeder::capture_reaches`]), once, up front and in parallel, a bit
/// per position and side to move (the writer reads each position more
/// than once).
pub(crate) struct Seeded<'a> {
    table: &'a Table,
    /// For tables with pawns: by side to move, bit `index % 64` of word
    /// `index / 64`, whether the best capture reaches the position's WDL.
    captured: Option<ByColor<Vec<u64>>>,
}

impl<'a> Seeded<'a> {
    /// `store` holds the table and its sub-tables.
    ///
    /// # Errors
    /// A sub-table that `store` does not have.
    pub(crate) fn new(store: &'a WithSubtables<'a>) -> Result<Seeded<'a>, ProbeError> {
        let table = store.table;
        let layout = &table.layout;
        if !layout.pieces().iter().any(|p| p.role == Role::Pawn) {
            return Ok(Seeded {
                table,
                captured: None,
            });
        }
        let seeder = Seeder::new(layout, table.rule, store, Search::Captures)?;
        let n = layout.size();
        let captured = ByColor::new_with(|turn| {
            (0..n.div_ceil(64))
                .into_par_iter()
                .map_init(Vec::new, |cells, word| {
                    let range = word * 64..(word * 64 + 64).min(n);
                    cells.clear();
                    table.cells_in(turn, range.clone(), cells);
                    let mut bits = 0;
                    let Ok(()) = layout.try_for_each_placement(range, |index, placement| {
                        let cell = cells[(index % 64) as usize];
                        if capture_reaches(table, &seeder, turn, index, cell, placement) {
                            bits |= 1 << (index % 64);
                        }
                        Ok::<(), Infallible>(())
                    });
                    bits
                })
                .collect()
        });
        Ok(Seeded {
            table,
            captured: Some(captured),
        })
    }
}

/// Whether the best capture of the position at `index` (in a table with
/// pawns), whose cell is `cell`, reaches its WDL; searched only where the
/// best zeroing move does (elsewhere no capture can). A sub-table that
/// fails to read now (it was read to solve this table) leaves the value
/// stored.
fn capture_reaches(
    table: &Table,
    seeder: &Seeder<'_>,
    turn: Color,
    index: u64,
    cell: Cell,
    placement: &Placement,
) -> bool {
    if !table.zeroing_reaches(turn, index) {
        return false;
    }
    let Some(dtz) = cell.value() else {
        return false;
    };
    seeder.capture_reaches(&placement.squares, turn, Wdl::from_dtz(dtz, table.rule))
}

impl SolvedValues for Seeded<'_> {
    fn layout(&self) -> &Layout {
        &self.table.layout
    }

    fn rule(&self) -> Rule {
        self.table.rule
    }

    fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
        SolvedValues::value(self.table, turn, index)
    }

    fn distinct_values(&self, turn: Color) -> Option<Vec<Dtz>> {
        self.table.distinct_values(turn)
    }

    fn zeroing_decides(&self, turn: Color, index: u64, dtz: Dtz) -> bool {
        let rule = self.table.rule;
        Dtz::fastest(Wdl::from_dtz(dtz, rule), rule) == Some(dtz)
            && self.table.zeroing_reaches(turn, index)
    }

    fn reads_in_order(&self) -> bool {
        self.table.cells.is_packed()
    }

    fn prefetch(&self, turn: Color, index: u64) {
        self.table.cells.prefetch(turn, index);
        match &self.captured {
            None => self.table.prefetch_zeroing_reaches(turn, index),
            Some(captured) => prefetch(&captured.get(turn)[(index / 64) as usize]),
        }
    }

    fn capture_reaches(&self, turn: Color, index: u64) -> bool {
        match &self.captured {
            None => self.table.zeroing_reaches(turn, index),
            Some(captured) => captured.get(turn)[(index / 64) as usize] & 1 << (index % 64) != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use shakmaty::{Chess, Move, Position};

    use super::*;
    use crate::{
        format::{OrderSearch, TableFile, WriteStep, write_table},
        generate::{SolveOptions, stats::stats},
        probe::resolve_wdl,
    };

    /// A table read in the solver's order within blocks (as the writer
    /// reads packed tables).
    struct ReadInOrder<'a>(&'a Table);

    impl SolvedValues for ReadInOrder<'_> {
        fn layout(&self) -> &Layout {
            &self.0.layout
        }

        fn rule(&self) -> Rule {
            self.0.rule
        }

        fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
            SolvedValues::value(self.0, turn, index)
        }

        fn reads_in_order(&self) -> bool {
            true
        }
    }

    /// The writer reads a packed table's values in the solver's order,
    /// block by block, wherever the file's order moves digits: the bytes
    /// are those of reading each position where it falls. KNvKP's file
    /// moves its kings (so its segments, sample windows and estimate
    /// windows, aligned or not, are all read by blocks); KRvKB's moves
    /// its free pieces only. The writer tells each step as it starts.
    #[test]
    fn reading_in_the_solvers_order_writes_the_same_bytes() {
        for (name, order) in [("KNvKP", vec![2, 1, 0]), ("KRvKB", vec![0, 1, 3, 2])] {
            let material: Material = name.parse().expect("material");
            let set = TableSet::solved(material, &SolveOptions::default());
            let table = set.get(&material).expect("solved");
            let stats = stats(table);
            let steps = Mutex::new(Vec::new());
            let scattered = write_table(table, &stats, OrderSearch::Sampled, Vec::new(), &|s| {
                steps.lock().expect("lock").push(s)
            })
            .expect("writes");
            // KNvKP (over 2^22 positions per side) is encoded a stream at a
            // time, KRvKB all at once.
            let mut expected = vec![WriteStep::ChoosingOrders, WriteStep::BuildingGrammars];
            match name {
                "KNvKP" => {
                    expected.extend((0..3).map(|done| WriteStep::Encoding { done, streams: 3 }))
                }
                _ => expected.push(WriteStep::EncodingAtOnce { streams: 3 }),
            }
            assert_eq!(steps.into_inner().expect("lock"), expected, "{name}");
            let in_order = write_table(
                &ReadInOrder(table),
                &stats,
                OrderSearch::Sampled,
                Vec::new(),
                &|_| {},
            )
            .expect("writes");
            assert!(scattered == in_order, "{name}: the bytes differ");
            let file = TableFile::new(scattered).expect("reads");
            assert_eq!(file.header().dtz_order, order, "{name}: digits moved");
        }
    }

    /// The solver's record ([`Table::zeroing_reaches`]) against a search:
    /// every legal zeroing move of a position (shakmaty's move generation),
    /// each valued through the probe API on the solved tables, the best
    /// compared with the position's final WDL. A pawn table (pushes,
    /// promotions, captures both ways, en passant after a double push) and
    /// a pawnless one, a fixed stride of their positions.
    #[test]
    fn the_record_of_zeroing_moves_matches_a_search() {
        for name in ["KRvKP", "KBNvK"] {
            let material: Material = name.parse().expect("material");
            let set = TableSet::solved(material, &SolveOptions::default());
            let table = set.get(&material).expect("solved");
            let layout = table.layout();
            let rule = table.rule();
            let mut reached = [0u64; 2];
            for index in (0..layout.size()).step_by(97) {
                let placement = layout.decode(TableIndex(index));
                for turn in Color::ALL {
                    let Some(dtz) = table.dtz(turn, TableIndex(index)) else {
                        assert!(!table.zeroing_reaches(turn, index), "{name} {index}");
                        continue;
                    };
                    let pos = layout.position(&placement, turn).expect("legal");
                    let zeroing = pos.legal_moves();
                    let best = best_after(&set, &pos, zeroing.iter().filter(|m| m.is_zeroing()));
                    let reaches = best == Some(Wdl::from_dtz(dtz, rule));
                    assert_eq!(
                        table.zeroing_reaches(turn, index),
                        reaches,
                        "{name} {turn:?} {index}: {dtz:?}, best zeroing {best:?}"
                    );
                    reached[usize::from(reaches)] += 1;
                }
            }
            assert!(reached.iter().all(|&n| n > 1_000), "{name}: {reached:?}");
        }
    }

    /// The best WDL that one of `moves` gives the side to move in `pos`,
    /// probed in `set` (`None`: no move).
    fn best_after<'m>(
        set: &TableSet,
        pos: &Chess,
        moves: impl Iterator<Item = &'m Move>,
    ) -> Option<Wdl> {
        moves
            .map(|m| {
                let mut after = pos.clone();
                after.play_unchecked(*m);
                resolve_wdl(set, &after).expect("probes").flipped()
            })
            .max()
    }

    /// In a table with pawns, the writer's record of the positions whose
    /// best capture reaches their value matches a search of their
    /// captures (the seeder's search stops at the first that reaches it).
    #[test]
    fn the_record_of_deciding_captures_matches_a_search() {
        let material: Material = "KRvKP".parse().expect("material");
        let set = TableSet::solved(material, &SolveOptions::default());
        let table = set.get(&material).expect("solved");
        let store = WithSubtables {
            table,
            subtables: &set,
        };
        let seeded = Seeded::new(&store).expect("sub-tables");
        let layout = table.layout();
        let mut reached = [0u64; 2];
        for index in (0..layout.size()).step_by(89) {
            let placement = layout.decode(TableIndex(index));
            for turn in Color::ALL {
                let Some(dtz) = table.dtz(turn, TableIndex(index)) else {
                    assert!(!seeded.capture_reaches(turn, index), "{index}");
                    continue;
                };
                let pos = layout.position(&placement, turn).expect("legal");
                let best = best_after(&set, &pos, pos.capture_moves().iter());
                let reaches = best == Some(Wdl::from_dtz(dtz, table.rule()));
                assert_eq!(
                    seeded.capture_reaches(turn, index),
                    reaches,
                    "{turn:?} {index}: {dtz:?}, best capture {best:?}"
                );
                reached[usize::from(reaches)] += 1;
            }
        }
        assert!(reached.iter().all(|&n| n > 500), "{reached:?}");
    }
}
