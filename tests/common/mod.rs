//! Shared helpers for the integration tests: the Syzygy oracle, table sets
//! solved in memory, and the 3-4 piece set as files (made once per run, see
//! [`set_3_4`]) for tests of one table over its sub-tables.
#![allow(dead_code)]

use std::{
    io,
    path::{Path, PathBuf},
    sync::Arc,
};

use dtz50::{
    format::OrderSearch,
    generate::{Event, GenerateOptions, SolveOptions, Table, TableSet, generate, solve},
    material::Material,
    probe::Tablebase,
    value::Rule,
};
use shakmaty::{CastlingMode, Chess};
use shakmaty_syzygy::{
    MaybeRounded, Tablebase as SyzygyTablebase,
    filesystem::{Filesystem, OsFilesystem, RandomAccessFile, ReadHint},
};

/// The reference Syzygy directory: `DTZ50_SYZYGY_3_4` or ../shared/syzygy/3-4.
/// `None` (with a note on stderr) if it is missing outside CI; a panic in CI.
pub fn reference_dir(sub: &str) -> Option<PathBuf> {
    let var = format!("DTZ50_SYZYGY_{}", sub.replace('-', "_"));
    let dir = std::env::var_os(&var)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/syzygy")
                .join(sub)
        });
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "reference tables missing in CI: {} (set {var})",
        dir.display()
    );
    eprintln!(
        "skipped: reference tables not found at {} (set {var})",
        dir.display()
    );
    None
}

/// A shakmaty-syzygy tablebase over `dirs`, its files read into memory
/// (see [`InMemory`]).
pub fn syzygy(dirs: &[PathBuf]) -> SyzygyTablebase<Chess> {
    let mut tb = SyzygyTablebase::with_filesystem(Arc::new(InMemory(OsFilesystem::new())));
    for dir in dirs {
        tb.add_directory(dir).expect("readable reference directory");
    }
    tb
}

/// Whether our values of `pos` agree with Syzygy's: WDL50 equal, our WDL
/// consistent with our DTZ, DTZ equal where Syzygy is precise and n or one
/// ply further from zero where it rounds (cursed values, and tables stored
/// in full moves). A mismatch is printed with the position's FEN.
pub fn matches_syzygy(ours: &Tablebase, syzygy: &SyzygyTablebase<Chess>, pos: &Chess) -> bool {
    use dtz50::value::Wdl;
    let dtz = ours.probe_dtz(pos).expect("our dtz");
    let wdl = ours.probe_wdl(pos).expect("our wdl");
    let theirs_wdl = wdl_of(syzygy.probe_wdl_after_zeroing(pos).expect("syzygy wdl"));
    let theirs = syzygy.probe_dtz(pos).expect("syzygy dtz");
    let plies = i32::from(dtz.0);
    let dtz_ok = match theirs {
        MaybeRounded::Precise(d) => plies == d.0,
        MaybeRounded::Rounded(d) => plies == d.0 || plies == d.0 + d.0.signum(),
    };
    let ok = Wdl::from_dtz(dtz, Rule::Fifty) == wdl && wdl == theirs_wdl && dtz_ok;
    if !ok {
        eprintln!(
            "mismatch {}: ours dtz {} wdl {wdl:?}, syzygy dtz {theirs:?} wdl {theirs_wdl:?}",
            shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal),
            dtz.0,
        );
    }
    ok
}

/// Syzygy's files read whole into memory when opened: the reference
/// tables are a few megabytes, and the default reader makes a system call
/// per read (most of the time of an exhaustive comparison), while the
/// memory-mapped one needs `unsafe`.
struct InMemory(OsFilesystem);

