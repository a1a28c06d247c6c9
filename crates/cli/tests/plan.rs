//! `dtz50 plan` run by the workflow engines themselves, each from the
//! emitted file with 2 jobs: ninja (Debian's package) builds the 3-4 piece
//! set and Snakemake (from PyPI, in a venv) the pawnless tables of
//! [`SNAKEMAKE_SET`]; each is killed part way, started again, and ends
//! with files byte-identical to `tables/CHECKSUMS` (what `dtz50 generate
//! --pieces 4` writes); make builds the 3-piece set. A missing engine
//! skips its test with a note outside CI and fails it in CI.

use std::{
    collections::BTreeMap,
    fs,
    os::unix::process::CommandExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant, SystemTime},
};

use dtz50::material::Material;
use dtz50_testkit::{checksum_mismatches, run, skip};

/// Snakemake from PyPI, pinned: the test checks what this version does.
const SNAKEMAKE: &str = "snakemake==9.27.1";

/// Tables of the 3-4 piece set.
const SET_3_4: usize = 35;

/// What Snakemake is asked to build: the quicker pawnless 4-piece tables,
/// 16 with their sub-tables (the 3-4 set again would add two minutes to
/// the tests and nothing ninja's test does not show).
const SNAKEMAKE_SET: [&str; 12] = [
    "KNNvK", "KNvKN", "KBvKB", "KQQvK", "KQvKQ", "KBBvK", "KBvKN", "KRRvK", "KRvKR", "KQRvK",
    "KRvKN", "KRvKB",
];

/// The file names of [`SNAKEMAKE_SET`]'s tables and their sub-tables.
fn snakemake_tables() -> Vec<String> {
    let targets = SNAKEMAKE_SET.map(|m| m.parse::<Material>().expect("material"));
    Material::with_dependencies(&targets)
        .into_iter()
        .filter(|m| m.total() >= 3)
        .map(|m| format!("{m}.dtz50"))
        .collect()
}

/// How long no table may have finished before the engine is killed.
const QUIET: Duration = Duration::from_millis(700);

/// Whether `program --version` runs.
fn runs(program: &Path) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `dtz50 plan --out t ARGS` written to `file` in `dir`.
fn write_plan(dir: &Path, file: &str, args: &[&str]) {
    let output = Command::new(env!("CARGO_BIN_EXE_dtz50"))
        .args(["plan", "--out", "t"])
        .args(args)
        .output()
        .expect("dtz50 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    fs::write(dir.join(file), output.stdout).expect("plan written");
}

/// The finished table files in `dir`, with their modification times.
fn tables_in(dir: &Path) -> BTreeMap<String, SystemTime> {
    let Ok(entries) = fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let name = entry.file_name().into_string().ok()?;
            if !name.ends_with(".dtz50") || name.starts_with('.') {
                return None;
            }
            Some((name, entry.metadata().ok()?.modified().ok()?))
        })
        .collect()
}

/// Start `engine` in its own process group, wait until `at_least` tables
/// are finished in `dir/t` and none has finished for a while, then kill the
/// whole group (engine and jobs) as a crash would. Returns the tables
/// finished by then. The quiet moment lets the engine record every
/// finished job first: a job killed after writing its file but before the
/// engine recorded it is rightly run again, which would blur what the
/// tests check (that recorded work is not redone). On a fast host tables
/// may finish closer together than that until the last one, so once twice
/// `at_least` are finished the group is killed without waiting: some work
/// must be left to go on with.
/// The tables in the directory after the kill, and how many there were at
/// the quiet moment (or the last look): a table may still finish between
/// that look and the kill, before the engine records it, and the engine
/// then rightly runs its job again (`generate` finds the file intact and
/// leaves it).
fn kill_part_way(
    mut engine: Command,
    dir: &Path,
    at_least: usize,
) -> (BTreeMap<String, SystemTime>, usize) {
    let mut child = engine
        .current_dir(dir)
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("engine starts");
    let out = dir.join("t");
    let (mut seen, mut since) = (0, Instant::now());
    loop {
        assert!(
            child.try_wait().expect("engine state").is_none(),
            "the engine ended before a quiet moment after {at_least} tables"
        );
        let finished = tables_in(&out).len();
        if finished != seen {
            (seen, since) = (finished, Instant::now());
        } else if seen >= at_least && since.elapsed() >= QUIET {
            break;
        }
        if seen >= 2 * at_least {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let group = format!("-{}", child.id());
    run(Command::new("kill").args(["-KILL", "--", &group]));
    child.wait().expect("engine reaped");
    // The jobs die with the group; give the kernel a moment to reap them.
    thread::sleep(Duration::from_millis(200));
    (tables_in(&out), seen)
}

/// Every file listed in `tables/CHECKSUMS` whose name passes `wanted`
/// is in `dir` with that SHA-256, and `dir` holds no other table.
fn assert_matches_checksums(dir: &Path, wanted: impl Fn(&str) -> bool + Copy) {
    assert_eq!(checksum_mismatches(dir, wanted), Vec::<String>::new());
    let others: Vec<String> = tables_in(dir).into_keys().filter(|n| !wanted(n)).collect();
    assert!(others.is_empty(), "tables not asked for: {others:?}");
}

/// The tables finished before the kill are the same files after the
/// second run (not built again), and the second run built the rest of
/// the `tables` planned.
fn assert_went_on(
    before: &BTreeMap<String, SystemTime>,
    after: &BTreeMap<String, SystemTime>,
    tables: usize,
) {
    assert!(before.len() < tables, "killed after the last table");
    for (name, time) in before {
        assert_eq!(after.get(name), Some(time), "{name} was built again");
    }
    assert_eq!(after.len(), tables);
}

#[test]
fn ninja_builds_the_set_and_goes_on_after_a_kill() {
    let ninja = PathBuf::from("ninja");
    if !runs(&ninja) {
        return skip("ninja not found (Debian: apt-get install ninja-build)");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    write_plan(dir.path(), "build.ninja", &["--pieces", "4"]);
    let mut engine = Command::new(&ninja);
    engine.arg("-j2");
    let (before, quiet) = kill_part_way(engine, dir.path(), 12);
    let log = run(Command::new(&ninja).arg("-j2").current_dir(dir.path()));
    // Ninja numbers the jobs it runs: only those still to do (and any
    // that finished after the quiet moment, unrecorded).
    let ran = (SET_3_4 - before.len()..=SET_3_4 - quiet)
        .find(|n| log.lines().any(|l| l.starts_with(&format!("[{n}/{n}]"))));
    assert!(ran.is_some(), "{log}");
    assert_went_on(&before, &tables_in(&dir.path().join("t")), SET_3_4);
    assert_matches_checksums(&dir.path().join("t"), |_| true);
    let again = run(Command::new(&ninja).arg("-j2").current_dir(dir.path()));
    assert!(again.contains("no work to do"), "{again}");
}

/// A venv with Snakemake, made once per target directory.
fn snakemake() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("snakemake-venv");
    let bin = venv.join("bin");
    if runs(&bin.join("snakemake")) {
        return Some(bin.join("snakemake"));
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        skip("python3 with venv not found (Debian: apt-get install python3-venv)");
        return None;
    }
    run(Command::new(bin.join("python")).args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        SNAKEMAKE,
    ]));
    Some(bin.join("snakemake"))
}

