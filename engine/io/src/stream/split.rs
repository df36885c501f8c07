//! A stream file read in parts, each the facts of a range of time points, each part by
//! its own reader on any thread: no thread reads the whole file.
//!
//! * **Searched by time.** A file in time order is searched for the first line of a time
//!   point ([`SplitFile::offset_of`]: a binary search over its lines, reading a line or
//!   two at each probe), so a part's bytes are found without reading the bytes before.
//! * **Three stages per part** ([`Part`]). *Before*: the lines of the time points just
//!   before the part's own, which an evaluation reads to warm up; their skips and errors
//!   are an earlier part's to report. *Own*: the part's time points, with the file's line
//!   numbers, its skips and its errors. *After*: the first fact past the part, which the
//!   sequential reader reads ahead to know that the part's last time point is complete,
//!   so a malformed line there stops the run where it stops the sequential one. The time
//!   order carries from stage to stage, so a time that goes backwards across a part's
//!   start or end is the same error as line by line.
//! * **Misplaced facts.** A binary search trusts the file's order. A part whose facts do
//!   not lie in its range says so ([`Part::misplaced`]): the file is out of order there
//!   or before, the parts from it on cannot be trusted, and the caller reads the rest of
//!   the file as one part, whose reader then meets the disorder as the sequential reader
//!   does. Parts before it that found nothing wrong read exactly their time points.
//! * Only what a line alone decides is read this way: formats whose lines read alone
//!   ([`super::Format::reads_in_blocks`]), no lateness, an uncompressed regular file.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::Range;
use std::sync::Arc;

use super::columnar::{Columnar, RowFile};
use super::{FactReader, InputFact, ReaderState, SkipCounts, StreamError};
use crate::drive::{FactSource, Splitting};
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;
use stgflow_lang::value::symbols::Clock;

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

/// Bytes a probe of the search reads at a time.
const PROBE: usize = 1 << 12;

/// A search narrows to this many bytes, then reads them line by line.
const SCAN: u64 = 1 << 12;

/// A stream to be read in parts by time: a regular file in a format whose lines read
/// alone, or a columnar stream, whose rows are its lines.
#[derive(Clone, Debug)]
pub struct SplitFile(Layout);

#[derive(Clone, Debug)]
enum Layout {
    /// Offsets are bytes.
    Text(TextFile),
    /// Offsets are row numbers.
    Rows(Arc<RowFile>),
}

/// A text file read in parts: offsets are bytes, each a line start.
#[derive(Clone)]
struct TextFile {
    file: Arc<File>,
    len: u64,
    like: Arc<FactReader<io::Empty>>,
}

impl std::fmt::Debug for TextFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextFile")
            .field("name", &self.like.name())
            .field("len", &self.len)
            .finish()
    }
}

/// How a file starts ([`SplitFile::head`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The time of its first fact.
    pub first: Option<u64>,
    /// The timeline it declares before it.
    pub timeline: Option<(u64, u64)>,
}

/// Where a [`Part`] reads (byte offsets into the file, each a line start) and which time
/// points are its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartRange {
    /// The first byte of the lines read before the part's own (its warm-up).
    pub before: u64,
    /// The part's own lines.
    pub own: Range<u64>,
    /// The file's lines before `own.start` and before `own.end`.
    pub lines: (usize, usize),
    /// The time points of the lines read before its own: from this one on.
    pub warm_from: u64,
    /// Its own time points: from `times.0`, up to `times.1` (excluded; `None`: to the end).
    pub times: (u64, Option<u64>),
}

impl SplitFile {
    /// The text file `file`, to be read as `like` reads (its name, format, schema, tick and
    /// tolerance).
    pub fn new(file: File, like: FactReader<io::Empty>) -> io::Result<SplitFile> {
        let len = file.metadata()?.len();
        Ok(SplitFile(Layout::Text(TextFile {
            file: Arc::new(file),
            len,
            like: Arc::new(like),
        })))
    }

