//! The table file format (`.dtz50`), byte by byte.
//!
//! One file per table, named after its material (`KRPvKR.dtz50`), holding
//! WDL and DTZ in two independent sections so that a WDL probe never
//! touches DTZ bytes. All integers are little-endian. Positions are
//! numbered per side to move by [`crate::index`]; a section lists White to
//! move (`N` values) then Black to move (`N` values) and cuts this list into
//! blocks of [`BLOCK_POSITIONS`] values, each a separate zstd frame.
//!
//! ```text
//! offset  size  field
//! ------  ----  -----------------------------------------------------------
//! header (HEADER_LEN = 160 bytes)
//!      0     8  MAGIC  "DTZ50TB\x1a"
//!      8     2  VERSION (u16)
//!     10     1  rule: 50, 75 or 0 (none)
//!     11     1  index scheme: INDEX_SCHEME (1 = crate::index as of VERSION 1)
//!     12     4  positions per block (u32): BLOCK_POSITIONS = 2^21
//!     16    16  material, ASCII ("KRPvKR"), NUL-padded
//!     32     8  N, positions per side to move (u64)
//!     40    56  statistics, White to move:
//!                 5 × u64 counts (loss, blessed loss, draw, cursed win, win),
//!                 4 × u16 longest (win, cursed win, loss, blessed loss),
//!                 u64 index reaching the longest (u64::MAX: none)
//!     96    56  statistics, Black to move (same layout)
//!    152     8  reserved, zero
//! WDL section (at HEADER_LEN)
//!              zstd frames, one per block; raw block: a packed block (below)
//!              of WDL codes, WDL + 2 (0 = loss .. 4 = win)
//!              block offsets: (blocks + 1) × u64, absolute file offsets of
//!              each frame and of the end of the last one
//! DTZ section (right after the WDL section)
//!              zstd frames; raw block: a packed block of DTZ codes: |DTZ|
//!              of a win or loss, |DTZ| - L of a cursed win or blessed loss
//!              (L = 100 for rule 50, 150 for rule 75); the sign, the offset
//!              and the zero of draws come from the WDL section; at most
//!              30,000
//!              block offsets, as above
//! trailer (TRAILER_LEN = 136 bytes, at file length - 136)
//!      0    48  WDL section: offset of its block-offset table (u64),
//!               blocks (u32), reserved (u32), SHA-256 of the section (32)
//!     48    48  DTZ section: the same
//!     96     8  file length (u64)
//!    104    32  SHA-256 of every byte before it
//!
//! packed block of n codes (n = BLOCK_POSITIONS, fewer in the last block)
//!      0     1  b, bits per position: 0, 1, 2, 4, 8 or 16, the fewest with
//!               2^b >= k
//!      1     2  k - 1, where k is the number of distinct codes (u16)
//!      3    2k  the distinct codes, strictly ascending (u16 each)
//!   3+2k     *  each position's rank in that list, in position order:
//!               b < 8: 8/b ranks per byte, the first in the lowest bits,
//!               ceil(n·b/8) bytes; b = 16: one u16 per position
//! ```
//!
//! "Don't care" values keep runs long for zstd: illegal positions repeat
//! the previous value of their block in both sections, and so do draws in
//! the DTZ section (a block starts from draw, resp. 0). A DTZ probe
//! therefore reads the WDL section too (draw → 0, sign, cursed offset).
//!
//! Packing shrinks the data zstd has to search (a WDL block rarely has more
//! than 4 distinct codes: 2 bits per position) and lets a one-byte code
//! hold any DTZ up to 255 plies past the rule's limit; a reader unpacks a
//! block once, on first use, into one code per position, so a hot probe is
//! an array read. The writer streams: it compresses a bounded batch of
//! blocks at a time (in parallel) and writes them in order, so the bytes do
//! not depend on the thread count.
//!
//! [`TableFile`] reads any `D: AsRef<[u8]>` (a `Vec` in tests, a memory
//! map in production). [`TableFile::new`] checks size, magic, version,
//! length, header fields and the block-offset tables (cheap); every block is
//! checked for bounds, exact decompressed size and valid codes when first
//! used, and [`TableFile::verify`] checks both section checksums, the file
//! checksum and every block. The zstd settings (see `Effort`) are not
//! recorded: frames describe themselves, so readers need not know them.