#[test]
fn snakemake_builds_the_set_and_goes_on_after_a_kill() {
    let Some(snakemake) = snakemake() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut args = vec!["--format", "snakemake"];
    args.extend(SNAKEMAKE_SET);
    write_plan(dir.path(), "Snakefile", &args);
    let mut engine = Command::new(&snakemake);
    engine.args(["--cores", "2"]);
    let (before, quiet) = kill_part_way(engine, dir.path(), 6);
    // A killed Snakemake leaves its lock; it is lifted as its docs say,
    // and the jobs that were running are run again.
    run(Command::new(&snakemake)
        .arg("--unlock")
        .current_dir(dir.path()));
    let log = run(Command::new(&snakemake)
        .args(["--cores", "2", "--rerun-incomplete"])
        .current_dir(dir.path()));
    // Snakemake counts the jobs it runs, the final `all` among them (and
    // any table that finished after the quiet moment, unrecorded).
    let planned = snakemake_tables();
    let ran = (planned.len() - before.len() + 1..=planned.len() - quiet + 1)
        .find(|n| log.contains(&format!("{n} of {n} steps (100%) done")));
    assert!(ran.is_some(), "{log}");
    let out = dir.path().join("t");
    assert_went_on(&before, &tables_in(&out), planned.len());
    assert_matches_checksums(&out, |name| planned.iter().any(|p| p == name));
}

#[test]
fn make_builds_the_three_piece_set() {
    let make = PathBuf::from("make");
    if !runs(&make) {
        return skip("make not found (Debian: apt-get install make)");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    write_plan(
        dir.path(),
        "Makefile",
        &["--pieces", "3", "--format", "make"],
    );
    run(Command::new(&make).arg("-j2").current_dir(dir.path()));
    assert_matches_checksums(&dir.path().join("t"), |name| {
        name.len() == "KQvK.dtz50".len()
    });
    let again = run(Command::new(&make).arg("-j2").current_dir(dir.path()));
    assert!(again.contains("Nothing to be done"), "{again}");
}

#[test]
fn bad_plan_arguments_are_one_line_errors() {
    for (args, expected) in [
        (
            vec!["plan", "--pieces", "4", "--out", "my tables"],
            "error: --out 'my tables' holds a character the plan cannot quote (whitespace, quotes, \\, $, :, #, % or braces)",
        ),
        (
            vec!["plan", "--pieces", "9"],
            "error: --pieces 9: tables have 3 to 6 pieces",
        ),
        (
            vec!["plan"],
            "error: nothing to plan: name tables (like KRvK) or give --pieces N",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_dtz50"))
            .args(&args)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.trim_end(), expected, "{args:?}");
        assert!(output.stdout.is_empty());
    }
    let output = Command::new(env!("CARGO_BIN_EXE_dtz50"))
        .args(["plan", "KQvK", "--format", "bazel"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("unknown plan format 'bazel' (expected ninja, snakemake or make)")
    );
}
