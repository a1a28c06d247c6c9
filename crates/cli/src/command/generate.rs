//! `dtz50 generate`: build tables into a directory, with a progress bar on
//! a terminal and one summary line per table otherwise.

use std::{
    io::{self, IsTerminal, Write},
    path::PathBuf,
    process::ExitCode,
    sync::Mutex,
    time::Duration,
};

use anyhow::Result;
use clap::Args;
use dtz50::{
    Material, Rule,
    format::{OrderSearch, SideStats},
    generate::{Event, GenerateOptions, Progress, Summary, generate},
    probe::error_chain,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::options::{TargetOptions, ThreadOptions};

/// Arguments of `dtz50 generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    targets: TargetOptions,
    /// Output directory.
    #[arg(long, default_value = "tables")]
    out: PathBuf,
    /// Draw rule: 50, 75 or none.
    #[arg(long, default_value = "50")]
    rule: Rule,
    /// Keep the solver's work arrays in a temporary file in this
    /// directory instead of RAM (for machines with little memory), and
    /// checkpoints there: a stopped build run again with the same
    /// directory resumes from its table's last checkpoint.
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// With --work-dir: write a checkpoint of the table being solved at
    /// most this often, in seconds (0: after every ply).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 600,
        requires = "work_dir"
    )]
    checkpoint_every: u64,
    /// Search the piece orders of each pawnless table over 2^23 positions
    /// per side harder, for smaller files (KRBvKR 16 % and KRNvKR 12 %
    /// fewer bytes, others the same), at up to twice the build time.
    #[arg(long)]
    thorough_orders: bool,
    #[command(flatten)]
    threads: ThreadOptions,
}

/// Run `dtz50 generate`.
pub fn run(args: GenerateArgs) -> Result<ExitCode> {
    args.threads.apply()?;
    let targets = args.targets.targets("generate")?;
    let options = GenerateOptions {
        rule: args.rule,
        out: args.out,
        checkpoint_every: args
            .work_dir
            .is_some()
            .then(|| Duration::from_secs(args.checkpoint_every)),
        work_dir: args.work_dir,
        order_search: if args.thorough_orders {
            OrderSearch::Thorough
        } else {
            OrderSearch::Sampled
        },
    };
    let reporter = Reporter::new();
    generate(&targets, &options, &|event| reporter.event(event))?;
    reporter.finish();
    Ok(ExitCode::SUCCESS)
}

/// Progress for `generate`: a bar on a terminal, plain lines otherwise.
struct Reporter {
    bar: Option<ProgressBar>,
    last_line: Mutex<Option<(Material, usize)>>,
}

impl Reporter {
    fn new() -> Reporter {
        let bar = io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} tables {msg}")
                    .expect("valid template"),
            );
            bar
        });
        Reporter {
            bar,
            last_line: Mutex::new(None),
        }
    }

    fn event(&self, event: Event<'_>) {
        match event {
            Event::Plan(plan) => {
                if let Some(bar) = &self.bar {
                    bar.set_length(plan.len() as u64);
                }
            }
            Event::RemovedStale(path) => {
                self.println(&format!(
                    "removed {}, left by a build that no longer runs",
                    path.display()
                ));
            }
            Event::Skipped(material, path) => {
                self.println(&format!(
                    "{material}: already built and intact ({}), skipped",
                    path.display()
                ));
                self.advance();
            }
            Event::Rebuilding(material, path, reason) => {
                self.println(&format!(
                    "{material}: {} is unusable ({}), rebuilding",
                    path.display(),
                    error_chain(reason)
                ));
            }
            // Where a build picked up, a note like "skipped".
            Event::Solving(
                material,
                progress @ (Progress::Resumed { .. } | Progress::CheckpointUnusable),
            ) => self.println(&progress_text(material, progress)),
            // Progress that is worth a line of its own.
            Event::Solving(material, progress @ Progress::Checkpoint { .. }) => match &self.bar {
                Some(bar) => bar.println(progress_text(material, progress)),
                None => eprintln!("{}", progress_text(material, progress)),
            },
            Event::Solving(material, progress) => {
                if let Some(bar) = &self.bar {
                    bar.set_message(progress_text(material, progress));
                } else if let Progress::Seed { level, levels } = progress {
                    let mut last = self.last_line.lock().expect("lock");
                    if *last != Some((material, level)) && (level == 0 || level + 1 == levels) {
                        eprintln!("{}", progress_text(material, progress));
                        *last = Some((material, level));
                    }
                }
            }
            Event::Writing(material) => {
                if let Some(bar) = &self.bar {
                    bar.set_message(format!("{material}: compressing"));
                }
            }
            Event::Finished(summary) => {
                self.println(&summary_line(summary));
                self.advance();
            }
        }
    }

    fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let _ = writeln!(io::stdout().lock(), "{line}");
            }
        }
    }

    fn advance(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// What the solver is doing, in words. Tables without pawns are solved in
/// one piece, so they have no pawn levels to count.
fn progress_text(material: Material, progress: Progress) -> String {
    match progress {
        Progress::Seed { levels: 1, .. } => format!("{material}: seeding"),
        Progress::Seed { level, levels } => {
            format!("{material}: seeding pawn level {}/{levels}", level + 1)
        }
        Progress::Ply { levels: 1, ply, .. } => format!("{material}: ply {ply}"),
        Progress::Ply { level, levels, ply } => {
            format!("{material}: pawn level {}/{levels}, ply {ply}", level + 1)
        }
        Progress::Checkpoint { levels: 1, ply, .. } => {
            format!("{material}: checkpoint after ply {ply}")
        }
        Progress::Checkpoint { level, levels, ply } => {
            format!(
                "{material}: checkpoint after pawn level {}/{levels}, ply {ply}",
                level + 1
            )
        }
        Progress::Resumed { levels: 1, ply, .. } => {
            format!("{material}: resumed from its checkpoint at ply {ply}")
        }
        Progress::Resumed { level, levels, ply } => format!(
            "{material}: resumed from its checkpoint at pawn level {}/{levels}, ply {ply}",
            level + 1
        ),
        Progress::CheckpointUnusable => format!(
            "{material}: its checkpoint is damaged or from another table or version; \
             solving from the start"
        ),
    }
}

fn side_text(s: &SideStats) -> String {
    let [l, bl, d, cw, w] = s.counts;
    format!("W {w} CW {cw} D {d} BL {bl} L {l}")
}

fn summary_line(s: &Summary) -> String {
    format!(
        "{}: {} positions/side; wtm {}; btm {}; longest DTZ {} plies; {:.2} s; {} bytes",
        s.material,
        s.positions,
        side_text(&s.stats.white),
        side_text(&s.stats.black),
        s.stats.white.longest().max(s.stats.black.longest()),
        s.seconds,
        s.bytes
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_names_pawn_levels_only_where_there_are_some() {
        let kqvk: Material = "KQvK".parse().expect("material");
        let kpvk: Material = "KPvK".parse().expect("material");
        let seed = |level, levels| Progress::Seed { level, levels };
        assert_eq!(progress_text(kqvk, seed(0, 1)), "KQvK: seeding");
        assert_eq!(
            progress_text(kpvk, seed(2, 6)),
            "KPvK: seeding pawn level 3/6"
        );
        let ply = |level, levels, ply| Progress::Ply { level, levels, ply };
        assert_eq!(progress_text(kqvk, ply(0, 1, 7)), "KQvK: ply 7");
        assert_eq!(
            progress_text(kpvk, ply(1, 6, 7)),
            "KPvK: pawn level 2/6, ply 7"
        );
    }
}
