//! The dataflow engine against the reference evaluator: random programs and streams
//! (joins, negation at offsets 0..3, offset-0 recursion, temporal recursion, comparisons,
//! assignments, facts of rule-defined predicates in the input), with 1, 2, 3 and 4 workers,
//! the input diffed on the calling thread and on the workers (clusters of 2 and 3
//! processes: the CLI's `cluster_oracle` tests); and the output formatted on the workers,
//! or sorted on the calling thread, against the workers' sorted runs, byte for byte.

use proptest::prelude::*;
use stgflow_io::drive::Timeline;
use stgflow_tests::generate::case;
use stgflow_tests::{Engine, differences, run, run_printing};

fn check(seed: u64, workers: &[usize]) -> Result<(), String> {
    let case = case(seed);
    let expected = stgflow_tests::reference_of(&case)?;
    // The input diffed on the calling thread, and on the workers after an exchange.
    let engines = workers.iter().flat_map(|&w| {
        [
            (w, "", Engine::dataflow(w, true)),
            (
                w,
                ", diffed on the workers",
                Engine::dataflow_diffing_on_workers(w, true),
            ),
        ]
    });
    for (w, diffed, engine) in engines {
        let actual = run(&case.program, &case.stream, Timeline::default(), &engine)?;
        if let Some(differences) = differences(&expected, &actual) {
            return Err(format!(
                "seed {seed}, {w} worker(s){diffed}\n--- program\n{}--- stream\n{}{differences}",
                case.program, case.stream
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn dataflow_with_1_2_3_4_workers_equals_reference_on_300_random_programs(seed in any::<u64>()) {
        check(seed, &[1, 2, 3, 4]).map_err(TestCaseError::fail)?;
    }
}

/// The output formatted on 1–4 workers, in batches of 1–8 time points (so that an input
/// fact's changes go to different workers), merged on its keys; and the workers' output
/// put in order on the calling thread before it merges it: the bytes the calling thread
/// formats from the workers' sorted runs, in points, changes and intervals.
fn check_formatted(seed: u64) -> Result<(), String> {
    use stgflow_io::sink::Mode;
    let case = case(seed);
    for mode in [Mode::Points, Mode::Changes, Mode::Intervals] {
        let expected = stgflow_tests::output_bytes(
            &case.program,
            &case.stream,
            &Engine::dataflow(1, true),
            (true, mode.clone()),
        )?;
        for workers in 1..=4 {
            let batch = 1 + seed.wrapping_add(workers as u64) % 8;
            let engines = [
                (
                    "formatting",
                    Engine::dataflow_formatting_on_workers(workers, batch),
                ),
                (
                    "sorted on the calling thread",
                    Engine::dataflow_sorting_on_calling_thread(workers, batch),
                ),
            ];
            for (how, engine) in engines {
                let actual = stgflow_tests::output_bytes(
                    &case.program,
                    &case.stream,
                    &engine,
                    (true, mode.clone()),
                )?;
                if actual != expected {
                    return Err(format!(
                        "seed {seed}, {mode:?}, {workers} worker(s) {how}, batches of {batch}\n--- program\n{}--- stream\n{}--- expected\n{expected}--- {how}\n{actual}",
                        case.program, case.stream
                    ));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn output_formatted_on_or_sorted_off_1_2_3_4_workers_is_the_same_bytes_on_100_random_programs(seed in any::<u64>()) {
        check_formatted(seed).map_err(TestCaseError::fail)?;
    }
}

/// Laser's output ([`stgflow_io::sink::Snapshot`]) from 1–4 workers, in batches of 1–8
/// time points, sorted on the workers or on the calling thread: the workers' output then
/// goes to the sink in time order only, not consolidated, and its lines count texts
/// (`Sink::in_any_order`) — the bytes the reference evaluator's sink writes from each
/// time point's facts.
fn check_snapshot(seed: u64) -> Result<(), String> {
    use stgflow_io::sink::Mode;
    let case = case(seed);
    let mode = || Mode::Snapshot(std::sync::Arc::new(stgflow_lars::output::LaserOutput));
    let expected = stgflow_tests::output_bytes(
        &case.program,
        &case.stream,
        &Engine::Reference,
        (true, mode()),
    )?;
    for workers in 1..=4 {
        let batch = 1 + seed.wrapping_add(workers as u64) % 8;
        let engines = [
            ("on the workers", Engine::dataflow_batches(workers, batch)),
            (
                "on the calling thread",
                Engine::dataflow_sorting_on_calling_thread(workers, batch),
            ),
        ];
        for (how, engine) in engines {
            let actual =
                stgflow_tests::output_bytes(&case.program, &case.stream, &engine, (true, mode()))?;
            if actual != expected {
                return Err(format!(
                    "seed {seed}, {workers} worker(s), time-ordered {how}, batches of {batch}\n--- program\n{}--- stream\n{}--- expected\n{expected}--- actual\n{actual}",
                    case.program, case.stream
                ));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn laser_lines_from_1_2_3_4_workers_are_the_references_bytes_on_100_random_programs(seed in any::<u64>()) {
        check_snapshot(seed).map_err(TestCaseError::fail)?;
    }
}

/// A TD ♢ window `q(X, T) :- p(X, T-k).` (k = 0..d), printed alone, in Laser's output
/// from 1–3 workers: p flows as points and the window leaves its 0/1 closure to the sink
/// that counts (`window::counted_points`), its retractions made on the workers, for q
/// takes input facts of its own (some in the stream) — the reference evaluator's bytes.
fn check_counted_window(d: u64, facts: &[(bool, u8, u64)]) -> Result<(), String> {
    use stgflow_io::sink::Mode;
    let mode = || Mode::Snapshot(std::sync::Arc::new(stgflow_lars::output::LaserOutput));
    let offset = |k: u64| {
        if k == 0 {
            String::new()
        } else {
            format!("-{k}")
        }
    };
    let mut program: String = (0..=d)
        .map(|k| format!("q(X, T) :- p(X, T{}).\n", offset(k)))
        .collect();
    program.push_str("#output q.\n");
    let mut facts = facts.to_vec();
    facts.sort_by_key(|&(_, _, t)| t);
    let stream: String = facts
        .iter()
        .map(|&(own, x, t)| format!("{}(c{x}, {t}).\n", if own { "q" } else { "p" }))
        .collect();
    let expected =
        stgflow_tests::output_bytes(&program, &stream, &Engine::Reference, (false, mode()))?;
    for workers in 1..=3 {
        let engine = Engine::dataflow(workers, true);
        let actual = stgflow_tests::output_bytes(&program, &stream, &engine, (false, mode()))?;
        if actual != expected {
            return Err(format!(
                "{workers} worker(s)\n--- program\n{program}--- stream\n{stream}--- expected\n{expected}--- actual\n{actual}"
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Facts of p (some repeated within a time point and across) and of q itself.
    #[test]
    fn laser_lines_of_a_window_closed_in_the_sink_are_the_references_bytes(
        d in 0..4u64,
        facts in prop::collection::vec((prop::bool::weighted(0.15), 0..4u8, 0..16u64), 0..40),
    ) {
        check_counted_window(d, &facts).map_err(TestCaseError::fail)?;
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

/// A rule that reads the time reads, two points later, what its key held only before the
/// time point it was last evaluated at (found by the 5,000-program run): the time-stepping
/// operator must wake the key while any fact its rules can read is in the horizon, not only
/// while it holds one now.
#[test]
fn a_rule_reading_the_time_wakes_its_key_while_the_past_it_reads_holds() {
    let program = "p(Z, X, T) :- e(X, Z, T-2), T >= 5.\nx(T) :- tick(T).\n";
    let stream = "e(a, b, 2).\ne(a, b, 3).\ntick(5).\ntick(6).\n";
    let expected = run(program, stream, Timeline::default(), &Engine::Reference)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(expected.contains("p(b,a,5)."), "{expected:?}");
    for workers in [1, 2] {
        let actual = run(
            program,
            stream,
            Timeline::default(),
            &Engine::dataflow(workers, true),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(differences(&expected, &actual), None, "{workers} worker(s)");
    }
}

/// ♢ and □ windows, lowered and literal, against the reference, over random 0/1 streams
/// that also hold facts of the window predicates themselves (a □ window's count dips
/// below zero, where such a fact must still hold).
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
                for window in ["d3", "b1", "b2"] {
                    if rng.chance(4) {
                        stream.push_str(&format!("{window}({x}, {t}).\n"));
                    }
                }
            }
        }
        let expected =
            run(program, &stream, Timeline::default(), &Engine::Reference).unwrap_or_default();
        assert!(
            expected.iter().any(|l| l.starts_with("b2(")),
            "seed {seed}: no □ facts"
        );
        for lower in [true, false] {
            for workers in [1, 2] {
                let engine = Engine::dataflow(workers, lower);
                let actual =
                    run(program, &stream, Timeline::default(), &engine).unwrap_or_default();
                assert_eq!(
                    actual, expected,
                    "seed {seed}, lowered {lower}, {workers} workers\n{stream}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// `q(X, Y, T) :- w(X, Y, T), not s(T-k)` over a ♢ or □ window w that only q reads
    /// runs as one gated window; with the gate flipping, q's and w's own facts in the
    /// input, a □ window over q, and 1–3 workers, it equals the reference and the literal
    /// rules.
    #[test]
    fn gated_windows_equal_the_reference(
        boxed in any::<bool>(),
        d in 0u32..4,
        k in 0u32..3,
        gate_rule in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let d = if boxed { d.max(1) } else { d };
        let mut program = String::new();
        if boxed {
            let body: Vec<String> = (0..=d).map(|i| format!("p(X, Y, T-{i})")).collect();
            program.push_str(&format!("w(X, Y, T) :- {}.\n", body.join(", ")));
        } else {
            for i in 0..=d {
                program.push_str(&format!("w(X, Y, T) :- p(X, Y, T-{i}).\n"));
            }
        }
        if gate_rule {
            program.push_str("s(T) :- g(T).\n");
        }
        program.push_str(&format!("q(X, Y, T) :- w(X, Y, T), not s(T-{k}).\n"));
        // A □ window over q needs q's changes consolidated.
        program.push_str("r(X, Y, T) :- q(X, Y, T), q(X, Y, T-1).\n#output q, r.\n");
        let mut rng = stgflow_tests::generate::Rng::new(seed);
        let mut stream = String::new();
        for t in 0..25 {
            for x in ["a", "b", "c"] {
                for y in ["a", "b"] {
                    if rng.chance(45) {
                        stream.push_str(&format!("p({x}, {y}, {t}).\n"));
                    }
                    if rng.chance(4) {
                        stream.push_str(&format!("q({x}, {y}, {t}).\n"));
                    }
                    if rng.chance(3) {
                        stream.push_str(&format!("w({x}, {y}, {t}).\n"));
                    }
                }
            }
            if rng.chance(30) {
                stream.push_str(&format!("{}({t}).\n", if gate_rule { "g" } else { "s" }));
            }
        }
        let compiled = stgflow_lang::compile_str("gate.tdl", &program);
        let analysis = compiled.analysis.as_ref();
        prop_assert!(analysis.is_some(), "{}", compiled.render_diagnostics(false));
        let plan = stgflow_dataflow::plan::plan(&compiled.program, analysis.unwrap_or_else(|| unreachable!()), true);
        prop_assert!(
            plan.components
                .iter()
                .any(|c| matches!(c, stgflow_dataflow::plan::Component::GatedWindow { .. })),
            "not fused: {:?}", plan
        );
        // Only q and r printed, so that nothing else reads the window.
        let run = |engine: &Engine| {
            run_printing(&program, &stream, Timeline::default(), engine, false)
                .map_err(TestCaseError::fail)
        };
        let expected = run(&Engine::Reference)?;
        for (workers, lower) in [(1, true), (2, true), (3, true), (1, false)] {
            let engine = Engine::dataflow(workers, lower);
            let actual = run(&engine)?;
            prop_assert_eq!(
                &actual, &expected,
                "{} workers, lowered {}\n--- program\n{}--- stream\n{}", workers, lower, program, stream
            );
        }
    }
}

/// Counts over one atom (constants, a variable written twice, `_`, two counted
/// variables, none grouped, offsets 0–2, a count that is 0 where nothing matches) run on
/// the counting operator; with facts of the counts' predicates in the input (the rule
/// heads' and the hidden counting ones', `n__count1`), and a rule that reads two counts,
/// lowered on 1–3 workers and literal, they equal the reference.
const COUNTS: &str = "\
n(X, N, T) :- N = #count { C : p(X, C, _, T) }.
m(a, X, N, T) :- N = #count { C, D : p(X, C, D, T-2) }.
k(N, T) :- N = #count { C : p(C, C, b, T-1) }.
z(X, N, N, T) :- N = #count { C : q(X, C, T) }.
w(X, N, T) :- r(X, T), N = #count { C : q(X, C, T-1) }.
fewer(X, T) :- n(X, N, T), m(a, X, M, T), N < M.
";

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]

    #[test]
    fn counts_over_one_atom_on_the_counting_operator_equal_the_reference(seed in any::<u64>()) {
        let compiled = stgflow_lang::compile_str("counts.tdl", COUNTS);
        let analysis = compiled.analysis.as_ref();
        prop_assert!(analysis.is_some(), "{}", compiled.render_diagnostics(false));
        let plan = stgflow_dataflow::plan::plan(&compiled.program, analysis.unwrap_or_else(|| unreachable!()), true);
        let counted = plan.components.iter()
            .filter(|c| matches!(c, stgflow_dataflow::plan::Component::Count { .. }))
            .count();
        prop_assert_eq!(counted, 5, "{}", plan.dump(&compiled.program));
        let mut rng = stgflow_tests::generate::Rng::new(seed);
        let mut stream = String::new();
        let values = ["a", "b", "c", "1", "2"];
        for t in 0..20 {
            for x in ["a", "b", "c"] {
                for c in values {
                    for d in ["a", "b"] {
                        if rng.chance(25) {
                            stream.push_str(&format!("p({x}, {c}, {d}, {t}).\n"));
                        }
                    }
                    if rng.chance(20) {
                        stream.push_str(&format!("q({x}, {c}, {t}).\n"));
                    }
                }
                if rng.chance(50) {
                    stream.push_str(&format!("r({x}, {t}).\n"));
                }
                // The counting predicates' own facts, some of them counts that are derived too.
                let n = rng.below(4);
                if rng.chance(10) {
                    stream.push_str(&format!("n({x}, {n}, {t}).\n"));
                }
                if rng.chance(15) {
                    stream.push_str(&format!("n__count1({x}, {}, {t}).\n", rng.below(4)));
                }
                if rng.chance(6) {
                    stream.push_str(&format!("z({x}, {n}, {}, {t}).\n", n + rng.below(2)));
                }
            }
            if rng.chance(15) {
                stream.push_str(&format!("k({}, {t}).\n", rng.below(3)));
            }
        }
        let expected = run(COUNTS, &stream, Timeline::default(), &Engine::Reference)
            .map_err(TestCaseError::fail)?;
        for (workers, lower) in [(1, true), (2, true), (3, true), (1, false)] {
            let actual = run(COUNTS, &stream, Timeline::default(), &Engine::dataflow(workers, lower))
                .map_err(TestCaseError::fail)?;
            prop_assert_eq!(
                &actual, &expected,
                "{} workers, lowered {}\n--- stream\n{}", workers, lower, stream
            );
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
    let engine = Engine::dataflow(3, true);
    let actual = run(program, &stream, Timeline::default(), &engine).unwrap_or_default();
    assert_eq!(actual.len(), expected.len());
    assert!(actual == expected);
}
