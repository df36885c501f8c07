//! One timely worker: builds the dataflow; every worker of process 0 also feeds it the
//! calling thread's batches and sends back its own share of the output in output order.

use std::cell::RefCell;
use std::rc::Rc;

use crossbeam_channel::{Receiver, Sender};
use differential_dataflow::{AsCollection, Hashable};
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::Row;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Exchange, Probe};

use stgflow_io::drive::Fed;
use stgflow_io::sink::{Files, Sink, Template};
use stgflow_io::stream::blocks::{BlockSummary, RawBlock, parse_block};
use stgflow_io::stream::{FactReader, InputFact};

use super::OutputSort;
use super::messages::{Control, FromWorker, IN_FLIGHT, ToWorker, Update, change};
use super::order::{in_output_order, in_time_order};
use super::profile::Profile;
use crate::operators::points::changes;
use crate::plan::Plan;
use crate::render::{AtSink, Output, render};

/// Input handles: one per predicate, then the unit row's. A batch goes in as one
/// container per predicate, moved, not copied record by record into a session and again
/// by an operator splitting a tagged stream.
pub(super) type Inputs = Vec<InputHandle<u64, (Row, u64, isize)>>;

/// Per serving worker, by local index, what wakes it from a park: the calling thread uses
/// it after sending a block to parse or commit ([`super::reading`]), which the worker takes
/// while it waits for the others.
pub(super) type Wakers = Vec<std::sync::OnceLock<timely::scheduling::SyncActivator>>;

/// Wakes the worker of local index `worker`, if it has started and not ended.
pub(super) fn wake(wakers: &Wakers, worker: usize) {
    if let Some(waker) = wakers.get(worker).and_then(|w| w.get()) {
        let _ = waker.activate();
    }
}

/// What every worker builds and how it reports.
#[derive(Debug)]
pub(super) struct Setup {
    pub(super) program: Program,
    pub(super) plan: Plan,
    /// The printed predicates.
    pub(super) outputs: Vec<PredId>,
    /// Whether the input comes as points, which the workers diff (else as changes).
    pub(super) points: bool,
    /// The predicates whose input comes as points and stays so, diffed nowhere: read by ♢
    /// windows alone ([`crate::render::fed_as_points`]).
    pub(super) point_preds: Vec<bool>,
    /// One file per printed predicate, written by the workers of process 0 (each its
    /// share of the predicates); else the output goes to the calling thread.
    pub(super) files: Option<Files>,
    /// Profile the serving workers per component (`--stats`).
    pub(super) stats: bool,
    /// Which thread puts the output in order.
    pub(super) output_sort: OutputSort,
    /// Format the output on the workers of process 0, each its share of the facts (by
    /// hash), as this sink does ([`Sink::keyed`]); else the calling thread formats it.
    pub(super) formatter: Option<Template>,
    /// The calling thread's sink takes a time point's changes in any order, not
    /// consolidated ([`Sink::in_any_order`]): the output is only put in time order.
    pub(super) any_order: bool,
    /// What the calling thread's sink, where it counts each fact's changes
    /// ([`Sink::counts_holding`]), takes over from the workers.
    pub(super) at_sink: AtSink,
    /// Every process reads its own blocks of the input ([`super::reading`]): the workers
    /// of the other processes parse and introduce the blocks process 0 gives them, told
    /// through a control dataflow ([`Control`]).
    pub(super) remote_reading: bool,
    /// Each worker's CPU time, recorded as it ends (`--stats`).
    pub(super) threads: super::ThreadTimes,
}

/// A worker's ends of the control dataflow ([`Control`]): what it sends, each message to
/// the worker of a global index, and what has come for it.
struct ControlPlane {
    input: InputHandle<u64, (u64, Control)>,
    inbox: Rc<RefCell<Vec<Control>>>,
}

