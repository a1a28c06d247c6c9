//! Fathom's helper API: attack sets and bit scans on `uint64_t` bitboards,
//! squares numbered a1 = 0, b1 = 1, ..., h8 = 63, as Fathom numbers them.
//!
//! Fathom leaves a square outside 0..=63 undefined; here it has no attacks.

use shakmaty::{Bitboard, Color, Square, attacks};

/// The square numbered `sq`, if it is one.
fn square(sq: u32) -> Option<Square> {
    Square::try_from(sq).ok()
}

/// Attacks from `sq` by `attack`, empty for a square outside the board.
fn from(sq: u32, attack: impl FnOnce(Square) -> Bitboard) -> u64 {
    square(sq).map_or(0, |sq| attack(sq).0)
}

/// Number of set bits.
pub fn pop_count(bb: u64) -> u32 {
    bb.count_ones()
}

/// Index of the lowest set bit; 64 for an empty board (Fathom leaves that
/// undefined).
pub fn lsb(bb: u64) -> u32 {
    bb.trailing_zeros()
}

/// The board without its lowest set bit.
pub fn pop_lsb(bb: u64) -> u64 {
    bb & bb.wrapping_sub(1)
}

/// Squares a king on `sq` attacks.
pub fn king(sq: u32) -> u64 {
    from(sq, attacks::king_attacks)
}

/// Squares a knight on `sq` attacks.
pub fn knight(sq: u32) -> u64 {
    from(sq, attacks::knight_attacks)
}

/// Squares a rook on `sq` attacks with `occ` occupied.
pub fn rook(sq: u32, occ: u64) -> u64 {
    from(sq, |sq| attacks::rook_attacks(sq, Bitboard(occ)))
}

/// Squares a bishop on `sq` attacks with `occ` occupied.
pub fn bishop(sq: u32, occ: u64) -> u64 {
    from(sq, |sq| attacks::bishop_attacks(sq, Bitboard(occ)))
}

/// Squares a queen on `sq` attacks with `occ` occupied.
pub fn queen(sq: u32, occ: u64) -> u64 {
    from(sq, |sq| attacks::queen_attacks(sq, Bitboard(occ)))
}

/// Squares a pawn on `sq` attacks: a white pawn if `white`, else a black one.
pub fn pawn(sq: u32, white: bool) -> u64 {
    from(sq, |sq| attacks::pawn_attacks(Color::from_white(white), sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attack_sets_as_fathom_numbers_squares() {
        // a1 = 0, h8 = 63; a white pawn on e4 (28) attacks d5 (35) and f5 (37).
        assert_eq!(pawn(28, true), (1 << 35) | (1 << 37));
        assert_eq!(pawn(28, false), (1 << 19) | (1 << 21));
        assert_eq!(king(0), (1 << 1) | (1 << 8) | (1 << 9));
        assert_eq!(knight(0), (1 << 10) | (1 << 17));
        assert_eq!(rook(0, u64::MAX), (1 << 1) | (1 << 8));
        assert_eq!(bishop(0, 0).count_ones(), 7);
        assert_eq!(queen(0, 0).count_ones(), 21);
        assert_eq!(king(64), 0);
    }

    #[test]
    fn bit_scans() {
        assert_eq!(
            (pop_count(0b1011), lsb(0b1000), pop_lsb(0b1100)),
            (3, 3, 0b1000)
        );
        assert_eq!((lsb(0), pop_lsb(0)), (64, 0));
    }
}
