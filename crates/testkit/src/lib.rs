//! What the integration tests of several dtz50 crates share: CI's rule for
//! a missing tool (skip with a note on a developer's machine, fail in CI),
//! running a command and keeping its output, and the 3-4 piece set that
//! `tables/CHECKSUMS` lists, generated once per target directory and
//! reused while every file matches its SHA-256 (the C and Python tests
//! both read it, so a clean run generates it once, not twice).
//!
//! It depends on nothing of dtz50: a test passes in how to generate.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use sha2::{Digest, Sha256};

/// Whether this is CI (`CI=true`), where a missing tool fails its test.
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Skip a test with a note on stderr; in CI, fail it.
///
/// # Panics
/// In CI, always: a test that needs a tool never skips there.
pub fn skip(why: &str) {
    assert!(!in_ci(), "{why} (required in CI)");
    eprintln!("skipped: {why}");
}

/// Run `command` to its end and return its stdout and stderr together.
///
/// # Panics
/// If it cannot start or fails, with its output.
pub fn run(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

/// The repository's root directory.
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files of `tables/CHECKSUMS` whose names pass `wanted` that are
/// missing from `dir` or differ from their listed SHA-256 (empty: all
/// match).
///
/// # Panics
/// If `tables/CHECKSUMS` cannot be read or lists nothing that passes.
pub fn checksum_mismatches(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let listed = fs::read_to_string(repository_root().join("tables/CHECKSUMS"))
        .expect("tables/CHECKSUMS readable");
    let expected: BTreeMap<&str, &str> = listed
        .lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(hash, name)| (name, hash))
        .filter(|(name, _)| wanted(name))
        .collect();
    assert!(!expected.is_empty(), "tables/CHECKSUMS lists none of them");
    expected
        .into_iter()
        .filter(|(name, hash)| {
            fs::read(dir.join(name)).map_or(true, |bytes| sha256_hex(&bytes) != *hash)
        })
        .map(|(name, _)| name.to_string())
        .collect()
}

/// The 3-4 piece set in `tmp/tables-3-4` (a test's `CARGO_TARGET_TMPDIR`):
/// kept while it matches `tables/CHECKSUMS`, else removed and made again
/// by `generate` (which builds the set into the directory it is given).
///
/// # Panics
/// If the files `generate` writes differ from `tables/CHECKSUMS`.
pub fn set_3_4(tmp: &Path, generate: impl FnOnce(&Path)) -> PathBuf {
    let dir = tmp.join("tables-3-4");
    if checksum_mismatches(&dir, |_| true).is_empty() {
        return dir;
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).expect("stale tables removed");
    }
    generate(&dir);
    let differ = checksum_mismatches(&dir, |_| true);
    assert!(
        differ.is_empty(),
        "generated tables differ from tables/CHECKSUMS: {differ:?}"
    );
    dir
}

/// Lower-case hex SHA-256.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
