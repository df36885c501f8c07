//! Output as binary records ([`super::Encoding::Records`]) and read back as typed columns
//! ([`Columns`]): for a caller in the same process that wants the output as a table (the
//! Python package's DataFrames) rather than as text to parse. A record is what a line
//! says — the fact, its time and change, or its interval — with the arguments as values,
//! so nothing is formatted or parsed on the way.
//!
//! A record: its length after these 4 bytes (`u32`), its kind (`u8`: a point, a change
//! +1 or −1, an interval), its time or start (`u64`) and an interval's end (`u64`), the
//! predicate's name (`u16` length, bytes), the arguments' count (`u16`) and each
//! argument (`u8` tag: an integer or a float's bits in 8 bytes, a symbol's text as a
//! `u32` length and its bytes). Integers are little-endian.

use std::io;
use std::sync::Arc;

use arrow_array::builder::LargeBinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    ArrayRef, Float64Array, Int64Array, LargeBinaryArray, LargeStringArray, RecordBatch,
    new_null_array,
};
use arrow_ord::sort::{SortColumn, lexsort_to_indices};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;
use stgflow_lang::value::Value;

/// What a record says of its fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// It holds at the time.
    Point = 0,
    /// It starts to hold at the time.
    Start = 1,
    /// It stops holding at the time.
    End = 2,
    /// It holds over [start, end).
    Interval = 3,
}

const INT: u8 = 0;
const FLOAT: u8 = 1;
const SYMBOL: u8 = 2;

/// Appends the record of `name(args)`, of `kind`, at `time` (an interval's `(start, end)`).
pub(super) fn push_record(
    out: &mut Vec<u8>,
    kind: Kind,
    (time, end): (u64, u64),
    name: &str,
    args: &[Value],
) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    out.push(kind as u8);
    out.extend_from_slice(&time.to_le_bytes());
    if kind == Kind::Interval {
        out.extend_from_slice(&end.to_le_bytes());
    }
    // Names and argument counts are the program's, far below these bounds.
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&(args.len() as u16).to_le_bytes());
    for value in args {
        match *value {
            Value::Int(i) => {
                out.push(INT);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::Float(f) => {
                out.push(FLOAT);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Sym(s) => {
                out.push(SYMBOL);
                let text = s.as_bytes();
                out.extend_from_slice(&(text.len() as u32).to_le_bytes());
                out.extend_from_slice(text);
            }
        }
    }
    let length = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&length.to_le_bytes());
}

/// Counts the records in bytes written in any pieces (`--stats`' output lines when the
/// output is records: a record is what a line says), reading only their lengths.
#[derive(Debug, Default)]
pub struct Tally {
    /// The length bytes of the record begun so far.
    length: [u8; 4],
    /// How many of them have come.
    have: usize,
    /// The bytes of the record begun still to come after its length.
    rest: usize,
}

impl Tally {
    /// The records that begin in `bytes`, the next piece of the output.
    pub fn count(&mut self, mut bytes: &[u8]) -> u64 {
        let mut records = 0;
        while !bytes.is_empty() {
            if self.rest > 0 {
                let skipped = self.rest.min(bytes.len());
                self.rest -= skipped;
                bytes = &bytes[skipped..];
                continue;
            }
            let taken = (4 - self.have).min(bytes.len());
            self.length[self.have..self.have + taken].copy_from_slice(&bytes[..taken]);
            self.have += taken;
            bytes = &bytes[taken..];
            if self.have == 4 {
                records += 1;
                self.rest = u32::from_le_bytes(self.length) as usize;
                self.have = 0;
            }
        }
        records
    }
}

/// Records read back as columns as they are written (the sink's output: a record may
/// come in several writes), in chunks of [`CHUNK`] rows; [`Columns::table`] makes the
/// table.
#[derive(Debug, Default)]
pub struct Columns {
    /// The bytes of a record not yet whole.
    partial: Vec<u8>,
    kind: Option<Kind>,
    /// The chunk being filled.
    chunk: Chunk,
    /// The chunks filled, as arrays.
    done: Vec<Finished>,
}

