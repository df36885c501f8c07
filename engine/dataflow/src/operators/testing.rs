//! The operators' own test harness: an operator alone in a dataflow, fed random input as
//! the runtime feeds it, its output compared with a plain reference at every time point.
//!
//! * **Input as the runtime feeds it.** A record's presence over the timeline ([`Held`])
//!   becomes consolidated 0/1 changes ([`changes`]): +1 where it starts to hold, −1 where
//!   it stops, as `runtime::feeder` diffs each time point against the previous one.
//! * **Fed in batches.** Worker 0 sends `batch` time points at a time, advances its inputs
//!   past them and steps until the output probe does too, like `runtime::worker`: an
//!   operator then sees one time point per activation or several. Each batch goes in two
//!   halves with steps between them, as the output of several upstream operators does:
//!   one that takes a time point before its frontier passes it sees only half.
//! * **Compared at every time point.** The output is accumulated up to each time point
//!   ([`snapshots`]) and must equal the reference's collection there: a wrong count, a
//!   missing retraction or an output at the wrong time shows at the first time point it
//!   makes a difference, not only at the end.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt::Debug;
use std::rc::Rc;
use std::sync::Arc;

use differential_dataflow::{AsCollection, ExchangeData, VecCollection};
use proptest::prelude::*;
use timely::dataflow::ProbeHandle;
use timely::dataflow::operators::vec::input::{Handle as InputHandle, Input};
use timely::dataflow::operators::{Inspect, Probe};

/// An update: a record, the time point it changes at, and by how much.
pub(crate) type Update<D> = (D, u64, isize);

/// A collection at one time point: record → accumulated count (never zero).
pub(crate) type Snapshot<D> = BTreeMap<D, isize>;

/// Where each record of a universe holds: `held[record][t]`.
pub(crate) type Held = Vec<Vec<bool>>;

/// Runs the collection `build` makes of its inputs on `workers` workers; worker 0 feeds
/// `inputs[i]` (updates at times below `end`) to the i-th input, `batch` time points at a
/// time. Returns every worker's output (at any time, also past `end`).
pub(crate) fn run<D, O, F>(
    workers: usize,
    inputs: Vec<Vec<Update<D>>>,
    end: u64,
    batch: u64,
    build: F,
) -> Vec<Update<O>>
where
    D: ExchangeData + Sync,
    O: ExchangeData,
    F: for<'s> Fn(Vec<VecCollection<'s, u64, D, isize>>) -> VecCollection<'s, u64, O, isize>
        + Send
        + Sync
        + 'static,
{
    let inputs = Arc::new(inputs);
    let batch = batch.max(1);
    let config = if workers > 1 {
        timely::Config::process(workers)
    } else {
        timely::Config::thread()
    };
    let guards = timely::execute(config, move |worker| {
        let probe = ProbeHandle::new();
        let captured: Rc<RefCell<Vec<Update<O>>>> = Rc::default();
        let mut handles: Vec<InputHandle<u64, Update<D>>> =
            inputs.iter().map(|_| InputHandle::new()).collect();
        worker.dataflow::<u64, _, _>(|scope| {
            let collections = handles
                .iter_mut()
                .map(|handle| scope.input_from(handle).as_collection())
                .collect();
            let sink = captured.clone();
            build(collections)
                .inner
                .inspect(move |update| sink.borrow_mut().push(update.clone()))
                .probe_with(&probe);
        });
        if worker.index() == 0 {
            let mut from = 0;
            while from < end {
                let upto = (from + batch).min(end);
                let mut parts: Vec<Vec<Update<D>>> = inputs
                    .iter()
                    .map(|input| {
                        input
                            .iter()
                            .filter(|(_, t, _)| (from..upto).contains(t))
                            .cloned()
                            .collect()
                    })
                    .collect();
                // Half of each input, then steps, then the rest: an operator must wait
                // for its frontier, not take a time point as complete when data arrives.
                let mut rests: Vec<Vec<Update<D>>> = parts
                    .iter_mut()
                    .map(|part| part.split_off(part.len() / 2))
                    .collect();
                for (handle, part) in handles.iter_mut().zip(&mut parts) {
                    handle.send_batch(part);
                }
                for _ in 0..3 {
                    worker.step();
                }
                for (handle, rest) in handles.iter_mut().zip(&mut rests) {
                    handle.send_batch(rest);
                    handle.advance_to(upto);
                }
                while probe.less_than(&upto) {
                    worker.step_or_park(None);
                }
                from = upto;
            }
        }
        // Closing the inputs lets every operator finish; the other workers never fed.
        drop(handles);
        while worker.step_or_park(None) {}
        captured.take()
    })
    .expect("timely starts its workers");
    guards
        .join()
        .into_iter()
        .flat_map(|worker| worker.expect("a worker panicked"))
        .collect()
}

