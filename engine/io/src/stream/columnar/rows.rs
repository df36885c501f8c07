//! A columnar stream read in parts by rows, as a text file is read in parts by lines
//! ([`crate::stream::split`]): a row is a line, a part's offsets are row numbers. The rows
//! of a time point are found by a binary search over the `time` column, decoded a row
//! group (record batch) at a time and kept for the next probes; a part's reader decodes
//! only the row groups its rows lie in (Parquet skips to its first row), so no thread
//! decodes the whole file.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_ipc::reader::FileReader;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};

use super::{BATCH_ROWS, Batches, Code, Columnar, Kind};
use crate::drive::FactSource;
use crate::stream::{FactReader, MAX_TIME};

/// Rows whose times a file keeps decoded for its searches (the groups searched last): the
/// cut's searches and every part's first search find their groups decoded.
const CACHED_ROWS: usize = 1 << 22;

/// Rows read at a time where the first or the last fact is looked for.
const SEARCH_ROWS: u64 = 1024;

/// Parts are sized by input bytes ([`RowFile::weight`]): a row weighs about as much as the
/// text line of the same fact.
const ROW_WEIGHT: u64 = 32;

/// Where a [`RowFile`]'s rows are.
enum Source {
    /// A Parquet file, its metadata read once.
    Parquet {
        path: String,
        metadata: ArrowReaderMetadata,
    },
    Arrow {
        path: String,
    },
    /// A table in memory.
    Memory {
        batches: Arc<[RecordBatch]>,
    },
}

/// A columnar stream to be read in parts by rows (see the module docs).
pub struct RowFile {
    source: Source,
    kind: Kind,
    like: FactReader<io::Empty>,
    /// Per row group (record batch), the row it starts at; then the number of rows.
    starts: Vec<u64>,
    /// The index of the `time` column.
    time: usize,
    /// The time points of the rows of the groups searched last ([`NO_TIME`]: a row
    /// without a valid time, which the reader meets as an error), by group.
    times: Mutex<Vec<(usize, Arc<[u64]>)>>,
}

/// A row's time point where it has none.
const NO_TIME: u64 = u64::MAX;

impl std::fmt::Debug for RowFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowFile")
            .field("name", &self.like.name())
            .field("rows", &self.rows())
            .finish()
    }
}

impl RowFile {
    /// The columnar file `path`, to be read as `like` reads (its name, schema, tick and
    /// tolerance). An error where it cannot be read as a stream: it is then read whole,
    /// whose reader reports why.
    pub fn open(path: &str, like: FactReader<io::Empty>) -> io::Result<RowFile> {
        let kind = Kind::of(path).unwrap_or(Kind::Parquet);
        let file = File::open(path)?;
        let (source, schema, lengths) = match kind {
            Kind::Parquet => {
                let metadata = parquet_metadata(&file).map_err(io::Error::other)?;
                let lengths: Vec<u64> = (metadata.metadata().row_groups().iter())
                    .map(|group| u64::try_from(group.num_rows()).unwrap_or(0))
                    .collect();
                let schema = metadata.schema().clone();
                let path = path.to_owned();
                (Source::Parquet { path, metadata }, schema, lengths)
            }
            Kind::Arrow => {
                let reader = FileReader::try_new_buffered(file, None).map_err(io::Error::other)?;
                let schema = reader.schema();
                let lengths = arrow_lengths(&File::open(path)?)?;
                let path = path.to_owned();
                (Source::Arrow { path }, schema, lengths)
            }
        };
        let time = schema.index_of("time").map_err(io::Error::other)?;
        schema.index_of("predicate").map_err(io::Error::other)?;
        Ok(RowFile::new(source, kind, like, time, &lengths))
    }

    /// The record batches of a table in memory (`schema` theirs), read as an Arrow file's;
    /// `None` where they have no `time` column (read whole, their reader says so).
    pub fn of_batches(
        schema: &arrow_schema::Schema,
        batches: Vec<RecordBatch>,
        like: FactReader<io::Empty>,
    ) -> Option<RowFile> {
        let time = schema.index_of("time").ok()?;
        schema.index_of("predicate").ok()?;
        let lengths: Vec<u64> = batches.iter().map(|b| b.num_rows() as u64).collect();
        let source = Source::Memory {
            batches: batches.into(),
        };
        Some(RowFile::new(source, Kind::Arrow, like, time, &lengths))
    }