/// Rows per chunk: a chunk's columns are allocated once, at about their size, and handed
/// over as they are, never grown by copying.
const CHUNK: usize = 1 << 16;

/// A chunk's columns being built.
#[derive(Debug, Default)]
struct Chunk {
    /// The predicates' names, as bytes: a text column is checked to be UTF-8 once, whole,
    /// when the chunk is finished.
    predicate: LargeBinaryBuilder,
    arguments: Vec<Column>,
    times: Vec<i64>,
    /// A change's +1 or −1, or an interval's end.
    seconds: Vec<i64>,
}

/// A chunk's columns.
#[derive(Debug)]
struct Finished {
    predicate: ArrayRef,
    arguments: Vec<ArrayRef>,
    times: ArrayRef,
    seconds: ArrayRef,
}

impl Chunk {
    fn new() -> Chunk {
        Chunk {
            predicate: LargeBinaryBuilder::with_capacity(CHUNK, CHUNK * 4),
            arguments: Vec::new(),
            times: Vec::with_capacity(CHUNK),
            seconds: Vec::with_capacity(CHUNK),
        }
    }

    fn finish(mut self) -> io::Result<Finished> {
        let arguments = self.arguments.into_iter().map(Column::finish);
        Ok(Finished {
            predicate: Arc::new(texts(self.predicate.finish())?),
            arguments: arguments.collect::<io::Result<_>>()?,
            times: Arc::new(Int64Array::from(self.times)),
            seconds: Arc::new(Int64Array::from(self.seconds)),
        })
    }
}

/// A record that cannot be read: the output was not records.
fn malformed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("not a record: {what}"))
}

/// Reads records field by field.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        let taken = (self.bytes.get(self.at..self.at + n)).ok_or_else(|| malformed("too short"))?;
        self.at += n;
        Ok(taken)
    }

    fn array<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> io::Result<usize> {
        Ok(usize::from(u16::from_le_bytes(self.array()?)))
    }

    fn u32(&mut self) -> io::Result<usize> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }

    fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
}

/// An argument column: integers until a float or a symbol comes, floats until a symbol
/// comes, then text (the numbers before it written as the output prints them).
#[derive(Debug)]
enum Column {
    Ints(Vec<Option<i64>>),
    Floats(Vec<Option<f64>>),
    Texts(LargeBinaryBuilder, String),
}

/// An argument as a record holds it.
#[derive(Clone, Copy)]
enum Argument<'a> {
    Int(i64),
    Float(f64),
    Text(&'a [u8]),
}

impl Column {
    fn append(&mut self, argument: Option<Argument<'_>>) {
        use std::fmt::Write as _;
        match (&mut *self, argument) {
            (Column::Ints(v), Some(Argument::Int(i))) => v.push(Some(i)),
            (Column::Ints(v), None) => v.push(None),
            (Column::Floats(v), Some(Argument::Int(i))) => v.push(Some(i as f64)),
            (Column::Floats(v), Some(Argument::Float(f))) => v.push(Some(f)),
            (Column::Floats(v), None) => v.push(None),
            (Column::Texts(b, _), Some(Argument::Text(text))) => b.append_value(text),
            (Column::Texts(b, number), Some(Argument::Int(i))) => {
                number.clear();
                let _ = write!(number, "{}", Value::Int(i));
                b.append_value(number.as_bytes());
            }
            (Column::Texts(b, number), Some(Argument::Float(f))) => {
                number.clear();
                let _ = write!(number, "{}", Value::Float(f));
                b.append_value(number.as_bytes());
            }
            (Column::Texts(b, _), None) => b.append_null(),
            (Column::Ints(v), Some(Argument::Float(_))) => {
                let floats = v.iter().map(|i| i.map(|i| i as f64)).collect();
                *self = Column::Floats(floats);
                self.append(argument);
            }
            (Column::Ints(_) | Column::Floats(_), Some(Argument::Text(_))) => {
                self.become_texts();
                self.append(argument);
            }
        }
    }

