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
//!     12     4  positions per block (u32)
//!     16    16  material, ASCII ("KRPvKR"), NUL-padded
//!     32     8  N, positions per side to move (u64)
//!     40    56  statistics, White to move:
//!                 5 × u64 counts (loss, blessed loss, draw, cursed win, win),
//!                 4 × u16 longest (win, cursed win, loss, blessed loss),
//!                 u64 index reaching the longest (u64::MAX: none)
//!     96    56  statistics, Black to move (same layout)
//!    152     8  reserved, zero
//! WDL section (at HEADER_LEN)
//!              zstd frames, one per block; raw block: one byte per position,
//!              WDL + 2 (0 = loss .. 4 = win)
//!              block offsets: (blocks + 1) × u64, absolute file offsets of
//!              each frame and of the end of the last one
//! DTZ section (right after the WDL section)
//!              zstd frames; raw block: |DTZ| of each position as u16, low
//!              bytes of the whole block first, then the high bytes (the
//!              sign and the zero of draws come from the WDL section)
//!              block offsets, as above
//! trailer (TRAILER_LEN = 136 bytes, at file length - 136)
//!      0    48  WDL section: offset of its block-offset table (u64),
//!               blocks (u32), reserved (u32), SHA-256 of the section (32)
//!     48    48  DTZ section: the same
//!     96     8  file length (u64)
//!    104    32  SHA-256 of every byte before it
//! ```
//!
//! "Don't care" values keep runs long for zstd: illegal positions repeat
//! the previous value in both sections, and so do draws in the DTZ section.
//! A DTZ probe therefore reads the WDL section too (draw → 0, sign). The writer streams: it compresses a bounded
//! batch of blocks at a time (in parallel) and writes them in order, so the
//! bytes do not depend on the thread count.
//!
//! [`TableFile`] reads any `D: AsRef<[u8]>` (a `Vec` in tests, a memory
//! map in production). [`TableFile::new`] checks size, magic, version,
//! length, header fields and the block-offset tables (cheap); every block is
//! checked for bounds and exact decompressed size when first used, and
//! [`TableFile::verify`] checks both section checksums, the file checksum
//! and every block.

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
    value::{Dtz, Rule, Wdl},
};

/// First bytes of every table file.
pub const MAGIC: [u8; 8] = *b"DTZ50TB\x1a";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// The index scheme this crate writes and reads.
pub const INDEX_SCHEME: u8 = 1;
/// Positions per compressed block.
pub const BLOCK_POSITIONS: u32 = 1 << 17;
/// File name extension of table files.
pub const EXTENSION: &str = "dtz50";
/// Header length in bytes.
pub const HEADER_LEN: usize = 160;
/// Trailer length in bytes.
pub const TRAILER_LEN: usize = 136;