impl ControlPlane {
    /// The control dataflow, built on every worker (after the main one).
    fn build(worker: &mut timely::worker::Worker) -> ControlPlane {
        let mut input = InputHandle::new();
        let inbox: Rc<RefCell<Vec<Control>>> = Rc::new(RefCell::new(Vec::new()));
        let sink = inbox.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .exchange(|(target, _): &(u64, Control)| *target)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Pipeline,
                    "Control",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|_, data| {
                                sink.borrow_mut().extend(data.drain(..).map(|(_, c)| c));
                            })
                        }
                    },
                );
        });
        ControlPlane { input, inbox }
    }

    /// Sends `control` to the worker of global index `target`, at once: the exchange
    /// sends what it holds when the input's time moves on (a flush alone keeps it), so
    /// each message has a time of its own.
    fn send(&mut self, target: usize, control: Control) {
        self.input.send((target as u64, control));
        let next = *self.input.time() + 1;
        self.input.advance_to(next);
    }

    /// What has come for this worker.
    fn take(&self) -> Vec<Control> {
        std::mem::take(&mut self.inbox.borrow_mut())
    }
}

/// Where a worker's output goes before it is captured.
#[derive(Clone)]
pub(super) enum Route {
    /// It stays on the worker that computed it.
    Here,
    /// To one worker (in a cluster: the worker of the same local index on process 0).
    To(u64),
    /// Each predicate's to the worker of process 0 that writes its file, by predicate id.
    ByPredicate(Rc<Vec<u64>>),
    /// Each fact's to the worker of process 0 that formats it, by the fact's hash over
    /// that many workers (the same on every process).
    ByFact(u64),
}

impl Route {
    /// The worker the output fact `row` of the predicate tagged `tag` goes to; `None`:
    /// this one.
    fn target(&self, tag: u32, row: &Row) -> Option<u64> {
        match self {
            Route::Here => None,
            Route::To(target) => Some(*target),
            Route::ByPredicate(owner) => Some(owner.get(tag as usize).copied().unwrap_or(0)),
            // Differential's hash, with its fixed seed: every process routes a fact alike.
            Route::ByFact(workers) => Some((tag, row).hashed() % workers),
        }
    }
}

