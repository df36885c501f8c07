//! Streams as columnar files: Parquet (`events.parquet`) and Arrow IPC files
//! (`events.arrow`, `.feather`, `.ipc`, as pyarrow and polars write them, compressed or
//! not): a `predicate` column, a `time` column and the arguments in the columns after
//! them, in order, as the CSV format's lines `time,predicate,arg…` have them. An integer
//! column holds integers, a float column floats, a text column names; a fact of fewer
//! arguments than the widest has nulls in the columns past its own (its arguments end at
//! the first null). Rows go through the same [`ReaderState`] as a text format's lines
//! (time order, lateness, unknown predicates and arities, `--tick`), a row counting as a
//! line: an error names the file, the row (from 1, over the whole file) and its row
//! group (Parquet) or record batch (Arrow). A caller's table already in memory (from
//! Python, through the Arrow C stream interface) is read as an Arrow file's batches
//! ([`Columnar::of_batches`]). A file or a table can also be read in parts by rows, each
//! part on its own thread ([`RowFile`]).

mod cells;
mod rows;

use std::fs::File;
use std::io::BufReader;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_ipc::reader::FileReader;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use stgflow_lang::ir::PredId;
use stgflow_lang::value::{Row, Value};

use super::{Code, FactReader, InputFact, ReaderState, SkipCounts, StreamError};
use crate::drive::{FactSource, take_queued};
use cells::{Cell, Cells};

pub use rows::RowFile;

/// Rows decoded at a time.
const BATCH_ROWS: usize = 8192;

/// The columnar formats, by their files' extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Parquet,
    Arrow,
}

impl Kind {
    /// The format of the file `path`, by its extension; `None` for a text format.
    pub fn of(path: &str) -> Option<Kind> {
        let extension = path.rsplit('.').next()?.to_ascii_lowercase();
        match extension.as_str() {
            "parquet" => Some(Kind::Parquet),
            "arrow" | "feather" | "ipc" => Some(Kind::Arrow),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Parquet => "Parquet",
            Kind::Arrow => "Arrow",
        }
    }

    /// Its name with its article, to start a sentence's subject.
    fn a(self) -> &'static str {
        match self {
            Kind::Parquet => "a Parquet",
            Kind::Arrow => "an Arrow",
        }
    }

    /// What its files hold rows in, as its tools call it.
    fn unit(self) -> &'static str {
        match self {
            Kind::Parquet => "row group",
            Kind::Arrow => "record batch",
        }
    }
}

/// Whether `path` names a columnar file (by its extension: see [`Kind::of`]).
pub fn is_columnar(path: &str) -> bool {
    Kind::of(path).is_some()
}

/// A columnar file's record batches, or a table's in memory.
enum Batches {
    Parquet(ParquetRecordBatchReader),
    Arrow(FileReader<BufReader<File>>),
    Memory(std::vec::IntoIter<RecordBatch>),
    /// The rows `range` (over the whole file) of the batches of `inner`, whose next batch
    /// starts at row `at`.
    Window {
        inner: Box<Batches>,
        at: u64,
        range: std::ops::Range<u64>,
    },
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Batches::Parquet(reader) => Some(reader.next()?.map_err(|e| e.to_string())),
            Batches::Arrow(reader) => Some(reader.next()?.map_err(|e| e.to_string())),
            Batches::Memory(batches) => batches.next().map(Ok),
            Batches::Window { inner, at, range } => loop {
                if *at >= range.end {
                    return None;
                }
                let batch = match inner.next()? {
                    Ok(batch) => batch,
                    Err(e) => return Some(Err(e)),
                };
                let start = *at;
                *at += batch.num_rows() as u64;
                let (from, to) = (range.start.max(start), range.end.min(*at));
                if from < to {
                    let (offset, len) = ((from - start) as usize, (to - from) as usize);
                    return Some(Ok(batch.slice(offset, len)));
                }
            },
        }
    }
}

