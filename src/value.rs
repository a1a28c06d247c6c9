//! Values: the game-theoretic vocabulary of dtz50.
//!
//! * [`Rule`] — which draw rule a table is built for (50 moves, 75 moves or
//!   none). The rule fixes the *limit* `L` in plies (100, 150 or none).
//! * [`Wdl`] — the five-valued outcome with the clock at zero: loss, blessed
//!   loss, draw, cursed win, win.
//! * [`Dtz`] — signed plies to the next zeroing move (capture or pawn move)
//!   or mate, exactly the DTZ50'' metric of Syzygy, but always ply-exact:
//!
//! | DTZ            | WDL          | meaning                                                   |
//! |----------------|--------------|-----------------------------------------------------------|
//! | `1..=L`        | win          | zeroing move or mate forced in `n` plies, win kept         |
//! | `> L`          | cursed win   | as above, but the draw rule saves the defender            |
//! | `0`            | draw         |                                                           |
//! | `-L..=-1`      | loss         | the opponent forces zeroing/mate in `-n` plies            |
//! | `< -L`         | blessed loss | mirror of cursed win                                      |
//!
//! With [`Rule::None`] there is no limit and every decisive value is a plain
//! win or loss.
//!
//! * [`Verdict`] — the outcome once the halfmove clock is applied.
//! * [`Successor`] and [`Dtz::of_move`] — the one rule that scores a move
//!   from what it reaches (mate, a zeroing move, a quiet move).

use std::{fmt, str::FromStr};

use thiserror::Error;

/// The draw rule a table is built for (in JSON: `"50"`, `"75"` or `"none"`).
///
/// ```
/// use dtz50::Rule;
///
/// let rule: Rule = "75".parse()?;
/// assert_eq!(rule, Rule::SeventyFive);
/// assert_eq!(rule.limit(), Some(150));
/// assert_eq!(Rule::None.limit(), None);
/// assert_eq!(Rule::Fifty.to_string(), "50");
/// # Ok::<(), dtz50::value::ParseRuleError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Rule {
    /// FIDE 9.3: a draw can be claimed after 100 plies without a zeroing move.
    #[cfg_attr(feature = "serde", serde(rename = "50"))]
    Fifty,
    /// FIDE 9.6b: the game is drawn automatically after 150 plies.
    #[cfg_attr(feature = "serde", serde(rename = "75"))]
    SeventyFive,
    /// No move-count rule: plain distance to zeroing.
    #[cfg_attr(feature = "serde", serde(rename = "none"))]
    None,
}

/// A `--rule` argument that is not `50`, `75` or `none`.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("unknown rule '{0}': expected 50, 75 or none")]
pub struct ParseRuleError(pub String);

impl Rule {
    /// The limit in plies, `None` for [`Rule::None`].
    pub const fn limit(self) -> Option<i16> {
        match self {
            Rule::Fifty => Some(100),
            Rule::SeventyFive => Some(150),
            Rule::None => None,
        }
    }

    /// The code stored in table files: 50, 75 or 0.
    pub const fn code(self) -> u8 {
        match self {
            Rule::Fifty => 50,
            Rule::SeventyFive => 75,
            Rule::None => 0,
        }
    }

    /// Inverse of [`Rule::code`].
    pub const fn from_code(code: u8) -> Option<Rule> {
        match code {
            50 => Some(Rule::Fifty),
            75 => Some(Rule::SeventyFive),
            0 => Some(Rule::None),
            _ => None,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Fifty => "50",
            Rule::SeventyFive => "75",
            Rule::None => "none",
        })
    }
}

impl FromStr for Rule {
    type Err = ParseRuleError;

    fn from_str(s: &str) -> Result<Rule, ParseRuleError> {
        match s {
            "50" => Ok(Rule::Fifty),
            "75" => Ok(Rule::SeventyFive),
            "none" => Ok(Rule::None),
            _ => Err(ParseRuleError(s.to_owned())),
        }
    }
}

