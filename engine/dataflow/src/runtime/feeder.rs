//! The calling thread's side of a run: each time point's input facts become changes
//! against the previous time point (or go as they are, when the workers diff them:
//! [`crate::operators::points`]) and go in batches to the workers of this process, a batch
//! to each in turn; each worker's output comes back in output order, and the workers' runs
//! are merged and go to the sink time point by time point.

use std::collections::VecDeque;
use std::io::Write;

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender};
use stgflow_io::drive::{Fed, RunError, RunSummary, TimePoints};
use stgflow_io::sink::Sink;
use stgflow_io::stream::blocks::BlockSummary;
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;

use super::messages::{Change, Control, FromWorker, SPARE_BUFFERS, ToWorker, Update, change};
use super::order::{OrderKey, in_output_order, in_time_order, merge_by_time, merge_runs};
use crate::operators::points::PointDiff;

/// How often the calling thread, waiting for a worker, looks for a stop request.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// A batch of input facts, one vector per input channel: a predicate's facts under its id,
/// the unit row's ([`crate::operators::UNIT_TAG`]) last. The worker it goes to hands each
/// vector to its predicate's input handle as it is.
pub(super) struct Batch {
    parts: Vec<Vec<Change>>,
    len: usize,
}

impl Batch {
    pub(super) fn new(channels: usize) -> Batch {
        Batch {
            parts: vec![Vec::new(); channels],
            len: 0,
        }
    }

