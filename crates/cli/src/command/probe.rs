//! `dtz50 probe`: the value of positions, as text or JSON, from arguments
//! or (with `--batch`) from standard input.

use std::{
    io::{self, BufRead, Write},
    process::ExitCode,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use dtz50::{Material, Tablebase, Verdict};
use serde::Serialize;
use shakmaty::{CastlingMode, Chess, EnPassantMode, FromSetup, Position, Setup, san::SanPlus};

use crate::options::{TableOptions, one_line, parse_fen};

/// Arguments of `dtz50 probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Positions in FEN (the halfmove clock is field 5).
    fens: Vec<String>,
    #[command(flatten)]
    tables: TableOptions,
    /// Use this halfmove clock instead of the FEN's.
    #[arg(long)]
    halfmove: Option<u32>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    /// Read FENs from standard input, one per line (implies --json).
    #[arg(long)]
    batch: bool,
}

/// Run `dtz50 probe`.
pub fn run(args: ProbeArgs) -> Result<ExitCode> {
    let tables = args.tables.open()?;
    let json = args.json || args.batch;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut answer = |fen: &str, out: &mut dyn Write| -> Result<()> {
        match probe_one(&tables, fen, args.halfmove) {
            Ok(report) if json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
            Ok(report) => writeln!(out, "{}", report.text())?,
            Err(e) => {
                failed = true;
                if json {
                    let error = ProbeFailure {
                        fen: fen.trim(),
                        error: one_line(&e),
                    };
                    writeln!(out, "{}", serde_json::to_string(&error)?)?;
                } else {
                    out.flush()?;
                    eprintln!("error: {}", one_line(&e));
                }
            }
        }
        Ok(())
    };
    if args.batch {
        for line in io::stdin().lock().lines() {
            let line = line.context("reading standard input")?;
            if !line.trim().is_empty() {
                answer(&line, &mut out)?;
            }
        }
    } else {
        if args.fens.is_empty() {
            bail!("no position: give a FEN or use --batch");
        }
        for fen in &args.fens {
            answer(fen, &mut out)?;
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// One probed position: its verdict under the clock and the best move. In
/// JSON the verdict's fields stand beside the others (see the README).
#[derive(Serialize)]
struct ProbeReport {
    fen: String,
    material: Material,
    #[serde(flatten)]
    verdict: Verdict,
    best_move: Option<String>,
}

/// A line that could not be probed, in JSON.
#[derive(Serialize)]
struct ProbeFailure<'a> {
    fen: &'a str,
    error: String,
}

fn probe_one(tables: &Tablebase, fen: &str, halfmove: Option<u32>) -> Result<ProbeReport> {
    let pos = parse_fen(fen)?;
    let clock = halfmove.unwrap_or(pos.halfmoves());
    let verdict = tables.probe_with_clock(&pos, clock)?;
    let material = Material::from_board(pos.board()).normalized();
    let with_clock = pos_with_clock(&pos, clock)?;
    let best_move = tables
        .best_moves(&with_clock)?
        .first()
        .map(|m| SanPlus::from_move(pos.clone(), m.mv).to_string());
    Ok(ProbeReport {
        fen: fen.trim().to_owned(),
        material,
        verdict,
        best_move,
    })
}

/// `pos` with its halfmove clock set to `clock`.
fn pos_with_clock(pos: &Chess, clock: u32) -> Result<Chess> {
    let setup = Setup {
        halfmoves: clock,
        ..pos.to_setup(EnPassantMode::Legal)
    };
    Chess::from_setup(setup, CastlingMode::Standard).map_err(|e| anyhow!("illegal position: {e}"))
}

impl ProbeReport {
    fn text(&self) -> String {
        let v = &self.verdict;
        let best = self
            .best_move
            .as_deref()
            .map_or(String::new(), |m| format!("; best move {m}"));
        format!(
            "{}: {}, DTZ {}; {v}{best}",
            self.material,
            v.wdl.name(),
            v.dtz
        )
    }
}