/// Win/draw/loss for the side to move, with the halfmove clock at zero (in
/// JSON, as everywhere in dtz50's interfaces, the number -2..=2).
///
/// ```
/// use dtz50::{Dtz, Rule, Wdl};
///
/// assert_eq!(Wdl::from_dtz(Dtz(100), Rule::Fifty), Wdl::Win);
/// assert_eq!(Wdl::from_dtz(Dtz(101), Rule::Fifty), Wdl::CursedWin);
/// assert_eq!(Wdl::from_dtz(Dtz(101), Rule::SeventyFive), Wdl::Win);
/// assert_eq!(Wdl::CursedWin.to_i8(), 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(i8)]
pub enum Wdl {
    /// Lost, whatever the clock.
    Loss = -2,
    /// Lost without the rule, saved by it.
    BlessedLoss = -1,
    /// Drawn.
    Draw = 0,
    /// Won without the rule, drawn by it.
    CursedWin = 1,
    /// Won.
    Win = 2,
}

impl Wdl {
    /// All five values, loss first.
    pub const ALL: [Wdl; 5] = [
        Wdl::Loss,
        Wdl::BlessedLoss,
        Wdl::Draw,
        Wdl::CursedWin,
        Wdl::Win,
    ];

    /// The WDL that a DTZ value means under `rule`.
    pub fn from_dtz(dtz: Dtz, rule: Rule) -> Wdl {
        let limit = rule.limit().unwrap_or(i16::MAX);
        match dtz.0 {
            0 => Wdl::Draw,
            d if d > limit => Wdl::CursedWin,
            d if d > 0 => Wdl::Win,
            d if d < -limit => Wdl::BlessedLoss,
            _ => Wdl::Loss,
        }
    }

    /// The value as -2..=2.
    pub const fn to_i8(self) -> i8 {
        self as i8
    }

    /// The value for the other side: what a move into a position of this
    /// value is worth to the side that plays it.
    pub const fn flipped(self) -> Wdl {
        Wdl::ALL[(2 - self.to_i8()) as usize]
    }

    /// Words for people: "win", "cursed win", ...
    pub const fn name(self) -> &'static str {
        match self {
            Wdl::Loss => "loss",
            Wdl::BlessedLoss => "blessed loss",
            Wdl::Draw => "draw",
            Wdl::CursedWin => "cursed win",
            Wdl::Win => "win",
        }
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Wdl {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i8(self.to_i8())
    }
}

/// Signed plies to a zeroing move or mate (see the module table; in JSON,
/// the number).
///
/// ```
/// use dtz50::Dtz;
///
/// // Positive: the side to move wins; the smallest positive is preferred.
/// assert_eq!(Dtz(5).prefer(Dtz(3)), Dtz(3));
/// assert_eq!(Dtz(-5).prefer(Dtz(0)), Dtz(0));
/// assert_eq!(Dtz(-12).plies(), 12);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Dtz(pub i16);

impl Dtz {
    /// The score of a move for the side that plays it: DTZ of the position
    /// *before* the move, if this move is the one played. This is the one
    /// recursion every DTZ value obeys, used by the solver, the deep check
    /// and the probe API's best moves:
    ///
    /// * a mate scores 1;
    /// * a zeroing move (capture, pawn move) scores by the WDL it leaves the
    ///   opponent: a loss 1, a blessed loss `L + 1`, a draw 0, a cursed win
    ///   `-(L + 1)`, a win -1 (`L` the rule's limit; 1 without a rule);
    /// * a quiet move into a position of DTZ `d` scores `-d + 1` if `d < 0`,
    ///   `-d - 1` if `d > 0`, and 0 for a draw.
    ///
    /// ```
    /// use dtz50::{Dtz, Rule, Wdl, value::Successor};
    ///
    /// assert_eq!(Dtz::of_move(Successor::Mate, Rule::Fifty), Dtz(1));
    /// assert_eq!(Dtz::of_move(Successor::Zeroing(Wdl::BlessedLoss), Rule::Fifty), Dtz(101));
    /// assert_eq!(Dtz::of_move(Successor::Quiet(Dtz(-7)), Rule::Fifty), Dtz(8));
    /// assert_eq!(Dtz::of_move(Successor::Quiet(Dtz(7)), Rule::Fifty), Dtz(-8));
    /// ```
    pub fn of_move(successor: Successor, rule: Rule) -> Dtz {
        let beyond = rule.limit().map_or(1, |l| l + 1);
        Dtz(match successor {
            Successor::Mate | Successor::Zeroing(Wdl::Loss) => 1,
            Successor::Zeroing(Wdl::BlessedLoss) => beyond,
            Successor::Zeroing(Wdl::Draw) => 0,
            Successor::Zeroing(Wdl::CursedWin) => -beyond,
            Successor::Zeroing(Wdl::Win) => -1,
            Successor::Quiet(Dtz(d)) if d < 0 => -d + 1,
            Successor::Quiet(Dtz(d)) if d > 0 => -d - 1,
            Successor::Quiet(_) => 0,
        })
    }