/// One worker: builds the dataflow of `setup`; on process 0 it also feeds it the batches
/// of `from_main` (one receiver per local worker, by local index) and reports its output.
pub(super) fn work(
    worker: &mut timely::worker::Worker,
    setup: &Setup,
    from_main: &[Receiver<ToWorker>],
    to_main: &Sender<FromWorker>,
    wakers: &Wakers,
) {
    let (program, plan, outputs) = (&setup.program, &setup.plan, &setup.outputs[..]);
    let local = worker.index() % from_main.len();
    // Every worker keeps its own output, but in a cluster the output of a process other
    // than 0 goes to the worker of the same local index on process 0, whose calling
    // thread writes it; with files, each printed predicate's output goes to the worker of
    // process 0 that writes its file.
    let owner: Vec<u64> = {
        let mut owner = vec![0; program.predicates.len()];
        for (i, &p) in outputs.iter().enumerate() {
            owner[p] = (i % from_main.len()) as u64;
        }
        owner
    };
    let route = if setup.files.is_some() {
        Route::ByPredicate(Rc::new(owner.clone()))
    } else if worker.peers() > from_main.len() {
        Route::To(local as u64)
    } else {
        Route::Here
    };
    let probe = ProbeHandle::new();
    let captured: Rc<RefCell<Vec<Update>>> = Rc::new(RefCell::new(Vec::new()));
    let mut inputs: Inputs = (0..program.predicates.len() + 1)
        .map(|_| InputHandle::new())
        .collect();
    let serving = worker.index() < from_main.len();
    let profile = (setup.stats && serving).then(|| Profile::start(worker));
    let (address, components) = build(
        worker,
        program,
        plan,
        outputs,
        &mut inputs,
        &probe,
        &captured,
        // Every process builds the same dataflow, with --stats its counting operators too.
        (route, setup.points, setup.stats),
        &setup.at_sink,
        &setup.point_preds,
        (setup.formatter.is_some(), from_main.len()),
        None,
    );
    let mut control = setup.remote_reading.then(|| ControlPlane::build(worker));
    let channels = Channels {
        local,
        workers: from_main.len(),
        from_main: &from_main[local],
        to_main,
    };
    if let Some(plane) = control.take_if(|_| !serving) {
        // A worker of another process than 0: it parses and introduces the blocks its
        // own process cuts, as process 0 tells it.
        let _ = wakers[local].set(worker.sync_activator_for(address));
        let fed = serve_remote(worker, inputs, plane, &channels);
        let _ = to_main.send(FromWorker::Done {
            worker: local,
            fed,
            times: Vec::new(),
            records: Vec::new(),
        });
        return;
    }
    if serving {
        let _ = wakers[local].set(worker.sync_activator_for(address));
        // This worker's files: those of the printed predicates it owns; or its lines.
        let files = setup.files.as_ref().map(|files| {
            files
                .sink(std::io::sink(), program, 0, |p| owner[p] == local as u64)
                .map_err(|e| e.to_string())
        });
        let files = files.or_else(|| setup.formatter.clone().map(|t| Ok(Sink::keyed(t))));
        let keyed = setup.formatter.is_some();
        // Worker 0 relays between the calling thread and the other processes' workers.
        let control = control.filter(|_| worker.index() == 0);
        let fed = serve(
            worker,
            program,
            inputs,
            (&probe, &captured),
            &channels,
            (files, keyed, control, setup.output_sort, setup.any_order),
        );
        let (operators, records) = &components;
        let times = profile.map_or_else(Vec::new, |p| p.per_component(worker, operators));
        if setup.stats {
            setup.threads.record();
        }
        let _ = to_main.send(FromWorker::Done {
            worker: local,
            fed,
            times,
            records: records.iter().map(|n| n.get()).collect(),
        });
    }
}

/// Per component of the plan: the range of operator identifiers its rendering allocated,
/// and (with `--stats`) its output updates so far.
pub(super) type Components = (Vec<std::ops::Range<usize>>, Vec<Rc<std::cell::Cell<u64>>>);

/// A serving worker's ends of the channels to and from the calling thread.
struct Channels<'a> {
    /// The worker's index in its process.
    local: usize,
    /// The workers of its process.
    workers: usize,
    from_main: &'a Receiver<ToWorker>,
    to_main: &'a Sender<FromWorker>,
}

