//! Output: what holds, per time point, in one of three modes.
//!
//! * `points`: `trusted(a,4).` for every fact at every time point it holds;
//! * `changes`: `+trusted(a) @4` when a fact starts to hold, `-trusted(a) @6` when it
//!   stops (nothing is retracted at the end of the timeline);
//! * `intervals`: `trusted(a) [4,6)` per maximal interval, right-open, printed when it
//!   closes; an interval still open at the end of the timeline ends at the last time
//!   point + 1;
//! * a snapshot a front end adds ([`Snapshot`]): each time point written whole from every
//!   fact that holds at it, as another reasoner prints it (for `diff` against it); costs
//!   a pass over everything holding per time point.
//!
//! Within a time point lines are sorted (predicate name, then arguments), so output is
//! deterministic whatever the evaluator's order.
//!
//! Lines are TD text by default; a sink writing one file per output predicate
//! ([`Sink::to_files`], the CLI's `--output-dir`) writes them as TD, CSV or JSON lines
//! ([`Encoding`]). With a `time_scale` k (an input read with
//! a clock tick of k), every printed time is the time point × k, so output is in the
//! input's own units.
//!
//! This file holds the [`Sink`] and what every mode shares; its submodules hold what it
//! is given per time point (`emit`), each mode's own lines (`intervals`, `snapshot`,
//! `summary`: an output a front end writes at the end), the encodings and value
//! formatting (`encoding`, `values`), the part files (`files`) and the workers' keyed
//! lines (`keyed`).

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, Write};
use std::sync::Arc;

use hashbrown::HashMap;

use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::Row;
use stgflow_lang::value::symbols::Clock;

mod buffered;
mod emit;
mod encoding;
mod files;
mod intervals;
mod keyed;
pub mod records;
mod snapshot;
mod summary;
mod texts;
mod values;
pub use buffered::Buffered;
pub use encoding::Encoding;
pub use files::{Files, file_of};
pub use keyed::{KeyedLines, Template, merge_keyed};
pub use snapshot::Snapshot;
pub use summary::Summary;
use texts::SortedTexts;
pub use values::{json_string, push_u64, push_value};

/// The output's buffer, in bytes: an output file (one per predicate, or standard output
/// where it is a regular file) is written in pieces ending on its multiples (see
/// [`Buffered`]). The page cache takes an aligned write in folios of the write's size, and
/// folios of up to 32 KiB come from the kernel allocator's per-CPU lists of memory freed
/// just before, larger ones from its blocks, which a virtual machine may have handed back
/// to its host; BENCHMARKS.md has the sizes compared.
pub const BUFFER: usize = 1 << 15;

/// When the intervals still open at the end of the output are written: after every time
/// point.
const OPEN_AT_THE_END: u64 = u64::MAX;

#[derive(Clone, Debug, Default)]
pub enum Mode {
    #[default]
    Points,
    Changes,
    Intervals,
    /// A front end's own output, written whole at every time point.
    Snapshot(Arc<dyn Snapshot>),
}

impl Eq for Mode {}