    pub(super) fn push(&mut self, tag: u32, row: Row, time: u64, diff: isize) {
        let last = self.parts.len() - 1;
        self.parts[(tag as usize).min(last)].push((row, time, diff));
        self.len += 1;
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Time point `t`'s input as changes against the previous one (`diff`): what held
    /// before and holds again costs nothing, what is new is +1, what is left of the
    /// previous time point is −1; facts read as points (`point_preds`: by ♢ windows
    /// alone) go in as they are, +1 each.
    pub(super) fn push_diffed(
        &mut self,
        diff: &mut PointDiff<(PredId, Row)>,
        point_preds: &[bool],
        t: u64,
        mut input: Vec<(PredId, Row)>,
    ) {
        if !point_preds.is_empty() {
            input.retain_mut(|(pred, row)| {
                let point = point_preds.get(*pred).copied().unwrap_or(false);
                if point {
                    self.push(*pred as u32, std::mem::take(row), t, 1);
                }
                !point
            });
        }
        diff.next(input.into_iter(), |(pred, row)| {
            self.push(*pred as u32, Row::from_slice(row), t, 1);
        });
        diff.left(|(pred, row)| self.push(pred as u32, row, t, -1));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The changes so far; each channel starts again at its size in this batch, not
    /// empty: growing by doubling costs a copy and fresh pages each time.
    pub(super) fn take(&mut self) -> Vec<Vec<Change>> {
        self.len = 0;
        self.parts
            .iter_mut()
            .map(|part| {
                let size = part.len();
                std::mem::replace(part, Vec::with_capacity(size))
            })
            .collect()
    }
}

/// The calling thread's side: input facts out, output back in.
pub(super) struct Feeder<'a, W: Write> {
    /// One channel to each worker of this process, by local index.
    to_workers: Vec<Sender<ToWorker>>,
    from_workers: Receiver<FromWorker>,
    pub(super) sink: &'a mut Sink<W>,
    live: bool,
    batch_points: u64,
    batch_updates: usize,
    /// The worker the next batch's facts go to.
    next_worker: usize,
    /// The diff of each time point against the previous one, when the calling thread
    /// makes it; `None` when the workers do, each its share ([`crate::operators::points`]).
    diff: Option<PointDiff<(PredId, Row)>>,
    /// The predicates whose facts are sent as points, never diffed
    /// ([`crate::render::fed_as_points`]; empty where none is).
    point_preds: Vec<bool>,
    batch: Batch,
    batch_start: Option<u64>,
    /// Every time point below this has been fed.
    advance_to: u64,
    /// The next time point to write; `None` before the first.
    next_emit: Option<u64>,
    /// The first time point of the timeline.
    first: Option<u64>,
    /// Whether the unit row ([`crate::operators::UNIT_TAG`]) has been fed, at the first
    /// time point.
    unit_fed: bool,
    /// Per worker, its output of each batch not merged yet (with the batch's end): a batch
    /// is merged once every worker has sent its share.
    runs: Vec<VecDeque<(u64, Vec<Update>)>>,
    /// Output merged but not written yet, in output order (in time order only where the
    /// sink takes it in any order, `any_order`).
    pending: Vec<Update>,
    /// Time points of a batch of a quiet stretch ([`Feeder::quiet`]).
    stretch: u64,
    /// The last quiet stretch: output in it, past `reach` of its start, makes its batches
    /// short again.
    quiet: std::ops::Range<u64>,
    /// The most time points back any rule reads ([`super::messages::reach`]).
    reach: u64,
    /// Whether output in the last quiet stretch came back since this was last reset.
    output_seen: bool,
    /// The sink takes a time point's changes in any order, not consolidated
    /// ([`Sink::in_any_order`]): the workers' output is only put in time order.
    any_order: bool,
    /// With the output formatted on the workers: per worker, its lines of each batch not
    /// merged yet (with the batch's end).
    line_runs: Vec<VecDeque<(u64, stgflow_io::sink::KeyedLines)>>,
    /// Each predicate's rank by name, for merging the workers' runs.
    rank: Vec<usize>,
    /// Scratch space for sorting a worker's output that came unsorted.
    order: Vec<OrderKey>,
    /// Emptied output buffers passed back to the workers, so that their memory stays
    /// allocated (fresh pages cost a page fault each).
    spare_outputs: Vec<Vec<Update>>,
    /// Output buffers written out whole, their updates not dropped: passed back to the
    /// workers as they are, each worker dropping them before it fills the buffer again,
    /// so that the rows a worker allocated (`@`'s stamped rows of three values, say) are
    /// freed on the thread that allocated them: freed here, across threads, each would go
    /// through mimalloc's slower path for frees of another thread's memory.
    written_outputs: Vec<Vec<Update>>,
    /// Workers that have said they are done.
    done: usize,
    pub(super) summary: RunSummary,
    /// The input facts the workers introduced and dropped, reading on the workers.
    pub(super) fed_on_workers: Fed,
    /// With `--stats`: each component's time scheduled, summed over the workers of this
    /// process, then the time outside them.
    pub(super) component_times: Vec<std::time::Duration>,
    /// With `--stats`: each component's output updates, summed over the workers.
    pub(super) component_records: Vec<u64>,
    /// What wakes each worker (see [`super::worker::Wakers`]).
    wakers: std::sync::Arc<super::worker::Wakers>,
    /// Block summaries from the workers not taken yet (see [`Feeder::next_parsed`]), each
    /// with whether to read the block again here.
    parsed: VecDeque<(usize, u64, BlockSummary, bool)>,
    /// Whether a stop request has flushed the sink (see [`Feeder::flush_on_stop`]).
    flushed_on_stop: bool,
    /// Whether the input has ended without an error (see [`Feeder::finish`]).
    ended: bool,
    /// Where every process reads its own blocks of the input: the workers of the whole
    /// cluster, those of the other processes told through worker 0 ([`Control`]).
    remote: Option<usize>,
}

impl<'a, W: Write> Feeder<'a, W> {
    /// A feeder sending to the workers of this process on `to_workers`, with `channels`
    /// input channels (one per predicate, then the unit row's), writing the output to
    /// `sink` in the order of `rank` (each predicate's rank by name).
    pub(super) fn new(
        to_workers: Vec<Sender<ToWorker>>,
        from_workers: Receiver<FromWorker>,
        sink: &'a mut Sink<W>,
        options: &super::Options,
        channels: usize,
        rank: Vec<usize>,
        diff_here: bool,
    ) -> Feeder<'a, W> {
        let workers = to_workers.len();
        Feeder {
            to_workers,
            from_workers,
            sink,
            live: options.live,
            batch_points: options.batch_points.max(1),
            // A fact given as a point becomes about two changes (its +1, later its −1): a
            // batch of points holds as many time points as one of changes when half as big.
            batch_updates: if diff_here {
                options.batch_updates.max(1)
            } else {
                (options.batch_updates / 2).max(1)
            },
            next_worker: 0,
            diff: diff_here.then(PointDiff::default),
            point_preds: Vec::new(),
            batch: Batch::new(channels),
            batch_start: None,
            advance_to: 0,
            next_emit: None,
            first: None,
            unit_fed: false,
            runs: (0..workers).map(|_| VecDeque::new()).collect(),
            pending: Vec::new(),
            stretch: options.batch_points.max(1),
            quiet: 0..0,
            reach: 0,
            output_seen: false,
            any_order: false,
            line_runs: (0..workers).map(|_| VecDeque::new()).collect(),
            rank,
            order: Vec::new(),
            spare_outputs: Vec::new(),
            written_outputs: Vec::new(),
            done: 0,
            summary: RunSummary::default(),
            fed_on_workers: Fed::default(),
            component_times: Vec::new(),
            component_records: Vec::new(),
            parsed: VecDeque::new(),
            wakers: std::sync::Arc::default(),
            flushed_on_stop: false,
            ended: false,
            remote: None,
        }
    }