    fn new(
        source: Source,
        kind: Kind,
        like: FactReader<io::Empty>,
        time: usize,
        lengths: &[u64],
    ) -> RowFile {
        let mut starts = Vec::with_capacity(lengths.len() + 1);
        let mut rows = 0;
        for length in lengths {
            starts.push(rows);
            rows += length;
        }
        starts.push(rows);
        RowFile {
            source,
            kind,
            like,
            starts,
            time,
            times: Mutex::new(Vec::new()),
        }
    }

    /// The stream's name, as errors give it.
    pub fn name(&self) -> &str {
        self.like.name()
    }

    /// Its rows.
    pub fn rows(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0)
    }

    /// What its parts are sized by: about the bytes of the same facts as text.
    pub fn weight(&self) -> u64 {
        self.rows().saturating_mul(ROW_WEIGHT)
    }

    /// The group that row `row` lies in.
    fn group_of(&self, row: u64) -> usize {
        self.starts.partition_point(|&s| s <= row).saturating_sub(1)
    }

    /// A reader of the rows `rows`, their line numbers (and row groups, in errors) those of
    /// the whole file.
    pub fn reader(&self, rows: Range<u64>) -> Columnar {
        let mut columnar = Columnar::unopened(self.like.with_input(io::empty()), self.kind);
        columnar.group_starts = self.starts[..self.starts.len() - 1]
            .iter()
            .map(|&s| s as usize)
            .collect();
        columnar.counting_groups = false;
        columnar.rows_before = rows.start as usize;
        columnar.batches = self.batches(rows).map_err(|e| {
            let message = format!("cannot read the file: {e}");
            Some(columnar.error(Code::E103, message, String::new()))
        });
        columnar
    }

    /// The batches of the rows `rows`.
    fn batches(&self, rows: Range<u64>) -> Result<Batches, String> {
        if rows.is_empty() {
            return Ok(Batches::Memory(Vec::new().into_iter()));
        }
        let (first, last) = (self.group_of(rows.start), self.group_of(rows.end - 1));
        let at = self.starts[first];
        let inner = match &self.source {
            Source::Parquet { path, metadata } => {
                let file = File::open(path).map_err(|e| e.to_string())?;
                let skip = (rows.start - at) as usize;
                let selection = vec![
                    RowSelector::skip(skip),
                    RowSelector::select((rows.end - rows.start) as usize),
                ];
                let reader =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata.clone())
                        .with_row_groups((first..=last).collect())
                        .with_row_selection(RowSelection::from(selection))
                        .with_batch_size(BATCH_ROWS)
                        .build()
                        .map_err(|e| e.to_string())?;
                // The selection is exactly the rows.
                return Ok(Batches::Parquet(reader));
            }
            Source::Arrow { path } => {
                let file = File::open(path).map_err(|e| e.to_string())?;
                let mut reader =
                    FileReader::try_new_buffered(file, None).map_err(|e| e.to_string())?;
                reader.set_index(first).map_err(|e| e.to_string())?;
                Batches::Arrow(reader)
            }
            Source::Memory { batches } => {
                let part: Vec<RecordBatch> = batches[first..=last].to_vec();
                Batches::Memory(part.into_iter())
            }
        };
        Ok(Batches::Window {
            inner: Box::new(inner),
            at,
            range: rows,
        })
    }

    /// The time points of group `group`'s rows.
    fn group_times(&self, group: usize) -> io::Result<Arc<[u64]>> {
        let mut cache = self.times.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, times)) = cache.iter().find(|(g, _)| *g == group) {
            return Ok(times.clone());
        }
        drop(cache);
        let times: Arc<[u64]> = self.decode_times(group)?.into();
        cache = self.times.lock().unwrap_or_else(|p| p.into_inner());
        let mut cached: usize = cache.iter().map(|(_, t)| t.len()).sum();
        while !cache.is_empty() && cached + times.len() > CACHED_ROWS {
            cached -= cache.remove(0).1.len();
        }
        cache.push((group, times.clone()));
        Ok(times)
    }

    /// Decodes group `group`'s `time` column into time points.
    fn decode_times(&self, group: usize) -> io::Result<Vec<u64>> {
        let mut times = Vec::new();
        let tick = self.like.state.tick;
        match &self.source {
            Source::Parquet { path, metadata } => {
                let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(
                    File::open(path)?,
                    metadata.clone(),
                );
                let mask = ProjectionMask::roots(builder.parquet_schema(), [self.time]);
                let reader = (builder.with_row_groups(vec![group]))
                    .with_projection(mask)
                    .with_batch_size(BATCH_ROWS)
                    .build()
                    .map_err(io::Error::other)?;
                for batch in reader {
                    time_points(batch.map_err(io::Error::other)?.column(0), tick, &mut times);
                }
            }
            Source::Arrow { path } => {
                let file = File::open(path)?;
                let mut reader = FileReader::try_new_buffered(file, Some(vec![self.time]))
                    .map_err(io::Error::other)?;
                reader.set_index(group).map_err(io::Error::other)?;
                if let Some(batch) = reader.next() {
                    time_points(batch.map_err(io::Error::other)?.column(0), tick, &mut times);
                }
            }
            Source::Memory { batches } => {
                time_points(batches[group].column(self.time), tick, &mut times);
            }
        }
        Ok(times)
    }

    /// The first row in `rows` with a time, and its time point.
    pub(crate) fn time_from(&self, rows: Range<u64>) -> io::Result<Option<(u64, u64)>> {
        let mut row = rows.start;
        while row < rows.end.min(self.rows()) {
            let group = self.group_of(row);
            let times = self.group_times(group)?;
            let start = self.starts[group];
            let end = rows.end.min(self.starts[group + 1]);
            let within = &times[(row - start) as usize..(end - start) as usize];
            if let Some(at) = within.iter().position(|&t| t != NO_TIME) {
                return Ok(Some((row + at as u64, within[at])));
            }
            row = end;
        }
        Ok(None)
    }

    /// The first row in `within` at time point `time` or later, where the rows are in time
    /// order (`within.end` if none is); the rows before it without a time go with the rows
    /// before them.
    pub(crate) fn offset_of(&self, time: u64, within: Range<u64>) -> io::Result<u64> {
        let end = within.end.min(self.rows());
        let (mut lo, mut hi) = (within.start, end);
        // Invariant: every row with a time in [within.start, lo) is before `time`, and the
        // first at or after `hi` (if any before `end`) is at `time` or later.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.time_from(mid..hi)? {
                Some((row, t)) if t < time => lo = row + 1,
                _ => hi = mid,
            }
        }
        Ok(self.time_from(lo..end)?.map_or(end, |(row, _)| row))
    }

    /// The time order a reader of the whole file carries at row `at`: the latest time of
    /// the rows before, and the line (row, from 1) where it was first read; found by
    /// reading back from `at` over the rows of that time.
    pub(crate) fn latest_before(&self, at: u64) -> io::Result<Option<(u64, usize)>> {
        let mut latest: Option<(u64, u64)> = None;
        let mut end = at;
        while end > 0 {
            let group = self.group_of(end - 1);
            let start = self.starts[group];
            let times = self.group_times(group)?;
            for (i, &time) in times[..(end - start) as usize].iter().enumerate().rev() {
                let row = start + i as u64;
                match latest {
                    _ if time == NO_TIME => {}
                    None => latest = Some((time, row)),
                    Some((t, _)) if t == time => latest = Some((t, row)),
                    Some(_) => return Ok(latest.map(|(t, row)| (t, row as usize + 1))),
                }
            }
            end = start;
        }
        Ok(latest.map(|(t, row)| (t, row as usize + 1)))
    }

    /// The time of the first fact, as the whole file's reader reads it.
    pub(crate) fn first_time(&self) -> Option<u64> {
        let rows = self.rows();
        for from in (0..rows).step_by(SEARCH_ROWS as usize) {
            let mut reader = self.reader(from..rows.min(from + SEARCH_ROWS));
            match reader.next_fact() {
                Ok(Some(fact)) => return Some(fact.time),
                Ok(None) => {}
                // A bad row first gives no time, as a bad line first does.
                Err(_) => return None,
            }
        }
        None
    }

    /// The time of the last fact, read back from the end a few rows at a time.
    pub(crate) fn last_time(&self) -> Option<u64> {
        let rows = self.rows();
        (0..rows.div_ceil(SEARCH_ROWS)).rev().find_map(|k| {
            let from = k * SEARCH_ROWS;
            let mut reader = self.reader(from..rows.min(from + SEARCH_ROWS));
            let mut last = None;
            while let Ok(Some(fact)) = reader.next_fact() {
                last = Some(fact.time);
            }
            last
        })
    }
}

