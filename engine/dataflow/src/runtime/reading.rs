//! Batch replay with the input read on the workers ([`super::Options::read_on_workers`]).
//!
//! * Each file's reader thread cuts it into blocks of whole lines
//!   ([`RawBlocks`]); the calling thread hands the blocks to the workers of this process
//!   in turn, about [`BLOCKS_PER_WORKER`] per worker at a time. A worker parses its block on
//!   its own, keeps the facts and says what the block held ([`BlockSummary`]).
//! * The calling thread takes each file's blocks back in order ([`BlockOrder`]), parsing a
//!   block again itself only where its parse on its own may differ from the sequential
//!   reader's (it starts behind the blocks before, declares a timeline, or has an error),
//!   and then tells the worker to introduce the block's facts through its own input
//!   handles, as points that the workers diff ([`crate::operators::points`]). So a fact
//!   crosses no thread on its way in, and the calling thread does no work per fact.
//! * Every worker then advances to the earliest time any source may still have facts at.
//!   Sources that cannot be read in blocks (the program's facts, a stream in a format that
//!   reads line by line) are read here, fact by fact, up to the files' times, and go with
//!   the batches of [`Feeder::advance`].
//! * The driver's contract ([`stgflow_io::drive::feed`]) holds as it is: the timeline's
//!   bounds (given, declared by a source, or from the first fact), facts before it
//!   dropped and counted, every source read up to its first fact after it and no further,
//!   skip counts, and errors: the first error in the order the sequential driver would
//!   meet it stops the run, after every time point before it has been written. Each
//!   source's first block is read here, up to its first fact, to learn the timeline
//!   before any fact goes in.

use std::collections::VecDeque;
use std::io::Write;

use stgflow_io::drive::{FactSource, Fed, RunError, Timeline};
use stgflow_io::interrupt;
use stgflow_io::stream::blocks::{BlockOrder, BlockSummary, RawBlock, RawBlocks, Taken};
use stgflow_io::stream::{InputFact, SkipCounts, StreamError};

use crossbeam_channel::{Receiver, Sender};
use hashbrown::HashMap;

use super::feeder::Feeder;
use super::messages::{FromWorker, ToWorker};
use super::worker::Wakers;

/// Most blocks out to each worker (parsed or being parsed) and not taken back yet.
const BLOCKS_PER_WORKER: usize = 2;

/// Most facts read here, from sources read fact by fact, between two batches.
const FACTS_PER_BATCH: usize = 1 << 14;

/// What the reading did: the facts read on this thread, and the skip counts of every
/// source, in order.
pub(super) struct Read {
    pub(super) fed: Fed,
    pub(super) skipped: SkipCounts,
}

/// How a source is read.
enum Kind<'r, 's> {
    /// In blocks, on the workers.
    Blocks(Blocks),
    /// Here, fact by fact; `head` is its next fact.
    Facts {
        source: &'r mut Box<dyn FactSource + 's>,
        head: Option<InputFact>,
    },
}

/// A file read in blocks.
struct Blocks {
    raw: RawBlocks,
    order: BlockOrder,
    /// Blocks out to the workers, in the file's order, each with its worker and, once it
    /// is back, its summary.
    out: VecDeque<Out>,
    next_seq: u64,
    /// Every block of the file has been handed out.
    exhausted: bool,
    /// The file could not be read past its last block.
    read_error: Option<Box<StreamError>>,
}

struct Out {
    seq: u64,
    block: RawBlock,
    worker: usize,
    /// The block's summary once it is back, and whether to read it again here.
    summary: Option<(BlockSummary, bool)>,
}

#[derive(Debug)]
enum State {
    /// Facts up to `latest` have gone in (of a source read here: every fact before
    /// `latest`, its next fact's time); more may come at `latest` or later.
    Open { latest: u64 },
    /// Read to its end, or to its first fact after the timeline.
    Ended,
    /// Stopped by `error` after its facts up to `after`.
    Failed { after: u64, error: Box<StreamError> },
}

struct Source<'r, 's> {
    kind: Kind<'r, 's>,
    state: State,
}

/// The timeline's bounds once every source's first fact is known.
#[derive(Clone, Copy)]
struct Bounds {
    start: u64,
    until: Option<u64>,
}

