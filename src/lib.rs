//! dtz50: chess endgame tablebases that know the fifty-move rule.
//!
//! dtz50 builds tables of up to six pieces holding, for both sides to
//! move, the exact distance to zeroing (DTZ, in plies) and the five-valued
//! WDL of the fifty-move rule (or the 75-move rule, or none), writes them as
//! compressed, memory-mappable files, and answers the question an
//! engine or arbiter actually has: does this win survive the halfmove clock?
//!
//! ```
//! use dtz50::{Outcome, Rule, Tablebase, generate::{GenerateOptions, generate}};
//! use shakmaty::{CastlingMode, Chess, fen::Fen};
//!
//! let dir = tempfile::tempdir()?;
//! let options = GenerateOptions {
//!     rule: Rule::Fifty,
//!     out: dir.path().into(),
//!     work_dir: None,
//!     checkpoint_every: None,
//!     order_search: Default::default(),
//! };
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
//! The parts, each depending only on those listed after it:
//!
//! * [`adjudicate`] — whole games: the FIDE draw rules and the tablebase
//!   verdict, move by move;
//! * [`generate`] — building tables: the retrograde solver, dependency
//!   order, atomic writes, and the deep check of a finished file;
//! * [`probe`] — reading values of real positions: the [`Tablebase`]
//!   facade, best moves, the rules every reader applies;
//! * [`mod@format`] — the file layout, byte by byte: writer and reader;
//! * the chess vocabulary: [`material`] (signatures like `KRPvKR`),
//!   [`index`] (position ↔ index), [`value`] (WDL, DTZ, the clock);
//! * `mmap` — memory maps, the one module with `unsafe` code.
//!
//! With the `serde` feature, the value types and adjudication reports
//! serialize to the JSON that the `dtz50` command line prints.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod adjudicate;
pub mod format;
pub mod generate;
pub mod index;
pub mod material;
#[allow(unsafe_code)] // The one exception: memory maps (see its module doc).
mod mmap;
pub mod probe;
pub mod value;

pub use format::FormatError;
pub use material::Material;
pub use probe::{ProbeError, Tablebase};
pub use value::{Dtz, Outcome, Rule, Verdict, Wdl};
