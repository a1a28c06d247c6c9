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
//! order format 9 chose, or any piece alone of its kind leading, from
//! format 13: KRvKN's WDL led by its knight; a pawn table's kings each
//! anywhere) on a sample of
//! each stream and keeps, for each stream, the one whose estimate is
//! smallest (the two sides to move want different orders: KRBvKR's WDL
//! with Black to move took 37 % fewer bytes in `krBRK` than in the order
//! best for its DTZ); the file's header records them, and readers number
//! a position in its side's WDL order. The same estimate decides which
//! side's DTZ the file keeps, so the other side's DTZ stream is never
//! encoded. In a 3-4 piece table each stream's finalists from that sample
//! are then judged by the grammar the writer would build from their whole
//! stream. In a larger one that sample is too small to rank orders. A
//! large pawnless table's WDL orders are therefore ranked again by a small
//! grammar on a larger sample (as Syzygy's generator ranks them:
//! [`Estimate::Ranking`]; every order screened on a quarter of it first,
//! [`Estimate::Screening`], and the best ranked), and the best few are
//! judged by the grammar the writer would build, on windows it was not
//! built from. Its kept DTZ stream, which no cheap estimate ranks (the
//! first sample, the ranking grammar and a count of code contexts all
//! misranked KRRvKR's or KQRvKR's orders), is judged held out in every
//! order whose kings lead as a pair, where the smallest of the orders
//! written whole lay (KRRvKR: all 22; KQRvKR: 8 of 144). A table with
//! pawns keeps the first estimates' choice within limits, and where that
//! choice keeps the kings at the top while the smallest estimate moves
//! them, judges the two held out (its WDL streams and kept DTZ); searching
//! thoroughly, a pawnless table's DTZ finalists are judged held out in
//! both sides, in the orders of the best first estimates (any piece may
//! lead) and in every order whose kings lead as a pair, and a pawn
//! table's WDL orders are ranked and judged as a pawnless table's are
//! (the first sample chose orders whose WDL took up to twice the bytes:
//! KBPvKP, KPPvKQ; at 1.44 times KRPvKR's build time), and the closest
//! finalists of each judged stream, with the DTZ order a default build
//! would choose, are then encoded whole and the one of the fewest bytes
//! written as encoded. Either way a judged winner's
//! grammar is the one written. The samples are fixed, so the choice does
//! not depend on the thread count.
//!
//! None of this runs for a table `tables/ORDERS` lists, built under the
//! 50-move rule, unless asked for ([`OrderSearch::Recorded`], the
//! default): its streams are written in the orders recorded there, with
//! the grammars a search that chose them builds, so the file is the one
//! that search wrote (see the recorded module).

use std::sync::OnceLock;

use rayon::prelude::*;
use shakmaty::{ByColor, Color};

use super::{
    MAX_CHUNK_POSITIONS, Section, StreamId,
    codes::{dtz_code, wdl_code},
    grammar::Grammar,
    recorded::{RecordedOrders, recorded_orders},
    stream::{
        EncodedStream, HeldOutBytes, HeldOutWindows, SEGMENT, encode_stream, estimate_bytes,
        held_out_bytes, ranking_bytes, scatter, stream_grammar, whole_stream_grammar,
    },
};
use crate::{
    index::{LEAD_FLAG, Layout, Reorder},
    value::{Dtz, Rule, Wdl},
};

/// Windows the sample of a larger stream is cut into.
const WINDOWS: u64 = 16;
/// Positions per window.
const WINDOW: u64 = 1 << 14;
/// Windows of [`WINDOW`] positions a large pawnless table's WDL streams
/// are ranked on ([`Estimate::Ranking`]), the orders that pass the
/// screening ([`SCREENING_WINDOWS`]), to pick the
/// finalists judged held out ([`LARGE_FINALISTS`]): 16 or 32 of them
/// ranked KRBvKR's best order with Black to move 7th or 9th, 64 first,
/// 512 second, at eight times the cost (see BENCHMARKS.md).
const RANKING_WINDOWS: u64 = 64;
/// Windows every order of a large pawnless table's WDL stream is first
/// screened on ([`Estimate::Screening`]): the first of the
/// [`RANKING_WINDOWS`] windows' pseudo-random starts, so a quarter of
/// the reads. Only the best [`SCREENED`] orders, and the best
/// [`SCREENED_PAIRS`] of those that keep the kings a pair, are ranked on
/// all [`RANKING_WINDOWS`]. The screening ranks orders loosely: of the
/// three best orders the full ranking picked for each WDL stream of
/// KRBvKR, KRNvKR, KBNvKR, KQRvKR and KRRvKR, all stood 31st or better on
/// it but one of KQRvKR's (61st; it did not win). With the best 24 (and 8
/// pairs) ranked, KBNvKR's file took 288 bytes more; with 32 all five
/// files are byte-identical, and choosing their orders reads about half
/// as many positions (see BENCHMARKS.md).
const SCREENING_WINDOWS: u64 = 16;
/// See [`SCREENING_WINDOWS`].
const SCREENED: usize = 32;
/// See [`SCREENING_WINDOWS`].
const SCREENED_PAIRS: usize = 8;
/// In a table of at most [`SAMPLE_RANKS_UP_TO`] positions per side, each
/// stream's this many orders of the smallest estimates on the first
/// sample are judged by the grammar the writer would build from the whole
/// stream ([`InFileOrder::whole_grammar`]), and the smallest is written
/// with that grammar. The first sample misranks close orders (in format
/// 10, KRNvK's chosen order took 9 % more bytes than format 9's), and so
/// did a second sample of 64 windows, which three finalists had. Two
/// judged whole take the 3-4 set 0.36 % fewer bytes in about the same
/// build time (the winner's grammar is not built again), three 0.68 %
/// fewer in 21 % more, one 1.1 % more in 13 % less (see BENCHMARKS.md).
const FINALISTS: usize = 2;
/// Positions per side up to which a table's first sample is a few percent
/// of it (every 3-4 piece table), so that it ranks orders well enough to
/// pick finalists that are judged whole. A larger table's first
/// sample is 0.07 % of it, and its estimates are 2-14 times too low, by a
/// different factor for each order (KRBvKR's estimates chose `krRBK`, whose
/// file took 9 % more bytes than format 9's pair order): its finalists are
/// ranked by [`Estimate::Ranking`] and judged by
/// [`InFileOrder::held_out_bytes`] instead (a pawnless table's WDL, and
/// searching thoroughly its DTZ and a pawn table's WDL), or the first
/// estimates' choice within limits ([`KINGS_MOVE_GAIN`]) is judged held
/// out against their smallest ([`pawn_candidates`]).
const SAMPLE_RANKS_UP_TO: u64 = 1 << 23;
/// In a larger table with pawns, the kings leave the top only if the best
/// such order's first estimate is at most this fraction of the best
/// kings-first order's. KBBvKP's estimates: 0.21 (`BBkK`; written whole,
/// 75 % fewer bytes); KRPvKR's: 0.93 (`kKrR`; written whole, 3.4 % more
/// bytes; see BENCHMARKS.md). Judging its finalists held out
/// ([`InFileOrder::held_out_bytes`]) gave KRPvKR a file 0.45 % larger than
/// this rule's, and took 38 % longer. Where the rule keeps the kings at
/// the top, a pawn table's WDL and kept DTZ judge that order held out
/// against the smallest estimate ([`pawn_candidates`]): the estimates
/// misjudge the gain both ways (KBPvKB's 0.52-0.57 were losses, KBPvKP's
/// 0.63 and 0.80 gains of 41-44 %).
const KINGS_MOVE_GAIN: f64 = 0.5;
/// A larger pawnless table's finalists per stream judged held out: this
/// many orders of the smallest first estimates, plus
/// [`LARGE_PAIR_FINALISTS`] of the smallest among those that keep the
/// kings next to each other, which the first estimates misrank against
/// the rest the most (KQRvKR's WDL with Black to move is smallest in
/// `QKkRr`).
const LARGE_FINALISTS: usize = 3;
/// See [`LARGE_FINALISTS`].
const LARGE_PAIR_FINALISTS: usize = 2;
/// Searching thoroughly, a larger table's judged DTZ stream encodes this
/// many of its finalists of the smallest held-out estimates whole, and
/// the order a default build would choose (every finalist of a WDL
/// stream), and keeps the one of the fewest bytes. The
/// held-out estimate leaves out what a stream costs for its length alone
/// (an index entry per 65,536 positions, a block per 65,535 at least),
/// which is most of a small WDL stream: KBBNvK's WDL with White to move
/// took 55,911 bytes in the order estimated at 8,176 and 67,746 in the
/// one estimated at 8,049. Its DTZ estimates were up to 23 % low, least
/// for orders led by the kings (KRRvKR's smallest DTZ was its third
/// finalist; see BENCHMARKS.md).
const EXACT_DTZ_FINALISTS: usize = 3;

