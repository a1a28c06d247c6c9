//! The index space: a bijection between placements and dense indices.
//!
//! A table's pieces are put into *slots*: White's king, Black's king, the
//! other pieces that are not pawns ("free" pieces, White's then Black's,
//! strongest first), then the pawns (White's then Black's). A [`Placement`]
//! gives a square per slot.
//!
//! ```text
//! index = slice · slice_size + kings · 64^f + Σ square(free_i) · 64^(f-1-i)
//! ```
//!
//! where `kings` is the king pair's number in a pawnless table and
//! `64 · wk + bk` in a pawn table, so that every piece but a pawnless
//! table's kings is a 6-bit *digit* of the index. That is the solver's
//! order. A table file may put the digits in another order, chosen per
//! table because the order decides how long the runs of equal values are
//! ([`Layout::with_order`]; the file's header records it): the free
//! pieces in any order that keeps identical pieces together, in a pawn
//! table the kings' digits anywhere among them, and in a pawnless table
//! the king pair anywhere among them as one 9-bit *field* (its numbers
//! 462..511 name no placement: [`Layout::names_placement`]; leading, it
//! needs no padding and the index is the solver's), or one king first and
//! the other last: the board is then turned to put the first king in the
//! triangle a1-d1-d4 (its number there, 0..10, leads the index) and the
//! other king is the lowest digit, so that neighbouring indices differ by
//! one king's square; or (format 13) any piece alone of its kind first,
//! flagged ([`LEAD_FLAG`]), in the triangle, and the others in any order
//! as digits (the one after it settles the diagonal; Syzygy's files lead
//! with whichever piece compresses best, and KRvKN's WDL led by the
//! knight takes 10 % fewer bytes than led by a king). Pieces keep their
//! slots' meaning otherwise (the free pieces' slots follow their digits'
//! order; a leading free piece takes the first free slot), and moving
//! between two orders is a shuffle of bit fields, or, between a layout led
//! by a piece and another, a decode and an encode
//! ([`Layout::reorder_to`]).
//!
//! * **Pawnless tables** use the 8-fold symmetry of the board: the white
//!   king is mapped into the triangle a1-d1-d4 and, when it stands on the
//!   a1-d4 diagonal, the black king onto or below that diagonal. The 462
//!   legal king pairs that remain are numbered densely (`kings`). There is a
//!   single slice.
//! * **Pawn tables** use the left-right mirror only. Each canonical
//!   arrangement of the pawns (same-colour pawns merged: their squares are
//!   kept sorted) is a *slice*; `kings` is `64 · wk + bk`. Quiet moves never
//!   change the slice, pawn moves always do, so slices are solved one pawn
//!   *level* at a time, most advanced first ([`Layout::slice_level`]).
//!
//! Free pieces are not merged: moving one changes the index by
//! `(to - from) · stride`, which keeps unmove generation to integer
//! arithmetic. Identical free pieces (two white rooks) therefore give a
//! position one index per order of their squares, all holding the same
//! value; [`Layout::sorted_identical`] names one of them. Indices whose placement overlaps, or puts the side not to
//! move in check, are valid indices of illegal positions; the solver marks
//! them. When the canonical frame is not unique (both kings on the
//! diagonal, or a mirror-symmetric pawn arrangement), both orientations are
//! stored; they always hold equal values.

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Piece, PositionError, Role, Setup,
    Square, attacks,
};

use thiserror::Error;

use crate::material::{MAX_PIECES, Material};

/// A position's number within one table (per side to move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableIndex(pub u64);

/// Squares of a table's pieces, one per slot (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Square (0 = a1 .. 63 = h8) of each slot; unused slots are 0.
    pub squares: [u8; MAX_PIECES],
}

/// Number of legal king pairs under the 8-fold symmetry.
pub const PAWNLESS_KING_PAIRS: usize = 462;

/// Set on an order's first entry: that piece leads a pawnless index from
/// the triangle a1-d1-d4.
pub const LEAD_FLAG: u8 = 8;

/// Bits of a pawnless table's king pair where it does not lead the index.
const PAIR_BITS: u32 = 9;

const NONE16: u16 = u16::MAX;
const NONE32: u32 = u32::MAX;

/// A pawn table's slice numbers by pawn key ([`Layout::pawn_key`]).
#[derive(Debug, Clone)]
enum SliceLookup {
    /// Entry by key, [`NONE32`] where no slice has it: 64^pawns entries, 1
    /// MiB for three pawns.
    Table(Vec<u32>),
    /// The slices' keys, sorted, with their slice numbers: for four pawns,
    /// whose table would take 64 MiB per layout.
    Sorted(Vec<(u32, u32)>),
}

impl SliceLookup {
    /// Most pawns looked up by [`SliceLookup::Table`].
    const MOST_TABLE_PAWNS: usize = 3;

    /// The lookup of `keys`, pairs of a pawn key and its slice, for
    /// `pawns` pawns.
    fn new(pawns: usize, mut keys: Vec<(u32, u32)>) -> SliceLookup {
        if pawns <= Self::MOST_TABLE_PAWNS {
            let mut table = vec![NONE32; 64usize.pow(pawns as u32)];
            for (key, slice) in keys {
                table[key as usize] = slice;
            }
            SliceLookup::Table(table)
        } else {
            keys.sort_unstable();
            SliceLookup::Sorted(keys)
        }
    }

    /// The slice of pawn key `key`, if a slice has it.
    #[inline]
    fn get(&self, key: usize) -> Option<u32> {
        match self {
            SliceLookup::Table(table) => table.get(key).copied().filter(|&s| s != NONE32),
            SliceLookup::Sorted(keys) => {
                let key = u32::try_from(key).ok()?;
                let at = keys.binary_search_by_key(&key, |&(k, _)| k).ok()?;
                Some(keys[at].1)
            }
        }
    }
}

/// Canonical king pairs of pawnless tables.
struct KingPairs {
    /// Pair number by `64 · wk + bk` (canonical squares), or `NONE16`.
    index: [u16; 64 * 64],
    /// Squares by pair number.
    squares: [(u8, u8); PAWNLESS_KING_PAIRS],
    /// By `(pair · 2 + king slot) · 64 + to`: the canonical pair after that
    /// king moves to `to`, and the symmetry (see [`Symmetry::id`]) that
    /// takes the other pieces there; `NONE16` if the kings would touch.
    steps: [(u16, u8); PAWNLESS_KING_PAIRS * 2 * 64],
    /// By pair number: both kings on the a1-h8 diagonal (two stored
    /// orientations).
    on_diagonal: [bool; PAWNLESS_KING_PAIRS],
    /// Square maps by symmetry id.
    maps: [[u8; 64]; 8],
}

/// The king pairs, computed when the crate is compiled: made at run time,
/// on a process's first pawnless probe, they took about 0.8 ms, a tenth
/// of an engine's first 1,000 probes over the 3-4 set (see BENCHMARKS.md).
static KING_PAIRS: KingPairs = KingPairs::new();

impl KingPairs {
    const fn new() -> KingPairs {
        let mut pairs = KingPairs {
            index: [NONE16; 64 * 64],
            squares: [(0, 0); PAWNLESS_KING_PAIRS],
            steps: [(NONE16, 0); PAWNLESS_KING_PAIRS * 2 * 64],
            on_diagonal: [false; PAWNLESS_KING_PAIRS],
            maps: [[0; 64]; 8],
        };
        let mut count = 0;
        let mut wk = 0u8;
        while wk < 64 {
            let mut bk = 0u8;
            while bk < 64 {
                let sym = symmetry_for_kings(wk, bk);
                if wk != bk && !kings_adjacent(wk, bk) && sym.xor == 0 && !sym.diagonal {
                    pairs.index[wk as usize * 64 + bk as usize] = count as u16;
                    pairs.squares[count] = (wk, bk);
                    pairs.on_diagonal[count] = wk >> 3 == wk & 7 && bk >> 3 == bk & 7;
                    count += 1;
                }
                bk += 1;
            }
            wk += 1;
        }
        assert!(count == PAWNLESS_KING_PAIRS, "462 king pairs");
        let mut id = 0;
        while id < 8 {
            let sym = Symmetry::from_id(id);
            let mut sq = 0u8;
            while sq < 64 {
                pairs.maps[id][sq as usize] = sym.apply(sq);
                sq += 1;
            }
            id += 1;
        }
        let mut pair = 0;
        while pair < PAWNLESS_KING_PAIRS {
            let (wk, bk) = pairs.squares[pair];
            let mut slot = 0;
            while slot < 2 {
                let mut to = 0u8;
                while to < 64 {
                    let (w, b) = if slot == 0 { (to, bk) } else { (wk, to) };
                    let sym = symmetry_for_kings(w, b);
                    let next = if w == b || kings_adjacent(w, b) {
                        NONE16
                    } else {
                        pairs.index[sym.apply(w) as usize * 64 + sym.apply(b) as usize]
                    };
                    pairs.steps[(pair * 2 + slot) * 64 + to as usize] = (next, sym.id());
                    to += 1;
                }
                slot += 1;
            }
            pair += 1;
        }
        pairs
    }
}

const fn kings_adjacent(a: u8, b: u8) -> bool {
    (a & 7).abs_diff(b & 7) <= 1 && (a >> 3).abs_diff(b >> 3) <= 1
}

/// One of the 8 symmetries of the board: an xor of the square (mirrors),
/// then optionally a flip in the a1-h8 diagonal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Symmetry {
    xor: u8,
    diagonal: bool,
}

impl Symmetry {
    const IDENTITY: Symmetry = Symmetry {
        xor: 0,
        diagonal: false,
    };

    /// A number 0..8 for tables: mirror xor (0, 7, 56, 63) · 2 + diagonal.
    const fn id(self) -> u8 {
        let mirror = match self.xor {
            0 => 0,
            7 => 1,
            56 => 2,
            _ => 3,
        };
        mirror * 2 + self.diagonal as u8
    }

    const fn from_id(id: usize) -> Symmetry {
        Symmetry {
            xor: [0, 7, 56, 63][id / 2],
            diagonal: id % 2 == 1,
        }
    }

    #[inline]
    const fn apply(self, sq: u8) -> u8 {
        let s = sq ^ self.xor;
        if self.diagonal {
            (s >> 3) | ((s & 7) << 3)
        } else {
            s
        }
    }
}

/// The flip in the a1-h8 diagonal alone.
const DIAGONAL_FLIP: Symmetry = Symmetry {
    xor: 0,
    diagonal: true,
};

/// The symmetry that takes the white king into a1-d1-d4 (and the black king
/// onto or below the diagonal when the white king is on it).
#[inline]
const fn symmetry_for_kings(wk: u8, bk: u8) -> Symmetry {
    let xor = (if wk & 7 > 3 { 7 } else { 0 }) | (if wk >> 3 > 3 { 56 } else { 0 });
    let (w, b) = (wk ^ xor, bk ^ xor);
    let (wf, wr, bf, br) = (w & 7, w >> 3, b & 7, b >> 3);
    Symmetry {
        xor,
        diagonal: wr > wf || (wr == wf && br > bf),
    }
}

