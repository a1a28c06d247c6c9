//! A bounded cache of file pages, shared by the files that use it.
//!
//! A [`TableFile`](super::TableFile) over a memory map reads the kernel's
//! pages and keeps nothing. Over positional reads (`pread`), every probe
//! would be a few system calls; a [`BlockCache`] keeps the 4 KiB pages
//! those reads touched, at most a given number of bytes for all files
//! together, dropping the least recently used page first. Long-running
//! processes (`probe --batch`, a server, the C API's cached mode) use it,
//! so that their memory stays bounded whatever tables they read. Pages are
//! only bytes: each block, count and index chunk is checked against its
//! checksum the first time the file reads it, cached or not.

use std::{
    collections::{BTreeMap, HashMap},
    io,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use super::source::Source;

/// Bytes per cached page.
const PAGE: u64 = 4096;

/// A bounded cache of file pages, shared by the files that use it.
#[derive(Debug)]
pub struct BlockCache {
    capacity: usize,
    next_file: AtomicU64,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    pages: HashMap<Key, (Arc<[u8]>, u64)>,
    /// Last use → page, oldest first.
    by_use: BTreeMap<u64, Key>,
    bytes: usize,
    tick: u64,
}

/// A page of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    file: u64,
    page: u64,
}

impl BlockCache {
    /// A cache holding at most `capacity` bytes of pages (with a capacity
    /// under one page, nothing is kept).
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

    /// Bytes of pages held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// A new identity for a file that joins the cache.
    pub(super) fn register(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Every update leaves the maps consistent, so a poisoned lock is used.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `len` bytes at `offset` of `file`, read from `source` a page at a
    /// time where the cache does not hold them.
    pub(super) fn read<S: Source + ?Sized>(
        &self,
        file: u64,
        source: &S,
        offset: u64,
        len: usize,
    ) -> io::Result<Vec<u8>> {
        let end = offset + len as u64;
        if end > source.size() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if len as u64 > 4 * PAGE {
            return source.read_at(offset, len).map(|b| b.into_owned());
        }
        let mut out = Vec::with_capacity(len);
        let mut at = offset;
        while at < end {
            let key = Key {
                file,
                page: at / PAGE,
            };
            let page = match self.get(key) {
                Some(page) => page,
                None => {
                    let start = key.page * PAGE;
                    let n = PAGE.min(source.size() - start) as usize;
                    let page: Arc<[u8]> = source.read_at(start, n)?.into_owned().into();
                    self.insert(key, page.clone());
                    page
                }
            };
            let from = (at - key.page * PAGE) as usize;
            let to = ((end - key.page * PAGE) as usize).min(page.len());
            out.extend_from_slice(&page[from..to]);
            at = key.page * PAGE + to as u64;
        }
        Ok(out)
    }

    fn get(&self, key: Key) -> Option<Arc<[u8]>> {
        let mut inner = self.lock();
        inner.tick += 1;
        let tick = inner.tick;
        let (page, used) = inner.pages.get_mut(&key)?;
        let page = page.clone();
        let old = std::mem::replace(used, tick);
        inner.by_use.remove(&old);
        inner.by_use.insert(tick, key);
        Some(page)
    }

    fn insert(&self, key: Key, page: Arc<[u8]>) {
        let size = page.len();
        if size > self.capacity {
            return;
        }
        let mut inner = self.lock();
        if let Some((old, used)) = inner.pages.remove(&key) {
            inner.by_use.remove(&used);
            inner.bytes -= old.len();
        }
        while inner.bytes + size > self.capacity {
            let Some((_, oldest)) = inner.by_use.pop_first() else {
                break;
            };
            if let Some((gone, _)) = inner.pages.remove(&oldest) {
                inner.bytes -= gone.len();
            }
        }
        inner.tick += 1;
        let tick = inner.tick;
        inner.by_use.insert(tick, key);
        inner.pages.insert(key, (page, tick));
        inner.bytes += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that count their reads.
    struct Counted(Vec<u8>, AtomicU64);

    impl Source for Counted {
        fn size(&self) -> u64 {
            self.0.len() as u64
        }

        fn read_at(&self, offset: u64, len: usize) -> io::Result<std::borrow::Cow<'_, [u8]>> {
            self.1.fetch_add(1, Ordering::Relaxed);
            self.0.read_at(offset, len)
        }
    }

    #[test]
    fn the_cache_keeps_at_most_its_capacity_dropping_the_least_recent() {
        let data: Vec<u8> = (0..5 * PAGE).map(|i| (i % 251) as u8).collect();
        let source = Counted(data.clone(), AtomicU64::new(0));
        let cache = BlockCache::new(2 * PAGE as usize);
        let file = cache.register();
        let reads = || source.1.load(Ordering::Relaxed);
        let get = |offset: u64, len: usize| cache.read(file, &source, offset, len).expect("reads");
        assert_eq!(get(10, 100), data[10..110]);
        assert_eq!(
            get(PAGE - 5, 10),
            data[PAGE as usize - 5..PAGE as usize + 5]
        );
        assert_eq!((reads(), cache.bytes()), (2, 2 * PAGE as usize));
        assert_eq!(get(0, 1), data[..1], "kept");
        assert_eq!(reads(), 2);
        assert_eq!(get(3 * PAGE, 1), data[3 * PAGE as usize..][..1]);
        assert_eq!(cache.bytes(), 2 * PAGE as usize, "page 1 dropped");
        assert_eq!(get(0, 1), data[..1]);
        assert_eq!(reads(), 3);
        assert_eq!(get(PAGE, 1), data[PAGE as usize..][..1]);
        assert_eq!(reads(), 4, "page 1 was read again");
        assert!(cache.read(file, &source, 5 * PAGE - 1, 2).is_err());
    }
}