/// A columnar file's facts, row by row (see the module docs).
pub struct Columnar {
    state: ReaderState,
    kind: Kind,
    /// The file's batches; an error opening it, reported as the first fact is asked for.
    batches: Result<Batches, Option<Box<StreamError>>>,
    /// The batch being read, its columns, and the next row of it.
    batch: Option<(Columns, usize)>,
    /// Per row group (Parquet, all known at the start) or record batch (Arrow, as they
    /// are read, unless known from the start), the row (from 0, over the file) it starts at.
    group_starts: Vec<usize>,
    /// Whether the record batches' starts are learnt as they are read.
    counting_groups: bool,
    /// Rows read before the batch being read.
    rows_before: usize,
}

impl std::fmt::Debug for Columnar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Columnar")
            .field("name", &self.state.name)
            .field("row", &self.state.line)
            .finish()
    }
}

/// A batch's columns: the predicate, the time, the arguments.
struct Columns {
    predicate: Cells,
    time: Cells,
    arguments: Vec<Cells>,
}

impl Columnar {
    /// The columnar file `path` (Parquet unless its extension says Arrow), its facts
    /// read with `like`'s settings (its name, schema, tick and tolerance). A file that
    /// cannot be read as a stream fails the first read, as a text stream's first bad line
    /// does.
    pub fn open(path: &str, like: FactReader<std::io::Empty>) -> Columnar {
        let mut columnar = Columnar::unopened(like, Kind::of(path).unwrap_or(Kind::Parquet));
        columnar.batches = columnar.batches(path).map_err(Some);
        columnar
    }

    /// The record batches of a table in memory, named `like`'s name, read as an Arrow
    /// file's (`schema` is theirs, for a table of no batches).
    pub fn of_batches(
        schema: &arrow_schema::Schema,
        batches: Vec<RecordBatch>,
        like: FactReader<std::io::Empty>,
    ) -> Columnar {
        let mut columnar = Columnar::unopened(like, Kind::Arrow);
        let names = field_names(schema);
        columnar.batches = match columnar.streamable(&names) {
            Ok(()) => Ok(Batches::Memory(batches.into_iter())),
            Err(error) => Err(Some(error)),
        };
        columnar
    }

    /// A stream of `kind` read with `like`'s settings, its batches not yet given.
    fn unopened(like: FactReader<std::io::Empty>, kind: Kind) -> Columnar {
        Columnar {
            state: like.into_state(),
            kind,
            batches: Err(None),
            batch: None,
            group_starts: Vec::new(),
            counting_groups: kind == Kind::Arrow,
            rows_before: 0,
        }
    }

    /// The state its rows go through (for a part's reader, [`super::split::Part`]).
    pub(crate) fn state(&self) -> &ReaderState {
        &self.state
    }

    pub(crate) fn state_mut(&mut self) -> &mut ReaderState {
        &mut self.state
    }

