//! Runs a program on timely workers: `-w` threads, `-n/-p/-h` processes.
//!
//! * The calling thread reads and merges the input ([`stgflow_io::drive::feed`]) and sends
//!   each time point's facts in batches to the workers of its process, each batch to the
//!   next worker in turn, over bounded channels, so only a bounded number of time points
//!   is in flight. A batch holds one vector per predicate ([`Batch`]); the
//!   worker hands each to that predicate's input handle as one container.
//! * Each time point's facts become *changes* against the previous time point, so that a
//!   fact that keeps holding costs nothing downstream: on the calling thread
//!   ([`crate::operators::points::PointDiff`]), or, with [`Options::diff_on_workers`], on
//!   every worker, each predicate's facts exchanged by hash first
//!   ([`crate::operators::points::changes`]). The calling thread is the default: a fact
//!   that holds over an interval then crosses to the workers twice, not once per time
//!   point. The operators' exchanges shard from there. The facts of predicates that ♢
//!   windows alone read ([`crate::render::fed_as_points`]) are diffed nowhere: they go
//!   out as points, and the windows retract them.
//! * Every serving worker advances its inputs to the end of each batch (the workers a batch
//!   does not go to only advance) and steps until the output probe passes it; every output
//!   update before that time is then final. Each worker keeps the output it computed, puts
//!   it in output order ([`in_output_order`]) and sends it to the calling thread, which
//!   merges the workers' runs and writes them to the [`Sink`] time point by time point. A
//!   worker that is the slower of the two leaves the sort to the calling thread
//!   ([`OutputSort`]).
//! * With [`Options::format_on_workers`], the workers of process 0 also format their
//!   output into lines, each with a key, and the calling thread only merges the workers'
//!   lines on their keys and writes them ([`stgflow_io::sink::Sink::keyed`]).
//! * With [`Options::read_on_workers`], batch replay reads the files on the workers
//!   instead: each parses its share of every file's blocks and introduces the facts
//!   through its own input handles, diffed on the workers, while the calling thread only
//!   keeps the blocks in order ([`reading`]).
//! * A live stream (`-`) sends each time point as soon as it is complete and waits for its
//!   output, so each time point is printed before the next line is read.
//! * In a cluster only process 0 reads the input and writes the output: its workers serve
//!   the calling thread, and every other process's workers close their inputs at once and
//!   step (parking when idle) until the dataflow is done, their output exchanged to the
//!   worker of the same local index on process 0.

mod cluster;
mod feeder;
mod greeting;
mod messages;
mod order;
mod profile;
mod reading;
mod replay;
mod worker;

use std::io::Write;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, bounded, unbounded};
use stgflow_io::drive::{ComponentStats, FactSource, RunError, RunSummary, Timeline, feed};
use stgflow_io::sink::{Files, Sink};
use stgflow_lang::ir::Program;
use stgflow_lang::stratify::Analysis;

pub use cluster::Cluster;
use feeder::Feeder;
pub use greeting::{ClusterKey, Fingerprint};
use messages::{FromWorker, IN_FLIGHT, ToWorker};
use worker::{Setup, work};

use crate::plan::plan;

/// How to run the dataflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    pub cluster: Cluster,
    /// Lower ♢/□ window definitions to delay operators and persistence (EC inertia) to
    /// its own operator; without, every rule runs as written (`--no-lowering`).
    pub lower: bool,
    /// Send each time point on its own and print its output before reading on.
    pub live: bool,
    /// Most time points per batch in replay.
    pub batch_points: u64,
    /// Most input changes per batch in replay. 2^14 rather than 2^16: a batch's vectors
    /// then stay small enough for the allocator to reuse them, not fresh pages each time.
    /// A plan of few components takes smaller batches still ([`batch_updates`]).
    pub batch_updates: usize,
    /// Diff the input on the workers, each its share after an exchange by hash
    /// ([`crate::operators::points`]), instead of on the calling thread.
    pub diff_on_workers: bool,
    /// Read the input on the workers in batch replay: each parses its share of every
    /// file's blocks and introduces the facts itself ([`reading`]); the input is then
    /// diffed on the workers too.
    pub read_on_workers: bool,
    /// Format the output on the workers of process 0, each its share of the facts, into
    /// lines with keys that order them ([`stgflow_io::sink::Sink::keyed`]); the calling
    /// thread merges the workers' lines on the keys and writes them. Where the sink can
    /// be copied to the workers (points, changes or intervals to stdout); else the
    /// calling thread formats, as without.
    pub format_on_workers: bool,
    /// Which thread puts a batch's output in order ([`OutputSort`]).
    pub output_sort: OutputSort,
    /// Profile the workers of process 0: the time each component of the plan was
    /// scheduled, in [`RunSummary::components`] (`--stats`).
    pub stats: bool,
    /// Write one file per printed predicate, from the workers of process 0 (each its share
    /// of the predicates, in parallel), instead of the output to the sink.
    pub files: Option<Files>,
    /// Which runs replay files by parts, each worker evaluating parts of the timeline
    /// alone ([`replay`]).
    pub split: Split,
    /// Bytes of input per part, where the engine's choice is not wanted (tests cut small
    /// inputs into many parts).
    pub part_bytes: Option<u64>,
}

