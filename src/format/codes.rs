//! The codes stored for WDL and DTZ (see the format module's doc), and
//! WDL kept two codes per byte by bulk readers.

use crate::value::{Dtz, Rule, Wdl};

/// The largest DTZ code a reader accepts (cells hold |DTZ| < 30,000).
pub(super) const MAX_DTZ_CODE: u16 = 30_000;

/// A WDL as stored: 0 (loss) ..= 4 (win).
pub(super) fn wdl_code(wdl: Wdl) -> u16 {
    (wdl.to_i8() + 2) as u16
}

/// A non-zero DTZ as stored: its plies, less the rule's limit when the
/// value is cursed or blessed, and less one more for a loss (the WDL
/// section says which). A win takes an odd number of plies where the
/// winner's own move zeroes, a loss an even one, so a loss in `2m` plies
/// and a win in `2m - 1`, both `m` moves of the winner, share a code: the
/// streams that hold both take fewer symbols (KPvKP 2.3 % fewer bytes,
/// KRPvKR's DTZ 0.5 %; see BENCHMARKS.md).
pub(super) fn dtz_code(dtz: Dtz, rule: Rule) -> u16 {
    let limit = rule.limit().map_or(0, i16::unsigned_abs);
    match Wdl::from_dtz(dtz, rule) {
        Wdl::CursedWin => dtz.plies() - limit,
        Wdl::BlessedLoss => dtz.plies() - limit - 1,
        Wdl::Loss => dtz.plies() - 1,
        _ => dtz.plies(),
    }
}

/// WDL codes (0..=4) two to a byte, the first in the low nibble: a table
/// read through in full (the solver's promotions into a 5-piece table) then
/// keeps half a byte per position in memory.
pub(super) fn pack_nibbles(codes: &[u16]) -> Vec<u8> {
    codes
        .chunks(2)
        .map(|pair| pair[0] as u8 | pair.get(1).map_or(0, |&high| (high as u8) << 4))
        .collect()
}

/// The WDL at `offset` of a block kept two codes per byte (low nibble first).
pub(crate) fn nibble_wdl(pairs: &[u8], offset: usize) -> Wdl {
    Wdl::ALL[usize::from((pairs[offset / 2] >> (4 * (offset % 2))) & 0xf)]
}

/// Overwrite the WDL at `offset` of a block kept two codes per byte.
pub(crate) fn set_nibble_wdl(pairs: &mut [u8], offset: usize, wdl: Wdl) {
    let shift = 4 * (offset % 2);
    let byte = &mut pairs[offset / 2];
    *byte = (*byte & !(0xf << shift)) | (wdl_code(wdl) as u8) << shift;
}
