//! The timeline driver: merges the input sources by time, steps an [`Evaluator`] through
//! every time point of the timeline, and hands each time point's output to a [`Sink`].
//!
//! * The timeline runs from the first to the last time point of the input (program facts
//!   included), unless `from`/`until` say otherwise or a source declares one (see
//!   [`crate::stream::ReaderState::declare_timeline`]; explicit bounds win); facts outside
//!   it are dropped. Every time
//!   point in it is evaluated, with or without input.
//! * A time point is evaluated as soon as every source has moved past it (or ended), so a
//!   live stream gets each time point's output while later input is still to come.
//! * On a malformed line the run stops; the output of every time point already evaluated
//!   has been written and flushed, and the error is returned.

use std::collections::VecDeque;
use std::io::{self, Write};

use crate::sink::Sink;
use crate::stream::{FactReader, InputFact, OTHER_ATOM, ReaderState, SkipCounts, StreamError};
use stgflow_lang::ir::{PredId, Program, TupleWindow};
use stgflow_lang::value::{Row, Value};

/// An evaluator steps through consecutive time points.
pub trait Evaluator {
    /// Evaluates time point `t` (the first call may use any `t`; later calls must use the
    /// next time point) with the input facts that hold at `t`, and appends to `out` the
    /// facts of `outputs` that hold at `t`.
    fn step(
        &mut self,
        t: u64,
        input: Vec<(PredId, Row)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<(), RunError>;

    /// Whether every time point after the last one stepped, without input, gives what
    /// the last one gave: the evaluator has settled, and a quiet stretch can be skipped
    /// ([`Evaluator::skip`]).
    fn settled(&self) -> bool {
        false
    }

    /// Where it has settled: the time points up to `to` (excluded) are taken as stepped,
    /// without input, each giving what the last one gave.
    fn skip(&mut self, _to: u64) {}
}

/// Something that yields input facts in time order.
pub trait FactSource {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>>;
    /// Moves the source's next facts at `time` (their predicate and arguments) into `out`
    /// and returns the first fact after them, as [`FactSource::next_fact`] would. Readers
    /// move their facts there themselves: each fact returned through memory by a call of
    /// its own and copied on would miss store forwarding.
    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        take_queued(self, |_| None, time, out)
    }
    fn skipped(&self) -> SkipCounts {
        SkipCounts::default()
    }
    /// A timeline the source declares (first and last time point), known once its first
    /// fact has been asked for.
    fn declared_timeline(&self) -> Option<(u64, u64)> {
        None
    }
    /// The source as blocks of whole lines of a file, unparsed, for readers elsewhere to
    /// parse (the dataflow workers: [`crate::stream::blocks::RawBlocks`]); asked before
    /// the first fact, and after it the source itself yields nothing. `None`: the source
    /// is read here, fact by fact.
    fn raw_blocks(&mut self) -> Option<crate::stream::blocks::RawBlocks> {
        None
    }
    /// How the source can be read in parts by time, each part on its own thread
    /// ([`crate::stream::split`]); `None`: only whole, from here. Asking takes nothing
    /// from the source.
    fn splitting(&self) -> Option<Splitting> {
        None
    }
}

/// How a source can be read in parts by time (see [`FactSource::splitting`]).
#[derive(Clone, Debug)]
pub enum Splitting {
    /// A file, searched and read where each part lies.
    File(crate::stream::split::SplitFile),
    /// The program's own facts: each part takes those of its time points.
    Program,
}

impl<R: io::BufRead> FactSource for FactReader<R> {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        FactReader::next_fact(self)
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        take_queued(self, |reader| reader.pending.pop_front(), time, out)
    }

    fn skipped(&self) -> SkipCounts {
        self.skipped.clone()
    }

    fn declared_timeline(&self) -> Option<(u64, u64)> {
        ReaderState::declared_timeline(self)
    }
}

/// The facts written in the program, in time order.
#[derive(Debug)]
pub struct ProgramFacts(std::vec::IntoIter<InputFact>);

