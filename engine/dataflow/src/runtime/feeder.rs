//! The calling thread's side of a run: each time point's input facts become changes
//! against the previous time point (a fact that keeps holding costs nothing), sent to
//! worker 0 in batches; the output comes back in output order and goes to the sink time
//! point by time point.

use std::hash::BuildHasher;
use std::io::Write;

use crossbeam_channel::{Receiver, RecvTimeoutError, SendTimeoutError, Sender};
use hashbrown::{DefaultHashBuilder, HashTable};
use stgflow_io::drive::{RunError, RunSummary, TimePoints};
use stgflow_io::sink::Sink;
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;

use super::messages::{Change, FromWorker, SPARE_BUFFERS, ToWorker, Update};

/// An input fact: its predicate and arguments.
type Fact = (PredId, Row);

/// How often the calling thread, waiting for worker 0, looks for a stop request.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// A batch of input changes, one vector per input channel: a predicate's changes under its
/// id, the unit row's ([`crate::operators::UNIT_TAG`]) last. Worker 0 hands each vector to its
/// predicate's input handle as it is.
struct Batch {
    parts: Vec<Vec<Change>>,
    len: usize,
}

impl Batch {
    fn new(channels: usize) -> Batch {
        Batch {
            parts: vec![Vec::new(); channels],
            len: 0,
        }
    }