    /// Feeds the unit row at the first time point of the timeline, `t`.
    fn feed_unit(&mut self, t: u64) {
        if !self.unit_fed {
            self.unit_fed = true;
            self.batch
                .push(crate::operators::UNIT_TAG, Row::new(), t, 1);
        }
    }

    fn fed_through(&mut self, t: u64) -> Result<(), RunError> {
        let start = *self.next_emit.get_or_insert(self.batch_start.unwrap_or(t));
        self.first.get_or_insert(start);
        self.advance_to = t + 1;
        let points = self.advance_to - self.batch_start.unwrap_or(t);
        if self.live || points >= self.batch_points || self.batch.len() >= self.batch_updates {
            self.send_batch()?;
        }
        Ok(())
    }

    /// Sends the batch to the next worker in turn, and to every other worker the time it
    /// advances to.
    fn send_batch(&mut self) -> Result<(), RunError> {
        let mut parts = Some(self.batch.take());
        self.batch_start = None;
        let workers = self.to_workers.len();
        let target = self.next_worker;
        self.next_worker = (target + 1) % workers.max(1);
        for worker in 0..workers {
            let message = ToWorker::Feed {
                parts: if worker == target {
                    parts.take().unwrap_or_default()
                } else {
                    Vec::new()
                },
                advance_to: self.advance_to,
                first: self.first.unwrap_or(0),
                recycled: (self.written_outputs.pop())
                    .or_else(|| self.spare_outputs.pop())
                    .unwrap_or_default(),
            };
            let channel = self.to_workers[worker].clone();
            if self.send(&channel, message).is_err() {
                return Err(RunError::Cluster(format!("worker {worker} stopped")));
            }
            if self.remote.is_some() {
                self.wake(worker);
            }
        }
        self.relay_advance(false)?;
        if self.live {
            self.wait_for(self.advance_to)?;
        } else {
            while let Ok(message) = self.from_workers.try_recv() {
                self.receive(message)?;
            }
        }
        Ok(())
    }

    /// Sends `message` to a worker, waiting while its channel is full (see
    /// [`Feeder::flush_on_stop`]).
    fn send(&mut self, channel: &Sender<ToWorker>, message: ToWorker) -> Result<(), ()> {
        let mut message = message;
        loop {
            match channel.send_timeout(message, STOP_POLL) {
                Ok(()) => return Ok(()),
                Err(SendTimeoutError::Timeout(back)) => {
                    message = back;
                    self.flush_on_stop();
                }
                Err(SendTimeoutError::Disconnected(_)) => return Err(()),
            }
        }
    }

    /// The next message from a worker, waiting for it (see [`Feeder::flush_on_stop`]).
    fn next_message(&mut self) -> Result<FromWorker, ()> {
        loop {
            match self.from_workers.recv_timeout(STOP_POLL) {
                Ok(message) => return Ok(message),
                Err(RecvTimeoutError::Timeout) => self.flush_on_stop(),
                Err(RecvTimeoutError::Disconnected) => return Err(()),
            }
        }
    }

