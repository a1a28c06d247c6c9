//! A solved table as a file keeps it: what the writer needs of the solver
//! ([`SolvedValues`]), the code each position of a stream takes, and the
//! order of the pieces' digits the file numbers positions in.
//!
//! The order of the digits decides which positions are neighbours in a
//! stream, so how long the runs of equal codes are: the same table takes
//! 35-41 % fewer bytes in its best order of free pieces than in the
//! solver's (KRBvKR, KRNvKR, KQRvKR), and a pawn table up to half as many
//! with its kings' digits moved too (KNvKP; see BENCHMARKS.md). No fixed
//! rule finds the best one. [`plan_file`] therefore tries every order
//! [`Layout::orders`] lists (identical pieces together; a pawnless
//! table's kings first, a small pawn table's anywhere) on a sample of
//! each stream and keeps the one whose estimate is smallest; the file's
//! header records it, and readers number positions in it. The same
//! estimate decides which side's DTZ the file keeps, so the other side's
//! DTZ stream is never encoded. The sample is fixed, so the choice does
//! not depend on the thread count.

use rayon::prelude::*;
use shakmaty::Color;

use super::{
    Section, StreamId,
    codes::{dtz_code, wdl_code},
    stream::estimate_bytes,
};
use crate::{
    index::{Layout, Reorder},
    value::{Dtz, Rule, Wdl},
};

/// Positions per side up to which a whole stream is the sample.
const WHOLE_UP_TO: u64 = 1 << 18;
/// Windows the sample of a larger stream is cut into.
const WINDOWS: u64 = 16;
/// Positions per window.
const WINDOW: u64 = 1 << 14;
/// Positions per side up to which a pawn table's kings may leave the top
/// of the index. The sample ranks such orders well where it is a few
/// percent of the table (every 3-4 piece table: KNvKP's chosen order takes
/// 56 % fewer bytes than the kings-first one), not where it is 0.07 %
/// (KRPvKR: the order it chose, Black's king first, took 3.4 % more bytes
/// and 249 s to build instead of 82; see BENCHMARKS.md).
const KINGS_MOVE_UP_TO: u64 = 1 << 23;

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
        for index in start..start + len as u64 {
            let code = match (previous, self.wanted(id, index)) {
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

    /// What the file may store at `index` of one stream.
    #[inline]
    fn wanted(&self, id: StreamId, index: u64) -> Wanted {
        let table = self.table;
        let rule = table.rule();
        // Readers read the sorted order of identical pieces only.
        if self.identical && self.layout.sorted_identical(index) != index {
            return Wanted::Any;
        }
        let solver = self.to_solver.apply(index);
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

    /// About how many bytes each stream takes, in [`StreamId::ALL`] order,
    /// each estimated from a fixed sample ([`estimate_bytes`]).
    fn estimated_bytes(&self) -> [f64; 4] {
        let n = self.layout.size();
        let (starts, len): (Vec<u64>, u64) = if n <= WHOLE_UP_TO {
            (vec![0], n)
        } else {
            let windows = (0..WINDOWS)
                .map(|i| i * (n - WINDOW) / (WINDOWS - 1))
                .collect();
            (windows, WINDOW)
        };
        let scale = (starts.len() as u64 * len) as f64 / n as f64;
        let bytes: Vec<f64> = StreamId::ALL
            .par_iter()
            .map(|&id| {
                let sample: Vec<Vec<u16>> = starts
                    .iter()
                    .map(|&start| self.codes(id, start, len as usize))
                    .collect();
                estimate_bytes(&sample, scale)
            })
            .collect();
        bytes.try_into().expect("four streams")
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

/// How `table` is written: in the order, of those [`Layout::orders`]
/// lists (with the kings first in tables over [`KINGS_MOVE_UP_TO`]
/// positions per side), that gives the fewest estimated bytes (both WDL
/// streams and the smaller DTZ stream; the solver's own order on a tie,
/// then the first listed), keeping the DTZ of the side whose stream is
/// estimated smaller (White on a tie). The estimate decides the side so
/// that the other side's DTZ stream is never encoded.
pub(super) fn plan_file<T: SolvedValues + ?Sized>(table: &T) -> (InFileOrder<'_, T>, Color) {
    let material = table.layout().material();
    let mut orders = Layout::orders(material);
    if table.layout().size() > KINGS_MOVE_UP_TO {
        orders.retain(|order| order.starts_with(&[0, 1]));
    }
    let estimates: Vec<[f64; 4]> = orders
        .par_iter()
        .map(|order| {
            let layout = Layout::with_order(material, order).expect("an order it lists");
            InFileOrder::new(table, layout).estimated_bytes()
        })
        .collect();
    let total = |e: &[f64; 4]| e[0] + e[1] + e[2].min(e[3]);
    let best = (0..orders.len())
        .min_by(|&a, &b| {
            total(&estimates[a])
                .total_cmp(&total(&estimates[b]))
                .then(a.cmp(&b))
        })
        .expect("at least one order");
    let layout = Layout::with_order(material, &orders[best]).expect("an order it lists");
    let [.., white, black] = estimates[best];
    let dtz_side = if black < white {
        Color::Black
    } else {
        Color::White
    };
    (InFileOrder::new(table, layout), dtz_side)
}
