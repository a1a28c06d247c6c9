//! Decoded blocks kept for later probes.
//!
//! A [`TableFile`](super::TableFile) decodes a block on its first use and
//! keeps it. By default each file keeps every block it decoded for as long
//! as it is open (fast, and what an engine with memory-mapped files has
//! today). A [`BlockCache`] instead bounds what is kept: one cache shared by
//! any number of files, holding at most a given number of bytes of decoded
//! blocks and dropping the least recently used first. Long-running
//! processes (`probe --batch`, a server) use it, so that their memory does
//! not grow toward the size of the tables they read.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
};

use super::Section;

/// A bounded cache of decoded blocks, shared by the files that use it.
#[derive(Debug)]
pub struct BlockCache {
    capacity: usize,
    next_file: AtomicU64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    blocks: HashMap<Key, Entry>,
    bytes: usize,
    tick: u64,
}

/// A block of one section of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    file: u64,
    section: Section,
    block: usize,
}

#[derive(Debug)]
struct Entry {
    codes: Decoded,
    used: u64,
}

/// A decoded block of either width.
#[derive(Debug)]
pub(super) enum Decoded {
    Bytes(Box<[u8]>),
    Words(Box<[u16]>),
}

impl Decoded {
    fn bytes(&self) -> usize {
        match self {
            Decoded::Bytes(b) => b.len(),
            Decoded::Words(w) => 2 * w.len(),
        }
    }
}

/// The code types blocks decode to (`u8` for WDL, `u16` for DTZ).
pub(super) trait Code: Copy + Default + Send + Sync + 'static {
    /// Wrap decoded codes for the shared cache.
    fn wrap(codes: Box<[Self]>) -> Decoded;
    /// The codes of a cached block, if it holds this type.
    fn unwrap(decoded: &Decoded) -> Option<&[Self]>;
}

impl Code for u8 {
    fn wrap(codes: Box<[u8]>) -> Decoded {
        Decoded::Bytes(codes)
    }

    fn unwrap(decoded: &Decoded) -> Option<&[u8]> {
        match decoded {
            Decoded::Bytes(b) => Some(b),
            Decoded::Words(_) => None,
        }
    }
}

impl Code for u16 {
    fn wrap(codes: Box<[u16]>) -> Decoded {
        Decoded::Words(codes)
    }

    fn unwrap(decoded: &Decoded) -> Option<&[u16]> {
        match decoded {
            Decoded::Words(w) => Some(w),
            Decoded::Bytes(_) => None,
        }
    }
}

impl BlockCache {
    /// A cache holding at most `capacity` bytes of decoded blocks (a block
    /// larger than that is decoded for each use and not kept).
    pub fn new(capacity: usize) -> BlockCache {
        BlockCache {
            capacity,
            next_file: AtomicU64::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The bound, in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of decoded blocks held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// A new identity for a file that joins the cache.
    pub(super) fn register(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves a consistent map (every
        // update is a single insert or remove), so a poisoned lock is used.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `read` applied to the cached block; `read` back if it is not cached.
    fn get<T: Code, R, F: FnOnce(&[T]) -> R>(&self, key: Key, read: F) -> Result<R, F> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        match inner.blocks.get_mut(&key) {
            Some(entry) => {
                entry.used = tick;
                match T::unwrap(&entry.codes) {
                    Some(codes) => Ok(read(codes)),
                    None => Err(read),
                }
            }
            None => Err(read),
        }
    }

    /// Keep a decoded block, dropping the least recently used ones to stay
    /// within the bound.
    fn insert<T: Code>(&self, key: Key, codes: Box<[T]>) {
        let codes = T::wrap(codes);
        let size = codes.bytes();
        if size > self.capacity {
            return;
        }
        let mut inner = self.lock();
        while inner.bytes + size > self.capacity {
            let Some((&oldest, _)) = inner.blocks.iter().min_by_key(|(_, e)| e.used) else {
                break;
            };
            if let Some(gone) = inner.blocks.remove(&oldest) {
                inner.bytes -= gone.codes.bytes();
            }
        }
        inner.tick += 1;
        let used = inner.tick;
        if let Some(old) = inner.blocks.insert(key, Entry { codes, used }) {
            inner.bytes -= old.codes.bytes();
        }
        inner.bytes += size;
    }
}

/// How one section of one file keeps its decoded blocks.
#[derive(Debug)]
pub(super) enum Blocks<T> {
    /// Every block, once decoded, for as long as the file is open.
    Kept(Vec<OnceLock<Box<[T]>>>),
    /// In a shared, bounded cache.
    Shared {
        cache: Arc<BlockCache>,
        file: u64,
        section: Section,
    },
}

impl<T: Code> Blocks<T> {
    /// The store of one section of `count` blocks: in `cache` if given,
    /// else every block kept.
    pub(super) fn new(count: usize, section: Section, cache: Option<&Arc<BlockCache>>) -> Self {
        match cache {
            None => Blocks::Kept((0..count).map(|_| OnceLock::new()).collect()),
            Some(cache) => Blocks::Shared {
                cache: cache.clone(),
                file: cache.register(),
                section,
            },
        }
    }

    /// Apply `read` to block `block`, decoding it with `decode` if it is not
    /// kept.
    pub(super) fn with<R, E>(
        &self,
        block: usize,
        decode: impl FnOnce() -> Result<Vec<T>, E>,
        read: impl FnOnce(&[T]) -> R,
    ) -> Result<R, E> {
        match self {
            Blocks::Kept(slots) => {
                let slot = &slots[block];
                if let Some(codes) = slot.get() {
                    return Ok(read(codes));
                }
                let codes = decode()?.into_boxed_slice();
                Ok(read(slot.get_or_init(|| codes)))
            }
            Blocks::Shared {
                cache,
                file,
                section,
            } => {
                let key = Key {
                    file: *file,
                    section: *section,
                    block,
                };
                match cache.get(key, read) {
                    Ok(value) => Ok(value),
                    Err(read) => {
                        let codes = decode()?.into_boxed_slice();
                        let value = read(&codes);
                        cache.insert(key, codes);
                        Ok(value)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_at_most_its_capacity_dropping_the_least_recent() {
        let cache = Arc::new(BlockCache::new(100));
        let file = cache.register();
        let blocks: Blocks<u8> = Blocks::Shared {
            cache: cache.clone(),
            file,
            section: Section::Wdl,
        };
        let decodes = std::cell::Cell::new(0);
        let get = |block: usize| {
            blocks
                .with(
                    block,
                    || {
                        decodes.set(decodes.get() + 1);
                        Ok::<_, ()>(vec![block as u8; 40])
                    },
                    |codes| codes[39],
                )
                .expect("decodes")
        };
        assert_eq!(get(1), 1);
        assert_eq!(get(2), 2);
        assert_eq!((decodes.get(), cache.bytes()), (2, 80));
        assert_eq!(get(1), 1, "kept");
        assert_eq!(decodes.get(), 2);
        assert_eq!(get(3), 3, "2 is dropped, the least recently used");
        assert_eq!(cache.bytes(), 80);
        assert_eq!(get(1), 1);
        assert_eq!(decodes.get(), 3);
        assert_eq!(get(2), 2);
        assert_eq!(decodes.get(), 4, "2 was decoded again");
        assert!(cache.bytes() <= cache.capacity());
    }
}
