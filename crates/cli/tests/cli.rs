//! The real `dtz50` binary: every subcommand, and one-line errors with exit
//! code 2 for every kind of bad input.

use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
};

use assert_cmd::Command;
use tempfile::TempDir;

fn dtz50() -> Command {
    Command::cargo_bin("dtz50").expect("binary built")
}

/// A new directory that `dtz50 generate ARGS --out DIR` built, which must
/// succeed.
fn generated(args: &[&str]) -> TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dtz50()
        .arg("generate")
        .args(args)
        .arg("--out")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// KQvK and KPvK (with sub-tables), generated once by the binary.
fn tables() -> &'static TempDir {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| generated(&["kvkq", "KPvK"]))
}

fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    outcome(dtz50().args(args).arg("--tables").arg(dir))
}

/// The exit code, standard output and standard error of `command`.
fn outcome(command: &mut Command) -> (i32, String, String) {
    let out = command.output().expect("runs");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit code 2 and exactly one line on stderr, equal to `expected`.
fn assert_error(args: &[&str], expected: &str) {
    let (code, _, stderr) = run(args, tables().path());
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end(), expected, "{args:?}");
}

/// `--thorough-orders` searches harder only in tables of over 2^23
/// positions per side (five pieces): a small table's file is the one
/// a plain build writes.
#[test]
fn thorough_orders_leave_a_small_table_as_it_is() {
    let dir = generated(&["KQvK", "--thorough-orders"]);
    let name = "KQvK.dtz50";
    assert_eq!(
        std::fs::read(dir.path().join(name)).expect("thorough file"),
        std::fs::read(tables().path().join(name)).expect("plain file")
    );
}

