//! Where a position's cell lives: one slot per position, not per index.
//!
//! Identical free pieces (KRRvKR's rooks, KRNvKNN's knights) are not merged
//! in the index (see [`crate::index`]): a position with a pair of them has
//! two indices, one per order of their squares, and the solver works on
//! the one with the squares sorted ([`Layout::sorted_identical`]). A cell
//! for every index would spend half of such a table's memory (two thirds
//! for three identical pieces, more for four) on indices nobody solves.
//! [`Slots`] numbers the sorted indices of one slice densely instead, and
//! the solver's cells and bits are kept by slot.
//!
//! Within a slice an index is a row of bit fields, most significant first:
//! the top (a pawnless table's king pair, a pawn table's kings), then one
//! 6-bit digit per free piece. A run of `k` identical pieces is `k`
//! adjacent digits; sorted, its squares `x_0 ≤ … ≤ x_(k-1)` (the highest
//! digit holds the lowest square) are one of `C(64 + k - 1, k)` multisets,
//! 2,080 for a pair instead of 4,096. A slot is the same row with each run
//! replaced by its multiset's rank, in lexicographic order, so that slots
//! keep the order of the sorted indices: the sorted indices whose slots
//! lie in a range are the sorted indices of a range of indices. Fields
//! above the highest run and below the lowest are kept as they are.
//!
//! In a table without identical pieces a slot is the index itself.
//!
//! The rank of a sorted run: its lexicographic rank is the count minus one
//! minus the colexicographic rank of the complemented, reversed run `w`
//! (`w_i = 63 - x_(k-1-i)`, also sorted), and a sorted multiset `w` is the
//! set `w_i + i`, whose colexicographic rank is `Σ C(w_i + i, i + 1)`.

use crate::{
    index::Layout,
    material::{MAX_PIECES, Material},
};

/// The longest run of identical pieces a table can have.
const LONGEST_RUN: usize = MAX_PIECES - 2;

/// Binomial coefficients `C(n, r)` for `n < 64 + LONGEST_RUN`, `r ≤
/// LONGEST_RUN`.
const BINOMIAL: [[u64; LONGEST_RUN + 1]; 64 + LONGEST_RUN] = {
    let mut table = [[0u64; LONGEST_RUN + 1]; 64 + LONGEST_RUN];
    let mut n = 0;
    while n < table.len() {
        table[n][0] = 1;
        let mut r = 1;
        while r <= LONGEST_RUN && r <= n {
            table[n][r] = table[n - 1][r - 1] + if r < n { table[n - 1][r] } else { 0 };
            r += 1;
        }
        n += 1;
    }
    table
};

/// The rank of each pair of squares, by their two digits (either order):
/// the pairs `(a, b)`, `a ≤ b`, before it in lexicographic order, `64 - i`
/// for each first square `i < a`, then `b - a`.
static PAIR_RANK: [u16; 4096] = {
    let mut table = [0u16; 4096];
    let mut bits = 0;
    while bits < 4096 {
        let (high, low) = (bits >> 6, bits & 63);
        let (a, b) = if high < low { (high, low) } else { (low, high) };
        table[bits] = (a * (127 - a) / 2 + b) as u16;
        bits += 1;
    }
    table
};

/// One field of a slice's index between the kept top and bottom: a free
/// piece's 6-bit digit (`len` 1) or a run of `len` identical pieces'
/// digits, the lowest at `shift`.
#[derive(Debug, Clone, Copy)]
struct Field {
    shift: u32,
    len: usize,
}

impl Field {
    /// How many values the field takes in a slot.
    fn radix(self) -> u64 {
        run_count(self.len)
    }
}

/// How [`Slots::slot`] numbers a slice's indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Numbering {
    /// No identical pieces: a slot is the index.
    Indices,
    /// One pair of identical pieces, the lower digit at `shift`, and no
    /// other run (KRRvKR, KRNvKNN): the solver's hot path, worked out
    /// directly.
    Pair { shift: u32 },
    /// Any other runs: field by field.
    Fields,
}

