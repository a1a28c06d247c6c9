//! A head's symbol entries: each grammar symbol's two halves, as short
//! as their numbers allow.
//!
//! A symbol is a terminal (its index among the stream's terminal codes)
//! or a pair of two symbols, numbered in canonical code order, so the
//! symbols a pair names are mostly the frequent ones with short codes
//! and low numbers (in the 3-4 set, 73 % of them are under 256). Each
//! entry is two values, `0` then the terminal's index for a terminal and
//! `a + 1` then `b` for the pair `a, b`, each written as an Exp-Golomb code
//! of order `k`: `v + 2^k` in binary, most significant bit first, after as
//! many zeros as it has bits beyond `k + 1`. The writer takes the order
//! that makes the entries shortest. Three bytes a symbol (two 12-bit
//! halves, format version 13) become about 2.3: the 3-4 set's heads
//! 22 % smaller (see BENCHMARKS.md). A half names a symbol below
//! [`MAX_SYMBOLS`] (16,383 since format version 15).
//!
//! Bytes: `k` (u8, at most [`MAX_ORDER`]), then the codes of every entry
//! in order, most significant bit first, zero padding to a whole byte.

use super::grammar::MAX_SYMBOLS;

/// The highest order of the codes: a half is at most 16,383.
const MAX_ORDER: u32 = 13;

/// The most bits of a half's code beyond its leading zeros: `v + 2^k`
/// is below 2^15 for a half `v` of at most 16,383 and `k` at most 13.
const MAX_CODE_BITS: u32 = 15;
const _: () = assert!(MAX_SYMBOLS + (1 << MAX_ORDER) < 1 << MAX_CODE_BITS);

/// A symbol's two halves as a head holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// Index among the stream's terminal codes.
    Terminal(u16),
    /// Two symbols' numbers.
    Pair(u16, u16),
}

impl Entry {
    /// The two values that are coded.
    fn values(self) -> [u32; 2] {
        match self {
            Entry::Terminal(t) => [0, u32::from(t)],
            Entry::Pair(a, b) => [u32::from(a) + 1, u32::from(b)],
        }
    }
}

/// Bits of `v`'s Exp-Golomb code of order `k`.
fn code_len(v: u32, k: u32) -> u32 {
    let bits = u32::BITS - (v + (1 << k)).leading_zeros();
    2 * bits - 1 - k
}

/// The bytes of `entries` (see the module doc).
pub(super) fn encode(entries: &[Entry]) -> Vec<u8> {
    let values: Vec<u32> = entries.iter().flat_map(|e| e.values()).collect();
    let k = (0..=MAX_ORDER)
        .min_by_key(|&k| {
            values
                .iter()
                .map(|&v| u64::from(code_len(v, k)))
                .sum::<u64>()
        })
        .expect("an order");
    let mut out = vec![k as u8];
    let mut bit = 0usize;
    let mut put = |out: &mut Vec<u8>, one: bool| {
        if bit.is_multiple_of(8) {
            out.push(0);
        }
        if one {
            *out.last_mut().expect("a byte") |= 0x80 >> (bit % 8);
        }
        bit += 1;
    };
    for v in values {
        let shifted = v + (1 << k);
        let bits = u32::BITS - shifted.leading_zeros();
        for _ in k + 1..bits {
            put(&mut out, false);
        }
        for i in (0..bits).rev() {
            put(&mut out, (shifted >> i) & 1 == 1);
        }
    }
    out
}