    /// The least DTZ a win of kind `wdl` can have: 1 for a win, `L + 1`
    /// for a cursed win (a mate, or a zeroing move into a loss or blessed
    /// loss); `None` for other values.
    ///
    /// ```
    /// use dtz50::{Dtz, Rule, Wdl};
    ///
    /// assert_eq!(Dtz::fastest(Wdl::CursedWin, Rule::Fifty), Some(Dtz(101)));
    /// assert_eq!(Dtz::fastest(Wdl::Loss, Rule::Fifty), None);
    /// ```
    pub fn fastest(wdl: Wdl, rule: Rule) -> Option<Dtz> {
        match wdl {
            Wdl::Win => Some(Dtz::of_move(Successor::Zeroing(Wdl::Loss), rule)),
            Wdl::CursedWin => Some(Dtz::of_move(Successor::Zeroing(Wdl::BlessedLoss), rule)),
            _ => None,
        }
    }

    /// The side to move's choice between two move scores: the smallest
    /// positive, else zero, else the most negative.
    pub fn prefer(self, other: Dtz) -> Dtz {
        if other.preference() < self.preference() {
            other
        } else {
            self
        }
    }

    /// Sort key of move scores, best first: the smallest positive, then
    /// zero, then the most negative.
    pub const fn preference(self) -> (u8, i16) {
        match self.0 {
            d if d > 0 => (0, d),
            0 => (1, 0),
            d => (2, d),
        }
    }

    /// Absolute number of plies.
    pub const fn plies(self) -> u16 {
        self.0.unsigned_abs()
    }
}

impl fmt::Display for Dtz {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What a move reaches, as far as its score is concerned (see
/// [`Dtz::of_move`]). Values are those of the side to move *after* the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Successor {
    /// The move checkmates.
    Mate,
    /// A capture or pawn move into a position of this WDL.
    Zeroing(Wdl),
    /// Any other move, into a position of this DTZ.
    Quiet(Dtz),
}

/// What a position is worth once the halfmove clock is applied (in JSON:
/// `"win"`, `"draw"` or `"loss"`).
///
/// ```
/// use dtz50::{Dtz, Outcome, Rule, Verdict};
///
/// // A loss in 28 plies with 5 plies left on the clock: the clock saves it.
/// assert_eq!(Verdict::new(Dtz(-28), Rule::Fifty, 95, false).outcome, Outcome::Draw);
/// assert_eq!(Outcome::Draw.name(), "draw");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "lowercase")
)]
pub enum Outcome {
    /// The side to move wins.
    Win,
    /// Drawn (perhaps only because of the clock).
    Draw,
    /// The side to move loses.
    Loss,
}

impl Outcome {
    /// "win", "draw" or "loss".
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Win => "win",
            Outcome::Draw => "draw",
            Outcome::Loss => "loss",
        }
    }
}

/// The clock question answered exactly: does the decisive result survive
/// the plies left before the draw rule applies?
///
/// Its `Display` is the verdict in one sentence, the same wherever dtz50
/// shows one (the CLI, adjudication):
///
/// ```
/// use dtz50::{Dtz, Outcome, Rule, Verdict};
///
/// let v = Verdict::new(Dtz(23), Rule::Fifty, 70, false);
/// assert_eq!((v.outcome, v.margin), (Outcome::Win, Some(7)));
/// assert_eq!(v.to_string(), "win: 23 plies to a zeroing move or mate, 30 left on the clock");
///
/// let late = Verdict::new(Dtz(23), Rule::Fifty, 78, false);
/// assert_eq!(late.outcome, Outcome::Draw);
/// assert_eq!(late.to_string(), "draw by the clock: the win needs 23 plies, 22 left on the clock");
/// ```
///
/// In JSON (with the `serde` feature) it is an object with the fields
/// below: `{"wdl":2,"dtz":23,"halfmove":70,"rule":"50","outcome":"win","margin":7}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Verdict {
    /// WDL with the clock at zero.
    pub wdl: Wdl,
    /// Exact DTZ in plies.
    pub dtz: Dtz,
    /// The halfmove clock that was applied.
    pub halfmove: u32,
    /// The rule that was applied.
    pub rule: Rule,
    /// The result with that clock.
    pub outcome: Outcome,
    /// Plies to spare: `limit - halfmove - |dtz|` for a surviving decisive
    /// result, `None` for draws and results the clock already turned.
    pub margin: Option<u32>,
}

