//! KRBvKR, a 5-piece table with cursed wins and blessed losses: Syzygy
//! agreement on 200,000 random positions and on every cursed win and
//! blessed loss (proving the cursed logic), on every position in an
//! ignored exhaustive test
//! (`cargo test --release --test krbvkr -- --ignored`), and the
//! invariants between the 50-move, 75-move and no-rule solutions on every
//! position of KRBvKR and its sub-tables, both sides to move.

mod common;

use std::sync::{Mutex, OnceLock};

use dtz50::{
    format::{OrderSearch, WriteStep},
    generate::{Event, FileValues, stats},
    index::{Layout, TableIndex},
    material::Material,
    probe::Tablebase,
    value::{Dtz, Rule, Wdl},
};
use rayon::prelude::*;
use shakmaty::{Chess, Color};
use shakmaty_syzygy::Tablebase as SyzygyTablebase;
use tempfile::TempDir;

fn krbvkr() -> Material {
    "KRBvKR".parse().expect("material")
}

/// KRBvKR generated as a file once, over copies of its sub-tables from the
/// 3-4 set (`common::set_3_4`); KRBvKR's write
/// reports each of its steps, its three streams one at a time (it is too
/// large to encode them at once).
fn tables() -> &'static (TempDir, Tablebase) {
    static TABLES: OnceLock<(TempDir, Tablebase)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let steps = Mutex::new(Vec::new());
        let tb = common::generate_over_set_telling(dir.path(), krbvkr(), &|event| {
            if let Event::WriteStep(material, step) = event
                && material == krbvkr()
            {
                steps.lock().expect("lock").push(step);
            }
        });
        let encoding = |done| WriteStep::Encoding { done, streams: 3 };
        assert_eq!(
            steps.into_inner().expect("lock"),
            [
                WriteStep::ChoosingOrders,
                WriteStep::BuildingGrammars,
                encoding(0),
                encoding(1),
                encoding(2)
            ]
        );
        (dir, tb)
    })
}

/// Syzygy's KRBvKR and its sub-tables, if the reference directories are
/// there (see `common::reference_dir`).
fn syzygy_krbvkr() -> Option<SyzygyTablebase<Chess>> {
    let five = common::reference_dir("5")?;
    let four = common::reference_dir("3-4")?;
    Some(common::syzygy(&[four, five]))
}

/// A large pawnless table keeps the DTZ of the side whose first sample is
/// smaller, in the order whose kings lead that the writer judges smallest
/// on windows its grammar was not built from: KRBvKR's Black DTZ in
/// `KkrBR`, 2.3 % fewer bytes for the file than the first sample's choice
/// (`KkrRB`; see BENCHMARKS.md). The build takes that order from
/// `tables/ORDERS`, which `krbvkr_in_its_recorded_orders_is_the_searched_file`
/// holds to what the search chooses.
#[test]
fn krbvkr_keeps_black_dtz_in_the_judged_order() {
    let (_, ours) = tables();
    let file = ours.table(&krbvkr()).expect("generated");
    assert_eq!(file.dtz_side(), Color::Black);
    // Slots: 0 White's king, 1 Black's king, 2 R, 3 B, 4 r.
    assert_eq!(file.header().dtz_order, [0, 1, 4, 3, 2]);
}

/// KRBvKR's orders in `tables/ORDERS` are those its search chooses (a
/// thorough search's too), and a build that takes them writes the file
/// the search writes, byte for byte.
#[test]
fn krbvkr_in_its_recorded_orders_is_the_searched_file() {
    let (recorded, _) = tables();
    let dir = tempfile::tempdir().expect("temp dir");
    common::generate_over_set_searching(dir.path(), krbvkr(), OrderSearch::Sampled, &|_| {});
    let read = |dir: &std::path::Path| std::fs::read(dir.join("KRBvKR.dtz50")).expect("built");
    assert!(
        read(recorded.path()) == read(dir.path()),
        "the files differ"
    );
}

