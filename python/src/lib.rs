//! The native half of the `stgflow` Python package: the command line's library run
//! in-process (the same parsing, front ends, engines and output as the `stgflow` binary),
//! its output and diagnostics handed back as bytes for the Python half to shape.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stgflow_io::interrupt;

/// Runs `stgflow ARGS…` in-process with `stdin` as standard input and returns the exit
/// code, standard output and standard error. The GIL is released while it runs; a
/// signal Python would raise (Ctrl-C) stops the run as SIGINT stops the command, at a
/// complete time point, and is raised once it has stopped.
#[pyfunction]
#[pyo3(signature = (args, stdin=None))]
fn run(
    py: Python<'_>,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
) -> PyResult<(i32, Py<PyBytes>, Py<PyBytes>)> {
    let (done, finished) = std::sync::mpsc::channel();
    let finished = std::sync::Mutex::new(finished);
    let command = std::thread::spawn(move || {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let input = std::io::Cursor::new(stdin.unwrap_or_default());
        let argv = std::iter::once("stgflow".to_owned()).chain(args);
        let streams = stgflow_cli::Streams::default();
        let code = stgflow_cli::run(argv, input, &mut out, &mut err, streams);
        let _ = done.send(());
        (code, out, err)
    });
    let mut raised = None;
    loop {
        let ended = py.allow_threads(|| {
            let finished = finished.lock().unwrap_or_else(|e| e.into_inner());
            // Disconnected: the run's thread ended without a word (a panic).
            !matches!(
                finished.recv_timeout(SIGNALS),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
            )
        });
        if ended {
            break;
        }
        if let Err(signal) = py.check_signals() {
            raised.get_or_insert(signal);
            interrupt::request(interrupt::Stop::Signal(2));
        }
    }
    let joined = py.allow_threads(|| command.join());
    interrupt::clear();
    let (code, out, err) =
        joined.map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("stgflow's run failed"))?;
    if let Some(signal) = raised {
        return Err(signal);
    }
    Ok((
        code,
        PyBytes::new(py, &out).unbind(),
        PyBytes::new(py, &err).unbind(),
    ))
}

/// How often a run looks for a signal Python has taken.
const SIGNALS: std::time::Duration = std::time::Duration::from_millis(50);

#[pymodule]
fn _stgflow(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