/// Builds the dataflow over `inputs`; its output, tagged with predicates, is moved into
/// `captured` on the worker `route` says, and `probe` passes a time once everything before it has been. Each predicate's
/// input facts come in as points (a fact given at t holds at t) and become changes on
/// every worker ([`changes`]) when `points` says so; `counting` and `at_sink` go to
/// [`render`].
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    worker: &mut timely::worker::Worker,
    program: &Program,
    plan: &Plan,
    outputs: &[PredId],
    inputs: &mut Inputs,
    probe: &ProbeHandle<u64>,
    captured: &Rc<RefCell<Vec<Update>>>,
    (route, points, counting): (Route, bool, bool),
    at_sink: &AtSink,
    point_preds: &[bool],
    formatted: (bool, usize),
    kept: Option<&[bool]>,
) -> (Vec<usize>, Components) {
    let predicates = program.predicates.len();
    let mut address = Vec::new();
    let mut components: Components = (Vec::new(), Vec::new());
    worker.dataflow::<u64, _, _>(|scope| {
        address = scope.addr().to_vec();
        let facts = inputs
            .iter_mut()
            .enumerate()
            .map(|(channel, handle)| {
                let input = scope.input_from(handle).as_collection();
                // The unit row (the last channel) comes in as a change, and so does
                // what a ♢ window alone reads (it takes points as they are).
                if points && channel < predicates && !point_preds[channel] {
                    changes(input)
                } else {
                    input
                }
            })
            .collect();
        // The printed predicates this worker captures: all, unless `kept` says otherwise.
        let mut printed = vec![false; program.predicates.len()];
        for &p in outputs {
            printed[p] = kept.is_none_or(|kept| kept.get(p) == Some(&true));
        }
        let printed = Rc::new(printed);
        let rendered = render(program, plan, facts, outputs, counting, at_sink);
        let mut derived = vec![false; predicates];
        for rule in &program.rules {
            derived[rule.head.pred] = true;
        }
        let (formatted, workers) = formatted;
        components = (rendered.operators, rendered.records);
        for out in rendered.outputs {
            let sink = captured.clone();
            match out {
                Output::Predicate(tag, out) => {
                    // Formatted on the workers, a fact's every change must reach the same
                    // worker: a derived fact's come from the one worker whose share it is,
                    // but an input fact's from whichever worker a batch went to.
                    let route = match &route {
                        Route::Here | Route::To(_) if formatted && !derived[tag as usize] => {
                            Route::ByFact(workers as u64)
                        }
                        other => other.clone(),
                    };
                    let route = (!matches!(route, Route::Here)).then(|| {
                        let route = route.clone();
                        move |(row, _, _): &(Row, u64, isize)| route.target(tag, row).unwrap_or(0)
                    });
                    let keep = printed.get(tag as usize).copied().unwrap_or(true);
                    capture(out.inner, route, move |data| {
                        if keep {
                            sink.borrow_mut()
                                .extend(data.drain(..).map(|(row, t, r)| ((tag, row), t, r)));
                        } else {
                            data.clear();
                        }
                    })
                }
                Output::Tagged(out) => {
                    let printed = printed.clone();
                    let route = (!matches!(route, Route::Here)).then(|| {
                        let route = route.clone();
                        move |((tag, row), _, _): &((u32, Row), u64, isize)| {
                            route.target(*tag, row).unwrap_or(0)
                        }
                    });
                    capture(out.inner, route, move |data| {
                        let is_printed = |tag: u32| printed.get(tag as usize) == Some(&true);
                        let mut sink = sink.borrow_mut();
                        if data.iter().all(|((tag, _), _, _)| is_printed(*tag)) {
                            sink.append(data);
                        } else {
                            sink.extend(data.drain(..).filter(|((tag, _), _, _)| is_printed(*tag)));
                        }
                    })
                }
            }
            .probe_with(probe);
        }
    });
    (address, components)
}

/// The sink a worker of process 0 writes through itself (files, or keyed lines), or why
/// it could not be made.
type WorkerSink = Result<Sink<std::io::Sink>, String>;

