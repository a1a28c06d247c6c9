//! Memory maps, and a prefetch hint for reading them: the one home of
//! `unsafe` in dtz50.
//!
//! The solver keeps one byte per position and side to move (see the
//! generator's `cells` module). The bytes live in a [`WorkArray`]: an anonymous
//! memory map by default, or a map of a temporary file (unlinked at once, so
//! nothing is left behind) when the index space should be paged to disk
//! rather than held in RAM. Either way the array is seen as `[AtomicU8]`,
//! so the parallel passes can write cells from several threads without
//! locks; on x86-64 and AArch64 relaxed atomic loads and stores compile to
//! plain moves, so this costs nothing.
//!
//! Table files are mapped read-only through [`map_file`]. A gather over
//! the cells in scattered order (the writer reading a large table in a
//! file's order of pieces) asks for the next reads early with
//! [`prefetch`].

use std::{
    fs::{File, OpenOptions},
    io,
    path::Path,
    sync::atomic::AtomicU8,
};

use memmap2::{Mmap, MmapMut, MmapOptions};

/// A zero-initialised array of `AtomicU8` in a memory map.
#[derive(Debug)]
pub(crate) struct WorkArray {
    map: MmapMut,
    len: usize,
}

impl WorkArray {
    /// `len` cells in anonymous memory.
    ///
    /// # Errors
    /// If the kernel refuses the mapping.
    pub fn anonymous(len: usize) -> io::Result<WorkArray> {
        let map = MmapOptions::new().len(byte_len(len)).map_anon()?;
        Ok(WorkArray { map, len })
    }

    /// Ask for 2 MiB pages (transparent huge pages) for an anonymous
    /// array read all over at random, so that its addresses fit the TLB:
    /// the deep check's successor loads on 5-piece tables take 7 % less
    /// time with them. Only a hint, which a kernel without them refuses;
    /// the solver does not ask (its 5-piece builds took 2 % longer).
    pub fn prefer_huge_pages(&self) {
        #[cfg(target_os = "linux")]
        let _ = self.map.advise(memmap2::Advice::HugePage);
    }

    /// `len` cells in a temporary file in `dir`, unlinked immediately, so
    /// that the kernel can page the array to disk.
    ///
    /// # Errors
    /// If the file cannot be created, sized or mapped.
    pub fn file_backed(dir: &Path, len: usize) -> io::Result<WorkArray> {
        let bytes = byte_len(len);
        let path = dir.join(format!(".dtz50-work-{}-{len}", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        // Reserve the blocks, not just the length: a sparse file on a disk
        // that fills up would fault (SIGBUS) when a page is first written.
        // File systems without fallocate get the plain length.
        match rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, bytes as u64) {
            Err(e) if io::Error::from(e).kind() == io::ErrorKind::Unsupported => {
                file.set_len(bytes as u64)?;
            }
            result => result?,
        }
        // Safety: the file was created by us and unlinked, so no other
        // process can modify or truncate it while it is mapped.
        let map = unsafe { MmapOptions::new().len(bytes).map_mut(&file)? };
        Ok(WorkArray { map, len })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[AtomicU8] {
        let ptr = self.map.as_ptr().cast::<AtomicU8>();
        // Safety: the map is at least `len` bytes long and zero-initialised
        // (AtomicU8 has the size and alignment of u8). It lives as long as
        // `self`, and all access through the returned slice is atomic, so
        // sharing it between threads is sound.
        unsafe { std::slice::from_raw_parts(ptr, self.len) }
    }

    /// The bytes, for filling while nothing else can see them (a restored
    /// checkpoint).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }
}

/// Ask the processor to start loading the cache line holding `item`, for
/// a read soon after: the writer's gathers over a large table's cells
/// wait on memory one read at a time otherwise. Does nothing on other
/// architectures.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // Safety: a prefetch is only a hint: it reads nothing the program can
    // see and cannot fault, and the address comes from a live reference.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (item as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Bytes free for an unprivileged user on the file system holding `dir`.
///
/// # Errors
/// If `dir` cannot be examined.
pub(crate) fn available_space(dir: &Path) -> io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Maps cannot be empty.
fn byte_len(len: usize) -> usize {
    len.max(1)
}

/// Map a table file read-only.
///
/// # Errors
/// If the file cannot be opened or mapped.
pub(crate) fn map_file(path: &Path) -> io::Result<Mmap> {
    let file = File::open(path)?;
    // Safety: table files are written once, atomically (write, fsync,
    // rename), and never modified in place by dtz50. Another process
    // truncating a mapped file could raise SIGBUS; readers check the size
    // against the header before touching any section, and `verify` reads
    // every byte, so a file truncated *before* mapping is an error, not a
    // crash.
    unsafe { Mmap::map(&file) }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    #[test]
    fn arrays_start_at_zero_and_keep_writes() {
        for array in [
            WorkArray::anonymous(1000).expect("anonymous map"),
            WorkArray::file_backed(&std::env::temp_dir(), 1000).expect("file map"),
        ] {
            assert_eq!(array.bytes().len(), 1000);
            assert!(array.bytes().iter().all(|c| c.load(Ordering::Relaxed) == 0));
            array.bytes()[999].store(207, Ordering::Relaxed);
            assert_eq!(array.bytes()[999].load(Ordering::Relaxed), 207);
        }
    }
}
