//! Partitioned replay: a batch of files evaluated by parts, each part on one worker with a
//! dataflow of its own, so that no thread reads, diffs, merges or formats every fact or
//! every line.
//!
//! * **Parts by time** ([`by_time`]). Where what holds at t depends on at most a bounded
//!   number of time points before it ([`crate::plan::partition`]), the timeline is cut
//!   into parts of about equal input ([`parts`]); a worker reads its part's lines from
//!   the files itself, with the lines of the time points before them that it needs to
//!   warm up, evaluates them alone and formats its own time points' output.
//! * **The writer** (the calling thread) only appends the parts' bytes in order
//!   ([`outbox`]); a part stopped by an input error ends the output where the sequential
//!   reader would, a file found out of time order is read from that part on as one part.
//! * **Parts by key** ([`by_key`]). Where the program recurses through time but every
//!   fact's dependencies share a key (an entity), each worker is a shard holding the
//!   facts of its keys over the whole timeline; the shards read the same parts of the
//!   files in step, each keeping its own keys' facts, and merge a part's output as soon
//!   as every shard has got past it (one merger at a time per part, no fixed thread).
//! * Each worker is a thread of its own running a timely worker of its own ([`local`]):
//!   no progress is agreed between workers, and a worker that has no part left ends.
//! * With `--output-dir`, each part (by time) or shard (by key) writes its own part
//!   files; in a cluster ([`cluster`]) every process reads and evaluates its own parts by
//!   time.
//!
//! The threaded engine (`super::run`'s other path) runs what this cannot: live streams,
//! files that cannot be split (pipes, stdin, compressed files, `--lateness`, RTEC's
//! records, whose lines do not read alone), programs with neither a horizon nor a key
//! (`check --dump plan` says which), tuple windows, and in a cluster what cannot be cut
//! by time.

mod by_key;
mod by_time;
mod cluster;
mod local;
mod outbox;
mod parts;
mod slots;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use stgflow_io::drive::{FactSource, RunError, RunSummary, Splitting, Timeline};
use stgflow_io::sink::{Files, Sink, Template};
use stgflow_lang::ir::{PredId, Program};

use super::Split;
use crate::plan::Plan;
use crate::plan::partition::{Partitioning, Shard};
use crate::render::AtSink;
use outbox::{Outbox, PartDone, Piece};
use parts::Cut;

/// What every part's dataflow is made of.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) program: Program,
    pub(super) plan: Plan,
    pub(super) outputs: Vec<PredId>,
    pub(super) point_preds: Vec<bool>,
    pub(super) at_sink: AtSink,
    pub(super) any_order: bool,
    pub(super) rank: Vec<usize>,
    pub(super) stats: bool,
    pub(super) batch_points: u64,
    pub(super) batch_updates: usize,
    /// The cluster the parts are spread over (one process: its threads).
    pub(super) cluster: super::Cluster,
    /// Each worker's CPU time, recorded as it ends (`--stats`).
    pub(super) threads: super::ThreadTimes,
    /// Part files to write instead of the output (`--output-dir`).
    pub(super) files: Option<Files>,
}

/// Parts of a worker's share of the input, at most, beyond one per worker: more parts
/// even out parts that take longer than others.
const PARTS_PER_WORKER: usize = 4;

/// The fewest input bytes a part is cut to.
const PART_BYTES: u64 = 1 << 20;

/// The most input bytes a part is cut to, where its warm-up allows: a part's output
/// waits in memory until the parts before it are written, and its long symbols until it
/// has formatted past them (by key: until it is written), so parts of bounded size keep
/// memory flat however long the input.
const MOST_PART_BYTES: u64 = 8 << 20;

/// A part's warm-up is at most this share of its time points.
const WARM_SHARE: u64 = 16;

/// The fewest input bytes a part is cut to where shards evaluate the parts in step (each
/// part costs every shard a round of its dataflow).
const SHARD_PART_BYTES: u64 = 1 << 20;

/// Parts per worker at most, where shards evaluate them in step.
const SHARD_PARTS_PER_WORKER: usize = 16;

/// How parts are evaluated.
#[derive(Debug)]
enum Mode {
    /// Each part alone, by one worker ([`by_time`]).
    ByTime,
    /// Every part by every shard, in order ([`by_key`]), facts held by these keys.
    ByKey(Vec<Shard>, Template),
}

/// How to replay `sources` by parts (see the module docs).
pub(super) struct Replay {
    cut: Cut,
    workers: usize,
    mode: Mode,
}

