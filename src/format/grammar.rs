//! The symbol grammar of a stream (Re-Pair): every symbol is either a
//! terminal (one stored code) or a pair of earlier symbols, so a symbol
//! stands for a run of codes, and a long run of equal codes or a repeated
//! pattern becomes one symbol.
//!
//! The writer builds the grammar from a sample of the stream: it counts
//! adjacent pairs once, makes the most frequent ones that share no symbol
//! new symbols, replaces them (left to right, greedily, updating the
//! counts around each replacement) and repeats, pass after pass, until
//! pairs are rare or [`MAX_SYMBOLS`] are made. It then encodes the whole stream one
//! segment at a time by replaying the same passes, so memory stays
//! bounded and segments can be encoded in parallel; the result is the
//! same for any thread count.

use std::{
    collections::HashMap,
    hash::{BuildHasherDefault, Hasher},
};

/// Symbols a grammar may have (terminals and pairs): a reader keeps them
/// while the file is open, a head names a symbol in 12 bits with one
/// value marking a terminal, its decoder's table entries hold 12-bit
/// symbols, and more buy little (KRBvKR: 16,384 symbols 1.9 % fewer
/// bytes, see BENCHMARKS.md).
pub(super) const MAX_SYMBOLS: usize = 4095;

/// The most codes one symbol may stand for (a block covers at most as
/// many positions, see the stream module).
pub(super) const MAX_SYMBOL_LEN: u32 = 65_535;

/// Pairs a pass looks at: the most frequent ones. It makes symbols of
/// those that share no symbol with a more frequent one, so that replacing
/// them at once is replacing them one after the other (KRNvKR: 3.11 MB
/// when a pass made symbols of all 64, 2.70 MB now; see BENCHMARKS.md).
const PAIRS_PER_PASS: usize = 64;