/// Which runs replay files by parts ([`replay`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Split {
    /// Where the program and the input allow, the engine choosing how.
    #[default]
    Auto,
    /// By time only, or by key only (the tests of each path); where that cannot be, the
    /// threaded path.
    ByTime,
    ByKey,
    /// Never: every run takes the threaded path.
    Off,
}

/// Which thread puts a worker's output of a batch in output order ([`in_output_order`])
/// where the calling thread formats it. The calling thread merges the workers' sorted
/// runs either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputSort {
    /// The worker, unless it is the slower of the two: with every batch the calling
    /// thread may send ahead already waiting for it, the calling thread sorts (as on
    /// inertia, whose worker has the most to do).
    #[default]
    Balanced,
    /// Always the calling thread (for tests of that path).
    CallingThread,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cluster: Cluster::default(),
            lower: true,
            live: false,
            batch_points: 4096,
            batch_updates: 1 << 14,
            diff_on_workers: false,
            read_on_workers: false,
            format_on_workers: false,
            output_sort: OutputSort::Balanced,
            stats: false,
            files: None,
            split: Split::Auto,
            part_bytes: None,
        }
    }
}

/// The fewest input changes a batch may be cut to per worker of the process, and how many
/// more each component of the plan adds (see [`batch_updates`]).
const BATCH_PER_WORKER: usize = 1 << 12;
const BATCH_PER_COMPONENT: usize = 1 << 10;

/// The most input changes per batch for a plan of `components` components on `workers`
/// workers, at most `cap`. A batch costs a round of progress tracking through every
/// operator of the dataflow on every worker, which larger plans and more workers amortise
/// over larger batches; a plan of a few components on one worker runs faster on batches
/// of 2^12 changes than of 2^14, whose vectors fit the caches less well and touch more
/// fresh pages.
fn batch_updates(cap: usize, components: usize, workers: usize) -> usize {
    let wanted = (components.saturating_mul(BATCH_PER_COMPONENT))
        .max(workers.saturating_mul(BATCH_PER_WORKER));
    wanted.min(cap)
}

/// How a run was spread over the workers, as the run report says it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    /// `by time`, `by key` or `threaded` (the workers exchanging facts as they go).
    pub how: &'static str,
    /// In words, with why where it was not split.
    pub detail: String,
    /// With `--stats`: the CPU time of each thread of this process that took part (its
    /// name), as each ended.
    pub threads: Vec<(String, std::time::Duration)>,
}

/// The CPU time of the threads of a run, each recorded by the thread itself as it ends
/// (the system forgets a thread once it has ended).
#[derive(Clone, Debug, Default)]
pub(crate) struct ThreadTimes(Arc<std::sync::Mutex<Vec<(String, std::time::Duration)>>>);

impl ThreadTimes {
    /// Records the calling thread's CPU time so far, under its name.
    pub(crate) fn record(&self) {
        use nix::sys::resource::{UsageWho, getrusage};
        let Ok(usage) = getrusage(UsageWho::RUSAGE_THREAD) else {
            return;
        };
        let micros = |t: nix::sys::time::TimeVal| {
            u64::try_from(t.tv_sec()).unwrap_or(0) * 1_000_000
                + u64::try_from(t.tv_usec()).unwrap_or(0)
        };
        let cpu = micros(usage.user_time()) + micros(usage.system_time());
        let name = std::thread::current()
            .name()
            .unwrap_or("stgflow")
            .to_owned();
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push((name, std::time::Duration::from_micros(cpu)));
    }

    /// The threads recorded, busiest first.
    pub(crate) fn take(&self) -> Vec<(String, std::time::Duration)> {
        let mut threads = std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        threads.sort_by_key(|thread| std::cmp::Reverse(thread.1));
        threads
    }
}

