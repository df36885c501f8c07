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

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use hashbrown::HashMap;

use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

mod buffered;
mod texts;
pub use buffered::Buffered;
use texts::SortedTexts;

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

/// How a line of output is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// TD text: `p(a,4).`, `+p(a) @4`, `p(a) [4,6)`.
    #[default]
    Td,
    /// Comma-separated values after a header: the arguments, then the time (`a,4`), the
    /// time and the change (`a,4,1`), or the interval's ends (`a,4,6`).
    Csv,
    /// One JSON object per line: `{"time":4,"args":["a"]}`, with `"change":1` or −1, or
    /// `"start"` and `"end"` for an interval.
    Jsonl,
}

impl Encoding {
    /// The encoding called `name` (`td`, `csv`, `jsonl`).
    pub fn named(name: &str) -> Option<Encoding> {
        match name {
            "td" => Some(Encoding::Td),
            "csv" => Some(Encoding::Csv),
            "jsonl" => Some(Encoding::Jsonl),
            _ => None,
        }
    }

    /// The ending of a file in this encoding.
    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Td => "facts",
            Encoding::Csv => "csv",
            Encoding::Jsonl => "jsonl",
        }
    }
}

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

/// An output mode a front end adds: each time point is written whole, from every fact
/// that holds at it (another reasoner's own output, to `diff` against it).
///
/// A line lists the texts of the facts that hold, sorted as bytes. The sink keeps those
/// texts sorted from one time point to the next and changes them only where a fact starts
/// or stops holding: a line costs its bytes, not a sort of everything that holds (a line
/// lists every fact in the window, most of which did not change).
pub trait Snapshot: Send + Sync + std::fmt::Debug {
    /// Appends the text of one fact, its predicate's name and its arguments, to `out`.
    fn atom(&self, name: &str, args: &[Value], out: &mut Vec<u8>);

    /// Appends the start of the line of the time point printed as `shown` (the time point
    /// times the sink's time scale) to `line`. The sink then appends, for every fact that
    /// holds there in the byte order of their texts, [`Snapshot::separator`] and the
    /// fact's text, and ends the line with [`Snapshot::end`].
    fn start(&self, shown: u64, line: &mut Vec<u8>);

    /// What goes before each fact's text.
    fn separator(&self) -> &'static [u8];

    /// What ends a line.
    fn end(&self) -> &'static [u8];
}

/// RTEC's recognitions so far: each fact's intervals, (start, end).
type Recognised = HashMap<(PredId, Row), Vec<(u64, u64)>>;
type Recognition = ((PredId, Row), Vec<(u64, u64)>);

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
    /// In RTEC's form ([`Sink::recognitions`]): the intervals so far by fact, written at
    /// the end.
    recognitions: Option<Recognised>,
    /// With [`Sink::recognised`]: the (predicate, value) pairs written (`None`: every
    /// value of the predicate).
    recognised: Option<Vec<(PredId, Option<Value>)>>,
    /// With [`Sink::printed_as`]: how RTEC writes a predicate, by predicate.
    printed: Vec<Option<Printed>>,
    /// The first time point printed (`--print-from`): what holds before it is evaluated
    /// but not written; at it, `changes` starts with every fact that holds, and intervals
    /// start no earlier.
    pub print_from: Option<u64>,
    /// RTEC's window (`--window rtec`): in RTEC's recognitions, an interval still open at
    /// the end ends at the last time + 1 in the input's own units (RTEC's END + 1), not at
    /// the next time point.
    pub rtec_window: bool,
    /// A worker's sink ([`Sink::keyed`]): the lines it formats, each with its key, instead
    /// of written; and where this time point's lines start in `line`.
    keyed: Option<(KeyedLines, usize)>,
    /// Whether a worker's sink keys its lines.
    keys: bool,
}

/// The settings of a sink that workers copy to format their own shares of the output,
/// in the same order ([`Sink::template`], [`Sink::keyed`]).
#[derive(Clone, Debug)]
pub struct Template {
    mode: Mode,
    names: Vec<String>,
    rank: Vec<usize>,
    time_scale: u64,
    /// Whether each line gets its key (see [`Sink::template`]).
    keys: bool,
    print_from: Option<u64>,
}

/// Output lines formatted on a worker, each with a key that orders it among every
/// worker's lines ([`Sink::keyed`]): merged on the keys, the workers' lines are the bytes
/// one sink would write for all of their facts.
#[derive(Debug, Default)]
pub struct KeyedLines {
    /// The lines, one after another.
    pub text: Vec<u8>,
    /// Their keys, one after another: byte strings that compare as the lines are
    /// ordered within their time point.
    pub keys: Vec<u8>,
    /// Per line, in order: its time point ([`u64::MAX`] for what the end of the output
    /// writes, after every time point), and where its key and its text end.
    pub ends: Vec<(u64, usize, usize)>,
}

