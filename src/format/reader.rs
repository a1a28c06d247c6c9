//! The reader: a [`TableFile`] over any [`Source`] of bytes: memory (a
//! `Vec` in tests, a memory map for engines) or positional reads of an
//! open file ([`PositionalFile`], for processes that live long: a file that
//! changes under them gives errors, never a SIGBUS). [`TableFile::new`]
//! checks size, magic, version, length, header fields and the block-offset
//! tables (cheap); every block is checked for bounds, exact decompressed
//! size and valid codes when first used; [`TableFile::verify`] checks both
//! section checksums, the file checksum and every block. Decoded blocks
//! are kept per file, or in a shared [`BlockCache`] of bounded size.

use std::{borrow::Cow, fs::File, io, path::Path, sync::Arc};

use sha2::{Digest, Sha256};
use shakmaty::Color;

use super::{
    BLOCK_POSITIONS, FormatError, HEADER_LEN, MAGIC, Section, TRAILER_LEN, VERSION,
    block::{MAX_DTZ_CODE, nibble_wdl, pack_nibbles, packed_len, unpack, wdl_code},
    cache::{BlockCache, Blocks, Code},
    header::{Header, parse_header},
    hex, u16_at, u32_at, u64_at,
};
use crate::{
    index::{Layout, TableIndex},
    value::{Dtz, Wdl},
};

/// Where a table file's bytes come from.
pub trait Source: Send + Sync {
    /// Total bytes.
    fn size(&self) -> u64;

    /// `len` bytes from `offset` (borrowed from memory, or read).
    ///
    /// # Errors
    /// If they cannot be read (for a file: it was truncated, or the disk
    /// failed).
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>>;
}

impl<D: AsRef<[u8]> + Send + Sync> Source for D {
    fn size(&self) -> u64 {
        self.as_ref().len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        usize::try_from(offset)
            .ok()
            .and_then(|start| self.as_ref().get(start..start.checked_add(len)?))
            .map(Cow::Borrowed)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    }
}

/// A file read by positional reads (`pread`), never mapped: if it is
/// truncated or rewritten while open, reads fail or see the new bytes,
/// and the process goes on.
#[derive(Debug)]
pub struct PositionalFile {
    file: File,
    size: u64,
}

impl PositionalFile {
    /// Open `path` for positional reads; its size is taken now.
    ///
    /// # Errors
    /// If it cannot be opened.
    pub fn open(path: &Path) -> io::Result<PositionalFile> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        Ok(PositionalFile { file, size })
    }
}

impl Source for PositionalFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        use std::os::unix::fs::FileExt;
        let mut buffer = vec![0; len];
        self.file.read_exact_at(&mut buffer, offset)?;
        Ok(Cow::Owned(buffer))
    }
}

/// Where one section's blocks are.
#[derive(Debug)]
struct SectionMap<T> {
    /// Offset of the block-offset table.
    index_offset: u64,
    /// Each block's start, and the end of the last one.
    offsets: Vec<u64>,
    digest: [u8; 32],
    /// Decoded blocks.
    blocks: Blocks<T>,
}

impl<T> SectionMap<T> {
    fn block_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The end of the section (after its block-offset table).
    fn end(&self) -> u64 {
        self.index_offset + 8 * self.offsets.len() as u64
    }
}

/// A table file read from a [`Source`] (a memory map, a byte vector, a
/// [`PositionalFile`]).
#[derive(Debug)]
pub struct TableFile<S> {
    source: S,
    header: Header,
    layout: Layout,
    /// WDL codes (0 = loss ..= 4 = win) per position.
    wdl: SectionMap<u8>,
    /// DTZ codes (see the block module) per position.
    dtz: SectionMap<u16>,
}

impl<S: Source> TableFile<S> {
    /// Check the header, trailer and block tables and wrap the source.
    /// Decoded blocks are kept while the file is open.
    ///
    /// # Errors
    /// A [`FormatError`] saying what is wrong.
    pub fn new(source: S) -> Result<TableFile<S>, FormatError> {
        TableFile::open(source, None)
    }

    /// As [`TableFile::new`], keeping decoded blocks in `cache`.
    ///
    /// # Errors
    /// A [`FormatError`] saying what is wrong.
    pub fn with_cache(source: S, cache: Arc<BlockCache>) -> Result<TableFile<S>, FormatError> {
        TableFile::open(source, Some(cache))
    }

