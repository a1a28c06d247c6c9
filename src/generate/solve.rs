//! The retrograde solver: exact DTZ for every position of one table.
//!
//! Every position gets one [`Cell`] per side to move, one byte each in
//! memory-mapped arrays (values longer than [`crate::generate::cells::EXACT`] plies
//! in a side map), held by [`TableCells`]. Pawn tables are solved one pawn
//! *level* at a time, most advanced first (see [`crate::index`]): pawn
//! moves always raise the level, so when a level is solved every pawn move
//! out of it reaches final values. Only the level being solved is open;
//! finished levels of large tables are packed, so a 5-piece pawn table
//! needs one level's bytes, not the whole table's.
//!
//! For each level:
//!
//! 1. **Seed** (parallel over the level's cells, see the `seed` module).
//!    Overlapping placements and positions whose side not to move is in
//!    check are [`Cell::ILLEGAL`]. Positions without moves are mated or
//!    stalemate. Every zeroing move (capture, pawn move, promotion) is
//!    scored from the value of the position it reaches (sub-tables, or a
//!    higher level of this table, read by index; en passant as in
//!    [`crate::probe::resolve_dtz`]). A position decided by its zeroing moves alone (win
//!    in 1, or no quiet move) gets its final DTZ; the others are
//!    `UNKNOWN_*`, remembering what their zeroing moves guarantee.
//! 2. **Plies** `k = 1, 2, ...`, each a set of parallel passes that start
//!    from the positions valued `k - 1`: those the previous ply decided
//!    (kept in lists, so quiet plies cost little, unless a ply decides more
//!    than one position in 32 of the level: then they are found again by a
//!    scan, which keeps the lists' memory under a bit per cell), or, for
//!    the values the seed produces (mated, ±1, ±(L + 1)), a scan of the
//!    cells:
//!    * *wins*: every unknown predecessor (by a quiet unmove) of a position
//!      lost in `k - 1` (mated, for `k = 1`) is won in `k`;
//!    * *losses*: predecessors of positions won in `k - 1` are marked in a
//!      bit set (bitvec) as candidates; a candidate all of whose quiet moves
//!      reach known wins for the opponent, and whose zeroing moves lose, is
//!      lost in `k = max(d + 1)`. The check reads one bit per successor
//!      (won in at most `k - 1`, or illegal), not its byte, and the bits of
//!      all the moves of the piece whose square is the index's lowest
//!      digit in one read: its 64 squares are 64 cells in a row, one word
//!      of bits (see [`Layout::lowest_digit_piece`]). A win claim reads
//!      the same bits before the byte: most predecessors of a lost
//!      position are won already where one side wins almost everywhere.
//!
//!    Each of the two passes runs in one of two directions, whichever
//!    costs less by a simple estimate (see [`Direction`]): *push* from the
//!    frontier as above, or *pull*: scan the level for undecided cells of
//!    the side in question and test each one forward (a win needs one
//!    quiet move to a position lost in `k - 1`; a loss, the forward check).
//!    Both find the same positions. Pushing is cheap while the frontier is
//!    small; pulling wins once few cells are left undecided, as in tables
//!    that the stronger side wins almost everywhere.
//!
//!    At `k = L + 1` (L = 100, 150; no such ply without a rule) the
//!    positions whose best zeroing move is cursed become cursed wins in
//!    `L + 1`, and those whose zeroing moves are blessed losses become
//!    candidates. The loop ends once a ply past `L + 1` changes nothing;
//!    what is still unknown is a draw.
//!
//! Identical pieces (KRRvKR's two rooks) are not merged in the index, so
//! each such position has an index per order of their squares. Only the
//! index with their squares sorted is seeded ([`Layout::sorted_identical`])
//! and has a cell, which every order reads and writes: cells and the
//! level's bits are kept by *slot*, one per position (see the `slots`
//! module). That halves the work and the memory of these tables (KRRvKR,
//! KBBvKN, KNNvK*; KRNvKNN's 7.75 G indices a side are 3.94 G positions),
//! as the seed and the plies would otherwise solve every such position
//! twice and keep both.
//!
//! As a position gets its final value, the solver records one bit: whether
//! its best zeroing move reaches that value's WDL (an `UNKNOWN_*` code of
//! the same WDL, or a seed decided by zeroing moves). The writer needs
//! exactly that (which positions a capture or a zeroing move decides, so
//! a file may store less there; see [`Table::zeroing_reaches`]), and
//! recording it costs nothing next to seeding every position again after
//! the solve, which took a quarter of a 5-piece build.
//!
//! With a work directory, the state between two plies is written to a
//! checkpoint now and then, and a solve that finds one goes on from it
//! (see the `checkpoint` module); the first ply after a resume finds its
//! frontier by a scan, as after a ply that decided too many to list.
//!
//! Every pass writes each cell at most once with a value that does not
//! depend on thread timing (a compare-and-swap decides which thread lists
//! a new win), so the result is the same for any thread count. Quiet moves
//! and unmoves of pieces are the same squares (pieces move reversibly),
//! generated from attack bitboards; for everything but a king of a
//! pawnless table the index changes by `(to - from) · stride`.

use std::{
    io,
    ops::Range,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::Duration,
};

use rayon::prelude::*;
use shakmaty::{Board, ByColor, Color, Position};
use thiserror::Error;

use crate::{
    generate::{
        cell::Cell,
        cells::{CellArray, CellTest, PACK_THRESHOLD, TableBits, TableCells},
        checkpoint::{Between, Checkpoints, LevelBitSet, LevelBits, level_bits},
        level_list::LevelList,
        seed::{Search, Seeder},
        table::Table,
        tenths::Tenths,
    },
    index::{Layout, Placement, TableIndex},
    material::Material,
    mmap::{WorkArray, available_space},
    probe::{IndexedValues, KeptDtz, KeptWdl, ProbeError, StoredValues, score_move},
    value::{Dtz, Rule, Wdl},
};

/// How to solve.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// The draw rule.
    pub rule: Rule,
    /// Keep the work arrays in a temporary file in this directory instead
    /// of anonymous memory (for index spaces larger than RAM).
    pub work_dir: Option<PathBuf>,
    /// How the plies' passes find new values (the result is the same).
    pub direction: Direction,
    /// With `work_dir`: write a checkpoint there between plies at most
    /// this often (every ply for zero), and resume from the one found
    /// there (see [`crate::generate::checkpoint_path`]).
    pub checkpoint_every: Option<Duration>,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            rule: Rule::Fifty,
            work_dir: None,
            direction: Direction::Auto,
            checkpoint_every: None,
        }
    }
}

/// How a ply's passes find new values (see the module doc). Every choice
/// gives the same table; `Auto` is the fast one, the others are there to
/// prove that and to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Direction {
    /// Per pass, whichever of push and pull is estimated cheaper.
    #[default]
    Auto,
    /// Always from the frontier.
    Push,
    /// Always from the undecided cells.
    Pull,
}