/// The index scheme of one table.
#[derive(Debug, Clone)]
pub struct Layout {
    material: Material,
    pieces: Vec<Piece>,
    free: usize,
    white_pawns: usize,
    pawns: usize,
    slices: Vec<[u8; MAX_PIECES]>,
    slice_levels: Vec<u8>,
    slice_lookup: SliceLookup,
    slice_size: u64,
    /// Runs of identical free pieces (same colour and role, like the two
    /// rooks of KRRvKR), as bit shifts of their squares within an index,
    /// highest first; runs of one piece are left out.
    identical: Vec<Vec<u32>>,
    /// The index's order: by position from the most significant, the
    /// solver's slot of that piece (see [`Layout::with_order`]).
    order: Vec<u8>,
    /// The pieces that are 6-bit digits of an index, as (slot, bit shift
    /// of its square), most significant first.
    digits: Vec<(usize, u32)>,
    /// By slot: the index step of moving that piece one square, for
    /// digits (see [`Layout::stride`]).
    strides: [Option<u64>; MAX_PIECES],
    /// A pawnless table's king field: its bit shift (the top of the index
    /// when it leads; a leading king's triangle number always leads).
    /// Unused in pawn tables.
    king_shift: u32,
    /// A pawnless table whose index leads with one piece's triangle number
    /// (a king's, or a flagged piece's: see [`Layout::with_order`]); `None`
    /// where the king pair is one field, and in pawn tables.
    leader: Option<Lead>,
}

/// The piece that leads a pawnless layout's index, where one does (a king
/// with the other king last, or any piece alone of its kind whose order
/// entry carries [`LEAD_FLAG`]): it stands in the triangle a1-d1-d4
/// ([`TRIANGLE`]) and its number there is the top of the index; its
/// partner (the other king where a king leads, else the piece after it)
/// stands on or below the a1-h8 diagonal when the leader is on it; every
/// other piece is a 6-bit digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lead {
    /// The leading piece's slot (a free piece that leads takes slot 2).
    slot: usize,
    /// The slot of the piece that settles the diagonal when the leader
    /// stands on it.
    partner: usize,
    /// The bit shift of the partner's digit.
    partner_shift: u32,
    /// Where a free piece leads: the bit shifts of the kings' digits.
    kings: Option<(u32, u32)>,
}

/// The squares of the triangle a1-d1-d4 by number: where a pawnless
/// layout's leading piece stands (see [`Lead`]).
const TRIANGLE: [u8; 10] = [0, 1, 2, 3, 9, 10, 11, 18, 19, 27];

/// Each square's number in [`TRIANGLE`], `u8::MAX` off it.
const TRIANGLE_NUMBER: [u8; 64] = {
    let mut number = [u8::MAX; 64];
    let mut i = 0;
    while i < TRIANGLE.len() {
        number[TRIANGLE[i] as usize] = i as u8;
        i += 1;
    }
    number
};

/// The free pieces (neither kings nor pawns) of a material in the solver's
/// order: White's then Black's, strongest first.
pub(crate) fn free_pieces(material: Material) -> Vec<Piece> {
    material
        .pieces()
        .into_iter()
        .filter(|p| p.role != Role::King && p.role != Role::Pawn)
        .collect()
}

/// Why [`Layout::with_order`] refuses an order of the pieces.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OrderError {
    /// An order that dtz50 wrote files in, with wrong values, until
    /// 2026-11-29: a flagged piece followed by one of identical pieces
    /// (see [`Layout::orders`]). A file in it must be rebuilt.
    #[error(
        "piece order {order:?} puts one of identical pieces after a flagged piece, which dtz50 wrote with wrong values until 2026-11-29; `dtz50 generate` into its directory rebuilds it"
    )]
    Miswritten {
        /// The order, as a file's header keeps it.
        order: Vec<u8>,
    },
    /// Not an order of this material's pieces at all.
    #[error("{0}")]
    Invalid(String),
}

/// Whether `order` (slots into `pieces`, [`ordered_pieces`]) leads with a
/// flagged piece other than a king followed by one of identical pieces:
/// that piece settles the diagonal, which sorting identical pieces undoes
/// ([`Layout::orders`] lists no such order).
fn partner_has_twin(pieces: &[Piece], order: &[u8]) -> bool {
    // Slots past the pieces (a damaged header) are left to the caller.
    let twins = |slot: u8| {
        pieces
            .get(usize::from(slot))
            .map(|piece| pieces.iter().filter(|&p| p == piece).count())
    };
    let (Some(&lead), Some(&next)) = (order.first(), order.get(1)) else {
        return false;
    };
    lead & LEAD_FLAG != 0 && (lead & !LEAD_FLAG) >= 2 && twins(next).is_some_and(|n| n > 1)
}

/// The pieces an order lists, by the solver's slot: the kings, then the
/// free pieces.
fn ordered_pieces(material: Material) -> Vec<Piece> {
    let mut pieces = vec![Color::White.king(), Color::Black.king()];
    pieces.extend(free_pieces(material));
    pieces
}

/// The pieces of `material` that `order` (slots into [`ordered_pieces`],
/// a leader flagged) names, most significant first.
fn pieces_in_order(material: Material, order: &[u8]) -> Vec<Piece> {
    let pieces = ordered_pieces(material);
    order
        .iter()
        .map(|&slot| pieces[usize::from(slot & !LEAD_FLAG)])
        .collect()
}

impl Layout {
    /// The layout for a (normalised) material in the solver's order: the
    /// kings, then the free pieces, White's then Black's, strongest first.
    pub fn new(material: Material) -> Layout {
        let identity: Vec<u8> = (0..ordered_pieces(material).len() as u8).collect();
        Layout::build(material, &identity)
    }

    /// The layout for a (normalised) material whose index has, at position
    /// `j` from the most significant, the piece in the solver's slot
    /// `order[j]` (0 White's king, 1 Black's king, `2 + i` the solver's
    /// free piece `i`; pawns are not in it). Table files choose the order
    /// that compresses best. A pawnless table's kings either stand
    /// together, 0 then 1 (their pair is one 9-bit field, numbers 462..511
    /// naming no placement unless it leads), or one of them leads (its
    /// number in the triangle a1-d1-d4, 0..10, is the top of the index: the
    /// board is turned to put that king there) and the other is the lowest
    /// digit (the best orders of a study of 4-piece tables all put the
    /// kept side's king there, see BENCHMARKS.md), or any piece alone of
    /// its kind leads, its entry `| LEAD_FLAG` (`Lead`); a pawn
    /// table's kings may stand anywhere.
    /// Identical pieces must stay next to each other and in their own
    /// order, so that [`Layout::placement`] and
    /// [`Layout::sorted_identical`] mean the same in every order.
    ///
    /// # Errors
    /// [`OrderError::Miswritten`] for an order that dtz50 once wrote with
    /// wrong values, [`OrderError::Invalid`] for any other that is not
    /// such an order.
    pub fn with_order(material: Material, order: &[u8]) -> Result<Layout, OrderError> {
        if partner_has_twin(&ordered_pieces(material), order) {
            return Err(OrderError::Miswritten {
                order: order.to_vec(),
            });
        }
        if !Layout::orders(material).iter().any(|o| o == order) {
            return Err(OrderError::Invalid(format!(
                "piece order {order:?} is not an order of {material}'s kings and {} free pieces that {}keeps identical pieces together",
                free_pieces(material).len(),
                if material.has_pawns() {
                    ""
                } else {
                    "keeps the kings together, puts one first and the other last or puts a flagged piece alone of its kind first, and "
                }
            )));
        }
        Ok(Layout::build(material, order))
    }

    /// Every order [`Layout::with_order`] accepts for `material`, the
    /// solver's own first.
    pub fn orders(material: Material) -> Vec<Vec<u8>> {
        let pieces = ordered_pieces(material);
        let kind = |slot: &u8| pieces[usize::from(*slot)];
        let identity: Vec<u8> = (0..pieces.len() as u8).collect();
        // Each kind of piece in one run (as in the solver's order), and
        // each run ascending; a pawnless table's kings as one pair, or one
        // of them leading with the other last, or any piece alone of its
        // kind leading, flagged (a flagged king with the other king last
        // would repeat an unflagged order). A flagged piece other than a
        // king is followed by a piece alone of its kind too: that piece
        // settles the diagonal, and one of identical pieces cannot, since
        // sorting them would move it off the side it settled.
        let kinds = identity.chunk_by(|a, b| kind(a) == kind(b)).count();
        let kings_placed = |order: &[u8]| {
            material.has_pawns()
                || order.windows(2).any(|w| w == [0, 1])
                || (order[0] < 2 && order[order.len() - 1] == 1 - order[0])
        };
        let mut orders = Vec::new();
        permutations(&mut identity.clone(), 0, &mut orders);
        let all = orders.clone();
        let in_runs = |order: &Vec<u8>| {
            let runs: Vec<&[u8]> = order.chunk_by(|a, b| kind(a) == kind(b)).collect();
            runs.len() == kinds && runs.iter().all(|run| run.is_sorted())
        };
        orders.retain(|order| in_runs(order) && kings_placed(order));
        if !material.has_pawns() {
            for order in all.into_iter().filter(in_runs) {
                let lead = order[0];
                let alone = pieces.iter().filter(|&&p| p == kind(&lead)).count() == 1;
                let king_led = lead < 2 && order[order.len() - 1] == 1 - lead;
                let mut flagged = order;
                flagged[0] |= LEAD_FLAG;
                if alone && !king_led && !partner_has_twin(&pieces, &flagged) {
                    orders.push(flagged);
                }
            }
        }
        orders
    }

    /// The name of `order`, an order [`Layout::orders`] lists for
    /// `material`: its pieces' letters, most significant first, a flagged
    /// leader followed by `|` (`r|kBKR`), as `dtz50 info` prints it.
    pub fn order_name(material: Material, order: &[u8]) -> String {
        let mut name: String = pieces_in_order(material, order)
            .iter()
            .map(|p| p.char())
            .collect();
        if order.first().is_some_and(|&lead| lead & LEAD_FLAG != 0) {
            name.insert(1, '|');
        }
        name
    }

    /// The order of `material` that [`Layout::order_name`] names `name`.
    pub fn named_order(material: Material, name: &str) -> Option<Vec<u8>> {
        Layout::orders(material)
            .into_iter()
            .find(|order| Layout::order_name(material, order) == name)
    }

    /// This layout's order (see [`Layout::with_order`]).
    pub fn order(&self) -> &[u8] {
        &self.order
    }

    /// How many pieces are 6-bit digits of an index: all but the pawns and
    /// a pawnless table's kings (whose pair is a field of its own).
    pub fn digit_count(&self) -> usize {
        self.digits.len()
    }

    /// The pieces in this layout's order, most significant first (a
    /// pawnless table's two kings next to each other: their pair; or a
    /// leading king).
    pub fn order_pieces(&self) -> Vec<Piece> {
        pieces_in_order(self.material, &self.order)
    }