    /// The column as text, the numbers in it as the output prints them.
    fn become_texts(&mut self) {
        let numbers: Vec<Option<Argument<'_>>> = match self {
            Column::Ints(v) => v.iter().map(|i| i.map(Argument::Int)).collect(),
            Column::Floats(v) => v.iter().map(|f| f.map(Argument::Float)).collect(),
            Column::Texts(..) => return,
        };
        *self = Column::texts(numbers.len());
        for number in numbers {
            self.append(number);
        }
    }

    /// An empty text column with room for `rows`.
    fn texts(rows: usize) -> Column {
        Column::Texts(
            LargeBinaryBuilder::with_capacity(rows, rows * 8),
            String::new(),
        )
    }

    fn finish(self) -> io::Result<ArrayRef> {
        Ok(match self {
            Column::Ints(v) => Arc::new(Int64Array::from(v)),
            Column::Floats(v) => Arc::new(Float64Array::from(v)),
            Column::Texts(mut b, _) => Arc::new(texts(b.finish())?),
        })
    }
}

impl Columns {
    pub fn new() -> Columns {
        Columns::default()
    }

    /// Reads the record `bytes` (its fields, after its length).
    fn record(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut fields = Reader { bytes, at: 0 };
        let kind = match fields.u8()? {
            0 => Kind::Point,
            1 => Kind::Start,
            2 => Kind::End,
            3 => Kind::Interval,
            _ => return Err(malformed("its kind")),
        };
        self.kind.get_or_insert(kind);
        let time = fields.u64()?;
        let second = match kind {
            Kind::Point => 0,
            Kind::Start => 1,
            Kind::End => -1,
            Kind::Interval => i64::try_from(fields.u64()?).unwrap_or(i64::MAX),
        };
        let name_length = fields.u16()?;
        let name = fields.take(name_length)?;
        if self.chunk.times.len() == CHUNK || self.chunk.times.capacity() == 0 {
            let full = std::mem::replace(&mut self.chunk, Chunk::new());
            if !full.times.is_empty() {
                self.done.push(full.finish()?);
            }
        }
        let chunk = &mut self.chunk;
        let row = chunk.times.len();
        chunk.predicate.append_value(name);
        chunk.times.push(i64::try_from(time).unwrap_or(i64::MAX));
        chunk.seconds.push(second);
        let arity = fields.u16()?;
        while chunk.arguments.len() < arity {
            let mut nulls = Vec::with_capacity(CHUNK);
            nulls.resize(row, None);
            chunk.arguments.push(Column::Ints(nulls));
        }
        for (i, column) in chunk.arguments.iter_mut().enumerate() {
            if i >= arity {
                column.append(None);
                continue;
            }
            let argument = match fields.u8()? {
                INT => Argument::Int(i64::from_le_bytes(fields.array()?)),
                FLOAT => Argument::Float(f64::from_bits(fields.u64()?)),
                SYMBOL => {
                    let length = fields.u32()?;
                    let text = fields.take(length)?;
                    Argument::Text(text)
                }
                _ => return Err(malformed("an argument")),
            };
            column.append(Some(argument));
        }
        Ok(())
    }

    /// Reads the whole records at the start of `bytes`; returns how many bytes they took.
    fn records(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut at = 0;
        while let Some(length) = bytes.get(at..at + 4) {
            let length = u32::from_le_bytes([length[0], length[1], length[2], length[3]]);
            let end = at + 4 + length as usize;
            let Some(record) = bytes.get(at + 4..end) else {
                break;
            };
            self.record(record)?;
            at = end;
        }
        Ok(at)
    }

