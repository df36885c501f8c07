//! Input streams: TD facts (`p(a, b, 7).`, time last), plain CSV (`time,pred,arg1,…`) and
//! RTEC's pipe-separated records and Laser streams (`t: p(a,b) q(c)`, see
//! [`FactReader::declared_timeline`]), read line by line from files or stdin.
//!
//! RTEC records come in three shapes, told apart by a per-name [`RtecShape`] in the
//! [`Schema`] (names not listed are events): events `name|arrival|time|arg…` become
//! `name(arg…)` at `time`; point fluents `name|arrival|time|value|arg…` become
//! `name(arg…, value)` at `time`; interval fluents `name|arrival|start|end|value|arg…`
//! become `name(arg…, value)` at every time point of `[start, end)`. The arrival field is
//! not used. Records must be ordered by their (start) time; interval facts are held back
//! until a later record's time passes them, so the facts handed out stay in time order.
//!
//! A reader may have a clock tick k ([`FactReader::with_tick`]): input time `t` is time
//! point `t / k` (RTEC's CAVIAR data has a frame every 40 ms); a time that is not a
//! multiple of k is an error.
//!
//! Ordered input is the contract: a time that goes backwards within one source is an
//! error naming the file, the line and both times. A malformed line is an error naming
//! file:line:column. Facts of predicates that the program never mentions, and facts whose
//! arity disagrees with the program, are skipped and counted (the command line reports
//! them as warnings), or are errors under [`Tolerance::strict`]. Times are at most
//! [`MAX_TIME`], so that `t + 1` and `t + offset` never overflow.
//!
//! **Lateness.** With [`Tolerance::lateness`] N, a fact may come up to N time points
//! behind the latest time seen so far in its source (the watermark is that time minus N).
//! Facts are held back, sorted by time, until the watermark passes them; so a reader
//! still hands out facts in time order, and the driver sees an ordered source. A fact
//! later than N is an error (E102), or is skipped and counted with
//! [`Tolerance::skip_late`]. The price: a time point's facts leave the reader only once a
//! fact N time points later has been read (or the input ends).

use std::fmt;
use std::io::BufRead;

use hashbrown::HashMap;

use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

pub mod parallel;

/// A fact read from a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct InputFact {
    pub pred: PredId,
    pub args: Row,
    pub time: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// `p(a, b, 7).`
    Td,
    /// `7,p,a,b`
    Csv,
    /// RTEC's `name|arrival|time|…` records (see the module docs).
    Rtec,
    /// Laser's stream files: `7: p(a,b) q(c) s` (see [`FactReader::declared_timeline`]).
    Laser,
}

/// How an RTEC record of a given name is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtecShape {
    /// `name|arrival|time|arg…`
    Event,
    /// `name|arrival|time|value|arg…`
    Point,
    /// `name|arrival|start|end|value|arg…`, holding on `[start, end)`.
    Interval,
}

impl StreamFormat {
    /// The format a file's extension implies: `.csv` is CSV, `.laser` and `.stream` are
    /// Laser streams, anything else TD facts.
    pub fn from_path(path: &str) -> StreamFormat {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".csv") {
            StreamFormat::Csv
        } else if lower.ends_with(".laser") || lower.ends_with(".stream") {
            StreamFormat::Laser
        } else {
            StreamFormat::Td
        }
    }
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

/// A malformed or out-of-order line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct StreamError {
    pub code: &'static str,
    pub file: String,
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The offending line, for the excerpt.
    pub text: String,
    pub help: Option<String>,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error[{}]: {}", self.code, self.message)?;
        writeln!(f, "  --> {}:{}:{}", self.file, self.line, self.column)?;
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        // At most EXCERPT characters of the line, around the column on a long line.
        const EXCERPT: usize = 200;
        let column = self.column.saturating_sub(1);
        let skip = column.saturating_sub(EXCERPT - 50);
        let mut shown: String = self.text.chars().skip(skip).take(EXCERPT).collect();
        let mut caret = column - skip;
        if skip > 0 {
            shown.insert(0, '…');
            caret += 1;
        }
        writeln!(f, "{pad} |")?;
        writeln!(f, "{number} | {shown}")?;
        write!(f, "{pad} | {}^", " ".repeat(caret))?;
        if let Some(help) = &self.help {
            write!(f, "\n{pad} = help: {help}")?;
        }
        Ok(())
    }
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

/// How many distinct unknown predicate names a reader remembers (garbage input would
/// otherwise grow the map without bound); the count covers them all.
pub const UNKNOWN_NAMES_KEPT: usize = 16;

impl SkipCounts {
    /// Adds `more` (another source's counts) to these.
    pub fn merge(&mut self, more: SkipCounts) {
        self.unknown += more.unknown;
        // In the order first seen, so that the names kept are the first ones when `more`
        // is the next stretch of the same file (see [`parallel`]).
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

/// Predicate names the program knows, with their object arity.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    preds: HashMap<String, (PredId, usize)>,
    /// The last predicate looked up, with its arity: streams mostly repeat a predicate,
    /// and comparing a name is cheaper than hashing it.
    last: Option<(PredId, usize)>,
    /// Names by predicate id.
    names: Vec<String>,
    /// Shapes of RTEC records by name; a name not here is an event.
    rtec: HashMap<String, RtecShape>,
}

impl Schema {
    pub fn new(program: &Program) -> Schema {
        Schema {
            preds: program
                .predicates
                .iter()
                .enumerate()
                .map(|(id, p)| (p.name.clone(), (id, p.arity)))
                .collect(),
            last: None,
            names: program.predicates.iter().map(|p| p.name.clone()).collect(),
            rtec: HashMap::new(),
        }
    }

