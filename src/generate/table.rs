//! Solved tables held in memory: what [`solve`](crate::generate::solve)
//! returns, and a set of them that the solver and tests read sub-table
//! values from ([`TableSet`], a [`StoredValues`] store).

use std::collections::HashMap;

use shakmaty::{Board, Color};

use crate::{
    format::SolvedValues,
    generate::{cell::Cell, cells::TableCells},
    index::{Layout, TableIndex},
    material::Material,
    probe::{IndexedValues, ProbeError, StoredValues},
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

    fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, ProbeError> {
        let material = Material::from_board(board).normalized();
        self.tables
            .get(&material)
            .ok_or(ProbeError::MissingTable {
                material,
                dir: None,
            })?
            .stored_dtz(board, turn)
    }
}