impl ProgramFacts {
    pub fn new(program: &Program) -> ProgramFacts {
        let mut facts: Vec<InputFact> = program
            .facts
            .iter()
            .map(|f| InputFact {
                pred: f.pred,
                args: Row::from_slice(&f.args),
                time: f.time,
            })
            .collect();
        facts.sort_by_key(|f| f.time);
        ProgramFacts(facts.into_iter())
    }
}

impl FactSource for ProgramFacts {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        Ok(self.0.next())
    }

    fn splitting(&self) -> Option<Splitting> {
        Some(Splitting::Program)
    }
}

impl ProgramFacts {
    /// The program's facts at the time points of `times` (from, up to; `None`: on), in
    /// time order: a part's share ([`Splitting::Program`]).
    pub fn within(program: &Program, times: (u64, Option<u64>)) -> ProgramFacts {
        let mut facts = ProgramFacts::new(program).0.collect::<Vec<_>>();
        facts.retain(|f| f.time >= times.0 && times.1.is_none_or(|end| f.time < end));
        ProgramFacts(facts.into_iter())
    }
}

/// Bounds of the timeline; `None` means "from the input".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub from: Option<u64>,
    pub until: Option<u64>,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub first: Option<u64>,
    pub last: Option<u64>,
    pub time_points: u64,
    pub input_facts: u64,
    /// Facts outside the timeline.
    pub dropped: u64,
    pub skipped: SkipCounts,
    /// The dataflow engine's components (as `check --dump plan` lists them) with what each
    /// did on the workers of process 0, then the time outside them; empty unless asked for
    /// (`--stats`).
    pub components: Vec<ComponentStats>,
}

/// What one dataflow component did (see [`RunSummary::components`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentStats {
    /// The component as `check --dump plan` shows it.
    pub name: String,
    /// Its time scheduled, summed over the workers.
    pub time: std::time::Duration,
    /// The updates it output (+1 and −1 changes of its facts), summed over the workers;
    /// `None` for the time outside the components.
    pub records: Option<u64>,
}

impl RunSummary {
    /// Counts one written time point.
    pub fn time_point(&mut self, t: u64) {
        self.first.get_or_insert(t);
        self.last = Some(t);
        self.time_points += 1;
    }

    /// Counts the written time points `from..to`.
    pub fn time_points(&mut self, from: u64, to: u64) {
        if from < to {
            self.first.get_or_insert(from);
            self.last = Some(to - 1);
            self.time_points += to - from;
        }
    }

