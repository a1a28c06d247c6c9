//! The seed pass: the first value of every position, from its own moves.
//!
//! Before the ply loop the solver needs, for every position and side to
//! move: is it legal, is the side to move mated or stalemated, and what do
//! its zeroing moves (captures, pawn moves, promotions) guarantee? The
//! [`Seeder`] answers this on bitboards, without building a
//! [`shakmaty::Chess`] per position: it generates the side to move's moves
//! from attack tables, tests each for leaving its own king attacked, and
//! scores a zeroing move by reading the WDL of the position it reaches
//! straight from the destination table by index (sub-tables, or a higher
//! pawn level of this table). A quiet move only has to exist; the first
//! legal one ends the search for quiet moves.
//!
//! One case is left to the general, slower path: a double pawn push next to
//! an enemy pawn, whose value depends on the en-passant rules of
//! [`crate::probe::resolve_dtz`]. [`Position::cell`] returns `None` for such positions.

use shakmaty::{Bitboard, ByColor, Color, Piece, Rank, Role, Square, attacks};

use std::{cell::OnceCell, sync::OnceLock};

use crate::{
    format::{nibble_wdl, set_nibble_wdl},
    generate::cell::Cell,
    index::{Layout, Placement, TableIndex},
    material::{MAX_PIECES, Material},
    probe::{IndexedValues, ProbeError, StoredValues, WdlChunks},
    value::{Dtz, Rule, Successor, Wdl},
};

/// A table that zeroing moves lead to.
struct Target<'a> {
    /// The material after the move, in the seeded table's colours.
    material: Material,
    /// Whether the destination table's White is the seeded table's Black.
    flip: bool,
    /// The destination table.
    values: &'a dyn IndexedValues,
    /// For a table that keeps lower bounds that a capture may raise
    /// (files: [`IndexedValues::capture_bounded`]): the captures of its
    /// positions, which raise a value read there to the exact one: one per
    /// side to move, as placements follow each side's order of digits.
    resolver: Option<Box<SideSeeders<'a>>>,
    /// For a table read from a file: the chunks this seeder unpacked,
    /// freed with it (a 5-piece table reached by promotions is read
    /// through once per level, and need not stay in memory after).
    kept: Option<KeptChunks<'a>>,
    /// Whether `resolver` raises whole chunks as they are unpacked (a
    /// table of fewer pieces, which captures read all over) rather than
    /// each value read (a table that promotions reach, read in a few
    /// places of each chunk).
    raise_chunks: bool,
}

/// Capture seeders for a table's two sides to move: a placement's slots
/// follow its side's order of digits, so a side whose order differs from
/// White's has a seeder of its own; one that orders them alike shares
/// White's (and its unpacked chunks).
pub(crate) struct SideSeeders<'a> {
    white: Seeder<'a>,
    black: Option<Seeder<'a>>,
}

impl<'a> SideSeeders<'a> {
    /// Seeders of [`Search::Captures`] for the layouts `layout` gives per
    /// side to move, reading destination tables from `store`.
    ///
    /// # Errors
    /// A destination table that `store` does not have.
    pub(crate) fn captures(
        layout: &dyn Fn(Color) -> &'a Layout,
        rule: Rule,
        store: &'a dyn StoredValues,
    ) -> Result<SideSeeders<'a>, ProbeError> {
        let seeder = |turn| Seeder::new(layout(turn), rule, store, Search::Captures);
        let (white, black) = (layout(Color::White), layout(Color::Black));
        Ok(SideSeeders {
            white: seeder(Color::White)?,
            black: (white.order() != black.order())
                .then(|| seeder(Color::Black))
                .transpose()?,
        })
    }

    /// The seeder of `turn`'s side.
    pub(crate) fn get(&self, turn: Color) -> &Seeder<'a> {
        match (turn, &self.black) {
            (Color::Black, Some(black)) => black,
            _ => &self.white,
        }
    }
}