/// The time points of `column`'s rows, where the reader would take them as such (an
/// integer, not negative, not too large, on a tick; else [`NO_TIME`]), onto `times`.
fn time_points(column: &ArrayRef, tick: u64, times: &mut Vec<u64>) {
    let point = |time: Option<u64>| match time {
        Some(t) if t <= MAX_TIME && t % tick == 0 => t / tick,
        _ => NO_TIME,
    };
    if let Some(a) = column.as_primitive_opt::<Int64Type>() {
        extend_times(a, |t| u64::try_from(t).ok(), point, times);
    } else if let Some(a) = column.as_primitive_opt::<Int32Type>() {
        extend_times(a, |t| u64::try_from(t).ok(), point, times);
    } else if let Some(a) = column.as_primitive_opt::<UInt32Type>() {
        extend_times(a, |t| Some(u64::from(t)), point, times);
    } else if let Some(a) = column.as_primitive_opt::<UInt64Type>() {
        extend_times(a, Some, point, times);
    } else {
        // Not a column of times: the reader fails at its first row.
        times.extend(std::iter::repeat_n(NO_TIME, column.len()));
    }
}

/// `column`'s times as time points onto `times`: from the values themselves where none
/// is null.
fn extend_times<T: ArrowPrimitiveType>(
    column: &PrimitiveArray<T>,
    time: impl Fn(T::Native) -> Option<u64>,
    point: impl Fn(Option<u64>) -> u64,
    times: &mut Vec<u64>,
) {
    if column.null_count() == 0 {
        times.extend(column.values().iter().map(|&t| point(time(t))));
    } else {
        times.extend(column.iter().map(|t| point(t.and_then(&time))));
    }
}

