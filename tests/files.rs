//! Table files: round trips, corruption, the probe facade, the clock.

mod common;

use std::{
    path::PathBuf,
    sync::{Mutex, OnceLock},
};

use dtz50::{
    format::{
        FormatError, HEADER_LEN, Header, OrderSearch, SideStats, SolvedValues, TRAILER_LEN,
        TableFile, write_table,
    },
    generate::{DeepStep, FileValues, Table, deep_check, stats},
    index::{Layout, TableIndex},
    material::Material,
    probe::{ProbeError, Tablebase, won_by_zeroing},
    value::{Dtz, Outcome, Rule, Wdl},
};
use shakmaty::{ByColor, Chess, Color, EnPassantMode, Position};
use tempfile::TempDir;

/// KQvK, KRvK and KPvK (with sub-tables) generated once, for every rule.
fn tables(rule: Rule) -> &'static (TempDir, Tablebase) {
    static FIFTY: OnceLock<(TempDir, Tablebase)> = OnceLock::new();
    static SEVENTY_FIVE: OnceLock<(TempDir, Tablebase)> = OnceLock::new();
    let cell = match rule {
        Rule::SeventyFive => &SEVENTY_FIVE,
        _ => &FIFTY,
    };
    cell.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let targets: Vec<Material> = ["KQvK", "KRvK", "KPvK"]
            .iter()
            .map(|s| s.parse().expect("material"))
            .collect();
        let tb = common::generate_files(dir.path(), &targets, rule);
        (dir, tb)
    })
}

fn file_path(rule: Rule, name: &str) -> PathBuf {
    tables(rule).0.path().join(format!("{name}.dtz50"))
}

#[test]
fn files_hold_exactly_the_solved_values() {
    let set = common::solve_set(&["KPvK".parse().expect("material")], Rule::Fifty);
    let material: Material = "KPvK".parse().expect("material");
    let solved = set.get(&material).expect("solved");
    let bytes = std::fs::read(file_path(Rule::Fifty, "KPvK")).expect("file");
    let file = TableFile::new(bytes).expect("valid file");
    file.verify().expect("verifies");
    assert_eq!(file.header().material, material);
    assert_eq!(file.header().rule, Rule::Fifty);
    // The file numbers positions in its own order of digits.
    let layout = solved.layout();
    let to_file = ByColor::new_with(|turn| layout.reorder_to(file.layout(turn)));
    let solved_stats = stats(solved);
    let want = ByColor::new_with(|turn| {
        let side = *solved_stats.get(turn);
        SideStats {
            longest_at: side
                .longest_at
                .map(|i| TableIndex(to_file.get(turn).apply(i.0))),
            ..side
        }
    });
    assert_eq!(file.header().stats, want);
    // The side whose DTZ is not kept is read by a one-ply search, a kept
    // win that a zeroing move decides by finding that move, and a WDL kept
    // lower than it is by the best capture.
    let tb = &tables(Rule::Fifty).1;
    let (mut kept, mut decided, mut searched, mut raised) = (0, 0, 0, 0);
    for turn in Color::ALL {
        for i in 0..layout.size() {
            let index = TableIndex(i);
            let Some(dtz) = solved.dtz(turn, index) else {
                continue;
            };
            let probe = || layout.position(&layout.decode(index), turn).expect("legal");
            let wdl = Wdl::from_dtz(dtz, Rule::Fifty);
            let in_file = TableIndex(to_file.get(turn).apply(i));
            let kept_wdl = file.kept_wdl(turn, in_file).expect("wdl");
            if kept_wdl != wdl {
                assert!(
                    kept_wdl < wdl,
                    "{turn:?} {i}: kept {kept_wdl:?} above {wdl:?}"
                );
                assert_eq!(tb.probe_wdl(&probe()).expect("probe"), wdl, "{turn:?} {i}");
                raised += 1;
            }
            match file.dtz_given(turn, in_file, wdl).expect("dtz") {
                Some(stored) if stored == dtz => kept += 1,
                Some(_) => {
                    // A win that a zeroing move decides: the probe finds it.
                    assert_eq!(Dtz::fastest(wdl, Rule::Fifty), Some(dtz));
                    assert_eq!(tb.probe_dtz(&probe()).expect("probe"), dtz, "{turn:?} {i}");
                    decided += 1;
                }
                None => {
                    assert_ne!(turn, file.dtz_side());
                    assert_ne!(dtz, Dtz(0), "draws are kept for both sides");
                    assert_eq!(tb.probe_dtz(&probe()).expect("probe"), dtz, "{turn:?} {i}");
                    searched += 1;
                }
            }
        }
    }
    eprintln!("{kept} kept, {decided} decided, {searched} searched, {raised} raised");
    assert!(
        kept > 50_000 && decided > 10_000 && searched > 40_000 && raised > 1_000,
        "{kept} kept, {decided} decided by a zeroing move, {searched} searched, {raised} raised by a capture"
    );
}

