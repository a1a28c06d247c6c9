//! The probes behind the C functions, on the current tables, with Fathom's
//! result encodings, ranks and scores.
//!
//! What differs from Fathom, because dtz50 stores DTZ to the ply:
//!
//! * DTZ (`TB_GET_DTZ`, and the move scores behind the ranks) is exact,
//!   never one ply off;
//! * root results apply the clock exactly: a win is `TB_WIN` iff its DTZ
//!   plus the halfmove clock is at most the rule's limit (100 plies for the
//!   fifty-move rule), else `TB_CURSED_WIN`, and so for losses; the best
//!   move keeps a win within the clock whenever one exists;
//! * `tb_probe_root_dtz` ranks a win 1000 whenever it survives the clock
//!   (Fathom asks for a ply to spare, 99 instead of 100, because its DTZ
//!   may be one ply off); `tb_probe_root_wdl` judges each move with the
//!   clock too, from the exact DTZ behind it, where Fathom takes the WDL
//!   after the move at clock 0;
//! * moves come ranked best first (Fathom lists them in generation order,
//!   with a random move among equal draws).
//!
//! Under the 75-move rule the limit is 150 plies and ranks scale with it;
//! without a rule every decisive result survives the clock.

use dtz50::{
    Dtz, Outcome, Rule, Verdict,
    probe::{RankedMove, StoredValues, check_probeable, rank_moves, resolve_dtz, resolve_wdl},
};
use shakmaty::{Chess, Position};

use crate::{
    position::{Bitboards, State, position, result, tb_move},
    registry,
    tables::Tables,
};

/// `TB_LOSS`: the side to move loses.
pub const TB_LOSS: u32 = 0;
/// `TB_BLESSED_LOSS`: lost, but drawn by the move-count rule.
pub const TB_BLESSED_LOSS: u32 = 1;
/// `TB_DRAW`: drawn.
pub const TB_DRAW: u32 = 2;
/// `TB_CURSED_WIN`: won, but drawn by the move-count rule.
pub const TB_CURSED_WIN: u32 = 3;
/// `TB_WIN`: the side to move wins.
pub const TB_WIN: u32 = 4;
/// `TB_RESULT_FAILED`: the probe failed.
pub const TB_RESULT_FAILED: u32 = 0xFFFF_FFFF;
/// `TB_RESULT_CHECKMATE`: the side to move is checkmated (WDL field `TB_WIN`, as Fathom has it).
pub const TB_RESULT_CHECKMATE: u32 = TB_WIN;
/// `TB_RESULT_STALEMATE`: the side to move is stalemated.
pub const TB_RESULT_STALEMATE: u32 = TB_DRAW;

/// Score of a win for sure: Fathom's `TB_VALUE_MATE - TB_MAX_MATE_PLY - 1`
/// with its default `tbconfig.h` (32000, 255).
const SCORE_WIN: i32 = 32000 - 255 - 1;
/// Fathom's default `TB_VALUE_PAWN`.
const SCORE_PAWN: i32 = 100;

/// One root move as `tb_probe_root_dtz` and `tb_probe_root_wdl` give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RootMove {
    /// Fathom's `TbMove`.
    pub mv: u16,
    /// `tbRank`: higher is better; at least 900 a win within the clock (1000
    /// with plies to spare or no repetition), at most -900 a loss.
    pub rank: i32,
    /// `tbScore`: a score in centipawns, mate-like for sure results.
    pub score: i32,
}

/// `tb_probe_wdl_impl`: the WDL code (`TB_LOSS`..=`TB_WIN`) with the clock
/// at zero, or `TB_RESULT_FAILED`.
pub fn wdl(bb: &Bitboards, ep: u32, white_to_move: bool) -> u32 {
    registry::with(TB_RESULT_FAILED, |tables| {
        let state = State {
            rule50: 0,
            ep,
            white_to_move,
        };
        position(bb, state)
            .and_then(|pos| resolve_wdl(tables, &pos).ok())
            .map_or(TB_RESULT_FAILED, |w| (w.to_i8() + 2) as u32)
    })
}

