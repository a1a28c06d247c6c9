//! One stream: the codes of one section for one side to move, as
//! Huffman-coded grammar symbols in blocks of one size, with a sparse
//! index (see the byte table in the format module's doc).
//!
//! A probe reads one index entry, walks the per-block position counts to
//! the block holding its position, checks that block's CRC-16 and decodes
//! symbols from the block's start until it reaches the position, then
//! descends the grammar to the code: a few hundred nanoseconds, no
//! decompression of anything else and nothing kept (a DTZ read may hold
//! the block's decoded symbols in a [`DecodedBlocks`] instead: see
//! [`StreamReader::code_at_held`]). The counts and the
//! index are checked a 1 KiB chunk at a time (CRC-32 each, the CRCs in the
//! stream's head, which has its own CRC-32). Each block and chunk is
//! checked once while the file is open: a bit per block and per chunk
//! remembers that it passed.

use std::{
    borrow::Cow,
    cell::Cell,
    sync::atomic::{AtomicU64, Ordering},
};

use crc::{CRC_16_IBM_SDLC, CRC_32_ISCSI, Crc, Table};
use rayon::prelude::*;

use super::{
    FormatError, MIN_BLOCK_LEN, Section,
    decoded::{DecodedBlock, DecodedBlocks},
    entries::{self, Entry},
    grammar::{Grammar, MAX_SYMBOL_LEN, MAX_SYMBOLS},
    huffman::{Decoder, MAX_CODE_LEN, canonical_codes, code_lengths},
    source::Source,
    u16_at, u32_at, u64_at,
};
use crate::format::StreamId;

/// The block checksum.
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_IBM_SDLC);
/// The checksum of heads and of count and index chunks.
pub(super) static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_ISCSI);

/// An index entry every 2^INDEX_STEP_BITS positions.
const INDEX_STEP_BITS: u32 = 16;
/// Bytes of an index entry: block (u32), positions before it in the block (u16).
const INDEX_ENTRY_LEN: usize = 6;
/// Counts and index are checked in chunks of this many bytes.
const CHUNK_LEN: usize = 1024;
/// Positions encoded together by the writer (symbols never span two).
pub(super) const SEGMENT: u64 = 1 << 20;
/// Positions of a stream the grammar is built from, at most. A five-piece
/// stream is 100-500 million positions; a sample of 2^24 instead of 2^22
/// gives KRNvKR 4.4 %, KRBvKR 2.8 % and KQRvKR 1.5 % fewer bytes, for
/// 0-5 % more build time on the five-piece tables of issue 14 (19 % on
/// KBNvKP, whose grammars take many passes) and, since the grammar
/// rewrites its sample in place, up to 18 MB more peak memory; 2^25 or
/// the whole stream do no better (see BENCHMARKS.md).
const SAMPLE: u64 = 1 << 24;
/// Windows the sample of a larger stream is cut into: many small windows
/// see more kinds of positions than a few large ones, so the grammar fits
/// the whole stream better. Windows of 4,096 positions did as well as any
/// at both sample sizes tried (at 2^22, 1,024 of them against 64 of
/// 65,536: KRNvKR 2.6 %, KQRvKR 2.5 %, KRBvKR 1.6 %, KRRvKR 1.3 % and the
/// 3-4 set 0.8 % fewer bytes, 512 or 2,048 windows about as well, 4,096
/// worse; at 2^24, 4,096 against 2,048 of 8,192: KRNvKR 0.3 %; see
/// BENCHMARKS.md).
const SAMPLE_WINDOWS: u64 = 4096;

/// Windows a [`held_out_bytes`] estimate is judged on.
const HELD_OUT_WINDOWS: u64 = 16;
/// Positions per window of a [`held_out_bytes`] estimate, at most (256
/// random windows of 4,096 positions, or 4,096 of 256, misranked KRBvKR's
/// orders).
const HELD_OUT_WINDOW: u64 = 1 << 20;

/// A stream as written: its blocks and its metadata (head, counts, index).
pub(super) struct EncodedStream {
    /// Bytes per block.
    pub block_len: usize,
    pub blocks: Vec<u8>,
    pub block_count: u32,
    pub head: Vec<u8>,
    /// Counts then index.
    pub tables: Vec<u8>,
}

impl EncodedStream {
    /// Bytes the stream takes in the file, less the padding that aligns
    /// its blocks.
    pub fn bytes(&self) -> usize {
        self.blocks.len() + self.head.len() + self.tables.len()
    }
}

/// The codes of a stream of `n` positions, read a range at a time by
/// `codes(start, len)`.
pub(super) type Codes<'a> = &'a (dyn Fn(u64, usize) -> Vec<u16> + Sync);

/// The segments a stream of `n` positions is encoded in.
fn segments(n: u64) -> Vec<(u64, usize)> {
    (0..n.div_ceil(SEGMENT))
        .map(|i| (i * SEGMENT, (n - i * SEGMENT).min(SEGMENT) as usize))
        .collect()
}

/// The grammar of a stream of `n` codes: the pairs from a fixed sample
/// (all of it up to [`SAMPLE`] positions, which then also gives the
/// terminals), and beyond that every code `possible` names a terminal
/// (ascending: each code the stream may hold in any order of its digits,
/// asked for only there). A terminal that the stream never holds gets no
/// Huffman code and costs its entry in the head: finding the codes
/// a stream holds in its own order took a pass over the whole stream, as
/// long as encoding it where an order leads with a king.
pub(super) fn stream_grammar(
    n: u64,
    codes: Codes<'_>,
    section: Section,
    possible: impl FnOnce() -> Vec<u16>,
) -> Grammar {
    if n <= SAMPLE {
        return whole_stream_grammar(n, codes, section).0;
    }
    let windows = sample_windows(n, codes);
    Grammar::build(possible(), windows, SAMPLE as f64 / n as f64, section).0
}

/// The grammar of a stream of `n` codes built from all of them (as
/// [`stream_grammar`] builds it up to [`SAMPLE`] codes), and about how
/// many bytes the stream takes with it: its Huffman-coded symbols plus the
/// grammar, what the writer writes but for the ends of blocks. For judging
/// a small table's finalists: estimates on a sample, even of a sixth of
/// the stream, came out too low by a different factor for each order
/// (KBPvK's file took 9 % more bytes in the order they chose).
pub(super) fn whole_stream_grammar(n: u64, codes: Codes<'_>, section: Section) -> (Grammar, f64) {
    let all: Vec<Vec<u16>> = segments(n).par_iter().map(|&(s, l)| codes(s, l)).collect();
    let (grammar, symbols) = Grammar::build(distinct(&all), all, 1.0, section);
    let bytes = scaled_bytes(&grammar, &symbols, 1.0);
    (grammar, bytes)
}

/// The sample a grammar of a stream of `n` > [`SAMPLE`] codes is built
/// from: [`SAMPLE_WINDOWS`] windows spread evenly over it.
fn sample_windows(n: u64, codes: Codes<'_>) -> Vec<Vec<u16>> {
    let window = SAMPLE / SAMPLE_WINDOWS;
    (0..SAMPLE_WINDOWS)
        .into_par_iter()
        .map(|i| codes(i * (n - window) / (SAMPLE_WINDOWS - 1), window as usize))
        .collect()
}

