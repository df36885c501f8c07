//! The persistence operator alone (`operators::persist`, EC inertia lowered): its input
//! changes built beforehand, fed to one timely worker in batches of time points through
//! an input handle, its output counted by a probe — no parsing, no rule in front of it,
//! no output formatting. The stream is the `inertia` workload's: 10 events per time point
//! on 10⁵ fluents with 3 values, each event `init(f, v)` at t, which the operator sees
//! as two changes (+1 at t, −1 at t + 1) and reads at two offsets: for the terminating
//! rule at t, and for the start rule, which it applies itself a time point later;
//! throughput is counted in events. Beside it, `floor_…`: the same input through an
//! operator that only holds each time point's changes until the frontier passes it and
//! sends them on, exchanged as the persistence operator's input is — what the input
//! handle, the exchange, the buffering by time and the probe cost in this harness, so the
//! operator's own cost is the difference.
//!
//! ```text
//! cargo bench -p stgflow-bench --bench persist
//! ```

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use differential_dataflow::{AsCollection, Hashable};
use stgflow_dataflow::operators::persist;
use stgflow_dataflow::plan::{Component, PersistPlan, plan};
use stgflow_datasets::SplitMix64;
use stgflow_lang::ir::Program;
use stgflow_lang::value::{Row, Value};
use timely::dataflow::ProbeHandle;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Inspect, Probe};

mod common;
use common::configure;

type Update = ((u32, Row), u64, isize);

const TIME_POINTS: u64 = 100_000;
const EVENTS_PER_POINT: u64 = 10;
const FLUENTS: u64 = 100_000;
const VALUES: u64 = 3;
/// Time points per batch, as the runtime's replay sends them.
const BATCH_POINTS: u64 = 1024;

fn inertia_plan() -> (Program, PersistPlan) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../datasets/examples/inertia.tdl"
    ))
    .expect("datasets/examples/inertia.tdl");
    let compiled = stgflow_lang::compile_str("inertia.tdl", &text);
    let analysis = compiled.analysis.as_ref().expect("a valid program");
    let planned = plan(&compiled.program, analysis, true);
    let [Component::Persist(persist)] = planned.components.as_slice() else {
        panic!("inertia.tdl is not lowered to persistence: {planned:?}");
    };
    (compiled.program, persist.clone())
}

/// The operator's input, batch by batch, as `render` tags it: each event once, as a fact
/// of `init` (+1 at t, −1 at t + 1), which the operator reads at two offsets: for the
/// terminating rule's `init(F, W, T)` and for the start rule's `init(F, V, T-1)`, which it
/// copies into a start fact.
fn batches(persist_plan: &PersistPlan) -> (Vec<Vec<Update>>, u64) {
    let [init] = persist_plan.inputs()[..] else {
        panic!("inertia reads one predicate from outside: {persist_plan:?}");
    };
    assert_eq!(persist_plan.slots, [(init, 0), (init, 1)]);
    let tag = 1;
    let mut rng = SplitMix64::new(7);
    let symbol = |prefix: &str, i: u64| Value::sym(&format!("{prefix}{i}"));
    let mut by_time: Vec<Vec<Update>> = vec![Vec::new(); TIME_POINTS as usize + 2];
    let mut events = 0;
    for t in 0..TIME_POINTS {
        let mut fluents: Vec<(u64, u64)> = (0..EVENTS_PER_POINT)
            .map(|_| (rng.next_u64() % FLUENTS, rng.next_u64() % VALUES))
            .collect();
        fluents.sort_unstable_by_key(|&(f, _)| f);
        fluents.dedup_by_key(|&mut (f, _)| f);
        for (f, v) in fluents {
            let row: Row = [symbol("f", f), symbol("v", v)].into_iter().collect();
            let at = t as usize;
            by_time[at].push(((tag, row.clone()), t, 1));
            by_time[at + 1].push(((tag, row), t + 1, -1));
            events += 1;
        }
    }
    let batches = by_time
        .chunks(BATCH_POINTS as usize)
        .map(|chunk| chunk.concat())
        .collect();
    (batches, events)
}

