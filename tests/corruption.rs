//! No silent wrong answer from a damaged file.
//!
//! One thousand single-byte changes, one at a time, to a 4-piece table
//! (KQvKR, 1.9 million positions per side). After each change the file is
//! opened again and every position of the block holding the changed byte
//! (if it is a block byte) and a fixed sample of 10,000 other positions are
//! probed, WDL and DTZ, both sides to move: each probe must give the value
//! the intact file gives, or an error that names the section; never
//! another value, never a panic. Every twentieth damaged file is also
//! written to disk and probed through [`Tablebase`], whose errors must
//! name the file.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::Random;
use dtz50::{
    Material, Rule, Tablebase,
    format::{TRAILER_LEN, TableFile},
    index::TableIndex,
};
use shakmaty::Color;

/// The value probes compare: WDL, and DTZ where the file keeps it.
type Answer = Result<(i8, Option<i16>), String>;

/// Probe one stored position of `file`.
fn answer(file: &TableFile<&[u8]>, turn: Color, index: u64) -> Answer {
    let wdl = file
        .kept_wdl(turn, TableIndex(index))
        .map_err(|e| e.to_string())?;
    let dtz = file
        .dtz_given(turn, TableIndex(index), wdl)
        .map_err(|e| e.to_string())?;
    Ok((wdl.to_i8(), dtz.map(|d| d.0)))
}

/// The positions (side to move, index) coded in the block holding byte
/// `at`, read from the intact file's trailer and counts (see the format
/// module's byte table); empty if `at` is not a block byte.
fn block_positions(file: &[u8], at: usize, positions: u64) -> Vec<(Color, u64)> {
    let trailer = &file[file.len() - TRAILER_LEN..];
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8"));
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4"));
    for stream in 0..4 {
        let fields = &trailer[32 * stream..];
        let blocks_offset = u64_at(fields, 0) as usize;
        let blocks = u32_at(fields, 8) as usize;
        let head_len = u32_at(fields, 12) as usize;
        let head_offset = u64_at(fields, 16) as usize;
        if blocks == 0 {
            // The DTZ side the file does not keep.
            continue;
        }
        let block_len = (head_offset - blocks_offset) / blocks;
        if !(blocks_offset..head_offset).contains(&at) {
            continue;
        }
        let block = (at - blocks_offset) / block_len;
        let counts = head_offset + head_len;
        let count = |b: usize| {
            u64::from(u16::from_le_bytes([
                file[counts + 2 * b],
                file[counts + 2 * b + 1],
            ]))
        };
        let first: u64 = (0..block).map(count).sum();
        let turn = if stream % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        return (first..(first + count(block)).min(positions))
            .map(|i| (turn, i))
            .collect();
    }
    Vec::new()
}

#[test]
fn single_byte_changes_give_the_right_value_or_an_error_never_another_value() {
    let dir = tempfile::tempdir().expect("temp dir");
    let material: Material = "KQvKR".parse().expect("material");
    common::generate_files(dir.path(), &[material], Rule::Fifty);
    let path = dir.path().join("KQvKR.dtz50");
    let original = std::fs::read(&path).expect("table file");
    let intact = TableFile::new(original.as_slice()).expect("intact file");
    let positions = intact.header().positions;
    let mut rng = Random(0x5eed_0014);
    let sample: Vec<(Color, u64)> = (0..10_000)
        .map(|_| {
            let turn = if rng.next().is_multiple_of(2) {
                Color::White
            } else {
                Color::Black
            };
            (turn, rng.next() % positions)
        })
        .collect();
    let truth = |turn: Color, index: u64| answer(&intact, turn, index).expect("intact file reads");

    let (mut rejected_on_open, mut right, mut errors, mut in_blocks) = (0, 0u64, 0u64, 0);
    let mut damaged = original.clone();
    for change in 0..1000u32 {
        let at = rng.below(original.len());
        let flip = 1 + (rng.next() % 255) as u8;
        damaged[at] ^= flip;
        let own = block_positions(&original, at, positions);
        in_blocks += usize::from(!own.is_empty());
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let Ok(file) = TableFile::new(damaged.as_slice()) else {
                return None;
            };
            let mut counts = (0u64, 0u64);
            for &(turn, index) in own.iter().chain(&sample) {
                match answer(&file, turn, index) {
                    Ok(value) => {
                        assert_eq!(
                            value,
                            truth(turn, index),
                            "byte {at} ^ {flip:#04x}: a wrong value at {turn:?} {index}"
                        );
                        counts.0 += 1;
                    }
                    Err(message) => {
                        assert!(
                            ["wdl", "dtz", "header", "trailer"]
                                .iter()
                                .any(|section| message.contains(section)),
                            "byte {at}: the error names no section: {message}"
                        );
                        counts.1 += 1;
                    }
                }
            }
            Some(counts)
        }));
        match outcome.unwrap_or_else(|_| panic!("byte {at} ^ {flip:#04x}: the reader panicked")) {
            None => rejected_on_open += 1,
            Some((r, e)) => {
                right += r;
                errors += e;
            }
        }
        if change.is_multiple_of(20) {
            std::fs::write(&path, &damaged).expect("write");
            let tables = Tablebase::open(dir.path(), Rule::Fifty).expect("directory");
            let pos = common::fen("8/8/8/8/8/2k5/8/KQ5r w - - 0 1");
            if let Err(e) = tables.probe_wdl(&pos).and_then(|_| tables.probe_dtz(&pos)) {
                let message = dtz50::probe::error_chain(&e);
                assert!(message.contains("KQvKR.dtz50"), "{message}");
            }
        }
        damaged[at] = original[at];
    }
    std::fs::write(&path, &original).expect("write");
    println!(
        "1000 single-byte changes ({in_blocks} in blocks): {rejected_on_open} rejected on open; \
         {right} probes right, {errors} errors, 0 wrong"
    );
    assert!(right > 0 && errors > 0 && in_blocks > 500);
}
