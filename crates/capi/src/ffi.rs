//! The C ABI: every symbol `include/tbprobe.h` declares, and the only
//! `unsafe` code of the crate.
//!
//! Each function here is a shim: it reads its pointer arguments (the
//! unsafe part, each with the contract that makes it sound), runs the safe
//! code of the other modules inside [`guard`] so that no panic crosses into
//! C, and writes what it got back. Null pointers get Fathom's failure
//! values: `tb_init(NULL)` is `false`, `tb_probe_root` accepts a null
//! `results` as Fathom does, and the functions that fill a structure return
//! 0 (`false`) without one. No function here keeps a pointer it was given.
//!
//! `#[unsafe(no_mangle)]` is sound here because every exported name is
//! unique in the library and its signature is the one `tbprobe.h`
//! declares (the C tests compile against the header and call each one).

use std::{
    ffi::{CStr, c_char, c_int, c_uint},
    panic::{AssertUnwindSafe, catch_unwind},
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
};

use dtz50::{Outcome, Rule, format::BlockCache};

use crate::{
    attacks,
    position::{Bitboards, State},
    probe::{self, RootMove, TB_RESULT_FAILED},
    registry,
};

/// `TB_MAX_MOVES`: room for every legal move of a position, and one more.
pub const TB_MAX_MOVES: usize = 192 + 1;
/// `TB_MAX_PLY`: length of a root move's principal variation.
pub const TB_MAX_PLY: usize = 256;

/// `TB_LARGEST`: the most pieces of any table `tb_init` found, 0 if none
/// (or before `tb_init`, after `tb_free`). C reads it as `unsigned`, which
/// has the layout of this atomic.
#[unsafe(no_mangle)]
pub static TB_LARGEST: AtomicU32 = AtomicU32::new(0);

/// `struct TbRootMove`.
#[repr(C)]
pub struct TbRootMove {
    /// `move`: the move, as `TbMove`.
    pub mv: u16,
    /// `pv`: the principal variation; here only the move itself.
    pub pv: [u16; TB_MAX_PLY],
    /// `pvSize`: moves in `pv` (1).
    pub pv_size: c_uint,
    /// `tbScore`.
    pub tb_score: i32,
    /// `tbRank`.
    pub tb_rank: i32,
}

/// `struct TbRootMoves`.
#[repr(C)]
pub struct TbRootMoves {
    /// `size`: number of moves.
    pub size: c_uint,
    /// `moves`.
    pub moves: [TbRootMove; TB_MAX_MOVES],
}

// The layout C sees (tests/c checks the same numbers with sizeof).
const _: () = assert!(size_of::<TbRootMove>() == 528);
const _: () = assert!(size_of::<TbRootMoves>() == 4 + 528 * TB_MAX_MOVES);

/// `struct Dtz50Verdict`: a position's value with a given halfmove clock.
#[repr(C)]
pub struct Dtz50Verdict {
    /// WDL with the clock at zero, -2..=2.
    pub wdl: c_int,
    /// Exact DTZ in plies.
    pub dtz: c_int,
    /// The halfmove clock applied.
    pub halfmove: c_uint,
    /// The rule applied: 50, 75 or 0 (none).
    pub rule: c_int,
    /// The result with the clock: 1 win, 0 draw, -1 loss.
    pub outcome: c_int,
    /// Plies to spare for a surviving decisive result, -1 otherwise.
    pub margin: c_int,
}

/// Run `f`, or return `fail` if it panics: no panic unwinds into C.
fn guard<T>(fail: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fail)
}

/// The eight bitboards of a position.
#[allow(clippy::too_many_arguments)]
fn bitboards(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
) -> Bitboards {
    Bitboards {
        white,
        black,
        kings,
        queens,
        rooks,
        bishops,
        knights,
        pawns,
    }
}