    fn push(&mut self, tag: u32, row: Row, time: u64, diff: isize) {
        let last = self.parts.len() - 1;
        self.parts[(tag as usize).min(last)].push((row, time, diff));
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The changes so far; each channel starts again at its size in this batch, not
    /// empty: growing by doubling costs a copy and fresh pages each time.
    fn take(&mut self) -> Vec<Vec<Change>> {
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

/// The calling thread's side: input changes out, output back in.
pub(super) struct Feeder<'a, W: Write> {
    to_worker: Option<Sender<ToWorker>>,
    from_worker: Receiver<FromWorker>,
    pub(super) sink: &'a mut Sink<W>,
    live: bool,
    batch_points: u64,
    batch_updates: usize,
    /// The input facts of the last time point fed.
    previous: HeldFacts,
    /// An empty set whose allocation the next time point reuses.
    spare: HeldFacts,
    /// Hashes the facts of `previous` and `spare`, each once.
    hasher: DefaultHashBuilder,
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
    /// Output received but not written yet, in output order.
    pending: Vec<Update>,
    /// Emptied output buffers passed back to worker 0, so that their memory stays
    /// allocated (fresh pages cost a page fault each).
    spare_outputs: Vec<Vec<Update>>,
    pub(super) summary: RunSummary,
    /// Whether a stop request has flushed the sink (see [`Feeder::flush_on_stop`]).
    flushed_on_stop: bool,
}

/// The input facts of one time point, in arrival order, with an index by hash: what the
/// next time point's facts are diffed against. The order matters downstream: the −1s of
/// the facts that left go out in it, so that a window's count table, which stores records
/// in arrival order, meets them in the order it stored them (in hash order, each was a
/// cache miss once the table outgrew the caches).
#[derive(Default)]
struct HeldFacts {
    /// Each fact with its hash; `None` once the next time point has taken it.
    facts: Vec<(u64, Option<Fact>)>,
    /// Positions in `facts` of the facts not taken, by hash.
    index: HashTable<usize>,
}

impl HeldFacts {
    fn reserve(&mut self, additional: usize) {
        self.facts.reserve(additional);
        let facts = &self.facts;
        self.index.reserve(additional, |&i| facts[i].0);
    }

    /// Whether position `i` of `facts` holds `fact` (with `hash`).
    fn holds(facts: &[(u64, Option<Fact>)], i: usize, hash: u64, fact: &Fact) -> bool {
        facts[i].0 == hash && facts[i].1.as_ref() == Some(fact)
    }

    fn contains(&self, hash: u64, fact: &Fact) -> bool {
        let facts = &self.facts;
        self.index
            .find(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .is_some()
    }

    /// Removes `fact` (with `hash`) and returns it, when held.
    fn take(&mut self, hash: u64, fact: &Fact) -> Option<Fact> {
        let facts = &mut self.facts;
        let entry = self
            .index
            .find_entry(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .ok()?;
        let (i, _) = entry.remove();
        facts[i].1.take()
    }

    /// Adds `fact`, which is not held yet.
    fn push_unique(&mut self, hash: u64, fact: Fact) {
        let facts = &mut self.facts;
        facts.push((hash, Some(fact)));
        let at = facts.len() - 1;
        self.index.insert_unique(hash, at, |&i| facts[i].0);
    }

    /// Empties the set; returns the facts not taken, in arrival order.
    fn drain_left(&mut self) -> impl Iterator<Item = Fact> + '_ {
        self.index.clear();
        self.facts.drain(..).filter_map(|(_, fact)| fact)
    }
}

impl<'a, W: Write> Feeder<'a, W> {
    /// A feeder sending to worker 0 on `to_worker`, with `channels` input channels (one
    /// per predicate, then the unit row's), writing the output to `sink`.
    pub(super) fn new(
        to_worker: Sender<ToWorker>,
        from_worker: Receiver<FromWorker>,
        sink: &'a mut Sink<W>,
        options: &super::Options,
        channels: usize,
    ) -> Feeder<'a, W> {
        Feeder {
            to_worker: Some(to_worker),
            from_worker,
            sink,
            live: options.live,
            batch_points: options.batch_points.max(1),
            batch_updates: options.batch_updates.max(1),
            previous: HeldFacts::default(),
            spare: HeldFacts::default(),
            hasher: DefaultHashBuilder::default(),
            batch: Batch::new(channels),
            batch_start: None,
            advance_to: 0,
            next_emit: None,
            first: None,
            unit_fed: false,
            pending: Vec::new(),
            spare_outputs: Vec::new(),
            summary: RunSummary::default(),
            flushed_on_stop: false,
        }
    }

    fn retract_previous(&mut self, at: u64) {
        for (pred, tuple) in self.previous.drain_left() {
            self.batch.push(pred as u32, tuple, at, -1);
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

    fn send_batch(&mut self) -> Result<(), RunError> {
        let parts = self.batch.take();
        self.batch_start = None;
        let Some(channel) = self.to_worker.clone() else {
            return Ok(());
        };
        let message = ToWorker::Feed {
            parts,
            advance_to: self.advance_to,
            first: self.first.unwrap_or(0),
            recycled: self.spare_outputs.pop().unwrap_or_default(),
        };
        if self.send(&channel, message).is_err() {
            return Err(RunError::Cluster("worker 0 stopped".to_owned()));
        }
        if self.live {
            self.wait_for(self.advance_to)?;
        } else {
            while let Ok(message) = self.from_worker.try_recv() {
                self.receive(message)?;
            }
        }
        Ok(())
    }

    /// Sends `message` to worker 0, waiting while its channel is full (see
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

    /// The next message from worker 0, waiting for it (see [`Feeder::flush_on_stop`]).
    fn next_message(&mut self) -> Result<FromWorker, ()> {
        loop {
            match self.from_worker.recv_timeout(STOP_POLL) {
                Ok(message) => return Ok(message),
                Err(RecvTimeoutError::Timeout) => self.flush_on_stop(),
                Err(RecvTimeoutError::Disconnected) => return Err(()),
            }
        }
    }

    /// While the calling thread waits for worker 0 — which may be in one long step — a
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
                Ok(FromWorker::Done) | Err(_) => {
                    return Err(RunError::Cluster("worker 0 stopped".to_owned()));
                }
                Ok(message) => self.receive(message)?,
            }
        }
        Ok(())
    }

    fn receive(&mut self, message: FromWorker) -> Result<(), RunError> {
        let FromWorker::Output { upto, updates } = message else {
            return Ok(());
        };
        // Worker 0 sends each time point's output once, in output order: all of it below
        // `upto`; what cannot be written yet waits here.
        let mut updates = updates;
        debug_assert!(
            self.pending
                .last()
                .zip(updates.first())
                .is_none_or(|(a, b)| a.1 <= b.1),
            "output arrives in time order"
        );
        if self.pending.is_empty() {
            std::mem::swap(&mut self.pending, &mut updates);
        } else {
            self.pending.append(&mut updates);
        }
        crate::operators::keep_spare(&mut self.spare_outputs, updates, SPARE_BUFFERS);
        let Some(mut next) = self.next_emit else {
            return Ok(());
        };
        let end = upto.min(self.advance_to);
        let mut at = 0;
        while next < end {
            let from = at;
            while at < self.pending.len() && self.pending[at].1 == next {
                at += 1;
            }
            let changes = self.pending[from..at]
                .iter()
                .map(|((pred, row), _, diff)| (*pred as PredId, &row[..], *diff));
            self.sink.emit_sorted(next, changes)?;
            self.summary.time_point(next);
            next += 1;
        }
        self.pending.drain(..at);
        self.next_emit = Some(next);
        Ok(())
    }

    /// Flushes the last batch, closes the input and writes the remaining output.
    pub(super) fn finish(&mut self) -> Result<(), RunError> {
        if !self.batch.is_empty() || self.batch_start.is_some() {
            let live = std::mem::replace(&mut self.live, false);
            let sent = self.send_batch();
            self.live = live;
            sent?;
        }
        let Some(channel) = self.to_worker.take() else {
            return Ok(());
        };
        let finish = ToWorker::Finish {
            advance_to: self.advance_to,
            first: self.first.unwrap_or(0),
        };
        let _ = self.send(&channel, finish);
        loop {
            match self.next_message() {
                Ok(FromWorker::Done) | Err(_) => return Ok(()),
                Ok(message) => self.receive(message)?,
            }
        }
    }
}

impl<W: Write> TimePoints for Feeder<'_, W> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.batch_start.get_or_insert(t);
        self.feed_unit(t);
        // One hash and lookup per fact (the hash kept with it): what held before and holds
        // again costs nothing; what is new is +1; what is left of the previous time point
        // is −1.
        let mut now = std::mem::take(&mut self.spare);
        now.reserve(input.len());
        for fact in input {
            let hash = self.hasher.hash_one(&fact);
            if let Some(held) = self.previous.take(hash, &fact) {
                // Not in `now` yet: had it been there, it would have left `previous`.
                now.push_unique(hash, held);
            } else if !now.contains(hash, &fact) {
                self.batch
                    .push(fact.0 as u32, Row::from_slice(&fact.1), t, 1);
                now.push_unique(hash, fact);
            }
        }
        self.retract_previous(t);
        self.spare = std::mem::replace(&mut self.previous, now);
        self.fed_through(t)
    }

    /// A quiet stretch goes out in batches of at most `batch_points` time points like any
    /// other, so that output flows, memory stays bounded and a stop request is seen
    /// between batches even when the stretch is 10^9 time points long.
    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        let mut from = from;
        while from < to {
            let start = *self.batch_start.get_or_insert(from);
            self.feed_unit(from);
            self.retract_previous(from);
            let end = to.min(start.saturating_add(self.batch_points).max(from + 1));
            self.fed_through(end - 1)?;
            from = end;
            if from < to {
                if let Some(stop) = stgflow_io::interrupt::requested() {
                    return Err(stop.into());
                }
            }
        }
        Ok(())
    }
}
