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

use thiserror::Error;

mod block;
mod cache;
mod header;
mod reader;
mod writer;

pub(crate) use block::nibble_wdl;
pub use cache::BlockCache;
pub use header::{Header, SideStats};
pub use reader::{PositionalFile, Source, TableFile};
pub use writer::{SolvedValues, write_table};

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
#[derive(Debug, Error)]
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
    #[error(
        "format version {got}, this dtz50 reads version {expected}; `dtz50 generate` into its directory rebuilds it"
    )]
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
    /// Bytes of the file could not be read (it was truncated or changed
    /// while open, or the disk failed).
    #[error("cannot read at byte {offset}")]
    Read {
        /// Where the read started.
        offset: u64,
        /// What the read reported.
        source: std::io::Error,
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