/// A serving worker's loop: each batch from the calling thread goes to the input handles
/// (a batch's facts come to one worker, the others only advance), the worker steps until
/// the output probe passes the batch's end, and its output before it goes back in output
/// order, sorted here, on every worker, rather than on one thread for all — or, where its
/// sink is `keyed`, as its lines formatted here ([`Sink::keyed`]); with files, to them.
fn serve(
    worker: &mut timely::worker::Worker,
    program: &Program,
    mut inputs: Inputs,
    (probe, captured): (&ProbeHandle<u64>, &Rc<RefCell<Vec<Update>>>),
    channels: &Channels<'_>,
    (files, keyed, control, output_sort, any_order): (
        Option<WorkerSink>,
        bool,
        Option<ControlPlane>,
        OutputSort,
        bool,
    ),
) -> Fed {
    // A file that cannot be created or written stops the run (the calling thread reports
    // it); the worker goes on stepping, writing nothing more, until told to finish.
    let mut files = match files {
        Some(Err(error)) => {
            let _ = channels.to_main.send(FromWorker::Failed { error });
            None
        }
        Some(Ok(sink)) => Some(sink),
        None => None,
    };
    // The next time point to write to the files.
    let mut next: Option<u64> = None;
    let count = inputs.len();
    let mut now = 0u64;
    let rank = stgflow_io::sink::name_ranks(program);
    let mut order: Vec<super::order::OrderKey> = Vec::new();
    let mut reading = Reading {
        control,
        ..Reading::default()
    };
    // A batch or the finish, taken from the channel while stepping (see below).
    let mut taken: Option<ToWorker> = None;
    loop {
        let message = match taken.take() {
            Some(message) => message,
            // Relaying for the other processes, the worker steps while it waits: what
            // they send comes through its control dataflow.
            None if reading.control.is_some() => {
                match next_relaying(worker, &mut reading, channels) {
                    Some(message) => message,
                    None => break,
                }
            }
            None => match channels.from_main.recv() {
                Ok(message) => message,
                Err(_) => break,
            },
        };
        let (mut parts, advance_to, first, recycled, last) = match message {
            ToWorker::Feed {
                parts,
                advance_to,
                first,
                recycled,
            } => (parts, advance_to, first, recycled, false),
            ToWorker::Finish { advance_to, first } => {
                (Vec::new(), advance_to, first, Vec::new(), true)
            }
            reading_message => {
                match reading.serve(reading_message, &mut inputs, now, channels.to_main) {
                    Ok(_) => continue,
                    Err(()) => break,
                }
            }
        };
        // Each predicate's facts go in as one container, moved, not copied.
        parts.resize_with(count, Vec::new);
        for (handle, part) in inputs.iter_mut().zip(&mut parts) {
            if part.iter().any(|(_, time, _)| *time < now) {
                part.retain(|(_, time, _)| *time >= now);
            }
            if !part.is_empty() {
                handle.send_batch(part);
            }
            if advance_to > *handle.time() {
                handle.advance_to(advance_to);
            }
        }
        now = now.max(advance_to);
        while probe.less_than(&now) {
            worker.step_or_park(None);
            if reading.relay_back(channels.to_main).is_err() {
                break;
            }
            // While the other workers catch up, the blocks that came meanwhile are parsed
            // and committed (the calling thread wakes this worker when it sends one):
            // otherwise a worker waits for one that is parsing, and then the other way
            // round.
            while taken.is_none() {
                let Ok(message) = channels.from_main.try_recv() else {
                    break;
                };
                match reading.serve(message, &mut inputs, now, channels.to_main) {
                    Ok(None) => {}
                    Ok(Some(other)) => taken = Some(other),
                    Err(()) => break,
                }
            }
        }
        // A buffer the calling thread wrote out may come back with its updates: they are
        // dropped here, where this worker allocated their rows.
        let mut ready = recycled;
        ready.clear();
        // Whichever thread waits for the other sorts. With every batch the calling thread
        // may send ahead waiting ([`IN_FLIGHT`]), this worker is the slower one, and the
        // calling thread, which waits to send the next, sorts this batch's output instead
        // (writing files or lines, the worker sorts).
        let waiting = channels.from_main.len() + usize::from(taken.is_some());
        let sorted = files.is_some()
            || match output_sort {
                OutputSort::Balanced => waiting < IN_FLIGHT,
                OutputSort::CallingThread => false,
            };
        {
            let mut all = captured.borrow_mut();
            let mut due = if all.iter().all(|(_, t, _)| *t < advance_to) {
                std::mem::take(&mut *all)
            } else {
                let (due, later): (Vec<Update>, Vec<Update>) =
                    all.drain(..).partition(|(_, t, _)| *t < advance_to);
                *all = later;
                due
            };
            if sorted && any_order {
                in_time_order(&mut due, first, &mut ready);
            } else if sorted {
                ready.reserve(due.len());
                in_output_order(&mut due, &rank, first, &mut order, &mut ready);
            } else {
                // `ready` is empty: its room goes back to `captured`.
                std::mem::swap(&mut ready, &mut due);
            }
            if all.capacity() == 0 {
                *all = due;
            }
        }
        if let Some(sink) = files.as_mut() {
            let written = write_files(sink, &mut ready, &mut next, (first, advance_to), last);
            if let Err(error) = written {
                files = None;
                let error = error.to_string();
                let _ = channels.to_main.send(FromWorker::Failed { error });
            }
        }
        let output = match files.as_mut() {
            Some(sink) if keyed => FromWorker::Lines {
                worker: channels.local,
                upto: advance_to,
                lines: sink.take_keyed(),
            },
            _ => FromWorker::Output {
                worker: channels.local,
                upto: advance_to,
                updates: ready,
                sorted,
            },
        };
        if channels.to_main.send(output).is_err() || last {
            break;
        }
    }
    drop(inputs);
    // Relaying for the other processes: what their workers introduced counts too, once
    // each has said so (told to finish before this worker was).
    let remote = worker.peers().saturating_sub(channels.workers);
    while reading.control.is_some() && reading.remote_done < remote {
        worker.step_or_park(None);
        if reading.relay_back(channels.to_main).is_err() {
            break;
        }
    }
    if let Some(control) = reading.control.take() {
        control.input.close();
    }
    reading.fed
}

