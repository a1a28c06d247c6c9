//! Game adjudication: the FIDE draw rules and the tablebase verdict, move
//! by move.
//!
//! [`adjudicate_pgn`] replays every game of a PGN file (any number of games;
//! standard chess or Chess960; from the initial position or from a `FEN`
//! tag) and reports, in game order, each moment at which the Laws of Chess
//! (FIDE, 2023 edition unless noted) or the tablebases have something to
//! say. Article numbers below are those of the 2023 Laws.
//!
//! # Claims (the game goes on unless a player claims)
//!
//! * **Threefold repetition** (9.2): reported once, at the first moment a
//!   draw could be claimed, in either form: the position *has just
//!   appeared* for the third time (9.2.1.2), or the player to move could
//!   *announce* a move after which it would appear for the third time
//!   (9.2.1.1). Repetitions need not be consecutive.
//! * **Fifty-move rule** (9.3): reported once, at the first moment a claim
//!   is possible: the halfmove clock has reached 100 plies (9.3.2), or the
//!   player to move could announce a move that is neither a capture nor a
//!   pawn move while the clock stands at 99 (9.3.1). A clock of 100 or more
//!   in a starting FEN is a claim at ply 0.
//!
//! A claim by announcing a move is reported with the ply that move would
//! make. The move reported is the one played in the game when it qualifies,
//! otherwise the qualifying move whose SAN sorts first (`played` tells
//! which). A move that would end the game by checkmate or stalemate is never
//! offered as an announcement.
//!
//! Positions are the same (9.2.2) when the same player is to move, the same
//! pieces stand on the same squares, the castling *rights* are the same
//! (whether or not castling is possible at that moment), and the same
//! en-passant captures are possible: an en-passant square counts only where
//! a capture is legal ([`EnPassantMode::Legal`]). Positions before a `FEN`
//! start are unknown and do not count.
//!
//! # Automatic ends (the game is over)
//!
//! * **Checkmate** (5.1.1), **stalemate** (5.2.1).
//! * **Dead position** (5.2.2), as far as shakmaty's insufficient-material
//!   test recognises one: neither side has mating material.
//! * **Fivefold repetition** (9.6.1): the same position has appeared five
//!   times, not necessarily consecutively. [`FivefoldRule::Consecutive2014`]
//!   applies the 2014 text (9.6a) instead, for games played under it: the
//!   same position after five consecutive alternate moves by each player,
//!   that is, the same position at five plies spaced four apart.
//! * **Seventy-five-move rule** (9.6.2, formerly 9.6b): the halfmove clock
//!   has reached 150 plies, unless the last move mated: mate takes
//!   precedence.
//!
//! Once the game is over, later moves are still checked for legality but
//! only listed as played after the end ([`GameReport::moves_after_end`]).
//!
//! # Tablebase verdict
//!
//! With a [`StoredValues`] store, every position the store can value
//! ([`resolve_dtz`](crate::probe::resolve_dtz) is `Ok`) gets a verdict: WDL and DTZ under the store's
//! rule, and the outcome once the halfmove clock is applied
//! ([`Verdict::new`](crate::value::Verdict::new)). Positions out of table range (too many pieces, a
//! missing table, castling rights) are simply not judged; a table without a
//! value for a placement is an error. A `verdict` event marks the first
//! judged position and every move that changes the result the clock allows:
//! a win or a draw thrown away, or a win that the clock turns into a draw
//! (for the defender: a loss saved by the rule).
//!
//! # Result
//!
//! The result the rules give is that of the automatic end, if any, and `*`
//! otherwise (resignation, agreement, a claim or the clock decided it). It is
//! shown beside the PGN's `Result` tag (or the movetext's termination marker
//! when the tag is missing), with [`Agreement::Disagrees`] where an automatic
//! end contradicts it.
//!
//! # Input errors
//!
//! A malformed PGN, a bad `FEN`, an unknown variant or an illegal move is a
//! [`GameError`] naming the game (number, players) and, where there is one,
//! the move; the other games of the file are adjudicated all the same. Note
//! that pgn-reader skips tokens it cannot read as moves, so a garbled move
//! usually surfaces as the next move being illegal.
//!
//! [`EnPassantMode::Legal`]: shakmaty::EnPassantMode::Legal

use std::io::{self, Read};

use pgn_reader::Reader;

use self::pgn::Collector;
use crate::probe::StoredValues;

mod pgn;
mod render;
mod replay;
mod report;

pub use render::{render_text, render_verdicts};
pub use report::{
    Agreement, Ending, Event, EventKind, GameError, GameLabel, GameReport, GameResult, PlyVerdict,
    VerdictChange,
};

/// Which text of the fivefold-repetition rule applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum FivefoldRule {
    /// The Laws since 2018 (9.6.1): the same position has appeared five
    /// times, not necessarily consecutively.
    #[default]
    Current,
    /// The 2014 Laws (9.6a): the same position after five consecutive
    /// alternate moves by each player, i.e. at plies `p`, `p - 4`, ...,
    /// `p - 16`.
    Consecutive2014,
}

/// How games are adjudicated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AdjudicateOptions {
    /// The fivefold-repetition text to apply.
    pub fivefold: FivefoldRule,
}

/// Adjudicate every game of a PGN, in file order, as the games are read.
///
/// `store`, if given, provides the tablebase verdicts (see the module doc);
/// pass `None` to apply the draw rules only. Each game gives a report or an
/// error; an error in one game does not stop the others. Reading stops at
/// an I/O error other than malformed data (reported as the last element).
/// Games are read and replayed one at a time, move by move: memory does
/// not grow with the file, nor with a game's moves after its end.
///
/// ```
/// use dtz50::adjudicate::{AdjudicateOptions, adjudicate_pgn};
///
/// let pgn = "[White \"A\"]\n[Black \"B\"]\n[Result \"1/2-1/2\"]\n\n\
///            1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1/2-1/2\n";
/// let mut games = adjudicate_pgn(pgn.as_bytes(), None, AdjudicateOptions::default());
/// let report = games.next().expect("one game").expect("legal game");
/// assert_eq!(report.events[0].ply, 8);
/// assert_eq!(report.events[0].san.as_deref(), Some("Ng8"));
/// assert!(games.next().is_none());
/// ```
pub fn adjudicate_pgn<'a, R: Read>(
    pgn: R,
    store: Option<&'a dyn StoredValues>,
    options: AdjudicateOptions,
) -> Games<'a, R> {
    Games {
        reader: Reader::new(pgn),
        collector: Collector::new(store, options),
        done: false,
    }
}

/// The games of a PGN, adjudicated one at a time (see [`adjudicate_pgn`]).
pub struct Games<'a, R> {
    reader: Reader<R>,
    collector: Collector<'a>,
    done: bool,
}

impl<R: Read> Iterator for Games<'_, R> {
    type Item = Result<GameReport, GameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.reader.read_game(&mut self.collector) {
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some(game)) => Some(game),
            Err(source) => {
                self.done = source.kind() != io::ErrorKind::InvalidData;
                Some(Err(GameError::Pgn {
                    game: self.collector.label.clone(),
                    plies: self.collector.plies,
                    source,
                }))
            }
        }
    }
}
