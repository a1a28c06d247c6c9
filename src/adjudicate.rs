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
//! ([`resolve_dtz`] is `Ok`) gets a verdict: WDL and DTZ under the store's
//! rule, and the outcome once the halfmove clock is applied
//! ([`Verdict::new`]). Positions out of table range (too many pieces, a
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

use std::{
    collections::HashMap,
    fmt,
    io::{self, Read},
    ops::ControlFlow,
};

use pgn_reader::{RawTag, Reader, Visitor};
use serde::{Serialize, Serializer};
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Position,
    Square,
    fen::Fen,
    san::{SanError, SanPlus},
};
use thiserror::Error;

use crate::{
    table::{LookupError, StoredValues, resolve_dtz},
    value::{Dtz, Outcome, Rule, Verdict, Wdl},
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

/// What an [`Event`] is about. Serialized in kebab case (`fifty-move`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum GameResult {
    /// `1-0`.
    #[serde(rename = "1-0")]
    WhiteWins,
    /// `0-1`.
    #[serde(rename = "0-1")]
    BlackWins,
    /// `1/2-1/2`.
    #[serde(rename = "1/2-1/2")]
    Draw,
    /// `*`: not decided (by the rules, or in the PGN).
    #[serde(rename = "*")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlyVerdict {
    /// Half-moves played before this position.
    pub ply: u32,
    /// The move that led here (SAN), `None` for the starting position.
    pub san: Option<String>,
    /// The side to move.
    #[serde(serialize_with = "ser_color")]
    pub turn: Color,
    /// WDL for the side to move with the clock at zero, under the store's
    /// rule (serialized by name: `win`, `cursed win`, ...).
    #[serde(serialize_with = "ser_wdl")]
    pub wdl: Wdl,
    /// Exact DTZ in plies for the side to move.
    #[serde(serialize_with = "ser_dtz")]
    pub dtz: Dtz,
    /// The halfmove clock.
    pub halfmove: u32,
    /// Plies left before the rule applies (`None` without a rule).
    pub plies_left: Option<i64>,
    /// The outcome for the side to move once the clock is applied.
    #[serde(serialize_with = "ser_outcome")]
    pub outcome: Outcome,
    /// Plies to spare for a decisive outcome (see [`Verdict::margin`]).
    pub margin: Option<u32>,
    /// The same outcome as a game result.
    pub result: GameResult,
}

impl PlyVerdict {
    fn new(ply: u32, san: Option<String>, turn: Color, v: Verdict, rule: Rule) -> PlyVerdict {
        let result = match v.outcome {
            Outcome::Win => GameResult::win_for(turn),
            Outcome::Loss => GameResult::win_for(!turn),
            Outcome::Draw => GameResult::Draw,
        };
        PlyVerdict {
            ply,
            san,
            turn,
            wdl: v.wdl,
            dtz: v.dtz,
            halfmove: v.halfmove,
            plies_left: v.plies_left(rule),
            outcome: v.outcome,
            margin: v.margin,
            result,
        }
    }
}

impl fmt::Display for PlyVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} to move: {}, DTZ {}, clock {}",
            color_title(self.turn),
            self.wdl.name(),
            self.dtz,
            self.halfmove
        )?;
        match self.plies_left {
            Some(left) if left > 0 => write!(f, " ({left} left)")?,
            Some(_) => f.write_str(" (none left)")?,
            None => {}
        }
        match (self.result, self.margin) {
            (GameResult::Draw, _) => f.write_str(" → draw"),
            (result, Some(margin)) => write!(
                f,
                " → {} wins, {margin} {} to spare",
                result_winner(result),
                plies(u64::from(margin))
            ),
            (result, None) => write!(f, " → {} wins", result_winner(result)),
        }
    }
}

/// One thing the rules or the tablebases say about the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    #[serde(serialize_with = "ser_opt_color")]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ending {
    /// The rule that ended it (the first, if several apply at once).
    pub kind: EventKind,
    /// Half-moves played when it ended.
    pub ply: u32,
    /// The last move, in SAN (`None` if the starting position ends the game).
    pub san: Option<String>,
}

