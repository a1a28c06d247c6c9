//! Packed blocks: a block's values as the distinct values, ascending, then
//! each position's rank among them in the narrowest width (see the byte
//! table in the format module's doc), and the codes stored for WDL and DTZ.

use super::u16_at;
use crate::value::{Dtz, Rule, Wdl};

/// The largest DTZ code a reader accepts (cells hold |DTZ| < 30,000).
pub(super) const MAX_DTZ_CODE: u16 = 30_000;

/// A WDL as stored: 0 (loss) ..= 4 (win).
pub(super) fn wdl_code(wdl: Wdl) -> u16 {
    (wdl.to_i8() + 2) as u16
}

/// A non-zero DTZ as stored: its plies, less the rule's limit when the
/// value is cursed or blessed (the WDL section says which).
pub(super) fn dtz_code(dtz: Dtz, rule: Rule) -> u16 {
    match Wdl::from_dtz(dtz, rule) {
        Wdl::CursedWin | Wdl::BlessedLoss => {
            dtz.plies() - rule.limit().map_or(0, i16::unsigned_abs)
        }
        _ => dtz.plies(),
    }
}

/// WDL codes (0..=4) two to a byte, the first in the low nibble: a table
/// read through in full (the solver's promotions into a 5-piece table) then
/// keeps half a byte per position in memory.
pub(super) fn pack_nibbles(codes: Vec<u8>) -> Vec<u8> {
    codes
        .chunks(2)
        .map(|pair| pair[0] | pair.get(1).map_or(0, |high| high << 4))
        .collect()
}

/// The WDL at `offset` of a block kept two codes per byte (low nibble first).
pub(crate) fn nibble_wdl(pairs: &[u8], offset: usize) -> Wdl {
    Wdl::ALL[usize::from((pairs[offset / 2] >> (4 * (offset % 2))) & 0xf)]
}

/// Code widths a packed block may use, narrowest first.
const CODE_BITS: [u32; 6] = [0, 1, 2, 4, 8, 16];

/// Pack a block's values: the distinct values, ascending, then each
/// position's rank among them in the narrowest width of [`CODE_BITS`].
pub(super) fn pack(values: &[u16]) -> Vec<u8> {
    let max = values.iter().copied().max().unwrap_or(0);
    let mut rank = vec![0u16; usize::from(max) + 1];
    for &v in values {
        rank[usize::from(v)] = 1;
    }
    let mut distinct = Vec::new();
    for (v, r) in rank.iter_mut().enumerate() {
        if *r != 0 {
            *r = distinct.len() as u16;
            distinct.push(v as u16);
        }
    }
    let bits = code_bits(distinct.len());
    let mut out = Vec::with_capacity(packed_len(values.len(), distinct.len(), bits));
    out.push(bits as u8);
    out.extend_from_slice(&((distinct.len() - 1) as u16).to_le_bytes());
    for v in &distinct {
        out.extend_from_slice(&v.to_le_bytes());
    }
    match bits {
        0 => {}
        16 => {
            for v in values {
                out.extend_from_slice(&rank[usize::from(*v)].to_le_bytes());
            }
        }
        _ => {
            let per = (8 / bits) as usize;
            for chunk in values.chunks(per) {
                let mut byte = 0u8;
                for (k, v) in chunk.iter().enumerate() {
                    byte |= (rank[usize::from(*v)] as u8) << (k as u32 * bits);
                }
                out.push(byte);
            }
        }
    }
    out
}

/// The narrowest code width for `distinct` values.
fn code_bits(distinct: usize) -> u32 {
    CODE_BITS
        .into_iter()
        .find(|&b| distinct <= 1 << b)
        .expect("at most 2^16 distinct u16 values")
}

/// Bytes of a packed block of `values` positions.
pub(super) fn packed_len(values: usize, distinct: usize, bits: u32) -> usize {
    3 + 2 * distinct + (values * bits as usize).div_ceil(8)
}

/// Inverse of [`pack`], each code passed through `narrow`; `None` if the
/// bytes are not a packed block of `values` positions with every value at
/// most `max`.
pub(super) fn unpack<T: Copy + Default>(
    raw: &[u8],
    values: usize,
    max: u16,
    narrow: fn(u16) -> T,
) -> Option<Vec<T>> {
    let bits = u32::from(*raw.first()?);
    let distinct = usize::from(u16_at(raw.get(..3)?, 1)) + 1;
    if !CODE_BITS.contains(&bits)
        || code_bits(distinct) != bits
        || raw.len() != packed_len(values, distinct, bits)
    {
        return None;
    }
    let list: Vec<u16> = (0..distinct).map(|i| u16_at(raw, 3 + 2 * i)).collect();
    if list.windows(2).any(|w| w[0] >= w[1]) || list[distinct - 1] > max {
        return None;
    }
    // Every rank a code of `bits` bits can hold; ranks past the list are
    // corrupt and found below.
    let mut table = vec![T::default(); 1 << bits];
    for (slot, &v) in table.iter_mut().zip(&list) {
        *slot = narrow(v);
    }
    let codes = &raw[3 + 2 * distinct..];
    let mut out = Vec::with_capacity(values);
    let mut highest = 0usize;
    match bits {
        0 => out.resize(values, table[0]),
        16 => {
            for c in codes.chunks_exact(2) {
                let rank = usize::from(u16::from_le_bytes([c[0], c[1]]));
                highest = highest.max(rank);
                out.push(table[rank]);
            }
        }
        _ => {
            let per = (8 / bits) as usize;
            let mask = (1usize << bits) - 1;
            for &byte in codes {
                let byte = usize::from(byte);
                for k in 0..per {
                    let rank = (byte >> (k as u32 * bits)) & mask;
                    highest = highest.max(rank);
                    out.push(table[rank]);
                }
            }
            // The last byte's unused high bits are padding.
            out.truncate(values);
        }
    }
    (highest < distinct).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_blocks_round_trip_in_every_width() {
        for distinct in [1u16, 2, 3, 4, 5, 16, 17, 256, 257, 1000] {
            let values: Vec<u16> = (0..1001u32)
                .map(|i| (i * 7919 % u32::from(distinct)) as u16 * 3)
                .collect();
            let packed = pack(&values);
            assert_eq!(u32::from(packed[0]), code_bits(usize::from(distinct)));
            assert_eq!(
                unpack(&packed, values.len(), 3000, |v| v),
                Some(values.clone())
            );
            if distinct > 1 {
                assert_eq!(
                    unpack(&packed, values.len() + 64, 3000, |v| v),
                    None,
                    "length"
                );
            }
            let max = *values.iter().max().expect("values");
            if max > 0 {
                assert_eq!(unpack(&packed, values.len(), max - 1, |v| v), None, "range");
            }
        }
    }

    #[test]
    fn packed_blocks_with_bad_codes_are_rejected() {
        // Three distinct values take 2 bits; a rank of 3 points past the list.
        let mut packed = pack(&[5, 6, 7, 5]);
        assert_eq!(unpack(&packed, 4, 10, |v| v), Some(vec![5, 6, 7, 5]));
        let last = packed.len() - 1;
        packed[last] |= 0b11 << 6;
        assert_eq!(unpack(&packed, 4, 10, |v| v), None);
        // Values out of order, or a width that is not the narrowest.
        let mut unordered = pack(&[5, 6]);
        unordered.swap(3, 5);
        assert_eq!(unpack(&unordered, 2, 10, |v| v), None);
        let mut wide = pack(&[5, 6]);
        wide[0] = 2;
        assert_eq!(unpack(&wide, 2, 10, |v| v), None);
    }
}
