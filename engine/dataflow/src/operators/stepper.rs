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
//! see [`crate::plan`]); only keys whose input changed, or that changed within the last
//! `horizon` time points, are evaluated. A key that has been unchanged for `horizon` time
//! points is quiescent: its next time points would repeat the last one, so it is not
//! touched until its input changes again, and only its last time point is kept. Keys with
//! no facts at all are dropped. Rules that read the time as a value change every time
//! point, so their keys stay active while they hold anything.
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

use std::collections::VecDeque;

use differential_dataflow::{AsCollection, Hashable};
use hashbrown::HashMap;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

use super::Facts;
use crate::plan::StepperPlan;
use stgflow_eval::eval::{
    Facts as FactStore, Rows, RulePlan, SMALL_LIMIT, Scratch, SmallRelation, evaluate_stratum_with,
};
use stgflow_lang::ir::{PredId, Program};
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
    let n = program.predicates.len();
    let key_positions: Option<Vec<Option<usize>>> = plan.key.as_ref().map(|key| {
        let mut positions = vec![None; n];
        for (&p, &i) in key {
            positions[p] = Some(i);
        }
        positions
    });
    let route_positions = key_positions.clone();
    let mut state = State::new(program, plan, key_positions);
    source
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<Update>>, _, _, _>(
            Exchange::new(move |((tag, row), _, _): &Update| {
                route(route_positions.as_deref(), *tag, row)
            }),
            "Stepper",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|_, data| state.stash.add(data, &|t, _| t));
                    let limit = frontier.frontier().first().copied();
                    step_through(&mut state, &mut capability, limit, output);
                }
            },
        )
        .as_collection()
}

/// An operator that takes its input a time point at a time, in order (this one and
/// `persist`).
pub(super) trait TimeStepped {
    /// The next time point to take below `limit` (see [`next_time`]).
    fn next_time(&self, limit: Option<u64>) -> Option<u64>;
    /// Takes time point `t`, its output into `out`.
    fn process(&mut self, t: u64, out: &mut Vec<Update>);
}

/// Takes every time point `state` has below `limit` (the input frontier), sending their
/// output as one message (`zero_one::send_first`), and moves the capability up to `limit`.
pub(super) fn step_through(
    state: &mut impl TimeStepped,
    capability: &mut Option<timely::dataflow::operators::Capability<u64>>,
    limit: Option<u64>,
    output: &mut super::zero_one::Output<'_, (u32, Row)>,
) {
    let mut out: Vec<Update> = Vec::new();
    let mut first = None;
    while let Some(t) = state.next_time(limit) {
        state.process(t, &mut out);
        super::zero_one::mark(&mut first, t, &out);
    }
    super::zero_one::send_first(output, capability.as_ref(), &mut first, &mut out);
    super::follow_frontier(capability, limit);
}

/// Keys and their states: key → index into a vector of states (the only hash lookup),
/// the indices of removed keys taken by new ones.
pub(super) struct KeyTable<S> {
    keys: HashMap<Value, usize>,
    pub(super) states: Vec<S>,
    free: Vec<usize>,
}

