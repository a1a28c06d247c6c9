//! Engine probe workload (issue 14): cold random probes across many tables,
//! dtz50 beside shakmaty-syzygy, one new process per run.
//!
//! An engine probes tablebases from a fresh process, at random positions
//! spread over many tables, and most of those probes are the first touch of
//! some part of some file. This example measures that, not the hot-cache
//! loop of `benches/probe.rs`.
//!
//! # Positions
//!
//! Fixed-seed random legal positions (a splitmix64 generator in this file),
//! no castling rights, no en-passant square, halfmove clock 0, pawns on
//! ranks 2-7, the side not to move not in check (shakmaty's
//! `Chess::from_setup` rejects illegal setups; we draw again until one is
//! legal). For every position a coin decides whether the side named first
//! in the table name (`KRPvKR`: the side with the pawn) is White or Black,
//! and another coin decides the side to move, so both colour orientations
//! and both sides to move are probed.
//!
//! * `five`: KRBvKR, KQRvKR, KRRvKR, KRNvKR, KRPvKR, 40,000 positions each,
//!   shuffled together (200,000).
//! * `34`: all 35 tables of 3-4 pieces, 3,000 each, shuffled (105,000).
//!
//! # Runs
//!
//! Each (system, metric, set) is a new process: the parent re-executes
//! itself as `--child SYSTEM METRIC SET`. The child generates the positions
//! (not timed, before any table is opened), opens the tables, probes every
//! position in order and reports the mean time per probe over the first
//! 1,000, the first 10,000 and all probes (cumulative clocks read only at
//! those checkpoints), the peak resident set (`VmHWM`, which counts the
//! mapped table pages the process touched), the resident set before any
//! table was opened, the number of probes that returned an error (they do
//! not stop the run) and a checksum of the values. The parent runs the
//! children in a fixed order (per set, per metric: dtz50 then syzygy, so
//! each pair is adjacent in time) and prints Markdown tables.
//!
//! Before the first child the parent reads every file of both table
//! directories once, so both systems start with the files in the OS page
//! cache: the processes are cold (nothing mapped, nothing opened), the page
//! cache is warm. A cold page cache would need root (`drop_caches`).
//!
//! * dtz50: `Tablebase::open(dir, Rule::Fifty)`, `probe_wdl`, `probe_dtz`.
//! * syzygy: `shakmaty_syzygy::Tablebase::with_mmap_filesystem` and
//!   `add_directory`. Metric `dtz` is `probe_dtz`. Metric `wdl` is
//!   `probe_wdl_after_zeroing`, the probe that reads only the WDL tables
//!   (what an engine's search does; with the clock at 0 it is the exact
//!   five-valued WDL). shakmaty-syzygy 0.28's `probe_wdl` is not a WDL-table
//!   probe: it probes DTZ and converts it with the halfmove clock, so its
//!   cost is the `dtz` row.
//!
//! # Agreement
//!
//! `--check` loads both systems in one process and compares, on the first
//! 20,000 positions of each set: WDL exactly (dtz50 against both of
//! syzygy's WDL probes) and DTZ: exactly where syzygy says
//! `MaybeRounded::Precise`, and for `Rounded(d)` that dtz50's value is `d`
//! or one ply further from zero (the rounding shakmaty-syzygy documents).
//! One more case is counted apart: for the side to move that a Syzygy DTZ
//! file does not store, shakmaty-syzygy 0.28 searches one ply and keeps the
//! first best value on a tie, so it can answer `Precise(d)` where the best
//! move's value was `Rounded(d)` and the truth is one ply further from zero;
//! such a `Precise` value that differs from dtz50's is checked as rounded
//! (with the ply-exact files of `../shared/syzygy/3-4` every value is
//! `Precise` and must be equal).
//!
//! # Running
//!
//! ```sh
//! cargo run --release -- generate --pieces 4 --out /work/bench-tables
//! cargo run --release -- generate KRBvKR KQRvKR KRRvKR KRNvKR KRPvKR --out /work/bench-tables
//! cargo run --release --example engine_workload -- --dtz50 /work/bench-tables
//! cargo run --release --example engine_workload -- --dtz50 /work/bench-tables --check
//! ```
//!
//! Options: `--dtz50 DIR` (default `tables`), `--syzygy DIR` (default
//! `../shared/syzygy/official`), `--set five|34|both`, `--metric
//! wdl|dtz|both`, `--seed N` (default 14), `--per-table N` (positions per
//! table, overriding 40,000 and 3,000, for quick runs), `--check`,
//! `--long N`.
//!
//! # A long run
//!
//! `--long 10000000` probes ten million fresh random positions spread over
//! all 40 tables (WDL, and DTZ every fourth probe) in this one process,
//! first through positional reads with the default bounded page cache
//! (`Tablebase::open_positional`, 64 MiB), then through memory maps (with
//! `Tablebase::open`'s cache of decoded DTZ blocks, 4 MiB), and prints the
//! resident set and the caches' bytes every tenth of the run: what the
//! probe keeps must stay within its bounds.

