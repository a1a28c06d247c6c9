//! The reader: a [`TableFile`] over any [`Source`] of bytes: memory (a
//! `Vec` in tests, a memory map for engines) or positional reads of an
//! open file ([`PositionalFile`](super::PositionalFile), for processes
//! that live long: a file that changes under them gives errors, never a
//! SIGBUS), optionally through a
//! shared, bounded [`BlockCache`] of file pages. [`TableFile::new`] checks
//! size, magic, version, length, the header's and trailer's checksums and
//! where the streams lie (cheap); each stream's head is read and checked on
//! first use, and the first read of each block checks its CRC (see the
//! format module's doc); [`TableFile::verify`] checks the file's SHA-256 and
//! decodes every block.

use std::{borrow::Cow, io, ops::Range, sync::Arc, sync::OnceLock};

use sha2::{Digest, Sha256};
use shakmaty::{Board, ByColor, Color};

use super::{
    CHUNK_POSITIONS, FormatError, HEADER_LEN, MAGIC, MIN_BLOCK_LEN, OLDEST_VERSION, Section,
    StreamId, TRAILER_LEN, VERSION,
    cache::BlockCache,
    codes::{MAX_DTZ_CODE, pack_nibbles, wdl_code},
    decoded::DecodedBlocks,
    header::{Header, parse_header},
    hex,
    source::Source,
    stream::{CRC32, StreamPlace, StreamReader},
    u16_at, u32_at, u64_at,
};
use crate::{
    index::{Layout, Reorder, TableIndex},
    value::{Dtz, Wdl},
};

/// A source read directly, or through a shared page cache.
#[derive(Debug)]
struct Paged<S> {
    inner: S,
    cache: Option<(Arc<BlockCache>, u64)>,
}

impl<S: Source> Source for Paged<S> {
    fn size(&self) -> u64 {
        self.inner.size()
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        match &self.cache {
            None => self.inner.read_at(offset, len),
            Some((cache, file)) => cache.read(*file, &self.inner, offset, len).map(Cow::Owned),
        }
    }
}

/// One stream: where it lies, and its head once read.
#[derive(Debug)]
struct Stream {
    id: StreamId,
    place: StreamPlace,
    reader: OnceLock<StreamReader>,
}

/// A table file read from a [`Source`] (a memory map, a byte vector, a
/// [`PositionalFile`](super::PositionalFile)).
#[derive(Debug)]
pub struct TableFile<S> {
    source: Paged<S>,
    header: Header,
    /// The index of each side's WDL stream, which numbers that side's
    /// positions for every reader (a mirrored file's Black entry is
    /// White's).
    layouts: ByColor<Layout>,
    /// The index of the kept DTZ stream.
    dtz_layout: Layout,
    /// From the DTZ side's WDL index to the DTZ stream's, where their
    /// orders differ.
    to_dtz: Option<Reorder>,
    /// In [`StreamId::ALL`] order; one DTZ stream is absent, and in a
    /// mirrored file Black's WDL stream too.
    streams: [Option<Stream>; 4],
    /// The side to move whose DTZ is stored.
    dtz_side: Color,
    /// Whether the file keeps White to move only, Black to move being
    /// read on the mirrored board ([`Layout::mirrored_index`]): tables of
    /// symmetric material from format 8 on.
    mirrored: bool,
    /// Where the DTZ blocks this file decodes are held, and the file's
    /// identity there ([`TableFile::holding_decoded_dtz`]).
    decoded: Option<(Arc<DecodedBlocks>, u64)>,
}

impl<S: Source> TableFile<S> {
    /// Check the header, trailer and stream places and wrap the source.
    ///
    /// # Errors
    /// A [`FormatError`] saying what is wrong.
    pub fn new(source: S) -> Result<TableFile<S>, FormatError> {
        TableFile::open(source, None)
    }

