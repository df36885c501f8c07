//! `join` and `antijoin` over totally ordered time points, on hash maps of what holds now.
//!
//! Differential's `join_core` keeps both inputs as arrangements with their history: until
//! a batch is merged and compacted, a key's cursor walks every value the key ever had
//! in it, and the join replays those histories to find the times that meet. Over time
//! points, which are totally ordered and complete one after the other, that history is
//! never needed: once the frontier passes t, the state *at t* is all later time points
//! join against. These operators buffer updates until the frontier passes a time point,
//! then apply that time point's changes in time order, each against the other side's
//! current state:
//!
//! * join: Δ(A ⋈ B) = ΔA ⋈ B + A' ⋈ ΔB, where A' = A + ΔA;
//! * antijoin against a 0/1 collection of keys B: Δ(A ▷ B) = ΔA ▷ B, plus ±A'[k] for each
//!   key k whose presence in B flips.
//!
//! The work per time point is the size of its changes times the matching records of the
//! other side; memory is what holds at the frontier, not what held before. A join
//! without shared variables (a cartesian product, CAVIAR's `distance` over pairs of
//! `coord`) makes differential replay the whole history of its one key at every batch.
//!
//! Records are exchanged by the hash of their key, so each key's state lives on one
//! worker. Inside `iterate` (partially ordered times) the renderer uses differential's
//! operators.

use std::hash::{BuildHasher, Hash};

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use hashbrown::{DefaultHashBuilder, HashMap};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

use super::Pending;
use super::slab::Slab;
use super::zero_one::{Presence, Stash, mark, send_first};

/// One side's changes at a time point: each joined with the other side's current state
/// (`emit(key, value, other value, count)`), then applied to this side's state.
fn join_changes<K: Hash + Eq, V: Hash + Eq, W>(
    changes: &mut Vec<((K, V), isize)>,
    own: &mut State<K, V>,
    other: &State<K, W>,
    mut emit: impl FnMut(&K, &V, &W, isize),
) {
    for ((key, value), diff) in changes.iter() {
        for (other_value, count) in other.values(key) {
            emit(key, value, other_value, diff * count);
        }
    }
    own.apply_all(changes.drain(..));
}

/// The current state of one side: per key, its values with their counts (never zero).
/// One hasher serves every key's values.
struct State<K, V> {
    keys: HashMap<K, Counts<V>>,
    hasher: DefaultHashBuilder,
}

impl<K, V> Default for State<K, V> {
    fn default() -> State<K, V> {
        State {
            keys: HashMap::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }
}

impl<K: Hash + Eq, V: Hash + Eq> State<K, V> {
    /// Adds each change's `diff` to its value's count under its key, dropping counts that
    /// reach zero; then removes the keys left without values (at the end: a key emptied
    /// and filled again within the time point keeps its table). A key is hashed once per
    /// change where it has values, and kept only where they all went.
    fn apply_all(&mut self, changes: impl Iterator<Item = ((K, V), isize)>) {
        let mut emptied = Vec::new();
        for ((key, value), diff) in changes {
            let hash = self.hasher.hash_one(&value);
            match self.keys.get_mut(&key) {
                Some(counts) => {
                    counts.add(hash, value, diff);
                    if counts.is_empty() {
                        emptied.push(key);
                    }
                }
                None => {
                    let mut counts = Counts::default();
                    counts.add(hash, value, diff);
                    if !counts.is_empty() {
                        self.keys.insert(key, counts);
                    }
                }
            }
        }
        self.prune(emptied.into_iter());
    }
}

impl<K: Hash + Eq, V> State<K, V> {
    /// Removes keys left without values.
    fn prune(&mut self, keys: impl Iterator<Item = K>) {
        for key in keys {
            if self.keys.get(&key).is_some_and(Counts::is_empty) {
                self.keys.remove(&key);
            }
        }
    }

