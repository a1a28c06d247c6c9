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
    solved::{FilePlan, OrderSearch, SolvedValues, plan_file},
    stream::{CRC32, EncodedStream, encode_stream},
};
use crate::index::TableIndex;

/// Positions per side up to which a file's three streams' grammars are
/// built and the streams encoded at once.
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
    write_planned(table, stats, plan_file(table, search), out, on_step)
}

/// [`write_table`] once the orders are chosen (`plan`).
fn write_planned<T: SolvedValues + ?Sized, W: Write>(
    table: &T,
    stats: &ByColor<SideStats>,
    mut plan: FilePlan<'_, T>,
    out: W,
    on_step: &(dyn Fn(WriteStep) + Sync),
) -> io::Result<W> {
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
    // material is symmetric (White to move only). A small table's
    // grammars are built at once (each on one thread: a build is a
    // sequence of passes over its sample), a large table's one after
    // another, as choosing its orders builds them (at once, KRNvKR's
    // build peaked over format v2's). Then small tables' streams are
    // encoded at once; a large table's one at a time as it is written,
    // each in parallel inside, so that one stream's working memory is
    // held at a time.
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
    let grammar =
        |(&id, done): (&StreamId, &Option<EncodedStream>)| done.is_none().then(|| plan.grammar(id));
    let grammars: Vec<Option<Grammar>> = if table.layout().size() <= PARALLEL_STREAMS_UP_TO {
        kept.par_iter().zip(&encoded).map(grammar).collect()
    } else {
        kept.iter().zip(&encoded).map(grammar).collect()
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        format::{
            TableFile,
            recorded::{RecordedOrders, recorded_orders},
            solved::recorded_plan,
        },
        generate::{SolveOptions, Table, TableSet, stats},
        index::Layout,
        material::Material,
        value::Wdl,
    };

    /// A table `tables/ORDERS` lists is written in its recorded orders,
    /// and so is a table given other orders (here the solver's own, and
    /// the other side's DTZ); either file holds the table's values. KNvKP
    /// (over 2^22 positions a side) is encoded a stream at a time, KRvKB
    /// at once. (That the 3-4 set's recorded orders give the files a
    /// search writes, `tables/CHECKSUMS` shows: the integration tests
    /// build the set with them.)
    #[test]
    fn files_are_written_in_recorded_orders_and_hold_the_values() {
        for name in ["KRvKB", "KNvKP"] {
            let material: Material = name.parse().expect("material");
            let set = TableSet::solved(material, &SolveOptions::default());
            let table = set.get(&material).expect("solved");
            let stats = stats(table);
            let listed = recorded_orders(material).expect("listed");
            let solver = Layout::new(material).order().to_vec();
            let other = RecordedOrders {
                wdl: ByColor::new_with(|_| solver.clone()),
                dtz: solver.clone(),
                dtz_side: listed.dtz_side.other(),
            };
            let bytes = [
                write_table(table, &stats, OrderSearch::Recorded, Vec::new(), &|_| {}),
                write_planned(
                    table,
                    &stats,
                    recorded_plan(table, &other),
                    Vec::new(),
                    &|_| {},
                ),
            ];
            for (orders, bytes) in [listed, &other].into_iter().zip(bytes) {
                let file = TableFile::new(bytes.expect("writes")).expect("reads");
                file.verify().expect("checksums");
                assert_eq!(file.header().wdl_orders, orders.wdl, "{name}");
                assert_eq!(file.header().dtz_order, orders.dtz, "{name}");
                assert_eq!(file.dtz_side(), orders.dtz_side, "{name}");
                holds_the_values(table, &file, name);
            }
        }
    }

    /// Every 7th position's WDL and kept DTZ in `file` are `table`'s (or,
    /// where the writer may store less, what readers resolve).
    fn holds_the_values(table: &Table, file: &TableFile<Vec<u8>>, name: &str) {
        let layout = table.layout();
        let mut checked = [0u64; 2];
        for index in (0..layout.size()).step_by(7) {
            let board = layout.board(&layout.decode(TableIndex(index)));
            for turn in Color::ALL {
                let Some(dtz) = table.value(turn, index) else {
                    continue;
                };
                let wdl = Wdl::from_dtz(dtz, table.rule());
                let (side, at) = file.locate(&board, turn).expect("its material");
                let kept = file.kept_wdl(side, at).expect("decodes");
                assert_eq!(kept, wdl, "{name} {turn:?} {index}");
                let stored = file.dtz_given(side, at, wdl).expect("decodes");
                if side == file.dtz_side() && wdl != Wdl::Draw {
                    assert_eq!(stored, Some(dtz), "{name} {turn:?} {index}");
                    checked[1] += 1;
                }
                checked[0] += 1;
            }
        }
        assert!(checked.iter().all(|&n| n > 1_000), "{name}: {checked:?}");
    }
}