/// Where the windows of a [`held_out_bytes`] estimate lie, each aligned
/// to its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeldOutWindows {
    /// [`HELD_OUT_WINDOWS`] midway between evenly spread ones: a default
    /// build's, with which the estimate ranked KRBvKR's, KRNvKR's and
    /// KQRvKR's orders as their files turned out (windows at fixed
    /// pseudo-random places instead made their default files 4.9 % and
    /// 5.8 % larger, KQRvKR's 0.1 % smaller).
    Even,
    /// Those and as many more, one at a fixed pseudo-random place in each
    /// of [`HELD_OUT_WINDOWS`] equal stretches of the stream: a thorough
    /// search's, which judges orders led by a king too, whose digits the
    /// even windows fall in step with (in KRNNvK's `K|kRNN`, the white
    /// king turned into the triangle leading 2^24 positions each, all
    /// sixteen held Black's king on the a- to d-files, White's king's
    /// half of the board, and the order judged smallest took 42 % more
    /// bytes than a default build's `KkNNR`). The scattered windows alone
    /// made KRBvKR's thorough file 9 % larger than its default one and
    /// KRNNvK's 4 %; judged on both, KRBvKR's is the default's, KRNNvK's
    /// 6 % smaller. Over the 47 pawnless tables built both ways the total
    /// is the same (0.02 % fewer bytes on both), single files 13 % smaller
    /// (KNNvKB) to 20 % larger (KBBNvK): a held-out judgment misranks
    /// close orders, so a thorough search then encodes the closest whole
    /// (see the solved module's `EXACT_DTZ_FINALISTS`).
    EvenAndScattered,
}

impl HeldOutWindows {
    /// The starts of the windows of `len` positions in a stream of `n`
    /// (at least twice [`HELD_OUT_WINDOWS`] as many), each aligned to
    /// `len`: a window read in the solver's order reads the fewest
    /// blocks.
    fn starts(self, n: u64, len: u64) -> Vec<u64> {
        let slots = (n - len) / len;
        let even = (0..HELD_OUT_WINDOWS)
            .map(|i| (2 * i + 1) * (n - len) / (2 * HELD_OUT_WINDOWS) / len * len);
        let scattered = (0..HELD_OUT_WINDOWS).map(|i| {
            let slot = slots * i / HELD_OUT_WINDOWS + scatter(i) % (slots / HELD_OUT_WINDOWS + 1);
            slot * len
        });
        match self {
            HeldOutWindows::Even => even.collect(),
            HeldOutWindows::EvenAndScattered => even.chain(scattered).collect(),
        }
    }
}

/// About how many bytes a stream of `n` > [`SAMPLE`] codes takes as the
/// writer writes it with `grammar` (from [`stream_grammar`]): its
/// Huffman-coded symbols on the `windows` (16 or 32, [`HeldOutWindows`])
/// of up to [`HELD_OUT_WINDOW`] positions that the grammar was hardly
/// built from (on a five-piece table 3-14 % of them are also in its
/// sample), scaled to the stream, plus the grammar. A grammar judged on its own
/// sample, as [`estimate_bytes`] does, comes out 2-14 times too low on a
/// five-piece table, by a different factor for each order of digits, so
/// it cannot rank orders there; this estimate ranked every order tried on
/// KRBvKR, KRNvKR and KQRvKR as their files turned out, 15-20 % under
/// them (measured with a sample of 2^22 positions; see BENCHMARKS.md).
/// Given on the even windows alone too, which a default build judges on.
pub(super) fn held_out_bytes(
    n: u64,
    grammar: &Grammar,
    windows: HeldOutWindows,
    codes: Codes<'_>,
) -> HeldOutBytes {
    let len = HELD_OUT_WINDOW.min(n / (2 * HELD_OUT_WINDOWS));
    let encoder = grammar.encoder();
    let starts = windows.starts(n, len);
    let scale = |windows: usize| (windows as u64 * len) as f64 / n as f64;
    let symbols: Vec<Vec<u16>> = starts
        .into_par_iter()
        .map(|start| encoder.encode(&codes(start, len as usize)))
        .collect();
    // The even windows come first.
    let even = HELD_OUT_WINDOWS as usize;
    HeldOutBytes {
        even: scaled_bytes(grammar, &symbols[..even], scale(even)),
        all: scaled_bytes(grammar, &symbols, scale(symbols.len())),
    }
}

/// A [`held_out_bytes`] estimate.
#[derive(Debug, Clone, Copy)]
pub(super) struct HeldOutBytes {
    /// On the [`HeldOutWindows::Even`] windows alone: a default build's
    /// judgment.
    pub even: f64,
    /// On all the windows asked for.
    pub all: f64,
}

/// A fixed pseudo-random number for `i` (SplitMix64's finaliser): where
/// a sample's window falls, out of step with the digits.
pub(super) fn scatter(i: u64) -> u64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Bytes of a stream whose sample (`scale` times its length) `grammar`
/// encodes as `symbols`: the sample's Huffman-coded symbols scaled to the
/// stream, plus three bytes of the head per symbol (an entry took three
/// bytes until format v14 and takes about 2.3 since; the estimates rank
/// orders whose grammars mostly have as many symbols, so the weight was
/// left as the order search was measured with).
fn scaled_bytes(grammar: &Grammar, symbols: &[Vec<u16>], scale: f64) -> f64 {
    coded_bytes(&symbol_counts(grammar, symbols)) / scale + 3.0 * grammar.symbol_count() as f64
}

/// How often each symbol of `grammar` occurs in `symbols`.
fn symbol_counts(grammar: &Grammar, symbols: &[Vec<u16>]) -> Vec<u64> {
    let mut counts = vec![0u64; grammar.symbol_count()];
    for &s in symbols.iter().flatten() {
        counts[usize::from(s)] += 1;
    }
    counts
}

/// Bytes of symbols occurring `counts` times each, Huffman-coded.
fn coded_bytes(counts: &[u64]) -> f64 {
    let bits: u64 = code_lengths(counts)
        .iter()
        .zip(counts)
        .map(|(&len, &count)| u64::from(len) * count)
        .sum();
    bits as f64 / 8.0
}

/// The codes that occur in `segments`, ascending.
fn distinct(segments: &[Vec<u16>]) -> Vec<u16> {
    let mut seen = vec![false; usize::from(u16::MAX) + 1];
    for &code in segments.iter().flatten() {
        seen[usize::from(code)] = true;
    }
    (0..=u16::MAX).filter(|&c| seen[usize::from(c)]).collect()
}

/// Encode a stream of `n` codes with its `grammar` (from
/// [`stream_grammar`]) in blocks of the power of two from
/// [`MIN_BLOCK_LEN`] to `max_block_len` bytes that takes the fewest bytes
/// (the shortest of equals: it decodes fastest). A stream of long runs
/// fills a block's positions before its bytes, a block holding at most
/// [`MAX_SYMBOL_LEN`] positions: small blocks waste less there (the 3-4
/// set's WDL 8 % fewer bytes), large ones elsewhere (see BENCHMARKS.md).
pub(super) fn encode_stream(
    n: u64,
    max_block_len: usize,
    grammar: &Grammar,
    codes: Codes<'_>,
) -> EncodedStream {
    let coded = coded_symbols(n, grammar, codes);
    let lens = symbol_lens(grammar);
    // Each length's blocks counted (in parallel, no bytes written), then
    // the fewest bytes packed: the shorter length where two tie.
    let block_lens: Vec<usize> = std::iter::successors(Some(usize::from(MIN_BLOCK_LEN)), |&len| {
        Some(2 * len).filter(|&len| len <= max_block_len)
    })
    .collect();
    let block_len = block_lens
        .into_par_iter()
        .min_by_key(|&len| (packed_bytes(len, &coded.symbols, &coded.codes, &lens), len))
        .expect("a block length");
    let packed = pack_blocks(n, block_len, &coded.symbols, &coded.codes, &lens);
    let tables = [packed.counts, packed.index].concat();
    let head = head_bytes(
        n,
        grammar,
        &coded,
        packed.block_count,
        &tables,
        packed.counts_len,
    );
    EncodedStream {
        block_len,
        blocks: packed.blocks,
        block_count: packed.block_count,
        head,
        tables,
    }
}