/// Merges workers' lines ([`KeyedLines`], each run in order) onto `out` in order: by
/// time point, then by key. `points` gets each time point that has lines, with where its
/// lines end in `out`.
pub fn merge_keyed(runs: &[KeyedLines], out: &mut Vec<u8>, points: &mut Vec<(u64, usize)>) {
    let mut note = |time: u64, out: &Vec<u8>| match points.last_mut() {
        Some((last, end)) if *last == time => *end = out.len(),
        _ => points.push((time, out.len())),
    };
    let busy: Vec<&KeyedLines> = runs.iter().filter(|r| !r.is_empty()).collect();
    if busy.is_empty() {
        return;
    }
    if let [only] = busy.as_slice() {
        // One worker's lines are in order already: whole time points at a time.
        let mut from = 0;
        for i in 0..only.len() {
            let (time, _, end) = only.ends[i];
            if only.ends.get(i + 1).is_none_or(|next| next.0 != time) {
                out.extend_from_slice(&only.text[from..end]);
                note(time, out);
                from = end;
            }
        }
        return;
    }
    let mut at = vec![0usize; busy.len()];
    let before = |at: &[usize], a: usize, b: usize| {
        let head = |run: usize| {
            let lines: &KeyedLines = busy[run];
            (at[run] < lines.len()).then(|| {
                let (time, key, _) = lines.line(at[run]);
                (time, key)
            })
        };
        match (head(a), head(b)) {
            (Some(x), Some(y)) => x < y,
            (x, _) => x.is_some(),
        }
    };
    let mut tree = crate::merge::Tournament::new(busy.len(), |a, b| before(&at, a, b));
    loop {
        let run = tree.winner();
        if at[run] == busy[run].len() {
            return;
        }
        let (time, _, text) = busy[run].line(at[run]);
        out.extend_from_slice(text);
        note(time, out);
        at[run] += 1;
        tree.replay(|a, b| before(&at, a, b));
    }
}

impl KeyedLines {
    /// Line `i`: its time point, key and text.
    pub fn line(&self, i: usize) -> (u64, &[u8], &[u8]) {
        let (time, key_end, text_end) = self.ends[i];
        let (key_start, text_start) = match i {
            0 => (0, 0),
            _ => (self.ends[i - 1].1, self.ends[i - 1].2),
        };
        (
            time,
            &self.keys[key_start..key_end],
            &self.text[text_start..text_end],
        )
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
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

impl Sink<io::Sink> {
    /// A worker's sink: it formats what it is given as `template`'s sink would, but keeps
    /// each line with its key ([`Sink::take_keyed`]) instead of writing it; the end of the
    /// output ([`Sink::finish`]) comes at time point [`u64::MAX`].
    pub fn keyed(template: Template) -> Sink<io::Sink> {
        let mut sink = Sink::with_names(io::sink(), template.mode, template.names, template.rank);
        sink.time_scale = template.time_scale;
        sink.keyed = Some((KeyedLines::default(), 0));
        sink.keys = template.keys;
        sink.print_from = template.print_from;
        sink
    }
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
            recognitions: None,
            recognised: None,
            printed: Vec::new(),
            print_from: None,
            rtec_window: false,
            keyed: None,
            keys: false,
        }
    }

    /// The settings a worker's sink copies ([`Sink::keyed`]), where the output can be
    /// formatted on the workers: points, changes or intervals in TD lines to one output,
    /// written as it goes (no files, no RTEC form). Each worker's sink must see every
    /// change of the facts it formats. Without `keys` the lines have none (one worker's
    /// lines need no merging).
    pub fn template(&self, keys: bool) -> Option<Template> {
        let plain = matches!(self.mode, Mode::Points | Mode::Changes | Mode::Intervals)
            && self.encoding == Encoding::Td
            && self.files.is_empty()
            && self.recognitions.is_none();
        plain.then(|| Template {
            mode: self.mode.clone(),
            names: self.names.clone(),
            rank: self.rank.clone(),
            time_scale: self.time_scale,
            keys,
            print_from: self.print_from,
        })
    }

    /// Whether parts of the timeline evaluated on their own can each write their own
    /// output ([`Sink::part`]): not intervals (an interval may start in an earlier part),
    /// files, or RTEC's recognitions.
    pub fn writes_by_parts(&self) -> bool {
        matches!(self.mode, Mode::Points | Mode::Changes | Mode::Snapshot(_))
            && self.files.is_empty()
            && self.recognitions.is_none()
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

    /// How many bytes of lines a worker's sink ([`Sink::keyed`]) holds.
    pub fn keyed_size(&self) -> usize {
        self.keyed.as_ref().map_or(0, |(lines, _)| lines.text.len())
    }

    /// The lines formatted so far by a worker's sink ([`Sink::keyed`]).
    pub fn take_keyed(&mut self) -> KeyedLines {
        self.keyed
            .as_mut()
            .map(|(lines, _)| std::mem::take(lines))
            .unwrap_or_default()
    }

    /// The last time point written, in input time units (`--tick`): where a stopped run's
    /// output ends.
    pub fn last_written(&self) -> Option<u64> {
        self.last_time.map(|t| t.saturating_mul(self.time_scale))
    }

    /// Writes lines formatted by workers ([`Sink::keyed`]) as they are, at time point `t`
    /// (which then counts as written; flushed on a live stream).
    pub fn write_formatted(&mut self, t: u64, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)?;
        if t != u64::MAX {
            self.last_time = Some(t);
            if self.flush_each {
                self.out.flush()?;
            }
        }
        Ok(())
    }

    /// For a worker's sink: the line that ends here in the line buffer, of the time point
    /// `t`, ordered by `key` (the predicate's rank, `start` for an interval, the
    /// arguments).
    fn keyed_line(&mut self, t: u64, pred: PredId, args: &[Value], start: Option<u64>) {
        let Some((lines, from)) = &mut self.keyed else {
            return;
        };
        let text_end = lines.text.len() + self.line.len() - *from;
        if self.keys {
            if let Some(start) = start {
                lines.keys.extend_from_slice(&start.to_be_bytes());
            }
            let rank = self.rank.get(pred).copied().unwrap_or(usize::MAX);
            lines.keys.extend_from_slice(&(rank as u64).to_be_bytes());
            for value in args {
                value.push_order_key(&mut lines.keys);
            }
        }
        lines.ends.push((t, lines.keys.len(), text_end));
    }

