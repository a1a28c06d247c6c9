//! The writer: a solved table streamed to any `io::Write` in the format
//! of the module doc, in the order of digits that compresses it best (see
//! the solved module), one stream at a time (each encoded in parallel, see
//! the stream module), so the bytes do not depend on the thread count. It
//! reads the values through [`SolvedValues`], so it knows nothing of the
//! solver.

use std::io::{self, Write};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use shakmaty::{ByColor, Color};

use super::{
    Section, StreamId,
    grammar::Grammar,
    header::{SideStats, header_bytes},
    solved::{OrderSearch, SolvedValues, plan_file},
    stream::{CRC32, EncodedStream, encode_stream},
};
use crate::index::TableIndex;

/// Positions per side up to which a file's three streams are encoded at
/// once.
const PARALLEL_STREAMS_UP_TO: u64 = 1 << 22;

/// What the writer is doing, for progress displays (a six-piece table
/// takes minutes at each step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// Choosing each stream's order of the pieces' digits from samples.
    ChoosingOrders,
    /// Building each stream's grammar from its sample.
    BuildingGrammars,
    /// Encoding a small table's streams, all at once.
    EncodingAtOnce {
        /// Streams in the file (three, or two for symmetric material).
        streams: usize,
    },
    /// Encoding and writing a large table's streams one at a time, `done`
    /// of `streams` written so far.
    Encoding {
        /// Streams written.
        done: usize,
        /// Streams in the file.
        streams: usize,
    },
}

/// Write `table` (with its `stats`) to `out` in the format above, its
/// streams' orders searched as `search` says, telling `on_step` as each
/// step starts.
///
/// # Errors
/// Whatever `out` reports.
pub fn write_table<T: SolvedValues + ?Sized, W: Write>(
    table: &T,
    stats: &ByColor<SideStats>,
    search: OrderSearch,
    out: W,
    on_step: &(dyn Fn(WriteStep) + Sync),
) -> io::Result<W> {
    on_step(WriteStep::ChoosingOrders);
    let mut plan = plan_file(table, search);
    let dtz_side = plan.dtz_side;
    let wdl_layouts = plan.wdl.as_ref().map(|stream| stream.file.layout());
    // The statistics name a position by its index in its side's WDL
    // order.
    let stats = ByColor::new_with(|turn| {
        let side = *stats.get(turn);
        let to_file = table.layout().reorder_to(wdl_layouts.get(turn));
        SideStats {
            longest_at: side.longest_at.map(|i| TableIndex(to_file.apply(i.0))),
            ..side
        }
    });
    let mut out = HashingWriter::new(out);
    out.write_all(&header_bytes(
        &wdl_layouts,
        plan.dtz.file.layout(),
        table.rule(),
        &stats,
    ))?;
    // DTZ is kept for one side to move (readers find the other side's by
    // a one-ply search), so three streams are written, or two where the
    // material is symmetric (White to move only). Their grammars are
    // built at once (each on one thread: a build is a sequence of passes
    // over its sample). Then small tables' streams are encoded at once; a
    // large table's one at a time as it is written, each in parallel
    // inside, so that one stream's working memory is held at a time.
    let mirrored = table.layout().material().is_symmetric();
    let kept: Vec<StreamId> = StreamId::ALL
        .into_iter()
        .filter(|id| id.section == Section::Wdl || id.turn == dtz_side)
        .filter(|id| !mirrored || id.turn == Color::White)
        .collect();
    // Streams that choosing the orders encoded already (searching a large
    // table thoroughly) are not encoded again.
    let mut encoded: Vec<Option<EncodedStream>> =
        kept.iter().map(|&id| plan.take_encoded(id)).collect();
    let codes = |id: StreamId| {
        let file = plan.stream(id);
        move |start, len| file.codes(id, start, len)
    };
    let size = |id: StreamId| plan.stream(id).layout().size();
    on_step(WriteStep::BuildingGrammars);
    let grammars: Vec<Option<Grammar>> = kept
        .par_iter()
        .zip(&encoded)
        .map(|(&id, done)| done.is_none().then(|| plan.grammar(id)))
        .collect();
    let encode = |id: StreamId, grammar: &Grammar| {
        encode_stream(size(id), id.max_block_len(), grammar, &codes(id))
    };
    let streams = kept.len();
    if table.layout().size() <= PARALLEL_STREAMS_UP_TO {
        on_step(WriteStep::EncodingAtOnce { streams });
        kept.par_iter()
            .zip(&grammars)
            .zip(&mut encoded)
            .filter_map(|((&id, grammar), done)| Some((id, grammar.as_ref()?, done)))
            .for_each(|(id, grammar, done)| *done = Some(encode(id, grammar)));
    }
    let mut trailer = Vec::with_capacity(super::TRAILER_LEN);
    for id in StreamId::ALL {
        let Some(k) = kept.iter().position(|&kept| kept == id) else {
            // An absent stream's place is all zeros.
            trailer.extend_from_slice(&[0; 32]);
            continue;
        };
        let stream = encoded[k].take().unwrap_or_else(|| {
            on_step(WriteStep::Encoding { done: k, streams });
            encode(
                id,
                grammars[k]
                    .as_ref()
                    .expect("a grammar for each stream not encoded"),
            )
        });
        let block_len = stream.block_len as u64;
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