/// A stream's symbols, a segment at a time, their Huffman codes and
/// their entries in the head.
struct CodedSymbols {
    symbols: Vec<Vec<u16>>,
    /// Code length of each symbol (0: none).
    lengths: Vec<u8>,
    /// Code and length of each symbol, by the grammar's number: canonical
    /// codes in the file's numbering.
    codes: Vec<(u32, u8)>,
    /// The head's entries: the symbols in the file's numbering.
    entries: Vec<Entry>,
}

/// Encode the `n` codes of a stream with its `grammar`, one segment at a
/// time in parallel, give the symbols Huffman codes by their counts, and
/// number them as the file does: by code length, and within a length in
/// the order that makes their entries shortest (see the entries module).
fn coded_symbols(n: u64, grammar: &Grammar, codes: Codes<'_>) -> CodedSymbols {
    let encoder = grammar.encoder();
    let symbols: Vec<Vec<u16>> = segments(n)
        .par_iter()
        .map(|&(start, len)| encoder.encode(&codes(start, len)))
        .collect();
    let lengths = code_lengths(&symbol_counts(grammar, &symbols));
    let canonical = canonical_order(&lengths);
    let mut number = vec![0u16; canonical.len()];
    for (at, &symbol) in canonical.iter().enumerate() {
        number[usize::from(symbol)] = at as u16;
    }
    let terminals = grammar.terminals.len();
    let entries: Vec<Entry> = canonical
        .iter()
        .map(|&symbol| match usize::from(symbol).checked_sub(terminals) {
            None => Entry::Terminal(symbol),
            Some(pair) => {
                let (l, r) = grammar.pairs[pair];
                Entry::Pair(number[usize::from(l)], number[usize::from(r)])
            }
        })
        .collect();
    let (old_of, entries) =
        entries::sorted_numbers(&entries, &classes(&per_length(&lengths), lengths.len()));
    // The grammar's symbols in the file's order, and their codes.
    let file_order: Vec<u16> = old_of
        .iter()
        .map(|&old| canonical[usize::from(old)])
        .collect();
    let file_lengths: Vec<u8> = file_order
        .iter()
        .map(|&s| lengths[usize::from(s)])
        .collect();
    let mut codes = vec![(0, 0); lengths.len()];
    for (&symbol, code) in file_order.iter().zip(canonical_codes(&file_lengths)) {
        codes[usize::from(symbol)] = code;
    }
    CodedSymbols {
        symbols,
        lengths,
        codes,
        entries,
    }
}

/// How many of `lengths` have each code length 1..=[`MAX_CODE_LEN`].
fn per_length(lengths: &[u8]) -> Vec<u16> {
    (1..=MAX_CODE_LEN)
        .map(|length| lengths.iter().filter(|&&l| u32::from(l) == length).count() as u16)
        .collect()
}

/// The classes of a head's `symbols` entries (see the entries module):
/// the symbols of each code length, `per_length` of them, then those
/// without a code (a reader first checks that `per_length` adds up to
/// no more than `symbols`).
fn classes(per_length: &[u16], symbols: usize) -> Vec<usize> {
    let mut classes: Vec<usize> = per_length.iter().map(|&c| usize::from(c)).collect();
    classes.push(symbols - classes.iter().sum::<usize>());
    classes
}

/// About how many bytes a stream takes whose codes these `windows` sample
/// (`scale`: the sample's length over the stream's): the Huffman-coded
/// symbols of a grammar built from the sample, scaled to the stream, plus
/// the grammar. Cheaper than [`encode_stream`] by the stream's length
/// over the sample's, for comparing ways to write the same stream.
pub(super) fn estimate_bytes(windows: Vec<Vec<u16>>, scale: f64, section: Section) -> f64 {
    let (grammar, symbols) = Grammar::build(distinct(&windows), windows, scale, section);
    scaled_bytes(&grammar, &symbols, scale)
}

/// Symbols (terminals and pairs) of the grammar [`ranking_bytes`] builds:
/// few, so that a sample cannot fit them to itself. A full grammar built
/// from a few windows of a five-piece stream comes out 2-14 times too
/// small, by a different factor per order; on 128 windows it ranked
/// KRBvKR's best WDL order with White to move third, capped as Syzygy's
/// generator caps the grammar it ranks orders with, first (see
/// BENCHMARKS.md).
const RANKING_SYMBOLS: usize = 100;
/// The fewest times a pair occurs in the sample to become a symbol of
/// [`ranking_bytes`]'s grammar.
const RANKING_MIN_COUNT: u32 = 20;

/// About how many bytes a large stream takes whose codes these `windows`
/// sample (`scale`: the sample's length over the stream's), for ranking
/// its orders of digits: the Huffman-coded symbols of a small grammar
/// ([`RANKING_SYMBOLS`]) built from the sample, scaled to the stream.
/// Its figures are not the file's (26 % and 42 % over on KRBvKR's WDL
/// streams), but they rank orders where [`estimate_bytes`]'s do not.
pub(super) fn ranking_bytes(windows: Vec<Vec<u16>>, scale: f64) -> f64 {
    let (grammar, symbols) = Grammar::build_limited(
        distinct(&windows),
        windows,
        RANKING_SYMBOLS,
        RANKING_MIN_COUNT,
    );
    scaled_bytes(&grammar, &symbols, scale)
}

/// Positions each symbol stands for.
fn symbol_lens(grammar: &Grammar) -> Vec<u32> {
    let mut lens = vec![1u32; grammar.terminals.len()];
    for &(l, r) in &grammar.pairs {
        lens.push(lens[usize::from(l)] + lens[usize::from(r)]);
    }
    lens
}

struct Packed {
    blocks: Vec<u8>,
    block_count: u32,
    /// Positions per block, u16 each.
    counts: Vec<u8>,
    /// Index entries.
    index: Vec<u8>,
    counts_len: usize,
}

/// The block count after one more block. A block holds at least 4 codes
/// of at most [`MAX_CODE_LEN`] bits in its 14 bytes or more, each code one
/// position or more, so even a six-piece stream of 7.75 G positions has
/// fewer than 2^31 blocks (and the writer takes short blocks only where
/// they hold many positions).
fn next_block(count: u32) -> u32 {
    count
        .checked_add(1)
        .expect("a stream has fewer than 2^32 blocks")
}

/// Cut the symbols into blocks of `block_len` bytes: each block holds
/// whole symbols' codes, at most [`MAX_SYMBOL_LEN`] positions, then zero
/// padding and its CRC-16. Calls `symbol` with each symbol in turn and
/// whether it starts a new block (the first block starts by itself).
fn cut_blocks(
    block_len: usize,
    symbols: &[Vec<u16>],
    codes: &[(u32, u8)],
    lens: &[u32],
    mut symbol: impl FnMut(u16, bool),
) {
    let payload_bits = (block_len - 2) * 8;
    let (mut bit, mut in_block) = (0usize, 0u32);
    for &s in symbols.iter().flatten() {
        let length = usize::from(codes[usize::from(s)].1);
        let len = lens[usize::from(s)];
        let starts = bit + length > payload_bits || in_block + len > MAX_SYMBOL_LEN;
        if starts {
            (bit, in_block) = (0, 0);
        }
        symbol(s, starts);
        bit += length;
        in_block += len;
    }
}

