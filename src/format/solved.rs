//! A solved table as a file keeps it: what the writer needs of the solver
//! ([`SolvedValues`]), the code each position of a stream takes, and the
//! order of the pieces' digits each stream numbers positions in.
//!
//! The order of the digits decides which positions are neighbours in a
//! stream, so how long the runs of equal codes are: the same table takes
//! 35-41 % fewer bytes in its best order of free pieces than in the
//! solver's (KRBvKR, KRNvKR, KQRvKR), and a table up to half as many with
//! its kings moved too (KNvKP, KBBvK; see BENCHMARKS.md). No fixed rule
//! finds the best one. [`plan_file`] therefore tries every order
//! [`Layout::orders`] lists (identical pieces together; a pawnless table's
//! king pair anywhere, or one king first and the other last, as its fastest
//! digit: KQBvK's DTZ takes 31 % fewer bytes in `kQBK` than in the pair
//! order format 9 chose; a pawn table's kings each anywhere) on a sample of
//! each stream and keeps, for each stream, the one whose estimate is
//! smallest (the two sides to move want different orders: KRBvKR's WDL
//! with Black to move took 37 % fewer bytes in `krBRK` than in the order
//! best for its DTZ); the file's header records them, and readers number
//! a position in its side's WDL order. The same estimate decides which
//! side's DTZ the file keeps, so the other side's DTZ stream is never
//! encoded. The sample is fixed, so the choice does not depend on the
//! thread count.

use rayon::prelude::*;
use shakmaty::{ByColor, Color};

use super::{
    Section, StreamId,
    codes::{dtz_code, wdl_code},
    stream::estimate_bytes,
};
use crate::{
    index::{Layout, Reorder},
    value::{Dtz, Rule, Wdl},
};

/// Windows the sample of a larger stream is cut into.
const WINDOWS: u64 = 16;
/// Positions per window.
const WINDOW: u64 = 1 << 14;
/// In a table of at most [`KINGS_MOVE_UP_TO`] positions per side, each
/// stream's this many orders of the smallest estimates on the sample are
/// estimated again on a sample of [`FINAL_WINDOWS`] windows, and the
/// smallest of those is written.
/// The first sample misranks close orders: in format 10, KRNvK's chosen
/// order took 9 % more bytes than format 9's.
const FINALISTS: usize = 3;
/// Windows of the finalists' sample (a 3-4 piece table's is then about
/// 40 % of it).
const FINAL_WINDOWS: u64 = 4 * WINDOWS;
/// Positions per side up to which a table's kings leave the top of the
/// index wherever the estimate says. The sample ranks such orders well
/// where it is a few percent of the table (every 3-4 piece table: KNvKP's
/// chosen order takes 56 % fewer bytes than the kings-first one); where
/// it is 0.07 % only a large estimated gain is trusted
/// ([`KINGS_MOVE_GAIN`]).
const KINGS_MOVE_UP_TO: u64 = 1 << 23;
/// In a larger table, the kings leave the top only if the best such
/// order's estimate is at most this fraction of the best kings-first
/// order's. KBBvKP's estimates: 0.21 (`BBkK`; written whole, 75 % fewer
/// bytes); KRPvKR's: 0.93 (`kKrR`; written whole, 3.4 % more bytes; see
/// BENCHMARKS.md).
const KINGS_MOVE_GAIN: f64 = 0.5;

/// What the writer needs of a solved table.
pub trait SolvedValues: Sync {
    /// The table's index scheme (the solver's order).
    fn layout(&self) -> &Layout;

    /// The rule the table was solved for.
    fn rule(&self) -> Rule;

    /// The final DTZ of the position at `index` with `turn` to move;
    /// `None` where there is no position (illegal placements).
    fn value(&self, turn: Color, index: u64) -> Option<Dtz>;

    /// Whether the position at `index`, a win of value `dtz`, has a
    /// zeroing move that wins as fast as a win of its kind can be
    /// ([`Dtz::fastest`]): readers find that move first
    /// ([`crate::probe::won_by_zeroing`]), so the file may store any DTZ
    /// there. Answering `false` is always sound, and is what a table
    /// without its sub-tables at hand answers.
    fn zeroing_decides(&self, turn: Color, index: u64, dtz: Dtz) -> bool {
        let _ = (turn, index, dtz);
        false
    }

    /// Whether values read in the solver's index order come much faster
    /// than values read scattered (a large table whose finished levels are
    /// packed in chunks); the writer then reads in that order. Answering
    /// `false` is always sound.
    fn reads_in_order(&self) -> bool {
        false
    }