/// The next message from the calling thread for worker 0 relaying for the other
/// processes: it steps while it waits, and passes on what comes back from them; `None`
/// once the calling thread is gone.
fn next_relaying(
    worker: &mut timely::worker::Worker,
    reading: &mut Reading,
    channels: &Channels<'_>,
) -> Option<ToWorker> {
    loop {
        match channels.from_main.try_recv() {
            Ok(message) => return Some(message),
            Err(crossbeam_channel::TryRecvError::Disconnected) => return None,
            Err(crossbeam_channel::TryRecvError::Empty) => {}
        }
        // The calling thread wakes the worker after each message (and the network when
        // another process sends).
        worker.step_or_park(None);
        reading.relay_back(channels.to_main).ok()?;
    }
}

/// A worker of another process than 0 while every process reads its own blocks: it
/// parses the blocks process 0 tells it to (its own process's calling thread cuts them
/// from its copy of the file, [`ToWorker::Block`]), says what they held, introduces
/// their facts when told, and advances its input as told, until told to finish.
fn serve_remote(
    worker: &mut timely::worker::Worker,
    mut inputs: Inputs,
    control: ControlPlane,
    channels: &Channels<'_>,
) -> Fed {
    let mut reading = Reading {
        control: Some(control),
        ..Reading::default()
    };
    let mut now = 0u64;
    // Blocks asked for and not come yet: (source, sequence number, checksum).
    let mut waiting: Vec<(usize, u64, u64)> = Vec::new();
    'run: loop {
        let told = reading
            .control
            .as_ref()
            .map(ControlPlane::take)
            .unwrap_or_default();
        for message in told {
            match message {
                Control::Parse {
                    source,
                    seq,
                    checksum,
                } => {
                    waiting.push((source, seq, checksum));
                    let need = FromWorker::NeedBlock {
                        worker: channels.local,
                        source,
                        seq,
                    };
                    if channels.to_main.send(need).is_err() {
                        break 'run;
                    }
                }
                Control::Commit {
                    source,
                    seq,
                    keep,
                    bounds,
                } => {
                    let facts = (!keep).then(Vec::new);
                    reading.commit((source, seq), facts, bounds, &mut inputs, now);
                }
                Control::Advance { to, finish } => {
                    for handle in inputs.iter_mut() {
                        if to > *handle.time() {
                            handle.advance_to(to);
                        }
                    }
                    now = now.max(to);
                    if finish {
                        break 'run;
                    }
                }
                Control::Parsed { .. } | Control::Failed { .. } | Control::Done { .. } => {}
            }
        }
        while let Ok(message) = channels.from_main.try_recv() {
            let ToWorker::Block {
                source,
                seq,
                block,
                like,
            } = message
            else {
                continue;
            };
            let Some(at) = waiting.iter().position(|w| (w.0, w.1) == (source, seq)) else {
                continue;
            };
            let (_, _, checksum) = waiting.swap_remove(at);
            let sent = match block {
                Ok(block) if block.checksum() == checksum => {
                    let summary = reading.parse(source, seq, &block, &like);
                    Control::Parsed {
                        source,
                        seq,
                        summary: summary.sent(),
                    }
                }
                Ok(block) => Control::Failed {
                    error: format!(
                        "{}: the lines after line {} differ where worker {} reads them: every process must read the same file",
                        like.name(),
                        block.lines_before,
                        worker.index()
                    ),
                },
                Err(error) => Control::Failed {
                    error: format!(
                        "{}, where worker {} reads it: {error}",
                        like.name(),
                        worker.index()
                    ),
                },
            };
            if let Some(control) = reading.control.as_mut() {
                control.send(0, sent);
            }
        }
        worker.step_or_park(None);
    }
    drop(inputs);
    if let Some(mut control) = reading.control.take() {
        let done = Control::Done {
            input_facts: reading.fed.input_facts,
            dropped: reading.fed.dropped,
        };
        control.send(0, done);
        control.input.close();
    }
    reading.fed
}