/// The bytes of blocks of `block_len` and their 2-byte counts that
/// [`pack_blocks`] writes (the index is the same for every length).
fn packed_bytes(block_len: usize, symbols: &[Vec<u16>], codes: &[(u32, u8)], lens: &[u32]) -> u64 {
    let mut blocks = 1u64;
    cut_blocks(block_len, symbols, codes, lens, |_, starts| {
        blocks += u64::from(starts);
    });
    blocks * (block_len as u64 + 2)
}

/// Pack the symbols into blocks as [`cut_blocks`] cuts them.
fn pack_blocks(
    n: u64,
    block_len: usize,
    symbols: &[Vec<u16>],
    codes: &[(u32, u8)],
    lens: &[u32],
) -> Packed {
    let mut blocks = Vec::new();
    let mut counts = Vec::new();
    let mut index = Vec::new();
    let mut block = vec![0u8; block_len];
    let mut bit = 0usize;
    let mut in_block = 0u32;
    let mut block_count = 0u32;
    let mut position = 0u64;
    let step = 1u64 << INDEX_STEP_BITS;
    let mut finish = |block: &mut Vec<u8>, in_block: u32, blocks: &mut Vec<u8>| {
        let crc = CRC16.checksum(&block[..block_len - 2]);
        block[block_len - 2..].copy_from_slice(&crc.to_le_bytes());
        blocks.extend_from_slice(block);
        counts.extend_from_slice(&(in_block as u16).to_le_bytes());
        block.fill(0);
    };
    cut_blocks(block_len, symbols, codes, lens, |s, starts| {
        if starts {
            finish(&mut block, in_block, &mut blocks);
            block_count = next_block(block_count);
            bit = 0;
            in_block = 0;
        }
        let (code, length) = codes[usize::from(s)];
        let len = lens[usize::from(s)];
        // Index entries for the steps this symbol covers.
        let first_step = position.div_ceil(step);
        let mut at = first_step * step;
        while at < position + u64::from(len) {
            let skip = in_block as u64 + (at - position);
            index.extend_from_slice(&block_count.to_le_bytes());
            index.extend_from_slice(&(skip as u16).to_le_bytes());
            at += step;
        }
        // The code's bits, first bit highest, from `bit` on (every symbol
        // in the stream has a code of 1 bit or more): at most
        // MAX_CODE_LEN + 7 bits, so they fit a u32 from its top bit.
        const _: () = assert!(MAX_CODE_LEN + 7 <= u32::BITS);
        let shifted = (code << (32 - u32::from(length))) >> (bit % 8);
        let bytes = (bit % 8 + usize::from(length)).div_ceil(8);
        for (to, from) in block[bit / 8..]
            .iter_mut()
            .zip(&shifted.to_be_bytes()[..bytes])
        {
            *to |= from;
        }
        bit += usize::from(length);
        in_block += len;
        position += u64::from(len);
    });
    finish(&mut block, in_block, &mut blocks);
    block_count = next_block(block_count);
    debug_assert_eq!(position, n);
    let counts_len = counts.len();
    Packed {
        blocks,
        block_count,
        counts,
        index,
        counts_len,
    }
}

/// The head: what a reader parses once (see the module doc's byte table).
/// Symbols are numbered in canonical code order, so the code lengths
/// follow from how many codes each length has, and each symbol's entry
/// is coded as the entries module says.
fn head_bytes(
    n: u64,
    grammar: &Grammar,
    coded: &CodedSymbols,
    block_count: u32,
    tables: &[u8],
    counts_len: usize,
) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&n.to_le_bytes());
    h.extend_from_slice(&block_count.to_le_bytes());
    h.extend_from_slice(&(counts_len as u64).to_le_bytes());
    h.push(INDEX_STEP_BITS as u8);
    h.extend_from_slice(&(grammar.terminals.len() as u16).to_le_bytes());
    for t in &grammar.terminals {
        h.extend_from_slice(&t.to_le_bytes());
    }
    h.extend_from_slice(&(coded.entries.len() as u16).to_le_bytes());
    let per_length = per_length(&coded.lengths);
    for with in &per_length {
        h.extend_from_slice(&with.to_le_bytes());
    }
    h.extend_from_slice(&entries::encode(
        &coded.entries,
        &classes(&per_length, coded.entries.len()),
    ));
    for chunk in tables.chunks(CHUNK_LEN) {
        h.extend_from_slice(&CRC32.checksum(chunk).to_le_bytes());
    }
    let crc = CRC32.checksum(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

/// Grammar symbols in canonical code order: by code length (`lengths`),
/// then by number, those without a code (0) last.
fn canonical_order(lengths: &[u8]) -> Vec<u16> {
    let mut order: Vec<u16> = (0..lengths.len() as u16).collect();
    order.sort_by_key(|&s| {
        let length = lengths[usize::from(s)];
        (length == 0, length, s)
    });
    order
}

/// Where a stream is in its file (from the trailer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StreamPlace {
    pub blocks_offset: u64,
    pub block_count: u32,
    pub block_len: usize,
    pub head_offset: u64,
    pub head_len: u32,
    /// Counts and index follow the head up to here.
    pub end: u64,
}

/// A symbol as a reader walks it: its two halves (a pair), or the one
/// code every position it stands for holds (`left` is the code, `right`
/// is [`NO_PAIR`]): a terminal, or a pair that is a run of one code, which
/// a probe then needs to walk no further. The positions it stands for are
/// kept apart ([`StreamReader`]'s `spans`).
#[derive(Debug, Clone, Copy)]
struct Symbol {
    left: u16,
    right: u16,
}

/// The `right` of a terminal symbol (no symbol has this number).
const NO_PAIR: u16 = u16::MAX;

/// The symbols of a head's entries (see the entries module) over its
/// terminal codes, a run of one code as that code, and the positions each
/// stands for; an error if an entry names no terminal or symbol, or the
/// pairs loop or stand for more than [`MAX_SYMBOL_LEN`] positions.
fn symbol_table(
    entries: &[Entry],
    terminal_codes: &[u16],
) -> Result<(Vec<Symbol>, Vec<u16>), &'static str> {
    let mut symbols: Vec<Symbol> = Vec::with_capacity(entries.len());
    for &entry in entries {
        symbols.push(match entry {
            Entry::Terminal(t) => {
                let code = *terminal_codes
                    .get(usize::from(t))
                    .ok_or("an entry names no terminal")?;
                Symbol {
                    left: code,
                    right: NO_PAIR,
                }
            }
            Entry::Pair(a, b) if usize::from(a.max(b)) < entries.len() => {
                Symbol { left: a, right: b }
            }
            Entry::Pair(..) => return Err("a pair names no symbol"),
        });
    }
    // Lengths depth first (0: not known yet; a terminal's is 1); a
    // symbol met again while open is a loop. A pair of two runs of one
    // code (a terminal is a run of one) becomes that run as it is done.
    let mut lens: Vec<u32> = symbols
        .iter()
        .map(|s| u32::from(s.right == NO_PAIR))
        .collect();
    let mut stack: Vec<(u16, bool)> = Vec::new();
    for root in 0..symbols.len() as u16 {
        stack.push((root, false));
        while let Some((s, halves_done)) = stack.pop() {
            if lens[usize::from(s)] > 0 {
                continue;
            }
            let symbol = symbols[usize::from(s)];
            let (l, r) = (
                lens[usize::from(symbol.left)],
                lens[usize::from(symbol.right)],
            );
            if halves_done {
                if l == 0 || r == 0 {
                    return Err("the pairs loop");
                }
                if l + r > MAX_SYMBOL_LEN {
                    return Err("a symbol is too long");
                }
                lens[usize::from(s)] = l + r;
                let (left, right) = (
                    symbols[usize::from(symbol.left)],
                    symbols[usize::from(symbol.right)],
                );
                if left.right == NO_PAIR && right.right == NO_PAIR && left.left == right.left {
                    symbols[usize::from(s)] = left;
                }
            } else {
                // A path without a loop holds each symbol once, and the
                // stack a path and a sibling of each: more is a loop.
                if stack.len() > 2 * symbols.len() + 2 {
                    return Err("the pairs loop");
                }
                stack.push((s, true));
                stack.push((symbol.left, false));
                stack.push((symbol.right, false));
            }
        }
    }
    // Every length is now at most MAX_SYMBOL_LEN (65,535).
    Ok((symbols, lens.into_iter().map(|len| len as u16).collect()))
}