    /// The records as a table, in chunks: `predicate`, `arg1`… (an argument column of
    /// integers typed as integers, of numbers as floats, of anything else as text, null
    /// past a fact's arity), then `time` (points), `time` and `change` (changes) or
    /// `start` and `end` (intervals, which are written as they end: ordered here by their
    /// start, then their predicate and arguments as the table holds them, in one chunk).
    /// With no records, the columns of `kind`. An error if the bytes written end inside a
    /// record.
    pub fn table(mut self, kind: Kind) -> io::Result<(SchemaRef, Vec<RecordBatch>)> {
        if !self.partial.is_empty() {
            return Err(malformed("the output ends inside one"));
        }
        if !self.chunk.times.is_empty() {
            self.done.push(self.chunk.finish()?);
        }
        let kind = self.kind.unwrap_or(kind);
        let (first, second) = match kind {
            Kind::Point => ("time", None),
            Kind::Start | Kind::End => ("time", Some("change")),
            Kind::Interval => ("start", Some("end")),
        };
        let width = self
            .done
            .iter()
            .map(|c| c.arguments.len())
            .max()
            .unwrap_or(0);
        // A column's type over every chunk: text if any chunk's is, else floats if any
        // chunk's are, else integers.
        let types: Vec<DataType> = (0..width)
            .map(|i| {
                let held = || self.done.iter().filter_map(|c| c.arguments.get(i));
                if held().any(|a| a.data_type() == &DataType::LargeUtf8) {
                    DataType::LargeUtf8
                } else if held().any(|a| a.data_type() == &DataType::Float64) {
                    DataType::Float64
                } else {
                    DataType::Int64
                }
            })
            .collect();
        let mut fields = vec![Field::new("predicate", DataType::LargeUtf8, true)];
        for (i, data_type) in types.iter().enumerate() {
            fields.push(Field::new(format!("arg{}", i + 1), data_type.clone(), true));
        }
        fields.push(Field::new(first, DataType::Int64, true));
        if let Some(second) = second {
            fields.push(Field::new(second, DataType::Int64, true));
        }
        let schema = Arc::new(Schema::new(fields));
        let mut batches = Vec::with_capacity(self.done.len());
        for chunk in self.done {
            let rows = chunk.times.len();
            let mut columns = vec![chunk.predicate];
            for (i, data_type) in types.iter().enumerate() {
                columns.push(match chunk.arguments.get(i) {
                    Some(column) => as_type(column, data_type)?,
                    None => new_null_array(data_type, rows),
                });
            }
            columns.push(chunk.times);
            if second.is_some() {
                columns.push(chunk.seconds);
            }
            batches.push(RecordBatch::try_new(schema.clone(), columns).map_err(io::Error::other)?);
        }
        if kind == Kind::Interval && !batches.is_empty() {
            let whole = concat_batches(&schema, &batches).map_err(io::Error::other)?;
            batches = vec![by_start(&whole)?];
        }
        Ok((schema, batches))
    }
}

/// An argument column of a chunk as the table's type for it: integers as floats, numbers
/// as text (as the output prints them), as [`Column::append`] turns them.
fn as_type(column: &ArrayRef, data_type: &DataType) -> io::Result<ArrayRef> {
    let mut typed = match data_type {
        _ if column.data_type() == data_type => return Ok(column.clone()),
        DataType::Float64 => Column::Floats(Vec::with_capacity(column.len())),
        _ => Column::texts(column.len()),
    };
    if let Some(ints) = column.as_primitive_opt::<Int64Type>() {
        ints.iter().for_each(|i| typed.append(i.map(Argument::Int)));
    } else if let Some(floats) = column.as_primitive_opt::<Float64Type>() {
        floats
            .iter()
            .for_each(|f| typed.append(f.map(Argument::Float)));
    } else {
        return Ok(column.clone());
    }
    typed.finish()
}

/// A column of bytes as text, checked to be UTF-8 in one pass.
fn texts(bytes: LargeBinaryArray) -> io::Result<LargeStringArray> {
    LargeStringArray::try_from_binary(bytes).map_err(|_| malformed("a text"))
}

