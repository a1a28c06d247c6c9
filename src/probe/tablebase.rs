//! The [`Tablebase`] facade: lazily opened table files in one directory.
//!
//! Tables are opened on the first probe that needs them and checked
//! cheaply on open (size, magic, version, layout; see [`crate::format`]).
//! The facade is `Send + Sync`: engines share one instance between search
//! threads.
//!
//! Two ways to read the files:
//!
//! * [`Tablebase::open`] maps them read-only into memory: the fastest
//!   probes. A WDL probe decodes one small block in place and keeps
//!   nothing, with no lock on its path; a DTZ block read a second time is
//!   kept decoded in a cache of at most [`DEFAULT_DECODED_BYTES`] for all
//!   tables ([`Tablebase::with_decoded_cache`] sets the bound; sharded
//!   locks), so the one-ply search of a side whose DTZ the file does not
//!   keep reads held blocks instead of decoding them. Memory is the file
//!   pages the kernel keeps mapped (reclaimable), that cache, and each
//!   opened stream's symbol table (a few to a few tens of KiB). **The
//!   contract of a memory map**: the files must not be truncated or
//!   rewritten in place while they are open (replacing a file by renaming
//!   another over it is safe). If one is, the process may be killed by
//!   SIGBUS. dtz50 writes its files atomically, so only another program
//!   can break this; engines accept it, as they do for Syzygy files.
//! * [`Tablebase::open_positional`] reads them with positional reads
//!   (`pread`) through one cache of file pages of bounded size: a
//!   file truncated, rewritten or deleted under a long-running process
//!   gives errors for the probes that need it (and answers again once the
//!   file is whole), never a SIGBUS, and memory stays bounded. For
//!   processes that live long: `probe --batch`, a server.

use std::{
    borrow::Cow,
    io,
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
};

use memmap2::Mmap;
use rustc_hash::FxHashMap;
use shakmaty::{Board, Chess, Color, Position};

use crate::{
    format::{
        BlockCache, DecodedBlocks, EXTENSION, FormatError, PositionalFile, Source, TableFile,
    },
    index::{Layout, TableIndex},
    material::{MAX_PIECES, Material},
    mmap::map_file,
    probe::{
        IndexedValues, KeptDtz, KeptWdl, ProbeError, StoredValues, WdlChunks,
        stored::{resolve_dtz, resolve_wdl},
    },
    value::{Dtz, Rule, Verdict, Wdl},
};

/// Lazily opened table files in one directory, for one rule.
///
/// ```
/// use dtz50::{Rule, Tablebase};
///
/// let dir = tempfile::tempdir()?;
/// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
/// assert_eq!(tables.rule(), Rule::Fifty);
/// assert_eq!(tables.path_of(&"KQvK".parse()?), dir.path().join("KQvK.dtz50"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Tablebase {
    dir: PathBuf,
    rule: Rule,
    /// One slot per table served (every table of up to [`MAX_PIECES`]
    /// pieces unless [`Tablebase::open_only`] says), filled on first
    /// use (never with a failure, so a table generated later is found).
    /// Keyed with a fast non-cryptographic hash: every probe looks a
    /// table up, and the keys are materials, not attacker's input.
    tables: FxHashMap<Material, OnceLock<OpenTable>>,
    access: Access,
    /// Where the tables hold the DTZ blocks they decode, if anywhere.
    decoded: Option<Arc<DecodedBlocks>>,
}

/// An open table file and its path (for errors that name it).
#[derive(Debug)]
struct OpenTable {
    path: PathBuf,
    file: TableFile<FileBytes>,
}

/// The bytes of an open table file: mapped, or read when needed.
#[derive(Debug)]
pub enum FileBytes {
    /// A read-only memory map (see the module doc for its contract).
    Mapped(Mmap),
    /// Positional reads of an open file.
    Positional(PositionalFile),
}