    /// While the calling thread waits for a worker — which may be in one long step — a
    /// stop request ([`stgflow_io::interrupt`]) flushes what is written so far at once: the
    /// run still stops cleanly when the worker comes back, and if the process is ended
    /// before that (a second signal, the command's grace period), the output of the
    /// completed time points written so far is not lost in a buffer.
    fn flush_on_stop(&mut self) {
        if !self.flushed_on_stop && stgflow_io::interrupt::requested().is_some() {
            self.flushed_on_stop = true;
            let _ = self.sink.flush();
        }
    }

    /// Receives output until everything before `upto` is written.
    fn wait_for(&mut self, upto: u64) -> Result<(), RunError> {
        while self.next_emit.is_some_and(|next| next < upto) {
            match self.next_message() {
                Ok(FromWorker::Done { worker, .. }) => {
                    return Err(RunError::Cluster(format!("worker {worker} stopped")));
                }
                Err(_) => return Err(RunError::Cluster("the workers stopped".to_owned())),
                Ok(message) => self.receive(message)?,
            }
        }
        Ok(())
    }

    fn receive(&mut self, message: FromWorker) -> Result<(), RunError> {
        let (worker, upto, updates) = match message {
            FromWorker::Output {
                worker,
                upto,
                updates,
                sorted: true,
            } => (worker, upto, updates),
            FromWorker::Output {
                worker,
                upto,
                mut updates,
                sorted: false,
            } => {
                let mut sorted = self.spare_outputs.pop().unwrap_or_default();
                let first = self.first.unwrap_or(0);
                if self.any_order {
                    in_time_order(&mut updates, first, &mut sorted);
                } else {
                    in_output_order(
                        &mut updates,
                        &self.rank,
                        first,
                        &mut self.order,
                        &mut sorted,
                    );
                }
                self.keep_output_buffer(updates);
                (worker, upto, sorted)
            }
            FromWorker::Lines {
                worker,
                upto,
                lines,
            } => return self.receive_lines(worker, upto, lines),
            FromWorker::Done {
                fed,
                times,
                records,
                ..
            } => {
                self.done += 1;
                if self.component_records.len() < records.len() {
                    self.component_records.resize(records.len(), 0);
                }
                for (total, n) in self.component_records.iter_mut().zip(records) {
                    *total += n;
                }
                if self.component_times.len() < times.len() {
                    self.component_times
                        .resize(times.len(), std::time::Duration::ZERO);
                }
                for (total, time) in self.component_times.iter_mut().zip(times) {
                    *total += time;
                }
                self.fed_on_workers.input_facts += fed.input_facts;
                self.fed_on_workers.dropped += fed.dropped;
                return Ok(());
            }
            FromWorker::Parsed {
                source,
                seq,
                summary,
                again,
            } => {
                self.parsed.push_back((source, seq, summary, again));
                return Ok(());
            }
            FromWorker::Failed { error } => {
                return Err(RunError::Output(std::io::Error::other(error)));
            }
            FromWorker::ReadFailed { error } => return Err(RunError::Cluster(error)),
            FromWorker::NeedBlock { .. } => return Ok(()),
        };
        // Each worker sends its output of each batch once, in output order; a batch's
        // output is merged once every worker has sent its share of it.
        self.saw(updates.iter().map(|u| u.1));
        self.runs[worker].push_back((upto, updates));
        while self.runs.iter().all(|run| !run.is_empty()) {
            let mut shares: Vec<Vec<Update>> = Vec::with_capacity(self.runs.len());
            let mut upto = 0;
            for run in &mut self.runs {
                if let Some((end, share)) = run.pop_front() {
                    upto = end;
                    shares.push(share);
                }
            }
            if shares.len() == 1 && self.pending.is_empty() {
                std::mem::swap(&mut self.pending, &mut shares[0]);
            } else if self.any_order {
                merge_by_time(&mut shares, &mut self.pending);
            } else {
                merge_runs(&mut shares, &self.rank, &mut self.pending);
            }
            for share in shares {
                self.keep_output_buffer(share);
            }
            self.write_upto(upto)?;
        }
        Ok(())
    }

