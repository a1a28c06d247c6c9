//! KRBvKR, a 5-piece table with cursed wins and blessed losses: Syzygy
//! agreement on 200,000 random positions and on every cursed win and
//! blessed loss (proving the cursed logic), on every position in an
//! ignored exhaustive test
//! (`cargo test --release --test krbvkr -- --ignored`), and the
//! invariants between the 50-move, 75-move and no-rule tables on every
//! position of KRBvKR and its sub-tables.

mod common;

use std::sync::{Mutex, OnceLock};

use dtz50::{
    format::WriteStep,
    generate::{Event, FileValues},
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

/// KRBvKR and its sub-tables, generated once per rule; KRBvKR's write
/// reports each of its steps, its three streams one at a time (it is too
/// large to encode them at once).
fn tables(rule: Rule) -> &'static (TempDir, Tablebase) {
    static CELLS: [OnceLock<(TempDir, Tablebase)>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = match rule {
        Rule::Fifty => 0,
        Rule::SeventyFive => 1,
        Rule::None => 2,
    };
    CELLS[slot].get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let steps = Mutex::new(Vec::new());
        let tb = common::generate_files_telling(dir.path(), &[krbvkr()], rule, &|event| {
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

#[test]
fn krbvkr_matches_syzygy_on_random_positions() {
    let Some(syzygy) = syzygy_krbvkr() else {
        return;
    };
    let (_, ours) = tables(Rule::Fifty);
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
    let (_, ours) = tables(Rule::Fifty);
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
    let (_, ours) = tables(Rule::Fifty);
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

/// One index in this many is probed through the API under all three rules.
const PROBED_EVERY: u64 = 4099;

/// Invariants between the rules, on every index of every table built: of
/// WDL everywhere, of DTZ where all three files keep it exactly (each file
/// keeps one side's, and a win a zeroing move decides is found by the
/// probe: see the format), and of DTZ through the probe API on every
/// [`PROBED_EVERY`]th index, both sides to move.
#[test]
fn the_rules_nest_on_every_position() {
    let fifty = &tables(Rule::Fifty).1;
    let seventy_five = &tables(Rule::SeventyFive).1;
    let none = &tables(Rule::None).1;
    let mut materials = Material::with_dependencies(&[krbvkr()]);
    materials.retain(|m| m.total() >= 3);
    let mut checked = 0u64;
    let mut with_dtz = 0u64;
    for material in materials {
        let files = [fifty, seventy_five, none]
            .map(|tb| FileValues::new(tb, &material).expect("generated"));
        // Each file numbers each side's positions in the order it chose for
        // that side: the same position is at the same index up to a
        // shuffle of the pieces' digits, so aligned groups of 64^digits
        // indices (and of whole chunks) hold the same positions in every
        // file; where a file's order is led by one king (the board turned,
        // not a shuffle), each side is one group, read whole.
        let chunk_len = files[0].file().chunk_positions();
        let (cells, kept) = Color::ALL
            .into_iter()
            .map(|turn| {
                let layouts = files.each_ref().map(|f| f.file().layout(turn));
                let to_file = layouts.map(|l| layouts[0].reorder_to(l));
                let whole = to_file.iter().any(|map| !map.is_shuffle());
                let digits = layouts[0].digit_count() as u32;
                let group = if whole {
                    layouts[0].size()
                } else {
                    chunk_len.max(64u64.pow(digits))
                };
                let groups = layouts[0].size().div_ceil(group);
                (0..groups)
                    .into_par_iter()
                    .map(|g| {
                        let start = g * group;
                        let end = (start + group).min(layouts[0].size());
                        // Each file's entries over the group, a chunk at a
                        // time (a probe per position would decode a block
                        // per position); the chunks are decoded in
                        // parallel, and kept apart (a side is 2 GB).
                        let entries = [0, 1, 2].map(|f| {
                            let file = files[f].file();
                            let (first, _) = file.chunk_of(turn, TableIndex(start));
                            let len = if whole {
                                layouts[f].size()
                            } else {
                                end - start
                            };
                            let chunks = len.div_ceil(chunk_len) as usize;
                            (first..first + chunks)
                                .into_par_iter()
                                .map(|c| files[f].chunk(c).expect("chunk"))
                                .collect::<Vec<_>>()
                        });
                        // The group starts a chunk.
                        let entry = |f: usize, at: u64| {
                            let chunk = &entries[f][(at / chunk_len) as usize];
                            chunk[(at % chunk_len) as usize]
                        };
                        let layout = layouts[0];
                        (start..end)
                            .into_par_iter()
                            .filter(|&index| layout.names_placement(index))
                            .map(|index| {
                                let at = to_file.each_ref().map(|map| map.apply(index) - start);
                                let wdl = [0, 1, 2].map(|f| entry(f, at[f]).0);
                                let dtz = if index % PROBED_EVERY == 0
                                    && let Some(pos) =
                                        layout.position(&layout.decode(TableIndex(index)), turn)
                                {
                                    [fifty, seventy_five, none]
                                        .map(|tb| Some(tb.probe_dtz(&pos).expect("probe")))
                                } else {
                                    // Kept wins may be decided by a zeroing move.
                                    [0, 1, 2].map(|f| {
                                        let (wdl, dtz) = entry(f, at[f]);
                                        dtz.filter(|_| wdl <= Wdl::Draw)
                                    })
                                };
                                check_position(material, turn, index, dtz, wdl);
                                (1, u64::from(dtz.iter().all(Option::is_some)))
                            })
                            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
                    })
                    .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
            })
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        checked += cells;
        with_dtz += kept;
    }
    eprintln!("rule invariants hold on {checked} cells, {with_dtz} with DTZ in all three files");
    // Draws, and losses of the side kept, are a good part of the cells.
    assert!(with_dtz > checked / 4, "{with_dtz} of {checked}");
}

fn check_position(
    material: Material,
    turn: Color,
    index: u64,
    dtz: [Option<Dtz>; 3],
    wdl: [Wdl; 3],
) {
    let at = || format!("{material} {turn:?} {index}: dtz {dtz:?} wdl {wdl:?}");
    let [w50, w75, wnone] = wdl;
    // Each WDL section agrees with its DTZ section where it is kept.
    for ((dtz, wdl), rule) in dtz
        .iter()
        .zip(wdl)
        .zip([Rule::Fifty, Rule::SeventyFive, Rule::None])
    {
        if let Some(dtz) = dtz {
            assert_eq!(wdl, Wdl::from_dtz(*dtz, rule), "{}", at());
        }
    }
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
        if let [Some(d50), Some(d75), Some(dnone)] = dtz {
            assert!(dnone <= d75 && d75 <= d50, "{}", at());
        }
    }
    if w75 == Wdl::Win {
        assert_eq!(wnone, Wdl::Win, "{}", at());
        if let Some(d75) = dtz[1] {
            assert!(d75.0 <= 150, "{}", at());
        }
    }
    if w50 == Wdl::Loss {
        assert_eq!(w75, Wdl::Loss, "{}", at());
    }
    if w75 == Wdl::Loss {
        assert_eq!(wnone, Wdl::Loss, "{}", at());
    }
}
