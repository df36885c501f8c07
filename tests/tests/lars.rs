//! The LARS front end end to end, on random plain LARS programs and Laser streams
//! (`stgflow_tests::lars`): windows ♢/□/@ of sizes 0..3 over input and derived
//! predicates, negated extended atoms, COMP and MATH with time variables as values,
//! timelines declared before the first atom (clipping); and Laser's wider language:
//! windows over bare atoms, ♢/□/@ over the whole stream, `@` at a number, `not` inside
//! ♢/□, `@` in heads, and stream atoms of rule heads' predicates (read, not printed).
//!
//! Two independent checks:
//! * **Algorithm 2 is right**: a direct interpreter of the LARS semantics (windows
//!   evaluated as clipped sets of time points, no TD) equals the reference evaluator on the
//!   translated program;
//! * **the engine runs the translation right**: the dataflow engine with 1 and 3 workers,
//!   windows lowered to delay operators and literal, equals the reference evaluator;
//!   and so does the STG engine (Algorithm 4; seed 8804287062165928337, a negation before
//!   the atom binding its variable, is kept as `tests/cases/stg/negation_before_binding`);
//!   and in Laser's output (`--mode laser`) byte for byte, where printed ♢ windows over
//!   the stream's atoms leave their 0/1 closure and retractions to the sink, on these
//!   programs and on Laser's benchmark shapes (`stgflow_tests::lars::window_case`).

use proptest::prelude::*;
use stgflow_dataflow::plan::{Component, Window, plan};
use stgflow_lars::TupleReading;
use stgflow_tests::Engine;
use stgflow_tests::lars::{
    Case, case, case_for, interpret, interpret_reading, laser_output, run_translated,
    run_translated_reading, window_case,
};