    /// Adds what the driver fed and what the sources skipped.
    pub fn add_input(&mut self, fed: Fed, sources: &[Box<dyn FactSource + '_>]) {
        self.input_facts = fed.input_facts;
        self.dropped = fed.dropped;
        self.skipped = skipped(sources);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Stream(#[from] Box<StreamError>),
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
    #[error("{0}")]
    Cluster(String),
    /// Stopped by a signal (its number) after the output of every completed time point
    /// was written.
    #[error("stopped by signal {0}")]
    Interrupted(i32),
    /// The evaluator could not go on (the STG engine's graph outgrew its budget); the
    /// output of every time point before was written.
    #[error("{0}")]
    Evaluation(Box<dyn std::error::Error + Send + Sync>),
}

impl RunError {
    /// Whether the run ends here as if its input had ended at the last complete time
    /// point: an input error, a stop or an evaluation that cannot go on leave every time
    /// point before written, so the end of the output (the intervals still open) is
    /// written too. A failed worker or output leaves nothing whole to end.
    pub fn ends_the_output(&self) -> bool {
        matches!(
            self,
            RunError::Stream(_) | RunError::Interrupted(_) | RunError::Evaluation(_)
        )
    }
}

impl From<crate::interrupt::Stop> for RunError {
    fn from(stop: crate::interrupt::Stop) -> RunError {
        match stop {
            crate::interrupt::Stop::Signal(signal) => RunError::Interrupted(signal),
            crate::interrupt::Stop::Cluster(message) => RunError::Cluster(message),
        }
    }
}

/// The next fact of `source`; a read that failed because the run is being stopped
/// reports the stop, not an input error.
fn next_fact(source: &mut Box<dyn FactSource + '_>) -> Result<Option<InputFact>, RunError> {
    source.next_fact().map_err(read_error)
}

/// A source's error as the run reports it: a read that failed because the run is being
/// stopped reports the stop.
fn read_error(error: Box<StreamError>) -> RunError {
    match crate::interrupt::requested() {
        Some(stop) => stop.into(),
        None => RunError::Stream(error),
    }
}

/// [`FactSource::take_at`] for a source whose facts wait in a queue (`pop` takes the next
/// one out): the queued facts at `time` moved into `out` without a call each, then read on
/// with [`FactSource::next_fact`] until a fact of a later time point, which is returned.
pub(crate) fn take_queued<S: FactSource + ?Sized>(
    source: &mut S,
    mut pop: impl FnMut(&mut S) -> Option<InputFact>,
    time: u64,
    out: &mut Vec<(PredId, Row)>,
) -> Result<Option<InputFact>, Box<StreamError>> {
    loop {
        while let Some(fact) = pop(source) {
            if fact.time != time {
                return Ok(Some(fact));
            }
            out.push((fact.pred, fact.args));
        }
        match source.next_fact()? {
            Some(fact) if fact.time == time => out.push((fact.pred, fact.args)),
            other => return Ok(other),
        }
    }
}

/// [`FactSource::take_at`] of `source`, its errors as [`next_fact`]'s.
fn take_at(
    source: &mut Box<dyn FactSource + '_>,
    time: u64,
    out: &mut Vec<(PredId, Row)>,
) -> Result<Option<InputFact>, RunError> {
    source.take_at(time, out).map_err(read_error)
}

/// What the timeline driver hands completed time points to.
pub trait TimePoints {
    /// Time point `t` is complete; these input facts hold at it.
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError>;
    /// The time points `from..to` (exclusive) are complete and have no input.
    /// A stop request ([`crate::interrupt`]) is seen between the time points of a quiet
    /// stretch too.
    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        for t in from..to {
            if t > from {
                if let Some(stop) = crate::interrupt::requested() {
                    return Err(stop.into());
                }
            }
            self.complete(t, Vec::new())?;
        }
        Ok(())
    }
}

/// Counts of what the driver fed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fed {
    pub input_facts: u64,
    pub dropped: u64,
}

struct Driver<'a, E, W: Write> {
    evaluator: &'a mut E,
    sink: &'a mut Sink<W>,
    outputs: Vec<PredId>,
    summary: RunSummary,
}

impl<E: Evaluator, W: Write> TimePoints for Driver<'_, E, W> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        let mut out = Vec::new();
        self.evaluator.step(t, input, &self.outputs, &mut out)?;
        self.summary.time_point(t);
        Ok(self.sink.emit(t, out)?)
    }

    /// Steps the time points of a quiet stretch until the evaluator settles, then
    /// skips the rest: what holds no longer changes.
    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        for t in from..to {
            if t > from {
                if let Some(stop) = crate::interrupt::requested() {
                    return Err(stop.into());
                }
            }
            if self.evaluator.settled() && !self.sink.writes_every_point() {
                self.evaluator.skip(to);
                self.summary.time_points(t, to);
                return Ok(self.sink.quiet(t, to)?);
            }
            self.complete(t, Vec::new())?;
        }
        Ok(())
    }
}

/// Runs `evaluator` over the merged `sources`, writing to `sink`.
pub fn drive<E: Evaluator, W: Write>(
    program: &Program,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    evaluator: &mut E,
    sink: &mut Sink<W>,
) -> Result<RunSummary, RunError> {
    let mut driver = Driver {
        evaluator,
        sink,
        outputs: program.output_predicates(),
        summary: RunSummary::default(),
    };
    let result = feed(program, sources, timeline, &mut driver);
    let mut summary = std::mem::take(&mut driver.summary);
    match result {
        Ok(fed) => {
            summary.add_input(fed, sources);
            driver.sink.finish()?;
            Ok(summary)
        }
        Err(error) => {
            // Keep what was produced: every evaluated time point is already written, and
            // the intervals still open end where the output does.
            let _ = match error.ends_the_output() {
                true => driver.sink.finish(),
                false => driver.sink.flush(),
            };
            Err(error)
        }
    }
}

