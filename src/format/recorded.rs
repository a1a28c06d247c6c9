//! Orders recorded for tables: for each table `tables/ORDERS` lists, the
//! piece order of each of its streams and the side whose DTZ it keeps, as
//! a search chose them (the list is compiled in).
//!
//! Choosing a large table's orders is a third of its build (KRBvKR's
//! 11.4 s of 31; see BENCHMARKS.md), and the choice depends only on the
//! table's values, which are the same for everyone who builds it under
//! the same rule. So a default build of a listed table under the 50-move
//! rule writes its streams in the recorded orders instead of searching
//! (see [`super::OrderSearch::Recorded`]), and gets the same file, byte for
//! byte, as the build the orders were taken from, even where that build
//! searched thoroughly (`generate --thorough-orders`, 1.4 to 2 times a
//! default build's time for files up to 20 % smaller). Any order gives a
//! file with the same values: a recorded order only decides how small the
//! file is.
//!
//! A line of the list is a table's `dtz50 info` columns `table`, `orders`
//! and `dtz kept`, separated by tabs or spaces (`KRBvKR r|kBKR/r|kBRK/KkrBR
//! b`), so `dtz50 info DIR | cut -f1,9,10` lists a directory's files in
//! it; `#` starts a comment.

use std::{collections::HashMap, sync::OnceLock};

use shakmaty::{ByColor, Color};
use thiserror::Error;

use crate::{index::Layout, material::Material};

/// `tables/ORDERS`.
const RECORDED: &str = include_str!("../../tables/ORDERS");

/// A table's recorded orders: each stream's order of the pieces, and the
/// side whose DTZ its file keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RecordedOrders {
    /// Each side's WDL order (a table of symmetric material: White's
    /// twice).
    pub wdl: ByColor<Vec<u8>>,
    /// The kept DTZ's order.
    pub dtz: Vec<u8>,
    /// The side to move whose DTZ is kept.
    pub dtz_side: Color,
}

/// A line of the list that does not name a table's orders.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("tables/ORDERS line {line}: {reason}")]
pub(super) struct RecordError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The orders `tables/ORDERS` records for `material` (normalised), if it
/// lists it.
///
/// # Panics
/// If the compiled-in list does not parse, which a unit test rules out.
pub(super) fn recorded_orders(material: Material) -> Option<&'static RecordedOrders> {
    static LIST: OnceLock<HashMap<Material, RecordedOrders>> = OnceLock::new();
    LIST.get_or_init(|| parse_list(RECORDED).expect("tables/ORDERS parses (a unit test checks)"))
        .get(&material)
}

/// The tables and orders `text` lists, in the format of the module doc.
///
/// # Errors
/// The first line that names no table, an order its table does not have,
/// no side, a second order for a symmetric table's Black, or a table
/// listed before.
fn parse_list(text: &str) -> Result<HashMap<Material, RecordedOrders>, RecordError> {
    let mut list = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let error = |reason: String| RecordError {
            line: n + 1,
            reason,
        };
        let (material, orders) = parse_line(line).map_err(error)?;
        if list.insert(material, orders).is_some() {
            return Err(error(format!("{material} is listed twice")));
        }
    }
    Ok(list)
}

/// One line's table and orders.
fn parse_line(line: &str) -> Result<(Material, RecordedOrders), String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [table, orders, side] = fields[..] else {
        return Err(format!(
            "expected a table, its orders and the side whose DTZ is kept, got {line:?}"
        ));
    };
    let material: Material = table
        .parse()
        .map_err(|_| format!("{table:?} is not a table"))?;
    if material.to_string() != table {
        return Err(format!("{table} is not named as dtz50 names it"));
    }
    let named = |name: &str| {
        Layout::named_order(material, name)
            .ok_or_else(|| format!("{name:?} is not an order of {material}"))
    };
    let [white, black, dtz] = orders.split('/').collect::<Vec<_>>()[..] else {
        return Err(format!(
            "expected three orders separated by '/', got {orders:?}"
        ));
    };
    let dtz_side = match side {
        "w" => Color::White,
        "b" => Color::Black,
        _ => {
            return Err(format!(
                "the side whose DTZ is kept is w or b, not {side:?}"
            ));
        }
    };
    let recorded = RecordedOrders {
        wdl: ByColor {
            white: named(white)?,
            black: named(black)?,
        },
        dtz: named(dtz)?,
        dtz_side,
    };
    if material.is_symmetric() && (recorded.wdl.black != recorded.wdl.white || side != "w") {
        return Err(format!(
            "{material} keeps White to move only: its Black WDL order repeats White's and its DTZ side is w"
        ));
    }
    Ok((material, recorded))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_list_parses_and_names_its_tables() {
        let list = parse_list(RECORDED).expect("tables/ORDERS parses");
        assert!(!list.is_empty());
        for (material, orders) in &list {
            assert_eq!(recorded_orders(*material), Some(orders));
        }
    }

    #[test]
    fn every_table_of_the_3_4_5_set_is_recorded() {
        let missing: Vec<String> = Material::all_up_to(5)
            .into_iter()
            .filter(|&material| recorded_orders(material).is_none())
            .map(|material| material.to_string())
            .collect();
        assert_eq!(missing, Vec::<String>::new());
    }

    #[test]
    fn a_line_reads_back_as_info_names_its_orders() {
        let list = parse_list("# a comment\nKRBvKR\tr|kBKR/r|kBRK/KkrBR\tb  # after\n")
            .expect("a valid line");
        let material: Material = "KRBvKR".parse().expect("a table");
        let orders = &list[&material];
        assert_eq!(orders.dtz_side, Color::Black);
        let name = |order: &[u8]| Layout::order_name(material, order);
        assert_eq!(name(&orders.wdl.white), "r|kBKR");
        assert_eq!(name(&orders.wdl.black), "r|kBRK");
        assert_eq!(name(&orders.dtz), "KkrBR");
    }

    #[test]
    fn bad_lines_are_named() {
        let reason = |text: &str| parse_list(text).expect_err("a bad line").to_string();
        assert_eq!(
            reason("\nKRBvKR\tKkrRB/KkrRB\tw"),
            "tables/ORDERS line 2: expected three orders separated by '/', got \"KkrRB/KkrRB\""
        );
        assert_eq!(
            reason("KRBvKR\tKkrRB/KkrRB/KRrkB\tw"),
            "tables/ORDERS line 1: \"KRrkB\" is not an order of KRBvKR"
        );
        assert_eq!(
            reason("KRvKRB\tKkrR/KkrR/KkrR\tw"),
            "tables/ORDERS line 1: KRvKRB is not named as dtz50 names it"
        );
        assert_eq!(
            reason("KRvKR\tK|rkR/KkrR/K|rkR\tw"),
            "tables/ORDERS line 1: KRvKR keeps White to move only: its Black WDL order repeats White's and its DTZ side is w"
        );
        assert_eq!(
            reason("KRvK\tKkR/KkR/KkR\tx"),
            "tables/ORDERS line 1: the side whose DTZ is kept is w or b, not \"x\""
        );
        assert_eq!(
            reason("KRvK\tKkR/KkR/KkR\tw\nKRvK\tKkR/KkR/KkR\tw"),
            "tables/ORDERS line 2: KRvK is listed twice"
        );
    }
}