    /// The map from this layout's indices to those of `to`, a layout of the
    /// same material in another order: the same position's index (pawns
    /// and the slice are the same in every order). Indices that name no
    /// placement ([`Layout::names_placement`]) map to no index of `to`.
    ///
    /// # Panics
    /// If `to` is of another material.
    pub fn reorder_to(&self, to: &Layout) -> Reorder {
        assert_eq!(self.material, to.material, "one material");
        if self.leader.is_some() || to.leader.is_some() {
            // Each piece's slot in `to` (free pieces take slots in their
            // layout's order; identical ones in any order).
            let mut slots = [0; MAX_PIECES];
            let mut taken = [false; MAX_PIECES];
            for (from, piece) in self.pieces.iter().enumerate() {
                let slot = (0..to.pieces.len())
                    .find(|&t| !taken[t] && to.pieces[t] == *piece)
                    .expect("the same pieces");
                taken[slot] = true;
                slots[from] = slot;
            }
            // The piece of `self`'s last digit, where that is the lowest
            // 6 bits of an index (not a king pair): its slot in `to`, and
            // its stride there where it moves without turning either board
            // (no king, leader or partner in either layout).
            let last = self
                .digits
                .last()
                .filter(|&&(_, shift)| shift == 0)
                .map(|&(slot, _)| LastDigit {
                    slot: slots[slot],
                    stride: to.strides[slots[slot]].filter(|_| self.strides[slot] == Some(1)),
                });
            return Reorder {
                keep: 0,
                moves: Vec::new(),
                frames: Some(Box::new(Frames {
                    from: self.clone(),
                    to: to.clone(),
                    slots,
                    last,
                })),
            };
        }
        let to_fields = to.fields();
        let moves: Vec<Field> = self
            .fields()
            .into_iter()
            .map(|(key, from, width)| {
                let &(_, to, _) = to_fields
                    .iter()
                    .find(|&&(k, ..)| k == key)
                    .expect("the same pieces");
                Field { from, to, width }
            })
            .filter(|f| f.from != f.to)
            .collect();
        // The fields that move form a permutation of their places: clear
        // them all, then put each where it goes.
        let keep = moves
            .iter()
            .fold(u64::MAX, |keep, f| keep & !(f.mask() << f.from));
        Reorder {
            keep,
            moves,
            frames: None,
        }
    }

    /// [`Layout::reorder_to`] where `to` orders the digits otherwise;
    /// `None` where the orders are the same (every index is its own).
    pub fn reorder_if_other(&self, to: &Layout) -> Option<Reorder> {
        (self.order() != to.order()).then(|| self.reorder_to(to))
    }

    /// The index's bit fields that an order moves, as (the order's entry,
    /// bit shift, width): every digit (named by its piece's slot in the
    /// order), and a pawnless table's king pair (named by 0). Not for
    /// layouts that lead with a king.
    fn fields(&self) -> Vec<(u8, u32, u32)> {
        // A pawnless table's kings (0, 1) are the pair, not digits.
        let digit_entries = self.order.iter().filter(|&&e| self.pawns > 0 || e >= 2);
        let mut fields: Vec<(u8, u32, u32)> = digit_entries
            .zip(&self.digits)
            .map(|(&entry, &(_, shift))| (entry, shift, 6))
            .collect();
        if self.pawns == 0 {
            fields.push((0, self.king_shift, PAIR_BITS));
        }
        fields
    }

    /// Whether `index` (below [`Layout::size`]) names a placement: all do
    /// but, in a pawnless table, those whose king pair field (where the
    /// pair does not lead) holds a number above the last pair's, and, where
    /// a piece leads, those that turn further (the partner above the a1-h8
    /// diagonal while the leader stands on it) or whose kings share a
    /// square or touch (`Lead`). They are stored as "don't care" and
    /// never probed.
    #[inline]
    pub fn names_placement(&self, index: u64) -> bool {
        if self.pawns > 0 {
            return true;
        }
        match self.leader {
            None => {
                (index >> self.king_shift & ((1 << PAIR_BITS) - 1)) < PAWNLESS_KING_PAIRS as u64
            }
            Some(lead) => {
                let leader = TRIANGLE[(index >> self.king_shift) as usize];
                let partner = (index >> lead.partner_shift & 63) as u8;
                // Where a king leads, the two are the kings.
                let (wk, bk) = lead.kings.map_or((leader, partner), |(w, b)| {
                    ((index >> w & 63) as u8, (index >> b & 63) as u8)
                });
                symmetry_for_kings(leader, partner) == Symmetry::IDENTITY
                    && wk != bk
                    && !kings_adjacent(wk, bk)
            }
        }
    }

    /// The symmetry that turns a pawnless placement into this layout's
    /// frame: the leading king (White's where the pair is one field) into
    /// the triangle a1-d1-d4, and the other king onto or below the a1-h8
    /// diagonal when the first stands on it.
    #[inline]
    fn frame(&self, squares: &[u8; MAX_PIECES]) -> Symmetry {
        match self.leader {
            Some(Lead { slot, partner, .. }) => symmetry_for_kings(squares[slot], squares[partner]),
            _ => symmetry_for_kings(squares[0], squares[1]),
        }
    }

    /// The layout for `material` in `order` (checked by the callers).
    fn build(material: Material, flagged_order: &[u8]) -> Layout {
        let flagged = flagged_order.first().is_some_and(|&e| e & LEAD_FLAG != 0);
        let stripped: Vec<u8> = flagged_order.iter().map(|&e| e & !LEAD_FLAG).collect();
        let order = &stripped[..];
        let all = material.pieces();
        let kings = [Color::White.king(), Color::Black.king()];
        let solver_order = free_pieces(material);
        let free: Vec<Piece> = order
            .iter()
            .filter(|&&slot| slot >= 2)
            .map(|&slot| solver_order[usize::from(slot - 2)])
            .collect();
        let pawns: Vec<Piece> = all
            .iter()
            .copied()
            .filter(|p| p.role == Role::Pawn)
            .collect();
        let white_pawns = pawns.iter().filter(|p| p.color == Color::White).count();
        let mut pieces = kings.to_vec();
        pieces.extend(&free);
        pieces.extend(&pawns);

        // The digits: every piece in the order but a pawnless table's king
        // pair or leading king, each with its slot (kings keep theirs, free
        // pieces take theirs in the order's order) and its bit shift,
        // counted from the least significant; a pawnless table's king pair
        // takes 9 bits where it stands, or leads without padding, and a
        // leading king's triangle number leads.
        let pawnless = pawns.is_empty();
        let paired = pawnless && !flagged && order.windows(2).any(|w| w == [0, 1]);
        let mut shift = 0;
        let mut king_shift = 0;
        let mut digits: Vec<(usize, u32)> = Vec::with_capacity(order.len());
        for (at, &entry) in order.iter().enumerate().rev() {
            match entry {
                1 if paired => {}
                0 if paired => {
                    king_shift = shift;
                    shift += PAIR_BITS;
                }
                _ if pawnless && !paired && at == 0 => king_shift = shift,
                _ => {
                    digits.push((usize::from(entry), shift));
                    shift += 6;
                }
            }
        }
        digits.reverse();
        let free_leads = pawnless && !paired && order[0] >= 2;
        let mut next_free = if free_leads { 3 } else { 2 };
        for (slot, _) in &mut digits {
            if *slot >= 2 {
                *slot = next_free;
                next_free += 1;
            }
        }
        let leader = (pawnless && !paired).then(|| {
            let shift_of = |slot: usize| {
                digits
                    .iter()
                    .find(|&&(s, _)| s == slot)
                    .map(|&(_, shift)| shift)
                    .expect("a digit")
            };
            if free_leads {
                let partner = digits[0].0;
                Lead {
                    slot: 2,
                    partner,
                    partner_shift: shift_of(partner),
                    kings: Some((shift_of(0), shift_of(1))),
                }
            } else {
                let slot = usize::from(order[0]);
                Lead {
                    slot,
                    partner: 1 - slot,
                    partner_shift: shift_of(1 - slot),
                    kings: None,
                }
            }
        });
        let slice_size = if !pawnless {
            64 * 64 * 64u64.pow(free.len() as u32)
        } else if leader.is_some() {
            (TRIANGLE.len() as u64) << king_shift
        } else if order.starts_with(&[0, 1]) {
            (PAWNLESS_KING_PAIRS as u64) << king_shift
        } else {
            1 << shift
        };
        // A pawnless table's kings move through king_move: a move may turn
        // the board.
        let mut strides = [None; MAX_PIECES];
        for &(slot, shift) in &digits {
            if !pawnless || (slot >= 2 && leader.is_none_or(|l| l.partner != slot)) {
                strides[slot] = Some(1u64 << shift);
            }
        }
        let identical = digits
            .chunk_by(|a, b| pieces[a.0] == pieces[b.0])
            .filter(|run| run.len() > 1)
            .map(|run| run.iter().map(|&(_, shift)| shift).collect())
            .collect();
        let mut layout = Layout {
            material,
            pieces,
            free: free.len(),
            white_pawns,
            pawns: pawns.len(),
            slices: Vec::new(),
            slice_levels: Vec::new(),
            slice_lookup: SliceLookup::Table(Vec::new()),
            slice_size,
            identical,
            order: flagged_order.to_vec(),
            digits,
            strides,
            king_shift,
            leader,
        };
        layout.enumerate_slices();
        layout
    }

    fn enumerate_slices(&mut self) {
        if self.pawns == 0 {
            self.slices.push([0; MAX_PIECES]);
            self.slice_levels.push(0);
            return;
        }
        let mut current = [0u8; MAX_PIECES];
        let mut keys = Vec::new();
        self.enumerate_pawns(0, &mut current, &mut keys);
        self.slice_lookup = SliceLookup::new(self.pawns, keys);
    }

    /// Number the slices from pawn slot `slot` on, `keys` gathering each
    /// one's pawn key.
    fn enumerate_pawns(
        &mut self,
        slot: usize,
        current: &mut [u8; MAX_PIECES],
        keys: &mut Vec<(u32, u32)>,
    ) {
        if slot == self.pawns {
            let key = self.pawn_key(current);
            let mut mirrored = *current;
            self.mirror_pawns(&mut mirrored);
            if key <= self.pawn_key(&mirrored) {
                let level = self.level_of(current);
                let slice = u32::try_from(self.slices.len()).expect("few slices");
                keys.push((u32::try_from(key).expect("at most four pawns"), slice));
                self.slices.push(*current);
                self.slice_levels.push(level);
            }
            return;
        }
        let same_colour_before = slot != 0 && slot != self.white_pawns;
        let start = if same_colour_before {
            current[slot - 1] + 1
        } else {
            8
        };
        for sq in start..56 {
            if current[..slot].contains(&sq) {
                continue;
            }
            current[slot] = sq;
            self.enumerate_pawns(slot + 1, current, keys);
        }
        current[slot] = 0;
    }

    /// Dense key of a pawn arrangement (pawn squares in pawn-slot order).
    fn pawn_key(&self, pawns: &[u8; MAX_PIECES]) -> usize {
        pawns[..self.pawns]
            .iter()
            .rev()
            .fold(0, |acc, &sq| acc * 64 + usize::from(sq))
    }

    /// Sort the pawns of each colour (merging identical pawns).
    fn sort_pawns(&self, pawns: &mut [u8]) {
        pawns[..self.white_pawns].sort_unstable();
        pawns[self.white_pawns..self.pawns].sort_unstable();
    }

    fn mirror_pawns(&self, pawns: &mut [u8; MAX_PIECES]) {
        for sq in &mut pawns[..self.pawns] {
            *sq ^= 7;
        }
        self.sort_pawns(pawns);
    }

