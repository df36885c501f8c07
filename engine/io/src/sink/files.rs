//! Output as part files, one per printed predicate and part of the run ([`Files`],
//! the CLI's `--output-dir`): where they are, how a sink writes to them, and how earlier
//! runs' parts are removed.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use stgflow_lang::ir::{PredId, Program};

use super::{BUFFER, Buffered, Encoding, Mode, Sink};

/// Where a run writes its output as part files, a directory per printed predicate (the
/// CLI's `--output-dir`: `DIR/q/part-00003.csv`, the way distributed engines write
/// theirs), and how. Each part file holds its predicate's lines of one part of the run,
/// in time order; a run evaluated whole writes part 0 alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Files {
    pub dir: std::path::PathBuf,
    pub encoding: Encoding,
    pub mode: Mode,
    /// Printed times are time points × this (see [`Sink::time_scale`]).
    pub time_scale: u64,
    /// Flush every file after every time point (live streams; see [`Sink::flush_each`]).
    pub flush_each: bool,
}

impl Files {
    /// A sink writing part `part`'s files of the printed predicates `owned` accepts (and
    /// nothing to `out`).
    pub fn sink<W: Write>(
        &self,
        out: W,
        program: &Program,
        part: usize,
        owned: impl Fn(PredId) -> bool,
    ) -> io::Result<Sink<W>> {
        let mut sink = Sink::to_files(
            out,
            (&self.dir, part),
            self.encoding,
            self.mode.clone(),
            program,
            owned,
        )?;
        sink.time_scale = self.time_scale;
        sink.flush_each = self.flush_each;
        Ok(sink)
    }

    /// Removes the part files an earlier run left of `program`'s printed predicates
    /// (a run of fewer parts would leave them beside its own).
    pub fn clear(&self, program: &Program) -> io::Result<()> {
        self.remove_parts(program, 0)
    }

    /// Removes the part files of `program`'s printed predicates from part `from` on: the
    /// parts after one that stopped the run, written by workers ahead of it.
    pub fn remove_parts(&self, program: &Program, from: usize) -> io::Result<()> {
        for p in program.output_predicates() {
            let dir = self.dir.join(&program.predicates[p].name);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry?.path();
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let number = (name.strip_prefix("part-"))
                    .and_then(|rest| rest.split('.').next())
                    .and_then(|n| n.parse::<usize>().ok());
                if number.is_some_and(|n| n >= from) {
                    std::fs::remove_file(&path)?;
                }
            }
        }
        Ok(())
    }
}

/// The file `dir/<name>/part-<part>.<ending>` that [`Sink::to_files`] writes part `part`
/// of predicate `name` to.
pub fn file_of(dir: &Path, name: &str, part: usize, encoding: Encoding) -> std::path::PathBuf {
    dir.join(name)
        .join(format!("part-{part:05}.{}", encoding.extension()))
}

impl<W: Write> Sink<W> {
    /// A sink that writes each printed predicate `owned` accepts to its own file of part
    /// `part` in `dir` ([`file_of`]), created (or emptied) now with its directory, in
    /// `encoding`; a CSV file starts with its header; `out` gets nothing. A
    /// [`Mode::Snapshot`] is written whole per time point, so it has no file per
    /// predicate: it is refused.
    pub fn to_files(
        out: W,
        (dir, part): (&Path, usize),
        encoding: Encoding,
        mode: Mode,
        program: &Program,
        owned: impl Fn(PredId) -> bool,
    ) -> io::Result<Sink<W>> {
        if matches!(mode, Mode::Snapshot(_)) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this output mode is written whole per time point, not per predicate",
            ));
        }
        let mut sink = Sink::new(out, mode, program);
        sink.encoding = encoding;
        sink.files = (0..program.predicates.len()).map(|_| None).collect();
        for p in program.output_predicates() {
            if !owned(p) {
                continue;
            }
            let path = file_of(dir, &program.predicates[p].name, part, encoding);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot create {}: {e}", parent.display()))
                })?;
            }
            let mut file = Buffered::aligned(
                BUFFER,
                File::create(&path).map_err(|e| {
                    io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))
                })?,
            );
            if encoding == Encoding::Csv {
                let mut header = String::new();
                for i in 1..=program.predicates[p].arity {
                    header.push_str(&format!("arg{i},"));
                }
                header.push_str(match sink.mode {
                    Mode::Changes => "time,change\n",
                    Mode::Intervals => "start,end\n",
                    _ => "time\n",
                });
                file.write_all(header.as_bytes())?;
            }
            sink.files[p] = Some(file);
        }
        Ok(sink)
    }

    /// Ends the line of `pred` that starts at `start` in the line buffer: when writing to
    /// files, it goes to the predicate's file and leaves the buffer.
    pub(super) fn end_line(&mut self, pred: PredId, start: usize) -> io::Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        if let Some(Some(file)) = self.files.get_mut(pred) {
            file.write_all(&self.line[start..])?;
        }
        self.line.truncate(start);
        Ok(())
    }
}
