//! # stgflow-engine — run a compiled program on any engine
//!
//! stgflow is a pipeline of crates, each a layer:
//!
//! * `stgflow-lang` — the language: values, diagnostics, the TD syntax, the rule model,
//!   validation, stratification, and [`stgflow_lang::compile`], the tail every front end
//!   ends with.
//! * `stgflow-io` — facts in and out: stream formats (a front end registers its own),
//!   the timeline driver, sinks, interrupts.
//! * `stgflow-eval` — evaluators that step through time points themselves: the reference
//!   evaluator (the oracle), Streaming Trigger Graphs (Algorithm 4), explanations.
//! * `stgflow-dataflow` — the parallel engine on timely/differential dataflow.
//! * this crate — the one place that chooses between them: [`Engine`] and [`run`], which
//!   the command line, the tests and the benchmarks call.
//!
//! Front ends (LARS, the Event Calculus) depend on the language and io crates only: they
//! produce a [`Compiled`] program and the formats of their users' streams, and never see
//! an evaluator.
//!
//! ```
//! use stgflow_engine::{Engine, run};
//! use stgflow_io::drive::{FactSource, ProgramFacts, Timeline};
//! use stgflow_io::sink::{Mode, Sink};
//!
//! // Example 1 of the STG paper, with its stream written in the program.
//! let compiled = stgflow_lang::compile_str(
//!     "safety.tdl",
//!     "safe(X, T) :- repair(X, T-1).\n\
//!      safe(X, T) :- safe(X, T-1), not warning(X, T-1).\n\
//!      repair(d1, 1). warning(d1, 3). tick(5).\n\
//!      #output safe.",
//! );
//! let analysis = compiled.analysis.as_ref().expect("the program is valid");
//! let program = &compiled.program;
//! let mut sources: Vec<Box<dyn FactSource>> = vec![Box::new(ProgramFacts::new(program))];
//! let mut sink = Sink::new(Vec::new(), Mode::Intervals, program);
//! run(program, analysis, &mut sources, Timeline::default(), &Engine::Reference, &mut sink)
//!     .expect("the run succeeds");
//! // Safe from 2 (repaired at 1) until the warning at 3 ends it at 4.
//! assert_eq!(String::from_utf8(sink.into_inner()).unwrap(), "safe(d1) [2,4)\n");
//! ```

use std::io::Write;

pub use stgflow_dataflow::runtime::{
    Cluster, ClusterKey, Fingerprint, Options as DataflowOptions, OutputSort, Split,
};
use stgflow_eval::reference::Reference;
pub use stgflow_eval::stg::Options as StgOptions;
use stgflow_eval::stg::{self, Stg};
use stgflow_io::drive::{FactSource, RunError, RunSummary, Timeline, drive};
use stgflow_io::sink::Sink;
use stgflow_lang::ir::Program;
use stgflow_lang::stratify::Analysis;

pub use stgflow_lang::{Compiled, compile_str};

/// Which evaluator runs a program.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per run: boxing the dataflow's options would save nothing"
)]
pub enum Engine {
    /// The single-threaded reference evaluator: per time point, per stratum, semi-naive.
    /// The oracle every other engine is tested against.
    Reference,
    /// The parallel engine on timely workers: threads, processes, lowering.
    Dataflow(DataflowOptions),
    /// Streaming Trigger Graphs, the paper's Algorithm 4 as written: for studying the
    /// algorithm on small streams.
    Stg(StgOptions),
}

impl Engine {
    /// The dataflow engine on `workers` threads of this process, windows and persistence
    /// lowered to their own operators or every rule run as written.
    pub fn dataflow(workers: usize, lower: bool) -> Engine {
        Engine::Dataflow(local(workers, lower))
    }

    /// [`Engine::dataflow`] with the input read on the workers: each parses its share of
    /// the blocks of every source that comes in blocks, and the input is diffed there.
    pub fn dataflow_reading_on_workers(workers: usize, lower: bool) -> Engine {
        Engine::Dataflow(DataflowOptions {
            read_on_workers: true,
            ..local(workers, lower)
        })
    }

    /// [`Engine::dataflow`] with the output formatted on the workers, each its share, in
    /// batches of at most `batch_points` time points.
    pub fn dataflow_formatting_on_workers(workers: usize, batch_points: u64) -> Engine {
        Engine::Dataflow(DataflowOptions {
            format_on_workers: true,
            batch_points,
            ..local(workers, true)
        })
    }

    /// [`Engine::dataflow`], lowered, in batches of at most `batch_points` time points.
    pub fn dataflow_batches(workers: usize, batch_points: u64) -> Engine {
        Engine::Dataflow(DataflowOptions {
            batch_points,
            ..local(workers, true)
        })
    }

