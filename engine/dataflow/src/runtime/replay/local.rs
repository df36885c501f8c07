//! A dataflow on the thread that feeds it: a timely worker of its own, alone in its
//! computation (no exchange with any other thread, no progress to agree on), fed time
//! point by time point in batches, its output of each batch taken in output order once
//! the frontier has passed the batch.
//!
//! The input is diffed here as the calling thread diffs it for the threaded workers
//! (`PointDiff`: a fact that keeps holding costs nothing downstream), except the facts of
//! predicates that ♢ windows alone read, which go in as points. A batch ends after at most
//! `batch_points` time points or `batch_updates` changes, as the threaded feeder's do.

use std::cell::RefCell;
use std::rc::Rc;

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;
use timely::communication::allocator::Allocator;
use timely::communication::allocator::thread::Thread;
use timely::dataflow::ProbeHandle;

use super::super::feeder::Batch;
use super::super::messages::Update;
use super::super::order::{OrderKey, in_output_order, in_time_order};
use super::super::profile::Profile;
use super::super::worker::{Components, Inputs, Route, build};
use super::Shared;
use crate::operators::UNIT_TAG;
use crate::operators::points::PointDiff;

/// One dataflow and the batch it is being fed (see the module docs).
pub(super) struct Local {
    worker: timely::worker::Worker,
    inputs: Inputs,
    probe: ProbeHandle<u64>,
    captured: Rc<RefCell<Vec<Update>>>,
    diff: PointDiff<(PredId, Row)>,
    /// The predicates fed as points, never diffed (empty where there are none).
    point_preds: Vec<bool>,
    batch: Batch,
    batch_start: Option<u64>,
    batch_points: u64,
    /// Time points of a batch of a quiet stretch (see [`Local::quiet`]).
    stretch: u64,
    /// Whether a quiet stretch's batches may grow: not where its output writes lines at
    /// every time point ([`Local::quiet_grows`]).
    grows: bool,
    /// The first time point of the batch fed that has no input, if one has none.
    quiet_from: Option<u64>,
    /// The most time points back any rule reads ([`super::super::messages::reach`]).
    reach: u64,
    batch_updates: usize,
    /// Every time point before this one has been fed.
    fed_to: u64,
    /// The first time point fed, where the unit row holds from.
    first: Option<u64>,
    rank: Vec<usize>,
    /// The sink takes a time point's changes in any order: the output is only put in
    /// time order.
    any_order: bool,
    order: Vec<OrderKey>,
    /// Output taken from the dataflow, not yet in order.
    taken: Vec<Update>,
    components: Components,
    profile: Option<Profile>,
}

impl Local {
    /// The dataflow of `shared`, on a worker of its own; with `kept`, only the printed
    /// predicates it says are captured (a shard other than the first leaves those held
    /// everywhere to it).
    pub(super) fn new(shared: &Shared, kept: Option<&[bool]>) -> Local {
        let config = timely::WorkerConfig::default().idle_spin(std::time::Duration::ZERO);
        let allocator = Allocator::Thread(Thread::default());
        let mut worker =
            timely::worker::Worker::new(config, allocator, Some(std::time::Instant::now()));
        let program = &shared.program;
        let mut inputs: Inputs = (0..program.predicates.len() + 1)
            .map(|_| timely::dataflow::operators::vec::input::Handle::new())
            .collect();
        let probe = ProbeHandle::new();
        let captured: Rc<RefCell<Vec<Update>>> = Rc::new(RefCell::new(Vec::new()));
        let profile = shared.stats.then(|| Profile::start(&mut worker));
        let (_, components) = build(
            &mut worker,
            program,
            &shared.plan,
            &shared.outputs,
            &mut inputs,
            &probe,
            &captured,
            (Route::Here, false, shared.stats),
            &shared.at_sink,
            &shared.point_preds,
            (false, 1),
            kept,
        );
        let channels = program.predicates.len() + 1;
        Local {
            worker,
            inputs,
            probe,
            captured,
            diff: PointDiff::default(),
            point_preds: if shared.point_preds.contains(&true) {
                shared.point_preds.clone()
            } else {
                Vec::new()
            },
            batch: Batch::new(channels),
            batch_start: None,
            batch_points: shared.batch_points,
            stretch: shared.batch_points,
            grows: true,
            quiet_from: None,
            reach: super::super::messages::reach(&shared.program),
            batch_updates: shared.batch_updates,
            fed_to: 0,
            first: None,
            rank: shared.rank.clone(),
            any_order: shared.any_order,
            order: Vec::new(),
            taken: Vec::new(),
            components,
            profile,
        }
    }