    /// A columnar stream, read in parts by rows.
    pub fn rows(rows: RowFile) -> SplitFile {
        SplitFile(Layout::Rows(Arc::new(rows)))
    }

    /// The stream's name, as errors give it.
    pub fn name(&self) -> &str {
        match &self.0 {
            Layout::Text(text) => text.like.name(),
            Layout::Rows(rows) => rows.name(),
        }
    }

    /// The end of its offsets: a text file's length in bytes, a columnar stream's rows.
    pub fn len(&self) -> u64 {
        match &self.0 {
            Layout::Text(text) => text.len,
            Layout::Rows(rows) => rows.rows(),
        }
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What its parts are sized by: its bytes as text (a columnar stream's, estimated).
    pub fn weight(&self) -> u64 {
        match &self.0 {
            Layout::Text(text) => text.len,
            Layout::Rows(rows) => rows.weight(),
        }
    }

    /// How it starts: the time of its first fact, and the timeline it declares before it
    /// (a columnar stream declares none).
    pub fn head(&self) -> io::Result<Head> {
        match &self.0 {
            Layout::Text(text) => text.head(),
            Layout::Rows(rows) => Ok(Head {
                first: rows.first_time(),
                timeline: None,
            }),
        }
    }

    /// The time of its last fact.
    pub fn last_time(&self) -> io::Result<Option<u64>> {
        match &self.0 {
            Layout::Text(text) => text.last_time(),
            Layout::Rows(rows) => Ok(rows.last_time()),
        }
    }

    /// The time of the first fact (row with a time) at or after offset `at`.
    pub fn time_near(&self, at: u64) -> io::Result<Option<u64>> {
        match &self.0 {
            Layout::Text(text) => text.time_near(at),
            Layout::Rows(rows) => Ok(rows.time_from(at..rows.rows())?.map(|(_, t)| t)),
        }
    }

    /// The first offset in `within` of a fact at `time` or later, where the stream is in
    /// time order (`within.end` if none).
    pub fn offset_of(&self, time: u64, within: Range<u64>) -> io::Result<u64> {
        match &self.0 {
            Layout::Text(text) => text.offset_of(time, within),
            Layout::Rows(rows) => rows.offset_of(time, within),
        }
    }

    /// The lines (rows) in `range`.
    pub fn lines(&self, range: Range<u64>) -> io::Result<usize> {
        match &self.0 {
            Layout::Text(text) => text.lines(range),
            Layout::Rows(_) => Ok((range.end - range.start) as usize),
        }
    }

    /// A reader of the part `range`.
    pub fn part(&self, range: PartRange) -> Part {
        // The warm-up starts as if it had read a time already (its errors are an earlier
        // part's); its own lines start with the time order the whole file's reader has
        // there.
        let started = (range.before > 0).then_some((range.warm_from.min(range.times.0), 0));
        Part {
            file: self.clone(),
            stage: if range.before < range.own.start {
                Stage::Before
            } else {
                Stage::Own
            },
            range,
            reader: None,
            latest: started,
            timeline: None,
            skipped: SkipCounts::default(),
            misplaced: false,
            clock: None,
        }
    }

    /// The time order a reader of the whole stream carries at offset `at`, after `lines`
    /// lines (see [`TextFile::latest_before`]).
    fn latest_before(&self, at: u64, lines: usize) -> io::Result<Option<(u64, usize)>> {
        match &self.0 {
            Layout::Text(text) => text.latest_before(at, lines),
            Layout::Rows(rows) => rows.latest_before(at),
        }
    }
}

impl TextFile {
    /// Up to `len` bytes from `at` (fewer at the end of the file).
    fn bytes(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len.min(self.len.saturating_sub(at) as usize)];
        let mut filled = 0;
        while filled < buf.len() {
            match read_at(&self.file, &mut buf[filled..], at + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(filled);
        Ok(buf)
    }

    /// The start of the first line that starts at or after `at`.
    fn line_start(&self, at: u64) -> io::Result<u64> {
        if at == 0 {
            return Ok(0);
        }
        let mut from = at - 1;
        while from < self.len {
            let bytes = self.bytes(from, PROBE)?;
            if let Some(end) = bytes.iter().position(|&b| b == b'\n') {
                return Ok(from + end as u64 + 1);
            }
            from += bytes.len() as u64;
        }
        Ok(self.len)
    }

    /// The line that starts at `at` (a line start), with its end.
    fn line(&self, at: u64) -> io::Result<(Vec<u8>, u64)> {
        let mut line = Vec::new();
        let mut from = at;
        while from < self.len {
            let bytes = self.bytes(from, PROBE.max(line.len()))?;
            match bytes.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    line.extend_from_slice(&bytes[..=end]);
                    return Ok((line, from + end as u64 + 1));
                }
                None => {
                    from += bytes.len() as u64;
                    line.extend_from_slice(&bytes);
                }
            }
        }
        Ok((line, self.len))
    }

    /// The first line holding a fact at or after the line start `at`, before `end`: its
    /// start, its end and the fact's time. Each line is read on its own (one that does
    /// not parse holds no fact).
    fn fact_from(&self, at: u64, end: u64) -> io::Result<Option<(u64, u64, u64)>> {
        let mut reader = self.like.with_input(io::Cursor::new(Vec::new()));
        let mut start = at;
        while start < end {
            let (text, next) = self.line(start)?;
            if let Some(time) = time_of(&mut reader, text) {
                return Ok(Some((start, next, time)));
            }
            start = next;
        }
        Ok(None)
    }

    /// How the file starts: the time of its first fact, and the timeline it declares
    /// before it (read as the whole file's reader reads its first lines; a malformed
    /// line first gives no time: the first part stops at it, whatever the timeline).
    fn head(&self) -> io::Result<Head> {
        let bytes = Bytes {
            file: self.file.clone(),
            at: 0,
            end: self.len,
        };
        let mut reader = self.like.with_input(BufReader::with_capacity(PROBE, bytes));
        let first = reader.next_fact().ok().flatten().map(|fact| fact.time);
        Ok(Head {
            first,
            timeline: reader.declared_timeline(),
        })
    }

    /// The time of the last fact in the file, found by reading back from its end.
    fn last_time(&self) -> io::Result<Option<u64>> {
        let mut end = self.len;
        while end > 0 {
            let from = end.saturating_sub(PROBE as u64);
            let start = self.line_start(from)?;
            let start = if start >= end {
                self.back_to_line(from)?
            } else {
                start
            };
            let mut last = None;
            let mut at = start;
            let mut reader = self.like.with_input(io::Cursor::new(Vec::new()));
            while at < end {
                let (text, next) = self.line(at)?;
                last = time_of(&mut reader, text).or(last);
                at = next;
            }
            if last.is_some() {
                return Ok(last);
            }
            end = start;
        }
        Ok(None)
    }

    /// The start of the line holding byte `at` (a long line's start, read back to it).
    fn back_to_line(&self, at: u64) -> io::Result<u64> {
        let mut to = at;
        while to > 0 {
            let from = to.saturating_sub(PROBE as u64);
            let bytes = self.bytes(from, (to - from) as usize)?;
            if let Some(end) = bytes.iter().rposition(|&b| b == b'\n') {
                return Ok(from + end as u64 + 1);
            }
            to = from;
        }
        Ok(0)
    }

    /// The time of the first fact at or after byte `at`: where a file of facts in time
    /// order is at a fraction of its length.
    fn time_near(&self, at: u64) -> io::Result<Option<u64>> {
        let start = self.line_start(at)?;
        Ok(self.fact_from(start, self.len)?.map(|(_, _, time)| time))
    }

    /// The start of the first line in `within` (line starts) holding a fact at `time` or
    /// later, or `within.end` if none does, where the file is in time order; the lines
    /// before it that hold no fact go with the facts before them.
    fn offset_of(&self, time: u64, within: Range<u64>) -> io::Result<u64> {
        let (mut lo, mut hi) = (within.start, within.end.min(self.len));
        // Invariant: every fact that starts in [within.start, lo) is before `time`, and
        // the first at or after `hi` (if any before within.end) is at `time` or later.
        while hi.saturating_sub(lo) > SCAN {
            let mid = self.line_start(lo + (hi - lo) / 2)?;
            match self.fact_from(mid, hi)? {
                Some((start, end, t)) if t < time => lo = end.max(start + 1),
                Some((start, _, _)) => hi = start,
                None => hi = mid,
            }
        }
        let mut at = lo;
        let mut reader = self.like.with_input(io::Cursor::new(Vec::new()));
        while at < hi {
            let (text, next) = self.line(at)?;
            if time_of(&mut reader, text).is_some_and(|t| t >= time) {
                return Ok(at);
            }
            at = next;
        }
        Ok(hi)
    }

    /// The time order the whole file's reader carries at `at` (a line start, after
    /// `lines` lines): the latest time of the lines before, and the line where it was
    /// first read; found by reading back from `at` over the lines of that time.
    fn latest_before(&self, at: u64, lines: usize) -> io::Result<Option<(u64, usize)>> {
        let mut reader = self.like.with_input(io::Cursor::new(Vec::new()));
        let mut latest: Option<(u64, usize)> = None;
        let (mut end, mut line) = (at, lines);
        while end > 0 {
            let start = self.back_to_line(end - 1)?;
            let (text, _) = self.line(start)?;
            match (read_line(&mut reader, text).1, latest) {
                (Some(time), None) => latest = Some((time, line)),
                (Some(time), Some((t, _))) if time == t => latest = Some((t, line)),
                (Some(_), Some(_)) => break,
                (None, _) => {}
            }
            end = start;
            line = line.saturating_sub(1);
        }
        Ok(latest)
    }

    /// The lines in `range` (line ends counted).
    fn lines(&self, range: Range<u64>) -> io::Result<usize> {
        let mut count = 0;
        let mut at = range.start;
        while at < range.end {
            let len = ((range.end - at) as usize).min(1 << 16);
            let bytes = self.bytes(at, len)?;
            if bytes.is_empty() {
                break;
            }
            count += bytes.iter().filter(|&&b| b == b'\n').count();
            at += bytes.len() as u64;
        }
        Ok(count)
    }
}

/// The time of the fact on the line `text`, if it holds one, read by `reader` as a line
/// on its own (a line that does not parse holds none).
fn time_of(reader: &mut FactReader<io::Cursor<Vec<u8>>>, text: Vec<u8>) -> Option<u64> {
    read_line(reader, text).0
}

/// Reads the line `text` with `reader` as a line on its own: the time of its fact, and the
/// time the line moves the reader to, fact or not (a fact of a predicate the program does
/// not know is skipped, but its time counts in the time order).
fn read_line(
    reader: &mut FactReader<io::Cursor<Vec<u8>>>,
    text: Vec<u8>,
) -> (Option<u64>, Option<u64>) {
    reader.input = io::Cursor::new(text);
    reader.state.pending.clear();
    reader.state.latest = None;
    reader.state.timeline = None;
    let fact = reader.next_fact().ok().flatten().map(|fact| fact.time);
    (fact, reader.state.latest.map(|(t, _)| t))
}

/// A file's bytes from one offset to another, read where they lie.
struct Bytes {
    file: Arc<File>,
    at: u64,
    end: u64,
}

impl Read for Bytes {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let len = (buf.len() as u64).min(self.end - self.at) as usize;
        if len == 0 {
            return Ok(0);
        }
        let n = read_at(&self.file, &mut buf[..len], self.at)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Which of its lines a [`Part`] reads now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Before,
    Own,
    After,
    Done,
}

/// The facts of one part of a [`SplitFile`] (see the module docs), a [`FactSource`].
pub struct Part {
    file: SplitFile,
    range: PartRange,
    stage: Stage,
    reader: Option<StageReader>,
    /// The time order carried from stage to stage: the latest time and its line.
    latest: Option<(u64, usize)>,
    timeline: Option<(u64, u64)>,
    /// What the part's own lines skipped.
    skipped: SkipCounts,
    misplaced: bool,
    /// The clock its readers stamp long symbols for, where not the file's run's.
    clock: Option<Clock>,
}

/// The reader of a part's stage: lines of a text file, or rows of a columnar stream.
enum StageReader {
    Text(Box<FactReader<BufReader<Bytes>>>),
    Rows(Box<Columnar>),
}

impl StageReader {
    fn state(&self) -> &ReaderState {
        match self {
            StageReader::Text(reader) => reader,
            StageReader::Rows(reader) => reader.state(),
        }
    }