impl Target<'_> {
    /// The side to move in this table after the piece in `slot` of the
    /// seeded `layout` makes a zeroing move here.
    fn turn_after(&self, layout: &Layout, slot: usize) -> Color {
        let mover = layout.pieces()[slot].color;
        if self.flip { mover } else { mover.other() }
    }

    /// The exact WDL at `index` (`placement`) with `turn` to move.
    fn wdl(
        &self,
        turn: Color,
        index: TableIndex,
        placement: &Placement,
    ) -> Result<Wdl, ProbeError> {
        let resolver = self.resolver.as_deref().map(|r| r.get(turn));
        let wdl = match &self.kept {
            Some(kept) if self.raise_chunks => return kept.wdl(turn, index, resolver),
            Some(kept) => kept.wdl(turn, index, None)?,
            None => self.values.wdl_at(turn, index)?,
        };
        match resolver {
            Some(resolver) => resolver.raised(wdl, placement, turn),
            None => Ok(wdl),
        }
    }
}

/// WDL chunks unpacked for one seeding pass.
struct KeptChunks<'a> {
    source: &'a dyn WdlChunks,
    /// The table the chunks are of (its index schemes).
    values: &'a dyn IndexedValues,
    chunks: Vec<OnceLock<Box<[u8]>>>,
}

impl KeptChunks<'_> {
    /// The WDL at `index`, its chunk unpacked on first use and raised by
    /// `resolver` (the table's captures) if given.
    fn wdl(
        &self,
        turn: Color,
        index: TableIndex,
        resolver: Option<&Seeder<'_>>,
    ) -> Result<Wdl, ProbeError> {
        let (chunk, offset) = self.source.chunk_of(turn, index);
        let pairs = match self.chunks[chunk].get() {
            Some(pairs) => pairs,
            None => {
                let mut pairs = self.source.unpack_chunk(chunk)?;
                if let Some(resolver) = resolver {
                    self.raise(chunk, &mut pairs, resolver)?;
                }
                self.chunks[chunk].get_or_init(|| pairs.into_boxed_slice())
            }
        };
        Ok(nibble_wdl(pairs, offset))
    }

    /// Raise every kept WDL of a chunk (two codes a byte) by the best
    /// capture.
    fn raise(
        &self,
        chunk: usize,
        pairs: &mut [u8],
        resolver: &Seeder<'_>,
    ) -> Result<(), ProbeError> {
        let (turn, range) = self.source.chunk_range(chunk);
        let start = range.start;
        self.values
            .side_layout(turn)
            .try_for_each_placement(range, |index, placement| {
                let offset = (index - start) as usize;
                let kept = nibble_wdl(pairs, offset);
                let wdl = resolver.raised(kept, placement, turn)?;
                if wdl != kept {
                    set_nibble_wdl(pairs, offset, wdl);
                }
                Ok(())
            })
    }
}

/// How to read the value after one kind of zeroing move: which table,
/// and which of the seeded table's slots fills each of its slots.
#[derive(Clone, Copy)]
struct Route {
    /// Index into the targets; `None` for bare kings (a draw).
    target: Option<usize>,
    /// For each destination slot, the seeded table's slot whose piece
    /// (moved, if it is the mover) stands there.
    from_slot: [u8; MAX_PIECES],
}

/// Routes are kept in a flat array keyed by (victim slot, promoted role),
/// each with [`NO_SLOT`] / no promotion as an extra value.
const NO_SLOT: usize = MAX_PIECES;
const ROUTE_KEYS: usize = (MAX_PIECES + 1) * (PROMOTIONS.len() + 1);

const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// Computes initial cells of one table (see the module doc).
pub(crate) struct Seeder<'a> {
    layout: &'a Layout,
    rule: Rule,
    targets: Vec<Target<'a>>,
    /// Routes by (mover slot, key), see [`route_key`].
    routes: Vec<Option<Route>>,
}

