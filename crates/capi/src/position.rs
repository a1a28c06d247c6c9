//! Fathom's arguments as a position, and moves back to Fathom's encodings.
//!
//! A position arrives as eight bitboards (white, black, kings, queens,
//! rooks, bishops, knights, pawns; bit n is square n, a1 = 0), the
//! en-passant target square (0 for none), the side to move (`true` for
//! White) and, for root probes, the halfmove clock. It is a position only if
//! shakmaty accepts it as a legal chess position; an en-passant square with
//! no pawn that could have just made the double step is ignored, as engines
//! pass it after every double step.
//!
//! A move goes back as Fathom's `TbMove` (`from << 6 | to | promotes <<
//! 12`) or inside a `TB_RESULT` (`TB_SET_FROM`, `TB_SET_TO`,
//! `TB_SET_PROMOTES`, `TB_SET_EP`, with the WDL and DTZ fields).

use shakmaty::{
    Bitboard, Board, ByColor, ByRole, CastlingMode, Chess, Color, Move, PositionError, Role, Setup,
    Square,
};

/// A position as Fathom passes it: one bitboard per colour and per role.
#[derive(Debug, Clone, Copy)]
pub struct Bitboards {
    /// White pieces.
    pub white: u64,
    /// Black pieces.
    pub black: u64,
    /// Kings of both colours.
    pub kings: u64,
    /// Queens.
    pub queens: u64,
    /// Rooks.
    pub rooks: u64,
    /// Bishops.
    pub bishops: u64,
    /// Knights.
    pub knights: u64,
    /// Pawns.
    pub pawns: u64,
}

/// What Fathom passes besides the pieces.
#[derive(Debug, Clone, Copy)]
pub struct State {
    /// The halfmove clock (plies since the last capture or pawn move).
    pub rule50: u32,
    /// The en-passant target square, 0 for none.
    pub ep: u32,
    /// White to move.
    pub white_to_move: bool,
}

/// The legal position these bitboards and state describe, if any.
pub fn position(bb: &Bitboards, state: State) -> Option<Chess> {
    let by_role = ByRole {
        pawn: Bitboard(bb.pawns),
        knight: Bitboard(bb.knights),
        bishop: Bitboard(bb.bishops),
        rook: Bitboard(bb.rooks),
        queen: Bitboard(bb.queens),
        king: Bitboard(bb.kings),
    };
    let by_color = ByColor {
        white: Bitboard(bb.white),
        black: Bitboard(bb.black),
    };
    let board = Board::try_from_bitboards(by_role, by_color).ok()?;
    let ep_square = match state.ep {
        0 => None,
        sq => Some(Square::try_from(sq).ok()?),
    };
    let setup = Setup {
        board,
        turn: Color::from_white(state.white_to_move),
        ep_square,
        halfmoves: state.rule50,
        ..Setup::empty()
    };
    setup
        .position::<Chess>(CastlingMode::Standard)
        .or_else(PositionError::ignore_invalid_ep_square)
        .or_else(PositionError::ignore_impossible_check)
        .ok()
}

/// Fathom's promotion code: 0 none, 1 queen, 2 rook, 3 bishop, 4 knight.
pub fn promotes(mv: &Move) -> u32 {
    match mv.promotion() {
        Some(Role::Queen) => 1,
        Some(Role::Rook) => 2,
        Some(Role::Bishop) => 3,
        Some(Role::Knight) => 4,
        _ => 0,
    }
}

/// Origin and target square numbers of a move.
fn squares(mv: &Move) -> (u32, u32) {
    let to = u32::from(mv.to());
    (mv.from().map_or(to, u32::from), to)
}

/// Fathom's `TbMove`: `from << 6 | to | promotes << 12`.
pub fn tb_move(mv: &Move) -> u16 {
    let (from, to) = squares(mv);
    // At most 12 + 3 bits: the cast cannot truncate.
    (from << 6 | to | promotes(mv) << 12) as u16
}

/// A `TB_RESULT`: the move, its en-passant flag, a WDL code (`TB_LOSS` 0
/// ..= `TB_WIN` 4) and a DTZ in plies (12 bits; larger values saturate).
pub fn result(mv: &Move, wdl: u32, dtz: u32) -> u32 {
    let (from, to) = squares(mv);
    (wdl & 0xF)
        | (to << 4)
        | (from << 10)
        | (promotes(mv) << 16)
        | (u32::from(mv.is_en_passant()) << 19)
        | (dtz.min(0xFFF) << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Position;

    fn bitboards(pos: &Chess) -> Bitboards {
        let board = pos.board();
        Bitboards {
            white: board.white().0,
            black: board.black().0,
            kings: board.kings().0,
            queens: board.queens().0,
            rooks: board.rooks().0,
            bishops: board.bishops().0,
            knights: board.knights().0,
            pawns: board.pawns().0,
        }
    }

    #[test]
    fn bitboards_round_trip_with_clock_and_ep() {
        let fen: shakmaty::fen::Fen = "8/8/8/8/3Pp3/8/8/K6k b - d3 17 1".parse().expect("fen");
        let pos: Chess = fen.into_position(CastlingMode::Standard).expect("legal");
        let state = State {
            rule50: 17,
            ep: 19,
            white_to_move: false,
        };
        let back = position(&bitboards(&pos), state).expect("legal");
        assert_eq!(back.halfmoves(), 17);
        assert_eq!(back.en_passant_moves().len(), 1);
        // An ep square no pawn could have passed is ignored.
        let stray = State { ep: 20, ..state };
        assert!(
            position(&bitboards(&pos), stray)
                .expect("legal")
                .en_passant_moves()
                .is_empty()
        );
    }

    #[test]
    fn inconsistent_bitboards_are_no_position() {
        let fen: shakmaty::fen::Fen = "8/8/8/8/8/8/8/K6k w - - 0 1".parse().expect("fen");
        let pos: Chess = fen.into_position(CastlingMode::Standard).expect("legal");
        let mut bb = bitboards(&pos);
        bb.black |= bb.white;
        let state = State {
            rule50: 0,
            ep: 0,
            white_to_move: true,
        };
        assert!(position(&bb, state).is_none());
        assert!(position(&bitboards(&pos), State { ep: 64, ..state }).is_none());
    }

    #[test]
    fn moves_in_fathom_encodings() {
        let fen: shakmaty::fen::Fen = "8/4P3/8/8/8/8/8/K6k w - - 0 1".parse().expect("fen");
        let pos: Chess = fen.into_position(CastlingMode::Standard).expect("legal");
        let knight = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.promotion() == Some(Role::Knight))
            .expect("e8=N");
        // e7 = 52, e8 = 60.
        assert_eq!(tb_move(&knight), (52 << 6 | 60 | 4 << 12) as u16);
        let res = result(&knight, 4, 5);
        assert_eq!(
            (res & 0xF, (res >> 4) & 0x3F, (res >> 10) & 0x3F),
            (4, 60, 52)
        );
        assert_eq!(((res >> 16) & 7, (res >> 19) & 1, res >> 20), (4, 0, 5));
    }
}
