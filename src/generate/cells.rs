//! Solver cells at one byte per position and side to move.
//!
//! A [`CellArray`] holds the [`Cell`] of every position of one side to move
//! in a [`WorkArray`] of bytes. Each byte is a code:
//!
//! ```text
//! code        meaning
//! 0           Cell::ILLEGAL (zeroed memory is "illegal" until seeded)
//! 1           Cell::MATED
//! 2           draw, Cell(0)
//! 3 ..= 7     the five Cell::UNKNOWN_* codes
//! 8, 9        a win / a loss longer than EXACT plies: the exact value is
//!             in the overflow map
//! 10 ..= 132  win in 1 ..= EXACT plies
//! 133 ..= 255 loss in 1 ..= EXACT plies
//! ```
//!
//! Values beyond [`EXACT`] plies are rare with a draw rule (cursed wins
//! and blessed losses, or `L + 1` itself under the 75-move rule), so they
//! sit in a hash map beside the bytes. A value stored out of range goes to
//! a pending list first; [`CellArray::publish`] moves pending values into
//! the map. The solver publishes between passes, so every pass reads
//! exact values of everything written before it; within a pass, code 8/9
//! is still a decisive value of the right sign.
//!
//! A [`TableCells`] holds a whole table, one pawn level at a time (see
//! the `solve` module): the level being solved is an open [`CellArray`] per
//! side; finished levels of large pawn tables are packed (zstd, fast
//! level, in chunks of [`PACK_CHUNK`] positions) so that memory holds one
//! open level plus compressed bytes. Reading a packed cell unpacks its chunk
//! into a per-thread cache of [`CACHED_CHUNKS`] chunks (16 MiB); the
//! solver's reads of finished levels (pawn pushes) go through positions in
//! order, and the file writer reads a pawn slice's chunks block after
//! block, so a chunk is unpacked about once per pass.