/// `material` built into a temporary directory and solved in memory (both
/// over the 3-4 set's files of its sub-tables), and every position of the
/// file read against the solved value of the same position (the file's
/// order mapped to the solver's), a chunk at a time (bulk readers) and one
/// position at a time. Returns the directory, its tables and how many
/// positions were compared.
fn read_back_against_the_solver(material: Material) -> (TempDir, Tablebase, u64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tb = common::generate_over_set(dir.path(), material);
    let solved = &common::solve_over_set(material);
    let values = FileValues::new(&tb, &material).expect("opens");
    let file = values.file();
    let to_solver = ByColor::new_with(|turn| file.layout(turn).reorder_to(solved.layout()));
    let mut compared = 0u64;
    for chunk in 0..file.chunk_count() {
        let (turn, range) = file.chunk_range(chunk);
        let entries = values.chunk(chunk).expect("chunk");
        for (index, (wdl, dtz)) in range.zip(entries) {
            if !file.layout(turn).names_placement(index) {
                continue;
            }
            let solver = TableIndex(to_solver.get(turn).apply(index));
            let Some(want) = solved.dtz(turn, solver) else {
                continue;
            };
            let at = format!("{turn:?} file {index} solver {}", solver.0);
            assert_eq!(wdl, Wdl::from_dtz(want, Rule::Fifty), "{at}");
            let one = file.dtz_given(turn, TableIndex(index), wdl).expect("dtz");
            assert_eq!(one, dtz, "{at}");
            // Kept DTZ is exact but for wins a zeroing move may decide.
            if let Some(dtz) = dtz
                && Dtz::fastest(wdl, Rule::Fifty) != Some(want)
            {
                assert_eq!(dtz, want, "{at}");
            }
            compared += 1;
        }
    }
    drop(values);
    (dir, tb, compared)
}

/// A pawn table's kings may be any of its digits: KNvKP's file puts the
/// knight first and White's king last (56 % fewer bytes than the solver's
/// order), and every position reads the solved value; the deep check
/// passes.
#[test]
fn a_pawn_file_with_its_kings_moved_reads_the_solved_values() {
    let material: Material = "KNvKP".parse().expect("material");
    let (_dir, tb, compared) = read_back_against_the_solver(material);
    let file = tb.table(&material).expect("built");
    assert_eq!(
        file.header().wdl_orders.white,
        [2, 1, 0],
        "knight, black king, white king"
    );
    assert_eq!(compared, legal_positions(file.header()));
    assert_deep_check_passes(&tb, &material);
}

/// A table of symmetric material keeps White to move only, WDL and DTZ:
/// Black to move reads the mirrored position (colours swapped), and every
/// position of both sides reads the solved value, DTZ exact without a
/// search. KRvKR (its king pair moved too: `rKkR`) and KPvKP (pawns).
#[test]
fn a_symmetric_file_keeps_white_to_move_and_reads_both_sides() {
    for name in ["KRvKR", "KPvKP"] {
        let material: Material = name.parse().expect("material");
        let (dir, tb, compared) = read_back_against_the_solver(material);
        let file = tb.table(&material).expect("built");
        assert!(file.is_mirrored(), "{name}");
        assert_eq!(file.dtz_side(), Color::White, "{name}");
        // The trailer's places for Black's WDL and DTZ are zeros.
        let bytes = std::fs::read(dir.path().join(format!("{name}.dtz50"))).expect("file");
        let trailer = &bytes[bytes.len() - TRAILER_LEN..];
        assert!(trailer[32..64].iter().all(|&b| b == 0), "{name}: WDL black");
        assert!(
            trailer[96..128].iter().all(|&b| b == 0),
            "{name}: DTZ black"
        );
        assert_eq!(compared, legal_positions(file.header()), "{name}");
        // KPvKP's wins where a double push allows an en-passant capture
        // and a zeroing move wins at once keep any DTZ; the deep check
        // takes them as a reader does (it reported 1,413 of them before).
        assert_deep_check_passes(&tb, &material);
    }
}