#[test]
fn generate_prints_a_summary_per_table_and_skips_finished_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let generate = || {
        dtz50()
            .args(["generate", "KRvK", "--out"])
            .arg(dir.path())
            .output()
            .expect("runs")
    };
    let first = generate();
    assert!(first.status.success());
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(
        stdout.starts_with("KRvK: 29568 positions/side; wtm W 22400 CW 0 D 0 BL 0 L 0;"),
        "{stdout}"
    );
    assert!(stdout.contains("longest DTZ 32 plies"), "{stdout}");
    let again = generate();
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("KRvK: already built"));
    let file = dir.path().join("KRvK.dtz50");
    let bytes = std::fs::read(&file).expect("file");
    std::fs::write(&file, &bytes[..bytes.len() - 7]).expect("truncate");
    let rebuilt = generate();
    assert!(rebuilt.status.success());
    assert!(
        String::from_utf8_lossy(&rebuilt.stdout).contains("KRvK.dtz50 is unusable (corrupt table"),
        "{}",
        String::from_utf8_lossy(&rebuilt.stdout)
    );
    assert_eq!(
        std::fs::read(&file).expect("file"),
        bytes,
        "rebuilt byte for byte"
    );
    // One byte changed in the middle of the file opens cleanly, but its
    // checksum does not match: rebuilt, not skipped. A temporary file of a
    // build that no longer runs (no process has id 4194304 or more on
    // Linux) is removed; one of a running process (this test's) is kept.
    let mut damaged = bytes.clone();
    damaged[bytes.len() / 2] ^= 0x40;
    std::fs::write(&file, &damaged).expect("damage");
    let stale = dir.path().join(".KRvK.dtz50.tmp-4194999");
    std::fs::write(&stale, b"partial").expect("stale file");
    let running = dir
        .path()
        .join(format!(".KQvK.dtz50.tmp-{}", std::process::id()));
    std::fs::write(&running, b"in progress").expect("running file");
    // Another table's file may be a build on another machine sharing the
    // directory (a workflow engine's job, `dtz50 plan`): only the files of
    // the tables this run builds are judged.
    let elsewhere = dir.path().join(".KBNvK.dtz50.tmp-4194998");
    std::fs::write(&elsewhere, b"another machine's").expect("other file");
    let repaired = generate();
    assert!(repaired.status.success());
    let stdout = String::from_utf8_lossy(&repaired.stdout);
    assert_eq!(
        stdout.lines().take(2).collect::<Vec<_>>(),
        [
            format!(
                "removed {}, left by a build that no longer runs",
                stale.display()
            ),
            format!(
                "KRvK: {} is unusable (corrupt table {}: header checksum mismatch: \
                 expected {}, got {}), rebuilding",
                file.display(),
                file.display(),
                sha256_hex(&bytes[bytes.len() - 32..]),
                sha256_of(&damaged[..bytes.len() - 32]),
            ),
        ],
        "{stdout}"
    );
    assert_eq!(std::fs::read(&file).expect("file"), bytes);
    assert!(!stale.exists() && running.exists() && elsewhere.exists());
    std::fs::remove_file(&running).expect("remove");
    std::fs::remove_file(&elsewhere).expect("remove");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".dtz50"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn probe_answers_in_words_and_in_json() {
    let dir = tables().path();
    let (code, stdout, _) = run(&["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 90 1"], dir);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim_end(),
        "KQvK: win, DTZ 11; draw by the clock: the win needs 11 plies, 10 left on the clock; best move Qe4"
    );
    let (code, stdout, _) = run(
        &[
            "probe",
            "--json",
            "--halfmove",
            "89",
            "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        ],
        dir,
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("json");
    assert_eq!(v["wdl"], 2);
    assert_eq!(v["rule"], "50");
    assert_eq!(v["material"], "KQvK");
    assert_eq!(v["dtz"], 11);
    assert_eq!(v["halfmove"], 89);
    assert_eq!(v["outcome"], "win");
    assert_eq!(v["margin"], 0);
    assert_eq!(v["best_move"], "Qe4");
}

#[test]
fn batch_reads_stdin_and_reports_errors_per_line() {
    let input = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1\nnot a fen\n8/8/8/8/8/8/P7/K6k b - - 0 1\n";
    let out = dtz50()
        .args(["probe", "--batch", "--tables"])
        .arg(tables().path())
        .write_stdin(input)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an error line makes the exit code 2"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["dtz"], 11);
    assert_eq!(lines[1]["fen"], "not a fen");
    assert!(
        lines[1]["error"]
            .as_str()
            .expect("error")
            .starts_with("bad FEN 'not a fen'")
    );
    assert_eq!(lines[2]["dtz"], -2);
    assert_eq!(lines[2]["outcome"], "loss");
}

#[test]
fn line_plays_to_mate() {
    let (code, stdout, _) = run(&["line", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"], tables().path());
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        "win: 11 plies to a zeroing move or mate, 100 left on the clock"
    );
    assert_eq!(lines[1], "1. Qe4 (clock 1)");
    assert!(lines[lines.len() - 2].ends_with("# (clock 11)"), "{stdout}");
    assert_eq!(lines[lines.len() - 1], "checkmate");
}

/// `info` names the pieces in each stream's index order (WDL with White
/// to move, with Black to move, the kept DTZ), most significant first,
/// and the side whose DTZ it keeps, as the file's header and trailer say
/// (read here through the library).
#[test]
fn info_names_the_piece_orders_and_the_dtz_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dtz50()
        .args(["generate", "KRNvK", "KBNvK", "KNvKP", "--out"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(out.status.success());
    let out = dtz50().arg("info").arg(dir.path()).output().expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header: Vec<&str> = stdout.lines().next().expect("header").split('\t').collect();
    assert_eq!(header[8..], ["orders", "dtz kept"]);
    for (name, want_orders) in [
        // Each stream its own order: White's WDL keeps the solver's,
        // Black's is led by Black's king, and the DTZ by the knight under
        // format 13's flag (Black's king after it).
        ("KRNvK", "KkRN/kRNK/N|kRK"),
        // A piece that is not a king leads (the flag): the bishop, and
        // the knight in DTZ.
        ("KBNvK", "B|kNK/kNBK/N|kBK"),
        ("KRvK", "RKk/KkR/KkR"),
        // A pawnless table's king pair may move, as one field.
        ("KNvK", "NKk/NKk/NKk"),
        // A pawn table's kings may move each: White's last.
        ("KNvKP", "NkK/NkK/NkK"),
    ] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}\t")))
            .expect("a line per table");
        let fields: Vec<&str> = line.split('\t').collect();
        let file =
            dtz50::probe::open_file(&dir.path().join(format!("{name}.dtz50"))).expect("opens");
        let named = |layout: &dtz50::index::Layout| -> String {
            let mut name: String = layout.order_pieces().iter().map(|p| p.char()).collect();
            if layout.order()[0] & dtz50::index::LEAD_FLAG != 0 {
                name.insert(1, '|');
            }
            name
        };
        let dtz =
            dtz50::index::Layout::with_order(file.header().material, &file.header().dtz_order)
                .expect("an order");
        let orders = format!(
            "{}/{}/{}",
            named(file.layout(shakmaty::Color::White)),
            named(file.layout(shakmaty::Color::Black)),
            named(&dtz)
        );
        assert_eq!(fields[8], orders, "{line}");
        assert_eq!(fields[8], want_orders, "{line}");
        assert_eq!(fields[9], file.dtz_side().char().to_string(), "{line}");
    }
}

#[test]
fn info_and_verify_read_the_files() {
    let dir = tables().path();
    let out = dtz50().arg("info").arg(dir).output().expect("runs");
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let kqvk = stdout
        .lines()
        .find(|l| l.starts_with("KQvK\t"))
        .expect("KQvK line");
    // Positions per side as White to move's WDL order numbers them
    // (`QKk`: the king pair, 512 numbers, between two digits).
    assert!(kqvk.starts_with("KQvK\t50\t32768\t"), "{kqvk}");
    assert!(kqvk.contains("\t20\t"), "longest DTZ 20: {kqvk}");
    let out = dtz50().arg("verify").arg(dir).output().expect("runs");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("KPvK.dtz50: ok"));
    let out = dtz50()
        .args(["verify", "--deep"])
        .arg(dir.join("KPvK.dtz50"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .ends_with(
                "KPvK.dtz50: ok (165676 positions recomputed from their successors, 161 of them also through shakmaty)\n"
            ),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn verify_deep_takes_a_bare_file_name() {
    let out = dtz50()
        .current_dir(tables().path())
        .args(["verify", "--deep", "KQvK.dtz50"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("KQvK.dtz50: ok ("));
}

/// `verify --deep --work-dir DIR` keeps its arrays in files there: the same
/// line as without, nothing left in DIR; a DIR that is not a directory, or
/// the option without --deep, is a one-line error.
#[test]
fn verify_deep_pages_its_arrays_into_a_work_dir() {
    let file = tables().path().join("KQvK.dtz50");
    let verify = |extra: &[&std::ffi::OsStr]| outcome(dtz50().arg("verify").arg(&file).args(extra));
    let work = tempfile::tempdir().expect("temp dir");
    let in_ram = verify(&["--deep".as_ref()]);
    assert_eq!(in_ram.0, 0, "{in_ram:?}");
    assert!(in_ram.1.contains(": ok ("), "{in_ram:?}");
    let paged = verify(&[
        "--deep".as_ref(),
        "--work-dir".as_ref(),
        work.path().as_os_str(),
    ]);
    assert_eq!(paged, in_ram);
    assert_eq!(std::fs::read_dir(work.path()).expect("lists").count(), 0);
    let missing = work.path().join("missing");
    assert_eq!(
        verify(&[
            "--deep".as_ref(),
            "--work-dir".as_ref(),
            missing.as_os_str()
        ]),
        (
            2,
            String::new(),
            format!(
                "error: work directory {} is not a directory\n",
                missing.display()
            )
        )
    );
    let without_deep = verify(&["--work-dir".as_ref(), work.path().as_os_str()]);
    assert_eq!(
        (without_deep.0, without_deep.2.as_str()),
        (
            2,
            "error: the following required arguments were not provided: \
             --deep (try --help)\n"
        )
    );
}

#[test]
fn verify_fails_on_a_corrupt_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = std::fs::read(tables().path().join("KQvK.dtz50")).expect("file");
    // A byte of White's first WDL block, where the trailer places it.
    let trailer = bytes.len() - dtz50::format::TRAILER_LEN;
    let blocks = u64::from_le_bytes(bytes[trailer..trailer + 8].try_into().expect("8 bytes"));
    bytes[blocks as usize + 3] ^= 1;
    std::fs::write(dir.path().join("KQvK.dtz50"), bytes).expect("write");
    let out = dtz50()
        .arg("verify")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAILED: corrupt table"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("wdl block 0 (white to move) is corrupt")
    );
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let dir = tables().path().display().to_string();
    assert_error(
        &["probe", "8/8/8/zz"],
        "error: bad FEN '8/8/8/zz': invalid board part in fen",
    );
    assert_error(
        &["probe", "8/8/8/8/8/2k5/8/KQ6 x - - 0 1"],
        "error: bad FEN '8/8/8/8/8/2k5/8/KQ6 x - - 0 1': invalid turn part in fen",
    );
    assert_error(
        &["probe", "8/8/8/8/8/1k6/8/KQ6 w - - 0 1"],
        "error: illegal position '8/8/8/8/8/1k6/8/KQ6 w - - 0 1': illegal position: opposite check",
    );
    assert_error(
        &["probe", "r3k3/8/8/8/8/8/8/4K3 b q - 0 1"],
        "error: castling rights are not supported by tablebases",
    );
    assert_error(
        &["probe", "7k/8/8/8/8/8/8/KQRBNR2 w - - 0 1"],
        "error: too many pieces: 7, tables have at most 6",
    );
    assert_error(
        &["probe", "8/8/8/8/8/2k5/8/KBN5 w - - 0 1"],
        &format!("error: missing table KBNvK in {dir}"),
    );
    assert_error(
        &["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 999999999999 1"],
        "error: bad FEN '8/8/8/8/8/2k5/8/KQ6 w - - 999999999999 1': \
         halfmove clock '999999999999': number too large to fit in target type",
    );
    let (code, _, stderr) = run(
        &["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"],
        std::path::Path::new("/dev/null"),
    );
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: /dev/null is a device, not a table directory\n")
    );
    let out = dtz50().args(["info", "/dev/null"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: /dev/null is a device, not a table file or directory\n"
    );
    // Clap's usage errors are one line too, its usage block left out.
    assert_error(
        &["generate", "KXvK"],
        "error: unexpected argument '--tables' found; \
         tip: to pass '--tables' as a value, use '-- --tables' (try --help)",
    );
    let out = dtz50()
        .args(["generate", "KQvK", "--checkpoint-every", "5"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the following required arguments were not provided: \
         --work-dir <DIR> (try --help)\n"
    );
    let out = dtz50()
        .args(["generate", "KQvK", "--thorough-orders", "--search-orders"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the argument '--thorough-orders' cannot be used with \
         '--search-orders' (try --help)\n"
    );
    let out = dtz50()
        .args(["generate", "KXvK", "--out"])
        .arg(tables().path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: bad material 'KXvK': unknown piece letter 'x'"
    );
    let out = dtz50()
        .args(["generate", "KQRBvKRB"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: bad material 'KQRBvKRB': 7 pieces, at most 6 are supported"
    );
    let out = dtz50()
        .args(["probe", "--frobnicate"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let out = dtz50()
        .args([
            "probe",
            "--tables",
            "/nonexistent/dir",
            "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: table directory /nonexistent/dir does not exist (run dtz50 generate first)"
    );
}

#[test]
fn a_corrupt_table_in_a_probe_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bytes = std::fs::read(tables().path().join("KQvK.dtz50")).expect("file");
    std::fs::write(dir.path().join("KQvK.dtz50"), &bytes[..bytes.len() / 2]).expect("write");
    let (code, _, stderr) = run(&["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"], dir.path());
    assert_eq!(code, 2);
    assert_eq!(stderr.lines().count(), 1);
    assert!(
        stderr.contains("corrupt table") && stderr.contains("KQvK.dtz50"),
        "{stderr}"
    );
}

#[test]
fn a_table_of_another_format_version_says_how_to_rebuild_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut bytes = std::fs::read(tables().path().join("KQvK.dtz50")).expect("file");
    bytes[8] = 11;
    let path = dir.path().join("KQvK.dtz50");
    std::fs::write(&path, &bytes).expect("write");
    let (code, _, stderr) = run(&["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"], dir.path());
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: cannot use table {}: format version 11, this dtz50 reads version 16; `dtz50 generate` into its directory rebuilds it",
            path.display()
        )
    );
}

#[test]
fn an_unwritable_output_directory_is_one_line() {
    let out = dtz50()
        .args(["generate", "KQvK", "--out", "/proc/dtz50-cannot-write"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: cannot write to /proc/dtz50-cannot-write"),
        "{stderr}"
    );
}

#[test]
fn adjudicate_reports_events_per_game_and_names_a_bad_game() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pgn = dir.path().join("games.pgn");
    std::fs::write(
        &pgn,
        "[White \"A\"]\n[Black \"B\"]\n[Result \"1/2-1/2\"]\n\n\
         1. Nf3 Nf6 2. Ng1 Ng8 3. Nc3 Nc6 4. Nb1 Nb8 1/2-1/2\n\n\
         [White \"C\"]\n[Black \"D\"]\n[Result \"*\"]\n\n1. e4 e5 2. Ke3 *\n",
    )
    .expect("write");
    let out = dtz50()
        .args(["adjudicate", "--json", "--tables"])
        .arg(tables().path())
        .arg(&pgn)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad game makes the exit code 2"
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2);
    let event = &lines[0]["events"][0];
    assert_eq!(event["kind"], "threefold");
    assert_eq!(event["ply"], 8);
    assert_eq!(event["san"], "Nb8");
    assert_eq!(lines[1]["game"], 2);
    assert!(
        lines[1]["error"]
            .as_str()
            .expect("error")
            .starts_with("game 2 (C – D): illegal move 2. Ke3"),
        "{}",
        lines[1]
    );
}

#[test]
fn line_to_mate_goes_through_promotion() {
    let (code, stdout, _) = run(
        &["line", "--to-mate", "8/8/8/8/8/8/P7/K6k w - - 0 1"],
        tables().path(),
    );
    assert_eq!(code, 0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[1], "1. a3 (clock 0)");
    let promotion = lines
        .iter()
        .find(|l| l.contains("=Q"))
        .expect("the pawn promotes");
    assert!(promotion.ends_with("(clock 0)"), "{promotion}");
    assert_eq!(lines[lines.len() - 1], "checkmate");
    let (_, short, _) = run(&["line", "8/8/8/8/8/8/P7/K6k w - - 0 1"], tables().path());
    assert_eq!(short.lines().last(), Some("zeroing move reached"));
}

/// Lower-case hex of some bytes.
fn sha256_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of some bytes, in hex.
fn sha256_of(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    sha256_hex(&Sha256::digest(bytes))
}

/// A table directory where a directory stands under a table's name: the
/// probe says what is there instead of calling the table missing.
#[test]
fn a_directory_under_a_table_name_is_named_as_such() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fake = dir.path().join("KQvK.dtz50");
    std::fs::create_dir(&fake).expect("mkdir");
    let (code, _, stderr) = run(&["probe", "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"], dir.path());
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        format!("error: {} is a directory, not a table file", fake.display())
    );
}

/// `probe --batch` answers each line as soon as it is read, through a pipe
/// that stays open, and goes on after lines that are not FENs at all.
#[test]
fn batch_answers_line_by_line_through_a_pipe() {
    use std::{
        io::{BufRead, BufReader, Write},
        process::{Command as Std, Stdio},
        sync::mpsc,
        time::Duration,
    };
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("dtz50"))
        .args(["probe", "--batch", "--tables"])
        .arg(tables().path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let (lines, answers) = mpsc::channel();
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut ask = |input: &[u8]| -> serde_json::Value {
        stdin.write_all(input).expect("write");
        stdin.flush().expect("flush");
        let line = answers
            .recv_timeout(Duration::from_secs(20))
            .expect("an answer before the next line is written");
        assert!(line.len() < 400, "bounded: {line}");
        serde_json::from_str(&line).expect("json")
    };
    let first = ask(b"8/8/8/8/8/2k5/8/KQ6 w - - 0 1\n");
    assert_eq!(first["dtz"], 11);
    let bad_utf8 = ask(b"8/8/8/\xff\xfe/8 w - - 0 1\n");
    assert_eq!(bad_utf8["error"], "line is not valid UTF-8");
    assert_eq!(bad_utf8["fen"], "8/8/8/\u{fffd}\u{fffd}/8 w - - 0 1");
    let mut long = vec![b'8'; 100_000];
    long.push(b'\n');
    let too_long = ask(&long);
    assert_eq!(too_long["error"], "line longer than 256 bytes: not a FEN");
    assert_eq!(too_long["fen"], "8".repeat(32));
    let last = ask(b"8/8/8/8/8/2k5/8/KQ6 b - - 0 1\r\n");
    assert_eq!(last["outcome"], "loss");
    drop(stdin);
    let status = child.wait().expect("exits");
    assert_eq!(status.code(), Some(2), "some lines failed");
}

/// Peak resident memory of a process, in KiB, read from `/proc` while it
/// runs (the high-water mark only grows, so the last reading is the peak
/// up to a few milliseconds before exit).
fn run_measuring_peak_rss(mut command: std::process::Command) -> (i32, u64) {
    let mut child = command.spawn().expect("runs");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(exit) = child.try_wait().expect("wait") {
            return (exit.code().expect("exit code"), peak);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `adjudicate` reads and reports game by game: a 50 MB PGN (thousands of
/// games, and one game with a million half-moves after its end) goes
/// through in bounded memory, and the long tail is summarised.
#[test]
fn adjudicate_streams_a_large_pgn_in_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.pgn");
    let mut pgn = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    // Knight shuffles: the start position appears a fifth time at ply 16.
    let shuffle = |from: u32, count: u32| -> String {
        (from..from + count)
            .map(|n| format!("{}. Nf3 Nf6 {}. Ng1 Ng8 ", 2 * n - 1, 2 * n))
            .collect()
    };
    writeln!(
        pgn,
        "[White \"Long\"]\n[Black \"Tail\"]\n[Result \"*\"]\n\n{}*\n",
        shuffle(1, 250_000)
    )
    .expect("write");
    let mut written = 0;
    let mut games = 1;
    while written < 50 << 20 {
        let game = format!(
            "[White \"W{games}\"]\n[Black \"B{games}\"]\n[Result \"1/2-1/2\"]\n\n{}1/2-1/2\n\n",
            shuffle(1, 6)
        );
        pgn.write_all(game.as_bytes()).expect("write");
        written += game.len();
        games += 1;
    }
    drop(pgn);
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("dtz50"));
    command
        .args(["adjudicate", "--json", "--tables", "/nonexistent"])
        .arg(&path)
        .stdout(std::process::Stdio::null());
    let (code, peak_kib) = run_measuring_peak_rss(command);
    assert_eq!(code, 0);
    eprintln!("adjudicate of a {written}-byte PGN: peak RSS {peak_kib} KiB");
    assert!(peak_kib < 64 << 10, "peak RSS {peak_kib} KiB");

    let out = dtz50()
        .args(["adjudicate", "--tables", "/nonexistent"])
        .arg(&path)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first_game = stdout.split("\nGame 2").next().expect("text");
    let tail = first_game
        .lines()
        .find(|l| l.starts_with("  Played after the game had ended: "))
        .expect("the tail line");
    assert!(
        tail.starts_with("  Played after the game had ended: 9. Nf3, 9... Nf6, 10. Ng1,"),
        "{tail}"
    );
    assert!(
        tail.ends_with(", and 999964 more (999984 half-moves)"),
        "{tail}"
    );
    assert!(first_game.len() < 2000, "{first_game}");
    // The last game (game number `games`) is reported too.
    let last = games - 1;
    assert!(stdout.contains(&format!("Game {games}: W{last} – B{last}\n")));
}

/// A table truncated in place while `probe --batch` runs: the probes that
/// need it get errors, the batch goes on (no SIGBUS), the answers before
/// are kept, and once the file is whole again it answers again. (A table
/// already open and truncated is tested on the library, in tests/files.rs.)
#[test]
fn batch_survives_a_table_truncated_under_it() {
    use std::{
        io::{BufRead, BufReader, Write},
        process::{Command as Std, Stdio},
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let generated = dtz50()
        .args(["generate", "KRvK", "KQvK", "--out"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(generated.status.success());
    let file = dir.path().join("KRvK.dtz50");
    let bytes = std::fs::read(&file).expect("table");
    let mut child = Std::new(assert_cmd::cargo::cargo_bin("dtz50"))
        .args(["probe", "--batch", "--tables"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut ask = |fen: &str| -> serde_json::Value {
        writeln!(stdin, "{fen}").expect("write");
        stdin.flush().expect("flush");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("an answer");
        serde_json::from_str(&line).expect("json")
    };
    let queen = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1";
    let rook = "8/8/8/4k3/8/8/3K4/R7 b - - 0 1";
    let before = ask(queen);
    assert_eq!(before["dtz"], 11, "{before}");
    // Truncated in place: the same inode, half its bytes.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .expect("open")
        .set_len(bytes.len() as u64 / 2)
        .expect("truncate");
    let during = ask(rook);
    let error = during["error"].as_str().expect("an error while truncated");
    assert!(
        error.starts_with(&format!("corrupt table {}: truncated", file.display())),
        "{error}"
    );
    assert_eq!(ask(queen), before, "the other table still answers");
    // Whole again, in place.
    std::fs::write(&file, &bytes).expect("restore");
    let after = ask(rook);
    assert_eq!(after["wdl"], -2, "{after}");
    drop(stdin);
    assert_eq!(child.wait().expect("exits").code(), Some(2));
}

/// Fault injection: builds killed at random moments and finished files
/// damaged at random, then one more run; the set ends byte-identical to the
/// published checksums of a clean build, with no stray files.
#[test]
fn killed_builds_and_damaged_files_end_in_a_clean_set() {
    use std::time::Duration;
    let checksums: std::collections::HashMap<String, String> = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tables/CHECKSUMS"),
    )
    .expect("tables/CHECKSUMS")
    .lines()
    .filter_map(|l| l.split_once("  "))
    .map(|(sum, name)| (name.to_owned(), sum.to_owned()))
    .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let generate = || {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("dtz50"));
        command
            .args(["generate", "KQvKR", "KPvKP", "--out"])
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        command
    };
    // A fixed sequence of moments, so that a failure can be replayed.
    let mut seed = 0x5eed_u64;
    let mut next = move |below: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % below
    };
    for _ in 0..5 {
        let mut child = generate().spawn().expect("runs");
        std::thread::sleep(Duration::from_millis(50 + next(1500)));
        let _ = child.kill();
        child.wait().expect("reaped");
        let mut finished: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "dtz50"))
            .collect();
        finished.sort();
        if !finished.is_empty() && next(2) == 0 {
            let victim = &finished[next(finished.len() as u64) as usize];
            let mut bytes = std::fs::read(victim).expect("read");
            let at = next(bytes.len() as u64) as usize;
            bytes[at] ^= 1 << next(8);
            std::fs::write(victim, &bytes).expect("damage");
        }
    }
    let status = generate().status().expect("runs");
    assert!(status.success());
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.contains(&"KQvKR.dtz50".to_owned()) && names.contains(&"KPvKP.dtz50".to_owned()));
    for name in names {
        let bytes = std::fs::read(dir.path().join(&name)).expect("read");
        let expected = checksums
            .get(&name)
            .unwrap_or_else(|| panic!("stray file {name}"));
        assert_eq!(&sha256_of(&bytes), expected, "{name}");
    }
}

/// Resumable builds: KRvKP built with a checkpoint after every ply in its
/// work directory and killed (`kill -9`) after a random number of them,
/// four times; each run goes on from the last checkpoint (a kill may land
/// while one is written), and a last run with the default interval
/// finishes a file byte-identical to `tables/CHECKSUMS`, leaving nothing in
/// the work directory.
#[test]
fn a_killed_build_resumes_from_its_checkpoint() {
    use std::time::Duration;
    let expected = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tables/CHECKSUMS"),
    )
    .expect("tables/CHECKSUMS")
    .lines()
    .find_map(|l| l.strip_suffix("  KRvKP.dtz50").map(str::to_owned))
    .expect("KRvKP published");
    // Its sub-tables, built plainly.
    let dir = generated(&["KRvK", "KQvKR", "KRvKR", "KRvKB", "KRvKN", "KPvK"]);
    let work = tempfile::tempdir().expect("temp dir");
    let logs = tempfile::tempdir().expect("temp dir");
    let run = |log: &Path, every: &[&str]| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("dtz50"))
            .args(["generate", "KRvKP", "--out"])
            .arg(dir.path())
            .arg("--work-dir")
            .arg(work.path())
            .args(every)
            .stdout(std::fs::File::create(log).expect("log"))
            .stderr(std::fs::File::create(log.with_extension("err")).expect("log"))
            .spawn()
            .expect("runs")
    };
    let read = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    let mut seed = 0x0c4e_c4b0_u64;
    let mut resumed = 0;
    for round in 0..4 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let checkpoints = 1 + (seed >> 33) % 25;
        let log = logs.path().join(format!("{round}.out"));
        let mut child = run(&log, &["--checkpoint-every", "0"]);
        let written = || {
            read(log.with_extension("err"))
                .matches("checkpoint after")
                .count() as u64
        };
        while written() < checkpoints {
            assert!(
                child.try_wait().expect("waits").is_none(),
                "round {round} ended before {checkpoints} checkpoints: {}",
                read(log.clone())
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().expect("killed");
        child.wait().expect("reaped");
        resumed +=
            usize::from(read(log).contains("KRvKP: resumed from its checkpoint at pawn level"));
    }
    assert_eq!(resumed, 3, "every run after the first resumed");
    let log = logs.path().join("last.out");
    assert!(run(&log, &[]).wait().expect("runs").success());
    let text = read(log);
    assert!(
        text.contains("KRvKP: resumed from its checkpoint at pawn level"),
        "{text}"
    );
    let file = dir.path().join("KRvKP.dtz50");
    assert_eq!(sha256_of(&std::fs::read(&file).expect("built")), expected);
    assert_eq!(
        std::fs::read_dir(work.path()).expect("dir").count(),
        0,
        "the checkpoint is removed once the file is written"
    );
}

