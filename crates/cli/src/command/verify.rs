//! `dtz50 verify`: check table files (checksums and every block), and with
//! `--deep` recompute every position from its successors, saying where a
//! long check is on standard error ([`DeepProgress`]).

use std::{
    io::{self, IsTerminal},
    path::{Path, PathBuf},
    process::ExitCode,
    sync::Mutex,
    time::{Duration, Instant},
};

use anyhow::{Result, bail};
use clap::Args;
use dtz50::{
    Tablebase,
    generate::{DeepStep, deep_check},
    probe::open_file,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::options::{LOG_EVERY, ThreadOptions, duration_text, one_line, say, table_files};

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
        .map_err(|source| dtz50::ProbeError::bad_file(file, source))?;
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
    let progress = DeepProgress::new(file);
    let report = deep_check(&tables, &header.material, work_dir, &|step| {
        progress.step(step, Instant::now());
    });
    progress.finish();
    let report = report?;
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

/// Where a deep check is, on standard error: on a terminal one line that
/// changes in place and is cleared at the end; otherwise (a log) a line
/// once [`LOG_EVERY`] has passed since the check started or since the
/// last line, and a line as each step starts once the check has run that
/// long, so that a check that takes an hour shows how far it is (its
/// reading step alone takes half an hour on KRNvKNN) and one that takes
/// seconds prints nothing.
struct DeepProgress<'a> {
    file: &'a Path,
    bar: Option<ProgressBar>,
    started: Instant,
    /// Without a terminal: when the last line was printed (or the start).
    last_line: Mutex<Instant>,
}

impl<'a> DeepProgress<'a> {
    fn new(file: &'a Path) -> DeepProgress<'a> {
        let bar = io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .expect("valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        let started = Instant::now();
        DeepProgress {
            file,
            bar,
            started,
            last_line: Mutex::new(started),
        }
    }

    /// The check reached `step` at `now`.
    fn step(&self, step: DeepStep, now: Instant) {
        let text = format!("{}: deep check: {}", self.file.display(), step_text(step));
        match &self.bar {
            Some(bar) => bar.set_message(text),
            None => {
                let mut last = self.last_line.lock().expect("lock");
                let long = now.duration_since(self.started) >= LOG_EVERY;
                if now.duration_since(*last) >= LOG_EVERY || long && starts_phase(step) {
                    let elapsed = now.duration_since(self.started).as_secs_f64();
                    eprintln!("{text} ({} in)", duration_text(elapsed));
                    *last = now;
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Whether `step` is the start of one of the check's steps.
fn starts_phase(step: DeepStep) -> bool {
    matches!(
        step,
        DeepStep::Seeding { percent: 0 }
            | DeepStep::Reading
            | DeepStep::Deriving
            | DeepStep::Checking { percent: 0 }
    )
}

/// A deep check's step in words: "valuing each position's own moves 40 %",
/// "reading the file's values back".
fn step_text(step: DeepStep) -> String {
    let percent = |p: u8| {
        if p == 0 {
            String::new()
        } else {
            format!(" {p} %")
        }
    };
    match step {
        DeepStep::Seeding { percent: p } => {
            format!("valuing each position's own moves{}", percent(p))
        }
        DeepStep::Reading => "reading the file's values back".to_owned(),
        DeepStep::Deriving => "deriving the unkept side's DTZ".to_owned(),
        DeepStep::Checking { percent: p } => {
            format!(
                "recomputing every position from its successors{}",
                percent(p)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_gets_a_line_a_minute_and_each_step_after_the_first_minute() {
        let start = Instant::now();
        let progress = DeepProgress {
            file: Path::new("KRNvKNN.dtz50"),
            bar: None,
            started: start,
            last_line: Mutex::new(start),
        };
        let after = |seconds| start + Duration::from_secs(seconds);
        let last = || *progress.last_line.lock().expect("lock");
        progress.step(DeepStep::Seeding { percent: 10 }, after(30));
        progress.step(DeepStep::Reading, after(59));
        assert_eq!(last(), start, "a check under a minute prints nothing");
        progress.step(DeepStep::Reading, after(60));
        assert_eq!(last(), after(60), "a minute");
        progress.step(DeepStep::Checking { percent: 10 }, after(100));
        assert_eq!(last(), after(60), "not yet a minute since the last line");
        progress.step(DeepStep::Deriving, after(101));
        assert_eq!(last(), after(101), "a new step, after the first minute");
        assert!(starts_phase(DeepStep::Checking { percent: 0 }));
        assert!(!starts_phase(DeepStep::Seeding { percent: 90 }));
        assert_eq!(
            step_text(DeepStep::Checking { percent: 40 }),
            "recomputing every position from its successors 40 %"
        );
        assert_eq!(
            step_text(DeepStep::Seeding { percent: 0 }),
            "valuing each position's own moves"
        );
    }
}
