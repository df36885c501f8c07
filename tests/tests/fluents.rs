//! The time-stepping operator's triggers (a key is evaluated only where something it reads
//! changed, deadlines guarded by the initiation they wait for), refined keys (a state per
//! `(V, M)` under the key M, partial facts of M read by every state) and start rules in
//! front of it, against the reference evaluator: random Event Calculus fluents over pairs
//! (`generate::fluent_case`), lowered with 1, 2 and 3 workers and literal with 1 and 2.

use proptest::prelude::*;
use stgflow_tests::generate::fluent_case;
use stgflow_tests::{lowered_and_literal_equal_the_reference, lowered_plan};

/// The line of the lowered plan of `program` that runs `f`.
fn plan_of_f(program: &str) -> String {
    lowered_plan(program)
        .lines()
        .find(|line| {
            let preds = line
                .strip_prefix("stepper {")
                .and_then(|rest| rest.split_once('}'));
            preds.is_some_and(|(preds, _)| preds.split(", ").any(|p| p == "f"))
        })
        .unwrap_or_default()
        .to_owned()
}

fn check(seed: u64) -> Result<String, String> {
    let case = fluent_case(seed);
    lowered_and_literal_equal_the_reference(&case)?;
    Ok(plan_of_f(&case.program))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn fluents_over_pairs_equal_the_reference_on_150_random_programs(seed in any::<u64>()) {
        check(seed).map_err(TestCaseError::fail)?;
    }
}

/// The generator writes refined keys, start rules and deadlines (and, with the partial
/// event read a point back, unrefined ones): a test whose programs never planned them
/// would pass without them.
#[test]
fn generated_fluents_plan_with_refined_keys_starts_and_deadlines() {
    let plans: Vec<String> = (0..60u64)
        .map(|seed| check(seed).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let count = |what: &dyn Fn(&str) -> bool| plans.iter().filter(|p| what(p)).count();
    let refined = count(&|p| p.contains("; states by "));
    let starts = count(&|p| p.contains("; starts "));
    let deadlines =
        count(&|p| p.contains("horizon 2") || p.contains("horizon 3") || p.contains("horizon 4"));
    assert!(
        (30..60).contains(&refined),
        "{refined} of 60 refined: {plans:#?}"
    );
    assert_eq!(starts, 60, "every plan has start rules: {plans:#?}");
    assert!(
        deadlines >= 15,
        "{deadlines} of 60 with deadlines: {plans:#?}"
    );
}
