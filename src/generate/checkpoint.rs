//! Checkpoints: a long build that is stopped (Ctrl-C, `kill -9`, a
//! reboot) resumes where it stood instead of starting over.
//!
//! With a work directory (`generate --work-dir DIR`), the solver writes
//! its state to `DIR/<table>.<rule>.checkpoint` between two plies, once
//! [`Checkpoints::every`] has passed since the build started or since the
//! last checkpoint (every ply with a zero interval). The file is written
//! whole or not at all: under a temporary name, flushed to disk (fsync)
//! and renamed over the previous one.
//!
//! The state is everything the next ply reads: every level's cells (the
//! open level's bytes, packed finished levels, long values), the bits
//! recording which final values a zeroing move reaches, the open level's
//! settled bits (its loss candidates are clear between plies), the ply to
//! run next, the sizes of the frontier it starts from and the counts of
//! undecided cells. The frontier's list is not kept: the first ply after a
//! resume finds those positions by scanning the cells for their value,
//! which the solver does whenever a list would be too long, with the same
//! result (see the `solve` module). So a resumed build writes a file
//! byte-identical to an uninterrupted one.
//!
//! A checkpoint that is damaged, truncated, or written for another table,
//! rule, index space or checkpoint version is set aside (the solver says
//! so through its progress callback) and the table is solved from the
//! start; the next checkpoint replaces it. The builder removes a table's
//! checkpoint once the table's file is written.

use std::{
    cell::Cell,
    fs::{self, File},
    io::{self, BufReader, BufWriter},
    path::{Path, PathBuf},
    sync::atomic::AtomicU64,
    time::{Duration, Instant},
};

use bitvec::{order::Lsb0, vec::BitVec};
use shakmaty::ByColor;

use crate::{
    generate::{
        atomic::write_atomically,
        cells::{TableBits, TableCells},
        record::{RecordReader, RecordWriter, invalid},
    },
    material::Material,
    mmap::WorkArray,
    value::Rule,
};

/// The first bytes of a checkpoint file.
const MAGIC: &[u8; 16] = b"dtz50 checkpoint";
/// The layout of checkpoint files; a file of another version is set aside.
/// A change to what the solver's cells, bits or passes mean must raise it,
/// so that no build resumes from state it would not have made itself.
const VERSION: u64 = 4;
/// The file name's ending.
const EXTENSION: &str = "checkpoint";

/// The checkpoint file of `material` under `rule` in the work directory
/// `dir`.
pub fn checkpoint_path(dir: &Path, material: Material, rule: Rule) -> PathBuf {
    dir.join(format!("{material}.{rule}.{EXTENSION}"))
}

/// Where a level's ply loop stands between two plies, besides its cells
/// and bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Between {
    /// The level being solved.
    pub level: usize,
    /// The ply to run next.
    pub next: i16,
    /// How many positions each side has in the frontier the next ply
    /// starts from (won, lost), if the last ply ran just before it.
    pub frontier: Option<(ByColor<u64>, ByColor<u64>)>,
    /// Undecided cells of the level, by side to move.
    pub undecided: ByColor<u64>,
}

/// One bit per position of a level (see the `solve` module).
pub(crate) type LevelBitSet = BitVec<AtomicU64, Lsb0>;

/// One level's bits per side to move, besides its cells.
pub(crate) type LevelBits = ByColor<LevelBitSet>;

/// What a checkpoint gives back besides the cells and the table's bits.
pub(crate) struct Resume {
    /// Where the loop stood.
    pub between: Between,
    /// The open level's settled bits.
    pub settled: LevelBits,
}

/// The checkpoints of one table's solve.
pub(crate) struct Checkpoints {
    path: PathBuf,
    every: Duration,
    material: Material,
    rule: Rule,
    positions: u64,
    levels: usize,
    last: Cell<Instant>,
}

