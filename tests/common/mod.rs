//! Shared helpers for the integration tests: the Syzygy oracle and table
//! sets solved in memory.
#![allow(dead_code)]

use std::path::PathBuf;

use dtz50::{
    generate::{GenerateOptions, generate},
    material::Material,
    probe::Tablebase,
    solve::{SolveOptions, solve},
    table::TableSet,
    value::Rule,
};
use shakmaty::{CastlingMode, Chess, FromSetup, PositionError, Setup};
use shakmaty_syzygy::Tablebase as SyzygyTablebase;

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

/// A shakmaty-syzygy tablebase over `dirs`.
pub fn syzygy(dirs: &[PathBuf]) -> SyzygyTablebase<Chess> {
    let mut tb = SyzygyTablebase::new();
    for dir in dirs {
        tb.add_directory(dir).expect("readable reference directory");
    }
    tb
}

/// Solve `targets` and their sub-tables in memory.
pub fn solve_set(targets: &[Material], rule: Rule) -> TableSet {
    let mut set = TableSet::new();
    let options = SolveOptions {
        rule,
        work_dir: None,
    };
    for material in Material::with_dependencies(targets) {
        let table = solve(material, &options, &set, &|_| {}).expect("solvable");
        set.insert(table);
    }
    set
}

/// A position from a setup, accepting checks that cannot arise in a game
/// (Syzygy tables include them).
pub fn position(setup: Setup) -> Option<Chess> {
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_impossible_check)
        .ok()
}

/// Generate `targets` (and sub-tables) as files into `dir` and open them.
pub fn generate_files(dir: &std::path::Path, targets: &[Material], rule: Rule) -> Tablebase {
    let options = GenerateOptions {
        rule,
        out: dir.to_path_buf(),
        work_dir: None,
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
