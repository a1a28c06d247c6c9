//! A bounded cache of decoded DTZ blocks, shared by the files that use it.
//!
//! A read of a stored code decodes its block's symbols from the block's
//! start up to its position. A DTZ probe of the side to move whose DTZ a
//! file does not keep searches one ply and reads the kept DTZ after each
//! quiet move: a dozen reads, each in another block, each decoding tens of
//! symbols, which made decoding half of a hot DTZ probe (KQvKR, see
//! BENCHMARKS.md). A [`DecodedBlocks`] keeps, for each block read twice,
//! where each of its symbols ends; a read of a held block finds its
//! symbol by counting the ends before it instead of decoding. A block's
//! first read decodes up to its position, as a read without the cache
//! does, and leaves a mark; the second decodes the whole block and holds
//! it. So an engine's cold probes, most of them the first read of their
//! block in a large table, pay only for the mark.
//!
//! Only DTZ streams use it: a WDL block is at most 64 bytes, a WDL read
//! decodes a few symbols, and an engine's first WDL probes, each the first
//! touch of its block, would pay for decoding whole blocks.
//!
//! The cache holds at most a given number of bytes for all files together
//! (each block's four bytes a symbol, two for its end and two for it,
//! plus [`SLOT_OVERHEAD`], a mark the overhead alone), in shards of equal
//! bounds with a lock each, so that threads probing different
//! blocks seldom wait for each other; a full shard drops blocks not used
//! since the clock hand last passed them (the CLOCK approximation of least
//! recently used). A block is decoded only after its checksum passed, so a
//! held block is as trustworthy as the file's bytes.

use std::sync::{
    Mutex, MutexGuard,
    atomic::{AtomicU64, Ordering},
};

use rustc_hash::FxHashMap;

/// Shards of a cache; a power of two.
const SHARDS: usize = 16;

/// Bytes a held block costs besides its symbols: its slot, its map entry
/// and its allocation's header, about.
const SLOT_OVERHEAD: usize = 64;

/// A bounded cache of decoded DTZ blocks, shared by the files that use it.
pub struct DecodedBlocks {
    capacity: usize,
    next_file: AtomicU64,
    shards: Box<[Mutex<Shard>]>,
}

/// One lock's share of the blocks.
#[derive(Default)]
struct Shard {
    /// Block key → the block. The held symbols are reached from the map
    /// entry itself: a read's loads that wait on each other (map, block,
    /// symbol) are as few as they can be; marking the block used is a
    /// store, which no load waits for.
    by_key: FxHashMap<u64, Slot>,
    /// The clock: each block's key and whether it was read since the hand
    /// last passed.
    clock: Vec<(u64, bool)>,
    /// The clock hand: the next place an eviction looks at.
    hand: usize,
    bytes: usize,
}

/// A held block, or the mark of a block read once.
struct Slot {
    /// Its place in the clock.
    at: usize,
    /// The block as held ([`DecodedBlock::held`]); `None` for a mark.
    symbols: Option<Box<[u16]>>,
}

impl Slot {
    fn cost(&self) -> usize {
        block_cost(self.symbols.as_ref().map_or(0, |s| s.len() / 2))
    }
}

/// Bytes a block of `symbols` symbols costs the cache.
fn block_cost(symbols: usize) -> usize {
    4 * symbols + SLOT_OVERHEAD
}

/// A whole block's symbols, pushed in order with where each ends (the
/// positions before it and its own), as `decode_whole` gives them to
/// [`DecodedBlocks::symbol_at`].
#[derive(Debug, Default)]
pub(super) struct DecodedBlock {
    ends: Vec<u16>,
    symbols: Vec<u16>,
}

impl DecodedBlock {
    /// An empty block with room for `symbols` symbols.
    pub(super) fn with_capacity(symbols: usize) -> DecodedBlock {
        DecodedBlock {
            ends: Vec::with_capacity(symbols),
            symbols: Vec::with_capacity(symbols),
        }
    }

    /// Append `symbol`, ending at position `end` of the block.
    pub(super) fn push(&mut self, end: u64, symbol: u16) {
        debug_assert!(end <= u64::from(u16::MAX));
        self.ends.push(end as u16);
        self.symbols.push(symbol);
    }

    /// The block as held: every end, then every symbol. A read counts the
    /// ends at or before its offset, reading the ends' cache lines all at
    /// once rather than one after another as a binary search would (held
    /// blocks are read at random, so each line is a likely cache miss).
    fn held(self) -> Box<[u16]> {
        let mut held = Vec::with_capacity(2 * self.ends.len());
        held.extend_from_slice(&self.ends);
        held.extend_from_slice(&self.symbols);
        held.into_boxed_slice()
    }
}

