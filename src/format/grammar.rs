//! The symbol grammar of a stream (Re-Pair): every symbol is either a
//! terminal (one stored code) or a pair of earlier symbols, so a symbol
//! stands for a run of codes, and a long run of equal codes or a repeated
//! pattern becomes one symbol.
//!
//! The writer builds the grammar from a sample of the stream: it counts
//! adjacent pairs once, makes the most frequent ones that share no symbol
//! new symbols, replaces them (left to right, greedily) and repeats, pass
//! after pass, until pairs are rare or its section's limit of symbols is
//! made. The counts are kept up to date, not counted again: a pass gathers
//! how they change in tables ([`PassChanges`]) and applies that to the
//! map of pairs once per pair and neighbour, not once per replacement, and
//! a pair too rare to become a symbol leaves the map for good (it can
//! only get rarer). It then encodes the whole stream one segment at a
//! time by replaying the same passes, so memory stays bounded and
//! segments can be encoded in parallel; the result is the same for any
//! thread count.

use std::{
    collections::{HashMap, hash_map::Entry},
    hash::{BuildHasherDefault, Hasher},
    mem,
};

use super::Section;

/// Symbols a grammar may have (terminals and pairs): a reader keeps them
/// while the file is open, a head's entries name symbols below 16,383
/// (see the entries module), and its decoder's fast table holds the
/// 4,096 symbols with the shortest codes (see the Huffman module). A
/// DTZ stream may have this many (format v15: the five 5-piece tables
/// 2.1 % smaller than with 4,095, the 3-4 set 1.4 %; see BENCHMARKS.md).
pub(super) const MAX_SYMBOLS: usize = 16_383;

/// Symbols a WDL stream's grammar may have: an engine probes WDL in its
/// search, and a stream's first probe parses its whole head, so WDL
/// heads stay as small as in format v14.
const MAX_WDL_SYMBOLS: usize = 4095;

/// The most codes one symbol may stand for (a block covers at most as
/// many positions, see the stream module).
pub(super) const MAX_SYMBOL_LEN: u32 = 65_535;

/// Pairs a pass looks at: the most frequent ones. It makes symbols of
/// those that share no symbol with a more frequent one, so that replacing
/// them at once is replacing them one after the other (KRNvKR: 3.11 MB
/// when a pass made symbols of all 64, 2.70 MB now; see BENCHMARKS.md).
const PAIRS_PER_PASS: usize = 64;

/// A pair of a WDL stream is worth a symbol if it occurs about this often
/// in the whole stream (a symbol costs about two bytes in the file's head,
/// and saves a few bits where it stands for its pair): measured when an
/// entry took three bytes, the 3-4 set is 5,444,372 bytes with 8, and
/// 0.6 % smaller with 4 (5,411,504; 5: 5,413,543, 6: 5,416,445, 3:
/// 5,427,851), but a reader then parses 1.4 times the symbols on a
/// stream's first probe: the engine workload's first 1,000 WDL probes over
/// the 3-4 set took 1.6-1.9× Syzygy's time with 4 and 1.3× with 8 (see
/// BENCHMARKS.md). In format v14, 4 for WDL too took the 3-4 set's WDL
/// 2.8 % smaller and its first 1,000 WDL probes from 1.53-1.58× to
/// 1.75-1.90× Syzygy's time, near the 2× target. A large table's grammar
/// is built from a sample, where the count scales down, to 2 at least.
const WDL_MIN_PAIR_COUNT: u64 = 8;

/// A pair of a DTZ stream is worth a symbol if it occurs about this often:
/// the 3-4 set's DTZ workload took as long with 4 as with 8, within the
/// noise of alternating runs (a DTZ probe reads a WDL head too, and more
/// than one position), and the set's DTZ is smallest with 4 (format v14:
/// 3,542,207 bytes with 8, 3,523,236 with 6, 3,517,481 with 4, 3,518,255
/// with 3, 3,524,605 with 2; see BENCHMARKS.md).
const DTZ_MIN_PAIR_COUNT: u64 = 4;

/// A grammar: terminals, then pairs, in symbol order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Grammar {
    /// The code each terminal symbol stands for, ascending.
    pub terminals: Vec<u16>,
    /// Symbol `terminals.len() + i` is `pairs[i]` (earlier symbols).
    pub pairs: Vec<(u16, u16)>,
    /// How many pairs each pass made, in order (writer only: not stored).
    passes: Vec<usize>,
}

