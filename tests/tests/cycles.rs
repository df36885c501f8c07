//! Components that recurse through time with no key all their rules share (NetBill's
//! contracts keyed by two agents and suspensions by one), which the dataflow engine runs
//! as a loop through time, each join on its own key (`render`'s cycle): against the
//! reference evaluator and the literal rules on the time-stepping operator, on random
//! programs of that shape with 1–4 workers.

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_tests::generate::cyclic_case;
use stgflow_tests::{
    Engine, differences, lowered_and_literal_equal_the_reference, lowered_plan, reference_of, run,
};

fn check(seed: u64) -> Result<(), String> {
    let case = cyclic_case(seed);
    if !lowered_plan(&case.program)
        .lines()
        .any(|l| l.starts_with("cycle {"))
    {
        return Err(format!(
            "seed {seed}: not planned as a cycle\n{}",
            case.program
        ));
    }
    lowered_and_literal_equal_the_reference(&case)?;
    let expected = reference_of(&case)?;
    let actual = run(
        &case.program,
        &case.stream,
        Timeline::default(),
        &Engine::dataflow(4, true),
    )?;
    match differences(&expected, &actual) {
        Some(differences) => Err(format!(
            "seed {seed}, lowered, 4 workers\n--- program\n{}--- stream\n{}{differences}",
            case.program, case.stream
        )),
        None => Ok(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn cycles_over_several_keys_equal_the_stepper_and_the_reference_on_1_to_4_workers(
        seed in any::<u64>()
    ) {
        check(seed).map_err(TestCaseError::fail)?;
    }
}

/// A component that alternates for ever (a rule without a positive atom reads the unit
/// row, which holds to the end) and has no key: as a loop it must stop with the
/// timeline, neither running on after the input nor skipping the points between its
/// facts.
#[test]
fn a_cycle_that_never_settles_stops_with_the_timeline() {
    let program = "tick(a, T) :- not tock(b, T-1).\ntock(b, T) :- tick(a, T-1), not r(T).\n";
    assert!(
        lowered_plan(program)
            .lines()
            .any(|l| l.starts_with("cycle {"))
    );
    let case = stgflow_tests::generate::Case {
        seed: 0,
        program: program.to_owned(),
        stream: "r(2).\nr(9).\n".to_owned(),
    };
    lowered_and_literal_equal_the_reference(&case).unwrap_or_else(|e| panic!("{e}"));
}

/// The random cycles cover both renderings of a loop through time: in keyed steps (each
/// predicate with a key of its own among its step's) and as the dataflow of its rules.
#[test]
fn generated_cycles_run_in_keyed_steps_and_as_dataflow() {
    let stepped = (0..200)
        .filter(|&seed| {
            lowered_plan(&cyclic_case(seed).program)
                .lines()
                .any(|l| l.starts_with("cycle {") && l.contains("in keyed steps"))
        })
        .count();
    eprintln!("in keyed steps: {stepped} of 200");
    assert!(
        (40..=180).contains(&stepped),
        "in keyed steps: {stepped} of 200"
    );
}
