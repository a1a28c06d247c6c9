//! Building table files: dependency order, skipping finished tables,
//! atomic writes.
//!
//! [`generate`] takes the tables asked for, adds every missing sub-table,
//! and builds them in dependency order into one directory. A table whose
//! file already exists and opens cleanly with the same rule is skipped. Each
//! file is written under a temporary name in the same directory, flushed to
//! disk (fsync) and renamed, so a crash or Ctrl-C never leaves a partial
//! file under a final name. Sub-table values are read back from the files
//! already written (memory-mapped), so memory holds one table at a time.
//! Progress goes to a callback; the library prints nothing.

use std::{
    fs,
    io::{self, BufWriter},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use memmap2::Mmap;
use shakmaty::ByColor;
use thiserror::Error;

use crate::{
    format::{EXTENSION, OrderSearch, SideStats, TableFile, WriteStep, write_table},
    generate::{
        atomic::write_atomically,
        checkpoint::remove_checkpoint,
        solve::{Progress, SolveError, SolveOptions, solve},
        stats::stats,
        table::{Seeded, WithSubtables},
    },
    material::Material,
    probe::{ProbeError, Tablebase, open_file, table_path},
    value::Rule,
};

/// How to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// The draw rule.
    pub rule: Rule,
    /// The output directory (created if missing).
    pub out: PathBuf,
    /// Keep work arrays in a temporary file here instead of in RAM.
    pub work_dir: Option<PathBuf>,
    /// With `work_dir`: write a checkpoint of the table being solved
    /// there at most this often, and resume from one found there (see
    /// [`crate::generate::checkpoint_path`]).
    pub checkpoint_every: Option<Duration>,
    /// How hard the writer searches each stream's order of digits.
    pub order_search: OrderSearch,
}

/// What happened to one table.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The table.
    pub material: Material,
    /// Positions per side to move (index space).
    pub positions: u64,
    /// Counts and longest DTZ per side to move.
    pub stats: ByColor<SideStats>,
    /// Wall time to solve and write, in seconds.
    pub seconds: f64,
    /// File size in bytes.
    pub bytes: u64,
    /// The file.
    pub path: PathBuf,
}

