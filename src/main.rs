//! The `dtz50` command line: parse arguments, call the library, print.

use std::{
    io::{self, BufRead, IsTerminal, Write},
    path::{Path, PathBuf},
    process::ExitCode,
    sync::Mutex,
};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand};
use dtz50::{
    adjudicate::{AdjudicateOptions, FivefoldRule, adjudicate_pgn, render_text},
    format::{EXTENSION, TableFile},
    generate::{Event, GenerateOptions, Summary, generate},
    material::{MAX_PIECES, Material},
    probe::{Tablebase, open_file},
    solve::{Progress, SideStats},
    table::StoredValues,
    value::{Outcome, Rule, Verdict},
    verify::deep_check,
};
use indicatif::{ProgressBar, ProgressStyle};
use memmap2::Mmap;
use serde_json::json;
use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, FromSetup, Position, Setup, fen::Fen, san::SanPlus,
};

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
    Generate {
        /// Tables to build, like KRPvKR (any side order, any case).
        materials: Vec<String>,
        /// Build every table of up to N pieces (3-5).
        #[arg(long, value_name = "N")]
        pieces: Option<usize>,
        /// Output directory.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Worker threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Draw rule: 50, 75 or none.
        #[arg(long, default_value = "50")]
        rule: Rule,
        /// Keep the solver's work arrays in a temporary file in this
        /// directory instead of RAM (for machines with little memory).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
    },
    /// Probe positions: WDL, DTZ, the verdict with the clock, the best move.
    Probe {
        /// Positions in FEN (the halfmove clock is field 5).
        fens: Vec<String>,
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Draw rule the tables were built for.
        #[arg(long, default_value = "50")]
        rule: Rule,
        /// Use this halfmove clock instead of the FEN's.
        #[arg(long)]
        halfmove: Option<u32>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Read FENs from standard input, one per line (implies --json).
        #[arg(long)]
        batch: bool,
    },
    /// The DTZ-optimal line from a position to the zeroing move or mate.
    Line {
        /// The position in FEN.
        fen: String,
        /// Table directory.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Draw rule the tables were built for.
        #[arg(long, default_value = "50")]
        rule: Rule,
        /// Go on through sub-tables until mate or a draw.
        #[arg(long)]
        to_mate: bool,
    },
    /// Header facts, counts and longest DTZ of a table file or directory.
    Info {
        /// A table file or a directory of them.
        path: PathBuf,
    },
    /// Check table files: checksums and every block.
    Verify {
        /// A table file or a directory of them.
        path: PathBuf,
        /// Also recompute every position from its successors' stored
        /// values (sub-tables must be in the same directory).
        #[arg(long)]
        deep: bool,
    },
    /// Apply the draw rules and the tablebase verdict to games in a PGN file.
    Adjudicate {
        /// The PGN file.
        pgn: PathBuf,
        /// Table directory (verdicts are skipped if it does not exist).
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Draw rule the tables were built for.
        #[arg(long, default_value = "50")]
        rule: Rule,
        /// One JSON object per game.
        #[arg(long)]
        json: bool,
        /// Apply the 2014 fivefold rule (five consecutive repetitions).
        #[arg(long)]
        fivefold_2014: bool,
    },
}

/// `println!` that returns write errors (a closed pipe ends the run quietly).
macro_rules! say {
    ($($arg:tt)*) => {
        writeln!(io::stdout().lock(), $($arg)*)?
    };
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// Whether the error is stdout's reader having gone away (`dtz50 ... | head`).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

fn one_line(e: &anyhow::Error) -> String {
    e.chain()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Generate {
            materials,
            pieces,
            out,
            threads,
            rule,
            work_dir,
        } => {
            if let Some(n) = threads {
                if n == 0 {
                    bail!("--threads must be at least 1");
                }
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build_global()
                    .context("cannot start worker threads")?;
            }
            run_generate(&materials, pieces, out, rule, work_dir)
        }
        Command::Probe {
            fens,
            tables,
            rule,
            halfmove,
            json,
            batch,
        } => run_probe(&fens, &tables, rule, halfmove, json || batch, batch),
        Command::Line {
            fen,
            tables,
            rule,
            to_mate,
        } => run_line(&fen, &tables, rule, to_mate),
        Command::Info { path } => run_info(&path),
        Command::Verify { path, deep } => run_verify(&path, deep),
        Command::Adjudicate {
            pgn,
            tables,
            rule,
            json,
            fivefold_2014,
        } => run_adjudicate(&pgn, &tables, rule, json, fivefold_2014),
    }
}