/// A kept win that a zeroing move decides may keep any DTZ code, code 0
/// (which reads as DTZ 0, no win's) included; where a double push of
/// the position allows an en-passant capture (left to the deep check's
/// general path), the check must still take it as a reader does. KPvKP
/// is written with one such White win left to the writer right after a
/// loss it is made to keep as a loss in 1 (code 0): the check reports as
/// many positions as when the win is kept exact (the changed loss and
/// what relies on it). It reported the win too before (KPPvKP's 2,439).
#[test]
fn a_zeroing_win_kept_as_code_0_is_read_as_a_reader_reads_it() {
    /// KPvKP with White's loss at `loss_in_1` written as a loss in 1,
    /// and White's win at `left_open` left to the writer.
    struct Changed<'a> {
        table: &'a Table,
        loss_in_1: u64,
        left_open: Option<u64>,
    }
    impl SolvedValues for Changed<'_> {
        fn layout(&self) -> &Layout {
            self.table.layout()
        }
        fn rule(&self) -> Rule {
            self.table.rule()
        }
        fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
            match turn {
                Color::White if index == self.loss_in_1 => Some(Dtz(-1)),
                _ => self.table.value(turn, index),
            }
        }
        fn zeroing_decides(&self, turn: Color, index: u64, _: Dtz) -> bool {
            turn == Color::White && Some(index) == self.left_open
        }
    }
    let material: Material = "KPvKP".parse().expect("material");
    let dir = tempfile::tempdir().expect("temp dir");
    let solved = common::solve_over_set(material);
    // The first such win in White's file order whose last decisive
    // position before it is a loss (all other wins are kept exact).
    let (loss, win, win_in_file) = {
        let tb = common::generate_over_set(dir.path(), material);
        let file = tb.table(&material).expect("built");
        assert!(file.is_mirrored());
        let layout = file.dtz_layout();
        let to_solver = layout.reorder_to(solved.layout());
        let mut last_loss = None;
        let mut found = None;
        for index in (0..layout.size()).filter(|&i| layout.names_placement(i)) {
            let solver = to_solver.apply(index);
            match solved.dtz(Color::White, TableIndex(solver)) {
                None | Some(Dtz(0)) => {}
                Some(Dtz(d)) if d < 0 => last_loss = Some(solver),
                Some(Dtz(1))
                    if last_loss.is_some()
                        && allows_en_passant(layout, index)
                        && won_by_zeroing(&tb, &position(layout, index), Wdl::Win)
                            .expect("probes")
                            .is_some() =>
                {
                    found = last_loss.map(|loss| (loss, solver, index));
                    break;
                }
                Some(_) => last_loss = None,
            }
        }
        found.expect("a win decided by a zeroing move, after a loss, allowing en passant")
    };
    let path = dir.path().join("KPvKP.dtz50");
    let inconsistent = |left_open: Option<u64>| {
        let changed = Changed {
            table: &solved,
            loss_in_1: loss,
            left_open,
        };
        let out = std::fs::File::create(&path).expect("create");
        write_table(
            &changed,
            &stats(&solved),
            OrderSearch::Recorded,
            out,
            &|_| {},
        )
        .expect("write");
        let tb = Tablebase::open(dir.path(), Rule::Fifty).expect("open");
        let file = tb.table(&material).expect("written");
        let kept = file
            .dtz_given(Color::White, TableIndex(win_in_file), Wdl::Win)
            .expect("reads");
        let want = if left_open.is_some() { 0 } else { 1 };
        assert_eq!(kept, Some(Dtz(want)), "the win's kept DTZ");
        let report = deep_check(&tb, &material, None, &|_| {}).expect("deep check runs");
        assert!(report.inconsistent > 0, "the changed loss is found");
        report.inconsistent
    };
    assert_eq!(inconsistent(Some(win)), inconsistent(None));
}

/// White to move at `index` of `layout`.
fn position(layout: &Layout, index: u64) -> Chess {
    let placement = layout.decode(TableIndex(index));
    layout.position(&placement, Color::White).expect("legal")
}

/// Whether a double push of White's at `index` of `layout` allows an
/// en-passant capture.
fn allows_en_passant(layout: &Layout, index: u64) -> bool {
    let pos = position(layout, index);
    pos.legal_moves().iter().any(|m| {
        let mut after = pos.clone();
        after.play_unchecked(*m);
        after.ep_square(EnPassantMode::Legal).is_some()
    })
}

/// The legal positions of a file, both sides to move (its header's counts).
fn legal_positions(header: &Header) -> u64 {
    header.stats.iter().flat_map(|side| side.counts).sum()
}

/// `verify --deep` finds no inconsistent position in `material`'s file,
/// and tells its progress: seeding, reading, deriving and checking, in
/// that order, each pass over chunks by tenths.
fn assert_deep_check_passes(tb: &Tablebase, material: &Material) {
    let steps = Mutex::new(Vec::new());
    let report = deep_check(tb, material, None, &|step| {
        steps.lock().expect("lock").push(step);
    })
    .expect("deep check runs");
    assert_eq!(report.inconsistent, 0, "{material}: {:?}", report.examples);
    // Threads report tenths as their chunks finish, so a pass's tenths
    // may come in any order; the phases may not.
    let mut steps = steps.into_inner().expect("lock");
    let phase = |step: &DeepStep| match step {
        DeepStep::Seeding { .. } => 0,
        DeepStep::Reading => 1,
        DeepStep::Deriving => 2,
        DeepStep::Checking { .. } => 3,
    };
    assert!(steps.is_sorted_by_key(phase), "{material}: {steps:?}");
    steps.sort_by_key(|step| match step {
        DeepStep::Seeding { percent } | DeepStep::Checking { percent } => (phase(step), *percent),
        _ => (phase(step), 0),
    });
    let tenths = |pass: fn(u8) -> DeepStep| (0..10).map(move |t| pass(t * 10));
    let expected: Vec<DeepStep> = tenths(|percent| DeepStep::Seeding { percent })
        .chain([DeepStep::Reading, DeepStep::Deriving])
        .chain(tenths(|percent| DeepStep::Checking { percent }))
        .collect();
    assert_eq!(steps, expected, "{material}");
}

