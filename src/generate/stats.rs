//! Statistics of a solved table: counts per WDL and the longest DTZ, per
//! side to move, as the file header records them.

use rayon::prelude::*;
use shakmaty::ByColor;

use crate::{
    format::SideStats,
    generate::{solve::CHUNK, table::Table},
    index::TableIndex,
};

/// Statistics of a solved table, both sides to move.
pub fn stats(table: &Table) -> ByColor<SideStats> {
    let size = table.layout().size();
    ByColor::new_with(|turn| {
        (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let mut s = SideStats::default();
                for index in chunk * CHUNK..((chunk + 1) * CHUNK).min(size) {
                    if let Some(dtz) = table.cell(turn, TableIndex(index)).value() {
                        s.add(dtz, index, table.rule());
                    }
                }
                s
            })
            .reduce(SideStats::default, SideStats::merge)
    })
}