/// The dense numbering of a layout's sorted indices within a slice (see the
/// module doc).
#[derive(Debug)]
pub(crate) struct Slots {
    numbering: Numbering,
    /// Index bits from here up are kept (shifted into place).
    top_shift: u32,
    /// The fields between, most significant first.
    fields: Vec<Field>,
    /// Index bits below this are kept as they are.
    low_bits: u32,
    /// Slots per slice.
    per_slice: u64,
    /// log2 of `per_slice`, where that is a power of two (no identical
    /// pieces).
    per_slice_shift: Option<u32>,
    /// By run length: the runs' digits by rank (their bits as they stand
    /// in an index, shifted down to the run's lowest digit).
    unranked: [Vec<u32>; LONGEST_RUN + 1],
}

impl Slots {
    /// The slots of `layout`, whose runs of identical pieces are adjacent
    /// digits (every layout's are).
    pub fn new(layout: &Layout) -> Slots {
        let runs = layout.identical_runs();
        let slice_size = layout.slice_size();
        let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
            return Slots {
                numbering: Numbering::Indices,
                top_shift: 0,
                fields: Vec::new(),
                low_bits: 0,
                per_slice: slice_size,
                per_slice_shift: log2_exact(slice_size),
                unranked: Default::default(),
            };
        };
        let top_shift = first[0] + 6;
        let low_bits = *last.last().expect("runs are not empty");
        let mut fields = Vec::new();
        let mut unranked: [Vec<u32>; LONGEST_RUN + 1] = Default::default();
        let mut shift = top_shift;
        for run in runs {
            assert!(
                run.windows(2).all(|pair| pair[0] == pair[1] + 6),
                "identical pieces are adjacent digits"
            );
            while shift > run[0] + 6 {
                shift -= 6;
                fields.push(Field { shift, len: 1 });
            }
            let len = run.len();
            shift = run[len - 1];
            fields.push(Field { shift, len });
            if unranked[len].is_empty() {
                unranked[len] = runs_by_rank(len);
            }
        }
        let per_slice = fields
            .iter()
            .fold(slice_size >> top_shift, |n, field| n * field.radix())
            << low_bits;
        let numbering = match fields[..] {
            [Field { shift, len: 2 }] => Numbering::Pair { shift },
            _ => Numbering::Fields,
        };
        Slots {
            numbering,
            top_shift,
            fields,
            low_bits,
            per_slice,
            per_slice_shift: log2_exact(per_slice),
            unranked,
        }
    }

    /// Slots per slice: the slice's size, less the indices that only
    /// reorder identical pieces.
    pub fn per_slice(&self) -> u64 {
        self.per_slice
    }

    /// Whether a slot keeps its index's lowest 6-bit digit as its own
    /// lowest 6 bits (no identical piece is that digit), so that the 64
    /// indices that differ in that digit alone have 64 consecutive slots
    /// from a multiple of 64.
    pub fn keeps_lowest_digit(&self) -> bool {
        self.numbering == Numbering::Indices || self.low_bits >= 6
    }

    /// The slice's place and the slot within it of `joined`, a slot among
    /// slices whose slots lie one after another: `(place, slot)`, the
    /// inverse of [`Slots::join`].
    #[inline]
    pub fn split(&self, joined: u64) -> (u64, u64) {
        match self.per_slice_shift {
            Some(bits) => (joined >> bits, joined & ((1 << bits) - 1)),
            None => (joined / self.per_slice, joined % self.per_slice),
        }
    }

    /// Where `slot` of the slice at `place` lies among slices whose slots
    /// lie one after another.
    #[inline(always)]
    pub fn join(&self, place: u64, slot: u64) -> u64 {
        place * self.per_slice + slot
    }

    /// The slot of `offset`, an index within a slice, in either order of
    /// its identical pieces.
    #[inline(always)]
    pub fn slot(&self, offset: u64) -> u64 {
        match self.numbering {
            Numbering::Indices => offset,
            Numbering::Pair { shift } => {
                let rank = PAIR_RANK[((offset >> shift) & 4095) as usize];
                ((((offset >> (shift + 12)) * PAIR_RUNS) + u64::from(rank)) << shift)
                    | (offset & ((1 << shift) - 1))
            }
            Numbering::Fields => self.slot_by_fields(offset),
        }
    }

    /// [`Slots::slot`] field by field.
    #[inline(never)]
    fn slot_by_fields(&self, offset: u64) -> u64 {
        let mut slot = offset >> self.top_shift;
        for &Field { shift, len } in &self.fields {
            let bits = (offset >> shift) & ((1 << (6 * len)) - 1);
            slot = match len {
                1 => slot * 64 + bits,
                2 => slot * PAIR_RUNS + u64::from(PAIR_RANK[bits as usize]),
                _ => slot * run_count(len) + rank(len, bits),
            };
        }
        (slot << self.low_bits) | (offset & ((1 << self.low_bits) - 1))
    }

    /// The sorted index within a slice of `slot`: the inverse of
    /// [`Slots::slot`] on sorted indices.
    #[inline]
    pub fn offset(&self, slot: u64) -> u64 {
        match self.numbering {
            Numbering::Indices => slot,
            Numbering::Pair { shift } => {
                let rest = slot >> shift;
                let bits = self.unranked[2][(rest % PAIR_RUNS) as usize];
                ((rest / PAIR_RUNS) << (shift + 12))
                    | (u64::from(bits) << shift)
                    | (slot & ((1 << shift) - 1))
            }
            Numbering::Fields => self.offset_by_fields(slot),
        }
    }

    /// [`Slots::offset`] field by field.
    #[inline(never)]
    fn offset_by_fields(&self, slot: u64) -> u64 {
        let mut offset = slot & ((1 << self.low_bits) - 1);
        let mut rest = slot >> self.low_bits;
        for &field in self.fields.iter().rev() {
            let radix = field.radix();
            let value = rest % radix;
            let bits = match field.len {
                1 => value,
                len => u64::from(self.unranked[len][value as usize]),
            };
            offset |= bits << field.shift;
            rest /= radix;
        }
        offset | (rest << self.top_shift)
    }
}