/// Identical pieces: the file keeps one order of their squares, and every
/// order reads the solved values; the deep check passes.
#[test]
fn identical_pieces_read_the_same_in_every_order() {
    let material: Material = "KRRvK".parse().expect("material");
    let (_dir, tb, compared) = read_back_against_the_solver(material);
    let layout = tb.table(&material).expect("built").layout(Color::White);
    let unsorted = (0..layout.size())
        .filter(|&i| layout.names_placement(i) && layout.sorted_identical(i) != i)
        .count();
    // Per stored king placement (the 462 pairs; White to move's order is
    // `KkRR`), one index of each pair of distinct rook squares.
    assert_eq!(unsorted, 462 * 64 * 63 / 2);
    assert!(compared > 2_000_000, "{compared} positions compared");
    let report = deep_check(&tb, &material, None, &|_| {}).expect("deep check runs");
    assert_eq!(report.inconsistent, 0, "{:?}", report.examples);
}

/// A file numbers each stream in the order it chose for it: KRNvK's
/// White-to-move WDL keeps the solver's order, its Black-to-move WDL is
/// led by Black's king (the board turned to put it in a1-d1-d4, White's
/// king the lowest digit) and its DTZ by the knight, Black's king next
/// (format 13's flag); KQBvK's Black-to-move WDL is led by Black's
/// king and its DTZ by the queen. Every position reads
/// the solved value of the same position in the solver's order, the
/// header's longest DTZ names a position of that DTZ in its side's order,
/// and the deep check, which maps each side's order to White's, passes.
#[test]
fn a_file_in_other_piece_orders_reads_the_solved_values() {
    let orders: [(&str, [[u8; 4]; 3]); 2] = [
        // Flagged leads (format 13): KRNvK's DTZ by the knight (8 | 3),
        // KQBvK's by the queen (8 | 2).
        ("KRNvK", [[0, 1, 2, 3], [1, 2, 3, 0], [11, 1, 2, 0]]),
        ("KQBvK", [[0, 1, 2, 3], [1, 2, 3, 0], [10, 1, 3, 0]]),
    ];
    for (name, [white, black, dtz]) in orders {
        let material: Material = name.parse().expect("material");
        let (_dir, tb, compared) = read_back_against_the_solver(material);
        let file = tb.table(&material).expect("built");
        assert_eq!(file.header().wdl_orders.white, white, "{name}");
        assert_eq!(file.header().wdl_orders.black, black, "{name}");
        assert_eq!(file.header().dtz_order, dtz, "{name}");
        assert_eq!(file.layout(Color::White).order(), white);
        assert_eq!(file.layout(Color::Black).order(), black);
        assert_deep_check_passes(&tb, &material);
        assert_eq!(compared, legal_positions(file.header()), "{name}");
        for turn in Color::ALL {
            let side = file.header().stats.get(turn);
            let at = side.longest_at.expect("decisive positions");
            let layout = file.layout(turn);
            let pos = layout.position(&layout.decode(at), turn).expect("legal");
            let dtz = tb.probe_dtz(&pos).expect("probe");
            assert_eq!(dtz.plies(), side.longest(), "{name} {turn:?}");
        }
    }
}

#[test]
fn same_input_gives_identical_bytes_whatever_the_thread_count() {
    // The sub-tables are copied from the 3-4 set: made first (if need be)
    // with every thread, not inside a pool of one.
    common::set_3_4();
    let build = |threads: usize| {
        let dir = tempfile::tempdir().expect("temp dir");
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| common::generate_over_set(dir.path(), "KRvKP".parse().expect("m")));
        std::fs::read(dir.path().join("KRvKP.dtz50")).expect("file")
    };
    let one = build(1);
    assert_eq!(one, build(2));
    assert_eq!(one, build(3));
}

fn corrupt_copy(rule: Rule, name: &str, change: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut bytes = std::fs::read(file_path(rule, name)).expect("file");
    change(&mut bytes);
    bytes
}

