//! The table file format (`.dtz50`), byte by byte.
//!
//! One file per table, named after its material (`KRPvKR.dtz50`), holding
//! WDL and DTZ in separate streams so that a WDL probe never touches DTZ
//! bytes. All integers are little-endian. Positions are numbered per side
//! to move by [`crate::index`], each stream with the pieces' digits in its
//! own order, which the header records: the writer tries every order that
//! keeps identical pieces together (with a pawn table's kings anywhere, a
//! pawnless table's king pair anywhere or one king first and the other
//! last) on a sample of each stream and keeps, for each, the one that
//! compresses it best (see the solved module): each side to move has its
//! own neighbours that are alike (see BENCHMARKS.md). A reader numbers a
//! position by its side's WDL order, and a DTZ read maps that index to
//! the DTZ stream's order. The file has four stream places, each for the
//! codes of one section for one side to move, in this order: WDL with
//! White to move, WDL with Black to move, DTZ with White, DTZ with Black.
//! DTZ is kept for one side to move only, the one whose stream the writer
//! estimates smaller from a sample (White on a tie; see the solved
//! module); the other DTZ place is all zeros. A reader finds the
//! other side's DTZ by a one-ply search: each quiet move reaches the kept
//! side, each zeroing move needs only WDL
//! ([`crate::probe::dtz_by_moves`]). A table of symmetric material
//! (KRvKR, KPvKP) keeps White to move only, WDL and DTZ, and both Black
//! places are all zeros: a reader reads a position with Black to move as
//! the same position with the colours swapped and the board mirrored,
//! White to move ([`crate::index::Layout::mirrored_index`]), so it has
//! both sides' DTZ without a search (Syzygy's files keep one side of such
//! tables too).
//!
//! A stream is built for engines, which probe single positions at random
//! from a cold start: its codes become symbols of a grammar (every symbol
//! a code or a pair of earlier symbols, so one symbol stands for a run or
//! a repeated pattern: Re-Pair), symbols get a canonical Huffman code, and
//! the coded symbols fill blocks of one length per stream (a power of two
//! from [`MIN_BLOCK_LEN`] to [`WDL_BLOCK_LEN`] or [`DTZ_BLOCK_LEN`] bytes,
//! whichever makes the stream smallest), each ending in a CRC-16 of its
//! bytes. A probe reads one entry of a sparse index, walks a few
//! per-block position counts, checks one block's CRC (the first time it
//! reads that block while the file is open: one bit per block remembers
//! it) and decodes symbols in that block up to its position: no
//! decompression of anything else. A reader may hold decoded DTZ blocks
//! in a bounded [`DecodedBlocks`] cache (as [`crate::probe::Tablebase::open`]
//! does), where a read finds its symbol among the ends held; nothing else
//! decoded is kept.
//!
//! ```text
//! offset  size  field
//! ------  ----  -----------------------------------------------------------
//! header (HEADER_LEN = 168 bytes)
//!      0     8  MAGIC  "DTZ50TB\x1a"
//!      8     2  VERSION (u16) = 16 (= OLDEST_VERSION: readers read no other)
//!     10     1  rule: 50, 75 or 0 (none)
//!     11     1  index scheme: INDEX_SCHEME (1 = crate::index as of VERSION 1)
//!     12     2  bytes per WDL block, at most (u16): WDL_BLOCK_LEN
//!     14     2  bytes per DTZ block, at most (u16): DTZ_BLOCK_LEN (512)
//!     16    16  material, ASCII ("KRPvKR"), NUL-padded
//!     32     8  N, positions per side to move in the order of White's
//!               WDL stream (u64; each stream's own N is in its head)
//!     40    56  statistics, White to move:
//!                 5 × u64 counts (loss, blessed loss, draw, cursed win, win),
//!                 4 × u16 longest (win, cursed win, loss, blessed loss),
//!                 u64 index reaching the longest (u64::MAX: none)
//!     96    56  statistics, Black to move (same layout)
//!    152    12  piece orders (3 × u32): of the WDL stream with White
//!               to move, with Black to move (a mirrored file repeats
//!               White's), and of the kept DTZ stream. Nibble j (from the
//!               least significant)
//!               is the solver's slot (0 White's king, 1 Black's king,
//!               2.. the free pieces, strongest first) of the piece at
//!               position j of the file's index, from the most significant
//!               (crate::index::Layout::with_order); in a pawnless table
//!               either 1 comes right after 0: the king pair, 9 bits of
//!               the index unless it leads (numbers 462..511 are "don't
//!               care"), or a king comes first: the board is turned to put
//!               that king in the triangle a1-d1-d4, its number there
//!               (0..10) leads the index, and the other king is the
//!               lowest 6-bit digit (placements that turn no further, or
//!               whose kings touch, are "don't care"), or (version 13)
//!               the first nibble has bit 3 set (crate::index::LEAD_FLAG):
//!               that piece, alone of its kind, is turned into the
//!               triangle and its number there leads, the next piece (the
//!               other king where a king leads; else a piece alone of its
//!               kind too: readers refuse an order whose next piece has an
//!               identical twin, which dtz50 wrote with wrong values until
//!               2026-11-29) is put on or below the
//!               a1-h8 diagonal when the leader stands on it, and every
//!               other piece is a 6-bit digit (placements that turn no
//!               further, or whose kings share a square or touch, are
//!               "don't care"); zero beyond its kings and free pieces.
//!               The statistics' index reaching the longest DTZ is in
//!               its side's WDL order.
//!    164     4  CRC-32C of bytes 0..164
//! three streams (WDL White, WDL Black, the kept DTZ; a symmetric table's
//! two: WDL White, DTZ White), one after the
//! other, each:
//!              zero padding to a multiple of the stream's block length
//!                 L: (offset of its head − offset of its blocks) / B, a
//!                 power of two from MIN_BLOCK_LEN (16) to the header's
//!                 most for its section
//!              blocks: B × L bytes; a block is Huffman codes of
//!              whole symbols, most significant bit first, zero padding,
//!              then the CRC-16 (IBM-SDLC) of the bytes before it
//!              head:
//!                 u64  N
//!                 u32  B, blocks
//!                 u64  bytes of counts (2 B)
//!                 u8   k: an index entry every 2^k positions
//!                 u16  T, then T × u16: the terminal codes, ascending
//!                 u16  S, symbols (at most 16,383; a WDL stream's
//!                      writer makes at most 4,095), numbered in canonical
//!                      code order: by code length, shortest first, those
//!                      without a code last
//!                 24 × u16: how many symbols have a code of each length
//!                      1..=24 (canonical Huffman codes), in order
//!                 the S symbols (version 16): 3 × u8, the orders of
//!                      three kinds of Exp-Golomb code, then for each
//!                      symbol x (0 for a terminal, a + 1 for the pair
//!                      of symbols a, b; no pair may contain itself) less
//!                      the x before it in its class (the symbols of one
//!                      code length, or those without a code; 0 before
//!                      a class's first), and y (its index among the
//!                      terminal codes, or b), less the y before it where
//!                      x is the x before it in its class; differences d
//!                      as 2d or -2d - 1;
//!                      most significant bit first, zero padding to a
//!                      byte (see the entries module)
//!                 C × u32: CRC-32C of each 1024-byte chunk of counts and
//!                      index together
//!                 u32  CRC-32C of the head before it
//!              counts: B × u16, positions per block (at most 65,535)
//!              index: ceil(N / 2^k) × (u32 block, u16 positions before
//!                 position j·2^k in that block)
//! trailer (TRAILER_LEN = 176 bytes, at file length - 176)
//!      0   128  per stream place, in order (32 bytes each): offset of its
//!               blocks (u64), B (u32), head length (u32), offset of its
//!               head (u64), end of its index (u64); all zero for the DTZ
//!               side not kept, and for Black's WDL in a symmetric table
//!    128     8  file length (u64)
//!    136     4  CRC-32C of bytes 0..136 of the trailer
//!    140     4  reserved, zero
//!    144    32  SHA-256 of every byte of the file before it
//! ```
//!
//! Codes: WDL + 2 (0 = loss .. 4 = win); DTZ: |DTZ| of a win, |DTZ| - 1
//! of a loss (version 14: the winner's moves, as a win's |DTZ|), |DTZ| - L
//! of a cursed win and |DTZ| - L - 1 of a blessed loss (L = 100 for rule
//! 50, 150 for rule 75), at most 30,000; the sign, the offset and the zero
//! of draws come from the WDL stream, so a DTZ probe reads WDL first.
//! "Don't care" positions take the value before them (the first cared-for
//! value at a segment's start; in DTZ, a run of them between two values
//! takes the smaller, the commoner distance), which keeps runs long:
//! illegal positions in both sections, indices whose identical pieces are
//! out of order in both (a reader reads
//! [`crate::index::Layout::sorted_identical`] of an index), draws in DTZ,
//! and in DTZ the wins that a zeroing move
//! wins as fast as a win of their kind can be (DTZ 1, or `L + 1` for a
//! cursed win): a reader looks for such a move before it reads the kept
//! DTZ of a win ([`crate::probe::won_by_zeroing`]). In WDL, a position
//! whose best capture reaches its value may hold any value up to it, as in
//! Syzygy's files: it takes the value before it if that is no higher, and
//! a reader takes the better of the stored value and the best capture
//! ([`crate::probe::position_wdl`]); the DTZ codes' sign and offset come
//! from that WDL, not the stored one.
//!
//! Checks: [`TableFile::new`] checks size, magic, version, length, the
//! header's and trailer's CRCs and where the streams lie (cheap); a
//! stream's head is checked (its CRC, every field) when the stream is first
//! used; each 1 KiB chunk of counts and index, and each block, when first
//! read while the file is open. A damaged byte therefore gives an error
//! naming the file and section, never a different value (a CRC catches
//! every change of up to 16 consecutive bits). [`TableFile::verify`]
//! checks the SHA-256 and decodes every block.
//!
//! The writer builds each stream's grammar from a fixed sample, encodes
//! segments of 2^20 positions in parallel and writes them in order, so the
//! bytes do not depend on the thread count.

