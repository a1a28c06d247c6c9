//! The Python module through Python: build it into a virtual environment
//! with pip (maturin's PEP 517 backend, as a user installs it), generate the
//! 3-4 piece tables, and run the pytest suite in `tests/python/` against
//! python-chess's `chess.syzygy` over the reference Syzygy files.
//!
//! The venv (`target/tmp/pyvenv`) and the tables (`target/tmp/py-tables-3-4`,
//! reused while their SHA-256 match `tables/CHECKSUMS`) survive between
//! runs, so a rerun costs the pytest run plus an incremental build. Without
//! Python (or its `venv` module) or without the reference tables, the test
//! is skipped with a note, except in CI (`CI=true`), where it fails.

use std::{
    collections::BTreeMap,
    env, fs,
    path::{Path, PathBuf},
    process::Command,
};

use dtz50::{
    Rule,
    generate::{GenerateOptions, generate},
    material::Material,
};
use sha2::{Digest, Sha256};

/// The packages the suite needs, from PyPI. python-chess is pinned: it is
/// the oracle, and the suite documents its conventions.
const REQUIREMENTS: &[&str] = &["maturin>=1.9.4,<2", "pytest>=7", "chess==1.11.2"];

fn in_ci() -> bool {
    env::var("CI").as_deref() == Ok("true")
}

/// Skip (with a note) outside CI, fail in CI.
fn skip(why: &str) {
    assert!(!in_ci(), "{why} (required in CI)");
    eprintln!("skipped: {why}");
}

/// Run `command`, panicking with its output if it fails.
fn run(command: &mut Command) -> String {
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

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A venv with the requirements, created on first use.
fn venv(python: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pyvenv");
    let bin = dir.join("bin");
    if !bin.join("python").exists() {
        let made = Command::new(python)
            .arg("-m")
            .arg("venv")
            .arg(&dir)
            .output();
        if !made.is_ok_and(|o| o.status.success()) {
            skip(&format!("`{python} -m venv` does not work"));
            return None;
        }
    }
    run(pip_install(&bin).args(REQUIREMENTS));
    Some(bin)
}

/// `python -m pip install --quiet` in the venv whose `bin` this is.
fn pip_install(bin: &Path) -> Command {
    let mut command = Command::new(bin.join("python"));
    command.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    command
}

/// `pip install crates/python` into the venv, as the README tells users.
fn install_module(bin: &Path) {
    let path = env::join_paths(
        std::iter::once(bin.to_path_buf())
            .chain(env::split_paths(&env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH joins");
    run(pip_install(bin)
        .args(["--no-build-isolation", "--no-deps", "--force-reinstall"])
        .arg(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path));
}

/// The SHA-256 of each file listed in `tables/CHECKSUMS`, read from `dir`.
fn checksums_match(dir: &Path) -> bool {
    let listed = fs::read_to_string(root().join("tables/CHECKSUMS")).expect("tables/CHECKSUMS");
    let expected: BTreeMap<&str, &str> = listed
        .lines()
        .filter_map(|line| line.split_once("  "))
        .map(|(hash, name)| (name, hash))
        .collect();
    !expected.is_empty()
        && expected.iter().all(|(name, hash)| {
            fs::read(dir.join(name)).is_ok_and(|bytes| {
                let got: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                got == *hash
            })
        })
}

/// The 3-4 piece set, generated unless an identical one is there.
fn tables() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("py-tables-3-4");
    if !checksums_match(&dir) {
        if dir.exists() {
            fs::remove_dir_all(&dir).expect("stale tables removed");
        }
        let options = GenerateOptions {
            rule: Rule::Fifty,
            out: dir.clone(),
            work_dir: None,
        };
        generate(&Material::all_up_to(4), &options, &|_| {}).expect("3-4 piece set generates");
        assert!(
            checksums_match(&dir),
            "generated tables differ from tables/CHECKSUMS"
        );
    }
    dir
}

/// The reference Syzygy directory, as the library's oracle tests find it.
fn syzygy() -> Option<PathBuf> {
    let dir = env::var_os("DTZ50_SYZYGY_3_4")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/syzygy/3-4"));
    if dir.is_dir() {
        Some(dir)
    } else {
        skip(&format!(
            "reference tables not found at {} (set DTZ50_SYZYGY_3_4)",
            dir.display()
        ));
        None
    }
}

/// The `dtz50` binary beside this test's executable, if built.
fn cli() -> Option<PathBuf> {
    let exe = env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("dtz50");
    bin.is_file().then_some(bin)
}

#[test]
fn pytest_suite() {
    let python = env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let Some(syzygy) = syzygy() else { return };
    let Some(bin) = venv(&python) else { return };
    install_module(&bin);
    let tables = tables();
    let mut pytest = Command::new(bin.join("python"));
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python"))
        .env("DTZ50_TABLES", &tables)
        .env("DTZ50_SYZYGY_3_4", &syzygy);
    if let Some(cli) = cli() {
        pytest.env("DTZ50_BIN", cli);
    }
    println!("{}", run(&mut pytest));
}