    /// The predicate named `name` and its arity.
    fn lookup(&mut self, name: &str) -> Option<(PredId, usize)> {
        if let Some((pred, arity)) = self.last {
            if self.names.get(pred).is_some_and(|last| last == name) {
                return Some((pred, arity));
            }
        }
        let found = self.preds.get(name).copied()?;
        self.last = Some(found);
        Some(found)
    }

    /// Declares how RTEC records named `name` are laid out.
    pub fn with_rtec_shapes(
        mut self,
        shapes: impl IntoIterator<Item = (String, RtecShape)>,
    ) -> Schema {
        self.rtec.extend(shapes);
        self
    }
}

/// Reads facts from one source in order.
pub struct FactReader<R> {
    input: R,
    name: String,
    format: StreamFormat,
    schema: Schema,
    line: usize,
    buffer: Vec<u8>,
    /// Facts parsed from the current line not yet handed out (a TD line may hold several).
    pending: std::collections::VecDeque<InputFact>,
    /// The latest time point seen, and its line.
    latest: Option<(u64, usize)>,
    /// The first time point seen (by [`parallel`]: where a chunk starts in time).
    first: Option<u64>,
    /// Input time units per time point.
    tick: u64,
    tolerance: Tolerance,
    /// Facts not yet handed out, by the time point they are next due: late facts waiting
    /// for the watermark, and RTEC interval facts (each stays until its interval ends).
    held: std::collections::BTreeMap<u64, Vec<Held>>,
    pub skipped: SkipCounts,
    /// The `#timeline START END` of a Laser stream, as time points.
    timeline: Option<(u64, u64)>,
}

impl<R> fmt::Debug for FactReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FactReader")
            .field("name", &self.name)
            .field("line", &self.line)
            .finish()
    }
}

impl<R: BufRead> FactReader<R> {
    pub fn new(input: R, name: impl Into<String>, format: StreamFormat, schema: Schema) -> Self {
        FactReader {
            input,
            name: name.into(),
            format,
            schema,
            line: 0,
            buffer: Vec::new(),
            pending: Default::default(),
            latest: None,
            first: None,
            tick: 1,
            tolerance: Tolerance::default(),
            held: Default::default(),
            timeline: None,
            skipped: SkipCounts::default(),
        }
    }

    /// Reads input time `t` as time point `t / tick` (a tick of 0 counts as 1).
    pub fn with_tick(mut self, tick: u64) -> Self {
        self.tick = tick.max(1);
        self
    }