use thiserror::Error;

use crate::index::OrderError;

mod cache;
mod codes;
mod decoded;
mod entries;
mod grammar;
mod header;
mod huffman;
mod reader;
mod recorded;
mod solved;
mod source;
mod stream;
mod writer;

pub use cache::BlockCache;
pub(crate) use codes::{nibble_wdl, set_nibble_wdl};
pub use decoded::DecodedBlocks;
pub use header::{Header, SideStats};
pub use reader::TableFile;
pub use solved::{OrderSearch, SolvedValues};
pub use source::{PositionalFile, Source};
pub use writer::{WriteStep, write_table};

/// First bytes of every table file.
pub const MAGIC: [u8; 8] = *b"DTZ50TB\x1a";
/// The format version this crate writes and reads (version 16 sorts the
/// symbols of each code length by their halves and codes a head's entries
/// as differences, about 1.8 bytes a symbol against 2.7 in version 15's
/// larger grammars; version 15 lets a
/// stream's grammar have up to 16,383 symbols, 4,095 before; version 14
/// lets a DTZ block hold up to [`DTZ_BLOCK_LEN`] bytes, 128 before,
/// codes a head's symbols in about 2.3 bytes each, 3 before, and stores
/// a loss's DTZ less one; version 13 lets any piece not in an identical
/// run lead a pawnless index; version 11 gave every stream of a section
/// blocks of one length; version 10 numbered every stream in one order
/// of digits; version 9 numbered a pawnless table's kings as one pair in
/// every order; version 8 stored a stream's grammar in five bytes a
/// symbol, see BENCHMARKS.md).
pub const VERSION: u16 = 16;
/// The oldest format version this crate reads (a file of an older one
/// is refused with [`FormatError::Version`], which says how to rebuild it).
pub const OLDEST_VERSION: u16 = 16;
/// The index scheme this crate writes and reads.
pub const INDEX_SCHEME: u8 = 1;
/// Bytes per WDL block, at most: one or two cache lines per probe.
pub const WDL_BLOCK_LEN: u16 = 64;
/// Bytes per DTZ block, at most: as Syzygy's DTZ blocks, longer than WDL's
/// because a DTZ probe is rarer (an engine's root, not its search) and its
/// decoded blocks may be cached; the dense DTZ streams take 2-3 % fewer
/// bytes than in blocks of 128 (see BENCHMARKS.md).
pub const DTZ_BLOCK_LEN: u16 = 512;
/// Bytes per block, at least: a stream's blocks are the power of two from
/// this to its section's most that makes it smallest.
pub const MIN_BLOCK_LEN: u16 = 16;
/// Positions per side read together by bulk readers (the solver reading a
/// sub-table through, the deep check), at least: see
/// [`TableFile::chunk_positions`].
pub const CHUNK_POSITIONS: u64 = 1 << 16;
/// Positions per side in a chunk, at most: the writer leaves out orders
/// of the pieces whose identical pieces span more indices than this
/// ([`crate::index::Layout::identical_span`]; a six-piece order with a
/// pair above a king would make every chunk 2^33 positions).
pub const MAX_CHUNK_POSITIONS: u64 = 1 << 27;
/// File name extension of table files.
pub const EXTENSION: &str = "dtz50";
/// Header length in bytes.
pub const HEADER_LEN: usize = 168;
/// Trailer length in bytes.
pub const TRAILER_LEN: usize = 176;

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