/// The adjudication of one game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GameReport {
    /// Which game.
    pub game: GameLabel,
    /// The `FEN` tag the game starts from, if any.
    pub fen: Option<String>,
    /// Half-moves in the PGN's main line.
    pub plies: u32,
    /// The rule of the tablebase store, if one was given (`50`, `75`, `none`).
    #[serde(serialize_with = "ser_opt_rule")]
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
}

/// Why a game could not be adjudicated.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum GameError {
    /// The PGN could not be read.
    #[error("{game}: malformed PGN after {plies} half-moves: {message}")]
    Pgn {
        /// The game being read.
        game: GameLabel,
        /// Moves read in that game before the error.
        plies: usize,
        /// What the reader reported.
        message: String,
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
    #[error("{game}: tablebase lookup failed after {ply} half-moves: {source}")]
    Lookup {
        /// The game.
        game: GameLabel,
        /// Half-moves played before the position.
        ply: u32,
        /// The store's error.
        #[source]
        source: LookupError,
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

/// Adjudicate every game of a PGN, in file order.
///
/// `store`, if given, provides the tablebase verdicts (see the module doc);
/// pass `None` to apply the draw rules only. Each game gives a report or an
/// error; an error in one game does not stop the others. Reading stops at
/// an I/O error other than malformed data (reported as the last element).
///
/// ```
/// use dtz50::adjudicate::{AdjudicateOptions, adjudicate_pgn};
///
/// let pgn = "[White \"A\"]\n[Black \"B\"]\n[Result \"1/2-1/2\"]\n\n\
///            1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1/2-1/2\n";
/// let reports = adjudicate_pgn(pgn.as_bytes(), None, &AdjudicateOptions::default());
/// let report = reports[0].as_ref().expect("legal game");
/// assert_eq!(report.events[0].ply, 8);
/// assert_eq!(report.events[0].san.as_deref(), Some("Ng8"));
/// ```
pub fn adjudicate_pgn<R: Read>(
    pgn: R,
    store: Option<&dyn StoredValues>,
    options: &AdjudicateOptions,
) -> Vec<Result<GameReport, GameError>> {
    let mut reader = Reader::new(pgn);
    let mut collector = Collector::default();
    let mut out = Vec::new();
    loop {
        match reader.read_game(&mut collector) {
            Ok(None) => break,
            Ok(Some(raw)) => out.push(adjudicate_game(raw, store, options)),
            Err(err) => {
                out.push(Err(GameError::Pgn {
                    game: collector.label.clone(),
                    plies: collector.plies,
                    message: err.to_string(),
                }));
                if err.kind() != io::ErrorKind::InvalidData {
                    break;
                }
            }
        }
    }
    out
}

/// The human-readable report of one game: its events, the result the rules
/// give beside the PGN's, and the moves played after the end. Same as the
/// report's `Display`.
pub fn render_text(report: &GameReport) -> String {
    report.to_string()
}

/// The tablebase verdict after every judged move, one line each (empty if
/// no position was in table range).
pub fn render_verdicts(report: &GameReport) -> String {
    let mut out = String::new();
    for v in &report.verdicts {
        let after = match &v.san {
            Some(san) => format!("after {san}"),
            None => "start".to_owned(),
        };
        out.push_str(&format!("  ply {:>3} {after}: {v}\n", v.ply));
    }
    out
}

impl fmt::Display for GameReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Game {}", self.game.number)?;
        if self.game.white.is_some() || self.game.black.is_some() {
            write!(
                f,
                ": {} – {}",
                self.game.white.as_deref().unwrap_or("?"),
                self.game.black.as_deref().unwrap_or("?")
            )?;
        }
        writeln!(f)?;
        if let Some(fen) = &self.fen {
            writeln!(f, "  from {fen}")?;
        }
        if self.events.is_empty() {
            writeln!(f, "  nothing to report")?;
        }
        for event in &self.events {
            writeln!(f, "  ply {:>3}  {}", event.ply, event.message)?;
        }
        match &self.ended {
            Some(end) => {
                write!(
                    f,
                    "  Rules: {} by {} at ply {}",
                    self.result,
                    end.kind.description(),
                    end.ply
                )?;
                if let Some(san) = &end.san {
                    write!(f, " ({san})")?;
                }
                writeln!(f)?;
            }
            None => writeln!(
                f,
                "  Rules: * (no automatic end: the result rests with the players)"
            )?,
        }
        if !self.claims.is_empty() {
            let claims: Vec<String> = self
                .events
                .iter()
                .filter(|e| e.kind.is_claim())
                .map(|e| format!("{} from ply {}", e.kind.description(), e.ply))
                .collect();
            writeln!(f, "  Draw claims available: {}", claims.join(", "))?;
        }
        let tag = self.result_tag.as_deref().unwrap_or("(none)");
        let agreement = match self.agreement {
            Agreement::Agrees => "agrees with the rules",
            Agreement::Disagrees => "DISAGREES with the rules",
            Agreement::Open => "not decided by the rules",
        };
        writeln!(f, "  PGN result: {tag} ({agreement})")?;
        if !self.moves_after_end.is_empty() {
            writeln!(
                f,
                "  Played after the game had ended: {} ({} {})",
                self.moves_after_end.join(", "),
                self.moves_after_end.len(),
                if self.moves_after_end.len() == 1 {
                    "half-move"
                } else {
                    "half-moves"
                }
            )?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Reading: collect each game's tags and main-line moves.

/// A game as read from the PGN, before replaying it.
#[derive(Debug, Default)]
struct RawGame {
    label: GameLabel,
    result_tag: Option<String>,
    fen: Option<String>,
    setup: Option<String>,
    variant: Option<String>,
    moves: Vec<SanPlus>,
    marker: Option<GameResult>,
}

/// The pgn-reader visitor. It keeps the label and move count of the game
/// being read, to name it if the reader fails half-way.
#[derive(Debug, Default)]
struct Collector {
    games: usize,
    label: GameLabel,
    plies: usize,
}

impl Visitor for Collector {
    type Tags = RawGame;
    type Movetext = RawGame;
    type Output = RawGame;

    fn begin_tags(&mut self) -> ControlFlow<RawGame, RawGame> {
        self.games += 1;
        self.plies = 0;
        self.label = GameLabel {
            number: self.games,
            ..GameLabel::default()
        };
        ControlFlow::Continue(RawGame {
            label: self.label.clone(),
            ..RawGame::default()
        })
    }

    fn tag(&mut self, game: &mut RawGame, name: &[u8], value: RawTag<'_>) -> ControlFlow<RawGame> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"White" => {
                self.label.white = Some(value.clone());
                game.label.white = Some(value);
            }
            b"Black" => {
                self.label.black = Some(value.clone());
                game.label.black = Some(value);
            }
            b"Result" => game.result_tag = Some(value),
            b"FEN" => game.fen = Some(value),
            b"SetUp" => game.setup = Some(value),
            b"Variant" => game.variant = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, game: RawGame) -> ControlFlow<RawGame, RawGame> {
        ControlFlow::Continue(game)
    }

    fn san(&mut self, game: &mut RawGame, san: SanPlus) -> ControlFlow<RawGame> {
        self.plies += 1;
        game.moves.push(san);
        ControlFlow::Continue(())
    }

    fn outcome(
        &mut self,
        game: &mut RawGame,
        outcome: pgn_reader::Outcome,
    ) -> ControlFlow<RawGame> {
        game.marker = Some(match outcome.known() {
            Some(KnownOutcome::Decisive { winner }) => GameResult::win_for(winner),
            Some(KnownOutcome::Draw) => GameResult::Draw,
            None => GameResult::Undecided,
        });
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: RawGame) -> RawGame {
        game
    }
}

// ---------------------------------------------------------------------------
// Replaying.

/// Position identity for repetitions (FIDE 9.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PositionKey {
    board: Board,
    turn: Color,
    castling_rights: Bitboard,
    en_passant: Option<Square>,
}

impl PositionKey {
    fn of(pos: &Chess) -> PositionKey {
        PositionKey {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling_rights: pos.castles().castling_rights(),
            en_passant: pos.ep_square(EnPassantMode::Legal),
        }
    }
}

/// A move with what is needed to name it.
#[derive(Debug, Clone)]
struct MoveInfo {
    number: u32,
    color: Color,
    san: String,
}

impl MoveInfo {
    /// Name `m` in `pos` (before it is played).
    fn of(pos: &Chess, m: Move) -> MoveInfo {
        MoveInfo {
            number: pos.fullmoves().get(),
            color: pos.turn(),
            san: SanPlus::from_move(pos.clone(), m).to_string(),
        }
    }

    fn label(&self) -> String {
        move_label(self.number, self.color, &self.san)
    }
}

fn move_label(number: u32, color: Color, san: &str) -> String {
    match color {
        Color::White => format!("{number}. {san}"),
        Color::Black => format!("{number}... {san}"),
    }
}

fn adjudicate_game(
    raw: RawGame,
    store: Option<&dyn StoredValues>,
    options: &AdjudicateOptions,
) -> Result<GameReport, GameError> {
    let mode = castling_mode(&raw)?;
    let start = start_position(&raw, mode)?;
    let mut replay = Replay::new(raw.label.clone(), start, store, *options);

    let mut last: Option<MoveInfo> = None;
    let mut pending = replay.resolve(raw.moves.first())?;
    loop {
        replay.examine(last.as_ref(), pending)?;
        let Some(m) = pending else { break };
        last = Some(replay.play(m));
        pending = replay.resolve(raw.moves.get(replay.ply as usize))?;
    }

    let result_tag = raw
        .result_tag
        .or_else(|| raw.marker.map(|r| r.as_str().to_owned()));
    Ok(replay.finish(raw.fen, raw.moves.len(), result_tag))
}

fn castling_mode(raw: &RawGame) -> Result<CastlingMode, GameError> {
    let Some(variant) = &raw.variant else {
        return Ok(CastlingMode::Standard);
    };
    match variant.trim().to_ascii_lowercase().as_str() {
        "" | "standard" | "chess" | "normal" | "from position" | "fromposition" => {
            Ok(CastlingMode::Standard)
        }
        "chess960" | "chess 960" | "960" | "fischerandom" | "fischer random" | "freestyle" => {
            Ok(CastlingMode::Chess960)
        }
        _ => Err(GameError::UnknownVariant {
            game: raw.label.clone(),
            variant: variant.clone(),
        }),
    }
}

fn start_position(raw: &RawGame, mode: CastlingMode) -> Result<Chess, GameError> {
    let Some(fen) = &raw.fen else {
        if raw.setup.as_deref().map(str::trim) == Some("1") {
            return Err(GameError::BadFen {
                game: raw.label.clone(),
                fen: String::new(),
                message: "SetUp \"1\" without a FEN tag".to_owned(),
            });
        }
        return Ok(Chess::default());
    };
    let bad = |message: String| GameError::BadFen {
        game: raw.label.clone(),
        fen: fen.clone(),
        message,
    };
    let parsed = Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| bad(e.to_string()))?;
    parsed
        .into_position::<Chess>(mode)
        .map_err(|e| bad(e.to_string()))
}