    /// [`Engine::dataflow`] with each worker's output put in order on the calling thread
    /// (as where the worker is the slower one, [`OutputSort`]), in
    /// batches of at most `batch_points` time points.
    pub fn dataflow_sorting_on_calling_thread(workers: usize, batch_points: u64) -> Engine {
        Engine::Dataflow(DataflowOptions {
            output_sort: OutputSort::CallingThread,
            batch_points,
            ..local(workers, true)
        })
    }

    /// [`Engine::dataflow`] replaying files by parts of about `part_bytes` bytes, `split`
    /// as given (by time, by key, or as the engine chooses).
    pub fn dataflow_by_parts(workers: usize, split: Split, part_bytes: u64) -> Engine {
        Engine::Dataflow(DataflowOptions {
            split,
            part_bytes: Some(part_bytes),
            ..local(workers, true)
        })
    }

    /// [`Engine::dataflow`] with the input diffed on the workers, each its share, instead
    /// of on the calling thread.
    pub fn dataflow_diffing_on_workers(workers: usize, lower: bool) -> Engine {
        Engine::Dataflow(DataflowOptions {
            diff_on_workers: true,
            ..local(workers, lower)
        })
    }
}

/// The dataflow engine's options for `workers` threads of this process, lowered or not.
fn local(workers: usize, lower: bool) -> DataflowOptions {
    DataflowOptions {
        cluster: Cluster {
            workers,
            ..Cluster::default()
        },
        lower,
        ..DataflowOptions::default()
    }
}

/// The dataflow engine's plan for `program`, as text (`stgflow check --dump plan`): which
/// components are lowered to windows and persistence, which run on the time-stepping
/// operator; `lower` as [`DataflowOptions::lower`].
pub fn dataflow_plan(program: &Program, analysis: &Analysis, lower: bool) -> String {
    use stgflow_dataflow::plan::Component;
    let planned = stgflow_dataflow::plan::plan(program, analysis, lower);
    planned.dump_noting(program, |component| match component {
        Component::Persist(p) if stgflow_dataflow::operators::persist::is_exclusive(program, p) => {
            Some("exclusive values".to_owned())
        }
        _ => None,
    })
}

/// How the dataflow engine can split `program`'s evaluation over workers with nothing
/// exchanged between them, by time and by key, as text (the end of `check --dump plan`).
pub fn dataflow_partitioning(program: &Program) -> String {
    stgflow_dataflow::plan::partition::Partitioning::of(program).describe(program)
}

/// How many components of each kind the dataflow engine's plan has (`check -v`).
pub fn dataflow_plan_kinds(
    program: &Program,
    analysis: &Analysis,
    lower: bool,
) -> Vec<(&'static str, usize)> {
    stgflow_dataflow::plan::plan(program, analysis, lower).kinds()
}

/// What a run did besides its output.
#[derive(Debug, Default)]
pub struct Outcome {
    pub summary: RunSummary,
    /// How the dataflow engine spread the run over its workers.
    pub spread: Option<stgflow_dataflow::runtime::Spread>,
    /// What the STG engine's graph did (with every node built, when its options record
    /// them).
    pub stg: Option<StgReport>,
}

/// The STG engine's counters and graph after a run.
#[derive(Debug)]
pub struct StgReport {
    pub stats: stg::Stats,
    pub graph: Option<stg::Graph>,
}

/// Runs `program` (with its `analysis`) over the merged `sources` on `engine`, writing
/// what holds to `sink`. On an error, the output of every time point completed before it
/// has been written.
pub fn run<W: Write>(
    program: &Program,
    analysis: &Analysis,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    engine: &Engine,
    sink: &mut Sink<W>,
) -> Result<Outcome, RunError> {
    match engine {
        Engine::Reference => {
            let mut reference = Reference::new(program, analysis);
            let summary = drive(program, sources, timeline, &mut reference, sink)?;
            Ok(Outcome {
                summary,
                ..Outcome::default()
            })
        }
        Engine::Dataflow(options) => {
            let (summary, spread) = stgflow_dataflow::runtime::run(
                program, analysis, sources, timeline, options, sink,
            )?;
            Ok(Outcome {
                summary,
                spread: Some(spread),
                stg: None,
            })
        }
        Engine::Stg(options) => {
            let mut graph = Stg::new(program, analysis, options);
            let summary = drive(program, sources, timeline, &mut graph, sink)?;
            let report = StgReport {
                stats: graph.stats(),
                graph: graph.graph(),
            };
            Ok(Outcome {
                summary,
                spread: None,
                stg: Some(report),
            })
        }
    }
}