/// Positions per side the solver keeps a cell for in `material`'s table:
/// its index size, less the indices that only reorder identical pieces
/// (KRNvKNN: 3.94 G of 7.75 G). What a build's time and memory scale
/// with.
pub fn solved_positions(material: Material) -> u64 {
    let layout = Layout::new(material.normalized());
    Slots::new(&layout).per_slice() * layout.slice_count() as u64
}

/// log2 of `n`, if `n` is a power of two.
fn log2_exact(n: u64) -> Option<u32> {
    n.is_power_of_two().then(|| n.trailing_zeros())
}

/// Sorted pairs of squares.
const PAIR_RUNS: u64 = 64 * 65 / 2;

/// Sorted runs of `len` squares.
fn run_count(len: usize) -> u64 {
    BINOMIAL[64 + len - 1][len]
}

/// The lexicographic rank of a run of `len` digits (`bits`, the highest
/// digit first), sorted first (see the module doc). Pairs, the common
/// case, read [`PAIR_RANK`] instead.
#[inline(never)]
fn rank(len: usize, bits: u64) -> u64 {
    let mut squares = [0u64; LONGEST_RUN];
    let squares = &mut squares[..len];
    for (i, square) in squares.iter_mut().enumerate() {
        *square = (bits >> (6 * (len - 1 - i))) & 63;
    }
    squares.sort_unstable();
    let colex: u64 = (0..len)
        .map(|i| BINOMIAL[(63 - squares[len - 1 - i]) as usize + i][i + 1])
        .sum();
    run_count(len) - 1 - colex
}