impl Bounds {
    fn after(&self, time: u64) -> bool {
        self.until.is_some_and(|until| time > until)
    }
}

struct Reading<'r, 's> {
    sources: Vec<Source<'r, 's>>,
    bounds: Bounds,
    fed: Fed,
    /// The latest time of a fact read in the timeline or before it.
    max_seen: Option<u64>,
    /// Every worker has advanced to this.
    advanced: u64,
    /// Blocks out to the workers, of all files.
    in_flight: usize,
    next_worker: usize,
}

/// Reads `sources` (`raws[i]`: source i's blocks, for those read on the workers), merged
/// by time within `timeline`, into the workers of `feeder`, which writes their output.
pub(super) fn read_on_workers<'s, W: Write>(
    sources: &mut [Box<dyn FactSource + 's>],
    raws: Vec<Option<RawBlocks>>,
    timeline: Timeline,
    feeder: &mut Feeder<'_, W>,
) -> Result<Read, RunError> {
    // Each source's first fact, in order, as the driver reads them: an error there stops
    // the run before any output.
    let mut started = Vec::with_capacity(sources.len());
    let mut declared = Vec::new();
    for (source, raw) in sources.iter_mut().zip(raws) {
        let start = match raw {
            Some(raw) => first_block(raw)?,
            None => {
                let head = next_fact(source)?;
                let state = head
                    .as_ref()
                    .map_or(State::Ended, |f| State::Open { latest: f.time });
                Start {
                    kind: Kind::Facts { source, head },
                    state,
                    facts: Vec::new(),
                    rest: None,
                }
            }
        };
        declared.push(match &start.kind {
            Kind::Blocks(blocks) => blocks.order.declared_timeline(),
            Kind::Facts { source, .. } => source.declared_timeline(),
        });
        started.push(start);
    }
    let declared: Vec<(u64, u64)> = declared.into_iter().flatten().collect();
    let from = timeline.from.or(declared.iter().map(|d| d.0).min());
    let until = timeline.until.or(declared.iter().map(|d| d.1).max());
    let first_input = started
        .iter()
        .filter_map(|s| match &s.kind {
            Kind::Blocks(_) => s.facts.first().map(|f| f.time),
            Kind::Facts { head, .. } => head.as_ref().map(|f| f.time),
        })
        .min();
    let mut reading = Reading {
        sources: Vec::with_capacity(started.len()),
        bounds: Bounds { start: 0, until },
        fed: Fed::default(),
        max_seen: None,
        advanced: 0,
        in_flight: 0,
        next_worker: 0,
    };
    let start = from.or(first_input).or(until.map(|_| 0));
    let Some(start) = start else {
        return Ok(reading.finish(started.into_iter().map(|s| s.kind)));
    };
    reading.bounds.start = start;
    reading.advanced = start;
    // The first blocks' facts, then the rest of those blocks, read here.
    for started in started {
        let Start {
            kind,
            state,
            facts,
            rest,
        } = started;
        let index = reading.sources.len();
        reading.sources.push(Source { kind, state });
        let ended = !reading.take_in(facts, feeder);
        if ended {
            reading.sources[index].state = State::Ended;
        } else if let Some(rest) = rest {
            reading.take_rest(index, &rest, feeder);
        }
    }
    reading.run(feeder)
}

/// A source once its first fact is known.
struct Start<'r, 's> {
    kind: Kind<'r, 's>,
    state: State,
    /// The facts read so far (of a file: its first fact and the rest of its line).
    facts: Vec<InputFact>,
    /// What is left of the block the first fact is in.
    rest: Option<RawBlock>,
}