    fn state_mut(&mut self) -> &mut ReaderState {
        match self {
            StageReader::Text(reader) => reader,
            StageReader::Rows(reader) => reader.state_mut(),
        }
    }

    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        match self {
            StageReader::Text(reader) => reader.next_fact(),
            StageReader::Rows(reader) => reader.next_fact(),
        }
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        match self {
            StageReader::Text(reader) => FactSource::take_at(&mut **reader, time, out),
            StageReader::Rows(reader) => reader.take_at(time, out),
        }
    }
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Part")
            .field("file", &self.file)
            .field("range", &self.range)
            .field("stage", &self.stage)
            .finish()
    }
}

impl Part {
    /// The part with its readers stamping long symbols for `clock`, the clock of the
    /// part's own evaluation (where the file's readers stamp at all).
    pub fn clocked(mut self, clock: Clock) -> Part {
        self.clock = Some(clock);
        self
    }

    /// Whether a fact of the part lay outside its range: the file is out of time order
    /// there or before it (see the module docs).
    pub fn misplaced(&self) -> bool {
        self.misplaced
    }

    /// The reader of the current stage, made when first asked for.
    fn reader(&mut self) -> Option<&mut StageReader> {
        if self.reader.is_none() {
            if self.stage == Stage::Own && self.range.own.start > 0 {
                // A read that fails here fails again at the same place, as the part reads on.
                let (at, lines) = (self.range.own.start, self.range.lines.0);
                self.latest = self.file.latest_before(at, lines).unwrap_or(self.latest);
            }
            let range = &self.range;
            let (from, to, lines) = match self.stage {
                Stage::Before => (range.before, range.own.start, 0),
                Stage::Own => (range.own.start, range.own.end, range.lines.0),
                Stage::After => (range.own.end, self.file.len(), range.lines.1),
                Stage::Done => return None,
            };
            let mut reader = match &self.file.0 {
                Layout::Text(text) => {
                    let bytes = Bytes {
                        file: text.file.clone(),
                        at: from,
                        end: to,
                    };
                    let mut reader = text
                        .like
                        .with_input(BufReader::with_capacity(1 << 16, bytes));
                    reader.line = lines;
                    StageReader::Text(Box::new(reader))
                }
                // A row's line is its number in the whole file, however it is read.
                Layout::Rows(rows) => StageReader::Rows(Box::new(rows.reader(from..to))),
            };
            let state = reader.state_mut();
            state.latest = self.latest;
            state.timeline = self.timeline;
            if let Some(clock) = &self.clock {
                state.schema.restamp(clock);
            }
            self.reader = Some(reader);
        }
        self.reader.as_mut()
    }

