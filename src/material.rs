//! Material signatures such as `KRPvKR`.
//!
//! A [`Material`] counts the pieces of each colour. It is *normalised* the
//! way Syzygy names its files: the stronger side is White, where stronger
//! means more pieces, then more queens, rooks, bishops, knights, pawns in
//! that order. Each side is written king first, then `Q R B N P`.
//!
//! A table depends on the tables its zeroing moves reach: one piece fewer
//! after a capture, a pawn turned into a piece after a promotion (which can
//! keep the piece count, so 5-piece pawn tables depend on other 5-piece
//! tables). [`Material::subtables`] lists them; [`Material::all_up_to`]
//! lists every table of up to `n` pieces in an order that builds
//! dependencies first.

use std::{
    cmp::Ordering,
    collections::BTreeSet,
    fmt,
    hash::{Hash, Hasher},
    str::FromStr,
};

use shakmaty::{Board, ByColor, ByRole, Color, Piece, Role};
use thiserror::Error;

/// The most pieces (kings included) dtz50 builds tables for.
pub const MAX_PIECES: usize = 6;

/// Roles in the order they are written and indexed: strongest first.
pub const ROLE_ORDER: [Role; 6] = [
    Role::King,
    Role::Queen,
    Role::Rook,
    Role::Bishop,
    Role::Knight,
    Role::Pawn,
];

/// A material signature: how many pieces of each role each colour has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Material {
    by_color: ByColor<ByRole<u8>>,
}

impl Hash for Material {
    /// The twelve counts as one integer: a probe looks its table up by
    /// material, and one write hashes several times faster than twelve.
    fn hash<H: Hasher>(&self, state: &mut H) {
        let key = self
            .by_color
            .iter()
            .flat_map(|side| side.iter())
            .fold(0u128, |key, &count| key << 8 | u128::from(count));
        state.write_u128(key);
    }
}

/// Why a material signature was rejected.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum MaterialError {
    /// No `v` between the two sides.
    #[error("bad material '{0}': expected two sides separated by 'v', like KRvK")]
    NoSeparator(String),
    /// A letter that is not a piece.
    #[error("bad material '{input}': unknown piece letter '{letter}'")]
    UnknownLetter {
        /// What was parsed.
        input: String,
        /// The offending letter.
        letter: char,
    },
    /// A side without exactly one king.
    #[error("bad material '{0}': each side needs exactly one king")]
    Kings(String),
    /// More pieces than dtz50 supports.
    #[error("bad material '{input}': {count} pieces, at most {MAX_PIECES} are supported")]
    TooManyPieces {
        /// What was parsed.
        input: String,
        /// Pieces counted.
        count: usize,
    },
}

impl Material {
    /// The material on a board, as the colours stand (not normalised).
    pub fn from_board(board: &Board) -> Material {
        // A probe asks this of every position it reads, so the pieces are
        // counted one by one: a board has at most a few of each kind, and
        // without the processor's popcount instruction (not in the
        // baseline x86-64 target) counting twelve bitboards' bits took
        // about a tenth of a hot DTZ probe.
        let mut by_color = ByColor::<ByRole<u8>>::default();
        for color in Color::ALL {
            let side = board.by_color(color);
            for role in Role::ALL {
                let mut pieces = board.by_role(role) & side;
                let count = by_color.get_mut(color).get_mut(role);
                while pieces.pop_front().is_some() {
                    *count += 1;
                }
            }
        }
        Material { by_color }
    }

    /// The material of a list of pieces.
    pub fn from_pieces(pieces: impl IntoIterator<Item = Piece>) -> Material {
        let mut by_color = ByColor::<ByRole<u8>>::default();
        for piece in pieces {
            *by_color.get_mut(piece.color).get_mut(piece.role) += 1;
        }
        Material { by_color }
    }

    /// Count of `piece`.
    pub fn count(&self, piece: Piece) -> u8 {
        *self.by_color.get(piece.color).get(piece.role)
    }

    /// Total number of pieces, kings included.
    pub fn total(&self) -> usize {
        self.by_color
            .iter()
            .map(|side| side.iter().map(|&c| usize::from(c)).sum::<usize>())
            .sum()
    }

    /// Whether either side has a pawn.
    pub fn has_pawns(&self) -> bool {
        self.by_color.white.pawn > 0 || self.by_color.black.pawn > 0
    }

    /// The same material with the colours swapped.
    pub fn flipped(&self) -> Material {
        Material {
            by_color: self.by_color.into_swapped(),
        }
    }

    /// Whether both sides have the same pieces (KRvKR): the position with
    /// the colours swapped and the board mirrored is then in the same
    /// table, so table files keep one side to move.
    pub fn is_symmetric(&self) -> bool {
        self.flipped() == *self
    }

