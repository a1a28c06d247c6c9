//! The C library through C programs, against the Rust API.
//!
//! The test builds `libdtz50` (static and shared) with cargo, compiles the
//! C programs of `tests/c/` and `examples/` with the system `cc` against
//! `include/tbprobe.h`, links each against both libraries, and:
//!
//! * `compare.c` probes thousands of random positions of the 3-4 piece set
//!   (clocks from 0 to 120, en-passant positions included) through every
//!   function of the header; each answer is compared with `dtz50::Tablebase`
//!   (and the attack helpers with shakmaty). The same again with the tables
//!   split over two directories, and with 75-move tables;
//! * `examples/root_probe.c`, an engine's root probe in Fathom's style,
//!   gives the best move of `best_moves` and the exact DTZ;
//! * `bad_input.c` checks Fathom's failure values for bad input.
//!
//! The 3-4 piece set is the one the Python module's test reads too
//! (`target/tmp/tables-3-4`, checked against `tables/CHECKSUMS`). Without
//! `cc` the test is skipped with a note, except in CI (`CI=true`), where it
//! fails.

use std::{
    fmt::Write as _,
    io::{Seek, SeekFrom, Write as _},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
};

use dtz50::{
    Dtz, Material, Rule, Tablebase,
    generate::{GenerateOptions, generate},
    index::{Layout, TableIndex},
};
use dtz50_testkit::{set_3_4, skip};
use shakmaty::{
    Board, CastlingMode, Chess, Color, EnPassantMode, File, Move, Position, PositionError, Rank,
    Role, Setup, Square, attacks, fen::Fen,
};

const FAILED: u32 = 0xFFFF_FFFF;

/// How each program is linked.
#[derive(Debug, Clone, Copy)]
enum Link {
    Static,
    Shared,
}

/// The built libraries and the header.
struct Libraries {
    include: PathBuf,
    profile_dir: PathBuf,
}

/// Whether a C compiler runs; a failure in CI, a note elsewhere.
fn have_cc() -> bool {
    let ok = Command::new("cc")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip("no C compiler (cc) on this machine");
    }
    ok
}

/// Build `libdtz50` with cargo, into the profile directory this test runs
/// from (so the libraries are fresh, whatever cargo built for the test).
fn libraries() -> &'static Libraries {
    static BUILT: OnceLock<Libraries> = OnceLock::new();
    BUILT.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable");
        // <target>/<profile>/deps/c_api-HASH
        let profile_dir = exe.parent().and_then(Path::parent).expect("profile dir");
        let target_dir = profile_dir.parent().expect("target dir");
        let profile = profile_dir
            .file_name()
            .and_then(|p| p.to_str())
            .expect("name");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "-p", "dtz50-capi", "--target-dir"])
            .arg(target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "cargo build -p dtz50-capi failed");
        Libraries {
            include: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include"),
            profile_dir: profile_dir.to_path_buf(),
        }
    })
}

