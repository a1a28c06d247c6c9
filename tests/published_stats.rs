//! Every table of a built set against Syzygy's published statistics.
//!
//! The 3-4 piece tables and KRBvKR are checked by the oracle tests. This
//! test checks a whole directory, such as the 3-4-5 piece set that
//! `dtz50 generate --pieces 5` builds (hours of work, so it is not part of
//! `cargo test`): run it with
//!
//! ```sh
//! DTZ50_TABLES=DIR cargo test --release --test published_stats -- --ignored
//! ```
//!
//! For every `.dtz50` file in `DIR`: the longest DTZ values and which sides
//! have cursed wins and blessed losses match `../shared/syzygy-stats-345.tsv`
//! (`syzygy-stats-6.tsv` for six pieces; see `common::check_published_stats`),
//! and the positions published there have the published DTZ and outcome
//! (`common::check_published_positions`).

mod common;

use std::path::PathBuf;

use dtz50::{
    probe::{Tablebase, open_file},
    value::Rule,
};

#[test]
#[ignore = "needs DTZ50_TABLES, a directory of built tables"]
fn every_table_in_the_directory_matches_the_published_statistics() {
    let dir = PathBuf::from(
        std::env::var("DTZ50_TABLES").expect("DTZ50_TABLES names a directory of tables"),
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "dtz50"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no table files in {}", dir.display());
    let tables = Tablebase::open(&dir, Rule::Fifty).expect("opens the directory");
    let mut positions = 0;
    for file in &files {
        let table = open_file(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        common::check_published_stats(table.header());
        positions += common::check_published_positions(&tables, table.header().material);
    }
    eprintln!(
        "{} tables and {positions} published positions match the published statistics",
        files.len()
    );
}