use std::{
    io::{self, Write},
    sync::OnceLock,
};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use shakmaty::{ByColor, Color};
use thiserror::Error;

use crate::{
    index::{Layout, TableIndex},
    material::Material,
    solve::SideStats,
    table::Table,
    value::{Cell, Dtz, Rule, Wdl},
};

/// First bytes of every table file.
pub const MAGIC: [u8; 8] = *b"DTZ50TB\x1a";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 2;
/// The index scheme this crate writes and reads.
pub const INDEX_SCHEME: u8 = 1;
/// Positions per compressed block.
pub const BLOCK_POSITIONS: u32 = 1 << 21;
/// File name extension of table files.
pub const EXTENSION: &str = "dtz50";
/// Header length in bytes.
pub const HEADER_LEN: usize = 160;
/// Trailer length in bytes.
pub const TRAILER_LEN: usize = 136;

/// The largest DTZ code a reader accepts (cells hold |DTZ| < 30,000).
const MAX_DTZ_CODE: u16 = 30_000;
const BATCH_BLOCKS: usize = 32;
const STATS_LEN: usize = 56;

/// The two sections of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// The header and trailer fields.
    Header,
    /// WDL values.
    Wdl,
    /// DTZ values.
    Dtz,
}

impl Section {
    /// Lower-case name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Section::Header => "header",
            Section::Wdl => "wdl",
            Section::Dtz => "dtz",
        }
    }
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with a table file.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum FormatError {
    /// Shorter than a header and trailer.
    #[error("truncated: {len} bytes, a table file has at least {min}")]
    TooShort {
        /// Actual length.
        len: u64,
        /// Minimum length.
        min: u64,
    },
    /// Not a dtz50 table.
    #[error("not a dtz50 table (bad magic)")]
    BadMagic,
    /// Written by another format version.
    #[error("format version {got}, this dtz50 reads version {expected}")]
    Version {
        /// What we read.
        expected: u16,
        /// What the file says.
        got: u16,
    },
    /// The file length differs from the one recorded in it.
    #[error("truncated or extended: {got} bytes, the file records {expected}")]
    Length {
        /// Recorded length.
        expected: u64,
        /// Actual length.
        got: u64,
    },
    /// A header field makes no sense.
    #[error("bad header: {0}")]
    Header(String),
    /// A section's layout is out of bounds.
    #[error("bad {section} section: {reason}")]
    Layout {
        /// The section.
        section: Section,
        /// What is out of bounds.
        reason: String,
    },
    /// A checksum does not match.
    #[error("{section} checksum mismatch: expected {expected}, got {got}")]
    Checksum {
        /// The section (`Header`: the whole-file checksum).
        section: Section,
        /// Recorded checksum (hex).
        expected: String,
        /// Computed checksum (hex).
        got: String,
    },
    /// A block does not decompress to its size.
    #[error("{section} block {block} is corrupt")]
    Block {
        /// The section.
        section: Section,
        /// The block number.
        block: usize,
    },
}

/// The header facts of a table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The material.
    pub material: Material,
    /// The rule the table was built for.
    pub rule: Rule,
    /// Positions per side to move.
    pub positions: u64,
    /// Statistics per side to move.
    pub stats: ByColor<SideStats>,
}

/// Write `table` (with its `stats`) to `out` in the format above.
///
/// # Errors
/// Whatever `out` reports.
pub fn write_table<W: Write>(table: &Table, stats: &ByColor<SideStats>, out: W) -> io::Result<W> {
    let layout = table.layout();
    let n = layout.size();
    let mut out = HashingWriter::new(out);
    out.write_all(&header_bytes(layout.material(), table.rule(), n, stats))?;
    let mut sections = Vec::new();
    for section in [Section::Wdl, Section::Dtz] {
        sections.push(write_section(table, section, &mut out)?);
    }
    let mut trailer = Vec::with_capacity(TRAILER_LEN);
    for (index_offset, blocks, digest) in &sections {
        trailer.extend_from_slice(&index_offset.to_le_bytes());
        trailer.extend_from_slice(&(*blocks as u32).to_le_bytes());
        trailer.extend_from_slice(&0u32.to_le_bytes());
        trailer.extend_from_slice(digest);
    }
    let length = out.written + trailer.len() as u64 + 8 + 32;
    trailer.extend_from_slice(&length.to_le_bytes());
    out.write_all(&trailer)?;
    let digest = out.hasher.clone().finalize();
    out.write_all(&digest)?;
    out.inner.flush()?;
    Ok(out.inner)
}

