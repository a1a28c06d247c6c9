//! What adjudication reports: events, verdicts, results and errors, and
//! their JSON form (with the `serde` feature).

use std::{fmt, io};

use shakmaty::{Color, san::SanError};
use thiserror::Error;

use crate::{
    probe::ProbeError,
    value::{Outcome, Rule, Verdict},
};

/// What an [`Event`] is about. Serialized in kebab case (`fifty-move`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum EventKind {
    /// A threefold-repetition claim is possible (9.2).
    Threefold,
    /// Fivefold repetition: the game is drawn (9.6.1, or 9.6a of 2014).
    Fivefold,
    /// A fifty-move claim is possible (9.3).
    FiftyMove,
    /// Seventy-five moves without capture or pawn move: drawn (9.6.2).
    SeventyFiveMove,
    /// Checkmate: the game is won (5.1.1).
    Checkmate,
    /// Stalemate: the game is drawn (5.2.1).
    Stalemate,
    /// Neither side can mate: the game is drawn (5.2.2).
    DeadPosition,
    /// The tablebase verdict: the game enters table range, or a move
    /// changes the result the clock allows.
    Verdict,
}

impl EventKind {
    /// The serialized name: `threefold`, `fifty-move`, ...
    pub const fn name(self) -> &'static str {
        match self {
            EventKind::Threefold => "threefold",
            EventKind::Fivefold => "fivefold",
            EventKind::FiftyMove => "fifty-move",
            EventKind::SeventyFiveMove => "seventy-five-move",
            EventKind::Checkmate => "checkmate",
            EventKind::Stalemate => "stalemate",
            EventKind::DeadPosition => "dead-position",
            EventKind::Verdict => "verdict",
        }
    }

    /// Words for people: "threefold repetition", ...
    pub const fn description(self) -> &'static str {
        match self {
            EventKind::Threefold => "threefold repetition",
            EventKind::Fivefold => "fivefold repetition",
            EventKind::FiftyMove => "fifty-move rule",
            EventKind::SeventyFiveMove => "seventy-five-move rule",
            EventKind::Checkmate => "checkmate",
            EventKind::Stalemate => "stalemate",
            EventKind::DeadPosition => "dead position",
            EventKind::Verdict => "tablebase verdict",
        }
    }

    /// Whether the event ends the game by itself.
    pub const fn ends_game(self) -> bool {
        matches!(
            self,
            EventKind::Fivefold
                | EventKind::SeventyFiveMove
                | EventKind::Checkmate
                | EventKind::Stalemate
                | EventKind::DeadPosition
        )
    }

    /// Whether the event is a draw that a player may claim.
    pub const fn is_claim(self) -> bool {
        matches!(self, EventKind::Threefold | EventKind::FiftyMove)
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a move changed the tablebase verdict (for the player who made it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum VerdictChange {
    /// The first judged position (the game enters table range).
    EnteredRange,
    /// A win turned into a draw or a loss, whatever the clock.
    WinThrownAway,
    /// A win that is still a win without the rule, but the clock no longer
    /// leaves enough plies: a draw (for the defender, a loss saved).
    WinDrawnByClock,
    /// A draw turned into a loss.
    DrawThrownAway,
    /// The mover's result improved (possible only where a draw could have
    /// been claimed and a zeroing move restarted the clock instead).
    Improved,
}

/// A game result in PGN notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum GameResult {
    /// `1-0`.
    #[cfg_attr(feature = "serde", serde(rename = "1-0"))]
    WhiteWins,
    /// `0-1`.
    #[cfg_attr(feature = "serde", serde(rename = "0-1"))]
    BlackWins,
    /// `1/2-1/2`.
    #[cfg_attr(feature = "serde", serde(rename = "1/2-1/2"))]
    Draw,
    /// `*`: not decided (by the rules, or in the PGN).
    #[cfg_attr(feature = "serde", serde(rename = "*"))]
    Undecided,
}

impl GameResult {
    /// The PGN notation.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Undecided => "*",
        }
    }

    /// Parse a `Result` tag value (`None` if it is not one of the four).
    pub fn from_tag(tag: &str) -> Option<GameResult> {
        match tag.trim() {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" | "½-½" => Some(GameResult::Draw),
            "*" => Some(GameResult::Undecided),
            _ => None,
        }
    }

    /// A win for `winner`.
    pub const fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// What the result means for `color`: win, draw or loss (`None` if
    /// undecided).
    pub fn for_color(self, color: Color) -> Option<Outcome> {
        match (self, color) {
            (GameResult::WhiteWins, Color::White) | (GameResult::BlackWins, Color::Black) => {
                Some(Outcome::Win)
            }
            (GameResult::WhiteWins, Color::Black) | (GameResult::BlackWins, Color::White) => {
                Some(Outcome::Loss)
            }
            (GameResult::Draw, _) => Some(Outcome::Draw),
            (GameResult::Undecided, _) => None,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the PGN's result compares with the result the rules give.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Agreement {
    /// The rules ended the game, and the PGN gives the same result.
    Agrees,
    /// The rules ended the game, and the PGN gives another result (or none).
    Disagrees,
    /// The rules did not end the game: the result rests with the players
    /// (resignation, agreement, a claim, the clock), so there is nothing to
    /// compare.
    Open,
}

/// Which game of a file: its number (from 1) and players, where known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GameLabel {
    /// Position of the game in the file, counting from 1.
    pub number: usize,
    /// The `White` tag.
    pub white: Option<String>,
    /// The `Black` tag.
    pub black: Option<String>,
}

