//! Progress of a parallel pass in tenths of its chunks.
//!
//! The solver's seed and the deep check's passes run over a few thousand
//! chunks in parallel; a pass that takes minutes says how far it is each
//! time another tenth of its chunks is done (10 %, 20 % … 90 %; the start
//! and the end are the caller's to report). The chunks finish in any order
//! and from any thread, so the count is atomic and each tenth is reported
//! once, by the thread whose chunk completed it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts the finished chunks of one pass (see the module doc).
pub(crate) struct Tenths<'a> {
    chunks: usize,
    done: AtomicUsize,
    report: &'a (dyn Fn(u8) + Sync),
}

impl<'a> Tenths<'a> {
    /// A pass of `chunks` chunks, telling `report` the percent done.
    pub fn new(chunks: usize, report: &'a (dyn Fn(u8) + Sync)) -> Tenths<'a> {
        Tenths {
            chunks,
            done: AtomicUsize::new(0),
            report,
        }
    }

    /// One more chunk is done: report the tenth it completes, if any
    /// (not the last chunk's 100 %).
    pub fn chunk_done(&self) {
        let tenths = |n: usize| n * 10 / self.chunks;
        let now = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if tenths(now) > tenths(now - 1) && now < self.chunks {
            (self.report)((tenths(now) * 10) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rayon::prelude::*;

    use super::*;

    #[test]
    fn each_tenth_is_reported_once_whatever_the_order() {
        for chunks in [1, 7, 10, 25, 1000] {
            let reported = Mutex::new(Vec::new());
            let report = |percent| reported.lock().expect("lock").push(percent);
            let tenths = Tenths::new(chunks, &report);
            (0..chunks)
                .into_par_iter()
                .for_each(|_| tenths.chunk_done());
            let mut reported = reported.into_inner().expect("lock");
            reported.sort_unstable();
            let expected: Vec<u8> = match chunks {
                1 => vec![],
                7 => vec![10, 20, 40, 50, 70, 80],
                _ => (1..10).map(|t| t * 10).collect(),
            };
            assert_eq!(reported, expected, "{chunks} chunks");
        }
    }
}
