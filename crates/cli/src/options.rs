//! What several subcommands share: the options for tables, rule and
//! threads, reading positions and table files, and printing.

use std::{
    io::{self, Write},
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use dtz50::{
    Material, Rule, Tablebase,
    format::EXTENSION,
    material::MAX_PIECES,
    probe::{DEFAULT_CACHE_BYTES, file_kind},
};
use shakmaty::{CastlingMode, Chess, fen::Fen};

/// `--tables DIR --rule R`: which tables to read.
#[derive(Debug, Args)]
pub struct TableOptions {
    /// Table directory.
    #[arg(long, default_value = "tables")]
    pub tables: PathBuf,
    /// Draw rule the tables were built for: 50, 75 or none.
    #[arg(long, default_value = "50")]
    pub rule: Rule,
}

impl TableOptions {
    /// The tablebase, or a one-line error if the directory is missing. It
    /// reads with positional reads and a bounded cache, so that a table
    /// file changed while a batch runs gives errors, never a crash.
    pub fn open(&self) -> Result<Tablebase> {
        match std::fs::metadata(&self.tables) {
            Ok(meta) if meta.is_dir() => {}
            Ok(meta) => bail!(
                "{} is {}, not a table directory",
                self.tables.display(),
                file_kind(&meta)
            ),
            Err(_) => bail!(
                "table directory {} does not exist (run dtz50 generate first)",
                self.tables.display()
            ),
        }
        Ok(Tablebase::open_positional(
            &self.tables,
            self.rule,
            DEFAULT_CACHE_BYTES,
        )?)
    }
}

/// `TABLE... --pieces N`: which tables to build (their sub-tables follow).
#[derive(Debug, Args)]
pub struct TargetOptions {
    /// Tables, like KRPvKR (any side order, any case); their sub-tables
    /// are included.
    materials: Vec<String>,
    /// Every table of up to N pieces (3-6).
    #[arg(long, value_name = "N")]
    pieces: Option<usize>,
}

impl TargetOptions {
    /// The tables named and those of `--pieces`; a one-line error if
    /// there are none (`verb`: what the command would do with them).
    pub fn targets(&self, verb: &str) -> Result<Vec<Material>> {
        let mut targets = Vec::new();
        for name in &self.materials {
            targets.push(name.parse::<Material>()?);
        }
        if let Some(n) = self.pieces {
            if !(3..=MAX_PIECES).contains(&n) {
                bail!("--pieces {n}: tables have 3 to {MAX_PIECES} pieces");
            }
            targets.extend(Material::all_up_to(n));
        }
        if targets.is_empty() {
            bail!("nothing to {verb}: name tables (like KRvK) or give --pieces N");
        }
        Ok(targets)
    }
}

/// `--threads N`: the size of the worker pool.
#[derive(Debug, Args)]
pub struct ThreadOptions {
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

impl ThreadOptions {
    /// Size the global worker pool, if asked to.
    pub fn apply(&self) -> Result<()> {
        if let Some(n) = self.threads {
            if n == 0 {
                bail!("--threads must be at least 1");
            }
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build_global()
                .context("cannot start worker threads")?;
        }
        Ok(())
    }
}

/// A position from FEN text, with a one-line error.
pub fn parse_fen(text: &str) -> Result<Chess> {
    let text = text.trim();
    // shakmaty saturates a clock too large for its field; say so instead,
    // as `--halfmove` does.
    if let Some(clock) = text.split_ascii_whitespace().nth(4)
        && clock.bytes().all(|b| b.is_ascii_digit())
        && let Err(e) = clock.parse::<u32>()
    {
        bail!("bad FEN '{text}': halfmove clock '{clock}': {e}");
    }
    let fen: Fen = text
        .parse()
        .map_err(|e| anyhow!("bad FEN '{}': {e}", text.trim()))?;
    fen.into_position(CastlingMode::Standard)
        .map_err(|e| anyhow!("illegal position '{}': {e}", text.trim()))
}

/// Table files under `path` (itself if it is a file), sorted.
pub fn table_files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        match std::fs::metadata(path) {
            Ok(meta) => bail!(
                "{} is {}, not a table file or directory",
                path.display(),
                file_kind(&meta)
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                bail!("{} does not exist", path.display())
            }
            Err(e) => bail!("cannot read {}: {e}", path.display()),
        }
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == EXTENSION))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("no .{EXTENSION} files in {}", path.display());
    }
    Ok(files)
}

/// An error and its causes on one line: "corrupt table X: wdl block 3 is
/// corrupt".
pub fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
}

/// One line to standard output; a write error (a closed pipe) is returned.
pub fn say(line: impl std::fmt::Display) -> Result<()> {
    writeln!(io::stdout().lock(), "{line}")?;
    Ok(())
}

/// How often, at most, a long command writing to a log rather than a
/// terminal prints where it is.
pub const LOG_EVERY: Duration = Duration::from_secs(60);

/// "about 3 h 5 min", "about 12 min", "under a minute".
pub fn duration_text(seconds: f64) -> String {
    let minutes = (seconds / 60.0).round() as u64;
    match minutes {
        0 => "under a minute".to_owned(),
        1..60 => format!("about {minutes} min"),
        _ => format!("about {} h {} min", minutes / 60, minutes % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_rounded_to_minutes() {
        assert_eq!(duration_text(29.0), "under a minute");
        assert_eq!(duration_text(31.0), "about 1 min");
        assert_eq!(duration_text(59.0 * 60.0), "about 59 min");
        assert_eq!(duration_text(3.0 * 3600.0 + 5.0 * 60.0), "about 3 h 5 min");
    }
}