impl Direction {
    /// Whether to pull wins: the scan reads every cell of the level (about
    /// [`WIN_SCAN_CELLS`] cells cost as much as one position's search),
    /// then searches each undecided cell; pushing searches each frontier
    /// position.
    fn pull_wins(self, undecided: u64, frontier: u64, level_size: u64) -> bool {
        match self {
            Direction::Auto => undecided + level_size / WIN_SCAN_CELLS < frontier,
            Direction::Push => false,
            Direction::Pull => true,
        }
    }

    /// Whether to pull losses: the scan, then a forward check of each
    /// undecided cell that can still be lost (most fail at the first move
    /// or are skipped without one); pushing marks every predecessor of each
    /// frontier position and checks the marked ones, about
    /// [`LOSS_PUSH_WEIGHT`] times the work per frontier position.
    fn pull_losses(self, undecided: u64, frontier: u64, level_size: u64) -> bool {
        match self {
            Direction::Auto => {
                undecided + level_size / LOSS_SCAN_CELLS < LOSS_PUSH_WEIGHT * frontier
            }
            Direction::Push => false,
            Direction::Pull => true,
        }
    }
}

/// Cells a pulling scan reads for the cost of one position's search for a
/// winning move (measured on KQRvKR, see BENCHMARKS.md).
const WIN_SCAN_CELLS: u64 = 256;
/// Cells a pulling scan for losses reads for the cost of one forward check.
const LOSS_SCAN_CELLS: u64 = 16;
/// Forward checks that cost as much as pushing from one won position.
const LOSS_PUSH_WEIGHT: u64 = 16;

/// Why a table could not be solved.
#[derive(Debug, Error)]
pub enum SolveError {
    /// A zeroing move reached a table that is not available.
    #[error("solving {material}")]
    Lookup {
        /// The table being solved.
        material: Material,
        /// What the lookup said.
        source: ProbeError,
    },
    /// The work arrays could not be allocated.
    #[error("solving {material}: work arrays")]
    Io {
        /// The table being solved.
        material: Material,
        /// The I/O error.
        source: io::Error,
    },
    /// A checkpoint could not be written.
    #[error("solving {material}: cannot write the checkpoint {}", path.display())]
    Checkpoint {
        /// The table being solved.
        material: Material,
        /// The checkpoint file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

/// Why a level's solve stopped.
enum Stop {
    Lookup(ProbeError),
    Checkpoint(PathBuf, io::Error),
}

impl From<ProbeError> for Stop {
    fn from(e: ProbeError) -> Stop {
        Stop::Lookup(e)
    }
}

/// What the solver is doing, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Seeding pawn level `level` (0-based, of `levels`): `percent` of
    /// its positions done (0 as it starts, then every tenth).
    Seed {
        /// Levels done so far.
        level: usize,
        /// Levels in all.
        levels: usize,
        /// How much of the level is seeded.
        percent: u8,
    },
    /// Finished ply `ply` of pawn level `level`.
    Ply {
        /// Levels done so far.
        level: usize,
        /// Levels in all.
        levels: usize,
        /// The ply just solved.
        ply: i16,
        /// Positions (both sides to move) this ply decided.
        decided: u64,
        /// Positions of the level still undecided after it (those left at
        /// the end are draws).
        undecided: u64,
    },
    /// Wrote a checkpoint after ply `ply` of pawn level `level`.
    Checkpoint {
        /// Levels done so far.
        level: usize,
        /// Levels in all.
        levels: usize,
        /// The last ply solved.
        ply: i16,
    },
    /// Resumed from the checkpoint in the work directory: ply `ply` of
    /// pawn level `level` comes next.
    Resumed {
        /// Levels done so far.
        level: usize,
        /// Levels in all.
        levels: usize,
        /// The ply to run next.
        ply: i16,
    },
    /// The checkpoint in the work directory cannot be used: solving from
    /// the start.
    CheckpointUnusable(Unusable),
}

/// Why a checkpoint in the work directory is not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    /// Damaged, truncated, or written for another table or version.
    Damaged,
    /// Reading it failed with this kind of error (permission denied, ...).
    Unreadable(io::ErrorKind),
}

impl Unusable {
    /// The reason a failed checkpoint read gives.
    fn of(error: &io::Error) -> Unusable {
        match error.kind() {
            io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => Unusable::Damaged,
            kind => Unusable::Unreadable(kind),
        }
    }
}

/// Cells per unit of parallel work.
pub(crate) const CHUNK: u64 = 1 << 14;

