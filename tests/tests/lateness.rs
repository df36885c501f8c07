//! `--lateness N`: a stream shuffled so that no fact comes more than N time points behind
//! the latest time before it gives, read with lateness N, the same output as the sorted
//! stream read in order by the reference evaluator (the oracle), on every engine; and a
//! fact later than N is an error (or, skipping late facts, dropped and counted).

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema, Tolerance};
use stgflow_lang::compile_str;
use stgflow_tests::generate::{Rng, case};
use stgflow_tests::{Engine, evaluate};

/// The time of a generated fact line `p(a, 1, 7).`.
fn time_of(line: &str) -> u64 {
    line.trim_end_matches(").")
        .rsplit(['(', ','])
        .next()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Reorders `stream`'s lines so that each comes at most `lateness` time points behind the
/// latest time before it: every line gets a key of its time plus a random delay of at
/// most `lateness`, and lines are sorted by key. A line at time t follows only lines
/// whose key, hence time, is at most t + lateness.
fn shuffle_within(stream: &str, lateness: u64, rng: &mut Rng) -> String {
    let mut lines: Vec<(u64, &str)> = stream
        .lines()
        .map(|line| {
            let delay = rng.below(lateness as usize + 1) as u64;
            (time_of(line) + delay, line)
        })
        .collect();
    lines.sort_by_key(|(key, _)| *key);
    lines.iter().map(|(_, line)| format!("{line}\n")).collect()
}

/// Runs `program` over `stream` read with `tolerance` on `engine`.
fn run(
    program: &str,
    stream: &str,
    tolerance: Tolerance,
    engine: &Engine,
) -> Result<std::collections::BTreeSet<String>, String> {
    let compiled = compile_str("generated.tdl", program);
    let mut program = compiled.program.clone();
    program.outputs = Some((0..program.predicates.len()).collect());
    let analysis = compiled.analysis.as_ref().ok_or("no analysis")?;
    let reader = FactReader::new(
        stream.as_bytes(),
        "stream",
        std::sync::Arc::new(Td),
        Schema::new(&program),
    )
    .with_tolerance(tolerance);
    evaluate(
        &program,
        analysis,
        Box::new(reader),
        Timeline::default(),
        engine,
    )
}

fn lateness(n: u64) -> Tolerance {
    Tolerance {
        lateness: n,
        ..Tolerance::default()
    }
}

fn check(seed: u64, n: u64) -> Result<(), TestCaseError> {
    let case = case(seed);
    let expected = run(
        &case.program,
        &case.stream,
        Tolerance::default(),
        &Engine::Reference,
    )
    .map_err(TestCaseError::fail)?;
    let shuffled = shuffle_within(&case.stream, n, &mut Rng::new(seed ^ 0x5eed));
    for engine in [Engine::Reference, Engine::dataflow(1, true)] {
        let actual = run(&case.program, &shuffled, lateness(n), &engine)
            .map_err(|e| TestCaseError::fail(format!("{engine:?}: {e}\n{shuffled}")))?;
        prop_assert_eq!(
            &actual,
            &expected,
            "{:?}, lateness {}\n--- program\n{}--- shuffled stream\n{}",
            engine,
            n,
            case.program,
            shuffled
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn shuffled_within_lateness_equals_sorted_on_64_random_programs(
        seed in any::<u64>(), n in 0u64..4,
    ) {
        check(seed, n)?;
    }
}

const PROGRAM: &str = "seen(X, T) :- p(X, T).\nafter(X, T) :- p(X, T-1).\n";

#[test]
fn a_fact_later_than_the_lateness_is_an_error_naming_both_times() {
    let stream = "p(a, 1).\np(b, 4).\np(c, 2).\n";
    let error = run(PROGRAM, stream, lateness(1), &Engine::Reference).err();
    let error = error.unwrap_or_default();
    assert!(
        error.contains("E102")
            && error.contains("time 2 is 2 time points late")
            && error.contains("after 4 (line 2)"),
        "{error}"
    );
    // Within the lateness it is accepted.
    let accepted = run(PROGRAM, stream, lateness(2), &Engine::Reference);
    assert!(accepted.is_ok_and(|out| out.contains("seen(c,2).") && out.contains("after(c,3).")));
}

#[test]
fn skipping_late_facts_drops_them_on_every_engine() {
    let stream = "p(a, 1).\np(b, 4).\np(c, 2).\np(d, 3).\np(e, 5).\n";
    let skip = Tolerance {
        lateness: 1,
        skip_late: true,
        strict: false,
    };
    let in_order = "p(a, 1).\np(b, 4).\np(d, 3).\np(e, 5).\n";
    let expected = run(
        PROGRAM,
        &shuffle_within(in_order, 0, &mut Rng::new(1)),
        lateness(1),
        &Engine::Reference,
    );
    for engine in [Engine::Reference, Engine::dataflow(2, true)] {
        let actual = run(PROGRAM, stream, skip, &engine);
        assert_eq!(actual, expected, "{engine:?}");
    }
}
