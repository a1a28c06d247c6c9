//! `dtz50 generate`: build tables into a directory, with a progress bar on
//! a terminal; otherwise (a log) a line as each table starts and a summary
//! line as it ends, and for a table that takes longer a progress line a
//! minute in between (see [`log_line_due`]) and a line as each step of its
//! write starts. Either way the progress says
//! which table, pawn level and ply the solver is in and,
//! once a table large enough to go by is built, about how long the rest
//! will take (see [`Estimate`]).

use std::{
    collections::HashMap,
    io::{self, IsTerminal, Write},
    path::PathBuf,
    process::ExitCode,
    sync::Mutex,
    time::{Duration, Instant},
};

use anyhow::Result;
use clap::Args;
use dtz50::{
    Material, Rule,
    format::{OrderSearch, SideStats, WriteStep},
    generate::{Event, GenerateOptions, Progress, Summary, Unusable, generate, solved_positions},
    probe::error_chain,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::options::{LOG_EVERY, TargetOptions, ThreadOptions, duration_text};

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
    /// Search the piece orders of each table over 2^23 positions per side
    /// harder: a pawnless table's DTZ (the four-against-one tables about
    /// 17 % fewer bytes, KQBvKN 21 %, at 1.4 to 2 times the build time)
    /// and a pawn table's WDL (KBPvKP's file 36 % fewer bytes, KRPvKR's the
    /// same, at 1.44 times its build time).
    #[arg(long, conflicts_with = "search_orders")]
    thorough_orders: bool,
    /// Search every table's piece orders, also a table whose orders
    /// tables/ORDERS records (a default build under the 50-move rule
    /// writes those in the recorded orders without searching).
    #[arg(long)]
    search_orders: bool,
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
        } else if args.search_orders {
            OrderSearch::Sampled
        } else {
            OrderSearch::Recorded
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
    /// Without a terminal: the last progress line printed.
    last_line: Mutex<Option<LastLine>>,
    estimate: Mutex<Estimate>,
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
            estimate: Mutex::new(Estimate::default()),
        }
    }

    fn event(&self, event: Event<'_>) {
        match event {
            Event::Plan(plan) => {
                if let Some(bar) = &self.bar {
                    bar.set_length(plan.len() as u64);
                }
                self.estimate().plan(plan);
            }
            Event::RemovedStale(path) => {
                self.println(&format!(
                    "removed {}, left by a build that no longer runs",
                    path.display()
                ));
            }
            Event::Skipped(material, path) => {
                self.estimate().skipped(material);
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
                progress @ (Progress::Resumed { .. } | Progress::CheckpointUnusable(_)),
            ) => self.println(&progress_text(material, progress)),
            // Progress that is worth a line of its own.
            Event::Solving(material, progress @ Progress::Checkpoint { .. }) => match &self.bar {
                Some(bar) => bar.println(progress_text(material, progress)),
                None => eprintln!("{}", progress_text(material, progress)),
            },
            Event::Solving(material, progress) => {
                let left = {
                    let mut estimate = self.estimate();
                    estimate.started(material, Instant::now());
                    estimate.seconds_left(Instant::now())
                };
                let text = match left {
                    Some(seconds) => format!(
                        "{} ({} left)",
                        progress_text(material, progress),
                        duration_text(seconds)
                    ),
                    None => progress_text(material, progress),
                };
                if let Some(bar) = &self.bar {
                    bar.set_message(text);
                } else {
                    let mut last = self.last_line.lock().expect("lock");
                    let now = Instant::now();
                    if log_line_due(*last, material, progress, now) {
                        eprintln!("{text}");
                        *last = Some(LastLine {
                            material,
                            level: progress_level(progress),
                            at: now,
                        });
                    }
                }
            }
            Event::Writing(material) => self.writing(material, None),
            Event::WriteStep(material, step) => self.writing(material, Some(step)),
            Event::Finished(summary) => {
                self.estimate().finished(summary);
                self.println(&summary_line(summary));
                self.advance();
            }
        }
    }

    /// A table's write starts (`step` `None`) or goes on to `step`: the
    /// bar's message on a terminal; in a log, a line once the table has
    /// been built for [`LOG_EVERY`] (a six-piece table's write takes a
    /// quarter of an hour, a small table's prints nothing).
    fn writing(&self, material: Material, step: Option<WriteStep>) {
        let text = write_text(material, step);
        match &self.bar {
            Some(bar) => bar.set_message(text),
            None => {
                if let Some(elapsed) = self.estimate().building_for(material, Instant::now())
                    && elapsed >= LOG_EVERY
                {
                    eprintln!("{text} ({} in)", duration_text(elapsed.as_secs_f64()));
                }
            }
        }
    }

    fn estimate(&self) -> std::sync::MutexGuard<'_, Estimate> {
        self.estimate.lock().expect("estimate lock")
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