fn header_bytes(material: Material, rule: Rule, n: u64, stats: &ByColor<SideStats>) -> Vec<u8> {
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.push(rule.code());
    h.push(INDEX_SCHEME);
    h.extend_from_slice(&BLOCK_POSITIONS.to_le_bytes());
    let mut name = [0u8; 16];
    let text = material.to_string();
    name[..text.len()].copy_from_slice(text.as_bytes());
    h.extend_from_slice(&name);
    h.extend_from_slice(&n.to_le_bytes());
    for turn in Color::ALL {
        let s = stats.get(turn);
        for c in s.counts {
            h.extend_from_slice(&c.to_le_bytes());
        }
        for l in [
            s.longest_win,
            s.longest_cursed_win,
            s.longest_loss,
            s.longest_blessed_loss,
        ] {
            h.extend_from_slice(&l.to_le_bytes());
        }
        h.extend_from_slice(&s.longest_at.map_or(u64::MAX, |i| i.0).to_le_bytes());
    }
    h.resize(HEADER_LEN, 0);
    h
}

/// Stream one section; returns (offset of its block-offset table, blocks, SHA-256).
fn write_section<W: Write>(
    table: &Table,
    section: Section,
    out: &mut HashingWriter<W>,
) -> io::Result<(u64, usize, [u8; 32])> {
    let total = 2 * table.layout().size();
    let blocks = total.div_ceil(u64::from(BLOCK_POSITIONS)) as usize;
    let effort = Effort::for_positions(table.layout().size());
    let mut offsets = Vec::with_capacity(blocks + 1);
    let mut hasher = Sha256::new();
    for batch_start in (0..blocks).step_by(BATCH_BLOCKS) {
        let batch_end = (batch_start + BATCH_BLOCKS).min(blocks);
        let frames: Vec<io::Result<Vec<u8>>> = (batch_start..batch_end)
            .into_par_iter()
            .map_init(
                || effort.compressor(),
                |compressor, block| match compressor {
                    Ok(c) => c.compress(&pack(&block_values(table, section, block))),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                },
            )
            .collect();
        for frame in frames {
            let frame = frame?;
            offsets.push(out.written);
            hasher.update(&frame);
            out.write_all(&frame)?;
        }
    }
    offsets.push(out.written);
    let index_offset = out.written;
    let mut index = Vec::with_capacity(offsets.len() * 8);
    for o in offsets {
        index.extend_from_slice(&o.to_le_bytes());
    }
    hasher.update(&index);
    out.write_all(&index)?;
    Ok((index_offset, blocks, hasher.finalize().into()))
}

/// How hard zstd works. Tables of up to [`STRONG_LIMIT`] positions per side
/// (every 3-4 piece table) get zstd's optimal parser with 3-byte matches
/// and long targets, which finds the short repeats of tablebase data: on
/// 3-4 piece tables about a sixth smaller than a lazy matcher in the DTZ
/// section and a third smaller in the WDL section, at about ten times the
/// CPU time. Larger tables get the lazy matcher, so that writing a 5-piece
/// table takes seconds, not minutes.
#[derive(Debug, Clone, Copy)]
enum Effort {
    Strong,
    Fast,
}

/// Positions per side up to which [`Effort::Strong`] is used.
const STRONG_LIMIT: u64 = 1 << 24;

impl Effort {
    fn for_positions(positions: u64) -> Effort {
        if positions <= STRONG_LIMIT {
            Effort::Strong
        } else {
            Effort::Fast
        }
    }

    /// A compressor with this effort's parameters (one per thread: its
    /// tables are large, and reusing them does not change the output).
    fn compressor(self) -> io::Result<zstd::bulk::Compressor<'static>> {
        use zstd::zstd_safe::{CParameter, Strategy};
        let mut c = zstd::bulk::Compressor::new(0)?;
        let params = match self {
            // (strategy, min match, search log, target length)
            Effort::Strong => (Strategy::ZSTD_btopt, 3, 6, 256),
            Effort::Fast => (Strategy::ZSTD_lazy2, 3, 5, 8),
        };
        c.set_parameter(CParameter::Strategy(params.0))?;
        c.set_parameter(CParameter::MinMatch(params.1))?;
        c.set_parameter(CParameter::SearchLog(params.2))?;
        c.set_parameter(CParameter::TargetLength(params.3))?;
        c.set_parameter(CParameter::WindowLog(WINDOW_LOG))?;
        c.set_parameter(CParameter::ChainLog(WINDOW_LOG + 1))?;
        c.set_parameter(CParameter::HashLog(WINDOW_LOG))?;
        Ok(c)
    }
}

