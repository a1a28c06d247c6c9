//! `dtz50 verify`: check table files (checksums and every block), and with
//! `--deep` recompute every position from its successors.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Result, bail};
use clap::Args;
use dtz50::{Tablebase, generate::deep_check, probe::open_file};

use crate::options::{ThreadOptions, one_line, say, table_files};

/// Arguments of `dtz50 verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A table file or a directory of them.
    path: PathBuf,
    /// Also recompute every position from its successors' stored
    /// values (sub-tables must be in the same directory).
    #[arg(long)]
    deep: bool,
    /// With --deep: keep the check's work arrays (three bytes per position)
    /// in files in this directory, which the kernel pages to disk, instead
    /// of RAM (for tables larger than the machine's memory).
    #[arg(long, value_name = "DIR", requires = "deep")]
    work_dir: Option<PathBuf>,
    #[command(flatten)]
    threads: ThreadOptions,
}

/// Run `dtz50 verify`.
pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    args.threads.apply()?;
    if let Some(dir) = &args.work_dir
        && !dir.is_dir()
    {
        bail!("work directory {} is not a directory", dir.display());
    }
    let mut failures = 0;
    for file in table_files(&args.path)? {
        let deep = args.deep.then_some(args.work_dir.as_deref());
        match verify_file(&file, deep) {
            Ok(note) => say(format!("{}: ok{note}", file.display()))?,
            Err(e) => {
                failures += 1;
                say(format!("{}: FAILED: {}", file.display(), one_line(&e)))?;
            }
        }
    }
    if failures > 0 {
        eprintln!("error: {failures} table file(s) failed verification");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// Checksums and blocks; with `deep` (and its work directory, if any), the
/// recomputation from successors.
fn verify_file(file: &Path, deep: Option<Option<&Path>>) -> Result<String> {
    let table = open_file(file)?;
    table
        .verify()
        .map_err(|source| dtz50::ProbeError::corrupt(file, source))?;
    let Some(work_dir) = deep else {
        return Ok(String::new());
    };
    let header = table.header();
    // A bare file name's parent is "", which names no directory.
    let dir = file
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tables = Tablebase::open(dir, header.rule)?;
    let report = deep_check(&tables, &header.material, work_dir)?;
    if report.inconsistent > 0 {
        bail!(
            "{} of {} positions disagree with their successors; first: {}",
            report.inconsistent,
            report.checked,
            report.examples.join("; ")
        );
    }
    Ok(format!(
        " ({} positions recomputed from their successors, {} of them also through shakmaty)",
        report.checked, report.cross_checked
    ))
}
