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
    let answer = |fen: &str, out: &mut dyn Write| -> Result<bool> {
        match probe_one(&tables, fen, args.halfmove) {
            Ok(report) if json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
            Ok(report) => writeln!(out, "{}", report.text())?,
            Err(e) if json => {
                let error = ProbeFailure {
                    fen: fen.trim(),
                    error: one_line(&e),
                };
                writeln!(out, "{}", serde_json::to_string(&error)?)?;
                return Ok(false);
            }
            Err(e) => {
                out.flush()?;
                eprintln!("error: {}", one_line(&e));
                return Ok(false);
            }
        }
        Ok(true)
    };
    if args.batch {
        // Each answer is flushed as soon as its line is read: a GUI or an
        // engine writes one FEN and waits for the answer.
        let mut input = io::stdin().lock();
        while let Some(line) = read_line(&mut input).context("reading standard input")? {
            match line {
                Line::Text(text) if text.trim().is_empty() => continue,
                Line::Text(text) => failed |= !answer(&text, &mut out)?,
                Line::Unreadable { start, problem } => {
                    failed = true;
                    let error = ProbeFailure {
                        fen: &start,
                        error: problem,
                    };
                    writeln!(out, "{}", serde_json::to_string(&error)?)?;
                }
            }
            out.flush()?;
        }
    } else {
        if args.fens.is_empty() {
            bail!("no position: give a FEN or use --batch");
        }
        for fen in &args.fens {
            failed |= !answer(fen, &mut out)?;
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

/// The longest line `--batch` reads as a position: a FEN is at most about
/// 90 bytes; anything much longer is not one.
const MAX_LINE: usize = 256;

/// How much of an unreadable line an error repeats.
const SHOWN: usize = 32;

/// One line of standard input.
enum Line {
    /// A line of text (without its line ending).
    Text(String),
    /// A line that is not valid UTF-8 or longer than [`MAX_LINE`] bytes:
    /// its start (at most [`SHOWN`] characters) and what is wrong.
    Unreadable { start: String, problem: String },
}

/// The next line of `input`, reading at most [`MAX_LINE`] bytes of it into
/// memory; `None` at the end of the input.
fn read_line(input: &mut impl BufRead) -> io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            if bytes.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (chunk, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], at + 1),
            None => (buffer, buffer.len()),
        };
        let room = (MAX_LINE + 1).saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        too_long |= bytes.len() > MAX_LINE;
        let done = ends > chunk.len();
        input.consume(ends);
        if done {
            break;
        }
    }
    if bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    let start = |bytes: &[u8]| String::from_utf8_lossy(bytes).chars().take(SHOWN).collect();
    if too_long {
        return Ok(Some(Line::Unreadable {
            start: start(&bytes),
            problem: format!("line longer than {MAX_LINE} bytes: not a FEN"),
        }));
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Line::Text(text),
        Err(e) => Line::Unreadable {
            start: start(e.as_bytes()),
            problem: "line is not valid UTF-8".to_owned(),
        },
    }))
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