/// Solve `material` (normalised) with sub-table values from `subtables`.
///
/// # Errors
/// A missing sub-table, or work arrays that cannot be allocated.
pub fn solve(
    material: Material,
    options: &SolveOptions,
    subtables: &(dyn StoredValues + Sync),
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Table, SolveError> {
    let layout = Layout::new(material);
    let slices = level_slices(&layout);
    let allocate = |size| match &options.work_dir {
        Some(dir) => WorkArray::file_backed(dir, size),
        None => WorkArray::anonymous(size),
    };
    let io_error = |source| SolveError::Io { material, source };
    let pack = slices.len() > 1 && layout.size() >= PACK_THRESHOLD;
    let fresh_cells = || TableCells::new(&layout, &slices, pack);
    let mut cells = fresh_cells();
    let positions = cells.table_slots();
    let fresh_bits = || -> Result<ByColor<TableBits>, SolveError> {
        Ok(ByColor {
            white: TableBits::new(positions).map_err(io_error)?,
            black: TableBits::new(positions).map_err(io_error)?,
        })
    };
    let levels: Vec<Level> = slices
        .iter()
        .map(|s| Level::new(s.len(), cells.slice_slots()))
        .collect();
    let mut zeroing_reaches = fresh_bits()?;
    let checkpoints =
        options
            .work_dir
            .as_ref()
            .zip(options.checkpoint_every)
            .map(|(dir, every)| {
                Checkpoints::new(
                    dir,
                    material,
                    options.rule,
                    layout.size(),
                    levels.len(),
                    every,
                )
            });
    if let Some(dir) = &options.work_dir {
        ensure_space(dir, work_space(&cells, checkpoints.as_ref())).map_err(io_error)?;
    }
    let mut resume = None;
    if let Some(checkpoints) = &checkpoints {
        match checkpoints.load(&mut cells, &mut zeroing_reaches, allocate) {
            Ok(None) => {}
            Ok(Some(found)) => {
                progress(Progress::Resumed {
                    level: found.between.level,
                    levels: levels.len(),
                    ply: found.between.next,
                });
                resume = Some(found);
            }
            Err(error) => {
                progress(Progress::CheckpointUnusable(Unusable::of(&error)));
                cells = fresh_cells();
                zeroing_reaches = fresh_bits()?;
            }
        }
    }
    let first = resume.as_ref().map_or(0, |r| r.between.level);
    for (number, level) in levels.iter().enumerate().skip(first) {
        let size = usize::try_from(cells.level_size(number)).expect("level fits in memory");
        let (between, settled) = match resume.take() {
            Some(r) => (Some(r.between), r.settled),
            None => {
                cells.open(number, allocate).map_err(io_error)?;
                (None, ByColor::new_with(|_| level_bits(size)))
            }
        };
        let solver = Solver {
            layout: &layout,
            rule: options.rule,
            direction: options.direction,
            cells: &cells,
            level: number,
            open: cells.level_arrays(number),
            candidates: level_bits(size),
            settled,
            lowest: ByColor::new_with(|turn| {
                layout
                    .lowest_digit_piece(turn)
                    .filter(|_| cells.keeps_lowest_digit())
            }),
            zeroing_reaches: &zeroing_reaches,
            subtables,
        };
        let levels = levels.len();
        let step = |step| {
            progress(match step {
                Step::Seed(percent) => Progress::Seed {
                    level: number,
                    levels,
                    percent,
                },
                Step::Ply {
                    ply,
                    decided,
                    undecided,
                } => Progress::Ply {
                    level: number,
                    levels,
                    ply,
                    decided,
                    undecided,
                },
                Step::Checkpoint(ply) => Progress::Checkpoint {
                    level: number,
                    levels,
                    ply,
                },
            });
        };
        solver
            .solve_level(level, between, checkpoints.as_ref(), &step)
            .map_err(|stop| match stop {
                Stop::Lookup(source) => SolveError::Lookup { material, source },
                Stop::Checkpoint(path, source) => SolveError::Checkpoint {
                    material,
                    path,
                    source,
                },
            })?;
        cells.close(number).map_err(io_error)?;
    }
    Ok(Table::new(layout, options.rule, cells, zeroing_reaches))
}

/// What [`Solver::solve_level`] reports.
#[derive(Debug, Clone, Copy)]
enum Step {
    Seed(u8),
    Ply {
        ply: i16,
        decided: u64,
        undecided: u64,
    },
    Checkpoint(i16),
}

/// The slices of each level, most advanced pawns first (one level for
/// pawnless tables).
fn level_slices(layout: &Layout) -> Vec<Vec<usize>> {
    let mut by_level: Vec<(u8, usize)> = (0..layout.slice_count())
        .map(|s| (layout.slice_level(s), s))
        .collect();
    by_level.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut levels: Vec<Vec<usize>> = Vec::new();
    let mut last = None;
    for (level, slice) in by_level {
        if last != Some(level) {
            levels.push(Vec::new());
            last = Some(level);
        }
        levels.last_mut().expect("pushed").push(slice);
    }
    levels
}

/// Solves one level of a table.
struct Solver<'a> {
    layout: &'a Layout,
    rule: Rule,
    direction: Direction,
    cells: &'a TableCells,
    /// The level being solved, and its arrays (the passes' hot path).
    level: usize,
    open: ByColor<&'a CellArray>,
    /// Loss candidates, by index within the level, of the side whose
    /// losses are being found: one bit set serves both sides, since a loss
    /// pass marks its candidates and clears every mark it checks before the
    /// other side's pass starts (they run one after the other, see
    /// [`Solver::ply`]), so between passes it is clear.
    candidates: LevelBitSet,
    /// By index within the level: the cells that are illegal or won in at
    /// most `k - 1` plies while ply `k` runs (its own wins are added after
    /// its loss pass). Forward checks read these bits instead of the
    /// successors' bytes: an eighth of the memory, mostly in cache.
    settled: LevelBits,
    /// By side to move: the piece whose square is the index's lowest digit
    /// ([`Layout::lowest_digit_piece`]) where the level's cells keep that
    /// digit ([`TableCells::keeps_lowest_digit`]). Its quiet moves reach 64
    /// consecutive cells, whose bits share one word: a forward check
    /// tests them all with one read of `settled`, and a loss pass marks
    /// their predecessors with one write.
    lowest: ByColor<Option<usize>>,
    /// By index in the table: whether the position's best zeroing move
    /// reaches the WDL of its final value (see [`Table::zeroing_reaches`]).
    zeroing_reaches: &'a ByColor<TableBits>,
    subtables: &'a (dyn StoredValues + Sync),
}

/// The positions of one pawn level, cut into chunks for parallel passes:
/// ranges of the level's cells ([`TableCells::locate`]), each within one
/// slice, each starting at a multiple of 64 cells.
struct Level {
    chunks: Vec<Range<u64>>,
}

impl Level {
    /// The chunks of a level of `slices` slices of `slice_slots` cells.
    fn new(slices: usize, slice_slots: u64) -> Level {
        assert!(
            slices == 1 || slice_slots.is_multiple_of(64),
            "slices start at a multiple of 64 cells"
        );
        let chunks = (0..slices as u64)
            .flat_map(|place| {
                let (start, end) = (place * slice_slots, (place + 1) * slice_slots);
                (start..end)
                    .step_by(CHUNK as usize)
                    .map(move |at| at..(at + CHUNK).min(end))
            })
            .collect();
        Level { chunks }
    }
}

/// Where a ply finds the positions valued `k - 1` that it starts from.
/// Either way they are the level's positions holding one value (for
/// losses, [`Frontier::value`]).
enum Frontier {
    /// Scan the level's cells for this value (after the seed, whose values
    /// are not listed anywhere).
    Scan(Cell),
    /// Scan the level's cells for this value, of which each side to move
    /// has this many: the previous ply decided too many to list.
    Counted(Cell, ByColor<u64>),
    /// The positions the previous ply decided, by side to move.
    Listed(ByColor<LevelList>),
}

impl Frontier {
    /// The frontier of the positions a ply decided, which hold `value`.
    fn of(found: ByColor<Found>, value: Cell) -> Frontier {
        match found {
            ByColor {
                white: Found::Listed(white),
                black: Found::Listed(black),
            } => Frontier::Listed(ByColor { white, black }),
            found => Frontier::Counted(value, found.map(|f| f.len())),
        }
    }

    /// The value its positions hold; `listed` for a listed frontier (which
    /// holds what the previous ply decided).
    fn value(&self, listed: Cell) -> Cell {
        match self {
            Frontier::Scan(value) | Frontier::Counted(value, _) => *value,
            Frontier::Listed(_) => listed,
        }
    }

    /// How many of `turn`'s positions the frontier holds, if known without
    /// a scan.
    fn size(&self, turn: Color) -> Option<u64> {
        match self {
            Frontier::Scan(_) => None,
            Frontier::Counted(_, counts) => Some(*counts.get(turn)),
            Frontier::Listed(lists) => Some(lists.get(turn).len() as u64),
        }
    }
}

/// The positions one pass decided: listed, or only counted when listing
/// them would take more memory than the level's share allows (see
/// [`LIST_CELLS_PER_ENTRY`]; the next ply then scans for their value).
enum Found {
    Listed(LevelList),
    Counted(u64),
}

