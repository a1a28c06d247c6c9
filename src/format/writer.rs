//! The writer: a solved table streamed to any `io::Write` in the format
//! of the module doc, in the free-piece order that compresses it best (see
//! the solved module), one stream at a time (each encoded in parallel, see
//! the stream module), so the bytes do not depend on the thread count. It
//! reads the values through [`SolvedValues`], so it knows nothing of the
//! solver.

use std::io::{self, Write};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use shakmaty::ByColor;

use super::{
    StreamId,
    grammar::Grammar,
    header::{SideStats, header_bytes},
    solved::{SolvedValues, choose_layout},
    stream::{CRC32, EncodedStream, encode_stream, stream_grammar},
};
use crate::index::TableIndex;

/// Positions per side up to which the four streams are encoded at once.
const PARALLEL_STREAMS_UP_TO: u64 = 1 << 22;

/// Write `table` (with its `stats`) to `out` in the format above.
///
/// # Errors
/// Whatever `out` reports.
pub fn write_table<T: SolvedValues + ?Sized, W: Write>(
    table: &T,
    stats: &ByColor<SideStats>,
    out: W,
) -> io::Result<W> {
    let file = choose_layout(table);
    let layout = file.layout();
    let n = layout.size();
    // The statistics name a position by its index in the file's order.
    let to_file = table.layout().reorder_to(layout);
    let stats = stats.map(|side| SideStats {
        longest_at: side.longest_at.map(|i| TableIndex(to_file.apply(i.0))),
        ..side
    });
    let mut out = HashingWriter::new(out);
    out.write_all(&header_bytes(layout, table.rule(), &stats))?;
    // The four grammars are built at once (each on one thread: a build is
    // a sequence of passes over its sample). Then small tables' four
    // streams are encoded at once; a large table's one after the other,
    // each in parallel inside, so that one stream's working memory is
    // held at a time. Either way they are written in order.
    let codes = |id: StreamId| {
        let file = &file;
        move |start, len| file.codes(id, start, len)
    };
    let grammars: Vec<Grammar> = StreamId::ALL
        .par_iter()
        .map(|&id| stream_grammar(n, &codes(id)))
        .collect();
    let encode = |(id, grammar): (StreamId, &Grammar)| {
        Some(encode_stream(n, id.block_len(), grammar, &codes(id)))
    };
    let mut streams: Vec<Option<EncodedStream>> = if n <= PARALLEL_STREAMS_UP_TO {
        StreamId::ALL
            .into_par_iter()
            .zip(&grammars)
            .map(encode)
            .collect()
    } else {
        StreamId::ALL
            .into_iter()
            .zip(&grammars)
            .map(encode)
            .collect()
    };
    drop(grammars);
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