impl Filesystem for InMemory {
    fn regular_file_size(&self, path: &Path) -> io::Result<u64> {
        self.0.regular_file_size(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.0.read_dir(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        Ok(Box::new(FileBytes(std::fs::read(path)?)))
    }
}

/// The bytes of one reference file.
struct FileBytes(Vec<u8>);

impl RandomAccessFile for FileBytes {
    fn read_at(&self, buf: &mut [u8], offset: u64, _hint: ReadHint) -> io::Result<usize> {
        let start = usize::try_from(offset).map_or(self.0.len(), |o| o.min(self.0.len()));
        let n = buf.len().min(self.0.len() - start);
        buf[..n].copy_from_slice(&self.0[start..start + n]);
        Ok(n)
    }
}

/// Solve `targets` and their sub-tables in memory.
pub fn solve_set(targets: &[Material], rule: Rule) -> TableSet {
    let mut set = TableSet::new();
    let options = SolveOptions {
        rule,
        ..SolveOptions::default()
    };
    for material in Material::with_dependencies(targets) {
        let table = solve(material, &options, &set, &|_| {}).expect("solvable");
        set.insert(table);
    }
    set
}

/// Generate `targets` (and sub-tables) as files into `dir` and open them.
pub fn generate_files(dir: &Path, targets: &[Material], rule: Rule) -> Tablebase {
    generate_files_telling(dir, targets, rule, &|_| {})
}

/// [`generate_files`], telling `on_event` what the build does.
pub fn generate_files_telling(
    dir: &Path,
    targets: &[Material],
    rule: Rule,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Tablebase {
    generate_searching(dir, targets, rule, OrderSearch::default(), on_event)
}

/// [`generate_files_telling`], each table's orders chosen as `search`
/// says.
fn generate_searching(
    dir: &Path,
    targets: &[Material],
    rule: Rule,
    search: OrderSearch,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Tablebase {
    let options = GenerateOptions {
        rule,
        out: dir.to_path_buf(),
        work_dir: None,
        checkpoint_every: None,
        order_search: search,
    };
    generate(targets, &options, on_event).expect("generation succeeds");
    Tablebase::open(dir, rule).expect("directory opens")
}

/// The 3-4 piece set as files, generated by this crate's generator once
/// per target directory and source tree and checked against
/// `tables/CHECKSUMS` (see `dtz50_testkit::set_3_4`).
pub fn set_3_4() -> PathBuf {
    dtz50_testkit::set_3_4(Path::new(env!("CARGO_TARGET_TMPDIR")), |dir| {
        generate_files(dir, &Material::all_up_to(4), Rule::Fifty);
    })
}

/// `material`'s sub-tables: what it depends on, itself left out.
fn subtables_of(material: Material) -> Vec<Material> {
    Material::with_dependencies(&[material])
        .into_iter()
        .filter(|m| *m != material)
        .collect()
}

/// `material` (of up to five pieces) generated as a file into `dir` under
/// the 50-move rule, over copies of its sub-tables from [`set_3_4`] (so
/// only `material` itself is built), and `dir` opened.
pub fn generate_over_set(dir: &Path, material: Material) -> Tablebase {
    generate_over_set_telling(dir, material, &|_| {})
}

/// [`generate_over_set`], telling `on_event` what the build does.
pub fn generate_over_set_telling(
    dir: &Path,
    material: Material,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Tablebase {
    generate_over_set_searching(dir, material, OrderSearch::default(), on_event)
}

/// [`generate_over_set_telling`], `material`'s orders chosen as `search`
/// says.
pub fn generate_over_set_searching(
    dir: &Path,
    material: Material,
    search: OrderSearch,
    on_event: &(dyn Fn(Event<'_>) + Sync),
) -> Tablebase {
    let set = set_3_4();
    for sub in subtables_of(material) {
        let name = format!("{sub}.dtz50");
        std::fs::copy(set.join(&name), dir.join(&name)).expect("sub-table copied");
    }
    generate_searching(dir, &[material], Rule::Fifty, search, on_event)
}

/// `material` (of up to five pieces) solved in memory under the 50-move
/// rule, its sub-tables read from [`set_3_4`]'s files.
pub fn solve_over_set(material: Material) -> Table {
    let subtables = Tablebase::open_only(set_3_4(), Rule::Fifty, &subtables_of(material))
        .expect("the 3-4 set opens");
    solve(material, &SolveOptions::default(), &subtables, &|_| {}).expect("solvable")
}

/// Parse a FEN into a position.
pub fn fen(text: &str) -> Chess {
    text.parse::<shakmaty::fen::Fen>()
        .expect("valid FEN")
        .into_position(CastlingMode::Standard)
        .expect("legal position")
}

/// Our WDL type for shakmaty-syzygy's.
pub fn wdl_of(w: shakmaty_syzygy::Wdl) -> dtz50::value::Wdl {
    use dtz50::value::Wdl;
    match w {
        shakmaty_syzygy::Wdl::Loss => Wdl::Loss,
        shakmaty_syzygy::Wdl::BlessedLoss => Wdl::BlessedLoss,
        shakmaty_syzygy::Wdl::Draw => Wdl::Draw,
        shakmaty_syzygy::Wdl::CursedWin => Wdl::CursedWin,
        shakmaty_syzygy::Wdl::Win => Wdl::Win,
    }
}

/// Syzygy's published statistics for `material`'s table: the column names
/// and the table's row, from ../shared/syzygy-stats-345.tsv (up to five
/// pieces) or syzygy-stats-6.tsv. `None` (with a note on stderr) if the
/// file is missing outside CI; a panic in CI.
pub fn published_row(material: Material) -> Option<(Vec<String>, Vec<String>)> {
    let file = if material.total() <= 5 {
        "syzygy-stats-345.tsv"
    } else {
        "syzygy-stats-6.tsv"
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(file);
    let Ok(tsv) = std::fs::read_to_string(&path) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "missing {}",
            path.display()
        );
        eprintln!("skipped: {} not found", path.display());
        return None;
    };
    let split = |line: &str| line.split('\t').map(str::to_owned).collect::<Vec<_>>();
    let columns = split(tsv.lines().next().expect("header"));
    let name = material.to_string();
    let row = tsv
        .lines()
        .find(|l| l.split('\t').next() == Some(name.as_str()))
        .unwrap_or_else(|| panic!("{name} not in {file}"));
    Some((columns, split(row)))
}

/// The longest DTZ of a table equals Syzygy's published statistics
/// ([`published_row`]): longest white win and cursed win, longest win with
/// White to move, longest loss with Black to move, and where the
/// statistics give them (six pieces) Black's longest win and cursed win;
/// and the table has cursed wins and blessed losses, for each side to
/// move, exactly where the statistics count some.
pub fn check_published_stats(header: &dtz50::format::Header) {
    let Some((columns, row)) = published_row(header.material) else {
        return;
    };
    let name = header.material.to_string();
    let field = |column: &str| -> Option<u64> {
        let i = columns.iter().position(|c| c == column)?;
        Some(row[i].parse().unwrap_or(0))
    };
    let (w, b) = (&header.stats.white, &header.stats.black);
    // The generator's statistics count a mated position as lost in 0 plies;
    // its DTZ (ours, and shakmaty-syzygy's probe_dtz) is -1. Where mate is
    // the only loss (KNNvK, KBvKB, ...) that is the one difference.
    let btm_loss = b.longest_loss.max(b.longest_blessed_loss);
    let mut ours = vec![
        w.longest_win.max(b.longest_loss),
        w.longest_cursed_win.max(b.longest_blessed_loss),
        w.longest_win.max(w.longest_cursed_win),
        if btm_loss == 1 { 0 } else { btm_loss },
    ];
    let mut published: Vec<u64> = [
        "longest_white_win_ply",
        "longest_white_cursed_ply",
        "wtm_maxwin_ply",
        "btm_maxlose_ply",
    ]
    .map(|c| field(c).expect("column"))
    .to_vec();
    if let (Some(win), Some(cursed)) = (
        field("longest_black_win_ply"),
        field("longest_black_cursed_ply"),
    ) {
        ours.extend([
            b.longest_win.max(w.longest_loss),
            b.longest_cursed_win.max(w.longest_blessed_loss),
        ]);
        published.extend([win, cursed]);
    }
    let ours: Vec<u64> = ours.into_iter().map(u64::from).collect();
    assert_eq!(
        ours, published,
        "{name}: longest (win, cursed, wtm win, btm loss[, black win, black cursed])"
    );
    // Counts by WDL are loss first: [L, BL, D, CW, W].
    let present = [w.counts[3], w.counts[1], b.counts[3], b.counts[1]].map(|c| c > 0);
    let published_present =
        ["wtm_cwin", "wtm_closs", "btm_cwin", "btm_closs"].map(|c| field(c).expect("column") > 0);
    assert_eq!(
        present, published_present,
        "{name}: has (wtm cursed win, wtm blessed loss, btm cursed win, btm blessed loss)"
    );
}

/// The positions Syzygy's statistics publish for `material` (the longest
/// win and cursed win, for White and, with six pieces, for Black) have,
/// in `tables`, the published number of plies to zeroing and the
/// published winner, cursed or not. Returns how many it checked.
pub fn check_published_positions(tables: &Tablebase, material: Material) -> usize {
    use dtz50::value::Wdl;
    use shakmaty::{Color, Position};
    let Some((columns, row)) = published_row(material) else {
        return 0;
    };
    let cell = |column: &str| {
        let i = columns.iter().position(|c| c == column)?;
        Some(row[i].as_str()).filter(|text| !text.is_empty())
    };
    let mut checked = 0;
    for (fens, plies, winner, cursed) in [
        (
            ["fen_longest", "fen_longest_white"],
            "longest_white_win_ply",
            Color::White,
            false,
        ),
        (
            ["fen_longest_cursed", "fen_longest_white_cursed"],
            "longest_white_cursed_ply",
            Color::White,
            true,
        ),
        (
            ["fen_longest_black", ""],
            "longest_black_win_ply",
            Color::Black,
            false,
        ),
        (
            ["fen_longest_black_cursed", ""],
            "longest_black_cursed_ply",
            Color::Black,
            true,
        ),
    ] {
        let Some(text) = fens.iter().find_map(|c| cell(c)) else {
            continue;
        };
        let plies: i16 = cell(plies).expect("plies").parse().expect("a number");
        let pos = fen(&format!("{text} 0 1"));
        let dtz = tables.probe_dtz(&pos).expect("probes");
        let wdl = tables.probe_wdl(&pos).expect("probes");
        let expected = match (pos.turn() == winner, cursed) {
            (true, false) => Wdl::Win,
            (true, true) => Wdl::CursedWin,
            (false, false) => Wdl::Loss,
            (false, true) => Wdl::BlessedLoss,
        };
        assert_eq!((dtz.0.abs(), wdl), (plies, expected), "{material}: {text}");
        checked += 1;
    }
    checked
}

/// A small deterministic generator (xorshift64*): the same positions, or
/// the same damage, on every run.
pub struct Random(pub u64);

impl Random {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A random byte.
    pub fn byte(&mut self) -> u8 {
        self.next() as u8
    }
}