/// WDL codes (0..=4) two to a byte, the first in the low nibble: a table
/// read through in full (the solver's promotions into a 5-piece table) then
/// keeps half a byte per position in memory.
fn pack_nibbles(codes: Vec<u8>) -> Vec<u8> {
    codes
        .chunks(2)
        .map(|pair| pair[0] | pair.get(1).map_or(0, |high| high << 4))
        .collect()
}

/// The WDL at `offset` of a block kept two codes per byte (low nibble first).
pub fn nibble_wdl(pairs: &[u8], offset: usize) -> Wdl {
    Wdl::ALL[usize::from((pairs[offset / 2] >> (4 * (offset % 2))) & 0xf)]
}

/// zstd window: a whole packed block of one-byte codes.
const WINDOW_LOG: u32 = 21;

/// The stored values of one block, with "don't care" positions repeating
/// the previous value (see the module doc).
fn block_values(table: &Table, section: Section, block: usize) -> Vec<u16> {
    let n = table.layout().size();
    let rule = table.rule();
    let start = block as u64 * u64::from(BLOCK_POSITIONS);
    let end = (start + u64::from(BLOCK_POSITIONS)).min(2 * n);
    let cells = if start < n {
        let black = table.cells_from(Color::Black, 0);
        let white = table.cells_from(Color::White, start as usize);
        Box::new(white.chain(black)) as Box<dyn Iterator<Item = Cell>>
    } else {
        Box::new(table.cells_from(Color::Black, (start - n) as usize))
    };
    let mut values = Vec::with_capacity((end - start) as usize);
    let mut previous = match section {
        Section::Wdl => wdl_code(Wdl::Draw),
        _ => 0,
    };
    for cell in cells.take((end - start) as usize) {
        match (section, cell.value()) {
            (Section::Wdl, Some(dtz)) => previous = wdl_code(Wdl::from_dtz(dtz, rule)),
            (_, Some(dtz)) if dtz.0 != 0 => previous = dtz_code(dtz, rule),
            _ => {}
        }
        values.push(previous);
    }
    values
}

/// A WDL as stored: 0 (loss) ..= 4 (win).
fn wdl_code(wdl: Wdl) -> u16 {
    (wdl.to_i8() + 2) as u16
}

/// A non-zero DTZ as stored: its plies, less the rule's limit when the
/// value is cursed or blessed (the WDL section says which).
fn dtz_code(dtz: Dtz, rule: Rule) -> u16 {
    match Wdl::from_dtz(dtz, rule) {
        Wdl::CursedWin | Wdl::BlessedLoss => {
            dtz.plies() - rule.limit().map_or(0, i16::unsigned_abs)
        }
        _ => dtz.plies(),
    }
}

/// Code widths a packed block may use, narrowest first.
const CODE_BITS: [u32; 6] = [0, 1, 2, 4, 8, 16];

/// Pack a block's values: the distinct values, ascending, then each
/// position's rank among them in the narrowest width of [`CODE_BITS`].
fn pack(values: &[u16]) -> Vec<u8> {
    let max = values.iter().copied().max().unwrap_or(0);
    let mut rank = vec![0u16; usize::from(max) + 1];
    for &v in values {
        rank[usize::from(v)] = 1;
    }
    let mut distinct = Vec::new();
    for (v, r) in rank.iter_mut().enumerate() {
        if *r != 0 {
            *r = distinct.len() as u16;
            distinct.push(v as u16);
        }
    }
    let bits = code_bits(distinct.len());
    let mut out = Vec::with_capacity(packed_len(values.len(), distinct.len(), bits));
    out.push(bits as u8);
    out.extend_from_slice(&((distinct.len() - 1) as u16).to_le_bytes());
    for v in &distinct {
        out.extend_from_slice(&v.to_le_bytes());
    }
    match bits {
        0 => {}
        16 => {
            for v in values {
                out.extend_from_slice(&rank[usize::from(*v)].to_le_bytes());
            }
        }
        _ => {
            let per = (8 / bits) as usize;
            for chunk in values.chunks(per) {
                let mut byte = 0u8;
                for (k, v) in chunk.iter().enumerate() {
                    byte |= (rank[usize::from(*v)] as u8) << (k as u32 * bits);
                }
                out.push(byte);
            }
        }
    }
    out
}

