//! Sparse timelines: the generated programs over their streams with the time points pulled
//! apart (up to 10⁵ time points between one and the next), where a quiet stretch is
//! skipped rather than stepped through — by the sink, the batches fed to the workers and
//! the reference evaluator once it has settled.
//!
//! * Every threaded path (1–4 workers, the input diffed on the calling thread or on the
//!   workers, the output formatted on the workers) gives the reference evaluator's bytes
//!   in `changes` and `intervals`. (Replay by parts is held to it on stretched streams
//!   in `replay.rs`; clusters in the CLI's golden cases of `tests/cases/sparse`.)
//! * The reference evaluator, which skips a stretch once what holds stops changing,
//!   gives the naive oracle's answers over gaps small enough for the oracle to step.

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_io::sink::Mode;
use stgflow_tests::generate::{Rng, case, persistence_case};
use stgflow_tests::naive::naive;
use stgflow_tests::streams::{sparse_gap, stretched};
use stgflow_tests::{Engine, differences, output_bytes, run_reference};

fn check(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed ^ 0x5ba5e);
    let case = if seed % 2 == 0 {
        case(seed)
    } else {
        persistence_case(seed)
    };
    let stream = stretched(
        &case.stream,
        &mut rng,
        sparse_gap(&case.program, &case.stream),
    );
    for mode in [Mode::Changes, Mode::Intervals] {
        let expected = output_bytes(
            &case.program,
            &stream,
            &Engine::Reference,
            (true, mode.clone()),
        )?;
        for workers in 1..=4 {
            let engines = [
                ("", Engine::dataflow(workers, true)),
                (
                    ", diffed on the workers",
                    Engine::dataflow_diffing_on_workers(workers, true),
                ),
                (
                    ", formatted on the workers",
                    Engine::dataflow_formatting_on_workers(workers, 1 + rng.below(64) as u64),
                ),
            ];
            for (how, engine) in engines {
                let actual = output_bytes(&case.program, &stream, &engine, (true, mode.clone()))?;
                if actual != expected {
                    return Err(format!(
                        "seed {seed}, {mode:?}, {workers} worker(s){how}\n--- program\n{}--- stream\n{stream}--- reference\n{expected}--- dataflow\n{actual}",
                        case.program
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The reference evaluator's skipping against the naive oracle, which steps every time
/// point: gaps of up to 40 time points, past the generated programs' horizons.
fn check_reference(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed ^ 0x0dd);
    let case = case(seed);
    let stream = stretched(&case.stream, &mut rng, 40);
    let expected = naive(&case.program, &stream)?;
    let actual = run_reference(&case.program, &stream, Timeline::default())?;
    match differences(&expected, &actual) {
        None => Ok(()),
        Some(differences) => Err(format!(
            "seed {seed}\n--- program\n{}--- stream\n{stream}{differences}",
            case.program
        )),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn every_threaded_path_equals_reference_over_gaps_of_up_to_100000_points(seed in any::<u64>()) {
        check(seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn reference_skipping_quiet_stretches_equals_naive_oracle(seed in any::<u64>()) {
        check_reference(seed).map_err(TestCaseError::fail)?;
    }
}

/// A stretched stream keeps its facts and their order, each time point after the last.
#[test]
fn stretched_streams_keep_their_facts_in_order() {
    let mut rng = Rng::new(7);
    let stream = "p(a,1).\nq(2).\np(b,3).\np(c,3).\n";
    let out = stretched(stream, &mut rng, 1000);
    let times: Vec<u64> = out.lines().map(stgflow_tests::streams::time_of).collect();
    assert_eq!(times[0], 1);
    assert!(times[1] > times[0] && times[1] <= 1001, "{out}");
    assert!(times[2] > times[1] && times[2] == times[3], "{out}");
    let facts: Vec<&str> = out
        .lines()
        .map(|l| &l[..l.rfind([',', '(']).unwrap_or(0)])
        .collect();
    assert_eq!(facts, ["p(a", "q", "p(b", "p(c"]);
}