/// How hard the writer searches each stream's order of digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OrderSearch {
    /// A table `tables/ORDERS` lists, built under the 50-move rule, is
    /// written in the orders recorded there, without a search (see the
    /// recorded module): the same file as the build they were taken from,
    /// in a third less time for a large table. Any other table is
    /// searched as [`OrderSearch::Sampled`] searches.
    #[default]
    Recorded,
    /// Every order estimated on a sample, the closest judged by the
    /// grammar of their whole stream (a table of at most
    /// `SAMPLE_RANKS_UP_TO` positions per side); in a larger pawnless
    /// table, its WDL's orders ranked again by a small grammar on a larger
    /// sample and the best judged by the grammar the writer would build,
    /// on windows it was not built from, and its kept DTZ judged so in
    /// every order whose kings lead as a pair; else the first estimates'
    /// choice within limits (`KINGS_MOVE_GAIN`), judged held out against
    /// the smallest estimate where they differ (a pawn table's WDL and
    /// kept DTZ).
    Sampled,
    /// As [`OrderSearch::Sampled`], except that a larger pawnless table's
    /// DTZ is judged held out (`InFileOrder::held_out_bytes`) in both
    /// sides, in the orders of the best first estimates
    /// (`LARGE_FINALISTS`, which may be led by any piece) and in every
    /// order whose kings lead as a pair, and that every held-out judgment
    /// also reads windows out of step with the digits
    /// (`HeldOutWindows::EvenAndScattered`). With those windows alone the
    /// twenty four-against-one pawnless tables took 17 % fewer bytes than
    /// default builds (KRRRvK 65 %; four 0.1-4.2 % more), the queen and
    /// minor piece against one piece tables 9-21 % fewer, KRBvKR 9 % and
    /// KRNvKR 6 % more, at about 1.4 to 2 times the build time; with both,
    /// the sixty pawnless five-piece tables take 7.6 % fewer bytes than
    /// default builds (four against
    /// one 17.5 %, three against two 3.1 %), the same as with those alone
    /// on the 47 built both ways, single files 13 % smaller to 20 % larger
    /// (KRRvKR's 10.6 % larger than its default file); and a
    /// larger pawn table's WDL orders are ranked and judged as a pawnless
    /// table's are: KBPvKP's WDL takes 52 % fewer bytes, KPPvKQ's 48 %,
    /// KPPvKN's 28 %, KRPvKR's the same, for 1.44 times KRPvKR's build
    /// time. Each judged stream's closest finalists, and the DTZ order a
    /// default build would choose, are then encoded whole
    /// (`EXACT_DTZ_FINALISTS`) and the smallest written, so a file is never
    /// larger than a default build's: KRRvKR's takes 10.3 % fewer bytes
    /// than without (0.8 % fewer than its default file) in 1.86 times the
    /// build time (see BENCHMARKS.md).
    Thorough,
}

/// Reads ahead a gather in a file's order asks for
/// ([`SolvedValues::prefetch`]). A large table read in an order led by a
/// piece reads its cells scattered all over it: asking 16 reads ahead
/// took KRBvKR's build 0.95× the time of sorting each range's indices
/// first and asking nothing, 48 ahead 1.02× of 16, and dropping the sort
/// then 0.92× (see BENCHMARKS.md).
const PREFETCH_AHEAD: usize = 16;