use std::{
    cell::RefCell,
    collections::HashMap,
    io::{self, Read, Write},
    ops::Range,
    sync::{
        Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use rayon::prelude::*;
use shakmaty::{ByColor, Color};

use crate::{
    generate::{
        cell::Cell,
        record::{RecordReader, RecordWriter, invalid},
        slots::Slots,
    },
    index::Layout,
    mmap::{WorkArray, prefetch},
};

/// Longest win or loss, in plies, stored in the byte itself.
pub const EXACT: i16 = 123;

const ILLEGAL: u8 = 0;
const MATED: u8 = 1;
const DRAW: u8 = 2;
const UNKNOWN_FIRST: u8 = 3;
const OVERFLOW_WIN: u8 = 8;
const OVERFLOW_LOSS: u8 = 9;
const WIN_BASE: u8 = 9;
const LOSS_BASE: u8 = 132;

/// The five unknown codes, in byte order 3..=7.
const UNKNOWNS: [Cell; 5] = [
    Cell::UNKNOWN_LOSS,
    Cell::UNKNOWN_BLESSED_LOSS,
    Cell::UNKNOWN_DRAW,
    Cell::UNKNOWN_CURSED_WIN,
    Cell::UNKNOWN,
];

/// What [`CellArray::find`] looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellTest {
    /// Undecided cells (any of the `UNKNOWN_*` values).
    Undecided,
    /// Cells holding this value.
    Is(Cell),
}

/// The cells of one side to move (see the module doc).
#[derive(Debug)]
pub struct CellArray {
    bytes: WorkArray,
    overflow: RwLock<Overflow>,
    pending: Mutex<Vec<(u64, i16)>>,
}

impl CellArray {
    /// Cells over `bytes` (all illegal until written).
    pub fn new(bytes: WorkArray) -> CellArray {
        CellArray {
            bytes,
            overflow: RwLock::new(Overflow::default()),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// The cell at `index`.
    ///
    /// # Panics
    /// If an out-of-range value was stored but not yet published.
    #[inline]
    pub fn load(&self, index: u64) -> Cell {
        self.load_published(index)
            .expect("overflow values are published before they are read")
    }

    /// The cell at `index`; `None` if it holds an out-of-range value that
    /// is not yet published (one stored since the last
    /// [`CellArray::publish`]).
    #[inline]
    pub fn load_published(&self, index: u64) -> Option<Cell> {
        let code = self.code(index);
        match decode(code) {
            Some(cell) => Some(cell),
            None => {
                let map = self.overflow.read().expect("overflow map lock");
                map.get(index).map(Cell)
            }
        }
    }

    /// Every cell some position holds, each once, in no particular order
    /// (the overflow map's values included): a scan of the codes, not a
    /// decode of every position.
    pub fn distinct(&self) -> Vec<Cell> {
        let seen = self
            .bytes
            .bytes()
            .par_chunks(1 << 20)
            .map(|chunk| {
                let mut seen = [false; 256];
                for byte in chunk {
                    seen[usize::from(byte.load(Ordering::Relaxed))] = true;
                }
                seen
            })
            .reduce(|| [false; 256], either_seen);
        let overflow = self.overflow.read().expect("overflow map lock");
        cells_seen(&seen, &overflow)
    }

    /// Start loading the cell at `index` into the cache ([`prefetch`]).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        prefetch(&self.bytes.bytes()[index as usize]);
    }

    /// Call `visit` with every index in `range` whose cell passes `test`,
    /// in order. Reads the codes without decoding them, so a scan over a
    /// whole level costs about one byte compare per cell.
    pub fn find(&self, range: Range<u64>, test: CellTest, mut visit: impl FnMut(u64)) {
        let codes = match test {
            CellTest::Undecided => UNKNOWN_FIRST..=OVERFLOW_WIN - 1,
            CellTest::Is(cell) => match encode_exact(cell) {
                Some(code) => code..=code,
                None => {
                    range.filter(|&i| self.holds(i, cell)).for_each(visit);
                    return;
                }
            },
        };
        let bytes = &self.bytes.bytes()[range.start as usize..range.end as usize];
        for (offset, byte) in bytes.iter().enumerate() {
            if codes.contains(&byte.load(Ordering::Relaxed)) {
                visit(range.start + offset as u64);
            }
        }
    }

    /// Whether the cell at `index` is `cell`, comparing codes where `cell`
    /// has one. For a value in the overflow map, only a cell with the
    /// matching overflow code is looked up, so values of the other sign
    /// may still be unpublished (a pass reading the side that the pass
    /// before it, in the same ply, gave new wins).
    #[inline]
    pub fn holds(&self, index: u64, cell: Cell) -> bool {
        let code = self.code(index);
        match encode_exact(cell) {
            Some(exact) => code == exact,
            None => code == overflow_code(cell) && self.load(index) == cell,
        }
    }

    /// Store `cell` at `index`.
    #[inline]
    pub fn store(&self, index: u64, cell: Cell) {
        self.bytes.bytes()[index as usize].store(self.encode(index, cell), Ordering::Relaxed);
    }

    /// Store `cell` at `index` if it holds an unknown code, and return
    /// that code; `None` if it did not (or another thread claimed it
    /// first).
    #[inline]
    pub fn claim(&self, index: u64, cell: Cell) -> Option<Cell> {
        let slot = &self.bytes.bytes()[index as usize];
        let old = slot.load(Ordering::Relaxed);
        if !(UNKNOWN_FIRST..OVERFLOW_WIN).contains(&old) {
            return None;
        }
        let code = encode_exact(cell);
        slot.compare_exchange(
            old,
            code.unwrap_or(overflow_code(cell)),
            Ordering::Relaxed,
            Ordering::Relaxed,
        )
        .ok()?;
        if code.is_none() {
            self.defer(index, cell);
        }
        Some(UNKNOWNS[usize::from(old - UNKNOWN_FIRST)])
    }

    /// Make every value stored so far readable by [`CellArray::load`].
    pub fn publish(&self) {
        let pending = std::mem::take(&mut *self.pending.lock().expect("pending lock"));
        if !pending.is_empty() {
            self.overflow
                .write()
                .expect("overflow map lock")
                .extend(pending);
        }
    }

    /// How many values live in the overflow map.
    #[cfg(test)]
    fn overflow_len(&self) -> usize {
        self.overflow.read().expect("overflow map lock").len()
    }

    #[inline]
    fn code(&self, index: u64) -> u8 {
        self.bytes.bytes()[index as usize].load(Ordering::Relaxed)
    }

    fn encode(&self, index: u64, cell: Cell) -> u8 {
        encode_exact(cell).unwrap_or_else(|| {
            self.defer(index, cell);
            overflow_code(cell)
        })
    }

    fn defer(&self, index: u64, cell: Cell) {
        self.pending
            .lock()
            .expect("pending lock")
            .push((index, cell.0));
    }
}

/// Positions per packed chunk.
pub const PACK_CHUNK: usize = 1 << 16;

/// Tables at least this large (positions per side) with more than one
/// level pack their finished levels.
pub const PACK_THRESHOLD: u64 = 1 << 25;

/// zstd level for packed chunks: fast, the bytes are packed once.
const PACK_LEVEL: i32 = 1;

/// Distinguishes packed arrays in the per-thread cache.
static NEXT_PACK_ID: AtomicU64 = AtomicU64::new(0);

/// Unpacked chunks kept per thread (64 KiB each), each in the slot its
/// pack id and chunk number pick. A stream written in another order than
/// the solver's reads a pawn slice's chunks a few positions each, block
/// after block: KRPvKR's writer unpacked each chunk about 16 times per
/// stream with 4 kept (see BENCHMARKS.md).
const CACHED_CHUNKS: usize = 256;

/// One unpacked chunk: (pack id, chunk number, bytes).
type Unpacked = (u64, usize, Vec<u8>);

/// A thread's unpacked chunks, by slot ([`Unpacker::slot`]), and the zstd
/// context it unpacks them with (making one per chunk took 7 % of
/// KRPvKR's writing).
struct Unpacker {
    chunks: Vec<Option<Unpacked>>,
    context: zstd::bulk::Decompressor<'static>,
}

impl Unpacker {
    /// The slot of chunk `chunk` of pack `id`: consecutive chunks in
    /// consecutive slots, and the same chunk of two packs (a pawn push's
    /// two target levels) apart.
    fn slot(id: u64, chunk: usize) -> usize {
        (chunk + 97 * id as usize) % CACHED_CHUNKS
    }
}

thread_local! {
    static UNPACKED: RefCell<Option<Unpacker>> = const { RefCell::new(None) };
}

/// The finished cells of one level and side, compressed.
#[derive(Debug)]
pub struct PackedCells {
    id: u64,
    chunks: Vec<Box<[u8]>>,
    overflow: Overflow,
}

impl PackedCells {
    fn pack(cells: CellArray) -> io::Result<PackedCells> {
        cells.publish();
        // A chunk at a time: a copy of the whole level first took KRPvKR's
        // build to its peak (67 MB a side).
        let chunks = cells
            .bytes
            .bytes()
            .par_chunks(PACK_CHUNK)
            .map(|chunk| {
                let plain: Vec<u8> = chunk.iter().map(|b| b.load(Ordering::Relaxed)).collect();
                zstd::bulk::compress(&plain, PACK_LEVEL).map(Vec::into_boxed_slice)
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(PackedCells {
            id: NEXT_PACK_ID.fetch_add(1, Ordering::Relaxed),
            chunks,
            overflow: cells.overflow.into_inner().expect("overflow map lock"),
        })
    }

    fn load(&self, index: u64) -> Cell {
        let (chunk, offset) = (index as usize / PACK_CHUNK, index as usize % PACK_CHUNK);
        let code = self.with_chunk(chunk, |bytes| bytes[offset]);
        self.decoded(index, code)
    }

    /// Append the `len` cells from `start` to `out`, all in one chunk.
    fn load_run(&self, start: u64, len: usize, out: &mut Vec<Cell>) {
        let (chunk, offset) = (start as usize / PACK_CHUNK, start as usize % PACK_CHUNK);
        debug_assert!(offset + len <= PACK_CHUNK, "a run within one chunk");
        self.with_chunk(chunk, |bytes| {
            let codes = &bytes[offset..offset + len];
            out.extend(
                (start..)
                    .zip(codes)
                    .map(|(index, &code)| self.decoded(index, code)),
            );
        });
    }

    /// `read` of the bytes of chunk `chunk`, from this thread's cache of
    /// unpacked chunks, unpacked into it first if not there.
    fn with_chunk<R>(&self, chunk: usize, read: impl FnOnce(&[u8]) -> R) -> R {
        UNPACKED.with_borrow_mut(|unpacker| {
            let Unpacker { chunks, context } = unpacker.get_or_insert_with(|| Unpacker {
                chunks: vec![None; CACHED_CHUNKS],
                context: zstd::bulk::Decompressor::new().expect("a zstd context"),
            });
            let slot = &mut chunks[Unpacker::slot(self.id, chunk)];
            match slot {
                Some((id, c, bytes)) if *id == self.id && *c == chunk => read(bytes),
                _ => {
                    // The chunk in the slot gives its bytes to the new one.
                    let mut bytes = slot
                        .take()
                        .map_or_else(|| Vec::with_capacity(PACK_CHUNK), |(_, _, bytes)| bytes);
                    bytes.clear();
                    context
                        .decompress_to_buffer(&self.chunks[chunk], &mut bytes)
                        .expect("packed chunks decompress (written by this process)");
                    read(&slot.insert((self.id, chunk, bytes)).2)
                }
            }
        })
    }

    /// The cell of `code` at `index`.
    #[inline]
    fn decoded(&self, index: u64, code: u8) -> Cell {
        decode(code).unwrap_or_else(|| {
            Cell(
                self.overflow
                    .get(index)
                    .expect("overflow values are published before packing"),
            )
        })
    }

    /// Every cell the level holds, each once ([`CellArray::distinct`]):
    /// each chunk unpacked once and its codes scanned.
    fn distinct(&self) -> Vec<Cell> {
        let seen = self
            .chunks
            .par_iter()
            .map(|chunk| {
                let bytes = zstd::bulk::decompress(chunk, PACK_CHUNK)
                    .expect("packed chunks decompress (written by this process)");
                let mut seen = [false; 256];
                for byte in bytes {
                    seen[usize::from(byte)] = true;
                }
                seen
            })
            .reduce(|| [false; 256], either_seen);
        cells_seen(&seen, &self.overflow)
    }
}

/// One level's cells for one side: being solved, or finished.
#[derive(Debug)]
enum LevelCells {
    Open(CellArray),
    Packed(PackedCells),
}

/// Checkpoint tags: a level not yet solved, or one with cells.
const LEVEL_ABSENT: u64 = 0;
const LEVEL_PRESENT: u64 = 1;
/// Checkpoint tags of one side's cells.
const CELLS_OPEN: u64 = 1;
const CELLS_PACKED: u64 = 2;

impl LevelCells {
    fn save<W: Write>(&self, out: &mut RecordWriter<W>) -> io::Result<()> {
        match self {
            LevelCells::Open(open) => {
                out.u64(CELLS_OPEN)?;
                out.atomic_bytes(open.bytes.bytes())?;
                save_overflow(&open.overflow.read().expect("overflow map lock"), out)
            }
            LevelCells::Packed(packed) => {
                out.u64(CELLS_PACKED)?;
                out.u64(packed.chunks.len() as u64)?;
                for chunk in &packed.chunks {
                    out.run(chunk)?;
                }
                save_overflow(&packed.overflow, out)
            }
        }
    }

    fn restore<R: Read>(
        input: &mut RecordReader<R>,
        size: usize,
        allocate: impl Fn(usize) -> io::Result<WorkArray>,
    ) -> io::Result<LevelCells> {
        Ok(match input.u64()? {
            CELLS_OPEN => {
                let mut bytes = allocate(size)?;
                input.bytes(bytes.bytes_mut())?;
                let open = CellArray::new(bytes);
                *open.overflow.write().expect("overflow map lock") = restore_overflow(input, size)?;
                LevelCells::Open(open)
            }
            CELLS_PACKED => {
                let count: usize = input.int()?;
                if count != size.div_ceil(PACK_CHUNK) {
                    return Err(invalid(format!("{count} packed chunks for {size} cells")));
                }
                let limit = zstd::zstd_safe::compress_bound(PACK_CHUNK) as u64;
                let chunks = (0..count)
                    .map(|_| input.run(limit).map(Vec::into_boxed_slice))
                    .collect::<io::Result<_>>()?;
                LevelCells::Packed(PackedCells {
                    id: NEXT_PACK_ID.fetch_add(1, Ordering::Relaxed),
                    chunks,
                    overflow: restore_overflow(input, size)?,
                })
            }
            tag => return Err(invalid(format!("cells tag {tag}"))),
        })
    }
}

/// Write the long values of one level and side.
fn save_overflow<W: Write>(map: &Overflow, out: &mut RecordWriter<W>) -> io::Result<()> {
    out.u64(map.len() as u64)?;
    for (index, value) in map.iter() {
        out.u64(index)?;
        out.u64(u64::from(value as u16))?;
    }
    Ok(())
}

/// Read what [`save_overflow`] wrote for a level of `size` cells.
fn restore_overflow<R: Read>(input: &mut RecordReader<R>, size: usize) -> io::Result<Overflow> {
    let count: usize = input.int()?;
    if count > size {
        return Err(invalid(format!("{count} long values for {size} cells")));
    }
    (0..count)
        .map(|_| {
            let index = input.u64()?;
            let value: u16 = input.int()?;
            if index >= size as u64 {
                return Err(invalid(format!("a long value at {index} of {size} cells")));
            }
            Ok((index, value as i16))
        })
        .collect()
}

/// Cells' values beyond [`EXACT`] plies, by index: one map per 2^32
/// indices keyed by the index's low 32 bits, which takes half the memory of
/// one map keyed by the whole index (KRNvKNN keeps over a hundred million
/// cursed wins and blessed losses per side here).
#[derive(Debug, Default)]
struct Overflow {
    shards: Vec<HashMap<u32, i16>>,
}

impl Overflow {
    /// The value at `index`, if there is one.
    #[inline]
    fn get(&self, index: u64) -> Option<i16> {
        let shard = self.shards.get((index >> 32) as usize)?;
        shard.get(&(index as u32)).copied()
    }

    /// How many values it holds.
    fn len(&self) -> usize {
        self.shards.iter().map(HashMap::len).sum()
    }

    /// Every value with its index, in no particular order.
    fn iter(&self) -> impl Iterator<Item = (u64, i16)> + '_ {
        self.shards.iter().enumerate().flat_map(|(shard, map)| {
            map.iter()
                .map(move |(&low, &value)| (((shard as u64) << 32) | u64::from(low), value))
        })
    }
}

impl Extend<(u64, i16)> for Overflow {
    fn extend<I: IntoIterator<Item = (u64, i16)>>(&mut self, values: I) {
        for (index, value) in values {
            let shard = (index >> 32) as usize;
            if self.shards.len() <= shard {
                self.shards.resize_with(shard + 1, HashMap::new);
            }
            self.shards[shard].insert(index as u32, value);
        }
    }
}

impl FromIterator<(u64, i16)> for Overflow {
    fn from_iter<I: IntoIterator<Item = (u64, i16)>>(values: I) -> Overflow {
        let mut map = Overflow::default();
        map.extend(values);
        map
    }
}

/// One bit per position of a table, by [`TableCells::table_slot`] (one
/// bit for every order of identical pieces), in memory mapped on demand:
/// a page is allocated when a bit in it is first set, so a pawn table's
/// bits grow level by level as it is solved.
#[derive(Debug)]
pub struct TableBits {
    bytes: WorkArray,
}

impl TableBits {
    /// `positions` bits, all clear.
    ///
    /// # Errors
    /// If the memory cannot be mapped.
    pub fn new(positions: u64) -> io::Result<TableBits> {
        let len = usize::try_from(positions.div_ceil(8)).expect("table fits in memory");
        Ok(TableBits {
            bytes: WorkArray::anonymous(len)?,
        })
    }

    /// Set the bit of `slot` (threads may set bits at once).
    #[inline]
    pub fn set(&self, slot: u64) {
        self.bytes.bytes()[(slot / 8) as usize].fetch_or(1 << (slot % 8), Ordering::Relaxed);
    }

    /// Start loading the bit of `slot` into the cache ([`prefetch`]).
    #[inline]
    pub fn prefetch(&self, slot: u64) {
        prefetch(&self.bytes.bytes()[(slot / 8) as usize]);
    }

    /// The bit of `slot`.
    #[inline]
    pub fn get(&self, slot: u64) -> bool {
        self.bytes.bytes()[(slot / 8) as usize].load(Ordering::Relaxed) & 1 << (slot % 8) != 0
    }

    /// Write the bits to a checkpoint (nothing may set one meanwhile).
    pub(crate) fn save<W: Write>(&self, out: &mut RecordWriter<W>) -> io::Result<()> {
        out.atomic_bytes(self.bytes.bytes())
    }

    /// Read the bits [`TableBits::save`] wrote for a table of this size.
    pub(crate) fn restore<R: Read>(&mut self, input: &mut RecordReader<R>) -> io::Result<()> {
        input.bytes(self.bytes.bytes_mut())
    }
}

/// Every cell of one table, both sides to move, level by level (see the
/// module doc). A level keeps one cell per slot of its slices ([`Slots`]:
/// one per position, where identical pieces give a position more than one
/// index), the level's slices one after another.
#[derive(Debug)]
pub struct TableCells {
    /// log2 of the slice size, for pawn tables (one slice otherwise).
    slice_shift: Option<u32>,
    /// Where a slice's positions keep their cells.
    slots: Slots,
    /// For each slice: its level and its place among the level's slices.
    slice_place: Vec<(u32, u32)>,
    /// The slices of each level, in order.
    level_slices: Vec<Vec<usize>>,
    /// Positions (slots) per side in each level.
    level_sizes: Vec<u64>,
    levels: Vec<Option<ByColor<LevelCells>>>,
    pack: bool,
}

impl Drop for TableCells {
    /// A packed table's chunks leave every thread's cache with it: 16 MiB
    /// a thread would otherwise stay for the next table of a set.
    fn drop(&mut self) {
        if self.pack {
            UNPACKED.set(None);
            rayon::broadcast(|_| UNPACKED.set(None));
        }
    }
}

impl TableCells {
    /// Storage for `layout` whose slices fall into `levels` (slice numbers
    /// per level); no level is open yet. Finished levels are packed if
    /// `pack` (the solver packs tables of [`PACK_THRESHOLD`] positions or
    /// more).
    pub fn new(layout: &Layout, levels: &[Vec<usize>], pack: bool) -> TableCells {
        let mut slice_place = vec![(0, 0); layout.slice_count()];
        for (level, slices) in levels.iter().enumerate() {
            for (place, &slice) in slices.iter().enumerate() {
                slice_place[slice] = (level as u32, place as u32);
            }
        }
        let slots = Slots::new(layout);
        let level_sizes: Vec<u64> = levels
            .iter()
            .map(|l| l.len() as u64 * slots.per_slice())
            .collect();
        let slice_size = layout.slice_size();
        TableCells {
            slice_shift: (layout.slice_count() > 1).then(|| {
                assert!(
                    slice_size.is_power_of_two(),
                    "pawn slices are powers of two"
                );
                slice_size.trailing_zeros()
            }),
            slots,
            slice_place,
            level_slices: levels.to_vec(),
            level_sizes,
            levels: levels.iter().map(|_| None).collect(),
            pack,
        }
    }

    /// Open `level` for solving, its cells in arrays from `allocate`.
    ///
    /// # Errors
    /// If an array cannot be allocated.
    pub fn open(
        &mut self,
        level: usize,
        allocate: impl Fn(usize) -> io::Result<WorkArray>,
    ) -> io::Result<()> {
        let size = usize::try_from(self.level_size(level)).expect("level fits in memory");
        self.levels[level] = Some(ByColor {
            white: LevelCells::Open(CellArray::new(allocate(size)?)),
            black: LevelCells::Open(CellArray::new(allocate(size)?)),
        });
        Ok(())
    }

    /// Finish `level`: pack it if the table is large.
    ///
    /// # Errors
    /// If compression fails.
    pub fn close(&mut self, level: usize) -> io::Result<()> {
        let cells = self.levels[level].take().expect("level is open");
        let close = |cells: LevelCells| -> io::Result<LevelCells> {
            Ok(match cells {
                LevelCells::Open(open) if self.pack => LevelCells::Packed(PackedCells::pack(open)?),
                LevelCells::Open(open) => {
                    open.publish();
                    LevelCells::Open(open)
                }
                packed => packed,
            })
        };
        let ByColor { white, black } = cells;
        self.levels[level] = Some(ByColor {
            white: close(white)?,
            black: close(black)?,
        });
        Ok(())
    }

    /// Whether finished levels are packed (then a read far from the last
    /// few unpacks a chunk).
    pub fn is_packed(&self) -> bool {
        self.pack
    }

    /// How many levels the table has.
    pub fn level_count(&self) -> usize {
        self.level_sizes.len()
    }

    /// Positions per side in `level`.
    pub fn level_size(&self, level: usize) -> u64 {
        self.level_sizes[level]
    }

    /// Positions (slots) per slice.
    pub fn slice_slots(&self) -> u64 {
        self.slots.per_slice()
    }

    /// Whether the 64 indices that differ in the lowest 6-bit digit alone
    /// lie at 64 consecutive places of their level, from a multiple of 64
    /// ([`Slots::keeps_lowest_digit`]; levels' slices start at one).
    pub fn keeps_lowest_digit(&self) -> bool {
        self.slots.keeps_lowest_digit()
    }

    /// The table's index of the position at `local` within `level` (with
    /// its identical pieces sorted): the inverse of [`TableCells::locate`].
    #[inline]
    pub fn index_in(&self, level: usize, local: u64) -> u64 {
        match self.slice_shift {
            None => self.slots.offset(local),
            Some(shift) => {
                let (place, slot) = self.slots.split(local);
                let slice = self.level_slices[level][place as usize];
                ((slice as u64) << shift) | self.slots.offset(slot)
            }
        }
    }

    /// The position at `index` numbered across the whole table, the same
    /// for every order of its identical pieces: the slices one after
    /// another, each by slot (below [`TableCells::table_slots`]). What a
    /// [`TableBits`] of the table is kept by.
    #[inline]
    pub fn table_slot(&self, index: u64) -> u64 {
        match self.slice_shift {
            None => self.slots.slot(index),
            Some(shift) => self
                .slots
                .join(index >> shift, self.slots.slot(index & ((1 << shift) - 1))),
        }
    }

    /// Positions per side in the whole table: one per slot of every slice.
    pub fn table_slots(&self) -> u64 {
        self.slice_place.len() as u64 * self.slots.per_slice()
    }

    /// The level of `index` and the position's place within the level
    /// (the same for every order of its identical pieces).
    #[inline(always)]
    pub fn locate(&self, index: u64) -> (usize, u64) {
        match self.slice_shift {
            None => (0, self.slots.slot(index)),
            Some(shift) => {
                let (level, place) = self.slice_place[(index >> shift) as usize];
                (
                    level as usize,
                    self.slots.join(
                        u64::from(place),
                        self.slots.slot(index & ((1 << shift) - 1)),
                    ),
                )
            }
        }
    }

    /// The cell at `index` with `turn` to move.
    ///
    /// # Panics
    /// If its level was never opened.
    #[inline]
    pub fn load(&self, turn: Color, index: u64) -> Cell {
        let (level, local) = self.locate(index);
        match self.solved(level, turn) {
            LevelCells::Open(cells) => cells.load(local),
            LevelCells::Packed(cells) => cells.load(local),
        }
    }

    /// Append the cells of the indices in `range` with `turn` to move to
    /// `out`, in order: [`TableCells::load`] of each, but where the slots
    /// keep the lowest digit ([`TableCells::keeps_lowest_digit`]) each
    /// aligned run of 64 indices is located once and read as 64 cells in
    /// a row (a packed level's chunk looked up once).
    ///
    /// # Panics
    /// If a level of `range` was never solved.
    pub fn load_range(&self, turn: Color, range: Range<u64>, out: &mut Vec<Cell>) {
        let runs = self.keeps_lowest_digit();
        let mut index = range.start;
        while index < range.end {
            if runs && index.is_multiple_of(64) && range.end - index >= 64 {
                let (level, local) = self.locate(index);
                match self.solved(level, turn) {
                    LevelCells::Open(cells) => {
                        out.extend((local..local + 64).map(|l| cells.load(l)))
                    }
                    LevelCells::Packed(cells) => cells.load_run(local, 64, out),
                }
                index += 64;
            } else {
                out.push(self.load(turn, index));
                index += 1;
            }
        }
    }

    /// The cells of `level` with `turn` to move.
    ///
    /// # Panics
    /// If the level was never opened.
    #[inline]
    fn solved(&self, level: usize, turn: Color) -> &LevelCells {
        self.levels[level]
            .as_ref()
            .expect("level was solved")
            .get(turn)
    }

    /// Every cell some position of `turn` holds ([`CellArray::distinct`]),
    /// if every level was solved; `None` if one was not.
    pub fn distinct(&self, turn: Color) -> Option<Vec<Cell>> {
        let mut cells = Vec::new();
        for level in &self.levels {
            match level.as_ref()?.get(turn) {
                LevelCells::Open(open) => cells.extend(open.distinct()),
                LevelCells::Packed(packed) => cells.extend(packed.distinct()),
            }
        }
        cells.sort_unstable_by_key(|cell| cell.0);
        cells.dedup();
        Some(cells)
    }

    /// Start loading the cell at `index` with `turn` to move into the
    /// cache, if its level is open (a packed level reads in order).
    #[inline]
    pub fn prefetch(&self, turn: Color, index: u64) {
        let (level, local) = self.locate(index);
        if let Some(LevelCells::Open(cells)) = self.levels[level].as_ref().map(|l| l.get(turn)) {
            cells.prefetch(local);
        }
    }

    /// The open array holding `index` with `turn` to move, and the index
    /// within it.
    ///
    /// # Panics
    /// If the level is not open.
    #[cfg(test)]
    pub(crate) fn open_array(&self, turn: Color, index: u64) -> (&CellArray, u64) {
        let (level, local) = self.locate(index);
        match self.levels[level]
            .as_ref()
            .expect("level is open")
            .get(turn)
        {
            LevelCells::Open(cells) => (cells, local),
            LevelCells::Packed(_) => panic!("level {level} is finished"),
        }
    }

    /// The arrays of an open `level`.
    ///
    /// # Panics
    /// If the level is not open.
    pub fn level_arrays(&self, level: usize) -> ByColor<&CellArray> {
        let cells = self.levels[level].as_ref().expect("level is open");
        ByColor::new_with(|turn| match cells.get(turn) {
            LevelCells::Open(open) => open,
            LevelCells::Packed(_) => panic!("level {level} is finished"),
        })
    }

    /// Write every level's cells to a checkpoint: not yet solved, open, or
    /// packed, each with its long values (nothing may write meanwhile).
    pub(crate) fn save<W: Write>(&self, out: &mut RecordWriter<W>) -> io::Result<()> {
        self.publish();
        for level in &self.levels {
            match level {
                None => out.u64(LEVEL_ABSENT)?,
                Some(sides) => {
                    out.u64(LEVEL_PRESENT)?;
                    sides.white.save(out)?;
                    sides.black.save(out)?;
                }
            }
        }
        Ok(())
    }

    /// Read the levels [`TableCells::save`] wrote for this table, open ones
    /// into arrays from `allocate`.
    ///
    /// # Errors
    /// I/O errors, and `InvalidData` where the record does not fit the
    /// table.
    pub(crate) fn restore<R: Read>(
        &mut self,
        input: &mut RecordReader<R>,
        allocate: impl Fn(usize) -> io::Result<WorkArray>,
    ) -> io::Result<()> {
        for level in 0..self.levels.len() {
            let size = usize::try_from(self.level_size(level)).expect("level fits in memory");
            self.levels[level] = match input.u64()? {
                LEVEL_ABSENT => None,
                LEVEL_PRESENT => Some(ByColor {
                    white: LevelCells::restore(input, size, &allocate)?,
                    black: LevelCells::restore(input, size, &allocate)?,
                }),
                tag => return Err(invalid(format!("level tag {tag}"))),
            };
        }
        Ok(())
    }

    /// Publish pending overflow values of every open level.
    pub fn publish(&self) {
        for cells in self.levels.iter().flatten() {
            for side in cells.iter() {
                if let LevelCells::Open(open) = side {
                    open.publish();
                }
            }
        }
    }
}

/// The byte of a cell, or `None` if its value needs the overflow map.
#[inline]
fn encode_exact(cell: Cell) -> Option<u8> {
    Some(match cell {
        Cell::ILLEGAL => ILLEGAL,
        Cell::MATED => MATED,
        Cell(0) => DRAW,
        c if c.is_unknown() => {
            UNKNOWN_FIRST
                + UNKNOWNS
                    .iter()
                    .position(|&u| u == c)
                    .expect("an unknown code") as u8
        }
        Cell(d) if (1..=EXACT).contains(&d) => WIN_BASE + d as u8,
        Cell(d) if (-EXACT..=-1).contains(&d) => LOSS_BASE + (-d) as u8,
        _ => return None,
    })
}

/// The code of a value kept in the overflow map.
fn overflow_code(cell: Cell) -> u8 {
    if cell.0 > 0 {
        OVERFLOW_WIN
    } else {
        OVERFLOW_LOSS
    }
}

/// The cell of a byte, or `None` for the overflow codes.
#[inline]
fn decode(code: u8) -> Option<Cell> {
    DECODED[code as usize]
}

/// The codes seen in either of two parts of a scan.
fn either_seen(mut a: [bool; 256], b: [bool; 256]) -> [bool; 256] {
    a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
    a
}

/// The cells of the codes `seen` and of the long values in `overflow`,
/// each once, ascending.
fn cells_seen(seen: &[bool; 256], overflow: &Overflow) -> Vec<Cell> {
    let mut cells: Vec<Cell> = (0..=u8::MAX)
        .filter(|&code| seen[usize::from(code)])
        .filter_map(decode)
        .chain(overflow.iter().map(|(_, value)| Cell(value)))
        .collect();
    cells.sort_unstable_by_key(|cell| cell.0);
    cells.dedup();
    cells
}

/// [`decode`] for every byte, computed once at compile time.
static DECODED: [Option<Cell>; 256] = {
    let mut table = [None; 256];
    let mut code = 0;
    while code < 256 {
        table[code] = decode_code(code as u8);
        code += 1;
    }
    table
};

const fn decode_code(code: u8) -> Option<Cell> {
    Some(match code {
        ILLEGAL => Cell::ILLEGAL,
        MATED => Cell::MATED,
        DRAW => Cell(0),
        OVERFLOW_WIN | OVERFLOW_LOSS => return None,
        c if c < OVERFLOW_WIN => UNKNOWNS[(c - UNKNOWN_FIRST) as usize],
        c if c <= LOSS_BASE => Cell((c - WIN_BASE) as i16),
        c => Cell(-((c - LOSS_BASE) as i16)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for code in 0..=255u8 {
            if let Some(cell) = decode(code) {
                assert_eq!(encode_exact(cell), Some(code), "{cell:?}");
            }
        }
    }

    #[test]
    fn code_tests_agree_with_decoded_cells() {
        let cells = CellArray::new(WorkArray::anonymous(256).expect("map"));
        let mut stored = Vec::new();
        for (index, code) in (0..=255u8).enumerate() {
            // Every code, the overflow ones with a value in the map.
            let cell = decode(code).unwrap_or(if code == OVERFLOW_WIN {
                Cell(EXACT + 5)
            } else {
                Cell(-EXACT - 5)
            });
            cells.store(index as u64, cell);
            stored.push(cell);
        }
        cells.publish();
        // An unpublished long win is not looked up when a long loss is
        // wanted.
        cells.store(0, Cell(EXACT + 9));
        assert!(!cells.holds(0, Cell(-EXACT - 5)));
        cells.publish();
        stored[0] = Cell(EXACT + 9);
        let found = |test| {
            let mut found = Vec::new();
            cells.find(0..256, test, |index| found.push(index));
            found
        };
        let where_true = |f: &dyn Fn(Cell) -> bool| -> Vec<u64> {
            (0..256).filter(|&i| f(stored[i as usize])).collect()
        };
        assert_eq!(found(CellTest::Undecided), where_true(&|c| c.is_unknown()));
        assert_eq!(found(CellTest::Undecided).len(), 5);
        for (index, &cell) in stored.iter().enumerate() {
            assert_eq!(
                found(CellTest::Is(cell)),
                where_true(&|c| c == cell),
                "{cell:?}"
            );
            for &other in &stored {
                let holds = cells.holds(index as u64, other);
                assert_eq!(holds, cell == other, "{cell:?} {other:?}");
            }
        }
    }

    /// Open `level` of `cells` and store `value` of each of its positions
    /// with Black to move.
    fn open_black(
        cells: &mut TableCells,
        layout: &Layout,
        level: usize,
        value: impl Fn(u64) -> Cell,
    ) {
        cells
            .open(level, WorkArray::anonymous)
            .expect("anonymous map");
        for index in 0..layout.size() {
            if cells.locate(index).0 == level {
                let (array, local) = cells.open_array(Color::Black, index);
                array.store(local, value(index));
            }
        }
    }

    /// A side's distinct cells, long values included, are those its
    /// positions hold, packed or not; a table with a level not yet solved
    /// has no such list.
    #[test]
    fn distinct_cells_are_the_cells_positions_hold() {
        let layout = Layout::new("KPvK".parse().expect("material"));
        let slices: Vec<usize> = (0..layout.slice_count()).collect();
        let (first, second) = slices.split_at(10);
        let levels = [first.to_vec(), second.to_vec()];
        let value = |index: u64| match index % 11 {
            0 => Cell::ILLEGAL,
            1 => Cell(-((index % 300) as i16) - 1),
            2 => Cell::UNKNOWN_DRAW,
            _ => Cell((index % 250) as i16),
        };
        for pack in [false, true] {
            let mut cells = TableCells::new(&layout, &levels, pack);
            for level in 0..2 {
                assert_eq!(cells.distinct(Color::Black), None, "level {level} unsolved");
                open_black(&mut cells, &layout, level, value);
                cells.publish();
                if level == 0 {
                    cells.close(level).expect("packs");
                }
            }
            let mut held: Vec<Cell> = (0..layout.size())
                .map(|index| cells.load(Color::Black, index))
                .collect();
            held.sort_unstable_by_key(|cell| cell.0);
            held.dedup();
            assert!(
                held.len() > 300,
                "{} cells, long ones among them",
                held.len()
            );
            assert_eq!(cells.distinct(Color::Black), Some(held), "packed: {pack}");
            assert_eq!(cells.distinct(Color::White), Some(vec![Cell::ILLEGAL]));
        }
    }

    /// A range's cells read together are those read one by one: in runs
    /// of 64 where the slots keep the lowest digit, from open and packed
    /// levels, long values included, and one by one at the range's ends
    /// and where a pair of identical pieces is the lowest digit.
    #[test]
    fn a_range_reads_the_cells_of_its_indices() {
        for name in ["KPvK", "KQvKR", "KRRvK"] {
            let layout = Layout::new(name.parse().expect("material"));
            let slices: Vec<usize> = (0..layout.slice_count()).collect();
            let levels = if slices.len() > 1 {
                let (first, second) = slices.split_at(slices.len() / 2);
                vec![first.to_vec(), second.to_vec()]
            } else {
                vec![slices]
            };
            let value = |index: u64| match index % 13 {
                0 => Cell::ILLEGAL,
                1 => Cell(-((index % 300) as i16) - 1),
                _ => Cell((index % 250) as i16),
            };
            for pack in [false, true] {
                let mut cells = TableCells::new(&layout, &levels, pack);
                for level in 0..levels.len() {
                    open_black(&mut cells, &layout, level, value);
                    cells.publish();
                    cells.close(level).expect("packs");
                }
                let n = layout.size();
                for range in [0..n, 3..n - 5, 64..128, 100..101] {
                    let mut read = Vec::new();
                    cells.load_range(Color::Black, range.clone(), &mut read);
                    let one_by_one: Vec<Cell> =
                        range.map(|index| cells.load(Color::Black, index)).collect();
                    assert_eq!(read, one_by_one, "{name}, packed: {pack}");
                }
            }
        }
        let keeps = |name: &str| {
            let layout = Layout::new(name.parse().expect("material"));
            let levels = [(0..layout.slice_count()).collect::<Vec<_>>()];
            TableCells::new(&layout, &levels, false).keeps_lowest_digit()
        };
        assert!(keeps("KPvK") && keeps("KQvKR") && !keeps("KRRvK"));
    }

    #[test]
    fn packed_levels_read_back_what_was_stored() {
        let layout = Layout::new("KPvK".parse().expect("material"));
        let slices: Vec<usize> = (0..layout.slice_count()).collect();
        let (first, second) = slices.split_at(10);
        let mut cells = TableCells::new(&layout, &[first.to_vec(), second.to_vec()], true);
        let value = |index: u64| match index % 7 {
            0 => Cell::ILLEGAL,
            1 => Cell(-((index % 300) as i16) - 1),
            _ => Cell((index % 200) as i16),
        };
        for level in 0..2 {
            open_black(&mut cells, &layout, level, value);
            cells.close(level).expect("packs");
        }
        for index in (0..layout.size()).rev() {
            assert_eq!(cells.load(Color::Black, index), value(index), "{index}");
            assert_eq!(cells.load(Color::White, index), Cell::ILLEGAL);
        }
        assert!(UNPACKED.with_borrow(Option::is_some));
        drop(cells);
        assert!(
            UNPACKED.with_borrow(Option::is_none),
            "the cache goes with the table"
        );
    }

    /// More chunks than a thread keeps unpacked, read in an order that
    /// brings each back after others took its slot, and a second pack
    /// read in turn with the first: every read gives what was stored.
    #[test]
    fn packed_cells_read_back_through_a_full_cache() {
        let chunks = CACHED_CHUNKS + 3;
        let value = |pack: u64, index: u64| match (index + pack) % 5 {
            0 => Cell::ILLEGAL,
            1 => Cell(-((index % 97) as i16) - 1),
            _ => Cell(((index / 3 + pack) % 120) as i16),
        };
        let packs: Vec<PackedCells> = (0..2)
            .map(|pack| {
                let len = chunks * PACK_CHUNK;
                let cells = CellArray::new(WorkArray::anonymous(len).expect("memory"));
                for index in 0..len as u64 {
                    cells.store(index, value(pack, index));
                }
                PackedCells::pack(cells).expect("packs")
            })
            .collect();
        for round in 0..2 {
            for step in 0..PACK_CHUNK as u64 / 4_096 {
                for chunk in (0..chunks as u64).rev() {
                    let index = chunk * PACK_CHUNK as u64 + step * 4_096 + round;
                    for (pack, cells) in packs.iter().enumerate() {
                        assert_eq!(cells.load(index), value(pack as u64, index), "{index}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_checkpoint_restores_packed_open_and_unsolved_levels() {
        let layout = Layout::new("KPvK".parse().expect("material"));
        let slices: Vec<usize> = (0..layout.slice_count()).collect();
        let levels = [
            slices[..10].to_vec(),
            slices[10..20].to_vec(),
            slices[20..].to_vec(),
        ];
        let mut cells = TableCells::new(&layout, &levels, true);
        // Long values (past EXACT) in both the packed and the open level.
        let value = |turn: Color, index: u64| match (index + turn as u64) % 7 {
            0 => Cell::ILLEGAL,
            1 => Cell(-((index % 300) as i16) - 1),
            2 => Cell::UNKNOWN_DRAW,
            _ => Cell((index % 200) as i16),
        };
        for level in 0..2 {
            cells
                .open(level, WorkArray::anonymous)
                .expect("anonymous map");
            for index in (0..layout.size()).filter(|&i| cells.locate(i).0 == level) {
                for turn in Color::ALL {
                    let (array, local) = cells.open_array(turn, index);
                    array.store(local, value(turn, index));
                }
            }
            if level == 0 {
                cells.close(level).expect("packs");
            }
        }
        let mut out = RecordWriter::new(Vec::new());
        cells.save(&mut out).expect("saves");
        let bytes = out.finish().expect("saves");
        let mut restored = TableCells::new(&layout, &levels, true);
        let mut input = RecordReader::new(bytes.as_slice());
        restored
            .restore(&mut input, WorkArray::anonymous)
            .expect("restores");
        input.finish().expect("whole record");
        for index in 0..layout.size() {
            for turn in Color::ALL {
                if restored.locate(index).0 < 2 {
                    assert_eq!(restored.load(turn, index), value(turn, index), "{index}");
                }
            }
        }
        assert!(matches!(
            restored.levels[0].as_ref().map(|l| &l.white),
            Some(LevelCells::Packed(_))
        ));
        assert!(matches!(
            restored.levels[1].as_ref().map(|l| &l.black),
            Some(LevelCells::Open(_))
        ));
        assert!(restored.levels[2].is_none());
        // The open level goes on taking values, long ones too.
        let unknown = (0..layout.size())
            .find(|&i| restored.locate(i).0 == 1 && value(Color::White, i) == Cell::UNKNOWN_DRAW)
            .expect("an unknown cell in the open level");
        let (array, local) = restored.open_array(Color::White, unknown);
        assert_eq!(array.claim(local, Cell(400)), Some(Cell::UNKNOWN_DRAW));
        restored.publish();
        assert_eq!(restored.load(Color::White, unknown), Cell(400));
    }

    #[test]
    fn long_values_go_through_the_overflow_map() {
        let cells = CellArray::new(WorkArray::anonymous(10).expect("map"));
        cells.store(1, Cell(EXACT));
        cells.store(2, Cell(-EXACT - 1));
        cells.store(3, Cell::UNKNOWN_CURSED_WIN);
        assert_eq!(cells.claim(3, Cell(900)), Some(Cell::UNKNOWN_CURSED_WIN));
        assert_eq!(cells.claim(3, Cell(901)), None);
        // Until published, a long value is not there to load.
        assert_eq!(cells.load_published(2), None);
        assert_eq!(cells.load_published(1), Some(Cell(EXACT)));
        cells.publish();
        assert_eq!(cells.load_published(2), Some(Cell(-EXACT - 1)));
        assert_eq!(cells.load(1), Cell(EXACT));
        assert_eq!(cells.load(2), Cell(-EXACT - 1));
        assert_eq!(cells.load(3), Cell(900));
        assert_eq!(cells.load(0), Cell::ILLEGAL);
        assert_eq!(cells.overflow_len(), 2);
    }

    /// Indices past 2^32 keep their own values (a map per 2^32 indices).
    #[test]
    fn long_values_past_four_billion_stay_apart() {
        let high = (3 << 32) | 7;
        let map: Overflow = [(7, 300), (high, -400), ((1 << 32) | 7, 500)]
            .into_iter()
            .collect();
        assert_eq!(map.get(7), Some(300));
        assert_eq!(map.get(high), Some(-400));
        assert_eq!(map.get(1 << 32 | 7), Some(500));
        assert_eq!(map.get(2 << 32 | 7), None);
        assert_eq!(map.get(4 << 32), None);
        assert_eq!(map.len(), 3);
        let mut all: Vec<_> = map.iter().collect();
        all.sort_unstable();
        assert_eq!(all, [(7, 300), (1 << 32 | 7, 500), (high, -400)]);
    }
}