/// A progress line printed without a terminal: its table, pawn level and
/// time.
#[derive(Debug, Clone, Copy)]
struct LastLine {
    material: Material,
    level: usize,
    at: Instant,
}

/// Whether a build without a terminal prints a line for `progress` at
/// `now`, after `last`: as a table's first and last pawn level start
/// seeding (the only lines of a small build), and otherwise once
/// [`LOG_EVERY`] has passed since the last line, so that the log of a
/// build that takes hours says which pass and ply it is in and how long
/// it has left.
fn log_line_due(
    last: Option<LastLine>,
    material: Material,
    progress: Progress,
    now: Instant,
) -> bool {
    let level_starts = matches!(
        progress,
        Progress::Seed { level, levels, percent: 0 } if level == 0 || level + 1 == levels
    );
    match last {
        None => level_starts,
        Some(last) => {
            let level = (material, progress_level(progress));
            (level_starts && (last.material, last.level) != level)
                || now.duration_since(last.at) >= LOG_EVERY
        }
    }
}

/// The pawn level a progress report is about (0 for a table without).
fn progress_level(progress: Progress) -> usize {
    match progress {
        Progress::Seed { level, .. }
        | Progress::Ply { level, .. }
        | Progress::Checkpoint { level, .. }
        | Progress::Resumed { level, .. } => level,
        Progress::CheckpointUnusable(_) => 0,
    }
}

/// The time a build has left, from the speed of the largest table it has
/// built so far (seconds per position per side, writing included, a
/// position counted once where identical pieces give it several indices:
/// [`solved_positions`]; by index, KRNvKNN's first estimate was 1 h 58
/// min, by position 60 min, and it took 50): every
/// table still to build is expected to take its positions at that speed,
/// the one being solved less the time it has had. Small tables' fixed
/// costs make them far slower per position than large ones (KRvK 7 µs,
/// KRBvKR 0.3 µs), so there is no estimate until a table of at least
/// 1/[`GUIDE_FRACTION`] of the largest one left has been built: in a
/// 5-piece set, the 4-piece tables with a pawn; before a six-piece table,
/// its 5-piece sub-tables.
#[derive(Debug, Default)]
struct Estimate {
    /// Positions per side of each table still to build.
    left: HashMap<Material, u64>,
    /// Positions per side and seconds of the largest table built.
    largest: Option<(u64, f64)>,
    /// The table being built, and when it started.
    current: Option<(Material, Instant)>,
}

impl Estimate {
    fn plan(&mut self, plan: &[Material]) {
        self.left = plan.iter().map(|&m| (m, solved_positions(m))).collect();
    }

    fn skipped(&mut self, material: Material) {
        self.left.remove(&material);
    }

    fn started(&mut self, material: Material, now: Instant) {
        if self.current.is_none_or(|(m, _)| m != material) {
            self.current = Some((material, now));
        }
    }

    /// How long `material` has been built at `now`, if it is the table
    /// being built.
    fn building_for(&self, material: Material, now: Instant) -> Option<Duration> {
        let (current, start) = self.current?;
        (current == material).then(|| now.duration_since(start))
    }

    fn finished(&mut self, summary: &Summary) {
        self.left.remove(&summary.material);
        self.current = None;
        let positions = solved_positions(summary.material);
        if self.largest.is_none_or(|(n, _)| positions >= n) {
            self.largest = Some((positions, summary.seconds));
        }
    }

    /// Seconds left at `now`, once a table large enough to go by has
    /// been built.
    fn seconds_left(&self, now: Instant) -> Option<f64> {
        let (positions, seconds) = self.largest?;
        let largest_left = self.left.values().max().copied().unwrap_or(0);
        if positions.saturating_mul(GUIDE_FRACTION) < largest_left {
            return None;
        }
        let per_position = seconds / positions as f64;
        Some(
            self.left
                .iter()
                .map(|(&material, &n)| {
                    let expected = n as f64 * per_position;
                    match self.current {
                        Some((m, start)) if m == material => {
                            (expected - (now - start).as_secs_f64()).max(0.0)
                        }
                        _ => expected,
                    }
                })
                .sum(),
        )
    }
}

/// How much smaller than the largest table left a table built may be and
/// still give the speed (see [`Estimate`]).
const GUIDE_FRACTION: u64 = 64;

