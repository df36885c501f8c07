//! A part of the timeline evaluated alone: its worker reads its lines in every file (and
//! the lines of the `horizon + 1` time points before them, to warm up), runs its own
//! dataflow over them, and formats its own time points' output into bytes, which go to
//! the writer as they are made. Nothing is exchanged with the other parts' workers.
//!
//! What holds at the part's first time point t is exact once the dataflow has seen the
//! input from t − 1 − horizon on: every fact at t − 1 then is (the horizon bounds how far
//! back a fact depends on the input), so the changes at t are too. The warm-up's output
//! is not written: `changes` writes from t; a sink that keeps what holds (points, a
//! snapshot) takes the warm-up's changes to know it and prints from t.

use stgflow_io::drive::{FactSource, Fed, ProgramFacts, RunError, RunSummary, TimePoints, feed};
use stgflow_io::sink::Sink;
use stgflow_io::stream::SkipCounts;
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;
use stgflow_lang::value::symbols::Clock;

use super::super::messages::{Update, change};
use super::Shared;
use super::local::Local;
use super::outbox::{Out, PartDone};
use super::parts::Cut;

/// Bytes of output a part gathers before it sends them.
const CHUNK: usize = 1 << 18;

/// Evaluates part `k` of `cut` into `sink`, which starts printing at the part's first
/// time point (or later, `print_from`), sending its bytes to `outbox`.
pub(super) fn evaluate(
    shared: &Shared,
    cut: &Cut,
    k: usize,
    sink: Sink<Vec<u8>>,
    emit_from: u64,
    outbox: &dyn Out,
) -> PartDone {
    let (start, end) = cut.times(k);
    let first = cut.evaluated_from(k);
    // The part's long symbols go as its own output is formatted, not as the run's is
    // written: a clock of its own.
    let clock = Clock::new();
    let sink = sink.clocked(clock.clone());
    let mut parts: Vec<_> = (cut.readers(k).into_iter())
        .map(|part| part.clocked(clock.clone()))
        .collect();
    // The part that reads from the input's start also reads the program's facts before
    // the timeline, for the driver to drop and count.
    let program_times = match cut.warm_from[k] {
        None => (0, end),
        Some(warm) => (warm, end),
    };
    let mut sources = sources(&shared.program, program_times, &mut parts);
    let timeline = cut.timeline(k, first);
    let mut run = TimePart {
        slot: Some(outbox.slots().take(k)),
        local: Local::new(shared, None),
        sink,
        own_from: start.max(cut.first),
        emit_from,
        next: None,
        pending: Vec::new(),
        summary: RunSummary::default(),
        own_facts: 0,
        part: k,
        outbox,
        stopped: false,
    };
    let result = feed(&shared.program, &mut sources, timeline, &mut run);
    // The part's own files (`--output-dir`) are flushed once its output is written.
    let flushed = run.flush(true).and_then(|()| Ok(run.sink.flush()?));
    let skipped: Vec<SkipCounts> = sources[1..].iter().map(|s| s.skipped()).collect();
    drop(sources);
    let misplaced = parts.iter().any(|p| p.misplaced());
    let TimePart {
        local,
        summary,
        own_facts,
        ..
    } = run;
    let (times, records) = local.finish();
    let (dropped, error) = match result.and_then(|fed| flushed.map(|()| fed)) {
        Ok(fed) => (fed.dropped, None),
        Err(error) => (0, Some(error)),
    };
    PartDone {
        summary,
        fed: Fed {
            input_facts: own_facts,
            dropped,
        },
        skipped,
        error,
        misplaced,
        times,
        records,
    }
}

/// The sources of a part: the program's facts of `program_times` and the part's readers.
pub(super) fn sources<'a>(
    program: &'a stgflow_lang::ir::Program,
    program_times: (u64, Option<u64>),
    parts: &'a mut [stgflow_io::stream::split::Part],
) -> Vec<Box<dyn FactSource + 'a>> {
    let mut sources: Vec<Box<dyn FactSource + 'a>> =
        vec![Box::new(ProgramFacts::within(program, program_times))];
    for part in parts {
        sources.push(Box::new(PartRef(part)));
    }
    sources
}

