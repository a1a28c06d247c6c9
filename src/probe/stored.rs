//! Reading stored values, and the rules every reader follows.
//!
//! [`StoredValues`] is what a reader needs from a store of solved tables:
//! the value stored for a placement, and the rule the tables were built
//! for. Two kinds of store implement it: table files on disk
//! ([`Tablebase`](crate::probe::Tablebase)) and tables held in memory while
//! generating. [`IndexedValues`] reads one table by index, for the solver's
//! move generation on indices.
//!
//! On top of any store, this module holds the rules that turn a real
//! position into its value, written once for every reader (the probe API,
//! the solver looking through zeroing moves, the deep check, adjudication):
//!
//! * [`check_probeable`]: tables hold at most
//!   [`MAX_PIECES`] pieces and no castling rights;
//! * [`resolve_dtz`] / [`resolve_wdl`]: bare kings are a draw; tables store
//!   positions without en-passant rights, so a position with a legal
//!   en-passant capture is valued as the best of the capture(s) and the
//!   stored value of the same placement, unless the capture is the only
//!   legal move, when the stored value does not apply;
//! * [`score_move`]: a move's score by [`Dtz::of_move`], from whether it
//!   mates, is zeroing, or is quiet;
//! * [`dtz_by_moves`]: a position's DTZ as the best score of its moves.
//!   Table files keep DTZ for one side to move; the other side's is found
//!   this way, one ply deep (a quiet move reaches the side that is kept, a
//!   zeroing move needs only WDL), except in tables of symmetric material,
//!   whose files read the other side on the mirrored board;
//! * [`won_by_zeroing`]: a win that a zeroing move wins as fast as a win
//!   of its kind can be ([`Dtz::fastest`]); files need not keep its DTZ,
//!   so readers look for that move before reading the kept DTZ;
//! * [`position_wdl`] / [`position_dtz`]: the values of a position with
//!   no en-passant right. Files keep a lower bound of a WDL that a capture
//!   reaches (anything up to it, whatever compresses best, as Syzygy's
//!   files do), raised by the best capture: an alpha-beta search over
//!   captures, as Syzygy's prober does.

use std::cell::Cell;

use shakmaty::{Board, Chess, Color, Move, MoveList, Position, Role};

use crate::{
    index::{Layout, TableIndex},
    material::{MAX_PIECES, Material},
    probe::ProbeError,
    value::{Dtz, Rule, Successor, Wdl},
};

/// One solved table read by index: what the solver needs to score
/// captures, pawn moves and promotions without building positions.
pub trait IndexedValues: Sync {
    /// The index scheme that numbers the positions with `turn` to move
    /// (a file's two sides may order their digits differently).
    fn side_layout(&self, turn: Color) -> &Layout;

    /// The WDL stored at `index` with `turn` to move (the table's colours):
    /// a lower bound where [`IndexedValues::capture_bounded`].
    ///
    /// # Errors
    /// [`ProbeError::NoValue`] if the table holds no final value there, or
    /// what the store reports (a damaged file).
    fn wdl_at(&self, turn: Color, index: TableIndex) -> Result<Wdl, ProbeError>;

    /// Whether [`IndexedValues::wdl_at`] and the chunks give lower bounds
    /// that the position's best capture may raise
    /// ([`KeptWdl::UnlessCapture`]: files) rather than exact values.
    fn capture_bounded(&self) -> bool {
        false
    }

    /// Chunk access for a reader that keeps a table's WDL decoded for a
    /// while (files); `None` for stores held in memory.
    fn wdl_chunks(&self) -> Option<&dyn WdlChunks> {
        None
    }
}

/// WDL read a chunk of positions at a time (see [`IndexedValues::wdl_chunks`]).
pub trait WdlChunks: Sync {
    /// Number of chunks.
    fn chunk_count(&self) -> usize;

    /// The chunk holding `index` with `turn` to move, and the offset in it.
    fn chunk_of(&self, turn: Color, index: TableIndex) -> (usize, usize);

    /// The side to move and index range of a chunk.
    fn chunk_range(&self, chunk: usize) -> (Color, std::ops::Range<u64>);