    /// For a worker's sink: this time point's lines start at `from` in the line buffer.
    fn keyed_start(&mut self, from: usize) {
        if let Some((_, start)) = &mut self.keyed {
            *start = from;
        }
    }

    /// For a worker's sink: the lines of the line buffer from `from` on are this time
    /// point's; they move to the keyed lines.
    fn keyed_time_point(&mut self, from: usize) {
        if let Some((lines, _)) = &mut self.keyed {
            lines.text.extend_from_slice(&self.line[from..]);
            self.line.truncate(from);
        }
    }

    /// Whether time point `t` is printed (see [`Sink::print_from`]).
    fn printed(&self, t: u64) -> bool {
        self.print_from.is_none_or(|from| t >= from)
    }

    /// Whether a time point already written was printed: past `print_from`'s first one.
    fn printing(&self) -> bool {
        self.last_time.is_some_and(|last| self.printed(last))
    }

    /// Writes intervals (in [`Mode::Intervals`]) as RTEC writes its recognitions, at the
    /// end: one line per fact, its last argument the value, `recognitions(predictions,
    /// F,[[Args…],Value],[(S,E),…]).` (a fact without arguments has the value `true`),
    /// intervals in time order, lines in output order.
    pub fn recognitions(mut self) -> Sink<W> {
        self.recognitions = Some(HashMap::new());
        self
    }

    /// With [`Sink::recognitions`]: the predicates written with RTEC's name and compound
    /// arguments ([`Printed`]).
    pub fn printed_as(mut self, printed: Vec<(PredId, Printed)>) -> Sink<W> {
        for (pred, how) in printed {
            if self.printed.len() <= pred {
                self.printed.resize(pred + 1, None);
            }
            self.printed[pred] = Some(how);
        }
        self
    }

    /// With [`Sink::recognitions`]: only the facts whose predicate and value (last
    /// argument) are among `pairs` (a value `None`: any) are written — the fluent-value pairs RTEC computes,
    /// where an event description's grounding declarations name them.
    pub fn recognised(mut self, pairs: Vec<(PredId, Option<Value>)>) -> Sink<W> {
        self.recognised = Some(pairs);
        self
    }

