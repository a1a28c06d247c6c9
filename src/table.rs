//! Solved values in memory, and the one rule for reading a position's value.
//!
//! Tables store positions without en-passant rights. [`resolve_dtz`] is
//! how every reader — the solver looking through zeroing moves, the probe
//! API, the tests — turns a real position into its DTZ: bare kings are a
//! draw; a position with a legal en-passant capture is valued as the best of
//! the capture(s) and the stored value of the same placement, unless the
//! capture is the only legal move, when the stored value does not apply.
//!
//! [`StoredValues`] is what a reader needs from a store (in memory while
//! generating, memory-mapped files when probing): the stored DTZ of a
//! placement and the rule it was built for.

use std::collections::HashMap;

use shakmaty::{Board, Chess, Color, Position};
use thiserror::Error;

use crate::{
    cells::TableCells,
    index::{Layout, TableIndex},
    material::{MAX_PIECES, Material},
    value::{Cell, Dtz, Rule, Wdl},
};

/// Why a position's value could not be read.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum LookupError {
    /// No table for this material is available.
    #[error("missing table {material}")]
    MissingTable {
        /// The normalised material.
        material: Material,
    },
    /// More pieces than tables exist for.
    #[error("too many pieces: {count} (at most {MAX_PIECES})")]
    TooManyPieces {
        /// Pieces on the board.
        count: usize,
    },
    /// Tables hold no positions with castling rights.
    #[error("castling rights are not supported by tablebases")]
    CastlingRights,
    /// The store could not read the table (corrupt or unreadable file).
    #[error("table {material}: {message}")]
    Table {
        /// The normalised material.
        material: Material,
        /// What went wrong.
        message: String,
    },
    /// The table holds no final value for this placement (a bug, or a
    /// corrupt table).
    #[error("table {material} has no value for this position")]
    NoValue {
        /// The normalised material.
        material: Material,
    },
}

/// One solved table read by index: what the solver needs to score
/// captures, pawn moves and promotions without building positions.
pub trait IndexedValues: Sync {
    /// The table's index scheme.
    fn layout(&self) -> &Layout;

    /// The WDL stored at `index` with `turn` to move (the table's colours).
    ///
    /// # Errors
    /// [`LookupError::NoValue`] if the cell holds no final value, or what
    /// the store reports (a corrupt file).
    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, LookupError>;

    /// Block access for a reader that wants to keep what it unpacks only
    /// for a while (files); `None` for stores held in memory.
    fn wdl_blocks(&self) -> Option<&dyn WdlBlocks> {
        None
    }
}

/// WDL read block by block (see [`IndexedValues::wdl_blocks`]).
pub trait WdlBlocks: Sync {
    /// Number of blocks.
    fn block_count(&self) -> usize;

    /// The block holding `index` with `turn` to move, and the offset in it.
    fn block_of(&self, turn: Color, index: TableIndex) -> (usize, usize);

    /// One block, two WDL codes (`wdl + 2`) per byte, low nibble first.
    ///
    /// # Errors
    /// What the store reports (a corrupt file).
    fn unpack(&self, block: usize) -> Result<Vec<u8>, LookupError>;
}

/// A store of solved tables that can answer "what is stored for this
/// placement?".
pub trait StoredValues {
    /// The table of a normalised material, read by index.
    ///
    /// # Errors
    /// [`LookupError::MissingTable`] if the store does not have it, or the
    /// store's reason it cannot be read.
    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, LookupError>;

    /// The rule the tables were built for.
    fn rule(&self) -> Rule;

    /// The DTZ stored for `board` with `turn` to move, ignoring any
    /// en-passant right. The board has at least three pieces.
    ///
    /// # Errors
    /// [`LookupError::MissingTable`] if the material is not in the store,
    /// [`LookupError::NoValue`] if the placement has no final value.
    fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, LookupError>;

    /// The WDL stored for `board` (no en passant). Stores that keep WDL
    /// apart (table files) answer it without reading DTZ.
    ///
    /// # Errors
    /// As [`StoredValues::stored_dtz`].
    fn stored_wdl(&self, board: &Board, turn: Color) -> Result<Wdl, LookupError> {
        Ok(Wdl::from_dtz(self.stored_dtz(board, turn)?, self.rule()))
    }
}

/// The DTZ of a position, en passant included (see the module doc).
///
/// # Errors
/// Too many pieces, castling rights, or whatever the store reports.
pub fn resolve_dtz<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Dtz, LookupError> {
    let count = pos.board().occupied().count();
    if count > MAX_PIECES {
        return Err(LookupError::TooManyPieces { count });
    }
    if pos.castles().any() {
        return Err(LookupError::CastlingRights);
    }
    if count == 2 {
        return Ok(Dtz(0));
    }
    let ep_moves = pos.en_passant_moves();
    if ep_moves.is_empty() {
        return store.stored_dtz(pos.board(), pos.turn());
    }
    let mut best: Option<Dtz> = None;
    for m in &ep_moves {
        let mut after = pos.clone();
        after.play_unchecked(*m);
        let score = zeroing_score(store, &after)?;
        best = Some(best.map_or(score, |b| b.prefer(score)));
    }
    let best = best.expect("at least one en-passant move");
    if pos.legal_moves().len() > ep_moves.len() {
        Ok(best.prefer(store.stored_dtz(pos.board(), pos.turn())?))
    } else {
        Ok(best)
    }
}

/// The WDL of a position, en passant included.
///
/// # Errors
/// As [`resolve_dtz`].
pub fn resolve_wdl<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Wdl, LookupError> {
    let count = pos.board().occupied().count();
    if count > 2 && count <= MAX_PIECES && !pos.castles().any() && pos.en_passant_moves().is_empty()
    {
        return store.stored_wdl(pos.board(), pos.turn());
    }
    Ok(Wdl::from_dtz(resolve_dtz(store, pos)?, store.rule()))
}

/// The score, for the player who just moved, of a zeroing move that led to
/// `after`.
pub(crate) fn zeroing_score<S: StoredValues + ?Sized>(
    store: &S,
    after: &Chess,
) -> Result<Dtz, LookupError> {
    Ok(Dtz::of_zeroing_move(
        resolve_wdl(store, after)?,
        store.rule(),
    ))
}

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

    /// The cell at `index` with `turn` to move.
    pub fn cell(&self, turn: Color, index: TableIndex) -> Cell {
        self.cells.load(turn, index.0)
    }

    /// The cells with `turn` to move, in index order, from `start`.
    pub(crate) fn cells_from(&self, turn: Color, start: usize) -> impl Iterator<Item = Cell> + '_ {
        (start as u64..self.layout.size()).map(move |index| self.cells.load(turn, index))
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
    pub fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, LookupError> {
        let material = self.layout.material();
        let (turn, index) = self
            .layout
            .locate(board, turn)
            .ok_or(LookupError::MissingTable { material })?;
        self.cell(turn, index)
            .value()
            .ok_or(LookupError::NoValue { material })
    }
}

impl IndexedValues for Table {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, LookupError> {
        let material = self.layout.material();
        let dtz = self
            .cell(turn, index)
            .value()
            .ok_or(LookupError::NoValue { material })?;
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

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, LookupError> {
        match self.tables.get(material) {
            Some(table) => Ok(table),
            None => Err(LookupError::MissingTable {
                material: *material,
            }),
        }
    }

    fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, LookupError> {
        let material = Material::from_board(board).normalized();
        self.tables
            .get(&material)
            .ok_or(LookupError::MissingTable { material })?
            .stored_dtz(board, turn)
    }
}
