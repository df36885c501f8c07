//! Replay by parts (`runtime::replay`): files cut into parts by time, each part read where
//! it lies in every file; evaluated by time (each part alone, warmed up) or by key (each
//! shard over the whole timeline). Held to the reference evaluator reading the same files
//! line by line, on 1–4 workers and parts of a few bytes up to the whole input: the same
//! bytes, and the same summary or the same error.
//!
//! * TD programs (and persistence, keyed by its fluent) over streams with unknown
//!   predicates, wrong arities, comments and errors (a time going back, a malformed
//!   line), split over 1–3 files, with timelines cut by `--from`/`--until`, in `points`,
//!   `changes` and `intervals`; a quarter of them over a sparse timeline (time points up
//!   to 10⁵ apart, in `changes` and `intervals`);
//! * plain LARS programs (windows, joins, negation: split by time) over Laser's streams
//!   with a declared timeline, in those modes and Laser's own lines;
//! * now and then printed from a time point on (`--print-from`).

use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use stgflow_engine::{Engine, Split};
use stgflow_io::drive::{FactSource, ProgramFacts, RunSummary, Timeline};
use stgflow_io::sink::{Mode, Sink};
use stgflow_io::stream::split::{SplitFile, Splittable};
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema, Tolerance};
use stgflow_lang::compile_str;
use stgflow_lars::stream::LaserStream;
use stgflow_tests::generate::{Rng, case, persistence_case};
use stgflow_tests::lars;
use stgflow_tests::streams::{sparse_gap, streams_of, stretched, timeline};

/// What a run gives: its output, its summary or its error, and how it was spread (`by
/// time`, `by key`, `threaded`; none for the reference).
type Outcome = (String, Result<RunSummary, String>, Option<&'static str>);

/// A directory of its own for a test's files.
fn scratch(seed: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "stgflow-replay-{}-{seed:x}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Writes `streams` into `dir` as `s0.td`, `s1.td`…
fn write_streams(dir: &Path, streams: &[String]) -> Vec<PathBuf> {
    streams
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let path = dir.join(format!("s{i}.td"));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
            path
        })
        .collect()
}

/// A generated program's language: TD over TD streams, every predicate printed; or plain
/// LARS over Laser's streams, its own output printed.
#[derive(Clone, Copy, Debug)]
enum Language {
    Td,
    Lars,
}

/// Runs `engine` over the program's facts and the files `paths` (read line by line, or in
/// parts where the engine replays by parts), printing in `mode`.
fn outcome(
    language: Language,
    program_text: &str,
    paths: &[PathBuf],
    (timeline, print_from): (Timeline, Option<u64>),
    engine: &Engine,
    mode: &Mode,
) -> Outcome {
    let compiled = match language {
        Language::Td => compile_str("generated.tdl", program_text),
        Language::Lars => stgflow_lars::compile_str("generated.lars", program_text),
    };
    assert!(
        !compiled.has_errors(),
        "{}",
        compiled.render_diagnostics(false)
    );
    let mut program = compiled.program.clone();
    let format: Arc<dyn stgflow_io::stream::Format> = match language {
        Language::Td => {
            program.outputs = Some((0..program.predicates.len()).collect());
            Arc::new(Td)
        }
        Language::Lars => Arc::new(LaserStream),
    };
    let analysis = compiled.analysis.as_ref().expect("an analysis");
    let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(&program))];
    for (i, path) in paths.iter().enumerate() {
        let like = FactReader::new(
            io::empty(),
            format!("s{i}"),
            format.clone(),
            Schema::new(&program),
        )
        .with_tolerance(Tolerance::default());
        let open = || std::fs::File::open(path).unwrap_or_else(|e| panic!("{e}"));
        let whole = Box::new(like.with_input(BufReader::new(open())));
        let split =
            SplitFile::new(open(), like.with_input(io::empty())).unwrap_or_else(|e| panic!("{e}"));
        sources.push(Box::new(Splittable::new(whole, split)));
    }
    let mut sink = Sink::new(Vec::new(), mode.clone(), &program);
    sink.print_from = print_from;
    let result = stgflow_engine::run(
        &program,
        analysis,
        &mut sources,
        timeline,
        engine,
        &mut sink,
    );
    let text = String::from_utf8(sink.into_inner()).unwrap_or_default();
    let spread = result
        .as_ref()
        .ok()
        .and_then(|o| o.spread.as_ref())
        .map(|s| s.how);
    let result = result.map(|o| o.summary).map_err(|e| e.to_string());
    (text, result, spread)
}

/// The generated cases.
#[derive(Clone, Copy, Debug)]
enum Cases {
    /// TD programs ([`case`]).
    Td,
    /// TD programs around inertia ([`persistence_case`]).
    Persistence,
    /// Plain LARS programs ([`lars::case_for`], nothing over the whole stream).
    Lars,
    /// Laser's micro-benchmarks' shape ([`lars::window_case`]).
    Windows,
}

