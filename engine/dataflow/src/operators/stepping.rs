//! The framework of the operators that take their input a time point at a time, in order
//! (`stepper`, `persist`, `count`; `stamp` takes [`next_time`]): input buffered by time
//! point and taken below the frontier ([`operate`], [`TimeStepped`]), keys' states found
//! through a table of fingerprints and put on work lists ([`KeyTable`], [`Listed`]), a
//! key's input counts ([`Inputs`]) and a relation's changes between two time points
//! ([`diff`]).

use std::hash::BuildHasher;

use differential_dataflow::AsCollection;
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;

use super::Facts;
use stgflow_eval::eval::{Rows, SMALL_LIMIT, SmallRelation};
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

pub(super) type Update = ((u32, Row), u64, isize);

/// `state` as a unary operator named `name` over `source`, its input exchanged by `route`
/// (a key's facts meet on one worker), buffered by time point and taken in order.
pub(super) fn operate<'s, S: TimeStepped + 'static>(
    source: Facts<'s, u64>,
    name: &str,
    route: impl Fn(&Update) -> u64 + 'static,
    mut state: S,
) -> Facts<'s, u64> {
    source
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<Update>>, _, _, _>(
            Exchange::new(route),
            name,
            move |capability, _info| {
                let mut capability = Some(capability);
                let mut out = Vec::new();
                move |(input, frontier), output| {
                    input.for_each(|_, data| state.stash().add(data, &|t, _| t));
                    let limit = frontier.frontier().first().copied();
                    step_through(&mut state, &mut capability, limit, output, &mut out);
                }
            },
        )
        .as_collection()
}

/// [`operate`] over two inputs: `routed`, exchanged by `route`, and `local`, taken where it
/// arrives (already broadcast), both stashed alike.
pub(super) fn operate_split<'s, S: TimeStepped + 'static>(
    routed: StreamVec<'s, u64, Update>,
    local: StreamVec<'s, u64, Update>,
    name: &str,
    route: impl Fn(&Update) -> u64 + 'static,
    mut state: S,
) -> Facts<'s, u64> {
    routed
        .binary_frontier::<_, CapacityContainerBuilder<Vec<Update>>, _, _, _, _>(
            local,
            Exchange::new(route),
            Pipeline,
            name,
            move |capability, _info| {
                let mut capability = Some(capability);
                let mut out = Vec::new();
                move |(routed, routed_frontier), (local, local_frontier), output| {
                    routed.for_each(|_, data| state.stash().add(data, &|t, _| t));
                    local.for_each(|_, data| state.stash().add(data, &|t, _| t));
                    let limit = super::limit(routed_frontier, local_frontier);
                    step_through(&mut state, &mut capability, limit, output, &mut out);
                }
            },
        )
        .as_collection()
}

/// [`operate`] inside a loop through time: `state` holds a capability only while it has
/// work ([`super::Pending`]: one held at its frontier would step the loop on through every
/// time point), takes no time point the input has not passed (`bound`'s frontier, through
/// the unit row), and stops once the input is closed: the timeline has ended, and what is
/// left (a deadline past it) is past it.
pub(super) fn operate_looped<'s, S: TimeStepped + 'static>(
    source: Facts<'s, u64>,
    bound: super::Coll<'s, u64>,
    route: impl Fn(&Update) -> u64 + 'static,
    mut state: S,
) -> Facts<'s, u64> {
    source
        .inner
        .binary_frontier::<_, CapacityContainerBuilder<Vec<Update>>, _, _, _, _>(
            bound.inner,
            Exchange::new(route),
            Pipeline,
            "Stepper",
            move |_capability, _info| {
                let mut pending = super::Pending::default();
                let mut out = Vec::new();
                move |(input, frontier), (bound, bound_frontier), output| {
                    bound.for_each(|_, data| data.clear());
                    let Some(&end) = bound_frontier.frontier().first() else {
                        input.for_each(|_, data| data.clear());
                        pending.settle(None);
                        return;
                    };
                    input.for_each(|capability, data| {
                        pending.note(&capability);
                        state.stash().add(data, &|t, _| t);
                    });
                    let limit = frontier.frontier().first().map_or(end, |&f| f.min(end));
                    let mut first = take_below(&mut state, Some(limit), &mut out);
                    super::zero_one::send_first(output, pending.get(), &mut first, &mut out);
                    // The earliest time point with work, were every input in.
                    pending.settle(state.next_time(Some(u64::MAX)));
                }
            },
        )
        .as_collection()
}

