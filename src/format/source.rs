//! Where a table file's bytes come from: memory (a `Vec` in tests, a
//! memory map for engines) or positional reads of an open file.

use std::{borrow::Cow, fs::File, io, path::Path};

/// Where a table file's bytes come from.
pub trait Source: Send + Sync {
    /// Total bytes.
    fn size(&self) -> u64;

    /// `len` bytes from `offset` (borrowed from memory, or read).
    ///
    /// # Errors
    /// If they cannot be read (for a file: it was truncated, or the disk
    /// failed).
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>>;
}

impl<D: AsRef<[u8]> + Send + Sync> Source for D {
    fn size(&self) -> u64 {
        self.as_ref().len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        usize::try_from(offset)
            .ok()
            .and_then(|start| self.as_ref().get(start..start.checked_add(len)?))
            .map(Cow::Borrowed)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    }
}

/// A file read by positional reads (`pread`), never mapped: if it is
/// truncated or rewritten while open, reads fail or see the new bytes,
/// and the process goes on.
#[derive(Debug)]
pub struct PositionalFile {
    file: File,
    size: u64,
}

impl PositionalFile {
    /// Open `path` for positional reads; its size is taken now.
    ///
    /// # Errors
    /// If it cannot be opened.
    pub fn open(path: &Path) -> io::Result<PositionalFile> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        Ok(PositionalFile { file, size })
    }
}

impl Source for PositionalFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Cow<'_, [u8]>> {
        use std::os::unix::fs::FileExt;
        let mut buffer = vec![0; len];
        self.file.read_exact_at(&mut buffer, offset)?;
        Ok(Cow::Owned(buffer))
    }
}