/// A stream's head, parsed and checked: everything a probe needs besides
/// the file's bytes.
#[derive(Debug)]
pub(super) struct StreamReader {
    id: StreamId,
    place: StreamPlace,
    positions: u64,
    symbols: Vec<Symbol>,
    /// Positions each symbol stands for (at most [`MAX_SYMBOL_LEN`]),
    /// apart from `symbols`: a probe skipping symbols reads only these.
    spans: Vec<u16>,
    decoder: Decoder,
    step_bits: u32,
    counts_offset: u64,
    index_offset: u64,
    index_entries: u64,
    /// CRC-32 of each chunk of counts then index.
    chunk_crcs: Vec<u32>,
    /// One bit per chunk: checked.
    checked: Vec<AtomicU64>,
    /// One bit per block: its checksum matched when it was first read
    /// (a block is checked once while the file is open, as the chunks
    /// are: a hot probe then only decodes).
    verified: Vec<AtomicU64>,
}

/// `n` cleared bits.
fn bits(n: u64) -> Vec<AtomicU64> {
    (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

impl StreamReader {
    /// Read and check the head of the stream at `place`, which must hold
    /// `positions` codes of at most `max_code`.
    pub(super) fn open<S: Source + ?Sized>(
        source: &S,
        id: StreamId,
        place: StreamPlace,
        positions: u64,
        max_code: u16,
    ) -> Result<StreamReader, FormatError> {
        let bad = |reason: String| FormatError::Layout {
            section: id.section,
            reason: format!("{} to move: {reason}", id.turn_name()),
        };
        let head = read(source, place.head_offset, place.head_len as usize)?;
        if head.len() < 4 || {
            let body = head.len() - 4;
            CRC32.checksum(&head[..body]) != u32_at(&head, body)
        } {
            return Err(bad("head checksum mismatch".into()));
        }
        // The fields, read in order up to the head's CRC.
        let fields = Cell::new(&head[..head.len() - 4]);
        let take = |len: usize| -> Result<&[u8], FormatError> {
            let (slice, rest) = fields
                .get()
                .split_at_checked(len)
                .ok_or_else(|| bad("head too short".into()))?;
            fields.set(rest);
            Ok(slice)
        };
        let n = u64_at(take(8)?, 0);
        let block_count = u32_at(take(4)?, 0);
        let counts_len = u64_at(take(8)?, 0);
        let step_bits = u32::from(take(1)?[0]);
        let terminals = usize::from(u16_at(take(2)?, 0));
        let terminal_codes: Vec<u16> = take(2 * terminals)?
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let symbol_count = usize::from(u16_at(take(2)?, 0));
        let per_length: Vec<u16> = take(2 * MAX_CODE_LEN as usize)?
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        let coded: usize = per_length.iter().map(|&c| usize::from(c)).sum();
        if coded > symbol_count {
            return Err(bad("head fields out of range".into()));
        }
        let (entries, entries_len) =
            entries::decode(fields.get(), &classes(&per_length, symbol_count))
                .map_err(|why| bad(why.into()))?;
        take(entries_len)?;
        if n != positions
            || block_count != place.block_count
            || counts_len != 2 * u64::from(block_count)
            || !(8..=32).contains(&step_bits)
            || terminal_codes.iter().any(|&c| c > max_code)
            || symbol_count > MAX_SYMBOLS
        {
            return Err(bad("head fields out of range".into()));
        }
        // Canonical order: the first symbols have the shortest codes.
        let lengths: Vec<u8> = (1..=MAX_CODE_LEN as u8)
            .zip(&per_length)
            .flat_map(|(length, &count)| std::iter::repeat_n(length, usize::from(count)))
            .chain(std::iter::repeat_n(0, symbol_count - coded))
            .collect();
        let (symbols, spans) =
            symbol_table(&entries, &terminal_codes).map_err(|why| bad(why.into()))?;
        let decoder = Decoder::new(&lengths).ok_or_else(|| bad("bad code lengths".into()))?;
        let index_entries = positions.div_ceil(1 << step_bits);
        let counts_offset = place.head_offset + u64::from(place.head_len);
        let index_offset = counts_offset + counts_len;
        let tables_len = counts_len + index_entries * INDEX_ENTRY_LEN as u64;
        if index_offset + index_entries * INDEX_ENTRY_LEN as u64 != place.end {
            return Err(bad("counts and index do not fit".into()));
        }
        let chunks = tables_len.div_ceil(CHUNK_LEN as u64) as usize;
        let chunk_crcs: Vec<u32> = take(4 * chunks)?
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if !fields.get().is_empty() {
            return Err(bad("head too long".into()));
        }
        Ok(StreamReader {
            id,
            place,
            positions,
            symbols,
            spans,
            decoder,
            step_bits,
            counts_offset,
            index_offset,
            index_entries,
            chunk_crcs,
            checked: bits(chunks as u64),
            verified: bits(u64::from(place.block_count)),
        })
    }

    fn corrupt(&self, block: u64) -> FormatError {
        FormatError::Block {
            section: self.id.section,
            turn: self.id.turn_name(),
            block: block as usize,
        }
    }

    /// `len` bytes of counts or index at `offset` (absolute), their
    /// chunks checked first. Inlined into its callers: it is on every
    /// read's path, and returning the bytes from a call stalled the load
    /// that takes them (a store the processor could not forward).
    #[inline(always)]
    fn table_bytes<'s, S: Source + ?Sized>(
        &self,
        source: &'s S,
        offset: u64,
        len: usize,
    ) -> Result<Cow<'s, [u8]>, FormatError> {
        let rel = offset - self.counts_offset;
        let first = (rel / CHUNK_LEN as u64) as usize;
        let last = ((rel + len as u64 - 1) / CHUNK_LEN as u64) as usize;
        if !(first..=last).all(|chunk| self.chunk_checked(chunk)) {
            self.check_chunks(source, first..=last)?;
        }
        read(source, offset, len)
    }

    /// Check the counts and index chunks in `chunks` not checked yet
    /// against their CRC-32s: once each while the file is open.
    #[cold]
    #[inline(never)]
    fn check_chunks<S: Source + ?Sized>(
        &self,
        source: &S,
        chunks: std::ops::RangeInclusive<usize>,
    ) -> Result<(), FormatError> {
        for chunk in chunks {
            if self.chunk_checked(chunk) {
                continue;
            }
            let start = self.counts_offset + (chunk * CHUNK_LEN) as u64;
            let end = (start + CHUNK_LEN as u64).min(self.place.end);
            let bytes = read(source, start, (end - start) as usize)?;
            if CRC32.checksum(&bytes) != self.chunk_crcs[chunk] {
                return Err(FormatError::Layout {
                    section: self.id.section,
                    reason: format!(
                        "{} to move: block counts or index bytes {start}..{end} are corrupt",
                        self.id.turn_name()
                    ),
                });
            }
            self.checked[chunk / 64].fetch_or(1 << (chunk % 64), Ordering::Relaxed);
        }
        Ok(())
    }

    /// Whether counts and index chunk `chunk` passed its check already.
    #[inline(always)]
    fn chunk_checked(&self, chunk: usize) -> bool {
        self.checked[chunk / 64].load(Ordering::Relaxed) & 1 << (chunk % 64) != 0
    }

    /// The block holding `position`, and the position's offset in it.
    fn locate<S: Source + ?Sized>(
        &self,
        source: &S,
        position: u64,
    ) -> Result<(u64, u64), FormatError> {
        let entry = position >> self.step_bits;
        debug_assert!(entry < self.index_entries);
        let bytes = self.table_bytes(
            source,
            self.index_offset + entry * INDEX_ENTRY_LEN as u64,
            INDEX_ENTRY_LEN,
        )?;
        let mut block = u64::from(u32_at(&bytes, 0));
        let mut offset = u64::from(u16_at(&bytes, 4)) + (position - (entry << self.step_bits));
        // Walk the counts a chunk's worth at a time.
        loop {
            if block >= u64::from(self.place.block_count) {
                return Err(self.corrupt(block));
            }
            let in_chunk = CHUNK_LEN as u64 / 2 - block % (CHUNK_LEN as u64 / 2);
            let run = in_chunk.min(u64::from(self.place.block_count) - block);
            let counts =
                self.table_bytes(source, self.counts_offset + 2 * block, 2 * run as usize)?;
            for pair in counts.chunks_exact(2) {
                let count = u64::from(u16::from_le_bytes([pair[0], pair[1]]));
                if offset < count {
                    return Ok((block, offset));
                }
                offset -= count;
                block += 1;
            }
        }
    }

    /// The bytes of `block`, its checksum checked the first time.
    fn block<'s, S: Source + ?Sized>(
        &self,
        source: &'s S,
        block: u64,
    ) -> Result<Cow<'s, [u8]>, FormatError> {
        let len = self.place.block_len;
        let bytes = read(source, self.place.blocks_offset + block * len as u64, len)?;
        let (word, bit) = ((block / 64) as usize, 1u64 << (block % 64));
        if self.verified[word].load(Ordering::Relaxed) & bit == 0 {
            if CRC16.checksum(&bytes[..len - 2]) != u16_at(&bytes, len - 2) {
                return Err(self.corrupt(block));
            }
            self.verified[word].fetch_or(bit, Ordering::Relaxed);
        }
        Ok(bytes)
    }

    /// The code at `position`.
    pub(super) fn code_at<S: Source + ?Sized>(
        &self,
        source: &S,
        position: u64,
    ) -> Result<u16, FormatError> {
        let (block, offset) = self.locate(source, position)?;
        let (symbol, inside) = self.symbol_in(source, block, offset)?;
        Ok(self.descend(symbol, inside))
    }

    /// The symbol holding `offset` in `block` and the offset inside it,
    /// decoding from the block's start.
    fn symbol_in<S: Source + ?Sized>(
        &self,
        source: &S,
        block: u64,
        mut offset: u64,
    ) -> Result<(u16, u32), FormatError> {
        let bytes = self.block(source, block)?;
        let mut bits = Bits::new(&bytes[..bytes.len() - 2]);
        loop {
            let (symbol, span) = self
                .next_symbol(&mut bits)
                .ok_or_else(|| self.corrupt(block))?;
            if offset < span {
                return Ok((symbol, offset as u32));
            }
            offset -= span;
        }
    }

    /// The code at `position`, its block's symbols held in `cache` as
    /// `file`'s: the block's first read decodes up to the position, its
    /// second decodes it whole, and later reads find the symbol by a binary
    /// search while the cache holds it (see the decoded module).
    pub(super) fn code_at_held<S: Source + ?Sized>(
        &self,
        source: &S,
        position: u64,
        cache: &DecodedBlocks,
        file: u64,
    ) -> Result<u16, FormatError> {
        let (block, offset) = self.locate(source, position)?;
        let (symbol, inside) = cache.symbol_at(
            file,
            block as u32,
            offset,
            || self.symbol_in(source, block, offset),
            || self.decode_block(source, block),
            || self.corrupt(block),
        )?;
        Ok(self.descend(symbol, inside))
    }

    /// Every symbol of `block` with where it ends in the block, after its
    /// checksum.
    fn decode_block<S: Source + ?Sized>(
        &self,
        source: &S,
        block: u64,
    ) -> Result<DecodedBlock, FormatError> {
        let count = u64::from(u16_at(
            &self.table_bytes(source, self.counts_offset + 2 * block, 2)?,
            0,
        ));
        let bytes = self.block(source, block)?;
        let mut bits = Bits::new(&bytes[..bytes.len() - 2]);
        // Room for two symbols a byte: no growing for most blocks.
        let mut symbols = DecodedBlock::with_capacity(2 * bytes.len());
        let mut end = 0;
        while end < count {
            let (symbol, span) = self
                .next_symbol(&mut bits)
                .ok_or_else(|| self.corrupt(block))?;
            end += span;
            if end > count {
                return Err(self.corrupt(block));
            }
            symbols.push(end, symbol);
        }
        Ok(symbols)
    }

    /// The codes at `positions`, given in any order: sorted, so that each
    /// block is decoded at most once, forward, for all the positions it
    /// holds (for readers that go through a table in another order than
    /// the stream's: a mirrored side, a DTZ stream in its own order).
    pub(super) fn codes_at<S: Source + ?Sized>(
        &self,
        source: &S,
        positions: &[u64],
    ) -> Result<Vec<u16>, FormatError> {
        let mut order: Vec<usize> = (0..positions.len()).collect();
        order.sort_unstable_by_key(|&k| positions[k]);
        let mut out = vec![0; positions.len()];
        let mut next = 0;
        while let Some(&k) = order.get(next) {
            let (block, offset) = self.locate(source, positions[k])?;
            let start = positions[k] - offset;
            let count = u64::from(u16_at(
                &self.table_bytes(source, self.counts_offset + 2 * block, 2)?,
                0,
            ));
            let bytes = self.block(source, block)?;
            let mut bits = Bits::new(&bytes[..bytes.len() - 2]);
            // The symbol last decoded, standing for `at..at + span`.
            let (mut symbol, mut at, mut span) = (0, start, 0);
            while let Some(&k) = order.get(next) {
                let position = positions[k];
                if position >= start + count {
                    break;
                }
                while position >= at + span {
                    at += span;
                    (symbol, span) = self
                        .next_symbol(&mut bits)
                        .ok_or_else(|| self.corrupt(block))?;
                }
                out[k] = self.descend(symbol, (position - at) as u32);
                next += 1;
            }
        }
        Ok(out)
    }

    /// The next symbol of `bits` and the positions it stands for; `None`
    /// if the bits are no code or run past the payload. Small and inlined:
    /// a probe runs it for every symbol before its position.
    #[inline(always)]
    fn next_symbol(&self, bits: &mut Bits<'_>) -> Option<(u16, u64)> {
        let symbol = bits.symbol(&self.decoder)?;
        Some((symbol, u64::from(self.spans[usize::from(symbol)])))
    }

    /// The code at `offset` inside `symbol`.
    fn descend(&self, mut symbol: u16, mut offset: u32) -> u16 {
        loop {
            let s = self.symbols[usize::from(symbol)];
            if s.right == NO_PAIR {
                return s.left;
            }
            let left = u32::from(self.spans[usize::from(s.left)]);
            if offset < left {
                symbol = s.left;
            } else {
                offset -= left;
                symbol = s.right;
            }
        }
    }

    /// `len` codes from `start`, decoded in one pass (for readers that go
    /// through a table: the solver's sub-tables, the deep check).
    pub(super) fn codes<S: Source + ?Sized>(
        &self,
        source: &S,
        start: u64,
        len: usize,
    ) -> Result<Vec<u16>, FormatError> {
        let mut out = Vec::with_capacity(len);
        if len == 0 {
            return Ok(out);
        }
        let (mut block, mut skip) = self.locate(source, start)?;
        let mut stack = Vec::new();
        while out.len() < len {
            let bytes = self.block(source, block)?;
            let payload = &bytes[..bytes.len() - 2];
            let count = {
                let c = self.table_bytes(source, self.counts_offset + 2 * block, 2)?;
                u64::from(u16_at(&c, 0))
            };
            let mut decoded = 0u64;
            let mut bits = Bits::new(payload);
            while decoded < count && out.len() < len {
                let (symbol, span) = self
                    .next_symbol(&mut bits)
                    .ok_or_else(|| self.corrupt(block))?;
                decoded += span;
                if skip >= span {
                    skip -= span;
                    continue;
                }
                stack.push(symbol);
                while let Some(s) = stack.pop() {
                    let sym = self.symbols[usize::from(s)];
                    let span = u64::from(self.spans[usize::from(s)]);
                    if skip >= span {
                        skip -= span;
                    } else if sym.right == NO_PAIR {
                        let run = (span - skip).min((len - out.len()) as u64);
                        out.extend(std::iter::repeat_n(sym.left, run as usize));
                        skip = 0;
                        if out.len() == len {
                            break;
                        }
                    } else {
                        stack.push(sym.right);
                        stack.push(sym.left);
                    }
                }
                stack.clear();
            }
            if decoded > count {
                return Err(self.corrupt(block));
            }
            block += 1;
        }
        Ok(out)
    }

    /// Check every block decodes to exactly its count of positions, a
    /// segment per task (a six-piece stream holds 7.75 G positions); the
    /// error of the first bad segment, whatever the threads.
    pub(super) fn verify<S: Source + ?Sized>(&self, source: &S) -> Result<(), FormatError> {
        let tables = self.place.end - self.counts_offset;
        if tables > 0 {
            self.table_bytes(source, self.counts_offset, tables as usize)?;
        }
        let segments: Vec<Result<(), FormatError>> = (0..self.positions.div_ceil(SEGMENT))
            .into_par_iter()
            .map(|segment| {
                let at = segment * SEGMENT;
                let len = (self.positions - at).min(SEGMENT) as usize;
                let codes = self.codes(source, at, len)?;
                debug_assert_eq!(codes.len(), len);
                Ok(())
            })
            .collect();
        segments.into_iter().collect()
    }
}

