//! The dataflow engine against the reference evaluator: random programs and streams
//! (joins, negation at offsets 0..3, offset-0 recursion, temporal recursion, comparisons,
//! assignments, facts of rule-defined predicates in the input), with 1, 2 and 3 workers.

use proptest::prelude::*;
use stgflow_engine::drive::Timeline;
use stgflow_tests::generate::case;
use stgflow_tests::{Engine, run};

fn check(seed: u64, workers: &[usize]) -> Result<(), String> {
    let case = case(seed);
    let expected = run(
        &case.program,
        &case.stream,
        Timeline::default(),
        &Engine::Reference,
    )?;
    for &w in workers {
        let engine = Engine::Dataflow {
            workers: w,
            lower_windows: true,
        };
        let actual = run(&case.program, &case.stream, Timeline::default(), &engine)?;
        if actual != expected {
            let missing: Vec<&String> = expected.difference(&actual).collect();
            let extra: Vec<&String> = actual.difference(&expected).collect();
            return Err(format!(
                "seed {seed}, {w} worker(s)\n--- program\n{}--- stream\n{}--- missing {missing:?}\n--- extra {extra:?}",
                case.program, case.stream
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn dataflow_with_1_2_3_workers_equals_reference_on_300_random_programs(seed in any::<u64>()) {
        check(seed, &[1, 2, 3]).map_err(TestCaseError::fail)?;
    }
}

#[test]
#[ignore = "slow: 5,000 random programs × 3 worker counts; run with --ignored in release mode"]
fn dataflow_with_1_2_3_workers_equals_reference_on_5000_random_programs() {
    for seed in 0..5_000u64 {
        if let Err(error) = check(seed.wrapping_mul(0x2545_F491_4F6C_DD1D), &[1, 2, 3]) {
            panic!("{error}");
        }
    }
}

/// ♢ and □ windows, lowered and literal, against the reference, over random 0/1 streams.
#[test]
fn lowered_and_literal_windows_agree_with_the_reference() {
    let program = "\
        d0(X, T) :- p(X, T).\n\
        d3(X, T) :- p(X, T). d3(X, T) :- p(X, T-1). d3(X, T) :- p(X, T-2). d3(X, T) :- p(X, T-3).\n\
        b2(X, T) :- p(X, T), p(X, T-1), p(X, T-2).\n\
        b1(X, T) :- p(X, T), p(X, T-1).\n\
        both(X, T) :- d3(X, T), not b2(X, T).\n";
    for seed in 0..40u64 {
        let mut rng = stgflow_tests::generate::Rng::new(seed);
        let mut stream = String::new();
        for t in 0..30 {
            for x in ["a", "b", "c"] {
                if rng.chance(55) {
                    stream.push_str(&format!("p({x}, {t}).\n"));
                }
            }
        }
        let expected =
            run(program, &stream, Timeline::default(), &Engine::Reference).unwrap_or_default();
        assert!(
            expected.iter().any(|l| l.starts_with("b2(")),
            "seed {seed}: no □ facts"
        );
        for lower_windows in [true, false] {
            for workers in [1, 2] {
                let engine = Engine::Dataflow {
                    workers,
                    lower_windows,
                };
                let actual =
                    run(program, &stream, Timeline::default(), &engine).unwrap_or_default();
                assert_eq!(
                    actual, expected,
                    "seed {seed}, lowered {lower_windows}, {workers} workers\n{stream}"
                );
            }
        }
    }
}

#[test]
fn inertia_1000_fluents_3_workers() {
    let program = "\
        holds(F, V, T) :- init(F, V, T-1).\n\
        holds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\n\
        term(F, V, T) :- init(F, W, T), holds(F, V, T), V != W.\n";
    let mut rng = stgflow_tests::generate::Rng::new(7);
    let mut stream = String::new();
    for t in 0..200 {
        for _ in 0..10 {
            let f = rng.below(1000);
            let v = rng.below(3);
            stream.push_str(&format!("init(f{f}, v{v}, {t}).\n"));
        }
    }
    let expected =
        run(program, &stream, Timeline::default(), &Engine::Reference).unwrap_or_default();
    assert!(expected.len() > 1000);
    let engine = Engine::Dataflow {
        workers: 3,
        lower_windows: true,
    };
    let actual = run(program, &stream, Timeline::default(), &engine).unwrap_or_default();
    assert_eq!(actual.len(), expected.len());
    assert!(actual == expected);
}