/// `tb_probe_root_impl`: the position's result (clock applied) with the
/// best move, and a result for each legal move, best first.
pub fn root(bb: &Bitboards, state: State) -> (u32, Vec<u32>) {
    let fail = || (TB_RESULT_FAILED, Vec::new());
    registry::with(fail(), |tables| {
        let Some(pos) = probeable(bb, state) else {
            return fail();
        };
        if pos.is_checkmate() {
            return (TB_RESULT_CHECKMATE, Vec::new());
        }
        if pos.is_stalemate() {
            return (TB_RESULT_STALEMATE, Vec::new());
        }
        let (Ok(dtz), Ok(ranked)) = (resolve_dtz(tables, &pos), rank_moves(tables, &pos)) else {
            return fail();
        };
        let encode = |m: &RankedMove, dtz: Dtz| {
            let wdl = clock_wdl(dtz, tables.rule(), state.rule50);
            result(&m.mv, wdl, u32::from(dtz.plies()))
        };
        let Some(best) = ranked.first() else {
            return fail();
        };
        let all = ranked.iter().map(|m| encode(m, m.dtz)).collect();
        (encode(best, dtz), all)
    })
}

/// `tb_probe_root_dtz`: every legal move ranked and scored from its exact
/// DTZ and the clock, best first; `None` if a probe failed.
pub fn root_dtz(
    bb: &Bitboards,
    state: State,
    has_repeated: bool,
    use_rule50: bool,
) -> Option<Vec<RootMove>> {
    root_moves(bb, state, |m, rule| {
        let rank = dtz_rank(m.dtz, rule, state.rule50, has_repeated);
        RootMove {
            mv: tb_move(&m.mv),
            rank,
            score: dtz_score(rank, use_rule50),
        }
    })
}

/// `tb_probe_root_wdl`: every legal move ranked and scored by its WDL with
/// the clock applied, best first; `None` if a probe failed.
pub fn root_wdl(bb: &Bitboards, state: State, use_rule50: bool) -> Option<Vec<RootMove>> {
    const RANK: [i32; 5] = [-1000, -899, 0, 899, 1000];
    const SCORE: [i32; 5] = [-SCORE_WIN, -2, 0, 2, SCORE_WIN];
    root_moves(bb, state, |m, rule| {
        let wdl = match clock_wdl(m.dtz, rule, state.rule50) {
            TB_BLESSED_LOSS if !use_rule50 => TB_LOSS,
            TB_CURSED_WIN if !use_rule50 => TB_WIN,
            wdl => wdl,
        } as usize;
        RootMove {
            mv: tb_move(&m.mv),
            rank: RANK[wdl],
            score: SCORE[wdl],
        }
    })
}

/// `dtz50_probe`: the verdict with the clock `state.rule50`.
pub fn verdict(bb: &Bitboards, state: State) -> Option<Verdict> {
    registry::with(None, |tables| {
        let pos = probeable(bb, state)?;
        let dtz = resolve_dtz(tables, &pos).ok()?;
        Some(Verdict::new(
            dtz,
            tables.rule(),
            state.rule50,
            pos.is_checkmate(),
        ))
    })
}

/// `dtz50_cache_bound`: the bound on the page cache of the current tables,
/// `None` if they are memory-mapped (or there are none).
pub fn cache_bytes() -> Option<usize> {
    registry::with(None, Tables::cache_bytes)
}

/// `dtz50_rule`: the rule of the current tables, `None` without tables.
pub fn rule() -> Option<Rule> {
    registry::with(None, |tables| Some(tables.rule()))
}

/// The position, if it is legal and tables can hold it (at most five
/// pieces; castling rights are refused before, by the caller).
fn probeable(bb: &Bitboards, state: State) -> Option<Chess> {
    position(bb, state).filter(|pos| check_probeable(pos).is_ok())
}

/// The legal moves, best first, each mapped by `root_move`.
fn root_moves(
    bb: &Bitboards,
    state: State,
    root_move: impl Fn(&RankedMove, Rule) -> RootMove,
) -> Option<Vec<RootMove>> {
    registry::with(None, |tables: &Tables| {
        let pos = probeable(bb, state)?;
        let ranked = rank_moves(tables, &pos).ok()?;
        Some(ranked.iter().map(|m| root_move(m, tables.rule())).collect())
    })
}