    /// One chunk, two WDL codes (`wdl + 2`) per byte, low nibble first.
    ///
    /// # Errors
    /// What the store reports (a damaged file).
    fn unpack_chunk(&self, chunk: usize) -> Result<Vec<u8>, ProbeError>;
}

/// What a store keeps of one position's WDL ([`StoredValues::kept_wdl`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptWdl {
    /// The WDL itself.
    Exact(Wdl),
    /// A lower bound, exact unless one of the position's captures does
    /// better: the WDL is the best of it and the captures'
    /// ([`position_wdl`]). Table files keep this, as Syzygy's do: a
    /// position that a capture decides may hold anything up to its value.
    UnlessCapture(Wdl),
}

/// What a store keeps of one position's DTZ ([`StoredValues::kept_dtz`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptDtz {
    /// The DTZ itself.
    Exact(Dtz),
    /// A win or loss whose DTZ is not kept: the best score of its moves
    /// ([`dtz_by_moves`]).
    Moves,
    /// A win whose kept DTZ holds unless a zeroing move wins as fast as a
    /// win of its kind can be ([`won_by_zeroing`]).
    UnlessZeroing(Dtz),
}

/// A store of solved tables that can answer "what is stored for this
/// placement?".
pub trait StoredValues {
    /// The table of a normalised material, read by index.
    ///
    /// # Errors
    /// [`ProbeError::MissingTable`] if the store does not have it, or the
    /// store's reason it cannot be read.
    fn indexed(&self, material: &Material) -> Result<&dyn IndexedValues, ProbeError>;

    /// The rule the tables were built for.
    fn rule(&self) -> Rule;

    /// What the store keeps of the WDL of `board` with `turn` to move,
    /// ignoring any en-passant right. The board has at least three pieces.
    ///
    /// # Errors
    /// [`ProbeError::MissingTable`] if the material is not in the store,
    /// [`ProbeError::NoValue`] if the placement has no final value.
    fn kept_wdl(&self, board: &Board, turn: Color) -> Result<KeptWdl, ProbeError>;

    /// What the store keeps of the DTZ of `board` with `turn` to move,
    /// ignoring any en-passant right, given its WDL `wdl` (from
    /// [`position_wdl`]). The board has at least three pieces.
    ///
    /// # Errors
    /// As [`StoredValues::kept_wdl`].
    fn kept_dtz(&self, board: &Board, turn: Color, wdl: Wdl) -> Result<KeptDtz, ProbeError>;

    /// [`StoredValues::kept_wdl`] of `board` with `turn` to move, made the
    /// position's WDL by `complete` (its capture search), then
    /// [`StoredValues::kept_dtz`] given that WDL: what a DTZ probe reads.
    /// A store that can find the placement once for both overrides this
    /// (table files: a probe then locates its position once).
    ///
    /// # Errors
    /// As [`StoredValues::kept_wdl`], or what `complete` reports.
    fn kept_values(
        &self,
        board: &Board,
        turn: Color,
        complete: &mut dyn FnMut(KeptWdl) -> Result<Wdl, ProbeError>,
    ) -> Result<(Wdl, KeptDtz), ProbeError> {
        let wdl = complete(self.kept_wdl(board, turn)?)?;
        Ok((wdl, self.kept_dtz(board, turn, wdl)?))
    }
}

/// Whether tables can hold `pos`: at most [`MAX_PIECES`] pieces and no
/// castling rights. Returns the number of pieces.
///
/// # Errors
/// [`ProbeError::TooManyPieces`] or [`ProbeError::CastlingRights`].
pub fn check_probeable(pos: &Chess) -> Result<usize, ProbeError> {
    let count = pos.board().occupied().count();
    if count > MAX_PIECES {
        return Err(ProbeError::TooManyPieces { count });
    }
    if pos.castles().any() {
        return Err(ProbeError::CastlingRights);
    }
    Ok(count)
}

/// The DTZ of a position, en passant included (see the module doc).
///
/// # Errors
/// Too many pieces, castling rights, or whatever the store reports.
pub fn resolve_dtz<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Dtz, ProbeError> {
    if check_probeable(pos)? == 2 {
        return Ok(Dtz(0));
    }
    let Some(ep_moves) = en_passant_moves(pos) else {
        return position_dtz(store, pos);
    };
    let mut best: Option<Dtz> = None;
    for m in &ep_moves {
        let score = score_move(store, pos, m)?;
        best = Some(best.map_or(score, |b| b.prefer(score)));
    }
    let best = best.expect("at least one en-passant move");
    if pos.legal_moves().len() > ep_moves.len() {
        Ok(best.prefer(position_dtz(store, pos)?))
    } else {
        Ok(best)
    }
}