    /// Ends the current stage: its reader's time order carries on to the next.
    fn next_stage(&mut self) {
        if let Some(mut reader) = self.reader.take() {
            let state = reader.state_mut();
            self.latest = state.latest;
            self.timeline = state.timeline;
            if self.stage == Stage::Own {
                self.skipped = std::mem::take(&mut state.skipped);
            }
        }
        self.stage = match self.stage {
            Stage::Before => Stage::Own,
            Stage::Own if self.range.times.1.is_some() => Stage::After,
            _ => Stage::Done,
        };
    }

    /// Whether a fact at `time` belongs in the current stage.
    fn in_stage(&self, time: u64) -> bool {
        let (start, end) = self.range.times;
        match self.stage {
            Stage::Before => time >= self.range.warm_from && time < start,
            Stage::Own => time >= start && end.is_none_or(|end| time < end),
            Stage::After => end.is_none_or(|end| time >= end),
            Stage::Done => false,
        }
    }

    /// Ends the part where a fact lies outside its range.
    fn misplace(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        self.misplaced = true;
        self.reader = None;
        self.stage = Stage::Done;
        Ok(None)
    }

    /// The next fact after the part: the only one the last stage hands out.
    fn fact_after(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        let Some(reader) = self.reader() else {
            return Ok(None);
        };
        let fact = reader.next_fact()?;
        self.reader = None;
        self.stage = Stage::Done;
        match fact {
            Some(fact) if !self.in_after(fact.time) => self.misplace(),
            other => Ok(other),
        }
    }