/// Read `count` entries from the start of `bytes`: the entries and the
/// bytes they took, or what is wrong (too short, a code too long, an
/// order or a half out of range).
pub(super) fn decode(bytes: &[u8], count: usize) -> Result<(Vec<Entry>, usize), &'static str> {
    let (&k, codes) = bytes.split_first().ok_or("head too short")?;
    let k = u32::from(k);
    if k > MAX_ORDER {
        return Err("head fields out of range");
    }
    let total = 8 * codes.len();
    let mut bit = 0usize;
    // Each code is read from a 64-bit window at its first bit (a code is
    // at most 29 bits), zeros past the last byte.
    let mut next = || -> Result<u32, &'static str> {
        let start = (bit / 8).min(codes.len());
        let window = match codes.get(start..start + 8) {
            Some(eight) => u64::from_be_bytes(eight.try_into().expect("8 bytes")),
            None => {
                let mut last = [0u8; 8];
                last[..codes.len() - start].copy_from_slice(&codes[start..]);
                u64::from_be_bytes(last)
            }
        } << (bit % 8);
        let zeros = window.leading_zeros();
        if bit + zeros as usize >= total {
            return Err("head too short");
        }
        if zeros + k + 1 > MAX_CODE_BITS {
            return Err("an entry is too long");
        }
        let len = 2 * zeros + k + 1;
        if bit + len as usize > total {
            return Err("head too short");
        }
        bit += len as usize;
        Ok((window >> (64 - len)) as u32 - (1 << k))
    };
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let (x, y) = (next()?, next()?);
        let half = |v: u32| {
            u16::try_from(v)
                .ok()
                .filter(|&v| usize::from(v) < MAX_SYMBOLS)
        };
        let entry = match (x, half(y)) {
            (0, Some(t)) => Entry::Terminal(t),
            (_, Some(b)) => Entry::Pair(half(x - 1).ok_or("a pair names no symbol")?, b),
            (_, None) => return Err("a pair names no symbol"),
        };
        entries.push(entry);
    }
    Ok((entries, 1 + bit.div_ceil(8)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_in_the_order_that_is_shortest() {
        // Mostly small numbers: a low order is shortest.
        let small: Vec<Entry> = (0..600u16)
            .map(|i| match i % 7 {
                0 => Entry::Terminal(i % 5),
                _ => Entry::Pair(i % 9, (i * 7) % 13),
            })
            .collect();
        // Numbers spread over the whole range, 16,382 the highest.
        let spread: Vec<Entry> = (0..16_383u16)
            .map(|i| Entry::Pair(16_382 - i, (i * 37) % 16_383))
            .chain([Entry::Terminal(16_382)])
            .collect();
        for entries in [&small, &spread] {
            let bytes = encode(entries);
            let mut padded = bytes.clone();
            padded.extend_from_slice(&[0xff, 0xff]);
            assert_eq!(
                decode(&padded, entries.len()),
                Ok((entries.clone(), bytes.len()))
            );
            // No order is shorter than the one taken.
            let bytes_in = |k: u32| {
                let bits: u32 = entries
                    .iter()
                    .flat_map(|e| e.values())
                    .map(|v| code_len(v, k))
                    .sum();
                1 + bits.div_ceil(8) as usize
            };
            assert_eq!(bytes.len(), bytes_in(u32::from(bytes[0])));
            assert!((0..=MAX_ORDER).all(|k| bytes_in(k) >= bytes.len()));
        }
        assert!(encode(&small)[0] <= 2);
        assert!(encode(&spread)[0] >= 11);
        // Two bytes a symbol for the small numbers, against three before.
        assert!(encode(&small).len() < 2 * small.len());
    }

    #[test]
    fn codes_have_their_exp_golomb_lengths() {
        assert_eq!(code_len(0, 0), 1);
        assert_eq!(code_len(1, 0), 3);
        assert_eq!(code_len(2, 0), 3);
        assert_eq!(code_len(3, 0), 5);
        assert_eq!(code_len(0, 3), 4);
        assert_eq!(code_len(7, 3), 4);
        assert_eq!(code_len(8, 3), 6);
        assert_eq!(code_len(4095, 11), 14);
        assert_eq!(code_len(2047, 11), 12);
        assert_eq!(code_len(2048, 11), 14);
        assert_eq!(code_len(16_383, 13), 16);
        // Order 0: 0 is "1", 1 is "010", 2 is "011".
        assert_eq!(
            encode(&[Entry::Terminal(1), Entry::Pair(1, 0)]),
            vec![0, 0b1010_0111]
        );
    }

    #[test]
    fn damaged_entries_are_errors() {
        let entries = [Entry::Pair(3, 4), Entry::Terminal(2)];
        let bytes = encode(&entries);
        assert_eq!(decode(&bytes[..bytes.len() - 1], 2), Err("head too short"));
        assert_eq!(decode(&[], 1), Err("head too short"));
        assert_eq!(decode(&[14, 0xff], 1), Err("head fields out of range"));
        // Order 0 and 16 zeros: longer than any half.
        assert_eq!(decode(&[0, 0, 0, 0xff], 1), Err("an entry is too long"));
        // Arbitrary bytes decode or fail, never panic.
        for state in crate::format::xorshift(0x2545_f491_4f6c_dd1d).take(5_000) {
            let bytes: Vec<u8> = (0..state % 24)
                .map(|i| (state >> (i % 8 * 8)) as u8)
                .collect();
            if let Ok((entries, len)) = decode(&bytes, (state >> 40) as usize % 9) {
                assert!(len <= bytes.len());
                assert!(
                    entries
                        .iter()
                        .all(|e| e.values().iter().all(|&v| v as usize <= MAX_SYMBOLS))
                );
            }
        }
        // 16,383 as a half: no symbol has that number.
        let high = MAX_SYMBOLS as u16;
        for high in [
            Entry::Pair(high, 0),
            Entry::Pair(0, high),
            Entry::Terminal(high),
        ] {
            assert_eq!(
                decode(&encode(&[high]), 1),
                Err("a pair names no symbol"),
                "{high:?}"
            );
        }
    }
}
