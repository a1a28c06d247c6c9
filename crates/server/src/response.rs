//! The JSON answers, field for field those of lichess's tablebase API
//! (lila-tablebase), with dtz50's additions in fields its clients ignore.
//!
//! The category rules and the move order follow lila-tablebase: a
//! position's category comes from its DTZ and the clock it is reached
//! with, and a clock already at the limit before the move turns every
//! decisive result into a cursed win or blessed loss. dtz50 stores DTZ to
//! the ply, so no category is ever `maybe-*` or `syzygy-*`, `precise_dtz`
//! always equals `dtz`, and the distance metrics dtz50 does not have
//! (`dtm`, `dtw`, `dtc`) are `null`. Where lila-tablebase hard-codes the
//! fifty-move limit of 100 plies, dtz50 uses the tables' rule (150 plies
//! for the 75-move rule, no limit without a rule).

use std::cmp::Reverse;

use dtz50::{Dtz, Rule, Verdict, Wdl};
use serde::Serialize;
use shakmaty::Role;

/// The result category of a position for its side to move, ordered from
/// the mover's point of view as lila-tablebase orders it (loss first,
/// unknown just above it: a pessimistic unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Lost.
    Loss,
    /// The tables cannot say (castling rights, too many pieces, a missing
    /// table).
    Unknown,
    /// Lost without the rule, drawn by it.
    BlessedLoss,
    /// Drawn.
    Draw,
    /// Won without the rule, drawn by it.
    CursedWin,
    /// Won.
    Win,
}

impl Category {
    /// The category of the same position seen by the other side.
    pub const fn flip(self) -> Category {
        match self {
            Category::Loss => Category::Win,
            Category::Unknown => Category::Unknown,
            Category::BlessedLoss => Category::CursedWin,
            Category::Draw => Category::Draw,
            Category::CursedWin => Category::BlessedLoss,
            Category::Win => Category::Loss,
        }
    }

    /// A win of either kind.
    pub const fn is_positive(self) -> bool {
        matches!(self, Category::CursedWin | Category::Win)
    }

    fn from_wdl(wdl: Wdl) -> Category {
        match wdl {
            Wdl::Loss => Category::Loss,
            Wdl::BlessedLoss => Category::BlessedLoss,
            Wdl::Draw => Category::Draw,
            Wdl::CursedWin => Category::CursedWin,
            Wdl::Win => Category::Win,
        }
    }
}

/// What is known of one position before it is categorised: the game-end
/// flags, the clock it is reached with and its DTZ (`None` where the
/// tables cannot answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The side to move is checkmated.
    pub checkmate: bool,
    /// The side to move has no legal move and is not in check.
    pub stalemate: bool,
    /// Neither side can mate.
    pub insufficient_material: bool,
    /// The halfmove clock of the position.
    pub halfmoves: u32,
    /// Exact DTZ, if the tables answer.
    pub dtz: Option<Dtz>,
}

impl Facts {
    /// The category of the position, reached when the clock stood at
    /// `halfmoves_before` (lila-tablebase's rule: a clock already at the
    /// limit makes any decisive result cursed or blessed; otherwise the
    /// DTZ plus the position's own clock decides).
    pub fn category(&self, halfmoves_before: u32, rule: Rule) -> Category {
        let limit = rule.limit().map(|l| u32::from(l.unsigned_abs()));
        let clock_ran_out = limit.is_some_and(|l| halfmoves_before >= l);
        if self.stalemate || self.insufficient_material || self.dtz == Some(Dtz(0)) {
            Category::Draw
        } else if self.checkmate {
            if clock_ran_out {
                Category::BlessedLoss
            } else {
                Category::Loss
            }
        } else if let Some(dtz) = self.dtz {
            if !clock_ran_out {
                Category::from_wdl(Wdl::from_dtz(add_plies(dtz, self.halfmoves), rule))
            } else if dtz.0 < 0 {
                Category::BlessedLoss
            } else {
                Category::CursedWin
            }
        } else {
            Category::Unknown
        }
    }

    /// The position's fields in the answer.
    pub fn info(&self, category: Category) -> PositionInfo {
        PositionInfo {
            checkmate: self.checkmate,
            stalemate: self.stalemate,
            variant_win: false,
            variant_loss: false,
            insufficient_material: self.insufficient_material,
            dtz: self.dtz.map(|d| d.0),
            precise_dtz: self.dtz.map(|d| d.0),
            dtm: None,
            dtw: None,
            dtc: None,
            category,
        }
    }
}

/// `dtz` moved away from zero by `plies` (the clock already spent),
/// saturating.
fn add_plies(dtz: Dtz, plies: u32) -> Dtz {
    let plies = i32::try_from(plies).unwrap_or(i32::MAX);
    let moved = match dtz.0 {
        0 => 0,
        d if d > 0 => i32::from(d).saturating_add(plies),
        d => i32::from(d).saturating_sub(plies),
    };
    Dtz(moved.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16)
}