/// A pair is worth a symbol if it occurs about this often in the whole
/// stream (a symbol costs three bytes in the file, and saves a few bits
/// where it stands for its pair): the 3-4 set is 5,444,372 bytes with 8,
/// and 0.6 % smaller with 4 (5,411,504; 5: 5,413,543, 6: 5,416,445, 3:
/// 5,427,851), but a reader then parses 1.4 times the symbols on a
/// stream's first probe: the engine workload's first 1,000 WDL probes over
/// the 3-4 set took 1.6-1.9× Syzygy's time with 4 and 1.3× with 8 (see
/// BENCHMARKS.md). A large table's grammar is built from a sample, where
/// the count scales down, to 2 at least.
const MIN_PAIR_COUNT: u64 = 8;

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
    /// `scale` times the stream's length. Returns it with the sample's
    /// segments as its symbols (what its encoder makes of them), rewritten
    /// in place: a five-piece stream's sample is 32 MB, so it is not
    /// copied.
    pub(super) fn build(
        terminals: Vec<u16>,
        sample: Vec<Vec<u16>>,
        scale: f64,
    ) -> (Grammar, Vec<Vec<u16>>) {
        let min_count = ((MIN_PAIR_COUNT as f64 * scale).ceil() as u32).max(2);
        Self::build_limited(terminals, sample, MAX_SYMBOLS, min_count)
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
        // Counted once, then kept up to date as pairs are replaced.
        let mut counts: PairMap<u32> = PairMap::default();
        for seq in &seqs {
            for w in seq.windows(2) {
                *counts.entry(key(w[0], w[1])).or_default() += 1;
            }
        }
        while grammar.symbol_count() < max_symbols {
            let mut best: Vec<(u32, u32)> = counts
                .iter()
                .filter(|&(&k, &c)| {
                    let (l, r) = unkey(k);
                    c >= min_count && lens[usize::from(l)] + lens[usize::from(r)] <= MAX_SYMBOL_LEN
                })
                .map(|(&k, &c)| (c, k))
                .collect();
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
            // The pairs share no symbol: each left symbol starts one at most.
            let mut by_left = vec![(NO_SYMBOL, NO_SYMBOL); grammar.symbol_count()];
            for &(_, k) in &best {
                let (l, r) = unkey(k);
                by_left[usize::from(l)] = (r, grammar.symbol_count() as u16);
                grammar.pairs.push((l, r));
                lens.push(lens[usize::from(l)] + lens[usize::from(r)]);
            }
            grammar.passes.push(best.len());
            for seq in &mut seqs {
                replace_counting(seq, &by_left, &mut counts);
            }
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
    pub(super) fn encoder(&self) -> Encoder {
        let mut at = self.terminals.len();
        let passes = self
            .passes
            .iter()
            .map(|&made| {
                let pairs =
                    (at..at + made).map(|s| (self.pairs[s - self.terminals.len()], s as u16));
                at += made;
                PassTable::new(pairs, self.symbol_count())
            })
            .collect();
        Encoder {
            symbol_of: self.symbol_of(),
            passes,
        }
    }
}

/// Encodes segments of a stream with a grammar.
pub(super) struct Encoder {
    /// Each code's terminal symbol.
    symbol_of: Vec<u16>,
    /// The pairs each pass made.
    passes: Vec<PassTable>,
}

impl Encoder {
    /// The symbols of one segment of codes.
    pub(super) fn encode(&self, codes: &[u16]) -> Vec<u16> {
        let mut seq = codes.to_vec();
        to_terminals(&self.symbol_of, &mut seq);
        for pass in &self.passes {
            replace(&mut seq, |l, r| pass.get(l, r));
        }
        // The segment's codes shrank to its symbols: give the rest back,
        // since every segment's symbols are held until the blocks are cut.
        seq.shrink_to_fit();
        seq
    }
}

/// The pairs one pass made: a small open-addressing table, and a bit per
/// symbol that is the left half of one of them (most positions are not).
struct PassTable {
    slots: Vec<(u32, u16)>,
    lefts: Vec<u64>,
}

impl PassTable {
    const EMPTY: u32 = u32::MAX;

    fn new(pairs: impl Iterator<Item = ((u16, u16), u16)>, symbols: usize) -> PassTable {
        let pairs: Vec<_> = pairs.collect();
        let mut slots = vec![(Self::EMPTY, 0); (4 * pairs.len()).next_power_of_two().max(16)];
        let mut lefts = vec![0u64; symbols.div_ceil(64)];
        for &((l, r), symbol) in &pairs {
            lefts[usize::from(l) / 64] |= 1 << (l % 64);
            let mask = slots.len() - 1;
            let mut i = Self::slot(key(l, r), mask);
            while slots[i].0 != Self::EMPTY {
                i = (i + 1) & mask;
            }
            slots[i] = (key(l, r), symbol);
        }
        PassTable { slots, lefts }
    }

    fn slot(key: u32, mask: usize) -> usize {
        (key.wrapping_mul(0x9e37_79b1) >> 8) as usize & mask
    }

    #[inline]
    fn get(&self, l: u16, r: u16) -> Option<u16> {
        if self.lefts[usize::from(l) / 64] & (1 << (l % 64)) == 0 {
            return None;
        }
        let mask = self.slots.len() - 1;
        let k = key(l, r);
        let mut i = Self::slot(k, mask);
        loop {
            match self.slots[i] {
                (Self::EMPTY, _) => return None,
                (found, symbol) if found == k => return Some(symbol),
                _ => i = (i + 1) & mask,
            }
        }
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

/// Replace pairs left to right, greedily, in place.
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

/// No symbol (symbols are below [`MAX_SYMBOLS`]).
const NO_SYMBOL: u16 = u16::MAX;

/// Replace pairs left to right, greedily, in place, as [`replace`] does:
/// `by_left[l]` is `(r, made)` for the pair `(l, r)` that becomes `made`.
/// `counts` (of every adjacent pair) is updated for the pairs that change:
/// only those that touch a replaced pair, before or after.
fn replace_counting(seq: &mut Vec<u16>, by_left: &[(u16, u16)], counts: &mut PairMap<u32>) {
    // A pair no longer present leaves the map, which so holds the pairs
    // of the sample as it is now (not every pair it ever had).
    let remove = |counts: &mut PairMap<u32>, l: u16, r: u16| {
        let k = key(l, r);
        let count = counts.get_mut(&k).expect("a counted pair");
        *count -= 1;
        if *count == 0 {
            counts.remove(&k);
        }
    };
    let n = seq.len();
    let (mut read, mut write) = (0, 0);
    // Whether the last step made a symbol.
    let mut made_last = false;
    while read < n {
        // Everything at `read` and after is as it was: writes lag reads,
        // and `seq[read - 1]` is the old value too (overwritten only by
        // itself, before the first replacement).
        let x = seq[read];
        let (r, made) = by_left
            .get(usize::from(x))
            .copied()
            .unwrap_or((NO_SYMBOL, 0));
        if r != NO_SYMBOL && seq.get(read + 1) == Some(&r) {
            if read > 0 && !made_last {
                remove(counts, seq[read - 1], x);
            }
            remove(counts, x, r);
            if let Some(&after) = seq.get(read + 2) {
                remove(counts, r, after);
            }
            if write > 0 {
                *counts.entry(key(seq[write - 1], made)).or_default() += 1;
            }
            seq[write] = made;
            read += 2;
            made_last = true;
        } else {
            if made_last {
                *counts.entry(key(seq[write - 1], x)).or_default() += 1;
            }
            seq[write] = x;
            read += 1;
            made_last = false;
        }
        write += 1;
    }
    seq.truncate(write);
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
        let (g, built) = Grammar::build(vec![0, 2, 3, 4], sample.clone(), 0.5);
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
        for pairs in [[(0u16, 0u16), (1, 2)], [(3, 4), (5, 6)], [(5, 5), (2, 0)]] {
            let mut by_left = vec![(NO_SYMBOL, NO_SYMBOL); usize::from(symbols)];
            for (l, r) in pairs {
                by_left[usize::from(l)] = (r, symbols);
                symbols += 1;
            }
            let mut expected = seqs.clone();
            for seq in &mut expected {
                replace(seq, |l, r| {
                    let (right, made) = by_left[usize::from(l)];
                    (right == r).then_some(made)
                });
            }
            for seq in &mut seqs {
                replace_counting(seq, &by_left, &mut counts);
            }
            assert_eq!(seqs, expected);
            // Every pair present, and no other.
            let mut kept: Vec<(u32, u32)> = counts.iter().map(|(&k, &c)| (k, c)).collect();
            kept.sort_unstable();
            assert_eq!(kept, fresh_counts(&seqs), "after {pairs:?}");
        }
        assert_eq!(seqs[0], [9, 0, 6, 6, 6, 5, 0]);
    }
}