impl Found {
    fn len(&self) -> u64 {
        match self {
            Found::Listed(list) => list.len() as u64,
            Found::Counted(n) => *n,
        }
    }

    /// Both `self` and `other`, listed if they fit under `limit`.
    fn join(self, other: Found, limit: u64) -> Found {
        match (self, other) {
            (Found::Listed(mut a), Found::Listed(b)) if (a.len() + b.len()) as u64 <= limit => {
                a.append(b);
                Found::Listed(a)
            }
            (a, b) => Found::Counted(a.len() + b.len()),
        }
    }
}

/// A pass lists at most one position per this many cells of the level
/// (4 bytes each in a level of up to 2^32 positions, [`LevelList`]: a bit
/// of memory per cell). Tables that one side wins almost everywhere decide
/// most of a level within a few plies, and lists of those positions took
/// more memory than the cells themselves. One in 64 (a list in 8 bytes)
/// took KRBvKR's build 48 MiB less memory and 13 % more time, for the
/// scans that then find the positions again (see BENCHMARKS.md).
const LIST_CELLS_PER_ENTRY: u64 = 32;

/// How many positions one pass over a level of `size` positions may list.
fn list_limit(size: u64) -> u64 {
    size / LIST_CELLS_PER_ENTRY
}

/// Gathers what the chunks of one pass decide while the total fits under
/// `limit`; past it, only counts.
struct Lister {
    /// Positions of the level.
    size: u64,
    limit: u64,
    count: AtomicU64,
}

impl Lister {
    /// A lister for a pass over a level of `size` positions.
    fn new(size: u64) -> Lister {
        Lister {
            size,
            limit: list_limit(size),
            count: AtomicU64::new(0),
        }
    }

    /// One chunk's positions (by index within the level): kept, or
    /// dropped (and counted) if the pass has decided too many to list.
    fn keep(&self, part: Vec<u64>) -> LevelList {
        let n = part.len() as u64;
        if self.count.fetch_add(n, Ordering::Relaxed) + n > self.limit {
            LevelList::default()
        } else {
            LevelList::of(part, self.size)
        }
    }

    fn finish(self, parts: Vec<LevelList>) -> Found {
        let count = self.count.into_inner();
        if count > self.limit {
            Found::Counted(count)
        } else {
            Found::Listed(LevelList::concat(parts))
        }
    }
}

/// What one ply decided: new wins and new losses, by side to move.
struct PlyResult {
    won: ByColor<Found>,
    lost: ByColor<Found>,
}

impl PlyResult {
    fn changed(&self) -> u64 {
        self.won
            .iter()
            .chain(self.lost.iter())
            .map(Found::len)
            .sum()
    }
}