/// The state of one game being replayed.
struct Replay<'a> {
    game: GameLabel,
    store: Option<&'a dyn StoredValues>,
    options: AdjudicateOptions,
    pos: Chess,
    ply: u32,
    /// Position keys by ply, from the start.
    history: Vec<PositionKey>,
    /// Appearances of each position since the last capture or pawn move
    /// (no earlier position can appear again).
    counts: HashMap<PositionKey, u32>,
    /// Whether some position in `counts` has appeared twice.
    repeated: bool,
    threefold_found: bool,
    fifty_found: bool,
    ended: Option<(Ending, GameResult)>,
    events: Vec<Event>,
    verdicts: Vec<PlyVerdict>,
    last_verdict: Option<PlyVerdict>,
    moves_after_end: Vec<String>,
}

impl<'a> Replay<'a> {
    fn new(
        game: GameLabel,
        pos: Chess,
        store: Option<&'a dyn StoredValues>,
        options: AdjudicateOptions,
    ) -> Replay<'a> {
        let key = PositionKey::of(&pos);
        let mut counts = HashMap::new();
        counts.insert(key.clone(), 1);
        Replay {
            game,
            store,
            options,
            pos,
            ply: 0,
            history: vec![key],
            counts,
            repeated: false,
            threefold_found: false,
            fifty_found: false,
            ended: None,
            events: Vec::new(),
            verdicts: Vec::new(),
            last_verdict: None,
            moves_after_end: Vec::new(),
        }
    }

    /// The legal move a SAN token stands for in the current position.
    fn resolve(&self, san: Option<&SanPlus>) -> Result<Option<Move>, GameError> {
        let Some(san) = san else { return Ok(None) };
        san.san
            .to_move(&self.pos)
            .map(Some)
            .map_err(|reason| GameError::IllegalMove {
                game: self.game.clone(),
                ply: self.ply + 1,
                label: move_label(
                    self.pos.fullmoves().get(),
                    self.pos.turn(),
                    &san.to_string(),
                ),
                san: san.to_string(),
                reason,
            })
    }

    /// Play a legal move.
    fn play(&mut self, m: Move) -> MoveInfo {
        let number = self.pos.fullmoves().get();
        let color = self.pos.turn();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.pos, m).to_string();
        self.ply += 1;
        let info = MoveInfo { number, color, san };
        if self.ended.is_some() {
            self.moves_after_end.push(info.label());
        } else {
            let key = PositionKey::of(&self.pos);
            if m.is_zeroing() {
                self.counts.clear();
                self.repeated = false;
            }
            let count = self.counts.entry(key.clone()).or_insert(0);
            *count += 1;
            self.repeated |= *count >= 2;
            self.history.push(key);
        }
        info
    }

    fn count(&self, key: &PositionKey) -> u32 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// Everything about the current position: `last` is the move that led
    /// here, `next` the move played from here (if any).
    fn examine(&mut self, last: Option<&MoveInfo>, next: Option<Move>) -> Result<(), GameError> {
        if self.ended.is_some() {
            return Ok(());
        }
        self.judge(last)?;
        self.automatic_ends(last);
        if self.ended.is_none() {
            self.claims(last, next);
        }
        Ok(())
    }

    /// Record an event at the current ply (`announced`: at the next ply, for
    /// a claim made by announcing `mv`).
    fn push(
        &mut self,
        kind: EventKind,
        announced: bool,
        mv: Option<&MoveInfo>,
        played: bool,
        message: String,
    ) {
        self.events.push(Event {
            kind,
            ply: self.ply + u32::from(announced),
            move_number: mv.map(|m| m.number),
            color: mv.map(|m| m.color),
            san: mv.map(|m| m.san.clone()),
            played: played && mv.is_some(),
            ends_game: kind.ends_game(),
            change: None,
            verdict: None,
            message,
        });
    }

    /// The tablebase verdict of the current position.
    fn judge(&mut self, last: Option<&MoveInfo>) -> Result<(), GameError> {
        let Some(store) = self.store else {
            return Ok(());
        };
        let dtz = match resolve_dtz(store, &self.pos) {
            Ok(dtz) => dtz,
            Err(source @ LookupError::NoValue { .. }) => {
                return Err(GameError::Lookup {
                    game: self.game.clone(),
                    ply: self.ply,
                    source,
                });
            }
            Err(_) => {
                self.last_verdict = None;
                return Ok(());
            }
        };
        let rule = store.rule();
        let verdict = Verdict::new(dtz, rule, self.pos.halfmoves(), self.pos.is_checkmate());
        let current = PlyVerdict::new(
            self.ply,
            last.map(|m| m.san.clone()),
            self.pos.turn(),
            verdict,
            rule,
        );
        let change = match (&self.last_verdict, last) {
            (None, _) => Some(VerdictChange::EnteredRange),
            (Some(prev), Some(mv)) => classify(prev, &current, mv.color),
            (Some(_), None) => None,
        };
        if let Some(change) = change {
            let message = verdict_message(change, last, &current);
            self.push(EventKind::Verdict, false, last, true, message);
            if let Some(event) = self.events.last_mut() {
                event.change = Some(change);
                event.verdict = Some(current.clone());
            }
        }
        self.verdicts.push(current.clone());
        self.last_verdict = Some(current);
        Ok(())
    }

    /// Checkmate, stalemate, dead position, fivefold, seventy-five moves.
    fn automatic_ends(&mut self, last: Option<&MoveInfo>) {
        let at = match last {
            Some(mv) => format!("{} — ", mv.label()),
            None => "the starting position — ".to_owned(),
        };
        let mut ends: Vec<(EventKind, String)> = Vec::new();
        let result;
        if self.pos.is_checkmate() {
            let winner = !self.pos.turn();
            result = GameResult::win_for(winner);
            let mut message = format!("{at}checkmate: {} wins (FIDE 5.1.1)", color_title(winner));
            if self.pos.halfmoves() >= 150 {
                message.push_str(
                    "; mate takes precedence over the seventy-five-move rule (FIDE 9.6.2)",
                );
            }
            ends.push((EventKind::Checkmate, message));
        } else {
            result = GameResult::Draw;
            if self.pos.is_stalemate() {
                ends.push((
                    EventKind::Stalemate,
                    format!("{at}stalemate: the game is drawn (FIDE 5.2.1)"),
                ));
            }
            if self.pos.is_insufficient_material() {
                ends.push((
                    EventKind::DeadPosition,
                    format!(
                        "{at}neither side has mating material: the game is drawn \
                         (dead position, FIDE 5.2.2)"
                    ),
                ));
            }
            if let Some(message) = self.fivefold() {
                ends.push((EventKind::Fivefold, format!("{at}{message}")));
            }
            if self.pos.halfmoves() >= 150 {
                let what = if last.is_some() {
                    "75 moves by each player without a capture or pawn move".to_owned()
                } else {
                    format!("the halfmove clock stands at {}", self.pos.halfmoves())
                };
                ends.push((
                    EventKind::SeventyFiveMove,
                    format!("{at}{what}: the game is drawn (FIDE 9.6.2)"),
                ));
            }
        }
        for (kind, message) in &ends {
            self.push(*kind, false, last, true, message.clone());
        }
        if let Some((kind, _)) = ends.first() {
            let ending = Ending {
                kind: *kind,
                ply: self.ply,
                san: last.map(|m| m.san.clone()),
            };
            self.ended = Some((ending, result));
        }
    }

    /// The fivefold message, if the current position completes one.
    fn fivefold(&self) -> Option<&'static str> {
        let current = self.history.last()?;
        match self.options.fivefold {
            FivefoldRule::Current => (self.count(current) >= 5).then_some(
                "the position appears for the fifth time: the game is drawn (FIDE 9.6.1)",
            ),
            FivefoldRule::Consecutive2014 => {
                let n = self.history.len();
                let repeated = (1..=4).all(|k| {
                    n.checked_sub(1 + 4 * k)
                        .and_then(|i| self.history.get(i))
                        .is_some_and(|earlier| earlier == current)
                });
                repeated.then_some(
                    "the position appears for the fifth time in consecutive alternate moves: \
                     the game is drawn (FIDE 2014 Laws, 9.6a)",
                )
            }
        }
    }

    /// The first threefold and fifty-move claims.
    fn claims(&mut self, last: Option<&MoveInfo>, next: Option<Move>) {
        let halfmoves = self.pos.halfmoves();
        if !self.threefold_found
            && let Some(key) = self.history.last()
            && self.count(key) >= 3
        {
            self.threefold_found = true;
            let at = last.map_or_else(String::new, |m| format!("{} — ", m.label()));
            self.push(
                EventKind::Threefold,
                false,
                last,
                true,
                format!(
                    "{at}the position appears for the third time: a draw can be claimed (FIDE 9.2)"
                ),
            );
        }
        if !self.fifty_found && halfmoves >= 100 {
            self.fifty_found = true;
            let message = match last {
                Some(mv) if halfmoves == 100 => format!(
                    "{} — 50 moves by each player without a capture or pawn move: \
                     a draw can be claimed (FIDE 9.3)",
                    mv.label()
                ),
                Some(mv) => format!(
                    "{} — the halfmove clock stands at {halfmoves}: a draw can be claimed (FIDE 9.3)",
                    mv.label()
                ),
                None => format!(
                    "the game starts with the halfmove clock at {halfmoves}: \
                     a draw can be claimed (FIDE 9.3)"
                ),
            };
            self.push(EventKind::FiftyMove, false, last, true, message);
        }
        if self.threefold_found && self.fifty_found {
            return;
        }

        // Claims by announcing a move (9.2.1.1, 9.3.1), if one can exist.
        let look_for_threefold = !self.threefold_found && self.repeated;
        let look_for_fifty = !self.fifty_found && halfmoves + 1 >= 100;
        if !look_for_threefold && !look_for_fifty {
            return;
        }
        let mut threefold: Vec<Move> = Vec::new();
        let mut fifty: Vec<Move> = Vec::new();
        for m in self.pos.legal_moves() {
            let mut after = self.pos.clone();
            after.play_unchecked(m);
            if after.legal_moves().is_empty() {
                continue; // checkmate or stalemate: the game would end anyway
            }
            if look_for_threefold && self.count(&PositionKey::of(&after)) >= 2 {
                threefold.push(m);
            }
            if look_for_fifty && !m.is_zeroing() {
                fifty.push(m);
            }
        }
        if let Some((mv, played)) = self.pick(&threefold, next) {
            self.threefold_found = true;
            let message = if played {
                format!(
                    "{} — the position appears for the third time: a draw can be claimed (FIDE 9.2)",
                    mv.label()
                )
            } else {
                format!(
                    "{} — {} could claim a draw by announcing this move, which repeats the \
                     position for the third time (FIDE 9.2.1.1); {}",
                    mv.label(),
                    color_title(mv.color),
                    self.instead(next)
                )
            };
            self.push(EventKind::Threefold, true, Some(&mv), played, message);
        }
        if let Some((mv, played)) = self.pick(&fifty, next) {
            self.fifty_found = true;
            let message = if played {
                format!(
                    "{} — 50 moves by each player without a capture or pawn move: \
                     a draw can be claimed (FIDE 9.3)",
                    mv.label()
                )
            } else {
                format!(
                    "{} — {} could claim a draw by announcing this move, which completes 50 \
                     moves by each player without a capture or pawn move (FIDE 9.3.1); {}",
                    mv.label(),
                    color_title(mv.color),
                    self.instead(next)
                )
            };
            self.push(EventKind::FiftyMove, true, Some(&mv), played, message);
        }
    }

    /// The move to report among `candidates`: the one played if it is
    /// there, else the one whose SAN sorts first.
    fn pick(&self, candidates: &[Move], next: Option<Move>) -> Option<(MoveInfo, bool)> {
        if let Some(played) = next.filter(|m| candidates.contains(m)) {
            return Some((MoveInfo::of(&self.pos, played), true));
        }
        candidates
            .iter()
            .map(|&m| MoveInfo::of(&self.pos, m))
            .min_by(|a, b| a.san.cmp(&b.san))
            .map(|info| (info, false))
    }

    fn instead(&self, next: Option<Move>) -> String {
        match next {
            Some(m) => format!("{} was played instead", MoveInfo::of(&self.pos, m).label()),
            None => "the game score ends here".to_owned(),
        }
    }

    fn finish(self, fen: Option<String>, plies: usize, result_tag: Option<String>) -> GameReport {
        let mut events = self.events;
        events.sort_by_key(|e| e.ply); // stable: announcements stay first
        let (ended, result) = match self.ended {
            Some((ending, result)) => (Some(ending), result),
            None => (None, GameResult::Undecided),
        };
        let agreement = match &ended {
            None => Agreement::Open,
            Some(_) if result_tag.as_deref().and_then(GameResult::from_tag) == Some(result) => {
                Agreement::Agrees
            }
            Some(_) => Agreement::Disagrees,
        };
        let claims = events
            .iter()
            .filter(|e| e.kind.is_claim())
            .map(|e| e.kind)
            .collect();
        GameReport {
            game: self.game,
            fen,
            plies: u32::try_from(plies).unwrap_or(u32::MAX),
            table_rule: self.store.map(|s| s.rule()),
            events,
            verdicts: self.verdicts,
            result,
            ended,
            claims,
            result_tag,
            agreement,
            moves_after_end: self.moves_after_end,
        }
    }
}