impl Source for FileBytes {
    fn size(&self) -> u64 {
        match self {
            FileBytes::Mapped(map) => map.size(),
            FileBytes::Positional(file) => file.size(),
        }
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        match self {
            FileBytes::Mapped(map) => map.read_at(offset, len),
            FileBytes::Positional(file) => file.read_at(offset, len),
        }
    }
}

/// How a [`Tablebase`] reads its files.
#[derive(Debug, Clone)]
enum Access {
    /// Memory maps.
    Mapped,
    /// Positional reads through one bounded page cache.
    Positional(Arc<BlockCache>),
}

/// The default bound of [`Tablebase::open_positional`]'s cache: 64 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// The default bound of [`Tablebase::open`]'s cache of decoded DTZ blocks
/// ([`Tablebase::with_decoded_cache`]): 4 MiB.
pub const DEFAULT_DECODED_BYTES: usize = 4 << 20;

/// The path of a material's file in `dir`: `KRvK.dtz50` for KRvK.
///
/// ```
/// use dtz50::probe::table_path;
///
/// let path = table_path("tables".as_ref(), &"KRvK".parse()?);
/// assert_eq!(path, std::path::Path::new("tables/KRvK.dtz50"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn table_path(dir: &Path, material: &Material) -> PathBuf {
    dir.join(format!("{material}.{EXTENSION}"))
}

impl Tablebase {
    /// Tables in `dir`, built for `rule`. Opens no table yet.
    ///
    /// ```
    /// use dtz50::{ProbeError, Rule, Tablebase};
    ///
    /// let err = Tablebase::open("/no/such/directory", Rule::Fifty).unwrap_err();
    /// assert!(matches!(err, ProbeError::Io { .. }));
    /// assert_eq!(err.to_string(), "cannot read /no/such/directory");
    /// ```
    ///
    /// # Errors
    /// [`ProbeError::Io`] if `dir` is not a readable directory.
    pub fn open(dir: impl AsRef<Path>, rule: Rule) -> Result<Tablebase, ProbeError> {
        Tablebase::open_only(dir, rule, &Material::all_up_to(MAX_PIECES))
    }

    /// As [`Tablebase::open`], serving only the tables of `materials`
    /// (normalised); any other is missing. A slot per table takes
    /// kilobytes, 4 MB for every table of up to [`MAX_PIECES`] pieces: the
    /// generator opens a table's sub-tables only.
    ///
    /// ```
    /// use dtz50::{ProbeError, Rule, Tablebase, generate::{GenerateOptions, generate}};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let options = GenerateOptions {
    ///     rule: Rule::Fifty,
    ///     out: dir.path().into(),
    ///     work_dir: None,
    ///     checkpoint_every: None,
    ///     order_search: Default::default(),
    /// };
    /// generate(&["KQvK".parse()?, "KRvK".parse()?], &options, &|_| {})?;
    /// let tables = Tablebase::open_only(dir.path(), Rule::Fifty, &["KRvK".parse()?])?;
    /// assert!(tables.table(&"KRvK".parse()?).is_ok());
    /// let err = tables.table(&"KQvK".parse()?).unwrap_err();
    /// assert!(matches!(err, ProbeError::MissingTable { .. }));
    /// assert!(Tablebase::open(dir.path(), Rule::Fifty)?.table(&"KQvK".parse()?).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ProbeError::Io`] if `dir` is not a readable directory.
    pub fn open_only(
        dir: impl AsRef<Path>,
        rule: Rule,
        materials: &[Material],
    ) -> Result<Tablebase, ProbeError> {
        Ok(
            Tablebase::with_access(dir.as_ref(), rule, Access::Mapped, materials)?
                .with_decoded_cache(DEFAULT_DECODED_BYTES),
        )
    }

