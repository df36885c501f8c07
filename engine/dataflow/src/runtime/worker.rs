//! One timely worker: builds the dataflow; worker 0 also feeds it the calling thread's
//! batches and sends back the output in output order.

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
use crate::plan::Plan;
use crate::render::{Output, render};

/// Input handles: one per predicate, then the unit row's. A batch goes in as one
/// container per predicate, moved, not copied record by record into a session and again
/// by an operator splitting a tagged stream.
type Inputs = Vec<InputHandle<u64, (Row, u64, isize)>>;

/// One worker: builds the dataflow; worker 0 also feeds it and reports its output.
pub(super) fn work(
    worker: &mut timely::worker::Worker,
    program: &Program,
    plan: &Plan,
    outputs: &[PredId],
    from_main: &Receiver<ToWorker>,
    to_main: &Sender<FromWorker>,
) {
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
    );
    if worker.index() == 0 {
        serve(
            worker, program, inputs, &probe, &captured, from_main, to_main,
        );
    }
}

/// Builds the dataflow over `inputs`; its output, tagged with predicates, is moved into
/// `captured` on worker 0, and `probe` passes a time once everything before it has been.
fn build(
    worker: &mut timely::worker::Worker,
    program: &Program,
    plan: &Plan,
    outputs: &[PredId],
    inputs: &mut Inputs,
    probe: &ProbeHandle<u64>,
    captured: &Rc<RefCell<Vec<Update>>>,
) {
    worker.dataflow::<u64, _, _>(|scope| {
        let facts = inputs
            .iter_mut()
            .map(|handle| scope.input_from(handle).as_collection())
            .collect();
        let mut printed = vec![false; program.predicates.len()];
        for &p in outputs {
            printed[p] = true;
        }
        let printed = Rc::new(printed);
        for out in render(program, plan, facts, outputs) {
            let sink = captured.clone();
            match out {
                Output::Predicate(tag, out) => capture(out.inner, move |data| {
                    sink.borrow_mut()
                        .extend(data.drain(..).map(|(row, t, r)| ((tag, row), t, r)));
                }),
                Output::Tagged(out) => {
                    let printed = printed.clone();
                    capture(out.inner, move |data| {
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

/// Worker 0's loop: each batch from the calling thread goes to the input handles, the
/// worker steps until the output probe passes the batch's end, and the output before it
/// goes back in output order. Every other worker closes its inputs at once (dropping
/// them) and steps until the dataflow is done.
fn serve(
    worker: &mut timely::worker::Worker,
    program: &Program,
    mut inputs: Inputs,
    probe: &ProbeHandle<u64>,
    captured: &Rc<RefCell<Vec<Update>>>,
    from_main: &Receiver<ToWorker>,
    to_main: &Sender<FromWorker>,
) {
    let channels = inputs.len();
    let mut now = 0u64;
    let rank = stgflow_io::sink::name_ranks(program);
    let mut order: Vec<(u64, u32)> = Vec::new();
    while let Ok(message) = from_main.recv() {
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
        // Each predicate's changes go in as one container, moved, not copied.
        parts.resize_with(channels, Vec::new);
        for (handle, part) in inputs.iter_mut().zip(&mut parts) {
            if part.iter().any(|(_, time, _)| *time < now) {
                part.retain(|(_, time, _)| *time >= now);
            }
            handle.send_batch(part);
            if advance_to > *handle.time() {
                handle.advance_to(advance_to);
            }
        }
        now = now.max(advance_to);
        while probe.less_than(&now) {
            worker.step_or_park(None);
        }
        // The output below `advance_to`, in output order: sorted here, where the calling
        // thread (reading, diffing and writing) would otherwise be the bottleneck.
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
        if to_main
            .send(FromWorker::Output {
                upto: advance_to,
                updates: ready,
            })
            .is_err()
            || last
        {
            break;
        }
    }
    drop(inputs);
    let _ = to_main.send(FromWorker::Done);
}

/// Hands each container of `stream`, on worker 0, to `take`; returns the (empty) stream
/// behind it, for a probe.
fn capture<'s, D: timely::ExchangeData>(
    stream: timely::dataflow::Stream<'s, u64, Vec<D>>,
    mut take: impl FnMut(&mut Vec<D>) + 'static,
) -> timely::dataflow::Stream<'s, u64, Vec<()>> {
    stream
        .exchange(|_| 0)
        .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(Pipeline, "Capture", move |_, _| {
            move |input, _output| input.for_each(|_, data| take(data))
        })
}
