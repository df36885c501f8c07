//! Input streams, read line by line from files or stdin (or in blocks of lines on
//! threads, [`blocks`]), in one of the [`Format`]s registered with a [`Formats`] table:
//! TD facts (`p(a, b, 7).`, time last, [`td`]) and plain CSV (`time,pred,arg1,…`,
//! [`csv`]) are built in; a front end registers the formats of its users' streams.
//!
//! A format parses one line at a time into facts through a [`ReaderState`], which owns
//! what holds across lines and is the same for every format:
//!
//! * **Ordered input is the contract.** A time that goes backwards within one source is an
//!   error naming the file, the line and both times. A malformed line is an error naming
//!   file:line:column. Times are at most [`MAX_TIME`], so that `t + 1` and `t + offset`
//!   never overflow.
//! * **Unknown names.** Facts of predicates that the program never mentions, and facts
//!   whose arity disagrees with the program, are skipped and counted (the command line
//!   reports them as warnings), or are errors under [`Tolerance::strict`].
//! * **Clock ticks.** A reader may have a clock tick k ([`FactReader::with_tick`]): input
//!   time `t` is time point `t / k`; a time that is not a multiple of k is an error.
//! * **Lateness** ([`order`]). With [`Tolerance::lateness`] N, a fact may come up to N
//!   time points behind the latest time seen so far in its source. Facts are held back,
//!   sorted by time, until the watermark passes them; so a reader still hands out facts in
//!   time order. A fact later than N is an error (E102), or is skipped and counted with
//!   [`Tolerance::skip_late`]. The price: a time point's facts leave the reader only once
//!   a fact N time points later has been read (or the input ends).
//! * **Facts that hold for a while.** A format may queue a fact holding on an interval
//!   `[start, end)` ([`ReaderState::queue`]): it is handed out at every time point of it,
//!   one at a time, in time order with the rest.
//! * **Declared timelines.** A format may declare the timeline its stream covers
//!   ([`ReaderState::declare_timeline`]); the driver then runs every time point of it.

pub mod blocks;
pub mod columnar;
pub mod csv;
pub mod cursor;
mod error;
mod format;
pub mod order;
pub mod split;
pub mod td;

use std::fmt;
use std::io::BufRead;
use std::sync::Arc;

use hashbrown::HashMap;

use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::symbols::{self, Clock};
use stgflow_lang::value::{Row, Value};

pub use error::{Code, StreamError};
pub use format::{Format, Formats};

use order::Held;

/// A fact read from a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct InputFact {
    pub pred: PredId,
    pub args: Row,
    pub time: u64,
}

/// The largest time accepted in a stream: 2^63 - 1, the largest TD integer.
pub const MAX_TIME: u64 = i64::MAX as u64;

/// How a reader treats input that breaks the contract.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tolerance {
    /// Time points a fact may arrive behind the latest time seen (`--lateness N`).
    pub lateness: u64,
    /// Skip and count facts later than `lateness` instead of failing (`--skip-late`).
    pub skip_late: bool,
    /// Unknown predicates and wrong arities are errors, not counted skips (`--strict`).
    pub strict: bool,
}

/// Counts of facts that were read but not used.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts {
    /// Facts of predicates the program does not mention.
    pub unknown: u64,
    /// The first [`UNKNOWN_NAMES_KEPT`] unknown predicate names: (facts, first location).
    pub unknown_names: HashMap<String, (u64, String)>,
    /// Per predicate name: (arity seen, facts skipped, first location).
    pub wrong_arity: HashMap<String, (usize, u64, String)>,
    /// Facts more than the lateness behind (with `skip_late`), and the first location.
    pub late: u64,
    pub first_late: Option<String>,
}

/// [`SkipCounts`] as they travel between processes.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SentSkips {
    unknown: u64,
    unknown_names: Vec<(String, (u64, String))>,
    wrong_arity: Vec<(String, (usize, u64, String))>,
    late: u64,
    first_late: Option<String>,
}

impl From<&SkipCounts> for SentSkips {
    fn from(skipped: &SkipCounts) -> SentSkips {
        SentSkips {
            unknown: skipped.unknown,
            unknown_names: (skipped.unknown_names.iter())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            wrong_arity: (skipped.wrong_arity.iter())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            late: skipped.late,
            first_late: skipped.first_late.clone(),
        }
    }
}