impl Grammar {
    /// Build a grammar for a stream with these distinct `terminals`
    /// (ascending) from `sample` segments of its codes, the sample being
    /// `scale` times the stream's length, of `section` (which sets how
    /// often a pair must occur to become a symbol, and how many symbols
    /// there may be). Returns it with the sample's segments as its symbols
    /// (what its encoder makes of them), rewritten in place: a five-piece
    /// stream's sample is 32 MB, so it is not copied.
    pub(super) fn build(
        terminals: Vec<u16>,
        sample: Vec<Vec<u16>>,
        scale: f64,
        section: Section,
    ) -> (Grammar, Vec<Vec<u16>>) {
        let (min_pair_count, max_symbols) = match section {
            Section::Dtz => (DTZ_MIN_PAIR_COUNT, MAX_SYMBOLS),
            Section::Wdl | Section::Header => (WDL_MIN_PAIR_COUNT, MAX_WDL_SYMBOLS),
        };
        let min_count = ((min_pair_count as f64 * scale).ceil() as u32).max(2);
        Self::build_limited(terminals, sample, max_symbols, min_count)
    }

    /// [`Grammar::build`] with at most `max_symbols` symbols (up to
    /// [`MAX_SYMBOLS`]), of pairs that occur at least `min_count` times in
    /// the sample.
    pub(super) fn build_limited(
        terminals: Vec<u16>,
        sample: Vec<Vec<u16>>,
        max_symbols: usize,
        min_count: u32,
    ) -> (Grammar, Vec<Vec<u16>>) {
        debug_assert!(max_symbols <= MAX_SYMBOLS);
        let mut grammar = Grammar {
            terminals,
            pairs: Vec::new(),
            passes: Vec::new(),
        };
        let symbol_of = grammar.symbol_of();
        let mut seqs = sample;
        for seq in &mut seqs {
            to_terminals(&symbol_of, seq);
        }
        let mut lens: Vec<u32> = vec![1; grammar.terminals.len()];
        // The pairs that may still become symbols, counted once, then kept
        // up to date as pairs are replaced. A pair of old symbols only
        // ever gets rarer, and a pair with a new symbol is counted whole in
        // the pass that makes the symbol: a pair rarer than `min_count`,
        // or too long, never becomes a candidate again and leaves the map
        // for good (most pairs are rare: the passes then scan fewer).
        let min_count = min_count.max(1);
        let candidate = |lens: &[u32], k: u32, count: u32| {
            let (l, r) = unkey(k);
            count >= min_count && lens[usize::from(l)] + lens[usize::from(r)] <= MAX_SYMBOL_LEN
        };
        let mut counts: PairMap<u32> = PairMap::default();
        for seq in &seqs {
            for w in seq.windows(2) {
                *counts.entry(key(w[0], w[1])).or_default() += 1;
            }
        }
        counts.retain(|&k, &mut count| candidate(&lens, k, count));
        let mut changes = PassChanges::default();
        while grammar.symbol_count() < max_symbols {
            let mut best: Vec<(u32, u32)> = counts.iter().map(|(&k, &c)| (c, k)).collect();
            if best.is_empty() {
                break;
            }
            // The most frequent pairs, then those of them that share no
            // symbol with a more frequent one.
            if best.len() > PAIRS_PER_PASS {
                best.select_nth_unstable_by(PAIRS_PER_PASS, |a, b| b.cmp(a));
                best.truncate(PAIRS_PER_PASS);
            }
            best.sort_unstable_by(|a, b| b.cmp(a));
            let mut used = vec![false; grammar.symbol_count()];
            best.retain(|&(_, k)| {
                let (l, r) = unkey(k);
                let (l, r) = (usize::from(l), usize::from(r));
                let free = !used[l] && !used[r];
                if free {
                    used[l] = true;
                    used[r] = true;
                }
                free
            });
            best.truncate(max_symbols - grammar.symbol_count());
            let first_made = grammar.symbol_count() as u16;
            for &(_, k) in &best {
                let (l, r) = unkey(k);
                grammar.pairs.push((l, r));
                lens.push(lens[usize::from(l)] + lens[usize::from(r)]);
            }
            grammar.passes.push(best.len());
            changes.start(
                &grammar.pairs[grammar.pairs.len() - best.len()..],
                first_made,
            );
            for seq in &mut seqs {
                replace_counting(seq, &mut changes);
            }
            changes.apply(&mut counts, |k, count| candidate(&lens, k, count));
        }
        (grammar, seqs)
    }

    /// Terminals plus pairs.
    pub(super) fn symbol_count(&self) -> usize {
        self.terminals.len() + self.pairs.len()
    }