#[test]
fn krbvkr_matches_syzygy_on_random_positions() {
    let Some(syzygy) = syzygy_krbvkr() else {
        return;
    };
    let (_, ours) = tables();
    let table = ours.table(&krbvkr()).expect("generated");
    // Positions by White to move's numbering; either side to move.
    let layout = table.layout(Color::White);
    let mut random = common::Random(0x5eed_d7a5_0b1e_55ed);
    let (mut compared, mut cursed, mut mismatches) = (0u64, 0u64, 0u64);
    while compared < 200_000 {
        let index = TableIndex(random.next() % layout.size());
        let turn = if random.next() & 1 == 0 {
            Color::White
        } else {
            Color::Black
        };
        let Some(pos) = layout.position(&layout.decode(index), turn) else {
            continue;
        };
        compared += 1;
        if matches!(
            ours.probe_wdl(&pos).expect("our wdl"),
            Wdl::CursedWin | Wdl::BlessedLoss
        ) {
            cursed += 1;
        }
        if !common::matches_syzygy(ours, &syzygy, &pos) {
            mismatches += 1;
        }
    }
    eprintln!(
        "KRBvKR: {compared} random positions, {cursed} cursed or blessed, {mismatches} mismatches"
    );
    assert!(
        cursed > 0,
        "the sample must include cursed wins or blessed losses"
    );
    assert_eq!(mismatches, 0);

    // Cursed wins and blessed losses are rare (a few thousand of 242
    // million cells): compare every one of them too.
    let cursed = positions_whose_wdl(ours, |wdl| matches!(wdl, Wdl::CursedWin | Wdl::BlessedLoss));
    let (cursed, mismatches) = compare(ours, &syzygy, cursed);
    eprintln!("KRBvKR: all {cursed} cursed or blessed positions compared, {mismatches} mismatches");
    assert!(cursed > 1000);
    assert_eq!(mismatches, 0);
}

/// Every legal position of KRBvKR, both sides to move, against Syzygy's
/// KRBvKR in `../shared/syzygy/5`.
#[test]
#[ignore = "exhaustive: 156 M positions, about 7 CPU-minutes; run with --ignored in release mode"]
fn krbvkr_matches_syzygy_on_every_position() {
    let Some(syzygy) = syzygy_krbvkr() else {
        return;
    };
    let (_, ours) = tables();
    let started = std::time::Instant::now();
    // In the solver's numbering, which the counts below are of (a file's
    // order led by a piece stores other positions twice).
    let layout = &Layout::new(krbvkr());
    let every = (0..layout.size()).into_par_iter().flat_map_iter(|index| {
        let placement = layout.decode(TableIndex(index));
        Color::ALL
            .into_iter()
            .filter_map(move |turn| layout.position(&placement, turn))
    });
    let (compared, mismatches) = compare(ours, &syzygy, every);
    eprintln!(
        "KRBvKR: every one of {compared} positions compared in {:.0?}, {mismatches} mismatches",
        started.elapsed()
    );
    // Every legal position the table counts, both sides to move (156 M of
    // the 242 M indices).
    let stats = &ours.table(&krbvkr()).expect("generated").header().stats;
    let legal: u64 = stats.iter().flat_map(|side| side.counts).sum();
    assert_eq!(compared, legal);
    assert_eq!(mismatches, 0);
}