#[test]
fn a_flipped_byte_is_found_and_its_section_named() {
    let original = std::fs::read(file_path(Rule::Fifty, "KRvK")).expect("file");
    let file = TableFile::new(original.as_slice()).expect("valid");
    file.verify().expect("intact file verifies");
    let len = original.len();
    let trailer = &original[len - TRAILER_LEN..];
    let offset =
        |at: usize| u64::from_le_bytes(trailer[at..at + 8].try_into().expect("8")) as usize;
    let head_len = |stream: usize| {
        u32::from_le_bytes(
            trailer[32 * stream + 12..32 * stream + 16]
                .try_into()
                .expect("4"),
        ) as usize
    };
    // The file keeps one side's DTZ; the other DTZ place is zeros.
    let (kept, side) = match file.dtz_side() {
        Color::White => (2, "white"),
        Color::Black => (3, "black"),
    };
    assert!(trailer[32 * (5 - kept)..][..32].iter().all(|&b| b == 0));
    // A byte in the first WDL block, in the first DTZ block, in a stream's
    // head, in its block counts, in the header statistics, and in the file
    // checksum.
    let cases = [
        (
            offset(0) + 3,
            "wdl block 0 (white to move) is corrupt".to_owned(),
        ),
        (
            offset(kept * 32) + 5,
            format!("dtz block 0 ({side} to move) is corrupt"),
        ),
        (
            offset(32 + 16) + 9,
            "bad wdl section: black to move: head checksum mismatch".to_owned(),
        ),
        (
            offset(kept * 32 + 16) + head_len(kept) + 1,
            format!("bad dtz section: {side} to move: block counts or index bytes"),
        ),
        (60, "bad header: checksum mismatch".to_owned()),
        (len - 1, "header checksum mismatch".to_owned()),
    ];
    for (at, expected) in cases {
        let bytes = corrupt_copy(Rule::Fifty, "KRvK", |b| b[at] ^= 0x40);
        let err = TableFile::new(bytes.as_slice())
            .and_then(|f| f.verify())
            .expect_err("corruption detected");
        assert!(err.to_string().starts_with(&expected), "byte {at}: {err}");
    }
}

#[test]
fn truncated_files_fail_on_open() {
    let full = std::fs::read(file_path(Rule::Fifty, "KQvK")).expect("file");
    for keep in [0, 10, HEADER_LEN, full.len() / 2, full.len() - 1] {
        let err = TableFile::new(&full[..keep]).expect_err("truncation detected");
        assert!(
            matches!(
                err,
                FormatError::TooShort { .. } | FormatError::Length { .. } | FormatError::BadMagic
            ),
            "{keep}: {err}"
        );
    }
    // Through the facade: a truncated file in a directory names the path.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("KQvK.dtz50"), &full[..full.len() - 100]).expect("write");
    let tb = Tablebase::open(dir.path(), Rule::Fifty).expect("dir");
    let err = tb
        .probe_dtz(&common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1"))
        .expect_err("corrupt");
    assert!(matches!(err, ProbeError::Corrupt { .. }));
    assert!(err.to_string().contains("KQvK.dtz50"), "{err}");
    // The cause is kept as the error's source, not repeated in its text.
    let cause = std::error::Error::source(&err).expect("a source");
    assert!(cause.is::<FormatError>(), "{cause}");
    assert!(cause.to_string().starts_with("truncated"), "{cause}");
    assert!(!err.to_string().contains("truncated"), "{err}");
}

#[test]
fn another_version_or_rule_is_a_clear_error() {
    // Older versions, 15 and 14 among them (other symbol entries; at most
    // 4,095 symbols a stream before 15).
    for version in [15, 14, 13, 11] {
        let bytes = corrupt_copy(Rule::Fifty, "KQvK", |b| b[8] = version);
        assert_eq!(
            TableFile::new(bytes.as_slice())
                .expect_err("version")
                .to_string(),
            format!(
                "format version {version}, this dtz50 reads version 16; `dtz50 generate` into its directory rebuilds it"
            )
        );
    }
    let bytes = corrupt_copy(Rule::Fifty, "KQvK", |b| b[8] = 11);
    // Through the facade: named, and not called corrupt.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("KQvK.dtz50");
    std::fs::write(&path, &bytes).expect("write");
    let err = Tablebase::open(dir.path(), Rule::Fifty)
        .expect("dir")
        .probe_wdl(&common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1"))
        .expect_err("version");
    assert!(matches!(err, ProbeError::Unsupported { .. }));
    assert_eq!(
        dtz50::probe::error_chain(&err),
        format!(
            "cannot use table {}: format version 11, this dtz50 reads version 16; `dtz50 generate` into its directory rebuilds it",
            path.display()
        )
    );
    let bytes = corrupt_copy(Rule::Fifty, "KQvK", |b| b[0] = b'X');
    assert!(matches!(
        TableFile::new(bytes.as_slice()).expect_err("magic"),
        FormatError::BadMagic
    ));
    let tb = Tablebase::open(tables(Rule::SeventyFive).0.path(), Rule::Fifty).expect("dir");
    let err = tb
        .probe_wdl(&common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1"))
        .expect_err("rule");
    assert!(matches!(
        err,
        ProbeError::RuleMismatch {
            expected: Rule::Fifty,
            got: Rule::SeventyFive,
            ..
        }
    ));
    assert!(
        err.to_string()
            .ends_with("was built for rule 75, asked for rule 50"),
        "{err}"
    );
}

#[test]
fn missing_tables_and_unsupported_positions_are_named() {
    let (dir, tb) = tables(Rule::Fifty);
    let err = tb
        .probe_dtz(&common::fen("8/8/8/8/8/2k5/8/KQ5B w - - 0 1"))
        .expect_err("missing");
    assert_eq!(
        err.to_string(),
        format!("missing table KQBvK in {}", dir.path().display())
    );
    let err = tb
        .probe_dtz(&common::fen("r3k3/8/8/8/8/8/8/4K3 b q - 0 1"))
        .expect_err("castling");
    assert!(matches!(err, ProbeError::CastlingRights), "{err}");
    let err = tb
        .probe_dtz(&common::fen("7k/8/8/8/8/8/8/KQRBNR2 w - - 0 1"))
        .expect_err("too many");
    assert!(
        matches!(err, ProbeError::TooManyPieces { count: 7 }),
        "{err}"
    );
}

#[test]
fn the_facade_is_shared_between_threads() {
    let (_, tb) = tables(Rule::Fifty);
    let fens = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "8/8/8/8/8/2k5/8/KR6 b - - 0 1",
        "8/8/8/8/8/8/P7/K6k w - - 0 1",
    ];
    let expected: Vec<Dtz> = fens
        .iter()
        .map(|f| tb.probe_dtz(&common::fen(f)).expect("probe"))
        .collect();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    for (f, e) in fens.iter().zip(&expected) {
                        assert_eq!(tb.probe_dtz(&common::fen(f)).expect("probe"), *e);
                    }
                }
            });
        }
    });
}