impl Solver<'_> {
    /// Seed and solve `level`, or go on from `between` (a checkpoint's);
    /// write `checkpoints` when due; `progress` hears the seed, each ply
    /// and each checkpoint.
    fn solve_level(
        &self,
        level: &Level,
        between: Option<Between>,
        checkpoints: Option<&Checkpoints>,
        progress: &(dyn Fn(Step) + Sync),
    ) -> Result<(), Stop> {
        let special = self.rule.limit().map(|l| l + 1);
        let (mut k, mut previous, mut undecided) = match between {
            // The frontier's positions are found again by a scan for
            // their value (its list is not kept).
            Some(b) => (
                b.next,
                b.frontier.map(|(won, lost)| PlyResult {
                    won: won.map(Found::Counted),
                    lost: lost.map(Found::Counted),
                }),
                b.undecided,
            ),
            None => {
                self.seed(level, progress)?;
                for turn in Color::ALL {
                    self.settle_scanned(level, turn, Cell::ILLEGAL);
                }
                let undecided =
                    ByColor::new_with(|turn| self.count(level, turn, CellTest::Undecided));
                (1, None, undecided)
            }
        };
        loop {
            let (won, lost) = self.frontiers(k, special, previous.take());
            let result = self.ply(level, k, special == Some(k), &won, &lost, &mut undecided);
            // Wins in k: found by this ply, and some seeded.
            for turn in Color::ALL {
                match result.won.get(turn) {
                    Found::Listed(list) if !seeds_ply(k, special) => {
                        self.settle_listed(turn, list);
                    }
                    _ => self.settle_scanned(level, turn, Cell(k)),
                }
            }
            let changed = result.changed();
            progress(Step::Ply {
                ply: k,
                decided: changed,
                undecided: undecided.white + undecided.black,
            });
            // Seeded cells hold ±1 (so ply 2 always runs) and, for
            // positions without quiet moves, ±(L + 1) (so ply L + 2
            // runs); otherwise a ply that changes nothing leaves the
            // next one nothing to start from.
            let next = match special {
                _ if changed > 0 || k < 2 => k + 1,
                Some(s) if k < s => s,
                Some(s) if k == s => s + 1,
                _ => break,
            };
            if next == k + 1 {
                previous = Some(result);
            }
            if let Some(checkpoints) = checkpoints.filter(|c| c.due()) {
                self.publish();
                let sizes = |found: &ByColor<Found>| found.as_ref().map(Found::len);
                let between = Between {
                    level: self.level,
                    next,
                    frontier: previous.as_ref().map(|r| (sizes(&r.won), sizes(&r.lost))),
                    undecided,
                };
                checkpoints
                    .save(&between, self.cells, self.zeroing_reaches, &self.settled)
                    .map_err(|e| Stop::Checkpoint(checkpoints.path().to_path_buf(), e))?;
                progress(Step::Checkpoint(k));
            }
            k = next;
        }
        self.finalize(level);
        Ok(())
    }

    /// The positions ply `k` starts from: (won in `k - 1`, lost in
    /// `k - 1`). Values the seed can produce (mated, ±1, ±(L + 1)) are
    /// found by scanning; others were found by the previous ply (`None`
    /// after a jump, when nothing holds `k - 1`).
    fn frontiers(
        &self,
        k: i16,
        special: Option<i16>,
        previous: Option<PlyResult>,
    ) -> (Frontier, Frontier) {
        if k == 1 {
            (
                Frontier::Listed(ByColor::default()),
                Frontier::Scan(Cell::MATED),
            )
        } else if seeds_ply(k - 1, special) {
            (Frontier::Scan(Cell(k - 1)), Frontier::Scan(Cell(-(k - 1))))
        } else {
            match previous {
                Some(result) => (
                    Frontier::of(result.won, Cell(k - 1)),
                    Frontier::of(result.lost, Cell(-(k - 1))),
                ),
                None => (
                    Frontier::Listed(ByColor::default()),
                    Frontier::Listed(ByColor::default()),
                ),
            }
        }
    }

    /// The index that stands for the position at `index`: in tables with
    /// identical pieces (KRRvKR's rooks), one position has an index per
    /// order of their squares, and solving each of them would do the same
    /// work twice (six times for three). Only the index with the squares
    /// sorted ([`Layout::sorted_identical`]) is seeded; every order shares
    /// its cell, its bits in the level and its bit in the record of
    /// zeroing moves (see the `slots` module), so the passes follow moves
    /// and unmoves without sorting.
    #[inline]
    fn sorted(&self, index: u64) -> u64 {
        self.layout.sorted_identical(index)
    }

    #[inline]
    fn load(&self, turn: Color, index: u64) -> Cell {
        let (level, local) = self.cells.locate(index);
        if level == self.level {
            self.open.get(turn).load(local)
        } else {
            self.cells.load(turn, index)
        }
    }

    /// The open array and index within it (only the level being solved is
    /// written).
    #[inline]
    fn open_cell(&self, turn: Color, index: u64) -> (&CellArray, u64) {
        let (level, local) = self.cells.locate(index);
        debug_assert_eq!(level, self.level);
        (self.open.get(turn), local)
    }

    /// Run `visit` on the index of every cell of `range` (a chunk of the
    /// open level) whose `turn` cell passes `test`, in order.
    fn find(&self, turn: Color, range: &Range<u64>, test: CellTest, mut visit: impl FnMut(u64)) {
        self.open.get(turn).find(range.clone(), test, |local| {
            visit(self.cells.index_in(self.level, local))
        });
    }

    /// Whether `turn`'s cell at `index` (in the open level) is `cell`.
    #[inline]
    fn holds(&self, turn: Color, index: u64, cell: Cell) -> bool {
        let (cells, local) = self.open_cell(turn, index);
        cells.holds(local, cell)
    }

    fn store(&self, turn: Color, index: u64, cell: Cell) {
        let (cells, local) = self.open_cell(turn, index);
        cells.store(local, cell);
    }

    /// Set an unknown cell to its final value `cell`; false if it was not
    /// unknown (or another thread set it first).
    fn claim(&self, turn: Color, index: u64, cell: Cell) -> bool {
        let (cells, local) = self.open_cell(turn, index);
        cells
            .claim(local, cell)
            .map(|unknown| self.note_final(turn, index, unknown, cell))
            .is_some()
    }

    /// Set an unknown cell to its final value `cell`.
    fn decide(&self, turn: Color, index: u64, cell: Cell) {
        let unknown = self.load(turn, index);
        self.store(turn, index, cell);
        self.note_final(turn, index, unknown, cell);
    }

    /// Record that the position at `index`, whose cell held `unknown`
    /// (what its zeroing moves guarantee), is now `last`: its best zeroing
    /// move reaches that WDL or not.
    fn note_final(&self, turn: Color, index: u64, unknown: Cell, last: Cell) {
        let wdl = |dtz| Wdl::from_dtz(dtz, self.rule);
        let reaches = unknown
            .zeroing_score(self.rule)
            .zip(last.value())
            .is_some_and(|(zeroing, last)| wdl(zeroing) == wdl(last));
        if reaches {
            self.zeroing_reaches
                .get(turn)
                .set(self.cells.table_slot(index));
        }
    }

    /// Whether a seed `cell` is a final value because of the position's
    /// zeroing moves (so the best of them reaches it): every final seed
    /// value but mate and stalemate.
    fn decided_by_zeroing(&self, cell: Cell, placement: &Placement, turn: Color) -> bool {
        match cell {
            Cell::ILLEGAL | Cell::MATED => false,
            cell if cell.is_unknown() => false,
            // A draw with legal moves: all of them zeroing, the best drawing.
            Cell(0) => self
                .layout
                .position(placement, turn)
                .is_some_and(|position| !position.legal_moves().is_empty()),
            _ => true,
        }
    }

    /// Mark `index` as a loss candidate (of the side whose loss pass runs).
    fn mark(&self, index: u64) {
        let (_, local) = self.cells.locate(index);
        let bits = &self.candidates;
        // A plain load first: most marks find the bit set already, and an
        // atomic read-modify-write costs far more than a read.
        if !bits[local as usize] {
            bits.set_aliased(local as usize, true);
        }
    }

    /// Add every `turn` cell of the level holding `value` to `settled`, a
    /// word of bits at a time (a chunk covers whole words: it starts at a
    /// multiple of 64 cells, and ends at one or at the level's end).
    fn settle_scanned(&self, level: &Level, turn: Color, value: Cell) {
        let words = self.settled.get(turn).as_raw_slice();
        level.chunks.par_iter().for_each(|range| {
            let mut word: Option<(usize, u64)> = None;
            self.open
                .get(turn)
                .find(range.clone(), CellTest::Is(value), |local| {
                    let local = local as usize;
                    let (at, bit) = (local / 64, 1u64 << (local % 64));
                    word = match word {
                        Some((w, bits)) if w == at => Some((w, bits | bit)),
                        Some((w, bits)) => {
                            words[w].fetch_or(bits, Ordering::Relaxed);
                            Some((at, bit))
                        }
                        None => Some((at, bit)),
                    };
                });
            if let Some((w, bits)) = word {
                words[w].fetch_or(bits, Ordering::Relaxed);
            }
        });
    }

    /// Add listed positions of `turn` to `settled`.
    fn settle_listed(&self, turn: Color, list: &LevelList) {
        let settled = self.settled.get(turn);
        list.par_for_each(|local| settled.set_aliased(local as usize, true));
    }

    /// The place within the open level of `index`, as lists take it: 64
    /// bits, for a pawnless six-piece table without identical pieces
    /// (KQRvKBN) is one level of 7.75 G positions per side (a list keeps
    /// it in 32 where the level allows: [`LevelList`]).
    #[inline]
    fn local(&self, index: u64) -> u64 {
        let (level, local) = self.cells.locate(index);
        debug_assert_eq!(level, self.level);
        local
    }

    /// Make out-of-range values written so far readable (between passes).
    fn publish(&self) {
        self.cells.publish();
    }

    /// Seed every position of `level`, telling `progress` as it starts
    /// and as each tenth of the level's chunks is done.
    fn seed(&self, level: &Level, progress: &(dyn Fn(Step) + Sync)) -> Result<(), ProbeError> {
        progress(Step::Seed(0));
        let seeder = Seeder::new(self.layout, self.rule, self, Search::All)?;
        let report = |percent| progress(Step::Seed(percent));
        let tenths = Tenths::new(level.chunks.len(), &report);
        let seeded = level.chunks.par_iter().try_for_each(|range| {
            let seeded_chunk = self.seed_chunk(&seeder, range);
            tenths.chunk_done();
            seeded_chunk
        });
        self.publish();
        seeded
    }

    /// Seed the positions of one chunk (of the level's cells).
    fn seed_chunk(&self, seeder: &Seeder<'_>, range: &Range<u64>) -> Result<(), ProbeError> {
        // The chunk's cells are the sorted indices of a range of indices.
        let first = self.cells.index_in(self.level, range.start);
        let last = self.cells.index_in(self.level, range.end - 1);
        self.layout
            .try_for_each_placement(first..last + 1, |index, placement| {
                if self.sorted(index) != index {
                    // Another order of this position's identical pieces,
                    // which has no cell of its own (see `Solver::sorted`).
                    return Ok(());
                }
                let cells = seeder.cells(&placement.squares)?;
                for turn in Color::ALL {
                    let cell = match *cells.get(turn) {
                        Some(cell) => cell,
                        None => self.general_cell(placement, turn)?,
                    };
                    self.store(turn, index, cell);
                    if self.decided_by_zeroing(cell, placement, turn) {
                        self.zeroing_reaches
                            .get(turn)
                            .set(self.cells.table_slot(index));
                    }
                }
                Ok(())
            })
    }

    /// The initial cell through shakmaty's move generation and
    /// [`score_move`] (positions whose value involves en passant).
    fn general_cell(&self, placement: &Placement, turn: Color) -> Result<Cell, ProbeError> {
        let Some(pos) = self.layout.position(placement, turn) else {
            return Ok(Cell::ILLEGAL);
        };
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Ok(if pos.is_check() { Cell::MATED } else { Cell(0) });
        }
        let mut zeroing: Option<Dtz> = None;
        let mut quiet = false;
        for m in &moves {
            if m.is_zeroing() {
                let score = score_move(self, &pos, m)?;
                zeroing = Some(zeroing.map_or(score, |z| z.prefer(score)));
            } else {
                quiet = true;
            }
        }
        Ok(match zeroing {
            Some(z) if !quiet || z == Dtz(1) => Cell::dtz(z),
            z => Cell::unknown_after_zeroing(z),
        })
    }

    /// Run `visit` on every position of `frontier` for side `turn`, in
    /// parallel, and gather what it lists.
    fn gather(
        &self,
        level: &Level,
        frontier: &Frontier,
        turn: Color,
        visit: impl Fn(u64, &mut Vec<u64>) + Sync,
    ) -> Found {
        match frontier {
            Frontier::Scan(value) | Frontier::Counted(value, _) => {
                self.scan_level(level, turn, CellTest::Is(*value), visit)
            }
            Frontier::Listed(lists) => {
                let lister = self.lister();
                let parts = lists.get(turn).par_chunks_map(CHUNK as usize, |locals| {
                    let mut out = Vec::new();
                    locals
                        .for_each(|local| visit(self.cells.index_in(self.level, local), &mut out));
                    lister.keep(out)
                });
                lister.finish(parts)
            }
        }
    }

    /// How many positions one pass may list.
    fn list_limit(&self) -> u64 {
        list_limit(self.cells.level_size(self.level))
    }

    /// A lister for one pass over the open level.
    fn lister(&self) -> Lister {
        Lister::new(self.cells.level_size(self.level))
    }

    /// Run `visit` on every index of `level` whose `turn` cell passes
    /// `test`, in parallel, and gather what it lists (`visit` may change
    /// the cell).
    fn scan_level(
        &self,
        level: &Level,
        turn: Color,
        test: CellTest,
        visit: impl Fn(u64, &mut Vec<u64>) + Sync,
    ) -> Found {
        let lister = self.lister();
        let parts: Vec<LevelList> = level
            .chunks
            .par_iter()
            .map(|range| {
                let mut out = Vec::new();
                self.find(turn, range, test, |index| visit(index, &mut out));
                lister.keep(out)
            })
            .collect();
        lister.finish(parts)
    }

    /// One ply: wins in `k`, then losses in `k`. `undecided` counts each
    /// side's undecided cells in the level and is kept up to date.
    fn ply(
        &self,
        level: &Level,
        k: i16,
        special: bool,
        won: &Frontier,
        lost: &Frontier,
        undecided: &mut ByColor<u64>,
    ) -> PlyResult {
        let new_wins = ByColor::new_with(|winner| {
            let wins = self.wins(level, k, lost, winner, *undecided.get(winner));
            if special {
                let cursed = self.scan_level(
                    level,
                    winner,
                    CellTest::Is(Cell::UNKNOWN_CURSED_WIN),
                    |index, out| {
                        if self.claim(winner, index, Cell(k)) {
                            out.push(self.local(index));
                        }
                    },
                );
                return wins.join(cursed, self.list_limit());
            }
            wins
        });
        self.publish();
        for turn in Color::ALL {
            *undecided.get_mut(turn) -= new_wins.get(turn).len();
        }
        // One side after the other: the two loss passes share the bits of
        // their candidates.
        let new_losses = ByColor::new_with(|loser| {
            self.losses(level, k, special, won, loser, *undecided.get(loser))
        });
        self.publish();
        for turn in Color::ALL {
            *undecided.get_mut(turn) -= new_losses.get(turn).len();
        }
        PlyResult {
            won: new_wins,
            lost: new_losses,
        }
    }

    /// `winner`'s positions won in `k`: the undecided ones with a quiet
    /// move to a position of `lost`.
    fn wins(&self, level: &Level, k: i16, lost: &Frontier, winner: Color, undecided: u64) -> Found {
        // The length of a seeded frontier is not known: push from it.
        let pull = match lost.size(winner.other()) {
            Some(frontier) => {
                self.direction
                    .pull_wins(undecided, frontier, self.cells.level_size(self.level))
            }
            None => self.direction == Direction::Pull,
        };
        if pull {
            let target = lost.value(Cell(-(k - 1)));
            return self.scan_level(level, winner, CellTest::Undecided, |index, out| {
                let placement = self.layout.decode(TableIndex(index));
                let mut found = false;
                self.layout
                    .quiet_moves(&placement, TableIndex(index), winner, |next| {
                        found = self.holds(winner.other(), next, target);
                        !found
                    });
                if found {
                    self.decide(winner, index, Cell(k));
                    out.push(self.local(index));
                }
            });
        }
        // Predecessors of the opponent's positions lost in k - 1. Most of
        // them are won already in a table one side wins almost everywhere:
        // their bit in `settled` says so from a word that is likely in
        // cache, where their cell would be a read from memory.
        let settled = self.settled.get(winner);
        self.gather(level, lost, winner.other(), |index, out| {
            let placement = self.layout.decode(TableIndex(index));
            self.layout
                .quiet_moves(&placement, TableIndex(index), winner, |pred| {
                    let (_, local) = self.cells.locate(pred);
                    if !settled[local as usize] && self.claim(winner, pred, Cell(k)) {
                        out.push(self.local(pred));
                    }
                    true
                });
        })
    }

    /// `loser`'s positions lost in `k`: those all of whose quiet moves
    /// reach positions won for the opponent, the longest of them in
    /// `k - 1` (a position of `won`), and whose zeroing moves force no
    /// longer loss.
    fn losses(
        &self,
        level: &Level,
        k: i16,
        special: bool,
        won: &Frontier,
        loser: Color,
        undecided: u64,
    ) -> Found {
        let frontier = won.size(loser.other()).unwrap_or_else(|| {
            self.count(level, loser.other(), CellTest::Is(won.value(Cell(k - 1))))
        });
        if self
            .direction
            .pull_losses(undecided, frontier, self.cells.level_size(self.level))
        {
            return self.scan_level(level, loser, CellTest::Undecided, |index, out| {
                if self.lost_in(loser, k, index) {
                    out.push(self.local(index));
                }
            });
        }
        // Candidates (marked in a bit set, which also removes duplicates):
        // predecessors of the opponent's positions won in k - 1, and at the
        // special ply the positions whose zeroing moves reach a blessed
        // loss.
        let lowest = *self.lowest.get(loser);
        self.gather(level, won, loser.other(), |index, _| {
            let placement = self.layout.decode(TableIndex(index));
            // Marked without reading the cell: the bit set is denser than
            // the cells, and the forward check skips decided positions.
            if let Some(slot) = lowest {
                let (word, targets) = self.lowest_word(&placement, index, slot);
                let words = self.candidates.as_raw_slice();
                // A plain load first, as in `mark`.
                if words[word].load(Ordering::Relaxed) & targets != targets {
                    words[word].fetch_or(targets, Ordering::Relaxed);
                }
            }
            self.layout
                .quiet_moves_but(&placement, TableIndex(index), loser, lowest, |pred| {
                    self.mark(pred);
                    true
                });
        });
        if special {
            self.scan_level(
                level,
                loser,
                CellTest::Is(Cell::UNKNOWN_BLESSED_LOSS),
                |index, _| {
                    self.mark(index);
                },
            );
        }
        let lister = self.lister();
        let parts: Vec<LevelList> = level
            .chunks
            .par_iter()
            .map(|range| lister.keep(self.candidate_losses(loser, k, range)))
            .collect();
        lister.finish(parts)
    }

    /// Forward-check the candidates in `range` (cells of the level,
    /// clearing their marks). Returns the new losses.
    fn candidate_losses(&self, loser: Color, k: i16, range: &Range<u64>) -> Vec<u64> {
        let bits = &self.candidates[range.start as usize..range.end as usize];
        let mut lost_now = Vec::new();
        for offset in bits.iter_ones() {
            bits.set_aliased(offset, false);
            let local = range.start + offset as u64;
            if self.lost_in(loser, k, self.cells.index_in(self.level, local)) {
                lost_now.push(local);
            }
        }
        lost_now
    }

    /// The forward check: if `loser`'s position at `index` is lost in `k`
    /// by now, store that and return true.
    ///
    /// It is, if its zeroing moves allow a loss in `k` and every quiet move
    /// reaches a position in `settled` (won for the opponent in at most
    /// `k - 1`, or illegal). Such a position is lost in exactly `k`: its
    /// longest successor is won in some `m < k`, so the ply `m + 1`
    /// checked it (a predecessor of a position won in `m`), and it was not
    /// lost then only if its zeroing moves forced a longer loss, which is
    /// `L + 1` (the blessed losses checked at `k = L + 1`).
    fn lost_in(&self, loser: Color, k: i16, index: u64) -> bool {
        if loss_floor(self.load(loser, index), self.rule).is_none_or(|floor| floor > k) {
            return false;
        }
        let placement = self.layout.decode(TableIndex(index));
        let settled = self.settled.get(loser.other());
        let lowest = *self.lowest.get(loser);
        if let Some(slot) = lowest {
            let (word, targets) = self.lowest_word(&placement, index, slot);
            if settled.as_raw_slice()[word].load(Ordering::Relaxed) & targets != targets {
                return false;
            }
        }
        let mut lost = true;
        self.layout
            .quiet_moves_but(&placement, TableIndex(index), loser, lowest, |next| {
                let (_, local) = self.cells.locate(next);
                lost = settled[local as usize];
                lost
            });
        if lost {
            self.decide(loser, index, Cell(-k));
        }
        lost
    }

    /// For the piece in `slot`, the index's lowest digit
    /// ([`Solver::lowest`]), of the position at `index`: the word of the
    /// level's bits (`settled`, `candidates`) that holds every square of
    /// that digit, and the bits of the squares the piece moves to quietly
    /// (the positions its moves reach, and, moves being reversible, those
    /// its unmoves come from).
    fn lowest_word(&self, placement: &Placement, index: u64, slot: usize) -> (usize, u64) {
        let (_, local) = self.cells.locate(index);
        let first = local - u64::from(placement.squares[slot]);
        debug_assert!(first.is_multiple_of(64), "the digit's cells share a word");
        let occupied = self.layout.occupied(placement);
        let targets = self.layout.quiet_targets(placement, slot, occupied);
        ((first / 64) as usize, u64::from(targets))
    }

    /// How many of the level's `turn` cells pass `test`.
    fn count(&self, level: &Level, turn: Color, test: CellTest) -> u64 {
        level
            .chunks
            .par_iter()
            .map(|range| {
                let mut n = 0;
                self.open.get(turn).find(range.clone(), test, |_| n += 1);
                n
            })
            .sum()
    }

    /// Turn what is still unknown into draws. (An index in another order
    /// of identical pieces has no cell of its own: it reads its sorted
    /// index's, see [`Solver::sorted`].)
    fn finalize(&self, level: &Level) {
        level.chunks.par_iter().for_each(|range| {
            for turn in Color::ALL {
                let open = self.open.get(turn);
                for local in range.clone() {
                    let cell = open.load(local);
                    let last = cell.finalize();
                    if last != cell {
                        open.store(local, last);
                        let index = self.cells.index_in(self.level, local);
                        self.note_final(turn, index, cell, last);
                    }
                }
            }
        });
        self.publish();
    }
}