impl<'a> Seeder<'a> {
    /// A seeder for `layout` that searches the moves `search` names,
    /// reading destination tables (this one included, for pawn moves) from
    /// `store`; it unpacks a chunk of a file's WDL on first use and keeps
    /// it until it is dropped, as it serves passes over every position. A
    /// seeder of [`Search::Captures`] (for
    /// [`Seeder::best_capture`]) reads tables of fewer pieces only.
    ///
    /// # Errors
    /// A destination table that `store` does not have.
    pub(crate) fn new(
        layout: &'a Layout,
        rule: Rule,
        store: &'a dyn StoredValues,
        search: Search,
    ) -> Result<Seeder<'a>, ProbeError> {
        let mut moves = zeroing_moves(layout);
        if search == Search::Captures {
            moves.retain(|(_, after)| after.len() < layout.piece_count());
        }
        let mut materials: Vec<Material> = moves
            .iter()
            .filter(|(_, after)| after.len() > 2)
            .map(|(_, after)| material_after(after))
            .collect();
        materials.sort();
        materials.dedup();
        let targets = materials
            .into_iter()
            .map(|material| {
                let normalized = material.normalized();
                let values = store.indexed(&normalized)?;
                let kept = values.wdl_chunks().map(|source| KeptChunks {
                    source,
                    values,
                    chunks: (0..source.chunk_count()).map(|_| OnceLock::new()).collect(),
                });
                let resolver = if values.capture_bounded() {
                    Some(Box::new(SideSeeders::captures(
                        &|turn| values.side_layout(turn),
                        rule,
                        store,
                    )?))
                } else {
                    None
                };
                Ok(Target {
                    material,
                    flip: normalized != material,
                    values,
                    resolver,
                    kept,
                    raise_chunks: material.total() < layout.piece_count(),
                })
            })
            .collect::<Result<Vec<_>, ProbeError>>()?;
        let routes = routes(layout, &moves, &targets);
        Ok(Seeder {
            layout,
            rule,
            targets,
            routes,
        })
    }

    /// The initial cells of the placement `squares` with each side to
    /// move; `None` where the general path must decide (en passant).
    ///
    /// # Errors
    /// A destination value that cannot be read.
    pub(crate) fn cells(
        &self,
        squares: &[u8; MAX_PIECES],
    ) -> Result<ByColor<Option<Cell>>, ProbeError> {
        let Some(position) = self.position(squares) else {
            return Ok(ByColor::new_with(|_| Some(Cell::ILLEGAL)));
        };
        let white = position.cell(Color::White)?;
        let black = position.cell(Color::Black)?;
        Ok(ByColor { white, black })
    }

    /// The best WDL that a capture gives `turn` in the placement `squares`
    /// (`None`: no capture, or no legal position); only for a seeder made
    /// with [`Search::Captures`].
    ///
    /// # Errors
    /// A destination value that cannot be read.
    pub(crate) fn best_capture(
        &self,
        squares: &[u8; MAX_PIECES],
        turn: Color,
    ) -> Result<Option<Wdl>, ProbeError> {
        let Some(position) = self.position(squares) else {
            return Ok(None);
        };
        let best = position.best_capture(turn)?;
        Ok(best.map(|dtz| Wdl::from_dtz(dtz, self.rule)))
    }

    /// Whether a capture gives `turn` the WDL `wdl` in the placement
    /// `squares`, where `wdl` is the position's own value (so that no
    /// capture gives more): what comparing [`Seeder::best_capture`] with
    /// `wdl` answers, but the search stops at the first capture that gives
    /// it (KRPvKR's writer took 15 s to find the best of every one). Only
    /// for a seeder made with [`Search::Captures`]; a value that fails to
    /// read counts as no.
    pub(crate) fn capture_reaches(
        &self,
        squares: &[u8; MAX_PIECES],
        turn: Color,
        wdl: Wdl,
    ) -> bool {
        let Some(position) = self.position(squares) else {
            return false;
        };
        let Some(mut moves) = position.moves(turn, Search::Captures) else {
            return false;
        };
        moves.reach = Some(wdl);
        match moves.run() {
            Ok(Decided::WinInOne) => wdl == Wdl::Win,
            Ok(Decided::Reached) => true,
            Ok(_) => moves.zeroing.map(|z| Wdl::from_dtz(z, self.rule)) == Some(wdl),
            Err(_) => false,
        }
    }

    /// A kept WDL of `placement` with `turn` to move, raised to what its
    /// best capture gives; only for a seeder made with [`Search::Captures`].
    ///
    /// # Errors
    /// A destination value that cannot be read.
    pub(crate) fn raised(
        &self,
        kept: Wdl,
        placement: &Placement,
        turn: Color,
    ) -> Result<Wdl, ProbeError> {
        if kept == Wdl::Win {
            return Ok(kept);
        }
        let best = self.best_capture(&placement.squares, turn)?;
        Ok(best.map_or(kept, |best| best.max(kept)))
    }

    /// The attack sets of the placement `squares`; `None` if pieces
    /// overlap.
    fn position<'s>(&'s self, squares: &'s [u8; MAX_PIECES]) -> Option<Position<'s, 'a>> {
        let pieces = self.layout.pieces();
        let mut occupied = Bitboard::EMPTY;
        let mut by_color = ByColor::<Bitboard>::default();
        for (piece, &sq) in pieces.iter().zip(squares) {
            let sq = Square::new(u32::from(sq));
            if occupied.contains(sq) {
                return None;
            }
            occupied.add(sq);
            by_color.get_mut(piece.color).add(sq);
        }
        let mut attacks_of = [Bitboard::EMPTY; MAX_PIECES];
        let mut attacked_by = ByColor::<Bitboard>::default();
        for (slot, (piece, &sq)) in pieces.iter().zip(squares).enumerate() {
            attacks_of[slot] = attacks::attacks(Square::new(u32::from(sq)), *piece, occupied);
            *attacked_by.get_mut(piece.color) |= attacks_of[slot];
        }
        Some(Position {
            seeder: self,
            pieces,
            squares,
            occupied,
            by_color,
            attacks_of,
            attacked_by,
        })
    }

    /// The score of the zeroing move of `slot` (from `squares`) to `to`,
    /// capturing `victim` and becoming `promoted`.
    fn score(
        &self,
        squares: &[u8; MAX_PIECES],
        slot: usize,
        to: u8,
        victim: Option<usize>,
        promoted: Option<Role>,
    ) -> Result<Dtz, ProbeError> {
        let key = route_key(slot, victim, promoted);
        let route = self.routes[key].expect("every zeroing move has a route");
        let Some(target) = route.target.map(|t| &self.targets[t]) else {
            return Ok(Dtz::of_move(Successor::Zeroing(Wdl::Draw), self.rule));
        };
        let turn = target.turn_after(self.layout, slot);
        let layout = target.values.side_layout(turn);
        let flip = if target.flip { 56 } else { 0 };
        let mut placement = Placement {
            squares: [0; MAX_PIECES],
        };
        for (square, &from) in placement.squares[..layout.piece_count()]
            .iter_mut()
            .zip(&route.from_slot)
        {
            let from = usize::from(from);
            *square = if from == slot { to } else { squares[from] } ^ flip;
        }
        let index = layout.encode(&placement).ok_or(ProbeError::NoValue {
            material: layout.material(),
        })?;
        let wdl = target.wdl(turn, index, &placement)?;
        Ok(Dtz::of_move(Successor::Zeroing(wdl), self.rule))
    }
}

