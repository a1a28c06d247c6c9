//! Probe latency, hot cache, one thread: WDL and DTZ on the same 100,000
//! random legal positions of KQvKR and KRPvK, for dtz50 (tables in
//! `DTZ50_TABLES`, default `tables/`, generated there if missing) and for
//! shakmaty-syzygy on the reference tables (`../shared/syzygy/3-4`, through
//! its memory-mapped filesystem).

use std::path::PathBuf;

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use dtz50::{
    generate::{GenerateOptions, generate},
    index::{Layout, TableIndex},
    material::Material,
    probe::Tablebase,
    value::Rule,
};
use shakmaty::{Chess, Color};

const POSITIONS: usize = 100_000;

fn positions(material: Material) -> Vec<Chess> {
    let layout = Layout::new(material);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut out = Vec::with_capacity(POSITIONS);
    while out.len() < POSITIONS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let turn = if state >> 63 == 0 {
            Color::White
        } else {
            Color::Black
        };
        if let Some(pos) = layout.position(&layout.decode(TableIndex(state % layout.size())), turn)
        {
            out.push(pos);
        }
    }
    out
}

fn probe(c: &mut Criterion) {
    let dir = PathBuf::from(std::env::var("DTZ50_TABLES").unwrap_or_else(|_| "tables".into()));
    let targets: Vec<Material> = ["KQvKR", "KRPvK"]
        .iter()
        .map(|s| s.parse().expect("material"))
        .collect();
    let options = GenerateOptions {
        rule: Rule::Fifty,
        out: dir.clone(),
        work_dir: None,
        checkpoint_every: None,
        order_search: Default::default(),
    };
    generate(&targets, &options, &|_| {}).expect("tables generated");
    let ours = Tablebase::open(&dir, Rule::Fifty).expect("tables open");
    let reference = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/syzygy/3-4");
    // Safety: the reference files are read-only inputs that nothing
    // modifies or truncates while the benchmark runs (shakmaty-syzygy's
    // contract for memory-mapped tables). The only unsafe outside
    // `src/mmap.rs`, and in a benchmark, not in dtz50 itself.
    let mut syzygy = unsafe { shakmaty_syzygy::Tablebase::<Chess>::with_mmap_filesystem() };
    let have_syzygy = syzygy.add_directory(&reference).is_ok();

    let mut group = c.benchmark_group("probe");
    group.sample_size(10);
    for material in targets {
        let sample = positions(material);
        // Warm the caches (hot-cache latency).
        for pos in &sample {
            ours.probe_dtz(pos).expect("dtz");
            ours.probe_wdl(pos).expect("wdl");
        }
        group.bench_function(format!("dtz50 wdl {material} x{POSITIONS}"), |b| {
            b.iter(|| {
                for pos in &sample {
                    black_box(ours.probe_wdl(pos).expect("wdl"));
                }
            });
        });
        group.bench_function(format!("dtz50 dtz {material} x{POSITIONS}"), |b| {
            b.iter(|| {
                for pos in &sample {
                    black_box(ours.probe_dtz(pos).expect("dtz"));
                }
            });
        });
        if have_syzygy {
            group.bench_function(format!("syzygy wdl {material} x{POSITIONS}"), |b| {
                b.iter(|| {
                    for pos in &sample {
                        black_box(syzygy.probe_wdl_after_zeroing(pos).expect("wdl"));
                    }
                });
            });
            group.bench_function(format!("syzygy dtz {material} x{POSITIONS}"), |b| {
                b.iter(|| {
                    for pos in &sample {
                        black_box(syzygy.probe_dtz(pos).expect("dtz"));
                    }
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, probe);
criterion_main!(benches);
