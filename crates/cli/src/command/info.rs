//! `dtz50 info`: the header facts of table files, one tab-separated line
//! each: material, rule, positions per side, bytes, each side's counts
//! (win, cursed win, draw, blessed loss, loss), the longest DTZ and a FEN
//! reaching it, the order of the pieces in each stream's index (WDL with
//! White to move, with Black to move, the kept DTZ; most significant
//! first, pawns not in it: the writer picks for each stream the one that
//! compresses best), and
//! the side to move whose DTZ the file keeps (the other side's is found by
//! a one-ply search).

use std::{path::PathBuf, process::ExitCode};

use anyhow::Result;
use clap::Args;
use dtz50::{
    format::{SideStats, Source, TableFile},
    index::Layout,
    probe::open_file,
};
use shakmaty::{Color, Setup, fen::Fen};

use crate::options::{say, table_files};

/// Arguments of `dtz50 info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A table file or a directory of them.
    path: PathBuf,
}

/// Run `dtz50 info`.
pub fn run(args: InfoArgs) -> Result<ExitCode> {
    say(
        "table\trule\tpositions/side\tbytes\twtm W/CW/D/BL/L\tbtm W/CW/D/BL/L\tlongest\tlongest at\torders\tdtz kept",
    )?;
    for file in table_files(&args.path)? {
        let table = open_file(&file)?;
        say(info_line(&table))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn info_line<S: Source>(table: &TableFile<S>) -> String {
    let h = table.header();
    let (turn, stats) = if h.stats.black.longest() > h.stats.white.longest() {
        (Color::Black, &h.stats.black)
    } else {
        (Color::White, &h.stats.white)
    };
    let fen = stats.longest_at.map_or("-".to_owned(), |index| {
        let layout = table.layout(turn);
        let setup = Setup {
            board: layout.board(&layout.decode(index)),
            turn,
            ..Setup::empty()
        };
        Fen::try_from_setup(setup).map_or("-".to_owned(), |f| f.to_string())
    });
    let counts = |s: &SideStats| {
        let [l, bl, d, cw, w] = s.counts;
        format!("{w}/{cw}/{d}/{bl}/{l}")
    };
    // Each stream's order of pieces: WDL with White, with Black to move,
    // then the kept DTZ.
    let order = [&h.wdl_orders.white, &h.wdl_orders.black, &h.dtz_order]
        .map(|o| Layout::order_name(h.material, o))
        .join("/");
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
        h.material,
        h.rule,
        h.positions,
        table.len(),
        counts(&h.stats.white),
        counts(&h.stats.black),
        stats.longest(),
        fen,
        order,
        table.dtz_side().char()
    )
}