fn run_generate(
    names: &[String],
    pieces: Option<usize>,
    out: PathBuf,
    rule: Rule,
    work_dir: Option<PathBuf>,
) -> Result<ExitCode> {
    let mut targets = Vec::new();
    for name in names {
        targets.push(name.parse::<Material>()?);
    }
    if let Some(n) = pieces {
        if !(3..=MAX_PIECES).contains(&n) {
            bail!("--pieces {n}: tables have 3 to {MAX_PIECES} pieces");
        }
        targets.extend(Material::all_up_to(n));
    }
    if targets.is_empty() {
        bail!("nothing to generate: name tables (like KRvK) or give --pieces N");
    }
    let options = GenerateOptions {
        rule,
        out,
        work_dir,
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
            Event::Skipped(material, path) => {
                self.println(&format!(
                    "{material}: already built ({}), skipped",
                    path.display()
                ));
                self.advance();
            }
            Event::Rebuilding(material, path, reason) => {
                self.println(&format!(
                    "{material}: {} is unusable ({reason}), rebuilding",
                    path.display()
                ));
            }
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

fn progress_text(material: Material, progress: Progress) -> String {
    match progress {
        Progress::Seed { level, levels } => {
            format!("{material}: seeding pawn level {}/{levels}", level + 1)
        }
        Progress::Ply { level, levels, ply } => {
            format!("{material}: level {}/{levels}, ply {ply}", level + 1)
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

fn parse_fen(text: &str) -> Result<Chess> {
    let fen: Fen = text
        .trim()
        .parse()
        .map_err(|e| anyhow!("bad FEN '{}': {e}", text.trim()))?;
    fen.into_position(CastlingMode::Standard)
        .map_err(|e| anyhow!("illegal position '{}': {e}", text.trim()))
}

fn run_probe(
    fens: &[String],
    dir: &Path,
    rule: Rule,
    halfmove: Option<u32>,
    json: bool,
    batch: bool,
) -> Result<ExitCode> {
    let tables = open_tables(dir, rule)?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut answer = |fen: &str, out: &mut dyn Write| -> Result<()> {
        match probe_one(&tables, fen, halfmove) {
            Ok(report) => {
                if json {
                    writeln!(out, "{}", report.json())?;
                } else {
                    writeln!(out, "{}", report.text(rule))?;
                }
            }
            Err(e) => {
                failed = true;
                if json {
                    writeln!(
                        out,
                        "{}",
                        json!({ "fen": fen.trim(), "error": one_line(&e) })
                    )?;
                } else {
                    out.flush()?;
                    eprintln!("error: {}", one_line(&e));
                }
            }
        }
        Ok(())
    };
    if batch {
        for line in io::stdin().lock().lines() {
            let line = line.context("reading standard input")?;
            if !line.trim().is_empty() {
                answer(&line, &mut out)?;
            }
        }
    } else {
        if fens.is_empty() {
            bail!("no position: give a FEN or use --batch");
        }
        for fen in fens {
            answer(fen, &mut out)?;
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn open_tables(dir: &Path, rule: Rule) -> Result<Tablebase> {
    if !dir.is_dir() {
        bail!(
            "table directory {} does not exist (run dtz50 generate first)",
            dir.display()
        );
    }
    Ok(Tablebase::open(dir, rule)?)
}

struct ProbeReport {
    fen: String,
    material: Material,
    verdict: Verdict,
    best: Option<String>,
}

fn probe_one(tables: &Tablebase, fen: &str, halfmove: Option<u32>) -> Result<ProbeReport> {
    let pos = parse_fen(fen)?;
    let clock = halfmove.unwrap_or(pos.halfmoves());
    let verdict = tables.probe_with_clock(&pos, clock)?;
    let material = Material::from_board(pos.board()).normalized();
    let with_clock = pos_with_clock(&pos, clock)?;
    let best = tables
        .best_moves(&with_clock)?
        .first()
        .map(|m| SanPlus::from_move(pos.clone(), m.mv).to_string());
    Ok(ProbeReport {
        fen: fen.trim().to_owned(),
        material,
        verdict,
        best,
    })
}

fn pos_with_clock(pos: &Chess, clock: u32) -> Result<Chess> {
    let setup = Setup {
        halfmoves: clock,
        ..pos.to_setup(EnPassantMode::Legal)
    };
    Chess::from_setup(setup, CastlingMode::Standard).map_err(|e| anyhow!("illegal position: {e}"))
}

impl ProbeReport {
    fn json(&self) -> serde_json::Value {
        json!({
            "fen": self.fen,
            "material": self.material.to_string(),
            "wdl": self.verdict.wdl.to_i8(),
            "dtz": self.verdict.dtz.0,
            "halfmove": self.verdict.halfmove,
            "outcome": self.verdict.outcome.name(),
            "margin": self.verdict.margin,
            "best_move": self.best,
        })
    }

    fn text(&self, rule: Rule) -> String {
        let v = &self.verdict;
        let best = self
            .best
            .as_deref()
            .map_or(String::new(), |m| format!("; best move {m}"));
        format!(
            "{}: {}, DTZ {}; {}{best}",
            self.material,
            v.wdl.name(),
            v.dtz,
            clock_sentence(v, rule)
        )
    }
}

/// The verdict in a sentence, e.g. "win: 23 plies to a zeroing move, 63
/// left on the clock".
fn clock_sentence(v: &Verdict, rule: Rule) -> String {
    let plies = v.dtz.plies();
    let left = v.plies_left(rule);
    let left_text = left.map_or("no move-count rule".to_owned(), |l| {
        format!("{} left on the clock", l.max(0))
    });
    match (v.outcome, v.dtz.0) {
        (_, 0) => "draw".to_owned(),
        (Outcome::Win, _) => format!(
            "win: {} to a zeroing move or mate, {left_text}",
            plural(plies)
        ),
        (Outcome::Loss, _) => format!(
            "loss: {} to the opponent's zeroing move or mate, {left_text}",
            plural(plies)
        ),
        (_, d) if d > 0 => format!(
            "draw by the clock: the win needs {}, {left_text}",
            plural(plies)
        ),
        _ => format!(
            "draw by the clock: the loss takes {}, {left_text}",
            plural(plies)
        ),
    }
}

fn plural(plies: u16) -> String {
    if plies == 1 {
        "1 ply".to_owned()
    } else {
        format!("{plies} plies")
    }
}

fn run_line(fen: &str, dir: &Path, rule: Rule, to_mate: bool) -> Result<ExitCode> {
    let tables = open_tables(dir, rule)?;
    let mut pos = parse_fen(fen)?;
    let start = tables.probe(&pos)?;
    say!("{}", clock_sentence(&start, rule));
    let mut moves = Vec::new();
    loop {
        if pos.is_checkmate() {
            say!("checkmate");
            break;
        }
        let ranked = tables.best_moves(&pos)?;
        let Some(best) = ranked.first() else {
            say!("stalemate");
            break;
        };
        let verdict = tables.probe(&pos)?;
        if verdict.dtz.0 == 0 {
            say!("draw");
            break;
        }
        let san = SanPlus::from_move(pos.clone(), best.mv).to_string();
        let number = pos.fullmoves();
        let prefix = if pos.turn() == Color::White {
            format!("{number}.")
        } else {
            format!("{number}...")
        };
        pos.play_unchecked(best.mv);
        say!("{prefix} {san} (clock {})", pos.halfmoves());
        moves.push(san);
        if best.mv.is_zeroing() && !to_mate && !pos.is_checkmate() {
            say!("zeroing move reached");
            break;
        }
        if moves.len() > 2000 {
            bail!("line did not end after 2000 moves");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Table files under `path` (itself if it is a file).
fn table_files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        bail!("{} does not exist", path.display());
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

fn run_info(path: &Path) -> Result<ExitCode> {
    say!(
        "table\trule\tpositions/side\tbytes\twtm W/CW/D/BL/L\tbtm W/CW/D/BL/L\tlongest\tlongest at"
    );
    for file in table_files(path)? {
        let table = open_file(&file)?;
        say!("{}", info_line(&table));
    }
    Ok(ExitCode::SUCCESS)
}

fn info_line(table: &TableFile<Mmap>) -> String {
    let h = table.header();
    let (turn, stats) = if h.stats.black.longest() > h.stats.white.longest() {
        (Color::Black, &h.stats.black)
    } else {
        (Color::White, &h.stats.white)
    };
    let fen = stats.longest_at.map_or("-".to_owned(), |index| {
        let layout = table.layout();
        let setup = Setup {
            board: layout.board(&layout.decode(index)),
            turn,
            ..Setup::empty()
        };
        Fen::try_from_setup(setup).map_or("-".to_owned(), |f| f.to_string())
    });
    let counts = |s: &SideStats| {
        let [l, bl, d, cw, w] = s.counts;
        format!("{w}/{cw}/{d}/{bl}/{l}")
    };
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        h.material,
        h.rule,
        h.positions,
        table.len(),
        counts(&h.stats.white),
        counts(&h.stats.black),
        stats.longest(),
        fen
    )
}

fn run_verify(path: &Path, deep: bool) -> Result<ExitCode> {
    let mut failures = 0;
    for file in table_files(path)? {
        match verify_file(&file, deep) {
            Ok(note) => say!("{}: ok{note}", file.display()),
            Err(e) => {
                failures += 1;
                say!("{}: FAILED: {}", file.display(), one_line(&e));
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
        .map_err(|source| anyhow!("corrupt table {}: {source}", file.display()))?;
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

fn run_adjudicate(
    pgn: &Path,
    dir: &Path,
    rule: Rule,
    json: bool,
    fivefold_2014: bool,
) -> Result<ExitCode> {
    let file =
        std::fs::File::open(pgn).with_context(|| format!("cannot read {}", pgn.display()))?;
    let tables = if dir.is_dir() {
        Some(Tablebase::open(dir, rule)?)
    } else {
        None
    };
    let options = AdjudicateOptions {
        fivefold: if fivefold_2014 {
            FivefoldRule::Consecutive2014
        } else {
            FivefoldRule::Current
        },
    };
    let store = tables.as_ref().map(|t| t as &dyn StoredValues);
    let mut failed = false;
    for game in adjudicate_pgn(io::BufReader::new(file), store, &options) {
        match game {
            Ok(report) if json => say!("{}", serde_json::to_string(&report)?),
            Ok(report) => say!("{}", render_text(&report)),
            Err(e) => {
                failed = true;
                if json {
                    say!(
                        "{}",
                        json!({ "game": e.game().number, "error": e.to_string() })
                    );
                } else {
                    eprintln!("error: {e}");
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}