/// Bytes the work directory needs for `cells`' arrays and `checkpoints`
/// of a table. Open levels of a packed table live on disk one at a time;
/// a table that is not packed keeps every level's arrays. A checkpoint
/// holds about as much again, and the table's bits (one per position and
/// side), and the next one is written beside the last before it replaces
/// it.
fn work_space(cells: &TableCells, checkpoints: Option<&Checkpoints>) -> u64 {
    let positions = cells.table_slots();
    let (largest, total) = (0..cells.level_count())
        .map(|l| cells.level_size(l))
        .fold((0, 0), |(largest, total), size| {
            (largest.max(size), total + size)
        });
    let arrays = 2 * if cells.is_packed() { largest } else { total };
    match checkpoints {
        None => arrays,
        Some(c) => (arrays + 2 * (arrays + positions / 4)).saturating_sub(c.existing_bytes()),
    }
}

/// Check that `dir` has `bytes` free for the work arrays, so that a full
/// disk is an error before the solve starts rather than part way through.
pub(crate) fn ensure_space(dir: &Path, bytes: u64) -> io::Result<()> {
    let free = available_space(dir)?;
    if free < bytes {
        return Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!("need {bytes} bytes in {}, {free} are free", dir.display()),
        ));
    }
    Ok(())
}

/// Whether the seed stores values of ply `k` too (±1, and ±(L + 1) at the
/// special ply `special`), so that only a scan finds all of them.
fn seeds_ply(k: i16, special: Option<i16>) -> bool {
    k == 1 || special == Some(k)
}