    /// Ends the line of `pred` that starts at `start` in the line buffer: when writing to
    /// files, it goes to the predicate's file and leaves the buffer.
    fn end_line(&mut self, pred: PredId, start: usize) -> io::Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        if let Some(Some(file)) = self.files.get_mut(pred) {
            file.write_all(&self.line[start..])?;
        }
        self.line.truncate(start);
        Ok(())
    }

    /// Appends the arguments in the sink's encoding: `a,b` in TD (after `p(`) and CSV, a
    /// JSON array otherwise.
    fn write_args(&mut self, args: &[Value]) {
        match self.encoding {
            Encoding::Td => {
                for (i, value) in args.iter().enumerate() {
                    if i > 0 {
                        self.line.push(b',');
                    }
                    push_value(&mut self.line, *value);
                }
            }
            Encoding::Csv => {
                for value in args {
                    push_csv_value(&mut self.line, *value);
                    self.line.push(b',');
                }
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"\"args\":[");
                for (i, value) in args.iter().enumerate() {
                    if i > 0 {
                        self.line.push(b',');
                    }
                    push_json_value(&mut self.line, *value);
                }
                self.line.extend_from_slice(b"]}\n");
            }
        }
    }

    /// One line for `pred(args)`: a change at `t` (`diff` ±1), or the fact holding at `t`
    /// (`diff` 0).
    fn fact_line(&mut self, pred: PredId, args: &[Value], t: u64, diff: isize) -> io::Result<()> {
        let start = self.line.len();
        let shown = t.saturating_mul(self.time_scale);
        match self.encoding {
            Encoding::Td if diff == 0 => {
                self.line.extend_from_slice(self.names[pred].as_bytes());
                self.line.push(b'(');
                for value in args {
                    push_value(&mut self.line, *value);
                    self.line.push(b',');
                }
                push_u64(&mut self.line, shown);
                self.line.extend_from_slice(b").\n");
            }
            Encoding::Td => {
                self.line.push(if diff > 0 { b'+' } else { b'-' });
                self.write_atom(pred, args);
                self.line.extend_from_slice(b" @");
                push_u64(&mut self.line, shown);
                self.line.push(b'\n');
            }
            Encoding::Csv => {
                self.write_args(args);
                push_u64(&mut self.line, shown);
                match diff {
                    0 => {}
                    d if d > 0 => self.line.extend_from_slice(b",1"),
                    _ => self.line.extend_from_slice(b",-1"),
                }
                self.line.push(b'\n');
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"{\"time\":");
                push_u64(&mut self.line, shown);
                match diff {
                    0 => self.line.push(b','),
                    d if d > 0 => self.line.extend_from_slice(b",\"change\":1,"),
                    _ => self.line.extend_from_slice(b",\"change\":-1,"),
                }
                self.write_args(args);
            }
        }
        self.keyed_line(t, pred, args, None);
        self.end_line(pred, start)
    }

    fn order(&self, a: &(PredId, Row), b: &(PredId, Row)) -> Ordering {
        self.rank[a.0]
            .cmp(&self.rank[b.0])
            .then_with(|| a.1.cmp(&b.1))
    }

    /// Writes `pred(args)` (`pred` alone without arguments) into the line buffer.
    fn write_atom(&mut self, pred: PredId, args: &[Value]) {
        self.line.extend_from_slice(self.names[pred].as_bytes());
        if args.is_empty() {
            return;
        }
        self.line.push(b'(');
        for (i, value) in args.iter().enumerate() {
            if i > 0 {
                self.line.push(b',');
            }
            push_value(&mut self.line, *value);
        }
        self.line.push(b')');
    }

    /// Records the facts that hold at `t` (any order, no duplicates). Time points must
    /// come in increasing order.
    pub fn emit(&mut self, t: u64, facts: Vec<(PredId, Row)>) -> io::Result<()> {
        let mut now: HashMap<(PredId, Row), ()> = facts.into_iter().map(|f| (f, ())).collect();
        let mut changes: Vec<((PredId, Row), isize)> = Vec::new();
        for fact in self.holding.keys() {
            if now.remove(fact).is_none() {
                changes.push((fact.clone(), -1));
            }
        }
        changes.extend(now.into_keys().map(|fact| (fact, 1)));
        if matches!(self.mode, Mode::Snapshot(_)) {
            // Its changes keep nothing per fact: what holds is kept here.
            for (fact, diff) in &changes {
                if *diff > 0 {
                    self.holding.insert(fact.clone(), t);
                } else {
                    self.holding.remove(fact);
                }
            }
        }
        self.emit_changes(t, changes)
    }

    /// Records what changed at `t`: +1 for a fact that starts to hold, −1 for one that
    /// stops. Time points must come in increasing order; every time point of the timeline
    /// must be given, with or without changes.
    pub fn emit_changes(
        &mut self,
        t: u64,
        mut changes: Vec<((PredId, Row), isize)>,
    ) -> io::Result<()> {
        changes.sort_unstable_by(|a, b| self.order(&a.0, &b.0).then(b.1.cmp(&a.1)));
        self.write_changes(t, changes)
    }

    /// [`Sink::emit_changes`] for changes already in output order.
    fn write_changes(&mut self, t: u64, changes: Vec<((PredId, Row), isize)>) -> io::Result<()> {
        if matches!(self.mode, Mode::Snapshot(_)) {
            let changes = changes
                .iter()
                .map(|((pred, row), diff)| (*pred, &row[..], *diff));
            return self.write_snapshot_changes(t, changes);
        }
        self.line.clear();
        self.keyed_start(0);
        let printed = self.printed(t);
        // The first time point printed after `print_from`: `changes` starts with what holds.
        let first = printed && !self.printing() && self.print_from.is_some();
        let lines = printed && !first;
        let mut closed: Vec<((PredId, Row), u64)> = Vec::new();
        for (fact, diff) in changes {
            if diff > 0 {
                let hashbrown::hash_map::Entry::Vacant(entry) = self.holding.entry(fact.clone())
                else {
                    continue;
                };
                entry.insert(t);
                if !matches!(self.mode, Mode::Changes) || !lines {
                    continue;
                }
                self.fact_line(fact.0, &fact.1, t, 1)?;
            } else {
                let Some(start) = self.holding.remove(&fact) else {
                    continue;
                };
                match self.mode {
                    Mode::Changes if lines => self.fact_line(fact.0, &fact.1, t, -1)?,
                    Mode::Intervals if printed => closed.push((fact, start)),
                    Mode::Points | Mode::Snapshot(_) | Mode::Changes | Mode::Intervals => {}
                }
            }
        }
        if first && matches!(self.mode, Mode::Changes) {
            self.write_holding(t, 1)?;
        }
        if !printed {
            self.last_time = Some(t);
            return Ok(());
        }
        match self.mode {
            Mode::Points => self.write_holding(t, 0)?,
            Mode::Intervals => {
                closed.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| self.order(&a.0, &b.0)));
                for ((pred, args), start) in &closed {
                    self.write_interval(*pred, args, (*start, t), t)?;
                }
            }
            Mode::Snapshot(_) | Mode::Changes => {}
        }
        self.last_time = Some(t);
        self.keyed_time_point(0);
        self.out.write_all(&self.line)?;
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// A line for every fact that holds, in output order, at `t` with change `diff` (0: a
    /// point).
    fn write_holding(&mut self, t: u64, diff: isize) -> io::Result<()> {
        // Out of `self` while its lines are written (each borrows `self`).
        let holding = std::mem::take(&mut self.holding);
        let mut facts: Vec<&(PredId, Row)> = holding.keys().collect();
        facts.sort_unstable_by(|a, b| self.order(a, b));
        let written = facts
            .into_iter()
            .try_for_each(|(pred, args)| self.fact_line(*pred, args, t, diff));
        self.holding = holding;
        written
    }

    /// Records what changed at `t`, given **consolidated and in output order**: each fact
    /// at most once, sorted by [`name_ranks`] of its predicate, then its arguments, with a
    /// difference of +1 when it starts to hold and −1 when it stops — as the dataflow
    /// runtime's workers deliver it. In `changes` mode the lines are written straight from
    /// the slice (nothing is kept per fact); a [`Snapshot`] takes them in any order and
    /// not consolidated ([`Sink::in_any_order`]); the other modes go through
    /// [`Sink::emit_changes`], without its sort.
    pub fn emit_sorted<'a>(
        &mut self,
        t: u64,
        changes: impl Iterator<Item = (PredId, &'a [Value], isize)>,
    ) -> io::Result<()> {
        if matches!(self.mode, Mode::Snapshot(_)) {
            return self.write_snapshot_changes(t, changes);
        }
        // Until `print_from` has been reached the facts are kept, to start from what holds.
        let keep = self.print_from.is_some() && !self.printing();
        if !matches!(self.mode, Mode::Changes) || keep {
            let owned = changes
                .map(|(pred, args, diff)| ((pred, Row::from(args)), diff))
                .collect();
            return self.write_changes(t, owned);
        }
        if !self.files.is_empty() {
            // Each change is a line of its predicate's file: nothing is kept per fact, so
            // a part's first time point retracts what its warm-up made.
            self.line.clear();
            for (pred, args, diff) in changes {
                self.fact_line(pred, args, t, diff)?;
            }
            self.last_time = Some(t);
            if self.flush_each {
                self.flush()?;
            }
            return Ok(());
        }
        self.line.clear();
        // ` @t` and the newline end every line of the time point: formatted once, at the
        // start of the buffer (not written), and copied from there.
        self.line.extend_from_slice(b" @");
        push_u64(&mut self.line, t.saturating_mul(self.time_scale));
        self.line.push(b'\n');
        let end = self.line.len();
        self.keyed_start(end);
        for (pred, args, diff) in changes {
            self.line.push(if diff > 0 { b'+' } else { b'-' });
            self.write_atom(pred, args);
            self.line.extend_from_within(..end);
            self.keyed_line(t, pred, args, None);
        }
        self.last_time = Some(t);
        self.keyed_time_point(end);
        self.out.write_all(&self.line[end..])?;
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Time points `from..to` have no changes: as [`Sink::emit_sorted`] with none at each,
    /// costing the lines it writes. Only `points` while something holds and a front
    /// end's snapshot write at every time point; otherwise a quiet stretch costs nothing
    /// per time point, however long (sparse timestamps: epoch milliseconds).
    pub fn quiet(&mut self, from: u64, to: u64) -> io::Result<()> {
        if from >= to {
            return Ok(());
        }
        if self.writes_every_point() && self.printed(to - 1) {
            for t in from..to {
                self.emit_sorted(t, std::iter::empty())?;
            }
            return Ok(());
        }
        // The first time point printed after `print_from` prints what holds then.
        let first = (self.print_from)
            .filter(|&p| !self.printing() && p < to)
            .map(|p| p.max(from));
        if let Some(first) = first {
            if from < first {
                self.last_time = Some(first - 1);
            }
            self.emit_sorted(first, std::iter::empty())?;
            return self.quiet(first + 1, to);
        }
        self.last_time = Some(to - 1);
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether a time point without changes writes lines: in `points` while something
    /// holds, and a front end's snapshot. A quiet stretch then costs its length, and is
    /// fed in short batches, so that a stop request is seen between them.
    pub fn writes_every_point(&self) -> bool {
        match self.mode {
            Mode::Snapshot(_) => true,
            Mode::Points => !self.holding.is_empty(),
            Mode::Changes | Mode::Intervals => false,
        }
    }

    /// Gives the sink the time points `from..to`: each with its changes among `updates`
    /// (sorted by time, then in output order, none before `from`; `change` takes one
    /// apart into its time, predicate, arguments and difference), the stretches between
    /// them each as one ([`Sink::quiet`]). `counted` is told each stretch of time points
    /// given. Returns how many of `updates` lie before `to`.
    pub fn emit_through<'u, U>(
        &mut self,
        (from, to): (u64, u64),
        updates: &'u [U],
        change: impl Fn(&'u U) -> (u64, PredId, &'u [Value], isize),
        mut counted: impl FnMut(u64, u64),
    ) -> io::Result<usize> {
        let (mut t, mut at) = (from, 0);
        while t < to {
            let start = at;
            while updates.get(at).is_some_and(|u| change(u).0 == t) {
                at += 1;
            }
            if start == at {
                let next = updates.get(at).map_or(to, |u| change(u).0.min(to));
                self.quiet(t, next)?;
                counted(t, next);
                t = next;
                continue;
            }
            let changes = updates[start..at].iter().map(|u| {
                let (_, pred, args, diff) = change(u);
                (pred, args, diff)
            });
            self.emit_sorted(t, changes)?;
            counted(t, t + 1);
            t += 1;
        }
        Ok(at)
    }

    /// Whether the sink writes changes (`+p(a) @t`), which it makes from what it is given
    /// alone, keeping nothing per fact.
    pub fn writes_changes(&self) -> bool {
        matches!(self.mode, Mode::Changes)
    }

    /// Whether the changes of a time point may come to [`Sink::emit_sorted`] in any order
    /// and not consolidated (a fact's changes within it adding up to its net change): a
    /// [`Snapshot`] counts each fact's changes itself, and orders them itself.
    pub fn in_any_order(&self) -> bool {
        matches!(self.mode, Mode::Snapshot(_))
    }

    /// Whether the sink counts each fact's changes and prints the fact while its count
    /// is positive, once: its changes need not be 0/1 (a [`Snapshot`]'s texts count, see
    /// `texts`). A fact may then come with a count for each reason it holds (each point
    /// of it in a ♢ window), and its changes from several workers.
    pub fn counts_holding(&self) -> bool {
        matches!(self.mode, Mode::Snapshot(_))
    }

    /// Where the sink counts ([`Sink::counts_holding`]): the facts of each predicate with
    /// a hold here come as points, +n at the time point t a fact is given at, and the sink
    /// takes each back itself at t + hold (a ♢ window of hold − 1 over them, whose
    /// retractions the workers then neither make nor send). Such a predicate must have no
    /// other changes (an input fact's −1, say), every change of its facts being +n.
    pub fn retract_points(&mut self, holds: Vec<Option<u64>>) {
        if self.counts_holding() {
            self.point_holds = holds;
        }
    }

    /// The changes at `t` for [`Mode::Snapshot`], in any order: each fact's text counted
    /// in (+) or out (−), then the time point's line where it is printed.
    fn write_snapshot_changes<'a>(
        &mut self,
        t: u64,
        changes: impl Iterator<Item = (PredId, &'a [Value], isize)>,
    ) -> io::Result<()> {
        let Mode::Snapshot(snapshot) = &self.mode else {
            return Ok(());
        };
        for (pred, args, diff) in changes {
            let name = &self.names[pred];
            let render = |text: &mut Vec<u8>| snapshot.atom(name, args, text);
            match self.point_holds.get(pred).copied().flatten() {
                Some(hold) if diff > 0 => {
                    let until = t.saturating_add(hold);
                    self.snapshot.change_point(pred, args, diff, until, render);
                }
                _ => self.snapshot.change(pred, args, diff, render),
            }
        }
        self.snapshot.retract(t);
        self.last_time = Some(t);
        if !self.printed(t) {
            return Ok(());
        }
        self.line.clear();
        self.keyed_start(0);
        self.write_snapshot(t)?;
        self.keyed_time_point(0);
        self.out.write_all(&self.line)?;
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// The time point's line for [`Mode::Snapshot`]: its start and its texts written out,
    /// straight from where they are kept (not copied into the line buffer first), its end
    /// left in the line buffer; all of it there for a worker's keyed lines.
    fn write_snapshot(&mut self, t: u64) -> io::Result<()> {
        let Mode::Snapshot(snapshot) = &self.mode else {
            return Ok(());
        };
        snapshot.start(t.saturating_mul(self.time_scale), &mut self.line);
        let texts = self.snapshot.line();
        if self.keyed.is_some() {
            self.line.extend_from_slice(texts);
        } else {
            self.out.write_all(&self.line)?;
            self.out.write_all(texts)?;
            self.line.clear();
        }
        self.line.extend_from_slice(snapshot.end());
        Ok(())
    }

    /// The line of `pred(args)` over [start, end), written at time point `written` (the
    /// end of the output's: [`u64::MAX`]).
    fn write_interval(
        &mut self,
        pred: PredId,
        args: &[Value],
        (start, end): (u64, u64),
        written: u64,
    ) -> io::Result<()> {
        let at = self.line.len();
        let began = start;
        let start = self.print_from.map_or(start, |from| start.max(from));
        if end <= start {
            return Ok(());
        }
        let scale = self.time_scale;
        let (start, mut end) = (start.saturating_mul(scale), end.saturating_mul(scale));
        if let Some(recognitions) = &mut self.recognitions {
            if written == OPEN_AT_THE_END && self.rtec_window {
                end = end - scale + 1;
            }
            (recognitions.entry((pred, Row::from(args))).or_default()).push((start, end));
            return Ok(());
        }
        match self.encoding {
            Encoding::Td => {
                self.write_atom(pred, args);
                self.line.extend_from_slice(b" [");
                push_u64(&mut self.line, start);
                self.line.push(b',');
                push_u64(&mut self.line, end);
                self.line.extend_from_slice(b")\n");
            }
            Encoding::Csv => {
                self.write_args(args);
                push_u64(&mut self.line, start);
                self.line.push(b',');
                push_u64(&mut self.line, end);
                self.line.push(b'\n');
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"{\"start\":");
                push_u64(&mut self.line, start);
                self.line.extend_from_slice(b",\"end\":");
                push_u64(&mut self.line, end);
                self.line.push(b',');
                self.write_args(args);
            }
        }
        self.keyed_line(written, pred, args, Some(began));
        self.end_line(pred, at)
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
        if let Some(recognitions) = self.recognitions.take() {
            let mut all: Vec<Recognition> = recognitions.into_iter().collect();
            if let Some(pairs) = &self.recognised {
                all.retain(|((pred, row), _)| {
                    let value = row.last().copied();
                    (pairs.iter()).any(|(p, v)| p == pred && (v.is_none() || *v == value))
                });
            }
            self.write_recognitions(all)?;
        }
        self.flush()
    }

    /// The lines of [`Sink::recognitions`]: one per fact, in order, its intervals by start.
    fn write_recognitions(&mut self, mut all: Vec<Recognition>) -> io::Result<()> {
        all.sort_unstable_by(|(a, _), (b, _)| (self.rank[a.0], &a.1).cmp(&(self.rank[b.0], &b.1)));
        self.line.clear();
        for ((pred, args), intervals) in &mut all {
            let pred = *pred;
            intervals.sort_unstable();
            let printed = self.printed.get(pred).and_then(Option::as_ref);
            self.line.extend_from_slice(b"recognitions(predictions,");
            let name = printed.map_or(self.names[pred].as_str(), |p| p.name.as_str());
            self.line.extend_from_slice(name.as_bytes());
            self.line.extend_from_slice(b",[[");
            let (objects, value) = match args.split_last() {
                Some((value, objects)) => (objects, Some(*value)),
                None => (&args[..], None),
            };
            match printed {
                Some(printed) => push_shaped(&mut self.line, &printed.args, &mut objects.iter()),
                None => {
                    for (k, object) in objects.iter().enumerate() {
                        if k > 0 {
                            self.line.push(b',');
                        }
                        push_value(&mut self.line, *object);
                    }
                }
            }
            self.line.extend_from_slice(b"],");
            match value {
                Some(value) => push_value(&mut self.line, value),
                None => self.line.extend_from_slice(b"true"),
            }
            self.line.extend_from_slice(b"],[");
            for (k, (start, end)) in intervals.iter().enumerate() {
                if k > 0 {
                    self.line.push(b',');
                }
                self.line.push(b'(');
                push_u64(&mut self.line, *start);
                self.line.push(b',');
                push_u64(&mut self.line, *end);
                self.line.push(b')');
            }
            self.line.extend_from_slice(b"]).\n");
        }
        self.out.write_all(&self.line)
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

/// How `--mode rtec` writes a predicate whose RTEC fluent had compound arguments
/// (`per(close_ballot(C, M))=true`, flattened to `per__close_ballot(C, M, true)`): its
/// name and the shape of its object arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    pub name: String,
    pub args: Vec<Shape>,
}

/// An argument as written: one of the flattened arguments, or a compound term.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Arg,
    Term(String, Vec<Shape>),
}