    /// Accepts late facts and unknown predicates as `tolerance` says.
    pub fn with_tolerance(mut self, tolerance: Tolerance) -> Self {
        self.tolerance = tolerance;
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A reader of `input`, from its start, with this one's name, format, schema, tick and
    /// tolerance.
    pub fn with_input<I: BufRead>(&self, input: I) -> FactReader<I> {
        FactReader::new(input, self.name.clone(), self.format, self.schema.clone())
            .with_tick(self.tick)
            .with_tolerance(self.tolerance)
    }

    /// The next fact, `None` at the end of the input.
    pub fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            if let Some(fact) = self.pending.pop_front() {
                return Ok(Some(fact));
            }
            self.buffer.clear();
            let read = self
                .input
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| StreamError {
                    code: "E103",
                    file: self.name.clone(),
                    line: self.line + 1,
                    column: 1,
                    message: format!("cannot read input: {e}"),
                    text: String::new(),
                    help: None,
                })?;
            if read == 0 {
                // One time point at a time: an interval may run for a very long time.
                let Some(first) = self.held.first_key_value().map(|(t, _)| *t) else {
                    return Ok(None);
                };
                self.release_held(first);
                continue;
            }
            self.line += 1;
            let buffer = std::mem::take(&mut self.buffer);
            let result = match std::str::from_utf8(&buffer) {
                Ok(text) => {
                    let text = text.trim_end_matches(['\n', '\r']);
                    match self.format {
                        StreamFormat::Td => self.parse_td_line(text),
                        StreamFormat::Csv => self.parse_csv_line(text),
                        StreamFormat::Rtec => self.parse_rtec_line(text),
                        StreamFormat::Laser => self.parse_laser_line(text),
                    }
                }
                Err(e) => Err(self.error(
                    String::from_utf8_lossy(&buffer).trim_end_matches(['\n', '\r']),
                    e.valid_up_to(),
                    "invalid UTF-8 in the input".to_owned(),
                    None,
                )),
            };
            self.buffer = buffer;
            result?;
        }
    }

    fn error(
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
            code: "E101",
            file: self.name.clone(),
            line: self.line,
            column,
            message,
            text: text.to_owned(),
            help,
        })
    }

    /// The time point of input time `time` under the reader's tick.
    fn scaled(&self, text: &str, time: u64, at: usize) -> Result<u64, Box<StreamError>> {
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

    /// Hands out the held facts due at time points up to `until`, in time order; an
    /// interval fact is due again at the next time point until its interval ends.
    fn release_held(&mut self, until: u64) {
        while let Some(entry) = self.held.first_entry() {
            let t = *entry.key();
            if t > until {
                break;
            }
            for held in entry.remove() {
                let next = t + 1;
                let again = (next < held.end).then(|| held.fact.clone());
                self.pending.push_back(InputFact {
                    time: t,
                    ..held.fact
                });
                if let Some(fact) = again {
                    self.held.entry(next).or_default().push(Held {
                        fact,
                        end: held.end,
                    });
                }
            }
        }
    }

    /// Queues a parsed fact after checking order, predicate and arity.
    fn accept(
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

    /// The time point below which no fact can come any more: the latest time seen minus
    /// the lateness.
    fn watermark(&self) -> u64 {
        self.latest
            .map_or(0, |(t, _)| t.saturating_sub(self.tolerance.lateness))
    }

    /// Moves the reader to input time `time` (scaled by the tick), checking the order and
    /// handing out the held facts the watermark has passed; returns the time point, or
    /// `None` when the line is too late and skipped (`facts` facts counted).
    fn advance(
        &mut self,
        text: &str,
        time: u64,
        at: usize,
        facts: u64,
    ) -> Result<Option<u64>, Box<StreamError>> {
        if time > MAX_TIME {
            return Err(self.error(
                text,
                at,
                format!("time {time} is too large (the limit is 2^63 - 1)"),
                None,
            ));
        }
        let time = self.scaled(text, time, at)?;
        if let Some((latest, latest_line)) = self.latest {
            if time < self.watermark() {
                if self.tolerance.skip_late {
                    self.skipped.late += facts;
                    if self.skipped.first_late.is_none() {
                        self.skipped.first_late = Some(format!("{}:{}", self.name, self.line));
                    }
                    return Ok(None);
                }
                return Err(self.late(text, at, time, latest, latest_line));
            }
        }
        if self.latest.is_none_or(|(latest, _)| time > latest) {
            self.latest = Some((time, self.line));
        }
        self.first.get_or_insert(time);
        self.release_held(self.watermark());
        Ok(Some(time))
    }

    /// The error for a fact at `time` behind the watermark.
    fn late(
        &self,
        text: &str,
        at: usize,
        time: u64,
        latest: u64,
        latest_line: usize,
    ) -> Box<StreamError> {
        let tick = self.tick;
        let lateness = self.tolerance.lateness;
        let mut error = if lateness == 0 {
            self.error(
                text,
                at,
                format!(
                    "time goes backwards: {} after {} (line {latest_line})",
                    time * tick,
                    latest * tick
                ),
                Some(
                    "streams must be ordered by time (`--lateness N` accepts facts up to N \
                     time points late)"
                        .to_owned(),
                ),
            )
        } else {
            self.error(
                text,
                at,
                format!(
                    "time {} is {} time point{} late, more than the lateness of {lateness}, \
                     after {} (line {latest_line})",
                    time * tick,
                    latest - time,
                    if latest - time == 1 { "" } else { "s" },
                    latest * tick
                ),
                Some("`--skip-late` skips such facts and counts them".to_owned()),
            )
        };
        error.code = "E102";
        error
    }

    /// Queues a fact holding on `[time, end)` if its predicate is known with this arity;
    /// else counts it as skipped, or under `strict` fails.
    fn queue(
        &mut self,
        text: &str,
        at: usize,
        name: &str,
        args: impl Into<Row>,
        time: u64,
        end: u64,
    ) -> Result<(), Box<StreamError>> {
        let args: Row = args.into();
        let Some((pred, arity)) = self.schema.lookup(name) else {
            return self.unknown(text, at, name);
        };
        if args.len() != arity {
            return self.wrong_arity(text, at, name, args.len(), arity);
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
            let help =
                stgflow_lang::diag::closest(name, self.schema.preds.keys().map(String::as_str))
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
            error.code = "E104";
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
            error.code = "E105";
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

    fn parse_td_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        if let Some((name, args, time)) = simple_td_fact(text) {
            return self.accept(text, name, Row::from_slice(&args), time, 0);
        }
        self.parse_td_general(text)
    }

    /// Any TD line: several facts, spaces, comments, every kind of constant, and the
    /// errors.
    fn parse_td_general(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let mut cursor = Cursor { text, pos: 0 };
        loop {
            cursor.skip_space();
            if cursor.at_end() || cursor.peek() == Some('%') {
                return Ok(());
            }
            let start = cursor.pos;
            let name = cursor.identifier().ok_or_else(|| {
                self.error(
                    text,
                    cursor.pos,
                    "expected a fact such as `p(a, 7).`".to_owned(),
                    None,
                )
            })?;
            cursor.skip_space();
            if !cursor.eat('(') {
                return Err(self.error(
                    text,
                    cursor.pos,
                    format!("expected `(` after `{name}`"),
                    Some(format!("a fact has its time last: `{name}(…, 7).`")),
                ));
            }
            // Inline for the usual few arguments: one allocation per fact, its own.
            let mut args: smallvec::SmallVec<[Value; 8]> = smallvec::SmallVec::new();
            let mut last_at;
            loop {
                cursor.skip_space();
                let at = cursor.pos;
                let value = cursor
                    .constant()
                    .map_err(|message| self.error(text, at, message, None))?;
                args.push(value);
                last_at = at;
                cursor.skip_space();
                if cursor.eat(',') {
                    continue;
                }
                if cursor.eat(')') {
                    break;
                }
                return Err(self.error(text, cursor.pos, "expected `,` or `)`".to_owned(), None));
            }
            cursor.skip_space();
            if !cursor.eat('.') {
                return Err(self.error(
                    text,
                    cursor.pos,
                    "expected `.` after the fact".to_owned(),
                    Some("every fact ends with `.`".to_owned()),
                ));
            }
            let time = args.pop().unwrap_or(Value::Int(-1));
            let time = self.time_of(text, time, last_at)?;
            self.accept(text, name, Row::from_slice(&args), time, start)?;
        }
    }

    fn time_of(&self, text: &str, value: Value, at: usize) -> Result<u64, Box<StreamError>> {
        match value {
            Value::Int(t) if t >= 0 => Ok(t as u64),
            other => Err(self.error(
                text,
                at,
                format!("the time must be a non-negative integer, found `{other}`"),
                Some("the last argument of a fact is its time point".to_owned()),
            )),
        }
    }

    fn parse_csv_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', '%']) {
            return Ok(());
        }
        if self.line == 1 && trimmed.to_ascii_lowercase().starts_with("time,") {
            return Ok(());
        }
        let fields = split_csv(text)
            .map_err(|at| self.error(text, at, "unterminated quoted field".to_owned(), None))?;
        let [(time_text, time_at), (pred, pred_at), rest @ ..] = fields.as_slice() else {
            return Err(self.error(
                text,
                text.len(),
                "expected at least two fields: `time,predicate,arg…`".to_owned(),
                None,
            ));
        };
        let time = match time_text.trim().parse::<u64>() {
            Ok(t) => t,
            Err(_) => {
                return Err(self.error(
                    text,
                    *time_at,
                    format!(
                        "the time must be a non-negative integer, found `{}`",
                        time_text.trim()
                    ),
                    Some("CSV lines read `time,predicate,arg1,…`".to_owned()),
                ));
            }
        };
        let pred = pred.trim();
        if pred.is_empty() {
            return Err(self.error(text, *pred_at, "empty predicate name".to_owned(), None));
        }
        let args: Row = rest.iter().map(|(field, _)| csv_value(field)).collect();
        let pred = pred.to_owned();
        self.accept(text, &pred, args, time, 0)
    }
}

