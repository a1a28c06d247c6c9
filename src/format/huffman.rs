//! Canonical Huffman codes: code lengths from symbol counts (the writer),
//! and a decoder built from the lengths alone (the reader).
//!
//! Codes are canonical: symbols sorted by (length, symbol) get consecutive
//! code values, so a file stores one length byte per symbol and nothing
//! else. Codes are at most [`MAX_CODE_LEN`] bits; bits are read most
//! significant first.

use super::grammar::MAX_SYMBOLS;

/// The longest code, in bits.
pub(super) const MAX_CODE_LEN: u32 = 24;

/// Code lengths for symbols with these `counts` (0: the symbol does not
/// occur and gets no code). Lengths never exceed [`MAX_CODE_LEN`]: if the
/// optimal code is longer, counts are flattened and the code rebuilt. A
/// single occurring symbol gets a 1-bit code.
pub(super) fn code_lengths(counts: &[u64]) -> Vec<u8> {
    let mut counts = counts.to_vec();
    loop {
        let lengths = optimal_lengths(&counts);
        if lengths.iter().all(|&l| u32::from(l) <= MAX_CODE_LEN) {
            return lengths;
        }
        for c in counts.iter_mut().filter(|c| **c > 0) {
            *c = (*c >> 1) | 1;
        }
    }
}

/// Unbounded Huffman code lengths (ties broken by symbol number, so the
/// result is deterministic).
fn optimal_lengths(counts: &[u64]) -> Vec<u8> {
    use std::{cmp::Reverse, collections::BinaryHeap};
    let mut lengths = vec![0u8; counts.len()];
    // Nodes: leaves are the symbols, inner nodes follow; parent links.
    let mut parent: Vec<usize> = Vec::new();
    let mut heap = BinaryHeap::new();
    for (symbol, &count) in counts.iter().enumerate() {
        if count > 0 {
            heap.push(Reverse((count, parent.len(), symbol)));
            parent.push(usize::MAX);
        }
    }
    let leaves: Vec<usize> = (0..counts.len()).filter(|&s| counts[s] > 0).collect();
    match leaves.len() {
        0 => return lengths,
        1 => {
            lengths[leaves[0]] = 1;
            return lengths;
        }
        _ => {}
    }
    while heap.len() > 1 {
        let Reverse((a, node_a, _)) = heap.pop().expect("two nodes");
        let Reverse((b, node_b, _)) = heap.pop().expect("two nodes");
        let node = parent.len();
        parent.push(usize::MAX);
        parent[node_a] = node;
        parent[node_b] = node;
        heap.push(Reverse((a + b, node, usize::MAX)));
    }
    for (leaf, &symbol) in leaves.iter().enumerate() {
        let mut depth = 0u32;
        let mut node = leaf;
        while parent[node] != usize::MAX {
            node = parent[node];
            depth += 1;
        }
        lengths[symbol] = depth.min(255) as u8;
    }
    lengths
}

/// The canonical code of every symbol: (code value, length); length 0 for
/// symbols without a code.
pub(super) fn canonical_codes(lengths: &[u8]) -> Vec<(u32, u8)> {
    let mut order: Vec<usize> = (0..lengths.len()).filter(|&s| lengths[s] > 0).collect();
    order.sort_by_key(|&s| (lengths[s], s));
    let mut codes = vec![(0u32, 0u8); lengths.len()];
    let mut code = 0u32;
    let mut previous = 0u8;
    for s in order {
        code <<= lengths[s] - previous;
        previous = lengths[s];
        codes[s] = (code, lengths[s]);
        code += 1;
    }
    codes
}

/// A decoder for the canonical code of some lengths.
#[derive(Debug, Clone)]
pub(super) struct Decoder {
    /// Per length: the first code value of that length.
    first: [u32; MAX_CODE_LEN as usize + 1],
    /// Per length: how many codes have that length.
    count: [u32; MAX_CODE_LEN as usize + 1],
    /// Per length: where its symbols start in `symbols`.
    start: [u32; MAX_CODE_LEN as usize + 1],
    /// Symbols sorted by (length, symbol).
    symbols: Vec<u16>,
    /// The shortest length whose codes are not all in `fast`.
    slow_from: u32,
    longest: u32,
    /// For each value of the next [`FAST_BITS`] bits: the symbol and its
    /// length if its code is that short and the symbol below
    /// [`FAST_SYMBOLS`] (`symbol << 4 | length`), else 0. Two bytes an
    /// entry keep a stream's table at 8 KiB, so that a probe across many
    /// tables finds it in cache more often.
    fast: Vec<u16>,
}