/// A universe of `records` one-value rows: `[0]`, `[1]`, ….
pub(crate) fn int_rows(records: usize) -> Vec<stgflow_lang::value::Row> {
    (0..records as i64)
        .map(|i| [stgflow_lang::value::Value::Int(i)].into_iter().collect())
        .collect()
}

/// The collection `updates` accumulate to at each time point below `end`.
pub(crate) fn snapshots<D: Ord + Clone>(updates: &[Update<D>], end: u64) -> Vec<Snapshot<D>> {
    let mut by_time: BTreeMap<u64, Vec<(D, isize)>> = BTreeMap::new();
    for (record, time, diff) in updates {
        by_time
            .entry(*time)
            .or_default()
            .push((record.clone(), *diff));
    }
    let mut now: Snapshot<D> = BTreeMap::new();
    (0..end)
        .map(|t| {
            for (record, diff) in by_time.remove(&t).unwrap_or_default() {
                add(&mut now, record, diff);
            }
            now.clone()
        })
        .collect()
}

/// Adds `diff` to `record`'s count in `snapshot`, dropping it at zero.
pub(crate) fn add<D: Ord>(snapshot: &mut Snapshot<D>, record: D, diff: isize) {
    match snapshot.entry(record) {
        Entry::Occupied(mut entry) => {
            *entry.get_mut() += diff;
            if *entry.get() == 0 {
                entry.remove();
            }
        }
        Entry::Vacant(entry) => {
            if diff != 0 {
                entry.insert(diff);
            }
        }
    }
}

/// The set `records` as a snapshot: each record once.
pub(crate) fn set<D: Ord>(records: impl IntoIterator<Item = D>) -> Snapshot<D> {
    records.into_iter().map(|r| (r, 1)).collect()
}

/// Panics at the first time point where `actual` and `expected` differ, naming what is
/// missing and what is extra there.
pub(crate) fn assert_same_at_every_time<D: Ord + Debug>(
    actual: &[Snapshot<D>],
    expected: &[Snapshot<D>],
) {
    assert_eq!(actual.len(), expected.len(), "time points compared");
    for (t, (a, e)) in actual.iter().zip(expected).enumerate() {
        if a != e {
            let missing: Vec<_> = e.iter().filter(|(r, c)| a.get(r) != Some(c)).collect();
            let extra: Vec<_> = a.iter().filter(|(r, c)| e.get(r) != Some(c)).collect();
            panic!(
                "first difference at time point {t}: expected {missing:?}, got {extra:?}\n\
                 operator: {a:?}\nreference: {e:?}"
            );
        }
    }
}

/// The consolidated 0/1 changes that feed `held` (records from `universe`, by index):
/// +1 where a record starts to hold, −1 where it stops, in time order.
pub(crate) fn changes<D: Clone>(universe: &[D], held: &Held) -> Vec<Update<D>> {
    let end = held.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for t in 0..end {
        for (record, presence) in universe.iter().zip(held) {
            let now = presence.get(t).copied().unwrap_or(false);
            let before = t > 0 && presence.get(t - 1).copied().unwrap_or(false);
            if now != before {
                out.push((record.clone(), t as u64, if now { 1 } else { -1 }));
            }
        }
    }
    out
}

/// Whether record `r` of `held` holds at `t` (never before the timeline, `t < 0`).
pub(crate) fn at(held: &Held, r: usize, t: i64) -> bool {
    usize::try_from(t)
        .ok()
        .and_then(|t| held.get(r)?.get(t).copied())
        .unwrap_or(false)
}

/// Presence of `records` records over `end` time points: each holds on and off in runs of
/// at most `absent` and `present` time points (the first may start present), then keeps
/// its last state. Shrinks towards fewer changes.
pub(crate) fn held(
    records: usize,
    end: u64,
    absent: u64,
    present: u64,
) -> impl Strategy<Value = Held> {
    let record = (
        any::<bool>(),
        prop::collection::vec((1..=absent.max(1), 1..=present.max(1)), 0..12),
    )
        .prop_map(move |(starts_present, runs)| {
            let mut presence = Vec::with_capacity(end as usize);
            let mut state = starts_present;
            for (off, on) in runs {
                for _ in 0..2 {
                    let length = if state { on } else { off };
                    presence.extend(std::iter::repeat_n(state, length as usize));
                    state = !state;
                }
            }
            // The last run goes on; without runs, the first state does.
            let last = presence.last().copied().unwrap_or(starts_present);
            presence.resize(end as usize, last);
            presence
        });
    prop::collection::vec(record, records)
}