impl<R: BufRead> FactReader<R> {
    fn parse_rtec_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', '%']) {
            return Ok(());
        }
        let mut fields = Vec::new();
        let mut start = 0;
        for part in text.split('|') {
            fields.push((part.trim(), start));
            start += part.len() + 1;
        }
        let (name, _) = fields[0];
        let shape = self
            .schema
            .rtec
            .get(name)
            .copied()
            .unwrap_or(RtecShape::Event);
        let (times, value_at) = match shape {
            RtecShape::Event => (1, None),
            RtecShape::Point => (1, Some(3)),
            RtecShape::Interval => (2, Some(4)),
        };
        let needed = 2 + times + usize::from(value_at.is_some());
        if name.is_empty() || fields.len() < needed {
            let layout = match shape {
                RtecShape::Event => "name|arrival|time|arg…",
                RtecShape::Point => "name|arrival|time|value|arg…",
                RtecShape::Interval => "name|arrival|start|end|value|arg…",
            };
            return Err(self.error(
                text,
                text.len(),
                format!("expected at least {needed} `|`-separated fields: `{layout}`"),
                (!name.is_empty()).then(|| format!("`{name}` records are read as `{layout}`")),
            ));
        }
        let number = |reader: &Self, (field, at): (&str, usize), what: &str| {
            field.parse::<u64>().map_err(|_| {
                reader.error(
                    text,
                    at,
                    format!("the {what} must be a non-negative integer, found `{field}`"),
                    Some("RTEC records read `name|arrival|time|…`".to_owned()),
                )
            })
        };
        number(self, fields[1], "arrival time")?;
        let time = number(self, fields[2], "time")?;
        let first_arg = 2 + times + usize::from(value_at.is_some());
        let mut args: Vec<Value> = fields[first_arg..]
            .iter()
            .map(|(field, _)| Value::parse_loose(field))
            .collect();
        if let Some(at) = value_at {
            args.push(Value::parse_loose(fields[at].0));
        }
        let name = name.to_owned();
        if shape != RtecShape::Interval {
            return self.accept(text, &name, args, time, fields[2].1);
        }
        let end = number(self, fields[3], "end time")?;
        let Some(first) = self.advance(text, time, fields[2].1, 1)? else {
            return Ok(());
        };
        let last = self.scaled(text, end.min(MAX_TIME), fields[3].1)?;
        if last <= first {
            return Ok(());
        }
        self.queue(text, 0, &name, args, first, last)
    }
}