#[test]
fn serve_prints_its_address_answers_the_lichess_api_and_stops_on_ctrl_c() {
    use std::{
        io::{BufRead, BufReader, Read, Write},
        net::TcpStream,
        process::{Command as Process, Stdio},
    };

    let mut child = Process::new(assert_cmd::cargo::cargo_bin("dtz50"))
        .args(["serve", "--bind", "127.0.0.1:0", "--tables"])
        .arg(tables().path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("a line");
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    let mut stream = TcpStream::connect(&addr).expect("connects");
    write!(
        stream,
        "GET /standard?fen=8/8/8/8/8/2k5/8/KQ6_w_-_-_0_1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    // Ctrl-C (SIGINT, to this child by its id) stops it cleanly.
    let interrupted = Process::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let status = child.wait().expect("ends");
    assert!(status.success(), "graceful shutdown exits 0: {status}");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains("\"dtz\":11") && answer.contains("\"category\":\"win\""),
        "{answer}"
    );
}

#[test]
fn serve_refuses_a_bad_address_in_one_line() {
    let (code, _, stderr) = run(&["serve", "--bind", "localhost:port"], tables().path());
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not an address"), "{stderr}");
    let (code, _, stderr) = run(&["serve", "--bind", "256.0.0.1"], tables().path());
    assert_eq!(code, 2, "{stderr}");
}