    /// Tables in `dir`, built for `rule`, read with positional reads
    /// through one cache of at most `cache_bytes` bytes of file pages ([`DEFAULT_CACHE_BYTES`] is a good choice): for processes that
    /// live long (see the module doc). Opens no table yet.
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase, probe::DEFAULT_CACHE_BYTES};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open_positional(dir.path(), Rule::Fifty, DEFAULT_CACHE_BYTES)?;
    /// assert_eq!(tables.cache_bytes(), Some(64 << 20));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ProbeError::Io`] if `dir` is not a readable directory.
    pub fn open_positional(
        dir: impl AsRef<Path>,
        rule: Rule,
        cache_bytes: usize,
    ) -> Result<Tablebase, ProbeError> {
        Tablebase::open_with_cache(dir, rule, Arc::new(BlockCache::new(cache_bytes)))
    }

    /// As [`Tablebase::open_positional`], reading through `cache`, which several tablebases (several directories) may share
    /// under one bound.
    ///
    /// # Errors
    /// [`ProbeError::Io`] if `dir` is not a readable directory.
    pub fn open_with_cache(
        dir: impl AsRef<Path>,
        rule: Rule,
        cache: Arc<BlockCache>,
    ) -> Result<Tablebase, ProbeError> {
        Tablebase::with_access(
            dir.as_ref(),
            rule,
            Access::Positional(cache),
            &Material::all_up_to(MAX_PIECES),
        )
    }

    /// The bound on the page cache, if there is one (positional reads;
    /// memory-mapped tables keep no pages of their own).
    pub fn cache_bytes(&self) -> Option<usize> {
        match &self.access {
            Access::Mapped => None,
            Access::Positional(cache) => Some(cache.capacity()),
        }
    }

    /// The bytes the page cache holds now, if there is one.
    pub fn cache_used(&self) -> Option<usize> {
        match &self.access {
            Access::Mapped => None,
            Access::Positional(cache) => Some(cache.bytes()),
        }
    }

    /// This tablebase, its tables holding at most `bytes` bytes of the DTZ
    /// blocks they decode, all together (0: none). A DTZ probe with the
    /// side to move whose DTZ the file does not keep reads a dozen kept
    /// values, each in another block: a held block answers without
    /// decoding (see [`DecodedBlocks`]). [`Tablebase::open`] holds up to
    /// [`DEFAULT_DECODED_BYTES`]; [`Tablebase::open_positional`] none, its
    /// page cache being its whole bound. Tables already open are opened
    /// again on their next probe.
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase, probe::DEFAULT_DECODED_BYTES};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// assert_eq!(tables.decoded_cache_bytes(), Some(DEFAULT_DECODED_BYTES));
    /// let tables = tables.with_decoded_cache(1 << 20);
    /// assert_eq!(tables.decoded_cache_bytes(), Some(1 << 20));
    /// assert_eq!(tables.decoded_cache_used(), Some(0));
    /// assert_eq!(tables.with_decoded_cache(0).decoded_cache_bytes(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_decoded_cache(self, bytes: usize) -> Tablebase {
        self.sharing_decoded_cache((bytes > 0).then(|| Arc::new(DecodedBlocks::new(bytes))))
    }

    /// This tablebase, its tables holding the DTZ blocks they decode in
    /// `cache` (none: `None`), which several tablebases (several
    /// directories) may share under one bound; as
    /// [`Tablebase::with_decoded_cache`] otherwise.
    pub fn sharing_decoded_cache(mut self, cache: Option<Arc<DecodedBlocks>>) -> Tablebase {
        // A table opened already holds the old cache: it is opened again
        // when next probed. The slots stay where they are (the map of
        // every table's slot takes 4 MB to build).
        for slot in self.tables.values_mut() {
            slot.take();
        }
        self.decoded = cache;
        self
    }

    /// The cache of decoded DTZ blocks, if there is one (to share it with
    /// [`Tablebase::sharing_decoded_cache`]).
    pub fn decoded_cache(&self) -> Option<&Arc<DecodedBlocks>> {
        self.decoded.as_ref()
    }

    /// The bound on the cache of decoded DTZ blocks, if there is one.
    pub fn decoded_cache_bytes(&self) -> Option<usize> {
        self.decoded_cache().map(|cache| cache.capacity())
    }

    /// The bytes the cache of decoded DTZ blocks holds now, if there is one.
    pub fn decoded_cache_used(&self) -> Option<usize> {
        self.decoded_cache().map(|cache| cache.bytes())
    }

    fn with_access(
        dir: &Path,
        rule: Rule,
        access: Access,
        materials: &[Material],
    ) -> Result<Tablebase, ProbeError> {
        let dir = dir.to_path_buf();
        if let Err(source) = std::fs::read_dir(&dir) {
            return Err(ProbeError::Io { path: dir, source });
        }
        Ok(Tablebase {
            dir,
            rule,
            tables: materials.iter().map(|&m| (m, OnceLock::new())).collect(),
            access,
            decoded: None,
        })
    }

    /// The directory.
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase};
    ///
    /// let dir = tempfile::tempdir()?;
    /// assert_eq!(Tablebase::open(dir.path(), Rule::None)?.dir(), dir.path());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The rule asked for.
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase};
    ///
    /// let dir = tempfile::tempdir()?;
    /// assert_eq!(Tablebase::open(dir.path(), Rule::SeventyFive)?.rule(), Rule::SeventyFive);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The path of a material's file in this directory (see the example
    /// on [`Tablebase`]).
    pub fn path_of(&self, material: &Material) -> PathBuf {
        table_path(&self.dir, material)
    }

    /// The open table of a normalised material, opening it if needed.
    ///
    /// ```
    /// use dtz50::{ProbeError, Rule, Tablebase};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// let missing = tables.table(&"KRvK".parse()?).unwrap_err();
    /// assert!(matches!(missing, ProbeError::MissingTable { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Missing, unreadable, corrupt or of another rule.
    pub fn table(&self, material: &Material) -> Result<&TableFile<FileBytes>, ProbeError> {
        Ok(&self.open_table(material)?.file)
    }

    fn open_table(&self, material: &Material) -> Result<&OpenTable, ProbeError> {
        let slot = self
            .tables
            .get(material)
            .ok_or_else(|| self.missing(material))?;
        match slot.get() {
            Some(table) => Ok(table),
            None => self.open_into(material, slot),
        }
    }

    /// Open the table of `material` into its `slot`: the first probe of a
    /// table only. Apart from [`Tablebase::open_table`], which every read
    /// asks, so that its stack frame stays small (opening a file needs
    /// kilobytes of stack, which the processor would otherwise touch on
    /// every read).
    #[cold]
    #[inline(never)]
    fn open_into<'t>(
        &self,
        material: &Material,
        slot: &'t OnceLock<OpenTable>,
    ) -> Result<&'t OpenTable, ProbeError> {
        let path = self.path_of(material);
        match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.missing(material));
            }
            Err(source) => return Err(ProbeError::Io { path, source }),
            Ok(meta) if !meta.is_file() => {
                let what = file_kind(&meta);
                return Err(ProbeError::NotAFile { path, what });
            }
            Ok(_) => {}
        }
        let file = self.open_bytes(&path)?;
        if file.header().rule != self.rule {
            return Err(ProbeError::RuleMismatch {
                path,
                expected: self.rule,
                got: file.header().rule,
            });
        }
        // Another thread may have opened it meanwhile; either copy will do.
        Ok(slot.get_or_init(|| OpenTable { path, file }))
    }

    /// The error for a table this directory does not have.
    fn missing(&self, material: &Material) -> ProbeError {
        ProbeError::MissingTable {
            material: *material,
            dir: Some(self.dir.clone()),
        }
    }

    /// WDL with the clock at zero; reads only WDL (what a search wants).
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase, Wdl};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// // Bare kings need no table.
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 w - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// assert_eq!(tables.probe_wdl(&pos)?, Wdl::Draw);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_wdl(&self, pos: &Chess) -> Result<Wdl, ProbeError> {
        resolve_wdl(self, pos)
    }

    /// Exact DTZ in plies, for either side to move: read from the file, or
    /// where the file keeps the other side's DTZ, found by a one-ply search
    /// ([`crate::probe::dtz_by_moves`]).
    ///
    /// ```
    /// use dtz50::{Dtz, Rule, Tablebase};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 b - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// assert_eq!(tables.probe_dtz(&pos)?, Dtz(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_dtz(&self, pos: &Chess) -> Result<Dtz, ProbeError> {
        resolve_dtz(self, pos)
    }

    /// The verdict with the position's own halfmove clock (the FEN's fifth
    /// field).
    ///
    /// ```
    /// use dtz50::{Outcome, Rule, Tablebase};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 w - - 37 80".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// let verdict = tables.probe(&pos)?;
    /// assert_eq!((verdict.halfmove, verdict.outcome), (37, Outcome::Draw));
    /// assert_eq!(verdict.to_string(), "draw");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe(&self, pos: &Chess) -> Result<Verdict, ProbeError> {
        self.probe_with_clock(pos, pos.halfmoves())
    }

    /// The verdict with the halfmove clock `halfmove`: does the win (or
    /// loss) survive the clock, and with how many plies to spare? Exact for
    /// every clock, because DTZ is stored to the ply.
    ///
    /// ```
    /// use dtz50::{Outcome, Rule, Tablebase};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 w - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// let verdict = tables.probe_with_clock(&pos, 99)?;
    /// assert_eq!((verdict.outcome, verdict.margin), (Outcome::Draw, None));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn probe_with_clock(&self, pos: &Chess, halfmove: u32) -> Result<Verdict, ProbeError> {
        let dtz = self.probe_dtz(pos)?;
        Ok(Verdict::new(dtz, self.rule, halfmove, pos.is_checkmate()))
    }

    /// Open and check one file the way this tablebase reads.
    fn open_bytes(&self, path: &Path) -> Result<TableFile<FileBytes>, ProbeError> {
        let file = match &self.access {
            Access::Mapped => check(path, map_file(path).map(FileBytes::Mapped), None),
            Access::Positional(cache) => check(
                path,
                PositionalFile::open(path).map(FileBytes::Positional),
                Some(cache.clone()),
            ),
        }?;
        Ok(match &self.decoded {
            None => file,
            Some(cache) => file.holding_decoded_dtz(cache.clone()),
        })
    }

    fn place(
        &self,
        board: &Board,
        turn: Color,
    ) -> Result<(&OpenTable, Color, TableIndex), ProbeError> {
        let (table, material) = self.table_of(board)?;
        let (turn, index) = table
            .file
            .locate(board, turn)
            .ok_or(ProbeError::NoValue { material })?;
        Ok((table, turn, index))
    }

    /// The table of `board`'s material, and that material (normalised).
    fn table_of(&self, board: &Board) -> Result<(&OpenTable, Material), ProbeError> {
        let material = Material::from_board(board).normalized();
        Ok((self.open_table(&material)?, material))
    }

    /// Read one stored value with `read`.
    fn stored<T>(
        &self,
        board: &Board,
        turn: Color,
        read: impl FnOnce(&TableFile<FileBytes>, Color, TableIndex) -> Result<T, FormatError>,
    ) -> Result<T, ProbeError> {
        let (table, turn, index) = self.place(board, turn)?;
        read(&table.file, turn, index).map_err(|source| table.bad_file(source))
    }
}