fn route_key(slot: usize, victim: Option<usize>, promoted: Option<Role>) -> usize {
    let victim = victim.unwrap_or(NO_SLOT);
    let promoted = promoted.map_or(0, |r| {
        1 + PROMOTIONS
            .iter()
            .position(|&p| p == r)
            .expect("a promotion role")
    });
    (slot * (MAX_PIECES + 1) + victim) * (PROMOTIONS.len() + 1) + promoted
}

/// The moving slot of a route key ([`route_key`]).
fn route_slot(key: usize) -> usize {
    key / ((MAX_PIECES + 1) * (PROMOTIONS.len() + 1))
}

/// Every zeroing move a slot can make: its route key and the pieces after
/// it, each with the slot it comes from.
fn zeroing_moves(layout: &Layout) -> Vec<(usize, Vec<(usize, Piece)>)> {
    let pieces = layout.pieces();
    let mut moves = Vec::new();
    for (slot, mover) in pieces.iter().enumerate() {
        let victims = (0..pieces.len())
            .filter(|&j| pieces[j].color != mover.color && pieces[j].role != Role::King)
            .map(Some)
            .chain([None]);
        for victim in victims {
            let promotions: Vec<Option<Role>> = if mover.role == Role::Pawn {
                PROMOTIONS.iter().map(|&r| Some(r)).chain([None]).collect()
            } else {
                vec![None]
            };
            for promoted in promotions {
                let after = (0..pieces.len())
                    .filter(|&j| Some(j) != victim)
                    .map(|j| {
                        let mut piece = pieces[j];
                        if j == slot {
                            piece.role = promoted.unwrap_or(piece.role);
                        }
                        (j, piece)
                    })
                    .collect();
                moves.push((route_key(slot, victim, promoted), after));
            }
        }
    }
    moves
}

/// The material of the pieces after a move.
fn material_after(after: &[(usize, Piece)]) -> Material {
    Material::from_pieces(after.iter().map(|&(_, p)| p))
}

