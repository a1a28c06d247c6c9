//! A table file's values as a probe finds them, a chunk at a time.
//!
//! A file keeps a lower bound of a WDL that one of the position's captures
//! reaches ([`crate::probe::KeptWdl::UnlessCapture`]), and the DTZ codes'
//! sign and offset come from the position's WDL, not the kept one. A
//! reader that goes through a whole table (the deep check, tests) must
//! therefore raise each kept WDL by the best capture before it reads DTZ.
//! [`FileValues`] does this with the seed pass's move generation on
//! indices ([`crate::generate::seed::Search::Captures`]), reading the sub-table files a chunk at a
//! time, so a pass over a table costs one capture search per position.

use std::path::{Path, PathBuf};

use shakmaty::Color;

use crate::{
    format::TableFile,
    generate::seed::SideSeeders,
    index::Placement,
    material::Material,
    probe::{FileBytes, ProbeError, Tablebase},
    value::{Dtz, Wdl},
};

/// One table file of a [`Tablebase`], read a chunk at a time with each
/// position's WDL and DTZ as a probe finds them.
pub struct FileValues<'a> {
    table: &'a TableFile<FileBytes>,
    path: PathBuf,
    /// The table's captures, valued from the sub-table files, for each side
    /// to move (placements follow that side's order of digits).
    captures: SideSeeders<'a>,
}

impl<'a> FileValues<'a> {
    /// The table of `material` in `tables`.
    ///
    /// # Errors
    /// A missing or corrupt table (this one, or a sub-table a capture
    /// reaches).
    pub fn new(tables: &'a Tablebase, material: &Material) -> Result<FileValues<'a>, ProbeError> {
        let table = tables.table(material)?;
        let captures = SideSeeders::captures(&|turn| table.layout(turn), tables.rule(), tables)?;
        Ok(FileValues {
            table,
            path: tables.path_of(material),
            captures,
        })
    }

    /// The file.
    pub fn file(&self) -> &'a TableFile<FileBytes> {
        self.table
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every position of one chunk ([`TableFile::chunk_range`]): its WDL
    /// and DTZ (`None` where the file keeps no DTZ, as
    /// [`TableFile::dtz_given`] says).
    ///
    /// # Errors
    /// A corrupt block here or in a sub-table.
    pub fn chunk(&self, chunk: usize) -> Result<Vec<(Wdl, Option<Dtz>)>, ProbeError> {
        let wdl = self.chunk_wdl(chunk)?;
        let dtz = self
            .table
            .chunk_dtz(chunk, &wdl)
            .map_err(|source| ProbeError::bad_file(&self.path, source))?;
        Ok(wdl.into_iter().zip(dtz).collect())
    }

    /// Every position of one chunk: its WDL as a probe finds it (the
    /// first half of [`FileValues::chunk`]).
    ///
    /// # Errors
    /// A corrupt block here or in a sub-table.
    pub fn chunk_wdl(&self, chunk: usize) -> Result<Vec<Wdl>, ProbeError> {
        let (turn, range) = self.table.chunk_range(chunk);
        let mut wdl = self
            .table
            .chunk_wdl(chunk)
            .map_err(|source| ProbeError::bad_file(&self.path, source))?;
        let start = range.start;
        self.table
            .layout(turn)
            .try_for_each_placement(range, |index, placement| {
                let kept = &mut wdl[(index - start) as usize];
                *kept = self.raised(*kept, placement, turn)?;
                Ok(())
            })?;
        Ok(wdl)
    }

    /// A kept WDL of `placement` with `turn` to move, raised to what its
    /// best capture gives.
    ///
    /// # Errors
    /// A corrupt block in a sub-table.
    pub fn raised(&self, kept: Wdl, placement: &Placement, turn: Color) -> Result<Wdl, ProbeError> {
        self.captures.get(turn).raised(kept, placement, turn)
    }
}