    /// Open `source`, keeping decoded blocks in `cache` if given, else
    /// every block while the file is open.
    fn open(source: S, cache: Option<Arc<BlockCache>>) -> Result<TableFile<S>, FormatError> {
        let size = source.size();
        let min = (HEADER_LEN + TRAILER_LEN) as u64;
        if size < min {
            return Err(FormatError::TooShort { len: size, min });
        }
        let read = |offset: u64, len: usize| {
            source
                .read_at(offset, len)
                .map_err(|source| FormatError::Read { offset, source })
        };
        let head = read(0, HEADER_LEN)?;
        if head[..8] != MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = u16_at(&head, 8);
        if version != VERSION {
            return Err(FormatError::Version {
                expected: VERSION,
                got: version,
            });
        }
        let trailer_at = size - TRAILER_LEN as u64;
        let trailer = read(trailer_at, TRAILER_LEN)?;
        let recorded = u64_at(&trailer, 96);
        if recorded != size {
            return Err(FormatError::Length {
                expected: recorded,
                got: size,
            });
        }
        let header = parse_header(&head)?;
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
        let wdl = section_map(
            &read,
            Section::Wdl,
            &trailer[..48],
            (blocks, HEADER_LEN as u64, trailer_at),
            Blocks::new(blocks, Section::Wdl, cache.as_ref()),
        )?;
        let dtz = section_map(
            &read,
            Section::Dtz,
            &trailer[48..96],
            (blocks, wdl.end(), trailer_at),
            Blocks::new(blocks, Section::Dtz, cache.as_ref()),
        )?;
        Ok(TableFile {
            source,
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
    pub fn len(&self) -> u64 {
        self.source.size()
    }

    /// Whether the file is empty (never, for a valid file).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The WDL stored at `index` with `turn` to move.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn wdl(&self, turn: Color, index: TableIndex) -> Result<Wdl, FormatError> {
        let (block, offset) = self.locate(turn, index);
        self.wdl.blocks.with(
            block,
            || Ok(pack_nibbles(self.decode(Section::Wdl, block, |v| v as u8)?)),
            |pairs| nibble_wdl(pairs, offset),
        )
    }

    /// The DTZ stored at `index` with `turn` to move.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn dtz(&self, turn: Color, index: TableIndex) -> Result<Dtz, FormatError> {
        let wdl = self.wdl(turn, index)?;
        let (block, offset) = self.locate(turn, index);
        let code = match wdl {
            Wdl::Draw => 0,
            _ => self.dtz.blocks.with(
                block,
                || self.decode(Section::Dtz, block, |v| v),
                |codes| codes[offset],
            )?,
        };
        Ok(self.signed_dtz(wdl, code))
    }

    /// Every position of one block (see [`TableFile::locate`]) as its
    /// stored WDL and DTZ, decoded from both sections and not cached: for
    /// readers that go through a whole table once.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn block_entries(&self, block: usize) -> Result<Vec<(Wdl, Dtz)>, FormatError> {
        let wdl = self.decode(Section::Wdl, block, |v| v as u8)?;
        let dtz = self.decode(Section::Dtz, block, |v| v)?;
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
        self.wdl.block_count()
    }

    /// One WDL block unpacked (and checked) without keeping it: two codes
    /// per byte, the first in the low nibble, as [`TableFile::wdl`] keeps
    /// them. For readers that hold blocks only for a while.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn unpack_wdl_block(&self, block: usize) -> Result<Vec<u8>, FormatError> {
        Ok(pack_nibbles(self.decode(Section::Wdl, block, |v| v as u8)?))
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

    /// Each block's start in `section`, and the end of the last one.
    fn offsets(&self, section: Section) -> &[u64] {
        match section {
            Section::Wdl => &self.wdl.offsets,
            _ => &self.dtz.offsets,
        }
    }

    /// Read, decompress and unpack one block, checking its exact size and
    /// that every code is a value the section can hold.
    fn decode<T: Code>(
        &self,
        section: Section,
        block: usize,
        narrow: fn(u16) -> T,
    ) -> Result<Vec<T>, FormatError> {
        let offsets = self.offsets(section);
        let (start, end) = (offsets[block], offsets[block + 1]);
        let total = 2 * self.header.positions;
        let first = block as u64 * u64::from(BLOCK_POSITIONS);
        let values = (total - first).min(u64::from(BLOCK_POSITIONS)) as usize;
        let max = match section {
            Section::Wdl => wdl_code(Wdl::Win),
            _ => MAX_DTZ_CODE,
        };
        let corrupt = || FormatError::Block { section, block };
        let frame = self
            .source
            .read_at(start, (end - start) as usize)
            .map_err(|source| FormatError::Read {
                offset: start,
                source,
            })?;
        let capacity = packed_len(values, 1 << 16, 16);
        let raw = zstd::bulk::decompress(&frame, capacity).map_err(|_| corrupt())?;
        unpack(&raw, values, max, narrow).ok_or_else(corrupt)
    }

