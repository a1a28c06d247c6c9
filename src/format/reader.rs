//! The reader: a [`TableFile`] over any `D: AsRef<[u8]>` (a `Vec` in
//! tests, a memory map in production). [`TableFile::new`] checks size,
//! magic, version, length, header fields and the block-offset tables
//! (cheap); every block is checked for bounds, exact decompressed size and
//! valid codes when first used; [`TableFile::verify`] checks both section
//! checksums, the file checksum and every block.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};
use shakmaty::Color;

use super::{
    BLOCK_POSITIONS, FormatError, HEADER_LEN, MAGIC, Section, TRAILER_LEN, VERSION,
    block::{MAX_DTZ_CODE, nibble_wdl, pack_nibbles, packed_len, unpack, wdl_code},
    header::{Header, parse_header},
    hex, u16_at, u32_at, u64_at,
};
use crate::{
    index::{Layout, TableIndex},
    value::{Dtz, Wdl},
};

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
        self.verify_checksum()?;
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

    /// Check the file checksum: every byte is as written, in one pass over
    /// the file and without decoding any block (what `generate` checks
    /// before it keeps a finished table).
    ///
    /// # Errors
    /// [`FormatError::Checksum`] if a byte differs.
    pub fn verify_checksum(&self) -> Result<(), FormatError> {
        let b = self.data.as_ref();
        let body = b.len() - 32;
        let got: [u8; 32] = Sha256::digest(&b[..body]).into();
        if got[..] != b[body..] {
            return Err(FormatError::Checksum {
                section: Section::Header,
                expected: hex(&b[body..]),
                got: hex(&got),
            });
        }
        Ok(())
    }
}

fn section_end<T>(map: &SectionMap<T>) -> usize {
    map.index_offset + 8 * (map.blocks + 1)
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