/// A position of `table` with the given DTZ, from the table itself.
fn position_with_dtz(rule: Rule, name: &str, want: i16) -> Chess {
    let (_, tb) = tables(rule);
    let table = tb.table(&name.parse().expect("material")).expect("table");
    for turn in Color::ALL {
        let layout = table.layout(turn);
        for i in 0..layout.size() {
            let Some(pos) = layout.position(&layout.decode(TableIndex(i)), turn) else {
                continue;
            };
            let dtz = tb.probe_dtz(&pos).expect("probe");
            if dtz == Dtz(want) && !pos.is_checkmate() {
                return pos;
            }
        }
    }
    panic!("{name} has no position with DTZ {want}");
}

#[test]
fn the_clock_boundary_is_exact_for_wins_and_losses() {
    let (_, tb) = tables(Rule::Fifty);
    for (name, dtz) in [("KRvK", 31), ("KQvK", 17), ("KRvK", -30), ("KQvK", -20)] {
        let pos = position_with_dtz(Rule::Fifty, name, dtz);
        assert_eq!(tb.probe_dtz(&pos).expect("probe"), Dtz(dtz));
        let plies = u32::from(dtz.unsigned_abs());
        let decisive = if dtz > 0 { Outcome::Win } else { Outcome::Loss };
        let at = tb.probe_with_clock(&pos, 100 - plies).expect("probe");
        assert_eq!(at.outcome, decisive, "{name} dtz {dtz} + h == 100");
        assert_eq!(at.margin, Some(0));
        let past = tb.probe_with_clock(&pos, 101 - plies).expect("probe");
        assert_eq!(past.outcome, Outcome::Draw, "{name} dtz {dtz} + h == 101");
    }
}

#[test]
fn mate_on_the_hundredth_ply_wins() {
    let (_, tb) = tables(Rule::Fifty);
    // White mates with Qb2# (a quiet move) as the 100th ply.
    let before = common::fen("8/8/8/8/8/2Q5/k7/2K5 w - - 99 80");
    let verdict = tb.probe(&before).expect("probe");
    assert_eq!((verdict.dtz, verdict.outcome), (Dtz(1), Outcome::Win));
    let best = tb.best_moves(&before).expect("moves");
    assert_eq!(best[0].dtz, Dtz(1));
    assert_eq!(best[0].outcome, Outcome::Win);
    let mut after = before.clone();
    after.play_unchecked(best[0].mv);
    assert!(after.is_checkmate());
    assert_eq!(after.halfmoves(), 100);
    assert_eq!(tb.probe(&after).expect("probe").outcome, Outcome::Loss);
}

#[test]
fn the_seventy_five_move_rule_moves_the_boundary_to_150() {
    let (_, tb) = tables(Rule::SeventyFive);
    let pos = position_with_dtz(Rule::SeventyFive, "KRvK", 31);
    assert_eq!(
        tb.probe_with_clock(&pos, 119).expect("probe").outcome,
        Outcome::Win
    );
    assert_eq!(
        tb.probe_with_clock(&pos, 120).expect("probe").outcome,
        Outcome::Draw
    );
    let fifty = &tables(Rule::Fifty).1;
    assert_eq!(
        fifty.probe_with_clock(&pos, 70).expect("probe").outcome,
        Outcome::Draw
    );
}

#[test]
fn best_moves_keep_a_win_that_survives_the_clock() {
    let (_, tb) = tables(Rule::Fifty);
    let pos = common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1");
    let ranked = tb.best_moves(&pos).expect("moves");
    let dtz = tb.probe_dtz(&pos).expect("dtz");
    assert_eq!(
        ranked[0].dtz, dtz,
        "the best move realises the position's DTZ"
    );
    assert!(ranked.windows(2).all(|w| {
        let rank = |o: Outcome| match o {
            Outcome::Win => 0,
            Outcome::Draw => 1,
            Outcome::Loss => 2,
        };
        rank(w[0].outcome) <= rank(w[1].outcome)
    }));
}