    /// Whether this is the normalised form (stronger side is White).
    pub fn is_normalized(&self) -> bool {
        side_order(&self.by_color.white, &self.by_color.black) != Ordering::Less
    }

    /// The normalised form: stronger side White.
    pub fn normalized(&self) -> Material {
        if self.is_normalized() {
            *self
        } else {
            self.flipped()
        }
    }

    /// Pieces in index order: all of White's by [`ROLE_ORDER`], then Black's.
    pub fn pieces(&self) -> Vec<Piece> {
        let mut out = Vec::with_capacity(self.total());
        for color in Color::ALL {
            for role in ROLE_ORDER {
                for _ in 0..*self.by_color.get(color).get(role) {
                    out.push(Piece { color, role });
                }
            }
        }
        out
    }

    /// The normalised tables that zeroing moves lead to (captures and
    /// promotions, and both), excluding bare kings, which are a draw.
    pub fn subtables(&self) -> Vec<Material> {
        let mut out = BTreeSet::new();
        for mover in Color::ALL {
            let victim_side = mover.other();
            let mut captures = vec![*self];
            for role in ROLE_ORDER.into_iter().filter(|&r| r != Role::King) {
                if self.count(Piece {
                    color: victim_side,
                    role,
                }) > 0
                {
                    let mut m = *self;
                    *m.by_color.get_mut(victim_side).get_mut(role) -= 1;
                    out.insert(m.normalized());
                    captures.push(m);
                }
            }
            if self.count(Piece {
                color: mover,
                role: Role::Pawn,
            }) > 0
            {
                for base in captures {
                    for promoted in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                        let mut m = base;
                        *m.by_color.get_mut(mover).get_mut(Role::Pawn) -= 1;
                        *m.by_color.get_mut(mover).get_mut(promoted) += 1;
                        out.insert(m.normalized());
                    }
                }
            }
        }
        out.retain(|m| m.total() > 2);
        out.into_iter().collect()
    }

    /// Every normalised table of 3 to `n` pieces, dependencies first.
    pub fn all_up_to(n: usize) -> Vec<Material> {
        let mut all = BTreeSet::new();
        let non_king = [
            Role::Queen,
            Role::Rook,
            Role::Bishop,
            Role::Knight,
            Role::Pawn,
        ];
        let mut frontier = vec![Material::kings_only()];
        while let Some(m) = frontier.pop() {
            if m.total() >= n.min(MAX_PIECES) {
                continue;
            }
            for color in Color::ALL {
                for role in non_king {
                    let mut next = m;
                    *next.by_color.get_mut(color).get_mut(role) += 1;
                    let next = next.normalized();
                    if all.insert(next) {
                        frontier.push(next);
                    }
                }
            }
        }
        Material::dependency_order(all.into_iter().collect())
    }

    /// `targets` and all their sub-tables, dependencies first.
    pub fn with_dependencies(targets: &[Material]) -> Vec<Material> {
        let mut all = BTreeSet::new();
        let mut stack: Vec<Material> = targets.iter().map(Material::normalized).collect();
        while let Some(m) = stack.pop() {
            if all.insert(m) {
                stack.extend(m.subtables());
            }
        }
        Material::dependency_order(all.into_iter().collect())
    }

    /// Sort so that every table comes after its sub-tables: by piece count,
    /// then by "promotion potential" (pawns promote into pieces, so a table
    /// with fewer pawns among equally many pieces comes first).
    fn dependency_order(mut tables: Vec<Material>) -> Vec<Material> {
        tables.sort_by_key(|m| {
            let pawns = m.by_color.white.pawn + m.by_color.black.pawn;
            (m.total(), pawns, m.to_string())
        });
        tables
    }

    fn kings_only() -> Material {
        let mut by_color = ByColor::new_with(|_| ByRole::default());
        by_color.white.king = 1;
        by_color.black.king = 1;
        Material { by_color }
    }
}

/// Syzygy's order of sides: more pieces, then K Q R B N P counts.
fn side_order(a: &ByRole<u8>, b: &ByRole<u8>) -> Ordering {
    let key = |s: &ByRole<u8>| {
        let total: u8 = s.iter().sum();
        (total, s.king, s.queen, s.rook, s.bishop, s.knight, s.pawn)
    };
    key(a).cmp(&key(b))
}