/// Checks the case of `seed` of `cases` by parts against the reference; how often each
/// path was taken goes to `taken`.
fn check(seed: u64, cases: Cases, taken: &mut Taken) -> Result<(), String> {
    let mut rng = Rng::new(seed ^ 0x5eed);
    // Now and then a TD case's time points pulled apart: up to 10⁵ time points between
    // one and the next (10² where a rule reads the time, whose facts change at each).
    let mut sparse = false;
    let (language, program, streams, timeline) = match cases {
        Cases::Td | Cases::Persistence => {
            let case = match cases {
                Cases::Td => case(seed),
                _ => persistence_case(seed),
            };
            sparse = rng.chance(25);
            if sparse {
                let stream = stretched(
                    &case.stream,
                    &mut rng,
                    sparse_gap(&case.program, &case.stream),
                );
                let streams = streams_of(&stream, &mut rng);
                (Language::Td, case.program, streams, Timeline::default())
            } else {
                let streams = streams_of(&case.stream, &mut rng);
                (Language::Td, case.program, streams, timeline(&mut rng))
            }
        }
        Cases::Lars | Cases::Windows => {
            let case = match cases {
                Cases::Lars => lars::case_for(seed, false),
                _ => lars::window_case(seed),
            };
            (
                Language::Lars,
                case.program,
                vec![case.stream],
                Timeline::default(),
            )
        }
    };
    let dir = scratch(seed);
    let paths = write_streams(&dir, &streams);
    let laser = Mode::Snapshot(Arc::new(stgflow_lars::output::LaserOutput));
    let modes = match language {
        // Points over a long stretch print what holds at each of its time points.
        Language::Td if sparse => vec![Mode::Changes, Mode::Intervals],
        Language::Td => vec![Mode::Points, Mode::Changes, Mode::Intervals],
        Language::Lars => vec![Mode::Points, Mode::Changes, Mode::Intervals, laser],
    };
    // Now and then printed from a time point on, all evaluated (`--print-from`).
    let print_from = rng.chance(20).then(|| rng.below(10) as u64);
    for mode in modes {
        let run = |engine: &Engine| {
            let when = (timeline, print_from);
            outcome(language, &program, &paths, when, engine, &mode)
        };
        let (text, result, _) = run(&Engine::Reference);
        for workers in 1..=4 {
            let split = *rng.pick(&[Split::ByTime, Split::ByKey, Split::Auto]);
            let part_bytes = 1 + rng.below(120) as u64;
            let engine = Engine::dataflow_by_parts(workers, split, part_bytes);
            let (actual, actual_result, spread) = run(&engine);
            if actual_result.is_ok() {
                taken.count(spread);
            }
            if (&actual, &actual_result) != (&text, &result) {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(format!(
                    "seed {seed} of {cases:?}, {mode:?}, {workers} worker(s), {split:?} ({spread:?}), parts of {part_bytes} bytes, {timeline:?}, print from {print_from:?}\n\
                     --- program\n{program}--- streams\n{}\n--- by parts\n{actual}{actual_result:?}\n\
                     --- the reference\n{text}{result:?}",
                    streams.join("--- next file\n"),
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// How many runs each path took.
#[derive(Debug, Default)]
struct Taken {
    by_time: usize,
    by_key: usize,
    threaded: usize,
}

impl Taken {
    fn count(&mut self, spread: Option<&str>) {
        match spread {
            Some("by time") => self.by_time += 1,
            Some("by key") => self.by_key += 1,
            _ => self.threaded += 1,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn td_by_parts_on_1_2_3_4_workers_equals_the_reference_line_by_line(seed in any::<u64>()) {
        check(seed, Cases::Td, &mut Taken::default()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn persistence_by_parts_on_1_2_3_4_workers_equals_the_reference(seed in any::<u64>()) {
        check(seed, Cases::Persistence, &mut Taken::default()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lars_by_parts_on_1_2_3_4_workers_equals_the_reference(seed in any::<u64>()) {
        check(seed, Cases::Lars, &mut Taken::default()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn laser_windows_by_parts_on_1_2_3_4_workers_equal_the_reference(seed in any::<u64>()) {
        check(seed, Cases::Windows, &mut Taken::default()).map_err(TestCaseError::fail)?;
    }
}

/// The generated cases reach both ways of splitting, often.
#[test]
fn the_generated_cases_take_both_ways_of_splitting() {
    let mut taken = Taken::default();
    for seed in 0..24u64 {
        let cases = [Cases::Td, Cases::Persistence, Cases::Lars, Cases::Windows];
        check(seed, cases[seed as usize % 4], &mut taken).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(taken.by_time > 30 && taken.by_key > 15, "{taken:?}");
}