use std::{
    fmt,
    fs::File,
    hint::black_box,
    io,
    num::NonZeroU32,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    str::FromStr,
    time::{Duration, Instant},
};

use dtz50::{Material, Rule, Tablebase, probe::DEFAULT_CACHE_BYTES};
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Piece, Position, Role,
    Setup, Square, fen::Fen,
};
use shakmaty_syzygy::MaybeRounded;

/// The 5-piece tables of the `five` set.
const FIVE: [&str; 5] = ["KRBvKR", "KQRvKR", "KRRvKR", "KRNvKR", "KRPvKR"];
/// Positions per table in the `five` set.
const FIVE_PER_TABLE: usize = 40_000;
/// Positions per table in the `34` set.
const SMALL_PER_TABLE: usize = 3_000;
/// The probe counts at which the clock is read.
const CHECKPOINTS: [usize; 2] = [1_000, 10_000];
/// Positions per set that `--check` compares.
const CHECK_POSITIONS: usize = 20_000;
/// The default seed.
const DEFAULT_SEED: u64 = 14;

/// A set of positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Set {
    /// Five 5-piece tables.
    Five,
    /// Every 3-4 piece table.
    Small,
}

/// What is probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    /// WDL with the clock at zero.
    Wdl,
    /// DTZ.
    Dtz,
}

/// Who is probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum System {
    /// This crate.
    Dtz50,
    /// shakmaty-syzygy on the official Syzygy files.
    Syzygy,
}

impl Set {
    /// Both sets, in the order they run.
    const ALL: [Set; 2] = [Set::Five, Set::Small];
    /// The name on the command line and in the tables.
    fn name(self) -> &'static str {
        match self {
            Set::Five => "five",
            Set::Small => "34",
        }
    }
}

impl Metric {
    /// Both metrics, in the order they run.
    const ALL: [Metric; 2] = [Metric::Wdl, Metric::Dtz];
    /// The name on the command line and in the tables.
    fn name(self) -> &'static str {
        match self {
            Metric::Wdl => "wdl",
            Metric::Dtz => "dtz",
        }
    }
}

impl System {
    /// Both systems, in the order they run.
    const ALL: [System; 2] = [System::Dtz50, System::Syzygy];
    /// The name on the command line and in the tables.
    fn name(self) -> &'static str {
        match self {
            System::Dtz50 => "dtz50",
            System::Syzygy => "syzygy",
        }
    }
}

impl FromStr for Set {
    type Err = ();
    fn from_str(s: &str) -> Result<Set, ()> {
        Set::ALL.into_iter().find(|x| x.name() == s).ok_or(())
    }
}

impl FromStr for Metric {
    type Err = ();
    fn from_str(s: &str) -> Result<Metric, ()> {
        Metric::ALL.into_iter().find(|x| x.name() == s).ok_or(())
    }
}

impl FromStr for System {
    type Err = ();
    fn from_str(s: &str) -> Result<System, ()> {
        System::ALL.into_iter().find(|x| x.name() == s).ok_or(())
    }
}

