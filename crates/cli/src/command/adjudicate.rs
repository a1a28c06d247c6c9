//! `dtz50 adjudicate`: the draw rules and the tablebase verdict applied to
//! every game of a PGN file, as text or one JSON object per game.

use std::{
    io::{self, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use dtz50::{
    adjudicate::{AdjudicateOptions, FivefoldRule, adjudicate_pgn, render_text},
    probe::StoredValues,
};
use serde::Serialize;

use crate::options::{TableOptions, one_line, say};

/// Arguments of `dtz50 adjudicate`.
#[derive(Debug, Args)]
pub struct AdjudicateArgs {
    /// The PGN file.
    pgn: PathBuf,
    /// Table directory (verdicts are skipped if it does not exist) and rule.
    #[command(flatten)]
    tables: TableOptions,
    /// One JSON object per game.
    #[arg(long)]
    json: bool,
    /// Apply the 2014 fivefold rule (five consecutive repetitions).
    #[arg(long)]
    fivefold_2014: bool,
}

/// A game that could not be adjudicated, in JSON.
#[derive(Serialize)]
struct GameFailure {
    game: usize,
    error: String,
}

/// Run `dtz50 adjudicate`.
pub fn run(args: AdjudicateArgs) -> Result<ExitCode> {
    let file = std::fs::File::open(&args.pgn)
        .with_context(|| format!("cannot read {}", args.pgn.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {}", args.pgn.display()))?;
    if meta.is_dir() {
        bail!("{} is a directory, not a PGN file", args.pgn.display());
    }
    let tables = if args.tables.tables.is_dir() {
        Some(args.tables.open()?)
    } else {
        None
    };
    let options = AdjudicateOptions {
        fivefold: if args.fivefold_2014 {
            FivefoldRule::Consecutive2014
        } else {
            FivefoldRule::Current
        },
    };
    let store = tables.as_ref().map(|t| t as &dyn StoredValues);
    let mut failed = false;
    for game in adjudicate_pgn(io::BufReader::new(file), store, options) {
        match game {
            Ok(report) if args.json => say(serde_json::to_string(&report)?)?,
            Ok(report) => say(render_text(&report))?,
            Err(e) => {
                failed = true;
                let game = e.game().number;
                let error = one_line(&anyhow::Error::from(e));
                if args.json {
                    let failure = GameFailure { game, error };
                    say(serde_json::to_string(&failure)?)?;
                } else {
                    io::stdout().flush()?;
                    eprintln!("error: {error}");
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