/// The intervals of `batch` ordered by their start, then their predicate and arguments.
fn by_start(batch: &RecordBatch) -> io::Result<RecordBatch> {
    let width = batch.num_columns();
    // `start`, `predicate`, the arguments: every column but the last (`end`).
    let keys: Vec<SortColumn> = std::iter::once(width - 2)
        .chain(0..width - 2)
        .map(|i| SortColumn {
            values: batch.column(i).clone(),
            options: None,
        })
        .collect();
    let order = lexsort_to_indices(&keys, None).map_err(io::Error::other)?;
    take_record_batch(batch, &order).map_err(io::Error::other)
}

/// The sink's output, read as it is written.
impl io::Write for Columns {
    fn write(&mut self, mut bytes: &[u8]) -> io::Result<usize> {
        let given = bytes.len();
        // A record begun in an earlier write: its length, then the rest of it.
        while !self.partial.is_empty() && !bytes.is_empty() {
            let whole = match self.partial.get(..4) {
                Some(l) => 4 + u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize,
                None => 4,
            };
            let n = (whole - self.partial.len()).min(bytes.len());
            self.partial.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.partial.len() == whole && whole > 4 {
                let record = std::mem::take(&mut self.partial);
                self.record(&record[4..])?;
            }
        }
        let read = self.records(bytes)?;
        self.partial.extend_from_slice(&bytes[read..]);
        Ok(given)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use std::io::Write;

    /// The table's one chunk.
    fn one((_, mut batches): (SchemaRef, Vec<RecordBatch>)) -> RecordBatch {
        assert_eq!(batches.len(), 1);
        batches.remove(0)
    }

    /// A record's kind, times, predicate and arguments.
    type Line = (Kind, (u64, u64), &'static str, Vec<Value>);

    fn records(list: &[Line]) -> Vec<u8> {
        let mut out = Vec::new();
        for (kind, times, name, args) in list {
            push_record(&mut out, *kind, *times, name, args);
        }
        out
    }

    #[test]
    fn a_tally_counts_the_records_in_any_pieces() {
        let long = "http://example.org/a/very/long/name#1";
        let bytes = records(&[
            (
                Kind::Start,
                (4, 0),
                "q",
                vec![Value::Int(1), Value::sym(long)],
            ),
            (Kind::Point, (5, 0), "p", vec![]),
            (Kind::Interval, (5, 9), "r", vec![Value::Float(0.5)]),
        ]);
        for piece in [1, 3, 4, 7, bytes.len()] {
            let mut tally = Tally::default();
            let counted: u64 = bytes.chunks(piece).map(|p| tally.count(p)).sum();
            assert_eq!(counted, 3, "pieces of {piece}");
        }
    }

    #[test]
    fn records_read_back_in_any_pieces_as_typed_columns() {
        let long = "http://example.org/a/very/long/name#1";
        let bytes = records(&[
            (
                Kind::Start,
                (4, 0),
                "q",
                vec![Value::Int(1), Value::sym("a"), Value::Float(0.5)],
            ),
            (
                Kind::End,
                (6, 0),
                "q",
                vec![Value::Int(2), Value::sym(long)],
            ),
            (Kind::Start, (6, 0), "r", vec![Value::Int(3)]),
        ]);
        for piece in [1, 3, 7, bytes.len()] {
            let mut columns = Columns::new();
            for chunk in bytes.chunks(piece) {
                columns.write_all(chunk).unwrap_or_else(|e| panic!("{e}"));
            }
            let batch = one(columns.table(Kind::Start).unwrap_or_else(|e| panic!("{e}")));
            assert_eq!(batch.num_rows(), 3);
            let names: Vec<_> = batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            assert_eq!(
                names,
                ["predicate", "arg1", "arg2", "arg3", "time", "change"]
            );
            let predicate = batch.column(0).as_string::<i64>();
            assert_eq!((predicate.value(0), predicate.value(2)), ("q", "r"));
            let first = batch.column(1).as_primitive::<Int64Type>();
            assert_eq!(first.values().to_vec(), [1, 2, 3]);
            let second = batch.column(2).as_string::<i64>();
            assert_eq!((second.value(0), second.value(1)), ("a", long));
            assert!(second.is_null(2));
            let third = batch.column(3).as_primitive::<Float64Type>();
            assert_eq!(third.value(0), 0.5);
            assert!(third.is_null(1));
            let time = batch.column(4).as_primitive::<Int64Type>();
            assert_eq!(time.values().to_vec(), [4, 6, 6]);
            let change = batch.column(5).as_primitive::<Int64Type>();
            assert_eq!(change.values().to_vec(), [1, -1, 1]);
        }
    }

    #[test]
    fn intervals_are_ordered_by_start_and_mixed_columns_are_text() {
        let bytes = records(&[
            (Kind::Interval, (5, 9), "q", vec![Value::sym("b")]),
            (Kind::Interval, (2, 9), "q", vec![Value::Int(7)]),
            (Kind::Interval, (2, 9), "p", vec![Value::sym("c")]),
        ]);
        let mut columns = Columns::new();
        columns.write_all(&bytes).unwrap_or_else(|e| panic!("{e}"));
        let batch = one(columns
            .table(Kind::Interval)
            .unwrap_or_else(|e| panic!("{e}")));
        let predicate = batch.column(0).as_string::<i64>();
        let args = batch.column(1).as_string::<i64>();
        let rows: Vec<_> = (0..3)
            .map(|r| (predicate.value(r), args.value(r)))
            .collect();
        assert_eq!(rows, [("p", "c"), ("q", "7"), ("q", "b")]);
        let start = batch.column(2).as_primitive::<Int64Type>();
        assert_eq!(start.values().to_vec(), [2, 2, 5]);
    }

    #[test]
    fn chunks_share_the_types_of_the_whole_table() {
        // Integers, then past the first chunk a name in the same column and a wider fact.
        let mut list: Vec<_> = (0..CHUNK as i64 + 10)
            .map(|i| (Kind::Point, (i as u64, 0), "p", vec![Value::Int(i)]))
            .collect();
        list.push((
            Kind::Point,
            (1 << 20, 0),
            "q",
            vec![Value::sym("x"), Value::Float(1.5)],
        ));
        let mut columns = Columns::new();
        columns
            .write_all(&records(&list))
            .unwrap_or_else(|e| panic!("{e}"));
        let (schema, batches) = columns.table(Kind::Point).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(batches.len(), 2);
        assert_eq!(
            batches.iter().map(|b| b.num_rows()).sum::<usize>(),
            list.len()
        );
        let types: Vec<_> = schema
            .fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        assert_eq!(
            types,
            [
                DataType::LargeUtf8,
                DataType::LargeUtf8,
                DataType::Float64,
                DataType::Int64
            ]
        );
        let first = batches[0].column(1).as_string::<i64>();
        assert_eq!((first.value(0), first.value(7)), ("0", "7"));
        assert!(batches[0].column(2).is_null(0));
        let last = &batches[1];
        let row = last.num_rows() - 1;
        assert_eq!(last.column(1).as_string::<i64>().value(row), "x");
        assert_eq!(last.column(2).as_primitive::<Float64Type>().value(row), 1.5);
    }

    #[test]
    fn no_records_give_the_columns_of_their_kind() {
        let (schema, batches) = Columns::new()
            .table(Kind::Point)
            .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<_> = schema.fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["predicate", "time"]);
        assert!(batches.is_empty());
    }

    #[test]
    fn bytes_that_are_not_records_are_an_error() {
        let mut columns = Columns::new();
        let mut bad = 3u32.to_le_bytes().to_vec();
        bad.extend_from_slice(&[9, 9, 9]);
        assert!(columns.write_all(&bad).is_err());
        let mut cut = Columns::new();
        let mut record = Vec::new();
        push_record(&mut record, Kind::Point, (1, 0), "p", &[Value::Int(1)]);
        cut.write_all(&record[..record.len() - 1])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cut.table(Kind::Point).is_err());
    }
}