/// Progress events.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// The plan: these tables will be built (in this order).
    Plan(&'a [Material]),
    /// A temporary file left by a build that no longer runs was removed.
    RemovedStale(&'a Path),
    /// A finished file was found intact and kept.
    Skipped(Material, &'a Path),
    /// A file was found but cannot be used (truncated, damaged); it is
    /// removed and rebuilt.
    Rebuilding(Material, &'a Path, &'a ProbeError),
    /// A table is being solved.
    Solving(Material, Progress),
    /// A table is being compressed and written (for a table with pawns,
    /// first marking the positions whose best capture reaches their WDL).
    Writing(Material),
    /// A step of writing a table, after [`Event::Writing`].
    WriteStep(Material, WriteStep),
    /// A table is done.
    Finished(&'a Summary),
}

/// Why generation stopped.
#[derive(Debug, Error)]
pub enum GenerateError {
    /// The output directory cannot be created or written.
    #[error("cannot write to {}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A file of another rule is in the way.
    #[error("{} exists but was built for rule {got}, not {expected}; use another --out directory", path.display())]
    RuleMismatch {
        /// The file.
        path: PathBuf,
        /// The rule asked for.
        expected: Rule,
        /// The file's rule.
        got: Rule,
    },
    /// Something other than a file stands where a table should be written.
    #[error("{} is not a file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The solver failed.
    #[error(transparent)]
    Solve(#[from] SolveError),
    /// The output directory is not usable as a tablebase.
    #[error(transparent)]
    Probe(#[from] ProbeError),
}

/// Build `targets` and their missing sub-tables into `options.out`.
///
/// # Errors
/// I/O errors (naming the path), a file of another rule in the way, or a
/// solver error.
pub fn generate(
    targets: &[Material],
    options: &GenerateOptions,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Result<Vec<Summary>, GenerateError> {
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Io { path, source }
    };
    fs::create_dir_all(&options.out).map_err(io_error(&options.out))?;
    let plan = Material::with_dependencies(targets);
    for stale in stale_temporary_files(&options.out, &plan).map_err(io_error(&options.out))? {
        fs::remove_file(&stale).map_err(io_error(&stale))?;
        on_event(Event::RemovedStale(&stale));
    }
    on_event(Event::Plan(&plan));
    let mut summaries = Vec::new();
    for material in plan {
        let path = table_path(&options.out, &material);
        match open_intact(&path) {
            Ok(existing) => {
                let got = existing.header().rule;
                if got != options.rule {
                    return Err(GenerateError::RuleMismatch {
                        path,
                        expected: options.rule,
                        got,
                    });
                }
                on_event(Event::Skipped(material, &path));
                continue;
            }
            Err(e) if path.is_file() => {
                on_event(Event::Rebuilding(material, &path, &e));
                // Nothing damaged stays under a final name, not even while
                // the table is rebuilt.
                fs::remove_file(&path).map_err(io_error(&path))?;
            }
            Err(_) if path.exists() => {
                return Err(GenerateError::NotAFile { path });
            }
            Err(_) => {}
        }
        let started = Instant::now();
        let solve_options = SolveOptions {
            rule: options.rule,
            work_dir: options.work_dir.clone(),
            checkpoint_every: options.checkpoint_every,
            ..SolveOptions::default()
        };
        // A fresh view of the directory per table: it sees the files just
        // written, the blocks it unpacks are freed with it, and it has
        // slots for this table's sub-tables only.
        let subtables = Tablebase::open_only(
            &options.out,
            options.rule,
            &Material::with_dependencies(&[material]),
        )?;
        let table = solve(material, &solve_options, &subtables, &|p| {
            on_event(Event::Solving(material, p));
        })?;
        let stats = stats(&table);
        on_event(Event::Writing(material));
        let store = WithSubtables {
            table: &table,
            subtables: &subtables,
        };
        let seeded = Seeded::new(&store)?;
        let temp = temporary_path(&path);
        let bytes = write_atomically(&path, &temp, |file| {
            write_table(
                &seeded,
                &stats,
                options.order_search,
                BufWriter::with_capacity(1 << 20, file),
                &|step| on_event(Event::WriteStep(material, step)),
            )?
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
        })
        .map_err(io_error(&path))?;
        if let Some(dir) = &options.work_dir {
            remove_checkpoint(dir, material, options.rule).map_err(io_error(dir))?;
        }
        let summary = Summary {
            material,
            positions: table.layout().size(),
            stats,
            seconds: started.elapsed().as_secs_f64(),
            bytes,
            path,
        };
        on_event(Event::Finished(&summary));
        summaries.push(summary);
    }
    Ok(summaries)
}

/// Open a finished table and check its file checksum: a file is kept only
/// if every byte is as written.
fn open_intact(path: &Path) -> Result<TableFile<Mmap>, ProbeError> {
    let file = open_file(path)?;
    file.verify_checksum()
        .map_err(|source| ProbeError::bad_file(path, source))?;
    Ok(file)
}

/// The temporary files (see [`write_atomically`]) of the tables of `plan`
/// in `dir` whose writing process no longer runs: what a killed or crashed
/// build left behind. Only the plan's: a workflow engine may be building
/// other tables into the same directory at the same time, on other
/// machines whose processes this one cannot see (`dtz50 plan`), while the
/// plan's own tables are either finished or this run's to build.
fn stale_temporary_files(dir: &Path, plan: &[Material]) -> io::Result<Vec<PathBuf>> {
    let names: Vec<String> = plan.iter().map(Material::to_string).collect();
    let mut stale = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some((table, pid)) = temporary_file_owner(name) else {
            continue;
        };
        if names.iter().any(|n| n == table) && pid != std::process::id() && !process_runs(pid) {
            stale.push(path);
        }
    }
    stale.sort();
    Ok(stale)
}

/// The table and process id in a temporary file's name,
/// `.KQvK.dtz50.tmp-1234`.
fn temporary_file_owner(name: &str) -> Option<(&str, u32)> {
    let (stem, pid) = name.rsplit_once(TEMP_MARK)?;
    let table = stem
        .strip_prefix('.')?
        .strip_suffix(EXTENSION)?
        .strip_suffix('.')?;
    if table.is_empty() {
        return None;
    }
    Some((table, pid.parse().ok()?))
}

/// Whether a process with this id runs (on Linux, where `/proc` says so;
/// elsewhere every process is taken to run, so nothing is removed).
fn process_runs(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

/// What precedes the process id in a temporary file's name.
const TEMP_MARK: &str = ".tmp-";

/// The temporary name this process writes `path` under:
/// `.KQvK.dtz50.tmp-1234` (see [`stale_temporary_files`]).
fn temporary_path(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("table");
    path.with_file_name(format!(".{name}{TEMP_MARK}{}", std::process::id()))
}