    /// Notes output at `times`: in the last quiet stretch past what its input reaches,
    /// the program changes on its own there, and its batches are made short again.
    fn saw(&mut self, mut times: impl Iterator<Item = u64>) {
        let own = self.quiet.start.saturating_add(self.reach)..self.quiet.end;
        if times.any(|t| own.contains(&t)) {
            self.output_seen = true;
            self.stretch = self.batch_points;
        }
    }

    /// Keeps an emptied output buffer to pass back to a worker (a few per worker).
    fn keep_output_buffer(&mut self, buffer: Vec<Update>) {
        let most = self.most_spare();
        crate::operators::keep_spare(&mut self.spare_outputs, buffer, most);
    }

    /// How many output buffers are kept to pass back, emptied or written out.
    fn most_spare(&self) -> usize {
        SPARE_BUFFERS * self.runs.len()
    }

    /// A worker's lines of a batch ([`FromWorker::Lines`]): once every worker has sent
    /// its lines of the batch, they are merged on their keys and written, time point by
    /// time point; the end of the output's lines ([`u64::MAX`]) come last.
    fn receive_lines(
        &mut self,
        worker: usize,
        upto: u64,
        lines: stgflow_io::sink::KeyedLines,
    ) -> Result<(), RunError> {
        self.saw(lines.ends.iter().map(|&(t, _, _)| t));
        self.line_runs[worker].push_back((upto, lines));
        while self.line_runs.iter().all(|run| !run.is_empty()) {
            let mut shares = Vec::with_capacity(self.line_runs.len());
            let mut upto = 0;
            for run in &mut self.line_runs {
                if let Some((end, share)) = run.pop_front() {
                    upto = end;
                    shares.push(share);
                }
            }
            let (mut text, mut points) = (Vec::new(), Vec::new());
            stgflow_io::sink::merge_keyed(&shares, &mut text, &mut points);
            let Some(mut next) = self.next_emit else {
                continue;
            };
            let end = upto.min(self.advance_to);
            let (mut from, mut point) = (0, 0);
            while next < end {
                let to = match points.get(point) {
                    Some(&(t, to)) if t == next => {
                        point += 1;
                        to
                    }
                    _ => {
                        // Up to the next time point with lines, nothing is written.
                        let quiet = points.get(point).map_or(end, |&(t, _)| t.min(end));
                        self.sink.write_formatted(quiet - 1, &[])?;
                        self.summary.time_points(next, quiet);
                        next = quiet;
                        continue;
                    }
                };
                self.sink.write_formatted(next, &text[from..to])?;
                self.summary.time_point(next);
                from = to;
                next += 1;
            }
            if let (Some(&(u64::MAX, to)), true) = (points.get(point), self.ended) {
                self.sink.write_formatted(u64::MAX, &text[from..to])?;
            }
            self.next_emit = Some(next);
        }
        Ok(())
    }

    /// Writes the pending output of every time point before `upto` (and fed).
    fn write_upto(&mut self, upto: u64) -> Result<(), RunError> {
        let Some(mut next) = self.next_emit else {
            return Ok(());
        };
        let end = upto.min(self.advance_to);
        if next >= end {
            return Ok(());
        }
        let summary = &mut self.summary;
        let at = self
            .sink
            .emit_through((next, end), &self.pending, change, |from, to| {
                summary.time_points(from, to);
            })?;
        next = end;
        if at > 0 && at == self.pending.len() {
            // All of it written: the buffer goes back to a worker with its updates
            // (see `written_outputs`), an emptied one taking its place.
            let spare = self.spare_outputs.pop().unwrap_or_default();
            let written = std::mem::replace(&mut self.pending, spare);
            if self.written_outputs.len() < self.most_spare() {
                self.written_outputs.push(written);
            } else {
                self.keep_output_buffer(written);
            }
        } else {
            self.pending.drain(..at);
        }
        self.next_emit = Some(next);
        Ok(())
    }

    /// The feeder of a program whose rules read at most `reach` time points back.
    pub(super) fn reaching(mut self, reach: u64) -> Self {
        self.reach = reach;
        self
    }