    /// Each code's terminal symbol, indexed by code.
    fn symbol_of(&self) -> Vec<u16> {
        let max = self.terminals.last().map_or(0, |&t| usize::from(t));
        let mut symbol_of = vec![u16::MAX; max + 1];
        for (s, &t) in self.terminals.iter().enumerate() {
            symbol_of[usize::from(t)] = s as u16;
        }
        symbol_of
    }

    /// An encoder replaying this grammar's passes.
    pub(super) fn encoder(&self) -> Encoder<'_> {
        Encoder {
            symbol_of: self.symbol_of(),
            grammar: self,
        }
    }
}

/// Encodes segments of a stream with a grammar.
pub(super) struct Encoder<'g> {
    /// Each code's terminal symbol.
    symbol_of: Vec<u16>,
    /// The grammar whose passes it replays.
    grammar: &'g Grammar,
}

impl Encoder<'_> {
    /// The symbols of one segment of codes.
    pub(super) fn encode(&self, codes: &[u16]) -> Vec<u16> {
        let mut seq = codes.to_vec();
        to_terminals(&self.symbol_of, &mut seq);
        let Grammar {
            terminals,
            pairs,
            passes,
        } = self.grammar;
        let mut pass = PassPairs::default();
        let mut first = 0;
        for &made in passes {
            pass.start(
                &pairs[first..first + made],
                (terminals.len() + first) as u16,
            );
            pass.replace(&mut seq);
            first += made;
        }
        // The segment's codes shrank to its symbols: give the rest back,
        // since every segment's symbols are held until the blocks are cut.
        seq.shrink_to_fit();
        seq
    }
}

/// A map keyed by pairs, with a multiplicative hash (pair keys are not
/// chosen by an adversary, and SipHash would double the build time).
type PairMap<V> = HashMap<u32, V, BuildHasherDefault<PairHasher>>;