    /// Every time point before this one has been fed.
    pub(super) fn fed_to(&self) -> u64 {
        self.fed_to
    }

    /// The unit row holds from the first time point fed.
    fn start(&mut self, t: u64) {
        if self.first.is_none() {
            self.first = Some(t);
            self.fed_to = t;
            self.batch.push(UNIT_TAG, Row::new(), t, 1);
        }
        self.batch_start.get_or_insert(t);
    }

    /// Time point `t` (the next one) holds `input`: its changes go into the batch.
    /// Whether the batch is full (see [`Local::run`]).
    pub(super) fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> bool {
        self.start(t);
        (self.batch).push_diffed(&mut self.diff, &self.point_preds, t, input);
        self.fed_to = t + 1;
        self.full()
    }

    /// The time points `from..to` hold no input; at most a batch of them is fed (the
    /// facts held before stop at `from`). Returns where the next call goes on from.
    ///
    /// A batch whose time points without input output nothing makes a stretch's batches
    /// twice as long from then on, one whose quiet time points output something short
    /// again: where nothing happens on its own, a stretch costs a batch or a few however
    /// long (timely's frontier passes the time points between in one step); where the
    /// program changes on its own, batches stay short, so that output flows and memory
    /// stays bounded.
    pub(super) fn quiet(&mut self, from: u64, to: u64) -> u64 {
        self.start(from);
        let batch = &mut self.batch;
        self.diff
            .left(|(pred, row)| batch.push(pred as u32, row, from, -1));
        let start = self.batch_start.unwrap_or(from);
        let end = to.min(start.saturating_add(self.stretch).max(from + 1));
        self.quiet_from.get_or_insert(from);
        self.fed_to = end;
        end
    }

    /// Whether a quiet stretch's batches may grow (see [`Local::quiet`]): not where what
    /// is written of the output writes lines at every time point, so that such a stretch
    /// goes in short batches, a stop request seen between them.
    pub(super) fn quiet_grows(&mut self, grows: bool) {
        self.grows = grows;
        if !grows {
            self.stretch = self.batch_points;
        }
    }

    /// Whether the batch is due to run.
    pub(super) fn full(&self) -> bool {
        let points = self.fed_to - self.batch_start.unwrap_or(self.fed_to);
        points >= self.batch_points || self.batch.len() >= self.batch_updates
    }

    /// Runs the dataflow through every time point fed and moves its output, in output
    /// order, onto the end of `into`.
    pub(super) fn run(&mut self, into: &mut Vec<Update>) {
        let Some(first) = self.first else {
            return;
        };
        self.batch_start = None;
        let quiet_from = self.quiet_from.take();
        let to = self.fed_to;
        for (handle, mut part) in self.inputs.iter_mut().zip(self.batch.take()) {
            if !part.is_empty() {
                handle.send_batch(&mut part);
            }
            if to > *handle.time() {
                handle.advance_to(to);
            }
        }
        while self.probe.less_than(&to) {
            self.worker.step();
        }
        std::mem::swap(&mut self.taken, &mut *self.captured.borrow_mut());
        if let Some(quiet_from) = quiet_from {
            let own = quiet_from.saturating_add(self.reach);
            let changed = self.taken.iter().any(|u| u.1 >= own);
            self.stretch = match self.grows && !changed {
                true => self.stretch.saturating_mul(2),
                false => self.batch_points,
            };
        }
        if self.any_order {
            in_time_order(&mut self.taken, first, into);
        } else {
            in_output_order(&mut self.taken, &self.rank, first, &mut self.order, into);
        }
    }

    /// Ends the dataflow where it is (what it would still output lies past the last
    /// time point run); with `--stats`, what each component did on it: its time
    /// scheduled (then the time outside the components) and its output updates.
    pub(super) fn finish(mut self) -> (Vec<std::time::Duration>, Vec<u64>) {
        let (operators, records) = &self.components;
        let times = match &self.profile {
            Some(profile) => profile.per_component(&mut self.worker, operators),
            None => Vec::new(),
        };
        (times, records.iter().map(|n| n.get()).collect())
    }
}
