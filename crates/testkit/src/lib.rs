//! What the integration tests of several dtz50 crates share: CI's rule for
//! a missing tool (skip with a note on a developer's machine, fail in CI),
//! running a command and keeping its output, and the 3-4 piece set that
//! `tables/CHECKSUMS` lists, generated once per target directory and
//! source tree and reused while every file matches its SHA-256 (the
//! oracle, the file tests' sub-tables, the C and Python tests all read it,
//! so a clean run generates it once).
//!
//! It depends on nothing of dtz50: a test passes in how to generate.

use std::{
    collections::BTreeMap,
    fs,
    path::{Path, PathBuf},
    process::Command,
    sync::{Mutex, PoisonError},
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

/// The 3-4 piece set in `tmp/tables-3-4` (a test's `CARGO_TARGET_TMPDIR`,
/// which every crate of the workspace shares): kept while it was made from
/// the sources as they are now (see [`sources_stamp`], kept in
/// `tmp/tables-3-4.sources`) and matches
/// `tables/CHECKSUMS`, else made again by `generate` (which builds the set
/// into the directory it is given) beside it and moved into place. One
/// thread of a process makes it at a time; the others wait and reuse it.
///
/// # Panics
/// If the files `generate` writes differ from `tables/CHECKSUMS`.
pub fn set_3_4(tmp: &Path, generate: impl FnOnce(&Path)) -> PathBuf {
    static MAKING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = MAKING.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = tmp.join("tables-3-4");
    // Beside the set, not in it: the tests read every file of the set.
    let stamp_file = tmp.join("tables-3-4.sources");
    let stamp = sources_stamp();
    if fs::read_to_string(&stamp_file).is_ok_and(|made_from| made_from == stamp)
        && checksum_mismatches(&dir, |_| true).is_empty()
    {
        return dir;
    }
    let fresh = tmp.join(format!("tables-3-4.{}", std::process::id()));
    if stamp_file.exists() {
        fs::remove_file(&stamp_file).expect("stale stamp removed");
    }
    for old in [&fresh, &dir] {
        if old.exists() {
            fs::remove_dir_all(old).expect("stale tables removed");
        }
    }
    generate(&fresh);
    let differ = checksum_mismatches(&fresh, |_| true);
    assert!(
        differ.is_empty(),
        "generated tables differ from tables/CHECKSUMS: {differ:?}"
    );
    fs::rename(&fresh, &dir).expect("set moved into place");
    fs::write(&stamp_file, stamp).expect("stamp written");
    dir
}

/// The SHA-256 of the sources a generated table depends on (the library's
/// and the command line's, and `Cargo.lock`), so that a set kept from an
/// earlier run is made again after any change to them: a kept set that
/// still matches `tables/CHECKSUMS` would otherwise hide a generator that
/// no longer writes those bytes.
fn sources_stamp() -> String {
    let root = repository_root();
    let mut files = vec![root.join("Cargo.lock")];
    for dir in ["src", "crates/cli/src"] {
        files_under(&root.join(dir), &mut files);
    }
    files.sort();
    let mut hash = Sha256::new();
    for file in files {
        let bytes = fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.strip_prefix(&root).unwrap_or(&file);
        hash.update(name.to_string_lossy().as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    hex(&hash.finalize())
}

/// Every file under `dir`, at any depth, appended to `files`.
fn files_under(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            files_under(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Lower-case hex SHA-256.
fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of a digest.
fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