/// The command line.
#[derive(Debug, Clone)]
struct Args {
    /// dtz50's table directory.
    dtz50: PathBuf,
    /// The Syzygy table directory.
    syzygy: PathBuf,
    /// Sets to run.
    sets: Vec<Set>,
    /// Metrics to run.
    metrics: Vec<Metric>,
    /// Seed of the positions.
    seed: u64,
    /// Positions per table, if not the default.
    per_table: Option<usize>,
    /// What to do.
    mode: Mode,
}

/// What this process does.
#[derive(Debug, Clone, Copy)]
enum Mode {
    /// Run every child and print the tables.
    Parent,
    /// Compare the two systems' values.
    Check,
    /// One measured run.
    Child(System, Metric, Set),
    /// A long run: this many probes over every table of both sets.
    Long(u64),
}

/// A bad command line, printed on one line.
#[derive(Debug)]
struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (see --help)", self.0)
    }
}

/// `--help`.
const HELP: &str =
    "engine_workload: cold random probes over many tables, dtz50 beside shakmaty-syzygy
usage: engine_workload [--dtz50 DIR] [--syzygy DIR] [--set five|34|both] [--metric wdl|dtz|both]
                       [--seed N] [--per-table N] [--check | --long N]";

/// Parses the arguments after the program name.
fn parse_args(mut raw: impl Iterator<Item = String>) -> Result<Option<Args>, UsageError> {
    let mut args = Args {
        dtz50: PathBuf::from("tables"),
        syzygy: PathBuf::from("../shared/syzygy/official"),
        sets: Set::ALL.to_vec(),
        metrics: Metric::ALL.to_vec(),
        seed: DEFAULT_SEED,
        per_table: None,
        mode: Mode::Parent,
    };
    let mut check = false;
    let mut child = None;
    let mut long = None;
    while let Some(flag) = raw.next() {
        let mut value = |what: &str| {
            raw.next()
                .ok_or_else(|| UsageError(format!("{flag} needs {what}")))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--dtz50" => args.dtz50 = value("a directory")?.into(),
            "--syzygy" => args.syzygy = value("a directory")?.into(),
            "--set" => {
                let v = value("five, 34 or both")?;
                args.sets = match v.as_str() {
                    "both" => Set::ALL.to_vec(),
                    s => vec![s.parse().map_err(|()| {
                        UsageError(format!("--set {s}: expected five, 34 or both"))
                    })?],
                };
            }
            "--metric" => {
                let v = value("wdl, dtz or both")?;
                args.metrics = match v.as_str() {
                    "both" => Metric::ALL.to_vec(),
                    s => vec![s.parse().map_err(|()| {
                        UsageError(format!("--metric {s}: expected wdl, dtz or both"))
                    })?],
                };
            }
            "--seed" => {
                let v = value("a number")?;
                args.seed = v
                    .parse()
                    .map_err(|_| UsageError(format!("--seed {v}: expected an unsigned number")))?;
            }
            "--per-table" => {
                let v = value("a number")?;
                match v.parse::<usize>() {
                    Ok(n) if n > 0 => args.per_table = Some(n),
                    _ => {
                        return Err(UsageError(format!(
                            "--per-table {v}: expected a number > 0"
                        )));
                    }
                }
            }
            "--check" => check = true,
            "--long" => {
                let v = value("a number")?;
                long =
                    Some(v.parse::<u64>().map_err(|_| {
                        UsageError(format!("--long {v}: expected an unsigned number"))
                    })?);
            }
            "--child" => {
                let system = value("SYSTEM METRIC SET")?;
                let metric = value("SYSTEM METRIC SET")?;
                let set = value("SYSTEM METRIC SET")?;
                let bad = || UsageError(format!("--child {system} {metric} {set}: bad run"));
                child = Some(Mode::Child(
                    system.parse().map_err(|()| bad())?,
                    metric.parse().map_err(|()| bad())?,
                    set.parse().map_err(|()| bad())?,
                ));
            }
            other => return Err(UsageError(format!("unknown argument '{other}'"))),
        }
    }
    if let Some(n) = long {
        if check || child.is_some() {
            return Err(UsageError("--long excludes --check and --child".into()));
        }
        args.mode = Mode::Long(n);
        return Ok(Some(args));
    }
    args.mode = match (check, child) {
        (true, Some(_)) => return Err(UsageError("--check and --child exclude each other".into())),
        (true, None) => Mode::Check,
        (false, Some(child)) => child,
        (false, None) => Mode::Parent,
    };
    Ok(Some(args))
}