/// In a held block, the symbol holding `offset` and the offset inside it;
/// `None` past the block's last position.
fn find(held: &[u16], offset: u64) -> Option<(u16, u32)> {
    let (ends, symbols) = held.split_at(held.len() / 2);
    // Positions in a block fit in u16: past the last end if not.
    let offset = u16::try_from(offset).ok()?;
    // Counted in u16 (a block holds fewer than 2^16 symbols), so that the
    // compiler counts eight ends an instruction.
    let at = usize::from(
        ends.iter()
            .map(|&end| u16::from(end <= offset))
            .fold(0u16, u16::wrapping_add),
    );
    let found = *symbols.get(at)?;
    let start = at.checked_sub(1).map_or(0, |before| ends[before]);
    Some((found, u32::from(offset - start)))
}

impl DecodedBlocks {
    /// A cache holding at most `capacity` bytes of decoded blocks, a
    /// sixteenth of them in each shard (a bound too small for one block in
    /// a shard keeps nothing).
    pub fn new(capacity: usize) -> DecodedBlocks {
        DecodedBlocks {
            capacity,
            next_file: AtomicU64::new(0),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// The bound, in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of blocks held now.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| lock(s).bytes).sum()
    }

    /// A new identity for a file that joins the cache.
    pub(super) fn register(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// The symbol holding `offset` in `block` of `file`'s DTZ stream and
    /// the offset inside it: found in the held block; on the block's first
    /// read, what `decode_one` gives (a mark is left if it succeeds); on
    /// its second, found in what `decode_whole` gives (every symbol of the
    /// block, in order, with its end), which is then held.
    ///
    /// # Errors
    /// What the decoding returns, or `past_end` if the block ends before
    /// `offset`.
    pub(super) fn symbol_at<E>(
        &self,
        file: u64,
        block: u32,
        offset: u64,
        decode_one: impl FnOnce() -> Result<(u16, u32), E>,
        decode_whole: impl FnOnce() -> Result<DecodedBlock, E>,
        past_end: impl FnOnce() -> E,
    ) -> Result<(u16, u32), E> {
        let key = file << 32 | u64::from(block);
        let shard = &self.shards[shard_of(key)];
        let bound = self.capacity / SHARDS;
        {
            let mut held = lock(shard);
            match held.by_key.get(&key) {
                None => {
                    drop(held);
                    let found = decode_one()?;
                    lock(shard).insert(key, None, bound);
                    return Ok(found);
                }
                Some(slot) => {
                    let at = slot.at;
                    let found = slot.symbols.as_deref().map(|symbols| find(symbols, offset));
                    held.clock[at].1 = true;
                    if let Some(found) = found {
                        return found.ok_or_else(past_end);
                    }
                }
            }
        }
        let symbols = decode_whole()?.held();
        let found = find(&symbols, offset).ok_or_else(past_end)?;
        lock(shard).insert(key, Some(symbols), bound);
        Ok(found)
    }
}

impl std::fmt::Debug for DecodedBlocks {
    /// The bound and the bytes held, not the blocks.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodedBlocks")
            .field("capacity", &self.capacity)
            .field("bytes", &self.bytes())
            .finish()
    }
}

impl Shard {
    /// Hold `symbols` (or a mark) as block `key`, in place of its mark,
    /// dropping blocks until the shard's `bound` holds; nothing changes
    /// if the block is held already (another thread was first).
    fn insert(&mut self, key: u64, symbols: Option<Box<[u16]>>, bound: usize) {
        if let Some(slot) = self.by_key.get(&key) {
            if slot.symbols.is_some() || symbols.is_none() {
                return;
            }
            self.remove(slot.at);
        }
        let cost = block_cost(symbols.as_ref().map_or(0, |s| s.len() / 2));
        if cost > bound {
            return;
        }
        while self.bytes + cost > bound {
            self.evict_one();
        }
        let at = self.clock.len();
        self.by_key.insert(key, Slot { at, symbols });
        self.clock.push((key, false));
        self.bytes += cost;
    }

    /// Drop the first block at or past the hand not used since the hand
    /// last passed it, clearing the used flags it passes.
    fn evict_one(&mut self) {
        loop {
            if self.hand >= self.clock.len() {
                self.hand = 0;
            }
            let (_, used) = &mut self.clock[self.hand];
            if *used {
                *used = false;
                self.hand += 1;
                continue;
            }
            self.remove(self.hand);
            return;
        }
    }