/// Laser's stream format: an optional `#timeline START END` before the first time point,
/// then lines `t: atom atom …` with atoms `p(a,b)` or `s` written without spaces; other
/// lines starting with `#` and blank lines are ignored. Arguments are numbers when they
/// parse as numbers, symbols otherwise.
impl<R: BufRead> FactReader<R> {
    /// The timeline a Laser stream declares (`#timeline START END`, both included), once
    /// the line has been read; the driver runs every time point of it.
    pub fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.timeline
    }

    fn parse_laser_line(&mut self, text: &str) -> Result<(), Box<StreamError>> {
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len();
        if trimmed.is_empty() {
            return Ok(());
        }
        if let Some(rest) = trimmed.strip_prefix("#timeline") {
            return self.parse_laser_timeline(text, rest, text.len() - rest.len());
        }
        if trimmed.starts_with('#') {
            return Ok(());
        }
        let Some(colon) = trimmed.find(':') else {
            return Err(self.error(
                text,
                indent,
                "expected `t: atom atom …`".to_owned(),
                Some("Laser stream lines start with the time point and a colon".to_owned()),
            ));
        };
        let time_text = trimmed[..colon].trim();
        let Ok(time) = time_text.parse::<u64>() else {
            return Err(self.error(
                text,
                indent,
                format!("the time must be a non-negative integer, found `{time_text}`"),
                Some("Laser stream lines read `t: p(a,b) q(c)`".to_owned()),
            ));
        };
        let Some(time) = self.advance(text, time, indent, 0)? else {
            // A late line: its atoms are counted as skipped.
            self.skipped.late += text[indent + colon + 1..].split_whitespace().count() as u64;
            return Ok(());
        };
        for atom in text[indent + colon + 1..].split_ascii_whitespace() {
            // Byte offset of this atom in the line, for errors: `atom` is a part of `text`.
            let at = (atom.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
            let (name, args) = match simple_laser_atom(atom) {
                Some(parsed) => parsed,
                None => {
                    let (name, args) = self.laser_atom(text, atom, at)?;
                    (name, Row::from_slice(&args))
                }
            };
            self.queue(text, at, name, args, time, time + 1)?;
        }
        Ok(())
    }

    fn parse_laser_timeline(
        &mut self,
        text: &str,
        rest: &str,
        at: usize,
    ) -> Result<(), Box<StreamError>> {
        if self.latest.is_some() || self.timeline.is_some() {
            return Err(self.error(
                text,
                0,
                "`#timeline` must come once, before the first time point".to_owned(),
                None,
            ));
        }
        let bounds: Vec<Option<u64>> = rest.split_whitespace().map(|n| n.parse().ok()).collect();
        let [Some(start), Some(end)] = bounds[..] else {
            return Err(self.error(
                text,
                at,
                "expected `#timeline START END` with two non-negative integers".to_owned(),
                None,
            ));
        };
        if end < start {
            return Err(self.error(
                text,
                at,
                format!("the timeline ends ({end}) before it starts ({start})"),
                None,
            ));
        }
        let start = self.scaled(text, start, at)?;
        let end = self.scaled(text, end, at)?;
        self.timeline = Some((start, end));
        Ok(())
    }

    /// Splits `p(a,b)` into its name and arguments.
    fn laser_atom<'t>(
        &self,
        text: &str,
        atom: &'t str,
        at: usize,
    ) -> Result<(&'t str, smallvec::SmallVec<[Value; 8]>), Box<StreamError>> {
        let (name, args) = match atom.find('(') {
            None => (atom, None),
            Some(open) => {
                let Some(inner) = atom[open + 1..].strip_suffix(')') else {
                    return Err(self.error(
                        text,
                        at + atom.len(),
                        format!("expected `)` at the end of `{atom}`"),
                        Some("atoms are written without spaces: `p(a,b)`".to_owned()),
                    ));
                };
                (&atom[..open], Some(inner))
            }
        };
        let valid_name = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid_name {
            return Err(self.error(text, at, format!("`{name}` is not a predicate name"), None));
        }
        let args = match args {
            None | Some("") => smallvec::SmallVec::new(),
            Some(inner) => {
                let mut values = smallvec::SmallVec::new();
                let mut offset = at + name.len() + 1;
                for arg in inner.split(',') {
                    if arg.is_empty() || arg.contains(['(', ')']) {
                        return Err(self.error(
                            text,
                            offset,
                            format!("malformed argument in `{atom}`"),
                            Some(
                                "arguments are constants separated by `,` without spaces"
                                    .to_owned(),
                            ),
                        ));
                    }
                    values.push(Value::parse_loose(arg));
                    offset += arg.len() + 1;
                }
                values
            }
        };
        Ok((name, args))
    }
}

/// The usual Laser atom, `p` or `p(c1,…,cn)` with a name of letters, digits and `_` and
/// constants that are plain integers or bare symbols, read byte by byte; `None` for
/// anything else, which [`FactReader::laser_atom`] then reads (and reports).
fn simple_laser_atom(atom: &str) -> Option<(&str, Row)> {
    let bytes = atom.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let name_end = word_end(bytes, 0);
    let name = &atom[..name_end];
    if name_end == bytes.len() {
        return Some((name, Row::new()));
    }
    if bytes[name_end] != b'(' {
        return None;
    }
    let (args, close) = simple_args(atom, name_end + 1)?;
    (close + 1 == bytes.len()).then_some((name, args))
}

/// A fact waiting in a reader until it is due; it holds on `[fact.time, end)`.
#[derive(Clone, Debug)]
struct Held {
    fact: InputFact,
    end: u64,
}

/// A CSV field's value: quoted fields are symbols, others numbers when they parse.
fn csv_value(field: &str) -> Value {
    let trimmed = field.trim();
    match trimmed.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => Value::sym(&inner.replace("\"\"", "\"")),
        None => Value::parse_loose(trimmed),
    }
}

