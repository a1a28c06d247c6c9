//! Several directories of tables as one store, as Fathom's `tb_init`
//! takes them: a path list separated by `:` (`;` on Windows).
//!
//! Each directory is a [`Tablebase`]; a material is read from the first
//! directory that holds its file, and sub-tables may sit in another
//! directory than the table that needs them (a capture from a table in one
//! directory into a sub-table in another is scored across both). Which
//! directory holds a material is remembered once found (never a failure, so
//! a table generated later is found).

use std::{
    collections::HashMap,
    path::Path,
    sync::{Arc, OnceLock},
};

use dtz50::{
    Material, ProbeError, Rule, Tablebase, Wdl,
    format::{BlockCache, EXTENSION},
    material::MAX_PIECES,
    probe::{IndexedValues, KeptDtz, KeptWdl, StoredValues},
};
use shakmaty::{Board, Color};

/// The separator of directories in a path list, as Fathom's.
pub const SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// Tables from one or more directories, all for one rule.
#[derive(Debug)]
pub struct Tables {
    rule: Rule,
    bases: Vec<Tablebase>,
    /// Per material, the index in `bases` of the directory holding it.
    home: HashMap<Material, OnceLock<usize>>,
    /// The most pieces of any table file found.
    largest: u32,
    /// The cache all directories share, if they read positionally.
    cache: Option<Arc<BlockCache>>,
}

impl Tables {
    /// The directories in `paths` (separated by [`SEPARATOR`]; empty
    /// entries and directories that cannot be read are skipped, as Fathom
    /// skips them), for `rule`.
    ///
    /// With `cache`, the files are read with positional reads through that
    /// one bounded page cache, shared by every directory; without, they
    /// are memory-mapped, and every directory shares the first one's cache
    /// of decoded DTZ blocks (one bound for all).
    pub fn open(paths: &str, rule: Rule, cache: Option<Arc<BlockCache>>) -> Tables {
        let mut bases: Vec<Tablebase> = Vec::new();
        for dir in paths.split(SEPARATOR).filter(|dir| !dir.is_empty()) {
            let base = match (&cache, bases.first()) {
                (Some(cache), _) => Tablebase::open_with_cache(dir, rule, cache.clone()),
                (None, None) => Tablebase::open(dir, rule),
                (None, Some(first)) => Tablebase::open(dir, rule)
                    .map(|b| b.sharing_decoded_cache(first.decoded_cache().cloned())),
            };
            bases.extend(base.ok());
        }
        let largest = bases.iter().map(|b| largest_in(b.dir())).max().unwrap_or(0);
        Tables {
            rule,
            bases,
            home: Material::all_up_to(MAX_PIECES)
                .into_iter()
                .map(|m| (m, OnceLock::new()))
                .collect(),
            largest,
            cache,
        }
    }

    /// The bound on the page cache, `None` for memory-mapped files.
    pub fn cache_bytes(&self) -> Option<usize> {
        self.cache.as_ref().map(|c| c.capacity())
    }

    /// Whether no directory could be read.
    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }

    /// The most pieces of any table file found (Fathom's `TB_LARGEST`), 0
    /// if none was.
    pub fn largest(&self) -> u32 {
        self.largest
    }

    /// The directory holding the material of `board`: with one directory,
    /// that one (it reports a missing table itself), without working out
    /// the material.
    fn base_of(&self, board: &Board) -> Result<&Tablebase, ProbeError> {
        match self.bases.as_slice() {
            [only] => Ok(only),
            _ => self.base(&Material::from_board(board).normalized()),
        }
    }

    /// The directory holding a normalised material.
    fn base(&self, material: &Material) -> Result<&Tablebase, ProbeError> {
        let missing = || ProbeError::MissingTable {
            material: *material,
            dir: None,
        };
        let slot = self.home.get(material).ok_or_else(missing)?;
        if let Some(&at) = slot.get() {
            return Ok(&self.bases[at]);
        }
        let at = self
            .bases
            .iter()
            .position(|b| b.path_of(material).is_file())
            .ok_or_else(missing)?;
        Ok(&self.bases[*slot.get_or_init(|| at)])
    }
}

/// The most pieces of any table file in `dir` (by its name), 0 if none.
fn largest_in(dir: &Path) -> u32 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            if path.extension()? != EXTENSION {
                return None;
            }
            let material: Material = path.file_stem()?.to_str()?.parse().ok()?;
            u32::try_from(material.total()).ok()
        })
        .max()
        .unwrap_or(0)
}

impl StoredValues for Tables {
    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError> {
        self.base(material)?.indexed(material)
    }

    fn rule(&self) -> Rule {
        self.rule
    }

    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        self.base_of(board)?.kept_wdl(board, turn)
    }

    fn kept_dtz(&self, board: &Board, turn: Color, wdl: Wdl) -> Result<KeptDtz, ProbeError> {
        self.base_of(board)?.kept_dtz(board, turn, wdl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_unreadable_directories_are_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("KQvK.dtz50"), b"not a table").expect("write");
        std::fs::write(dir.path().join("notes.txt"), b"").expect("write");
        let list = format!("/no/such/dir{SEPARATOR}{SEPARATOR}{}", dir.path().display());
        let tables = Tables::open(&list, Rule::Fifty, None);
        assert_eq!((tables.bases.len(), tables.largest()), (1, 3));
        assert!(tables.base(&"KRvK".parse().expect("material")).is_err());
        assert!(tables.base(&"KQvK".parse().expect("material")).is_ok());
        assert_eq!(Tables::open("", Rule::Fifty, None).largest(), 0);
    }
}