impl PartialEq for Mode {
    fn eq(&self, other: &Mode) -> bool {
        match (self, other) {
            (Mode::Snapshot(a), Mode::Snapshot(b)) => Arc::ptr_eq(a, b),
            (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
        }
    }
}

/// A sink writing one mode of output.
#[derive(Debug)]
pub struct Sink<W: Write> {
    out: W,
    mode: Mode,
    names: Vec<String>,
    /// Rank of each predicate by name, for sorting.
    rank: Vec<usize>,
    /// Every fact holding at the last time point, with the start of its interval. Not
    /// kept for a [`Snapshot`], whose texts are (`snapshot`), except by [`Sink::emit`].
    holding: HashMap<(PredId, Row), u64>,
    last_time: Option<u64>,
    /// Flush after every time point (live streams).
    pub flush_each: bool,
    /// Printed times are time points × this (the input's clock tick, see
    /// `FactReader::with_tick`); 1 by default.
    pub time_scale: u64,
    /// The time point's output, as bytes.
    line: Vec<u8>,
    /// For a [`Snapshot`]: the facts that hold with their texts, in the byte order of
    /// their texts.
    snapshot: SortedTexts,
    /// For a [`Snapshot`], per predicate: its facts come as points, each taken back this
    /// many time points later here ([`Sink::retract_points`]).
    point_holds: Vec<Option<u64>>,
    encoding: Encoding,
    /// One file per predicate (by id) when writing to files ([`Sink::to_files`]); empty
    /// when every line goes to `out`.
    files: Vec<Option<Buffered<File>>>,
    /// An output written whole at the end from every interval ([`Sink::summarised`]).
    summary: Option<Box<dyn Summary>>,
    /// The first time point printed (`--print-from`): what holds before it is evaluated
    /// but not written; at it, `changes` starts with every fact that holds, and intervals
    /// start no earlier.
    pub print_from: Option<u64>,
    /// A worker's sink ([`Sink::keyed`]): the lines it formats, each with its key, instead
    /// of written; and where this time point's lines start in `line`.
    keyed: Option<(KeyedLines, usize)>,
    /// Whether a worker's sink keys its lines.
    keys: bool,
    /// The run's clock for the table of long symbols ([`Sink::clocked`]).
    clock: Option<Clock>,
}

impl Sink<Vec<u8>> {
    /// The bytes written so far, taken out; the sink writes on into `room` (emptied),
    /// whose allocation it keeps.
    pub fn take_bytes(&mut self, mut room: Vec<u8>) -> Vec<u8> {
        room.clear();
        std::mem::replace(&mut self.out, room)
    }

    /// How many bytes are written and not taken.
    pub fn written(&self) -> usize {
        self.out.len()
    }
}

impl<W: Write> Sink<W> {
    pub fn new(out: W, mode: Mode, program: &Program) -> Sink<W> {
        let names: Vec<String> = program.predicates.iter().map(|p| p.name.clone()).collect();
        Sink::with_names(out, mode, names, name_ranks(program))
    }

    /// A sink of `mode` to `out` for the predicates `names`, ranked by `rank`.
    fn with_names(out: W, mode: Mode, names: Vec<String>, rank: Vec<usize>) -> Sink<W> {
        let separator = match &mode {
            Mode::Snapshot(snapshot) => snapshot.separator(),
            _ => b"",
        };
        Sink {
            out,
            mode,
            names,
            rank,
            holding: HashMap::new(),
            last_time: None,
            flush_each: false,
            time_scale: 1,
            line: Vec::new(),
            snapshot: SortedTexts::new(separator),
            point_holds: Vec::new(),
            encoding: Encoding::Td,
            files: Vec::new(),
            summary: None,
            print_from: None,
            keyed: None,
            keys: false,
            clock: None,
        }
    }

    /// The sink of a run whose readers stamp their long symbols for `clock`: each time
    /// point it writes advances the clock past it, so that the symbols no fact can hold
    /// any more are freed. Sinks made from this one (parts, workers' sinks) leave the
    /// clock alone: their time points are not the run's output in order.
    pub fn clocked(mut self, clock: Clock) -> Sink<W> {
        self.clock = Some(clock);
        self
    }

    /// Time point `t` is written.
    fn passed(&mut self, t: u64) {
        self.last_time = Some(t);
        self.clock_to(t.saturating_add(1));
    }

    /// Advances the run's clock to `t` (see [`Sink::clocked`]): every time point before
    /// it is written and no longer held. For a writer of output made elsewhere in order.
    pub fn clock_to(&self, t: u64) {
        if let Some(clock) = &self.clock {
            clock.advance(t);
        }
    }

    /// The sink writing its lines in `encoding` (points, changes and intervals; files
    /// take theirs from [`Files`]).
    pub fn encoded(mut self, encoding: Encoding) -> Sink<W> {
        self.encoding = encoding;
        self
    }

    /// Whether the end of the output writes lines: the intervals still open, a summary.
    pub fn writes_an_end(&self) -> bool {
        matches!(self.mode, Mode::Intervals) || self.summary.is_some()
    }

    /// Whether parts of the timeline evaluated on their own can each write their own
    /// output ([`Sink::part`]): not intervals (an interval may start in an earlier part),
    /// files, or a [`Summary`].
    pub fn writes_by_parts(&self) -> bool {
        matches!(self.mode, Mode::Points | Mode::Changes | Mode::Snapshot(_))
            && self.files.is_empty()
            && self.summary.is_none()
    }