impl Replay {
    /// How `sources` are replayed by parts on `workers` workers into `sink`, where they
    /// can be: by time where a part's warm-up is a small share of it at one part per
    /// worker, else by key where the program has one, else by time with fewer parts.
    /// `split` says which ways are allowed, `part_bytes` how large the parts are where
    /// not the engine's choice.
    pub(super) fn plan<W: Write>(
        program: &Program,
        partitioning: &Partitioning,
        sources: &[Box<dyn FactSource + '_>],
        timeline: Timeline,
        (workers, split, part_bytes): (usize, Split, Option<u64>),
        processes: usize,
        sink: &Sink<W>,
    ) -> Option<Replay> {
        if !program.input_sequences.is_empty() {
            return None;
        }
        let mut files = Vec::new();
        for source in sources {
            match source.splitting()? {
                Splitting::File(file) => files.push(file),
                Splitting::Program => {}
            }
        }
        if files.is_empty() {
            return None;
        }
        let bounds = parts::bounds(&files, program, timeline).ok()??;
        let bytes: u64 = files.iter().map(|f| f.weight()).sum();
        let span = bounds.span();
        // In a cluster, every process's workers take parts but process 0's relay.
        let local_workers = workers;
        let workers: usize = cluster::evaluators(processes, workers).iter().sum();
        // By time: a few parts per worker, each worker as many, while a part's warm-up
        // stays a small share of it; one per worker at least, input allowing.
        let chosen = |bytes_per_part: u64| (bytes / bytes_per_part).clamp(1, 1 << 12) as usize;
        let by_time = (partitioning.horizon)
            .filter(|_| sink.writes_by_parts() && matches!(split, Split::Auto | Split::ByTime))
            .map(|horizon| {
                let warm = horizon + 1;
                let by_warm = (span / warm.saturating_mul(WARM_SHARE)).max(1) as usize;
                let per_worker = (by_warm / workers).clamp(1, PARTS_PER_WORKER);
                let parts = (workers * per_worker).min(by_warm.max(workers));
                let bounded = (bytes.div_ceil(MOST_PART_BYTES) as usize).min(by_warm);
                let parts = match part_bytes {
                    Some(bytes) => chosen(bytes),
                    None if workers <= 1 => 1,
                    None => parts.min(chosen(PART_BYTES)).max(bounded).min(1 << 12),
                };
                (warm, parts, by_warm >= workers || part_bytes.is_some())
            });
        // Shards of a cluster would deal facts over the network: only parts by time there.
        // One shard alone would only add the shards' formatting and merging to the
        // threaded path, whose reading thread also runs beside the worker.
        let by_key = (partitioning.keys.as_ref().ok())
            .filter(|_| {
                matches!(split, Split::Auto | Split::ByKey)
                    && processes <= 1
                    && (workers > 1 || split == Split::ByKey)
            })
            .zip(sink.template(true));
        let (mode, wanted, warm) = match (by_time, by_key) {
            (Some((warm, parts, true)), _) | (Some((warm, parts, _)), None) => {
                (Mode::ByTime, parts, warm)
            }
            (_, Some((keys, template))) => {
                // Parts small enough to stream through, however few the workers.
                let parts = match part_bytes {
                    Some(bytes) => chosen(bytes),
                    None => (chosen(SHARD_PART_BYTES).min(workers * SHARD_PARTS_PER_WORKER))
                        .max(bytes.div_ceil(MOST_PART_BYTES) as usize)
                        .min(1 << 12),
                };
                (Mode::ByKey(keys.clone(), template), parts, 0)
            }
            (None, None) => return None,
        };
        let mut cut = parts::cut(files, bounds, wanted, warm).ok()?;
        parts::count_lines(&mut cut, local_workers).ok()?;
        Some(Replay {
            cut,
            workers: local_workers,
            mode,
        })
    }

    /// How the run spreads over the workers, in words.
    pub(super) fn spread(&self) -> super::Spread {
        let parts = self.cut.len();
        match &self.mode {
            Mode::ByTime => super::Spread {
                how: "by time",
                detail: format!(
                    "by time: {parts} part(s) of the timeline on {} worker(s), each part alone",
                    self.workers.min(parts)
                ),
                threads: Vec::new(),
            },
            Mode::ByKey(..) => super::Spread {
                how: "by key",
                detail: format!(
                    "by key: {} shard(s), each running the whole timeline over its keys, {parts} part(s) read ahead",
                    self.workers
                ),
                threads: Vec::new(),
            },
        }
    }

    /// Runs the parts on the workers and writes their output to `sink` in order; the
    /// summary, and with `--stats` per component its time scheduled and its output
    /// updates, summed over the parts.
    pub(super) fn run<W: Write>(
        self,
        shared: &Arc<Shared>,
        sink: &mut Sink<W>,
    ) -> Result<Written, RunError> {
        let Replay { cut, workers, mode } = self;
        if let Mode::ByKey(keys, template) = mode {
            let dealer = by_key::Dealer::by_ranges(keys, workers, &shared.program, &cut);
            // `changes` are formatted by each shard, in groups to copy in order where shards
            // take ranges of keys, else merged and then formatted: the sink keeps nothing
            // per fact. Other output is formatted by each shard with its own sink, which
            // keeps what its facts hold, each line keyed by its order.
            // With `--output-dir`, each shard writes its own part files.
            let plain = sink.part(None);
            let files = match &shared.files {
                Some(files) => (0..dealer.shards())
                    .map(|shard| {
                        let sink = files.sink(std::io::sink(), &shared.program, shard, |_| true);
                        sink.map(|sink| std::sync::Mutex::new(Some(sink)))
                    })
                    .collect::<std::io::Result<Vec<_>>>()?,
                None => Vec::new(),
            };
            let format = match (
                sink.writes_changes() && sink.print_from.is_none(),
                dealer.in_ranges(),
            ) {
                _ if shared.files.is_some() => by_key::Format::Files(&files),
                (true, true) => by_key::Format::Groups(&plain),
                (true, false) => by_key::Format::Merged(&plain),
                (false, _) => by_key::Format::Keyed(&template),
            };
            return by_keys(shared, &cut, &dealer, &format, sink);
        }
        let (outbox, pieces) = Outbox::new(shared.cluster.processes_here());
        let cluster = (shared.cluster.processes > 1).then(|| shared.cluster.clone());
        let (processes, process) = cluster
            .as_ref()
            .map_or((1, 0), |c| (c.processes, c.process));
        let work = Arc::new(cluster::Work {
            shared: shared.clone(),
            sinks: Arc::new(PartSinks::of(sink, shared)),
            outbox: Arc::new(outbox),
            parts: cluster::owners(cut.len(), &cluster::evaluators(processes, workers))
                .into_iter()
                .enumerate()
                .filter(|&(_, owner)| owner == process)
                .map(|(k, _)| k)
                .collect(),
            cut: Arc::new(cut),
            next: AtomicUsize::new(0),
            process,
            workers,
        });
        // The first part whose part files are not the run's, where it stopped early: they
        // are removed once the workers have ended.
        let dropped = std::cell::Cell::new(None);
        let drop_from = |n: usize| dropped.set(Some(n));
        let floor = |k: usize| work.cut.evaluated_from(k);
        let outcome = match cluster {
            None => std::thread::scope(|scope| {
                for i in 0..workers.clamp(1, work.parts.len().max(1)) {
                    let work = &work;
                    let spawned = std::thread::Builder::new()
                        .name(format!("stgflow:work-{i}"))
                        .spawn_scoped(scope, move || {
                            work.parts(&*work.outbox);
                            if work.shared.stats {
                                work.shared.threads.record();
                            }
                        });
                    if let Err(e) = spawned {
                        work.outbox.unwanted_from(0);
                        return Err(RunError::Cluster(format!("cannot start a worker: {e}")));
                    }
                }
                let written = write(
                    work.cut.len(),
                    (&work.outbox, &pieces),
                    sink,
                    false,
                    (&drop_from, &floor),
                );
                // Workers still on parts after one that stopped the run end at their next
                // batch.
                work.outbox.unwanted_from(0);
                written
            }),
            Some(cluster) => {
                let on_workers = work.clone();
                let guards = cluster.execute(move |worker| on_workers.work(worker))?;
                if process != 0 {
                    super::join(guards)?;
                    return Ok(Written::default());
                }
                let written = write(
                    work.cut.len(),
                    (&work.outbox, &pieces),
                    sink,
                    true,
                    (&drop_from, &floor),
                );
                work.outbox.unwanted_from(0);
                let joined = super::join(guards);
                joined.and(written)
            }
        };
        if let (Some(from), Some(files)) = (dropped.get(), &shared.files) {
            files.remove_parts(&shared.program, from)?;
        }
        let (mut written, rest) = outcome?;
        let (cut, sinks) = (&work.cut, &work.sinks);
        if let Some(k) = rest {
            // A file is out of time order at part k or before it: everything from there on
            // is read as one part, as the sequential reader reads it.
            let rest = cut.rest_from(k);
            let (outbox, pieces) = Outbox::new(1);
            let (sink_of_rest, emit_from) = sinks.part(&rest, 0)?;
            let done = by_time::evaluate(shared, &rest, 0, sink_of_rest, emit_from, &outbox);
            outbox.done(0, done);
            let (more, _) = write(1, (&outbox, &pieces), sink, false, (&|_| {}, &|_| u64::MAX))?;
            written.add(more);
        }
        sink.finish()?;
        Ok(written)
    }
}

/// Runs `cut` on the shards of `dealer`, writing to `sink` in order.
fn by_keys<W: Write>(
    shared: &Shared,
    cut: &Cut,
    dealer: &by_key::Dealer,
    format: &by_key::Format<'_>,
    sink: &mut Sink<W>,
) -> Result<Written, RunError> {
    let (outbox, pieces) = Outbox::new(1);
    let (written, stats) = std::thread::scope(|scope| {
        let outbox = &outbox;
        let shards = scope.spawn(move || {
            let stats = by_key::run(shared, cut, dealer, format, outbox);
            // The writer is told every part is done, or wanted no more.
            outbox.unwanted_from(0);
            stats
        });
        let starts = |k: usize| cut.times(k).0;
        let written = write(
            cut.len(),
            (outbox, &pieces),
            sink,
            false,
            (&|_| {}, &starts),
        );
        outbox.unwanted_from(0);
        let stats = shards
            .join()
            .unwrap_or_else(|_| Err(RunError::Cluster("a worker failed".to_owned())));
        (written, stats)
    });
    let (mut written, _) = written?;
    let (times, records) = stats?;
    written.times = times;
    written.records = records;
    sink.finish()?;
    Ok(written)
}

/// How each part's sink is made from the run's.
struct PartSinks {
    template: Sink<Vec<u8>>,
    print_from: Option<u64>,
    changes: bool,
    /// Each part writes its own part files instead (`--output-dir`).
    files: Option<(Files, Arc<Shared>)>,
}

impl PartSinks {
    fn of<W: Write>(sink: &Sink<W>, shared: &Arc<Shared>) -> PartSinks {
        PartSinks {
            template: sink.part(None),
            print_from: sink.print_from,
            changes: sink.writes_changes(),
            files: (shared.files.clone()).map(|files| (files, shared.clone())),
        }
    }

