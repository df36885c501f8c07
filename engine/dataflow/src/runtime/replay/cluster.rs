//! Replay by time in a cluster of processes: every process reads and evaluates its own
//! parts (part k is process k mod n's) from its own copy of the files, so no fact crosses
//! the network. Process 0's calling thread writes the output; the other processes send
//! their parts' bytes to it over the cluster's connections, through a small dataflow on
//! every worker (the *bus*: records exchanged to worker 0 of process 0, which passes them
//! to the writer as they come, never waiting).
//!
//! A part of another process that stopped on an error, or found a file out of order,
//! says only that it failed: process 0 then reads the rest of the input from that part on
//! itself, as one part, and meets the error as the sequential reader does.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use stgflow_io::drive::{Fed, RunError, RunSummary};
use stgflow_io::stream::SentSkips;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Exchange, Probe};

use super::outbox::{Out, Outbox, PartDone, Piece};
use super::parts::Cut;
use super::slots::{Slot, Slots};
use super::{PartSinks, Shared, by_time};

/// What crosses the bus.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Wire {
    Bytes {
        part: u64,
        bytes: Vec<u8>,
        through: u64,
    },
    Done {
        part: u64,
        done: SentDone,
    },
}

/// What a part of another process did ([`PartDone`], its error only as whether it
/// failed).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct SentDone {
    first: Option<u64>,
    last: Option<u64>,
    time_points: u64,
    input_facts: u64,
    dropped: u64,
    skipped: Vec<SentSkips>,
    failed: bool,
    nanos: Vec<u64>,
    records: Vec<u64>,
}

impl From<PartDone> for SentDone {
    fn from(done: PartDone) -> SentDone {
        SentDone {
            first: done.summary.first,
            last: done.summary.last,
            time_points: done.summary.time_points,
            input_facts: done.fed.input_facts,
            dropped: done.fed.dropped,
            skipped: done.skipped.iter().map(SentSkips::from).collect(),
            failed: done.error.is_some() || done.misplaced,
            nanos: (done.times.iter())
                .map(|t| u64::try_from(t.as_nanos()).unwrap_or(u64::MAX))
                .collect(),
            records: done.records,
        }
    }
}

impl From<SentDone> for PartDone {
    /// A part that failed reads as misplaced: the writer reads the rest from it on.
    fn from(sent: SentDone) -> PartDone {
        PartDone {
            summary: RunSummary {
                first: sent.first,
                last: sent.last,
                time_points: sent.time_points,
                ..RunSummary::default()
            },
            fed: Fed {
                input_facts: sent.input_facts,
                dropped: sent.dropped,
            },
            skipped: sent.skipped.into_iter().map(Into::into).collect(),
            error: None,
            misplaced: sent.failed,
            times: sent
                .nanos
                .into_iter()
                .map(std::time::Duration::from_nanos)
                .collect(),
            records: sent.records,
        }
    }
}

/// A worker's ends of the bus.
struct Bus {
    input: InputHandle<u64, (u64, Wire)>,
    inbox: Rc<RefCell<Vec<Wire>>>,
    probe: ProbeHandle<u64>,
}

impl Bus {
    /// The bus dataflow, built alike on every worker.
    fn build(worker: &mut timely::worker::Worker) -> Bus {
        let mut input = InputHandle::new();
        let inbox: Rc<RefCell<Vec<Wire>>> = Rc::new(RefCell::new(Vec::new()));
        let probe = ProbeHandle::new();
        let into = inbox.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .exchange(|(target, _): &(u64, Wire)| *target)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Pipeline,
                    "Bus",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|_, data| {
                                into.borrow_mut()
                                    .extend(data.drain(..).map(|(_, wire)| wire));
                            })
                        }
                    },
                )
                .probe_with(&probe);
        });
        Bus {
            input,
            inbox,
            probe,
        }
    }

    /// Sends `wire` to worker 0 of process 0, at once: the exchange sends what it holds
    /// when the input's time moves on.
    fn send(&mut self, worker: &mut timely::worker::Worker, wire: Wire) {
        self.input.send((0, wire));
        let next = *self.input.time() + 1;
        self.input.advance_to(next);
        worker.step();
    }

    /// Passes what has come on to `outbox` (worker 0 of process 0).
    fn relay(&self, outbox: &Outbox) {
        relay(&self.inbox, outbox);
    }

    /// Closes this worker's end and steps until every worker's end is closed and every
    /// record has come (relayed to `outbox` on worker 0 of process 0).
    fn close(self, worker: &mut timely::worker::Worker, to: Option<&Outbox>) {
        let Bus {
            input,
            inbox,
            probe,
        } = self;
        input.close();
        while !probe.done() {
            worker.step_or_park(None);
            if let Some(outbox) = to {
                relay(&inbox, outbox);
            }
        }
        if let Some(outbox) = to {
            relay(&inbox, outbox);
        }
    }
}