impl Checkpoints {
    /// Checkpoints in `dir` of a table of `positions` per side in `levels`
    /// pawn levels, at most every `every`.
    pub fn new(
        dir: &Path,
        material: Material,
        rule: Rule,
        positions: u64,
        levels: usize,
        every: Duration,
    ) -> Checkpoints {
        Checkpoints {
            path: checkpoint_path(dir, material, rule),
            every,
            material,
            rule,
            positions,
            levels,
            last: Cell::new(Instant::now()),
        }
    }

    /// The checkpoint file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes on disk of the checkpoint there now (0 if none).
    pub fn existing_bytes(&self) -> u64 {
        fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Whether a checkpoint is due (the interval has passed).
    pub fn due(&self) -> bool {
        self.last.get().elapsed() >= self.every
    }

    /// Write the state: `between`, every level's `cells`, the table's
    /// `zeroing` bits and the open level's `settled` bits.
    /// Nothing may write any of them meanwhile.
    ///
    /// # Errors
    /// If the file cannot be written (the previous checkpoint stays).
    pub fn save(
        &self,
        between: &Between,
        cells: &TableCells,
        zeroing: &ByColor<TableBits>,
        settled: &LevelBits,
    ) -> io::Result<()> {
        let temp = self.path.with_extension(format!("{EXTENSION}.tmp"));
        write_atomically(&self.path, &temp, |file| {
            let mut out = RecordWriter::new(BufWriter::with_capacity(1 << 20, file));
            out.bytes(MAGIC)?;
            out.u64(VERSION)?;
            out.run(self.material.to_string().as_bytes())?;
            out.run(self.rule.to_string().as_bytes())?;
            out.u64(self.positions)?;
            out.u64(self.levels as u64)?;
            out.u64(between.level as u64)?;
            out.u64(u64::from(between.next as u16))?;
            match between.frontier {
                None => out.u64(0)?,
                Some((won, lost)) => {
                    out.u64(1)?;
                    for n in [won.white, won.black, lost.white, lost.black] {
                        out.u64(n)?;
                    }
                }
            }
            out.u64(between.undecided.white)?;
            out.u64(between.undecided.black)?;
            cells.save(&mut out)?;
            for bits in [&zeroing.white, &zeroing.black] {
                bits.save(&mut out)?;
            }
            out.atomic_words(settled.white.as_raw_slice())?;
            out.atomic_words(settled.black.as_raw_slice())?;
            out.finish()?
                .into_inner()
                .map_err(io::IntoInnerError::into_error)
        })?;
        self.last.set(Instant::now());
        Ok(())
    }

    /// Read the checkpoint, if there is one, into `cells` (fresh, every
    /// level absent) and `zeroing` (all clear), open levels into arrays
    /// from `allocate`.
    ///
    /// # Errors
    /// If the checkpoint cannot be read or does not belong to this table;
    /// `cells` and `zeroing` may then hold part of it.
    pub fn load(
        &self,
        cells: &mut TableCells,
        zeroing: &mut ByColor<TableBits>,
        allocate: impl Fn(usize) -> io::Result<WorkArray>,
    ) -> io::Result<Option<Resume>> {
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut input = RecordReader::new(BufReader::with_capacity(1 << 20, file));
        let mut magic = [0; MAGIC.len()];
        input.bytes(&mut magic)?;
        if &magic != MAGIC {
            return Err(invalid("not a dtz50 checkpoint".to_string()));
        }
        let version = input.u64()?;
        if version != VERSION {
            return Err(invalid(format!(
                "checkpoint version {version}, this dtz50 writes {VERSION}"
            )));
        }
        let material = input.run(64)?;
        let rule = input.run(8)?;
        let (positions, levels) = (input.u64()?, input.u64()?);
        if material != self.material.to_string().as_bytes()
            || rule != self.rule.to_string().as_bytes()
            || positions != self.positions
            || levels != self.levels as u64
        {
            return Err(invalid("written for another table".to_string()));
        }
        let level: usize = input.int()?;
        if level >= self.levels {
            return Err(invalid(format!("level {level} of {}", self.levels)));
        }
        let next = input.int::<u16>()? as i16;
        let frontier = match input.u64()? {
            0 => None,
            1 => {
                let mut n = [0; 4];
                for x in &mut n {
                    *x = input.u64()?;
                }
                let [ww, wb, lw, lb] = n;
                Some((
                    ByColor {
                        white: ww,
                        black: wb,
                    },
                    ByColor {
                        white: lw,
                        black: lb,
                    },
                ))
            }
            tag => return Err(invalid(format!("frontier tag {tag}"))),
        };
        let undecided = ByColor {
            white: input.u64()?,
            black: input.u64()?,
        };
        cells.restore(&mut input, allocate)?;
        zeroing.white.restore(&mut input)?;
        zeroing.black.restore(&mut input)?;
        let size = usize::try_from(cells.level_size(level)).expect("level fits in memory");
        let settled = ByColor::new_with(|_| level_bits(size));
        input.atomic_words(settled.white.as_raw_slice())?;
        input.atomic_words(settled.black.as_raw_slice())?;
        input.finish()?;
        Ok(Some(Resume {
            between: Between {
                level,
                next,
                frontier,
                undecided,
            },
            settled,
        }))
    }
}

/// Remove the checkpoint of `material` under `rule` from the work
/// directory `dir`, and any temporary file of one (its table is written).
///
/// # Errors
/// If a file is there but cannot be removed.
pub(crate) fn remove_checkpoint(dir: &Path, material: Material, rule: Rule) -> io::Result<()> {
    let path = checkpoint_path(dir, material, rule);
    for file in [path.with_extension(format!("{EXTENSION}.tmp")), path] {
        match fs::remove_file(&file) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// One bit per position of a level, all clear.
pub(crate) fn level_bits(size: usize) -> LevelBitSet {
    let mut bits = BitVec::new();
    bits.resize(size, false);
    bits
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use shakmaty::Color;

    use super::*;
    use crate::{
        generate::{
            solve::{Progress, SolveOptions, Unusable, solve},
            table::{Table, TableSet},
        },
        index::TableIndex,
    };

    /// `material`'s sub-tables and `material` itself, solved under
    /// `options` (which name no work directory).
    fn solved_without_checkpoints(material: Material, options: &SolveOptions) -> (TableSet, Table) {
        let mut set = TableSet::new();
        for sub in Material::with_dependencies(&[material]) {
            if sub != material {
                set.insert(solve(sub, options, &set, &|_| {}).expect("solves"));
            }
        }
        let table = solve(material, options, &set, &|_| {}).expect("solves");
        (set, table)
    }

    /// `material` solved under `options`, and the progress it reported.
    fn solve_hearing(
        material: Material,
        options: &SolveOptions,
        set: &TableSet,
    ) -> (Table, Vec<Progress>) {
        let heard = Mutex::new(Vec::new());
        let table = solve(material, options, set, &|p| {
            heard.lock().expect("lock").push(p);
        })
        .expect("solves");
        (table, heard.into_inner().expect("lock"))
    }

    /// Every cell and zeroing record of `a` and `b`.
    fn assert_same(a: &Table, b: &Table, what: &str) {
        for index in 0..a.layout().size() {
            for turn in Color::ALL {
                let at = TableIndex(index);
                assert_eq!(
                    a.cell(turn, at),
                    b.cell(turn, at),
                    "{what}: {turn:?} {index}"
                );
                assert_eq!(
                    a.zeroing_reaches(turn, index),
                    b.zeroing_reaches(turn, index),
                    "{what}: {turn:?} {index}"
                );
            }
        }
    }

    /// A solve that writes a checkpoint after every ply, resumed from a
    /// copy of each (every `nth`), gives the table of a solve without
    /// checkpoints; so does one whose checkpoint is damaged, which says so
    /// and starts over. Pawn levels (KPvK, under each rule: the jump to
    /// ply L + 1 and past it) and a pawnless table (KRvK).
    #[test]
    fn a_solve_resumed_from_any_checkpoint_gives_the_same_table() {
        for (name, rule, nth) in [
            ("KPvK", Rule::Fifty, 1),
            ("KPvK", Rule::SeventyFive, 4),
            ("KPvK", Rule::None, 4),
            ("KRvK", Rule::Fifty, 1),
        ] {
            let material: Material = name.parse().expect("material");
            let plain = SolveOptions {
                rule,
                ..SolveOptions::default()
            };
            let (set, reference) = solved_without_checkpoints(material, &plain);
            let dir = tempfile::tempdir().expect("temp dir");
            let path = checkpoint_path(dir.path(), material, rule);
            let copies = Mutex::new(Vec::new());
            let checkpointed = SolveOptions {
                work_dir: Some(dir.path().to_path_buf()),
                checkpoint_every: Some(Duration::ZERO),
                ..plain.clone()
            };
            let table = solve(material, &checkpointed, &set, &|p| {
                if let Progress::Checkpoint { .. } = p {
                    let mut copies = copies.lock().expect("lock");
                    let copy = dir.path().join(format!("copy-{}", copies.len()));
                    fs::copy(&path, &copy).expect("copies");
                    copies.push(copy);
                }
            })
            .expect("solves");
            assert_same(&reference, &table, &format!("{name} {rule} checkpointed"));
            let copies = copies.into_inner().expect("lock");
            assert!(
                copies.len() > 20,
                "{name} {rule}: {} checkpoints",
                copies.len()
            );
            // Resumed builds write no checkpoint of their own.
            let resuming = SolveOptions {
                checkpoint_every: Some(Duration::MAX),
                ..checkpointed.clone()
            };
            for copy in copies.iter().step_by(nth) {
                fs::copy(copy, &path).expect("copies");
                let (table, heard) = solve_hearing(material, &resuming, &set);
                assert!(
                    matches!(heard[0], Progress::Resumed { .. }),
                    "{name} {rule} {}: {:?}",
                    copy.display(),
                    heard[0]
                );
                assert_same(
                    &reference,
                    &table,
                    &format!("{name} {rule} from {}", copy.display()),
                );
            }
            let mut damaged = fs::read(&copies[copies.len() / 2]).expect("reads");
            let middle = damaged.len() / 2;
            damaged[middle] ^= 0x10;
            fs::write(&path, damaged).expect("writes");
            let (table, heard) = solve_hearing(material, &resuming, &set);
            assert_eq!(heard[0], Progress::CheckpointUnusable(Unusable::Damaged));
            assert_same(
                &reference,
                &table,
                &format!("{name} {rule} after a damaged checkpoint"),
            );
        }
    }

    /// A checkpoint that cannot be read (a directory in its place) is
    /// reported with the reason, not as damaged, and the table is solved
    /// from the start.
    #[test]
    fn an_unreadable_checkpoint_is_named_as_such() {
        let material: Material = "KPvK".parse().expect("material");
        let plain = SolveOptions::default();
        let (set, reference) = solved_without_checkpoints(material, &plain);
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir(checkpoint_path(dir.path(), material, plain.rule)).expect("creates");
        let options = SolveOptions {
            work_dir: Some(dir.path().to_path_buf()),
            checkpoint_every: Some(Duration::MAX),
            ..plain.clone()
        };
        let (table, heard) = solve_hearing(material, &options, &set);
        assert_eq!(
            heard[0],
            Progress::CheckpointUnusable(Unusable::Unreadable(io::ErrorKind::IsADirectory))
        );
        assert_same(&reference, &table, "KPvK after an unreadable checkpoint");
    }
}
