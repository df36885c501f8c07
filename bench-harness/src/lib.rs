//! Benchmarks for stgflow.
//!
//! * The criterion benches are in `benches/` (each file's `//!` says how to run it);
//!   [`run_reference`] runs an evaluator end to end over an in-memory stream, exactly as
//!   `stgflow run` does, with the output discarded.
//! * The `stgflow-bench` binary runs the real `stgflow` binary as a user would:
//!   [`sweep`] over a grid of workloads ([`workload`]), workers, processes, window sizes,
//!   rates and stream lengths, measured by [`measure`], drawn by [`plot`] and written up
//!   by [`report`]; [`compare`] runs peer reasoners (Laser, RTEC) on the same input and
//!   diffs their answers.
//!
//! Recorded figures and the commands behind them are in `BENCHMARKS.md` at the root.

pub mod compare;
pub mod measure;
pub mod plot;
pub mod report;
pub mod sweep;
pub mod workload;

use anyhow::{Context, anyhow};
use std::sync::Arc;
use stgflow_io::drive::{FactSource, ProgramFacts, RunSummary, Timeline};
use stgflow_io::sink::{Mode, Sink};

use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Format, Schema};
use stgflow_lang::{Compiled, compile_str};

pub use stgflow_engine::Engine;

/// One input stream of an in-process run.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    pub bytes: &'a [u8],
    pub format: Arc<dyn Format>,
    /// The clock tick (`--tick`): input time t is time point t / tick.
    pub tick: u64,
}

impl<'a> Input<'a> {
    /// TD facts, tick 1.
    pub fn td(bytes: &'a [u8]) -> Input<'a> {
        Input {
            bytes,
            format: Arc::new(Td),
            tick: 1,
        }
    }
}

/// Runs a compiled program (TD, or a front end's translation) over `inputs` on `engine`,
/// output in `mode` to nowhere: `stgflow run` in-process. `schema` maps the streams' names
/// to predicates (a front end may add to it, e.g. RTEC record shapes).
pub fn run_compiled(
    name: &str,
    compiled: &Compiled,
    schema: &Schema,
    inputs: &[Input<'_>],
    mode: Mode,
    engine: &Engine,
) -> anyhow::Result<RunSummary> {
    let program = &compiled.program;
    let analysis = compiled.analysis.as_ref().ok_or_else(|| {
        anyhow!(
            "{name} does not compile:\n{}",
            compiled.render_diagnostics(false)
        )
    })?;
    let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(program))];
    for (i, input) in inputs.iter().enumerate() {
        sources.push(Box::new(
            FactReader::new(
                input.bytes,
                format!("stream {i}"),
                input.format.clone(),
                schema.clone(),
            )
            .with_tick(input.tick),
        ));
    }
    let mut sink = Sink::new(std::io::sink(), mode, program);
    stgflow_engine::run(
        program,
        analysis,
        &mut sources,
        Timeline::default(),
        engine,
        &mut sink,
    )
    .map(|outcome| outcome.summary)
    .with_context(|| format!("running {name} on {engine:?}"))
}

/// Compiles the TD program `program_text` and runs `engine` over `stream` (TD facts),
/// writing the output in `mode` to nowhere. Both stages are inside, so a timed call
/// measures compile + drive + output formatting.
pub fn run_td(
    program_name: &str,
    program_text: &str,
    stream: &[u8],
    mode: Mode,
    engine: Engine,
) -> anyhow::Result<RunSummary> {
    let compiled = compile_str(program_name, program_text);
    let schema = Schema::new(&compiled.program);
    run_compiled(
        program_name,
        &compiled,
        &schema,
        &[Input::td(stream)],
        mode,
        &engine,
    )
}

/// [`run_td`] on the reference evaluator.
pub fn run_reference(
    program_name: &str,
    program_text: &str,
    stream: &[u8],
    mode: Mode,
) -> anyhow::Result<RunSummary> {
    run_td(program_name, program_text, stream, mode, Engine::Reference)
}

/// [`run_td`] on the dataflow engine with `workers` threads.
pub fn run_dataflow(
    program_name: &str,
    program_text: &str,
    stream: &[u8],
    mode: Mode,
    workers: usize,
    lower: bool,
) -> anyhow::Result<RunSummary> {
    run_td(
        program_name,
        program_text,
        stream,
        mode,
        Engine::dataflow(workers, lower),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stgflow_datasets::{DeviceFleet, device_fleet, examples};

    #[test]
    fn reference_reads_every_generated_device_fleet_fact() {
        let config = DeviceFleet {
            devices: 50,
            time_points: 200,
            start: 10,
            ..DeviceFleet::default()
        };
        let mut stream = Vec::new();
        let generated = device_fleet(&config, &mut stream).unwrap();
        let run = run_reference(
            "device_safety.tdl",
            examples::DEVICE_SAFETY_TDL,
            &stream,
            Mode::Changes,
        )
        .unwrap();
        assert_eq!(run.input_facts, generated.facts);
        assert_eq!((run.first, run.last), (generated.first, generated.last));
        assert_eq!(run.skipped.unknown, 0);
        assert!(run.skipped.wrong_arity.is_empty());
    }

    #[test]
    fn dataflow_on_2_workers_reads_every_fact_of_a_window_workload() {
        let mut stream = Vec::new();
        let workload = workload::Workload::Diamond;
        let generated = stgflow_datasets::unique_atoms(
            &stgflow_datasets::UniqueAtoms {
                atoms_per_point: 20,
                constants: stgflow_datasets::Constants::Integers,
                time_points: 50,
                start: 0,
                extra_every: 0,
            },
            &mut stream,
        )
        .unwrap();
        let run = run_dataflow(
            "d.tdl",
            &workload.program(5),
            &stream,
            Mode::Changes,
            2,
            true,
        )
        .unwrap();
        assert_eq!(run.input_facts, generated.facts);
        assert_eq!(run.time_points, 50);
    }

    #[test]
    fn a_broken_program_is_an_error_not_a_panic() {
        let error = run_reference("broken.tdl", "p(X, T) :- .", b"", Mode::Changes).unwrap_err();
        assert!(error.to_string().contains("broken.tdl"), "{error}");
    }
}
