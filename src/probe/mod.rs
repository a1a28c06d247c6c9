//! Probing: values of real positions from solved tables.
//!
//! * [`Tablebase`] — the facade over a directory of table files:
//!   [`probe_wdl`](Tablebase::probe_wdl) (WDL with the clock at zero; reads
//!   only the WDL section, what a search wants),
//!   [`probe_dtz`](Tablebase::probe_dtz) (exact DTZ in plies, both sides to
//!   move; a one-ply search where the file keeps the other side's DTZ),
//!   [`probe`](Tablebase::probe) and
//!   [`probe_with_clock`](Tablebase::probe_with_clock) (the clock question:
//!   does the win survive the halfmove clock? exact for every clock),
//!   [`best_moves`](Tablebase::best_moves) (root moves ranked so that a win
//!   that survives the clock is kept) and [`line`](Tablebase::line) (the
//!   DTZ-optimal line).
//! * [`StoredValues`] and [`IndexedValues`] — what any store of solved
//!   tables offers (files here; tables in memory while generating), and the
//!   rules every reader applies on top: probeable positions, en passant,
//!   the score of a move (module `stored`).
//! * [`ProbeError`] — one error for all of them.

mod error;
mod moves;
mod stored;
mod tablebase;

pub use error::{ProbeError, error_chain};
pub use moves::{Line, LineEnd, MAX_LINE_MOVES, RankedMove, rank_moves};
pub use stored::{
    IndexedValues, KeptDtz, KeptWdl, StoredValues, WdlChunks, check_probeable, dtz_by_moves,
    position_dtz, position_wdl, resolve_dtz, resolve_wdl, score_move, won_by_zeroing,
};
pub use tablebase::{
    DEFAULT_CACHE_BYTES, DEFAULT_DECODED_BYTES, FileBytes, Tablebase, file_kind, open_file,
    table_path,
};