/// Open and check one table file (cheap checks only; see
/// [`TableFile::verify`] for the full one).
///
/// # Errors
/// [`ProbeError::Io`] if it cannot be read, [`ProbeError::Unsupported`] if
/// another dtz50 wrote it in a way this one does not read,
/// [`ProbeError::Corrupt`] if it is not a sound table file.
pub fn open_file(path: &Path) -> Result<TableFile<Mmap>, ProbeError> {
    check(path, map_file(path), None)
}

/// Check the table file at `path` read from `source`, keeping decoded
/// blocks in `cache` if given; errors name the path.
fn check<S: Source>(
    path: &Path,
    source: io::Result<S>,
    cache: Option<Arc<BlockCache>>,
) -> Result<TableFile<S>, ProbeError> {
    let source = source.map_err(|source| ProbeError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    match cache {
        None => TableFile::new(source),
        Some(cache) => TableFile::with_cache(source, cache),
    }
    .map_err(|source| ProbeError::bad_file(path, source))
}

/// What a path that is not a regular file is, in words.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    if kind.is_file() {
        return "a file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a fifo";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    "not a regular file"
}

impl OpenTable {
    fn bad_file(&self, source: FormatError) -> ProbeError {
        ProbeError::bad_file(&self.path, source)
    }
}

