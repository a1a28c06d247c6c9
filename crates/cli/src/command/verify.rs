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
    #[command(flatten)]
    threads: ThreadOptions,
}

/// Run `dtz50 verify`.
pub fn run(args: VerifyArgs) -> Result<ExitCode> {
    args.threads.apply()?;
    let mut failures = 0;
    for file in table_files(&args.path)? {
        match verify_file(&file, args.deep) {
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

/// Checksums and blocks; with `deep`, the recomputation from successors.
fn verify_file(file: &Path, deep: bool) -> Result<String> {
    let table = open_file(file)?;
    table
        .verify()
        .map_err(|source| dtz50::ProbeError::corrupt(file, source))?;
    if !deep {
        return Ok(String::new());
    }
    let header = table.header();
    // A bare file name's parent is "", which names no directory.
    let dir = file
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tables = Tablebase::open(dir, header.rule)?;
    let report = deep_check(&tables, &header.material)?;
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