/// The route of every zeroing move in `moves` (see [`zeroing_moves`]).
fn routes(
    layout: &Layout,
    moves: &[(usize, Vec<(usize, Piece)>)],
    targets: &[Target<'_>],
) -> Vec<Option<Route>> {
    let mut routes = vec![None; MAX_PIECES * ROUTE_KEYS];
    for (key, after) in moves {
        let slot = route_slot(*key);
        let route = if after.len() == 2 {
            Route {
                target: None,
                from_slot: [0; MAX_PIECES],
            }
        } else {
            let material = material_after(after);
            let t = targets
                .iter()
                .position(|t| t.material == material)
                .expect("a target for every zeroing move");
            let target = &targets[t];
            let mut from_slot = [0u8; MAX_PIECES];
            let mut used = vec![false; after.len()];
            // Slots follow the destination's order of digits for the side
            // to move there (see `Seeder::score`).
            let pieces = target
                .values
                .side_layout(target.turn_after(layout, slot))
                .pieces();
            for (to_slot, piece) in pieces.iter().enumerate() {
                let wanted = if target.flip {
                    Piece {
                        color: piece.color.other(),
                        role: piece.role,
                    }
                } else {
                    *piece
                };
                let k = (0..after.len())
                    .find(|&k| !used[k] && after[k].1 == wanted)
                    .expect("the destination has this material");
                used[k] = true;
                from_slot[to_slot] = after[k].0 as u8;
            }
            Route {
                target: Some(t),
                from_slot,
            }
        };
        routes[*key] = Some(route);
    }
    routes
}

fn king_square(squares: &[u8; MAX_PIECES], color: Color) -> Square {
    Square::new(u32::from(squares[usize::from(color == Color::Black)]))
}

/// One placement, with what both sides' move searches share.
struct Position<'s, 'a> {
    seeder: &'s Seeder<'a>,
    /// The seeded table's pieces, by slot (the layout's, held here: the
    /// move search reads them for every piece it moves).
    pieces: &'s [Piece],
    squares: &'s [u8; MAX_PIECES],
    occupied: Bitboard,
    by_color: ByColor<Bitboard>,
    /// Squares each slot's piece attacks.
    attacks_of: [Bitboard; MAX_PIECES],
    /// Squares each side attacks.
    attacked_by: ByColor<Bitboard>,
}

impl Position<'_, '_> {
    /// The initial cell with `turn` to move (`None`: en passant, see
    /// [`Seeder::cells`]).
    fn cell(&self, turn: Color) -> Result<Option<Cell>, ProbeError> {
        let Some(mut moves) = self.moves(turn, Search::All) else {
            return Ok(Some(Cell::ILLEGAL));
        };
        match moves.run()? {
            // A search of every move has no WDL to reach.
            Decided::No | Decided::Reached => {}
            Decided::WinInOne => return Ok(Some(Cell::dtz(Dtz(1)))),
            Decided::EnPassant => return Ok(None),
        }
        Ok(Some(match moves.zeroing {
            None if !moves.quiet => {
                if moves.checkers.any() {
                    Cell::MATED
                } else {
                    Cell(0)
                }
            }
            Some(z) if !moves.quiet => Cell::dtz(z),
            z => Cell::unknown_after_zeroing(z),
        }))
    }

    /// The score of `turn`'s best capture (`None`: none, or the position
    /// is illegal).
    fn best_capture(&self, turn: Color) -> Result<Option<Dtz>, ProbeError> {
        let Some(mut moves) = self.moves(turn, Search::Captures) else {
            return Ok(None);
        };
        Ok(match moves.run()? {
            Decided::WinInOne => Some(Dtz(1)),
            _ => moves.zeroing,
        })
    }

    /// The move search of `turn`, not yet run; `None` if the side not to
    /// move is in check (an illegal position).
    fn moves(&self, turn: Color, search: Search) -> Option<Moves<'_, '_, '_>> {
        let their_king = king_square(self.squares, turn.other());
        if self.attacked_by.get(turn).contains(their_king) {
            return None;
        }
        let king = king_square(self.squares, turn);
        let mut checkers = Bitboard::EMPTY;
        for (slot, (piece, &sq)) in self.pieces.iter().zip(self.squares).enumerate() {
            if piece.color != turn && self.attacks_of[slot].contains(king) {
                checkers.add(Square::new(u32::from(sq)));
            }
        }
        Some(Moves {
            position: self,
            turn,
            search,
            king,
            checkers,
            king_danger: OnceCell::new(),
            pinned: self.pinned(turn, king),
            zeroing: None,
            reach: None,
            quiet: false,
        })
    }

    /// By enemy slot of `turn`, whose king stands on `king`: the squares
    /// it attacks with that king gone (sliders see through the square the
    /// king leaves).
    fn king_danger(&self, turn: Color, king: Square) -> [Bitboard; MAX_PIECES] {
        let mut danger = [Bitboard::EMPTY; MAX_PIECES];
        for (slot, (piece, &sq)) in self.pieces.iter().zip(self.squares).enumerate() {
            if piece.color == turn {
                continue;
            }
            danger[slot] = if matches!(piece.role, Role::Queen | Role::Rook | Role::Bishop) {
                attacks::attacks(Square::new(u32::from(sq)), *piece, self.occupied ^ king)
            } else {
                self.attacks_of[slot]
            };
        }
        danger
    }

    /// `turn`'s pieces pinned to its king by an enemy slider.
    fn pinned(&self, turn: Color, king: Square) -> Bitboard {
        let mut pinned = Bitboard::EMPTY;
        for (piece, &sq) in self.pieces.iter().zip(self.squares) {
            let slider = Square::new(u32::from(sq));
            let line = match piece.role {
                _ if piece.color == turn => continue,
                Role::Queen => attacks::queen_attacks(king, Bitboard::EMPTY),
                Role::Rook => attacks::rook_attacks(king, Bitboard::EMPTY),
                Role::Bishop => attacks::bishop_attacks(king, Bitboard::EMPTY),
                _ => continue,
            };
            if !line.contains(slider) {
                continue;
            }
            let between = attacks::between(king, slider) & self.occupied;
            if between.count() == 1 && (between & *self.by_color.get(turn)).any() {
                pinned |= between;
            }
        }
        pinned
    }
}