/// Positions per side up to which a stream in an order led by a piece
/// reads each value as its index comes, asking nothing ahead: every table
/// of 3-4 pieces (6.3 M positions a side at most), whose cells the cache
/// mostly holds (asking ahead took `generate --pieces 4` 1.02× the time);
/// a five-piece table (over 100 M) asks ([`PREFETCH_AHEAD`]).
const READS_AS_THEY_COME_UP_TO: u64 = 1 << 24;

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

    /// Every value a position with `turn` to move holds (in any order,
    /// repeats allowed), where the table can list them without reading
    /// every position (a scan of the solver's codes); `None`: the writer
    /// reads every position. Listing a value no position holds is sound
    /// but costs the file bytes.
    fn distinct_values(&self, turn: Color) -> Option<Vec<Dtz>> {
        let _ = turn;
        None
    }

    /// Start loading what a read of the position at `index` reads, for a
    /// read soon after (a hint: doing nothing is always sound).
    fn prefetch(&self, turn: Color, index: u64) {
        let _ = (turn, index);
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
    /// move decides ([`SolvedValues::zeroing_decides`]); in DTZ, a run of
    /// them between two codes takes the smaller of the two
    /// ([`lower_gaps`]). A WDL that a capture reaches
    /// ([`SolvedValues::capture_reaches`]) takes the value before it if
    /// that is no higher, else its own. Positions before the first exact
    /// code take that code as the value before them (the stream's default
    /// where there is none).
    pub fn codes(&self, id: StreamId, start: u64, len: usize) -> Vec<u16> {
        let mut out = Vec::with_capacity(len);
        // What the positions before the first exact code want.
        let mut lead = Vec::new();
        let mut previous = None;
        let all = self.all_wanted(id, start, len);
        for &wanted in &all {
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
            out.extend(resolve(&lead, default_code(id.section)));
        }
        if id.section == Section::Dtz {
            lower_gaps(&all, &mut out);
        }
        out
    }

    /// What each of `len` positions of one stream from file index `start`
    /// may store, read from the table in the solver's order: an order
    /// that moves a low digit high would otherwise read values scattered
    /// across the whole table (KRBvKR written in `krBRK` spent half its
    /// time waiting on memory). A shuffle of digits reads the aligned
    /// blocks that cover the range, each in the solver's order (also what
    /// a table that reads faster in its own order needs,
    /// [`SolvedValues::reads_in_order`]); a reorder between frames (a
    /// leading piece) reads in the file's order, asking for each read
    /// early ([`InFileOrder::wanted_between_frames`]).
    fn all_wanted(&self, id: StreamId, start: u64, len: usize) -> Vec<Wanted> {
        let end = start + len as u64;
        if self.to_solver.is_identity() {
            return (start..end)
                .map(|index| self.wanted(id, index, index))
                .collect();
        }
        let mut wanted = vec![Wanted::Any; len];
        if self.to_solver.is_shuffle() || self.table.reads_in_order() {
            let bits = len.next_power_of_two().trailing_zeros();
            let block = 1u64 << bits;
            for base in (start / block * block..end).step_by(block as usize) {
                self.to_solver
                    .for_each_in_block(base, bits, |offset, solver| {
                        let index = base + offset as u64;
                        if (start..end).contains(&index) {
                            wanted[(index - start) as usize] = self.wanted(id, index, solver);
                        }
                    });
            }
            return wanted;
        }
        let ask_ahead = self.table.layout().size() > READS_AS_THEY_COME_UP_TO;
        self.wanted_between_frames(id, start, ask_ahead, wanted)
    }

    /// [`InFileOrder::all_wanted`] where the file's order leads by a piece,
    /// into `wanted` from file index `start`: the range's solver indices,
    /// mapped a run of 64 at a time ([`Reorder::for_each_in_range`]), read
    /// in the file's order: as they come, or (`ask_ahead`: a large table,
    /// [`READS_AS_THEY_COME_UP_TO`]) each asked for [`PREFETCH_AHEAD`]
    /// reads early.
    fn wanted_between_frames(
        &self,
        id: StreamId,
        start: u64,
        ask_ahead: bool,
        mut wanted: Vec<Wanted>,
    ) -> Vec<Wanted> {
        if !ask_ahead {
            self.to_solver
                .for_each_in_range(start, wanted.len(), |offset, index| {
                    wanted[offset] = self.wanted(id, start + offset as u64, index);
                });
            return wanted;
        }
        let mut solver = vec![0; wanted.len()];
        self.to_solver
            .for_each_in_range(start, wanted.len(), |offset, index| {
                solver[offset] = index;
            });
        for (offset, &index) in solver.iter().enumerate() {
            if let Some(&ahead) = solver.get(offset + PREFETCH_AHEAD) {
                self.table.prefetch(id.turn, ahead);
            }
            wanted[offset] = self.wanted(id, start + offset as u64, index);
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
    /// the way it is paired with ([`Estimate`]) from a fixed sample
    /// (the whole stream where it is no longer).
    fn estimated_bytes(&self, streams: &[(StreamId, Estimate)]) -> [f64; 4] {
        let n = self.layout.size();
        let bytes: Vec<f64> = streams
            .par_iter()
            .map(|&(id, how)| {
                let (starts, len) = how.windows(n);
                let sample: Vec<Vec<u16>> = starts
                    .iter()
                    .map(|&start| self.codes(id, start, len as usize))
                    .collect();
                let scale = (starts.len() as u64 * len) as f64 / n as f64;
                match how {
                    Estimate::Sample => estimate_bytes(sample, scale, id.section),
                    Estimate::Screening | Estimate::Ranking => ranking_bytes(sample, scale),
                }
            })
            .collect();
        let mut all = [f64::INFINITY; 4];
        for (&(id, _), bytes) in streams.iter().zip(bytes) {
            all[id.slot()] = bytes;
        }
        all
    }

    /// The grammar the writer encodes stream `id` in this order with
    /// ([`stream_grammar`]; `possible`: [`possible_codes`]).
    pub fn grammar(&self, id: StreamId, possible: impl FnOnce() -> Vec<u16>) -> Grammar {
        stream_grammar(
            self.layout.size(),
            &|start, len| self.codes(id, start, len),
            id.section,
            possible,
        )
    }

    /// The grammar of stream `id` in this order built from the whole
    /// stream, and about how many bytes the stream takes with it
    /// ([`whole_stream_grammar`]): for judging a small table's finalists.
    fn whole_grammar(&self, id: StreamId) -> (Grammar, f64) {
        whole_stream_grammar(
            self.layout.size(),
            &|start, len| self.codes(id, start, len),
            id.section,
        )
    }

    /// About how many bytes stream `id` takes in this order, written with
    /// `grammar` ([`held_out_bytes`] on `windows`): for ranking a large
    /// table's finalists.
    fn held_out_bytes(
        &self,
        id: StreamId,
        grammar: &Grammar,
        windows: HeldOutWindows,
    ) -> HeldOutBytes {
        held_out_bytes(self.layout.size(), grammar, windows, &|start, len| {
            self.codes(id, start, len)
        })
    }
}

/// Every code each stream of `table` may hold in any order of digits, by
/// [`StreamId::slot`], ascending: the WDL code of each value of a side, the
/// DTZ code of each decisive one, and each stream's default (a window of
/// positions that want no code exactly holds it: see
/// [`InFileOrder::codes`]). Found from the values the table lists
/// ([`SolvedValues::distinct_values`]: KRBvKR's took 0.8 s to read
/// position by position), else read in the solver's order, a side in one
/// pass.
fn possible_codes<T: SolvedValues + ?Sized>(table: &T) -> [Vec<u16>; 4] {
    let layout = table.layout();
    let n = layout.size();
    let rule = table.rule();
    let none = || [false; 2].map(|_| vec![false; usize::from(u16::MAX) + 1]);
    let mark = |seen: &mut [Vec<bool>; 2], dtz: Dtz| {
        seen[0][usize::from(wdl_code(Wdl::from_dtz(dtz, rule)))] = true;
        if dtz.0 != 0 {
            seen[1][usize::from(dtz_code(dtz, rule))] = true;
        }
    };
    let seen = |turn: Color| {
        let mut seen = match table.distinct_values(turn) {
            Some(values) => {
                let mut seen = none();
                values.into_iter().for_each(|dtz| mark(&mut seen, dtz));
                seen
            }
            None => (0..n.div_ceil(SEGMENT))
                .into_par_iter()
                .map(|i| {
                    let mut seen = none();
                    for index in i * SEGMENT..((i + 1) * SEGMENT).min(n) {
                        if !layout.names_placement(index) {
                            continue;
                        }
                        if let Some(dtz) = table.value(turn, index) {
                            mark(&mut seen, dtz);
                        }
                    }
                    seen
                })
                .reduce(none, |mut a, b| {
                    for (a, b) in a.iter_mut().zip(b) {
                        a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                    }
                    a
                }),
        };
        [Section::Wdl, Section::Dtz].map(|section| {
            let codes = &mut seen[usize::from(section == Section::Dtz)];
            codes[usize::from(default_code(section))] = true;
            (0..=u16::MAX)
                .filter(|&c| codes[usize::from(c)])
                .collect::<Vec<u16>>()
        })
    };
    let mut all: [Vec<u16>; 4] = Default::default();
    for turn in Color::ALL {
        for (section, codes) in [Section::Wdl, Section::Dtz].into_iter().zip(seen(turn)) {
            all[StreamId { section, turn }.slot()] = codes;
        }
    }
    all
}

/// The code a window of a stream holds if none of its positions wants one
/// exactly.
fn default_code(section: Section) -> u16 {
    match section {
        Section::Wdl => wdl_code(Wdl::Draw),
        _ => 1,
    }
}

/// How a stream's orders are first estimated ([`plan_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Estimate {
    /// [`estimate_bytes`] on [`WINDOWS`] evenly spread windows.
    Sample,
    /// [`ranking_bytes`] on [`RANKING_WINDOWS`] windows at fixed
    /// pseudo-random starts: a large pawnless table's WDL (and, searching
    /// thoroughly, a pawn table's), whose best orders [`Estimate::Sample`]
    /// misranks. Evenly spread windows fall in step
    /// with the digits (64 of them saw only positions of one kind in some
    /// of KRBvKR's orders, which then looked nearly free).
    Ranking,
    /// [`ranking_bytes`] on the first [`SCREENING_WINDOWS`] of the
    /// [`Estimate::Ranking`] windows' starts: which orders are ranked.
    Screening,
}

impl Estimate {
    /// The starts of the windows of a stream of `n` positions this
    /// estimate reads, and their length: the whole stream where it is no
    /// longer than they are.
    fn windows(self, n: u64) -> (Vec<u64>, u64) {
        let count = match self {
            Estimate::Sample => WINDOWS,
            Estimate::Ranking => RANKING_WINDOWS,
            Estimate::Screening => SCREENING_WINDOWS,
        };
        if n <= count * WINDOW {
            return (vec![0], n);
        }
        let starts = match self {
            Estimate::Sample => (0..count).map(|i| i * (n - WINDOW) / (count - 1)).collect(),
            Estimate::Ranking | Estimate::Screening => {
                let mut starts: Vec<u64> =
                    (0..count).map(|i| scatter(i) % (n - WINDOW + 1)).collect();
                starts.sort_unstable();
                starts
            }
        };
        (starts, WINDOW)
    }
}

/// What a position's stored code may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Give each run of "don't care" positions of a DTZ stream that lies
/// between two codes the smaller of them, where the one after is smaller
/// (`codes` gave it the one before). Short distances are the common ones,
/// so their runs grow: 2.3 % fewer bytes over the 3-4 set than the value
/// before alone (see BENCHMARKS.md).
fn lower_gaps(wanted: &[Wanted], codes: &mut [u16]) {
    let mut at = 0;
    while at < wanted.len() {
        if !matches!(wanted[at], Wanted::Any) {
            at += 1;
            continue;
        }
        let end = wanted[at..]
            .iter()
            .position(|w| !matches!(w, Wanted::Any))
            .map_or(wanted.len(), |len| at + len);
        if at > 0 && end < wanted.len() && codes[end] < codes[at - 1] {
            let after = codes[end];
            codes[at..end].fill(after);
        }
        at = end;
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

/// The first `best` of `ranked` (orders, best first), then the first
/// `pairs` of the rest whose kings are a pair (`kings_pair`).
fn best_and_pairs(
    ranked: &[usize],
    best: usize,
    pairs: usize,
    kings_pair: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut chosen: Vec<usize> = ranked.iter().copied().take(best).collect();
    let paired: Vec<usize> = ranked
        .iter()
        .copied()
        .filter(|&i| kings_pair(i) && !chosen.contains(&i))
        .take(pairs)
        .collect();
    chosen.extend(paired);
    chosen
}

/// The finalists of a large pawnless table's stream that are judged held
/// out, of `ranked` (the orders, smallest first estimate first; those
/// `estimated`): the best [`LARGE_FINALISTS`] and [`LARGE_PAIR_FINALISTS`]
/// ([`best_and_pairs`]) and, of a DTZ stream, every order whose kings
/// lead as a pair ([`kings_lead`]): those a default build judges, so that
/// searching thoroughly judges at least what it does.
fn held_out_finalists(
    orders: &[Vec<u8>],
    ranked: &[usize],
    section: Section,
    estimated: impl Fn(usize) -> bool,
) -> Vec<usize> {
    let mut chosen = best_and_pairs(ranked, LARGE_FINALISTS, LARGE_PAIR_FINALISTS, |i| {
        kings_pair(&orders[i])
    });
    if section == Section::Dtz {
        for i in kings_lead(orders, ranked, estimated) {
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
    }
    chosen
}

/// Those of `ranked` (indices into `orders`) that are `estimated` and
/// whose kings lead the index as a pair, in their order.
fn kings_lead(
    orders: &[Vec<u8>],
    ranked: &[usize],
    estimated: impl Fn(usize) -> bool,
) -> Vec<usize> {
    ranked
        .iter()
        .copied()
        .filter(|&i| kings_first(&orders[i]) && estimated(i))
        .collect()
}

/// Whether `order` puts the kings at the top of the index as a pair
/// (White's king, then Black's).
fn kings_first(order: &[u8]) -> bool {
    order.starts_with(&[0, 1])
}

/// Whether `order` keeps the kings next to each other as a pair (White's
/// king, then Black's), not led by a piece turned into the triangle.
fn kings_pair(order: &[u8]) -> bool {
    order[0] & LEAD_FLAG == 0 && order.windows(2).any(|w| w == [0, 1])
}

/// How `table` is written: each stream in the order, of those
/// [`Layout::orders`] lists, that gives it the fewest estimated bytes,
/// keeping the DTZ of the side whose best stream is estimated smaller
/// (White on a tie). Every order is estimated on a small sample of each
/// stream; each stream's finalists are then judged by the grammar built
/// from the whole stream in a table the small one ranks well
/// ([`InFileOrder::whole_grammar`]), else by
/// [`InFileOrder::held_out_bytes`]. The estimate decides the side so that
/// the other side's DTZ stream is never encoded. A table of symmetric
/// material keeps White to move only, WDL and DTZ (readers mirror Black to
/// move: [`crate::index::Layout::mirrored_index`]).
pub(super) fn plan_file<T: SolvedValues + ?Sized>(
    table: &T,
    search: OrderSearch,
) -> FilePlan<'_, T> {
    let material = table.layout().material();
    if search == OrderSearch::Recorded
        && table.rule() == Rule::Fifty
        && let Some(recorded) = recorded_orders(material)
    {
        return recorded_plan(table, recorded);
    }
    let orders = Layout::orders(material);
    let in_order = |i: usize| {
        let layout = Layout::with_order(material, &orders[i]).expect("an order it lists");
        InFileOrder::new(table, layout)
    };
    // A table of symmetric material keeps White to move only (Black to
    // move is read on the mirrored board).
    let symmetric = material.is_symmetric();
    let streams: Vec<StreamId> = StreamId::ALL
        .into_iter()
        .filter(|id| !symmetric || id.turn == Color::White)
        .collect();
    let size = table.layout().size();
    let large = size > SAMPLE_RANKS_UP_TO;
    let pawnless = !material.has_pawns();
    let thorough = search == OrderSearch::Thorough;
    let held_out = large && pawnless && thorough;
    let held_out_windows = if thorough {
        HeldOutWindows::EvenAndScattered
    } else {
        HeldOutWindows::Even
    };
    let pair_at = |i: usize| kings_pair(&orders[i]);
    // A large pawnless table's WDL is ranked over every order by the
    // ranking estimate, and its finalists are judged held out: KRBvKR's
    // file took 26 % fewer bytes (in Syzygy's orders), KRNvKR's 24 %. Its
    // DTZ, which neither estimate ranked well (KRRvKR's rankings put
    // orders whose DTZ took 9 % more bytes first), is estimated on the
    // first sample in orders whose kings are a pair, to choose the side
    // whose DTZ is kept (that sample misranks orders led by one king:
    // KRBvKR's chose `krRBK`, whose file took 9 % more bytes than format
    // 9's pair order); the kept side's orders are then judged held out.
    // Searching thoroughly, a pawn table's WDL is ranked and judged too.
    let ranked_wide = |id: StreamId| large && (pawnless || thorough) && id.section == Section::Wdl;
    let judged_held_out = |id: StreamId| held_out || ranked_wide(id);
    let candidate =
        |i: usize, id: StreamId| !large || !pawnless || judged_held_out(id) || pair_at(i);
    let mut first: Vec<[f64; 4]> = (0..orders.len())
        .into_par_iter()
        .map(|i| {
            let layout = Layout::with_order(material, &orders[i]).expect("an order it lists");
            let estimated: Vec<(StreamId, Estimate)> = streams
                .iter()
                .filter(|&&id| candidate(i, id) && layout.identical_span() <= MAX_CHUNK_POSITIONS)
                .map(|&id| {
                    let how = if ranked_wide(id) {
                        Estimate::Screening
                    } else {
                        Estimate::Sample
                    };
                    (id, how)
                })
                .collect();
            in_order(i).estimated_bytes(&estimated)
        })
        .collect();
    // Each stream's orders, smallest first estimate first (the first
    // listed on a tie).
    let ranked = |first: &[[f64; 4]], id: StreamId| {
        let mut ranked: Vec<usize> = (0..orders.len()).collect();
        let e = |i: usize| first[i][id.slot()];
        ranked.sort_by(|&a, &b| e(a).total_cmp(&e(b)).then(a.cmp(&b)));
        ranked
    };
    // A large pawnless table's best screened WDL orders ranked on all the
    // ranking windows; the rest drop out.
    let screened_best: Vec<(usize, StreamId)> = streams
        .iter()
        .filter(|&&id| ranked_wide(id))
        .flat_map(|&id| {
            let best = best_and_pairs(&ranked(&first, id), SCREENED, SCREENED_PAIRS, pair_at);
            let screened = &first;
            best.into_iter()
                .filter(move |&i| screened[i][id.slot()].is_finite())
                .map(move |i| (i, id))
        })
        .collect();
    let rescored: Vec<f64> = screened_best
        .par_iter()
        .map(|&(i, id)| in_order(i).estimated_bytes(&[(id, Estimate::Ranking)])[id.slot()])
        .collect();
    for &id in streams.iter().filter(|&&id| ranked_wide(id)) {
        first.iter_mut().for_each(|e| e[id.slot()] = f64::INFINITY);
    }
    for (&(i, id), bytes) in screened_best.iter().zip(rescored) {
        first[i][id.slot()] = bytes;
    }
    // A large pawnless table's DTZ side is the one whose first estimate
    // is smaller (White on a tie), and that side's orders whose kings lead
    // as a pair are all judged held out: the first estimates cannot rank
    // DTZ orders (KRRvKR's chose `KkRRr`, whose DTZ took 6.6 % more bytes
    // than in `KkrRR`). KRRvKR's file takes 6.0 % fewer bytes, KRBvKR's
    // 2.3 %, KRNvKR's 0.35 % more (its sparse Black DTZ misjudged), for
    // up to 1.11 times the build time (KQRvKR's six orders); judged on a
    // quarter of the sample and windows, KRNvKR's took 2.4 % more (see
    // BENCHMARKS.md).
    let totals =
        |id: StreamId| -> Vec<f64> { (0..orders.len()).map(|i| first[i][id.slot()]).collect() };
    let first_choice = |id: StreamId| best_order(&orders, &totals(id));
    // A large table with pawns keeps the DTZ side the same way, from its
    // first estimates, before any of its orders is judged.
    let dtz_side_first = (large && !held_out).then(|| {
        let estimate = |turn| {
            let id = StreamId {
                section: Section::Dtz,
                turn,
            };
            first[first_choice(id)][id.slot()]
        };
        if symmetric || estimate(Color::White) <= estimate(Color::Black) {
            Color::White
        } else {
            Color::Black
        }
    });
    let kept_dtz = |id: StreamId| id.section == Section::Dtz && Some(id.turn) == dtz_side_first;
    let judged_dtz = |id: StreamId| pawnless && kept_dtz(id);
    // A large pawn table's WDL streams and kept DTZ stream have two
    // candidates where the first estimates' choice keeps the kings at the
    // top and their smallest does not: the first estimates misjudge by how
    // much moving the kings gains (KBPvKP's WDL with Black to move took
    // 44 % fewer bytes in `BkK`, estimated 0.63 of `KkB`; KQBvKP's DTZ 44 %
    // fewer in `QkBK`, estimated 0.76 of `KkBQ`; KRPvKR's WDL with White to
    // move more in `kKrR`, estimated 0.94 of `KkrR`), so both are
    // judged held out (see BENCHMARKS.md).
    let paired = |id: StreamId| {
        large && !pawnless && !ranked_wide(id) && (id.section == Section::Wdl || kept_dtz(id))
    };
    // Each stream's closest candidates, judged again; the others drop
    // out of that stream's choice. A large table's one finalist, unless
    // judged held out, is the first estimates' choice.
    let finalists: Vec<(usize, StreamId)> = streams
        .iter()
        .flat_map(|&id| {
            let ranked = ranked(&first, id);
            let estimated = |i: usize| first[i][id.slot()].is_finite();
            let chosen: Vec<usize> = if judged_dtz(id) {
                kings_lead(&orders, &ranked, estimated)
            } else if judged_held_out(id) {
                held_out_finalists(&orders, &ranked, id.section, estimated)
            } else if paired(id) {
                pawn_candidates(&orders, &totals(id))
            } else if large {
                vec![first_choice(id)]
            } else {
                ranked.into_iter().take(FINALISTS).collect()
            };
            chosen.into_iter().map(move |i| (i, id))
        })
        .collect();
    let contested = |id: StreamId| finalists.iter().filter(|f| f.1 == id).count() > 1;
    let judged =
        |id: StreamId| judged_held_out(id) || judged_dtz(id) || (paired(id) && contested(id));
    // Finalists judged held out or whole, with the grammars they would be
    // written with, which the writer then reuses. A large table's one at a
    // time: each reads about 20 million positions and builds a grammar,
    // and two at once took KRBvKR's build 5 % less time and 8 MiB more at
    // its peak.
    let mut grammars: Vec<Option<Grammar>> = Vec::new();
    let possible = OnceLock::new();
    // With each, a default build's estimate where it was judged held out
    // (a thorough search's on the even windows alone).
    let (mut finals, even): (Vec<f64>, Vec<f64>) = if large {
        finalists
            .iter()
            .map(|&(i, id)| {
                if !judged(id) {
                    grammars.push(None);
                    return (first[i][id.slot()], f64::INFINITY);
                }
                let possible = possible.get_or_init(|| possible_codes(table));
                let stream = in_order(i);
                let grammar = stream.grammar(id, || possible[id.slot()].clone());
                let bytes = stream.held_out_bytes(id, &grammar, held_out_windows);
                grammars.push(Some(grammar));
                (bytes.all, bytes.even)
            })
            .unzip()
    } else {
        let (judged, bytes): (Vec<Grammar>, Vec<f64>) = finalists
            .par_iter()
            .map(|&(i, id)| in_order(i).whole_grammar(id))
            .unzip();
        grammars = judged.into_iter().map(Some).collect();
        let even = vec![f64::INFINITY; bytes.len()];
        (bytes, even)
    };
    // Which of two finalists comes first: the smaller final estimate, the
    // first listed order on a tie (the solver's own order first).
    let before = |finals: &[f64], a: usize, b: usize| {
        finals[a]
            .total_cmp(&finals[b])
            .then(finalists[a].0.cmp(&finalists[b].0))
    };
    // Searching thoroughly, a large table's closest judged finalists are
    // encoded whole, and so is the DTZ a default build would choose (of
    // the orders whose kings lead, on the even windows), so that the file
    // takes no more bytes than a default build's; the stream's other
    // finalists drop out. The smallest encoding so far is kept, the
    // others dropped at once.
    let mut encoded: Vec<Option<EncodedStream>> = finalists.iter().map(|_| None).collect();
    if large && thorough {
        for &id in streams.iter().filter(|&&id| judged(id) && contested(id)) {
            let mut closest: Vec<usize> = (0..finalists.len())
                .filter(|&f| finalists[f].1 == id)
                .collect();
            closest.sort_by(|&a, &b| before(&finals, a, b));
            let exact = match id.section {
                Section::Dtz => EXACT_DTZ_FINALISTS,
                _ => closest.len(),
            };
            let default_choice = closest
                .iter()
                .copied()
                .filter(|&f| kings_first(&orders[finalists[f].0]))
                .min_by(|&a, &b| before(&even, a, b));
            let mut smallest: Option<usize> = None;
            for (rank, &f) in closest.iter().enumerate() {
                if rank >= exact && Some(f) != default_choice {
                    finals[f] = f64::INFINITY;
                    continue;
                }
                let stream = in_order(finalists[f].0);
                let grammar = grammars[f].as_ref().expect("a judged finalist's grammar");
                let whole = encode_stream(
                    stream.layout().size(),
                    id.max_block_len(),
                    grammar,
                    &|start, len| stream.codes(id, start, len),
                );
                finals[f] = whole.bytes() as f64;
                match smallest {
                    Some(s) if before(&finals, s, f).is_lt() => {}
                    _ => {
                        if let Some(s) = smallest.replace(f) {
                            encoded[s] = None;
                        }
                        encoded[f] = Some(whole);
                    }
                }
            }
        }
    }
    // A stream's finalist that comes first, and its final estimate.
    let best = |id: StreamId| {
        (0..finalists.len())
            .filter(|&f| finalists[f].1 == id)
            .min_by(|&a, &b| before(&finals, a, b))
            .map(|f| (f, finals[f]))
            .expect("each stream has finalists")
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
    let white = dtz_of(Color::White);
    let (dtz_side, dtz) = match (dtz_side_first, (!symmetric).then(|| dtz_of(Color::Black))) {
        (Some(side), _) => (side, dtz_of(side).0),
        (None, Some(black)) if black.1 < white.1 => (Color::Black, black.0),
        _ => (Color::White, white.0),
    };
    // A mirrored file's Black WDL is White's finalist, whose grammar
    // White's stream takes first (the file writes White's only).
    let mut planned = |f: usize| PlannedStream {
        file: in_order(finalists[f].0),
        grammar: grammars.get_mut(f).and_then(Option::take),
        encoded: encoded[f].take(),
    };
    FilePlan {
        wdl: ByColor {
            white: planned(wdl.white),
            black: planned(wdl.black),
        },
        dtz: planned(dtz),
        dtz_side,
        possible,
    }
}

/// The plan of a file in `recorded` orders. A large table's grammars are
/// built as the writer builds them; a small table's are built from the
/// whole stream, as its judged finalists' are, so that the file is the
/// one a search that chose these orders writes (a mirrored file's Black
/// WDL, which it does not write, gets none).
pub(super) fn recorded_plan<'a, T: SolvedValues + ?Sized>(
    table: &'a T,
    recorded: &RecordedOrders,
) -> FilePlan<'a, T> {
    let material = table.layout().material();
    let small = table.layout().size() <= SAMPLE_RANKS_UP_TO;
    let written = |id: StreamId| !material.is_symmetric() || id.turn == Color::White;
    let planned = |order: &[u8], id: StreamId| {
        let layout = Layout::with_order(material, order).expect("a recorded order is checked");
        let file = InFileOrder::new(table, layout);
        let grammar = (small && written(id)).then(|| file.whole_grammar(id).0);
        PlannedStream {
            file,
            grammar,
            encoded: None,
        }
    };
    let dtz_id = StreamId {
        section: Section::Dtz,
        turn: recorded.dtz_side,
    };
    let wdl_id = |turn| StreamId {
        section: Section::Wdl,
        turn,
    };
    let (white, (black, dtz)) = rayon::join(
        || planned(&recorded.wdl.white, wdl_id(Color::White)),
        || {
            rayon::join(
                || planned(&recorded.wdl.black, wdl_id(Color::Black)),
                || planned(&recorded.dtz, dtz_id),
            )
        },
    );
    FilePlan {
        wdl: ByColor { white, black },
        dtz,
        dtz_side: recorded.dtz_side,
        possible: OnceLock::new(),
    }
}

/// One stream as the writer writes it.
pub(super) struct PlannedStream<'a, T: ?Sized> {
    /// The table in the stream's order.
    pub file: InFileOrder<'a, T>,
    /// The grammar it is encoded with, where choosing its order built it
    /// (a large table).
    grammar: Option<Grammar>,
    /// The stream encoded, where choosing its order encoded it (a large
    /// table's closest finalists, searching thoroughly).
    encoded: Option<EncodedStream>,
}

/// How a table is written: each stream's order of digits (and grammar,
/// where choosing the order built it), and the side whose DTZ is kept.
pub(super) struct FilePlan<'a, T: ?Sized> {
    /// Each side's WDL stream (a mirrored file writes White's only, and
    /// numbers Black's positions as White's).
    pub wdl: ByColor<PlannedStream<'a, T>>,
    /// The kept DTZ stream.
    pub dtz: PlannedStream<'a, T>,
    /// The side to move whose DTZ is kept.
    pub dtz_side: Color,
    /// [`possible_codes`], once asked for.
    possible: OnceLock<[Vec<u16>; 4]>,
}