/// zstd level: with 2^17-position blocks, 15 is as small as level 19 with
/// 2^15 blocks at half the time (measured on KQvKR, KBNvK, KRvKP).
const ZSTD_LEVEL: i32 = 15;
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
    let mut offsets = Vec::with_capacity(blocks + 1);
    let mut hasher = Sha256::new();
    for batch_start in (0..blocks).step_by(BATCH_BLOCKS) {
        let batch_end = (batch_start + BATCH_BLOCKS).min(blocks);
        let frames: Vec<io::Result<Vec<u8>>> = (batch_start..batch_end)
            .into_par_iter()
            .map(|block| zstd::bulk::compress(&raw_block(table, section, block), ZSTD_LEVEL))
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

/// The uncompressed bytes of one block.
fn raw_block(table: &Table, section: Section, block: usize) -> Vec<u8> {
    let n = table.layout().size();
    let start = block as u64 * u64::from(BLOCK_POSITIONS);
    let end = (start + u64::from(BLOCK_POSITIONS)).min(2 * n);
    let cells = (start..end).map(|at| {
        let (turn, index) = if at < n {
            (Color::White, at)
        } else {
            (Color::Black, at - n)
        };
        table.cell(turn, TableIndex(index)).value()
    });
    match section {
        Section::Wdl => {
            let mut previous = Wdl::Draw;
            cells
                .map(|value| {
                    if let Some(dtz) = value {
                        previous = Wdl::from_dtz(dtz, table.rule());
                    }
                    (previous.to_i8() + 2) as u8
                })
                .collect()
        }
        _ => {
            let mut previous = 0u16;
            let plies: Vec<u16> = cells
                .map(|value| {
                    if let Some(dtz) = value.filter(|d| d.0 != 0) {
                        previous = dtz.plies();
                    }
                    previous
                })
                .collect();
            let mut bytes = Vec::with_capacity(plies.len() * 2);
            bytes.extend(plies.iter().map(|d| d.to_le_bytes()[0]));
            bytes.extend(plies.iter().map(|d| d.to_le_bytes()[1]));
            bytes
        }
    }
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
struct SectionMap {
    index_offset: usize,
    blocks: usize,
    digest: [u8; 32],
    cache: Vec<OnceLock<Box<[u8]>>>,
}

/// A table file read from `D` (a memory map or a byte vector).
#[derive(Debug)]
pub struct TableFile<D> {
    data: D,
    header: Header,
    layout: Layout,
    wdl: SectionMap,
    dtz: SectionMap,
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
        let raw = self.block(Section::Wdl, block)?;
        Ok(Wdl::ALL[usize::from(raw[offset]).min(4)])
    }

    /// The DTZ stored at `index` with `turn` to move.
    ///
    /// # Errors
    /// A corrupt block.
    pub fn dtz(&self, turn: Color, index: TableIndex) -> Result<Dtz, FormatError> {
        let wdl = self.wdl(turn, index)?;
        if wdl == Wdl::Draw {
            return Ok(Dtz(0));
        }
        let (block, offset) = self.locate(turn, index);
        let raw = self.block(Section::Dtz, block)?;
        let half = raw.len() / 2;
        let plies = i16::from_le_bytes([raw[offset], raw[half + offset]]);
        Ok(Dtz(if wdl > Wdl::Draw { plies } else { -plies }))
    }

    fn locate(&self, turn: Color, index: TableIndex) -> (usize, usize) {
        let at = if turn == Color::White {
            index.0
        } else {
            self.header.positions + index.0
        };
        let per = u64::from(BLOCK_POSITIONS);
        ((at / per) as usize, (at % per) as usize)
    }

    fn block(&self, section: Section, block: usize) -> Result<&[u8], FormatError> {
        let map = match section {
            Section::Wdl => &self.wdl,
            _ => &self.dtz,
        };
        if let Some(raw) = map.cache[block].get() {
            return Ok(raw);
        }
        let raw = self.decompress(section, map, block)?;
        Ok(map.cache[block].get_or_init(|| raw))
    }

    fn decompress(
        &self,
        section: Section,
        map: &SectionMap,
        block: usize,
    ) -> Result<Box<[u8]>, FormatError> {
        let b = self.data.as_ref();
        let start = u64_at(b, map.index_offset + 8 * block) as usize;
        let end = u64_at(b, map.index_offset + 8 * (block + 1)) as usize;
        let total = 2 * self.header.positions;
        let first = block as u64 * u64::from(BLOCK_POSITIONS);
        let values = (total - first).min(u64::from(BLOCK_POSITIONS)) as usize;
        let expected = if section == Section::Wdl {
            values
        } else {
            2 * values
        };
        let corrupt = || FormatError::Block { section, block };
        let frame = b.get(start..end).ok_or_else(corrupt)?;
        let raw = zstd::bulk::decompress(frame, expected).map_err(|_| corrupt())?;
        if raw.len() != expected {
            return Err(corrupt());
        }
        Ok(raw.into_boxed_slice())
    }

    /// Check everything: both section checksums, the file checksum, every
    /// block.
    ///
    /// # Errors
    /// The first problem found.
    pub fn verify(&self) -> Result<(), FormatError> {
        let b = self.data.as_ref();
        for (section, map, start) in [
            (Section::Wdl, &self.wdl, HEADER_LEN),
            (Section::Dtz, &self.dtz, self.section_end(&self.wdl)),
        ] {
            let end = self.section_end(map);
            let got: [u8; 32] = Sha256::digest(&b[start..end]).into();
            if got != map.digest {
                return Err(FormatError::Checksum {
                    section,
                    expected: hex(&map.digest),
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
        for (section, map) in [(Section::Wdl, &self.wdl), (Section::Dtz, &self.dtz)] {
            for block in 0..map.blocks {
                self.decompress(section, map, block)?;
            }
        }
        Ok(())
    }

    fn section_end(&self, map: &SectionMap) -> usize {
        map.index_offset + 8 * (map.blocks + 1)
    }
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

fn section_map(
    b: &[u8],
    section: Section,
    at: usize,
    blocks: usize,
    start: usize,
) -> Result<SectionMap, FormatError> {
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