/// splitmix64: a tiny, fast, well-mixed deterministic generator.
struct SplitMix64(u64);

impl SplitMix64 {
    /// The next 64 random bits.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-50 here).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    /// A fair coin.
    fn coin(&mut self) -> bool {
        self.next() >> 63 == 1
    }
}

/// The tables of a set.
fn materials(set: Set) -> Result<Vec<Material>, String> {
    match set {
        Set::Five => FIVE
            .iter()
            .map(|s| s.parse::<Material>().map_err(|e| e.to_string()))
            .collect(),
        Set::Small => {
            let all: Vec<Material> = Material::all_up_to(4)
                .into_iter()
                .filter(|m| m.total() >= 3)
                .collect();
            let threes = all.iter().filter(|m| m.total() == 3).count();
            if all.len() != 35 || threes != 5 {
                return Err(format!(
                    "Material::all_up_to(4) gave {} tables of 3-4 pieces ({threes} of 3), expected 35 (5)",
                    all.len()
                ));
            }
            Ok(all)
        }
    }
}

/// One random legal position of `material`, either colour orientation,
/// either side to move.
fn random_position(rng: &mut SplitMix64, material: &Material) -> Chess {
    let pieces = material.pieces();
    loop {
        let flip = rng.coin();
        let turn = if rng.coin() {
            Color::White
        } else {
            Color::Black
        };
        let mut board = Board::empty();
        for &Piece { color, role } in &pieces {
            let color = if flip { !color } else { color };
            let square = loop {
                // Pawns on ranks 2-7 (squares a2..h7), others anywhere.
                let square = if role == Role::Pawn {
                    Square::new(8 + rng.below(48) as u32)
                } else {
                    Square::new(rng.below(64) as u32)
                };
                if board.piece_at(square).is_none() {
                    break square;
                }
            };
            board.set_piece_at(square, Piece { color, role });
        }
        let setup = Setup {
            board,
            promoted: Bitboard::EMPTY,
            pockets: None,
            turn,
            castling_rights: Bitboard::EMPTY,
            ep_square: None,
            remaining_checks: None,
            halfmoves: 0,
            fullmoves: NonZeroU32::MIN,
        };
        if let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) {
            return pos;
        }
    }
}

/// The positions of a set, shuffled; the same for every process with the
/// same seed and size.
fn positions(set: Set, seed: u64, per_table: Option<usize>) -> Result<Vec<Chess>, String> {
    let per_table = per_table.unwrap_or(match set {
        Set::Five => FIVE_PER_TABLE,
        Set::Small => SMALL_PER_TABLE,
    });
    let salt = match set {
        Set::Five => 0x5555_5555,
        Set::Small => 0x3434_3434,
    };
    let mut rng = SplitMix64(seed ^ salt);
    let mut out = Vec::new();
    for material in materials(set)? {
        for _ in 0..per_table {
            out.push(random_position(&mut rng, &material));
        }
    }
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i + 1));
    }
    Ok(out)
}

/// A field of `/proc/self/status` in kB (`VmHWM`, `VmRSS`).
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// What one child measured.
#[derive(Debug, Clone, Default)]
struct Measurement {
    probes: usize,
    /// Cumulative time at 1,000, at 10,000 and at the end.
    elapsed: [Duration; 3],
    open: Duration,
    peak_kb: u64,
    base_kb: u64,
    errors: usize,
    checksum: i64,
}

impl Measurement {
    /// The line a child prints and the parent parses.
    fn line(&self) -> String {
        format!(
            "RESULT probes={} t1000_ns={} t10000_ns={} tall_ns={} open_ns={} peak_kb={} base_kb={} errors={} checksum={}",
            self.probes,
            self.elapsed[0].as_nanos(),
            self.elapsed[1].as_nanos(),
            self.elapsed[2].as_nanos(),
            self.open.as_nanos(),
            self.peak_kb,
            self.base_kb,
            self.errors,
            self.checksum
        )
    }