/// How the move by `mover` from `prev` to `current` changed the verdict.
fn classify(prev: &PlyVerdict, current: &PlyVerdict, mover: Color) -> Option<VerdictChange> {
    let before = prev.result.for_color(mover)?;
    let after = current.result.for_color(mover)?;
    match (before, after) {
        (b, a) if b == a => None,
        (Outcome::Win, Outcome::Draw) if matches!(current.wdl, Wdl::Loss | Wdl::BlessedLoss) => {
            Some(VerdictChange::WinDrawnByClock)
        }
        (Outcome::Win, _) => Some(VerdictChange::WinThrownAway),
        (Outcome::Draw, Outcome::Loss) => Some(VerdictChange::DrawThrownAway),
        _ => Some(VerdictChange::Improved),
    }
}

fn verdict_message(change: VerdictChange, mv: Option<&MoveInfo>, v: &PlyVerdict) -> String {
    let label = mv.map_or_else(|| "the starting position".to_owned(), MoveInfo::label);
    let mover_outcome = |mv: &MoveInfo| v.result.for_color(mv.color).unwrap_or(Outcome::Draw);
    match (change, mv) {
        (VerdictChange::EnteredRange, _) => format!("{label} — in table range: {v}"),
        (VerdictChange::WinDrawnByClock, _) => {
            let left = v.plies_left.unwrap_or(0).max(0);
            let remain = match left {
                0 => "none remain".to_owned(),
                1 => "only 1 remains".to_owned(),
                n => format!("only {n} remain"),
            };
            format!(
                "{label}?? — the win needed {} plies but {remain} on the clock: now a draw",
                v.dtz.plies()
            )
        }
        (VerdictChange::WinThrownAway, Some(mv)) => format!(
            "{label}?? — the win is thrown away: now a {}",
            mover_outcome(mv).name()
        ),
        (VerdictChange::DrawThrownAway, _) => {
            format!("{label}?? — the draw is thrown away: now a loss")
        }
        (_, Some(mv)) => format!(
            "{label} — the draw was there to be claimed, but the game went on: now a {} for {}",
            mover_outcome(mv).name(),
            color_title(mv.color)
        ),
        (_, None) => format!("{label} — {v}"),
    }
}