/// The narrowest code width for `distinct` values.
fn code_bits(distinct: usize) -> u32 {
    CODE_BITS
        .into_iter()
        .find(|&b| distinct <= 1 << b)
        .expect("at most 2^16 distinct u16 values")
}

/// Bytes of a packed block of `values` positions.
fn packed_len(values: usize, distinct: usize, bits: u32) -> usize {
    3 + 2 * distinct + (values * bits as usize).div_ceil(8)
}

/// Inverse of [`pack`], each code passed through `narrow`; `None` if the
/// bytes are not a packed block of `values` positions with every value at
/// most `max`.
fn unpack<T: Copy + Default>(
    raw: &[u8],
    values: usize,
    max: u16,
    narrow: fn(u16) -> T,
) -> Option<Vec<T>> {
    let bits = u32::from(*raw.first()?);
    let distinct = usize::from(u16_at(raw.get(..3)?, 1)) + 1;
    if !CODE_BITS.contains(&bits)
        || code_bits(distinct) != bits
        || raw.len() != packed_len(values, distinct, bits)
    {
        return None;
    }
    let list: Vec<u16> = (0..distinct).map(|i| u16_at(raw, 3 + 2 * i)).collect();
    if list.windows(2).any(|w| w[0] >= w[1]) || list[distinct - 1] > max {
        return None;
    }
    // Every rank a code of `bits` bits can hold; ranks past the list are
    // corrupt and found below.
    let mut table = vec![T::default(); 1 << bits];
    for (slot, &v) in table.iter_mut().zip(&list) {
        *slot = narrow(v);
    }
    let codes = &raw[3 + 2 * distinct..];
    let mut out = Vec::with_capacity(values);
    let mut highest = 0usize;
    match bits {
        0 => out.resize(values, table[0]),
        16 => {
            for c in codes.chunks_exact(2) {
                let rank = usize::from(u16::from_le_bytes([c[0], c[1]]));
                highest = highest.max(rank);
                out.push(table[rank]);
            }
        }
        _ => {
            let per = (8 / bits) as usize;
            let mask = (1usize << bits) - 1;
            for &byte in codes {
                let byte = usize::from(byte);
                for k in 0..per {
                    let rank = (byte >> (k as u32 * bits)) & mask;
                    highest = highest.max(rank);
                    out.push(table[rank]);
                }
            }
            // The last byte's unused high bits are padding.
            out.truncate(values);
        }
    }
    (highest < distinct).then_some(out)
}

struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> HashingWriter<W> {
    fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            written: 0,
        }
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Where one section's blocks are.
#[derive(Debug)]
struct SectionMap<T> {
    index_offset: usize,
    blocks: usize,
    digest: [u8; 32],
    /// Unpacked blocks, filled on first use.
    cache: Vec<OnceLock<Box<[T]>>>,
}

