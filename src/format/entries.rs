//! A head's symbol entries: each grammar symbol's two halves, as short
//! as their numbers allow.
//!
//! A symbol is a terminal (its index among the stream's terminal codes)
//! or a pair of two symbols. A file numbers symbols in canonical code
//! order, by code length, so the symbols of one length (a class; those
//! without a code form the last) take consecutive numbers. Within a class
//! the order is free, and the writer takes the one that sorts the class's
//! entries ([`sorted_numbers`]): a pair's halves are then mostly a little
//! above those of the entry before it. Since format version 16 an entry
//! is two values, `x` (`0` for a terminal, `a + 1` for the pair `a, b`)
//! and `y` (the terminal's index, or `b`), coded as
//!
//! - `x` less the previous entry's `x` in its class (0 before the first);
//! - `y` less the previous entry's `y` when the entry's `x` is that of the
//!   previous entry in its class (a run of terminals, or of pairs with one
//!   first half), or else `y` itself;
//!
//! a difference `d` as the number `2d` (`d ≥ 0`) or `-2d - 1` (`d < 0`),
//! each of the three kinds of value as an Exp-Golomb code of its own
//! order `k`: `v + 2^k` in binary, most significant bit first, after as
//! many zeros as it has bits beyond `k + 1`. The writer takes the orders
//! that make the entries shortest. Three bytes a symbol in format version
//! 13 (two 12-bit halves) became about 2.7 in version 15 (each half's own
//! Exp-Golomb code) and about 1.8 now: the 3-4 set's heads a third
//! smaller (see BENCHMARKS.md). A half names a symbol below
//! [`MAX_SYMBOLS`].
//!
//! Bytes: the orders of `x`'s differences, of `y` itself and of `y`'s
//! differences (u8 each, at most [`MAX_ORDER`]), then the codes of every
//! entry in order, `x`'s then `y`'s, most significant bit first, zero
//! padding to a whole byte.

use super::grammar::MAX_SYMBOLS;

/// The highest order of the codes: a value is at most 2 × 16,383.
const MAX_ORDER: u32 = 14;

/// The most bits of a value's code beyond its leading zeros: `v + 2^k`
/// is below 2^16 for a value `v` of at most 2 × 16,383 and `k` at most 14.
const MAX_CODE_BITS: u32 = 16;
const _: () = assert!(2 * MAX_SYMBOLS + (1 << MAX_ORDER) < 1 << MAX_CODE_BITS);

/// Rounds of sorting a class by its entries' values at most (each round
/// renumbers the halves that the next sorts by): in a model of the 3-4
/// set's heads (187,669 entries), twelve rounds left one entry out of
/// order.
const SORT_ROUNDS: usize = 32;

/// A symbol's two halves as a head holds them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// Index among the stream's terminal codes.
    Terminal(u16),
    /// Two symbols' numbers.
    Pair(u16, u16),
}

impl Entry {
    /// Its `x` and `y` (see the module doc).
    fn values(self) -> [u32; 2] {
        match self {
            Entry::Terminal(t) => [0, u32::from(t)],
            Entry::Pair(a, b) => [u32::from(a) + 1, u32::from(b)],
        }
    }

    /// The entry of `x` and `y`, if they name symbols below [`MAX_SYMBOLS`].
    fn from_values(x: u32, y: u32) -> Option<Entry> {
        let half = |v: u32| {
            u16::try_from(v)
                .ok()
                .filter(|&v| usize::from(v) < MAX_SYMBOLS)
        };
        match x {
            0 => Some(Entry::Terminal(half(y)?)),
            _ => Some(Entry::Pair(half(x - 1)?, half(y)?)),
        }
    }

    /// The entry with its halves' numbers replaced by `number` of them.
    fn renumbered(self, number: &[u16]) -> Entry {
        match self {
            Entry::Terminal(_) => self,
            Entry::Pair(a, b) => Entry::Pair(number[usize::from(a)], number[usize::from(b)]),
        }
    }
}

/// The three kinds of coded value, each with its own order.
const X_DIFFERENCE: usize = 0;
const Y: usize = 1;
const Y_DIFFERENCE: usize = 2;

/// A difference as a value: `2d` or `-2d - 1`.
fn zigzag(d: i64) -> u32 {
    (if d >= 0 { 2 * d } else { -2 * d - 1 }) as u32
}

/// The difference a value stands for.
fn unzigzag(v: u32) -> i64 {
    let v = i64::from(v);
    if v % 2 == 0 { v / 2 } else { -(v + 1) / 2 }
}