/// The rows of each record batch of the Arrow file `file`, from their headers (the
/// footer's blocks, then each block's message without its body).
fn arrow_lengths(file: &File) -> io::Result<Vec<u64>> {
    let len = file.metadata()?.len();
    let mut tail = [0u8; 10];
    read_exact_at(
        file,
        &mut tail,
        len.checked_sub(10)
            .ok_or_else(|| io::Error::other("too short"))?,
    )?;
    let footer_len = arrow_ipc::reader::read_footer_length(tail).map_err(io::Error::other)?;
    let mut footer = vec![0u8; footer_len];
    let at = (len - 10).checked_sub(footer_len as u64);
    read_exact_at(
        file,
        &mut footer,
        at.ok_or_else(|| io::Error::other("bad footer"))?,
    )?;
    let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| io::Error::other(e.to_string()))?;
    let mut lengths = Vec::new();
    for block in footer.recordBatches().iter().flatten() {
        let mut meta =
            vec![0u8; usize::try_from(block.metaDataLength()).map_err(io::Error::other)?];
        let offset = u64::try_from(block.offset()).map_err(io::Error::other)?;
        read_exact_at(file, &mut meta, offset)?;
        // An encapsulated message: a continuation marker and its length, or its length alone.
        let skip = if meta.get(..4) == Some(&[0xff; 4]) {
            8
        } else {
            4
        };
        let message = arrow_ipc::root_as_message(meta.get(skip..).unwrap_or_default())
            .map_err(|e| io::Error::other(e.to_string()))?;
        let batch = (message.header_as_record_batch())
            .ok_or_else(|| io::Error::other("a block is not a record batch"))?;
        lengths.push(u64::try_from(batch.length()).map_err(io::Error::other)?);
    }
    Ok(lengths)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut at: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, at)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                at += n as u64;
            }
        }
    }
    Ok(())
}

/// A Parquet file's metadata (with its page index, where it has one), its text columns to
/// be read as views into the decoded pages rather than copied into one buffer per column.
pub(super) fn parquet_metadata(
    file: &File,
) -> Result<ArrowReaderMetadata, parquet::errors::ParquetError> {
    let options = ArrowReaderOptions::new().with_page_index(true);
    let metadata = ArrowReaderMetadata::load(file, options.clone())?;
    let schema = as_views(metadata.schema());
    ArrowReaderMetadata::try_new(metadata.metadata().clone(), options.with_schema(schema))
}

/// `schema` with its text columns read as views into the decoded pages rather than
/// copied into one buffer per column.
fn as_views(schema: &arrow_schema::SchemaRef) -> arrow_schema::SchemaRef {
    use arrow_schema::DataType;
    let fields: Vec<arrow_schema::Field> = (schema.fields().iter())
        .map(|field| match field.data_type() {
            DataType::Utf8 | DataType::LargeUtf8 => {
                field.as_ref().clone().with_data_type(DataType::Utf8View)
            }
            _ => field.as_ref().clone(),
        })
        .collect();
    Arc::new(arrow_schema::Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    ))
}
