//! Solver cells at one byte per position and side to move.
//!
//! A [`CellArray`] holds the [`Cell`] of every position of one side to move
//! in a [`WorkArray`] of bytes. Each byte is a code:
//!
//! ```text
//! code        meaning
//! 0           Cell::ILLEGAL (zeroed memory is "illegal" until seeded)
//! 1           Cell::MATED
//! 2           draw, Cell(0)
//! 3 ..= 7     the five Cell::UNKNOWN_* codes
//! 8, 9        a win / a loss longer than EXACT plies: the exact value is
//!             in the overflow map
//! 10 ..= 132  win in 1 ..= EXACT plies
//! 133 ..= 255 loss in 1 ..= EXACT plies
//! ```
//!
//! Values beyond [`EXACT`] plies are rare with a draw rule (cursed wins
//! and blessed losses, or `L + 1` itself under the 75-move rule), so they
//! sit in a hash map beside the bytes. A value stored out of range goes to
//! a pending list first; [`CellArray::publish`] moves pending values into
//! the map. The solver publishes between passes, so every pass reads
//! exact values of everything written before it; within a pass, code 8/9
//! is still a decisive value of the right sign.

use std::{
    collections::HashMap,
    sync::{Mutex, RwLock, atomic::Ordering},
};

use crate::{storage::WorkArray, value::Cell};

/// Longest win or loss, in plies, stored in the byte itself.
pub const EXACT: i16 = 123;

const ILLEGAL: u8 = 0;
const MATED: u8 = 1;
const DRAW: u8 = 2;
const UNKNOWN_FIRST: u8 = 3;
const OVERFLOW_WIN: u8 = 8;
const OVERFLOW_LOSS: u8 = 9;
const WIN_BASE: u8 = 9;
const LOSS_BASE: u8 = 132;

/// The five unknown codes, in byte order 3..=7.
const UNKNOWNS: [Cell; 5] = [
    Cell::UNKNOWN_LOSS,
    Cell::UNKNOWN_BLESSED_LOSS,
    Cell::UNKNOWN_DRAW,
    Cell::UNKNOWN_CURSED_WIN,
    Cell::UNKNOWN,
];

/// The cells of one side to move (see the module doc).
#[derive(Debug)]
pub struct CellArray {
    bytes: WorkArray,
    overflow: RwLock<HashMap<u32, i16>>,
    pending: Mutex<Vec<(u32, i16)>>,
}