impl fmt::Display for GameLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "game {}", self.number)?;
        if self.white.is_some() || self.black.is_some() {
            write!(
                f,
                " ({} – {})",
                self.white.as_deref().unwrap_or("?"),
                self.black.as_deref().unwrap_or("?")
            )?;
        }
        Ok(())
    }
}

/// The tablebase verdict of one position of the game.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PlyVerdict {
    /// Half-moves played before this position.
    pub ply: u32,
    /// The move that led here (SAN), `None` for the starting position.
    pub san: Option<String>,
    /// The side to move.
    #[cfg_attr(feature = "serde", serde(serialize_with = "ser_color"))]
    pub turn: Color,
    /// The verdict for the side to move under the game's halfmove clock
    /// and the store's rule (in JSON, its fields stand beside the others).
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub verdict: Verdict,
    /// The same outcome as a game result.
    pub result: GameResult,
}

impl PlyVerdict {
    pub(super) fn new(ply: u32, san: Option<String>, turn: Color, verdict: Verdict) -> PlyVerdict {
        let result = match verdict.outcome {
            Outcome::Win => GameResult::win_for(turn),
            Outcome::Loss => GameResult::win_for(!turn),
            Outcome::Draw => GameResult::Draw,
        };
        PlyVerdict {
            ply,
            san,
            turn,
            verdict,
            result,
        }
    }
}

impl fmt::Display for PlyVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} to move, DTZ {}: {}",
            color_title(self.turn),
            self.verdict.dtz,
            self.verdict
        )
    }
}

/// One thing the rules or the tablebases say about the game.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// Half-moves played when the event holds, counting from the game's
    /// first position; a claim made by announcing a move carries the ply
    /// that move would make.
    pub ply: u32,
    /// The move number of the move concerned.
    pub move_number: Option<u32>,
    /// Who makes (or would make) the move concerned.
    #[cfg_attr(feature = "serde", serde(serialize_with = "ser_opt_color"))]
    pub color: Option<Color>,
    /// The move concerned, in SAN (`None` for the starting position).
    pub san: Option<String>,
    /// Whether `san` was played in the game (`false` for a move the player
    /// could have announced instead of the one played).
    pub played: bool,
    /// Whether the event ends the game.
    pub ends_game: bool,
    /// For `verdict` events: how the verdict changed.
    pub change: Option<VerdictChange>,
    /// For `verdict` events: the verdict after the move.
    pub verdict: Option<PlyVerdict>,
    /// A sentence for people, e.g. "67. Kd3?? — the win needed 31 plies but
    /// only 30 remain on the clock: now a draw".
    pub message: String,
}

/// How and when the rules ended the game.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Ending {
    /// The rule that ended it (the first, if several apply at once).
    pub kind: EventKind,
    /// Half-moves played when it ended.
    pub ply: u32,
    /// The last move, in SAN (`None` if the starting position ends the game).
    pub san: Option<String>,
}

