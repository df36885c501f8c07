//! The native half of the `stgflow` Python package: the command line's library run
//! in-process (the same parsing, front ends, engines and output as the `stgflow` binary),
//! its output and diagnostics handed back as bytes for the Python half to shape.

use std::sync::{Mutex, mpsc};

use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_pyarrow::FromPyArrow;
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use stgflow_cli::StreamTable;
use stgflow_io::interrupt;
use stgflow_io::sink::records::{Columns, Kind};

/// The command's allocator, so that a run costs here what it costs the command (the
/// engine's buffers come and go by the million).
#[global_allocator]
static GLOBAL: stgflow_alloc::Allocator = stgflow_alloc::Allocator;

/// Runs `stgflow ARGS…` in-process with `stdin` as standard input and returns the exit
/// code, standard output and standard error. `tables` are `(name, table)` pairs, each
/// table anything with Arrow's C stream interface (a `pyarrow.Table`): the stream `name`
/// on the command line reads its columns (see [`stream_tables`]). The GIL is released
/// while it runs; a signal Python would raise (Ctrl-C) stops the run as SIGINT stops the
/// command, at a complete time point, and is raised once it has stopped.
#[pyfunction]
#[pyo3(signature = (args, stdin=None, tables=Vec::new()))]
fn run(
    py: Python<'_>,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    tables: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<(i32, Py<PyBytes>, Py<PyBytes>)> {
    let streams = stgflow_cli::Streams {
        tables: stream_tables(tables)?,
        ..Default::default()
    };
    let (code, out, err) = finished(py, command(args, stdin, streams, Vec::new()))?;
    Ok((
        code,
        PyBytes::new(py, &out).unbind(),
        PyBytes::new(py, &err).unbind(),
    ))
}

/// Runs `stgflow run ARGS…` in-process as [`run`] does, its output (`points`, `changes`
/// or `intervals`, as `kind` says: `point`, `change` or `interval`) taken as binary
/// records and returned as a [`Table`]: columns, not text to parse (see
/// `stgflow_io::sink::records`); `tables` as [`run`] takes them. Returns the exit code,
/// the table (what was written before an error, where there was one) and standard error.
#[pyfunction]
#[pyo3(signature = (args, kind, stdin=None, tables=Vec::new()))]
fn run_table(
    py: Python<'_>,
    args: Vec<String>,
    kind: &str,
    stdin: Option<Vec<u8>>,
    tables: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<(i32, Table, Py<PyBytes>)> {
    let kind = match kind {
        "point" => Kind::Point,
        "change" => Kind::Start,
        "interval" => Kind::Interval,
        other => {
            let message = format!("kind is point, change or interval, not {other:?}");
            return Err(pyo3::exceptions::PyValueError::new_err(message));
        }
    };
    let streams = stgflow_cli::Streams {
        records: true,
        tables: stream_tables(tables)?,
        ..Default::default()
    };
    let (code, columns, err) = finished(py, command(args, stdin, streams, Columns::new()))?;
    let (schema, batches) = (py.detach(|| columns.table(kind)))
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        code,
        Table { schema, batches },
        PyBytes::new(py, &err).unbind(),
    ))
}

/// Each `(name, table)` as a stream the command line can name: the table's record
/// batches taken through Arrow's C stream interface (`arrow-pyarrow`), their columns
/// shared with Python, not copied. They are all taken here, on the calling thread, so
/// that a stream whose batches Python makes runs none of Python's code once the GIL is
/// released.
fn stream_tables(tables: Vec<(String, Bound<'_, PyAny>)>) -> PyResult<Vec<StreamTable>> {
    let mut taken = Vec::with_capacity(tables.len());
    for (name, table) in tables {
        let reader = ArrowArrayStreamReader::from_pyarrow_bound(&table)?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<RecordBatch>, _>>()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        taken.push(StreamTable {
            name,
            schema,
            batches,
        });
    }
    Ok(taken)
}

/// A run's output as Arrow record batches, handed to pyarrow through the Arrow PyCapsule
/// interface (`pyarrow.RecordBatchReader.from_stream(table)`): the columns move, uncopied.
#[pyclass]
struct Table {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

#[pymethods]
impl Table {
    /// The batches as the C stream interface's stream, in a capsule that releases it
    /// unless pyarrow has taken it.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The columns are given as they are; pyarrow casts where it asked for others.
        let _ = requested_schema;
        let batches = self.batches.clone().into_iter().map(Ok);
        let reader = RecordBatchIterator::new(batches, self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, stream, Some(c"arrow_array_stream".to_owned()))
    }
}

/// `stgflow ARGS…` on a thread of its own, `stdin` its standard input and `stdout` its
/// standard output: its exit code, `stdout` and its standard error once it ends.
fn command<W: std::io::Write + Send + 'static>(
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    streams: stgflow_cli::Streams,
    mut stdout: W,
) -> std::thread::JoinHandle<(i32, W, Vec<u8>)> {
    std::thread::spawn(move || {
        let mut err = Vec::new();
        let input = std::io::Cursor::new(stdin.unwrap_or_default());
        let argv = std::iter::once("stgflow".to_owned()).chain(args);
        let code = stgflow_cli::run(argv, input, &mut stdout, &mut err, streams);
        (code, stdout, err)
    })
}

