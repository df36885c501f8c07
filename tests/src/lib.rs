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
pub mod streams;

use std::collections::BTreeSet;

use stgflow_io::drive::{FactSource, ProgramFacts, Timeline};
use stgflow_io::sink::{Mode, Sink};
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema};
use stgflow_lang::compile_str;
use stgflow_lang::ir::Program;
use stgflow_lang::stratify::Analysis;

pub use stgflow_engine::Engine;

/// The STG engine (Algorithm 4) with at most `max_nodes` nodes per time point, empty
/// nodes used as edge sources or not.
pub fn stg(max_nodes: usize, skip_empty_nodes: bool) -> Engine {
    Engine::Stg(stgflow_engine::StgOptions {
        max_nodes_per_time_point: max_nodes,
        skip_empty_nodes,
        ..stgflow_engine::StgOptions::default()
    })
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

/// What `actual` lacks and has beyond `expected`, as `--- missing […]\n--- extra […]`,
/// or `None` when they are equal: the tail of every cross-path test's failure message.
pub fn differences(expected: &BTreeSet<String>, actual: &BTreeSet<String>) -> Option<String> {
    if actual == expected {
        return None;
    }
    let missing: Vec<&String> = expected.difference(actual).collect();
    let extra: Vec<&String> = actual.difference(expected).collect();
    Some(format!("--- missing {missing:?}\n--- extra {extra:?}"))
}

/// What the reference evaluator prints for a generated case (every predicate, `points`,
/// the whole timeline): what every other path is held to.
pub fn reference_of(case: &generate::Case) -> Result<BTreeSet<String>, String> {
    run(
        &case.program,
        &case.stream,
        Timeline::default(),
        &Engine::Reference,
    )
}

/// Holds `case` to the reference evaluator on the dataflow engine lowered with 1, 2 and 3
/// workers and literal (`--no-lowering`) with 1 and 2: the first difference, with the
/// program and the stream, or `Ok`.
pub fn lowered_and_literal_equal_the_reference(case: &generate::Case) -> Result<(), String> {
    let expected = reference_of(case)?;
    let engines = [
        ("lowered, 1 worker", Engine::dataflow(1, true)),
        ("lowered, 2 workers", Engine::dataflow(2, true)),
        ("lowered, 3 workers", Engine::dataflow(3, true)),
        ("literal, 1 worker", Engine::dataflow(1, false)),
        ("literal, 2 workers", Engine::dataflow(2, false)),
    ];
    for (what, engine) in engines {
        let actual = run(&case.program, &case.stream, Timeline::default(), &engine)?;
        if let Some(differences) = differences(&expected, &actual) {
            return Err(format!(
                "seed {}, {what}\n--- program\n{}--- stream\n{}{differences}",
                case.seed, case.program, case.stream
            ));
        }
    }
    Ok(())
}

/// The lowered dataflow plan of `program` (`check --dump plan`), a component per line.
pub fn lowered_plan(program: &str) -> String {
    let compiled = compile_str("plan.tdl", program);
    let analysis = compiled.analysis.as_ref().expect("a valid program");
    stgflow_engine::dataflow_plan(&compiled.program, analysis, true)
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
    let text = run_in(
        program_text,
        stream_text,
        timeline,
        engine,
        (all, Mode::Points),
    )?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// The bytes `engine` writes for `program_text` over `stream_text` in `mode` (exactly as
/// written: order and repetitions count), printing every predicate (`all`) or the
/// program's own output predicates (`#output`, else the derived ones).
pub fn output_bytes(
    program_text: &str,
    stream_text: &str,
    engine: &Engine,
    (all, mode): (bool, Mode),
) -> Result<String, String> {
    run_in(
        program_text,
        stream_text,
        Timeline::default(),
        engine,
        (all, mode),
    )
}

/// What `engine` writes for TD program and stream text in `mode`, printing every
/// predicate (`all`) or the program's own output predicates.
pub(crate) fn run_in(
    program_text: &str,
    stream_text: &str,
    timeline: Timeline,
    engine: &Engine,
    (all, mode): (bool, Mode),
) -> Result<String, String> {
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
        std::sync::Arc::new(Td),
        Schema::new(&program),
    );
    written(&program, analysis, Box::new(reader), timeline, engine, mode)
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
    let text = written(program, analysis, stream, timeline, engine, Mode::Points)?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// What `engine` writes in `mode` for a compiled program over `stream` and the program's
/// own facts.
pub(crate) fn written<'a>(
    program: &'a Program,
    analysis: &Analysis,
    stream: Box<dyn FactSource + 'a>,
    timeline: Timeline,
    engine: &Engine,
    mode: Mode,
) -> Result<String, String> {
    let mut sources: Vec<Box<dyn FactSource + 'a>> =
        vec![Box::new(ProgramFacts::new(program)), stream];
    let mut sink = Sink::new(Vec::new(), mode, program);
    stgflow_engine::run(program, analysis, &mut sources, timeline, engine, &mut sink)
        .map_err(|e| e.to_string())?;
    String::from_utf8(sink.into_inner()).map_err(|e| e.to_string())
}
