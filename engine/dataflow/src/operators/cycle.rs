//! The feedback edge of a loop through time: a component that recurses through time and
//! whose own predicates share no key (`render`'s cycle) is rendered as the dataflow of its
//! rules, each join on its own key, with its predicates' changes fed back one time point
//! later. Timely's feedback moves a message's timestamp; [`next_point`] moves the records'
//! own times with it, and ends the loop with the timeline.

use differential_dataflow::AsCollection;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::generic::Operator;

use super::zero_one::{Stash, mark, send_first};
use super::{Coll, Pending};

/// `changes` one time point later, to be connected to a feedback edge of one time point:
/// each record at t is sent at its message's time with the time t + 1, once `bound`'s
/// frontier (the input's, through the unit row) has passed t + 1. What is still held when
/// `bound` closes is dropped: the timeline ends at the input's last time point (the runtime
/// closes the input only once the output has passed it), and a loop whose facts keep
/// changing with nothing to stop them (`tick(a, T) :- not tock(b, T-1).` with `tock(b, T)
/// :- tick(a, T-1).`) would otherwise run on for ever.
pub fn next_point<'s>(changes: Coll<'s, u64>, bound: Coll<'s, u64>) -> Coll<'s, u64> {
    let mut stash: Stash<stgflow_lang::value::Row> = Stash::default();
    let mut out = Vec::new();
    changes
        .inner
        .binary_frontier::<_, CapacityContainerBuilder<Vec<_>>, _, _, _, _>(
            bound.inner,
            Pipeline,
            Pipeline,
            "NextPoint",
            move |_initial, _info| {
                let mut pending = Pending::default();
                move |(input, _), (bound, bound_frontier), output| {
                    input.for_each(|capability, data| {
                        pending.note(&capability);
                        stash.add(data, &|t, _| t + 1);
                    });
                    bound.for_each(|_, data| data.clear());
                    let Some(&limit) = bound_frontier.frontier().first() else {
                        while let Some(t) = stash.first_time() {
                            drop(stash.take(t));
                        }
                        pending.settle(None);
                        return;
                    };
                    let mut first = None;
                    while let Some(t) = stash.first_time().filter(|&t| t < limit) {
                        let mut updates = stash.take(t);
                        out.extend(updates.drain(..).map(|(row, diff)| (row, t, diff)));
                        stash.give_back(updates);
                        // Sent a time point early: the feedback edge adds it back.
                        mark(&mut first, t - 1, &out);
                    }
                    send_first(output, pending.get(), &mut first, &mut out);
                    pending.settle(stash.first_time().map(|t| t - 1));
                }
            },
        )
        .as_collection()
}
