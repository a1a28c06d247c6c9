//! The answers, computed from the tables on a blocking thread: the
//! position and its moves (`/standard`), the mainline
//! (`/standard/mainline`).

use std::cmp::Reverse;

use dtz50::{Dtz, Tablebase, Wdl};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position, fen::Fen, san::SanPlus};

use crate::{
    errors::{ServerError, is_not_in_tables},
    response::{Facts, MainlineResponse, MainlineStep, MoveInfo, TablebaseResponse, VerdictInfo},
};

/// The facts of `pos`: `dtz` is `None` where the tables cannot answer.
///
/// # Errors
/// [`ServerError::Internal`] for damaged or unreadable tables.
pub fn facts(tables: &Tablebase, pos: &Chess) -> Result<Facts, ServerError> {
    let dtz = match tables.probe_dtz(pos) {
        Ok(dtz) => Some(dtz),
        Err(e) if is_not_in_tables(&e) => None,
        Err(e) => return Err(e.into()),
    };
    Ok(Facts {
        checkmate: pos.is_checkmate(),
        stalemate: pos.is_stalemate(),
        insufficient_material: pos.is_insufficient_material(),
        halfmoves: pos.halfmoves(),
        dtz,
    })
}

/// `/standard`: the position, its verdict under its own clock, and every
/// legal move best first (see [`MoveInfo::sort_key`]). The root takes the
/// opposite of the best move's category, as in lila-tablebase.
///
/// # Errors
/// [`ServerError::Internal`] for damaged or unreadable tables.
pub fn standard(tables: &Tablebase, pos: &Chess) -> Result<TablebaseResponse, ServerError> {
    let rule = tables.rule();
    let clock = pos.halfmoves();
    let mut moves = Vec::new();
    for m in pos.legal_moves() {
        let mut after = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m);
        let facts = facts(tables, &after)?;
        moves.push(MoveInfo {
            uci: m.to_uci(CastlingMode::Standard).to_string(),
            san: san.to_string(),
            zeroing: m.is_zeroing(),
            conversion: m.is_conversion(),
            pos: facts.info(facts.category(clock, rule)),
            fen: Fen::from_position(&after, EnPassantMode::Legal).to_string(),
            capture: m.capture(),
            promotion: m.promotion(),
        });
    }
    // Stable: moves lila-tablebase's key cannot tell apart keep shakmaty's
    // move-generation order (lila-tablebase's unstable sort leaves it open).
    moves.sort_by_key(MoveInfo::sort_key);

    let root = facts(tables, pos)?;
    let category = match moves.first() {
        Some(best) => best.pos.category.flip(),
        None => root.category(clock.saturating_sub(1), rule),
    };
    let verdict = match root.dtz {
        Some(_) => {
            let verdict = tables.probe(pos)?;
            Some(VerdictInfo {
                text: verdict.to_string(),
                verdict,
            })
        }
        None => None,
    };
    Ok(TablebaseResponse {
        pos: root.info(category),
        moves,
        rule,
        verdict,
    })
}

/// `/standard/mainline`: from a decisive position, the best move each side
/// has until mate or until the clock reaches the rule's limit, through
/// zeroing moves and sub-tables, chosen as lila-tablebase chooses it (the
/// best WDL with the clock at zero; then mate, then a zeroing move when
/// winning and a quiet one when losing, then the DTZ that is best for the
/// mover).
///
/// # Errors
/// [`ServerError::NotFound`] if the tables cannot answer for the position
/// or a position on the line; [`ServerError::Internal`] for damaged tables.
pub fn mainline(tables: &Tablebase, root: &Chess) -> Result<MainlineResponse, ServerError> {
    let rule = tables.rule();
    let limit = rule.limit().map(|l| u32::from(l.unsigned_abs()));
    let dtz = tables.probe_dtz(root)?;
    let mut pos = root.clone();
    let mut mainline = Vec::new();
    if dtz.0 != 0 {
        while limit.is_none_or(|l| pos.halfmoves() < l) && mainline.len() < MAX_MAINLINE {
            let Some((m, after_dtz)) = best_move(tables, &pos)? else {
                break;
            };
            let uci = m.to_uci(CastlingMode::Standard).to_string();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            mainline.push(MainlineStep {
                uci,
                san,
                dtz: after_dtz.0,
                precise_dtz: after_dtz.0,
            });
        }
    }
    Ok(MainlineResponse {
        dtz: dtz.0,
        precise_dtz: dtz.0,
        mainline,
        winner: pos.outcome().winner().map(|c| c.char()),
        rule,
    })
}

/// The longest mainline followed (a safeguard for tables without a rule,
/// where the clock does not end the line; no table has a line this long).
const MAX_MAINLINE: usize = 2000;

/// The mainline move of `pos` and the DTZ of the position it reaches, or
/// `None` without legal moves.
fn best_move(tables: &Tablebase, pos: &Chess) -> Result<Option<(Move, Dtz)>, ServerError> {
    let rule = tables.rule();
    let mut scored = Vec::new();
    for m in pos.legal_moves() {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let dtz = tables.probe_dtz(&after)?;
        scored.push((m, dtz, Wdl::from_dtz(dtz, rule), after.is_checkmate()));
    }
    let Some(best_wdl) = scored.iter().map(|s| s.2).min() else {
        return Ok(None);
    };
    Ok(scored
        .into_iter()
        .filter(|s| s.2 == best_wdl)
        .min_by_key(|&(m, dtz, _, mate)| {
            (Reverse(mate), m.is_zeroing() ^ (dtz.0 < 0), Reverse(dtz))
        })
        .map(|(m, dtz, _, _)| (m, dtz)))
}