    /// The feeder with the workers' output put in time order only, where `any_order`
    /// (see [`Feeder::any_order`]).
    pub(super) fn in_any_order(mut self, any_order: bool) -> Self {
        self.any_order = any_order;
        self
    }

    /// The feeder sending the facts of `point_preds` as points, never diffed (kept empty
    /// where there are none).
    pub(super) fn with_points(mut self, point_preds: Vec<bool>) -> Self {
        if point_preds.contains(&true) {
            self.point_preds = point_preds;
        }
        self
    }

    /// The feeder waking the workers with `wakers` after a block to parse or commit.
    pub(super) fn waking(self, wakers: std::sync::Arc<super::worker::Wakers>) -> Self {
        Feeder { wakers, ..self }
    }

    /// The workers that read: this process's, or the whole cluster's where every
    /// process reads its own blocks ([`Feeder::remote`]).
    pub(super) fn workers(&self) -> usize {
        self.remote.unwrap_or(self.to_workers.len())
    }

    /// The feeder of process 0 where every process reads its own blocks: `workers` in the
    /// cluster, those past this process's told through its worker 0.
    pub(super) fn remote(self, workers: Option<usize>) -> Self {
        Feeder {
            remote: workers,
            ..self
        }
    }

    /// Whether every process reads its own blocks ([`Feeder::remote`]).
    pub(super) fn remote_reading(&self) -> bool {
        self.remote.is_some()
    }

    /// Wakes the worker of local index `worker`, if it has not ended.
    fn wake(&self, worker: usize) {
        super::worker::wake(&self.wakers, worker);
    }

    /// Sends `message` to the worker of index `worker`: a worker of this process, or one
    /// of another (then a parse names its block by its checksum, for that process cuts
    /// its own copy of the file, and facts read again here go in on worker 0 instead).
    pub(super) fn send_to(&mut self, worker: usize, message: ToWorker) -> Result<(), RunError> {
        if worker >= self.to_workers.len() {
            return match message {
                ToWorker::Parse {
                    source, seq, block, ..
                } => self.relay(
                    worker,
                    Control::Parse {
                        source,
                        seq,
                        checksum: block.checksum(),
                    },
                ),
                ToWorker::Commit {
                    source,
                    seq,
                    facts,
                    bounds,
                } => {
                    let keep = facts.is_none();
                    self.relay(
                        worker,
                        Control::Commit {
                            source,
                            seq,
                            keep,
                            bounds,
                        },
                    )?;
                    match facts {
                        Some(facts) if !facts.is_empty() => self.send_to(
                            0,
                            ToWorker::Commit {
                                source,
                                seq,
                                facts: Some(facts),
                                bounds,
                            },
                        ),
                        _ => Ok(()),
                    }
                }
                _ => Ok(()),
            };
        }
        let channel = self.to_workers[worker].clone();
        self.send(&channel, message)
            .map_err(|()| RunError::Cluster(format!("worker {worker} stopped")))?;
        self.wake(worker);
        Ok(())
    }

    /// Sends `control` to the worker of index `target` of another process, through
    /// worker 0's control dataflow.
    fn relay(&mut self, target: usize, control: Control) -> Result<(), RunError> {
        let channel = self.to_workers[0].clone();
        self.send(&channel, ToWorker::Relay { target, control })
            .map_err(|()| RunError::Cluster("worker 0 stopped".to_owned()))?;
        self.wake(0);
        Ok(())
    }

    /// Tells the workers of the other processes that read their own blocks to advance to
    /// where this process's do (and, `finish`, to close their input).
    fn relay_advance(&mut self, finish: bool) -> Result<(), RunError> {
        let Some(all) = self.remote else {
            return Ok(());
        };
        for target in self.to_workers.len()..all {
            let to = self.advance_to;
            self.relay(target, Control::Advance { to, finish })?;
        }
        Ok(())
    }

    /// Adds a fact given at `t`, as a point (the workers diff it), to the next batch.
    pub(super) fn push_point(&mut self, pred: PredId, row: Row, t: u64) {
        self.batch.push(pred as u32, row, t, 1);
    }