/// The input sequences and tuple windows of a program ([`Program::input_sequences`],
/// [`Program::tuple_windows`]): every atom of the stream numbered in arrival order, a
/// numbered copy of each atom of a numbered predicate, and per window, at each time point
/// with atoms, the numbered atoms that leave it and the time of its oldest atom.
struct Numbering {
    /// Indexed by predicate id: the predicate of its numbered copies; empty when nothing
    /// is numbered (a time point then costs nothing here).
    targets: Vec<Option<PredId>>,
    /// The stream's atoms so far.
    count: i64,
    /// Per tuple window: the numbered atoms still in it, oldest first, each with the
    /// number of the first atom of its time point.
    windows: Vec<(TupleWindow, VecDeque<(i64, i64)>)>,
    /// Per time point with atoms, oldest first: its time and the numbers of its first and
    /// last atoms, as far back as the largest window reaches.
    times: VecDeque<(u64, i64, i64)>,
    largest: i64,
}

impl Numbering {
    fn new(program: &Program) -> Numbering {
        let mut targets = Vec::new();
        if !program.input_sequences.is_empty() {
            targets = vec![None; program.predicates.len()];
            for &(source, target) in &program.input_sequences {
                if let Some(slot) = targets.get_mut(source) {
                    *slot = Some(target);
                }
            }
        }
        let windows: Vec<(TupleWindow, VecDeque<(i64, i64)>)> = (program.tuple_windows.iter())
            .map(|window| (window.clone(), VecDeque::new()))
            .collect();
        let largest = (windows.iter())
            .map(|(window, _)| i64::from(window.size))
            .max()
            .unwrap_or(0);
        Numbering {
            targets,
            count: 0,
            windows,
            times: VecDeque::new(),
            largest,
        }
    }

    /// How many of a time point's `input` are facts of the program's predicates (not
    /// [`OTHER_ATOM`]s, which only programs with tuple windows are given).
    fn facts(&self, input: &[(PredId, Row)]) -> u64 {
        let others = if self.windows.is_empty() {
            0
        } else {
            input.iter().filter(|(pred, _)| *pred == OTHER_ATOM).count()
        };
        (input.len() - others) as u64
    }

    /// Appends to a time point's facts the numbered copy of each fact of a numbered
    /// predicate, in the order the facts came, and what the tuple windows give there;
    /// drops the atoms that no predicate takes ([`OTHER_ATOM`]) once they are counted.
    fn number(&mut self, time: u64, input: &mut Vec<(PredId, Row)>) {
        if self.targets.is_empty() && self.windows.is_empty() {
            return;
        }
        let stamp = Value::Int(i64::try_from(time).unwrap_or(i64::MAX));
        let atoms = input.len();
        let before = self.count;
        for i in 0..atoms {
            self.count += 1;
            let Some(&Some(target)) = self.targets.get(input[i].0) else {
                continue;
            };
            let mut row = Row::from_slice(&[Value::Int(self.count), stamp]);
            row.extend_from_slice(&input[i].1);
            input.push((target, row));
            for (_, numbers) in &mut self.windows {
                numbers.push_back((self.count, before + 1));
            }
        }
        input.retain(|(pred, _)| *pred != OTHER_ATOM);
        if atoms == 0 {
            return;
        }
        self.times.push_back((time, before + 1, self.count));
        for (window, numbers) in &mut self.windows {
            // The atoms numbered up to `out` are no longer among the last `size`; in Laser's
            // reading, the time points whose first atom is, counted up to the time point
            // before this one (whose atoms all stay).
            let out = match window.whole_points {
                false => self.count - i64::from(window.size),
                true => before - i64::from(window.size),
            };
            let leaves = |&(number, first): &(i64, i64)| match window.whole_points {
                false => number <= out,
                true => first <= out,
            };
            while let Some((number, _)) = numbers.front().copied().filter(leaves) {
                numbers.pop_front();
                input.push((window.evict, Row::from_slice(&[Value::Int(number)])));
            }
            let Some(start_pred) = window.start else {
                continue;
            };
            let at = match window.whole_points {
                false => self.times.partition_point(|&(_, _, last)| last <= out),
                true => self.times.partition_point(|&(_, first, _)| first <= out),
            };
            let start = self.times.get(at).map_or(time, |&(t, _, _)| t);
            let start = Value::Int(i64::try_from(start).unwrap_or(i64::MAX));
            input.push((start_pred, Row::from_slice(&[start])));
        }
        // A time point whose atoms are all older than the largest window's oldest is
        // no window's start any more.
        let oldest = self.count - self.largest + 1;
        while self.times.len() > 1
            && self
                .times
                .front()
                .is_some_and(|&(_, _, last)| last < oldest)
        {
            self.times.pop_front();
        }
    }
}