/// The WDL of a position, en passant included; reads no DTZ where the
/// store keeps WDL apart.
///
/// # Errors
/// As [`resolve_dtz`].
pub fn resolve_wdl<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Wdl, ProbeError> {
    if check_probeable(pos)? == 2 {
        return Ok(Wdl::Draw);
    }
    let Some(ep_moves) = en_passant_moves(pos) else {
        return position_wdl(store, pos);
    };
    // As `resolve_dtz`, on WDL alone (a position's WDL is the best of its
    // moves'), so that no DTZ is read: a search through WDL never turns
    // into one through DTZ.
    let rule = store.rule();
    let mut best = Wdl::Loss;
    for m in &ep_moves {
        best = best.max(Wdl::from_dtz(score_move(store, pos, m)?, rule));
    }
    if pos.legal_moves().len() > ep_moves.len() {
        best = best.max(position_wdl(store, pos)?);
    }
    Ok(best)
}

/// The score of the legal move `mv` in `pos` for the side that plays it
/// ([`Dtz::of_move`]): what DTZ `pos` has if `mv` is the move played.
///
/// # Errors
/// Whatever the store reports for the position the move reaches.
pub fn score_move<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
    mv: &Move,
) -> Result<Dtz, ProbeError> {
    let mut after = pos.clone();
    after.play_unchecked(*mv);
    // A mate scores as a zeroing move into a loss, and a mated position
    // is stored as DTZ -1: only a quiet move into -1 needs the mate test.
    let successor = if mv.is_zeroing() {
        Successor::Zeroing(resolve_wdl(store, &after)?)
    } else {
        match resolve_dtz(store, &after)? {
            Dtz(-1) if after.is_checkmate() => Successor::Mate,
            dtz => Successor::Quiet(dtz),
        }
    };
    Ok(Dtz::of_move(successor, store.rule()))
}