    /// The sink of part `k` of `cut` and the first time point whose changes it takes:
    /// `changes` start at the part's own first time point (or, at `--print-from`, with
    /// what holds there, which the warm-up's changes tell it); a sink that keeps what
    /// holds takes the warm-up's changes and prints from the part's own first time point.
    /// Where the part writes files, its sink writes them, part `k` of each predicate.
    fn part(&self, cut: &Cut, k: usize) -> std::io::Result<(Sink<Vec<u8>>, u64)> {
        let (start, end) = cut.times(k);
        let start = start.max(cut.first);
        let evaluated_from = cut.evaluated_from(k);
        let (print_from, emit_from) = match self.print_from {
            Some(p) if self.changes && p >= start && end.is_none_or(|e| p < e) => {
                (Some(p), evaluated_from)
            }
            Some(p) if self.changes && p >= start => (None, u64::MAX),
            _ if self.changes => (None, start),
            p => (Some(p.map_or(start, |p| p.max(start))), evaluated_from),
        };
        let mut sink = match &self.files {
            Some((files, shared)) => {
                let number = cut.first_part + k;
                files.sink(Vec::new(), &shared.program, number, |_| true)?
            }
            None => self.template.part(None),
        };
        sink.print_from = print_from;
        Ok((sink, emit_from))
    }
}

/// What the written parts add up to.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// Their summary, but for what the files skipped.
    pub(super) summary: RunSummary,
    /// What each file skipped, over the parts.
    pub(super) skipped: Vec<stgflow_io::stream::SkipCounts>,
    /// With `--stats`: per component, its time scheduled, then the time outside them.
    pub(super) times: Vec<std::time::Duration>,
    /// With `--stats`: per component, its output updates.
    pub(super) records: Vec<u64>,
}