    /// Whether the best capture of the position at `index` gives the side
    /// to move the position's WDL: readers find it by a capture search
    /// ([`crate::probe::position_wdl`]), so the file may store any WDL up
    /// to it. Answering `false` is always sound.
    fn capture_reaches(&self, turn: Color, index: u64) -> bool {
        let _ = (turn, index);
        false
    }
}

/// A solved table seen in a file's order of digits.
pub(super) struct InFileOrder<'a, T: ?Sized> {
    table: &'a T,
    /// The file's index scheme.
    layout: Layout,
    /// From the file's indices to the solver's.
    to_solver: Reorder,
    /// Whether the table has identical pieces (then only the sorted order
    /// of their squares is read).
    identical: bool,
}

impl<'a, T: SolvedValues + ?Sized> InFileOrder<'a, T> {
    /// `table` numbered by `layout`, a layout of its material.
    pub fn new(table: &'a T, layout: Layout) -> InFileOrder<'a, T> {
        let to_solver = layout.reorder_to(table.layout());
        InFileOrder {
            table,
            identical: layout.has_identical_pieces(),
            layout,
            to_solver,
        }
    }

    /// The file's index scheme.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The codes of `len` positions of one stream from file index
    /// `start`, with "don't care" positions taking the value before them
    /// (see the module doc of the format): illegal positions, identical
    /// pieces out of order, draws in DTZ, and wins in DTZ that a zeroing
    /// move decides ([`SolvedValues::zeroing_decides`]); a WDL that a
    /// capture reaches ([`SolvedValues::capture_reaches`]) takes the value
    /// before it if that is no higher, else its own. Positions before the
    /// first exact code take that code as the value before them (the
    /// stream's default where there is none).
    pub fn codes(&self, id: StreamId, start: u64, len: usize) -> Vec<u16> {
        let mut out = Vec::with_capacity(len);
        // What the positions before the first exact code want.
        let mut lead = Vec::new();
        let mut previous = None;
        for wanted in self.all_wanted(id, start, len) {
            let code = match (previous, wanted) {
                (Some(before), wanted) => wanted.code_after(before),
                (None, Wanted::Exactly(code)) => {
                    out.extend(resolve(&lead, code));
                    code
                }
                (None, wanted) => {
                    lead.push(wanted);
                    continue;
                }
            };
            out.push(code);
            previous = Some(code);
        }
        if previous.is_none() {
            let default = match id.section {
                Section::Wdl => wdl_code(Wdl::Draw),
                _ => 1,
            };
            out.extend(resolve(&lead, default));
        }
        out
    }

    /// What each of `len` positions of one stream from file index `start`
    /// may store. Where the table reads faster in its own order
    /// ([`SolvedValues::reads_in_order`]) and the file's order moves
    /// digits, the range is read as the aligned blocks that cover it, each
    /// in the solver's order: an order that moves a low digit high would
    /// otherwise read values scattered across the whole table.
    fn all_wanted(&self, id: StreamId, start: u64, len: usize) -> Vec<Wanted> {
        let end = start + len as u64;
        if self.to_solver.is_identity() || !self.table.reads_in_order() {
            return (start..end)
                .map(|index| self.wanted(id, index, self.to_solver.apply(index)))
                .collect();
        }
        let bits = len.next_power_of_two().trailing_zeros();
        let block = 1u64 << bits;
        let mut wanted = vec![Wanted::Any; len];
        for base in (start / block * block..end).step_by(block as usize) {
            self.to_solver
                .for_each_in_block(base, bits, |offset, solver| {
                    let index = base + offset as u64;
                    if (start..end).contains(&index) {
                        wanted[(index - start) as usize] = self.wanted(id, index, solver);
                    }
                });
        }
        wanted
    }

    /// What the file may store at file index `index` of one stream, the
    /// solver's `solver` (if `index` names a placement).
    #[inline]
    fn wanted(&self, id: StreamId, index: u64, solver: u64) -> Wanted {
        let table = self.table;
        let rule = table.rule();
        // Readers read the sorted order of identical pieces only, and
        // never an index without a placement (then `solver` means nothing).
        if !self.layout.names_placement(index)
            || self.identical && self.layout.sorted_identical(index) != index
        {
            return Wanted::Any;
        }
        match (id.section, table.value(id.turn, solver)) {
            (Section::Wdl, Some(dtz)) => {
                let code = wdl_code(Wdl::from_dtz(dtz, rule));
                if table.capture_reaches(id.turn, solver) {
                    Wanted::AtMost(code)
                } else {
                    Wanted::Exactly(code)
                }
            }
            (Section::Dtz, Some(dtz))
                if dtz.0 < 0 || (dtz.0 > 0 && !table.zeroing_decides(id.turn, solver, dtz)) =>
            {
                Wanted::Exactly(dtz_code(dtz, rule))
            }
            _ => Wanted::Any,
        }
    }

    /// About how many bytes each of `streams` takes, in
    /// [`StreamId::ALL`] order (infinite for the others), each estimated
    /// from a fixed sample of `windows` windows (the whole stream where it
    /// is no longer; [`estimate_bytes`]).
    fn estimated_bytes(&self, windows: u64, streams: &[StreamId]) -> [f64; 4] {
        let n = self.layout.size();
        let (starts, len): (Vec<u64>, u64) = if n <= windows * WINDOW {
            (vec![0], n)
        } else {
            let starts = (0..windows)
                .map(|i| i * (n - WINDOW) / (windows - 1))
                .collect();
            (starts, WINDOW)
        };
        let scale = (starts.len() as u64 * len) as f64 / n as f64;
        let bytes: Vec<f64> = streams
            .par_iter()
            .map(|&id| {
                let sample: Vec<Vec<u16>> = starts
                    .iter()
                    .map(|&start| self.codes(id, start, len as usize))
                    .collect();
                estimate_bytes(&sample, scale)
            })
            .collect();
        let mut all = [f64::INFINITY; 4];
        for (id, bytes) in streams.iter().zip(bytes) {
            all[id.slot()] = bytes;
        }
        all
    }
}

/// What a position's stored code may be.
#[derive(Clone, Copy)]
enum Wanted {
    /// This code.
    Exactly(u16),
    /// This code or any below it (a WDL that a capture reaches).
    AtMost(u16),
    /// Any code ("don't care").
    Any,
}

impl Wanted {
    /// The code stored for a position that wants this, after a position
    /// stored as `before`: the value before it wherever that is allowed.
    #[inline]
    fn code_after(self, before: u16) -> u16 {
        match self {
            Wanted::Exactly(code) => code,
            Wanted::AtMost(code) => before.min(code),
            Wanted::Any => before,
        }
    }
}

/// The codes of positions that want `lead`, the first after a position
/// stored as `first`.
fn resolve(lead: &[Wanted], first: u16) -> impl Iterator<Item = u16> + '_ {
    lead.iter().scan(first, |before, wanted| {
        *before = wanted.code_after(*before);
        Some(*before)
    })
}

