//! The byte stream of a solver checkpoint (see the `checkpoint` module):
//! little-endian integers and runs of bytes, with a CRC-64 over everything
//! written, stored at the end, so that a reader tells a damaged or
//! truncated checkpoint from a good one before it trusts a single cell.
//!
//! The solver's arrays are atomics that the passes write from several
//! threads; a checkpoint is taken between passes, when nothing writes, and
//! copies them through plain loads a buffer at a time.

use std::{
    io::{self, Read, Write},
    sync::atomic::{AtomicU8, AtomicU64, Ordering},
};

use crc::{CRC_64_XZ, Crc, Digest};

static CRC64: Crc<u64> = Crc::<u64>::new(&CRC_64_XZ);

/// Bytes copied out of (or into) an atomic array per write (read).
const BUFFER: usize = 1 << 20;

/// Writes a record, summing every byte into its checksum.
pub(crate) struct RecordWriter<W: Write> {
    inner: W,
    crc: Digest<'static, u64>,
}

impl<W: Write> RecordWriter<W> {
    /// A record written to `inner`.
    pub fn new(inner: W) -> RecordWriter<W> {
        RecordWriter {
            inner,
            crc: CRC64.digest(),
        }
    }

    /// Raw bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc.update(bytes);
        self.inner.write_all(bytes)
    }

    /// An unsigned integer of any width up to 64 bits, as 8 bytes.
    pub fn u64(&mut self, value: u64) -> io::Result<()> {
        self.bytes(&value.to_le_bytes())
    }

    /// A length-prefixed run of bytes.
    pub fn run(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.u64(bytes.len() as u64)?;
        self.bytes(bytes)
    }

    /// The bytes of an atomic array (nothing may write it meanwhile).
    pub fn atomic_bytes(&mut self, array: &[AtomicU8]) -> io::Result<()> {
        let mut buffer = Vec::with_capacity(BUFFER.min(array.len()));
        for part in array.chunks(BUFFER) {
            buffer.clear();
            buffer.extend(part.iter().map(|b| b.load(Ordering::Relaxed)));
            self.bytes(&buffer)?;
        }
        Ok(())
    }

    /// The words of an atomic array (nothing may write it meanwhile).
    pub fn atomic_words(&mut self, words: &[AtomicU64]) -> io::Result<()> {
        for part in words.chunks(BUFFER / 8) {
            let bytes: Vec<u8> = part
                .iter()
                .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
                .collect();
            self.bytes(&bytes)?;
        }
        Ok(())
    }

    /// Append the checksum and hand back the writer.
    pub fn finish(mut self) -> io::Result<W> {
        let sum = self.crc.finalize();
        self.inner.write_all(&sum.to_le_bytes())?;
        Ok(self.inner)
    }
}

/// Reads a record written by [`RecordWriter`], summing as it goes.
pub(crate) struct RecordReader<R: Read> {
    inner: R,
    crc: Digest<'static, u64>,
}

impl<R: Read> RecordReader<R> {
    /// A record read from `inner`.
    pub fn new(inner: R) -> RecordReader<R> {
        RecordReader {
            inner,
            crc: CRC64.digest(),
        }
    }

    /// Fill `bytes`.
    pub fn bytes(&mut self, bytes: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(bytes)?;
        self.crc.update(bytes);
        Ok(())
    }

    /// An integer written by [`RecordWriter::u64`].
    pub fn u64(&mut self) -> io::Result<u64> {
        let mut bytes = [0; 8];
        self.bytes(&mut bytes)?;
        Ok(u64::from_le_bytes(bytes))
    }

    /// An integer written by [`RecordWriter::u64`] that must fit `T`.
    pub fn int<T: TryFrom<u64>>(&mut self) -> io::Result<T> {
        let value = self.u64()?;
        T::try_from(value).map_err(|_| invalid(format!("{value} is out of range")))
    }

    /// A run written by [`RecordWriter::run`] of at most `limit` bytes.
    pub fn run(&mut self, limit: u64) -> io::Result<Vec<u8>> {
        let len = self.u64()?;
        if len > limit {
            return Err(invalid(format!(
                "a run of {len} bytes, at most {limit} expected"
            )));
        }
        let mut bytes = vec![0; len as usize];
        self.bytes(&mut bytes)?;
        Ok(bytes)
    }

    /// Fill the words of an atomic array written by
    /// [`RecordWriter::atomic_words`].
    pub fn atomic_words(&mut self, words: &[AtomicU64]) -> io::Result<()> {
        let mut buffer = vec![0; BUFFER];
        for part in words.chunks(BUFFER / 8) {
            let bytes = &mut buffer[..part.len() * 8];
            self.bytes(bytes)?;
            for (word, le) in part.iter().zip(bytes.chunks_exact(8)) {
                word.store(
                    u64::from_le_bytes(le.try_into().expect("8 bytes")),
                    Ordering::Relaxed,
                );
            }
        }
        Ok(())
    }

    /// Check the checksum at the end, and that nothing follows it.
    ///
    /// # Errors
    /// `InvalidData` if the record is damaged or has trailing bytes.
    pub fn finish(mut self) -> io::Result<()> {
        let sum = self.crc.finalize();
        let mut stored = [0; 8];
        self.inner.read_exact(&mut stored)?;
        if u64::from_le_bytes(stored) != sum {
            return Err(invalid("its checksum does not match".to_string()));
        }
        let mut more = [0; 1];
        if self.inner.read(&mut more)? != 0 {
            return Err(invalid("bytes follow its checksum".to_string()));
        }
        Ok(())
    }
}

/// An `InvalidData` error.
pub(crate) fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Vec<u8> {
        let mut writer = RecordWriter::new(Vec::new());
        writer.u64(7).expect("write");
        writer.run(b"KRvKP").expect("write");
        let words: Vec<AtomicU64> = (0..3).map(|w| AtomicU64::new(w * 1000 + 1)).collect();
        writer.atomic_words(&words).expect("write");
        writer.finish().expect("write")
    }

    #[test]
    fn records_read_back_and_a_changed_byte_is_found() {
        let bytes = record();
        let read = |bytes: &[u8]| -> io::Result<(u64, Vec<u8>, Vec<u64>)> {
            let mut reader = RecordReader::new(bytes);
            let n = reader.u64()?;
            let name = reader.run(100)?;
            let words: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
            reader.atomic_words(&words)?;
            reader.finish()?;
            Ok((
                n,
                name,
                words.iter().map(|w| w.load(Ordering::Relaxed)).collect(),
            ))
        };
        assert_eq!(
            read(&bytes).expect("reads back"),
            (7, b"KRvKP".to_vec(), vec![1, 1001, 2001])
        );
        let mut damaged = bytes.clone();
        damaged[20] ^= 4;
        assert_eq!(
            read(&damaged).expect_err("damaged").to_string(),
            "its checksum does not match"
        );
        let truncated = &bytes[..bytes.len() - 3];
        assert_eq!(
            read(truncated).expect_err("truncated").kind(),
            io::ErrorKind::UnexpectedEof
        );
        let mut longer = bytes;
        longer.push(0);
        assert_eq!(
            read(&longer).expect_err("longer").to_string(),
            "bytes follow its checksum"
        );
    }
}