/// A serving worker's share of reading the input ([`super::reading`]): the facts of the
/// blocks it has parsed until the calling thread says to introduce them, and what it
/// introduced; with the control dataflow ([`Control`]), relaying for the other
/// processes (worker 0) or reading as a worker of one of them.
#[derive(Default)]
struct Reading {
    /// Per block parsed here and not yet committed, by (source, sequence number).
    held: Vec<((usize, u64), Vec<InputFact>)>,
    parts: Vec<Vec<(Row, u64, isize)>>,
    fed: Fed,
    control: Option<ControlPlane>,
    /// Relaying: the workers of the other processes that have said what they introduced.
    remote_done: usize,
}

impl Reading {
    /// Handles a message of reading on the workers ([`ToWorker::Parse`], [`ToWorker::Commit`]);
    /// any other comes back. `Err`: the calling thread is gone.
    fn serve(
        &mut self,
        message: ToWorker,
        inputs: &mut Inputs,
        now: u64,
        to_main: &Sender<FromWorker>,
    ) -> Result<Option<ToWorker>, ()> {
        match message {
            ToWorker::Parse {
                source,
                seq,
                block,
                like,
            } => {
                let summary = self.parse(source, seq, &block, &like);
                let parsed = FromWorker::Parsed {
                    source,
                    seq,
                    summary,
                    again: false,
                };
                to_main.send(parsed).map_err(|_| ())?;
                Ok(None)
            }
            ToWorker::Commit {
                source,
                seq,
                facts,
                bounds,
            } => {
                self.commit((source, seq), facts, bounds, inputs, now);
                Ok(None)
            }
            ToWorker::Relay { target, control } => {
                if let Some(plane) = self.control.as_mut() {
                    plane.send(target, control);
                }
                Ok(None)
            }
            other => Ok(Some(other)),
        }
    }

    /// Passes on to the calling thread what the other processes' workers have sent
    /// (worker 0 relaying). `Err`: the calling thread is gone.
    fn relay_back(&mut self, to_main: &Sender<FromWorker>) -> Result<(), ()> {
        let Some(plane) = self.control.as_ref() else {
            return Ok(());
        };
        for message in plane.take() {
            let back = match message {
                Control::Parsed {
                    source,
                    seq,
                    summary,
                } => {
                    let again = summary.errored;
                    FromWorker::Parsed {
                        source,
                        seq,
                        summary: summary.received(),
                        again,
                    }
                }
                Control::Failed { error } => FromWorker::ReadFailed { error },
                Control::Done {
                    input_facts,
                    dropped,
                } => {
                    self.fed.input_facts += input_facts;
                    self.fed.dropped += dropped;
                    self.remote_done += 1;
                    continue;
                }
                Control::Parse { .. } | Control::Commit { .. } | Control::Advance { .. } => {
                    continue;
                }
            };
            to_main.send(back).map_err(|_| ())?;
        }
        Ok(())
    }