    /// Inverse of [`Measurement::line`].
    fn parse(line: &str) -> Option<Measurement> {
        let mut m = Measurement::default();
        for field in line.strip_prefix("RESULT ")?.split(' ') {
            let (key, value) = field.split_once('=')?;
            let nanos = |v: &str| v.parse().ok().map(Duration::from_nanos);
            match key {
                "probes" => m.probes = value.parse().ok()?,
                "t1000_ns" => m.elapsed[0] = nanos(value)?,
                "t10000_ns" => m.elapsed[1] = nanos(value)?,
                "tall_ns" => m.elapsed[2] = nanos(value)?,
                "open_ns" => m.open = nanos(value)?,
                "peak_kb" => m.peak_kb = value.parse().ok()?,
                "base_kb" => m.base_kb = value.parse().ok()?,
                "errors" => m.errors = value.parse().ok()?,
                "checksum" => m.checksum = value.parse().ok()?,
                _ => return None,
            }
        }
        Some(m)
    }

    /// Mean µs per probe over the first `k`-th span, if it is complete.
    fn mean_us(&self, k: usize) -> Option<f64> {
        let n = CHECKPOINTS.get(k).copied().unwrap_or(self.probes);
        (n <= self.probes && n > 0).then(|| self.elapsed[k].as_secs_f64() * 1e6 / n as f64)
    }
}

/// Probes every position in order, reading the clock only at the
/// checkpoints. `probe` gives a value to add to the checksum, or `None` for
/// an error.
fn measure(positions: &[Chess], mut probe: impl FnMut(&Chess) -> Option<i64>) -> Measurement {
    let n = positions.len();
    let bounds = [CHECKPOINTS[0].min(n), CHECKPOINTS[1].min(n), n];
    let mut m = Measurement {
        probes: n,
        ..Measurement::default()
    };
    let start = Instant::now();
    let mut i = 0;
    for (k, &bound) in bounds.iter().enumerate() {
        while i < bound {
            match probe(black_box(&positions[i])) {
                Some(v) => m.checksum = m.checksum.wrapping_add(v),
                None => m.errors += 1,
            }
            i += 1;
        }
        m.elapsed[k] = start.elapsed();
    }
    m.checksum = black_box(m.checksum);
    m
}

/// One measured run, in this process.
fn child(args: &Args, system: System, metric: Metric, set: Set) -> Result<Measurement, String> {
    let positions = positions(set, args.seed, args.per_table)?;
    let base_kb = status_kb("VmRSS").unwrap_or(0);
    let mut m = match system {
        System::Dtz50 => {
            let start = Instant::now();
            let tables = Tablebase::open(&args.dtz50, Rule::Fifty).map_err(|e| e.to_string())?;
            let open = start.elapsed();
            let mut m = match metric {
                Metric::Wdl => measure(&positions, |pos| {
                    tables.probe_wdl(pos).ok().map(|w| i64::from(w.to_i8()))
                }),
                Metric::Dtz => measure(&positions, |pos| {
                    tables.probe_dtz(pos).ok().map(|d| i64::from(d.0))
                }),
            };
            m.open = open;
            m
        }
        System::Syzygy => {
            let start = Instant::now();
            let tables = open_syzygy(&args.syzygy)?;
            let open = start.elapsed();
            let mut m = match metric {
                Metric::Wdl => measure(&positions, |pos| {
                    tables
                        .probe_wdl_after_zeroing(pos)
                        .ok()
                        .map(|w| i64::from(w as i32))
                }),
                Metric::Dtz => measure(&positions, |pos| {
                    tables
                        .probe_dtz(pos)
                        .ok()
                        .map(|d| i64::from(d.ignore_rounding().0))
                }),
            };
            m.open = open;
            m
        }
    };
    m.base_kb = base_kb;
    m.peak_kb = status_kb("VmHWM").unwrap_or(0);
    Ok(m)
}