/// A block's payload read a code at a time, most significant bit first,
/// through a 64-bit buffer topped up a few bytes at a time (the codes'
/// chain of dependent steps is then one table lookup and one shift).
struct Bits<'a> {
    payload: &'a [u8],
    /// The next bits, first at the top; the top `valid` of them count.
    buffer: u64,
    valid: u32,
    /// The payload's byte that follows the counted bits.
    next: usize,
    /// Bits taken so far (past the payload's length means corrupt).
    taken: usize,
}

impl<'a> Bits<'a> {
    fn new(payload: &'a [u8]) -> Bits<'a> {
        Bits {
            payload,
            buffer: 0,
            valid: 0,
            next: 0,
            taken: 0,
        }
    }

    /// Top the buffer up to at least 56 counted bits with whole bytes
    /// (zeros past the payload's end). Bits below the counted ones may be
    /// set too: they are the payload's next bits, so a later top-up ORs
    /// the same values over them.
    #[inline(always)]
    fn refill(&mut self) {
        let word = match self.payload.get(self.next..self.next + 8) {
            Some(b) => u64::from_be_bytes(b.try_into().expect("8 bytes")),
            None => {
                let mut b = [0u8; 8];
                let rest = self.payload.get(self.next..).unwrap_or(&[]);
                b[..rest.len()].copy_from_slice(rest);
                u64::from_be_bytes(b)
            }
        };
        self.buffer |= word >> self.valid;
        let bytes = (63 - self.valid) / 8;
        self.next += bytes as usize;
        self.valid += 8 * bytes;
    }

    /// The next symbol; `None` if the bits are no code or run past the
    /// payload.
    #[inline(always)]
    fn symbol(&mut self, decoder: &Decoder) -> Option<u16> {
        const _: () = assert!(MAX_CODE_LEN <= 56);
        if self.valid < MAX_CODE_LEN {
            self.refill();
        }
        let (symbol, len) = decoder.decode(self.buffer)?;
        self.buffer <<= len;
        self.valid -= len;
        self.taken += len as usize;
        if self.taken > self.payload.len() * 8 {
            return None;
        }
        Some(symbol)
    }
}

fn read<S: Source + ?Sized>(
    source: &S,
    offset: u64,
    len: usize,
) -> Result<Cow<'_, [u8]>, FormatError> {
    source
        .read_at(offset, len)
        .map_err(|source| FormatError::Read { offset, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held-out windows lie in the stream, aligned; evenly spread ones
    /// fall in step with the digits of an order led by a king, the
    /// scattered ones a thorough search adds do not. KRNNvK in `K|kRNN`:
    /// the white king's square in the triangle (10), then Black's king's
    /// square (64), the rook's and the knights' (64 each): windows of 2^20
    /// positions each hold four squares of Black's king.
    #[test]
    fn scattered_held_out_windows_see_both_halves_of_the_board() {
        let n = 10 << 24;
        let len = HELD_OUT_WINDOW;
        let black_king_files = |windows: HeldOutWindows| -> Vec<u64> {
            let starts = windows.starts(n, len);
            assert!(starts.iter().all(|&s| s % len == 0 && s + len <= n));
            let mut distinct = starts.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), starts.len(), "no window twice");
            starts.iter().map(|&s| (s >> 18) % 64 % 8).collect()
        };
        let even = black_king_files(HeldOutWindows::Even);
        assert_eq!(even.len() as u64, HELD_OUT_WINDOWS);
        assert!(
            even.iter().all(|&file| file < 4),
            "every even window holds Black's king on the a- to d-files"
        );
        let both = black_king_files(HeldOutWindows::EvenAndScattered);
        assert_eq!(both.len() as u64, 2 * HELD_OUT_WINDOWS);
        assert_eq!(both[..even.len()], even[..], "the even ones first");
        let scattered = &both[even.len()..];
        assert!(scattered.iter().any(|&file| file < 4));
        assert!(scattered.iter().any(|&file| file >= 4));
    }

