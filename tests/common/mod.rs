//! Shared helpers for the integration tests: the Syzygy oracle and table
//! sets solved in memory.
#![allow(dead_code)]

use std::{
    io,
    path::{Path, PathBuf},
    sync::Arc,
};

use dtz50::{
    generate::{GenerateOptions, SolveOptions, TableSet, generate, solve},
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
pub fn generate_files(dir: &std::path::Path, targets: &[Material], rule: Rule) -> Tablebase {
    let options = GenerateOptions {
        rule,
        out: dir.to_path_buf(),
        work_dir: None,
        checkpoint_every: None,
        order_search: Default::default(),
    };
    generate(targets, &options, &|_| {}).expect("generation succeeds");
    Tablebase::open(dir, rule).expect("directory opens")
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

/// The longest DTZ of a table equals Syzygy's published statistics
/// (../shared/syzygy-stats-345.tsv): longest white win and cursed win,
/// longest win with White to move, longest loss with Black to move; and
/// the table has cursed wins and blessed losses, for each side to move,
/// exactly where the statistics count some.
pub fn check_published_stats(header: &dtz50::format::Header) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/syzygy-stats-345.tsv");
    let Ok(tsv) = std::fs::read_to_string(&path) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "missing {}",
            path.display()
        );
        eprintln!("skipped: {} not found", path.display());
        return;
    };
    let columns: Vec<&str> = tsv.lines().next().expect("header").split('\t').collect();
    let name = header.material.to_string();
    let row: Vec<&str> = tsv
        .lines()
        .find(|l| l.split('\t').next() == Some(name.as_str()))
        .unwrap_or_else(|| panic!("{name} not in the statistics"))
        .split('\t')
        .collect();
    let field = |column: &str| -> u64 {
        let i = columns.iter().position(|c| *c == column).expect("column");
        row[i].parse().unwrap_or(0)
    };
    let (w, b) = (&header.stats.white, &header.stats.black);
    // The generator's statistics count a mated position as lost in 0 plies;
    // its DTZ (ours, and shakmaty-syzygy's probe_dtz) is -1. Where mate is
    // the only loss (KNNvK, KBvKB, ...) that is the one difference.
    let btm_loss = b.longest_loss.max(b.longest_blessed_loss);
    let ours = [
        w.longest_win.max(b.longest_loss),
        w.longest_cursed_win.max(b.longest_blessed_loss),
        w.longest_win.max(w.longest_cursed_win),
        if btm_loss == 1 { 0 } else { btm_loss },
    ]
    .map(u64::from);
    let published = [
        field("longest_white_win_ply"),
        field("longest_white_cursed_ply"),
        field("wtm_maxwin_ply"),
        field("btm_maxlose_ply"),
    ];
    assert_eq!(
        ours, published,
        "{name}: longest (win, cursed, wtm win, btm loss)"
    );
    // Counts by WDL are loss first: [L, BL, D, CW, W].
    let present = [w.counts[3], w.counts[1], b.counts[3], b.counts[1]].map(|c| c > 0);
    let published_present =
        ["wtm_cwin", "wtm_closs", "btm_cwin", "btm_closs"].map(|c| field(c) > 0);
    assert_eq!(
        present, published_present,
        "{name}: has (wtm cursed win, wtm blessed loss, btm cursed win, btm blessed loss)"
    );
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