    /// Parses a block on its own and keeps its facts; what it says goes to the calling thread.
    fn parse(
        &mut self,
        source: usize,
        seq: u64,
        block: &RawBlock,
        like: &FactReader<std::io::Empty>,
    ) -> BlockSummary {
        let parsed = parse_block(like, block);
        self.held.push(((source, seq), parsed.facts));
        parsed.summary
    }

    /// Introduces the facts of block `key` (or `facts`, parsed again on the calling thread)
    /// within `bounds` as points, each predicate's through its input handle, at their
    /// times (at or after `now`, where the handles are).
    fn commit(
        &mut self,
        key: (usize, u64),
        facts: Option<Vec<InputFact>>,
        (from, until): (u64, Option<u64>),
        inputs: &mut Inputs,
        now: u64,
    ) {
        let held = self.held.iter().position(|(k, _)| *k == key);
        let held = held.map(|at| self.held.swap_remove(at).1);
        let facts = facts.or(held).unwrap_or_default();
        self.parts.resize_with(inputs.len(), Vec::new);
        // Each predicate's vector made as big as it gets: growing by doubling takes fresh
        // pages each time.
        let mut counts = vec![0usize; self.parts.len()];
        for fact in &facts {
            counts[fact.pred] += 1;
        }
        for (part, count) in self.parts.iter_mut().zip(counts) {
            part.reserve_exact(count);
        }
        for fact in facts {
            if until.is_some_and(|until| fact.time > until) {
                break;
            }
            if fact.time < from {
                self.fed.dropped += 1;
                continue;
            }
            debug_assert!(
                fact.time >= now,
                "a fact at {} behind the input at {now}",
                fact.time
            );
            self.fed.input_facts += 1;
            self.parts[fact.pred].push((fact.args, fact.time, 1));
        }
        for (handle, part) in inputs.iter_mut().zip(&mut self.parts) {
            if !part.is_empty() {
                handle.send_batch(part);
            }
        }
    }
}

/// Writes the output in `ready` (in output order, before `upto`) to the worker's files,
/// time point by time point from `next` (the timeline's `first` at first), every time
/// point given ([`Sink::emit_through`]); empties `ready`. The last batch (`last`) closes
/// the open intervals and flushes.
fn write_files(
    sink: &mut Sink<std::io::Sink>,
    ready: &mut Vec<Update>,
    next: &mut Option<u64>,
    (first, upto): (u64, u64),
    last: bool,
) -> std::io::Result<()> {
    let t = next.unwrap_or(first).max(first);
    sink.emit_through((t, upto), ready, change, |_, _| {})?;
    *next = Some(t.max(upto));
    ready.clear();
    if last { sink.finish() } else { Ok(()) }
}

/// Hands each container of `stream` to `take` on the worker `route` names for each record
/// (on the worker that computed it without a route); returns the (empty) stream behind
/// it, for a probe.
fn capture<'s, D: timely::ExchangeData>(
    stream: timely::dataflow::Stream<'s, u64, Vec<D>>,
    route: Option<impl Fn(&D) -> u64 + 'static>,
    mut take: impl FnMut(&mut Vec<D>) + 'static,
) -> timely::dataflow::Stream<'s, u64, Vec<()>> {
    let stream = match route {
        Some(route) => stream.exchange(move |record| route(record)),
        None => stream,
    };
    stream.unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Capture", move |_, _| {
        move |input, _output| input.for_each(|_, data| take(data))
    })
}