    /// A held-out estimate on both kinds of window gives, as its even
    /// figure, exactly the estimate on the even windows alone (a default
    /// build's judgment, which a thorough search also encodes whole).
    #[test]
    fn the_even_figure_is_the_default_builds_estimate() {
        let n: u64 = 1 << 20;
        let codes = |start: u64, len: usize| -> Vec<u16> {
            (start..start + len as u64)
                .map(|i| ((i / 7) % 5 + (i / 4_099) % 3) as u16)
                .collect()
        };
        let grammar = stream_grammar(n, &codes, Section::Dtz, || (0..7).collect());
        let even = held_out_bytes(n, &grammar, HeldOutWindows::Even, &codes);
        let both = held_out_bytes(n, &grammar, HeldOutWindows::EvenAndScattered, &codes);
        assert_eq!(even.even, even.all);
        assert_eq!(both.even, even.all);
        assert_ne!(both.all, both.even, "the scattered windows count too");
    }

    /// The first half of a terminal's entry in these tests.
    const TERMINAL: u16 = 0xfff;

    /// Head entries from `(a, b)` halves, `(TERMINAL, t)` for terminal `t`.
    fn entries(halves: &[(u16, u16)]) -> Vec<Entry> {
        halves
            .iter()
            .map(|&(a, b)| match a {
                TERMINAL => Entry::Terminal(b),
                _ => Entry::Pair(a, b),
            })
            .collect()
    }