/// Appends `shapes` filled with `values` in order.
fn push_shaped(line: &mut Vec<u8>, shapes: &[Shape], values: &mut std::slice::Iter<'_, Value>) {
    for (k, shape) in shapes.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        match shape {
            Shape::Arg => {
                if let Some(value) = values.next() {
                    push_value(line, *value);
                }
            }
            Shape::Term(name, inner) => {
                line.extend_from_slice(name.as_bytes());
                line.push(b'(');
                push_shaped(line, inner, values);
                line.push(b')');
            }
        }
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

/// Appends a value as `Display` writes it, with integers formatted without `fmt`.
pub fn push_value(line: &mut Vec<u8>, value: Value) {
    match value {
        Value::Int(i) => {
            if i < 0 {
                line.push(b'-');
            }
            push_u64(line, i.unsigned_abs());
        }
        Value::Sym(sym) if sym.is_bare() => line.extend_from_slice(sym.as_bytes()),
        other => {
            use std::io::Write as _;
            let _ = write!(line, "{other}");
        }
    }
}

/// Appends a value as a CSV field: a number as it is, a symbol's text, quoted (with `""`
/// for a quote) when it holds a comma, a quote, a line break or a leading or trailing
/// space.
fn push_csv_value(line: &mut Vec<u8>, value: Value) {
    let Value::Sym(sym) = value else {
        return push_value(line, value);
    };
    let text = sym.as_bytes();
    let quote = text
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        || text.first() == Some(&b' ')
        || text.last() == Some(&b' ');
    if !quote {
        return line.extend_from_slice(text);
    }
    line.push(b'"');
    for &b in text {
        if b == b'"' {
            line.push(b'"');
        }
        line.push(b);
    }
    line.push(b'"');
}

/// Appends a value as JSON: an integer or a finite float as a number, anything else as a
/// string (a symbol's text; `NaN` and the infinities as they print).
fn push_json_value(line: &mut Vec<u8>, value: Value) {
    let text = match value {
        Value::Int(_) => return push_value(line, value),
        Value::Float(f) if f.is_finite() => return push_value(line, value),
        Value::Float(f) => f.to_string(),
        Value::Sym(sym) => sym.as_str().to_owned(),
    };
    push_json_string(line, &text);
}

/// `text` as a JSON string.
pub fn json_string(text: &str) -> String {
    let mut line = Vec::with_capacity(text.len() + 2);
    push_json_string(&mut line, text);
    // Only whole characters and ASCII escapes were pushed.
    String::from_utf8(line).unwrap_or_default()
}

/// Appends `text` as a JSON string.
fn push_json_string(line: &mut Vec<u8>, text: &str) {
    line.push(b'"');
    for c in text.chars() {
        match c {
            '"' => line.extend_from_slice(b"\\\""),
            '\\' => line.extend_from_slice(b"\\\\"),
            '\n' => line.extend_from_slice(b"\\n"),
            '\r' => line.extend_from_slice(b"\\r"),
            '\t' => line.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                use std::io::Write as _;
                let _ = write!(line, "\\u{:04x}", c as u32);
            }
            c => {
                let mut buf = [0u8; 4];
                line.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    line.push(b'"');
}

/// Appends `n` in decimal, without `fmt`.
pub fn push_u64(line: &mut Vec<u8>, mut n: u64) {
    // Two digits per division.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    line.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    /// What one sink writes for a run's changes, in `mode`: each time point's changes
    /// consolidated and in output order, as the dataflow's workers deliver them.
    fn written(sink: &mut Sink<Vec<u8>>, run: &[Vec<(PredId, Row, isize)>]) -> Vec<u8> {
        for (t, changes) in run.iter().enumerate() {
            let changes = changes.iter().map(|(p, row, d)| (*p, &row[..], *d));
            sink.emit_sorted(t as u64, changes)
                .expect("a write to memory");
        }
        sink.finish().expect("a write to memory");
        std::mem::take(&mut sink.out)
    }

    proptest::proptest! {
        /// Every fact's changes given to one of 1–19 workers' sinks ([`Sink::keyed`]) by
        /// the fact's hash, the workers' lines merged on their keys are what one sink
        /// writes for all the facts, in points, changes and intervals.
        #[test]
        fn workers_lines_merged_on_their_keys_are_one_sinks_bytes(
            flips in proptest::collection::vec((0usize..3, 0i64..4, 0usize..12), 0..60),
            workers in 1usize..20,
            scale in 1u64..3,
        ) {
            let program = compile_str(
                "p.tdl",
                "b(X, T) :- e(X, T).\nab(X, Y, T) :- e(X, T), e(Y, T).\na(T) :- e(0, T).\n",
            )
            .program;
            let names = ["b", "ab", "a"];
            let preds: Vec<PredId> = names.iter().map(|n| program.pred_id(n).expect("a predicate of the program")).collect();
            // Each flip turns a fact on or off at a time point; facts by predicate arity.
            let mut holding: std::collections::BTreeSet<(PredId, Row)> = Default::default();
            let mut run: Vec<Vec<(PredId, Row, isize)>> = vec![Vec::new(); 12];
            let mut flips = flips;
            flips.sort_by_key(|f| f.2);
            for (which, x, t) in flips {
                let pred = preds[which];
                let row: Row = match which {
                    0 => [Value::Int(x)].into_iter().collect(),
                    1 => [Value::Int(x), Value::sym(["a", "b\u{0}", "ccc"][x as usize % 3])].into_iter().collect(),
                    _ => Row::new(),
                };
                let fact = (pred, row);
                if run[t].iter().any(|(p, r, _)| (*p, r.clone()) == fact) {
                    continue;
                }
                let diff = if holding.remove(&fact) { -1 } else { holding.insert(fact.clone()); 1 };
                run[t].push((fact.0, fact.1, diff));
            }
            let rank = name_ranks(&program);
            for changes in &mut run {
                changes.sort_by(|a, b| (rank[a.0], &a.1).cmp(&(rank[b.0], &b.1)));
            }
            for mode in [Mode::Points, Mode::Changes, Mode::Intervals] {
                let mut one = Sink::new(Vec::new(), mode.clone(), &program);
                one.time_scale = scale;
                let expected = written(&mut one, &run);
                let template = one.template(true).expect("a sink with a template");
                let owner = |fact: &(PredId, Row)| {
                    use std::hash::{Hash, Hasher};
                    let mut hasher = std::hash::DefaultHasher::new();
                    fact.hash(&mut hasher);
                    (hasher.finish() % workers as u64) as usize
                };
                let shares: Vec<KeyedLines> = (0..workers)
                    .map(|w| {
                        let mut sink = Sink::keyed(template.clone());
                        for (t, changes) in run.iter().enumerate() {
                            let mine = changes
                                .iter()
                                .filter(|(p, r, _)| owner(&(*p, r.clone())) == w)
                                .map(|(p, row, d)| (*p, &row[..], *d));
                            sink.emit_sorted(t as u64, mine).expect("a write to memory");
                        }
                        sink.finish().expect("a write to memory");
                        sink.take_keyed()
                    })
                    .collect();
                let (mut merged, mut points) = (Vec::new(), Vec::new());
                merge_keyed(&shares, &mut merged, &mut points);
                proptest::prop_assert_eq!(
                    String::from_utf8_lossy(&merged),
                    String::from_utf8_lossy(&expected),
                    "{:?} on {} workers", mode, workers
                );
                let times: Vec<u64> = points.iter().map(|p| p.0).collect();
                proptest::prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "{:?}", times);
            }
        }
    }

    #[test]
    fn integers_format_as_display_does() {
        for n in [
            0,
            7,
            9,
            10,
            42,
            99,
            100,
            101,
            999,
            1000,
            65_536,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut line = Vec::new();
            push_u64(&mut line, n);
            assert_eq!(line, n.to_string().into_bytes());
        }
        for i in [i64::MIN, -1_000_001, -10, -1, 0, 5, 1 << 40, i64::MAX] {
            let mut line = Vec::new();
            push_value(&mut line, Value::Int(i));
            assert_eq!(line, i.to_string().into_bytes());
        }
    }

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

    #[test]
    fn recognitions_are_rtecs_lines_one_per_fact_written_at_the_end() {
        let text = "loc(X, V, T) :- go(X, V, T).\nalarm(T) :- ring(T).\n";
        let compiled = compile_str("p.tdl", text);
        let id = |name: &str| compiled.program.pred_id(name).unwrap_or_default();
        let (loc, alarm) = (id("loc"), id("alarm"));
        let pub_ = (
            loc,
            Row::from_slice(&[Value::sym("chris"), Value::sym("pub")]),
        );
        let work = (loc, Row::from_slice(&[Value::sym("chris"), Value::Int(7)]));
        let ring = (alarm, Row::new());
        let mut sink = Sink::new(Vec::new(), Mode::Intervals, &compiled.program).recognitions();
        sink.time_scale = 10;
        for (t, facts) in [
            (1, vec![pub_.clone(), ring.clone()]),
            (2, vec![work.clone()]),
            (3, vec![pub_.clone(), work.clone()]),
            (4, vec![pub_.clone()]),
        ] {
            sink.emit(t, facts).unwrap_or_default();
        }
        // Nothing before the end: RTEC writes its file once the window is done.
        sink.flush().unwrap_or_default();
        assert!(sink.out.is_empty());
        sink.finish().unwrap_or_default();
        let printed = String::from_utf8(sink.into_inner()).unwrap_or_default();
        assert_eq!(
            printed,
            "recognitions(predictions,alarm,[[],true],[(10,20)]).\n\
             recognitions(predictions,loc,[[chris],7],[(20,40)]).\n\
             recognitions(predictions,loc,[[chris],pub],[(10,20),(30,50)]).\n"
        );
    }
}
