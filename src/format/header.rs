//! The header: the facts a table file states about itself, and the
//! statistics it carries per side to move (see the byte table in the
//! format module's doc).

use shakmaty::{ByColor, Color};

use super::{
    DTZ_BLOCK_LEN, FormatError, HEADER_LEN, INDEX_SCHEME, MAGIC, VERSION, WDL_BLOCK_LEN,
    stream::CRC32, u16_at, u32_at, u64_at,
};
use crate::{
    index::{Layout, TableIndex, free_pieces},
    material::Material,
    value::{Dtz, Rule, Wdl},
};

/// Where the piece orders lie (WDL with White to move, WDL with Black to
/// move, the kept DTZ), a u32 each: one nibble per piece of the order.
const ORDERS_AT: usize = 152;

/// Bytes of one side's statistics in the header.
const STATS_LEN: usize = 56;

/// The header facts of a table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The material.
    pub material: Material,
    /// The rule the table was built for.
    pub rule: Rule,
    /// Positions per side to move in the order of White's WDL stream
    /// (every stream's own count is in its head).
    pub positions: u64,
    /// The order of the pieces in the index of each side's WDL stream
    /// (see [`Layout::with_order`]); a mirrored file's Black entry repeats
    /// White's.
    pub wdl_orders: ByColor<Vec<u8>>,
    /// The order of the pieces in the index of the kept DTZ stream.
    pub dtz_order: Vec<u8>,
    /// Statistics per side to move.
    pub stats: ByColor<SideStats>,
}

/// Where [`SideStats::counts`] counts `wdl`: loss first.
fn count_slot(wdl: Wdl) -> usize {
    (wdl.to_i8() + 2) as usize
}

/// Per side to move: how many positions of each WDL, and the longest DTZ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SideStats {
    /// Legal positions by WDL, loss first (index `wdl + 2`).
    pub counts: [u64; 5],
    /// Longest DTZ of a win (not cursed), in plies.
    pub longest_win: u16,
    /// Longest DTZ of a cursed win.
    pub longest_cursed_win: u16,
    /// Longest DTZ of a loss (not blessed), in plies.
    pub longest_loss: u16,
    /// Longest DTZ of a blessed loss.
    pub longest_blessed_loss: u16,
    /// An index reaching the longest decisive DTZ (win or loss, cursed
    /// included), if any.
    pub longest_at: Option<TableIndex>,
}

impl SideStats {
    /// The legal positions of value `wdl`.
    pub fn count(&self, wdl: Wdl) -> u64 {
        self.counts[count_slot(wdl)]
    }

    /// Count `count` positions of value `dtz`, the first of them (the
    /// lowest index) at `first`. The positions may be counted in any
    /// order: [`SideStats::longest_at`] is the lowest index of those with
    /// the longest decisive DTZ.
    pub(crate) fn add(&mut self, dtz: Dtz, count: u64, first: u64, rule: Rule) {
        let wdl = Wdl::from_dtz(dtz, rule);
        self.counts[count_slot(wdl)] += count;
        let plies = dtz.plies();
        let before = self.longest();
        let slot = match wdl {
            Wdl::Win => &mut self.longest_win,
            Wdl::CursedWin => &mut self.longest_cursed_win,
            Wdl::Loss => &mut self.longest_loss,
            Wdl::BlessedLoss => &mut self.longest_blessed_loss,
            Wdl::Draw => return,
        };
        *slot = (*slot).max(plies);
        let earlier = self.longest_at.is_none_or(|at| first < at.0);
        if plies > before || plies == before && earlier {
            self.longest_at = Some(TableIndex(first));
        }
    }

    /// The longest decisive DTZ in plies.
    pub fn longest(&self) -> u16 {
        self.longest_win
            .max(self.longest_cursed_win)
            .max(self.longest_loss)
            .max(self.longest_blessed_loss)
    }