/// Reads a file's blocks here up to its first fact (and the rest of that line).
fn first_block<'r, 's>(mut raw: RawBlocks) -> Result<Start<'r, 's>, RunError> {
    let mut order = BlockOrder::default();
    // Blocks are numbered as the file is cut, these first ones too: every process that
    // cuts its copy of the file numbers them alike.
    let mut cut = 0;
    let (facts, rest, state) = loop {
        let block = match raw.next() {
            None => break (Vec::new(), None, State::Ended),
            Some(block) => block.map_err(stream_error)?,
        };
        cut += 1;
        let taken = order.take_until(raw.like(), &block, |_| true);
        if let Some(error) = taken.error {
            return Err(stream_error(error));
        }
        if let (Some(facts), Some(last)) = (taken.facts, taken.last) {
            break (facts, taken.rest, State::Open { latest: last });
        }
    };
    let blocks = Blocks {
        raw,
        order,
        out: VecDeque::new(),
        next_seq: cut,
        exhausted: matches!(state, State::Ended),
        read_error: None,
    };
    Ok(Start {
        kind: Kind::Blocks(blocks),
        state,
        facts,
        rest,
    })
}

impl<'s> Reading<'_, 's> {
    fn run<W: Write>(mut self, feeder: &mut Feeder<'_, W>) -> Result<Read, RunError> {
        // Rounds in a row with nothing out to the workers.
        let mut idle = 0;
        loop {
            if let Some(stop) = interrupt::requested() {
                return Err(stop.into());
            }
            // A block at a time, each advance then moves a block's worth of time points:
            // the operators' output vectors stay small enough to be reused.
            let mut took = false;
            for index in 0..self.sources.len() {
                took = took || self.take_back(index, feeder)?;
            }
            let pushed = self.pump(feeder)?;
            match self.end() {
                Some(End::Failed(index, at)) => {
                    let to = at.max(self.advanced);
                    feeder.advance(self.bounds.start, to)?;
                    let failed = std::mem::replace(&mut self.sources[index].state, State::Ended);
                    return Err(match failed {
                        State::Failed { error, .. } => stream_error(error),
                        _ => RunError::Cluster("reading on the workers lost an error".to_owned()),
                    });
                }
                Some(End::Done) => {
                    let end = self.bounds.until.or(self.max_seen);
                    let to = end
                        .filter(|&end| end >= self.bounds.start)
                        .map(|end| end + 1);
                    let to = to.unwrap_or(self.advanced).max(self.advanced);
                    feeder.advance(self.bounds.start, to)?;
                    let kinds = std::mem::take(&mut self.sources)
                        .into_iter()
                        .map(|s| s.kind);
                    return Ok(self.finish(kinds));
                }
                None => {}
            }
            let frontier = self.frontier();
            if frontier > self.advanced || pushed {
                self.advanced = self.advanced.max(frontier);
                feeder.advance(self.bounds.start, self.advanced)?;
            }
            if pushed || took {
                idle = 0;
                continue;
            }
            self.dispatch(feeder)?;
            if self.in_flight == 0 {
                // Nothing is out: the next round settles a file that has just ended.
                idle += 1;
                if idle > 2 {
                    return Err(RunError::Cluster(
                        "reading on the workers stopped making progress".to_owned(),
                    ));
                }
                continue;
            }
            idle = 0;
            let (source, seq, summary, again) = feeder.next_parsed()?;
            if let Some(Kind::Blocks(blocks)) = self.sources.get_mut(source).map(|s| &mut s.kind) {
                if let Some(out) = blocks.out.iter_mut().find(|out| out.seq == seq) {
                    out.summary = Some((summary, again));
                }
            }
        }
    }

    /// The totals once reading is over.
    fn finish<'k>(&self, kinds: impl Iterator<Item = Kind<'k, 's>>) -> Read
    where
        's: 'k,
    {
        let mut skipped = SkipCounts::default();
        for kind in kinds {
            match kind {
                Kind::Blocks(blocks) => skipped.merge(blocks.order.skipped().clone()),
                Kind::Facts { source, .. } => skipped.merge(source.skipped()),
            }
        }
        Read {
            fed: self.fed.clone(),
            skipped,
        }
    }

    /// Counts facts read here and adds those in the timeline to the next batch; `false`
    /// once one is after it (the source is read no further).
    fn take_in<W: Write>(&mut self, facts: Vec<InputFact>, feeder: &mut Feeder<'_, W>) -> bool {
        for fact in facts {
            if self.bounds.after(fact.time) {
                return false;
            }
            self.take_one(fact, feeder);
        }
        true
    }

    /// Counts a fact read here (in the timeline or before it) and adds it to the next
    /// batch if it is in the timeline.
    fn take_one<W: Write>(&mut self, fact: InputFact, feeder: &mut Feeder<'_, W>) {
        self.max_seen = self.max_seen.max(Some(fact.time));
        if fact.time < self.bounds.start {
            self.fed.dropped += 1;
        } else {
            self.fed.input_facts += 1;
            feeder.push_point(fact.pred, fact.args, fact.time);
        }
    }

    /// Reads the rest of source `index`'s first block here.
    fn take_rest<W: Write>(&mut self, index: usize, rest: &RawBlock, feeder: &mut Feeder<'_, W>) {
        let bounds = self.bounds;
        let Kind::Blocks(blocks) = &mut self.sources[index].kind else {
            return;
        };
        let taken = blocks
            .order
            .take_until(blocks.raw.like(), rest, |f| bounds.after(f.time));
        let Taken {
            facts, error, last, ..
        } = taken;
        let ended = !self.take_in(facts.unwrap_or_default(), feeder);
        self.settle(index, last, error, ended);
    }

    /// Source `index`'s state after a block: its last fact at `last`, an error, or the
    /// end of its timeline.
    fn settle(
        &mut self,
        index: usize,
        last: Option<u64>,
        error: Option<Box<StreamError>>,
        ended: bool,
    ) {
        let state = &mut self.sources[index].state;
        let State::Open { latest } = state else {
            return;
        };
        if let Some(last) = last.filter(|_| !ended) {
            *latest = (*latest).max(last);
        }
        let latest = *latest;
        if ended {
            *state = State::Ended;
        } else if let Some(error) = error {
            *state = State::Failed {
                after: latest,
                error,
            };
        }
    }

    /// Takes back the next block of source `index` if its summary is in: it is read as
    /// the sequential reader reads it, and its worker introduces its facts. Whether one
    /// was taken.
    fn take_back<W: Write>(
        &mut self,
        index: usize,
        feeder: &mut Feeder<'_, W>,
    ) -> Result<bool, RunError> {
        let bounds = self.bounds;
        {
            let Kind::Blocks(blocks) = &mut self.sources[index].kind else {
                return Ok(false);
            };
            if blocks.out.front().is_none_or(|out| out.summary.is_none()) {
                if blocks.exhausted && blocks.out.is_empty() {
                    let error = blocks.read_error.take();
                    self.settle(index, None, error, false);
                    if let State::Open { .. } = self.sources[index].state {
                        self.sources[index].state = State::Ended;
                    }
                }
                return Ok(false);
            }
            let Some(Out {
                seq,
                block,
                worker,
                summary: Some(summary),
            }) = blocks.out.pop_front()
            else {
                return Ok(false);
            };
            self.in_flight -= 1;
            let open = matches!(self.sources[index].state, State::Open { .. });
            let Kind::Blocks(blocks) = &mut self.sources[index].kind else {
                return Ok(false);
            };
            if !open {
                // The source stopped before this block: its facts are not read.
                let commit = ToWorker::Commit {
                    source: index,
                    seq,
                    facts: Some(Vec::new()),
                    bounds: (bounds.start, bounds.until),
                };
                feeder.send_to(worker, commit)?;
                return Ok(true);
            }
            let like = blocks.raw.like().clone();
            let (summary, again) = summary;
            let cut = again || summary.last.is_some_and(|last| bounds.after(last));
            let taken = if cut {
                blocks
                    .order
                    .take_until(&like, &block, |f| bounds.after(f.time))
            } else {
                blocks.order.take(&like, &block, summary)
            };
            let Taken {
                facts, error, last, ..
            } = taken;
            let within = match &facts {
                Some(facts) => facts
                    .iter()
                    .map(|f| f.time)
                    .filter(|&t| !bounds.after(t))
                    .max(),
                None => last,
            };
            self.max_seen = self.max_seen.max(within);
            let ended = facts
                .as_ref()
                .is_some_and(|facts| facts.iter().any(|f| bounds.after(f.time)));
            let commit = ToWorker::Commit {
                source: index,
                seq,
                facts,
                bounds: (bounds.start, bounds.until),
            };
            feeder.send_to(worker, commit)?;
            self.settle(index, within, error, ended);
        }
        Ok(true)
    }

    /// Reads the sources read here up to the files' latest times (all of them once the
    /// files have ended), at most [`FACTS_PER_BATCH`] facts at a time; whether it read any.
    fn pump<W: Write>(&mut self, feeder: &mut Feeder<'_, W>) -> Result<bool, RunError> {
        let target = self
            .sources
            .iter()
            .filter(|s| matches!(s.kind, Kind::Blocks(_)))
            .filter_map(|s| match s.state {
                State::Open { latest } => Some(latest),
                _ => None,
            })
            .min()
            .unwrap_or(u64::MAX);
        let mut read = 0;
        for index in 0..self.sources.len() {
            while let Source {
                kind: Kind::Facts { source, head },
                state: State::Open { .. },
            } = &mut self.sources[index]
            {
                let Some(fact) = head.take_if(|f| f.time <= target && read < FACTS_PER_BATCH)
                else {
                    let next = head.as_ref().map(|f| f.time);
                    self.sources[index].state = match next {
                        Some(latest) => State::Open { latest },
                        None => State::Ended,
                    };
                    break;
                };
                if self.bounds.after(fact.time) {
                    // Read no further, as the driver reads no further.
                    self.sources[index].state = State::Ended;
                    break;
                }
                let time = fact.time;
                let next = next_fact(source);
                read += 1;
                self.take_one(fact, feeder);
                match next {
                    Ok(next) => {
                        if let Kind::Facts { head, .. } = &mut self.sources[index].kind {
                            *head = next;
                        }
                    }
                    Err(RunError::Stream(error)) => {
                        self.sources[index].state = State::Failed { after: time, error };
                    }
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(read > 0)
    }

    /// Hands out blocks to the workers in turn, of the file furthest behind, while fewer
    /// than [`BLOCKS_PER_WORKER`] per worker are out.
    fn dispatch<W: Write>(&mut self, feeder: &mut Feeder<'_, W>) -> Result<(), RunError> {
        let most = BLOCKS_PER_WORKER * feeder.workers().max(1);
        while self.in_flight < most {
            let behind = self
                .sources
                .iter()
                .enumerate()
                .filter_map(|(index, s)| match (&s.kind, &s.state) {
                    (Kind::Blocks(b), State::Open { latest }) if !b.exhausted => {
                        Some((*latest, b.out.len(), index))
                    }
                    _ => None,
                })
                .min();
            let Some((_, _, index)) = behind else {
                return Ok(());
            };
            let Kind::Blocks(blocks) = &mut self.sources[index].kind else {
                return Ok(());
            };
            match blocks.raw.next() {
                None => blocks.exhausted = true,
                Some(Err(error)) => {
                    blocks.exhausted = true;
                    blocks.read_error = Some(error);
                }
                Some(Ok(block)) => {
                    let seq = blocks.next_seq;
                    let worker = if feeder.remote_reading() {
                        // Every process knows which of its copy's blocks it will be asked for.
                        owner(index, seq, feeder.workers())
                    } else {
                        let worker = self.next_worker;
                        self.next_worker = (worker + 1) % feeder.workers().max(1);
                        worker
                    };
                    blocks.next_seq += 1;
                    let parse = ToWorker::Parse {
                        source: index,
                        seq,
                        block: block.clone(),
                        like: blocks.raw.like().clone(),
                    };
                    blocks.out.push_back(Out {
                        seq,
                        block,
                        worker,
                        summary: None,
                    });
                    self.in_flight += 1;
                    feeder.send_to(worker, parse)?;
                }
            }
            // A file that has just ended is settled at the next `take_back`.
        }
        Ok(())
    }

    /// Every time point before this is complete: no source can still give a fact there.
    fn frontier(&self) -> u64 {
        let earliest = self
            .sources
            .iter()
            .map(|s| match &s.state {
                State::Open { latest } => *latest,
                State::Failed { after, .. } => *after,
                State::Ended => u64::MAX,
            })
            .min()
            .unwrap_or(u64::MAX);
        let end = self.bounds.until.map_or(u64::MAX, |until| until + 1);
        earliest.min(end)
    }

    /// Whether reading is over: every source ended, or the first error the sequential
    /// driver would meet is known to be the first (every other source has read past it
    /// without one, or failed later: by time, then by the sources' order).
    fn end(&self) -> Option<End> {
        let failed = self
            .sources
            .iter()
            .enumerate()
            .filter_map(|(index, s)| match s.state {
                State::Failed { after, .. } => Some((after, index)),
                _ => None,
            })
            .min();
        match failed {
            Some((at, first)) => {
                let settled = self.sources.iter().enumerate().all(|(index, s)| {
                    index == first
                        || match s.state {
                            State::Ended => true,
                            State::Open { latest } => latest > at,
                            State::Failed { after, .. } => (after, index) > (at, first),
                        }
                });
                settled.then_some(End::Failed(first, at))
            }
            None => self
                .sources
                .iter()
                .all(|s| matches!(s.state, State::Ended))
                .then_some(End::Done),
        }
    }
}

/// A process other than 0 where every process reads its own blocks: its calling thread
/// cuts its own copy of each file into blocks, as process 0 cuts its, and hands each of
/// its workers the block process 0 has told it to parse ([`FromWorker::NeedBlock`]),
/// keeping on the way only the blocks its own workers will be told to; until every
/// worker of the process is done. `cluster`: the workers of the whole cluster, and the
/// index of this process's first.
pub(super) fn serve_blocks(
    mut raws: Vec<Option<RawBlocks>>,
    to_workers: &[Sender<ToWorker>],
    from_workers: &Receiver<FromWorker>,
    wakers: &Wakers,
    (workers, first): (usize, usize),
) {
    let local = to_workers.len();
    let mine =
        |source: usize, seq: u64| (first..first + local).contains(&owner(source, seq, workers));
    // Per source, the blocks cut so far, and those cut for this process's workers and
    // not asked for yet.
    let mut cut = vec![0u64; raws.len()];
    let mut kept: HashMap<(usize, u64), RawBlock> = HashMap::new();
    let mut done = 0;
    while done < local {
        let Ok(message) = from_workers.recv() else {
            return;
        };
        let (worker, source, seq) = match message {
            FromWorker::NeedBlock {
                worker,
                source,
                seq,
            } => (worker, source, seq),
            FromWorker::Done { .. } => {
                done += 1;
                continue;
            }
            _ => continue,
        };
        let Some(raw) = raws.get_mut(source).and_then(Option::as_mut) else {
            continue;
        };
        let block = loop {
            if let Some(block) = kept.remove(&(source, seq)) {
                break Ok(block);
            }
            if cut[source] > seq {
                break Err(format!("block {seq} was asked for twice"));
            }
            match raw.next() {
                None => break Err("the file ends before the block process 0 has".to_owned()),
                Some(Err(error)) => break Err(error.message.clone()),
                Some(Ok(block)) => {
                    let at = cut[source];
                    cut[source] += 1;
                    if at == seq {
                        break Ok(block);
                    }
                    if mine(source, at) {
                        kept.insert((source, at), block);
                    }
                }
            }
        };
        let like = raw.like().clone();
        let reply = ToWorker::Block {
            source,
            seq,
            block,
            like,
        };
        if to_workers[worker].send(reply).is_ok() {
            super::worker::wake(wakers, worker);
        }
    }
}

/// The worker (of the whole cluster's `workers`) that parses block `seq` of source
/// `source` where every process reads its own blocks.
pub(super) fn owner(source: usize, seq: u64, workers: usize) -> usize {
    ((source as u64 + seq) % workers.max(1) as u64) as usize
}

enum End {
    /// Source `.0` failed after its facts at `.1`.
    Failed(usize, u64),
    Done,
}

/// The next fact of a source read here; a read that failed because the run is being
/// stopped reports the stop.
fn next_fact(source: &mut Box<dyn FactSource + '_>) -> Result<Option<InputFact>, RunError> {
    source.next_fact().map_err(stream_error)
}

/// An input error, or the stop that caused it.
fn stream_error(error: Box<StreamError>) -> RunError {
    match interrupt::requested() {
        Some(stop) => stop.into(),
        None => RunError::Stream(error),
    }
}