fn san_error_text(reason: &SanError) -> &'static str {
    match reason {
        SanError::IllegalSan => "no legal move matches",
        SanError::AmbiguousSan => "ambiguous: several legal moves match",
    }
}

fn color_title(color: Color) -> &'static str {
    color.fold_wb("White", "Black")
}

fn result_winner(result: GameResult) -> &'static str {
    match result {
        GameResult::WhiteWins => "White",
        GameResult::BlackWins => "Black",
        GameResult::Draw | GameResult::Undecided => "nobody",
    }
}

fn plies(n: u64) -> &'static str {
    if n == 1 { "ply" } else { "plies" }
}

fn ser_color<S: Serializer>(color: &Color, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(color.fold_wb("white", "black"))
}

fn ser_opt_color<S: Serializer>(color: &Option<Color>, s: S) -> Result<S::Ok, S::Error> {
    match color {
        Some(c) => s.serialize_some(c.fold_wb("white", "black")),
        None => s.serialize_none(),
    }
}

fn ser_wdl<S: Serializer>(wdl: &Wdl, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(wdl.name())
}

fn ser_dtz<S: Serializer>(dtz: &Dtz, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_i16(dtz.0)
}

fn ser_outcome<S: Serializer>(outcome: &Outcome, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(outcome.name())
}

fn ser_opt_rule<S: Serializer>(rule: &Option<Rule>, s: S) -> Result<S::Ok, S::Error> {
    match rule {
        Some(r) => s.serialize_some(&r.to_string()),
        None => s.serialize_none(),
    }
}