#[test]
fn file_backed_work_arrays_give_the_same_table() {
    let material: Material = "KRvKN".parse().expect("material");
    let in_memory = common::solve_set(&[material], Rule::Fifty);
    let work = tempfile::tempdir().expect("temp dir");
    let options = dtz50::generate::SolveOptions {
        rule: Rule::Fifty,
        work_dir: Some(work.path().to_path_buf()),
        ..dtz50::generate::SolveOptions::default()
    };
    let mut subtables = dtz50::generate::TableSet::new();
    for sub in Material::with_dependencies(&[material]) {
        if sub != material {
            let t = dtz50::generate::solve(sub, &options, &subtables, &|_| {}).expect("solves");
            subtables.insert(t);
        }
    }
    let on_disk = dtz50::generate::solve(material, &options, &subtables, &|_| {}).expect("solves");
    let reference = in_memory.get(&material).expect("solved");
    for turn in Color::ALL {
        for i in 0..reference.layout().size() {
            assert_eq!(
                on_disk.dtz(turn, TableIndex(i)),
                reference.dtz(turn, TableIndex(i))
            );
        }
    }
    // The work file is unlinked at once: nothing is left in the directory.
    assert_eq!(std::fs::read_dir(work.path()).expect("dir").count(), 0);
}

/// Positional reads: a file truncated while open gives a read error for
/// the blocks it no longer holds (never a SIGBUS), and answers again once
/// it is whole; the shared cache stays within its bound.
#[test]
fn positional_reads_survive_a_file_truncated_while_open() {
    use std::sync::Arc;

    use dtz50::format::{BlockCache, PositionalFile};

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("KQvK.dtz50");
    let bytes = std::fs::read(file_path(Rule::Fifty, "KQvK")).expect("file");
    std::fs::write(&path, &bytes).expect("copy");
    // A cache that keeps nothing: every probe reads its block again.
    let cache = Arc::new(BlockCache::new(0));
    let source = PositionalFile::open(&path).expect("open");
    let file = TableFile::with_cache(source, cache.clone()).expect("valid");
    let at = TableIndex(1000);
    let wdl = file.kept_wdl(Color::White, at).expect("whole file");
    let dtz = file.dtz_given(Color::White, at, wdl).expect("whole file");

    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open")
        .set_len(HEADER_LEN as u64 + 10)
        .expect("truncate");
    let err = file.kept_wdl(Color::White, at).expect_err("truncated");
    assert!(matches!(err, FormatError::Read { .. }), "{err}");
    let cause = std::error::Error::source(&err).expect("the read error");
    let io = cause
        .downcast_ref::<std::io::Error>()
        .expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::UnexpectedEof);

    std::fs::write(&path, &bytes).expect("restore in place");
    assert_eq!(file.kept_wdl(Color::White, at).expect("whole again"), wdl);
    let again = file.dtz_given(Color::White, at, wdl).expect("whole again");
    assert_eq!(again, dtz);
    assert_eq!(cache.bytes(), 0);

    // Through the facade, with a bound: every value agrees with the map.
    let bounded = Tablebase::open_positional(dir.path(), Rule::Fifty, 1 << 16).expect("dir");
    let mapped = Tablebase::open(dir.path(), Rule::Fifty).expect("dir");
    let pos = common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1");
    assert_eq!(
        bounded.probe_dtz(&pos).expect("probe"),
        mapped.probe_dtz(&pos).expect("probe")
    );
    assert_eq!(bounded.cache_bytes(), Some(1 << 16));
    assert_eq!(mapped.cache_bytes(), None);
}

/// A damaged block is named by file, section and block, each once.
#[test]
fn a_corrupt_block_names_the_file_section_and_block() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("KQvK.dtz50");
    let mut bytes = std::fs::read(file_path(Rule::Fifty, "KQvK")).expect("file");
    // The first WDL block (White to move): its offset is the trailer's
    // first field.
    let trailer = bytes.len() - TRAILER_LEN;
    let first = u64::from_le_bytes(bytes[trailer..trailer + 8].try_into().expect("8")) as usize;
    bytes[first..first + 4].copy_from_slice(b"junk");
    std::fs::write(&path, &bytes).expect("write");
    for tables in [
        Tablebase::open(dir.path(), Rule::Fifty).expect("dir"),
        Tablebase::open_positional(dir.path(), Rule::Fifty, 1 << 20).expect("dir"),
    ] {
        let err = tables
            .probe_wdl(&common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1"))
            .expect_err("corrupt");
        assert_eq!(
            dtz50::probe::error_chain(&err),
            format!(
                "corrupt table {}: wdl block 0 (white to move) is corrupt",
                path.display()
            )
        );
    }
}

