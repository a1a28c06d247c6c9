//! The Python module through Python: build it into a virtual environment
//! with pip (maturin's PEP 517 backend, as a user installs it), generate the
//! 3-4 piece tables, and run the pytest suite in `tests/python/` against
//! python-chess's `chess.syzygy` over the reference Syzygy files.
//!
//! The venv (`target/tmp/pyvenv`) and the tables (`target/tmp/tables-3-4`,
//! shared with the C API's tests and reused while their SHA-256 match
//! `tables/CHECKSUMS`) survive between
//! runs, so a rerun costs the pytest run plus an incremental build. Without
//! Python (or its `venv` module) or without the reference tables, the test
//! is skipped with a note, except in CI (`CI=true`), where it fails.

use std::{
    env,
    path::{Path, PathBuf},
    process::Command,
};

use dtz50::{
    Rule,
    generate::{GenerateOptions, generate},
    material::Material,
};
use dtz50_testkit::{repository_root, run, set_3_4, skip};

/// The packages the suite needs, from PyPI. python-chess is pinned: it is
/// the oracle, and the suite documents its conventions.
const REQUIREMENTS: &[&str] = &["maturin>=1.9.4,<2", "pytest>=7", "chess==1.11.2"];

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

/// The 3-4 piece set, shared with the C API's tests.
fn tables() -> PathBuf {
    set_3_4(Path::new(env!("CARGO_TARGET_TMPDIR")), |dir| {
        let options = GenerateOptions {
            rule: Rule::Fifty,
            out: dir.to_path_buf(),
            work_dir: None,
            checkpoint_every: None,
            order_search: Default::default(),
        };
        generate(&Material::all_up_to(4), &options, &|_| {}).expect("3-4 piece set generates");
    })
}

/// The reference Syzygy directory, as the library's oracle tests find it.
fn syzygy() -> Option<PathBuf> {
    let dir = env::var_os("DTZ50_SYZYGY_3_4")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository_root().join("../shared/syzygy/3-4"));
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