/// " 40 %" once seeding is under way; nothing as it starts.
fn percent_text(percent: u8) -> String {
    match percent {
        0 => String::new(),
        p => format!(" {p} %"),
    }
}

/// What a ply did: "1.2 M decided, 38.4 M undecided".
fn ply_counts(decided: u64, undecided: u64) -> String {
    format!(
        "{} decided, {} undecided",
        count_text(decided),
        count_text(undecided)
    )
}

/// A count in a few characters: 950, 12.3 k, 4.5 M, 3.94 G.
fn count_text(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..1_000_000 => format!("{:.1} k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} M", n as f64 / 1e6),
        _ => format!("{:.2} G", n as f64 / 1e9),
    }
}

/// What the solver is doing, in words. Tables without pawns are solved in
/// one piece, so they have no pawn levels to count.
fn progress_text(material: Material, progress: Progress) -> String {
    match progress {
        Progress::Seed {
            levels: 1, percent, ..
        } => format!("{material}: seeding{}", percent_text(percent)),
        Progress::Seed {
            level,
            levels,
            percent,
        } => format!(
            "{material}: seeding pawn level {}/{levels}{}",
            level + 1,
            percent_text(percent)
        ),
        Progress::Ply {
            levels: 1,
            ply,
            decided,
            undecided,
            ..
        } => format!("{material}: ply {ply} ({})", ply_counts(decided, undecided)),
        Progress::Ply {
            level,
            levels,
            ply,
            decided,
            undecided,
        } => format!(
            "{material}: pawn level {}/{levels}, ply {ply} ({})",
            level + 1,
            ply_counts(decided, undecided)
        ),
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
        Progress::CheckpointUnusable(Unusable::Damaged) => format!(
            "{material}: its checkpoint is damaged or from another table or version; \
             solving from the start"
        ),
        Progress::CheckpointUnusable(Unusable::Unreadable(kind)) => {
            format!("{material}: its checkpoint cannot be read ({kind}); solving from the start")
        }
    }
}

