//! The solver's cell: one position's value while the table is being solved.
//!
//! A [`Cell`] holds either a final DTZ in plies or one of a few reserved
//! codes at the ends of the `i16` range: [`Cell::ILLEGAL`] (pieces overlap,
//! or the side not to move is in check), [`Cell::MATED`], and five
//! `UNKNOWN_*` codes that say what the position's zeroing moves already
//! guarantee while its quiet moves are still being resolved. The solver
//! stores cells one byte each (see the `cells` module); this type is the
//! wide form every pass reasons with. Cells never reach a table file: the
//! writer reads final values only.

use crate::value::{Dtz, Rule};

/// One solver cell: a final DTZ or a reserved code.
///
/// Final values are DTZ plies (`|dtz| < 30_000`). The reserved codes sit at
/// the ends of the `i16` range: [`Cell::ILLEGAL`], [`Cell::MATED`] and five
/// `UNKNOWN_*` codes that say what the position's zeroing moves already
/// guarantee while its quiet moves are still being resolved.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Cell(pub i16);

impl Cell {
    /// Not a legal position (pieces overlap, or the side not to move is in check).
    pub const ILLEGAL: Cell = Cell(i16::MIN);
    /// The side to move is checkmated (DTZ -1; predecessors win in 1).
    pub const MATED: Cell = Cell(i16::MIN + 1);
    /// Unknown; no zeroing move.
    pub const UNKNOWN: Cell = Cell(i16::MAX);
    /// Unknown; the best zeroing move reaches a cursed win (`L + 1`).
    pub const UNKNOWN_CURSED_WIN: Cell = Cell(i16::MAX - 1);
    /// Unknown; the best zeroing move draws.
    pub const UNKNOWN_DRAW: Cell = Cell(i16::MAX - 2);
    /// Unknown; the best zeroing move reaches a blessed loss (`-L - 1`).
    pub const UNKNOWN_BLESSED_LOSS: Cell = Cell(i16::MAX - 3);
    /// Unknown; the best zeroing move loses (-1).
    pub const UNKNOWN_LOSS: Cell = Cell(i16::MAX - 4);

    /// A final DTZ.
    pub const fn dtz(d: Dtz) -> Cell {
        Cell(d.0)
    }

    /// Whether this is one of the `UNKNOWN_*` codes.
    pub const fn is_unknown(self) -> bool {
        self.0 >= Cell::UNKNOWN_LOSS.0
    }

    /// The final DTZ, if this cell holds one (mated counts as -1).
    pub const fn value(self) -> Option<Dtz> {
        if self.0 == Cell::MATED.0 {
            Some(Dtz(-1))
        } else if self.0 == Cell::ILLEGAL.0 || self.is_unknown() {
            None
        } else {
            Some(Dtz(self.0))
        }
    }

    /// The unknown code for a position whose best zeroing move scores `z`
    /// (`None`: no zeroing move). Only meaningful for scores that do not
    /// decide the position at once (see the solver).
    pub fn unknown_after_zeroing(z: Option<Dtz>) -> Cell {
        match z.map(|d| d.0) {
            None => Cell::UNKNOWN,
            Some(0) => Cell::UNKNOWN_DRAW,
            Some(-1) => Cell::UNKNOWN_LOSS,
            Some(d) if d > 0 => Cell::UNKNOWN_CURSED_WIN,
            Some(_) => Cell::UNKNOWN_BLESSED_LOSS,
        }
    }

    /// Whether this seed cell says that the position's best zeroing move
    /// scores `win` (a positive DTZ): a final value the seed decided, or
    /// what an unknown code says ([`Cell::zeroing_score`]).
    pub fn zeroing_wins(self, win: Dtz, rule: Rule) -> bool {
        self.value() == Some(win) || self.zeroing_score(rule) == Some(win)
    }

    /// What an `UNKNOWN_*` code says the position's best zeroing move
    /// scores under `rule` (`None`: it has no zeroing move, or this is not
    /// an unknown code); the inverse of [`Cell::unknown_after_zeroing`].
    pub fn zeroing_score(self, rule: Rule) -> Option<Dtz> {
        let beyond = rule.limit().map_or(1, |l| l + 1);
        match self {
            Cell::UNKNOWN_LOSS => Some(Dtz(-1)),
            Cell::UNKNOWN_BLESSED_LOSS => Some(Dtz(-beyond)),
            Cell::UNKNOWN_DRAW => Some(Dtz(0)),
            Cell::UNKNOWN_CURSED_WIN => Some(Dtz(beyond)),
            _ => None,
        }
    }

    /// What a position left unresolved at the end is worth: a draw.
    pub const fn finalize(self) -> Cell {
        if self.0 == Cell::MATED.0 {
            Cell(-1)
        } else if self.is_unknown() {
            Cell(0)
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_values_and_codes_apart() {
        assert!(Cell::UNKNOWN_LOSS.is_unknown());
        assert!(!Cell(300).is_unknown());
        assert_eq!(Cell::MATED.value(), Some(Dtz(-1)));
        assert_eq!(Cell::ILLEGAL.value(), None);
        assert_eq!(Cell::UNKNOWN_DRAW.finalize(), Cell(0));
        for z in [
            None,
            Some(Dtz(0)),
            Some(Dtz(-1)),
            Some(Dtz(101)),
            Some(Dtz(-101)),
        ] {
            assert_eq!(Cell::unknown_after_zeroing(z).zeroing_score(Rule::Fifty), z);
        }
        assert_eq!(Cell(5).zeroing_score(Rule::Fifty), None);
    }
}