/// Splits a CSV line on commas outside double quotes; each field with its byte offset.
fn split_csv(text: &str) -> Result<Vec<(&str, usize)>, usize> {
    let mut fields = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut quote_start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '"' => {
                quoted = !quoted;
                quote_start = i;
            }
            ',' if !quoted => {
                fields.push((&text[start..i], start));
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(quote_start);
    }
    fields.push((&text[start..], start));
    Ok(fields)
}

/// Where a name (letters, digits, `_`) starting at `at` ends.
#[inline]
fn word_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        at += 1;
    }
    at
}

/// The constant at byte `at` of `text` and where it ends, when it is a plain decimal
/// integer (read by [`Cursor::small_integer`]) or a bare symbol (lower-case first, then
/// letters, digits and `_`); `None` for anything else. The fast paths of the TD and Laser
/// readers.
#[inline]
fn simple_constant(text: &str, at: usize) -> Option<(Value, usize)> {
    let bytes = text.as_bytes();
    let first = *bytes.get(at)?;
    if first.is_ascii_digit() {
        let mut cursor = Cursor { text, pos: at };
        let value = cursor.small_integer()?;
        Some((Value::Int(value), cursor.pos))
    } else if first.is_ascii_lowercase() {
        let end = word_end(bytes, at);
        Some((Value::sym(&text[at..end]), end))
    } else {
        None
    }
}

/// The simple constants `c1,…,cn)` from byte `at` of `text` (see [`simple_constant`]),
/// and where the `)` is; `None` for anything else. The argument lists of the TD and Laser
/// fast paths.
#[inline]
fn simple_args<A: smallvec::Array<Item = Value>>(
    text: &str,
    mut at: usize,
) -> Option<(smallvec::SmallVec<A>, usize)> {
    let mut args = smallvec::SmallVec::new();
    loop {
        let (value, end) = simple_constant(text, at)?;
        args.push(value);
        at = end;
        match text.as_bytes().get(at)? {
            b',' => at += 1,
            b')' => return Some((args, at)),
            _ => return None,
        }
    }
}

