//! `dtz50 plan`: print a set of tables as a dependency graph for ninja,
//! Snakemake or make, one `dtz50 generate TABLE` job per table, so that a
//! workflow engine builds the set (on one machine, or on a cluster
//! through Snakemake's executors).

use std::{
    io::{self, Write},
    path::PathBuf,
    process::ExitCode,
};

use anyhow::{Context, Result, bail};
use clap::Args;
use dtz50::{
    Rule,
    generate::{PlanFormat, PlanOptions, jobs, render},
};

use crate::options::TargetOptions;

/// Arguments of `dtz50 plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    targets: TargetOptions,
    /// The engine: ninja, snakemake or make.
    #[arg(long, default_value = "ninja")]
    format: PlanFormat,
    /// The table directory the jobs write into, as the engine will see it.
    #[arg(long, default_value = "tables")]
    out: String,
    /// Draw rule: 50, 75 or none.
    #[arg(long, default_value = "50")]
    rule: Rule,
    /// Worker threads per job.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The dtz50 command the jobs run (default: this program's path).
    #[arg(long, value_name = "COMMAND")]
    dtz50: Option<String>,
    /// Each job searches piece orders harder (`generate --thorough-orders`).
    #[arg(long)]
    thorough_orders: bool,
    /// Each job keeps its work arrays and checkpoints here
    /// (`generate --work-dir`), so a killed job resumes its table.
    #[arg(long, value_name = "DIR")]
    work_dir: Option<String>,
}

/// Run `dtz50 plan`.
pub fn run(args: PlanArgs) -> Result<ExitCode> {
    let targets = args.targets.targets("plan")?;
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let dtz50 = match args.dtz50 {
        Some(command) => command,
        None => this_program()?,
    };
    let options = PlanOptions {
        dtz50,
        out: args.out,
        rule: args.rule,
        threads: args.threads,
        thorough_orders: args.thorough_orders,
        work_dir: args.work_dir,
    };
    let text = render(&jobs(&targets), args.format, &options)?;
    io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The path of the running program, for the jobs to run.
fn this_program() -> Result<String> {
    let path: PathBuf = std::env::current_exe().context("cannot find this program's path")?;
    path.to_str()
        .map(str::to_string)
        .context("this program's path is not UTF-8 (give --dtz50)")
}
