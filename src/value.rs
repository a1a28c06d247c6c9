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
//! * [`Cell`] — a solver cell's value: a final DTZ, or one of a few reserved
//!   codes (illegal, mated, unknown with what its zeroing moves already
//!   guarantee). The solver stores cells one byte each (`crate::cells`).

use std::{fmt, str::FromStr};

use thiserror::Error;

/// The draw rule a table is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// FIDE 9.3: a draw can be claimed after 100 plies without a zeroing move.
    Fifty,
    /// FIDE 9.6b: the game is drawn automatically after 150 plies.
    SeventyFive,
    /// No move-count rule: plain distance to zeroing.
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

/// Win/draw/loss for the side to move, with the halfmove clock at zero.
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

/// Signed plies to a zeroing move or mate (see the module table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Dtz(pub i16);

impl Dtz {
    /// The score of a zeroing move (capture, pawn move) for the mover, given
    /// the WDL of the position it leads to *as seen by the side to move
    /// there*: the opponent's loss scores 1, its blessed loss `L + 1`, a
    /// draw 0, and so on.
    pub fn of_zeroing_move(after: Wdl, rule: Rule) -> Dtz {
        let cursed = rule.limit().map_or(1, |l| l + 1);
        Dtz(match after {
            Wdl::Loss => 1,
            Wdl::BlessedLoss => cursed,
            Wdl::Draw => 0,
            Wdl::CursedWin => -cursed,
            Wdl::Win => -1,
        })
    }

    /// The score of a quiet move into a position whose DTZ is `after`.
    pub const fn of_quiet_move(after: Dtz) -> Dtz {
        Dtz(match after.0 {
            d if d < 0 => -d + 1,
            d if d > 0 => -d - 1,
            _ => 0,
        })
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

/// What a position is worth once the halfmove clock is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Verdict {
    /// WDL with the clock at zero.
    pub wdl: Wdl,
    /// Exact DTZ in plies.
    pub dtz: Dtz,
    /// The halfmove clock that was applied.
    pub halfmove: u32,
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
            outcome,
            margin,
        }
    }

    /// Plies left on the clock before the rule applies (`None` without a rule).
    pub fn plies_left(&self, rule: Rule) -> Option<i64> {
        rule.limit()
            .map(|l| i64::from(l) - i64::from(self.halfmove))
    }
}

/// One solver cell: a final DTZ or a reserved code.
///
/// Final values are DTZ plies (`|dtz| < 30_000`). The reserved codes sit at
/// the ends of the `i16` range: [`Cell::ILLEGAL`], [`Cell::MATED`] and five
/// `UNKNOWN_*` codes that say what the position's zeroing moves already
/// guarantee while its quiet moves are still being resolved.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cell(pub i16);

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
        let r = Rule::Fifty;
        assert_eq!(Dtz::of_zeroing_move(Wdl::Loss, r), Dtz(1));
        assert_eq!(Dtz::of_zeroing_move(Wdl::BlessedLoss, r), Dtz(101));
        assert_eq!(Dtz::of_zeroing_move(Wdl::CursedWin, r), Dtz(-101));
        assert_eq!(Dtz::of_zeroing_move(Wdl::Win, r), Dtz(-1));
        assert_eq!(
            Dtz::of_zeroing_move(Wdl::BlessedLoss, Rule::SeventyFive),
            Dtz(151)
        );
        assert_eq!(Dtz::of_quiet_move(Dtz(-7)), Dtz(8));
        assert_eq!(Dtz::of_quiet_move(Dtz(7)), Dtz(-8));
        assert_eq!(Dtz::of_quiet_move(Dtz(0)), Dtz(0));
        assert_eq!(Dtz(5).prefer(Dtz(3)), Dtz(3));
        assert_eq!(Dtz(-5).prefer(Dtz(0)), Dtz(0));
        assert_eq!(Dtz(-5).prefer(Dtz(-9)), Dtz(-9));
        assert_eq!(Dtz(101).prefer(Dtz(-1)), Dtz(101));
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
        assert_eq!("75".parse::<Rule>(), Ok(Rule::SeventyFive));
        assert!("60".parse::<Rule>().is_err());
    }
}