    /// Drop the block (or mark) at place `at` of the clock.
    fn remove(&mut self, at: usize) {
        let (key, _) = self.clock.swap_remove(at);
        let gone = self
            .by_key
            .remove(&key)
            .expect("every key in the clock is held");
        if let Some(&(moved, _)) = self.clock.get(at) {
            self.by_key.get_mut(&moved).expect("held").at = at;
        }
        self.bytes -= gone.cost();
    }
}

/// The shard holding block `key`.
fn shard_of(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize % SHARDS
}

fn lock(shard: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    // Every update leaves the shard consistent, so a poisoned lock is used.
    shard.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// A block of `n` symbols, symbol `k` standing for `k + 1` positions.
    fn block(n: u16) -> DecodedBlock {
        let mut block = DecodedBlock::with_capacity(n.into());
        let mut end = 0;
        for k in 0..n {
            end += u64::from(k) + 1;
            block.push(end, k);
        }
        block
    }

    /// A read of block `b` of `file` (10 symbols), counting each kind of
    /// decoding in `counts` (first reads, whole blocks).
    fn read(
        cache: &DecodedBlocks,
        counts: &Cell<(u32, u32)>,
        file: u64,
        b: u32,
        offset: u64,
    ) -> Result<(u16, u32), ()> {
        let one = || {
            counts.set((counts.get().0 + 1, counts.get().1));
            find(&block(10).held(), offset).ok_or(())
        };
        let whole = || {
            counts.set((counts.get().0, counts.get().1 + 1));
            Ok(block(10))
        };
        cache.symbol_at(file, b, offset, one, whole, || ())
    }

    #[test]
    fn a_block_read_twice_is_held_and_answers_as_decoding_it_does() {
        let cache = DecodedBlocks::new(1 << 20);
        let file = cache.register();
        let counts = Cell::new((0, 0));
        // Symbol 3 covers positions 6..10 of the block.
        assert_eq!(read(&cache, &counts, file, 7, 6), Ok((3, 0)));
        assert_eq!((counts.get(), cache.bytes()), ((1, 0), SLOT_OVERHEAD));
        assert_eq!(read(&cache, &counts, file, 7, 9), Ok((3, 3)));
        assert_eq!((counts.get(), cache.bytes()), ((1, 1), block_cost(10)));
        for (offset, want) in [(0, (0, 0)), (5, (2, 2)), (6, (3, 0)), (54, (9, 9))] {
            assert_eq!(read(&cache, &counts, file, 7, offset), Ok(want));
        }
        assert_eq!(counts.get(), (1, 1), "held: decoded no more");
        assert_eq!(read(&cache, &counts, file, 7, 55), Err(()));
        // Another file's block of the same number is another block.
        let other = cache.register();
        assert_eq!(read(&cache, &counts, other, 7, 1), Ok((1, 0)));
        assert_eq!(counts.get(), (2, 1));
    }

    #[test]
    fn a_decoding_error_is_returned_and_nothing_held() {
        let cache = DecodedBlocks::new(1 << 20);
        let never = || -> Result<DecodedBlock, &str> { unreachable!("a first read") };
        let got = cache.symbol_at(0, 0, 0, || Err("corrupt"), never, || "past");
        assert_eq!((got, cache.bytes()), (Err("corrupt"), 0), "no mark");
        assert_eq!(
            cache.symbol_at(0, 0, 0, || Ok((0, 0)), never, || "past"),
            Ok((0, 0))
        );
        let got = cache.symbol_at(0, 0, 0, || Ok((0, 0)), || Err("corrupt"), || "past");
        assert_eq!(
            (got, cache.bytes()),
            (Err("corrupt"), SLOT_OVERHEAD),
            "the mark only"
        );
        let got = cache.symbol_at(0, 0, 1, || Ok((0, 0)), || Ok(block(10)), || "past");
        assert_eq!((got, cache.bytes()), (Ok((1, 0)), block_cost(10)));
    }

    #[test]
    fn the_bound_holds_and_blocks_used_since_the_hand_passed_stay() {
        let bound = SHARDS * 3 * block_cost(10);
        let cache = DecodedBlocks::new(bound);
        let counts = Cell::new((0, 0));
        for b in 0..20_000 {
            read(&cache, &counts, 0, b / 2 % 997, 0).expect("in the block");
            assert!(cache.bytes() <= bound);
            // Block 0 is read after every read of another: it must stay held.
            read(&cache, &counts, 0, 0, 0).expect("in the block");
        }
        let held = lock(&cache.shards[shard_of(0)]);
        assert!(
            held.by_key[&0].symbols.is_some(),
            "a block read often stays"
        );
        drop(held);
        for shard in cache.shards.iter() {
            let shard = lock(shard);
            assert!(shard.bytes <= bound / SHARDS);
            assert_eq!(
                shard.bytes,
                shard.by_key.values().map(Slot::cost).sum::<usize>()
            );
            assert_eq!(shard.by_key.len(), shard.clock.len());
            for (at, (key, _)) in shard.clock.iter().enumerate() {
                assert_eq!(shard.by_key[key].at, at);
            }
        }
    }

    #[test]
    fn a_cache_too_small_for_a_block_keeps_nothing_and_still_answers() {
        let bound = SHARDS * block_cost(10) - 1;
        let cache = DecodedBlocks::new(bound);
        let counts = Cell::new((0, 0));
        // A block too large is never held: its reads take turns to leave
        // a mark and to decode it whole.
        for _ in 0..3 {
            assert_eq!(read(&cache, &counts, 0, 1, 3), Ok((2, 0)));
        }
        assert_eq!((counts.get(), cache.bytes()), ((2, 1), SLOT_OVERHEAD));
        assert_eq!(cache.capacity(), bound);
        assert_eq!(
            format!("{cache:?}"),
            format!("DecodedBlocks {{ capacity: {bound}, bytes: {SLOT_OVERHEAD} }}")
        );
    }
}
