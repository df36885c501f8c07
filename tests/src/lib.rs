//! Shared helpers for the cross-path tests: a generator of random valid TD programs and
//! streams ([`generate`]), a naive oracle that grounds rules over the active domain
//! ([`naive`]), random plain LARS programs with a direct LARS interpreter ([`lars`]), and
//! [`run`], which takes program and stream text through any evaluation path.
//!
//! The generator is the one every evaluation path (reference, dataflow with 1..n
//! workers, processes, STG) is checked with.

pub mod generate;
pub mod lars;
pub mod naive;

use std::collections::BTreeSet;

use stgflow_engine::compile_str;
use stgflow_engine::drive::{FactSource, ProgramFacts, Timeline, drive};
use stgflow_engine::ir::Program;
use stgflow_engine::reference::Reference;
use stgflow_engine::runtime;
use stgflow_engine::sink::{Mode, Sink};
use stgflow_engine::stratify::Analysis;
use stgflow_engine::stream::{FactReader, Schema, StreamFormat};

/// Which evaluation path [`run`] takes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Engine {
    Reference,
    /// The dataflow engine in this process with this many worker threads, windows lowered
    /// or not.
    Dataflow {
        workers: usize,
        lower_windows: bool,
    },
    /// Streaming Trigger Graphs (Algorithm 4), with at most this many nodes per time
    /// point, empty nodes used as edge sources or not.
    Stg {
        max_nodes: usize,
        skip_empty_nodes: bool,
    },
}

/// Runs the reference evaluator on TD program and stream text, printing every predicate
/// in `points` mode; returns the set of output lines.
pub fn run_reference(
    program_text: &str,
    stream_text: &str,
    timeline: Timeline,
) -> Result<BTreeSet<String>, String> {
    run(program_text, stream_text, timeline, &Engine::Reference)
}

/// Runs `engine` on TD program and stream text, printing every predicate in `points`
/// mode; returns the set of output lines.
pub fn run(
    program_text: &str,
    stream_text: &str,
    timeline: Timeline,
    engine: &Engine,
) -> Result<BTreeSet<String>, String> {
    run_printing(program_text, stream_text, timeline, engine, true)
}

/// [`run`], printing every predicate (`all`) or the program's own output predicates
/// (`#output`, else the derived ones).
pub fn run_printing(
    program_text: &str,
    stream_text: &str,
    timeline: Timeline,
    engine: &Engine,
    all: bool,
) -> Result<BTreeSet<String>, String> {
    let compiled = compile_str("generated.tdl", program_text);
    if compiled.has_errors() {
        return Err(compiled.render_diagnostics(false));
    }
    let mut program = compiled.program.clone();
    if all {
        program.outputs = Some((0..program.predicates.len()).collect());
    }
    let analysis = compiled.analysis.as_ref().ok_or("no analysis")?;
    let reader = FactReader::new(
        stream_text.as_bytes(),
        "stream",
        StreamFormat::Td,
        Schema::new(&program),
    );
    evaluate(&program, analysis, Box::new(reader), timeline, engine)
}

/// Runs `engine` on a compiled program over `stream` (and the program's own facts) in
/// `points` mode; returns the set of output lines. Every runner of the cross-path tests
/// goes through here, so they differ only in how they compile and read.
pub fn evaluate<'a>(
    program: &'a Program,
    analysis: &Analysis,
    stream: Box<dyn FactSource + 'a>,
    timeline: Timeline,
    engine: &Engine,
) -> Result<BTreeSet<String>, String> {
    let mut sources: Vec<Box<dyn FactSource + 'a>> =
        vec![Box::new(ProgramFacts::new(program)), stream];
    let mut sink = Sink::new(Vec::new(), Mode::Points, program);
    match engine {
        Engine::Reference => {
            let mut evaluator = Reference::new(program, analysis);
            drive(program, &mut sources, timeline, &mut evaluator, &mut sink)
                .map_err(|e| e.to_string())?;
        }
        Engine::Dataflow {
            workers,
            lower_windows,
        } => {
            let options = runtime::Options {
                cluster: runtime::Cluster {
                    workers: *workers,
                    ..runtime::Cluster::default()
                },
                lower_windows: *lower_windows,
                ..runtime::Options::default()
            };
            runtime::run(
                program,
                analysis,
                &mut sources,
                timeline,
                &options,
                &mut sink,
            )
            .map_err(|e| e.to_string())?;
        }
        Engine::Stg {
            max_nodes,
            skip_empty_nodes,
        } => {
            let options = stgflow_engine::stg::Options {
                max_nodes_per_time_point: *max_nodes,
                skip_empty_nodes: *skip_empty_nodes,
                ..stgflow_engine::stg::Options::default()
            };
            stgflow_engine::stg::run(
                program,
                analysis,
                &mut sources,
                timeline,
                &options,
                &mut sink,
            )
            .map_err(|e| e.to_string())?;
        }
    }
    let text = String::from_utf8(sink.into_inner()).map_err(|e| e.to_string())?;
    Ok(text.lines().map(str::to_owned).collect())
}