/// Fathom's WDL code of a DTZ with the halfmove clock applied: a decisive
/// result that the clock turns into a draw is cursed (or blessed).
fn clock_wdl(dtz: Dtz, rule: Rule, halfmove: u32) -> u32 {
    match (Verdict::new(dtz, rule, halfmove, false).outcome, dtz.0) {
        (_, 0) => TB_DRAW,
        (Outcome::Win, _) => TB_WIN,
        (Outcome::Loss, _) => TB_LOSS,
        (_, d) if d > 0 => TB_CURSED_WIN,
        _ => TB_BLESSED_LOSS,
    }
}

/// `tbRank` of a move scoring `dtz` with the clock at `halfmove`, as
/// Fathom ranks it (with the limit `l` of the rule in place of 100): a win
/// that survives the clock 1000 (`900 + l - (dtz + clock)` after a
/// repetition), one that does not less than 900; a loss far from the limit
/// -1000, nearer `-900 - l + (-dtz + clock)`; a draw 0.
fn dtz_rank(dtz: Dtz, rule: Rule, halfmove: u32, has_repeated: bool) -> i32 {
    let v = i32::from(dtz.0);
    let Some(limit) = rule.limit().map(i32::from) else {
        return v.signum() * 1000;
    };
    let clock = i32::try_from(halfmove)
        .unwrap_or(i32::MAX / 4)
        .min(i32::MAX / 4);
    match v {
        0 => 0,
        v if v > 0 && v + clock <= limit && !has_repeated => 1000,
        v if v > 0 => (900 + limit - (v + clock)).max(1),
        v if -2 * v + clock < limit => -1000,
        v => (-900 - limit + (-v + clock)).min(-1),
    }
}

/// `tbScore` of a rank, as Fathom scores it with its default values: a
/// sure result (rank at least 900, or any decisive rank without the rule)
/// mate-like, a result the clock turns a few centipawns.
fn dtz_score(rank: i32, use_rule50: bool) -> i32 {
    let bound = if use_rule50 { 900 } else { 1 };
    match rank {
        r if r >= bound => SCORE_WIN,
        r if r > 0 => (r - 800).max(3) * SCORE_PAWN / 200,
        0 => 0,
        r if r > -bound => (r + 800).min(-3) * SCORE_PAWN / 200,
        _ => -SCORE_WIN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_turns_wins_cursed_exactly_at_the_limit() {
        assert_eq!(clock_wdl(Dtz(23), Rule::Fifty, 77), TB_WIN);
        assert_eq!(clock_wdl(Dtz(23), Rule::Fifty, 78), TB_CURSED_WIN);
        assert_eq!(clock_wdl(Dtz(-28), Rule::Fifty, 95), TB_BLESSED_LOSS);
        assert_eq!(clock_wdl(Dtz(101), Rule::Fifty, 0), TB_CURSED_WIN);
        assert_eq!(clock_wdl(Dtz(101), Rule::SeventyFive, 0), TB_WIN);
        assert_eq!(clock_wdl(Dtz(500), Rule::None, 90), TB_WIN);
        assert_eq!(clock_wdl(Dtz(0), Rule::Fifty, 0), TB_DRAW);
    }

    #[test]
    fn ranks_as_fathom_with_exact_dtz() {
        assert_eq!(dtz_rank(Dtz(23), Rule::Fifty, 77, false), 1000);
        assert_eq!(dtz_rank(Dtz(23), Rule::Fifty, 77, true), 900);
        assert_eq!(dtz_rank(Dtz(23), Rule::Fifty, 78, false), 899);
        assert_eq!(dtz_rank(Dtz(-10), Rule::Fifty, 0, false), -1000);
        assert_eq!(dtz_rank(Dtz(-60), Rule::Fifty, 0, false), -940);
        assert_eq!(dtz_rank(Dtz(-60), Rule::Fifty, 50, false), -890);
        assert_eq!(dtz_rank(Dtz(140), Rule::SeventyFive, 10, false), 1000);
        assert_eq!(dtz_rank(Dtz(-140), Rule::None, 10, false), -1000);
        assert_eq!(dtz_score(1000, true), SCORE_WIN);
        assert_eq!(dtz_score(899, true), 49);
        assert_eq!(dtz_score(899, false), SCORE_WIN);
        assert_eq!(dtz_score(-890, true), -45);
        assert_eq!(dtz_score(0, true), 0);
    }
}