/// A table file read from `D` (a memory map or a byte vector).
#[derive(Debug)]
pub struct TableFile<D> {
    data: D,
    header: Header,
    layout: Layout,
    /// WDL codes (0 = loss ..= 4 = win) per position.
    wdl: SectionMap<u8>,
    /// DTZ codes (see [`dtz_code`]) per position.
    dtz: SectionMap<u16>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl<D: AsRef<[u8]>> TableFile<D> {
    /// Check the header, trailer and block tables and wrap the data.
    ///
    /// # Errors
    /// A [`FormatError`] saying what is wrong.
    pub fn new(data: D) -> Result<TableFile<D>, FormatError> {
        let b = data.as_ref();
        let min = (HEADER_LEN + TRAILER_LEN) as u64;
        if (b.len() as u64) < min {
            return Err(FormatError::TooShort {
                len: b.len() as u64,
                min,
            });
        }
        if b[..8] != MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = u16_at(b, 8);
        if version != VERSION {
            return Err(FormatError::Version {
                expected: VERSION,
                got: version,
            });
        }
        let trailer = b.len() - TRAILER_LEN;
        let recorded = u64_at(b, trailer + 96);
        if recorded != b.len() as u64 {
            return Err(FormatError::Length {
                expected: recorded,
                got: b.len() as u64,
            });
        }
        let header = parse_header(b)?;
        let layout = Layout::new(header.material);
        if layout.size() != header.positions {
            return Err(FormatError::Header(format!(
                "{} positions per side, {} has {}",
                header.positions,
                header.material,
                layout.size()
            )));
        }
        let blocks = (2 * header.positions).div_ceil(u64::from(BLOCK_POSITIONS)) as usize;
        let wdl = section_map(b, Section::Wdl, trailer, blocks, HEADER_LEN)?;
        let wdl_end = wdl.index_offset + 8 * (blocks + 1);
        let dtz = section_map(b, Section::Dtz, trailer + 48, blocks, wdl_end)?;
        Ok(TableFile {
            data,
            header,
            layout,
            wdl,
            dtz,
        })
    }

    /// The header facts.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The index scheme of the table.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Total bytes.
    pub fn len(&self) -> usize {
        self.data.as_ref().len()
    }

    /// Whether the file is empty (never, for a valid file).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The WDL stored at `index` with `turn` to move.
    ///
    /// # Errors
    /// A corrupt block.
    pub fn wdl(&self, turn: Color, index: TableIndex) -> Result<Wdl, FormatError> {
        let (block, offset) = self.locate(turn, index);
        let pairs = self.cached(Section::Wdl, &self.wdl, block, |v| v as u8, pack_nibbles)?;
        Ok(nibble_wdl(pairs, offset))
    }

    /// The DTZ stored at `index` with `turn` to move.
    ///
    /// # Errors
    /// A corrupt block.
    pub fn dtz(&self, turn: Color, index: TableIndex) -> Result<Dtz, FormatError> {
        let wdl = self.wdl(turn, index)?;
        let (block, offset) = self.locate(turn, index);
        let code = match wdl {
            Wdl::Draw => 0,
            _ => self.cached(Section::Dtz, &self.dtz, block, |v| v, |codes| codes)?[offset],
        };
        Ok(self.signed_dtz(wdl, code))
    }

    /// Every position of one block (see [`TableFile::locate`]) as its
    /// stored WDL and DTZ, decoded from both sections and not cached: for
    /// readers that go through a whole table once.
    ///
    /// # Errors
    /// A corrupt block.
    pub fn block_entries(&self, block: usize) -> Result<Vec<(Wdl, Dtz)>, FormatError> {
        let wdl = self.decode(Section::Wdl, self.wdl.index_offset, block, |v| v as u8)?;
        let dtz = self.decode(Section::Dtz, self.dtz.index_offset, block, |v| v)?;
        Ok(wdl
            .into_iter()
            .zip(dtz)
            .map(|(w, code)| {
                let wdl = Wdl::ALL[usize::from(w)];
                (wdl, self.signed_dtz(wdl, code))
            })
            .collect())
    }

    /// The DTZ a stored code means for a position of WDL `wdl`.
    fn signed_dtz(&self, wdl: Wdl, code: u16) -> Dtz {
        let code = code as i16;
        let limit = self.header.rule.limit().unwrap_or(0);
        Dtz(match wdl {
            Wdl::Draw => 0,
            Wdl::Win => code,
            Wdl::CursedWin => code + limit,
            Wdl::Loss => -code,
            Wdl::BlessedLoss => -code - limit,
        })
    }

    /// Number of WDL blocks.
    pub fn wdl_block_count(&self) -> usize {
        self.wdl.blocks
    }

    /// One WDL block unpacked (and checked) without keeping it: two codes
    /// per byte, the first in the low nibble, as [`TableFile::wdl`] caches
    /// them. For readers that hold blocks only for a while.
    ///
    /// # Errors
    /// A corrupt block.
    pub fn unpack_wdl_block(&self, block: usize) -> Result<Vec<u8>, FormatError> {
        Ok(pack_nibbles(self.decode(
            Section::Wdl,
            self.wdl.index_offset,
            block,
            |v| v as u8,
        )?))
    }

    /// The block holding `index` with `turn` to move, and the position in
    /// it.
    pub fn locate(&self, turn: Color, index: TableIndex) -> (usize, usize) {
        let at = if turn == Color::White {
            index.0
        } else {
            self.header.positions + index.0
        };
        let per = u64::from(BLOCK_POSITIONS);
        ((at / per) as usize, (at % per) as usize)
    }

    /// The unpacked codes of a block, decoded on first use and kept in
    /// the form `keep` gives them.
    fn cached<'a, T: Copy + Default>(
        &self,
        section: Section,
        map: &'a SectionMap<T>,
        block: usize,
        narrow: fn(u16) -> T,
        keep: fn(Vec<T>) -> Vec<T>,
    ) -> Result<&'a [T], FormatError> {
        if let Some(codes) = map.cache[block].get() {
            return Ok(codes);
        }
        let codes = keep(self.decode(section, map.index_offset, block, narrow)?);
        Ok(map.cache[block].get_or_init(|| codes.into_boxed_slice()))
    }

    /// Decompress and unpack one block, checking its exact size and that
    /// every code is a value the section can hold.
    fn decode<T: Copy + Default>(
        &self,
        section: Section,
        index_offset: usize,
        block: usize,
        narrow: fn(u16) -> T,
    ) -> Result<Vec<T>, FormatError> {
        let b = self.data.as_ref();
        let start = u64_at(b, index_offset + 8 * block) as usize;
        let end = u64_at(b, index_offset + 8 * (block + 1)) as usize;
        let total = 2 * self.header.positions;
        let first = block as u64 * u64::from(BLOCK_POSITIONS);
        let values = (total - first).min(u64::from(BLOCK_POSITIONS)) as usize;
        let max = match section {
            Section::Wdl => wdl_code(Wdl::Win),
            _ => MAX_DTZ_CODE,
        };
        let corrupt = || FormatError::Block { section, block };
        let frame = b.get(start..end).ok_or_else(corrupt)?;
        let capacity = packed_len(values, 1 << 16, 16);
        let raw = zstd::bulk::decompress(frame, capacity).map_err(|_| corrupt())?;
        unpack(&raw, values, max, narrow).ok_or_else(corrupt)
    }

    /// Check everything: both section checksums, the file checksum, every
    /// block.
    ///
    /// # Errors
    /// The first problem found.
    pub fn verify(&self) -> Result<(), FormatError> {
        let b = self.data.as_ref();
        let wdl_end = section_end(&self.wdl);
        for (section, start, end, digest) in [
            (Section::Wdl, HEADER_LEN, wdl_end, &self.wdl.digest),
            (
                Section::Dtz,
                wdl_end,
                section_end(&self.dtz),
                &self.dtz.digest,
            ),
        ] {
            let got: [u8; 32] = Sha256::digest(&b[start..end]).into();
            if got != *digest {
                return Err(FormatError::Checksum {
                    section,
                    expected: hex(digest),
                    got: hex(&got),
                });
            }
        }
        let body = b.len() - 32;
        let got: [u8; 32] = Sha256::digest(&b[..body]).into();
        if got[..] != b[body..] {
            return Err(FormatError::Checksum {
                section: Section::Header,
                expected: hex(&b[body..]),
                got: hex(&got),
            });
        }
        for (section, index_offset, blocks) in [
            (Section::Wdl, self.wdl.index_offset, self.wdl.blocks),
            (Section::Dtz, self.dtz.index_offset, self.dtz.blocks),
        ] {
            for block in 0..blocks {
                self.decode(section, index_offset, block, |v| v)?;
            }
        }
        Ok(())
    }
}