impl From<SentSkips> for SkipCounts {
    fn from(sent: SentSkips) -> SkipCounts {
        SkipCounts {
            unknown: sent.unknown,
            unknown_names: sent.unknown_names.into_iter().collect(),
            wrong_arity: sent.wrong_arity.into_iter().collect(),
            late: sent.late,
            first_late: sent.first_late,
        }
    }
}

/// How many distinct unknown predicate names a reader remembers (garbage input would
/// otherwise grow the map without bound); the count covers them all.
pub const UNKNOWN_NAMES_KEPT: usize = 16;

impl SkipCounts {
    /// Adds `more` (another source's counts) to these.
    pub fn merge(&mut self, more: SkipCounts) {
        self.unknown += more.unknown;
        // In the order first seen, so that the names kept are the first ones when `more`
        // is the next stretch of the same file (see [`blocks`]).
        let mut names: Vec<_> = more.unknown_names.into_iter().collect();
        names.sort_by_key(|(_, (_, first))| line_of(first));
        for (name, (count, first)) in names {
            if self.unknown_names.len() < UNKNOWN_NAMES_KEPT
                || self.unknown_names.contains_key(&name)
            {
                self.unknown_names.entry(name).or_insert((0, first)).0 += count;
            }
        }
        for (name, (arity, count, first)) in more.wrong_arity {
            self.wrong_arity.entry(name).or_insert((arity, 0, first)).1 += count;
        }
        self.late += more.late;
        if self.first_late.is_none() {
            self.first_late = more.first_late;
        }
    }
}

/// The line number of a `file:line` location (0 when there is none).
fn line_of(location: &str) -> usize {
    location
        .rsplit_once(':')
        .and_then(|(_, line)| line.parse().ok())
        .unwrap_or(0)
}

/// Appends `input`'s next line, with its newline, to `line`; the bytes read (0 at the
/// end). [`BufRead::read_until`], with a vectorised search for the newline.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut read = 0;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let (taken, ended) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), buffer.is_empty()),
        };
        line.extend_from_slice(&buffer[..taken]);
        input.consume(taken);
        read += taken;
        if ended {
            return Ok(read);
        }
    }
}

/// The predicate of a stream atom that no predicate of the program takes (an unknown
/// name, another arity), given as a fact without arguments where the program counts every
/// atom of the stream ([`Schema::counts_all`]): the timeline driver counts it and drops
/// it.
pub const OTHER_ATOM: PredId = PredId::MAX;

/// Predicate names the program knows, with their object arity.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    preds: HashMap<String, (PredId, usize)>,
    /// Whether the stream's atoms that no predicate takes are given as [`OTHER_ATOM`]
    /// facts besides being counted as skipped (a program with LARS tuple windows, which
    /// count every atom of the stream: [`Program::tuple_windows`]).
    counts_all: bool,
    /// The last predicate looked up, with its arity: streams mostly repeat a predicate,
    /// and comparing a name is cheaper than hashing it.
    last: Option<(PredId, usize)>,
    /// Names by predicate id.
    names: Vec<String>,
    /// Where the stream's long symbols are stamped for freeing ([`Schema::stamping`]).
    stamps: Option<Arc<Stamps>>,
}

/// How a run's readers stamp the long symbols of its facts: the reach of each predicate
/// ([`stgflow_lang::reach`]), and the clock of the run that holds the facts, kept alive
/// with the readers.
#[derive(Debug)]
struct Stamps {
    reach: Arc<[Option<u64>]>,
    clock: Clock,
}

impl Stamps {
    /// Stamps the long symbols of a fact of `pred` that holds until time point `last`;
    /// out of line, off the readers' path for facts without them.
    #[inline(never)]
    fn stamp(&self, pred: PredId, args: &[Value], last: u64) {
        let until = match self.reach.get(pred).copied().flatten() {
            Some(reach) => last.saturating_add(reach),
            None => u64::MAX,
        };
        for value in args {
            if let Value::Sym(sym) = value {
                sym.stamp(until, &self.clock);
            }
        }
    }
}

