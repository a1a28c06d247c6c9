//! The `dtz50` command line: parse arguments and dispatch to one file per
//! subcommand (in `command/`); each calls the library and prints. Bad input
//! is one line on standard error and exit code 2; a closed standard output
//! (`dtz50 ... | head`) ends the run quietly.

mod command;
mod options;

use std::{io, process::ExitCode};

use clap::{Parser, Subcommand, error::ErrorKind};

use crate::{command::*, options::one_line};

/// Chess endgame tablebases that know the fifty-move rule: exact DTZ to the
/// ply, both sides to move, the 50-move, 75-move or no rule.
#[derive(Parser)]
#[command(name = "dtz50", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build tables (and any missing sub-tables) into a directory.
    Generate(generate::GenerateArgs),
    /// Print a set as one job per table for ninja, Snakemake or make.
    Plan(plan::PlanArgs),
    /// Probe positions: WDL, DTZ, the verdict with the clock, the best move.
    Probe(probe::ProbeArgs),
    /// The DTZ-optimal line from a position to the zeroing move or mate.
    Line(line::LineArgs),
    /// Header facts, counts and longest DTZ of a table file or directory.
    Info(info::InfoArgs),
    /// Check table files: checksums and every block.
    Verify(verify::VerifyArgs),
    /// Apply the draw rules and the tablebase verdict to games in a PGN file.
    Adjudicate(adjudicate::AdjudicateArgs),
    /// Serve the tables over HTTP: lichess's tablebase API and a page.
    Serve(serve::ServeArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e)
            if e.use_stderr()
                && e.kind() != ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            eprintln!("{}", usage_error_line(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            // Help and version go to stdout (exit 0); help asked for by
            // giving no subcommand goes to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match cli.command {
        Command::Generate(args) => generate::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Probe(args) => probe::run(args),
        Command::Line(args) => line::run(args),
        Command::Info(args) => info::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Adjudicate(args) => adjudicate::run(args),
        Command::Serve(args) => serve::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Clap's usage error on one line: its message and tips, without the usage
/// block ("error: unexpected argument '--x' found (try --help)").
fn usage_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let parts: Vec<String> = text
        .split("\n\n")
        .filter(|block| !block.starts_with("Usage:") && !block.starts_with("For more information"))
        .map(|block| block.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|block| !block.is_empty())
        .collect();
    format!("{} (try --help)", parts.join("; "))
}

/// Whether the error is stdout's reader having gone away (`dtz50 ... | head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}