fn section_end<T>(map: &SectionMap<T>) -> usize {
    map.index_offset + 8 * (map.blocks + 1)
}

fn parse_header(b: &[u8]) -> Result<Header, FormatError> {
    let bad = |s: String| FormatError::Header(s);
    let rule = Rule::from_code(b[10]).ok_or_else(|| bad(format!("unknown rule code {}", b[10])))?;
    if b[11] != INDEX_SCHEME {
        return Err(bad(format!(
            "index scheme {}, expected {INDEX_SCHEME}",
            b[11]
        )));
    }
    if u32_at(b, 12) != BLOCK_POSITIONS {
        return Err(bad(format!(
            "{} positions per block, expected {BLOCK_POSITIONS}",
            u32_at(b, 12)
        )));
    }
    let name_end = b[16..32].iter().position(|&c| c == 0).unwrap_or(16);
    let name = std::str::from_utf8(&b[16..16 + name_end])
        .map_err(|_| bad("material is not ASCII".into()))?;
    let material: Material = name.parse().map_err(|e| bad(format!("{e}")))?;
    if material.to_string() != name {
        return Err(bad(format!("material '{name}' is not normalised")));
    }
    let positions = u64_at(b, 32);
    let stats = ByColor::new_with(|turn| {
        let at = 40 + STATS_LEN * usize::from(turn == Color::Black);
        let mut counts = [0u64; 5];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = u64_at(b, at + 8 * i);
        }
        let longest = |i: usize| u16_at(b, at + 40 + 2 * i);
        let longest_at = u64_at(b, at + 48);
        SideStats {
            counts,
            longest_win: longest(0),
            longest_cursed_win: longest(1),
            longest_loss: longest(2),
            longest_blessed_loss: longest(3),
            longest_at: (longest_at != u64::MAX).then_some(TableIndex(longest_at)),
        }
    });
    Ok(Header {
        material,
        rule,
        positions,
        stats,
    })
}