/// Runs `program` over `sources` on timely workers, writing what holds to `sink`; what it
/// did, and how it spread over the workers.
pub fn run<W: Write>(
    program: &Program,
    analysis: &Analysis,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    options: &Options,
    sink: &mut Sink<W>,
) -> Result<(RunSummary, Spread), RunError> {
    // Every process decides alike from the options: the dataflow's shape depends on it.
    let diff_here = !options.diff_on_workers && !options.read_on_workers;
    // Reading on the workers takes the sources that come in blocks (files in a format that
    // reads in blocks); the others are read on the calling thread with them. Every
    // process takes them alike (the same arguments): in a cluster each reads its own.
    let raws: Option<Vec<_>> =
        (options.read_on_workers && !options.live && program.input_sequences.is_empty())
            .then(|| {
                sources
                    .iter_mut()
                    .map(|s| s.raw_blocks())
                    .collect::<Vec<_>>()
            })
            .filter(|raws| raws.iter().any(Option::is_some));
    let processes = options.cluster.processes.max(1);
    let local_workers = options.cluster.workers.max(1);
    let remote_reading = processes > 1 && raws.is_some();
    let formatter = (options.format_on_workers && options.files.is_none())
        .then(|| sink.template(options.cluster.workers.max(1) > 1))
        .flatten();
    let any_order = options.files.is_none() && formatter.is_none() && sink.in_any_order();
    let plan = plan(program, analysis, options.lower);
    let outputs = program.output_predicates();
    let point_preds = crate::render::fed_as_points(program, &plan, &outputs);
    let counts = options.files.is_none() && formatter.is_none() && sink.counts_holding();
    let at_sink = crate::render::AtSink::new(program, &plan, &outputs, &point_preds, counts);
    sink.retract_points(at_sink.retracted.clone());
    let components = plan.components.len();
    if let Some(replay) = replayable(program, sources, timeline, options, sink) {
        let shared = replay::Shared {
            program: program.clone(),
            plan,
            outputs,
            point_preds,
            at_sink,
            any_order,
            rank: stgflow_io::sink::name_ranks(program),
            stats: options.stats,
            batch_points: options.batch_points,
            batch_updates: batch_updates(options.batch_updates, components, 1),
            cluster: options.cluster.clone(),
            threads: ThreadTimes::default(),
            files: options.files.clone(),
        };
        let shared = Arc::new(shared);
        let labels = component_labels(program, &shared.plan);
        let mut spread = replay.spread();
        let written = replay.run(&shared, sink)?;
        let mut summary = written.summary();
        if options.stats {
            summary.components = component_stats(labels, &written.times, &written.records);
            shared.threads.record();
            spread.threads = shared.threads.take();
        }
        return Ok((summary, spread));
    }
    let setup = Arc::new(Setup {
        program: program.clone(),
        plan,
        outputs,
        points: !diff_here,
        point_preds: point_preds.clone(),
        files: options.files.clone(),
        stats: options.stats,
        output_sort: options.output_sort,
        formatter,
        any_order,
        at_sink,
        remote_reading,
        threads: ThreadTimes::default(),
    });
    let labels = component_labels(program, &setup.plan);
    let (to_workers, from_main): (Vec<Sender<ToWorker>>, Vec<Receiver<ToWorker>>) =
        (0..options.cluster.workers.max(1))
            .map(|_| bounded::<ToWorker>(IN_FLIGHT))
            .unzip();
    let from_main = Arc::new(from_main);
    let (to_main, from_workers) = unbounded::<FromWorker>();
    let wakers: Arc<worker::Wakers> = Arc::new(
        (0..options.cluster.workers.max(1))
            .map(|_| std::sync::OnceLock::new())
            .collect(),
    );
    let woken = wakers.clone();
    let threads = setup.threads.clone();
    let guards = options
        .cluster
        .execute(move |worker| work(worker, &setup, &from_main, &to_main, &woken))?;
    if options.cluster.process != 0 {
        if let (true, Some(raws)) = (remote_reading, raws) {
            let first = options.cluster.process * local_workers;
            let cluster = (processes * local_workers, first);
            reading::serve_blocks(raws, &to_workers, &from_workers, &wakers, cluster);
        }
        drop(to_workers);
        return join(guards).map(|()| (RunSummary::default(), threaded(options)));
    }
    let batches = Options {
        batch_updates: batch_updates(options.batch_updates, components, local_workers),
        ..options.clone()
    };
    let mut feeder = Feeder::new(
        to_workers,
        from_workers,
        sink,
        &batches,
        program.predicates.len() + 1,
        stgflow_io::sink::name_ranks(program),
        diff_here,
    )
    .in_any_order(any_order)
    .reaching(messages::reach(program))
    .with_points(point_preds)
    .waking(wakers.clone())
    .remote(remote_reading.then_some(processes * local_workers));
    let result = match raws {
        Some(raws) => reading::read_on_workers(sources, raws, timeline, &mut feeder)
            .map(|read| (read.fed, Some(read.skipped))),
        None => feed(program, sources, timeline, &mut feeder).map(|fed| (fed, None)),
    }
    .and_then(|read| feeder.finish(true).map(|()| read));
    let finished = match result {
        Ok((mut fed, skipped)) => {
            fed.input_facts += feeder.fed_on_workers.input_facts;
            fed.dropped += feeder.fed_on_workers.dropped;
            let mut summary = std::mem::take(&mut feeder.summary);
            summary.add_input(fed, sources);
            if let Some(skipped) = skipped {
                summary.skipped = skipped;
            }
            if options.stats {
                summary.components =
                    component_stats(labels, &feeder.component_times, &feeder.component_records);
            }
            feeder.sink.finish()?;
            Ok(summary)
        }
        Err(error) => {
            // Keep what was produced, then let the workers finish: where every time point
            // before is whole, with the end of the output (the intervals still open).
            let ends = error.ends_the_output();
            let _ = feeder.finish(ends);
            let _ = match ends {
                true => feeder.sink.finish(),
                false => feeder.sink.flush(),
            };
            Err(error)
        }
    };
    drop(feeder);
    join(guards)?;
    finished.map(|summary| {
        let mut spread = threaded(options);
        if options.stats {
            threads.record();
            spread.threads = threads.take();
        }
        (summary, spread)
    })
}