    /// The statistics of two disjoint sets of positions together.
    pub(crate) fn merge(mut self, other: SideStats) -> SideStats {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        let longest_at = match (self.longest_at, other.longest_at) {
            (Some(a), Some(b)) => Some(if other.longest() > self.longest() {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        };
        self.longest_win = self.longest_win.max(other.longest_win);
        self.longest_cursed_win = self.longest_cursed_win.max(other.longest_cursed_win);
        self.longest_loss = self.longest_loss.max(other.longest_loss);
        self.longest_blessed_loss = self.longest_blessed_loss.max(other.longest_blessed_loss);
        self.longest_at = longest_at;
        self
    }
}

/// The header of a file whose WDL streams are numbered by `wdl` (per side
/// to move) and whose kept DTZ stream by `dtz`.
pub(super) fn header_bytes(
    wdl: &ByColor<&Layout>,
    dtz: &Layout,
    rule: Rule,
    stats: &ByColor<SideStats>,
) -> Vec<u8> {
    let material = wdl.white.material();
    let mut h = Vec::with_capacity(HEADER_LEN);
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.push(rule.code());
    h.push(INDEX_SCHEME);
    h.extend_from_slice(&WDL_BLOCK_LEN.to_le_bytes());
    h.extend_from_slice(&DTZ_BLOCK_LEN.to_le_bytes());
    let mut name = [0u8; 16];
    let text = material.to_string();
    name[..text.len()].copy_from_slice(text.as_bytes());
    h.extend_from_slice(&name);
    h.extend_from_slice(&wdl.white.size().to_le_bytes());
    for turn in Color::ALL {
        let s = stats.get(turn);
        for c in s.counts {
            h.extend_from_slice(&c.to_le_bytes());
        }
        for l in [
            s.longest_win,
            s.longest_cursed_win,
            s.longest_loss,
            s.longest_blessed_loss,
        ] {
            h.extend_from_slice(&l.to_le_bytes());
        }
        h.extend_from_slice(&s.longest_at.map_or(u64::MAX, |i| i.0).to_le_bytes());
    }
    for layout in [wdl.white, wdl.black, dtz] {
        let order = layout
            .order()
            .iter()
            .rev()
            .fold(0u32, |acc, &piece| acc << 4 | u32::from(piece));
        h.extend_from_slice(&order.to_le_bytes());
    }
    debug_assert_eq!(h.len(), HEADER_LEN - 4);
    let crc = CRC32.checksum(&h);
    h.extend_from_slice(&crc.to_le_bytes());
    h
}

pub(super) fn parse_header(b: &[u8]) -> Result<Header, FormatError> {
    let bad = |s: String| FormatError::Header(s);
    if CRC32.checksum(&b[..HEADER_LEN - 4]) != u32_at(b, HEADER_LEN - 4) {
        return Err(bad("checksum mismatch".into()));
    }
    let rule = Rule::from_code(b[10]).ok_or_else(|| bad(format!("unknown rule code {}", b[10])))?;
    if b[11] != INDEX_SCHEME {
        return Err(bad(format!(
            "index scheme {}, expected {INDEX_SCHEME}",
            b[11]
        )));
    }
    if (u16_at(b, 12), u16_at(b, 14)) != (WDL_BLOCK_LEN, DTZ_BLOCK_LEN) {
        return Err(bad(format!(
            "blocks of {} and {} bytes, expected {WDL_BLOCK_LEN} and {DTZ_BLOCK_LEN}",
            u16_at(b, 12),
            u16_at(b, 14)
        )));
    }
    let name_end = b[16..32].iter().position(|&c| c == 0).unwrap_or(16);
    let name = std::str::from_utf8(&b[16..16 + name_end])
        .map_err(|_| bad("material is not ASCII".into()))?;
    let material: Material = name.parse().map_err(|e| bad(format!("{e}")))?;
    if material.to_string() != name {
        return Err(bad(format!("material '{name}' is not normalised")));
    }
    let positions = u64_at(b, 32);
    let pieces = 2 + free_pieces(material).len();
    let order = |k: usize| {
        let nibbles = u32_at(b, ORDERS_AT + 4 * k);
        if nibbles.checked_shr(4 * pieces as u32).unwrap_or(0) != 0 {
            return Err(bad(format!(
                "piece order {nibbles:#x} has more than {pieces} pieces"
            )));
        }
        Ok((0..pieces)
            .map(|j| (nibbles >> (4 * j) & 15) as u8)
            .collect::<Vec<u8>>())
    };
    let wdl_orders = ByColor {
        white: order(0)?,
        black: order(1)?,
    };
    let dtz_order = order(2)?;
    let stats = ByColor::new_with(|turn| {
        let at = 40 + STATS_LEN * usize::from(turn == Color::Black);
        let mut counts = [0u64; 5];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = u64_at(b, at + 8 * i);
        }
        let longest = |i: usize| u16_at(b, at + 40 + 2 * i);
        let longest_at = u64_at(b, at + 48);
        SideStats {
            counts,
            longest_win: longest(0),
            longest_cursed_win: longest(1),
            longest_loss: longest(2),
            longest_blessed_loss: longest(3),
            longest_at: (longest_at != u64::MAX).then_some(TableIndex(longest_at)),
        }
    });
    Ok(Header {
        material,
        rule,
        positions,
        wdl_orders,
        dtz_order,
        stats,
    })
}