/// An operator that takes its input a time point at a time, in order (the stepper,
/// `persist` and `count`).
pub(super) trait TimeStepped {
    /// Where its input waits for its time point.
    fn stash(&mut self) -> &mut super::zero_one::Stash<(u32, Row)>;
    /// The next time point to take below `limit` (see [`next_time`]).
    fn next_time(&self, limit: Option<u64>) -> Option<u64>;
    /// Takes time point `t`, its output into `out`.
    fn process(&mut self, t: u64, out: &mut Vec<Update>);
}

/// Takes every time point `state` has below `limit` (the input frontier), sending their
/// output as one message (`zero_one::send_first`), and moves the capability up to `limit`.
/// `out` is the operator's own: it starts each activation with the room the last one's
/// output took, so that it does not grow (and copy itself) again every time.
pub(super) fn step_through(
    state: &mut impl TimeStepped,
    capability: &mut Option<timely::dataflow::operators::Capability<u64>>,
    limit: Option<u64>,
    output: &mut super::zero_one::Output<'_, (u32, Row)>,
    out: &mut Vec<Update>,
) {
    let mut first = take_below(state, limit, out);
    super::zero_one::send_first(output, capability.as_ref(), &mut first, out);
    super::follow_frontier(capability, limit);
}

/// Takes every time point `state` has below `limit` into `out`; the first with output.
fn take_below(
    state: &mut impl TimeStepped,
    limit: Option<u64>,
    out: &mut Vec<Update>,
) -> Option<u64> {
    let mut first = None;
    while let Some(t) = state.next_time(limit) {
        state.process(t, out);
        super::zero_one::mark(&mut first, t, out);
    }
    first
}

/// The next time point to evaluate below `limit` (the input frontier; `None` once the
/// input is closed, when only buffered input is still processed): the first buffered one,
/// or the one after `last_processed` when some key is `active` there.
pub(super) fn next_time(
    stashed: Option<u64>,
    active: bool,
    last_processed: Option<u64>,
    limit: Option<u64>,
) -> Option<u64> {
    let active = (active && limit.is_some()).then(|| last_processed.map_or(0, |t| t + 1));
    let next = match (stashed, active) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b)?,
    };
    match limit {
        Some(f) if next >= f => None,
        _ => Some(next),
    }
}

/// A key's state as the work lists see it.
pub(super) trait Listed {
    /// The time point it was last put on a work list for, plus one (0: never).
    fn listed(&mut self) -> &mut u64;
    /// Reads each of its cache lines (the pass of [`KeyTable::take_keys`] that loads them).
    fn touch(&self) -> bool;
}

/// Puts the key at `index` on the work list for `t`, once.
pub(super) fn list(work: &mut Vec<usize>, state: &mut impl Listed, index: usize, t: u64) {
    let listed = state.listed();
    if *listed != t + 1 {
        *listed = t + 1;
        work.push(index);
    }
}

/// A key's state knows its key (the key table finds states through it).
pub(super) trait Keyed<K> {
    fn key(&self) -> &K;
}