/// Passes what has come over the bus into `inbox` on to `outbox`.
fn relay(inbox: &RefCell<Vec<Wire>>, outbox: &Outbox) {
    for wire in inbox.borrow_mut().drain(..) {
        outbox.forward(match wire {
            Wire::Bytes {
                part,
                bytes,
                through,
            } => Piece::Bytes {
                part: part as usize,
                bytes,
                through,
            },
            Wire::Done { part, done } => Piece::Done {
                part: part as usize,
                done: Box::new(done.into()),
            },
        });
    }
}

/// A part's output sent over the bus (a part of another process than 0).
struct Remote<'w> {
    bus: RefCell<(Bus, &'w mut timely::worker::Worker)>,
    slots: &'w Slots,
}

impl Out for Remote<'_> {
    fn bytes<'a>(
        &'a self,
        part: usize,
        bytes: Vec<u8>,
        through: u64,
        _slot: &mut Option<Slot<'a>>,
    ) -> bool {
        let (bus, worker) = &mut *self.bus.borrow_mut();
        let part = part as u64;
        bus.send(
            worker,
            Wire::Bytes {
                part,
                bytes,
                through,
            },
        );
        true
    }

    fn done(&self, part: usize, done: PartDone) {
        let (bus, worker) = &mut *self.bus.borrow_mut();
        let done = done.into();
        bus.send(
            worker,
            Wire::Done {
                part: part as u64,
                done,
            },
        );
    }

    fn wanted(&self, _part: usize) -> bool {
        true
    }

    fn buffer(&self, _like: usize) -> Vec<u8> {
        Vec::new()
    }

    fn slots(&self) -> &Slots {
        self.slots
    }
}

/// A part's output to this process's writer by worker 0 of process 0, which relays what
/// comes over the bus meanwhile, each time a piece of its own goes out.
struct Relaying<'w> {
    outbox: &'w Outbox,
    bus: RefCell<(Bus, &'w mut timely::worker::Worker)>,
}

impl Relaying<'_> {
    fn pump(&self) {
        let (bus, worker) = &mut *self.bus.borrow_mut();
        worker.step();
        bus.relay(self.outbox);
    }
}

impl Out for Relaying<'_> {
    fn bytes<'a>(
        &'a self,
        part: usize,
        bytes: Vec<u8>,
        through: u64,
        slot: &mut Option<Slot<'a>>,
    ) -> bool {
        self.pump();
        self.outbox.bytes(part, bytes, through, slot)
    }

    fn done(&self, part: usize, done: PartDone) {
        self.outbox.done(part, done);
        self.pump();
    }

    fn wanted(&self, part: usize) -> bool {
        self.pump();
        self.outbox.wanted(part)
    }

    fn buffer(&self, like: usize) -> Vec<u8> {
        self.outbox.buffer(like)
    }

    fn slots(&self) -> &Slots {
        &self.outbox.slots
    }
}

/// Per process of a cluster of `processes` of `workers` workers each, its workers that
/// evaluate parts: all but process 0's relay (where it has others).
pub(super) fn evaluators(processes: usize, workers: usize) -> Vec<usize> {
    (0..processes.max(1))
        .map(|p| workers.max(1) - usize::from(p == 0 && processes > 1 && workers > 1))
        .collect()
}