/// A rule by its C code (50, 75, 0 for none).
fn rule_of(code: c_uint) -> Option<Rule> {
    match code {
        50 => Some(Rule::Fifty),
        75 => Some(Rule::SeventyFive),
        0 => Some(Rule::None),
        _ => None,
    }
}

/// `tb_init` for `rule`: replace the tables by those of the path list.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
unsafe fn init(path: *const c_char, rule: Rule, cache: Option<Arc<BlockCache>>) -> bool {
    guard(false, || {
        registry::free();
        TB_LARGEST.store(0, Ordering::Relaxed);
        if path.is_null() {
            return false;
        }
        // Safety: not null, and NUL-terminated by the caller's contract;
        // the bytes are copied out before returning.
        let path = unsafe { CStr::from_ptr(path) };
        let Ok(path) = path.to_str() else {
            return false;
        };
        if path == "<empty>" {
            return true;
        }
        TB_LARGEST.store(registry::init(path, rule, cache), Ordering::Relaxed);
        true
    })
}

/// Fathom's `tb_init`: open the rule-50 tables of the directories in
/// `path` (separated by `:`, `;` on Windows). `true` unless `path` is null
/// or not UTF-8; sets `TB_LARGEST` (0 if no table was found). An empty
/// path or `"<empty>"` releases the tables.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_init(path: *const c_char) -> bool {
    // Safety: the caller's contract is `init`'s.
    unsafe { init(path, Rule::Fifty, None) }
}

/// Fathom's internal name of `tb_init`, for headers that call it.
///
/// # Safety
/// As [`tb_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tb_init_impl(path: *const c_char) -> bool {
    // Safety: the caller's contract is `init`'s.
    unsafe { init(path, Rule::Fifty, None) }
}

/// `dtz50_init_rule`: as `tb_init`, for tables of `rule` (50, 75, or 0 for
/// none); `false` for another rule.
///
/// # Safety
/// As [`tb_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dtz50_init_rule(path: *const c_char, rule: c_uint) -> bool {
    let Some(rule) = rule_of(rule) else {
        return false;
    };
    // Safety: the caller's contract is `init`'s.
    unsafe { init(path, rule, None) }
}

/// `dtz50_init_cached`: as `dtz50_init_rule`, reading the files with
/// positional reads (a file changed under the process gives failures,
/// never a crash) and keeping at most `cache_bytes` bytes of decoded
/// blocks, shared by all directories; `false` for another rule or a bound
/// of 0.
///
/// # Safety
/// As [`tb_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dtz50_init_cached(
    path: *const c_char,
    rule: c_uint,
    cache_bytes: usize,
) -> bool {
    let Some(rule) = rule_of(rule) else {
        return false;
    };
    if cache_bytes == 0 {
        return false;
    }
    let cache = Arc::new(BlockCache::new(cache_bytes));
    // Safety: the caller's contract is `init`'s.
    unsafe { init(path, rule, Some(cache)) }
}

/// `dtz50_cache_bound`: the bound in bytes on the page cache of the open
/// tables; 0 if they are memory-mapped (`tb_init`, `dtz50_init_rule`) or
/// none are open.
#[unsafe(no_mangle)]
pub extern "C" fn dtz50_cache_bound() -> usize {
    guard(0, || probe::cache_bytes().unwrap_or(0))
}

/// Fathom's `tb_free`: release the tables; `TB_LARGEST` becomes 0.
#[unsafe(no_mangle)]
pub extern "C" fn tb_free() {
    guard((), || {
        registry::free();
        TB_LARGEST.store(0, Ordering::Relaxed);
    });
}

/// `dtz50_rule`: the rule of the tables (50, 75, 0 for none), -1 without
/// tables.
#[unsafe(no_mangle)]
pub extern "C" fn dtz50_rule() -> c_int {
    guard(-1, || probe::rule().map_or(-1, |r| c_int::from(r.code())))
}

