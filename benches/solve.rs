//! Solver and index benchmarks: a whole small table solved in memory, and
//! index encode/decode.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use dtz50::{
    generate::{SolveOptions, TableSet, solve},
    index::{Layout, TableIndex},
    material::Material,
};

fn solve_tables(c: &mut Criterion) {
    let mut group = c.benchmark_group("solve");
    group.sample_size(10);
    for name in ["KRvK", "KQvKR"] {
        let material: Material = name.parse().expect("material");
        let mut subtables = TableSet::new();
        for sub in Material::with_dependencies(&[material]) {
            if sub != material {
                let t = solve(sub, &SolveOptions::default(), &subtables, &|_| {}).expect("solves");
                subtables.insert(t);
            }
        }
        group.bench_function(name, |b| {
            b.iter(|| {
                solve(material, &SolveOptions::default(), &subtables, &|_| {}).expect("solves")
            });
        });
    }
    group.finish();
}

fn index(c: &mut Criterion) {
    let mut group = c.benchmark_group("index");
    for name in ["KRBvKR", "KRPvKR"] {
        let layout = Layout::new(name.parse().expect("material"));
        let step = layout.size() / 4099;
        let indices: Vec<TableIndex> = (0..4096).map(|i| TableIndex(i * step)).collect();
        let placements: Vec<_> = indices.iter().map(|&i| layout.decode(i)).collect();
        group.bench_function(format!("decode {name} x4096"), |b| {
            b.iter(|| {
                for &i in &indices {
                    black_box(layout.decode(black_box(i)));
                }
            });
        });
        group.bench_function(format!("encode {name} x4096"), |b| {
            b.iter(|| {
                for p in &placements {
                    black_box(layout.encode(black_box(p)));
                }
            });
        });
    }
    group.finish();
}

criterion_group!(benches, solve_tables, index);
criterion_main!(benches);