fn check(seed: u64, workers: &[usize]) -> Result<(), String> {
    let case = case(seed);
    let context = || {
        format!(
            "seed {seed}\n--- program\n{}--- stream\n{}",
            case.program, case.stream
        )
    };
    let (parsed, diagnostics) = stgflow_lars::syntax::parse(0, &case.program);
    if diagnostics.has_errors() {
        return Err(format!("{}\n{diagnostics:?}", context()));
    }
    // Tuple windows in both readings: Laser's (the default) and the stream's order.
    let readings: &[TupleReading] = match case.program.contains("tuple_win") {
        true => &[TupleReading::Laser, TupleReading::Exact],
        false => &[TupleReading::Laser],
    };
    for &reading in readings {
        let run = |engine: &Engine| {
            run_translated_reading(&case.program, &case.stream, engine, reading)
                .map_err(|e| format!("{}{reading:?}\n{e}", context()))
        };
        let reference = run(&Engine::Reference)?;
        let direct = interpret_reading(&parsed, &case.stream, reading)
            .map_err(|e| format!("{}\n{e}", context()))?;
        if direct != reference {
            return Err(format!(
                "{}{reading:?}\n--- LARS semantics only {:?}\n--- translation only {:?}",
                context(),
                direct.difference(&reference).collect::<Vec<_>>(),
                reference.difference(&direct).collect::<Vec<_>>()
            ));
        }
        for &w in workers {
            for lower in [true, false] {
                let actual = run(&Engine::dataflow(w, lower))?;
                if actual != reference {
                    return Err(format!(
                        "{}{reading:?}, {w} worker(s), windows lowered: {lower}\n--- missing {:?}\n--- extra {:?}",
                        context(),
                        reference.difference(&actual).collect::<Vec<_>>(),
                        actual.difference(&reference).collect::<Vec<_>>()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `stream` (a Laser stream) with the atoms of each time point's line in another order,
/// from `seed`.
fn shuffled_within_lines(stream: &str, seed: u64) -> String {
    let mut rng = stgflow_tests::generate::Rng::new(seed);
    let mut out = String::new();
    for line in stream.lines() {
        let Some((time, atoms)) = line.split_once(':').filter(|_| !line.starts_with('#')) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        // Atoms are separated by spaces outside parentheses.
        let (mut list, mut depth, mut atom) = (Vec::new(), 0, String::new());
        for c in atoms.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ' ' if depth == 0 => {
                    if !atom.is_empty() {
                        list.push(std::mem::take(&mut atom));
                    }
                    continue;
                }
                _ => {}
            }
            atom.push(c);
        }
        if !atom.is_empty() {
            list.push(atom);
        }
        for i in (1..list.len()).rev() {
            list.swap(i, rng.below(i + 1));
        }
        out.push_str(&format!("{time}: {}\n", list.join(" ")));
    }
    out
}

/// In Laser's reading a tuple window's answers do not hang on the order of a time point's
/// atoms in its line: the stream with each line's atoms shuffled gives the same.
fn check_shuffled(seed: u64) -> Result<(), String> {
    let case = case(seed);
    if !case.program.contains("tuple_win") {
        return Ok(());
    }
    let shuffled = shuffled_within_lines(&case.stream, seed);
    let (parsed, _) = stgflow_lars::syntax::parse(0, &case.program);
    let laser = TupleReading::Laser;
    let original = run_translated_reading(&case.program, &case.stream, &Engine::Reference, laser)?;
    for engine in [Engine::Reference, Engine::dataflow(2, true)] {
        let actual = run_translated_reading(&case.program, &shuffled, &engine, laser)?;
        if actual != original {
            return Err(format!(
                "seed {seed}\n--- program\n{}--- stream\n{}--- shuffled\n{shuffled}--- missing {:?}\n--- extra {:?}",
                case.program,
                case.stream,
                original.difference(&actual).collect::<Vec<_>>(),
                actual.difference(&original).collect::<Vec<_>>()
            ));
        }
    }
    let direct = interpret_reading(&parsed, &shuffled, laser)?;
    if direct != original {
        return Err(format!(
            "seed {seed}: the LARS semantics differ on the shuffled stream"
        ));
    }
    Ok(())
}

/// Laser's output (`--mode laser`) of the dataflow engine with 1 and 3 workers, windows
/// lowered, is the reference evaluator's, byte for byte: its sink counts each fact's
/// changes, and printed ♢ windows over a stream's atoms leave their 0/1 closure to it
/// (their counts summed over the workers, a fact counted once per point of it in the
/// window). On random programs, and on programs of Laser's benchmarks' shape
/// ([`window_case`]), where that closure is left to the sink.
fn check_laser_output(case: &Case) -> Result<(), String> {
    let seed = case.seed;
    let reference = laser_output(&case.program, &case.stream, &Engine::Reference)?;
    for workers in [1, 3] {
        let actual = laser_output(
            &case.program,
            &case.stream,
            &Engine::dataflow(workers, true),
        )?;
        if actual != reference {
            return Err(format!(
                "seed {seed}, {workers} worker(s)\n--- program\n{}--- stream\n{}--- expected\n{reference}--- actual\n{actual}",
                case.program, case.stream
            ));
        }
    }
    Ok(())
}

/// Algorithm 4 on the translation (the graph as written under a budget, else with empty
/// nodes skipped) against the reference evaluator, on programs without windows over the
/// whole stream (Algorithm 4's graph grows with the stream under recursion through time,
/// which they are); `Ok(false)` when the graph outgrows both budgets all the same.
fn check_stg(seed: u64) -> Result<bool, String> {
    let case = case_for(seed, false);
    let context = || {
        format!(
            "seed {seed}\n--- program\n{}--- stream\n{}",
            case.program, case.stream
        )
    };
    let reference = run_translated(&case.program, &case.stream, &Engine::Reference)
        .map_err(|e| format!("{}\n{e}", context()))?;
    let mut stg = run_translated(&case.program, &case.stream, &stg_engine(false));
    if stg.as_ref().is_err_and(|e| e.contains("built more than")) {
        stg = run_translated(&case.program, &case.stream, &stg_engine(true));
    }
    if stg.as_ref().is_err_and(|e| e.contains("built more than")) {
        return Ok(false);
    }
    let stg = stg.map_err(|e| format!("{}\n{e}", context()))?;
    if stg != reference {
        return Err(format!(
            "{}--- stg\n--- missing {:?}\n--- extra {:?}",
            context(),
            reference.difference(&stg).collect::<Vec<_>>(),
            stg.difference(&reference).collect::<Vec<_>>()
        ));
    }
    Ok(true)
}

#[test]
fn stg_equals_reference_on_300_random_lars_programs() {
    let mut checked = 0;
    for seed in 0..300u64 {
        match check_stg(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)) {
            Ok(true) => checked += 1,
            Ok(false) => {}
            Err(error) => panic!("{error}"),
        }
    }
    eprintln!("the STG engine ran {checked} of 300 programs within its budget");
    assert!(
        checked >= 200,
        "the STG engine ran only {checked} of 300 programs within its budget"
    );
}

fn stg_engine(skip_empty_nodes: bool) -> Engine {
    stgflow_tests::stg(
        if skip_empty_nodes { 100_000 } else { 2_000 },
        skip_empty_nodes,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn lars_semantics_reference_and_dataflow_1_3_workers_agree_on_300_random_programs(seed in any::<u64>()) {
        check(seed, &[1, 3]).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn tuple_windows_in_lasers_reading_do_not_hang_on_the_order_within_a_line(seed in any::<u64>()) {
        check_shuffled(seed).map_err(TestCaseError::fail)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn laser_output_of_dataflow_1_3_workers_is_the_references_bytes_on_200_random_programs(seed in any::<u64>()) {
        check_laser_output(&case(seed)).map_err(TestCaseError::fail)?;
        check_laser_output(&window_case(seed)).map_err(TestCaseError::fail)?;
    }
}

#[test]
#[ignore = "slow: 3,000 random LARS programs × 2 worker counts × lowered/literal; run with --ignored in release mode"]
fn lars_semantics_reference_and_dataflow_agree_on_3000_random_programs() {
    for seed in 0..3_000u64 {
        if let Err(error) = check(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15), &[1, 3]) {
            panic!("{error}");
        }
    }
}

/// The generator produces what it should: every construct occurs, and most programs
/// derive something (a check between empty outputs would prove little).
#[test]
fn generated_programs_cover_every_construct_and_derive_facts() {
    let cases: Vec<_> = (0..200u64).map(case).collect();
    let all: String = cases.iter().map(|c| c.program.as_str()).collect();
    for construct in [
        "diamond(",
        "box(",
        ",@(",
        " @(",
        "not(",
        "COMP(",
        "MATH(",
        "time_win(0,",
        // Laser's language beyond plain LARS: `not` inside a modality, windows over bare
        // atoms, modalities over the whole stream, `@` at a number, `@` in a head.
        "diamond(not(",
        "box(not(",
        ",0,1,e(",
        " diamond(",
        " box(",
        " @(3,",
        ",0,1,@(2,",
        "\n@(U,",
        "MATH(+,T1,U,",
        "tuple_win(",
        "not(tuple_win(",
        ",0,1,@(T,",
    ] {
        assert!(all.contains(construct), "no `{construct}` in 200 programs");
    }
    assert!(
        (1..=4).any(|n| all.contains(&format!("tuple_win({n},box("))),
        "no `box` in a tuple window in 200 programs"
    );
    let deriving = cases
        .iter()
        .filter(|c| {
            let (parsed, _) = stgflow_lars::syntax::parse(0, &c.program);
            interpret(&parsed, &c.stream).is_ok_and(|facts| !facts.is_empty())
        })
        .count();
    assert!(
        deriving >= 120,
        "only {deriving} of 200 programs derive anything"
    );
}

/// LARS windows arrive at the dataflow planner as window components.
#[test]
fn window_predicates_reach_the_planner_as_windows() {
    let compiled = stgflow_lars::compile_str(
        "t.lars",
        "q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)\nr :- time_win(3,0,1,box(s))\n",
    );
    let analysis = compiled.analysis.as_ref();
    assert!(analysis.is_some(), "{}", compiled.render_diagnostics(false));
    let Some(analysis) = analysis else { return };
    let windows: Vec<(String, Window)> = plan(&compiled.program, analysis, true)
        .components
        .iter()
        .filter_map(|c| match c {
            Component::Window { pred, window, .. } => {
                Some((compiled.program.pred_name(*pred).to_owned(), *window))
            }
            // Only `q` reads the ♢ window, under `not(s)`: they run as one operator.
            Component::GatedWindow {
                window_pred,
                window,
                ..
            } => Some((compiled.program.pred_name(*window_pred).to_owned(), *window)),
            _ => None,
        })
        .collect();
    assert_eq!(
        windows,
        [
            ("p__dia10".to_owned(), Window::Diamond(10)),
            ("s__box3_window".to_owned(), Window::Box(3)),
        ]
    );
    let literal = plan(&compiled.program, analysis, false);
    assert!(
        !literal
            .components
            .iter()
            .any(|c| matches!(c, Component::Window { .. }))
    );
}
