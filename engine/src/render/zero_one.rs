//! `zero_one`: makes a collection over totally ordered time points 0/1 — a record is
//! present (count 1) exactly while its accumulated count is positive.
//!
//! Differential's `distinct_total` does this with an arrangement: batches are sorted,
//! merged and their histories replayed, which measured ~1 µs per update here. Over time
//! points, which are totally ordered, a hash map of the current counts suffices: buffer
//! the updates until the frontier passes a time point, apply that time point's net
//! changes in time order, and emit +1 when a count becomes positive and −1 when it stops
//! being positive. The map holds only records whose count is not zero, so memory follows
//! what holds now, not the stream.
//!
//! Records are exchanged by hash, so each record's count lives on one worker. Positive,
//! not non-zero: a collection whose count dips below zero (the □ window's insertions are
//! delayed past their retractions) reads as absent there, as `threshold(count > 0)` would.

use std::collections::BTreeMap;
use std::hash::Hash;

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use hashbrown::HashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::{Operator, OutputBuilderSession};

/// The 0/1 version of `collection` (see the module doc).
pub fn zero_one<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    zero_one_by(collection, |time, _| time)
}

/// The 0/1 version of `collection` with each change moved to `retime(time, diff)` (not
/// earlier than `time`) first: a window's delay and its closure in one operator.
pub fn zero_one_by<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
    retime: impl Fn(u64, isize) -> u64 + 'static,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    let mut stash: BTreeMap<u64, Vec<(D, isize)>> = BTreeMap::new();
    let mut counts: HashMap<D, isize> = HashMap::new();
    // A time point's net changes and output; kept between time points for their allocation.
    let mut net: HashMap<D, isize> = HashMap::new();
    let mut out: Vec<(D, u64, isize)> = Vec::new();
    collection
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(D, u64, isize)>>, _, _, _>(
            Exchange::new(|(data, _, _): &(D, u64, isize)| data.hashed()),
            "ZeroOne",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|_, data| {
                        stash_updates(&mut stash, data, &retime);
                    });
                    let limit = frontier.frontier().first().copied();
                    while let Some(entry) = stash.first_entry() {
                        let time = *entry.key();
                        if limit.is_some_and(|f| time >= f) {
                            break;
                        }
                        let updates = entry.remove();
                        let Some(cap) = capability.as_ref() else {
                            continue;
                        };
                        net.reserve(updates.len());
                        for (record, diff) in updates {
                            *net.entry(record).or_insert(0) += diff;
                        }
                        for (record, diff) in net.drain() {
                            if diff == 0 {
                                continue;
                            }
                            if let Some(sign) = presence_change(&mut counts, &record, diff) {
                                out.push((record, time, sign));
                            }
                        }
                        send_at(output, cap, time, &mut out);
                    }
                    super::follow_frontier(&mut capability, limit);
                }
            },
        )
        .as_collection()
}

/// Moves a batch of updates into `stash` by time point (`retime(time, diff)`), one map
/// lookup per run of equal times (updates come in such runs).
pub(super) fn stash_updates<D>(
    stash: &mut BTreeMap<u64, Vec<(D, isize)>>,
    data: &mut Vec<(D, u64, isize)>,
    retime: &impl Fn(u64, isize) -> u64,
) {
    let mut run: Option<(u64, &mut Vec<(D, isize)>)> = None;
    for (record, time, diff) in data.drain(..) {
        let time = retime(time, diff);
        match &mut run {
            Some((at, updates)) if *at == time => updates.push((record, diff)),
            _ => {
                let updates = stash.entry(time).or_default();
                updates.push((record, diff));
                run = Some((time, updates));
            }
        }
    }
}

/// Adds `diff` to `record`'s count (kept only while not zero); +1 when the record became
/// present (its count positive), −1 when it stopped being present, `None` otherwise.
pub(super) fn presence_change<D: Hash + Eq + Clone>(
    counts: &mut HashMap<D, isize>,
    record: &D,
    diff: isize,
) -> Option<isize> {
    let count = counts.entry(record.clone()).or_insert(0);
    let before = *count > 0;
    *count += diff;
    let after = *count > 0;
    if *count == 0 {
        counts.remove(record);
    }
    match (before, after) {
        (false, true) => Some(1),
        (true, false) => Some(-1),
        _ => None,
    }
}

/// An operator's output of updates of `D` over time points.
pub(super) type Output<'a, D> =
    OutputBuilderSession<'a, u64, CapacityContainerBuilder<Vec<(D, u64, isize)>>>;

/// Sends `out` at `time`, when there is anything to send: a capability is taken only for
/// time points with output, since each costs progress updates in every operator
/// downstream.
pub(super) fn send_at<D: ExchangeData>(
    output: &mut Output<'_, D>,
    capability: &Capability<u64>,
    time: u64,
    out: &mut Vec<(D, u64, isize)>,
) {
    if !out.is_empty() {
        output
            .session(&capability.delayed(&time))
            .give_iterator(out.drain(..));
    }
}