impl<'a, T: SolvedValues + ?Sized> FilePlan<'a, T> {
    /// The table as one stream numbers it.
    pub fn stream(&self, id: StreamId) -> &InFileOrder<'a, T> {
        &self.planned(id).file
    }

    /// The grammar stream `id` is encoded with.
    pub fn grammar(&self, id: StreamId) -> Grammar {
        let planned = self.planned(id);
        match &planned.grammar {
            Some(grammar) => grammar.clone(),
            None => planned.file.grammar(id, || {
                self.possible
                    .get_or_init(|| possible_codes(planned.file.table))[id.slot()]
                .clone()
            }),
        }
    }

    /// Stream `id` as encoded while choosing its order, if it was; taken,
    /// so asked for once.
    pub fn take_encoded(&mut self, id: StreamId) -> Option<EncodedStream> {
        match id.section {
            Section::Dtz => &mut self.dtz,
            _ => self.wdl.get_mut(id.turn),
        }
        .encoded
        .take()
    }

    fn planned(&self, id: StreamId) -> &PlannedStream<'a, T> {
        match id.section {
            Section::Dtz => &self.dtz,
            _ => self.wdl.get(id.turn),
        }
    }
}

/// The candidates among `orders`, estimated at `totals` bytes on the
/// first sample, for a large pawn table's WDL stream or kept DTZ stream:
/// [`best_order`]'s choice and, where that is not the smallest estimate
/// (the first listed on a tie), the smallest too; two are then judged
/// held out.
fn pawn_candidates(orders: &[Vec<u8>], totals: &[f64]) -> Vec<usize> {
    let choice = best_order(orders, totals);
    let smallest = smallest_estimate(orders, totals, |_| true).expect("at least one order");
    if choice == smallest {
        vec![choice]
    } else {
        vec![choice, smallest]
    }
}