/// What the run on `command` returns, once it has ended; the GIL released meanwhile. A
/// signal Python takes while it runs stops it at a complete time point (as SIGINT stops
/// the command), and is raised once it has stopped.
fn finished<T>(py: Python<'_>, command: std::thread::JoinHandle<T>) -> PyResult<T> {
    let mut raised = None;
    while !command.is_finished() {
        py.detach(|| std::thread::sleep(SIGNALS / 5));
        if let Err(signal) = py.check_signals() {
            raised.get_or_insert(signal);
            interrupt::request(interrupt::Stop::Signal(2));
        }
    }
    let joined = command.join();
    interrupt::clear();
    let value =
        joined.map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("stgflow's run failed"))?;
    match raised {
        Some(signal) => Err(signal),
        None => Ok(value),
    }
}

/// How often a run looks for a signal Python has taken.
const SIGNALS: std::time::Duration = std::time::Duration::from_millis(50);

/// A live run: `stgflow ARGS…` reading its standard input from what [`Live::send`] is
/// given, as the command reads a pipe (a time point is complete once a line of a later
/// one comes, or the input ends), and writing what it prints a time point at a time (a
/// live run flushes after each) for [`Live::receive`].
#[pyclass]
struct Live {
    input: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    output: Mutex<mpsc::Receiver<Vec<u8>>>,
    command: Mutex<Option<Command>>,
}

/// The run's thread: its exit code and standard error, once it ends.
type Command = std::thread::JoinHandle<(i32, Vec<u8>)>;

#[pymethods]
impl Live {
    #[new]
    fn new(args: Vec<String>) -> Live {
        let (input, lines) = mpsc::channel();
        let (flushed, output) = mpsc::channel();
        let command = std::thread::spawn(move || {
            let mut err = Vec::new();
            let stdin = std::io::BufReader::new(Received {
                from: lines,
                chunk: Vec::new(),
                at: 0,
            });
            let stdout = Flushed {
                buffer: Vec::new(),
                to: flushed,
            };
            let argv = std::iter::once("stgflow".to_owned()).chain(args);
            let code = stgflow_cli::run(argv, stdin, stdout, &mut err, Default::default());
            (code, err)
        });
        Live {
            input: Mutex::new(Some(input)),
            output: Mutex::new(output),
            command: Mutex::new(Some(command)),
        }
    }

    /// Sends `data` to the run's standard input; an error once the input is closed.
    fn send(&self, data: Vec<u8>) -> PyResult<()> {
        let input = self.input.lock().unwrap_or_else(|e| e.into_inner());
        // A run that ended (an input error) takes no more: `close` says why.
        match input.as_ref() {
            Some(sender) => {
                let _ = sender.send(data);
                Ok(())
            }
            None => Err(pyo3::exceptions::PyValueError::new_err(
                "the input is closed",
            )),
        }
    }

    /// What the run printed since the last call: waits up to `timeout` seconds for the
    /// first of it (the GIL released), then takes whatever else is there.
    #[pyo3(signature = (timeout=0.0))]
    fn receive(&self, py: Python<'_>, timeout: f64) -> PyResult<Py<PyBytes>> {
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_secs_f64(timeout.max(0.0));
        let mut bytes = Vec::new();
        loop {
            let wait = deadline
                .saturating_duration_since(std::time::Instant::now())
                .min(SIGNALS);
            let waiting = py.detach(|| {
                let output = self.output.lock().unwrap_or_else(|e| e.into_inner());
                let first = output.recv_timeout(wait);
                let waiting = matches!(first, Err(mpsc::RecvTimeoutError::Timeout));
                bytes.extend(first.into_iter().flatten());
                bytes.extend(output.try_iter().flatten());
                waiting
            });
            // Something came, the run ended (nothing more will), or the time is up.
            if !waiting || std::time::Instant::now() >= deadline {
                return Ok(PyBytes::new(py, &bytes).unbind());
            }
            py.check_signals()?;
        }
    }

    /// Ends the input and waits for the run to end (a signal Python takes meanwhile stops
    /// it at a complete time point, then is raised); returns its exit code, what it
    /// printed since the last `receive` and its standard error.
    fn close(&self, py: Python<'_>) -> PyResult<(i32, Py<PyBytes>, Py<PyBytes>)> {
        drop(self.input.lock().unwrap_or_else(|e| e.into_inner()).take());
        let command = self
            .command
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(command) = command else {
            return Err(pyo3::exceptions::PyValueError::new_err("the run is closed"));
        };
        let (code, err) = finished(py, command)?;
        let output = self.output.lock().unwrap_or_else(|e| e.into_inner());
        let rest: Vec<u8> = output.try_iter().flatten().collect();
        Ok((
            code,
            PyBytes::new(py, &rest).unbind(),
            PyBytes::new(py, &err).unbind(),
        ))
    }
}

/// Standard input made of the chunks [`Live::send`] sends; it ends when the sender is
/// dropped.
struct Received {
    from: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl std::io::Read for Received {
    fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.from.recv() {
                Ok(chunk) => (self.chunk, self.at) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = into.len().min(self.chunk.len() - self.at);
        into[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Standard output handed over at each flush (after each time point of a live run).
struct Flushed {
    buffer: Vec<u8>,
    to: mpsc::Sender<Vec<u8>>,
}

impl std::io::Write for Flushed {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buffer.is_empty() {
            // Nobody receives any more: the session was dropped; the output goes nowhere.
            let _ = self.to.send(std::mem::take(&mut self.buffer));
        }
        Ok(())
    }
}

impl Drop for Flushed {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

#[pymodule]
fn _stgflow(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(run_table, module)?)?;
    module.add_class::<Live>()?;
    module.add_class::<Table>()?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
