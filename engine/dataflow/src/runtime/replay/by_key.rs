//! The timeline evaluated by shards: where a program recurses through time but every rule
//! derives its head from facts of the head's own key ([`crate::plan::partition`]), each
//! worker is a shard that holds the facts of its keys and runs its own dataflow over them
//! for the whole timeline. Nothing is exchanged between shards while they evaluate.
//!
//! * **Parts in order.** The input is still cut into parts by time. Any worker reads a
//!   part (its lines in every file, no warm-up) and deals its facts out by key
//!   ([`deal`]). Reading runs ahead of the slowest shard by a bounded number of parts.
//! * **Shards in step with the parts.** A shard takes its share of part after part, in
//!   order, and publishes its output of a part in slices as it goes ([`output`]): every
//!   so many bytes or time points, and at the part's end.
//! * **Merged as far as every shard has got.** Where a shard's slices let a part be
//!   merged further (up to the earliest time point every shard has published), the
//!   merge is due, and another worker takes it when it next publishes or looks for work:
//!   the shard that is behind goes on evaluating, and the merging is shared among those
//!   ahead. The merged bytes go to the writer; so output flows however long a part runs.

mod deal;
mod output;

use std::sync::{Condvar, Mutex, MutexGuard};

pub(super) use deal::Dealer;
pub(super) use output::Format;

use super::super::messages::Update;
use super::Shared;
use super::local::Local;
use super::outbox::{Outbox, PartDone};
use super::parts::Cut;
use crate::plan::partition::Shard;
use deal::{Dealt, Share, deal};
use output::{Formatter, Output};

/// Parts read ahead of the slowest shard: a part is read by one worker and evaluated by
/// all, so several are read at once for the shards to find their next share read (two,
/// and one more per four workers); few, so that the input read and not evaluated stays
/// small.
fn ahead(shards: usize) -> usize {
    2 + shards / 4
}

/// A shard publishes its output once it holds this many bytes (or updates × 16)...
const SLICE_SIZE: usize = 1 << 18;

/// ...or covers this many time points.
const SLICE_POINTS: u64 = 1 << 14;

/// The shards' output of one part, as far as it is published.
#[derive(Debug)]
struct Slices {
    /// Per shard, what it published and is not merged yet.
    pending: Vec<Option<Output>>,
    /// Per shard, every time point before this one is published.
    through: Vec<u64>,
    /// The shards done with the part.
    finished: usize,
    /// Every time point before this one is merged.
    merged_to: u64,
    /// Whether a worker is merging the part (one at a time, so that its bytes go out
    /// in order).
    merging: bool,
    /// A merge is due and no worker has taken it (it is on [`Board::due`]).
    due: bool,
    /// A stop request ended the part, at the earliest time point every shard got to.
    stopped: Option<stgflow_io::interrupt::Stop>,
    /// A shard could not write its part files: the run ends with the part.
    failed: Option<std::io::Error>,
}

impl Slices {
    /// Whether a merge of the part would get further, and no worker has it.
    fn mergeable(&self, shards: usize) -> bool {
        let bound = self.through.iter().copied().min().unwrap_or(0);
        !self.merging && !self.due && (self.finished == shards || bound > self.merged_to)
    }
}

impl Board {
    /// The merge of `part` is due, made so by shard `by`.
    fn make_due(&mut self, part: usize, by: usize) {
        self.slices[part].due = true;
        let at = self.due.partition_point(|&(p, _)| p < part);
        self.due.insert(at, (part, by));
    }

    /// Takes the due merge of `part`; the shard that made it due.
    fn take_due(&mut self, part: usize) -> usize {
        self.slices[part].due = false;
        let at = self.due.partition_point(|&(p, _)| p < part);
        self.due.remove(at).1
    }
}

/// The first part whose merge is due, made due by a shard that `by` accepts.
fn due(board: &Board, by: impl Fn(usize) -> bool) -> Option<usize> {
    (board.due.iter())
        .find(|&&(_, shard)| by(shard))
        .map(|&(part, _)| part)
}