impl Written {
    fn add(&mut self, more: Written) {
        let Written {
            summary,
            skipped,
            times,
            records,
        } = more;
        merge_summary(&mut self.summary, summary);
        self.skipped
            .resize_with(self.skipped.len().max(skipped.len()), Default::default);
        for (total, file) in self.skipped.iter_mut().zip(skipped) {
            total.merge(file);
        }
        add_up(&mut self.times, &times);
        add_up(&mut self.records, &records);
    }

    /// The summary, with what the files skipped added up in their order.
    pub(super) fn summary(&self) -> RunSummary {
        let mut summary = self.summary.clone();
        for file in &self.skipped {
            summary.skipped.merge(file.clone());
        }
        summary
    }
}

fn add_up<T: Copy + Default + std::ops::AddAssign>(total: &mut Vec<T>, more: &[T]) {
    if total.len() < more.len() {
        total.resize(more.len(), T::default());
    }
    for (t, m) in total.iter_mut().zip(more) {
        *t += *m;
    }
}

fn merge_summary(total: &mut RunSummary, part: RunSummary) {
    if total.first.is_none() {
        total.first = part.first;
    }
    if part.last.is_some() {
        total.last = part.last;
    }
    total.time_points += part.time_points;
    total.input_facts += part.input_facts;
    total.dropped += part.dropped;
}