impl Schema {
    pub fn new(program: &Program) -> Schema {
        let mut preds: HashMap<String, (PredId, usize)> = program
            .predicates
            .iter()
            .enumerate()
            .map(|(id, p)| (p.name.clone(), (id, p.arity)))
            .collect();
        let mut names: Vec<String> = program.predicates.iter().map(|p| p.name.clone()).collect();
        for (name, target) in &program.input_names {
            preds.remove(name);
            if let Some(&id) = target.as_ref() {
                if let Some(p) = program.predicates.get(id) {
                    preds.insert(name.clone(), (id, p.arity));
                    names[id].clone_from(name);
                }
            }
        }
        Schema {
            preds,
            counts_all: !program.tuple_windows.is_empty(),
            last: None,
            names,
            stamps: None,
        }
    }

    /// The schema of readers whose facts `clock`'s run holds: each long symbol of a fact
    /// is stamped with the last time point it can be held at, so that the table of long
    /// symbols frees it once the clock has passed (see [`stgflow_lang::value::symbols`]).
    /// Without this, a reader's long symbols stay for the process's life.
    pub fn stamping(mut self, program: &Program, clock: Clock) -> Schema {
        self.stamps = Some(Arc::new(Stamps {
            reach: stgflow_lang::reach::symbol_reach(program).into(),
            clock,
        }));
        self
    }

    /// Where readers stamp their long symbols, stamping for `clock`'s run instead (a part
    /// of the run evaluated on its own, with a clock of its own).
    pub fn restamp(&mut self, clock: &Clock) {
        if let Some(stamps) = &self.stamps {
            self.stamps = Some(Arc::new(Stamps {
                reach: stamps.reach.clone(),
                clock: clock.clone(),
            }));
        }
    }

    /// Whether readers stamp their long symbols.
    pub fn stamps(&self) -> bool {
        self.stamps.is_some()
    }

    /// The names the program knows.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.preds.keys().map(String::as_str)
    }

    /// The predicate named `name` and its arity.
    pub fn lookup(&mut self, name: &str) -> Option<(PredId, usize)> {
        if let Some((pred, arity)) = self.last {
            if self.names.get(pred).is_some_and(|last| last == name) {
                return Some((pred, arity));
            }
        }
        let found = self.preds.get(name).copied()?;
        self.last = Some(found);
        Some(found)
    }
}

/// Reads facts from one source in order: the input, and the [`ReaderState`] its format
/// parses each line into (a `FactReader` derefs to its state).
pub struct FactReader<R> {
    input: R,
    format: Arc<dyn Format>,
    buffer: Vec<u8>,
    state: ReaderState,
}

/// What holds across the lines of one stream, whatever its format: where the reader is,
/// the time order and lateness, facts waiting to be handed out, what was skipped. A
/// [`Format`] parses each line into facts through it.
#[derive(Clone, Debug)]
pub struct ReaderState {
    name: String,
    pub(crate) schema: Schema,
    pub(crate) line: usize,
    /// Facts parsed from the current line not yet handed out (a line may hold several).
    pub(crate) pending: std::collections::VecDeque<InputFact>,
    /// The latest time point seen, and its line.
    pub(crate) latest: Option<(u64, usize)>,
    /// The first time point seen (by [`blocks`]: where a block starts in time).
    pub(crate) first: Option<u64>,
    /// Input time units per time point.
    tick: u64,
    tolerance: Tolerance,
    /// Facts not yet handed out, by the time point they are next due: late facts waiting
    /// for the watermark, and facts holding on an interval (each stays until it ends).
    held: std::collections::BTreeMap<u64, Vec<Held>>,
    pub skipped: SkipCounts,
    /// The timeline the stream declares, as time points.
    pub(crate) timeline: Option<(u64, u64)>,
}

impl<R> fmt::Debug for FactReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactReader")
            .field("name", &self.state.name)
            .field("format", &self.format.name())
            .field("line", &self.state.line)
            .finish()
    }
}

impl<R> std::ops::Deref for FactReader<R> {
    type Target = ReaderState;

    fn deref(&self) -> &ReaderState {
        &self.state
    }
}

impl<R> std::ops::DerefMut for FactReader<R> {
    fn deref_mut(&mut self) -> &mut ReaderState {
        &mut self.state
    }
}

impl<R: BufRead> FactReader<R> {
    /// A reader of `input` in `format`; `name` is how errors refer to it, `schema` the
    /// predicates the program knows.
    pub fn new(input: R, name: impl Into<String>, format: Arc<dyn Format>, schema: Schema) -> Self {
        FactReader {
            input,
            format,
            buffer: Vec::new(),
            state: ReaderState {
                name: name.into(),
                schema,
                line: 0,
                pending: Default::default(),
                latest: None,
                first: None,
                tick: 1,
                tolerance: Tolerance::default(),
                held: Default::default(),
                skipped: SkipCounts::default(),
                timeline: None,
            },
        }
    }