/// A part's reader lent to the driver, so that the part can be asked afterwards whether
/// its facts lay in its range.
struct PartRef<'a>(&'a mut stgflow_io::stream::split::Part);

impl FactSource for PartRef<'_> {
    fn next_fact(
        &mut self,
    ) -> Result<Option<stgflow_io::stream::InputFact>, Box<stgflow_io::stream::StreamError>> {
        self.0.next_fact()
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<stgflow_io::stream::InputFact>, Box<stgflow_io::stream::StreamError>> {
        self.0.take_at(time, out)
    }

    fn skipped(&self) -> SkipCounts {
        self.0.skipped()
    }
}

/// The driver's consumer for a part: the part's dataflow, its sink, and what it wrote.
struct TimePart<'a> {
    /// The part's turn on a core (see [`super::slots`]).
    slot: Option<super::slots::Slot<'a>>,
    local: Local,
    sink: Sink<Vec<u8>>,
    /// The first time point the part owns.
    own_from: u64,
    /// The first time point whose changes go to the sink.
    emit_from: u64,
    /// The next time point to write.
    next: Option<u64>,
    /// Output in order, not written yet.
    pending: Vec<Update>,
    summary: RunSummary,
    /// The input facts of the part's own time points.
    own_facts: u64,
    part: usize,
    outbox: &'a dyn Out,
    /// The part is not wanted any more (an earlier one stopped the run).
    stopped: bool,
}

impl TimePart<'_> {
    /// Runs the batch fed and writes its time points; with `last`, sends every byte.
    fn flush(&mut self, last: bool) -> Result<(), RunError> {
        if self.stopped {
            return Ok(());
        }
        self.local.run(&mut self.pending);
        let Some(mut t) = self.next else {
            return Ok(());
        };
        let end = self.local.fed_to();
        if t < end {
            self.summary.time_points(t.max(self.own_from), end);
            // The changes before `emit_from` (the warm-up's) go nowhere.
            let emit_from = t.max(self.emit_from).min(end);
            let warm = self.pending.partition_point(|u| u.1 < emit_from);
            let emitted = (self.sink).emit_through(
                (emit_from, end),
                &self.pending[warm..],
                change,
                |_, _| {},
            )?;
            self.pending.drain(..warm + emitted);
            t = end;
        }
        self.next = Some(t);
        if (last && self.sink.written() > 0) || self.sink.written() >= CHUNK {
            let like = self.sink.written();
            let bytes = self.sink.take_bytes(self.outbox.buffer(like));
            if !(self.outbox).bytes(self.part, bytes, t.saturating_sub(1), &mut self.slot) {
                self.stopped = true;
                return Err(RunError::Cluster("stopped".to_owned()));
            }
        }
        Ok(())
    }

    /// Runs the batch if it is full; stops where the part is not wanted any more.
    fn after_feeding(&mut self) -> Result<(), RunError> {
        if self.local.full() {
            self.flush(false)?;
            if !self.outbox.wanted(self.part) {
                self.stopped = true;
                return Err(RunError::Cluster("stopped".to_owned()));
            }
        }
        Ok(())
    }
}

impl TimePoints for TimePart<'_> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.next.get_or_insert(t);
        if t >= self.own_from {
            self.own_facts += input.len() as u64;
        }
        self.local.complete(t, input);
        self.after_feeding()
    }

    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        self.next.get_or_insert(from);
        let mut at = from;
        while at < to {
            self.local.quiet_grows(!self.sink.writes_every_point());
            at = self.local.quiet(at, to);
            self.after_feeding()?;
            if at < to {
                if let Some(stop) = stgflow_io::interrupt::requested() {
                    return Err(stop.into());
                }
            }
        }
        Ok(())
    }
}