/// Keys and their states: a table of 8-byte entries into a vector of states (the only hash
/// lookup), each a state's index and 32 bits of its key's hash (the *fingerprint*, from
/// which the table's own hash is made, so that growing the table reads no state); the
/// indices of removed keys taken by new ones.
///
/// A table of whole keys (24 bytes for a `Value` and its index) falls out of the caches
/// at 10⁵ keys, a miss per lookup on top of the state's own. With indices alone, a lookup
/// that compared the key where the state has it would take the state's miss inside the
/// lookup, one after the other for a time point's changes. [`KeyTable::take_keys`] finds
/// a time point's keys by fingerprint alone, then loads their states in a loop of
/// independent loads, then compares the keys; a fingerprint shared by two keys (at 10⁵
/// keys, about one lookup in 40,000) is found by the compare and looked up again with it.
pub(super) struct KeyTable<S, K = Value> {
    index: HashTable<u64>,
    hasher: DefaultHashBuilder,
    pub(super) states: Vec<S>,
    free: Vec<usize>,
    key: std::marker::PhantomData<K>,
}

impl<S, K> Default for KeyTable<S, K> {
    fn default() -> Self {
        KeyTable {
            index: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            states: Vec::new(),
            free: Vec::new(),
            key: std::marker::PhantomData,
        }
    }
}

