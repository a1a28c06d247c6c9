//! libdtz50: Fathom's C interface over dtz50 tables.
//!
//! Most chess engines are written in C or C++ and probe Syzygy tables
//! through Fathom (`tbprobe.h`). This crate builds `libdtz50` (a shared and
//! a static library) whose header, `include/tbprobe.h`, declares Fathom's
//! public interface with the same names, argument lists and meanings, so an
//! engine written against Fathom compiles unchanged and links against
//! `libdtz50` instead. What differs is what dtz50 knows better: DTZ is
//! exact to the ply, and root probes apply the halfmove clock exactly. The
//! `dtz50_` functions add what Fathom cannot say: the verdict with a given
//! clock and its margin, and the rule the tables were built for.
//!
//! The parts:
//!
//! * `ffi` — every exported symbol: thin shims that check pointers, catch
//!   panics and call the safe modules below (the one module with `unsafe`);
//! * `registry` — the tables set by `tb_init` and released by `tb_free`,
//!   the only global state, behind a lock that probes share;
//! * `tables` — several directories joined into one store of tables;
//! * `probe` — the probes themselves, Fathom's result encodings and ranks;
//! * `position` — Fathom's bitboards to a position, moves back to Fathom's
//!   encodings;
//! * `attacks` — Fathom's helper API (attack sets, bit scans).

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod attacks;
#[allow(unsafe_code)] // The one exception: the C ABI (see its module doc).
mod ffi;
mod position;
mod probe;
mod registry;
mod tables;