    /// Pairs may name later symbols (canonical numbering); lengths follow
    /// the pairs; a run of one code reads as that code; a loop, a missing
    /// symbol or terminal and a symbol over [`MAX_SYMBOL_LEN`] are errors,
    /// never a hang.
    #[test]
    fn head_symbols_are_checked() {
        // 0 = (4, 3): 7 7 7 9; 1 = terminal 0 (code 7); 2 = terminal 1
        // (code 9); 3 = (1, 2): 7 9; 4 = (1, 1): 7 7.
        let (symbols, spans) = symbol_table(
            &entries(&[(4, 3), (TERMINAL, 0), (TERMINAL, 1), (1, 2), (1, 1)]),
            &[7, 9],
        )
        .expect("sound");
        let described: Vec<(u32, u16, u16)> = symbols
            .iter()
            .zip(&spans)
            .map(|(s, &span)| (u32::from(span), s.left, s.right))
            .collect();
        assert_eq!(
            described,
            [
                (4, 4, 3),
                (1, 7, NO_PAIR),
                (1, 9, NO_PAIR),
                (2, 1, 2),
                (2, 7, NO_PAIR)
            ]
        );
        for (halves, why) in [
            (vec![(0, 1), (TERMINAL, 0)], "the pairs loop"),
            (vec![(2, 1), (TERMINAL, 0), (0, 1)], "the pairs loop"),
            (vec![(TERMINAL, 1)], "an entry names no terminal"),
            (vec![(TERMINAL, 0), (0, 2)], "a pair names no symbol"),
        ] {
            assert_eq!(symbol_table(&entries(&halves), &[7]).err(), Some(why));
        }
        // 16 doublings of one position pass 65,535, 15 do not.
        let mut halves = vec![(TERMINAL, 0)];
        halves.extend((0..16).map(|s| (s, s)));
        assert_eq!(
            symbol_table(&entries(&halves), &[7]).err(),
            Some("a symbol is too long")
        );
        halves.pop();
        assert_eq!(
            u32::from(symbol_table(&entries(&halves), &[7]).expect("15").1[15]),
            1 << 15
        );
    }

    /// A larger stream's sample is [`SAMPLE_WINDOWS`] windows of equal
    /// length, [`SAMPLE`] positions in all, spread from its first position
    /// to its last.
    #[test]
    fn the_sample_spans_the_stream_in_equal_windows() {
        let n = 10 * SAMPLE + 12_345;
        let codes = |start: u64, len: usize| {
            (start..start + len as u64)
                .map(|i| (i % 65_521) as u16)
                .collect()
        };
        let windows = sample_windows(n, &codes);
        assert_eq!(windows.len() as u64, SAMPLE_WINDOWS);
        assert!(
            windows
                .iter()
                .all(|w| w.len() as u64 == SAMPLE / SAMPLE_WINDOWS)
        );
        assert_eq!(windows[0], codes(0, windows[0].len()));
        let last = windows.last().expect("windows");
        assert_eq!(*last, codes(n - last.len() as u64, last.len()));
    }

    /// A stream over [`SAMPLE`] positions that never holds a code it may
    /// hold in another order: the grammar has it as a terminal, which gets
    /// no Huffman code, so the blocks are those without it.
    #[test]
    fn a_code_the_stream_never_holds_is_a_terminal_without_a_code() {
        let n = 2 * SAMPLE;
        let codes = |start: u64, len: usize| {
            (start..start + len as u64)
                .map(|i| (i % 7 / 3) as u16)
                .collect()
        };
        let grammar = stream_grammar(n, &codes, Section::Wdl, || vec![0, 1, 2, 9]);
        assert_eq!(grammar.terminals, [0, 1, 2, 9]);
        let without = stream_grammar(n, &codes, Section::Wdl, || vec![0, 1, 2]);
        let stream = encode_stream(n, 64, &grammar, &codes);
        assert!(stream.block_count > 1);
        assert_eq!(stream.blocks, encode_stream(n, 64, &without, &codes).blocks);
    }

    /// A small stream judged whole has the grammar the writer builds for
    /// it, and the bytes it estimates are the blocks' payload and the
    /// grammar's three bytes a symbol, less what blocks waste at their
    /// ends and their checks.
    #[test]
    fn a_small_stream_judged_whole_has_the_writers_grammar_and_bytes() {
        let n = (1 << 21) + 12_345;
        // Runs of pseudo-random lengths and codes, as a WDL stream has.
        let mut states = crate::format::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut runs = Vec::with_capacity(n as usize);
        while runs.len() < n as usize {
            let state = states.next().expect("endless");
            let len = (state % 40 + 1) as usize;
            runs.extend(std::iter::repeat_n((state >> 32) as u16 % 5, len));
        }
        runs.truncate(n as usize);
        let codes = |start: u64, len: usize| runs[start as usize..][..len].to_vec();
        for section in [Section::Wdl, Section::Dtz] {
            let (grammar, estimate) = whole_stream_grammar(n, &codes, section);
            assert_eq!(
                grammar,
                stream_grammar(n, &codes, section, || unreachable!("a small stream"))
            );
            let stream = encode_stream(n, 128, &grammar, &codes);
            let written = (stream.blocks.len() + 3 * grammar.symbol_count()) as f64;
            // 2 % here: 677 blocks of 128 bytes, each with its check.
            assert!(
                estimate <= written && written <= 1.05 * estimate,
                "{section:?}: {estimate} against {written}"
            );
        }
    }

    /// A stream of long runs fills a block's positions long before its
    /// bytes and is written in the shortest blocks; one that varies at
    /// every position in the longest allowed. Either length is the one of
    /// the fewest bytes, counted as packing them takes, and the blocks fill
    /// the space the reader computes it from.
    #[test]
    fn each_stream_takes_the_block_length_of_the_fewest_bytes() {
        let n = 1 << 21;
        let runs = |start: u64, len: usize| {
            (start..start + len as u64)
                .map(|i| u16::from(i % 600_000 < 300_000))
                .collect()
        };
        let noise: Vec<u16> = crate::format::xorshift(0x2545_f491_4f6c_dd1d)
            .take(n as usize)
            .map(|state| (state % 50) as u16)
            .collect();
        let noisy = |start: u64, len: usize| noise[start as usize..][..len].to_vec();
        for (codes, expected) in [(&runs as Codes<'_>, 16), (&noisy, 128)] {
            let grammar = stream_grammar(n, codes, Section::Wdl, || unreachable!("a small stream"));
            let stream = encode_stream(n, 128, &grammar, codes);
            assert_eq!(stream.block_len, expected);
            assert_eq!(stream.blocks.len(), stream.block_count as usize * expected);
            let lens = symbol_lens(&grammar);
            let coded = coded_symbols(n, &grammar, codes);
            let bytes = |len: usize| {
                let packed = pack_blocks(n, len, &coded.symbols, &coded.codes, &lens);
                packed.blocks.len() + packed.counts.len()
            };
            for len in [16, 32, 64, 128] {
                assert!(bytes(expected) <= bytes(len), "{expected} against {len}");
                // Counting the blocks gives the bytes packing them takes.
                let counted = packed_bytes(len, &coded.symbols, &coded.codes, &lens);
                assert_eq!(counted, bytes(len) as u64, "{len}");
            }
        }
    }
}
