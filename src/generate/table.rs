//! Solved tables held in memory: what [`solve`](crate::generate::solve)
//! returns, a set of them that the solver and tests read sub-table values
//! from ([`TableSet`], a [`StoredValues`] store), and a solved table as the
//! builder writes it ([`Seeded`]: with the wins its zeroing moves decide,
//! which the file need not keep).

use std::collections::HashMap;

use rayon::prelude::*;
use shakmaty::{Board, ByColor, Color};

use crate::{
    format::SolvedValues,
    generate::{
        cell::Cell,
        cells::TableCells,
        seed::{Reads, Seeder},
    },
    index::{Layout, TableIndex},
    material::Material,
    probe::{IndexedValues, KeptDtz, ProbeError, StoredValues},
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

    fn values_from(&self, turn: Color, start: u64) -> Box<dyn Iterator<Item = Option<Dtz>> + '_> {
        Box::new((start..self.layout.size()).map(move |index| self.cells.load(turn, index).value()))
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

    fn kept_dtz(&self, board: &Board, turn: Color) -> Result<KeptDtz, ProbeError> {
        let material = Material::from_board(board).normalized();
        self.tables
            .get(&material)
            .ok_or(ProbeError::MissingTable {
                material,
                dir: None,
            })?
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

    fn kept_dtz(&self, board: &Board, turn: Color) -> Result<KeptDtz, ProbeError> {
        if Material::from_board(board).normalized() == self.table.layout.material() {
            self.table.stored_dtz(board, turn).map(KeptDtz::Exact)
        } else {
            self.subtables.kept_dtz(board, turn)
        }
    }
}

/// A solved table as the builder writes it: its values, and which of its
/// wins a zeroing move decides ([`SolvedValues::zeroing_decides`]), found
/// by seeding those positions again (the solver's seed pass, on the wins
/// that are as fast as their kind can be). The writer reads each position
/// more than once, so the answers are computed once, up front and in
/// parallel, one bit per position and side to move.
pub(crate) struct Seeded<'a> {
    table: &'a Table,
    decided: ByColor<Vec<u64>>,
}

impl<'a> Seeded<'a> {
    /// `store` holds the table and its sub-tables.
    ///
    /// # Errors
    /// A sub-table that `store` does not have.
    pub(crate) fn new(store: &'a WithSubtables<'a>) -> Result<Seeded<'a>, ProbeError> {
        let table = store.table;
        let seeder = Seeder::new(&table.layout, table.rule, store, Reads::Probe)?;
        let n = table.layout.size();
        let decided = ByColor::new_with(|turn| {
            (0..n.div_ceil(64))
                .into_par_iter()
                .map(|word| {
                    (0..64)
                        .map(|bit| word * 64 + bit)
                        .filter(|&index| index < n && decides(table, &seeder, turn, index))
                        .fold(0u64, |bits, index| bits | 1 << (index % 64))
                })
                .collect()
        });
        Ok(Seeded { table, decided })
    }
}

/// Whether a zeroing move decides the position at `index`, given its DTZ:
/// the seed's best zeroing move scores it (a final value, or what an
/// unknown code says). A sub-table that fails to read now (it was read to
/// solve this table) leaves the value stored.
fn decides(table: &Table, seeder: &Seeder<'_>, turn: Color, index: u64) -> bool {
    let rule = table.rule;
    let Some(dtz) = table.cells.load(turn, index).value() else {
        return false;
    };
    if Dtz::fastest(Wdl::from_dtz(dtz, rule), rule) != Some(dtz) {
        return false;
    }
    let placement = table.layout.decode(TableIndex(index));
    seeder
        .cell(&placement.squares, turn)
        .ok()
        .flatten()
        .is_some_and(|seed| seed.zeroing_wins(dtz, rule))
}

impl SolvedValues for Seeded<'_> {
    fn layout(&self) -> &Layout {
        &self.table.layout
    }

    fn rule(&self) -> Rule {
        self.table.rule
    }

    fn values_from(&self, turn: Color, start: u64) -> Box<dyn Iterator<Item = Option<Dtz>> + '_> {
        self.table.values_from(turn, start)
    }

    fn zeroing_decides(&self, turn: Color, index: u64) -> bool {
        self.decided.get(turn)[(index / 64) as usize] & 1 << (index % 64) != 0
    }
}
