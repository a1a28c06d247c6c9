//! Statistics of a solved table: counts per WDL and the longest DTZ, per
//! side to move, as the file header records them.
//!
//! They count every index of the table (a position with identical pieces
//! once per order of their squares, as the header always has), a chunk of
//! indices at a time in parallel. A chunk's cells are read a run at a time
//! ([`Table::cells_in`]) and tallied by value, and each value is added
//! once with its count and its first index: reading and adding each
//! index on its own took KRPvKR's build several seconds over its packed
//! levels (see BENCHMARKS.md).

use rayon::prelude::*;
use shakmaty::{ByColor, Color};

use crate::{
    format::SideStats,
    generate::{cell::Cell, solve::CHUNK, table::Table},
    value::Dtz,
};

/// Statistics of a solved table, both sides to move.
pub fn stats(table: &Table) -> ByColor<SideStats> {
    let size = table.layout().size();
    ByColor::new_with(|turn| {
        (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| chunk_stats(table, turn, chunk * CHUNK, ((chunk + 1) * CHUNK).min(size)))
            .reduce(SideStats::default, SideStats::merge)
    })
}

/// Values a [`Tally`] counts in place: `-SPAN..SPAN` plies, every value a
/// cell holds in its own byte (longer ones are few).
const SPAN: i16 = 256;

/// One chunk's decisive and drawn values, counted.
struct Tally {
    /// By value plus [`SPAN`]: how many, and the first index.
    near: Vec<(u64, u64)>,
    /// Longer values: the value, how many, and the first index.
    far: Vec<(Dtz, u64, u64)>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            near: vec![(0, 0); 2 * SPAN as usize],
            far: Vec::new(),
        }
    }

    /// Count the value `dtz` at `index` (indices in ascending order).
    #[inline]
    fn count(&mut self, dtz: Dtz, index: u64) {
        let at = i32::from(dtz.0) + i32::from(SPAN);
        let (count, first) = match usize::try_from(at) {
            Ok(at) if at < self.near.len() => {
                let (count, first) = &mut self.near[at];
                (count, first)
            }
            _ => {
                let i = match self.far.iter().position(|&(d, _, _)| d == dtz) {
                    Some(i) => i,
                    None => {
                        self.far.push((dtz, 0, index));
                        self.far.len() - 1
                    }
                };
                let (_, count, first) = &mut self.far[i];
                (count, first)
            }
        };
        if *count == 0 {
            *first = index;
        }
        *count += 1;
    }
}

/// The statistics of `turn`'s indices `start..end`.
fn chunk_stats(table: &Table, turn: Color, start: u64, end: u64) -> SideStats {
    let mut cells: Vec<Cell> = Vec::with_capacity((end - start) as usize);
    table.cells_in(turn, start..end, &mut cells);
    let mut tally = Tally::new();
    for (index, cell) in (start..).zip(cells) {
        if let Some(dtz) = cell.value() {
            tally.count(dtz, index);
        }
    }
    let mut stats = SideStats::default();
    let near = (-SPAN..SPAN)
        .zip(tally.near)
        .map(|(plies, (count, first))| (Dtz(plies), count, first));
    for (dtz, count, first) in near.chain(tally.far) {
        if count > 0 {
            stats.add(dtz, count, first, table.rule());
        }
    }
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        generate::{SolveOptions, TableSet},
        index::TableIndex,
        material::Material,
        value::Rule,
    };

    /// The statistics tallied by value are those of adding every index in
    /// order, as the header has always counted them: with identical
    /// pieces (KRRvK), pawns (KPvKP), and under each rule.
    #[test]
    fn tallied_statistics_are_those_of_every_index_in_order() {
        for (name, rule) in [
            ("KRRvK", Rule::Fifty),
            ("KPvKP", Rule::Fifty),
            ("KBNvK", Rule::None),
            ("KQvKR", Rule::SeventyFive),
        ] {
            let material: Material = name.parse().expect("material");
            let options = SolveOptions {
                rule,
                ..SolveOptions::default()
            };
            let set = TableSet::solved(material, &options);
            let table = set.get(&material).expect("solved");
            let in_order = ByColor::new_with(|turn| {
                let mut side = SideStats::default();
                for index in 0..table.layout().size() {
                    if let Some(dtz) = table.cell(turn, TableIndex(index)).value() {
                        side.add(dtz, 1, index, rule);
                    }
                }
                side
            });
            let tallied = stats(table);
            assert_eq!(tallied, in_order, "{name}");
            assert!(tallied.white.longest_at.is_some(), "{name}");
        }
    }

    /// Values of any length are counted, each with its first index.
    #[test]
    fn a_tally_counts_long_values_too() {
        let mut tally = Tally::new();
        for (index, plies) in [(5, 300), (6, -1), (7, 300), (9, -400), (11, -1)] {
            tally.count(Dtz(plies), index);
        }
        assert_eq!(tally.far, vec![(Dtz(300), 2, 5), (Dtz(-400), 1, 9)]);
        assert_eq!(tally.near[(SPAN - 1) as usize], (2, 6));
    }
}