    /// The values under `key` with their counts.
    fn values(&self, key: &K) -> impl Iterator<Item = (&V, isize)> {
        self.keys.get(key).into_iter().flat_map(Counts::iter)
    }
}

/// One key's values with their counts (never zero), in arrival order: most keys of a
/// join on every argument hold one value, kept inline; a key of more values keeps them in
/// a [`Slab`]. A key can have many values — the antijoin of a window with a 0-ary atom
/// (`… and not(s)`) keeps the whole window under one key — and a window's retractions
/// come in the order its records arrived. A slab for every key cost a few hundred bytes
/// per value in its first allocations alone; boxed, it costs a key of one value nothing.
#[derive(Default)]
enum Counts<V> {
    #[default]
    Empty,
    One(Counted<V>),
    Many(Box<Slab<Counted<V>>>),
}

struct Counted<V> {
    value: V,
    count: isize,
    hash: u64,
}

impl<V: Hash + Eq> Counts<V> {
    /// Adds `diff` to `value`'s count (`hash` its hash), dropping it when the count reaches
    /// zero.
    fn add(&mut self, hash: u64, value: V, diff: isize) {
        if diff == 0 {
            return;
        }
        match self {
            Counts::Empty => {
                *self = Counts::One(Counted {
                    value,
                    count: diff,
                    hash,
                })
            }
            Counts::One(one) if one.hash == hash && one.value == value => {
                one.count += diff;
                if one.count == 0 {
                    *self = Counts::Empty;
                }
            }
            Counts::One(_) => {
                let Counts::One(one) = std::mem::take(self) else {
                    return;
                };
                let mut slab = Box::<Slab<Counted<V>>>::default();
                slab_add(&mut slab, one.hash, one.value, one.count);
                slab_add(&mut slab, hash, value, diff);
                *self = Counts::Many(slab);
            }
            Counts::Many(slab) => slab_add(slab, hash, value, diff),
        }
    }
}

/// [`Counts::add`] on a slab.
fn slab_add<V: Hash + Eq>(slab: &mut Slab<Counted<V>>, hash: u64, value: V, diff: isize) {
    let _ = slab.change_or_insert(
        hash,
        value,
        |c, value| c.hash == hash && c.value == *value,
        |c| c.hash,
        |value| Counted {
            value,
            count: diff,
            hash,
        },
        |c| {
            c.count += diff;
            c.count == 0
        },
    );
}

impl<V> Counts<V> {
    fn is_empty(&self) -> bool {
        match self {
            Counts::Empty => true,
            Counts::One(_) => false,
            Counts::Many(slab) => slab.is_empty(),
        }
    }

    /// The values with their counts, in arrival order.
    fn iter(&self) -> impl Iterator<Item = (&V, isize)> {
        let (one, many) = match self {
            Counts::Empty => (None, None),
            Counts::One(c) => (Some(c), None),
            Counts::Many(slab) => (None, Some(slab.iter())),
        };
        one.into_iter()
            .chain(many.into_iter().flatten())
            .map(|c| (&c.value, c.count))
    }
}

/// The next buffered time point below `limit`.
fn next_time<A, B>(a: &Stash<A>, b: &Stash<B>, limit: Option<u64>) -> Option<u64> {
    let next = super::zero_one::earliest(a, b)?;
    limit.is_none_or(|f| next < f).then_some(next)
}

/// A binary operator over time points: buffers both inputs (exchanged by `route1` and
/// `route2`) until their frontiers pass a time point, then calls `step(time, left
/// changes, right changes, out)` for each buffered time point in order and sends what it
/// put in `out`, each record at its time, as one message (`zero_one::send_first`).
fn by_time_point<'s, D1, D2, O>(
    left: VecCollection<'s, u64, D1, isize>,
    right: VecCollection<'s, u64, D2, isize>,
    route1: impl Fn(&D1) -> u64 + 'static,
    route2: impl Fn(&D2) -> u64 + 'static,
    name: &str,
    mut step: impl FnMut(u64, &mut Vec<(D1, isize)>, &mut Vec<(D2, isize)>, &mut Vec<(O, u64, isize)>)
    + 'static,
) -> VecCollection<'s, u64, O, isize>
where
    D1: ExchangeData,
    D2: ExchangeData,
    O: ExchangeData,
{
    let mut stash1: Stash<D1> = Stash::default();
    let mut stash2: Stash<D2> = Stash::default();
    let mut out: Vec<(O, u64, isize)> = Vec::new();
    left.inner
        .binary_frontier::<_, CapacityContainerBuilder<Vec<(O, u64, isize)>>, _, _, _, _>(
            right.inner,
            Exchange::new(move |(data, _, _): &(D1, u64, isize)| route1(data)),
            Exchange::new(move |(data, _, _): &(D2, u64, isize)| route2(data)),
            name,
            move |_initial, _info| {
                let mut pending = Pending::default();
                move |(input1, frontier1), (input2, frontier2), output| {
                    input1.for_each(|capability, data| {
                        pending.note(&capability);
                        stash1.add(data, &|t, _| t)
                    });
                    input2.for_each(|capability, data| {
                        pending.note(&capability);
                        stash2.add(data, &|t, _| t)
                    });
                    let limit = super::limit(frontier1, frontier2);
                    let mut first = None;
                    while let Some(time) = next_time(&stash1, &stash2, limit) {
                        let mut changes1 = stash1.take(time);
                        let mut changes2 = stash2.take(time);
                        step(time, &mut changes1, &mut changes2, &mut out);
                        mark(&mut first, time, &out);
                        stash1.give_back(changes1);
                        stash2.give_back(changes2);
                    }
                    send_first(output, pending.get(), &mut first, &mut out);
                    pending.settle(super::zero_one::earliest(&stash1, &stash2));
                }
            },
        )
        .as_collection()
}

