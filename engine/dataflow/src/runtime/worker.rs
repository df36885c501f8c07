//! One timely worker: builds the dataflow; every worker of process 0 also feeds it the
//! calling thread's batches and sends back its own share of the output in output order.

use std::cell::RefCell;
use std::rc::Rc;

use crossbeam_channel::{Receiver, Sender};
use differential_dataflow::AsCollection;
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::Row;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::ProbeHandle;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Exchange, Probe};

use super::messages::{FromWorker, ToWorker, Update};
use super::order::in_output_order;
use crate::operators::points::changes;
use crate::plan::Plan;
use crate::render::{Output, render};

/// Input handles: one per predicate, then the unit row's. A batch goes in as one
/// container per predicate, moved, not copied record by record into a session and again
/// by an operator splitting a tagged stream.
type Inputs = Vec<InputHandle<u64, (Row, u64, isize)>>;

/// One worker: builds the dataflow for `plan` (the program, its plan, the printed
/// predicates) over inputs of points (`points`; else of changes); on process 0 it also
/// feeds it the batches of `from_main` (one receiver per local worker, by local index) and
/// reports its output.
pub(super) fn work(
    worker: &mut timely::worker::Worker,
    (program, plan, outputs): (&Program, &Plan, &[PredId]),
    points: bool,
    from_main: &[Receiver<ToWorker>],
    to_main: &Sender<FromWorker>,
) {
    let local = worker.index() % from_main.len();
    // Every worker keeps its own output, but in a cluster the output of a process other
    // than 0 goes to the worker of the same local index on process 0, whose calling
    // thread writes it.
    let gather = (worker.peers() > from_main.len()).then_some(local);
    let probe = ProbeHandle::new();
    let captured: Rc<RefCell<Vec<Update>>> = Rc::new(RefCell::new(Vec::new()));
    let mut inputs: Inputs = (0..program.predicates.len() + 1)
        .map(|_| InputHandle::new())
        .collect();
    build(
        worker,
        program,
        plan,
        outputs,
        &mut inputs,
        &probe,
        &captured,
        (gather, points),
    );
    if worker.index() < from_main.len() {
        let channels = Channels {
            local,
            from_main: &from_main[local],
            to_main,
        };
        serve(worker, program, inputs, &probe, &captured, &channels);
    }
}

/// A serving worker's ends of the channels to and from the calling thread.
struct Channels<'a> {
    /// The worker's index in its process.
    local: usize,
    from_main: &'a Receiver<ToWorker>,
    to_main: &'a Sender<FromWorker>,
}

/// Builds the dataflow over `inputs`; its output, tagged with predicates, is moved into
/// `captured` on the worker that computed it (or, with `gather`, on that worker of process
/// 0), and `probe` passes a time once everything before it has been. Each predicate's
/// input facts come in as points (a fact given at t holds at t) and become changes on
/// every worker ([`changes`]) when `points` says so.
#[allow(clippy::too_many_arguments)]
fn build(
    worker: &mut timely::worker::Worker,
    program: &Program,
    plan: &Plan,
    outputs: &[PredId],
    inputs: &mut Inputs,
    probe: &ProbeHandle<u64>,
    captured: &Rc<RefCell<Vec<Update>>>,
    (gather, points): (Option<usize>, bool),
) {
    let predicates = program.predicates.len();
    worker.dataflow::<u64, _, _>(|scope| {
        let facts = inputs
            .iter_mut()
            .enumerate()
            .map(|(channel, handle)| {
                let input = scope.input_from(handle).as_collection();
                // The unit row (the last channel) comes in as a change.
                if points && channel < predicates {
                    changes(input)
                } else {
                    input
                }
            })
            .collect();
        let mut printed = vec![false; program.predicates.len()];
        for &p in outputs {
            printed[p] = true;
        }
        let printed = Rc::new(printed);
        for out in render(program, plan, facts, outputs) {
            let sink = captured.clone();
            match out {
                Output::Predicate(tag, out) => capture(out.inner, gather, move |data| {
                    sink.borrow_mut()
                        .extend(data.drain(..).map(|(row, t, r)| ((tag, row), t, r)));
                }),
                Output::Tagged(out) => {
                    let printed = printed.clone();
                    capture(out.inner, gather, move |data| {
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
}

/// A serving worker's loop: each batch from the calling thread goes to the input handles
/// (a batch's facts come to one worker, the others only advance), the worker steps until
/// the output probe passes the batch's end, and its output before it goes back in output
/// order, sorted here, on every worker, rather than on one thread for all.
fn serve(
    worker: &mut timely::worker::Worker,
    program: &Program,
    mut inputs: Inputs,
    probe: &ProbeHandle<u64>,
    captured: &Rc<RefCell<Vec<Update>>>,
    channels: &Channels<'_>,
) {
    let count = inputs.len();
    let mut now = 0u64;
    let rank = stgflow_io::sink::name_ranks(program);
    let mut order: Vec<(u64, u32)> = Vec::new();
    while let Ok(message) = channels.from_main.recv() {
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
        }
        let mut ready = recycled;
        {
            let mut all = captured.borrow_mut();
            ready.reserve(all.len());
            if all.iter().all(|(_, t, _)| *t < advance_to) {
                in_output_order(&mut all, &rank, first, &mut order, &mut ready);
            } else {
                let (mut due, later): (Vec<Update>, Vec<Update>) =
                    all.drain(..).partition(|(_, t, _)| *t < advance_to);
                *all = later;
                in_output_order(&mut due, &rank, first, &mut order, &mut ready);
            }
        }
        let output = FromWorker::Output {
            worker: channels.local,
            upto: advance_to,
            updates: ready,
        };
        if channels.to_main.send(output).is_err() || last {
            break;
        }
    }
    drop(inputs);
    let _ = channels.to_main.send(FromWorker::Done {
        worker: channels.local,
    });
}

/// Hands each container of `stream` to `take` on the worker that computed it (or, with
/// `gather`, on that worker of process 0); returns the (empty) stream behind it, for a
/// probe.
fn capture<'s, D: timely::ExchangeData>(
    stream: timely::dataflow::Stream<'s, u64, Vec<D>>,
    gather: Option<usize>,
    mut take: impl FnMut(&mut Vec<D>) + 'static,
) -> timely::dataflow::Stream<'s, u64, Vec<()>> {
    let stream = match gather {
        Some(target) => stream.exchange(move |_| target as u64),
        None => stream,
    };
    stream.unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Capture", move |_, _| {
        move |input, _output| input.for_each(|_, data| take(data))
    })
}