/// Fathom's `tb_probe_wdl_impl` (called by the header's `tb_probe_wdl`,
/// which refuses a non-zero clock or castling rights first).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn tb_probe_wdl_impl(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    ep: c_uint,
    turn: bool,
) -> c_uint {
    let bb = bitboards(white, black, kings, queens, rooks, bishops, knights, pawns);
    guard(TB_RESULT_FAILED, || probe::wdl(&bb, ep, turn))
}

/// Fathom's `tb_probe_root_impl` (called by the header's `tb_probe_root`,
/// which refuses castling rights first). With `results` not null, writes a
/// result per legal move, best first, then `TB_RESULT_FAILED`.
///
/// # Safety
/// `results` is null or points to `TB_MAX_MOVES` writable `unsigned`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tb_probe_root_impl(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: c_uint,
    ep: c_uint,
    turn: bool,
    results: *mut c_uint,
) -> c_uint {
    let bb = bitboards(white, black, kings, queens, rooks, bishops, knights, pawns);
    let state = State {
        rule50,
        ep,
        white_to_move: turn,
    };
    let (code, moves) = guard((TB_RESULT_FAILED, Vec::new()), || probe::root(&bb, state));
    if !results.is_null() {
        let terminated = moves.iter().chain([&TB_RESULT_FAILED]);
        for (i, &res) in terminated.take(TB_MAX_MOVES).enumerate() {
            // Safety: `results` has TB_MAX_MOVES entries by the caller's
            // contract, and i < TB_MAX_MOVES.
            unsafe { results.add(i).write(res) };
        }
    }
    code
}

/// Fill `out` with `moves` (1), or empty it (0).
///
/// # Safety
/// `out` is null or points to a writable `struct TbRootMoves`.
unsafe fn fill_root_moves(out: *mut TbRootMoves, moves: Option<Vec<RootMove>>) -> c_int {
    if out.is_null() {
        return 0;
    }
    let Some(moves) = moves else {
        // Safety: `out` is a valid TbRootMoves by the caller's contract.
        unsafe { (*out).size = 0 };
        return 0;
    };
    let n = moves.len().min(TB_MAX_MOVES);
    for (i, m) in moves.iter().take(n).enumerate() {
        // Safety: `out` is a valid TbRootMoves by the caller's contract and
        // i < TB_MAX_MOVES; fields are written through the raw pointer, no
        // reference to memory C may have left uninitialised is made.
        unsafe {
            let slot = &raw mut (*out).moves[i];
            (*slot).mv = m.mv;
            (*slot).pv[0] = m.mv;
            (*slot).pv_size = 1;
            (*slot).tb_score = m.score;
            (*slot).tb_rank = m.rank;
        }
    }
    // Safety: as above; n <= TB_MAX_MOVES fits in c_uint.
    unsafe { (*out).size = n as c_uint };
    1
}

/// Fathom's `tb_probe_root_dtz`: rank and score every legal move from its
/// exact DTZ and the clock. 1 if every probe succeeded, else 0 (also for
/// castling rights or a null `results`).
///
/// # Safety
/// `results` is null or points to a writable `struct TbRootMoves`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tb_probe_root_dtz(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: c_uint,
    castling: c_uint,
    ep: c_uint,
    turn: bool,
    has_repeated: bool,
    use_rule50: bool,
    results: *mut TbRootMoves,
) -> c_int {
    let bb = bitboards(white, black, kings, queens, rooks, bishops, knights, pawns);
    let state = State {
        rule50,
        ep,
        white_to_move: turn,
    };
    let moves = guard(None, || {
        (castling == 0)
            .then(|| probe::root_dtz(&bb, state, has_repeated, use_rule50))
            .flatten()
    });
    // Safety: the caller's contract is `fill_root_moves`'s.
    unsafe { fill_root_moves(results, moves) }
}

