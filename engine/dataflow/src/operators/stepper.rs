//! The time-stepping operator for temporal SCCs (recursion through time, e.g. EC inertia
//! `holds(F, T) :- holds(F, T-1), not term(F, T-1)`) and for rules that read the time as a
//! value.
//!
//! A differential `Variable` with a step of one time point would serialise the whole
//! dataflow on time (every time point a round of the iteration, for every key). Instead this
//! operator buffers its input until the frontier passes a time point, then evaluates the
//! component's rules for that time point with [`stgflow_eval::eval`] — per stratum, semi-naive —
//! and emits the differences against the previous time point.
//!
//! **Delta-driven.** State is kept per *key* (the value at the component's key position,
//! see [`crate::plan`]). A key is evaluated at t only where something its rules read may
//! differ from t − 1: its input changed at t, or some predicate changed at t − k that a
//! rule reads k ≥ 1 points back (a *trigger*). The rules are the same at every time point,
//! so where nothing they read differs, what they derive does not either: the key keeps
//! what it held. A trigger is dropped where the rule cannot fire at t nor at t − 1: one of
//! its positive atoms read k or more points back (already known) finds no fact matching
//! its constants at either. So an EC deadline `fi` (`s_i(X, v', T) :- s_i(X, v, T-d),
//! not s_t(X, v, T-d+1), …, not s_t(X, v, T-1)`) wakes a key d points after an
//! initiation of v, not at each of the d points after every termination. A key's facts
//! are kept as runs of equal time points over the horizon (the largest offset read);
//! a key that holds nothing, has no input and nothing to wake it is dropped. Rules that
//! read the time as a value change every time point, so their keys are evaluated at every
//! point while they hold anything. Where a key's input changed at t only in predicates
//! that no rule reads at offset 0 (a vote read one point back), and nothing woke it, its
//! rules see at t what they saw at t − 1: the change is recorded (a run with the new
//! input and the key's own facts copied), and the rules are evaluated when it is read.
//! An input fact that matches the constants of none of the atoms reading it (EC's
//! `status_start(M, voting)` where only `status_start(M, null)` is read) is dropped as
//! it comes in: voting's partial `status_start` facts woke every voter's state of a
//! motion at each change of its status, twice as many evaluations as the votes made.
//!
//! **Refined keys.** Where every rule also carries other variables at fixed positions
//! ([`crate::plan::StepperPlan::sub_key`]), a key's facts are split into states by those
//! values too (`voted(V, M)`: a state per voter and motion, not per motion), so that an
//! evaluation touches one voter's facts. Facts of predicates from outside that carry
//! none of them (*partial*: `status_start(M, null)`, read at offset 0 only) go to every
//! state of their key, and a new state starts with those held.
//!
//! **Rules without a positive atom** (`p(T) :- not p(T-1).`, `d(T) :- T >= 0.`) have no
//! input to put their key on the work list: the component then reads the unit row, fed
//! once at the timeline's first time point, as an input fact of its one key (such a
//! component has no key, see [`crate::plan`]). Without it the rule fired only from the
//! first time point where some other input of the component changed.
//!
//! **Layout.** Keys map to indices into a slab of key states (one hash lookup per input
//! change); the keys to evaluate are lists of indices, marked by the time point they were
//! listed for. A key's relations at a time point ([`SmallRelation`]) and its input counts
//! are short vectors, scanned instead of hashed, until they hold more than
//! [`SMALL_LIMIT`] entries, when they become hash tables (a component without a key keeps
//! everything under one). Rule evaluation reuses its buffers across keys
//! ([`evaluate_stratum_with`]).
//!
//! **Sharding.** With a key, input is exchanged by the key's hash and every worker runs
//! the operator for its keys. Without one, everything goes to worker 0.
//!
//! **Pitfall.** The operator keeps a capability at the input frontier and downgrades it as
//! the frontier advances; it outputs at time t only once t is complete. Times that no key
//! needs are skipped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::hash::BuildHasher;

use differential_dataflow::{AsCollection, Hashable};
use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::StreamVec;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::core::OkErr;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Broadcast;

use super::Facts;
use crate::plan::StepperPlan;
use stgflow_eval::eval::{
    Facts as FactStore, Rows, RulePlan, SMALL_LIMIT, Scratch, SmallRelation, evaluate_stratum_with,
};
use stgflow_lang::ir::{Literal, PredId, Program, has_constants};
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

/// Tags of input facts of the component's own predicates carry this bit.
const INPUT_BIT: u32 = 1 << 31;

/// The tag under which input facts of an internal predicate `p` enter the operator.
pub fn input_channel(p: PredId) -> u32 {
    INPUT_BIT | p as u32
}

pub(super) type Update = ((u32, Row), u64, isize);

/// Buffered input: per time point, tagged facts with their differences.
type Stash = super::zero_one::Stash<(u32, Row)>;

