//! The time-stepping operator for temporal SCCs (recursion through time, e.g. EC inertia
//! `holds(F, T) :- holds(F, T-1), not term(F, T-1)`) and for rules that read the time as a
//! value.
//!
//! A differential `Variable` with a step of one time point would serialise the whole
//! dataflow on time (measured in DESIGN §3 at 15–45 µs per time point). Instead this
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

type Update = ((u32, Row), u64, isize);

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
                    let mut out: Vec<Update> = Vec::new();
                    while let Some(t) = state.next_time(limit) {
                        state.process(t, &mut out);
                        if let Some(cap) = capability.as_ref() {
                            super::zero_one::send_at(output, cap, t, &mut out);
                        }
                        out.clear();
                    }
                    super::follow_frontier(&mut capability, limit);
                }
            },
        )
        .as_collection()
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
struct Inputs {
    list: smallvec::SmallVec<[(usize, Row, isize); 1]>,
    map: Option<HashMap<(usize, Row), isize>>,
}

impl Inputs {
    fn add(&mut self, local: usize, fact: Row, diff: isize) {
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

    fn is_empty(&self) -> bool {
        self.list.is_empty() && self.map.as_ref().is_none_or(HashMap::is_empty)
    }

    fn iter(&self) -> impl Iterator<Item = (usize, &Row, isize)> {
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
    /// Key → index into `states`: the only hash lookup, once per input change.
    keys: HashMap<Value, usize>,
    states: Vec<KeyState>,
    /// Indices in `states` of removed keys, for new keys to take.
    free: Vec<usize>,
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
            keys: HashMap::new(),
            states: Vec::new(),
            free: Vec::new(),
            active: Vec::new(),
            stash: Stash::default(),
            last_processed: None,
            spare_slots: Vec::new(),
            work: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The next time point to evaluate below `limit` (the input frontier; `None` once the
    /// input is closed, when only buffered input is still processed).
    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        let stashed = self.stash.first_time();
        let active = (!self.active.is_empty()).then(|| self.last_processed.map_or(0, |t| t + 1));
        let active = if limit.is_none() { None } else { active };
        let next = match (stashed, active) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        match limit {
            Some(f) if next >= f => None,
            _ => Some(next),
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

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        for ((tag, row), diff) in changes.drain(..) {
            let Some(local) = self.local_of_tag(tag) else {
                continue;
            };
            let key = self.key_of(tag, &row);
            let (states, free) = (&mut self.states, &mut self.free);
            let index = *self.keys.entry(key).or_insert_with(|| {
                let state = KeyState {
                    key,
                    listed: 0,
                    input_changed: false,
                    slots: VecDeque::new(),
                    last_change: t,
                    quiescent: false,
                    inputs: Inputs::default(),
                };
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
            });
            let state = &mut self.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
            state.input_changed = true;
            state.inputs.add(local, row, diff);
        }
        self.stash.give_back(changes);
        for index in std::mem::take(&mut self.active) {
            let state = &mut self.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
        }
        for &index in &work {
            let input_changed = std::mem::replace(&mut self.states[index].input_changed, false);
            if self.evaluate(index, t, input_changed, out) {
                self.active.push(index);
            }
        }
        self.work = work;
        self.last_processed = Some(t);
    }

    /// Evaluates the key at `index` at `t`; returns whether it stays active.
    fn evaluate(
        &mut self,
        index: usize,
        t: u64,
        input_changed: bool,
        out: &mut Vec<Update>,
    ) -> bool {
        let Some(state) = self.states.get_mut(index) else {
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
            self.keys.remove(&state.key);
            state.slots = VecDeque::new();
            self.free.push(index);
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