/// Which of `orders`, estimated at `totals` bytes on the first sample, a
/// large table with pawns is written in (for its WDL and kept DTZ: which
/// is judged against the smallest, [`pawn_candidates`]): the smallest
/// estimate (the first listed on a tie, the solver's own order first),
/// unless it moves the kings from the top and is not at most
/// [`KINGS_MOVE_GAIN`] of the best kings-first order's.
fn best_order(orders: &[Vec<u8>], totals: &[f64]) -> usize {
    let best = smallest_estimate(orders, totals, |_| true).expect("at least one order");
    let kings_at_top = smallest_estimate(orders, totals, kings_first).expect("the solver's order");
    if totals[best] > KINGS_MOVE_GAIN * totals[kings_at_top] {
        kings_at_top
    } else {
        best
    }
}

/// The one of `orders` that `keep` keeps with the smallest of `totals`
/// (the first listed on a tie), if it keeps any.
fn smallest_estimate(
    orders: &[Vec<u8>],
    totals: &[f64],
    keep: impl Fn(&[u8]) -> bool,
) -> Option<usize> {
    (0..orders.len())
        .filter(|&i| keep(&orders[i]))
        .min_by(|&a, &b| totals[a].total_cmp(&totals[b]).then(a.cmp(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writer's sample estimates (bytes) of some of KRPvKR's and
    /// KBBvKP's orders (402,653,184 positions per side each).
    #[test]
    fn a_large_pawn_table_trusts_a_large_estimated_gain_and_judges_a_smaller_one() {
        let krpvkr: Vec<Vec<u8>> = vec![
            vec![0, 1, 2, 3],
            vec![0, 1, 3, 2],
            vec![1, 0, 3, 2],
            vec![3, 0, 1, 2],
        ];
        let krpvkr_bytes = [19_392_727.0, 19_374_758.0, 18_045_214.0, 18_615_628.0];
        assert_eq!(best_order(&krpvkr, &krpvkr_bytes), 1, "kings first");
        let kbbvkp: Vec<Vec<u8>> = vec![
            vec![0, 1, 2, 3],
            vec![1, 0, 2, 3],
            vec![2, 3, 0, 1],
            vec![2, 3, 1, 0],
        ];
        let kbbvkp_bytes = [22_476_624.0, 21_224_014.0, 6_486_384.0, 4_562_609.0];
        assert_eq!(best_order(&kbbvkp, &kbbvkp_bytes), 3, "BBkK");
        // A tie goes to the order listed first.
        assert_eq!(best_order(&kbbvkp, &[5.0, 5.0, 5.0, 5.0]), 0);
        // KRPvKR's kings-first choice is judged against its smallest,
        // KBBvKP's gain is trusted.
        assert_eq!(pawn_candidates(&krpvkr, &krpvkr_bytes), vec![1, 2]);
        assert_eq!(pawn_candidates(&kbbvkp, &kbbvkp_bytes), vec![3]);
        assert_eq!(pawn_candidates(&kbbvkp, &[5.0, 5.0, 5.0, 5.0]), vec![0]);
    }

    /// A thorough search judges a large pawnless table's DTZ in the best
    /// first estimates' orders and in every order whose kings lead as a
    /// pair (those a default build judges); its WDL in the best only.
    #[test]
    fn thorough_dtz_finalists_hold_every_kings_first_order() {
        let orders = Layout::orders("KQRBvK".parse().expect("material"));
        // Ranked in reverse of their listing, the last one not estimated.
        let ranked: Vec<usize> = (0..orders.len()).rev().collect();
        let estimated = |i: usize| i + 1 < orders.len();
        let leading: Vec<usize> = ranked
            .iter()
            .copied()
            .filter(|&i| kings_first(&orders[i]) && estimated(i))
            .collect();
        assert_eq!(leading.len(), 6, "Q, R and B in any order after the kings");
        assert_eq!(kings_lead(&orders, &ranked, estimated), leading);
        let wdl = held_out_finalists(&orders, &ranked, Section::Wdl, estimated);
        let best = best_and_pairs(&ranked, LARGE_FINALISTS, LARGE_PAIR_FINALISTS, |i| {
            kings_pair(&orders[i])
        });
        assert_eq!(wdl, best);
        assert_eq!(wdl.len(), LARGE_FINALISTS + LARGE_PAIR_FINALISTS);
        let dtz = held_out_finalists(&orders, &ranked, Section::Dtz, estimated);
        assert_eq!(dtz[..best.len()], best[..], "the best first");
        assert!(leading.iter().all(|i| dtz.contains(i)));
        let mut unique = dtz.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), dtz.len(), "each order once");
        assert_eq!(
            dtz.len(),
            best.len() + leading.iter().filter(|i| !best.contains(i)).count()
        );
    }

    /// The ranking sample's windows are fixed, in the stream, sorted and
    /// spread over it; a stream no longer than they are is read whole.
    #[test]
    fn ranking_windows_are_fixed_and_spread() {
        let n = 121_000_000;
        let (starts, len) = Estimate::Ranking.windows(n);
        assert_eq!(len, WINDOW);
        assert_eq!(starts.len(), 64);
        assert_eq!((starts.clone(), len), Estimate::Ranking.windows(n));
        assert!(starts.windows(2).all(|w| w[0] <= w[1]));
        assert!(starts.iter().all(|&s| s + WINDOW <= n));
        // Some window in each eighth of the stream.
        for eighth in 0..8 {
            let range = eighth * n / 8..(eighth + 1) * n / 8;
            assert!(starts.iter().any(|s| range.contains(s)), "{eighth}");
        }
        assert_eq!(
            Estimate::Ranking.windows(64 * WINDOW),
            (vec![0], 64 * WINDOW)
        );
        assert_eq!(Estimate::Sample.windows(1000), (vec![0], 1000));
    }

    /// A stream led by a piece reads in bulk, as the indices come (as a
    /// small table does) and asking ahead (as a large one does), what it
    /// reads one index at a time through [`Reorder::apply`]: KQvKR led by
    /// the rook, both sides, both sections, over ranges that start and end
    /// anywhere.
    #[test]
    fn reads_between_frames_want_what_each_index_wants() {
        use crate::generate::{SolveOptions, TableSet, solve};
        let material: crate::material::Material = "KQvKR".parse().expect("material");
        let mut set = TableSet::new();
        for sub in crate::material::Material::with_dependencies(&[material]) {
            set.insert(solve(sub, &SolveOptions::default(), &set, &|_| {}).expect("solves"));
        }
        let table = set.get(&material).expect("solved");
        let layout = Layout::with_order(material, &[LEAD_FLAG | 3, 1, 0, 2]).expect("order");
        let file = InFileOrder::new(table, layout);
        assert!(
            !file.to_solver.is_shuffle(),
            "the rook's lead turns the board"
        );
        let n = file.layout.size();
        for id in StreamId::ALL {
            let mut exact = 0;
            for (start, len) in [(0, 4096), (n / 3 + 17, 100_003), (n - 777, 777)] {
                let read = |ask_ahead| {
                    file.wanted_between_frames(id, start, ask_ahead, vec![Wanted::Any; len])
                };
                let one_by_one: Vec<Wanted> = (start..start + len as u64)
                    .map(|index| file.wanted(id, index, file.to_solver.apply(index)))
                    .collect();
                assert_eq!(read(false), one_by_one, "{id:?} {start}");
                assert_eq!(read(true), one_by_one, "{id:?} {start}, asking ahead");
                exact += one_by_one
                    .iter()
                    .filter(|w| matches!(w, Wanted::Exactly(_)))
                    .count();
            }
            assert!(exact > 1000, "{id:?}: {exact} exact codes");
        }
    }

    /// The codes a table lists from its solver's codes
    /// ([`SolvedValues::distinct_values`]) are those a read of every
    /// position finds: KQvKR, every stream.
    #[test]
    fn listed_values_give_the_codes_every_position_gives() {
        use crate::generate::{SolveOptions, TableSet, solve};
        /// The table read position by position.
        struct EveryPosition<'a, T>(&'a T);
        impl<T: SolvedValues> SolvedValues for EveryPosition<'_, T> {
            fn layout(&self) -> &Layout {
                self.0.layout()
            }
            fn rule(&self) -> Rule {
                self.0.rule()
            }
            fn value(&self, turn: Color, index: u64) -> Option<Dtz> {
                self.0.value(turn, index)
            }
        }
        let material: crate::material::Material = "KQvKR".parse().expect("material");
        let mut set = TableSet::new();
        for sub in crate::material::Material::with_dependencies(&[material]) {
            set.insert(solve(sub, &SolveOptions::default(), &set, &|_| {}).expect("solves"));
        }
        let table = set.get(&material).expect("solved");
        assert!(
            Color::ALL
                .iter()
                .all(|&turn| table.distinct_values(turn).is_some())
        );
        let listed = possible_codes(table);
        assert_eq!(listed, possible_codes(&EveryPosition(table)));
        // Losses, draws and wins; and 30-odd distances a side.
        assert!(
            listed[..2].iter().all(|codes| codes == &[0, 2, 4]),
            "{listed:?}"
        );
        assert!(
            listed[2..].iter().all(|codes| codes.len() > 30),
            "{listed:?}"
        );
    }

    #[test]
    fn a_gap_between_two_distances_takes_the_smaller() {
        use Wanted::{Any, Exactly};
        let wanted = [
            Any,
            Exactly(9),
            Any,
            Any,
            Exactly(3),
            Any,
            Exactly(7),
            Exactly(2),
            Any,
            Any,
        ];
        // As `codes` leaves them: each gap holds the value before it, and
        // the lead the first value.
        let mut codes = [9, 9, 9, 9, 3, 3, 7, 2, 2, 2];
        lower_gaps(&wanted, &mut codes);
        assert_eq!(codes, [9, 9, 3, 3, 3, 3, 7, 2, 2, 2]);
    }
}