/// shakmaty-syzygy over a directory, through memory maps.
fn open_syzygy(dir: &Path) -> Result<shakmaty_syzygy::Tablebase<Chess>, String> {
    // Safety: the official Syzygy files are read-only reference files that
    // nothing modifies or truncates while the benchmark runs (the contract
    // of shakmaty-syzygy's memory-mapped filesystem).
    let mut tables = unsafe { shakmaty_syzygy::Tablebase::<Chess>::with_mmap_filesystem() };
    let added = tables
        .add_directory(dir)
        .map_err(|e| format!("syzygy tables in {}: {e}", dir.display()))?;
    if added == 0 {
        return Err(format!("no syzygy tables in {}", dir.display()));
    }
    Ok(tables)
}

/// Reads every file of `dir` once, so that it sits in the page cache.
fn warm_page_cache(dir: &Path) -> Result<u64, String> {
    let mut bytes = 0;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() {
            let mut file = File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            bytes += io::copy(&mut file, &mut io::sink())
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(bytes)
}

/// Runs one child process and parses its result line.
fn spawn(args: &Args, system: System, metric: Metric, set: Set) -> Result<Measurement, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut command = Command::new(exe);
    command
        .args(["--child", system.name(), metric.name(), set.name()])
        .arg("--dtz50")
        .arg(&args.dtz50)
        .arg("--syzygy")
        .arg(&args.syzygy)
        .args(["--seed", &args.seed.to_string()]);
    if let Some(n) = args.per_table {
        command.args(["--per-table", &n.to_string()]);
    }
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run child: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "child {} {} {} failed ({})",
            system.name(),
            metric.name(),
            set.name(),
            output.status
        ));
    }
    stdout
        .lines()
        .find_map(Measurement::parse)
        .ok_or_else(|| format!("child printed no result: {stdout}"))
}

/// `12.345` or `-` when there were too few probes.
fn us(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

/// A ratio, or `-`.
fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "-".into(),
    }
}

/// kB to MiB.
fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

/// Runs every child in order and prints the tables.
fn parent(args: &Args) -> Result<(), String> {
    for dir in [&args.dtz50, &args.syzygy] {
        let bytes = warm_page_cache(dir)?;
        eprintln!("page cache: read {bytes} bytes of {}", dir.display());
    }
    let mut results = Vec::new();
    for &set in &args.sets {
        for &metric in &args.metrics {
            let mut pair = Vec::new();
            for system in System::ALL {
                eprintln!("run: {} {} {}", set.name(), metric.name(), system.name());
                let m = spawn(args, system, metric, set)?;
                eprintln!("  {}", m.line());
                pair.push(m);
            }
            results.push((set, metric, pair));
        }
    }
    println!(
        "| set | metric | system | first 1,000 µs | first 10,000 µs | all µs | peak RSS MiB | RSS over baseline MiB | errors | checksum |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (set, metric, pair) in &results {
        for (system, m) in System::ALL.iter().zip(pair) {
            println!(
                "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {} | {} |",
                set.name(),
                metric.name(),
                system.name(),
                us(m.mean_us(0)),
                us(m.mean_us(1)),
                us(m.mean_us(2)),
                mib(m.peak_kb),
                mib(m.peak_kb.saturating_sub(m.base_kb)),
                m.errors,
                m.checksum
            );
        }
    }
    println!();
    println!(
        "| set | metric | dtz50/syzygy first 1,000 | first 10,000 | all | peak RSS | RSS over baseline |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (set, metric, pair) in &results {
        let (a, b) = (&pair[0], &pair[1]);
        let over = |m: &Measurement| Some(m.peak_kb.saturating_sub(m.base_kb) as f64);
        println!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            set.name(),
            metric.name(),
            ratio(a.mean_us(0), b.mean_us(0)),
            ratio(a.mean_us(1), b.mean_us(1)),
            ratio(a.mean_us(2), b.mean_us(2)),
            ratio(Some(a.peak_kb as f64), Some(b.peak_kb as f64)),
            ratio(over(a), over(b)),
        );
    }
    let errors: usize = results
        .iter()
        .flat_map(|(_, _, pair)| pair)
        .map(|m| m.errors)
        .sum();
    if errors > 0 {
        eprintln!("WARNING: {errors} probes returned an error");
    }
    Ok(())
}