fn section_map<T>(
    b: &[u8],
    section: Section,
    at: usize,
    blocks: usize,
    start: usize,
) -> Result<SectionMap<T>, FormatError> {
    let layout_error = |reason: String| FormatError::Layout { section, reason };
    let index_offset = u64_at(b, at) as usize;
    let recorded_blocks = u32_at(b, at + 8) as usize;
    if recorded_blocks != blocks {
        return Err(layout_error(format!(
            "{recorded_blocks} blocks, expected {blocks}"
        )));
    }
    index_offset
        .checked_add(8 * (blocks + 1))
        .filter(|&end| end <= b.len() - TRAILER_LEN)
        .ok_or_else(|| layout_error(format!("block table at {index_offset} is out of bounds")))?;
    let mut previous = start as u64;
    for i in 0..=blocks {
        let o = u64_at(b, index_offset + 8 * i);
        if o < previous || o > index_offset as u64 {
            return Err(layout_error(format!(
                "block {i} offset {o} is out of order"
            )));
        }
        previous = o;
    }
    let digest: [u8; 32] = b[at + 16..at + 48].try_into().expect("32 bytes");
    Ok(SectionMap {
        index_offset,
        blocks,
        digest,
        cache: (0..blocks).map(|_| OnceLock::new()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_blocks_round_trip_in_every_width() {
        for distinct in [1u16, 2, 3, 4, 5, 16, 17, 256, 257, 1000] {
            let values: Vec<u16> = (0..1001u32)
                .map(|i| (i * 7919 % u32::from(distinct)) as u16 * 3)
                .collect();
            let packed = pack(&values);
            assert_eq!(u32::from(packed[0]), code_bits(usize::from(distinct)));
            assert_eq!(
                unpack(&packed, values.len(), 3000, |v| v),
                Some(values.clone())
            );
            if distinct > 1 {
                assert_eq!(
                    unpack(&packed, values.len() + 64, 3000, |v| v),
                    None,
                    "length"
                );
            }
            let max = *values.iter().max().expect("values");
            if max > 0 {
                assert_eq!(unpack(&packed, values.len(), max - 1, |v| v), None, "range");
            }
        }
    }

    #[test]
    fn packed_blocks_with_bad_codes_are_rejected() {
        // Three distinct values take 2 bits; a rank of 3 points past the list.
        let mut packed = pack(&[5, 6, 7, 5]);
        assert_eq!(unpack(&packed, 4, 10, |v| v), Some(vec![5, 6, 7, 5]));
        let last = packed.len() - 1;
        packed[last] |= 0b11 << 6;
        assert_eq!(unpack(&packed, 4, 10, |v| v), None);
        // Values out of order, or a width that is not the narrowest.
        let mut unordered = pack(&[5, 6]);
        unordered.swap(3, 5);
        assert_eq!(unpack(&unordered, 2, 10, |v| v), None);
        let mut wide = pack(&[5, 6]);
        wide[0] = 2;
        assert_eq!(unpack(&wide, 2, 10, |v| v), None);
    }
}
