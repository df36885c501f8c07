//! `changes`: input facts as they hold at each time point ("points": a fact given at t holds
//! at t) turned into changes against the previous time point — +1 when a fact starts to
//! hold, −1 when it stops — so that a fact that keeps holding costs nothing downstream.
//!
//! The facts are exchanged by hash first, so each worker diffs its own share: the diff runs
//! on every worker, not on the thread that reads the input. The runtime uses it with
//! `--diff-on-workers` (`runtime::Options::diff_on_workers`); by default the thread that
//! reads diffs, with the same [`PointDiff`], and sends changes. Per worker, the facts of the
//! last time point are kept in arrival order with an index by hash ([`HeldFacts`]); a time
//! point is diffed once the frontier has passed it, in time order. The facts that leave
//! are retracted in the order they arrived: a window's count table stores its records in
//! arrival order, and meets the retractions together (in hash order each was a cache miss
//! once the table outgrew the caches). When a time point without input follows, all of
//! them are retracted there; nothing is retracted after the input ends (the timeline ends
//! with its last time point).

use std::hash::{BuildHasher, Hash};

use differential_dataflow::{AsCollection, Hashable};
use hashbrown::{DefaultHashBuilder, HashTable};
use stgflow_lang::value::Row;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

use super::Coll;
use super::zero_one::{Stash, mark, send_first};

/// The changes of `points` (facts with +1 at each time point they are given at, in any
/// multiplicity): 0/1, see the module doc.
pub fn changes(points: Coll<'_, u64>) -> Coll<'_, u64> {
    let mut stash: Stash<Row> = Stash::default();
    let mut diff: PointDiff<Row> = PointDiff::default();
    // The time point whose facts `diff` holds.
    let mut held_at: Option<u64> = None;
    let mut out: Vec<(Row, u64, isize)> = Vec::new();
    let route = |(row, _, _): &(Row, u64, isize)| row.hashed();
    points
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(Row, u64, isize)>>, _, _, _>(
            Exchange::new(route),
            "Changes",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|_, data| stash.add(data, &|time, _| time));
                    let limit = frontier.frontier().first().copied();
                    let mut first = None;
                    loop {
                        let next = stash
                            .first_time()
                            .filter(|&time| limit.is_none_or(|f| time < f));
                        // The facts held leave at the time point after theirs when it has
                        // no input and is complete (a later time point is, or the frontier
                        // is past it); after the end of the input nothing follows.
                        if let (Some(at), true) = (held_at, capability.is_some()) {
                            let after = at + 1;
                            let complete = next.is_some() || limit.is_some_and(|f| after < f);
                            if next != Some(after) && complete {
                                diff.left(|row| out.push((row, after, -1)));
                                mark(&mut first, after, &out);
                                held_at = None;
                            }
                        }
                        let (Some(time), true) = (next, capability.is_some()) else {
                            break;
                        };
                        // `diff` holds the previous time point's facts, or none.
                        let mut points = stash.take(time);
                        diff.next(points.drain(..).map(|(row, _)| row), |row| {
                            out.push((Row::from_slice(row), time, 1));
                        });
                        diff.left(|row| out.push((row, time, -1)));
                        mark(&mut first, time, &out);
                        stash.give_back(points);
                        held_at = Some(time);
                    }
                    send_first(output, capability.as_ref(), &mut first, &mut out);
                    super::follow_frontier(&mut capability, limit);
                }
            },
        )
        .as_collection()
}

/// Points to changes, a time point at a time: the facts of the last time point (in
/// arrival order, with an index by hash), against which the next one's are diffed with one
/// hash and lookup per fact.
pub(crate) struct PointDiff<F> {
    held: HeldFacts<F>,
    /// The facts of the time point being diffed, until [`PointDiff::left`] ends it.
    incoming: HeldFacts<F>,
    /// An empty set whose allocation the next time point reuses.
    spare: HeldFacts<F>,
    /// Hashes the facts of both sets, each once.
    hasher: DefaultHashBuilder,
}

