//! Reading on the workers (`--read-on-workers`): every worker parses its share of each
//! file's blocks and introduces the facts itself. Held to the sequential driver on the
//! reference evaluator, over generated programs and streams cut into blocks of a few bytes,
//! split over 1–3 files, with the program's own facts (a source read on the calling
//! thread beside the files), unknown predicates and wrong arities (skip counts), a
//! timeline cut by `--from`/`--until`, and up to two errors (a time going back, a malformed
//! line; which one stops the run is decided by time, then by the files' order):
//! the same output, and the same summary or the same error, on 1–4 workers.

use std::io;
use std::sync::Arc;

use proptest::prelude::*;
use stgflow_io::drive::{FactSource, ProgramFacts, RunSummary, Timeline};
use stgflow_io::sink::{Mode, Sink};
use stgflow_io::stream::blocks::{ParallelReader, Parallelism};
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema, Tolerance};
use stgflow_lang::compile_str;
use stgflow_tests::Engine;
use stgflow_tests::generate::{Rng, case};
use stgflow_tests::streams::{streams_of, timeline};

/// What a run gives: its output, and its summary or its error.
type Outcome = (String, Result<RunSummary, String>);

/// Runs `engine` over the program's facts and `streams` (read in blocks of `block_bytes`,
/// or line by line), printing every predicate at every time point.
fn outcome(
    program_text: &str,
    streams: &[String],
    timeline: Timeline,
    engine: &Engine,
    block_bytes: Option<usize>,
) -> Outcome {
    let compiled = compile_str("generated.tdl", program_text);
    assert!(
        !compiled.has_errors(),
        "{}",
        compiled.render_diagnostics(false)
    );
    let mut program = compiled.program.clone();
    program.outputs = Some((0..program.predicates.len()).collect());
    let analysis = compiled
        .analysis
        .as_ref()
        .expect("a valid program has an analysis");
    let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(&program))];
    for (i, text) in streams.iter().enumerate() {
        let like = FactReader::new(
            io::empty(),
            format!("s{i}.td"),
            Arc::new(Td),
            Schema::new(&program),
        )
        .with_tolerance(Tolerance::default());
        match block_bytes {
            Some(block_bytes) => {
                let parallelism = Parallelism {
                    threads: 1,
                    block_bytes,
                };
                let input = io::Cursor::new(text.clone().into_bytes());
                let reader = ParallelReader::spawn(input, like, parallelism)
                    .unwrap_or_else(|e| panic!("cannot read in blocks: {e}"));
                sources.push(Box::new(reader));
            }
            None => sources.push(Box::new(like.with_input(text.as_bytes()))),
        }
    }
    let mut sink = Sink::new(Vec::new(), Mode::Points, &program);
    let result = stgflow_engine::run(
        &program,
        analysis,
        &mut sources,
        timeline,
        engine,
        &mut sink,
    );
    let text = String::from_utf8(sink.into_inner()).unwrap_or_default();
    (text, result.map(|o| o.summary).map_err(|e| e.to_string()))
}

fn check(seed: u64) -> Result<(), String> {
    let case = case(seed);
    let mut rng = Rng::new(seed ^ 0x5eed);
    let streams = streams_of(&case.stream, &mut rng);
    let timeline = timeline(&mut rng);
    let expected = outcome(&case.program, &streams, timeline, &Engine::Reference, None);
    for workers in 1..=4 {
        let block_bytes = 1 + rng.below(60);
        let engine = Engine::dataflow_reading_on_workers(workers, true);
        let actual = outcome(
            &case.program,
            &streams,
            timeline,
            &engine,
            Some(block_bytes),
        );
        if actual != expected {
            return Err(format!(
                "seed {seed}, {workers} worker(s), blocks of {block_bytes} bytes, {timeline:?}\n\
                 --- program\n{}--- streams\n{}\n--- reading on the workers\n{}{:?}\n\
                 --- the reference, line by line\n{}{:?}",
                case.program,
                streams.join("--- next file\n"),
                actual.0,
                actual.1,
                expected.0,
                expected.1
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn reading_on_1_2_3_4_workers_equals_the_sequential_reference(seed in any::<u64>()) {
        check(seed).map_err(TestCaseError::fail)?;
    }
}

/// The generated cases do reach what this path has to get right.
#[test]
fn the_generated_cases_hold_errors_skips_and_several_files() {
    let (mut errors, mut skips, mut several, mut cut) = (0, 0, 0, 0);
    for seed in 0..200u64 {
        let case = case(seed);
        let mut rng = Rng::new(seed ^ 0x5eed);
        let streams = streams_of(&case.stream, &mut rng);
        let timeline = timeline(&mut rng);
        let (_, result) = outcome(&case.program, &streams, timeline, &Engine::Reference, None);
        match result {
            Err(_) => errors += 1,
            Ok(summary) => skips += u32::from(summary.skipped.unknown > 0),
        }
        several += u32::from(streams.len() > 1);
        cut += u32::from(timeline.from.is_some() || timeline.until.is_some());
    }
    assert!(
        errors > 20 && skips > 20 && several > 50 && cut > 50,
        "errors {errors}, skips {skips}, several files {several}, cut timelines {cut}"
    );
}

/// Two files that both fail after time point 2: the sequential driver meets the first
/// file's error first (it reads the files in order at each time point), though in blocks
/// the second file's error is found long before the first's.
#[test]
fn of_two_errors_at_one_time_point_the_first_file_s_stops_the_run() {
    let program = "q(X, T) :- e1(X, T), not e1(X, T-1).\n";
    let mut first = String::from("e1(a, 1).\n");
    for k in 0..40 {
        first.push_str(&format!("e1(x{k}, 2).\n"));
    }
    first.push_str("e1(a,,2).\n");
    let second = "e1(b, 2).\ne1(b) 2.\n".to_owned();
    let streams = [first, second];
    let expected = outcome(
        program,
        &streams,
        Timeline::default(),
        &Engine::Reference,
        None,
    );
    let error = expected.1.as_ref().err().cloned().unwrap_or_default();
    assert!(error.contains("s0.td:42"), "{error}");
    for workers in 1..=3 {
        for block_bytes in [8, 20, 64] {
            let engine = Engine::dataflow_reading_on_workers(workers, true);
            let actual = outcome(
                program,
                &streams,
                Timeline::default(),
                &engine,
                Some(block_bytes),
            );
            assert_eq!(
                actual, expected,
                "{workers} worker(s), blocks of {block_bytes} bytes"
            );
        }
    }
}
