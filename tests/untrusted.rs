//! Untrusted bytes never panic the reader.
//!
//! A seeded mutation loop over real small tables (KQvK, and KPvK for the
//! pawn layout): single-byte changes anywhere and in the header and
//! trailer, damaged ranges, truncations, extensions, and random bytes
//! (bare, and behind a valid magic and version). Each damaged file is
//! opened and, if it opens, every position of it is probed for WDL and DTZ
//! with both sides to move (until the errors show where the damage is), and
//! the full check is run; nothing may panic.
//! A sample of the damaged files is also probed through the
//! [`Tablebase`] facade, from a file on disk, as an engine would.
//!
//! The counts printed at the end say how the reader answered; the test
//! asserts the absence of panics and that the undamaged files read
//! cleanly. That a damaged byte never gives a wrong value is
//! `tests/corruption.rs`.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::Random;
use dtz50::{
    Material, Rule, Tablebase,
    format::{HEADER_LEN, MAGIC, TRAILER_LEN, TableFile, VERSION},
    index::TableIndex,
};
use shakmaty::{Color, Position};

/// A byte other than zero, to xor into a byte so that it changes.
fn flip(rng: &mut Random) -> u8 {
    1 + (rng.next() % 255) as u8
}

/// Probe errors after which a damaged file's probing stops.
const MAX_ERRORS: u64 = 64;

/// How a damaged file was read.
#[derive(Debug, Default)]
struct Tally {
    rejected_on_open: usize,
    opened: usize,
    probe_errors: u64,
    verify_failures: usize,
}

/// Open `bytes` and probe every position, both sides to move, then verify.
/// Returns `None` if anything panicked.
fn read_everything(bytes: Vec<u8>, tally: &mut Tally) -> Option<()> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Ok(table) = TableFile::new(bytes) else {
            return (false, 0, false);
        };
        let positions = table.header().positions;
        let mut errors = 0u64;
        // Every position, until the errors show that the damaged blocks are
        // found: a block that fails is decoded again on every probe, and
        // probing the rest of it only repeats that.
        'probe: for turn in Color::ALL {
            for index in 0..positions {
                let index = TableIndex(index);
                match table.kept_wdl(turn, index) {
                    Ok(wdl) => errors += u64::from(table.dtz_given(turn, index, wdl).is_err()),
                    Err(_) => errors += 2,
                }
                if errors >= MAX_ERRORS {
                    break 'probe;
                }
            }
        }
        (true, errors, table.verify().is_ok())
    }));
    let (opened, errors, verified) = outcome.ok()?;
    if opened {
        tally.opened += 1;
        tally.probe_errors += errors;
        tally.verify_failures += usize::from(!verified);
    } else {
        tally.rejected_on_open += 1;
    }
    Some(())
}

/// The damaged copies of `original` this test reads, each with a label.
fn mutations(original: &[u8], rng: &mut Random) -> Vec<(String, Vec<u8>)> {
    let len = original.len();
    let mut out = Vec::new();
    for _ in 0..400 {
        let at = rng.below(len);
        let mut bytes = original.to_vec();
        bytes[at] ^= flip(rng);
        out.push((format!("byte {at} changed"), bytes));
    }
    for _ in 0..200 {
        // The header, the trailer and the block-offset tables hold the
        // fields a reader trusts for bounds; hit them harder.
        let at = if rng.below(2) == 0 {
            rng.below(HEADER_LEN)
        } else {
            len - 1 - rng.below(TRAILER_LEN + 64)
        };
        let mut bytes = original.to_vec();
        bytes[at] ^= flip(rng);
        out.push((format!("header/trailer byte {at} changed"), bytes));
    }
    for _ in 0..100 {
        let start = rng.below(len);
        let end = (start + 1 + rng.below(64)).min(len);
        let mut bytes = original.to_vec();
        for b in &mut bytes[start..end] {
            *b = rng.byte();
        }
        out.push((format!("bytes {start}..{end} replaced"), bytes));
    }
    for _ in 0..100 {
        let keep = rng.below(len);
        out.push((format!("truncated to {keep}"), original[..keep].to_vec()));
    }
    for _ in 0..20 {
        let extra = 1 + rng.below(100);
        let mut bytes = original.to_vec();
        bytes.extend((0..extra).map(|_| rng.byte()));
        out.push((format!("{extra} bytes appended"), bytes));
    }
    for _ in 0..100 {
        let n = rng.below(2 * (HEADER_LEN + TRAILER_LEN));
        let mut bytes: Vec<u8> = (0..n).map(|_| rng.byte()).collect();
        if rng.below(2) == 0 && n >= 10 {
            bytes[..8].copy_from_slice(&MAGIC);
            bytes[8..10].copy_from_slice(&VERSION.to_le_bytes());
            if n >= HEADER_LEN + TRAILER_LEN {
                // Make the recorded length right, so that the header and
                // the section tables are read.
                let at = n - TRAILER_LEN + 96;
                bytes[at..at + 8].copy_from_slice(&(n as u64).to_le_bytes());
            }
        }
        out.push((format!("{n} random bytes"), bytes));
    }
    out
}