/// Bits decoded by one table lookup (a length fits in 4 bits of an entry).
const FAST_BITS: u32 = 12;

/// Symbols an entry of the fast table can hold (in its other 12 bits).
/// A file numbers its symbols in canonical code order, so every code of
/// at most [`FAST_BITS`] bits is a symbol below this (there are at most
/// 2^12 such codes) and the fast table holds them all.
const FAST_SYMBOLS: usize = 1 << 12;

impl Decoder {
    /// The decoder for `lengths`; `None` if they are not a prefix code
    /// (over-full), a length is above [`MAX_CODE_LEN`] or there are more
    /// than [`MAX_SYMBOLS`].
    pub(super) fn new(lengths: &[u8]) -> Option<Decoder> {
        if lengths.len() > MAX_SYMBOLS {
            return None;
        }
        let mut count = [0u32; MAX_CODE_LEN as usize + 1];
        for &l in lengths {
            if u32::from(l) > MAX_CODE_LEN {
                return None;
            }
            if l > 0 {
                count[usize::from(l)] += 1;
            }
        }
        // Kraft: the code space used may not exceed 1.
        let mut space = 0u64;
        for (l, &c) in count.iter().enumerate().skip(1) {
            space += u64::from(c) << (MAX_CODE_LEN as usize - l);
        }
        if space > 1 << MAX_CODE_LEN {
            return None;
        }
        let mut first = [0u32; MAX_CODE_LEN as usize + 1];
        let mut start = [0u32; MAX_CODE_LEN as usize + 1];
        let mut code = 0u32;
        let mut at = 0u32;
        for l in 1..=MAX_CODE_LEN as usize {
            first[l] = code;
            start[l] = at;
            code = (code + count[l]) << 1;
            at += count[l];
        }
        // Symbols by (length, symbol): a counting sort, since a reader
        // builds this on a stream's first probe.
        let mut order = vec![0u16; at as usize];
        let mut next = start;
        for (symbol, &l) in lengths.iter().enumerate() {
            if l > 0 {
                order[next[usize::from(l)] as usize] = symbol as u16;
                next[usize::from(l)] += 1;
            }
        }
        let used: Vec<u32> = (1..=MAX_CODE_LEN)
            .filter(|&l| count[l as usize] > 0)
            .collect();
        let mut decoder = Decoder {
            first,
            count,
            start,
            symbols: order,
            slow_from: used.first().copied().unwrap_or(1).max(FAST_BITS + 1),
            longest: used.last().copied().unwrap_or(0),
            fast: Vec::new(),
        };
        let mut fast = vec![0u16; 1 << FAST_BITS];
        for l in 1..=FAST_BITS {
            for rel in 0..count[l as usize] {
                let symbol = decoder.symbols[(start[l as usize] + rel) as usize];
                if usize::from(symbol) >= FAST_SYMBOLS {
                    decoder.slow_from = decoder.slow_from.min(l);
                    continue;
                }
                let code = (first[l as usize] + rel) as usize;
                let span = 1usize << (FAST_BITS - l);
                fast[code * span..(code + 1) * span].fill(symbol << 4 | l as u16);
            }
        }
        decoder.fast = fast;
        Some(decoder)
    }

    /// Decode one symbol from `window` (the next bits, most significant
    /// first, at least [`MAX_CODE_LEN`] of them valid): (symbol, length);
    /// `None` if the bits are no code.
    #[inline]
    pub(super) fn decode(&self, window: u64) -> Option<(u16, u32)> {
        let entry = self.fast[(window >> (64 - FAST_BITS)) as usize];
        if entry != 0 {
            return Some((entry >> 4, u32::from(entry & 15)));
        }
        self.decode_slow(window)
    }