/// Hashes a `u32` pair key by one multiplication.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, key: u32) {
        self.0 = u64::from(key).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Rewrite `codes` as their terminal symbols (every code must be a
/// terminal).
fn to_terminals(symbol_of: &[u16], codes: &mut [u16]) {
    for code in codes {
        *code = symbol_of[usize::from(*code)];
    }
}

fn key(l: u16, r: u16) -> u32 {
    (u32::from(l) << 16) | u32::from(r)
}

fn unkey(k: u32) -> (u16, u16) {
    ((k >> 16) as u16, k as u16)
}

/// No symbol (symbols are below [`MAX_SYMBOLS`]).
const NO_SYMBOL: u16 = u16::MAX;

/// Replace the pairs `changes` was started with left to right, greedily,
/// in place, as [`PassPairs::replace`] does, gathering in `changes` how
/// the count of every adjacent pair changes: only the pairs that touch a
/// replaced pair, before or after, and the replaced pairs themselves.
/// The symbols between two replacements are found by a search that only
/// reads, and moved as one copy.
fn replace_counting(seq: &mut Vec<u16>, changes: &mut PassChanges) {
    let n = seq.len();
    let (mut read, mut write) = (0, 0);
    // Whether the last step made a symbol.
    let mut made_last = false;
    loop {
        // Everything at `read` and after is as it was, and so is
        // `seq[read - 1]`: writes lag reads (a copy to the same place
        // leaves it as it was).
        let found = changes.pass.next_pair(&seq[read..]).map(|at| read + at);
        let end = found.unwrap_or(n);
        if end > read {
            if made_last {
                let pair = changes.pass.pair_made(seq[write - 1]);
                changes.count(Side::After, pair, seq[read], Change::New);
            }
            seq.copy_within(read..end, write);
            write += end - read;
            read = end;
            made_last = false;
        }
        if found.is_none() {
            break;
        }
        let pair = changes.pass.pair_of_left(seq[read]);
        // The pair before, unless a replacement just took it.
        if read > 0 && !made_last {
            changes.count(Side::Before, pair, seq[read - 1], Change::Gone);
        }
        changes.replaced[pair] += 1;
        if let Some(&after) = seq.get(read + 2) {
            changes.count(Side::After, pair, after, Change::Gone);
        }
        if write > 0 {
            changes.count(Side::Before, pair, seq[write - 1], Change::New);
        }
        seq[write] = changes.pass.first_made + pair as u16;
        write += 1;
        read += 2;
        made_last = true;
    }
    seq.truncate(write);
}

/// Which neighbour of a pass's pair a count change is about.
#[derive(Clone, Copy)]
enum Side {
    /// The symbol before the pair (or before the symbol it made).
    Before,
    /// The symbol after it.
    After,
}

/// Whether a count change is an old adjacent pair gone or a new one made.
#[derive(Clone, Copy)]
enum Change {
    /// A pair of old symbols, the pass's pair's half and its neighbour.
    Gone = 0,
    /// A pair of the symbol the pass made and its neighbour.
    New = 1,
}

/// The pair-count changes of one pass, gathered by the pass's pair and
/// the neighbouring symbol, then applied to the pair map at once
/// ([`PassChanges::apply`]): one map update per pair and neighbour, not
/// one per replacement. The tables are dense (pairs × symbols) and reused
/// from pass to pass while they are small ([`Cells`]); only the cells a
/// pass touched are read and cleared.
#[derive(Default)]
struct PassChanges {
    /// The pass's pairs.
    pass: PassPairs,
    /// Symbols a neighbour may be: all of them, the pass's own included.
    symbols: usize,
    /// Cell `i * symbols + p`, by [`Side`]: how many `(p, l_i)` are gone
    /// and `(p, made_i)` new (before), `(r_i, p)` gone and `(made_i, p)`
    /// new (after), indexed by [`Change`].
    cells: [Cells; 2],
    /// The cells touched since the pass started, by [`Side`].
    touched: [Vec<u32>; 2],
    /// How many times each pair was replaced.
    replaced: Vec<u32>,
}

/// One pass's pairs, found by their left symbol: a pass's pairs share no
/// symbol, so a symbol starts one of them at most, and a table indexed by
/// symbol finds the next pair to replace with one load per symbol read.
/// Building a grammar and encoding with it replay passes through this.
struct PassPairs {
    /// The pass's pairs, the `i`-th making symbol `first_made + i`.
    pairs: Vec<(u16, u16)>,
    /// The first symbol the pass makes.
    first_made: u16,
    /// The right symbol of the pass's pair each symbol is the left one
    /// of, or [`NO_SYMBOL`].
    right_of: Box<SymbolTable>,
    /// The pass's pair each symbol is the left one of, where it is.
    pair_by_left: Box<SymbolTable>,
}

/// A `u16` for each symbol, with room to index it by a symbol's low 14
/// bits (symbols are below [`MAX_SYMBOLS`]).
type SymbolTable = [u16; SYMBOL_SLOTS];

/// Entries of a [`SymbolTable`].
const SYMBOL_SLOTS: usize = 1 << 14;
const _: () = assert!(MAX_SYMBOLS < SYMBOL_SLOTS);

impl Default for PassPairs {
    fn default() -> PassPairs {
        PassPairs {
            pairs: Vec::new(),
            first_made: 0,
            right_of: Box::new([NO_SYMBOL; SYMBOL_SLOTS]),
            pair_by_left: Box::new([0; SYMBOL_SLOTS]),
        }
    }
}

impl PassPairs {
    /// Start a pass making `pairs` (which share no symbol), the first of
    /// them `first_made`.
    fn start(&mut self, pairs: &[(u16, u16)], first_made: u16) {
        for &(l, _) in &self.pairs {
            self.right_of[usize::from(l)] = NO_SYMBOL;
        }
        for (i, &(l, r)) in pairs.iter().enumerate() {
            debug_assert_eq!(
                self.right_of[usize::from(l)],
                NO_SYMBOL,
                "pairs share a symbol"
            );
            self.right_of[usize::from(l)] = r;
            self.pair_by_left[usize::from(l)] = i as u16;
        }
        self.pairs.clear();
        self.pairs.extend_from_slice(pairs);
        self.first_made = first_made;
    }

    /// Where in `seq` the first of the pass's pairs starts, if anywhere.
    #[inline]
    fn next_pair(&self, seq: &[u16]) -> Option<usize> {
        let right_of: &SymbolTable = &self.right_of;
        seq.windows(2)
            .position(|w| right_of[usize::from(w[0]) % SYMBOL_SLOTS] == w[1])
    }

    /// The index of the pass's pair whose left symbol is `left`.
    #[inline]
    fn pair_of_left(&self, left: u16) -> usize {
        usize::from(self.pair_by_left[usize::from(left) % SYMBOL_SLOTS])
    }

    /// The index of the pass's pair that makes `made`.
    #[inline]
    fn pair_made(&self, made: u16) -> usize {
        usize::from(made - self.first_made)
    }

    /// Replace the pass's pairs in `seq` left to right, greedily, in
    /// place; the symbols between two replacements are found by a search
    /// that only reads, and moved as one copy.
    fn replace(&self, seq: &mut Vec<u16>) {
        let n = seq.len();
        let (mut read, mut write) = (0, 0);
        loop {
            let found = self.next_pair(&seq[read..]).map(|at| read + at);
            let end = found.unwrap_or(n);
            if write < read {
                seq.copy_within(read..end, write);
            }
            write += end - read;
            let Some(at) = found else { break };
            seq[write] = self.first_made + self.pair_of_left(seq[at]) as u16;
            write += 1;
            read = at + 2;
        }
        seq.truncate(write);
    }
}

impl PassChanges {
    /// Start a pass making `pairs` (which share no symbol), the first of
    /// them `first_made`.
    fn start(&mut self, pairs: &[(u16, u16)], first_made: u16) {
        self.pass.start(pairs, first_made);
        self.symbols = usize::from(first_made) + pairs.len();
        let cells = pairs.len() * self.symbols;
        for side in &mut self.cells {
            side.reset(cells);
        }
        self.replaced.clear();
        self.replaced.resize(pairs.len(), 0);
    }

    /// One more `change` of the pair of `pair`'s `side` and `neighbour`.
    #[inline]
    fn count(&mut self, side: Side, pair: usize, neighbour: u16, change: Change) {
        let at = pair * self.symbols + usize::from(neighbour);
        let cell = self.cells[side as usize].get_mut(at);
        if *cell == [0, 0] {
            self.touched[side as usize].push(at as u32);
        }
        cell[change as usize] += 1;
    }

    /// Apply the pass's changes to `counts`, which keeps only the pairs
    /// that `keep` with their count (a counted pair missing from `counts`
    /// was dropped, and stays so), and clear them for the next pass.
    fn apply(&mut self, counts: &mut PairMap<u32>, keep: impl Fn(u32, u32) -> bool) {
        for side in [Side::Before, Side::After] {
            let mut touched = mem::take(&mut self.touched[side as usize]);
            for at in touched.drain(..) {
                let at = at as usize;
                let (pair, neighbour) = (at / self.symbols, (at % self.symbols) as u16);
                let [gone, new] = self.cells[side as usize].take(at);
                let (l, r) = self.pass.pairs[pair];
                let made = self.pass.first_made + pair as u16;
                let (old, made) = match side {
                    Side::Before => (key(neighbour, l), key(neighbour, made)),
                    Side::After => (key(r, neighbour), key(made, neighbour)),
                };
                subtract(counts, old, gone, &keep);
                // The whole count of a pair with the symbol just made.
                if keep(made, new) {
                    let earlier = counts.insert(made, new);
                    debug_assert!(earlier.is_none(), "a pair counted twice");
                }
            }
            self.touched[side as usize] = touched;
        }
        for (&(l, r), &replaced) in self.pass.pairs.iter().zip(&self.replaced) {
            subtract(counts, key(l, r), replaced, &keep);
        }
    }
}

/// The cells of one [`Side`] of [`PassChanges`]: a dense table while a
/// pass has at most [`DENSE_CELLS`] of them, a map beyond. A late pass of
/// a large grammar has a million cells and touches a few thousand: two
/// dense tables of them took the 3-4 set's build 26 MiB more at its peak
/// (two grammars are built at once), and the map is no slower (KQRvKR's
/// build 1.02×, 0.99-1.05; see BENCHMARKS.md).
#[derive(Default)]
struct Cells {
    /// The cells, while dense (kept for the next dense pass).
    dense: Vec<[u32; 2]>,
    /// The touched cells, while sparse.
    sparse: PairMap<[u32; 2]>,
    /// Whether this pass's cells are in `sparse`.
    is_sparse: bool,
}

/// The most cells a pass keeps in a dense table: 2 MiB, as many as the
/// 64 pairs of a pass with 4,096 symbols have.
const DENSE_CELLS: usize = PAIRS_PER_PASS << 12;

impl Cells {
    /// Ready for a pass of `cells` cells, all zero.
    fn reset(&mut self, cells: usize) {
        self.is_sparse = cells > DENSE_CELLS;
        if !self.is_sparse && self.dense.len() < cells {
            self.dense.resize(cells, [0, 0]);
        }
    }

    /// Cell `at`.
    #[inline]
    fn get_mut(&mut self, at: usize) -> &mut [u32; 2] {
        if self.is_sparse {
            self.sparse.entry(at as u32).or_default()
        } else {
            &mut self.dense[at]
        }
    }

    /// Cell `at`, left zero.
    fn take(&mut self, at: usize) -> [u32; 2] {
        if self.is_sparse {
            self.sparse.remove(&(at as u32)).unwrap_or_default()
        } else {
            mem::take(&mut self.dense[at])
        }
    }
}

/// `n` fewer of the pair `k`, if `counts` keeps it, and dropped unless
/// `keep` keeps it with its new count.
fn subtract(counts: &mut PairMap<u32>, k: u32, n: u32, keep: impl Fn(u32, u32) -> bool) {
    if n == 0 {
        return;
    }
    if let Entry::Occupied(mut entry) = counts.entry(k) {
        *entry.get_mut() -= n;
        if !keep(k, *entry.get()) {
            entry.remove();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expand symbols back to codes.
    fn expand(g: &Grammar, symbols: &[u16]) -> Vec<u16> {
        let mut out = Vec::new();
        let mut stack: Vec<u16> = symbols.iter().rev().copied().collect();
        while let Some(s) = stack.pop() {
            let s = usize::from(s);
            if s < g.terminals.len() {
                out.push(g.terminals[s]);
            } else {
                let (l, r) = g.pairs[s - g.terminals.len()];
                stack.push(r);
                stack.push(l);
            }
        }
        out
    }

    /// A pair that occurs 5 times in a whole stream becomes a symbol of a
    /// DTZ grammar (at least [`DTZ_MIN_PAIR_COUNT`]) and not of a WDL one
    /// (at least [`WDL_MIN_PAIR_COUNT`]).
    #[test]
    fn a_dtz_grammar_takes_rarer_pairs_than_a_wdl_one() {
        let codes: Vec<u16> = (0..5).flat_map(|i| [1, 2, 3 + i]).collect();
        let terminals: Vec<u16> = (1..8).collect();
        let pairs = |section| {
            Grammar::build(terminals.clone(), vec![codes.clone()], 1.0, section)
                .0
                .pairs
        };
        // Terminal symbols number the codes 1..=7 from 0.
        assert_eq!(pairs(Section::Dtz), [(0, 1)]);
        assert_eq!(pairs(Section::Wdl), []);
    }

    #[test]
    fn encoding_expands_back_to_the_codes_and_shrinks_patterns() {
        let codes: Vec<u16> = (0..100_000u32)
            .map(|i| match i % 37 {
                0..=20 => 4,
                21..=30 => [0, 2][(i % 2) as usize],
                _ => 3,
            })
            .collect();
        let sample = vec![codes[..50_000].to_vec()];
        let (g, built) = Grammar::build(vec![0, 2, 3, 4], sample.clone(), 0.5, Section::Wdl);
        assert!(!g.pairs.is_empty());
        for (l, r) in &g.pairs {
            assert!(usize::from(*l.max(r)) < g.symbol_count());
        }
        let encoder = g.encoder();
        // The sample's symbols from the build are what the encoder makes.
        assert_eq!(built, [encoder.encode(&sample[0])]);
        for segment in codes.chunks(7_777) {
            let symbols = encoder.encode(segment);
            assert!(symbols.len() * 4 < segment.len(), "{}", symbols.len());
            assert_eq!(expand(&g, &symbols), segment);
        }
    }

    /// A limited grammar stops at its symbol count and makes no pair
    /// rarer than its count, and still encodes what it was built from.
    #[test]
    fn a_limited_grammar_keeps_its_limits() {
        let codes: Vec<u16> = (0..20_000u32)
            .map(|i| ((i * i + i / 3) % 5) as u16)
            .collect();
        let terminals = vec![0, 1, 2, 3, 4];
        let (unlimited, _) =
            Grammar::build_limited(terminals.clone(), vec![codes.clone()], MAX_SYMBOLS, 2);
        assert!(
            unlimited.symbol_count() > 20,
            "{}",
            unlimited.symbol_count()
        );
        let (small, symbols) =
            Grammar::build_limited(terminals.clone(), vec![codes.clone()], 12, 2);
        assert_eq!(small.symbol_count(), 12);
        assert_eq!(expand(&small, &symbols[0]), codes);
        // No adjacent pair of terminals occurs 20,000 times.
        let (none, symbols) =
            Grammar::build_limited(terminals, vec![codes.clone()], MAX_SYMBOLS, 20_000);
        assert_eq!(none.symbol_count(), 5);
        assert_eq!(symbols[0].len(), codes.len());
    }

    /// Replace pairs left to right, greedily, in place, one symbol at a
    /// time: the plain form the passes' replacements must agree with.
    fn replace(seq: &mut Vec<u16>, pair: impl Fn(u16, u16) -> Option<u16>) {
        let mut read = 0;
        let mut write = 0;
        while read < seq.len() {
            let s = seq[read];
            match seq.get(read + 1).and_then(|&next| pair(s, next)) {
                Some(made) => {
                    seq[write] = made;
                    read += 2;
                }
                None => {
                    seq[write] = s;
                    read += 1;
                }
            }
            write += 1;
        }
        seq.truncate(write);
    }

    /// A pass replaces what the plain one-symbol-at-a-time replacement
    /// does: runs of a pair's symbol of odd and even length, a pair at the
    /// very start and end, a sequence without pairs, and one pass after
    /// another on a table reused as the encoder reuses it.
    #[test]
    fn a_pass_replaces_as_the_plain_replacement_does() {
        let noisy: Vec<u16> = (0..5_000u32)
            .map(|i| ((i * i + i / 3) % 6) as u16)
            .collect();
        let seqs = [
            noisy,
            vec![0, 0, 0, 0, 0, 1, 2, 0, 0],
            vec![1, 2, 1, 2, 1, 2],
            vec![3, 4, 5],
            vec![],
            vec![0],
        ];
        let passes: [&[(u16, u16)]; 3] = [&[(0, 0), (1, 2)], &[(6, 3), (4, 5)], &[(7, 6), (9, 0)]];
        for seq in seqs {
            let (mut plain, mut passed) = (seq.clone(), seq);
            let mut pass = PassPairs::default();
            let mut first_made = 6;
            for pairs in passes {
                replace(&mut plain, |l, r| {
                    let i = pairs.iter().position(|&p| p == (l, r))?;
                    Some(first_made + i as u16)
                });
                pass.start(pairs, first_made);
                pass.replace(&mut passed);
                assert_eq!(passed, plain, "{pairs:?}");
                first_made += pairs.len() as u16;
            }
        }
    }

    fn fresh_counts(seqs: &[Vec<u16>]) -> Vec<(u32, u32)> {
        let mut counts: PairMap<u32> = PairMap::default();
        for seq in seqs {
            for w in seq.windows(2) {
                *counts.entry(key(w[0], w[1])).or_default() += 1;
            }
        }
        let mut counts: Vec<(u32, u32)> = counts.into_iter().collect();
        counts.sort_unstable();
        counts
    }

    /// The grammar Re-Pair makes when every pass counts the pairs anew:
    /// what [`Grammar::build_limited`] must make with its kept counts.
    fn recounted_grammar(
        terminals: &[u16],
        mut seqs: Vec<Vec<u16>>,
        max_symbols: usize,
        min_count: u32,
    ) -> (Vec<(u16, u16)>, Vec<Vec<u16>>) {
        let mut symbol_of = vec![u16::MAX; usize::from(*terminals.last().unwrap()) + 1];
        for (s, &t) in terminals.iter().enumerate() {
            symbol_of[usize::from(t)] = s as u16;
        }
        for seq in &mut seqs {
            to_terminals(&symbol_of, seq);
        }
        let mut lens = vec![1u32; terminals.len()];
        let mut pairs: Vec<(u16, u16)> = Vec::new();
        while lens.len() < max_symbols {
            let mut best: Vec<(u32, u32)> = fresh_counts(&seqs)
                .into_iter()
                .filter(|&(k, c)| {
                    let (l, r) = unkey(k);
                    c >= min_count && lens[usize::from(l)] + lens[usize::from(r)] <= MAX_SYMBOL_LEN
                })
                .map(|(k, c)| (c, k))
                .collect();
            if best.is_empty() {
                break;
            }
            best.sort_unstable_by(|a, b| b.cmp(a));
            best.truncate(PAIRS_PER_PASS);
            let mut used = vec![false; lens.len()];
            let mut made = Vec::new();
            for (_, k) in best {
                let (l, r) = unkey(k);
                if !used[usize::from(l)]
                    && !used[usize::from(r)]
                    && lens.len() + made.len() < max_symbols
                {
                    used[usize::from(l)] = true;
                    used[usize::from(r)] = true;
                    made.push((l, r));
                }
            }
            let first = lens.len() as u16;
            for &(l, r) in &made {
                lens.push(lens[usize::from(l)] + lens[usize::from(r)]);
                pairs.push((l, r));
            }
            for seq in &mut seqs {
                replace(seq, |l, r| {
                    made.iter()
                        .position(|&p| p == (l, r))
                        .map(|i| first + i as u16)
                });
            }
        }
        (pairs, seqs)
    }

    /// Kept counts, with rare pairs dropped for good, make the grammar and
    /// the symbols that counting every pass anew makes: long runs, rare
    /// pairs, several segments, and several limits.
    #[test]
    fn kept_counts_make_the_grammar_that_counting_anew_makes() {
        let runs: Vec<u16> = (0..30_000u32).map(|i| ((i / 97) % 3) as u16 * 2).collect();
        let noisy: Vec<u16> = (0..30_000u32)
            .map(|i| ((i * i + i / 5) % 7) as u16 * 2)
            .collect();
        let mixed: Vec<u16> = (0..20_000u32)
            .map(|i| {
                if i % 11 < 6 {
                    4
                } else {
                    ((i * 7) % 5) as u16 * 2
                }
            })
            .collect();
        let terminals: Vec<u16> = (0..7).map(|t| t * 2).collect();
        for seqs in [
            vec![runs.clone()],
            vec![noisy.clone(), runs[..777].to_vec()],
            vec![mixed, noisy, vec![4], runs],
        ] {
            for (max_symbols, min_count) in [(MAX_SYMBOLS, 2), (MAX_SYMBOLS, 8), (100, 20)] {
                let (grammar, symbols) =
                    Grammar::build_limited(terminals.clone(), seqs.clone(), max_symbols, min_count);
                let (pairs, expected) =
                    recounted_grammar(&terminals, seqs.clone(), max_symbols, min_count);
                assert!(pairs.len() > 10, "{}", pairs.len());
                assert_eq!(
                    grammar.pairs, pairs,
                    "{max_symbols} symbols, {min_count} times"
                );
                assert_eq!(symbols, expected);
            }
        }
    }

    /// A grammar of more symbols than a dense table of a pass's count
    /// changes covers ([`DENSE_CELLS`]) keeps its late passes' changes in
    /// a map, and makes the grammar that counting anew makes.
    #[test]
    fn a_grammar_past_the_dense_cells_makes_the_grammar_that_counting_anew_makes() {
        let noise: Vec<u16> = crate::format::xorshift(0x9e37_79b9_7f4a_7c15)
            .take(120_000)
            .map(|state| (state % 16) as u16)
            .collect();
        let terminals: Vec<u16> = (0..16).collect();
        let (grammar, symbols) =
            Grammar::build_limited(terminals.clone(), vec![noise.clone()], MAX_SYMBOLS, 2);
        assert!(
            grammar.symbol_count() > DENSE_CELLS / PAIRS_PER_PASS + 2 * PAIRS_PER_PASS,
            "{} symbols",
            grammar.symbol_count()
        );
        let (pairs, expected) = recounted_grammar(&terminals, vec![noise], MAX_SYMBOLS, 2);
        assert_eq!(grammar.pairs, pairs);
        assert_eq!(symbols, expected);
    }

    /// Counts kept up to date through replacements equal counts made anew,
    /// runs of one symbol (overlapping pairs) and neighbouring replacements
    /// included, and the sequences are what `replace` makes.
    #[test]
    fn replacing_keeps_the_pair_counts() {
        let mut seqs: Vec<Vec<u16>> = vec![
            vec![0, 0, 0, 0, 0, 1, 2, 1, 2, 1, 2, 0, 0, 0],
            (0..5000u32).map(|i| ((i * i + i / 7) % 5) as u16).collect(),
            vec![1, 2],
            vec![3],
        ];
        let mut counts: PairMap<u32> = PairMap::default();
        for (k, c) in fresh_counts(&seqs) {
            counts.insert(k, c);
        }
        let mut symbols = 5u16;
        // One for all passes, as the writer keeps it.
        let mut changes = PassChanges::default();
        for pairs in [[(0u16, 0u16), (1, 2)], [(3, 4), (5, 6)], [(5, 5), (2, 0)]] {
            let first_made = symbols;
            symbols += pairs.len() as u16;
            let mut expected = seqs.clone();
            for seq in &mut expected {
                replace(seq, |l, r| {
                    let i = pairs.iter().position(|&p| p == (l, r))?;
                    Some(first_made + i as u16)
                });
            }
            changes.start(&pairs, first_made);
            for seq in &mut seqs {
                replace_counting(seq, &mut changes);
            }
            changes.apply(&mut counts, |_, count| count > 0);
            assert_eq!(seqs, expected);
            // Every pair present, and no other.
            let mut kept: Vec<(u32, u32)> = counts.iter().map(|(&k, &c)| (k, c)).collect();
            kept.sort_unstable();
            assert_eq!(kept, fresh_counts(&seqs), "after {pairs:?}");
        }
        assert_eq!(seqs[0], [9, 0, 6, 6, 6, 5, 0]);
    }
}
