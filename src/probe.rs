//! The probe API: a [`Tablebase`] over a directory of table files.
//!
//! Tables are opened lazily, on the first probe that needs them, through a
//! read-only memory map, and checked cheaply on open (size, magic, version,
//! layout; see [`crate::format`]). The facade is `Send + Sync`: engines
//! share one instance between search threads.
//!
//! * [`Tablebase::probe_wdl`] — WDL with the clock at zero; touches only the
//!   WDL section (what a search wants).
//! * [`Tablebase::probe_dtz`] — exact DTZ in plies, both sides to move, no
//!   search.
//! * [`Tablebase::probe`] — the clock question: does the win (or loss)
//!   survive the halfmove clock? Exact for every clock, because DTZ is
//!   stored to the ply. Syzygy probers cannot answer this exactly near the
//!   boundary, since Syzygy rounds most DTZ values to full moves.
//! * [`Tablebase::best_moves`] — root moves ranked so that a win that
//!   survives the clock is kept whenever one exists.
//!
//! Positions with an en-passant right are resolved as in [`crate::table`].

use std::{
    collections::HashMap,
    io,
    path::{Path, PathBuf},
    sync::OnceLock,
};

use memmap2::Mmap;
use shakmaty::{Board, Chess, Color, Move, Position};
use thiserror::Error;

use crate::{
    format::{EXTENSION, FormatError, TableFile},
    index::{Layout, TableIndex},
    material::{MAX_PIECES, Material},
    storage::map_file,
    table::{IndexedValues, LookupError, StoredValues, WdlBlocks, resolve_dtz, zeroing_score},
    value::{Dtz, Outcome, Rule, Verdict, Wdl},
};

/// Why a probe failed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ProbeError {
    /// More pieces than any table has.
    #[error("too many pieces: {count}, tables have at most {MAX_PIECES}")]
    TooManyPieces {
        /// Pieces on the board.
        count: usize,
    },
    /// Tables hold no positions with castling rights.
    #[error("castling rights are not supported by tablebases")]
    CastlingRights,
    /// The table for this material is not in the directory.
    #[error("missing table {material} in {}", dir.display())]
    MissingTable {
        /// The normalised material.
        material: Material,
        /// The directory searched.
        dir: PathBuf,
    },
    /// The file was built for another rule than the one asked for.
    #[error("table {} was built for rule {got}, asked for rule {expected}", path.display())]
    RuleMismatch {
        /// The file.
        path: PathBuf,
        /// The rule asked for.
        expected: Rule,
        /// The rule in the file.
        got: Rule,
    },
    /// The file is damaged.
    #[error("corrupt table {}: {source}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: FormatError,
    },
    /// The file could not be read.
    #[error("cannot read {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The table has no value for the position (a bug or corruption).
    #[error("table {material} has no value for this position")]
    NoValue {
        /// The normalised material.
        material: Material,
    },
}

/// A move and what it is worth at the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedMove {
    /// The move.
    pub mv: Move,
    /// DTZ of the root position if this move is played (the spec's move
    /// score: mate 1, zeroing moves by the WDL they reach, quiet moves
    /// `-d ± 1`).
    pub dtz: Dtz,
    /// The result of this move with the clock applied.
    pub outcome: Outcome,
}

/// Lazily opened table files in one directory, for one rule.
#[derive(Debug)]
pub struct Tablebase {
    dir: PathBuf,
    rule: Rule,
    /// One slot per table of up to [`MAX_PIECES`] pieces, filled on first
    /// use (never with a failure, so a table generated later is found).
    tables: HashMap<Material, OnceLock<TableFile<Mmap>>>,
}