/// DTZ read through held decoded blocks is DTZ read by decoding: every
/// position of KQvK, KRvK and KPvK, both sides to move, probed with the
/// default cache, with none, and with one so small that it drops blocks
/// all the time; each cache stays within its bound.
#[test]
fn held_dtz_blocks_read_as_decoding_them_does() {
    let dir = tables(Rule::Fifty).0.path();
    let default = Tablebase::open(dir, Rule::Fifty).expect("dir");
    let none = Tablebase::open(dir, Rule::Fifty)
        .expect("dir")
        .with_decoded_cache(0);
    let small = Tablebase::open(dir, Rule::Fifty)
        .expect("dir")
        .with_decoded_cache(24 << 10);
    assert_eq!(none.decoded_cache_bytes(), None);
    let mut probed = 0u64;
    for name in ["KQvK", "KRvK", "KPvK"] {
        let material: Material = name.parse().expect("material");
        let layout = dtz50::index::Layout::new(material);
        for turn in [Color::White, Color::Black] {
            for index in 0..layout.size() {
                let Some(pos) = layout.position(&layout.decode(TableIndex(index)), turn) else {
                    continue;
                };
                let want = none.probe_dtz(&pos).expect("dtz");
                assert_eq!(default.probe_dtz(&pos).expect("dtz"), want, "{index}");
                assert_eq!(small.probe_dtz(&pos).expect("dtz"), want, "{index}");
                probed += 1;
            }
        }
        assert!(small.decoded_cache_used().expect("a cache") <= 24 << 10);
    }
    assert!(probed > 250_000, "{probed}");
    let used = default.decoded_cache_used().expect("a cache");
    assert!(
        used > 0 && used <= dtz50::probe::DEFAULT_DECODED_BYTES,
        "{used}"
    );
}

/// DTZ located on the board in the DTZ stream's own order reads what the
/// WDL index mapped to that order reads: every position of KQvK, KRvK
/// and KPvK (the first two keep DTZ in another order than WDL), both
/// sides to move, as given and with the colours swapped, for each WDL.
#[test]
fn dtz_located_in_its_own_order_reads_as_through_the_wdl_index() {
    let tb = &tables(Rule::Fifty).1;
    let mut read = 0u64;
    for name in ["KQvK", "KRvK", "KPvK"] {
        let material: Material = name.parse().expect("material");
        let file = tb.table(&material).expect("generated");
        let layout = file.layout(Color::White);
        for index in 0..layout.size() {
            let placement = layout.decode(TableIndex(index));
            for turn in Color::ALL {
                let Some(pos) = layout.position(&placement, turn) else {
                    continue;
                };
                let swapped = pos.board().clone().into_mirrored();
                for (board, turn) in [(pos.board(), turn), (&swapped, turn.other())] {
                    let (kept_turn, kept_index) = file.locate(board, turn).expect("this table");
                    for wdl in [Wdl::Win, Wdl::Draw, Wdl::Loss] {
                        let want = file.dtz_given(kept_turn, kept_index, wdl).expect("dtz");
                        let got = file.dtz_of_board(board, turn, wdl).expect("this table");
                        assert_eq!(got.expect("dtz"), want, "{name} {index} {turn:?} {wdl:?}");
                        read += u64::from(want.is_some_and(|dtz| dtz != Dtz(0)));
                    }
                }
            }
        }
    }
    // Most reads are of the kept side's codes, not draws or the other side.
    assert!(read > 300_000, "{read}");
    // Another material is not this table's, in either colours.
    let kqvk = tb.table(&"KQvK".parse().expect("material")).expect("KQvK");
    let krvk: shakmaty::Board = "8/8/8/4k3/8/8/8/R3K3".parse().expect("board");
    for board in [krvk.clone(), krvk.into_mirrored()] {
        assert!(kqvk.dtz_of_board(&board, Color::White, Wdl::Win).is_none());
    }
}

/// A damaged DTZ block read through the cache of decoded blocks is an
/// error naming the file and section, every time: nothing is held from it.
#[test]
fn a_corrupt_dtz_block_is_never_held() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("KQvK.dtz50");
    let bytes = corrupt_copy(Rule::Fifty, "KQvK", |bytes| {
        // The kept DTZ stream's place (the third or fourth of the
        // trailer's): its blocks' offset, then its head's.
        let trailer = bytes.len() - TRAILER_LEN;
        let field = |at: usize| {
            let at = trailer + at;
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8")) as usize
        };
        let place = [64, 96]
            .into_iter()
            .find(|&p| field(p) != 0)
            .expect("a DTZ stream is kept");
        let (blocks, head) = (field(place), field(place + 16));
        assert!(blocks < head);
        for byte in &mut bytes[blocks..head] {
            *byte ^= 0x5a;
        }
    });
    std::fs::write(&path, &bytes).expect("write");
    let tables = Tablebase::open(dir.path(), Rule::Fifty).expect("dir");
    let pos = common::fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1");
    assert_eq!(tables.probe_wdl(&pos).expect("WDL is whole"), Wdl::Win);
    for _ in 0..2 {
        let err = tables.probe_dtz(&pos).expect_err("corrupt");
        let chain = dtz50::probe::error_chain(&err);
        let named = format!("corrupt table {}: dtz block ", path.display());
        assert!(chain.starts_with(&named), "{chain}");
        assert!(chain.ends_with("to move) is corrupt"), "{chain}");
    }
    assert_eq!(tables.decoded_cache_used(), Some(0));
}