/// Renders the operator for `plan` over its tagged `source`; returns its predicates'
/// facts, tagged, as differences over time.
pub fn render<'s>(program: &Program, plan: &StepperPlan, source: Facts<'s, u64>) -> Facts<'s, u64> {
    let keys = Keys::new(program, plan);
    let router = keys.clone();
    let state = State::new(program, plan, keys);
    if router.sub_positions.is_none() || source.inner.scope().peers() == 1 {
        return operate(
            source,
            "Stepper",
            move |((tag, row), _, _): &Update| router.route(*tag, row),
            state,
        );
    }
    // Refined keys: a state's facts go to the worker of its key and refinement (voting's
    // `voted(V, M)` by voter and motion, not by motion: its three query motions put every
    // vote on one worker); the partial facts, which every state of their key reads, to
    // every worker.
    let classify = router.clone();
    let (full, partial) =
        source
            .inner
            .ok_err(move |update| match classify.refinement(update.0.0) {
                Some(_) => Ok(update),
                None => Err(update),
            });
    operate_split(
        full,
        partial.broadcast(),
        "Stepper",
        move |((tag, row), _, _): &Update| router.route(*tag, row),
        state,
    )
}

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
fn operate_split<'s, S: TimeStepped + 'static>(
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

/// An operator that takes its input a time point at a time, in order (this one and
/// `persist`).
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
    let mut first = None;
    while let Some(t) = state.next_time(limit) {
        state.process(t, out);
        super::zero_one::mark(&mut first, t, out);
    }
    super::zero_one::send_first(output, capability.as_ref(), &mut first, out);
    super::follow_frontier(capability, limit);
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

/// The worker a fact goes to: the hash of its key value, or worker 0 without a key.
impl Keyed<Row> for KeyState {
    fn key(&self) -> &Row {
        &self.key
    }
}

struct KeyState {
    /// The key's value, then the values of the refining positions (`StepperPlan::sub_key`).
    key: Row,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// The time point at which its rules must be evaluated, plus one: where it is listed
    /// for another time point, its input changed there only in what no rule reads at
    /// offset 0, and the changes are recorded instead (see [`State::evaluate`]).
    full: u64,
    /// Whether the key is in the table: a removed key's index may still be on the wake-up
    /// list.
    live: bool,
    /// The key's facts over the time points its rules can still read, as runs of equal
    /// time points, oldest first, each with its first time point; the last holds up to the
    /// latest time point evaluated, and on until the key is evaluated again.
    runs: VecDeque<(u64, Slot)>,
    /// The latest time point a wake-up is set for.
    wake_until: u64,
    inputs: Inputs,
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

/// A key's facts at one time point, by local predicate.
type Slot = Vec<SmallRelation>;

/// What a change of a local predicate at s makes necessary: evaluating its key at s +
/// `offset`, where a rule reads it (see the module docs), unless one of `guards` (the
/// rule's positive atoms read at least as far back) has no fact there.
#[derive(Clone, Debug, PartialEq)]
struct Trigger {
    offset: u64,
    guards: Vec<Guard>,
}

/// A positive atom of a rule: its local predicate, its offset and its constants.
#[derive(Clone, Debug, PartialEq)]
struct Guard {
    local: usize,
    offset: u64,
    constants: Vec<(usize, Value)>,
}

impl Guard {
    /// Whether the atom may find a fact when its rule is evaluated at `t` or at t − 1,
    /// both read off `runs` (time points before the first run hold nothing).
    fn may_match(&self, runs: &VecDeque<(u64, Slot)>, t: u64) -> bool {
        let read = |time: u64| {
            at(runs, time)
                .and_then(|slot| slot.get(self.local))
                .is_some_and(|relation| {
                    relation
                        .rows()
                        .any(|row| has_constants(row, &self.constants))
                })
        };
        let Some(now) = t.checked_sub(self.offset) else {
            return false;
        };
        read(now) || now.checked_sub(1).is_some_and(read)
    }
}

/// The slot `runs` hold at `time`: the last run starting at or before it.
fn at(runs: &VecDeque<(u64, Slot)>, time: u64) -> Option<&Slot> {
    runs.iter()
        .rev()
        .find(|(start, _)| *start <= time)
        .map(|(_, slot)| slot)
}

/// Each local predicate's triggers: for every body atom read k ≥ 1 time points back, a
/// trigger at k guarded by the rule's positive atoms read k or more points back.
fn triggers(
    program: &Program,
    plan: &StepperPlan,
    local_of: &[Option<usize>],
    locals: usize,
) -> Vec<Vec<Trigger>> {
    let mut triggers: Vec<Vec<Trigger>> = vec![Vec::new(); locals];
    for &r in &plan.rules {
        let rule = &program.rules[r];
        for atom in rule.body.iter().filter_map(Literal::atom) {
            let Some(local) = local_of.get(atom.pred).copied().flatten() else {
                continue;
            };
            if atom.offset == 0 {
                continue;
            }
            let guards = rule
                .body
                .iter()
                .filter_map(|literal| match literal {
                    Literal::Positive(b) if b.offset >= atom.offset => Some(b),
                    _ => None,
                })
                .filter_map(|b| {
                    Some(Guard {
                        local: local_of.get(b.pred).copied().flatten()?,
                        offset: u64::from(b.offset),
                        constants: stgflow_lang::ir::constants(&b.args),
                    })
                })
                .collect();
            let trigger = Trigger {
                offset: u64::from(atom.offset),
                guards,
            };
            if !triggers[local].contains(&trigger) {
                triggers[local].push(trigger);
            }
        }
    }
    triggers
}

/// Where a fact's key is: per predicate its key position and, with a refined key, its
/// refining positions (`StepperPlan::key`, `sub_key`). The state's and the exchange's.
#[derive(Clone)]
struct Keys {
    key_positions: Option<Vec<Option<usize>>>,
    /// Per predicate, the refining positions (`StepperPlan::sub_key`) of one that carries
    /// them; `None` for all without a refinement.
    sub_positions: Option<Vec<Option<Vec<usize>>>>,
}

impl Keys {
    fn new(program: &Program, plan: &StepperPlan) -> Keys {
        let n = program.predicates.len();
        let key_positions = plan.key.as_ref().map(|key| {
            let mut positions = vec![None; n];
            for (&p, &i) in key {
                positions[p] = Some(i);
            }
            positions
        });
        let sub_positions = plan.sub_key.as_ref().map(|sub| {
            let mut positions = vec![None; n];
            for (&p, is) in sub {
                positions[p] = Some(is.clone());
            }
            positions
        });
        Keys {
            key_positions,
            sub_positions,
        }
    }

    /// The value at the key position of a fact tagged `tag`.
    fn key_value(&self, tag: u32, row: &[Value]) -> Value {
        let pred = (tag & !INPUT_BIT) as usize;
        self.key_positions
            .as_ref()
            .and_then(|p| p.get(pred).copied().flatten())
            .and_then(|i| row.get(i).copied())
            .unwrap_or(Value::Int(0))
    }

    /// The refining positions of a fact tagged `tag`: `None` for a partial fact, with a
    /// refined key (see [`Group`]).
    fn refinement(&self, tag: u32) -> Option<Option<&[usize]>> {
        let Some(sub) = &self.sub_positions else {
            return Some(None);
        };
        if tag == super::UNIT_TAG {
            return Some(None);
        }
        let pred = (tag & !INPUT_BIT) as usize;
        sub.get(pred)?.as_deref().map(Some)
    }

    /// The key of the state a fact tagged `tag` belongs to (`value` its key value): the
    /// value and those at its refining positions; `None` for a partial fact.
    fn state_key(&self, value: Value, tag: u32, row: &[Value]) -> Option<Row> {
        let refinement = self.refinement(tag)?;
        let mut key = Row::new();
        key.push(value);
        key.extend(
            refinement
                .into_iter()
                .flatten()
                .filter_map(|&i| row.get(i).copied()),
        );
        Some(key)
    }

    /// The worker a fact goes to: by its state's key where the key is refined (a partial
    /// fact, which goes to every worker, by its value), by its key value otherwise (0
    /// without a key).
    fn route(&self, tag: u32, row: &[Value]) -> u64 {
        if self.key_positions.is_none() {
            return 0;
        }
        let value = self.key_value(tag, row);
        match self.sub_positions {
            Some(_) => self
                .state_key(value, tag, row)
                .map_or_else(|| value.hashed(), |key| key.hashed()),
            None => value.hashed(),
        }
    }
}

struct State {
    plans: Vec<RulePlan>,
    strata: Vec<(Vec<usize>, bool)>,
    local_of: Vec<Option<usize>>,
    locals: usize,
    /// Per local index: the predicate, when it is one of the component's own (its changes
    /// are the output).
    internal: Vec<Option<PredId>>,
    /// The local index of the unit row, when the component reads it (a rule without a
    /// positive atom): fed once at the first time point and never retracted, it has the
    /// component's one key evaluated there.
    unit_local: Option<usize>,
    /// Per local index: whether a change of it at t needs the rules evaluated at t — some
    /// rule reads it at offset 0, or it is one of the component's own (its facts are the
    /// output). A change of any other input is only recorded at t ([`State::evaluate`]).
    read_now: Vec<bool>,
    /// Per local index of an input from outside: the constants of each atom that reads
    /// it, when every such atom has some. A fact that matches none of them can never be
    /// read, and is dropped as it comes in (`status_start(M, voting)` where the rules read
    /// only `status_start(M, null)`: a partial fact that would wake every state of M).
    /// `None`: every fact is kept.
    wanted: Vec<Option<Vec<Constants>>>,
    triggers: Vec<Vec<Trigger>>,
    keys: Keys,
    /// Per local index: whether it is a partial predicate's, whose facts every state of
    /// their key reads (see [`Group`]).
    partial_local: Vec<bool>,
    /// Per key value with partial facts or refined states: those facts and states.
    groups: HashMap<Value, Group>,
    horizon: u64,
    uses_time: bool,
    /// The keys' states (one hash lookup per input change).
    table: KeyTable<KeyState, Row>,
    /// Keys to evaluate at later time points even without input: (time point, index).
    wakeups: BinaryHeap<Reverse<(u64, usize)>>,
    stash: Stash,
    last_processed: Option<u64>,
    /// Emptied slots, for the next runs to fill.
    spare_slots: Vec<Slot>,
    /// The keys to evaluate at the time point being processed.
    work: Vec<usize>,
    /// The local indices that changed in the key being evaluated, and the time points
    /// they wake it at.
    changed: Vec<usize>,
    wake_at: Vec<u64>,
    scratch: Scratch,
}

/// An atom's constants: (position, value).
type Constants = Vec<(usize, Value)>;

/// Most emptied slots kept for reuse.
const MAX_SPARE_SLOTS: usize = 1024;

/// With a refined key: a key value's partial facts (read at offset 0 only, so only what
/// holds now matters) and the states that read them. A partial fact goes to every member's
/// input; a new state starts with the facts held.
#[derive(Default)]
struct Group {
    facts: Inputs,
    members: Vec<usize>,
}

impl State {
    fn new(program: &Program, plan: &StepperPlan, keys: Keys) -> State {
        let n = program.predicates.len();
        let mut local_of = vec![None; n];
        let mut locals = 0;
        for &p in plan.preds.iter().chain(&plan.reads) {
            local_of[p] = Some(locals);
            locals += 1;
        }
        let unit_local = plan.reads_unit.then(|| {
            locals += 1;
            locals - 1
        });
        let mut partial_local = vec![false; locals];
        if let Some(sub) = &keys.sub_positions {
            for &p in plan.preds.iter().chain(&plan.reads) {
                if let (Some(local), None) = (local_of[p], &sub[p]) {
                    partial_local[local] = true;
                }
            }
        }
        let mut internal = vec![None; locals];
        for &p in &plan.preds {
            if let Some(local) = local_of[p] {
                internal[local] = Some(p);
            }
        }
        let mut read_now: Vec<bool> = internal.iter().map(Option::is_some).collect();
        let mut wanted: Vec<Option<Vec<Constants>>> = internal
            .iter()
            .map(|p| p.is_none().then(Vec::new))
            .collect();
        if let Some(unit) = unit_local {
            read_now[unit] = true;
            wanted[unit] = None;
        }
        for &r in &plan.rules {
            for atom in program.rules[r].body.iter().filter_map(Literal::atom) {
                let Some(local) = local_of[atom.pred] else {
                    continue;
                };
                if atom.offset == 0 {
                    read_now[local] = true;
                }
                let constants = stgflow_lang::ir::constants(&atom.args);
                if constants.is_empty() {
                    wanted[local] = None;
                } else if let Some(patterns) = &mut wanted[local] {
                    patterns.push(constants);
                }
            }
        }
        // Plans are indexed by position in `plan.rules`; strata refer to program rule ids.
        let index_of = |r: usize| plan.rules.iter().position(|&x| x == r);
        let plans = plan
            .rules
            .iter()
            .map(|&r| {
                let rule = &program.rules[r];
                let stratum = plan.strata.iter().position(|(rules, _)| rules.contains(&r));
                let same = |p: PredId| {
                    plan.strata.iter().position(|(rules, _)| {
                        rules.iter().any(|&q| program.rules[q].head.pred == p)
                    }) == stratum
                };
                RulePlan::new(rule, same)
            })
            .collect();
        let strata = plan
            .strata
            .iter()
            .map(|(rules, recursive)| {
                (
                    rules.iter().filter_map(|&r| index_of(r)).collect(),
                    *recursive,
                )
            })
            .collect();
        State {
            plans,
            strata,
            triggers: triggers(program, plan, &local_of, locals),
            local_of,
            locals,
            internal,
            unit_local,
            read_now,
            wanted,
            keys,
            partial_local,
            groups: HashMap::new(),
            horizon: u64::from(plan.horizon),
            uses_time: plan.uses_time,
            table: KeyTable::default(),
            wakeups: BinaryHeap::new(),
            stash: Stash::default(),
            last_processed: None,
            spare_slots: Vec::new(),
            work: Vec::new(),
            changed: Vec::new(),
            wake_at: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The local index that facts tagged `tag` are kept under.
    fn local_of_tag(&self, tag: u32) -> Option<usize> {
        if tag == super::UNIT_TAG {
            return self.unit_local;
        }
        self.local_of
            .get((tag & !INPUT_BIT) as usize)
            .copied()
            .flatten()
    }

    /// Whether `slot` holds nothing but partial facts.
    fn holds_nothing(&self, slot: &Slot) -> bool {
        slot.iter()
            .enumerate()
            .all(|(local, relation)| self.partial_local[local] || relation.is_empty())
    }

    /// Keeps `slot` for reuse, emptied.
    fn recycle(&mut self, mut slot: Slot) {
        if self.spare_slots.len() < MAX_SPARE_SLOTS && slot.len() == self.locals {
            slot.iter_mut().for_each(SmallRelation::clear);
            self.spare_slots.push(slot);
        }
    }

    /// Drops the runs of the key at `index` that no time point from `from` on reads:
    /// those before the one that holds at `from − horizon`.
    fn drop_runs(&mut self, index: usize, from: u64) {
        let oldest = from.saturating_sub(self.horizon);
        loop {
            let runs = &mut self.table.states[index].runs;
            if runs.len() < 2 || runs[1].0 > oldest {
                return;
            }
            if let Some((_, slot)) = runs.pop_front() {
                self.recycle(slot);
            }
        }
    }
}

impl Listed for KeyState {
    fn listed(&mut self) -> &mut u64 {
        &mut self.listed
    }

    fn touch(&self) -> bool {
        self.runs.is_empty() | self.inputs.is_empty()
    }
}

impl TimeStepped for State {
    fn stash(&mut self) -> &mut super::zero_one::Stash<(u32, Row)> {
        &mut self.stash
    }

    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        // Once the input is closed there are no more time points to wake keys at.
        let woken = limit.and(self.wakeups.peek().map(|Reverse((t, _))| *t));
        let first = match (self.stash.first_time(), woken) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next_time(first, false, self.last_processed, limit)
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        for ((tag, row), diff) in changes.drain(..) {
            let Some(local) = self.local_of_tag(tag) else {
                continue;
            };
            if let Some(patterns) = &self.wanted[local] {
                if !patterns.iter().any(|pattern| has_constants(&row, pattern)) {
                    continue;
                }
            }
            let value = self.keys.key_value(tag, &row);
            let Some(key) = self.keys.state_key(value, tag, &row) else {
                // A partial fact: every state of its key reads it.
                let group = self.groups.entry(value).or_default();
                let full = if self.read_now[local] { t + 1 } else { 0 };
                for &index in &group.members {
                    let state = &mut self.table.states[index];
                    state.inputs.add(local, Row::from_slice(&row), diff);
                    list(&mut work, state, index, t);
                    state.full = state.full.max(full);
                }
                group.facts.add(local, row, diff);
                if group.facts.is_empty() && group.members.is_empty() {
                    self.groups.remove(&value);
                }
                continue;
            };
            let mut made = false;
            let index = self.table.index(key, |key| {
                made = true;
                KeyState {
                    key: key.clone(),
                    listed: 0,
                    full: 0,
                    live: true,
                    runs: VecDeque::new(),
                    wake_until: 0,
                    inputs: Inputs::default(),
                }
            });
            let state = &mut self.table.states[index];
            if made && self.keys.sub_positions.is_some() {
                // A new state of a refined key: it reads the partial facts held.
                let group = self.groups.entry(value).or_default();
                group.members.push(index);
                for (l, fact, count) in group.facts.iter() {
                    state.inputs.add(l, Row::from_slice(fact), count);
                }
                if !group.facts.is_empty() {
                    state.full = t + 1;
                }
            }
            list(&mut work, state, index, t);
            if self.read_now[local] {
                state.full = t + 1;
            }
            state.inputs.add(local, row, diff);
        }
        self.stash.give_back(changes);
        while let Some(&Reverse((at, index))) = self.wakeups.peek() {
            if at > t {
                break;
            }
            self.wakeups.pop();
            if let Some(state) = self.table.states.get_mut(index) {
                if state.live {
                    list(&mut work, state, index, t);
                    state.full = t + 1;
                }
            }
        }
        for &index in &work {
            self.evaluate(index, t, out);
        }
        self.work = work;
        self.last_processed = Some(t);
    }
}

impl State {
    /// Evaluates the key at `index` at `t`: its facts there, their changes against t − 1
    /// (the output), and the later time points those changes wake it at.
    ///
    /// Over 100 lines: the steps of one key's time point (a new run, evaluate, diff,
    /// wake-ups, drop what is no longer read, forget an empty key), in order.
    fn evaluate(&mut self, index: usize, t: u64, out: &mut Vec<Update>) {
        if !self.table.states.get(index).is_some_and(|s| s.live) {
            return;
        }
        self.drop_runs(index, t);
        let mut slot = self
            .spare_slots
            .pop()
            .unwrap_or_else(|| vec![SmallRelation::default(); self.locals]);
        let state = &mut self.table.states[index];
        // Only inputs that no rule reads at offset 0 changed, and nothing woke the key: the
        // rules see at t what they saw at t − 1, so they derive what they derived (nothing,
        // for a new key). The component's own facts are copied, the inputs recorded for
        // the rules that read them later.
        let full = state.full == t + 1 || self.uses_time;
        for (local, fact, count) in state.inputs.iter() {
            if count > 0 && (full || self.internal[local].is_none()) {
                if let Some(relation) = slot.get_mut(local) {
                    relation.insert(Row::from_slice(fact));
                }
            }
        }
        if !full {
            if let Some((_, before)) = state.runs.back() {
                for (local, relation) in slot.iter_mut().enumerate() {
                    if self.internal[local].is_some() {
                        relation.clone_from(&before[local]);
                    }
                }
            }
        }
        state.runs.push_back((t, slot));
        if full {
            let mut view = KeyView {
                runs: &mut state.runs,
                local_of: &self.local_of,
            };
            for (rules, recursive) in &self.strata {
                evaluate_stratum_with(
                    &self.plans,
                    rules,
                    *recursive,
                    t,
                    &mut view,
                    &mut self.scratch,
                );
            }
        }
        // What changed against t − 1, which the run before holds (nothing for a new key).
        self.changed.clear();
        let len = state.runs.len();
        let empty = SmallRelation::default();
        for local in 0..self.locals {
            if !full && self.internal[local].is_some() {
                continue;
            }
            let now = &state.runs[len - 1].1[local];
            let before = match len {
                2.. => &state.runs[len - 2].1[local],
                _ => &empty,
            };
            let changed = match self.internal[local] {
                Some(pred) => diff(pred, before, now, t, out),
                None => {
                    now.iter().count() != before.iter().count()
                        || now.iter().any(|f| !before.contains_row(f))
                }
            };
            if changed {
                self.changed.push(local);
            }
        }
        self.wake_at.clear();
        for &local in &self.changed {
            for trigger in &self.triggers[local] {
                let at = t + trigger.offset;
                if trigger.guards.iter().all(|g| g.may_match(&state.runs, at)) {
                    self.wake_at.push(at);
                }
            }
        }
        // Any fact the rules can still read, at t or up to `horizon` points back: what the
        // key held at t − 1 is read at t + 1 by an atom at offset 2.
        let holds_anything = || {
            state.runs.iter().any(|(_, slot)| {
                slot.iter()
                    .enumerate()
                    .any(|(local, r)| !self.partial_local[local] && !r.is_empty())
            })
        };
        if self.uses_time && holds_anything() {
            // Rules that read the time as a value derive something new every time point.
            self.wake_at.push(t + 1);
        }
        let unchanged = self.changed.is_empty();
        self.wake_at.sort_unstable();
        self.wake_at.dedup();
        for &at in &self.wake_at {
            self.wakeups.push(Reverse((at, index)));
            state.wake_until = state.wake_until.max(at);
        }
        if unchanged {
            // t repeats t − 1: the run before holds on.
            if let Some((_, slot)) = state.runs.pop_back() {
                self.recycle(slot);
            }
        }
        self.drop_runs(index, t + 1);
        let state = &mut self.table.states[index];
        let wake_until = state.wake_until;
        if wake_until > t {
            return;
        }
        if state.runs.len() > 1 {
            // Nothing wakes the key before its older runs fall out of the horizon: wake it
            // then, to drop them (and the key, once it holds nothing).
            let at = state
                .runs
                .back()
                .map_or(t, |(start, _)| start + self.horizon);
            state.wake_until = at.max(t + 1);
            self.wakeups.push(Reverse((state.wake_until, index)));
            return;
        }
        let state = &self.table.states[index];
        let empty = state.runs.iter().all(|(_, slot)| self.holds_nothing(slot));
        let partial = &self.partial_local;
        if !empty || !state.inputs.iter().all(|(local, _, _)| partial[local]) {
            return;
        }
        let state = &mut self.table.states[index];
        state.live = false;
        let key = std::mem::take(&mut state.key);
        let runs = std::mem::take(&mut state.runs);
        state.inputs = Inputs::default();
        self.table.remove(&key, index);
        for (_, slot) in runs {
            self.recycle(slot);
        }
        if let (Some(value), Some(_)) = (key.first(), &self.keys.sub_positions) {
            if let Some(group) = self.groups.get_mut(value) {
                group.members.retain(|&i| i != index);
                if group.members.is_empty() && group.facts.is_empty() {
                    self.groups.remove(value);
                }
            }
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

/// A key's time points as a fact store for [`evaluate_stratum`]: each time point's facts
/// are its run's; facts derived go to the last run, the time point being evaluated.
struct KeyView<'a> {
    runs: &'a mut VecDeque<(u64, Slot)>,
    local_of: &'a [Option<usize>],
}

impl FactStore for KeyView<'_> {
    type Relation = SmallRelation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&SmallRelation> {
        let local = self.local_of.get(pred).copied().flatten()?;
        at(self.runs, time)?.get(local)
    }

    fn insert(&mut self, pred: PredId, tuple: Row) -> bool {
        let Some(local) = self.local_of.get(pred).copied().flatten() else {
            return false;
        };
        self.runs
            .back_mut()
            .and_then(|(_, slot)| slot.get_mut(local))
            .is_some_and(|relation| relation.insert(tuple))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use stgflow_eval::reference::Reference;
    use stgflow_io::drive::Evaluator;
    use stgflow_lang::compile_str;
    use stgflow_lang::ir::{PredId, Program};
    use stgflow_lang::stratify::Analysis;
    use stgflow_lang::value::{Row, Value};

    use super::{input_channel, render};
    use crate::operators::UNIT_TAG;
    use crate::operators::testing::{
        Held, Snapshot, Update, assert_same_at_every_time, at, changes, held, run, set, snapshots,
    };
    use crate::plan::{Component, StepperPlan, plan};

    const END: u64 = 30;
    /// Records per input predicate: its rows over the values 0, 1, 2, at most this many.
    const RECORDS: usize = 9;
    /// Input predicates a test program may have, and how many of them its own.
    const INPUTS: usize = 3;

    /// EC inertia, keyed by the fluent.
    const INERTIA: &str = "holds(F, T) :- init(F, T-1).\n\
                           holds(F, T) :- holds(F, T-1), not term(F, T-1).\n";
    /// EC inertia with a value: facts of one fluent have several rows, which must all
    /// meet on the fluent's worker.
    const INERTIA_VALUES: &str = "holds(F, V, T) :- init(F, V, T-1).\n\
                                  holds(F, V, T) :- holds(F, V, T-1), not term(F, T-1).\n";
    /// A negation without the key: no key, everything on worker 0.
    const UNKEYED: &str = "s(X, T) :- s(X, T-1), not alarm(T-1).\ns(X, T) :- r(X, T).\n";
    /// A rule without a positive atom: the component reads the unit row.
    const UNIT: &str = "p(T) :- not p(T-1).\n";
    /// Two predicates, two time points back: a key's horizon is 2.
    const HORIZON_2: &str = "a(X, T) :- b(X, T-2), not c(X, T-1).\n\
                             b(X, T) :- a(X, T-1).\nb(X, T) :- i(X, T).\n";
    /// Reads an input 3 time points back, unkeyed: keys go quiescent and must still see
    /// it when they wake.
    const LOOKBACK_3: &str = "p0(Z, T) :- p0(Z, T-1), e0(T-3), e1(T).\np0(Z, T) :- i(Z, T).\n";
    /// The time as a value: keys stay active while they hold anything.
    const TIME_AS_VALUE: &str = "stamped(E, S, T) :- event(E, T), S = T * 10, T >= 2.\n";
    /// A deadline (Algorithm 3's `fi`): an initiation of value 0 initiates 1 three points
    /// later unless 0 was terminated in between. The negations at T-2 and T-1 wake a key
    /// only where `s_i(X, 0, _)` held three points before (the triggers' guards).
    const DEADLINE: &str = "s_i(X, 1, T) :- s_i(X, 0, T-3), not s_t(X, 0, T-2), not s_t(X, 0, T-1).\n\
                            s_i(X, 0, T) :- go(X, T), not s(X, 0, T).\n\
                            s(X, V, T) :- s_i(X, V, T-1).\n\
                            s(X, V, T) :- s(X, V, T-1), not s_t(X, V, T-1).\n\
                            s_t(X, 0, T) :- s_i(X, 1, T).\n\
                            s_t(X, 1, T) :- s_i(X, 0, T).\n\
                            s_t(X, V, T) :- halt(X, V, T).\n";
    /// Keyed by M, each state by (V, M): `reset(M)` and `open(M)` are partial, read by
    /// every state of their M (one positive, one negated).
    const REFINED: &str = "held(V, M, T) :- start(V, M, T-1).\n\
                           held(V, M, T) :- held(V, M, T-1), not stop(V, M, T-1).\n\
                           stop(V, M, T) :- reset(M, T), held(V, M, T).\n\
                           stop(V, M, T) :- held(V, M, T), start(V, M, T), not open(M, T).\n";

    /// Voting's `voted` as RTEC's timing writes it: keyed by M, each state by (V, M);
    /// `reset(M, 2)` a partial fact with a constant (`reset(M, 0)` and `reset(M, 1)` are
    /// dropped as they come), `stop_at` read one point back only (its changes recorded,
    /// not evaluated, where nothing else changed), `cleared` at once from the state at T-1.
    const VOTED: &str = "held(V, M, T) :- start(V, M, T-1), not stop_at(V, M, 1, T-1).\n\
                         held(V, M, T) :- held(V, M, T-1), not stop_at(V, M, 1, T-1), not cleared(V, M, T).\n\
                         cleared(V, M, T) :- reset(M, 2, T), held(V, M, T-1).\n";

    /// A compiled program that plans as one time-stepping component.
    struct Case {
        program: Program,
        analysis: Analysis,
        plan: StepperPlan,
    }

    fn case(text: &str) -> Case {
        let compiled = compile_str("t.tdl", text);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        let analysis = compiled.analysis.expect("a program without errors");
        let planned = plan(&compiled.program, &analysis, false);
        let [Component::Stepper(stepper)] = planned.components.as_slice() else {
            panic!("not one time-stepping component: {planned:?}")
        };
        Case {
            plan: stepper.clone(),
            program: compiled.program,
            analysis,
        }
    }

    /// Up to `RECORDS` rows of `arity` values from 0, 1, 2.
    fn rows(arity: usize) -> Vec<Row> {
        let mut rows: Vec<Row> = vec![Row::new()];
        for _ in 0..arity {
            rows = rows
                .into_iter()
                .flat_map(|row| {
                    (0..3).map(move |v| {
                        let mut row = row.clone();
                        row.push(Value::Int(v));
                        row
                    })
                })
                .collect();
        }
        rows.truncate(RECORDS);
        rows
    }

    /// One input of the operator: a predicate, the tag it enters under, its records and
    /// where each holds.
    struct Input<'a> {
        pred: PredId,
        tag: u32,
        rows: Vec<Row>,
        held: &'a Held,
    }

    /// The component's inputs as `render` feeds them: the predicates it reads, then the
    /// input facts of its own predicates (sparser), each with one of `held`.
    fn inputs<'a>(case: &Case, reads: &'a [Held], own: &'a [Held]) -> Vec<Input<'a>> {
        let arity = |p: PredId| case.program.predicates[p].arity;
        let read = case.plan.reads.iter().zip(reads).map(|(&p, held)| Input {
            pred: p,
            tag: p as u32,
            rows: rows(arity(p)),
            held,
        });
        let owned = case.plan.preds.iter().zip(own).map(|(&p, held)| Input {
            pred: p,
            tag: input_channel(p),
            rows: rows(arity(p)),
            held,
        });
        assert!(case.plan.reads.len() <= reads.len() && case.plan.preds.len() <= own.len());
        read.chain(owned).collect()
    }

    /// The reference evaluator's facts of the component's predicates at each time point.
    fn reference(case: &Case, inputs: &[Input<'_>]) -> Vec<Snapshot<(u32, Row)>> {
        let mut reference = Reference::new(&case.program, &case.analysis);
        (0..END)
            .map(|t| {
                let mut facts = Vec::new();
                for input in inputs {
                    for (r, row) in input.rows.iter().enumerate() {
                        if at(input.held, r, t as i64) {
                            facts.push((input.pred, row.clone()));
                        }
                    }
                }
                let mut out = Vec::new();
                reference
                    .step(t, facts, &case.plan.preds, &mut out)
                    .expect("the reference evaluates");
                set(out.into_iter().map(|(p, row)| (p as u32, row)))
            })
            .collect()
    }

    fn check(text: &str, workers: usize, reads: &[Held], own: &[Held], batch: u64) {
        let case = case(text);
        let inputs = inputs(&case, reads, own);
        let mut fed: Vec<Update<(u32, Row)>> = Vec::new();
        for input in &inputs {
            let tagged: Vec<(u32, Row)> = input
                .rows
                .iter()
                .map(|row| (input.tag, row.clone()))
                .collect();
            fed.extend(changes(&tagged, input.held));
        }
        if case.plan.reads_unit {
            // Once, at the timeline's first time point, never retracted (`runtime::feeder`).
            fed.push(((UNIT_TAG, Row::new()), 0, 1));
        }
        fed.sort_by_key(|(_, t, _)| *t);
        let expected = reference(&case, &inputs);
        let Case { program, plan, .. } = case;
        let (program, plan) = (Arc::new(program), Arc::new(plan));
        let output = run(workers, vec![fed], END, batch, move |mut fed| {
            render(&program, &plan, fed.pop().expect("one input"))
        });
        assert_same_at_every_time(&snapshots(&output, END), &expected);
    }

    /// Inputs for up to `INPUTS` read predicates and `INPUTS` own ones, the own ones rarer.
    fn held_inputs() -> impl Strategy<Value = (Vec<Held>, Vec<Held>)> {
        (
            prop::collection::vec(held(RECORDS, END, 6, 6), INPUTS),
            prop::collection::vec(held(RECORDS, END, 20, 2), INPUTS),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn inertia_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA, 1, &reads, &own, batch);
        }

        #[test]
        fn inertia_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA, 3, &reads, &own, batch);
        }

        #[test]
        fn inertia_with_values_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA_VALUES, 1, &reads, &own, batch);
        }

        #[test]
        fn inertia_with_values_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA_VALUES, 3, &reads, &own, batch);
        }

        #[test]
        fn unkeyed_negation_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNKEYED, 1, &reads, &own, batch);
        }

        #[test]
        fn unkeyed_negation_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNKEYED, 3, &reads, &own, batch);
        }

        #[test]
        fn no_positive_atom_with_unit_row_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNIT, 1, &reads, &own, batch);
        }

        #[test]
        fn no_positive_atom_with_unit_row_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNIT, 3, &reads, &own, batch);
        }

        #[test]
        fn horizon_2_two_predicates_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(HORIZON_2, 1, &reads, &own, batch);
        }

        #[test]
        fn horizon_2_two_predicates_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(HORIZON_2, 3, &reads, &own, batch);
        }

        #[test]
        fn lookback_3_unkeyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(LOOKBACK_3, 1, &reads, &own, batch);
        }

        #[test]
        fn deadline_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(DEADLINE, 1, &reads, &own, batch);
        }

        #[test]
        fn deadline_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(DEADLINE, 3, &reads, &own, batch);
        }

        #[test]
        fn refined_key_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(REFINED, 1, &reads, &own, batch);
        }

        #[test]
        fn refined_key_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(REFINED, 3, &reads, &own, batch);
        }

        #[test]
        fn voted_refined_with_constants_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(VOTED, 1, &reads, &own, batch);
        }

        #[test]
        fn voted_refined_with_constants_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(VOTED, 3, &reads, &own, batch);
        }

        #[test]
        fn time_as_value_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(TIME_AS_VALUE, 3, &reads, &own, batch);
        }
    }

    #[test]
    fn test_programs_plan_as_intended() {
        assert!(case(INERTIA).plan.key.is_some());
        assert!(case(INERTIA_VALUES).plan.key.is_some());
        assert!(case(UNKEYED).plan.key.is_none());
        let unit = case(UNIT).plan;
        assert!(unit.reads_unit && unit.key.is_none());
        let horizon_2 = case(HORIZON_2).plan;
        assert_eq!((horizon_2.horizon, horizon_2.preds.len()), (2, 2));
        assert!(horizon_2.key.is_some());
        let lookback = case(LOOKBACK_3).plan;
        assert_eq!((lookback.horizon, lookback.key.is_none()), (3, true));
        let time = case(TIME_AS_VALUE).plan;
        assert!(time.uses_time && time.key.is_some());
        let deadline = case(DEADLINE).plan;
        assert_eq!((deadline.horizon, deadline.preds.len()), (3, 3));
        assert!(deadline.key.is_some() && deadline.sub_key.is_none());
        let refined = case(REFINED);
        let name = |p: PredId| refined.program.pred_name(p).to_owned();
        let mut sub: Vec<(String, Vec<usize>)> = refined
            .plan
            .sub_key
            .iter()
            .flatten()
            .map(|(&p, is)| (name(p), is.clone()))
            .collect();
        sub.sort();
        let expected = [("held", 0), ("start", 0), ("stop", 0)];
        let expected: Vec<(String, Vec<usize>)> = expected
            .iter()
            .map(|(p, i)| (p.to_string(), vec![*i]))
            .collect();
        assert_eq!(sub, expected, "reset and open are partial");
        let voted = case(VOTED);
        let name = |p: PredId| voted.program.pred_name(p).to_owned();
        let mut partial: Vec<String> = voted
            .plan
            .reads
            .iter()
            .filter(|p| !voted.plan.sub_key.iter().flatten().any(|(q, _)| q == *p))
            .map(|&p| name(p))
            .collect();
        partial.sort();
        assert_eq!(
            partial,
            ["reset"],
            "reset is partial, refined by V elsewhere"
        );
    }

    #[test]
    fn triggers_are_guarded_by_positive_atoms_read_as_far_back() {
        let deadline = case(DEADLINE);
        let local = |name: &str| {
            let p = deadline
                .program
                .pred_id(name)
                .expect("a predicate of the program");
            deadline
                .plan
                .preds
                .iter()
                .chain(&deadline.plan.reads)
                .position(|&q| q == p)
        };
        let keys = super::Keys::new(&deadline.program, &deadline.plan);
        let state = super::State::new(&deadline.program, &deadline.plan, keys);
        let s_t = local("s_t").expect("s_t is local");
        let s_i = local("s_i").expect("s_i is local");
        // s_t is read at T-2 and T-1 by the deadline rule, guarded by s_i(X, 0, T-3), and
        // at T-1 by the keep rule, guarded by s(X, V, T-1).
        let mut offsets: Vec<(u64, usize)> = state.triggers[s_t]
            .iter()
            .map(|t| (t.offset, t.guards.len()))
            .collect();
        offsets.sort_unstable();
        assert_eq!(offsets, [(1, 1), (1, 1), (2, 1)]);
        let guarded = state.triggers[s_t]
            .iter()
            .find(|t| t.offset == 2)
            .expect("T-2");
        assert_eq!(guarded.guards[0].local, s_i);
        assert_eq!(guarded.guards[0].offset, 3);
        assert_eq!(guarded.guards[0].constants, [(1, Value::Int(0))]);
    }

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
