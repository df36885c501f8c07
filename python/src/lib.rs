//! The native half of the `stgflow` Python package: the command line's library run
//! in-process (the same parsing, front ends, engines and output as the `stgflow` binary),
//! its output and diagnostics handed back as bytes for the Python half to shape.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Runs `stgflow ARGS…` in-process with `stdin` as standard input and returns the exit
/// code, standard output and standard error. The GIL is released while it runs.
#[pyfunction]
#[pyo3(signature = (args, stdin=None))]
fn run(
    py: Python<'_>,
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
) -> (i32, Py<PyBytes>, Py<PyBytes>) {
    let (code, out, err) = py.allow_threads(|| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let input = std::io::Cursor::new(stdin.unwrap_or_default());
        let argv = std::iter::once("stgflow".to_owned()).chain(args);
        let streams = stgflow_cli::Streams::default();
        let code = stgflow_cli::run(argv, input, &mut out, &mut err, streams);
        (code, out, err)
    });
    (
        code,
        PyBytes::new(py, &out).unbind(),
        PyBytes::new(py, &err).unbind(),
    )
}

#[pymodule]
fn _stgflow(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