/// What the workers share while they read, evaluate and merge.
struct Board {
    /// The next part to read.
    next_read: usize,
    /// Per part, once read.
    dealt: Vec<Option<Dealt>>,
    /// Per shard, the next part it evaluates.
    at: Vec<usize>,
    /// Per part, its shards' output and what the part did (once every shard has its
    /// share).
    slices: Vec<Slices>,
    done: Vec<Option<PartDone>>,

    /// The parts up to this one (excluded) make the run; set by the part that ends it.
    parts: usize,
    /// Shares emptied by their shards, for the next reads to fill again.
    spare: Vec<Share>,
    /// The parts whose merge is due, in order, each with the shard that made it due.
    due: Vec<(usize, usize)>,
    /// A stop request that ends the run with a whole part (see [`Shards::stop`]).
    stop: Option<stgflow_io::interrupt::Stop>,
}

struct Shards<'a> {
    shared: &'a Shared,
    cut: &'a Cut,
    dealer: &'a Dealer,
    board: Mutex<Board>,
    /// Per worker, what wakes it: each waits on its own, so that what one worker can go
    /// on with wakes that one.
    wake: Vec<Condvar>,
    outbox: &'a Outbox,
    format: &'a Format<'a>,
    /// The end of the output writes lines (the intervals still open): a stop ends the run
    /// with a whole part rather than where each shard is ([`Shards::stop`]).
    ends: bool,
}

/// Runs the shards of `dealer` on as many worker threads over `cut`, writing through
/// `outbox`; per component, its time scheduled and output updates, summed over the shards
/// (with `--stats`).
pub(super) fn run(
    shared: &Shared,
    cut: &Cut,
    dealer: &Dealer,
    format: &Format<'_>,
    outbox: &Outbox,
) -> Result<(Vec<std::time::Duration>, Vec<u64>), stgflow_io::drive::RunError> {
    let (parts, shards) = (cut.len(), dealer.shards());
    let board = Board {
        next_read: 0,
        dealt: (0..parts).map(|_| None).collect(),
        at: vec![0; shards],
        slices: (0..parts)
            .map(|k| Slices {
                pending: (0..shards).map(|_| None).collect(),
                through: vec![0; shards],
                finished: 0,
                merged_to: cut.times(k).0,
                merging: false,
                due: false,
                stopped: None,
                failed: None,
            })
            .collect(),
        done: (0..parts).map(|_| None).collect(),

        parts,
        spare: Vec::new(),
        due: Vec::new(),
        stop: None,
    };
    let all = Shards {
        shared,
        cut,
        dealer,
        board: Mutex::new(board),
        wake: (0..shards).map(|_| Condvar::new()).collect(),
        outbox,
        format,
        ends: format.writes_an_end(),
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..shards)
            .map(|shard| {
                let all = &all;
                std::thread::Builder::new()
                    .name(format!("stgflow:work-{shard}"))
                    .spawn_scoped(scope, move || all.work(shard))
            })
            .collect();
        let mut totals = (Vec::new(), Vec::new());
        let mut failed = None;
        for handle in handles {
            match handle.map(|h| h.join()) {
                Ok(Ok((times, records))) => {
                    super::add_up(&mut totals.0, &times);
                    super::add_up(&mut totals.1, &records);
                }
                Ok(Err(_)) => failed = Some("a worker failed".to_owned()),
                Err(e) => failed = Some(format!("cannot start a worker: {e}")),
            }
        }
        match failed {
            None => Ok(totals),
            Some(failed) => {
                outbox.unwanted_from(0);
                all.wake_all();
                Err(stgflow_io::drive::RunError::Cluster(failed))
            }
        }
    })
}

