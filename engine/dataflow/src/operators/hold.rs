//! The hold operator ([`crate::plan::Component::Hold`]): with h the predicate, p its
//! source, g its stop predicate and s a nullary gate,
//!
//! ```text
//! h(X…, T) :- p(X…, T), s(T).
//! h(X…, T) :- h(X…, T-1), not g(X…, T).
//! g(X…, T) :- h(X…, T-1), not p(X…, T).
//! ```
//!
//! a fact of p that holds where s does is held for as long as p holds it. This is LARS's
//! `p__since_start` (□ clipped at the timeline start, and □ over the whole stream), s
//! the timeline's first time point. With h's and g's own input facts, what holds at t is
//!
//! ```text
//! h(x, t) = own_h(x, t) ∨ (p(x, t) ∧ s(t)) ∨ (h(x, t−1) ∧ ¬own_g(x, t) ∧ p(x, t))
//! ```
//!
//! per fact x, from its counts at t and whether h held it at t − 1. Where nothing of x
//! changed at t and s did not flip, h(x, t) = h(x, t − 1) (each term is as it was, and a
//! fact held at t − 1 by any term is held by the same one or the third at t), so a time
//! point evaluates the facts whose counts changed, and all of them where s flipped.
//!
//! The persistence operator would run this as a start rule (a join of p with s in front)
//! and a keep rule reading every fact of p.
//! Here a change of p costs a hash lookup and, for a fact h does not hold while s does
//! not, nothing else. The table keeps the facts of p that hold (a fact can only start
//! where p holds it, and s may flip on later) and the facts h holds.

use hashbrown::HashMap;
use hashbrown::hash_map::Entry;
use timely::dataflow::operators::Concat;
use timely::dataflow::operators::vec::Map;

use super::zero_one::over_gate;
use super::{Coll, Row};

/// Where a record of the operator's first input comes from.
const FROM_SOURCE: u8 = 0;
const FROM_OWN: u8 = 1;
const FROM_STOP_OWN: u8 = 2;

/// One fact's counts: of p, of h's and g's own input, whether h holds it, and whether it
/// is in this time point's list of facts to evaluate.
#[derive(Clone, Copy, Default)]
struct Counts {
    source: isize,
    own: isize,
    stop_own: isize,
    held: bool,
    touched: bool,
}

impl Counts {
    /// Adds a change from input `from`; whether h may hold the fact otherwise now (the
    /// gate as `gated`): a change of p matters only where the gate is open or h holds the
    /// fact, an own fact's always.
    fn add(&mut self, from: u8, diff: isize, gated: bool) -> bool {
        match from {
            FROM_SOURCE => {
                self.source += diff;
                gated || self.held
            }
            FROM_OWN => {
                self.own += diff;
                true
            }
            _ => {
                self.stop_own += diff;
                true
            }
        }
    }

    /// Whether h holds the fact at a time point with these counts, the gate as `gated`,
    /// given whether it held it at the time point before (`self.held`).
    fn holds(&self, gated: bool) -> bool {
        let source = self.source > 0;
        self.own > 0 || (source && gated) || (self.held && self.stop_own <= 0 && source)
    }

    fn is_empty(&self) -> bool {
        self.source == 0 && self.own == 0 && self.stop_own == 0 && !self.held
    }

    /// Evaluates the fact `row` at `time`: pushes h's change of it, if any, to `out`.
    fn evaluate(&mut self, row: &Row, time: u64, gated: bool, out: &mut Vec<(Row, u64, isize)>) {
        self.touched = false;
        let now = self.holds(gated);
        if now != self.held {
            out.push((Row::from_slice(row), time, if now { 1 } else { -1 }));
            self.held = now;
        }
    }
}