    fn batches(&mut self, path: &str) -> Result<Batches, Box<StreamError>> {
        let kind = self.kind;
        let unreadable = |e: &dyn std::fmt::Display| {
            let message = format!("cannot read {path} as {}: {e}", kind.name());
            self.error(Code::E103, message, String::new())
        };
        let file = File::open(path).map_err(|e| unreadable(&e))?;
        let (names, batches) = match kind {
            Kind::Parquet => {
                let metadata = rows::parquet_metadata(&file).map_err(|e| unreadable(&e))?;
                let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata);
                let mut rows = 0usize;
                let mut starts = Vec::new();
                for group in builder.metadata().row_groups() {
                    starts.push(rows);
                    rows += usize::try_from(group.num_rows()).unwrap_or(0);
                }
                let names = field_names(builder.schema());
                let reader = builder.with_batch_size(BATCH_ROWS).build();
                let batches = Batches::Parquet(reader.map_err(|e| unreadable(&e))?);
                self.group_starts = starts;
                (names, batches)
            }
            Kind::Arrow => {
                let reader =
                    FileReader::try_new_buffered(file, None).map_err(|e| unreadable(&e))?;
                (field_names(&reader.schema()), Batches::Arrow(reader))
            }
        };
        self.streamable(&names)?;
        Ok(batches)
    }

    /// Whether columns named `names` make a stream: a `predicate` and a `time` column.
    fn streamable(&self, names: &[String]) -> Result<(), Box<StreamError>> {
        if names.iter().any(|n| n == "predicate") && names.iter().any(|n| n == "time") {
            return Ok(());
        }
        let mut error = self.error(
            Code::E101,
            format!(
                "{} stream needs a `predicate` and a `time` column; it has {}",
                self.kind.a(),
                names.join(", ")
            ),
            String::new(),
        );
        error.help = Some("the arguments are the columns after them, in order".to_owned());
        Err(error)
    }

    /// Reads the next row into the state's queue; `false` at the end of the file.
    fn next_row(&mut self) -> Result<bool, Box<StreamError>> {
        loop {
            if let Some((columns, row)) = &mut self.batch {
                if *row < columns.time.len() {
                    let at = *row;
                    *row += 1;
                    self.state.line = self.rows_before + at + 1;
                    return self.accept(at).map(|()| true);
                }
                self.rows_before += columns.time.len();
                self.batch = None;
            }
            let batches = match &mut self.batches {
                Ok(batches) => batches,
                Err(failed) => return failed.take().map_or(Ok(false), Err),
            };
            match batches.next() {
                None => return Ok(false),
                Some(Err(e)) => {
                    return Err(self.error(
                        Code::E103,
                        format!("cannot read the file: {e}"),
                        String::new(),
                    ));
                }
                Some(Ok(batch)) => {
                    if self.counting_groups {
                        self.group_starts.push(self.rows_before);
                    }
                    self.batch = Some((self.columns(&batch)?, 0));
                }
            }
        }
    }

    /// `batch`'s columns: `predicate`, `time`, and the arguments after them.
    fn columns(&self, batch: &RecordBatch) -> Result<Columns, Box<StreamError>> {
        let schema = batch.schema();
        let index = |name: &str| schema.index_of(name).ok();
        let (Some(p), Some(t)) = (index("predicate"), index("time")) else {
            let message = format!(
                "{} stream needs a `predicate` and a `time` column",
                self.kind.a()
            );
            return Err(self.error(Code::E101, message, String::new()));
        };
        let arguments = (0..batch.num_columns())
            .filter(|&i| i != p && i != t)
            .map(|i| Cells::of(batch.column(i)))
            .collect();
        Ok(Columns {
            predicate: Cells::of(batch.column(p)),
            time: Cells::of(batch.column(t)),
            arguments,
        })
    }

    /// Row `at` of the batch being read, through the state as a text format's line.
    fn accept(&mut self, at: usize) -> Result<(), Box<StreamError>> {
        let Some((columns, _)) = &self.batch else {
            return Ok(());
        };
        let predicate = match columns.predicate.text(at) {
            Some(Some(name)) if !name.is_empty() => name,
            Some(_) => return Err(self.row_error("the row has no predicate")),
            None => return Err(self.row_error("the `predicate` column must be text")),
        };
        let time = match columns.time.integer(at) {
            Some(Some(t)) if t >= 0 => t as u64,
            Some(Some(_)) => return Err(self.row_error("the time must be a non-negative integer")),
            Some(None) => return Err(self.row_error("the row has no time")),
            None => return Err(self.row_error("the `time` column must hold integers")),
        };
        let mut args = Row::new();
        for column in &columns.arguments {
            if column.is_null(at) {
                break;
            }
            match column.get(at) {
                Cell::Int(i) => args.push(Value::Int(i)),
                Cell::Text(s) => args.push(Value::sym(s)),
                Cell::Float(f) => args.push(Value::Float(f)),
                Cell::Null | Cell::Unreadable => {
                    let message = "an argument column must hold integers, floats or text";
                    return Err(self.row_error(message));
                }
            }
        }
        let result = self.state.accept("", predicate, args, time, 0);
        result.map_err(|mut error| {
            error.text = self.row_text();
            // A row is this stream's line.
            let message = error.message.replace("(line ", "(row ");
            error.message = format!("{message} ({})", self.place());
            error
        })
    }

    /// Where the current row is: its row group (record batch) and its row within it, both
    /// counted from 0 as Parquet's and Arrow's tools count them (the location's line is
    /// the row counted from 1 over the whole file).
    fn place(&self) -> String {
        let row = self.state.line.saturating_sub(1);
        let group = self
            .group_starts
            .partition_point(|&s| s <= row)
            .saturating_sub(1);
        let within = row - self.group_starts.get(group).copied().unwrap_or(0);
        format!("{} {group}, row {within} in it", self.kind.unit())
    }

    /// The current row as the CSV line of the same fact, for an error's excerpt.
    fn row_text(&self) -> String {
        let Some((columns, row)) = &self.batch else {
            return String::new();
        };
        let at = row.saturating_sub(1);
        let mut fields = vec![
            cell(columns.time.array(), at),
            cell(columns.predicate.array(), at),
        ];
        fields.extend(
            (columns.arguments.iter())
                .take_while(|c| !c.is_null(at))
                .map(|c| cell(c.array(), at)),
        );
        fields.join(",")
    }

    fn row_error(&self, message: &str) -> Box<StreamError> {
        let message = format!("{message} ({})", self.place());
        self.error(Code::E101, message, self.row_text())
    }

    fn error(&self, code: Code, message: String, text: String) -> Box<StreamError> {
        Box::new(StreamError {
            code: code.as_str(),
            file: self.state.name.clone(),
            line: self.state.line,
            column: 1,
            message,
            text,
            help: None,
        })
    }
}

