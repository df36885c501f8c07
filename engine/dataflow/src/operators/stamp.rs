//! The stamp operator: a predicate's facts stamped with the time point they hold at,
//! `h(A…, T) :- p(X…, T), U = T.` with U among A… ([`crate::plan::Component::Stamp`]).
//! This is LARS's `@(U, p(X…))` as the LARS front end writes it (`p__at`), and any TD
//! rule of that shape.
//!
//! A stamped fact h(…, t, …) holds at t and nowhere else, so while a fact of p holds,
//! each of its time points gives a new fact of h. The operator keeps the facts of p
//! that hold (counts, per worker by the fact's hash), and at each time point at which
//! any does it outputs, for each, +1 for its stamped fact at t and −1 at t + 1. Time
//! points at which none holds are skipped. A fact given at one time point (a stream's
//! usual fact) costs two count changes and two output records; the general
//! time-stepping operator evaluated the rule for its key at t and at t + 1, through the
//! reference evaluator's rule plans.
//!
//! Pitfall: the −1 at t + 1 is output with the time point t, before the frontier
//! passes t + 1; the records keep their own times and every operator downstream
//! buffers by them (`zero_one::send_first`).

use differential_dataflow::{AsCollection, Hashable};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

use super::Coll;
use super::zero_one::{Presence, Stash, mark, send_first};
use crate::plan::Stamped;
use stgflow_lang::value::{Row, Value, copied};

/// The stamped facts of `source` (0/1 changes of the source predicate's facts), each
/// built as `head` says.
pub fn render<'s>(source: Coll<'s, u64>, head: Vec<Stamped>) -> Coll<'s, u64> {
    let mut stash: Stash<Row> = Stash::default();
    // The facts that hold, in the order they came: the stamped facts go out in that
    // order, and so do their retractions, which the window that usually reads them
    // then meets among their neighbours (`slab`). A hash map's order cost the window a
    // cache miss per retraction (1.24× the whole run, ⊞10 over 1000 atoms per point).
    let mut holding: Presence<Row> = Presence::default();
    let mut last_processed: Option<u64> = None;
    let mut out: Vec<(Row, u64, isize)> = Vec::new();
    source
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(Row, u64, isize)>>, _, _, _>(
            Exchange::new(|(row, _, _): &(Row, u64, isize)| row.hashed()),
            "Stamp",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|_, data| stash.add(data, &|t, _| t));
                    let limit = frontier.frontier().first().copied();
                    let mut first = None;
                    while let Some(t) = super::stepper::next_time(
                        stash.first_time(),
                        !holding.is_empty(),
                        last_processed,
                        limit,
                    ) {
                        let mut updates = stash.take(t);
                        for (row, diff) in updates.drain(..) {
                            holding.add(row, diff);
                        }
                        stash.give_back(updates);
                        holding.settle();
                        // A time point past i64 has no value: the rule derives nothing
                        // there, as in the reference evaluator.
                        if let Ok(time) = i64::try_from(t) {
                            // The point's +1s, then its −1s at t + 1: the operators
                            // downstream buffer by runs of equal times.
                            let from = out.len();
                            for fact in holding.present() {
                                out.push((stamp(&head, fact, Value::Int(time)), t, 1));
                            }
                            let to = out.len();
                            for i in from..to {
                                let stamped = copied(&out[i].0);
                                out.push((stamped, t + 1, -1));
                            }
                        }
                        mark(&mut first, t, &out);
                        last_processed = Some(t);
                    }
                    send_first(output, capability.as_ref(), &mut first, &mut out);
                    super::follow_frontier(&mut capability, limit);
                }
            },
        )
        .as_collection()
}

/// The stamped fact of `fact` at the time point `time` (one allocation where it is
/// longer than a row holds inline; `collect` grew it value by value).
fn stamp(head: &[Stamped], fact: &Row, time: Value) -> Row {
    let mut stamped = Row::with_capacity(head.len());
    for arg in head {
        stamped.push(match arg {
            Stamped::Arg(i) => fact.get(*i).copied().unwrap_or(time),
            Stamped::Time => time,
            Stamped::Const(value) => *value,
        });
    }
    stamped
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::operators::testing::{
        assert_same_at_every_time, at, changes, held, run, set, snapshots,
    };

    fn row(values: &[i64]) -> Row {
        values.iter().map(|&v| Value::Int(v)).collect()
    }

    fn head() -> Vec<Stamped> {
        vec![
            Stamped::Time,
            Stamped::Arg(0),
            Stamped::Const(Value::Int(9)),
        ]
    }

    /// A fact held over [2, 5) is stamped at 2, 3 and 4, a point fact at 7 once, a fact
    /// given twice over (count 2) once, each stamped fact at its time point only.
    #[test]
    fn each_time_point_a_fact_holds_gives_one_stamped_fact_there() {
        let input = vec![
            (row(&[1]), 2, 1),
            (row(&[3]), 3, 2),
            (row(&[3]), 4, -2),
            (row(&[1]), 5, -1),
            (row(&[2]), 7, 1),
            (row(&[2]), 8, -1),
        ];
        let mut got = run(1, vec![input], 10, 3, |mut c| render(c.remove(0), head()));
        got.sort();
        let mut expected = vec![];
        for (t, x) in [(2, 1), (3, 1), (4, 1), (7, 2), (3, 3)] {
            expected.push((row(&[t, x, 9]), t as u64, 1));
            expected.push((row(&[t, x, 9]), t as u64 + 1, -1));
        }
        expected.sort();
        assert_eq!(got, expected);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// At every time point, on 1–3 workers fed in batches of 1–7 points, the stamped
        /// facts are exactly those of the facts holding there.
        #[test]
        fn stamps_what_holds_at_every_time_point(
            presence in held(5, 40, 6, 8),
            workers in 1usize..=3,
            batch in 1u64..=7,
        ) {
            let universe: Vec<Row> = (0..5).map(|i| row(&[i])).collect();
            let end = 40;
            let input = changes(&universe, &presence);
            let got = run(workers, vec![input], end, batch, |mut c| render(c.remove(0), head()));
            let expected: Vec<_> = (0..end)
                .map(|t| {
                    set((0..5).filter(|&r| at(&presence, r, t as i64)).map(|r| {
                        row(&[t as i64, r as i64, 9])
                    }))
                })
                .collect();
            assert_same_at_every_time(&snapshots(&got, end), &expected);
        }
    }
}