    /// Reads input time `t` as time point `t / tick` (a tick of 0 counts as 1).
    pub fn with_tick(mut self, tick: u64) -> Self {
        self.state.tick = tick.max(1);
        self
    }

    /// Accepts late facts and unknown predicates as `tolerance` says.
    pub fn with_tolerance(mut self, tolerance: Tolerance) -> Self {
        self.state.tolerance = tolerance;
        self
    }

    /// The stream's format.
    pub fn format(&self) -> &Arc<dyn Format> {
        &self.format
    }

    /// A reader of `input`, from its start, with this one's name, format, schema, tick and
    /// tolerance.
    pub fn with_input<I: BufRead>(&self, input: I) -> FactReader<I> {
        FactReader::new(
            input,
            self.state.name.clone(),
            self.format.clone(),
            self.state.schema.clone(),
        )
        .with_tick(self.state.tick)
        .with_tolerance(self.state.tolerance)
    }

    /// The reader's state alone (its settings, nothing read yet), for a source that is not
    /// made of lines (`columnar`).
    pub(crate) fn into_state(self) -> ReaderState {
        self.state
    }

    /// The next fact, `None` at the end of the input.
    pub fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            if let Some(fact) = self.state.pending.pop_front() {
                return Ok(Some(fact));
            }
            self.buffer.clear();
            let read = read_line(&mut self.input, &mut self.buffer).map_err(|e| StreamError {
                code: Code::E103.as_str(),
                file: self.state.name.clone(),
                line: self.state.line + 1,
                column: 1,
                message: format!("cannot read input: {e}"),
                text: String::new(),
                help: None,
            })?;
            if read == 0 {
                // One time point at a time: an interval may run for a very long time.
                let Some(first) = self.state.held.first_key_value().map(|(t, _)| *t) else {
                    return Ok(None);
                };
                self.state.release_held(first);
                continue;
            }
            self.state.line += 1;
            let buffer = std::mem::take(&mut self.buffer);
            let result = match std::str::from_utf8(&buffer) {
                Ok(text) => {
                    let text = text.trim_end_matches(['\n', '\r']);
                    if self.state.schema.stamps() {
                        symbols::holding(|| self.format.parse_line(text, &mut self.state))
                    } else {
                        self.format.parse_line(text, &mut self.state)
                    }
                }
                Err(e) => Err(self.state.error(
                    String::from_utf8_lossy(&buffer).trim_end_matches(['\n', '\r']),
                    e.valid_up_to(),
                    "invalid UTF-8 in the input".to_owned(),
                    Some(
                        "streams are UTF-8 text; a compressed file is read decompressed when its name ends in `.gz` or `.zst`"
                            .to_owned(),
                    ),
                )),
            };
            self.buffer = buffer;
            result?;
        }
    }
}

impl ReaderState {
    /// How errors refer to the stream (its file name, or `<stdin>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of the line being parsed, from 1.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Whether a time has been read from the stream yet.
    pub fn has_times(&self) -> bool {
        self.latest.is_some()
    }

    /// The first and the latest time point of the lines read so far (lines skipped as
    /// too late aside); `None` before the first. A reader of a later part of a stream,
    /// started on its own, reads it as the whole stream's reader would where its first
    /// time is not behind the latest before it (see [`blocks`]).
    pub fn times_read(&self) -> Option<(u64, u64)> {
        Some((self.first?, self.latest?.0))
    }