/// Row `at` of `column` as text: `None` if the column is not text, `Some(None)` for a null.
fn text(column: &dyn Array, at: usize) -> Option<Option<&str>> {
    if let Some(strings) = column.as_string_opt::<i32>() {
        return Some(strings.is_valid(at).then(|| strings.value(at)));
    }
    if let Some(strings) = column.as_string_opt::<i64>() {
        return Some(strings.is_valid(at).then(|| strings.value(at)));
    }
    if let Some(strings) = column.as_string_view_opt() {
        return Some(strings.is_valid(at).then(|| strings.value(at)));
    }
    if let Some(dictionary) = column.as_any_dictionary_opt() {
        if !dictionary.is_valid(at) {
            return Some(None);
        }
        let key = usize::try_from(integer(dictionary.keys(), at)??).ok()?;
        return text(dictionary.values().as_ref(), key);
    }
    None
}

/// Row `at` of `column` as an integer: `None` if the column does not hold integers,
/// `Some(None)` for a null.
fn integer(column: &dyn Array, at: usize) -> Option<Option<i64>> {
    if !column.data_type().is_integer() {
        return None;
    }
    if column.is_null(at) {
        return Some(None);
    }
    let value = if let Some(a) = column.as_primitive_opt::<Int64Type>() {
        a.value(at)
    } else if let Some(a) = column.as_primitive_opt::<Int32Type>() {
        i64::from(a.value(at))
    } else if let Some(a) = column.as_primitive_opt::<UInt32Type>() {
        i64::from(a.value(at))
    } else if let Some(a) = column.as_primitive_opt::<UInt64Type>() {
        i64::try_from(a.value(at)).ok()?
    } else {
        return None;
    };
    Some(Some(value))
}

/// Row `at` of `column` as a float, if it is a float column's value.
fn float(column: &dyn Array, at: usize) -> Option<f64> {
    if column.is_null(at) {
        return None;
    }
    if let Some(a) = column.as_primitive_opt::<Float64Type>() {
        return Some(a.value(at));
    }
    column
        .as_primitive_opt::<Float32Type>()
        .map(|a| f64::from(a.value(at)))
}

/// A cell as an error's excerpt shows it.
fn cell(column: &dyn Array, at: usize) -> String {
    match (integer(column, at), text(column, at), float(column, at)) {
        (Some(Some(i)), _, _) => i.to_string(),
        (_, Some(Some(s)), _) => s.to_owned(),
        (_, _, Some(f)) => Value::Float(f).to_string(),
        _ => String::new(),
    }
}

/// The names of a schema's fields.
fn field_names(schema: &arrow_schema::Schema) -> Vec<String> {
    (schema.fields().iter()).map(|f| f.name().clone()).collect()
}

impl FactSource for Columnar {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        loop {
            if let Some(fact) = self.state.pending.pop_front() {
                return Ok(Some(fact));
            }
            if self.next_row()? {
                continue;
            }
            // One time point at a time: an interval may run for a very long time.
            let Some(first) = self.state.held.first_key_value().map(|(t, _)| *t) else {
                return Ok(None);
            };
            self.state.release_held(first);
        }
    }

    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        take_queued(self, |source| source.state.pending.pop_front(), time, out)
    }

    fn skipped(&self) -> SkipCounts {
        self.state.skipped.clone()
    }
}