/// "version 15", or "versions 12 to 15": the versions this crate reads.
fn versions(oldest: u16, newest: u16) -> String {
    if oldest == newest {
        format!("version {newest}")
    } else {
        format!("versions {oldest} to {newest}")
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
        "format version {got}, this dtz50 reads {}; `dtz50 generate` into its directory rebuilds it",
        versions(*oldest, *expected)
    )]
    Version {
        /// The oldest version this crate reads.
        oldest: u16,
        /// The newest version this crate reads (the one it writes).
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
    /// Written in an order of the pieces that dtz50 wrote with wrong
    /// values until 2026-11-29 (the reason says how to rebuild it).
    #[error(transparent)]
    Miswritten(OrderError),
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
    /// A block fails its checksum or does not decode.
    #[error("{section} block {block} ({turn} to move) is corrupt")]
    Block {
        /// The section.
        section: Section,
        /// The side to move of the stream ("white" or "black").
        turn: &'static str,
        /// The block number in its stream.
        block: usize,
    },
}

impl FormatError {
    /// Whether another dtz50 wrote the file (another format version, or
    /// an order it wrote wrong values in): sound as written, but this
    /// dtz50 does not read it, and rebuilding it gives one it does.
    pub fn is_from_another_version(&self) -> bool {
        matches!(
            self,
            FormatError::Version { .. } | FormatError::Miswritten(_)
        )
    }
}