    /// [`Decoder::decode`] a length at a time, from the first length the
    /// fast table does not hold whole (every shorter code is in it).
    fn decode_slow(&self, window: u64) -> Option<(u16, u32)> {
        for l in self.slow_from..=self.longest {
            let code = (window >> (64 - l)) as u32;
            let rel = code.wrapping_sub(self.first[l as usize]);
            if rel < self.count[l as usize] {
                let symbol = self.symbols[(self.start[l as usize] + rel) as usize];
                return Some((symbol, l));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(symbols: &[u16], codes: &[(u32, u8)]) -> Vec<u8> {
        let mut bits = Vec::new();
        for &s in symbols {
            let (code, len) = codes[usize::from(s)];
            for i in (0..len).rev() {
                bits.push((code >> i) & 1 == 1);
            }
        }
        let mut bytes = vec![0u8; bits.len().div_ceil(8) + 8];
        for (i, b) in bits.iter().enumerate() {
            if *b {
                bytes[i / 8] |= 0x80 >> (i % 8);
            }
        }
        bytes
    }

    fn window(bytes: &[u8], bit: usize) -> u64 {
        let b: [u8; 8] = bytes[bit / 8..bit / 8 + 8].try_into().expect("8 bytes");
        u64::from_be_bytes(b) << (bit % 8)
    }

    #[test]
    fn codes_round_trip_and_respect_the_length_limit() {
        // Fibonacci counts force a deep tree, which must be flattened.
        let mut counts = vec![1u64, 1];
        while counts.len() < 40 {
            let n = counts.len();
            counts.push(counts[n - 1] + counts[n - 2]);
        }
        counts.extend([0, 0, 5]);
        let lengths = code_lengths(&counts);
        assert!(lengths.iter().all(|&l| u32::from(l) <= MAX_CODE_LEN));
        assert_eq!(lengths[40], 0);
        let codes = canonical_codes(&lengths);
        let decoder = Decoder::new(&lengths).expect("valid lengths");
        let message: Vec<u16> = (0..500u32)
            .map(|i| [0u16, 39, 42, 7, 38, 1, 20][(i % 7) as usize])
            .collect();
        let bytes = encode(&message, &codes);
        let mut bit = 0;
        for &s in &message {
            let (got, len) = decoder.decode(window(&bytes, bit)).expect("a code");
            assert_eq!(got, s);
            bit += len as usize;
        }
    }

    #[test]
    fn a_single_symbol_gets_one_bit_and_other_bits_are_no_code() {
        let lengths = code_lengths(&[0, 9, 0]);
        assert_eq!(lengths, vec![0, 1, 0]);
        let decoder = Decoder::new(&lengths).expect("valid");
        assert_eq!(decoder.decode(0), Some((1, 1)));
        assert_eq!(decoder.decode(1 << 63), None);
    }

    #[test]
    fn a_code_longer_than_the_fast_table_decodes_and_bits_past_the_last_code_are_none() {
        // Codes `0` and `10000000000000` (14 bits); nothing else.
        let decoder = Decoder::new(&[1, 14]).expect("valid");
        assert_eq!(decoder.decode(0x7fff << 48), Some((0, 1)));
        assert_eq!(decoder.decode(1 << 63 | 0x1fff << 36), Some((1, 14)));
        assert_eq!(decoder.decode(1 << 63 | 1 << 50), None);
        assert_eq!(decoder.decode(u64::MAX), None);
    }

    #[test]
    fn over_full_lengths_are_rejected() {
        assert!(Decoder::new(&[1, 1, 1]).is_none());
        assert!(Decoder::new(&[1, 2, 2]).is_some());
        assert!(Decoder::new(&[25]).is_none());
    }

    #[test]
    fn symbols_the_fast_table_cannot_hold_decode_and_too_many_are_rejected() {
        // The last symbol has a 1-bit code but is above what an entry of
        // the fast table holds; a symbol below it has a 13-bit code.
        let mut lengths = vec![0u8; MAX_SYMBOLS];
        lengths[MAX_SYMBOLS - 1] = 1;
        lengths[7] = 13;
        let decoder = Decoder::new(&lengths).expect("the last symbol fits");
        assert_eq!(decoder.decode(0), Some((MAX_SYMBOLS as u16 - 1, 1)));
        assert_eq!(decoder.decode(1 << 63), Some((7, 13)));
        assert_eq!(decoder.decode(1 << 63 | 1 << 51), None);
        lengths.push(0);
        assert!(Decoder::new(&lengths).is_none());
    }
}
