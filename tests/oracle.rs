//! Every legal position of every 3-4 piece table, both sides to move,
//! compared with Syzygy: WDL50 equal, DTZ equal (exact where Syzygy is
//! precise; where it rounds, ours is n or one ply further from zero).
//!
//! The tables are the set of `common::set_3_4`: generated as files once
//! per run (by whichever test asks first; their SHA-256 must match
//! `tables/CHECKSUMS`) and read back through memory maps, exactly as users
//! probe them.

mod common;

use std::time::Instant;

use dtz50::{index::TableIndex, material::Material, probe::Tablebase, value::Rule};
use rayon::prelude::*;
use shakmaty::{CastlingMode, Chess, Color, FromSetup, Position, Setup, Square};
use shakmaty_syzygy::Tablebase as SyzygyTablebase;

#[derive(Default, Debug)]
struct Tally {
    compared: u64,
    en_passant: u64,
    mismatches: u64,
}

impl Tally {
    fn merge(self, other: Tally) -> Tally {
        Tally {
            compared: self.compared + other.compared,
            en_passant: self.en_passant + other.en_passant,
            mismatches: self.mismatches + other.mismatches,
        }
    }
}

/// The same placement with an en-passant right for `turn`, if the pawn
/// that could just have double-pushed is there and a capture is legal.
fn with_en_passant(pos: &Chess) -> Vec<Chess> {
    let turn = pos.turn();
    let pusher = turn.other();
    let board = pos.board();
    let mut out = Vec::new();
    for pawn in board.by_piece(pusher.pawn()) {
        let rank = pawn.rank();
        let fourth = if pusher == Color::White { 3 } else { 4 };
        if rank as u32 != fourth {
            continue;
        }
        let (over, origin) = if pusher == Color::White {
            (Square::new(pawn as u32 - 8), Square::new(pawn as u32 - 16))
        } else {
            (Square::new(pawn as u32 + 8), Square::new(pawn as u32 + 16))
        };
        if board.occupied().contains(over) || board.occupied().contains(origin) {
            continue;
        }
        let setup = Setup {
            ep_square: Some(over),
            ..pos.to_setup(shakmaty::EnPassantMode::Always)
        };
        if let Ok(p) = Chess::from_setup(setup, CastlingMode::Standard)
            && p.legal_ep_square().is_some()
        {
            out.push(p);
        }
    }
    out
}

fn compare_table(
    ours: &Tablebase,
    tb: &SyzygyTablebase<Chess>,
    material: Material,
    stride: u64,
) -> Tally {
    let size = ours
        .table(&material)
        .expect("generated")
        .layout(Color::White)
        .size();
    let indices: Vec<u64> = (0..size).step_by(stride as usize).collect();
    indices
        .par_chunks(4096)
        .map(|chunk| compare_indices(ours, tb, material, chunk))
        .reduce(Tally::default, Tally::merge)
}

fn compare_indices(
    ours: &Tablebase,
    tb: &SyzygyTablebase<Chess>,
    material: Material,
    indices: &[u64],
) -> Tally {
    let table = ours.table(&material).expect("generated");
    // Positions by White to move's numbering; both sides of each.
    let layout = table.layout(Color::White);
    let mut tally = Tally::default();
    for &index in indices {
        let placement = layout.decode(TableIndex(index));
        for turn in Color::ALL {
            let Some(pos) = layout.position(&placement, turn) else {
                continue;
            };
            tally.compared += 1;
            if !common::matches_syzygy(ours, tb, &pos) {
                tally.mismatches += 1;
            }
            for ep in with_en_passant(&pos) {
                tally.en_passant += 1;
                tally.compared += 1;
                if !common::matches_syzygy(ours, tb, &ep) {
                    tally.mismatches += 1;
                }
            }
        }
    }
    tally
}

fn run(stride: u64) {
    let Some(dir) = common::reference_dir("3-4") else {
        return;
    };
    let tb = common::syzygy(&[dir]);
    let tables = Material::all_up_to(4);
    let started = Instant::now();
    let ours = Tablebase::open(common::set_3_4(), Rule::Fifty).expect("the 3-4 set opens");
    let ready = started.elapsed();
    let mut positions = 0;
    for material in &tables {
        common::check_published_stats(ours.table(material).expect("generated").header());
        positions += common::check_published_positions(&ours, *material);
    }
    assert!(positions > 0, "the statistics publish positions");
    eprintln!("{} tables generated or found in {ready:.1?}", tables.len());
    let mut total = Tally::default();
    for material in tables {
        let t = compare_table(&ours, &tb, material, stride);
        eprintln!("{material}: {t:?}");
        total = total.merge(t);
    }
    eprintln!(
        "total (stride {stride}): {total:?}; set {ready:.1?}, compare {:.1?}",
        started.elapsed() - ready
    );
    assert!(total.compared > 0);
    assert!(
        total.en_passant > 0,
        "en-passant positions must be compared"
    );
    assert_eq!(total.mismatches, 0);
}

/// A deterministic 1-in-7 stride over every table (7 is coprime to 64, so
/// every piece square and both kings vary).
#[test]
fn every_3_4_table_matches_syzygy_on_a_stride() {
    run(7);
}

/// Every position of every 3-4 piece table.
#[test]
#[ignore = "exhaustive; run with --ignored in release mode"]
fn every_3_4_table_matches_syzygy_exhaustively() {
    run(1);
}