/// How `table` is written: each stream in the order, of those
/// [`Layout::orders`] lists, that gives it the fewest estimated bytes (see
/// [`best_order`]), keeping the DTZ of the side whose best stream is
/// estimated smaller (White on a tie). The estimate decides the side so
/// that the other side's DTZ stream is never encoded. A table of
/// symmetric material keeps White to move only, WDL and DTZ (readers
/// mirror Black to move: [`crate::index::Layout::mirrored_index`]).
pub(super) fn plan_file<T: SolvedValues + ?Sized>(table: &T) -> FilePlan<'_, T> {
    let material = table.layout().material();
    let size = table.layout().size();
    let mut orders = Layout::orders(material);
    // A large table's sample misranks orders led by one king (KRBvKR's
    // estimates chose `krRBK`, whose file took 9 % more bytes than format
    // 9's pair order): its kings stay a pair.
    if size > KINGS_MOVE_UP_TO {
        orders.retain(|order| material.has_pawns() || order.windows(2).any(|w| w == [0, 1]));
    }
    let estimate = |order: &[u8], windows: u64, streams: &[StreamId]| {
        let layout = Layout::with_order(material, order).expect("an order it lists");
        InFileOrder::new(table, layout).estimated_bytes(windows, streams)
    };
    // A table of symmetric material keeps White to move only (Black to
    // move is read on the mirrored board).
    let symmetric = material.is_symmetric();
    let streams: Vec<StreamId> = StreamId::ALL
        .into_iter()
        .filter(|id| !symmetric || id.turn == Color::White)
        .collect();
    let mut estimates: Vec<[f64; 4]> = orders
        .par_iter()
        .map(|order| estimate(order, WINDOWS, &streams))
        .collect();
    if size <= KINGS_MOVE_UP_TO {
        // Each stream's closest candidates again, on a larger sample; the
        // others drop out of that stream's choice.
        let finalists: Vec<(usize, StreamId)> = streams
            .iter()
            .flat_map(|&id| {
                let mut ranked: Vec<usize> = (0..orders.len()).collect();
                let e = |i: usize| estimates[i][id.slot()];
                ranked.sort_by(|&a, &b| e(a).total_cmp(&e(b)).then(a.cmp(&b)));
                ranked.truncate(FINALISTS);
                ranked.into_iter().map(move |i| (i, id))
            })
            .collect();
        let finals: Vec<f64> = finalists
            .par_iter()
            .map(|&(i, id)| estimate(&orders[i], FINAL_WINDOWS, &[id])[id.slot()])
            .collect();
        for e in &mut estimates {
            e.fill(f64::INFINITY);
        }
        for (&(i, id), bytes) in finalists.iter().zip(finals) {
            estimates[i][id.slot()] = bytes;
        }
    }
    let best = |id: StreamId| {
        let totals: Vec<f64> = estimates.iter().map(|e| e[id.slot()]).collect();
        let i = best_order(&orders, &totals, size);
        (i, totals[i])
    };
    let in_order = |i: usize| {
        let layout = Layout::with_order(material, &orders[i]).expect("an order it lists");
        InFileOrder::new(table, layout)
    };
    let wdl = ByColor::new_with(|turn| {
        let turn = if symmetric { Color::White } else { turn };
        best(StreamId {
            section: Section::Wdl,
            turn,
        })
        .0
    });
    let dtz_of = |turn| {
        best(StreamId {
            section: Section::Dtz,
            turn,
        })
    };
    let (white, black) = (dtz_of(Color::White), dtz_of(Color::Black));
    let (dtz_side, dtz) = if black.1 < white.1 && !symmetric {
        (Color::Black, black.0)
    } else {
        (Color::White, white.0)
    };
    FilePlan {
        wdl: wdl.map(in_order),
        dtz: in_order(dtz),
        dtz_side,
    }
}