/// Every sorted run of `len` squares as its digits, in lexicographic
/// order: by rank.
fn runs_by_rank(len: usize) -> Vec<u32> {
    fn extend(runs: &mut Vec<u32>, prefix: u32, lowest: u32, left: usize) {
        if left == 0 {
            runs.push(prefix);
            return;
        }
        for square in lowest..64 {
            extend(runs, (prefix << 6) | square, square, left - 1);
        }
    }
    let mut runs = Vec::with_capacity(run_count(len) as usize);
    extend(&mut runs, 0, 0, len);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::Material;

    fn layout(name: &str) -> Layout {
        Layout::new(name.parse::<Material>().expect("material"))
    }

    #[test]
    fn runs_rank_in_lexicographic_order() {
        for len in 2..=LONGEST_RUN {
            let runs = runs_by_rank(len);
            assert_eq!(runs.len() as u64, run_count(len));
            assert!(runs.windows(2).all(|pair| pair[0] < pair[1]), "{len}");
            for (at, &run) in runs.iter().enumerate() {
                assert_eq!(rank(len, u64::from(run)), at as u64, "{len} {run:o}");
                if len == 2 {
                    let swapped = ((run & 63) << 6) | (run >> 6);
                    for bits in [run, swapped] {
                        assert_eq!(u64::from(PAIR_RANK[bits as usize]), at as u64);
                    }
                }
            }
        }
        assert_eq!(run_count(2), PAIR_RUNS);
        assert_eq!(PAIR_RUNS, 2_080);
        assert_eq!(run_count(3), 45_760);
    }

    /// Every sorted index of a slice has its own slot, in order, the slots
    /// are dense, and an index in another order of its identical pieces
    /// has the slot of its sorted one.
    #[test]
    fn sorted_indices_number_the_slots_densely() {
        for (name, slots_per_index) in [
            ("KRRvK", 2080.0 / 4096.0),
            ("KNNvK", 2080.0 / 4096.0),
            ("KBBBvK", 45_760.0 / 262_144.0),
            ("KRRvKP", 2080.0 / 4096.0),
            ("KRvKR", 1.0),
        ] {
            let layout = layout(name);
            let slots = Slots::new(&layout);
            let size = layout.slice_size();
            assert_eq!(
                slots.per_slice() as f64,
                size as f64 * slots_per_index,
                "{name}"
            );
            let mut next = 0;
            for offset in 0..size {
                let sorted = layout.sorted_identical(offset);
                assert_eq!(slots.slot(offset), slots.slot(sorted), "{name} {offset}");
                if sorted == offset {
                    assert_eq!(slots.slot(offset), next, "{name} {offset}");
                    assert_eq!(slots.offset(next), offset, "{name} {offset}");
                    next += 1;
                }
            }
            assert_eq!(next, slots.per_slice(), "{name}");
        }
    }

    /// A pair's direct numbering is the field-by-field one (which numbers
    /// six-piece tables with two pairs, KRRvKNN).
    #[test]
    fn a_pair_numbers_as_its_fields_do() {
        for name in ["KRRvK", "KRRvKB", "KNvKRR", "KRRvKP"] {
            let layout = layout(name);
            let slots = Slots::new(&layout);
            assert!(matches!(slots.numbering, Numbering::Pair { .. }), "{name}");
            for offset in (0..layout.slice_size()).step_by(7) {
                assert_eq!(
                    slots.slot(offset),
                    slots.slot_by_fields(offset),
                    "{name} {offset}"
                );
            }
            for slot in (0..slots.per_slice()).step_by(7) {
                assert_eq!(
                    slots.offset(slot),
                    slots.offset_by_fields(slot),
                    "{name} {slot}"
                );
            }
        }
    }

    /// Where a table's lowest digit is not an identical piece, the 64
    /// indices that differ in it alone have 64 consecutive slots from a
    /// multiple of 64 (the solver tests their bits as one word); where it
    /// is, slots do not keep it.
    #[test]
    fn the_lowest_digit_is_kept_unless_it_is_an_identical_piece() {
        for (name, kept) in [
            ("KRRvKR", true),
            ("KRRvK", false),
            ("KQRvKR", true),
            ("KRPvKR", true),
            ("KQNNvK", false),
            ("KNNvKR", true),
            ("KBBBvKN", true),
        ] {
            let layout = layout(name);
            let slots = Slots::new(&layout);
            assert_eq!(slots.keeps_lowest_digit(), kept, "{name}");
            if !kept {
                continue;
            }
            assert!(slots.per_slice().is_multiple_of(64), "{name}");
            for offset in (0..layout.slice_size()).step_by(61) {
                let first = slots.slot(offset & !63);
                assert!(first.is_multiple_of(64), "{name} {offset}");
                assert_eq!(slots.slot(offset), first + (offset & 63), "{name} {offset}");
            }
        }
    }
}