/// For a cell that may still become a loss, the least loss length its
/// zeroing moves already force (0: none); `None` if it cannot be lost.
fn loss_floor(cell: Cell, rule: Rule) -> Option<i16> {
    match cell {
        Cell::UNKNOWN => Some(0),
        Cell::UNKNOWN_LOSS => Some(1),
        Cell::UNKNOWN_BLESSED_LOSS => Some(rule.limit().map_or(1, |l| l + 1)),
        _ => None,
    }
}

impl IndexedValues for Solver<'_> {
    fn side_layout(&self, _: Color) -> &Layout {
        self.layout
    }

    fn wdl_at(&self, turn: Color, TableIndex(index): TableIndex) -> Result<Wdl, ProbeError> {
        let dtz = self.load(turn, index).value().ok_or(ProbeError::NoValue {
            material: self.layout.material(),
        })?;
        Ok(Wdl::from_dtz(dtz, self.rule))
    }
}

impl StoredValues for Solver<'_> {
    fn rule(&self) -> Rule {
        self.rule
    }

    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError> {
        if *material == self.layout.material() {
            Ok(self)
        } else {
            self.subtables.indexed(material)
        }
    }

    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError> {
        match self.own_dtz(board, turn)? {
            Some(dtz) => Ok(KeptWdl::Exact(Wdl::from_dtz(dtz, self.rule))),
            None => self.subtables.kept_wdl(board, turn),
        }
    }

    fn kept_dtz(&self, board: &Board, turn: Color, wdl: Wdl) -> Result<KeptDtz, ProbeError> {
        match self.own_dtz(board, turn)? {
            Some(dtz) => Ok(KeptDtz::Exact(dtz)),
            None => self.subtables.kept_dtz(board, turn, wdl),
        }
    }
}