#[test]
fn damaged_table_files_never_panic_the_reader() {
    let dir = tempfile::tempdir().expect("temp dir");
    let targets: Vec<Material> = ["KQvK", "KPvK"]
        .iter()
        .map(|m| m.parse().expect("material"))
        .collect();
    common::generate_files(dir.path(), &targets, Rule::Fifty);
    let mut rng = Random(0x00d7_2500);
    for material in &targets {
        let path = dir.path().join(format!("{material}.dtz50"));
        let original = std::fs::read(&path).expect("table file");

        let mut clean = Tally::default();
        assert!(read_everything(original.clone(), &mut clean).is_some());
        assert_eq!(
            (clean.opened, clean.probe_errors, clean.verify_failures),
            (1, 0, 0),
            "{material}: the undamaged file reads cleanly"
        );

        let mut tally = Tally::default();
        let mut panics = Vec::new();
        for (label, bytes) in mutations(&original, &mut rng) {
            if read_everything(bytes, &mut tally).is_none() {
                panics.push(label);
            }
        }
        eprintln!("{material}: {tally:?}");
        assert!(panics.is_empty(), "{material}: panicked on {panics:?}");
        assert!(tally.rejected_on_open > 0 && tally.verify_failures > 0);
    }
}

#[test]
fn damaged_files_on_disk_never_panic_the_probe_api() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kqvk: Material = "KQvK".parse().expect("material");
    common::generate_files(dir.path(), &[kqvk], Rule::Fifty);
    let path = dir.path().join("KQvK.dtz50");
    let original = std::fs::read(&path).expect("table file");
    let positions = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "8/8/8/8/8/2k5/8/KQ6 b - - 0 1",
        "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1",
        "4k3/8/4Q3/8/8/8/8/4K3 b - - 0 1",
    ]
    .map(common::fen);
    let mut rng = Random(0x0f11_e500);
    let mut answered = 0;
    let mut errors = 0;
    for (label, bytes) in mutations(&original, &mut rng).into_iter().step_by(7) {
        // A new file each time: a table is opened once per tablebase, and
        // replacing a mapped file in place is outside the map's contract.
        let damaged = tempfile::tempdir().expect("temp dir");
        std::fs::write(damaged.path().join("KQvK.dtz50"), &bytes).expect("write");
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let tables = Tablebase::open(damaged.path(), Rule::Fifty).expect("directory");
            positions
                .iter()
                .map(|pos| {
                    let wdl = tables.probe_wdl(pos).is_ok();
                    let dtz = tables.probe_dtz(pos).is_ok();
                    let best = pos.is_game_over() || tables.best_moves(pos).is_ok();
                    (wdl && dtz && best, !(wdl && dtz && best))
                })
                .fold((0, 0), |(a, e), (ok, err)| {
                    (a + usize::from(ok), e + usize::from(err))
                })
        }));
        let (ok, err) = outcome.unwrap_or_else(|_| panic!("the probe API panicked on {label}"));
        answered += ok;
        errors += err;
    }
    eprintln!("probes answered {answered}, failed {errors}");
    assert!(errors > 0, "damage is reported");
}
