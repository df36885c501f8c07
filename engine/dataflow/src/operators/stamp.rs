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
//! h's own input facts come in as the operator's second input and are united with the
//! stamped ones there, a stamped fact that is also an own fact counted once: not a 0/1
//! pass behind the operator over every stamped fact, for input facts that a stream seldom
//! gives.
//!
//! Pitfall: the −1 at t + 1 is output with the time point t, before the frontier
//! passes t + 1; the records keep their own times and every operator downstream
//! buffers by them (`zero_one::send_first`).

use differential_dataflow::{AsCollection, Hashable};
use hashbrown::HashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;

use super::Coll;
use super::zero_one::{Presence, Stash, earliest, mark, send_first};
use crate::plan::Stamped;
use stgflow_lang::value::{Row, Value};

/// The stamped facts of `source` (0/1 changes of the source predicate's facts), each
/// built as `head` says, united with `own` (h's own input facts, 0/1 changes): 0/1.
///
/// A stamped fact of t that is also an own fact is counted once. Its −1 at t + 1 is
/// output with t, before own's facts of t + 1 are known; where own holds it at t + 1, a
/// +1 there makes up for it. Both inputs are exchanged by the source fact's hash (an own
/// fact by the arguments it shares with its source fact), so a stamped fact and the
/// same own fact meet on one worker.
pub fn render<'s>(source: Coll<'s, u64>, own: Coll<'s, u64>, head: Vec<Stamped>) -> Coll<'s, u64> {
    let mut stash: Stash<Row> = Stash::default();
    let mut own_stash: Stash<Row> = Stash::default();
    // The facts that hold, in the order they came: the stamped facts go out in that
    // order, and so do their retractions, which the window that usually reads them
    // then meets among their neighbours (`slab`). A hash map's order would cost the
    // window a cache miss per retraction.
    let mut holding: Presence<Row> = Presence::default();
    let mut own_held: Presence<Row> = Presence::default();
    let mut own_flips: Vec<(Row, isize)> = Vec::new();
    let mut last_processed: Option<u64> = None;
    let mut out: Vec<(Row, u64, isize)> = Vec::new();
    let own_head = head.clone();
    source
        .inner
        .binary_frontier::<_, CapacityContainerBuilder<Vec<(Row, u64, isize)>>, _, _, _, _>(
            own.inner,
            Exchange::new(|(row, _, _): &(Row, u64, isize)| row.hashed()),
            Exchange::new(move |(row, _, _): &(Row, u64, isize)| {
                arguments(&own_head, row).hashed()
            }),
            "Stamp",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), (own_input, own_frontier), output| {
                    input.for_each(|_, data| stash.add(data, &|t, _| t));
                    own_input.for_each(|_, data| own_stash.add(data, &|t, _| t));
                    let limit = super::limit(frontier, own_frontier);
                    let mut first = None;
                    while let Some(t) = super::stepping::next_time(
                        earliest(&stash, &own_stash),
                        !holding.is_empty(),
                        last_processed,
                        limit,
                    ) {
                        // A time point past i64 has no value: the rule derives nothing
                        // there, as in the reference evaluator.
                        let now = i64::try_from(t).ok().map(Value::Int);
                        let before = t
                            .checked_sub(1)
                            .and_then(|p| i64::try_from(p).ok())
                            .map(Value::Int);
                        let mut updates = own_stash.take(t);
                        for (row, diff) in updates.drain(..) {
                            own_held.add(row, diff);
                        }
                        own_stash.give_back(updates);
                        own_held.flips(|row, sign| own_flips.push((row, sign)));
                        let own_at_all = !own_held.is_empty() || !own_flips.is_empty();
                        // Stamped at t − 1 (the source as it was, before t's changes).
                        let was_stamped = |row: &Row, holding: &Presence<Row>| {
                            before.is_some_and(|b| {
                                source_of(&head, row, b).is_some_and(|x| holding.is_present(&x))
                            })
                        };
                        // Nothing was stamped at t − 1 where nothing held there.
                        if own_at_all && !holding.is_empty() {
                            // Stamped at t − 1 and own at t: the −1 output early goes.
                            for row in own_held.present() {
                                if was_stamped(row, &holding) {
                                    out.push((Row::from_slice(row), t, 1));
                                }
                            }
                            own_flips.retain(|(row, _)| !was_stamped(row, &holding));
                        }
                        let mut updates = stash.take(t);
                        for (row, diff) in updates.drain(..) {
                            holding.add(row, diff);
                        }
                        stash.give_back(updates);
                        holding.settle();
                        if let Some(now) = now {
                            // Own at t − 1 (before t's flips).
                            let flipped: HashMap<&Row, isize> = if own_at_all {
                                own_flips.iter().map(|(r, s)| (r, *s)).collect()
                            } else {
                                HashMap::new()
                            };
                            let owned_before = |row: &Row| match flipped.get(row) {
                                Some(&sign) => sign < 0,
                                None => own_held.is_present(row),
                            };
                            // The point's +1s, then its −1s at t + 1: the operators
                            // downstream buffer by runs of equal times. A stamped fact
                            // that was an own fact already gets no +1 (`quiet`).
                            let from = out.len();
                            let mut quiet = Vec::new();
                            for fact in holding.present() {
                                let stamped = stamp(&head, fact, now);
                                if own_at_all && owned_before(&stamped) {
                                    quiet.push(stamped);
                                } else {
                                    out.push((stamped, t, 1));
                                }
                            }
                            let to = out.len();
                            for i in from..to {
                                let stamped = Row::from_slice(&out[i].0);
                                out.push((stamped, t + 1, -1));
                            }
                            out.extend(quiet.into_iter().map(|s| (s, t + 1, -1)));
                        }
                        // Own facts that are not stamped at t either.
                        for (row, sign) in own_flips.drain(..) {
                            let stamped_now = now.is_some_and(|n| {
                                source_of(&head, &row, n).is_some_and(|x| holding.is_present(&x))
                            });
                            if !stamped_now {
                                out.push((row, t, sign));
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

/// The stamped facts of `source` given as points (`render::fed_as_points`): the stamp of
/// a fact given at t holds at t alone, a point itself, so each is made as its fact comes,
/// with no table of what holds and nothing at t + 1; united with `own` (h's own input
/// facts, points too). A count above 1 (a stamped fact that is also an own fact) is
/// left to the ♢ windows that read these, which count.
///
/// Each message's facts are stamped where they lie and the message passes on as it is,
/// where `flat_map` would move every record into containers of its own.
pub fn points<'s>(source: Coll<'s, u64>, own: Coll<'s, u64>, head: Vec<Stamped>) -> Coll<'s, u64> {
    source
        .inner
        .unary::<CapacityContainerBuilder<Vec<(Row, u64, isize)>>, _, _, _>(
            Pipeline,
            "StampPoints",
            move |_, _| {
                move |input, output| {
                    input.for_each(|time, data| {
                        // A time point past i64 has no value: the rule derives nothing
                        // there.
                        data.retain_mut(|(fact, time, _)| match i64::try_from(*time) {
                            Ok(now) => {
                                *fact = stamp(&head, fact, Value::Int(now));
                                true
                            }
                            Err(_) => false,
                        });
                        output.session(&time).give_container(data);
                    });
                }
            },
        )
        .as_collection()
        .concat(own)
}

/// The stamped fact of `fact` at the time point `time` (one allocation where it is
/// longer than a row holds inline; `collect` into a row grew it value by value). Its
/// values go into a vector the row takes over: a row made empty with room for them came
/// back through memory and was read again wider than it was written, a store-forwarding
/// stall on every stamped fact.
fn stamp(head: &[Stamped], fact: &Row, time: Value) -> Row {
    let value = |arg: &Stamped| match arg {
        Stamped::Arg(i) => fact.get(*i).copied().unwrap_or(time),
        Stamped::Time => time,
        Stamped::Const(value) => *value,
    };
    match head {
        [a] => Row::from_slice(&[value(a)]),
        [a, b] => Row::from_slice(&[value(a), value(b)]),
        _ => Row::from_vec(head.iter().map(value).collect()),
    }
}

/// The source fact's arguments that `row` (a fact of h) carries, in the source's order.
fn arguments(head: &[Stamped], row: &Row) -> Row {
    let mut args: Vec<(usize, Value)> = head
        .iter()
        .zip(row)
        .filter_map(|(arg, value)| match arg {
            Stamped::Arg(i) => Some((*i, *value)),
            _ => None,
        })
        .collect();
    args.sort_unstable_by_key(|(i, _)| *i);
    args.into_iter().map(|(_, v)| v).collect()
}

/// The source fact `row` (a fact of h) is the stamp of at `time`, if it is one: its
/// time positions hold `time` and its constants are the head's.
fn source_of(head: &[Stamped], row: &Row, time: Value) -> Option<Row> {
    let fits = head.iter().zip(row).all(|(arg, value)| match arg {
        Stamped::Arg(_) => true,
        Stamped::Time => *value == time,
        Stamped::Const(c) => value == c,
    });
    (fits && row.len() == head.len()).then(|| arguments(head, row))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::operators::testing::{
        Update, assert_same_at_every_time, at, changes, held, run, set, snapshots,
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

    /// The operator over `source` and `own` on `workers` workers, fed `batch` points at
    /// a time.
    fn stamped(
        workers: usize,
        source: Vec<Update<Row>>,
        own: Vec<Update<Row>>,
        end: u64,
        batch: u64,
    ) -> Vec<Update<Row>> {
        run(workers, vec![source, own], end, batch, |mut c| {
            let own = c.pop().unwrap();
            let source = c.pop().unwrap();
            render(source, own, head())
        })
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
        let mut got = stamped(1, input, Vec::new(), 10, 3);
        got.sort();
        let mut expected = vec![];
        for (t, x) in [(2, 1), (3, 1), (4, 1), (7, 2), (3, 3)] {
            expected.push((row(&[t, x, 9]), t as u64, 1));
            expected.push((row(&[t, x, 9]), t as u64 + 1, -1));
        }
        expected.sort();
        assert_eq!(got, expected);
    }

    /// Over points (a fact +1 at each time point it is given at), each point's stamped
    /// fact is a point of its own, and h's own points pass as they are: a fact given at 2
    /// and 3 and twice at 5 (count 2) is stamped at 2, 3 and 5 (count 2 there), on 1 and 3
    /// workers.
    #[test]
    fn over_points_each_point_is_stamped_as_a_point() {
        let source = vec![(row(&[1]), 2, 1), (row(&[1]), 3, 1), (row(&[1]), 5, 2)];
        let own = vec![(row(&[4, 1, 8]), 4, 1)];
        for workers in [1, 3] {
            let (source, own) = (source.clone(), own.clone());
            let mut got = run(workers, vec![source, own], 8, 2, |mut c| {
                let own = c.pop().expect("two inputs");
                let source = c.pop().expect("two inputs");
                points(source, own, head())
            });
            got.sort();
            let expected = vec![
                (row(&[2, 1, 9]), 2, 1),
                (row(&[3, 1, 9]), 3, 1),
                (row(&[4, 1, 8]), 4, 1),
                (row(&[5, 1, 9]), 5, 2),
            ];
            assert_eq!(got, expected, "{workers} workers");
        }
    }

    /// The stamped facts a source fact gives, and own facts among them: [3, 1, 9] is
    /// stamped at 3 and given over [2, 6): one fact throughout.
    #[test]
    fn an_own_fact_that_is_also_stamped_holds_once() {
        let source = vec![(row(&[1]), 3, 1), (row(&[1]), 4, -1)];
        let own = vec![
            (row(&[3, 1, 9]), 2, 1),
            (row(&[3, 1, 9]), 6, -1),
            (row(&[4, 1, 8]), 4, 1),
        ];
        let got = stamped(2, source, own, 8, 2);
        let expected: Vec<_> = (0..8)
            .map(|t| {
                let mut facts = Vec::new();
                if (2..6).contains(&t) {
                    facts.push(row(&[3, 1, 9]));
                }
                if t >= 4 {
                    facts.push(row(&[4, 1, 8]));
                }
                set(facts)
            })
            .collect();
        assert_same_at_every_time(&snapshots(&got, 8), &expected);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// At every time point, on 1–3 workers fed in batches of 1–7 points, the output
        /// is exactly the stamped facts of the source facts holding there and the own
        /// facts holding there (some of them stamps, some with another constant).
        #[test]
        fn stamps_what_holds_with_own_facts_at_every_time_point(
            presence in held(5, 40, 6, 8),
            own_presence in prop::option::of(held(12, 40, 10, 4)),
            workers in 1usize..=3,
            batch in 1u64..=7,
        ) {
            let end = 40;
            let universe: Vec<Row> = (0..5).map(|i| row(&[i])).collect();
            // Stamps at the first points, and facts no stamp gives (constant 8).
            let own_universe: Vec<Row> = (0..12)
                .map(|i| row(&[i % 4, i % 3, if i < 9 { 9 } else { 8 }]))
                .collect();
            let own_presence = own_presence.unwrap_or_default();
            let got = stamped(
                workers,
                changes(&universe, &presence),
                changes(&own_universe, &own_presence),
                end,
                batch,
            );
            let expected: Vec<_> = (0..end)
                .map(|t| {
                    let stamps = (0..5)
                        .filter(|&r| at(&presence, r, t as i64))
                        .map(|r| row(&[t as i64, r as i64, 9]));
                    let owned = (0..own_universe.len())
                        .filter(|&r| at(&own_presence, r, t as i64))
                        .map(|r| own_universe[r].clone());
                    set(stamps.chain(owned))
                })
                .collect();
            assert_same_at_every_time(&snapshots(&got, end), &expected);
        }
    }
}