    /// A sink like this one that writes into memory, for a part of the timeline
    /// evaluated on its own (where [`Sink::writes_by_parts`]): the same mode, predicates,
    /// order, time scale, encoding and points' holds, and `print_from` as given.
    pub fn part(&self, print_from: Option<u64>) -> Sink<Vec<u8>> {
        let mut sink = Sink::with_names(
            Vec::new(),
            self.mode.clone(),
            self.names.clone(),
            self.rank.clone(),
        );
        sink.time_scale = self.time_scale;
        sink.encoding = self.encoding;
        sink.point_holds = self.point_holds.clone();
        sink.print_from = print_from;
        sink
    }

    /// The last time point written, in input time units (`--tick`): where a stopped run's
    /// output ends.
    pub fn last_written(&self) -> Option<u64> {
        self.last_time.map(|t| t.saturating_mul(self.time_scale))
    }

    /// Whether time point `t` is printed (see [`Sink::print_from`]).
    fn printed(&self, t: u64) -> bool {
        self.print_from.is_none_or(|from| t >= from)
    }

    /// Whether a time point already written was printed: past `print_from`'s first one.
    fn printing(&self) -> bool {
        self.last_time.is_some_and(|last| self.printed(last))
    }

    fn order(&self, a: &(PredId, Row), b: &(PredId, Row)) -> Ordering {
        self.rank[a.0]
            .cmp(&self.rank[b.0])
            .then_with(|| a.1.cmp(&b.1))
    }

    /// Ends the output: closes open intervals at the last time point + 1, and flushes.
    /// Those are written as at [`OPEN_AT_THE_END`].
    pub fn finish(&mut self) -> io::Result<()> {
        if matches!(self.mode, Mode::Intervals) {
            if let Some(last) = self.last_time {
                self.line.clear();
                self.keyed_start(0);
                let mut open: Vec<((PredId, Row), u64)> =
                    std::mem::take(&mut self.holding).into_iter().collect();
                open.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| self.order(&a.0, &b.0)));
                for ((pred, args), start) in &open {
                    self.write_interval(*pred, args, (*start, last + 1), OPEN_AT_THE_END)?;
                }
                self.keyed_time_point(0);
                self.out.write_all(&self.line)?;
            }
        }
        self.write_summary()?;
        self.flush()
    }

    /// Flushes what was written so far (on errors, before exiting).
    pub fn flush(&mut self) -> io::Result<()> {
        for file in self.files.iter_mut().flatten() {
            file.flush()?;
        }
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Each predicate's rank when predicates are sorted by name: output within a time point
/// is ordered by it, then by the arguments.
pub fn name_ranks(program: &Program) -> Vec<usize> {
    let names: Vec<&str> = program.predicates.iter().map(|p| p.name.as_str()).collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].cmp(names[b]));
    let mut rank = vec![0; names.len()];
    for (r, p) in order.into_iter().enumerate() {
        rank[p] = r;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;
    use stgflow_lang::value::Value;

    #[test]
    fn time_scale_multiplies_every_printed_time() {
        let compiled = compile_str("p.tdl", "q(X, T) :- p(X, T).");
        let q = compiled.program.pred_id("q").unwrap_or_default();
        let fact = (q, Row::from_slice(&[Value::sym("a")]));
        let mut printed = Vec::new();
        for mode in [Mode::Points, Mode::Changes, Mode::Intervals] {
            let mut sink = Sink::new(Vec::new(), mode, &compiled.program);
            sink.time_scale = 40;
            for (t, facts) in [
                (3, vec![fact.clone()]),
                (4, vec![fact.clone()]),
                (5, vec![]),
            ] {
                sink.emit(t, facts).unwrap_or_default();
            }
            sink.finish().unwrap_or_default();
            printed.push(String::from_utf8(sink.into_inner()).unwrap_or_default());
        }
        assert_eq!(
            printed,
            [
                "q(a,120).\nq(a,160).\n",
                "+q(a) @120\n-q(a) @200\n",
                "q(a) [120,200)\n"
            ]
        );
    }
}