/// The join of `left` and `right` on their keys: `logic(key, left value, right value)`
/// for each pair, with the product of their counts (see the module doc).
pub fn join<'s, K, V1, V2, O, L>(
    left: VecCollection<'s, u64, (K, V1), isize>,
    right: VecCollection<'s, u64, (K, V2), isize>,
    mut logic: L,
) -> VecCollection<'s, u64, O, isize>
where
    K: ExchangeData + Hash + Eq,
    V1: ExchangeData + Hash + Eq,
    V2: ExchangeData + Hash + Eq,
    O: ExchangeData,
    L: FnMut(&K, &V1, &V2) -> Option<O> + 'static,
{
    let mut state1: State<K, V1> = State::default();
    let mut state2: State<K, V2> = State::default();
    by_time_point(
        left,
        right,
        |(key, _): &(K, V1)| key.hashed(),
        |(key, _): &(K, V2)| key.hashed(),
        "HashJoin",
        move |time, changes1, changes2, out| {
            // ΔA ⋈ B, then A' ⋈ ΔB.
            join_changes(changes1, &mut state1, &state2, |key, v1, v2, diff| {
                if let Some(record) = logic(key, v1, v2) {
                    out.push((record, time, diff));
                }
            });
            join_changes(changes2, &mut state2, &state1, |key, v2, v1, diff| {
                if let Some(record) = logic(key, v1, v2) {
                    out.push((record, time, diff));
                }
            });
        },
    )
}