impl<S> Default for KeyTable<S> {
    fn default() -> Self {
        KeyTable {
            keys: HashMap::new(),
            states: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<S> KeyTable<S> {
    /// The index of `key`'s state, made by `make` for a new key.
    pub(super) fn index(&mut self, key: Value, make: impl FnOnce() -> S) -> usize {
        let (states, free) = (&mut self.states, &mut self.free);
        *self.keys.entry(key).or_insert_with(|| {
            let state = make();
            match free.pop() {
                Some(index) => {
                    states[index] = state;
                    index
                }
                None => {
                    states.push(state);
                    states.len() - 1
                }
            }
        })
    }

    /// Forgets `key`, whose state is at `index`: a new key takes its place.
    pub(super) fn remove(&mut self, key: &Value, index: usize) {
        self.keys.remove(key);
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
fn route(positions: Option<&[Option<usize>]>, tag: u32, row: &Row) -> u64 {
    let pred = (tag & !INPUT_BIT) as usize;
    match positions
        .and_then(|p| p.get(pred).copied().flatten())
        .and_then(|i| row.get(i))
    {
        Some(value) => value.hashed(),
        None => 0,
    }
}

struct KeyState {
    key: Value,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// Whether its input changed at the time point being processed.
    input_changed: bool,
    /// The last time points of this key, oldest first; the last is the latest evaluated
    /// (while active, the previous time point).
    slots: VecDeque<Slot>,
    last_change: u64,
    /// Unchanged for `horizon` time points: `slots` holds one slot standing for all of them.
    quiescent: bool,
    inputs: Inputs,
}

/// A key's accumulated input counts, none of them zero: (local predicate, fact) → count.
/// A list while it is short — a key mostly has a few input facts at a time — and a map
/// once it has more than [`SMALL_LIMIT`].
#[derive(Default)]
pub(super) struct Inputs {
    list: smallvec::SmallVec<[(usize, Row, isize); 1]>,
    map: Option<HashMap<(usize, Row), isize>>,
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
                self.map = Some(map);
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.map.as_ref().is_none_or(HashMap::is_empty)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &Row, isize)> {
        let listed = self.list.iter().map(|(l, f, c)| (*l, f, *c));
        let mapped = self.map.iter().flatten().map(|((l, f), c)| (*l, f, *c));
        listed.chain(mapped)
    }
}

/// A key's facts at one time point, by local predicate.
type Slot = Vec<SmallRelation>;

struct State {
    plans: Vec<RulePlan>,
    strata: Vec<(Vec<usize>, bool)>,
    local_of: Vec<Option<usize>>,
    locals: usize,
    /// (predicate, local index) of the component's own predicates.
    internal: Vec<(PredId, usize)>,
    /// The local index of the unit row, when the component reads it (a rule without a
    /// positive atom): fed once at the first time point and never retracted, it keeps
    /// the component's one key evaluated from there on, as its input.
    unit_local: Option<usize>,
    key_positions: Option<Vec<Option<usize>>>,
    horizon: u64,
    uses_time: bool,
    /// The keys' states (one hash lookup per input change).
    table: KeyTable<KeyState>,
    /// Keys to evaluate at the next time point even without input.
    active: Vec<usize>,
    stash: Stash,
    last_processed: Option<u64>,
    /// Emptied slots of quiescent keys, for the next key evaluated to fill.
    spare_slots: Vec<Slot>,
    /// The keys to evaluate at the time point being processed.
    work: Vec<usize>,
    scratch: Scratch,
}

/// Most emptied slots kept for reuse.
const MAX_SPARE_SLOTS: usize = 1024;

impl State {
    fn new(
        program: &Program,
        plan: &StepperPlan,
        key_positions: Option<Vec<Option<usize>>>,
    ) -> State {
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
        let internal = plan
            .preds
            .iter()
            .filter_map(|&p| Some((p, local_of[p]?)))
            .collect();
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
            local_of,
            locals,
            internal,
            unit_local,
            key_positions,
            horizon: u64::from(plan.horizon),
            uses_time: plan.uses_time,
            table: KeyTable::default(),
            active: Vec::new(),
            stash: Stash::default(),
            last_processed: None,
            spare_slots: Vec::new(),
            work: Vec::new(),
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

    fn key_of(&self, tag: u32, row: &[Value]) -> Value {
        let pred = (tag & !INPUT_BIT) as usize;
        self.key_positions
            .as_ref()
            .and_then(|p| p.get(pred).copied().flatten())
            .and_then(|i| row.get(i).copied())
            .unwrap_or(Value::Int(0))
    }
}

impl TimeStepped for State {
    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        next_time(
            self.stash.first_time(),
            !self.active.is_empty(),
            self.last_processed,
            limit,
        )
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        for ((tag, row), diff) in changes.drain(..) {
            let Some(local) = self.local_of_tag(tag) else {
                continue;
            };
            let key = self.key_of(tag, &row);
            let index = self.table.index(key, || KeyState {
                key,
                listed: 0,
                input_changed: false,
                slots: VecDeque::new(),
                last_change: t,
                quiescent: false,
                inputs: Inputs::default(),
            });
            let state = &mut self.table.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
            state.input_changed = true;
            state.inputs.add(local, row, diff);
        }
        self.stash.give_back(changes);
        for index in std::mem::take(&mut self.active) {
            let state = &mut self.table.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
        }
        for &index in &work {
            let input_changed =
                std::mem::replace(&mut self.table.states[index].input_changed, false);
            if self.evaluate(index, t, input_changed, out) {
                self.active.push(index);
            }
        }
        self.work = work;
        self.last_processed = Some(t);
    }
}

impl State {
    /// Evaluates the key at `index` at `t`; returns whether it stays active.
    ///
    /// Over 100 lines: the steps of one key's time point (restore a quiet key, reuse a
    /// slot, evaluate, diff, go quiet), in order, on one borrow of its state.
    fn evaluate(
        &mut self,
        index: usize,
        t: u64,
        input_changed: bool,
        out: &mut Vec<Update>,
    ) -> bool {
        let Some(state) = self.table.states.get_mut(index) else {
            return false;
        };
        // The horizon's time points, and at least the previous one to diff against.
        let keep = usize::try_from(self.horizon.max(1)).unwrap_or(usize::MAX);
        if state.quiescent {
            // Nothing changed since the key went quiet, so each of the last `keep` time
            // points repeats its one kept slot.
            if state.slots.len() < keep {
                if let Some(last) = state.slots.back().cloned() {
                    while state.slots.len() < keep {
                        state.slots.push_front(last.clone());
                    }
                }
            }
            state.quiescent = false;
        }
        // The last slot is t − 1; a key seen for the first time has none.
        let had_previous = !state.slots.is_empty();
        let mut recycled = None;
        while state.slots.len() > keep {
            recycled = state.slots.pop_front();
        }
        // Reuse a dropped slot's tables for the new time point.
        let mut slot = recycled
            .or_else(|| self.spare_slots.pop())
            .unwrap_or_else(|| vec![SmallRelation::default(); self.locals]);
        slot.iter_mut().for_each(SmallRelation::clear);
        for (local, fact, count) in state.inputs.iter() {
            if count > 0 {
                if let Some(relation) = slot.get_mut(local) {
                    relation.insert(fact.clone());
                }
            }
        }
        state.slots.push_back(slot);
        let mut view = KeyView {
            slots: &mut state.slots,
            last_time: t,
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
        let len = state.slots.len();
        let empty = SmallRelation::default();
        let mut changed = input_changed;
        for &(pred, local) in &self.internal {
            let now = &state.slots[len - 1][local];
            let before = if had_previous && len >= 2 {
                &state.slots[len - 2][local]
            } else {
                &empty
            };
            for fact in now.iter().filter(|f| !before.contains_row(f)) {
                out.push(((pred as u32, fact.clone()), t, 1));
                changed = true;
            }
            for fact in before.iter().filter(|f| !now.contains_row(f)) {
                out.push(((pred as u32, fact.clone()), t, -1));
                changed = true;
            }
        }
        if changed {
            state.last_change = t;
        }
        let holds_anything = state.slots[len - 1].iter().any(|r| !r.is_empty());
        if (self.uses_time && holds_anything) || t - state.last_change < self.horizon {
            return true;
        }
        // Quiescent: the last `horizon` time points are equal; keep one of them, or
        // nothing when it is empty.
        while state.slots.len() > 1 {
            if let Some(mut slot) = state.slots.pop_front() {
                if self.spare_slots.len() < MAX_SPARE_SLOTS && slot.len() == self.locals {
                    slot.iter_mut().for_each(SmallRelation::clear);
                    self.spare_slots.push(slot);
                }
            }
        }
        state.quiescent = true;
        if !holds_anything && state.inputs.is_empty() {
            state.slots = VecDeque::new();
            let key = state.key;
            self.table.remove(&key, index);
        }
        false
    }
}

/// A key's time points as a fact store for [`evaluate_stratum`].
struct KeyView<'a> {
    slots: &'a mut VecDeque<Slot>,
    last_time: u64,
    local_of: &'a [Option<usize>],
}

impl FactStore for KeyView<'_> {
    type Relation = SmallRelation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&SmallRelation> {
        let local = self.local_of.get(pred).copied().flatten()?;
        let back = usize::try_from(self.last_time.checked_sub(time)?).ok()?;
        let index = self.slots.len().checked_sub(1 + back)?;
        self.slots.get(index)?.get(local)
    }

    fn insert(&mut self, pred: PredId, tuple: Row) -> bool {
        let Some(local) = self.local_of.get(pred).copied().flatten() else {
            return false;
        };
        self.slots
            .back_mut()
            .and_then(|slot| slot.get_mut(local))
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
    }
}