    /// The timeline the stream declares (first and last time point, both included), once
    /// the line declaring it has been read; the driver runs every time point of it.
    pub fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.timeline
    }

    /// Declares the timeline the stream covers, in input time units (scaled by the tick
    /// here); `text` and `at` locate a time that is not on a tick.
    pub fn declare_timeline(
        &mut self,
        text: &str,
        at: usize,
        start: u64,
        end: u64,
    ) -> Result<(), Box<StreamError>> {
        let start = self.scaled(text, start, at)?;
        let end = self.scaled(text, end, at)?;
        self.timeline = Some((start, end));
        Ok(())
    }

    /// Counts `facts` facts of a line too late to be read (under `--skip-late`), after
    /// [`ReaderState::advance`] has said so.
    pub fn count_late(&mut self, facts: u64) {
        self.skipped.late += facts;
    }

    /// An E101 error at byte `byte` of the line `text`.
    pub fn error(
        &self,
        text: &str,
        byte: usize,
        message: String,
        help: Option<String>,
    ) -> Box<StreamError> {
        let column = text
            .get(..byte.min(text.len()))
            .map_or(byte, |s| s.chars().count())
            + 1;
        Box::new(StreamError {
            code: Code::E101.as_str(),
            file: self.name.clone(),
            line: self.line,
            column,
            message,
            text: text.to_owned(),
            help,
        })
    }

    /// The time point of input time `time` under the reader's tick.
    pub fn scaled(&self, text: &str, time: u64, at: usize) -> Result<u64, Box<StreamError>> {
        if time % self.tick == 0 {
            Ok(time / self.tick)
        } else {
            Err(self.error(
                text,
                at,
                format!(
                    "time {time} is not a multiple of the clock tick {}",
                    self.tick
                ),
                Some("every input time must fall on a tick (`--tick`)".to_owned()),
            ))
        }
    }

    /// Queues a fact parsed from `text` (at byte `at`), holding at input time `time`,
    /// after checking order, predicate and arity.
    pub fn accept(
        &mut self,
        text: &str,
        name: &str,
        args: impl Into<Row>,
        time: u64,
        at: usize,
    ) -> Result<(), Box<StreamError>> {
        let Some(time) = self.advance(text, time, at, 1)? else {
            return Ok(());
        };
        self.queue(text, at, name, args, time, time + 1)
    }

    /// Queues a fact holding on the time points `[time, end)` (already scaled and
    /// ordered, see [`ReaderState::advance`]) if its predicate is known with this arity;
    /// else counts it as skipped, or under `strict` fails.
    pub fn queue(
        &mut self,
        text: &str,
        at: usize,
        name: &str,
        args: impl Into<Row>,
        time: u64,
        end: u64,
    ) -> Result<(), Box<StreamError>> {
        let args: Row = args.into();
        let (pred, args) = match self.schema.lookup(name) {
            None => {
                self.unknown(text, at, name)?;
                (OTHER_ATOM, Row::new())
            }
            Some((_, arity)) if args.len() != arity => {
                self.wrong_arity(text, at, name, args.len(), arity)?;
                (OTHER_ATOM, Row::new())
            }
            Some((pred, _)) => (pred, args),
        };
        if pred == OTHER_ATOM && !self.schema.counts_all {
            return Ok(());
        }
        if let Some(stamps) = self.schema.stamps.as_ref().filter(|_| symbols::holds_any()) {
            stamps.stamp(pred, &args, end - 1);
        }
        let fact = InputFact { pred, args, time };
        if time <= self.watermark() && end == time + 1 {
            self.pending.push_back(fact);
        } else {
            self.held.entry(time).or_default().push(Held { fact, end });
        }
        Ok(())
    }

    fn unknown(&mut self, text: &str, at: usize, name: &str) -> Result<(), Box<StreamError>> {
        if self.tolerance.strict {
            let help = stgflow_lang::diag::closest(name, self.schema.names())
                .map(|close| format!("did you mean `{close}`?"))
                .or(Some(
                    "without `--strict` such facts are skipped and counted".to_owned(),
                ));
            let mut error = self.error(
                text,
                at,
                format!("the program has no predicate `{name}`"),
                help,
            );
            error.code = Code::E104.as_str();
            return Err(error);
        }
        self.skipped.unknown += 1;
        let kept = self.skipped.unknown_names.len();
        if let Some(entry) = self.skipped.unknown_names.get_mut(name) {
            entry.0 += 1;
        } else if kept < UNKNOWN_NAMES_KEPT {
            let location = format!("{}:{}", self.name, self.line);
            self.skipped
                .unknown_names
                .insert(name.to_owned(), (1, location));
        }
        Ok(())
    }

    fn wrong_arity(
        &mut self,
        text: &str,
        at: usize,
        name: &str,
        seen: usize,
        arity: usize,
    ) -> Result<(), Box<StreamError>> {
        if self.tolerance.strict {
            let mut error = self.error(
                text,
                at,
                format!(
                    "`{name}` has {} argument{} here, but the program uses it with {}",
                    seen + 1,
                    if seen == 0 { "" } else { "s" },
                    arity + 1
                ),
                Some(
                    "the time counts as an argument; without `--strict` such facts are \
                     skipped and counted"
                        .to_owned(),
                ),
            );
            error.code = Code::E105.as_str();
            return Err(error);
        }
        let location = format!("{}:{}", self.name, self.line);
        let entry =
            self.skipped
                .wrong_arity
                .entry(name.to_owned())
                .or_insert((seen + 1, 0, location));
        entry.1 += 1;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    pub(crate) fn read_all(
        text: &str,
        format: std::sync::Arc<dyn Format>,
    ) -> Result<Vec<InputFact>, Box<StreamError>> {
        let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in",
            format,
            Schema::new(&compiled.program),
        );
        let mut facts = Vec::new();
        while let Some(fact) = reader.next_fact()? {
            facts.push(fact);
        }
        Ok(facts)
    }

    /// A TD reader of `text` for the program `r(T) :- s(T).`
    fn s_reader(text: &str) -> FactReader<&[u8]> {
        let compiled = compile_str("p.tdl", "r(T) :- s(T).");
        FactReader::new(
            text.as_bytes(),
            "in",
            Arc::new(td::Td),
            Schema::new(&compiled.program),
        )
    }

    fn read_with(text: &str, tolerance: Tolerance) -> Result<Vec<u64>, Box<StreamError>> {
        let mut reader = s_reader(text).with_tolerance(tolerance);
        std::iter::from_fn(|| reader.next_fact().transpose())
            .map(|fact| fact.map(|f| f.time))
            .collect()
    }

    /// One line's facts at several time points wait together: `take_at` moves those of
    /// its time point only and hands back the first after them, the rest read on later.
    #[test]
    fn take_at_moves_a_time_points_facts_and_hands_back_the_next() {
        use crate::drive::FactSource;
        let mut reader = s_reader("s(1). s(1). s(2). s(2).\ns(2). s(3).\ns(4).\n");
        let mut times = Vec::new();
        let mut head = reader.next_fact().ok().flatten();
        while let Some(first) = head {
            let mut at = vec![(first.pred, first.args)];
            head = reader.take_at(first.time, &mut at).ok().flatten();
            times.push((first.time, at.len()));
        }
        assert_eq!(times, vec![(1, 2), (2, 3), (3, 1), (4, 1)]);
    }

    #[test]
    fn late_facts_within_the_lateness_come_out_in_time_order() {
        let late = |lateness, skip_late| Tolerance {
            lateness,
            skip_late,
            strict: false,
        };
        let text = "s(3). s(1). s(5). s(4). s(3). s(7).\n";
        assert_eq!(
            read_with(text, late(2, false)).ok(),
            Some(vec![1, 3, 3, 4, 5, 7])
        );
        let error = read_with(text, late(1, false)).err();
        assert!(
            error.is_some_and(|e| e.code == "E102" && e.message.contains("2 time points late"))
        );
        assert_eq!(read_with(text, late(1, true)).ok(), Some(vec![3, 4, 5, 7]));
    }

    #[test]
    fn strict_makes_unknown_predicates_and_wrong_arities_errors() {
        let strict = Tolerance {
            strict: true,
            ..Tolerance::default()
        };
        let unknown = read_with("s(1).\nss(2).\n", strict).err();
        assert!(unknown.is_some_and(|e| e.code == "E104"
            && e.line == 2
            && e.help.is_some_and(|h| h.contains("`s`"))));
        let arity = read_with("s(1).\ns(a, 2).\n", strict).err();
        assert!(arity.is_some_and(|e| e.code == "E105" && e.message.contains("2 arguments")));
        assert_eq!(
            read_with("s(1).\nss(2).\ns(a, 2).\n", Tolerance::default()).ok(),
            Some(vec![1])
        );
    }

    #[test]
    fn errors_name_line_and_column() {
        let error = read_all("s(1).\np(a b, 2).\n", std::sync::Arc::new(td::Td)).err();
        let error = error.map(|e| (e.code, e.line, e.column));
        assert_eq!(error, Some(("E101", 2, 5)));
        let backwards = read_all("s(5).\ns(3).\n", std::sync::Arc::new(td::Td)).err();
        assert!(
            backwards.is_some_and(|e| e.code == "E102" && e.message.contains("3 after 5 (line 1)"))
        );
    }
}
