//! The reference evaluator against the naive oracle on random programs and streams.

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_tests::generate::{case, shape_counts};
use stgflow_tests::naive::naive;
use stgflow_tests::run_reference;

fn check(seed: u64) -> Result<(), TestCaseError> {
    let case = case(seed);
    let expected = naive(&case.program, &case.stream).map_err(TestCaseError::fail)?;
    let actual = run_reference(&case.program, &case.stream, Timeline::default())
        .map_err(TestCaseError::fail)?;
    prop_assert_eq!(
        &actual,
        &expected,
        "seed {}\n--- program\n{}--- stream\n{}",
        seed,
        case.program,
        case.stream
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn reference_equals_naive_oracle_on_300_random_programs(seed in any::<u64>()) {
        check(seed)?;
    }
}

#[test]
#[ignore = "slow: 5,000 random programs; run with --ignored in release mode"]
fn reference_equals_naive_oracle_on_5000_random_programs() {
    for seed in 0..5_000u64 {
        if let Err(error) = check(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)) {
            panic!("{error}");
        }
    }
}

#[test]
fn generated_programs_are_valid_and_varied() {
    let mut with_negation = 0;
    let mut with_recursion_in_time = 0;
    for seed in 0..200 {
        let case = case(seed);
        let compiled = stgflow_lang::compile_str("g.tdl", &case.program);
        assert!(
            !compiled.has_errors(),
            "seed {seed}:\n{}\n{}",
            case.program,
            compiled.render_diagnostics(false)
        );
        with_negation += usize::from(case.program.contains("not "));
        with_recursion_in_time += usize::from(
            compiled
                .analysis
                .is_some_and(|a| !a.temporal_sccs.is_empty()),
        );
    }
    assert!(with_negation > 50, "{with_negation}");
    assert!(with_recursion_in_time > 20, "{with_recursion_in_time}");
}

/// The shapes the default engine once got wrong (rules without a positive atom, inside
/// components that recurse through time, rules that read the time as a value with and
/// without negation, beside other rules of the same head) are each generated often.
#[test]
fn generated_programs_have_rules_that_start_from_nothing_or_read_the_time() {
    let counts = shape_counts((0..1_000).map(case));
    assert_eq!(counts.cases, 1_000, "every generated program is valid");
    let per_mille = |n: usize| n * 1_000 / counts.rules;
    assert!(per_mille(counts.no_positive_atom) >= 50, "{counts:?}");
    assert!(counts.no_positive_atom_in_temporal_scc >= 100, "{counts:?}");
    assert!(counts.reads_time >= 200, "{counts:?}");
    assert!(counts.reads_time_with_negation >= 100, "{counts:?}");
    assert!(counts.beside_another_rule >= 300, "{counts:?}");
}

/// Counts are generated often enough that every path meets them, both the kind that is 0
/// where nothing matches and the kind that exists only where something does.
#[test]
fn generated_programs_count() {
    let counts = shape_counts((0..1_000).map(case));
    assert_eq!(counts.cases, 1_000, "every generated program is valid");
    assert!(counts.counting >= 300, "{counts:?}");
    assert!(counts.zero_counts >= 100, "{counts:?}");
    assert!(counts.counting > counts.zero_counts, "{counts:?}");
}

/// Functions (`abs`, `min`, `max`) are generated often enough that every path meets them.
#[test]
fn generated_programs_call_functions() {
    let counts = shape_counts((0..1_000).map(case));
    assert!(counts.functions >= 100, "{counts:?}");
}