/// Writes the parts' output to `sink` in order as it comes; the summary of the parts
/// written, and the part from which the rest must be read as one, if a file is out of
/// order there. Where the run stops before its end, `drop` is told the first part whose
/// output (part files the workers wrote themselves) is not the run's. `floor` is the
/// first time point part `k` reads (its warm-up's): the run's clock for long symbols
/// ([`Sink::clock_to`]) goes no further than the next part's, which may already hold its
/// facts.
fn write<W: Write>(
    parts: usize,
    (outbox, pieces): (&Outbox, &crossbeam_channel::Receiver<Piece>),
    sink: &mut Sink<W>,
    cluster: bool,
    (drop, floor): (&dyn Fn(usize), &dyn Fn(usize) -> u64),
) -> Result<(Written, Option<usize>), RunError> {
    let mut waiting: Vec<std::collections::VecDeque<Piece>> =
        (0..parts).map(|_| Default::default()).collect();
    let mut written = Written::default();
    let mut writing = 0;
    let mut flushed_on_stop = false;
    while writing < parts {
        while let Some(piece) = waiting[writing].pop_front() {
            match piece {
                Piece::Bytes { bytes, through, .. } => {
                    sink.write_formatted(through, &bytes)?;
                    let next = (writing + 1 < parts).then(|| floor(writing + 1));
                    // `through` itself may not be whole yet (a shard's merge stops at it).
                    sink.clock_to(through.min(next.unwrap_or(u64::MAX)));
                    outbox.written(bytes.len());
                    outbox.recycle(bytes);
                }
                Piece::Done { done, .. } => {
                    let PartDone {
                        mut summary,
                        fed,
                        skipped,
                        error,
                        misplaced,
                        times,
                        records,
                    } = *done;
                    if misplaced {
                        outbox.unwanted_from(writing);
                        drop(writing);
                        return Ok((written, Some(writing)));
                    }
                    summary.input_facts = fed.input_facts;
                    summary.dropped = fed.dropped;
                    written.add(Written {
                        summary,
                        skipped,
                        times,
                        records,
                    });
                    if let Some(error) = error {
                        outbox.unwanted_from(writing + 1);
                        drop(writing + 1);
                        let _ = sink.flush();
                        return Err(error);
                    }
                    writing += 1;
                    if writing < parts {
                        sink.clock_to(floor(writing));
                    }
                    outbox.writing(writing);
                    if writing == parts {
                        return Ok((written, None));
                    }
                }
            }
        }
        match pieces.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(piece) => {
                let part = match &piece {
                    Piece::Bytes { part, .. } | Piece::Done { part, .. } => *part,
                };
                waiting[part].push_back(piece);
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                if let Some(stop) = stgflow_io::interrupt::requested() {
                    if !flushed_on_stop {
                        flushed_on_stop = true;
                        let _ = sink.flush();
                    }
                    // This process's parts stop at their next time point; the other
                    // processes' are not told.
                    if cluster {
                        outbox.unwanted_from(0);
                        drop(writing + 1);
                        return Err(stop.into());
                    }
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(RunError::Cluster("the workers stopped".to_owned()));
            }
        }
    }
    Ok((written, None))
}