/// The adjudication of one game.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct GameReport {
    /// Which game.
    pub game: GameLabel,
    /// The `FEN` tag the game starts from, if any.
    pub fen: Option<String>,
    /// Half-moves in the PGN's main line.
    pub plies: u32,
    /// The rule of the tablebase store, if one was given (`50`, `75`, `none`).
    pub table_rule: Option<Rule>,
    /// Everything the rules and the tablebases say, in game order.
    pub events: Vec<Event>,
    /// The tablebase verdict after every move in table range, up to the end
    /// of the game.
    pub verdicts: Vec<PlyVerdict>,
    /// The result the rules give: that of an automatic end, `*` if none.
    pub result: GameResult,
    /// The automatic end, if any.
    pub ended: Option<Ending>,
    /// The draws that could have been claimed before the end, in order.
    pub claims: Vec<EventKind>,
    /// The PGN's `Result` tag (the movetext's termination marker if there
    /// is no tag).
    pub result_tag: Option<String>,
    /// How `result_tag` compares with `result`.
    pub agreement: Agreement,
    /// Moves played after the rules had ended the game, labelled like
    /// `41. Nf3`.
    pub moves_after_end: Vec<String>,
    /// How many half-moves were played after the end (only the first 20
    /// are listed in `moves_after_end`).
    pub played_after_end: u32,
}

/// Why a game could not be adjudicated.
#[derive(Debug, Error)]
pub enum GameError {
    /// The PGN could not be read.
    #[error("{game}: malformed PGN after {plies} half-moves")]
    Pgn {
        /// The game being read.
        game: GameLabel,
        /// Moves read in that game before the error.
        plies: usize,
        /// What the reader reported.
        source: io::Error,
    },
    /// A `Variant` tag other than standard chess or Chess960.
    #[error("{game}: unknown variant '{variant}'")]
    UnknownVariant {
        /// The game.
        game: GameLabel,
        /// The tag's value.
        variant: String,
    },
    /// A `FEN` tag that is not a legal position (or `SetUp "1"` without one).
    #[error("{game}: bad FEN '{fen}': {message}")]
    BadFen {
        /// The game.
        game: GameLabel,
        /// The tag's value.
        fen: String,
        /// What is wrong with it.
        message: String,
    },
    /// A move that is not legal (or ambiguous) in its position.
    #[error("{game}: illegal move {label}: {}", san_error_text(reason))]
    IllegalMove {
        /// The game.
        game: GameLabel,
        /// The ply the move would have made.
        ply: u32,
        /// The move with its number, as written (`12... Qxh7`).
        label: String,
        /// The move as written.
        san: String,
        /// Why shakmaty rejected it.
        #[source]
        reason: SanError,
    },
    /// The tablebase store failed on a position in range (a corrupt table).
    #[error("{game}: tablebase lookup failed after {ply} half-moves")]
    Lookup {
        /// The game.
        game: GameLabel,
        /// Half-moves played before the position.
        ply: u32,
        /// The store's error (boxed: it is large, and rare).
        #[source]
        source: Box<ProbeError>,
    },
}

impl GameError {
    /// The game the error is about.
    pub fn game(&self) -> &GameLabel {
        match self {
            GameError::Pgn { game, .. }
            | GameError::UnknownVariant { game, .. }
            | GameError::BadFen { game, .. }
            | GameError::IllegalMove { game, .. }
            | GameError::Lookup { game, .. } => game,
        }
    }
}

fn san_error_text(reason: &SanError) -> &'static str {
    match reason {
        SanError::IllegalSan => "no legal move matches",
        SanError::AmbiguousSan => "ambiguous: several legal moves match",
    }
}

pub(super) fn color_title(color: Color) -> &'static str {
    color.fold_wb("White", "Black")
}

#[cfg(feature = "serde")]
fn ser_color<S: serde::Serializer>(color: &Color, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(color.fold_wb("white", "black"))
}

#[cfg(feature = "serde")]
fn ser_opt_color<S: serde::Serializer>(color: &Option<Color>, s: S) -> Result<S::Ok, S::Error> {
    match color {
        Some(c) => s.serialize_some(c.fold_wb("white", "black")),
        None => s.serialize_none(),
    }
}
