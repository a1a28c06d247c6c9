//! The writer: a solved table streamed to any `io::Write` in the format
//! of the module doc, one stream at a time (each encoded in parallel, see
//! the stream module), so the bytes do not depend on the thread count. It
//! reads the values through [`SolvedValues`], so it knows nothing of the
//! solver.

use std::io::{self, Write};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use shakmaty::{ByColor, Color};

use super::{
    Section, StreamId,
    codes::{dtz_code, wdl_code},
    header::{SideStats, header_bytes},
    stream::{CRC32, EncodedStream, encode_stream},
};
use crate::{
    index::Layout,
    value::{Dtz, Rule, Wdl},
};

/// Positions per side up to which the four streams are encoded at once.
const PARALLEL_STREAMS_UP_TO: u64 = 1 << 22;

/// What the writer needs of a solved table.
pub trait SolvedValues: Sync {
    /// The table's index scheme.
    fn layout(&self) -> &Layout;

    /// The rule the table was solved for.
    fn rule(&self) -> Rule;

    /// Each position's final DTZ with `turn` to move, in index order from
    /// `start`; `None` where there is no position (illegal placements).
    fn values_from(&self, turn: Color, start: u64) -> Box<dyn Iterator<Item = Option<Dtz>> + '_>;

    /// Whether the position at `index`, a win, has a zeroing move that
    /// wins as fast as a win of its kind can be
    /// ([`Dtz::fastest`]): readers find that move first
    /// ([`crate::probe::won_by_zeroing`]), so the file may store any DTZ
    /// there. Answering `false` is always sound, and is what a table
    /// without its sub-tables at hand answers.
    fn zeroing_decides(&self, turn: Color, index: u64) -> bool {
        let _ = (turn, index);
        false
    }

    /// Whether the best capture of the position at `index` gives the side
    /// to move the position's WDL: readers find it by a capture search
    /// ([`crate::probe::position_wdl`]), so the file may store any WDL up
    /// to it. Answering `false` is always sound.
    fn capture_reaches(&self, turn: Color, index: u64) -> bool {
        let _ = (turn, index);
        false
    }
}

/// What a position's stored code may be.
#[derive(Clone, Copy)]
enum Wanted {
    /// This code.
    Exactly(u16),
    /// This code or any below it (a WDL that a capture reaches).
    AtMost(u16),
    /// Any code ("don't care").
    Any,
}

/// Write `table` (with its `stats`) to `out` in the format above.
///
/// # Errors
/// Whatever `out` reports.
pub fn write_table<T: SolvedValues + ?Sized, W: Write>(
    table: &T,
    stats: &ByColor<SideStats>,
    out: W,
) -> io::Result<W> {
    let layout = table.layout();
    let n = layout.size();
    let mut out = HashingWriter::new(out);
    out.write_all(&header_bytes(layout.material(), table.rule(), n, stats))?;
    // Small tables' four streams are encoded at once (their grammars are
    // built one thread each); a large table's one after the other, each in
    // parallel inside, so that one stream's working memory is held at a
    // time. Either way they are written in order.
    let encode = |id: StreamId| {
        encode_stream(n, id.block_len(), &|start, len| {
            stream_codes(table, id, start, len)
        })
    };
    let mut streams: Vec<Option<EncodedStream>> = if n <= PARALLEL_STREAMS_UP_TO {
        StreamId::ALL
            .par_iter()
            .map(|&id| Some(encode(id)))
            .collect()
    } else {
        StreamId::ALL.iter().map(|&id| Some(encode(id))).collect()
    };
    // DTZ is kept for one side to move, the one whose stream is smaller
    // (White on a tie); readers find the other side's by a one-ply search.
    let dtz_len = |slot: usize| streams[slot].as_ref().map_or(0, EncodedStream::file_bytes);
    let dropped = if dtz_len(3) < dtz_len(2) { 2 } else { 3 };
    streams[dropped] = None;
    let mut trailer = Vec::with_capacity(super::TRAILER_LEN);
    for (id, stream) in StreamId::ALL.into_iter().zip(streams) {
        let Some(stream) = stream else {
            // An absent stream's place is all zeros.
            trailer.extend_from_slice(&[0; 32]);
            continue;
        };
        let block_len = id.block_len() as u64;
        let padding = (block_len - out.written % block_len) % block_len;
        out.write_all(&vec![0; padding as usize])?;
        let blocks_offset = out.written;
        out.write_all(&stream.blocks)?;
        let head_offset = out.written;
        out.write_all(&stream.head)?;
        out.write_all(&stream.tables)?;
        trailer.extend_from_slice(&blocks_offset.to_le_bytes());
        trailer.extend_from_slice(&stream.block_count.to_le_bytes());
        trailer.extend_from_slice(&(stream.head.len() as u32).to_le_bytes());
        trailer.extend_from_slice(&head_offset.to_le_bytes());
        trailer.extend_from_slice(&out.written.to_le_bytes());
    }
    let length = out.written + super::TRAILER_LEN as u64;
    trailer.extend_from_slice(&length.to_le_bytes());
    let crc = CRC32.checksum(&trailer);
    trailer.extend_from_slice(&crc.to_le_bytes());
    trailer.extend_from_slice(&0u32.to_le_bytes());
    out.write_all(&trailer)?;
    let digest = out.hasher.clone().finalize();
    out.write_all(&digest)?;
    out.inner.flush()?;
    Ok(out.inner)
}

/// The codes of `len` positions of one stream from `start`, with "don't
/// care" positions taking the value before them (see the module doc):
/// illegal positions, identical pieces out of order, draws in DTZ, and wins in DTZ that a zeroing move
/// decides ([`SolvedValues::zeroing_decides`]); a WDL that a capture
/// reaches ([`SolvedValues::capture_reaches`]) takes the value before it if
/// that is no higher, else its own.
fn stream_codes<T: SolvedValues + ?Sized>(
    table: &T,
    id: StreamId,
    start: u64,
    len: usize,
) -> Vec<u16> {
    let rule = table.rule();
    let layout = table.layout();
    let wanted: Vec<Wanted> = table
        .values_from(id.turn, start)
        .take(len)
        .zip(start..)
        .map(|(value, index)| match (id.section, value) {
            // Readers read the sorted order of identical pieces only.
            _ if layout.sorted_identical(index) != index => Wanted::Any,
            (Section::Wdl, Some(dtz)) => {
                let wdl = Wdl::from_dtz(dtz, rule);
                if table.capture_reaches(id.turn, index) {
                    Wanted::AtMost(wdl_code(wdl))
                } else {
                    Wanted::Exactly(wdl_code(wdl))
                }
            }
            (Section::Dtz, Some(dtz))
                if dtz.0 != 0 && !(dtz.0 > 0 && table.zeroing_decides(id.turn, index)) =>
            {
                Wanted::Exactly(dtz_code(dtz, rule))
            }
            _ => Wanted::Any,
        })
        .collect();
    let mut previous = wanted
        .iter()
        .find_map(|w| match *w {
            Wanted::Exactly(code) => Some(code),
            _ => None,
        })
        .unwrap_or(match id.section {
            Section::Wdl => wdl_code(Wdl::Draw),
            _ => 1,
        });
    wanted
        .into_iter()
        .map(|wanted| {
            previous = match wanted {
                Wanted::Exactly(code) => code,
                Wanted::AtMost(code) => previous.min(code),
                Wanted::Any => previous,
            };
            previous
        })
        .collect()
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