/// The fields lila-tablebase gives every position, the root and each
/// position a move reaches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PositionInfo {
    /// The side to move is checkmated.
    pub checkmate: bool,
    /// Stalemate.
    pub stalemate: bool,
    /// Always `false` (standard chess has no variant ending).
    pub variant_win: bool,
    /// Always `false`.
    pub variant_loss: bool,
    /// Neither side can mate.
    pub insufficient_material: bool,
    /// Exact DTZ in plies for the side to move, `null` if unknown.
    pub dtz: Option<i16>,
    /// The same as `dtz`: dtz50 never rounds.
    pub precise_dtz: Option<i16>,
    /// Always `null` (no DTM tables).
    pub dtm: Option<i32>,
    /// Always `null` (antichess only).
    pub dtw: Option<i32>,
    /// Always `null` (no DTC tables).
    pub dtc: Option<i32>,
    /// The result category.
    pub category: Category,
}

/// `GET /standard`: the position and every legal move, best first.
#[derive(Debug, Clone, Serialize)]
pub struct TablebaseResponse {
    /// The position's fields.
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// Every legal move, best first.
    pub moves: Vec<MoveInfo>,
    /// dtz50: the rule the tables were built for (`"50"`, `"75"`, `"none"`).
    pub rule: Rule,
    /// dtz50: the verdict under the FEN's halfmove clock, `null` if unknown.
    pub verdict: Option<VerdictInfo>,
}

/// dtz50's verdict on the root, under the FEN's own halfmove clock.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictInfo {
    /// `wdl`, `dtz`, `halfmove`, `rule`, `outcome`, `margin`, as
    /// `dtz50 probe --json` prints them.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// The verdict in words, as the command line says it.
    pub text: String,
}

/// One legal move and the position it reaches, seen by the opponent.
#[derive(Debug, Clone, Serialize)]
pub struct MoveInfo {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN with its check or mate suffix.
    pub san: String,
    /// A capture or pawn move.
    pub zeroing: bool,
    /// A capture or promotion.
    pub conversion: bool,
    /// The position after the move.
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// dtz50: the FEN after the move (what the page plays).
    pub fen: String,
    /// The captured piece, for the order only.
    #[serde(skip)]
    pub capture: Option<Role>,
    /// The promotion piece, for the order only.
    #[serde(skip)]
    pub promotion: Option<Role>,
}

impl MoveInfo {
    /// lila-tablebase's order, best first: the worst category for the
    /// opponent, then mate, stalemate, insufficient material; when winning
    /// a conversion and a zeroing move first, then the smallest DTZ; when
    /// not winning the reverse (hold on longest); then captures and
    /// promotions of bigger pieces. The distance metrics dtz50 has not
    /// got (DTM, DTC) are all equal and drop out.
    pub fn sort_key(&self) -> impl Ord + use<> {
        let opponent_wins = self.pos.category.is_positive();
        (
            self.pos.category,
            Reverse(self.pos.checkmate),
            (
                Reverse(self.pos.stalemate),
                Reverse(self.pos.insufficient_material),
            ),
            self.conversion ^ !opponent_wins,
            self.zeroing ^ !opponent_wins,
            self.pos.dtz.map(Reverse),
            (Reverse(self.capture), Reverse(self.promotion)),
        )
    }
}

/// `GET /standard/mainline`: the DTZ-optimal line.
#[derive(Debug, Clone, Serialize)]
pub struct MainlineResponse {
    /// DTZ of the root.
    pub dtz: i16,
    /// The same as `dtz`.
    pub precise_dtz: i16,
    /// The moves, each with the DTZ of the position it reaches.
    pub mainline: Vec<MainlineStep>,
    /// `"w"` or `"b"` if the line ends in mate, else `null`.
    pub winner: Option<char>,
    /// dtz50: the rule the tables were built for.
    pub rule: Rule,
}

/// One move of the mainline.
#[derive(Debug, Clone, Serialize)]
pub struct MainlineStep {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// DTZ of the position it reaches (the opponent to move).
    pub dtz: i16,
    /// The same as `dtz`.
    pub precise_dtz: i16,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(dtz: i16, halfmoves: u32) -> Facts {
        Facts {
            checkmate: false,
            stalemate: false,
            insufficient_material: false,
            halfmoves,
            dtz: Some(Dtz(dtz)),
        }
    }

    #[test]
    fn the_clock_turns_wins_into_cursed_wins_at_the_exact_ply() {
        let r = Rule::Fifty;
        assert_eq!(facts(10, 90).category(89, r), Category::Win);
        assert_eq!(facts(10, 91).category(90, r), Category::CursedWin);
        assert_eq!(facts(-10, 0).category(95, r), Category::Loss);
        assert_eq!(facts(-10, 5).category(100, r), Category::BlessedLoss);
        assert_eq!(facts(10, 91).category(90, Rule::SeventyFive), Category::Win);
        assert_eq!(facts(10, 500).category(499, Rule::None), Category::Win);
    }

    #[test]
    fn mate_is_a_loss_until_the_clock_has_run_out_before_it() {
        let mated = Facts {
            checkmate: true,
            ..facts(-1, 100)
        };
        assert_eq!(mated.category(99, Rule::Fifty), Category::Loss);
        assert_eq!(mated.category(100, Rule::Fifty), Category::BlessedLoss);
    }

    #[test]
    fn unknown_sits_just_above_loss() {
        assert!(Category::Loss < Category::Unknown && Category::Unknown < Category::BlessedLoss);
        assert_eq!(Category::Win.flip(), Category::Loss);
    }
}