    fn in_after(&self, time: u64) -> bool {
        self.range.times.1.is_none_or(|end| time >= end)
    }
}

impl FactSource for Part {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            match self.stage {
                Stage::Done => return Ok(None),
                Stage::After => return self.fact_after(),
                Stage::Before | Stage::Own => {}
            }
            let Some(reader) = self.reader() else {
                return Ok(None);
            };
            match reader.next_fact()? {
                Some(fact) if self.in_stage(fact.time) => return Ok(Some(fact)),
                Some(_) => return self.misplace(),
                None => self.next_stage(),
            }
        }
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            match self.stage {
                Stage::Done => return Ok(None),
                Stage::After => return self.fact_after(),
                Stage::Before | Stage::Own => {}
            }
            let taken = out.len();
            let Some(reader) = self.reader() else {
                return Ok(None);
            };
            let next = reader.take_at(time, out)?;
            if out.len() > taken && !self.in_stage(time) {
                return self.misplace();
            }
            match next {
                Some(fact) if self.in_stage(fact.time) => return Ok(Some(fact)),
                Some(_) => return self.misplace(),
                None => self.next_stage(),
            }
        }
    }

    /// What the part's own lines skipped, so far.
    fn skipped(&self) -> SkipCounts {
        match (&self.reader, self.stage) {
            (Some(reader), Stage::Own) => reader.state().skipped.clone(),
            _ => self.skipped.clone(),
        }
    }
}

/// A file read whole by another source (line by line, or in blocks on threads), which can
/// also be read in parts by time ([`FactSource::splitting`]): the source the dataflow
/// engine's replay by parts asks for.
pub struct Splittable<'a> {
    inner: Box<dyn FactSource + 'a>,
    split: SplitFile,
}

impl std::fmt::Debug for Splittable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Splittable")
            .field("split", &self.split)
            .finish()
    }
}

impl<'a> Splittable<'a> {
    /// `inner`, which reads the file of `split` whole.
    pub fn new(inner: Box<dyn FactSource + 'a>, split: SplitFile) -> Splittable<'a> {
        Splittable { inner, split }
    }
}

impl FactSource for Splittable<'_> {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        self.inner.next_fact()
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        self.inner.take_at(time, out)
    }

    fn skipped(&self) -> SkipCounts {
        self.inner.skipped()
    }

    fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.inner.declared_timeline()
    }

    fn raw_blocks(&mut self) -> Option<super::blocks::RawBlocks> {
        self.inner.raw_blocks()
    }

    fn splitting(&self) -> Option<Splitting> {
        Some(Splitting::File(self.split.clone()))
    }
}