impl IndexedValues for OpenTable {
    fn side_layout(&self, turn: Color) -> &Layout {
        self.file.layout(turn)
    }

    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, ProbeError> {
        self.file
            .kept_wdl(turn, index)
            .map_err(|source| self.bad_file(source))
    }

    fn capture_bounded(&self) -> bool {
        true
    }

    fn wdl_chunks(&self) -> Option<&dyn WdlChunks> {
        Some(self)
    }
}

impl WdlChunks for OpenTable {
    fn chunk_count(&self) -> usize {
        self.file.chunk_count()
    }

    fn chunk_of(&self, turn: Color, index: TableIndex) -> (usize, usize) {
        self.file.chunk_of(turn, index)
    }

    fn chunk_range(&self, chunk: usize) -> (Color, std::ops::Range<u64>) {
        self.file.chunk_range(chunk)
    }

    fn unpack_chunk(&self, chunk: usize) -> Result<Vec<u8>, ProbeError> {
        self.file
            .wdl_chunk(chunk)
            .map_err(|source| self.bad_file(source))
    }
}

impl StoredValues for Tablebase {
    fn rule(&self) -> Rule {
        self.rule
    }

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError> {
        Ok(self.open_table(material)?)
    }

    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        self.stored(board, turn, TableFile::kept_wdl)
            .map(KeptWdl::UnlessCapture)
    }

    fn kept_dtz(&self, board: &Board, turn: Color, wdl: Wdl) -> Result<KeptDtz, ProbeError> {
        let (table, material) = self.table_of(board)?;
        let dtz = table
            .file
            .dtz_of_board(board, turn, wdl)
            .ok_or(ProbeError::NoValue { material })?
            .map_err(|source| table.bad_file(source))?;
        Ok(self.kept_dtz_of(dtz, wdl))
    }

    fn kept_values(
        &self,
        board: &Board,
        turn: Color,
        complete: &mut dyn FnMut(KeptWdl) -> Result<Wdl, ProbeError>,
    ) -> Result<(Wdl, KeptDtz), ProbeError> {
        let (table, turn, index) = self.place(board, turn)?;
        let kept = table
            .file
            .kept_wdl(turn, index)
            .map_err(|source| table.bad_file(source))?;
        let wdl = complete(KeptWdl::UnlessCapture(kept))?;
        let dtz = table
            .file
            .dtz_given(turn, index, wdl)
            .map_err(|source| table.bad_file(source))?;
        Ok((wdl, self.kept_dtz_of(dtz, wdl)))
    }
}

impl Tablebase {
    /// What a file's DTZ `dtz` ([`TableFile::dtz_given`]) of a position
    /// whose WDL is `wdl` keeps.
    fn kept_dtz_of(&self, dtz: Option<Dtz>, wdl: Wdl) -> KeptDtz {
        match dtz {
            None => KeptDtz::Moves,
            // A win stored as fast as its kind can be is that fast either way.
            Some(dtz) if wdl > Wdl::Draw && Dtz::fastest(wdl, self.rule) != Some(dtz) => {
                KeptDtz::UnlessZeroing(dtz)
            }
            Some(dtz) => KeptDtz::Exact(dtz),
        }
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