/// Counts of `--check` for one set.
#[derive(Debug, Default)]
struct CheckCounts {
    positions: usize,
    errors: usize,
    wdl_mismatch: usize,
    wdl_probe_mismatch: usize,
    precise: usize,
    precise_mismatch: usize,
    precise_tie: usize,
    precise_tie_mismatch: usize,
    rounded: usize,
    rounded_exact: usize,
    rounded_mismatch: usize,
}

impl CheckCounts {
    fn mismatches(&self) -> usize {
        self.wdl_mismatch
            + self.wdl_probe_mismatch
            + self.precise_mismatch
            + self.precise_tie_mismatch
            + self.rounded_mismatch
    }
}

/// Whether syzygy's `Precise(s)` for `pos` may hide a rounded value:
/// shakmaty-syzygy 0.28 resolves the side that a DTZ table does not store by
/// a 1-ply search that keeps the first best value on a tie, so a `Precise`
/// value can stand for a move whose value is `Rounded` to the same number
/// (and is really one ply further from zero).
fn ties_with_rounded(theirs: &shakmaty_syzygy::Tablebase<Chess>, pos: &Chess, s: i32) -> bool {
    pos.legal_moves()
        .into_iter()
        .filter(|m| !m.is_zeroing())
        .any(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            match theirs.probe_dtz(&after) {
                Ok(MaybeRounded::Rounded(child)) => {
                    let v = -child.0;
                    v + v.signum() == s
                }
                _ => false,
            }
        })
}

/// Compares the two systems on the first positions of each set.
fn check(args: &Args) -> Result<bool, String> {
    let ours = Tablebase::open(&args.dtz50, Rule::Fifty).map_err(|e| e.to_string())?;
    let theirs = open_syzygy(&args.syzygy)?;
    let mut clean = true;
    for &set in &args.sets {
        let mut positions = positions(set, args.seed, args.per_table)?;
        positions.truncate(CHECK_POSITIONS);
        let mut c = CheckCounts {
            positions: positions.len(),
            ..CheckCounts::default()
        };
        let mut examples = Vec::new();
        for pos in &positions {
            let fen = || Fen::from_position(pos, EnPassantMode::Legal).to_string();
            let (Ok(wdl), Ok(dtz), Ok(swdl), Ok(swdl_probe), Ok(sdtz)) = (
                ours.probe_wdl(pos),
                ours.probe_dtz(pos),
                theirs.probe_wdl_after_zeroing(pos),
                theirs.probe_wdl(pos),
                theirs.probe_dtz(pos),
            ) else {
                c.errors += 1;
                if examples.len() < 5 {
                    examples.push(format!("error: {}", fen()));
                }
                continue;
            };
            let mut bad = false;
            if i32::from(wdl.to_i8()) != swdl as i32 {
                c.wdl_mismatch += 1;
                bad = true;
            }
            if swdl_probe.unambiguous() != Some(swdl) {
                c.wdl_probe_mismatch += 1;
                bad = true;
            }
            let d = i32::from(dtz.0);
            match sdtz {
                MaybeRounded::Precise(s) if d != s.0 && ties_with_rounded(&theirs, pos, s.0) => {
                    c.precise_tie += 1;
                    if d != s.0 + s.0.signum() {
                        c.precise_tie_mismatch += 1;
                        bad = true;
                    }
                }
                MaybeRounded::Precise(s) => {
                    c.precise += 1;
                    if d != s.0 {
                        c.precise_mismatch += 1;
                        bad = true;
                    }
                }
                MaybeRounded::Rounded(s) => {
                    c.rounded += 1;
                    if d == s.0 {
                        c.rounded_exact += 1;
                    } else if d != s.0 + s.0.signum() || s.0 == 0 {
                        c.rounded_mismatch += 1;
                        bad = true;
                    }
                }
            }
            if bad && examples.len() < 5 {
                examples.push(format!(
                    "{}: dtz50 {wdl:?} {d}, syzygy {swdl:?} {swdl_probe:?} {sdtz:?}",
                    fen()
                ));
            }
        }
        println!(
            "check {}: {} positions, {} with a probe error; WDL mismatches {} (probe_wdl_after_zeroing), {} (probe_wdl); DTZ precise {} (mismatches {}), precise from a tie with a rounded move {} (not one ply further {}), rounded {} (equal {}, one ply further {}, inconsistent {})",
            set.name(),
            c.positions,
            c.errors,
            c.wdl_mismatch,
            c.wdl_probe_mismatch,
            c.precise,
            c.precise_mismatch,
            c.precise_tie,
            c.precise_tie_mismatch,
            c.rounded,
            c.rounded_exact,
            c.rounded - c.rounded_exact - c.rounded_mismatch,
            c.rounded_mismatch,
        );
        if c.mismatches() > 0 || c.errors > 0 {
            clean = false;
            println!(
                "!!! MISMATCH in set {}: {} mismatches, {} errors !!!",
                set.name(),
                c.mismatches(),
                c.errors
            );
            for e in &examples {
                println!("    {e}");
            }
        }
    }
    Ok(clean)
}