/// The DTZ of `pos` as the best score of its legal moves ([`score_move`],
/// [`Dtz::prefer`]); mated -1, stalemate 0. Given the position's WDL
/// `known`, fewer positions are read: in a win, zeroing moves are tried
/// first and the search ends at one as fast as a win of its kind can be
/// ([`Dtz::fastest`]), and a quiet move is valued only where it reaches a
/// loss or blessed loss, since no other quiet move can be best; in a loss,
/// the quiet moves' kept values are an upper bound of their true ones (a
/// kept win that a zeroing move decides is as fast as its kind, below
/// anything kept), so they are tried from the largest down and the first
/// that no zeroing move decides ends the search; in a plain loss every
/// move reaches a win, so no WDL is read at all. This is how a file that
/// keeps no DTZ for this side to move is read.
///
/// # Errors
/// Whatever the store reports for a position a move reaches.
pub fn dtz_by_moves<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
    known: Option<Wdl>,
) -> Result<Dtz, ProbeError> {
    let rule = store.rule();
    let winning = known.is_some_and(|wdl| wdl > Wdl::Draw);
    let losing = known.is_some_and(|wdl| wdl < Wdl::Draw);
    // A (plain) loss is the best its moves reach, so every move reaches a
    // win for the opponent: nothing needs reading to know that.
    let lost = known == Some(Wdl::Loss);
    let best: Cell<Option<Dtz>> = Cell::new(None);
    let prefer = |score: Dtz| best.set(Some(best.get().map_or(score, |b| b.prefer(score))));
    // A loss's quiet moves into kept wins that a zeroing move may decide:
    // (kept DTZ, WDL, move). The move, not the position it reaches, is
    // kept: most are never looked at again, and positions are large to
    // copy and sort.
    let mut bounded: Vec<(Dtz, Wdl, Move)> = Vec::new();
    // In a win, nothing beats a move as fast as a win of its kind can be
    // (`Dtz::fastest`: a mate, or a zeroing move into a loss, or into a
    // blessed loss for a cursed win): zeroing moves, which need only WDL,
    // are tried first, and the search stops at such a move.
    let fastest = known.and_then(|wdl| Dtz::fastest(wdl, rule));
    let mut moves = pos.legal_moves();
    if winning {
        moves.sort_unstable_by_key(|mv| !mv.is_zeroing());
    }
    for mv in &moves {
        if fastest.is_some() && best.get() == fastest {
            break;
        }
        if lost && mv.is_zeroing() {
            prefer(Dtz::of_move(Successor::Zeroing(Wdl::Win), rule));
            continue;
        }
        if !mv.is_zeroing() && (winning || losing) {
            // A quiet move reaches no en-passant right: what is kept is
            // what the position reached is.
            let mut after = pos.clone();
            after.play_unchecked(*mv);
            // In a win, no move into a draw or a win can be best: the
            // search needs to know only whether the move reaches a loss.
            let ceiling = if winning { Wdl::Draw } else { Wdl::Win };
            let wdl = if lost {
                Wdl::Win
            } else {
                wdl_within(store, &after, Wdl::Loss, ceiling)?
            };
            if wdl >= ceiling && winning {
                continue;
            }
            match store.kept_dtz(after.board(), after.turn(), wdl)? {
                KeptDtz::Exact(Dtz(-1)) if after.is_checkmate() => prefer(Dtz(1)),
                KeptDtz::Exact(dtz) => prefer(Dtz::of_move(Successor::Quiet(dtz), rule)),
                KeptDtz::UnlessZeroing(kept) => bounded.push((kept, wdl, *mv)),
                KeptDtz::Moves => prefer(score_move(store, pos, mv)?),
            }
            continue;
        }
        prefer(score_move(store, pos, mv)?);
    }
    bounded.sort_by_key(|&(kept, _, _)| std::cmp::Reverse(kept));
    for (kept, wdl, mv) in bounded {
        let mut after = pos.clone();
        after.play_unchecked(mv);
        let decided = won_by_zeroing(store, &after, wdl)?;
        prefer(Dtz::of_move(
            Successor::Quiet(decided.unwrap_or(kept)),
            rule,
        ));
        if decided.is_none() {
            break;
        }
    }
    Ok(best
        .get()
        .unwrap_or(if pos.is_check() { Dtz(-1) } else { Dtz(0) }))
}

/// `pos`'s DTZ if it is a win of kind `wdl` and one of its zeroing moves
/// wins as fast as such a win can be ([`Dtz::fastest`]); `None` otherwise.
/// Reads WDL only.
///
/// # Errors
/// Whatever the store reports for a position a move reaches.
pub fn won_by_zeroing<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
    wdl: Wdl,
) -> Result<Option<Dtz>, ProbeError> {
    let Some(fastest) = Dtz::fastest(wdl, store.rule()) else {
        return Ok(None);
    };
    // Zeroing moves are captures and pawn moves.
    if pos.our(Role::Pawn).is_empty() && !may_capture(pos) {
        return Ok(None);
    }
    for mv in &pos.legal_moves() {
        if mv.is_zeroing() && score_move(store, pos, mv)? == fastest {
            return Ok(Some(fastest));
        }
    }
    Ok(None)
}

/// The DTZ of `pos` (its en-passant right ignored, as stored): what
/// [`StoredValues::kept_dtz`] keeps, completed where it keeps less by a
/// one-ply search over the store (so over every table the store has,
/// whichever directory holds it).
///
/// # Errors
/// Whatever the store reports for this position or one a move reaches.
pub fn position_dtz<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Dtz, ProbeError> {
    let (wdl, kept) = store.kept_values(pos.board(), pos.turn(), &mut |kept| {
        raise_by_captures(store, pos, kept, Wdl::Loss, Wdl::Win)
    })?;
    match kept {
        KeptDtz::Exact(dtz) => Ok(dtz),
        KeptDtz::Moves => dtz_by_moves(store, pos, Some(wdl)),
        KeptDtz::UnlessZeroing(dtz) => Ok(won_by_zeroing(store, pos, wdl)?.unwrap_or(dtz)),
    }
}

