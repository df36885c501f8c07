//! Benchmarks for stgflow. The criterion benches are in `benches/` (each file's `//!` says
//! how to run it); this library holds what they share: running an evaluator end to end
//! over an in-memory stream, exactly as `stgflow run` does, with the output discarded.
//!
//! Recorded figures and the commands behind them are in `BENCHMARKS.md` at the root.

use anyhow::{Context, anyhow};
use stgflow_engine::compile_str;
use stgflow_engine::drive::{FactSource, ProgramFacts, RunSummary, Timeline, drive};
use stgflow_engine::reference::Reference;
use stgflow_engine::sink::{Mode, Sink};
use stgflow_engine::stream::{FactReader, Schema, StreamFormat};

/// Compiles the TD program `program_text` and runs the reference evaluator over `stream`
/// (TD facts), writing the output in `mode` to nowhere. Both stages are inside, so a
/// timed call measures compile + drive + output formatting.
pub fn run_reference(
    program_name: &str,
    program_text: &str,
    stream: &[u8],
    mode: Mode,
) -> anyhow::Result<RunSummary> {
    let compiled = compile_str(program_name, program_text);
    let program = &compiled.program;
    let analysis = compiled.analysis.as_ref().ok_or_else(|| {
        anyhow!(
            "{program_name} does not compile:\n{}",
            compiled.render_diagnostics(false)
        )
    })?;
    let schema = Schema::new(program);
    let reader = FactReader::new(stream, "stream", StreamFormat::Td, schema);
    let mut sources: Vec<Box<dyn FactSource + '_>> =
        vec![Box::new(ProgramFacts::new(program)), Box::new(reader)];
    let mut sink = Sink::new(std::io::sink(), mode, program);
    let mut evaluator = Reference::new(program, analysis);
    drive(
        program,
        &mut sources,
        Timeline::default(),
        &mut evaluator,
        &mut sink,
    )
    .with_context(|| format!("running {program_name}"))
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
    fn a_broken_program_is_an_error_not_a_panic() {
        let error = run_reference("broken.tdl", "p(X, T) :- .", b"", Mode::Changes).unwrap_err();
        assert!(error.to_string().contains("broken.tdl"), "{error}");
    }
}