/// Bits of `v`'s Exp-Golomb code of order `k`.
fn code_len(v: u32, k: u32) -> u32 {
    let bits = u32::BITS - (v + (1 << k)).leading_zeros();
    2 * bits - 1 - k
}

/// The values coded for `entries` whose classes have `classes` entries
/// each, in order, each with its kind.
fn coded_values(entries: &[Entry], classes: &[usize]) -> Vec<(usize, u32)> {
    assert_eq!(classes.iter().sum::<usize>(), entries.len(), "classes");
    let mut values = Vec::with_capacity(2 * entries.len());
    let mut rest = entries;
    for &size in classes {
        let (class, after) = rest.split_at(size);
        rest = after;
        let mut previous: Option<[u32; 2]> = None;
        for entry in class {
            let [x, y] = entry.values();
            let [px, py] = previous.unwrap_or([0, 0]);
            values.push((X_DIFFERENCE, zigzag(i64::from(x) - i64::from(px))));
            values.push(match previous {
                Some(_) if x == px => (Y_DIFFERENCE, zigzag(i64::from(y) - i64::from(py))),
                _ => (Y, y),
            });
            previous = Some([x, y]);
        }
    }
    values
}

/// The bytes of `entries`, whose classes have `classes` entries each
/// (see the module doc).
pub(super) fn encode(entries: &[Entry], classes: &[usize]) -> Vec<u8> {
    let values = coded_values(entries, classes);
    let orders = [X_DIFFERENCE, Y, Y_DIFFERENCE].map(|kind| {
        (0..=MAX_ORDER)
            .min_by_key(|&k| {
                values
                    .iter()
                    .filter(|&&(of, _)| of == kind)
                    .map(|&(_, v)| u64::from(code_len(v, k)))
                    .sum::<u64>()
            })
            .expect("an order")
    });
    let mut out: Vec<u8> = orders.iter().map(|&k| k as u8).collect();
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
    for (kind, v) in values {
        let k = orders[kind];
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

/// Read the entries of classes of `classes` entries each from the start
/// of `bytes`: the entries and the bytes they took, or what is wrong (too
/// short, a code too long, an order or a half out of range).
pub(super) fn decode(bytes: &[u8], classes: &[usize]) -> Result<(Vec<Entry>, usize), &'static str> {
    let (orders, codes) = bytes.split_at_checked(3).ok_or("head too short")?;
    let orders = [orders[0], orders[1], orders[2]].map(u32::from);
    if orders.iter().any(|&k| k > MAX_ORDER) {
        return Err("head fields out of range");
    }
    let total = 8 * codes.len();
    let mut bit = 0usize;
    // Each code is read from a 64-bit window at its first bit (a code is
    // at most 31 bits), zeros past the last byte.
    let mut next = |kind: usize| -> Result<u32, &'static str> {
        let k = orders[kind];
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
    // A value plus a coded difference; an error if the sum is below 0
    // or above any x.
    let plus = |value: u32, coded: u32| {
        u32::try_from(i64::from(value) + unzigzag(coded))
            .ok()
            .filter(|&v| v as usize <= MAX_SYMBOLS)
            .ok_or("a pair names no symbol")
    };
    let mut entries = Vec::with_capacity(classes.iter().sum());
    for &size in classes {
        let mut previous: Option<[u32; 2]> = None;
        for _ in 0..size {
            let [px, py] = previous.unwrap_or([0, 0]);
            let x = plus(px, next(X_DIFFERENCE)?)?;
            let y = match previous {
                Some(_) if x == px => plus(py, next(Y_DIFFERENCE)?)?,
                _ => next(Y)?,
            };
            entries.push(Entry::from_values(x, y).ok_or("a pair names no symbol")?);
            previous = Some([x, y]);
        }
    }
    Ok((entries, 3 + bit.div_ceil(8)))
}

/// Numbers that make the codes of `entries` short: `entries` are numbered
/// in canonical code order, and their classes have `classes` entries
/// each. Each class is sorted by its entries' values under the numbers
/// so far, and sorted again while that changes them (at most
/// [`SORT_ROUNDS`] times). Returns, for each new number, the old one,
/// and the entries in the new order with their halves renumbered.
pub(super) fn sorted_numbers(entries: &[Entry], classes: &[usize]) -> (Vec<u16>, Vec<Entry>) {
    assert_eq!(classes.iter().sum::<usize>(), entries.len(), "classes");
    let mut old_of: Vec<u16> = (0..entries.len() as u16).collect();
    let mut new_of = old_of.clone();
    for _ in 0..SORT_ROUNDS {
        let mut changed = false;
        let mut start = 0;
        for &size in classes {
            let class = &mut old_of[start..start + size];
            class.sort_by_cached_key(|&old| entries[usize::from(old)].renumbered(&new_of).values());
            for (new, &old) in (start..).zip(class.iter()) {
                if usize::from(new_of[usize::from(old)]) != new {
                    new_of[usize::from(old)] = new as u16;
                    changed = true;
                }
            }
            start += size;
        }
        if !changed {
            break;
        }
    }
    let sorted = old_of
        .iter()
        .map(|&old| entries[usize::from(old)].renumbered(&new_of))
        .collect();
    (old_of, sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of `entries` in `classes` with these orders of the three kinds.
    fn bytes_with(entries: &[Entry], classes: &[usize], orders: [u32; 3]) -> usize {
        let bits: u32 = coded_values(entries, classes)
            .iter()
            .map(|&(kind, v)| code_len(v, orders[kind]))
            .sum();
        3 + bits.div_ceil(8) as usize
    }

    #[test]
    fn entries_round_trip_in_the_orders_that_are_shortest() {
        // Mostly small numbers, sorted in classes: low orders are shortest.
        let small: Vec<Entry> = (0..600u16)
            .map(|i| match i % 7 {
                0 => Entry::Terminal(i % 5),
                _ => Entry::Pair(i / 60, (i * 7) % 13),
            })
            .collect();
        // Numbers spread over the whole range, 16,382 the highest.
        let spread: Vec<Entry> = (0..16_383u16)
            .map(|i| Entry::Pair(16_382 - i, (u32::from(i) * 37 % 16_383) as u16))
            .chain([Entry::Terminal(16_382)])
            .collect();
        for (entries, classes) in [
            (&small, vec![100, 0, 300, 200]),
            (&small, vec![600]),
            (&spread, vec![1, 4_000, 12_383]),
        ] {
            let bytes = encode(entries, &classes);
            let mut padded = bytes.clone();
            padded.extend_from_slice(&[0xff, 0xff]);
            assert_eq!(
                decode(&padded, &classes),
                Ok((entries.clone(), bytes.len()))
            );
            // No order of any kind is shorter than the one taken.
            let taken = [0, 1, 2].map(|kind| u32::from(bytes[kind]));
            assert_eq!(bytes.len(), bytes_with(entries, &classes, taken));
            for kind in 0..3 {
                for k in 0..=MAX_ORDER {
                    let mut orders = taken;
                    orders[kind] = k;
                    assert!(bytes_with(entries, &classes, orders) >= bytes.len());
                }
            }
        }
        assert!(encode(&spread, &[16_384])[1] >= 11);
        // Under two bytes a symbol for the small numbers, three before
        // version 14.
        assert!(encode(&small, &[600]).len() < 2 * small.len());
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
        assert_eq!(code_len(32_766, 14), 17);
        assert_eq!(
            [0, -1, 1, -2, 2, 16_383, -16_383].map(zigzag),
            [0, 1, 2, 3, 4, 32_766, 32_765]
        );
        assert!((0..40_000).all(|v| zigzag(unzigzag(v)) == v));
        // Orders 0, 0, 0. Terminal 1: x's difference 0 is "1", y = 1 is
        // "010"; the pair (1, 0): x = 2 is the difference 4, "00101", and
        // y = 0 (another x) is "1".
        assert_eq!(
            encode(&[Entry::Terminal(1), Entry::Pair(1, 0)], &[2]),
            vec![0, 0, 0, 0b1010_0010, 0b1100_0000]
        );
        // A run of one first half codes y's differences: (1, 5) then
        // (1, 3): x's differences 4 and 0, y = 5, then y's difference -2
        // (3).
        let run = [Entry::Pair(1, 5), Entry::Pair(1, 3)];
        assert_eq!(
            coded_values(&run, &[2]),
            [
                (X_DIFFERENCE, 4),
                (Y, 5),
                (X_DIFFERENCE, 0),
                (Y_DIFFERENCE, 3)
            ]
        );
        // In two classes the second entry is its class's first.
        assert_eq!(
            coded_values(&run, &[1, 1]),
            [(X_DIFFERENCE, 4), (Y, 5), (X_DIFFERENCE, 4), (Y, 3)]
        );
    }

    #[test]
    fn sorted_numbers_keep_classes_and_the_grammar() {
        // Class 0: symbols 0..3, class 1: 3..7 (numbers before sorting).
        let entries = [
            Entry::Pair(4, 1),
            Entry::Terminal(2),
            Entry::Terminal(0),
            Entry::Pair(2, 2),
            Entry::Pair(1, 1),
            Entry::Pair(0, 6),
            Entry::Terminal(1),
        ];
        let classes = [3, 4];
        let (old_of, sorted) = sorted_numbers(&entries, &classes);
        // Terminals lead each class, by index; then pairs by their halves'
        // new numbers: old 3 = (2, 2) is (0, 0), terminal 0 twice.
        assert_eq!(old_of, [2, 1, 0, 6, 3, 4, 5]);
        assert_eq!(
            sorted,
            [
                Entry::Terminal(0),
                Entry::Terminal(2),
                Entry::Pair(5, 1),
                Entry::Terminal(1),
                Entry::Pair(0, 0),
                Entry::Pair(1, 1),
                Entry::Pair(2, 3),
            ]
        );
        // Each new entry is its old one, renumbered.
        let mut new_of = [0u16; 7];
        for (new, &old) in old_of.iter().enumerate() {
            new_of[usize::from(old)] = new as u16;
        }
        for (new, &old) in old_of.iter().enumerate() {
            assert_eq!(sorted[new], entries[usize::from(old)].renumbered(&new_of));
        }
        assert!(encode(&sorted, &classes).len() <= encode(&entries, &classes).len());
    }

    #[test]
    fn sorting_entries_whose_order_goes_round_stops() {
        // 0 = (2, 4), 1 = (3, 4), 2 = (1, 4), 3 = (0, 4), one class:
        // 0 before 1 needs 2 before 3, which needs 1 before 0.
        let mut entries: Vec<Entry> = [2, 3, 1, 0].map(|a| Entry::Pair(a, 4)).to_vec();
        entries.push(Entry::Terminal(0));
        let (old_of, sorted) = sorted_numbers(&entries, &[4, 1]);
        let mut seen = old_of.clone();
        seen.sort_unstable();
        assert_eq!(seen, [0, 1, 2, 3, 4]);
        assert_eq!(old_of[4], 4);
        assert_eq!(
            decode(&encode(&sorted, &[4, 1]), &[4, 1]).map(|d| d.0),
            Ok(sorted)
        );
    }

    #[test]
    fn damaged_entries_are_errors() {
        let entries = [Entry::Pair(3, 4), Entry::Terminal(2)];
        let bytes = encode(&entries, &[2]);
        assert_eq!(
            decode(&bytes[..bytes.len() - 1], &[2]),
            Err("head too short")
        );
        assert_eq!(decode(&[0, 0], &[1]), Err("head too short"));
        assert_eq!(
            decode(&[0, 15, 0, 0xff], &[1]),
            Err("head fields out of range")
        );
        // Order 0 and 16 zeros: longer than any value.
        assert_eq!(
            decode(&[0, 0, 0, 0, 0, 0xff], &[1]),
            Err("an entry is too long")
        );
        // A difference below 0: x's difference -1 ("010") first.
        assert_eq!(
            decode(&[0, 0, 0, 0b0101_0000], &[1]),
            Err("a pair names no symbol")
        );
        // Arbitrary codes after orders in range decode or fail, never
        // panic; some of each.
        let mut decoded = 0;
        let mut failed = 0;
        let mut states = crate::format::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..5_000 {
            let state = states.next().expect("endless");
            let orders = [0, 1, 2].map(|i| (state >> (8 * i)) as u8 % (MAX_ORDER as u8 + 1));
            let codes = (0..state % 40).map(|_| states.next().expect("endless") as u8);
            let bytes: Vec<u8> = orders.into_iter().chain(codes).collect();
            let classes = [(state >> 40) as usize % 7, (state >> 48) as usize % 7];
            match decode(&bytes, &classes) {
                Ok((entries, len)) => {
                    decoded += 1;
                    assert!(len <= bytes.len());
                    assert_eq!(entries.len(), classes.iter().sum::<usize>());
                    assert!(
                        entries
                            .iter()
                            .all(|e| e.values().iter().all(|&v| v as usize <= MAX_SYMBOLS))
                    );
                }
                Err(_) => failed += 1,
            }
        }
        assert!(
            decoded > 100 && failed > 100,
            "{decoded} decoded, {failed} failed"
        );
        // 16,383 as a half: no symbol has that number.
        let high = MAX_SYMBOLS as u16;
        for high in [
            Entry::Pair(high, 0),
            Entry::Pair(0, high),
            Entry::Terminal(high),
        ] {
            assert_eq!(
                decode(&encode(&[high], &[1]), &[1]),
                Err("a pair names no symbol"),
                "{high:?}"
            );
        }
    }
}