    /// The SHA-256 of `len` bytes from `offset`, read a chunk at a time.
    fn digest(&self, offset: u64, len: u64) -> Result<[u8; 32], FormatError> {
        const CHUNK: u64 = 1 << 20;
        let mut hasher = Sha256::new();
        let mut at = offset;
        while at < offset + len {
            let n = CHUNK.min(offset + len - at);
            let bytes = self
                .source
                .read_at(at, n as usize)
                .map_err(|source| FormatError::Read { offset: at, source })?;
            hasher.update(&bytes);
            at += n;
        }
        Ok(hasher.finalize().into())
    }

    /// Check everything: both section checksums, the file checksum, every
    /// block.
    ///
    /// # Errors
    /// The first problem found.
    pub fn verify(&self) -> Result<(), FormatError> {
        let wdl_end = self.wdl.end();
        for (section, start, end, digest) in [
            (Section::Wdl, HEADER_LEN as u64, wdl_end, &self.wdl.digest),
            (Section::Dtz, wdl_end, self.dtz.end(), &self.dtz.digest),
        ] {
            let got = self.digest(start, end - start)?;
            if got != *digest {
                return Err(FormatError::Checksum {
                    section,
                    expected: hex(digest),
                    got: hex(&got),
                });
            }
        }
        self.verify_checksum()?;
        for section in [Section::Wdl, Section::Dtz] {
            for block in 0..self.offsets(section).len() - 1 {
                self.decode(section, block, |v| v)?;
            }
        }
        Ok(())
    }

    /// Check the file checksum: every byte is as written, in one pass over
    /// the file and without decoding any block (what `generate` checks
    /// before it keeps a finished table).
    ///
    /// # Errors
    /// [`FormatError::Checksum`] if a byte differs.
    pub fn verify_checksum(&self) -> Result<(), FormatError> {
        let body = self.len() - 32;
        let got = self.digest(0, body)?;
        let recorded = self
            .source
            .read_at(body, 32)
            .map_err(|source| FormatError::Read {
                offset: body,
                source,
            })?;
        if got[..] != recorded[..] {
            return Err(FormatError::Checksum {
                section: Section::Header,
                expected: hex(&recorded),
                got: hex(&got),
            });
        }
        Ok(())
    }
}

/// Read and check one section's block-offset table, as the trailer's
/// `fields` (48 bytes) describe it: `count` blocks, the section starting
/// at `start`, everything before the trailer at `trailer_at`.
fn section_map<'s, T>(
    read: &impl Fn(u64, usize) -> Result<Cow<'s, [u8]>, FormatError>,
    section: Section,
    fields: &[u8],
    (count, start, trailer_at): (usize, u64, u64),
    blocks: Blocks<T>,
) -> Result<SectionMap<T>, FormatError> {
    let layout_error = |reason: String| FormatError::Layout { section, reason };
    let index_offset = u64_at(fields, 0);
    let recorded = u32_at(fields, 8) as usize;
    if recorded != count {
        return Err(layout_error(format!("{recorded} blocks, expected {count}")));
    }
    let table_len = 8 * (count as u64 + 1);
    index_offset
        .checked_add(table_len)
        .filter(|&end| end <= trailer_at)
        .ok_or_else(|| layout_error(format!("block table at {index_offset} is out of bounds")))?;
    let table = read(index_offset, table_len as usize)?;
    let offsets: Vec<u64> = (0..=count).map(|i| u64_at(&table, 8 * i)).collect();
    let mut previous = start;
    for (i, &o) in offsets.iter().enumerate() {
        if o < previous || o > index_offset {
            return Err(layout_error(format!(
                "block {i} offset {o} is out of order"
            )));
        }
        previous = o;
    }
    let digest: [u8; 32] = fields[16..48].try_into().expect("32 bytes");
    Ok(SectionMap {
        index_offset,
        offsets,
        digest,
        blocks,
    })
}