impl PartialOrd for Material {
    fn partial_cmp(&self, other: &Material) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Material {
    fn cmp(&self, other: &Material) -> Ordering {
        side_order(&self.by_color.white, &other.by_color.white)
            .then_with(|| side_order(&self.by_color.black, &other.by_color.black))
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for color in Color::ALL {
            if color == Color::Black {
                f.write_str("v")?;
            }
            for role in ROLE_ORDER {
                for _ in 0..*self.by_color.get(color).get(role) {
                    write!(f, "{}", role.upper_char())?;
                }
            }
        }
        Ok(())
    }
}

impl FromStr for Material {
    type Err = MaterialError;

    /// Parse `KRPvKR` in any case and side order; the result is normalised.
    fn from_str(input: &str) -> Result<Material, MaterialError> {
        let lower = input.to_ascii_lowercase();
        let (white, black) = lower
            .split_once('v')
            .ok_or_else(|| MaterialError::NoSeparator(input.to_owned()))?;
        let mut by_color = ByColor::new_with(|_| ByRole::<u8>::default());
        for (color, text) in [(Color::White, white), (Color::Black, black)] {
            for letter in text.chars() {
                let role = Role::from_char(letter).ok_or(MaterialError::UnknownLetter {
                    input: input.to_owned(),
                    letter,
                })?;
                let count = by_color.get_mut(color).get_mut(role);
                *count = count.saturating_add(1);
            }
        }
        if by_color.white.king != 1 || by_color.black.king != 1 {
            return Err(MaterialError::Kings(input.to_owned()));
        }
        let material = Material { by_color };
        if material.total() > MAX_PIECES {
            return Err(MaterialError::TooManyPieces {
                input: input.to_owned(),
                count: material.total(),
            });
        }
        Ok(material.normalized())
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for Material {
    /// Materials serialize as their names (`"KRPvKR"`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Material {
        s.parse().expect("valid material")
    }

    #[test]
    fn from_board_counts_as_shakmaty_does() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
            "8/8/2K5/7B/N7/2k5/1p6/8",
            "QQQk4/8/8/8/8/8/8/4K2q",
            "4k3/8/8/8/8/8/8/4K3",
        ] {
            let board: Board = fen.parse().expect("board fen");
            assert_eq!(
                Material::from_board(&board).by_color,
                board.material(),
                "{fen}"
            );
        }
    }

    #[test]
    fn parses_and_normalises() {
        assert_eq!(m("KRPvKR").to_string(), "KRPvKR");
        assert_eq!(m("krpvkr").to_string(), "KRPvKR");
        assert_eq!(m("KRvKRP").to_string(), "KRPvKR");
        assert_eq!(m("KvKQ").to_string(), "KQvK");
        assert_eq!(m("KPvKRB").to_string(), "KRBvKP");
        assert_eq!(m("KRvKQ").to_string(), "KQvKR");
    }

    #[test]
    fn rejects_bad_input_with_the_reason() {
        assert_eq!(
            "KQK".parse::<Material>().unwrap_err().to_string(),
            "bad material 'KQK': expected two sides separated by 'v', like KRvK"
        );
        assert_eq!(
            "QvK".parse::<Material>(),
            Err(MaterialError::Kings("QvK".into()))
        );
        assert_eq!(
            "KKvK".parse::<Material>(),
            Err(MaterialError::Kings("KKvK".into()))
        );
        assert!(matches!(
            "KXvK".parse::<Material>(),
            Err(MaterialError::UnknownLetter { letter: 'x', .. })
        ));
        assert!(matches!(
            "KQRBvKQR".parse::<Material>(),
            Err(MaterialError::TooManyPieces { count: 7, .. })
        ));
    }

    #[test]
    fn lists_subtables() {
        let names = |v: Vec<Material>| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(names(m("KRvK").subtables()), Vec::<String>::new());
        assert_eq!(
            names(m("KPvK").subtables()),
            ["KNvK", "KBvK", "KRvK", "KQvK"]
        );
        let krpvkr = names(m("KRPvKR").subtables());
        for expected in [
            "KRvKR", "KRPvK", "KRvKP", "KQRvK", "KQRvKR", "KRRvKR", "KRBvKR", "KRNvKR",
        ] {
            assert!(
                krpvkr.contains(&expected.to_string()),
                "{expected} in {krpvkr:?}"
            );
        }
    }

    #[test]
    fn counts_all_tables() {
        assert_eq!(Material::all_up_to(3).len(), 5);
        assert_eq!(Material::all_up_to(4).len(), 35);
        assert_eq!(Material::all_up_to(5).len(), 145);
        let order = Material::all_up_to(5);
        for (i, t) in order.iter().enumerate() {
            for sub in t.subtables() {
                let j = order
                    .iter()
                    .position(|x| *x == sub)
                    .expect("sub-table listed");
                assert!(j < i, "{sub} must come before {t}");
            }
        }
    }
}
