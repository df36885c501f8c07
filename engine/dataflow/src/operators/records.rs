//! Per-record maps and delays, one message at a time.
//!
//! Differential's `map`, `flat_map`, `filter` and `delay` go through timely's
//! `for_each_stamp`, which moves every message of an activation into a queue and sorts
//! the queue by stamp before handing the messages on: with a message per time point (the
//! Event Calculus workloads have tens of thousands of time points with a fact or two
//! each) that sort and the queue's growth are paid for a record or two. These handle the
//! messages in the order they come, consecutive ones of one stamp as one; a delay moves
//! each message's container on as it is, without copying a record.

use differential_dataflow::{AsCollection, Data, VecCollection};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::InputCapability;
use timely::dataflow::operators::generic::Operator;
use timely::progress::Timestamp;

type Collection<'s, T, D> = VecCollection<'s, T, D, isize>;

/// The records `logic` makes of each record of `c` (differential's `flat_map`).
pub fn flat_map<'s, T, D, I, L>(c: Collection<'s, T, D>, mut logic: L) -> Collection<'s, T, I::Item>
where
    T: Timestamp,
    D: Data,
    I: IntoIterator,
    I::Item: Data,
    L: FnMut(D) -> I + 'static,
{
    c.inner
        .unary::<CapacityContainerBuilder<Vec<(I::Item, T, isize)>>, _, _, _>(
            Pipeline,
            "FlatMap",
            move |_, _| {
                let mut out = Vec::new();
                move |input, output| {
                    // Consecutive messages of one stamp go out as one.
                    let mut current = None;
                    input.for_each(|capability, data| {
                        if let Some(held) = current.take_if(|held: &mut InputCapability<T>| {
                            held.stamp() != capability.stamp()
                        }) {
                            if !out.is_empty() {
                                output.session(&held).give_container(&mut out);
                                out = Vec::new();
                            }
                        }
                        // Room for a record made of each at once: a vector sent is gone,
                        // and its successor would grow a step at a time. What sending hands
                        // back is not kept (an exchange to other workers hands back the
                        // vector it split, as large as the largest message).
                        out.reserve(data.len());
                        for (record, time, diff) in data.drain(..) {
                            for made in logic(record) {
                                out.push((made, time.clone(), diff));
                            }
                        }
                        current.get_or_insert(capability);
                    });
                    if let Some(held) = current {
                        if !out.is_empty() {
                            output.session(&held).give_container(&mut out);
                            out = Vec::new();
                        }
                    }
                }
            },
        )
        .as_collection()
}

/// Each record of `c` as `logic` makes it (differential's `map`).
pub fn map<'s, T, D, D2, L>(c: Collection<'s, T, D>, mut logic: L) -> Collection<'s, T, D2>
where
    T: Timestamp,
    D: Data,
    D2: Data,
    L: FnMut(D) -> D2 + 'static,
{
    flat_map(c, move |record| Some(logic(record)))
}

/// `c` read `k` time points later: what holds at t holds at t + k (differential's `delay`
/// with `t + k`).
pub fn delay<'s, D: Data>(c: Collection<'s, u64, D>, k: u64) -> Collection<'s, u64, D> {
    c.inner
        .unary::<CapacityContainerBuilder<Vec<(D, u64, isize)>>, _, _, _>(
            Pipeline,
            "Delay",
            move |_, _| {
                move |input, output| {
                    input.for_each(|capability, data| {
                        let Some(&least) = capability.least() else {
                            return;
                        };
                        for (_, time, _) in data.iter_mut() {
                            *time += k;
                        }
                        let later = capability.delayed(&(least + k), 0);
                        output.session(&later).give_container(data);
                    });
                }
            },
        )
        .as_collection()
}