/// The threaded path's spread, and why the run is not replayed by parts.
fn threaded(options: &Options) -> Spread {
    let why = if options.live {
        "a live stream"
    } else if options.cluster.processes > 1 {
        "a cluster of processes"
    } else if options.split == Split::Off {
        "replay by parts is off"
    } else if options.read_on_workers || options.diff_on_workers || options.format_on_workers {
        "a threaded option was given"
    } else {
        "the program or the input cannot be split (see `check --dump plan`)"
    };
    Spread {
        how: "threaded",
        detail: format!(
            "threaded over {} worker(s), the workers exchanging facts ({why})",
            options.cluster.workers.max(1)
        ),
        threads: Vec::new(),
    }
}

/// Where `sources` can be replayed by parts ([`replay`]): a batch of files on one
/// process, written to a sink whose parts can write their own output.
fn replayable(
    program: &Program,
    sources: &[Box<dyn FactSource + '_>],
    timeline: Timeline,
    options: &Options,
    sink: &Sink<impl Write>,
) -> Option<replay::Replay> {
    let threaded = options.read_on_workers || options.diff_on_workers || options.format_on_workers;
    if options.split == Split::Off || threaded || options.live {
        return None;
    }
    let partitioning = crate::plan::partition::Partitioning::of(program);
    replay::Replay::plan(
        program,
        &partitioning,
        sources,
        timeline,
        (
            options.cluster.workers.max(1),
            options.split,
            options.part_bytes,
        ),
        options.cluster.processes.max(1),
        sink,
    )
}

/// Each component's line of `check --dump plan`, for the run report.
fn component_labels(program: &Program, plan: &crate::plan::Plan) -> Vec<String> {
    plan.dump_noting(program, |_| None)
        .lines()
        .skip(1)
        .map(str::to_owned)
        .collect()
}

/// The run report's components: each with its time scheduled and output updates, then
/// the time outside them.
fn component_stats(
    labels: Vec<String>,
    times: &[std::time::Duration],
    records: &[u64],
) -> Vec<ComponentStats> {
    let outside = "outside the components (inputs, input diff, delays, captures)";
    let labels = labels.into_iter().chain([outside.to_owned()]);
    let records = records.iter().map(|&n| Some(n));
    labels
        .zip(times.iter().copied())
        .zip(records.chain(std::iter::repeat(None)))
        .map(|((name, time), records)| ComponentStats {
            name,
            time,
            records,
        })
        .collect()
}

/// Waits for the workers. A lost cluster peer makes timely's network threads, then the
/// workers and the network guard panic; that becomes the [`stgflow_io::interrupt`] reason's
/// message instead of a panic of the calling thread.
fn join(guards: timely::communication::WorkerGuards<()>) -> Result<(), RunError> {
    let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| guards.join()));
    let failure = match joined {
        Ok(results) => match results.into_iter().find_map(Result::err) {
            None => return Ok(()),
            Some(error) => format!("a worker failed: {error}"),
        },
        Err(_) => "the cluster's network failed".to_owned(),
    };
    Err(match stgflow_io::interrupt::requested() {
        Some(stgflow_io::interrupt::Stop::Cluster(message)) => RunError::Cluster(message),
        _ => RunError::Cluster(failure),
    })
}