/// What a table's write is doing, in words.
fn write_text(material: Material, step: Option<WriteStep>) -> String {
    match step {
        None => format!("{material}: writing the file"),
        Some(WriteStep::ChoosingOrders) => {
            format!("{material}: writing: choosing each stream's order of the pieces")
        }
        Some(WriteStep::BuildingGrammars) => {
            format!("{material}: writing: building each stream's grammar")
        }
        Some(WriteStep::EncodingAtOnce { streams }) => {
            format!("{material}: writing: encoding its {streams} streams")
        }
        Some(WriteStep::Encoding { done, streams }) => {
            format!(
                "{material}: writing: encoding stream {} of {streams}",
                done + 1
            )
        }
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
    use dtz50::index::Layout;

    use super::*;

    #[test]
    fn a_log_gets_each_end_level_and_then_a_line_a_minute() {
        let [krpvk, kqvk] = ["KRPvK", "KQvK"].map(|n| n.parse::<Material>().expect("m"));
        let start = Instant::now();
        let seed = |level, percent| Progress::Seed {
            level,
            levels: 5,
            percent,
        };
        let ply = |level| Progress::Ply {
            level,
            levels: 5,
            ply: 30,
            decided: 1,
            undecided: 2,
        };
        let after = |seconds| start + Duration::from_secs(seconds);
        let line = |material, level, at| {
            Some(LastLine {
                material,
                level,
                at,
            })
        };
        assert!(log_line_due(None, krpvk, seed(0, 0), start), "first level");
        assert!(!log_line_due(None, krpvk, ply(0), start), "no line yet");
        let first = line(krpvk, 0, start);
        assert!(!log_line_due(first, krpvk, seed(0, 0), after(1)), "printed");
        assert!(!log_line_due(first, krpvk, seed(0, 10), after(1)));
        assert!(!log_line_due(first, krpvk, ply(0), after(59)));
        assert!(log_line_due(first, krpvk, ply(0), after(60)), "a minute");
        assert!(
            !log_line_due(first, krpvk, seed(2, 0), after(1)),
            "middle level"
        );
        assert!(
            log_line_due(first, krpvk, seed(4, 0), after(1)),
            "last level"
        );
        assert!(
            log_line_due(first, kqvk, seed(0, 0), after(1)),
            "next table"
        );
        let later = line(krpvk, 4, after(70));
        assert!(!log_line_due(later, krpvk, ply(4), after(129)));
        assert!(log_line_due(later, krpvk, ply(4), after(130)));
    }

    #[test]
    fn a_write_is_told_step_by_step_with_how_long_the_table_has_taken() {
        let [krpvk, kqvk] = ["KRPvK", "KQvK"].map(|n| n.parse::<Material>().expect("m"));
        let mut estimate = Estimate::default();
        let start = Instant::now();
        assert_eq!(estimate.building_for(krpvk, start), None, "not started");
        estimate.started(krpvk, start);
        let later = start + Duration::from_secs(61);
        assert_eq!(
            estimate.building_for(krpvk, later),
            Some(Duration::from_secs(61))
        );
        assert_eq!(estimate.building_for(kqvk, later), None, "another table");
        assert_eq!(write_text(krpvk, None), "KRPvK: writing the file");
        assert_eq!(
            write_text(krpvk, Some(WriteStep::ChoosingOrders)),
            "KRPvK: writing: choosing each stream's order of the pieces"
        );
        assert_eq!(
            write_text(krpvk, Some(WriteStep::BuildingGrammars)),
            "KRPvK: writing: building each stream's grammar"
        );
        assert_eq!(
            write_text(krpvk, Some(WriteStep::EncodingAtOnce { streams: 3 })),
            "KRPvK: writing: encoding its 3 streams"
        );
        assert_eq!(
            write_text(
                krpvk,
                Some(WriteStep::Encoding {
                    done: 2,
                    streams: 3
                })
            ),
            "KRPvK: writing: encoding stream 3 of 3"
        );
    }

    #[test]
    fn the_estimate_takes_the_largest_table_built_as_its_speed() {
        let names = ["KQvK", "KRvK", "KQvKR", "KRvKP"].map(|n| n.parse::<Material>().expect("m"));
        let [kqvk, krvk, kqvkr, krvkp] = names;
        let size = |m: Material| solved_positions(m) as f64;
        let mut estimate = Estimate::default();
        estimate.plan(&names);
        let start = Instant::now();
        assert_eq!(estimate.seconds_left(start), None, "nothing built yet");
        estimate.skipped(kqvk);
        let built = |material: Material, seconds: f64| Summary {
            material,
            positions: Layout::new(material).size(),
            stats: Default::default(),
            seconds,
            bytes: 0,
            path: PathBuf::new(),
        };
        estimate.started(krvk, start);
        estimate.finished(&built(krvk, 1.0));
        assert_eq!(
            estimate.seconds_left(start),
            None,
            "KRvK is under 1/64 of KRvKP"
        );
        // The table being built counts less the time it has had.
        estimate.started(kqvkr, start);
        estimate.finished(&built(kqvkr, 100.0));
        estimate.started(krvkp, start);
        estimate.started(krvkp, start + Duration::from_secs(9));
        let later = start + Duration::from_secs(3);
        let left = size(krvkp) * 100.0 / size(kqvkr) - 3.0;
        assert!((estimate.seconds_left(later).expect("known") - left).abs() < 1e-9);
        let much_later = start + Duration::from_secs(100_000);
        assert_eq!(estimate.seconds_left(much_later), Some(0.0));
    }

    #[test]
    fn progress_names_pawn_levels_only_where_there_are_some() {
        let kqvk: Material = "KQvK".parse().expect("material");
        let kpvk: Material = "KPvK".parse().expect("material");
        let seed = |level, levels, percent| Progress::Seed {
            level,
            levels,
            percent,
        };
        assert_eq!(progress_text(kqvk, seed(0, 1, 0)), "KQvK: seeding");
        assert_eq!(progress_text(kqvk, seed(0, 1, 40)), "KQvK: seeding 40 %");
        assert_eq!(
            progress_text(kpvk, seed(2, 6, 0)),
            "KPvK: seeding pawn level 3/6"
        );
        let ply = |level, levels, ply| Progress::Ply {
            level,
            levels,
            ply,
            decided: 12_345,
            undecided: 3_936_092_160,
        };
        assert_eq!(
            progress_text(kqvk, ply(0, 1, 7)),
            "KQvK: ply 7 (12.3 k decided, 3.94 G undecided)"
        );
        assert_eq!(
            progress_text(kpvk, ply(1, 6, 7)),
            "KPvK: pawn level 2/6, ply 7 (12.3 k decided, 3.94 G undecided)"
        );
        assert_eq!(
            [0, 9_999, 10_000, 999_949, 1_000_000, 45_600_000].map(count_text),
            ["0", "9999", "10.0 k", "999.9 k", "1.0 M", "45.6 M"]
        );
    }
}