    /// How advanced the pawns are: White's ranks plus Black's ranks counted
    /// from the other side. Every pawn move raises it.
    fn level_of(&self, pawns: &[u8; MAX_PIECES]) -> u8 {
        pawns[..self.pawns]
            .iter()
            .enumerate()
            .map(|(i, &sq)| {
                if i < self.white_pawns {
                    sq >> 3
                } else {
                    7 - (sq >> 3)
                }
            })
            .sum()
    }

    /// The material of this table.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Pieces by slot.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// Number of slots (pieces).
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }

    /// Number of indices per side to move.
    pub fn size(&self) -> u64 {
        self.slice_size * self.slices.len() as u64
    }

    /// Number of indices per slice.
    pub fn slice_size(&self) -> u64 {
        self.slice_size
    }

    /// Number of slices (1 for pawnless tables).
    pub fn slice_count(&self) -> usize {
        self.slices.len()
    }

    /// The pawn level of a slice (higher = more advanced; see module doc).
    pub fn slice_level(&self, slice: usize) -> u8 {
        self.slice_levels[slice]
    }

    /// The index step of moving the piece in `slot` by one square, when
    /// moving it keeps the canonical frame: free pieces always, kings only
    /// in pawn tables. `None` for pawns and for kings of pawnless tables.
    #[inline]
    pub fn stride(&self, slot: usize) -> Option<u64> {
        self.strides[slot]
    }

    /// Whether the table has identical free pieces (two white rooks, ...):
    /// then each position with them on different squares has one index per
    /// order of their squares (see [`Layout::sorted_identical`]).
    pub fn has_identical_pieces(&self) -> bool {
        !self.identical.is_empty()
    }

    /// The runs of identical free pieces, as the bit shifts of their
    /// digits, highest first, runs in order from the top of the index
    /// (empty in tables without identical pieces).
    pub fn identical_runs(&self) -> &[Vec<u32>] {
        &self.identical
    }

    /// The number of consecutive indices, a power of two, that every
    /// index shares with all its orders of identical free pieces (1 in
    /// tables without them): aligned blocks of this many indices hold
    /// [`Layout::sorted_identical`] of each of their indices.
    pub fn identical_span(&self) -> u64 {
        self.identical
            .iter()
            .flatten()
            .map(|&shift| 1u64 << (shift + 6))
            .max()
            .unwrap_or(1)
    }

    /// The index of the same position with the squares of identical free
    /// pieces in ascending slot order (`index` itself when they already
    /// are, and in tables without identical pieces). Free pieces are not
    /// merged in the index, so the other orders are stored too and always
    /// hold the same value; the solver works on the sorted index alone and
    /// copies its value to the others at the end. The free pieces' squares
    /// are 6-bit digits of an index, so this is bit shuffling.
    #[inline]
    pub fn sorted_identical(&self, index: u64) -> u64 {
        let mut index = index;
        for run in &self.identical {
            if let [high, low] = run[..] {
                let (a, b) = ((index >> high) & 63, (index >> low) & 63);
                if a > b {
                    index ^= ((a ^ b) << high) | ((a ^ b) << low);
                }
            } else {
                let mut squares = [0u64; MAX_PIECES];
                let squares = &mut squares[..run.len()];
                for (sq, &shift) in squares.iter_mut().zip(run) {
                    *sq = (index >> shift) & 63;
                }
                squares.sort_unstable();
                for (&shift, &sq) in run.iter().zip(&*squares) {
                    index = (index & !(63 << shift)) | (sq << shift);
                }
            }
        }
        index
    }

    /// The canonical index of a placement, or `None` if the placement has
    /// no index (kings on the same or adjacent squares in a pawnless table,
    /// pawns overlapping each other or on the first or last rank).
    pub fn encode(&self, placement: &Placement) -> Option<TableIndex> {
        let mut sq = placement.squares;
        let n = self.pieces.len();
        // A pawnless table's kings are a field of their own (the pair, or
        // the leading king's triangle number) after the board is turned
        // into the layout's frame; a pawn table's kings are digits like the
        // free pieces.
        if self.pawns == 0 {
            self.turn_into_frame(&mut sq);
            return self.index_in_frame(&sq).map(TableIndex);
        }
        let slice = {
            let first_pawn = 2 + self.free;
            let mut pawns = [0u8; MAX_PIECES];
            pawns[..self.pawns].copy_from_slice(&sq[first_pawn..n]);
            self.sort_pawns(&mut pawns);
            let mut mirrored = pawns;
            self.mirror_pawns(&mut mirrored);
            let (key, mirror_key) = (self.pawn_key(&pawns), self.pawn_key(&mirrored));
            if mirror_key < key {
                for s in &mut sq[..first_pawn] {
                    *s ^= 7;
                }
                pawns = mirrored;
            }
            let slice = self.slice_lookup.get(key.min(mirror_key))?;
            if pawns[..self.pawns].iter().any(|&p| !(8..56).contains(&p)) {
                return None;
            }
            u64::from(slice)
        };
        Some(TableIndex(
            slice * self.slice_size + self.with_digits(0, &sq),
        ))
    }

    /// Turn a pawnless placement's squares into this layout's frame.
    #[inline]
    fn turn_into_frame(&self, sq: &mut [u8; MAX_PIECES]) {
        let sym = self.frame(sq);
        if sym != Symmetry::IDENTITY {
            for s in &mut sq[..self.pieces.len()] {
                *s = sym.apply(*s);
            }
        }
    }

    /// The index of a pawnless placement already in this layout's frame;
    /// `None` if its kings share a square or touch.
    #[inline]
    fn index_in_frame(&self, sq: &[u8; MAX_PIECES]) -> Option<u64> {
        let kings = match self.leader {
            None => KING_PAIRS.index[usize::from(sq[0]) * 64 + usize::from(sq[1])],
            Some(Lead { slot, .. }) => {
                if sq[0] == sq[1] || kings_adjacent(sq[0], sq[1]) {
                    return None;
                }
                u16::from(TRIANGLE_NUMBER[usize::from(sq[slot])])
            }
        };
        if kings == NONE16 {
            return None;
        }
        Some(self.with_digits(u64::from(kings) << self.king_shift, sq))
    }

    /// `top` with every digit's square of `sq` put in its place.
    #[inline]
    fn with_digits(&self, top: u64, sq: &[u8; MAX_PIECES]) -> u64 {
        self.digits.iter().fold(top, |acc, &(slot, shift)| {
            acc | u64::from(sq[slot]) << shift
        })
    }

    /// The placement at an index (in its canonical frame). An index that
    /// names no placement ([`Layout::names_placement`]) gives both kings
    /// one square, which every reader takes for an illegal position.
    ///
    /// # Panics
    /// If `index` is not below [`Layout::size`].
    pub fn decode(&self, index: TableIndex) -> Placement {
        assert!(index.0 < self.size(), "index {} out of range", index.0);
        // Every field but a leading pawnless king pair is a power of two
        // wide, so the fields come out by shifts and masks.
        let digit_bits = 6 * self.digits.len() as u32;
        let mut squares = [0u8; MAX_PIECES];
        for &(slot, shift) in &self.digits {
            squares[slot] = (index.0 >> shift & 63) as u8;
        }
        if self.pawns == 0 {
            match self.leader {
                None => {
                    let pair = (index.0 >> self.king_shift & ((1 << PAIR_BITS) - 1)) as usize;
                    (squares[0], squares[1]) =
                        KING_PAIRS.squares.get(pair).copied().unwrap_or((0, 0));
                }
                Some(Lead { slot, .. }) => {
                    squares[slot] = TRIANGLE[(index.0 >> self.king_shift) as usize];
                    if !self.names_placement(index.0) {
                        // Both kings on one square (the leader's, where a
                        // king leads).
                        if slot == 1 {
                            squares[0] = squares[1];
                        } else {
                            squares[1] = squares[0];
                        }
                    }
                }
            }
        } else {
            let slice = (index.0 >> digit_bits) as usize;
            let first_pawn = 2 + self.free;
            squares[first_pawn..first_pawn + self.pawns]
                .copy_from_slice(&self.slices[slice][..self.pawns]);
        }
        Placement { squares }
    }

    /// Run `visit` on every index of `range` with its placement, in order,
    /// stopping at the first error. Cheaper than [`Layout::decode`] per
    /// index: between multiples of 64 only the last digit's piece moves.
    pub fn try_for_each_placement<E>(
        &self,
        range: std::ops::Range<u64>,
        mut visit: impl FnMut(u64, &Placement) -> Result<(), E>,
    ) -> Result<(), E> {
        // The piece of the lowest digit, unless a king pair is lowest or
        // it is a pawnless table's king (whose digit may name no placement).
        let last = self
            .digits
            .last()
            .filter(|&&(slot, shift)| {
                shift == 0
                    && (self.pawns > 0 || slot >= 2)
                    && self.leader.is_none_or(|l| l.partner != slot)
            })
            .map(|&(slot, _)| slot);
        let mut placement = self.decode(TableIndex(range.start));
        for index in range.clone() {
            if index > range.start {
                if let Some(slot) = last.filter(|_| !index.is_multiple_of(64)) {
                    placement.squares[slot] += 1;
                } else {
                    placement = self.decode(TableIndex(index));
                }
            }
            visit(index, &placement)?;
        }
        Ok(())
    }

    /// Where a position stands in this table: the side to move and index in
    /// the table's colours (flipping the board if the colours are swapped).
    /// `None` if the material is not this table's.
    pub fn locate(&self, board: &Board, turn: Color) -> Option<(Color, TableIndex)> {
        let (placement, turn) = match self.placement(board) {
            Some(p) => (p, turn),
            None => (
                self.placement(&board.clone().into_mirrored())?,
                turn.other(),
            ),
        };
        Some((turn, self.encode(&placement)?))
    }

    /// For a pawnless table: the index reached from the canonical
    /// `placement` at `index` when the king in `slot` (0 or 1) moves to
    /// `to`, and, when the new canonical frame is not unique (both kings on
    /// the a1-h8 diagonal), the index of the other stored orientation too;
    /// `None` if the kings would touch. Table lookups instead of a full
    /// encode.
    pub fn king_move(
        &self,
        index: TableIndex,
        placement: &Placement,
        slot: usize,
        to: u8,
    ) -> Option<(TableIndex, Option<TableIndex>)> {
        debug_assert_eq!(self.pawns, 0);
        if self.leader.is_some() {
            let mut moved = *placement;
            moved.squares[slot] = to;
            return self.encode_with_twin(&moved);
        }
        let pairs = &KING_PAIRS;
        let pair_mask = ((1u64 << PAIR_BITS) - 1) << self.king_shift;
        let pair = ((index.0 & pair_mask) >> self.king_shift) as usize;
        let (next, sym) = pairs.steps[(pair * 2 + slot) * 64 + usize::from(to)];
        if next == NONE16 {
            return None;
        }
        let map = &pairs.maps[usize::from(sym)];
        let base = u64::from(next) << self.king_shift;
        let digits = |map: &dyn Fn(u8) -> u8| {
            self.digits.iter().fold(base, |acc, &(slot, shift)| {
                acc | u64::from(map(placement.squares[slot])) << shift
            })
        };
        // Most king moves keep the frame: the other pieces' digits stay.
        let moved = if sym == Symmetry::IDENTITY.id() {
            index.0 & !pair_mask | base
        } else {
            digits(&|sq| map[usize::from(sq)])
        };
        let twin = pairs.on_diagonal[usize::from(next)].then(|| {
            let diagonal = &pairs.maps[usize::from(DIAGONAL_FLIP.id())];
            digits(&|sq| diagonal[usize::from(map[usize::from(sq)])])
        });
        Some((
            TableIndex(moved),
            twin.filter(|&t| t != moved).map(TableIndex),
        ))
    }

    /// A pawnless placement's index and, when its frame is not unique
    /// (both kings on the a1-h8 diagonal), the index of the other stored
    /// orientation where it differs; `None` if the kings touch.
    fn encode_with_twin(&self, placement: &Placement) -> Option<(TableIndex, Option<TableIndex>)> {
        let mut squares = placement.squares;
        self.turn_into_frame(&mut squares);
        let index = self.index_in_frame(&squares)?;
        let on_diagonal = |sq: u8| sq >> 3 == sq & 7;
        let (a, b) = self.leader.map_or((0, 1), |l| (l.slot, l.partner));
        if !on_diagonal(squares[a]) || !on_diagonal(squares[b]) {
            return Some((TableIndex(index), None));
        }
        // Both kings on the diagonal: the flip keeps the frame.
        for s in &mut squares[..self.pieces.len()] {
            *s = DIAGONAL_FLIP.apply(*s);
        }
        let twin = self.index_in_frame(&squares)?;
        Some((
            TableIndex(index),
            (twin != index).then_some(TableIndex(twin)),
        ))
    }

    /// Every quiet move of `mover`'s pieces other than pawns from the
    /// canonical `placement` at `index`, as the index it reaches (both
    /// stored orientations where the frame is not unique), until `visit`
    /// returns false. Moves are pseudo-legal (the mover's king may be left
    /// in check: such indices are illegal positions); pieces move
    /// reversibly, so these are also the quiet unmoves.
    pub fn quiet_moves(
        &self,
        placement: &Placement,
        index: TableIndex,
        mover: Color,
        visit: impl FnMut(u64) -> bool,
    ) {
        self.quiet_moves_but(placement, index, mover, None, visit);
    }

    /// [`Layout::quiet_moves`] without those of the piece in `skip`.
    pub fn quiet_moves_but(
        &self,
        placement: &Placement,
        TableIndex(index): TableIndex,
        mover: Color,
        skip: Option<usize>,
        mut visit: impl FnMut(u64) -> bool,
    ) {
        let occupied = self.occupied(placement);
        // Kings last: their moves cost the most to index, and a forward
        // check stops at the first move that fails it.
        let n = self.pieces.len();
        for slot in (2..n).chain(0..2) {
            let piece = self.pieces[slot];
            if piece.color != mover || piece.role == Role::Pawn || skip == Some(slot) {
                continue;
            }
            let from = placement.squares[slot];
            let targets = self.quiet_targets(placement, slot, occupied);
            match self.stride(slot) {
                Some(stride) => {
                    for to in targets {
                        let delta = (i64::from(to as u8) - i64::from(from)) * stride as i64;
                        if !visit(index.wrapping_add_signed(delta)) {
                            return;
                        }
                    }
                }
                None => {
                    for to in targets {
                        let Some((next, twin)) =
                            self.king_move(TableIndex(index), placement, slot, to as u8)
                        else {
                            continue;
                        };
                        for TableIndex(i) in std::iter::once(next).chain(twin) {
                            if !visit(i) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The squares `placement` occupies.
    pub fn occupied(&self, placement: &Placement) -> Bitboard {
        placement.squares[..self.pieces.len()]
            .iter()
            .map(|&s| Square::new(u32::from(s)))
            .collect()
    }

    /// The empty squares the piece in `slot` attacks (`occupied`: the
    /// placement's squares): where it moves without capturing.
    pub fn quiet_targets(
        &self,
        placement: &Placement,
        slot: usize,
        occupied: Bitboard,
    ) -> Bitboard {
        let from = Square::new(u32::from(placement.squares[slot]));
        attacks::attacks(from, self.pieces[slot], occupied) & !occupied
    }

    /// The piece of `mover` whose square is the index's lowest digit
    /// (stride 1), if it is not a pawn: its quiet moves reach indices
    /// that differ in the lowest 6 bits alone, whose square is the bit's
    /// number in a 64-bit word of one bit per index.
    pub fn lowest_digit_piece(&self, mover: Color) -> Option<usize> {
        (0..self.pieces.len())
            .find(|&slot| self.pieces[slot].color == mover && self.strides[slot] == Some(1))
    }

    /// In a table of symmetric material ([`Material::is_symmetric`]): the
    /// index of the position at `index` with the colours swapped and the
    /// board mirrored (the same position seen from the other side, its
    /// value the same with the other side to move); `None` where `index`
    /// has no such index (no placement, or an illegal one).
    pub fn mirrored_index(&self, index: u64) -> Option<TableIndex> {
        debug_assert!(self.material.is_symmetric());
        if !self.names_placement(index) {
            return None;
        }
        let placement = self.decode(TableIndex(index));
        let n = self.pieces.len();
        let mut mirrored = Placement {
            squares: [0; MAX_PIECES],
        };
        // The k-th piece of a kind takes the square of the k-th piece of
        // the other colour's same kind, mirrored.
        let mut taken = [false; MAX_PIECES];
        for slot in 0..n {
            let want = Piece {
                color: !self.pieces[slot].color,
                role: self.pieces[slot].role,
            };
            let from = (0..n)
                .find(|&s| !taken[s] && self.pieces[s] == want)
                .expect("symmetric material");
            taken[from] = true;
            mirrored.squares[slot] = placement.squares[from] ^ 56;
        }
        self.encode(&mirrored)
    }

    /// Whether two pieces share a square.
    pub fn overlaps(&self, placement: &Placement) -> bool {
        let mut seen = Bitboard::EMPTY;
        for &sq in &placement.squares[..self.pieces.len()] {
            let sq = Square::new(u32::from(sq));
            if seen.contains(sq) {
                return true;
            }
            seen.add(sq);
        }
        false
    }

    /// The board of a placement (pieces must not overlap).
    pub fn board(&self, placement: &Placement) -> Board {
        let mut board = Board::empty();
        for (piece, &sq) in self.pieces.iter().zip(&placement.squares) {
            board.set_piece_at(Square::new(u32::from(sq)), *piece);
        }
        board
    }

    /// The position of a placement with `turn` to move, or `None` if it is
    /// not legal (pieces overlap, or the side not to move is in check).
    /// Checks that cannot arise in a game are accepted: tables include them.
    pub fn position(&self, placement: &Placement, turn: Color) -> Option<Chess> {
        if self.overlaps(placement) {
            return None;
        }
        legal_position(self.board(placement), turn)
    }

    /// The placement of a board whose material is exactly this table's
    /// (same colours); `None` otherwise.
    pub fn placement(&self, board: &Board) -> Option<Placement> {
        // Every probe asks this, so the material is checked while the
        // squares are read, not counted first: each kind of piece must
        // fill exactly its run of slots, and the kinds the table has must
        // cover every occupied square.
        let mut squares = [0u8; MAX_PIECES];
        let mut covered = Bitboard::EMPTY;
        // The squares of the current run's kind not yet given a slot.
        let mut left = Bitboard::EMPTY;
        for (slot, &piece) in self.pieces.iter().enumerate() {
            if slot == 0 || self.pieces[slot - 1] != piece {
                if left.any() {
                    return None;
                }
                left = board.by_piece(piece);
                covered |= left;
            }
            squares[slot] = left.pop_front()? as u8;
        }
        (left.is_empty() && covered == board.occupied()).then_some(Placement { squares })
    }
}

/// Every order of `items[k..]` after `items[..k]`, appended to `out` in
/// lexicographic order (`items` ascending: the identity first).
fn permutations(items: &mut Vec<u8>, k: usize, out: &mut Vec<Vec<u8>>) {
    if k == items.len() {
        out.push(items.clone());
        return;
    }
    for i in k..items.len() {
        items[k..=i].rotate_right(1);
        permutations(items, k + 1, out);
        items[k..=i].rotate_left(1);
    }
}

/// The map between the indices of two layouts of one material in different
/// orders of their digits ([`Layout::reorder_to`]): a shuffle of bit fields
/// (the 6-bit digits of the pieces' squares, and a pawnless table's 9-bit
/// king pair), or, where a pawnless layout leads with a king (its own frame
/// of the board), a decode in one layout and an encode in the other.
#[derive(Debug, Clone)]
pub struct Reorder {
    /// The bits that stay where they are.
    keep: u64,
    /// The fields that move.
    moves: Vec<Field>,
    /// The two layouts where the map is not a shuffle.
    frames: Option<Box<Frames>>,
}

/// Two layouts of one material whose pawnless kings are in different frames.
#[derive(Debug, Clone)]
struct Frames {
    from: Layout,
    to: Layout,
    /// By slot in `from`: the same piece's slot in `to`.
    slots: [usize; MAX_PIECES],
    /// The piece of `from`'s lowest 6 bits, where it is a digit (see
    /// [`Reorder::for_each_in_range`]).
    last: Option<LastDigit>,
}

/// The piece whose digit is the lowest of an index ([`Frames::last`]).
#[derive(Debug, Clone, Copy)]
struct LastDigit {
    /// Its slot in the target layout.
    slot: usize,
    /// Its stride in the target layout, where it turns neither board.
    stride: Option<u64>,
}

impl Frames {
    /// The squares of the placement at `index` in `from` (which names
    /// one), by slot in `to`.
    #[inline]
    fn squares_in_to(&self, index: u64) -> [u8; MAX_PIECES] {
        self.in_to_slots(self.from.decode(TableIndex(index)))
    }

    /// [`Frames::squares_in_to`] for any index, also one that names no
    /// placement: each digit's square as the index has it.
    fn digits_in_to(&self, index: u64) -> [u8; MAX_PIECES] {
        let mut placement = self.from.decode(TableIndex(index));
        for &(slot, shift) in &self.from.digits {
            placement.squares[slot] = (index >> shift & 63) as u8;
        }
        self.in_to_slots(placement)
    }

    /// A placement of `from`, by slot in `to`.
    #[inline]
    fn in_to_slots(&self, placement: Placement) -> [u8; MAX_PIECES] {
        let mut squares = [0; MAX_PIECES];
        for (slot, &sq) in placement.squares[..self.from.pieces.len()]
            .iter()
            .enumerate()
        {
            squares[self.slots[slot]] = sq;
        }
        squares
    }

    /// The index in `to` of a placement (by slot in `to`), and the
    /// symmetry that turned it into `to`'s frame; `None` where `to` has no
    /// index for it.
    #[inline]
    fn encode_in_to(&self, mut squares: [u8; MAX_PIECES]) -> Option<(u64, Symmetry)> {
        let sym = self.to.frame(&squares);
        self.to.turn_into_frame(&mut squares);
        Some((self.to.index_in_frame(&squares)?, sym))
    }

    /// The index in `to` of the position at `index` in `from`, and the
    /// symmetry that turned it into `to`'s frame; `None` where `index`
    /// names no placement or `to` has no index for it.
    #[inline]
    fn in_frame(&self, index: u64) -> Option<(u64, Symmetry)> {
        if !self.from.names_placement(index) {
            return None;
        }
        self.encode_in_to(self.squares_in_to(index))
    }
}

/// A bit field that moves: its shift in both layouts, and its width.
#[derive(Debug, Clone, Copy)]
struct Field {
    from: u32,
    to: u32,
    width: u32,
}

impl Field {
    /// The field's bits, unshifted.
    const fn mask(self) -> u64 {
        (1 << self.width) - 1
    }
}

impl Reorder {
    /// The index in the target layout of the position at `index` (which
    /// must name a placement: [`Layout::names_placement`]; 0 for one that
    /// does not, where the layouts' frames differ). Between frames, a
    /// position whose frame is not unique (both kings on the a1-h8
    /// diagonal) may map to either stored orientation, and identical
    /// pieces to any order of their squares: indices of the same position.
    #[inline]
    pub fn apply(&self, index: u64) -> u64 {
        if let Some(frames) = &self.frames {
            return frames.in_frame(index).map_or(0, |(target, _)| target);
        }
        self.moves.iter().fold(index & self.keep, |acc, &f| {
            acc | ((index >> f.from) & f.mask()) << f.to
        })
    }

    /// Visit every index of `start..start + len` as its offset in the
    /// range and its index in the target layout ([`Reorder::apply`]), in
    /// order. Between frames, each run of 64 indices (the lowest digit's
    /// piece moving) is decoded once; where that piece turns neither
    /// board, the run is encoded once too: the symmetry that turns it
    /// into the target's frame is the same for all of it, and the piece's
    /// square moves the target index by its stride.
    pub fn for_each_in_range(&self, start: u64, len: usize, mut visit: impl FnMut(usize, u64)) {
        let Some((frames, last)) = self
            .frames
            .as_deref()
            .and_then(|frames| Some((frames, frames.last?)))
        else {
            for offset in 0..len {
                visit(offset, self.apply(start + offset as u64));
            }
            return;
        };
        let mut offset = 0;
        while offset < len {
            let index = start + offset as u64;
            let end = len.min(offset + (64 - index % 64) as usize);
            let square = |o: usize| ((start + o as u64) % 64) as u8;
            match last.stride {
                Some(stride) => match frames.in_frame(index) {
                    None => (offset..end).for_each(|o| visit(o, 0)),
                    Some((target, sym)) => {
                        let base = target - stride * u64::from(sym.apply(square(offset)));
                        for o in offset..end {
                            visit(o, base + stride * u64::from(sym.apply(square(o))));
                        }
                    }
                },
                None => {
                    // The run's first index may name no placement, and a
                    // later one does: the digits are taken as they are.
                    let mut squares = frames.digits_in_to(index);
                    for o in offset..end {
                        squares[last.slot] = square(o);
                        let target = if frames.from.names_placement(start + o as u64) {
                            frames.encode_in_to(squares).map_or(0, |(target, _)| target)
                        } else {
                            0
                        };
                        visit(o, target);
                    }
                }
            }
            offset = end;
        }
    }

    /// Whether the map is a shuffle of bit fields (not a decode and an
    /// encode between frames): then aligned blocks of `64^digits` indices
    /// map to aligned blocks.
    pub fn is_shuffle(&self) -> bool {
        self.frames.is_none()
    }

    /// Whether the map is the identity (the two orders are the same).
    pub fn is_identity(&self) -> bool {
        self.is_shuffle() && self.moves.is_empty()
    }

    /// Visit every index of the aligned block `start..start + 2^bits`
    /// (`start` a multiple of `2^bits`) as its offset in the block and its
    /// index in the target layout, in ascending order of the target
    /// indices. A map that moves a low digit high scatters consecutive
    /// indices across the target's whole range; visiting them in the
    /// target's order keeps reads of a target-ordered array sequential.
    /// Between frames (no shuffle) the block is visited in its own order.
    pub fn for_each_in_block(&self, start: u64, bits: u32, mut visit: impl FnMut(usize, u64)) {
        debug_assert!(start.trailing_zeros() >= bits);
        if self.frames.is_some() {
            for offset in 0..1usize << bits {
                visit(offset, self.apply(start + offset as u64));
            }
            return;
        }
        // Where each bit of the block goes, as runs of bits that stay
        // together: (bit in the block, bit in the target, length).
        let target_of = |bit: u32| {
            self.moves
                .iter()
                .find(|f| (f.from..f.from + f.width).contains(&bit))
                .map_or(bit, |f| f.to + bit - f.from)
        };
        let mut bit_pairs: Vec<(u32, u32)> = (0..bits).map(|b| (target_of(b), b)).collect();
        bit_pairs.sort_unstable();
        let mut runs: Vec<(u32, u32, u32)> = Vec::new();
        for (to, from) in bit_pairs {
            match runs.last_mut() {
                Some((f, t, len)) if *f + *len == from && *t + *len == to => *len += 1,
                _ => runs.push((from, to, 1)),
            }
        }
        let base = self.apply(start);
        let Some((&(from0, to0, len0), outer)) = runs.split_first() else {
            visit(0, base);
            return;
        };
        // An odometer over the outer runs, the first run innermost.
        let mut counters = vec![0u64; outer.len()];
        let (mut offset, mut target) = (0u64, base);
        loop {
            for c in 0..1u64 << len0 {
                visit((offset | c << from0) as usize, target | c << to0);
            }
            let mut r = 0;
            loop {
                let Some(&(from, to, len)) = outer.get(r) else {
                    return;
                };
                counters[r] += 1;
                if counters[r] < 1 << len {
                    offset += 1 << from;
                    target += 1 << to;
                    break;
                }
                offset -= (counters[r] - 1) << from;
                target -= (counters[r] - 1) << to;
                counters[r] = 0;
                r += 1;
            }
        }
    }
}

/// The position of `board` with `turn` to move, no castling rights and no
/// en-passant square, or `None` if it is not legal (the side not to move
/// is in check). Checks that cannot arise in a game are accepted: tables
/// include them.
pub fn legal_position(board: Board, turn: Color) -> Option<Chess> {
    let setup = Setup {
        board,
        turn,
        ..Setup::empty()
    };
    Chess::from_setup(setup, CastlingMode::Standard)
        .or_else(PositionError::ignore_impossible_check)
        .ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn layout(s: &str) -> Layout {
        Layout::new(s.parse().expect("valid material"))
    }

    #[test]
    fn pawnless_king_pairs_number_462() {
        assert_eq!(KING_PAIRS.squares.len(), PAWNLESS_KING_PAIRS);
        assert_eq!(layout("KQvK").size(), 462 * 64);
        assert_eq!(layout("KRBvKR").size(), 462 * 64 * 64 * 64);
    }

    #[test]
    fn four_pawns_find_their_slices_in_sorted_keys() {
        let l = layout("KPPPvKP");
        assert!(matches!(l.slice_lookup, SliceLookup::Sorted(_)));
        for (slice, pawns) in l.slices.iter().enumerate() {
            let key = l.pawn_key(pawns);
            assert_eq!(l.slice_lookup.get(key), Some(slice as u32), "{pawns:?}");
            let mut mirrored = *pawns;
            l.mirror_pawns(&mut mirrored);
            if l.pawn_key(&mirrored) != key {
                assert_eq!(l.slice_lookup.get(l.pawn_key(&mirrored)), None);
            }
        }
        assert_eq!(l.slice_lookup.get(64usize.pow(4)), None);
    }

    #[test]
    fn pawn_slices_use_the_mirror() {
        let kpvk = layout("KPvK");
        assert_eq!(kpvk.slice_count(), 24);
        assert_eq!(kpvk.size(), 24 * 4096);
        // Two white pawns merged: C(48,2) arrangements, mirror pairs folded.
        let kppvk = layout("KPPvK");
        assert_eq!(kppvk.slice_count(), (48 * 47 / 2 + 24) / 2);
    }

    #[test]
    fn king_moves_agree_with_a_full_encode() {
        // The solver's orders, and files' with the king pair moved.
        for (name, order) in [
            ("KQvK", None),
            ("KRvKN", None),
            ("KRBvKR", None),
            ("KQvK", Some(vec![2, 0, 1])),
            ("KRBvKR", Some(vec![4, 0, 1, 2, 3])),
            ("KRBvKR", Some(vec![3, 2, 4, 0, 1])),
        ] {
            let l = match order {
                None => layout(name),
                Some(order) => {
                    Layout::with_order(name.parse().expect("material"), &order).expect("listed")
                }
            };
            let step = l.size() / 5000 + 1;
            for i in (0..l.size()).step_by(step as usize) {
                if !l.names_placement(i) {
                    continue;
                }
                let p = l.decode(TableIndex(i));
                for slot in 0..2 {
                    for to in 0..64u8 {
                        let mut moved = p;
                        moved.squares[slot] = to;
                        assert_eq!(
                            l.king_move(TableIndex(i), &p, slot, to),
                            l.encode_with_twin(&moved),
                            "{name} {i} slot {slot} to {to}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_symmetry_maps_to_the_same_index() {
        let l = layout("KRvKN");
        let p = placement(&[12, 50, 33, 7]);
        let i = l.encode(&p).expect("legal kings");
        for xor in [0, 7, 56, 63] {
            for diagonal in [false, true] {
                let s = Symmetry { xor, diagonal };
                let mut q = p;
                for sq in &mut q.squares[..4] {
                    *sq = s.apply(*sq);
                }
                assert_eq!(l.encode(&q), Some(i));
            }
        }
    }

    #[test]
    fn identical_pieces_stay_within_their_span() {
        // KRRvKR: the rooks' squares are bits 12..18 and 6..12.
        assert_eq!(layout("KRRvKR").identical_span(), 1 << 18);
        assert_eq!(layout("KNNvK").identical_span(), 1 << 12);
        assert_eq!(layout("KRvKR").identical_span(), 1);
        let l = layout("KRRvKR");
        let span = l.identical_span();
        for i in (0..l.size()).step_by(9973) {
            assert_eq!(l.sorted_identical(i) / span, i / span);
        }
    }

    #[test]
    fn identical_pieces_sort_to_one_index_of_the_same_position() {
        for (name, squares) in [
            ("KRRvKR", [4, 60, 33, 7, 20]),
            ("KRRvKR", [4, 60, 7, 33, 20]),
            ("KNNNvK", [1, 60, 33, 7, 20]),
            ("KNNNvK", [1, 60, 20, 33, 7]),
            ("KRRvKP", [4, 60, 33, 7, 20]),
        ] {
            let l = layout(name);
            assert!(l.has_identical_pieces(), "{name}");
            let i = l.encode(&placement(&squares)).expect("legal kings").0;
            let sorted = l.sorted_identical(i);
            assert_eq!(l.sorted_identical(sorted), sorted, "{name}");
            let p = l.decode(TableIndex(i));
            let q = l.decode(TableIndex(sorted));
            assert_eq!(l.board(&p), l.board(&q), "{name}: same position");
            let run = if name == "KNNNvK" { 3 } else { 2 };
            let run = &q.squares[2..2 + run];
            assert!(run.windows(2).all(|w| w[0] < w[1]), "{name}: {run:?}");
        }
        let l = layout("KRBvKR");
        assert!(!l.has_identical_pieces());
        let i = l.encode(&placement(&[4, 60, 33, 7, 20])).expect("legal").0;
        assert_eq!(l.sorted_identical(i), i);
    }

    #[test]
    fn both_orders_of_identical_pieces_reach_one_sorted_index_in_every_layout() {
        // A placement and the same one with two identical pieces' squares
        // swapped are one position: every layout a file may use must keep
        // it at one sorted index, whatever frame the board is turned into.
        for name in ["KBBvKN", "KRRvKQ", "KNNvKR", "KRRvKR", "KBBvK"] {
            let material: Material = name.parse().expect("material");
            for order in Layout::orders(material) {
                let l = Layout::with_order(material, &order).expect("an order it lists");
                let n = l.pieces.len();
                let twins: Vec<(usize, usize)> = (2..n)
                    .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
                    .filter(|&(a, b)| l.pieces[a] == l.pieces[b])
                    .collect();
                for index in (0..l.size()).step_by(1_009) {
                    if !l.names_placement(index) {
                        continue;
                    }
                    let p = l.decode(TableIndex(index));
                    if l.position(&p, Color::White).is_none() {
                        continue;
                    }
                    for &(a, b) in &twins {
                        let mut q = p;
                        q.squares.swap(a, b);
                        let (i, j) = (l.encode(&p), l.encode(&q));
                        assert_eq!(
                            i.map(|i| l.sorted_identical(i.0)),
                            j.map(|j| l.sorted_identical(j.0)),
                            "{name} order {order:?}: {p:?} and {q:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn orders_keep_identical_pieces_together_and_pawnless_kings_paired() {
        let orders = |name: &str| Layout::orders(name.parse().expect("material"));
        let unflagged = |name: &str| -> Vec<Vec<u8>> {
            orders(name)
                .into_iter()
                .filter(|o| o[0] & LEAD_FLAG == 0)
                .collect()
        };
        // 3! orders of the free pieces, the king pair in 4 places or a king
        // first and the other last; then any piece leading, flagged, and the
        // others in any order (but a king's with the other king last).
        assert_eq!(unflagged("KRBvKR").len(), 24 + 2 * 6);
        assert_eq!(orders("KRBvKR").len(), 24 + 2 * 6 + 5 * 24 - 2 * 6);
        assert!(orders("KRBvKR").contains(&vec![LEAD_FLAG | 4, 1, 3, 0, 2]));
        assert!(!orders("KRBvKR").contains(&vec![LEAD_FLAG, 2, 3, 4, 1]));
        assert_eq!(
            orders("KRBvKR")[0],
            [0, 1, 2, 3, 4],
            "the solver's order first"
        );
        assert!(orders("KRBvKR").contains(&vec![4, 3, 0, 1, 2]));
        assert_eq!(
            unflagged("KRRvKR"),
            [
                vec![0, 1, 2, 3, 4],
                vec![0, 1, 4, 2, 3],
                vec![0, 2, 3, 4, 1],
                vec![0, 4, 2, 3, 1],
                vec![1, 2, 3, 4, 0],
                vec![1, 4, 2, 3, 0],
                vec![2, 3, 0, 1, 4],
                vec![2, 3, 4, 0, 1],
                vec![4, 0, 1, 2, 3],
                vec![4, 2, 3, 0, 1],
            ]
        );
        // The rooks lead no layout: they are not alone of their kind; nor
        // may they follow a flagged rook (2 orders of the other pieces).
        assert_eq!(orders("KRRvKR").len(), 10 + 18 - 4 - 2);
        assert!(!orders("KRRvKR").contains(&vec![LEAD_FLAG | 4, 2, 3, 0, 1]));
        assert!(orders("KRRvKR").contains(&vec![LEAD_FLAG | 4, 0, 2, 3, 1]));
        let material = "KRRvKR".parse().expect("material");
        assert_eq!(
            Layout::with_order(material, &[LEAD_FLAG | 4, 2, 3, 0, 1]).map(|l| l.size()),
            Err(OrderError::Miswritten {
                order: vec![LEAD_FLAG | 4, 2, 3, 0, 1]
            })
        );
        assert!(
            orders("KRRvKR")
                .iter()
                .filter(|o| o[0] & LEAD_FLAG != 0)
                .all(|o| ![2, 3].contains(&(o[0] & !LEAD_FLAG)))
        );
        assert_eq!(
            orders("KRvK"),
            [
                vec![0, 1, 2],
                vec![0, 2, 1],
                vec![1, 2, 0],
                vec![2, 0, 1],
                vec![LEAD_FLAG, 1, 2],
                vec![LEAD_FLAG | 1, 0, 2],
                vec![LEAD_FLAG | 2, 0, 1],
                vec![LEAD_FLAG | 2, 1, 0],
            ]
        );
        assert_eq!(orders("KPvKP"), [vec![0, 1], vec![1, 0]]);
        assert_eq!(orders("KRvKP").len(), 6, "the kings anywhere with pawns");
        // The rooks as one block among the kings: 3! orders.
        assert_eq!(orders("KRRvKP").len(), 6);
        assert!(orders("KRRvKP").contains(&vec![2, 3, 1, 0]));
        let kpvk = orders("KPvK");
        assert_eq!(
            Layout::new("KPvK".parse().expect("material")).order(),
            kpvk[0]
        );
        let krrvkr = "KRRvKR".parse().expect("material");
        let err = Layout::with_order(krrvkr, &[0, 1, 2, 4, 3])
            .expect_err("the rooks apart")
            .to_string();
        assert_eq!(
            err,
            "piece order [0, 1, 2, 4, 3] is not an order of KRRvKR's kings and 3 free pieces that keeps the kings together, puts one first and the other last or puts a flagged piece alone of its kind first, and keeps identical pieces together"
        );
        let err = Layout::with_order("KRvK".parse().expect("material"), &[1, 0, 2])
            .expect_err("pawnless kings swapped, not last")
            .to_string();
        assert!(err.starts_with("piece order [1, 0, 2] is not"), "{err}");
        let err = Layout::with_order("KRvKR".parse().expect("material"), &[0, 2, 1, 3])
            .expect_err("pawnless kings apart")
            .to_string();
        assert!(err.starts_with("piece order [0, 2, 1, 3] is not"), "{err}");
        let err = Layout::with_order("KRRvKP".parse().expect("material"), &[3, 2, 0, 1])
            .expect_err("rooks out of their order")
            .to_string();
        assert_eq!(
            err,
            "piece order [3, 2, 0, 1] is not an order of KRRvKP's kings and 2 free pieces that keeps identical pieces together"
        );
    }

    #[test]
    fn a_placement_is_found_exactly_where_the_material_is_the_tables() {
        let kinds: Vec<Piece> = Color::ALL
            .into_iter()
            .flat_map(|color| Role::ALL.map(|role| Piece { color, role }))
            .collect();
        let (mut found, mut refused) = (0, 0);
        for name in ["KRPvKR", "KBBvKN", "KPvKP", "KRvK"] {
            let l = Layout::new(name.parse().expect("material"));
            let board = l.board(&l.decode(TableIndex(l.size() / 3)));
            // The board itself, one piece removed, one added, or one
            // changed into another kind, on every square.
            let mut boards = vec![board.clone(), board.clone().into_mirrored()];
            for sq in Square::ALL {
                let mut removed = board.clone();
                if removed.remove_piece_at(sq).is_some() {
                    boards.push(removed);
                }
                for &piece in &kinds {
                    let mut changed = board.clone();
                    changed.set_piece_at(sq, piece);
                    boards.push(changed);
                }
            }
            for b in boards {
                let same = Material::from_board(&b) == l.material();
                assert_eq!(l.placement(&b).is_some(), same, "{name} {b:?}");
                if same {
                    assert_eq!(l.board(&l.placement(&b).expect("found")), b);
                    found += 1;
                } else {
                    refused += 1;
                }
            }
        }
        assert!(found > 4 && refused > 1000, "{found} {refused}");
    }

    #[test]
    fn reordered_layouts_give_a_position_a_shuffled_index() {
        for name in [
            "KRBvKR", "KRRvKR", "KRPvKR", "KQvKR", "KRRvKP", "KPvKP", "KQvKP", "KRvK",
        ] {
            let material = name.parse().expect("material");
            let solver = Layout::new(material);
            for order in Layout::orders(material) {
                let file = Layout::with_order(material, &order).expect("listed");
                if file.leader.is_some() {
                    // Its own frame: layouts_led_by_a_king_turn_the_board.
                    continue;
                }
                let (to_file, back) = (solver.reorder_to(&file), file.reorder_to(&solver));
                assert_eq!(to_file.is_identity(), order.is_sorted(), "{name} {order:?}");
                // A pawnless king pair that does not lead takes 9 bits.
                let pair_moved = !material.has_pawns() && !order.starts_with(&[0, 1]);
                let size = if pair_moved {
                    solver.size() / PAWNLESS_KING_PAIRS as u64 * 512
                } else {
                    solver.size()
                };
                assert_eq!(file.size(), size, "{name} {order:?}");
                assert_eq!(
                    file.order_pieces(),
                    order
                        .iter()
                        .map(|&s| solver.pieces[usize::from(s)])
                        .collect::<Vec<_>>()
                );
                // Kings keep their slots, free pieces take theirs in order.
                let mut next_free = 2;
                let slots: Vec<usize> = order
                    .iter()
                    .map(|&s| {
                        if s < 2 {
                            usize::from(s)
                        } else {
                            next_free += 1;
                            next_free - 1
                        }
                    })
                    .collect();
                for i in (0..solver.size()).step_by((solver.size() / 3000) as usize + 1) {
                    let p = solver.decode(TableIndex(i));
                    let j = to_file.apply(i);
                    assert!(
                        j < file.size() && file.names_placement(j),
                        "{name} {order:?}"
                    );
                    assert_eq!(back.apply(j), i, "{name} {order:?} {i}");
                    let q = file.decode(TableIndex(j));
                    for (&from, &slot) in order.iter().zip(&slots) {
                        assert_eq!(q.squares[slot], p.squares[usize::from(from)]);
                    }
                    if !solver.overlaps(&p) {
                        assert_eq!(file.board(&q), solver.board(&p), "{name} {order:?} {i}");
                        // A board's identical pieces come in ascending order.
                        let placed = file.placement(&solver.board(&p)).expect("material");
                        let sorted = file.sorted_identical(j);
                        assert_eq!(file.encode(&placed).map(|t| t.0), Some(sorted));
                        assert_eq!(to_file.apply(solver.sorted_identical(i)), sorted);
                    }
                    // Moving a digit's piece one square up moves the index
                    // by its stride.
                    for &slot in &slots {
                        let Some(stride) = file.stride(slot) else {
                            continue;
                        };
                        if q.squares[slot] < 63 {
                            let mut moved = q;
                            moved.squares[slot] += 1;
                            assert_eq!(file.encode(&moved), Some(TableIndex(j + stride)));
                        }
                    }
                }
                // Placements in order, the last digit's piece moving fastest.
                assert_placements_in_order(&file);
            }
        }
    }

    /// A walk over 200 indices gives the placements [`Layout::decode`]
    /// gives.
    fn assert_placements_in_order(file: &Layout) {
        let start = file.size() / 3 - 100;
        let mut seen = 0;
        file.try_for_each_placement(start..start + 200, |i, placement| {
            assert_eq!(
                *placement,
                file.decode(TableIndex(i)),
                "{:?} {i}",
                file.order()
            );
            seen += 1;
            Ok::<(), ()>(())
        })
        .expect("no error");
        assert_eq!(seen, 200);
    }

    /// A number of the position on `board` in `l`, the same for every
    /// symmetric image of it and every order of its identical pieces: the
    /// smaller sorted index of its two stored orientations where both kings
    /// stand on the a1-h8 diagonal.
    fn position_key(l: &Layout, board: &Board) -> u64 {
        let p = l.placement(board).expect("the layout's material");
        let (i, twin) = l.encode_with_twin(&p).expect("kings apart");
        let i = l.sorted_identical(i.0);
        twin.map_or(i, |t| i.min(l.sorted_identical(t.0)))
    }

    /// [`Reorder::for_each_in_range`] visits each index of a range, in
    /// order, with what [`Reorder::apply`] gives it (0 where it names no
    /// placement), on ranges that start and end inside runs of 64.
    fn assert_ranges_map_as_indices_do(reorder: &Reorder, size: u64) {
        for start in [0, 1, size / 7 + 5, size / 2 - 3, size - 300] {
            let mut visited = Vec::new();
            reorder.for_each_in_range(start, 300, |offset, target| visited.push((offset, target)));
            let want: Vec<(usize, u64)> = (0..300)
                .map(|o| (o, reorder.apply(start + o as u64)))
                .collect();
            assert_eq!(visited, want, "from {start}");
        }
    }

    #[test]
    fn layouts_led_by_a_piece_turn_the_board() {
        for name in ["KQvKR", "KRRvK", "KBNvK", "KRBvKR", "KRvKR"] {
            let material: Material = name.parse().expect("material");
            let solver = Layout::new(material);
            let n = solver.piece_count();
            let flagged = |o: &Vec<u8>| o[0] & LEAD_FLAG != 0;
            let led: Vec<Vec<u8>> = Layout::orders(material)
                .into_iter()
                .filter(|o| flagged(o) || !o.windows(2).any(|w| w == [0, 1]))
                .collect();
            let pair_first = Layout::orders(material)
                .iter()
                .filter(|o| o.starts_with(&[0, 1]))
                .count();
            assert_eq!(
                led.iter().filter(|o| !flagged(o)).count(),
                2 * pair_first,
                "{name}: a king first, the other last"
            );
            // A free piece alone of its kind may lead (KRRvK's rooks may not).
            assert_eq!(
                led.iter().any(|o| flagged(o) && o[0] & !LEAD_FLAG >= 2),
                name != "KRRvK",
                "{name}"
            );
            for order in led {
                let file = Layout::with_order(material, &order).expect("listed");
                // A leading free piece takes the first free slot.
                let lead = usize::from(order[0] & !LEAD_FLAG).min(2);
                assert_eq!(file.leader.map(|k| k.slot), Some(lead));
                assert_eq!(file.size(), 10 << (6 * (n - 1)), "{name} {order:?}");
                if !flagged(&order) {
                    // The stored king placements are the 462 pairs (the
                    // other king is the lowest digit).
                    let named = (0..10u64)
                        .flat_map(|t| (0..64).map(move |o| t << (6 * (n - 1)) | o))
                        .filter(|&i| file.names_placement(i))
                        .count();
                    assert_eq!(named, PAWNLESS_KING_PAIRS, "{name} {order:?}");
                }
                let (to_file, back) = (solver.reorder_to(&file), file.reorder_to(&solver));
                assert!(!to_file.is_shuffle() && !back.is_shuffle());
                assert_ranges_map_as_indices_do(&back, file.size());
                assert_ranges_map_as_indices_do(&to_file, solver.size());
                for i in (0..solver.size()).step_by((solver.size() / 700) as usize + 1) {
                    let p = solver.decode(TableIndex(i));
                    if solver.overlaps(&p) {
                        continue;
                    }
                    let key = position_key(&solver, &solver.board(&p));
                    let j = to_file.apply(i);
                    assert!(file.names_placement(j), "{name} {order:?} {i}");
                    let q = file.decode(TableIndex(j));
                    assert!(TRIANGLE.contains(&q.squares[lead]), "{name} {order:?}");
                    assert_eq!(position_key(&solver, &file.board(&q)), key);
                    let back_at = solver.decode(TableIndex(back.apply(j)));
                    assert_eq!(position_key(&solver, &solver.board(&back_at)), key);
                    assert_eq!(file.encode(&q), Some(TableIndex(j)));
                    // A free piece's move keeps the frame, but the leader's
                    // and its partner's, which have no stride.
                    for slot in 2..n {
                        let Some(stride) = file.stride(slot) else {
                            assert!(flagged(&order), "{name} {order:?} {slot}");
                            continue;
                        };
                        if q.squares[slot] < 63 {
                            let mut moved = q;
                            moved.squares[slot] += 1;
                            assert_eq!(file.encode(&moved), Some(TableIndex(j + stride)));
                        }
                    }
                    // A king's move (or a leader's, or its partner's)
                    // reaches the moved position, in both stored
                    // orientations where there are two.
                    for slot in (0..n).filter(|&slot| file.stride(slot).is_none()) {
                        for to in 0..64u8 {
                            let mut moved = q;
                            moved.squares[slot] = to;
                            if (0..n).any(|other| other != slot && moved.squares[other] == to) {
                                continue;
                            }
                            let (k, o) = (moved.squares[0], moved.squares[1]);
                            let Some((m, twin)) = file.king_move(TableIndex(j), &q, slot, to)
                            else {
                                assert!(k == o || kings_adjacent(k, o), "{name} {order:?}");
                                continue;
                            };
                            let want = position_key(&solver, &file.board(&moved));
                            for t in std::iter::once(m).chain(twin) {
                                assert!(file.names_placement(t.0));
                                let at = file.decode(t);
                                assert_eq!(position_key(&solver, &file.board(&at)), want);
                            }
                            assert_ne!(twin, Some(m));
                        }
                    }
                }
                // Placements in order agree with decode, kings lowest.
                assert_placements_in_order(&file);
            }
        }
    }

    #[test]
    fn a_moved_king_pair_names_462_of_its_512_numbers() {
        let material = "KQvKR".parse().expect("material");
        for order in Layout::orders(material) {
            if order[0] & LEAD_FLAG != 0 || !order.windows(2).any(|w| w == [0, 1]) {
                continue;
            }
            let l = Layout::with_order(material, &order).expect("listed");
            let named = (0..l.size()).filter(|&i| l.names_placement(i)).count();
            assert_eq!(named, Layout::new(material).size() as usize, "{order:?}");
        }
        // The pair lowest: every 512 indices, 462 pairs then 50 without one.
        let l = Layout::with_order(material, &[2, 3, 0, 1]).expect("listed");
        assert!(l.names_placement(461) && !l.names_placement(462));
        assert!(!l.names_placement(511) && l.names_placement(512));
        assert_eq!(l.decode(TableIndex(0)).squares[2..4], [0, 0]);
        assert_eq!(l.decode(TableIndex(1 << 9)).squares[2..4], [0, 1]);
    }

    #[test]
    fn a_block_is_visited_once_in_the_target_order() {
        for (name, order) in [
            ("KRPvKR", vec![1, 0, 3, 2]),
            ("KNvKP", vec![2, 1, 0]),
            ("KRBvKR", vec![0, 1, 4, 3, 2]),
            ("KRvKP", vec![0, 1, 2]),
            ("KRBvKR", vec![4, 0, 1, 3, 2]),
            ("KRvK", vec![2, 0, 1]),
        ] {
            let material = name.parse().expect("material");
            let file = Layout::with_order(material, &order).expect("listed");
            let to_solver = file.reorder_to(&Layout::new(material));
            for (start, bits) in [(0, 0), (0, 7), (1 << 20, 20), (3 << 14, 14), (5 << 3, 3)] {
                let mut seen = vec![false; 1 << bits];
                let mut last = None;
                to_solver.for_each_in_block(start, bits, |offset, target| {
                    assert!(!seen[offset], "{name} {start} {bits}: {offset} twice");
                    seen[offset] = true;
                    assert_eq!(target, to_solver.apply(start + offset as u64), "{name}");
                    assert!(last < Some(target), "{name} {start} {bits}: ascending");
                    last = Some(target);
                });
                assert!(
                    seen.iter().all(|&s| s),
                    "{name} {start} {bits}: every index"
                );
            }
        }
    }

    /// The placement of `squares`, in slot order (unused slots on a1).
    fn placement(squares: &[u8]) -> Placement {
        let mut p = Placement {
            squares: [0; MAX_PIECES],
        };
        p.squares[..squares.len()].copy_from_slice(squares);
        p
    }

    fn check_round_trip(name: &str, seed: &[u8]) {
        let l = layout(name);
        let mut p = Placement {
            squares: [0; MAX_PIECES],
        };
        for (slot, piece) in l.pieces().iter().enumerate() {
            let raw = seed[slot] % 64;
            p.squares[slot] = if piece.role == Role::Pawn {
                8 + raw % 48
            } else {
                raw
            };
        }
        let Some(i) = l.encode(&p) else {
            return;
        };
        assert!(i.0 < l.size());
        let q = l.decode(i);
        assert_eq!(l.encode(&q), Some(i), "{name} {p:?} -> {q:?}");
        if !l.overlaps(&p) {
            assert_eq!(l.board(&q).occupied().count(), l.piece_count());
            // Same position up to symmetry: the same multiset of pieces
            // and the same index again from the board (up to the order of
            // identical pieces).
            let back = l.placement(&l.board(&q)).expect("same material");
            let back = l.encode(&back).expect("legal").0;
            assert_eq!(l.sorted_identical(back), l.sorted_identical(i.0));
        }
    }

    proptest! {
        #[test]
        fn encode_decode_round_trips(seed in proptest::collection::vec(any::<u8>(), MAX_PIECES)) {
            for name in ["KRvK", "KBNvK", "KRBvKR", "KPvK", "KPvKP", "KPPvK", "KRPvKR", "KPPvKP", "KRNvKNN", "KPPPvKP"] {
                check_round_trip(name, &seed);
            }
        }

        #[test]
        fn every_index_decodes_to_a_placement_that_encodes_back(raw in any::<u64>()) {
            for name in ["KQvKR", "KRPvK", "KPvKP", "KBBvKN", "KRRvKP"] {
                let material = name.parse().expect("material");
                for order in Layout::orders(material) {
                    let l = Layout::with_order(material, &order).expect("listed");
                    let i = TableIndex(raw % l.size());
                    let p = l.decode(i);
                    if l.names_placement(i.0) {
                        prop_assert_eq!(l.encode(&p), Some(i));
                    } else {
                        // Both kings on one square: an illegal placement.
                        prop_assert!(l.overlaps(&p));
                        prop_assert_eq!(l.encode(&p), None);
                    }
                }
            }
        }
    }
}