/// h's facts (0/1) from p's (`source`), h's own input facts (`own`), g's (`stop_own`)
/// and the gate s (`gate`), all 0/1 (see the module docs).
pub fn render<'s>(
    source: Coll<'s, u64>,
    own: Coll<'s, u64>,
    stop_own: Coll<'s, u64>,
    gate: Coll<'s, u64>,
) -> Coll<'s, u64> {
    let tag = |from: u8| move |(row, time, diff): (Row, u64, isize)| ((from, row), time, diff);
    let tagged = (source.inner.map(tag(FROM_SOURCE)))
        .concat(own.inner.map(tag(FROM_OWN)))
        .concat(stop_own.inner.map(tag(FROM_STOP_OWN)));
    let mut facts: HashMap<Row, Counts> = HashMap::new();
    let mut touched: Vec<Row> = Vec::new();
    let step = move |time, (gated_before, gated), updates: &mut Vec<_>, out: &mut Vec<_>| {
        for ((from, row), diff) in updates.drain(..) {
            match facts.entry(row) {
                Entry::Occupied(mut entry) => {
                    let counts = entry.get_mut();
                    let was_touched = counts.touched;
                    let evaluate = counts.add(from, diff, gated);
                    counts.touched |= evaluate;
                    let empty = counts.is_empty();
                    if evaluate && !was_touched {
                        touched.push(Row::from_slice(entry.key()));
                    } else if empty && !was_touched {
                        entry.remove();
                    }
                }
                Entry::Vacant(entry) => {
                    let mut counts = Counts::default();
                    if counts.add(from, diff, gated) {
                        counts.touched = true;
                        touched.push(Row::from_slice(entry.key()));
                    }
                    entry.insert(counts);
                }
            }
        }
        if gated != gated_before {
            // The gate flipped: every fact may start or stop.
            for (row, counts) in facts.iter_mut() {
                counts.evaluate(row, time, gated, out);
            }
            touched.clear();
            facts.retain(|_, counts| !counts.is_empty());
        } else {
            for row in touched.drain(..) {
                if let Some(counts) = facts.get_mut(&row) {
                    counts.evaluate(&row, time, gated, out);
                    if counts.is_empty() {
                        facts.remove(&row);
                    }
                }
            }
        }
    };
    over_gate(tagged, gate, "Hold", |_| {}, step)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use stgflow_lang::value::Row;

    use super::render;
    use crate::operators::testing::{
        Held, Snapshot, assert_same_at_every_time, at, changes, held, int_rows, run, set, snapshots,
    };

    /// Time points, and facts of p (each a one-value row).
    const END: u64 = 30;
    const RECORDS: usize = 4;

    /// The three rules evaluated as written, time point by time point: h(x, t) =
    /// own_h(x, t) ∨ (p(x, t) ∧ s(t)) ∨ (h(x, t−1) ∧ ¬g(x, t)), g(x, t) = own_g(x, t) ∨
    /// (h(x, t−1) ∧ ¬p(x, t)).
    fn reference(source: &Held, own: &Held, stop_own: &Held, gate: &Held) -> Vec<Snapshot<Row>> {
        let universe = int_rows(RECORDS);
        let mut before = [false; RECORDS];
        (0..END as i64)
            .map(|t| {
                let now: Vec<bool> = (0..RECORDS)
                    .map(|r| {
                        let stop = at(stop_own, r, t) || (before[r] && !at(source, r, t));
                        at(own, r, t)
                            || (at(source, r, t) && at(gate, 0, t))
                            || (before[r] && !stop)
                    })
                    .collect();
                before.copy_from_slice(&now);
                set((0..RECORDS)
                    .filter(|&r| now[r])
                    .map(|r| universe[r].clone()))
            })
            .collect()
    }

    fn check(workers: usize, parts: &[Held; 4], batch: u64) {
        let [source, own, stop_own, gate] = parts;
        let universe = int_rows(RECORDS);
        let inputs = vec![
            changes(&universe, source),
            changes(&universe, own),
            changes(&universe, stop_own),
            changes(&[Row::new()], gate),
        ];
        let output = run(workers, inputs, END, batch, |mut c| {
            let gate = c.pop().expect("four inputs");
            let stop_own = c.pop().expect("four inputs");
            let own = c.pop().expect("four inputs");
            render(c.pop().expect("four inputs"), own, stop_own, gate)
        });
        assert_same_at_every_time(
            &snapshots(&output, END),
            &reference(source, own, stop_own, gate),
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The operator against the rules, with p's facts, h's and g's own and the gate
        /// all coming and going, on 1 and 3 workers, fed 1 to 3 time points at a time.
        #[test]
        fn hold_is_its_three_rules_30_time_points_1_and_3_workers(
            source in held(RECORDS, END, 4, 6),
            own in held(RECORDS, END, 12, 2),
            stop_own in held(RECORDS, END, 12, 2),
            gate in held(1, END, 6, 3),
            batch in 1..4u64,
        ) {
            let parts = [source, own, stop_own, gate];
            check(1, &parts, batch);
            check(3, &parts, batch);
        }
    }
}