impl CellArray {
    /// Cells over `bytes` (all illegal until written).
    ///
    /// # Panics
    /// If there are more than 2^32 positions.
    pub fn new(bytes: WorkArray) -> CellArray {
        assert!(
            u32::try_from(bytes.len()).is_ok(),
            "index space fits in u32"
        );
        CellArray {
            bytes,
            overflow: RwLock::new(HashMap::new()),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// The cell at `index`.
    ///
    /// # Panics
    /// If an out-of-range value was stored but not yet published.
    #[inline]
    pub fn load(&self, index: u64) -> Cell {
        let code = self.code(index);
        match decode(code) {
            Some(cell) => cell,
            None => {
                let map = self.overflow.read().expect("overflow map lock");
                Cell(
                    *map.get(&(index as u32))
                        .expect("overflow values are published before they are read"),
                )
            }
        }
    }

    /// Whether the cell at `index` is one of the `UNKNOWN_*` codes.
    #[inline]
    pub fn is_unknown(&self, index: u64) -> bool {
        (UNKNOWN_FIRST..OVERFLOW_WIN).contains(&self.code(index))
    }

    /// Store `cell` at `index`.
    #[inline]
    pub fn store(&self, index: u64, cell: Cell) {
        self.bytes.bytes()[index as usize].store(self.encode(index, cell), Ordering::Relaxed);
    }

    /// Store `cell` at `index` if it holds an unknown code; false if it
    /// did not (or another thread claimed it first).
    #[inline]
    pub fn claim(&self, index: u64, cell: Cell) -> bool {
        let slot = &self.bytes.bytes()[index as usize];
        let old = slot.load(Ordering::Relaxed);
        if !(UNKNOWN_FIRST..OVERFLOW_WIN).contains(&old) {
            return false;
        }
        let code = encode_exact(cell);
        let won = slot
            .compare_exchange(
                old,
                code.unwrap_or(if cell.0 > 0 {
                    OVERFLOW_WIN
                } else {
                    OVERFLOW_LOSS
                }),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        if won && code.is_none() {
            self.defer(index, cell);
        }
        won
    }

    /// Make every value stored so far readable by [`CellArray::load`].
    pub fn publish(&self) {
        let pending = std::mem::take(&mut *self.pending.lock().expect("pending lock"));
        if !pending.is_empty() {
            self.overflow
                .write()
                .expect("overflow map lock")
                .extend(pending);
        }
    }

    /// How many values live in the overflow map.
    pub fn overflow_len(&self) -> usize {
        self.overflow.read().expect("overflow map lock").len()
    }

    #[inline]
    fn code(&self, index: u64) -> u8 {
        self.bytes.bytes()[index as usize].load(Ordering::Relaxed)
    }

    fn encode(&self, index: u64, cell: Cell) -> u8 {
        encode_exact(cell).unwrap_or_else(|| {
            self.defer(index, cell);
            if cell.0 > 0 {
                OVERFLOW_WIN
            } else {
                OVERFLOW_LOSS
            }
        })
    }

    fn defer(&self, index: u64, cell: Cell) {
        self.pending
            .lock()
            .expect("pending lock")
            .push((index as u32, cell.0));
    }
}

/// The byte of a cell, or `None` if its value needs the overflow map.
#[inline]
fn encode_exact(cell: Cell) -> Option<u8> {
    Some(match cell {
        Cell::ILLEGAL => ILLEGAL,
        Cell::MATED => MATED,
        Cell(0) => DRAW,
        c if c.is_unknown() => {
            UNKNOWN_FIRST
                + UNKNOWNS
                    .iter()
                    .position(|&u| u == c)
                    .expect("an unknown code") as u8
        }
        Cell(d) if (1..=EXACT).contains(&d) => WIN_BASE + d as u8,
        Cell(d) if (-EXACT..=-1).contains(&d) => LOSS_BASE + (-d) as u8,
        _ => return None,
    })
}

/// The cell of a byte, or `None` for the overflow codes.
#[inline]
fn decode(code: u8) -> Option<Cell> {
    Some(match code {
        ILLEGAL => Cell::ILLEGAL,
        MATED => Cell::MATED,
        DRAW => Cell(0),
        OVERFLOW_WIN | OVERFLOW_LOSS => return None,
        c if c < OVERFLOW_WIN => UNKNOWNS[usize::from(c - UNKNOWN_FIRST)],
        c if c <= LOSS_BASE => Cell(i16::from(c - WIN_BASE)),
        c => Cell(-i16::from(c - LOSS_BASE)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for code in 0..=255u8 {
            if let Some(cell) = decode(code) {
                assert_eq!(encode_exact(cell), Some(code), "{cell:?}");
            }
        }
    }

    #[test]
    fn long_values_go_through_the_overflow_map() {
        let cells = CellArray::new(WorkArray::anonymous(10).expect("map"));
        cells.store(1, Cell(EXACT));
        cells.store(2, Cell(-EXACT - 1));
        cells.store(3, Cell::UNKNOWN_CURSED_WIN);
        assert!(cells.claim(3, Cell(900)));
        assert!(!cells.claim(3, Cell(901)));
        cells.publish();
        assert_eq!(cells.load(1), Cell(EXACT));
        assert_eq!(cells.load(2), Cell(-EXACT - 1));
        assert_eq!(cells.load(3), Cell(900));
        assert_eq!(cells.load(0), Cell::ILLEGAL);
        assert_eq!(cells.overflow_len(), 2);
    }
}
