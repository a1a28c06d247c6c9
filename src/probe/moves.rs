//! Root moves ranked for play: [`Tablebase::best_moves`] and the optimal
//! line it leads to, [`Tablebase::line`].
//!
//! A move is scored by [`score_move`] (the one move-score rule) and judged
//! under the position's halfmove clock, so that a win that survives the
//! clock is kept whenever one exists: wins within the clock first (fastest
//! first), then draws, then losses (longest first).

use shakmaty::{Chess, Move, Position};

use crate::{
    probe::{
        ProbeError, StoredValues, Tablebase,
        stored::{check_probeable, score_move},
    },
    value::{Dtz, Outcome, Verdict},
};

/// A move and what it is worth at the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedMove {
    /// The move.
    pub mv: Move,
    /// DTZ of the root position if this move is played (mate 1, a zeroing
    /// move by the WDL it reaches, a quiet move `-d ± 1`: see
    /// [`Dtz::of_move`]).
    pub dtz: Dtz,
    /// The result of this move with the clock applied.
    pub outcome: Outcome,
}

/// Why a [`Line`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnd {
    /// The side to move is checkmated.
    Checkmate,
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// The position is a draw (DTZ 0).
    Draw,
    /// A zeroing move was played (only when not following through to mate).
    Zeroing,
    /// No end within [`MAX_LINE_MOVES`] moves (damaged tables).
    Unfinished,
}

/// The DTZ-optimal line from a position (see [`Tablebase::line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The moves, each with the position it was played from.
    pub moves: Vec<(Chess, Move)>,
    /// Why the line stopped.
    pub end: LineEnd,
}

/// [`Tablebase::best_moves`] over any store of solved tables: every legal
/// move with its score and outcome under the position's clock, best first.
/// Front-ends that join several directories into one store rank root moves
/// with it.
///
/// # Errors
/// See [`ProbeError`].
pub fn rank_moves<S: StoredValues + ?Sized>(
    store: &S,
    pos: &Chess,
) -> Result<Vec<RankedMove>, ProbeError> {
    check_probeable(pos)?;
    let mut ranked = Vec::new();
    for mv in pos.legal_moves() {
        let dtz = score_move(store, pos, &mv)?;
        let verdict = Verdict::new(dtz, store.rule(), pos.halfmoves(), false);
        ranked.push(RankedMove {
            mv,
            dtz,
            outcome: verdict.outcome,
        });
    }
    ranked.sort_by_key(|m| {
        let outcome = match m.outcome {
            Outcome::Win => 0,
            Outcome::Draw => 1,
            Outcome::Loss => 2,
        };
        (outcome, m.dtz.preference())
    });
    Ok(ranked)
}

/// The most moves a [`Line`] follows before giving up (no table has a line
/// this long; hitting it means damaged tables).
pub const MAX_LINE_MOVES: usize = 2000;

impl Tablebase {
    /// Every legal move with its score and outcome under the position's
    /// clock, best first: moves that keep a win within the clock (fastest
    /// first), then draws, then losses (longest first).
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// // Bare kings: every move draws.
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 w - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// let moves = tables.best_moves(&pos)?;
    /// assert_eq!(moves.len(), 5);
    /// assert!(moves.iter().all(|m| m.dtz.0 == 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn best_moves(&self, pos: &Chess) -> Result<Vec<RankedMove>, ProbeError> {
        rank_moves(self, pos)
    }

    /// The DTZ-optimal line from `pos`: the best move each side has (the
    /// first of [`Tablebase::best_moves`]) until the zeroing move, or, with
    /// `to_mate`, on through sub-tables until mate or a draw.
    ///
    /// ```
    /// use dtz50::{Rule, Tablebase, probe::LineEnd};
    /// use shakmaty::{CastlingMode, Chess, fen::Fen};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
    /// let pos: Chess = "8/8/8/4k3/8/8/8/4K3 w - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
    /// let line = tables.line(&pos, true)?;
    /// assert_eq!((line.moves.len(), line.end), (0, LineEnd::Draw));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// See [`ProbeError`].
    pub fn line(&self, pos: &Chess, to_mate: bool) -> Result<Line, ProbeError> {
        let mut pos = pos.clone();
        let mut moves = Vec::new();
        let end = loop {
            if pos.is_checkmate() {
                break LineEnd::Checkmate;
            }
            let ranked = self.best_moves(&pos)?;
            let Some(best) = ranked.first() else {
                break LineEnd::Stalemate;
            };
            if self.probe_dtz(&pos)?.0 == 0 {
                break LineEnd::Draw;
            }
            let before = pos.clone();
            pos.play_unchecked(best.mv);
            moves.push((before, best.mv));
            if best.mv.is_zeroing() && !to_mate && !pos.is_checkmate() {
                break LineEnd::Zeroing;
            }
            if moves.len() > MAX_LINE_MOVES {
                break LineEnd::Unfinished;
            }
        };
        Ok(Line { moves, end })
    }
}