impl Verdict {
    /// Apply the clock `halfmove` to a position of value `dtz` under `rule`.
    /// `mated` says the side to move is checkmated: mate ends the game
    /// before any claim (FIDE 9.6b), so it stays a loss at any clock.
    pub fn new(dtz: Dtz, rule: Rule, halfmove: u32, mated: bool) -> Verdict {
        let wdl = Wdl::from_dtz(dtz, rule);
        let plies = u32::from(dtz.plies());
        let left = rule.limit().map(|l| i64::from(l) - i64::from(halfmove));
        let survives = mated || left.is_none_or(|left| dtz.0 != 0 && i64::from(plies) <= left);
        let outcome = match dtz.0 {
            d if d > 0 && survives => Outcome::Win,
            d if d < 0 && survives => Outcome::Loss,
            _ => Outcome::Draw,
        };
        let margin = match (outcome, left) {
            (Outcome::Draw, _) => None,
            (_, Some(left)) => Some(u32::try_from(left - i64::from(plies)).unwrap_or(0)),
            (_, None) => None,
        };
        Verdict {
            wdl,
            dtz,
            halfmove,
            rule,
            outcome,
            margin,
        }
    }

    /// Plies left on the clock before the rule applies (`None` without a
    /// rule; negative past it).
    ///
    /// ```
    /// use dtz50::{Dtz, Rule, Verdict};
    ///
    /// assert_eq!(Verdict::new(Dtz(5), Rule::SeventyFive, 40, false).plies_left(), Some(110));
    /// assert_eq!(Verdict::new(Dtz(5), Rule::None, 40, false).plies_left(), None);
    /// ```
    pub fn plies_left(&self) -> Option<i64> {
        self.rule
            .limit()
            .map(|l| i64::from(l) - i64::from(self.halfmove))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plies = Plies(self.dtz.plies());
        let left = match self.plies_left() {
            Some(left) => format!("{} left on the clock", left.max(0)),
            None => "no move-count rule".to_owned(),
        };
        match (self.outcome, self.dtz.0) {
            (_, 0) => f.write_str("draw"),
            (Outcome::Win, _) => write!(f, "win: {plies} to a zeroing move or mate, {left}"),
            (Outcome::Loss, _) => write!(
                f,
                "loss: {plies} to the opponent's zeroing move or mate, {left}"
            ),
            (_, d) if d > 0 => write!(f, "draw by the clock: the win needs {plies}, {left}"),
            _ => write!(f, "draw by the clock: the loss takes {plies}, {left}"),
        }
    }
}

/// A number of plies in words: "1 ply", "23 plies".
struct Plies(u16);