/// The process of each of `parts` parts, in turn as the processes' `evaluators` weigh
/// them (smooth weighted round robin: each process's share of any run of parts is about
/// its share of the evaluators, so every process has early parts).
pub(super) fn owners(parts: usize, evaluators: &[usize]) -> Vec<usize> {
    let total: usize = evaluators.iter().sum::<usize>().max(1);
    let mut credit = vec![0isize; evaluators.len()];
    (0..parts)
        .map(|_| {
            for (credit, &weight) in credit.iter_mut().zip(evaluators) {
                *credit += weight as isize;
            }
            let (owner, _) = (credit.iter().enumerate())
                .max_by_key(|&(p, &c)| (c, std::cmp::Reverse(p)))
                .unwrap_or((0, &0));
            credit[owner] -= total as isize;
            owner
        })
        .collect()
}

/// What every worker of a process shares.
pub(super) struct Work {
    pub(super) shared: Arc<Shared>,
    pub(super) cut: Arc<Cut>,
    pub(super) sinks: Arc<PartSinks>,
    pub(super) outbox: Arc<Outbox>,
    /// This process's parts, and the next to take.
    pub(super) parts: Vec<usize>,
    pub(super) next: AtomicUsize,
    /// This process's index and its workers.
    pub(super) process: usize,
    pub(super) workers: usize,
}

impl Work {
    /// A timely worker of the cluster: it evaluates parts of its process (sending them
    /// over the bus from a process other than 0), then ends the bus; worker 0 of process
    /// 0 relays what comes over it to the writer, and takes parts only where it is its
    /// process's only worker (relaying costs about what a part does).
    pub(super) fn work(&self, worker: &mut timely::worker::Worker) {
        self.evaluate(worker);
        if self.shared.stats {
            self.shared.threads.record();
        }
    }

    /// [`Work::work`] but for the record of the worker's CPU time.
    fn evaluate(&self, worker: &mut timely::worker::Worker) {
        let bus = Bus::build(worker);
        let relay = self.process == 0 && worker.index() % self.workers == 0;
        if relay && self.workers > 1 {
            bus.close(worker, Some(&self.outbox));
            return;
        }
        if self.process == 0 && !relay {
            self.parts(&*self.outbox);
            bus.close(worker, None);
            return;
        }
        if relay {
            let relaying = Relaying {
                outbox: &self.outbox,
                bus: RefCell::new((bus, worker)),
            };
            self.parts(&relaying);
            let (bus, worker) = relaying.bus.into_inner();
            bus.close(worker, Some(&self.outbox));
            return;
        }
        let remote = Remote {
            bus: RefCell::new((bus, worker)),
            slots: &self.outbox.slots,
        };
        self.parts(&remote);
        let (bus, worker) = remote.bus.into_inner();
        bus.close(worker, None);
    }

    /// Evaluates this process's parts while there are any left, sending each to `out`.
    pub(super) fn parts(&self, out: &dyn Out) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(&k) = self.parts.get(i) else {
                return;
            };
            if !out.wanted(k) {
                return;
            }
            let done = match self.sinks.part(&self.cut, k) {
                // A worker that panics ends the run with an error, not a writer waiting
                // for the part for ever.
                Ok((sink, emit_from)) => {
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        by_time::evaluate(&self.shared, &self.cut, k, sink, emit_from, out)
                    }))
                    .unwrap_or_else(|panic| PartDone {
                        error: Some(RunError::Cluster(format!(
                            "a worker failed on part {k} of the input: {}",
                            panic_message(panic.as_ref())
                        ))),
                        ..PartDone::default()
                    })
                }
                Err(error) => PartDone {
                    error: Some(error.into()),
                    ..PartDone::default()
                },
            };
            out.done(k, done);
        }
    }
}

/// What a panic said.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    (panic.downcast_ref::<String>().map(String::as_str))
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("a panic")
}