impl Solver<'_> {
    /// The solved DTZ of `board` if it is this table's material (`None`:
    /// another table's).
    ///
    /// # Errors
    /// [`ProbeError::NoValue`] if this table holds no final value there.
    fn own_dtz(&self, board: &Board, turn: Color) -> Result<Option<Dtz>, ProbeError> {
        let material = self.layout.material();
        if Material::from_board(board).normalized() != material {
            return Ok(None);
        }
        let (turn, TableIndex(index)) = self
            .layout
            .locate(board, turn)
            .ok_or(ProbeError::NoValue { material })?;
        self.load(turn, index)
            .value()
            .map(Some)
            .ok_or(ProbeError::NoValue { material })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{slots::solved_positions, table::TableSet};

    /// Six-piece tables, pawnless and with pawns (up to four, and a run of
    /// three identical knights), split into levels whose cells the solver
    /// can hold: every slice in exactly one level, each level's slices of
    /// one pawn advancement, and the levels' positions adding up to the
    /// table's. (Solving one is hours, not a unit test: see BENCHMARKS.md.)
    #[test]
    fn six_piece_tables_split_into_levels() {
        for name in ["KRNvKNN", "KQRvKBN", "KRPPvKR", "KPPPvKP", "KNNNPvK"] {
            let material: Material = name.parse().expect("material");
            let layout = Layout::new(material);
            let levels = level_slices(&layout);
            let cells = TableCells::new(&layout, &levels, true);
            let mut slices: Vec<usize> = levels.iter().flatten().copied().collect();
            slices.sort_unstable();
            assert_eq!(
                slices,
                (0..layout.slice_count()).collect::<Vec<_>>(),
                "{name}"
            );
            for slices in &levels {
                let level = layout.slice_level(slices[0]);
                assert!(
                    slices.iter().all(|&s| layout.slice_level(s) == level),
                    "{name}"
                );
            }
            let positions: u64 = (0..cells.level_count()).map(|l| cells.level_size(l)).sum();
            assert_eq!(positions, solved_positions(material), "{name}");
            assert_eq!(levels.len() > 1, material.has_pawns(), "{name}");
        }
    }

    #[test]
    fn a_work_dir_without_room_fails_before_the_solve() {
        let dir = std::env::temp_dir();
        let free = available_space(&dir).expect("statvfs");
        assert!(ensure_space(&dir, free / 2).is_ok());
        let err = ensure_space(&dir, u64::MAX).expect_err("no disk is that large");
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert!(
            err.to_string()
                .starts_with(&format!("need {} bytes in ", u64::MAX))
        );
        let options = SolveOptions {
            work_dir: Some(PathBuf::from("/nonexistent/work")),
            ..SolveOptions::default()
        };
        let material = "KQvK".parse().expect("material");
        let err = solve(material, &options, &TableSet::new(), &|_| {}).expect_err("no dir");
        assert_eq!(err.to_string(), "solving KQvK: work arrays");
    }

    /// Pushing, pulling and the automatic choice between them give the
    /// same cells: on a pawnless table that the stronger side wins almost
    /// everywhere (where `Auto` pulls), on one with identical pieces (only
    /// one order of their squares solved, the others copied), on a pawn table (levels,
    /// promotions, draws), and under the 75-move rule (whose special plies
    /// go through the overflow map).
    #[test]
    fn every_direction_gives_the_same_table() {
        for (name, rule) in [
            ("KQvKR", Rule::Fifty),
            ("KRRvK", Rule::Fifty),
            ("KRvKP", Rule::Fifty),
            ("KRvKP", Rule::SeventyFive),
        ] {
            let material: Material = name.parse().expect("material");
            let options = |direction| SolveOptions {
                rule,
                direction,
                ..SolveOptions::default()
            };
            let mut subtables = TableSet::new();
            for sub in Material::with_dependencies(&[material]) {
                if sub != material {
                    let table =
                        solve(sub, &options(Direction::Auto), &subtables, &|_| {}).expect("solves");
                    subtables.insert(table);
                }
            }
            let [auto, push, pull] =
                [Direction::Auto, Direction::Push, Direction::Pull].map(|direction| {
                    solve(material, &options(direction), &subtables, &|_| {}).expect("solves")
                });
            let mut decided = 0;
            for turn in Color::ALL {
                for index in 0..auto.layout().size() {
                    let index = TableIndex(index);
                    let cell = auto.cell(turn, index);
                    assert_eq!(push.cell(turn, index), cell, "{name} {turn:?} {index:?}");
                    assert_eq!(pull.cell(turn, index), cell, "{name} {turn:?} {index:?}");
                    decided += usize::from(cell.value().is_some_and(|d| d != Dtz(0)));
                }
            }
            assert!(decided > 100_000, "{name}: {decided} decisive positions");
        }
    }
}