/// How a table is written: each stream's order of digits, and the side
/// whose DTZ is kept.
pub(super) struct FilePlan<'a, T: ?Sized> {
    /// Each side's WDL stream (a mirrored file writes White's only, and
    /// numbers Black's positions as White's).
    pub wdl: ByColor<InFileOrder<'a, T>>,
    /// The kept DTZ stream.
    pub dtz: InFileOrder<'a, T>,
    /// The side to move whose DTZ is kept.
    pub dtz_side: Color,
}

impl<'a, T: SolvedValues + ?Sized> FilePlan<'a, T> {
    /// The table as one stream numbers it.
    pub fn stream(&self, id: StreamId) -> &InFileOrder<'a, T> {
        match id.section {
            Section::Dtz => &self.dtz,
            _ => self.wdl.get(id.turn),
        }
    }
}

/// Which of `orders`, estimated at `totals` bytes, a table of `size`
/// positions per side is written in: the smallest estimate (the first
/// listed on a tie, the solver's own order first), except that a table
/// over [`KINGS_MOVE_UP_TO`] keeps its kings first unless moving them is
/// estimated to leave at most [`KINGS_MOVE_GAIN`] of the bytes.
fn best_order(orders: &[Vec<u8>], totals: &[f64], size: u64) -> usize {
    let smallest = |keep: &dyn Fn(&[u8]) -> bool| {
        (0..orders.len())
            .filter(|&i| keep(&orders[i]))
            .min_by(|&a, &b| totals[a].total_cmp(&totals[b]).then(a.cmp(&b)))
    };
    let best = smallest(&|_| true).expect("at least one order");
    let kings_first = smallest(&|order| order.starts_with(&[0, 1])).expect("the solver's order");
    if size > KINGS_MOVE_UP_TO && totals[best] > KINGS_MOVE_GAIN * totals[kings_first] {
        kings_first
    } else {
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's sample estimates (bytes) of some of KRPvKR's and
    /// KBBvKP's orders (402,653,184 positions per side each).
    #[test]
    fn a_large_pawn_table_moves_its_kings_only_for_a_large_estimated_gain() {
        let krpvkr: Vec<Vec<u8>> = vec![
            vec![0, 1, 2, 3],
            vec![0, 1, 3, 2],
            vec![1, 0, 3, 2],
            vec![3, 0, 1, 2],
        ];
        let krpvkr_bytes = [19_392_727.0, 19_374_758.0, 18_045_214.0, 18_615_628.0];
        let large = 402_653_184;
        assert_eq!(best_order(&krpvkr, &krpvkr_bytes, large), 1, "kings first");
        // The same estimates in a table the sample covers well.
        assert_eq!(best_order(&krpvkr, &krpvkr_bytes, KINGS_MOVE_UP_TO), 2);
        let kbbvkp: Vec<Vec<u8>> = vec![
            vec![0, 1, 2, 3],
            vec![1, 0, 2, 3],
            vec![2, 3, 0, 1],
            vec![2, 3, 1, 0],
        ];
        let kbbvkp_bytes = [22_476_624.0, 21_224_014.0, 6_486_384.0, 4_562_609.0];
        assert_eq!(best_order(&kbbvkp, &kbbvkp_bytes, large), 3, "BBkK");
        // A tie goes to the order listed first.
        assert_eq!(best_order(&kbbvkp, &[5.0, 5.0, 5.0, 5.0], large), 0);
    }
}
