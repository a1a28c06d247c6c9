//! Reports as text for people: one game's events and result, and the
//! verdict after every judged move.

use std::fmt;

use super::report::{Agreement, GameReport};

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
        if self.played_after_end > 0 {
            let listed = self.moves_after_end.len();
            let more = self.played_after_end as usize - listed;
            let tail = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            writeln!(
                f,
                "  Played after the game had ended: {}{tail} ({} {})",
                self.moves_after_end.join(", "),
                self.played_after_end,
                if self.played_after_end == 1 {
                    "half-move"
                } else {
                    "half-moves"
                }
            )?;
        }
        Ok(())
    }
}