/// The usual TD fact line, `name(c1,…,cn,T).` with no spaces and constants that are plain
/// integers or bare symbols, read byte by byte: the name, the arguments and the time.
/// `None` for anything else — spaces, quotes, signs, floats, comments, several facts on a
/// line, every error — which the general parser then reads (and reports) from the start.
fn simple_td_fact(text: &str) -> Option<(&str, smallvec::SmallVec<[Value; 8]>, u64)> {
    let bytes = text.as_bytes();
    if !bytes.first()?.is_ascii_lowercase() {
        return None;
    }
    let name_end = word_end(bytes, 0);
    if bytes.get(name_end) != Some(&b'(') {
        return None;
    }
    let (mut args, close): (smallvec::SmallVec<[Value; 8]>, usize) =
        simple_args(text, name_end + 1)?;
    if &bytes[close + 1..] != b"." {
        return None;
    }
    let name = &text[..name_end];
    match args.pop()? {
        Value::Int(time) => Some((name, args, time as u64)),
        _ => None,
    }
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        match self.text.as_bytes().get(self.pos) {
            Some(&b) if b.is_ascii() => Some(char::from(b)),
            Some(_) => self.rest().chars().next(),
            None => None,
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek().filter(|c| c.is_whitespace()) {
            self.pos += c.len_utf8();
        }
    }

    /// A plain decimal integer that ends where a constant ends (not a float, not a
    /// symbol such as `12abc`), read without going through `str::parse`; `None` leaves
    /// the cursor where it was, for the general path.
    #[inline]
    fn small_integer(&mut self) -> Option<i64> {
        let bytes = self.text.as_bytes();
        let mut at = self.pos;
        let negative = bytes.get(at) == Some(&b'-');
        if negative {
            at += 1;
        }
        let start = at;
        let mut value: i64 = 0;
        while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
            at += 1;
        }
        let ends = bytes
            .get(at)
            .is_none_or(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')));
        if at == start || !ends {
            return None;
        }
        self.pos = at;
        Some(if negative { -value } else { value })
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|c: char| !keep(c)).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn identifier(&mut self) -> Option<&'a str> {
        if !matches!(self.peek(), Some(c) if c.is_ascii_lowercase()) {
            return None;
        }
        Some(self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'))
    }

    fn constant(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(c) if c.is_ascii_lowercase() => Ok(Value::sym(self.identifier().unwrap_or_default())),
            Some(c) if c.is_ascii_digit() || c == '-' => {
                if let Some(i) = self.small_integer() {
                    return Ok(Value::Int(i));
                }
                let text = self.take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
                let digits = text.strip_prefix('-').unwrap_or(text);
                if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && text.parse::<i64>().is_err() {
                    return Err(format!("integer `{text}` is too large (the limit is 2^63 - 1)"));
                }
                number(text).ok_or_else(|| format!("`{text}` is not a number"))
            }
            Some('"') => {
                self.pos += 1;
                let mut value = String::new();
                loop {
                    let Some(c) = self.peek() else {
                        return Err("unterminated string".to_owned());
                    };
                    self.pos += c.len_utf8();
                    match c {
                        '"' => return Ok(Value::sym(&value)),
                        '\\' => {
                            let Some(next) = self.peek() else {
                                return Err("unterminated string".to_owned());
                            };
                            self.pos += next.len_utf8();
                            value.push(match next {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        c => value.push(c),
                    }
                }
            }
            Some(c) if c.is_ascii_uppercase() || c == '_' => {
                Err("variables are not allowed in stream facts (constants start lower-case, or are quoted)".to_owned())
            }
            Some(c) => Err(format!("expected a constant, found `{}`", c.escape_debug())),
            None => Err("expected a constant, found the end of the line".to_owned()),
        }
    }
}

/// An integer or a float literal (a trailing `.` ends the fact, so `7.` is the integer 7
/// only when the cursor stops before it: digits followed by `.` then a non-digit).
fn number(text: &str) -> Option<Value> {
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::Int(i));
    }
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Value::Float)
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    fn read_all(text: &str, format: StreamFormat) -> Result<Vec<InputFact>, Box<StreamError>> {
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

    proptest::proptest! {
        /// Whatever line the byte-level fast path accepts, the general parser reads as
        /// the same fact (and it accepts the usual lines).
        #[test]
        fn simple_td_facts_read_as_the_general_parser_reads_them(
            line in "[pqs(][a-z0-9_(),. -]{0,14}",
        ) {
            let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
            let schema = Schema::new(&compiled.program);
            let mut reader = FactReader::new(&b""[..], "in", StreamFormat::Td, schema);
            let general = reader.parse_td_general(&line);
            if let Some((name, args, time)) = simple_td_fact(&line) {
                proptest::prop_assert!(general.is_ok(), "{line}: {general:?}");
                let facts: Vec<InputFact> = reader.pending.drain(..).collect();
                match reader.schema.lookup(name) {
                    Some((pred, arity)) if arity == args.len() => {
                        proptest::prop_assert_eq!(facts.len(), 1, "{}", line);
                        proptest::prop_assert_eq!(facts[0].pred, pred);
                        proptest::prop_assert_eq!(&facts[0].args[..], &args[..]);
                        proptest::prop_assert_eq!(facts[0].time, time);
                    }
                    _ => proptest::prop_assert!(facts.is_empty(), "{}", line),
                }
            }
        }
    }

    proptest::proptest! {
        /// Whatever atom the byte-level Laser fast path accepts, the general reader
        /// splits into the same name and arguments.
        #[test]
        fn simple_laser_atoms_read_as_the_general_reader_reads_them(
            atom in "[pqA(][a-zA-Z0-9_(),.-]{0,12}",
        ) {
            let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T).");
            let reader =
                FactReader::new(&b""[..], "in", StreamFormat::Laser, Schema::new(&compiled.program));
            if let Some((name, args)) = simple_laser_atom(&atom) {
                let general = reader.laser_atom(&atom, &atom, 0);
                proptest::prop_assert!(general.is_ok(), "{atom}: {general:?}");
                let (general_name, general_args) = general.unwrap_or_else(|_| unreachable!());
                proptest::prop_assert_eq!(name, general_name);
                proptest::prop_assert_eq!(&args[..], &general_args[..]);
            }
        }
    }

    #[test]
    fn simple_td_fact_takes_the_usual_lines_only() {
        let (name, args, time) = simple_td_fact("p(12,ab_3,7).").unwrap_or_else(|| panic!());
        assert_eq!(
            (name, &args[..], time),
            ("p", &[Value::Int(12), Value::sym("ab_3")][..], 7)
        );
        for general in [
            "p(1, 2).",
            "p(1,2). % c",
            "p(-1,2).",
            "p(1.5,2).",
            "p(\"a\",2).",
            "p(1,2)",
            "p(a,b).",
            "p(1,2).q(3).",
            "P(1,2).",
            "p(12a,2).",
        ] {
            assert!(simple_td_fact(general).is_none(), "{general}");
        }
    }

    #[test]
    fn td_facts_several_per_line_with_comments() {
        let facts = read_all(
            "p(a, 1, 3). s(3).  % c\n\np(\"x y\", -2.5, 4).\n",
            StreamFormat::Td,
        )
        .unwrap_or_default();
        assert_eq!(facts.len(), 3);
        assert_eq!(facts[2].args[..], [Value::sym("x y"), Value::Float(-2.5)]);
        assert_eq!(facts[2].time, 4);
    }

    #[test]
    fn a_fact_ending_in_an_integer_then_dot_reads_the_integer() {
        let facts = read_all("s(7).", StreamFormat::Td).unwrap_or_default();
        assert_eq!(facts[0].time, 7);
    }

    #[test]
    fn csv_lines() {
        let facts =
            read_all("time,pred,a,b\n1,p,a,2\n2,s\n", StreamFormat::Csv).unwrap_or_default();
        assert_eq!(facts.len(), 2);
        assert_eq!(facts[0].args[..], [Value::sym("a"), Value::Int(2)]);
    }

    fn read_rtec(text: &str, tick: u64) -> Result<Vec<String>, Box<StreamError>> {
        let compiled = compile_str(
            "p.tdl",
            "o(T) :- appear(X, T), walking(X, V, T), fast(X, Y, V, T).",
        );
        let schema = Schema::new(&compiled.program).with_rtec_shapes([
            ("walking".to_owned(), RtecShape::Point),
            ("fast".to_owned(), RtecShape::Interval),
        ]);
        let mut reader =
            FactReader::new(text.as_bytes(), "in", StreamFormat::Rtec, schema).with_tick(tick);
        let mut facts = Vec::new();
        while let Some(fact) = reader.next_fact()? {
            let args: Vec<String> = fact.args.iter().map(ToString::to_string).collect();
            let name = compiled.program.pred_name(fact.pred);
            facts.push(format!("{name}({})@{}", args.join(","), fact.time));
        }
        Ok(facts)
    }

    #[test]
    fn rtec_records_by_shape_with_intervals_expanded_in_order() {
        let facts = read_rtec(
            "appear|0|0|id0\nfast|9|2|6|very|id0|bus\nwalking|3|3|true|id0\nappear|9|9|id1\n",
            1,
        );
        assert_eq!(
            facts.unwrap_or_default(),
            [
                "appear(id0)@0",
                "fast(id0,bus,very)@2",
                "fast(id0,bus,very)@3",
                "walking(id0,true)@3",
                "fast(id0,bus,very)@4",
                "fast(id0,bus,very)@5",
                "appear(id1)@9",
            ]
        );
    }

    #[test]
    fn rtec_times_are_divided_by_the_tick() {
        let facts = read_rtec("appear|40|40|a\nfast|120|80|160|x|a|b\n", 40);
        assert_eq!(
            facts.unwrap_or_default(),
            ["appear(a)@1", "fast(a,b,x)@2", "fast(a,b,x)@3"]
        );
        let error = read_rtec("appear|40|41|a\n", 40).err();
        assert!(error.is_some_and(|e| e.code == "E101" && e.message.contains("tick 40")));
        let backwards = read_rtec("appear|80|80|a\nappear|40|40|a\n", 40).err();
        assert!(backwards.is_some_and(|e| e.code == "E102" && e.message.contains("40 after 80")));
        let short = read_rtec("walking|1|1\n", 1).err();
        assert!(short.is_some_and(|e| e.message.contains("name|arrival|time|value|arg")));
    }

    #[test]
    fn laser_lines_with_a_declared_timeline() {
        let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
        let text = "#timeline 0 9\n# note\n1: p(a,2) s\n\n3:\n4: s p(\"x\",-2.5) unknown(z)\n";
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in.laser",
            StreamFormat::from_path("in.laser"),
            Schema::new(&compiled.program),
        );
        let mut facts = Vec::new();
        while let Ok(Some(fact)) = reader.next_fact() {
            facts.push((
                compiled.program.pred_name(fact.pred).to_owned(),
                fact.args.to_vec(),
                fact.time,
            ));
        }
        assert_eq!(reader.declared_timeline(), Some((0, 9)));
        assert_eq!(reader.skipped.unknown, 1);
        assert_eq!(
            facts,
            [
                ("p".to_owned(), vec![Value::sym("a"), Value::Int(2)], 1),
                ("s".to_owned(), vec![], 1),
                ("s".to_owned(), vec![], 4),
                (
                    "p".to_owned(),
                    vec![Value::sym("\"x\""), Value::Float(-2.5)],
                    4
                ),
            ]
        );
        for (bad, column) in [
            ("1: p(a,b\n", 9),
            ("x: p(a)\n", 1),
            ("1 p(a)\n", 1),
            ("2: p(a)\n#timeline 0 3\n", 1),
            ("#timeline 5\n", 10),
            ("1: p(a,,b)\n", 8),
        ] {
            let mut reader = FactReader::new(
                bad.as_bytes(),
                "in",
                StreamFormat::Laser,
                Schema::new(&compiled.program),
            );
            let error = std::iter::from_fn(|| reader.next_fact().transpose()).find_map(Result::err);
            assert_eq!(
                error.map(|e| (e.code, e.column)),
                Some(("E101", column)),
                "{bad}"
            );
        }
    }

    fn read_with(text: &str, tolerance: Tolerance) -> Result<Vec<u64>, Box<StreamError>> {
        let compiled = compile_str("p.tdl", "r(T) :- s(T).");
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in",
            StreamFormat::Td,
            Schema::new(&compiled.program),
        )
        .with_tolerance(tolerance);
        std::iter::from_fn(|| reader.next_fact().transpose())
            .map(|fact| fact.map(|f| f.time))
            .collect()
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
    fn an_interval_to_the_end_of_time_is_handed_out_lazily() {
        let text = format!("fast|0|2|{MAX_TIME}|v|a|b\nappear|0|4|a\n");
        let compiled = compile_str("p.tdl", "o(T) :- appear(X, T), fast(X, Y, V, T).");
        let schema = Schema::new(&compiled.program)
            .with_rtec_shapes([("fast".to_owned(), RtecShape::Interval)]);
        let mut reader = FactReader::new(text.as_bytes(), "in", StreamFormat::Rtec, schema);
        let times: Vec<u64> = std::iter::from_fn(|| reader.next_fact().ok().flatten())
            .take(8)
            .map(|f| f.time)
            .collect();
        assert_eq!(times, [2, 3, 4, 4, 5, 6, 7, 8]);
        let huge = read_all("p(a, b, 9223372036854775808).", StreamFormat::Td).err();
        assert!(huge.is_some_and(|e| e.message.contains("too large")));
    }

    #[test]
    fn errors_name_line_and_column() {
        let error = read_all("s(1).\np(a b, 2).\n", StreamFormat::Td).err();
        let error = error.map(|e| (e.code, e.line, e.column));
        assert_eq!(error, Some(("E101", 2, 5)));
        let backwards = read_all("s(5).\ns(3).\n", StreamFormat::Td).err();
        assert!(
            backwards.is_some_and(|e| e.code == "E102" && e.message.contains("3 after 5 (line 1)"))
        );
    }
}