impl Tablebase {
    /// Tables in `dir`, built for `rule`.
    ///
    /// # Errors
    /// If `dir` is not a readable directory.
    pub fn open(dir: impl AsRef<Path>, rule: Rule) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::read_dir(&dir).map_err(|e| ProbeError::Io {
            path: dir.clone(),
            message: e.to_string(),
        })?;
        Ok(Tablebase {
            dir,
            rule,
            tables: Material::all_up_to(MAX_PIECES)
                .into_iter()
                .map(|m| (m, OnceLock::new()))
                .collect(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The rule asked for.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The path of a material's file in this directory.
    pub fn path_of(&self, material: &Material) -> PathBuf {
        self.dir.join(format!("{material}.{EXTENSION}"))
    }

    /// The open table of a normalised material, opening it if needed.
    ///
    /// # Errors
    /// Missing, unreadable, corrupt or of another rule.
    pub fn table(&self, material: &Material) -> Result<&TableFile<Mmap>, ProbeError> {
        let missing = || ProbeError::MissingTable {
            material: *material,
            dir: self.dir.clone(),
        };
        let slot = self.tables.get(material).ok_or_else(missing)?;
        if let Some(table) = slot.get() {
            return Ok(table);
        }
        let path = self.path_of(material);
        if !path.is_file() {
            return Err(missing());
        }
        let table = open_file(&path)?;
        if table.header().rule != self.rule {
            return Err(ProbeError::RuleMismatch {
                path,
                expected: self.rule,
                got: table.header().rule,
            });
        }
        // Another thread may have opened it meanwhile; either copy will do.
        Ok(slot.get_or_init(|| table))
    }

    /// WDL with the clock at zero.
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_wdl(&self, pos: &Chess) -> Result<Wdl, ProbeError> {
        check_probeable(pos)?;
        if pos.board().occupied().count() == 2 {
            return Ok(Wdl::Draw);
        }
        if pos.en_passant_moves().is_empty() {
            let (table, turn, index) = self.place(pos.board(), pos.turn())?;
            return table
                .wdl(turn, index)
                .map_err(|source| self.corrupt(table, source));
        }
        Ok(Wdl::from_dtz(self.probe_dtz(pos)?, self.rule))
    }

    /// Exact DTZ in plies.
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_dtz(&self, pos: &Chess) -> Result<Dtz, ProbeError> {
        check_probeable(pos)?;
        if pos.board().occupied().count() > 2 {
            // Open the position's own table first, so that its errors
            // (missing, corrupt, other rule) come back with all their facts.
            self.table(&Material::from_board(pos.board()).normalized())?;
        }
        resolve_dtz(self, pos).map_err(|e| self.lookup_error(e))
    }

    /// The verdict with the position's own halfmove clock.
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe(&self, pos: &Chess) -> Result<Verdict, ProbeError> {
        self.probe_with_clock(pos, pos.halfmoves())
    }

    /// The verdict with the halfmove clock `halfmove`.
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_with_clock(&self, pos: &Chess, halfmove: u32) -> Result<Verdict, ProbeError> {
        let dtz = self.probe_dtz(pos)?;
        Ok(Verdict::new(dtz, self.rule, halfmove, pos.is_checkmate()))
    }

    /// Every legal move with its score and outcome under the position's
    /// clock, best first: moves that keep a win within the clock (fastest
    /// first), then draws, then losses (longest first).
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn best_moves(&self, pos: &Chess) -> Result<Vec<RankedMove>, ProbeError> {
        check_probeable(pos)?;
        let mut ranked = Vec::new();
        for mv in pos.legal_moves() {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            let dtz = if after.is_checkmate() {
                Dtz(1)
            } else if mv.is_zeroing() {
                zeroing_score(self, &after).map_err(|e| self.lookup_error(e))?
            } else {
                Dtz::of_quiet_move(self.probe_dtz(&after)?)
            };
            let verdict = Verdict::new(dtz, self.rule, pos.halfmoves(), false);
            ranked.push(RankedMove {
                mv,
                dtz,
                outcome: verdict.outcome,
            });
        }
        ranked.sort_by_key(|m| {
            let outcome = match m.outcome {
                Outcome::Win => 0,
                Outcome::Draw => 1,
                Outcome::Loss => 2,
            };
            (outcome, m.dtz.preference())
        });
        Ok(ranked)
    }

    fn place(
        &self,
        board: &Board,
        turn: Color,
    ) -> Result<(&TableFile<Mmap>, Color, TableIndex), ProbeError> {
        let material = Material::from_board(board).normalized();
        let table = self.table(&material)?;
        let (turn, index) = table
            .layout()
            .locate(board, turn)
            .ok_or(ProbeError::NoValue { material })?;
        Ok((table, turn, index))
    }

    fn corrupt(&self, table: &TableFile<Mmap>, source: FormatError) -> ProbeError {
        ProbeError::Corrupt {
            path: self.path_of(&table.header().material),
            source,
        }
    }

    /// A lookup error with this tablebase's facts attached.
    pub(crate) fn lookup_error(&self, e: LookupError) -> ProbeError {
        match e {
            LookupError::MissingTable { material } => ProbeError::MissingTable {
                material,
                dir: self.dir.clone(),
            },
            LookupError::TooManyPieces { count } => ProbeError::TooManyPieces { count },
            LookupError::CastlingRights => ProbeError::CastlingRights,
            LookupError::NoValue { material } => ProbeError::NoValue { material },
            LookupError::Table { message, .. } => ProbeError::Io {
                path: self.dir.clone(),
                message,
            },
        }
    }
}

/// Open and check one table file.
///
/// # Errors
/// Unreadable or corrupt.
pub fn open_file(path: &Path) -> Result<TableFile<Mmap>, ProbeError> {
    let map = map_file(path).map_err(|e: io::Error| ProbeError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    TableFile::new(map).map_err(|source| ProbeError::Corrupt {
        path: path.to_path_buf(),
        source,
    })
}

fn check_probeable(pos: &Chess) -> Result<(), ProbeError> {
    let count = pos.board().occupied().count();
    if count > MAX_PIECES {
        return Err(ProbeError::TooManyPieces { count });
    }
    if pos.castles().any() {
        return Err(ProbeError::CastlingRights);
    }
    Ok(())
}

impl Tablebase {
    /// Read one stored value with `read`, errors as [`LookupError`]s.
    fn stored<T>(
        &self,
        board: &Board,
        turn: Color,
        read: impl FnOnce(&TableFile<Mmap>, Color, TableIndex) -> Result<T, FormatError>,
    ) -> Result<T, LookupError> {
        let (table, turn, index) = self.place(board, turn).map_err(|e| match e {
            ProbeError::MissingTable { material, .. } => LookupError::MissingTable { material },
            ProbeError::NoValue { material } => LookupError::NoValue { material },
            other => LookupError::Table {
                material: Material::from_board(board).normalized(),
                message: other.to_string(),
            },
        })?;
        read(table, turn, index).map_err(|source| LookupError::Table {
            material: table.header().material,
            message: self.corrupt(table, source).to_string(),
        })
    }
}

impl<D: AsRef<[u8]> + Sync> IndexedValues for TableFile<D> {
    fn layout(&self) -> &Layout {
        TableFile::layout(self)
    }

    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, LookupError> {
        self.wdl(turn, index).map_err(|source| LookupError::Table {
            material: self.header().material,
            message: source.to_string(),
        })
    }

    fn wdl_blocks(&self) -> Option<&dyn WdlBlocks> {
        Some(self)
    }
}

impl<D: AsRef<[u8]> + Sync> WdlBlocks for TableFile<D> {
    fn block_count(&self) -> usize {
        self.wdl_block_count()
    }

    fn block_of(&self, turn: Color, index: TableIndex) -> (usize, usize) {
        self.locate(turn, index)
    }

    fn unpack(&self, block: usize) -> Result<Vec<u8>, LookupError> {
        self.unpack_wdl_block(block)
            .map_err(|source| LookupError::Table {
                material: self.header().material,
                message: source.to_string(),
            })
    }
}

impl StoredValues for Tablebase {
    fn rule(&self) -> Rule {
        self.rule
    }

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, LookupError> {
        match self.table(material) {
            Ok(table) => Ok(table),
            Err(ProbeError::MissingTable { material, .. }) => {
                Err(LookupError::MissingTable { material })
            }
            Err(other) => Err(LookupError::Table {
                material: *material,
                message: other.to_string(),
            }),
        }
    }

    fn stored_dtz(&self, board: &Board, turn: Color) -> Result<Dtz, LookupError> {
        self.stored(board, turn, TableFile::dtz)
    }

    fn stored_wdl(&self, board: &Board, turn: Color) -> Result<Wdl, LookupError> {
        self.stored(board, turn, TableFile::wdl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tablebase_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Tablebase>();
    }
}
