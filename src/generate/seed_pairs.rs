//! Both sides' seeds of a position in one byte, for the deep check.
//!
//! The seed pass ([`crate::generate::seed`]) gives every position a cell
//! that its own moves decide. Only twelve cells can come of it: illegal,
//! mated, one of the five unknown codes (the best zeroing move's score
//! while quiet moves are left), or a value that zeroing moves alone give:
//! a win in one, a cursed win at the draw rule's limit plus one, a draw
//! (also stalemate), a blessed loss, a loss in one. Four bits hold one, so
//! a [`SeedPairs`] keeps a position's two seeds, White's in the low
//! nibble, in one byte: half the memory of two cell arrays, which is what
//! lets the deep check of a six-piece table fit in the machine (KRNvKNN:
//! 3.9 GB for its seeds instead of 7.9 GB).

use std::sync::atomic::Ordering;

use shakmaty::Color;

use crate::{
    generate::cell::Cell,
    mmap::WorkArray,
    value::{Dtz, Rule, Successor, Wdl},
};

/// Every cell a seed can be, by its 4-bit code.
type SeedCodes = [Cell; 12];

/// The seeds of both sides to move, one byte per position (see the module
/// doc).
#[derive(Debug)]
pub(crate) struct SeedPairs {
    bytes: WorkArray,
    codes: SeedCodes,
}

impl SeedPairs {
    /// Seeds over `bytes`, one byte per position, for a table of `rule`
    /// (its cursed wins and blessed losses are `± (limit + 1)`).
    pub fn new(bytes: WorkArray, rule: Rule) -> SeedPairs {
        let unknown = [
            Cell::UNKNOWN,
            Cell::UNKNOWN_CURSED_WIN,
            Cell::UNKNOWN_DRAW,
            Cell::UNKNOWN_BLESSED_LOSS,
            Cell::UNKNOWN_LOSS,
        ];
        let zeroing = Wdl::ALL.map(|wdl| Cell::dtz(Dtz::of_move(Successor::Zeroing(wdl), rule)));
        let codes = [Cell::ILLEGAL, Cell::MATED]
            .into_iter()
            .chain(unknown)
            .chain(zeroing)
            .collect::<Vec<_>>();
        SeedPairs {
            bytes,
            codes: codes.try_into().expect("twelve seed cells"),
        }
    }

    /// Store the seeds of the position at `slot`, White and Black to move.
    ///
    /// # Panics
    /// If a cell is none the seed pass gives (a bug there, not bad input).
    pub fn store(&self, slot: u64, white: Cell, black: Cell) {
        let byte = self.code(white) | self.code(black) << 4;
        self.bytes.bytes()[slot as usize].store(byte, Ordering::Relaxed);
    }

    /// The seed of the position at `slot` with `turn` to move.
    #[inline]
    pub fn load(&self, slot: u64, turn: Color) -> Cell {
        let byte = self.bytes.bytes()[slot as usize].load(Ordering::Relaxed);
        let code = match turn {
            Color::White => byte & 15,
            Color::Black => byte >> 4,
        };
        self.codes[usize::from(code)]
    }

    fn code(&self, cell: Cell) -> u8 {
        let code = self.codes.iter().position(|&c| c == cell);
        code.unwrap_or_else(|| panic!("{cell:?} is no seed")) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed cell reads back for either side, beside any other, under
    /// every rule; an unwritten byte reads illegal.
    #[test]
    fn every_seed_reads_back_beside_every_other() {
        for rule in [Rule::Fifty, Rule::SeventyFive, Rule::None] {
            let seeds = SeedPairs::new(WorkArray::anonymous(200).expect("map"), rule);
            let cells = seeds.codes;
            let mut slot = 0;
            for &white in &cells {
                for &black in &cells {
                    seeds.store(slot, white, black);
                    assert_eq!(seeds.load(slot, Color::White), white, "{rule:?}");
                    assert_eq!(seeds.load(slot, Color::Black), black, "{rule:?}");
                    slot += 1;
                }
            }
            assert_eq!(seeds.load(slot, Color::Black), Cell::ILLEGAL);
        }
        let fifty = SeedPairs::new(WorkArray::anonymous(1).expect("map"), Rule::Fifty);
        assert!(fifty.codes.contains(&Cell(101)) && fifty.codes.contains(&Cell(-101)));
    }

    #[test]
    #[should_panic(expected = "Cell(5) is no seed")]
    fn a_quiet_value_is_no_seed() {
        let seeds = SeedPairs::new(WorkArray::anonymous(1).expect("map"), Rule::Fifty);
        seeds.store(0, Cell(5), Cell(0));
    }
}
