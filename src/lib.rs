//! dtz50: chess endgame tablebases that know the fifty-move rule.
//!
//! dtz50 builds tables of up to five pieces holding, for both sides to
//! move, the exact distance to zeroing (DTZ, in plies) and the five-valued
//! WDL of the fifty-move rule (or the 75-move rule, or none), writes them as
//! zstd-compressed, memory-mappable files, and answers the question an
//! engine or arbiter actually has: does this win survive the halfmove clock?
//!
//! ```
//! use dtz50::{generate::{generate, GenerateOptions}, probe::Tablebase, value::{Outcome, Rule}};
//! use shakmaty::{fen::Fen, CastlingMode, Chess};
//!
//! let dir = tempfile::tempdir()?;
//! let options = GenerateOptions { rule: Rule::Fifty, out: dir.path().into(), work_dir: None };
//! generate(&["KQvK".parse()?], &options, &|_| {})?;
//!
//! let tables = Tablebase::open(dir.path(), Rule::Fifty)?;
//! let pos: Chess = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1".parse::<Fen>()?.into_position(CastlingMode::Standard)?;
//! let dtz = tables.probe_dtz(&pos)?;
//! assert!(dtz.0 > 0, "white wins");
//! // With 90 plies already on the clock, does the win survive?
//! let verdict = tables.probe_with_clock(&pos, 90)?;
//! assert_eq!(verdict.outcome, if dtz.0 <= 10 { Outcome::Win } else { Outcome::Draw });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Modules, in the order the data flows: [`material`] (signatures),
//! [`index`] (position ↔ index), [`value`] (WDL, DTZ, cells, the clock),
//! [`storage`] (memory-mapped work arrays; the only `unsafe`), [`solve`]
//! (retrograde analysis), [`table`] (solved values and en passant),
//! [`mod@format`] (the file layout), [`generate`] (building files), [`probe`]
//! (the `Tablebase` facade), [`verify`] (the deep consistency check) and
//! [`adjudicate`] (whole games).

pub mod adjudicate;
pub mod cells;
pub mod format;
pub mod generate;
pub mod index;
pub mod material;
pub mod probe;
mod seed;
pub mod solve;
pub mod storage;
pub mod table;
pub mod value;
pub mod verify;

pub use material::Material;
pub use probe::{ProbeError, Tablebase};
pub use value::{Dtz, Outcome, Rule, Verdict, Wdl};
