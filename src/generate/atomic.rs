//! Files written whole or not at all: under a temporary name in the same
//! directory, flushed to disk (fsync), renamed into place, and the
//! directory flushed too, so that a crash or a kill leaves either the old
//! file or the new one under the final name, never part of one. Table
//! files and solver checkpoints are both written this way.

use std::{
    fs::{self, File},
    io,
    path::Path,
};

/// Write `path` through `temp` (in the same directory): `write` fills the
/// file and hands it back, then it is flushed and renamed. Returns the
/// file size. On an error the temporary file is removed.
///
/// # Errors
/// From `write`, or if the file cannot be created, flushed or renamed.
pub(crate) fn write_atomically(
    path: &Path,
    temp: &Path,
    write: impl FnOnce(File) -> io::Result<File>,
) -> io::Result<u64> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let result = (|| {
        let file = write(File::create(temp)?)?;
        file.sync_all()?;
        let bytes = file.metadata()?.len();
        fs::rename(temp, path)?;
        File::open(dir)?.sync_all()?;
        Ok(bytes)
    })();
    if result.is_err() {
        let _ = fs::remove_file(temp);
    }
    result
}