/// Compile `source` against the header and link it against libdtz50.
fn compile(source: &Path, link: Link, out: &Path) -> PathBuf {
    let libs = libraries();
    let exe = out.join(format!(
        "{}-{link:?}",
        source.file_stem().and_then(|s| s.to_str()).expect("name")
    ));
    let mut cc = Command::new("cc");
    cc.args(["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(&libs.include)
        .arg(source)
        .arg("-o")
        .arg(&exe);
    match link {
        Link::Static => {
            cc.arg(libs.profile_dir.join("libdtz50.a"));
            cc.args(["-lpthread", "-ldl", "-lm"]);
        }
        Link::Shared => {
            cc.arg("-L").arg(&libs.profile_dir).arg("-ldtz50");
            cc.arg(format!("-Wl,-rpath,{}", libs.profile_dir.display()));
            cc.arg("-lpthread");
        }
    }
    let output = cc.output().expect("cc runs");
    assert!(
        output.status.success(),
        "cc failed for {}:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}

/// Run a program with `input` on its standard input; its standard output.
fn run(exe: &Path, args: &[&str], input: &str) -> String {
    // From a file: a pipe written before reading the output would block
    // once the program's output fills the other pipe.
    let mut file = tempfile::tempfile().expect("temp file");
    file.write_all(input.as_bytes()).expect("write input");
    file.seek(SeekFrom::Start(0)).expect("rewind");
    let output = Command::new(exe)
        .args(args)
        .stdin(file)
        .output()
        .expect("program runs");
    assert!(
        output.status.success(),
        "{} failed: {:?}\n{}",
        exe.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("text")
}

/// The 3-4 piece set, shared with the Python module's tests.
fn tables() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        set_3_4(Path::new(env!("CARGO_TARGET_TMPDIR")), |dir| {
            generate_into(dir, &Material::all_up_to(4), Rule::Fifty);
        })
    })
}

fn generate_into(dir: &Path, targets: &[Material], rule: Rule) {
    let options = GenerateOptions {
        rule,
        out: dir.to_path_buf(),
        work_dir: None,
        checkpoint_every: None,
        order_search: Default::default(),
    };
    generate(targets, &options, &|_| {}).expect("generation succeeds");
}

/// A small xorshift generator: the same positions on every run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `per_table` random legal positions of each material (colours swapped
/// half the time), clocks 0 (a third) or 0..=120.
fn positions(materials: &[Material], per_table: usize, seed: u64) -> Vec<Chess> {
    let mut random = Random(seed);
    let mut out = Vec::new();
    let clock = |random: &mut Random| {
        if random.below(3) == 0 {
            0
        } else {
            random.below(121) as u32
        }
    };
    for material in materials {
        let layout = Layout::new(*material);
        let mut found = 0;
        while found < per_table {
            let index = TableIndex(random.below(layout.size()));
            let turn = Color::from_white(random.below(2) == 0);
            let Some(pos) = layout.position(&layout.decode(index), turn) else {
                continue;
            };
            let mut setup = pos.to_setup(EnPassantMode::Legal);
            if random.below(2) == 0 {
                setup.mirror();
            }
            setup.halfmoves = clock(&mut random);
            // Tables hold checks that cannot arise in a game: so does the sample.
            let pos = setup
                .position(CastlingMode::Standard)
                .or_else(PositionError::ignore_impossible_check)
                .expect("legal");
            out.push(pos);
            found += 1;
        }
    }
    out
}

/// `n` random KPvKP positions with a legal en-passant capture: the pawn of
/// the side not to move has just made its double step beside the other.
fn en_passant_positions(n: usize, seed: u64) -> Vec<Chess> {
    let mut random = Random(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let turn = Color::from_white(random.below(2) == 0);
        // Ranks from the side to move: its pawn on the fifth, the other's
        // beside it, the square passed over behind that.
        let (fifth, passed) = if turn.is_white() { (4, 5) } else { (3, 2) };
        let file = random.below(8) as u32;
        let Some(other_file) = File::new(file).offset(if random.below(2) == 0 { -1 } else { 1 })
        else {
            continue;
        };
        let mut board = Board::empty();
        let capturer = Square::from_coords(File::new(file), Rank::new(fifth));
        let pushed = Square::from_coords(other_file, Rank::new(fifth));
        board.set_piece_at(capturer, turn.pawn());
        board.set_piece_at(pushed, (!turn).pawn());
        for color in [turn, !turn] {
            let king = Square::new(random.below(64) as u32);
            if board.occupied().contains(king) {
                break;
            }
            board.set_piece_at(king, color.king());
        }
        if board.kings().count() != 2 {
            continue;
        }
        let setup = Setup {
            board,
            turn,
            ep_square: Some(Square::from_coords(other_file, Rank::new(passed))),
            halfmoves: 0,
            ..Setup::empty()
        };
        if let Ok(pos) = setup.position::<Chess>(CastlingMode::Standard)
            && !pos.en_passant_moves().is_empty()
        {
            out.push(pos);
        }
    }
    out
}

/// One input line of `compare.c`.
fn input_line(pos: &Chess) -> String {
    let b = pos.board();
    let ep = pos.ep_square(EnPassantMode::Legal).map_or(0, u32::from);
    format!(
        "{:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {} {} {}\n",
        b.white().0,
        b.black().0,
        b.kings().0,
        b.queens().0,
        b.rooks().0,
        b.bishops().0,
        b.knights().0,
        b.pawns().0,
        pos.halfmoves(),
        ep,
        u8::from(pos.turn().is_white()),
    )
}

/// Fathom's WDL code of a DTZ with the clock applied, written out here
/// apart from the library's.
fn clock_wdl(dtz: i32, clock: i32, limit: Option<i32>) -> u32 {
    let survives = |plies: i32| limit.is_none_or(|l| plies + clock <= l);
    match dtz {
        0 => 2,
        d if d > 0 => 3 + u32::from(survives(d)),
        d => 1 - u32::from(survives(-d)),
    }
}

/// A `TB_RESULT`.
fn encode(mv: &Move, wdl: u32, dtz: u32) -> u32 {
    let promotes = match mv.promotion() {
        Some(Role::Queen) => 1,
        Some(Role::Rook) => 2,
        Some(Role::Bishop) => 3,
        Some(Role::Knight) => 4,
        _ => 0,
    };
    let from = u32::from(mv.from().expect("board move"));
    wdl | u32::from(mv.to()) << 4
        | from << 10
        | promotes << 16
        | u32::from(mv.is_en_passant()) << 19
        | dtz << 20
}

/// A `TbMove`.
fn tb_move(mv: &Move) -> u32 {
    (encode(mv, 0, 0) >> 4) & 0xFFF | ((encode(mv, 0, 0) >> 16) & 7) << 12
}

/// Fathom's root rank of a DTZ move score, with the rule's limit.
fn rank(v: i32, clock: i32, limit: Option<i32>, has_repeated: bool) -> i32 {
    let Some(l) = limit else {
        return v.signum() * 1000;
    };
    if v > 0 {
        if v + clock <= l && !has_repeated {
            1000
        } else {
            (900 + l - (v + clock)).max(1)
        }
    } else if v < 0 {
        if -v * 2 + clock < l {
            -1000
        } else {
            (-900 - l + (-v + clock)).min(-1)
        }
    } else {
        0
    }
}

/// Fathom's root score of a rank.
fn score(r: i32, use_rule50: bool) -> i32 {
    let bound = if use_rule50 { 900 } else { 1 };
    let win = 32000 - 255 - 1;
    if r >= bound {
        win
    } else if r > 0 {
        (r - 800).max(3) * 100 / 200
    } else if r == 0 {
        0
    } else if r > -bound {
        (r + 800).min(-3) * 100 / 200
    } else {
        -win
    }
}

/// What `compare.c` must print for `pos` (its tag lines, in order).
fn expected(tb: &Tablebase, pos: &Chess, index: usize) -> String {
    let limit = tb.rule().limit().map(i32::from);
    let clock = pos.halfmoves();
    let c = clock as i32;
    let mut out = String::new();

    let wdl = (tb.probe_wdl(pos).expect("wdl").to_i8() + 2) as u32;
    writeln!(out, "W {wdl} {}", if clock == 0 { wdl } else { FAILED }).unwrap();

    let moves = tb.best_moves(pos).expect("best moves");
    let dtz = tb.probe_dtz(pos).expect("dtz");
    let root = if pos.is_checkmate() {
        4
    } else if moves.is_empty() {
        2
    } else {
        encode(
            &moves[0].mv,
            clock_wdl(dtz.0.into(), c, limit),
            dtz.plies().into(),
        )
    };
    write!(out, "R {root}").unwrap();
    for m in &moves {
        let v = i32::from(m.dtz.0);
        write!(
            out,
            " {}",
            encode(&m.mv, clock_wdl(v, c, limit), m.dtz.plies().into())
        )
        .unwrap();
    }
    writeln!(out, "\nN {root}").unwrap();

    for (tag, has_repeated, use_rule50) in [('D', false, true), ('d', true, false)] {
        write!(out, "{tag} 1 {}", moves.len()).unwrap();
        for m in &moves {
            let r = rank(m.dtz.0.into(), c, limit, has_repeated);
            write!(out, " {}:{r}:{}", tb_move(&m.mv), score(r, use_rule50)).unwrap();
        }
        out.push('\n');
    }
    for (tag, use_rule50) in [('L', true), ('l', false)] {
        write!(out, "{tag} 1 {}", moves.len()).unwrap();
        for m in &moves {
            let mut w = clock_wdl(m.dtz.0.into(), c, limit);
            if !use_rule50 {
                w = [0, 0, 2, 4, 4][w as usize];
            }
            let (r, s) = (
                [-1000, -899, 0, 899, 1000][w as usize],
                [-31744, -2, 0, 2, 31744][w as usize],
            );
            write!(out, " {}:{r}:{s}", tb_move(&m.mv)).unwrap();
        }
        out.push('\n');
    }

    let v = tb.probe_with_clock(pos, clock).expect("verdict");
    let outcome = match v.outcome {
        dtz50::Outcome::Win => 1,
        dtz50::Outcome::Draw => 0,
        dtz50::Outcome::Loss => -1,
    };
    let margin = v.margin.map_or(-1, |m| m as i32);
    writeln!(
        out,
        "V 1 {} {} {clock} {} {outcome} {margin}",
        v.wdl.to_i8(),
        v.dtz.0,
        v.rule.code()
    )
    .unwrap();

    let occ = pos.board().occupied();
    let sq = Square::new((index % 64) as u32);
    writeln!(
        out,
        "A {} {:x} {:x} {:x} {:x} {:x} {:x} {:x} {} {} {:x}",
        u32::from(sq),
        attacks::king_attacks(sq).0,
        attacks::queen_attacks(sq, occ).0,
        attacks::rook_attacks(sq, occ).0,
        attacks::bishop_attacks(sq, occ).0,
        attacks::knight_attacks(sq).0,
        attacks::pawn_attacks(Color::White, sq).0,
        attacks::pawn_attacks(Color::Black, sq).0,
        occ.count(),
        occ.0.trailing_zeros(),
        (occ.0 & occ.0.wrapping_sub(1)),
    )
    .unwrap();
    out
}

/// Run `compare.c` on `positions` and compare with `tb`; the number of
/// positions that differ (each printed with its FEN).
fn compare(exe: &Path, paths: &str, rule: Rule, tb: &Tablebase, positions: &[Chess]) -> usize {
    compare_with(exe, (paths, None), rule, tb, positions)
}

/// As [`compare`], opening the tables by `dtz50_init_cached` with the
/// bound `cache`, if given.
fn compare_with(
    exe: &Path,
    (paths, cache): (&str, Option<usize>),
    rule: Rule,
    tb: &Tablebase,
    positions: &[Chess],
) -> usize {
    let input: String = positions.iter().map(input_line).collect();
    let rule_arg = rule.code().to_string();
    let cache_arg = cache.map(|c| c.to_string());
    let mut args = vec![paths, &rule_arg];
    args.extend(cache_arg.as_deref());
    let output = run(exe, &args, &input);
    let mut lines = output.lines();
    let init = lines.next().expect("INIT line");
    assert_eq!(
        init,
        format!("INIT 1 4 {}", rule.code()),
        "tb_init, TB_LARGEST, dtz50_rule"
    );
    assert_eq!(
        lines.next(),
        Some(format!("CACHE {}", cache.unwrap_or(0)).as_str()),
        "dtz50_cache_bound"
    );
    let mut mismatches = 0;
    for (i, pos) in positions.iter().enumerate() {
        let want = expected(tb, pos, i);
        let got: Vec<&str> = lines.by_ref().take(want.lines().count()).collect();
        if got != want.lines().collect::<Vec<_>>() {
            mismatches += 1;
            if mismatches <= 10 {
                eprintln!(
                    "mismatch {}:\nC:\n{}\nRust:\n{want}",
                    Fen::from_position(pos, EnPassantMode::Legal),
                    got.join("\n")
                );
            }
        }
    }
    assert_eq!(lines.next(), Some("THREADS ok"), "threads agree");
    assert_eq!(lines.next(), Some("FREE 0 -1"), "tb_free");
    mismatches
}

fn source(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn every_function_matches_the_rust_api() {
    if !have_cc() {
        return;
    }
    let dir = tables();
    let tb = Tablebase::open(dir, Rule::Fifty).expect("tables");
    let mut positions = positions(&Material::all_up_to(4), 120, 0x0c0f_fee0_dead_beef);
    positions.extend(en_passant_positions(300, 0xe9));
    // Bare kings need no table.
    positions.extend(
        [
            "8/8/8/4k3/8/8/8/4K3 w - - 0 1",
            "8/8/8/4k3/8/8/8/4K3 b - - 30 1",
        ]
        .map(|f| {
            f.parse::<Fen>()
                .expect("fen")
                .into_position(CastlingMode::Standard)
                .expect("legal")
        }),
    );
    let ep = positions
        .iter()
        .filter(|p| !p.en_passant_moves().is_empty())
        .count();
    assert!(ep >= 100, "only {ep} en-passant positions");
    let out = tempfile::tempdir().expect("temp dir");

    // Two directories: 3-piece tables in one, 4-piece in the other, the
    // second listed first.
    let (three, four) = (out.path().join("three"), out.path().join("four"));
    for sub in [&three, &four] {
        std::fs::create_dir(sub).expect("mkdir");
    }
    for entry in std::fs::read_dir(dir).expect("tables") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("name").to_owned();
        let material: Material = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse().ok())
            .expect("table name");
        let sub = if material.total() == 3 { &three } else { &four };
        std::fs::copy(&path, sub.join(name)).expect("copy");
    }
    let sep = if cfg!(windows) { ";" } else { ":" };
    let split = format!("{}{sep}{}", four.display(), three.display());

    let mut compared = 0;
    for link in [Link::Static, Link::Shared] {
        let exe = compile(&source("tests/c/compare.c"), link, out.path());
        let one = dir.to_str().expect("utf-8 path");
        assert_eq!(
            compare(&exe, one, Rule::Fifty, &tb, &positions),
            0,
            "{link:?}"
        );
        assert_eq!(
            compare(&exe, &split, Rule::Fifty, &tb, &positions),
            0,
            "{link:?}, split"
        );
        compared += 2 * positions.len();
    }
    // Positional reads, both directories sharing a page cache of 16 MiB:
    // less than the 4-piece tables' files, so pages are dropped and read
    // again while the probes run (on a sample of the positions).
    let sample: Vec<Chess> = positions.iter().step_by(15).cloned().collect();
    for link in [Link::Static, Link::Shared] {
        let exe = compile(&source("tests/c/compare.c"), link, out.path());
        let bounded = (split.as_str(), Some(16 << 20));
        assert_eq!(
            compare_with(&exe, bounded, Rule::Fifty, &tb, &sample),
            0,
            "{link:?}, split, bounded cache"
        );
        compared += sample.len();
    }
    eprintln!(
        "{compared} position probes through C ({} positions, {ep} with en passant, \
         each through every function, static and shared, one and two directories, maps and \
         a bounded cache), 0 mismatches",
        positions.len()
    );
}

#[test]
fn seventy_five_move_tables_through_c() {
    if !have_cc() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let targets: Vec<Material> = ["KQvK", "KRvK", "KPvK", "KBNvK", "KRvKP"]
        .iter()
        .map(|m| m.parse().expect("material"))
        .collect();
    generate_into(dir.path(), &targets, Rule::SeventyFive);
    let tb = Tablebase::open(dir.path(), Rule::SeventyFive).expect("tables");
    let positions = positions(&targets, 300, 75);
    let exe = compile(&source("tests/c/compare.c"), Link::Shared, dir.path());
    let paths = dir.path().to_str().expect("utf-8 path");
    assert_eq!(compare(&exe, paths, Rule::SeventyFive, &tb, &positions), 0);
    eprintln!(
        "{} 75-move positions through C, 0 mismatches",
        positions.len()
    );
}

#[test]
fn fathom_style_root_probe_example() {
    if !have_cc() {
        return;
    }
    let dir = tables();
    let tb = Tablebase::open(dir, Rule::Fifty).expect("tables");
    let out = tempfile::tempdir().expect("temp dir");
    let fens = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "8/8/8/8/8/2k5/8/KQ6 w - - 90 1",
        "8/8/8/4k3/8/8/3K4/R7 b - - 95 1",
        "8/8/8/4k3/8/8/3K4/R7 b - - 0 1",
        "8/4P3/8/8/8/8/k7/7K w - - 0 1",
        "8/8/8/8/3Pp3/8/8/K6k b - d3 0 1",
        "k7/1Q6/2K5/8/8/8/8/8 b - - 0 1",
        "k7/8/1Q6/8/8/8/8/2K5 b - - 0 1",
        "8/8/8/8/8/8/8/K6k w - - 0 1",
    ];
    for link in [Link::Static, Link::Shared] {
        let exe = compile(&source("examples/root_probe.c"), link, out.path());
        for fen in fens {
            let pos: Chess = fen
                .parse::<Fen>()
                .expect("fen")
                .into_position(CastlingMode::Standard)
                .expect("legal");
            let got = run(&exe, &[dir.to_str().expect("utf-8"), fen], "");
            let want = if pos.is_checkmate() {
                "checkmate\n".to_owned()
            } else if pos.is_stalemate() {
                "stalemate\n".to_owned()
            } else {
                let best = &tb.best_moves(&pos).expect("moves")[0];
                let dtz: Dtz = tb.probe_dtz(&pos).expect("dtz");
                let limit = tb.rule().limit().map(i32::from);
                let wdl = clock_wdl(dtz.0.into(), pos.halfmoves() as i32, limit);
                format!(
                    "bestmove {} wdl {wdl} dtz {}\n",
                    best.mv.to_uci(CastlingMode::Standard),
                    dtz.plies()
                )
            };
            assert_eq!(got, want, "{fen} ({link:?})");
        }
    }
}

#[test]
fn bad_input_gives_fathoms_failure_values() {
    if !have_cc() {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    for link in [Link::Static, Link::Shared] {
        let exe = compile(&source("tests/c/bad_input.c"), link, out.path());
        let got = run(&exe, &[tables().to_str().expect("utf-8")], "");
        assert_eq!(got, "ok\n", "{link:?}");
    }
}

#[test]
fn castling_rights_fail_in_the_example() {
    if !have_cc() {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let exe = compile(&source("examples/root_probe.c"), Link::Shared, out.path());
    let status = Command::new(&exe)
        .args([
            tables().to_str().expect("utf-8"),
            "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1",
        ])
        .stderr(Stdio::null())
        .status()
        .expect("runs");
    assert_eq!(status.code(), Some(2), "probe failed, exit 2");
}
