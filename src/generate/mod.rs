//! Generating tables: the retrograde solver and the files it writes.
//!
//! * [`generate()`] — build tables and their missing sub-tables into a
//!   directory, in dependency order, skipping finished files and writing
//!   each one atomically (modules `builder` and `atomic`);
//! * [`jobs`] and [`render`] — the same set as one job per table, written
//!   for a workflow engine (ninja, Snakemake, make; module `plan`);
//! * [`solve()`] — solve one table in memory from its sub-tables (module
//!   `solve`: the retrograde passes; `seed`: the first values from zeroing
//!   moves; `cells` and `cell`: the one-byte work arrays and their codes;
//!   `slots`: where a position's cell lives, one per position where
//!   identical pieces give it more than one index; `level_list`: the
//!   positions a ply decided, for the next to start from;
//!   `checkpoint` and `record`: the state written between plies, from
//!   which a stopped build resumes, see [`checkpoint_path`]);
//! * [`stats()`] — counts and longest DTZ of a solved table;
//! * [`deep_check`] — recompute every position of a finished file from its
//!   successors (module `verify`; `tenths`: how far a long pass is);
//! * [`FileValues`] — a file's values a chunk at a time as a probe finds
//!   them, its kept WDL raised by the best capture (module `values`).

mod atomic;
mod builder;
mod cell;
mod cells;
mod checkpoint;
mod level_list;
mod plan;
mod record;
mod seed;
mod seed_pairs;
mod slots;
mod solve;
mod stats;
mod table;
mod tenths;
mod values;
mod verify;

pub use builder::{Event, GenerateError, GenerateOptions, Summary, generate};
pub use checkpoint::checkpoint_path;
pub use plan::{
    Job, ParsePlanFormatError, PlanError, PlanFormat, PlanOptions, jobs, memory_estimate, render,
};
pub use slots::solved_positions;
pub use solve::{Direction, Progress, SolveError, SolveOptions, Unusable, solve};
pub use stats::stats;
pub use table::{Table, TableSet};
pub use values::FileValues;
pub use verify::{DeepReport, DeepStep, MAX_REPORTED, SAMPLE_EVERY, deep_check};