impl fmt::Display for Plies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 ply"),
            n => write!(f, "{n} plies"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wdl_from_dtz_respects_the_limit() {
        let r = Rule::Fifty;
        assert_eq!(Wdl::from_dtz(Dtz(100), r), Wdl::Win);
        assert_eq!(Wdl::from_dtz(Dtz(101), r), Wdl::CursedWin);
        assert_eq!(Wdl::from_dtz(Dtz(-100), r), Wdl::Loss);
        assert_eq!(Wdl::from_dtz(Dtz(-101), r), Wdl::BlessedLoss);
        assert_eq!(Wdl::from_dtz(Dtz(0), r), Wdl::Draw);
        assert_eq!(Wdl::from_dtz(Dtz(149), Rule::SeventyFive), Wdl::Win);
        assert_eq!(Wdl::from_dtz(Dtz(151), Rule::SeventyFive), Wdl::CursedWin);
        assert_eq!(Wdl::from_dtz(Dtz(900), Rule::None), Wdl::Win);
    }

    #[test]
    fn move_scores_follow_the_spec_recursion() {
        let score = |successor| Dtz::of_move(successor, Rule::Fifty);
        assert_eq!(score(Successor::Mate), Dtz(1));
        assert_eq!(score(Successor::Zeroing(Wdl::Loss)), Dtz(1));
        assert_eq!(score(Successor::Zeroing(Wdl::BlessedLoss)), Dtz(101));
        assert_eq!(score(Successor::Zeroing(Wdl::Draw)), Dtz(0));
        assert_eq!(score(Successor::Zeroing(Wdl::CursedWin)), Dtz(-101));
        assert_eq!(score(Successor::Zeroing(Wdl::Win)), Dtz(-1));
        assert_eq!(
            Dtz::of_move(Successor::Zeroing(Wdl::BlessedLoss), Rule::SeventyFive),
            Dtz(151)
        );
        assert_eq!(
            Dtz::of_move(Successor::Zeroing(Wdl::BlessedLoss), Rule::None),
            Dtz(1)
        );
        assert_eq!(score(Successor::Quiet(Dtz(-7))), Dtz(8));
        assert_eq!(score(Successor::Quiet(Dtz(7))), Dtz(-8));
        assert_eq!(score(Successor::Quiet(Dtz(0))), Dtz(0));
        assert_eq!(Dtz(5).prefer(Dtz(3)), Dtz(3));
        assert_eq!(Dtz(-5).prefer(Dtz(0)), Dtz(0));
        assert_eq!(Dtz(-5).prefer(Dtz(-9)), Dtz(-9));
        assert_eq!(Dtz(101).prefer(Dtz(-1)), Dtz(101));
    }

    #[test]
    fn rules_parse_from_their_names() {
        assert_eq!("75".parse::<Rule>(), Ok(Rule::SeventyFive));
        assert_eq!("none".parse::<Rule>(), Ok(Rule::None));
        assert_eq!(
            "60".parse::<Rule>().unwrap_err().to_string(),
            "unknown rule '60': expected 50, 75 or none"
        );
    }

    #[test]
    fn verdict_sentences_cover_every_case() {
        let v = |dtz, halfmove, rule| Verdict::new(Dtz(dtz), rule, halfmove, false).to_string();
        assert_eq!(v(0, 0, Rule::Fifty), "draw");
        assert_eq!(
            v(1, 99, Rule::Fifty),
            "win: 1 ply to a zeroing move or mate, 1 left on the clock"
        );
        assert_eq!(
            v(-28, 95, Rule::Fifty),
            "draw by the clock: the loss takes 28 plies, 5 left on the clock"
        );
        assert_eq!(
            v(-28, 50, Rule::Fifty),
            "loss: 28 plies to the opponent's zeroing move or mate, 50 left on the clock"
        );
        assert_eq!(
            v(130, 120, Rule::Fifty),
            "draw by the clock: the win needs 130 plies, 0 left on the clock"
        );
        assert_eq!(
            v(130, 500, Rule::None),
            "win: 130 plies to a zeroing move or mate, no move-count rule"
        );
    }

    #[test]
    fn clock_boundary_is_exact() {
        let r = Rule::Fifty;
        assert_eq!(Verdict::new(Dtz(23), r, 77, false).outcome, Outcome::Win);
        assert_eq!(Verdict::new(Dtz(23), r, 77, false).margin, Some(0));
        assert_eq!(Verdict::new(Dtz(23), r, 78, false).outcome, Outcome::Draw);
        assert_eq!(Verdict::new(Dtz(-23), r, 78, false).outcome, Outcome::Draw);
        assert_eq!(Verdict::new(Dtz(-1), r, 100, true).outcome, Outcome::Loss);
        assert_eq!(Verdict::new(Dtz(-1), r, 100, false).outcome, Outcome::Draw);
        assert_eq!(
            Verdict::new(Dtz(120), Rule::SeventyFive, 30, false).outcome,
            Outcome::Win
        );
        assert_eq!(
            Verdict::new(Dtz(120), Rule::None, 3000, false).outcome,
            Outcome::Win
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_encoding_is_the_documented_one() {
        let verdict = Verdict::new(Dtz(23), Rule::Fifty, 70, false);
        assert_eq!(
            serde_json::to_string(&verdict).expect("json"),
            r#"{"wdl":2,"dtz":23,"halfmove":70,"rule":"50","outcome":"win","margin":7}"#
        );
        assert_eq!(json(&Wdl::BlessedLoss), "-1");
        assert_eq!(json(&Rule::SeventyFive), r#""75""#);
        assert_eq!(json(&Rule::None), r#""none""#);
        assert_eq!(json(&Outcome::Loss), r#""loss""#);
        assert_eq!(json(&Dtz(-101)), "-101");
    }

    #[cfg(feature = "serde")]
    fn json<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string(value).expect("json")
    }
}