/// Compare `positions` with Syzygy. Returns (compared, mismatches).
fn compare(
    ours: &Tablebase,
    syzygy: &SyzygyTablebase<Chess>,
    positions: impl ParallelIterator<Item = Chess>,
) -> (u64, u64) {
    positions
        .map(|pos| (1, u64::from(!common::matches_syzygy(ours, syzygy, &pos))))
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Every legal KRBvKR position (both sides to move) whose WDL in our table
/// passes `select`, by each side's file's numbering (which names a few
/// positions twice, as every index scheme does where the board's symmetry
/// leaves two frames). Each side's positions are read a chunk at a time,
/// as a probe finds them ([`FileValues::chunk_wdl`]): a probe per position
/// would decode a block per position.
fn positions_whose_wdl(
    ours: &Tablebase,
    select: impl Fn(Wdl) -> bool + Send + Sync,
) -> impl ParallelIterator<Item = Chess> {
    let values = FileValues::new(ours, &krbvkr()).expect("generated");
    let chunks = values.file().chunk_count();
    (0..chunks).into_par_iter().flat_map_iter(move |chunk| {
        let file = values.file();
        let (turn, range) = file.chunk_range(chunk);
        let layout = file.layout(turn);
        let wdl = values.chunk_wdl(chunk).expect("chunk");
        range
            .zip(wdl)
            .filter(|&(index, wdl)| select(wdl) && layout.names_placement(index))
            .filter_map(|(index, _)| layout.position(&layout.decode(TableIndex(index)), turn))
            .collect::<Vec<_>>()
    })
}

#[test]
fn krbvkr_longest_dtz_matches_the_published_statistics() {
    let (_, ours) = tables();
    let header = ours.table(&krbvkr()).expect("generated").header().clone();
    common::check_published_stats(&header);
    assert_eq!(common::check_published_positions(ours, krbvkr()), 2);
    let (w, b) = (&header.stats.white, &header.stats.black);
    assert_eq!(w.longest_cursed_win, 117);
    assert!(
        w.counts[3] > 0 && b.counts[1] > 0,
        "cursed wins and blessed losses exist"
    );
}

/// The rules the nesting test compares, in the order it nests them.
const RULES: [Rule; 3] = [Rule::Fifty, Rule::SeventyFive, Rule::None];

/// Invariants between the rules, on the exact DTZ of every position of
/// every table solved, both sides to move: KRBvKR and its sub-tables are
/// solved in memory under each rule, in the solver's numbering, which is
/// the same for all three. (The files hold these values: the Syzygy tests
/// above read the 50-move files; `files.rs` reads files of every rule.)
#[test]
fn the_rules_nest_on_every_position() {
    let solved = RULES.map(|rule| common::solve_set(&[krbvkr()], rule));
    let mut materials = Material::with_dependencies(&[krbvkr()]);
    materials.retain(|m| m.total() >= 3);
    let mut checked = 0u64;
    let mut differ = 0u64;
    for material in materials {
        let tables = solved
            .each_ref()
            .map(|set| set.get(&material).expect("solved"));
        let size = tables[0].layout().size();
        let (cells, different) = Color::ALL
            .into_par_iter()
            .flat_map(|turn| (0..size).into_par_iter().map(move |index| (turn, index)))
            .filter_map(|(turn, index)| {
                let dtz = tables.map(|t| t.dtz(turn, TableIndex(index)));
                if dtz[0].is_none() {
                    assert_eq!(dtz, [None; 3], "{material} {turn:?} {index}");
                    return None;
                }
                let dtz = dtz
                    .map(|d| d.unwrap_or_else(|| panic!("{material} {turn:?} {index}: {dtz:?}")));
                Some((1, u64::from(check_position(material, turn, index, dtz))))
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        // The positions a rule changes are the cursed wins and blessed
        // losses under 50, as the 50-move table's statistics count them.
        let cursed: u64 = stats(tables[0])
            .iter()
            .map(|side| side.count(Wdl::CursedWin) + side.count(Wdl::BlessedLoss))
            .sum();
        assert_eq!(different, cursed, "{material}");
        checked += cells;
        differ += different;
    }
    eprintln!("rule invariants hold on {checked} positions, {differ} with WDL that a rule changes");
    assert!(
        differ > 2000,
        "KRBvKR's cursed wins and blessed losses: {differ}"
    );
}

/// Check the invariants between one position's DTZ under the [`RULES`];
/// returns whether its WDL differs between them.
fn check_position(material: Material, turn: Color, index: u64, dtz: [Dtz; 3]) -> bool {
    let wdl: [Wdl; 3] = std::array::from_fn(|r| Wdl::from_dtz(dtz[r], RULES[r]));
    let at = || format!("{material} {turn:?} {index}: dtz {dtz:?} wdl {wdl:?}");
    let [w50, w75, wnone] = wdl;
    // No rule: no cursed values; its wins are the wins and cursed wins under 50.
    assert!(
        !matches!(wnone, Wdl::CursedWin | Wdl::BlessedLoss),
        "{}",
        at()
    );
    assert_eq!(
        wnone == Wdl::Win,
        matches!(w50, Wdl::Win | Wdl::CursedWin),
        "{}",
        at()
    );
    assert_eq!(
        wnone == Wdl::Loss,
        matches!(w50, Wdl::Loss | Wdl::BlessedLoss),
        "{}",
        at()
    );
    // Wins (and losses) under 50 are wins under 75, which are wins without a rule.
    if w50 == Wdl::Win {
        assert_eq!(w75, Wdl::Win, "{}", at());
        let [d50, d75, dnone] = dtz;
        assert!(dnone <= d75 && d75 <= d50, "{}", at());
    }
    if w75 == Wdl::Win {
        assert_eq!(wnone, Wdl::Win, "{}", at());
        assert!(dtz[1].0 <= 150, "{}", at());
    }
    if w50 == Wdl::Loss {
        assert_eq!(w75, Wdl::Loss, "{}", at());
    }
    if w75 == Wdl::Loss {
        assert_eq!(wnone, Wdl::Loss, "{}", at());
    }
    wnone != w50
}