/// The records of `left` whose key is not in `keys`: present while its count in `keys`
/// is positive (see the module doc).
pub fn antijoin<'s, K, V>(
    left: VecCollection<'s, u64, (K, V), isize>,
    keys: VecCollection<'s, u64, K, isize>,
) -> VecCollection<'s, u64, (K, V), isize>
where
    K: ExchangeData + Hash + Eq,
    V: ExchangeData + Hash + Eq,
{
    let mut state1: State<K, V> = State::default();
    let mut present: Presence<K> = Presence::default();
    by_time_point(
        left,
        keys,
        |(key, _): &(K, V)| key.hashed(),
        |key: &K| key.hashed(),
        "HashAntijoin",
        move |time, changes1, changes2, out| {
            // ΔA ▷ B (B before this time point's changes).
            for ((key, value), diff) in changes1.iter() {
                if !present.is_present(key) {
                    out.push(((key.clone(), value.clone()), time, *diff));
                }
            }
            state1.apply_all(changes1.drain(..));
            // Keys of B whose presence flips: A' under them leaves or returns.
            for (key, diff) in changes2.drain(..) {
                present.add(key, diff);
            }
            // The key arriving in B removes A' under it; leaving, returns it.
            present.flips(|key, sign| {
                for (value, r) in state1.values(&key) {
                    out.push(((key.clone(), value.clone()), time, -sign * r));
                }
            });
        },
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{antijoin, join};
    use crate::operators::testing::{
        Held, Snapshot, assert_same_at_every_time, at, changes, held, run, snapshots,
    };

    const END: u64 = 30;
    /// Few keys and values, so that most changes meet a match on the other side.
    const KEYS: i64 = 3;
    const VALUES: i64 = 3;

    fn pairs() -> Vec<(i64, i64)> {
        (0..KEYS)
            .flat_map(|k| (0..VALUES).map(move |v| (k, v)))
            .collect()
    }

    /// Keys as the pairs `(k, 0)`: the harness feeds every input the same record type.
    fn keys() -> Vec<(i64, i64)> {
        (0..KEYS).map(|k| (k, 0)).collect()
    }

    /// Which joined triples the join keeps: some pairs are dropped, so that `logic`
    /// returning `None` is exercised too.
    fn kept(key: i64, v1: i64, v2: i64) -> bool {
        (key + v1 + v2) % 4 != 0
    }

    /// The nested-loop join of what holds at each time point.
    fn nested_loop_join(left: &Held, right: &Held) -> Vec<Snapshot<(i64, i64, i64)>> {
        let (l, r) = (pairs(), pairs());
        (0..END as i64)
            .map(|t| {
                let mut out = Snapshot::new();
                for (i, &(k1, v1)) in l.iter().enumerate() {
                    for (j, &(k2, v2)) in r.iter().enumerate() {
                        if at(left, i, t) && at(right, j, t) && k1 == k2 && kept(k1, v1, v2) {
                            *out.entry((k1, v1, v2)).or_default() += 1;
                        }
                    }
                }
                out
            })
            .collect()
    }

    /// The nested-loop antijoin of what holds at each time point.
    fn nested_loop_antijoin(left: &Held, keys_held: &Held) -> Vec<Snapshot<(i64, i64)>> {
        let (l, k) = (pairs(), keys());
        (0..END as i64)
            .map(|t| {
                let mut out = Snapshot::new();
                for (i, &(key, value)) in l.iter().enumerate() {
                    let blocked = k
                        .iter()
                        .enumerate()
                        .any(|(j, &(other, _))| other == key && at(keys_held, j, t));
                    if at(left, i, t) && !blocked {
                        *out.entry((key, value)).or_default() += 1;
                    }
                }
                out
            })
            .collect()
    }

    fn check_join(workers: usize, left: &Held, right: &Held, batch: u64) {
        let inputs = vec![changes(&pairs(), left), changes(&pairs(), right)];
        let output = run(workers, inputs, END, batch, |mut inputs| {
            let right = inputs.pop().expect("two inputs");
            let left = inputs.pop().expect("two inputs");
            join(left, right, |&k, &v1, &v2| {
                kept(k, v1, v2).then_some((k, v1, v2))
            })
        });
        assert_same_at_every_time(&snapshots(&output, END), &nested_loop_join(left, right));
    }

    fn check_antijoin(workers: usize, left: &Held, keys_held: &Held, batch: u64) {
        let inputs = vec![changes(&pairs(), left), changes(&keys(), keys_held)];
        let output = run(workers, inputs, END, batch, |mut inputs| {
            let keys = inputs.pop().expect("two inputs").map(|(k, _)| k);
            let left = inputs.pop().expect("two inputs");
            antijoin(left, keys)
        });
        assert_same_at_every_time(
            &snapshots(&output, END),
            &nested_loop_antijoin(left, keys_held),
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn join_matches_nested_loops_30_time_points_1_worker(
            left in held(9, END, 6, 6),
            right in held(9, END, 6, 6),
            batch in 1..4u64,
        ) {
            check_join(1, &left, &right, batch);
        }

        #[test]
        fn join_matches_nested_loops_30_time_points_3_workers(
            left in held(9, END, 6, 6),
            right in held(9, END, 6, 6),
            batch in 1..4u64,
        ) {
            check_join(3, &left, &right, batch);
        }

        #[test]
        fn antijoin_matches_nested_loops_30_time_points_1_worker(
            left in held(9, END, 6, 6),
            keys_held in held(3, END, 6, 6),
            batch in 1..4u64,
        ) {
            check_antijoin(1, &left, &keys_held, batch);
        }

        #[test]
        fn antijoin_matches_nested_loops_30_time_points_3_workers(
            left in held(9, END, 6, 6),
            keys_held in held(3, END, 6, 6),
            batch in 1..4u64,
        ) {
            check_antijoin(3, &left, &keys_held, batch);
        }
    }
}