/// Parent, child or check, by the arguments; exit 2 on a bad command line.
/// `--long N`: N probes (WDL, and DTZ every fourth) at fresh random
/// positions over every table of both sets, through positional reads and
/// the default bounded cache, then through memory maps (with the default
/// cache of decoded DTZ blocks); prints the resident set every 10% and the
/// caches' bytes. The caches must stay within their bounds however long
/// the run.
fn long_run(args: &Args, n: u64) -> Result<(), String> {
    let mut all = materials(Set::Five)?;
    all.extend(materials(Set::Small)?);
    for mapped in [false, true] {
        let tables = if mapped {
            Tablebase::open(&args.dtz50, Rule::Fifty)
        } else {
            Tablebase::open_positional(&args.dtz50, Rule::Fifty, DEFAULT_CACHE_BYTES)
        }
        .map_err(|e| e.to_string())?;
        let access = if mapped { "mapped" } else { "positional" };
        let mut rng = SplitMix64(args.seed ^ 0x1010_1010);
        let (mut errors, mut checksum) = (0u64, 0i64);
        let start = Instant::now();
        for i in 0..n {
            let material = &all[rng.below(all.len())];
            let pos = random_position(&mut rng, material);
            let value = if i % 4 == 3 {
                tables.probe_dtz(&pos).map(|d| i64::from(d.0))
            } else {
                tables.probe_wdl(&pos).map(|w| i64::from(w.to_i8()))
            };
            match value {
                Ok(v) => checksum = checksum.wrapping_add(v),
                Err(_) => errors += 1,
            }
            if (i + 1) % (n / 10).max(1) == 0 || i + 1 == n {
                println!(
                    "{access}: {} probes, {:.1} s, VmRSS {:.1} MiB, VmHWM {:.1} MiB, page cache {}, decoded DTZ cache {}, errors {errors}, checksum {checksum}",
                    i + 1,
                    start.elapsed().as_secs_f64(),
                    mib(status_kb("VmRSS").unwrap_or(0)),
                    mib(status_kb("VmHWM").unwrap_or(0)),
                    held(tables.cache_used(), tables.cache_bytes()),
                    held(tables.decoded_cache_used(), tables.decoded_cache_bytes()),
                );
            }
        }
    }
    Ok(())
}

/// A cache's bytes held and its bound, in MiB ("none" without a cache).
fn held(used: Option<usize>, bound: Option<usize>) -> String {
    let mib = |b: usize| b as f64 / f64::from(1 << 20);
    match (used, bound) {
        (Some(used), Some(bound)) => format!("{:.1} MiB of {:.0} MiB", mib(used), mib(bound)),
        _ => "none".to_string(),
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = match args.mode {
        Mode::Parent => parent(&args).map(|()| true),
        Mode::Check => check(&args),
        Mode::Child(system, metric, set) => child(&args, system, metric, set).map(|m| {
            println!("{}", m.line());
            true
        }),
        Mode::Long(n) => long_run(&args, n).map(|()| true),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