impl Shards<'_> {
    fn board(&self) -> MutexGuard<'_, Board> {
        self.board
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wake_all(&self) {
        for wake in &self.wake {
            wake.notify_one();
        }
    }

    /// A worker: shard `shard`, and a reader and merger of parts for all. It evaluates its
    /// share of its next part, merging what its slices make mergeable (see
    /// [`Shards::publish`]); else reads the next part, within the parts read ahead.
    fn work(&self, shard: usize) -> (Vec<std::time::Duration>, Vec<u64>) {
        let shards = self.dealer.shards();
        let kept: Vec<bool> = (self.dealer.keys().iter())
            .map(|key| shard == 0 || *key != Shard::Everywhere)
            .collect();
        let mut evaluation = Evaluation {
            shard,
            local: Local::new(self.shared, Some(&kept)),
            formatter: Formatter::new(self.format, shard, self.cut.first),
            out: Vec::new(),
            next_t: self.cut.first,
            published_to: self.cut.first,
        };
        let mut board = self.board();
        loop {
            // The writer gave up.
            if !self.outbox.wanted(0) {
                break;
            }
            if let Some(due) = due(&board, |by| by != shard) {
                board = self.merge(board, due);
                continue;
            }
            let part = board.at[shard];
            if part >= board.parts {
                // What it made due itself.
                if let Some(due) = due(&board, |_| true) {
                    board = self.merge(board, due);
                    continue;
                }
                break;
            }
            let share = (board.dealt.get_mut(part).and_then(Option::as_mut)).and_then(|dealt| {
                let span = (dealt.from, dealt.through, dealt.ended);
                (dealt.shares[shard].take()).map(|share| (share, span))
            });
            if let Some((mut share, span)) = share {
                drop(board);
                self.evaluate(&mut evaluation, part, &mut share, span);
                board = self.board();
                board.spare.push(share);
                let slowest = board.at.iter().copied().min();
                board.at[shard] += 1;
                if board.slices[part].finished == shards {
                    board.dealt[part] = None;
                }
                // The slowest moved on: more parts may be read ahead.
                if board.at.iter().copied().min() != slowest {
                    self.wake_all();
                }
                continue;
            }
            let slowest = board.at.iter().copied().min().unwrap_or(0);
            if board.next_read < board.parts && board.next_read < slowest + ahead(shards) {
                let part = board.next_read;
                board.next_read += 1;
                let at = board.spare.len().saturating_sub(shards);
                let spare: Vec<Share> = board.spare.drain(at..).collect();
                drop(board);
                let mut dealt = self.read(part, spare);
                board = self.board();
                if dealt.last {
                    board.parts = board.parts.min(part + 1);
                }
                board.done[part] = dealt.done.take();
                board.dealt[part] = Some(dealt);
                self.wake_all();
                continue;
            }
            if let Some(due) = due(&board, |_| true) {
                board = self.merge(board, due);
                continue;
            }
            board = self.wake[shard]
                .wait(board)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        drop(board);
        self.wake_all();
        if self.shared.stats {
            self.shared.threads.record();
        }
        evaluation.local.finish()
    }

    /// Reads part `part` and deals its facts out (into `spare` shares first); where a file
    /// is out of time order there or before, the rest of the input instead, as one part
    /// that ends the run.
    fn read(&self, part: usize, spare: Vec<Share>) -> Dealt {
        let (dealt, misplaced) = deal(self.shared, self.cut, self.dealer, part, spare);
        if !misplaced {
            return dealt;
        }
        // The rest has no end: it is the last part.
        let rest = self.cut.rest_from(part);
        deal(self.shared, &rest, self.dealer, 0, Vec::new()).0
    }

    /// Feeds a shard's share of part `part` into its dataflow (`share` is left empty) and
    /// publishes its output of the part's time points `from..through` in slices (where
    /// the output `ended` with the part, or a stop request ended the run with it, with the
    /// output's end: the intervals still open). Where the end writes nothing, a stop
    /// request ends the part at the shard's next batch, the part then ending at the
    /// earliest time point every shard got to.
    fn evaluate(
        &self,
        evaluation: &mut Evaluation,
        part: usize,
        share: &mut Share,
        (from, through, ended): (u64, u64, bool),
    ) {
        evaluation.published_to = from;
        let fed = self.feed(evaluation, part, share, (from, through));
        share.facts.clear();
        share.times.clear();
        if let Err(stop) = fed {
            let output = evaluation.formatter.output(false, self.outbox);
            let to = evaluation.local.fed_to();
            let mut board = self.board();
            board.slices[part].stopped = Some(stop);
            board.parts = board.parts.min(part + 1);
            drop(board);
            self.publish(part, evaluation.shard, output, (to, true));
            return;
        }
        let ended = ended || {
            let board = self.board();
            board.stop.is_some() && part + 1 >= board.parts
        };
        evaluation.next_t = evaluation.next_t.max(through);
        evaluation.run(&self.shared.rank);
        let output = evaluation.formatter.output(ended, self.outbox);
        if let Some(failed) = evaluation.formatter.failed() {
            let mut board = self.board();
            board.slices[part].failed.get_or_insert(failed);
            board.parts = board.parts.min(part + 1);
        }
        self.publish(part, evaluation.shard, output, (through, true));
    }

    /// The feeding of [`Shards::evaluate`], batch by batch; `Err` where a stop request
    /// ends the part here.
    fn feed(
        &self,
        evaluation: &mut Evaluation,
        part: usize,
        share: &mut Share,
        (from, through): (u64, u64),
    ) -> Result<(), stgflow_io::interrupt::Stop> {
        let mut facts = share.facts.drain(..);
        let mut taken = 0;
        for &(t, end) in &share.times {
            let mut at = evaluation.next_t;
            while at < t {
                evaluation.quiet_grows();
                at = evaluation.local.quiet(at, t);
                self.batch(evaluation, part)?;
            }
            let input = facts.by_ref().take(end - taken).collect();
            evaluation.local.complete(t, input);
            taken = end;
            evaluation.next_t = t + 1;
            self.batch(evaluation, part)?;
        }
        let mut at = evaluation.next_t.max(from);
        while at < through {
            evaluation.quiet_grows();
            at = evaluation.local.quiet(at, through);
            self.batch(evaluation, part)?;
        }
        Ok(())
    }

    /// Runs a full batch and publishes its output where due; `Err` where a stop request
    /// ends the part here (where the output's end writes lines, it ends the run a part or
    /// two on instead, [`Shards::stop`]).
    fn batch(
        &self,
        evaluation: &mut Evaluation,
        part: usize,
    ) -> Result<(), stgflow_io::interrupt::Stop> {
        if evaluation.local.full() {
            evaluation.run(&self.shared.rank);
            self.publish_slice(evaluation, part);
            if let Some(stop) = stgflow_io::interrupt::requested() {
                if !self.ends {
                    return Err(stop);
                }
                self.stop(stop);
            }
        }
        Ok(())
    }

    /// Ends the run with the part after the furthest one any shard has started: no shard
    /// has started that one, so every shard evaluates it knowing that it is the last, and
    /// ends its output there (the intervals still open), at the same time point as the
    /// others. A shard stopped where it saw the request would leave the shards ahead of
    /// it with intervals open at a time point that the output does not reach.
    fn stop(&self, stop: stgflow_io::interrupt::Stop) {
        let mut board = self.board();
        if board.stop.is_none() {
            let furthest = board.at.iter().copied().max().unwrap_or(0);
            board.parts = board.parts.min(furthest + 2);
            board.stop = Some(stop);
        }
    }

    /// Publishes what the shard has formatted of part `part`, where it is much or covers
    /// many time points (output flows while a long part is evaluated).
    fn publish_slice(&self, evaluation: &mut Evaluation, part: usize) {
        let through = evaluation.local.fed_to();
        let big = evaluation.formatter.size() >= SLICE_SIZE;
        if big || through >= evaluation.published_to.saturating_add(SLICE_POINTS) {
            evaluation.published_to = through;
            let output = evaluation.formatter.output(false, self.outbox);
            self.publish(part, evaluation.shard, output, (through, false));
        }
    }

    /// Adds a shard's `output` of part `part` up to time point `through` (and whether it
    /// is the shard's last of the part) to the part's slices; where every shard has got
    /// further, and no worker merges the part, the merge is due. Takes a merge that
    /// another shard made due.
    fn publish(&self, part: usize, shard: usize, output: Output, (through, last): (u64, bool)) {
        let mut board = self.board();
        let slices = &mut board.slices[part];
        match &mut slices.pending[shard] {
            Some(pending) => pending.append(output),
            empty => *empty = Some(output),
        }
        slices.through[shard] = through;
        slices.finished += usize::from(last);
        let shards = self.dealer.shards();
        let made = slices.mergeable(shards);
        if made {
            board.make_due(part, shard);
        }
        // A merge another shard made due is taken here, so that merging goes on however
        // long a part runs (alone, a shard takes its own).
        if let Some(due) = due(&board, |by| by != shard || shards == 1) {
            drop(self.merge(board, due));
        } else if made {
            drop(board);
            self.wake_all();
        }
    }

    /// Takes the due merge of part `part`: merges what every shard has published of it,
    /// and sends it, one round, or, once every shard has finished the part, everything
    /// and then what the part did. Takes the board and gives it back (the part merged by
    /// no worker, and its merge due again where the shards got further meanwhile).
    fn merge<'b>(&'b self, mut board: MutexGuard<'b, Board>, part: usize) -> MutexGuard<'b, Board> {
        let shards = self.dealer.shards();
        let by = board.take_due(part);
        board.slices[part].merging = true;
        loop {
            let slices = &mut board.slices[part];
            let last = slices.finished == shards;
            let stopped = if last { slices.stopped.take() } else { None };
            let complete = slices.through.iter().copied().min().unwrap_or(0);
            let bound = if last && stopped.is_none() {
                u64::MAX
            } else {
                complete
            };
            if bound <= slices.merged_to && !last {
                slices.merging = false;
                return board;
            }
            slices.merged_to = bound;
            // The last merge takes everything, the output's end (at `u64::MAX`) too, but
            // after a stop within the part what every shard got to.
            let outputs: Vec<Output> = (slices.pending.iter_mut())
                .filter_map(|pending| match bound {
                    u64::MAX => pending.take(),
                    _ => {
                        let output = pending.as_mut()?;
                        let rest = output.split_off(bound);
                        Some(std::mem::replace(output, rest))
                    }
                })
                .collect();
            let done = if last {
                let mut done = board.done[part].take().unwrap_or_default();
                // A stop within the part, or one that ended the run with it whole.
                let whole = (board.stop.clone()).filter(|_| part + 1 == board.parts);
                if let Some(stop) = stopped.or(whole) {
                    done.error.get_or_insert(stop.into());
                }
                if let Some(failed) = board.slices[part].failed.take() {
                    done.error.get_or_insert(failed.into());
                }
                Some(done)
            } else {
                None
            };
            drop(board);
            let rank = &self.shared.rank;
            let (bytes, through) = output::merge(self.format, outputs, rank, self.outbox);
            // Written through the last time point every shard has got past, lines or not
            // (an interval's line comes when it closes): where a stop says it ended.
            let through = through.max(complete.saturating_sub(1));
            if !bytes.is_empty() || last {
                // Shards take no slot (see `super::slots`): they evaluate in step.
                self.outbox.bytes(part, bytes, through, &mut None);
            }
            if let Some(done) = done {
                self.outbox.done(part, done);
                return self.board();
            }
            board = self.board();
            let slices = &mut board.slices[part];
            if slices.finished < shards {
                slices.merging = false;
                if slices.mergeable(shards) {
                    board.make_due(part, by);
                    drop(board);
                    self.wake_all();
                    return self.board();
                }
                return board;
            }
        }
    }
}

/// A shard's evaluation: its dataflow, its formatter, and how far it has got.
struct Evaluation {
    shard: usize,
    local: Local,
    formatter: Formatter,
    /// Output taken from the dataflow, in output order, not formatted yet.
    out: Vec<Update>,
    /// The next time point to feed.
    next_t: u64,
    /// Every time point before this one of the current part is published.
    published_to: u64,
}

impl Evaluation {
    /// A quiet stretch's batches grow unless the shard's output writes lines at every
    /// time point.
    fn quiet_grows(&mut self) {
        let every_point = self.formatter.writes_every_point();
        self.local.quiet_grows(!every_point);
    }

    /// Runs the dataflow through every time point fed, its output to the formatter.
    fn run(&mut self, rank: &[usize]) {
        self.local.run(&mut self.out);
        self.formatter
            .take(&mut self.out, self.local.fed_to(), rank);
    }
}