/// Runs the operator over `batches` on one worker; the number of output changes. With
/// `floor`, an operator that does nothing but hold each time point's changes until the
/// frontier passes it and send them on, exchanged as the persistence operator's input is:
/// what the input handle, the exchange, the buffering by time and the probe cost, below
/// which no operator of this shape goes.
fn run(
    program: &Program,
    persist_plan: &PersistPlan,
    batches: Vec<Vec<Update>>,
    floor: bool,
) -> usize {
    let program = program.clone();
    let persist_plan = persist_plan.clone();
    timely::execute_directly(move |worker| {
        let mut input: InputHandle<u64, Update> = InputHandle::new();
        let counted = std::rc::Rc::new(std::cell::Cell::new(0usize));
        let probe = ProbeHandle::new();
        worker.dataflow::<u64, _, _>(|scope| {
            let count = counted.clone();
            let source = scope.input_from(&mut input).as_collection();
            let output = if floor {
                held_until_complete(source.inner)
            } else {
                persist::render(&program, &persist_plan, &[], source).inner
            };
            output
                .inspect(move |_| count.set(count.get() + 1))
                .probe_with(&probe);
        });
        for (i, mut batch) in batches.into_iter().enumerate() {
            input.send_batch(&mut batch);
            input.advance_to((i as u64 + 1) * BATCH_POINTS);
            while probe.less_than(input.time()) {
                worker.step();
            }
        }
        input.close();
        while worker.step() {}
        counted.get()
    })
}

/// The floor operator of [`run`].
fn held_until_complete<'s>(
    stream: timely::dataflow::StreamVec<'s, u64, Update>,
) -> timely::dataflow::StreamVec<'s, u64, Update> {
    use timely::container::CapacityContainerBuilder;
    use timely::dataflow::channels::pact::Exchange;
    use timely::dataflow::operators::generic::Operator;
    let route = |((_, row), _, _): &Update| row.first().map_or(0, |v| v.hashed());
    stream.unary_frontier::<CapacityContainerBuilder<Vec<Update>>, _, _, _>(
        Exchange::new(route),
        "Floor",
        |capability, _| {
            let mut capability = Some(capability);
            let mut by_time = std::collections::BTreeMap::<u64, Vec<Update>>::new();
            move |(input, frontier), output| {
                input.for_each(|_, data| {
                    for update in data.drain(..) {
                        by_time.entry(update.1).or_default().push(update);
                    }
                });
                let limit = frontier.frontier().first().copied();
                while let Some(entry) = by_time.first_entry() {
                    if limit.is_some_and(|f| *entry.key() >= f) {
                        break;
                    }
                    let (time, mut updates) = entry.remove_entry();
                    if let Some(cap) = capability.as_ref() {
                        output
                            .session(&cap.delayed(&time))
                            .give_container(&mut updates);
                    }
                }
                match (limit, capability.as_mut()) {
                    (Some(f), Some(cap)) if *cap.time() < f => cap.downgrade(&f),
                    (None, _) => capability = None,
                    _ => {}
                }
            }
        },
    )
}

fn persist_operator(c: &mut Criterion) {
    let (program, persist_plan) = inertia_plan();
    let (batches, events) = batches(&persist_plan);
    let changes = run(&program, &persist_plan, batches.clone(), false);
    assert!(
        changes as u64 >= events,
        "{changes} changes for {events} events"
    );
    let mut group = c.benchmark_group("persist_operator");
    configure(&mut group);
    group.throughput(Throughput::Elements(events));
    group.bench_function("inertia_1e6_events_1_worker", |b| {
        b.iter_batched(
            || batches.clone(),
            |batches| run(&program, &persist_plan, black_box(batches), false),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("floor_1e6_events_1_worker", |b| {
        b.iter_batched(
            || batches.clone(),
            |batches| run(&program, &persist_plan, black_box(batches), true),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, persist_operator);
criterion_main!(benches);