    /// As [`TableFile::new`], reading the file's pages through `cache`
    /// (for positional sources: fewer reads, memory bounded by the cache).
    ///
    /// # Errors
    /// A [`FormatError`] saying what is wrong.
    pub fn with_cache(source: S, cache: Arc<BlockCache>) -> Result<TableFile<S>, FormatError> {
        TableFile::open(source, Some(cache))
    }

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
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(FormatError::Version {
                oldest: OLDEST_VERSION,
                expected: VERSION,
                got: version,
            });
        }
        let trailer_at = size - TRAILER_LEN as u64;
        let trailer = read(trailer_at, TRAILER_LEN)?;
        // A length that differs says truncated or extended (the trailer
        // read is then other bytes, so its checksum fails too).
        let recorded = u64_at(&trailer, 128);
        if recorded != size {
            return Err(FormatError::Length {
                expected: recorded,
                got: size,
            });
        }
        if CRC32.checksum(&trailer[..136]) != u32_at(&trailer, 136) {
            return Err(FormatError::Layout {
                section: Section::Header,
                reason: "trailer checksum mismatch".into(),
            });
        }
        let header = parse_header(&head)?;
        let layout_of =
            |order: &[u8]| Layout::with_order(header.material, order).map_err(FormatError::from);
        let layouts = ByColor {
            white: layout_of(&header.wdl_orders.white)?,
            black: layout_of(&header.wdl_orders.black)?,
        };
        let dtz_layout = layout_of(&header.dtz_order)?;
        if layouts.white.size() != header.positions {
            return Err(FormatError::Header(format!(
                "{} positions per side, {} has {}",
                header.positions,
                header.material,
                layouts.white.size()
            )));
        }
        let mut previous_end = HEADER_LEN as u64;
        let mut places = Vec::with_capacity(4);
        // A table of symmetric material may keep White to move only.
        let absent = |id: StreamId| trailer[32 * id.slot()..32 * id.slot() + 32] == [0; 32];
        let mirrored = header.material.is_symmetric()
            && absent(StreamId {
                section: Section::Wdl,
                turn: Color::Black,
            });
        for id in StreamId::ALL {
            let at = 32 * id.slot();
            if (id.section == Section::Dtz || mirrored) && absent(id) {
                places.push(None);
                continue;
            }
            let blocks_offset = u64_at(&trailer, at);
            let block_count = u32_at(&trailer, at + 8);
            let head_offset = u64_at(&trailer, at + 16);
            // The blocks fill the space before the head.
            let block_len = head_offset
                .checked_sub(blocks_offset)
                .and_then(|len| len.checked_div(u64::from(block_count)))
                .filter(|&len| {
                    len.is_power_of_two()
                        && (u64::from(MIN_BLOCK_LEN)..=id.max_block_len() as u64).contains(&len)
                })
                .unwrap_or(0) as usize;
            let place = StreamPlace {
                blocks_offset,
                block_count,
                block_len,
                head_len: u32_at(&trailer, at + 12),
                head_offset,
                end: u64_at(&trailer, at + 24),
            };
            let blocks_end = u64::from(place.block_count)
                .checked_mul(place.block_len as u64)
                .and_then(|len| place.blocks_offset.checked_add(len));
            let fits = place.block_len > 0
                && blocks_end.is_some_and(|end| end == place.head_offset)
                && place.blocks_offset >= previous_end
                && place.block_count > 0
                && place
                    .head_offset
                    .checked_add(u64::from(place.head_len))
                    .is_some_and(|h| h <= place.end)
                && place.end <= trailer_at;
            if !fits {
                return Err(FormatError::Layout {
                    section: id.section,
                    reason: format!("{} to move: stream out of bounds", id.turn_name()),
                });
            }
            previous_end = place.end;
            places.push(Some(Stream {
                id,
                place,
                reader: OnceLock::new(),
            }));
        }
        let dtz_side = match (&places[2], &places[3]) {
            (Some(_), None) => Color::White,
            (None, Some(_)) if !mirrored => Color::Black,
            _ => {
                return Err(FormatError::Layout {
                    section: Section::Dtz,
                    reason: "not exactly one side's DTZ stream".into(),
                });
            }
        };
        let streams: [Option<Stream>; 4] = places.try_into().expect("four streams");
        let layouts = if mirrored {
            ByColor::new_with(|_| layouts.white.clone())
        } else {
            layouts
        };
        let to_dtz = layouts.get(dtz_side).reorder_if_other(&dtz_layout);
        let cache = cache.map(|c| {
            let file = c.register();
            (c, file)
        });
        Ok(TableFile {
            source: Paged {
                inner: source,
                cache,
            },
            header,
            layouts,
            dtz_layout,
            to_dtz,
            streams,
            dtz_side,
            mirrored,
            decoded: None,
        })
    }

    /// This file, holding the DTZ blocks it decodes in `cache` (shared
    /// with other files): a DTZ read of a held block finds its symbol
    /// without decoding (see the decoded module). WDL reads are unchanged.
    pub fn holding_decoded_dtz(mut self, cache: Arc<DecodedBlocks>) -> TableFile<S> {
        let file = cache.register();
        self.decoded = Some((cache, file));
        self
    }

    /// The header facts.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The index that numbers the positions with `turn` to move for
    /// every reader: that side's WDL stream's (each stream has its own
    /// order of digits; a DTZ read maps the index to its stream's).
    pub fn layout(&self, turn: Color) -> &Layout {
        self.layouts.get(turn)
    }

    /// Where a position stands in this file: the side to move and index
    /// in the table's colours (flipping the board if the colours are
    /// swapped), numbered by [`TableFile::layout`] of that side; `None` if
    /// the material is not this table's.
    pub fn locate(&self, board: &Board, turn: Color) -> Option<(Color, TableIndex)> {
        // A placement's slots follow its layout's order of digits, so each
        // side's is found in that side's layout.
        let own = self.layouts.get(turn);
        if let Some(placement) = own.placement(board) {
            return Some((turn, own.encode(&placement)?));
        }
        let other = self.layouts.get(turn.other());
        let placement = other.placement(&board.clone().into_mirrored())?;
        Some((turn.other(), other.encode(&placement)?))
    }

    /// The layout a stream is numbered by.
    fn stream_layout(&self, section: Section, turn: Color) -> &Layout {
        match section {
            Section::Dtz => &self.dtz_layout,
            _ => self.layouts.get(turn),
        }
    }

    /// Total bytes.
    pub fn len(&self) -> u64 {
        self.source.size()
    }

    /// Whether the file is empty (never, for a valid file).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The side to move whose DTZ the file stores; the other side's DTZ
    /// is found by a one-ply search over this side's (see
    /// [`crate::probe`]), except in a mirrored file
    /// ([`TableFile::is_mirrored`]), which reads it on the mirrored board.
    pub fn dtz_side(&self) -> Color {
        self.dtz_side
    }

    /// Whether the file keeps White to move only (a table of symmetric
    /// material): Black to move is read as White to move on the board
    /// mirrored with the colours swapped, DTZ included.
    pub fn is_mirrored(&self) -> bool {
        self.mirrored
    }

    /// Where the value of `index` with `turn` to move is kept: itself, or
    /// in a mirrored file with Black to move its mirrored index with White
    /// to move (an index without one, which no probe asks for, reads its
    /// own index with White to move).
    fn kept_place(&self, turn: Color, index: u64) -> (Color, u64) {
        if self.mirrored && turn == Color::Black {
            let mirrored = self
                .layouts
                .white
                .mirrored_index(index)
                .map_or(index, |i| i.0);
            (Color::White, mirrored)
        } else {
            (turn, index)
        }
    }

    /// The reader of one stream, its head read and checked on first use.
    /// Never called for an absent stream (the DTZ side not kept, Black's
    /// WDL in a mirrored file: see [`TableFile::kept_place`]).
    fn stream(&self, section: Section, turn: Color) -> Result<&StreamReader, FormatError> {
        let id = StreamId { section, turn };
        let stream = self.streams[id.slot()]
            .as_ref()
            .expect("the stream is present");
        if let Some(reader) = stream.reader.get() {
            return Ok(reader);
        }
        let max = match section {
            Section::Wdl => wdl_code(Wdl::Win),
            _ => MAX_DTZ_CODE,
        };
        let reader = StreamReader::open(
            &self.source,
            stream.id,
            stream.place,
            self.stream_layout(section, turn).size(),
            max,
        )?;
        Ok(stream.reader.get_or_init(|| reader))
    }

    /// The WDL kept at `index` with `turn` to move: the position's WDL,
    /// or where one of its captures reaches that value, anything up to it
    /// (a reader takes the better of this and the best capture: see
    /// [`crate::probe::position_wdl`]).
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn kept_wdl(&self, turn: Color, index: TableIndex) -> Result<Wdl, FormatError> {
        let (turn, index) = self.kept_place(turn, index.0);
        let code = self
            .stream(Section::Wdl, turn)?
            .code_at(&self.source, self.stream_index(Section::Wdl, turn, index))?;
        Ok(Wdl::ALL[usize::from(code)])
    }

    /// The DTZ stored at `index` with `turn` to move, given the position's
    /// WDL `wdl` (not what [`TableFile::kept_wdl`] keeps, which may be
    /// less: the codes' sign and offset come from the WDL): `None` where
    /// the file keeps none, a win or loss with the other side than
    /// [`TableFile::dtz_side`] to move (draws are 0 for both sides). A win
    /// that a zeroing move wins as fast as a win of its kind can be holds
    /// any DTZ of its kind: readers look for that move first
    /// ([`crate::probe::won_by_zeroing`]).
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn dtz_given(
        &self,
        turn: Color,
        index: TableIndex,
        wdl: Wdl,
    ) -> Result<Option<Dtz>, FormatError> {
        let (turn, index) = self.kept_place(turn, index.0);
        self.dtz_read(turn, wdl, || self.stream_index(Section::Dtz, turn, index))
    }

    /// [`TableFile::dtz_given`] of `board` with `turn` to move, located in
    /// the kept DTZ stream's own order of digits: where it differs from the
    /// WDL stream's, this saves the way through the WDL index and back
    /// (decoding it, re-encoding in the other order): a one-ply DTZ search
    /// reads the kept DTZ after each quiet move this way. `None` if the
    /// material is not this table's.
    ///
    /// # Errors
    /// As [`TableFile::dtz_given`].
    pub fn dtz_of_board(
        &self,
        board: &Board,
        turn: Color,
        wdl: Wdl,
    ) -> Option<Result<Option<Dtz>, FormatError>> {
        if self.mirrored || self.to_dtz.is_none() {
            let (turn, index) = self.locate(board, turn)?;
            return Some(self.dtz_given(turn, index, wdl));
        }
        // As in `locate`: the board in its own colours first, then with
        // them swapped.
        let layout = &self.dtz_layout;
        let (turn, placement) = match layout.placement(board) {
            Some(placement) => (turn, placement),
            None => (
                turn.other(),
                layout.placement(&board.clone().into_mirrored())?,
            ),
        };
        let index = layout.encode(&placement)?;
        Some(self.dtz_read(turn, wdl, || layout.sorted_identical(index.0)))
    }

    /// The DTZ kept with `turn` to move (a kept place) for a position whose
    /// WDL is `wdl`, at the DTZ stream's position `at` (asked only where a
    /// code is read).
    fn dtz_read(
        &self,
        turn: Color,
        wdl: Wdl,
        at: impl FnOnce() -> u64,
    ) -> Result<Option<Dtz>, FormatError> {
        let code = match wdl {
            Wdl::Draw => 0,
            _ if turn != self.dtz_side => return Ok(None),
            _ => {
                let stream = self.stream(Section::Dtz, turn)?;
                let at = at();
                match &self.decoded {
                    None => stream.code_at(&self.source, at)?,
                    Some((cache, file)) => stream.code_at_held(&self.source, at, cache, *file)?,
                }
            }
        };
        Ok(Some(self.signed_dtz(wdl, code)))
    }

    /// Where a stream of `section` keeps the position at `index` of
    /// [`TableFile::layout`] with `turn` to move (a kept place: see
    /// [`TableFile::kept_place`]): in DTZ, the index mapped to the DTZ
    /// stream's order; in both, identical pieces sorted. An index that
    /// names no placement has no place in another order (a leading king
    /// pair's field has no numbers past 461): it reads the DTZ stream's
    /// first code, which means nothing, as its own would not.
    fn stream_index(&self, section: Section, turn: Color, index: u64) -> u64 {
        match section {
            Section::Dtz => {
                let index = match &self.to_dtz {
                    None => index,
                    Some(to) if self.layouts.get(turn).names_placement(index) => to.apply(index),
                    Some(_) => 0,
                };
                self.dtz_layout.sorted_identical(index)
            }
            _ => self.layouts.get(turn).sorted_identical(index),
        }
    }

    /// Positions per chunk: [`CHUNK_POSITIONS`], or more where identical
    /// pieces need it so that a chunk holds every order of their squares
    /// ([`Layout::identical_span`]).
    pub fn chunk_positions(&self) -> u64 {
        let span = |l: &Layout| l.identical_span();
        CHUNK_POSITIONS
            .max(span(&self.layouts.white))
            .max(span(&self.layouts.black))
    }

    /// Chunks of [`TableFile::chunk_positions`] positions, White to move
    /// first (each side numbered by [`TableFile::layout`]), that bulk
    /// readers go through (see [`TableFile::chunk_wdl`]).
    pub fn chunk_count(&self) -> usize {
        self.chunks_of(Color::White) + self.chunks_of(Color::Black)
    }

    fn chunks_of(&self, turn: Color) -> usize {
        self.layouts
            .get(turn)
            .size()
            .div_ceil(self.chunk_positions()) as usize
    }

    /// The side to move and index range of a chunk.
    pub fn chunk_range(&self, chunk: usize) -> (Color, Range<u64>) {
        let white = self.chunks_of(Color::White);
        let (turn, c) = if chunk < white {
            (Color::White, chunk)
        } else {
            (Color::Black, chunk - white)
        };
        let len = self.chunk_positions();
        let start = c as u64 * len;
        (
            turn,
            start..(start + len).min(self.layouts.get(turn).size()),
        )
    }

    /// The chunk holding `index` with `turn` to move, and the position in it.
    pub fn chunk_of(&self, turn: Color, index: TableIndex) -> (usize, usize) {
        let len = self.chunk_positions();
        let c = (index.0 / len) as usize;
        let offset = (index.0 % len) as usize;
        match turn {
            Color::White => (c, offset),
            Color::Black => (self.chunks_of(Color::White) + c, offset),
        }
    }

    /// The codes of one stream over a chunk's range, each index with
    /// identical pieces out of order holding its sorted index's code (the
    /// file keeps only those: see [`Layout::sorted_identical`]).
    fn chunk_codes(&self, section: Section, chunk: usize) -> Result<Vec<u16>, FormatError> {
        let (turn, range) = self.chunk_range(chunk);
        let reordered = section == Section::Dtz && self.to_dtz.is_some();
        if reordered || self.mirrored && turn == Color::Black {
            // Each position's place in the stream: its mirrored one, or its
            // place in the DTZ stream's order; the stream reads them sorted.
            let stream = self.stream(section, self.kept_place(turn, range.start).0)?;
            let places: Vec<u64> = range
                .map(|index| {
                    let (kept_turn, kept) = self.kept_place(turn, index);
                    self.stream_index(section, kept_turn, kept)
                })
                .collect();
            return stream.codes_at(&self.source, &places);
        }
        let mut codes = self.stream(section, turn)?.codes(
            &self.source,
            range.start,
            (range.end - range.start) as usize,
        )?;
        let layout = self.stream_layout(section, turn);
        if layout.has_identical_pieces() {
            // A sorted index is never above its own: one pass forward.
            for index in range.clone() {
                let sorted = layout.sorted_identical(index);
                if sorted != index {
                    codes[(index - range.start) as usize] = codes[(sorted - range.start) as usize];
                }
            }
        }
        Ok(codes)
    }

    /// Every position of one chunk as its kept WDL (as
    /// [`TableFile::kept_wdl`]), decoded in one pass and not kept: for
    /// readers that go through a whole table.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn chunk_wdl(&self, chunk: usize) -> Result<Vec<Wdl>, FormatError> {
        let codes = self.chunk_codes(Section::Wdl, chunk)?;
        Ok(codes
            .into_iter()
            .map(|w| Wdl::ALL[usize::from(w)])
            .collect())
    }

    /// Every position of one chunk as its DTZ (`None` as in
    /// [`TableFile::dtz_given`]), given the positions' WDL in order.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn chunk_dtz(&self, chunk: usize, wdl: &[Wdl]) -> Result<Vec<Option<Dtz>>, FormatError> {
        let (turn, _) = self.chunk_range(chunk);
        let codes = if turn == self.dtz_side || self.mirrored {
            Some(self.chunk_codes(Section::Dtz, chunk)?)
        } else {
            None
        };
        Ok(wdl
            .iter()
            .enumerate()
            .map(|(k, &wdl)| match (&codes, wdl) {
                (_, Wdl::Draw) => Some(Dtz(0)),
                (Some(codes), _) => Some(self.signed_dtz(wdl, codes[k])),
                (None, _) => None,
            })
            .collect())
    }

    /// One chunk's WDL, two codes per byte, the first in the low nibble
    /// (read with `nibble_wdl`): for readers that hold a table's WDL for
    /// a while.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn wdl_chunk(&self, chunk: usize) -> Result<Vec<u8>, FormatError> {
        Ok(pack_nibbles(&self.chunk_codes(Section::Wdl, chunk)?))
    }

    /// The order the kept side's DTZ stream numbers its positions in
    /// ([`TableFile::dtz_side`]; White's in a mirrored file), which may
    /// differ from [`TableFile::layout`]'s.
    pub fn dtz_layout(&self) -> &Layout {
        &self.dtz_layout
    }

    /// The codes of the kept side's DTZ stream at `len` places from
    /// `start`, in the stream's own order ([`TableFile::dtz_layout`]), to
    /// read with [`TableFile::signed_dtz`]: for readers that go through a
    /// whole table, where reading in another order would decode each block
    /// many times. A place that is no sorted index of a placement holds a
    /// code that means nothing.
    ///
    /// # Errors
    /// A corrupt or unreadable block.
    pub fn dtz_codes(&self, start: u64, len: usize) -> Result<Vec<u16>, FormatError> {
        self.stream(Section::Dtz, self.dtz_side)?
            .codes(&self.source, start, len)
    }

    /// The DTZ a stored code means for a position of WDL `wdl`.
    pub fn signed_dtz(&self, wdl: Wdl, code: u16) -> Dtz {
        let code = code as i16;
        let limit = self.header.rule.limit().unwrap_or(0);
        Dtz(match wdl {
            Wdl::Draw => 0,
            Wdl::Win => code,
            Wdl::CursedWin => code + limit,
            Wdl::Loss => -code - 1,
            Wdl::BlessedLoss => -code - 1 - limit,
        })
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
                .inner
                .read_at(at, n as usize)
                .map_err(|source| FormatError::Read { offset: at, source })?;
            hasher.update(&bytes);
            at += n;
        }
        Ok(hasher.finalize().into())
    }

    /// Check everything: every stream's head, counts, index and blocks
    /// (an error names the section), then the file checksum.
    ///
    /// # Errors
    /// The first problem found.
    pub fn verify(&self) -> Result<(), FormatError> {
        for stream in self.streams.iter().flatten() {
            self.stream(stream.id.section, stream.id.turn)?
                .verify(&self.source)?;
        }
        self.verify_checksum()
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
            .inner
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
