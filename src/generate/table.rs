//! Solved tables held in memory: what [`solve`](crate::generate::solve)
//! returns, a set of them that the solver and tests read sub-table values
//! from ([`TableSet`], a [`StoredValues`] store), and a solved table as the
//! builder writes it ([`Seeded`]: with the wins its zeroing moves decide,
//! which the file need not keep).

use std::collections::HashMap;

use rayon::prelude::*;
use std::convert::Infallible;

use shakmaty::{Board, ByColor, Color, Role};

use crate::{
    format::SolvedValues,
    generate::{
        cell::Cell,
        cells::TableCells,
        seed::{Reads, Search, Seeder},
    },
    index::{Layout, Placement, TableIndex},
    material::Material,
    probe::{IndexedValues, KeptDtz, KeptWdl, ProbeError, StoredValues},
    value::{Dtz, Rule, Wdl},
};

/// A solved table held in memory: one cell per position and side to move.
#[derive(Debug)]
pub struct Table {
    layout: Layout,
    rule: Rule,
    cells: TableCells,
}

impl Table {
    /// Wrap solved cells.
    pub(crate) fn new(layout: Layout, rule: Rule, cells: TableCells) -> Table {
        Table {
            layout,
            rule,
            cells,
        }
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
}

impl IndexedValues for Table {
    fn layout(&self) -> &Layout {
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
/// ([`SolvedValues::zeroing_decides`]). Both are found by seeding the
/// positions again from the sub-tables: captures for every position, and
/// in a table with pawns every zeroing move of a win as fast as its kind
/// can be (without pawns, the captures are all its zeroing moves). The
/// writer reads each position more than once, so the answers are computed
/// once, up front and in parallel, one bit each per position and side to
/// move.
pub(crate) struct Seeded<'a> {
    table: &'a Table,
    bits: ByColor<Vec<Bits>>,
}

/// The answers for 64 consecutive positions, bit `index % 64`.
#[derive(Clone, Copy, Default)]
struct Bits {
    captured: u64,
    decided: u64,
}

impl<'a> Seeded<'a> {
    /// `store` holds the table and its sub-tables.
    ///
    /// # Errors
    /// A sub-table that `store` does not have.
    pub(crate) fn new(store: &'a WithSubtables<'a>) -> Result<Seeded<'a>, ProbeError> {
        let table = store.table;
        let layout = &table.layout;
        let captures = Seeder::new(
            layout,
            table.rule,
            store,
            Reads::KeepChunks,
            Search::Captures,
        )?;
        let pawns = layout.pieces().iter().any(|p| p.role == Role::Pawn);
        let zeroing = if pawns {
            Some(Seeder::new(
                layout,
                table.rule,
                store,
                Reads::Probe,
                Search::All,
            )?)
        } else {
            None
        };
        let n = layout.size();
        let bits = ByColor::new_with(|turn| {
            (0..n.div_ceil(64))
                .into_par_iter()
                .map(|word| {
                    let range = word * 64..(word * 64 + 64).min(n);
                    let mut bits = Bits::default();
                    let Ok(()) = layout.try_for_each_placement(range, |index, placement| {
                        let (captured, decided) =
                            seed_again(table, &captures, zeroing.as_ref(), turn, index, placement);
                        bits.captured |= u64::from(captured) << (index % 64);
                        bits.decided |= u64::from(decided) << (index % 64);
                        Ok::<(), Infallible>(())
                    });
                    bits
                })
                .collect()
        });
        Ok(Seeded { table, bits })
    }

    fn bits(&self, turn: Color, index: u64) -> Bits {
        self.bits.get(turn)[(index / 64) as usize]
    }
}

/// Whether the best capture of the position at `index` reaches its WDL,
/// and whether it is a win that a zeroing move decides: the best capture
/// does, or a seed's best zeroing move scores it (`zeroing`: the table's
/// seeder, for tables with pawns). A sub-table that fails to read now (it
/// was read to solve this table) leaves the value stored.
fn seed_again(
    table: &Table,
    captures: &Seeder<'_>,
    zeroing: Option<&Seeder<'_>>,
    turn: Color,
    index: u64,
    placement: &Placement,
) -> (bool, bool) {
    let rule = table.rule;
    let Some(dtz) = table.cells.load(turn, index).value() else {
        return (false, false);
    };
    let wdl = Wdl::from_dtz(dtz, rule);
    let best = captures
        .best_capture(&placement.squares, turn)
        .ok()
        .flatten();
    let captured = best == Some(wdl);
    let fastest = Dtz::fastest(wdl, rule) == Some(dtz);
    let decided = fastest
        && (captured
            || zeroing.is_some_and(|seeder| {
                seeder
                    .cell(&placement.squares, turn)
                    .ok()
                    .flatten()
                    .is_some_and(|seed| seed.zeroing_wins(dtz, rule))
            }));
    (captured, decided)
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

    fn zeroing_decides(&self, turn: Color, index: u64) -> bool {
        self.bits(turn, index).decided & 1 << (index % 64) != 0
    }

    fn capture_reaches(&self, turn: Color, index: u64) -> bool {
        self.bits(turn, index).captured & 1 << (index % 64) != 0
    }
}