impl From<OrderError> for FormatError {
    /// A header's order of the pieces that [`Layout::with_order`] refuses.
    ///
    /// [`Layout::with_order`]: crate::index::Layout::with_order
    fn from(error: OrderError) -> FormatError {
        match error {
            OrderError::Invalid(reason) => FormatError::Header(reason),
            miswritten @ OrderError::Miswritten { .. } => FormatError::Miswritten(miswritten),
        }
    }
}

/// One of the four streams of a file: a section for one side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamId {
    /// WDL or DTZ.
    pub section: Section,
    /// The side to move.
    pub turn: shakmaty::Color,
}

impl StreamId {
    /// The streams in file order.
    pub const ALL: [StreamId; 4] = [
        StreamId::new(Section::Wdl, shakmaty::Color::White),
        StreamId::new(Section::Wdl, shakmaty::Color::Black),
        StreamId::new(Section::Dtz, shakmaty::Color::White),
        StreamId::new(Section::Dtz, shakmaty::Color::Black),
    ];

    const fn new(section: Section, turn: shakmaty::Color) -> StreamId {
        StreamId { section, turn }
    }

    /// Position in [`StreamId::ALL`].
    pub fn slot(self) -> usize {
        2 * usize::from(self.section == Section::Dtz)
            + usize::from(self.turn == shakmaty::Color::Black)
    }

    /// Bytes per block, at most ([`WDL_BLOCK_LEN`], [`DTZ_BLOCK_LEN`]).
    pub fn max_block_len(self) -> usize {
        usize::from(match self.section {
            Section::Dtz => DTZ_BLOCK_LEN,
            _ => WDL_BLOCK_LEN,
        })
    }

    /// "white" or "black".
    pub fn turn_name(self) -> &'static str {
        match self.turn {
            shakmaty::Color::White => "white",
            shakmaty::Color::Black => "black",
        }
    }
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

/// Pseudo-random numbers for the format's tests: xorshift64 from `seed`
/// (not `seed` itself).
#[cfg(test)]
fn xorshift(seed: u64) -> impl Iterator<Item = u64> {
    std::iter::successors(Some(seed), |&state| {
        let mut state = state;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        Some(state)
    })
    .skip(1)
}