impl<F> Default for PointDiff<F> {
    fn default() -> PointDiff<F> {
        PointDiff {
            held: HeldFacts::default(),
            incoming: HeldFacts::default(),
            spare: HeldFacts::default(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<F: Hash + Eq> PointDiff<F> {
    /// Diffs the facts of the next time point (any multiplicity) against those held:
    /// `started(fact)` for each that starts to hold, in arrival order. [`PointDiff::left`]
    /// then ends the time point.
    pub(crate) fn next(
        &mut self,
        facts: impl ExactSizeIterator<Item = F>,
        mut started: impl FnMut(&F),
    ) {
        let now = &mut self.incoming;
        if now.facts.capacity() == 0 {
            *now = std::mem::take(&mut self.spare);
        }
        now.reserve(facts.len());
        for fact in facts {
            let hash = self.hasher.hash_one(&fact);
            if let Some(kept) = self.held.take(hash, &fact) {
                // Not in `now` yet: had it been there, it would have left `held`.
                now.push_unique(hash, kept);
            } else if !now.contains(hash, &fact) {
                started(&fact);
                now.push_unique(hash, fact);
            }
        }
    }

    /// Ends a time point: the facts held before it that it does not have (all of them
    /// when [`PointDiff::next`] gave it none) stopped holding; each is moved to
    /// `stopped`, in the order they arrived.
    pub(crate) fn left(&mut self, stopped: impl FnMut(F)) {
        self.held.drain_left().for_each(stopped);
        let now = std::mem::take(&mut self.incoming);
        self.spare = std::mem::replace(&mut self.held, now);
    }
}

/// The facts of one time point, in arrival order, with an index by hash.
struct HeldFacts<F> {
    /// Each fact with its hash; `None` once the next time point has taken it.
    facts: Vec<(u64, Option<F>)>,
    /// Positions in `facts` of the facts not taken, by hash.
    index: HashTable<usize>,
}

impl<F> Default for HeldFacts<F> {
    fn default() -> HeldFacts<F> {
        HeldFacts {
            facts: Vec::new(),
            index: HashTable::new(),
        }
    }
}

impl<F: Eq> HeldFacts<F> {
    fn reserve(&mut self, additional: usize) {
        self.facts.reserve(additional);
        let facts = &self.facts;
        self.index.reserve(additional, |&i| facts[i].0);
    }

    /// Whether position `i` of `facts` holds `fact` (with `hash`).
    fn holds(facts: &[(u64, Option<F>)], i: usize, hash: u64, fact: &F) -> bool {
        facts[i].0 == hash && facts[i].1.as_ref() == Some(fact)
    }

    fn contains(&self, hash: u64, fact: &F) -> bool {
        let facts = &self.facts;
        self.index
            .find(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .is_some()
    }

    /// Removes `fact` (with `hash`) and returns it, when held.
    fn take(&mut self, hash: u64, fact: &F) -> Option<F> {
        let facts = &mut self.facts;
        let entry = self
            .index
            .find_entry(hash, |&i| HeldFacts::holds(facts, i, hash, fact))
            .ok()?;
        let (i, _) = entry.remove();
        facts[i].1.take()
    }

    /// Adds `fact`, which is not held yet.
    fn push_unique(&mut self, hash: u64, fact: F) {
        let facts = &mut self.facts;
        facts.push((hash, Some(fact)));
        let at = facts.len() - 1;
        self.index.insert_unique(hash, at, |&i| facts[i].0);
    }

    /// Empties the set; returns the facts not taken, in arrival order.
    fn drain_left(&mut self) -> impl Iterator<Item = F> + '_ {
        self.index.clear();
        self.facts.drain(..).filter_map(|(_, fact)| fact)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::testing::{
        Held, Snapshot, assert_same_at_every_time, at, held, run, set, snapshots,
    };
    use proptest::prelude::*;
    use stgflow_lang::value::Value;

    const END: u64 = 30;

    /// The points of `held`: each record at every time point it holds at, twice for the
    /// records `twice` marks (a fact given twice holds once).
    fn points(universe: &[Row], held: &Held, twice: &[bool]) -> Vec<(Row, u64, isize)> {
        let mut out = Vec::new();
        for t in 0..END {
            for (r, record) in universe.iter().enumerate() {
                if at(held, r, t as i64) {
                    let copies = if twice[r] { 2 } else { 1 };
                    out.extend(std::iter::repeat_n((record.clone(), t, 1), copies));
                }
            }
        }
        out
    }

    proptest! {
        /// At every time point the changes add up to exactly the records given there —
        /// through gaps where nothing is given (everything held leaves at the first),
        /// duplicates, 1–3 workers and batches of 1–8 time points.
        #[test]
        fn points_become_the_changes_of_what_holds(
            held in held(6, END, 4, 4),
            twice in prop::collection::vec(any::<bool>(), 6),
            workers in 1..=3usize,
            batch in 1..=8u64,
        ) {
            let universe: Vec<Row> = (0..6).map(|i| Row::from_slice(&[Value::Int(i)])).collect();
            let input = points(&universe, &held, &twice);
            let out = run(workers, vec![input], END, batch, |mut inputs| changes(inputs.remove(0)));
            let expected: Vec<Snapshot<Row>> = (0..END as usize)
                .map(|t| {
                    set(universe.iter().enumerate().filter(|(r, _)| held[*r][t]).map(|(_, row)| row.clone()))
                })
                .collect();
            assert_same_at_every_time(&snapshots(&out, END), &expected);
        }
    }
}