/// A key's fingerprint: 32 bits of its hash.
fn fingerprint(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// The hash the table files a fingerprint under (its bits spread over the word, as the
/// table takes buckets from the low bits and tags from the high ones).
fn filed(fingerprint: u32) -> u64 {
    u64::from(fingerprint).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn entry_of(fingerprint: u32, index: usize) -> u64 {
    // More than 2³² keys' states cannot be allocated.
    (u64::from(fingerprint) << 32) | u64::from(u32::try_from(index).unwrap_or(u32::MAX))
}

fn fingerprint_of(entry: u64) -> u32 {
    (entry >> 32) as u32
}

fn index_of(entry: u64) -> usize {
    entry as u32 as usize
}

impl<S: Keyed<K>, K: std::hash::Hash + Eq> KeyTable<S, K> {
    /// The index of `key`'s state, made by `make` (given the key) for a new key.
    pub(super) fn index(&mut self, key: K, make: impl FnOnce(&K) -> S) -> usize {
        let print = fingerprint(self.hasher.hash_one(&key));
        let states = &self.states;
        let found = self.index.find(filed(print), |&e| {
            fingerprint_of(e) == print && states[index_of(e)].key() == &key
        });
        match found {
            Some(&e) => index_of(e),
            None => self.insert(print, make(&key)),
        }
    }

    /// Files a new key's `state` under its fingerprint; its index.
    fn insert(&mut self, print: u32, state: S) -> usize {
        let at = match self.free.pop() {
            Some(at) => {
                self.states[at] = state;
                at
            }
            None => {
                self.states.push(state);
                self.states.len() - 1
            }
        };
        self.index
            .insert_unique(filed(print), entry_of(print, at), |&e| {
                filed(fingerprint_of(e))
            });
        at
    }

    /// The index of each change's key (`key_of` its tag and fact) into `indices`, states
    /// made by `make` for new keys, each key put on `work` for `t` once. The keys are
    /// found by fingerprint first (the table only), then their states are loaded in a
    /// short loop of independent loads, then the keys are compared: the CPU waits for the
    /// cache misses of a time point's keys (random among many) together, not one after the
    /// other.
    pub(super) fn take_keys(
        &mut self,
        changes: &[((u32, Row), isize)],
        key_of: impl Fn(u32, &Row) -> K,
        make: impl Fn(&K) -> S,
        indices: &mut Vec<usize>,
        work: &mut Vec<usize>,
        t: u64,
    ) where
        S: Listed,
    {
        indices.clear();
        for ((tag, row), _) in changes {
            let key = key_of(*tag, row);
            let print = fingerprint(self.hasher.hash_one(&key));
            let found = self
                .index
                .find(filed(print), |&e| fingerprint_of(e) == print);
            indices.push(match found {
                Some(&e) => index_of(e),
                None => self.insert(print, make(&key)),
            });
        }
        for &index in indices.iter() {
            // Every cache line of the state, loaded now with the others' (a loop of loads
            // alone, so that many are on their way at once).
            std::hint::black_box(self.states[index].touch());
        }
        for (((tag, row), _), index) in changes.iter().zip(indices.iter_mut()) {
            let key = key_of(*tag, row);
            if self.states[*index].key() != &key {
                // Another key with the same fingerprint.
                *index = self.index(key, &make);
            }
            list(work, &mut self.states[*index], *index, t);
        }
    }

    /// Forgets `key`, whose state is at `index`: a new key takes its place.
    pub(super) fn remove(&mut self, key: &K, index: usize) {
        let print = fingerprint(self.hasher.hash_one(key));
        if let Ok(entry) = self
            .index
            .find_entry(filed(print), |&e| e == entry_of(print, index))
        {
            entry.remove();
        }
        self.free.push(index);
    }
}

/// A key's accumulated input counts, none of them zero: (local predicate, fact) → count.
/// A list while it is short — a key mostly has a few input facts at a time — and a map
/// once it has more than [`SMALL_LIMIT`].
#[derive(Default)]
pub(super) struct Inputs {
    list: smallvec::SmallVec<[(usize, Row, isize); 1]>,
    /// Boxed, as `SmallRelation`'s set: a key's state stays a few cache lines.
    map: Option<Box<HashMap<(usize, Row), isize>>>,
}

impl Inputs {
    pub(super) fn add(&mut self, local: usize, fact: Row, diff: isize) {
        if let Some(map) = &mut self.map {
            match map.entry((local, fact)) {
                hashbrown::hash_map::Entry::Occupied(mut entry) => {
                    *entry.get_mut() += diff;
                    if *entry.get() == 0 {
                        entry.remove();
                    }
                }
                hashbrown::hash_map::Entry::Vacant(entry) => {
                    entry.insert(diff);
                }
            }
            return;
        }
        let list = &mut self.list;
        match list.iter().position(|(l, f, _)| *l == local && *f == fact) {
            Some(i) => {
                list[i].2 += diff;
                if list[i].2 == 0 {
                    list.swap_remove(i);
                }
            }
            None if list.len() < SMALL_LIMIT => list.push((local, fact, diff)),
            None => {
                let mut map: HashMap<(usize, Row), isize> =
                    list.drain(..).map(|(l, f, c)| ((l, f), c)).collect();
                map.insert((local, fact), diff);
                self.map = Some(Box::new(map));
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.map.as_ref().is_none_or(|map| map.is_empty())
    }

    /// The counts: the list's, or once there is a map, the map's (the list is then empty).
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &Row, isize)> {
        match &self.map {
            Some(map) => InputsIter::Map(map.iter()),
            None => InputsIter::List(self.list.iter()),
        }
    }

    /// Whether `fact` of `local` has a positive count (one hash lookup once there is a
    /// map).
    pub(super) fn holds(&self, local: usize, fact: &[Value]) -> bool {
        match &self.map {
            Some(map) => map.get(&FactRef(local, fact)).is_some_and(|&c| c > 0),
            None => (self.list.iter()).any(|(l, f, c)| *l == local && *c > 0 && f[..] == *fact),
        }
    }
}

/// A (local, fact) key of [`Inputs`]'s map, borrowed: it hashes as the owned key does (a
/// tuple's fields in order; a `Row` as the slice of its values).
#[derive(Hash)]
struct FactRef<'a>(usize, &'a [Value]);

impl hashbrown::Equivalent<(usize, Row)> for FactRef<'_> {
    fn equivalent(&self, key: &(usize, Row)) -> bool {
        self.0 == key.0 && *self.1 == key.1[..]
    }
}

enum InputsIter<'a> {
    List(std::slice::Iter<'a, (usize, Row, isize)>),
    Map(hashbrown::hash_map::Iter<'a, (usize, Row), isize>),
}

impl<'a> Iterator for InputsIter<'a> {
    type Item = (usize, &'a Row, isize);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            InputsIter::List(counts) => counts.next().map(|(l, f, c)| (*l, f, *c)),
            InputsIter::Map(counts) => counts.next().map(|((l, f), c)| (*l, f, *c)),
        }
    }
}

/// Pushes `now`'s changes against `before` for `pred`; whether there are any.
pub(super) fn diff(
    pred: PredId,
    before: &SmallRelation,
    now: &SmallRelation,
    t: u64,
    out: &mut Vec<Update>,
) -> bool {
    let start = out.len();
    for fact in now.iter().filter(|f| !before.contains_row(f)) {
        out.push(((pred as u32, Row::from_slice(fact)), t, 1));
    }
    for fact in before.iter().filter(|f| !now.contains_row(f)) {
        out.push(((pred as u32, Row::from_slice(fact)), t, -1));
    }
    out.len() > start
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use stgflow_lang::value::{Row, Value};

    /// A key whose hash is the same for every key: every lookup meets a shared
    /// fingerprint.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Colliding(i64);

    impl std::hash::Hash for Colliding {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u64(7);
        }
    }

    struct Probe {
        key: Colliding,
        listed: u64,
    }

    impl super::Keyed<Colliding> for Probe {
        fn key(&self) -> &Colliding {
            &self.key
        }
    }

    impl super::Listed for Probe {
        fn listed(&mut self) -> &mut u64 {
            &mut self.listed
        }

        fn touch(&self) -> bool {
            self.listed == 0
        }
    }

    proptest! {
        /// The key table gives a key the index it gave it before, and two keys alive at
        /// once different indices, when every key's fingerprint is the same, keys come
        /// and go, and a time point's changes name a key several times.
        #[test]
        fn key_table_keeps_keys_apart_when_their_fingerprints_collide(
            points in prop::collection::vec(
                (prop::collection::vec(0i64..6, 1..6), prop::collection::vec(0i64..6, 0..3)),
                1..20,
            ),
        ) {
            let mut table: super::KeyTable<Probe, Colliding> = super::KeyTable::default();
            let mut model: std::collections::HashMap<i64, usize> = Default::default();
            let (mut indices, mut work) = (Vec::new(), Vec::new());
            for (t, (named, removed)) in points.into_iter().enumerate() {
                let changes: Vec<((u32, Row), isize)> = named
                    .iter()
                    .map(|&k| ((0, Row::from_slice(&[Value::Int(k)])), 1))
                    .collect();
                let key_of = |_: u32, row: &Row| match row.first() {
                    Some(Value::Int(k)) => Colliding(*k),
                    _ => Colliding(-1),
                };
                let make = |key: &Colliding| Probe { key: *key, listed: 0 };
                table.take_keys(&changes, key_of, make, &mut indices, &mut work, t as u64);
                for (&k, &index) in named.iter().zip(&indices) {
                    prop_assert_eq!(table.states[index].key, Colliding(k));
                    let known = *model.entry(k).or_insert(index);
                    prop_assert_eq!(known, index);
                }
                let mut distinct: Vec<usize> = model.values().copied().collect();
                distinct.sort_unstable();
                distinct.dedup();
                prop_assert_eq!(distinct.len(), model.len());
                let mut listed = work.clone();
                listed.sort_unstable();
                listed.dedup();
                prop_assert_eq!(listed.len(), work.len());
                work.clear();
                for k in removed {
                    if let Some(index) = model.remove(&k) {
                        table.remove(&Colliding(k), index);
                        prop_assert_eq!(table.index(Colliding(k), make), index);
                        model.insert(k, index);
                        table.remove(&Colliding(k), index);
                        model.remove(&k);
                    }
                }
            }
        }
    }
}
