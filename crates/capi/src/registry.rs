//! The tables `tb_init` sets and `tb_free` releases: the library's only
//! global state, as in Fathom.
//!
//! Probes share a read lock for the length of the probe, so probing is
//! thread-safe and needs no lock of its own; `tb_init` and `tb_free` take
//! the write lock, so they wait for probes under way and none sees half a
//! change. A panic while the lock is held (there is none to expect) does
//! not make the tables unusable: the lock's poisoning is ignored, as the
//! tables are never left half-changed.

use std::sync::{Arc, PoisonError, RwLock};

use dtz50::{Rule, format::BlockCache};

use crate::tables::Tables;

/// The current tables, `None` before `tb_init` and after `tb_free`.
static CURRENT: RwLock<Option<Tables>> = RwLock::new(None);

/// Replace the current tables by those in the path list `paths`, for
/// `rule` (none if no directory of the list can be read), keeping decoded
/// blocks in `cache` if given (see [`Tables::open`]). Returns the most
/// pieces of any table found.
pub fn init(paths: &str, rule: Rule, cache: Option<Arc<BlockCache>>) -> u32 {
    let tables = Some(Tables::open(paths, rule, cache)).filter(|t| !t.is_empty());
    let largest = tables.as_ref().map_or(0, Tables::largest);
    *CURRENT.write().unwrap_or_else(PoisonError::into_inner) = tables;
    largest
}

/// Release the current tables (their memory maps and cached blocks).
pub fn free() {
    *CURRENT.write().unwrap_or_else(PoisonError::into_inner) = None;
}

/// `probe` on the current tables, or `fail` if there are none.
pub fn with<T>(fail: T, probe: impl FnOnce(&Tables) -> T) -> T {
    let current = CURRENT.read().unwrap_or_else(PoisonError::into_inner);
    current.as_ref().map_or(fail, probe)
}