    /// Every time point from the timeline's first, `start`, up to `to` (exclusive) is
    /// complete: the batch goes out and every worker advances to `to`.
    pub(super) fn advance(&mut self, start: u64, to: u64) -> Result<(), RunError> {
        self.next_emit.get_or_insert(start);
        self.first.get_or_insert(start);
        self.feed_unit(start);
        self.advance_to = self.advance_to.max(to);
        self.send_batch()
    }

    /// The next block summary a worker sends (and whether to read its block again here),
    /// taking in the output that comes before it.
    pub(super) fn next_parsed(&mut self) -> Result<(usize, u64, BlockSummary, bool), RunError> {
        loop {
            if let Some(parsed) = self.parsed.pop_front() {
                return Ok(parsed);
            }
            match self.next_message() {
                Ok(FromWorker::Done { worker, .. }) => {
                    return Err(RunError::Cluster(format!("worker {worker} stopped")));
                }
                Ok(message) => self.receive(message)?,
                Err(()) => return Err(RunError::Cluster("the workers stopped".to_owned())),
            }
        }
    }

    /// Flushes the last batch, closes the input and writes the remaining output; where the
    /// input `ended` (not an error), also what the end of the output writes (the intervals
    /// still open, where the workers format the output: the calling thread's sink does it
    /// otherwise).
    pub(super) fn finish(&mut self, ended: bool) -> Result<(), RunError> {
        self.ended = ended;
        if !self.batch.is_empty() || self.batch_start.is_some() {
            let live = std::mem::replace(&mut self.live, false);
            let sent = self.send_batch();
            self.live = live;
            sent?;
        }
        if !self.to_workers.is_empty() {
            self.relay_advance(true)?;
        }
        let channels = std::mem::take(&mut self.to_workers);
        if channels.is_empty() {
            return Ok(());
        }
        for (worker, channel) in channels.iter().enumerate() {
            let finish = ToWorker::Finish {
                advance_to: self.advance_to,
                first: self.first.unwrap_or(0),
            };
            let _ = self.send(channel, finish);
            if self.remote.is_some() {
                self.wake(worker);
            }
        }
        while self.done < channels.len() {
            match self.next_message() {
                Err(_) => return Ok(()),
                Ok(message) => self.receive(message)?,
            }
        }
        Ok(())
    }
}

impl<W: Write> TimePoints for Feeder<'_, W> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.batch_start.get_or_insert(t);
        self.feed_unit(t);
        match &mut self.diff {
            Some(diff) => self.batch.push_diffed(diff, &self.point_preds, t, input),
            // The facts as they are: the workers diff them.
            None => {
                for (pred, row) in input {
                    self.batch.push(pred as u32, row, t, 1);
                }
            }
        }
        self.fed_through(t)
    }

    /// A quiet stretch goes out in batches, so that output flows, memory stays bounded and
    /// a stop request is seen between batches. Where a stretch takes more than a batch,
    /// each batch's output is waited for, and one without output makes the batches twice
    /// as long from then on; output in a quiet stretch makes them short again. Where
    /// nothing happens on its own, a stretch costs a batch or a few however long (timely's
    /// frontier passes the time points between in one step); where the program changes
    /// on its own, batches stay at `batch_points`.
    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        let mut from = from;
        self.quiet = from..to;
        while from < to {
            let start = *self.batch_start.get_or_insert(from);
            self.feed_unit(from);
            if let Some(diff) = &mut self.diff {
                let batch = &mut self.batch;
                diff.left(|(pred, row)| batch.push(pred as u32, row, from, -1));
            }
            let end = to.min(start.saturating_add(self.stretch).max(from + 1));
            self.output_seen = false;
            self.fed_through(end - 1)?;
            from = end;
            if from < to {
                if let Some(stop) = stgflow_io::interrupt::requested() {
                    return Err(stop.into());
                }
                self.wait_for(end)?;
                self.stretch = match self.output_seen || self.sink.writes_every_point() {
                    true => self.batch_points,
                    false => self.stretch.saturating_mul(2),
                };
            }
        }
        Ok(())
    }
}
