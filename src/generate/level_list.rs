//! Lists of positions of the level being solved, as the solver keeps what
//! a ply decided for the next ply to start from (see the `solve` module).
//!
//! A list names each position by its index within the level: in 32 bits
//! where the level has at most 2^32 positions (every level of a table of
//! up to five pieces), else in 64 (a pawnless six-piece table without
//! identical pieces, KQRvKBN, is one level of 7.75 G positions a side).
//! It is kept as the parts its pass found them in (a part per chunk of the
//! level), never copied into one: joining lists moves parts. Beside the
//! cells, these lists were the largest part of the solver's memory at its
//! peak: KRBvKR's new losses of one ply took 29 MB in 64 bits, and the
//! copy that joined their parts as much again (see BENCHMARKS.md).

use rayon::prelude::*;

/// Positions of a level, by index within it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LevelList {
    /// None empty.
    parts: Vec<Part>,
}

/// Some of a list's positions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// In a level of at most 2^32 positions.
    Narrow(Vec<u32>),
    /// In a larger level.
    Wide(Vec<u64>),
}

impl Part {
    fn len(&self) -> usize {
        match self {
            Part::Narrow(list) => list.len(),
            Part::Wide(list) => list.len(),
        }
    }
}

impl LevelList {
    /// The positions `locals` of a level of `size` positions, in as few
    /// bytes as that level allows.
    pub fn of(locals: Vec<u64>, size: u64) -> LevelList {
        let part = if locals.is_empty() {
            None
        } else if size <= 1 << 32 {
            Some(Part::Narrow(locals.into_iter().map(|l| l as u32).collect()))
        } else {
            let mut locals = locals;
            locals.shrink_to_fit();
            Some(Part::Wide(locals))
        };
        LevelList {
            parts: part.into_iter().collect(),
        }
    }

    /// How many positions it holds.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Part::len).sum()
    }

    /// The positions of `lists`, one after the other.
    pub fn concat(lists: Vec<LevelList>) -> LevelList {
        LevelList {
            parts: lists.into_iter().flat_map(|list| list.parts).collect(),
        }
    }

    /// Add `other`'s positions after these.
    pub fn append(&mut self, other: LevelList) {
        self.parts.extend(other.parts);
    }

    /// `each` of the positions, in parallel.
    pub fn par_for_each(&self, each: impl Fn(u64) + Sync + Send) {
        self.parts.par_iter().for_each(|part| match part {
            Part::Narrow(list) => list.iter().for_each(|&l| each(u64::from(l))),
            Part::Wide(list) => list.iter().for_each(|&l| each(l)),
        });
    }

    /// `map` of each run of at most `chunk` positions (runs do not span
    /// parts), in parallel, in order.
    pub fn par_chunks_map<R: Send>(
        &self,
        chunk: usize,
        map: impl Fn(Run<'_>) -> R + Sync + Send,
    ) -> Vec<R> {
        let map = &map;
        self.parts
            .par_iter()
            .flat_map(|part| match part {
                Part::Narrow(list) => list
                    .par_chunks(chunk)
                    .map(|run| map(Run::Narrow(run)))
                    .collect::<Vec<R>>(),
                Part::Wide(list) => list
                    .par_chunks(chunk)
                    .map(|run| map(Run::Wide(run)))
                    .collect(),
            })
            .collect()
    }
}

/// A run of a list's positions (see [`LevelList::par_chunks_map`]).
pub(super) enum Run<'a> {
    Narrow(&'a [u32]),
    Wide(&'a [u64]),
}

impl Run<'_> {
    /// `each` of the run's positions, in order.
    pub fn for_each(self, mut each: impl FnMut(u64)) {
        match self {
            Run::Narrow(run) => run.iter().for_each(|&l| each(u64::from(l))),
            Run::Wide(run) => run.iter().for_each(|&l| each(l)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position of `list`, in order, read by runs of `chunk`.
    fn read(list: &LevelList, chunk: usize) -> Vec<Vec<u64>> {
        list.par_chunks_map(chunk, |run| {
            let mut all = Vec::new();
            run.for_each(|l| all.push(l));
            all
        })
    }

    #[test]
    fn a_level_of_up_to_two_to_the_32_lists_in_32_bits() {
        let narrow = LevelList::of(vec![0, 7, u64::from(u32::MAX)], 1 << 32);
        assert_eq!(narrow.parts, [Part::Narrow(vec![0, 7, u32::MAX])]);
        let wide = LevelList::of(vec![1 << 32, 3], (1 << 32) + 1);
        assert_eq!(wide.parts, [Part::Wide(vec![1 << 32, 3])]);
        assert_eq!(read(&narrow, 2), [vec![0, 7], vec![u64::from(u32::MAX)]]);
        assert_eq!(read(&wide, 1), [vec![1 << 32], vec![3]]);
        let sum = std::sync::atomic::AtomicU64::new(0);
        narrow.par_for_each(|l| {
            sum.fetch_add(l, std::sync::atomic::Ordering::Relaxed);
        });
        assert_eq!(sum.into_inner(), 7 + u64::from(u32::MAX));
    }

    #[test]
    fn lists_join_in_order_without_empty_parts() {
        let lists = vec![
            LevelList::of(vec![5, 6, 8], 100),
            LevelList::of(Vec::new(), 100),
            LevelList::default(),
            LevelList::of(vec![1], 100),
        ];
        let mut all = LevelList::concat(lists);
        assert_eq!(all.parts.len(), 2);
        assert_eq!(all.len(), 4);
        assert_eq!(read(&all, 2), [vec![5, 6], vec![8], vec![1]]);
        all.append(LevelList::of(vec![9, 10], 100));
        assert_eq!(read(&all, 8), [vec![5, 6, 8], vec![1], vec![9, 10]]);
        assert_eq!(LevelList::concat(Vec::new()).len(), 0);
    }
}