/// The WDL of `pos` (its en-passant right ignored, as stored): the kept
/// value, raised where it is a lower bound by the best capture
/// ([`KeptWdl::UnlessCapture`]).
///
/// # Errors
/// Whatever the store reports for this position or one a capture reaches.
pub fn position_wdl<S: StoredValues + ?Sized>(store: &S, pos: &Chess) -> Result<Wdl, ProbeError> {
    wdl_within(store, pos, Wdl::Loss, Wdl::Win)
}

/// [`position_wdl`] searched within the window `alpha..beta` (fail-soft
/// alpha-beta over captures): exact if strictly inside it, at most `alpha`
/// if at or below it, at least `beta` if at or above it. The full window
/// `Loss..Win` gives the exact value.
fn wdl_within<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
    alpha: Wdl,
    beta: Wdl,
) -> Result<Wdl, ProbeError> {
    if pos.board().occupied().count() == 2 {
        return Ok(Wdl::Draw);
    }
    let kept = store.kept_wdl(pos.board(), pos.turn())?;
    raise_by_captures(store, pos, kept, alpha, beta)
}

/// [`wdl_within`] from what the store keeps of `pos`'s WDL, `kept`: the
/// search over captures where it is a lower bound.
fn raise_by_captures<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
    kept: KeptWdl,
    mut alpha: Wdl,
    beta: Wdl,
) -> Result<Wdl, ProbeError> {
    let kept = match kept {
        KeptWdl::Exact(wdl) => return Ok(wdl),
        KeptWdl::UnlessCapture(kept) => kept,
    };
    if kept >= beta {
        return Ok(kept);
    }
    alpha = alpha.max(kept);
    if !may_capture(pos) {
        return Ok(alpha);
    }
    for mv in &pos.capture_moves() {
        let mut after = pos.clone();
        after.play_unchecked(*mv);
        // A capture leaves no en-passant right.
        let value = wdl_within(store, &after, beta.flipped(), alpha.flipped())?.flipped();
        if value > alpha {
            alpha = value;
            if alpha >= beta {
                break;
            }
        }
    }
    Ok(alpha)
}

/// The en-passant moves of `pos`; `None` if it has none. Its en-passant
/// square is asked first: most positions have none, and then no move is
/// generated.
fn en_passant_moves(pos: &Chess) -> Option<MoveList> {
    pos.maybe_ep_square()?;
    Some(pos.en_passant_moves()).filter(|moves| !moves.is_empty())
}

/// Whether the side to move in `pos` may have a capture: one of its
/// pieces attacks one of the opponent's, or the position has an
/// en-passant square. Never false where a capture is legal, and much
/// cheaper than generating the legal moves, which most positions a probe
/// visits would do only to find none.
fn may_capture(pos: &Chess) -> bool {
    let board = pos.board();
    pos.maybe_ep_square().is_some()
        || board
            .by_color(!pos.turn())
            .into_iter()
            .any(|square| board.attacks_to(square, pos.turn(), board.occupied()).any())
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, EnPassantMode, fen::Fen};

    use super::*;

    #[test]
    fn may_capture_holds_wherever_a_capture_is_legal() {
        let (mut may, mut may_not) = (0, 0);
        for material in ["KQvKR", "KRPvKB", "KPvKP", "KNNvKB"] {
            let layout = Layout::new(material.parse().expect("material"));
            for index in (0..layout.size()).step_by(997) {
                for turn in Color::ALL {
                    let Some(pos) = layout.position(&layout.decode(TableIndex(index)), turn) else {
                        continue;
                    };
                    if may_capture(&pos) {
                        may += 1;
                    } else {
                        assert!(
                            pos.capture_moves().is_empty(),
                            "{material} {}",
                            Fen::from_position(&pos, EnPassantMode::Legal)
                        );
                        may_not += 1;
                    }
                }
            }
        }
        // Both answers are common, so neither is given blindly.
        assert!(may > 10_000 && may_not > 10_000, "{may} {may_not}");
        // An en-passant capture attacks an empty square.
        let pos: Chess = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"
            .parse::<Fen>()
            .expect("fen")
            .into_position(CastlingMode::Standard)
            .expect("legal");
        assert!(may_capture(&pos) && !pos.capture_moves().is_empty());
    }
}
