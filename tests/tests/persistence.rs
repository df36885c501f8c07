//! The persistence operator (EC inertia lowered, `operators::persist`) against the
//! literal rules on the time-stepping operator and the reference evaluator, on random
//! programs of its shapes (start and keep rules, a terminating predicate in the
//! multi-valued form, stops from joins and negations at offsets 0–2, facts of the
//! persisting and terminating predicates in the input) mixed with joins, negation, a
//! window over the persisting predicate and another recursion through time that reads
//! it, with 1, 2 and 3 workers; a third of them exactly EC's simple fluent of exclusive
//! values, which the operator runs in a form of its own. And RTEC's simple fluents with an
//! initiation that a partial event triggers from the fluent's own value a point back
//! (voting's `voted`), whose `h_ie` and `h_te` the operator derives per key.

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_tests::generate::{persistence_case, rtec_fluent_case};
use stgflow_tests::{
    Engine, differences, lowered_and_literal_equal_the_reference, lowered_plan, run_printing,
};

/// Whether the lowered plan of `program` runs `h` on the persistence operator.
fn lowered(program: &str) -> bool {
    lowered_plan(program)
        .lines()
        .any(|line| line.starts_with("persist h:"))
}

fn check(seed: u64) -> Result<bool, String> {
    let case = persistence_case(seed);
    lowered_and_literal_equal_the_reference(&case)?;
    Ok(lowered(&case.program))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn persistence_lowered_equals_literal_equals_reference_on_200_random_programs(seed in any::<u64>()) {
        check(seed).map_err(TestCaseError::fail)?;
    }
}

/// Whether the lowered plan of `program` runs `h` on the persistence operator with
/// predicates derived from it a point back (`h_ie`, `h_te`).
fn lowered_with_derived(program: &str) -> bool {
    lowered_plan(program)
        .lines()
        .any(|line| line.starts_with("persist h:") && line.contains("; derives h_ie "))
}

/// An RTEC fluent with a derived initiation: every predicate printed (the derived ones
/// output by the operator) on every path, and only the program's own output (`#output`
/// may leave the derived ones to the operator alone) lowered on 1 and 3 workers.
fn check_rtec(seed: u64) -> Result<bool, String> {
    let case = rtec_fluent_case(seed);
    lowered_and_literal_equal_the_reference(&case)?;
    let own = |engine: &Engine| {
        run_printing(
            &case.program,
            &case.stream,
            Timeline::default(),
            engine,
            false,
        )
    };
    let expected = own(&Engine::Reference)?;
    for workers in [1, 3] {
        if let Some(differences) = differences(&expected, &own(&Engine::dataflow(workers, true))?) {
            return Err(format!(
                "seed {seed}, own output, {workers} workers\n--- program\n{}--- stream\n{}{differences}",
                case.program, case.stream
            ));
        }
    }
    Ok(lowered_with_derived(&case.program))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn rtec_fluents_with_derived_initiations_lowered_equal_literal_equal_reference_on_150_random_programs(
        seed in any::<u64>()
    ) {
        check_rtec(seed).map_err(TestCaseError::fail)?;
    }
}

/// The generator's RTEC fluents take the form with derived predicates (a test that never
/// planned it would pass on the stepper alone).
#[test]
fn most_generated_rtec_fluents_run_with_derived_predicates() {
    let lowered = (0..60u64)
        .filter(|&seed| check_rtec(seed).unwrap_or_else(|e| panic!("{e}")))
        .count();
    assert!((40..=60).contains(&lowered), "{lowered} of 60 lowered");
}

/// Whether `program` runs `pred` in the persistence operator's form for exclusive values.
fn exclusive(program: &str, pred: &str) -> bool {
    let component = format!("persist {pred}:");
    lowered_plan(program)
        .lines()
        .any(|line| line.starts_with(&component) && line.ends_with("; exclusive values"))
}

/// A third of the generated programs take the exclusive form (and are held to the
/// literal rules and the reference by the property above); the others take the general
/// one.
#[test]
fn a_third_of_generated_programs_run_in_the_exclusive_form() {
    let exclusive = (0..300u64)
        .filter(|&seed| exclusive(&persistence_case(seed).program, "h"))
        .count();
    assert!(
        (60..160).contains(&exclusive),
        "{exclusive} of 300 exclusive"
    );
}

/// The generator writes the lowered shapes (and, with `not e1(1, T-1)`, ones that are
/// not): a test of the operator that never planned it would pass on the stepper alone.
#[test]
fn most_generated_programs_are_lowered_to_persistence() {
    let lowered = (0..100u64)
        .filter(|&seed| check(seed).unwrap_or_else(|e| panic!("{e}")))
        .count();
    assert!((60..100).contains(&lowered), "{lowered} of 100 lowered");
}

/// Values that come and go: EC inertia (the exclusive form) over 60 fluents, each
/// initiated again every 10 points, nearly always with a value never seen before (some
/// 2,400 in all), sometimes with one that comes back (`old`), so that a key's facts are
/// replaced again and again and a value's facts must be dropped and made again. Lowered
/// and literal on 1–3 workers against the reference at every time point.
#[test]
fn the_exclusive_form_follows_values_that_come_and_go() {
    let program = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../datasets/examples/inertia.tdl"
    ))
    .expect("datasets/examples/inertia.tdl");
    assert!(
        exclusive(&program, "holds"),
        "inertia.tdl is not in the exclusive form:\n{}",
        lowered_plan(&program)
    );
    let mut stream = String::new();
    let mut fresh = 0;
    for t in 0..400u64 {
        for f in (0..60u64).filter(|f| (f + t) % 10 == 0) {
            let value = if (f + t) % 70 == 0 {
                "old".to_owned()
            } else {
                fresh += 1;
                format!("v{fresh}")
            };
            stream.push_str(&format!("init(f{f}, {value}, {t}).\n"));
        }
    }
    assert!(fresh > 2_000, "{fresh} fresh values");
    let case = stgflow_tests::generate::Case {
        seed: 0,
        program,
        stream,
    };
    lowered_and_literal_equal_the_reference(&case).unwrap_or_else(|e| panic!("{e}"));
}