/// Fathom's `tb_probe_root_wdl`: rank and score every legal move by its WDL
/// with the clock applied. 1 if every probe succeeded, else 0.
///
/// # Safety
/// `results` is null or points to a writable `struct TbRootMoves`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tb_probe_root_wdl(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: c_uint,
    castling: c_uint,
    ep: c_uint,
    turn: bool,
    use_rule50: bool,
    results: *mut TbRootMoves,
) -> c_int {
    let bb = bitboards(white, black, kings, queens, rooks, bishops, knights, pawns);
    let state = State {
        rule50,
        ep,
        white_to_move: turn,
    };
    let moves = guard(None, || {
        (castling == 0)
            .then(|| probe::root_wdl(&bb, state, use_rule50))
            .flatten()
    });
    // Safety: the caller's contract is `fill_root_moves`'s.
    unsafe { fill_root_moves(results, moves) }
}

/// `dtz50_probe`: the position's value with the halfmove clock `rule50`.
/// `true` and `*verdict` filled on success; `false` (and `*verdict`
/// untouched) for castling rights, a bad position, a missing table or a
/// null `verdict`.
///
/// # Safety
/// `verdict` is null or points to a writable `struct Dtz50Verdict`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dtz50_probe(
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: c_uint,
    castling: c_uint,
    ep: c_uint,
    turn: bool,
    verdict: *mut Dtz50Verdict,
) -> bool {
    if verdict.is_null() || castling != 0 {
        return false;
    }
    let bb = bitboards(white, black, kings, queens, rooks, bishops, knights, pawns);
    let state = State {
        rule50,
        ep,
        white_to_move: turn,
    };
    let Some(v) = guard(None, || probe::verdict(&bb, state)) else {
        return false;
    };
    let out = Dtz50Verdict {
        wdl: c_int::from(v.wdl.to_i8()),
        dtz: c_int::from(v.dtz.0),
        halfmove: v.halfmove,
        rule: c_int::from(v.rule.code()),
        outcome: match v.outcome {
            Outcome::Win => 1,
            Outcome::Draw => 0,
            Outcome::Loss => -1,
        },
        margin: v
            .margin
            .map_or(-1, |m| c_int::try_from(m).unwrap_or(c_int::MAX)),
    };
    // Safety: `verdict` is not null and writable by the caller's contract.
    unsafe { verdict.write(out) };
    true
}

/// Fathom's `tb_pop_count`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_pop_count(bb: u64) -> c_uint {
    attacks::pop_count(bb)
}

/// Fathom's `tb_lsb` (64 for an empty board).
#[unsafe(no_mangle)]
pub extern "C" fn tb_lsb(bb: u64) -> c_uint {
    attacks::lsb(bb)
}

/// Fathom's `tb_pop_lsb`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_pop_lsb(bb: u64) -> u64 {
    attacks::pop_lsb(bb)
}

/// Fathom's `tb_king_attacks`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_king_attacks(square: c_uint) -> u64 {
    attacks::king(square)
}

/// Fathom's `tb_queen_attacks`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_queen_attacks(square: c_uint, occ: u64) -> u64 {
    attacks::queen(square, occ)
}

/// Fathom's `tb_rook_attacks`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_rook_attacks(square: c_uint, occ: u64) -> u64 {
    attacks::rook(square, occ)
}

/// Fathom's `tb_bishop_attacks`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_bishop_attacks(square: c_uint, occ: u64) -> u64 {
    attacks::bishop(square, occ)
}

/// Fathom's `tb_knight_attacks`.
#[unsafe(no_mangle)]
pub extern "C" fn tb_knight_attacks(square: c_uint) -> u64 {
    attacks::knight(square)
}

/// Fathom's `tb_pawn_attacks`: a white pawn's attacks if `color`, else a
/// black pawn's.
#[unsafe(no_mangle)]
pub extern "C" fn tb_pawn_attacks(square: c_uint, color: bool) -> u64 {
    attacks::pawn(square, color)
}
