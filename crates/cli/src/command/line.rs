//! `dtz50 line`: the DTZ-optimal line from a position, move by move.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use dtz50::probe::{LineEnd, MAX_LINE_MOVES};
use shakmaty::{Color, Position, san::SanPlus};

use crate::options::{TableOptions, parse_fen, say};

/// Arguments of `dtz50 line`.
#[derive(Debug, Args)]
pub struct LineArgs {
    /// The position in FEN.
    fen: String,
    #[command(flatten)]
    tables: TableOptions,
    /// Go on through sub-tables until mate or a draw.
    #[arg(long)]
    to_mate: bool,
}

/// Run `dtz50 line`.
pub fn run(args: LineArgs) -> Result<ExitCode> {
    let tables = args.tables.open()?;
    let pos = parse_fen(&args.fen)?;
    say(tables.probe(&pos)?)?;
    let line = tables.line(&pos, args.to_mate)?;
    for (before, mv) in &line.moves {
        let number = before.fullmoves();
        let prefix = if before.turn() == Color::White {
            format!("{number}.")
        } else {
            format!("{number}...")
        };
        let san = SanPlus::from_move(before.clone(), *mv);
        let mut after = before.clone();
        after.play_unchecked(*mv);
        say(format!("{prefix} {san} (clock {})", after.halfmoves()))?;
    }
    say(match line.end {
        LineEnd::Checkmate => "checkmate",
        LineEnd::Stalemate => "stalemate",
        LineEnd::Draw => "draw",
        LineEnd::Zeroing => "zeroing move reached",
        LineEnd::Unfinished => bail!("line did not end after {MAX_LINE_MOVES} moves"),
    })?;
    Ok(ExitCode::SUCCESS)
}
