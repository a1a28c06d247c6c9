//! The cost of a probe through the Rust API, and the positions to measure
//! it through C with `examples/probe_cost.c` (see BENCHMARKS.md).
//!
//! ```sh
//! cargo build --release -p dtz50-capi --example probe_cost
//! target/release/examples/probe_cost TABLES > positions.txt
//! ```
//!
//! Draws 100,000 random legal positions (fixed seed, clock 0, either side to
//! move, colours swapped half the time) from every table of 3-4 pieces in
//! TABLES, writes them to standard output in the input format of
//! `probe_cost.c` and `tests/c/compare.c`, and prints on standard error the
//! mean time per call of `probe_wdl`, `probe_with_clock` (over all of them)
//! and `best_moves` (over the first 10,000), hot: each is run once to warm
//! up, then timed ten times, the fastest round kept.

use std::{
    io::{self, BufWriter, Write},
    time::Instant,
};

use dtz50::{
    Material, Rule, Tablebase,
    index::{Layout, TableIndex},
};
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position, PositionError};

/// Positions drawn; root moves are timed over the first tenth.
const POSITIONS: usize = 100_000;

/// xorshift: the same positions on every run.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Random legal positions spread evenly over the 3-4 piece tables.
fn positions() -> Vec<Chess> {
    let mut random = Random(0x15);
    let materials = Material::all_up_to(4);
    let mut out = Vec::with_capacity(POSITIONS);
    while out.len() < POSITIONS {
        let layout = Layout::new(materials[out.len() % materials.len()]);
        let turn = Color::from_white(random.below(2) == 0);
        let index = TableIndex(random.below(layout.size()));
        let Some(pos) = layout.position(&layout.decode(index), turn) else {
            continue;
        };
        let mut setup = pos.to_setup(EnPassantMode::Legal);
        if random.below(2) == 0 {
            setup.mirror();
        }
        if let Ok(pos) = setup
            .position(CastlingMode::Standard)
            .or_else(PositionError::ignore_impossible_check)
        {
            out.push(pos);
        }
    }
    out
}

/// Mean nanoseconds per call of `probe` over `positions`, hot.
fn time(positions: &[Chess], mut probe: impl FnMut(&Chess) -> i64) -> f64 {
    let mut sum = 0i64;
    let mut best = f64::INFINITY;
    for round in 0..11 {
        let start = Instant::now();
        for pos in positions {
            sum = sum.wrapping_add(probe(pos));
        }
        let ns = start.elapsed().as_nanos() as f64 / positions.len() as f64;
        if round > 0 {
            best = best.min(ns);
        }
    }
    std::hint::black_box(sum);
    best
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: probe_cost TABLES")?;
    let tables = Tablebase::open(&dir, Rule::Fifty)?;
    let positions = positions();
    let wdl = time(&positions, |p| {
        tables.probe_wdl(p).map_or(-9, |w| w.to_i8().into())
    });
    let verdict = time(&positions, |p| {
        tables.probe_with_clock(p, 0).map_or(-9, |v| v.dtz.0.into())
    });
    let root = time(&positions[..POSITIONS / 10], |p| {
        tables.best_moves(p).map_or(-9, |m| m.len() as i64)
    });
    eprintln!("rust probe_wdl         {wdl:8.1} ns");
    eprintln!("rust probe_with_clock  {verdict:8.1} ns");
    eprintln!("rust best_moves        {root:8.1} ns");

    let mut out = BufWriter::new(io::stdout().lock());
    for pos in &positions {
        let b = pos.board();
        writeln!(
            out,
            "{:x} {:x} {:x} {:x} {:x} {:x} {:x} {:x} 0 0 {}",
            b.white().0,
            b.black().0,
            b.kings().0,
            b.queens().0,
            b.rooks().0,
            b.bishops().0,
            b.knights().0,
            b.pawns().0,
            u8::from(pos.turn().is_white()),
        )?;
    }
    Ok(())
}