/// Whether the move search can stop early.
enum Decided {
    /// Keep going.
    No,
    /// A zeroing move wins at once: the position is won in 1.
    WinInOne,
    /// A double push gives the opponent an en-passant chance.
    EnPassant,
    /// A capture gives the WDL searched for ([`Moves::reach`]).
    Reached,
}

/// Which moves a search looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// Every zeroing move, and whether a quiet move exists.
    All,
    /// Captures only.
    Captures,
}

/// The move search of one side to move.
struct Moves<'p, 's, 'a> {
    position: &'p Position<'s, 'a>,
    turn: Color,
    search: Search,
    king: Square,
    /// Enemy pieces giving check.
    checkers: Bitboard,
    /// By enemy slot: the squares it attacks through our king's square
    /// ([`Position::king_danger`]), found at the first king move.
    king_danger: OnceCell<[Bitboard; MAX_PIECES]>,
    pinned: Bitboard,
    /// The best zeroing move's score so far.
    zeroing: Option<Dtz>,
    /// A WDL to stop at: the first zeroing move that gives it ends the
    /// search ([`Seeder::capture_reaches`]).
    reach: Option<Wdl>,
    /// Whether a legal quiet move exists.
    quiet: bool,
}

impl Moves<'_, '_, '_> {
    /// Search every piece's moves, stopping early if one decides.
    fn run(&mut self) -> Result<Decided, ProbeError> {
        // Pieces before the king: a piece's quiet move is proved legal
        // cheaply, a king's needs an attack test.
        let pieces = self.position.pieces;
        let king = usize::from(self.turn == Color::Black);
        for slot in (2..pieces.len()).chain([king]) {
            if pieces[slot].color != self.turn {
                continue;
            }
            let decided = if pieces[slot].role == Role::Pawn {
                self.pawn(slot)?
            } else {
                self.piece(slot)?
            };
            if !matches!(decided, Decided::No) {
                return Ok(decided);
            }
        }
        Ok(Decided::No)
    }

    /// Moves of the (non-pawn) piece in `slot`.
    fn piece(&mut self, slot: usize) -> Result<Decided, ProbeError> {
        let p = self.position;
        let targets = p.attacks_of[slot] & !*p.by_color.get(self.turn);
        for to in targets & *p.by_color.get(self.turn.other()) {
            if let Some(decided) = self.zeroing_move(slot, to, None)? {
                return Ok(decided);
            }
        }
        if !self.quiet && self.search == Search::All {
            self.quiet = (targets & !p.occupied)
                .into_iter()
                .any(|to| self.legal(slot, to, None));
        }
        Ok(Decided::No)
    }

    /// Moves of the pawn in `slot`: pushes, captures, promotions.
    fn pawn(&mut self, slot: usize) -> Result<Decided, ProbeError> {
        let p = self.position;
        let from = Square::new(u32::from(p.squares[slot]));
        let step = |sq: Square| sq.offset(self.turn.fold_wb(8, -8));
        let last_rank = self.turn.fold_wb(Rank::Eighth, Rank::First);
        let mut targets = p.attacks_of[slot] & *p.by_color.get(self.turn.other());
        let pushes =
            step(from).filter(|&sq| self.search == Search::All && !p.occupied.contains(sq));
        if let Some(one) = pushes {
            targets.add(one);
            let start = from.rank() == self.turn.fold_wb(Rank::Second, Rank::Seventh);
            if let Some(two) = step(one).filter(|&sq| start && !p.occupied.contains(sq)) {
                if self.legal(slot, two, None) && self.en_passant_threat(two) {
                    return Ok(Decided::EnPassant);
                }
                targets.add(two);
            }
        }
        for to in targets {
            let roles: &[Role] = if to.rank() == last_rank {
                &PROMOTIONS
            } else {
                &[Role::Pawn]
            };
            for &role in roles {
                if let Some(decided) = self.zeroing_move(slot, to, Some(role))? {
                    return Ok(decided);
                }
            }
        }
        Ok(Decided::No)
    }

    /// Whether an enemy pawn stands beside `to` (where a pawn just landed
    /// with a double push).
    fn en_passant_threat(&self, to: Square) -> bool {
        let p = self.position;
        p.pieces.iter().zip(p.squares).any(|(piece, &sq)| {
            let sq = Square::new(u32::from(sq));
            piece.color != self.turn
                && piece.role == Role::Pawn
                && sq.rank() == to.rank()
                && sq.file().distance(to.file()) == 1
        })
    }

    /// Whether moving `slot` to `to` (capturing `victim`) keeps the
    /// mover's king safe: at once for a piece other than the king that is
    /// not pinned, with its king not in check (most moves).
    #[inline(always)]
    fn legal(&self, slot: usize, to: Square, victim: Option<usize>) -> bool {
        let from = Square::new(u32::from(self.position.squares[slot]));
        if from == self.king {
            return self.king_move_legal(to, victim);
        }
        if self.checkers.is_empty() && !self.pinned.contains(from) {
            return true;
        }
        if self.pinned.contains(from) && !attacks::aligned(self.king, from, to) {
            return false;
        }
        match self.checkers.first() {
            None => true,
            Some(_) if self.checkers.more_than_one() => false,
            Some(checker) => to == checker || attacks::between(self.king, checker).contains(to),
        }
    }

    /// Whether the king may step to `to` (capturing `victim`): no other
    /// enemy piece attacks it there.
    fn king_move_legal(&self, to: Square, victim: Option<usize>) -> bool {
        let p = self.position;
        !self
            .king_danger
            .get_or_init(|| p.king_danger(self.turn, self.king))
            .iter()
            .enumerate()
            .any(|(j, danger)| Some(j) != victim && danger.contains(to))
    }

    /// Score a zeroing move of `slot` to `to`, becoming `role` (pawns;
    /// `None` keeps the piece). Returns a decision if the search can stop.
    fn zeroing_move(
        &mut self,
        slot: usize,
        to: Square,
        role: Option<Role>,
    ) -> Result<Option<Decided>, ProbeError> {
        let p = self.position;
        let victim = (0..p.pieces.len()).find(|&j| j != slot && p.squares[j] == to as u8);
        if !self.legal(slot, to, victim) {
            return Ok(None);
        }
        let promoted = role.filter(|&r| r != Role::Pawn);
        let score = p
            .seeder
            .score(p.squares, slot, to as u8, victim, promoted)?;
        if score == Dtz(1) {
            return Ok(Some(Decided::WinInOne));
        }
        if self
            .reach
            .is_some_and(|wdl| Wdl::from_dtz(score, p.seeder.rule) == wdl)
        {
            return Ok(Some(Decided::Reached));
        }
        self.zeroing = Some(self.zeroing.map_or(score, |z| z.prefer(score)));
        Ok(None)
    }
}