/// What the sources skipped (unknown predicates, wrong arities), added up.
pub fn skipped(sources: &[Box<dyn FactSource + '_>]) -> SkipCounts {
    let mut total = SkipCounts::default();
    for source in sources {
        total.merge(source.skipped());
    }
    total
}

/// Merges `sources` by time and hands every time point of the timeline, in order, to
/// `consumer` as soon as it is complete. `program`'s input sequences
/// ([`Program::input_sequences`]) number the facts as they are merged, so every engine
/// sees the same numbers.
pub fn feed(
    program: &Program,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    consumer: &mut impl TimePoints,
) -> Result<Fed, RunError> {
    let mut fed = Fed::default();
    let mut numbered = Numbering::new(program);
    let mut heads: Vec<Option<InputFact>> = Vec::with_capacity(sources.len());
    for source in sources.iter_mut() {
        heads.push(next_fact(source)?);
    }
    // Bounds not given explicitly come from the sources' declared timelines, if any.
    let declared: Vec<(u64, u64)> = sources
        .iter()
        .filter_map(|s| s.declared_timeline())
        .collect();
    let timeline = Timeline {
        from: timeline.from.or(declared.iter().map(|d| d.0).min()),
        until: timeline.until.or(declared.iter().map(|d| d.1).max()),
    };
    let first_input = heads.iter().flatten().map(|f| f.time).min();
    let Some(start) = timeline.from.or(first_input).or(timeline.until.map(|_| 0)) else {
        return Ok(fed);
    };
    let mut next_t = start;
    let mut last_seen: Option<u64> = None;
    // A time point's facts start at the size of the last one's: one allocation, not a
    // dozen doublings.
    let mut size = 0;
    while let Some(time) = heads.iter().flatten().map(|f| f.time).min() {
        if timeline.until.is_some_and(|until| time > until) {
            break;
        }
        last_seen = Some(time);
        // Every time point before the latest time read is complete: the quiet ones go
        // out now, before the facts of `time` are collected — which reads past them and,
        // on a live stream, waits for the next line.
        if next_t < time {
            consumer.quiet(next_t, time)?;
            next_t = time;
        }
        let mut input = Vec::with_capacity(size);
        for (source, head) in sources.iter_mut().zip(heads.iter_mut()) {
            if let Some(fact) = head.take_if(|f| f.time == time) {
                input.push((fact.pred, fact.args));
                *head = take_at(source, time, &mut input)?;
            }
        }
        size = input.len();
        if let Some(stop) = crate::interrupt::requested() {
            return Err(stop.into());
        }
        let atoms = numbered.facts(&input);
        if time < next_t {
            fed.dropped += atoms;
            continue;
        }
        fed.input_facts += atoms;
        numbered.number(time, &mut input);
        consumer.complete(time, input)?;
        next_t = time + 1;
    }
    if let Some(end) = timeline.until.or(last_seen) {
        if next_t <= end {
            consumer.quiet(next_t, end.saturating_add(1))?;
        }
    }
    Ok(fed)
}
