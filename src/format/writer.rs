//! The writer: a solved table streamed to any `io::Write` in the format
//! of the module doc, compressing a bounded batch of blocks at a time in
//! parallel and writing them in order, so the bytes do not depend on the
//! thread count. It reads the values through [`SolvedValues`], so it knows
//! nothing of the solver.

use std::io::{self, Write};

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use shakmaty::{ByColor, Color};

use super::{
    BLOCK_POSITIONS, Section, TRAILER_LEN,
    block::{dtz_code, pack, wdl_code},
    header::{SideStats, header_bytes},
};
use crate::{
    index::Layout,
    value::{Dtz, Rule, Wdl},
};

/// Blocks compressed together (in parallel) before they are written.
const BATCH_BLOCKS: usize = 32;

/// What the writer needs of a solved table.
pub trait SolvedValues: Sync {
    /// The table's index scheme.
    fn layout(&self) -> &Layout;

    /// The rule the table was solved for.
    fn rule(&self) -> Rule;

    /// Each position's final DTZ with `turn` to move, in index order from
    /// `start`; `None` where there is no position (illegal placements).
    fn values_from(&self, turn: Color, start: u64) -> Box<dyn Iterator<Item = Option<Dtz>> + '_>;
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

/// Stream one section; returns (offset of its block-offset table, blocks, SHA-256).
fn write_section<T: SolvedValues + ?Sized, W: Write>(
    table: &T,
    section: Section,
    out: &mut HashingWriter<W>,
) -> io::Result<(u64, usize, [u8; 32])> {
    let total = 2 * table.layout().size();
    let blocks = total.div_ceil(u64::from(BLOCK_POSITIONS)) as usize;
    let effort = Effort::for_positions(table.layout().size());
    let mut offsets = Vec::with_capacity(blocks + 1);
    let mut hasher = Sha256::new();
    for batch_start in (0..blocks).step_by(BATCH_BLOCKS) {
        let batch_end = (batch_start + BATCH_BLOCKS).min(blocks);
        let frames: Vec<io::Result<Vec<u8>>> = (batch_start..batch_end)
            .into_par_iter()
            .map_init(
                || effort.compressor(),
                |compressor, block| match compressor {
                    Ok(c) => c.compress(&pack(&block_values(table, section, block))),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                },
            )
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

/// How hard zstd works. Tables of up to [`STRONG_LIMIT`] positions per side
/// (every 3-4 piece table) get zstd's optimal parser with 3-byte matches
/// and long targets, which finds the short repeats of tablebase data: on
/// 3-4 piece tables about a sixth smaller than a lazy matcher in the DTZ
/// section and a third smaller in the WDL section, at about ten times the
/// CPU time. Larger tables get the lazy matcher, so that writing a 5-piece
/// table takes seconds, not minutes.
#[derive(Debug, Clone, Copy)]
enum Effort {
    Strong,
    Fast,
}

/// Positions per side up to which [`Effort::Strong`] is used.
const STRONG_LIMIT: u64 = 1 << 24;

impl Effort {
    fn for_positions(positions: u64) -> Effort {
        if positions <= STRONG_LIMIT {
            Effort::Strong
        } else {
            Effort::Fast
        }
    }

    /// A compressor with this effort's parameters (one per thread: its
    /// tables are large, and reusing them does not change the output).
    fn compressor(self) -> io::Result<zstd::bulk::Compressor<'static>> {
        use zstd::zstd_safe::{CParameter, Strategy};
        let mut c = zstd::bulk::Compressor::new(0)?;
        let params = match self {
            // (strategy, min match, search log, target length)
            Effort::Strong => (Strategy::ZSTD_btopt, 3, 6, 256),
            Effort::Fast => (Strategy::ZSTD_lazy2, 3, 5, 8),
        };
        c.set_parameter(CParameter::Strategy(params.0))?;
        c.set_parameter(CParameter::MinMatch(params.1))?;
        c.set_parameter(CParameter::SearchLog(params.2))?;
        c.set_parameter(CParameter::TargetLength(params.3))?;
        c.set_parameter(CParameter::WindowLog(WINDOW_LOG))?;
        c.set_parameter(CParameter::ChainLog(WINDOW_LOG + 1))?;
        c.set_parameter(CParameter::HashLog(WINDOW_LOG))?;
        Ok(c)
    }
}

/// zstd window: a whole packed block of one-byte codes.
const WINDOW_LOG: u32 = 21;

/// The stored values of one block, with "don't care" positions repeating
/// the previous value (see the module doc).
fn block_values<T: SolvedValues + ?Sized>(table: &T, section: Section, block: usize) -> Vec<u16> {
    let n = table.layout().size();
    let rule = table.rule();
    let start = block as u64 * u64::from(BLOCK_POSITIONS);
    let end = (start + u64::from(BLOCK_POSITIONS)).min(2 * n);
    let cells = if start < n {
        let black = table.values_from(Color::Black, 0);
        let white = table.values_from(Color::White, start);
        Box::new(white.chain(black)) as Box<dyn Iterator<Item = Option<Dtz>>>
    } else {
        table.values_from(Color::Black, start - n)
    };
    let mut values = Vec::with_capacity((end - start) as usize);
    let mut previous = match section {
        Section::Wdl => wdl_code(Wdl::Draw),
        _ => 0,
    };
    for value in cells.take((end - start) as usize) {
        match (section, value) {
            (Section::Wdl, Some(dtz)) => previous = wdl_code(Wdl::from_dtz(dtz, rule)),
            (_, Some(dtz)) if dtz.0 != 0 => previous = dtz_code(dtz, rule),
            _ => {}
        }
        values.push(previous);
    }
    values
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
